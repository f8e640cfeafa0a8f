#!/bin/sh
# cpu-passes: the MFU line of every run, the steps' CPU time, and the step
# op by op with the op counts the model's shape implies. No timing is
# judged: only that each number is there and the counts are right.
set -u
passes=$(dirname "${ACCUBENCH:?}")/cpu-passes
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$passes" ] || fail "$passes not built"

# tiny: 2 hidden layers, 3 linear layers; 16 examples as 4 x 4.
out=$("$passes" --model tiny --effective 16 --micro 4 --runs 2 --steps 3) ||
    fail "exit $? on a good run: $out"
echo "$out"
for r in 1 2; do
    echo "$out" | grep -Eq "^run $r: peak GEMM ([0-9]+)x\1x\1 [0-9.]+ TFLOP/s; step [0-9.]+ ms .*MFU [0-9.]+%$" ||
        fail "no MFU line for run $r"
done
echo "$out" | grep -Eq "^MFU over 2 runs: min [0-9.]+%, max [0-9.]+%$" || fail "no MFU summary"
echo "$out" | grep -Eq "^CPU time a step over 3 steps: p10 [0-9.]+ ms, median [0-9.]+ ms \(the process's, on [0-9]+ threads?\)$" ||
    fail "no CPU time line"
calls() { echo "$out" | awk -v op="$1" '$1 == op { print $2 }'; }
# Per micro-batch: 3 forward GEMMs, 3 weight-gradient GEMMs, 2 input-gradient.
[ "$(calls gemm)" = "32.0" ] || fail "gemm calls/step $(calls gemm), want 32.0"
[ "$(calls bias_gelu)" = "8.0" ] || fail "bias_gelu calls/step $(calls bias_gelu), want 8.0"
[ "$(calls softmax_xent)" = "4.0" ] || fail "softmax_xent calls/step $(calls softmax_xent)"
# The optimizer in the last backward (the default): one update per layer.
[ "$(calls adamw)" = "3.0" ] || fail "adamw calls/step $(calls adamw), want 3.0"
echo "$out" | grep -q "optimizer at backward" || fail "no 'optimizer at backward' in the header"
# After the window: one update.
out=$("$passes" --model tiny --effective 16 --micro 4 --runs 1 --steps 3 --optimizer-at step) ||
    fail "exit $? on --optimizer-at step: $out"
[ "$(calls adamw)" = "1.0" ] || fail "--optimizer-at step: adamw calls/step $(calls adamw), want 1.0"
echo "$out" | grep -Eq "^  host +[-0-9.]+ +[-0-9.]+%$" || fail "no host line"
echo "$out" | grep -q "^model tiny, effective batch 16 as 4x4," || fail "the split in the header"
# A ragged split is written as the rest of the program writes it: 3 then 1.
out=$("$passes" --model tiny --effective 4 --micro 3 --runs 1 --steps 2) ||
    fail "exit $? on a ragged split: $out"
echo "$out" | grep -q "^model tiny, effective batch 4 as K=2: 3+1," ||
    fail "a ragged split: $(echo "$out" | head -n 1)"
# bf16: the model in bf16 storage, said in the header.
out=$("$passes" --model tiny --effective 8 --micro 4 --runs 1 --steps 2 --dtype bf16) ||
    fail "exit $? on --dtype bf16: $out"
echo "$out" | grep -q "^model tiny, effective batch 8 as 4x2, [0-9.]* GFLOP a step, bf16," ||
    fail "--dtype bf16: $(echo "$out" | head -n 1)"
[ "$(calls gemm)" = "16.0" ] || fail "--dtype bf16: gemm calls/step $(calls gemm), want 16.0"
echo "ok: MFU per run and the per-pass table"

# Bad input: one line naming the problem and echoing it, exit 2.
"$passes" --runs 0 >/dev/null 2>err.txt; rc=$?
[ "$rc" -eq 2 ] || fail "--runs 0: exit $rc, want 2"
grep -q "^cpu-passes: runs .*'0'" err.txt || fail "--runs 0: $(cat err.txt)"
"$passes" --model nosuch >/dev/null 2>err.txt; rc=$?
[ "$rc" -eq 2 ] || fail "--model nosuch: exit $rc, want 2"
grep -q "nosuch" err.txt || fail "--model nosuch: $(cat err.txt)"
"$passes" --effective 8 --micro 16 >/dev/null 2>err.txt; rc=$?
[ "$rc" -eq 2 ] || fail "--micro over --effective: exit $rc, want 2"
"$passes" --optimizer-at sideways >/dev/null 2>err.txt; rc=$?
[ "$rc" -eq 2 ] || fail "--optimizer-at sideways: exit $rc, want 2"
grep -q "sideways" err.txt || fail "--optimizer-at sideways: $(cat err.txt)"
"$passes" --dtype fp32,bf16 >/dev/null 2>err.txt; rc=$?
[ "$rc" -eq 2 ] || fail "--dtype fp32,bf16: exit $rc, want 2"
"$passes" --dtype tf32 >/dev/null 2>err.txt; rc=$?
[ "$rc" -eq 2 ] || fail "--dtype tf32 on the CPU: exit $rc, want 2"
for bad in "--runs 0" "--model nosuch" "--effective 8 --micro 16" "--optimizer-at sideways" \
           "--bogus 1" "--steps" "extra" "--dtype fp32,bf16" "--dtype tf32"; do
    # shellcheck disable=SC2086
    "$passes" $bad >/dev/null 2>err.txt
    [ "$(wc -l <err.txt)" -eq 1 ] || fail "$bad: not one line: $(cat err.txt)"
done
echo "ok: bad input refused"
