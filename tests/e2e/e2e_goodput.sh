#!/bin/sh
# "Is E right?": three effective batches trained with --train-steps and an
# --lr-grid give plan --time-to-target's steps, examples and time to
# target per E, the fit's verdict and the least time; the report's section
# with its table and the time-to-target chart beside the CSV; a target no
# E reaches says so per row and the rest goes on; the noise scale along
# the curves (the row's own at step 0); a single E says the fit needs three; plan --recommend --goal time ranks the E by time to target;
# a bad --lr-grid is refused in one line with exit 2.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
# curves AWK: AWK over g.curves.csv's rows, each column by name ($c["lr"])
curves() { awk -F, '/^#/ { next } !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next } '"$1" g.curves.csv; }

# --budget-s 1: the noise pass's fifth of it runs the 8 windows whole even
# on a loaded machine (cut to 4, as under a loaded make test, the estimates
# along training come out non-positive and are left empty); the steps are
# fixed, so the budget costs only the probes.
# $bare where a line names its own split (an option named twice is refused)
bare="--backend cpu --model tiny --optimizer sgd --lr 0.5 --steps 3 --warmup 0 \
    --trace-steps 0 --budget-s 1 --min-samples 3 --noise-windows 8 --train-steps 30"
common="$bare --micro 8"
"$ACCUBENCH" run $common --effective 8,16,32 --lr-grid 0.25,0.5 --csv g.csv >run.txt 2>err.txt
check '[ $? -eq 0 ]' "run exits 0: $(cat err.txt)"
check 'grep -q "^backend,model,.*,arm,lr,grad_noise_scale,grad_noise_scale_err,grad_dtype$" g.curves.csv' \
    "the curves file has lr, noise and accumulator columns"
# 3 E x 1 split x 2 rates x 2 orders x 30 steps
check '[ $(grep -vc "^#" g.curves.csv) -eq $((1 + 3 * 2 * 2 * 30)) ]' "a row per E, rate, order and step"
check '[ $(curves '"'"'$c["lr"] == 0.25'"'"' | wc -l) -eq $((3 * 2 * 30)) ]' "each rate named on its rows"
check 'grep -q "^# curves cpu tiny .* lr=0.25 steps=30" g.curves.csv' "the summary names the rate"
# the noise scale along the forward curves with K > 1, at steps 0, 7, 15, 22
# of 30 (each quarter); at step 0 it is the row's own figure (the same
# starting weights and windows)
noisy=$(curves '$c["effective_batch"] == 32 && $c["order"] == "forward" && $c["lr"] == 0.5 && $c["grad_noise_scale"] != "" { printf "%s ", $c["step"] }')
check '[ "$noisy" = "0 7 15 22 " ]' "noise along the curve at each quarter: '$noisy'"
check '[ $(curves '"'"'$c["order"] == "reverse" && $c["grad_noise_scale"] != ""'"'"' | wc -l) -eq 0 ]' "none on the reverse curves"
check '[ $(curves '"'"'$c["effective_batch"] == 8 && $c["grad_noise_scale"] != ""'"'"' | wc -l) -eq 0 ]' "none at 8x1 (one small batch a window)"
row=$(awk -F, '/^backend,/ { for (i = 1; i <= NF; i++) { if ($i == "grad_noise_scale") c = i; if ($i == "effective_batch") m = i }; h = 1; next } h && !/^#/ && $m == 32 { print $c }' g.csv)
at0=$(curves '$c["effective_batch"] == 32 && $c["order"] == "forward" && $c["lr"] == 0.5 && $c["step"] == 0 { print $c["grad_noise_scale"] }')
check 'awk "BEGIN { exit !($row > 0 && ($at0 - $row) / $row < 1e-4 && ($row - $at0) / $row < 1e-4) }"' \
    "step 0's noise scale is the row's: $at0 against $row"

# a row whose noise pass its budget cut short (4 of 64 windows): the
# curve's points come from as many, so step 0 is still the row's figure
"$ACCUBENCH" run --backend cpu --model tiny --micro 8 --optimizer sgd --lr 0.5 --steps 3 \
    --warmup 0 --trace-steps 0 --budget-s 0.001 --min-samples 3 --noise-windows 64 \
    --train-steps 8 --effective 32 --csv cut.csv >/dev/null 2>err.txt
