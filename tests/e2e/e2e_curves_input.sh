#!/bin/sh
# The curves file beside a run's CSV is input too: a negative, NaN or
# infinite loss, a last row cut short (mid-row or at its end), a curve short of
# its run's steps and a hole in a curve are refused by plan
# --time-to-target and report in one line naming the file, line and field,
# with exit 2, as the results CSV's faults are. A --target-loss at or above
# the curves' starting loss says so and crowns no E as the least time to
# target (every E meets it at step 0: there is no time to compare). A run
# that would --append to damaged curves is refused before it measures.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }

"$ACCUBENCH" run --backend cpu --model tiny --effective 8,16 --micro pow2 --budget-s 0.1 \
    --train-steps 20 --csv cv.csv >run.txt 2>err.txt
check '[ $? -eq 0 ] && [ -s cv.curves.csv ]' "run writes the curves: $(cat err.txt)"

# damaged NAME COPY-COMMAND: cv.csv beside a damaged copy of its curves
damaged() { cp cv.csv "$1.csv" && sh -c "$2" <cv.curves.csv >"$1.curves.csv"; }
# the 5th line is a data row (a comment, the header, then rows); column 13 is loss
damaged neg "awk -F, -v OFS=, 'NR == 5 { \$13 = -3 } 1'"
damaged nan "awk -F, -v OFS=, 'NR == 5 { \$13 = \"nan\" } 1'"
damaged inf "awk -F, -v OFS=, 'NR == 5 { \$13 = \"inf\" } 1'"
# cut: the first nine lines whole, then half of the tenth (inside a number or
# just after a comma, never at a line end: the cut no longer moves with the
# file's length)
damaged cut "awk 'NR < 10 { print } NR == 10 { printf \"%s\", substr(\$0, 1, int(length(\$0) / 2)) }'"
check '[ "$(sed -n 2p cv.curves.csv | cut -d, -f13)" = loss ]' "column 13 is loss"
check '[ "$(tail -c 1 cut.curves.csv | od -An -c | tr -d " ")" != "\\n" ]' "the cut copy ends mid-row"
check '[ "$(wc -l <cut.curves.csv)" -eq 9 ]' "the cut copy holds nine whole lines"
cut_line=10

# refused WHAT FILE EXPECT: each reader exits 2 with one line holding EXPECT
refused() {
    what=$1 name=$2 expect=$3
    for cmd in "plan --time-to-target $name.csv" "report $name.csv --no-charts"; do
        "$ACCUBENCH" $cmd >out.txt 2>err.txt
        rc=$?
        check '[ $rc -eq 2 ]' "$cmd exits 2 on $what (rc $rc): $(cat out.txt err.txt)"
        check '[ "$(wc -l <err.txt)" -eq 1 ] && grep -qF "accubench: $name.curves.csv:$expect" err.txt' \
            "$cmd refuses $what in one line with $expect: $(cat err.txt)"
        check '! grep -q "least time" out.txt' "$cmd prints no plan on $what"
    done
}
refused "a negative loss" neg "5: column loss: '-3' cannot be negative (field 13 of the row)"
refused "a NaN loss" nan "5: column loss: 'nan' is not a number (NaN) (field 13 of the row)"
refused "an infinite loss" inf "5: column loss: 'inf' cannot be infinite (field 13 of the row)"
refused "a row cut short" cut "$cut_line: "
# half a row is short of fields (the last cell, where a cut leaves every
# field and only the line end missing, is checked next)
check 'grep -q "[0-9] fields\{0,1\}, but the header has 20" err.txt' \
    "the cut row's field count: $(cat err.txt)"
# cut at a row's end (a copy stopped between lines): every row whole, the
# run's summary lines gone, and with them the count of steps a curve holds
damaged cutrow "head -n 50"
refused "a file cut at a row's end" cutrow "3: no summary line"
# a curve's last steps gone mid-file: no hole; the refusal names the
# summary line, which says 20
damaged tail "awk -F, '\$6 != 8 || \$7 != 1 || \$11 != \"reverse\" || \$12 < 18'"
refused "a curve's last steps lost" tail "361: the curve of tiny E=8 1x8 (reverse, lr 0.001) holds 18 steps where its run's summary line says steps=20"
# cut inside the last cell, the accumulator's name ("fp32" left "fp"):
# every field there, the line's end missing
damaged cutlast "head -n 5 | head -c -3"
check '[ "$(tail -n 1 cutlast.curves.csv | awk -F, "{ print \$NF }")" = fp ]' "the copy ends in 'fp'"
refused "a row cut in its last cell" cutlast "5: the last row has no line end"

