#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_splitnd_to_slices.sh: splitnd-to-slices
# (src/rewrite/passes/nn_splitnd_to_slices.c, docs/surgery.md)
# on its crafted fixture (fix_shuffle): the 4 + 12 channel splitND -> one slice layer
# per part, exactly.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
FIXARGS=
applies shuffle 5 2 exact splitnd-to-slices
has shuffle 2 slice
grep -q '"layer": "split_uneq", .*"pass": "splitnd-to-slices", .*"applied": true' "$T/fx_shuffle.json" && ok ||
	bad "fix_shuffle: split_uneq not rewritten by splitnd-to-slices"

summary
