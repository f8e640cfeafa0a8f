#!/bin/sh
# No character of a path or of a CSV's text is ever code: charts
# (scripts/plots.sh) for CSVs named with quotes, backslashes, newlines,
# $(...), backquotes, ';' and gnuplot's own system("..."), and for a CSV
# whose cells and metadata say the same, run nothing they name and land
# exactly where they were asked to. Needs gnuplot. The program's report
# into such folders: e2e_report_hostile.sh (this script runs no C, so the
# sanitized pass leaves it out).
set -u
root=$ACCUBENCH_ROOT
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
command -v gnuplot >/dev/null 2>&1 || { echo "gnuplot is missing (apt-get install gnuplot-nox)"; exit 1; }
charts=$(grep -l '^chart = ' "$root"/plots/*.gp | xargs -n1 basename | sed 's/\.gp$//')

. "$root/tests/e2e/hostile_names.sh" # the names, in "$@"; $P1..$P12
cp "$root/tests/fixtures/abc.csv" plain.csv
i=0
for name in "$@"; do
    i=$((i + 1))
    mkdir -- "$name" || { echo "FAILED: cannot make the folder for name $i"; fail=1; continue; }
    # the CSV itself under the hostile name, charted next to itself
    cp "$root/tests/fixtures/abc.csv" "$name/$name.csv"
    sh "$root/scripts/plots.sh" "$name/$name.csv" >log.txt 2>err.txt
    check "[ \$? -eq 0 ]" "plots.sh on name $i: $(cat err.txt)"
    for c in $charts; do
        check '[ -s "$name/$name.$c.png" ] && [ -s "$name/$name.$c.svg" ] || [ -s "$name/$name.$c.why" ]' \
            "name $i: chart $c (or why it was not drawn) not where it was asked"
    done
    check '[ -z "$(find . -name ".plots.*")" ]' "name $i: a private temporary folder was left"
done

# The CSV's own text: the device, a model name, a mode carrying code (a
# model and a mode in two CSVs, so that neither one's quote closes the
# other's).
hostile_csv() {
    awk -F, -v OFS=, -v col="$1" -v cell="$2" '
        /^# device:/ { print "# device: dev\" . system(\"touch $P9\") . \"'"'"'$(touch $P10)"; next }
        /^#/ || !h { if (!/^#/) h = 1; print; next }
        { $col = cell; print }
    ' "$root/tests/fixtures/abc.csv" > "$3"
}
# (no spaces: gnuplot's word lists would split the cell before the shell)
hostile_csv 3 "S';touch\${IFS}\$P11;'" cells-model.csv
hostile_csv 6 "async'\$(touch\${IFS}\$P12)'" cells-mode.csv
# Every command the charts build reaches the shell whole (no syntax error
# from a cell's quote). A mode with a quote is drawn; a model name with
# one is not (gnuplot's word lists take quotes as grouping), but it runs
# nothing either.
for f in cells-model cells-mode; do
    sh "$root/scripts/plots.sh" $f.csv >log.txt 2>err.txt
    check "! grep -q '^sh: ' err.txt" "$f: a shell saw a broken command: $(cat err.txt)"
done
check '[ -s cells-mode.wallclock.png ] && [ -s cells-mode.wallclock.svg ]' \
    "charts from a CSV with a hostile mode: $(cat err.txt)"

# A private folder a killed plots.sh left is removed by the next one; a
# live one's is not.
sh -c 'exit 0' & dead=$!
wait $dead
mkdir -p stale/.plots.$dead.abc stale/.plots.$$.xyz
cp plain.csv stale/
sh "$root/scripts/plots.sh" stale/plain.csv >log.txt 2>err.txt
check "[ ! -e stale/.plots.$dead.abc ] && [ -d stale/.plots.$$.xyz ]" \
    "stale private folders: $(ls -a stale | tr '\n' ' ')"

pwned=$(find . -name 'PWNED*' | tr '\n' ' ')
check '[ -z "$pwned" ]' "a name or a cell was run as code: $pwned"
exit $fail
