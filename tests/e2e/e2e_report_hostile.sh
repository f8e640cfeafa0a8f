#!/bin/sh
# No character of a path is ever code in the program's report: `report
# --out` into folders named with quotes, backslashes, newlines, $(...),
# backquotes, ';' and gnuplot's own system("...") (tests/e2e/hostile_names.sh),
# for a CSV of the same name and for a plain one, runs nothing they name
# and lands the report and its charts exactly where asked. Needs gnuplot.
# A report killed (SIGTERM to it alone) while its charts are drawn takes
# them along: no chart lands after it is gone, no private folder stays.
# The charts alone under such names: e2e_plots_hostile.sh.
set -u
root=$ACCUBENCH_ROOT
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
command -v gnuplot >/dev/null 2>&1 || { echo "gnuplot is missing (apt-get install gnuplot-nox)"; exit 1; }
. "$root/tests/e2e/hostile_names.sh" # the names, in "$@"; $P1..$P12
cp "$root/tests/fixtures/abc.csv" plain.csv
i=0
for name in "$@"; do
    i=$((i + 1))
    # an output folder that exists (the code before the output checks
    # refused a missing one), holding the CSV under the same name
    mkdir -p -- "$name/rep" || { echo "FAILED: cannot make the folder for name $i"; fail=1; continue; }
    cp "$root/tests/fixtures/abc.csv" "$name/$name.csv"
    "$ACCUBENCH" report "$name/$name.csv" --out "$name/rep" >log.txt 2>err.txt
    check "[ \$? -eq 0 ] && [ ! -s err.txt ]" "report --out name $i: $(cat err.txt)"
    check '[ -s "$name/rep/$name.md" ] && [ -s "$name/rep/$name.html" ]' \
        "name $i: report files not where asked"
    check '[ "$(grep -c "<svg" "$name/rep/$name.html")" -ge 4 ]' \
        "name $i: the report's charts were not drawn"
    # a plain CSV's report into two of the folders (a quote, a newline):
    # the same path code as above with a plain file name
    case $i in 1 | 6)
        "$ACCUBENCH" report plain.csv --out "$name/rep" >log.txt 2>err.txt
        check "[ \$? -eq 0 ] && [ ! -s err.txt ]" "report plain.csv --out name $i: $(cat err.txt)"
        check '[ -s "$name/rep/plain.md" ] && [ -s "$name/rep/plain.wallclock.svg" ]' \
            "name $i: the plain CSV's report and charts are not where asked" ;;
    esac
    check '[ -z "$(find . -name ".plots.*")" ]' "name $i: a private temporary folder was left"
done
# SIGTERM to the report as its charts start: plots.sh, its child, ends too
mkdir killed
"$ACCUBENCH" report plain.csv --out killed >/dev/null 2>kill.err &
pid=$!
for _ in $(seq 1 1200); do # up to 60 s: a loaded or sanitized build is slow
    [ -n "$(find killed -name '.plots.*')" ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.05
done
kill -TERM $pid
wait $pid
rc=$?
at_kill=$(find killed -name '*.png' | wc -l)
sleep 4 # an orphaned plots.sh draws a chart in well under a second
check "[ $rc -eq 143 ] && [ \$(find killed -name '*.png' | wc -l) -le \$(( at_kill + 1 )) ]" \
    "report killed while charting (rc $rc): charts still landed after it was gone: $(ls killed | tr '\n' ' ')"
check '[ -z "$(find killed -name ".plots.*")" ] && [ ! -e killed/plain.md ]' \
    "report killed while charting: a private folder or a report was left: $(ls -a killed | tr '\n' ' ')"

# "." on PATH: an sh, a gnuplot and an awk in the folder the report is
# asked from run nothing; the charts are drawn by the real ones.
mkdir -p dot
for tool in sh gnuplot awk; do
    printf '#!/bin/sh\ntouch "%s/PWNED_by_%s"\nexit 1\n' "$PWD" "$tool" >"dot/$tool"
    chmod +x "dot/$tool"
done
cp plain.csv dot/plain.csv
(cd dot && PATH=".:$PATH" "$ACCUBENCH" report plain.csv >log.txt 2>err.txt)
check "[ \$? -eq 0 ] && [ ! -s dot/err.txt ] && [ \"\$(grep -c '<svg' dot/plain.html)\" -ge 4 ]" \
    "report with . on PATH: $(cat dot/err.txt)"

pwned=$(find . -name 'PWNED*' | tr '\n' ' ')
check '[ -z "$pwned" ]' "a name was run as code: $pwned"
exit $fail
