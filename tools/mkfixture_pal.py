#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes tests/data/crafted/fix_mil_pal_ios17.mlpackage and
fix_mil_pal_ios18.mlpackage: a transformer feed-forward block whose two linear
weights are palettized (4-bit LUT) as coremltools 8.3's palettize_weights
writes them, for the layout pass (mil-block-bc1s-conv):
  x [1, 8, 16] -> linear 16->32 (W1 palettized), gelu, linear 32->16 (W2
  palettized), add x, layer_norm over the last axis -> y [1, 8, 16].
ios17 (spec 8, opset CoreML7): constexpr_lut_to_dense in its iOS 16 / 17 form,
  attributes indices (packed uint8 [N*K/2]), lut (fp16 [16], per tensor) and
  shape (uint32 [2], an immediate TensorValue.bytes) - as the corpus's
  convnet_pal4_tensor_ios17 writes them;
ios18 (spec 9, opset CoreML8): the iOS 18 form, inputs indices (uint4 [N, K],
  blob dtype 11) and lut (fp16 [N/8, 1, 16, 1]: per grouped channel, group 8)
  as literal blobs - as the corpus's tblock_pal4_grouped_g8_ios18 writes them;
  pre-LN: a layer_norm (no gamma / beta) on x before the first linear.
Biases and layer_norm's gamma / beta are fp16 blobs. Indices and table values
are deterministic. Run from the repository root: `python3 tools/mkfixture_pal.py`."""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
import mkfixtures  # noqa: E402
from mkfixtures import FLOAT16, array_feature, const, description, model, op, ttype, v_ints, value  # noqa: E402
from mkfixtures_mil import OUT, f16, v_blob, weight_bin, write_package  # noqa: E402
from mkfixtures import mil_program  # noqa: E402
from pbwire import f_bytes, f_msg  # noqa: E402

mkfixtures.DT.update({"uint8": 31, "uint32": 33, "uint4": 35})
X, C, F = [1, 8, 16], 16, 32


def table(k):
    return [((i * 5 + k) % 16 - 7.5) / 16.0 for i in range(16)]


def packed4(n, k):
    """n 4-bit indices, two a byte, the first in the low nibble."""
    idx = [(i * 7 + k) % 16 for i in range(n)]
    return bytes(idx[i] | (idx[i + 1] << 4) for i in range(0, n, 2))


def block(ios18):
    shapes = [(F, C), (C, F)]
    blobs, order = [], []
    for j, (n, k) in enumerate(shapes):
        blobs.append((11 if ios18 else 3, packed4(n * k, j)))
        lut = table(j) * (n // 8 if ios18 else 1)
        blobs.append((1, struct.pack("<%de" % len(lut), *lut)))
        order += [("idx%d" % j, n, k), ("lut%d" % j, n, k)]
    for j, m in enumerate([F, C, C, C]):
        blobs.append((1, struct.pack("<%de" % m, *[((i * 3 + j) % 11 - 5) / 16.0 for i in range(m)])))
    weights, offs = weight_bin(blobs)
    ops = []
    for j, (n, k) in enumerate(shapes):
        wn = "w%d_palettized" % (j + 1)
        if ios18:
            ix = v_blob("uint4", [n, k], offs[2 * j])
            lt = v_blob("fp16", [n // 8, 1, 16, 1], offs[2 * j + 1])
            ops.append(op("constexpr_lut_to_dense", [("indices", (None, ix)), ("lut", (None, lt))], [(wn, f16([n, k]))]))
        else:
            ix = v_blob("uint8", [n * k // 2], offs[2 * j])
            lt = v_blob("fp16", [16], offs[2 * j + 1])
            shape = value(ttype("uint32", [2]), f_msg(7, f_bytes(1, struct.pack("<2I", n, k))))
            ops.append(op("constexpr_lut_to_dense", [], [(wn, f16([n, k]))],
                          {"indices": ix, "lut": lt, "shape": shape}))
    ops += [
        const("b1", v_blob("fp16", [F], offs[4]), f16([F])),
        const("b2", v_blob("fp16", [C], offs[5]), f16([C])),
        const("gamma", v_blob("fp16", [C], offs[6]), f16([C])),
        const("beta", v_blob("fp16", [C], offs[7]), f16([C])),
        const("axes", v_ints([-1]), ttype("int32", [1])),
    ]
    xin = "x"
    if ios18:  # pre-LN: the run's entry op is this layer_norm
        xin = "xn"
        ops.append(op("layer_norm", [("x", "x"), ("axes", "axes")], [("xn", f16(X))]))
    ops += [
        op("linear", [("x", xin), ("weight", "w1_palettized"), ("bias", "b1")], [("h1", f16([1, 8, F]))]),
        op("gelu", [("x", "h1")], [("g", f16([1, 8, F]))]),
        op("linear", [("x", "g"), ("weight", "w2_palettized"), ("bias", "b2")], [("h2", f16(X))]),
        op("add", [("x", "x"), ("y", "h2")], [("r", f16(X))]),
        op("layer_norm", [("x", "r"), ("axes", "axes"), ("gamma", "gamma"), ("beta", "beta")], [("y", f16(X))]),
    ]
    desc = description([array_feature("x", X, FLOAT16)], [array_feature("y", X, FLOAT16)],
                       short="fix fixture: a feed-forward block with palettized weights -> the (B, C, 1, S) layout")
    spec, opset = (9, "CoreML8") if ios18 else (8, "CoreML7")
    return model(spec, desc, 502, mil_program([("x", X)], ["y"], ops, opset=opset)), weights


def main():
    if not os.path.isdir(os.path.join("tests", "data")):
        sys.exit("run from the repository root")
    for ios18 in (False, True):
        mb, w = block(ios18)
        path = os.path.join(OUT, "fix_mil_pal_ios%d.mlpackage" % (18 if ios18 else 17))
        write_package(path, mb, w)
        print(path)


if __name__ == "__main__":
    main()
