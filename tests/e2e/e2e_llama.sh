#!/bin/sh
# The Llama on the CPU: the gradient accumulated over 8 = 8x1, 4x2, 1x8 is
# the full batch's with attention fused and unfused (what CUDA runs), with
# the block recomputed and not; the recomputation needs less memory and
# credits the same FLOPs; 2 ranks shard it (ZeRO-1 and 2) with the same
# weights on every rank; --dump writes Hugging Face's names, and the
# manifest the shape with the rotary base and the norms' epsilon; the
# gradient is the same bits on any number of threads.
set -u
. "$(dirname "$0")/mpi_env.sh"
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
col() { awk -F, -v name="$1" '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } print $c }' "$2"; }
under() { for e in $(col grad_rel_err "$1"); do check "awk 'BEGIN { exit !($e < 1e-5) }'" "$1: grad_rel_err $e under 1e-5"; done; }

rows="--backend cpu --model llama-tiny --effective 8 --micro 8,2,1 --recompute none,block --steps 2 --budget-s 0.05 --warmup 1 --trace-steps 0 --quiet"
"$ACCUBENCH" run $rows --csv fused.csv >run.txt 2>err.txt
check '[ $? -eq 0 ] && grep -q "^# attention: fused" fused.csv' "llama-tiny runs fused: $(cat err.txt)"
ACCUBENCH_CPU_ATTENTION=unfused "$ACCUBENCH" run $rows --csv unfused.csv >run.txt 2>err.txt
check '[ $? -eq 0 ] && grep -q "^# attention: unfused" unfused.csv' "llama-tiny runs unfused: $(cat err.txt)"
for f in fused.csv unfused.csv; do
    check '[ "$(col status $f | sort -u)" = "ok" ] && [ $(col status $f | wc -l) -eq 6 ]' "$f: six rows, all ok"
    under $f
    check '[ $(col flops_per_step $f | sort -u | wc -l) -eq 1 ]' "$f: one FLOP count for every split and recompute"
    need=$(awk -F, '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) { if ($i == "mem_need_bytes") n = i; if ($i == "recompute") r = i; if ($i == "micro_batch") m = i } h = 1; next } if ($m == 8) print $r "=" $n }' $f | sort | tr "\n" " ")
    check "echo '$need' | awk '{ split(\$1, b, \"=\"); split(\$2, n, \"=\"); exit !(b[1] == \"block\" && n[1] == \"none\" && b[2] + 0 < n[2] + 0) }'" \
        "$f: block needs less than none at 8x1: $need"
done
check '[ "$(col flops_per_step fused.csv | head -1)" = "$(col flops_per_step unfused.csv | head -1)" ]' \
    "the same FLOPs a step fused or not"

$MPIRUN -np 2 "$ACCUBENCH" run --backend cpu --model llama-tiny --effective 8 --micro 4,1 \
    --shard none,optimizer,gradients --sync window --steps 2 --budget-s 0.05 --warmup 1 --trace-steps 0 --quiet \
    --csv shard.csv >shard.log 2>&1 ||
    { echo "FAILED: 2 ranks, llama-tiny: exit $?"; cat shard.log; fail=1; }
check '[ "$(col status shard.csv | sort -u)" = "ok" ] && [ $(col status shard.csv | wc -l) -eq 6 ]' "shard: six rows, all ok"
check '[ "$(col rank_weight_diff shard.csv | sort -u)" = "0" ]' "shard: the ranks' weights agree"
under shard.csv
"$ACCUBENCH" run --backend cpu --model llama:d=16,layers=2,heads=4,kv_heads=2,ffn=24,seq=8,vocab=64,tied=0 \
    --effective 5 --micro 2 --budget-s 0.1 --min-samples 2 --trace-steps 0 --csv dump.csv \
    --dump ldump >/dev/null 2>err.txt
check '[ $? -eq 0 ] && [ -f ldump/manifest.json ]' "llama dump written: $(cat err.txt)"
check 'grep -q "\"kv_heads\": 2, \"ffn\": 24, \"seq\": 8, \"vocab\": 64, \"tied\": 0, \"rope_theta\": 500000, \"norm_eps\": 1e-05}" ldump/manifest.json' \
    "the manifest's shape: $(grep -o '"shape": {[^}]*}' ldump/manifest.json)"
for f in param.model.embed_tokens.weight.npy grad.model.layers.1.self_attn.k_proj.weight.npy \
    param.model.layers.0.mlp.down_proj.weight.npy grad.model.norm.weight.npy param.lm_head.weight.npy; do
    check "[ -f ldump/$f ]" "ldump/$f written: $(ls ldump | head -5)"
done
# The same gradient, bit for bit, on 1 thread and on 3: 16 sequences of 64
# (1024 columns of 128) cut every op between threads, in fp32 and in bf16.
# Through the portable GEMM, the same whatever library this host has:
# with OpenBLAS (what the sanitized build runs) the weight gradients differ
# in their last bits between thread counts (docs/cpu-backend.md).
wide=llama:d=128,layers=1,heads=4,kv_heads=2,ffn=128,seq=64,vocab=256,tied=0
for dt in fp32 bf16; do
    for th in 1 3; do
        ACCUBENCH_CPU_GEMM=portable ACCUBENCH_CPU_THREADS=$th \
            "$ACCUBENCH" run --backend cpu --model $wide --dtype $dt \
            --effective 16 --micro 16 --steps 2 --budget-s 0.05 --warmup 1 --trace-steps 0 \
            --quiet --csv "det_${dt}_$th.csv" --dump "det_${dt}_$th" >/dev/null 2>err.txt
        check '[ $? -eq 0 ] && ls det_${dt}_$th/grad.*.npy >/dev/null 2>&1' \
            "$wide $dt on $th threads, dumped: $(cat err.txt)"
    done
    differ=$(for f in det_${dt}_1/grad.*.npy; do cmp -s "$f" "det_${dt}_3/${f##*/}" || echo "${f##*/}"; done)
    check '[ -z "$differ" ]' "$dt: the gradient differs between 1 and 3 threads: $differ"
done
exit $fail
