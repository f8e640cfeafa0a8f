# mk/tsan.mk: the core, the programs and the unit tests under
# ThreadSanitizer: make tsan-test (the unit tests) and make tsan-e2e (the
# e2e scripts that start the program), T=PATTERN as for the others.
# Included by the Makefile. Apart because neither is a pass of make test:
# the threads are few (the pool of cpu_parallel.c, the status line's
# watcher of progress.c), and a clean TSan run says nothing new until
# they change, while a script runs several times longer under it
# (e2e_gpt 22 s against 8).
#
# Everything is instrumented, the CPU kernels too: they are what the
# pool's threads run, and a race is only seen where both of its sides are.
# OpenBLAS, oneDNN and Open MPI are prebuilt and not: OpenBLAS is held to
# one thread (its threads' handshakes are invisible to TSan; the backend's
# calls are single-threaded anyway), and Open MPI's own reports are
# suppressed (tests/tsan.supp). Any other report fails the test (TSan's
# exit status 66; the e2e pass reads its log files, as asan-e2e does).

.PHONY: tsan-build tsan-test tsan-e2e

TSAN_BUILD  := $(BUILD)/tsan
TSAN_FLAGS  := -fsanitize=thread -fno-omit-frame-pointer
# -O1 as for ASan: the reports need frames, the runs are tiny.
TSAN_CFLAGS = $(filter-out -O%,$(CFLAGS)) $(if $(filter 1,$(DEBUG)),-O0,-O1) $(TSAN_FLAGS)
TSAN_OBJ    := $(CORE_SRC:%.c=$(TSAN_BUILD)/obj/%.o)
TSAN_LIB    := $(TSAN_BUILD)/libaccubench.a
TSAN_BIN    := $(addprefix $(TSAN_BUILD)/tests/,$(notdir $(UNIT_SRC:.c=)))
TSAN_PROG   := $(TSAN_BUILD)/accubench
TSAN_BENCH_OBJ := $(BENCH_OBJ:$(BUILD)/obj/%=$(TSAN_BUILD)/obj/%)

# The rooms' include lists and the CPU kernels' flags are the Makefile's
# (it names $(BUILD)/tsan beside the other builds).
$(TSAN_BENCH_OBJ): CPPFLAGS += -DACCUBENCH_GIT_REV=\"$(GIT_REV)\"
$(TSAN_BENCH_OBJ): $(BUILD)/bench-flags

$(TSAN_BUILD)/obj/%.o: %.c $(BUILD)/config.mk
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TSAN  $<")
	$(Q)$(CC) $(CPPFLAGS) $(ROOM_INC) $(TSAN_CFLAGS) -c $< -o $@

$(TSAN_LIB): $(TSAN_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

define tsan_test_rule
$(TSAN_BUILD)/tests/$(notdir $(1:.c=)): $(1) $$(TSAN_LIB)
	@mkdir -p $$(dir $$@)
	$$(Q)$$(CC) $$(CPPFLAGS) $$(INC_all) -Itests -I$(dir $(1)) $$(TSAN_CFLAGS) -o $$@ $$< $$(TSAN_LIB) $$(LDLIBS)
endef
$(foreach s,$(UNIT_SRC),$(eval $(call tsan_test_rule,$(s))))

# With the MPI engine where MPI is, as the ASan program: the data-parallel
# e2e tests start it under mpirun.
TSAN_DP_OBJ    :=
TSAN_DP_LDLIBS :=
ifeq ($(HAVE_MPI),1)
TSAN_DP_OBJ    := $(patsubst %.c,$(TSAN_BUILD)/obj/%.o,$(wildcard kernels/mpi/*.c))
TSAN_DP_LDLIBS := $(MPI_LIBS)
$(TSAN_DP_OBJ): ROOM_INC := $(INC_kernels) -Ikernels/mpi
$(TSAN_DP_OBJ): CPPFLAGS += $(MPI_CFLAGS)
$(TSAN_BENCH_OBJ): CPPFLAGS += -DACCUBENCH_HAVE_MPI=1
endif
$(TSAN_PROG): $(TSAN_BENCH_OBJ) $(TSAN_DP_OBJ) $(TSAN_LIB)
	@$(if $(Q),echo "  LD    $@")
	$(Q)$(CC) $(TSAN_CFLAGS) -o $@ $^ $(LDLIBS) $(TSAN_DP_LDLIBS)

# The small programs the e2e scripts run beside it (mk/programs.mk).
TSAN_PROGRAMS := $(TSAN_BUILD)/cpu-passes $(TSAN_BUILD)/gemm-bench $(TSAN_BUILD)/rule-check
$(TSAN_BUILD)/cpu-passes: $(TSAN_BUILD)/obj/bench/cpu_passes/main.o $(TSAN_LIB)
$(TSAN_BUILD)/gemm-bench: $(TSAN_BUILD)/obj/bench/gemm_bench/main.o $(TSAN_LIB)
$(TSAN_BUILD)/rule-check: $(TSAN_BUILD)/obj/bench/rule_check/main.o $(TSAN_LIB)
$(TSAN_PROGRAMS):
	@$(if $(Q),echo "  LD    $@")
	$(Q)$(CC) $(TSAN_CFLAGS) -o $@ $^ $(LDLIBS)

tsan-build: $(TSAN_PROG) $(TSAN_PROGRAMS) $(TSAN_BIN)

# Three pool threads unless ACCUBENCH_CPU_THREADS says otherwise: more
# than a 2-core VM's cores, so that a worker is preempted mid-loop, and
# still some on a machine of one core (where the default would be none).
TSAN_ENV = OPENBLAS_NUM_THREADS=1 ACCUBENCH_CPU_THREADS=$${ACCUBENCH_CPU_THREADS:-3}
TSAN_SUPP := $(abspath tests/tsan.supp)
TSAN_REPORTS := $(TSAN_BUILD)/reports

tsan-test: $(TSAN_BIN) $(TEST_SO)
	$(Q)$(TSAN_ENV) TSAN_OPTIONS=suppressions=$(TSAN_SUPP) T=$(call knob,T) \
	    TEST_TIMES=$(TSAN_BUILD)/times.unit sh tests/run_unit.sh $(BUILD)/tests $(TSAN_BIN)

tsan-e2e: $(TSAN_PROG) $(TSAN_PROGRAMS) $(TEST_SO)
	$(Q)rm -rf $(TSAN_REPORTS) && mkdir -p $(TSAN_REPORTS)
	$(Q)$(TSAN_ENV) TSAN_OPTIONS=suppressions=$(TSAN_SUPP):log_path=$(abspath $(TSAN_REPORTS))/tsan \
	    TEST_TIMES=$(TSAN_BUILD)/times.e2e T=$(call knob,T) \
	    sh tests/run_e2e.sh $(TSAN_PROG) $(BUILD)/tests program; rc=$$?; \
	    if [ -n "$$(ls $(TSAN_REPORTS))" ]; then \
	        echo "tsan-e2e: sanitizer reports:"; cat $(TSAN_REPORTS)/*; exit 1; fi; exit $$rc

-include $(TSAN_OBJ:.o=.d) $(TSAN_BENCH_OBJ:.o=.d) $(TSAN_DP_OBJ:.o=.d) $(TSAN_BIN:=.d) \
         $(foreach d,cpu_passes gemm_bench rule_check,$(TSAN_BUILD)/obj/bench/$(d)/main.d)
