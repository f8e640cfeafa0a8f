#!/bin/sh
# What a run and a report do to the file system: every output path checked
# before anything is measured (a device, a FIFO, a folder where a file is
# wanted, a file where a folder is wanted: refused with one line, exit 2,
# the path untouched); --out folders created alike by run and report; no
# results/ made when --csv names the file; two runs never overwrite each
# other (fresh default names, a lock on --csv); after a failed write the
# count printed is the file's; SIGTERM and SIGHUP stop like Ctrl-C;
# temporaries of killed runs are cleaned up.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
# $bare where a line names its own --trace-steps (an option named twice is refused)
bare="--backend cpu --model tiny --effective 8 --micro 4,8 --budget-s 0.05 --min-samples 3"
quick="$bare --trace-steps 0"
# data rows of a CSV (not metadata, not the header)
rows() { grep -v '^#' "$1" | tail -n +2 | grep -c .; }

# ---- 1. every output path, before anything is measured
# The character device is reached through a link: were the check ever to
# fail, the rename would replace the link, never the system's /dev/null.
ln -s /dev/null devnull
mkfifo fifo
mkdir adir
echo keep > afile
for bad in "--csv devnull" "--csv fifo" "--csv adir" "--out afile" "--out fifo" \
           "--out devnull" "--trace devnull" "--trace fifo" "--trace adir" \
           "--trace nodir/t.json" "--trace afile" "--csv nodir/x.csv" "--out afile/sub" \
           "--dump /proc/accubench-dump"; do
    # a trace pass to write, so that the path is what gets refused
    pass="--trace-steps 0"
    case $bad in --trace*) pass="--trace-steps 1" ;; esac
    # shellcheck disable=SC2086
    timeout 20 "$ACCUBENCH" run $bare $pass $bad >out.txt 2>err.txt
    rc=$?
    path=${bad#* }
    check "[ $rc -eq 2 ]" "$bad: exit 2 (got $rc)"
    check "[ \$(wc -l <err.txt) -eq 1 ] && grep -qF -- '$path' err.txt" \
        "$bad: one line naming the path: $(cat err.txt)"
    check "! grep -q 'peak GEMM' out.txt" "$bad: refused before measuring"
done
check '[ -L devnull ] && [ -p fifo ] && [ "$(cat afile)" = keep ]' \
    "the refused paths are untouched"
check '[ -z "$(ls adir)" ] && [ ! -e nodir ]' "nothing made in the refused places"

# a trace asked for with no trace pass to take it from
"$ACCUBENCH" run $quick --trace t.json >out.txt 2>err.txt
check '[ $? -eq 2 ] && [ $(wc -l <err.txt) -eq 1 ] && grep -q "trace-steps is 0" err.txt' \
    "--trace with --trace-steps 0 refused up front: $(cat err.txt)"

# a trace of an earlier run is replaced: the refusal above is for other files
"$ACCUBENCH" run $bare --trace-steps 1 --trace t.json --csv t1.csv --quiet 2>err.txt &&
    "$ACCUBENCH" run $bare --trace-steps 1 --trace t.json --csv t2.csv --quiet 2>>err.txt
check '[ $? -eq 0 ] && grep -q "\"tool\":\"accubench\"" t.json' \
    "--trace over an earlier trace: $(cat err.txt)"

# a file the kernel keeps (chattr +i or +a) passes every other check, but
# the rename over it fails: refused before measuring, not after the run.
# Where the flags cannot be set (not root, a file system without them),
# skipped with a line.
cp t.json pinned.json
"$ACCUBENCH" run $quick --csv kept.csv --quiet 2>/dev/null
if chattr +i pinned.json kept.csv 2>/dev/null; then
    for bad in "--trace pinned.json --trace-steps 1 --csv p1.csv" "--csv kept.csv --append --trace-steps 0"; do
        # shellcheck disable=SC2086
        "$ACCUBENCH" run $bare $bad >out.txt 2>err.txt
        rc=$?
        check "[ $rc -eq 2 ] && [ \$(wc -l <err.txt) -eq 1 ] && grep -q 'immutable' err.txt" \
            "$bad, the file immutable: one line, exit 2 (rc $rc): $(cat err.txt)"
        check "! grep -q 'peak GEMM' out.txt" "$bad, the file immutable: refused before measuring"
    done
    check '[ ! -e p1.csv ] && [ "$(rows kept.csv)" -eq 2 ]' "the pinned outputs: nothing written"
    chattr -i pinned.json kept.csv
    chattr +a pinned.json
    "$ACCUBENCH" run $bare --trace pinned.json --trace-steps 1 --csv p2.csv >out.txt 2>err.txt
    rc=$?
    check "[ $rc -eq 2 ] && grep -q 'append-only' err.txt && ! grep -q 'peak GEMM' out.txt" \
        "--trace append-only: refused before measuring (rc $rc): $(cat err.txt)"
    chattr -a pinned.json
    # an empty --dump folder the dump would be renamed over, immutable
    mkdir pinned.dump
    chattr +i pinned.dump
    "$ACCUBENCH" run $quick --dump pinned.dump --csv p3.csv >out.txt 2>err.txt
    rc=$?
    chattr -i pinned.dump
    check "[ $rc -eq 2 ] && grep -q 'dump pinned.dump is immutable' err.txt && ! grep -q 'peak GEMM' out.txt" \
        "--dump onto an immutable folder: refused before measuring (rc $rc): $(cat err.txt)"
    # a lock left immutable is a regular file: said as the kernel says it
    : >pinned.csv.lock
    chattr +i pinned.csv.lock
    "$ACCUBENCH" run $quick --csv pinned.csv >out.txt 2>err.txt
    rc=$?
    check "[ $rc -eq 2 ] && grep -q 'pinned.csv.lock: Permission denied' err.txt" \
        "--csv whose lock is immutable: one line, the kernel's reason (rc $rc): $(cat err.txt)"
    chattr -i pinned.csv.lock
    # --replace would remove an earlier run's curves it cannot: refused
    # before its rows are replaced, the file kept
    "$ACCUBENCH" run $bare --csv cur.csv --train-steps 2 --trace-steps 0 --quiet >/dev/null 2>&1
    cp cur.csv cur.before
    chattr +i cur.curves.csv
    "$ACCUBENCH" run $bare --csv cur.csv --replace --trace-steps 0 >out.txt 2>err.txt
    rc=$?
    chattr -i cur.curves.csv
    check "[ $rc -eq 2 ] && grep -q 'cur.curves.csv is immutable' err.txt && cmp -s cur.csv cur.before" \
        "--replace beside immutable curves: refused, rows kept (rc $rc): $(cat err.txt)"
else
    echo "skipped: chattr +i does not work here (needs root and a file system with the flags)"
fi

# --dump asked for and not written (no config ran its gradient check: all
# oom) says so, as --trace does, and fails the run
"$ACCUBENCH" run --backend cpu --model tiny --effective 64 --micro 64 --mem-cap 100K \
    --dump nodump --csv nodump.csv >out.txt 2>err.txt
rc=$?
check "[ $rc -eq 1 ] && grep -q 'dump nodump not written: no config ran its gradient check' err.txt && [ ! -e nodump ]" \
    "--dump with no config run: said, exit 1 (rc $rc): $(cat err.txt)"

# --csv names the file: no results/ appears in the working folder
"$ACCUBENCH" run $quick --csv given.csv --quiet 2>err.txt
check '[ $? -eq 0 ] && [ "$(rows given.csv)" -eq 2 ]' "--csv run: $(cat err.txt)"
check '[ ! -e results ]' "--csv given: no results/ created"

# report --out: a missing folder is created, as run --out does; a file,
# or an output that is a FIFO, is refused before anything is written
"$ACCUBENCH" report given.csv --no-charts --out new/deeper >out.txt 2>err.txt
check '[ $? -eq 0 ] && [ -s new/deeper/given.md ] && [ -s new/deeper/given.html ]' \
    "report --out creates the folder: $(cat err.txt)"
"$ACCUBENCH" report given.csv --no-charts --out afile >out.txt 2>err.txt
check '[ $? -eq 2 ] && [ $(wc -l <err.txt) -eq 1 ] && grep -q afile err.txt' \
    "report --out FILE refused: $(cat err.txt)"
# The three report files are one set: a write that fails on the largest
# (the file-size limit stands in for a full disk) leaves all three as they
# were, never a new md beside an old json, and no temporary behind.
sizes=$(wc -c new/deeper/given.md new/deeper/given.html new/deeper/given.json | sort -n | head -n 3 | awk '{print $1}')
smallest=$(echo "$sizes" | head -n 1) largest=$(echo "$sizes" | tail -n 1)
limit=$(( (largest - 1) / 512 ))
if [ $(( limit * 512 )) -gt "$smallest" ]; then
    mkdir old && for e in md html json; do echo old >old/given.$e; done
    sh -c 'trap "" XFSZ; ulimit -f "$1"; shift; exec "$0" "$@"' "$ACCUBENCH" "$limit" \
        report given.csv --no-charts --out old >out.txt 2>err.txt
    rc=$?
    check "[ $rc -eq 2 ] && [ \$(wc -l <err.txt) -eq 1 ] && grep -q 'cannot write old/given' err.txt" \
        "report on a full disk: exit 2, one line (rc $rc): $(cat err.txt)"
    check '[ "$(cat old/given.md old/given.html old/given.json)" = "$(printf "old\nold\nold")" ]' \
        "report on a full disk: all three files as they were"
    check '[ "$(ls old | wc -l)" -eq 3 ]' "report on a full disk: no temporary left: $(ls old)"
else
    echo "skipped: the report files are too close in size for a limit between them"
fi
mkdir rep && mkfifo rep/given.html
"$ACCUBENCH" report given.csv --no-charts --out rep >out.txt 2>err.txt
check '[ $? -eq 2 ] && [ -p rep/given.html ] && [ ! -e rep/given.md ]' \
    "report refuses a FIFO output before writing either file: $(cat err.txt)"

# ---- 2. never overwrite a result
# two runs started at once with the same --out: two CSVs, each whole
"$ACCUBENCH" run $quick --out same --quiet 2>e1.txt & p1=$!
"$ACCUBENCH" run $quick --out same --quiet 2>e2.txt & p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
check "[ $r1 -eq 0 ] && [ $r2 -eq 0 ]" "both runs exit 0: $(cat e1.txt e2.txt)"
check '[ "$(ls same/*.csv | wc -l)" -eq 2 ]' "two CSVs in same/: $(ls same)"
for f in same/*.csv; do
    check "[ \"\$(rows $f)\" -eq 2 ]" "$f keeps both of its rows"
done

# two runs with the same --csv: the second is refused, naming the holder
"$ACCUBENCH" run --backend cpu --model tiny --effective 64 --micro 8,16,32,64 --budget-s 0.3 \
    --max-noise 0.001 --trace-steps 0 --csv locked.csv --quiet 2>first.txt & first=$!
for i in $(seq 1 600); do [ -f locked.csv.lock ] && break; sleep 0.05; done
"$ACCUBENCH" run $quick --csv locked.csv >out.txt 2>err.txt
rc=$?
check "[ $rc -eq 2 ] && [ \$(wc -l <err.txt) -eq 1 ]" "second writer refused, exit 2: $rc"
check "grep -q 'locked.csv' err.txt && grep -q 'pid $first' err.txt" \
    "the refusal names the file and the holder: $(cat err.txt)"
wait $first
check '[ $? -eq 0 ] && [ "$(rows locked.csv)" -eq 4 ]' "the first run kept all 4 rows: $(cat first.txt)"
check '[ ! -e locked.csv.lock ]' "the lock is gone with its run"

# a name the run chose is locked too: --csv naming it is refused meanwhile
"$ACCUBENCH" run --backend cpu --model tiny --effective 64 --micro 8,16,32,64 --budget-s 0.3 \
    --max-noise 0.001 --trace-steps 0 --out chosen --quiet 2>first.txt & first=$!
for i in $(seq 1 600); do ls chosen/*.csv.lock >/dev/null 2>&1 && break; sleep 0.05; done
taken=$(ls chosen/*.csv | head -n 1)
"$ACCUBENCH" run $quick --csv "$taken" >out.txt 2>err.txt
check "[ \$? -eq 2 ] && grep -q 'pid $first' err.txt" "--csv naming a running run's file: $(cat err.txt)"
wait $first
check '[ "$(rows "$taken")" -eq 4 ] && [ -z "$(ls chosen | grep lock)" ]' \
    "the chosen name kept its run's 4 rows, and no lock: $(ls chosen)"

# ---- 3. a write that fails (the file-size limit stands in for a full disk):
# the count printed is what the file holds. The limit (512-byte blocks)
# leaves room for the metadata and a few rows, not for all seven.
blocks=$(( $(wc -c <given.csv) / 512 + 1 ))
sh -c 'trap "" XFSZ; ulimit -f "$1"; shift; exec "$0" "$@"' "$ACCUBENCH" "$blocks" \
    run --backend cpu --model tiny --effective 64 --micro pow2 --budget-s 0.05 --min-samples 3 --trace-steps 0 --csv full.csv >out.txt 2>err.txt
rc=$?
check "[ $rc -eq 2 ]" "a failed write exits 2 (got $rc)"
check 'grep -q "cannot write full.csv" err.txt' "the error is printed: $(cat err.txt)"
on_disk=$(rows full.csv)
said=$(sed -n 's/.*accubench: \([0-9]*\) of the [0-9]* rows\{0,1\} measured \(is\|are\) in full.csv/\1/p' err.txt)
check "[ -n '$said' ] && [ '$said' -eq $on_disk ]" \
    "the rows said ($said) are the rows on disk ($on_disk): $(cat err.txt)"
check '! grep -qE "rows? written" out.txt' "no 'rows written' after a failed write: $(tail -n 1 out.txt)"

# The same onto a file of earlier rows: the count said is this run's rows
# on disk, the earlier ones named apart. --append with room for a row or
# two; --replace with room for none (the file stays as it was).
# said_rows FILE: the count of this run's rows the error line gives
said_rows() { sed -n "s/.*accubench: \([0-9]*\) of the [0-9]* rows\{0,1\} measured \(is\|are\) in $1, .* its \([0-9]*\) earlier rows\{0,1\}$/\1 \3/p" err.txt; }
earlier=$(rows given.csv)
for how in append replace; do
    cp given.csv "$how.csv"
    blocks=1
    [ "$how" = append ] && blocks=$(( $(wc -c <given.csv) / 512 + 3 ))
    sh -c 'trap "" XFSZ; ulimit -f "$1"; shift; exec "$0" "$@"' "$ACCUBENCH" "$blocks" \
        run --backend cpu --model tiny --effective 64 --micro pow2 --budget-s 0.05 \
        --min-samples 3 --trace-steps 0 --rounds off --csv "$how.csv" "--$how" >out.txt 2>err.txt
    rc=$?
    said=$(said_rows "$how.csv")
    ours=${said% *} theirs=${said#* }
    check "[ $rc -eq 2 ] && [ -n '$said' ] && [ '$ours' -eq \$(( \$(rows $how.csv) - $earlier )) ] &&
           [ '$theirs' -eq $earlier ]" \
        "--$how, the write failing: this run's rows said apart from the $earlier earlier ones (rc $rc, $(rows "$how.csv") on disk): $(cat err.txt)"
done
check 'cmp -s given.csv replace.csv && grep -q "as it was" err.txt' \
    "--replace whose first write failed left the file as it was: $(cat err.txt)"

# A --dump whose files cannot be written (room for the CSV, not for a
# 16 KiB tensor): exit 1, the row kept, one line naming the file by the
# folder asked for (not its temporary, removed), nothing of the dump left
sh -c 'trap "" XFSZ; ulimit -f 32; exec "$0" "$@"' "$ACCUBENCH" \
    run --backend cpu --model tiny --effective 16 --micro 16 --budget-s 0.05 --min-samples 3 \
    --trace-steps 0 --csv dumped.csv --dump dumped >out.txt 2>err.txt
rc=$?
check "[ $rc -eq 1 ] && [ \$(rows dumped.csv) -eq 1 ] && grep -q 'accubench: --dump: .*cannot write dumped/.*npy: File too large; nothing of it kept' err.txt &&
       ! grep -q 'dumped.tmp' err.txt && [ -z \"\$(ls | grep '^dumped\$\|^dumped.tmp')\" ]" \
    "a dump that cannot be written: exit 1 (got $rc), said by its own name, nothing left: $(ls | grep dumped) $(grep dump err.txt)"

# ---- 4. SIGTERM as SIGINT: rows kept (each config timed alone: --rounds off writes its row as it ends), exit 143 (128 + SIGTERM), no temporary; a dead
# run's temporary is removed by the next run, a live one's is not
sh -c 'exit 0' & dead=$!
wait $dead
echo partial > "term.csv.tmp.$dead"
echo live > "term.csv.tmp.$$"
echo other > "other.csv.tmp.$dead"
# long_run NAME ROWS [PREFIX...]: a 7-config run writing NAME.csv (stdout and
# stderr in NAME.txt), in the background as $pid, run through PREFIX
# where given; once its first ROWS rows are in (up to 180 s: a loaded or
# sanitized build is slow), it returns.
long_run() {
    name=$1 want=$2
    shift 2
    "$@" "$ACCUBENCH" run --backend cpu --model tiny --effective 64 --micro pow2 --budget-s 0.5 \
        --max-noise 0.001 --trace-steps 0 --rounds off --csv "$name.csv" >"$name.txt" 2>&1 &
    pid=$!
    for i in $(seq 1 1800); do
        [ -f "$name.csv" ] && [ "$(rows "$name.csv")" -ge "$want" ] && break
        sleep 0.1
    done
}
long_run term 2
check "[ ! -e term.csv.tmp.$dead ]" "the dead run's temporary is removed"
check "[ -e term.csv.tmp.$$ ] && [ -e other.csv.tmp.$dead ]" \
    "a live run's temporary and other files are left alone"
kill -TERM $pid
wait $pid
rc=$?
check "[ $rc -eq 143 ]" "SIGTERM: exit 143, as the shell reports death by SIGTERM (got $rc)"
check 'grep -q "interrupted (SIGTERM)" term.txt' "SIGTERM: says so: $(tail -n 2 term.txt)"
check '[ "$(rows term.csv)" -ge 2 ]' "SIGTERM: the rows measured are kept"
check '[ -z "$(ls | grep "^term.csv.tmp.[0-9]*$" | grep -v "tmp.$$\$")" ]' \
    "SIGTERM: no temporary left: $(ls)"
# SIGHUP (its terminal closed) as SIGTERM: exit 129, said, the lock let go
# (where this script runs with SIGHUP ignored, `nohup make test`, the run
# inherits it and rightly goes on: the case below covers that)
sigign=$(awk '/^SigIgn:/ { print $2 }' /proc/$$/status 2>/dev/null)
if [ -n "$sigign" ] && [ $(( 0x${sigign#"${sigign%?}"} & 1 )) -eq 1 ]; then
    echo "skipped: SIGHUP stops a run: this script runs with SIGHUP ignored"
else
    long_run hup 1
    kill -HUP $pid
    wait $pid
    rc=$?
    check "[ $rc -eq 129 ] && grep -q 'interrupted (SIGHUP' hup.txt" \
        "SIGHUP: exit 129, saying so (got $rc): $(tail -n 1 hup.txt)"
    check '[ ! -e hup.csv.lock ] && [ "$(rows hup.csv)" -ge 1 ] && grep -q "^# unfinished: interrupted (SIGHUP" hup.csv' \
        "SIGHUP: the rows kept, the lock let go, the CSV unfinished: $(ls hup*)"
fi
# SIGHUP that came ignored (nohup: the run is to outlive its terminal)
# stays ignored: every row measured, exit 0
long_run nohup 1 sh -c 'trap "" HUP; exec "$0" "$@"'
kill -HUP $pid
wait $pid
rc=$?
check "[ $rc -eq 0 ] && [ \"\$(rows nohup.csv)\" -eq 7 ] && ! grep -q unfinished nohup.csv" \
    "SIGHUP ignored at the start (nohup): the run goes on, exit 0 (got $rc): $(tail -n 1 nohup.txt)"
# SIGPIPE (`run | head`: the reader went away) as SIGINT: it says so on
# stderr, lets its lock go, and the CSV says it is unfinished
{ "$ACCUBENCH" run --backend cpu --model tiny --effective 64 --micro pow2 --budget-s 0.5 \
    --trace-steps 0 --csv pipe.csv 2>pipe.err; echo $? >pipe.rc; } | head -n 1 >/dev/null
check '[ "$(cat pipe.rc)" -eq 141 ] && grep -q "interrupted (SIGPIPE: the reader of its output went away)" pipe.err' \
    "SIGPIPE: exit 141, saying so (got $(cat pipe.rc)): $(cat pipe.err)"
check '[ ! -e pipe.csv.lock ] && grep -q "^# unfinished: interrupted (SIGPIPE" pipe.csv' \
    "SIGPIPE: the lock let go, the CSV whole and unfinished: $(ls pipe*)"
# a reader gone before the end's lines (--quiet writes only the last one)
# stops nothing: every row written, the lock let go, exit 0
{ "$ACCUBENCH" run $quick --csv endpipe.csv --quiet 2>endpipe.err; echo $? >endpipe.rc; } | true
check '[ "$(cat endpipe.rc)" -eq 0 ] && [ ! -e endpipe.csv.lock ] && [ "$(rows endpipe.csv)" -eq 2 ] &&
    ! grep -q unfinished endpipe.csv' \
    "a reader gone by the end: exit 0 (got $(cat endpipe.rc)), no lock: $(ls endpipe*) $(cat endpipe.err)"

# ---- 5. the file says it is unfinished, and its readers say so too
check 'grep -q "^# unfinished: interrupted (SIGTERM) after [0-9]* of 7 configs" term.csv' \
    "the interrupted CSV says so: $(grep unfinished term.csv)"
check '! grep -q "unfinished" given.csv' "a finished run's CSV has no unfinished line"
"$ACCUBENCH" report term.csv --no-charts --out rep >out.txt 2>&1
check 'grep -q "A run of this file did not finish" rep/term.md' "the report says it: $(cat out.txt)"
# a run appended after it that finishes keeps saying it: the configs the
# interrupted run did not reach still have no row
cp term.csv later.csv
"$ACCUBENCH" run --backend cpu --model tiny --effective 8 --micro 8 --budget-s 0.05 \
    --trace-steps 0 --csv later.csv --append >out.txt 2>&1
check 'grep -q "^# unfinished: an earlier run of this file: interrupted (SIGTERM) after [0-9]* of 7 configs" later.csv &&
    grep -q "^# unfinished_earlier: interrupted (SIGTERM)" later.csv' \
    "an append that finishes keeps the earlier run unfinished: $(grep unfinished later.csv) $(tail -n 2 out.txt)"
"$ACCUBENCH" report later.csv --no-charts --out rep >out.txt 2>&1
check 'grep -q "A run of this file did not finish\*\* (an earlier run of this file: interrupted" rep/later.md' \
    "and the report says it: $(grep "did not finish" rep/later.md) $(cat out.txt)"
# base: its rows, finished; new: one row fewer, unfinished or a deliberate subset
grep -v "^# unfinished" term.csv >base.csv
sed '$d' term.csv >cut.csv
grep -v "^# unfinished" cut.csv >subset.csv
"$ACCUBENCH" compare base.csv cut.csv --min-diff 1000 >out.txt 2>&1
rc=$?
check "[ $rc -eq 1 ] && grep -q 'new run did not finish.*1 config of base not reached' out.txt" \
    "compare: a config an unfinished run never reached fails it (rc $rc): $(tail -n 2 out.txt)"
"$ACCUBENCH" compare base.csv subset.csv --min-diff 1000 >out.txt 2>&1
rc=$?
check "[ $rc -eq 0 ]" "compare: a finished run of fewer configs passes (rc $rc): $(tail -n 2 out.txt)"

exit $fail
