#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/run_cli.sh: `anelint run`, `verify` and `fp16` as a user meets them: exit codes,
# one-line errors, --out writing whole files only, verify telling equal models from
# different ones, fp16 JSON. Fixtures from tests/data only.
set -u
: "${ANELINT:=build/anelint}"
pass=0 fail=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
gru=tests/data/converted/gru__nn_ios14.mlmodel
gru_mlp=tests/data/converted/gru__mlp_fp16.mlpackage
ref=tests/data/reference/gru

# expect RC DESCRIPTION -- CMD...: exit code RC, at most one line on stderr
expect() {
	want=$1 what=$2
	shift 3
	"$@" >"$dir/out" 2>"$dir/err"
	rc=$?
	lines=$(wc -l <"$dir/err")
	if [ "$rc" -eq "$want" ] && [ "$lines" -le 2 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $what: exit $rc (want $want), $lines stderr lines"
		head -3 "$dir/err"
	fi
}

expect 0 "run on reference inputs matches" -- "$ANELINT" run "$gru" --inputs "$ref" --expect "$ref"
expect 1 "a tolerance of 0 fails a result that is not bit-identical" -- \
	"$ANELINT" run "$gru" --inputs "$ref" --expect "$ref" --tol 0
expect 2 "no inputs and no --random" -- "$ANELINT" run "$gru"
expect 2 "an input the model does not have" -- "$ANELINT" run "$gru" --input y=x.npy
printf 'junk' >"$dir/bad.npy"
expect 2 "a file that is not .npy" -- "$ANELINT" run "$gru" --input "x=$dir/bad.npy"
expect 2 "an input of the wrong shape" -- "$ANELINT" run "$gru" \
	--input x=tests/data/reference/transformer_encoder/x.npy
expect 3 "a custom layer cannot run" -- "$ANELINT" run tests/data/converted/builder__custom_layer.mlmodel --random
huge=tests/data/crafted/huge_input.mlmodel
# A 1 GB address-space limit proves nothing was allocated; AddressSanitizer reserves
# terabytes of shadow memory at start-up and cannot run under it, so the sanitizer
# build runs the same commands without the limit (the budget refuses before allocating).
limit="ulimit -v 1048576;"
if grep -q __asan_init "$ANELINT" 2>/dev/null; then limit=; fi
expect 3 "a 200-byte model declaring a 3.9 GB input is refused before allocating" -- \
	sh -c "$limit exec \"\$0\" run $huge --random" "$ANELINT"
if [ -n "$limit" ]; then
	expect 4 "--max-memory 30000 lets it try: out of memory under a 1 GB ulimit, one line" -- \
		sh -c "$limit exec \"\$0\" run $huge --random --max-memory 30000" "$ANELINT"
fi
expect 2 "--max-memory takes megabytes" -- "$ANELINT" run "$gru" --random --max-memory lots
expect 2 "--precision takes fp32 or fp16" -- "$ANELINT" run "$gru" --random --precision fp8
expect 4 "--out in a directory that cannot be made" -- "$ANELINT" run "$gru" --random --out /proc/no/such

# --out: every output as .npy, nothing else left in the directory
expect 0 "--out writes the outputs" -- "$ANELINT" run "$gru" --random --seed 3 --out "$dir/o"
if [ "$(ls -A "$dir/o")" = "var_27.npy" ] && head -c 6 "$dir/o/var_27.npy" | grep -q NUMPY; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "FAIL --out: $(ls -A "$dir/o")"
fi
# the written output reads back and is the one expected for the same seed
expect 0 "the written output is what the same run gives" -- \
	"$ANELINT" run "$gru" --random --seed 3 --expect "$dir/o" --tol 0

# verify: the NeuralNetwork and the ML Program files of one PyTorch module agree to 3e-3
# (fp16 weights in the package); a model against itself is bit-identical
expect 0 "verify nn against mlp" -- "$ANELINT" verify "$gru" "$gru_mlp" --inputs "$ref" --tol 3e-3
expect 1 "verify at tol 0 tells them apart" -- "$ANELINT" verify "$gru" "$gru_mlp" --inputs "$ref" --tol 0
expect 0 "verify a model against itself at tol 0" -- "$ANELINT" verify "$gru" "$gru" --tol 0
if grep -q "bit-identical" "$dir/out"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL verify self: not bit-identical"; fi

# fp16: JSON that parses, every op compared
expect 0 "fp16 --format json" -- "$ANELINT" fp16 "$gru" --inputs "$ref" --format json
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ops_compared"] > 0 and not d["diverged"]' "$dir/out"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "FAIL fp16 JSON"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
