# frontier.gp: the memory-time frontier at the fixed effective batch: each
# configuration (micro x K, and the levers that set it apart, as the CSV's
# `# levers:` line names them) a point at its memory per device and its
# step time with the median's 95% interval, the Pareto front drawn through
# the ones no other beats at once in memory and time, and the memory cap
# as a line.
# Memory is the measured peak (mem_peak_bytes) where a row has one, the
# exact need (mem_need_bytes) otherwise. The cap: $ACCUBENCH_MEM_CAP in
# bytes (accubench report --mem-cap sets it), else the run's mem_cap_bytes.
#
#   gnuplot -e "csv='results/run.csv'" plots/frontier.gp      (model='S' to pick)
chart = "frontier"
load system(sprintf("dirname '%s'", ARG0)).'/common.gp'

if (!exists("model")) { model = common("model", ok) }
devices = common("devices", ok.";model=".model)
here_rows = ok.";model=".model.";devices=".devices
fr(w) = "awk -f ".q(here.'/split.awk')." -f ".q(here.'/levers.awk')." -f ".q(here.'/frontier.awk'). \
        " -v levers=".q(lever_line)." -v want=".w
src(w) = "< ".pick("rows")."-v where=".q(here_rows)." ".q(csv)." | ".fr(w)
ask(w) = system(pick("rows")."-v where=".q(here_rows)." ".q(csv)." | ".fr(w))
npoints = int(ask("count"))
cap = system(fr("cap")." ".q(csv))

set title "Step time against memory per device".model_part(model, ok)."\n". \
          sprintf("%s, %s, %s on %s device%s, %s", device, dtype, E_text, devices, \
                  devices eq "1" ? "" : "s", mode)
set xlabel "memory per device (MiB): the measured peak, else the exact need"
set ylabel "wall-clock per optimizer step (ms, median, 95% interval)"
set key outside right top
set logscale y
set ytics @tics125
y_fit = log_y_cmd(range("step_ms_median step_ms_ci_lo step_ms_ci_hi", here_rows))
if (strlen(y_fit) > 0) { eval y_fit }
xmax = ask("xmax") + 0; xmin = ask("xmin") + 0
pad = (xmax > xmin ? (xmax - xmin) * 0.1 : xmax * 0.1 + 1)
set xrange [(xmin - pad > 0 ? xmin - pad : 0):xmax + 2 * pad]
if (int(ask("clean")) < npoints) {
    set label 91 "ringed: flagged noisy or disturbed (the flag explains the figure)" @note_at
}
if (strlen(cap) > 0) {
    cap_mib = cap / 1048576.0
    set arrow 1 from cap_mib, graph 0 to cap_mib, graph 1 nohead lc rgb "#a00000" lw 2 dt 2
    set label 2 sprintf("cap %.1f MiB", cap_mib) at cap_mib, graph 0.97 right offset -0.5, 0 \
        tc rgb "#a00000"
}

if (npoints == 0) {
    missing_why = count("model", "status=ok") == 0 ? no_rows_why : \
                  "no ok row with a memory figure (mem_peak_bytes or mem_need_bytes) at effective batch ".E
    @nothing_to_draw
} else {
    # The front under the points. One command, so that svg.gp's replot has
    # it all.
    cmd = "plot "
    if (npoints > 0) {
        cmd = cmd."src('front') using 'mem_mib':'step_ms' with steps lc rgb '#2ca02c' lw 2 ".\
              "title 'Pareto front', "
    }
    cmd = cmd."src('points') using 'mem_mib':'step_ms':'lo':'hi' with yerrorbars pt 7 ".\
          "ps 0.9 lc rgb '#1f77b4' title 'configurations', ".\
          "src('points') using 'mem_mib':(column('clean') == 0 ? column('step_ms') : NaN) ".\
          "with points pt 6 ps 1.6 lc rgb '#888888' notitle, ".\
          "src('points') using 'mem_mib':'step_ms':(stringcolumn('label')) with labels left ".\
          "offset 0.8, 0.4 font ',9' notitle"
    eval cmd
}
load system(sprintf("dirname '%s'", ARG0)).'/svg.gp'
