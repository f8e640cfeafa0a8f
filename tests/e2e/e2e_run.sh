#!/bin/sh
# A real CPU run: the abc profile's three rows, correct gradients, the
# columns the charts read; plan's arithmetic; an interrupted sweep keeps
# what it measured.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }

"$ACCUBENCH" run --backend cpu --profile abc --budget-s 0.3 --min-samples 3 \
    --trace-steps 1 --csv abc.csv >run.txt 2>err.txt
check '[ $? -eq 0 ]' "abc run exits 0: $(cat err.txt)"
check '[ -f abc.csv ]' "abc.csv written"
rows=$(grep -v '^#' abc.csv | tail -n +2)
check '[ $(echo "$rows" | wc -l) -eq 3 ]' "three rows"
# columns by name, so the order can change without breaking this test
col() { awk -F, -v name="$1" '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } print $c }' abc.csv; }
check '[ "$(col micro_batch | tr "\n" " ")" = "8 16 64 " ]' "micro-batches 8 16 64"
check '[ "$(col accum_steps | tr "\n" " ")" = "8 4 1 " ]' "accumulation 8 4 1"
check '[ "$(col status | tr "\n" " ")" = "ok ok ok " ]' "all ok"
for e in $(col grad_rel_err); do
    check "awk 'BEGIN { exit !($e < 1e-5) }'" "grad_rel_err $e < 1e-5"
done
for c in step_ms_median samples_per_s mfu_pct tflops dispatches_per_step pass_ms; do
    for v in $(col $c); do
        check "awk 'BEGIN { exit !($v > 0) }'" "$c = $v > 0"
    done
done
d=$(col dispatches_per_step | tr "\n" " ")
check "echo $d | awk '{ exit !(\$1 > \$2 && \$2 > \$3) }'" "dispatches per step grow with K: $d"
for key in tool_version git_revision date host backend device blas_core profile seed \
           peak_gemm_tflops; do
    check "grep -q '^# $key: .' abc.csv" "metadata $key"
done
check "grep -qx '# modes: async (no host sync inside a step)' abc.csv" "metadata modes: $(grep '^# modes' abc.csv)"
# what the report needs to know of the backend, in words
check "grep -qx '# backend_caps: dispatch-is-device-work shares-host-memory' abc.csv" \
    "metadata backend_caps"

# plan
"$ACCUBENCH" plan --effective 256 --max-micro 32 >plan.txt
check 'grep -q "accumulation steps: 8" plan.txt' "plan: 8 steps"
"$ACCUBENCH" plan --effective 100 --max-micro 32 --devices 2 >plan2.txt
check 'grep -q "last micro-batch:   18" plan2.txt' "plan: last micro-batch 18"
check 'grep -q "x 2 devices" plan2.txt' "plan: devices factor"
# devices that do not divide E take near-equal parts, as run deals them
"$ACCUBENCH" plan --effective 64 --max-micro 8 --devices 3 >plan3.txt 2>&1
check '[ $? -eq 0 ] && grep -qx "effective reached:  64 = 8 x 2 x 3 devices + 2 devices x 5 + 1 device x 6" plan3.txt' \
    "plan: ragged shares: $(cat plan3.txt)"
"$ACCUBENCH" plan --effective 7 --max-micro 2 --devices 3 >/dev/null 2>err.txt
check '[ $? -eq 2 ] && grep -q "a device would have none" err.txt' "plan: no part for a device: $(cat err.txt)"

# plan --find-max-micro probes the allocator under a cap
"$ACCUBENCH" plan --find-max-micro --model S --mem-cap 90M --backend cpu >probe.txt 2>&1
check '[ $? -eq 0 ]' "find-max-micro exits 0: $(cat probe.txt)"
micro=$(sed -n 's/^largest micro-batch: \([0-9]*\).*/\1/p' probe.txt)
check '[ -n "$micro" ] && [ "$micro" -gt 1 ]' "find-max-micro found $micro"
# one answer per dtype; one the CPU does not compute in says so (exit 1)
"$ACCUBENCH" plan --find-max-micro --model S --mem-cap 120M --backend cpu --dtype fp32,tf32,bf16 \
    >dtypes.txt 2>&1
check '[ $? -eq 1 ] && [ "$(grep -c "^largest micro-batch: [0-9]" dtypes.txt)" -eq 2 ]' \
    "find-max-micro: fp32 and bf16 answered: $(cat dtypes.txt)"
check 'grep -q "^model: *S (fp32" dtypes.txt && grep -q "^model: *S (bf16" dtypes.txt' "each answer names its dtype"
check 'grep -A1 "^dtype: *tf32" dtypes.txt | grep -q "skipped: .*tf32 needs --backend cuda"' \
    "tf32 on the CPU: skipped with its reason"
