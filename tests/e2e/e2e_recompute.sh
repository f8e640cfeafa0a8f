#!/bin/sh
# --recompute none,gelu,block on a small MLP and a small GPT: every row
# passes the gradient check; the memory need falls as the shape says (the
# GPT of 2 blocks: none > gelu > block; the MLP: none > gelu = block, a
# block of the MLP being one hidden layer, which keeps its z or its h, the
# same bytes); the measured peak follows (block under none); the
# recomputation's FLOPs are a column of their own (0 for none, > 0 for the
# others) and flops_per_step is the same for all three; a kind that cannot
# recompute gets a skipped row with the reason; an unknown value is refused
# with the known ones; plan --find-max-micro answers each value, block's
# micro-batch at least none's; the report gives each value its table.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
col() { awk -F, -v name="$1" '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } print $c }' "$2"; }
line() { col "$1" "$2" | tr '\n' ' '; }

# Three values of a column (the rows none, gelu, block) into a, b, c.
three() { set -- $(line "$1" "$2"); n=$#; a=${1:-}; b=${2:-}; c=${3:-}; }

run() {
    model=$1 csv=$2
    "$ACCUBENCH" run --backend cpu --model "$model" --effective 8 --micro 4 \
        --recompute none,gelu,block --steps 2 --budget-s 0.05 --warmup 0 --trace-steps 0 --noise-windows 0 \
        --csv "$csv" >out.txt 2>err.txt
    check '[ $? -eq 0 ]' "$model runs: $(cat err.txt)"
    check '[ "$(line recompute "$csv")" = "none gelu block " ]' \
        "$model: a row per value: $(line recompute "$csv")"
    check '[ "$(col status "$csv" | sort -u)" = "ok" ]' \
        "$model: every gradient check ok: $(line status "$csv") $(col note "$csv")"
    check '[ "$(col flops_per_step "$csv" | sort -u | wc -l)" -eq 1 ]' \
        "$model: the useful FLOPs are the same: $(line flops_per_step "$csv")"
    three recompute_flops_per_step "$csv"
    check "awk 'BEGIN { exit !(\"$a\" + 0 == 0 && \"$b\" + 0 > 0 && \"$c\" + 0 > 0) }'" \
        "$model: recompute FLOPs 0, > 0, > 0: $a $b $c"
}

run gpt:d=16,layers=2,heads=2,seq=8,vocab=32 gpt.csv
three mem_need_bytes gpt.csv
check '[ $n -eq 3 ] && [ "$a" -gt "$b" ] && [ "$b" -gt "$c" ]' "gpt need none > gelu > block: $a $b $c"
three mem_peak_bytes gpt.csv
check '[ $n -eq 3 ] && [ "$a" -gt "$c" ]' "gpt peak none > block: $a $b $c"
three recompute_flops_per_step gpt.csv
check "awk 'BEGIN { exit !($c > $b) }'" "gpt: block recomputes more than gelu: $a $b $c"

# The report keeps the values apart: a table each, named.
"$ACCUBENCH" report gpt.csv --no-charts >/dev/null 2>err.txt
check '[ $? -eq 0 ] && [ "$(grep -c "^### Effective batch 8: .*sum reduction, recompute \(gelu\|block\) (" gpt.md)" -eq 2 ]' \
    "the report names gelu's and block's tables: $(grep '^### ' gpt.md) $(cat err.txt)"

run mlp:hidden=64,layers=3,classes=8 mlp.csv
three mem_need_bytes mlp.csv
check '[ $n -eq 3 ] && [ "$a" -gt "$b" ] && [ "$b" -eq "$c" ]' "mlp need none > gelu = block: $a $b $c"
three mem_peak_bytes mlp.csv
check '[ $n -eq 3 ] && [ "$a" -gt "$c" ]' "mlp peak none > block: $a $b $c"

# A kind with nothing to recompute: its rows are skipped with the reason,
# none runs, the run exits 0.
"$ACCUBENCH" run --backend cpu --model linear:in=16,classes=4 --effective 4 --micro 4 \
    --recompute none,block --steps 2 --budget-s 0.05 --warmup 0 --trace-steps 0 --noise-windows 0 \
    --csv linear.csv >out.txt 2>err.txt
check '[ $? -eq 0 ]' "linear runs: $(cat err.txt)"
check '[ "$(line status linear.csv)" = "ok skipped " ]' "linear: none ok, block skipped: $(line status linear.csv)"
check 'grep -q "model kind linear cannot recompute block (it can: none)" linear.csv' \
    "the skipped row says why: $(col note linear.csv)"

# An unknown value: exit 2, one line with the known values, nothing run.
mkdir out
"$ACCUBENCH" run --backend cpu --out out --recompute none,blocks >stdout.txt 2>stderr.txt
rc=$?
check '[ $rc -eq 2 ] && [ "$(wc -l <stderr.txt)" -eq 1 ] && [ -z "$(ls out)" ]' \
    "unknown value: exit $rc, $(cat stderr.txt)"
known=$("$ACCUBENCH" --list-values recompute | paste -sd, - | sed 's/,/, /g')
check 'grep -qF "unknown recompute '"'blocks'"' (known: $known)" stderr.txt' \
    "the known values named: $(cat stderr.txt)"

# plan --find-max-micro: an answer per value under a cap; block's
# micro-batch is at least none's, and larger for this GPT.
"$ACCUBENCH" plan --find-max-micro --backend cpu --model gpt:d=64,layers=4,heads=2,seq=64,vocab=256 \
    --mem-cap 40M --effective 256 --recompute none,gelu,block >plan.txt 2>err.txt
check '[ $? -eq 0 ]' "plan runs: $(cat err.txt)"
set -- $(awk '/^largest micro-batch:/ { sub(/,.*/, "", $3); print $3 }' plan.txt)
n=$# a=${1:-} b=${2:-} c=${3:-}
check '[ $n -eq 3 ] && [ "$b" -ge "$a" ] && [ "$c" -gt "$a" ]' "plan micro none <= gelu, none < block: $a $b $c"
check '[ "$(grep -c "^recompute:" plan.txt)" -eq 3 ]' "plan names each value: $(cat plan.txt)"
exit $fail
