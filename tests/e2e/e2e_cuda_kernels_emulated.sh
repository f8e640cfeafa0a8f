#!/bin/sh
# The CUDA backend's kernels other than the fused attention's, their very
# source (kernels/cuda/*.cuh), run on the host by the programs below
# (tests/kernels/NAME_emulation.cc through cuda_emulation.h: a pthread a
# CUDA thread, barriers for __syncthreads and the warps' shuffles, shared
# memory poisoned with NaN) against float64 or the CPU's own per-element
# functions, in fp32 and bf16: where no GPU is, the one run that source
# gets. Under ASan and UBSan where the compiler has them, so that a read
# or write past a buffer, or a 16-byte load from a misaligned row, fails
# too. The programs build and run at once. Needs a C++17 compiler (CXX,
# else c++ or g++); skipped without one.
set -u
fail() { echo "FAIL: $*"; exit 1; }
. "$ACCUBENCH_ROOT/tests/e2e/cuda_emulation.sh"
if [ -z "$emu_cxx" ]; then
    echo "SKIP: no C++ compiler (CXX, c++, g++)"
    exit 0
fi
emu_sanitizers

progs="columns reductions updates maps"
for p in $progs; do
    (emu_build "${p}_emulation.cc" "$p" "$emu_san" || exit 1
     ASAN_OPTIONS=detect_leaks=0 "./$p" >"$p.txt" 2>&1) >"$p.build.out" 2>&1 &
done
wait
for p in $progs; do
    [ -x "$p" ] || { cat "$p.build.out"; fail "building ${p}_emulation.cc with $emu_cxx"; }
    grep -q "^${p}_emulation: all ok$" "$p.txt" ||
        { cat "$p.txt"; fail "${p}_emulation: the emulated kernels disagree with the reference"; }
done
echo "ok: $(cat $(for p in $progs; do echo "$p.txt"; done) | grep -c '^ok ') shapes, the kernels emulated on the host agree with the reference"
