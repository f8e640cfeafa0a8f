#!/bin/sh
# The planner's answers run under their own cap: each answer of plan
# --find-max-micro (the MLP and the GPT, with and without recompute) runs
# as `ok` with the same --mem-cap, its gradient check and noise scale
# outside the cap; under mpirun a cap between the sharded and the whole
# per-rank need runs the sharded configs and holds the unsharded one to its
# need (an oom row, without running it), and the sweep goes on.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
# col FILE NAME: the column's values, one per row, by name
col() { awk -F, -v name="$2" '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } print $c }' "$1"; }
run="--backend cpu --steps 2 --warmup 1 --trace-steps 0 --noise-windows 2 --quiet"

n=0
for answer in "tiny 400K 108 none" "tiny 400K 108 gelu" "S 90M 256 none" "S 90M 256 gelu" \
              "S 88M 64 block" "gpt-tiny 12M 32 none" "gpt-tiny 12M 32 block"; do
    set -- $answer
    n=$((n + 1))
    "$ACCUBENCH" plan --find-max-micro --backend cpu --model "$1" --mem-cap "$2" --effective "$3" \
        --recompute "$4" > plan$n.txt 2>&1
    micro=$(sed -n 's/^largest micro-batch: *\([0-9]*\).*/\1/p' plan$n.txt)
    if [ -z "$micro" ]; then
        check false "$answer: no answer: $(cat plan$n.txt)"
        continue
    fi
    "$ACCUBENCH" run $run --model "$1" --mem-cap "$2" --effective "$3" --recompute "$4" \
        --micro "$micro" --csv run$n.csv > /dev/null 2> err$n.txt
    check '[ "$(col run$n.csv status)" = ok ]' \
        "$answer: the answer $micro ran $(col run$n.csv status): $(col run$n.csv note) $(cat err$n.txt)"
    check '[ -n "$(col run$n.csv grad_rel_err)" ]' "$answer: no gradient check at micro $micro"
    peak=$(col run$n.csv mem_peak_bytes)
    need=$(col run$n.csv mem_need_bytes)
    check '[ "$peak" -ge "$need" ]' "$answer: the step's peak $peak is under its need $need"
done

# ZeRO judged per rank: S is 85.5 MB a rank whole, 64.5 MB with the
# optimizer state sharded, 62.4 MB with the gradient too (two ranks).
. "$ACCUBENCH_ROOT/tests/e2e/mpi_env.sh"
if [ -n "${MPIRUN:-}" ]; then
    $MPIRUN -np 2 "$ACCUBENCH" run $run --model S --effective 64 --micro 16 \
        --shard none,optimizer,gradients --mem-cap 70M --csv zero.csv > zero.txt 2>&1
    rc=$?
    check '[ $rc -eq 0 ]' "the sharded run exits $rc: $(cat zero.txt)"
    check '[ "$(col zero.csv shard | tr "\n" " ")" = "none optimizer gradients " ]' \
        "a row on every shard value: $(col zero.csv shard | tr '\n' ' ')"
    check '[ "$(col zero.csv status | tr "\n" " ")" = "oom ok ok " ]' \
        "none oom, the sharded ok: $(col zero.csv status | tr '\n' ' ')"
    check 'grep -q "over the cap of 73400320" zero.csv' "the oom row names its need against the cap"
    check '! grep -q "interrupted" zero.txt' "no rank reports a signal nobody sent: $(cat zero.txt)"
fi
exit $fail
