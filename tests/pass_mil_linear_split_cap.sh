#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_linear_split_cap.sh: mil-linear-split-cap (src/rewrite/passes/mil_linear_split.c,
# docs/surgery.md): tests/fix_mil.sh's part of that name, on the fixtures
# tests/data/crafted/fix_mil_lmhead (.mlpackage).
exec sh tests/fix_mil.sh mil-linear-split-cap
