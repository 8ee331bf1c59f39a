# anelint build. `make` builds build/anelint; `make check` builds and runs every test;
# `make asan` runs the suite under AddressSanitizer + UndefinedBehaviorSanitizer.
# Dependencies (Debian): libjson-c-dev (Manifest.json, JSON reports), libcmocka-dev (tests).

CC      ?= cc
BUILD   ?= build
WERROR  ?= -Werror
OPT     ?= -O2
SAN     ?=
CFLAGS_BASE = -std=c11 -D_GNU_SOURCE -g $(OPT) -Wall -Wextra $(WERROR) -Wshadow -Wstrict-prototypes \
              -Wno-unused-parameter -Iinclude -Isrc $(SAN)
JSON_CFLAGS := $(shell pkg-config --cflags json-c 2>/dev/null)
JSON_LIBS   := $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)
override CFLAGS := $(CFLAGS_BASE) $(JSON_CFLAGS) $(CFLAGS)
LDLIBS  = $(JSON_LIBS) -lm

LIB_SRC := $(wildcard src/*.c)
CLI_SRC := $(wildcard src/cli/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/unit/test_*.c)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)

all: $(BUILD)/anelint

$(BUILD)/%.o: %.c $(wildcard include/*.h src/*.h src/*.def src/cli/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libanelint.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/anelint: $(CLI_OBJ) $(BUILD)/libanelint.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libanelint.a tests/unit/testutil.h tests/unit/pbwrite.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libanelint.a $(LDLIBS) $(CMOCKA_LIBS)

# Unit tests (cmocka) then the CLI tests (golden outputs, rules, bad input, corpus).
check: $(BUILD)/anelint $(TEST_BIN)
	ANELINT=$(BUILD)/anelint BUILD=$(BUILD) sh tests/run.sh $(TEST_BIN)

asan:
	$(MAKE) BUILD=build-asan OPT=-O1 SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" check

bench: $(BUILD)/anelint
	sh bench/run.sh $(BUILD)/anelint

clean:
	rm -rf build build-asan

.PHONY: all check asan bench clean
