#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_nn_loop_unroll.sh: nn-loop-unroll (src/rewrite/passes/nn_loop_unroll.c,
# docs/surgery.md) on fixtures cut down from the corpus' NeuralNetwork GRUs
# (tools/mkfixtures_nn_loop.py: coremltools' loop + gather / scatter form of
# PyTorch's nn.GRU, I 4, H 8):
#   applied (exact, no --allow): loop_gru_last (10 steps, the last h),
#     loop_gru_seq (10 steps, the sequence), loop_gru_64 (the most unrolled),
#     loop_gru_h0 (a buffer not zero: the scatter's add kept as add layers);
#     8 -> 1 layers off the ANE by their own verdict at the fixed point (the
#     loop, two gathers, the scatter, the four loadConstantNDs gone but the
#     buffer's constant), the proof bit-identical, `verify --tol 0` passes,
#     --dry-run reports the same rewrites and writes nothing, Core ML's
#     validator accepts the output;
#   refused, with the reason, the output a byte-identical copy: loop_gru_65
#     (65 steps), loop_gru_dynamic (the condition's bound a model input);
#   the two corpus models themselves (when ../shared is present): fewer
#     fallbacks after `fix --allow approximate`, verified, valid; the corpus'
#     real/pytorch_controlflow_loop_branch (a count a branch picks) refused.
set -u
: "${ANELINT:=build/anelint}"
F=tests/data/crafted
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

# applied NAME STEPS: fix (exact), 8 -> 1 fallbacks, the proof bit-identical,
# verify, --dry-run parity, check, the judge
applied() {
	name=$1 steps=$2
	m=$F/$name.mlmodel out=$T/$name.mlmodel js=$T/$name.json
	"$ANELINT" fix "$m" -o "$out" --format json >"$js" 2>"$T/err"
	rc=$?
	[ $rc -eq 0 ] && [ "$(fallbacks before "$js")" = 8 ] && [ "$(fallbacks after "$js")" = 1 ] &&
		grep -q "\"layer\": \"while_loop_0\", \"type\": \"loop\", \"pass\": \"nn-loop-unroll\", \"rule\": \"ANE016\", \"class\": \"exact\", \"applied\": true, \"after\": \"$steps steps of its body's layers" "$js" &&
		grep -q '"proof": {"kind": "whole", "proved": true, "pass": true' "$js" && ! grep -q '"identical": false' "$js" &&
		ok || { bad "$name: fix (rc $rc; fallbacks $(fallbacks before "$js") -> $(fallbacks after "$js"), not 8 -> 1)"; cat "$js" "$T/err"; }
	"$ANELINT" verify --random --tol 0 "$m" "$out" >"$T/v.out" 2>&1 && ok || { bad "$name: verify"; cat "$T/v.out"; }
	"$ANELINT" fix "$m" --dry-run --format json >"$T/d.json" 2>/dev/null
	[ $? -eq 0 ] && grep -q '"written": false' "$T/d.json" && [ "$(rewrites "$T/d.json")" = "$(rewrites "$js")" ] &&
		ok || { bad "$name: --dry-run parity"; diff "$js" "$T/d.json"; }
	# no loop, gather or scatter is left; the one fallback is the buffer's constant
	"$ANELINT" check --all "$out" >"$T/c.out" 2>&1
	[ $? -le 1 ] && ! grep -qE ' (loop|gather|scatter|lessThan) +->' "$T/c.out" &&
		[ "$(grep -cE '^ +[0-9]+ .* -> cpu +\[' "$T/c.out")" -le 1 ] && grep -qE ' concat_1 +loadConstantND +-> cpu' "$T/c.out" &&
		ok || { bad "$name: check of the output"; cat "$T/c.out"; }
	judge "$out"
}

# refused NAME REASON: left with its reason, nothing applied, a byte-identical copy
refused() {
	name=$1 why=$2
	m=$F/$name.mlmodel out=$T/$name.mlmodel js=$T/$name.json
	"$ANELINT" fix "$m" -o "$out" --format json >"$js" 2>"$T/err"
	[ $? -eq 0 ] && grep -q "\"layer\": \"while_loop_0\", \"type\": \"loop\", \"pass\": \"nn-loop-unroll\", .*\"applied\": false, \"why_not\": \"$why" "$js" &&
		! grep -q '"applied": true' "$js" && cmp -s "$m" "$out" && ok ||
		{ bad "$name: not refused for: $why"; cat "$js" "$T/err"; }
	"$ANELINT" fix "$m" --dry-run --format json >"$T/d.json" 2>/dev/null
	[ "$(rewrites "$T/d.json")" = "$(rewrites "$js")" ] && ok || { bad "$name: --dry-run parity"; diff "$js" "$T/d.json"; }
}

applied loop_gru_last 10
applied loop_gru_seq 10
applied loop_gru_64 64
applied loop_gru_h0 6
# the gather at the index is a sliceStatic of x; the carried h read by name, step to step
"$ANELINT" check --all "$T/loop_gru_seq.mlmodel" >"$T/s.out" 2>&1
grep -qE ' gather_2__u9 +sliceStatic' "$T/s.out" && grep -qE ' while_loop_0_1 +(concatND|concat) ' "$T/s.out" && ok ||
	{ bad "loop_gru_seq: no sliceStatic per step / rows concatenated under the buffer's name"; cat "$T/s.out"; }
# a buffer whose rows are not zero: the scatter's add is kept (one add layer a step)
[ "$(grep -cE ' scatter_1__u[0-9]+ +add ' "$T/c.out")" = 6 ] && ok ||
	{ bad "loop_gru_h0: the mode-add scatter onto non-zero rows not written as adds"; grep scatter "$T/c.out"; }

refused loop_gru_65 "more than 64 steps: at most 64 are unrolled"
refused loop_gru_dynamic "the condition's 'less_1' (lessThan) is not known when the file is read: the trip count is not static"

# the corpus models the pass was built for
CORPUS=${ANELINT_CORPUS:-../shared/corpus}
for name in gru__nn_ios14 gru_seqout__nn_ios13; do
	m=$CORPUS/converted/$name.mlmodel
	if [ ! -f "$m" ]; then
		skip=$((skip + 3))
		continue
	fi
	"$ANELINT" fix "$m" -o "$T/$name.mlmodel" --allow approximate --format json >"$T/$name.json" 2>&1
	[ $? -eq 0 ] && [ "$(fallbacks before "$T/$name.json")" = 8 ] && [ "$(fallbacks after "$T/$name.json")" = 1 ] && ok ||
		{ bad "$name: 8 -> 1 fallbacks"; cat "$T/$name.json"; }
	# exact alone: bit-identical
	"$ANELINT" fix "$m" -o "$T/${name}_x.mlmodel" >/dev/null 2>&1 &&
		"$ANELINT" verify --random --tol 0 "$m" "$T/${name}_x.mlmodel" >/dev/null 2>&1 && ok || bad "$name: verify"
	judge "$T/$name.mlmodel"
done

# PyTorch's loop whose count a branch on the input picks: refused for its condition
m=$CORPUS/real/pytorch_controlflow_loop_branch.mlmodel
if [ -f "$m" ]; then
	"$ANELINT" fix "$m" --dry-run --format json >"$T/cf.json" 2>&1
	grep -q '"pass": "nn-loop-unroll", .*"applied": false, "why_not": "the condition.s .x_cond. (lessThan) is not known when the file is read' "$T/cf.json" &&
		ok || { bad "pytorch_controlflow_loop_branch: not refused for its runtime condition"; cat "$T/cf.json"; }
else
	skip=$((skip + 1))
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
