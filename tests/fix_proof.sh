#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/fix_proof.sh: how `anelint fix` proves its rewrites (docs/surgery.md "Proof"):
# --proof region runs only the rewritten layers (and the constants they read) of
# both models on several random input sets and compares the values those layers
# produce; --proof whole runs the whole models; auto picks the whole models for a
# cheap model or with --inputs. The JSON report names the proof kind, its runs and
# its region; both proofs write the same bytes. That a broken rewrite is caught by
# a region run is tests/unit/test_region.c (two hand-made models).
set -u
: "${ANELINT:=build/anelint}"
D=tests/data/converted
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# json FILE EXPR: evaluate a Python expression over the parsed report j
json() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }

# 1. the three corpus models with a rewrite: region proof forced, bit-identical,
#    4 runs, region named (the replaced layer in, the layers it became out), and
#    the output is the byte-for-byte same file as with the whole-model proof
for spec in upsample_x4_nearest__nn_ios13:var_18:2 builder__mixed_legacy_and_broadcastable:addb:1 \
	builder__legacy_rank5_elementwise:up4:2; do
	m=${spec%%:*}
	rest=${spec#*:}
	layer=${rest%%:*}
	n_out=${rest#*:}
	"$ANELINT" fix "$D/$m.mlmodel" -o "$T/r.mlmodel" --proof region --format json >"$T/r.json"
	rc=$?
	if [ $rc -eq 0 ] && [ "$(json "$T/r.json" 'j["proof"]["kind"]')" = region ] &&
		[ "$(json "$T/r.json" 'j["proof"]["runs"]')" = 4 ] &&
		[ "$(json "$T/r.json" 'j["proof"]["pass"] and j["proof"]["proved"]')" = True ] &&
		[ "$(json "$T/r.json" 'all(o["identical"] for o in j["proof"]["outputs"]) and len(j["proof"]["outputs"]) > 0')" = True ] &&
		[ "$(json "$T/r.json" 'len(j["proof"]["region"]["output_layers"])')" = "$n_out" ] &&
		[ "$(json "$T/r.json" 'j["written"]')" = True ]; then ok; else bad "$m: region proof (rc $rc)"; cat "$T/r.json"; fi
	# the region's input layers are the rewritten layers of the report
	if [ "$(json "$T/r.json" 'sorted(j["proof"]["region"]["input_layers"]) == sorted(r["layer"] for r in j["rewrites"] if r["applied"])')" = True ] &&
		[ "$(json "$T/r.json" '"'"$layer"'" in j["proof"]["region"]["input_layers"] + [o["name"] for o in j["proof"]["outputs"]]')" = True ]
	then ok; else bad "$m: region layers"; cat "$T/r.json"; fi
	"$ANELINT" fix "$D/$m.mlmodel" -o "$T/w.mlmodel" --proof whole --format json >"$T/w.json"
	rc=$?
	if [ $rc -eq 0 ] && [ "$(json "$T/w.json" 'j["proof"]["kind"]')" = whole ] &&
		[ "$(json "$T/w.json" 'j["proof"]["runs"]')" = 1 ] &&
		[ "$(json "$T/w.json" 'j["proof"]["region"]')" = None ] &&
		cmp -s "$T/r.mlmodel" "$T/w.mlmodel"; then ok; else bad "$m: whole proof / same bytes (rc $rc)"; cat "$T/w.json"; fi
	# text: says which proof ran and on how many inputs
	"$ANELINT" fix "$D/$m.mlmodel" --dry-run --proof region >"$T/r.txt"
	if grep -q '^proof: region .* 4 runs on [0-9]* region values*, random (seeds 1-4; run 2 also +-0, ' "$T/r.txt" &&
		grep -q 'bit-identical' "$T/r.txt" && ! grep -q REFUSED "$T/r.txt"; then ok; else bad "$m: region text"; cat "$T/r.txt"; fi
done

# 2. auto: these models are cheap (far under 2 GFLOP): the whole models, with the reason
"$ANELINT" fix "$D/upsample_x4_nearest__nn_ios13.mlmodel" --dry-run --format json >"$T/a.json"
if [ "$(json "$T/a.json" 'j["proof"]["kind"]')" = whole ] &&
	json "$T/a.json" 'j["proof"]["why"]' | grep -q 'estimated work, .* GFLOP, is at most 2' &&
	[ "$(json "$T/a.json" 'j["proof"]["flops"] > 0')" = True ]; then ok; else bad "auto on a small model"; cat "$T/a.json"; fi
"$ANELINT" fix "$D/upsample_x4_nearest__nn_ios13.mlmodel" --dry-run >"$T/a.txt"
grep -q '^proof: whole model (reference interpreter, fp32, inputs: ' "$T/a.txt" && ok || { bad "auto text"; cat "$T/a.txt"; }

# 3. --inputs: the user's values go through the whole models (auto), and cannot be
#    combined with --proof region (usage error, exit 2, nothing written)
mkdir -p "$T/in"
"$ANELINT" fix "$D/upsample_x4_nearest__nn_ios13.mlmodel" --dry-run --inputs "$T/in" --format json >"$T/i.json"
if [ "$(json "$T/i.json" 'j["proof"]["kind"]')" = whole ] &&
	json "$T/i.json" 'j["proof"]["why"]' | grep -q -- '--inputs'; then ok; else bad "--inputs -> whole"; cat "$T/i.json"; fi
"$ANELINT" fix "$D/upsample_x4_nearest__nn_ios13.mlmodel" -o "$T/x.mlmodel" --inputs "$T/in" --proof region >/dev/null 2>"$T/err"
rc=$?
if [ $rc -eq 2 ] && [ ! -e "$T/x.mlmodel" ] && grep -q -- '--proof region' "$T/err"; then ok; else bad "--proof region --inputs (rc $rc)"; fi
"$ANELINT" fix "$D/upsample_x4_nearest__nn_ios13.mlmodel" --dry-run --proof bogus >/dev/null 2>"$T/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "auto, whole or region" "$T/err"; then ok; else bad "--proof bogus (rc $rc)"; fi

# 4. a model whose whole run fails on random inputs (gather indices out of range) is
#    refused by the whole-model proof, but its rewritten layers alone are proved
#    by the region proof: the region does not contain the gather
G=$D/builder__nd_broadcastable_gather.mlmodel
"$ANELINT" fix "$G" -o "$T/g.mlmodel" --proof whole --format json >"$T/gw.json"
rc=$?
if [ $rc -eq 1 ] && [ ! -e "$T/g.mlmodel" ] && [ "$(json "$T/gw.json" 'j["proof"]["proved"]')" = False ]; then ok; else bad "gather: whole refused (rc $rc)"; fi
"$ANELINT" fix "$G" -o "$T/g.mlmodel" --proof region --format json >"$T/gr.json"
rc=$?
if [ $rc -eq 0 ] && [ -s "$T/g.mlmodel" ] && [ "$(json "$T/gr.json" 'j["proof"]["kind"]')" = region ] &&
	[ "$(json "$T/gr.json" '"gidx" not in j["proof"]["region"]["input_layers"]')" = True ]; then ok; else bad "gather: region proved (rc $rc)"; cat "$T/gr.json"; fi
# 4b. a custom layer elsewhere in the model (tools/mkfixtures.py fix_custom): the
#     interpreter cannot run the whole model; --proof whole refuses, --proof auto
#     proves the rewrite on its region, bit-identical, and writes it; --dry-run
#     reports the same
C=tests/data/crafted/fix_custom.mlmodel
"$ANELINT" fix "$C" -o "$T/c.mlmodel" --proof whole --format json >"$T/cw.json"
rc=$?
if [ $rc -eq 1 ] && [ ! -e "$T/c.mlmodel" ] && json "$T/cw.json" 'j["proof"]["why"] + j["proof"]["note"]' | grep -q 'custom'
then ok; else bad "custom: whole refused (rc $rc)"; cat "$T/cw.json"; fi
"$ANELINT" fix "$C" -o "$T/c.mlmodel" --format json >"$T/ca.json"
rc=$?
if [ $rc -eq 0 ] && [ -s "$T/c.mlmodel" ] && [ "$(json "$T/ca.json" 'j["proof"]["kind"]')" = region ] &&
	json "$T/ca.json" 'j["proof"]["why"]' | grep -q 'whole models could not run.*custom.*region proof ran instead' &&
	[ "$(json "$T/ca.json" 'all(o["identical"] for o in j["proof"]["outputs"])')" = True ] &&
	protoc --decode_raw <"$T/c.mlmodel" >/dev/null 2>&1
then ok; else bad "custom: auto -> region (rc $rc)"; cat "$T/ca.json"; fi
"$ANELINT" fix "$C" --dry-run --format json >"$T/cd.json"
rc=$?
if [ $rc -eq 0 ] && [ "$(json "$T/cd.json" 'j["proof"]["kind"] == "region" and j["proof"]["pass"]')" = True ]
then ok; else bad "custom: --dry-run (rc $rc)"; fi

# 5. a reassociating rewrite under the region proof: within 1e-5 of max|ref|, and
#    the report gives the measured difference per region value
"$ANELINT" fix "$G" --dry-run --proof region --allow reassociate --format json >"$T/ra.json"
rc=$?
if [ $rc -eq 0 ] && [ "$(json "$T/ra.json" 'all(o["rel"] <= 1e-5 and o["pass"] for o in j["proof"]["outputs"])')" = True ] &&
	[ "$(json "$T/ra.json" 'len(j["proof"]["outputs"]) == len(j["proof"]["region"]["input_layers"])')" = True ]
then ok; else bad "reassociate region (rc $rc)"; cat "$T/ra.json"; fi

# 5b. signed zeros: subtractBroadcastable -> linear(-1, -0.0) + add is bit-identical
#     only if -0.0 is handled; the region's second run holds +-0 (and the fp16 ends)
S=tests/data/crafted/fix_subb.mlmodel
if [ -f "$S" ]; then
	"$ANELINT" fix "$S" --dry-run --proof region --format json >"$T/s.json"
	rc=$?
	if [ $rc -eq 0 ] && json "$T/s.json" 'j["proof"]["inputs"]' | grep -q -- '+-0, ' &&
		[ "$(json "$T/s.json" 'all(o["identical"] for o in j["proof"]["outputs"]) and j["proof"]["kind"] == "region"')" = True ] &&
		[ "$(json "$T/s.json" 'max(o["max_ref"] for o in j["proof"]["outputs"]) >= 65504')" = True ]
	then ok; else bad "subb with special values (rc $rc)"; cat "$T/s.json"; fi
fi

# 6. nothing to rewrite: no proof at all, whatever --proof says
"$ANELINT" fix "$D/pool_k15_s3__nn_ios13.mlmodel" -o "$T/n.mlmodel" --proof region --format json >"$T/n.json"
rc=$?
if [ $rc -eq 0 ] && [ "$(json "$T/n.json" 'j["proof"]')" = None ] && cmp -s "$D/pool_k15_s3__nn_ios13.mlmodel" "$T/n.mlmodel"
then ok; else bad "no rewrite (rc $rc)"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
