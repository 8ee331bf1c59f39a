#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mulb_const_to_scale.sh: mulb-const-to-scale
# (src/rewrite/passes/nn_mulb_const_to_scale.c, docs/surgery.md)
# on its crafted fixture (fix_mulconst, shared with mulb-scalar-to-linear): applied
# exactly, a scale layer in the output, a constant of no scale shape left; the
# signed-zero input (c * x is -0 for x = -0) bit-identical.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
FIXARGS=
applies mulconst 6 2 exact mulb-const-to-scale mulb-scalar-to-linear
has mulconst 1 scale
has mulconst 1 activation
has mulconst 1 loadConstantND
left mulconst mul_h 'a 8x4x1 constant is not a scale shape'
left mulconst h 'shape \[8,4,1\]: loadConstant.s result is rank 5'
# signed zeros: c * x is -0 for x = -0, c > 0
mkdir -p "$T/z"
FIXARGS="--inputs $T/z"
npy "$T/z/x.npy" 1,8,4,4 '[-0.0, 0.0, 0.25, -0.0] * 32'
applies mulconst 6 2 exact mulb-const-to-scale mulb-scalar-to-linear
grep -q '"inputs": "1 from' "$T/fx_mulconst.json" && ok || bad "fix_mulconst: the signed-zero input was not read"
FIXARGS=

summary
