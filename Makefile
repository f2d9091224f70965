# jheap: one non-recursive Makefile.
#   make                 build build/jheap
#   make demo            install missing packages, build, profile a bundled
#                        workload under Debian's libjemalloc and report on it
#   make check           install missing packages, build, run every test
#   make bench           jheap against jeprof and symbolizers: bench/RESULTS.md
#   make fuzz FUZZ_SECONDS=N  libFuzzer on the parsers
#   make install PREFIX=/usr/local
#   make DEVELOPER=1     warnings are errors
#   make check SANITIZE=address,undefined
CC      ?= cc
PREFIX  ?= /usr/local
BUILD   ?= build
SANITIZE ?=
DEVELOPER ?=

WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
CFLAGS  ?= -O2 -g
ALL_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) -D_GNU_SOURCE -I. -MMD -MP
ifneq ($(DEVELOPER),)
ALL_CFLAGS += -Werror
endif
ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SANITIZE)
# No test input needs 1 GiB in one block: a bigger request is a size read
# from damaged input and trusted, so it aborts the test rather than
# succeeding on an overcommitting machine and passing unseen.
ifneq ($(findstring address,$(SANITIZE)),)
export ASAN_OPTIONS := max_allocation_size_mb=1024:$(ASAN_OPTIONS)
endif
endif
# libcurl (URLs), libedit (the shell) and libdebuginfod are opened with
# dlopen when first needed (lib/dynlib.h), not linked: linked, they
# and the libraries they need were loaded by every run.
LIBS    := -ldw -lelf -lz -liberty -lpcre2-8 -lpthread -lm

