#!/bin/sh
# Prints the CSV to chart or report: the one given, else the newest
# results/*.csv with rows under the repo root, loss-curves files aside (and
# says so on stderr). With none,
# one error line and exit 2. Used by scripts/plots.sh and `make report`.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
csv=${1:-}
# has_rows FILE: a line past the header that is not a # comment (a run
# stopped before its first row leaves the header alone)
has_rows() { grep -v '^#' "$1" 2>/dev/null | tail -n +2 | grep -q .; }
if [ -z "$csv" ]; then
    # the newest run's CSV: not a loss-curves file beside one (NAME.curves.csv,
    # rewritten after its rows), not one with no row yet
    csv=$(ls -t "$root"/results/*.csv 2>/dev/null | while IFS= read -r f; do
        case $f in *.curves.csv) continue ;; esac
        has_rows "$f" && { printf '%s\n' "$f"; break; }
    done)
    if [ -z "$csv" ]; then
        echo "accubench: no CSV given and none with rows in $root/results/ (use CSV=FILE)" >&2
        exit 2
    fi
    printf 'using %s (the newest with rows in results/)\n' "$csv" >&2
fi
if [ ! -r "$csv" ]; then
    printf 'accubench: cannot read %s\n' "$csv" >&2
    exit 2
fi
# printf, not echo: sh's echo reads a backslash in the name as an escape
# ('a\tb.csv' came out with a tab) and a name of -n as its option.
printf '%s\n' "$csv"
