# common.gp: what every chart script shares. A chart script sets `chart` (its
# name) and loads this file, which reads the CSV's metadata, chooses the rows
# to draw and opens the PNG; after its plot it loads svg.gp for the SVG twin.
#
# Set on the command line (gnuplot -e "csv='run.csv'" plots/NAME.gp):
#   csv   the CSV `accubench run` wrote (required)
#   out   output prefix (default: csv without .csv); writes OUT.NAME.png/.svg
#   E     the effective batch to draw (default: the one with the most rows)
#   mode  the execution mode (default: the first the run listed, from the CSV's
#         `# modes:` line, where it has rows; else the commonest)
# scripts/plots.sh sets csv and out to fixed names in a private folder, so
# no character of a user's path is ever gnuplot code. What reaches a shell
# from here (the script's folder, the CSV's name, values read from the CSV
# such as a model name) goes through q(), which quotes it whole.

if (!exists("csv")) { print "plots: set csv, e.g. gnuplot -e \"csv='results/run.csv'\" ".ARG0; exit status 2 }
if (!exists("out")) { out = (csv[strlen(csv)-3:] eq ".csv") ? csv[1:strlen(csv)-4] : csv }

# q(s): s as one shell word, every character of it data: in single quotes,
# with each ' written as '\'' (close, an escaped quote, reopen).
sq(s) = (strstrt(s, "'") == 0) ? s : \
        s[1:strstrt(s, "'") - 1]."'\\''".sq(s[strstrt(s, "'") + 1:])
q(s) = "'".sq(s)."'"
# The scripts' own folder, so that pick.awk is found from any working folder.
here = system("dirname ".q(ARG0))
pick(w) = sprintf("awk -f %s -f %s -f %s -v want=%s ", q(here.'/split.awk'), q(here.'/levers.awk'), \
                  q(here.'/pick.awk'), w)
meta(k) = system(pick("meta")."-v key=".q(k)." ".q(csv))
# The levers a label names and their defaults, as the run's table has them
# (plots/levers.awk reads it; "" from a file before the line: the levers
# it ran with).
lever_line = meta("levers")
distinct(c, w) = system(pick("distinct")."-v col=".c." -v where=".q(w)." ".q(csv))
first_distinct(c, w, n) = system(pick("distinct")."-v max=".n." -v col=".c." -v where=".q(w)." ".q(csv))
ndistinct(c, w) = int(system(pick("ndistinct")."-v col=".c." -v where=".q(w)." ".q(csv)))
most(c, per, w) = system(pick("most")."-v col=".c." -v per=".per." -v where=".q(w)." ".q(csv))
count(c, w) = int(system(pick("count")."-v col=".c." -v where=".q(w)." ".q(csv)))
common(c, w) = system(pick("common")."-v col=".c." -v where=".q(w)." ".q(csv))
range(cs, w) = system(pick("range")."-v cols=".q(cs)." -v where=".q(w)." ".q(csv))
notrun(w) = system(pick("notrun")."-v where=".q(w)." ".q(csv))
# A data source for plot: the header and the rows matching w.
rows(w) = "< ".pick("rows")."-v where=".q(w)." ".q(csv)

if (system(sprintf("test -r %s && echo yes", q(csv))) ne "yes") { print "plots: cannot read ".csv; exit status 2 }

# Which rows a chart shows: one effective batch, one mode, one reduction
# (a run sweeps the split; the other axes are compared by the modes chart).
if (!exists("E")) {
    E = common("effective_batch", "status=ok")
    if (strlen(E) == 0) { E = "0" }  # no row ran: every chart says so below
}
E = sprintf("%d", E + 0)  # given as a number or a string
# "async (what it does); sync (...)": its first name, as the run listed it
first_listed(s) = (strlen(word(s, 1)) > 1 && word(s, 1)[strlen(word(s, 1)):] eq ";") ? \
                  word(s, 1)[1:strlen(word(s, 1)) - 1] : word(s, 1)
