#!/bin/sh
# Every chart renders from the fixture CSVs, as a real PNG and a real SVG,
# or, with nothing to draw, not at all: its reason in RUN.NAME.why and no
# placeholder; make-style errors exit 2.
# Runs in a temp dir; needs gnuplot (the Makefile's configure installs it).
set -u
root=$ACCUBENCH_ROOT
fail() { echo "e2e_plots: $*" >&2; exit 1; }
command -v gnuplot >/dev/null 2>&1 || fail "gnuplot is missing (apt-get install gnuplot-nox)"

charts=$(grep -l '^chart = ' "$root"/plots/*.gp | xargs -n1 basename | sed 's/\.gp$//')
[ "$(echo $charts | wc -w)" -ge 5 ] || fail "expected at least 5 chart scripts, found: $charts"

is_png() { [ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = 89504e470d0a1a0a ]; }
# The root element, past the XML declaration, doctype and comments, is <svg>.
is_svg() {
    [ "$(tr '\n' ' ' < "$1" | sed 's/<[?!][^>]*>//g; s/^[[:space:]]*//' | cut -c1-4)" = "<svg" ] &&
        tail -c 20 "$1" | grep -q '</svg>'
}

# Two non-empty texts drawn at one spot of an SVG (gnuplot puts each in a
# group translated to where it is drawn): one line per such spot.
overlaps() {
    awk '/<g transform="translate\(/ { match($0, /translate\([^)]*\)/); at = substr($0, RSTART, RLENGTH) }
        /<text>/ && at != "" {
            t = $0; sub(/.*<text>/, "", t); sub(/<\/text>.*/, "", t); gsub(/<[^>]*>/, "", t)
            if (t != "") { if (at in seen) print at ": " seen[at] " | " t; else seen[at] = t }
            at = ""
        }' "$1"
}

# measured/h200_sweep.csv: a real run (make check-gpu's sweep on an H200),
# kept as written: the GPU's own metadata, rounds and untraced rows.
cp "$root/tests/fixtures/measured/h200_sweep.csv" .
for f in abc default cpu_notrace h200_sweep; do
    [ -e "$f.csv" ] || cp "$root/tests/fixtures/$f.csv" .
    sh "$root/scripts/plots.sh" "$f.csv" > plots.log 2> plots.err || {
        cat plots.log plots.err; fail "plots.sh failed on $f.csv"; }
    # gnuplot warnings mean a chart drew less than it meant to
    [ ! -s plots.err ] || { cat plots.err; fail "gnuplot complained on $f.csv"; }
    for c in $charts; do
        if [ -e "$f.$c.why" ]; then
            [ -s "$f.$c.why" ] || fail "$f.$c.why gives no reason"
            [ ! -e "$f.$c.png" ] && [ ! -e "$f.$c.svg" ] || fail "$f.$c: a placeholder beside its reason"
            continue
        fi
        is_png "$f.$c.png" || fail "$f.$c.png is not a PNG"
        is_svg "$f.$c.svg" || fail "$f.$c.svg is not an SVG"
        spots=$(overlaps "$f.$c.svg")
        [ -z "$spots" ] || fail "$f.$c.svg draws texts over each other: $spots"
    done
done
# The GPU-shaped fixture draws its wall-clock, throughput, dispatches,
# time split and modes charts; the CPU one no time split (no trace).
for c in wallclock throughput dispatches time_split modes; do
    [ -s "default.$c.png" ] || fail "default.$c.png not drawn"
done
[ -e cpu_notrace.time_split.png ] && fail "a time split drawn for a run without a trace"
# A CPU run draws no GPU busy; the wall-clock and throughput charts share
# one x-axis (K).
grep -q 'GPU busy' cpu_notrace.wallclock.svg && fail "the CPU run's wall-clock chart draws GPU busy"
grep -q 'accumulation steps K' default.wallclock.svg && grep -q 'accumulation steps' default.throughput.svg ||
    fail "the wall-clock and throughput charts do not share the K axis"

# Titles name the device, dtype and effective batch from the metadata.
grep -q 'NVIDIA H200, bf16, effective batch 256' default.wallclock.svg ||
    fail "the wall-clock title lacks device, dtype, effective batch"
# Charts whose columns are empty are not drawn and say why.
grep -q 'are empty in this CSV' cpu_notrace.time_split.why ||
    fail "the time split of a run without a trace does not say its data is missing"
