#!/bin/sh
# The GPU box's one call (make check-gpu): build, check the CUDA backend
# against the CPU reference, run the abc profile in every mode, a short
# bf16 sweep over S, M and L, a short one of GPT-2 small at its context of
# 1024, its kernels' device time on both attention arrangements, the noise
# pass against the CPU's, data parallel over NCCL on every
# GPU (under mpirun) with every shard value, and the memory-time frontier
# (profiles/frontier-gpu, plan --recommend), then print
# a compact table last: every stage, pass, FAIL or skipped, with its figure.
# Everything it writes goes to CHECK_OUT (default results/check-gpu/): the
# CSVs, one log per stage, nvidia-smi's report, stages.txt (a line per stage
# as it ends). Made to fit one 10-minute call on an H200 including the
# build (QUICK=1: under 4 minutes); never installs anything
# (ACCUBENCH_NO_INSTALL=1), and builds with WERROR=0.
#
#   CHECK_OUT=DIR          where the results go
#   BUILD=DIR              the build directory (default build)
#   CHECK_SKIP_BUILD=1     use what BUILD holds
#   CHECK_QUICK=1          (make check-gpu QUICK=1) every op and both models
#                          per dtype, one sweep row per mode; the real-shape,
#                          graph-ratio and kernel-count stages skipped
#   CHECK_BUDGET_S=N       seconds for everything (default 540, QUICK 220);
#                          each stage's limit shrinks to what is left, and a
#                          stage with no time left fails as "budget spent"
#   CHECK_ONLY=a,b         only these stages (the build too, unless skipped);
#                          the others' files in CHECK_OUT are kept, and read
#   CHECK_SANITIZER=PATH   compute-sanitizer (default: on PATH or in CUDA_HOME)
#   CHECK_GPU_REHEARSE=1   (make check-gpu CHECK_GPU_REHEARSE=1) a rehearsal
#                          on a machine without a GPU: the same stages on
#                          the CPU backend, models tiny and gpt-tiny, fp32,
#                          no graph mode, no kernel counts
#                          (tests/e2e/e2e_check_gpu_rehearsal.sh)
#
# Without a GPU (nvidia-smi -L lists none, and no /dev/nvidia0 stands in
# for a missing nvidia-smi) and without the rehearsal asked for, there is
# nothing to check: one line says so and how to rehearse, before anything
# is built or written, exit 2.
# A TERM, INT or HUP stops the stage running (or nvidia-smi's report, or
# the device's first open), prints the table with what ran, and ends the
# check as the signal would (143, 130, 129).
# Exit status: 0 when no stage failed (skipped ones do not fail), 1 otherwise;
# 2 bad input (a knob that is not 0 or 1) or no GPU.
set -u
export ACCUBENCH_NO_INSTALL=1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/knobs.sh"
out=${CHECK_OUT:-results/check-gpu}
build=${BUILD:-build}
quick=${CHECK_QUICK:-0}
knob_bit QUICK "$quick"
rehearse=${CHECK_GPU_REHEARSE:-0}
knob_bit CHECK_GPU_REHEARSE "$rehearse"
knob_bit CHECK_SKIP_BUILD "${CHECK_SKIP_BUILD:-0}"
# a number before it reaches $((...)), where sh would read other text as
# an expression (bash: as code)
[ -z "${CHECK_BUDGET_S:-}" ] || knob_count CHECK_BUDGET_S "$CHECK_BUDGET_S"
# nvidia-smi ARGS, bounded: on a GPU in a bad state (an Xid, a device
# the driver lost) or a box without persistence mode it can take minutes,
# and the check would spend its whole call before its first stage, with
# no table. 20 s is ample where the driver answers.
smi_s=20 smi_answers=1
smi() { timeout -k 2 "$smi_s" nvidia-smi "$@"; }
# The GPUs here: nvidia-smi's list, else the driver's device nodes (a
# container may be given the GPUs without the driver's tools; the stages
# then say what works). Counted once: each nvidia-smi costs seconds.
gpu_count() {
    n=$(smi -L 2>/dev/null | grep -c '^GPU')
    if [ "$n" -eq 0 ]; then
        for node in /dev/nvidia[0-9]*; do
            [ -e "$node" ] && n=$((n + 1))
        done
    fi
    echo "$n"
}
if [ "$rehearse" = 1 ]; then
    backend=cpu gpus=0
