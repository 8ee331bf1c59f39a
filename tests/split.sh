#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/split.sh: `anelint split` (docs/split.md) on real models: the custom layer
# model cut before its custom layer (part 1 has no fallback), converted models cut
# in the middle (outputs parse with protoc --decode_raw, re-load, boundary types as
# inferred, the pipeline bit-identical to the original under `verify --tol 0`, the
# parts chained through `run --out` / `--inputs` give the original's outputs), a
# classifier with an image input, --at segments, and refusals (exit 2/3, one stderr
# line, no file left). Corpus parts skip when ../shared/corpus is absent.
set -u
: "${ANELINT:=build/anelint}"
D=tests/data/converted
C=tests/data/crafted
CORPUS=${ANELINT_CORPUS:-../shared/corpus}
T=$(mktemp -d)
# The fixtures are tiny: the work floor (ANE071 / ANE072) would put each of them
# wholly on the CPU (one segment, every part "falling back"); these tests are about
# the cut, so check and split read the rules with the floor switched off.
printf 'id: ANE071\nfamilies: none\nprovenance: tiny fixtures\n\nid: ANE072\nfamilies: none\nprovenance: tiny fixtures\n' >"$T/nofloor.rules"
trap 'rm -rf "$T"' EXIT INT TERM
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
have_protoc=0
command -v protoc >/dev/null 2>&1 && have_protoc=1

# parses FILE: protoc --decode_raw when installed (else counted as skipped)
parses() {
	if [ $have_protoc -eq 1 ]; then
		protoc --decode_raw <"$1" >/dev/null 2>&1 && ok || bad "protoc --decode_raw fails on $1"
	else
		skip=$((skip + 1))
	fi
}

# json_get FILE EXPR: a Python expression over the JSON document j
json_get() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }

# no_files: nothing left in the output directory DIR (temporaries included)
no_files() { [ -z "$(ls -A "$1" 2>/dev/null)" ]; }

# refused WHAT RC CMD...: exits RC, one stderr line (usage errors: and the hint
# "try 'anelint split --help'"), writes nothing into $T/r
refused() {
	what=$1 want=$2
	shift 2
	rm -rf "$T/r"
	mkdir -p "$T/r"
	"$@" >"$T/r.out" 2>"$T/r.err"
	rc=$?
	n=$(wc -l <"$T/r.err")
	[ "$want" -eq 2 ] && n=$(grep -vc "^try 'anelint" "$T/r.err") # syntax errors add the usual hint
	if [ $rc -eq "$want" ] && [ "$n" -eq 1 ] && no_files "$T/r"; then ok; else
		bad "$what: exit $rc (want $want), $n stderr lines, files: $(ls -A "$T/r")"
		cat "$T/r.err"
	fi
}

# refused1: the same, and strictly one stderr line (no usage hint)
refused1() {
	refused "$@"
	[ "$(wc -l <"$T/r.err")" -eq 1 ] && ok || bad "$1: more than one stderr line"
}

# 1. custom layer model, cut before the custom layer: part 1 (the convolution) has
#    no fallback; the boundary is [8,16,16] (the RANK5 blob [1,1,8,16,16])
"$ANELINT" split $D/builder__custom_layer.mlmodel --at conv -o "$T/c1.mlmodel" -o "$T/c2.mlmodel" \
	--pipeline "$T/cp.mlmodel" >"$T/c.txt"
rc=$?
if [ $rc -eq 0 ] && grep -q 'part 1 .*0 fall back' "$T/c.txt" && grep -q 'unproved' "$T/c.txt"; then ok; else
	bad "custom layer split (rc $rc)"; cat "$T/c.txt"; fi
