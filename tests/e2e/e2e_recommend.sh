#!/bin/sh
# accubench plan --recommend: from a fixture with the recompute and shard
# columns (the fastest split over the cap, the recommendation the fastest
# under it, the excluded one named with its bytes over, an interval past
# the 2% band's edge not yet separated, flagged rows ranked with their flags,
# not-ok rows never recommended), from a file
# without those columns, from one short measuring run without --from, and
# bad input: one line on stderr, exit 2.
set -u
root=$ACCUBENCH_ROOT
fail() { echo "e2e_recommend: $*" >&2; exit 1; }
fixture=$root/tests/fixtures/frontier.csv
# The recompute values, from the program's table: a row added to it is a
# candidate of every measuring run, and counted here with no line changed.
recomputes=$("$ACCUBENCH" --list-values recompute) || fail "--list-values recompute exited $?"
n_rc=$(echo "$recomputes" | wc -l)
# plan --recommend's out.txt lists each of N configurations, or counts it
# among the slower ones left out.
considered() {
    listed=$(grep -cE '^ +([0-9]+ +)?[0-9]+x[0-9]+ (fp32|bf16) recompute=[^ ]+ shard=none ' out.txt)
    counted=$(sed -n 's/^left out, [a-z ]* (not recommended): //p' out.txt | grep -oE '[0-9]+' |
              awk '{ s += $1 } END { print s + 0 }')
    [ $((listed + counted)) = "$1" ] ||
        fail "$listed listed and $counted counted of the $1 $2: $(cat out.txt)"
}

"$ACCUBENCH" plan --recommend --effective 256 --mem-cap 96000000 --from "$fixture" \
    > out.txt 2> err.txt; rc=$?
[ "$rc" = 0 ] || { cat out.txt err.txt; fail "the fixture exited $rc"; }
grep -Eq '^ +1 +128x2 fp32 recompute=gelu shard=none .* recommended$' out.txt ||
    fail "128x2 with gelu recompute is not recommended first: $(cat out.txt)"
grep -Eq '^ +2 +64x4 fp32 recompute=none .*vs 1: [0-9.]+x \[[0-9.]+\.\.[0-9.]+\], not yet separated \(' out.txt ||
    fail "an interval past the band's edge is not called not yet separated: $(cat out.txt)"
grep -q '^pick: 128x2 fp32 recompute=gelu shard=none.*, not separated by the rule from 2: 64x4 fp32 recompute=none shard=none[^(]* (not yet separated), ' out.txt ||
    fail "the pick and its ties are not named with the rule's words: $(cat out.txt)"
grep -Eq '256x1 fp32 recompute=none shard=none .*over the cap by 14000000 bytes \(measured peak' out.txt ||
    fail "the fastest split is not named with its bytes over"
grep -q 'over the cap by 3000000 bytes (exact need 99000000 bytes)' out.txt ||
    fail "a row without a peak is not held to its need"
! grep -q 'did not finish' out.txt || fail "a finished run is called unfinished"
# an unfinished run's rows: ranked, and said to be all it reached
{ echo "# unfinished: interrupted (SIGINT) after 5 of 9 configs: the rest did not run"
  cat "$fixture"; } > cut.csv
"$ACCUBENCH" plan --recommend --effective 256 --mem-cap 96000000 --from cut.csv > out.txt 2>&1 ||
    fail "the unfinished fixture exited $?"
grep -q '^the run did not finish (interrupted (SIGINT) after 5 of 9 configs: .*only the configs it reached are ranked$' out.txt ||
    fail "an unfinished run is not said to be one: $(head -5 out.txt)"
grep -Eq '^ +[0-9]+ +32x8 fp32 recompute=none shard=none .* noisy ' out.txt ||
    fail "a noisy row is not ranked with its flag beside it"
grep -q 'left out, no step time to rank (not recommended): 1 did not run' out.txt ||
    fail "the oom row is not counted"
grep -q 'left aside: 2 rows of another effective batch, 3 rows of another device count' out.txt ||
    fail "the rows of other E and devices are not counted once"
[ -s err.txt ] && fail "stderr on success: $(cat err.txt)"

# An ok row without a step time is left out for that, not for its status.
awk -F, -v OFS=, '/^#/ { print; next } !h { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; print; next }
    $c["status"] == "ok" && $c["effective_batch"] == 256 && $c["devices"] == 1 && !done {
        $c["step_ms_median"] = ""; done = 1; print }' "$fixture" > nostep.csv
