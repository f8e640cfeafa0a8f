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
#   make tsan-test  the unit tests under ThreadSanitizer (tsan-e2e: the e2e
#                   scripts that start the program); not part of make test
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
#
# The rules are in six fragments, each included once below, where its
# place in the order is what make's immediate assignments need:
#   mk/cuda.mk      the CUDA backend, the NCCL engine and the GPU check
#   mk/programs.mk  the small CPU programs (cpu-passes, gemm-bench, rule-check)
#   mk/tests.mk     the unit, e2e and sanitized tests, and the CUDA probes
#   mk/fuzz.mk      the libFuzzer targets
#   mk/tsan.mk      the ThreadSanitizer build and its two passes
#   mk/run.mk       the targets that run the program: sweeps, charts,
#                   reports, the peers, nsys
# This file keeps what they all share: the knobs and their checks, the
# flags and the rooms, the core library and the program.

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
         CHECK_ONLY CHECK_SKIP_BUILD CHECK_BUDGET_S CHECK_SANITIZER PASSES_ARGS \
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

# `make print-VAR` prints what make made of VAR (the CUDA paths of
# mk/cuda.mk, the flags): how the tests see the build's choices without a
# toolkit.
print-%:
	@echo '$($*)'

# Data parallel: the MPI engine (and MPI's start) where mpicc is, the NCCL
# engine where CUDA and NCCL are, MPI or not (one rank alone needs no
# launcher: kernels/nccl/nccl_solo_host.c; its world under mpirun needs
# MPI); only their own files see mpi.h and nccl.h, and only the program's
# files know whether they are in.
# The NCCL half is in mk/cuda.mk: it needs the CUDA backend's choice.
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

BIN := $(BUILD)/accubench

.PHONY: all clean
all: $(BIN)

$(BUILD)/obj/%.o: %.c $(BUILD)/config.mk
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC    $<")
	$(Q)$(CC) $(CPPFLAGS) $(ROOM_INC) $(CFLAGS) -c $< -o $@

# Each object sees its own room's include list (above); the same for the
# sanitizer builds.
ROOM_INC := $(INC_all)
$(foreach r,$(ROOMS),$(eval $(BUILD)/obj/harness/$(r)/%.o $(BUILD)/asan/obj/harness/$(r)/%.o \
    $(BUILD)/tsan/obj/harness/$(r)/%.o: ROOM_INC := $$(INC_$(r))))
CPU_OBJ_DIRS := $(BUILD)/obj/kernels/cpu $(BUILD)/asan/obj/kernels/cpu $(BUILD)/tsan/obj/kernels/cpu
$(CPU_OBJ_DIRS:=/%.o): ROOM_INC := $(INC_kernels) -Ikernels/cpu
# In the CPU kernels a * b + c is one fused multiply-add, as nvcc makes it
# on the GPU: -std=c11 turns contraction off, and the fused attention's
# products then ran a multiply and an add for each term.
$(CPU_OBJ_DIRS:=/%.o): CFLAGS += -ffp-contract=fast
# cpu_lanes.h passes 64-byte vectors by value between inline functions of
# one file: GCC's note that such an ABI changed in GCC 4.6 concerns calls
# across files built by two compilers, which never happen here.
$(CPU_OBJ_DIRS:=/%.o): CFLAGS += \
    $(shell $(CC) -Werror -Wno-psabi -E -x c /dev/null >/dev/null 2>&1 && echo -Wno-psabi)

# The CUDA backend, the NCCL engine and the GPU check: after the rooms
# (its objects' include lists) and before the program, whose link line
# and flags name what it chose.
include mk/cuda.mk

# The tree the program was built from: where it finds its profiles and
# scripts when it has been copied away from them (harness/util/repo_path.c).
# A folder whose name a C string cannot hold as written is not named.
ifeq ($(or $(findstring ',$(CURDIR)),$(findstring ",$(CURDIR)),$(findstring \,$(CURDIR)),$(word 2,$(CURDIR))),)
$(BUILD)/obj/harness/util/repo_path.o $(BUILD)/asan/obj/harness/util/repo_path.o \
    $(BUILD)/tsan/obj/harness/util/repo_path.o: CPPFLAGS += -DACCUBENCH_BUILD_ROOT='"$(CURDIR)"'
endif

# Only the program's own files know whether CUDA is built in, so the core
# library links alone into the unit tests.
$(BUILD)/obj/bench/%.o: CPPFLAGS += $(CUDA_DEFINE) $(DP_DEFINE) -DACCUBENCH_GIT_REV=\"$(GIT_REV)\"

$(CORE_LIB): $(CORE_OBJ)
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

# After the program, in the order these rules always had: the small
# programs add to all after the GPU check does, and mk/tests.mk names their
# sanitized builds (ASAN_PROGRAMS) in test-build's prerequisites, which
# make expands as it reads them.
include mk/programs.mk
include mk/tests.mk
include mk/fuzz.mk
include mk/tsan.mk
include mk/run.mk

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