#!/bin/sh
# The dependency rule of the tree, stated on its own (the Makefile's include
# lists implement it; this checks it holds whatever those lists say):
#  - nothing under harness/ includes a file of bench/ or kernels/, nor
#    reaches out of its room with a relative path;
#  - no two harness modules (NAME.c and NAME.h) include each other;
#  - harness/util compiles with only itself on the include path;
#  - harness/results compiles with only util and itself: the results side
#    never sees backend.h (or any device header);
#  - harness/run's rooms compile with only the rooms below them: step <-
#    passes <- setup <- sweep (a pass never sees the options or the sweep,
#    the step never sees a pass).
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

# No two modules (NAME.c with NAME.h) include each other: a pair that does
# is one module in two files, or a loop to cut (a shared header below both).
edges=$(find harness -name '*.[ch]' | while read -r f; do
    m=$(basename "$f" | sed 's/\.[ch]$//')
    grep -o '^#include "[^"]*\.h"' "$f" | sed 's/^#include "//; s/\.h"$//' |
        while read -r h; do [ "$h" != "$m" ] && echo "$m $h"; done
done | sort -u)
mutual=$(echo "$edges" | awk '{e[$1 " " $2] = 1}
    END {for (k in e) {split(k, p, " "); if ((p[2] " " p[1]) in e && p[1] < p[2]) print p[1] " <-> " p[2]}}')
[ -z "$mutual" ] || fail "modules that include each other: $mutual"
echo "ok: no two harness modules include each other ($(echo "$edges" | wc -l) includes checked)"

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
below="util trace backend models results"
compile_room run/step $below run/step
compile_room run/passes $below run/step run/passes
compile_room run/setup $below run/step run/passes run/setup
compile_room run/sweep $below run/step run/passes run/setup run/sweep
loose=$(ls harness/run/*.[ch] 2>/dev/null)
[ -z "$loose" ] || fail "files in harness/run/ outside its rooms: $loose"
