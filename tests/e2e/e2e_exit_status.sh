#!/bin/sh
# The run's exit status is its answer to a script: 0 only where a config
# ran and nothing failed. A sweep where every config was over the memory
# cap or skipped measured nothing: exit 1 with one line saying why, and the
# rows that say so stay in the file.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
col() { awk -F, -v name="$1" '!/^#/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next } print $c }' "$2"; }
quick="--backend cpu --steps 2 --budget-s 0.05 --warmup 0 --trace-steps 0 --noise-windows 0"

# every config over the cap
"$ACCUBENCH" run $quick --model tiny --effective 8 --micro 2,4 --mem-cap 1K --csv oom.csv \
    >out.txt 2>err.txt
rc=$?
check '[ $rc -eq 1 ]' "every config over the cap: exit $rc, want 1: $(cat err.txt)"
check '[ "$(grep -c "^accubench:" err.txt)" -eq 1 ]' "one line on stderr: $(cat err.txt)"
check 'grep -qx "accubench: no config ran: 2 oom (each row.s note in oom.csv says why)" err.txt' \
    "the line says why: $(cat err.txt)"
check '[ "$(col status oom.csv | tr "\n" " ")" = "oom oom " ]' \
    "the rows stay: $(col status oom.csv | tr "\n" " ")"
check '! grep -q "^# unfinished" oom.csv' "the file is finished: $(grep '^# unfinished' oom.csv)"

# --quiet too: the line is the script's, not the console's
"$ACCUBENCH" run $quick --model tiny --effective 8 --micro 2 --mem-cap 1K --csv q.csv --quiet \
    >out.txt 2>err.txt
rc=$?
check '[ $rc -eq 1 ] && [ "$(cat err.txt)" = "accubench: no config ran: 1 oom (each row'"'"'s note in q.csv says why)" ]' \
    "quiet: exit $rc and the one line: $(cat err.txt)"

# every config skipped (a kind with nothing to recompute)
"$ACCUBENCH" run $quick --model linear:in=16,classes=4 --effective 4 --micro 4 \
    --recompute block --csv skip.csv >out.txt 2>err.txt
rc=$?
check '[ $rc -eq 1 ] && grep -q "no config ran: 1 skipped" err.txt' \
    "every config skipped: exit $rc: $(cat err.txt)"

# one ran beside a skipped one: an answer, exit 0
"$ACCUBENCH" run $quick --model linear:in=16,classes=4 --effective 4 --micro 4 \
    --recompute none,block --csv some.csv >out.txt 2>err.txt
rc=$?
check '[ $rc -eq 0 ] && ! grep -q "no config ran" err.txt' "one of two ran: exit $rc: $(cat err.txt)"

exit $fail
