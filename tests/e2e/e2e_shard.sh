#!/bin/sh
# Sharded data parallel (--shard) on 2 ranks: for each shard value the
# gradient check and the same weights on every rank; the reduce-scatters a
# step (where --sync would all-reduce for optimizer, after every
# micro-batch for gradients) and their bytes (the padded vector: the
# model's parameter count is odd); one rank's memory need, falling from
# none to optimizer by what the slices save; the collectives as ranges in
# the trace; and the refusals: a sharded run without mpirun, an unknown
# value.
set -u
fail=0
. "$ACCUBENCH_ROOT/tests/e2e/mpi_env.sh"
# 189 parameters: 2 ranks hold slices of 95, the last one padded.
model="mlp:hidden=8,layers=2,classes=5"
quick="--backend cpu --model $model --steps 2 --warmup 1 --effective 16 --micro 4 --quiet"

mpirun --oversubscribe -np 2 "$ACCUBENCH" run $quick --trace-steps 0 --sync micro,window \
    --shard none,optimizer,gradients --csv rows.csv >rows.log 2>&1 ||
    { echo "FAILED: 2 ranks: exit $?"; cat rows.log; fail=1; }

awk -F, '
    /^#/ { next }
    !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
    {
        n++
        sh = $c["shard"]; sync = $c["sync"]; k = $c["accum_steps"]; p = $c["params"]
        where = "row " n " (shard " sh ", sync " sync ")"
        if ($c["status"] != "ok") { print "FAILED: " where ": " $c["status"] ": " $c["note"]; bad = 1 }
        if (!($c["grad_rel_err"] != "" && $c["grad_rel_err"] + 0 < 1e-5)) { print "FAILED: " where ": grad_rel_err " $c["grad_rel_err"]; bad = 1 }
        if ($c["rank_weight_diff"] != "0") { print "FAILED: " where ": rank_weight_diff " $c["rank_weight_diff"]; bad = 1 }
        if (p % 2 != 1 || k != 2) { print "FAILED: " where ": params " p ", K " k ": the test wants an odd count and K 2"; bad = 1 }
        ar = $c["allreduce_calls_per_step"]; rs = $c["reduce_scatter_calls_per_step"]
        ag = $c["allgather_calls_per_step"]
        # The schedule: once a window (window), every micro-batch (micro, or gradients).
        per = (sync == "micro" || sh == "gradients") ? k : 1
        if (sh == "none") { want_ar = (sync == "micro") ? k : 1; want_rs = 0; want_ag = 0 }
        else { want_ar = 0; want_rs = per; want_ag = 1 }
        if (ar + 0 != want_ar || rs + 0 != want_rs || ag + 0 != want_ag) {
            print "FAILED: " where ": " ar " all-reduces, " rs " reduce-scatters, " ag " all-gathers a step; expected " want_ar ", " want_rs ", " want_ag; bad = 1
        }
        padded = (p + 1) * 4 # both slices, the second padded by one float
        if (want_rs && $c["reduce_scatter_bytes_per_step"] + 0 != want_rs * padded) { print "FAILED: " where ": " $c["reduce_scatter_bytes_per_step"] " reduce-scatter bytes"; bad = 1 }
        if (want_ag && $c["allgather_bytes_per_step"] + 0 != padded) { print "FAILED: " where ": " $c["allgather_bytes_per_step"] " all-gather bytes"; bad = 1 }
        if (sh != "none" && !($c["busbw_gbps"] + 0 > 0)) { print "FAILED: " where ": no bus bandwidth"; bad = 1 }
        need[sync, sh] = $c["mem_need_bytes"]
        if (!($c["mem_peak_bytes"] + 0 >= $c["mem_need_bytes"] + 0)) { print "FAILED: " where ": peak under the need"; bad = 1 }
        params = p
    }
    END {
        if (n != 6) { print "FAILED: " n " rows, expected 6"; bad = 1 }
        # none keeps 4 + 4 + 8 bytes a parameter (weights, gradient, AdamW
        # moments); a sharded rank the padded weights and gradient (2 x 95
        # floats each) and one slice of moments (95 x 8 bytes).
        len = (params + 1) / 2
        for (s = 0; s < 2; s++) {
            sync = s ? "micro" : "window"
            saved = need[sync, "none"] - need[sync, "optimizer"]
            if (saved != 16 * params - 24 * len) { print "FAILED: sync " sync ": optimizer saves " saved " bytes, expected " 16 * params - 24 * len; bad = 1 }
            # gradients keeps what optimizer keeps: the backward writes one
            # whole gradient vector (docs/sharding.md).
            if (need[sync, "gradients"] != need[sync, "optimizer"]) { print "FAILED: sync " sync ": gradients needs " need[sync, "gradients"]; bad = 1 }
        }
        exit bad
    }' rows.csv || fail=1

# The trace of a sharded config: its collectives as named ranges.
mpirun --oversubscribe -np 2 "$ACCUBENCH" run $quick --trace-steps 1 --trace shard.json \
    --sync window --shard optimizer --csv trace.csv >trace.log 2>&1 ||
    { echo "FAILED: traced run: exit $?"; cat trace.log; fail=1; }
for range in reduce-scatter all-gather; do
    grep -q "\"name\":\"$range\"" shard.json 2>/dev/null ||
        { echo "FAILED: no $range range in the trace"; fail=1; }
done

# One device cannot be sharded: one line that says mpirun, exit 2.
"$ACCUBENCH" run $quick --shard none,gradients >one.out 2>one.err
rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <one.err)" -eq 1 ] && grep -q "shard gradients.*mpirun" one.err ||
    { echo "FAILED: --shard gradients on one device: exit $rc"; cat one.err; fail=1; }
"$ACCUBENCH" run $quick --shard zero3 >bad.out 2>bad.err
rc=$?
[ $rc -eq 2 ] && grep -q "unknown shard 'zero3' (known: none, optimizer, gradients)" bad.err ||
    { echo "FAILED: --shard zero3: exit $rc"; cat bad.err; fail=1; }
exit $fail
