#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/fix_model.sh: the model-level fixes of `anelint fix` (docs/surgery.md
# "Model-level fixes"): --shape NAME=DIMS|default and --enumerate NAME=S1;S2 on
# inputs with a shape range (ANE040), NeuralNetwork and ML Program. Each applies on
# its crafted fixture (tools/mkfixtures.py fix_shape, fix_mil_shape): the model
# moves onto the ANE by check, the proof on the whole models is bit-identical,
# the output parses with protoc --decode_raw and re-loads; a shape the input does
# not accept is refused with the reason (exit 2, nothing written); --dry-run
# reports the same. Corpus parts (a converted encoder with a RangeDim) skip when
# ../shared/corpus is absent.
set -u
: "${ANELINT:=build/anelint}"
F=tests/data/crafted
CORPUS=${ANELINT_CORPUS:-../shared/corpus}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
json() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }
# the protobuf of a .mlmodel or a package's model
proto() { if [ -d "$1" ]; then cat "$1/Data/com.apple.CoreML/model.mlmodel"; else cat "$1"; fi; }
decodes() { ! command -v protoc >/dev/null 2>&1 || proto "$1" | protoc --decode_raw >/dev/null 2>&1; }

# applied IN OUT PASS ARGS...: fix applies PASS, the proof is whole and bit-identical,
# the output is written, parses, re-loads, and check puts every layer on the ANE
applied() {
	in=$1 out=$2 pass_name=$3
	shift 3
	rm -rf "$out"
	"$ANELINT" fix "$in" -o "$out" --format json "$@" >"$T/a.json" 2>"$T/a.err"
	rc=$?
	why=""
	[ $rc -eq 0 ] || why="$why exit $rc;"
	[ "$(json "$T/a.json" '[r["applied"] for r in j["rewrites"] if r["pass"] == "'"$pass_name"'"] == [True]')" = True ] ||
		why="$why $pass_name not applied;"
	[ "$(json "$T/a.json" 'j["proof"]["kind"] == "whole" and j["proof"]["pass"] and all(o["identical"] for o in j["proof"]["outputs"])')" = True ] ||
		why="$why proof;"
	[ -e "$out" ] || why="$why not written;"
	decodes "$out" || why="$why protoc --decode_raw fails;"
	"$ANELINT" check "$out" >"$T/a.check" 2>&1
	crc=$?
	# below ~200 MFLOP the tiny-model rule ANE071 keeps it on the CPU (SMALL=1)
	if [ "${SMALL:-0}" = 1 ]; then
		[ $crc -le 1 ] && grep -q 'model: ANE071' "$T/a.check" || why="$why check: not ANE071;"
	else
		[ $crc -eq 0 ] || why="$why check does not put it all on the ANE;"
	fi
	grep -q ANE040 "$T/a.check" && why="$why ANE040 still fires;"
	if [ -z "$why" ]; then ok; else bad "$in $*:$why"; cat "$T/a.json" "$T/a.err"; fi
}
# refused IN WHAT ARGS...: exit 2, nothing written, WHAT on stderr
refused() {
	in=$1 what=$2
	shift 2
	rm -rf "$T/r.out"
	"$ANELINT" fix "$in" -o "$T/r.out" "$@" >/dev/null 2>"$T/r.err"
	rc=$?
	if [ $rc -eq 2 ] && [ ! -e "$T/r.out" ] && grep -q -- "$what" "$T/r.err"; then ok; else
		bad "$in $* not refused with '$what' (rc $rc)"; cat "$T/r.err"; fi
}

# 1. before: ANE040 keeps both models off the ANE
for m in "$F/fix_shape.mlmodel" "$F/fix_mil_shape.mlpackage"; do
	"$ANELINT" check --os ios26 "$m" >"$T/c.txt" 2>&1 # inside ANE040's evidence (iOS 16, 26)
	if [ $? -eq 1 ] && grep -q 'model: ANE040' "$T/c.txt"; then ok; else bad "$m: ANE040 does not fire before"; fi
done

