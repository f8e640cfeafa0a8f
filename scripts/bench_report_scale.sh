#!/bin/sh
# report and compare at scale: generates results CSVs of 10^4, 10^5 and
# 10^6 rows (scripts/gen_results_csv.awk: valid rows, every one a distinct
# config) and prints the wall time, the CPU time (user + system: what a
# busy machine does not inflate) and the peak resident memory of
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
. "$here/knobs.sh"
for n in "$@"; do knob_count SCALE_ROWS "$n"; done
sizes=${*:-10000 100000 1000000}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
[ -x "$bin" ] || { echo "bench_report_scale: no program at $bin (make first)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench_report_scale: needs /usr/bin/time (GNU time)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

# "WALL_S CPU_S KB" of one command; its output is thrown away, its exit
# status (0 or compare's 1) kept in $work/rc.
measure() {
    /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" > /dev/null 2> "$work/err" && rc=0 || rc=$?
    echo "$rc" > "$work/rc"
    if [ "$rc" -gt 1 ]; then
        echo "bench_report_scale: $* failed (exit $rc):" >&2
        cat "$work/err" >&2
        exit 1
    fi
    tail -n 1 "$work/time" | awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }'
}

base_kb=$(measure "$bin" --version | cut -d' ' -f3)
echo "peak memory of accubench --version (the shared libraries alone): $((base_kb / 1024)) MiB"
printf '%9s %9s | %8s %8s %8s | %8s %8s %8s\n' "" "" report report report compare \
    compare compare
printf '%9s %9s | %8s %8s %8s | %8s %8s %8s\n' rows "file MiB" "wall s" "cpu s" "MiB" \
    "wall s" "cpu s" "MiB"
for n in $sizes; do
    awk -v rows="$n" -f "$here/gen_results_csv.awk" > "$work/base.csv"
    awk -v rows="$n" -v seed=2 -v slow=1.02 -f "$here/gen_results_csv.awk" > "$work/new.csv"
    mib=$(($(wc -c < "$work/base.csv") / 1048576))
    set -- $(measure "$bin" report --no-charts "$work/base.csv")
    rw=$1 rc_=$2 rk=$3
    set -- $(measure "$bin" compare "$work/base.csv" "$work/new.csv")
    cw=$1 cc=$2 ck=$3
    printf '%9d %9d | %8s %8s %8d | %8s %8s %8d\n' "$n" "$mib" "$rw" "$rc_" $((rk / 1024)) \
        "$cw" "$cc" $((ck / 1024))
    rm -f "$work"/*.csv "$work"/*.md "$work"/*.html
done
