#!/bin/sh
# Sharded data parallel (--shard) on 2 ranks, an MLP and a GPT at K = 1
# and 4, every shard value: the gradient check and the same weights on
# every rank; the reduce-scatters a step (where --sync would all-reduce for
# optimizer; for gradients, each micro-batch's buckets, every float once)
# and their bytes (the padded vector where they move whole: the MLP's
# parameter count is odd); one rank's memory need, falling from none to
# optimizer by what the slices save, and below optimizer's for gradients
# (the gradient a slice and a ring of buckets), the peak too; ZeRO-2 in
# the alloc modes under a cap of exactly its need (ok; a byte less, oom);
# the collectives as ranges in the trace; and the refusals: a sharded run
# without mpirun, an unknown value.
set -u
fail=0
. "$ACCUBENCH_ROOT/tests/e2e/mpi_env.sh"
# 1,717 parameters: 2 ranks hold slices of 859, the last one padded; 7
# linear layers, so that two buckets (the largest 357 floats) and a slice
# are less than the whole gradient.
model="mlp:hidden=16,layers=6,classes=5"
quick="--backend cpu --model $model --steps 2 --budget-s 0.05 --warmup 1 --effective 16 --micro 4 --quiet"
rows="--backend cpu --steps 2 --budget-s 0.05 --warmup 1 --trace-steps 0 --quiet --shard none,optimizer,gradients"

# K = 1 and 4 a rank: 8 examples a rank, micro-batches of 8 and 2 (the GPT
# 4 sequences a rank, micro 4 and 1).
$MPIRUN -np 2 "$ACCUBENCH" run $rows --model $model --effective 16 --micro 8,2 \
    --sync micro,window --csv rows.csv >rows.log 2>&1 ||
    { echo "FAILED: 2 ranks, mlp: exit $?"; cat rows.log; fail=1; }
$MPIRUN -np 2 "$ACCUBENCH" run $rows --model gpt-tiny --effective 8 --micro 4,1 \
    --sync window --csv gpt.csv >gpt.log 2>&1 ||
    { echo "FAILED: 2 ranks, gpt-tiny: exit $?"; cat gpt.log; fail=1; }

