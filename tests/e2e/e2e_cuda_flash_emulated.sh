#!/bin/sh
# The CUDA backend's fused-attention kernels (kernels/cuda/
# cuda_flash_attention.cuh), their very source, run on the host by
# tests/kernels/flash_emulation.cc (tests/kernels/cuda_emulation.h: a
# pthread a CUDA thread, barriers for __syncthreads and the warps'
# shuffles; tests/kernels/mma_emulation.h for bf16's tensor-core
# products) against a float64 attention, in fp32 and bf16, every head-dim
# bucket: where no GPU is, the one run that source gets. Under ASan and
# UBSan where the compiler has them (a 16-byte staging load past a row
# fails). Needs a C++17 compiler (CXX, else c++ or g++); skipped without
# one.
set -u
fail() { echo "FAIL: $*"; exit 1; }
. "$ACCUBENCH_ROOT/tests/e2e/cuda_emulation.sh"
if [ -z "$emu_cxx" ]; then
    echo "SKIP: no C++ compiler (CXX, c++, g++)"
    exit 0
fi
emu_sanitizers
emu_build flash_emulation.cc emulated "$emu_san" || fail "building the emulation with $emu_cxx"
ASAN_OPTIONS=detect_leaks=0 ./emulated >out.txt 2>&1 || { cat out.txt; fail "the emulated kernels disagree with float64"; }
grep -q "^flash_emulation: all ok$" out.txt || { cat out.txt; fail "no verdict line"; }
echo "ok: $(grep -c '^ok ' out.txt) shapes, the kernels emulated on the host agree with float64"
