#!/bin/sh
# The gradient noise scale of one process: where a row has none, its note
# says why. At E = 2 as 1x2 over 2 windows, a window whose two examples
# include padding (about a quarter of the examples are) has one small batch
# with valid items, adds nothing, and leaves the estimate fewer than the 2
# windows it needs: the columns are empty, and the note says so.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
col() { awk -F, -v name="$1" '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } print $c }' "$2"; }

for seed in 1 2 3; do
    "$ACCUBENCH" run --backend cpu --model tiny --effective 2 --micro 1 --noise-windows 2 \
        --seed $seed --steps 2 --warmup 0 --budget-s 0.05 --trace-steps 0 --quiet \
        --csv n$seed.csv >/dev/null 2>err.txt
    check "[ $? -eq 0 ]" "seed $seed: exit 0: $(cat err.txt)"
    if [ -z "$(col grad_noise_scale n$seed.csv)" ]; then
        check "col note n$seed.csv | grep -q '^no noise scale: '" \
            "seed $seed: no noise scale and no reason: '$(col note n$seed.csv)'"
    fi
done
check "grep -q 'windows run had two small batches with valid items' n1.csv n2.csv n3.csv" \
    "no seed of three left a window short of valid items (the case this covers)"
# A stop reaches the noise pass between small batches: a pass that would
# run 400 s (a fifth of --budget-s 2000, 100000 windows of 64 small batches)
# ends within seconds of SIGTERM, its cut window dropped. Each window here
# is about a second of gpt-tiny at 64x1: a pass that looked only between
# windows would still stop, but one that looked at neither would run on.
"$ACCUBENCH" run --backend cpu --model gpt-tiny --effective 64 --micro 1 \
    --noise-windows 100000 --budget-s 2000 --steps 1 --warmup 0 --trace-steps 0 --quiet \
    --csv stop.csv >stop.txt 2>&1 &
pid=$!
sleep 5 # past the set-up and the checks before the pass (about 1 s here)
kill -TERM $pid
t0=$(date +%s)
for i in $(seq 1 600); do
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
done
took=$(($(date +%s) - t0))
kill -0 $pid 2>/dev/null && kill -KILL $pid
wait $pid
rc=$?
check "[ $rc -eq 143 ] && [ $took -lt 60 ]" \
    "SIGTERM in the noise pass: exit 143 within 60 s (exit $rc after ${took} s)"
exit $fail