else
    s_smi=$(date +%s)
    gpus=$(gpu_count)
    # One that did not answer is asked nothing more (each ask its 20 s).
    if [ $(($(date +%s) - s_smi)) -ge "$smi_s" ]; then
        smi_answers=0
        echo "check-gpu: nvidia-smi -L did not answer in ${smi_s}s; the GPUs counted from /dev/nvidia*" >&2
    fi
    if [ "$gpus" -gt 0 ]; then
        backend=cuda
    else
        # Every stage would fail alike, each saying the same: one line instead.
        echo "check-gpu: no GPU here (nvidia-smi -L lists none, no /dev/nvidia0): nothing to check;" \
             "CHECK_GPU_REHEARSE=1 rehearses this script on the CPU backend" >&2
        exit 2
    fi
fi
# The whole check, build included, inside one 10-minute call (QUICK: 4).
if [ "$quick" = 1 ]; then budget=${CHECK_BUDGET_S:-220}; else budget=${CHECK_BUDGET_S:-540}; fi
only=${CHECK_ONLY:-}
mkdir -p -- "$out" || exit 1
: >"$out/stages.txt"
t0=$(date +%s)
failed="" gpu_state=""

say() { echo "check-gpu: $*"; }
elapsed() { echo $(($(date +%s) - t0)); }
# result NAME STATUS FIGURE: one line of the last table (stages.txt); a
# tab or a newline in the figure (a log's line) would break its columns.
result() { printf '%s\t%s\t%s\n' "$1" "$2" "$(printf '%s' "$3" | tr '\t\n' '  ')" >>"$out/stages.txt"; }
# skip NAME REASON: a stage that cannot run here; it does not fail the check.
skip() { clear_outputs "$1"; say "$1: skipped: $2"; result "$1" skipped "$2"; }
wanted() { [ -z "$only" ] || case ",$only," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
# clear_outputs NAME: the files stage NAME writes, removed before it runs
# or is skipped. The table reads whatever it finds in CHECK_OUT, and an
# earlier call's files (results/ stays on the device machine between
# calls) would stand in this call's table for a stage that was skipped
# (QUICK after a full check) or died before it wrote. A stage that
# CHECK_ONLY leaves out keeps its files: a rerun of one stage is read
# beside the rest.
clear_outputs() {
    case $1 in
    gpu-check | real-shapes | abc-modes | graph-ratio | dp) set -- "$1" "$1.csv" ;;
    sweep) set -- "$1" "sweep-$sweep_dtype.csv" ;;
    gpt-sweep) set -- "$1" "gpt-$sweep_dtype.csv" ;;
    attention) set -- "$1" "gpt-attention-$sweep_dtype.csv" ;;
    hot-kernels) set -- "$1" hot-kernels.txt ;;
    noise) set -- "$1" noise-dev.csv noise-cpu.csv ;;
    cupti-cost) set -- "$1" cupti-on.csv cupti-off.csv ;;
    frontier) set -- "$1" frontier.csv frontier-plan.txt ;;
    *) set -- "$1" ;;
    esac
    rm -f -- "$out/$1.log"
    shift
    for f in "$@"; do rm -f -- "$out/$f"; done
}
# positive TEXT: TEXT is a number above 0 (check_gpu_awk.sh's isnum,
# sourced with the table below).
# shellcheck disable=SC2154 # check_awk
positive() { LC_ALL=C awk -v v="$1" "$check_awk"'BEGIN { exit !(isnum(v) && v + 0 > 0) }'; }
# last_line FILE: its last line that is not blank, cut to a table's width.
last_line() { grep -v '^[[:space:]]*$' "$1" 2>/dev/null | tail -n 1 | sed 's/^[[:space:]]*//' | cut -c1-160; }
# The stage running now: its timeout's process, name and start.
stage_pid="" stage_name="" s0=0
# stage NAME SECONDS CMD...: runs CMD with a time limit, output to NAME.log,
# and records pass or FAIL (the figure: what figure makes of the log, else
# the seconds it took; a failure without one carries the log's last line,
# its reason). The limit shrinks to what is left of the whole check's
# budget.
stage() {
    name=$1 limit=$2
    shift 2
    [ "$name" = build ] || wanted "$name" || return 0
    clear_outputs "$name"
    left=$((budget - $(elapsed)))
    [ "$left" -lt "$limit" ] && limit=$left
    if [ "$limit" -lt 5 ]; then
        failed="$failed $name"
        say "$name: the ${budget}s budget is spent"
        result "$name" FAIL "not run: the ${budget}s budget is spent"
        return 1
    fi
    say "$name ($(elapsed)s so far, at most ${limit}s)"
    s0=$(date +%s)
    # Started in the background and waited for, so that a signal to the
    # check runs its handler (below) at once, not after the stage's limit.
    # CHECK_STAGE_S: the limit, for a stage script that shares it out.
    CHECK_STAGE_S=$limit timeout -k 10 "$limit" "$@" >"$out/$name.log" 2>&1 </dev/null &
    stage_pid=$! stage_name=$name
    wait "$stage_pid"
    rc=$?
    stage_pid=""
    took="$(($(date +%s) - s0))s"
    fig=$(figure "$name" 2>/dev/null)
    if [ "$rc" -ne 0 ]; then
        failed="$failed $name"
        why="exit $rc"
        # 124: timed out; 137: it caught the SIGTERM and was killed 10 s later
        [ "$rc" -eq 124 ] && why="timed out after ${limit}s" && say "$name: $why"
        [ "$rc" -eq 137 ] && why="timed out after ${limit}s, killed 10 s after" && say "$name: $why"
        say "$name: exit $rc; the log ends:"
        tail -n 15 "$out/$name.log" | sed 's/^/    /'
        [ -n "$fig" ] || fig=$(last_line "$out/$name.log")
        result "$name" FAIL "$why, $took${fig:+; $fig}"
    else
        result "$name" pass "$took${fig:+; $fig}"
    fi
    return "$rc"
}
# waited NAME SECONDS OUT ERR CMD...: a step of the check's own that is
# no stage (nvidia-smi's report, the device's first open), run as a stage
# is run: under timeout in the background and waited for, so that a
# signal stops it at once, and the table (the handler below) names NAME
# as the step it interrupted, instead of waiting out its limit in the
# foreground. Its output to the files OUT and ERR (- : into OUT),
# redirected here: a redirection of the call would be the handler's
# output too.
waited() {
    w_name=$1 w_s=$2 w_out=$3 w_err=$4
    shift 4
    s0=$(date +%s)
    if [ "$w_err" = - ]; then
        timeout -k 5 "$w_s" "$@" >"$w_out" 2>&1 </dev/null &
    else
        timeout -k 5 "$w_s" "$@" >"$w_out" 2>"$w_err" </dev/null &
    fi
    stage_pid=$! stage_name=$w_name
    wait "$stage_pid"
    w_rc=$?
    stage_pid=""
    return "$w_rc"
}
# A signal to the check (the call's own time limit, a ^C, a closed
# terminal): the stage running now is in a process group of its own
# (timeout's), which that signal never reaches; it would run on, on the
# GPU, for the rest of its limit, and the table would never be printed.
# The stage is stopped (timeout passes the TERM to its group, and kills it
# 10 s later), then the table printed with what ran, and the check ends
# as the signal would have ended it.
interrupted() {
    trap '' TERM INT HUP
    say "interrupted by SIG$1"
    if [ -n "$stage_pid" ]; then
        kill -TERM "$stage_pid" 2>/dev/null
        wait "$stage_pid"
        failed="$failed $stage_name"
        result "$stage_name" FAIL "interrupted by SIG$1 after $(($(date +%s) - s0))s"
    fi
    table | tee "$out/summary.txt"
    exit "$2"
}
. "$here/check_gpu_table.sh"

