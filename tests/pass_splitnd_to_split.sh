#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_splitnd_to_split.sh: splitnd-to-split
# (src/rewrite/passes/nn_splitnd_to_split.c, docs/surgery.md)
# on its crafted fixture (fix_shuffle): the channel splitND into equal parts -> split,
# exactly; the one on the last axis left.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
FIXARGS=
applies shuffle 5 2 exact splitnd-to-split
has shuffle 3 split
has shuffle 1 splitND
left shuffle split_w 'axis -1 is not the channel axis (-3) of a rank-4 input'

summary
