#!/bin/sh
# report and compare stay linear: 40,000 rows (about 7 MB, 5,700 series)
# against 10,000. Judged by CPU seconds measured side by side, not by a
# wall-clock limit, so a loaded machine (or ASan's slower code) does not
# fail it: four times the rows take about four times the CPU when the
# matching and grouping are linear, sixteen when quadratic (half a minute
# or more at 40,000). The timeout only stops a hang.
set -u
root=$ACCUBENCH_ROOT
fail() { echo "e2e_scale: $*" >&2; exit 1; }
hang_limit=300
most_ratio=10

# The CPU seconds (user + system) of the shell's children so far: `times`
# run in this shell itself (a subshell's would count none of them).
children_cpu_s() {
    times >times.txt
    awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }' times.txt
}

# timed WHAT WANT_RC CMD...: runs CMD under the hang limit; fails unless it
# exits WANT_RC; its CPU seconds in $cpu.
timed() {
    what=$1 want=$2
    shift 2
    children_cpu_s >before.txt
    timeout $hang_limit "$@" >out.txt 2>err.txt
    rc=$?
    children_cpu_s >after.txt
    [ "$rc" = 124 ] && fail "$what took over $hang_limit s"
    [ "$rc" = "$want" ] || { cat err.txt; fail "$what exited $rc, want $want"; }
    cpu=$(awk 'NR == FNR { b = $1; next } { printf "%.2f", $1 - b }' before.txt after.txt)
}

for rows in 10000 40000; do
    awk -v rows=$rows -f "$root/scripts/gen_results_csv.awk" >base$rows.csv
    awk -v rows=$rows -v seed=2 -v slow=1.02 -f "$root/scripts/gen_results_csv.awk" >new$rows.csv
done

timed "report of 10,000 rows" 0 "$ACCUBENCH" report base10000.csv --no-charts
report_small=$cpu
timed "report of 40,000 rows" 0 "$ACCUBENCH" report base40000.csv --no-charts
report_large=$cpu
grep -q '40000 configs' base40000.md || fail "the report does not count 40,000 configs"

timed "compare of 10,000 rows" 1 "$ACCUBENCH" compare base10000.csv new10000.csv
compare_small=$cpu
timed "compare of 40,000 rows" 1 "$ACCUBENCH" compare base40000.csv new40000.csv
compare_large=$cpu
grep -q '^compare: 40000 configs in both: ' out.txt || fail "compare: $(tail -n 1 out.txt)"

# the ratio of 40,000 rows' CPU to 10,000's (the smaller at least one
# clock tick, 0.01 s, so a run too quick to be timed is no division by 0)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b < 0.01) b = 0.01; printf "%.1f", a / b }'; }
over() { awk -v r="$1" -v m="$most_ratio" 'BEGIN { exit !(r > m) }'; }
r=$(ratio "$report_large" "$report_small")
over "$r" && fail "report: 4x the rows took ${r}x the CPU (${report_small} s, ${report_large} s): not linear"
c=$(ratio "$compare_large" "$compare_small")
over "$c" && fail "compare: 4x the rows took ${c}x the CPU (${compare_small} s, ${compare_large} s): not linear"
echo "e2e_scale: ok (4x the rows: report ${r}x the CPU, ${report_small} to ${report_large} s; compare ${c}x, ${compare_small} to ${compare_large} s)"
