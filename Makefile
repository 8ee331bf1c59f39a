# anelint build. `make` builds build/anelint; `make check` builds and runs every test;
# `make asan` runs the suite under AddressSanitizer + UndefinedBehaviorSanitizer.
# `make fuzz` / `make fuzz-long` build the libFuzzer harnesses (clang) and run them (fuzz/README.md).
# Dependencies (Debian): libjson-c-dev (Manifest.json, JSON reports), libcmocka-dev (tests),
# libopenblas-dev (optional: fast matmul/conv for `anelint run`; BLAS=0 to build without).

CC      ?= cc
BUILD   ?= build
WERROR  ?= -Werror
OPT     ?= -O2
SAN     ?=
# The library's stages, lowest first: a file may include headers of its own
# stage and of those below it (tests/architecture.sh checks this and that no
# two library objects use each other's symbols in a circle).
STAGES  = base format analysis interp rewrite report cli
CFLAGS_BASE = -std=c11 -D_GNU_SOURCE -g $(OPT) -Wall -Wextra $(WERROR) -Wshadow -Wstrict-prototypes \
              -Wno-unused-parameter -Iinclude $(STAGES:%=-Isrc/%) $(SAN)
JSON_CFLAGS := $(shell pkg-config --cflags json-c 2>/dev/null)
JSON_LIBS   := $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)
# BLAS (ali_gemm -> cblas_sgemm): on by default when OpenBLAS is installed
# (libopenblas-dev); `make BLAS=0` builds the portable loops instead. After
# switching, `make clean` (objects do not track the flag).
BLAS ?= $(shell if pkg-config --exists openblas 2>/dev/null || [ -f /usr/include/cblas.h ] || \
		[ -f /usr/include/x86_64-linux-gnu/cblas.h ]; then echo 1; else echo 0; fi)
ifeq ($(BLAS),1)
BLAS_CFLAGS := -DANELINT_BLAS=1 $(shell pkg-config --cflags openblas 2>/dev/null)
BLAS_LIBS   := $(shell pkg-config --libs openblas 2>/dev/null || pkg-config --libs blas 2>/dev/null || \
		echo -lopenblas)
endif
override CFLAGS := $(CFLAGS_BASE) $(JSON_CFLAGS) $(BLAS_CFLAGS) $(CFLAGS)
LDLIBS  = $(JSON_LIBS) $(BLAS_LIBS) -lm

