#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_cumsum_to_matmul.sh: mil-cumsum-to-matmul (src/rewrite/passes/mil_cumsum_matmul.c,
# docs/surgery.md): tests/fix_mil.sh's part of that name, on the fixtures
# tests/data/crafted/fix_mil_cumsum, converted/cumsum__mlp_fp16 (.mlpackage).
exec sh tests/fix_mil.sh mil-cumsum-to-matmul
