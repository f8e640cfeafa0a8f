# throughput.gp: samples (or tokens) per second against accumulation steps
# at a fixed effective batch, one line per model. Accumulation does the same arithmetic
# per step, so any drop here is overhead, not work. Each point carries its
# 95% interval (the step's median's, as a rate).
#
#   gnuplot -e "csv='results/run.csv'" plots/throughput.gp
chart = "throughput"
load system(sprintf("dirname '%s'", ARG0)).'/common.gp'
if (strlen(models_note) > 0) { @models_note }
if (strlen(long_names_note) > 0) { @long_names_note }
if (strlen(one_split_note) > 0) { @one_split_note }
if (strlen(one_levers_note) > 0) { @one_levers_note }

# Tokens per second where every row drawn reads tokens (a GPT, a Llama),
# as the report's tables give it for such a model; samples per second
# otherwise (one axis holds one unit). Samples/s beside the report's
# tokens/s read as numbers 16x apart for one run.
n_tok = count("tokens_per_s", ok_one_levers)
rate = n_tok > 0 && n_tok == count("samples_per_s", ok_one_levers) ? "tokens_per_s" : "samples_per_s"
unit = rate eq "tokens_per_s" ? "tokens" : "samples"
set title (unit eq "tokens" ? "Tokens" : "Samples")." per second vs accumulation steps\n".subtitle
set xlabel "accumulation steps per optimizer step (log2 scale)"
set ylabel "training throughput (".unit."/s, log scale)"
set logscale x 2
set logscale y 10
set format x "%g"

# the 95% interval of each point: the step's, as a rate. The bars carry the
# line's own point (pt 7): gnuplot's pt -1 paints a white disc over it. The
# x range is padded, so that the bars at the first and last K are not drawn
# on the frame, where they vanish.
set offsets graph 0.04, graph 0.04, 0, 0
rate_lo(r) = column(rate) * column("step_ms_median") / column("step_ms_ci_hi")
rate_hi(r) = column(rate) * column("step_ms_median") / column("step_ms_ci_lo")
tp_plot = 'for [i=1:words(models)] rows(ok_one_levers.";model=".word(models, i)) \
         using (column("accum_steps")):(column(rate)) \
         with linespoints lw 2 pt 7 ps 0.9 lc rgb model_color(i) title model_label(word(models, i))'
bars = 'for [i=1:words(models)] rows(ok_one_levers.";model=".word(models, i)) \
         using (column("accum_steps")):(column(rate)):(rate_lo(0)):(rate_hi(0)) \
         with yerrorbars lw 1 pt 7 ps 0.9 lc rgb model_color(i) notitle'
has_ci = words(models) > 0 && count("step_ms_ci_lo", ok) > 0
if (has_ci) { tp_plot = tp_plot.", ".bars }
# The y axis fitted to the points and their bars (common.gp's log_y_cmd):
# the rates' extent, each row's interval where the file has them (a file
# from before the interval columns: the rates alone).
if (count(rate, ok_one_levers) > 0) {
    # one column a pass: stats of two fits a line through them, and warns
    # where one point has no slope
    stats rows(ok_one_levers) using (!has_ci ? column(rate) : \
        (lo = rate_lo(0), lo == lo ? lo : column(rate))) nooutput
    y_lo = STATS_min
    stats rows(ok_one_levers) using (!has_ci ? column(rate) : \
        (hi = rate_hi(0), hi == hi ? hi : column(rate))) nooutput
    eval log_y_cmd(sprintf("%.9g %.9g", y_lo, STATS_max))
}

if (words(models) == 0) {
    missing_why = no_rows_why
    @nothing_to_draw
} else {
    plot @tp_plot
}
load system(sprintf("dirname '%s'", ARG0)).'/svg.gp'
