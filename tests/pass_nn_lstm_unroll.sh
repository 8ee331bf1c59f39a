#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_nn_lstm_unroll.sh: nn-lstm-unroll
# (src/rewrite/passes/nn_recurrent.c, docs/surgery.md)
# on the crafted fix_nn_lstm (moved from tests/fix.sh; pass_nn_gru_unroll.sh has the
# reverse one and the step limit).
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
FIXARGS=
# uniDirectionalLSTM unrolled (ANE002, reassociate): a permute brings the rank-5
# sequence axis to H, per step a slice, innerProducts, activations, add /
# multiply and the cell clip as unary threshold / linear -1 (exact); the 3-step
# ones and the 20-step one unrolled (bit-identical to the interpreter's LSTM, the
# clip 0.5 acting; more than 64 steps are refused: tests/pass_nn_gru_unroll.sh);
# every new layer on the ANE by its own verdict
FIXARGS="--allow reassociate"
applies nn_lstm 3 0 reassociate nn-lstm-unroll
FIXARGS=
! grep -q '"identical": false' "$T/fx_nn_lstm.json" && ok || bad "fix_nn_lstm: not bit-identical"
has nn_lstm 3 permute
has nn_lstm 26 slice
has nn_lstm 52 unary
printf 'id: ANE071\nfamilies: none\nprovenance: tiny fixtures\n\nid: ANE072\nfamilies: none\nprovenance: tiny fixtures\n' >"$T/nofloor.rules"
"$ANELINT" check --all --rules "$T/nofloor.rules" "$T/fx_nn_lstm.mlmodel" >"$T/nnl.chk"
n=$(grep -cE '^ +[0-9]+ +[A-Za-z0-9_]+ +(innerProduct|permute|slice|add|multiply|split|activation|unary|concat|reshape) +ANE' "$T/nnl.chk")
[ "$n" -eq 445 ] && ! grep -q 'uniDirectionalLSTM' "$T/nnl.chk" && ok ||
	{ bad "fix_nn_lstm: $n unrolled layers on the ANE (445 expected: 51 for lstm_a, 54 for lstm_b, 340 for lstm_c)"; cat "$T/nnl.chk"; }
"$ANELINT" fix $F/fix_nn_lstm.mlmodel -o "$T/nnl0.mlmodel" --format json >"$T/nnl0.json"
grep -q '"layer": "lstm_a".*"why_not": "rounds differently: needs --allow reassociate (it would be: 3 steps' "$T/nnl0.json" &&
	ok || { bad "fix_nn_lstm without --allow"; cat "$T/nnl0.json"; }
"$ANELINT" fix $F/fix_nn_lstm.mlmodel --dry-run --proof region --allow reassociate --format json >"$T/nnlr.json"
grep -q '"kind": "region", "proved": true, "pass": true' "$T/nnlr.json" && ok || { bad "fix_nn_lstm: region proof"; cat "$T/nnlr.json"; }

summary