SRCS      := $(sort $(wildcard lib/*.c analyzer/*.c symbolize/*.c output/*.c cli/*.c))
MAIN_SRC  := cli/main.c
LIB_SRCS  := $(filter-out $(MAIN_SRC),$(SRCS))
OBJS      := $(SRCS:%.c=$(BUILD)/%.o)
# The web UI's files (web/), built in as byte arrays (scripts/embed.sh).
WEB_FILES := $(sort $(wildcard web/*.html web/*.js web/*.css))
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/web/assets.o
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
TOOL_SRCS := $(sort $(wildcard tests/tools/*.c))
TOOL_BINS := $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tests/tools/%)

.PHONY: all clean deps demo check unit unit-run install bench fuzz
all: $(BUILD)/jheap $(BUILD)/libjheapctl.so

# demo, check and bench first install what is missing (scripts/deps.sh
# uses apt-get, through sudo when not root); a plain build does not.
ifneq ($(filter demo check bench,$(MAKECMDGOALS)),)
$(OBJS) $(PRELOAD_OBJS) $(UNIT_BINS) $(TOOL_BINS): | deps
endif
deps:
	@sh scripts/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/web/assets.c: $(WEB_FILES) scripts/embed.sh
	@mkdir -p $(dir $@)
	sh scripts/embed.sh $(WEB_FILES) > $@.tmp && mv $@.tmp $@

$(BUILD)/web/assets.o: $(BUILD)/web/assets.c cli/webassets.h
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/libjheap.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/jheap: $(BUILD)/cli/main.o $(BUILD)/libjheap.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# The control library that jheap record preloads into a program
# (preload/): never built with sanitizers, which would have to come first
# in every program it is loaded into; it exports no symbol.
PRELOAD_SRCS  := $(sort $(wildcard preload/*.c))
PRELOAD_OBJS  := $(PRELOAD_SRCS:%.c=$(BUILD)/%.pic.o)
PRELOAD_FLAGS := -std=gnu11 $(WARN) $(CFLAGS) -D_GNU_SOURCE -I. -MMD -MP -fPIC -fvisibility=hidden \
	$(if $(DEVELOPER),-Werror)

$(BUILD)/%.pic.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_FLAGS) -c -o $@ $<

$(BUILD)/libjheapctl.so: $(PRELOAD_OBJS)
	$(CC) -shared -Wl,-z,defs -Wl,-soname,libjheapctl.so -o $@ $^ -ldl -lpthread

# The same library with its test hooks (JHEAPCTL_TESTING: see
# preload/jheapctl.c), for the tests only; never installed.
TESTCTL_OBJS := $(PRELOAD_SRCS:%.c=$(BUILD)/tests/%.pic.o)
$(BUILD)/tests/%.pic.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_FLAGS) -DJHEAPCTL_TESTING -c -o $@ $<

$(BUILD)/tests/libjheapctl-test.so: $(TESTCTL_OBJS)
	$(CC) -shared -Wl,-z,defs -Wl,-soname,libjheapctl.so -o $@ $^ -ldl -lpthread

$(BUILD)/tests/%: tests/unit/%.c tests/unit/unit.h $(BUILD)/libjheap.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libjheap.a $(LIBS)

$(BUILD)/tests/tools/%: tests/tools/%.c $(BUILD)/libjheap.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libjheap.a $(LIBS)

unit: $(UNIT_BINS) $(TOOL_BINS) $(BUILD)/tests/libjheapctl-test.so

# Unit tests print "N passed, N failed"; the symbolizer's fixtures are
# compiled at test time into $(BUILD)/fixtures; test_parse_split also reads
# the workload dumps in $(BUILD)/profiles (or $$PROFILES) when they exist.
unit-run: unit
	@sh tests/unit/build-fixtures.sh $(BUILD)/fixtures
	@set -e; for t in $(UNIT_BINS); do \
		JHEAP_FIXTURES=$(abspath $(BUILD))/fixtures \
		PROFILES="$${PROFILES:-$(abspath $(BUILD))/profiles}" $$t; done

# One summary line at the end counts both kinds of test (tests/run.sh runs
# the unit tests first, once the workload dumps are made).
check: all unit
	@sh tests/unit/build-fixtures.sh $(BUILD)/fixtures
	@BUILD_DIR=$(abspath $(BUILD)) JHEAP=$(abspath $(BUILD))/jheap \
		PROFILES=$(abspath $(BUILD))/profiles JHEAP_FIXTURES=$(abspath $(BUILD))/fixtures \
		UNIT_TESTS="$(abspath $(UNIT_BINS))" bash tests/run.sh

demo: all
	@bash scripts/demo.sh $(BUILD)

# Speed against jeprof and the common symbolizers; writes bench/RESULTS.md.
# Never fails on a time.  Takes about 15 minutes on 2 cores (the generated
# program's build is cached in $(BUILD)/bench).
bench: all
	@bash bench/run.sh $(BUILD)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/jheap $(DESTDIR)$(PREFIX)/bin/jheap
	install -d $(DESTDIR)$(PREFIX)/lib/jheap
	install -m 644 $(BUILD)/libjheapctl.so $(DESTDIR)$(PREFIX)/lib/jheap/libjheapctl.so
	install -m 644 man/jheap.1 $(DESTDIR)$(PREFIX)/share/man/man1/jheap.1

# Fuzzing with clang's libFuzzer, ASan and UBSan: make fuzz FUZZ_SECONDS=N
# runs each target for N seconds on a corpus seeded from testdata/fuzz/seeds;
# crashes land in $(BUILD)/fuzz/crash-* (add them to testdata/fuzz/crashes/,
# which tests/t0600 replays through jheap).
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_FLAGS   := -std=gnu11 -g -O1 -D_GNU_SOURCE -I. -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_OBJS    := $(LIB_SRCS:%.c=$(BUILD)/fuzz/%.o) $(BUILD)/fuzz/web/assets.o
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/*.c))

$(BUILD)/fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -c -o $@ $<

$(BUILD)/fuzz/web/assets.o: $(BUILD)/web/assets.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -c -o $@ $<

$(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) $(LIBS)

fuzz: $(FUZZ_TARGETS)
	@for t in $(FUZZ_TARGETS); do \
		name=$$(basename $$t); corpus=$(BUILD)/fuzz/corpus-$$name; mkdir -p $$corpus; \
		echo "fuzzing $$name for $(FUZZ_SECONDS) s"; \
		(cd $(BUILD)/fuzz && ./$$name -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 \
			-print_final_stats=1 $(abspath $(BUILD))/fuzz/corpus-$$name $(abspath testdata/fuzz/seeds)) \
			2>&1 | tail -n 25 || exit 1; \
	done

clean:
	rm -rf $(BUILD)

-include $(OBJS:.o=.d) $(PRELOAD_OBJS:.o=.d) $(TESTCTL_OBJS:.o=.d) $(UNIT_BINS:=.d) $(TOOL_BINS:=.d)
