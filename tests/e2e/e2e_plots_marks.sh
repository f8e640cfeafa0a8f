#!/bin/sh
# What a chart draws is visible and says what it is: read from the SVG
# gnuplot wrote. A measured point is never painted over (gnuplot's pt -1
# draws a white disc: under an interval bar it blanked every point of the
# wall-clock and throughput lines). A log axis fits what it draws, not the
# decades around it (a 1.3x spread once sat in a tenth of a 10..100 ms
# chart), and keeps every point and bar inside.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
root=${ACCUBENCH_ROOT:?}
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "SKIP e2e_plots_marks: gnuplot not installed"
    exit 0
fi

# blanked SVG: how many places have a white mark drawn last (gnuplot rings
# each filled point with a white halo, then draws the point over it).
blanked() {
    awk "match(\$0, /<use xlink:href='#gpPt[0-9]+' transform='translate\\([0-9.,]+\\)/) {
            at = substr(\$0, RSTART, RLENGTH); sub(/.*translate/, \"\", at)
            last[at] = index(\$0, \"color='white'\") ? \"white\" : \"colour\"
         }
         END { n = 0; for (a in last) if (last[a] == \"white\") n++; print n }" "$1"
}

# frontier.csv has the 95% interval of every row: the charts draw its bars.
cp "$root/tests/fixtures/frontier.csv" f.csv
sh "$root/scripts/plots.sh" f.csv >plots.out 2>&1 || echo "FAILED: plots.sh: $(cat plots.out)"
for c in wallclock throughput frontier; do
    check 'grep -q "<use xlink:href=.#gpPt" f.$c.svg' "the $c chart draws no points"
    n=$(blanked f.$c.svg)
    check '[ "$n" = 0 ]' "the $c chart paints white over $n of its points"
done

# yrange CHART: "MIN MAX DATA_MIN DATA_MAX" of its y axis, as gnuplot drew it
yrange() {
    gnuplot -e "csv='f.csv'; out='y'" "$root/plots/$1.gp" \
        -e 'print sprintf("%g %g %g %g", GPVAL_Y_MIN, GPVAL_Y_MAX, GPVAL_DATA_Y_MIN, GPVAL_DATA_Y_MAX)' 2>&1
}
for c in wallclock throughput frontier; do
    r=$(yrange $c)
    check 'echo "$r" | awk "NF != 4 || \$2 / \$1 > 2.5 || \$1 > \$3 || \$2 < \$4 { exit 1 }"' \
        "the $c chart's y axis (min max, data min max: $r) does not fit its data"
done
exit $fail