cut_row=$(awk -F, '/^backend,/ { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next } h && !/^#/ { print $c["noise_windows"], $c["grad_noise_scale"] }' cut.csv)
cut_at0=$(awk -F, '/^#/ { next } !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next } $c["step"] == 0 && $c["order"] == "forward" { print $c["grad_noise_scale"] }' cut.curves.csv)
check '[ "${cut_row%% *}" -lt 64 ] && [ "${cut_row#* }" = "$cut_at0" ]' \
    "a cut-short row (windows, figure: $cut_row) and its curve's step 0 ($cut_at0): $(cat err.txt)"

"$ACCUBENCH" plan --time-to-target g.csv >plan.txt 2>err.txt
check '[ $? -eq 0 ]' "plan --time-to-target exits 0: $(cat err.txt)"
for e in 8 16 32; do
    check 'grep -Eq "^  E=$e lr 0.[25]* \(best final loss of the grid, its (largest|smallest)\): [0-9.]* steps, [0-9.e+]* examples to target( \(its own final loss is the target: [^)]*\))?; fastest within the cap 8x[0-9]* " plan.txt' \
        "E=$e: steps, examples and time to target: $(grep "E=$e " plan.txt)"
done
check 'grep -q "target loss [0-9.]* (the highest final loss among the E)" plan.txt' "the default target says what it is"
# a grid of two rates brackets no best rate: each E's is at an edge, and
# one line says what that means for the steps and the fit
check 'grep -Eq "^  the best rate of E = (8, 16 and 32 is the (largest|smallest) of its grid|.* is the largest of its grid, and of .* the smallest): a rate beyond it may train faster, so their steps to target may be too many" plan.txt' \
    "the best rates at their grid's edge named: $(grep "best rate" plan.txt)"
check '[ $(grep -c "examples to target (its own final loss is the target: reached by its curve.s end by construction)" plan.txt) -eq 1 ]' \
    "the E whose final loss is the default target is marked: $(grep "E=" plan.txt)"
check 'grep -q "^  time to target = steps x the fastest split.s median step time within the cap; its interval is the step time.s alone (95%, or less where the step was timed 5 times or in 5 rounds or fewer, said beside it): the steps, from one curve per E, carry none$" plan.txt' \
    "whose interval the time to target carries: $(head -3 plan.txt)"
check '[ $(grep -c "<- least time to target" plan.txt) -eq 1 ]' "one E has the least time"
check 'grep -Eq "fit S = S_min \+ E_min/B over 3 E: .*the relation holds|the relation does not fit these points: " plan.txt' \
    "the fit's verdict: $(grep -i "fit" plan.txt)"
check 'grep -q "B_simple [0-9.]* +- " plan.txt' "B_simple beside it"
check 'grep -q "^  B_simple along E=32.s curve: step 0: [0-9.e+]* +- .*, step 22: " plan.txt' "and along training"
"$ACCUBENCH" plan --time-to-target g.csv --table >table.csv
# the time's interval is the step time's [min, max] where it was timed
# --steps 3 times: a 75% interval (1 - 2^(1-3)), in the table and said
cover=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $c["effective_batch"] == 16 { print $c["time_s_coverage"] }' table.csv)
samples=$(awk -F, '/^backend,/ { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next } h && !/^#/ && $c["effective_batch"] == 16 { print $c["samples"] }' g.csv)
check 'awk "BEGIN { exit !($samples <= 5 && ($cover - (1 - 2 ^ (1 - $samples)))^2 < 1e-12) }"' \
    "the time's interval covers what $samples samples allow: $cover"
check 'grep -q "^  E=16 .* to target (a 75% interval: the step timed 3 times)" plan.txt' \
    "and plan says so beside it: $(grep "E=16" plan.txt)"
check '[ $(grep -c "^1,tiny," table.csv) -eq 3 ] && head -1 table.csv | grep -q "^series,model,effective_batch,.*,fit,s_min_se,e_min_se,b_crit_se,b_simple_err,predicted_steps_se,time_s_coverage,backend,dtype,mode,devices,sync,recompute,shard,grad_dtype$"' \
    "the chart's table: a line per E"

