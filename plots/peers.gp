# peers.gp: accubench and a peer framework (the rows bench/peers/torch_accum.py
# wrote into the CSV: backends named by the `# peers:` line) side by side:
# the step time at each micro-batch, accubench in its main mode beside every
# mode of the peer, for one model at the fixed effective batch.
#
#   gnuplot -e "csv='results/run.csv'" plots/peers.gp      (model='S' to pick;
#                                        devices='2'; sync='overlap' for ranks)
chart = "peers"
load system(sprintf("dirname '%s'", ARG0)).'/common.gp'

peers = meta("peers")
own = own_backend
base = ran.";effective_batch=".E.";reduction=".reduction.dtype_sel
if (!exists("model")) {
    model = (strlen(peers) > 0) ? word(distinct("model", base.";backend=".word(peers, 1)), 1) : ""
}
peer_rows = base.";model=".model
# Data parallel: one device count and one sync at a time (the peer's first
# unless devices=/sync= are given), so the bars at a micro-batch are one
# config but for the backend and mode; one process has an empty sync.
if (!exists("devices")) {
    devices = (strlen(peers) > 0) ? word(distinct("devices", peer_rows.";backend=".word(peers, 1)), 1) : ""
}
if (strlen(devices) > 0) { peer_rows = peer_rows.";devices=".devices }
if (!exists("sync")) {
    sync = (strlen(peers) > 0) ? word(distinct("sync", peer_rows.";backend=".word(peers, 1)), 1) : ""
}
peer_rows = peer_rows.";sync=".sync
# The series: accubench's own backend in the main mode, then each peer's modes.
sb = ""; sm = ""
if (strstrt(" ".peers." ", " ".own." ") == 0 && count("step_ms_median", peer_rows.";backend=".own.";mode=".mode) > 0) {
    sb = own; sm = mode
}
do for [p in peers] {
    if (words(sb) < max_series) {
        do for [m in distinct("mode", peer_rows.";backend=".p)] {
            if (words(sb) < max_series) { sb = sb." ".p; sm = sm." ".m }
        }
    }
}
ns = words(sb)
label(j) = (word(sb, j) eq own ? "accubench " : "").word(sb, j)." ".word(sm, j)
color(j) = word("#1f77b4 #ff7f0e #d62728 #2ca02c #9467bd #8c564b #17becf #7f7f7f", (j - 1) % 8 + 1)

set title "accubench and ".(strlen(peers) ? peers : "its peers")." side by side".model_part(model, base)."\n". \
          sprintf("%s, %s, %s%s", device, dtype, E_text, \
                  strlen(devices) == 0 ? "" : \
                  (devices + 0 > 1) ? sprintf(", %s devices, sync %s", devices, sync) : "")
set xlabel "micro-batch size (examples per pass; points grouped per micro-batch)"
set ylabel "wall-clock per optimizer step (ms: median, bars p10..p90; log scale)"
set logscale y 10
set ytics @tics125
y_fit = log_y_cmd(range("step_ms_median step_ms_p10 step_ms_p90", peer_rows))
if (strlen(y_fit) > 0) { eval y_fit }
set errorbars lc rgb "#333333"
set key outside right top
width = 0.8 / (ns > 0 ? ns : 1)
offset(j) = (j - (ns + 1) / 2.0) * width
set xtics ()
do for [mb in distinct("micro_batch", peer_rows)] { set xtics add (mb log(mb + 0) / log(2)) }
set xrange [*:*] noextend
set offsets 0.5, 0.5, 0, 0

if (strlen(peers) == 0 || ns == 0) {
    missing_why = (count("model", "status=ok") == 0) ? no_rows_why \
                  : (strlen(peers) == 0) ? "no peer rows in this CSV (make peers writes them)" \
                  : "no ok peer rows at effective batch ".E
    @nothing_to_draw
} else {
    plot for [j=1:ns] rows(peer_rows.";backend=".word(sb, j).";mode=".word(sm, j)) \
             using (log(column("micro_batch")) / log(2) + offset(j)):(column("step_ms_median")): \
                   (column("step_ms_p10")):(column("step_ms_p90")) \
             with yerrorbars lw 1.5 pt 7 ps 1.3 lc rgb color(j) title label(j)
}
load system(sprintf("dirname '%s'", ARG0)).'/svg.gp'
