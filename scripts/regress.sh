#!/bin/sh
# `make regress BASE=REV`: is this tree slower than revision REV? Both
# programs run the same profile RUNS times each, alternated in ABBA order
# (base new new base base new ...), so that a machine that drifts during
# the runs falls on both sides alike; then `accubench compare` takes each
# side's runs together, the run as the unit, so that its intervals hold
# the machine's change from run to run (docs/charts-and-reports.md).
#
#   sh scripts/regress.sh ACCUBENCH BASE RUNS PROFILE OUT_DIR [BASE_BIN]
#
# BASE: a git revision of this repository, built apart under
# OUT_DIR/base-src (its own build folder; nothing installed). BASE_BIN: a
# base program already built, instead of BASE. PROFILE: a profile name or
# file (default abc), read from this tree for both programs. Every run's
# CSV and log, and compare's table, stay in OUT_DIR. Exit: compare's (0
# nothing slower, 1 a config slower or stopped running), or 2 on bad input
# (one line).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
. "$here/knobs.sh"
bin=$1 base=$2 runs=${3:-3} profile=${4:-abc} out=$5 base_bin=${6:-}
built_base=
bad() { echo "make regress: $*" >&2; exit 2; }
knob_count RUNS "$runs"
[ "$runs" -ge 2 ] || bad "RUNS=$runs: two runs a side at least (their spread is the interval)"
case $profile in
*/* | *.profile) profile_file=$profile ;;
*) profile_file=$root/profiles/$profile.profile ;;
esac
[ -r "$profile_file" ] || bad "PROFILE=$profile: no such profile ($profile_file)"
case $profile_file in /*) ;; *) profile_file=$PWD/$profile_file ;; esac
case $out in *,*) bad "$out: a folder name without commas (compare reads a list of runs)" ;; esac
# the base is checked before anything is made: a refused one leaves no folder
if [ -n "$base_bin" ]; then
    [ -x "$base_bin" ] || bad "BASE_BIN=$base_bin: not a program"
else
    [ -n "$base" ] || bad "name the base: BASE=REV (a git revision) or BASE_BIN=PROGRAM"
    rev=$(git -C "$root" rev-parse --verify --quiet "$base^{commit}") ||
        bad "BASE=$base: not a revision of this repository"
fi
mkdir -p "$out" || bad "cannot make $out"

if [ -n "$base_bin" ]; then
    echo "make regress: base $base_bin"
else
    src=$out/base-src
    echo "make regress: base $base ($rev), built in $src"
    rm -rf "$src" && mkdir -p "$src" || bad "cannot make $src"
    git -C "$root" archive --format=tar "$rev" | tar -x -C "$src" ||
        bad "BASE=$base: its files could not be written to $src"
    # its own make, warnings not errors (an older tree on a newer
    # compiler), nothing installed: this tree's set-up stands for both.
    # MAKEFLAGS emptied: the variables given to this make are this tree's,
    # and the older Makefile would export (and expand) them.
    if ! MAKEFLAGS= make -C "$src" --no-print-directory -j "$(nproc)" ACCUBENCH_NO_INSTALL=1 \
        WERROR=0 build/accubench >"$out/base-build.log" 2>&1; then
        tail -n 5 "$out/base-build.log" >&2
        echo "make regress: BASE=$base did not build (log: $out/base-build.log)" >&2
        exit 2
    fi
    base_bin=$src/build/accubench built_base=1
fi

# ABBA: pair k (0-based) runs base first where k is even, new first where
# it is odd.
total=$((2 * runs)) done_runs=0 base_list= new_list=
for k in $(seq 0 $((runs - 1))); do
    if [ $((k % 2)) -eq 0 ]; then order="base new"; else order="new base"; fi
    for side in $order; do
        done_runs=$((done_runs + 1))
        csv=$out/$side-$((k + 1)).csv
        if [ "$side" = base ]; then prog=$base_bin; else prog=$bin; fi
        echo "make regress: run $done_runs of $total: $side ($csv)"
        rm -f "$csv"
        "$prog" run --profile "$profile_file" --backend auto --csv "$csv" \
            >"${csv%.csv}.log" 2>&1
        rc=$?
        # a run that failed a config still holds its rows: compare says
        # which; one that wrote nothing cannot be compared
        if [ "$rc" -eq 130 ] || ! grep -q '^[^#]' "$csv" 2>/dev/null; then
            echo "make regress: the $side run stopped (exit $rc; log: ${csv%.csv}.log)" >&2
            exit 2
        fi
        if [ "$side" = base ]; then base_list=$base_list${base_list:+,}$csv
        else new_list=$new_list${new_list:+,}$csv; fi
    done
done

"$bin" compare "$base_list" "$new_list" >"$out/compare.md"
rc=$?
cat "$out/compare.md"
echo "make regress: runs and table in $out (compare.md)"
# the base built here stays: BASE_BIN reruns against it without a rebuild
[ -n "$built_base" ] && echo "make regress: again without rebuilding the base: BASE_BIN=$base_bin"
exit "$rc"
