#!/bin/sh
# --dtype fp32,bf16 under mpirun: each rank holds a model of each dtype,
# every row runs on 2 ranks in its dtype with its gradient check passing,
# and the report pairs each bf16 config with its fp32 twin, each line
# naming its shard. A row's memory peak, and the cap it is held to, leave
# out what the other dtype's model holds as that model is cut now (whole,
# or its slices under the shard mode its last row ran): each sharded row's
# peak is its own need, and a cap of exactly a row's need runs it. A dtype
# whose model no rank can hold is its own rows alone, and ranks with their
# own caps agree on which models are made.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
. "$ACCUBENCH_ROOT/tests/e2e/mpi_env.sh"
# rows FILE: "dtype shard micro status peak need grad_err note"
rows() {
    awk -F, '/^#/ || !NF { next } !h { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; next }
        { print $c["dtype"], $c["shard"], $c["micro_batch"], $c["status"], $c["mem_peak_bytes"],
                $c["mem_need_bytes"], $c["grad_rel_err"], $c["note"] }' "$1"
}
quick="--backend cpu --effective 16 --budget-s 0.2 --trace-steps 0 --noise-windows 0"

$MPIRUN -np 2 "$ACCUBENCH" run $quick --model tiny --micro 4,8 --dtype fp32,bf16 \
    --shard none,optimizer,gradients --csv d.csv >run.txt 2>err.txt
check '[ $? -eq 0 ]' "mpirun -np 2 --dtype fp32,bf16 exits 0: $(tail -n 5 err.txt)"
rows d.csv >rows.txt
check '[ "$(awk "{ print \$1, \$2, \$3 }" rows.txt | tr "\n" " ")" = "fp32 none 4 bf16 none 4 fp32 none 8 bf16 none 8 fp32 optimizer 4 bf16 optimizer 4 fp32 optimizer 8 bf16 optimizer 8 fp32 gradients 4 bf16 gradients 4 fp32 gradients 8 bf16 gradients 8 " ]' \
    "each split in each dtype under each shard: $(awk '{ print $1, $2, $3 }' rows.txt | tr '\n' ' ')"
check '[ "$(awk "{ print \$4 }" rows.txt | sort -u)" = "ok" ]' "every row ok: $(awk '{ print $4 }' rows.txt | tr '\n' ' ')"
check '[ "$(awk -F, "/^#/ || !NF { next } !h { h = 1; for (i = 1; i <= NF; i++) c[\$i] = i; next } { print \$c[\"devices\"] }" d.csv | sort -u)" = "2" ]' \
    "every row on 2 ranks"
check '[ "$(awk "\$4 == \"ok\" && \$7 != \"\" { print \$1 }" rows.txt | sort | uniq -c | awk "{ print \$1, \$2 }" | tr "\n" " ")" = "6 bf16 6 fp32 " ]' \
    "a passed gradient check on every row of each dtype: $(awk '{ print $1, $2, $7 }' rows.txt | tr '\n' ' ')"
# the other dtype's model, cut as its last row left it, is not in the peak:
# counted whole it would take 28% off an optimizer row's
check '[ -z "$(awk "\$5 == \"\" || \$5 != \$6 { print }" rows.txt)" ]' \
    "each peak is its need to the byte: $(awk '{ print $1, $2, $3, $5, $6 }' rows.txt | tr '\n' ' ')"
"$ACCUBENCH" report d.csv --no-charts >/dev/null 2>err.txt
check '[ $? -eq 0 ]' "the report: $(cat err.txt)"
check 'grep -q "^## One dtype against another" d.md' "the report's dtype section"
check 'grep -q "^- bf16 against fp32 over 6 configs (6 paired in the same rounds)" d.md' \
    "every bf16 config paired with its fp32 twin: $(grep "^- bf16 against" d.md)"
check '[ "$(grep -c "^| tiny .*| async, 2 devices, window sync, shard optimizer *| bf16 " d.md)" -eq 2 ]' \
    "each line names its shard: $(sed -n '/One dtype against/,/^## What/p' d.md)"

# A cap of exactly the fp32 optimizer 8 row's need: that row runs (the
# bf16 model beside it counted as it is cut), the larger needs are oom
cap=$(awk '$1 == "fp32" && $2 == "optimizer" && $3 == 8 { print $6 }' rows.txt)
$MPIRUN -np 2 "$ACCUBENCH" run $quick --model tiny --micro 4,8 --dtype fp32,bf16 \
    --shard none,optimizer --mem-cap "$cap" --csv capped.csv --quiet >/dev/null 2>err.txt
rows capped.csv >capped.txt
check '[ "$(awk "{ print \$1, \$2, \$3, \$4 }" capped.txt | tr "\n" " ")" = "fp32 none 4 oom bf16 none 4 oom fp32 none 8 oom bf16 none 8 oom fp32 optimizer 4 ok bf16 optimizer 4 oom fp32 optimizer 8 ok bf16 optimizer 8 oom " ]' \
    "a cap of $cap runs the rows that need at most it: $(cat capped.txt) $(tail -n 3 err.txt)"

# S's state is 84 MB in fp32 and 94 MB with bf16's copy of the weights: a
# 90 MB cap makes no bf16 model, and the fp32 rows still run on both ranks
$MPIRUN -np 2 "$ACCUBENCH" run $quick --model S --micro 8 --dtype fp32,bf16 --mem-cap 90M \
    --csv cap.csv --quiet >/dev/null 2>err.txt
rows cap.csv >cap.txt
check '[ "$(awk "{ print \$1, \$4 }" cap.txt | tr "\n" " ")" = "fp32 ok bf16 oom " ]' \
    "under a cap only bf16's model misses, fp32 runs: $(cat cap.txt) $(tail -n 3 err.txt)"
check 'grep -q "^cpu,.*,bf16,.*over the cap of 94371840" cap.csv' "the bf16 row says its need is over the cap"

# The cap on rank 1 alone: no rank makes the bf16 model (one that did
# would wait for the others in a collective they never start)
args="run $quick --model S --micro 8 --dtype fp32,bf16 --csv one.csv --quiet"
timeout 300 $MPIRUN -np 1 "$ACCUBENCH" $args : -np 1 "$ACCUBENCH" $args --mem-cap 90M \
    >/dev/null 2>err.txt
check '[ $? -eq 0 ]' "a cap on one rank exits 0: $(tail -n 5 err.txt)"
rows one.csv >one.txt
check '[ "$(awk "{ print \$1, \$4 }" one.txt | tr "\n" " ")" = "fp32 ok bf16 oom " ] && grep -q "bf16 .*another rank.s memory cannot hold it" one.txt' \
    "rank 1's cap leaves bf16 out on every rank: $(cat one.txt)"
exit $fail
