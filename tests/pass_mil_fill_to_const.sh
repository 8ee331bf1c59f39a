#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_fill_to_const.sh: mil-fill-to-const (src/rewrite/passes/mil_fill_const.c,
# docs/surgery.md): tests/fix_mil.sh's part of that name, on the fixtures
# tests/data/crafted/fix_mil_fill (.mlpackage).
exec sh tests/fix_mil.sh mil-fill-to-const
