#!/bin/sh
# Renders every chart in plots/ for one CSV, as PNG and SVG.
#
#   sh scripts/plots.sh [CSV [OUT_PREFIX]]
#
# CSV defaults to the newest results/*.csv (and says which). Charts land at
# OUT_PREFIX.NAME.png / .svg; OUT_PREFIX defaults to the CSV's path without
# .csv, i.e. next to the CSV. Exit: 0 all drawn, 1 a chart failed, 2 no CSV
# or no gnuplot. `make plots` and `accubench report` run this.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)

csv=$(sh "$root/scripts/pick_csv.sh" "${1:-}") || exit 2
case $csv in *"'"*) echo "plots: a path with a single quote is not supported: $csv" >&2; exit 2 ;; esac
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "plots: gnuplot not found (install gnuplot-nox)" >&2
    exit 2
fi
out=${2:-${csv%.csv}}

failed=0
# Chart scripts are the ones that name their chart; the rest are shared parts.
for gp in $(grep -l '^chart = ' "$root"/plots/*.gp); do
    name=$(basename "$gp" .gp)
    if gnuplot -e "csv='$csv'; out='$out'" "$gp"; then
        echo "plots: wrote $out.$name.png $out.$name.svg"
    else
        echo "plots: $name failed" >&2
        failed=1
    fi
done
exit $failed
