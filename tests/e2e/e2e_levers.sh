#!/bin/sh
# The charts name a row's levers from the CSV's `# levers:` line, which the
# run writes from its table (harness/results/levers.c): each lever's
# column, default, chart words and whether a key names it at its default,
# in the table's order. The charts' labels follow the line, not a list of
# their own: a line with other defaults and words relabels the points, the
# goodput series and the curves' panels; a CSV without the line (from
# before it) charts exactly as one with today's line does. The labels name
# the levers the rows' cells set apart, as the run's own labels do
# (tests/run/test_lever_labels.c).
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
plots="$ACCUBENCH_ROOT/plots"
pick() { awk -f "$plots/split.awk" -f "$plots/levers.awk" -f "$plots/pick.awk" "$@"; }
# points CSV [LINE]: the frontier chart's points at effective batch 16
points() {
    pick -v want=rows -v where="status=ok;effective_batch=16" "$1" |
        awk -f "$plots/split.awk" -f "$plots/levers.awk" -f "$plots/frontier.awk" \
            -v levers="${2-$(pick -v want=meta -v key=levers "$1")}" -v want=points
}
# series TABLE [LINE]: each goodput series' words, one a line
series() {
    for s in 1 2 3 4; do
        pick -v want=series -v levers="${2-}" -v where="series=$s" "$1"
    done
}

"$ACCUBENCH" run --backend cpu --model tiny --effective 8,16 --micro 4 --recompute none,gelu \
    --grad-dtype all --optimizer sgd --lr 0.5 --steps 2 --warmup 0 --trace-steps 0 \
    --budget-s 0.05 --noise-windows 0 --train-steps 8 --quiet --csv lv.csv >run.txt 2>err.txt
check '[ $? -eq 0 ]' "run exits 0: $(cat err.txt)"

# The line: every lever, its default one of its table's rows, its column a
# key column of the CSV.
line=$(pick -v want=meta -v key=levers lv.csv)
check '[ "$line" = "recompute=none \"recompute\" keyed; shard=none \"shard\" keyed; grad_dtype=fp32 \"gradient in\"" ]' \
    "the line says each lever: $line"
keys=" $(pick -v want=meta -v key=config_key lv.csv) "
echo "$line" | tr ';' '\n' | while read -r item; do
    col=${item%%=*}; rest=${item#*=}; off=${rest%% *}
    case $keys in *" $col "*) ;; *) echo "FAILED: lever $col is not a key column: $keys" ;; esac
    "$ACCUBENCH" --list-values "$(echo "$col" | tr _ -)" | grep -qx "$off" ||
        echo "FAILED: lever $col's default $off is not a row of its table"
done >bad.txt
check '[ ! -s bad.txt ]' "$(cat bad.txt)"

# The points: a lever named where the row's cell sets it apart, and only then.
points lv.csv >pts.txt
check '[ "$(grep -c ",4x4 recompute gelu gradient in bf16,[01]$" pts.txt)" -eq 1 ] &&
       [ "$(grep -c ",4x4 recompute gelu,[01]$" pts.txt)" -eq 1 ] &&
       [ "$(grep -c ",4x4 gradient in bf16,[01]$" pts.txt)" -eq 1 ] &&
       [ "$(grep -c ",4x4,[01]$" pts.txt)" -eq 1 ] && ! grep -q "none\|fp32" pts.txt' \
    "the points name the levers that set them apart: $(cat pts.txt)"

# Another line relabels them: its defaults left unsaid, its words used.
other='recompute=gelu "rc" keyed; shard=none "zero" keyed; grad_dtype=bf16 "acc"'
points lv.csv "$other" >other.txt
check '[ "$(grep -c ",4x4 rc none acc fp32,[01]$" other.txt)" -eq 1 ] &&
       [ "$(grep -c ",4x4 rc none,[01]$" other.txt)" -eq 1 ] &&
       [ "$(grep -c ",4x4 acc fp32,[01]$" other.txt)" -eq 1 ] &&
       [ "$(grep -c ",4x4,[01]$" other.txt)" -eq 1 ] && ! grep -q "recompute\|gradient" other.txt' \
    "the points follow the line: $(cat other.txt)"