if (!exists("mode")) {
    mode = first_listed(meta("modes"))
    if (strlen(mode) == 0 || count("mode", "status=ok;mode=".mode) == 0) { mode = common("mode", "status=ok") }
}
reduction = common("reduction", "status=ok;effective_batch=".E)
sel = "effective_batch=".E.";mode=".mode.";reduction=".reduction
# The run's own backend: rows a peer program added to the CSV are charted
# by peers.gp alone.
own_backend = meta("backend")
if (strlen(own_backend) > 0) { sel = sel.";backend=".own_backend }
# One dtype: the first that ran here (the report's reference dtype). A line
# per model through both dtypes of a --dtype fp32,bf16 run zig-zagged
# between them at every K, with two "ref" labels; dtype is a key column,
# and the report never puts two dtypes in one ratio. The title says which
# others ran (dtype_text). A file without the column reads "" and keeps
# every row.
dtype_drawn = first_distinct("dtype", "status=ok;".sel, 1)
dtype_sel = ";dtype=".dtype_drawn
sel = sel.dtype_sel
# The rows a chart draws: those that ran, and of a config timed twice (an
# A/A check, --micro 16,16) its first arm only: the second is the same
# point again, and its ratio is the A/A line of the summary and the report.
ran = "status=ok;arm!=2"
ok = ran.";".sel
# The levers beside accumulation (recompute, shard, the gradient's dtype:
# the CSV's `# levers:` line names them) in sets, one word each
# (pick.awk's lever_sets: a FILTER of their columns), and the words that
# tell a set apart from the others of w's rows.
lever_sets(w) = system(pick("lever_sets")."-v where=".q(w)." ".q(csv))
lever_title(w, k) = system(pick("lever_title")."-v where=".q(w)." -v key=".q(k)." ".q(csv))
# One set for the charts of a line per model (throughput, dispatches) and
# the data-parallel bars: the first in the CSV (the sweep's first values;
# "-", every row, in a file from before the levers). The wall-clock chart
# draws each set as a line of its own; these say which one they show.
ok_lever_sets = lever_sets(ok)
one_levers = word(ok_lever_sets." -", 1)
with_levers(w, set) = w.(set eq "-" ? "" : ";".set)
ok_one_levers = with_levers(ok, one_levers)
one_levers_note = words(ok_lever_sets) < 2 ? "" : \
    "set label 95 '".lever_title(ok, one_levers)[2:]." only (the wall-clock chart draws every value)' at screen 0.99, 0.025 right font ',9' tc rgb '#444444'"
# A chart draws at most max_series lines: each is a pass over the file (and
# a key entry), so a CSV of a thousand models costs what one of twelve
# does; the models past them are named as a count under the chart.
max_series = 12
models = first_distinct("model", ok, max_series)
models_left_out = ndistinct("model", ok) - words(models)
# A chart of a line per model says it under the chart: @models_note
models_note = models_left_out <= 0 ? "" : \
    sprintf("set label 93 '%d more models not drawn (the first %d in the CSV are; the report''s tables list them all)' at screen 0.99, 0.06 right font ',10' tc rgb '#a00000'", \
            models_left_out, max_series)
# What a chart says when it has no rows at all to draw.
no_rows_why = (count("model", "status=ok") == 0) ? "no config ran in this CSV (no row with status ok)" \
              : "no ok rows at effective batch ".E." in mode ".mode." in this CSV"

device = meta("device"); dtypes_all = meta("dtype")
other_dtypes = ""
do for [t in distinct("dtype", "status=ok;effective_batch=".E)] {
    if (t ne dtype_drawn) { other_dtypes = other_dtypes.(strlen(other_dtypes) ? ", " : "").t }
}
# the dtype a chart of `ok` rows draws, and the others the file ran
dtype = strlen(dtype_drawn) == 0 ? dtypes_all : \
        dtype_drawn.(strlen(other_dtypes) ? " (".other_dtypes." also run, not drawn here)" : "")
# A chart draws one effective batch; where the CSV holds others the title
# says so ("effective batch 64 (16, 256 also run, not drawn here)"): the report
# beside it may open with another E's verdict.
other_E = ""; n_other_E = 0
do for [e in distinct("effective_batch", "status=ok".(strlen(own_backend) > 0 ? ";backend=".own_backend : ""))] {
    if (e ne E) {
        n_other_E = n_other_E + 1
        if (n_other_E <= 4) { other_E = other_E.(strlen(other_E) ? ", " : "").e }
    }
}
if (n_other_E > 4) { other_E = other_E.sprintf(" and %d more", n_other_E - 4) }
E_text = "effective batch ".E.(strlen(other_E) ? " (".other_E." also run, not drawn here)" : "")
subtitle = (E eq "0") ? sprintf("%s, %s", device, dtype) \
           : sprintf("%s, %s, %s, %s", device, dtype, E_text, mode)
