# wallclock.gp: wall-clock per optimizer step against accumulation steps K
# at a fixed effective batch (the micro-batch is E / K, smaller to the
# right, as in the throughput and dispatches charts), one line per model
# (and per devices x sync on a data-parallel CSV), with MFU % and, where a
# device trace measured it on a GPU, GPU busy % on the right axis. The
# step's arithmetic is the same at every split: what rises is overhead.
#
#   gnuplot -e "csv='results/run.csv'" plots/wallclock.gp
chart = "wallclock"
load system(sprintf("dirname '%s'", ARG0)).'/common.gp'
if (strlen(models_note) > 0) { @models_note }
if (strlen(long_names_note) > 0) { @long_names_note }
if (strlen(one_split_note) > 0) { @one_split_note }

# The series: model|devices|sync|levers, "-" for an empty sync (a single
# process) or no lever column (a file from before them); levers: a set of
# lever values (common.gp's lever_sets); "|": a custom model's name holds
# ":" and ";". A series is one line: configs that differ in a lever (what
# the backward recomputes, the shard, the gradient's dtype) are lines of
# their own, never one line through both. At most max_series (common.gp): once full, no more passes
# over the file.
series = ""
blank(v) = v eq "-" ? "" : v
do for [m in models] {
    if (words(series) < max_series) {
        # "-" too for rows whose devices is empty (a file from before the
        # column, which reads as unmeasured): without it such a CSV had no
        # series, and the chart said it had no ok rows
        ds = distinct("devices", ok.";model=".m)
        if (count("step_ms_median", ok.";model=".m.";devices=") > 0) { ds = "- ".ds }
        do for [d in ds] {
            if (words(series) < max_series) {
                at = ok.";model=".m.";devices=".blank(d)
                ss = distinct("sync", at)
                if (count("step_ms_median", at.";sync=") > 0) { ss = "- ".ss }
                do for [sy in ss] {
                    if (words(series) < max_series) {
                        at_sync = at.";sync=".(sy eq "-" ? "" : sy)
                        do for [ls in lever_sets(at_sync)] {
                            if (words(series) < max_series) { series = series." ".m."|".d."|".sy."|".ls }
                        }
                    }
                }
            }
        }
    }
}
ns = words(series)
part(s, k) = word(system("echo ".q(s)." | tr '|' ' '"), k)
s_rows(s) = with_levers(ok.";model=".part(s, 1).";devices=".blank(part(s, 2)).";sync=".blank(part(s, 3)), part(s, 4))
dp_run = strstrt(series, "|-|") == 0 || words(distinct("devices", ok)) > 1
s_name(s) = model_label(part(s, 1)).(dp_run ? sprintf(" %s dev%s", part(s, 2), part(s, 3) eq "-" ? "" : " ".part(s, 3)) : ""). \
            lever_title(ok, part(s, 4))
s_color(j) = word("#1f77b4 #d62728 #2ca02c #9467bd #ff7f0e #8c564b #17becf #7f7f7f", (j - 1) % 8 + 1)
mfu_of(j) = count("mfu_pct", s_rows(word(series, j)))
busy_of(j) = host_is_device ? 0 : count("gpu_busy_pct", s_rows(word(series, j)))
n_mfu = 0; n_busy = 0
do for [j=1:ns] { n_mfu = n_mfu + (mfu_of(j) > 0); n_busy = n_busy + (busy_of(j) > 0) }

set title "Wall-clock per optimizer step vs accumulation steps\n".subtitle
set xlabel "accumulation steps K per optimizer step (micro-batch = E / ".(dp_run ? "(devices x K)" : "K")."; log2 scale)"
set ylabel "wall-clock per optimizer step (ms, median, log scale)"
y2what = n_busy > 0 ? "GPU busy % and MFU %" : "MFU %"
probe_meta = meta("peak_probe")
set y2label y2what.(strlen(probe_meta) > 0 && probe_meta[1:4] ne "none" ? \
                    " (MFU: of the peak GEMM probed beside each config)" : \
                    " (MFU: of the peak GEMM rate measured at start-up)")
set logscale x 2
set logscale y 10
set ytics @tics125
# the ratio labels ride up to two lines above their points: room on top
y_fit = log_y_cmd_room(range("step_ms_median step_ms_ci_lo step_ms_ci_hi", ok), \
                       count("vs_ref", ok) > 0 ? 0.1 : 0)
