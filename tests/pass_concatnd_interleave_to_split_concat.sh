#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_concatnd_interleave_to_split_concat.sh: concatnd-interleave-to-split-concat
# (src/rewrite/passes/nn_concatnd_interleave_to_split_concat.c, docs/surgery.md)
# on its crafted fixture (fix_shuffle, a ShuffleNet-style unit shared with
# splitnd-to-split and splitnd-to-slices): the interleaved concatND (channel
# shuffle) -> split x C + concat, exactly, also in a region proof with special
# values; the one not on the channel axis left.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
FIXARGS=
# ShuffleNet-style unit: channel splitND -> split, interleaved concatND (channel
# shuffle) -> split x C + concat; the others left with their reasons
# (the 4 + 12 channel split: one slice layer per part)
applies shuffle 5 2 exact splitnd-to-split concatnd-interleave-to-split-concat splitnd-to-slices
has shuffle 3 split
has shuffle 1 concat
left shuffle shuffle_w 'concatnd-interleave-to-split-concat: axis -1 is not the channel axis'
FIXARGS="--proof region"
applies shuffle 5 2 exact splitnd-to-split concatnd-interleave-to-split-concat splitnd-to-slices
grep -q '"kind": "region"' "$T/fx_shuffle.json" && grep -q '+-0, +-1' "$T/fx_shuffle.json" && ok || bad "fix_shuffle: no region proof with special values"
FIXARGS=

summary
