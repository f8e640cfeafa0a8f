#!/bin/sh
# The GPT on the CPU: the gradient accumulated over 16 = 16x1, 4x4, 1x16
# is the full batch's, kernels per step grow with K, and mean-of-means is
# visibly off on token data with documents of different lengths; malformed
# shapes are refused in one line; plan --find-max-micro probes GPT shapes;
# --dump refuses a taken directory before measuring, and the dump it writes
# holds up in NumPy (tests/run/dump_check.py; skipped where numpy is absent);
# ACCUBENCH_CPU_ATTENTION=unfused runs the unfused attention, and
# --list-attention names each backend's other arrangement.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
col() { awk -F, -v name="$1" '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } print $c }' "$2"; }

"$ACCUBENCH" run --backend cpu --model gpt-tiny --effective 16 --micro 16,4,1 \
    --reduction sum,mean-of-means --budget-s 0.2 --min-samples 3 --trace-steps 1 --max-step-s 600 \
    --csv gpt.csv >run.txt 2>err.txt
check '[ $? -eq 0 ]' "gpt-tiny run exits 0: $(cat err.txt)"
check '[ "$(col micro_batch gpt.csv | tr "\n" " ")" = "1 1 4 4 16 16 " ]' "six rows"
check '[ "$(col status gpt.csv | sort -u)" = "ok" ]' "all ok: $(col status gpt.csv | tr '\n' ' ')"
errs=$(awk -F, '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) { if ($i == "grad_rel_err") e = i; if ($i == "reduction") r = i; if ($i == "micro_batch") m = i } h = 1; next } print $m ":" $r "=" $e }' gpt.csv)
for row in $errs; do
    e=${row#*=}
    case $row in
    *:sum=*) check "awk 'BEGIN { exit !($e < 1e-5) }'" "sum: $row under 1e-5" ;;
    16:*) check "awk 'BEGIN { exit !($e < 1e-5) }'" "one micro-batch is the full batch: $row" ;;
    *) check "awk 'BEGIN { exit !($e > 1e-3) }'" "mean-of-means visibly off: $row" ;;
    esac
done
k=$(awk -F, '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) { if ($i == "kernels_per_step") c = i; if ($i == "reduction") r = i } h = 1; next } if ($r == "sum") print $c }' gpt.csv | tr "\n" " ")
check "echo $k | awk '{ exit !(\$1 > \$2 && \$2 > \$3 && \$3 > 0) }'" "kernels per step shrink as K does (K = 16, 4, 1): $k"
for v in $(col mfu_pct gpt.csv) $(col flops_per_step gpt.csv); do
    check "awk 'BEGIN { exit !($v > 0) }'" "mfu and flops > 0: $v"
done

# The unfused attention (what CUDA runs) on the CPU: the same gradients,
# the same FLOPs credited, and the CSV says which ran.
ACCUBENCH_CPU_ATTENTION=unfused "$ACCUBENCH" run --backend cpu --model gpt-tiny --effective 16 \
    --micro 4 --budget-s 0.2 --min-samples 3 --trace-steps 0 --csv unfused.csv >/dev/null 2>err.txt
check '[ $? -eq 0 ] && grep -q "^# attention: unfused" unfused.csv && grep -q "^# attention: fused" gpt.csv' \
    "ACCUBENCH_CPU_ATTENTION=unfused runs and says so: $(cat err.txt)"
e=$(col grad_rel_err unfused.csv)
check "awk 'BEGIN { exit !($e < 1e-5) }'" "unfused: the accumulated gradient is the full batch's: $e"
check '[ "$(col flops_per_step unfused.csv)" = "$(col flops_per_step gpt.csv | head -1)" ]' \
    "the same FLOPs a step fused or not"
ACCUBENCH_CPU_ATTENTION=flash "$ACCUBENCH" run --backend cpu --model gpt-tiny --effective 4 \
    --csv flash.csv >/dev/null 2>err.txt
check '[ $? -eq 2 ] && [ $(wc -l <err.txt) -eq 1 ] && grep -q "ACCUBENCH_CPU_ATTENTION=.flash." err.txt && [ ! -e flash.csv ]' \
    "ACCUBENCH_CPU_ATTENTION=flash: one line, exit 2, no CSV: $(cat err.txt)"
