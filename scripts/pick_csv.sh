#!/bin/sh
# Prints the CSV to chart or report: the one given, else the newest
# results/*.csv under the repo root (and says so on stderr). With none,
# one error line and exit 2. Used by scripts/plots.sh and `make report`.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
csv=${1:-}
if [ -z "$csv" ]; then
    csv=$(ls -t "$root"/results/*.csv 2>/dev/null | head -n 1)
    if [ -z "$csv" ]; then
        echo "accubench: no CSV given and none in $root/results/ (use CSV=FILE)" >&2
        exit 2
    fi
    echo "using $csv (the newest in results/)" >&2
fi
if [ ! -r "$csv" ]; then
    echo "accubench: cannot read $csv" >&2
    exit 2
fi
echo "$csv"
