#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/compiled.sh: compiled models (.mlmodelc) through the CLI: check, info,
# plan and report load every fixture of tests/data/compiled (and, when present,
# every model of ../shared/corpus/compiled) without an error; every espresso
# layer and every model.mil op is listed by name (tests/compiled_names.py); the
# ML Programs with weights run in the interpreter; a package and its compiled
# form (tools/mkcompiled.py over `info --format mil`) verify bit-identical;
# `info` names the compiler; `info --format mil` reads back.
set -u
: "${ANELINT:=build/anelint}"
pass=0 fail=0 skip=0
T=$(mktemp -d "${TMPDIR:-/tmp}/anelint-compiled.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
corpus=${ANELINT_CORPUS:-../shared/corpus}

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }

# loads MODEL: check/info/plan/report exit 0 or 1 with no error line
loads() {
	m=$1
	for cmd in check info plan report; do
		if [ "$cmd" = report ]; then
			"$ANELINT" report "$m" -o "$T/r.html" >"$T/out" 2>"$T/err"
		else
			"$ANELINT" "$cmd" "$m" >"$T/out" 2>"$T/err"
		fi
		rc=$?
		if [ "$rc" -le 1 ] && ! grep -q '^anelint: error' "$T/err"; then ok; else
			bad "$cmd $m: exit $rc: $(head -c 200 "$T/err")"
		fi
	done
	"$ANELINT" check --consts --format json "$m" >"$T/c.json" 2>/dev/null
	if n=$(python3 tests/compiled_names.py "$m" "$T/c.json"); then ok; else bad "names of $m: $n"; fi
	if [ -f "$m/weights/weight.bin" ]; then
		if "$ANELINT" run --random "$m" >"$T/out" 2>"$T/err"; then ok; else
			bad "run $m: $(head -c 200 "$T/err")"
		fi
		if "$ANELINT" fp16 --random "$m" >"$T/out" 2>"$T/err"; then ok; else
			bad "fp16 $m: $(head -c 200 "$T/err")"
		fi
	fi
}