"$ACCUBENCH" plan --find-max-micro --model S --mem-cap 1M --backend cpu >/dev/null 2>err.txt
check '[ $? -eq 1 ] && [ $(wc -l <err.txt) -eq 1 ]' "nothing fits under 1M: exit 1, one line"

# a custom shape beside a preset: its own row, named as written (the CSV
# writes ; for ,), its own parameter count, a correct gradient
"$ACCUBENCH" run --backend cpu --model tiny,mlp:hidden=32,layers=2,classes=8 --effective 8 \
    --micro 4 --budget-s 0.1 --min-samples 3 --trace-steps 0 --csv custom.csv >custom.txt 2>&1
check '[ $? -eq 0 ]' "custom shape run exits 0"
custom=$(grep '^cpu,' custom.csv | cut -d, -f3,4 | tr "\n" " ")
check '[ "$custom" = "tiny,9360 mlp:hidden=32;layers=2;classes=8,2376 " ]' "custom model rows: $custom"
# the console: within 120 columns, the long name as mlp#1 with its legend
check '[ "$(awk "length > 120" custom.txt | wc -l)" -eq 0 ]' "console lines within 120 columns: $(cat custom.txt)"
check 'grep -qx "mlp#1 = mlp:hidden=32,layers=2,classes=8" custom.txt && grep -q "^mlp#1 " custom.txt' \
    "the custom name abbreviated, with its legend: $(cat custom.txt)"

# an uneven split and the known-wrong reductions
"$ACCUBENCH" run --backend cpu --model tiny --effective 10 --micro 3 \
    --reduction sum,mean-of-means,no-scale --budget-s 0.1 --min-samples 3 --csv uneven.csv >/dev/null 2>&1
check '[ $? -eq 0 ]' "uneven run exits 0"
last=$(awk -F, -v name=last_micro_batch '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } print $c; exit }' uneven.csv)
check '[ "$last" = "1" ]' "10 = 3 x 3 + 1: last micro-batch $last"
errs=$(awk -F, '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) { if ($i == "grad_rel_err") e = i; if ($i == "reduction") r = i } h = 1; next } print $r "=" $e }' uneven.csv | tr "\n" " ")
check "echo '$errs' | grep -Eq 'sum=[0-9.]+e-0[6-9]|sum=0 '" "sum is right: $errs"
check "echo '$errs' | grep -Eq 'mean-of-means=0\.[0-9]'" "mean-of-means is off: $errs"

# a micro-batch larger than one of the effective batches is left out there,
# said once; the other batch still runs it
"$ACCUBENCH" run --backend cpu --model tiny --effective 8,16 --micro 4,16 --steps 2 \
    --budget-s 0.05 --csv mixed.csv >mixed.txt 2>&1
check '[ $? -eq 0 ]' "micro 16 at effective 8 and 16 runs: $(cat mixed.txt)"
splits=$(awk -F, '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) { if ($i == "effective_batch") e = i; if ($i == "micro_batch") m = i } h = 1; next } print $e "/" $m }' mixed.csv | tr "\n" " ")
check '[ "$splits" = "8/4 16/4 16/16 " ]' "rows E/micro 8/4 16/4 16/16: $splits"
check '[ "$(grep -c "micro-batch 16 at effective batch 8 left out" mixed.txt)" -eq 1 ]' \
    "the left-out pair said once: $(cat mixed.txt)"

# SIGINT mid-sweep keeps the finished rows and leaves no temporary file
# 7 configs of at least 0.5 s each (a noise target no run meets), each
# timed alone so that its row is written as it ends (e2e_rounds: the same
# for a comparison timed in rounds)
"$ACCUBENCH" run --backend cpu --model tiny --effective 64 --micro pow2 --budget-s 0.5 \
    --max-noise 0.001 --rounds off --csv int.csv >int.txt 2>&1 &
pid=$!
for i in $(seq 1 1800); do # up to 180 s: a loaded or sanitized build is slow
    [ -f int.csv ] && [ "$(grep -vc '^#' int.csv)" -ge 3 ] && break # header + 2 rows
    sleep 0.1
done
kill -INT $pid
wait $pid
rc=$?
check '[ $rc -eq 130 ]' "interrupted run exits 130 (got $rc)"
n=$(grep -v '^#' int.csv | tail -n +2 | wc -l)
check '[ $n -ge 2 ] && [ $n -lt 7 ]' "interrupted CSV keeps its finished rows ($n)"
check '[ -z "$(ls | grep tmp)" ]' "no temporary file left"
exit $fail
