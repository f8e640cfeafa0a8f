#!/bin/sh
# make check-gpu's last table (scripts/check_gpu_table.sh) from CSVs that
# lack a column a part reads, or hold a cell that is no number: each such
# figure prints as "-" (or its row's words), never as a number awk made
# of the row's other cells ($col[NAME] for a name the header lacks is $0,
# the whole line) or of "nan" (gawk: 0). Run under every awk found here
# (mawk, gawk, busybox's): a GPU image may have any of them.
set -u
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p cg
# the default arrangement's rows: no samples_per_s, no mfu_datasheet_pct
cat >cg/gpt-fp32.csv <<'CSV'
# accubench results
# attention: fused (one op a pass, no scores stored)
micro_batch,accum_steps,status,step_ms_median,mfu_pct,note
8,2,ok,7.437,50.0,split 8x2
16,1,oom,,,out of memory
CSV
# the other arrangement's: no step_ms_median
cat >cg/gpt-attention-fp32.csv <<'CSV'
# attention: unfused (permutes, strided-batched GEMMs, causal softmax)
micro_batch,accum_steps,status,note
8,2,ok,7.5 ms by another clock
CSV
# no mfu_pct; abc's modes without step_ms_median
cat >cg/sweep-fp32.csv <<'CSV'
model,micro_batch,accum_steps,status,step_ms_median,tflops,note
tiny,256,1,ok,0.192,0.0629,99.9
CSV
cat >cg/abc-modes.csv <<'CSV'
mode,micro_batch,status,note
async,64,ok,12.5
CSV
# data parallel: no busbw_gbps, and a NaN (empty) grad_rel_err
cat >cg/dp.csv <<'CSV'
# ranks: 2 launched; all-reduce by mpi
devices,sync,shard,micro_batch,accum_steps,status,step_ms_median,allreduce_calls_per_step,comm_exposed_ms,grad_rel_err,note
2,overlap,none,8,16,ok,0.169,3,0.018,,x
CSV
# gpu-check's own CSV: an error that is NaN
cat >cg/gpu-check.csv <<'CSV'
# gpu-check: device against the CPU reference; error = relative L2
check,dtype,split,error,tolerance,status,note
window,fp32,32x1,nan,1e-05,FAIL,a NaN in the gradient
window,fp32,16x2,8.7e-08,1e-05,ok,
CSV
printf 'gpu-check\tFAIL\texit 1\n' >cg/stages.txt
# the table, as check_gpu.sh sources it, with its settings
cat >table.sh <<'SH'
here=$ACCUBENCH_ROOT/scripts out=cg sweep_dtype=fp32 models_s=tiny gpt_model=gpt-tiny
ratio_modes=async,sync failed=" gpu-check" gpu_state=""
elapsed() { echo 0; }
. "$here/check_gpu_table.sh"
table
echo "figure gpt-sweep: $(figure gpt-sweep)"
echo "figure attention: $(figure attention)"
SH

# Each awk found here, as awk on PATH.
mkdir -p awks
n=0
for a in awk mawk gawk original-awk "busybox awk"; do
    set -- $a
    command -v "$1" >/dev/null 2>&1 || continue
    [ "$#" -eq 1 ] || "$@" 'BEGIN { exit 0 }' 2>/dev/null || continue
    n=$((n + 1))
    mkdir -p "awks/$n"
    printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v "$1")${2:+ $2}" >"awks/$n/awk"
    chmod +x "awks/$n/awk"
    PATH="$PWD/awks/$n:$PATH" sh table.sh >"table-$n" 2>&1 || { cat "table-$n"; fail "$a: the table failed"; }
    t="table-$n"
    for want in "  micro   8 x 2        7.437 ms          - seq/s  MFU  50.0%  (no datasheet figure)" \
        "  micro 16: oom out of memory" "  tiny  micro  256 x 1       0.192 ms    0.0629 TFLOP/s  MFU     -%$" \
        "  async                 -  " \
        "  2    overlap  none            8x16      0.169          3      0.018         -  grad -, weights equal" \
        "  fp32   32x1 nan!  16x2 8.7e-08" "    FAIL window fp32 32x1: error nan (tol 1e-05) a NaN in the gradient" \
        "figure gpt-sweep: micro 8: 50.0% of the measured peak$" "figure attention: $"; do
        grep -q -- "^$want" "$t" || { cat "$t"; fail "$a: the table lacks '$want'"; }
    done
done
[ "$n" -gt 0 ] || fail "no awk here"
echo "ok: check-gpu's table prints '-' for a missing column or a cell that is no number ($n awks)"