"$ACCUBENCH" plan --recommend --effective 256 --mem-cap 1G --from nostep.csv > out.txt 2>&1
grep -q 'no step time (step_ms_median is empty): nothing to rank it by' out.txt &&
    ! grep -q 'status ok' out.txt || fail "an ok row without a step time: $(tail -n 2 out.txt)"

# Sharding on 2 devices: ZeRO-1 fits where the unsharded does not.
"$ACCUBENCH" plan --recommend --effective 256 --devices 2 --mem-cap 96000000 \
    --from "$fixture" > out.txt 2>&1 || fail "2 devices exited $?"
grep -Eq '^ +1 +128x1 fp32 recompute=none shard=optimizer .*recommended$' out.txt ||
    fail "shard=optimizer is not recommended at 2 devices: $(cat out.txt)"

# No configuration fits: exit 1, each one's reason.
"$ACCUBENCH" plan --recommend --effective 256 --mem-cap 69000000 --from "$fixture" \
    > out.txt 2>&1; rc=$?
[ "$rc" = 1 ] && grep -q 'none reaches effective batch 256 within the cap' out.txt ||
    fail "a cap nothing fits exited $rc: $(cat out.txt)"

# A file from before the recompute and shard columns: each reads none.
"$ACCUBENCH" plan --recommend --effective 256 --model S --mem-cap 8G \
    --from "$root/tests/fixtures/default.csv" > out.txt 2> err.txt; rc=$?
[ "$rc" -le 1 ] || { cat err.txt; fail "default.csv exited $rc"; }
grep -q 'recompute=none shard=none' out.txt || fail "an old file's levers do not read none"

# One short measuring run, no --from: every split and recompute value, in
# each dtype the CPU computes in (fp32, bf16), lands in --csv and is ranked
# (a budget of 50 ms a config: the rows and their listing are the point).
"$ACCUBENCH" plan --recommend --effective 8 --model tiny --mem-cap 1G --budget-s 0.05 --csv measured.csv \
    > out.txt 2> err.txt; rc=$?
[ "$rc" -le 1 ] || { cat out.txt err.txt; fail "the measuring run exited $rc"; }
grep -q 'rows written to measured.csv' out.txt || fail "the measured rows' file is not named"
rows=$(grep -v '^#' measured.csv | tail -n +2 | wc -l)
[ "$rows" = $((8 * n_rc)) ] ||
    fail "the measuring run wrote $rows rows, want $((8 * n_rc)) (8x1 4x2 2x4 1x8, each recompute value, fp32 and bf16)"
# count_in COLUMN VALUE: the rows whose COLUMN (by name) holds VALUE
count_in() { awk -F, -v name="$1" -v want="$2" '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } n += ($c == want) } END { print n + 0 }' measured.csv; }
for r in $recomputes; do
    n=$(count_in recompute "$r")
    [ "$n" = 8 ] || fail "measured.csv holds $n recompute=$r rows, want 8"
done
for d in fp32 bf16; do
    n=$(count_in dtype "$d")
    [ "$n" = $((4 * n_rc)) ] || fail "measured.csv holds $n $d rows, want $((4 * n_rc))"
done
grep -q '^not measured: tf32' out.txt || fail "tf32, which the CPU refuses, is not said"
# one sweep: all the rows, both dtypes, timed in one comparison's rounds,
# so a bf16 candidate against an fp32 one is a paired ratio
comparisons=$(awk -F, '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "comparison") c = i; h = 1; next } print $c }' measured.csv | sort -u | wc -l)
[ "$comparisons" = 1 ] || fail "the dtypes were timed in $comparisons comparisons, want 1 (one sweep, the same rounds)"
# Each configuration is listed, or counted among the slower ones left out
# (which of them is flagged depends on the machine's noise).
considered $((8 * n_rc)) "measured configurations"
if [ "$rc" = 0 ]; then
    grep -Eq '^ +1 .* recommended$' out.txt || fail "exit 0 without a recommendation"
else
    grep -q '^left out:' out.txt || fail "exit 1 without saying why each was left out"
fi

# The weights-alone check holds the cap to the dtype of least state, in
# whatever order --dtype lists them: tiny's fp32 state (149788 bytes) and
# a micro-batch fit 160000, its bf16 state (168508, the compute copy
# beside it) does not; --dtype bf16,fp32 once refused the cap outright.
"$ACCUBENCH" plan --recommend --effective 2 --model tiny --dtype bf16,fp32 --mem-cap 160000 \
    --budget-s 0.05 --csv order.csv > out.txt 2> err.txt; rc=$?
