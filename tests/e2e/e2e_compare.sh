#!/bin/sh
# accubench compare: a file against itself passes, a copy with one row
# slower beyond its noise fails, a row on more devices is another config,
# different devices or optimizers are refused, bad input exits 2 with one
# line.
set -u
root=$ACCUBENCH_ROOT
fail() { echo "e2e_compare: $*" >&2; exit 1; }
cp "$root/tests/fixtures/default.csv" base.csv

"$ACCUBENCH" compare base.csv base.csv > out.txt 2> err.txt; rc=$?
[ "$rc" = 0 ] || { cat out.txt err.txt; fail "a file against itself exited $rc"; }
grep -q ' 0 slower' out.txt || fail "no summary line: $(tail -n 2 out.txt)"
# the noise column, found by its header: both runs' figures to one decimal
# (whole from 100%), never "6.9 / 0.056"
awk -F'|' '/^\| model / { for (i = 1; i <= NF; i++) if ($i ~ /^ *noise % b\/n *$/) col = i; next }
    col && /^\| [A-Za-z]/ { cell = $col; gsub(/^ +| +$/, "", cell); n++
        if (cell !~ /^(-|[0-9]+\.[0-9]|[0-9][0-9][0-9]+) \/ (-|[0-9]+\.[0-9]|[0-9][0-9][0-9]+)$/) print "bad: " cell }
    END { if (!n) print "no noise column" }' out.txt > noise_bad.txt
[ -s noise_bad.txt ] && fail "the noise column: $(cat noise_bad.txt)"
# a row of one sample has no noise to show (its interval is the median
# itself): "-", not 0.0
awk -F, -v OFS=, '
    /^#/ { print; next }
    !h { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; print; next }
    $c["model"] == "M" && $c["micro_batch"] == 16 && $c["mode"] == "async" {
        $c["samples"] = 1; $c["step_ms_ci_lo"] = $c["step_ms_ci_hi"] = $c["step_ms_median"]
    }
    { print }' base.csv > one.csv
"$ACCUBENCH" compare base.csv one.csv > out.txt 2> err.txt
grep -E '^\| M +\|.*16x16 .*\| +[0-9]+\.[0-9] / - +\|' out.txt > /dev/null ||
    fail "a one-sample row's noise is not '-': $(grep 16x16 out.txt | head -n 1)"

# The same run with model M at micro-batch 16 made 30% slower: step_ms_*
# columns scaled, found by header name.
awk -F, -v OFS=, '
    /^#/ { print; next }
    !h { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; print; next }
    $c["model"] == "M" && $c["micro_batch"] == 16 && $c["mode"] == "async" {
        for (k in c) if (k ~ /^step_ms_/ && $c[k] != "") $c[k] = sprintf("%.4f", $c[k] * 1.3)
    }
    { print }' base.csv > slower.csv
"$ACCUBENCH" compare base.csv slower.csv > out.txt 2> err.txt; rc=$?
[ "$rc" = 1 ] || { cat out.txt err.txt; fail "one slower row exited $rc, want 1"; }
grep -E '^\| M +\|.*16x16 .*\| slower +\|$' out.txt > /dev/null || fail "the slower row is not marked: $(grep 16x16 out.txt)"
[ "$(grep -c '| slower ' out.txt)" = 1 ] || fail "more than one row marked slower"
"$ACCUBENCH" compare slower.csv base.csv > out.txt 2>&1; rc=$?
[ "$rc" = 0 ] && grep -q '| faster ' out.txt || fail "the reverse is not 'faster' with exit 0 ($rc)"

# Different device: refused, unless --ignore-device.
sed 's/NVIDIA H200/NVIDIA H100 80GB HBM3/g' base.csv > h100.csv
"$ACCUBENCH" compare base.csv h100.csv > /dev/null 2> err.txt; rc=$?
[ "$rc" = 2 ] && [ "$(wc -l < err.txt)" = 1 ] || fail "different devices: exit $rc, $(cat err.txt)"
"$ACCUBENCH" compare --ignore-device base.csv h100.csv > /dev/null 2>&1 ||
    fail "--ignore-device did not compare"

# Devices are part of a config: the row of model M at micro-batch 16 (async)
# run on two devices is another config, in base only and in new only.
awk -F, -v OFS=, '
    /^#/ { print; next }
    !h { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; print; next }
    $c["model"] == "M" && $c["micro_batch"] == 16 && $c["mode"] == "async" {
        $c["devices"] = 2 # and its split over them: half the accumulation steps
        $c["accum_steps"] = int(($c["effective_batch"] + 31) / 32)
    }
    { print }' base.csv > two.csv
