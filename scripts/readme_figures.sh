#!/bin/sh
# `make readme-figures`: README.md's table and chart from a real run, the
# abc profile on the CPU backend: its console table into
# IMG_DIR/abc-console.txt and its wall-clock chart into
# IMG_DIR/abc-wallclock.png. The CSV and the other charts stay in RUN_DIR.
#
#   sh scripts/readme_figures.sh ACCUBENCH RUN_DIR IMG_DIR
#
# The two figures are files the tree keeps. Written in place (sed >, cp),
# a disk that filled during the copy left the chart cut short beside the
# new table, the earlier pair lost. Both are written to temporaries beside
# them (NAME.tmp.PID) and checked first, then renamed: IMG_DIR holds the
# earlier pair or the new one. Exit: the run's or plots.sh's status where
# either fails, 1 where a figure cannot be written (one line; the figures
# as they were), else 0.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$1 run=$2 img=$3

rm -rf -- "$run" && mkdir -p -- "$run" "$img" || exit 2
"$bin" run --backend cpu --profile abc --csv "$run/abc.csv" >"$run/console.txt" || exit
sh "$root/scripts/plots.sh" "$run/abc.csv" "$run/abc" >/dev/null || exit

table=$img/abc-console.txt chart=$img/abc-wallclock.png
trap 'rm -f -- "$table.tmp.$$" "$chart.tmp.$$"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# one line: the tool's own reason (cp: error writing 'X': No space left on
# device), and what the folder holds
kept="$table and $chart are as they were"
failed() {
    printf 'make readme-figures: cannot write %s: %s; %s\n' "$1" "${2##*: }" "$kept" >&2
    exit 1
}
why=$(sed -n '/^model /,/^  ratio /p' "$run/console.txt" 2>&1 >"$table.tmp.$$") ||
    failed "$table" "$why"
# a console with no table (its format changed) would empty README's figure
[ -s "$table.tmp.$$" ] || failed "$table" "no table between 'model' and '  ratio' in $run/console.txt"
why=$(cp -- "$run/abc.wallclock.png" "$chart.tmp.$$" 2>&1) || failed "$chart" "$why"
# renames, in one folder: no room needed, each whole
why=$(mv -f -- "$table.tmp.$$" "$table" 2>&1) || failed "$table" "$why"
kept="$table is new, $chart as it was (its folder changed under the run)"
why=$(mv -f -- "$chart.tmp.$$" "$chart" 2>&1) || failed "$chart" "$why"
echo "$table and $chart from $run/abc.csv"
