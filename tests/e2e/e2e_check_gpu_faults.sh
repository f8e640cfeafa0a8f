#!/bin/sh
# make check-gpu's script on a GPU box that misbehaves, without a GPU: an
# nvidia-smi that lists one (or hangs), and a build folder of stubs for
# the program and gpu-check (their runs write a CSV of one row, or fail
# with one line). Each fault must end quickly, with its reason in the
# last table: a device that does not open, a stage's failure, ncu without
# access to the counters or slower than the stage's time, ncu still
# running when the stage's limit ends it, CUDA_VISIBLE_DEVICES hiding
# GPUs nvidia-smi lists, nvidia-smi hanging.
set -u
fail() { echo "FAIL: $*"; exit 1; }
script=$ACCUBENCH_ROOT/scripts/check_gpu.sh
mkdir -p bin b
cat >bin/nvidia-smi <<'STUB'
#!/bin/sh
[ -z "${SMI_HANG:-}" ] || { echo "$$" >"$SMI_HANG"; exec sleep 300; }
case "$*" in
-L) i=0; while [ "$i" -lt "${SMI_GPUS:-1}" ]; do echo "GPU $i: NVIDIA H200"; i=$((i + 1)); done ;;
--query-gpu=*) echo "0, 81920, 143771, 100" ;;
esac
STUB
# The program: --list-modes opens the device (STUB_NO_DEVICE: it does
# not); a run writes its --csv and --trace, or fails with STUB_FAIL's line.
cat >b/accubench <<'STUB'
#!/bin/sh
if [ -n "${STUB_NO_DEVICE:-}" ]; then echo "accubench: no usable CUDA device: $STUB_NO_DEVICE" >&2; exit 2; fi
case ${1:-} in --list-modes) echo async; exit 0 ;; --list-options) echo recompute; exit 0 ;; esac
[ -n "${STUB_LOG:-}" ] && echo "$0 $*" >>"$STUB_LOG"
if [ -n "${STUB_FAIL:-}" ]; then echo "some progress"; echo "accubench: $STUB_FAIL" >&2; exit 1; fi
csv="" trace=""
while [ $# -gt 0 ]; do
    case $1 in --csv) csv=$2; shift ;; --trace) trace=$2; shift ;; esac
    shift
done
[ -z "$trace" ] || printf '{"traceEvents":[\n{"ph":"X","cat":"kernel","name":"k","dur":1}\n]}\n' >"$trace"
[ -z "$csv" ] ||
    printf '# trace_source: CUPTI activity\nkernels_per_step,dispatches_per_step,cupti_dropped,status\n1,1,0,ok\n' >"$csv"
