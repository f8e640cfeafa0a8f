# time_split.gp: where each config's optimizer step goes (forward, backward,
# optimizer, other device work such as gradient zeroing, idle), as stacked
# bars of the step's share, one bar per config.
# The split comes from the trace pass; a CSV without one says so here.
# Shares rather than milliseconds, so a 0.3 ms and a 50 ms step both read;
# each bar's label carries its step time.
#
#   gnuplot -e "csv='results/run.csv'" plots/time_split.gp
chart = "time_split"
load system(sprintf("dirname '%s'", ARG0)).'/common.gp'

set title "Where the optimizer step goes (trace pass)\n".subtitle
set ylabel "share of the traced step (%)"
set xlabel "config: model, split (micro-batch x accumulation steps K), traced step time"
set yrange [0:100]
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border rgb "#ffffff"
set boxwidth 0.8
set xtics rotate by -45 font ",9" nomirror
set bmargin 11  # room for the slanted config labels above the notes
set key outside right top

# A bar needs every part and the traced step (busy + idle): a row without
# gpu_busy_ms or idle_ms (a file from before a column) is no bar, rather
# than a NaN that failed the chart (STATS_max undefined).
traced = ok.";forward_ms!=;backward_ms!=;optimizer_ms!=;gpu_busy_ms!=;idle_ms!="
untraced = distinct("model", ok.";forward_ms=")
do for [c in "gpu_busy_ms idle_ms"] {
    do for [m in distinct("model", ok.";forward_ms!=;".c."=")] {
        if (strstrt(" ".untraced." ", " ".m." ") == 0) { untraced = untraced.(strlen(untraced) ? " " : "").m }
    }
}
if (strlen(untraced) > 0) { set label 92 "no trace pass for: ".untraced @note_at }

# busy + idle is the traced step (cupti_step_ms, as the trace pass writes
# it); "other" is busy time outside the three phase ranges (gradient
# zeroing, uploads), so the bars add up to 100 %. The shares are of busy +
# idle itself: a file whose cupti_step_ms is not their sum (a copy edited
# by hand, as the fixtures were) drew bars that stopped at 96%.
total = '(column("gpu_busy_ms") + column("idle_ms"))'
other = 'column("gpu_busy_ms") - column("forward_ms") - column("backward_ms") - column("optimizer_ms")'
share(name) = 100.0 * column(name) / (@total)
tic = 'sprintf("%s %s %s ms", strcol("model"), strcol("split"), ms_text(column("cupti_step_ms")))'

if (count("forward_ms", traced) == 0) {
    missing_why = words(models) == 0 ? no_rows_why : \
                  "forward_ms, backward_ms, optimizer_ms, gpu_busy_ms, idle_ms are empty in this CSV:\n". \
                  "the split comes from the trace pass (CUPTI on a GPU, the CPU backend\n". \
                  "records its own), which --trace-steps 0 leaves out"
    @nothing_to_draw
} else {
    # a part no bar shows (under 0.5% everywhere) gets no legend entry
    stats rows(traced) using (100.0 * (@other) / (@total)) nooutput
    other_shown = STATS_max >= 0.5
    stats rows(traced) using (share("idle_ms")) nooutput
    idle_shown = STATS_max >= 0.5
    plot rows(traced) using (share("forward_ms")):xtic(@tic) lc rgb "#1f77b4" title "forward", \
         '' using (share("backward_ms")) lc rgb "#ff7f0e" title "backward", \
         '' using (share("optimizer_ms")) lc rgb "#2ca02c" title "optimizer", \
         '' using (100.0 * (@other) / (@total)) lc rgb "#9467bd" \
            title (other_shown ? "other (zeroing, uploads)" : ""), \
         '' using (share("idle_ms")) lc rgb "#bbbbbb" title (idle_shown ? "idle" : "")
}
load system(sprintf("dirname '%s'", ARG0)).'/svg.gp'
