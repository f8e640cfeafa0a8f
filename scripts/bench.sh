#!/bin/sh
# `make bench`: one sweep on the best backend here, then the charts and the
# report of that run, its verdicts and A/A checks as the report states
# them, their paths, and last a line for each A/A check that failed.
#
#   sh scripts/bench.sh ACCUBENCH [PROFILE [OUT_DIR]]
#
# Without PROFILE the sweep is sized for what runs it: the default profile
# where a GPU answers (the CUDA backend opens), else profiles/cpu.profile
# (four to eight minutes on a 2-core VM; the default would take over ten).
# It says which and why. PROFILE=default (`make bench-full`) runs the full
# default anywhere. Exit: the run's status (0, 1 a config failed, 2, 130
# interrupted), or 1 when the report could not be made.
set -u
bin=$1
profile=${2:-}
out=${3:-results}

if [ -n "$profile" ]; then
    echo "make bench: profile $profile (asked for)"
else
    # The program's own question: does the CUDA backend open here? The
    # smallest memory probe answers it in well under a second either way.
    if "$bin" plan --find-max-micro --model tiny --backend cuda --effective 1 \
        --max-micro 1 >/dev/null 2>&1; then
        profile=default
        echo "make bench: profile default (a GPU answered)"
    else
        profile=cpu
        echo "make bench: profile cpu (no GPU answered: a sweep sized for a CPU," \
             "four to eight minutes on 2 cores; make bench-full runs the full default profile)"
    fi
fi

mkdir -p "$out" || exit 2
# The run's CSV is the one file in OUT_DIR that was not there before it
# (the program names it; its output goes straight to the terminal, where
# the progress line and the table share the screen). Ctrl-C stops the
# sweep, whose rows stay on disk, but not this script: the report of the
# rows measured still follows.
before=$(ls "$out"/*.csv 2>/dev/null)
trap : INT
"$bin" run --profile "$profile" --backend auto --out "$out"
rc=$?
trap - INT
csv=$(ls -t "$out"/*.csv 2>/dev/null | while read -r f; do
    printf '%s\n' "$before" | grep -qxF "$f" || { echo "$f"; break; }
done)
if [ -z "$csv" ] || ! grep -q '^[^#]' "$csv"; then
    exit "$rc"
fi
# The report prints its verdicts and A/A checks as it states them, then a
# line per A/A pair the rule called apart: those lines are held back to
# end the console, below the paths, where nothing scrolls them away. An
# A/A pair at 95% separates by chance now and then, so a failed one warns
# and says how to check again; it does not fail make bench.
said=$("$bin" report "$csv")
report_rc=$?
failed_lead="A/A check FAILED" # aa_check.h's AA_FAILED_LEAD
[ -z "$said" ] || printf '%s\n' "$said" | grep -v "^$failed_lead"
if [ "$report_rc" -ne 0 ]; then
    [ "$rc" -ne 0 ] || rc=1
    exit "$rc"
fi

# Then where everything of this run is.
prefix=${csv%.csv}
echo
echo "this run:"
echo "  results  $csv"
for png in "$prefix".*.png; do
    [ -f "$png" ] && echo "  chart    $png  (and ${png%.png}.svg)"
done
echo "  report   $prefix.md"
echo "  report   $prefix.html"
echo "  record   $prefix.json  (the rows typed and the verdicts, for programs)"
failed=$(printf '%s\n' "$said" | grep "^$failed_lead")
[ -z "$failed" ] || printf '\n%s\n' "$failed"
exit "$rc"
