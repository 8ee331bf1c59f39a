#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_lstm_unroll_fp16.sh: mil-lstm-unroll-fp16 (src/rewrite/passes/mil_recurrent.c,
# docs/surgery.md): tests/pass_mil_lstm_unroll.sh's part of that name, on the fixture
# tests/data/crafted/pass_mil_lstm_unroll_fp32 (.mlpackage).
exec sh tests/pass_mil_lstm_unroll.sh mil-lstm-unroll-fp16
