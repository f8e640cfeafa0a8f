#!/bin/sh
# Cross-check on a GPU: the kernels per step that the CUPTI collector counts
# against an independent count, printed side by side.
#
#   1. CUPTI: one config (model S, E=64 as 16x4, async) with the trace pass
#      on; kernels_per_step from the CSV, and the traced step written as
#      trace JSON (its kernel, memset and memcpy events are counted too).
#   2. Nsight Compute, when ncu is on PATH: the same config with the collector
#      off, exactly one timed step (--warmup 0 --steps 1, no trace pass, no
#      noise pass), profiling only kernels launched inside the "timed step"
#      range of the accubench NVTX domain (the trailing / selects push/pop
#      ranges): the timed pass's own range (harness/run/step/step.h), which no
#      warm-up, trace or check step opens, so ncu counts what the trace
#      pass's per-step figure counts, one step, and nothing around it. One
#      cheap metric per kernel; the number of distinct kernel IDs it
#      reports is the count.
#   3. Always: the dispatch count. Each dispatch becomes at least one device
#      operation (a kernel, or a memset/memcpy for zero/upload), cuBLAS may
#      add kernels (split-K reductions), so kernels + memsets + memcpys must
#      be at least the dispatch count; the surplus is what cuBLAS added.
#
# Exit 0 when the counts agree (or ncu cannot count here and the dispatch
# check holds), 1 when they disagree or a run fails; the last line says
# which (PASS or FAIL), and why ncu did not count where it did not. Files
# go to OUT_DIR. CHECK_STAGE_S (default 90) is the time scripts/check_gpu.sh
# gives the stage, its limit shrunk to the check's budget: the CUPTI run
# takes at most 40 of it, ncu what is left but a margin, and ncu is
# skipped, saying so, where that is under 20 s or where it does not finish
# in it (ncu replays and serialises what it profiles: its time on a
# machine is a guess). A timed-out ncu counts nothing against the code.
#
#   CHECK_GPU_REHEARSE=1  a rehearsal without a GPU, run by hand (check_gpu.sh
#                       skips this stage in its own): the same runs on the
#                       CPU backend, model tiny, where the trace pass
#                       records dispatches; no ncu.
# Usage: scripts/check_gpu_kernels.sh OUT_DIR BUILD_DIR
# shellcheck disable=SC2154 # check_awk: check_gpu_awk.sh's
set -u
# A GPU box has no package access: nothing this runs may try to install.
export ACCUBENCH_NO_INSTALL=1
if [ $# -ne 2 ]; then
    echo "usage: $0 OUT_DIR BUILD_DIR" >&2
    exit 2
fi
out=$1
bin=$2/accubench
limit=${CHECK_STAGE_S:-90}
case $limit in '' | *[!0-9]*) echo "$0: CHECK_STAGE_S=$limit: not a number of seconds" >&2; exit 2 ;; esac
t0=$(date +%s)
mkdir -p "$out"
say() { echo "check_gpu_kernels: $*"; }
# bounded SECONDS CMD...: CMD under timeout, waited for in the background.
# timeout puts CMD in a process group of its own, which the stage's own
# time limit (a TERM to this script's group) never reaches: ncu and the
# program it profiles would run on, on the GPU, into the stages after.
# The trap passes the TERM on, and timeout to its whole group.
child=""
trap '[ -z "$child" ] || kill -TERM "$child" 2>/dev/null; wait; exit 143' TERM INT HUP
bounded() {
    b_s=$1
    shift
    timeout -k 5 "$b_s" "$@" </dev/null &
    child=$!
    wait "$child"
    b_rc=$?
    child=""
    return "$b_rc"
}
# The stage's last line: PASS or FAIL, with ncu's part.
finish() {
    if [ "$status" = 0 ]; then say "PASS: $*"; else say "FAIL: $*"; fi
    exit "$status"
}
[ -x "$bin" ] || { say "no $bin (build first)"; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/check_gpu_awk.sh"

if [ "${CHECK_GPU_REHEARSE:-0}" = 1 ]; then backend=cpu; else backend=cuda; fi
if [ "$backend" = cpu ]; then
    model=tiny want_source=cpu
else
    model=S want_source=cupti
fi
# No noise pass: it is no part of what either count is about, only time.
cfg="--backend $backend --model $model --effective 64 --micro 16 --mode async --reduction sum
     --noise-windows 0"

# ---- 1. CUPTI
cupti_s=40
[ $((limit / 2)) -lt "$cupti_s" ] && cupti_s=$((limit / 2))
# timeout reads 0 as no limit at all: a stage given under 2 s runs 1
[ "$cupti_s" -ge 1 ] || cupti_s=1
bounded "$cupti_s" "$bin" run $cfg --warmup 1 --steps 3 --trace-steps 3 \
    --trace "$out/kernels_step.json" --csv "$out/kernels_cupti.csv" --replace --quiet \
    >"$out/kernels_cupti.log" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
    say "the CUPTI run failed:"; tail -n 20 "$out/kernels_cupti.log"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        say "FAIL: the CUPTI run did not finish in ${cupti_s}s"
    else
        say "FAIL: the CUPTI run failed (exit $rc)"
    fi
    exit 1
fi
# awk, not python3, which a GPU image may lack. The CSV's first row and
# its # trace_source: line; the trace file's complete ("X") events of each
# category, one event a line as the program writes them (an event's name
# is a JSON string, whose quotes are escaped: no name holds "cat":"kernel"
# as it stands). A cell that is empty, or no number, is "nan"; a missing
# column, a file without a row or a trace that is not whole fails the read.
vals=$(LC_ALL=C awk "$check_awk"'
function count(line, cat) { return index(line, "\"cat\":\"" cat "\"") > 0 }
BEGIN {
    source = "?"
    while ((getline line < ARGV[1]) > 0)
        if (index(line, "# trace_source:") == 1) {
            source = substr(line, 16)
            sub(/^[ \t]+/, "", source)
            break
        }
    close(ARGV[1])
    if (!first_row(ARGV[1], 1))
        exit 1
    split("kernels_per_step dispatches_per_step cupti_dropped", keys, " ")
    for (i = 1; i <= 3; i++) {
        v = value(1, keys[i])
        if (v == "-")
            exit 1
        out = out (isnum(v) ? v : "nan") " "
    }
    whole = 0
    while ((getline line < ARGV[2]) > 0) {
        if (index(line, "\"traceEvents\":[") > 0)
            whole = 1
        if (index(line, "\"ph\":\"X\"") > 0) {
            k += count(line, "kernel")
            m += count(line, "memset")
            c += count(line, "memcpy")
        }
        last = line
    }
    if (!whole || last != "]}")
        exit 1
    print out (k + 0) " " (m + 0) " " (c + 0) " " \
        (index(source, "CUPTI") == 1 ? "cupti" : index(source, "the cpu backend") == 1 ? "cpu" : "none")
}' "$out/kernels_cupti.csv" "$out/kernels_step.json") ||
    { say "could not read $out/kernels_cupti.csv or $out/kernels_step.json"; exit 1; }
set -- $vals
cupti=$1 dispatches=$2 dropped=$3 k_json=$4 memsets=$5 memcpys=$6 source=$7
say "trace pass: kernels/step $cupti (trace file: $k_json kernels, $memsets memsets," \
    "$memcpys memcpys), dropped records $dropped, source $source"
say "dispatches: $dispatches per step (timed pass)"
status=0 bad=""
if [ "$source" != "$want_source" ]; then
    say "FAIL: the trace pass's source is $source, not $want_source (see the CSV's trace_source)"
    exit 1
fi
# An empty cell is "nan" here: the trace pass was not analysed, and its
# counts are missing, not a number of dropped records.
if [ "$cupti" = nan ]; then
    status=1 bad="no kernels_per_step: the trace pass was not analysed (see $out/kernels_cupti.log); "
elif [ "$dropped" != 0 ]; then
    say "FAIL: the collector dropped $dropped records"
    status=1 bad="the collector dropped $dropped records; "
fi
if ! awk -v k="$k_json" -v m="$memsets" -v c="$memcpys" -v d="$dispatches" "$check_awk"'
        BEGIN { exit !(isnum(d) && k + m + c >= d + 0 && d + 0 > 0) }'; then
    say "FAIL: kernels + memsets + memcpys ($k_json + $memsets + $memcpys) below the" \
        "dispatch count $dispatches"
    status=1 bad="${bad}device operations below the dispatch count; "
else
    say "dispatch check: device operations $((k_json + memsets + memcpys)) >=" \
        "dispatches $dispatches (cuBLAS added the difference)"
fi

cupti_said="${bad}CUPTI $cupti kernels per step, $dispatches dispatches"
# ---- 2. Nsight Compute
if [ "$backend" = cpu ]; then
    say "CPU rehearsal: no GPU kernels for ncu to count"
    finish "$cupti_said; no ncu on the CPU"
fi
# On PATH, else the toolkit's own (a CUDA install links bin/ncu to its
# nsight-compute without putting it on PATH), as compute-sanitizer is found.
ncu=$(command -v ncu 2>/dev/null ||
    { [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/ncu" ] && echo "${CUDA_HOME:-/usr/local/cuda}/bin/ncu"; })
if [ -z "$ncu" ]; then
    say "ncu not found: independent count skipped (Nsight Compute ships with the CUDA" \
        "toolkit as nsight-compute; put ncu on PATH)"
    finish "$cupti_said; ncu skipped: not on PATH or in ${CUDA_HOME:-/usr/local/cuda}/bin"
fi
# What the stage has left, less a margin for the count and the kill.
ncu_s=$((limit - ($(date +%s) - t0) - 10))
if [ "$ncu_s" -lt 20 ]; then
    finish "$cupti_said; ncu skipped: ${ncu_s}s of the stage's ${limit}s left for it, under 20 s"
fi
[ "$ncu_s" -gt 45 ] && ncu_s=45
# --clock-control none: by default ncu locks the clocks to base, which
# changes what the run does (and would fail a check that compares rates).
bounded "$ncu_s" "$ncu" --clock-control none --nvtx --nvtx-include "accubench@timed step/" \
    --metrics gpu__time_duration.sum \
    --csv --print-units base \
    "$bin" run $cfg --warmup 0 --steps 1 --trace-steps 0 --no-cupti \
    --csv "$out/kernels_ncu_run.csv" --replace --quiet >"$out/kernels_ncu.csv" 2>"$out/kernels_ncu.log"
rc=$?
# The distinct kernel IDs of ncu's CSV: its lines that begin with a quote,
# the first that names "ID" and "Kernel Name" the header, then each row of
# the header's width. Every field is quoted, and a kernel's name holds
# commas (template arguments, a launch's block size): the fields are
# split as a CSV reader splits them, "" inside a field a quote.
ncu_count=$(LC_ALL=C awk '
function fields(line,    n, i, ch, quoted, v) {
    n = 0
    v = ""
    quoted = 0
    for (i = 1; i <= length(line); i++) {
        ch = substr(line, i, 1)
        if (quoted) {
            if (ch != "\"")
                v = v ch
            else if (substr(line, i + 1, 1) == "\"") {
                v = v ch
                i++
            } else
                quoted = 0
        } else if (ch == "\"")
            quoted = 1
        else if (ch == ",") {
            f[++n] = v
            v = ""
        } else
            v = v ch
    }
    f[++n] = v
    return n
}
/^"/ {
    sub(/\r$/, "")
    n = fields($0)
    if (!width) {
        id = 0
        name = 0
        for (i = n; i >= 1; i--) {
            if (f[i] == "ID") id = i
            if (f[i] == "Kernel Name") name = i
        }
        if (id && name)
            width = n
        next
    }
    if (n == width && !(f[id] in seen)) {
        seen[f[id]] = 1
        ids++
    }
}
END { print ids + 0 }' "$out/kernels_ncu.csv")
say "ncu:        kernels in one step $ncu_count (exit $rc; $out/kernels_ncu.csv)"
if grep -q "ERR_NVGPUCTRPERM" "$out/kernels_ncu.csv" "$out/kernels_ncu.log" 2>/dev/null; then
    say "ncu may not read the GPU's counters here (ERR_NVGPUCTRPERM: run as root, or see"
    say "  https://developer.nvidia.com/ERR_NVGPUCTRPERM): independent count skipped"
    finish "$cupti_said; ncu skipped: no access to the GPU's counters (ERR_NVGPUCTRPERM)"
fi
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    say "ncu did not finish in ${ncu_s}s: independent count skipped"
    finish "$cupti_said; ncu skipped: not done in ${ncu_s}s"
fi
if [ "$rc" -ne 0 ] || [ "${ncu_count:-0}" -eq 0 ]; then
    status=1
    finish "${bad}ncu counted nothing (exit $rc); see $out/kernels_ncu.log"
fi
if awk -v a="$cupti" -v b="$ncu_count" "$check_awk"'
        BEGIN { exit !(isnum(a) && isnum(b) && a + 0 == b + 0) }'; then
    finish "${bad}CUPTI $cupti == ncu $ncu_count kernels per step"
fi
status=1
finish "${bad}CUPTI $cupti != ncu $ncu_count kernels per step"
