# curves.gp: the loss curves of --train-steps, from NAME.curves.csv beside
# the run's NAME.csv: loss against optimizer step, one line per split and
# reduction, a panel per series of each model (one effective batch, device
# count, sync, recompute, shard value and learning rate), every series the
# file holds, in its order (past max_panels, the rest counted under the
# chart). The correct splits (solid) lie on one curve up to rounding; each
# known-wrong reduction (dashed, dotted, ...: the file's "# curves" lines
# name them, gap_NAME=) drifts off it or diverges. No curves file: not
# drawn, and the reason says why.
#
#   gnuplot -e "csv='results/run.csv'" plots/curves.gp   (reads results/run.curves.csv)
chart = "curves"
load system(sprintf("dirname '%s'", ARG0)).'/common.gp'
@main_rows_notes_off  # the main CSV's configs not run or run again: not this chart's business

curves = ((csv[strlen(csv)-3:] eq ".csv") ? csv[1:strlen(csv)-4] : csv).".curves.csv"
have = system(sprintf("test -r %s && grep -q '^backend,model' %s && echo yes", q(curves), q(curves)))
# The file's rows with the "#" lines dropped and each quoted model spec (it
# has commas) made plain: its commas become ";". Columns: backend, model,
# dtype, mode, reduction, effective_batch, micro_batch, accum_steps,
# devices, sync, order, step, loss, recompute, shard, arm, lr,
# grad_noise_scale, grad_noise_scale_err, grad_dtype (from recompute on,
# empty in a file from before them). A config's second arm (arm 2, an A/A
# check) is dropped: its curve is its first arm's again (a file from before
# the run stopped training it), and drawn it is one line twice. A config
# run again (--append) has its curve twice, each run's rows ended by its
# "# curves ... steps=N" lines: the file is read twice, the first time for
# each curve's first run, and only that run's rows are kept, as the readers
# do (harness/results/curves_read.c).
clean = "awk 'FNR == 1 { pass++; run = 0; rows = 0 } /^# curves .* steps=[0-9]+:/ { run += rows > 0; rows = 0; next } /^#/ { next } { while (match($0, /\"[^\"]*\"/)) { q = substr($0, RSTART + 1, RLENGTH - 2); gsub(/,/, \";\", q); $0 = substr($0, 1, RSTART - 1) q substr($0, RSTART + RLENGTH) } n = split($0, f, \",\"); if (f[1] == \"backend\") { if (pass == 2) print; next } if (f[16] == 2) next; rows++; k = \"\"; for (i = 1; i <= n; i++) if (i != 12 && i != 13 && i != 18 && i != 19) k = k \",\" f[i]; if (pass == 1) { if (!(k in first)) first[k] = run } else if (first[k] == run) print }' ".q(curves)." ".q(curves)." 2>/dev/null"
# A series: model, effective batch, devices, sync ("-": none), learning
# rate ("-": a file without it; --lr-grid trains each config at several
# rates), dtype, mode and each lever's cell (the CSV's `# levers:` line,
# plots/levers.awk, by the header's names in `at`; empty in a file from
# before the column), so that each line of a panel is one config.
dash_if_empty(c) = sprintf("($%d == \"\" ? \"-\" : $%d)", c, c)
series_cols = "$6 \" \" $9 \" \" ".dash_if_empty(10)." \" \" ".dash_if_empty(17)." \" \" $3 \" \" $4"
key = "$2 \" \" ".series_cols." levers_key(at)"
# awk over the clean rows (header excluded), each row's panel in pn (its
# series' place in the file, from 1), with -v p=PANEL: a panel is named by
# its number, so no model name passes through gnuplot's words.
# (-v wr=: the known-wrong reductions, below.) levers.awk's functions come
# first in each program: awk takes a program's text or its files, not both.
wrong = ""
lever_lib = system("cat ".q(here.'/levers.awk'))."\n"
numbered = lever_lib."NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; levers_read(levers) } ". \
           "NR > 1 { k = ".key."; if (!(k in id)) id[k] = ++np; pn = id[k] } "
on_rows_then(prog, p, post) = system(clean." | awk -F, -v p=".sprintf("%d", p)." -v wr=".q(wrong)." -v levers=".q(lever_line)." ".q(numbered."NR > 1 && ".prog).post)
on_rows(prog, p) = on_rows_then(prog, p, "")
panels = (have eq "yes") ? int(on_rows("0 { } END { print np + 0 }", 0)) : 0
# The known-wrong reductions, in the order the file's summary lines name
# them (" gap_NAME=", but the correct splits' and the rounding gap): each
# one's dash is its place; the reductions not among them are correct.
wrong = (have eq "yes") ? system("awk '/^# curves / { for (i = 1; i <= NF; i++) if ($i ~ /^gap_/) { k = substr($i, 5, index($i, \"=\") - 5); if (k != \"correct_splits\" && k != \"rounding\" && !(k in s)) { s[k] = 1; printf \"%s \", k } } }' ".q(curves)) : ""
is_wrong = "index(\" \" wr \" \", \" \" $5 \" \") > 0"
right = (have eq "yes") ? on_rows("!(".is_wrong.") && !seen[$5]++ { printf \"%s \", $5 }", 0) : ""
# Each panel is a few passes over the file: a file of many series draws
# the first max_panels and counts the rest under the chart.
max_panels = 24
n = panels < max_panels ? panels : max_panels

