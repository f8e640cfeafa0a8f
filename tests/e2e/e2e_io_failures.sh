#!/bin/sh
# What the program does when the system fails it, beyond a full disk
# (e2e_files.sh): a standard stream closed (the next file opened took its
# number, and the console went into the CSV's lock), a folder made
# immutable under a running run (one line with the kernel's reason, the
# rows kept), a name that fits but whose temporary (NAME.tmp.PID) does
# not (refused before anything is measured), the help written nowhere, a
# file-size limit (ulimit -f), and `make readme-figures` on a folder that
# fills (the figures the tree keeps: the earlier pair or the new one).
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
bare="--backend cpu --model tiny --effective 8 --noise-windows 0 --budget-s 0.05 --trace-steps 0"
# data rows of a CSV (not metadata, not the header)
rows() { grep -v '^#' "$1" | tail -n +2 | grep -c .; }

# ---- 1. stdout closed: the lock still holds the run's pid (the console
# table went into it: a second run named no holder), and plan, whose
# answer is stdout, still says it could not write it
"$ACCUBENCH" run $bare --micro 4 --train-steps 1000000 --csv closed.csv >&- 2>closed.err &
pid=$!
for _ in $(seq 1 300); do grep -q "^config 1 of" closed.err 2>/dev/null && break; sleep 0.1; done
check '[ "$(cat closed.csv.lock)" = "$pid" ]' \
    "the lock holds the pid alone: $(head -c 200 closed.csv.lock)"
"$ACCUBENCH" run $bare --micro 4 --csv closed.csv >out.txt 2>err.txt
check "[ \$? -eq 2 ] && grep -q 'being written by another run (pid $pid)' err.txt" \
    "a second run names the holder: $(cat err.txt)"
kill -INT $pid
wait $pid
check '[ ! -e closed.csv.lock ] && grep -q "^backend," closed.csv' \
    "the run stopped, its lock let go, its CSV whole: $(ls closed*)"
"$ACCUBENCH" plan --effective 256 --max-micro 32 >&- 2>err.txt
check '[ $? -eq 2 ] && grep -q "cannot write the output (stdout): Bad file descriptor" err.txt' \
    "plan with stdout closed: one line, exit 2: $(cat err.txt)"

# ---- 2. the help and the version written nowhere (a full disk: /dev/full)
for args in --help "help run" --version; do
    "$ACCUBENCH" $args >/dev/full 2>err.txt
    check '[ $? -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "cannot write the output (stdout)" err.txt' \
        "$args to a full disk: one line, exit 2: $(cat err.txt)"
done

# run's console table to a full disk: lost in silence with exit 0 before;
# one line and exit 1 now (it measured, the answer is not whole), the rows
# in the CSV. A reader gone after the last row (a pipe) is no failure.
"$ACCUBENCH" run $bare --micro 2,8 --csv console.csv >/dev/full 2>err.txt
check '[ $? -eq 1 ] && grep -q "the console table could not be written (stdout)" err.txt &&
       [ "$(rows console.csv)" -eq 2 ]' "run's table to a full disk: exit 1, one line: $(cat err.txt)"
"$ACCUBENCH" run $bare --micro 2,8 --csv piped.csv 2>err.txt | head -n 1 >/dev/null
check '! grep -q "console table could not" err.txt' \
    "a reader gone is not a table lost to a full disk: $(cat err.txt)"

