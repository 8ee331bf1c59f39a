#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_blockwise_to_per_channel.sh: mil-blockwise-to-per-channel
# (src/rewrite/passes/mil_blockwise_to_per_channel.c, docs/surgery.md)
# on the crafted fix_mil_blockq: the conv weight quantized per block -> int8 per
# output channel under --allow approximate; a matmul's weight and an int32 one left
# with their reasons (tests/fix_mil.sh 5i has the corpus' int4 MLP).
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
fixed $F/fix_mil_blockq.mlpackage "$T/b.mlpackage" mil-blockwise-to-per-channel \
	"int8 per-block (block 4) -> int8 per-channel, scale \[16, 1\] (new blobs; weight 192 -> 160 bytes)" --allow approximate
"$ANELINT" info -f mil "$T/b.mlpackage" | grep -q 'wc = constexpr_blockwise_shift_scale(data = tensor<int8, \[16, 8, 1, 1\]>(BLOBFILE.*scale = tensor<fp16, \[16, 1, 1, 1\]>' &&
	ok || bad "fix_mil_blockq: wc is not int8 per channel"
judge "$T/b.mlpackage"
refusal $F/fix_mil_blockq.mlpackage mil-blockwise-to-per-channel "read by matmul 'm' other than as a linear / conv weight" --allow approximate
refusal $F/fix_mil_blockq.mlpackage mil-blockwise-to-per-channel "its output is int32 (fp16 / fp32 only)" --allow approximate

summary
