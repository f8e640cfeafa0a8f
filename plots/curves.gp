# curves.gp: the loss curves of --train-steps, from NAME.curves.csv beside
# the run's NAME.csv: loss against optimizer step, one line per split and
# reduction, a panel per model (its first series: one effective batch,
# device count and sync). The correct splits (solid) lie on one curve up to
# rounding; each known-wrong reduction (dashed, dotted, ...: the file's
# "# curves" lines name them, gap_NAME=) drifts off it or diverges. A model's panel shows its first series (one effective
# batch, device count, sync, recompute and shard value). No curves file: not drawn, and the reason says why.
#
#   gnuplot -e "csv='results/run.csv'" plots/curves.gp   (reads results/run.curves.csv)
chart = "curves"
load system(sprintf("dirname '%s'", ARG0)).'/common.gp'
unset label 90  # the main CSV's configs that did not run: not this chart's business

curves = ((csv[strlen(csv)-3:] eq ".csv") ? csv[1:strlen(csv)-4] : csv).".curves.csv"
have = system(sprintf("test -r %s && grep -q '^backend,model' %s && echo yes", q(curves), q(curves)))
# The file's rows with the "#" lines dropped and each quoted model spec (it
# has commas) made plain: its commas become ";". Columns: backend, model,
# dtype, mode, reduction, effective_batch, micro_batch, accum_steps,
# devices, sync, order, step, loss, recompute, shard, arm (the last three
# empty in a file from before them). A config's second arm (arm 2, an A/A
# check) is dropped: its curve is its first arm's again (a file from before
# the run stopped training it), and drawn it is one line twice.
clean = "awk '!/^#/ { while (match($0, /\"[^\"]*\"/)) { q = substr($0, RSTART + 1, RLENGTH - 2); gsub(/,/, \";\", q); $0 = substr($0, 1, RSTART - 1) q substr($0, RSTART + RLENGTH) } split($0, f, \",\"); if (f[16] == 2) next; print }' ".q(curves)." 2>/dev/null"
# awk over the clean rows (header excluded), with -v m=MODEL.
# (-v ser=: the model's series as series(m) gives it, set in sr before use.)
# (-v wr=: the known-wrong reductions, below.)
sr = ""
wrong = ""
on_rows_then(prog, m, post) = system(clean." | awk -F, -v m=".q(m)." -v ser=".q(sr)." -v wr=".q(wrong)." ".q("NR > 1 && ".prog).post)
on_rows(prog, m) = on_rows_then(prog, m, "")
models = (have eq "yes") ? on_rows("!seen[$2]++ { print $2 }", "") : ""
# The known-wrong reductions, in the order the file's summary lines name
# them (" gap_NAME=", but the correct splits' and the rounding gap): each
# one's dash is its place; the reductions not among them are correct.
wrong = (have eq "yes") ? system("awk '/^# curves / { for (i = 1; i <= NF; i++) if ($i ~ /^gap_/) { k = substr($i, 5, index($i, \"=\") - 5); if (k != \"correct_splits\" && k != \"rounding\" && !(k in s)) { s[k] = 1; printf \"%s \", k } } }' ".q(curves)) : ""
is_wrong = "index(\" \" wr \" \", \" \" $5 \" \") > 0"
right = (have eq "yes") ? on_rows("!(".is_wrong.") && !seen[$5]++ { printf \"%s \", $5 }", "") : ""
if (words(models) > 4) { models = word(models, 1)." ".word(models, 2)." ".word(models, 3)." ".word(models, 4) }
n = words(models)

if (n == 0) {
    missing_why = (count("model", "status=ok") == 0) ? no_rows_why : \
                  (have eq "yes") ? "the curves file beside this CSV has no rows" : \
                  "no loss curves beside this CSV (accubench run --train-steps N writes NAME.curves.csv)"
    @nothing_to_draw
}