# ---- 3. the folder made immutable (chattr +i) after the first row: the
# write fails with the kernel's reason, not a refusal of something planted
# at the temporary's name, and the rows measured stay
mkdir pinned
if chattr +i pinned 2>/dev/null; then
    chattr -i pinned
    "$ACCUBENCH" run --backend cpu --model tiny --effective 64 --micro pow2 --budget-s 0.5 \
        --max-noise 0.001 --trace-steps 0 --rounds off --csv pinned/run.csv >pinned.txt 2>&1 &
    pid=$!
    for _ in $(seq 1 1800); do
        [ -f pinned/run.csv ] && [ "$(rows pinned/run.csv)" -ge 1 ] && break
        sleep 0.1
    done
    chattr +i pinned
    wait $pid
    rc=$?
    chattr -i pinned
    check "[ $rc -eq 2 ] && grep -q 'cannot write pinned/run.csv.tmp.[0-9]*: Permission denied' pinned.txt &&
        ! grep -q 'regular file of its own' pinned.txt && [ \"\$(rows pinned/run.csv)\" -ge 1 ]" \
        "an immutable folder: exit 2 (got $rc), the kernel's reason, the rows kept: $(grep accubench: pinned.txt)"
else
    echo "skipped: chattr +i does not work here (needs root and a file system with the flags)"
fi

# ---- 4. a name that fits and whose temporary does not: refused before a
# run measures (NAME.curves.csv's temporary failed after the first row)
# (NAME.csv and its temporary fit, whatever the pid's digits; NAME.curves.csv
# fits and its temporary does not)
max=$(getconf NAME_MAX .)
long=$(printf "%$((max - 16))s" "" | tr ' ' n)
"$ACCUBENCH" run $bare --micro 4,8 --train-steps 2 --csv "$long.csv" >out.txt 2>err.txt
check '[ $? -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "the name is too long" err.txt &&
    ! grep -q "^config" err.txt && [ -z "$(ls | grep nnnn)" ]' \
    "a curves file whose temporary cannot be named: refused first, nothing written: $(cat err.txt)"

# ---- 5. a file-size limit (ulimit -f) whose signal nobody ignores: the
# write fails as on a full disk (SIGXFSZ killed the run mid-write, its
# temporary and lock left, its row lost, nothing said)
sh -c 'ulimit -f 8; exec "$0" "$@"' "$ACCUBENCH" run $bare --micro 2,4,8 --rounds off \
    --csv limited.csv >out.txt 2>err.txt
rc=$?
check "[ $rc -eq 2 ] && grep -q 'accubench: cannot write limited.csv: File too large' err.txt &&
    grep -q 'accubench: [0-9]* of the [0-9]* rows* measured' err.txt &&
    [ -z \"\$(ls | grep '^limited.csv.\(tmp\|lock\)')\" ]" \
    "a file-size limit: exit 2 (got $rc), said, no temporary or lock left: $(ls limited*) $(cat err.txt)"

# ---- 6. make readme-figures (scripts/readme_figures.sh), its run a
# stand-in (a fixture's CSV, a console table): both figures written, and a
# folder with room for the table and not the chart keeps the earlier pair
# whole (written in place, the chart was cut short beside a new table)
cat >fake.sh <<FAKE
#!/bin/sh
case \$1 in
run) cp "$ACCUBENCH_ROOT/tests/fixtures/abc.csv" "\$7"
     echo "accubench on a stand-in"; cat "$ACCUBENCH_ROOT/docs/img/abc-console.txt"; echo "after" ;;
*) exec "$ACCUBENCH" "\$@" ;;
esac
FAKE
chmod +x fake.sh
figures=$ACCUBENCH_ROOT/scripts/readme_figures.sh
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "skipped: make readme-figures: no gnuplot"
else
    ACCUBENCH_BIN=$ACCUBENCH sh "$figures" "$PWD/fake.sh" readme img >out.txt 2>err.txt
    check '[ $? -eq 0 ] && cmp -s img/abc-console.txt "$ACCUBENCH_ROOT/docs/img/abc-console.txt" &&
        [ -s img/abc-wallclock.png ] && [ -z "$(ls img | grep tmp)" ]' \
        "the table and the chart written: $(ls img) $(cat err.txt)"
    mkdir small
    if mount -t tmpfs -o size=64k tmpfs small 2>/dev/null; then
        echo "an earlier table" >small/abc-console.txt
        echo "an earlier chart" >small/abc-wallclock.png
        cp small/abc-console.txt earlier.txt && cp small/abc-wallclock.png earlier.png
        # 8 KiB left: a page for the table's temporary, not the chart's
        avail=$(df -k small | awk 'NR == 2 { print $4 }')
        dd if=/dev/zero of=small/fill bs=1k count=$((avail - 8)) 2>/dev/null
        ACCUBENCH_BIN=$ACCUBENCH sh "$figures" "$PWD/fake.sh" readme small >out.txt 2>err.txt
        rc=$?
        check "[ $rc -eq 1 ] && [ \"\$(wc -l <err.txt)\" -eq 1 ] &&
            grep -q '^make readme-figures: cannot write small/abc-wallclock.png: No space left on device; .* as they were' err.txt &&
            cmp -s small/abc-console.txt earlier.txt && cmp -s small/abc-wallclock.png earlier.png &&
            [ -z \"\$(ls small | grep tmp)\" ]" \
            "a full folder keeps the earlier figures, one line (exit $rc): $(cat err.txt) $(ls small)"
        umount small
    else
        echo "skipped: make readme-figures on a full folder: mounting a tmpfs needs root"
    fi
fi
exit $fail
