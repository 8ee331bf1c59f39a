#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_while_unroll_lists.sh: mil-while-unroll's limits on long loops and on
# TensorFlow's TensorArray loops (src/rewrite/passes/mil_while_unroll.c, docs/surgery.md):
#   - crafted pass_mil_while_unroll_t40 (tools/mkfixture_gru_steps.py: PyTorch's GRU over
#     40 steps, coremltools 8.3, fp16): unrolled (over the old 16-step cap: 40 x 27 ops
#     within the 2400 one rewrite lists), bit-identical, 9 -> 0 fallbacks; --dry-run parity
#   - crafted pass_mil_while_unroll_t100: refused, naming the op count
#   - corpus real/ActivityClassifier_GRU_mlprogram (../shared, when present), TensorFlow's
#     two GRUs over 87 steps with TensorArray lists (21 non-const body ops: 87 x 21 within
#     the 2400 ops): both loops unrolled, list_read of the list_scatter before the loop ->
#     a slice of the fp16 value it was cast from, list_write + list_gather after the loop
#     -> stack / expand_dims (the list_gather deleted), the make_list / list_scatter /
#     cast ops only the loop read deleted (5 a loop), the fills kept, bit-identical; 36 -> 8 fallbacks
#     with `fix --allow approximate --shape gru_input=default` (mil-io-fp16 on the input
#     waits for the round after the --shape: the two edits of the function input
#     overlapped, "the rewrites could not be placed in the file"); verify; --dry-run parity
#   - corpus real/DTLN_AEC_128_Part2_fp16 (TensorFlow LSTMs, fp16 body): 38 -> 0 fallbacks,
#     bit-identical; real/DTLN_AEC_128_Part1 (fp32, two loops: each unrolled since a trial
#     shows the other is too, then mil-fp16-compute): 81 -> 0, verify within 1e-2
#   - Apple's validator and coremltools' MIL load on the outputs (when built)
set -u
: "${ANELINT:=build/anelint}"
C=tests/data/crafted
CORPUS=${ANELINT_CORPUS:-../shared/corpus}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
json() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }
changed() { json "$1" "' '.join(str(r['round']) + ':' + r['layer'] + ':' + r['pass'] for r in j['rewrites'] if r['applied'])"; }
why() { json "$1" "[r['why_not'] for r in j['rewrites'] if r['pass'] == 'mil-while-unroll' and r['layer'] == '$2'][0]"; }
OUTS=""

# 1. 40 steps: unrolled in one round, exact
"$ANELINT" fix "$C/pass_mil_while_unroll_t40.mlpackage" -o "$T/t40.mlpackage" --max-rounds 1 --format json >"$T/t40.json" 2>&1
[ "$(changed "$T/t40.json")" = "1:while_loop_0_0:mil-while-unroll" ] &&
	[ "$(json "$T/t40.json" "j['before']['fallbacks'], j['after']['fallbacks']")" = "(9, 0)" ] &&
	grep -q '"after": "40 steps of its body.s ops' "$T/t40.json" && ! grep -q '"identical": false' "$T/t40.json" &&
	ok || { bad "t40: unrolled"; cat "$T/t40.json"; }
"$ANELINT" verify "$C/pass_mil_while_unroll_t40.mlpackage" "$T/t40.mlpackage" --random --tol 0 >"$T/t40.ver" 2>&1 &&
	ok || { bad "t40: verify"; cat "$T/t40.ver"; }
"$ANELINT" fix "$C/pass_mil_while_unroll_t40.mlpackage" -o "$T/t40d.mlpackage" --max-rounds 1 --dry-run --format json >"$T/t40d.json" 2>&1
[ "$(changed "$T/t40d.json")" = "$(changed "$T/t40.json")" ] && [ ! -e "$T/t40d.mlpackage" ] && ok || bad "t40: --dry-run differs"
OUTS="$OUTS $T/t40.mlpackage"

# 2. 100 steps: more ops than one rewrite lists
"$ANELINT" fix "$C/pass_mil_while_unroll_t100.mlpackage" --dry-run --format json >"$T/t100.json" 2>&1
[ "$(why "$T/t100.json" while_loop_0_0)" = "100 steps of 27 ops: more than the 2400 ops one rewrite lists" ] &&
	ok || { bad "t100: reason $(why "$T/t100.json" while_loop_0_0)"; }

