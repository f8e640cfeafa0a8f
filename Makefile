# accubench: gradient-accumulation throughput, measured.
#
#   make            build build/accubench (CPU backend; CUDA too where nvcc is)
#   make bench      a sweep on the best backend here (the default profile on a
#                   GPU, profiles/cpu otherwise), then its charts and report
#   make bench-full the default profile, GPU or not
#   make regress    BASE=REV: this tree against revision REV, the same profile
#                   run RUNS times each (default 3) alternated, compared over
#                   the runs (BASE_BIN=PROGRAM: against a program built)
#   make test       every test; the unit and e2e tests again under ASan + UBSan;
#                   the fuzz targets over their corpus
#   make fuzz       the fuzz targets, FUZZ_SECONDS each
#   make plots      charts from a CSV (CSV=FILE, default: newest in results/)
#   make report     Markdown + HTML report from a CSV (same CSV= rule)
#   make bench-report-scale  report and compare at 10^4..10^6 rows: time, memory
#   make rule-check the comparison rule on simulated rounds: its verdicts, and
#                   whether each interval holds at its level (RULE_RUNS a cell)
#   make check-gpu  the GPU box's one-call check (CHECK_OUT=DIR; QUICK=1: under 4 minutes;
#                   CHECK_GPU_REHEARSE=1: its stages on the CPU, where no GPU is)
#   make readme-figures  README.md's table and chart, from a real CPU run
#   make bench-dp   data parallel on the CPU: the dp profile under mpirun over
#                   1..DP_RANKS devices (default 2); DP_PROFILE=frontier-dp
#                   DP_DEVICES=2: every shard value on 2 ranks
#   make nsys       the abc profile under Nsight Systems
#   make peers      accubench beside its PyTorch peer on the abc profile: one
#                   CSV, the report's ratio per split, the side-by-side chart
#   make peers-ddp  accubench under mpirun beside the peer's DDP under torchrun,
#                   DP_RANKS ranks (default 2) on the CPU, PEER_DDP_PROFILE
#                   (default dp): one CSV and its report
#
# Knobs: CUDA_HOME, NVCC_GENCODE, DEBUG=1, VERBOSE=1, BUILD=dir,
#        PROFILE=name (bench: instead of the automatic choice),
#        ACCUBENCH_NO_INSTALL=1 (never apt-get),
#        WERROR=0 (warnings stay warnings: a newer host compiler than ours
#        may warn where ours does not; the GPU scripts build with it).

