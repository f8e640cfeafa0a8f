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
command -v python3 >/dev/null 2>&1 || { say "python3 not found"; exit 1; }

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
vals=$(python3 - "$out/kernels_cupti.csv" "$out/kernels_step.json" <<'EOF'
import csv, json, sys
lines = open(sys.argv[1]).read().splitlines()
source = next((l.split(":", 1)[1].strip() for l in lines
               if l.startswith("# trace_source:")), "?")
row = next(csv.DictReader(l for l in lines if not l.startswith("#")))
ev = json.load(open(sys.argv[2]))["traceEvents"]
count = lambda cat: sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") == cat)
val = lambda k: row[k] if row[k] != "" else "nan"
print(val("kernels_per_step"), val("dispatches_per_step"), val("cupti_dropped") or 0,
      count("kernel"), count("memset"), count("memcpy"),
      "cupti" if source.startswith("CUPTI") else
      "cpu" if source.startswith("the cpu backend") else "none")
EOF
) || { say "could not read $out/kernels_cupti.csv"; exit 1; }
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
if ! python3 -c "import sys; k,m,c,d=map(float,sys.argv[1:]); sys.exit(0 if k+m+c>=d>0 else 1)" \
        "$k_json" "$memsets" "$memcpys" "$dispatches"; then
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
ncu_count=$(python3 - "$out/kernels_ncu.csv" <<'EOF'
import csv, sys
ids, header = set(), None
for row in csv.reader(l for l in open(sys.argv[1], errors="replace") if l.startswith('"')):
    if header is None:
        if "ID" in row and "Kernel Name" in row:
            header = row
        continue
    if len(row) == len(header):
        ids.add(row[header.index("ID")])
print(len(ids))
EOF
)
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
if python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) == float(sys.argv[2]) else 1)" \
        "$cupti" "$ncu_count"; then
    finish "${bad}CUPTI $cupti == ncu $ncu_count kernels per step"
fi
status=1
finish "${bad}CUPTI $cupti != ncu $ncu_count kernels per step"
