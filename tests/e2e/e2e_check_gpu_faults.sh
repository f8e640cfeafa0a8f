#!/bin/sh
# make check-gpu's script on a GPU box that misbehaves, without a GPU: an
# nvidia-smi that lists one (or hangs), and a build folder of stubs for
# the program and gpu-check (their runs write a CSV of one row, or fail
# with one line). Each fault must end quickly, with its reason in the
# last table: a device that does not open, a stage's failure, ncu without
# access to the counters or slower than the stage's time, ncu still
# running when the stage's limit ends it, CUDA_VISIBLE_DEVICES hiding
# GPUs nvidia-smi lists, nvidia-smi hanging, a signal while the device is
# opened or nvidia-smi reports, no python3, no ncu, no compute-sanitizer,
# a CSV without the column a figure is read from.
set -u
fail() { echo "FAIL: $*"; exit 1; }
script=$ACCUBENCH_ROOT/scripts/check_gpu.sh
mkdir -p bin b
cat >bin/nvidia-smi <<'STUB'
#!/bin/sh
[ -z "${SMI_HANG:-}" ] || { echo "$$" >"$SMI_HANG"; exec sleep 300; }
[ -z "${SMI_LOG:-}" ] || echo "$*" >>"$SMI_LOG"
case "$*" in
-q) [ -z "${SMI_HANG_Q:-}" ] || { echo "$$" >"$SMI_HANG_Q"; exec sleep 300; } ;;
-L) i=0; while [ "$i" -lt "${SMI_GPUS:-1}" ]; do echo "GPU $i: NVIDIA H200"; i=$((i + 1)); done ;;
--query-gpu=*) echo "0, 81920, 143771, 100" ;;
esac
STUB
# The program: --list-modes opens the device (STUB_NO_DEVICE: it does
# not; STUB_HANG_MODES: it never answers, its pid in that file); a run
# writes its --csv (a step_ms_median column only where STUB_MS gives its
# value; STUB_PEAK: the peak GEMM rate's line, beside a datasheet's 989)
# and --trace, or fails with STUB_FAIL's line.
cat >b/accubench <<'STUB'
#!/bin/sh
if [ -n "${STUB_NO_DEVICE:-}" ]; then echo "accubench: no usable CUDA device: $STUB_NO_DEVICE" >&2; exit 2; fi
[ "${1:-}" != --list-modes ] || [ -z "${STUB_HANG_MODES:-}" ] || { echo "$$" >"$STUB_HANG_MODES"; exec sleep 300; }
case ${1:-} in --list-modes) echo async; exit 0 ;; --list-options) echo recompute; exit 0 ;; esac
[ -n "${STUB_LOG:-}" ] && echo "$0 $*" >>"$STUB_LOG"
if [ -n "${STUB_FAIL:-}" ]; then echo "some progress"; echo "accubench: $STUB_FAIL" >&2; exit 1; fi
csv="" trace=""
while [ $# -gt 0 ]; do
    case $1 in --csv) csv=$2; shift ;; --trace) trace=$2; shift ;; esac
    shift
