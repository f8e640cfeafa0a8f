#!/bin/sh
# scripts/pick_csv.sh, which `make plots` and `make report` ask for the CSV
# when none is given: the newest results/*.csv that holds a row, never the
# loss-curves file rewritten beside a run's CSV after its rows
# (NAME.curves.csv, which report refuses), nor the header a run stopped
# before its first row left. Run on a copy of the script in a tree of its
# own (it finds results/ beside its own folder).
set -u
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p tree/scripts tree/results
cp "${ACCUBENCH_ROOT:?}/scripts/pick_csv.sh" tree/scripts/
pick() { sh tree/scripts/pick_csv.sh 2>err.txt; }

out=$(pick); rc=$?
[ "$rc" -eq 2 ] && [ -z "$out" ] && grep -q "none with rows" err.txt ||
    fail "no CSV: exit $rc, '$out', $(cat err.txt)"

printf '# accubench\nmodel,step_ms\ntiny,1.0\n' >"tree/results/run one.csv"
touch -d '2 minutes ago' "tree/results/run one.csv"
printf 'step,loss\n0,2.3\n' >"tree/results/run one.curves.csv"
printf '# accubench\n# unfinished: interrupted (SIGINT)\nmodel,step_ms\n' >tree/results/stopped.csv
out=$(pick) || fail "exit $?: $(cat err.txt)"
[ "$out" = "$PWD/tree/results/run one.csv" ] || fail "picked '$out', want the run's CSV"
grep -q "the newest with rows" err.txt || fail "not said: $(cat err.txt)"

out=$(sh tree/scripts/pick_csv.sh given.csv 2>err.txt); rc=$?
[ "$rc" -eq 2 ] && grep -q "cannot read given.csv" err.txt || fail "a missing CSV given: exit $rc"
# A name given is printed as it is: a backslash is no escape, -n no option
# (echo made 'a\tb.csv' a name with a tab, and -n nothing at all).
for name in 'back\tslash.csv' '-n' '-e'; do
    cp "tree/results/run one.csv" "./$name"
    out=$(sh tree/scripts/pick_csv.sh "$name" 2>err.txt) || fail "'$name': exit $?: $(cat err.txt)"
    [ "$out" = "$name" ] || fail "'$name' given, '$out' printed"
done
echo "ok: the newest CSV with rows, curves and empty files aside; a name given, as it is"
