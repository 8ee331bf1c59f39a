#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_while_unroll.sh: mil-while-unroll (src/rewrite/passes/mil_while_unroll.c,
# docs/surgery.md), the while_loop coremltools 8.3 writes for PyTorch's GRU:
#   - crafted pass_mil_while_unroll: two small loops of that form, one unrolled
#     (bit-identical), one left (its index read by a mul)
#   - converted gru__mlp_fp16 (tests/data/converted; nn.GRU(32->64) over 10 steps, iOS 15,
#     fp16 ops in an fp32-typed loop): unrolled in one round (exact, bit-identical), every
#     op it lists on the ANE by its own verdict (9 -> 0 fallbacks), no gather / scatter /
#     while_loop left, the fp16 <-> fp32 casts of the loop buffer gone; the fixed point
#     two rounds (mil-io-fp16 then takes the input's cast); --dry-run reports the same;
#     verify passes bit-identically
#   - corpus (../shared when present): gru__mlp_ios17_fp16 (the index cast to int16 /
#     uint16) unrolled; gru__mlp_fp32 left without --allow approximate, saying its body computes in fp32;
#     ActivityClassifier_GRU_mlprogram's two loops (TensorFlow's TensorArray lists)
#     unrolled (tests/pass_mil_while_unroll_lists.sh)
#   - Apple's validator and coremltools' MIL load on the outputs (when built)
set -u
: "${ANELINT:=build/anelint}"
D=tests/data/converted
CORPUS=${ANELINT_CORPUS:-../shared/corpus}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
json() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }
changed() { json "$1" "' '.join(r['layer'] + ':' + r['pass'] for r in j['rewrites'] if r['applied'])"; }
G=$D/gru__mlp_fp16.mlpackage
W=tests/data/crafted/pass_mil_while_unroll.mlpackage
OUTS=""

# 0. crafted: loop a unrolled (4 steps), loop b refused (its index read by a mul)
"$ANELINT" fix "$W" -o "$T/w.mlpackage" --format json >"$T/w.json" 2>&1
[ "$(changed "$T/w.json")" = "a_w0:mil-while-unroll" ] && ! grep -q '"identical": false' "$T/w.json" &&
	grep -q '"layer": "b_w0".*"why_not": "the loop index is read by .b_k. (mul): only gather / scatter indices are unrolled"' "$T/w.json" &&
	ok || { bad "crafted loops"; cat "$T/w.json"; }
"$ANELINT" fix "$W" -o "$T/wd.mlpackage" --dry-run --format json >"$T/wd.json" 2>&1
[ "$(changed "$T/wd.json")" = "$(changed "$T/w.json")" ] && ok || bad "crafted: --dry-run differs"
OUTS="$OUTS $T/w.mlpackage"

# 1. one round: the loop unrolled, exact
"$ANELINT" fix "$G" -o "$T/g1.mlpackage" --max-rounds 1 --format json >"$T/g1.json" 2>"$T/g1.err"
rc=$?
[ $rc -eq 0 ] && [ "$(changed "$T/g1.json")" = "while_loop_0_0:mil-while-unroll" ] &&
	[ "$(json "$T/g1.json" "j['before']['fallbacks']")" = 9 ] && [ "$(json "$T/g1.json" "j['after']['fallbacks']")" = 0 ] &&
	ok || { bad "gru: rc $rc"; cat "$T/g1.json" "$T/g1.err"; }
grep -q '"after": "10 steps of its body.s ops (gather -> slice_by_index, scatter -> concat of slices, the index folded), 271 ops"' "$T/g1.json" &&
	grep -q '"class": "exact"' "$T/g1.json" && ok || bad "gru: after / class"
