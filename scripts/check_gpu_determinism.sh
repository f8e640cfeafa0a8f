#!/bin/sh
# Run twice, compare bit for bit: the same config's window gradient
# (accubench run --dump) from two processes, tensor by tensor. No op may
# differ: every reduction, the token embedding's gradient too, adds in a
# fixed order on every backend. A tensor that differs fails the check, by
# name.
# Usage: scripts/check_gpu_determinism.sh OUT_DIR ACCUBENCH BACKEND MODEL DTYPE
set -u
export ACCUBENCH_NO_INSTALL=1
[ $# -eq 5 ] || { echo "usage: $0 OUT_DIR ACCUBENCH BACKEND MODEL DTYPE" >&2; exit 2; }
out=$1 bin=$2 backend=$3 model=$4 dtype=$5
say() { echo "check_gpu_determinism: $*"; }
for i in 1 2; do
    rm -rf "$out/det-$i"
    "$bin" run --backend "$backend" --model "$model" --dtype "$dtype" --effective 16 --micro 4 \
        --warmup 0 --steps 1 --trace-steps 0 --noise-windows 0 --quiet \
        --csv "$out/det-$i.csv" --replace \
        --dump "$out/det-$i" >"$out/det-$i.log" 2>&1 ||
        { say "run $i failed:"; tail -n 5 "$out/det-$i.log"; exit 1; }
done
same=0 differ=""
for f in "$out"/det-1/grad.*.npy; do
    name=$(basename "$f" .npy | sed 's/^grad\.//')
    if cmp -s "$f" "$out/det-2/$(basename "$f")"; then
        same=$((same + 1))
        continue
    fi
    differ="$differ $name"
done
[ "$same" -gt 0 ] || [ -n "$differ" ] || { say "no gradient tensors in $out/det-1"; exit 1; }
say "$same tensors identical; differ:${differ:- none}"
if [ -n "$differ" ]; then
    say "FAIL: not deterministic:$differ"
    exit 1
fi
say "PASS: every tensor identical"
