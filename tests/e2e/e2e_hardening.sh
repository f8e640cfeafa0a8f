#!/bin/sh
# Files and ranks under hostile conditions: one lock for every writer of a
# CSV (the PyTorch peer's writer too), no link followed when a lock or a
# temporary is made, no CSV overwritten unasked, colliding outputs refused
# before measuring, every rank ended by a signal to one.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
root=${ACCUBENCH_ROOT:?}
py=${PYTHON:-python3}
export PYTHONDONTWRITEBYTECODE=1
# $bare where a line names its own model or split (an option named twice is refused)
bare="--backend cpu --effective 8 --budget-s 0.05 --min-samples 3 --trace-steps 0 --quiet"
quick="$bare --model tiny --micro 4,8"
rows() { grep -v '^#' "$1" | tail -n +2 | grep -c .; }
# peer_rows CSV: the peer's CSV writer adds 3 torch rows to CSV (exit 2 when refused)
peer_rows() {
    "$py" - "$root" "$1" <<'PY'
import sys
sys.path.insert(0, sys.argv[1] + "/bench/peers")
import peer_csv
try:
    t = peer_csv.CsvTarget(sys.argv[2], sys.argv[1], [], [("peers", "torch")])
except peer_csv.CsvRefused as e:
    print("torch_accum: %s" % e, file=sys.stderr)
    sys.exit(2)
for m in (1, 2, 3):
    t.append({"backend": "torch", "model": "tiny", "micro_batch": m, "status": "ok"})
t.close()
PY
}

# ---- 1. one lock for every writer
"$py" "$root/tests/peers/test_peer_csv.py" >unit.out 2>&1
check "tail -n 1 unit.out | grep -q '^OK'" "tests/peers/test_peer_csv.py: $(tail -n 20 unit.out)"
# The peer while a run writes the file: refused, or its rows kept; the
# run's rows kept either way.
"$ACCUBENCH" run --backend cpu --model tiny --effective 64 --micro 1,2,4,8,16 --budget-s 0.3 \
    --min-samples 3 --trace-steps 0 --quiet --csv both.csv >/dev/null 2>run.err &
