# modes.gp: execution modes side by side (every mode the CSV holds) at
# each split, for one model at the fixed effective batch: what a host sync
# per micro-batch, a captured graph, or allocating activations per pass
# costs or saves.
#
#   gnuplot -e "csv='results/run.csv'" plots/modes.gp      (model='S' to pick)
chart = "modes"
load system(sprintf("dirname '%s'", ARG0)).'/common.gp'

# Every mode, not only the one the other charts show.
base = ran.";effective_batch=".E.";reduction=".reduction.dtype_sel.(strlen(own_backend) > 0 ? ";backend=".own_backend : "")
# The model with the most modes measured, unless one was named.
if (!exists("model")) { model = most("model", "mode", base) }
here_rows = base.";model=".model
# The modes this model ran, in the order of the run's own list (the CSV's
# rows follow it); a colour each by its place among every mode the file
# holds, so a colour means the same mode in every panel of one file.
all_modes = distinct("mode", base)
modes = distinct("mode", here_rows)
mode_colors = "#1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf"
mode_color(m) = word(mode_colors, (index_in(all_modes, m) - 1) % words(mode_colors) + 1)

set title "Execution modes side by side".model_part(model, base)."\n". \
          sprintf("%s, %s, %s", device, dtype, E_text)
# The x-axis is K, as in the wall-clock, throughput and dispatch charts,
# so a line runs the same way in all of them.
set xlabel "accumulation steps K per optimizer step (micro-batch = E / K; log2 scale; points grouped per K)"
set ylabel "wall-clock per optimizer step (ms: median, bars p10..p90; log scale)"
set logscale y 10
set ytics @tics125
y_fit = log_y_cmd(range("step_ms_median step_ms_p10 step_ms_p90", here_rows))
if (strlen(y_fit) > 0) { eval y_fit }
set errorbars lc rgb "#333333"
set key outside right top
# Groups sit at log2(K); each mode takes a slice of the group.
nm = words(modes)
width = 0.8 / (nm > 0 ? nm : 1)
offset(j) = (j - (nm + 1) / 2.0) * width
set xtics ()
do for [k in distinct("accum_steps", here_rows)] { set xtics add (k log(k + 0) / log(2)) }
set xrange [*:*] noextend
set offsets 0.5, 0.5, 0, 0
skipped = notrun("effective_batch=".E.";model=".model)
unset label 90
if (strlen(skipped) > 0) { set label 90 "not run: ".skipped at screen 0.01, 0.025 left font ",9" tc rgb "#a00000" }

if (nm < 2) {
    missing_why = nm == 0 ? no_rows_why : sprintf("only one execution mode (%s) in this CSV:\n". \
                  "run a profile that sweeps modes to compare them", word(modes, 1))
    @nothing_to_draw
} else {
    # whiskers: p10..p90 of the step times, so a difference within the noise
    # looks like one
    plot for [j=1:nm] rows(here_rows.";mode=".word(modes, j)) \
             using (log(column("accum_steps")) / log(2) + offset(j)):(column("step_ms_median")): \
                   (column("step_ms_p10")):(column("step_ms_p90")) \
             with yerrorbars lw 1.5 pt 7 ps 1.3 lc rgb mode_color(word(modes, j)) title word(modes, j)
}
load system(sprintf("dirname '%s'", ARG0)).'/svg.gp'
