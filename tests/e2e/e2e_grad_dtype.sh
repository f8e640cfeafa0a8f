#!/bin/sh
# --grad-dtype fp32,bf16 on the GPT (gpt-tiny) at K = 1, 4, 16: a row per
# value and split, each ok; at every K the bf16 accumulator's error against
# the fp32 full-batch gradient is at least the fp32 one's and above zero;
# at K = 1 it is one bf16 rounding of the exact window (at most 2^-9); it
# is larger at K = 16 than at K = 1 (what the axis is for); a row over its
# tolerance says so in its note and stays ok, one within it does not; the
# memory need is the same for both (the rounding is emulated on fp32
# storage) and the notes say so; the report says up to which K the bf16
# accumulator passes; an unknown value is refused with the known ones, and
# loss curves of both values at once; with ranks the bf16 rows are skipped
# with the reason.
set -u
. "$ACCUBENCH_ROOT/tests/e2e/mpi_env.sh"
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
col() { awk -F, -v name="$1" '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } print $c }' "$2"; }
line() { col "$1" "$2" | tr '\n' ' '; }
# The value of column $1 in the row of grad_dtype $2 at K $3.
at() {
    awk -F, -v name="$1" -v g="$2" -v k="$3" '!/^#/ {
        if (!h) { for (i = 1; i <= NF; i++) { if ($i == name) c = i; if ($i == "grad_dtype") gc = i;
                  if ($i == "accum_steps") kc = i }; h = 1; next }
        if ($gc == g && $kc == k) print $c }' gpt.csv
}
# awk's truth of a comparison of numbers.
holds() { awk "BEGIN { exit !($1) }"; }

"$ACCUBENCH" run --backend cpu --model gpt-tiny --effective 16 --micro 16,4,1 \
    --grad-dtype fp32,bf16 --steps 2 --budget-s 0.05 --warmup 0 --trace-steps 0 \
    --noise-windows 0 --rounds off --csv gpt.csv >out.txt 2>err.txt
check '[ $? -eq 0 ]' "the GPT runs: $(cat err.txt)"
check '[ "$(line grad_dtype gpt.csv)" = "fp32 bf16 fp32 bf16 fp32 bf16 " ]' \
    "a row per value, innermost: $(line grad_dtype gpt.csv)"
check '[ "$(col status gpt.csv | sort -u)" = "ok" ]' \
    "every row ok: $(line status gpt.csv) $(col note gpt.csv)"
check 'grep -q "^# grad_dtype: fp32 (.*); bf16 (.*emulated on fp32 storage)" gpt.csv' \
    "the metadata describes both: $(grep '^# grad_dtype' gpt.csv)"

tol=$(awk 'BEGIN { printf "%.9g", 1e-5 + 1 / 256 }') # fp32's own and the accumulator's 2^-8
for k in 1 4 16; do
    f=$(at grad_rel_err fp32 $k) h=$(at grad_rel_err bf16 $k)
    check "holds '\"$h\" != \"\" && $h > 0 && $h >= $f'" "K=$k: bf16 $h >= fp32 $f, above 0"
    check '[ "$(at mem_need_bytes fp32 $k)" = "$(at mem_need_bytes bf16 $k)" ]' \
        "K=$k: the same memory need: $(at mem_need_bytes fp32 $k) $(at mem_need_bytes bf16 $k)"
    note=$(at note bf16 $k)
    check 'echo "$note" | grep -q "^gradient held in bf16: rounded after each micro-batch and emulated on fp32 storage (memory need fp32.s); fp32 compute: the accumulator alone rounds"' \
        "K=$k: the bf16 row says what it is: $note"
    if holds "$h > $tol"; then
        check 'echo "$note" | grep -q "grad_rel_err [0-9.e-]* over the bf16 accumulator.s 0.0039: the measurement and not a failure"' \
            "K=$k: over $tol, said so: $note"
    else
        check '! echo "$note" | grep -q "not a failure"' "K=$k: within $tol, nothing said: $note"
    fi
