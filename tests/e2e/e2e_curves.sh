#!/bin/sh
# --train-steps: the correct splits' loss curves lie within the rounding
# gap (the same split with its sums in another order), the known-wrong
# reductions far outside it, on the MLP and on the GPT's padded tokens;
# the curves CSV has a row per config, order and step; the noise-scale
# columns are filled where a window holds more than one micro-batch, the
# report and plan --noise set E against the noise scale (its splits'
# estimates pooled) with its caveat once, the curves chart is drawn and linked (or the report says why
# not), bad values of the two options are refused in one line, and the
# curves file is kept as the CSV is: reserved up front, locked, appendable,
# keyed by every key column, written with its rows; a config timed twice
# (an A/A check) trains one curve, its first arm's.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
col() { awk -F, -v name="$1" '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } print $c }' "$2"; }
# the value of key=VALUE on the summary line of model $1
gap() { grep "^# curves cpu $1 " "$2" | tr ' ' '\n' | sed -n "s/^$3=//p"; }
# the wrong reductions outside 100 x the rounding gap, the correct splits inside 4 x
judge() {
    r=$(gap "$1" "$2" gap_rounding); c=$(gap "$1" "$2" gap_correct_splits)
    check "awk 'BEGIN { exit !($r > 0 && $c <= 4 * $r) }'" "$1: correct splits $c within the rounding gap $r"
    for bug in mean-of-means no-scale; do
        b=$(gap "$1" "$2" gap_$bug)
        check "awk 'BEGIN { exit !(\"$b\" == \"inf\" || $b > 100 * $r) }'" "$1: $bug gap $b outside 100 x $r"
    done
}

common="--backend cpu --reduction sum,mean-of-means,no-scale \
    --optimizer sgd --lr 1 --steps 1 --warmup 0 --trace-steps 0 --budget-s 0.1 --min-samples 3"
"$ACCUBENCH" run $common --effective 64 --micro 4,16,64 --model tiny --train-steps 20 --noise-windows 8 --csv mlp.csv \
    >run.txt 2>err.txt
check '[ $? -eq 0 ]' "run exits 0: $(cat err.txt)"
check '[ -f mlp.curves.csv ]' "the curves CSV beside the main one"
# 3 splits x (sum twice + 2 wrong) x 20 steps
check '[ $(grep -vc "^#" mlp.curves.csv) -eq $((1 + 3 * 4 * 20)) ]' "a row per config, order and step"
check 'grep -q "^# curves cpu tiny " run.txt' "the summary on stdout"
judge tiny mlp.curves.csv
check '[ "$(col grad_noise_scale mlp.csv | head -1)" != "" ]' "noise scale at 4x16"
check '[ "$(col grad_noise_scale mlp.csv | tail -1)" = "" ]' "none at 64x1"
check 'col note mlp.csv | tail -1 | grep -q "no noise scale"' "and the note says why"
"$ACCUBENCH" report mlp.csv >/dev/null 2>err.txt
check '[ $? -eq 0 ]' "report exits 0: $(cat err.txt)"
check 'grep -q "^- tiny, E = 64 (.*): E is [0-9.e+-]* times the measured noise scale B_simple = [0-9.e+-]* +- [0-9.e+-]* examples; " mlp.md' \
    "the report sets E against the noise scale: $(grep "noise scale B_simple" mlp.md)"
check '[ $(grep -c "assumptions" mlp.md) -eq 1 ]' "the paper's caveat, once"
# The curves chart: drawn beside the CSV by the report (scripts/plots.sh)
# and linked from it; with no curves file none is made and the report says
# why; a model name in the curves file that carries code runs nothing.
check '[ -s mlp.curves.png ] && [ -s mlp.curves.svg ]' "the curves chart beside the CSV"
check 'grep -q "^!\[Loss against optimizer step.*\](mlp.curves.png)" mlp.md' "the report links the curves chart"
check 'grep -q "^- cpu tiny fp32 .*: the correct splits within .* of each other, the rounding gap .*: one curve up to rounding; mean-of-means .* off (.* times the rounding gap); no-scale diverged\.$" mlp.md' \
    "the report gives the gaps: $(grep -A3 "Do the correct splits" mlp.md)"
