#!/bin/sh
# make bench's script: the profile it picks and says why (cpu where no GPU
# answers, default where one does, the one asked for otherwise), then the
# report and charts of the run it just made, with their paths printed last.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
bench="$ACCUBENCH_ROOT/scripts/bench.sh"

# A real run of the quick profile, asked for by name.
sh "$bench" "$ACCUBENCH" quick "$PWD/out" >bench.out 2>bench.err
rc=$?
check '[ $rc -eq 0 ]' "bench.sh quick exits 0 (got $rc): $(tail -n 5 bench.err)"
check '[ "$(head -n 1 bench.out)" = "make bench: profile quick (asked for)" ]' \
    "it names the profile first: $(head -n 1 bench.out)"
csv=$(sed -n 's/^results: //p' bench.out)
check '[ -f "$csv" ]' "the run's CSV: $csv"
prefix=${csv%.csv}
# The last lines: the CSV, the charts (where gnuplot is), the report, the
# record.
check '[ "$(tail -n 3 bench.out | head -n 1)" = "  report   $prefix.md" ]' \
    "the Markdown report's path is third from last: $(tail -n 3 bench.out)"
check '[ "$(tail -n 2 bench.out | head -n 1)" = "  report   $prefix.html" ]' \
    "the HTML report's path is next to last"
check '[ "$(tail -n 1 bench.out)" = "  record   $prefix.json  (the rows typed and the verdicts, for programs)" ]' \
    "the JSON record's path is last: $(tail -n 1 bench.out)"
# the record holds the verdict the report opens with (E = 16: 16x1, 4x4, 2x8)
verdict=$(python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))["verdicts"][0]
print(v["model"], v["effective_batch"], " ".join(v["splits"]), v["ran"], v["b_vs_a"]["paired_rounds"] > 0)' "$prefix.json" 2>&1)
check '[ "$verdict" = "tiny 16 16x1 4x4 2x8 True True" ]' "the JSON record has the A/B/C verdict: $verdict"
check 'grep -qx "  results  $csv" bench.out' "the CSV's path is listed"
# the console states the verdict as the report does, line for line
check 'grep -qx "The A/B/C verdict" bench.out' "the console names the verdict: $(cat bench.out)"
for line in "B (4x4) against A: " "C (2x8) against A: " "Verdict: "; do
    said=$(grep "^  - $line" bench.out | sed 's/^  - //')
    check '[ -n "$said" ] && grep -qxF -- "- $said" "$prefix.md"' \
        "the console's '$line' line is the report's: '$said'"
done
check '! grep -q "A/A check FAILED" bench.out' "no A/A pair, no A/A warning"
check '[ -s "$prefix.md" ] && [ -s "$prefix.html" ] && [ -s "$prefix.json" ]' "the report files exist"
if command -v gnuplot >/dev/null 2>&1; then
    check '[ -f "$prefix.throughput.png" ] && grep -q "^  chart    $prefix.throughput.png" bench.out' \
        "the throughput chart is drawn and listed"
fi

# The choice, with a stand-in program: no GPU answers -> cpu; one does ->
# default. It records the profile it was asked to run and hands the rest to
# the real program (the report of a small CSV).
cat >fake.sh <<FAKE
#!/bin/sh
case \$1 in
plan) [ -n "\${FAKE_GPU:-}" ] ;;
run) echo "\$*" >run-args.txt
     cp "\${FAKE_CSV:-$ACCUBENCH_ROOT/tests/fixtures/abc.csv}" fake/run-\$\$.csv ;;
*) exec "$ACCUBENCH" "\$@" ;;
esac
FAKE
mkdir fake && chmod +x fake.sh
sh "$bench" "$PWD/fake.sh" "" fake >nogpu.out 2>&1
check 'head -n 1 nogpu.out | grep -q "^make bench: profile cpu (no GPU answered: .*make bench-full"' \
    "without a GPU it picks cpu and says why: $(head -n 1 nogpu.out)"
check 'grep -q -- "--profile cpu --backend auto" run-args.txt' "the cpu profile ran: $(cat run-args.txt)"
FAKE_GPU=1 sh "$bench" "$PWD/fake.sh" "" fake >gpu.out 2>&1
check '[ "$(head -n 1 gpu.out)" = "make bench: profile default (a GPU answered)" ]' \
    "with a GPU it picks default: $(head -n 1 gpu.out)"
