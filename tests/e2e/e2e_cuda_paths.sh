#!/bin/sh
# Where the build looks for what a toolkit ships, and the WERROR knob,
# without a toolkit: a fake CUDA_HOME holds cupti.h where the runfile
# installer puts it (extras/CUPTI/include), then where packages put it
# (include/, which wins); WERROR=0 takes -Werror out of the C and nvcc
# flags (a newer host compiler than ours may warn where ours does not).
set -u
fail() { echo "FAIL: $*"; exit 1; }
unset MAKEFLAGS MFLAGS MAKELEVEL
cuda=$PWD/cuda
mk() { make -s --no-print-directory -C "$ACCUBENCH_ROOT" BUILD="$PWD/b" CUDA_HOME="$cuda" \
           ACCUBENCH_NO_INSTALL=1 "$@" 2>/dev/null; }

mkdir -p "$cuda/extras/CUPTI/include" "$cuda/include"
touch "$cuda/extras/CUPTI/include/cupti.h"
got=$(mk print-CUPTI_INC)
[ "$got" = "$cuda/extras/CUPTI/include" ] || fail "runfile layout: CUPTI_INC is '$got'"
touch "$cuda/include/cupti.h"
got=$(mk print-CUPTI_INC)
[ "$got" = "$cuda/include" ] || fail "packaged layout: CUPTI_INC is '$got'"
rm "$cuda/include/cupti.h" "$cuda/extras/CUPTI/include/cupti.h"
got=$(mk print-CUPTI_INC)
[ -z "$got" ] || fail "no cupti.h anywhere, yet CUPTI_INC is '$got'"

for var in WARN NVCCFLAGS; do
    mk print-$var | grep -q -- '-Werror' || fail "$var lacks -Werror by default"
    if mk WERROR=0 print-$var | grep -q -- '-Werror'; then
        fail "WERROR=0 leaves -Werror in $var: $(mk WERROR=0 print-$var)"
    fi
done
echo "ok: cupti.h found in either layout; WERROR=0 drops -Werror"
