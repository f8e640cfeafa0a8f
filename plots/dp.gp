# dp.gp: data parallel at the fixed effective batch: the step time of each
# device count x accumulation steps, one bar per sync mode (micro: an
# all-reduce after every micro-batch; window: one after the last; overlap:
# buckets behind the last backward), split into compute and the
# communication the step waited for (exposed).
#
#   gnuplot -e "csv='results/run.csv'" plots/dp.gp      (model='S' to pick)
chart = "dp"
load system(sprintf("dirname '%s'", ARG0)).'/common.gp'

# Rows with an all-reduce: sync is set; one set of lever values (shard,
# recompute, the gradient's dtype: common.gp's lever_sets), the first in
# the CSV, since another set's bars would land on its twin's. The frontier
# chart holds the shard values.
all_base = ran.";effective_batch=".E.";mode=".mode.";reduction=".reduction.dtype_sel.";sync!="
dp_levers = word(lever_sets(all_base)." -", 1)
base = with_levers(all_base, dp_levers)
dp_levers_said = lever_title(all_base, dp_levers)
if (!exists("model")) { model = common("model", base) }
here_rows = base.";model=".model
# The sync modes in the run's order (the CSV's rows follow it), a colour
# each by its place among those the file holds.
all_syncs = distinct("sync", base)
syncs = distinct("sync", here_rows)
sync_colors = "#d62728 #1f77b4 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #7f7f7f"
sync_color(s) = word(sync_colors, (index_in(all_syncs, s) - 1) % words(sync_colors) + 1)
# One group per devices x micro-batch, devices ascending, then K descending.
# At most max_groups, each a pass over the file for its label; the rest
# are counted under the chart.
max_groups = 24
groups = ""
glabels = ""
do for [d in distinct("devices", here_rows)] {
    if (words(groups) < max_groups) {
        do for [mb in distinct("micro_batch", here_rows.";devices=".d)] {
            if (words(groups) < max_groups) { groups = groups." ".d.":".mb }
        }
    }
}
ng = words(groups)
if (ndistinct("devices", here_rows) > 0 && ng == max_groups) {
    set label 94 sprintf("at most %d devices x micro-batch groups drawn (the first in the CSV)", max_groups) \
        at screen 0.99, 0.025 right font ",10" tc rgb "#a00000"
}
gidx(d, mb) = words((" ".groups." ")[1:strstrt(" ".groups." ", sprintf(" %d:%d ", d, mb)) + 1])

set title "Data parallel: compute and exposed communication per step".model_part(model, base)."\n". \
          sprintf("%s, %s, %s over all devices, %s", device, dtype, E_text, mode)
set xlabel "devices x accumulation steps K (micro-batch per device); one bar per sync mode".(strlen(dp_levers_said) > 0 ? ";".dp_levers_said : "")
set ylabel "wall-clock per optimizer step (ms, median and its 95% interval)"
set style fill solid 0.9 border rgb "#ffffff"
set key outside right top
ns = words(syncs)
width = 0.8 / (ns > 0 ? ns : 1)
set boxwidth width absolute
offset(j) = (j - (ns + 1) / 2.0) * width
set xtics () rotate by -30
set xrange [0.4:ng + 0.6]
set yrange [0:*]

# The whole step in the light shade, then the compute part over it: the
# light part left on top is the exposed communication.
dp_plot = 'for [j=1:ns] rows(here_rows.";sync=".word(syncs, j)) \
         using (gidx(column("devices"), column("micro_batch")) + offset(j)): \
               (column("step_ms_median")) \
         with boxes lc rgb sync_color(word(syncs, j)) fs transparent solid 0.35 \
         title word(syncs, j)." exposed comm", \
     for [j=1:ns] rows(here_rows.";sync=".word(syncs, j)) \
         using (gidx(column("devices"), column("micro_batch")) + offset(j)): \
               (column("step_ms_median") - column("comm_exposed_ms") > 0 ? \
                column("step_ms_median") - column("comm_exposed_ms") : 0) \
         with boxes lc rgb sync_color(word(syncs, j)) title word(syncs, j)." compute"'
# Each bar's 95% interval of its median, as the report's sync sentences
# and tables give it: two bars a few percent apart may be one time.
# (A file from before the interval columns: the bars alone.) Built
# before the if: gnuplot expands @dp_plot when it reads the whole block.
ci = 'for [j=1:ns] rows(here_rows.";sync=".word(syncs, j)) \
         using (gidx(column("devices"), column("micro_batch")) + offset(j)): \
               (column("step_ms_median")):(column("step_ms_ci_lo")):(column("step_ms_ci_hi")) \
         with yerrorbars lc rgb "#333333" lw 1.5 pt 7 ps 0.5 \
         title (j == 1 ? "95% interval of the step time" : "")'
if (count("step_ms_ci_lo", here_rows) > 0) { dp_plot = dp_plot.", ".ci }
if (ns == 0) {
    missing_why = count("model", "status=ok") == 0 ? no_rows_why : \
                  "no data-parallel rows in this CSV:\nrun under mpirun (make bench-dp)"
    @nothing_to_draw
} else {
    do for [i=1:ng] {
        g = word(groups, i); c = strstrt(g, ":")
        d = g[1:c-1]; mb = g[c+1:]
        k = common("accum_steps", here_rows.";devices=".d.";micro_batch=".mb)
        set xtics add (sprintf("%s x %s (%s)", d, k, mb) i)
    }
    plot @dp_plot
}
load system(sprintf("dirname '%s'", ARG0)).'/svg.gp'
