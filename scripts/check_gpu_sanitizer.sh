#!/bin/sh
# compute-sanitizer over the CUDA backend: memcheck on gpu-check in fp32
# (every op and both models), and memcheck, racecheck and initcheck on two
# small GPT runs (one step, no collector: the sanitizer wants to be CUPTI's
# only subscriber): gpt-tiny in fp32 with two noise windows, so the noise
# pass's reductions are checked too; and a GPT of head dim 64 and three
# 64-query tiles in bf16 on the fused attention, whose tensor-core kernels
# (ldmatrix, cp.async's double buffers) the default arrangement never
# runs. QUICK (5th argument 1): memcheck on the GPT runs only.
# Any report fails the stage (--error-exitcode).
# Usage: scripts/check_gpu_sanitizer.sh OUT_DIR BUILD_DIR BACKEND SANITIZER QUICK
set -u
export ACCUBENCH_NO_INSTALL=1
[ $# -eq 5 ] || { echo "usage: $0 OUT_DIR BUILD_DIR BACKEND SANITIZER QUICK" >&2; exit 2; }
out=$1 build=$2 backend=$3 tool=$4 quick=$5
say() { echo "check_gpu_sanitizer: $*"; }
if [ "$backend" = cpu ]; then check_dev="--device cpu"; else check_dev=""; fi
status=0 ran=""
t0=$(date +%s)
# run NAME TOOL CMD...; each start said, with what ran before it: a stage
# cut short by its limit (a sanitizer 10-50x slower than planned) ends its
# log, and its line in the last table, on the run it stopped and the runs
# that finished.
run() {
    name=$1 which=$2
    shift 2
    say "$name: started at $(($(date +%s) - t0))s; so far:${ran:- nothing}"
    "$tool" --tool "$which" --error-exitcode 9 "$@" >"$out/sanitizer-$name.log" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ]; then
        ran="$ran $name:ok"
    else
        ran="$ran $name:FAIL"
        status=1
        say "$name failed (exit $rc); the log ends:"
        tail -n 10 "$out/sanitizer-$name.log" | sed 's/^/    /'
    fi
}
gpt="$build/accubench run --backend $backend --model gpt-tiny --dtype fp32 --effective 4 --micro 2 --warmup 0 --steps 1 --trace-steps 0 --noise-windows 2 --no-cupti --quiet"
fused="$build/accubench run --backend $backend --model gpt:d=256,layers=2,heads=4,seq=192,vocab=1024 --dtype bf16 --effective 2 --micro 1 --warmup 0 --steps 1 --trace-steps 0 --noise-windows 0 --no-cupti --quiet"
# Each run its own CSV, replaced: a run refuses to write over an existing
# one, which a tool's second run (or a rerun of the stage) would meet.
# shellcheck disable=SC2086 # the command lines are meant to split
run gpt-memcheck memcheck $gpt --csv "$out/sanitizer-gpt-memcheck.csv" --replace
# the fused runs' setting exported around them alone (a function's
# assignment prefix is not portable); the CPU's default is fused already
ACCUBENCH_CUDA_ATTENTION=fused
export ACCUBENCH_CUDA_ATTENTION
run fused-memcheck memcheck $fused --csv "$out/sanitizer-fused-memcheck.csv" --replace
if [ "$quick" != 1 ]; then
    run fused-racecheck racecheck $fused --csv "$out/sanitizer-fused-racecheck.csv" --replace
    run fused-initcheck initcheck $fused --csv "$out/sanitizer-fused-initcheck.csv" --replace
fi
unset ACCUBENCH_CUDA_ATTENTION
if [ "$quick" != 1 ]; then
    run gpt-racecheck racecheck $gpt --csv "$out/sanitizer-gpt-racecheck.csv" --replace
    run gpt-initcheck initcheck $gpt --csv "$out/sanitizer-gpt-initcheck.csv" --replace
    # No timer check: under the sanitizer the host pays for every launch,
    # and its clock runs past the device's.
    run check-memcheck memcheck "$build/gpu-check" $check_dev --dtype fp32 --no-timer-check
fi
if [ "$status" = 0 ]; then say "PASS:$ran"; else say "FAIL:$ran"; fi
exit $status
