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
exit $fail
