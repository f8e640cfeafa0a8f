#!/bin/sh
# tests/run/dump_check.py as a person meets it: no argument or --help gives
# its usage, never a traceback; a dump of a model kind it has no reference
# for is refused by name in one line (exit 2), not checked as a GPT; every
# check ends with a last line PASS or FAIL. With NumPy: an MLP dump passes,
# and the same dump with its loss changed fails (exit 1).
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
dc="$ACCUBENCH_ROOT/tests/run/dump_check.py"

python3 "$dc" >out.txt 2>&1
rc=$?
check "[ $rc -eq 2 ] && grep -q '^usage: dump_check.py DIR' out.txt && ! grep -q Traceback out.txt && tail -n 1 out.txt | grep -q '^FAIL'" \
    "no argument: exit $rc, $(cat out.txt)"
python3 "$dc" --help >out.txt 2>&1
rc=$?
check "[ $rc -eq 0 ] && grep -q '^usage: dump_check.py DIR' out.txt && ! grep -q Traceback out.txt" \
    "--help: exit $rc, $(cat out.txt)"
python3 "$dc" a b >out.txt 2>&1
check "[ $? -eq 2 ] && tail -n 1 out.txt | grep -q '^FAIL.*not 2 arguments'" "two arguments: $(cat out.txt)"
python3 "$dc" missing >out.txt 2>&1
check "[ $? -eq 2 ] && [ \$(wc -l <out.txt) -eq 1 ] && grep -q '^FAIL: missing/manifest.json' out.txt" \
    "no manifest: $(cat out.txt)"

# A kind with no reference here: refused by its name before NumPy is needed.
mkdir other
printf '{"kind": "resmlp", "model": "resmlp:hidden=8,layers=2,classes=4", "tensors": []}\n' \
    >other/manifest.json
python3 "$dc" other >out.txt 2>&1
rc=$?
check "[ $rc -eq 2 ] && [ \$(wc -l <out.txt) -eq 1 ] && grep -q \"^FAIL: .*model kind 'resmlp'\" out.txt && grep -q 'knows mlp' out.txt" \
    "unknown kind: exit $rc, $(cat out.txt)"

if ! python3 -c 'import numpy' 2>/dev/null; then
    echo "note: numpy is not importable; no dump was checked in NumPy"
    exit $fail
fi
"$ACCUBENCH" run --backend cpu --model tiny --effective 5 --micro 2 --steps 2 --warmup 1 \
    --trace-steps 0 --csv dump.csv --dump mdump >/dev/null 2>err.txt
check '[ $? -eq 0 ] && [ -f mdump/manifest.json ]' "mlp dump written: $(cat err.txt)"
python3 "$dc" mdump >out.txt 2>&1
check '[ $? -eq 0 ] && [ "$(tail -n 1 out.txt)" = PASS ]' "the dump holds: $(cat out.txt)"
sed 's/"loss": [0-9.e+-]*/"loss": 9.5/' mdump/manifest.json >m.json && mv m.json mdump/manifest.json
python3 "$dc" mdump >out.txt 2>&1
check '[ $? -eq 1 ] && grep -q "FAILED: loss" out.txt && [ "$(tail -n 1 out.txt)" = FAIL ]' \
    "a changed loss fails: $(cat out.txt)"
exit $fail
