#!/bin/sh
# One test of run_unit.sh or run_e2e.sh, run by xargs -P: writes its output
# to LOGS/NAME.out and its exit status to LOGS/NAME.rc, and its wall time
# in seconds to LOGS/NAME.s.
# Usage: run_one.sh LOGS unit|e2e TEST
logs=$1; kind=$2; t=$3
name=$(basename "$t")
start=$(date +%s)
if [ "$kind" = unit ]; then
    "$t" >"$logs/$name.out" 2>&1
else
    work=$(mktemp -d)
    (cd "$work" && sh "$t") >"$logs/$name.out" 2>&1
    rc=$?
    rm -rf "$work"
    (exit $rc)
fi
echo $? >"$logs/$name.rc"
echo $(( $(date +%s) - start )) >"$logs/$name.s"
