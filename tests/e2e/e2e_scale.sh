#!/bin/sh
# report and compare stay linear: 40,000 rows (about 7 MB, 5,700 series)
# take well under a second of CPU each; a quadratic match or grouping takes
# half a minute or more there. The limit is generous for a busy machine.
set -u
root=$ACCUBENCH_ROOT
fail() { echo "e2e_scale: $*" >&2; exit 1; }
limit=20
awk -v rows=40000 -f "$root/scripts/gen_results_csv.awk" > base.csv
awk -v rows=40000 -v seed=2 -v slow=1.02 -f "$root/scripts/gen_results_csv.awk" > new.csv
timeout $limit "$ACCUBENCH" report base.csv --no-charts > out.txt 2> err.txt; rc=$?
[ "$rc" = 124 ] && fail "report of 40,000 rows took over $limit s"
[ "$rc" = 0 ] || { cat err.txt; fail "report of 40,000 rows exited $rc"; }
grep -q '40000 configs' base.md || fail "the report does not count 40,000 configs"
timeout $limit "$ACCUBENCH" compare base.csv new.csv > out.txt 2> err.txt; rc=$?
[ "$rc" = 124 ] && fail "compare of 40,000 rows took over $limit s"
[ "$rc" = 1 ] || { cat err.txt; fail "compare of 40,000 rows exited $rc, want 1 (slower)"; }
grep -q '^compare: 40000 configs in both: ' out.txt || fail "compare: $(tail -n 1 out.txt)"
echo "e2e_scale: ok"
