#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/threads.sh: `anelint run` gives byte-identical outputs at any --threads
# (docs/interpreter.md "Threads and timing"). Proofs (fix, split) and verify compare
# runs, so a result must not depend on how many threads shared the work: each model
# runs with --threads 1, 2 and 3 (--out to one directory each) and every .npy must
# cmp equal. The tests/data models have convolutions, Winograd layers and matrix
# products big enough to be cut into blocks (at least 2^19 multiply-adds); the
# corpus' ResNet-18 (Winograd 3x3 layers, im2col for the 7x7/2, 3x3/2 and 1x1/2 ones,
# the classifier's split row product), MobileNetV2, U-Net and encoders follow, also at
# 1, 2 and 3 threads, when ../shared is there (skipped, counted, when not). With THREADS_QUICK=1 only the tests/data models run
# (tests/coretypes.sh runs this once per OpenBLAS core type). Before ali_gemm cut
# products by their shape alone, OPENBLAS_CORETYPE=Haswell (or Zen) made 9 models of
# tests/data and the corpus' ResNet-18 and MobileNetV2 differ between 1 and 2 threads.
set -u
: "${ANELINT:=build/anelint}"
CORPUS=${ANELINT_CORPUS:-../shared/corpus}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# same MODEL THREADS...: run MODEL at each thread count (random inputs, seed 1) and
# cmp every output against the first count's
same() {
	m=$1
	shift
	first=
	for t in "$@"; do
		rm -rf "$T/o$t"
		if ! "$ANELINT" run --random --threads "$t" --out "$T/o$t" "$m" >"$T/run.txt" 2>&1; then
			bad "$m: run --threads $t failed"
			cat "$T/run.txt"
			return
		fi
		[ -n "$first" ] || first=$t
	done
	n=0
	for f in "$T/o$first"/*.npy; do [ -e "$f" ] && n=$((n + 1)); done
	if [ "$n" -eq 0 ]; then
		bad "$m: no output written"
		return
	fi
	for t in "$@"; do
		[ "$t" = "$first" ] && continue
		for f in "$T/o$first"/*.npy; do
			cmp -s "$f" "$T/o$t/${f##*/}" && ok || bad "$m: ${f##*/} differs between --threads $first and $t"
		done
	done
}

for m in tests/data/converted/dilated_conv__nn_ios13.mlmodel tests/data/converted/dilated_conv__mlp_ios17_fp16.mlpackage \
	tests/data/modern/convnet_int8_perchannel_ios17.mlpackage tests/data/modern/encoder_fp16_ios17_enumerated.mlpackage \
	tests/data/converted/builder__legacy_rank5_elementwise.mlmodel; do
	same "$m" 1 2 3
done

if [ "${THREADS_QUICK:-0}" != 1 ]; then
	for m in converted/resnet18_full__mlp_fp16.mlpackage converted/mobilenet_v2__mlp_fp32.mlpackage \
		converted/unet_small__mlp_fp32.mlpackage converted/transformer_encoder__mlp_fp32.mlpackage \
		modern/encoder_fp16_ios17.mlpackage; do
		if [ -e "$CORPUS/$m" ]; then same "$CORPUS/$m" 1 2 3; else skip=$((skip + 1)); fi
	done
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