# Configs that did not run are named under the chart, never silently absent.
skipped = notrun(sel)
if (strlen(skipped) > 0) { set label 90 "not run: ".skipped at screen 0.01, 0.025 left font ",9" tc rgb "#a00000" }
# A config run again (--append) is drawn from its first row (pick.awk, as
# the report reads it); the chart says how many later rows it left out.
# Counted among the rows the charts would draw (ok: ran, first arm, this E,
# mode and reduction), where those rows are not a config's first.
repeats = int(system(pick("repeats")."-v where=".q(ok)." ".q(csv)))
if (repeats > 0) { set label 98 sprintf("%d %s of a config run again not drawn (each config's first row is)", \
                                        repeats, repeats == 1 ? "row" : "rows") \
                   at screen 0.99, 0.985 right font ",9" tc rgb "#444444" }
# A chart of another file's rows (the curves, a goodput table) drops these
# two notes about the main CSV's rows: @main_rows_notes_off
main_rows_notes_off = "unset label 90; unset label 98"

set datafile separator ','
set datafile columnheaders
set datafile missing ''
set grid lc rgb "#dddddd"
set border lc rgb "#444444"
set key outside right top box lc rgb "#cccccc" samplen 2.5
set bmargin 6
# One colour per model (the same in every chart); dash type says the metric.
model_index(m) = words((" ".models." ")[1:strstrt(" ".models." ", " ".m." ") + 1])
model_color(i) = word("#1f77b4 #d62728 #2ca02c #9467bd #ff7f0e #8c564b #17becf", (i < 1 ? 0 : i - 1) % 7 + 1)
# A custom model's name is its shape ("gpt:d=128;layers=4;..."): the key
# names it by its kind and its number among the long names of that kind,
# "gpt#1", as the console table does (harness/results/console_table.c:
# a name past its 10-character model column), and a line under the chart
# spells each one out, so a key of long names does not squeeze the plot.
# @long_names_note in a chart that shows models.
short_name_max = 16
console_model_width = 10
model_kind(m) = strstrt(m, ":") < 2 ? m : m[1:strstrt(m, ":") - 1]
long_of_kind(m, i) = strlen(word(models, i)) > console_model_width && \
                     model_kind(word(models, i)) eq model_kind(m)
# the long names of m's kind among the first i models (recursive: a few)
kind_count(m, i) = i < 1 ? 0 : kind_count(m, i - 1) + (long_of_kind(m, i) ? 1 : 0)
model_label(m) = strlen(m) <= short_name_max || strstrt(m, ":") < 2 ? m : \
                 model_kind(m)."#".kind_count(m, model_index(m))
long_names = ""
do for [m in models] {
    if (model_label(m) ne m) { long_names = long_names.(strlen(long_names) ? "; " : "").model_label(m)." = ".m }
}
long_names_note = strlen(long_names) == 0 ? "" : \
    "set bmargin 8; set label 94 long_names at screen 0.01, 0.10 left font ',9' tc rgb '#444444'"
# What sets series s of a goodput table (plan --time-to-target --table or
# --curve-table) apart from another of its model, as the loss- and
# time-to-target charts title it: "async, cpu, fp32, 2 devices" (pick.awk's
# series); "series s" from a table older than its key columns.
# A time in ms as a person reads it: three digits, never an exponent
# (2780, not 2.78e+03).
ms_text(x) = x >= 1000 ? sprintf("%.0f", x) : sprintf("%.3g", x)
series_text(table, s) = series_text_or(system(pick("series")."-v levers=".q(lever_line)." -v where=". \
                                               q(sprintf("series=%d", s + 0))." ".q(table)), s)
series_text_or(t, s) = strlen(t) > 0 ? t : sprintf("series %d", s + 0)

