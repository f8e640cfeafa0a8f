#!/bin/sh
# accubench report on the fixture CSVs: Markdown + HTML next to the CSV,
# charts inlined, the report's numbers equal to the CSV's, errors exit 2.
set -u
root=$ACCUBENCH_ROOT
fail() { echo "e2e_report: $*" >&2; exit 1; }

cp "$root/tests/fixtures/default.csv" "$root/tests/fixtures/abc.csv" .
"$ACCUBENCH" report default.csv > out.txt 2> err.txt || { cat out.txt err.txt; fail "report failed"; }
grep -q 'wrote ./default.md, ./default.html and ./default.json' out.txt || fail "report did not say where: $(cat out.txt)"
[ -s default.md ] && [ -s default.html ] || fail "default.md / default.html missing"
ls ./*.tmp.* > /dev/null 2>&1 && fail "a temporary file was left behind"
# default.json, the record typed: one object per row of the CSV, each step
# time the CSV's own number (python3's json reads it: valid JSON)
if command -v python3 > /dev/null 2>&1; then
    python3 - default.csv default.json <<'PY' || fail "default.json is not the CSV's record"
import csv, json, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")))
doc = json.load(open(sys.argv[2]))
assert len(doc["rows"]) == len(rows), (len(doc["rows"]), len(rows))
for a, b in zip(rows, doc["rows"]):
    want = float(a["step_ms_median"]) if a["step_ms_median"] else None
    assert b["step_ms_median"] == want, (a["step_ms_median"], b["step_ms_median"])
    assert b["model"] == a["model"] and b["micro_batch"] == int(a["micro_batch"])
assert doc["meta"]["device"], doc["meta"]
PY
fi
[ "$(grep -c '<svg' default.html)" -ge 5 ] || fail "the HTML does not inline the five charts"
grep -q 'chart not rendered' default.html && fail "a chart is missing from the HTML"
# A figure never breaks inside its cell ("1.19x [1.07..1.32]" on two lines
# reads as two numbers): numeric cells do not wrap, wide tables scroll.
grep -q '<td class="num">' default.html &&
    grep -q 'td\.num{white-space:nowrap}' default.html &&
    grep -q 'table{[^}]*overflow-x:auto' default.html || fail "the HTML's figures may wrap inside their cells"
grep -q '](default.wallclock.png)' default.md || fail "the Markdown does not show the charts"
# The environment's peak is the run's start; beside it the probes the MFU
# column is taken against, from the rows' own probe columns (lo to hi);
# a file without them (the fixtures) claims none
grep -q "its MFU.s peak" default.md && fail "probes claimed from a file without them"
"$ACCUBENCH" run --backend cpu --model tiny --effective 16 --micro 16,4 --budget-s 0.2 \
    --trace-steps 0 --noise-windows 0 --quiet --csv probes.csv > /dev/null 2> err.txt &&
    "$ACCUBENCH" report probes.csv --no-charts > /dev/null 2>> err.txt ||
    fail "a run and its report: $(cat err.txt)"
lohi=$(awk -F, '/^#/ { next } !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
    $c["status"] == "ok" { p = $c["probe_tflops_before"] + 0; q = $c["probe_tflops_after"] + 0; if (q > p) p = q
        if (p > 0) { if (lo == "" || p < lo) lo = p; if (p > hi) hi = p } }
    END { print lo, hi }' probes.csv)
# (one figure where every probe read alike: "X TFLOP/s", not "X to X")
said=$(sed -n -e "s/.*beside each config (its MFU's peak): \([0-9.e+-]*\) to \([0-9.e+-]*\) TFLOP\/s; no datasheet rate.*/\1 \2/p" \
    -e "s/.*beside each config (its MFU's peak): \([0-9.e+-]*\) TFLOP\/s; no datasheet rate.*/\1 \1/p" probes.md)
# the same figures to the report's 4 significant digits (0.0379 is "0.03790")
echo "$lohi $said" | awk 'function off(a, b) { return (a - b) / (a > 0 ? a : 1) }
    NF != 4 || off($1, $3) > 1e-3 || off($1, $3) < -1e-3 || off($2, $4) > 1e-3 || off($2, $4) < -1e-3 { exit 1 }' ||
    fail "the environment's probes beside each config are not $lohi: $(grep 'peak GEMM rate' probes.md)"
# Only charts that exist are linked: without them (--no-charts, none drawn
# before), each chart says it was not drawn instead.
mkdir -p bare && cp default.csv bare/
"$ACCUBENCH" report bare/default.csv --no-charts > out.txt 2> err.txt || { cat err.txt; fail "report --no-charts"; }
grep -q '](default\.[a-z_]*\.png)' bare/default.md && fail "a chart never drawn is linked: $(grep -o '](default[^)]*)' bare/default.md | head -n 2)"
grep -q '^Not drawn, Wall-clock.*: no chart file beside the CSV' bare/default.md ||
    fail "a chart not drawn is not said to be missing"

# Every ok row's step time, samples/s and naive prediction in the report
# equal the CSV's (to the 4 significant digits printed); rows that did not
# run show their status in the table and their reason in the report.
awk -F'|' '
    FNR == NR {
        report = report $0 "\n"
        if ($0 ~ /^### Effective batch /) {
            h = $0; sub(/^### Effective batch /, "", h); sub(/ \(.*$/, "", h)
        } else if (h != "" && NF > 10) {
            split_ = $2; gsub(/ /, "", split_); sub(/\(last[0-9]+\)/, "", split_)
            key = h "/" split_; step[key] = $3; naive[key] = $5; sps[key] = $8
        }
        next
    }
    FNR == 1 { next }
    /^#/ { next }
    !header { header = 1; FS = ","; $0 = $0; for (i = 1; i <= NF; i++) col[$i] = i; next }
    {
        key = $col["effective_batch"] ": model " $col["model"] ", " $col["mode"] ", " \
              $col["reduction"] " reduction/" $col["micro_batch"] "x" $col["accum_steps"]
        if (!(key in step)) { print "missing in report: " key; bad++; next }
        if ($col["status"] != "ok") {
            cell = step[key]; gsub(/ /, "", cell)
            if (cell != $col["status"]) { print "status lost: " key; bad++ }
            if (!index(report, $col["note"])) { print "reason lost: " key; bad++ }
            next
        }
        if (!near(step[key], $col["step_ms_median"])) { print "step " key ": " step[key] " vs " $col["step_ms_median"]; bad++ }
        if (!near(sps[key], $col["samples_per_s"])) { print "samples/s " key; bad++ }
        if (!near(naive[key], $col["accum_steps"] * $col["pass_ms"])) { print "naive " key; bad++ }
        n++
    }
    function near(a, b) { a += 0; b += 0; return (a - b) <= 6e-4 * b && (b - a) <= 6e-4 * b }
    END { if (bad || n < 40) { print n " rows checked, " bad " wrong"; exit 1 } }
' default.md FS=',' default.csv || fail "the report's numbers differ from the CSV's"

# --out and --mem-cap
mkdir -p outdir
"$ACCUBENCH" report abc.csv --out outdir --mem-cap 256M > /dev/null 2>&1 || fail "report --out failed"
[ -s outdir/abc.md ] && [ -s outdir/abc.html ] && [ -s outdir/abc.wallclock.svg ] ||
    fail "--out did not put the report and its charts in outdir"
grep -q 'Cap: 256.0 MiB (268435456 bytes, from --mem-cap)' outdir/abc.md || fail "--mem-cap not used"

# A CSV whose name has a space and parentheses: the Markdown's image links
# resolve (percent-encoded: a bare space or ")" ends the destination).
mkdir -p spaced && cp abc.csv "spaced/my run (1).csv"
"$ACCUBENCH" report "spaced/my run (1).csv" > /dev/null 2>&1 || fail "report of a spaced name failed"
[ -s "spaced/my run (1).wallclock.png" ] &&
    grep -qF '](my%20run%20%281%29.wallclock.png)' "spaced/my run (1).md" ||
    fail "the chart links of a spaced name do not resolve: $(grep -m1 'wallclock.png' "spaced/my run (1).md")"

# An MFU no step can reach, and one its own columns do not give, are said
# to be so (a real run's are neither).
grep -q 'cannot be true\|columns disagree' outdir/abc.md && fail "a true MFU called impossible"
awk -F, -v OFS=, '/^#/ { print; next }
    !c { for (i = 1; i <= NF; i++) if ($i == "mfu_pct") c = i; print; next }
    { $c = 150; print }' abc.csv > mfu150.csv
"$ACCUBENCH" report mfu150.csv --no-charts > /dev/null 2>&1 || fail "report mfu150.csv failed"
grep -q 'That MFU cannot be true' mfu150.md && grep -q 'Its columns disagree' mfu150.md ||
    fail "an MFU of 150% was not flagged: $(grep 'highest MFU' -A2 mfu150.md)"
grep -Eq '\| +150 \(!\) \|' mfu150.md && ! grep -Eq '[0-9] \(!\)' outdir/abc.md ||
    fail "the split tables do not mark an MFU of 150% where it stands: $(grep -m1 '150' mfu150.md)"

# Bad input: exit 2, one line on stderr.
printf 'just text\n' > notes.csv
printf 'model,micro_batch\nS,4\n' > nocols.csv
for bad in missing.csv notes.csv nocols.csv; do
    "$ACCUBENCH" report "$bad" > /dev/null 2> err.txt; rc=$?
    [ "$rc" = 2 ] || fail "report $bad exited $rc, want 2"
    [ "$(wc -l < err.txt)" = 1 ] && grep -q '^accubench: ' err.txt ||
        fail "report $bad: want one 'accubench: ' line, got: $(cat err.txt)"
done
# a target loss where no curves file is beside the CSV aims at nothing:
# refused in one line, not dropped, and nothing written
mkdir -p nocurves
"$ACCUBENCH" report abc.csv --out nocurves --target-loss 2 --no-charts > /dev/null 2> err.txt
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l < err.txt)" = 1 ] && grep -q -- '--target-loss 2: no curves file beside abc.csv' err.txt &&
    [ -z "$(ls nocurves)" ] ||
    fail "report --target-loss without curves: exit $rc, $(cat err.txt), wrote: $(ls nocurves)"
echo "e2e_report: ok"