# make runs in the tree: the recipes name the tree's scripts and build
# folder by paths relative to where make runs, so `make -f TREE/Makefile`
# started in another folder would run that folder's scripts/*.sh as ours
# and build there. Refused, before anything runs.
ifneq ($(realpath $(lastword $(MAKEFILE_LIST))),$(realpath Makefile))
$(error make runs in accubench's tree: make -C $(dir $(lastword $(MAKEFILE_LIST))) ..., not -f from another folder)
endif

comma := ,
BUILD      ?= build
# BUILD is a folder make writes its own rules for: wherever a rule names
# it, its text is make code and shell code, so it cannot be passed as data
# (as the knobs below are). A name of anything but letters, digits and
# ._+-/ is refused before it is used.
ifneq ($(shell printf '%s' '$(subst ','\'',$(value BUILD))' | LC_ALL=C grep -c '^[A-Za-z0-9._+/-][A-Za-z0-9._+/-]*$$'),1)
$(error BUILD='$(value BUILD)': a folder name of letters, digits and ._+-/ only)
endif
CUDA_HOME  ?= /usr/local/cuda
NVCC       ?= $(CUDA_HOME)/bin/nvcc
NVCC_GENCODE ?= -gencode arch=compute_90a,code=sm_90a \
                -gencode arch=compute_90,code=compute_90
PROFILE    ?=
DEBUG      ?= 0
VERBOSE    ?= 0
WERROR     ?= 1
# The build knobs above are make code where they are used (switches,
# flags, a path), so each is checked as text ($(value): never expanded)
# before any use: a switch is 0 or 1, a path or the gencode flags plain
# characters on one line. Anything else stops make in one line.
$(foreach k,DEBUG VERBOSE WERROR ACCUBENCH_NO_INSTALL,$(if $(filter-out 0 1,$(value $(k))),\
    $(error $(k)='$(value $(k))': 0 or 1)))
# $(call not_plain,NAME,CHARS): the count of NAME's characters outside CHARS
# (tr's set), newlines counted
not_plain = $(shell printf '%s' '$(subst ','\'',$(value $(1)))' | LC_ALL=C tr -d '$(2)' | wc -c)
ifneq ($(call not_plain,CUDA_HOME,A-Za-z0-9._+/-),0)
$(error CUDA_HOME='$(value CUDA_HOME)': a folder name of letters, digits and ._+-/ only)
endif
ifneq ($(call not_plain,NVCC_GENCODE,A-Za-z0-9._+=$(comma)[] -),0)
$(error NVCC_GENCODE='$(value NVCC_GENCODE)': nvcc's -gencode flags, one line of letters, digits and ._+=$(comma)[]- only)
endif
export CUDA_HOME

# The knobs that reach a script or a program (profile names, counts,
# folders, argument lists): each passes as data. make expands a variable's
# text wherever it is used or exported, so a knob is never exported, and
# its text reaches the shell once, unexpanded ($(value)), as one
# single-quoted word: no character of it is make or shell code. The
# scripts check the ones that name a number (scripts/knobs.sh).
KNOBS := CSV PROFILE DP_PROFILE DP_DEVICES DP_RANKS MPIRUN CHECK_OUT QUICK CHECK_GPU_REHEARSE \
         PASSES_ARGS \
         NSYS SCALE_ROWS PYTHON PEER_DDP_PROFILE PEER_RATIO_ARGS PEER_RATIO_GPT \
         PEER_RATIO_GPT_MODES T TEST_BUILD_JOBS FUZZ_SECONDS FUZZ_RUNS BASE BASE_BIN RUNS \
         RULE_RUNS
knob = '$(subst ','\'',$(value $(1)))'
# A newline in a knob's text would end the recipe line it is passed on
# (make runs each line of a recipe as a command of its own): refused.
define newline


endef
$(foreach k,$(KNOBS),$(if $(findstring $(newline),$(value $(k))),\
    $(error $(k): one line (its value holds a newline))))
# An argument list (PASSES_ARGS, SCALE_ROWS, PEER_RATIO_ARGS) goes in as one
# word and is split by the recipe's shell on blanks, globbing off: words,
# never code. $(call knob_words,NAME) is the recipe's list, as "$$@".
knob_words = set -f; set -- $$(printf '%s' $(call knob,$(1)));
ifeq ($(VERBOSE),1)
Q :=
else
Q := @
endif

.DEFAULT_GOAL := all

# What this machine has (and, as root, what was installed): see the script.
include $(BUILD)/config.mk
$(BUILD)/config.mk: scripts/configure.sh
	@mkdir -p $(BUILD)
	$(Q)CC="$(CC)" NVCC="$(NVCC)" sh scripts/configure.sh > $@.tmp && mv $@.tmp $@

ifeq ($(DEBUG),1)
OPT := -O0 -g
else
OPT := -O3 -g
endif

# snprintf truncating a long message is the intended, safe behaviour.
WERROR_FLAG := $(if $(filter 1,$(WERROR)),-Werror)
WARN     := -Wall -Wextra $(WERROR_FLAG) \
            $(shell $(CC) -Werror -Wno-format-truncation -E -x c /dev/null >/dev/null 2>&1 && echo -Wno-format-truncation)
# harness/ is in rooms along its dependency lines, and each room sees only
# the rooms below it: util <- results, trace <- backend <- models <- run,
# and run/ in its own: step <- passes <- setup <- sweep (the step and what
# it runs on; the passes beside it: timing, counting, trace, noise, dump;
# the options and outputs; the sweep that runs the configs).
# An include that runs the wrong way (results reaching for backend.h, a
# pass reaching for the options, the harness reaching into kernels/) is a
# compile error, not a convention.
room_inc     = $(addprefix -Iharness/,$(1))
INC_util    := $(call room_inc,util)
INC_results := $(call room_inc,util results)
INC_trace   := $(call room_inc,util trace)
INC_models  := $(call room_inc,util trace backend models)
INC_run/step   := $(call room_inc,util trace backend models results run/step)
INC_run/passes := $(INC_run/step) -Iharness/run/passes
INC_run/setup  := $(INC_run/passes) -Iharness/run/setup
INC_run/sweep  := $(INC_run/setup) -Iharness/run/sweep
INC_run        := $(INC_run/sweep)
# Backends see the device interface and the shared per-element math.
INC_kernels := $(call room_inc,util trace backend) -Ikernels
# The programs and the tests see everything.
INC_all     := $(INC_run) -Ikernels -Ikernels/cpu -Ikernels/cuda -Ikernels/mpi -Ikernels/nccl
CPPFLAGS := -D_GNU_SOURCE -MMD -MP
# -fno-math-errno and -fno-trapping-math (no errno, no FP traps: nothing
# here reads either) let sqrtf be one instruction and the per-element loops
# vectorise.
CFLAGS   := -std=c11 $(OPT) $(WARN) -pthread -fno-math-errno -fno-trapping-math
LDLIBS   := -lm -pthread -ldl

# OpenBLAS is loaded on first use (kernels/cpu/cpu_openblas.c), not linked:
# the backend chooses its kernels before OpenBLAS's load-time pick. oneDNN
# too (kernels/cpu/cpu_onednn.c): a machine without it runs OpenBLAS.
ifeq ($(HAVE_OPENBLAS),1)
CPPFLAGS += -DACCUBENCH_HAVE_OPENBLAS=1
endif
ifeq ($(HAVE_ONEDNN),1)
CPPFLAGS += -DACCUBENCH_HAVE_ONEDNN=1
endif
ifeq ($(HAVE_NVTX),1)
CPPFLAGS += -DACCUBENCH_HAVE_NVTX=1 -isystem $(CUDA_HOME)/include
endif

# The backend-neutral core and the CPU backend: no CUDA header anywhere.
ROOMS    := util results trace models run/step run/passes run/setup run/sweep
CORE_SRC := $(foreach r,$(ROOMS),$(wildcard harness/$(r)/*.c)) $(wildcard kernels/cpu/*.c)
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/obj/%.o)
CORE_LIB := $(BUILD)/libaccubench.a

# The CUDA backend and the CUPTI collector, built only where nvcc is.
CUDA_CU  := $(wildcard kernels/cuda/*.cu)
CUDA_C   := $(wildcard kernels/cuda/*.c)
CUDA_OBJ := $(CUDA_CU:%.cu=$(BUILD)/obj/%.o) $(CUDA_C:%.c=$(BUILD)/obj/%.o)
CUDA_LIB := $(BUILD)/libaccubench_cuda.a
CUDA_LIBDIRS := -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/extras/CUPTI/lib64 \
                -Wl,-rpath,$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/extras/CUPTI/lib64
# cupti.h: in the toolkit's include/ (packaged toolkits), or in
# extras/CUPTI/include (the runfile installer's layout).
CUPTI_INC := $(firstword $(foreach d,$(CUDA_HOME)/include $(CUDA_HOME)/extras/CUPTI/include,\
                 $(if $(wildcard $(d)/cupti.h),$(d))))
# `make print-VAR` prints what make made of VAR (the paths above, the
# flags): how the tests see the build's choices without a toolkit.
print-%:
	@echo '$($*)'
# cuBLAS and cuBLASLt are not linked: the backend opens them when it
# starts (kernels/cuda/cublas_load.h), so that no other start pays for them.
CUDA_LDLIBS  := $(CUDA_LIBDIRS) -lcupti -lcudart -lstdc++ -lrt -ldl
NVCCFLAGS := -std=c++17 -O3 -g $(NVCC_GENCODE) -Xcompiler -Wall,-Wextra$(if $(WERROR_FLAG),$(comma)-Werror) \
             $(if $(WERROR_FLAG),-Werror all-warnings) $(INC_kernels) -Ikernels/cuda

ifneq ($(and $(filter 1,$(HAVE_NVCC)),$(CUDA_CU)),)
BACKEND_LIBS := $(CUDA_LIB) $(CORE_LIB)
BACKEND_LDLIBS := $(CUDA_LDLIBS)
CUDA_DEFINE := -DACCUBENCH_HAVE_CUDA=1
else
BACKEND_LIBS := $(CORE_LIB)
BACKEND_LDLIBS :=
CUDA_DEFINE :=
endif

# Data parallel: the MPI engine (and MPI's start) where mpicc is, the NCCL
# engine where CUDA and NCCL are, MPI or not (one rank alone needs no
# launcher: kernels/nccl/nccl_solo_host.c; its world under mpirun needs
# MPI); only their own files see mpi.h and nccl.h, and only the program's
# files know whether they are in.
DP_OBJ :=
DP_DEFINE :=
DP_LDLIBS :=
ifeq ($(HAVE_MPI),1)
DP_OBJ    += $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard kernels/mpi/*.c))
DP_DEFINE += -DACCUBENCH_HAVE_MPI=1
DP_LDLIBS += $(MPI_LIBS)
$(BUILD)/obj/kernels/mpi/%.o: ROOM_INC := $(INC_kernels) -Ikernels/mpi
$(BUILD)/obj/kernels/mpi/%.o: CPPFLAGS += $(MPI_CFLAGS)
endif
ifneq ($(and $(filter 1,$(HAVE_NCCL)),$(CUDA_DEFINE)),)
DP_OBJ    += $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard kernels/nccl/*.c))
DP_DEFINE += -DACCUBENCH_HAVE_NCCL=1
DP_LDLIBS += -L$(NCCL_LIBDIR) -Wl,-rpath,$(NCCL_LIBDIR) $(NCCL_LINK)
$(BUILD)/obj/kernels/nccl/%.o: ROOM_INC := $(INC_kernels) -Ikernels/nccl -Ikernels/mpi -Ikernels/cuda
# NCCL_INC is empty where nccl.h is in the compiler's own /usr/include
# (Debian's libnccl-dev): naming a system folder again with -isystem
# reorders the search. MPI's flags and define only where MPI is.
$(BUILD)/obj/kernels/nccl/%.o: CPPFLAGS += -isystem $(CUDA_HOME)/include \
    $(if $(NCCL_INC),-isystem $(NCCL_INC)) \
    $(if $(filter 1,$(HAVE_MPI)),$(MPI_CFLAGS) -DACCUBENCH_HAVE_MPI=1)
endif

BIN := $(BUILD)/accubench

.PHONY: all bench bench-full regress bench-dp test unit-test asan-test asan-e2e e2e-test plots report check-gpu nsys peers peers-ddp peer-ratio clean
all: $(BIN)

$(BUILD)/obj/%.o: %.c $(BUILD)/config.mk
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC    $<")
	$(Q)$(CC) $(CPPFLAGS) $(ROOM_INC) $(CFLAGS) -c $< -o $@

# Each object sees its own room's include list (above); the same for the
# sanitizer build.
ROOM_INC := $(INC_all)
$(foreach r,$(ROOMS),$(eval $(BUILD)/obj/harness/$(r)/%.o $(BUILD)/asan/obj/harness/$(r)/%.o: ROOM_INC := $$(INC_$(r))))
$(BUILD)/obj/kernels/cpu/%.o $(BUILD)/asan/obj/kernels/cpu/%.o: ROOM_INC := $(INC_kernels) -Ikernels/cpu
# In the CPU kernels a * b + c is one fused multiply-add, as nvcc makes it
# on the GPU: -std=c11 turns contraction off, and the fused attention's
# products then ran a multiply and an add for each term.
$(BUILD)/obj/kernels/cpu/%.o $(BUILD)/asan/obj/kernels/cpu/%.o: CFLAGS += -ffp-contract=fast
# cpu_lanes.h passes 64-byte vectors by value between inline functions of
# one file: GCC's note that such an ABI changed in GCC 4.6 concerns calls
# across files built by two compilers, which never happen here.
$(BUILD)/obj/kernels/cpu/%.o $(BUILD)/asan/obj/kernels/cpu/%.o: CFLAGS += \
    $(shell $(CC) -Werror -Wno-psabi -E -x c /dev/null >/dev/null 2>&1 && echo -Wno-psabi)
$(BUILD)/obj/kernels/cuda/%.o: ROOM_INC := $(INC_kernels) -Ikernels/cuda

# The tree the program was built from: where it finds its profiles and
# scripts when it has been copied away from them (harness/util/repo_path.c).
# A folder whose name a C string cannot hold as written is not named.
ifeq ($(or $(findstring ',$(CURDIR)),$(findstring ",$(CURDIR)),$(findstring \,$(CURDIR)),$(word 2,$(CURDIR))),)
$(BUILD)/obj/harness/util/repo_path.o $(BUILD)/asan/obj/harness/util/repo_path.o: \
    CPPFLAGS += -DACCUBENCH_BUILD_ROOT='"$(CURDIR)"'
endif

# Only the program's own files know whether CUDA is built in, so the core
# library links alone into the unit tests.
$(BUILD)/obj/bench/%.o: CPPFLAGS += $(CUDA_DEFINE) $(DP_DEFINE) -DACCUBENCH_GIT_REV=\"$(GIT_REV)\"

# -MMD -MP as for the C objects: an edit of a header a kernel includes
# (elementwise.h's math, backend.h's struct layout) rebuilds that kernel.
$(BUILD)/obj/kernels/cuda/%.o: kernels/cuda/%.cu $(BUILD)/config.mk
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC  $<")
	$(Q)$(NVCC) $(NVCCFLAGS) -MMD -MP -MF $(@:.o=.d) -c $< -o $@

# CUDA/CUPTI C sources see the CUDA headers; the core never does.
$(BUILD)/obj/kernels/cuda/%.o: CPPFLAGS += -isystem $(CUDA_HOME)/include \
    $(if $(CUPTI_INC),-isystem $(CUPTI_INC))

$(CORE_LIB): $(CORE_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(CUDA_LIB): $(CUDA_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

BENCH_OBJ := $(BUILD)/obj/bench/main.o $(BUILD)/obj/bench/backend_registry.o \
             $(BUILD)/obj/bench/dp_launch.o $(BUILD)/obj/bench/plan.o \
             $(BUILD)/obj/bench/plan_jobs.o $(BUILD)/obj/bench/plan_recommend.o \
             $(BUILD)/obj/bench/plan_probe.o $(BUILD)/obj/bench/plan_split.o \
             $(BUILD)/obj/bench/usage.o

# The revision the program reports and whether CUDA is in: the program's
# objects rebuild when either changes (the stamp is rewritten only then).
GIT_REV := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
$(BUILD)/bench-flags: FORCE
	@mkdir -p $(BUILD)
	@echo '$(GIT_REV) $(CUDA_DEFINE) $(DP_DEFINE)' | cmp -s - $@ || \
	    echo '$(GIT_REV) $(CUDA_DEFINE) $(DP_DEFINE)' > $@
.PHONY: FORCE
$(BENCH_OBJ): $(BUILD)/bench-flags

$(BIN): $(BENCH_OBJ) $(DP_OBJ) $(BACKEND_LIBS)
	@$(if $(Q),echo "  LD    $@")
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) $(DP_LDLIBS) $(BACKEND_LDLIBS)
ifeq ($(CUDA_DEFINE),)
	@echo "note: built without the CUDA backend (nvcc not found at $(NVCC))"
endif
ifeq ($(HAVE_MPI),1)
	@echo "note: built with MPI$(if $(findstring NCCL,$(DP_DEFINE)), and NCCL,): mpirun -np N $@ run ... runs N ranks"
else
	@echo "note: built without MPI (mpicc not found): one process, --devices 1"
endif

# ------------------------------------------------------------ GPU check
# build/gpu-check (only where the CUDA backend is built): the CUDA backend
# op by op against the CPU reference. `make check-gpu` is the GPU box's one
# call: build, gpu-check, the sweeps, a compact table (scripts/check_gpu.sh),
# results in CHECK_OUT. It never installs packages.
GPU_CHECK := $(BUILD)/gpu-check
CHECK_OUT ?= results/check-gpu
QUICK     ?= 0
# Without a GPU the check says so in one line; this rehearses it on the CPU.
CHECK_GPU_REHEARSE ?= 0
ifneq ($(CUDA_DEFINE),)
all: $(GPU_CHECK)
GPU_CHECK_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard bench/gpu_check/*.c))
$(GPU_CHECK_OBJ): $(BUILD)/bench-flags
# gpu-check opens its device from the program's backend table.
$(GPU_CHECK_OBJ): ROOM_INC += -Ibench
$(GPU_CHECK): $(GPU_CHECK_OBJ) $(BUILD)/obj/bench/backend_registry.o $(DP_OBJ) $(BACKEND_LIBS)
	@$(if $(Q),echo "  LD    $@")
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) $(DP_LDLIBS) $(BACKEND_LDLIBS)
-include $(GPU_CHECK_OBJ:.o=.d)
endif
ifneq ($(filter check-gpu,$(MAKECMDGOALS)),)
export ACCUBENCH_NO_INSTALL := 1
endif
check-gpu:
	$(Q)CHECK_OUT=$(call knob,CHECK_OUT) CHECK_QUICK=$(call knob,QUICK) BUILD='$(BUILD)' \
	    CHECK_GPU_REHEARSE=$(call knob,CHECK_GPU_REHEARSE) sh scripts/check_gpu.sh

# ------------------------------------------------------------ CPU programs
# $(call small_program,DIR,NAME): bench/DIR/main.c linked against the core
# as $(BUILD)/NAME, and against the sanitized library as $(BUILD)/asan/NAME
# for the sanitized e2e pass; `make` builds the first, the e2e tests need
# both.
define small_program
all: $(BUILD)/$(2)
$(BUILD)/obj/bench/$(1)/%.o: ROOM_INC := $(INC_all)
$(BUILD)/$(2): $(BUILD)/obj/bench/$(1)/main.o $(CORE_LIB)
	@$$(if $$(Q),echo "  LD    $$@")
	$$(Q)$$(CC) $$(CFLAGS) -o $$@ $$^ $$(LDLIBS)
$(BUILD)/asan/$(2): $(BUILD)/asan/obj/bench/$(1)/main.o $(BUILD)/asan/libaccubench-e2e.a
	@$$(if $$(Q),echo "  LD    $$@")
	$$(Q)$$(CC) $$(ASAN_CFLAGS) -o $$@ $$^ $$(LDLIBS)
-include $(BUILD)/obj/bench/$(1)/main.d $(BUILD)/asan/obj/bench/$(1)/main.d
e2e-test: $(BUILD)/$(2)
asan-e2e: $(BUILD)/asan/$(2)
endef

# build/cpu-passes: the CPU backend's MFU at S 256x1 (three runs, each
# against the peak GEMM rate measured in it) and its step pass by pass.
# `make passes` runs it (PASSES_ARGS=... for another model or split).
PASSES := $(BUILD)/cpu-passes
PASSES_ARGS ?=
$(eval $(call small_program,cpu_passes,cpu-passes))
passes: $(PASSES)
	$(Q)$(call knob_words,PASSES_ARGS) $(PASSES) "$$@"
.PHONY: passes
# build/gemm-bench: the CPU backend's GEMM shape by shape (median of
# --reps calls); bench/peers/peer_gemm.py runs it beside torch.mm.
GEMM_BENCH := $(BUILD)/gemm-bench
$(eval $(call small_program,gemm_bench,gemm-bench))
gemm-bench: $(GEMM_BENCH)
.PHONY: gemm-bench
# build/rule-check: the comparison rule (harness/util/paired.c) on
# simulated rounds, stopped as the rounds stop; `make rule-check` prints
# its table and checks the rule's claims against it.
RULE_CHECK := $(BUILD)/rule-check
$(eval $(call small_program,rule_check,rule-check))
rule-check: $(RULE_CHECK)
	$(Q)$(RULE_CHECK) --check $(if $(RULE_RUNS),--runs $(call knob,RULE_RUNS))
.PHONY: rule-check
ASAN_PROGRAMS := $(BUILD)/asan/cpu-passes $(BUILD)/asan/gemm-bench $(BUILD)/asan/rule-check

# ---------------------------------------------------------------- tests
# Unit tests: tests/ROOM/test_*.c (the rooms mirror the source), each a
# program linked against the core, built flat into $(BUILD)/tests. Each
# sees tests/ (check.h, test_spec.h) and its own room's folder.
# T=PATTERN runs only the unit and e2e tests whose path holds PATTERN.
T ?=
UNIT_SRC  := $(wildcard tests/*/test_*.c)
UNIT_BIN  := $(addprefix $(BUILD)/tests/,$(notdir $(UNIT_SRC:.c=)))
ASAN_BUILD := $(BUILD)/asan
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# At -O1, as ASan's documentation advises: the same checks for a third
# less compiling than -O3 (the sanitized tests' times are the program's
# budgets, hardly its speed).
ASAN_CFLAGS = $(filter-out -O%,$(CFLAGS)) $(if $(filter 1,$(DEBUG)),-O0,-O1) $(ASAN_FLAGS)
ASAN_OBJ  := $(CORE_SRC:%.c=$(ASAN_BUILD)/obj/%.o)
ASAN_BIN  := $(addprefix $(ASAN_BUILD)/tests/,$(notdir $(UNIT_SRC:.c=)))
# Helper libraries some tests load (the NVTX injection recorder).
TEST_SO   := $(patsubst %.c,$(BUILD)/tests/%.so,$(notdir $(wildcard tests/*/lib*.c)))

# One plain and one sanitized build rule per test source.
define unit_test_rule
$(BUILD)/tests/$(notdir $(1:.c=)): $(1) $$(CORE_LIB)
	@mkdir -p $$(dir $$@)
	$$(Q)$$(CC) $$(CPPFLAGS) $$(INC_all) -Itests -I$(dir $(1)) $$(CFLAGS) -o $$@ $$< $$(CORE_LIB) $$(LDLIBS)
$(ASAN_BUILD)/tests/$(notdir $(1:.c=)): $(1) $$(ASAN_BUILD)/libaccubench.a
	@mkdir -p $$(dir $$@)
	$$(Q)$$(CC) $$(CPPFLAGS) $$(INC_all) -Itests -I$(dir $(1)) $$(ASAN_CFLAGS) -o $$@ $$< $$(ASAN_BUILD)/libaccubench.a $$(LDLIBS)
endef
$(foreach s,$(UNIT_SRC),$(eval $(call unit_test_rule,$(s))))

define test_so_rule
$(BUILD)/tests/$(notdir $(1:.c=.so)): $(1)
	@mkdir -p $$(dir $$@)
	$$(Q)$$(CC) $$(CPPFLAGS) $$(INC_all) $$(CFLAGS) -fPIC -shared -o $$@ $$<
endef
$(foreach s,$(wildcard tests/*/lib*.c),$(eval $(call test_so_rule,$(s))))

$(ASAN_BUILD)/obj/%.o: %.c $(BUILD)/config.mk
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(ROOM_INC) $(ASAN_CFLAGS) -c $< -o $@

$(ASAN_BUILD)/libaccubench.a: $(ASAN_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

# The sanitized programs the e2e pass runs: the harness sanitized, the CPU
# backend as the plain build compiled it. Sanitized, the backend's loops
# (the model's compute, 5-10x slower) were 60% of the pass's time, and
# they repeat what the sanitized unit tests check shape by shape
# (test_gemm*, test_attention, test_transformer_ops, test_llama ...); a
# buffer the harness allocates still has ASan's redzones, and the
# harness's own reads and writes of it are checked. cpu_onednn.c stays
# sanitized: so built, it leaves oneDNN unloaded (LeakSanitizer's tracer
# crashes at exit with oneDNN loaded).
ASAN_E2E_LIB   := $(ASAN_BUILD)/libaccubench-e2e.a
ASAN_E2E_PLAIN := $(filter-out %/cpu_onednn.o,$(filter $(BUILD)/obj/kernels/cpu/%,$(CORE_OBJ)))
$(ASAN_E2E_LIB): $(filter-out $(ASAN_E2E_PLAIN:$(BUILD)/obj/%=$(ASAN_BUILD)/obj/%),$(ASAN_OBJ)) \
                 $(ASAN_E2E_PLAIN)
	$(Q)rm -f $@ && ar rcs $@ $^

# Each pass keeps its tests' times from its last run (TEST_TIMES), so the
# next one starts the slowest first (tests/run_tests.sh).
unit-test: $(UNIT_BIN) $(TEST_SO)
	$(Q)T=$(call knob,T) TEST_TIMES=$(BUILD)/tests/times.unit sh tests/run_unit.sh $(BUILD)/tests $(UNIT_BIN)

asan-test: $(ASAN_BIN) $(TEST_SO)
	$(Q)ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 T=$(call knob,T) \
	    TEST_TIMES=$(ASAN_BUILD)/times.unit sh tests/run_unit.sh $(BUILD)/tests $(ASAN_BIN)

# ACCUBENCH_BUILD: the build the program came from, whose objects a test of
# the build rules (e2e_nvcc_deps.sh) inspects instead of building its own.
# PYTHON: the python the PyTorch peer's and Hugging Face's checks run
# under (they skip, saying so, where it has no torch).
e2e-test: $(BIN) $(TEST_SO)
	$(Q)ACCUBENCH_BUILD=$(BUILD) TEST_TIMES=$(BUILD)/tests/times.e2e T=$(call knob,T) \
	    PYTHON=$(call knob,PYTHON) \
	    sh tests/run_e2e.sh $(BIN) $(BUILD)/tests

# The whole program under ASan + UBSan, CPU backend only (CUDA's runtime
# and ASan's shadow memory do not mix), and the e2e tests against it. The
# sanitizers log to files, so a report fails the pass even where a test
# does not look at the exit status.
ASAN_PROG      := $(ASAN_BUILD)/accubench
ASAN_BENCH_OBJ := $(BENCH_OBJ:$(BUILD)/obj/%=$(ASAN_BUILD)/obj/%)
ASAN_REPORTS   := $(ASAN_BUILD)/reports
$(ASAN_BENCH_OBJ): CPPFLAGS += -DACCUBENCH_GIT_REV=\"$(GIT_REV)\"
$(ASAN_BENCH_OBJ): $(BUILD)/bench-flags
# With the MPI engine where MPI is (never NCCL: no CUDA here), so the
# data-parallel tests run sanitized too.
ASAN_DP_OBJ    :=
ASAN_DP_LDLIBS :=
ifeq ($(HAVE_MPI),1)
ASAN_DP_OBJ    := $(patsubst %.c,$(ASAN_BUILD)/obj/%.o,$(wildcard kernels/mpi/*.c))
ASAN_DP_LDLIBS := $(MPI_LIBS)
$(ASAN_DP_OBJ): ROOM_INC := $(INC_kernels) -Ikernels/mpi
$(ASAN_DP_OBJ): CPPFLAGS += $(MPI_CFLAGS)
$(ASAN_BENCH_OBJ): CPPFLAGS += -DACCUBENCH_HAVE_MPI=1
endif
$(ASAN_PROG): $(ASAN_BENCH_OBJ) $(ASAN_DP_OBJ) $(ASAN_E2E_LIB)
	@$(if $(Q),echo "  LD    $@")
	$(Q)$(CC) $(ASAN_CFLAGS) -o $@ $^ $(LDLIBS) $(ASAN_DP_LDLIBS)

asan-e2e: $(ASAN_PROG) $(TEST_SO)
	$(Q)rm -rf $(ASAN_REPORTS) && mkdir -p $(ASAN_REPORTS)
	$(Q)ASAN_OPTIONS=detect_leaks=1:log_path=$(abspath $(ASAN_REPORTS))/asan \
	    UBSAN_OPTIONS=print_stacktrace=1:log_path=$(abspath $(ASAN_REPORTS))/ubsan \
	    TEST_TIMES=$(ASAN_BUILD)/times.e2e T=$(call knob,T) \
	    sh tests/run_e2e.sh $(ASAN_PROG) $(BUILD)/tests program; rc=$$?; \
	    if [ -n "$$(ls $(ASAN_REPORTS))" ]; then \
	        echo "asan-e2e: sanitizer reports:"; cat $(ASAN_REPORTS)/*; exit 1; fi; exit $$rc

# make test builds everything its passes need at once, TEST_BUILD_JOBS
# compiles at a time (default: the cores), then runs the five passes side
# by side (each pass also runs its tests TEST_JOBS at a time), each pass's
# output printed whole as it ends, and every pass to its end (-k) even when
# one fails. Most e2e time is the program's own timed loops and waits, not
# CPU, so passes overlap well even on two cores.
ifeq ($(origin TEST_BUILD_JOBS),undefined)
TEST_BUILD_JOBS := $(shell nproc 2>/dev/null || echo 2)
endif
TEST_PASSES := unit-test e2e-test asan-test asan-e2e fuzz-test
test-build: all $(UNIT_BIN) $(TEST_SO) $(ASAN_BIN) $(ASAN_PROG) $(ASAN_PROGRAMS) fuzz-build
test:
	$(Q)$(MAKE) --no-print-directory -j$(call knob,TEST_BUILD_JOBS) test-build
	$(Q)$(MAKE) --no-print-directory -k -j$(words $(TEST_PASSES)) --output-sync=target $(TEST_PASSES)
.PHONY: test-build

# ------------------------------------------------------------- fuzzing
# libFuzzer targets (tests/fuzz/fuzz_NAME.c, seeds in tests/fuzz/corpus/NAME)
# for the readers of files a user hands us: the profile parser and the CSV
# reader, built with clang, ASan and UBSan. `make fuzz` runs each for
# FUZZ_SECONDS and prints its executions; `make test` runs each over its
# corpus and FUZZ_RUNS mutations (scripts/fuzz.sh). Where no clang links
# -fsanitize=fuzzer, both say so and skip.
FUZZ_SECONDS ?= 60
FUZZ_RUNS    ?= 10000
FUZZ_BUILD   := $(BUILD)/fuzz
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN     := $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_BUILD)/%)
# Only the core files the targets use (scripts/fuzz_members.sh names them,
# from the plain core library the parent make built first, for the
# sub-make that builds the targets), else all of them.
ifdef FUZZ_MEMBERS_MK
include $(FUZZ_MEMBERS_MK)
FUZZ_OBJ     := $(foreach n,$(FUZZ_MEMBERS),$(filter %/$(n).c,$(CORE_SRC)))
FUZZ_OBJ     := $(FUZZ_OBJ:%.c=$(FUZZ_BUILD)/obj/%.o)
else
FUZZ_OBJ     := $(CORE_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)
endif
# The first clang that links a fuzzer (evaluated only when fuzzing).
FUZZ_CC ?= $(shell for c in clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14; do     printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }\n' | \
    $$c -x c - -fsanitize=fuzzer -o /dev/null >/dev/null 2>&1 && { echo $$c; break; }; done)
FUZZ_CFLAGS := -std=c11 -g -O1 -Wall -Wextra -Werror -pthread -fno-omit-frame-pointer \
               -fsanitize=address,undefined -fno-sanitize-recover=all

$(FUZZ_BUILD)/obj/%.o: %.c $(BUILD)/config.mk
	@mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(INC_all) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/libaccubench.a: $(FUZZ_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_input.h $(FUZZ_BUILD)/libaccubench.a
	@$(if $(Q),echo "  FUZZ  $@")
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(INC_all) -Itests/fuzz $(FUZZ_CFLAGS) -fsanitize=fuzzer \
	    -o $@ $< $(FUZZ_BUILD)/libaccubench.a $(LDLIBS)

.PHONY: fuzz fuzz-test fuzz-build
$(FUZZ_BUILD)/members.mk: $(FUZZ_SRC) tests/fuzz/fuzz_input.h scripts/fuzz_members.sh $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(Q)sh scripts/fuzz_members.sh $(FUZZ_BUILD)/members $(CORE_LIB) \
	    "$(CC) $(CPPFLAGS) $(INC_all) -Itests/fuzz $(CFLAGS)" "$(LDLIBS)" $(FUZZ_SRC) >$@.tmp && \
	    mv $@.tmp $@
FUZZ_MAKE = $(MAKE) -s --no-print-directory FUZZ_MEMBERS_MK=$(FUZZ_BUILD)/members.mk $(FUZZ_BIN)
fuzz-build: $(CORE_LIB)
	$(Q)if [ -n "$(FUZZ_CC)" ]; then $(MAKE) -s --no-print-directory $(FUZZ_BUILD)/members.mk && \
	    $(FUZZ_MAKE); fi
fuzz fuzz-test: $(CORE_LIB)
	$(Q)if [ -z "$(FUZZ_CC)" ]; then \
	    echo "$@: skipped: no clang that links -fsanitize=fuzzer (install clang, or FUZZ_CC=...)"; \
	else $(MAKE) -s --no-print-directory $(FUZZ_BUILD)/members.mk && $(FUZZ_MAKE) && \
	    sh scripts/fuzz.sh $(FUZZ_BUILD) $(if $(filter fuzz,$@),seconds $(call knob,FUZZ_SECONDS),runs $(call knob,FUZZ_RUNS)) \
	        $(FUZZ_BIN); fi

# ------------------------------------------------ trace: CUPTI probe, nsys
# The CUPTI collector alone, linked where nvcc and CUPTI are; run by
# tests/e2e/e2e_cupti_absent.sh (it must fail cleanly where there is no GPU).
ifneq ($(and $(filter 1,$(HAVE_NVCC)),$(CUPTI_INC)),)
CUPTI_PROBE := $(BUILD)/tests/cupti_probe
$(CUPTI_PROBE): tests/trace/cupti_probe.c $(BUILD)/obj/kernels/cuda/cupti_collector.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(INC_all) -isystem $(CUDA_HOME)/include -isystem $(CUPTI_INC) $(CFLAGS) -o $@ $^ \
	    $(LDLIBS) $(CUDA_LIBDIRS) -lcupti
e2e-test: $(CUPTI_PROBE)
test-build: $(CUPTI_PROBE)
endif

# The cuBLAS loader alone, linked where nvcc is; run by
# tests/e2e/e2e_cublas_load.sh (no GPU needed: it asks for versions).
ifeq ($(HAVE_NVCC),1)
CUBLAS_PROBE := $(BUILD)/tests/cublas_load_probe
$(CUBLAS_PROBE): tests/kernels/cublas_load_probe.c $(BUILD)/obj/kernels/cuda/cublas_load.o
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) -Ikernels/cuda -isystem $(CUDA_HOME)/include $(CFLAGS) -o $@ $^ -ldl
e2e-test: $(CUBLAS_PROBE)
test-build: $(CUBLAS_PROBE)
endif

# The abc profile under Nsight Systems, collector off (nsys wants to be
# CUPTI's only subscriber); capture from the first cudaProfilerStart (the
# first timed pass) to the end. docs/nsight-systems.md says how to read it.
NSYS ?= nsys
nsys: $(BIN)
	$(Q)nsys=$(call knob,NSYS); if ! command -v "$$nsys" >/dev/null 2>&1; then \
	    echo "make nsys: $$nsys not found. Install Nsight Systems (the CUDA toolkit's"; \
	    echo "  nsight-systems package, or https://developer.nvidia.com/nsight-systems)"; \
	    echo "  and put nsys on PATH, or run: make nsys NSYS=/path/to/nsys"; exit 1; fi
	$(Q)mkdir -p results
	$(call knob,NSYS) profile -t cuda,nvtx,cublas --capture-range=cudaProfilerApi \
	    --capture-range-end=none --force-overwrite=true -o results/accubench-abc \
	    $(BIN) run --profile abc --backend cuda --no-cupti --trace-steps 0 --out results
	@echo "open results/accubench-abc.nsys-rep in Nsight Systems (docs/nsight-systems.md)"

# -------------------------------------------------------------- running
# The sweep, then its charts and report (scripts/bench.sh). Without PROFILE
# the profile is sized for what runs it: default where a GPU answers, cpu
# otherwise (it says which); bench-full runs the default anywhere.
bench: $(BIN)
	$(Q)sh scripts/bench.sh $(BIN) $(call knob,PROFILE) results

bench-full: $(BIN)
	$(Q)sh scripts/bench.sh $(BIN) default results

# Is this tree slower than revision BASE? Both built, the same profile
# (PROFILE, default abc) run RUNS times each in ABBA order, then compare
# over the runs (scripts/regress.sh). BASE_BIN=PROGRAM: against a program
# already built.
BASE ?=
BASE_BIN ?=
RUNS ?= 3
regress: $(BIN)
	$(Q)sh scripts/regress.sh $(BIN) $(call knob,BASE) $(call knob,RUNS) $(call knob,PROFILE) \
	    results/regress-$$(date +%Y%m%d-%H%M%S) $(call knob,BASE_BIN)

# Data parallel on the CPU backend: the ranks share the cores
# (scripts/bench_dp.sh).
DP_RANKS ?= 2
MPIRUN   ?= mpirun
# The profile and the device counts it runs at (a sharded one needs ranks:
# DP_DEVICES=2 for profiles/frontier-dp); none given: 1..DP_RANKS.
DP_PROFILE ?= dp
DP_DEVICES ?=
bench-dp: $(BIN)
	$(Q)sh scripts/bench_dp.sh $(BIN) results $(call knob,MPIRUN) $(call knob,DP_RANKS) \
	    $(call knob,DP_PROFILE) $(call knob,DP_DEVICES)

# README.md's table and chart, from a real run: the abc profile on the CPU
# backend (a minute or two on two cores), its console table into
# docs/img/abc-console.txt and its wall-clock chart into
# docs/img/abc-wallclock.png. The CSV and the other charts stay in
# $(BUILD)/readme. Paste the table into README.md when it changed.
README_RUN := $(BUILD)/readme
readme-figures: $(BIN)
	$(Q)rm -rf $(README_RUN) && mkdir -p $(README_RUN) docs/img
	$(Q)$(BIN) run --backend cpu --profile abc --csv $(README_RUN)/abc.csv \
	    >$(README_RUN)/console.txt
	$(Q)sed -n '/^model /,/^  ratio /p' $(README_RUN)/console.txt >docs/img/abc-console.txt
	$(Q)sh scripts/plots.sh $(README_RUN)/abc.csv $(README_RUN)/abc >/dev/null
	$(Q)cp $(README_RUN)/abc.wallclock.png docs/img/abc-wallclock.png
	@echo "docs/img/abc-console.txt and docs/img/abc-wallclock.png from $(README_RUN)/abc.csv"
.PHONY: readme-figures

# ------------------------------------------------- charts and reports
# CSV=FILE picks the run; without it, the newest results/*.csv with rows,
# its loss-curves file aside (scripts/pick_csv.sh; named).
# Charts (PNG + SVG) and the report land next to the CSV. CSV is a knob
# (above): its text is a name, never code.
plots: $(BIN)
	$(Q)sh scripts/plots.sh $(call knob,CSV)

report: $(BIN)
	$(Q)csv=$$(sh scripts/pick_csv.sh $(call knob,CSV)) && $(BIN) report "$$csv"

# report and compare on generated CSVs of 10^4, 10^5 and 10^6 rows (or
# SCALE_ROWS="N ..."): wall time and peak memory of each.
.PHONY: bench-report-scale
bench-report-scale: $(BIN)
	$(Q)$(call knob_words,SCALE_ROWS) sh scripts/bench_report_scale.sh $(BIN) "$$@"

# ------------------------------------------------- the PyTorch peer
# bench/peers/torch_accum.py beside accubench (scripts/peers.sh); without
# PyTorch it says how to install it and fails. peer-ratio: accubench CPU
# against each PyTorch mode on the A/B/C splits, interleaved, 3 repeats;
# then the GPT (profiles/gpt-cpu's shape, E = 16 at 16x1, 4x4 and 1x16)
# against the peer's nanoGPT-style eager step with fused AdamW.
# PEER_RATIO_ARGS goes to both (e.g. --torch-env OMP_WAIT_POLICY=PASSIVE).
PYTHON ?= python3
peers: $(BIN)
	$(Q)PYTHON=$(call knob,PYTHON) sh scripts/peers.sh $(BIN) results

# peers-ddp: data parallel, both sides on DP_RANKS ranks on the CPU
# (scripts/peers_ddp.sh): accubench in every sync mode, the peer's DDP with
# and without no_sync, into one CSV, then the report.
PEER_DDP_PROFILE ?= dp
peers-ddp: $(BIN)
	$(Q)PYTHON=$(call knob,PYTHON) MPIRUN=$(call knob,MPIRUN) sh scripts/peers_ddp.sh $(BIN) \
	    results $(call knob,PEER_DDP_PROFILE) $(call knob,DP_RANKS)

PEER_RATIO_GPT ?= gpt:d=128,layers=4,heads=4,seq=64,vocab=2048
PEER_RATIO_GPT_MODES ?= eager-fused
peer-ratio: $(BIN)
	$(Q)if ! $(call knob,PYTHON) -c "import torch" >/dev/null 2>&1; then \
	    echo "make peer-ratio: PyTorch is not installed: pip install torch"; exit 1; fi
	$(Q)$(call knob_words,PEER_RATIO_ARGS) \
	    $(call knob,PYTHON) bench/peers/peer_ratio.py --accubench $(BIN) "$$@"
	$(Q)$(call knob_words,PEER_RATIO_ARGS) \
	    $(call knob,PYTHON) bench/peers/peer_ratio.py --accubench $(BIN) \
	    --model $(call knob,PEER_RATIO_GPT) --effective 16 --micro 16,4,1 \
	    --mode $(call knob,PEER_RATIO_GPT_MODES) --out results/peer-ratio-gpt "$$@"

clean:
	rm -rf $(BUILD)

-include $(CORE_OBJ:.o=.d) $(CUDA_OBJ:.o=.d) $(ASAN_OBJ:.o=.d) $(BENCH_OBJ:.o=.d) \
         $(DP_OBJ:.o=.d) $(ASAN_BENCH_OBJ:.o=.d) $(FUZZ_OBJ:.o=.d) \
         $(UNIT_BIN:=.d) $(ASAN_BIN:=.d)

# Last, after every knob's default: unexport defines a variable not yet
# defined (empty), which a later ?= would then leave empty.
unexport $(KNOBS)
# make exports every variable given on its command line into each
# recipe's environment, expanding its text to do so: MODEL='$(shell ...)'
# would run wherever a recipe runs. Only the two the scripts read from the
# environment stay exported, both checked above.
unexport $(filter-out ACCUBENCH_NO_INSTALL CUDA_HOME,\
    $(foreach v,$(.VARIABLES),$(if $(filter command line,$(origin $(v))),$(v))))
