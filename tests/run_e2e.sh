#!/bin/sh
# Runs every tests/e2e/e2e_*.sh (only those whose name holds $T when T is
# set) against the built program, each in a fresh folder, TEST_JOBS at a
# time (default: the cores); one line per script, in name order, and a total.
# Usage: run_e2e.sh ACCUBENCH_BIN HELPER_DIR
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
helper_dir=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
export ACCUBENCH="$bin" ACCUBENCH_TEST_HELPERS="$helper_dir" ACCUBENCH_ROOT="$here/.."
. "$here/run_tests.sh"
run_tests e2e "$here"/e2e/e2e_*.sh