grep -q 'only one execution mode' cpu_notrace.modes.why ||
    fail "the modes chart of a one-mode run does not say so"
grep -q 'GPU busy % not measured for: M' default.wallclock.svg ||
    fail "the wall-clock chart does not name the model without busy %"
# Both notes under the chart of a GPU run timed in rounds, neither over
# the other (the overlap check above).
grep -q 'GPU busy % not measured for: S, M, L; labels: paired ratio' h200_sweep.wallclock.svg ||
    fail "the H200 run's wall-clock chart lacks its two notes"
grep -q 'not run: L 1x256 async: skipped; L 256x1 async: oom' default.wallclock.svg ||
    fail "the wall-clock chart does not list the configs that did not run"

# A file from before a column reads it as unmeasured (docs/csv-columns.md):
# default.csv without devices still draws its wall-clock chart (it said "no
# ok rows"), and without gpu_busy_ms its time split is not drawn, saying
# why, rather than failing in gnuplot.
drop_col() { # NAME: default.csv without column NAME
    awk -F, -v name="$1" '/^#/ { print; next }
        !h { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1 }
        { s = ""; for (i = 1; i <= NF; i++) if (i != c) s = s (s == "" && i == 1 ? "" : ",") $i; print s }' \
        "$root/tests/fixtures/default.csv"
}
drop_col devices >nodev.csv
drop_col gpu_busy_ms >nobusy.csv
for f in nodev nobusy; do
    sh "$root/scripts/plots.sh" "$f.csv" > plots.log 2> plots.err || {
        cat plots.log plots.err; fail "plots.sh failed on $f.csv (a column missing)"; }
    [ ! -s plots.err ] || { cat plots.err; fail "gnuplot complained on $f.csv"; }
done
is_svg nodev.wallclock.svg && grep -q 'NVIDIA H200, bf16, effective batch 256' nodev.wallclock.svg ||
    fail "a CSV without the devices column draws no wall-clock chart: $(cat nodev.wallclock.why 2>/dev/null)"
[ ! -e nobusy.time_split.png ] && grep -q 'are empty in this CSV' nobusy.time_split.why ||
    fail "a CSV without gpu_busy_ms: the time split drawn or not said"

# A CSV whose sweep was interrupted before its first row: no chart is
# drawn, and each says why.
grep '^#\|^backend,' abc.csv > none.csv
sh "$root/scripts/plots.sh" none.csv > /dev/null 2> plots.err || { cat plots.err; fail "plots.sh failed on a header-only CSV"; }
for c in $charts; do
    grep -q 'no config ran in this CSV' "none.$c.why" || fail "none.$c.why does not say no config ran"
    [ ! -e "none.$c.png" ] || fail "none.$c.png: a placeholder chart"
done
# A chart drawn before and empty now: the old one goes, its reason stays.
cp abc.csv stale.csv && sh "$root/scripts/plots.sh" stale.csv > /dev/null 2>&1
grep '^#\|^backend,' abc.csv > stale.csv && sh "$root/scripts/plots.sh" stale.csv > /dev/null 2>&1
[ ! -e stale.wallclock.png ] && [ -s stale.wallclock.why ] || fail "a stale chart outlived its data"

# Standalone: one script, from another folder, with an output prefix.
mkdir -p elsewhere out
(cd elsewhere && gnuplot -e "csv='../abc.csv'; out='../out/x'" "$root/plots/wallclock.gp") ||
    fail "plots/wallclock.gp does not run standalone"
is_png out/x.wallclock.png && is_svg out/x.wallclock.svg || fail "standalone output missing"

# A custom model's name, as the CSV writes it (":" and "=" in it, its
# commas as ";"), selects its rows like a preset's: every chart drawn.
mkdir -p custom && awk -F, -v OFS=, '/^#/ { print; next }
    !h { h = 1; for (i = 1; i <= NF; i++) if ($i == "model") m = i; print; next }
    { $m = "gpt:d=32;layers=2;heads=4;seq=16;vocab=64"; print }' abc.csv > custom/custom.csv
sh "$root/scripts/plots.sh" custom/custom.csv > custom.log 2>&1 ||
    { cat custom.log; fail "plots.sh failed on a custom model's CSV"; }
