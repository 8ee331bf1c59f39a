#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_layout_seqfirst.sh: sequence-first attention through the layout
# pass (src/rewrite/passes/mil_layout.c, mil-block-bc1s-conv; issue #31 item 4;
# docs/surgery.md). PyTorch's nn.MultiheadAttention without batch_first converts
# to [S, B, C] values: a transpose in, the fused in-projection, a split of q / k /
# v on the channel axis, heads merged with the batch [S, B*H, D], a rank-2
# out-projection on [S*B, C], a transpose out. Checked on crafted
# fix_mil_seqfirst (tools/mkfixture_seqfirst.py: B = 1 and B = 2 carried, a
# block whose attention weights are a model output refused) and, when ../shared
# is there, the corpus's converted encoder layer:
#  - applied: one run from the in-projection, 1 entry and 1 exit, no transpose
#    or rank-3 matmul left in the block, the split on the channel axis of
#    [1, 48, 1, S]; B = 2: the heads merged with the batch ([S, B*H, D]) are
#    [B, H, D, S], the [S, B, C] model output o2 an exit (transpose perm
#    [3, 0, 2, 1], reshape); proved (within 1e-6); verify passes; the output loads;
#  - refused: the third block (its attention weights p3 would leave the run),
#    with the reason; the out-projections reported as in the run;
#  - --dry-run reports the same rewrites; without --allow the same run is named;
#  - the corpus encoder fp16 / iOS 17 fp16 (and fp32 after mil-fp16-compute):
#    the whole layer in one run, verify passes (fp32: within fp16 compute's 1e-2);
#  - Apple's validator and coremltools' MIL load accept every output (skipped
#    when /work/ct/validate, or $VALIDATOR, is absent).
set -u
: "${ANELINT:=build/anelint}"
F=tests/data/crafted/fix_mil_seqfirst.mlpackage
D=../shared/corpus/converted
T=$(mktemp -d)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
rewrites() { sed -n '/"rewrites": \[/,/^  \]/p' "$1"; }
rel_within() { python3 -c 'import json, sys
o = json.load(open(sys.argv[1]))["proof"]["outputs"]
sys.exit(0 if o and all(x["rel"] <= float(sys.argv[2]) for x in o) else 1)' "$1" "$2"; }
before=$(find "$F" -type f | sort | xargs cat | cksum)
: "${VALIDATOR:=/work/ct/validate}"
CHECK_MODEL=${CHECK_MODEL:-../shared/tools/coremltools-local/check_model.py}
judge() {
	if [ -x "$VALIDATOR" ] && [ -f "$CHECK_MODEL" ] && [ -d "$(dirname "$VALIDATOR")/src" ]; then
		PYTHONPATH="$(dirname "$VALIDATOR")/src" VALIDATOR="$VALIDATOR" /usr/bin/python3 "$CHECK_MODEL" "$1" \
			>"$T/ct.out" 2>&1 && grep -q 'validator=VALID  mil=ok' "$T/ct.out" && ok ||
			{ bad "Core ML validator: $1"; cat "$T/ct.out"; }
	else
		skip=$((skip + 1))
	fi
}

# 1. applied: the B = 1 block in one run, proved
RUN='a run of 20 ops (2 -> 1x1 conv, 15 of attention, 6 transposes dropped) in the (B, C, 1, S) layout'
"$ANELINT" fix "$F" -o "$T/sf.mlpackage" --allow reassociate --format json >"$T/sf.json" 2>"$T/sf.err"
[ $? -eq 0 ] && grep -q "\"layer\": \"lin\", \"type\": \"linear\", \"pass\": \"mil-block-bc1s-conv\", \"rule\": \"ANE062\", \"class\": \"reassociate\", \"applied\": true, \"after\": \"$RUN: 1 entry, 1 exit\"" "$T/sf.json" &&
	grep -q '"proved": true, "pass": true' "$T/sf.json" && rel_within "$T/sf.json" 1e-6 && ok ||
	{ bad "seq-first block: applied and proved"; cat "$T/sf.json" "$T/sf.err"; }
grep -q '"layer": "lo".*"why_not": "[^"]*mil-block-bc1s-conv: in the run of .lin. (rewritten with it)"' "$T/sf.json" &&
	grep -q '"layer": "lo2".*"why_not": "[^"]*mil-block-bc1s-conv: in the run of .lin2. (rewritten with it)"' "$T/sf.json" &&
	ok || bad "seq-first: the out-projections are in the runs"
# B = 2: the run ends at o2 (a model output in the [S, B, C] form: one exit, cheaper than two)
grep -q '"layer": "lin2", "type": "linear", "pass": "mil-block-bc1s-conv", "rule": "ANE062", "class": "reassociate", "applied": true, "after": "a run of 17 ops (2 -> 1x1 conv, 14 of attention, 5 transposes dropped) in the (B, C, 1, S) layout: 1 entry, 1 exit"' "$T/sf.json" &&
	ok || bad "seq-first: the B = 2 block applied"
"$ANELINT" check "$T/sf.mlpackage" >/dev/null 2>&1; [ $? -le 1 ] && ok || bad "seq-first: the output does not load"
"$ANELINT" verify --random "$F" "$T/sf.mlpackage" >"$T/v.out" 2>&1 && grep -q '^PASS' "$T/v.out" && ok ||
	{ bad "seq-first: verify"; cat "$T/v.out"; }
# the block's ops after: one entry (reshape, transpose), conv, split, 3 reshapes, mul,
# 2 matmuls, softmax, reshape, conv, add, layer_norm, one exit (transpose, reshape);
# B = 2's block as it was
"$ANELINT" info -f mil "$T/sf.mlpackage" >"$T/sf.mil"
grep -v ' = const()' "$T/sf.mil" | grep -vE '[23]_|[23] =|x[23]' >"$T/b1.mil"
grep -q 'x_bc1s = transpose(x = x_bs1c' "$T/b1.mil" &&
	grep -qE 'tensor<fp16, \[1, 48, 1, 6\]> lin_bc1s = conv\(' "$T/b1.mil" &&
	grep -qE 'tensor<fp16, \[1, 16, 1, 6\]> q_bc1s, tensor<fp16, \[1, 16, 1, 6\]> k_bc1s, tensor<fp16, \[1, 16, 1, 6\]> v_bc1s = split\(x = lin_bc1s, split_sizes = sizes, axis = lin_axis_c\)' "$T/b1.mil" &&
	grep -qE 'tensor<fp16, \[1, 2, 6, 6\]> s_bc1s = matmul\(x = rk_bc1s, y = sq_bc1s, transpose_x = lin_true' "$T/b1.mil" &&
	grep -qE 'tensor<fp16, \[1, 2, 6, 6\]> p_bc1s = softmax\(x = s_bc1s, axis = lin_axis_keys' "$T/b1.mil" &&
	grep -qE 'tensor<fp16, \[1, 16, 1, 6\]> lo_bc1s = conv\(' "$T/b1.mil" &&
	grep -qE 'tensor<fp16, \[1, 6, 16\]> y = reshape\(' "$T/b1.mil" &&
	[ "$(grep -cE '= (transpose|reshape)\(' "$T/b1.mil")" -eq 8 ] && ok ||
	{ bad "seq-first: the ops written"; cat "$T/sf.mil"; }
grep -qE 'tensor<fp16, \[2, 2, 6, 6\]> s2_bc1s = matmul\(x = rk2_bc1s, y = sq2_bc1s' "$T/sf.mil" &&
	grep -qE 'tensor<fp16, \[2, 16, 1, 6\]> j2_bc1s = reshape\(x = c2_bc1s' "$T/sf.mil" &&
	grep -qE 'tensor<fp16, \[6, 2, 1, 16\]> o2_bs1c = transpose\(x = lo2_bc1s, perm = lin2_perm_sb1c\)' "$T/sf.mil" &&
	grep -qE 'tensor<fp16, \[6, 2, 16\]> o2 = reshape\(x = o2_bs1c' "$T/sf.mil" &&
	grep -qE 'tensor<fp16, \[2, 6, 8\]> tq3 = transpose\(' "$T/sf.mil" && grep -qE '> lin3 = linear\(' "$T/sf.mil" && ok ||
	bad "seq-first: the B = 2 block's ops, or the third block changed"
judge "$T/sf.mlpackage"

# 2. refused: the attention weights p3 are a model output
grep -q '"layer": "lin3".*"applied": false, "why_not": "[^"]*mil-block-bc1s-conv: a lone linear (the run ends before rq3 (reshape): a value in the heads / scores form would leave it)' "$T/sf.json" &&
	ok || bad "seq-first: the third block refused with its reason"

# 3. --dry-run: the same rewrites, nothing written; without --allow: the run named, a copy
"$ANELINT" fix "$F" --dry-run --allow reassociate --format json >"$T/d.json" 2>/dev/null
[ $? -eq 0 ] && grep -q '"written": false' "$T/d.json" && [ "$(rewrites "$T/d.json")" = "$(rewrites "$T/sf.json")" ] &&
	ok || { bad "seq-first: --dry-run parity"; diff "$T/sf.json" "$T/d.json"; }
"$ANELINT" fix "$F" -o "$T/sf0.mlpackage" --format json >"$T/sf0.json" 2>/dev/null
[ $? -eq 0 ] && grep -q "\"layer\": \"lin\".*needs --allow reassociate (it would be: $RUN)" "$T/sf0.json" &&
	diff -r "$F" "$T/sf0.mlpackage" >/dev/null && ok || { bad "seq-first: without --allow"; cat "$T/sf0.json"; }

# 4. the corpus's converted PyTorch encoder layer (nn.TransformerEncoderLayer, not batch_first)
for m in transformer_encoder__mlp_fp16 transformer_encoder__mlp_ios17_fp16 transformer_encoder__mlp_fp32; do
	E=$D/$m.mlpackage
	if [ ! -d "$E" ]; then
		skip=$((skip + 1))
		continue
	fi
	"$ANELINT" fix "$E" -o "$T/$m.mlpackage" --allow approximate --format json >"$T/$m.json" 2>"$T/$m.err"
	[ $? -eq 0 ] && grep -q '"pass": "mil-block-bc1s-conv", "rule": "ANE062", "class": "reassociate", "applied": true, "after": "a run of 25 ops (4 -> 1x1 conv, 15 of attention, 6 transposes dropped) in the (B, C, 1, S) layout: 1 entry, 1 exit"' "$T/$m.json" &&
		[ "$(grep -c '"pass": "mil-block-bc1s-conv"[^}]*"applied": true' "$T/$m.json")" -eq 1 ] && ok ||
		{ bad "$m: the layer in one run"; cat "$T/$m.json" "$T/$m.err"; }
	"$ANELINT" verify --random --tol 1e-2 "$E" "$T/$m.mlpackage" >"$T/$m.v" 2>&1 && grep -q '^PASS' "$T/$m.v" && ok ||
		{ bad "$m: verify"; cat "$T/$m.v"; }
	"$ANELINT" info -f mil "$T/$m.mlpackage" | grep -v ' = const()' | grep -cE '= (transpose|matmul)\(' >"$T/$m.n"
	[ "$(cat "$T/$m.n")" -eq 4 ] && ok || bad "$m: $(cat "$T/$m.n") transposes / matmuls left (4: entry, exit, 2 attention matmuls)"
	[ "$m" = transformer_encoder__mlp_fp32 ] && judge "$T/$m.mlpackage"
done

[ "$(find "$F" -type f | sort | xargs cat | cksum)" = "$before" ] && ok || bad "the fixture changed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
