#!/bin/sh
# make check-gpu's script run again, and cut short, as GPU calls do, on
# the CPU rehearsal: a signal to the check (the call's time limit) stops
# the stage running and still prints the table; a folder an earlier call
# wrote (results/ stays between calls) never lends a skipped stage its
# old figures, nor a rerun of one stage a step of 0 ms; a build folder's
# config.mk made on another machine is made again. Needs build/gpu-check
# (built only where nvcc is); skipped elsewhere.
set -u
build=$(dirname "$ACCUBENCH")
if [ ! -x "$build/gpu-check" ]; then
    echo "SKIP: no $build/gpu-check (built only where nvcc is)"
    exit 0
fi
fail() { echo "FAIL: $*"; exit 1; }
script=$ACCUBENCH_ROOT/scripts/check_gpu.sh
rehearse() { CHECK_GPU_REHEARSE=1 CHECK_SKIP_BUILD=1 BUILD="$build" timeout 120 sh "$script"; }
# running PATTERN: a process whose command line names the folder PATTERN
# matches (a stage's --csv) is still there; written as cg[1], so that
# grep's own command line does not match it
running() { grep -lqs -- "$PWD/$1/" /proc/[0-9]*/cmdline; }

# TERM to the check 2 s into gpu-check (several seconds here): the stage
# is stopped with the check, and the table says so.
CHECK_GPU_REHEARSE=1 CHECK_SKIP_BUILD=1 BUILD="$build" CHECK_OUT="$PWD/cg1" \
    timeout 2 sh "$script" >out1 2>&1
rc=$?
[ "$rc" -eq 124 ] || { cat out1; fail "the check ended by itself (exit $rc) before the signal"; }
! running 'cg[1]' || fail "a stage of the check runs on after the check was stopped"
grep -q "^  [a-z-]* *FAIL     interrupted by SIGTERM after" out1 && [ -s cg1/summary.txt ] ||
    { cat out1; fail "no table, or no line for the stage the signal stopped"; }

# The graph ratio of a full check, then a QUICK one into the same folder,
# which skips it: the table has no graph ratio, old or new.
CHECK_ONLY=graph-ratio CHECK_OUT=cg2 rehearse >out2 2>&1 || { cat out2; fail "graph-ratio alone"; }
grep -q "^== graph / async" out2 || { cat out2; fail "graph-ratio alone printed no ratio"; }
CHECK_QUICK=1 CHECK_ONLY=graph-ratio CHECK_OUT=cg2 rehearse >out3 2>&1 || { cat out3; fail "QUICK"; }
grep -q "^  graph-ratio  skipped  QUICK" out3 || { cat out3; fail "QUICK did not skip graph-ratio"; }
! grep -q "^== graph / async" out3 || { cat out3; fail "a skipped stage's table shows an earlier call's figures"; }

# The attention stage rerun alone, with no gpt-sweep CSV beside it: no
# figure, rather than a default arrangement's step of 0 ms.
CHECK_ONLY=attention CHECK_OUT=cg3 rehearse >out4 2>&1 || { cat out4; fail "attention alone"; }
grep -q "^  attention    pass     [0-9]*s$" out4 || { cat out4; fail "attention alone has a figure"; }

# config.mk made on another machine (here: one without nvcc) is made
# again before the build; one that says the same is kept, time stamp too.
# MAKE: make itself for config.mk, a refusal for the rest.
mkdir b
sed 's/^HAVE_NVCC := .*/HAVE_NVCC := 0/' "$build/config.mk" >b/config.mk
echo "# carried" >>b/config.mk
cat >stub-make <<STUB
#!/bin/sh
for a; do last=\$a; done
case \$last in */config.mk) exec make -s -C "$ACCUBENCH_ROOT" -o build/accubench "\$@" ;; esac
echo "\$*" >>"$PWD/make-args"
exit 2
STUB
chmod +x stub-make
MAKE="$PWD/stub-make" BUILD="$PWD/b" CHECK_GPU_REHEARSE=1 CHECK_OUT=cg4 timeout 120 sh "$script" >out5 2>&1
[ $? -eq 1 ] && grep -q "WERROR=0 all$" make-args || { cat out5; fail "the build did not run make all after config.mk"; }
! grep -q "# carried" b/config.mk && grep -q "^HAVE_NVCC := $(sed -n 's/^HAVE_NVCC := //p' "$build/config.mk")$" b/config.mk ||
    { cat out5 b/config.mk; fail "the carried config.mk was kept"; }
touch -d '2001-01-01' b/config.mk
MAKE="$PWD/stub-make" BUILD="$PWD/b" CHECK_GPU_REHEARSE=1 CHECK_OUT=cg4 timeout 120 sh "$script" >out6 2>&1
[ -n "$(find b/config.mk ! -newermt 2001-01-02)" ] || fail "an unchanged config.mk was rewritten (a full rebuild)"
echo "ok: check-gpu stopped, rerun and rebuilt as GPU calls do"
