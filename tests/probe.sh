#!/bin/sh
# SPDX-License-Identifier: MIT
# probe.sh: `anelint probe` writes a probe for what is uncertain (issue #30 item 8): the work
# floor by release (ANE071) and per segment (ANE072), flexible shapes by kind and size (ANE040),
# the axis caps (ANE051), the SDPA size threshold (ANE067), and every layer kind / op with no
# evidence (kind_status.c) that a builder can write. Checked here:
#   1. each new family is written, and every probe loads back (`anelint info`, `check`); also the
#      state width (ANE047) and the in-graph KV-cache update (ANE048), stateful ML Programs;
#   2. the manifest (schema anelint-probes, version 2) names each probe's rule (or kind), its
#      question, the probed op, what it shows if the rule holds and if not, the predictions by
#      release, and how to settle it (compare / calibrate fields);
#   3. the manifest's uncertain rules are exactly those `anelint rules --format json` shows
#      with evidence narrower than where they are evaluated and no mechanism (derived from the
#      tables, not a hand list), each probed by a family or saying why not;
#   4. the expectations bisect the thresholds (work floor, SDPA, ranges vs enumerated shapes,
#      the segment floor);
#   5. the results come back: evidence for a probe (anelint's own prediction with the probed
#      op flipped, as a Mac would report it) is compared (the probed op is the disagreement)
#      and calibrated (an off: CHIP@RELEASE override of ANE071 and of ANE072, which it
#      pre-empts), after which check agrees; a kind probe observed on the ANE is calibrated into
#      a warn rule of unit ane, which turns uncertain into ane on that chip and release only.
# (tests/evidence.sh checks the older probe families: protobuf validity and their bisection.)
#
#   ANELINT=build/anelint sh tests/probe.sh       (from the repo root)
set -u
A=${ANELINT:-build/anelint}
case $A in /*) ;; */*) A=$(pwd)/$A ;; esac # the probes are read from inside their folder
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
# q EXPR: evaluate a Python expression over the manifest d
q() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); P={p["file"]: p for p in d["probes"]}; print(eval(sys.argv[2]))' "$T/p/manifest.json" "$1"; }

# ---------------------------------------------------------------- 1. written, loads back
if "$A" probe -o "$T/p" >"$T/out" 2>"$T/err"; then ok; else bad "probe: $(cat "$T/err")"; fi
[ "$(q 'd["schema"], d["version"]')" = "('anelint-probes', 2)" ] && ok || bad "manifest schema/version: $(q 'd.get("version")')"
for f in work_s16.mlmodel work_s96.mlmodel segment_1.mlpackage segment_conv.mlpackage flex_range_128.mlmodel \
	flex_range_unbounded.mlmodel flex_enum_2.mlmodel axis_w16385.mlmodel axis_w65537.mlmodel sdpa_8x512x64.mlpackage \
	sdpa_32x1024x128.mlpackage nn_layer_activation.mlmodel nn_layer_batchnorm.mlmodel mil_op_sigmoid.mlpackage \
	mil_op_reduce_mean.mlpackage mil_op_real_div.mlpackage state_w270.mlpackage kv_linear.mlpackage \
	mil_axis_w16385.mlpackage; do
	[ -e "$T/p/$f" ] && ok || bad "probe $f not written"
	[ "$(q "'$f' in P")" = True ] && ok || bad "probe $f not in the manifest"
