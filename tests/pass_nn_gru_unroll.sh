#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_nn_gru_unroll.sh: the NeuralNetwork recurrent passes of
# src/rewrite/passes/nn_recurrent.c (docs/surgery.md "NeuralNetwork recurrent
# layers") on fixtures written by coremltools' NeuralNetworkBuilder
# (tools/mkfixtures_nn_recurrent.py):
#   nn-gru-unroll: a forward gru (sigmoid gates, the sequence), a reverse one
#     from an h0 input (sigmoidHard gates, the last step) and a 64-step one
#     unrolled, the 65-step one refused with its reason; every new layer on the
#     ANE by its own verdict;
#   nn-lstm-unroll on a reverseInput LSTM and nn-bilstm-unroll on a
#     biDirectionalLSTM from the states of both directions;
#   a held-out text classifier (embedding, LSTM over 12 tokens, dense): its one
#     fallback (the LSTM) gone;
# each: the proof bit-identical, `anelint verify` passes, --dry-run reports the
# same rewrites and writes nothing, without --allow reassociate nothing is
# applied (the output a byte-identical copy), and Apple's validator accepts the
# output (when ../shared/tools/coremltools-local and its build are present).
set -u
: "${ANELINT:=build/anelint}"
F=tests/data/crafted
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
fallbacks() { sed -n "s/.*\"$1\": {[^}]*\"fallbacks\": \([0-9]*\).*/\1/p" "$2"; }
rewrites() { sed -n '/"rewrites": \[/,/^  \]/p' "$1"; }
applied() { grep -q "\"layer\": \"$2\", \"type\": \"[A-Za-z]*\", \"pass\": \"$3\", \"rule\": \"ANE002\", \"class\": \"reassociate\", \"applied\": true" "$1"; }

: "${VALIDATOR:=/work/ct/validate}"
# Core ML's own C++ spec validator (shared/tools/coremltools-local/build.sh
# makes it; the whole of check_model.py's verdict on a NeuralNetwork), when built
judge() {
	if [ -x "$VALIDATOR" ]; then
		"$VALIDATOR" "$1" >"$T/ct.out" 2>&1 && grep -q '^VALID' "$T/ct.out" && ok ||
			{ bad "Core ML validator: $1"; cat "$T/ct.out"; }
	else
		skip=$((skip + 1))
	fi
}