if (n == 0) {
    missing_why = (count("model", "status=ok") == 0) ? no_rows_why : \
                  (have eq "yes") ? "the curves file beside this CSV has no rows" : \
                  "no loss curves beside this CSV (accubench run --train-steps N writes NAME.curves.csv)"
    @nothing_to_draw
}

# Per panel: its series, the forward curves of each reduction and
# micro-batch ("reduction:micro", the correct ones first), the micro-batches
# (a colour each) and the y range (twice the starting loss: a line that
# leaves it diverged).
in_panel = "pn == p"
series_of(p) = on_rows(in_panel." { print ".series_cols."; exit }", p)
# The panel's levers as its title says them: ", gradient in bf16|, recompute
# none, shard optimizer", those of the series' key (keyed) after the bar.
levers_of(p) = on_rows(in_panel." { print levers_said(at, \", \", \"unkeyed\") \"|\" levers_said(at, \", \", \"keyed\"); exit }", p)
model_of(p) = on_rows(in_panel." { print $2; exit }", p)
lines_of(p) = on_rows_then(in_panel." && $11 == \"forward\" && $12 == 0 { r = 0; n = split(wr, w, \" \"); for (i = 1; i <= n; i++) if (w[i] == $5) r = i; print r, $7, $5 \":\" $7 }", p, \
                           " | sort -k1,1n -k2,2n | awk '{ print $3 }' | tr '\\n' ' '")
micros_of(p) = on_rows_then(in_panel." && $12 == 0 { print $7 }", p, " | sort -nu | tr '\\n' ' '")
top_of(p) = on_rows(in_panel." && $12 == 0 && !(".is_wrong.") { print 2 * $13; exit }", p)
steps_of(p) = on_rows(in_panel." { if ($12 + 1 > s) s = $12 + 1 } END { print s + 0 }", p)
red(s) = s[1:strstrt(s, ":") - 1]
mb(s) = s[strstrt(s, ":") + 1:]
dash(s) = 1 + index_in(wrong, red(s))
dash_names = "dashed dotted dash-dotted dash-dot-dotted"
dash_name(i) = i <= words(dash_names) ? word(dash_names, i) : sprintf("dash type %d", i + 1)
styles = ""
do for [r in right] { styles = styles.(strlen(styles) ? "; " : "").r.": solid" }
# A wrong reduction's dash is its place among those the summary lines name
# (those whose gap the file measured), and the title names only the ones
# drawn: a file from before gaps not measured were left off lists every
# reduction as a gap of nan, and its title promised lines it had not.
drawn = (have eq "yes") ? on_rows("!seen[$5]++ { printf \"%s \", $5 }", 0) : ""
do for [i=1:words(wrong)] {
    if (index_in(drawn, word(wrong, i)) > 0) {
        styles = styles.(strlen(styles) ? "; " : "").word(wrong, i).": ".dash_name(i)
    }
}
colour(s) = word("#1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #7f7f7f", \
                 words(micros[1:strstrt(" ".micros." ", " ".mb(s)." ")]) % 8 + 1)
# A line's rows: the header (for columnheaders) and the curve.
curve(p, s) = "< ".clean." | awk -F, -v p=".sprintf("%d", p)." -v r=".q(red(s))." -v u=".q(mb(s))." ". \
              "-v levers=".q(lever_line)." ".q(numbered."NR == 1 || (".in_panel." && $5 == r && $7 == u && $11 == \"forward\")")

# One column up to three panels; past that two, each panel shorter.
cols = n > 3 ? 2 : 1
rows_of_panels = (n + cols - 1) / cols
width = cols == 1 ? 1100 : 1500
height = 120 + (cols == 1 ? 400 : 330) * rows_of_panels
left_out = panels - n
do for [ext in "png svg"] {
    if (ext eq "png") {
        set terminal pngcairo noenhanced size width,height font "sans,11"
    } else {
        set terminal svg noenhanced size width,height dynamic font "sans,11"
    }
    set output out.".".chart.".".ext
    if (left_out > 0) {
        set label 97 sprintf("%d more series not drawn (the first %d in the curves file are; the report lists every series' gaps)", \
                             left_out, n) at screen 0.99, 0.01 right font ",10" tc rgb "#a00000"
    }
    set multiplot layout rows_of_panels,cols title "Loss against optimizer step from the same starting weights, on learnable data\n". \
        styles."; a line that leaves the chart diverged"
    do for [i=1:n] {
        sr = series_of(i)
        lv = levers_of(i)
        lines = lines_of(i)
        micros = micros_of(i)
        top = top_of(i) + 0
        # the model on a line of its own: a custom shape's name is long, and
        # on one line with the rest the title ran off the chart's left edge
        set title sprintf("model %s\n%s, %s%s, effective batch %s, %s device(s)%s%s, %s steps", \
                          model_of(i), word(sr, 5), word(sr, 6), lv[1:strstrt(lv, "|") - 1], \
                          word(sr, 1), word(sr, 2), word(sr, 3) ne "-" ? ", sync ".word(sr, 3) : "", \
                          lv[strstrt(lv, "|") + 1:], steps_of(i)).(word(sr, 4) ne "-" ? ", lr ".word(sr, 4) : "")
        set xlabel "optimizer step"
        set ylabel "window loss before the step"
        set yrange [0:(top > 0 ? top : 1)]
        set xrange [0:*]
        plot for [s in lines] curve(i, s) using (column("step")):(column("loss")) \
             with lines dt dash(s) lw 2 lc rgb colour(s) title sprintf("%s, micro %s", red(s), mb(s))
    }
    unset multiplot
    unset label 97
    unset output
}
