# dispatches.gp: device work items per optimizer step against accumulation
# steps. Each pass issues the same kernels, so the count grows K-fold: the
# launch overhead accumulation pays. Solid: operations the harness dispatched
# (timed pass); dashed: kernels CUPTI saw (trace pass), where one ran.
#
#   gnuplot -e "csv='results/run.csv'" plots/dispatches.gp
chart = "dispatches"
load system(sprintf("dirname '%s'", ARG0)).'/common.gp'
if (strlen(models_note) > 0) { @models_note }
if (strlen(long_names_note) > 0) { @long_names_note }
if (strlen(one_split_note) > 0) { @one_split_note }
if (strlen(one_levers_note) > 0) { @one_levers_note }

set title (host_is_device ? "Operations dispatched" : "Kernels (dispatches)")." per optimizer step vs accumulation steps\n".subtitle
set xlabel "accumulation steps per optimizer step (log2 scale)"
set ylabel "device operations per optimizer step (count, log2 scale)"
set logscale x 2
set logscale y 2
set format x "%g"
set format y "%g"

disp_models = first_distinct("model", ok.";dispatches_per_step!=", max_series)
kern_models = first_distinct("model", ok.";kernels_per_step!=", max_series)
if (host_is_device) {
    # the trace of a backend whose host computes each op records the
    # dispatches themselves: a second line would hide under the first
    kern_models = ""
    set label 92 "on this backend each dispatched operation is the work itself (no kernels to trace)" @note_at
} else {
    if (words(kern_models) == 0 && words(disp_models) > 0) {
        set label 92 "traced kernel counts not measured (no trace pass)" @note_at
    }
}

# Build the plot from the clauses that have data (gnuplot 5.4 runs an empty
# `for [i=1:0]` plot clause once and warns).
disp_lines = 'for [i=1:words(disp_models)] rows(ok_one_levers.";model=".word(disp_models, i)) \
    using (column("accum_steps")):(column("dispatches_per_step")) \
    with linespoints lw 2 pt 7 ps 0.9 lc rgb model_color(model_index(word(disp_models, i))) \
    title model_label(word(disp_models, i))." dispatched"'
kern_lines = 'for [i=1:words(kern_models)] rows(ok_one_levers.";model=".word(kern_models, i)) \
    using (column("accum_steps")):(column("kernels_per_step")) \
    with linespoints lw 1.5 dt 2 pt 6 ps 0.9 lc rgb model_color(model_index(word(kern_models, i))) \
    title model_label(word(kern_models, i))." traced kernels"'
lines = (words(disp_models) > 0 ? disp_lines : "") . \
        (words(disp_models) > 0 && words(kern_models) > 0 ? ", " : "") . \
        (words(kern_models) > 0 ? kern_lines : "")

if (strlen(lines) == 0) {
    missing_why = words(models) == 0 ? no_rows_why : \
                  "dispatches_per_step and kernels_per_step are empty in this CSV"
    @nothing_to_draw
} else {
    plot @lines
}
load system(sprintf("dirname '%s'", ARG0)).'/svg.gp'
