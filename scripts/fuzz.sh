#!/bin/sh
# Runs libFuzzer targets, each on its own copy of its checked-in corpus.
#
#   sh scripts/fuzz.sh WORK_DIR runs|seconds N TARGET...
#
# runs N: each target over its corpus, then N mutated inputs (make test: a
# few seconds). seconds N: each target for N seconds (make fuzz). Prints
# each target's executions per run and per second; a target that crashes,
# hangs or trips a sanitizer fails the script, its input kept in WORK_DIR
# and the end of its log printed. Exit: 0 every target clean, 1 otherwise.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
work=$1 kind=$2 n=$3
shift 3
. "$root/scripts/knobs.sh"
case $kind in
runs) knob_count FUZZ_RUNS "$n"; limit="-runs=$n" ;;
seconds) knob_count FUZZ_SECONDS "$n"; limit="-max_total_time=$n" ;;
*) echo "fuzz: runs or seconds, not '$kind'" >&2; exit 2 ;;
esac
failed=0
for bin in "$@"; do
    name=$(basename "$bin")
    target=${name#fuzz_}
    seeds="$root/tests/fuzz/corpus/$target"
    corpus="$work/corpus/$target"
    mkdir -p "$corpus" || exit 2
    log="$work/$name.log"
    # New inputs go to the first directory, never into the checked-in one.
    "$bin" "$limit" -seed=1 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/$name-" "$corpus" "$seeds" >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    # libFuzzer's rate is whole executions per whole second elapsed: 0 for
    # a run under a second, so it is shown only where it means something.
    case $rate in ''|0) rate= ;; *) rate=" ($rate/s)" ;; esac
    if [ "$rc" -eq 0 ]; then
        echo "fuzz $target: ${execs:-?} executions$rate, no crash, no sanitizer report"
    else
        echo "fuzz $target: FAILED (exit $rc) after ${execs:-?} executions; $log:" >&2
        tail -n 30 "$log" >&2
        failed=1
    fi
done
exit $failed
