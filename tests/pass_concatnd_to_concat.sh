#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_concatnd_to_concat.sh: concatnd-to-concat
# (src/rewrite/passes/nn_concatnd_to_concat.c, docs/surgery.md)
# on its crafted fixture (fix_concatnd): applied exactly, one concat in the output.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
FIXARGS=
applies concatnd 1 0 exact concatnd-to-concat
has concatnd 1 concat

summary
