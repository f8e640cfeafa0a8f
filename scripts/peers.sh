#!/bin/sh
# make peers: accubench and its PyTorch peer (bench/peers/torch_accum.py) on
# the abc profile, on the best device here, into one CSV; then the report
# (the ratio per split, "Against torch") and the charts beside it.
#
#   sh scripts/peers.sh ACCUBENCH_BIN [OUT_DIR]      (PYTHON=python3 by default)
#
# Exit: 0 done, 1 PyTorch missing or a step failed.
set -u
bin=$1
out=${2:-results}
py=${PYTHON:-python3}
root=$(cd "$(dirname "$0")/.." && pwd)
if ! "$py" -c "import torch" >/dev/null 2>&1; then
    echo "make peers: PyTorch is not installed for $py: pip install torch"
    exit 1
fi
mkdir -p "$out" || exit 1
csv="$out/peers-abc-$(date +%Y%m%d-%H%M%S).csv"
"$bin" run --profile abc --backend auto --csv "$csv" --quiet || exit 1
# The peer runs where accubench ran, in the run's dtype.
backend=$(awk -f "$root/plots/split.awk" -f "$root/plots/levers.awk" -f "$root/plots/pick.awk" -v want=meta -v key=backend "$csv")
dtype=$(awk -f "$root/plots/split.awk" -f "$root/plots/levers.awk" -f "$root/plots/pick.awk" -v want=meta -v key=dtype "$csv")
case $backend in
    cuda) device=cuda ;;
    *) device=cpu ;;
esac
"$py" "$root/bench/peers/torch_accum.py" --profile abc --device "$device" --dtype "$dtype" \
    --csv "$csv" || exit 1
"$bin" report "$csv" || exit 1
md=${csv%.csv}.md
# The side-by-side table, here as well as in the report.
sed -n '/^## Against/,/^| peer /p' "$md" | sed '$d'
echo "peers: $csv, ${csv%.csv}.peers.png, $md"
