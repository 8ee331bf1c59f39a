# SPDX-License-Identifier: MIT
# anelint build. `make` builds build/anelint and the shared library; `make check` builds and
# runs every test; `make check-platforms` the portable, musl, install and Python checks;
# `make asan` runs the suite under AddressSanitizer + UndefinedBehaviorSanitizer.
# `make fuzz` / `make fuzz-long` build the libFuzzer harnesses (clang) and run them (fuzz/README.md).
# `make install` (PREFIX, DESTDIR) installs the CLI, the static and shared library, the
# header, anelint.pc, the man page and shell completions; `make uninstall` removes them.
# Dependencies (Debian): libjson-c-dev (Manifest.json, JSON reports), libcmocka-dev (tests),
# OpenBLAS at run time (optional: libopenblas0, fast matmul/conv for `anelint run`, loaded
# only by it; BLAS=none to build without).
# macOS: Homebrew json-c and pkg-config; BLAS=accelerate is the default there (README).
# PORTABLE=1 builds the portable fallbacks of the Linux-only calls (src/base/platform.c).
# `make wasm` builds the page (build-wasm/web/, emscripten), `make check-web` tests it (docs/web.md).

CC      ?= cc
BUILD   ?= build
WERROR  ?= -Werror
OPT     ?= -O2
SAN     ?=
UNAME_S ?= $(shell uname -s)
VERSION := $(shell sed -n 's/^\#define ANELINT_VERSION "\(.*\)"/\1/p' include/anelint.h)
SOVERSION := $(firstword $(subst ., ,$(VERSION)))
PREFIX  ?= /usr/local
DESTDIR ?=
PORTABLE ?= 0
# The library's stages, lowest first: a file may include headers of its own
# stage and of those below it (tests/architecture.sh checks this and that no
# two library objects use each other's symbols in a circle).
STAGES  = base format analysis interp rewrite report command cli
# -fPIC and hidden visibility: the same objects make the static and the shared
# library, which exports only the AL_API declarations of include/anelint.h.
CFLAGS_BASE = -std=c11 -D_GNU_SOURCE -g $(OPT) -Wall -Wextra $(WERROR) -Wshadow -Wstrict-prototypes \
              -Wno-unused-parameter -fPIC -fvisibility=hidden -Iinclude $(STAGES:%=-Isrc/%) $(patsubst %/,-I%,$(wildcard src/*/*/)) $(SAN) \
              $(if $(filter 1,$(PORTABLE)),-DAL_PORTABLE) \
              $(if $(INFORMATION_URI),-DAL_INFORMATION_URI='"$(INFORMATION_URI)"')
# SARIF tool.driver.informationUri: anelint has no public home page, so none by
# default; a packager that has one builds with INFORMATION_URI=https://... (then
# `make clean`: objects do not track it); a project's anelint.toml information_uri
# wins over both (docs/reports.md).
INFORMATION_URI ?=
JSON_CFLAGS := $(shell pkg-config --cflags json-c 2>/dev/null)
JSON_LIBS   := $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)
# BLAS (ali_gemm -> cblas_sgemm): BLAS=openblas (the default on Linux; also 1):
# nothing is linked, the interpreter loads OpenBLAS (libopenblas.so.0) at its
# first matrix product through dlopen, so check, plan and report neither map it
# nor start its threads, and without the library (or with ANELINT_BLAS=none in
# the environment) it runs its own loops: no header or library is needed to
# build (src/interp/kernels.c). BLAS=accelerate (the default on macOS): Apple's
# Accelerate, linked. BLAS=none (also 0): the loops only, no dlopen. After
# switching, `make clean` (objects do not track the flag).
# libopenblas.so.0 is whichever variant Debian's alternatives select: keep the
# pthread one (libopenblas0-pthread), not libopenblas0-serial, though the pthread
# variant starts workers as it loads (kernels.c stops them): the serial build is
# not safe to call from several threads at once, and ali_gemm splits a product
# over the interpreter's pool (tried: ResNet-18 gave wrong results in 2 of 30 runs
# at 2 threads).
ifeq ($(origin BLAS),undefined)
BLAS := $(if $(filter Darwin,$(UNAME_S)),accelerate,openblas)
endif
ifneq ($(filter 1 openblas,$(BLAS)),)
BLAS_CFLAGS := -DANELINT_BLAS=2
else ifeq ($(BLAS),accelerate)
# tools/accelerate/cblas.h includes Accelerate's own cblas.h under the usual name.
BLAS_CFLAGS := -DANELINT_BLAS=1 -Itools/accelerate
BLAS_LIBS   := -framework Accelerate
else ifeq ($(filter 0 none,$(BLAS)),)
$(error BLAS=$(BLAS): use accelerate, openblas or none)
endif
# dlopen (src/base/platform.c) is in the C library of glibc >= 2.34, musl and
# macOS; an older glibc needs -ldl.
DL_LIBS := $(shell printf '\043include <dlfcn.h>\nint main(void) { return dlopen("x", RTLD_NOW) != 0; }\n' | \
	$(CC) -x c -o /dev/null - >/dev/null 2>&1 || echo -ldl)
