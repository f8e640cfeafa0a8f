#!/bin/sh
# The CPU backend builds on a machine with neither OpenBLAS's nor oneDNN's
# headers (the GPU machine may have neither): its sources compile, with
# -Werror and neither ACCUBENCH_HAVE_* defined, against stand-in headers
# that fail the build if anything includes them. The portable GEMM it then
# runs is checked by e2e_hardening (ACCUBENCH_CPU_GEMM=portable).
set -u
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p bare/oneapi/dnnl
echo '#error "cblas.h is not on this machine"' >bare/cblas.h
echo '#error "dnnl.h is not on this machine"' >bare/oneapi/dnnl/dnnl.h
root=$ACCUBENCH_ROOT
inc="-Ibare -I$root/kernels -I$root/kernels/cpu"
for room in util trace backend models results run; do inc="$inc -I$root/harness/$room"; done
for src in "$root"/kernels/cpu/*.c; do
    # shellcheck disable=SC2086
    ${CC:-cc} -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fsyntax-only $inc "$src" 2>err.txt ||
        { cat err.txt; fail "$(basename "$src") does not build without the libraries' headers"; }
done
echo "ok: kernels/cpu builds without cblas.h and oneDNN's headers"
