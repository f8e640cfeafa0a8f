#!/bin/sh
# report and compare at scale: generates results CSVs of 10^4, 10^5 and
# 10^6 rows (scripts/gen_results_csv.awk: valid rows, every one a distinct
# config) and prints the wall time and peak resident memory of
# `accubench report` (without charts) and `accubench compare` on each.
#
# Usage: bench_report_scale.sh [ACCUBENCH] [ROWS ...]
#   ACCUBENCH  the program (default build/accubench); ROWS default 10000
#   100000 1000000. Files go to a temporary folder, removed at the end.
# The "baseline" column is the peak memory of `accubench --version`: what
# the program's shared libraries take before it reads anything.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-build/accubench}
[ $# -gt 0 ] && shift
sizes=${*:-10000 100000 1000000}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
[ -x "$bin" ] || { echo "bench_report_scale: no program at $bin (make first)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench_report_scale: needs /usr/bin/time (GNU time)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

# "SECONDS KB" of one command; its output is thrown away, its exit status
# (0 or compare's 1) kept in $work/rc.
measure() {
    /usr/bin/time -f '%e %M' -o "$work/time" "$@" > /dev/null 2> "$work/err" && rc=0 || rc=$?
    echo "$rc" > "$work/rc"
    if [ "$rc" -gt 1 ]; then
        echo "bench_report_scale: $* failed (exit $rc):" >&2
        cat "$work/err" >&2
        exit 1
    fi
    tail -n 1 "$work/time"
}

base_kb=$(measure "$bin" --version | cut -d' ' -f2)
printf '%9s %9s %10s %11s %10s %11s   (baseline %d MiB)\n' rows "file MiB" "report s" \
    "report MiB" "compare s" "compare MiB" $((base_kb / 1024))
for n in $sizes; do
    awk -v rows="$n" -f "$here/gen_results_csv.awk" > "$work/base.csv"
    awk -v rows="$n" -v seed=2 -v slow=1.02 -f "$here/gen_results_csv.awk" > "$work/new.csv"
    mib=$(($(wc -c < "$work/base.csv") / 1048576))
    set -- $(measure "$bin" report --no-charts "$work/base.csv")
    rs=$1 rk=$2
    set -- $(measure "$bin" compare "$work/base.csv" "$work/new.csv")
    cs=$1 ck=$2
    printf '%9d %9d %10s %11d %10s %11d\n' "$n" "$mib" "$rs" $((rk / 1024)) "$cs" $((ck / 1024))
    rm -f "$work"/*.csv "$work"/*.md "$work"/*.html
done
