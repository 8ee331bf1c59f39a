#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/ci_cli.sh: what a user meets running anelint in CI (issue 19): each
# output that used to mislead, with its regression test. Fixtures from tests/data.
set -u
: "${ANELINT:=build/anelint}"
pass=0 fail=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
C=tests/data/crafted
D=tests/data/converted
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
# run CMD... into $T/out, $T/err; $rc
run() { "$@" >"$T/out" 2>"$T/err"; rc=$?; }

# fp16: an output that is NaN in fp16 (inf - inf) fails (exit 1) and says NaN,
# not "max abs 0"; --top N bounds the flag list too
run "$ANELINT" fp16 $C/fp16_nan.mlmodel --random
[ $rc -eq 1 ] && grep -q '^  y .*FAIL  max abs NaN: [0-9]* NaN values' "$T/out" && ! grep -q 'max abs 0' "$T/out" &&
	ok || { bad "fp16 NaN output: exit $rc"; cat "$T/out"; }
run "$ANELINT" fp16 $C/fp16_nan.mlmodel --random --top 1
n=$(sed -n '/^flags:/,$p' "$T/out" | grep -c '^  [0-9]')
[ $rc -eq 1 ] && [ "$n" -eq 1 ] && grep -q '^  \.\.\. 1 more' "$T/out" && ok || bad "fp16 --top 1 lists $n flags"
run "$ANELINT" fp16 $C/fp16_nan.mlmodel --random --top 1 --format json
python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
assert d["schema"]==3 and d["outputs"][0]["max_abs"] is None and d["outputs"][0]["nan"]>0, d["outputs"]
assert len(d["flags"])==1 and d["flags_not_listed"]==1' "$T/out" && ok || bad "fp16 JSON: NaN as null, flags bounded"

# --shapes shows the cost it promises: a FLOPs column (9.5M for a 3x3 conv, 16->16, 64x64)
run "$ANELINT" check --shapes $D/dilated_conv__nn_ios13.mlmodel
grep -q 'shape  *FLOPs  *unit' "$T/out" && grep -qE '^ +0 +input\.1 +convolution +\[1,16,64,64\] +9\.5M ' "$T/out" &&
	ok || { bad "--shapes has no FLOPs column"; head -3 "$T/out"; }

# full layer names: two names of 55 characters that differ at the end stay apart
run "$ANELINT" check $C/ci_model.mlmodel
grep -q ' encoder\.layers\.0\.attention\.output\.dense\.mul_broadcast_a ' "$T/out" &&
	grep -q ' encoder\.layers\.0\.attention\.output\.dense\.activation_b ' "$T/out" && ! grep -q '~' "$T/out" &&
	ok || bad "long layer names are cut"
run "$ANELINT" check --target all $C/ci_model.mlmodel
grep -q 'encoder\.layers\.0\.attention\.output\.dense\.mul_broadcast_a' "$T/out" && ok || bad "matrix cuts long names"
# a name over 60 columns is cut in the middle, keeping its start and its end, so
# the table stays aligned (issue 29): the type column starts where the header's does
run "$ANELINT" check $C/hostile_names.mlmodel
python3 - "$T/out" <<'PY' && ok || bad "a long name not cut in the middle, or the table not aligned"
import sys
lines = open(sys.argv[1], errors="replace").read().split("\n")
head = next(l for l in lines if l.lstrip().startswith("#  name"))
row = next(l for l in lines if l.startswith("    6  "))
assert "--> ]]> </style></script><!--~" in row and row.rstrip().split("~")[1].startswith("nglong"), row
assert row.index(" add ") + 1 == head.index("type"), (row, head)
PY

# fix --help: fix rewrites ML Programs too; --seed is explained for fix
run "$ANELINT" fix --help
! grep -q 'rewrite a NeuralNetwork model' "$T/out" && grep -q 'ML Program' "$T/out" &&
	grep -q -- '--seed N .*fix and split' "$T/out" && ok || bad "fix --help"