# 2. NeuralNetwork: --shape x=default, --shape x=1,16,256,128, --enumerate
applied "$F/fix_shape.mlmodel" "$T/s1.mlmodel" input-fixed-shape --shape x=default
"$ANELINT" info "$T/s1.mlmodel" | grep -q 'x: multiArray fp32 \[1, 16, 512, 512\]$' && ok || { bad "info: x not 1x16x512x512"; "$ANELINT" info "$T/s1.mlmodel"; }
SMALL=1 applied "$F/fix_shape.mlmodel" "$T/s2.mlmodel" input-fixed-shape --shape x=1,16,256,128
applied "$F/fix_shape.mlmodel" "$T/s3.mlmodel" input-enumerated-shapes --enumerate 'x=1,16,512,512;1,16,256,256;1,16,64,128'
SMALL=1 applied "$F/fix_shape.mlmodel" "$T/s4.mlmodel" input-enumerated-shapes --enumerate 'x=1,16,256,256;1,16,512,512;1,16,64,128'
# the layers are the input's, byte for byte: only the description changed
if command -v protoc >/dev/null 2>&1; then
	protoc --decode_raw <"$F/fix_shape.mlmodel" | sed -n '/^500 {/,$p' >"$T/l0"
	protoc --decode_raw <"$T/s3.mlmodel" | sed -n '/^500 {/,$p' >"$T/l1"
	cmp -s "$T/l0" "$T/l1" && ok || bad "fix_shape: the layers changed"
	protoc --decode_raw <"$T/s3.mlmodel" | grep -c '^ *21 {' | grep -q '^1$' && ok || bad "fix_shape: no enumeratedShapes field"
fi
# refusals, with the reason; --dry-run reports the same
refused "$F/fix_shape.mlmodel" "axis 2 is outside the input's range 64..512" --shape x=1,16,1024,64
refused "$F/fix_shape.mlmodel" "3 dimensions given, input 'x' has rank 4" --shape x=1,16,64
refused "$F/fix_shape.mlmodel" "the model has no input 'q'" --shape q=1,2
refused "$F/fix_shape.mlmodel" "not D1,D2" --shape x=1,a
refused "$F/fix_shape.mlmodel" "shape 2 is given twice" --enumerate 'x=1,16,64,64;1,16,64,64'
refused "$F/fix_subb.mlmodel" "has one fixed shape already" --shape a=1,8,4,4
refused "$F/fix_shape.mlmodel" "given twice" --shape x=default --enumerate 'x=1,16,64,64'
"$ANELINT" fix "$F/fix_shape.mlmodel" --dry-run --shape x=1,16,1024,64 >/dev/null 2>"$T/d.err"
[ $? -eq 2 ] && grep -q "outside the input's range" "$T/d.err" && ok || bad "--dry-run refusal"
"$ANELINT" fix "$F/fix_shape.mlmodel" --dry-run --shape x=default --format json >"$T/d.json"
[ $? -eq 0 ] && [ "$(json "$T/d.json" 'j["proof"]["pass"] and j["written"] is False and j["rewrites"][0]["pass"] == "input-fixed-shape"')" = True ] &&
	ok || bad "--dry-run applies"

# 2b. a model the interpreter cannot run (a custom layer reads the input): the
#     shape fix changes no layer, so the proof is structural (byte-identical layers);
#     a layer rewrite in such a model still needs the region proof (fix_proof.sh)
"$ANELINT" fix "$F/fix_shape_custom.mlmodel" -o "$T/sc.mlmodel" --shape x=default --format json >"$T/sc.json"
rc=$?
if [ $rc -eq 0 ] && [ -s "$T/sc.mlmodel" ] &&
	[ "$(json "$T/sc.json" 'j["proof"]["kind"] == "structural" and j["proof"]["pass"] and "byte-identical" in j["proof"]["why"]')" = True ] &&
	decodes "$T/sc.mlmodel"; then ok; else bad "structural proof (rc $rc)"; cat "$T/sc.json"; fi
