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
# oneDNN's header: the CPU GEMM loads libdnnl at run time (cpu_onednn.c)
# and checks its prototypes against this header at build time.
have_onednn() {
    printf '#include <oneapi/dnnl/dnnl.h>\n#if DNNL_VERSION_MAJOR < 2\n#error\n#endif\nint main(void){return 0;}\n' |
        $CC -x c - -o /dev/null 2>/dev/null
}
have_gnuplot() { command -v gnuplot >/dev/null 2>&1; }
# NumPy for the tests' dump checks (tests/e2e/numpy_python.sh looks in the
# same pythons): Debian's python3-numpy is /usr/bin/python3's.
have_numpy() {
    for p in python3 /usr/bin/python3; do
        "$p" -c 'import numpy' >/dev/null 2>&1 && return 0
    done
    return 1
}
have_mpi() { command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1; }
# pgrep: the tests find a rank of an mpirun job by its parent
# (e2e_hardening.sh); procps is not in a minimal Debian image.
have_pgrep() { command -v pgrep >/dev/null 2>&1; }
# A clang that links libFuzzer: the fuzz targets `make test` runs.
have_libfuzzer() {
    printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }\n' |
        clang -x c - -fsanitize=fuzzer -o /dev/null >/dev/null 2>&1
}

missing=""
have_openblas || missing="$missing libopenblas-dev"
have_onednn || missing="$missing libdnnl-dev"
have_gnuplot || missing="$missing gnuplot-nox"
have_numpy || missing="$missing python3-numpy"
have_mpi || missing="$missing openmpi-bin libopenmpi-dev"
have_pgrep || missing="$missing procps"
have_libfuzzer || missing="$missing clang libclang-rt-dev"

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

if have_onednn; then
    echo "HAVE_ONEDNN := 1"
else
    say "oneDNN not found: the CPU backend's GEMM is OpenBLAS's"
    echo "HAVE_ONEDNN := 0"
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

# MPI (data parallel: mpirun starts the ranks; the CPU backend's all-reduce).
# Its flags come from the wrapper compiler (Open MPI's --showme, MPICH's
# -show), include paths as -isystem so that its headers meet -Werror as
# system headers.
mpi_flags() {
    mpicc --showme:"$1" 2>/dev/null && return 0
    # MPICH: -compile_info / -link_info print the whole command line
    mpicc "-$1_info" 2>/dev/null | cut -d' ' -f2-
}
have_mpi_headers() {
    printf '#include <mpi.h>\nint main(int c,char**v){MPI_Init(&c,&v);return MPI_Finalize();}\n' |
        $CC -x c - $1 $2 -o /dev/null 2>/dev/null
}
HAVE_MPI=0
if have_mpi; then
    mpi_cflags=$(mpi_flags compile | sed 's/-I/-isystem /g')
    mpi_libs=$(mpi_flags link)
    if have_mpi_headers "$mpi_cflags" "$mpi_libs"; then
        HAVE_MPI=1
        echo "HAVE_MPI := 1"
        echo "MPI_CFLAGS := $mpi_cflags"
        echo "MPI_LIBS := $mpi_libs"
    fi
fi
if [ "$HAVE_MPI" = 0 ]; then
    say "MPI (mpicc, mpirun, mpi.h) not found: building without data parallelism (--devices 1 only)"
    echo "HAVE_MPI := 0"
fi

# NCCL (the CUDA backend's all-reduce): NCCL_HOME, else the nvidia-nccl pip
# package, else the CUDA toolkit's copy, else the system's (Debian's
# libnccl-dev: /usr/include/nccl.h and the library in the multiarch
# folder). Needs nvcc, not MPI: one rank alone needs no launcher, and only
# its world under mpirun needs MPI (mk/cuda.mk builds that part where MPI
# is). Each candidate is a header folder and a library folder.
nccl_inc="" nccl_lib=""
multiarch=$($CC -print-multiarch 2>/dev/null)
pip_nccl=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' 2>/dev/null ||
           python3 -c 'import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null)
nccl_candidates() {
    for d in "${NCCL_HOME:-}" "$pip_nccl" "$CUDA_HOME"; do
        [ -n "$d" ] || continue
        echo "$d/include $d/lib"
        echo "$d/include $d/lib64"
    done
    [ -n "$multiarch" ] && echo "/usr/include /usr/lib/$multiarch"
    echo "/usr/include /usr/lib64"
    echo "/usr/include /usr/lib"
}
while read -r inc lib; do
    if [ -f "$inc/nccl.h" ] && ls "$lib"/libnccl.so* >/dev/null 2>&1; then
        nccl_inc=$inc nccl_lib=$lib
        break
    fi
done <<EOF_NCCL
$(nccl_candidates)
EOF_NCCL
if [ -n "$nccl_inc" ] && { [ -x "$NVCC" ] || command -v "$NVCC" >/dev/null 2>&1; }; then
    echo "HAVE_NCCL := 1"
    # the compiler searches /usr/include already: naming it again with
    # -isystem would reorder the search (mk/cuda.mk adds none when empty)
    if [ "$nccl_inc" = /usr/include ]; then echo "NCCL_INC :="; else echo "NCCL_INC := $nccl_inc"; fi
    echo "NCCL_LIBDIR := $nccl_lib"
    # the pip package ships libnccl.so.2 only
    if [ -e "$nccl_lib/libnccl.so" ]; then echo "NCCL_LINK := -lnccl"; else echo "NCCL_LINK := -l:libnccl.so.2"; fi
else
    [ -z "$nccl_inc" ] && say "NCCL not found (NCCL_HOME, the nvidia-nccl pip package, $CUDA_HOME, /usr): the CUDA backend runs one device"
    echo "HAVE_NCCL := 0"
fi
