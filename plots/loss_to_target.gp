# loss_to_target.gp: the curves behind "Is E right?": the loss against the
# examples seen (log x), one line per effective batch E at the best
# learning rate of its grid (the curve the time-to-target table keeps),
# smoothed as steps to target reads it, the raw loss faint beneath; the
# target loss dashed, and where each E crosses it marked. A larger E takes
# fewer steps to the target and, past the critical batch, more examples:
# the crossings' spread along x is what a larger E costs in data. A panel
# per series (a model's curves of one mode and device count), each with
# its own target, up to max_panels of them; past that the title says how
# many were drawn (the report's table covers them all).
#
# The numbers are accubench's own: scripts/plots.sh asks `accubench plan
# --time-to-target CSV --curve-table` for them (in.goodput_curves.csv
# beside in.csv). By hand:
#   accubench plan --time-to-target results/run.csv --curve-table >results/run.goodput_curves.csv
#   gnuplot -e "csv='results/run.csv'" plots/loss_to_target.gp
chart = "loss_to_target"
load system(sprintf("dirname '%s'", ARG0)).'/common.gp'
@main_rows_notes_off  # the main CSV's configs not run or run again: not this chart's business

table = ((csv[strlen(csv)-3:] eq ".csv") ? csv[1:strlen(csv)-4] : csv).".goodput_curves.csv"
have = system(sprintf("test -r %s && grep -q '^series,model,effective_batch,lr,step,examples' %s && echo yes", q(table), q(table)))
# The table's columns: 1 series, 2 model, 3 effective_batch, 4 lr, 9
# target_loss, 10 steps_to_target, then the series' key: 11 backend, 12
# dtype, 13 mode, 14 devices, 15 sync, 16 recompute, 17 shard.
on_table(prog) = system("awk -F, ".q(prog)." ".q(table))
nseries = (have eq "yes") ? int(on_table("NR > 1 { if ($1 > s) s = $1 } END { print s + 0 }")) : 0
# a series' effective batches, in the table's order (E ascending)
es_of(s) = on_table(sprintf("NR > 1 && $1 == %d && !seen[$3]++ { printf \"%%s \", $3 }", s))
if (nseries == 0 || words(es_of(1)) == 0) {
    curves = ((csv[strlen(csv)-3:] eq ".csv") ? csv[1:strlen(csv)-4] : csv).".curves.csv"
    missing_why = (count("model", "status=ok") == 0) ? no_rows_why : \
                  (have eq "yes") ? "the curves file holds no curve of the correct reduction" : \
                  system(sprintf("test -r %s && echo yes", q(curves))) eq "yes" ? \
                  "the curve table was not made (accubench plan --time-to-target --curve-table failed or was not found)" : \
                  "no loss curves beside this CSV (accubench run --effective LIST --train-steps N writes NAME.curves.csv)"
    @nothing_to_draw
}
# Each panel is a few passes over the table per E: a file of many series
# draws the first max_panels, and its title says so (a note under the
# chart would sit on the last panel's key).
max_panels = 12
panels = nseries < max_panels ? nseries : max_panels
left_out = nseries - panels
# Each E keeps its colour in every panel: its place among the E of all the
# panels drawn (one series: its own E, in order, as before).
all_es = system("awk -F, ".q(sprintf("NR > 1 && $1 <= %d { print $3 }", panels))." ".q(table)." | sort -nu | tr '\\n' ' '")
# Series s's first row's column c (the series' own: model, target, key).
of_series(s, c) = on_table(sprintf("NR > 1 && $1 == %d { print $%d; exit }", s, c))
# E's rows of series s, the header first for the column names
rows_of(s, e) = sprintf("< awk -F, -v s=%d -v e=%s 'NR == 1 || ($1 == s && $3 == e)' ", s, q(e)).q(table)
of_e(s, e, c) = system(sprintf("awk -F, -v s=%d -v e=%s 'NR > 1 && $1 == s && $3 == e { print $%d; exit }' ", s, q(e), c).q(table))
lr_of(s, e) = of_e(s, e, 4)
steps_of(s, e) = of_e(s, e, 10)
# where E crosses the target: steps to target x E examples (none: not reached)
cross_x(s, e) = steps_of(s, e) eq "" ? NaN : (steps_of(s, e) + 0) * (e + 0)
e_label(s, e) = sprintf("E = %s%s%s", e, lr_of(s, e) eq "" ? "" : ", lr ".lr_of(s, e), \
                        steps_of(s, e) eq "" ? ": target not reached" : sprintf(": %.1f steps", steps_of(s, e) + 0))
e_color(e) = model_color(index_in(all_es, e))

# a colour at a third of its strength (gnuplot's #AARRGGBB: AA transparency)
faint(c) = "#AA".c[2:]

# the examples' axis starts at the first logged step after the start (0
# has no place on a log axis; the starting loss is every E's alike)
set logscale x 2
set format x "%g"
set xlabel "examples seen (optimizer steps x E)"
set ylabel "training loss (smoothed; raw faint)"
set key below left Left reverse maxrows 4

# One series: one chart, as it always was. Several: a panel each, one
# column up to three panels, two past that, the shared words above them.
cols = panels > 3 ? 2 : 1
rows_of_panels = (panels + cols - 1) / cols
width = cols == 1 ? 1100 : 1500
height = panels == 1 ? 650 : 120 + 480 * rows_of_panels
heading = sprintf("The curves behind time to target: each E at its best rate\n%s; dashed: each series' target loss%s", \
                  device, left_out > 0 ? sprintf(" (the first %d of %d series drawn)", panels, nseries) : "")
do for [ext in "png svg"] {
    if (ext eq "png") {
        set terminal pngcairo noenhanced size width,height font "sans,11"
    } else {
        set terminal svg noenhanced size width,height dynamic font "sans,11"
    }
    set output out.".".chart.".".ext
    if (panels > 1) {
        set multiplot layout rows_of_panels,cols title heading
    }
    do for [p=1:panels] {
        es = es_of(p)
        n = words(es) < 7 ? words(es) : 7
        target = of_series(p, 9) + 0
        if (panels == 1) {
            set title sprintf("The curves behind time to target: %s, each E at its best rate\n%s, %s; dashed: the target loss %.4g", \
                              model_label(of_series(p, 2)), device, dtypes_all, target)
            set bmargin 8
        } else {
            set title sprintf("%s: %s; target loss %.4g", model_label(of_series(p, 2)), series_text(table, p), target)
            set bmargin 7
        }
        set arrow 1 from graph 0, first target to graph 1, first target nohead dt 2 lw 1.5 lc rgb "#555555"
        plot for [i=1:n] rows_of(p, word(es, i)) using (column("step") > 0 ? column("examples") : NaN):(column("loss")) \
                 with lines lw 1 lc rgb faint(e_color(word(es, i))) notitle, \
             for [i=1:n] rows_of(p, word(es, i)) using (column("step") > 0 ? column("examples") : NaN):(column("loss_smoothed")) \
                 with lines lw 2.5 lc rgb e_color(word(es, i)) title e_label(p, word(es, i)), \
             for [i=1:n] "+" using (cross_x(p, word(es, i))):(target) every ::0::0 \
                 with points pt 7 ps 1.6 lc rgb e_color(word(es, i)) notitle
    }
    if (panels > 1) {
        unset multiplot
    }
    unset output
}