for f in c1 c2 cp; do parses "$T/$f.mlmodel"; done
"$ANELINT" check --rules "$T/nofloor.rules" "$T/c1.mlmodel" >/dev/null
[ $? -eq 0 ] && ok || bad "custom: part 1 falls back or does not load"
"$ANELINT" check --all "$T/c2.mlmodel" >"$T/c2.txt"
[ $? -eq 1 ] && grep -q 'custom_swish .*ANE001' "$T/c2.txt" && ok || bad "custom: part 2 should hold the fallback"
"$ANELINT" info --format json "$T/c2.mlmodel" >"$T/c2.json"
[ "$(json_get "$T/c2.json" 'j["models"][0]["inputs"][0]["shape"], j["models"][0]["inputs"][0]["dtype"]')" = "[8, 16, 16] fp32" ] &&
	ok || bad "custom: part 2 input is not fp32 [8, 16, 16]: $(json_get "$T/c2.json" 'j["models"][0]["inputs"]')"
"$ANELINT" info --format json "$T/c1.mlmodel" >"$T/c1.json"
[ "$(json_get "$T/c1.json" 'j["models"][0]["outputs"][0]["name"], j["models"][0]["outputs"][0]["shape"]')" = "c [8, 16, 16]" ] &&
	ok || bad "custom: part 1 output is not c [8, 16, 16]"
"$ANELINT" check --all "$T/cp.mlmodel" >"$T/cp.txt"
[ "$(grep -c 'custom_swish .*ANE001' "$T/cp.txt")" -eq 1 ] && ok || bad "custom: the pipeline does not re-load with its custom layer"

# 2. after the custom layer: its output has no static shape -> refused
refused "custom: cut after the custom layer" 3 "$ANELINT" split $D/builder__custom_layer.mlmodel \
	--at custom_swish -o "$T/r/a.mlmodel" -o "$T/r/b.mlmodel"
grep -q 'not known statically' "$T/r.err" && ok || bad "custom: the refusal does not say why"

# 3. converted models cut in the middle: parse, re-load, pipeline bit-identical,
#    parts chained give the same outputs
chain() { # chain NAME MODEL LAYER OUTPUT BOUNDARY SHAPE
	name=$1 model=$2 layer=$3 out=$4 bnd=$5 shape=$6
	"$ANELINT" split "$model" --at "$layer" -o "$T/$name.1.mlmodel" -o "$T/$name.2.mlmodel" \
		--pipeline "$T/$name.p.mlmodel" --format json >"$T/$name.json"
	rc=$?
	if [ $rc -eq 0 ] && [ "$(json_get "$T/$name.json" 'j["proof"]["pipeline_identical"], j["proof"]["chained_identical"], j["written"]')" = "True True True" ]; then ok; else
		bad "$name: split (rc $rc)"; cat "$T/$name.json"; return; fi
	got=$(json_get "$T/$name.json" '[t["shape"] for t in j["parts"][1]["inputs"] if t["name"] == "'"$bnd"'"][0]')
	[ "$got" = "$shape" ] && ok || bad "$name: boundary $bnd is $got, not $shape"
	for f in 1 2 p; do
		parses "$T/$name.$f.mlmodel"
		"$ANELINT" check "$T/$name.$f.mlmodel" >/dev/null 2>&1
		[ $? -le 1 ] && ok || bad "$name: $f does not re-load"
	done
	"$ANELINT" verify "$model" "$T/$name.p.mlmodel" --random --tol 0 >"$T/$name.v.txt"
	[ $? -eq 0 ] && ok || { bad "$name: the pipeline is not bit-identical"; cat "$T/$name.v.txt"; }
	# part 1, then part 2 on its outputs (and the model inputs it reads: same seed)
	mkdir -p "$T/$name.o1" "$T/$name.o2"
	"$ANELINT" run "$T/$name.1.mlmodel" --random --out "$T/$name.o1" >/dev/null &&
		"$ANELINT" run "$T/$name.2.mlmodel" --inputs "$T/$name.o1" --random --out "$T/$name.o2" >/dev/null &&
		"$ANELINT" run "$model" --random --expect "$T/$name.o2" --tol 0 >"$T/$name.e.txt"
	rc=$?
	[ $rc -eq 0 ] && [ -s "$T/$name.o2/$out.npy" ] && ok || { bad "$name: chained parts differ (rc $rc)"; cat "$T/$name.e.txt"; }
}
chain tf $D/transformer_encoder__nn_ios13.mlmodel attn_output.1 var_101 attn_output.1 "[4, 16, 16]"
chain gru $D/gru__nn_ios14.mlmodel while_loop_0 var_27 while_loop_0_1 "[11, 1, 64]"
chain r5 $D/builder__legacy_rank5_elementwise.mlmodel dilconv out dc "[8, 64, 64]"