[ "$rc" = 0 ] || { cat out.txt err.txt; fail "--dtype bf16,fp32 under fp32's fit exited $rc"; }
grep -Eq '^ +1 +[0-9]+x[0-9]+ fp32 .* recommended$' out.txt ||
    fail "no fp32 candidate recommended with bf16 listed first: $(cat out.txt)"

# The frontier profile's rows (shrunk to small models), planned from: each
# recompute value is a candidate of its own.
"$ACCUBENCH" run --profile frontier --model tiny,gpt-tiny --effective 16 --micro 4,16 \
    --budget-s 0.1 --min-samples 3 --noise-windows 0 --csv frontier.csv > out.txt 2> err.txt ||
    { cat err.txt; fail "the frontier profile exited $?"; }
"$ACCUBENCH" plan --recommend --effective 16 --model gpt-tiny --mem-cap 1G --from frontier.csv \
    > out.txt 2> err.txt; rc=$?
[ "$rc" -le 1 ] || { cat err.txt; fail "planning from the frontier profile exited $rc"; }
for r in $recomputes; do
    n=$(grep -c "^cpu,[^,]*,gpt-tiny,.*,$r," frontier.csv)
    [ "$n" = 2 ] || fail "frontier.csv holds $n gpt-tiny recompute=$r rows, want 2"
done
considered $((2 * n_rc)) "gpt-tiny configurations"

# The report's "Within a memory cap": the cap used, the recommendation and
# the faster one left out, the frontier chart with the cap as its line;
# without a cap, the front only; with no row that ran, no chart and why.
cp "$fixture" f.csv
"$ACCUBENCH" report f.csv --mem-cap 96000000 > out.txt 2> err.txt || fail "report exited $?"
grep -q '^## Within a memory cap' f.md || fail "the report has no 'Within a memory cap'"
grep -q 'Cap: 91.6 MiB (96000000 bytes) per device, from --mem-cap' f.md ||
    fail "the section does not say which cap"
grep -q 'Recommended under the cap: 128x2 fp32 recompute=gelu' f.md ||
    fail "the section does not recommend 128x2 gelu"
# 256x1 none's median (60 ms) is under the pick's (63 ms), but its ratio
# to it, 0.952x [0.922..0.984], does not clear the rule's 2%: not faster,
# as plan --recommend says; the pick names the ones it is not separated from.
grep -q 'Left out, and by the rule not yet separated from the recommended: 256x1 fp32 recompute=none .*over the cap by 14000000 bytes' f.md ||
    fail "the section does not name the one left out as the rule sees it"
grep -q 'Faster but left out: 256x1' f.md && fail "a median under the pick's read as faster"
grep -q 'Recommended under the cap: 128x2 fp32 recompute=gelu.*; not separated by the rule from 64x4 fp32 recompute=none shard=none[^(]* (63.50 ms, 90.6 MiB; not yet separated)' f.md ||
    fail "the recommendation does not name the ones the rule ties with it"
if command -v gnuplot > /dev/null 2>&1; then
    grep -q 'cap 91.6 MiB' f.frontier.svg || fail "the frontier chart draws no cap line"
    grep -q '128x2 recompute gelu' f.frontier.svg || fail "the chart's points are not labelled"
    grep -q 'Pareto front' f.frontier.svg || fail "the chart draws no front"
fi
"$ACCUBENCH" report f.csv --out nocap > out.txt 2>&1 || fail "report without a cap exited $?"
grep -q 'No cap was given .*front only' nocap/f.md || fail "no cap: the section does not say so"
grep -q 'Recommended under the cap' nocap/f.md && fail "no cap, yet a recommendation under one"
# "The fastest split under a memory cap" offers ways to the batch: the
# fixture's mean-of-means row (64x4) is a known-wrong gradient, not one,
# and stood there as a second unnamed "S (fp32)" line at E = 256
awk '/^## The fastest split under a memory cap/ { on = 1; next } /^## / { on = 0 }
     on && /^\| *256 \| S \(fp32\) +\|/ { print }' nocap/f.md > fastest.txt
[ "$(wc -l < fastest.txt)" -eq 1 ] && grep -q '| 256x1 ' fastest.txt ||
    fail "the fastest split at E = 256 lists a known-wrong reduction's row: $(cat fastest.txt)"
sed 's/,ok,\([^,]*\)$/,error,\1/' f.csv > none.csv
grep -q ',ok,' none.csv && fail "none.csv still has an ok row"
"$ACCUBENCH" report none.csv > out.txt 2>&1 || fail "report of no ok row exited $?"
grep -q 'Nothing to set against a cap' none.md || fail "no ok row: the section does not say why"
[ -e none.frontier.svg ] && fail "a frontier chart of no ok row"

