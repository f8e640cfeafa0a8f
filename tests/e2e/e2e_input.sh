#!/bin/sh
# What the user types and what a results file holds, at the edges:
# - every numeric option of run, plan, report and compare refuses a bad or
#   empty value with one line that echoes it whole (suffix and all);
# - --mem-cap 0 is no cap; a cap under the peak GEMM's matrices leaves the
#   peak (and MFU) measured;
# - an entry named twice in a list option runs once, with a note;
# - report and compare refuse values that cannot be (NaN, inf, negative,
#   zero sizes) naming file, line and column, and read a CSV with a UTF-8
#   byte order mark and CRLF line ends as spreadsheets write it.
set -u
root=$ACCUBENCH_ROOT
fail=0
bad() { echo "FAILED: $*"; fail=1; }
mkdir out
cp "$root/tests/fixtures/default.csv" base.csv

# expect_refusal TEXT ARGS...: exit 2, one stderr line containing 'TEXT'
# (quoted, as typed), nothing written.
expect_refusal() {
    text=$1; shift
    "$ACCUBENCH" "$@" > stdout.txt 2> stderr.txt
    rc=$?
    if [ "$rc" -ne 2 ] || [ "$(wc -l < stderr.txt)" -ne 1 ] ||
       ! grep -qF -- "'$text'" stderr.txt; then
        bad "accubench $* -> exit $rc, want 2 and one line echoing '$text':"; cat stderr.txt
    fi
    [ -z "$(ls out)" ] || { bad "accubench $* left files: $(ls out)"; rm -rf out/*; }
}

run_numeric="effective micro lr steps warmup min-samples max-samples budget-s max-step-s
             max-noise seed buffers mem-cap trace-steps"
for key in $run_numeric; do
    for v in 7x "" 99999999999999999999999x; do
        expect_refusal "$v" run --out out --profile quick --$key "$v"
    done
    expect_refusal "" run --out out --profile quick --$key=
done
for key in csv trace; do
    expect_refusal "" run --out out --profile quick --$key ""
done
expect_refusal "" run --profile quick --out ""
expect_refusal 99999999999T run --out out --profile quick --mem-cap 99999999999T
expect_refusal 12Q run --out out --profile quick --mem-cap 12Q
# (each key once: an option named twice is refused for that alone)
for key in effective max-micro devices mem-cap buffers; do
    case $key in
        effective) job="--max-micro 8" ;;
        max-micro) job="--effective 64" ;;
        *) job="--effective 64 --max-micro 8" ;;
    esac
    for v in 7x ""; do
        # shellcheck disable=SC2086
        expect_refusal "$v" plan $job --$key "$v"
    done
done
expect_refusal 99999999999T plan --find-max-micro --model tiny --mem-cap 99999999999T
for v in 7x "" 99999999999T; do
    expect_refusal "$v" report base.csv --no-charts --mem-cap "$v"
done
for v in 7x "" 5%; do
    expect_refusal "$v" compare base.csv base.csv --min-diff "$v"
done

# A tiny sweep, quickly: $small, then the options under test; $bare where
# a line names its own model or split (an option named twice is refused).
bare="--backend cpu --profile quick --steps 2 --warmup 0 --trace-steps 0 --quiet"
small="$bare --model tiny --effective 8 --micro 8"
rows_of() { grep -v '^#' "$1" | tail -n +2 | wc -l; }

"$ACCUBENCH" run $small --mem-cap 0 --csv cap0.csv 2> err.txt ||
    { bad "--mem-cap 0 (no cap) was refused:"; cat err.txt; }

# A cap far under the peak GEMM's three matrices: the configs fit, the
# peak is measured all the same (outside the cap), MFU is a number.
"$ACCUBENCH" run $bare --model tiny --effective 8 --micro 4,8 --mem-cap 1M --csv cap1m.csv 2> err.txt; rc=$?
[ "$rc" -eq 0 ] || { bad "a 1M cap: exit $rc"; cat err.txt; }
grep -q '^# peak_gemm_tflops: [0-9]' cap1m.csv || bad "a 1M cap: no peak GEMM rate measured"
grep -q '^# peak_gemm_memory: .*outside the memory cap' cap1m.csv ||
    bad "a 1M cap: the metadata does not say where the peak was measured"
awk -F, '/^#/ { next } !h { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; next }
         $c["status"] == "ok" && ($c["mfu_pct"] == "" || $c["mfu_pct"] == "nan") { bad = 1 }
         END { exit bad }' cap1m.csv || bad "a 1M cap: MFU missing in an ok row"
[ "$(rows_of cap1m.csv)" -eq 2 ] || bad "a 1M cap: $(rows_of cap1m.csv) rows, want 2"

# Entries named twice run once, each list option alike; a note says so
# (but --micro, where twice is an A/A check: below).
"$ACCUBENCH" run $bare --effective 8,8 --micro 8 --model tiny,tiny --mode async,async \
    --reduction sum,sum --csv dup.csv 2> err.txt; rc=$?
[ "$rc" -eq 0 ] || { bad "duplicates: exit $rc"; cat err.txt; }
[ "$(rows_of dup.csv)" -eq 1 ] || bad "duplicates: $(rows_of dup.csv) rows, want 1"
for key in effective model mode reduction; do
    grep -q -- "--$key '.*' names an entry more than once: each runs once" err.txt ||
        bad "duplicates: no note for --$key: $(cat err.txt)"
done
# a learning rate named twice, however spelled, trains its curves once
"$ACCUBENCH" run $bare --effective 8 --micro 8 --model tiny --train-steps 2 \
    --lr-grid 0.1,0.10 --csv duplr.csv 2> err.txt; rc=$?
[ "$rc" -eq 0 ] || { bad "a rate named twice: exit $rc"; cat err.txt; }
grep -q -- "--lr-grid '0.1,0.10' names an entry more than once: each runs once" err.txt ||
    bad "a rate named twice: no note: $(cat err.txt)"
[ "$(grep -vc '^#' duplr.curves.csv)" -eq 5 ] ||
    bad "a rate named twice: $(grep -vc '^#' duplr.curves.csv) lines, want a header and 2 steps x 2 orders"
# two rates alike in the curves file's 7 digits are one rate there: once
"$ACCUBENCH" run $bare --effective 8 --micro 8 --model tiny --train-steps 2 \
    --lr-grid 0.001,0.0010000001 --csv duplr7.csv 2> err.txt; rc=$?
[ "$rc" -eq 0 ] && [ "$(grep -vc '^#' duplr7.curves.csv)" -eq 5 ] &&
    "$ACCUBENCH" plan --time-to-target duplr7.csv >/dev/null 2>>err.txt ||
    bad "rates alike in 7 digits: exit $rc, $(grep -vc '^#' duplr7.curves.csv) lines: $(cat err.txt)"
# two rates apart in the 5th digit: two runs of curves, each summary line
# naming its own rate as the rows do
"$ACCUBENCH" run $bare --effective 8 --micro 8 --model tiny --train-steps 2 \
    --lr-grid 0.001,0.0010001 --csv lr5.csv 2> err.txt
[ "$(grep -c '^# curves .* lr=0.001 steps' lr5.curves.csv)" -eq 1 ] &&
    [ "$(grep -c '^# curves .* lr=0.0010001 steps' lr5.curves.csv)" -eq 1 ] ||
    bad "rates apart in the 5th digit: the summaries read $(grep '^# curves' lr5.curves.csv)"

# A micro-batch named twice: two rows, arms 1 and 2 of one config (an A/A
# check); three times: refused in one line, as is a --rounds it cannot run.
"$ACCUBENCH" run $bare --effective 8 --micro 8,8 --model tiny --csv aa.csv 2> err.txt; rc=$?
[ "$rc" -eq 0 ] || { bad "A/A: exit $rc"; cat err.txt; }
arms=$(awk -F, '/^#/ { next } !h { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; next }
                { printf "%s:%s ", $c["micro_batch"], $c["arm"] }' aa.csv)
[ "$arms" = "8:1 8:2 " ] || bad "A/A: micro:arm of the rows are '$arms', want '8:1 8:2 '"
for args in "--micro 8,8,8" "--micro 8 --rounds 0" "--micro 8 --rounds -2" \
            "--micro 8 --rounds some" "--micro 8 --rounds 41"; do
    "$ACCUBENCH" run $bare --effective 8 --model tiny $args --csv refused.csv > out.txt 2> err.txt
    rc=$?
    [ "$rc" -eq 2 ] && [ "$(wc -l < err.txt)" -eq 1 ] && [ ! -e refused.csv ] ||
        bad "$args: exit $rc, $(wc -l < err.txt) lines on stderr: $(cat err.txt)"
done
grep -q 'three\|3 times' err.txt 2>/dev/null || true

# Values that cannot be: exit 2, one line naming file, line and column.
# edit COLUMN VALUE: base.csv with COLUMN of its first data row set to VALUE.
edit() {
    awk -F, -v OFS=, -v col="$1" -v val="$2" '
        /^#/ { print; next }
        !h { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; print; next }
        !done { $c[col] = val; done = 1 }
        { print }' base.csv > edited.csv
}
line=$(grep -n -v '^#' base.csv | sed -n 2p | cut -d: -f1)
for case in step_ms_median:nan step_ms_median:NaN step_ms_median:inf step_ms_median:-1.5 \
            step_ms_median:0 step_ms_p90:-inf pass_ms:0 micro_batch:-4 micro_batch:0 \
            accum_steps:0 effective_batch:-64 devices:0 samples_per_s:infinity \
            mem_need_bytes:-1 gpu_busy_pct:-3 grad_rel_err:nan; do
    col=${case%%:*} val=${case#*:}
    edit "$col" "$val"
    for cmd in "report edited.csv --no-charts" "compare base.csv edited.csv" \
               "compare edited.csv base.csv"; do
        "$ACCUBENCH" $cmd > stdout.txt 2> stderr.txt; rc=$?
        if [ "$rc" -ne 2 ] || [ "$(wc -l < stderr.txt)" -ne 1 ] ||
           ! grep -qF "edited.csv:$line: column $col: '$val'" stderr.txt; then
            bad "$col = $val: accubench $cmd -> exit $rc:"; cat stderr.txt
        fi
    done
done
ls edited.md > /dev/null 2>&1 && bad "a report was written from a file with impossible values"

# A median outside its own 95% interval (or p10..p90) is no measurement
# either: every reader refuses the row, naming file, line and both columns.
# band LO_COL HI_COL LO_FACTOR HI_FACTOR: base.csv with the first data
# row's LO_COL and HI_COL set to its median times the factors.
band() {
    awk -F, -v OFS=, -v lo="$1" -v hi="$2" -v fl="$3" -v fh="$4" '
        /^#/ { print; next }
        !h { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; print; next }
        !done { m = $c["step_ms_median"] + 0; $c[lo] = m * fl; $c[hi] = m * fh; done = 1 }
        { print }' base.csv > edited.csv
}
for case in "step_ms_ci_lo step_ms_ci_hi 2 3 95% interval" \
            "step_ms_ci_lo step_ms_ci_hi 0.25 0.5 95% interval" \
            "step_ms_p10 step_ms_p90 1.5 2 p10..p90"; do
    set -- $case
    lo=$1 hi=$2
    band "$1" "$2" "$3" "$4"
    shift 4
    for cmd in "report edited.csv --no-charts" "compare base.csv edited.csv" \
               "plan --recommend --from edited.csv --effective 256 --mem-cap 1T"; do
        "$ACCUBENCH" $cmd > stdout.txt 2> stderr.txt; rc=$?
        if [ "$rc" -ne 2 ] || [ "$(wc -l < stderr.txt)" -ne 1 ] ||
           ! grep -qF "edited.csv:$line: step_ms_median " stderr.txt ||
           ! grep -qF "lies outside its $*, $lo..$hi " stderr.txt; then
            bad "median outside $lo..$hi ($case): accubench $cmd -> exit $rc:"; cat stderr.txt
        fi
    done
done
# the band as a run writes it, the median inside: read as before
band step_ms_ci_lo step_ms_ci_hi 0.9 1.1
"$ACCUBENCH" compare base.csv edited.csv > out.txt 2> err.txt ||
    { bad "a median inside its edited interval was refused:"; cat err.txt; }
ls edited.md > /dev/null 2>&1 && bad "a report was written from a median outside its interval"

# run --append onto a file whose rows the readers refuse: refused before
# anything is measured (the rows would land in a file no report reads),
# the file as it was.
"$ACCUBENCH" run $small --budget-s 0.05 --csv mine.csv > /dev/null 2>&1 ||
    bad "the run to append to failed"
awk -F, -v OFS=, '/^#/ { print; next } !h { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; print; next }
    { $c["step_ms_ci_lo"] = $c["step_ms_median"] * 2; $c["step_ms_ci_hi"] = $c["step_ms_median"] * 3 }
    { print }' mine.csv > damaged.csv
cp damaged.csv damaged.kept
"$ACCUBENCH" run $small --budget-s 0.05 --csv damaged.csv --append \
    > stdout.txt 2> stderr.txt; rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l < stderr.txt)" -eq 1 ] &&
    grep -qF -- "--append damaged.csv: damaged.csv:" stderr.txt &&
    grep -qF "lies outside its 95% interval" stderr.txt ||
    bad "run --append onto a damaged file: exit $rc, want 2 and one line: $(cat stderr.txt)"
grep -q 'peak GEMM' stdout.txt && bad "run --append onto a damaged file measured before refusing"
cmp -s damaged.csv damaged.kept || bad "run --append changed the damaged file it refused"

# What spreadsheets write: a byte order mark, CRLF line ends.
{ printf '\357\273\277'; sed 's/$/\r/' base.csv; } > crlf.csv
"$ACCUBENCH" report crlf.csv --no-charts > /dev/null 2> err.txt ||
    { bad "report of a CSV with a BOM and CRLF failed:"; cat err.txt; }
"$ACCUBENCH" report base.csv --no-charts > /dev/null 2> err.txt || bad "report of base.csv failed"
if [ -f crlf.md ]; then
    sed "s/crlf/base/g" crlf.md | cmp -s - base.md ||
        bad "the BOM/CRLF report differs from the plain one"
fi
"$ACCUBENCH" compare base.csv crlf.csv > out.txt 2> err.txt ||
    { bad "compare with a BOM/CRLF file:"; cat err.txt; }
grep -q '; 0 only in base, 0 only in new$' out.txt ||
    bad "compare with a BOM/CRLF file: $(tail -n 1 out.txt)"
exit $fail