override CFLAGS := $(CFLAGS_BASE) $(JSON_CFLAGS) $(BLAS_CFLAGS) $(CFLAGS)
LDLIBS  = $(JSON_LIBS) $(BLAS_LIBS) $(DL_LIBS) -lm -pthread

# A stage may keep one level of subfolders (src/rewrite/passes/: one pass per file).
LIB_SRC := $(foreach s,$(filter-out cli,$(STAGES)),$(wildcard src/$(s)/*.c src/$(s)/*/*.c))
CLI_SRC := $(wildcard src/cli/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/unit/test_*.c)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)

all: $(BUILD)/anelint shared

$(BUILD)/%.o: %.c $(wildcard include/*.h src/*/*.h src/*/*.def src/*/*/*.h)
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
	$(AR) rcs $@ $^

$(BUILD)/anelint: $(CLI_OBJ) $(BUILD)/libanelint.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# The shared library: the same objects, exporting only AL_API (hidden visibility).
# Linux: libanelint.so.VERSION, soname libanelint.so.MAJOR; macOS: libanelint.MAJOR.dylib.
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
MANDIR  ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share
ifeq ($(UNAME_S),Darwin)
SHLIB_REAL   := libanelint.$(SOVERSION).dylib
SHLIB_SONAME := $(SHLIB_REAL)
SHLIB_DEV    := libanelint.dylib
SHLIB_FLAGS   = -dynamiclib -install_name $(LIBDIR)/$(SHLIB_SONAME) \
		-compatibility_version $(SOVERSION) -current_version $(VERSION)
else
SHLIB_REAL   := libanelint.so.$(VERSION)
SHLIB_SONAME := libanelint.so.$(SOVERSION)
SHLIB_DEV    := libanelint.so
SHLIB_FLAGS   = -shared -Wl,-soname,$(SHLIB_SONAME)
endif

$(BUILD)/$(SHLIB_REAL): $(LIB_OBJ)
	$(CC) $(CFLAGS) $(SHLIB_FLAGS) -o $@ $^ $(LDLIBS)
	ln -sf $(SHLIB_REAL) $(BUILD)/$(SHLIB_DEV)
	$(if $(filter-out $(SHLIB_REAL),$(SHLIB_SONAME)),ln -sf $(SHLIB_REAL) $(BUILD)/$(SHLIB_SONAME))

shared: $(BUILD)/$(SHLIB_REAL)

# Generated from the CLI's own tables (anelint --help-man, --completion SHELL).
$(BUILD)/share/anelint.1: $(BUILD)/anelint
	@mkdir -p $(dir $@)
	$(BUILD)/anelint --help-man >$@
$(BUILD)/share/anelint.bash: $(BUILD)/anelint
	@mkdir -p $(dir $@)
	$(BUILD)/anelint --completion bash >$@
$(BUILD)/share/_anelint: $(BUILD)/anelint
	@mkdir -p $(dir $@)
	$(BUILD)/anelint --completion zsh >$@
$(BUILD)/share/anelint.fish: $(BUILD)/anelint
	@mkdir -p $(dir $@)
	$(BUILD)/anelint --completion fish >$@

# rewritten every time: it holds PREFIX, which each make install may change
$(BUILD)/anelint.pc: FORCE
	@mkdir -p $(dir $@)
	printf '%s\n' 'prefix=$(PREFIX)' 'exec_prefix=$${prefix}' 'libdir=$(LIBDIR)' 'includedir=$(INCDIR)' '' \
		'Name: anelint' 'Description: predicts where Core ML runs each layer (Apple Neural Engine, GPU, CPU)' \
		'Version: $(VERSION)' 'Requires.private: json-c' 'Libs: -L$${libdir} -lanelint' \
		'Libs.private: $(BLAS_LIBS) $(DL_LIBS) -lm' 'Cflags: -I$${includedir}' >$@

INSTALL_DOCS = $(BUILD)/share/anelint.1 $(BUILD)/share/anelint.bash $(BUILD)/share/_anelint $(BUILD)/share/anelint.fish
install: $(BUILD)/anelint $(BUILD)/libanelint.a $(BUILD)/$(SHLIB_REAL) $(BUILD)/anelint.pc $(INSTALL_DOCS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(DATADIR)/bash-completion/completions $(DESTDIR)$(DATADIR)/zsh/site-functions \
		$(DESTDIR)$(DATADIR)/fish/vendor_completions.d
	install -m 755 $(BUILD)/anelint $(DESTDIR)$(BINDIR)/anelint
	install -m 644 $(BUILD)/libanelint.a $(DESTDIR)$(LIBDIR)/libanelint.a
	install -m 755 $(BUILD)/$(SHLIB_REAL) $(DESTDIR)$(LIBDIR)/$(SHLIB_REAL)
	$(if $(filter-out $(SHLIB_REAL),$(SHLIB_SONAME)),ln -sf $(SHLIB_REAL) $(DESTDIR)$(LIBDIR)/$(SHLIB_SONAME))
	ln -sf $(SHLIB_SONAME) $(DESTDIR)$(LIBDIR)/$(SHLIB_DEV)
	install -m 644 include/anelint.h $(DESTDIR)$(INCDIR)/anelint.h
	install -m 644 $(BUILD)/anelint.pc $(DESTDIR)$(LIBDIR)/pkgconfig/anelint.pc
	install -m 644 $(BUILD)/share/anelint.1 $(DESTDIR)$(MANDIR)/man1/anelint.1
	install -m 644 $(BUILD)/share/anelint.bash $(DESTDIR)$(DATADIR)/bash-completion/completions/anelint
	install -m 644 $(BUILD)/share/_anelint $(DESTDIR)$(DATADIR)/zsh/site-functions/_anelint
	install -m 644 $(BUILD)/share/anelint.fish $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/anelint.fish
	install -d $(DESTDIR)$(DATADIR)/doc/anelint
	install -m 644 LICENSE CHANGELOG.md README.md $(DESTDIR)$(DATADIR)/doc/anelint/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/anelint $(DESTDIR)$(LIBDIR)/libanelint.a $(DESTDIR)$(LIBDIR)/$(SHLIB_REAL) \
		$(DESTDIR)$(LIBDIR)/$(SHLIB_SONAME) $(DESTDIR)$(LIBDIR)/$(SHLIB_DEV) $(DESTDIR)$(INCDIR)/anelint.h \
		$(DESTDIR)$(LIBDIR)/pkgconfig/anelint.pc $(DESTDIR)$(MANDIR)/man1/anelint.1 \
		$(DESTDIR)$(DATADIR)/bash-completion/completions/anelint $(DESTDIR)$(DATADIR)/zsh/site-functions/_anelint \
		$(DESTDIR)$(DATADIR)/fish/vendor_completions.d/anelint.fish $(DESTDIR)$(DATADIR)/doc/anelint/LICENSE \
		$(DESTDIR)$(DATADIR)/doc/anelint/CHANGELOG.md $(DESTDIR)$(DATADIR)/doc/anelint/README.md
	-rmdir $(DESTDIR)$(DATADIR)/doc/anelint 2>/dev/null

# make install into a scratch DESTDIR, then tests/install/run.sh: a C program built
# through pkg-config against the installed shared library checks a bundled model;
# only al_ symbols are exported; the man page and completions cover every option;
# make uninstall leaves nothing behind.
install-check: $(BUILD)/anelint
	rm -rf $(BUILD)/destdir
	$(MAKE) install DESTDIR=$(abspath $(BUILD))/destdir PREFIX=/opt/anelint
	ANELINT=$(BUILD)/anelint DESTDIR=$(abspath $(BUILD))/destdir PREFIX=/opt/anelint CC="$(CC)" sh tests/install/run.sh
	$(MAKE) uninstall DESTDIR=$(abspath $(BUILD))/destdir PREFIX=/opt/anelint
	@left=$$(find $(BUILD)/destdir -type f -o -type l); [ -z "$$left" ] || { echo "uninstall left: $$left"; exit 1; }
	@echo "install-check: make uninstall removed every file"

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
check: $(BUILD)/anelint shared $(TEST_BIN) $(BUILD)/tests/test_base_noseek
	ANELINT=$(BUILD)/anelint BUILD=$(BUILD) sh tests/run.sh $(TEST_BIN) $(BUILD)/tests/test_base_noseek

# What the README's test command adds to make check: the portable fallbacks, musl,
# BLAS=accelerate's include chain, make install with the pkg-config link test, and the
# Python package (6 min on two busy cores, most of it check-portable's build).
check-platforms: check-portable check-musl check-accelerate install-check check-python check-web

# The portable fallbacks of src/base/platform.c, forced (-DAL_PORTABLE) into
# build-portable/: every unit test, and the CLI tests that write through them
# (fix and split write through the in-kernel copy, packages are swapped by rename).
# tests/fix_mil.sh alone runs its writer part; its pass parts are the pass_mil_* scripts.
FIX_MIL_PASSES := range_to_const fill_to_const fill_like_to_const cumsum_to_matmul io_fp16 \
	linear_split_cap upsample_x2_chain sdpa_split_heads block_bc1s_conv matmul_const_bc1s_conv \
	gru_unroll fp32_island
PORTABLE_SCRIPTS ?= tests/fix.sh tests/fix_mil.sh $(FIX_MIL_PASSES:%=tests/pass_mil_%.sh) tests/split.sh \
	tests/io_files.sh tests/portability.sh
check-portable:
	$(MAKE) BUILD=build-portable PORTABLE=1 build-portable/anelint $(TEST_BIN:$(BUILD)/%=build-portable/%)
	ANELINT=build-portable/anelint BUILD=build-portable TEST_SCRIPTS="$(PORTABLE_SCRIPTS)" \
		sh tests/run.sh $(TEST_BIN:$(BUILD)/%=build-portable/%)

# The library built against musl (Debian musl-tools) as a proxy for a libc that is
# not glibc: every object of libanelint.a compiles and archives. No musl build of
# json-c exists in Debian, so its headers (plain C declarations) are reached through
# build-musl/include/json-c, a link to the system's; the CLI, which would link
# json-c, is not built. BLAS=none: no musl OpenBLAS either.
MUSL_CC ?= musl-gcc
check-musl:
	@mkdir -p build-musl/include
	@ln -sfn "$$(pkg-config --variable=includedir json-c)/json-c" build-musl/include/json-c
	$(MAKE) BUILD=build-musl CC=$(MUSL_CC) BLAS=none JSON_CFLAGS="-Ibuild-musl/include -Ibuild-musl/include/json-c" \
		build-musl/libanelint.a
	@nm build-musl/libanelint.a | grep -q ' T al_model_check$$' && echo "musl: build-musl/libanelint.a builds"

# The Python package (python/): pytest against the CLI, then `pip install ./python`
# offline (Debian's setuptools: --no-build-isolation) into a scratch directory and a
# check from outside the source tree with the shared library it bundles.
PYTHON ?= /usr/bin/python3
check-python: $(BUILD)/anelint shared
	ANELINT=$(BUILD)/anelint $(PYTHON) -m pytest -q -p no:cacheprovider python/tests
	rm -rf $(BUILD)/pyinstall python/build python/anelint.egg-info
	$(PYTHON) -m pip install -q --no-build-isolation --no-deps --no-index --target $(BUILD)/pyinstall ./python
	rm -rf python/build python/anelint.egg-info
	cd / && PYTHONPATH=$(abspath $(BUILD))/pyinstall $(PYTHON) -c 'import anelint, sys; \
		r = anelint.check(sys.argv[1]); lib = anelint._n.path; \
		assert anelint.__file__.startswith(sys.argv[2]) and lib.startswith(sys.argv[2]), lib; \
		assert [l.unit for l in r.layers] == ["cpu"] * 3, r; \
		print("pip install ./python: anelint", anelint.version(), "with", lib)' \
		$(abspath tests/data/converted/pool_k15_s3__nn_ios13.mlmodel) $(abspath $(BUILD))/pyinstall

# BLAS=accelerate compiled on Linux: the interpreter's kernels through
# tools/accelerate/cblas.h with __APPLE__ defined and a stand-in for Apple's
# umbrella header (tests/accelerate/), then linked against OpenBLAS's sgemm and
# run (test_kernels) to show the calls match the CBLAS interface.
check-accelerate: $(BUILD)/libanelint.a
	@mkdir -p $(BUILD)/accelerate
	$(CC) $(filter-out $(BLAS_CFLAGS),$(CFLAGS)) -D__APPLE__ -DANELINT_BLAS=1 -Itools/accelerate -Itests/accelerate \
		-c src/interp/kernels.c -o $(BUILD)/accelerate/kernels.o
	@! nm $(BUILD)/accelerate/kernels.o | grep -q openblas_set_num_threads
	@nm $(BUILD)/accelerate/kernels.o | grep -q ' U cblas_sgemm'
	$(CC) $(CFLAGS) -o $(BUILD)/accelerate/test_kernels tests/unit/test_kernels.c $(BUILD)/accelerate/kernels.o \
		$(BUILD)/libanelint.a $(JSON_LIBS) -lopenblas $(DL_LIBS) -lm $(CMOCKA_LIBS)
	$(BUILD)/accelerate/test_kernels >$(BUILD)/accelerate/test_kernels.log 2>&1 || { cat $(BUILD)/accelerate/test_kernels.log; exit 1; }
	@echo "accelerate: kernels.c through tools/accelerate/cblas.h calls cblas_sgemm; test_kernels passes"

asan:
	$(MAKE) BUILD=build-asan OPT=-O1 SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" check

bench: $(BUILD)/anelint
	sh bench/run.sh $(BUILD)/anelint

# The interpreter against PyTorch (Debian python3-torch): bench/interp.py (it times
# `anelint run --repeat`), and `check` on an LLM-scale package against `cat`
# (bench/llm_check.sh); bench/README.md.
bench-interp: $(BUILD)/anelint
	/usr/bin/python3 bench/interp.py $(BUILD)/anelint
	sh bench/llm_check.sh $(BUILD)/anelint

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
FUZZ_HARNESSES    ?= mlmodel mil mlpackage fix rules split pkgwrite config miltext espresso evidence
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
# docs/fidelity.md): prints the development, held-out and leave-one-report-out figures
# (issue #30) and fails below FIDELITY_MIN percent over all cases; also checks that the
# committed fidelity models are what tools/mkobserved.py generates and that every report
# is in the committed split (tests/observed/split.json).
FIDELITY_MIN ?= 90
# The first batch of reports (the 88 cases the rules were written from) keeps issue #15's gate.
FIDELITY_BATCH_MIN ?= 2026-12-07=95
fidelity: $(BUILD)/anelint observed-models
	python3 tools/mkobserved.py --check
	python3 tests/observed/split.py
	python3 tests/fidelity.py --anelint $(BUILD)/anelint --models $(BUILD)/observed/models \
		--min $(FIDELITY_MIN) --min-batch $(FIDELITY_BATCH_MIN)

# The fidelity models (195 MB, mostly zero weights) are generated, never committed: 4 s.
observed-models:
	python3 tools/mkobserved.py --out $(BUILD)/observed >/dev/null

# The page (web/, docs/web.md): the library and the CLI compiled to WebAssembly with
# Debian's emscripten from these same sources, into build-wasm/web/ beside web/'s
# index.html and scripts; open build-wasm/web/index.html. json-c is built for wasm
# from Debian's source by tools/wasm-json-c.sh (fetched into build-wasm/, not kept
# in the tree). BLAS=none: the portable loops; no threads, no dlopen. Debian's emcc
# runs its JS tools with node, which finds node-acorn through NODE_PATH.
WASM_BUILD ?= build-wasm
EMCC       ?= emcc
WASM_JSONC  = $(WASM_BUILD)/json-c/install
WASM_OPT   ?= -Os
# The CLI as a module: the worker calls main (callMain) on a fresh instance per run,
# with the model's files on a WORKERFS mount (reads are File.slice + FileReaderSync).
# umask: emscripten 3.1.6 starts with 0777, so -o would create a file nobody may open;
# the worker sets 022 first.
WASM_LDFLAGS = -sMODULARIZE=1 -sEXPORT_NAME=createAnelint -sINVOKE_RUN=0 -sEXIT_RUNTIME=1 \
	-sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sENVIRONMENT=worker,node -sFORCE_FILESYSTEM=1 \
	-sEXPORTED_RUNTIME_METHODS=callMain,FS -lworkerfs.js -sTOTAL_STACK=1048576 \
	-sEXPORTED_FUNCTIONS=_main,_umask
WEB_FILES := $(wildcard web/*.html web/*.js web/*.css)
export NODE_PATH ?= /usr/share/nodejs

wasm:
	@command -v $(EMCC) >/dev/null || { echo "make wasm: no $(EMCC) (sh tools/install-deps.sh --test)"; exit 1; }
	nice sh tools/wasm-json-c.sh $(WASM_BUILD)
	$(MAKE) BUILD=$(WASM_BUILD) CC=$(EMCC) AR=emar OPT=$(WASM_OPT) BLAS=none DL_LIBS= \
		JSON_CFLAGS="-I$(WASM_JSONC)/include" JSON_LIBS="$(WASM_JSONC)/lib/libjson-c.a" \
		$(WASM_BUILD)/web/anelint.js
	@gz=$$(gzip -9c $(WASM_BUILD)/web/anelint.wasm | wc -c); \
		echo "make wasm: $(WASM_BUILD)/web/index.html; anelint.wasm $$(wc -c <$(WASM_BUILD)/web/anelint.wasm) bytes, $$gz gzipped"

$(BUILD)/web/anelint.js: $(CLI_OBJ) $(BUILD)/libanelint.a $(WEB_FILES)
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $(WASM_LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libanelint.a $(JSON_LIBS) -lm
	python3 tools/wasm-bundle.py $@ $(@:.js=.wasm) $(dir $@)anelint-bundle.js
	cp $(WEB_FILES) $(dir $@)

# The page in headless Chromium (tests/web.py): the page's JSON, SARIF and HTML equal
# the CLI's byte for byte, an unreadable model gives a one-line error, no network
# request. Skipped when emcc or chromium is absent.
CHROMIUM ?= chromium
check-web: $(BUILD)/anelint
	@if ! command -v $(EMCC) >/dev/null 2>&1 || ! command -v $(CHROMIUM) >/dev/null 2>&1; then \
		echo "check-web: skipped (no $(EMCC) or no $(CHROMIUM): sh tools/install-deps.sh --test)"; \
		echo "0 passed, 0 failed, 1 skipped"; \
	else $(MAKE) wasm && python3 tests/web.py --anelint $(BUILD)/anelint --web $(WASM_BUILD)/web \
		--chromium "$$(command -v $(CHROMIUM))"; fi

clean:
	rm -rf build build-asan build-fuzz build-portable build-musl build-wasm

FORCE:

.PHONY: FORCE wasm check-web all shared install uninstall install-check check check-platforms check-portable check-musl check-python check-accelerate asan bench bench-interp clean fidelity observed-models fuzz fuzz-build fuzz-seeds fuzz-long
