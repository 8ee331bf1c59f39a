#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/coretypes.sh: the checks that depend on OpenBLAS's kernels, once per core type.
# Debian's OpenBLAS picks its sgemm kernel by CPU at load time and honours
# OPENBLAS_CORETYPE, as some CI machines set it (an AMD EPYC set to Haswell failed
# test_gemm_threads every time: issue #28). Each kernel rounds in its own way, and
# results must not depend on --threads under any of them: for each core type this
# CPU can execute (Haswell, SkylakeX, Zen, Sandybridge, Prescott), test_kernels and
# tests/threads.sh on the tests/data models (THREADS_QUICK=1). Zen runs with
# OPENBLAS_L2_SIZE=524288, an EPYC's L2. A core type whose instructions this CPU lacks
# (SkylakeX without AVX-512) is skipped, counted; so is everything when the CLI does
# not use OpenBLAS (BLAS=none, Accelerate, or no libopenblas.so.0 for a BLAS=openblas
# build to load at run time: src/interp/kernels.c). ~15 s.
set -u
: "${ANELINT:=build/anelint}"
: "${BUILD:=build}"
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

KT=$BUILD/tests/test_kernels
# linked (before issue #34), or named for dlopen and present where the loader looks
uses_openblas() {
	ldd "$ANELINT" 2>/dev/null | grep -q openblas && return 0
	grep -q 'libopenblas\.so\.0' "$ANELINT" 2>/dev/null &&
		{ /sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null; } | grep -q 'libopenblas\.so\.0'
}
if ! uses_openblas || [ ! -x "$KT" ]; then
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
has() { for f in "$@"; do case " $flags " in *" $f "*) ;; *) return 1 ;; esac; done; }

for ct in Haswell SkylakeX Zen Sandybridge Prescott; do
	case $ct in
	SkylakeX) need="avx512f avx512bw avx512dq avx512vl avx2 fma" ;;
	Haswell | Zen) need="avx2 fma" ;;
	Sandybridge) need="avx" ;;
	Prescott) need="pni" ;; # SSE3, as Linux names it
	esac
	# shellcheck disable=SC2086
	if ! has $need; then
		skip=$((skip + 1))
		continue
	fi
	l2=
	[ "$ct" = Zen ] && l2=524288
	if env OPENBLAS_CORETYPE=$ct ${l2:+OPENBLAS_L2_SIZE=$l2} "$KT" >"${TMPDIR:-/tmp}/coretypes.$$" 2>&1; then ok; else
		bad "test_kernels under OPENBLAS_CORETYPE=$ct"
		grep -E 'FAILED|differs|Error' "${TMPDIR:-/tmp}/coretypes.$$" | head -10
	fi
	line=$(env OPENBLAS_CORETYPE=$ct ${l2:+OPENBLAS_L2_SIZE=$l2} THREADS_QUICK=1 ANELINT="$ANELINT" sh tests/threads.sh 2>&1 |
		tee "${TMPDIR:-/tmp}/coretypes.$$" | tail -n 1)
	case $line in
	*" 0 failed"*) ok ;;
	*) bad "tests/threads.sh under OPENBLAS_CORETYPE=$ct: $line"; grep '^FAIL' "${TMPDIR:-/tmp}/coretypes.$$" | head -10 ;;
	esac
done
rm -f "${TMPDIR:-/tmp}/coretypes.$$"

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