exit 0
STUB
cp b/accubench b/gpu-check
printf 'HAVE_NCCL := 1\nHAVE_MPI := 1\n' >b/config.mk
# ncu: NCU=perm, the answer of a user without access to the counters;
# NCU=slow, one that does not end (its pid in ncu.pid).
cat >bin/ncu <<STUB
#!/bin/sh
echo "\$\$" >"$PWD/ncu.pid"
case \${NCU:-} in
perm) echo "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0." >&2; exit 1 ;;
slow) exec sleep 300 ;;
esac
STUB
chmod +x bin/* b/*
# stopped at the end whatever happened: the stubs this test started
stop_stubs() { for f in ncu.pid smi.pid; do [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null; done; }
trap stop_stubs EXIT
check() { PATH="$PWD/bin:$PATH" CHECK_SKIP_BUILD=1 BUILD="$PWD/b" timeout 120 sh "$script"; }
alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# A device that does not open: one line and the table, no stage run.
STUB_NO_DEVICE="all CUDA-capable devices are busy or unavailable" CHECK_OUT=cg1 check >out1 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat out1; fail "a device that does not open: exit $rc, not 1"; }
grep -q "^  device       FAIL     accubench: no usable CUDA device: all CUDA-capable devices are busy" out1 &&
    [ "$(cut -f1 cg1/stages.txt)" = device ] || { cat out1; fail "no device line, or stages ran"; }

# A stage that fails says why on its line: its log's last line; the
# table's head, what else held the GPU as the check began.
STUB_FAIL="cudaMalloc: out of memory (another process holds 80 GiB)" CHECK_ONLY=abc-modes CHECK_OUT=cg2 \
    check >out2 2>&1 && fail "a failing stage passed"
grep -q "^  abc-modes    FAIL     exit 1, [0-9]*s; accubench: cudaMalloc: out of memory (another process" out2 ||
    { cat out2; fail "the failed stage's line has no reason"; }
grep -q "^== as the check began: GPU 0: 81920 of 143771 MiB in use, 100% busy$" out2 ||
    { cat out2; fail "the table's head does not say the GPU was busy"; }

# ncu without access to the GPU's counters: the stage passes on CUPTI's
# count and its line says why ncu counted nothing.
NCU=perm CHECK_ONLY=kernels CHECK_OUT=cg3 check >out3 2>&1 ||
    { cat out3 cg3/kernels.log; fail "ncu's ERR_NVGPUCTRPERM failed the check"; }
grep -q "^  kernels      pass     .*ncu skipped: no access to the GPU's counters (ERR_NVGPUCTRPERM)" out3 ||
    { cat out3; fail "the kernels line does not say ncu had no access"; }

# ncu not on PATH but in the toolkit (CUDA_HOME/bin/ncu, as a CUDA install
# has it): found there, as compute-sanitizer is, not "skipped: not on PATH".
mkdir -p smi-only cudahome/bin
cp bin/nvidia-smi smi-only/ && cp bin/ncu cudahome/bin/ncu && printf '#!/bin/sh\n' >cudahome/bin/nvcc
chmod +x cudahome/bin/*
NCU=perm CHECK_ONLY=kernels CHECK_OUT=cg3b PATH="$PWD/smi-only:$PATH" CUDA_HOME="$PWD/cudahome" \
    CHECK_SKIP_BUILD=1 BUILD="$PWD/b" timeout 120 sh "$script" >out3b 2>&1
grep -q "^  kernels      pass     .*ncu skipped: no access to the GPU's counters" out3b ||
    { cat out3b; fail "the toolkit's ncu (CUDA_HOME/bin) was not found"; }

# ncu that does not finish in what the stage has left: skipped, saying
# so, within the stage's limit (31 s: about 21 s for ncu), and no ncu left.
rm -f ncu.pid
NCU=slow CHECK_ONLY=kernels CHECK_BUDGET_S=31 CHECK_OUT=cg4 check >out4 2>&1 ||
    { cat out4 cg4/kernels.log; fail "a slow ncu failed the check"; }
grep -q "^  kernels      pass     .*ncu skipped: not done in [0-9]*s" out4 || { cat out4; fail "no line for the slow ncu"; }
! alive ncu.pid || fail "ncu still runs after its stage"

# The stage's own limit ends it while ncu runs (check_gpu.sh's stage
# runner: timeout -k 10 around the script): no ncu may run on into the
# stages after.
rm -f ncu.pid
PATH="$PWD/bin:$PATH" NCU=slow CHECK_STAGE_S=90 timeout -k 10 6 sh "$ACCUBENCH_ROOT/scripts/check_gpu_kernels.sh" \
    cg5 b >out5 2>&1
[ -s ncu.pid ] || { cat out5; fail "ncu never started"; }
sleep 1
! alive ncu.pid || fail "the kernels stage ended by its limit left ncu running"

# CUDA_VISIBLE_DEVICES=0 on a box whose nvidia-smi lists 2 GPUs: one
# rank, NCCL in the process, no mpirun wanted (none here).
SMI_GPUS=2 CUDA_VISIBLE_DEVICES=0 CHECK_MPIRUN=/nonexistent/mpirun CHECK_ONLY=dp CHECK_OUT=cg6 \
    STUB_LOG="$PWD/runs6" check >out6 2>&1 || { cat out6; fail "dp on one visible GPU"; }
grep -q "^  dp           pass" out6 && grep -q "b/accubench run .*--shard none,optimizer,gradients" runs6 ||
    { cat out6; fail "dp did not run on the one visible GPU"; }

# nvidia-smi that never answers (a GPU the driver lost): the check goes
# on past it within its bound, saying so; here no device node stands in,
# so it ends as without a GPU.
if ! ls -d /dev/nvidia[0-9]* >/dev/null 2>&1; then
    SMI_HANG="$PWD/smi.pid" CHECK_OUT=cg7 check >out7 2>&1
    rc=$?
    [ "$rc" -eq 2 ] && grep -q "nvidia-smi -L did not answer in 20s" out7 ||
        { cat out7; fail "a hanging nvidia-smi: exit $rc"; }
    ! alive smi.pid || fail "nvidia-smi still runs"
fi
echo "ok: check-gpu's faults end quickly, each with its reason in the table"
