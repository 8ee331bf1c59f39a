#!/bin/sh
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
assert d["schema"]==2 and d["outputs"][0]["max_abs"] is None and d["outputs"][0]["nan"]>0, d["outputs"]
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

# fix --help: fix rewrites ML Programs too; --seed is explained for fix
run "$ANELINT" fix --help
! grep -q 'rewrite a NeuralNetwork model' "$T/out" && grep -q 'ML Program' "$T/out" &&
	grep -q -- '--seed N .*fix and split' "$T/out" && ok || bad "fix --help"

# split --at a layer that does not exist: a usage error (2), not an invalid model (3)
run "$ANELINT" split $D/gru__nn_ios14.mlmodel --at nope -o "$T/a.mlmodel" -o "$T/b.mlmodel"
[ $rc -eq 2 ] && [ ! -e "$T/a.mlmodel" ] && ok || bad "split --at unknown: exit $rc"

# a directory that is not a package: invalid input (3), not an I/O error (4)
mkdir "$T/notpkg"
run "$ANELINT" check "$T/notpkg"
[ $rc -eq 3 ] && grep -q 'not a model package' "$T/err" && ok || bad "non-package directory: exit $rc"

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
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"]==2' "$T/j.json" 2>/dev/null &&
		ok || bad "no schema in the JSON of: $args"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
