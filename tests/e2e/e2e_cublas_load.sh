#!/bin/sh
# cuBLAS opened by the CUDA backend when it starts, not linked: the program
# and gpu-check name no cuBLAS among their libraries, and the loader alone
# (tests/kernels/cublas_load_probe.c) finds the libraries and forwards to
# them (a version query needs no GPU). Skipped where nvcc is not.
set -u
probe="$ACCUBENCH_TEST_HELPERS/cublas_load_probe"
if [ ! -x "$probe" ]; then
    echo "cublas_load_probe not built (no nvcc): skipped"
    exit 0
fi
fail=0
build=$(dirname "$ACCUBENCH")
for bin in "$ACCUBENCH" "$build/gpu-check"; do
    [ -x "$bin" ] || continue
    if ldd "$bin" | grep -q cublas; then
        echo "FAILED: $bin links cuBLAS: $(ldd "$bin" | grep cublas | tr '\n' ' ')"; fail=1
    fi
done
out=$("$probe"); rc=$?
echo "$out"
case "$out" in
    "cublas: loaded cuBLASLt "*) [ "$rc" -eq 0 ] || { echo "FAILED: exit $rc"; fail=1; } ;;
    *) echo "FAILED: unexpected probe output"; fail=1 ;;
esac
exit $fail
