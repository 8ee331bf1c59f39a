#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/newuser.sh: what a new user met (issue #29 items 4 and 6): a prediction for a
# release that cannot load the model says so and --os all leaves those columns out;
# split --at takes the index check shows; a missing baseline says how to make one;
# the usage, man page and completions cover probe, .mlmodelc and option values.
set -u
: "${ANELINT:=build/anelint}"
D=tests/data/converted
SPEC8=$D/dilated_conv__mlp_ios17_fp16.mlpackage # specificationVersion 8: iOS 17 and newer
SPEC4=$D/dilated_conv__nn_ios13.mlmodel
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
# expect NAME COMMAND...: exit code in $rc, stdout in $T/out, stderr in $T/err
run() { "$@" >"$T/out" 2>"$T/err"; rc=$?; }

# 4. a release below the model's minimum: one line, and the columns left out
run "$ANELINT" check --os ios14 "$SPEC8"
[ $rc -le 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
	grep -q 'specificationVersion 8 needs iOS 17 or newer: Core ML on ios14 cannot load it (predicted anyway)' "$T/err" &&
	grep -q 'predicted for a14 (A14 / M1 (H13)), iOS 14' "$T/out" && ok || bad "check --os ios14 on spec 8: $(cat "$T/err")"
run "$ANELINT" check --os all "$SPEC8"
[ $rc -eq 1 ] && grep -q 'Core ML on ios13..ios16 cannot load it (left out)' "$T/err" &&
	grep -Eq 'type +ios17 ios18 ios26 ios27  rules' "$T/out" && ! grep -q 'ios16' "$T/out" &&
	ok || bad "check --os all on spec 8 keeps columns it cannot load on: $(head -3 "$T/out")"
run "$ANELINT" check --os all --format json "$SPEC8"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["prediction"]["os"] == "ios17,ios18,ios26,ios27", j["prediction"]; assert [r["id"] for r in j["releases"]] == ["ios17","ios18","ios26","ios27"]' "$T/out" 2>"$T/py" &&
	ok || bad "check --os all --format json on spec 8: $(cat "$T/py")"
run "$ANELINT" plan --os all "$SPEC8"
grep -q '(left out)' "$T/err" && ! grep -q 'ios16' "$T/out" && grep -q 'ios17' "$T/out" && ok || bad "plan --os all on spec 8"
run "$ANELINT" check --os ios16,ios17 "$SPEC8" # one column left: a plain prediction for it
grep -q 'ios16 cannot load it (left out)' "$T/err" && grep -q 'predicted for a14 (A14 / M1 (H13)), iOS 17' "$T/out" &&
	ok || bad "check --os ios16,ios17 on spec 8: $(tail -1 "$T/out")"
run "$ANELINT" check --os all "$SPEC8" "$SPEC4" # a spec-4 model loads on ios13: every column stays
grep -q 'ios13..ios16 cannot load it (predicted anyway)' "$T/err" && [ "$(grep -c 'ios13 ios14 ios15 ios16' "$T/out")" -eq 2 ] &&
	ok || bad "check --os all on spec 8 and spec 4"
run "$ANELINT" check --os all "$SPEC4"
[ ! -s "$T/err" ] && grep -q 'ios13 ios14' "$T/out" && ok || bad "check --os all on spec 4 says something: $(cat "$T/err")"

# 6. split --at INDEX (what check shows) cuts where --at NAME does
run "$ANELINT" split "$SPEC4" --at 1 -o "$T/a1.mlmodel" -o "$T/a2.mlmodel"
r1=$rc
run "$ANELINT" split "$SPEC4" --at input.3 -o "$T/b1.mlmodel" -o "$T/b2.mlmodel"
[ $r1 -eq 0 ] && [ $rc -eq 0 ] && cmp -s "$T/a1.mlmodel" "$T/b1.mlmodel" && cmp -s "$T/a2.mlmodel" "$T/b2.mlmodel" &&
	ok || bad "split --at 1 differs from --at input.3 (exit $r1)"
run "$ANELINT" split "$SPEC4" --at 4 -o "$T/c1.mlmodel" -o "$T/c2.mlmodel" # the last layer
[ $rc -eq 2 ] && grep -q "cannot cut after 'var_42'" "$T/err" && ok || bad "split --at 4 (the last): $rc $(cat "$T/err")"
run "$ANELINT" split "$SPEC4" --at 77 -o "$T/c1.mlmodel" -o "$T/c2.mlmodel"
[ $rc -eq 2 ] && grep -q "named '77'" "$T/err" && ok || bad "split --at 77: $rc"

# 6. a missing baseline says how to make one
run "$ANELINT" check --baseline "$T/none.json" "$SPEC4"
[ $rc -eq 4 ] && grep -q -- '--write-baseline FILE' "$T/err" && ok || bad "a missing baseline: $(cat "$T/err")"

# 6. fix --shape on a model above the whole-proof bound (4.3 GFLOP) changes only the description:
#    the structural proof, nothing run (the whole models ran before: 2.7 s here, minutes at 504 GFLOP)
run "$ANELINT" fix tests/data/crafted/fix_shape_big.mlmodel --shape x=default -o "$T/big.mlmodel" --format json
[ $rc -eq 0 ] && [ -s "$T/big.mlmodel" ] &&
	python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["proof"]; assert p["kind"] == "structural" and p["runs"] == 0 and p["pass"], p; assert "above 2" in p["why"] and "byte-identical" in p["why"], p["why"]' "$T/out" 2>"$T/py" &&
	ok || bad "fix --shape on 4.3 GFLOP: not structural ($rc): $(cat "$T/py")"
run "$ANELINT" fix tests/data/crafted/fix_shape.mlmodel --shape x=default --dry-run --format json # 0.27 GFLOP: whole
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["proof"]; assert p["kind"] == "whole" and p["runs"] >= 1, p' "$T/out" 2>"$T/py" &&
	ok || bad "fix --shape under the bound is no longer proved on the whole models: $(cat "$T/py")"

# 7. where an op came from, as far as the file says: the weight constant an ML Program op
#    reads (coremltools names it after the PyTorch parameter); none for NeuralNetwork layers
run "$ANELINT" check --all "$SPEC8"
grep -q '^    7  input_1_cast_fp16 .*  \[weights c1_weight_to_fp16\]$' "$T/out" &&
	grep '^    8  input_3_cast_fp16 .*(op alone: ANE)' "$T/out" | grep -qv weights && ok || bad "check: no [weights] on the conv row"
run "$ANELINT" check --all "$SPEC4"
! grep -q '\[weights' "$T/out" && ok || bad "a NeuralNetwork layer names weights"
run "$ANELINT" check --all --format json tests/data/modern/convnet_pal4_tensor_ios17.mlpackage
python3 -c 'import json,sys; L=json.load(open(sys.argv[1]))["models"][0]["layers"]; w=[l["weights"] for l in L if "weights" in l]; assert "c2_weight_to_fp16_palettized" in w, w; assert all(l["type"] in ("conv", "linear", "matmul") for l in L if "weights" in l)' "$T/out" 2>"$T/py" &&
	ok || bad "JSON weights of a palettized model: $(cat "$T/py")"

#    ... and in every report format: HTML (under the name), Markdown, SARIF, GitHub
"$ANELINT" report "$SPEC8" -o "$T/r.html" 2>/dev/null
grep -q '<span class="in">weights c1_weight_to_fp16</span>' "$T/r.html" && ok || bad "HTML: no weights under the name"
run "$ANELINT" report --format markdown tests/data/modern/mlp_int4_block32_ios18.mlpackage
grep -q '^| 2 | linear_0_cast_fp16 (weights fcs_0_weight_to_fp16_quantized) | linear |' "$T/out" &&
	ok || bad "Markdown: no weights after the name"
run "$ANELINT" report --format sarif "$SPEC8"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); w=[l.get("properties",{}).get("weights") for r in j["runs"][0]["results"] for loc in r.get("locations",[]) for l in loc.get("logicalLocations",[])]; assert "c1_weight_to_fp16" in w, w' "$T/out" 2>"$T/py" &&
	ok || bad "SARIF: no weights property: $(cat "$T/py")"
