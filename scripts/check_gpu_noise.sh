#!/bin/sh
# check-gpu's noise stage: the gradient noise pass on BACKEND against the
# same pass on the CPU, gpt-tiny in fp32 (strict fp32 GEMMs on the GPU too),
# 16 sequences a step as 2 x 8, NOISE windows from one seed. Both run the
# same code above the backend table (harness/run/noise_pass.c); only the
# backend's ops differ (the model's, and the reductions sum_squares and
# axpy that keep the norms on the device). Compared: the small batches'
# and the windows' mean squared norms to 1e-4 (fp32 gradients of the whole
# model agree to 1e-5: the dtype table's tolerance), and B_simple, a ratio
# of differences of those norms, to 1e-3. Every window must have run on
# both (the pass keeps to a share of --budget-s: a large budget, with the
# timed pass held to one step). In a CPU rehearsal BACKEND is cpu: the two
# runs must then agree to the bit, and the stage still proves the script.
# Exit 0 when they agree, 1 when not or a run fails.
# Usage: scripts/check_gpu_noise.sh OUT_DIR ACCUBENCH BACKEND WINDOWS
set -u
export ACCUBENCH_NO_INSTALL=1
[ $# -eq 4 ] || { echo "usage: $0 OUT_DIR ACCUBENCH BACKEND WINDOWS" >&2; exit 2; }
out=$1 bin=$2 backend=$3 windows=$4
for side in dev cpu; do
    [ "$side" = dev ] && b=$backend || b=cpu
    "$bin" run --backend "$b" --model gpt-tiny --dtype fp32 --effective 16 --micro 2 \
        --noise-windows "$windows" --seed 7 --budget-s 100 --steps 1 --warmup 0 \
        --trace-steps 0 --csv "$out/noise-$side.csv" --replace --quiet || exit 1
done
python3 - "$out/noise-dev.csv" "$out/noise-cpu.csv" "$backend" <<'PY'
import csv, sys
def row(path):
    return next(csv.DictReader(l for l in open(path) if not l.startswith("#")))
dev, cpu, name = row(sys.argv[1]), row(sys.argv[2]), sys.argv[3]
bad = 0
for r, side in ((dev, name), (cpu, "cpu")):
    if r["status"] != "ok" or "noise scale from" in r["note"] or r["grad_noise_scale"] == "":
        print(f"FAIL: the {side} row: status {r['status']}, note '{r['note']}'")
        bad = 1
if bad:
    sys.exit(1)
same = name == "cpu"  # the rehearsal: one code on one backend, to the bit
for col, tol in (("grad_sq_micro", 1e-4), ("grad_sq_window", 1e-4), ("grad_noise_scale", 1e-3)):
    tol = 0.0 if same else tol
    a, b = float(dev[col]), float(cpu[col])
    rel = abs(a - b) / abs(b) if b else abs(a)
    ok = rel <= tol
    bad |= not ok
    print(f"{'ok  ' if ok else 'FAIL'} {col:17s} {name} {a:.9g}  cpu {b:.9g}  rel {rel:.2e} (tol {tol:g})")
print(f"noise: B_simple {float(dev['grad_noise_scale']):.4g} on {name}, "
      f"{float(cpu['grad_noise_scale']):.4g} on cpu: {'agree' if not bad else 'DIFFER'}")
sys.exit(bad)
PY