# 4. a classifier with an image input: the head and labels in part 2, the
#    preprocessing in part 1, the pipeline a pipelineClassifier, bit-identical
"$ANELINT" split $C/split_classifier_image.mlmodel --at pool -o "$T/k1.mlmodel" -o "$T/k2.mlmodel" \
	--pipeline "$T/kp.mlmodel" >"$T/k.txt"
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c 'bit-identical' "$T/k.txt")" -eq 2 ] && ok || { bad "classifier split (rc $rc)"; cat "$T/k.txt"; }
"$ANELINT" info "$T/k1.mlmodel" | grep -q 'k1.mlmodel  neuralNetwork,' && ok || bad "classifier: part 1 is not a plain neuralNetwork"
"$ANELINT" info "$T/k2.mlmodel" | grep -q 'k2.mlmodel  neuralNetworkClassifier,' && ok || bad "classifier: part 2 is not the classifier"
"$ANELINT" info "$T/kp.mlmodel" | grep -q 'kp.mlmodel  pipelineClassifier,' && ok || bad "classifier: the pipeline is not a pipelineClassifier"
if [ $have_protoc -eq 1 ]; then
	# NeuralNetworkPreprocessing (network field 2, featureName "image") only in part 1
	n1=$(protoc --decode_raw <"$T/k1.mlmodel" | grep -c '^  2 {')
	n2=$(protoc --decode_raw <"$T/k2.mlmodel" | grep -c '^  2 {')
	[ "$n1" -eq 1 ] && [ "$n2" -eq 0 ] && ok || bad "classifier: preprocessing in part 1 $n1 times, part 2 $n2 times"
else
	skip=$((skip + 1))
fi
"$ANELINT" verify $C/split_classifier_image.mlmodel "$T/kp.mlmodel" --random --tol 0 >/dev/null
[ $? -eq 0 ] && ok || bad "classifier: the pipeline is not bit-identical"

# 5. --at segments: one part per predicted segment boundary that can be cut
"$ANELINT" split $D/gru__nn_ios14.mlmodel --at segments --rules "$T/nofloor.rules" --pipeline "$T/gs.mlmodel" >"$T/gs.txt"
rc=$?
[ $rc -eq 0 ] && grep -q ': 2 parts' "$T/gs.txt" && grep -q "note: segment boundary after 'while_loop_0_1_input_copy' not cut" "$T/gs.txt" &&
	ok || { bad "segments (rc $rc)"; cat "$T/gs.txt"; }
"$ANELINT" verify $D/gru__nn_ios14.mlmodel "$T/gs.mlmodel" --random --tol 0 >/dev/null
[ $? -eq 0 ] && ok || bad "segments: the pipeline is not bit-identical"

# 5b. ML Program (.mlpackage in, .mlpackage parts out): fp16 boundary, the
#     constants each part reads copied into it, weights carried, bit-identical;
#     chained through .npy files in fp16 precision (the interpreter's fp32 mode keeps
#     fp16 values unrounded inside a program, and a .npy of an fp16 output rounds them)
P=$D/transformer_encoder__mlp_ios17_fp16.mlpackage
"$ANELINT" split $P --at attn_output_1_cast_fp16 -o "$T/m1.mlpackage" -o "$T/m2.mlpackage" \
	--pipeline "$T/mp.mlpackage" --format json >"$T/m.json"
rc=$?
if [ $rc -eq 0 ] && [ "$(json_get "$T/m.json" 'j["proof"]["pipeline_identical"], j["proof"]["chained_identical"], j["written"]')" = "True True True" ]; then ok; else
	bad "ML Program split (rc $rc)"; cat "$T/m.json"; fi