done
# every probe in the manifest exists and loads (one `info` of them all: each read as its model
# type), and check reads them all (exit 0 with --fail-on never)
q '" ".join(P)' >"$T/list"
n=$(wc -w <"$T/list")
(cd "$T/p" && "$A" info --format json $(cat "$T/list")) >"$T/info.json" 2>"$T/err" || bad "info of the probes: $(cat "$T/err")"
got=$(python3 -c 'import json,sys
m = json.load(open(sys.argv[1])); i = json.load(open(sys.argv[2]))
types = {x["path"]: x["type"] for x in i["models"]}
print([f for f, p in ((p["file"], p) for p in m["probes"]) if types.get(f) != p["model_type"]], i.get("errors"))' "$T/p/manifest.json" "$T/info.json")
[ "$got" = "[] []" ] && ok || bad "probes not read as their model type: $got"
(cd "$T/p" && "$A" check --fail-on never $(cat "$T/list")) >/dev/null 2>"$T/err" && ok || bad "check of the probes: $(cat "$T/err")"
[ "$n" -ge 100 ] && ok || bad "only $n probes"
grep -q "^probe: $n probe models" "$T/out" && ok || bad "probe's summary line: $(cat "$T/out")"
# the package layout of the ML Program probes
for f in sdpa_16x2048x64 segment_4 mil_op_gelu; do
	[ -f "$T/p/$f.mlpackage/Manifest.json" ] && [ -f "$T/p/$f.mlpackage/Data/com.apple.CoreML/model.mlmodel" ] && ok ||
		bad "$f.mlpackage layout"
done
if command -v protoc >/dev/null 2>&1; then
	for f in work_s48.mlmodel flex_enum_8.mlmodel flex_range_1024.mlmodel axis_w65536.mlmodel nn_layer_lrn.mlmodel \
		sdpa_16x1024x64.mlpackage/Data/com.apple.CoreML/model.mlmodel; do
		protoc --decode_raw <"$T/p/$f" >/dev/null 2>&1 && ok || bad "$f: protoc --decode_raw fails"
	done
fi

# ---------------------------------------------------------------- 2. what each decides
got=$(q '" ".join(sorted(set(p["family"] + ":" + str(p["rule"]) for p in d["probes"] if p["family"] in ("work_s", "segment_", "flex_", "axis_w", "sdpa_", "state_w", "kv_", "nn_layer_", "mil_op_"))))')
[ "$got" = "axis_w:ANE051 flex_:ANE040 kv_:ANE048 mil_op_:None nn_layer_:None sdpa_:ANE067 segment_:ANE072 state_w:ANE047 work_s:ANE071" ] && ok ||
	bad "families and rules: $got"
# every probe: a question, the probed op, expectations both ways, settle fields naming compare and calibrate
got=$(q '[p["file"] for p in d["probes"] if not (p["question"] and p["probed_op"] and p["expect"]["if_rule_holds"] and p["expect"]["if_not"] and "anelint compare" in p["settle"]["compare"] and "disagreements" in p["settle"]["compare"] and "anelint calibrate" in p["settle"]["calibrate"] and p["predicted"]["releases"])]')
[ "$got" = "[]" ] && ok || bad "probes missing a field: $got"
q '[p["file"] for p in d["probes"] if p["rule"] and p["rule"] not in p["settle"]["compare"]]' | grep -qx '\[\]' && ok ||
	bad "a rule probe's compare fields do not name its rule"
# a kind probe names its kind and the releases with no evidence, where anelint is uncertain
got=$(q 'P["nn_layer_activation.mlmodel"]["kind"]["type"], P["nn_layer_activation.mlmodel"]["kind"]["no_evidence_on"][-1], P["nn_layer_activation.mlmodel"]["predicted"]["releases"]["ios26"]["verdict"], P["nn_layer_activation.mlmodel"]["predicted"]["releases"]["ios27"]["verdict"]')
[ "$got" = "('activation', 'ios26', 'uncertain', 'ane')" ] && ok || bad "nn activation kind probe: $got"
# (batchnorm after a conv: ANE013, a measured warning of ANE work, decides it)
got=$(q '[p["file"] for p in d["probes"] if p["rule"] is None and p["file"] != "nn_layer_batchnorm.mlmodel" and any(p["predicted"]["releases"][r]["verdict"] == "ane" for r in p["kind"]["no_evidence_on"] if r in p["predicted"]["releases"])]')
[ "$got" = "[]" ] && ok || bad "a kind probe predicted ane with confidence where no report saw its kind: $got"
# kinds with evidence everywhere they load get no probe (conv: supported from iOS 13)
[ "$(q '"nn_layer_convolution.mlmodel" in P or "mil_op_const.mlpackage" in P')" = False ] && ok || bad "a kind with evidence was probed"
# the kinds no builder writes are listed, not dropped
got=$(q '[k["type"] for k in d["kinds_not_probed"] if k["type"] in ("embedding", "einsum")]')
[ "$got" = "['embedding', 'einsum']" ] && ok || bad "kinds_not_probed: $got"

# ---------------------------------------------------------------- 3. derived from the tables
"$A" rules --format json >"$T/rules.json"
want=$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted(r["id"] for r in d["rules"] if r["evidence"]["mechanism"] is None and
      (r["evidence"]["families"], r["evidence"]["releases"]) != (r["families"], r["releases"]) and r["families"] != "none")))' "$T/rules.json")
got=$(q '" ".join(sorted(r["rule"] for r in d["uncertain_rules"]))')
[ "$got" = "$want" ] && ok || bad "uncertain rules: manifest '$got', rules table '$want'"
for r in ANE040 ANE047 ANE048 ANE067 ANE071 ANE072; do
	echo "$got" | grep -qw $r && ok || bad "$r not among the uncertain rules"
	[ "$(q "[r.get('families') for r in d['uncertain_rules'] if r['rule'] == '$r'][0] is not None")" = True ] && ok ||
		bad "$r has no probe family"