for c in wallclock throughput dispatches; do
    is_png custom/custom.$c.png || { cat custom.log; fail "no $c chart for a custom model"; }
    # the key says "gpt#1", a line under the chart what that is
    grep -q "gpt#1 = gpt:d=32;layers=2;heads=4;seq=16;vocab=64" custom/custom.$c.svg ||
        fail "the $c chart does not spell out its short name for the custom model"
done

# Beside a preset model, the custom one is still gpt#1, as the console
# table numbers it (among the long names of its kind), not its place among
# every model of the file (S first made it gpt#2).
mkdir -p mixed && awk -F, -v OFS=, '/^#/ { print; next }
    !h { h = 1; for (i = 1; i <= NF; i++) { if ($i == "model") m = i; if ($i == "micro_batch") u = i }
         print; next }
    $u + 0 <= 16 { $m = "gpt:d=32;layers=2;heads=4;seq=16;vocab=64" } { print }' abc.csv > mixed/mixed.csv
sh "$root/scripts/plots.sh" mixed/mixed.csv > mixed.log 2>&1 ||
    { cat mixed.log; fail "plots.sh failed on a CSV of a preset and a custom model"; }
grep -q "gpt#1 = gpt:d=32;layers=2;heads=4;seq=16;vocab=64" mixed/mixed.throughput.svg &&
    ! grep -q "gpt#2" mixed/mixed.throughput.svg ||
    fail "the throughput chart numbers the custom model unlike the console (gpt#1)"

# Configs that differ only in what the backward recomputes are lines of
# their own on the wall-clock chart, each named, not one line through all.
mkdir -p rc && cp "$root/tests/fixtures/frontier.csv" rc/
sh "$root/scripts/plots.sh" rc/frontier.csv > rc.log 2>&1 || { cat rc.log; fail "plots.sh on frontier.csv"; }
# (The fixture's shard varies too, so each line names its shard.)
for v in none gelu block; do
    grep -q "S 1 dev recompute $v shard none step ms" rc/frontier.wallclock.svg ||
        fail "the wall-clock chart has no line of its own for recompute $v"
done
# ... as do configs that differ only in their shard, on two devices
for v in none optimizer gradients; do
    grep -q "S 2 dev window recompute none shard $v step ms" rc/frontier.wallclock.svg ||
        fail "the wall-clock chart has no line of its own for shard $v"
done
# ... and the charts of a line per model take one value, and say which
grep -q "recompute none shard none only" rc/frontier.throughput.svg ||
    fail "the throughput chart does not say which recompute value it draws"
# Every lever, not recompute alone: the gradient's dtype swept beside it
# gives a line for each pair (a lever the charts named by hand was one
# line zig-zagging through both dtypes).
mkdir -p gd && (cd gd && "$root/build/accubench" run --backend cpu --model tiny --effective 16 --micro 4,16 \
    --grad-dtype all --recompute none,gelu --budget-s 0.05 --max-samples 5 --trace-steps 0 \
    --noise-windows 0 --csv gd.csv --replace > run.log 2>&1) || { cat gd/run.log; fail "the grad-dtype sweep"; }
sh "$root/scripts/plots.sh" gd/gd.csv > gd.log 2>&1 || { cat gd.log; fail "plots.sh on the grad-dtype sweep"; }
for rc in none gelu; do
    for g in fp32 bf16; do
        grep -q "tiny recompute $rc gradient in $g step ms" gd/gd.wallclock.svg ||
            fail "the wall-clock chart has no line of its own for recompute $rc, gradient in $g"
    done
done
grep -q "recompute none gradient in fp32 only" gd/gd.throughput.svg ||
    fail "the throughput chart does not say which set of levers it draws"

