#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/ci_example.sh: examples/ci end to end. The sample project (its anelint.toml,
# baseline, GitHub Actions workflow and pre-commit hook) is copied into a temporary
# directory with fixtures as its models; the workflow's and the hook's own commands
# (read from their YAML files, anelint on the PATH) then run there:
#   1. as committed: the baselined fallback (detector) and the suppressed model
#      (models/legacy) pass; the SARIF report shows both as suppressed;
#   2. the detector gains a new fallback (one layer more before the baselined one, so
#      the baselined layer moves): the check and the hook fail on the new one only.
set -u
: "${ANELINT:=build/anelint}"
ROOT=$(pwd)
pass=0 fail=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
mkdir "$T/bin"
ln -s "$ROOT/$ANELINT" "$T/bin/anelint" 2>/dev/null || ln -s "$ANELINT" "$T/bin/anelint"
P=$T/project
cp -r examples/ci "$P"
mkdir -p "$P/models/legacy"
cp tests/data/crafted/ci_model.mlmodel "$P/models/detector.mlmodel"
cp tests/data/converted/gru__nn_ios14.mlmodel "$P/models/legacy/gru.mlmodel"

# the commands of the workflow's steps that run anelint, and the hook's entry
python3 - "$P" >"$T/steps" <<'PY' || bad "the workflow or the hook definition does not parse"
import re, sys, yaml
p = sys.argv[1]
wf = yaml.safe_load(open(p + "/.github/workflows/anelint.yml"))
for job in wf["jobs"].values():
    for step in job["steps"]:
        run = step.get("run", "")
        if run.startswith("anelint "):
            print("step\t" + step.get("name", "") + "\t" + run.strip())
for hook in yaml.safe_load(open(p + "/.pre-commit-hooks.yaml")):
    print("hook\t" + hook["id"] + "\t" + hook["entry"] + "\t" + hook["files"])
cfg = yaml.safe_load(open(p + "/.pre-commit-config.yaml"))
assert cfg["repos"][0]["hooks"][0]["entry"] == "anelint check"
PY
[ "$(grep -c '^step' "$T/steps")" -eq 2 ] && [ "$(grep -c '^hook' "$T/steps")" -eq 1 ] && ok ||
	bad "expected 2 anelint steps and 1 hook: $(cat "$T/steps")"

# run_steps TAG: every step (and the hook on the models its pattern selects) in the
# project; rc of each in $T/TAG.rc.N, stdout in $T/TAG.out.N
run_steps() {
	i=0
	while IFS='	' read -r kind name cmd files; do
		i=$((i + 1))
		if [ "$kind" = hook ]; then
			set -- $(cd "$P" && find models -type f -o -type d -name '*.mlpackage' | grep -E "$files" | sort)
			(cd "$P" && PATH="$T/bin:$PATH" $cmd "$@") >"$T/$tag.out.$i" 2>"$T/$tag.err.$i"
		else
			(cd "$P" && PATH="$T/bin:$PATH" sh -c "$cmd") >"$T/$tag.out.$i" 2>"$T/$tag.err.$i"
		fi
		echo $? >"$T/$tag.rc.$i"
	done <"$T/steps"
}

# 1. as committed
tag=pass; run_steps
[ "$(cat "$T/pass.rc.1")" = 0 ] && ! grep -q '^::error' "$T/pass.out.1" &&
	grep -q '^::notice file=models/detector.mlmodel,.*1 accepted' "$T/pass.out.1" && ok ||
	{ bad "workflow check step: exit $(cat "$T/pass.rc.1")"; cat "$T/pass.out.1" "$T/pass.err.1"; }