pid=$!
n=0
while [ ! -e both.csv.lock ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
peer_rows both.csv 2>peer.err
prc=$?
wait $pid
check "[ $? -eq 0 ]" "the run beside the peer: $(cat run.err)"
check "[ \$(grep -c '^cpu,' both.csv) -eq 5 ]" "the run's 5 rows survive the peer"
if [ $prc -eq 2 ]; then
    check "grep -q 'being written by another run (pid $pid)' peer.err" \
        "the peer's refusal names the run: $(cat peer.err)"
else
    check "[ \$(grep -c '^torch,' both.csv) -eq 3 ]" "the peer said it wrote, and its rows are gone"
fi
peer_rows both.csv 2>peer.err
check "[ $? -eq 0 ] && [ \$(grep -c '^torch,' both.csv) -eq 3 ] && [ \$(grep -c '^cpu,' both.csv) -eq 5 ]" \
    "the peer after the run: both writers' rows"
check "[ ! -e both.csv.lock ]" "the peer's lock is removed"

# ---- 2. no link followed: a planted lock link is refused, its target kept
echo precious >victim
ln -s victim link.csv.lock
# shellcheck disable=SC2086
"$ACCUBENCH" run $quick --csv link.csv >out.txt 2>err.txt
rc=$?
check "[ $rc -eq 2 ] && [ \$(wc -l <err.txt) -eq 1 ] && grep -q 'symbolic link' err.txt" \
    "a planted lock link: one line, exit 2 (got $rc: $(cat err.txt))"
check "[ \"\$(cat victim)\" = precious ] && [ ! -e link.csv ]" "the lock link's target is kept"

# ---- 3. no silent overwrite: an existing --csv needs --append or --replace
# shellcheck disable=SC2086
"$ACCUBENCH" run $bare --model tiny --micro 1,2 --csv ow.csv >/dev/null 2>&1
cp ow.csv ow.before
# shellcheck disable=SC2086
"$ACCUBENCH" run $bare --model tiny --micro 4 --csv ow.csv >out.txt 2>err.txt
rc=$?
check "[ $rc -eq 2 ] && [ \$(wc -l <err.txt) -eq 1 ] && grep -q -- '--append' err.txt" \
    "an existing --csv: one line, exit 2 (got $rc: $(cat err.txt))"
check "cmp -s ow.csv ow.before" "the refused run left the file as it was"
# shellcheck disable=SC2086
"$ACCUBENCH" run $bare --model tiny --micro 4 --csv ow.csv --append >/dev/null 2>err.txt
check "[ $? -eq 0 ] && [ \$(rows ow.csv) -eq 3 ]" "--append: the 2 rows and 1 more ($(cat err.txt))"
check "[ \$(grep -c '^# backend: ' ow.csv) -eq 1 ]" "--append: one metadata line per key"
cp ow.csv ow.before
# shellcheck disable=SC2086
"$ACCUBENCH" run $bare --model tiny --micro 4 --csv ow.csv --append --optimizer sgd >/dev/null 2>err.txt
rc=$?
check "[ $rc -eq 2 ] && grep -q 'not comparable' err.txt && cmp -s ow.csv ow.before" \
    "--append onto other settings: refused, file kept (got $rc: $(cat err.txt))"
# the seed sets the weights and the examples, and no row says it
# shellcheck disable=SC2086
"$ACCUBENCH" run $bare --model tiny --micro 4 --csv ow.csv --append --seed 7 >/dev/null 2>err.txt
rc=$?
check "[ $rc -eq 2 ] && grep -q \"(seed is '1' there, '7' here)\" err.txt && cmp -s ow.csv ow.before" \
    "--append with another --seed: refused, file kept (got $rc: $(cat err.txt))"
# where the optimizer runs changes every step's time and no row says it:
# the file's one optimizer_at line would name this run's for the old rows
# shellcheck disable=SC2086
"$ACCUBENCH" run $bare --model tiny --micro 4 --csv ow.csv --append --optimizer-at step >/dev/null 2>err.txt
rc=$?
check "[ $rc -eq 2 ] && grep -q 'optimizer_at is' err.txt && cmp -s ow.csv ow.before" \
    "--append with another --optimizer-at: refused, file kept (got $rc: $(cat err.txt))"
# the same placement asked for by name is the same setting
# shellcheck disable=SC2086
"$ACCUBENCH" run $bare --model tiny --micro 8 --csv ow.csv --append --optimizer-at backward >/dev/null 2>err.txt
check "[ $? -eq 0 ] && [ \$(rows ow.csv) -eq 4 ]" "--append --optimizer-at backward onto auto's backward: added ($(cat err.txt))"
# the GEMM's threads change every step's time and no row says them either
cp ow.csv ow.before
# shellcheck disable=SC2086
other=$([ "$(nproc)" -eq 1 ] && echo 2 || echo 1) # not the default (every core)
ACCUBENCH_CPU_THREADS=$other "$ACCUBENCH" run $bare --model tiny --micro 4 --csv ow.csv --append >/dev/null 2>err.txt
rc=$?
check "[ $rc -eq 2 ] && grep -q 'library is' err.txt && grep -q \"threads $other\" err.txt && cmp -s ow.csv ow.before" \
    "--append on other threads: refused, file kept (got $rc: $(cat err.txt))"
# --append and --replace are one setting: the command line's overrides a
# profile's, as every option does
printf 'append = 1\n' >append.profile
# shellcheck disable=SC2086
"$ACCUBENCH" run $bare --profile ./append.profile --model tiny --micro 4 --csv ow.csv --replace >/dev/null 2>err.txt
check "[ $? -eq 0 ] && [ \$(rows ow.csv) -eq 1 ]" "--replace over a profile's append = 1: replaced ($(cat err.txt))"
printf 'some notes\n\n# not a CSV\n' >notes.txt
# shellcheck disable=SC2086
"$ACCUBENCH" run $bare --model tiny --micro 4 --csv notes.txt --append >/dev/null 2>err.txt
check "[ $? -eq 2 ] && [ \"\$(cat notes.txt)\" = \"\$(printf 'some notes\n\n# not a CSV')\" ]" \
    "--append onto a text file: refused, file kept ($(cat err.txt))"
# shellcheck disable=SC2086
"$ACCUBENCH" run $bare --model tiny --micro 4 --csv notes.txt --replace >/dev/null 2>err.txt
check "[ $? -eq 2 ] && grep -q 'not an accubench CSV' err.txt && [ \"\$(head -n 1 notes.txt)\" = 'some notes' ]" \
    "--replace onto a text file: refused, file kept ($(cat err.txt))"
# a loss-curves file has backend and model columns too, and is no CSV of
# results: refused, kept
printf '# accubench loss curves: x\nbackend,model,dtype,step,loss\ncpu,tiny,fp32,0,2.7\n' >c.curves.csv
cp c.curves.csv c.before
# shellcheck disable=SC2086
"$ACCUBENCH" run $bare --model tiny --micro 4 --csv c.curves.csv --replace >/dev/null 2>err.txt
check "[ $? -eq 2 ] && grep -q 'not an accubench CSV' err.txt && cmp -s c.curves.csv c.before" \
    "--replace onto a loss-curves file: refused, file kept ($(cat err.txt))"
# a header and no row (a run stopped before its first): nothing to lose,
# written without --append or --replace
grep '^#\|^backend' ow.csv >header.csv
# shellcheck disable=SC2086
"$ACCUBENCH" run $bare --model tiny --micro 4 --csv header.csv >/dev/null 2>err.txt
check "[ $? -eq 0 ] && [ \$(rows header.csv) -eq 1 ]" "a header alone is written over ($(cat err.txt))"
# plan --recommend's measuring run follows run's rules: an existing run
# CSV refused without a word (not replaced by the plan's rows), a text
# file refused whatever it is told, both before anything is measured; with
# no --csv, a new name each time (whether or not a configuration fits: exit
# 0 or 1).
cp ow.csv ow.before
plan="plan --recommend --backend cpu --effective 8 --model tiny --mem-cap 90M --budget-s 0.05"
# shellcheck disable=SC2086
"$ACCUBENCH" $plan --csv ow.csv >out.txt 2>err.txt
check "[ $? -eq 2 ] && [ \$(wc -l <err.txt) -eq 1 ] && grep -q -- '--append' err.txt && cmp -s ow.csv ow.before && ! grep -q 'rows written' out.txt" \
    "plan --recommend onto a run's CSV: refused before measuring, file kept ($(cat err.txt))"
# shellcheck disable=SC2086
"$ACCUBENCH" $plan --csv notes.txt --replace >out.txt 2>err.txt
check "[ $? -eq 2 ] && grep -q 'not an accubench CSV' err.txt && [ \"\$(head -n 1 notes.txt)\" = 'some notes' ]" \
    "plan --recommend --replace onto a text file: refused, file kept ($(cat err.txt))"
mkdir -p planned
# shellcheck disable=SC2086
(cd planned && { "$ACCUBENCH" $plan >/dev/null 2>&1; "$ACCUBENCH" $plan >/dev/null 2>../err.txt; })
check "[ \$(ls planned/results/*.csv | wc -l) -eq 2 ]" \
    "plan --recommend without --csv: a new file each time ($(ls planned/results); $(cat err.txt))"
# --replace starts it again, but only once a row is measured.
# shellcheck disable=SC2086
"$ACCUBENCH" run --backend cpu --model S --effective 64 --micro 1,2,4 --budget-s 1 --trace-steps 0 \
    --quiet --csv ow.csv --replace >/dev/null 2>&1 &
pid=$!
sleep 0.3
kill -TERM $pid
wait $pid
rc=$?
check "[ $rc -eq 143 ] && cmp -s ow.csv ow.before" "--replace stopped before a row: the old file kept (rc $rc)"
# shellcheck disable=SC2086
"$ACCUBENCH" run $bare --model tiny --micro 8 --csv ow.csv --replace >/dev/null 2>err.txt
check "[ $? -eq 0 ] && [ \$(rows ow.csv) -eq 1 ]" "--replace: this run's row alone ($(cat err.txt))"
# an append timed otherwise keeps the earlier run's timing and command
# beside its own: the file's one line would speak for every row
# shellcheck disable=SC2086
"$ACCUBENCH" run $bare --model tiny --micro 4 --warmup 0 --csv ow.csv --append >/dev/null 2>err.txt
check "[ $? -eq 0 ] && grep -q '^# timing: warmup 0; .* | an earlier run of this file: warmup [1-9]' ow.csv &&
    grep -q '^# command: accubench run .* --micro 4 --warmup 0 .* | an earlier run of this file: accubench run .* --micro 8 ' ow.csv" \
    "--append keeps the earlier run's timing and command: $(grep '^# timing\|^# command' ow.csv) $(cat err.txt)"

# ---- 4. outputs at one place: refused before measuring, exit 2, one line
mkdir -p empty sub
ln -s empty dumplink
for bad in "--csv c1.csv --trace c1.csv" "--csv c2.csv --trace ./c2.csv.lock" \
           "--csv c3.csv --dump c3.csv" "--csv sub/c4.csv --dump sub" "--out o5 --dump o5" \
           "--csv c6.csv --trace t6.json --dump t6.json" "--csv c7.csv --dump dumplink"; do
    # shellcheck disable=SC2086
    "$ACCUBENCH" run --backend cpu --model tiny --effective 8 --micro 4 --budget-s 0.05 \
        --min-samples 3 $bad >out.txt 2>err.txt
    rc=$?
    check "[ $rc -eq 2 ] && [ \$(wc -l <err.txt) -eq 1 ]" "$bad: one line, exit 2 (got $rc: $(cat err.txt))"
    check "! grep -q 'peak GEMM' out.txt" "$bad: refused before measuring"
done
check "[ ! -e c1.csv ] && [ ! -e c3.csv ] && [ ! -e o5 ] && [ -z \"\$(ls empty)\$(ls sub)\" ]" \
    "nothing written by the refused runs"

# ---- 6. no command from data: make's knobs, the working directory's files, an SVG beside the CSV
mkdir -p mk
for target in plots report; do
    # -o: the program is not rebuilt here (the name is refused before it runs)
    make -s -C "$root" -o build/accubench "$target" \
        CSV="$PWD/mk/\$(shell touch $PWD/PWNED-$target).csv" >make.out 2>&1
    check "[ ! -e PWNED-$target ]" "make $target CSV='...\$(shell touch ...)' ran the command"
    check "grep -q 'cannot read' make.out" "make $target: the name is read as a name: $(cat make.out)"
done
# Every knob that reaches a shell is data: a profile's name, a count, a
# folder. A count is checked (one line, exit 2); the rest reach the program,
# which refuses a profile it does not have. CHECK_SKIP_BUILD and CHECK_ONLY
# keep a check-gpu that did run short; QUICK=2 is refused before it would.
knob_case() { # TARGET VAR VALUE WANT: make TARGET VAR=VALUE fails, saying WANT
    CHECK_SKIP_BUILD=1 CHECK_ONLY=none make -s -C "$root" -o build/accubench "$1" "$2=$3" \
        $([ "$1" = check-gpu ] && echo QUICK=2) >make.out 2>&1
    rc=$?
    # not through check's eval: the value is code to a shell that evaluates it
    [ -e PWNED ] && { echo "FAILED: make $1 $2='$3' ran the command"; fail=1; }
    [ $rc -eq 2 ] && grep -qF -- "$4" make.out ||
        { echo "FAILED: make $1 $2='$3': exit 2 saying '$4' (got $rc: $(head -n 3 make.out))"; fail=1; }
    rm -f PWNED
}
knob_case bench-dp DP_PROFILE "x;touch $PWD/PWNED;#" "unknown profile 'x;touch"
knob_case bench-dp DP_DEVICES "1\$(shell touch $PWD/PWNED)" "make: DP_DEVICES=1\$(shell"
knob_case bench-dp DP_RANKS "\`touch $PWD/PWNED\`" "make: DP_RANKS=\`touch"
knob_case bench-dp DP_DEVICES "1,3" "make: DP_DEVICES=1,3: 3 devices need 3 ranks; DP_RANKS is 2"
knob_case bench PROFILE "\`touch $PWD/PWNED\`" "unknown profile '\`touch"
knob_case check-gpu CHECK_OUT "\`touch $PWD/PWNED\`" "make: QUICK=2: not 0 or 1"
# No knob is exported either (make would expand it for any recipe's
# environment): every one at once, on the smallest recipe.
set --
for k in $(make -s -C "$root" print-KNOBS); do set -- "$@" "$k=\$(shell touch $PWD/PWNED)"; done
make -s -C "$root" print-CC "$@" >make.out 2>&1
check "[ $# -gt 10 ] && [ ! -e PWNED ]" "a knob given to make is expanded for a recipe's environment"
rm -f PWNED
make -s -C "$root" print-CC BUILD="b\$(shell touch $PWD/PWNED)" >make.out 2>&1
check "[ $? -eq 2 ] && [ ! -e PWNED ] && grep -q 'a folder name of' make.out" \
    "make BUILD='b\$(shell ...)' is refused before it runs: $(cat make.out)"
rm -f PWNED
# The build knobs are make code where they are used: each is checked as
# text first (a switch 0 or 1, a path or flags plain characters), and any
# other variable given to make is not exported for a recipe to expand.
for kv in "VERBOSE=|0 or 1" "DEBUG=1|0 or 1" "WERROR=|0 or 1" "ACCUBENCH_NO_INSTALL=|0 or 1" \
    "CUDA_HOME=/usr/|a folder name of" "NVCC_GENCODE=-gencode |nvcc's -gencode flags" "MODEL=|"; do
    var=${kv%%|*} want=${kv#*|}
    make -s -C "$root" print-CC "$var\$(shell touch $PWD/PWNED)" >make.out 2>&1
    rc=$?
    [ -e PWNED ] && { echo "FAILED: make ${var}'\$(shell ...)' ran the command"; fail=1; }
    if [ -n "$want" ]; then
        [ $rc -eq 2 ] && grep -qF -- "$want" make.out ||
            { echo "FAILED: make ${var}'\$(shell ...)': exit 2 saying '$want' (got $rc: $(cat make.out))"; fail=1; }
    fi
    rm -f PWNED
done
# a knob's newline would end its recipe line, the rest run as a command
make -s -C "$root" -o build/accubench report CSV="x
touch $PWD/PWNED
y" >make.out 2>&1
check "[ $? -eq 2 ] && [ ! -e PWNED ] && grep -q 'CSV: one line' make.out" \
    "make report CSV='x<newline>touch ...' is refused before it runs: $(cat make.out)"
rm -f PWNED
# make -f TREE/Makefile from another folder: the recipes' relative paths
# would name that folder's scripts/ (and build/): refused before any runs.
mkdir -p elsewhere/scripts
for s in configure plots pick_csv bench; do
    printf 'touch "%s/PWNED"\n' "$PWD" >"elsewhere/scripts/$s.sh"
done
(cd elsewhere && make -f "$root/Makefile" plots CSV=x.csv >../make.out 2>&1)
rc=$?
check "[ $rc -eq 2 ] && [ ! -e PWNED ] && [ ! -e elsewhere/build ] && grep -q 'make -C' make.out" \
    "make -f from another folder is refused before it runs that folder's scripts (rc $rc): $(head -n 2 make.out)"
rm -f PWNED

# The program's own scripts and profiles come from beside it, never from
# the folder it runs in: a planted scripts/plots.sh is not run, a planted
# profiles/quick.profile (which could name any file as its csv) not read;
# a profile named by its path is still the file named.
mkdir -p planted/scripts planted/profiles
printf 'touch "%s/PWNED"\n' "$PWD" >planted/scripts/plots.sh
cp "$root/tests/fixtures/abc.csv" planted/r.csv
echo precious >victim.txt
printf 'model = tiny\neffective = 4\nmicro = 4\ncsv = %s/victim.txt\nreplace = yes\n' "$PWD" \
    >planted/profiles/quick.profile
(cd planted && env -u ACCUBENCH_ROOT "$ACCUBENCH" report r.csv >/dev/null 2>&1)
check "[ ! -e PWNED ]" "report ran the working directory's scripts/plots.sh"
(cd planted && env -u ACCUBENCH_ROOT "$ACCUBENCH" run --profile quick --backend cpu \
    --effective 16 --micro 16 --budget-s 0.05 --trace-steps 0 --quiet --out out >/dev/null 2>../err.txt)
check "[ \"\$(cat victim.txt)\" = precious ] && grep -q '^# profile: quick' planted/out/*.csv" \
    "run --profile quick read the working directory's profiles/quick.profile: $(cat err.txt)"
(cd planted && env -u ACCUBENCH_ROOT "$ACCUBENCH" run --profile profiles/quick.profile \
    --backend cpu --csv own.csv --budget-s 0.05 --trace-steps 0 --quiet >/dev/null 2>../err.txt)
check "grep -q '^cpu,.*,tiny,.*,4,4,1,' planted/own.csv" "a profile named by its path is read: $(cat err.txt)"

cp "$root/tests/fixtures/abc.csv" mk/run.csv
printf '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg><p>after</p>\n' \
    >mk/run.throughput.svg
"$ACCUBENCH" report mk/run.csv --no-charts >/dev/null 2>err.txt
check "[ $? -eq 0 ] && ! grep -qi 'onload\|<script\|<p>after' mk/run.html" \
    "a planted SVG is not copied into the HTML: $(grep -io 'onload.\{0,20\}\|<script' mk/run.html | head -n 2)"
check "grep -q 'not a plain chart' mk/run.html" "the refused chart is said to be missing"

# ---- 7. bounded on hostile sizes: 300000 header columns, one a duplicate
awk 'BEGIN { for (i = 1; i <= 300000; i++) printf "%sc%d", (i > 1 ? "," : ""), (i == 300000 ? 5 : i); print "" }' >wide.csv
timeout 20 "$ACCUBENCH" report wide.csv --no-charts >/dev/null 2>err.txt
rc=$?
check "[ $rc -eq 2 ] && grep -q 'column 300000 is a duplicate' err.txt" \
    "a wide header is checked in linear time (got $rc: $(cat err.txt))"

# ---- 8. special files as inputs: a FIFO nobody writes never blocks
mkfifo nofeed
for cmd in "report nofeed --no-charts" "compare nofeed nofeed" "plan --fit nofeed" "report /dev/zero"; do
    # shellcheck disable=SC2086
    timeout 20 "$ACCUBENCH" $cmd >/dev/null 2>err.txt
    rc=$?
    check "[ $rc -eq 2 ] && [ \$(wc -l <err.txt) -eq 1 ]" "$cmd: one line, exit 2, no wait (got $rc: $(cat err.txt))"
done
cp "$root/tests/fixtures/abc.csv" piped.csv
cat piped.csv | timeout 20 "$ACCUBENCH" report /dev/stdin --no-charts --out piped >/dev/null 2>err.txt
check "[ $? -eq 0 ] && [ -s piped/stdin.html ]" "a pipe with data is still read: $(cat err.txt)"
# endless input that is not a device: a regular file of NUL bytes that
# never ends (/proc/self/pagemap, 256 GiB of them), a FIFO or /dev/zero
# where the loss curves beside a CSV go. The first NUL ends the read; a
# FIFO is never waited on.
for cmd in "report /proc/self/pagemap --no-charts" "run --profile /proc/self/pagemap"; do
    # shellcheck disable=SC2086
    timeout 20 "$ACCUBENCH" $cmd >/dev/null 2>err.txt
    rc=$?
    check "[ $rc -eq 2 ] && [ \$(wc -l <err.txt) -eq 1 ] && grep -q 'pagemap:1: ' err.txt" \
        "$cmd: one line, exit 2, at the first NUL (got $rc: $(cat err.txt))"
done
mkdir curved
cp "$root/tests/fixtures/abc.csv" curved/c.csv
for planted in fifo zero; do
    rm -f curved/c.curves.csv
    if [ $planted = fifo ]; then mkfifo curved/c.curves.csv; else ln -s /dev/zero curved/c.curves.csv; fi
    for cmd in "report curved/c.csv --no-charts" "plan --time-to-target curved/c.csv"; do
        # shellcheck disable=SC2086
        timeout 20 "$ACCUBENCH" $cmd >/dev/null 2>err.txt
        rc=$?
        check "[ $rc -eq 2 ] && [ \$(wc -l <err.txt) -eq 1 ] && grep -q 'c.curves.csv' err.txt" \
            "$cmd, the curves a $planted: one line, exit 2, no wait (got $rc: $(cat err.txt))"
    done
done

# ---- 10. the smaller ones
for v in abc 0 -1 65 1048576; do
    # shellcheck disable=SC2086
    ACCUBENCH_CPU_THREADS=$v "$ACCUBENCH" run $quick --csv threads.csv >/dev/null 2>err.txt
    rc=$?
    check "[ $rc -eq 2 ] && [ \$(wc -l <err.txt) -eq 1 ] && grep -q 'ACCUBENCH_CPU_THREADS' err.txt" \
        "ACCUBENCH_CPU_THREADS=$v: one line, exit 2 (got $rc: $(cat err.txt))"
done
# shellcheck disable=SC2086
ACCUBENCH_CPU_GEMM=mkl "$ACCUBENCH" run $quick --csv gemm.csv >/dev/null 2>err.txt
rc=$?
check "[ $rc -eq 2 ] && [ \$(wc -l <err.txt) -eq 1 ] && grep -q \"ACCUBENCH_CPU_GEMM='mkl'\" err.txt && [ ! -e gemm.csv ]" \
    "ACCUBENCH_CPU_GEMM=mkl: one line, exit 2, no CSV (got $rc: $(cat err.txt))"
# shellcheck disable=SC2086
ACCUBENCH_CPU_GEMM=portable "$ACCUBENCH" run $quick --csv gemm.csv >/dev/null 2>err.txt
check "[ $? -eq 0 ] && grep -q '^# library: portable blocked GEMM threads [0-9]* (ACCUBENCH_CPU_GEMM=portable)' gemm.csv" \
    "ACCUBENCH_CPU_GEMM=portable runs the portable GEMM and says so: $(cat err.txt)"
awk -F, 'BEGIN { OFS = "," } /^#/ { print; next } !h { for (i = 1; i <= NF; i++) if ($i == "grad_rel_err") c = i; h = 1; print; next } { $c = "1e-320"; print }' \
    "$root/tests/fixtures/abc.csv" >tiny.csv
"$ACCUBENCH" report tiny.csv --no-charts >/dev/null 2>err.txt
check "[ $? -eq 2 ] && grep -q 'out of range' err.txt" "1e-320 is out of range, not 'not a number': $(cat err.txt)"
printf '\357\273\277model = tiny\neffective = 8\nmicro = 4\n' >bom.profile
# shellcheck disable=SC2086
"$ACCUBENCH" run --profile ./bom.profile --backend cpu --budget-s 0.05 --min-samples 3 \
    --trace-steps 0 --quiet --csv bom.csv >/dev/null 2>err.txt
check "[ $? -eq 0 ] && [ \$(rows bom.csv) -eq 1 ]" "a profile with a UTF-8 byte-order mark is read: $(cat err.txt)"
"$ACCUBENCH" plan --fit "$root/tests/fixtures/abc.csv" >/dev/null 2>err.txt
check "[ $? -eq 2 ]" "plan --fit on a CSV without data-parallel rows: bad input, exit 2 ($(cat err.txt))"
long="2,$(printf '0%.0s' $(seq 1 520))16"
"$ACCUBENCH" plan --fit "$root/tests/fixtures/abc.csv" --fit-devices "$long" >/dev/null 2>err.txt
check "[ $? -eq 2 ] && grep -q 'at most 511 characters' err.txt" "a --fit-devices list past its buffer is refused, not cut: $(cat err.txt)"
"$ACCUBENCH" plan --noise "$root/tests/fixtures/abc.csv" --fit "$root/tests/fixtures/abc.csv" >out.txt 2>err.txt
check "[ $? -eq 2 ] && [ \$(wc -l <err.txt) -eq 1 ] && grep -q -- '--noise and --fit are two jobs' err.txt && [ ! -s out.txt ]" \
    "plan with two jobs is refused, neither done: $(cat err.txt)"

# ---- 5. every rank ends: a signal to one rank, or Ctrl-C to mpirun
if command -v mpirun >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    # Open MPI's own start-up allocations are not ours (as e2e_dp.sh), and
    # a job ended by MPI_Abort never reaches the leak check anyway.
    [ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
    # rank_pid MPIRUN_PID RANK: the process of that rank (a child of mpirun)
    rank_pid() {
        for p in $(pgrep -P "$1"); do
            tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" &&
                echo "$p"
        done
    }
    # start_job: a 2-rank sweep in the background ($mp: mpirun's pid), once
    # its CSV exists and rank 1 runs, plus a second into it.
    start_job() {
        rm -f dp.csv dp.csv.lock dp.curves.csv dp.curves.csv.lock
        # shellcheck disable=SC2086 # $job_args: words
        mpirun --oversubscribe -np 2 "$ACCUBENCH" run --backend cpu --model tiny \
            --effective 1024 --micro pow2 --budget-s 0.5 --max-noise 0.001 --trace-steps 0 \
            --csv dp.csv ${job_args:-} >dp.out 2>dp.err &
        mp=$!
        n=0
        while { [ ! -e dp.csv ] || [ -z "$(rank_pid $mp 1)" ]; } && [ $n -lt 600 ]; do
            sleep 0.1
            n=$((n + 1))
        done
        sleep 1
        t0=$(date +%s)
    }
    # end_job: waits for it ($rc its status, $took the seconds since the
    # start_job's end); a job still running after 60 s hangs: it is ended
    # here, and fails.
    end_job() {
        n=0
        while kill -0 $mp 2>/dev/null && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
        kill -0 $mp 2>/dev/null && { kill -KILL $(pgrep -P $mp) $mp; echo "the job hung" >>dp.err; }
        wait $mp
        rc=$?
        took=$(($(date +%s) - t0))
    }
    for target in 0 1 mpirun; do
        start_job
        if [ $target = mpirun ]; then kill -INT $mp; else kill -TERM "$(rank_pid $mp $target)"; fi
        end_job
        # mpirun itself exits 1 for a job it ended on Ctrl-C (Open MPI's choice)
        if [ $target = mpirun ]; then ok="[ $rc -eq 130 ] || [ $rc -eq 143 ] || [ $rc -eq 1 ]"
        else ok="[ $rc -eq 143 ]"; fi
        check "$ok && [ $took -le 30 ]" "SIGTERM to $target under mpirun: every rank ends (rc $rc after ${took}s)"
        check "grep -q '^accubench: interrupted' dp.err" "SIGTERM to $target: rank 0 says so: $(grep accubench dp.err)"
        check "[ ! -e dp.csv.lock ] && grep -q '^backend,' dp.csv" "SIGTERM to $target: lock gone, CSV whole"
        # the line counts the rows on disk, as one process's end does (a
        # row may land between the count and the signal)
        said=$(sed -n 's/^accubench: interrupted ([A-Z]*) after \([0-9]*\) of [0-9]* configs; the rows measured so far are in dp.csv$/\1/p' dp.err)
        check "grep -q '^accubench: interrupted ([A-Z]*) before a row was finished$' dp.err || { [ -n \"$said\" ] && [ \$(rows dp.csv) -ge $said ] && [ \$(rows dp.csv) -le \$(($said + 1)) ]; }" \
            "SIGTERM to $target: rank 0 counts the rows on disk ($(rows dp.csv)): $(grep '^accubench: interrupted' dp.err)"
    done
    # SIGHUP to rank 0 of a run with loss curves: exit 129, and the curves
    # file's lock goes with the CSV's (rank 0's handler lets both go)
    job_args="--train-steps 2"
    start_job
    kill -HUP "$(rank_pid $mp 0)"
    end_job
    job_args=""
    check "[ $rc -eq 129 ] && grep -q '^accubench: interrupted (SIGHUP' dp.err" \
        "SIGHUP to rank 0 under mpirun: exit 129, said (rc $rc): $(grep accubench dp.err)"
    check "[ ! -e dp.csv.lock ] && [ ! -e dp.curves.csv.lock ]" \
        "SIGHUP to rank 0: both locks gone: $(ls dp*)"
    # A rank that never answers (SIGSTOP: no signal reaches the program,
    # nothing dies) ends the job after ACCUBENCH_RANK_WAIT_S: rank 0 keeps
    # its rows when the other is stopped; rank 1 ends it when rank 0 is.
    export ACCUBENCH_RANK_WAIT_S=3
    for target in 1 0; do
        start_job
        stopped=$(rank_pid $mp $target)
        kill -STOP "$stopped"
        end_job
        kill -KILL "$stopped" 2>/dev/null
        other=$((1 - target))
        check "[ $rc -ne 0 ] && [ $took -le 40 ] && grep -q '^accubench: rank $other of 2: no answer from the other ranks in [0-9]* s' dp.err" \
            "rank $target stopped (SIGSTOP): rank $other gives up after ACCUBENCH_RANK_WAIT_S, the job ends (rc $rc after ${took}s): $(grep accubench dp.err)"
        [ $target = 1 ] && check "[ ! -e dp.csv.lock ] && grep -q '^backend,' dp.csv" \
            "rank 1 stopped: rank 0 lets the lock go, CSV whole"
    done
    unset ACCUBENCH_RANK_WAIT_S
    ACCUBENCH_RANK_WAIT_S=soon timeout 60 mpirun --oversubscribe -np 2 "$ACCUBENCH" run $quick \
        --csv dp.csv >dp.out 2>dp.err
    rc=$?
    check "[ $rc -eq 2 ] && [ \$(grep -c '^accubench: ' dp.err) -eq 1 ] && grep -q 'ACCUBENCH_RANK_WAIT_S' dp.err" \
        "a wait limit that is no number: exit 2, one line (got $rc: $(grep '^accubench' dp.err))"
    timeout 60 mpirun --oversubscribe -np 2 "$ACCUBENCH" run $quick --csv /tmp >dp.out 2>dp.err
    rc=$?
    check "[ $rc -eq 2 ] && grep -q '^accubench: --csv /tmp' dp.err" "bad input under mpirun: exit 2 (got $rc)"
    # A refusal of the command line is the same on every rank: said once.
    timeout 60 mpirun --oversubscribe -np 2 "$ACCUBENCH" run $bare --micro 4,8 --model nosuch --csv dp.csv \
        >dp.out 2>dp.err
    rc=$?
    check "[ $rc -eq 2 ] && [ \$(grep -c '^accubench: ' dp.err) -eq 1 ]" \
        "bad input under mpirun: one line, not one a rank (got $rc: $(grep '^accubench' dp.err))"
fi

exit $fail