# a rate at which the correct curves diverge: no gap, never "one curve"
"$ACCUBENCH" run --backend cpu --model tiny --effective 8 --micro 4,8 --steps 2 --train-steps 8 \
    --lr 10 --reduction sum,mean-of-means --trace-steps 0 --noise-windows 0 --csv dv.csv \
    --quiet >/dev/null 2>&1
"$ACCUBENCH" report dv.csv --no-charts >/dev/null 2>&1
check 'grep -q "^- cpu tiny .*: the correct curves diverged (.*), so no gap can say whether they train alike; mean-of-means diverged\.$" dv.md && ! grep -q "one curve up to rounding" dv.md' \
    "diverged curves are not one curve: $(grep "steps=8" dv.md)"
cp mlp.csv lone.csv
"$ACCUBENCH" report lone.csv >/dev/null 2>err.txt
check '[ ! -e lone.curves.png ] && grep -q "^Not drawn, Loss against optimizer step.*: no loss curves beside this CSV" lone.md' \
    "no curves file: no chart, and the report says why: $(grep -i "loss against" lone.md)"
export PWN="$PWD/PWNED"
cp mlp.csv bad.csv
awk -F, -v OFS=, '/^#/ || /^backend,/ { print; next } { $2 = "tiny'"'"';touch${IFS}$PWN;'"'"'"; print }' \
    mlp.curves.csv >bad.curves.csv
sh "$ACCUBENCH_ROOT/scripts/plots.sh" bad.csv >/dev/null 2>err.txt
check '[ ! -e PWNED ] && ! grep -q "^sh: " err.txt' "a model name with code in the curves file runs nothing: $(cat err.txt)"

# Every number on a summary line is one the curves measured: a split
# alone has no second correct curve, a reduction not run has no gap, and
# a series of a wrong reduction alone has nothing to measure from; none
# reads as nan, and the report says what was not measured.
one="--backend cpu --optimizer sgd --lr 1 --steps 1 --warmup 0 --trace-steps 0 --budget-s 0.1 --min-samples 3"
"$ACCUBENCH" run $one --effective 8 --micro 4 --reduction sum --model tiny --train-steps 5 \
    --noise-windows 0 --csv lone_split.csv >lone.txt 2>err.txt
check '[ $? -eq 0 ] && grep -q "^# curves cpu tiny .* steps=5: gap_rounding=[0-9.e+-]*$" lone.txt &&
    ! grep -qi "nan" lone_split.curves.csv' "a lone split's summary gives its rounding gap alone: $(grep "^# curves" lone.txt)"
"$ACCUBENCH" run $one --effective 8 --micro 4 --reduction no-scale --model tiny --train-steps 5 \
    --noise-windows 0 --csv wrong_only.csv >wrong.txt 2>err.txt
check '[ $? -eq 0 ] && grep -q "^# curves cpu tiny .* steps=5: no gap measured (no correct reduction beside the others)$" wrong.txt' \
    "a wrong reduction alone: no gap, said: $(grep "^# curves" wrong.txt)"
"$ACCUBENCH" report wrong_only.csv --no-charts >/dev/null 2>err.txt
check 'grep -q "^- cpu tiny .* steps=5: no correct reduction ran, so no gap was measured\.$" wrong_only.md' \
    "the report says no gap was measured: $(grep -A4 "Do the correct splits" wrong_only.md)"

gpt="gpt:d=32,layers=2,heads=2,seq=16,vocab=64"
# (at E = 16: its 180 training steps are most of this test's time under ASan)
"$ACCUBENCH" run $common --effective 16 --micro 1,4,16 --model "$gpt" --train-steps 15 --noise-windows 0 --csv gpt.csv \
    >run.txt 2>err.txt
check '[ $? -eq 0 ]' "gpt run exits 0: $(cat err.txt)"
judge "$gpt" gpt.curves.csv
check '[ -z "$(col grad_noise_scale gpt.csv | tr -d "\n")" ]' "--noise-windows 0: no noise pass"

