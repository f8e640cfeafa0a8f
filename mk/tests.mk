# mk/tests.mk: the tests: the unit tests plain and under ASan + UBSan, the
# e2e tests against the program plain and sanitized, make test's build and
# its five passes side by side, and the CUDA probes the e2e tests run.
# Included by the Makefile. Apart because none of it is part of the
# program: it only builds and runs what checks it.

.PHONY: test unit-test asan-test asan-e2e e2e-test

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

# ------------------------------------------------------------ CUDA probes
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