# Errors: no CSV at all, an unreadable CSV.
mkdir -p empty && cp -r "$root/scripts" "$root/plots" empty/
sh empty/scripts/plots.sh > /dev/null 2> err.txt; rc=$?
[ "$rc" = 2 ] || fail "plots.sh with no results/*.csv exited $rc, want 2"
[ "$(wc -l < err.txt)" = 1 ] || fail "want one error line, got: $(cat err.txt)"
sh "$root/scripts/plots.sh" no-such.csv > /dev/null 2>&1; rc=$?
[ "$rc" = 2 ] || fail "plots.sh on a missing CSV exited $rc, want 2"
# Input that is not an accubench CSV: one line naming the problem, as
# `accubench report` says it, exit 2, and nothing written beside it;
# never a wait on a FIFO. What a path is, the script checks itself (with
# no program built too); the text, the program (--check-csv).
mkdir -p bad/folder && mkfifo bad/fifo.csv && printf 'hi\n' > bad/hi.csv && : > bad/empty.csv
grep '^#' abc.csv > bad/comments.csv
# a row cut short, as an interrupted copy leaves it: no newline after it
{ sed '$d' abc.csv; tail -n 1 abc.csv | cut -d, -f1-20 | tr -d '\n'; } > bad/cut.csv
cut_line=$(wc -l < abc.csv | tr -d ' ')
awk -F, -v OFS=, '/^#/ { print; next } !h { h = 1; for (i = 1; i <= NF; i++) if ($i == "samples_per_s") k = i }
    { s = ""; for (i = 1; i <= NF; i++) if (i != k) s = s (s == "" ? "" : ",") $i; print s }' \
    abc.csv > bad/nocol.csv
