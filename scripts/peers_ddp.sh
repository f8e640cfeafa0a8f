#!/bin/sh
# make peers-ddp: accubench on N ranks under mpirun and its PyTorch peer on
# N ranks under torchrun (DistributedDataParallel, with and without no_sync)
# on one profile, on the CPU, into one CSV; then the report (each devices
# and sync against accubench's, the data-parallel sentences of both).
#
#   sh scripts/peers_ddp.sh ACCUBENCH_BIN OUT_DIR PROFILE RANKS
#
# (PYTHON=python3 and MPIRUN=mpirun by default.) Exit: 0 done, 1 PyTorch
# or mpirun missing or a step failed.
set -u
bin=$1
out=${2:-results}
profile=${3:-dp}
ranks=${4:-2}
py=${PYTHON:-python3}
mpirun=${MPIRUN:-mpirun}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/knobs.sh"
knob_count DP_RANKS "$ranks"
# The profile's name in the CSV's: a file's last part, in plain characters.
stem=$(basename -- "$profile" .profile | tr -c 'A-Za-z0-9._+-' '_')
if ! "$py" -c "import torch" >/dev/null 2>&1; then
    echo "make peers-ddp: PyTorch is not installed for $py: pip install torch"
    exit 1
fi
if ! command -v "$mpirun" >/dev/null 2>&1; then
    echo "make peers-ddp: $mpirun not found: install openmpi-bin libopenmpi-dev"
    exit 1
fi
# Open MPI refuses root unless told; a container's root is told here.
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
mkdir -p "$out" || exit 1
csv="$out/peers-ddp-$stem-$(date +%Y%m%d-%H%M%S).csv"
"$mpirun" -np "$ranks" "$bin" run --profile "$profile" --backend cpu --devices "$ranks" \
    --sync all --trace-steps 0 --csv "$csv" --quiet || exit 1
# The peer runs each sync DDP has (micro, overlap) in its CPU modes.
"$py" -m torch.distributed.run --nproc_per_node "$ranks" --standalone \
    "$root/bench/peers/torch_accum.py" --profile "$profile" --device cpu \
    --mode eager,eager-fused --csv "$csv" || exit 1
"$bin" report "$csv" || exit 1
md=${csv%.csv}.md
sed -n '/^## Against/,/^| peer /p' "$md" | sed '$d'
grep '^- At K=' "$md"
echo "peers-ddp: $csv, $md"
