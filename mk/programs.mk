# mk/programs.mk: the small CPU programs beside the benchmark (cpu-passes,
# gemm-bench, rule-check), each built plain for `make` and sanitized for
# the e2e pass, and the targets that run them. Included by the Makefile.
# Apart because each is a tool of its own, one main.c against the core
# library built by one macro: neither the benchmark nor a test.

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
# RULE_RUNS is a knob: whether it is given is asked of its text
# ($(value)), since $(if $(RULE_RUNS)) would expand it as make code
# (RULE_RUNS='$(shell ...)' ran, even under make -n).
RULE_CHECK := $(BUILD)/rule-check
$(eval $(call small_program,rule_check,rule-check))
rule-check: $(RULE_CHECK)
	$(Q)$(RULE_CHECK) --check $(if $(value RULE_RUNS),--runs $(call knob,RULE_RUNS))
.PHONY: rule-check
ASAN_PROGRAMS := $(BUILD)/asan/cpu-passes $(BUILD)/asan/gemm-bench $(BUILD)/asan/rule-check
