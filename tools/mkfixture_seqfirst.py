#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes tests/data/crafted/fix_mil_seqfirst.mlpackage: sequence-first
self-attention as coremltools 8.3 converts PyTorch's nn.MultiheadAttention
without batch_first (the ops and their order as in the corpus's
transformer_encoder__mlp_fp16: transpose [B, S, C] -> [S, B, C], the fused
in-projection linear, split of q / k / v on the channel axis, reshape to
[S, B*H, D], q scaled, transposes perm [1, -3, -1] / [1, -1, -3] / [1, 0, 2],
matmul, softmax axis -1, matmul, transpose back, reshape to the rank-2
[S*B, C], the out-projection linear, reshape [S, B, C], transpose back,
residual add, layer_norm). Three blocks of C 16, 2 heads of 8, S 6:
  x  [1, 6, 16] (B = 1): carried through the (B, C, 1, S) layout;
  x2 [2, 6, 16] (B = 2: the heads merged with a batch of 2, [S, B*H, D]):
     carried too; its [S, B, C] out-projection o2 is also a model output (an
     exit back to the sequence-first form);
  x3 [1, 6, 16]: its attention weights p3 are also a model output, so no run
     can carry the attention (refused).
The weights (in_proj [48, 16] + [48], out_proj [16, 16] + [16], fp16) are
shared by both blocks. Run from the repository root:
`python3 tools/mkfixture_seqfirst.py`. Deterministic."""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from mkfixtures import const, op, ttype, v_ints  # noqa: E402
from mkfixtures_mil import (OUT, f16, program, v_blob, v_half_scalar, v_int_scalar,  # noqa: E402
                            weight_bin, write_package)

S, C, H, D = 6, 16, 2, 8


def vals(n, k):
    return [((i * 37 + k) % 23 - 11) / 32.0 for i in range(n)]


def block(t, xin, B):
    def n(s):
        return s + t
    X, SBC, QKV = [B, S, C], [S, B, C], [S, B, 3 * C]
    SH, HS = [S, B * H, D], [B * H, S, D]
    return [
        const(n("p102"), v_ints([1, 0, 2]), ttype("int32", [3])),
        op("transpose", [("x", xin), ("perm", n("p102"))], [(n("q_in"), f16(SBC))]),
        op("linear", [("x", n("q_in")), ("weight", "w_in"), ("bias", "b_in")], [(n("lin"), f16(QKV))]),
        const(n("sizes"), v_ints([C, C, C]), ttype("int32", [3])),
        const(n("ax"), v_int_scalar(-1), ttype("int32", [])),
        op("split", [("x", n("lin")), ("split_sizes", n("sizes")), ("axis", n("ax"))],
           [(n("q"), f16(SBC)), (n("k"), f16(SBC)), (n("v"), f16(SBC))]),
        const(n("heads"), v_ints(SH), ttype("int32", [3])),
        op("reshape", [("x", n("q")), ("shape", n("heads"))], [(n("rq"), f16(SH))]),
        op("reshape", [("x", n("k")), ("shape", n("heads"))], [(n("rk"), f16(SH))]),
        op("reshape", [("x", n("v")), ("shape", n("heads"))], [(n("rv"), f16(SH))]),
        const(n("scale"), v_half_scalar(0.25), f16([])),
        op("mul", [("x", n("rq")), ("y", n("scale"))], [(n("sq"), f16(SH))]),
        const(n("pk"), v_ints([1, -1, -3]), ttype("int32", [3])),
        op("transpose", [("x", n("rk")), ("perm", n("pk"))], [(n("tk"), f16([B * H, D, S]))]),
        const(n("pq"), v_ints([1, -3, -1]), ttype("int32", [3])),
        op("transpose", [("x", n("sq")), ("perm", n("pq"))], [(n("tq"), f16(HS))]),
        const(n("no"), value_bool(False), ttype("bool", [])),
        op("matmul", [("x", n("tq")), ("y", n("tk")), ("transpose_x", n("no")), ("transpose_y", n("no"))],
           [(n("s"), f16([B * H, S, S]))]),
        const(n("last"), v_int_scalar(-1), ttype("int32", [])),
        op("softmax", [("x", n("s")), ("axis", n("last"))], [(n("p"), f16([B * H, S, S]))]),
        op("transpose", [("x", n("rv")), ("perm", n("p102"))], [(n("tv"), f16(HS))]),
        op("matmul", [("x", n("p")), ("y", n("tv")), ("transpose_x", n("no")), ("transpose_y", n("no"))],
           [(n("c"), f16(HS))]),
        op("transpose", [("x", n("c")), ("perm", n("p102"))], [(n("tc"), f16(SH))]),
        const(n("flat"), v_ints([S * B, C]), ttype("int32", [2])),
        op("reshape", [("x", n("tc")), ("shape", n("flat"))], [(n("j"), f16([S * B, C]))]),
        op("linear", [("x", n("j")), ("weight", "w_out"), ("bias", "b_out")], [(n("lo"), f16([S * B, C]))]),
        const(n("sbc"), v_ints(SBC), ttype("int32", [3])),
        op("reshape", [("x", n("lo")), ("shape", n("sbc"))], [(n("o"), f16(SBC))]),
        op("transpose", [("x", n("o")), ("perm", n("p102"))], [(n("ob"), f16(X))]),
        op("add", [("x", xin), ("y", n("ob"))], [(n("r"), f16(X))]),
        const(n("axes"), v_ints([-1]), ttype("int32", [1])),
        op("layer_norm", [("x", n("r")), ("axes", n("axes"))], [(n("y"), f16(X))]),
    ]


def value_bool(x):
    from mkfixtures_mil import v_bool
    return v_bool(x)


def main():
    if not os.path.isdir(os.path.join("tests", "data")):
        sys.exit("run from the repository root")
    blobs = [(1, struct.pack("<%de" % m, *vals(m, k))) for k, m in enumerate([3 * C * C, 3 * C, C * C, C])]
    weights, offs = weight_bin(blobs)
    ops = [const("w_in", v_blob("fp16", [3 * C, C], offs[0]), f16([3 * C, C])),
           const("b_in", v_blob("fp16", [3 * C], offs[1]), f16([3 * C])),
           const("w_out", v_blob("fp16", [C, C], offs[2]), f16([C, C])),
           const("b_out", v_blob("fp16", [C], offs[3]), f16([C]))]
    ops += block("", "x", 1) + block("2", "x2", 2) + block("3", "x3", 1)
    mb = program([("x", [1, S, C]), ("x2", [2, S, C]), ("x3", [1, S, C])],
                 [("y", [1, S, C]), ("y2", [2, S, C]), ("o2", [S, 2, C]), ("y3", [1, S, C]), ("p3", [H, S, S])], ops,
                 "fix fixture: sequence-first self-attention -> the (B, C, 1, S) layout")
    path = os.path.join(OUT, "fix_mil_seqfirst.mlpackage")
    write_package(path, mb, weights)
    print(path)


if __name__ == "__main__":
    main()