check 'grep -q -- "--profile default --backend auto" run-args.txt' "the default profile ran"

# An A/A pair the rule calls apart (arm 2 about 6% slower in every round):
# make bench still exits 0 (at 95% a pair separates by chance now and
# then), but its console ends on one line that says the model's verdicts
# may carry a bias and gives the command that checks again; the A/A line
# itself, in the report's words, comes before, with the verdict.
cat >aa.csv <<'CSV'
# device: x
backend,device,model,dtype,recompute,grad_dtype,mode,reduction,effective_batch,micro_batch,accum_steps,arm,status,step_ms_median,step_ms_ci_lo,step_ms_ci_hi,samples,comparison,rounds,round_ms
cpu,x,S,fp32,none,fp32,async,sum,64,64,1,1,ok,40,39,41,50,c1,5,40 41 40.5 39.8 40.2
cpu,x,S,fp32,none,fp32,async,sum,64,16,4,1,ok,50,49,51,50,c1,5,50 51 50.5 49.8 50.2
cpu,x,S,fp32,none,fp32,async,sum,64,16,4,2,ok,53,52,54,50,c1,5,53 54.1 53.5 52.8 53.2
cpu,x,S,fp32,none,fp32,async,sum,64,8,8,1,ok,60,59,61,50,c1,5,60 61 60.5 59.8 60.2
CSV
rm -f fake/*
FAKE_CSV=$PWD/aa.csv sh "$bench" "$PWD/fake.sh" "" fake >aa.out 2>aa.err
rc=$?
check '[ $rc -eq 0 ]' "a failed A/A check does not fail make bench (rc $rc): $(cat aa.err)"
last=$(tail -n 1 aa.out)
check 'case "$last" in "A/A check FAILED for model S at effective batch 64 (16x4; async, sum reduction, fp32, cpu): arm 2 / arm 1 = 1.06"*"x ["*"], slower (paired over 5 interleaved rounds; threshold 2%). This model'"'"'s verdicts at this effective batch may carry a bias of that size; re-check: accubench run --backend cpu --model S --effective 64 --micro 64,16,16,8 --mode async --dtype fp32") true ;; *) false ;; esac' \
    "the console ends on the failed A/A check: $last"
check '[ $(grep -c "^A/A check FAILED" aa.out) -eq 1 ] && [ -z "$(tail -n 2 aa.out | head -n 1)" ]' \
    "one line per failed pair, set apart below the paths: $(tail -n 4 aa.out)"
check 'grep -q "^  - S, E = 64, 16x4 (async, sum reduction, fp32, cpu): arm 2 / arm 1 = 1.06[0-9]*x .*; the rule FAILED: .*may carry a bias\.$" aa.out' \
    "the A/A line as the report states it: $(grep "arm 2 / arm 1" aa.out)"
aa_prefix=$(ls fake/run-*.csv | sed 's/\.csv$//')
check 'grep -qxF -- "- $last" "$aa_prefix.md"' "the report gives the same line"
held=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["aa_checks"][0]["rule_held"], d["aa_checks"][0]["recheck"], d["verdicts"][0]["aa_rule_held"])' "$aa_prefix.json" 2>&1)
check '[ "$held" = "False accubench run --backend cpu --model S --effective 64 --micro 64,16,16,8 --mode async --dtype fp32 False" ]' \
    "the record says it too, with the same command: $held"
# the command it gives runs (a short budget: only that it is a valid run)
# (on the tiny model: S is not what is checked here)
cmd=$(printf '%s\n' "${last##*re-check: accubench run }" | sed 's/--model S /--model tiny /')
"$ACCUBENCH" run $cmd --budget-s 0.05 --trace-steps 0 --noise-windows 0 \
    --csv recheck.csv --quiet >/dev/null 2>recheck.err
check '[ $? -eq 0 ] && [ $(grep -vc "^#" recheck.csv) -eq 5 ]' \
    "the re-check command runs, the pair twice: $(cat recheck.err)"
exit $fail
