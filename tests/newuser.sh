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
[ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
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

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