# case NAME BEFORE AFTER [fix args]: fix with --allow reassociate (fallbacks
# BEFORE -> AFTER, the proof bit-identical), verify, --dry-run parity, no
# --allow: nothing applied, the judge on the output
case_() {
	name=$1 want_b=$2 want_a=$3
	shift 3
	m=$F/$name.mlmodel out=$T/$name.mlmodel js=$T/$name.json
	"$ANELINT" fix "$m" -o "$out" --allow reassociate --format json "$@" >"$js" 2>"$T/err"
	rc=$?
	[ $rc -eq 0 ] && [ "$(fallbacks before "$js")" = "$want_b" ] && [ "$(fallbacks after "$js")" = "$want_a" ] &&
		grep -q '"proof": {"kind": "whole", "proved": true, "pass": true' "$js" && ! grep -q '"identical": false' "$js" &&
		ok || { bad "$name: fix (rc $rc; fallbacks $(fallbacks before "$js") -> $(fallbacks after "$js"), not $want_b -> $want_a)"; cat "$js" "$T/err"; }
	vin=--random
	[ $# -gt 0 ] && vin="$*"
	"$ANELINT" verify $vin --tol 0 "$m" "$out" >"$T/v.out" 2>&1 && ok || { bad "$name: verify"; cat "$T/v.out"; }
	"$ANELINT" fix "$m" --dry-run --allow reassociate --format json "$@" >"$T/d.json" 2>/dev/null
	[ $? -eq 0 ] && grep -q '"written": false' "$T/d.json" && [ "$(rewrites "$T/d.json")" = "$(rewrites "$js")" ] &&
		ok || { bad "$name: --dry-run parity"; diff "$js" "$T/d.json"; }
	"$ANELINT" fix "$m" -o "$T/${name}_0.mlmodel" --format json "$@" >"$T/f0.json" 2>/dev/null
	[ $? -eq 0 ] && ! grep -q '"applied": true' "$T/f0.json" &&
		grep -q '"why_not": "rounds differently: needs --allow reassociate' "$T/f0.json" &&
		cmp -s "$m" "$T/${name}_0.mlmodel" && ok || { bad "$name: without --allow"; cat "$T/f0.json"; }
	"$ANELINT" check "$out" >/dev/null 2>&1
	[ $? -le 1 ] && ok || bad "$name: check of the output"
	judge "$out"
}

# 1. nn-gru-unroll: gru_a (forward, sigmoid), gru_b (reverse, h0, sigmoidHard), gru_c (64 steps)
#    unrolled; gru_d (65 steps) refused
case_ fix_nn_gru 4 1
js=$T/fix_nn_gru.json
applied "$js" gru_a nn-gru-unroll && applied "$js" gru_b nn-gru-unroll && applied "$js" gru_c nn-gru-unroll &&
	grep -q '"layer": "gru_b", .*"after": "4 reverse steps' "$js" && ok || bad "fix_nn_gru: gru_a / gru_b / gru_c not applied"
grep -q '"layer": "gru_d", .*"applied": false, "why_not": "65 steps: at most 64 are unrolled' "$js" && ok ||
	bad "fix_nn_gru: gru_d not refused for its 65 steps"
# every layer of the unrolled grus on the ANE by its own verdict: only gru_d is left
"$ANELINT" check --all "$T/fix_nn_gru.mlmodel" >"$T/g.chk"
grep -qE '^ +[0-9]+ +gru_d +gru +-> cpu' "$T/g.chk" && [ "$(grep -c -- '-> cpu  ' "$T/g.chk")" -le 1 ] && ok ||
	{ bad "fix_nn_gru: layers off the ANE by their own verdict besides gru_d"; grep -- '-> cpu' "$T/g.chk"; }
# the reset gate acts before R_o (NeuralNetwork.proto): r * h then its innerProduct
grep -qE ' gru_b__t0_rh +multiply' "$T/g.chk" && grep -qE ' gru_b__t0_gho +innerProduct' "$T/g.chk" && ok ||
	bad "fix_nn_gru: no r * h before the output gate's innerProduct"

# 2. a reverse uniDirectionalLSTM and a biDirectionalLSTM
case_ fix_nn_lstm_rev_bi 2 0
js=$T/fix_nn_lstm_rev_bi.json
applied "$js" lstm_r nn-lstm-unroll && applied "$js" bilstm nn-bilstm-unroll && ok ||
	{ bad "fix_nn_lstm_rev_bi: not applied"; cat "$js"; }

# 3. the held-out text classifier: embedding, LSTM over 12 tokens, dense, softmax
case_ nn_lstm_classifier 1 0 --inputs $F/nn_lstm_classifier_inputs

# 4. the corpus's legacy builder model: all three recurrent layers unrolled
CORPUS=${ANELINT_CORPUS:-../shared/corpus}
if [ -f "$CORPUS/converted/builder__legacy_lstm_bilstm_gru.mlmodel" ]; then
	m=$CORPUS/converted/builder__legacy_lstm_bilstm_gru.mlmodel
	"$ANELINT" fix "$m" -o "$T/legacy.mlmodel" --allow reassociate --format json >"$T/legacy.json" 2>&1
	[ $? -eq 0 ] && [ "$(fallbacks before "$T/legacy.json")" = 3 ] && [ "$(fallbacks after "$T/legacy.json")" = 0 ] &&
		"$ANELINT" verify --random --tol 0 "$m" "$T/legacy.mlmodel" >/dev/null 2>&1 && ok ||
		{ bad "legacy builder model: 3 -> 0 fallbacks, verify"; cat "$T/legacy.json"; }
	judge "$T/legacy.mlmodel"
else
	skip=$((skip + 2))
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