"$ANELINT" fix "$F/fix_shape_custom.mlmodel" --dry-run --shape x=default >"$T/sc.txt"
[ $? -eq 0 ] && grep -q '^proof: structural' "$T/sc.txt" && ok || bad "structural proof in text"
"$ANELINT" fix "$F/fix_shape_custom.mlmodel" --dry-run --shape x=default --proof whole >/dev/null
[ $? -eq 1 ] && ok || bad "structural proof with --proof whole: not refused"

# 2b'. two enumerated inputs (ANE041, crafted enum_two): check prints the fix that keeps
#     the first input's shapes and fixes the other's; that command removes ANE041
"$ANELINT" check "$F/enum_two.mlmodel" >"$T/e2.chk" 2>&1
grep -A1 '^model: ANE041 ' "$T/e2.chk" |
	grep -q '^       fix: anelint fix --shape b=default (exact: keeps the first enumerated input' &&
	! grep -q -- '--shape a=' "$T/e2.chk" && ok || { bad "enum_two: the ANE041 fix line"; cat "$T/e2.chk"; }
"$ANELINT" fix "$F/enum_two.mlmodel" --shape b=default -o "$T/e2.mlmodel" >"$T/e2.out" 2>&1 &&
	"$ANELINT" check "$T/e2.mlmodel" >"$T/e2b.chk" 2>&1
[ -f "$T/e2.mlmodel" ] && ! grep -q 'ANE041' "$T/e2b.chk" && ok ||
	{ bad "enum_two: fix --shape b=default leaves ANE041"; cat "$T/e2.out" "$T/e2b.chk"; }

# 2c. image inputs: an imageSizeRange (img) and enumeratedSizes (pic) become a fixed
#     width / height (shape H,W), or enumerated sizes; the layers stay byte for byte
I=$F/fix_shape_image.mlmodel
img_applied() {
	out=$1 want=$2
	shift 2
	rm -f "$out"
	"$ANELINT" fix "$I" -o "$out" --format json "$@" >"$T/i.json" 2>"$T/i.err"
	rc=$?
	why=""
	[ $rc -eq 0 ] || why="$why exit $rc;"
	[ "$(json "$T/i.json" 'j["proof"]["kind"] == "whole" and j["proof"]["pass"] and all(o["identical"] for o in j["proof"]["outputs"]) and all(r["applied"] for r in j["rewrites"])')" = True ] ||
		why="$why not applied / proof;"
	decodes "$out" || why="$why protoc --decode_raw fails;"
	"$ANELINT" info "$out" >"$T/i.info" 2>&1 || why="$why does not re-load;"
	grep -q "$want" "$T/i.info" || why="$why info lacks '$want';"
	if command -v protoc >/dev/null 2>&1; then
		protoc --decode_raw <"$out" | sed -n '/^500 {/,$p' >"$T/il1"
		protoc --decode_raw <"$I" | sed -n '/^500 {/,$p' >"$T/il0"
		cmp -s "$T/il0" "$T/il1" || why="$why the layers changed;"
	fi
	if [ -z "$why" ]; then ok; else bad "$I $*:$why"; cat "$T/i.json" "$T/i.err" "$T/i.info"; fi
}
img_applied "$T/i1.mlmodel" 'img: image RGB 512x512 (HxW)$' --shape img=default
"$ANELINT" check "$T/i1.mlmodel" >"$T/i1.check" 2>&1
! grep -q ANE040 "$T/i1.check" && grep -q "2 placed on the ANE" "$T/i1.check" && ok || { bad "img=default: still ANE040"; cat "$T/i1.check"; }
img_applied "$T/i2.mlmodel" 'pic: image RGB 64x128 (HxW)$' --shape pic=64,128
img_applied "$T/i3.mlmodel" 'img: image RGB 100x200 (HxW)$' --shape img=100,200 --shape pic=default
grep -q 'pic: image RGB 32x64 (HxW)$' "$T/i.info" && ok || bad "pic=default: $(cat "$T/i.info")"
img_applied "$T/i4.mlmodel" 'img: image RGB 256x128 (HxW), enumerated 2 shapes: \[256, 128\] \[64, 64\]' --enumerate 'img=256,128;64,64'
refused "$I" "axis 0 is outside the input's range 64..512" --shape img=600,100
refused "$I" "shape 50x50 is not one of the input's 2 enumerated shapes" --shape pic=50,50
refused "$I" "3 dimensions given, input 'img' has rank 2" --shape img=3,64,64
"$ANELINT" fix "$I" --dry-run --shape img=600,100 >/dev/null 2>"$T/d.err"
[ $? -eq 2 ] && grep -q "outside the input's range" "$T/d.err" && ok || bad "image --dry-run refusal"
"$ANELINT" fix "$I" --dry-run --shape img=default --format json >"$T/d.json"
[ $? -eq 0 ] && [ "$(json "$T/d.json" 'j["proof"]["pass"] and j["written"] is False and j["rewrites"][0]["after"] == "image input \x27img\x27 fixed to 512x512"')" = True ] &&
	ok || { bad "image --dry-run applies"; cat "$T/d.json"; }

