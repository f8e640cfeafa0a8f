# time_to_target.gp: "Is E right?" as a chart: time to a target loss against
# the effective batch E, both axes logarithmic. Measured points (steps to
# target x the fastest split's median step time within the cap) with the
# interval of that step time; the line: the steps McCandlish et al. 2018
# predict from the measured noise scale, S_min (1 + B_simple / E), times
# the same step time (only where the S(B) fit holds); the E of least time
# to target ringed. One colour per series (a model's curves of one mode
# and device count).
#
# The numbers are accubench's own: scripts/plots.sh asks `accubench plan
# --time-to-target CSV --table` for them (in.goodput.csv beside in.csv), so
# the chart shows what the report says. By hand:
#   accubench plan --time-to-target results/run.csv --table >results/run.goodput.csv
#   gnuplot -e "csv='results/run.csv'" plots/time_to_target.gp
chart = "time_to_target"
load system(sprintf("dirname '%s'", ARG0)).'/common.gp'
unset label 90  # the main CSV's configs that did not run: not this chart's business

table = ((csv[strlen(csv)-3:] eq ".csv") ? csv[1:strlen(csv)-4] : csv).".goodput.csv"
have = system(sprintf("test -r %s && grep -q '^series,model,effective_batch' %s && echo yes", q(table), q(table)))
# rows with a measured time: how many, and which series
measured = (have eq "yes") ? int(system("awk -F, 'NR > 1 && $11 != \"\" { n++ } END { print n + 0 }' ".q(table))) : 0
if (measured == 0) {
    curves = ((csv[strlen(csv)-3:] eq ".csv") ? csv[1:strlen(csv)-4] : csv).".curves.csv"
    missing_why = (count("model", "status=ok") == 0) ? no_rows_why : \
                  (have eq "yes") ? "no effective batch reached the target loss with a timed split within the cap" : \
                  system(sprintf("test -r %s && echo yes", q(curves))) eq "yes" ? \
                  "the time-to-target table was not made (accubench plan --time-to-target failed or was not found)" : \
                  "no loss curves beside this CSV (accubench run --effective LIST --train-steps N writes NAME.curves.csv)"
    @nothing_to_draw
}
nseries = int(system("awk -F, 'NR > 1 { if ($1 > n) n = $1 } END { print n + 0 }' ".q(table)))
if (nseries > 7) { nseries = 7 }
name_of(i) = system("awk -F, -v i=".i." 'NR > 1 && $1 == i { print $2; exit }' ".q(table))
target_of(i) = system("awk -F, -v i=".i." 'NR > 1 && $1 == i { print $17; exit }' ".q(table))
fit_of(i) = system("awk -F, -v i=".i." 'NR > 1 && $1 == i { print $22; exit }' ".q(table))
# a series' rows (the header first, for column names)
rows_of(i) = "< awk -F, -v i=".i." 'NR == 1 || $1 == i' ".q(table)

set logscale xy 2
set logscale y 10
set format x "%g"
set format y "%g"
# fitted to the times, their bars and the predictions (common.gp's log_y_cmd)
y_fit = log_y_cmd(system(pick("range")."-v cols=".q("time_s time_s_lo time_s_hi predicted_time_s")." ".q(table)))
if (strlen(y_fit) > 0) { eval y_fit }
set xlabel "effective batch E (examples per optimizer step)"
set ylabel "time to target loss (s)"
# The bars' coverage, as the table gives it (time_s_coverage): 95%, or
# less where a step was timed 5 times or in 5 rounds or fewer ([min, max] then): the
# chart says what the report's table says beside each time, never a 95%
# that a bar does not have.
cover_range = system("awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == \"time_s_coverage\") c = i; next } ". \
                     "c && $11 != \"\" && $c != \"\" { v = $c * 100; if (lo == \"\" || v < lo) lo = v; if (hi == \"\" || v > hi) hi = v } ". \
                     "END { if (lo != \"\") printf \"%.3g %.3g\", lo, hi }' ".q(table))
cover_lo = words(cover_range) == 2 ? word(cover_range, 1) + 0 : 95
cover_hi = words(cover_range) == 2 ? word(cover_range, 2) + 0 : 95
cover_text = cover_lo >= 95 - 1e-6 ? "95% interval" : \
             cover_lo == cover_hi ? sprintf("a %.3g%% interval: the step timed 5 times (or rounds) or fewer", cover_lo) : \
             sprintf("intervals of %.3g..%.3g%%: below 95%% where the step was timed 5 times (or rounds) or fewer", cover_lo, cover_hi)
set title "Is E right? Time to a target loss against the effective batch\n". \
          sprintf("%s, %s\n", device, dtype). \
          "points: steps x the fastest split's step time (".cover_text.")\n". \
          "dashed: predicted from B_simple; ring: least time"
set key below left Left reverse
set bmargin 9
set offsets graph 0.05, graph 0.05, 0, 0
plot for [i=1:nseries] rows_of(i) using (column("effective_batch")):(column("time_s")): \
         (column("time_s_lo")):(column("time_s_hi")) with yerrorbars pt 7 ps 1.2 lc rgb model_color(i) \
         title sprintf("%s, target loss %.4g", name_of(i), target_of(i) + 0), \
     for [i=1:nseries] rows_of(i) using (column("effective_batch")):(column("predicted_time_s")) \
         with lines dt 2 lw 2 lc rgb model_color(i) \
         title (fit_of(i) eq "holds" ? "predicted, S_min (1 + B_simple / E) steps" : "predicted: none, the fit was refused"), \
     for [i=1:nseries] rows_of(i) using (column("effective_batch")): \
         (column("best") == 1 ? column("time_s") : NaN) with points pt 6 ps 3 lw 2 lc rgb model_color(i) \
         title "least time to target"
load here.'/svg.gp'
