#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_fill_like_to_const.sh: mil-fill-like-to-const
# (src/rewrite/passes/mil_fill_like_const.c, docs/surgery.md): tests/fix_mil.sh's part of that name,
# on the fixtures tests/data/crafted/fix_mil_fill_like (.mlpackage).
exec sh tests/fix_mil.sh mil-fill-like-to-const
