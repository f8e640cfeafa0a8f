#!/bin/sh
# The noise scale under data parallel: each rank's part of a micro-batch is
# a small batch of its own, its norm taken before the all-reduce, so 2 ranks
# at micro 4 see the same small batches (the same 4 examples each) as one
# process at micro 4 and must give its B_simple to rounding (an all-reduce
# first would make them 8-example batches: another figure). And the pass
# keeps to its share of --budget-s on every rank together: cut short, every
# rank runs the same windows (none waits in a collective the others left)
# and the note says how many.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
col() { awk -F, -v name="$1" '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } print $c }' "$2"; }
. "$ACCUBENCH_ROOT/tests/e2e/mpi_env.sh"
# Fixed timed steps, so a long --budget-s only lifts the noise pass's limit.
quick="--backend cpu --model tiny --effective 64 --micro 4 --steps 2 --warmup 0 --trace-steps 0"

"$ACCUBENCH" run $quick --noise-windows 8 --budget-s 1000 --csv one.csv --quiet \
    >one.log 2>&1 || { echo "FAILED: one process: exit $?"; cat one.log; fail=1; }
timeout 300 $MPIRUN -np 2 "$ACCUBENCH" run $quick --noise-windows 8 --budget-s 1000 \
    --csv two.csv --quiet >two.log 2>&1 || { echo "FAILED: 2 ranks: exit $?"; cat two.log; fail=1; }
a=$(col grad_noise_scale one.csv); b=$(col grad_noise_scale two.csv)
check "awk 'BEGIN { exit !(\"$a\" != \"\" && \"$b\" != \"\" && ($a - $b) ^ 2 <= (1e-4 * $a) ^ 2) }'" \
    "2 ranks at micro 4 give one process's B_simple at micro 4: $b against $a"
check '! col note two.csv | grep -q "noise scale from"' "all 8 windows within a long budget"

# A budget whose fifth is spent by the first window: the windows every rank
# agreed on, at least 4, and said in the note; the run ends (no rank hangs).
timeout 300 $MPIRUN -np 2 "$ACCUBENCH" run $quick --noise-windows 32 --budget-s 0.001 \
    --csv cut.csv --quiet >cut.log 2>&1 || { echo "FAILED: 2 ranks, cut: exit $?"; cat cut.log; fail=1; }
check 'col note cut.csv | grep -q "noise scale from 4 of 32 windows: the pass keeps to 0.2 of --budget-s"' \
    "the note says the windows used: $(col note cut.csv)"
check '[ -n "$(col grad_noise_scale_err cut.csv)" ]' "an error over those windows"

# Along the loss curves under ZeRO-2: each training step leaves the
# gradient sliced, and the curve's noise pass reads it whole, as ZeRO-1's
# does: the same figures at every point (it once read past the slice)
timeout 300 $MPIRUN -np 2 "$ACCUBENCH" run --backend cpu --model gpt-tiny --effective 8 --micro 2 \
    --steps 2 --shard optimizer,gradients --train-steps 8 --noise-windows 8 --trace-steps 0 \
    --csv zero.csv --quiet >zero.log 2>&1 || { echo "FAILED: curves, ZeRO: exit $?"; cat zero.log; fail=1; }
points() { # the forward curve's noise figures under shard $1
    awk -F, -v want="$1" '/^#/ { next } !h { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; next }
        $c["shard"] == want && $c["order"] == "forward" && $c["grad_noise_scale"] != "" {
            printf "%s:%s ", $c["step"], $c["grad_noise_scale"] }' zero.curves.csv
}
check '[ "$(points gradients)" = "$(points optimizer)" ] && [ "$(points gradients | wc -w)" -eq 4 ]' \
    "ZeRO-2's curve noise at 4 points, ZeRO-1's figures: $(points gradients) against $(points optimizer)"

[ $fail -eq 0 ] && echo "ok"
exit $fail
