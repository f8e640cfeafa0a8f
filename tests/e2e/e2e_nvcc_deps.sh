#!/bin/sh
# The CUDA objects depend on the headers they include: after an edit of
# kernels/elementwise.h (the per-element math), harness/backend/backend.h
# (the table's struct layout) or a kernel's .cuh (its device code), make
# rebuilds them, so the GPU never runs stale math, a stale layout or a
# stale kernel. Builds the CUDA objects (in the build the
# program came from, ACCUBENCH_BUILD, where make test has built them
# already; else in a scratch BUILD), then asks make, without touching the
# sources (-n -W FILE: "as if FILE were just edited"), what it would
# rebuild. Skipped where nvcc is not.
set -u
fail() { echo "FAIL: $*"; exit 1; }
root=$ACCUBENCH_ROOT
# Run from `make test`: the outer make's flags and variables are not ours.
unset MAKEFLAGS MFLAGS MAKELEVEL
# mk runs in $root, so a relative ACCUBENCH_BUILD (make's own "build") is
# named as make named it: its .d files list the objects by that name.
build=${ACCUBENCH_BUILD:-$PWD/b}
case $build in /*) at=$build ;; *) at=$root/$build ;; esac
mk() { make --no-print-directory -C "$root" BUILD="$build" ACCUBENCH_NO_INSTALL=1 "$@"; }

mk "$build/config.mk" >/dev/null 2>configure.txt || { cat configure.txt; fail "configure"; }
if ! grep -q '^HAVE_NVCC := 1' "$at/config.mk"; then
    echo "SKIP: nvcc not found (${CUDA_HOME:-/usr/local/cuda}/bin/nvcc): no CUDA objects to check"
    exit 0
fi
objs=""
for cu in "$root"/kernels/cuda/*.cu; do
    objs="$objs $build/obj/kernels/cuda/$(basename "$cu" .cu).o"
done
mk $objs >build.txt 2>&1 || { tail -n 20 build.txt; fail "nvcc build"; }

# Built: nothing to do until a header changes.
mk -q $objs || fail "the CUDA objects are out of date right after they were built"

# Which .cu files make would compile if FILE had just been edited.
rebuilt() { mk -n -W "$1" $objs 2>&1 | sed -n 's|.* -c kernels/cuda/\([^ ]*\.cu\) .*|\1|p' | sort | tr '\n' ' '; }

r=$(rebuilt kernels/elementwise.h)
echo "$r" | grep -q 'cuda_elementwise.cu' ||
    fail "an edit of kernels/elementwise.h rebuilds no kernel (would rebuild: '$r')"
r=$(rebuilt harness/backend/backend.h)
for cu in "$root"/kernels/cuda/*.cu; do
    name=$(basename "$cu")
    grep -q '"backend.h"\|"cuda_check.h"\|"cuda_internal.h"' "$cu" || continue
    echo "$r" | grep -q "$name" ||
        fail "an edit of harness/backend/backend.h does not rebuild $name (would rebuild: '$r')"
done
# A kernel's .cuh (its device code) rebuilds its .cu (the launches), and
# cuda_device.cuh, which every kernel header includes, rebuilds them all.
all=$(rebuilt kernels/cuda/cuda_device.cuh)
for h in "$root"/kernels/cuda/*.cuh; do
    name=$(basename "$h" .cuh)
    [ -f "$root/kernels/cuda/$name.cu" ] || continue
    r=$(rebuilt "kernels/cuda/$name.cuh")
    echo "$r" | grep -q "$name.cu" ||
        fail "an edit of kernels/cuda/$name.cuh does not rebuild $name.cu (would rebuild: '$r')"
    echo "$all" | grep -q "$name.cu" ||
        fail "an edit of kernels/cuda/cuda_device.cuh does not rebuild $name.cu (would rebuild: '$all')"
done
r=$(rebuilt harness/results/result_row.h)
[ -z "$r" ] || fail "an edit of a header no kernel includes rebuilds: $r"
echo "ok: header edits rebuild the CUDA objects that include them"
