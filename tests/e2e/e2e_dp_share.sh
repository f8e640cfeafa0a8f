#!/bin/sh
# Under mpirun, a micro-batch --micro names that no rank's share can hold is
# a skipped row with the reason, never a missing row: -np 7 at E = 10 is a
# share of 2 examples a rank, so micro 3 is skipped and says why, beside
# micro 1 (its last micro-batch leaves ranks empty: skipped) and micro 2.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
. "$ACCUBENCH_ROOT/tests/e2e/mpi_env.sh"
col() {
    awk -F, -v name="$2" '/^#/ || !NF { next } !h { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } { print $c }' "$1"
}

mpirun --oversubscribe -np 7 "$ACCUBENCH" run --backend cpu --model tiny --effective 10 \
    --micro 1,2,3 --steps 2 --budget-s 0.05 --warmup 0 --trace-steps 0 --noise-windows 0 --quiet \
    --csv np7.csv >run.out 2>&1
check "[ \$? -eq 0 ]" "mpirun -np 7: $(tail -n 5 run.out)"
check "[ \"\$(col np7.csv micro_batch | tr '\n' ' ')\" = '1 2 3 ' ]" \
    "not one row per micro-batch: $(col np7.csv micro_batch | tr '\n' ' ')"
check "[ \"\$(col np7.csv status | tr '\n' ' ')\" = 'skipped ok skipped ' ]" \
    "statuses: $(col np7.csv status | tr '\n' ' ')"
check "col np7.csv note | grep -q 'micro-batch 3 is larger than the 2 examples a device takes of the effective batch 10 over 7 devices'" \
    "micro 3's row does not say why: $(col np7.csv note)"
exit $fail
