#!/bin/sh
# How make check-gpu's script builds, without building: MAKE is a stub that
# records its arguments and ACCUBENCH_NO_INSTALL, then fails. The script
# must build with WERROR=0 (a newer host compiler may warn where ours does
# not) and never let configure install (the GPU box has no package access),
# and a failed build must end the check at once with exit 1. The build is
# the same on the rehearsal (CHECK_GPU_REHEARSE=1), which runs without a GPU.
set -u
fail() { echo "FAIL: $*"; exit 1; }
cat >stub-make <<'STUB'
#!/bin/sh
echo "args: $*" >"$STUB_LOG"
echo "no_install: ${ACCUBENCH_NO_INSTALL:-unset}" >>"$STUB_LOG"
exit 2
STUB
chmod +x stub-make
env -u ACCUBENCH_NO_INSTALL STUB_LOG="$PWD/stub.log" MAKE="$PWD/stub-make" BUILD="$PWD/b" \
    CHECK_OUT=cg CHECK_GPU_REHEARSE=1 timeout 60 sh "$ACCUBENCH_ROOT/scripts/check_gpu.sh" >stdout 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat stdout; fail "exit $rc after a failed build, not 1"; }
grep -q "the build failed; nothing else can run" stdout || { cat stdout; fail "no one-line reason"; }
[ -f stub.log ] || fail "the build stage never ran MAKE"
grep -q "^args: .*WERROR=0" stub.log || fail "built without WERROR=0: $(cat stub.log)"
grep -q "^no_install: 1$" stub.log || fail "configure may install: $(cat stub.log)"
grep -q "ACCUBENCH_NO_INSTALL=1" "$ACCUBENCH_ROOT/scripts/check_gpu_kernels.sh" ||
    fail "scripts/check_gpu_kernels.sh does not set ACCUBENCH_NO_INSTALL=1"
echo "ok: check-gpu builds with WERROR=0 and ACCUBENCH_NO_INSTALL=1, and stops on a failed build"