# split --at a layer that does not exist: a usage error (2), not an invalid model (3)
run "$ANELINT" split $D/gru__nn_ios14.mlmodel --at nope -o "$T/a.mlmodel" -o "$T/b.mlmodel"
[ $rc -eq 2 ] && [ ! -e "$T/a.mlmodel" ] && ok || bad "split --at unknown: exit $rc"

# a directory that is not a package: invalid input (3), not an I/O error (4); one
# named .mlpackage without a manifest, and one holding no model
mkdir "$T/notpkg" "$T/empty.mlpackage"
run "$ANELINT" check "$T/empty.mlpackage"
[ $rc -eq 3 ] && grep -q 'not a model package' "$T/err" && ok || bad "package without a manifest: exit $rc"
run "$ANELINT" check "$T/notpkg"
[ $rc -eq 3 ] && grep -q 'no model in this directory' "$T/err" && ok || bad "directory without models: exit $rc"

# -o with an extension no format writes: refused (2), nothing written
run "$ANELINT" report $D/gru__nn_ios14.mlmodel -o "$T/x.pdf"
[ $rc -eq 2 ] && [ ! -e "$T/x.pdf" ] && grep -q "no format writes '.pdf'" "$T/err" && ok || bad "-o x.pdf: exit $rc"
run "$ANELINT" report $D/gru__nn_ios14.mlmodel -o "$T/x.pdf" --format html
[ $rc -eq 1 ] && grep -q '<html' "$T/x.pdf" && ok || bad "-o x.pdf --format html: exit $rc"

# info shows a classifier's class labels
run "$ANELINT" info $C/nn_classifier.mlmodel
grep -q '^  class labels: 2 (cat, dog)$' "$T/out" && ok || bad "info: no class labels"
run "$ANELINT" info --format json $C/split_classifier_image.mlmodel
python3 -c '
import json,sys
m=json.load(open(sys.argv[1]))["models"][0]
assert m["class_labels"]==["red","green","blue"] and m["class_label_count"]==3, m.get("class_labels")' "$T/out" &&
	ok || bad "info JSON: class_labels"

# Markdown counts models, not (model, target) rows
run "$ANELINT" report --format markdown --target all $D/gru__nn_ios14.mlmodel
head -1 "$T/out" | grep -q '1 of 1 model falls back' && ok || { bad "markdown count"; head -1 "$T/out"; }

# every JSON document carries the schema version
for args in "run $D/gru__nn_ios14.mlmodel --random" "verify $D/gru__nn_ios14.mlmodel $D/gru__nn_ios14.mlmodel --random" \
	"fp16 $D/gru__nn_ios14.mlmodel --random" "fix $C/fix_subb.mlmodel --dry-run" \
	"split $D/gru__nn_ios14.mlmodel --at while_loop_0 --pipeline $T/p.mlmodel"; do
	# shellcheck disable=SC2086
	"$ANELINT" $args --format json >"$T/j.json" 2>/dev/null
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"]==3' "$T/j.json" 2>/dev/null &&
		ok || bad "no schema in the JSON of: $args"
done

# ---------------------------------------------------------------- CI: selection, suppressions
M=$C/ci_model.mlmodel
# --ignore / --select: the rules left out are not evaluated (the layer stays on the ANE)
run "$ANELINT" check $M --ignore ANE005
[ $rc -eq 0 ] && ! grep -q ANE005 "$T/out" && ok || bad "--ignore ANE005: exit $rc"
run "$ANELINT" check $M --select ANE07,nn-dilated-conv
[ $rc -eq 0 ] && ok || bad "--select without ANE005: exit $rc"
run "$ANELINT" check $M --select ane00 --ignore ANE006
[ $rc -eq 1 ] && grep -q 'ANE005' "$T/out" && ok || bad "--select prefix (any case): exit $rc"
# did you mean: options, commands, rule ids
run "$ANELINT" check $M --ignore ANE0005
[ $rc -eq 2 ] && grep -q "did you mean 'ANE005'" "$T/err" && ok || bad "--ignore unknown rule: exit $rc"
run "$ANELINT" check $M --ignroe ANE005
[ $rc -eq 2 ] && grep -q "did you mean '--ignore'" "$T/err" && ok || bad "mistyped option: exit $rc"
run "$ANELINT" chekc $M
[ $rc -eq 2 ] && grep -q "did you mean 'check'" "$T/err" && ok || bad "mistyped command: exit $rc"
run "$ANELINT" explain nn-broadcastible
[ $rc -eq 2 ] && grep -q "did you mean 'nn-broadcastable'" "$T/err" && ok || bad "explain: mistyped rule name"

