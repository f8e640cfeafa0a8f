#!/bin/sh
# make check-gpu's script, rehearsed on the CPU backend (CHECK_GPU_REHEARSE=1):
# every stage runs, the CSVs and logs land in CHECK_OUT, and the compact
# table comes last with each of its parts. Needs build/gpu-check, which is
# built only where nvcc is; skipped elsewhere.
set -u
build=$(dirname "$ACCUBENCH")
if [ ! -x "$build/gpu-check" ]; then
    echo "SKIP: no $build/gpu-check (built only where nvcc is)"
    exit 0
fi
fail() { echo "FAIL: $*"; exit 1; }
CHECK_GPU_REHEARSE=1 CHECK_SKIP_BUILD=1 CHECK_BUDGET_S=900 BUILD="$build" CHECK_OUT=cg \
    timeout 900 sh "$ACCUBENCH_ROOT/scripts/check_gpu.sh" >stdout 2>&1 ||
    { cat stdout; fail "the rehearsal failed"; }
for f in gpu-check.csv abc-modes.csv graph-ratio.csv sweep-fp32.csv gpt-fp32.csv dp.csv summary.txt; do
    [ -s "cg/$f" ] || { cat stdout; fail "cg/$f is missing or empty"; }
done
# Attention on both of the device's paths, each output against the CPU's
# fused op, at the Llama's head dim (CPU against CPU here, which leaves
# out GPT-2 small's shape: the same code, at ~10 s a dtype).
for path in "fused y" "fused lse" "fused dq" "fused dk" "fused dv" "unfused y" "unfused dq" \
    "unfused dk" "unfused dv"; do
    grep -q "^attention $path,fp32,128x4x256x1,.*,ok," cg/gpu-check.csv ||
        { grep attention cg/gpu-check.csv; fail "no attention $path at head dim 128"; }
done
grep -q "^attention [a-z]* [a-z]*,fp32,64x12x1024x1," cg/gpu-check.csv &&
    fail "the CPU against itself ran GPT-2 small's attention shape"
grep -q "^llama unfused forward+backward,fp32,.*,ok," cg/gpu-check.csv ||
    fail "gpu-check.csv lacks the Llama's window on the unfused path"
sed -n '/^== check-gpu/,$p' stdout >table
for want in "== correctness" "fp32   32x1" "gpt fp32  16x1" "0 failed" "A 64x1" "alloc-async" \
    "MFU" "gpt-tiny fp32" "micro   8 x 2" "sync/async:  micro 1" \
    "== data parallel, tiny at effective 256 (2 launched; all-reduce by mpi)" \
    "2    overlap  none            8x16" "2    overlap  gradients       8x16" "weights equal" \
    "== hot kernels: one micro-batch of gpt-tiny at micro 8" "  fused attention:" \
    "  unfused attention:" "ms of device time in"; do
    grep -q -- "$want" table || { cat stdout; fail "the table lacks '$want'"; }
done
tail -n 1 stdout | grep -q "^== [0-9]*s; results in cg$" || { cat stdout; fail "the last line"; }
# A hot-kernels rerun that fails leaves no table for the last table to
# print: neither the earlier run's nor a part of its own.
[ -s cg/hot-kernels.txt ] || fail "no cg/hot-kernels.txt after the rehearsal"
sh "$ACCUBENCH_ROOT/scripts/check_gpu_hot_kernels.sh" cg /bin/false cpu gpt-tiny fp32 X=1 \
    >hot.out 2>&1 && fail "a failing hot-kernels run passed"
[ ! -e cg/hot-kernels.txt ] && [ ! -e cg/hot-kernels.txt.tmp ] ||
    fail "a failed hot-kernels run left a table behind"