if [ "$backend" = cpu ]; then
    models_s=tiny models_sweep=tiny sweep_dtype=fp32
    ratio_modes=async,sync check_args="--device cpu --dtype fp32" profile_model="--model tiny"
    gpt_model=gpt-tiny det_model=gpt-tiny
else
    models_s=S models_sweep=S,M,L sweep_dtype=bf16
    ratio_modes=async,graph check_args="" profile_model=""
    # determinism's GPT: GPT-2's head dim 64 over three 64-query tiles, so
    # that the fused attention's double-buffered loops run as they do there
    gpt_model=gpt-small det_model=gpt:d=256,layers=2,heads=4,seq=192,vocab=1024
fi
# The sweeps' noise pass: the fewest windows whose estimate means
# anything (NOISE_WINDOWS_MIN), not the default 32: the pass's own stage
# (noise) is where it is checked, and in the sweeps it is time.
nw="--noise-windows 4"
# QUICK: one row per mode and per sweep, the benchmark point of GPT-2 small.
if [ "$quick" = 1 ]; then
    abc_micro="--micro 16" sweep_models=$models_s sweep_micro=64 gpt_micro=8
    dp_micro=32 dp_sync=window
else
    abc_micro="" sweep_models=$models_sweep sweep_micro=1,8,64,256 gpt_micro=1,8,16
    dp_micro=8,32 dp_sync=all
