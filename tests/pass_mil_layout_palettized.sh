#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_layout_palettized.sh: palettized weights (constexpr_lut_to_dense)
# inside a layout run (src/rewrite/passes/mil_layout.c, mil-block-bc1s-conv; issue
# #31 item 4; docs/surgery.md). The conv reads the palettized weight without
# decoding it: the lut op is written again, expanding to [N, K, 1, 1] (iOS 18: the
# same indices / lut blobs declared [N, K, 1, 1] / [G0, G1, 1, 1, 16, 1]; iOS 16 / 17:
# the same attributes, shape [N, K, 1, 1]); the old lut op goes. Checked on crafted
# fix_mil_pal_ios17 / _ios18 (tools/mkfixture_pal.py; _ios18 pre-LN: the run starts at
# the layer_norm before its first linear) and, when ../shared is there,
# the corpus's tblock_pal4_grouped_g8_ios18 (a pre-LN block, palettized per grouped
# channel):
#  - applied, proved (bit-identical on the fixtures), verify passes, the output
#    loads; the lut ops written as above, the old ones deleted, weight.bin the
#    input's (no blob added, none dropped: nothing decoded);
#  - refused without --allow reassociate (the run named); --dry-run parity;
#  - Apple's validator and coremltools' MIL load accept the outputs (skipped when
#    /work/ct/validate, or $VALIDATOR, is absent).
set -u
: "${ANELINT:=build/anelint}"
C=tests/data/crafted
T=$(mktemp -d)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
rewrites() { sed -n '/"rewrites": \[/,/^  \]/p' "$1"; }
before=$(find $C/fix_mil_pal_ios1[78].mlpackage -type f | sort | xargs cat | cksum)
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
W=Data/com.apple.CoreML/weights/weight.bin
for v in 17 18; do
	# ios18 is pre-LN: its layer_norm on x joins the run as its entry op
	n=5 && [ $v = 18 ] && n=6
	RUN="a run of $n ops (2 linear -> 1x1 conv) in the (B, C, 1, S) layout"
	F=$C/fix_mil_pal_ios$v.mlpackage
	O=$T/p$v.mlpackage
	"$ANELINT" fix "$F" -o "$O" --allow reassociate --format json >"$T/p$v.json" 2>"$T/p$v.err"
	[ $? -eq 0 ] && grep -q "\"layer\": \"h1\", \"type\": \"linear\", \"pass\": \"mil-block-bc1s-conv\", \"rule\": \"ANE062\", \"class\": \"reassociate\", \"applied\": true, \"after\": \"$RUN: 1 entry, 1 exit\"" "$T/p$v.json" &&
		grep -q '"proved": true, "pass": true' "$T/p$v.json" && grep -q '"rel": 0[,}]' "$T/p$v.json" && ok ||
		{ bad "ios$v: applied and proved"; cat "$T/p$v.json" "$T/p$v.err"; }
	"$ANELINT" check "$O" >/dev/null 2>&1; [ $? -le 1 ] && ok || bad "ios$v: the output does not load"
	"$ANELINT" verify --random "$F" "$O" >"$T/v$v.out" 2>&1 && grep -q '^PASS' "$T/v$v.out" && ok ||
		{ bad "ios$v: verify"; cat "$T/v$v.out"; }
	cmp -s "$F/$W" "$O/$W" && ok || bad "ios$v: weight.bin changed (a palettized weight decoded or copied?)"
	"$ANELINT" info -f mil "$O" >"$T/p$v.mil"
	x=x_bc1s
	[ $v = 18 ] && x=xn_bc1s
	if [ $v = 18 ]; then
		grep -qE 'tensor<fp16, \[32, 16, 1, 1\]> w1_palettized_1x1 = constexpr_lut_to_dense\(indices = tensor<uint4, \[32, 16, 1, 1\]>\(BLOBFILE.*offset = tensor<uint64, \[\]>\(64\)\)\), lut = tensor<fp16, \[4, 1, 1, 1, 16, 1\]>' "$T/p$v.mil"
	else
		grep -qE 'tensor<fp16, \[32, 16, 1, 1\]> w1_palettized_1x1 = constexpr_lut_to_dense\(\)\[indices = tensor<uint8, \[256\]>\(BLOBFILE.*offset = tensor<uint64, \[\]>\(64\)\)\), lut = tensor<fp16, \[16\]>.*shape = tensor<uint32, \[4\]>\(\[32, 16, 1, 1\]\)' "$T/p$v.mil"
	fi
	[ $? -eq 0 ] && grep -qE "> h1_bc1s = conv\\(x = $x, weight = w1_palettized_1x1" "$T/p$v.mil" &&
		{ [ $v = 17 ] || grep -qE '> xn_bc1s = layer_norm\(x = x_bc1s' "$T/p$v.mil"; } &&
		grep -qE '> h2_bc1s = conv\(x = g_bc1s, weight = w2_palettized_1x1' "$T/p$v.mil" &&
		! grep -qE '> w[12]_palettized = ' "$T/p$v.mil" && [ "$(grep -c 'constexpr_lut_to_dense' "$T/p$v.mil")" -eq 2 ] && ok ||
		{ bad "ios$v: the lut ops written"; cat "$T/p$v.mil"; }
	judge "$O"
	# refused without --allow (the run named, a copy); --dry-run: the same rewrites
	"$ANELINT" fix "$F" -o "$T/n$v.mlpackage" --format json >"$T/n$v.json" 2>/dev/null
	[ $? -eq 0 ] && grep -q "\"layer\": \"h1\".*needs --allow reassociate (it would be: $RUN)" "$T/n$v.json" &&
		diff -r "$F" "$T/n$v.mlpackage" >/dev/null && ok || { bad "ios$v: without --allow"; cat "$T/n$v.json"; }
	"$ANELINT" fix "$F" --dry-run --allow reassociate --format json >"$T/d$v.json" 2>/dev/null
	[ $? -eq 0 ] && grep -q '"written": false' "$T/d$v.json" && [ "$(rewrites "$T/d$v.json")" = "$(rewrites "$T/p$v.json")" ] &&
		ok || { bad "ios$v: --dry-run parity"; diff "$T/p$v.json" "$T/d$v.json"; }
