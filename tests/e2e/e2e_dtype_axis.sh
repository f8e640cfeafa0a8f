#!/bin/sh
# --dtype fp32,bf16: dtype is an axis of the sweep. One run measures every
# config in both, in the same interleaved rounds (one comparison), each
# passing its gradient check in its dtype; each dtype's series keeps its
# own reference (no ratio crosses dtypes), its own peak probes, and its own
# peak GEMM line measured in its storage (the plain lines the last dtype's,
# the first's as NAME_fp32); a row's memory peak is its own dtype's alone.
# The report, and compare --dtypes, pair each bf16 config with its fp32
# twin round by round.
# auto in a list, and a dtype the backend cannot compute in, are refused
# before anything runs.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
meta() { sed -n "s/^# $1: //p" d.csv; }
# rows FILE: "dtype micro status comparison vs_ref probe_before peak need grad_err"
rows() {
    awk -F, '/^#/ { next } !h { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; next }
        { print $c["dtype"], $c["micro_batch"], $c["status"], $c["comparison"], $c["vs_ref"],
                $c["probe_tflops_before"], $c["mem_peak_bytes"], $c["mem_need_bytes"],
                $c["grad_rel_err"] }' "$1"
}
quick="--backend cpu --model gpt-tiny --effective 8 --budget-s 0.3 --trace-steps 0 \
    --noise-windows 0"

"$ACCUBENCH" run $quick --micro 8,4 --dtype fp32,bf16 --csv d.csv > run.txt 2> err.txt
check '[ $? -eq 0 ]' "the run of both exits 0: $(cat err.txt)"
rows d.csv > rows.txt
# the console table shows no dtype column (one dtype is said above it):
# with several, each row says its own
check '[ "$(tr -s " \n" " " <run.txt | grep -o "ok: dtype [a-z0-9]*" | sort | uniq -c | awk "{ print \$1, \$4 }" | tr "\n" " ")" = "2 bf16 2 fp32 " ]' \
    "each console row names its dtype: $(grep -A1 ' ok' run.txt | head -8)"
check '[ "$(awk "{ print \$1, \$2 }" rows.txt | tr "\n" " ")" = "fp32 4 bf16 4 fp32 8 bf16 8 " ]' \
    "each split in each dtype, dtype the outermost row axis: $(awk '{ print $1, $2 }' rows.txt | tr '\n' ' ')"
check '[ "$(awk "{ print \$3 }" rows.txt | sort -u)" = "ok" ]' "every row ok: $(awk '{ print $3 }' rows.txt | tr '\n' ' ')"
# the gradient check ran and passed in each dtype (a failed one is an error row)
check '[ "$(awk "\$3 == \"ok\" && \$9 != \"\" { print \$1 }" rows.txt | sort -u | tr "\n" " ")" = "bf16 fp32 " ]' \
    "a passed gradient check in each dtype: $(awk '{ print $1, $9 }' rows.txt | tr '\n' ' ')"
check '[ "$(awk "{ print \$4 }" rows.txt | sort -u | wc -l)" -eq 1 ] && [ -n "$(awk "NR == 1 { print \$4 }" rows.txt)" ]' \
    "all four timed in one comparison: $(awk '{ print $4 }' rows.txt | tr '\n' ' ')"
# each dtype's series has its own reference, its 8x1: no ratio crosses dtypes
check '[ "$(awk "\$2 == 8 { print \$1, \$5 }" rows.txt | tr "\n" " ")" = "fp32 1 bf16 1 " ]' \
    "each dtype's 8x1 is its own reference: $(awk '{ print $1, $2, $5 }' rows.txt | tr '\n' ' ')"
# the probes beside the comparison: one per dtype, each dtype's rows its own
p32=$(awk '$1 == "fp32" { print $6 }' rows.txt | sort -u)
p16=$(awk '$1 == "bf16" { print $6 }' rows.txt | sort -u)
check '[ "$(echo "$p32" | wc -l)" -eq 1 ] && [ "$(echo "$p16" | wc -l)" -eq 1 ] && [ -n "$p32" ] && [ "$p32" != "$p16" ]' \
    "one probe per dtype: fp32 '$p32', bf16 '$p16'"
# a row's memory peak is its own: the other dtype's model and data held
# beside it are not in it (the need counts one model)
check '[ -z "$(awk "\$7 + 0 > 1.05 * \$8 { print }" rows.txt)" ]' \
    "each peak within 5% of its need: $(awk '{ print $1, $2, $7, $8 }' rows.txt | tr '\n' ' ')"