fields=$(grep -v '^#' abc.csv | head -n 1 | tr ',' '\n' | wc -l | tr -d ' ')
wait_at_most=; command -v timeout >/dev/null 2>&1 && wait_at_most="timeout 60"
hows="program"
refused() { # refused CSV MESSAGE [OUT_PREFIX]: each way in $hows refuses CSV saying MESSAGE
    csv=$1 want=$2
    shift 2 # what is left is plots.sh's OUT_PREFIX, if any
    for how in $hows; do
        if [ $how = unbuilt ]; then bin=$PWD/no-such-accubench; else bin=$root/build/accubench; fi
        [ $how = unbuilt ] || [ -x "$bin" ] || continue
        ACCUBENCH_BIN=$bin $wait_at_most sh "$root/scripts/plots.sh" "$csv" "$@" > out.txt 2> err.txt; rc=$?
        [ "$rc" = 2 ] || { cat out.txt err.txt; fail "$how: plots.sh on $csv exited $rc, want 2"; }
        [ "$(wc -l < err.txt)" = 1 ] && [ ! -s out.txt ] ||
            { cat out.txt err.txt; fail "$how: plots.sh on $csv: want one error line"; }
        grep -qF "plots: $want" err.txt || fail "$how: plots.sh on $csv said: $(cat err.txt), want: $want"
    done
}
hows="program unbuilt"
refused bad/folder "bad/folder is a folder, not a CSV file"
refused bad/fifo.csv "bad/fifo.csv is a named pipe, not a CSV file"
refused /dev/null "/dev/null is a device or socket, not a CSV file" "$PWD/bad/devnull"
hows="program"
refused bad/hi.csv "bad/hi.csv:1: not a CSV (the header row has no commas)"
refused bad/empty.csv "bad/empty.csv: not an accubench CSV (no header row)"
refused bad/comments.csv "bad/comments.csv: not an accubench CSV (no header row)"
refused bad/cut.csv "bad/cut.csv:$cut_line: 20 fields, but the header has $fields"
refused bad/nocol.csv "bad/nocol.csv: missing column samples_per_s"
for f in bad/*.png bad/*.svg bad/*.why; do
    [ ! -e "$f" ] || fail "a chart or its reason written beside bad input: $f"
done
# A folder that takes no new file (immutable here; read-only alike): one
# line in plots' own words, mktemp's template not in it. Skipped where the
# flag cannot be set (not root, a file system without it).
mkdir -p pinned && cp abc.csv pinned/run.csv
if chattr +i pinned 2>/dev/null; then
    ACCUBENCH_BIN=$root/build/accubench sh "$root/scripts/plots.sh" pinned/run.csv >out.txt 2>err.txt
    rc=$?
    chattr -i pinned
    [ "$rc" = 2 ] && [ "$(wc -l < err.txt)" = 1 ] &&
        grep -qF "plots: cannot write the charts in folder pinned: Operation not permitted" err.txt &&
        ! grep -q 'XXXXXX' err.txt ||
        fail "plots.sh into an immutable folder: exit $rc, want 2 and one line: $(cat err.txt)"
else
    echo "skipped: chattr +i does not work here"
fi
# The report's own refusals, word for word.
if [ -x "$root/build/accubench" ]; then
    for f in folder hi.csv empty.csv cut.csv; do
        want=$("$root/build/accubench" report --no-charts bad/$f 2>&1 | sed 's/^accubench: //')
        refused bad/$f "$want"
    done
fi
# A cell that is not a number: the program refuses it as the report does.
awk -F, -v OFS=, '/^#/ { print; next } !h { h = 1; for (i = 1; i <= NF; i++) if ($i == "step_ms_median") k = i; print; next }
    !d { d = 1; $k = "abc" } { print }' abc.csv > bad/nan.csv
if [ -x "$root/build/accubench" ]; then
    ACCUBENCH_BIN=$root/build/accubench sh "$root/scripts/plots.sh" bad/nan.csv > out.txt 2> err.txt; rc=$?
    [ "$rc" = 2 ] && grep -q "^plots: bad/nan.csv:[0-9]*: column step_ms_median: 'abc' is not a number" err.txt ||
        { cat err.txt; fail "plots.sh on a CSV with a cell 'abc' exited $rc"; }
fi
# ... and with a CSV present, the newest one is picked and named.
mkdir -p empty/results && cp abc.csv empty/results/old.csv && sleep 1 &&
    cp abc.csv empty/results/new.csv
sh empty/scripts/plots.sh > log.txt 2>&1 || { cat log.txt; fail "plots.sh without a CSV failed"; }
grep -q 'using .*results/new.csv (the newest' log.txt || fail "plots.sh did not say it picked the newest CSV"
is_png empty/results/new.wallclock.png || fail "charts of the newest CSV not written next to it"
# A locale that writes 1,5 for 1.5 (de_DE, built here, as a user's machine
# has it): every chart still draws, the frontier and the curves too.
# Skipped where the locale's sources are not installed.
if command -v localedef >/dev/null 2>&1 && [ -r /usr/share/i18n/locales/de_DE ] && mkdir -p loc &&
    localedef -i de_DE -f UTF-8 "$PWD/loc/de_DE.UTF-8" >/dev/null 2>&1 &&
    [ "$(LOCPATH=$PWD/loc LC_ALL=de_DE.UTF-8 awk 'BEGIN { printf "%.1f", 1.5 }')" = "1,5" ]; then
    mkdir -p de && cp "$root/tests/fixtures/frontier.csv" de/
    LOCPATH=$PWD/loc LC_ALL=de_DE.UTF-8 sh "$root/scripts/plots.sh" de/frontier.csv \
        > plots.log 2> plots.err || { cat plots.log plots.err; fail "plots.sh failed under de_DE"; }
    [ ! -s plots.err ] || { cat plots.err; fail "gnuplot complained under de_DE"; }
    is_png de/frontier.frontier.png || fail "no frontier chart under de_DE"
else
    echo "e2e_plots: the de_DE part skipped (no localedef or no de_DE source)"
fi
# A write that fails (the file-size limit stands in for a full disk):
# gnuplot exits 0 with its files cut short. Each such chart fails with one
# line, plots.sh exits 1, and the charts drawn before stay whole.
mkdir -p full && cp abc.csv abc.wallclock.png abc.wallclock.svg full/
sh -c 'trap "" XFSZ; ulimit -f 8; exec sh "$0" "$1"' "$root/scripts/plots.sh" full/abc.csv \
    > plots.log 2> plots.err
rc=$?
[ "$rc" -eq 1 ] || { cat plots.log plots.err; fail "charts cut short: exit 1 (got $rc)"; }
grep -q '^plots: wallclock failed: cut short in writing' plots.err ||
    { cat plots.err; fail "the cut chart is not said"; }
cmp -s full/abc.wallclock.png abc.wallclock.png && cmp -s full/abc.wallclock.svg abc.wallclock.svg ||
    fail "a cut chart replaced the one drawn before"
for f in full/*.png full/*.svg full/*.why; do
    # a whole PNG ends with its IEND chunk
    [ ! -e "$f" ] || { case $f in
        *.png) is_png "$f" && [ "$(tail -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 49454e44ae426082 ] ;;
        *.svg) is_svg "$f" ;; *) [ -s "$f" ] ;; esac; } ||
        fail "$f: a cut file left in place"
done
echo "e2e_plots: ok ($(echo $charts))"