[ "$(cat "$T/pass.rc.2")" = 0 ] && [ -s "$P/anelint.sarif" ] && ok || bad "workflow SARIF step: exit $(cat "$T/pass.rc.2")"
[ "$(cat "$T/pass.rc.3")" = 0 ] && ok || { bad "pre-commit hook: exit $(cat "$T/pass.rc.3")"; cat "$T/pass.err.3"; }
python3 - "$P/anelint.sarif" <<'PY' && ok || bad "SARIF: the baselined and the suppressed findings"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
res = run["results"]
assert run["originalUriBaseIds"]["SRCROOT"]["uri"].startswith("file:///"), run.get("originalUriBaseIds")
det = [r for r in res if r["properties"]["model"] == "detector.mlmodel" and r["ruleId"] == "ANE005"]
assert len(det) == 1, det
s = det[0]["suppressions"][0]
assert s["kind"] == "external" and s["justification"] == "baseline: in the baseline" and \
    det[0]["baselineState"] == "unchanged", det[0]
loc = det[0]["locations"][0]["physicalLocation"]
assert loc["artifactLocation"] == {"uri": "models/detector.mlmodel", "uriBaseId": "SRCROOT", "index": 0} or \
    (loc["artifactLocation"]["uri"] == "models/detector.mlmodel" and loc["artifactLocation"]["uriBaseId"] == "SRCROOT"), loc
assert loc["region"]["startLine"] == 1, loc
gru = [r for r in res if r["properties"]["model"] == "gru.mlmodel" and r["level"] != "note"]
assert gru and all(r["suppressions"][0]["justification"].startswith("config: legacy GRU") for r in gru), gru[:1]
PY

# 2. a new fallback: the baselined layer moved from index 0 to 1, still accepted
cp tests/data/crafted/ci_model_v2.mlmodel "$P/models/detector.mlmodel"
rm -f "$P/anelint.sarif"
tag=fail; run_steps
[ "$(cat "$T/fail.rc.1")" = 1 ] && [ "$(grep -c '^::error' "$T/fail.out.1")" = 1 ] &&
	grep -q "^::error file=models/detector.mlmodel,.*layer 'encoder.layers.0.attention.output.dense.mul_broadcast_new'" "$T/fail.out.1" &&
	ok || { bad "a new fallback: workflow check step exit $(cat "$T/fail.rc.1")"; cat "$T/fail.out.1"; }
[ "$(cat "$T/fail.rc.2")" = 0 ] && ok || bad "SARIF step with --fail-on never: exit $(cat "$T/fail.rc.2")"
[ "$(cat "$T/fail.rc.3")" = 1 ] && grep -q 'mul_broadcast_new .*ANE005' "$T/fail.out.3" &&
	! grep -q 'mul_broadcast_a .*ANE005 [^[]*$' "$T/fail.out.3" && ok ||
	{ bad "pre-commit hook on a new fallback: exit $(cat "$T/fail.rc.3")"; cat "$T/fail.out.3"; }
python3 - "$P/anelint.sarif" <<'PY' && ok || bad "SARIF: the new fallback is not suppressed, the old one is"
import json, sys
res = json.load(open(sys.argv[1]))["runs"][0]["results"]
det = {r["locations"][0]["logicalLocations"][0]["name"].rsplit(".", 1)[1]: r for r in res
       if r["properties"]["model"] == "detector.mlmodel" and r["ruleId"] == "ANE005"}
assert "suppressions" not in det["mul_broadcast_new"], det["mul_broadcast_new"]
assert det["mul_broadcast_a"]["suppressions"][0]["kind"] == "external", det["mul_broadcast_a"]
assert det["mul_broadcast_a"]["properties"]["index"] == 1
PY

# 3. --write-baseline records the new one; then everything passes again, and the
#    baseline file is stable: written twice, the same bytes
(cd "$P" && PATH="$T/bin:$PATH" anelint check models --write-baseline anelint-baseline.json >/dev/null)
cp "$P/anelint-baseline.json" "$T/b1.json"
(cd "$P" && PATH="$T/bin:$PATH" anelint check models --write-baseline anelint-baseline.json >/dev/null)
cmp -s "$P/anelint-baseline.json" "$T/b1.json" && [ "$(grep -c '"rule"' "$T/b1.json")" = 2 ] && ok ||
	bad "--write-baseline: not stable, or not 2 findings"
(cd "$P" && PATH="$T/bin:$PATH" anelint check --format github models) >/dev/null
[ $? = 0 ] && ok || bad "after --write-baseline the check still fails"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
