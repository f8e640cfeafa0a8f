#!/bin/sh
# The console on a terminal, stdout and stderr on the same one (a pty from
# script(1)): the status line on stderr is cleared before any line goes to
# stdout, so every table row and the --dump line start a line of their own
# and never sit at the end of the status text (a line written while the
# status is up is glued to it and stays on the screen so).
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }

if ! script -q -c true /dev/null >/dev/null 2>&1; then
    echo "skipped: no script(1) that takes -q -c (util-linux) to give the run a terminal"
    exit 0
fi
script -q -c "\"$ACCUBENCH\" run --backend cpu --model tiny --effective 16 --micro 4,16 \
    --budget-s 0.2 --trace-steps 1 --csv tty.csv --dump tdump; echo \"rc=\$?\"" \
    /dev/null >tty.raw 2>&1
# What the screen keeps: each \r-separated piece, the erase-line code cut.
tr '\r' '\n' <tty.raw | sed 's/\x1b\[K//g' >tty.txt
check 'grep -q "^rc=0" tty.txt' "the run exits 0: $(tail -n 5 tty.txt)"
check 'grep -q "^config 1 of 2 (tiny fp32 4x4 async sum); " tty.txt' \
    "the status line is shown: $(head -n 12 tty.txt)"
check 'grep -q "^window dump: tdump$" tty.txt' \
    "the --dump line starts a line of its own: $(grep "window dump" tty.txt)"
check '! grep -q "so far.*window dump" tty.txt' \
    "the --dump line was glued to the status line: $(grep "window dump" tty.txt)"
check '[ "$(grep -c "^tiny  *async " tty.txt)" -eq 2 ]' \
    "two table rows, each at the start of a line: $(grep "async " tty.txt)"
exit $fail
