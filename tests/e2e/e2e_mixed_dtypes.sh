#!/bin/sh
# One file, runs in two dtypes (--append; plan --recommend sweeps every
# dtype the backend computes in into one file): the dtype line names both
# in the order they last ran, the plain per-dtype lines (peak, attention,
# library) are the last run's, the earlier dtype's stay beside them as
# KEY_DTYPE, and the report gives both peaks. A third run in the first
# dtype puts it last again and drops its own earlier suffixed lines.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
meta() { sed -n "s/^# $1: //p" m.csv; }
quick="--backend cpu --model gpt-tiny --effective 8 --micro 8 --steps 2 --budget-s 0.05 \
    --warmup 1 --trace-steps 0 --noise-windows 0"

"$ACCUBENCH" run $quick --dtype fp32 --csv m.csv >/dev/null 2>err.txt
check '[ $? -eq 0 ]' "the fp32 run: $(cat err.txt)"
fp32_peak=$(meta peak_gemm_tflops)
"$ACCUBENCH" run $quick --dtype bf16 --csv m.csv --append >/dev/null 2>err.txt
check '[ $? -eq 0 ]' "the bf16 run appended: $(cat err.txt)"
check '[ "$(meta dtype)" = "fp32, bf16" ]' "the dtype line names both: '$(meta dtype)'"
check '[ "$(meta peak_gemm_tflops_fp32)" = "$fp32_peak" ] && meta peak_gemm_shape_fp32 | grep -q " fp32$"' \
    "the fp32 run's peak kept beside: '$(meta peak_gemm_tflops_fp32)' (was $fp32_peak)"
check 'meta peak_gemm_shape | grep -q " bf16$"' "the plain peak is the bf16 run's: $(meta peak_gemm_shape)"
# the CPU runs fp32's attention fused and bf16's unfused: each line its own
check 'meta attention | grep -q "^unfused" && meta attention_fp32 | grep -q "^fused"' \
    "each dtype's attention: '$(meta attention)', fp32 '$(meta attention_fp32)'"
check 'meta library | grep -q "(bf16 GEMM: " && ! meta library_fp32 | grep -q "(bf16 GEMM"' \
    "each dtype's library: '$(meta library)', fp32 '$(meta library_fp32)'"
"$ACCUBENCH" report m.csv --no-charts >/dev/null 2>err.txt
check 'grep -q "^| peak GEMM rate .*bf16); .*; the fp32 run.s $fp32_peak TFLOP/s ([0-9x]* fp32)" m.md' \
    "the report gives both peaks: $(grep "peak GEMM rate" m.md)"
check 'grep -q "^| dtype, optimizer | fp32, bf16; adamw" m.md' "and both dtypes: $(grep "dtype, optimizer" m.md)"

"$ACCUBENCH" run $quick --dtype fp32 --csv m.csv --append >/dev/null 2>err.txt
check '[ $? -eq 0 ]' "fp32 again: $(cat err.txt)"
check '[ "$(meta dtype)" = "bf16, fp32" ]' "fp32 last again: '$(meta dtype)'"
check '[ -z "$(meta peak_gemm_tflops_fp32)" ] && meta peak_gemm_shape_bf16 | grep -q " bf16$" && meta peak_gemm_shape | grep -q " fp32$"' \
    "the plain lines fp32's, bf16's beside, no stale fp32 line: $(grep "^# peak_gemm_shape" m.csv | tr '\n' ' ')"
check '[ $(grep -c "^# dtype:" m.csv) -eq 1 ]' "one dtype line"
exit $fail