"$ACCUBENCH" plan --noise mlp.csv >plan.txt 2>err.txt
check '[ $? -eq 0 ] && grep -q "^tiny E=64: E is [0-9.e+-]* times the measured noise scale (B_simple [0-9.e+-]* +- [0-9.e+-]* examples, " plan.txt' \
    "plan --noise: $(cat plan.txt err.txt)"
# Its figure is the sum rows' estimates at E = 64 (4x16 and 16x4) pooled
# by noise_pool.h's rule, w_i = 1/err_i^2: the weighted mean, its error
# sum w_i err_i / sum w_i; to the digits printed (3 and 2).
pooled=$(awk -F, '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
    b = $c["grad_noise_scale"]; e = $c["grad_noise_scale_err"]
    if ($c["reduction"] == "sum" && $c["status"] == "ok" && $c["effective_batch"] == 64 &&
        b > 0 && e > 0) { w = 1 / (e * e); sw += w; swb += w * b; swe += w * e; n++ } }
    END { printf "%d %.17g %.17g\n", n, n ? swb / sw : 0, n ? swe / sw : 0 }' mlp.csv)
read -r n pool_b pool_err <<EOF
$pooled
EOF
# a printed figure $1 within a fraction $3 of $2
near() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { exit !(a != "" && a - b <= f * b && b - a <= f * b) }'; }
fig=$(sed -n 's/^tiny E=64: .*(B_simple \([^ ]*\) +- .*/\1/p' plan.txt)
fig_err=$(sed -n 's/^tiny E=64: .*(B_simple [^ ]* +- \([^ ]*\) examples.*/\1/p' plan.txt)
check '[ "$n" -ge 2 ] && near "$fig" "$pool_b" 0.006 && near "$fig_err" "$pool_err" 0.06 &&
       grep -q "^tiny E=64: .* examples, pooled from $n rows); " plan.txt' \
    "plan --noise pools the $n rows of E = 64 ($pool_b +- $pool_err): $(grep "^tiny E=64" plan.txt)"
check '[ $(grep -c assumptions plan.txt) -eq 1 ]' "plan --noise: the caveat once"
"$ACCUBENCH" plan --noise gpt.csv >plan.txt 2>err.txt
check '[ $? -eq 1 ] && grep -q "no noise scale" err.txt' "plan --noise on a run without one: $(cat err.txt)"

for bad in "--noise-windows 1" "--noise-windows -3" "--train-steps x"; do
    "$ACCUBENCH" run --backend cpu --model tiny $bad --csv bad.csv >/dev/null 2>err.txt
    check '[ $? -eq 2 ] && [ $(wc -l <err.txt) -eq 1 ]' "$bad refused in one line: $(cat err.txt)"
done

# A noise that swamps the gradient (tiny at E = 8 over 4 windows): the |G|^2
# estimate comes out negative, and no ratio of it is written as a noise
# scale; the row says why, and the CSV reads back.
"$ACCUBENCH" run --backend cpu --model tiny --effective 8 --micro 2 --noise-windows 4 \
    --budget-s 0.05 --min-samples 2 --trace-steps 0 --csv swamped.csv >/dev/null 2>err.txt
check '[ $? -eq 0 ] && [ -z "$(col grad_noise_scale swamped.csv | tr -d "\n")" ]' \
    "a negative estimate is no noise scale: '$(col grad_noise_scale swamped.csv)' $(cat err.txt)"
check 'grep -q "no noise scale: the |G|^2 estimate is not positive" swamped.csv' "the row says why"
"$ACCUBENCH" report swamped.csv >/dev/null 2>err.txt
check '[ $? -eq 0 ]' "the report reads it: $(cat err.txt)"

# The noise along a curve runs the windows the row's pass ran: at
# micro-batch 1 with padding some windows hold one valid item and do not
# enter the estimate (noise_windows counts those that do), and step 0's
# figure is still the row's own (it was another over fewer windows).
"$ACCUBENCH" run --backend cpu --model tiny --effective 3 --micro 1 --noise-windows 8 \
    --train-steps 2 --steps 3 --warmup 0 --trace-steps 0 --csv sparse.csv >/dev/null 2>err.txt
row_b=$(col grad_noise_scale sparse.csv)
step0_b=$(awk -F, '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
    if ($c["order"] == "forward" && $c["step"] == 0) print $c["grad_noise_scale"] }' sparse.curves.csv)