if (strlen(y_fit) > 0) { eval y_fit }
# A share over 100% cannot be true (a peak measured low; the report marks
# it "(!)"): the axis reaches it, where [0:100] cut its point off the top
# with no word, and the note names it.
share_hi = word(range(n_busy > 0 ? "mfu_pct gpu_busy_pct" : "mfu_pct", ok)." 0 0", 2) + 0
if (share_hi > 100) {
    set y2range [0:share_hi * 1.05]; set y2tics 0, 20
} else {
    set y2range [0:100]; set y2tics 0, 10, 100
}
set ytics nomirror
set format x "%g"
untraced = ""
do for [j=1:ns] { if (busy_of(j) == 0) { untraced = untraced.(strlen(untraced) ? ", " : " ").s_name(word(series, j)) } }
# The notes under the chart share note_at's one line, in one label.
notes = !host_is_device && strlen(untraced) > 0 ? "GPU busy % not measured for:".untraced : ""
if (share_hi > 100) {
    notes = notes.(strlen(notes) ? "; " : "").sprintf("a share of %.0f%% cannot be true (a peak measured low)", share_hi)
}

# Only the clauses with data (gnuplot 5.4 runs an empty `for [i=1:0]` once),
# so the key lists only what is drawn.
step_lines = 'for [j=1:ns] rows(s_rows(word(series, j))) \
    using (column("accum_steps")):(column("step_ms_median")) \
    with linespoints lw 2 pt 7 ps 0.9 lc rgb s_color(j) title s_name(word(series, j))." step ms"'
mfu_lines = 'for [j=1:ns] rows(s_rows(word(series, j))) \
    using (column("accum_steps")):(column("mfu_pct")) axes x1y2 \
    with linespoints lw 1.5 dt 3 pt 4 ps 0.8 lc rgb s_color(j) \
    title (mfu_of(j) > 0 ? s_name(word(series, j))." MFU %" : "")'
busy_lines = 'for [j=1:ns] rows(s_rows(word(series, j))) \
    using (column("accum_steps")):(busy_of(j) > 0 ? column("gpu_busy_pct") : NaN) axes x1y2 \
    with linespoints lw 1.5 dt 2 pt 6 ps 0.8 lc rgb s_color(j) \
    title (busy_of(j) > 0 ? s_name(word(series, j))." GPU busy %" : "")'
# Each point's 95% interval of its median, and where the run timed its
# splits in interleaved rounds, the paired ratio to its series' reference
# (the largest micro-batch) beside the point: the verdict's figures.
# The bars carry the line's own point (pt 7): gnuplot's pt -1 paints a
# white disc, which blanked every measured point under its bar.
ci_of(j) = count("step_ms_ci_lo", s_rows(word(series, j)))
ratio_of(j) = count("vs_ref", s_rows(word(series, j)))
n_ci = 0; n_ratio = 0
do for [j=1:ns] { n_ci = n_ci + (ci_of(j) > 0); n_ratio = n_ratio + (ratio_of(j) > 0) }
ci_bars = 'for [j=1:ns] rows(s_rows(word(series, j))) \
    using (column("accum_steps")):(column("step_ms_median")):(ci_of(j) > 0 ? column("step_ms_ci_lo") : NaN):(ci_of(j) > 0 ? column("step_ms_ci_hi") : NaN) \
    with yerrorbars lw 1 pt 7 ps 0.9 lc rgb s_color(j) notitle'
# Each label as the report and the run's summary print the same ratio (the
# one format, ratio.awk's last column), "ref" at the reference itself.
ratio_rows(w) = rows(w)." | awk -f ".q(here.'/ratio.awk')
ratio_label(r, lo) = r == 1 && lo == 1 ? "ref" : strcol("ratio")
# In a dense sweep a label is wider than the gap to the next split: every
# other K (by its power of two) puts its label a line higher, so that
# neighbours never share a line.
dense = words(distinct("accum_steps", ok)) > 5
lifted(k) = dense && int(floor(log(k) / log(2) + 0.5)) % 2 == 1
ratio_row(j, k, up) = ratio_of(j) > 0 && lifted(k) == up
ratio_labels_at(up, line) = 'for [j=1:ns] ratio_rows(s_rows(word(series, j))) \
    using (column("accum_steps")):(column("step_ms_median")):(ratio_row(j, column("accum_steps"), '.up.') ? ratio_label(column("vs_ref"), column("vs_ref_lo")) : "") \
    with labels offset 0, '.line.' font ",8" tc rgb s_color(j) notitle'
ratio_labels = ratio_labels_at(0, "1.2").(dense ? ", ".ratio_labels_at(1, "2.3") : "")
lines = step_lines.(n_ci > 0 ? ", ".ci_bars : "").(n_ratio > 0 ? ", ".ratio_labels : "") \
        .(n_mfu > 0 ? ", ".mfu_lines : "").(n_busy > 0 ? ", ".busy_lines : "")
if (n_ratio > 0) {
    set offsets graph 0.06, graph 0.10, 0, 0 # room for the labels at the ends
    notes = notes.(strlen(notes) ? "; " : "")."labels: paired ratio to the largest split, 95% interval over interleaved rounds"
}
if (strlen(notes) > 0) { set label 92 notes @note_at }

if (ns == 0) {
    missing_why = no_rows_why
    @nothing_to_draw
} else {
    plot @lines
}
load system(sprintf("dirname '%s'", ARG0)).'/svg.gp'
