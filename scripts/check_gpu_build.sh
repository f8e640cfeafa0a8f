#!/bin/sh
# check-gpu's build stage: BUILD_DIR's config.mk made again on this
# machine, then `make all` there, JOBS compiles at a time, with WERROR=0.
# config.mk records what the machine that made it had (nvcc, NCCL, MPI,
# OpenBLAS), and make makes it again only when scripts/configure.sh
# changes. A build folder carried from another machine (one without nvcc,
# say) would be built to that machine's findings: no CUDA backend and no
# gpu-check, and the whole call lost after its build; or linked against
# an OpenBLAS this machine lacks. One that says the same as before is kept
# as it was, time stamp and all, so that a build folder made here
# rebuilds nothing. MAKE: the make to run (default make).
# Usage: scripts/check_gpu_build.sh BUILD_DIR JOBS
set -u
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR JOBS" >&2; exit 2; }
build=$1 jobs=$2 make=${MAKE:-make}
cfg=$build/config.mk
if [ -f "$cfg" ]; then
    mv -f "$cfg" "$cfg.before"
    # make's own rule makes it, with make's CC, NVCC and CUDA_HOME
    "$make" BUILD="$build" WERROR=0 "$cfg" >/dev/null
    if [ ! -f "$cfg" ] || cmp -s "$cfg" "$cfg.before"; then
        mv -f "$cfg.before" "$cfg"
    else
        echo "check_gpu_build: $cfg was made on another machine, or before a change here:"
        diff "$cfg.before" "$cfg" | sed -n 's/^< /    was: /p; s/^> /    now: /p'
        rm -f "$cfg.before"
    fi
fi
exec "$make" -j"$jobs" BUILD="$build" WERROR=0 all