check '[ -n "$row_b" ] && [ "$(col noise_windows sparse.csv)" -lt 8 ] && [ "$row_b" = "$step0_b" ]' \
    "step 0's noise scale is the row's ($row_b over $(col noise_windows sparse.csv) of 8 windows): $step0_b $(cat err.txt)"

# The curves file is never overwritten unasked, and is written whole.
# $bare where a line names its own split or steps (an option named twice is refused)
bare="--backend cpu --model tiny --effective 8 --noise-windows 0 --budget-s 0.05 --trace-steps 0"
quick="$bare --micro 4 --train-steps 2"
echo keep >again.curves.csv
"$ACCUBENCH" run $quick --csv again.csv >out.txt 2>err.txt
check '[ $? -eq 2 ] && [ "$(cat again.curves.csv)" = keep ] && [ ! -e again.csv ]' \
    "an existing curves file is refused before anything runs: $(cat err.txt)"
"$ACCUBENCH" run $quick --csv again.csv --replace >out.txt 2>err.txt
check '[ $? -eq 0 ] && grep -q "^backend,model" again.curves.csv && [ -z "$(ls | grep tmp)" ]' \
    "--replace replaces it whole: $(cat err.txt)"

# The curves file has the CSV's guarantees (docs/files-and-locks.md).
rows() { grep -vc '^#' "$1"; }
# --append adds to an earlier run's curves (their rows kept, the new ones after)
before=$(rows again.curves.csv)
"$ACCUBENCH" run $bare --micro 2 --train-steps 2 --csv again.csv --append >out.txt 2>err.txt
check '[ $? -eq 0 ] && [ "$(rows again.curves.csv)" -eq $((before + 2 * 2)) ]' \
    "--append adds two curves of 2 steps to the $before rows: $(rows again.curves.csv) $(cat err.txt)"
check '[ "$(col micro_batch again.curves.csv | sort -u | tr "\n" " ")" = "2 4 " ]' \
    "both runs' curves are there: $(col micro_batch again.curves.csv | sort -u | tr '\n' ' ')"
# every key column of a row keys a curve: recompute and shard are columns
"$ACCUBENCH" run $quick --recompute none,gelu --csv keyed.csv >out.txt 2>err.txt
check '[ "$(col recompute keyed.curves.csv | sort -u | tr "\n" " ")" = "gelu none " ]' \
    "the curves carry recompute: $(col recompute keyed.curves.csv | sort -u | tr '\n' ' ') $(cat err.txt)"
check '[ "$(grep -c "^# curves cpu tiny " keyed.curves.csv)" -eq 2 ]' \
    "one summary per recompute value: $(grep '^# curves' keyed.curves.csv)"
# reserved with the other outputs before anything is measured: another
# output at its place, a folder or a FIFO there, an earlier run's file
# without --append or --replace: one line, exit 2, nothing written
mkdir dir.curves.csv
mkfifo fifo.curves.csv
cp again.curves.csv fresh.curves.csv
for args in "--csv t.csv --trace t.curves.csv" "--csv d.csv --dump d.curves.csv" \
            "--csv dir.csv" "--csv fifo.csv" "--csv fresh.csv"; do
    "$ACCUBENCH" run $quick $args >out.txt 2>err.txt
    rc=$?
    csv=$(echo "$args" | sed 's/--csv \([^ ]*\).*/\1/')
    check '[ $rc -eq 2 ] && [ "$(wc -l < err.txt)" -eq 1 ] && ! grep -q "^accubench [0-9]" out.txt' \
        "$args: refused before measuring: exit $rc: $(cat err.txt)"
    check '[ ! -e "$csv" ]' "$args: no CSV left behind"
done
check '[ -p fifo.curves.csv ] && [ -d dir.curves.csv ] && [ ! -e t.curves.csv ]' \
    "a FIFO and a folder at the curves' place are left alone, and no trace was written"
