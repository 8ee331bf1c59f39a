#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_subb_to_neg_add.sh: subb-to-neg-add
# (src/rewrite/passes/nn_subb_to_neg_add.c, docs/surgery.md)
# on its crafted fixture (fix_subb): applied exactly, its activation + add in
# the output; signed zeros: a - (+0) is -0 for a = -0 (the negation must add
# -0.0, not +0.0), checked on inputs that hold them.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
FIXARGS=
applies subb 1 0 exact subb-to-neg-add
has subb 1 activation
has subb 1 add
# signed zeros: a - (+0) is -0 for a = -0 (the negation must add -0.0, not +0.0),
# and c * x is -0 for x = -0, c > 0 (the linear activation likewise)
mkdir -p "$T/z"
npy "$T/z/a.npy" 1,8,4,4 '[-0.0, 0.0, -0.0, 1.5] * 32'
npy "$T/z/b.npy" 1,8,1,1 '[0.0, -0.0, 0.0, 2.0] * 2'
FIXARGS="--inputs $T/z"
applies subb 1 0 exact subb-to-neg-add
grep -q '"inputs": "2 from' "$T/fx_subb.json" && ok || bad "fix_subb: the signed-zero inputs were not read"
FIXARGS=

summary