# a suppression inside the model (com.anelint.ignore): shown as suppressed, passes
run "$ANELINT" check $C/ci_model_meta.mlmodel
[ $rc -eq 0 ] && grep -q 'ANE005 .*\[suppressed, metadata: broadcast measured' "$T/out" && ok ||
	bad "metadata suppression: exit $rc"
run "$ANELINT" check --format json $C/ci_model_meta.mlmodel
python3 -c '
import json,sys
L=json.load(open(sys.argv[1]))["models"][0]["layers"]
f=L[0]["findings"][0]
assert f["suppressed"]=={"kind":"metadata","reason":"broadcast measured on the GPU at 0.1 ms, accepted"}, f' "$T/out" &&
	ok || bad "JSON: suppressed finding"
python3 tests/validate_json.py docs/schema/check.schema.json "$T/out" && ok || bad "JSON with a suppressed finding: not valid against the schema"

# the configuration: found upward from the model; its errors are located, with hints
mkdir -p "$T/p/sub/models"
cp $M "$T/p/sub/models/m.mlmodel"
printf '[[suppress]]\nmodel = "sub/models/*.mlmodel"\nlayer = "*.mul_broadcast_?"\nrule = "nn-broadcastable"\nreason = "kept on the GPU"\n' >"$T/p/anelint.toml"
run "$ANELINT" check "$T/p/sub/models/m.mlmodel"
[ $rc -eq 0 ] && grep -q 'suppressed, config: kept on the GPU' "$T/out" && ok || bad "config suppression: exit $rc"
run "$ANELINT" check --no-config "$T/p/sub/models/m.mlmodel"
[ $rc -eq 1 ] && ok || bad "--no-config: exit $rc"
run "$ANELINT" check --config "$T/p/anelint.toml" $M
[ $rc -eq 1 ] && ok || bad "--config: a model the suppression does not name: exit $rc"
printf 'fail_on = "never"\n' >"$T/other.toml"
run "$ANELINT" check --config "$T/other.toml" $M
[ $rc -eq 0 ] && ok || bad "config fail_on: exit $rc"
run "$ANELINT" check --config "$T/other.toml" --fail-on any $M
[ $rc -eq 1 ] && ok || bad "the command line wins over the config: exit $rc"
cfgerr() { # WHAT TEXT PATTERN: the config is refused (2) with one located line
	printf "$2" >"$T/bad.toml"
	run "$ANELINT" check --config "$T/bad.toml" $M
	if [ $rc -eq 2 ] && grep -q "$3" "$T/err" && [ "$(wc -l <"$T/err")" -le 3 ]; then ok; else
		bad "config $1: exit $rc"
		cat "$T/err"
	fi
}
cfgerr "unknown key" 'fail-on = "cpu"\n' "bad.toml: line 1: unknown key 'fail-on' (did you mean 'fail_on'?)"
cfgerr "no reason" '[[suppress]]\nrule = "ANE005"\n' "line 2: \[\[suppress\]\] of ANE005 needs a reason"
cfgerr "unknown table" '[supress]\nrule = "x"\n' "did you mean 'suppress'"
cfgerr "bad value" 'target = a14\n' "line 1, column 10: 'a14' is not a value"
cfgerr "unterminated string" 'target = "a14\n' "line 1, column 14: the string does not end"
cfgerr "dotted key" 'a.b = 1\n' "dotted keys are not supported"
cfgerr "unknown rule" 'ignore = ["ANE99x"]\n' "no rule is named or starts with 'ANE99x'"
cfgerr "NUL byte" 'a = 1\000\n' "a NUL byte"

