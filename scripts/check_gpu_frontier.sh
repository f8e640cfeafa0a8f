#!/bin/sh
# check-gpu's frontier stage: profiles/frontier-gpu on GPT-2 small alone
# (64 sequences a step, every recompute value) on the GPU, or, in a CPU
# rehearsal, profiles/frontier on tiny shapes; then plan --recommend from
# its rows for each model under CAP, into OUT/frontier-plan.txt (the last
# table prints it). Exit: 0, or the run's or a plan's status when it is 2
# (bad input) or the run's 1 (a failed config or check); a plan that finds
# nothing within the cap (1) is a finding, not a failure.
# Usage: scripts/check_gpu_frontier.sh OUT_DIR ACCUBENCH BACKEND CAP
set -u
export ACCUBENCH_NO_INSTALL=1
[ $# -eq 4 ] || { echo "usage: $0 OUT_DIR ACCUBENCH BACKEND CAP" >&2; exit 2; }
out=$1 bin=$2 backend=$3 cap=$4
# The last table prints frontier-plan.txt wherever it is: an earlier run's
# must not stand for this one if this one fails before its plans.
rm -f "$out/frontier-plan.txt"
if [ "$backend" = cpu ]; then
    set -- --profile frontier --model tiny,gpt-tiny --effective 16 --micro 4,16
    effective=16 models="tiny gpt-tiny"
else
    set -- --profile frontier-gpu --model gpt-small
    effective=64 models="gpt-small"
fi
# A budget the stage can meet inside check-gpu's 150 s: 0.5 s of timed
# steps a config, and no noise pass, whose windows the frontier does not
# read (the profile says so too). On an H200 the profile's two models, 18
# configs, wrote no row in 82 s (rows are written as a model's rounds
# end): their set-up, checks and rounds cost several seconds a config, a
# gpt-medium step about three of gpt-small's. So gpt-small alone, nine
# configs; the profile alone keeps both models and 1 s a config for a
# real frontier.
"$bin" run --backend "$backend" "$@" --budget-s 0.5 --max-samples 30 --noise-windows 0 \
    --csv "$out/frontier.csv" --replace
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 1 ] || exit "$rc"
: >"$out/frontier-plan.txt"
for m in $models; do
    "$bin" plan --recommend --from "$out/frontier.csv" --effective "$effective" --model "$m" \
        --mem-cap "$cap" >>"$out/frontier-plan.txt" 2>&1
    p=$?
    [ "$p" -le 1 ] || { cat "$out/frontier-plan.txt"; exit "$p"; }
done
cat "$out/frontier-plan.txt"
exit "$rc"
