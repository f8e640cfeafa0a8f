#!/bin/sh
# The CUPTI collector alone (tests/cupti_probe.c, built where nvcc is): where
# CUPTI cannot run it must fail with a reason naming the CUPTI call, not crash
# or exit; where it can, start/stop must work. Skipped where it is not built.
set -eu
probe="$ACCUBENCH_TEST_HELPERS/cupti_probe"
if [ ! -x "$probe" ]; then
    echo "cupti_probe not built (no nvcc/CUPTI): skipped"
    exit 0
fi
out=$("$probe")
echo "$out"
case "$out" in
    "cupti: unavailable (CUPTI unavailable: "*cupti_collector.c:*": cupti"*) ;;
    "cupti: available;"*) ;;
    *) echo "unexpected probe output"; exit 1 ;;
esac