# refused_at NAME WHAT PATTERN: each reader exits 2 with one line matching
# "accubench: NAME.curves.csv: PATTERN"
refused_at() {
    name=$1 what=$2 pattern=$3 # check evaluates its test later, by these names
    for cmd in "plan --time-to-target $name.csv" "report $name.csv --no-charts"; do
        "$ACCUBENCH" $cmd >out.txt 2>err.txt
        rc=$?
        check '[ $rc -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "^accubench: $name.curves.csv: $pattern" err.txt' \
            "$cmd: $what, one line, exit 2 (rc $rc): $(cat err.txt)"
    done
}
# a hole in a curve: an empty (diverged) loss with a number after it, or a
# step's row gone. A diverged curve stays empty from there, so either is a
# file edited or cut: refused in one line naming the curve and the steps,
# rather than read as a curve that diverged, or smoothed across the hole
damaged hole "awk -F, -v OFS=, 'NR == 5 { \$13 = \"\" } 1'"
damaged gap "awk 'NR != 5'"
refused_at hole "a hole in a curve" \
    "the curve of tiny E=8 .* has no loss at step 2 but one at step 3: a diverged curve stays empty from there"
# a step's row gone: refused at the row after it, before the curve's
# arrays grow to that step
refused "a step's row gone" gap "5: the curve of tiny E=8 1x8 (forward, lr 0.001) has no row for step 2 but one for step 3"
# a step written twice (its row copied, with another loss): the later
# row would win unsaid
damaged twice "awk -F, -v OFS=, '{ print } NR == 5 { \$13 = 0.5; print }'"
refused_at twice "a step written twice" "the curve of tiny E=8 .* has 21 rows for its 20 steps: a step written twice"

# --append onto damaged curves: refused before anything is measured, the
# file as it was
cp neg.curves.csv before.txt
"$ACCUBENCH" run --backend cpu --model tiny --effective 8 --micro 8 --budget-s 0.1 \
    --train-steps 20 --csv neg.csv --append >run.txt 2>err.txt
rc=$?
check '[ $rc -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -qF "neg.curves.csv:5: column loss" err.txt' \
    "--append onto a negative loss is refused in one line (rc $rc): $(cat err.txt)"
check 'cmp -s neg.curves.csv before.txt && ! grep -q "peak GEMM" run.txt' \
    "the damaged curves are left as they were, nothing measured"

# a config appended again with its curve (run --append --train-steps): the
# file holds both runs' curves, and the readers read the first run's (as
# compare reads a config's first row), where they refused a step written
# twice
"$ACCUBENCH" run --backend cpu --model tiny --effective 8 --micro 8 --budget-s 0.05 \
    --train-steps 5 --csv again.csv >/dev/null 2>err.txt
"$ACCUBENCH" run --backend cpu --model tiny --effective 8 --micro 8 --budget-s 0.05 \
    --train-steps 7 --csv again.csv --append >/dev/null 2>>err.txt
check '[ "$(grep -c "^# curves .* steps=" again.curves.csv)" -eq 2 ]' \
    "both runs' curves are in the file: $(cat err.txt)"
"$ACCUBENCH" plan --time-to-target again.csv >again.txt 2>err.txt
check '[ ! -s err.txt ] && grep -q "E=8 lr [0-9.]*: " again.txt' \
    "plan reads a config appended again: $(cat again.txt err.txt)"
said="again.curves.csv holds 1 curve a later run wrote again (a config run again with --append): the first run's is read, as compare reads a config's first row"
rows_said="again.csv holds 1 row of configs named earlier in it (a config run again with --append): each config's first row is read"
check '[ "$(head -n 1 again.txt)" = "$rows_said" ] && sed -n 2p again.txt | grep -qxF "$said"' \
    "plan says which row and which curve it read: $(head -n 2 again.txt)"
"$ACCUBENCH" plan --recommend --goal time --from again.csv >again.rank.txt 2>err.txt
check '[ "$(head -n 1 again.rank.txt)" = "$rows_said" ] && sed -n 2p again.rank.txt | grep -qxF "$said"' \
    "the ranking by time to target says it too: $(head -n 2 again.rank.txt) $(cat err.txt)"
"$ACCUBENCH" plan --time-to-target again.csv --curve-table >again.table.csv 2>err.txt
check '[ "$(awk -F, "NR > 1" again.table.csv | wc -l)" -eq 5 ]' \
    "the first run's 5 steps are the curve read: $(cat again.table.csv err.txt)"
"$ACCUBENCH" report again.csv --no-charts >/dev/null 2>err.txt
check '[ $? -eq 0 ] && grep -qF "$said, by the charts" again.md' \
    "report reads a config appended again, and says which curve: $(cat err.txt)"
check 'grep -q "^- run 1: cpu tiny .* steps=5: " again.md && grep -q "^- run 2: cpu tiny .* steps=7: " again.md' \
    "each run's summary bullet names its run: $(grep "steps=" again.md)"
