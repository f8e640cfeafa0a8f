#!/bin/sh
# The core library's members the fuzz targets use, as a makefile line
# (FUZZ_MEMBERS := NAME ...): each target, compiled with the plain
# compiler beside a main that calls it, is linked against the plain core
# library, and the linker's map names the members it took. `make
# fuzz-build` then compiles only those again with clang and the
# sanitizers (about 30 of the core's 100 files).
# Usage: scripts/fuzz_members.sh WORK_DIR CORE_LIB "CC FLAGS" "LDLIBS" TARGET.c...
set -eu
work=$1 lib=$2 cc=$3 libs=$4
shift 4
mkdir -p "$work"
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
    'int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);' \
    'int main(void) { return LLVMFuzzerTestOneInput(NULL, 0); }' >"$work/main.c"
$cc -c "$work/main.c" -o "$work/main.o"
for target in "$@"; do
    name=$(basename "$target" .c)
    $cc -c "$target" -o "$work/$name.o"
    # shellcheck disable=SC2086 # the flags are words
    $cc -o "$work/$name" "$work/main.o" "$work/$name.o" "$lib" $libs -Wl,-Map="$work/$name.map"
    # the map's "Archive member included" lines: LIB(NAME.o), the
    # reference that pulled it on the same line or the next
    sed -n "s|^$lib(\\([^)]*\\)\\.o).*|\\1|p" "$work/$name.map"
done >"$work/members.txt" # not piped: a target that does not build stops here (set -e),
                          # not later as a link error for want of the members it hid
sort -u "$work/members.txt" | tr '\n' ' ' | sed 's/^/FUZZ_MEMBERS := /; s/ $//'
echo