done

# the corpus's palettized pre-LN block: the whole block in one run from its first layer_norm
# (the run's entry op), all 6 palettized linears -> 1x1 convs
E=../shared/corpus/modern/tblock_pal4_grouped_g8_ios18.mlpackage
if [ -d "$E" ]; then
	"$ANELINT" fix "$E" -o "$T/tb.mlpackage" --allow reassociate --format json >"$T/tb.json" 2>"$T/tb.err"
	[ $? -eq 0 ] && grep -q '"layer": "linear_0_cast_fp16".*"applied": true, "after": "a run of 23 ops (6 -> 1x1 conv, 11 of attention, 4 transposes dropped) in the (B, C, 1, S) layout: 1 entry, 1 exit"' "$T/tb.json" &&
		grep -q '"proved": true, "pass": true' "$T/tb.json" && ok || { bad "tblock_pal4: applied"; cat "$T/tb.json" "$T/tb.err"; }
	"$ANELINT" verify --random "$E" "$T/tb.mlpackage" >"$T/tb.v" 2>&1 && grep -q '^PASS' "$T/tb.v" && ok ||
		{ bad "tblock_pal4: verify"; cat "$T/tb.v"; }
	"$ANELINT" info -f mil "$T/tb.mlpackage" >"$T/tb.mil"
	[ "$(grep -c 'uint4, \[64, 64, 1, 1\]' "$T/tb.mil")" -eq 4 ] && grep -q 'uint4, \[256, 64, 1, 1\]' "$T/tb.mil" &&
		grep -q 'uint4, \[64, 256, 1, 1\]' "$T/tb.mil" && [ "$(grep -cE '= transpose\(' "$T/tb.mil")" -eq 2 ] &&
		grep -qE '> x_cast_fp16_bc1s = layer_norm\(' "$T/tb.mil" && ok ||
		{ bad "tblock_pal4: the 6 weights read as [N, K, 1, 1], the layer_norm in the run, 2 transposes (entry, exit) left"; cat "$T/tb.mil"; }
	judge "$T/tb.mlpackage"
else
	skip=$((skip + 1))
fi

[ "$(find $C/fix_mil_pal_ios1[78].mlpackage -type f | sort | xargs cat | cksum)" = "$before" ] && ok || bad "the fixtures changed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