[ "$(json_get "$T/m.json" '[(t["dtype"], t["shape"]) for t in j["parts"][1]["inputs"] if t["role"] == "boundary"]')" = "[('fp16', [4, 16, 16])]" ] &&
	ok || bad "ML Program: boundary is $(json_get "$T/m.json" 'j["parts"][1]["inputs"]')"
for f in m1 m2 mp; do
	[ -f "$T/$f.mlpackage/Manifest.json" ] && [ -f "$T/$f.mlpackage/Data/com.apple.CoreML/weights/weight.bin" ] &&
		cmp -s "$T/$f.mlpackage/Data/com.apple.CoreML/weights/weight.bin" "$P/Data/com.apple.CoreML/weights/weight.bin" &&
		ok || bad "ML Program: $f is not a package carrying the input's weights"
	parses "$T/$f.mlpackage/Data/com.apple.CoreML/model.mlmodel"
	"$ANELINT" check "$T/$f.mlpackage" >/dev/null 2>&1
	[ $? -le 1 ] && ok || bad "ML Program: $f does not re-load"
done
"$ANELINT" verify $P "$T/mp.mlpackage" --random --tol 0 >/dev/null
[ $? -eq 0 ] && ok || bad "ML Program: the pipeline is not bit-identical"
mkdir -p "$T/mo1" "$T/mo2"
"$ANELINT" run "$T/m1.mlpackage" -p fp16 --random --out "$T/mo1" >/dev/null &&
	"$ANELINT" run "$T/m2.mlpackage" -p fp16 --inputs "$T/mo1" --random --out "$T/mo2" >/dev/null &&
	"$ANELINT" run $P -p fp16 --random --expect "$T/mo2" --tol 0 >/dev/null
[ $? -eq 0 ] && ok || bad "ML Program: chained parts differ"
# after linear_0 the second part reads constants of the first: copied into it
"$ANELINT" split $P --at linear_0_cast_fp16 --pipeline "$T/mc.mlpackage" >"$T/mc.txt"
[ $? -eq 0 ] && [ "$(grep -c 'bit-identical' "$T/mc.txt")" -eq 2 ] && ok || { bad "ML Program: constants not carried"; cat "$T/mc.txt"; }
# an fp16 boundary in a spec 6 program (fp32 I/O): the parts need spec 7 (fp16 I/O)
"$ANELINT" split $D/gru__mlp_fp16.mlpackage --at segments --rules "$T/nofloor.rules" --pipeline "$T/g16.mlpackage" --format json >"$T/g16.json"
rc=$?
# (ANE029 now also marks the cast closing the fp32 island: the cut gives three parts,
# each with an fp16 boundary, so each needs spec 7)
[ $rc -eq 0 ] && [ "$(json_get "$T/g16.json" '7 in set(p["spec"] for p in j["parts"])')" = True ] &&
	[ "$(json_get "$T/g16.json" 'j["proof"]["pipeline_identical"]')" = True ] &&
	ok || { bad "ML Program spec 6 -> 7 (rc $rc)"; cat "$T/g16.json"; }
# an existing package is not replaced; a scalar boundary is refused
mkdir -p "$T/r"
refused "existing package" 3 sh -c "mkdir -p '$T/r/x.mlpackage' && '$ANELINT' split $P --at attn_output_1_cast_fp16 --pipeline '$T/r/x.mlpackage' >/dev/null; rc=\$?; rmdir '$T/r/x.mlpackage'; exit \$rc"
refused "scalar boundary" 3 "$ANELINT" split $C/fix_mil_fill.mlpackage --at vmax --pipeline "$T/r/p.mlpackage"