fi

trap 'interrupted TERM 143' TERM
trap 'interrupted INT 130' INT
trap 'interrupted HUP 129' HUP

# ---------------------------------------------------------------- build
# The toolkit: CUDA_HOME's nvcc, else the one on PATH (an image may put it
# elsewhere). Without it the build leaves the CUDA backend out, and the
# whole call would end at the missing gpu-check.
# A link on PATH (/usr/bin/nvcc to a toolkit's bin/nvcc) is followed: the
# toolkit's headers and libraries are beside the nvcc it names, not the link.
if [ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] && command -v nvcc >/dev/null 2>&1; then
    nvcc_at=$(command -v nvcc)
    nvcc_at=$(readlink -f "$nvcc_at" 2>/dev/null || echo "$nvcc_at")
    CUDA_HOME=$(cd "$(dirname "$nvcc_at")/.." && pwd)
    export CUDA_HOME
    say "CUDA_HOME=$CUDA_HOME (the nvcc on PATH; none in the CUDA_HOME given)"
fi
if [ "${CHECK_SKIP_BUILD:-0}" != 1 ]; then
    # WERROR=0: the GPU box's host compiler may be newer than ours and warn
    # where ours does not; one warning must not cost the whole call. Its
    # config.mk made again first (check_gpu_build.sh says why).
    stage build 240 sh "$here/check_gpu_build.sh" "$build" "$(nproc 2>/dev/null || echo 8)" || {
        say "the build failed; nothing else can run"
        cut -f1-3 "$out/stages.txt" | sed 's/\t/  /g'
        exit 1
    }
fi
bin=$build/accubench
if [ ! -x "$bin" ] || [ ! -x "$build/gpu-check" ]; then
    say "$build/accubench or $build/gpu-check is missing (was nvcc found? see $out/build.log)"
    exit 1
fi
if [ "$backend" = cuda ] && [ "$smi_answers" = 1 ] && command -v nvidia-smi >/dev/null 2>&1; then
    waited nvidia-smi "$smi_s" "$out/nvidia-smi.txt" - nvidia-smi -q
    rc=$?
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        # asked nothing more: its next answer would cost another 20 s
        say "nvidia-smi -q did not answer in ${smi_s}s (a GPU in a bad state?); no GPU state in the table"
    else
        # The GPU as the check begins, for the table's head: another
        # process's memory or work explains an out-of-memory failure, a low
        # peak, noise.
        waited nvidia-smi "$smi_s" "$out/gpu-state.txt" /dev/null \
            nvidia-smi --query-gpu=index,memory.used,memory.total,utilization.gpu --format=csv,noheader,nounits
        # shellcheck disable=SC2034 # the table (check_gpu_table.sh) prints it
        gpu_state=$(awk -F', *' 'NF == 4 {
            printf "%sGPU %s: %s of %s MiB in use, %s%% busy", sep, $1, $2, $3, $4; sep = "; " }' "$out/gpu-state.txt")
    fi