# a baseline that is not one: located, exit 3; a missing one: exit 4
printf '{"anelint_baseline": 1, "findings": [{"model": 1}]}' >"$T/b1.json"
run "$ANELINT" check --baseline "$T/b1.json" $M
[ $rc -eq 3 ] && grep -q 'findings\[0\]: expected an object' "$T/err" && ok || bad "bad baseline entry: exit $rc"
printf '{"anelint_baseline": 1, "findings": [' >"$T/b2.json"
run "$ANELINT" check --baseline "$T/b2.json" $M
[ $rc -eq 3 ] && grep -q 'JSON error at byte' "$T/err" && ok || bad "truncated baseline: exit $rc"
run "$ANELINT" check --baseline "$T/none.json" $M
[ $rc -eq 4 ] && ok || bad "missing baseline: exit $rc"
run "$ANELINT" check --baseline "$T/b1.json" --write-baseline "$T/b3.json" $M
[ $rc -eq 2 ] && ok || bad "--baseline with --write-baseline: exit $rc"

# directories are searched for models, in name order
mkdir -p "$T/d/a/b.mlpackage.not" "$T/d/z"
cp $M "$T/d/z/2.mlmodel"
cp $C/nn_tiny.mlmodel "$T/d/a/1.mlmodel"
cp -r $C/mil_tiny.mlpackage "$T/d/a/3.mlpackage"
run "$ANELINT" check --format json --no-config "$T/d"
python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
assert [m["path"] for m in d["models"]]==["1.mlmodel","3.mlpackage","2.mlmodel"], [m["path"] for m in d["models"]]' "$T/out" &&
	ok || bad "directory search"

# --format github: annotations, escaped; exit code as check
run "$ANELINT" check --format github $M
[ $rc -eq 1 ] && grep -q "^::error file=$M,line=1,title=anelint ANE005 nn-broadcastable%3A falls back to the GPU::layer 'encoder" "$T/out" &&
	grep -q '^::notice file=.*title=anelint summary::' "$T/out" && ok || { bad "--format github: exit $rc"; cat "$T/out"; }
run "$ANELINT" check --format github $C/hostile_names.mlmodel
! grep -v '^::' "$T/out" | grep -q . && ok || bad "--format github: a name broke a workflow command onto a line of its own"

# lists of targets and OS releases: the cross product, one verdict column each
# (TARGET/OS when both vary); --target all with --os all is refused, with lists offered
run "$ANELINT" check --target a17,m1 --os ios17,ios18 $M
[ $rc -eq 1 ] && grep -qE '^ +# +name +type +a17/ios17 a17/ios18 a14/ios17 a14/ios18  rules \(any column\)' "$T/out" &&
	grep -q 'on the ANE: a17/ios17 0, a17/ios18 0, a14/ios17 0, a14/ios18 0' "$T/out" &&
	ok || { bad "--target LIST --os LIST: exit $rc"; head -3 "$T/out"; }
run "$ANELINT" check --format json --target a17,m1 --os ios17,ios18 $M
python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
assert d["prediction"]["target"]=="a17,a14" and d["prediction"]["os"]=="ios17,ios18", d["prediction"]
assert [(c["id"],c["target"],c["os"]) for c in d["columns"]]==[("a17/ios17","a17","ios17"),("a17/ios18","a17","ios18"),("a14/ios17","a14","ios17"),("a14/ios18","a14","ios18")], d["columns"]
m=d["models"][0]; assert sorted(m["units_by_column"])==["a14/ios17","a14/ios18","a17/ios17","a17/ios18"]
assert m["layers"][0]["units"]["a17/ios18"]=="gpu"' "$T/out" && python3 tests/validate_json.py docs/schema/check.schema.json "$T/out" &&
	ok || bad "JSON of a cross product"
run "$ANELINT" check --target all --os all $M
[ $rc -eq 2 ] && grep -q 'would be 48 verdict columns.*--target a14,a17 --os ios17,ios18' "$T/err" && ok ||
	bad "--target all --os all: exit $rc"
