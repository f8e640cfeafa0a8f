#!/bin/sh
# check-gpu's noise stage: the gradient noise pass on BACKEND against the
# same pass on the CPU, gpt-tiny in fp32 (strict fp32 GEMMs on the GPU too),
# 16 sequences a step as 2 x 8, NOISE windows from one seed. Both run the
# same code above the backend table (harness/run/passes/noise_pass.c); only the
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
# shellcheck disable=SC2154 # check_awk: check_gpu_awk.sh's
set -u
export ACCUBENCH_NO_INSTALL=1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/check_gpu_awk.sh"
[ $# -eq 4 ] || { echo "usage: $0 OUT_DIR ACCUBENCH BACKEND WINDOWS" >&2; exit 2; }
out=$1 bin=$2 backend=$3 windows=$4
for side in dev cpu; do
    [ "$side" = dev ] && b=$backend || b=cpu
    "$bin" run --backend "$b" --model gpt-tiny --dtype fp32 --effective 16 --micro 2 \
        --noise-windows "$windows" --seed 7 --budget-s 100 --steps 1 --warmup 0 \
        --trace-steps 0 --csv "$out/noise-$side.csv" --replace --quiet || exit 1
done
# awk, not python3, which a GPU image may lack: the same reading of the
# two rows and the same double arithmetic (awk's numbers are C doubles,
# read with strtod as python's float reads them), a line for each column.
# A cell that is no number (empty: NaN) fails, never reads as 0.
LC_ALL=C awk -v name="$backend" "$check_awk"'
function abs(x) { return x < 0 ? -x : x }
BEGIN {
    q = "\047"
    for (s = 1; s <= 2; s++) {
        side = s == 1 ? name : "cpu"
        if (!first_row(ARGV[s], s)) {
            printf "FAIL: the %s CSV %s has no row\n", side, ARGV[s]
            bad = 1
            continue
        }
        if (value(s, "status") != "ok" || index(value(s, "note"), "noise scale from") ||
            !isnum(value(s, "grad_noise_scale"))) {
            printf "FAIL: the %s row: status %s, note %s%s%s\n", side, value(s, "status"), q,
                value(s, "note"), q
            bad = 1
        }
    }
    if (bad)
        exit 1
    same = name == "cpu" # the rehearsal: one code on one backend, to the bit
    split("grad_sq_micro grad_sq_window grad_noise_scale", cols, " ")
    split("1e-4 1e-4 1e-3", tols, " ")
    for (k = 1; k <= 3; k++) {
        c = cols[k]
        tol = same ? 0 : tols[k] + 0
        a = value(1, c)
        b = value(2, c)
        if (!isnum(a) || !isnum(b)) {
            printf "FAIL %-17s %s %s  cpu %s: not a number\n", c, name, a, b
            bad = 1
            continue
        }
        a += 0
        b += 0
        rel = b != 0 ? abs(a - b) / abs(b) : abs(a)
        ok = rel <= tol
        if (!ok)
            bad = 1
        printf "%s %-17s %s %.9g  cpu %.9g  rel %.2e (tol %g)\n", ok ? "ok  " : "FAIL", c, name, a, b,
            rel, tol
    }
    printf "noise: B_simple %.4g on %s, %.4g on cpu: %s\n", value(1, "grad_noise_scale"), name,
        value(2, "grad_noise_scale"), bad ? "DIFFER" : "agree"
    exit bad
}' "$out/noise-dev.csv" "$out/noise-cpu.csv"
