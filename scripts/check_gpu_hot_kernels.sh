#!/bin/sh
# check-gpu's hot-kernels stage: one step of one micro-batch of MODEL
# (micro 8) on each attention arrangement, the default and OTHER (an
# ACCUBENCH_*_ATTENTION=... setting), each with one traced step written as
# a trace file, and the device's time in it by kernel
# (scripts/trace_top.sh) into OUT/hot-kernels.txt: where a step's time
# goes, and where the two arrangements part. The traces (hot-default.json,
# hot-other.json) open in Perfetto.
# Usage: scripts/check_gpu_hot_kernels.sh OUT_DIR ACCUBENCH BACKEND MODEL DTYPE OTHER
set -u
export ACCUBENCH_NO_INSTALL=1
[ $# -eq 6 ] || { echo "usage: $0 OUT_DIR ACCUBENCH BACKEND MODEL DTYPE OTHER" >&2; exit 2; }
out=$1 bin=$2 backend=$3 model=$4 dtype=$5 other=$6
here=$(cd "$(dirname "$0")" && pwd)
say() { echo "check_gpu_hot_kernels: $*"; }
# The table prints hot-kernels.txt where it is: an earlier run's must not
# stand for this one, and a failed run leaves no part of one.
rm -f "$out/hot-kernels.txt"
tmp=$out/hot-kernels.txt.tmp
trap 'rm -f "$tmp"' EXIT
: >"$tmp"
for arm in default other; do
    if [ "$arm" = default ]; then setting=""; else setting=$other; fi
    # shellcheck disable=SC2086 # an empty setting is no argument
    env $setting "$bin" run --backend "$backend" --model "$model" --dtype "$dtype" \
        --effective 8 --micro 8 --warmup 1 --steps 1 --trace-steps 1 --noise-windows 0 \
        --trace "$out/hot-$arm.json" --csv "$out/hot-$arm.csv" --replace --quiet \
        >"$out/hot-$arm.log" 2>&1 || { say "the $arm run failed:"; tail -n 5 "$out/hot-$arm.log"; exit 1; }
    attention=$(sed -n 's/^# attention: //p' "$out/hot-$arm.csv" | head -n 1 | cut -d' ' -f1)
    echo "${attention:-$arm} attention:" >>"$tmp"
    sh "$here/trace_top.sh" "$out/hot-$arm.json" 8 >"$out/hot-$arm.top" ||
        { say "no kernels in the $arm run's trace"; exit 1; }
    sed 's/^/  /' "$out/hot-$arm.top" >>"$tmp"
done
mv "$tmp" "$out/hot-kernels.txt"
cat "$out/hot-kernels.txt"