# The setting of each arrangement a backend does not run by default, as
# the program states it for check_gpu.sh (the CPU's is the unfused run
# above); an unknown backend is refused in one line.
check '[ "$("$ACCUBENCH" --list-attention cpu)" = ACCUBENCH_CPU_ATTENTION=unfused ]' \
    "--list-attention cpu: $("$ACCUBENCH" --list-attention cpu 2>&1)"
check '[ "$("$ACCUBENCH" --list-attention cuda)" = ACCUBENCH_CUDA_ATTENTION=fused ]' \
    "--list-attention cuda: $("$ACCUBENCH" --list-attention cuda 2>&1)"
"$ACCUBENCH" --list-attention gpu >out.txt 2>err.txt
check '[ $? -eq 2 ] && [ ! -s out.txt ] && [ $(wc -l <err.txt) -eq 1 ] && grep -q "unknown backend .gpu." err.txt' \
    "--list-attention gpu: one line, exit 2: $(cat err.txt)"

# The report gives the GPT's throughput in tokens/s, the CSV's figure.
"$ACCUBENCH" report gpt.csv --no-charts >/dev/null 2>err.txt
check '[ $? -eq 0 ] && grep -q "| tokens/s |" gpt.md && ! grep -q "| samples/s |" gpt.md' \
    "the report's gpt tables in tokens/s: $(cat err.txt)"
tps=$(awk -F, '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) { if ($i == "tokens_per_s") t = i; if ($i == "micro_batch") m = i; if ($i == "reduction") r = i } h = 1; next } if ($m == 16 && $r == "sum") print $t }' gpt.csv)
cell=$(grep -m 1 '^| 16x1 ' gpt.md | awk -F'|' '{ gsub(/ /, "", $8); print $8 }')
check "awk 'BEGIN { a = $cell + 0; b = $tps + 0; exit !(b > 0 && a - b <= 6e-4 * b && b - a <= 6e-4 * b) }'" \
    "the report's 16x1 tokens/s ($cell) is the CSV's ($tps)"

# Malformed shapes: one line naming the shape, exit 2, nothing measured.
mkdir out
bad() {
    "$ACCUBENCH" run --backend cpu --out out --model "$1" >stdout.txt 2>stderr.txt
    rc=$?
    check "[ $rc -eq 2 ] && [ \$(wc -l <stderr.txt) -eq 1 ] && grep -qF -- \"$2\" stderr.txt && grep -qF -- '$1' stderr.txt && [ -z \"\$(ls out)\" ]" \
        "--model $1: exit $rc, $(cat stderr.txt)"
}
bad gpt:d=64,layers=2,heads=5,seq=32,vocab=512 "heads=5 does not divide d=64"
bad gpt:d=0,layers=2,heads=1,seq=32,vocab=512 "d must be between 1 and 65536"
bad gpt:d=64,layers=2,heads=4,seq=0,vocab=512 "seq must be between 1 and 32768"
bad gpt:d=65536,layers=96,heads=1,seq=32768,vocab=2097152 "parameters; at most 2^40"
bad gpt:d=64,layers=2,heads=4,seq=32 "gives no vocab"

# plan --find-max-micro on a GPT shape under a cap: the answer's need fits
# the cap and one more sequence would not.
"$ACCUBENCH" plan --find-max-micro --model gpt-tiny --effective 256 --mem-cap 64M \
    --backend cpu >probe.txt 2>&1
check '[ $? -eq 0 ]' "find-max-micro gpt-tiny exits 0: $(cat probe.txt)"
micro=$(sed -n 's/^largest micro-batch: \([0-9]*\).*/\1/p' probe.txt)
check '[ -n "$micro" ] && [ "$micro" -gt 1 ] && [ "$micro" -lt 256 ]' "find-max-micro found $micro"
"$ACCUBENCH" plan --find-max-micro --model gpt-small --mem-cap 1G --max-micro 16 --backend cpu \
    >/dev/null 2>err.txt
check '[ $? -eq 1 ] && [ $(wc -l <err.txt) -eq 1 ]' "gpt-small under 1G: exit 1, one line: $(cat err.txt)"