"$ACCUBENCH" compare base.csv two.csv > out.txt 2> err.txt; rc=$?
[ "$rc" = 0 ] || { cat out.txt err.txt; fail "a row on two devices: exit $rc, want 0"; }
grep -q '; 1 only in base, 1 only in new$' out.txt ||
    fail "a row on two devices matched the one-device row: $(tail -n 1 out.txt)"

# Different optimizer: refused, unless --ignore-optimizer.
sed 's/^# optimizer: .*/# optimizer: sgd lr 0.01/' base.csv > sgd.csv
"$ACCUBENCH" compare base.csv sgd.csv > /dev/null 2> err.txt; rc=$?
[ "$rc" = 2 ] && [ "$(wc -l < err.txt)" = 1 ] && grep -q optimizer err.txt ||
    fail "different optimizers: exit $rc, $(cat err.txt)"
"$ACCUBENCH" compare --ignore-optimizer base.csv sgd.csv > /dev/null 2>&1 ||
    fail "--ignore-optimizer did not compare"

# A file from before the recompute column (the fixture) against one with
# it: the missing column reads as its default, none, and one line says so;
# every config matches.
awk -F, -v OFS=, '
    /^#/ { print; next }
    !h { h = 1; for (i = 1; i <= NF; i++) if ($i == "dtype") d = i }
    { $d = $d "," (NR > 0 && $d == "dtype" ? "recompute" : "none"); print }' base.csv > recompute.csv
"$ACCUBENCH" compare base.csv recompute.csv > out.txt 2> err.txt; rc=$?
[ "$rc" = 0 ] || { cat out.txt err.txt; fail "a file from before the recompute column: exit $rc, want 0"; }
[ "$(wc -l < err.txt)" = 1 ] && grep -q '^accubench: note: base.csv predates a key column: read as recompute=none$' err.txt ||
    fail "the default read is not said in one line: $(cat err.txt)"
grep -q '; 0 only in base, 0 only in new$' out.txt || fail "not every config matched: $(tail -n 1 out.txt)"

# The table shows every key column whose values differ in the files, so
# that no two of its lines read alike: the recompute and devices values
# here, neither where it is the same throughout.
awk -F, -v OFS=, '
    /^#/ { print; next }
    !h { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; print; next }
    { print; $c["recompute"] = "gelu"; print; $c["recompute"] = "none"; $c["devices"] = 2
      m = $c["micro_batch"]; $c["accum_steps"] = int(($c["effective_batch"] + 2 * m - 1) / (2 * m)); print }' \
    recompute.csv > levers.csv
"$ACCUBENCH" compare levers.csv levers.csv > out.txt 2> err.txt ||
    { cat out.txt err.txt; fail "levers.csv against itself exited $?"; }
grep -Eq '^\| model +\| dtype +\| mode +\| reduction +\| recompute +\| devices +\| +E \|' out.txt ||
    fail "the table does not show recompute and devices: $(grep '^| model' out.txt)"
lines=$(grep '^| [^-:m]' out.txt | cut -d'|' -f2-9 | tr -d ' ')
[ "$(echo "$lines" | wc -l)" -eq "$(echo "$lines" | sort -u | wc -l)" ] ||
    fail "two lines of the table read alike: $(echo "$lines" | sort | uniq -d | head -n 2)"
"$ACCUBENCH" compare base.csv base.csv > out.txt 2>&1
grep '^| model' out.txt | grep -q '| recompute \|| devices \|| sync \|| shard ' &&
    fail "a key column the same throughout is shown: $(grep '^| model' out.txt)"

