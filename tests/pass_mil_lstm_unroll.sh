#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_lstm_unroll.sh: mil-lstm-unroll (and, by part, mil-lstm-unroll-fp16)
# (src/rewrite/passes/mil_recurrent.c, docs/surgery.md):
#   - an fp16 program (crafted pass_mil_lstm_unroll_fp16): a bidirectional lstm
#     (last step) and a reverse one (whole sequence) unrolled with --allow
#     reassociate, every new op on the ANE by its own verdict, the proof passes;
#     --dry-run reports the same; without --allow nothing is written
#   - an fp32 iOS 15 program (crafted pass_mil_lstm_unroll_fp32), whose lstm takes
#     fp32 only: with --allow reassociate the fp32 lstms are left, saying why
#     (fp32 ops would still fall back: ANE029) and what --allow approximate
#     would do; with --allow approximate the bidirectional lstm and the reverse
#     one it feeds are unrolled in fp16 (weights copied to fp16), the clipped
#     one is left; mil-fp16-compute does not "apply" converting nothing (it did,
#     in every round up to --max-rounds)
#   - two corpus lstms (../shared when present): fewer fallbacks after fix
#     --allow approximate, and verify within 1e-2
#   - Apple's validator and coremltools' MIL load on the crafted outputs (when built)
set -u
: "${ANELINT:=build/anelint}"
C=tests/data/crafted
CORPUS=${ANELINT_CORPUS:-../shared/corpus}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
json() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }
same_tree() { diff -r "$1" "$2" >/dev/null && [ "$(cd "$1" && find . | sort)" = "$(cd "$2" && find . | sort)" ]; }
# the "changed" entries of a fix --format json report, as "layer:pass" words
changed() { json "$1" "' '.join(r['layer'] + ':' + r['pass'] for r in j['rewrites'] if r['applied'])"; }
after_fb() { json "$1" "j['after']['fallbacks']"; }
F16=$C/pass_mil_lstm_unroll_fp16.mlpackage
F32=$C/pass_mil_lstm_unroll_fp32.mlpackage
OUTS=""
# Parts: `sh tests/pass_mil_lstm_unroll.sh PART...` runs those only: mil-lstm-unroll
# (sections 1 and 3; no argument), mil-lstm-unroll-fp16 (section 2: its own
# tests/pass_mil_lstm_unroll_fp16.sh), or all.
PARTS=${*:-mil-lstm-unroll}
part() { case " $PARTS " in *" all "* | *" $1 "*) return 0 ;; esac; return 1; }

if part mil-lstm-unroll; then
# 1. fp16: bidirectional + reverse, reassociate
"$ANELINT" fix "$F16" -o "$T/f16.mlpackage" --allow reassociate --format json >"$T/f16.json" 2>"$T/f16.err"
rc=$?
[ $rc -eq 0 ] && [ "$(changed "$T/f16.json")" = "y:mil-lstm-unroll r:mil-lstm-unroll" ] &&
	[ "$(after_fb "$T/f16.json")" = 0 ] && ok || { bad "fp16: rc $rc"; cat "$T/f16.json" "$T/f16.err"; }
grep -q '"after": "3 steps, two chains (forward, backward) of linear x2 + split + sigmoid / tanh + mul / add, then expand_dims' "$T/f16.json" &&
	grep -q '"after": "3 steps, reversed, linear x2 .*, then stack' "$T/f16.json" && ok || bad "fp16: after"
grep -q '"proved": true, "pass": true' "$T/f16.json" && ! grep -q '"pass": false' "$T/f16.json" && ok || bad "fp16: proof"
OUTS="$OUTS $T/f16.mlpackage"
"$ANELINT" check --all "$T/f16.mlpackage" >"$T/f16.chk" 2>&1
n=$(grep -cE '^ +[0-9]+ +[A-Za-z0-9_]+ +(slice_by_index|linear|add|split|sigmoid|tanh|mul|expand_dims|stack|concat) ' "$T/f16.chk")
# (on the ANE by their own verdicts: the report's "after" fallbacks above; the whole
# model is too small for the ANE, ANE071, and moved)
[ "$n" -eq 129 ] && ! grep -q ' lstm ' "$T/f16.chk" && ok || { bad "fp16: $n unrolled ops (129 expected)"; cat "$T/f16.chk"; }
# the outputs: the reverse op's sequence in processing order, as the interpreter gives it
"$ANELINT" verify "$F16" "$T/f16.mlpackage" --random --tol 1e-5 >"$T/f16.ver" 2>&1 && ok ||
	{ bad "fp16: verify"; cat "$T/f16.ver"; }
"$ANELINT" fix "$F16" -o "$T/f16d.mlpackage" --allow reassociate --dry-run --format json >"$T/f16d.json" 2>&1
[ "$(changed "$T/f16d.json")" = "$(changed "$T/f16.json")" ] && [ ! -e "$T/f16d.mlpackage" ] && ok ||
	bad "fp16: --dry-run differs"
"$ANELINT" fix "$F16" -o "$T/f16x.mlpackage" --format json >"$T/f16x.json" 2>&1
grep -q '"layer": "y".*"why_not": "rounds differently: needs --allow reassociate (it would be: 3 steps, two chains' "$T/f16x.json" &&
	same_tree "$F16" "$T/f16x.mlpackage" && ok || { bad "fp16 without --allow"; cat "$T/f16x.json"; }