done
got=$(q '[r["rule"] for r in d["uncertain_rules"] if not r.get("families") and not r.get("not_probed")]')
[ "$got" = "[]" ] && ok || bad "uncertain rules neither probed nor explained: $got"
# where the work floor is uncertain comes from its scope (rule_scope.def): somewhere, not everywhere
got=$(q '[(len(x["uncertain_on"]) > 0, len(x["uncertain_on"]) < 8) for x in d["uncertain_rules"] if x["rule"] == "ANE071"]')
[ "$got" = "[(True, True)]" ] && ok || bad "ANE071 uncertain on: $got"

# ---------------------------------------------------------------- 4. the expectations bisect
got=$(q '" ".join("%s:%s" % (p["value"], p["expect"]["if_rule_holds"]) for p in d["probes"] if p["family"] == "work_s")')
[ "$got" = "16:cpu 32:cpu 48:cpu 64:ane 96:ane" ] && ok || bad "work floor expectations: $got"
# the work floor by release: uncertain exactly where its evidence does not reach (the manifest's
# uncertain_on, from its scope), confidently off the ANE where it does
got=$(q '[(r, v["verdict"]) for r, v in P["work_s32.mlmodel"]["predicted"]["releases"].items() if v["verdict"] != ("uncertain" if r in P["work_s32.mlmodel"]["uncertain_on"] else "not_ane")]')
[ "$got" = "[]" ] && ok || bad "work_s32 verdicts by release: $got"
[ "$(q 'sorted(set(v["verdict"] for v in P["work_s32.mlmodel"]["predicted"]["releases"].values()))')" = "['not_ane', 'uncertain']" ] &&
	ok || bad "work_s32: not both verdicts"
got=$(q '" ".join("%s:%s" % (p["value"], p["expect"]["rule_fires"]) for p in d["probes"] if p["family"] == "flex_")')
[ "$got" = "range_128:True range_1024:True range_unbounded:True enum_2:False enum_8:False" ] && ok || bad "flexible shapes: $got"
got=$(q '" ".join("%s:%s" % (p["value"], p["expect"]["if_rule_holds"]) for p in d["probes"] if p["family"] == "sdpa_")')
[ "$got" = "8x512x64:cpu 16x1024x64:cpu 16x2048x64:ane 32x1024x128:ane" ] && ok || bad "sdpa: $got"
got=$(q '" ".join("%s:%s" % (p["value"], p["expect"]["rule_fires"]) for p in d["probes"] if p["family"] in ("state_w", "kv_"))')
[ "$got" = "256:False 270:True 288:False linear:True" ] && ok || bad "states: $got"
got=$(q '" ".join("%s:%s" % (p["value"], p["expect"]["if_rule_holds"]) for p in d["probes"] if p["family"] == "segment_")')
[ "$got" = "1:cpu 4:cpu conv:ane" ] && ok || bad "segment floor: $got"
got=$(q '" ".join("%s:%s/%s" % (p["value"], p["predicted_own_unit"]["a16"], p["predicted_own_unit"]["a17"]) for p in d["probes"] if p["family"] == "axis_w")')
[ "$got" = "16384:ane/ane 16385:gpu_or_cpu/ane 65536:gpu_or_cpu/ane 65537:gpu_or_cpu/gpu_or_cpu" ] && ok || bad "axis caps: $got"
got=$(q '" ".join("%s:%s/%s" % (p["value"], p["predicted_own_unit"]["a16"], p["predicted_own_unit"]["a17"]) for p in d["probes"] if p["family"] == "mil_axis_w")')
[ "$got" = "16384:ane/ane 16385:gpu_or_cpu/ane 65537:gpu_or_cpu/gpu_or_cpu" ] && ok || bad "axis caps, ML Program: $got"

# ---------------------------------------------------------------- 5. the results come back
# work_s48: predicted on the CPU (the floor); a Mac (a17, iOS 18) sees it on the ANE
m="$T/p/work_s48.mlmodel"
"$A" compare "$m" --write-evidence json --target a17 --os ios18 -o "$T/w48.json" 2>"$T/err" || bad "write evidence: $(cat "$T/err")"
python3 - "$T/w48.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for op in d["ops"]:
    if op["name"] in ("work_s48", "y"):  # the layer, or its output blob (what a compute plan names)
        op["unit"] = "ane"