run "$ANELINT" check --target a14,nope $M
[ $rc -eq 2 ] && grep -q "unknown target 'nope'" "$T/err" && ok || bad "--target a14,nope: exit $rc"
mkdir -p "$T/l"
cp $M "$T/l/m.mlmodel"
printf 'targets = ["a17", "m1"]\nos = "ios18"\n' >"$T/l/anelint.toml"
run "$ANELINT" check --format json "$T/l/m.mlmodel"
python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
assert [(c["id"],c["os"]) for c in d["targets"]]==[("a17","ios18"),("a14","ios18")], d["targets"]
assert sorted(d["models"][0]["units_by_target"])==["a14","a17"]' "$T/out" && ok || bad "config targets list with one os"
printf 'os = ["ios17", "ios18"]\n' >"$T/l/anelint.toml"
run "$ANELINT" check "$T/l/m.mlmodel"
grep -qE 'type +ios17 ios18  rules \(any release\)' "$T/out" && ok || bad "config os list"
run "$ANELINT" check --os ios26 "$T/l/m.mlmodel"
grep -q 'predicted for a14 (A14 / M1 (H13)), iOS 26' "$T/out" && ok || bad "the command line's --os wins over the config's list"

# [[model]]: a model's own target, os, compute units, policy, selection, baseline
mkdir -p "$T/pm/legacy"
cp $M "$T/pm/new.mlmodel"
cp $D/gru__nn_ios14.mlmodel "$T/pm/legacy/gru.mlmodel"
printf '[[model]]\npath = "legacy/*"\ntarget = "a17"\nos = "ios17"\ncompute_units = "cpu-only"\npolicy = "optimistic"\nignore = ["ANE007"]\n' >"$T/pm/anelint.toml"
run "$ANELINT" check --format json "$T/pm"
python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
gru,new=d["models"] # name order: legacy/ first
assert "prediction" not in new and gru["prediction"]=={"target":"a17","os":"ios17","compute_units":"cpu-only"}, gru.get("prediction")
rules=lambda m:{r for l in m["layers"] for r in l["rules"]}
assert "ANE007" not in rules(gru) and "ANE006" in rules(gru), rules(gru)' "$T/out" && python3 tests/validate_json.py docs/schema/check.schema.json "$T/out" &&
	ok || bad "[[model]] target, os, compute_units, ignore (JSON)"
run "$ANELINT" check "$T/pm"
[ "$(grep -c '^predicted for' "$T/out")" -eq 2 ] && grep -q '^predicted for a17 (A17 Pro / M4 (H16)), iOS 17, compute units cpu-only' "$T/out" &&
	ok || bad "[[model]]: text says what each model is predicted for"
run "$ANELINT" plan --format json "$T/pm"
python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
assert [m["policy"] for m in d["models"]]==["optimistic","nn2020"], [m["policy"] for m in d["models"]]' "$T/out" &&
	ok || bad "[[model]] policy"
run "$ANELINT" check --target a15 --format json "$T/pm"
python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
assert d["models"][0]["prediction"]["target"]=="a15", d["models"][0].get("prediction")' "$T/out" && ok ||
	bad "[[model]]: the command line --target wins"
