# loss_to_target.gp: the curves behind "Is E right?": the loss against the
# examples seen (log x), one line per effective batch E at the best
# learning rate of its grid (the curve the time-to-target table keeps),
# smoothed as steps to target reads it, the raw loss faint beneath; the
# target loss dashed, and where each E crosses it marked. A larger E takes
# fewer steps to the target and, past the critical batch, more examples:
# the crossings' spread along x is what a larger E costs in data. The
# first series (a model's curves of one mode and device count) only; the
# report's table covers them all.
#
# The numbers are accubench's own: scripts/plots.sh asks `accubench plan
# --time-to-target CSV --curve-table` for them (in.goodput_curves.csv
# beside in.csv). By hand:
#   accubench plan --time-to-target results/run.csv --curve-table >results/run.goodput_curves.csv
#   gnuplot -e "csv='results/run.csv'" plots/loss_to_target.gp
chart = "loss_to_target"
load system(sprintf("dirname '%s'", ARG0)).'/common.gp'
unset label 90  # the main CSV's configs that did not run: not this chart's business

table = ((csv[strlen(csv)-3:] eq ".csv") ? csv[1:strlen(csv)-4] : csv).".goodput_curves.csv"
have = system(sprintf("test -r %s && grep -q '^series,model,effective_batch,lr,step,examples' %s && echo yes", q(table), q(table)))
# the first series' effective batches, in the table's order (E ascending)
es = (have eq "yes") ? system("awk -F, 'NR > 1 && $1 == 1 && !seen[$3]++ { printf \"%s \", $3 }' ".q(table)) : ""
if (words(es) == 0) {
    curves = ((csv[strlen(csv)-3:] eq ".csv") ? csv[1:strlen(csv)-4] : csv).".curves.csv"
    missing_why = (count("model", "status=ok") == 0) ? no_rows_why : \
                  (have eq "yes") ? "the curves file holds no curve of the correct reduction" : \
                  system(sprintf("test -r %s && echo yes", q(curves))) eq "yes" ? \
                  "the curve table was not made (accubench plan --time-to-target --curve-table failed or was not found)" : \
                  "no loss curves beside this CSV (accubench run --effective LIST --train-steps N writes NAME.curves.csv)"
    @nothing_to_draw
}
n = words(es)
if (n > 7) { n = 7 }
nseries = int(system("awk -F, 'NR > 1 { if ($1 > s) s = $1 } END { print s + 0 }' ".q(table)))
name = system("awk -F, 'NR > 1 && $1 == 1 { print $2; exit }' ".q(table))
target = system("awk -F, 'NR > 1 && $1 == 1 { print $9; exit }' ".q(table)) + 0
# E's rows, the header first for the column names
rows_of(e) = "< awk -F, -v e=".e." 'NR == 1 || ($1 == 1 && $3 == e)' ".q(table)
lr_of(e) = system("awk -F, -v e=".e." 'NR > 1 && $1 == 1 && $3 == e { print $4; exit }' ".q(table))
steps_of(e) = system("awk -F, -v e=".e." 'NR > 1 && $1 == 1 && $3 == e { print $10; exit }' ".q(table))
# where E crosses the target: steps to target x E examples (none: not reached)
cross_x(e) = steps_of(e) eq "" ? NaN : (steps_of(e) + 0) * (e + 0)
e_label(e) = sprintf("E = %s%s%s", e, lr_of(e) eq "" ? "" : ", lr ".lr_of(e), \
                     steps_of(e) eq "" ? ": target not reached" : sprintf(": %.1f steps", steps_of(e) + 0))

# a colour at a third of its strength (gnuplot's #AARRGGBB: AA transparency)
faint(c) = "#AA".c[2:]

# the examples' axis starts at the first logged step after the start (0
# has no place on a log axis; the starting loss is every E's alike)
set logscale x 2
set format x "%g"
set xlabel "examples seen (optimizer steps x E)"
set ylabel "training loss (smoothed; raw faint)"
set title sprintf("The curves behind time to target: %s, each E at its best rate\n%s, %s; dashed: the target loss %.4g%s", \
                  model_label(name), device, dtype, target, \
                  nseries > 1 ? sprintf(" (series 1 of %d drawn)", nseries) : "")
set key below left Left reverse maxrows 4
set bmargin 8
set arrow 1 from graph 0, first target to graph 1, first target nohead dt 2 lw 1.5 lc rgb "#555555"
plot for [i=1:n] rows_of(word(es, i)) using (column("step") > 0 ? column("examples") : NaN):(column("loss")) \
         with lines lw 1 lc rgb faint(model_color(i)) notitle, \
     for [i=1:n] rows_of(word(es, i)) using (column("step") > 0 ? column("examples") : NaN):(column("loss_smoothed")) \
         with lines lw 2.5 lc rgb model_color(i) title e_label(word(es, i)), \
     for [i=1:n] "+" using (cross_x(word(es, i))):(target) every ::0::0 \
         with points pt 7 ps 1.6 lc rgb model_color(i) notitle
load here.'/svg.gp'
