#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mulb_to_multiply.sh: mulb-to-multiply
# (src/rewrite/passes/nn_mulb_to_multiply.c, docs/surgery.md)
# on its crafted fixture (fix_mulb): applied exactly, one multiply in the output.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
FIXARGS=
applies mulb 1 0 exact mulb-to-multiply
has mulb 1 multiply

summary