for m in tests/data/compiled/*.mlmodelc; do loads "$m"; done
if [ -d "$corpus/compiled" ]; then
	count=0
	for m in "$corpus"/compiled/*.mlmodelc; do loads "$m"; count=$((count + 1)); done
	[ "$count" -ge 14 ] && ok || bad "corpus: $count compiled models, expected 14"
else
	skip=$((skip + 1))
fi

# info: the compiler of an ML Program, the missing metadata of an old espresso build
"$ANELINT" info tests/data/compiled/silero_vad_palette_4bit.mlmodelc >"$T/out" 2>&1
grep -q 'compiled.compiler: coremlc 3500.32.1 (MIL 3500.14.1)' "$T/out" && ok || bad "info: no compiler line"
grep -q 'compiled.metadata: metadata.json version 3.0, MLModelType_mlProgram' "$T/out" && ok || bad "info: no metadata line"
"$ANELINT" check tests/data/compiled/crafted_espresso.mlmodelc >"$T/out" 2>&1
grep -q "fused activation" "$T/out" && grep -q "espresso layer type 'elementwise(operation 25)'" "$T/out" && ok ||
	bad "check of an espresso model does not say what the compiled form lacks"

# ANE057: a layer of no known kind has an unknown unit, the same in check
# (text, json), plan (text, json) and report (markdown); ANE040 switched off so
# that the layers keep their own verdicts (the copied description has a shape range)
E=tests/data/compiled/crafted_espresso.mlmodelc
printf 'id: ANE040\nfamilies: none\nprovenance: compiled.sh\n' >"$T/off.rules"
"$ANELINT" check --rules "$T/off.rules" "$E" >"$T/out" 2>&1
grep -q '^    3  clip1  *espresso.elementwise(~  ?  *\[G\]  *ANE057 espresso type elementwise(operation 25)' "$T/out" &&
	grep -q '^summary: 6 layers, 4 on the ANE (66.7%), 1 unit unknown (ANE057), 1 fall back: gpu 1$' "$T/out" &&
	ok || bad "check: the espresso layer of no known kind is not shown with an unknown unit"
"$ANELINT" check -f json --rules "$T/off.rules" "$E" >"$T/out" 2>&1
python3 - "$T/out" <<'PY' && ok || bad "check --format json: unit of clip1 not unknown"
import json, sys
m = json.load(open(sys.argv[1]))["models"][0]
units = {l["name"]: (l["unit"], l["op_unit"], l["ane"], l.get("unknown", False)) for l in m["layers"]}
assert units["clip1"] == ("unknown", "unknown", None, True), units["clip1"]  # uncertain (issue #30): ane null
assert [l["verdict"] for l in m["layers"] if l["name"] == "clip1"] == ["uncertain"]
assert units["relu1"] == ("ane", "ane", True, False), units["relu1"]
assert m["summary"]["units"]["unknown"] == 1 and m["summary"]["units"]["ane"] == 4, m["summary"]
assert m["summary"]["ane_eligible"] == 4, m["summary"]
PY
"$ANELINT" plan --rules "$T/off.rules" "$E" >"$T/out" 2>&1
grep -q '^  bar      AAA?AG$' "$T/out" && grep -q '? unit unknown (ANE057' "$T/out" && ok ||
	bad "plan: the bar does not mark the unknown unit"
"$ANELINT" plan -f json --rules "$T/off.rules" "$E" >"$T/out" 2>&1
python3 - "$T/out" <<'PY' && ok || bad "plan --format json: unit of clip1 not unknown"
import json, sys
d = json.load(open(sys.argv[1]))
p = d["models"][0]["plans"][0] if "plans" in d["models"][0] else d["models"][0]
assert p["bar"] == "AAA?AG", p["bar"]
l = [x for x in p["layers"] if x["name"] == "clip1"][0]
assert l["unit"] == "unknown" and l["verdict"] == "unknown", l
PY
"$ANELINT" report -f markdown --rules "$T/off.rules" "$E" -o "$T/r.md" >"$T/out" 2>&1
grep -q '^| 3 | clip1 | espresso.*| unknown | \*\*ANE057\*\* ' "$T/r.md" && ok || bad "report: clip1 not listed with an unknown unit"

# model.espresso.shape: check --shapes shows the compiler's shapes, not only
# what the declared input gives (the copy's input says [1..inf,128,128,1]); a
# copy whose .shape says otherwise shows that (an entry without _rank is rank 5
# [seq,n,k,h,w] where nothing is inferred), and without the file the
# inferred shapes come back
mkdir "$T/c" && cp -R "$E" "$T/c/e.mlmodelc"
"$ANELINT" check --all --shapes --rules "$T/off.rules" "$T/c/e.mlmodelc" >"$T/out" 2>&1
grep -q '^    0  conv1 .* \[1\*,16,128,128\] ' "$T/out" && grep -q '^    4  fc1 .* \[1,8,1,1\] ' "$T/out" &&
	ok || bad "check --shapes: the shapes of model.espresso.shape are not shown"
python3 - "$T/c/e.mlmodelc/model.espresso.shape" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["layer_shapes"]["f1"] = {"n": 1, "k": 24, "h": 1, "w": 1, "_rank": 4}
d["layer_shapes"]["e1"] = {"seq": 1, "n": 1, "k": 16, "h": 32, "w": 32}
json.dump(d, open(sys.argv[1], "w"))
PY
"$ANELINT" check --all --shapes --rules "$T/off.rules" "$T/c/e.mlmodelc" >"$T/out" 2>&1
grep -q '^    3  clip1 .* \[1,1,16,32,32\] ' "$T/out" && grep -q '^    4  fc1 .* \[1,24,1,1\] ' "$T/out" &&
	ok || bad "check --shapes: an edited model.espresso.shape is not what is shown"
rm "$T/c/e.mlmodelc/model.espresso.shape"
"$ANELINT" check --all --shapes --rules "$T/off.rules" "$T/c/e.mlmodelc" >"$T/out" 2>&1
grep -q '^    0  conv1 .* \[1\*,16,128,1\] ' "$T/out" && grep -q '^    4  fc1 .* \[?\.\.\.\] ' "$T/out" &&
	ok || bad "check --shapes without model.espresso.shape: not the inferred shapes"

# an espresso NeuralNetwork has no weights in its layers: run refuses it with one line, exit 3
"$ANELINT" run --random tests/data/compiled/crafted_espresso.mlmodelc >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" -eq 3 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q 'runs compiled ML Programs only' "$T/err" && ok ||
	bad "run of an espresso model: exit $rc $(head -c 200 "$T/err")"

# a package and its compiled form agree bit for bit
for p in tests/data/converted/lstm__mlp_ios17_fp16.mlpackage tests/data/converted/transformer_encoder__mlp_ios17_fp16.mlpackage; do
	b=$(basename "$p" .mlpackage)
	"$ANELINT" info --format mil "$p" >"$T/$b.mil" &&
		python3 tools/mkcompiled.py "$p" "$T/$b.mil" "$T/$b.mlmodelc" &&
		"$ANELINT" verify --random --tol 0 "$p" "$T/$b.mlmodelc" >"$T/out" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] && grep -q PASS "$T/out" && ok || bad "verify $p against its compiled form: exit $rc $(tail -2 "$T/out")"
done

# info --format mil of a compiled model is its model.mil (indentation aside)
m=tests/data/compiled/fluidaudio_TokenDurationPrediction.mlmodelc
"$ANELINT" info --format mil "$m" | grep -v '^//' | tr -s ' \n' '  ' | sed 's/ *$//' >"$T/a"
tr -s ' \n' '  ' <"$m/model.mil" | sed 's/ *$//' >"$T/b"
cmp -s "$T/a" "$T/b" && ok || bad "info --format mil differs from model.mil"
# a model that is not an ML Program: a comment, exit 0
"$ANELINT" info --format mil tests/data/compiled/crafted_espresso.mlmodelc >"$T/out" 2>&1 &&
	grep -q '^// crafted_espresso.mlmodelc: neuralNetwork, not an ML Program' "$T/out" && ok ||
	bad "info --format mil of a NeuralNetwork"

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
