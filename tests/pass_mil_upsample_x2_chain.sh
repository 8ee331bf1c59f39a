#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_upsample_x2_chain.sh: mil-upsample-x2-chain
# (src/rewrite/passes/mil_upsample_chain.c, docs/surgery.md): tests/fix_mil.sh's part of that name,
# on the fixtures tests/data/crafted/fix_mil_upsample (.mlpackage).
exec sh tests/fix_mil.sh mil-upsample-x2-chain
