#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_sdpa_split_heads.sh: mil-sdpa-split-heads (src/rewrite/passes/mil_sdpa_split.c,
# docs/surgery.md): tests/fix_mil.sh's part of that name, on the fixtures
# tests/data/crafted/fix_mil_sdpa (.mlpackage).
exec sh tests/fix_mil.sh mil-sdpa-split-heads