# 2d. NeuralNetwork fp16 model I/O (nn-io-fp16, approximate, only with --allow
#     approximate): every fp32 multi-array input / output FLOAT16, spec 4 -> 7, the
#     layers byte for byte; images and an already fp16 model left; --dry-run the same
"$ANELINT" fix "$F/fix_subb.mlmodel" -o "$T/io.mlmodel" --allow approximate --format json >"$T/io.json" 2>"$T/io.err"
rc=$?
"$ANELINT" info "$T/io.mlmodel" >"$T/io.info" 2>&1
if [ $rc -eq 0 ] && [ "$(json "$T/io.json" '[r["after"] for r in j["rewrites"] if r["pass"] == "nn-io-fp16" and r["applied"]] == ["fp16 input \x27a\x27, input \x27b\x27, output \x27y\x27 (specificationVersion 7: iOS 16 / macOS 13)"]')" = True ] &&
	[ "$(json "$T/io.json" 'j["proof"]["kind"] == "whole" and j["proof"]["pass"] and not j["proof"]["outputs"][0]["identical"]')" = True ] &&
	grep -q 'spec 7 ' "$T/io.info" && grep -q 'a: multiArray fp16 \[1, 8, 4, 4\]' "$T/io.info" &&
	grep -q 'y: multiArray fp16' "$T/io.info" && decodes "$T/io.mlmodel"; then ok; else
	bad "nn-io-fp16 on fix_subb (rc $rc)"; cat "$T/io.json" "$T/io.err" "$T/io.info"; fi
"$ANELINT" fix "$F/fix_shape.mlmodel" -o "$T/io2.mlmodel" --allow approximate >"$T/io2.txt" 2>&1
"$ANELINT" info "$T/io2.mlmodel" >"$T/io2.info" 2>&1
if command -v protoc >/dev/null 2>&1; then
	protoc --decode_raw <"$F/fix_shape.mlmodel" | sed -n '/^500 {/,$p' >"$T/io2.l0"
	protoc --decode_raw <"$T/io2.mlmodel" | sed -n '/^500 {/,$p' >"$T/io2.l1"
	cmp -s "$T/io2.l0" "$T/io2.l1" && ok || bad "nn-io-fp16: the layers changed"
fi
grep -q 'x: multiArray fp16 \[1, 16, 512, 512\], range' "$T/io2.info" && grep -q 'spec 7 ' "$T/io2.info" && ok ||
	{ bad "nn-io-fp16 on fix_shape"; cat "$T/io2.txt" "$T/io2.info"; }
"$ANELINT" fix "$I" --dry-run --allow approximate --format json >"$T/io3.json"
[ $? -eq 0 ] && [ "$(json "$T/io3.json" '[r["after"] for r in j["rewrites"] if r["pass"] == "nn-io-fp16"] == ["fp16 output \x27y\x27, output \x27z\x27 (specificationVersion 7: iOS 16 / macOS 13)"] and j["written"] is False')" = True ] &&
	ok || { bad "nn-io-fp16 --dry-run on the image model (images left)"; cat "$T/io3.json"; }