# the fit's standard errors, on curves whose steps to loss 3 are known:
# straight lines 4 - step / S with S 15.5, 9.5 and 7.75 at E = 8, 16, 32
# (5 + 80 / E off by +0.5, -0.5, +0.25; a line stays put under the
# smoothing); least squares worked out apart: S_min 4.75 +- 0.818317,
# E_min 84.5714 +- 9.89743, B_crit 17.8045 +- 5.00232 (delta method)
awk -F, 'BEGIN { OFS = ","; S[8] = 15.5; S[16] = 9.5; S[32] = 7.75 } /^#/ { print; next }
    !h { print; h = 1; for (i = 1; i <= NF; i++) c[$i] = i; next }
    { $c["loss"] = sprintf("%.9g", 4 - $c["step"] / S[$c["effective_batch"]]); print }' \
    g.curves.csv >lines.curves.csv
cp g.csv lines.csv
"$ACCUBENCH" plan --time-to-target lines.csv --target-loss 3 --table >lines.table.csv
got=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $c["effective_batch"] == 16 {
    print $c["steps_to_target"], $c["s_min"], $c["s_min_se"], $c["e_min"], $c["e_min_se"],
          $c["b_crit"], $c["b_crit_se"], $c["fit"] }' lines.table.csv)
check 'echo "$got" | awk "{ exit !(\$8 == \"holds\" && \$1 == 9.5 && (\$2 - 4.75)^2 < 1e-8 &&
    (\$3 - 0.818317)^2 < 1e-8 && (\$4 - 84.5714)^2 < 1e-6 && (\$5 - 9.89743)^2 < 1e-6 &&
    (\$6 - 17.8045)^2 < 1e-6 && (\$7 - 5.00232)^2 < 1e-8) }"' \
    "the fit's figures and their standard errors (steps, S_min, se, E_min, se, B_crit, se): $got"
# the prediction's error: the fit's and the noise scale's parts summed
pred=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $c["effective_batch"] == 16 {
    want = (1 + $c["b_simple"] / 16) * $c["s_min_se"] + $c["s_min"] / 16 * $c["b_simple_err"]
    print $c["predicted_steps_se"], want }' lines.table.csv)
check 'echo "$pred" | awk "{ exit !(\$1 > 0 && (\$1 - \$2)^2 < 1e-6 * \$2^2) }"' \
    "the predicted steps' error (got, want): $pred"
"$ACCUBENCH" plan --time-to-target lines.csv --target-loss 3 >lines.txt
check 'grep -q "^  E=16 .*; predicted [0-9.]* +- [0-9.e+]* steps (S_min (1 + B_simple/E), not measured)" lines.txt' \
    "a prediction says it is one, with its error: $(grep "E=16" lines.txt)"
check '! grep -q "its own final loss is the target" lines.txt' "--target-loss: no E is marked as setting it"
# the report's predicted time carries the predicted steps' error, as the
# steps do (the same step time multiplies both)
"$ACCUBENCH" report lines.csv --target-loss 3 --no-charts >/dev/null 2>err.txt
pred_s=$(awk -F'|' '$2 ~ /^ *(8|16|32)( |$)/ && $(NF-2) ~ /\+-/ { n++; if ($(NF-1) !~ /^ *[0-9.e+-]+ \+- [0-9.e+-]+ m?s *$/) bad = bad $(NF-1) ";" }
    END { print n + 0, bad }' lines.md)
check '[ "$pred_s" = "3 " ]' "each predicted time with its error, as its steps (rows, bad cells): $pred_s $(cat err.txt)"
check 'grep -q "B_crit / B_simple = [0-9.e+]* +- [0-9.e+]* (their relative errors summed)" lines.txt' \
    "B_crit over B_simple with its error: $(grep "B_crit /" lines.txt)"
check 'grep -q "S_min 4.75 +- 0.82 steps, E_min 84.57 +- 9.9 examples, B_crit = E_min/S_min 17.8 +- 5.0 examples (standard errors from the residuals, 1 degree of freedom: three points, so the errors themselves are rough)" lines.txt' \
    "the fit's errors and degrees of freedom in words: $(grep "fit S" lines.txt)"

# plan --recommend --goal time ranks the E by time to target, the least first
"$ACCUBENCH" plan --recommend --goal time --from g.csv >rank.txt 2>err.txt
check '[ $? -eq 0 ] && grep -Eq "^  1\. E=[0-9]* as 8x[0-9]*: .* m?s \[[0-9.]+\.\.[0-9.]+\]( \(a [0-9.]*% interval: the step timed [0-9]* times\))?; the least( by its median: [0-9]+ other E not separated from it by the rule)?$" rank.txt && [ $(grep -c "^  [123]\. E=" rank.txt) -eq 3 ]' \
    "--goal time ranks the three E: $(cat rank.txt err.txt)"
# each time to target and its interval to one precision, in plain numbers
# (it once read "0.00107 [9.49e-04..0.00146]")
awk '/^  [123]\. E=/ { if (!match($0, /= [0-9.]+ m?s \[[0-9.]+\.\.[0-9.]+\]/)) { print "no time: " $0; next }
    t = substr($0, RSTART + 2, RLENGTH - 2); split(t, p, / m?s \[|\.\.|\]/)
    d = length(p[1]) - index(p[1], ".")
    if (index(p[1], ".") && (length(p[2]) - index(p[2], ".") != d || length(p[3]) - index(p[3], ".") != d))
        print "decimals differ: " t }' rank.txt >times_bad.txt
