#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_matmul_const_bc1s_conv.sh: mil-matmul-const-bc1s-conv
# (src/rewrite/passes/mil_layout.c, docs/surgery.md): tests/fix_mil.sh's part of that name, on the
# fixtures tests/data/crafted/fix_mil_matmul (.mlpackage).
exec sh tests/fix_mil.sh mil-matmul-const-bc1s-conv