run "$ANELINT" check --format github "$SPEC8"
grep -q "op 'input_1_cast_fp16' (conv, weights c1_weight_to_fp16): " "$T/out" && ok || bad "GitHub: no weights"

# 6. the README's usage names every command (probe was missing); the man page names .mlmodelc
for cmd in $("$ANELINT" --help 2>&1 | sed -n 's/^  anelint \([a-z0-9]*\) .*/\1/p'); do
	sed -n '/^## Usage/,/^`MODEL`/p' README.md | grep -q "^    anelint $cmd " && ok || bad "README's usage lacks anelint $cmd"
done
"$ANELINT" --help-man >"$T/man"
grep -q 'compiled .mlmodelc directory' "$T/man" && grep -q '^probe \\-o DIR' "$T/man" && ok || bad "man page: .mlmodelc or probe"

# 6. completions offer option values (targets, releases, formats...), and the commands take each
"$ANELINT" --completion bash >"$T/bash"
got=$(bash -c '. "$1"; COMP_WORDS=(anelint check --target a1); COMP_CWORD=3; _anelint; echo "${COMPREPLY[*]}"' sh "$T/bash")
[ "$got" = "a12 a14 a15 a16 a17 a18" ] && ok || bad "bash completion of check --target a1: '$got'"
got=$(bash -c '. "$1"; COMP_WORDS=(anelint info -f ""); COMP_CWORD=3; _anelint; echo "${COMPREPLY[*]}"' sh "$T/bash")
[ "$got" = "text json mil" ] && ok || bad "bash completion of info -f: '$got'"
got=$(bash -c '. "$1"; COMP_WORDS=(anelint fix --os ""); COMP_CWORD=3; _anelint; echo "${COMPREPLY[*]}"' sh "$T/bash")
[ "$got" = "ios13 ios14 ios15 ios16 ios17 ios18 ios26 ios27" ] && ok || bad "bash completion of fix --os: '$got'"
n=0 refused=
for opt in format target os compute-units fail-on color; do
	for v in $(sed -n "s/^	check:--$opt[|)].*compgen -W '\([^']*\)'.*/\1/p" "$T/bash"); do
		n=$((n + 1))
		"$ANELINT" check --$opt "$v" "$SPEC4" >/dev/null 2>&1
		[ $? -eq 2 ] && refused="$refused --$opt $v"
	done
done
for v in $(sed -n "s/^	plan:--policy).*compgen -W '\([^']*\)'.*/\1/p" "$T/bash"); do
	n=$((n + 1))
	"$ANELINT" plan --policy "$v" "$SPEC4" >/dev/null 2>&1
	[ $? -eq 2 ] && refused="$refused --policy $v"
done
[ $n -ge 35 ] && [ -z "$refused" ] && ok || bad "completion values check/plan refuse ($n tried):$refused"
if command -v zsh >/dev/null 2>&1; then
	"$ANELINT" --completion zsh >"$T/zsh"
	zsh -n "$T/zsh" && grep -q "'--os\[.*:RELEASE:(all ios13 ios14" "$T/zsh" && ok || bad "zsh completion of --os values"
fi
if command -v fish >/dev/null 2>&1; then
	"$ANELINT" --completion fish >"$T/fish"
	got=$(fish -c "source $T/fish; complete -C 'anelint check --compute-units cpu-and-'" 2>&1 | tr '\n' ' ')
	[ "$got" = "cpu-and-gpu cpu-and-ne " ] && ok || bad "fish completion of --compute-units: '$got'"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