# Several runs a side: the ratio over the runs. Runs of the fixture with
# every step time scaled by a machine that moved (1.00, 1.25, 0.90 against
# 0.95, 1.20, 1.10): each file against the other alone is called apart,
# the runs together are not; the header says so.
scaled() {
    awk -F, -v OFS=, -v f="$1" '/^#/ { print; next }
        !h { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; print; next }
        { for (k in c) if (k ~ /^step_ms_/ && $c[k] != "") $c[k] = sprintf("%.6g", $c[k] * f) } { print }' \
        base.csv > "$2"
}
scaled 1.00 b1.csv; scaled 1.25 b2.csv; scaled 0.90 b3.csv
scaled 0.95 n1.csv; scaled 1.20 n2.csv; scaled 1.10 n3.csv
"$ACCUBENCH" compare b1.csv n1.csv > one.txt 2>&1
grep -q ' 0 faster' one.txt && fail "the first runs alone are not called apart: $(tail -n 1 one.txt)"
"$ACCUBENCH" compare b1.csv,b2.csv,b3.csv n1.csv,n2.csv,n3.csv > runs.txt 2> err.txt; rc=$?
[ "$rc" = 0 ] || fail "three runs a side exited $rc: $(cat err.txt)"
grep -q '^# runs: 3 base, 3 new;' runs.txt || fail "no runs line: $(head -n 5 runs.txt)"
grep -q ' 0 slower, 0 faster, ' runs.txt || fail "runs of one build called apart: $(tail -n 1 runs.txt)"
# the runs the unit: no "*" (the rounds' remark) where the run of record's
# medians lie outside the interval over runs, which no rounds drew
for f in 1.00 1.01 0.99 1.005 0.995; do scaled $f "rb$f.csv"; done
for f in 1.25 1.00 1.01 0.99 1.005; do scaled $f "rn$f.csv"; done
"$ACCUBENCH" compare rb1.00.csv,rb1.01.csv,rb0.99.csv,rb1.005.csv,rb0.995.csv \
    rn1.25.csv,rn1.00.csv,rn1.01.csv,rn0.99.csv,rn1.005.csv > runs.txt 2>&1
grep -q '^# runs: 5 base, 5 new;' runs.txt || fail "five runs a side: $(head -n 5 runs.txt)"
grep -q '\*' runs.txt && fail "a ratio over runs marked as the rounds disagreeing: $(grep '\*' runs.txt | head -n 3)"
# a file whose name holds a comma is one run; a list naming a missing or
# an empty name is refused, one line
cp b1.csv 'b,1.csv'
"$ACCUBENCH" compare 'b,1.csv' b1.csv > /dev/null 2> err.txt || fail "a name with a comma: $(cat err.txt)"
# what no row says is said in the header: another GEMM library or thread
# count, and a file holding a config twice (an appended rerun), whose
# first row is compared; those rows are not configs only in new
sed 's/^# library: .*/# library: cuBLAS 13.0 threads 7/' base.csv > lib.csv
"$ACCUBENCH" compare base.csv lib.csv > out.txt 2>&1
grep -q "^# library: base 'cuBLAS 13.0', new 'cuBLAS 13.0 threads 7': the GEMM library or its threads differ" out.txt ||
    fail "another library not said: $(head -n 5 out.txt)"
grep -q '^# library' one.txt && fail "a library line where the libraries agree"
{ cat base.csv; grep -v '^#' base.csv | sed 1d | head -n 2; } > twice.csv
"$ACCUBENCH" compare base.csv twice.csv > out.txt 2>&1
grep -q '^# repeated: twice.csv holds 2 rows of configs named earlier in it' out.txt ||
    fail "repeated configs not said: $(head -n 6 out.txt)"
grep -q '[1-9] only in new' out.txt && fail "repeated rows counted as configs only in new: $(tail -n 1 out.txt)"

# a run named twice, on one side or across them, by another path too:
# refused (its spread would read as none; it called 0.98x apart)
for args in "b1.csv,b1.csv n1.csv,n2.csv" "b1.csv,./b1.csv n1.csv" "b1.csv,b2.csv b2.csv"; do
    "$ACCUBENCH" compare $args > /dev/null 2> err.txt; rc=$?
    [ "$rc" = 2 ] && grep -q "are one file: each run counts once" err.txt ||
        fail "compare $args: a run named twice not refused (exit $rc): $(cat err.txt)"
done

# Bad input.
printf 'just text\n' > notes.csv
printf 'model,micro_batch\nS,4\n' > nocols.csv
for args in "missing.csv base.csv" "base.csv notes.csv" "nocols.csv base.csv" "base.csv" \
    "base.csv,missing.csv base.csv" "base.csv, base.csv" "base.csv base.csv,,base.csv"; do
    "$ACCUBENCH" compare $args > /dev/null 2> err.txt; rc=$?
    [ "$rc" = 2 ] || fail "compare $args exited $rc, want 2"
    [ "$(wc -l < err.txt)" = 1 ] && grep -q '^accubench: ' err.txt ||
        fail "compare $args: want one 'accubench: ' line, got: $(cat err.txt)"
done
# its answer written nowhere (a full disk: /dev/full): one line, exit 2,
# never a verdict of 0 for an answer cut short
"$ACCUBENCH" compare base.csv base.csv > /dev/full 2> err.txt; rc=$?
[ "$rc" = 2 ] && [ "$(wc -l < err.txt)" = 1 ] && grep -q 'cannot write the output (stdout): No space left' err.txt ||
    fail "compare into a full disk: exit $rc, want 2 and one line: $(cat err.txt)"
echo "e2e_compare: ok"
