#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_nn_bilstm_unroll.sh: nn-bilstm-unroll
# (src/rewrite/passes/nn_recurrent.c, docs/surgery.md)
# on the crafted fix_nn_lstm_rev_bi: the 3-step biDirectionalLSTM -> a forward and a
# reverse chain, bit-identical to the interpreter's (every output, the final states
# too), no biDirectionalLSTM left; without --allow reassociate only reported
# (pass_nn_gru_unroll.sh has more).
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
fixed $F/fix_nn_lstm_rev_bi.mlmodel "$T/rb.mlmodel" nn-bilstm-unroll \
	"2 x 3 steps (forward, reverse) of innerProduct + activation + add \/ multiply (permute, slice, concat; 108 layers, W_h copied into 6 steps)" \
	--allow reassociate
[ "$(grep -c '"identical": true' "$T/f.json")" -ge 6 ] && ! grep -q '"identical": false' "$T/f.json" && ok ||
	bad "fix_nn_lstm_rev_bi: not bit-identical"
! "$ANELINT" check --all "$T/rb.mlmodel" | grep -q biDirectionalLSTM && ok || bad "fix_nn_lstm_rev_bi: a biDirectionalLSTM left"
judge "$T/rb.mlmodel"
refusal $F/fix_nn_lstm_rev_bi.mlmodel nn-bilstm-unroll "rounds differently: needs --allow reassociate (it would be: 2 x 3 steps"

summary
