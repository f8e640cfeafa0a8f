#!/bin/sh
# tests/run_e2e.sh and run_tests.sh, the runner of make's test passes, on a
# copy of the tree's runner in a folder whose path holds a quote, a double
# quote and a blank: each test runs and is counted (xargs, reading its
# input as its own quoting, ran none there: "unmatched single quote"), and
# T= picks by name.
set -u
fail() { echo "FAIL: $*"; exit 1; }
root=${ACCUBENCH_ROOT:?}
tree="$PWD/it's a \"tree\""
mkdir -p "$tree/tests/e2e" "$tree/bin"
cp "$root/tests/run_e2e.sh" "$root/tests/run_tests.sh" "$root/tests/run_one.sh" "$tree/tests/"
printf '#!/bin/sh\necho one\n' >"$tree/tests/e2e/e2e_one.sh"
printf '#!/bin/sh\necho two; exit 1\n' >"$tree/tests/e2e/e2e_two.sh"
: >"$tree/bin/accubench"
: >"$tree/tests/e2e/times.txt"
# the pass that runs this test sets these for its own tests
unset T TEST_TIMES TEST_TIMES_SEED
TEST_JOBS=2 sh "$tree/tests/run_e2e.sh" "$tree/bin/accubench" "$tree/bin" >out.txt 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q '^PASS e2e_one.sh' out.txt && grep -q '^FAIL e2e_two.sh' out.txt &&
    grep -q '^e2e: 1 passed, 1 failed$' out.txt || fail "a quoted tree path: exit $rc: $(cat out.txt)"
T=one TEST_JOBS=2 sh "$tree/tests/run_e2e.sh" "$tree/bin/accubench" "$tree/bin" >out.txt 2>&1 ||
    fail "T=one: exit $?: $(cat out.txt)"
grep -q '^e2e: 1 passed, 0 failed$' out.txt || fail "T=one: $(cat out.txt)"
echo "ok: the runner runs and counts each test from a quoted path"
