#!/bin/sh
# Finds (and, as root on Debian, installs) what the build needs, then prints
# make variables for build/config.mk. Run by the Makefile; safe to rerun.
#
# ACCUBENCH_NO_INSTALL=1 skips apt-get (a machine without package access).
set -u
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}

say() { echo "configure: $*" >&2; }

have_openblas() {
    printf '#include <cblas.h>\nint main(void){return 0;}\n' |
        $CC -x c - -lopenblas -o /dev/null 2>/dev/null
}
have_gnuplot() { command -v gnuplot >/dev/null 2>&1; }

missing=""
have_openblas || missing="$missing libopenblas-dev"
have_gnuplot || missing="$missing gnuplot-nox"

if [ -n "$missing" ]; then
    if [ "${ACCUBENCH_NO_INSTALL:-0}" = 1 ]; then
        say "not installing$missing (ACCUBENCH_NO_INSTALL=1)"
    elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "installing$missing with apt-get"
        export DEBIAN_FRONTEND=noninteractive
        { timeout 300 apt-get update -qq &&
          timeout 600 apt-get install -y -qq --no-install-recommends $missing; } >&2 ||
            say "apt-get could not install$missing; building without them"
    else
        say "missing$missing: install with  sudo apt-get install$missing"
    fi
fi

if have_openblas; then
    echo "HAVE_OPENBLAS := 1"
else
    say "OpenBLAS not found: the CPU backend uses its portable GEMM"
    echo "HAVE_OPENBLAS := 0"
fi

if [ -x "$NVCC" ] || command -v "$NVCC" >/dev/null 2>&1; then
    echo "HAVE_NVCC := 1"
else
    say "nvcc not found at $NVCC: building without the CUDA backend"
    echo "HAVE_NVCC := 0"
fi

if [ -f "$CUDA_HOME/include/nvtx3/nvToolsExt.h" ]; then
    echo "HAVE_NVTX := 1"
else
    say "NVTX3 headers not found under $CUDA_HOME/include: ranges are compiled out"
    echo "HAVE_NVTX := 0"
fi
