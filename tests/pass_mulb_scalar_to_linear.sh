#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mulb_scalar_to_linear.sh: mulb-scalar-to-linear
# (src/rewrite/passes/nn_mulb_scalar_to_linear.c, docs/surgery.md)
# on its crafted fixture (fix_mulconst, shared with mulb-const-to-scale): the scalar
# constant taken into a linear activation, exactly.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
FIXARGS=
applies mulconst 6 2 exact mulb-scalar-to-linear
has mulconst 1 activation

summary