# Bad input: one line on stderr, exit 2.
bad() {
    want=$1
    shift
    "$ACCUBENCH" plan "$@" > out.txt 2> err.txt; rc=$?
    [ "$rc" = 2 ] || fail "plan $*: exit $rc, want 2"
    [ "$(wc -l < err.txt)" = 1 ] || fail "plan $*: not one line: $(cat err.txt)"
    grep -q -- "$want" err.txt || fail "plan $*: '$(cat err.txt)' does not say '$want'"
}
bad 'needs --effective' --recommend --mem-cap 1G --from "$fixture"
bad 'needs --mem-cap' --recommend --effective 256 --from "$fixture"
bad "got '1.5GB'" --recommend --effective 256 --mem-cap 1.5GB --from "$fixture"
bad 'below the least any configuration needs.*68000000 bytes' \
    --recommend --effective 256 --mem-cap 10M --from "$fixture"
bad 'below what the weights alone need' --recommend --effective 8 --model S --mem-cap 1M
bad 'no row at effective batch 100' --recommend --effective 100 --mem-cap 1G --from "$fixture"
bad 'name one with --model' --recommend --effective 256 --mem-cap 8G \
    --from "$root/tests/fixtures/default.csv"
bad 'cannot open' --recommend --effective 256 --mem-cap 1G --from no-such.csv
bad 'measures on one device' --recommend --effective 256 --devices 2 --mem-cap 1G
bad 'known:' --recommend --effective 256 --mem-cap 1G --dtype fp64
bad '--from goes with --recommend' --effective 256 --max-micro 8 --from "$fixture"
bad '--budget-s goes with a measuring --recommend' --recommend --effective 256 --mem-cap 1G \
    --from "$fixture" --budget-s 1
bad '--budget-s goes with a measuring --recommend, not with the arithmetic' \
    --effective 256 --max-micro 8 --budget-s 1
# what to measure, with a file to rank: it once ranked the file's bf16 rows
# for --dtype fp32, and its cpu rows for --backend cuda, without a word
for opt in "--dtype fp32" "--backend cuda" "--recompute block" "--optimizer sgd" "--csv x.csv"; do
    # shellcheck disable=SC2086
    bad "${opt%% *} goes with .*a measuring --recommend, not with --recommend --from: nothing is measured there" \
        --recommend --effective 256 \
        --mem-cap 1G --from "$fixture" $opt
done
# an option the job does not read was dropped unsaid (the arithmetic never
# looked at a cap, --noise at an effective batch, --fit at a model)
bad '--mem-cap goes with --find-max-micro, .*, not with the arithmetic' \
    --effective 256 --max-micro 32 --mem-cap 16G
bad '--model goes with .*, not with the arithmetic' --effective 256 --max-micro 32 --model M
bad '--effective goes with .*, not with --noise' --noise "$fixture" --effective 64
bad '--model goes with .*, not with --fit' --fit "$fixture" --model S
bad '--reserve goes with --find-max-micro' --recommend --effective 256 --mem-cap 1G \
    --from "$fixture" --reserve 1M
bad '--reserve goes with --find-max-micro and --mem-cap' --find-max-micro --effective 8 --reserve 1M
bad '--table goes with --time-to-target, not with --recommend --goal time' --recommend \
    --goal time --from "$fixture" --table
bad '--goal time goes with --recommend --from FILE.csv' --recommend --goal time --effective 8 \
    --mem-cap 1G
bad '--target-loss goes with --time-to-target and --recommend --goal time, not with --recommend --from' \
    --recommend --effective 256 --mem-cap 1G \
    --from "$fixture" --target-loss 2
bad '--effective goes with .*, not with --recommend --goal time' --recommend --goal time \
    --from "$fixture" --effective 256
# a measuring run plans only the recompute values the kind runs: the
# Llama recomputes no GELU (it has none), so no row skipped for it
"$ACCUBENCH" plan --recommend --backend cpu --effective 4 --model llama-tiny --mem-cap 4M \
    --dtype fp32 --budget-s 0.05 --csv llama.csv > out.txt 2> err.txt ||
    fail "llama-tiny measured: exit $?: $(cat err.txt)"
awk -F, '/^#/ { next } !h { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; next }
    $c["recompute"] == "gelu" || $c["status"] != "ok" { bad = 1 } END { exit bad }' llama.csv ||
    fail "a recompute value the Llama cannot run was measured: $(cat llama.csv)"
grep -q 'no step time to rank' out.txt && fail "rows that did not run: $(cat out.txt)"
echo "e2e_recommend: ok"
