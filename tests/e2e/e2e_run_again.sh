#!/bin/sh
# A sweep with an A/A pair run twice into one file (run --append): every
# reader that picks, pairs, counts or pools configs reads each config's
# first row, and they agree on how many rows they left aside. The report
# counts configs, not rows; its A/A check pairs the first run's arms (not
# the rerun's arm 2 with the first run's arm 1, timed in other rounds),
# and an A/A pair first named by the rerun is paired in the rerun's rounds;
# the noise scale pools each config once, as plan --noise and the JSON
# do; compare counts the rerun's rows as report does.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }

sweep() {
    "$ACCUBENCH" run --backend cpu --model tiny --effective 32 --micro "${micro:-32,8,4,4}" \
        --budget-s 0.1 --csv aa.csv "$@" >/dev/null 2>>err.txt
}
sweep
cp aa.csv once.csv
sweep --append
check '[ "$(grep -vc "^#" aa.csv)" -eq 9 ]' "two runs of 4 rows and a header: $(cat err.txt)"

"$ACCUBENCH" report aa.csv --no-charts >/dev/null 2>err.txt
check '[ $? -eq 0 ]' "report reads it: $(cat err.txt)"
check 'grep -q ", 3 configs (1 of them timed twice: the A/A check); 4 more rows of configs run again\. " aa.md' \
    "the headline counts configs, and the rows run again apart: $(sed -n 3p aa.md)"
check '[ "$(grep -c "^- tiny, E = 32, 4x8 .*arm 2 / arm 1 = " aa.md)" -eq 1 ] && ! grep -q "arm 2 / arm 1 = .*timed apart" aa.md' \
    "one A/A bullet, paired in its own rounds: $(grep "arm 2 / arm 1" aa.md)"
aa=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(len(d["aa_checks"]), d["aa_checks"][0]["rows"], sum(r["repeat"] for r in d["rows"]), len(d["verdicts"]))' aa.json 2>&1)
check '[ "$aa" = "1 [0, 1] 4 1" ]' "the JSON: one A/A check of the first run's arms, 4 repeats, one verdict: $aa"

# the noise scale pools each config once: the rerun adds no weight
"$ACCUBENCH" plan --noise once.csv >once.noise.txt 2>&1
"$ACCUBENCH" plan --noise aa.csv >aa.noise.txt 2>&1
check '[ "$(grep "^tiny E=32" once.noise.txt)" = "$(grep "^tiny E=32" aa.noise.txt)" ] &&
    head -n 1 aa.noise.txt | grep -q "^aa.csv holds 4 rows of configs named earlier in it .*: each config.s first row is read$"' \
    "plan --noise reads the first run alone and says so: $(cat once.noise.txt aa.noise.txt)"
pooled=$(grep -o "pooled from [0-9]* rows" once.noise.txt)
check '[ -n "$pooled" ] && grep -q "$pooled" aa.md' \
    "the report pools as plan --noise does: $(grep -o "pooled from [0-9]* rows" aa.md once.noise.txt)"

# compare counts the rerun as the report does, the repeated arm 2 among them
"$ACCUBENCH" compare once.csv aa.csv >cmp.txt 2>&1
check 'grep -q "^# repeated: aa.csv holds 4 rows of configs named earlier in it (a config run again with --append): each config.s first row is read$" cmp.txt' \
    "compare says 4 rows, as the report: $(grep repeated cmp.txt)"
# the A/A pair first named by the rerun: its arm 2 pairs with the arm 1 of
# its own rounds (a rerun's row), never with the first run's arm 1
rm -f aa.csv
micro=32,8,4 sweep
sweep --append
"$ACCUBENCH" report aa.csv --no-charts >/dev/null 2>err.txt
aa=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(len(d["aa_checks"]), d["aa_checks"][0]["rows"], d["aa_checks"][0]["arm2_vs_arm1"]["paired_rounds"] > 1)' aa.json 2>&1)
check '[ "$aa" = "1 [3, 4] True" ]' "the rerun's A/A pair, paired in its own rounds: $aa $(cat err.txt)"
exit $fail
