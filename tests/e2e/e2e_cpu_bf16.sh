#!/bin/sh
# bf16 on the CPU: model S and a small GPT run with bf16 activations
# and weight copy, every row ok (the accumulated gradient within bf16's
# tolerance of the full batch's); the CSV says bf16, the peak GEMM was
# timed in bf16 and the library line names the bf16 GEMM's path; the GPT
# takes the unfused attention; the Llama runs too; plan finds a larger
# micro-batch under one cap in bf16 than in fp32 (its activations are half
# the bytes); --dtype auto stays fp32.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
col() { awk -F, -v name="$1" '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } print $c }' "$2"; }
# A few fixed steps: the rows' correctness and labels are the point here, not
# their timing (two splits each, timed apart).
quick="--steps 3 --budget-s 0.05 --warmup 1 --trace-steps 0 --noise-windows 0 --max-step-s 600"

"$ACCUBENCH" run --backend cpu --dtype bf16 --model S --effective 32 --micro 32,4 $quick \
    --csv s.csv >s.txt 2>err.txt
check '[ $? -eq 0 ]' "S in bf16 exits 0: $(cat err.txt)"
check '[ "$(col status s.csv | sort -u)" = "ok" ]' "S rows ok: $(col status s.csv | tr '\n' ' ')"
check '[ "$(col dtype s.csv | sort -u)" = "bf16" ]' "S rows are bf16"
check 'grep -q "^# dtype: bf16" s.csv' "the CSV's dtype"
check 'grep -q "^# peak_gemm_shape: [0-9x]* bf16" s.csv' "the peak GEMM in bf16: $(grep peak_gemm s.csv)"
check 'grep -q "^# library: .*(bf16 GEMM: " s.csv' "the library line names the bf16 GEMM"

gpt=gpt:d=64,layers=2,heads=2,seq=32,vocab=512
"$ACCUBENCH" run --backend cpu --dtype bf16 --model $gpt --effective 16 --micro 16,4 $quick \
    --csv gpt.csv >gpt.txt 2>err.txt
check '[ $? -eq 0 ]' "the GPT in bf16 exits 0: $(cat err.txt)"
check '[ "$(col status gpt.csv | sort -u)" = "ok" ]' "gpt rows ok: $(col status gpt.csv | tr '\n' ' ')"
check 'grep -q "^# attention: unfused" gpt.csv' "bf16 takes the unfused attention"
for v in $(col mfu_pct gpt.csv); do
    check "awk 'BEGIN { exit !($v > 0) }'" "mfu > 0: $v"
done

"$ACCUBENCH" run --backend cpu --dtype bf16 --model llama-tiny --effective 8 --micro 8,2 $quick \
    --csv llama.csv >/dev/null 2>err.txt
check '[ $? -eq 0 ] && [ "$(col status llama.csv | sort -u)" = "ok" ]' \
    "llama-tiny in bf16 runs ok: $(cat err.txt) $(col status llama.csv | tr '\n' ' ')"

# Under one cap bf16's micro-batch is larger: half the activations' bytes.
max_micro() {
    "$ACCUBENCH" plan --find-max-micro --backend cpu --dtype "$1" --model S --mem-cap 120M \
        --effective 1024 2>&1 | sed -n 's/^largest micro-batch: \([0-9][0-9]*\).*/\1/p'
}
m32=$(max_micro fp32)
m16=$(max_micro bf16)
check '[ -n "$m32" ] && [ -n "$m16" ] && [ "$m16" -gt "$m32" ]' \
    "plan: bf16's largest micro-batch ($m16) over fp32's ($m32) under 120M"

# a dtype the device refuses, named first, is skipped, not the whole answer
"$ACCUBENCH" plan --find-max-micro --backend cpu --dtype tf32,fp32,bf16 --model tiny \
    --effective 8 >order.txt 2>&1
check '[ $? -eq 1 ] && grep -q "^largest micro-batch: skipped: " order.txt &&
    [ "$(grep -c "^largest micro-batch: 8," order.txt)" -eq 2 ]' \
    "tf32 first: skipped, fp32 and bf16 answered, exit 1: $(cat order.txt)"

"$ACCUBENCH" run --backend cpu --model tiny --effective 8 --micro 8 $quick --csv auto.csv \
    >/dev/null 2>&1
check 'grep -qx "# dtype: fp32" auto.csv' "--dtype auto on the CPU stays fp32"
exit $fail