# 6. refusals: exit 2 (usage, and a cut that names no layer or cannot be made: an unknown or last layer, one segment) or 3 (the model cannot be cut there), one stderr line, no file written
refused "unknown layer" 2 "$ANELINT" split $D/gru__nn_ios14.mlmodel --at nope -o "$T/r/a.mlmodel" -o "$T/r/b.mlmodel"
refused "layer inside a loop" 3 "$ANELINT" split $D/gru__nn_ios14.mlmodel --at gather_2 --pipeline "$T/r/p.mlmodel"
refused "last layer" 2 "$ANELINT" split $D/gru__nn_ios14.mlmodel --at linear_12 --pipeline "$T/r/p.mlmodel"
refused "part reading nothing" 3 "$ANELINT" split $D/gru__nn_ios14.mlmodel --at while_loop_0_1_input_copy --pipeline "$T/r/p.mlmodel"
refused "one segment" 2 "$ANELINT" split $D/dilated_conv__nn_ios13.mlmodel --at segments --pipeline "$T/r/p.mlmodel"
refused "unknown op" 2 "$ANELINT" split $D/gru__mlp_fp16.mlpackage --at x --pipeline "$T/r/p.mlpackage"
refused1 "-o is the input" 2 "$ANELINT" split $D/gru__nn_ios14.mlmodel --at while_loop_0 -o "$T/r/a.mlmodel" -o $D/gru__nn_ios14.mlmodel
refused1 "-o twice" 2 "$ANELINT" split $D/gru__nn_ios14.mlmodel --at while_loop_0 -o "$T/r/a.mlmodel" -o "$T/r/a.mlmodel"
refused "-o count" 2 "$ANELINT" split $D/gru__nn_ios14.mlmodel --at while_loop_0 -o "$T/r/a.mlmodel"
refused "no --at" 2 "$ANELINT" split $D/gru__nn_ios14.mlmodel -o "$T/r/a.mlmodel" -o "$T/r/b.mlmodel"
refused "no output" 2 "$ANELINT" split $D/gru__nn_ios14.mlmodel --at while_loop_0
refused "unreadable directory" 4 "$ANELINT" split $D/gru__nn_ios14.mlmodel --at while_loop_0 -o "$T/r/a.mlmodel" \
	-o "$T/r/missing/b.mlmodel"
refused "hostile input" 2 "$ANELINT" split $C/hostile_names.mlmodel --at x --pipeline "$T/r/p.mlmodel"
[ -e $D/gru__nn_ios14.mlmodel ] && ok || bad "the input was removed"

# 7. corpus: every model cut at its middle top-level layer / op: either a
#    refusal with one line (exit 3) or a proved (or unprovable) split that re-loads
if [ -d "$CORPUS/converted" ]; then
	for m in "$CORPUS"/converted/*.mlmodel "$CORPUS"/converted/*.mlpackage; do
		[ -e "$m" ] || continue
		b=$(basename "$m")
		x="$T/x.mlmodel"
		case $m in *.mlpackage) x="$T/x.mlpackage" ;; esac
		mid=$("$ANELINT" check --format json "$m" 2>/dev/null | python3 -c '
import json,sys
L=[l for l in json.load(sys.stdin)["models"][0]["layers"]
   if l["depth"]==0 and l["type"] != "const" and not l["type"].startswith("constexpr")]
print(L[len(L)//2]["name"] if len(L)>1 else "")' 2>/dev/null)
		[ -n "$mid" ] || continue
		rm -rf "$x"
		"$ANELINT" split "$m" --at "$mid" --pipeline "$x" >"$T/x.txt" 2>"$T/x.err"
		rc=$?
		if [ $rc -eq 3 ] || [ $rc -eq 2 ]; then # 2: the middle one is the last layer
			[ "$(wc -l <"$T/x.err")" -eq 1 ] && [ ! -e "$x" ] && ok || bad "$b: refusal not one line"
			continue
		fi
		if [ $rc -ne 0 ] || grep -q DIFFERS "$T/x.txt"; then bad "$b: split at $mid (rc $rc)"; cat "$T/x.txt" "$T/x.err"; continue; fi
		"$ANELINT" check "$x" >/dev/null 2>&1
		[ $? -le 1 ] && ok || bad "$b: the pipeline does not re-load"
		if grep -q 'not run' "$T/x.txt"; then ok; else
			"$ANELINT" verify "$m" "$x" --random --tol 0 >/dev/null 2>&1 && ok || bad "$b: verify fails"
		fi
	done
else
	skip=$((skip + 1))
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