printf '[[model]]\npath = "new.mlmodel"\nselect = ["ANE005"]\n' >"$T/pm/anelint.toml"
run "$ANELINT" check --format json "$T/pm"
python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
rules=lambda m:{r for l in m["layers"] for r in l["rules"]}
assert rules(d["models"][1])=={"ANE005"} and "ANE003" in rules(d["models"][0]), (rules(d["models"][0]), rules(d["models"][1]))' "$T/out" && ok || bad "[[model]] select"
run "$ANELINT" check --no-config --write-baseline "$T/pm/legacy/base.json" "$T/pm/legacy"
printf '[[model]]\npath = "legacy/*"\nbaseline = "legacy/base.json"\n' >"$T/pm/anelint.toml"
run "$ANELINT" check "$T/pm/legacy"
[ $rc -eq 0 ] && grep -q 'suppressed, baseline' "$T/out" && ok || bad "[[model]] baseline: exit $rc"
run "$ANELINT" check "$T/pm/new.mlmodel"
[ $rc -eq 1 ] && ok || bad "[[model]] baseline applies to another model: exit $rc"
cfgerr "targets: unknown id" 'targets = ["a17", "zz"]\n' "line 1: a list of targets holds ids ('anelint targets'), not 'zz'"
cfgerr "target and targets" 'target = "a17"\ntargets = ["m1"]\n' "line 2: 'targets' and 'target' name the same setting"
cfgerr "os: a number" 'os = ["ios17", 3]\n' "line 1: a list of OS releases holds ids"
cfgerr "os: unknown in a string" 'os = "ios17,bogus"\n' "line 1: 'ios17,bogus' is not a list of known OS releases"
cfgerr "empty targets" 'targets = []\n' "line 1: 'targets' takes a \"string\" or a list of them"
cfgerr "all in a list" 'targets = ["all"]\n' "not 'all'"
cfgerr "all with all" 'target = "all"\nos = "all"\n' "line 2: target \"all\" with os \"all\" would be too many"
cfgerr "compute_units" 'compute_units = "gpu"\n' "line 1: compute_units takes all, cpu-and-gpu"
cfgerr "policy" 'policy = "fast"\n' "line 1: policy takes auto"
cfgerr "fail_on" 'fail_on = "sometimes"\n' "line 1: fail_on takes any"
cfgerr "information_uri" 'information_uri = "not a uri"\n' "line 1: information_uri takes an absolute URI"
cfgerr "[[model]] target" '[[model]]\npath = "*"\ntarget = "q"\n' "line 3: 'q' is not a list of known targets"
cfgerr "[[model]] target list" '[[model]]\npath = "*"\ntarget = ["a17", "m1"]\n' "line 3: a \[\[model\]\] target or os is one id"
cfgerr "[[model]] target with top lists" 'targets = ["a17", "m1"]\n[[model]]\npath = "*"\nos = "ios17"\n' "line 4: a \[\[model\]\] target or os is one id"
cfgerr "[[model]] compute_units" '[[model]]\npath = "*"\ncompute_units = "x"\n' "line 3: compute_units takes"
cfgerr "[[model]] policy" '[[model]]\npath = "*"\npolicy = 1\n' "line 3: 'policy' takes a \"string\""
cfgerr "[[model]] select" '[[model]]\npath = "*"\n\nselect = ["NOPE9"]\n' "line 4: \[\[model\]\] select: no rule is named or starts with 'NOPE9'"
cfgerr "[[model]] ignore" '[[model]]\npath = "*"\nignore = 5\n' "line 3: 'ignore' takes a list of rule ids"
cfgerr "[[model]] key" '[[model]]\npath = "*"\nbaselin = "x"\n' "line 3: unknown key 'baselin' (did you mean 'baseline'?)"
cfgerr "[[model]] without path" 'fail_on = "any"\n[[model]]\ntarget = "a17"\n' "line 3: \[\[model\]\] needs a path"
printf '[[model]]\npath = "*"\nbaseline = "no-such.json"\n' >"$T/bad.toml"
run "$ANELINT" check --config "$T/bad.toml" $M
[ $rc -eq 4 ] && grep -q 'no-such.json: cannot open' "$T/err" && ok || bad "[[model]] baseline missing: exit $rc"

# SARIF informationUri: the configuration's, else none (the project has no home page)
run "$ANELINT" check --no-config --format sarif $M
! grep -q informationUri "$T/out" && ok || bad "SARIF: an informationUri nobody gave"
printf 'information_uri = "https://models.example.com/anelint-rules"\n' >"$T/uri.toml"
run "$ANELINT" check --config "$T/uri.toml" --format sarif $M
grep -q '"informationUri": "https://models.example.com/anelint-rules"' "$T/out" && ok || bad "SARIF: information_uri"

# --write-baseline into a directory that does not exist: one located error, exit 4,
# nothing written (and, under ASan, nothing leaked by the atomic writer's failed begin)
run "$ANELINT" check --no-config --write-baseline "$T/no/such/dir/base.json" $M
[ $rc -eq 4 ] && grep -q "base.json: cannot create a file beside it" "$T/err" && ! grep -q 'LeakSanitizer' "$T/err" &&
	[ ! -e "$T/no" ] && ok || bad "--write-baseline into a missing directory: exit $rc"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
