#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_maxpool_cascade.sh: maxpool-cascade
# (src/rewrite/passes/nn_maxpool_cascade.c, docs/surgery.md)
# on its crafted fixture (fix_maxpool): applied exactly, 6 pooling layers in the output.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
FIXARGS=
applies maxpool 2 0 exact maxpool-cascade
has maxpool 6 pooling

summary
