#!/bin/sh
# Runs each unit-test program given; prints one line per test and a total.
# Usage: run_unit.sh HELPER_DIR TEST_BIN...
helper_dir=$1; shift
export ACCUBENCH_TEST_HELPERS="$helper_dir"
passed=0; failed=0; failures=""
for t in "$@"; do
    if out=$("$t" 2>&1); then
        passed=$((passed + 1)); echo "PASS $t"
    else
        failed=$((failed + 1)); failures="$failures $t"
        echo "FAIL $t"; echo "$out" | sed 's/^/    /' | tail -n 40
    fi
done
echo "unit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
