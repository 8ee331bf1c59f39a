#!/bin/sh
# SPDX-License-Identifier: MIT
# uncertain.sh: three verdicts with a probability (issue #30). A rule decides only where its
# evidence reaches (src/analysis/rule_scope.def) and a layer kind is ANE only where a report saw
# it there (src/analysis/kind_status.c); elsewhere the verdict is uncertain, never a silent
# default. On three small fixtures, by release:
#   - a range-shaped input (crafted/fix_shape.mlmodel, ANE040): off the ANE, confidently, on
#     iOS 16 and 26 (its reports), uncertain on iOS 18 and 27, the unit (the best guess) the same;
#   - a one-layer model (crafted/nn_tiny.mlmodel, the work floor ANE071): confident on iOS 18,
#     uncertain on iOS 17 and 27;
#   - a layer kind with no evidence (crafted/huge_input.mlmodel, an NN activation; the floor
#     ignored): uncertain with p_ane 0.5 on iOS 18, ANE on iOS 27 (Apple's 2026 rules);
# and the sinks: JSON (ane null, verdict, p_ane, uncertain; schema 3, valid against
# docs/schema/check.schema.json), text (`?` and the verdicts line), SARIF (an uncertain result
# is a note), plan (the uncertain layers that could change the segments), and --fail-on
# (uncertain never fails by default; --fail-on uncertain does).
#
#   ANELINT=build/anelint sh tests/uncertain.sh       (from the repo root)
# Prints "ok NAME" or "FAIL NAME: why" per case, then "N passed, M failed".
set -u
ANELINT=${ANELINT:-build/anelint}
D=tests/data/crafted
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }

# verdicts MODEL OS [check options]: "verdict/p_ane/ane/unit/uncertain" per layer, space-separated
verdicts() {
	m=$1 os=$2
	shift 2
	"$ANELINT" check --format json --fail-on never --os "$os" "$@" "$m" >"$T/j" 2>"$T/err" || return 1
	python3 tests/validate_json.py docs/schema/check.schema.json "$T/j" >/dev/null || {
		echo "invalid JSON against the schema"
		return 1
	}
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join("%s/%.2f/%s/%s/%s" % (l["verdict"], l["p_ane"], l["ane"], l["unit"], l.get("uncertain", "-").split(":")[0])
               for l in d["models"][0]["layers"]))' "$T/j"
}

expect() { # NAME GOT WANT
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi
}

# 1. a range-shaped input: ANE040's reports are macOS 13 and macOS 26
for os in ios16 ios26; do
	expect "range input $os: off the ANE, confident" "$(verdicts $D/fix_shape.mlmodel $os)" \
		"not_ane/0.10/False/cpu/- not_ane/0.10/False/cpu/-"
done
for os in ios18 ios27; do
	expect "range input $os: uncertain (ANE040 never observed there)" "$(verdicts $D/fix_shape.mlmodel $os)" \
		"uncertain/0.50/None/cpu/ANE040 uncertain/0.50/None/cpu/ANE040"
done

# 2. a one-layer model: the work floor's reports are macOS 15 and 26
expect "one layer ios18: off the ANE, confident" "$(verdicts $D/nn_tiny.mlmodel ios18)" "not_ane/0.10/False/cpu/-"
for os in ios17 ios27; do
	expect "one layer $os: uncertain (ANE071 never observed there)" "$(verdicts $D/nn_tiny.mlmodel $os)" \
		"uncertain/0.50/None/cpu/ANE071"
done

# a rules file is its author's evidence: an override of ANE071 decides where it is evaluated
printf 'id: ANE071\nprovenance: our own measurements on iOS 27\n' >"$T/r.rules"
expect "one layer ios27 with a rules file: decided" "$(verdicts $D/nn_tiny.mlmodel ios27 --rules "$T/r.rules")" \
	"not_ane/0.15/False/cpu/-"

# 3. a kind with no evidence: never ANE by default
expect "no-evidence kind ios18: uncertain, p_ane 0.5" \
	"$(verdicts $D/huge_input.mlmodel ios18 --ignore ANE071,ANE072)" "uncertain/0.50/None/ane/no report saw this layer kind on the ANE on this OS release"
expect "activation ios27: ANE (Apple's 2026 rules)" \
	"$(verdicts $D/huge_input.mlmodel ios27 --ignore ANE071,ANE072)" "ane/0.90/True/ane/-"
expect "innerProduct ios18: ANE (coremltools #1196)" \
	"$(verdicts $D/nn_tiny.mlmodel ios18 --ignore ANE071,ANE072)" "ane/0.90/True/ane/-"
