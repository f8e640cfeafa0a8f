#!/bin/sh
# The PyTorch peer takes its input like the C side (tests/peers/
# test_peer_input.py): a FIFO, folder or device as --profile or in a
# --verify dump refused at once, a manifest's fields checked, nothing
# outside the dump opened. Skipped with a message where PyTorch does not
# import.
set -u
root=${ACCUBENCH_ROOT:?}
py=${PYTHON:-python3}
export PYTHONDONTWRITEBYTECODE=1
if ! "$py" -c "import torch" >/dev/null 2>&1; then
    echo "SKIP e2e_peer_input: PyTorch is not installed for $py (pip install torch)"
    exit 0
fi
"$py" "$root/tests/peers/test_peer_input.py" >unit.out 2>&1
if ! tail -n 1 unit.out | grep -q '^OK'; then
    echo "FAILED: tests/peers/test_peer_input.py:"
    tail -n 40 unit.out
    exit 1
fi
