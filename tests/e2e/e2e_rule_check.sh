#!/bin/sh
# rule-check: the comparison rule on simulated rounds, checked against
# its claims (the interval holds the true ratio at the stop, a ratio
# within the threshold is not called apart more often than the interval
# misses). A fixed seed: the same draws every time, so the test cannot
# flake; a rule that breaks a claim by more than three standard errors of
# these runs fails it (a widening of 1.0 fails 23 cells here). Bad input is
# refused with one line and exit 2.
set -u
check=$(dirname "${ACCUBENCH:?}")/rule-check
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$check" ] || fail "$check not built"

"$check" --check --runs 300 --seed 1 >out.txt 2>err.txt || fail "exit $?: $(grep FAILED out.txt) $(cat err.txt)"
tail -n 1 out.txt | grep -q "^every claim of the rule held$" || fail "last line: $(tail -n 1 out.txt)"
# every case and ratio has its row: 13 noises x 6 ratios
[ "$(grep -cE '^[^ ].* (1\.00|1\.01|1\.02|1\.03|1\.05|1\.10) ' out.txt)" -ge 78 ] ||
    fail "rows missing: $(wc -l <out.txt)"
"$check" --docs --runs 100 >docs.txt || fail "--docs: exit $?"
[ "$(grep -c '%' docs.txt)" -eq 6 ] || fail "--docs: want the 6 rows of the looks table: $(cat docs.txt)"

for bad in "--runs 0" "--runs" "--seed -1" "--runs x" "--bogus"; do
    # shellcheck disable=SC2086
    "$check" $bad >/dev/null 2>err.txt; rc=$?
    [ "$rc" -eq 2 ] || fail "'$bad': exit $rc, want 2"
    [ "$(head -1 err.txt | grep -c '^rule-check: ')" -eq 1 ] || fail "'$bad': $(cat err.txt)"
done
# make rule-check RULE_RUNS=...: the knob's text is data, never make code
# (a $(shell ...) in it ran even under make -n), and given, it is passed.
root=${ACCUBENCH_ROOT:?}
make -s -n -C "$root" rule-check RULE_RUNS="\$(shell touch $PWD/PWNED)" >make.out 2>&1
[ ! -e PWNED ] || fail "make rule-check RULE_RUNS='\$(shell touch ...)' ran the command"
grep -qF -- "--runs '\$(shell touch $PWD/PWNED)'" make.out ||
    fail "RULE_RUNS='\$(shell ...)' was not passed as its text: $(cat make.out)"
echo "ok: the rule held its claims on simulated rounds; bad input refused"