done
f1=$(at grad_rel_err fp32 1) h1=$(at grad_rel_err bf16 1) h16=$(at grad_rel_err bf16 16)
check "holds '$h1 <= $f1 + 2 ^ -9'" "K=1: one rounding, at most 2^-9 (+ fp32's $f1): $h1"
check "holds '$h16 > $h1'" "the error grows with K: K=16 $h16 over K=1 $h1"

# The report: the section, its table, and up to which K it passes.
"$ACCUBENCH" report gpt.csv --no-charts >/dev/null 2>err.txt
check '[ $? -eq 0 ]' "report: $(cat err.txt)"
check 'grep -q "^## How far can the gradient be accumulated in bf16?" gpt.md' "the report's section"
check 'grep -q "^- gpt-tiny, E = 16, fp32 compute, async: the bf16 accumulator \(passes\|is over\)" gpt.md' \
    "the report says where it passes: $(sed -n '/^## How far/,/^## [A-Z]/p' gpt.md)"
check '[ "$(grep -c "^### Effective batch 16: .*gradient accumulated in bf16 (" gpt.md)" -eq 1 ]' \
    "the bf16 rows' table is named: $(grep '^### ' gpt.md)"
# the findings hold each row to its own tolerance: a bf16 accumulator's
# error within its 0.0039 is no normalisation bug
"$ACCUBENCH" run --backend cpu --model tiny --effective 8 --micro 2,8 --grad-dtype fp32,bf16 \
    --steps 2 --trace-steps 0 --noise-windows 0 --rounds off --csv mlp.csv --quiet >/dev/null 2>&1
"$ACCUBENCH" report mlp.csv --no-charts >/dev/null 2>err.txt
check 'grep -q "^- The largest relative error .* within the fp32 + bf16-accumulator tolerance of 0.0039: " mlp.md && ! grep -q "check the loss normalisation" mlp.md' \
    "the finding takes the accumulator's tolerance: $(grep "largest relative error" mlp.md) $(cat err.txt)"

# the rows again (a rerun appended): each config's first row, once a K
{ cat gpt.csv; grep -v '^#' gpt.csv | sed 1d; } >twice.csv
"$ACCUBENCH" report twice.csv --no-charts >/dev/null 2>err.txt
check '[ "$(sed -n "/^## How far/,/^## [A-Z]/p" twice.md | grep -c "^| gpt-tiny ")" -eq 3 ]' \
    "a rerun's rows are not listed again: $(sed -n '/^## How far/,/^## [A-Z]/p' twice.md) $(cat err.txt)"

# An unknown value: exit 2, one line with the known values, nothing run.
mkdir out
"$ACCUBENCH" run --backend cpu --out out --grad-dtype fp16 >stdout.txt 2>stderr.txt
rc=$?
check '[ $rc -eq 2 ] && [ "$(wc -l <stderr.txt)" -eq 1 ] && [ -z "$(ls out)" ]' \
    "unknown value: exit $rc, $(cat stderr.txt)"
check 'grep -qF "unknown grad-dtype '"'fp16'"' (known: fp32, bf16)" stderr.txt' \
    "the known values named: $(cat stderr.txt)"

# Loss curves of both at once: each accumulator a series of its own, in
# the curves file, its summary lines, the time to target and the chart.
"$ACCUBENCH" run --backend cpu --model tiny --effective 8,16 --micro 4 --grad-dtype fp32,bf16 \
    --train-steps 12 --budget-s 0.05 --noise-windows 0 --trace-steps 0 --csv gc.csv \
    >stdout.txt 2>stderr.txt
