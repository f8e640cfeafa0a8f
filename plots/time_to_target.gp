# time_to_target.gp: "Is E right?" as a chart: time to a target loss against
# the effective batch E, both axes logarithmic. Measured points (steps to
# target x the fastest split's median step time within the cap) with the
# interval of that step time; the line: the steps McCandlish et al. 2018
# predict from the measured noise scale, S_min (1 + B_simple / E), times
# the same step time (only where the S(B) fit holds); the E of least time
# to target ringed. One colour per series (a model's curves of one mode
# and device count), named in the key by what sets it apart from the
# others (common.gp's series_text); the series with a time to target, up
# to max_drawn of them, the title counting those left out.
#
# The numbers are accubench's own: scripts/plots.sh asks `accubench plan
# --time-to-target CSV --table` for them (in.goodput.csv beside in.csv), so
# the chart shows what the report says. By hand:
#   accubench plan --time-to-target results/run.csv --table >results/run.goodput.csv
#   gnuplot -e "csv='results/run.csv'" plots/time_to_target.gp
chart = "time_to_target"
load system(sprintf("dirname '%s'", ARG0)).'/common.gp'
@main_rows_notes_off  # the main CSV's configs not run or run again: not this chart's business

table = ((csv[strlen(csv)-3:] eq ".csv") ? csv[1:strlen(csv)-4] : csv).".goodput.csv"
have = system(sprintf("test -r %s && grep -q '^series,model,effective_batch' %s && echo yes", q(table), q(table)))
# pick.awk over the table, its columns by name: want of column c in the
# rows matching w ("series=2;best=1"). A series is named by its number as
# a word of a list of them ("2").
in_table(want, c, w) = system(pick(want)."-v col=".c." -v where=".q(w)." ".q(table))
of_series_rows(s) = "series=".s
# A series none of whose E has a time (none reached the target with a
# timed split within the cap) has no point to draw, and gnuplot would warn
# of each of its lines: the series with a time are drawn, up to one per
# colour, and the title counts those left out.
max_drawn = 7
nseries = (have eq "yes") ? int(in_table("ndistinct", "series", "")) : 0
ntimed = (have eq "yes") ? int(in_table("ndistinct", "series", "time_s!=")) : 0
if (ntimed == 0) {
    curves = ((csv[strlen(csv)-3:] eq ".csv") ? csv[1:strlen(csv)-4] : csv).".curves.csv"
    missing_why = (count("model", "status=ok") == 0) ? no_rows_why : \
                  (have eq "yes") ? "no effective batch reached the target loss with a timed split within the cap" : \
                  system(sprintf("test -r %s && echo yes", q(curves))) eq "yes" ? \
                  "the time-to-target table was not made (accubench plan --time-to-target failed or was not found)" : \
                  "no loss curves beside this CSV (accubench run --effective LIST --train-steps N writes NAME.curves.csv)"
    @nothing_to_draw
}
drawn = system(pick("distinct")."-v max=".max_drawn." -v col=series -v where=".q("time_s!=")." ".q(table))
left_out_text = (ntimed > words(drawn) ? sprintf("; the first %d of %d series with a time drawn", words(drawn), ntimed) : ""). \
                (nseries > ntimed ? sprintf("; %d series with no time to target not drawn", nseries - ntimed) : "")
# Series s's value of column c (model, target_loss, fit: one per series).
of_series(s, c) = system(pick("distinct")."-v max=1 -v col=".c." -v where=".q(of_series_rows(s))." ".q(table))
# Its dashed line and its ring only where it has their points: a fit
# refused, or no noise scale, predicts nothing (the key says why), and
# one timed E, or one that meets the target at step 0, has no least.
predicted = ""; refused = ""; no_noise = ""; ringed = ""
do for [s in drawn] {
    if (int(in_table("count", "predicted_time_s", of_series_rows(s))) > 0) {
        predicted = predicted.s." "
    } else {
        if (of_series(s, "fit") eq "holds") { no_noise = no_noise.s." " } else { refused = refused.s." " }
    }
    if (int(in_table("count", "time_s", of_series_rows(s).";best=1")) > 0) { ringed = ringed.s." " }
}
# "predicted: none, the fit was refused", for how many where not for all
no_prediction(list, why) = "predicted: none".(words(list) < words(drawn) ? \
                           sprintf(" for %d of the %d series", words(list), words(drawn)) : "").", ".why
# One series is named by its model, as it always was; several by what
# sets each apart from the others (common.gp's series_text). The model's
# name is spelt out: the key has room for a custom model's shape.
series_label(s) = of_series(s, "model").(nseries > 1 ? ": ".series_text(table, s) : ""). \
                  sprintf(", target loss %.4g", of_series(s, "target_loss") + 0)
series_color(s) = model_color(index_in(drawn, s))
# a series' rows (the header first, for column names)
rows_of(s) = "< awk -F, -v s=".q(s)." 'NR == 1 || $1 == s' ".q(table)

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
          sprintf("%s, %s%s\n", device, dtypes_all, left_out_text). \
          "points: steps x the fastest split's step time (".cover_text.")\n". \
          "dashed: predicted from B_simple; ring: least time"
set key below left Left reverse maxcols 2
# room under the axis for the key: its entries two to a line
key_entries = words(drawn) + (words(predicted) > 0) + (words(refused) > 0) + (words(no_noise) > 0) + (words(ringed) > 0)
set bmargin 5 + 1.2 * int((key_entries + 1) / 2)
set offsets graph 0.05, graph 0.05, 0, 0
# Each kind of mark is drawn for the series that have it. gnuplot runs a
# plot's iteration over an empty list once all the same (a source of no
# points, and its warning), so the plot is made of the kinds that have any.
# The key names each series once, by its colour; a dashed line and a ring
# say what they are once, in grey, whichever series they are drawn for.
mark_grey = "#555555"
marks_points = 'for [s in drawn] rows_of(s) using (column("effective_batch")):(column("time_s")): \
    (column("time_s_lo")):(column("time_s_hi")) with yerrorbars pt 7 ps 1.2 lc rgb series_color(s) \
    title series_label(s)'
marks_predicted = 'for [s in predicted] rows_of(s) using (column("effective_batch")):(column("predicted_time_s")) \
    with lines dt 2 lw 2 lc rgb series_color(s) notitle, \
    keyentry with lines dt 2 lw 2 lc rgb mark_grey title "predicted, S_min (1 + B_simple / E) steps"'
marks_refused = 'keyentry with lines dt 2 lw 2 lc rgb mark_grey title no_prediction(refused, "the fit was refused")'
marks_no_noise = 'keyentry with lines dt 2 lw 2 lc rgb mark_grey \
    title no_prediction(no_noise, "no noise scale (--noise-windows and K > 1)")'
marks_ringed = 'for [s in ringed] rows_of(s) using (column("effective_batch")): \
    (column("best") == 1 ? column("time_s") : NaN) with points pt 6 ps 3 lw 2 lc rgb series_color(s) notitle, \
    keyentry with points pt 6 ps 3 lw 2 lc rgb mark_grey title "least time to target"'
and_marks(list, marks) = words(list) > 0 ? ", ".marks : ""
eval "plot ".marks_points.and_marks(predicted, marks_predicted).and_marks(refused, marks_refused). \
     and_marks(no_noise, marks_no_noise).and_marks(ringed, marks_ringed)
load here.'/svg.gp'