# 3. corpus: TensorFlow's TensorArray loops
A=$CORPUS/real/ActivityClassifier_GRU_mlprogram.mlpackage
if [ -d "$A" ]; then
	"$ANELINT" fix "$A" -o "$T/ac.mlpackage" --allow approximate --shape gru_input=default --format json >"$T/ac.json" 2>"$T/ac.err"
	rc=$?
	[ $rc -eq 0 ] && [ -d "$T/ac.mlpackage" ] && [ "$(json "$T/ac.json" "j['fixed_point']")" = True ] &&
		ok || { bad "ActivityClassifier: --shape with --allow approximate: rc $rc"; cat "$T/ac.err"; }
	changed "$T/ac.json" | grep -q "^1:sequential_gru_PartitionedCall_while_0:mil-while-unroll 1:sequential_gru_1_PartitionedCall_while_0:mil-while-unroll " &&
		[ "$(json "$T/ac.json" "j['before']['fallbacks'], j['after']['fallbacks']")" = "(36, 8)" ] &&
		[ "$(grep -c '"after": "87 steps of its body.s ops (list_read -> slice_by_index, list_write + list_gather -> stack, the index folded), 1395 ops; 5 dead ops before it deleted"' "$T/ac.json")" = 2 ] &&
		! grep -q '"identical": false' "$T/ac.json" &&
		ok || { bad "ActivityClassifier: unrolled"; changed "$T/ac.json"; json "$T/ac.json" "j['before'], j['after']"; }
	"$ANELINT" info --format mil "$T/ac.mlpackage" >"$T/ac.mil" 2>&1
	! grep -qE ' = (while_loop|list_read|list_write|list_gather|list_scatter|make_list)\(' "$T/ac.mil" &&
		[ "$(grep -c ' = stack(' "$T/ac.mil")" = 1 ] && [ "$(grep -c ' = fill(' "$T/ac.mil")" = 2 ] &&
		ok || { bad "ActivityClassifier: list ops left"; grep -cE 'while_loop|list_' "$T/ac.mil"; }
	json "$T/ac.json" "[r['why_not'] for r in j['rewrites'] if r['layer'] == 'cast_13' and r['round'] == 1][0]" |
		grep -q "^input 'gru_input' gets its --shape / --enumerate in this round: the next round makes it fp16" &&
		[ "$(json "$T/ac.json" "[r['round'] for r in j['rewrites'] if r['layer'] == 'cast_13' and r['applied']]")" = "[2]" ] &&
		ok || { bad "ActivityClassifier: mil-io-fp16 of the input"; changed "$T/ac.json"; }
	"$ANELINT" verify "$A" "$T/ac.mlpackage" --random --tol 1e-2 >"$T/ac.ver" 2>&1 && ok || { bad "ActivityClassifier: verify"; cat "$T/ac.ver"; }
	"$ANELINT" fix "$A" -o "$T/acd.mlpackage" --allow approximate --shape gru_input=default --dry-run --format json >"$T/acd.json" 2>&1
	[ "$(changed "$T/acd.json")" = "$(changed "$T/ac.json")" ] && [ ! -e "$T/acd.mlpackage" ] && ok ||
		bad "ActivityClassifier: --dry-run differs"
	OUTS="$OUTS $T/ac.mlpackage"
else
	skip=$((skip + 6))
	echo "skip: $CORPUS absent"
fi

# 4. corpus: the DTLN echo canceller's TensorFlow LSTM loops
D1=$CORPUS/real/DTLN_AEC_128_Part1.mlpackage
D2=$CORPUS/real/DTLN_AEC_128_Part2_fp16.mlpackage
if [ -d "$D1" ] && [ -d "$D2" ]; then
	"$ANELINT" fix "$D2" -o "$T/d2.mlpackage" --allow approximate --format json >"$T/d2.json" 2>&1
	[ "$(json "$T/d2.json" "j['before']['fallbacks'], j['after']['fallbacks']")" = "(38, 0)" ] &&
		[ "$(changed "$T/d2.json" | grep -o 'mil-while-unroll' | wc -l)" = 2 ] &&
		"$ANELINT" verify "$D2" "$T/d2.mlpackage" --random --tol 0 >/dev/null 2>&1 &&
		ok || { bad "DTLN part 2"; changed "$T/d2.json"; }
	"$ANELINT" fix "$D1" -o "$T/d1.mlpackage" --allow approximate --format json >"$T/d1.json" 2>&1
	[ "$(json "$T/d1.json" "j['before']['fallbacks'], j['after']['fallbacks']")" = "(81, 0)" ] &&
		changed "$T/d1.json" | grep -q "^1:DTLN_AEC_Part1_lstm_1_0_PartitionedCall_while_0:mil-while-unroll 1:DTLN_AEC_Part1_lstm_1_1_PartitionedCall_while_0:mil-while-unroll 2:main:mil-fp16-compute" &&
		"$ANELINT" verify "$D1" "$T/d1.mlpackage" --random --tol 1e-2 >/dev/null 2>&1 &&
		ok || { bad "DTLN part 1"; changed "$T/d1.json"; }
else
	skip=$((skip + 2))
fi

# 5. Apple's validator and coremltools' MIL load (the tools of ../shared, when built)
: "${VALIDATOR:=/work/ct/validate}"
CHECK_MODEL=${CHECK_MODEL:-../shared/tools/coremltools-local/check_model.py}
if [ -x "$VALIDATOR" ] && [ -f "$CHECK_MODEL" ] && [ -d "$(dirname "$VALIDATOR")/src" ]; then
	for f in $OUTS; do
		PYTHONPATH="$(dirname "$VALIDATOR")/src" VALIDATOR="$VALIDATOR" /usr/bin/python3 "$CHECK_MODEL" "$f" \
			>"$T/ct.out" 2>&1 && grep -q 'validator=VALID  mil=ok' "$T/ct.out" && ok ||
			{ bad "Core ML validator: $f"; cat "$T/ct.out"; }
	done
else
	skip=$((skip + 1))
	echo "skip: Core ML validator not built"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