# The same for the frontier's plans: a run refused (exit 2) leaves none.
[ -s cg/frontier-plan.txt ] || fail "no cg/frontier-plan.txt after the rehearsal"
printf '#!/bin/sh\nexit 2\n' >refusing && chmod +x refusing
sh "$ACCUBENCH_ROOT/scripts/check_gpu_frontier.sh" cg "$PWD/refusing" cpu 15M >frontier.out 2>&1
[ $? -eq 2 ] && [ ! -e cg/frontier-plan.txt ] || fail "a refused frontier run left the last plans"
# The stage table: every stage with its status and figure, skipped ones
# with their one-line reason.
for want in "== stages: pass, FAIL or skipped" "gpu-check    pass     .* checks, 0 failed" \
    "real-shapes  skipped  CPU rehearsal" "abc-modes    pass" "gpt-sweep    pass" \
    "attention    pass     .*fused [0-9.]* ms, unfused [0-9.]* ms a step at micro 8: fused/unfused [0-9.]*x" \
    "noise        pass     .*B_simple .* on cpu, .* on cpu: agree" \
    "hot-kernels  pass     .*fused [0-9.]* ms; unfused [0-9.]* ms" \
    "peak         skipped  no datasheet figure" "determinism  pass" \
    "cupti-cost   skipped  the cpu backend has no CUPTI" "sanitizer    skipped  CPU rehearsal" \
    "dp           pass" "kernels      skipped  CPU rehearsal"; do
    grep -q -- "$want" table || { cat stdout; fail "the stage table lacks '$want'"; }
done

# Skips and failures of single stages (CHECK_ONLY): without MPI the data-
# parallel stage is skipped and the check still passes; a sanitizer that
# reports fails the check, its line saying so.
cat >sanitizer <<'STUB'
#!/bin/sh
echo "========= ERROR SUMMARY: 1 error"
exit 9
STUB
chmod +x sanitizer
CHECK_GPU_REHEARSE=1 CHECK_SKIP_BUILD=1 BUILD="$build" CHECK_OUT=cg2 CHECK_ONLY=dp \
    CHECK_MPIRUN=/nonexistent/mpirun timeout 60 sh "$ACCUBENCH_ROOT/scripts/check_gpu.sh" \
    >stdout2 2>&1 || { cat stdout2; fail "no MPI failed the check"; }
grep -q "^  dp           skipped  no MPI for 2 ranks (/nonexistent/mpirun not found)" stdout2 ||
    { cat stdout2; fail "no MPI: no skipped line"; }
CHECK_GPU_REHEARSE=1 CHECK_SKIP_BUILD=1 BUILD="$build" CHECK_OUT=cg3 CHECK_ONLY=sanitizer \
    CHECK_SANITIZER="$PWD/sanitizer" timeout 60 sh "$ACCUBENCH_ROOT/scripts/check_gpu.sh" \
    >stdout3 2>&1 && { cat stdout3; fail "a sanitizer report passed"; }
grep -q "^  sanitizer    FAIL     exit 1" stdout3 || { cat stdout3; fail "no FAIL line for the sanitizer"; }
tail -n 1 stdout3 | grep -q "FAILED: sanitizer$" || { cat stdout3; fail "the last line of a failed check"; }

# A sanitizer that reports nothing: each of its runs (the full stage's
# seven: gpu-check, and two GPT runs under three tools each) must run as
# asked, into its own CSV, the bf16 one alone on the CUDA backend's fused
# attention (the log the stub keeps says which setting each run saw).
# Then a rerun of single stages into the same CHECK_OUT, as a stage that
# failed is rerun: no run may refuse a CSV the first one left.
cat >clean-sanitizer <<STUB
#!/bin/sh
echo "\$2 \${ACCUBENCH_CUDA_ATTENTION:-default} \$*" >>"$PWD/sanitizer-runs.txt"
shift 4 # --tool NAME --error-exitcode N
exec "\$@"
STUB
chmod +x clean-sanitizer
for i in 1 2; do
    CHECK_GPU_REHEARSE=1 CHECK_SKIP_BUILD=1 BUILD="$build" CHECK_OUT=cg4 \
        CHECK_ONLY=sanitizer,determinism,noise CHECK_SANITIZER="$PWD/clean-sanitizer" \
        timeout 120 sh "$ACCUBENCH_ROOT/scripts/check_gpu.sh" >stdout4 2>&1 ||
        { cat stdout4 cg4/sanitizer.log; fail "run $i of the sanitizer, determinism and noise stages failed"; }
    grep -q "^check_gpu_sanitizer: PASS: gpt-memcheck:ok fused-memcheck:ok fused-racecheck:ok fused-initcheck:ok gpt-racecheck:ok gpt-initcheck:ok check-memcheck:ok$" \
        cg4/sanitizer.log || { cat cg4/sanitizer.log; fail "run $i: not every sanitizer run passed"; }
