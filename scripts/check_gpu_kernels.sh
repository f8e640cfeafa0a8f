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
#      ranges): the timed pass's own range (harness/run/step.h), which no
#      warm-up, trace or check step opens, so ncu counts what the trace
#      pass's per-step figure counts, one step, and nothing around it. One
#      cheap metric per kernel; the number of distinct kernel IDs it
#      reports is the count.
#   3. Always: the dispatch count. Each dispatch becomes at least one device
#      operation (a kernel, or a memset/memcpy for zero/upload), cuBLAS may
#      add kernels (split-K reductions), so kernels + memsets + memcpys must
#      be at least the dispatch count; the surplus is what cuBLAS added.
#
# Exit 0 when the counts agree (or ncu is absent and the dispatch check
# holds), 1 when they disagree or a run fails. Files go to OUT_DIR. Made to
# finish within the 90 s scripts/check_gpu.sh gives it.
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
mkdir -p "$out"
say() { echo "check_gpu_kernels: $*"; }
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
if ! timeout -k 10 40 "$bin" run $cfg --warmup 1 --steps 3 --trace-steps 3 \
        --trace "$out/kernels_step.json" --csv "$out/kernels_cupti.csv" --replace --quiet \
        >"$out/kernels_cupti.log" 2>&1; then
    say "the CUPTI run failed:"; tail -n 20 "$out/kernels_cupti.log"
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
status=0
if [ "$source" != "$want_source" ]; then
    say "FAIL: the trace pass's source is $source, not $want_source (see the CSV's trace_source)"
    exit 1
fi
[ "$dropped" = 0 ] || { say "FAIL: the collector dropped $dropped records"; status=1; }
if ! python3 -c "import sys; k,m,c,d=map(float,sys.argv[1:]); sys.exit(0 if k+m+c>=d>0 else 1)" \
        "$k_json" "$memsets" "$memcpys" "$dispatches"; then
    say "FAIL: kernels + memsets + memcpys ($k_json + $memsets + $memcpys) below the" \
        "dispatch count $dispatches"
    status=1
else
    say "dispatch check: device operations $((k_json + memsets + memcpys)) >=" \
        "dispatches $dispatches (cuBLAS added the difference)"
fi

# ---- 2. Nsight Compute
if [ "$backend" = cpu ]; then
    say "CPU rehearsal: no GPU kernels for ncu to count"
    exit $status
fi
if ! command -v ncu >/dev/null 2>&1; then
    say "ncu not found: independent count skipped (Nsight Compute ships with the CUDA" \
        "toolkit as nsight-compute; put ncu on PATH)"
    exit $status
fi
# --clock-control none: by default ncu locks the clocks to base, which
# changes what the run does (and would fail a check that compares rates).
timeout -k 10 45 ncu --clock-control none --nvtx --nvtx-include "accubench@timed step/" \
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
    exit $status
fi
if [ "$rc" -ne 0 ] || [ "${ncu_count:-0}" -eq 0 ]; then
    say "FAIL: ncu counted nothing; see $out/kernels_ncu.log"
    exit 1
fi
if python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) == float(sys.argv[2]) else 1)" \
        "$cupti" "$ncu_count"; then
    say "PASS: CUPTI $cupti == ncu $ncu_count kernels per step"
else
    say "FAIL: CUPTI $cupti != ncu $ncu_count kernels per step"
    status=1
fi
exit $status