# The goodput series (plan --time-to-target --table), by the same line.
"$ACCUBENCH" plan --time-to-target lv.csv --table >lv.goodput.csv 2>err.txt
check '[ $? -eq 0 ]' "plan --table exits 0: $(cat err.txt)"
series lv.goodput.csv "$line" >series.txt
check '[ "$(LC_ALL=C sort series.txt | tr "\n" "|")" = "async, cpu, fp32|async, cpu, fp32, gradient in bf16|async, cpu, fp32, recompute gelu|async, cpu, fp32, recompute gelu, gradient in bf16|" ]' \
    "the series name their levers: $(tr '\n' '|' <series.txt)"
series lv.goodput.csv "$other" >other_series.txt
check '[ "$(LC_ALL=C sort other_series.txt | tr "\n" "|")" = "async, cpu, fp32|async, cpu, fp32, acc fp32|async, cpu, fp32, rc none|async, cpu, fp32, rc none, acc fp32|" ]' \
    "the series follow the line: $(tr '\n' '|' <other_series.txt)"

# A CSV from before the line charts as today's: every chart's text the same.
mkdir now before
cp lv.csv lv.curves.csv now/
grep -v "^# levers:" lv.csv >before/lv.csv
cp lv.curves.csv before/
check '! grep -q "^# levers:" before/lv.csv' "the old copy has no line"
points before/lv.csv >old_pts.txt
check 'cmp -s pts.txt old_pts.txt' "the old CSV's points: $(diff pts.txt old_pts.txt)"
series lv.goodput.csv "" >old_series.txt
check 'cmp -s series.txt old_series.txt' "the old table's series: $(diff series.txt old_series.txt)"
if command -v gnuplot >/dev/null 2>&1; then
    sh "$ACCUBENCH_ROOT/scripts/plots.sh" now/lv.csv now/c >plots.txt 2>&1
    check '[ $? -eq 0 ]' "plots exit 0: $(cat plots.txt)"
    sh "$ACCUBENCH_ROOT/scripts/plots.sh" before/lv.csv before/c >>plots.txt 2>&1
    check '[ $? -eq 0 ]' "the old CSV's plots exit 0: $(cat plots.txt)"
    for svg in now/c.*.svg; do
        cmp -s "$svg" "before/${svg#now/}" || echo "$svg"
    done >differ.txt
    check '[ -s now/c.curves.svg ] && [ -s now/c.frontier.svg ] && [ -s now/c.time_to_target.svg ] &&
           [ ! -s differ.txt ]' "the old CSV's charts differ: $(cat differ.txt)"
    # the curves' panels: a keyed lever said at its default, another where set
    check '[ "$(grep -c "<text>fp32, async, gradient in bf16, effective batch 16, 1 device(s), recompute gelu, 8 steps" now/c.curves.svg)" -eq 1 ] &&
           [ "$(grep -c "<text>fp32, async, effective batch 16, 1 device(s), recompute none, 8 steps" now/c.curves.svg)" -eq 1 ]' \
        "the curves panels name their levers: $(grep -o "<text>fp32, async[^<]*" now/c.curves.svg)"
    # and follow another line
    sed "s/^# levers: .*/# levers: $other/" lv.csv >relabel.csv
    cp lv.curves.csv relabel.curves.csv
    sh "$ACCUBENCH_ROOT/scripts/plots.sh" relabel.csv relabel >>plots.txt 2>&1
    check '[ "$(grep -c "<text>fp32, async, acc fp32, effective batch 16, 1 device(s), rc none, 8 steps" relabel.curves.svg)" -eq 1 ] &&
           [ "$(grep -c "<text>fp32, async, effective batch 16, 1 device(s), rc gelu, 8 steps" relabel.curves.svg)" -eq 1 ]' \
        "the curves panels follow the line: $(grep -o "<text>fp32, async[^<]*" relabel.curves.svg)"
else
    echo "FAILED: gnuplot not found (the charts are part of this test)"
    fail=1
fi
exit $fail
