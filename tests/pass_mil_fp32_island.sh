#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_fp32_island.sh: mil-fp32-island (src/rewrite/passes/mil_fp32_island.c,
# docs/surgery.md): tests/fix_mil.sh's part of that name, on the fixtures
# tests/data/crafted/fix_mil_island (.mlpackage).
exec sh tests/fix_mil.sh mil-fp32-island
