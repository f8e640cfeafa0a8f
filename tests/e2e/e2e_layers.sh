#!/bin/sh
# The dependency rule of the tree, stated on its own (the Makefile's include
# lists implement it; this checks it holds whatever those lists say):
#  - nothing under harness/ includes a file of bench/ or kernels/, nor
#    reaches out of its room with a relative path;
#  - harness/util compiles with only itself on the include path;
#  - harness/results compiles with only util and itself: the results side
#    never sees backend.h (or any device header).
set -u
root=${ACCUBENCH_ROOT:?}
err=$(pwd)/compile-errors.txt
cd "$root" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

# Headers that live above the harness.
above=$(find bench kernels -name '*.h' -exec basename {} \; | sort -u)
for h in $above; do
    hits=$(grep -rln "#include \"$h\"" harness || true)
    [ -z "$hits" ] || fail "harness includes $h from bench/ or kernels/: $hits"
done
hits=$(grep -rn '#include "\.\./' harness || true)
[ -z "$hits" ] || fail "relative include out of a room: $hits"
echo "ok: no harness file includes bench/ or kernels/ ($(echo "$above" | wc -w) headers checked)"

cc=${CC:-cc}
compile_room() { # ROOM INCLUDE_DIRS...
    room=$1; shift
    inc=""
    for d in "$@"; do inc="$inc -Iharness/$d"; done
    n=0
    for f in harness/"$room"/*.c; do
        # shellcheck disable=SC2086
        $cc -std=c11 -D_GNU_SOURCE -fsyntax-only $inc "$f" 2>"$err" ||
            { cat "$err"; fail "$f does not compile with only: $*"; }
        n=$((n + 1))
    done
    echo "ok: harness/$room ($n files) compiles with only: $*"
}
[ -e harness/results/backend.h ] && fail "backend.h inside results/"
compile_room util util
compile_room results util results
