#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_block_bc1s_conv.sh: mil-block-bc1s-conv (src/rewrite/passes/mil_layout.c,
# docs/surgery.md): tests/fix_mil.sh's part of that name, on the fixtures
# tests/data/crafted/fix_mil_bc, fix_mil_attn, fix_mil_flex, fix_mil_xattn (.mlpackage).
exec sh tests/fix_mil.sh mil-block-bc1s-conv
