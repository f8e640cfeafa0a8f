#!/bin/sh
# The CUDA backend's list of errors that lose the device (sticky() in
# kernels/cuda/cuda_errors.cu: backend.lost, the sweep stops with one line)
# against the toolkit's own: every error that driver_types.h documents as
# leaving the process in a state where "the process must be terminated and
# relaunched" must be on it, or a device fault the list misses (a Hopper
# part's contained error, cudaErrorContained) writes one error row per
# config left instead. Skipped where the toolkit's headers are not.
set -u
fail() { echo "FAIL: $*"; exit 1; }
header=${CUDA_HOME:-/usr/local/cuda}/include/driver_types.h
if [ ! -f "$header" ]; then
    echo "SKIP: no $header (no CUDA toolkit)"
    exit 0
fi
src=$ACCUBENCH_ROOT/kernels/cuda/cuda_errors.cu
# The enumerators whose doc comment says so, the comment's lines joined.
awk '
/\/\*\*/ { doc = ""; in_doc = 1 }
in_doc { doc = doc " " $0 }
/\*\// { in_doc = 0; gsub(/[ \t*]+/, " ", doc); last = doc; next }
/^[ \t]*cudaError[A-Za-z0-9]+[ \t]*=/ {
    name = $1
    sub(/=.*/, "", name)
    if (last ~ /process must be terminated and relaunched/)
        print name
    last = ""
}' "$header" >documented
[ -s documented ] || fail "no error in $header is documented as needing a relaunch (the parse broke)"
grep -q '^cudaErrorIllegalAddress$' documented || fail "the parse missed cudaErrorIllegalAddress"
# The case labels of sticky(), and nothing else of the file.
sed -n '/^static int sticky(/,/^}/p' "$src" | sed -n 's/^[ \t]*case \(cudaError[A-Za-z0-9]*\):.*/\1/p' \
    >listed
missing=""
while read -r name; do
    grep -qx "$name" listed || missing="$missing $name"
done <documented
[ -z "$missing" ] || fail "sticky() in cuda_errors.cu lacks$missing (driver_types.h: the process must be terminated and relaunched)"
echo "ok: sticky() names the $(wc -l <documented | tr -d ' ') errors driver_types.h says end the process's use of CUDA"
