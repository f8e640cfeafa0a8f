#!/bin/sh
# Interleaved rounds (docs/measuring.md): the splits of one model timed
# together, each row with the comparison's columns (its rounds, each kept
# round's median, its paired ratio to the largest split with an interval);
# --rounds N runs N; an A/A arm pairs with arm 1; a fixed --steps times
# each config alone; the report states a verdict from the paired ratios;
# an interrupt during a comparison keeps the rows of the comparisons before.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
# col FILE NAME: the column's values, one per row, by name
col() { awk -F, -v name="$2" '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } print $c }' "$1"; }
quick="--backend cpu --model tiny --effective 16 --budget-s 0.3 --trace-steps 0 --noise-windows 0"

"$ACCUBENCH" run $quick --micro 16,4,2 --csv abc.csv > run.txt 2> err.txt
check '[ $? -eq 0 ]' "the rounds run exits 0: $(cat err.txt)"
check '[ "$(col abc.csv status | tr "\n" " ")" = "ok ok ok " ]' "three ok rows"
ids=$(col abc.csv comparison | sort -u)
check '[ -n "$ids" ] && [ "$(echo "$ids" | wc -l)" -eq 1 ]' "one comparison id for the three: '$ids'"
# each row: rounds kept (5 at least) + dropped; round_ms holds one median a kept round
awk -F, '/^#/ { next } !h { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; next }
    {
        n = split($c["round_ms"], r, " ")
        if ($c["rounds"] < 5 || n != $c["rounds"]) { print "FAILED: rounds " $c["rounds"] ", round_ms " $c["round_ms"]; bad = 1 }
        if (!($c["vs_ref_lo"] <= $c["vs_ref"] && $c["vs_ref"] <= $c["vs_ref_hi"])) { print "FAILED: vs_ref " $c["vs_ref"] " outside its interval " $c["vs_ref_lo"] ".." $c["vs_ref_hi"]; bad = 1 }
        if ($c["micro_batch"] == 16 && $c["vs_ref"] != 1) { print "FAILED: the reference (16x1) has vs_ref " $c["vs_ref"]; bad = 1 }
        if ($c["note"] !~ /timed in [0-9]+ interleaved rounds \(stopped when/) { print "FAILED: the note does not say how it was timed: " $c["note"]; bad = 1 }
        if (!($c["mem_peak_bytes"] + 0 >= $c["mem_need_bytes"] + 0)) { print "FAILED: peak " $c["mem_peak_bytes"] " under the need " $c["mem_need_bytes"]; bad = 1 }
        # the CPU computes each operation as it issues it: the host time to
        # issue a step is that step, and the median over the same steps
        # as the step time is near it (a mean of the slices once read 29x)
        h = $c["host_enqueue_ms"] / $c["step_ms_median"]
        if (!(h > 0.5 && h < 2)) { print "FAILED: host enqueue " $c["host_enqueue_ms"] " ms against a " $c["step_ms_median"] " ms step"; bad = 1 }
        # the round is the unit: the step time is the median of the medians
        # of the kept rounds, its interval two of them (round_ms: 5 digits)
        for (i = 1; i <= n; i++) v[i] = r[i] + 0
        for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
        med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        if (!near($c["step_ms_median"], med)) { print "FAILED: step " $c["step_ms_median"] " is not the median " med " of round_ms " $c["round_ms"]; bad = 1 }
        lo = hi = 0
        for (i = 1; i <= n; i++) { lo = lo || near($c["step_ms_ci_lo"], v[i]); hi = hi || near($c["step_ms_ci_hi"], v[i]) }
        if (!lo || !hi || !($c["step_ms_ci_lo"] <= $c["step_ms_median"] && $c["step_ms_median"] <= $c["step_ms_ci_hi"])) { print "FAILED: interval " $c["step_ms_ci_lo"] ".." $c["step_ms_ci_hi"] " is not two of round_ms " $c["round_ms"] " around the step"; bad = 1 }
        # the single pass is timed in the same rounds, after each slice:
        # pass_ms is the median of the passes of the kept rounds
        np = split($c["round_pass_ms"], p, " ")
        if (np != n) { print "FAILED: round_pass_ms " $c["round_pass_ms"] " holds " np " rounds, round_ms " n; bad = 1 }
        if (np && !near($c["pass_ms"], median(p, np))) { print "FAILED: pass_ms " $c["pass_ms"] " is not the median " median(p, np) " of round_pass_ms " $c["round_pass_ms"]; bad = 1 }
    }
    function near(a, b) { return a - b < 1e-4 * b && b - a < 1e-4 * b }
    function median(a, n,    i, j, t, w) {
        for (i = 1; i <= n; i++) w[i] = a[i] + 0
        for (i = 2; i <= n; i++) for (j = i; j > 1 && w[j - 1] > w[j]; j--) { t = w[j]; w[j] = w[j - 1]; w[j - 1] = t }
        return n % 2 ? w[(n + 1) / 2] : (w[n / 2] + w[n / 2 + 1]) / 2
    }
    END { exit bad }' abc.csv || fail=1

# the report's verdict, from the paired ratios
"$ACCUBENCH" report abc.csv --no-charts > /dev/null 2>&1
check 'grep -q "B (4x4) against A: .*(paired over [0-9]* interleaved rounds; threshold 2%)" abc.md' \
    "the verdict pairs B with A: $(grep 'against A' abc.md)"
check 'grep -q "^- Verdict: " abc.md' "the report states a verdict: $(grep -A3 'A/B/C verdict' abc.md)"

# --rounds N: exactly N, counted with the dropped ones
"$ACCUBENCH" run $quick --micro 16,4 --rounds 3 --csv three.csv > /dev/null 2>&1
check '[ $? -eq 0 ]' "--rounds 3 exits 0"
for r in $(col three.csv rounds); do
    check '[ "$r" -ge 1 ] && [ "$r" -le 3 ]' "--rounds 3: a row kept $r rounds"
done
check 'grep -q "timed in 3 interleaved rounds (stopped when the --rounds asked for were run)" three.csv' \
    "--rounds 3: the note says so"

# the A/A arm: two rows of one comparison, arm 2 against arm 1
"$ACCUBENCH" run $quick --micro 4,4 --csv aa.csv > /dev/null 2>&1
check '[ $? -eq 0 ]' "the A/A run exits 0"
check '[ "$(col aa.csv arm | tr "\n" " ")" = "1 2 " ]' "arms 1 and 2: $(col aa.csv arm | tr '\n' ' ')"
check '[ "$(col aa.csv vs_ref | head -n 1)" = "1" ]' "arm 1 is the reference"
check '[ "$(col aa.csv comparison | sort -u | wc -l)" -eq 1 ]' "both arms in one comparison"
# arm 2 takes arm 1's checks (the same config: the same gradient), says so
check '[ "$(col aa.csv grad_rel_err | sort -u | wc -l)" -eq 1 ] && [ -n "$(col aa.csv grad_rel_err | head -n 1)" ]' \
    "arm 2's gradient error is arm 1's: $(col aa.csv grad_rel_err | tr '\n' ' ')"
check '[ "$(grep -c "checks (gradient and noise scale) those of arm 1" aa.csv)" -eq 1 ]' \
    "arm 2's note names the checks it took"

# a fixed --steps: each config alone, no comparison columns
"$ACCUBENCH" run $quick --micro 16,4 --steps 3 --csv alone.csv > /dev/null 2>&1
check '[ -z "$(col alone.csv comparison | tr -d "\n")" ]' "--steps: timed alone"
check '[ -z "$(col alone.csv round_pass_ms | tr -d "\n")" ] && [ -n "$(col alone.csv pass_ms | head -n 1)" ]' \
    "--steps: the single pass timed after the config's steps, no round's"

check '[ "$(col alone.csv samples | tr "\n" " ")" = "3 3 " ]' "--steps 3: three samples a row"

# SIGINT during the second comparison: the first one's rows stay, exit 130
"$ACCUBENCH" run --backend cpu --model tiny,S --effective 16 --micro 16,4,2 --budget-s 1 \
    --max-noise 0.001 --noise-windows 0 --trace-steps 0 --csv int.csv > int.txt 2>&1 &
pid=$!
for _ in $(seq 1 1800); do # up to 180 s: a loaded or sanitized build is slow
    [ -f int.csv ] && [ "$(grep -vc '^#' int.csv)" -ge 4 ] && break # header + 3 rows
    sleep 0.1
done
kill -INT $pid
wait $pid
rc=$?
check '[ $rc -eq 130 ]' "interrupted during the rounds: exit 130 (got $rc)"
check '[ "$(col int.csv model | tr "\n" " ")" = "tiny tiny tiny " ]' \
    "the finished comparison's rows are kept, the interrupted one's not: $(col int.csv model | tr '\n' ' ')"

# SIGINT inside a round after the first, with configs of that round not
# yet reached: their round holds no steps (a stale end once counted the
# earlier rounds' steps again, past the buffer: a corrupted heap, exit 134
# or 139). On a terminal the status line names the round as it starts, so
# the run goes under script(1), a terminal wide enough for the whole line,
# and gets SIGINT as round 2 starts, inside the first of its three slices
# (100 steps of a few ms each).
if command -v script >/dev/null 2>&1; then
    cat >mid.sh <<EOF
echo \$\$ >mid.pid
stty cols 400
exec "\$ACCUBENCH" run --backend cpu --model mlp:hidden=512,layers=2,classes=16 \\
    --effective 64 --micro 64,32,16 --rounds 10 --steps 100 --budget-s 1 --noise-windows 0 \\
    --trace-steps 0 --csv mid.csv
EOF
    : >mid.tty
    script -qfec "sh mid.sh" /dev/null >mid.tty 2>&1 </dev/null &
    term=$!
    for _ in $(seq 1 3600); do # up to 180 s: a loaded or sanitized build is slow
        grep -aq 'interleaved rounds: round 2' mid.tty && break
        kill -0 $term 2>/dev/null || break
        sleep 0.05
    done
    kill -INT "$(cat mid.pid)"
    wait $term
    rc=$?
    said=$(tr '\r' '\n' <mid.tty | grep -a 'accubench:\|malloc\|corrupt' | tail -n 2)
    check '[ $rc -eq 130 ] && echo "$said" | grep -q "accubench: interrupted (SIGINT)"' \
        "SIGINT as round 2 starts: exit 130 (got $rc): $said"
    check '[ -f mid.csv ] && [ -z "$(col mid.csv model)" ] && [ ! -e mid.csv.lock ]' \
        "SIGINT as round 2 starts: the CSV whole, no row of the cut comparison, no lock"
else
    echo "skipped: no script(1) to give the run a terminal"
fi
exit $fail
