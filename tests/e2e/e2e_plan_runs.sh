#!/bin/sh
# The planner's answers run under their own cap: each answer of plan
# --find-max-micro (the MLP and the GPT, with and without recompute, on one
# rank and on two) runs as `ok` with the same --mem-cap, its gradient check
# and noise scale outside the cap, and under a cap of exactly its need too
# (its step peaks at the need; its loss curves and --dump outside the cap),
# and what the process held (mem_held_bytes) is at least the need; several
# recompute values in one sweep are each held to their own need. Under
# mpirun a cap between the sharded and the whole per-rank need runs the
# sharded configs and holds the unsharded one to its need (an oom row,
# without running it), and the sweep goes on; ranks with caps of their
# own run one path, in interleaved rounds too, the loss curves outside the
# cap. Where the GPU is not here, the planner answers for it from the
# exact need, to the byte.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
# col FILE NAME: the column's values, one per row, by name
col() { awk -F, -v name="$2" '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } print $c }' "$1"; }
# $bare where a line names its own --noise-windows (an option named twice is refused)
bare="--backend cpu --steps 2 --budget-s 0.05 --warmup 1 --trace-steps 0 --quiet"
run="$bare --noise-windows 2"
. "$ACCUBENCH_ROOT/tests/e2e/mpi_env.sh"

gpt_small=gpt:d=64,layers=2,heads=2,seq=64,vocab=1024
n=0
# model, cap, effective batch, recompute, ranks
for answer in "tiny 400K 108 none 1" "tiny 400K 108 gelu 1" "S 90M 256 none 1" \
              "S 90M 256 gelu 1" "S 88M 64 block 1" "gpt-tiny 12M 64 none 2" \
              "gpt-tiny 12M 32 none 1" "gpt-tiny 12M 32 block 1" "$gpt_small 8M 8 none 1" \
              "$gpt_small 6M 8 block 1" "$gpt_small 6M 16 block 2" "tiny 400K 64 gelu 2"; do
    set -- $answer
    n=$((n + 1))
    "$ACCUBENCH" plan --find-max-micro --backend cpu --model "$1" --mem-cap "$2" --effective "$3" \
        --recompute "$4" --devices "$5" > plan$n.txt 2>&1
    micro=$(sed -n 's/^largest micro-batch: *\([0-9]*\).*/\1/p' plan$n.txt)
    if [ -z "$micro" ]; then
        check false "$answer: no answer: $(cat plan$n.txt)"
        continue
    fi
    launch=""
    [ "$5" -gt 1 ] && launch="$MPIRUN -np $5"
    $launch "$ACCUBENCH" run $run --model "$1" --mem-cap "$2" --effective "$3" \
        --recompute "$4" --micro "$micro" --csv run$n.csv > /dev/null 2> err$n.txt
    check '[ "$(col run$n.csv status)" = ok ]' \
        "$answer: the answer $micro ran $(col run$n.csv status): $(col run$n.csv note) $(cat err$n.txt)"
    check '[ -n "$(col run$n.csv grad_rel_err)" ]' "$answer: no gradient check at micro $micro"
    k=$(sed -n 's/^accumulation steps: *\([0-9]*\).*/\1/p' plan$n.txt)
    check '[ "$k" = "$(col run$n.csv accum_steps)" ]' \
        "$answer: the plan's $k accumulation steps, the run's $(col run$n.csv accum_steps)"
    peak=$(col run$n.csv mem_peak_bytes)
    need=$(col run$n.csv mem_need_bytes)
    held=$(col run$n.csv mem_held_bytes)
    check '[ "$peak" -ge "$need" ]' "$answer: the step's peak $peak is under its need $need"
    check '[ "$held" -ge "$need" ]' "$answer: the process held $held, under the need $need"
done
check '[ $n -ge 12 ]' "only $n answers tried"

