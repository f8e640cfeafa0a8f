# mk/fuzz.mk: the libFuzzer targets (make fuzz, and the fuzz-test pass of
# make test). Included by the Makefile. Apart because fuzzing builds the
# core a third way, with its own compiler (clang) and a sub-make of its
# own (FUZZ_MEMBERS_MK), and is skipped where no clang links a fuzzer.

# ------------------------------------------------------------- fuzzing
# libFuzzer targets (tests/fuzz/fuzz_NAME.c, seeds in tests/fuzz/corpus/NAME)
# for the readers of files and text a user hands us: the profile parser,
# the CSV and curves readers, the --model list, run's command line and the
# number, size and list parsers, built with clang, ASan and UBSan. `make fuzz` runs each for
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
