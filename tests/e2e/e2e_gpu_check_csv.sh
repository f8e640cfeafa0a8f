#!/bin/sh
# gpu-check --csv writes each result as it is checked: stopped part-way
# (as a stage timeout stops it), the file already holds every row printed
# so far, whole. Its number arguments are checked like accubench's; its
# --csv is reserved and written as accubench run's is. Runs
# gpu-check on the CPU backend (--device cpu); needs build/gpu-check, which
# is built only where nvcc is; skipped elsewhere.
set -u
check=$(dirname "$ACCUBENCH")/gpu-check
if [ ! -x "$check" ]; then
    echo "SKIP: no $check (built only where nvcc is)"
    exit 0
fi
fail() { echo "FAIL: $*"; exit 1; }

# a bad number: one line, exit 2, nothing written
"$check" --device cpu --seed abc --csv bad.csv >stdout 2>stderr
rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <stderr)" -eq 1 ] && grep -q "seed" stderr ||
    { cat stderr; fail "--seed abc exited $rc"; }
[ ! -e bad.csv ] || fail "--seed abc wrote bad.csv"
"$check" --device tpu >stdout 2>stderr
[ $? -eq 2 ] && grep -q "unknown device 'tpu' (known: cpu, cuda)" stderr ||
    { cat stderr; fail "--device tpu"; }

# eight rounds of fp32: long enough to stop it in the middle
"$check" --device cpu --dtype fp32,fp32,fp32,fp32,fp32,fp32,fp32,fp32 --csv part.csv \
    >out.txt 2>err.txt &
pid=$!
printed=0
for _ in $(seq 1 600); do
    printed=$(grep -c '^\(ok\|FAIL\) ' out.txt)
    [ "$printed" -ge 3 ] && break
    sleep 0.05
done
kill -STOP "$pid" 2>/dev/null || fail "gpu-check ended before it could be stopped"
printed=$(grep -c '^\(ok\|FAIL\) ' out.txt)
grep -q "checks, .* failed" out.txt && fail "gpu-check finished before it was stopped"
kill -KILL "$pid"
kill -CONT "$pid" 2>/dev/null
wait "$pid" 2>/dev/null

[ -f part.csv ] || fail "no part.csv after $printed results were printed"
head -n 1 part.csv | grep -q '^# gpu-check' || fail "part.csv lacks its comment line"
sed -n 2p part.csv | grep -qx 'check,dtype,split,error,tolerance,status,note' ||
    fail "part.csv lacks its header"
rows=$(tail -n +3 part.csv | wc -l)
# each row is written before it is printed: every printed result is there
[ "$rows" -ge 3 ] && [ "$rows" -ge "$printed" ] ||
    { cat part.csv; fail "part.csv has $rows rows; $printed results were printed"; }
bad=$(tail -n +3 part.csv | awk -F, 'NF != 7 || ($6 != "ok" && $6 != "FAIL")' | wc -l)
[ "$bad" -eq 0 ] || { cat part.csv; fail "part.csv has $bad broken rows"; }
echo "ok: stopped after $printed results, part.csv holds $rows rows"

# Reserved as accubench run reserves its CSV: an existing one is refused
# without --replace, a file that is not a gpu-check CSV even with it; both
# left as they were, before anything is checked.
cp part.csv part.before
"$check" --device cpu --dtype fp32 --csv part.csv >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q -- '--replace' err.txt &&
    cmp -s part.csv part.before && ! grep -q '^ok ' out.txt ||
    { cat err.txt; fail "an existing --csv without --replace: exit $rc"; }
printf 'my notes\n' >notes.txt
"$check" --device cpu --dtype fp32 --csv notes.txt --replace >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 2 ] && grep -q 'not a gpu-check CSV' err.txt && [ "$(cat notes.txt)" = "my notes" ] ||
    { cat err.txt; fail "--replace onto a text file: exit $rc"; }
"$check" --device cpu --dtype fp32 --csv part.csv --replace >out.txt 2>err.txt ||
    { cat err.txt; fail "--replace onto a gpu-check CSV: exit $?"; }
[ "$(tail -n +3 part.csv | wc -l)" -eq "$(grep -c '^\(ok\|FAIL\) ' out.txt)" ] ||
    fail "--replace: part.csv does not hold this run's rows alone"

# A disk that fills while the file is written (a file-size limit, its
# signal ignored: the write fails as on a full disk): the file on disk is
# whole, every line ended, or absent; the failure is said.
(trap '' XFSZ; ulimit -f 1; exec "$check" --device cpu --dtype fp32 --csv full.csv) \
    >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 1 ] && grep -q 'cannot write' err.txt || { cat err.txt; fail "a full disk: exit $rc"; }
if [ -e full.csv ]; then
    [ -z "$(tail -c 1 full.csv)" ] || fail "full.csv ends mid-line: $(tail -c 40 full.csv)"
    bad=$(tail -n +3 full.csv | awk -F, 'NF != 7' | wc -l)
    [ "$bad" -eq 0 ] || fail "full.csv has $bad cut rows"
fi
echo "ok: gpu-check --csv reserved first, whole on a full disk"
