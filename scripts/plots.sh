#!/bin/sh
# Renders every chart in plots/ for one CSV, as PNG and SVG.
#
#   sh scripts/plots.sh [CSV [OUT_PREFIX]]
#
# CSV defaults to the newest results/*.csv (and says which). Charts land at
# OUT_PREFIX.NAME.png / .svg (a chart with nothing to draw: none, and its
# reason in OUT_PREFIX.NAME.why); OUT_PREFIX defaults to the CSV's path without
# .csv, i.e. next to the CSV. Exit: 0 all drawn, 1 a chart failed, 2 no CSV,
# a CSV that is not a regular file or not an accubench CSV (one line says
# why, as `accubench report` would), no gnuplot, or an output that is not a
# regular file. `make plots` and `accubench report` run this.
#
# No character of a path is ever code. gnuplot is a language (and -e is
# code too), so neither path is given to it: gnuplot runs in a private
# folder beside the charts, reads the CSV through a link with a fixed name
# (in.csv) and the chart scripts through another (plots), and writes
# fixed names (chart.NAME.png); this script then renames each chart to the
# path asked for. The paths themselves only ever pass through quoted shell
# variables, which are data.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)

csv=$(sh "$root/scripts/pick_csv.sh" "${1:-}") || exit 2
# The CSV is checked before anything opens it. A regular file: a FIFO
# would hold the first read for ever (and each chart reads the file
# again), a device reads as endless or empty, and the charts would land
# beside it (/dev/null.wallclock.why).
if [ -d "$csv" ]; then
    printf 'plots: %s is a folder, not a CSV file\n' "$csv" >&2
    exit 2
elif [ -p "$csv" ]; then
    printf 'plots: %s is a named pipe, not a CSV file (each chart reads it again)\n' "$csv" >&2
    exit 2
elif [ ! -f "$csv" ]; then
    printf 'plots: %s is a device or socket, not a CSV file\n' "$csv" >&2
    exit 2
fi
# Then its text, refused as `accubench report` refuses it, in one line: no
# header row, a row cut short, a column the charts need. `accubench
# --check-csv` reads it as the report does (`make plots` builds it first);
# a program too old to know --check-csv says so on stderr, and a refusal
# comes on its stdout, so only a refusal stops the charts.
need="backend device model dtype mode reduction effective_batch micro_batch accum_steps status
      step_ms_median samples_per_s"
bin=${ACCUBENCH_BIN:-$root/build/accubench}
why=""
if [ -f "$bin" ] && [ -x "$bin" ]; then
    # shellcheck disable=SC2086 # the column names are words
    why=$("$bin" --check-csv "$csv" $need 2>/dev/null)
fi
if [ -n "$why" ]; then
    printf 'plots: %s\n' "$why" >&2
    exit 2
fi
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "plots: gnuplot not found (install gnuplot-nox)" >&2
    exit 2
fi
out=${2:-${csv%.csv}}
case $out in
    */*) folder=${out%/*}; folder=${folder:-/} ;;
    *) folder=. ;;
esac
case $csv in
    /*) csv_abs=$csv ;;
    *) csv_abs=$PWD/$csv ;;
esac

# Chart scripts are the ones that name their chart; the rest are shared parts.
charts=""
for gp in "$root"/plots/*.gp; do
    grep -q '^chart = ' "$gp" && charts="$charts $(basename "$gp" .gp)"
done

# Every output checked before any chart is drawn: absent or a regular file
# (a rename would replace a device or a FIFO; it cannot replace a folder).
if [ ! -d "$folder" ]; then
    printf 'plots: folder %s does not exist\n' "$folder" >&2
    exit 2
fi
for name in $charts; do
    for ext in png svg why; do
        f="$out.$name.$ext"
        if [ -e "$f" ] && [ ! -f "$f" ]; then
            printf 'plots: %s exists and is not a regular file (refused)\n' "$f" >&2
            exit 2
        fi
    done
done

# The private folder sits beside the charts, so each rename stays on one
# file system and a reader sees a whole chart or none. Its name carries our
# pid: one whose process is gone (killed before its trap ran) is removed.
# (Where neither /proc nor ps can tell, every process counts as alive.)
alive() {
    if [ -d /proc/self ]; then [ -d "/proc/$1" ]
    elif command -v ps >/dev/null 2>&1; then ps -p "$1" >/dev/null 2>&1
    else true; fi
}
for old in "$folder"/.plots.*.*; do
    pid=${old##*/.plots.}; pid=${pid%%.*}
    case $pid in '' | *[!0-9]*) continue ;; esac
    [ -d "$old" ] && ! alive "$pid" && rm -rf -- "$old"