check '[ $? -eq 0 ]' "train-steps with both accumulators: $(cat stderr.txt)"
check '[ "$(awk -F, '"'"'$12 == 0 && $11 == "forward" { print $20 }'"'"' gc.curves.csv | sort | uniq -c | awk '"'"'{ printf "%s:%s ", $2, $1 }'"'"')" = "bf16:2 fp32:2 " ]' \
    "a curve per E and accumulator: $(awk -F, '$12 == 0 && $11 == "forward" { print $20 }' gc.curves.csv | tr '\n' ' ')"
check '[ "$(grep -c "^# curves .* grad_dtype=bf16 " gc.curves.csv)" -eq 2 ] && [ "$(grep -c "^# curves " gc.curves.csv)" -eq 4 ]' \
    "the summary lines name the bf16 accumulator: $(grep "^# curves" gc.curves.csv)"
# its distance from fp32's curve of the same split: measured on each bf16
# line (K = 2 and 4 roundings move a 12-step loss), on no fp32 line
check '[ "$(grep "^# curves .* grad_dtype=bf16 " gc.curves.csv | sed -n "s/.* accumulator_gap=\([^ ]*\)$/\1/p" | awk "\$1 > 0" | wc -l)" -eq 2 ] && ! grep "^# curves " gc.curves.csv | grep -v grad_dtype= | grep -q accumulator_gap' \
    "the accumulator gap on the bf16 lines alone: $(grep "^# curves" gc.curves.csv)"
"$ACCUBENCH" report gc.csv --no-charts >/dev/null 2>&1
check '[ "$(grep -c "; the bf16 accumulator [0-9.e-]* off the fp32 accumulator.s curve of the same split ([0-9.]* times the rounding gap)\.$" gc.md)" -eq 2 ]' \
    "the report sets each bf16 curve beside fp32's: $(grep "grad_dtype=bf16 steps" gc.md)"
# a curve that diverged: the gap is inf, said as such (no "inf times")
sed 's/ accumulator_gap=[^ ]*$/ accumulator_gap=inf/' gc.curves.csv > inf.curves.csv && cp gc.csv inf.csv
"$ACCUBENCH" report inf.csv --no-charts >/dev/null 2>&1
check '[ "$(grep -c "; the bf16 accumulator.s curve or the fp32 one of the same split diverged\.$" inf.md)" -eq 2 ] && ! grep -q "inf times" inf.md' \
    "a diverged accumulator curve said so: $(grep "grad_dtype=bf16 steps" inf.md)"
"$ACCUBENCH" plan --time-to-target gc.csv >ttt.txt 2>&1
check '[ $? -eq 0 ] && grep -q "^tiny (cpu, fp32, async, gradient accumulated in bf16): target" ttt.txt && grep -q "^tiny (cpu, fp32, async): target" ttt.txt' \
    "time to target per accumulator: $(grep "^tiny" ttt.txt)"
if command -v gnuplot >/dev/null; then
    gnuplot -e "csv='gc.csv'" "$ACCUBENCH_ROOT/plots/curves.gp" >plot.txt 2>&1
    check '[ $? -eq 0 ] && [ ! -s plot.txt ] && grep -c "gradient in bf16" gc.curves.svg | grep -qx 2' \
        "the chart draws each accumulator's panels: $(cat plot.txt)"
fi

# With ranks: fp32 runs, bf16 is a skipped row with the reason.
$MPIRUN -np 2 "$ACCUBENCH" run --backend cpu --model tiny --effective 8 --micro 4 \
    --grad-dtype fp32,bf16 --steps 2 --budget-s 0.05 --warmup 0 --trace-steps 0 --noise-windows 0 \
    --rounds off --csv dp.csv >out.txt 2>err.txt
check '[ $? -eq 0 ]' "two ranks run: $(cat err.txt)"
check '[ "$(line status dp.csv)" = "ok skipped " ]' "fp32 ok, bf16 skipped: $(line status dp.csv)"
check 'grep -q "bf16 gradient accumulator is measured on one device" dp.csv' \
    "the skipped row says why: $(col note dp.csv)"
exit $fail
