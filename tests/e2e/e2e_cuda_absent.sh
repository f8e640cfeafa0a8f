#!/bin/sh
# Without a GPU, `--backend cuda` fails cleanly: exit status 2, one line on
# stderr that names CUDA, no CSV written; `--backend auto` falls back to the
# CPU and runs. The GPU check program (built where nvcc is) refuses the same
# way. Skipped where a GPU answers.
set -u
if [ -e /dev/nvidia0 ] && nvidia-smi >/dev/null 2>&1; then
    echo "SKIP: a GPU answers here; the CUDA backend is checked by make check-gpu"
    exit 0
fi
fail() { echo "FAIL: $*"; exit 1; }

timeout 60 "$ACCUBENCH" run --backend cuda --profile quick --out out-cuda >stdout 2>stderr
rc=$?
[ "$rc" -eq 2 ] || { cat stderr; fail "--backend cuda exited $rc, expected 2"; }
[ "$(wc -l <stderr)" -eq 1 ] || { cat stderr; fail "expected one line on stderr"; }
grep -qi cuda stderr || { cat stderr; fail "the message does not mention CUDA"; }
if [ -d out-cuda ] && [ -n "$(find out-cuda -name '*.csv')" ]; then
    fail "a CSV was written although nothing ran"
fi
# With no NVIDIA driver at all (and CUDA built in), it says so, not the
# runtime's "driver version is insufficient".
if [ ! -e /proc/driver/nvidia/version ] &&
    ! "$ACCUBENCH" --help | grep -q '^  cuda .*(not in this build)'; then
    grep -q 'no NVIDIA driver or GPU was found' stderr && ! grep -qi 'insufficient' stderr ||
        { cat stderr; fail "--backend cuda does not say that no NVIDIA driver or GPU was found"; }
fi
echo "ok: --backend cuda: $(cat stderr)"

timeout 120 "$ACCUBENCH" run --backend auto --profile quick --model tiny --effective 8 \
    --micro 8 --budget-s 0.05 --out out-auto >stdout 2>stderr
rc=$?
[ "$rc" -eq 0 ] || { cat stderr; fail "--backend auto exited $rc on a machine without a GPU"; }
csv=$(find out-auto -name '*.csv' | head -n 1)
[ -n "$csv" ] || fail "--backend auto wrote no CSV"
grep -q '^cpu,' "$csv" || { cat "$csv"; fail "--backend auto did not run on the CPU"; }
echo "ok: --backend auto fell back to the CPU"
# Where no GPU is present at all (and CUDA is built in), auto says so once
# and plainly, not with the driver's error.
if [ ! -e /proc/driver/nvidia/version ] &&
    ! "$ACCUBENCH" --help | grep -q '^  cuda .*(not in this build)'; then
    [ "$(cat stdout stderr | grep -ci 'gpu')" -eq 1 ] &&
        grep -qx 'backend auto: running on the CPU backend because no GPU is present' stdout ||
        { cat stdout stderr; fail "auto did not say once, plainly, that no GPU is present"; }
    if cat stdout stderr "$csv" | grep -qi 'driver\|cudaGet'; then
        cat stdout stderr; fail "auto's message shows the driver's error"
    fi
    echo "ok: auto: $(grep -i gpu stdout)"
fi

# make check-gpu: one line saying there is no GPU and how to rehearse the
# check on the CPU, exit 2, before anything is built or written. (A GPU's
# device node with no nvidia-smi counts as a GPU there: not checked then.)
if ! ls -d /dev/nvidia[0-9]* >/dev/null 2>&1; then
    CHECK_OUT=cg CHECK_QUICK=1 timeout 60 sh "$ACCUBENCH_ROOT/scripts/check_gpu.sh" >stdout 2>stderr
    rc=$?
    [ "$rc" -eq 2 ] && [ "$(cat stdout stderr | wc -l)" -eq 1 ] &&
        grep -q '^check-gpu: no GPU here.*CHECK_GPU_REHEARSE=1' stderr && [ ! -e cg ] ||
        { cat stdout stderr; fail "check-gpu without a GPU: exit $rc, want 2 and one line"; }
    echo "ok: check-gpu: $(cat stderr)"
fi

check=$(dirname "$ACCUBENCH")/gpu-check
if [ -x "$check" ]; then
    timeout 60 "$check" >stdout 2>stderr
    rc=$?
    [ "$rc" -eq 2 ] || { cat stdout stderr; fail "gpu-check exited $rc, expected 2"; }
    grep -q "no usable CUDA device" stderr || { cat stderr; fail "gpu-check did not say why"; }
    echo "ok: gpu-check: $(cat stderr)"
fi
