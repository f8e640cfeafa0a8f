#!/bin/sh
# The CUDA backend's fused-attention kernels (kernels/cuda/
# cuda_flash_attention.cuh), their very source, run on the host by
# tests/kernels/flash_emulation.cc (a pthread a CUDA thread, barriers for
# __syncthreads and the warps' shuffles; tests/kernels/wmma_emulation.h
# for bf16's tensor-core products) against a float64 attention, in fp32
# and bf16, every head-dim bucket: where no GPU is, the one run that
# source gets. Needs a C++17 compiler (CXX, else c++ or g++); skipped
# without one.
set -u
fail() { echo "FAIL: $*"; exit 1; }
root=$ACCUBENCH_ROOT
cxx=${CXX:-$(command -v c++ || command -v g++)}
if [ -z "$cxx" ]; then
    echo "SKIP: no C++ compiler (CXX, c++, g++)"
    exit 0
fi
"$cxx" -std=c++17 -O2 -Wall -Wextra -Werror -Wno-unknown-pragmas -I"$root/kernels/cuda" \
    -I"$root/kernels" -I"$root/harness/util" -I"$root/harness/backend" -I"$root/harness/models" \
    "$root/tests/kernels/flash_emulation.cc" -o emulated -lpthread >build.txt 2>&1 ||
    { cat build.txt; fail "building the emulation with $cxx"; }
./emulated >out.txt 2>&1 || { cat out.txt; fail "the emulated kernels disagree with float64"; }
grep -q "^flash_emulation: all ok$" out.txt || { cat out.txt; fail "no verdict line"; }
echo "ok: $(grep -c '^ok ' out.txt) shapes, the kernels emulated on the host agree with float64"