check '[ ! -s times_bad.txt ]' "the times to target: $(cat times_bad.txt)"
# the rule speaks beside each ratio: an E whose interval does not clear
# the threshold is said not yet separated from the least, or the same as
# it within 2%, and counted as a tie either way
ties=$(sed -n 's/^  1\. .*the least by its median: \([0-9]*\) other E.*/\1/p' rank.txt)
check '[ "${ties:-0}" -eq "$(grep -Ec "(not yet separated from|the same as) the least" rank.txt)" ]' \
    "the least's ties ($ties) are the E said not separated: $(cat rank.txt)"
# plan's marker says the same: by its median alone where the rule ties it
if [ "${ties:-0}" -gt 0 ]; then marker="<- least time to target by its median$"; else marker="<- least time to target$"; fi
check 'grep -q "$marker" plan.txt' "plan's least marks its ties ($ties) alike: $(grep "least" plan.txt)"
# ("takes 1.15x [1.05..1.26] as long": the interval's low end; a line
# without one is printed too, so that a change of wording cannot pass)
unclear=$(awk '/^  [23]\. E=/ && !/not yet separated from the least|the same as the least/ {
    if (match($0, /takes [0-9.]+x \[[0-9.e+-]+\.\./)) { t = substr($0, RSTART, RLENGTH)
        sub(/.*\[/, "", t); sub(/\.\.$/, "", t); if (t + 0 < 1.02) print }
    else print "no interval: " $0 }' rank.txt)
check '[ -z "$unclear" ]' "an E said apart from the least has an interval that clears 2%: $unclear"
"$ACCUBENCH" plan --recommend --goal time --from g.csv --dtype bf16 >/dev/null 2>err.txt
check '[ $? -eq 2 ] && [ $(wc -l <err.txt) -eq 1 ] && grep -q -- "--dtype goes with .*a measuring --recommend, not with --recommend --goal time" err.txt' \
    "--goal time ranks the file as it ran: --dtype refused, not dropped ($(cat err.txt))"
"$ACCUBENCH" plan --goal time --from g.csv >/dev/null 2>err.txt
check '[ $? -eq 2 ] && [ $(wc -l <err.txt) -eq 1 ]' "--goal time without --recommend: one line, exit 2"

# a target no E reaches: each row says so, and since no E has a time to
# target, one line says that and the exit is 1
"$ACCUBENCH" plan --time-to-target g.csv --target-loss 1e-9 >far.txt 2>err.txt
rc=$?
check '[ $rc -eq 1 ] && [ $(grep -c "does not reach the target in 30 steps" far.txt) -eq 3 ]' \
    "an unreachable target, per row, exit 1 (rc $rc): $(cat far.txt err.txt)"
check '[ $(wc -l <err.txt) -eq 1 ] && grep -q "no effective batch reaches the target loss 1e-09 in its curve" err.txt' \
    "and one line why: $(cat err.txt)"
check 'grep -q "no fit: the fit needs at least three" far.txt' "and no fit from no points"
# every curve diverged (empty from step 3): no final loss sets a default
# target, so none is reached, rather than a target of nan met at step 0
awk -F, 'BEGIN { OFS = "," } /^#/ { print; next }
    !h { print; h = 1; for (i = 1; i <= NF; i++) c[$i] = i; next }
    { if ($c["step"] >= 3) $c["loss"] = ""; print }' g.curves.csv >gone.curves.csv
cp g.csv gone.csv
"$ACCUBENCH" plan --time-to-target gone.csv >gone.txt 2>err.txt
rc=$?
check '[ $rc -eq 1 ] && grep -q ": no target loss (every E.s curve diverged, so none has a final loss to set it)$" gone.txt && [ $(grep -c "does not reach the target in 30 steps (its curve diverged)$" gone.txt) -eq 3 ] && ! grep -q "at step 0" gone.txt && ! grep -qi "nan" gone.txt err.txt' \
    "every curve diverged: no target, none reached, exit 1 (rc $rc): $(cat gone.txt err.txt)"
check '[ $(wc -l <err.txt) -eq 1 ] && grep -q "every effective batch.s curve diverged (none has a final loss): no time to target" err.txt' \
    "and one line why: $(cat err.txt)"
"$ACCUBENCH" plan --recommend --goal time --from gone.csv >gone_rank.txt 2>err.txt
check '[ $? -eq 1 ] && grep -q ": no ranking by time to target: every E.s curve diverged" gone_rank.txt' \
    "--goal time ranks nothing: $(cat gone_rank.txt err.txt)"
# curves without a timed row of their E (the main CSV's rows gone): each E
# says so, one line sums it up, exit 1
{ grep "^#" g.csv; grep -m1 "^backend," g.csv; } >untimed.csv
cp g.curves.csv untimed.curves.csv
"$ACCUBENCH" plan --time-to-target untimed.csv >untimed.txt 2>err.txt
rc=$?
check '[ $rc -eq 1 ] && [ $(grep -Ec "examples to target( \(its own final loss is the target: [^)]*\))?; no timed row in the CSV" untimed.txt) -eq 3 ] && [ $(wc -l <err.txt) -eq 1 ] && grep -q "has a timed row in the CSV: no time to target" err.txt' \
    "curves without timed rows: per E, one line, exit 1 (rc $rc): $(cat untimed.txt err.txt)"

"$ACCUBENCH" report g.csv >/dev/null 2>err.txt
check '[ $? -eq 0 ]' "report exits 0: $(cat err.txt)"
check 'grep -q "^## Is E right?" g.md' "the report's section"
# one split per E: the curves' section says there is no other split to
# compare, not that a gap of "-" was "not measured" beside a measured one,
# and names no gap of a reduction that did not run
check '[ $(grep -c ": one correct split, no other to compare it with; the rounding gap [0-9.e-]*\.$" g.md) -eq 6 ] && ! grep -q "within - of each other" g.md' \
    "the curves' gaps with one split per E: $(grep -m1 "steps=30:" g.md)"
check 'grep -q "^| *8 .*| 8x1 " g.md && grep -q "^| *32 .*| 8x4 " g.md' "its table names each E's fastest split"
check 'grep -Eq "^- (Fit over 3 E|The relation S = S_min \+ E_min / B does not fit)" g.md' "the fit in words"
check 'grep -Eq "^- Least time to target: E = [0-9]+ as [0-9x]+, [0-9.]+ m?s\. " g.md' "the least time to target: $(grep "Least time" g.md)"
# the table's times by header, with their unit as plan prints them: a time
# under a second in ms, never in exponent form ("9.49e-04")
awk -F'|' '/^\| +E +\| +lr +\|/ { for (i = 1; i <= NF; i++) { h = $i; gsub(/^ +| +$/, "", h); c[h] = i }; on = 1; next }
    on && !/^\|/ { on = 0 } on && /^\| +[0-9]/ {
        t = $c["time to target"]; p = $c["predicted time"]; gsub(/^ +| +$/, "", t); gsub(/^ +| +$/, "", p); n++
        if (t !~ /^(-|[0-9.]+ m?s \[[0-9.]+\.\.[0-9.]+\].*)$/) print "time: " t
        if (p !~ /^(-|[0-9.]+ m?s)$/) print "predicted: " p }
    END { if (!n) print "no table" }' g.md >report_times_bad.txt
check '[ ! -s report_times_bad.txt ]' "the report's times to target: $(cat report_times_bad.txt)"
check 'grep -q "^- The noise scale along E = 32.s curve (examples; .*): step 0: " g.md' "the noise along training in the report"
# the step times were taken 3 times each: [min, max], a 75% interval, and
# the column's head says so rather than 95%
check 'grep -Eq "^\| +E +\| .*\| +step ms \[75%\] +\|" g.md' \
    "the step time's column names its interval's coverage: $(grep -E "^\| +E +\|" g.md)"
check 'grep -Eq "^\| +[0-9]+ .*\| +0\.[25]0* \(best of grid, its (largest|smallest)\) +\|" g.md' \
    "the report's rates at their grid's edge: $(grep -E "best of grid" g.md | head -1)"
check 'grep -q "^- The best rate of E = .* of its grid.*: a rate beyond it may train faster" g.md' \
    "and the report's line on it"
check '[ -s g.time_to_target.png ] && [ -s g.time_to_target.svg ]' "the time-to-target chart beside the CSV"
# the curves behind it: each E's kept curve against the examples seen,
# drawn beside the CSV and linked from the report
check '[ -s g.loss_to_target.png ] && grep -q "E = 32, lr 0.[25]: [0-9.]* steps" g.loss_to_target.svg' \
    "the loss-to-target chart names each E, its rate and steps"
check 'grep -q "^!\[The loss against the examples seen.*\](g.loss_to_target.png)" g.md' "linked from the report"
"$ACCUBENCH" plan --time-to-target g.csv --curve-table >ct.csv 2>err.txt
check '[ $? -eq 0 ] && head -n 1 ct.csv | grep -q "^series,model,effective_batch,lr,step,examples,loss,loss_smoothed,target_loss,steps_to_target,backend,dtype,mode,devices,sync,recompute,shard,grad_dtype$"' \
    "plan --curve-table: its header: $(head -n 1 ct.csv) $(cat err.txt)"
# a row per E and step of its kept curve; examples = step x E
check '[ $(awk -F, "NR > 1" ct.csv | wc -l) -eq $((3 * 30)) ] && awk -F, "NR > 1 && \$6 != \$5 * \$3 { bad = 1 } END { exit bad }" ct.csv' \
    "the curve table: 30 steps for each of 3 E, examples = step x E"
# the kept curve is one of the file's: E = 32's loss at step 10 as the curves file has it at
# its rate (to the table's 6 digits)
lr32=$(awk -F, 'NR > 1 && $3 == 32 { print $4; exit }' ct.csv)
loss32=$(awk -F, 'NR > 1 && $3 == 32 && $5 == 10 { print $7 }' ct.csv)
check '[ -n "$loss32" ] && curves "\$c[\"effective_batch\"] == 32 && \$c[\"order\"] == \"forward\" && \$c[\"lr\"] == $lr32 && \$c[\"step\"] == 10 { d = \$c[\"loss\"] - $loss32; if (d * d < 1e-10) print }" | grep -q .' \
    "the curve table's loss is the curves file's (E = 32, lr $lr32, step 10: $loss32)"
# two series (one model in two modes): a panel each, each with its own
# target and E lines, named apart by mode, and no gnuplot warning
"$ACCUBENCH" run --backend cpu --model tiny --optimizer sgd --lr 0.5 --steps 3 --warmup 0 \
    --trace-steps 0 --budget-s 0.2 --min-samples 3 --noise-windows 0 --train-steps 30 \
    --micro 8 --effective 8,16,32 --mode async,sync --csv modes.csv >/dev/null 2>err.txt
"$ACCUBENCH" plan --time-to-target modes.csv --curve-table >modes.goodput_curves.csv 2>>err.txt
check '[ "$(awk -F, "NR > 1 { print \$1, \$13 }" modes.goodput_curves.csv | sort -u | tr "\n" " ")" = "1 async 2 sync " ]' \
    "the curve table names each series' mode: $(cat err.txt)"
(LC_ALL=C gnuplot -e "csv='modes.csv'" "$ACCUBENCH_ROOT/plots/loss_to_target.gp") 2>gp.err
check '[ $? -eq 0 ] && [ ! -s gp.err ] && [ -s modes.loss_to_target.png ]' "two series drawn without a warning: $(cat gp.err)"
check 'grep -q "tiny: async, cpu, fp32; target loss [0-9.]*<" modes.loss_to_target.svg &&
    grep -q "tiny: sync, cpu, fp32; target loss [0-9.]*<" modes.loss_to_target.svg' \
    "a panel per series, each titled by its mode and target: $(grep -o "tiny: [^<]*" modes.loss_to_target.svg | tr "\n" " ")"
check '[ "$(grep -c "E = 32, lr 0.5: [0-9.]* steps" modes.loss_to_target.svg)" -eq 2 ] &&
    ! grep -q "series 1 of" modes.loss_to_target.svg' "each panel keys its own E lines, none left out"
# the time-to-target chart of the same two series: each keyed by its mode,
# no warning (neither has a prediction: no noise scale, nor a fit of
# these points, and no line is drawn where there are none)
"$ACCUBENCH" plan --time-to-target modes.csv --table >modes.goodput.csv 2>err.txt
check '[ "$(awk -F, "NR > 1 { print \$1, \$31 }" modes.goodput.csv | sort -u | tr "\n" " ")" = "1 async 2 sync " ]' \
    "the time-to-target table names each series' mode: $(cat err.txt)"
(LC_ALL=C gnuplot -e "csv='modes.csv'" "$ACCUBENCH_ROOT/plots/time_to_target.gp") 2>gp.err
check '[ $? -eq 0 ] && [ ! -s gp.err ] && [ -s modes.time_to_target.png ]' "time to target of two series without a warning: $(cat gp.err)"
check 'grep -q ">tiny: async, cpu, fp32, target loss [0-9.]*<" modes.time_to_target.svg &&
    grep -q ">tiny: sync, cpu, fp32, target loss [0-9.]*<" modes.time_to_target.svg && ! grep -q "series drawn" modes.time_to_target.svg' \
    "each series keyed by its mode, none left out: $(grep -o ">tiny[^<]*" modes.time_to_target.svg | tr "\n" " ")"
# a custom model's name holds commas: the tables write it as the run's CSV
# does (";" for ","), so every row has as many cells as its header
"$ACCUBENCH" run --backend cpu --model "tiny,mlp:hidden=32,layers=2,classes=8" --optimizer sgd \
    --lr 0.5 --steps 3 --warmup 0 --trace-steps 0 --budget-s 0.2 --min-samples 3 \
    --noise-windows 0 --train-steps 30 --micro 8 --effective 8,16,32 --csv shape.csv >/dev/null 2>err.txt
check '[ $? -eq 0 ]' "a custom model with commas in its name runs: $(cat err.txt)"
for t in table curve-table; do
    "$ACCUBENCH" plan --time-to-target shape.csv --$t >shape.$t.csv 2>err.txt
    check '[ $? -eq 0 ] && grep -q "^2,mlp:hidden=32;layers=2;classes=8,8," shape.$t.csv &&
        awk -F, "NR == 1 { n = NF } NF != n { bad = 1 } END { exit bad || NR < 2 }" shape.$t.csv' \
        "--$t: the custom model's row has its header's cells: $(grep -m1 mlp shape.$t.csv) $(cat err.txt)"
done
"$ACCUBENCH" plan --time-to-target g.csv --curve-table --table >out.txt 2>err.txt
rc=$?
check '[ $rc -eq 2 ] && [ ! -s out.txt ] && grep -q "one table at a time" err.txt' \
    "--table with --curve-table: refused (rc $rc: $(cat err.txt))"
# the curves chart draws every series the file holds: a panel for each of
# the 3 E x 2 rates, each titled with its E and rate, none left out
panels=$(grep -o 'effective batch [0-9]*, 1 device(s)[^<]*, lr [0-9.]*' g.curves.svg | sort -u | wc -l)
series=$(curves '!s[$c["effective_batch"] " " $c["lr"]]++' | wc -l)
check '[ "$panels" -eq 6 ] && [ "$series" -eq 6 ] && ! grep -q "not drawn" g.curves.svg' \
    "the curves chart draws a panel per series ($panels panels for $series series): $(grep -o 'effective batch [^<]*' g.curves.svg | tr '\n' ';')"
check 'grep -q "^!\[Time to target against E.*\](g.time_to_target.png)" g.md' "linked from the report"
"$ACCUBENCH" report g.csv --target-loss 1e-9 --no-charts >/dev/null 2>err.txt
check 'grep -q "^| *16 .*| not reached in 30 |" g.md' "report --target-loss: the row says it is not reached"

# a single E: time to target per split, and the fit needs three
"$ACCUBENCH" run $bare --effective 16 --micro 8,16 --csv one.csv >/dev/null 2>err.txt
check '[ $? -eq 0 ]' "one E runs: $(cat err.txt)"
"$ACCUBENCH" report one.csv --no-charts >/dev/null 2>err.txt
check 'grep -q "^- No fit: the fit needs at least three effective batches" one.md' "one E: the fit needs three"
check '[ $(grep -Ec "^- E = 16 as .* steps x .* ms = [0-9.]+ m?s \[[0-9.]+\.\.[0-9.]+\] to target" one.md) -eq 2 ]' \
    "one E: each split's time to target: $(grep "^- E = 16" one.md)"
"$ACCUBENCH" plan --time-to-target one.csv >one.txt 2>err.txt
check '[ $? -eq 0 ] && grep -Eq "^  E=16 .* m?s \[.*\] to target" one.txt && ! grep -q "least time" one.txt' \
    "one E: timed, but the least of nothing: $(cat one.txt err.txt)"
"$ACCUBENCH" plan --recommend --goal time --from one.csv >one_rank.txt 2>err.txt
check '[ $? -eq 0 ] && grep -q "^  1\. E=16 as .*; the only E with a time to target: nothing to rank it against$" one_rank.txt' \
    "one E: --goal time ranks it against nothing: $(cat one_rank.txt err.txt)"

# two E: both reach the default target, and the line through them is no
# fit (two points fit any line): no residual in the table, not 0.00
"$ACCUBENCH" run $common --effective 8,16 --csv two.csv >/dev/null 2>err.txt
check '[ $? -eq 0 ]' "two E run: $(cat err.txt)"
"$ACCUBENCH" report two.csv --no-charts >/dev/null 2>err.txt
check 'grep -q "^- No fit: the fit needs at least three effective batches" two.md' "two E: the fit needs three"
resid=$(awk -F'|' '$2 ~ /^ *(8|16)( \(least time( by its median)?\))? *$/ && $4 ~ /^ *[0-9.]+ *$/ { gsub(/ /, "", $7); printf "%s ", $7 }' two.md)
check '[ "$resid" = "- - " ]' "two E: no residual from a line through two points: '$resid'"

# a grid whose every rate diverges names no best rate: plan and the
# report say why instead, and no rate is called best or at an edge
# (AdamW at 5 and 8 leaves the numbers within two steps)
"$ACCUBENCH" run --backend cpu --model tiny --steps 3 --warmup 0 --trace-steps 0 --budget-s 0.2 \
    --min-samples 3 --noise-windows 0 --train-steps 20 --micro 8 --effective 8,16 \
    --lr-grid 5,8 --csv wild.csv >/dev/null 2>err.txt
check '[ $? -eq 0 ]' "a diverging grid runs: $(cat err.txt)"
"$ACCUBENCH" plan --time-to-target wild.csv >wild.txt 2>err.txt
check '[ $(grep -c "^  E=[0-9]* no best lr of the 2 trained (every rate of its grid diverged" wild.txt) -eq 2 ] &&
    ! grep -q "best final loss\|best rate" wild.txt' "plan: no best rate of a diverged grid: $(cat wild.txt)"
"$ACCUBENCH" report wild.csv --no-charts >/dev/null 2>err.txt
check '[ $(grep -c "^|  *[0-9]* | none best of 2 |" wild.md) -eq 2 ] &&
    [ $(grep -c "^- No best learning rate at E = [0-9]* (2 trained): every rate of its grid diverged" wild.md) -eq 2 ] &&
    ! grep -q "best of grid\|best rate of" wild.md' "report: no best rate of a diverged grid: $(grep -A 6 "^No target" wild.md)"

# bad --lr-grid: one line, exit 2
for bad in "" "0.1,0" "0.1,-2" "fast" "0.1,,0.2"; do
    "$ACCUBENCH" run $common --effective 8 --lr-grid "$bad" --csv bad.csv >out.txt 2>err.txt
    rc=$?
    check '[ $rc -eq 2 ] && [ $(wc -l <err.txt) -eq 1 ] && grep -q "lr-grid" err.txt' \
        "--lr-grid '$bad': one line, exit 2 (rc $rc: $(cat err.txt))"
done
"$ACCUBENCH" run --backend cpu --model tiny --effective 8 --micro 8 --lr-grid sqrt --csv bad.csv >out.txt 2>err.txt
rc=$?
check '[ $rc -eq 2 ] && [ $(wc -l <err.txt) -eq 1 ] && grep -q "train-steps" err.txt' \
    "--lr-grid without --train-steps: one line, exit 2 (rc $rc: $(cat err.txt))"
check '[ ! -e bad.csv ]' "nothing written for bad input"
# the table into a full disk (/dev/full): scripts/plots.sh charts it from
# a file, which a cut table with exit 0 would have left half-drawn
"$ACCUBENCH" plan --time-to-target g.csv --table >/dev/full 2>err.txt
rc=$?
check '[ $rc -eq 2 ] && [ $(wc -l <err.txt) -eq 1 ] && grep -q "cannot write the output (stdout): No space left" err.txt' \
    "a table that cannot be written: one line, exit 2 (rc $rc: $(cat err.txt))"
exit $fail
