#!/bin/sh
# make regress (scripts/regress.sh): the base and this tree's program run
# the same profile in ABBA order, each side's runs compared together (the
# run as the unit); bad knobs are one line and exit 2. The base is the
# program under test itself (BASE_BIN): an A/A, whose exit is 0 or 1 by
# chance but whose table and files are checked; building a revision is
# left to make regress itself (minutes).
set -u
root=$ACCUBENCH_ROOT
fail() { echo "e2e_regress: $*" >&2; exit 1; }
regress() { sh "$root/scripts/regress.sh" "$ACCUBENCH" "$@"; }

regress "" 2 quick out "$ACCUBENCH" > out.txt 2> err.txt; rc=$?
[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "an A/A of two runs a side exited $rc: $(cat err.txt)"
order=$(sed -n 's/^make regress: run [0-9]* of 4: \([a-z]*\) .*/\1/p' out.txt | tr '\n' ' ')
[ "$order" = "base new new base " ] || fail "not in ABBA order: '$order'"
for f in base-1 base-2 new-1 new-2; do
    grep -q '^backend,' "out/$f.csv" || fail "out/$f.csv holds no rows"
done
grep -q '^# runs: 2 base, 2 new;' out/compare.md || fail "compare did not take the runs: $(head -n 5 out/compare.md)"
grep -q '^compare: 5 configs in both' out.txt || fail "not the quick profile's five splits: $(tail -n 3 out.txt)"

# bad input: one line, exit 2, and no folder made
for args in "|2|quick|o1|" "HEAD|x|quick|o2|" "HEAD|1|quick|o3|" "|2|nosuch|o4|$ACCUBENCH" \
    "no-such-revision-anywhere|2|quick|o5|" "|2|quick|a,b|$ACCUBENCH" "|2|quick|o6|/nonexistent"; do
    IFS='|' read -r base runs profile dir bin <<ARGS
$args
ARGS
    regress "$base" "$runs" "$profile" "$dir" "$bin" > /dev/null 2> err.txt; rc=$?
    [ "$rc" = 2 ] || fail "regress '$args' exited $rc, want 2: $(cat err.txt)"
    [ "$(wc -l < err.txt)" = 1 ] && grep -q '^make regress: \|^make: ' err.txt ||
        fail "regress '$args': want one line, got: $(cat err.txt)"
    [ ! -e "$dir" ] || fail "regress '$args' was refused but left its folder $dir"
done
echo "e2e_regress: ok"
