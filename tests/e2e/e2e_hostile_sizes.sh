#!/bin/sh
# Hostile sizes, bounded and said: a shape whose memory need passes 2^64
# is a skipped row saying the count saturated (never a small number that
# wrapped), and the same shape without the stored scores an exact count, and plan --fit on more all-reduce samples or splits than it
# reads says how many it ignored.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
# col CSV NAME: the values of column NAME, one per row
col() {
    awk -F, -v name="$2" '/^#/ || !NF { next } !h { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } { print $c }' "$1"
}

# ---- the memory need saturates: about 4.5e20 bytes, once written 4.8e18,
# with the attention scores stored (the unfused attention, CUDA's)
ACCUBENCH_CPU_ATTENTION=unfused "$ACCUBENCH" run --backend cpu \
    --model gpt:d=1024,layers=96,heads=1024,seq=32768,vocab=2 \
    --effective 1048576 --micro 1048576 --steps 1 --warmup 0 --no-cupti --quiet \
    --csv huge.csv >/dev/null 2>huge.err
check "[ \"\$(col huge.csv mem_need_bytes)\" = 9223372036854775807 ]" \
    "the need is not saturated at 2^63-1: $(col huge.csv mem_need_bytes) $(cat huge.err)"
check "col huge.csv note | grep -q 'saturates at 2^63'" "the row does not say so: $(col huge.csv note)"
check "[ \"\$(col huge.csv status)\" = oom ]" "the row is not skipped as oom: $(col huge.csv status)"
# Fused, no scores: 2.3e17 bytes, exact, and the row says about that many
# (its note adds the host copies of the gradient check).
"$ACCUBENCH" run --backend cpu --model gpt:d=1024,layers=96,heads=1024,seq=32768,vocab=2 \
    --effective 1048576 --micro 1048576 --steps 1 --warmup 0 --no-cupti --quiet \
    --csv fused.csv >/dev/null 2>fused.err
need=$(col fused.csv mem_need_bytes)
check "[ \"\$(col fused.csv status)\" = oom ] && [ \${#need} -eq 18 ] && col fused.csv note | grep -Eq \"needs 2307[0-9]{14} bytes\"" \
    "fused: an oom row of 2.3e17 bytes, not saturated: $need $(col fused.csv note) $(cat fused.err)"

# ---- plan --fit says what it left out
# N rows of blocking all-reduces on a 1 GB/s, 5 us ring, over M models.
dp_rows() {
    awk -v rows="$1" -v models="$2" 'BEGIN {
        print "# backend: cpu"
        print "backend,device,model,params,dtype,mode,reduction,effective_batch,micro_batch," \
              "accum_steps,devices,sync,step_ms_median,comm_ms,comm_exposed_ms," \
              "allreduce_calls_per_step,allreduce_bytes_per_step,status,note"
        for (i = 0; i < rows; i++) {
            d = i % 2 ? 4 : 2; p = 1000 * (1 + i % 5); b = 4 * p
            t = 2 * (d - 1) / d * b / 1e9 + 2 * (d - 1) * 5e-6
            # E = 8 d: micro 4 twice on each of the d devices
            printf "cpu,x,m%d,%d,fp32,async,sum,%d,4,2,%d,micro,%g,%g,%g,2,%d,ok,\n",
                i % models, p, 8 * d, d, 1 + 2e3 * t, 2e3 * t, 2e3 * t, 2 * b
        }
    }'
}
dp_rows 5000 70 >many.csv
"$ACCUBENCH" plan --fit many.csv >many.out 2>many.err
check "[ \$? -eq 0 ]" "plan --fit on 5000 samples failed: $(cat many.err)"
check "grep -q '^# note: the file holds 5000 all-reduce samples; the first 4096 are used, 904 ignored' many.out" \
    "the ignored samples are not said: $(head -n 3 many.out)"
check "grep -q '^# fitted on 4096 blocking' many.out" "not fitted on the 4096 read: $(head -n 3 many.out)"
check "grep -q '^# projected: the first 64 splits of the file; 426 rows of later splits ignored' many.out" \
    "the splits past the table are not said: $(grep '^#' many.out)"
dp_rows 100 3 >few.csv
"$ACCUBENCH" plan --fit few.csv >few.out 2>&1
check "! grep -q 'ignored' few.out" "a file within the limits is said to be cut: $(grep '^#' few.out)"

exit $fail