# the metadata: both dtypes, each one's peak measured in its own storage
check '[ "$(meta dtype)" = "fp32, bf16" ]' "the dtype line names both: '$(meta dtype)'"
peak_bytes() { # SHAPE-LINE ELEMENT-BYTES: what 3 n x n matrices of that size hold
    n=$(echo "$1" | sed 's/x.*//'); echo $((3 * n * n * $2))
}
check '[ "$(meta peak_gemm_memory | sed "s/ .*//")" = "$(peak_bytes "$(meta peak_gemm_shape)" 2)" ] && meta peak_gemm_shape | grep -q " bf16$"' \
    "the plain peak is bf16's, in bf16: $(meta peak_gemm_shape), $(meta peak_gemm_memory)"
check '[ "$(meta peak_gemm_memory_fp32 | sed "s/ .*//")" = "$(peak_bytes "$(meta peak_gemm_shape_fp32)" 4)" ] && meta peak_gemm_shape_fp32 | grep -q " fp32$"' \
    "fp32's peak beside it, in fp32: $(meta peak_gemm_shape_fp32), $(meta peak_gemm_memory_fp32)"
check '[ -n "$(meta peak_gemm_tflops)" ] && [ -n "$(meta peak_gemm_tflops_fp32)" ]' "both rates"
check 'meta attention | grep -q "^unfused" && meta attention_fp32 | grep -q "^fused"' \
    "each dtype's attention: '$(meta attention)', fp32 '$(meta attention_fp32)'"
check 'meta library | grep -q "(bf16 GEMM: " && ! meta library_fp32 | grep -q "(bf16 GEMM"' \
    "each dtype's library: '$(meta library)', fp32 '$(meta library_fp32)'"
check 'grep -q "peak GEMM .* fp32: " run.txt && grep -q "peak GEMM .* bf16: " run.txt' \
    "both peaks said: $(grep "peak GEMM" run.txt | tr '\n' ' ')"
check 'grep -q "gpt-tiny fp32, E 8" run.txt && grep -q "gpt-tiny bf16, E 8" run.txt' \
    "the summary's series are per dtype: $(grep ", E 8" run.txt | tr '\n' ' ')"

# the report: each bf16 config against its fp32 twin, paired per round
"$ACCUBENCH" report d.csv --no-charts >/dev/null 2>err.txt
check '[ $? -eq 0 ]' "the report: $(cat err.txt)"
check 'grep -q "^## One dtype against another" d.md' "the report's dtype section"
check '[ "$(grep -c "^| gpt-tiny .*| bf16 .*x \[.*\] .*| paired " d.md)" -eq 2 ]' \
    "both bf16 configs paired with fp32: $(sed -n '/One dtype against/,/^## What/p' d.md)"
check 'grep -q "^- bf16 against fp32 over 2 configs (2 paired in the same rounds)" d.md' \
    "and counted: $(grep "^- bf16 against" d.md)"
# RUN.json carries the same pairs: each bf16 row its fp32 twin's ratio, paired
check '[ "$(grep -c "\"dtype\": \"bf16\".*\"vs_dtype\": \"fp32\", .*\"vs_dtype_paired_rounds\": [1-9][0-9]*, " d.json)" -eq 2 ] && [ "$(grep -c "\"dtype\": \"fp32\".*\"vs_dtype\": null" d.json)" -eq 2 ]' \
    "the JSON's dtype pairs: $(grep -o '"vs_dtype[^,]*' d.json | tr '\n' ' ')"
# compare: the file against itself, its fp32 rows against its bf16 twins,
# paired per round as the report pairs them (compare marks with a trailing
# * a ratio whose rounds disagree with the pooled medians: a footnote of
# its own, not part of the ratio)
"$ACCUBENCH" compare d.csv d.csv --dtypes fp32,bf16 > cmp.txt 2> err.txt
rc=$?
check '[ $rc -eq 0 ] || [ $rc -eq 1 ]' "compare --dtypes exits 0 or 1 (a slower config): $rc $(cat err.txt)"
check 'grep -q "^compare: 2 configs in both: .*; 0 only in base, 0 only in new" cmp.txt' \
    "both configs paired: $(grep "^compare:" cmp.txt)"
check 'grep -q "^# verdict: .*(paired round by round where the two rows were timed in the same rounds, else " cmp.txt' \
    "the verdict line says the rounds pair: $(grep "^# verdict" cmp.txt)"
for m in 4 8; do
    ratio=$(awk -F'|' -v m="$m" '$3 ~ /fp32 > bf16/ { gsub(/ /, "", $7); gsub(/ /, "", $10)
        if ($7 ~ "^" m "x") { sub(/\*$/, "", $10); print $10 } }' cmp.txt)
    in_report=$(grep "^| gpt-tiny .*| ${m}x[0-9]* .*| bf16 " d.md | awk -F'|' '{ print $9 }' | tr -d ' ')
    check '[ -n "$ratio" ] && [ "$ratio" = "$in_report" ]' \
        "micro $m: compare's ratio '$ratio' is the report's paired one '$in_report'"
