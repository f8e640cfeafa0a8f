#!/bin/sh
# What the CUPTI collector costs while it is subscribed: the timed passes
# run with it subscribed (it records only in the trace pass), so the same
# config (model S, E = 64 as 16x4, async, no trace pass) runs with the
# collector and with --no-cupti, and the step medians are compared. A
# figure to report, not a threshold: the check fails only when a run does.
# Usage: scripts/check_gpu_cupti_cost.sh OUT_DIR ACCUBENCH
# shellcheck disable=SC2154 # check_awk: check_gpu_awk.sh's
set -u
export ACCUBENCH_NO_INSTALL=1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/check_gpu_awk.sh"
[ $# -eq 2 ] || { echo "usage: $0 OUT_DIR ACCUBENCH" >&2; exit 2; }
out=$1 bin=$2
say() { echo "check_gpu_cupti_cost: $*"; }
cfg="--backend cuda --model S --effective 64 --micro 16 --mode async --trace-steps 0 --budget-s 1 --noise-windows 0 --quiet"
# shellcheck disable=SC2086 # cfg is a list of options
"$bin" run $cfg --csv "$out/cupti-on.csv" --replace >"$out/cupti-on.log" 2>&1 &&
    "$bin" run $cfg --no-cupti --csv "$out/cupti-off.csv" --replace >"$out/cupti-off.log" 2>&1 ||
    { say "a run failed; see $out/cupti-on.log, $out/cupti-off.log"; exit 1; }
# The step median of FILE's first row, where it is a number above 0:
# nothing for a CSV without the column (awk would read the whole line as
# its value) or with an empty cell, so that no figure stands for a run
# that measured none, and no ratio divides by 0.
median() {
    LC_ALL=C awk "$check_awk"'BEGIN {
        v = first_row(ARGV[1], 1) ? value(1, "step_ms_median") : ""
        if (isnum(v) && v + 0 > 0) print v
        exit
    }' "$1"
}
on=$(median "$out/cupti-on.csv") off=$(median "$out/cupti-off.csv")
[ -n "$on" ] && [ -n "$off" ] || { say "no step_ms_median above 0 in the CSVs (on: ${on:--}, off: ${off:--})"; exit 1; }
say "PASS: $(awk -v a="$on" -v b="$off" 'BEGIN { printf "CUPTI subscribed: %.3f ms a step, without: %.3f ms (%+.1f%%)", a, b, 100 * (a - b) / b }')"
