# wallclock.gp: wall-clock per optimizer step against micro-batch size at a
# fixed effective batch, one line per model, with GPU busy % and MFU % on the
# right axis. The chart that shows why small micro-batches cost time: the
# step's arithmetic is the same at every split, the GPU is just idle more.
#
#   gnuplot -e "csv='results/run.csv'" plots/wallclock.gp
chart = "wallclock"
load system(sprintf("dirname '%s'", ARG0)).'/common.gp'

set title "Wall-clock per optimizer step vs micro-batch\n".subtitle
set xlabel "micro-batch size (examples per pass, log2 scale)"
set ylabel "wall-clock per optimizer step (ms, median, log scale)"
set y2label "GPU busy % and MFU % (of the measured peak GEMM rate)"
set logscale x 2
set logscale y 10
set ytics @tics125
set y2range [0:100]
set ytics nomirror
set y2tics 0, 10, 100
set format x "%g"

# Busy % comes from a device trace (CUPTI); models without one get no busy line,
# and the chart says which.
busy_models = distinct("model", ok.";gpu_busy_pct!=")
untraced = ""
do for [m in models] { if (strstrt(" ".busy_models." ", " ".m." ") == 0) { untraced = untraced." ".m } }
if (strlen(untraced) > 0) {
    set label 92 "GPU busy % not measured for:".untraced @note_at
}

# gnuplot 5.4 runs an empty `for [i=1:0]` plot clause once, so the busy
# lines are added only when some model has them.
busy_lines = (words(busy_models) == 0) ? "" : \
    ', for [i=1:words(busy_models)] rows(ok.";model=".word(busy_models, i)) \
       using (column("micro_batch")):(column("gpu_busy_pct")) axes x1y2 \
       with linespoints lw 1.5 dt 2 pt 6 ps 0.8 lc rgb model_color(model_index(word(busy_models, i))) \
       title word(busy_models, i)." GPU busy %"'

if (words(models) == 0) {
    missing_why = no_rows_why
    @nothing_to_draw
} else {
    plot for [i=1:words(models)] rows(ok.";model=".word(models, i)) \
             using (column("micro_batch")):(column("step_ms_median")) \
             with linespoints lw 2 pt 7 ps 0.9 lc rgb model_color(i) \
             title word(models, i)." step ms", \
         for [i=1:words(models)] rows(ok.";model=".word(models, i)) \
             using (column("micro_batch")):(column("mfu_pct")) axes x1y2 \
             with linespoints lw 1.5 dt 3 pt 4 ps 0.8 lc rgb model_color(i) \
             title word(models, i)." MFU %" \
         @busy_lines
}
load system(sprintf("dirname '%s'", ARG0)).'/svg.gp'
