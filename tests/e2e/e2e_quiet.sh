#!/bin/sh
# --quiet: no banner and no per-config table on stdout, only its last line,
# which names the CSV written (a script needs the path); errors still on
# stderr, and the CSV the same as without it.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
run() {
    "$ACCUBENCH" run --backend cpu --model tiny --effective 8 --micro 4,8 --steps 3 --warmup 1 \
        --trace-steps 1 "$@"
}

run --csv loud.csv >loud.out 2>loud.err
check '[ $? -eq 0 ]' "the plain run exits 0: $(cat loud.err)"
check '[ -s loud.out ]' "the plain run prints its table"

run --quiet --csv quiet.csv >quiet.out 2>quiet.err
check '[ $? -eq 0 ]' "the quiet run exits 0: $(cat quiet.err)"
check '[ "$(wc -l <quiet.out)" -eq 1 ] && grep -q "quiet\.csv$" quiet.out' \
    "--quiet prints one line naming the CSV, got: $(head -n 3 quiet.out)"
check '[ ! -s quiet.err ]' "--quiet run printed on stderr: $(cat quiet.err)"
# The same CSV: the same header and the same configs (the timings differ).
cfg() { grep -v '^#' "$1" | cut -d, -f1-8; }
check '[ -f quiet.csv ] && [ "$(cfg quiet.csv)" = "$(cfg loud.csv)" ]' "the quiet CSV has the same rows"
check '[ "$(grep -c "^[^#]" quiet.csv)" -eq 3 ]' "header and two rows"

# A profile line works as the flag does.
printf 'model = tiny\neffective = 8\nmicro = 8\nquiet = yes\n' >q.profile
"$ACCUBENCH" run --backend cpu --profile ./q.profile --steps 2 --warmup 1 --trace-steps 0 \
    --csv p.csv >p.out 2>p.err
check '[ $? -eq 0 ] && [ "$(wc -l <p.out)" -eq 1 ] && grep -q "p\.csv$" p.out' \
    "quiet = yes in a profile leaves only the CSV's line: $(head -n 3 p.out)"

# Errors still reach stderr.
mkdir ro && touch ro/file
run --quiet --out ro/file/sub >err.out 2>err.err
rc=$?
check '[ $rc -eq 2 ]' "an unwritable --out exits 2 under --quiet (got $rc)"
check '[ ! -s err.out ]' "nothing on stdout for the error"
check '[ -s err.err ]' "the error is on stderr"
exit $fail
