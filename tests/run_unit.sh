#!/bin/sh
# Runs each unit-test program given (only those whose name holds $T when T
# is set), TEST_JOBS at a time (default: the cores); one line per test, in
# the order given, and a total.
# Usage: run_unit.sh HELPER_DIR TEST_BIN...
helper_dir=$1; shift
export ACCUBENCH_TEST_HELPERS="$helper_dir"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/run_tests.sh"
run_tests unit "$@"
