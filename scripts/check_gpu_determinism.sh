#!/bin/sh
# Run twice, compare bit for bit: the same config's window gradient
# (accubench run --dump) from two processes, tensor by tensor, and the
# window's loss sum (the manifest's, printed to a float's every bit), on
# each attention arrangement (the default and OTHER, an
# ACCUBENCH_*_ATTENTION=... setting: the fused kernels have no atomics
# either). No op may differ: every reduction, the token embedding's
# gradient and the cross-entropy's loss sum too, adds in a fixed order on
# every backend. A tensor that differs fails the check, by name.
# Usage: scripts/check_gpu_determinism.sh OUT_DIR ACCUBENCH BACKEND MODEL DTYPE OTHER
set -u
export ACCUBENCH_NO_INSTALL=1
[ $# -eq 6 ] || { echo "usage: $0 OUT_DIR ACCUBENCH BACKEND MODEL DTYPE OTHER" >&2; exit 2; }
out=$1 bin=$2 backend=$3 model=$4 dtype=$5 other=$6
say() { echo "check_gpu_determinism: $*"; }
differ=""
for arm in default other; do
    if [ "$arm" = default ]; then setting=""; else setting=$other; fi
    for i in 1 2; do
        rm -rf "$out/det-$arm-$i"
        # shellcheck disable=SC2086 # an empty setting is no argument
        env $setting "$bin" run --backend "$backend" --model "$model" --dtype "$dtype" \
            --effective 16 --micro 4 --warmup 0 --steps 1 --trace-steps 0 --noise-windows 0 \
            --quiet --csv "$out/det-$arm-$i.csv" --replace \
            --dump "$out/det-$arm-$i" >"$out/det-$arm-$i.log" 2>&1 ||
            { say "the $arm arrangement's run $i failed:"; tail -n 5 "$out/det-$arm-$i.log"; exit 1; }
    done
    attention=$(sed -n 's/^# attention: //p' "$out/det-$arm-1.csv" | head -n 1 | cut -d' ' -f1)
    same=0 here=""
    for f in "$out/det-$arm-1"/grad.*.npy; do
        name=$(basename "$f" .npy | sed 's/^grad\.//')
        if cmp -s "$f" "$out/det-$arm-2/$(basename "$f")"; then
            same=$((same + 1))
            continue
        fi
        here="$here $name"
    done
    [ "$same" -gt 0 ] || [ -n "$here" ] || { say "no gradient tensors in $out/det-$arm-1"; exit 1; }
    loss1=$(grep -o '"loss_sum": [^,]*' "$out/det-$arm-1/manifest.json" 2>/dev/null)
    loss2=$(grep -o '"loss_sum": [^,]*' "$out/det-$arm-2/manifest.json" 2>/dev/null)
    [ -n "$loss1" ] || { say "no loss_sum in $out/det-$arm-1/manifest.json"; exit 1; }
    [ "$loss1" = "$loss2" ] || here="$here loss_sum(${loss1#*: } ${loss2#*: })"
    say "${attention:-$arm} attention: $same tensors identical; differ:${here:- none}"
    [ -z "$here" ] || differ="$differ ${attention:-$arm}:$(echo $here | tr ' ' ',')"
done
if [ -n "$differ" ]; then
    say "FAIL: not deterministic:$differ"
    exit 1
fi
say "PASS: every tensor and the loss sum identical, on both attention arrangements"