done
[ "$(grep -c ' fused .*--dtype bf16' sanitizer-runs.txt)" -eq 6 ] &&
    [ "$(grep -c ' fused ' sanitizer-runs.txt)" -eq 6 ] ||
    { cat sanitizer-runs.txt; fail "the fused setting did not reach the bf16 runs alone"; }
# determinism ran on both attention arrangements, each named as its CSV
# names it, the loss sums compared with the tensors
grep -q "^check_gpu_determinism: fused attention: [1-9][0-9]* tensors identical; differ: none$" \
    cg4/determinism.log &&
    grep -q "^check_gpu_determinism: unfused attention: [1-9][0-9]* tensors identical; differ: none$" \
        cg4/determinism.log || { cat cg4/determinism.log; fail "determinism: not both arrangements"; }
grep -q "^check_gpu_determinism: PASS: every tensor and the loss sum identical" cg4/determinism.log ||
    { cat cg4/determinism.log; fail "determinism: the loss sums not compared"; }

# No nvcc under CUDA_HOME but one on PATH: the build is pointed at it.
# No python3 either (a GPU image may have none): the noise stage compares
# its two rows with awk; a python3 or python that is run says so.
mkdir -p tk/bin
printf '#!/bin/sh\nexit 0\n' >tk/bin/nvcc
for py in python3 python; do
    printf '#!/bin/sh\necho "$0 $*" >>"%s/python-ran"\nexit 127\n' "$PWD" >tk/bin/$py
done
chmod +x tk/bin/*
PATH="$PWD/tk/bin:$PATH" CUDA_HOME="$PWD/no-toolkit" CHECK_GPU_REHEARSE=1 CHECK_SKIP_BUILD=1 \
    BUILD="$build" CHECK_OUT=cg5 CHECK_ONLY=noise timeout 60 \
    sh "$ACCUBENCH_ROOT/scripts/check_gpu.sh" >stdout5 2>&1 || { cat stdout5; fail "the noise stage alone"; }
grep -q "^check-gpu: CUDA_HOME=$PWD/tk (the nvcc on PATH" stdout5 ||
    { cat stdout5; fail "the nvcc on PATH was not taken"; }
grep -q "^  noise        pass     .*B_simple [0-9.e+-]* on cpu, [0-9.e+-]* on cpu: agree$" stdout5 &&
    [ ! -e python-ran ] || { cat stdout5 python-ran; fail "the noise stage without python3"; }
# The kernels stage by hand on the CPU (the check skips it there): the
# program's own CSV and trace file read with awk, every dispatch counted.
PATH="$PWD/tk/bin:$PATH" CHECK_GPU_REHEARSE=1 timeout 60 \
    sh "$ACCUBENCH_ROOT/scripts/check_gpu_kernels.sh" cgk "$build" >kernels.out 2>&1 ||
    { cat kernels.out; fail "the kernels stage on the CPU"; }
grep -q "^check_gpu_kernels: trace pass: kernels/step \([1-9][0-9]*\) (trace file: \1 kernels, 0 memsets, 0 memcpys), dropped records 0, source cpu$" \
    kernels.out && grep -q "^check_gpu_kernels: PASS: CUPTI [1-9][0-9]* kernels per step, [1-9][0-9]* dispatches" kernels.out &&
    [ ! -e python-ran ] || { cat kernels.out python-ran; fail "the kernels stage's counts without python3"; }
# The nvcc on PATH a link to the toolkit's (/usr/bin/nvcc, say): the
# toolkit is where the link leads, not the link's folder.
mkdir -p links
ln -sf "$PWD/tk/bin/nvcc" links/nvcc
PATH="$PWD/links:$PATH" CUDA_HOME="$PWD/no-toolkit" CHECK_GPU_REHEARSE=1 CHECK_SKIP_BUILD=1 \
    BUILD="$build" CHECK_OUT=cg6 CHECK_ONLY=noise timeout 60 \
    sh "$ACCUBENCH_ROOT/scripts/check_gpu.sh" >stdout6 2>&1 || { cat stdout6; fail "the noise stage alone, nvcc a link"; }
grep -q "^check-gpu: CUDA_HOME=$PWD/tk (the nvcc on PATH" stdout6 ||
    { cat stdout6; fail "the link to nvcc on PATH was not followed to its toolkit"; }
echo "ok: the check-gpu rehearsal printed its table"