check_rows() { # CSV, the rows it must hold
    awk -F, -v want_rows="$2" '
    # The CSV writes 6 significant digits.
    function near(x, want) { d = x - want; return d * d <= 1e-10 * want * want }
    /^#/ { next }
    !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
    {
        n++
        sh = $c["shard"]; sync = $c["sync"]; k = $c["accum_steps"]; p = $c["params"]
        where = $c["model"] " row " n " (shard " sh ", sync " sync ", K " k ")"
        if ($c["status"] != "ok") { print "FAILED: " where ": " $c["status"] ": " $c["note"]; bad = 1 }
        if (!($c["grad_rel_err"] != "" && $c["grad_rel_err"] + 0 < 1e-5)) { print "FAILED: " where ": grad_rel_err " $c["grad_rel_err"]; bad = 1 }
        if ($c["rank_weight_diff"] != "0") { print "FAILED: " where ": rank_weight_diff " $c["rank_weight_diff"]; bad = 1 }
        ks[k] = 1
        ar = $c["allreduce_calls_per_step"]; rs = $c["reduce_scatter_calls_per_step"]
        ag = $c["allgather_calls_per_step"]; rsb = $c["reduce_scatter_bytes_per_step"]
        padded = (p + p % 2) * 4 # both slices, the second padded by one float where p is odd
        per = (sync == "micro") ? k : 1
        if (sh == "none") { want_ar = per; want_rs = 0; want_ag = 0 }
        else { want_ar = 0; want_rs = per; want_ag = 1 }
        if (sh == "gradients") {
            # Each micro-batch: its buckets (at least two), every float once.
            if (ar + 0 != 0 || rs % k != 0 || rs / k < 2 || !near(rsb, k * p * 4) || ag + 0 != 1) {
                print "FAILED: " where ": " ar " all-reduces, " rs " reduce-scatters of " rsb " bytes, " ag " all-gathers a step; expected buckets of " k * p * 4 " bytes in all"; bad = 1
            }
        } else if (ar + 0 != want_ar || rs + 0 != want_rs || ag + 0 != want_ag ||
                   (want_rs && !near(rsb, want_rs * padded))) {
            print "FAILED: " where ": " ar " all-reduces, " rs " reduce-scatters (" rsb " bytes), " ag " all-gathers a step; expected " want_ar ", " want_rs ", " want_ag; bad = 1
        }
        if (want_ag && !near($c["allgather_bytes_per_step"], padded)) { print "FAILED: " where ": " $c["allgather_bytes_per_step"] " all-gather bytes"; bad = 1 }
        if (sh != "none" && !($c["busbw_gbps"] + 0 > 0)) { print "FAILED: " where ": no bus bandwidth"; bad = 1 }
        need[sync, k, sh] = $c["mem_need_bytes"]; peak[sync, k, sh] = $c["mem_peak_bytes"]
        if (!($c["mem_peak_bytes"] + 0 >= $c["mem_need_bytes"] + 0)) { print "FAILED: " where ": peak under the need"; bad = 1 }
        params = p; syncs[sync] = 1
    }
    END {
        if (n != want_rows) { print "FAILED: " n " rows, expected " want_rows; bad = 1 }
        if (!(1 in ks) || !(4 in ks)) { print "FAILED: K = 1 and 4 expected"; bad = 1 }
        # none keeps 4 + 4 + 8 bytes a parameter (weights, gradient, AdamW
        # moments); a sharded rank the padded weights and gradient (2 x len
        # floats each) and one slice of moments (len x 8 bytes).
        len = (params + params % 2) / 2
        for (sync in syncs) for (k in ks) {
            saved = need[sync, k, "none"] - need[sync, k, "optimizer"]
            if (saved != 16 * params - 24 * len) { print "FAILED: sync " sync " K " k ": optimizer saves " saved " bytes, expected " 16 * params - 24 * len; bad = 1 }
            # gradients keeps a slice and the buckets, not the whole gradient.
            if (!(need[sync, k, "gradients"] + 0 < need[sync, k, "optimizer"] + 0)) { print "FAILED: sync " sync " K " k ": gradients needs " need[sync, k, "gradients"] ", optimizer " need[sync, k, "optimizer"]; bad = 1 }
            if (!(peak[sync, k, "gradients"] + 0 < peak[sync, k, "optimizer"] + 0)) { print "FAILED: sync " sync " K " k ": gradients peaks at " peak[sync, k, "gradients"] ", optimizer " peak[sync, k, "optimizer"]; bad = 1 }
        }
        exit bad
    }' "$1"
}
check_rows rows.csv 12 || fail=1
check_rows gpt.csv 6 || fail=1

# ZeRO-2 under a cap of exactly its own need, where the mode makes the
# activations per micro-batch (alloc, alloc-async): the gradient check's
# whole gradient is held outside the cap, so the check's reference still
# has the cap's every byte for its activations (it once counted against
# the cap and failed the config on every rank); a byte less is an oom row.
need=$(awk -F, '/^#/ { next } !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
    $c["shard"] == "gradients" && $c["sync"] == "window" && $c["micro_batch"] == 2 { print $c["mem_need_bytes"] }' rows.csv)
for cap in "$need" "$((need - 1))"; do
    $MPIRUN -np 2 "$ACCUBENCH" run ${rows%% --shard *} --model $model --effective 16 --micro 2 \
        --sync window --shard gradients --mode alloc,alloc-async --noise-windows 0 --mem-cap "$cap" \
        --csv "cap$cap.csv" >"cap$cap.log" 2>&1
    want=ok; [ "$cap" = "$need" ] || want=oom
    got=$(awk -F, '/^#/ { next } !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
        { printf "%s ", $c["status"] }' "cap$cap.csv" 2>/dev/null)
    [ "$got" = "$want $want " ] ||
        { echo "FAILED: ZeRO-2, alloc modes, --mem-cap $cap (need $need): rows '$got', expected $want"; cat "cap$cap.log"; fail=1; }
done

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
known=$("$ACCUBENCH" --list-values shard | paste -sd, - | sed 's/,/, /g')
[ $rc -eq 2 ] && grep -qF "unknown shard 'zero3' (known: $known)" bad.err ||
    { echo "FAILED: --shard zero3: exit $rc"; cat bad.err; fail=1; }
exit $fail