d["source"] = "tests/probe.sh: a Mac's observation, simulated"
json.dump(d, open(sys.argv[1], "w"))
EOF
"$A" compare "$m" "$T/w48.json" --format json >"$T/cmp.json" 2>"$T/err"
got=$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["evidence"][0]
print([(x["name"], x["predicted"], x["observed"]) for x in e["disagreements"]], [(r["rule"], r["wrong"]) for r in e["rules"] if r["rule"] == "ANE071"], e["evidence_os"])' "$T/cmp.json")
[ "$got" = "[('y', 'cpu', 'ane')] [('ANE071', 1)] ios18" ] && ok || bad "compare of a probe's evidence: $got"
"$A" calibrate "$m" "$T/w48.json" -o "$T/cal.rules" >"$T/out" 2>"$T/err"
# ANE071 and the same floor per segment (ANE072), which it pre-empts: both off there only
got=$(grep '^id: \|^off: ' "$T/cal.rules" | tr '\n' ' ')
[ "$got" = "id: ANE071 off: a17@ios18 id: ANE072 off: a17@ios18 " ] && ok || bad "calibrate: $got $(cat "$T/err")"
grep -q 'agreement 0.0% (0 of 1) before, 100.0% (1 of 1) with the rules' "$T/out" && ok || bad "calibrate: $(cat "$T/out")"
u=$("$A" check --format json --fail-on never --target a17 --os ios18 --rules "$T/cal.rules" "$m" |
	python3 -c 'import json,sys; l=json.load(sys.stdin)["models"][0]["layers"][0]; print(l["unit"], l["verdict"])')
[ "$u" = "ane ane" ] && ok || bad "check with the calibrated rules: $u"
# on another release the floor still holds (iOS 26; confident or not as its scope says)
u=$("$A" check --format json --fail-on never --target a17 --os ios26 --rules "$T/cal.rules" "$m" |
	python3 -c 'import json,sys; l=json.load(sys.stdin)["models"][0]["layers"][0]; print(l["unit"], l["verdict"])')
[ "${u% *}" = "cpu" ] && [ "${u#* }" != "ane" ] && ok || bad "check with the calibrated rules, iOS 26: $u"
# a kind probe observed on the ANE: the prediction agreed (the ANE, uncertain), and calibrate
# records the observation as a warn rule of unit ane for the type on that chip and release,
# which turns uncertain into ane there and nowhere else
m="$T/p/mil_op_sigmoid.mlpackage"
"$A" compare "$m" --write-evidence json --target a17 --os ios18 -o "$T/sig.json" 2>/dev/null
"$A" compare "$m" "$T/sig.json" --format json | python3 -c 'import json,sys; e=json.load(sys.stdin)["evidence"][0]; sys.exit(e["disagreements"] != [])' &&
	ok || bad "kind probe: the ANE observation disagrees"
"$A" calibrate "$m" "$T/sig.json" -o "$T/kind.rules" >"$T/out" 2>"$T/err" && ok || bad "calibrate a kind probe: $(cat "$T/out" "$T/err")"
got=$(grep -v '^#' "$T/kind.rules" | grep '^op: \|^families: \|^releases: \|^kind: \|^unit: ' | tr '\n' ' ')
[ "$got" = "op: sigmoid families: a17 releases: ios18 kind: warn unit: ane " ] && ok || bad "calibrated kind rule: $got"
v() { "$A" check --format json --fail-on never --target "$1" --os "$2" --rules "$T/kind.rules" "$m" |
	python3 -c 'import json,sys; print([l["verdict"] for l in json.load(sys.stdin)["models"][0]["layers"] if l["name"] == "y"][0])'; }
got="$(v a17 ios18) $(v a17 ios17) $(v a16 ios18)"
[ "$got" = "ane uncertain uncertain" ] && ok || bad "a kind settled by a probe: $got"
# the probes are calibrated one model at a time; --rules with the file so far adds to it, the new
# rule's id after the file's own CALnnn (an id twice would not load)
e="$T/p/mil_op_exp.mlpackage"
"$A" compare "$e" --write-evidence json --target a17 --os ios18 -o "$T/exp.json" 2>/dev/null
"$A" calibrate "$e" "$T/exp.json" --rules "$T/kind.rules" -o "$T/kind3.rules" >"$T/out" 2>"$T/err" && ok ||
	bad "calibrate with --rules of an earlier calibration: $(cat "$T/out" "$T/err")"
got=$(grep '^id: \|^op: ' "$T/kind3.rules" | tr '\n' ' ')
[ "$got" = "id: CAL001 op: sigmoid id: CAL002 op: exp " ] && ok || bad "chained calibration: $got"
# observed off the ANE instead: a cost rule for the type there (no warn rule)
python3 - "$T/sig.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for op in d["ops"]:
    if op["name"] == "y":
        op["unit"] = "cpu"
json.dump(d, open(sys.argv[1], "w"))
EOF
"$A" calibrate "$m" "$T/sig.json" -o "$T/kind2.rules" >/dev/null 2>&1
got=$(grep '^op: \|^kind: \|^unit: ' "$T/kind2.rules" | tr '\n' ' ')
[ "$got" = "op: sigmoid kind: cost unit: cpu " ] && ok || bad "calibrated kind observed off the ANE: $got"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
