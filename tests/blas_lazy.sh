#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/blas_lazy.sh: OpenBLAS is loaded only by a command that runs the
# interpreter (issue #34 item 4; src/interp/kernels.c "BLAS at run time").
#   - ldd: neither the CLI nor the shared library links libopenblas (nor the
#     libgfortran it brings);
#   - check, plan, info and report of a model with matrix products neither open
#     libopenblas nor start a thread (strace -f: no clone), in every build;
#   - in a BLAS=openblas build on a machine that has libopenblas.so.0, `run` of
#     the same model loads it;
#   - ANELINT_BLAS=none, and ANELINT_BLAS naming a library that is absent, run
#     the interpreter's loops (nothing opened) and give the BLAS run's outputs
#     within 1e-4, and the same bits at --threads 1 and 2.
# Needs strace (else LD_DEBUG=files of glibc's loader) to see what is loaded;
# those cases skip, counted, without either.
#   ANELINT=build/anelint sh tests/blas_lazy.sh        (from the repo root)
set -u
: "${ANELINT:=build/anelint}"
: "${BUILD:=$(dirname "$ANELINT")}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
skipped() { skip=$((skip + 1)); echo "skip $*"; }
# LeakSanitizer cannot run under ptrace (a sanitizer build): tests/nowrite.sh
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
export ASAN_OPTIONS

# a model whose run multiplies matrices (linear layers, attention)
M=tests/data/converted/transformer_encoder__mlp_fp32.mlpackage
P=tests/data/converted/pool_k15_s3__nn_ios13.mlmodel

# 1. nothing links it
if command -v ldd >/dev/null 2>&1; then
	for f in "$ANELINT" "$BUILD/libanelint.so"; do
		[ -e "$f" ] || continue
		if ldd "$f" 2>/dev/null | grep -Eq 'openblas|gfortran'; then
			bad "ldd $f links OpenBLAS: $(ldd "$f" | grep -E 'openblas|gfortran' | tr -s ' \t' ' ')"
		else ok; fi
	done
else
	skipped "ldd: not installed"
fi

# traced OUT CMD...: run CMD, recording the libraries it loads and the threads
# it starts into OUT (strace, else the loader's own log); false when neither works
tracer=
if command -v strace >/dev/null 2>&1 && strace -f -qq -e trace=openat -o "$T/probe" true 2>/dev/null; then
	tracer=strace
elif env LD_DEBUG=files true 2>&1 | grep -q 'calling init'; then
	tracer=ld_debug
fi
traced() {
	out=$1
	shift
	case $tracer in
	strace) strace -f -qq -e trace=openat,clone,clone3 -o "$out" "$@" >"$out.stdout" 2>&1 ;;
	ld_debug) LD_DEBUG=files "$@" 2>"$out" >"$out.stdout" ;;
	esac
}
# opened OUT: whether the trace shows libopenblas loaded
opened() {
	case $tracer in
	strace) grep -Eq 'openat\(.*libopenblas[^"]*", .*= [0-9]+' "$1" ;;
	ld_debug) grep -q 'calling init: .*libopenblas' "$1" ;;
	esac
}
# threads OUT: how many threads the trace shows started (strace only)
threads() { grep -Ec '(clone|clone3)\(.*= [0-9]+' "$1"; }

# 2. the commands that never run the interpreter load nothing
if [ -z "$tracer" ]; then
	skipped "neither strace nor LD_DEBUG works here: nothing to see loads with"
else
	i=0
	for cmd in "check $M" "check --format json $M" "plan --format json $M" "info $M" \
		"report --format markdown $M" "check $P"; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		traced "$T/t$i" "$ANELINT" $cmd
		if opened "$T/t$i"; then
			bad "anelint $cmd loaded OpenBLAS"
		elif [ "$tracer" = strace ] && [ "$(threads "$T/t$i")" -ne 0 ]; then
			bad "anelint $cmd started $(threads "$T/t$i") thread(s)"
		elif ! grep -q . "$T/t$i.stdout"; then
			bad "anelint $cmd printed nothing (did it run?)"
		else ok; fi
	done
fi

# 3. run loads it, where it can: a BLAS=openblas build (it names the library)
# on a system whose loader finds libopenblas.so.0
have_lib=no
if grep -q 'libopenblas\.so\.0' "$ANELINT" 2>/dev/null &&
	{ /sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null; } | grep -q 'libopenblas\.so\.0'; then
	have_lib=yes
fi
if [ -z "$tracer" ]; then
	skipped "run loads OpenBLAS: no tracer"
elif [ "$have_lib" = no ]; then
	skipped "run loads OpenBLAS: not a BLAS=openblas build, or no libopenblas.so.0 here"
else
	traced "$T/run" "$ANELINT" run --random --seed 3 --out "$T/blas" "$M"
	if opened "$T/run"; then ok; else bad "anelint run did not load OpenBLAS"; cat "$T/run.stdout"; fi
fi

# 4. without the library: the loops, within tolerance of the default run
"$ANELINT" run --random --seed 3 --out "$T/default" "$M" >"$T/default.txt" 2>&1 ||
	bad "anelint run (default) failed: $(cat "$T/default.txt")"
for want in none /nonexistent/libopenblas.so.0; do
	if ! ANELINT_BLAS=$want "$ANELINT" run --random --seed 3 --expect "$T/default" --tol 1e-4 \
		--threads 1 --out "$T/loops1" "$M" >"$T/loops.txt" 2>&1; then
		bad "ANELINT_BLAS=$want: run failed or differs from the default run"
		cat "$T/loops.txt"
	elif ! grep -q 'pass' "$T/loops.txt"; then
		bad "ANELINT_BLAS=$want: no comparison shown"
		cat "$T/loops.txt"
	else ok; fi
	if [ -n "$tracer" ]; then
		traced "$T/none" env ANELINT_BLAS="$want" "$ANELINT" run --random --seed 3 "$M"
		if opened "$T/none"; then bad "ANELINT_BLAS=$want: run loaded OpenBLAS"; else ok; fi
	fi
done
if ANELINT_BLAS=none "$ANELINT" run --random --seed 3 --threads 2 --out "$T/loops2" "$M" >"$T/loops.txt" 2>&1; then
	same=1
	for f in "$T/loops1"/*.npy; do
		[ -e "$f" ] || { same=0; break; }
		cmp -s "$f" "$T/loops2/$(basename "$f")" || same=0
	done
	if [ "$same" = 1 ]; then ok; else bad "ANELINT_BLAS=none: --threads 1 and 2 differ"; fi
else
	bad "ANELINT_BLAS=none --threads 2 failed: $(cat "$T/loops.txt")"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
