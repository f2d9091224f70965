# jheap: one non-recursive Makefile.  See README.md for the targets.
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
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SANITIZE)
endif
LIBS    := -ldw -lelf -lz -liberty -lpthread -lm

SRCS     := $(sort $(wildcard analyzer/*.c symbolize/*.c output/*.c))
MAIN_SRC := analyzer/main.c
LIB_SRCS := $(filter-out $(MAIN_SRC),$(SRCS))
OBJS     := $(SRCS:%.c=$(BUILD)/%.o)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all clean
all: $(BUILD)/jheap

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/libjheap.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/jheap: $(BUILD)/analyzer/main.o $(BUILD)/libjheap.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c tests/unit/unit.h $(BUILD)/libjheap.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libjheap.a $(LIBS)

TOOL_SRCS := $(sort $(wildcard tests/tools/*.c))
TOOL_BINS := $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tests/tools/%)

$(BUILD)/tests/tools/%: tests/tools/%.c $(BUILD)/libjheap.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libjheap.a $(LIBS)

unit: $(UNIT_BINS) $(TOOL_BINS)

clean:
	rm -rf $(BUILD)

-include $(OBJS:.o=.d)
