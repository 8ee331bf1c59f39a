#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_expanddims_const_to_loadconst.sh: expanddims-const-to-loadconst
# (src/rewrite/passes/nn_const_expand.c, docs/surgery.md): a recurrent layer's
# zero initial state as coremltools writes it, a loadConstantND [1, H] (ANE006)
# read by an expandDims to [1, 1, H, 1, 1], becomes one loadConstant [H, 1, 1]
# and the loadConstantND goes (exact, bit-identical); a constant with a second
# reader is left with the reason. On the crafted fix_nn_zero_state
# (tools/mkfixtures_nn_recurrent.py) and the converted lstm__nn_ios14, whose
# unrolled LSTM then leaves no layer off the ANE by its own verdict. Each:
# verify --tol 0, --dry-run parity, Core ML's validator (when built).
set -u
: "${ANELINT:=build/anelint}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
fallbacks() { sed -n "s/.*\"$1\": {[^}]*\"fallbacks\": \([0-9]*\).*/\1/p" "$2"; }
rewrites() { sed -n '/"rewrites": \[/,/^  \]/p' "$1"; }
: "${VALIDATOR:=/work/ct/validate}"
judge() {
	if [ -x "$VALIDATOR" ]; then
		"$VALIDATOR" "$1" >"$T/ct.out" 2>&1 && grep -q '^VALID' "$T/ct.out" && ok ||
			{ bad "Core ML validator: $1"; cat "$T/ct.out"; }
	else
		skip=$((skip + 1))
	fi
}
P='"pass": "expanddims-const-to-loadconst", "rule": "ANE006", "class": "exact"'

# 1. exact: applies without --allow; lstm_a's two constants taken in, lstm_b's shared one left
M=tests/data/crafted/fix_nn_zero_state.mlmodel
"$ANELINT" fix "$M" -o "$T/z0.mlmodel" --format json >"$T/z0.json" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] && [ "$(fallbacks before "$T/z0.json")" = 5 ] && [ "$(fallbacks after "$T/z0.json")" = 3 ] &&
	grep -q "\"layer\": \"a_h0_x\", \"type\": \"expandDims\", $P, \"applied\": true, \"after\": \"loadConstant \[4,1,1\] (constant layer 'a_h0' removed)\"" "$T/z0.json" &&
	grep -q "\"layer\": \"a_c0_x\", \"type\": \"expandDims\", $P, \"applied\": true" "$T/z0.json" &&
	grep -q "\"layer\": \"b_h0_x\", \"type\": \"expandDims\", $P, \"applied\": false, \"why_not\": \"the constant 'b_s0' has other readers" "$T/z0.json" &&
	grep -q '"identical": true' "$T/z0.json" && ! grep -q '"identical": false' "$T/z0.json" && ok ||
	{ bad "fix_nn_zero_state: exact pass (rc $rc)"; cat "$T/z0.json" "$T/err"; }
"$ANELINT" check --all "$T/z0.mlmodel" >"$T/z0.chk" 2>&1
[ "$(grep -cE ' loadConstant +->' "$T/z0.chk")" = 2 ] && ! grep -qE ' a_(h|c)0 +loadConstantND' "$T/z0.chk" &&
	grep -qE ' b_s0 +loadConstantND' "$T/z0.chk" && ok || { bad "fix_nn_zero_state: layers of the output"; cat "$T/z0.chk"; }
"$ANELINT" verify --random --tol 0 "$M" "$T/z0.mlmodel" >"$T/v.out" 2>&1 && ok || { bad "fix_nn_zero_state: verify"; cat "$T/v.out"; }
judge "$T/z0.mlmodel"
"$ANELINT" fix "$M" --dry-run --format json >"$T/d.json" 2>/dev/null
[ $? -eq 0 ] && grep -q '"written": false' "$T/d.json" && [ "$(rewrites "$T/d.json")" = "$(rewrites "$T/z0.json")" ] &&
	ok || { bad "fix_nn_zero_state: --dry-run parity"; diff "$T/z0.json" "$T/d.json"; }

# 2. with the LSTMs unrolled: 5 -> 1 (the shared constant left)
"$ANELINT" fix "$M" -o "$T/z.mlmodel" --allow reassociate --format json >"$T/z.json" 2>/dev/null
[ $? -eq 0 ] && [ "$(fallbacks after "$T/z.json")" = 1 ] && ok || { bad "fix_nn_zero_state --allow reassociate"; cat "$T/z.json"; }
"$ANELINT" verify --random --tol 0 "$M" "$T/z.mlmodel" >"$T/v.out" 2>&1 && ok || { bad "fix_nn_zero_state: verify (unrolled)"; cat "$T/v.out"; }
judge "$T/z.mlmodel"

# 3. coremltools' own: converted lstm__nn_ios14 (10 steps, zero h0 / c0 as loadConstantND [1, 64]): 3 -> 0
L=tests/data/converted/lstm__nn_ios14.mlmodel
"$ANELINT" fix "$L" -o "$T/l.mlmodel" --allow reassociate --format json >"$T/l.json" 2>/dev/null
[ $? -eq 0 ] && [ "$(fallbacks before "$T/l.json")" = 3 ] && [ "$(fallbacks after "$T/l.json")" = 0 ] &&
	[ "$(grep -c "$P, \"applied\": true" "$T/l.json")" = 2 ] && ok || { bad "lstm__nn_ios14: 3 -> 0"; cat "$T/l.json"; }
"$ANELINT" verify --random --tol 0 "$L" "$T/l.mlmodel" >"$T/v.out" 2>&1 && ok || { bad "lstm__nn_ios14: verify"; cat "$T/v.out"; }
judge "$T/l.mlmodel"

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