# its row too: the findings, the frontier and the ranking read a config's
# first row (a rerun's faster median would be a best of two), and say so
check 'grep -qF -- "- $rows_said (by the findings, the verdict, the fastest under a cap, the frontier and the charts); the tables list every row." again.md' \
    "the report says which row it read: $(grep "named earlier" again.md)"
"$ACCUBENCH" plan --recommend --effective 8 --mem-cap 1G --from again.csv >again.rec.txt 2>err.txt
check '[ $? -eq 0 ] && grep -q "^left aside: 1 row of a config named earlier in the file (run again with --append: its first row is ranked" again.rec.txt &&
    [ "$(grep -c "^ *[0-9][0-9]*  8x1 " again.rec.txt)" -eq 1 ]' \
    "plan --recommend ranks the first row alone: $(cat again.rec.txt err.txt)"
gnuplot -e "csv='again.csv'; out='again'" "$ACCUBENCH_ROOT/plots/curves.gp" >err.txt 2>&1
check '[ "$(grep -c "<text>sum, micro 8</text>" again.curves.svg)" -eq 1 ] && grep -q "<text>.* 5 steps, " again.curves.svg' \
    "the chart draws the first run's curve alone: $(grep "<text>sum\|steps, " again.curves.svg) $(cat err.txt)"
check '! grep -q "run again not drawn" again.curves.svg' \
    "the curves chart leaves the main CSV's rows to the charts of them"
# the charts of the main CSV read a config's first row too: the CSV's
# `# config_key:` line names the columns that make a config
pick() { awk -f "$ACCUBENCH_ROOT/plots/split.awk" -f "$ACCUBENCH_ROOT/plots/levers.awk" \
    -f "$ACCUBENCH_ROOT/plots/pick.awk" "$@"; }
check '[ "$(pick -v want=rows -v where=status=ok again.csv | wc -l)" -eq 2 ] &&
    [ "$(pick -v want=repeats again.csv)" -eq 1 ] && [ "$(pick -v want=count -v col=model again.csv)" -eq 1 ]' \
    "pick.awk reads the first row of a config run again: $(pick -v want=rows again.csv | cut -c1-80)"
grep -v "^# config_key:" again.csv >nokey.csv
check '[ "$(pick -v want=rows nokey.csv | wc -l)" -eq 3 ] && [ "$(pick -v want=repeats nokey.csv)" -eq 0 ]' \
    "a CSV from before the config_key line is read whole"
gnuplot -e "csv='again.csv'; out='again'" "$ACCUBENCH_ROOT/plots/wallclock.gp" >err.txt 2>&1
check 'grep -qF "<text>1 row of a config run again not drawn (each config" again.wallclock.svg' \
    "the wall-clock chart says it left the repeat out: $(grep "run again" again.wallclock.svg) $(cat err.txt)"

# a target at or above the starting loss (about 2.77): no least time, and
# no E has a time to target: one line says so, exit 1 (as --goal time)
"$ACCUBENCH" plan --time-to-target cv.csv --target-loss 100 >high.txt 2>err.txt
rc=$?
check '[ $rc -eq 1 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "meets it at step 0 (the target is at or above its starting loss): no time to target" err.txt' \
    "plan with a high target: one line, exit 1 (rc $rc): $(cat err.txt)"
check '! grep -q "least time to target" high.txt' "no least time crowned: $(cat high.txt)"
check 'grep -q "E=8 lr [0-9.]*: meets the target at step 0 (starting loss 2\.7" high.txt' \
    "each E meets it at step 0: $(cat high.txt)"
check 'grep -q "the target loss 100 is at or above the starting loss of every E.s curve (2\.7[0-9]*, the lowest)" high.txt' \
    "the plan says the target is at or above the starting loss: $(cat high.txt)"
"$ACCUBENCH" plan --recommend --goal time --from cv.csv --target-loss 100 >rank.txt 2>err.txt
check '[ $? -eq 1 ] && grep -q "no ranking by time to target: the target loss 100 is at or above" rank.txt' \
    "--goal time ranks nothing: $(cat rank.txt err.txt)"
"$ACCUBENCH" report cv.csv --no-charts --target-loss 100 >out.txt 2>err.txt
check '[ $? -eq 0 ]' "report with a high target exits 0: $(cat err.txt)"
check '! grep -q "least time" cv.md' "the report crowns no least time: $(grep -i 'least' cv.md)"
check 'grep -q "No time to target: the target loss 100 is at or above the starting loss" cv.md' \
    "the report says why there is no time to target"
# the default target (the highest final loss) still crowns one
"$ACCUBENCH" plan --time-to-target cv.csv >plain.txt 2>err.txt
check '[ $? -eq 0 ] && [ "$(grep -c "<- least time to target" plain.txt)" -eq 1 ]' \
    "the default target crowns one E: $(cat plain.txt err.txt)"
exit $fail