expect "innerProduct ios13: uncertain (seen from iOS 14)" \
	"$(verdicts $D/nn_tiny.mlmodel ios13 --ignore ANE071,ANE072)" "uncertain/0.50/None/ane/no report saw this layer kind on the ANE on this OS release"

# 4. the summary
"$ANELINT" check --format json --fail-on never --os ios18 $D/fix_shape.mlmodel >"$T/j"
got=$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["models"][0]["summary"]
print(s["verdicts"], s["ane_share_range"])' "$T/j")
expect "JSON summary: verdicts and share range" "$got" "{'ane': 0, 'not_ane': 0, 'uncertain': 2} [0.0, 1.0]"
"$ANELINT" check --all --os ios18 $D/fix_shape.mlmodel >"$T/t"
if grep -q -- '-> cpu?\* ' "$T/t" && grep -q '^verdicts: 0 on the ANE, 0 off, 2 uncertain; ANE share 0.0%..100.0%$' "$T/t"; then
	ok "text: ? mark and the verdicts line"
else
	bad "text: ? mark and the verdicts line: $(cat "$T/t")"
fi

# 5. --fail-on: uncertain never fails by default
"$ANELINT" check --os ios18 $D/fix_shape.mlmodel >/dev/null
expect "exit: uncertain only, default --fail-on" "$?" 0
"$ANELINT" check --os ios18 --fail-on uncertain $D/fix_shape.mlmodel >/dev/null
expect "exit: uncertain only, --fail-on uncertain" "$?" 1
"$ANELINT" check --os ios16 $D/fix_shape.mlmodel >/dev/null
expect "exit: confident fallback, default --fail-on" "$?" 1
"$ANELINT" check --os ios18 --fail-on sometimes $D/fix_shape.mlmodel >/dev/null 2>&1
expect "exit: --fail-on sometimes is a usage error" "$?" 2

# 6. SARIF: an uncertain result is a note
# (iOS 13 on an A12, where ANE008's reports saw the pooling limit; ANE071 is outside its evidence)
"$ANELINT" report --format sarif --target a12 --os ios13 tests/data/converted/pool_k15_s3__nn_ios13.mlmodel >"$T/s"
got=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join("%s:%s" % (r["ruleId"], r["level"]) for r in d["runs"][0]["results"]))' "$T/s")
expect "SARIF: ANE071 outside its evidence is a note" "$got" "ANE071:note ANE008:error ANE008:error"

"$ANELINT" check --format github --target a12 --os ios13 tests/data/converted/pool_k15_s3__nn_ios13.mlmodel >"$T/g"
if grep -q '^::notice .*title=anelint ANE071 ' "$T/g" && grep -q '^::error .*title=anelint ANE008 ' "$T/g" &&
	grep -q 'on the ANE (1 uncertain)' "$T/g"; then
	ok "github: ANE071 outside its evidence is a notice"
else
	bad "github: ANE071 outside its evidence is a notice: $(cat "$T/g")"
fi

# 7. plan: which uncertain layers could change the segments
"$ANELINT" plan --os ios18 $D/fix_shape.mlmodel >"$T/p"
if grep -q '^  uncertain 2 (could change these segments): c1 (segment 0, ANE040), c2 (segment 0, ANE040)$' "$T/p"; then
	ok "plan: the uncertain layers"
else
	bad "plan: the uncertain layers: $(cat "$T/p")"
fi
"$ANELINT" plan --format json --os ios16 $D/fix_shape.mlmodel >"$T/pj"
got=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["models"][0]["uncertain"])' "$T/pj")
expect "plan JSON ios16: nothing uncertain" "$got" "[]"

# 8. Markdown's heading: a model whose only fallbacks are uncertain is never "predicted to run on
# the Neural Engine" (it may fall back); a model whose every verdict is ANE keeps the check mark
"$ANELINT" check --format markdown --fail-on never $D/fix_gap.mlmodel >"$T/md1"
h=$(head -1 "$T/md1")
case "$h" in "### ❔ anelint: 1 of 1 model may fall back from the Neural Engine"*) ok "markdown: uncertain heading" ;;
*) bad "markdown: uncertain heading: $h" ;; esac
"$ANELINT" check --format markdown --fail-on never $D/limit_attn_8k.mlpackage >"$T/md2"
expect "markdown: every verdict ANE" "$(head -1 "$T/md2")" "### ✅ anelint: the model is predicted to run on the Neural Engine"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