fi

if part mil-lstm-unroll-fp16; then
# 2. fp32 (iOS 15): reassociate says why; approximate unrolls in fp16
"$ANELINT" fix "$F32" -o "$T/f32r.mlpackage" --allow reassociate --format json >"$T/f32r.json" 2>&1
grep -q '"layer": "y".*"why_not": "mil-lstm-unroll: the lstm computes in fp32: unrolled into fp32 ops they would still fall back (ANE029).*mil-lstm-unroll-fp16: changes results: needs --allow approximate (it would be: 3 steps, two chains' "$T/f32r.json" &&
	ok || { bad "fp32 reassociate: reason"; cat "$T/f32r.json"; }
"$ANELINT" fix "$F32" -o "$T/f32.mlpackage" --allow approximate --format json >"$T/f32.json" 2>"$T/f32.err"
rc=$?
[ $rc -eq 0 ] && [ "$(json "$T/f32.json" "j['rounds'][0]['applied']")" = 2 ] &&
	[ "$(json "$T/f32.json" "len(j['rounds'])")" = 2 ] && [ "$(json "$T/f32.json" "j['fixed_point']")" = True ] &&
	[ "$(changed "$T/f32.json")" = "y:mil-lstm-unroll-fp16 r:mil-lstm-unroll-fp16 rc:mil-io-fp16 r:mil-io-fp16" ] && ok ||
	{ bad "fp32 approximate: rc $rc"; cat "$T/f32.json" "$T/f32.err"; }
grep -q '"layer": "k".*"why_not": "[^"]*a clipped lstm (clip 1) is not unrolled' "$T/f32.json" && ok || bad "fp32: k reason"
grep -q '"why_not": "its 3 fp32 ops stay fp32 (e.g. .y., an op coremltools keeps in fp32): nothing to convert"' "$T/f32.json" &&
	ok || bad "fp32: mil-fp16-compute applied converting nothing"
grep -q '"pass": false' "$T/f32.json" && bad "fp32: a proof failed" || ok
"$ANELINT" verify "$F32" "$T/f32.mlpackage" --random --tol 1e-2 >"$T/f32.ver" 2>&1 && ok ||
	{ bad "fp32: verify"; cat "$T/f32.ver"; }
OUTS="$OUTS $T/f32.mlpackage"
"$ANELINT" fix "$F32" -o "$T/f32d.mlpackage" --allow approximate --dry-run --format json >"$T/f32d.json" 2>&1
[ "$(changed "$T/f32d.json")" = "$(changed "$T/f32.json")" ] && ok || bad "fp32: --dry-run differs"
fi

if part mil-lstm-unroll; then
# 3. the corpus lstms: fewer fallbacks, verified
notane() { "$ANELINT" check -f json "$1" 2>/dev/null | python3 -c 'import json,sys; print(sum(m["summary"]["verdicts"]["not_ane"] for m in json.load(sys.stdin)["models"]))'; }
if [ -d "$CORPUS/converted" ]; then
	# an iOS 15 fp32 one (fp16-compute, then the fp32 lstm in fp16) and an iOS 17 fp16
	# bidirectional 2-layer one (reassociate); the others: docs/surgery.md's corpus table
	for m in "$CORPUS"/converted/lstm__mlp_fp32.mlpackage "$CORPUS"/converted/lstm_bidir_2layer__mlp_ios17_fp16.mlpackage; do
		b=$(basename "$m" .mlpackage)
		"$ANELINT" fix "$m" -o "$T/$b.mlpackage" --allow approximate >"$T/$b.txt" 2>&1
		before=$(notane "$m") after=$(notane "$T/$b.mlpackage")
		[ "$after" -lt "$before" ] && "$ANELINT" verify "$m" "$T/$b.mlpackage" --random --tol 1e-2 >/dev/null 2>&1 && ok ||
			{ bad "$b: $before -> $after fallbacks, or verify fails"; cat "$T/$b.txt"; }
	done
else
	skip=$((skip + 1))
	echo "skip: $CORPUS absent"
fi
fi

# 4. Apple's validator and coremltools' MIL load (the tools of ../shared, when built)
: "${VALIDATOR:=/work/ct/validate}"
CHECK_MODEL=${CHECK_MODEL:-../shared/tools/coremltools-local/check_model.py}
if [ -x "$VALIDATOR" ] && [ -f "$CHECK_MODEL" ] && [ -d "$(dirname "$VALIDATOR")/src" ]; then
	for f in $OUTS; do
		mkdir -p "$f/Data/com.apple.CoreML/weights" # the MIL loader wants the folder
		PYTHONPATH="$(dirname "$VALIDATOR")/src" VALIDATOR="$VALIDATOR" /usr/bin/python3 "$CHECK_MODEL" "$f" \
			>"$T/ct.out" 2>&1 && grep -q 'validator=VALID  mil=ok' "$T/ct.out" && ok ||
			{ bad "Core ML validator: $f"; cat "$T/ct.out"; }
	done
else
	skip=$((skip + 1))
	echo "skip: Core ML validator not built"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