"$ANELINT" fix "$F/fix_subb.mlmodel" --dry-run --format json >"$T/io4.json"
[ "$(json "$T/io4.json" '[r for r in j["rewrites"] if r["pass"] == "nn-io-fp16"] == []')" = True ] && ok ||
	bad "nn-io-fp16 without --allow approximate"
"$ANELINT" fix "$T/io.mlmodel" --dry-run --allow approximate --format json >"$T/io5.json"
[ "$(json "$T/io5.json" '[r for r in j["rewrites"] if r["pass"] == "nn-io-fp16"] == []')" = True ] && ok ||
	bad "nn-io-fp16 on an fp16-I/O model: not left out"

# 3. ML Program: the description and the function input get the fixed dims
applied "$F/fix_mil_shape.mlpackage" "$T/m1.mlpackage" input-fixed-shape --shape x=1,32,128,128
SMALL=1 applied "$F/fix_mil_shape.mlpackage" "$T/m2.mlpackage" input-fixed-shape --shape x=1,32,64,96
applied "$F/fix_mil_shape.mlpackage" "$T/m3.mlpackage" input-enumerated-shapes --enumerate 'x=1,32,128,128;1,32,64,64'
if command -v protoc >/dev/null 2>&1; then
	# function input x: 4 constant dimensions, no unknown one left on it
	n=$(proto "$T/m2.mlpackage" | protoc --decode_raw | sed -n '/^502 {/,$p' | grep -c '^ *1: 96$')
	[ "$n" -ge 1 ] && ok || bad "fix_mil_shape: the function input does not hold 96"
fi
refused "$F/fix_mil_shape.mlpackage" "axis 3 is outside the input's range 32..256" --shape x=1,32,64,512
# an ML Program image input: the description's width / height and the function
# input's last two axes ([1, 3, H, W]: the first two kept, constant)
MI=$F/fix_mil_image.mlpackage
rm -rf "$T/mi.mlpackage"
"$ANELINT" fix "$MI" -o "$T/mi.mlpackage" --shape img=64,96 --format json >"$T/mi.json" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ "$(json "$T/mi.json" 'j["proof"]["pass"] and all(o["identical"] for o in j["proof"]["outputs"])')" = True ] &&
	decodes "$T/mi.mlpackage" && "$ANELINT" info "$T/mi.mlpackage" | grep -q 'img: image RGB 64x96 (HxW)$'; then ok; else
	bad "fix_mil_image (rc $rc)"; cat "$T/mi.json"; fi
if command -v protoc >/dev/null 2>&1; then
	dims=$(proto "$T/mi.mlpackage" | protoc --decode_raw | sed -n '/^502 {/,$p' | sed -n '/1: "img"/,/2: "CoreML7"/p' | grep -E '^ +1: [0-9]+$' | awk '{print $2}' | head -5 | tr '\n' ' ')
	[ "$dims" = "11 1 3 64 96 " ] && ok || bad "fix_mil_image: function input dims '$dims'"
fi
"$ANELINT" check "$T/mi.mlpackage" 2>&1 | grep -q ANE040 && bad "fix_mil_image: ANE040 still fires" || ok
refused "$MI" "axis 1 is outside the input's range 32..256" --shape img=64,300

# 4. corpus: the converted encoder with a RangeDim input, --shape x=default: ANE040 goes
M=$CORPUS/modern/encoder_fp16_ios17_rangedim.mlpackage
if [ -d "$M" ]; then
	"$ANELINT" fix "$M" -o "$T/enc.mlpackage" --shape x=default --format json >"$T/e.json"
	rc=$?
	"$ANELINT" check "$T/enc.mlpackage" >"$T/e.check" 2>&1
	if [ $rc -eq 0 ] && ! grep -q ANE040 "$T/e.check" && decodes "$T/enc.mlpackage" &&
		[ "$(json "$T/e.json" 'j["proof"]["pass"]')" = True ]; then ok; else bad "encoder rangedim (rc $rc)"; cat "$T/e.json"; fi
else
	skip=$((skip + 1))
fi