# Per model: its first series, the forward curves of each reduction and
# micro-batch ("reduction:micro", the correct ones first), the micro-batches (a colour
# each) and the y range (twice the starting loss: a line that leaves it
# diverged).
# A series: effective batch, devices, sync ("-": none), recompute, shard
# and learning rate ("-": a file without them; --lr-grid trains each config
# at several rates), so that each line of a panel is one config.
key = "$6 \" \" $9 \" \" ($10 == \"\" ? \"-\" : $10) \" \" ($14 == \"\" ? \"-\" : $14) \" \" ($15 == \"\" ? \"-\" : $15) \" \" ($17 == \"\" ? \"-\" : $17)"
series(m) = on_rows("$2 == m { print ".key."; exit }", m)
# How many series the model has: a panel draws its first, and says how
# many it leaves out (a sweep over E, or an --lr-grid, has one per E and
# rate; the report's tables cover them all).
nseries(m) = int(on_rows("$2 == m && !((".key.") in s) { s[".key."]; n++ } END { print n + 0 }", m))
in_series(m) = "$2 == m && ".key." == ser"
lines_of(m) = on_rows_then(in_series(m)." && $11 == \"forward\" && $12 == 0 { r = 0; n = split(wr, w, \" \"); for (i = 1; i <= n; i++) if (w[i] == $5) r = i; print r, $7, $5 \":\" $7 }", m, \
                           " | sort -k1,1n -k2,2n | awk '{ print $3 }' | tr '\\n' ' '")
micros_of(m) = on_rows_then(in_series(m)." && $12 == 0 { print $7 }", m, " | sort -nu | tr '\\n' ' '")
top_of(m) = on_rows(in_series(m)." && $12 == 0 && !(".is_wrong.") { print 2 * $13; exit }", m)
steps_of(m) = on_rows(in_series(m)." { if ($12 + 1 > s) s = $12 + 1 } END { print s + 0 }", m)
red(s) = s[1:strstrt(s, ":") - 1]
mb(s) = s[strstrt(s, ":") + 1:]
dash(s) = 1 + index_in(wrong, red(s))
dash_names = "dashed dotted dash-dotted dash-dot-dotted"
dash_name(i) = i <= words(dash_names) ? word(dash_names, i) : sprintf("dash type %d", i + 1)
styles = ""
do for [r in right] { styles = styles.(strlen(styles) ? "; " : "").r.": solid" }
# A wrong reduction's dash is its place among those the summary lines name
# (the same in every file of a sweep), but the title names only the ones
# drawn: a sweep of the correct reduction alone lists every reduction as a
# gap of nan, and its title promised dashed and dotted lines it had not.
drawn = (have eq "yes") ? on_rows("!seen[$5]++ { printf \"%s \", $5 }", "") : ""
do for [i=1:words(wrong)] {
    if (index_in(drawn, word(wrong, i)) > 0) {
        styles = styles.(strlen(styles) ? "; " : "").word(wrong, i).": ".dash_name(i)
    }
}
colour(s) = word("#1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #7f7f7f", \
                 words(micros[1:strstrt(" ".micros." ", " ".mb(s)." ")]) % 8 + 1)
# A line's rows: the header (for columnheaders) and the curve.
curve(m, s) = "< ".clean." | awk -F, -v m=".q(m)." -v ser=".q(sr)." -v r=".q(red(s))." -v u=".q(mb(s))." ". \
              q("NR == 1 || (".in_series(m)." && $5 == r && $7 == u && $11 == \"forward\")")

height = 120 + 400 * n
do for [ext in "png svg"] {
    if (ext eq "png") {
        set terminal pngcairo noenhanced size 1100,height font "sans,11"
    } else {
        set terminal svg noenhanced size 1100,height dynamic font "sans,11"
    }
    set output out.".".chart.".".ext
    set multiplot layout n,1 title "Loss against optimizer step from the same starting weights, on learnable data\n". \
        styles."; a line that leaves the chart diverged"
    do for [i=1:n] {
        model = word(models, i)
        sr = series(model)
        lines = lines_of(model)
        micros = micros_of(model)
        top = top_of(model) + 0
        # the model on a line of its own: a custom shape's name is long, and
        # on one line with the rest the title ran off the chart's left edge
        set title sprintf("model %s\neffective batch %s, %s device(s)%s%s%s, %s steps", model, \
                          word(sr, 1), word(sr, 2), word(sr, 3) ne "-" ? ", sync ".word(sr, 3) : "", \
                          word(sr, 4) ne "-" ? ", recompute ".word(sr, 4) : "", \
                          word(sr, 5) ne "-" ? ", shard ".word(sr, 5) : "", \
                          steps_of(model)).(word(sr, 6) ne "-" ? ", lr ".word(sr, 6) : ""). \
                  (nseries(model) > 1 ? sprintf(" (%d more series not drawn)", nseries(model) - 1) : "")
        set xlabel "optimizer step"
        set ylabel "window loss before the step"
        set yrange [0:(top > 0 ? top : 1)]
        set xrange [0:*]
        plot for [s in lines] curve(model, s) using (column("step")):(column("loss")) \
             with lines dt dash(s) lw 2 lc rgb colour(s) title sprintf("%s, micro %s", red(s), mb(s))
    }
    unset multiplot
    unset output
}
