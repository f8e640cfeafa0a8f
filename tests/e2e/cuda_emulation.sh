# shellcheck shell=sh
# Sourced by the tests that run the CUDA backend's kernels on the host
# (e2e_cuda_flash_emulated.sh, e2e_cuda_kernels_emulated.sh): emu_cxx is
# the C++17 compiler (CXX, else c++ or g++), empty where there is none;
# emu_build SRC OUT [FLAGS] compiles tests/kernels/SRC with the kernels'
# include paths and warnings as errors, saying why where it cannot;
# emu_sanitizers sets emu_san to ASan's and UBSan's flags where the
# compiler has them (so that a read or write past a buffer, or a 16-byte
# load from a misaligned row, fails), else to nothing, with a note. Run a
# sanitized program with ASAN_OPTIONS=detect_leaks=0.
emu_cxx=${CXX:-$(command -v c++ || command -v g++)}
emu_build() {
    "$emu_cxx" -std=c++17 -O2 -Wall -Wextra -Werror -Wno-unknown-pragmas ${3:-} \
        -I"$ACCUBENCH_ROOT/kernels/cuda" -I"$ACCUBENCH_ROOT/kernels" \
        -I"$ACCUBENCH_ROOT/harness/util" -I"$ACCUBENCH_ROOT/harness/backend" \
        -I"$ACCUBENCH_ROOT/harness/models" -I"$ACCUBENCH_ROOT/tests/kernels" \
        "$ACCUBENCH_ROOT/tests/kernels/$1" -o "$2" -lpthread >"$2.build.txt" 2>&1 ||
        { cat "$2.build.txt"; return 1; }
}
# -O0: the sanitized builds compile in half the time, and the runs are
# the barriers' (the system's) time whatever the optimisation.
emu_sanitizers() {
    emu_san="-O0 -fsanitize=address,undefined -fno-sanitize-recover=all"
    printf 'int main() { return 0; }\n' >probe.cc
    if ! "$emu_cxx" $emu_san probe.cc -o probe >/dev/null 2>&1 || ! ./probe; then
        echo "note: $emu_cxx has no ASan and UBSan here: the kernels run unsanitized"
        emu_san=""
    fi
}