# two runs at once that would write one curves file (--csv c.csv and --csv c):
# the second is refused while the first holds it
"$ACCUBENCH" run $bare --micro 4 --train-steps 1000000 --csv c.csv >first.txt 2>&1 &
first=$!
for _ in $(seq 1 300); do [ -e c.curves.csv.lock ] && break; sleep 0.1; done
"$ACCUBENCH" run $quick --csv c >out.txt 2>err.txt
check '[ $? -eq 2 ] && grep -q "curves" err.txt' "a second run on the same curves is refused: $(cat err.txt)"
# a SIGINT in a long curve is seen at the next step, not at the curve's end
# (a million steps: minutes even here; the limit is for a loaded machine)
t0=$(date +%s)
kill -INT $first
wait $first
rc=$?
check '[ $rc -eq 130 ] && [ $(( $(date +%s) - t0 )) -le 20 ]' \
    "the long curve stopped at once: exit $rc after $(( $(date +%s) - t0 )) s: $(tail -n 2 first.txt)"
check '[ ! -e c.curves.csv ] || [ "$(rows c.curves.csv)" -eq 1 ]' "no half a curve on disk"
# --replace stopped before its first row leaves the CSV and its curves as they were
cp again.csv kept.csv && cp again.curves.csv kept.curves.csv
"$ACCUBENCH" run $bare --micro 4 --train-steps 100000 --csv again.csv --replace >out.txt 2>&1 &
pid=$!
for _ in $(seq 1 300); do grep -q "^config 1 of" out.txt 2>/dev/null && break; sleep 0.1; done
sleep 0.5
kill -INT $pid
wait $pid
check 'cmp -s again.csv kept.csv && cmp -s again.curves.csv kept.curves.csv' \
    "an interrupted --replace keeps both files as they were"
check 'grep -q "^no row written: again.csv is as it was$" out.txt &&
    ! grep -q "rows* written to\|^summary\|measured so far" out.txt' \
    "it says the file is as it was, and offers no summary or report of it: $(tail -n 3 out.txt)"
# A run that trains no curves beside an earlier run's: --append keeps them
# (the earlier rows' own), --replace removes them with the rows they
# belong to, and a fresh run (the CSV gone, its curves left) is refused:
# a report would read them as this run's.
cp kept.csv old.csv && cp kept.curves.csv old.curves.csv
"$ACCUBENCH" run $bare --micro 2 --csv old.csv --append >out.txt 2>err.txt
check '[ $? -eq 0 ] && cmp -s old.curves.csv kept.curves.csv' "--append keeps the curves: $(cat err.txt)"
"$ACCUBENCH" run $bare --micro 2 --csv old.csv --replace >out.txt 2>err.txt
check '[ $? -eq 0 ] && [ ! -e old.curves.csv ] && [ -z "$(ls | grep tmp)" ]' \
    "--replace without --train-steps removes the replaced run's curves: $(ls old*) $(cat err.txt)"
cp kept.curves.csv orphan.curves.csv
"$ACCUBENCH" run $bare --micro 2 --csv orphan.csv >out.txt 2>err.txt
check '[ $? -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "orphan.curves.csv holds an earlier run.s loss curves, which a report would read as this run.s" err.txt &&
    [ ! -e orphan.csv ] && cmp -s orphan.curves.csv kept.curves.csv' \
    "curves without their CSV are refused, nothing written: $(cat err.txt)"
# --replace whose curves cannot be written (the file-size limit, room for
# the CSV's row and not its long curve): the row and its curves are one
# set, so both files stay as they were, the replaced run's rows beside
# their own curves
cp kept.csv gone.csv && cp kept.curves.csv gone.curves.csv
sh -c 'trap "" XFSZ; ulimit -f 24; exec "$0" "$@"' "$ACCUBENCH" run $bare --micro 8 \
    --train-steps 300 --csv gone.csv --replace >out.txt 2>err.txt
check '[ $? -eq 2 ] && cmp -s gone.csv kept.csv && cmp -s gone.curves.csv kept.curves.csv &&
    grep -q "cannot write gone.curves.csv: File too large" err.txt && [ -z "$(ls | grep tmp)" ]' \
    "a failed curves write after --replace's first row keeps both files as they were: $(ls gone*) $(cat err.txt)"
