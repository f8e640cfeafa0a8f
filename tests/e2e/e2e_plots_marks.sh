#!/bin/sh
# What a chart draws is visible and says what it is: read from the SVG
# gnuplot wrote. A measured point is never painted over (gnuplot's pt -1
# draws a white disc: under an interval bar it blanked every point of the
# wall-clock and throughput lines). A log axis fits what it draws, not the
# decades around it (a 1.3x spread once sat in a tenth of a 10..100 ms
# chart), and keeps every point and bar inside.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
root=${ACCUBENCH_ROOT:?}
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "SKIP e2e_plots_marks: gnuplot not installed"
    exit 0
fi

# blanked SVG: how many places have a white mark drawn last (gnuplot rings
# each filled point with a white halo, then draws the point over it).
blanked() {
    awk "match(\$0, /<use xlink:href='#gpPt[0-9]+' transform='translate\\([0-9.,]+\\)/) {
            at = substr(\$0, RSTART, RLENGTH); sub(/.*translate/, \"\", at)
            last[at] = index(\$0, \"color='white'\") ? \"white\" : \"colour\"
         }
         END { n = 0; for (a in last) if (last[a] == \"white\") n++; print n }" "$1"
}

# frontier.csv has the 95% interval of every row: the charts draw its bars.
cp "$root/tests/fixtures/frontier.csv" f.csv
sh "$root/scripts/plots.sh" f.csv >plots.out 2>&1 || { echo "FAILED: plots.sh: $(cat plots.out)"; fail=1; }
for c in wallclock throughput frontier; do
    check 'grep -q "<use xlink:href=.#gpPt" f.$c.svg' "the $c chart draws no points"
    n=$(blanked f.$c.svg)
    check '[ "$n" = 0 ]' "the $c chart paints white over $n of its points"
done
# The data-parallel bars carry their 95% interval, as the report's sync
# sentences do: two bars a few percent apart may be one time.
check 'grep -q ">95% interval of the step time<" f.dp.svg' "the dp chart draws no intervals"

# yrange CHART: "MIN MAX DATA_MIN DATA_MAX" of its y axis, as gnuplot drew it
yrange() {
    gnuplot -e "csv='f.csv'; out='y'" "$root/plots/$1.gp" \
        -e 'print sprintf("%g %g %g %g", GPVAL_Y_MIN, GPVAL_Y_MAX, GPVAL_DATA_Y_MIN, GPVAL_DATA_Y_MAX)' 2>&1
}
for c in wallclock throughput frontier; do
    r=$(yrange $c)
    check 'echo "$r" | awk "NF != 4 || \$2 / \$1 > 2.5 || \$1 > \$3 || \$2 < \$4 { exit 1 }"' \
        "the $c chart's y axis (min max, data min max: $r) does not fit its data"
done

# The time-to-target bars: the step time's interval times the steps, 95%
# or less where the step was timed 5 times or fewer (the table's
# time_s_coverage): the chart says the coverage the report's table does.
ttt() { # ttt COVERAGE: f.goodput.csv of three E, each bar of that coverage
    echo "series,model,effective_batch,lr,steps_to_target,examples_to_target,split,step_ms,step_ms_ci_lo,step_ms_ci_hi,time_s,time_s_lo,time_s_hi,predicted_steps,predicted_time_s,best,target_loss,s_min,e_min,b_crit,b_simple,fit,s_min_se,e_min_se,b_crit_se,b_simple_err,predicted_steps_se,time_s_coverage"
    for e in 8 16 32; do
        echo "1,S,$e,0.1,40,$((40 * e)),8x$((e / 8)),$e,$((e - 1)),$((e + 1)),$((e * 40 / 1000)).$e,0.1,1,40,0.$e,0,2,20,170,8,20,holds,1,1,1,1,1,$1"
    done
}
for cover in 0.75 0.95; do
    ttt $cover >f.goodput.csv
    gnuplot -e "csv='f.csv'; out='t$cover'" "$root/plots/time_to_target.gp" 2>gp.err ||
        { echo "FAILED: time_to_target.gp: $(cat gp.err)"; fail=1; }
done
check 'grep -q "(a 75% interval: the step timed 5 times (or rounds) or fewer)" t0.75.time_to_target.svg && ! grep -q "95% interval" t0.75.time_to_target.svg' \
    "the time-to-target chart does not say its bars cover 75%"
check 'grep -q "(95% interval)" t0.95.time_to_target.svg' "nor that they cover 95%"
check 'grep -q "fixture CPU (2 cores), fp32" t0.95.time_to_target.svg' "nor name the device and dtype"

# A split that does not divide E is written as the report writes it: the
# fixture's 24x3 at E = 64 read as 72 examples; it is K=3: 24+24+16.
cp "$root/tests/fixtures/abc.csv" abc.csv
sh "$root/scripts/plots.sh" abc.csv >plots.out 2>&1 || { echo "FAILED: plots.sh on abc.csv: $(cat plots.out)"; fail=1; }
check 'grep -q ">S K=3: 24+24+16 0.457 ms<" abc.time_split.svg && ! grep -q "24x3" abc.time_split.svg' \
    "the time split names the ragged split 24x3"
check 'grep -q ">K=3: 24+24+16<" abc.frontier.svg && ! grep -q "24x3" abc.frontier.svg' \
    "the frontier names the ragged split 24x3"
# A traced step of seconds reads in whole ms (2775 ms, not 2.78e+03 ms).
awk -F, -v OFS=, '/^#/ { print; next } !h { h = 1; for (i = 1; i <= NF; i++) if ($i == "cupti_step_ms") c = i; print; next }
    $c != "" { $c = $c * 6000 } { print }' abc.csv >slow.csv
gnuplot -e "csv='slow.csv'" "$root/plots/time_split.gp" 2>gp.err || { echo "FAILED: time_split.gp: $(cat gp.err)"; fail=1; }
check 'grep -q ">S K=3: 24+24+16 2740 ms<" slow.time_split.svg && ! grep -q "e+03 ms" slow.time_split.svg' \
    "a step of seconds in whole ms: $(grep -o ">S [^<]* ms<" slow.time_split.svg | head -3)"
# A config timed twice (an A/A check) is one point, from its first arm:
# the second is the same point again, its ratio label printed over the
# first's. abc.csv with the ratio columns, and its 16x4 once more as arm 2.
awk -F, -v OFS=, '/^#/ { print; next }
    !h { h = 1; for (i = 1; i <= NF; i++) { if ($i == "micro_batch") m = i; if ($i == "accum_steps") k = i }
         print $0, "arm", "vs_ref", "vs_ref_lo", "vs_ref_hi"; next }
    $k == 1 { print $0, 1, 1, 1, 1; next }
    { print $0, 1, 1.5, 1.4, 1.6 }
    $m == 16 { print $0, 2, 1.7, 1.65, 1.75 }' abc.csv >aa.csv
sh "$root/scripts/plots.sh" aa.csv >plots.out 2>&1 || { echo "FAILED: plots.sh on aa.csv: $(cat plots.out)"; fail=1; }
check '[ "$(grep -c "1.50x \[1.40..1.60\]" aa.wallclock.svg)" = 3 ] && ! grep -q "1.70x" aa.wallclock.svg' \
    "the wall-clock chart draws an A/A pair's second arm: $(grep -o "[0-9.]*x \[[^<]*" aa.wallclock.svg | tr '\n' ' ')"
check '[ "$(grep -c ">16x4<" aa.frontier.svg)" = "$(grep -c ">16x4<" abc.frontier.svg)" ]' \
    "the frontier draws an A/A pair's second arm"

# A ratio label reads as the report prints the same ratio (the one format,
# ratio_text.c, through plots/ratio.awk): the chart's own "%.2f" wrote the
# report's 1.089x [1.089..1.089] as 1.09x [1.09..1.09] and 1.004x as 1.00x.
# abc.csv timed in 5 rounds, each split a constant multiple of 64x1 a round,
# its vs_ref cells that multiple.
awk -F, -v OFS=, '/^#/ { print; next }
    !h { h = 1; for (i = 1; i <= NF; i++) if ($i == "micro_batch") m = i
         print $0, "comparison", "rounds", "round_ms", "vs_ref", "vs_ref_lo", "vs_ref_hi"; next }
    { f = $m == 64 ? 1 : $m == 24 ? 1.004 : $m == 16 ? 1.0893 : 1.37
      s = ""; split("0.2 0.25 0.5 0.2 0.25", a, " ")
      for (k = 1; k <= 5; k++) s = s (k > 1 ? " " : "") sprintf("%.6g", a[k] * f)
      print $0, "c1", 5, s, f, f, f }' abc.csv >ratios.csv
sh "$root/scripts/plots.sh" ratios.csv >plots.out 2>&1 || { echo "FAILED: plots.sh on ratios.csv: $(cat plots.out)"; fail=1; }
"$ACCUBENCH" report ratios.csv --no-charts >/dev/null 2>&1 || { echo "FAILED: report of ratios.csv"; fail=1; }
# the report's "vs K=1" cells and the chart's labels, each sorted
sed -n '/^## Splits of each/,/^## [^S]/p' ratios.md | grep -o '[0-9.]*x \[[0-9.]*\.\.[0-9.]*\]' | sort >report.txt
grep -o '>[0-9.]*x \[[0-9.]*\.\.[0-9.]*\]<' ratios.wallclock.svg | tr -d '<>' | sort >chart.txt
check '[ "$(wc -l <chart.txt)" = 3 ] && cmp -s report.txt chart.txt && grep -qx "1.089x \[1.089..1.089\]" chart.txt' \
    "the wall-clock labels are not the report's ratios: chart $(tr '\n' ' ' <chart.txt), report $(tr '\n' ' ' <report.txt)"

# One dtype a chart: ratios.csv again in fp32 (each step 2.5 times as long)
# drew one line per model through both dtypes, zig-zagging at every K with
# two "ref" labels; the first dtype is drawn, the title names the other.
awk -F, -v OFS=, '/^#/ { print; next } !h { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; print; next }
    { print; $c["dtype"] = "fp32"; $c["step_ms_median"] = $c["step_ms_median"] * 2.5; n = split($c["round_ms"], a, " ")
      s = ""; for (k = 1; k <= n; k++) s = s (k > 1 ? " " : "") a[k] * 2.5; $c["round_ms"] = s; $c["comparison"] = "c2"; print }' \
    ratios.csv >dtypes.csv
gnuplot -e "csv='dtypes.csv'" "$root/plots/wallclock.gp" 2>gp.err || { echo "FAILED: wallclock.gp on dtypes.csv: $(cat gp.err)"; fail=1; }
check '[ "$(grep -c ">ref<" dtypes.wallclock.svg)" = 1 ] && grep -q "bf16 (fp32 also run, not drawn here)" dtypes.wallclock.svg' \
    "a chart of two dtypes: $(grep -c ">ref<" dtypes.wallclock.svg) ref labels, title $(grep -o "fixture[^<]*" dtypes.wallclock.svg | head -1)"

# An MFU over 100% cannot be true: the wall-clock chart's right axis
# reaches it (its [0:100] cut the point off the top, unsaid), and its
# note says so; abc.csv with one row's MFU at 123.4.
awk -F, -v OFS=, '/^#/ { print; next } !h { h = 1; for (i = 1; i <= NF; i++) if ($i == "mfu_pct") c = i; print; next }
    !n++ { $c = 123.4 } { print }' abc.csv >over.csv
y2=$(gnuplot -e "csv='over.csv'; out='over'" "$root/plots/wallclock.gp" \
    -e 'print sprintf("%g %g", GPVAL_Y2_MAX, GPVAL_DATA_Y2_MAX)' 2>&1)
check 'echo "$y2" | awk "NF != 2 || \$2 < 123 || \$1 < \$2 { exit 1 }"' \
    "the wall-clock chart's right axis (max, data max: $y2) does not reach an MFU of 123.4"
check 'grep -q "a share of 123% cannot be true" over.wallclock.svg' \
    "the wall-clock chart does not say an MFU over 100% cannot be true"
check '! grep -q "cannot be true" abc.wallclock.svg' "a chart under 100% says a share cannot be true"

# A chart draws one effective batch: where the CSV holds others, its title
# says so (the report beside it may open with another E's verdict).
# (the copy at 128 keeps its micro-batch: twice the accumulation steps)
awk -F, -v OFS=, '/^#/ { print; next } !h { h = 1; for (i = 1; i <= NF; i++) { if ($i == "effective_batch") e = i; if ($i == "accum_steps") k = i }; print; next }
    { print } n++ == 0 { $e = 128; $k = 2 * $k; print }' abc.csv >twoE.csv
sh "$root/scripts/plots.sh" twoE.csv >plots.out 2>&1 || { echo "FAILED: plots.sh on twoE.csv: $(cat plots.out)"; fail=1; }
check 'grep -q "effective batch 64 (128 also run, not drawn here), async" twoE.wallclock.svg' \
    "the wall-clock title does not say another E was run: $(grep -o 'effective batch [^<]*' twoE.wallclock.svg)"
check 'grep -q "effective batch 64, async" abc.wallclock.svg' "a one-E title is not plain"
# ... the first four, and a count of the rest
awk -F, -v OFS=, '/^#/ { print; next } !h { h = 1; for (i = 1; i <= NF; i++) { if ($i == "effective_batch") e = i; if ($i == "accum_steps") a = i }; print; next }
    { print } n++ == 0 { $a = 2 * $a; for (k = 1; k <= 6; k++) { $e = 100 + k; print } }' abc.csv >manyE.csv
sh "$root/scripts/plots.sh" manyE.csv >plots.out 2>&1 || { echo "FAILED: plots.sh on manyE.csv: $(cat plots.out)"; fail=1; }
check 'grep -q "effective batch 64 (101, 102, 103, 104 and 2 more also run, not drawn here)" manyE.wallclock.svg' \
    "the title lists every other E: $(grep -o 'effective batch [^<]*' manyE.wallclock.svg)"

# The throughput of a model that reads tokens is in tokens/s, as the
# report's tables give it; where any row drawn has no token rate, one
# axis in samples/s.
# (frontier.csv has no tokens_per_s column: each row gets one, 16 tokens
# a sample; in mixed.csv all but the first are empty)
awk -F, '/^#/ { print; next }
    !h { h = 1; for (i = 1; i <= NF; i++) if ($i == "samples_per_s") s = i; print $0 ",tokens_per_s"; next }
    { print $0 "," ($s == "" ? "" : $s * 16) }' f.csv >tok.csv
awk -F, '/^#/ || !h { h = h || !/^#/; print; next } { if (n++) sub(/,[^,]*$/, ","); print }' tok.csv >mixed.csv
sh "$root/scripts/plots.sh" tok.csv >plots.out 2>&1 && sh "$root/scripts/plots.sh" mixed.csv >>plots.out 2>&1 ||
    { echo "FAILED: plots.sh on tok.csv or mixed.csv: $(cat plots.out)"; fail=1; }
check 'grep -q "training throughput (tokens/s, log scale)" tok.throughput.svg && grep -q ">Tokens per second vs" tok.throughput.svg' \
    "the throughput of a token model is not in tokens/s"
check 'grep -q "training throughput (samples/s, log scale)" mixed.throughput.svg' \
    "a throughput chart with a row without tokens is not in samples/s"

# A chart of one model names the models it leaves out.
cp "$root/tests/fixtures/default.csv" default.csv
sh "$root/scripts/plots.sh" default.csv >plots.out 2>&1 || { echo "FAILED: plots.sh on default.csv: $(cat plots.out)"; fail=1; }
for c in modes frontier; do
    check 'grep -q "model S (M, L also run, not drawn here)" default.$c.svg' \
        "the $c chart does not name the models it leaves out: $(grep -o 'model [^<]*' default.$c.svg | head -1)"
done
check 'grep -q "side by side, model S<" abc.frontier.svg || grep -q "per device, model S<" abc.frontier.svg' \
    "a one-model chart names others"

# One split at the effective batch: the charts against K say it is one
# point, not leave a lone dot where a line would be.
awk '/^#/ || !h { h = h || !/^#/; print; next } !n++' abc.csv >one.csv
sh "$root/scripts/plots.sh" one.csv >plots.out 2>&1 || { echo "FAILED: plots.sh on one.csv: $(cat plots.out)"; fail=1; }
for c in wallclock throughput dispatches; do
    check 'grep -q "one split at effective batch 64 (K = 1): a single point" one.$c.svg' "the one-split $c chart does not say so"
done
check '! grep -q "one split at" abc.wallclock.svg' "a chart of four splits says it has one"

# The time split's bars add up to 100% of the traced step, whatever its
# cupti_step_ms (the fixture's is not busy + idle): read through the
# chart's own expressions, in the gnuplot that drew it.
sums=$(gnuplot -e "csv='abc.csv'; out='ts'" "$root/plots/time_split.gp" \
    -e 'stats rows(traced) using (share("forward_ms") + share("backward_ms") + share("optimizer_ms") + 100.0 * (@other) / (@total) + share("idle_ms")) nooutput; print sprintf("%.3f %.3f", STATS_min, STATS_max)' 2>&1)
check '[ "$sums" = "100.000 100.000" ]' "the time split's bars add up to $sums, not 100%"

# A curves file with a config's second arm (an A/A check; one from before
# the run stopped training it): the chart reads its first arm's curve
# alone, not one line drawn twice.
cp abc.csv aa.csv
{
    echo "backend,model,dtype,mode,reduction,effective_batch,micro_batch,accum_steps,devices,sync,order,step,loss,recompute,shard,arm,lr,grad_noise_scale,grad_noise_scale_err"
    for arm in 1 2; do
        for step in 0 1; do echo "cpu,S,fp32,async,sum,64,16,4,1,,forward,$step,2.$step,none,,$arm,0.001,,"; done
    done
} >aa.curves.csv
# the rows the chart reads (its own `clean`), the arm column found by name
echo 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "arm") c = i; next } { n++; two += $c == 2 } END { print two + 0, n + 0 }' >arms.awk
got=$(gnuplot -e "csv='aa.csv'; out='aa'" "$root/plots/curves.gp" \
    -e 'print system(clean." | awk -F, -f arms.awk")' 2>&1)
check '[ "$got" = "0 2" ]' "the curves chart reads the first arm's rows alone (second-arm rows, rows: $got)"

# A custom Llama's name is long: the curves panel's title gives it a line
# of its own, each line short enough to sit inside the panel (on one line
# with the batch, devices, steps and rate it ran off the left edge and
# the model's name was cut).
llama="llama:d=64,layers=2,heads=4,kv_heads=1,ffn=176,seq=32,vocab=512,tied=1"
{
    echo "backend,model,dtype,mode,reduction,effective_batch,micro_batch,accum_steps,devices,sync,order,step,loss,recompute,shard,arm,lr,grad_noise_scale,grad_noise_scale_err"
    for step in 0 1; do echo "cpu,\"$llama\",fp32,async,sum,16,4,4,1,,forward,$step,6.$step,none,,1,0.003,,"; done
} >aa.curves.csv
gnuplot -e "csv='aa.csv'; out='long'" "$root/plots/curves.gp" >long.out 2>&1
# the panel's title lines: the SVG text from "model " on, and the line after
title=$(awk '/<text>model / { on = 2 } on && /<text>/ { sub(/.*<text>/, ""); sub(/<\/text>.*/, ""); print; on-- }' long.curves.svg)
long_line=$(printf '%s\n' "$title" | awk 'length($0) > 100')
shown=$(echo "$llama" | tr , ';')
check 'printf "%s\n" "$title" | grep -qx "model $shown" && [ -z "$long_line" ]' \
    "the curves panel's title names the model on a line of its own, no line over 100 characters: $title $(cat long.out)"

# A panel per series, every series of every model in the file's order;
# past the chart's 24 panels the rest are counted under it, not dropped
# unsaid (a panel per model's first series drew 1 of these 30, and 4
# models at most).
{
    echo "backend,model,dtype,mode,reduction,effective_batch,micro_batch,accum_steps,devices,sync,order,step,loss,recompute,shard,arm,lr,grad_noise_scale,grad_noise_scale_err"
    for m in S M; do for e in $(seq 1 15); do
        for step in 0 1; do echo "cpu,$m,fp32,async,sum,$e,1,$e,1,,forward,$step,2.$step,none,,1,0.001,,"; done
    done; done
} >aa.curves.csv
gnuplot -e "csv='aa.csv'; out='many'" "$root/plots/curves.gp" >many.out 2>&1
panels=$(grep -c '<text>model [SM]</text>' many.curves.svg)
check '[ "$panels" -eq 24 ] && grep -q "6 more series not drawn (the first 24 in the curves file are" many.curves.svg &&
    grep -q "<text>model M</text>" many.curves.svg' \
    "30 series: 24 panels, S's 15 and M's first 9, and the other 6 counted ($panels panels: $(cat many.out))"

# dtype, mode and the accumulator are a series' too: one config's curves in
# fp32 and bf16, async and sync, and a bf16 accumulator are five panels
# (drawn in one, the lines of one reduction and micro-batch overlaid)
{
    echo "backend,model,dtype,mode,reduction,effective_batch,micro_batch,accum_steps,devices,sync,order,step,loss,recompute,shard,arm,lr,grad_noise_scale,grad_noise_scale_err,grad_dtype"
    for k in fp32,async,fp32 bf16,async,fp32 fp32,sync,fp32 bf16,sync,fp32 fp32,async,bf16; do
        dt=${k%%,*} rest=${k#*,} mode=${rest%%,*} grad=${rest#*,}
        for step in 0 1; do echo "cpu,S,$dt,$mode,sum,16,4,4,1,,forward,$step,2.$step,none,,1,0.001,,,$grad"; done
    done
} >aa.curves.csv
gnuplot -e "csv='aa.csv'; out='keyed'" "$root/plots/curves.gp" >keyed.out 2>&1
check '[ "$(grep -c "<text>model S</text>" keyed.curves.svg)" -eq 5 ] && [ "$(grep -c "<text>bf16, sync, effective batch 16" keyed.curves.svg)" -eq 1 ] && [ "$(grep -c "<text>fp32, async, gradient in bf16, " keyed.curves.svg)" -eq 1 ] && [ ! -s keyed.out ]' \
    "a panel per dtype, mode and accumulator: $(grep -o "<text>[bf][fp][13][62], [a-z]*, [^<]*" keyed.curves.svg | tr "\n" "|") $(cat keyed.out)"

# split.awk spells a split as split_text.c does (its header's examples)
echo 'BEGIN { print split_text(3, 4, 1) "|" split_text(24, 11, 16) "|" split_text(512, 3, 256) "|" split_text(16, 4, 16) "|" split_text(16, 4, "") }' >t.awk
got=$(awk -f "$root/plots/split.awk" -f t.awk)
check '[ "$got" = "K=4: 3+3+3+1|K=11: 24x10+16|K=3: 512x2+256|16x4|16x4" ]' "split.awk writes: $got"
exit $fail
