#!/bin/sh
# A row added to a C table reaches the charts, the report and the PyTorch
# peer with nothing else edited: they read the values from the CSV (its
# rows and metadata) or from the program, never from a list of names of
# their own. A scratch copy of the tree gets a trial execution mode (a row
# of MODES) and a trial exact reduction (a row of REDUCTIONS); its program
# is rebuilt from the build's objects (only the two tables and what links
# them recompile: seconds); a small sweep over both draws the modes chart
# with the trial mode in its key, the curves chart with the trial
# reduction as a correct (solid) line, and the peer's table reader
# (bench/peers/peer_reductions.py) reads the trial reduction and its rule.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAILED: $2"; fail=1; fi; }
root=${ACCUBENCH_ROOT:?}
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "SKIP e2e_table_rows: gnuplot not installed"
    exit 0
fi
build=${ACCUBENCH_BUILD:-build}
case $build in /*) ;; *) build=$root/$build ;; esac

# The tree without its outputs, then the build's objects with their times
# kept, so that make rebuilds only what the new rows change.
mkdir scratch
(cd "$root" && tar cf - --exclude=./.git --exclude=./results --exclude=./build \
    --exclude="./$(basename "$build")" .) | (cd scratch && tar xf -) || exit 1
if [ -d "$build" ]; then
    (cd "$build" && tar cf - --exclude=./tests --exclude=./asan --exclude=./fuzz .) |
        (mkdir scratch/build && cd scratch/build && tar xf -) || exit 1
fi

# add_row FILE ARRAY ROW: ROW as the last row of the static table ARRAY[]
# (after its designated rows, so it takes the next index).
add_row() {
    awk -v array="$2" -v row="$3" '
        index($0, " " array "[] = {") { inside = 1 }
        inside && $0 == "};" { print "    " row; inside = 0 }
        { print }' "$1" >row.tmp && mv row.tmp "$1"
    grep -qF "$3" "$1" || { echo "FAILED: no $2[] table in $1"; exit 1; }
}
add_row scratch/harness/run/step/modes.c MODES \
    '{{"trial-mode", "a row added by a test"}, BK_ALLOC_HELD, 0, 0},'
add_row scratch/harness/util/reduction.c REDUCTIONS \
    '{{"trial-sum", "a row added by a test"}, 1, REDUCTION_BY_WINDOW},'
(cd scratch && make -j2 BUILD=build build/accubench) >make.txt 2>&1
check '[ $? -eq 0 ]' "the scratch tree builds with the two rows: $(tail -5 make.txt)"
prog=$PWD/scratch/build/accubench
[ -x "$prog" ] || exit 1

"$prog" run --backend cpu --model tiny --effective 8 --micro 2,8 --mode async,trial-mode \
    --reduction sum,trial-sum,no-scale --optimizer sgd --lr 1 --steps 2 --warmup 0 \
    --trace-steps 0 --noise-windows 0 --rounds off --budget-s 0.05 --min-samples 2 \
    --train-steps 4 --csv run.csv --quiet >run.txt 2>err.txt
check '[ $? -eq 0 ]' "the sweep over the trial rows runs: $(cat err.txt)"
check 'grep -q "^# modes: async (.*); trial-mode (a row added by a test)" run.csv' \
    "the CSV's metadata lists the trial mode"
check '[ $(grep -c ",trial-mode,trial-sum," run.csv) -eq 2 ]' "a row per split of the trial pair"

# The charts, as the report draws them (scripts/plots.sh).
ACCUBENCH_ROOT="$PWD/scratch" "$prog" report run.csv >report.txt 2>&1
check '[ $? -eq 0 ]' "report exits 0: $(cat report.txt)"
check '[ -s run.modes.svg ] && grep -q ">trial-mode</text>" run.modes.svg' \
    "the modes chart's key names the trial mode"
check 'grep -q ">async</text>" run.modes.svg' "beside async"
check 'grep -q "sum: solid; trial-sum: solid; no-scale: dashed; a line" run.curves.svg' \
    "the curves chart draws the trial reduction as a correct one: $(grep -o '[a-z-]*: solid[^<]*' run.curves.svg)"
check 'grep -q "trial-mode" run.md' "the report shows the trial mode"
check 'grep -q "rounding gap .*: .*; no-scale .* off" run.md && ! grep -q "trial-sum .* off" run.md' \
    "the report counts the trial reduction among the correct splits, no-scale among the wrong"

# The peer reads the trial reduction from the program's table.
if command -v python3 >/dev/null 2>&1; then
    ACCUBENCH="$prog" python3 -c "
import sys
sys.path.insert(0, '$root/bench/peers')
import peer_reductions
rows = peer_reductions.load()
print(rows['trial-sum'], list(rows))" >peer.txt 2>&1
    check 'grep -qF "(True, ('"'"'window'"'"',)) ['"'"'sum'"'"', '"'"'mean-of-means'"'"', '"'"'no-scale'"'"', '"'"'trial-sum'"'"']" peer.txt' \
        "the peer's reader reads the trial reduction, exact, 1/window: $(cat peer.txt)"
fi
exit $fail