done
"$ACCUBENCH" compare d.csv d.csv --dtypes fp32,fp32 > /dev/null 2> err.txt
check '[ $? -eq 2 ] && grep -q "two different dtypes" err.txt' "one dtype twice is refused: $(cat err.txt)"
"$ACCUBENCH" compare d.csv d.csv --dtypes fp32 > /dev/null 2> err.txt
check '[ $? -eq 2 ] && grep -q "needs BASE,NEW" err.txt' "one dtype alone is refused: $(cat err.txt)"

# the same configs timed apart compare through their intervals, never paired
"$ACCUBENCH" run $quick --micro 8 --dtype fp32 --csv apart.csv --quiet >/dev/null 2>&1
"$ACCUBENCH" run $quick --micro 8 --dtype bf16 --csv apart.csv --append --quiet >/dev/null 2>&1
"$ACCUBENCH" report apart.csv --no-charts >/dev/null 2>err.txt
check 'grep -q "^| gpt-tiny .*| bf16 .*| apart " apart.md && grep -q "(0 paired in the same rounds)" apart.md' \
    "runs apart compared apart: $(sed -n '/One dtype against/,/^## What/p' apart.md)"
# three steps a side timed apart give no interval: counted as such, never
# as "not yet separated" (the rule's floor, paired.h)
"$ACCUBENCH" run $quick --micro 8 --dtype fp32,bf16 --rounds off --steps 3 --csv few.csv \
    --quiet >/dev/null 2>&1
"$ACCUBENCH" report few.csv --no-charts >/dev/null 2>err.txt
check 'grep -q "^- bf16 against fp32 over 1 config (0 paired in the same rounds): .*not yet separated in 0, no interval in 1\.$" few.md' \
    "too few steps counted apart from not yet separated: $(grep "^- bf16 against" few.md) $(cat err.txt)"

# two reductions: the dtype table's lines say which is which (they read
# alike, "tiny 16x1 async" twice)
"$ACCUBENCH" run --backend cpu --model tiny --effective 16 --micro 16 --dtype fp32,bf16 \
    --reduction sum,mean-of-means --noise-windows 0 --trace-steps 0 --budget-s 0.05 \
    --csv red.csv --quiet >/dev/null 2>&1
"$ACCUBENCH" report red.csv --no-charts >/dev/null 2>err.txt
check '[ "$(grep -c "^| tiny .*| async  *| bf16 " red.md)" -eq 1 ] &&
       [ "$(grep -c "^| tiny .*| async, mean-of-means reduction *| bf16 " red.md)" -eq 1 ]' \
    "each reduction named in the dtype table: $(sed -n '/One dtype against/,/^## What/p' red.md)"

# A dtype whose model does not fit the cap is that dtype's rows alone: S's
# state is 84 MB in fp32 and 94 MB with bf16's copy of the weights, so a
# 90 MB cap makes no bf16 model; the fp32 rows still run.
"$ACCUBENCH" run --backend cpu --model S --effective 16 --micro 16 --dtype fp32,bf16 \
    --mem-cap 90M --budget-s 0.2 --trace-steps 0 --noise-windows 0 --csv cap.csv >/dev/null 2>err.txt
rows cap.csv > cap.txt
check '[ "$(awk "{ print \$1, \$3 }" cap.txt | tr "\n" " ")" = "fp32 ok bf16 oom " ]' \
    "under a cap only bf16's model misses, fp32 runs: $(cat cap.txt) $(cat err.txt)"
check 'grep -q "^cpu,.*,bf16,.*over the cap of 94371840" cap.csv' \
    "the bf16 row says its need is over the cap: $(grep -c bf16 cap.csv)"

# refused before anything runs, nothing written
"$ACCUBENCH" run $quick --micro 8 --dtype fp32,auto --csv no1.csv > /dev/null 2> err.txt
check '[ $? -eq 2 ] && grep -q "auto is the backend.s one choice and stands alone" err.txt && [ ! -e no1.csv ]' \
    "auto in a list is refused: $(cat err.txt)"
"$ACCUBENCH" run $quick --micro 8 --dtype fp32,tf32 --csv no2.csv > /dev/null 2> err.txt
check '[ $? -eq 2 ] && grep -q "tf32 needs --backend cuda" err.txt && [ ! -e no2.csv ]' \
    "a dtype the CPU cannot compute in is refused: $(cat err.txt)"
# the default file name names both
mkdir out
"$ACCUBENCH" run $quick --micro 8 --dtype fp32,bf16 --out out --quiet > /dev/null 2>&1
check 'ls out | grep -q "^accubench-custom-cpu-fp32+bf16-.*\.csv$"' "the file's name: $(ls out)"
exit $fail
