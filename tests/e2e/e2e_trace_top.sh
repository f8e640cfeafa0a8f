#!/bin/sh
# scripts/trace_top.sh, check-gpu's hot-kernels table: a real trace file
# of a CPU run, its kernels summed by name, the listed lines adding up to
# the step's total and its kernel count; the top N and the rest; mangled
# C++ names (a CUDA trace's) demangled and cut before their parameters;
# bad usage and a trace without kernels exit 2 with one line.
set -u
fail() { echo "FAIL: $*"; exit 1; }
top() { sh "${ACCUBENCH_ROOT:?}/scripts/trace_top.sh" "$@"; }
"$ACCUBENCH" run --backend cpu --model gpt-tiny --dtype fp32 --effective 4 --micro 2 \
    --steps 1 --trace-steps 1 --noise-windows 0 --trace t.json --csv t.csv --quiet ||
    fail "the traced run failed"
top t.json 100 >all.txt || fail "trace_top failed: $(cat all.txt)"
# The kernels in the file, by the file itself.
events=$(grep -c '"cat":"kernel"' t.json)
sum=$(sed -n 's/.*"cat":"kernel",.*"dur":\([0-9.]*\).*/\1/p' t.json | awk '{ s += $1 } END { printf "%.3f", s / 1000 }')
head -n 1 all.txt | grep -q "^$sum ms of device time in $events kernels (cpu gpt-tiny fp32 2x2 async sum)$" ||
    fail "the first line is not the file's $sum ms in $events kernels: $(head -n 1 all.txt)"
# Every name once, largest first, the lines adding up to the total.
tail -n +3 all.txt | awk -v sum="$sum" -v events="$events" '
    { ms += $1; calls += $3; if (NR > 1 && $1 > last + 1e-9) bad = "not sorted at " $4; last = $1
      if (seen[$4]++) bad = $4 " twice" }
    END { if (bad != "") { print bad; exit 1 }
          if (calls != events || (ms - sum) ^ 2 > 1e-4) { print calls " calls, " ms " ms"; exit 1 } }' ||
    fail "the kernel lines do not add up to the file"
grep -q ' gemm$' all.txt || fail "no gemm line"
kinds=$(($(wc -l <all.txt) - 2))
top t.json 3 >three.txt || fail "trace_top t.json 3 failed"
[ "$(wc -l <three.txt)" -eq 6 ] && tail -n 1 three.txt | grep -q "($((kinds - 3)) other kernels)$" ||
    fail "the top 3 and the rest: $(cat three.txt)"
# A CUDA trace's names: mangled by the compiler, demangled here.
cat >cuda.json <<'JSON'
{"displayTimeUnit":"ns","otherData":{"tool":"accubench","config":"cuda x","step":2},"traceEvents":[
{"ph":"X","name":"_Z19softmax_xent_kernelIfLi4EEvPKT_PS0_PKiS5_PKfPfii","cat":"kernel","ts":1.000,"dur":2000.000,"pid":2,"tid":7},
{"ph":"X","name":"_Z19softmax_xent_kernelIfLi4EEvPKT_PS0_PKiS5_PKfPfii","cat":"kernel","ts":3000.000,"dur":1000.000,"pid":2,"tid":7},
{"ph":"X","name":"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64","cat":"kernel","ts":5000.000,"dur":500.000,"pid":2,"tid":7},
{"ph":"X","name":"step","cat":"range","ts":0.000,"dur":9000.000,"pid":1,"tid":1}
]}
JSON
top cuda.json >cuda.txt || fail "trace_top on the CUDA trace failed"
if command -v c++filt >/dev/null 2>&1; then
    grep -q '^     3.000  85.7%      2  softmax_xent_kernel<float, 4>$' cuda.txt ||
        fail "the mangled name not demangled and summed: $(cat cuda.txt)"
fi
grep -q '^     0.500  14.3%      1  sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64$' cuda.txt ||
    fail "a plain kernel name changed: $(cat cuda.txt)"
# Bad usage, exit 2 and one line each.
for args in "" "t.json 0" "t.json x" "missing.json" "t.csv"; do
    # shellcheck disable=SC2086 # the cases are word lists
    top $args >out.txt 2>err.txt; rc=$?
    [ "$rc" -eq 2 ] && [ ! -s out.txt ] && [ "$(wc -l <err.txt)" -eq 1 ] ||
        fail "trace_top $args: exit $rc, $(cat out.txt err.txt)"
done
echo "PASS"
