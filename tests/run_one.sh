#!/bin/sh
# One test of run_unit.sh or run_e2e.sh, run by xargs -P: writes its output
# to LOGS/NAME.out and its exit status to LOGS/NAME.rc, its wall time in
# seconds to LOGS/NAME.s and its CPU time (user + system, every process it
# started: a fairer figure than wall time on a loaded machine) to
# LOGS/NAME.cpu. A test past TEST_TIMEOUT seconds (default 1200)
# is stopped (exit 124: timeout's) and says so.
# Usage: run_one.sh LOGS unit|e2e TEST
logs=$1; kind=$2; t=$3
name=$(basename "$t")
limit=${TEST_TIMEOUT:-1200}
start=$(date +%s)
if [ "$kind" = unit ]; then
    timeout "$limit" "$t" >"$logs/$name.out" 2>&1
else
    work=$(mktemp -d)
    (cd "$work" && timeout "$limit" sh "$t") >"$logs/$name.out" 2>&1
fi
rc=$?
[ "$rc" -eq 124 ] && echo "stopped after $limit s (TEST_TIMEOUT)" >>"$logs/$name.out"
[ "$kind" = unit ] || rm -rf "$work"
echo $rc >"$logs/$name.rc"
echo $(( $(date +%s) - start )) >"$logs/$name.s"
# times (a builtin, run in this shell, not a pipe's subshell): the shell's,
# then its children's user and system time (0m1.25s 0m0.10s).
times >"$logs/$name.times"
awk 'NR == 2 { gsub(/[ms]/, " "); printf "%.0f\n", $1 * 60 + $2 + $3 * 60 + $4 }' \
    "$logs/$name.times" >"$logs/$name.cpu"
