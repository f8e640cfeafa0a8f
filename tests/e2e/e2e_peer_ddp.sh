#!/bin/sh
# The PyTorch peer under torchrun: DistributedDataParallel over 2 ranks on
# the CPU (gloo), each rank its part of every window as accubench shards it
# (tests/peers/test_peer_shard.py: the port against harness/run/step/split.c itself),
# written into the CSV of accubench's own 2-rank run: rows with devices 2 in
# each sync DDP runs (micro: the gradient all-reduced by every micro-batch's
# backward; overlap: no_sync until the last), the gradient after DDP's
# all-reduce equal to the single-process full batch on every rank, the same
# weights on every rank, the all-reduces DDP made counted, the splits
# accubench ran (a ragged one, and one that leaves a rank empty: skipped
# with the C's reason), rank 0 alone writing, the report setting each
# (devices, sync) against accubench's, and bad input. Skipped with a
# message where PyTorch does not import.
set -u
root=${ACCUBENCH_ROOT:?}
py=${PYTHON:-python3}
if ! "$py" -c "import torch" >/dev/null 2>&1; then
    echo "SKIP e2e_peer_ddp: PyTorch is not installed for $py (pip install torch)"
    exit 0
fi
fail() { echo "FAIL: $*"; exit 1; }
command -v mpirun >/dev/null 2>&1 || fail "mpirun not found: install openmpi-bin libopenmpi-dev"
peer="$root/bench/peers/torch_accum.py"
torchrun="$py -m torch.distributed.run --nproc_per_node 2 --standalone"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
[ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"

"$py" "$root/tests/peers/test_peer_shard.py" >shard.out 2>&1 || fail "tests/peers/test_peer_shard.py: $(tail -n 20 shard.out)"

# accubench on 2 ranks, then the peer on 2 ranks into the same CSV.
# E = 10: micro 2 is 2x3 with a ragged last micro-batch, 4 is 4x2; E = 9
# at micro 2 or 4 leaves a rank without an example: skipped.
split="--model tiny --effective 10,9 --micro 2,4 --budget-s 0.2 --warmup 1"
mpirun --oversubscribe -np 2 "$ACCUBENCH" run --backend cpu $split --sync micro,window,overlap \
    --trace-steps 0 --csv run.csv --quiet >acc.out 2>&1 || fail "accubench on 2 ranks: $(tail -n 5 acc.out)"
# On failure, the ranks' own lines first: torchrun's report of a failed
# rank (a traceback of its launcher) follows them and would fill a tail.
$torchrun "$peer" --device cpu $split --mode eager,eager-fused --csv run.csv >peer.out 2>&1 ||
    fail "the peer under torchrun: $(grep -v '^W\|^\[W\|^ \|^Traceback' peer.out | head -n 30)"
[ "$(grep -cE 'rows? written to run.csv' peer.out)" -eq 1 ] || fail "not rank 0 alone: $(cat peer.out)"
[ "$(grep -c '^torch tiny' peer.out)" -eq 16 ] || fail "not one console line per row: $(cat peer.out)"
grep -q '^# torch_ddp: 2 ranks under torchrun; .*gloo.*set_num_threads(1)' run.csv ||
    fail "no torch_ddp metadata: $(grep '^# torch' run.csv)"
grep -q '^# torch_sync: micro: DDP without no_sync.*overlap: DDP with no_sync' run.csv ||
    fail "no torch_sync metadata"

awk -F, '
    /^#/ || !NF { next }
    !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
    {
        key = $c["effective_batch"] " " $c["micro_batch"]
        where = $c["backend"] " " $c["mode"] " E " $c["effective_batch"] " micro " $c["micro_batch"] " sync " $c["sync"]
    }
    $c["backend"] == "cpu" { split_of[key] = $c["accum_steps"] " " $c["last_micro_batch"] " " $c["status"]; note[key] = $c["note"]; next }
    $c["backend"] != "torch" { next }
    {
        n++
        seen[$c["sync"]]++
        if ($c["devices"] != 2) { print "devices " $c["devices"] ": " where; bad = 1 }
        if (!(key in split_of)) { print "no accubench row for " where; bad = 1 }
        else if (split_of[key] != $c["accum_steps"] " " $c["last_micro_batch"] " " $c["status"]) {
            print where ": " $c["accum_steps"] " " $c["last_micro_batch"] " " $c["status"] ", accubench " split_of[key]; bad = 1
        }
        if ($c["status"] == "skipped") {
            skipped++
            if ($c["note"] != note[key]) { print where ": note \"" $c["note"] "\", accubench \"" note[key] "\""; bad = 1 }
            next
        }
        if ($c["status"] != "ok") { print where ": " $c["status"] " " $c["note"]; bad = 1; next }
        if (!($c["grad_rel_err"] != "" && $c["grad_rel_err"] + 0 < 1e-5)) { print where ": grad_rel_err " $c["grad_rel_err"]; bad = 1 }
        if ($c["rank_weight_diff"] != "0") { print where ": rank_weight_diff " $c["rank_weight_diff"]; bad = 1 }
        if ($c["step_ms_median"] == "" || $c["rank_step_spread_pct"] == "") { print where ": not timed"; bad = 1 }
        if ($c["comm_ms"] != "" || $c["comm_exposed_ms"] != "") { print where ": invented comm times"; bad = 1 }
        # tiny is one DDP bucket: K all-reduces of the gradient a step
        # without no_sync, one with it.
        k = $c["accum_steps"]; per = $c["sync"] == "micro" ? k : 1
        if ($c["allreduce_calls_per_step"] + 0 != per) { print where ": " $c["allreduce_calls_per_step"] " all-reduces a step, expected " per; bad = 1 }
        if ($c["allreduce_bytes_per_step"] + 0 != per * $c["params"] * 4) { print where ": " $c["allreduce_bytes_per_step"] " bytes a step"; bad = 1 }
    }
    END {
        if (n != 16 || seen["micro"] != 8 || seen["overlap"] != 8 || skipped != 8) {
            print n " torch rows (16), " seen["micro"] " micro, " seen["overlap"] " overlap (8 each), " skipped " skipped (8)"; bad = 1
        }
        exit bad
    }' run.csv || fail "torch rows wrong"

# The report reads the one CSV: each (devices, sync) set against
# accubench's own, and the data-parallel sentences name the peer's rows.
"$ACCUBENCH" report run.csv --no-charts >report.out 2>&1 || fail "report: $(cat report.out)"
for sync in micro overlap; do
    grep -q "^### Effective batch 10: model tiny, fp32, sum reduction, 2 devices, sync $sync: accubench cpu" run.md ||
        fail "no Against torch table for sync $sync: $(grep '^### ' run.md)"
done
grep -q "sync window: accubench" run.md && fail "a table for sync window, which DDP does not run"
grep -q '^- At K=3 on 2 devices (torch eager, model tiny, effective batch 10, K=3: 2+2+1): micro sync makes 3 all-reduces a step and takes [0-9.]* ms a step; overlap sync (1 all-reduce) takes' run.md ||
    fail "the data-parallel sentence of the torch rows: $(grep 'At K=' run.md)"
"$ACCUBENCH" compare run.csv run.csv >/dev/null || fail "compare of the joined CSV"
if command -v gnuplot >/dev/null 2>&1; then
    # The chart draws one devices and sync at a time (here: overlap).
    gnuplot -e "csv='run.csv'; sync='overlap'" "$root/plots/peers.gp" 2>chart.err ||
        fail "peers.gp: $(cat chart.err)"
    [ -s run.peers.png ] && [ -s run.peers.svg ] || fail "no peers chart"
    grep -q '2 devices, sync overlap' run.peers.svg || fail "the chart does not say which sync"
fi

# Bad input: one line from the peer (rank 0), a failed exit; no CSV.
$torchrun "$peer" --device cpu --model tiny --effective 4 --micro 2 --sync window --csv bad.csv >bad.out 2>&1 &&
    fail "--sync window under torchrun passed"
[ "$(grep -c '^torch_accum: ' bad.out)" -eq 1 ] || fail "--sync window: $(cat bad.out)"
grep -q "^torch_accum: unknown --sync 'window'" bad.out || fail "--sync window: $(grep torch_accum bad.out)"
"$py" "$peer" --device cpu --model tiny --effective 4 --micro 2 --sync micro --csv bad.csv >bad.out 2>&1
[ $? -eq 2 ] && [ "$(wc -l <bad.out)" -eq 1 ] || fail "--sync without torchrun: $(cat bad.out)"
[ ! -e bad.csv ] || fail "bad input left a CSV"
echo "e2e_peer_ddp: ok"
