#!/bin/sh
# What a first run shows: the header at once even into a file, "config i of
# N" with the time left on stderr as the sweep goes (the table on stdout
# untouched), and the dtype `auto` chose with the reason, on the console and
# in the CSV.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }

# Two configs of a second or two each, stdout into a file: the header must
# be there while the sweep still runs and before the first row (a file is
# block-buffered unless the program says otherwise; each row flushes it).
"$ACCUBENCH" run --backend cpu --model S --effective 8 --micro 4,8 --budget-s 0.5 --rounds off \
    --max-noise 0.001 --trace-steps 0 --csv slow.csv >slow.out 2>slow.err &
pid=$!
seen=no
for _ in $(seq 1 600); do
    if grep -q '^accubench ' slow.out 2>/dev/null; then
        kill -0 "$pid" 2>/dev/null && [ "$(grep -c '^S ' slow.out)" -eq 0 ] && seen=yes
        break
    fi
    sleep 0.05
done
wait "$pid"
rc=$?
check '[ $rc -eq 0 ]' "the sweep exits 0: $(cat slow.err)"
check '[ $seen = yes ]' "the header reached the file at once, before any row"
check 'grep -q "^config 1 of 2 (S fp32 4x2 async sum); " slow.err' \
    "config 1 of 2 on stderr: $(head -n 2 slow.err)"
check 'grep -q "^config 2 of 2 (S fp32 8x1 async sum); .* so far, about .* left$" slow.err' \
    "config 2 of 2 with the time left: $(cat slow.err)"
check '! grep -q "^config" slow.out' "no progress line among the table rows on stdout"
check '[ "$(grep -c "^S " slow.out)" -eq 2 ]' "two table rows on stdout"
# The note names what stopped the timing: no CPU meets a 0.001% target.
check '[ "$(grep -c "^cpu,.*stopped when the 0.5s budget ran out" slow.csv)" -eq 2 ]' \
    "the notes blame the budget: $(grep ^cpu, slow.csv | sed 's/.*,//')"

# --dtype auto (the default) on the CPU: fp32, and why.
check 'grep -qx "dtype auto: fp32, because the CPU backend is the fp32 reference (--dtype bf16 for bf16 storage)" slow.out' \
    "the console says which dtype auto chose: $(head -n 3 slow.out)"
check 'grep -qx "# dtype: fp32" slow.csv' "the CSV's dtype"
check 'grep -qx "# dtype_choice: dtype auto: fp32, because the CPU backend is the fp32 reference (--dtype bf16 for bf16 storage)" slow.csv' \
    "the CSV says why: $(grep dtype slow.csv)"
check 'grep -q "^cpu,.*,S,[0-9]*,fp32," slow.csv' "the rows are fp32"
"$ACCUBENCH" run --backend cpu --dtype fp32 --model tiny --effective 8 --micro 8 --steps 2 \
    --trace-steps 0 --csv asked.csv >asked.out 2>&1
check 'grep -qx "# dtype_choice: fp32, as asked" asked.csv' "a named dtype is recorded as asked"
check '! grep -q "dtype auto" asked.out' "no auto line when the dtype is named"
exit $fail