# --dump: a file or a non-empty directory is refused before anything runs.
touch taken
mkdir full && touch full/x
for target in taken full; do
    "$ACCUBENCH" run --backend cpu --model gpt-tiny --effective 2 --micro 1 --out out \
        --dump $target >stdout.txt 2>stderr.txt
    rc=$?
    check "[ $rc -eq 2 ] && [ \$(wc -l <stderr.txt) -eq 1 ] && grep -q -- '--dump $target' stderr.txt && [ -z \"\$(ls out)\" ]" \
        "--dump $target refused: exit $rc, $(cat stderr.txt)"
done
# The dumps: a GPT with an uneven split and the MLP.
"$ACCUBENCH" run --backend cpu --model gpt:d=16,layers=2,heads=2,seq=8,vocab=64 --effective 5 \
    --micro 2 --budget-s 0.1 --min-samples 2 --trace-steps 0 --csv dump.csv --dump gdump \
    >/dev/null 2>err.txt
check '[ $? -eq 0 ] && [ -f gdump/manifest.json ]' "gpt dump written: $(cat err.txt)"
check 'grep -q "\"split\": \[2, 2, 1\]" gdump/manifest.json' "the split in the manifest"
check '[ -z "$(ls | grep tmp)" ]' "no temporary left: $(ls)"
"$ACCUBENCH" run --backend cpu --model tiny --effective 10 --micro 3 --budget-s 0.1 \
    --min-samples 2 --trace-steps 0 --csv dump2.csv --dump mdump >mdump.txt 2>err.txt
check '[ $? -eq 0 ] && [ -f mdump/manifest.json ]' "mlp dump written: $(cat err.txt)"
check 'grep -q "^1 row written to dump2.csv" mdump.txt' "one row, said in the singular: $(tail -n 1 mdump.txt)"
# Throughput in tokens for the GPT (every position of its seq=8), none for
# the MLP; the console says tok/s for the GPT; the MLP's 10 = 3+3+3+1 is
# written so in the console and the note.
check "awk 'BEGIN { t = $(col tokens_per_s dump.csv) + 0; s = $(col samples_per_s dump.csv) + 0; d = t - 8 * s; exit !(s > 0 && d * d < 1e-6 * t * t) }'" \
    "gpt tokens_per_s $(col tokens_per_s dump.csv) = 8 x samples_per_s $(col samples_per_s dump.csv)"
check '[ -z "$(col tokens_per_s dump2.csv)" ]' "no tokens_per_s for the MLP: $(col tokens_per_s dump2.csv)"
check 'grep -q "tok/s" run.txt && ! grep -q "samp/s" run.txt' "the gpt console rows in tok/s: $(cat run.txt)"
check 'grep -q " K=4: 3+3+3+1 " mdump.txt' "the console writes 10 as K=4: 3+3+3+1: $(cat mdump.txt)"
check '[ "$(col note dump2.csv | cut -c1-18)" = "split K=4: 3+3+3+1" ]' "the note too: $(col note dump2.csv)"

# The CSV's loss is the manifest's (the window's, normalised), and its
# loss_sum the manifest's sum.
for pair in gdump:dump.csv mdump:dump2.csv; do
    d=${pair%%:*} csv=${pair#*:}
    for key in loss loss_sum; do
        want=$(sed -n "s/.*\"$key\": \([^,]*\),.*/\1/p" $d/manifest.json)
        got=$(col $key $csv)
        check "awk 'BEGIN { w = $want + 0; g = $got + 0; exit !(w > 0 && g - w < 1e-5 * w && w - g < 1e-5 * w) }'" \
            "$csv's $key ($got) is $d's manifest's ($want)"
    done
done
. "$ACCUBENCH_ROOT/tests/e2e/numpy_python.sh"
if [ -n "$np_py" ]; then
    for d in gdump mdump; do
        "$np_py" "$ACCUBENCH_ROOT/tests/run/dump_check.py" $d >check.txt 2>&1
        check '[ $? -eq 0 ]' "$d holds up in numpy: $(cat check.txt)"
    done
else
    echo "note: numpy is not importable; the dumps were not checked in NumPy"
fi
exit $fail
