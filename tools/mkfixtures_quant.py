#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mkfixtures_quant.py: writes the weight-quantization fixtures of `anelint fix`
(tests/data/crafted/fix_mil_blockq*.mlpackage; pass mil-blockwise-to-per-channel,
docs/surgery.md).

Small fp16 ML Programs (spec 9, iOS 18 opset) with int8 weights quantized per
block (constexpr_blockwise_shift_scale, data and scale immediate consts):

  fix_mil_blockq      x [1,8,4,4]: a conv whose weight [16,8,1,1] has blocks of
                      4 input channels (scale [16,2,1,1]): requantized per output
                      channel; a [8,32] weight with blocks of 16 read by a matmul
                      (refused: its output-channel axis is not known); and a
                      [8,32] weight whose scale is int32 (refused: the output is
                      not fp16 / fp32), read by no op
  fix_mil_blockq_bad  a linear whose weight [8,32] has a scale [8,3] that does
                      not divide it (refused: the interpreter cannot decode it)

The values are the int4 range [-8, 7] stored in int8, as coremltools writes a
per-block int4 weight, so the int8 per-channel grid does not hold them exactly.
Deterministic: run `python3 tools/mkfixtures_quant.py` from the repository root.
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from pbwire import f_bytes, f_msg, f_str  # noqa: E402
from mkfixtures import (FLOAT16, array_feature, const, description,  # noqa: E402
                        model, op, ttype, v_ints, value)
from mkfixtures_mil import write_package  # noqa: E402

OUT = os.path.join("tests", "data", "crafted")
NOTE = "generated test input, non-zero constants"


def f16(dims):
    return ttype("fp16", dims)


def v_half(vals, dims):
    return value(f16(dims), f_msg(7, f_bytes(1, struct.pack("<%de" % len(vals), *vals))))


def v_bool(x):
    return value(ttype("bool", []), f_msg(3, f_bytes(1, bytes([1 if x else 0]))))


def count(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def int4s(n, seed):
    """n values in [-8, 7] (a fixed pseudo-random walk)."""
    return [((i * 7 + seed * 13 + (i * i) % 5) % 16) - 8 for i in range(n)]


def scales(n, seed):
    """n positive fp16 scales between 1/64 and 1/8, no two rows alike."""
    return [(1 + ((i * 5 + seed) % 8)) / 64.0 for i in range(n)]


def blockwise(name, data_dims, scale_dims, seed, scale_dtype="fp16"):
    q = const(name + "_q", v_ints(int4s(count(data_dims), seed), dims=data_dims), ttype("int8", data_dims))
    if scale_dtype == "fp16":
        s = const(name + "_s", v_half(scales(count(scale_dims), seed), scale_dims), f16(scale_dims))
    else:
        s = const(name + "_s", v_ints([1 + i % 3 for i in range(count(scale_dims))], dims=scale_dims),
                  ttype(scale_dtype, scale_dims))
    w = op("constexpr_blockwise_shift_scale", [("data", name + "_q"), ("scale", name + "_s")],
           [(name, ttype("fp16" if scale_dtype == "fp16" else scale_dtype, data_dims))])
    return [q, s, w]


def program(inputs, outs, ops):
    block = b"".join(f_str(2, o) for o in outs) + b"".join(ops)
    fn = b"".join(f_msg(1, f_str(1, n) + f_msg(2, f16(d))) for n, d in inputs) + f_str(2, "CoreML8") + \
        f_msg(3, f_str(1, "CoreML8"), f_msg(2, block))
    return b"\x08\x01" + f_msg(2, f_str(1, "main"), f_msg(2, fn))


def fix_mil_blockq():
    ops = blockwise("wc", [16, 8, 1, 1], [16, 2, 1, 1], 1)
    ops += [
        const("c_strides", v_ints([1, 1]), ttype("int32", [2])),
        const("c_pad", v_ints([0, 0, 0, 0]), ttype("int32", [4])),
        const("c_dil", v_ints([1, 1]), ttype("int32", [2])),
        const("c_groups", v_ints([1], []), ttype("int32", [])),
        const("c_pad_type", value(ttype("string", []), f_msg(4, f_str(1, "valid"))), ttype("string", [])),
        op("conv", [("x", "x"), ("weight", "wc"), ("strides", "c_strides"), ("pad_type", "c_pad_type"),
                    ("pad", "c_pad"), ("dilations", "c_dil"), ("groups", "c_groups")],
           [("y", f16([1, 16, 4, 4]))]),
    ]
    ops += [const("r_shape", v_ints([1, 128]), ttype("int32", [2])),
            op("reshape", [("x", "x"), ("shape", "r_shape")], [("xf", f16([1, 128]))])]
    ops += blockwise("wm", [8, 128], [8, 8], 2)
    ops += [const("no", v_bool(False), ttype("bool", [])), const("yes", v_bool(True), ttype("bool", [])),
            op("matmul", [("x", "xf"), ("y", "wm"), ("transpose_x", "no"), ("transpose_y", "yes")],
               [("m", f16([1, 8]))])]
    ops += blockwise("wi", [8, 32], [8, 2], 3, scale_dtype="int32")
    desc = description([array_feature("x", [1, 8, 4, 4], FLOAT16)],
                       [array_feature(o, [], FLOAT16) for o in ("y", "m")],
                       short="fix fixture: int8 weights quantized per block", weights=NOTE)
    return model(9, desc, 502, program([("x", [1, 8, 4, 4])], ["y", "m"], ops))


def fix_mil_blockq_bad():
    ops = blockwise("wb", [8, 32], [8, 3], 4)
    ops += [op("linear", [("x", "x"), ("weight", "wb")], [("y", f16([1, 8]))])]
    desc = description([array_feature("x", [1, 32], FLOAT16)], [array_feature("y", [], FLOAT16)],
                       short="fix fixture: a per-block weight the interpreter cannot decode", weights=NOTE)
    return model(9, desc, 502, program([("x", [1, 32])], ["y"], ops))


def main():
    if not os.path.isdir(os.path.join("tests", "data")):
        sys.exit("run from the repository root")
    os.makedirs(OUT, exist_ok=True)
    for name, mb in (("fix_mil_blockq", fix_mil_blockq()), ("fix_mil_blockq_bad", fix_mil_blockq_bad())):
        write_package(os.path.join(OUT, name + ".mlpackage"), mb)
        print(f"{OUT}/{name}.mlpackage")


if __name__ == "__main__":
    main()
