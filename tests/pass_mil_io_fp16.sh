#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_io_fp16.sh: mil-io-fp16 (src/rewrite/passes/mil_io_fp16.c, docs/surgery.md):
# tests/fix_mil.sh's part of that name, on the fixtures tests/data/converted/cumsum__mlp_fp16
# (.mlpackage).
exec sh tests/fix_mil.sh mil-io-fp16