done
[ -z "$trace" ] || printf '{"traceEvents":[\n{"ph":"X","cat":"kernel","name":"k","dur":1}\n]}\n' >"$trace"
[ -z "$csv" ] || {
    [ -z "${STUB_PEAK:-}" ] || printf '# peak_gemm_tflops: %s\n# datasheet_tflops: 989\n' "$STUB_PEAK"
    printf '# trace_source: CUPTI activity\nkernels_per_step,dispatches_per_step,cupti_dropped,status%s\n1,1,0,ok%s\n' \
        "${STUB_MS:+,step_ms_median}" "${STUB_MS:+,$STUB_MS}"
} >"$csv"
exit 0
STUB
cp b/accubench b/gpu-check
printf 'HAVE_NCCL := 1\nHAVE_MPI := 1\n' >b/config.mk
# ncu: NCU=perm, the answer of a user without access to the counters;
# NCU=slow, one that does not end (its pid in ncu.pid); NCU=count, its
# CSV of one kernel (two metrics' rows), every field quoted and the
# kernel's name holding commas and a quote, as C++ names and ncu's CSV do.
cat >bin/ncu <<STUB
#!/bin/sh
echo "\$\$" >"$PWD/ncu.pid"
case \${NCU:-} in
perm) echo "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0." >&2; exit 1 ;;
slow) exec sleep 300 ;;
count) cat "$PWD/ncu-count.csv" ;;
esac
STUB
cat >ncu-count.csv <<'CSV'
==PROF== Connected to process 4242 (b/accubench)
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","4242","accubench","127.0.0.1","void gemm<float, 128>(int, ""a,b"")","1","7","(256, 1, 1)","(8, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","ns","2,048"
"0","4242","accubench","127.0.0.1","void gemm<float, 128>(int, ""a,b"")","1","7","(256, 1, 1)","(8, 1, 1)","0","9.0","Command line profiler metrics","sm__cycles_elapsed.avg","cycle","1,536"
==PROF== Disconnected from process 4242
CSV
# No python3 here: the stages read their CSVs with awk, which every GPU
# image has. A python3 or python that is run says so in python-ran.
for py in python3 python; do
    printf '#!/bin/sh\necho "$0 $*" >>"%s/python-ran"\nexit 127\n' "$PWD" >bin/$py
done
chmod +x bin/* b/*
# stopped at the end whatever happened: the stubs this test started
stop_stubs() {
    for f in ncu.pid smi.pid smi9.pid smi-q.pid modes.pid; do [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
}
trap stop_stubs EXIT
check() { PATH="$PWD/bin:$PATH" CHECK_SKIP_BUILD=1 BUILD="$PWD/b" timeout 120 sh "$script"; }
alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
SMI_HANG_Q="$PWD/smi9.pid" SMI_LOG="$PWD/smi9.log" CHECK_ONLY=abc-modes CHECK_OUT=cg9 check >out9 2>&1 &
smi_q_check=$!

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

# ncu's count read from its CSV: one kernel's two rows, a field with
# commas in its quotes, are one kernel, as CUPTI counted.
NCU=count CHECK_ONLY=kernels CHECK_OUT=cg5b check >out5b 2>&1 || { cat out5b cg5b/kernels.log; fail "ncu's count"; }
grep -q "^  kernels      pass     .*CUPTI 1 == ncu 1 kernels per step" out5b ||
    { cat out5b cg5b/kernels.log; fail "ncu's CSV was not counted as one kernel"; }

# No ncu on PATH nor in the toolkit: the stage passes on CUPTI's count,
# saying so; no compute-sanitizer: that stage is skipped, saying so. (A
# toolkit of nvcc alone, so that the one on PATH is not taken instead.)
mkdir -p no-toolkit/bin && cp cudahome/bin/nvcc no-toolkit/bin/
if ! PATH="$PWD/smi-only:$PATH" command -v ncu >/dev/null 2>&1 &&
    ! PATH="$PWD/smi-only:$PATH" command -v compute-sanitizer >/dev/null 2>&1; then
    CHECK_ONLY=kernels,sanitizer CHECK_OUT=cg5c PATH="$PWD/smi-only:$PATH" CUDA_HOME="$PWD/no-toolkit" \
        CHECK_SKIP_BUILD=1 BUILD="$PWD/b" timeout 120 sh "$script" >out5c 2>&1 ||
        { cat out5c; fail "no ncu or no compute-sanitizer failed the check"; }
    grep -q "^  kernels      pass     .*ncu skipped: not on PATH or in $PWD/no-toolkit/bin" out5c &&
        grep -q "^  sanitizer    skipped  compute-sanitizer not found" out5c ||
        { cat out5c; fail "no ncu or no compute-sanitizer: not said"; }
fi

# A CSV without the column a figure comes from: the CUPTI cost's runs
# wrote no step_ms_median. The stage fails, saying so, rather than print
# a time read from the row's other cells.
CHECK_ONLY=cupti-cost CHECK_OUT=cg5d check >out5d 2>&1 && { cat out5d; fail "a CSV without step_ms_median passed"; }
grep -q "^  cupti-cost   FAIL     exit 1, [0-9]*s; check_gpu_cupti_cost: no step_ms_median above 0 in the CSVs" out5d ||
    { cat out5d; fail "the cupti-cost line does not say the column is missing"; }
# With the column, the stage's line carries the figure it measured.
STUB_MS=2.5 CHECK_ONLY=cupti-cost CHECK_OUT=cg5e check >out5e 2>&1 || { cat out5e; fail "cupti-cost with its column"; }
grep -q "^  cupti-cost   pass     [0-9]*s; CUPTI subscribed: 2.500 ms a step, without: 2.500 ms (+0.0%)$" out5e ||
    { cat out5e; fail "the cupti-cost line lacks its figure"; }

# The peak against the datasheet: a rate the CSV writes as inf (a GEMM
# timed at 0 s) fails, saying so, and is no "0 TFLOP/s" (gawk reads inf
# as 0); a measured one is compared.
STUB_PEAK=inf CHECK_ONLY=gpt-sweep,peak CHECK_OUT=cg5f check >out5f 2>&1 && { cat out5f; fail "a peak of inf passed"; }
grep -q "^  peak         FAIL     no peak_gemm_tflops in gpt-bf16.csv (it reads inf)$" out5f ||
    { cat out5f; fail "the peak line does not say the rate is no number"; }
STUB_PEAK=900 CHECK_ONLY=gpt-sweep,peak CHECK_OUT=cg5g check >out5g 2>&1 || { cat out5g; fail "a peak of 900"; }
grep -q "^  peak         pass     900 TFLOP/s, 91% of the datasheet 989 (bound 50-105%)$" out5g ||
    { cat out5g; fail "the peak line lacks its figure"; }

# CUDA_VISIBLE_DEVICES=0 on a box whose nvidia-smi lists 2 GPUs: one
# rank, NCCL in the process, no mpirun wanted (none here).
SMI_GPUS=2 CUDA_VISIBLE_DEVICES=0 CHECK_MPIRUN=/nonexistent/mpirun CHECK_ONLY=dp CHECK_OUT=cg6 \
    STUB_LOG="$PWD/runs6" check >out6 2>&1 || { cat out6; fail "dp on one visible GPU"; }
grep -q "^  dp           pass" out6 && grep -q "b/accubench run .*--shard all" runs6 ||
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
# A signal to the check while the device is opened (--list-modes hangs,
# as on a driver that lost its GPU) or nvidia-smi reports: the step is
# stopped at once, not at the end of its limit (60 s, 20 s), and the
# table printed, its line saying what was interrupted.
interrupt() { # NAME PIDFILE VAR: the check with VAR=PIDFILE, a TERM after 3 s
    rm -f "$2"
    start=$(date +%s)
    env "$3=$2" PATH="$PWD/bin:$PATH" CHECK_SKIP_BUILD=1 BUILD="$PWD/b" CHECK_OUT="cg-$1" \
        timeout -k 20 3 sh "$script" >"out-$1" 2>&1
    rc=$? took=$(($(date +%s) - start))
    [ "$rc" -eq 124 ] && [ "$took" -lt 12 ] ||
        { cat "out-$1"; fail "$1: a TERM ended the check after ${took}s, exit $rc"; }
    grep -q "^  $1 *FAIL     interrupted by SIGTERM after [0-9]*s" "out-$1" && [ -s "cg-$1/summary.txt" ] ||
        { cat "out-$1"; fail "$1: no table, or no line for the interrupted step"; }
    sleep 1
    ! alive "$2" || fail "$1: still runs after the check was stopped"
}
interrupt device "$PWD/modes.pid" STUB_HANG_MODES
interrupt nvidia-smi "$PWD/smi-q.pid" SMI_HANG_Q

# nvidia-smi -q that never answers: after its 20 s, nvidia-smi is asked
# nothing more (the GPU's state would cost another 20 s), and the check
# goes on. In the background, beside the scenarios above.
wait "$smi_q_check"
smi_q_rc=$?
[ "$smi_q_rc" -eq 0 ] && grep -q "nvidia-smi -q did not answer in 20s" out9 ||
    { cat out9; fail "a hanging nvidia-smi -q: exit $smi_q_rc"; }
! grep -q -- --query-gpu smi9.log || { cat smi9.log; fail "nvidia-smi asked again after -q hung"; }

[ ! -e python-ran ] || { cat python-ran; fail "a stage ran python"; }
echo "ok: check-gpu's faults end quickly, each with its reason in the table"