# The need is what the training step allocates, to the byte: each answer
# also runs under a cap of exactly its printed need (its activations and
# the step's loss sum both fit), and its step peaks at that need.
for answer in "tiny 400K 108 none" "S 90M 64 block" "gpt-tiny 12M 32 none"; do
    set -- $answer
    n=$((n + 1))
    "$ACCUBENCH" plan --find-max-micro --backend cpu --model "$1" --mem-cap "$2" --effective "$3" \
        --recompute "$4" > plan$n.txt 2>&1
    micro=$(sed -n 's/^largest micro-batch: *\([0-9]*\).*/\1/p' plan$n.txt)
    need=$(sed -n 's/^memory need: *\([0-9]*\) bytes.*/\1/p' plan$n.txt)
    [ "$1" = tiny ] && micro_tiny=$micro need_tiny=$need
    if [ -z "$micro" ] || [ -z "$need" ]; then
        check false "$answer: no answer: $(cat plan$n.txt)"
        continue
    fi
    "$ACCUBENCH" run $bare --noise-windows 0 --model "$1" --mem-cap "$need" --effective "$3" \
        --recompute "$4" --micro "$micro" --csv exact$n.csv > /dev/null 2> err$n.txt
    check '[ "$(col exact$n.csv status)" = ok ]' \
        "$answer: micro $micro under a cap of its need $need ran $(col exact$n.csv status): $(col exact$n.csv note) $(cat err$n.txt)"
    check '[ "$(col exact$n.csv mem_need_bytes)" = "$need" ]' \
        "$answer: the run's need $(col exact$n.csv mem_need_bytes), the plan's $need"
    check '[ "$(col exact$n.csv mem_peak_bytes)" = "$need" ]' \
        "$answer: the step peaked at $(col exact$n.csv mem_peak_bytes), its need is $need"
done
# The loss curves are a check too: an answer under a cap of its exact need
# trains its curves (outside the cap) and times its step (it was an oom)
"$ACCUBENCH" run $bare --noise-windows 0 --model tiny --mem-cap "$need_tiny" --effective 108 \
    --micro "$micro_tiny" --train-steps 3 --csv curved.csv > /dev/null 2> err.txt
check '[ "$(col curved.csv status)" = ok ] && [ "$(grep -vc "^#" curved.curves.csv)" -eq 7 ]' \
    "micro $micro_tiny under a cap of its need $need_tiny with --train-steps 3: $(col curved.csv status): $(col curved.csv note) $(cat err.txt)"
# So is --dump: in bf16 the MLP's inputs are read back through an fp32
# copy, the dump's own, made outside the cap (under it, beside a need of
# exactly the cap, it did not fit and the dump was lost, exit 1)
"$ACCUBENCH" plan --find-max-micro --backend cpu --model tiny --dtype bf16 --mem-cap 400K \
    --effective 108 > plan_bf16.txt 2>&1
micro=$(sed -n 's/^largest micro-batch: *\([0-9]*\).*/\1/p' plan_bf16.txt)
need=$(sed -n 's/^memory need: *\([0-9]*\) bytes.*/\1/p' plan_bf16.txt)
"$ACCUBENCH" run $bare --noise-windows 0 --model tiny --dtype bf16 --mem-cap "$need" \
    --effective 108 --micro "$micro" --dump dumped --csv dumped.csv > /dev/null 2> err.txt
rc=$?
check '[ $rc -eq 0 ] && [ "$(col dumped.csv status)" = ok ] && [ -f dumped/manifest.json ]' \
    "bf16 micro $micro under a cap of its need $need with --dump: exit $rc, $(col dumped.csv status) $(cat err.txt)"

# Several recompute values in one sweep, each held to its own answer:
# under a cap where block fits micro-batch 1 and none does not, block's
# row runs and none's is an oom row that says its need (the model was once
# judged by the first value's need alone, not made, and both were oom).
"$ACCUBENCH" plan --find-max-micro --backend cpu --model gpt-tiny --effective 4 --max-micro 1 \
    --recompute block --mem-cap 1G > plan_block.txt 2>&1
need=$(sed -n 's/^memory need: *\([0-9]*\) bytes.*/\1/p' plan_block.txt)
"$ACCUBENCH" run $bare --noise-windows 0 --model gpt-tiny --effective 4 --micro 1 \
    --recompute none,block --mem-cap "$need" --csv both.csv > /dev/null 2> err.txt
check '[ "$(col both.csv status | tr "\n" " ")" = "oom ok " ] && grep -q "over the cap of $need" both.csv' \
    "none and block under block's need $need: $(col both.csv status | tr '\n' ' ') $(col both.csv note) $(cat err.txt)"

# ZeRO judged per rank: S is 85.5 MB a rank whole, 64.5 MB with the
# optimizer state sharded, 62.4 MB with the gradient too (two ranks).
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

# Ranks with caps of their own, in interleaved rounds: rank 1's cap holds
# both steps (E = 16 and 64) and not the loss curves' full batch at E = 64,
# which run outside the cap as the other checks do. Every rank takes the
# same path (a runner kept between rounds on one rank and set up again on
# the other would leave them in different collectives): both rows run,
# with their curves, and no rank stops the job or reports a signal.
rounds="--backend cpu --model tiny --budget-s 0.2 --trace-steps 0 --noise-windows 2"
rounds="$rounds --effective 16,64 --micro 8 --train-steps 3 --csv caps.csv"
$MPIRUN -np 1 "$ACCUBENCH" run $rounds : -np 1 "$ACCUBENCH" run $rounds --mem-cap 260K \
    > caps.txt 2>&1
