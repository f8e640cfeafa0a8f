#!/bin/sh
# Runs every tests/e2e_*.sh against the built program.
# Usage: run_e2e.sh ACCUBENCH_BIN HELPER_DIR
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
helper_dir=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
passed=0; failed=0
for t in "$here"/e2e_*.sh; do
    [ -f "$t" ] || continue
    work=$(mktemp -d)
    if out=$(cd "$work" && ACCUBENCH="$bin" ACCUBENCH_TEST_HELPERS="$helper_dir" \
             ACCUBENCH_ROOT="$here/.." sh "$t" 2>&1); then
        passed=$((passed + 1)); echo "PASS $(basename "$t")"
    else
        failed=$((failed + 1)); echo "FAIL $(basename "$t")"
        echo "$out" | sed 's/^/    /' | tail -n 40
    fi
    rm -rf "$work"
done
echo "e2e: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