# Tics at 1, 2, 5 x 10^n for log-scaled milliseconds: gnuplot labels only
# whole decades, which leaves a narrow range (0.2 .. 0.9 ms) with one label.
# From 10^-6: the time-to-target chart's axis is in seconds, and a small
# model reaches its target in a tenth of a millisecond.
tics_from = -6
tics125 = ""
do for [e=tics_from:7] {
    do for [k=1:3] {
        v = word("1 2 5", k) * 10.0**e
        tics125 = tics125.(strlen(tics125) ? ", " : "").sprintf('"%g" %g', v, v)
    }
}
tics125 = "(".tics125.")"
# A log y axis fitted to the values it draws: log_y(range("step_ms_median
# ...", rows)) sets it from "LO HI". Left to itself, gnuplot widens a log
# axis to whole decades, and a 1.5x difference sat squeezed into a third of
# a 100..1000 ms chart; fitted, the data fill it, 5% of its span to spare
# each side, and the tics are as fine as the span needs to keep labels on
# it (1 1.5 2 3 4 5 7 over less than 10x, 1 2 5 up to 10^4, decades past).
tics_fine = ""; tics_decade = ""
do for [e=tics_from:7] {
    do for [k=1:7] {
        v = word("1 1.5 2 3 4 5 7", k) * 10.0**e
        tics_fine = tics_fine.(strlen(tics_fine) ? ", " : "").sprintf('"%g" %g', v, v)
    }
    tics_decade = tics_decade.(strlen(tics_decade) ? ", " : "").sprintf('"%g" %g', 10.0**e, 10.0**e)
}
tics_fine = "(".tics_fine.")"; tics_decade = "(".tics_decade.")"
# (at least 1.8x in all, so that a tic of the finest list, 1 to 1.5 the widest
# step, falls inside even where every value is one)
max2(a, b) = a > b ? a : b
log_y_pad(lo, hi) = max2(max2((hi / lo) ** 0.05, sqrt(1.8 * lo / hi)), 1.05)
# log_y_cmd_room: the same with `top` more of the log range above the top
# point, for the labels drawn over the points.
log_y_cmd(r) = log_y_cmd_room(r, 0)
log_y_cmd_room(r, top) = words(r) < 2 ? "" : \
    sprintf("set yrange [%.9g:%.9g]; set ytics %s", \
            word(r, 1) / log_y_pad(word(r, 1) + 0, word(r, 2) + 0), \
            word(r, 2) * log_y_pad(word(r, 1) + 0, word(r, 2) + 0) * \
            max2(word(r, 2) / word(r, 1), 1.8) ** top, \
            word(r, 2) / word(r, 1) < 10 ? tics_fine : word(r, 2) / word(r, 1) <= 1e4 ? tics125 : tics_decade)
# A chart against K whose effective batch ran one split draws one point: it
# says so in the plot, where a line would be, rather than leave a lone dot
# that reads as a trend not drawn. @one_split_note in such a chart.
one_split_note = ndistinct("accum_steps", ok) != 1 ? "" : \
    "set label 96 'one split at effective batch ".E." (K = ".common("accum_steps", ok). \
    "): a single point, nothing to compare along K' at graph 0.5, 0.92 center font ',10' tc rgb '#a00000'"
# Notes about missing data go under the chart, above the "not run" line.
note_at = "at screen 0.01, 0.06 left font ',10' tc rgb '#a00000'"
# A chart with nothing to draw is not drawn: its reason goes to OUT.NAME.why
# (the report says it where the chart would be) and the script exits 3,
# which scripts/plots.sh reads as "not drawn", not as a failure.
nothing_to_draw = "unset output; set print out.'.'.chart.'.why'; print missing_why; set print; exit status 3"
# The backend computes each op as the host issues it (the CPU): its busy
# time is its step time, so no "GPU busy" is drawn for it.
host_is_device = strstrt(" ".meta("backend_caps")." ", " dispatch-is-device-work ") > 0 || \
                 (strlen(meta("backend_caps")) == 0 && own_backend eq "cpu")
# The place (from 1) of word w in the blank-separated list, 0 where absent:
# a value read from the CSV keeps its colour or dash by its place in the
# values the file holds, never by a list of names here.
index_in(list, w) = strstrt(" ".list." ", " ".w." ") == 0 ? 0 : \
                    words((" ".list." ")[1:strstrt(" ".list." ", " ".w." ") + 1])
# Whether a text has a trailing blank, so no title ends in one.
# A chart of one model names it, and the models of its rows (w) it leaves
# out, the first three and a count: "model tiny (S also run, not drawn
# here)", so that the modes of tiny are not read as the run's only ones.
commas(s, i) = i >= words(s) ? word(s, i) : word(s, i).", ".commas(s, i + 1)
others_n(w, m) = ndistinct("model", w.";model!=".m)
others_text(w, m, n) = n == 0 ? "" : " (".commas(first_distinct("model", w.";model!=".m, 3), 1). \
                       (n > 3 ? sprintf(" and %d more", n - 3) : "")." also run, not drawn here)"
model_part(m, w) = strlen(m) > 0 ? ", model ".m.others_text(w, m, others_n(w, m)) : ""

set terminal pngcairo noenhanced size 1100,650 font "sans,11"
set output out.".".chart.".png"