check '[ $? -eq 0 ] && ! grep -q "stopping every rank\|interrupted" caps.txt' \
    "ranks with caps of their own: $(cat caps.txt)"
check '[ "$(col caps.csv status | tr "\n" " ")" = "ok ok " ] && [ "$(grep -vc "^#" caps.curves.csv)" -eq 13 ]' \
    "both rows and their curves: $(col caps.csv status | tr '\n' ' ') $(cat caps.txt)"

# A GPU that is not here: the answer from the exact need against the cap,
# exact to the byte (a reserve one byte over its margin takes one
# micro-batch off; one of exactly the margin does not).
if "$ACCUBENCH" --help | grep -q '^  cuda .*(not in this build)'; then
    echo "skipped: planning for a GPU from the arithmetic (CUDA not in this build)"
    exit $fail
fi
gpu="plan --find-max-micro --backend cuda --mem-cap 80G --model gpt-medium --dtype bf16"
"$ACCUBENCH" $gpu > gpu.txt 2>&1
rc=$?
answer() { sed -n 's/^largest micro-batch: *\([0-9]*\).*/\1/p' "$1"; }
margin=$(sed -n 's/^margin: *\([0-9]*\) bytes.*/\1/p' gpu.txt)
check '[ $rc -eq 0 ] && [ -n "$(answer gpu.txt)" ] && [ -n "$margin" ]' \
    "no answer for a GPU from the arithmetic (exit $rc): $(cat gpu.txt)"
check 'grep -q "^planned for: *CUDA from the arithmetic" gpu.txt' "it does not say how it planned"
if [ -n "$margin" ]; then
    "$ACCUBENCH" $gpu --reserve "$margin" > exact.txt 2>&1
    "$ACCUBENCH" $gpu --reserve "$((margin + 1))" > over.txt 2>&1
    check '[ "$(answer exact.txt)" = "$(answer gpu.txt)" ]' "a reserve of the margin changed it"
    check '[ "$(answer over.txt)" -lt "$(answer gpu.txt)" ]' \
        "a reserve one byte over the margin kept $(answer over.txt)"
fi
# The plan charges the attention ACCUBENCH_CUDA_ATTENTION names: the
# unfused path's scores by default (and for unfused), the fused op's
# log-sum-exps under fused, so more sequences fit; any other value is one
# line, exit 2, device or not.
ACCUBENCH_CUDA_ATTENTION=unfused "$ACCUBENCH" $gpu > unfused.txt 2>&1
ACCUBENCH_CUDA_ATTENTION=fused "$ACCUBENCH" $gpu > fused.txt 2>&1
check '[ "$(answer unfused.txt)" = "$(answer gpu.txt)" ]' \
    "unfused planned $(answer unfused.txt), the default $(answer gpu.txt)"
check '[ -n "$(answer fused.txt)" ] && [ "$(answer fused.txt)" -gt "$(answer gpu.txt)" ]' \
    "fused planned $(answer fused.txt), not more than unfused's $(answer gpu.txt)"
for cmd in "$gpu" "run --backend cuda --model tiny --effective 8" \
    "run --backend auto --model tiny --effective 8 --out auto-bad"; do
    ACCUBENCH_CUDA_ATTENTION=tiled "$ACCUBENCH" $cmd > bad.txt 2>&1
    rc=$?
    check '[ $rc -eq 2 ] && [ "$(wc -l < bad.txt)" -eq 1 ] &&
           grep -q "ACCUBENCH_CUDA_ATTENTION=.tiled.: needs fused or unfused" bad.txt' \
        "ACCUBENCH_CUDA_ATTENTION=tiled, $cmd: exit $rc, $(cat bad.txt)"
done
check '[ ! -e auto-bad ]' "auto ran past a bad ACCUBENCH_CUDA_ATTENTION on another backend"
"$ACCUBENCH" plan --find-max-micro --backend cuda --model gpt-medium > nocap.txt 2>&1
rc=$?
check '[ $rc -eq 2 ] && [ "$(wc -l < nocap.txt)" -eq 1 ] && grep -q "with --mem-cap" nocap.txt' \
    "without a cap, no device: exit $rc, $(cat nocap.txt)"
exit $fail