# 5. corpus sweep (skips without ../shared/corpus): every NeuralNetwork model's
#    splitND / concatND fallbacks after `fix --allow reassociate` are the ones the
#    passes refuse with a reason (none is left unexamined), their count never
#    rises, and the ShuffleNet-style ones (channel splits, channel shuffles) and
#    the fused q/k/v splits are gone; every written output re-loads. The corpus
#    holds no ShuffleNet: the crafted fix_shuffle stands for it, swept here too.
sweep() {
	m=$1
	"$ANELINT" fix "$m" -o "$T/sw.mlmodel" --allow reassociate --format json >"$T/sw.json" 2>/dev/null
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then bad "$m: fix exit $rc"; return; fi
	"$ANELINT" check "$m" 2>/dev/null | grep -cE ' (splitND|concatND) +-> ' >"$T/b.n"
	if [ -e "$T/sw.mlmodel" ]; then
		"$ANELINT" check "$T/sw.mlmodel" >"$T/sw.check" 2>&1
		[ $? -le 1 ] || { bad "$m: the output does not re-load"; return; }
		grep -cE ' (splitND|concatND) +-> ' "$T/sw.check" >"$T/a.n"
	else
		cp "$T/b.n" "$T/a.n"
	fi
	[ "$(cat "$T/a.n")" -le "$(cat "$T/b.n")" ] || { bad "$m: more splitND/concatND fallbacks after"; return; }
	# every splitND / concatND left has its reason
	python3 - "$T/sw.json" <<'PY' || bad "$m: a splitND/concatND left without a reason"
import json, sys
j = json.load(open(sys.argv[1]))
for r in j.get("rewrites", []):
    if r["type"] in ("splitND", "concatND") and not r["applied"]:
        assert r.get("why_not"), r
PY
	ok
	echo "$m $(cat "$T/b.n") $(cat "$T/a.n")" >>"$T/sweep.txt"
	rm -f "$T/sw.mlmodel"
}
: >"$T/sweep.txt"
sweep "$F/fix_shuffle.mlmodel"
grep -q 'fix_shuffle.mlmodel 5 2$' "$T/sweep.txt" && ok || bad "fix_shuffle sweep: $(cat "$T/sweep.txt")"
if [ -d "$CORPUS/converted" ]; then
	for m in "$CORPUS"/converted/*.mlmodel "$CORPUS"/real/*.mlmodel; do
		[ -f "$m" ] && sweep "$m"
	done
	# every corpus model whose shape range moves it off the ANE (ANE040): --shape
	# NAME=default for each flexible input writes a model without ANE040, proved
	# (whole, or structural where the interpreter cannot run it)
	for m in "$CORPUS"/*/*.mlmodel "$CORPUS"/*/*.mlpackage; do
		"$ANELINT" check "$m" 2>/dev/null | grep -q 'model: ANE040' || continue
		args=$("$ANELINT" info --format json "$m" | python3 -c 'import json, sys
j = json.load(sys.stdin)
print(" ".join("--shape %s=default" % i["name"] for i in j["models"][0]["inputs"]
               if i.get("flexibility") in ("range", "enumerated")))')
		out="$T/flex.$(basename "$m" | sed 's/.*\.//')"
		rm -rf "$out"
		# shellcheck disable=SC2086
		"$ANELINT" fix "$m" -o "$out" $args --format json >"$T/flex.json" 2>&1
		rc=$?
		if [ $rc -eq 0 ] && [ -e "$out" ] && ! "$ANELINT" check "$out" 2>/dev/null | grep -q 'model: ANE040' &&
			[ "$(json "$T/flex.json" 'j["proof"]["pass"]')" = True ]; then ok; else
			bad "$m $args (rc $rc)"; head -c 600 "$T/flex.json"; fi
		rm -rf "$out"
	done
	# the transformer: its fused q/k/v splitND goes (4 -> 3 fallbacks by its own verdict)
	grep -q 'transformer_encoder__nn_ios13.mlmodel 1 0$' "$T/sweep.txt" && ok ||
		bad "transformer sweep: $(grep transformer "$T/sweep.txt")"
else
	skip=$((skip + 1))
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
