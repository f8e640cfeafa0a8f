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
     cp "$ACCUBENCH_ROOT/tests/fixtures/abc.csv" fake/run-\$\$.csv ;;
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
exit $fail