done
# A folder that takes no new file (read-only, immutable) is said as the
# other refusals are, with mktemp's reason, not its template.
if ! work=$(mktemp -d "$folder/.plots.$$.XXXXXX" 2>&1); then
    printf 'plots: cannot write the charts in folder %s: %s\n' "$folder" "${work##*: }" >&2
    exit 2
fi
trap 'rm -rf -- "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
ln -s -- "$csv_abs" "$work/in.csv" && ln -s -- "$root/plots" "$work/plots" || exit 2
# The loss curves of --train-steps beside the CSV (NAME.curves.csv), where
# curves.gp finds them: in.curves.csv beside in.csv.
curves_csv=${csv_abs%.csv}.curves.csv
if [ -f "$curves_csv" ]; then ln -s -- "$curves_csv" "$work/in.curves.csv" || exit 2; fi
# "Is E right?": the time-to-target table, computed by accubench itself
# (plan --time-to-target --table), so that its chart shows the report's
# numbers: in.goodput.csv, where time_to_target.gp finds it, and the
# curves it kept (--curve-table): in.goodput_curves.csv. The report
# passes its own binary, target loss and cap; make plots uses the build's.
if [ -f "$curves_csv" ] && [ -x "$bin" ]; then
    set -- plan --time-to-target "$work/in.csv"
    if [ -n "${ACCUBENCH_TARGET_LOSS:-}" ]; then set -- "$@" --target-loss "$ACCUBENCH_TARGET_LOSS"; fi
    if [ -n "${ACCUBENCH_MEM_CAP:-}" ]; then set -- "$@" --mem-cap "$ACCUBENCH_MEM_CAP"; fi
    "$bin" "$@" --table >"$work/in.goodput.csv" 2>/dev/null || rm -f -- "$work/in.goodput.csv"
    # the curves behind it, each E at its best rate (loss_to_target.gp)
    "$bin" "$@" --curve-table >"$work/in.goodput_curves.csv" 2>/dev/null ||
        rm -f -- "$work/in.goodput_curves.csv"
fi

# Whether gnuplot's file is whole: it exits 0 when a write of it fails (a
# full disk cuts a PNG short and leaves an SVG or a reason empty), and a
# cut file must not replace a chart drawn before. A PNG ends with its IEND
# chunk, an SVG with its closing tag, a reason with its newline.
whole() {
    case $1 in
        *.png) [ "$(tail -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 49454e44ae426082 ] ;;
        *.svg) tail -c 16 "$1" | grep -q '</svg>' ;;
        *) [ -s "$1" ] && [ "$(tail -c 1 "$1" | od -An -tx1 | tr -d ' ')" = 0a ] ;;
    esac
}

# A chart with nothing to draw exits 3 with its reason in chart.NAME.why:
# no placeholder is made, an older chart of that name is removed, and the
# reason lands at OUT.NAME.why for the report to give.
failed=0
for name in $charts; do
    # The C locale for the numbers: under de_DE gnuplot and the awk it runs
    # write and read 1,5 for 1.5 (frontier.gp failed, curves.gp lost its range).
    # gnuplot's note that it widened a one-point axis ("empty x range") is
    # no news to the reader: kept out of stderr, which keeps everything else.
    (cd "$work" && LC_ALL=C gnuplot -e "csv='in.csv'; out='chart'" "plots/$name.gp") \
        2>"$work/chart.$name.err"
    rc=$?
    grep -v '^Warning: empty [xy]2\{0,1\} range \[.*\], adjusting to' "$work/chart.$name.err" >&2
    # what the outcome delivers: a chart's two files, or a reason alone
    # (beside the empty file its refusal left open)
    cut=""
    case $rc in 0) made="png svg" ;; 3) made="why" ;; *) made="" ;; esac
    for ext in $made; do
        f="$work/chart.$name.$ext"
        if [ -f "$f" ] && ! whole "$f"; then cut="$cut $name.$ext"; fi
    done
    if [ -n "$cut" ]; then
        echo "plots: $name failed: cut short in writing (a full disk?):$cut" >&2
        failed=1
    elif [ "$rc" = 0 ] && mv -f -- "$work/chart.$name.png" "$out.$name.png" &&
        mv -f -- "$work/chart.$name.svg" "$out.$name.svg"; then
        rm -f -- "$out.$name.why"
        printf 'plots: wrote %s %s\n' "$out.$name.png" "$out.$name.svg"
    elif [ "$rc" = 3 ] && [ -f "$work/chart.$name.why" ] &&
        rm -f -- "$out.$name.png" "$out.$name.svg" &&
        mv -f -- "$work/chart.$name.why" "$out.$name.why"; then
        printf 'plots: %s not drawn: %s\n' "$name" "$(tr '\n' ' ' < "$out.$name.why" | sed 's/ *$//')"
    else
        echo "plots: $name failed" >&2
        failed=1
    fi
done
exit $failed
