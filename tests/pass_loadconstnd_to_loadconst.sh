#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_loadconstnd_to_loadconst.sh: loadconstnd-to-loadconst
# (src/rewrite/passes/nn_loadconstnd_to_loadconst.c, docs/surgery.md)
# on its crafted fixture (fix_lcnd): applied exactly; a constant whose only reader
# takes it in, and one not of rank 5, left with their reasons.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
FIXARGS=
applies lcnd 6 2 exact loadconstnd-to-loadconst mulb-const-to-scale
has lcnd 2 loadConstant
has lcnd 1 loadConstantND
has lcnd 1 scale
left lcnd g5 "its only reader 'mul5' (multiplyBroadcastable) takes the constant"
left lcnd k3 'shape \[8,4,4\]: loadConstant.s result is rank 5'
left lcnd mul6 'mulb-const-to-scale: a 8x4x1 constant is not a scale shape'

summary
