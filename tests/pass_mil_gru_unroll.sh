#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_gru_unroll.sh: mil-gru-unroll (src/rewrite/passes/mil_recurrent.c,
# docs/surgery.md): tests/fix_mil.sh's part of that name, on the fixtures
# tests/data/crafted/fix_mil_gru (.mlpackage).
exec sh tests/fix_mil.sh mil-gru-unroll
