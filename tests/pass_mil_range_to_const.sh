#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_range_to_const.sh: mil-range-to-const (src/rewrite/passes/mil_range_const.c,
# docs/surgery.md): tests/fix_mil.sh's part of that name, on the fixtures
# tests/data/crafted/fix_mil_range (.mlpackage).
exec sh tests/fix_mil.sh mil-range-to-const
