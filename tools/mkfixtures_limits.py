#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mkfixtures_limits.py: writes the fixtures of the ANE compile limits (ANE077-080,
tests/compile_limits.sh, tests/unit/test_rules.c) into tests/data/crafted/limit_*.mlpackage.

Small fp16 ML Programs whose sizes come from their declared shapes, never from stored bytes
(no weight.bin; every constant is an immediate of at most a few hundred values):

  limit_attn_32k   attention written as coremltools writes a PyTorch one: q [1,4,64,64] @ k^T
                   with k [1,4,32768,64], a scale, softmax over the last axis, @ v: 32768 keys,
                   the length seen failing (ANE077 sure on A18 / M5, iOS 26)
  limit_attn_16k   the same over 16384 keys: between 8192 (compiled) and 32768 (ANE077 uncertain)
  limit_attn_8k    the same over 8192 keys: the length seen compiling (ANE077 silent)
  limit_sdpa_32k   scaled_dot_product_attention (iOS 18 opset) over 32768 keys (ANE077 fires)
  limit_softmax_32k  a softmax over 32768 logits of a model input, no attention (ANE077 silent)
  limit_tensor_5568  a 1x1 conv 3 -> 8 channels over the 1x3x5568x5568 input of coremltools
                   #2247: a 496 MB output (ANE078 fires, uncertain)
  limit_tensor_4096  the same over 1x3x4096x4096: a 268 MB (256 MiB) output, the size seen
                   running on the ANE (ANE078 silent)
  limit_lut8       a 1x1 conv 64 -> 64 over [1,64,256,256] whose weight is palettized with
                   8-bit indices (a 256-entry LUT, iOS 18 constexpr_lut_to_dense) (ANE080)

Weights near the compile limit (ANE079) need weight bytes: test_rules.c writes them as a
sparse file. Deterministic: run `python3 tools/mkfixtures_limits.py` from the repository root.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from mkfixtures import (FLOAT16, array_feature, const, description, mil_program, model,  # noqa: E402
                        op, ttype, v_fp16_zeros, v_ints)
from mkfixtures_mil import f16, v_bool, v_half_scalar, v_int_scalar, write_package  # noqa: E402

OUT = os.path.join("tests", "data", "crafted")


def attention(keys):
    """q @ k^T * scale, softmax(-1), @ v over `keys` keys (iOS 17 opset)."""
    Q, K, S = [1, 4, 64, 64], [1, 4, keys, 64], [1, 4, 64, keys]
    ops = [
        const("no", v_bool(False), ttype("bool", [])),
        const("yes", v_bool(True), ttype("bool", [])),
        op("matmul", [("x", "q"), ("y", "k"), ("transpose_x", "no"), ("transpose_y", "yes")],
           [("scores", f16(S))], name="qk"),
        const("scale", v_half_scalar(0.125), f16([])),
        op("mul", [("x", "scores"), ("y", "scale")], [("scaled", f16(S))], name="scale_scores"),
        const("last", v_int_scalar(-1), ttype("int32", [])),
        op("softmax", [("x", "scaled"), ("axis", "last")], [("probs", f16(S))], name="attn_softmax"),
        op("matmul", [("x", "probs"), ("y", "v"), ("transpose_x", "no"), ("transpose_y", "no")],
           [("out", f16(Q))], name="pv"),
    ]
    inputs = [("q", Q), ("k", K), ("v", K)]
    desc = description([array_feature(n, d, FLOAT16) for n, d in inputs],
                       [array_feature("out", Q, FLOAT16)],
                       short=f"compile-limit fixture: attention over {keys} keys (ANE077)")
    return model(8, desc, 502, mil_program(inputs, ["out"], ops))


def sdpa(keys):
    Q, K = [1, 4, 64, 64], [1, 4, keys, 64]
    ops = [op("scaled_dot_product_attention", [("query", "q"), ("key", "k"), ("value", "v")],
              [("out", f16(Q))], name="sdpa")]
    inputs = [("q", Q), ("k", K), ("v", K)]
    desc = description([array_feature(n, d, FLOAT16) for n, d in inputs],
                       [array_feature("out", Q, FLOAT16)],
                       short=f"compile-limit fixture: scaled_dot_product_attention over {keys} keys")
    return model(9, desc, 502, mil_program(inputs, ["out"], ops, opset="CoreML8"))


def softmax_only(n):
    X = [1, 8, n]
    ops = [const("last", v_int_scalar(-1), ttype("int32", [])),
           op("softmax", [("x", "x"), ("axis", "last")], [("y", f16(X))], name="logits_softmax")]
    desc = description([array_feature("x", X, FLOAT16)], [array_feature("y", X, FLOAT16)],
                       short=f"compile-limit fixture: a softmax over {n} logits, no attention")
    return model(8, desc, 502, mil_program([("x", X)], ["y"], ops))


def big_conv(side):
    """A 1x1 conv 3 -> 8 channels over a [1, 3, side, side] input."""
    X, Y = [1, 3, side, side], [1, 8, side, side]
    ops = [
        const("w", v_fp16_zeros([8, 3, 1, 1]), f16([8, 3, 1, 1])),
        op("conv", [("x", "x"), ("weight", "w")], [("y", f16(Y))], name="conv_big"),
    ]
    desc = description([array_feature("x", X, FLOAT16)], [array_feature("y", Y, FLOAT16)],
                       short=f"compile-limit fixture: a conv over 1x3x{side}x{side} (ANE078)")
    return model(8, desc, 502, mil_program([("x", X)], ["y"], ops))


def lut8():
    """A 1x1 conv whose weight is palettized with 8-bit indices (iOS 18 LUT layout: the
    lut has the indices' rank + 2 axes, 256 entries of scalars)."""
    X, W = [1, 64, 256, 256], [64, 64, 1, 1]
    ops = [
        const("idx", v_ints([0] * 64 * 64, dims=W), ttype("int32", W)),
        const("lut", v_fp16_zeros([1, 1, 1, 1, 256, 1]), f16([1, 1, 1, 1, 256, 1])),
        op("constexpr_lut_to_dense", [("indices", "idx"), ("lut", "lut")], [("w_lut8", f16(W))],
           name="w_lut8"),
        op("conv", [("x", "x"), ("weight", "w_lut8")], [("y", f16(X))], name="conv_lut8"),
    ]
    desc = description([array_feature("x", X, FLOAT16)], [array_feature("y", X, FLOAT16)],
                       short="compile-limit fixture: 8-bit palettized weights (ANE080)")
    return model(9, desc, 502, mil_program([("x", X)], ["y"], ops, opset="CoreML8"))


def main():
    if not os.path.isdir(os.path.join("tests", "data")):
        sys.exit("run from the repository root")
    os.makedirs(OUT, exist_ok=True)
    for name, mb in (("limit_attn_32k", attention(32768)), ("limit_attn_16k", attention(16384)),
                     ("limit_attn_8k", attention(8192)), ("limit_sdpa_32k", sdpa(32768)),
                     ("limit_softmax_32k", softmax_only(32768)),
                     ("limit_tensor_5568", big_conv(5568)), ("limit_tensor_4096", big_conv(4096)),
                     ("limit_lut8", lut8())):
        write_package(os.path.join(OUT, name + ".mlpackage"), mb)
        print(f"{OUT}/{name}.mlpackage")


if __name__ == "__main__":
    main()