# a run whose second curve finds no room: its row is not kept either, so
# every row on disk has its curve (the row alone would read as a config
# that trained none), and the run says only the curves on disk
sh -c 'trap "" XFSZ; ulimit -f 20; exec "$0" "$@"' "$ACCUBENCH" run $bare --micro 2,4,8 \
    --train-steps 50 --rounds off --csv full.csv >out.txt 2>err.txt
check '[ $? -eq 2 ] && [ "$(col micro_batch full.csv)" = 2 ] &&
    [ "$(col micro_batch full.curves.csv | sort -u)" = 2 ] &&
    grep -q "cannot write full.curves.csv: File too large" err.txt &&
    grep -q "^accubench: 1 of the 2 rows measured is in full.csv" err.txt' \
    "a row is on disk with its curve or not at all: $(col micro_batch full.csv | tr '\n' ' ') / $(col micro_batch full.curves.csv | sort -u | tr '\n' ' ') $(cat err.txt)"
# NAME and NAME.csv share NAME.curves.csv: a run on one never writes or
# removes the curves of the other (--replace on NAME took NAME.csv's away)
cp kept.csv share.csv && cp kept.curves.csv share.curves.csv && cp kept.csv share
for args in "--csv share --replace" "--csv share --append --train-steps 2"; do
    "$ACCUBENCH" run $bare --micro 2 $args >out.txt 2>err.txt
    check '[ $? -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "share.curves.csv is the loss curves file of share.csv too" err.txt &&
        cmp -s share.curves.csv kept.curves.csv && cmp -s share kept.csv' \
        "$args: refused, share.csv's curves kept: $(cat err.txt)"
done
# a micro-batch named twice (an A/A check): its second arm times the step
# and trains no curve of its own (it would be its first arm's again)
"$ACCUBENCH" run --backend cpu --reduction sum --optimizer sgd --lr 1 --steps 1 --warmup 0 \
    --trace-steps 0 --budget-s 0.1 --min-samples 3 --effective 16 --micro 4,4 --model tiny --train-steps 3 \
    --csv aa.csv >aa.txt 2>&1
check '[ $? -eq 0 ]' "an A/A run with curves exits 0: $(tail -n 3 aa.txt)"
check '[ "$(col arm aa.csv | sort | tr "\n" " ")" = "1 2 " ]' "both arms timed"
check '[ "$(col arm aa.curves.csv | sort -u | tr "\n" " ")" = "1 " ]' \
    "the curves are the first arm's alone: $(col arm aa.curves.csv | sort | uniq -c | tr "\n" " ")"
# A comparison timed in rounds trains every member's curve before its
# first row is written: a write that fails between its rows (the file-size
# limit stands in for a full disk, room for two rows: one or two and never
# three, whatever their notes' lengths) keeps the curves of the rows on
# disk, not of the rows that were lost.
split3="--backend cpu --reduction sum --optimizer sgd --lr 1 --warmup 0 --trace-steps 0 \
    --budget-s 0.1 --min-samples 3 --effective 8 --micro 2,4,8 --model tiny --train-steps 2"
"$ACCUBENCH" run $split3 --csv whole.csv --quiet >out.txt 2>err.txt
head_bytes=$(grep -e '^#' -e '^backend,' whole.csv | wc -c)
row_bytes=$(( ($(wc -c <whole.csv) - head_bytes) / 3 ))
sh -c 'trap "" XFSZ; ulimit -f "$1"; shift; exec "$0" "$@"' "$ACCUBENCH" \
    $(( (head_bytes + row_bytes * 2) / 512 )) run $split3 --csv cut.csv --quiet >out.txt 2>err.txt
rc=$?
on_disk=$(col micro_batch cut.csv | sort -n | tr '\n' ' ')
curved=$(col micro_batch cut.curves.csv | sort -nu | tr '\n' ' ')
check "[ $rc -eq 2 ] && [ -n '$on_disk' ] && [ '$on_disk' != '2 4 8 ' ]" \
    "the write fails after a row (rc $rc, rows of micro $on_disk): $(cat err.txt)"
check "[ '$curved' = '$on_disk' ]" \
    "the curves on disk are those of the rows on disk: curves of micro $curved, rows of $on_disk"
exit $fail
