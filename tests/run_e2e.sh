#!/bin/sh
# Runs every tests/e2e/e2e_*.sh (only those whose name holds $T when T is
# set) against the built program, each in a fresh folder, TEST_JOBS at a
# time (default: the cores), the slowest first (run_tests.sh); one line per
# script, in name order, and a total.
#
# With "program", only the scripts that run the program ($ACCUBENCH): the
# sanitized pass (make asan-e2e) runs those again under ASan + UBSan, and a
# script that never starts the program (the tree's include rules, the CUDA
# objects' dependencies, plots.sh alone, the CUPTI probe) would only repeat
# what the plain pass showed.
# Usage: run_e2e.sh ACCUBENCH_BIN HELPER_DIR [program]
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
helper_dir=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
export ACCUBENCH="$bin" ACCUBENCH_TEST_HELPERS="$helper_dir" ACCUBENCH_ROOT="$here/.."
export TEST_TIMES_SEED="${TEST_TIMES_SEED:-$here/e2e/times.txt}"
. "$here/run_tests.sh"
if [ "${3:-}" = program ]; then
    # One path a line: split on newlines only.
    IFS='
'
    set -- $(grep -El '\$\{?ACCUBENCH([^_A-Za-z0-9]|$)' "$here"/e2e/e2e_*.sh)
    unset IFS
else
    set -- "$here"/e2e/e2e_*.sh
fi
run_tests e2e "$@"
