#!/bin/sh
# make check-gpu's own settings given to make, as docs/cuda-backend.md
# writes them beside QUICK=1: CHECK_ONLY and CHECK_SKIP_BUILD reach the
# script (given to make they were unexported, and the whole check ran,
# build first), and a CHECK_BUDGET_S or CHECK_SKIP_BUILD that is not a
# number is one line and exit 2, its text never code. The CPU rehearsal,
# with no stage asked for: seconds.
set -u
fail() { echo "FAIL: $*"; exit 1; }
root=${ACCUBENCH_ROOT:?}
timeout 120 make -s -C "$root" check-gpu CHECK_GPU_REHEARSE=1 CHECK_ONLY=none CHECK_SKIP_BUILD=1 \
    CHECK_OUT="$PWD/cg" >out.txt 2>&1
rc=$?
[ "$rc" -eq 0 ] && [ -e cg/stages.txt ] || fail "exit $rc: $(tail -n 5 out.txt)"
! grep -q '^check-gpu: build (' out.txt && [ ! -s cg/stages.txt ] ||
    fail "CHECK_ONLY=none CHECK_SKIP_BUILD=1 given to make: stages ran: $(cut -f1 cg/stages.txt | tr '\n' ' ')"
for kv in "CHECK_BUDGET_S=\$(touch $PWD/PWNED)|not a whole number" "CHECK_BUDGET_S=a[\$(touch $PWD/PWNED)]|not a whole number" \
    "CHECK_BUDGET_S=0|not a whole number" "CHECK_SKIP_BUILD=yes|not 0 or 1"; do
    make -s -C "$root" check-gpu CHECK_GPU_REHEARSE=1 CHECK_OUT="$PWD/bad" "${kv%%|*}" >out.txt 2>&1
    rc=$?
    [ ! -e PWNED ] || fail "make check-gpu ${kv%%|*} ran the command"
    [ "$rc" -eq 2 ] && grep -q "^make: ${kv%%=*}=.*: ${kv#*|}" out.txt && [ ! -e bad ] ||
        fail "make check-gpu ${kv%%|*}: exit $rc: $(cat out.txt)"
done
echo "ok: check-gpu's settings given to make reach it; bad ones refused in one line"