grep -q '"identical": false' "$T/g1.json" && bad "gru: not bit-identical" || ok
"$ANELINT" info --format mil "$T/g1.mlpackage" >"$T/g1.mil" 2>&1
! grep -qE ' = (while_loop|gather|scatter)\(' "$T/g1.mil" && [ "$(grep -c ' = slice_by_index(' "$T/g1.mil")" -ge 30 ] &&
	! grep -qE '_u[0-9]+ = cast\(' "$T/g1.mil" && ok || { bad "gru: ops left"; grep -E 'while_loop|gather|scatter|cast\(' "$T/g1.mil"; }
"$ANELINT" verify "$G" "$T/g1.mlpackage" --random --tol 0 >"$T/g1.ver" 2>&1 && ok || { bad "gru: verify"; cat "$T/g1.ver"; }
"$ANELINT" fix "$G" -o "$T/g1d.mlpackage" --max-rounds 1 --dry-run --format json >"$T/g1d.json" 2>&1
[ "$(changed "$T/g1d.json")" = "$(changed "$T/g1.json")" ] && [ ! -e "$T/g1d.mlpackage" ] && ok || bad "gru: --dry-run differs"
OUTS="$OUTS $T/g1.mlpackage"
# 2. to the fixed point (--allow approximate): then mil-io-fp16 on the input's cast
"$ANELINT" fix "$G" -o "$T/g.mlpackage" --allow approximate --format json >"$T/g.json" 2>&1
[ "$(json "$T/g.json" "len(j['rounds'])")" = 2 ] && [ "$(json "$T/g.json" "j['fixed_point']")" = True ] &&
	[ "$(json "$T/g.json" "j['after']['fallbacks']")" = 0 ] && ok || { bad "gru: fixed point"; cat "$T/g.json"; }

# 3. corpus
if [ -d "$CORPUS/converted" ]; then
	"$ANELINT" fix "$CORPUS/converted/gru__mlp_ios17_fp16.mlpackage" -o "$T/g17.mlpackage" --format json >"$T/g17.json" 2>&1
	[ "$(changed "$T/g17.json")" = "while_loop_0_0:mil-while-unroll" ] && ! grep -q '"identical": false' "$T/g17.json" &&
		ok || { bad "gru ios17"; cat "$T/g17.json"; }
	OUTS="$OUTS $T/g17.mlpackage"
	# exact only (with --allow approximate: tests/pass_mil_while_unroll_fp32.sh)
	"$ANELINT" fix "$CORPUS/converted/gru__mlp_fp32.mlpackage" --dry-run --format json >"$T/g32.json" 2>&1
	grep -q '"layer": "while_loop_0_0".*"why_not": ".squeeze_2. (squeeze) computes in fp32: unrolled it would still fall back (ANE029)' "$T/g32.json" &&
		ok || { bad "gru fp32: reason"; cat "$T/g32.json"; }
else
	skip=$((skip + 2))
	echo "skip: $CORPUS absent"
fi
if [ -d "$CORPUS/real/ActivityClassifier_GRU_mlprogram.mlpackage" ]; then
	"$ANELINT" fix "$CORPUS/real/ActivityClassifier_GRU_mlprogram.mlpackage" --dry-run --format json >"$T/ac.json" 2>&1
	changed "$T/ac.json" | grep -q "sequential_gru_PartitionedCall_while_0:mil-while-unroll sequential_gru_1_PartitionedCall_while_0:mil-while-unroll" &&
		ok || { bad "ActivityClassifier: not unrolled"; cat "$T/ac.json"; }
else
	skip=$((skip + 1))
fi

# 4. Apple's validator and coremltools' MIL load (the tools of ../shared, when built)
: "${VALIDATOR:=/work/ct/validate}"
CHECK_MODEL=${CHECK_MODEL:-../shared/tools/coremltools-local/check_model.py}
if [ -x "$VALIDATOR" ] && [ -f "$CHECK_MODEL" ] && [ -d "$(dirname "$VALIDATOR")/src" ]; then
	for f in $OUTS; do
		mkdir -p "$f/Data/com.apple.CoreML/weights"
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
