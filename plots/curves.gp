# curves.gp: the loss curves of --train-steps (NAME.curves.csv): loss
# against optimizer step, one line per split and reduction, for one model.
# The correct splits (sum, solid) lie on one curve up to rounding;
# mean-of-means (dashed) drifts off it and no-scale (dotted) diverges.
# Not a chart of the main CSV, so scripts/plots.sh leaves it alone.
#
#   gnuplot -e "curves='results/run.curves.csv'" plots/curves.gp
#       (model='tiny' to pick one; out='NAME' writes NAME.png, default curves.png)
if (!exists("curves")) { print "curves.gp: give curves='FILE.curves.csv'"; exit }
if (!exists("out")) { out = "curves" }
# Names reach the shell inside single quotes below: one with a quote in it
# is refused, never run.
if (strstrt(curves, "'") > 0) { print "curves.gp: a file name with a quote in it is refused"; exit }
# The quoted model spec (it has commas) made plain, "#" lines dropped.
clean = sprintf("awk '!/^#/ { while (match($0, /\"[^\"]*\"/)) { q = substr($0, RSTART + 1, RLENGTH - 2); gsub(/,/, \";\", q); $0 = substr($0, 1, RSTART - 1) q substr($0, RSTART + RLENGTH) } print }' '%s' 2>/dev/null", curves)
if (!exists("model")) { model = system(clean." | awk -F, 'NR == 2 { print $2 }'") }
if (strstrt(model, "'") > 0) { print "curves.gp: a model name with a quote in it is refused"; exit }
model_plain = system(sprintf("echo '%s' | tr ',' ';'", model))
# "reduction:micro" for every forward curve of the model, correct first.
lines = system(clean.sprintf(" | awk -F, '$2 == \"%s\" && $11 == \"forward\" && $12 == 0 { print ($5 == \"sum\" ? 0 : $5 == \"mean-of-means\" ? 1 : 2), $5 \":\" $7 }' | sort -n -k1,1 -k2 | awk '{ print $2 }' | tr '\\n' ' '", model_plain))
top = system(clean.sprintf(" | awk -F, '$2 == \"%s\" && $12 == 0 { print 2 * $13; exit }'", model_plain))
steps = system(clean." | awk -F, 'NR > 1 && $12 > n { n = $12 } END { print n + 1 }'")

set terminal pngcairo size 1100,650 font ",10"
set output out.".png"
set datafile separator comma
set title "Loss against optimizer step, model ".model." (".steps." steps from the same starting weights)\n".\
          "sum: solid; mean-of-means: dashed; no-scale: dotted; a line that leaves the chart diverged"
set xlabel "optimizer step"
set ylabel "window loss before the step (mean over valid items)"
set yrange [0:top + 0]
set key outside right top
red(s) = s[1:strstrt(s, ":") - 1]
mb(s) = s[strstrt(s, ":") + 1:]
dash(s) = red(s) eq "sum" ? 1 : red(s) eq "mean-of-means" ? 2 : 3
micros = system(clean.sprintf(" | awk -F, '$2 == \"%s\" && $12 == 0 { print $7 }' | sort -nu | tr '\\n' ' '", model_plain))
colour(s) = word("#1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #7f7f7f", \
                 words(micros[1:strstrt(" ".micros, " ".mb(s)." ")]) + 0)
filter(s) = clean.sprintf(" | awk -F, '$2 == \"%s\" && $5 == \"%s\" && $7 == %s && $11 == \"forward\"'", model_plain, red(s), mb(s))
plot for [s in lines] "< ".filter(s) using 12:13 with lines dt dash(s) lw 2 lc rgb colour(s) \
     title sprintf("%s, micro %s", red(s), mb(s))