LIB_SRC := $(foreach s,$(filter-out cli,$(STAGES)),$(wildcard src/$(s)/*.c))
CLI_SRC := $(wildcard src/cli/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/unit/test_*.c)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)

all: $(BUILD)/anelint

$(BUILD)/%.o: %.c $(wildcard include/*.h src/*/*.h src/*/*.def)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# The interpreter's kernels at -O3 when the build is -O2: GCC 12's -O2 only
# vectorises loops of known trip count; -O3 makes the portable gemm loop 4x
# faster (1000^3: 510 -> 120 ms) and vectorises the conv, pool and fp16 loops.
KERNEL_OPT := $(if $(filter -O2,$(OPT)),-O3)
$(BUILD)/src/interp/kernels.o: override CFLAGS += $(KERNEL_OPT)
$(BUILD)/src/interp/kernels_%.o: override CFLAGS += $(KERNEL_OPT)

$(BUILD)/libanelint.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/anelint: $(CLI_OBJ) $(BUILD)/libanelint.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libanelint.a tests/unit/testutil.h tests/unit/pbwrite.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libanelint.a $(LDLIBS) $(CMOCKA_LIBS)

# test_base again with the copy fallback the build flag forces: src/base/atomic.c
# built with -DAL_NO_SEEK_HOLE, linked before the library so its copy is the one used.
$(BUILD)/tests/test_base_noseek: tests/unit/test_base.c src/base/atomic.c $(BUILD)/libanelint.a tests/unit/testutil.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DAL_NO_SEEK_HOLE -o $@ tests/unit/test_base.c src/base/atomic.c $(BUILD)/libanelint.a \
		$(LDLIBS) $(CMOCKA_LIBS)

# Unit tests (cmocka) then the CLI tests (golden outputs, rules, bad input, corpus).
check: $(BUILD)/anelint $(TEST_BIN) $(BUILD)/tests/test_base_noseek
	ANELINT=$(BUILD)/anelint BUILD=$(BUILD) sh tests/run.sh $(TEST_BIN) $(BUILD)/tests/test_base_noseek

asan:
	$(MAKE) BUILD=build-asan OPT=-O1 SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" check

bench: $(BUILD)/anelint
	sh bench/run.sh $(BUILD)/anelint

# The interpreter against PyTorch (Debian python3-torch): bench/interp.py, bench/README.md.
$(BUILD)/bench/interp_bench: bench/interp_bench.c $(BUILD)/libanelint.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libanelint.a $(LDLIBS)

bench-interp: $(BUILD)/bench/interp_bench
	/usr/bin/python3 bench/interp.py $(BUILD)/bench/interp_bench

# libFuzzer harnesses (fuzz/*.c) over the library built with clang into build-fuzz/;
# each runs FUZZ_SECONDS (fuzz-long: FUZZ_LONG_SECONDS, or until FUZZ_RUNS executions)
# from the seeds of fuzz/seed.sh plus tests/regress/<harness>/. Fails on any crash,
# leak, timeout or OOM; reproducers go to build-fuzz/artifacts/. See fuzz/README.md.
FUZZ_CC           ?= clang
# CI's budget is one total, split evenly between the harnesses: adding a harness
# shortens each run instead of growing CI (300 s, what 5 x 60 s cost when it began).
FUZZ_BUDGET       ?= 300
FUZZ_LONG_SECONDS ?= 1800
FUZZ_RUNS         ?=
FUZZ_HARNESSES    ?= mlmodel mil mlpackage fix rules split pkgwrite miltext espresso evidence
FUZZ_SECONDS      ?= $(shell echo $$(( $(FUZZ_BUDGET) / $(words $(FUZZ_HARNESSES)) )))
FUZZ_SAN = -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

fuzz-build:
	$(MAKE) BUILD=build-fuzz CC=$(FUZZ_CC) OPT=-O1 SAN="$(FUZZ_SAN)" \
		$(FUZZ_HARNESSES:%=build-fuzz/fuzz_%)

$(BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_common.h $(BUILD)/libanelint.a
	$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $< $(BUILD)/libanelint.a $(LDLIBS)

fuzz-seeds:
	sh fuzz/seed.sh build/fuzz

fuzz: fuzz-build fuzz-seeds
	@fail=0; for h in $(FUZZ_HARNESSES); do \
		FUZZ_RUNS=$(FUZZ_RUNS) sh fuzz/run.sh $$h $(FUZZ_SECONDS) || fail=1; done; exit $$fail

fuzz-long:
	$(MAKE) fuzz FUZZ_SECONDS=$(FUZZ_LONG_SECONDS)

# Agreement of the predictions with placement observed on real devices (tests/observed/,
# docs/fidelity.md): fails below FIDELITY_MIN percent; also checks that the committed
# fidelity models are what tools/mkobserved.py generates.
FIDELITY_MIN ?= 95
fidelity: $(BUILD)/anelint observed-models
	python3 tools/mkobserved.py --check
	python3 tests/fidelity.py --anelint $(BUILD)/anelint --models $(BUILD)/observed/models \
		--min $(FIDELITY_MIN)

# The fidelity models (78 MB, mostly zero weights) are generated, never committed: 3 s.
observed-models:
	python3 tools/mkobserved.py --out $(BUILD)/observed >/dev/null

clean:
	rm -rf build build-asan build-fuzz

.PHONY: all check asan bench bench-interp clean fidelity observed-models fuzz fuzz-build fuzz-seeds fuzz-long