fi
# Every execution mode the backend can run, from the program's own table,
# which opens the device: the check's first touch of it. Where it does not
# open (a driver older than the toolkit, a GPU another process holds in
# exclusive mode, CUDA_VISIBLE_DEVICES naming none) every stage would fail
# alike, one after another: one line instead, and the table. Bounded, as
# a driver that lost its GPU can hang the first call into it, and waited
# for in the background: a signal meanwhile ends it and prints the table
# at once (its device line: interrupted), not up to a minute later.
waited device 60 "$out/modes.txt" "$out/device.log" "$bin" --list-modes "$backend"
rc=$?
modes=$(paste -sd, "$out/modes.txt")
if [ "$rc" -ne 0 ] || [ -z "$modes" ]; then
    why=$(last_line "$out/device.log")
    [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && why="no answer in 60 s${why:+: $why}"
    failed="$failed device"
    say "the $backend device does not open: ${why:-exit $rc, no mode listed}"
    result device FAIL "${why:-accubench --list-modes $backend: exit $rc, no mode listed}"
    table | tee "$out/summary.txt"
    exit 1
fi

# ------------------------------------------------------------ the stages
# shellcheck disable=SC2086 # the argument lists are meant to split
stage gpu-check 150 "$build/gpu-check" $check_args --csv "$out/gpu-check.csv" --replace
# GPT-2 small's own sizes against the CPU (whose reference takes tens of
# seconds there, minutes on a few cores).
if [ "$backend" = cpu ]; then
    wanted real-shapes && skip real-shapes "CPU rehearsal (the CPU reference at GPT-2 small's sizes takes minutes on few cores)"
elif [ "$quick" = 1 ]; then
    wanted real-shapes && skip real-shapes "QUICK"
else
    stage real-shapes 150 "$build/gpu-check" --real-shapes --dtype bf16 --csv "$out/real-shapes.csv" \
        --replace
fi
# fp32 here, as the GPU's default (--dtype auto) is bf16: the modes and the
# graph ratio are compared with the fp32 runs they were first measured in.
stage abc-modes 120 "$bin" run --backend "$backend" --profile abc $profile_model $abc_micro $nw \
    --dtype fp32 --mode "$modes" --budget-s 0.5 --max-samples 200 --csv "$out/abc-modes.csv" --replace
if [ "$quick" = 1 ]; then
    wanted graph-ratio && skip graph-ratio "QUICK"
else
    stage graph-ratio 60 "$bin" run --backend "$backend" --dtype fp32 --model "$models_s" $nw \
        --effective 64 --micro 1,2,4,8 --mode "$ratio_modes" --budget-s 0.3 --max-samples 200 \
        --trace-steps 0 --csv "$out/graph-ratio.csv" --replace
fi
stage sweep 120 "$bin" run --backend "$backend" --dtype "$sweep_dtype" --model "$sweep_models" $nw \
    --effective 256 --micro "$sweep_micro" --budget-s 0.5 --min-samples 3 --max-samples 100 \
    --trace-steps 0 --csv "$out/sweep-$sweep_dtype.csv" --replace
# GPT-2 small in bf16 (gpt-tiny in a rehearsal): 16 sequences of its
# context as 16x1, 8x2 and 1x16; micro 8 is the issue's benchmark point.
stage gpt-sweep 90 "$bin" run --backend "$backend" --dtype "$sweep_dtype" --model "$gpt_model" $nw \
    --effective 16 --micro "$gpt_micro" --budget-s 0.5 --min-samples 3 --max-samples 50 \
    --trace-steps 0 --csv "$out/gpt-$sweep_dtype.csv" --replace

# The other attention arrangement at the benchmark point (micro 8 of 16),
# timed beside gpt-sweep's row of the default: on CUDA the fused op, on
# the CPU the unfused path. Its setting (VAR=NAME) is the program's, from
# the backend's row, so that a default changed there is followed here
# (it opens nothing, so it needs no bound).
other_attention=$("$bin" --list-attention "$backend" 2>/dev/null | head -n 1)
if [ -z "$other_attention" ]; then
    wanted attention && skip attention "accubench --list-attention $backend names no other arrangement"
else
    stage attention 60 env "$other_attention" "$bin" run --backend "$backend" --dtype "$sweep_dtype" \
        --model "$gpt_model" $nw --effective 16 --micro 8 --budget-s 0.5 --min-samples 3 \
        --max-samples 50 --trace-steps 0 --csv "$out/gpt-attention-$sweep_dtype.csv" --replace
fi

# Where one micro-batch's time goes, kernel by kernel, on both attention
# arrangements (a traced step each): what the attention stage's ratio is
# made of.
stage hot-kernels 60 sh "$here/check_gpu_hot_kernels.sh" "$out" "$bin" "$backend" "$gpt_model" \
    "$sweep_dtype" "$other_attention"

# The noise pass on this backend against the CPU's, gpt-tiny fp32: the
# same code above the backend table, the norms summed on the device here
# (the rehearsal runs it too: CPU against CPU, to the bit).
stage noise 60 sh "$here/check_gpu_noise.sh" "$out" "$bin" "$backend" 8

# The peak every MFU is divided by, against the datasheet: a peak far from
# the device's datasheet range is a broken measurement (a throttled or
# shared GPU, a wrong dtype), not a denominator.
if wanted peak; then
    peak=$(meta "$out/gpt-$sweep_dtype.csv" peak_gemm_tflops)
    sheet=$(meta "$out/gpt-$sweep_dtype.csv" datasheet_tflops)
    # A figure only from numbers: the CSV's "%.4g" writes an infinite rate
    # (a GEMM timed at 0 s) as "inf", which gawk reads as 0, mawk as itself.
    if ! positive "$peak"; then
        failed="$failed peak"
        result peak FAIL "no peak_gemm_tflops in gpt-$sweep_dtype.csv${peak:+ (it reads $peak)}"
    elif ! positive "$sheet"; then
        skip peak "no datasheet figure for this device (measured $peak TFLOP/s)"
    elif awk -v p="$peak" -v d="$sheet" 'BEGIN { r = p / d; exit !(r >= 0.5 && r <= 1.05) }'; then
        result peak pass "$(awk -v p="$peak" -v d="$sheet" 'BEGIN { printf "%.0f TFLOP/s, %.0f%% of the datasheet %.0f (bound 50-105%%)", p, 100 * p / d, d }')"
    else
        failed="$failed peak"
        result peak FAIL "$(awk -v p="$peak" -v d="$sheet" 'BEGIN { printf "%.0f TFLOP/s is %.0f%% of the datasheet %.0f: outside 50-105%%", p, 100 * p / d, d }')"
    fi
fi

# Run twice, compare the window's gradient tensor by tensor, bit for bit,
# on each attention arrangement.
stage determinism 60 sh "$here/check_gpu_determinism.sh" "$out" "$bin" "$backend" "$det_model" \
    "$sweep_dtype" "$other_attention"
# Data parallel: the all-reduce engine of the backend (NCCL on the GPU, MPI
# on the CPU rehearsal) on every GPU the box has (one GPU is still a real
# NCCL communicator), in every sync mode and every shard value (ZeRO-1's
# reduce-scatter and all-gather, ZeRO-2's reduce to each owner: on one
# rank each is NCCL's own call over one rank), each config's gradient and
# weights checked across the ranks. Without MPI (no mpirun, or a build
# without it) there are no ranks: skipped, the rest of the check stands.
# Before the CUPTI cost and the sanitizer, whose times on a GPU are the
# least known: a budget they overrun no longer leaves NCCL unrun.
mpirun=${CHECK_MPIRUN:-mpirun}
# One GPU: NCCL's one-rank communicator in this process, no launcher and
# no MPI needed (kernels/nccl/nccl_solo_host.c); several, or the CPU
# rehearsal's 2 ranks: mpirun.
if [ "$backend" = cpu ]; then
    dp_ranks=2 dp_launch="$mpirun --oversubscribe -np 2"
else
    # CUDA_VISIBLE_DEVICES, where set, hides from CUDA GPUs that nvidia-smi
    # still lists: a rank for each listed GPU would find none of its own
    # past the visible ones, and refuse to start.
    dp_ranks=$gpus
    if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
        visible=$(printf '%s\n' "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c '[^[:space:]]')
        [ "$visible" -lt "$dp_ranks" ] && dp_ranks=$visible
    fi
    [ "$dp_ranks" -ge 1 ] 2>/dev/null || dp_ranks=1
    if [ "$dp_ranks" = 1 ]; then dp_launch=""; else dp_launch="$mpirun -np $dp_ranks"; fi
fi
if ! wanted dp; then
    :
elif [ "$backend" != cpu ] && ! grep -q '^HAVE_NCCL := 1' "$build/config.mk" 2>/dev/null; then
    skip dp "no NCCL (built without it: see $build/config.mk)"
elif [ -n "$dp_launch" ] && ! command -v "$mpirun" >/dev/null 2>&1; then
    skip dp "no MPI for $dp_ranks ranks ($mpirun not found)"
elif [ -n "$dp_launch" ] && ! grep -q '^HAVE_MPI := 1' "$build/config.mk" 2>/dev/null; then
    skip dp "no MPI for $dp_ranks ranks (built without mpicc)"
else
    [ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    # shellcheck disable=SC2086 # dp_launch is a command and its options
    stage dp 90 $dp_launch "$bin" run --backend "$backend" \
        --model "$models_s" --effective 256 --micro "$dp_micro" --sync "$dp_sync" \
        --shard all $nw \
        --budget-s 0.3 --max-samples 100 --trace-steps 0 --csv "$out/dp.csv" --replace
fi
# What the CUPTI collector's subscription costs the timed passes.
if [ "$backend" = cpu ]; then
    wanted cupti-cost && skip cupti-cost "the cpu backend has no CUPTI"
else
    stage cupti-cost 60 sh "$here/check_gpu_cupti_cost.sh" "$out" "$bin"
fi
# Memory, race and initialisation checking where compute-sanitizer is.
sanitizer=${CHECK_SANITIZER:-}
if [ -z "$sanitizer" ] && [ "$backend" != cpu ]; then
    sanitizer=$(command -v compute-sanitizer 2>/dev/null ||
        { [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer" ] &&
          echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer"; })
fi
if [ -n "$sanitizer" ]; then
    stage sanitizer 120 sh "$here/check_gpu_sanitizer.sh" "$out" "$build" "$backend" \
        "$sanitizer" "$quick"
elif [ "$backend" = cpu ]; then
    wanted sanitizer && skip sanitizer "CPU rehearsal (CHECK_SANITIZER=PATH to run one)"
else
    wanted sanitizer && skip sanitizer "compute-sanitizer not found (PATH, ${CUDA_HOME:-/usr/local/cuda}/bin)"
fi

# The kernel counts need CUPTI on a GPU: not part of a CPU rehearsal.
if [ "$backend" = cpu ]; then
    wanted kernels && skip kernels "CPU rehearsal (CUPTI and ncu count GPU kernels)"
elif [ "$quick" = 1 ]; then
    wanted kernels && skip kernels "QUICK"
else
    stage kernels 90 sh "$here/check_gpu_kernels.sh" "$out" "$build"
fi

# The memory-time frontier: every recompute value on GPT-2 small at 64
# sequences a step, then plan --recommend under a cap of 40 GB (15M on the
# rehearsal's tiny shapes: it rules out gpt-tiny 16x1). Last, so that it
# takes only what the stages before left of the budget, and only when
# that is its whole limit: else skipped, saying so, rather than cut short
# and failed. On an H200 the profile's GPT-2 small and medium (18 configs)
# had not finished gpt-small's nine in 82 s, so the check runs gpt-small
# alone; how long its nine take is not measured yet, hence the whole
# 150 s (the rehearsal's shapes: 20 s). A build whose run has no
# --recompute skips it.
if [ "$backend" = cpu ]; then frontier_need=20; else frontier_need=150; fi
if ! wanted frontier; then
    :
elif [ "$quick" = 1 ]; then
    skip frontier "QUICK"
elif ! "$bin" --list-options run | grep -qx recompute; then
    skip frontier "this build has no --recompute"
elif [ $((budget - $(elapsed))) -lt "$frontier_need" ]; then
    # Cut short by the budget it would fail as "timed out", which says
    # nothing about the frontier: skipped instead, with how to run it.
    skip frontier "$((budget - $(elapsed)))s of the ${budget}s budget left, under the \
${frontier_need}s it needs (CHECK_ONLY=frontier runs it alone)"
else
    if [ "$backend" = cpu ]; then frontier_cap=15M; else frontier_cap=40G; fi
    stage frontier 150 sh "$here/check_gpu_frontier.sh" "$out" "$bin" "$backend" "$frontier_cap"
fi

# ------------------------------------------------------------- the table

# The stages are over: a signal now ends the check as it would any program.
trap - TERM INT HUP
table | tee "$out/summary.txt"
[ -z "$failed" ]
