#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mkfixtures_mil.py: writes the ML Program fixtures of `anelint fix`
(tests/data/crafted/fix_mil_*.mlpackage, docs/surgery.md).

Small fp16 ML Programs (spec 8, iOS 17 opset) whose CPU-only ops have results
known when the file is read, so that the ML Program passes can fold them:

  fix_mil_range      range_1d of constant start/end/step: a 16-value fp16 range
                     (folded into a new weight.bin blob), a 4-value one
                     (immediate), and one whose values are not exact in fp16
                     (0 to 0.35 in 0.1 steps: refused)
  fix_mil_fill       fill of a constant shape and value, in a package that
                     already has a weight.bin with one blob (the new blob goes
                     after it), plus a fill whose value is computed (refused)
  fix_mil_fill_like  fill_like of a static ref_tensor, and one of the default
                     value (0.0)
  fix_mil_cumsum     cumsum variants on a static [2,8,12] fp16 input: axis -1
                     exclusive, axis -2 reverse, axis -1 exclusive+reverse, and
                     axis 0 (not one of the last two: refused)
  fix_mil_matmul     x [1,8,16] @ a constant [16,32] weight (transpose_y false:
                     copied transposed), gelu, @ a constant [16,32] weight with
                     transpose_y (its blob as it is), add x (-> 1x1 convs in the
                     (B, C, 1, S) layout); a matmul by an immediate weight
                     (refused)
  fix_mil_matmul_lone  x [1,16384,64] @ a constant [8,64] weight with transpose_y
                     (output [1,16384,8]: ANE062 fires, a 1 MiB padded short last
                     axis), then x @ w, w a [64,8] model input: a lone matmul by
                     a constant (refused: a 1x1 conv would clear no finding,
                     the [B, S, N] output stays), and one of two runtime
                     tensors (not a candidate); fix_mil_matmul_lone_conv: the
                     same with the first matmul as the 1x1 conv a lone-matmul
                     pass would write (reshape, transpose, conv [8,64,1,1],
                     transpose, reshape), written by hand: ANE062 fires on
                     both exit ops, so such a pass would add a finding
  fix_mil_attn       two batch-first self-attention blocks (x [1,8,16], 2 heads
                     of 8, the ops coremltools writes for a PyTorch one): the
                     first carried through the layout, the second refused (its
                     attention weights are a model output)
  fix_mil_lstm       two forward fp16 lstms (I = H = 4): 3 steps, last step
                     only, every output read (unrolled with --allow reassociate),
                     and 20 steps, the whole sequence (refused: more than 16)
  pass_mil_lstm_unroll_fp32 / _fp16  an fp32 iOS 15 program: a bidirectional
                     lstm (whole sequence) into a reverse one (last step), and a
                     clipped one (refused); an fp16 iOS 17 one: a bidirectional
                     lstm (last step) and a reverse one (whole sequence)
  pass_mil_while_unroll  two while_loops as coremltools writes PyTorch's GRU
                     (gather at the index, scatter at index + 1): one unrolled,
                     one whose index is read by a mul (refused)
  fix_mil_gru        three fp16 grus (I = 4, H = 4): 3 steps forward, last step
                     only, weights in weight.bin (unrolled with --allow
                     reassociate); 4 steps reverse, the whole sequence,
                     immediate weights, no bias (unrolled); 20 steps (refused)
  fix_mil_island     two fp32 islands in an fp16 program: cast up, relu, add,
                     cast back (rewritten with --allow approximate), and cast
                     up, mul by an fp32 constant, cast back (refused: the
                     constant would need converting)
  fix_mil_fp32       an fp32 ML Program (compute_precision FLOAT32, fp32 I/O)
                     for mil-fp16-compute: a clip whose bounds (+-70000) are
                     beyond fp16 (kept fp32 between casts; its result is also
                     a model output), add of a 4-value constant with a 1e-9
                     (-> 2^-24 in fp16), relu, mul by a 16-value constant (a
                     new fp16 blob), cast to int32 and back to fp32 (-> to
                     fp16), add
  fix_mil_sdpa       scaled_dot_product_attention (spec 9, iOS 18 opset):
                     a: 4 heads of E 16 (1/4 exact in fp16) with a per-head
                     fp16 mask input [1,4,6,8]; b: 2 heads of E 32 (the scale as
                     two fp16 factors), no mask; c: a bool mask (refused);
                     d: E 48 (no two fp16 factors close enough: refused)
  fix_mil_flex       the feed-forward block of fix_mil_bc1s twice, on flexible
                     inputs: xs [1, ?, 16] (enumerated sequence lengths 8, 4:
                     -> the (B, C, 1, S) layout, reshapes with -1) and xb
                     [?, 8, 16] (batch range 1..4: refused, a symbolic batch)
  fix_mil_xattn      cross-attention (2 heads of 8): queries from x [1,8,16],
                     keys and values from m [1,6,16] (another sequence length),
                     out projection, residual add x (-> one run in the (B, C, 1, S)
                     layout, the scores [1,2,6,8] keys-first)
  fix_mil_bc1s       a transformer feed-forward block on x [1,8,16] (fp16,
                     weights in weight.bin): linear 16->32, gelu, linear 32->16,
                     add x, layer_norm over the last axis (-> the (B, C, 1, S)
                     layout); a lone linear between reshapes, and a linear
                     with an immediate weight (both refused)

The protobuf bytes are written by hand with the helpers of tools/mkfixtures.py
(field numbers from coremltools' MIL.proto, coreml-format-facts.md section 7);
weight.bin follows storage v2 (section 8). Deterministic: run
`python3 tools/mkfixtures_mil.py` from the repository root.
"""

import json
import os
import shutil
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from pbwire import f_bytes, f_msg, f_str, f_varint  # noqa: E402
from mkfixtures import (FLOAT16, INT32, array_feature, const, description,  # noqa: E402
                        dict_feature, dict_type, mil_program, model, named, op,
                        shape_range_feature, string_feature, ttype, v_floats, v_ints, v_string,
                        value)

OUT = os.path.join("tests", "data", "crafted")


def f16(dims):
    return ttype("fp16", dims)


def v_half(vals, dims):
    """An immediate fp16 tensor: TensorValue.bytes = 7 {values = 1}."""
    return value(f16(dims), f_msg(7, f_bytes(1, struct.pack("<%de" % len(vals), *vals))))


def v_half_scalar(x):
    return v_half([x], [])


def v_int_scalar(x):
    return v_ints([x], [])


def v_bool(x):
    return value(ttype("bool", []), f_msg(3, f_bytes(1, bytes([1 if x else 0]))))


def v_blob(dtype, dims, offset):
    """Value{type, blobFileValue = 5 {fileName 1, offset 2}}."""
    return f_msg(2, ttype(dtype, dims)) + \
        f_msg(5, f_str(1, "@model_path/weights/weight.bin"), f_varint(2, offset))


def weight_bin(blobs):
    """Storage v2: 64-byte header {count, version 2}, then per blob 64-byte
    metadata {0xDEADBEEF, dtype, size, data offset} and the data, each record
    at a multiple of 64. Returns the bytes and the metadata offsets."""
    out = bytearray(struct.pack("<II", len(blobs), 2) + b"\0" * 56)
    offs = []
    for dtype, data in blobs:
        while len(out) % 64:
            out.append(0)
        meta = len(out)
        offs.append(meta)
        out += struct.pack("<IIQQ", 0xDEADBEEF, dtype, len(data), meta + 64) + b"\0" * 40
        out += data
    return bytes(out), offs


def write_package(path, model_bytes, weights=None):
    if os.path.isdir(path):
        shutil.rmtree(path)
    data = os.path.join(path, "Data", "com.apple.CoreML")
    os.makedirs(data)
    with open(os.path.join(data, "model.mlmodel"), "wb") as f:
        f.write(model_bytes)
    if weights is not None:
        os.makedirs(os.path.join(data, "weights"))
        with open(os.path.join(data, "weights", "weight.bin"), "wb") as f:
            f.write(weights)
    manifest = {
        "fileFormatVersion": "1.0.0",
        "itemInfoEntries": {
            "00000000-0000-0000-0000-00000000000a": {
                "author": "com.apple.CoreML",
                "description": "CoreML Model Specification",
                "name": "model.mlmodel",
                "path": "com.apple.CoreML/model.mlmodel",
            },
            "00000000-0000-0000-0000-00000000000b": {
                "author": "com.apple.CoreML",
                "description": "CoreML Model Weights",
                "name": "weights",
                "path": "com.apple.CoreML/weights",
            },
        },
        "rootModelIdentifier": "00000000-0000-0000-0000-00000000000a",
    }
    with open(os.path.join(path, "Manifest.json"), "w") as f:
        json.dump(manifest, f, indent=4, sort_keys=True)
        f.write("\n")


def program(inputs, outputs, ops, short):
    """inputs/outputs: [(name, dims)], all fp16."""
    desc = description([array_feature(n, d, FLOAT16) for n, d in inputs],
                       [array_feature(n, d, FLOAT16) for n, d in outputs], short=short)
    return model(8, desc, 502, mil_program(inputs, [n for n, _ in outputs], ops))


def fix_mil_range():
    ops = [
        const("s0", v_half_scalar(0.0), f16([])),
        const("e16", v_half_scalar(16.0), f16([])),
        const("one", v_half_scalar(1.0), f16([])),
        op("range_1d", [("start", "s0"), ("end", "e16"), ("step", "one")], [("r16", f16([16]))]),
        op("mul", [("x", "x"), ("y", "r16")], [("y", f16([1, 16]))]),
        const("e2", v_half_scalar(2.0), f16([])),
        const("half", v_half_scalar(0.5), f16([])),
        op("range_1d", [("start", "s0"), ("end", "e2"), ("step", "half")], [("r4", f16([4]))]),
        op("add", [("x", "v"), ("y", "r4")], [("z", f16([4]))]),
        # fp16 0.1 = 1638 * 2^-14: 3 * that needs 13 significant bits -> refused
        const("e035", v_half_scalar(0.35), f16([])),
        const("tenth", v_half_scalar(0.1), f16([])),
        op("range_1d", [("start", "s0"), ("end", "e035"), ("step", "tenth")], [("r3", f16([4]))]),
        op("add", [("x", "u"), ("y", "r3")], [("w", f16([4]))]),
    ]
    return program([("x", [1, 16]), ("v", [4]), ("u", [4])], [("y", [1, 16]), ("z", [4]), ("w", [4])],
                   ops, "fix fixture: range_1d of constants -> const")


def fix_mil_fill():
    weights, (w_off,) = weight_bin([(1, struct.pack("<16e", *[0.25 * i for i in range(16)]))])
    ops = [
        const("w", v_blob("fp16", [1, 16], w_off), f16([1, 16])),
        op("mul", [("x", "x"), ("y", "w")], [("xw", f16([1, 16]))]),
        const("shape", v_ints([1, 16]), ttype("int32", [2])),
        const("two", v_half_scalar(2.0), f16([])),
        op("fill", [("shape", "shape"), ("value", "two")], [("f", f16([1, 16]))]),
        op("add", [("x", "xw"), ("y", "f")], [("y", f16([1, 16]))]),
        # a fill whose value is computed at run time: refused
        const("shape4", v_ints([4]), ttype("int32", [1])),
        const("ax", v_ints([0], []), ttype("int32", [])),
        const("kd", v_bool(False), ttype("bool", [])),
        op("reduce_max", [("x", "v"), ("keep_dims", "kd")], [("vmax", f16([]))]),
        op("fill", [("shape", "shape4"), ("value", "vmax")], [("g", f16([4]))]),
        op("add", [("x", "v"), ("y", "g")], [("z", f16([4]))]),
    ]
    return program([("x", [1, 16]), ("v", [4])], [("y", [1, 16]), ("z", [4])], ops,
                   "fix fixture: fill of constants -> const (weight.bin has a blob)"), weights


def fix_mil_fill_like():
    ops = [
        const("three", v_half_scalar(3.0), f16([])),
        op("fill_like", [("ref_tensor", "x"), ("value", "three")], [("f", f16([2, 8]))]),
        op("mul", [("x", "x"), ("y", "f")], [("y", f16([2, 8]))]),
        op("fill_like", [("ref_tensor", "v")], [("g", ttype("fp32", [3]))]),
        op("cast", [("x", "v"), ("dtype", "fp32name")], [("v32", ttype("fp32", [3]))]),
        op("add", [("x", "v32"), ("y", "g")], [("z32", ttype("fp32", [3]))]),
        op("cast", [("x", "z32"), ("dtype", "fp16name")], [("z", f16([3]))]),
    ]
    ops.insert(3, const("fp32name", value(ttype("string", []), f_msg(4, f_str(1, "fp32"))),
                        ttype("string", [])))
    ops.insert(4, const("fp16name", value(ttype("string", []), f_msg(4, f_str(1, "fp16"))),
                        ttype("string", [])))
    return program([("x", [2, 8]), ("v", [3])], [("y", [2, 8]), ("z", [3])], ops,
                   "fix fixture: fill_like of a static shape -> const")


def fix_mil_cumsum():
    ops = []
    outs = []
    for i, (axis, ex, rev) in enumerate([(-1, True, False), (-2, False, True), (2, True, True),
                                         (0, False, False)]):
        ops += [
            const("ax%d" % i, v_int_scalar(axis), ttype("int32", [])),
            const("ex%d" % i, v_bool(ex), ttype("bool", [])),
            const("rev%d" % i, v_bool(rev), ttype("bool", [])),
            op("cumsum", [("x", "x"), ("axis", "ax%d" % i), ("exclusive", "ex%d" % i),
                          ("reverse", "rev%d" % i)], [("c%d" % i, f16([2, 8, 12]))]),
        ]
        outs.append("c%d" % i)
    ops += [op("add", [("x", "c0"), ("y", "c1")], [("s01", f16([2, 8, 12]))]),
            op("add", [("x", "s01"), ("y", "c2")], [("y", f16([2, 8, 12]))]),
            op("add", [("x", "c3"), ("y", "x")], [("z", f16([2, 8, 12]))])]
    return program([("x", [2, 8, 12])], [("y", [2, 8, 12]), ("z", [2, 8, 12])], ops,
                   "fix fixture: cumsum variants -> matmul by a triangle")


def fix_mil_island():
    X = [1, 8, 4, 4]
    f32 = lambda dims: ttype("fp32", dims)
    ops = [
        const("to32", v_string("fp32"), ttype("string", [])),
        const("to16", v_string("fp16"), ttype("string", [])),
        op("cast", [("x", "x"), ("dtype", "to32")], [("a32", f32(X))]),
        op("relu", [("x", "a32")], [("r32", f32(X))]),
        op("add", [("x", "r32"), ("y", "a32")], [("s32", f32(X))]),
        op("cast", [("x", "s32"), ("dtype", "to16")], [("y", f16(X))]),
        op("cast", [("x", "x"), ("dtype", "to32")], [("b32", f32(X))]),
        const("k32", v_floats([0.5]), f32([1])),
        op("mul", [("x", "b32"), ("y", "k32")], [("m32", f32(X))]),
        op("cast", [("x", "m32"), ("dtype", "to16")], [("z", f16(X))]),
    ]
    return program([("x", X)], [("y", X), ("z", X)], ops,
                   "fix fixture: fp32 islands -> fp16 (one rewritten, one refused)")


def fix_mil_fp32():
    X = [1, 4, 2, 2]
    f32 = lambda dims: ttype("fp32", dims)
    ops = [
        const("lo", v_floats([-70000.0], []), f32([])),
        const("hi", v_floats([70000.0], []), f32([])),
        op("clip", [("x", "x"), ("alpha", "lo"), ("beta", "hi")], [("c", f32(X))]),
        const("k", v_floats([0.5, -0.25, 1e-9, 2.0], [4, 1, 1]), f32([4, 1, 1])),
        op("add", [("x", "c"), ("y", "k")], [("a", f32(X))]),
        op("relu", [("x", "a")], [("r", f32(X))]),
        const("t", v_floats([0.125 * i - 1.0 for i in range(16)], X), f32(X)),
        op("mul", [("x", "r"), ("y", "t")], [("w", f32(X))]),
        const("to_i", v_string("int32"), ttype("string", [])),
        const("to_f", v_string("fp32"), ttype("string", [])),
        op("cast", [("x", "w"), ("dtype", "to_i")], [("wi", ttype("int32", X))]),
        op("cast", [("x", "wi"), ("dtype", "to_f")], [("wf", f32(X))]),
        op("add", [("x", "w"), ("y", "wf")], [("y", f32(X))]),
    ]
    desc = description([array_feature("x", X)], [array_feature("y", X), array_feature("c", X)],
                       short="fix fixture: an fp32 program -> fp16 compute")
    block = b"".join(f_str(2, o) for o in ("y", "c")) + b"".join(ops)
    fn = f_msg(1, named("x", f32(X))) + f_str(2, "CoreML6") + f_msg(3, f_str(1, "CoreML6"), f_msg(2, block))
    return model(7, desc, 502, f_varint(1, 1) + f_msg(2, f_str(1, "main"), f_msg(2, fn)))


def fix_valid_ios15():
    """An fp32 program on the iOS 15 opset (spec 6) with the inputs whose op
    definitions take fp32 only: an lstm (every input), upsample_bilinear /
    upsample_nearest_neighbor scale factors, classify's probabilities."""
    f32 = lambda dims: ttype("fp32", dims)
    X, S, H = [1, 2, 4, 4], [3, 1, 4], 4
    U = [1, 2, 8, 8]
    wv = lambda n, k: [((i * 7 + k) % 11 - 5) / 16.0 for i in range(n)]
    ops = [
        const("sf2", v_floats([2.0], []), f32([])),
        const("no", v_bool(False), ttype("bool", [])),
        op("upsample_bilinear", [("x", "x"), ("scale_factor_height", "sf2"), ("scale_factor_width", "sf2"),
                                 ("align_corners", "no")], [("u", f32(U))]),
        op("upsample_nearest_neighbor", [("x", "x"), ("scale_factor_height", "sf2"),
                                         ("scale_factor_width", "sf2")], [("nn", f32(U))]),
        op("add", [("x", "u"), ("y", "nn")], [("un", f32(U))]),
        const("wih", v_floats(wv(4 * H * 4, 1), [4 * H, 4]), f32([4 * H, 4])),
        const("whh", v_floats(wv(4 * H * H, 2), [4 * H, H]), f32([4 * H, H])),
        const("b", v_floats(wv(4 * H, 3), [4 * H]), f32([4 * H])),
        const("h0", v_floats([0.0] * H, [1, H]), f32([1, H])),
        const("c0", v_floats([0.0] * H, [1, H]), f32([1, H])),
        const("fwd", v_string("forward"), ttype("string", [])),
        op("lstm", [("x", "s"), ("initial_h", "h0"), ("initial_c", "c0"), ("weight_ih", "wih"),
                    ("weight_hh", "whh"), ("bias", "b"), ("direction", "fwd"), ("output_sequence", "no")],
           [("y", f32([1, 1, H])), ("h", f32([1, H])), ("c", f32([1, H]))]),
        op("relu", [("x", "h")], [("hr", f32([1, H]))]),
        const("ax", v_int_scalar(-1), ttype("int32", [])),
        op("softmax", [("x", "hr"), ("axis", "ax")], [("p", f32([1, H]))]),
        # classes: a list of scalar strings, as coremltools writes it (ValueType.listType 2
        # {type 1, length 2}; ImmediateValue.list 3 {values 1})
        op("classify", [("probabilities", "p"),
                        ("classes", ("value", f_msg(2, f_msg(2, ttype("string", []),
                                                             f_msg(2, f_msg(1, f_varint(1, H))))) +
                                     f_msg(3, f_msg(3, *[f_msg(1, v_string(c)) for c in "abcd"]))))],
           [("classLabel", ttype("string", [])),
            ("probs", dict_type(ttype("string", []), ttype("fp64", [])))]),
    ]
    outs = ["un", "hr", "classLabel", "probs"]
    desc = description([array_feature("x", X), array_feature("s", S)],
                       [array_feature("un", U), array_feature("hr", [1, H]), string_feature("classLabel"),
                        dict_feature("probs")], predicted="classLabel", probs="probs",
                       short="fix fixture: an fp32 iOS 15 program whose lstm, upsample scale factors "
                             "and classify probabilities must stay fp32")
    block = b"".join(f_str(2, o) for o in outs) + b"".join(ops)
    fn = f_msg(1, named("x", f32(X))) + f_msg(1, named("s", f32(S))) + f_str(2, "CoreML5") + \
        f_msg(3, f_str(1, "CoreML5"), f_msg(2, block))
    return model(6, desc, 502, f_varint(1, 1) + f_msg(2, f_str(1, "main"), f_msg(2, fn)))


def mil_invalid_ops():
    """An iOS 15 program Core ML refuses to compile: an fp16 upsample scale
    factor, an add of fp32 and fp16, a transpose whose perm is a model input."""
    f32 = lambda dims: ttype("fp32", dims)
    X, U = [1, 2, 4, 4], [1, 2, 8, 8]
    ops = [
        const("sf16", v_half_scalar(2.0), f16([])),
        op("upsample_nearest_neighbor", [("x", "x"), ("scale_factor_height", "sf16"),
                                         ("scale_factor_width", "sf16")], [("a", f32(U))]),
        const("h16", v_half([1.0], [1]), f16([1])),
        op("add", [("x", "x"), ("y", "h16")], [("b", f32(X))]),
        op("transpose", [("x", "x"), ("perm", "p")], [("t", f32(X))]),
    ]
    outs = ["a", "b", "t"]
    desc = description([array_feature("x", X), array_feature("p", [4], INT32)],
                       [array_feature("a", U), array_feature("b", X), array_feature("t", X)],
                       short="check fixture: three op inputs the iOS 15 op definitions refuse")
    block = b"".join(f_str(2, o) for o in outs) + b"".join(ops)
    fn = f_msg(1, named("x", f32(X))) + f_msg(1, named("p", ttype("int32", [4]))) + f_str(2, "CoreML5") + \
        f_msg(3, f_str(1, "CoreML5"), f_msg(2, block))
    return model(6, desc, 502, f_varint(1, 1) + f_msg(2, f_str(1, "main"), f_msg(2, fn)))


def fix_mil_sdpa():
    """Four scaled_dot_product_attention ops (iOS 18 opset, spec 9)."""
    def bools(vals, dims):
        return value(ttype("bool", dims), f_msg(3, f_bytes(1, bytes(vals))))
    A = ([1, 4, 6, 16], [1, 4, 8, 16], [1, 4, 8, 16], [1, 4, 6, 16])
    B = ([1, 2, 5, 32], [1, 2, 7, 32], [1, 2, 7, 8], [1, 2, 5, 8])
    D = ([1, 2, 4, 48], [1, 2, 4, 48], [1, 2, 4, 48], [1, 2, 4, 48])
    ops = [
        op("scaled_dot_product_attention", [("query", "qa"), ("key", "ka"), ("value", "va"),
                                            ("attn_mask", "ma")], [("ya", f16(A[3]))]),
        op("scaled_dot_product_attention", [("query", "qb"), ("key", "kb"), ("value", "vb")],
           [("yb", f16(B[3]))]),
        const("mc", bools([(i * 7 + 3) % 5 != 0 for i in range(6 * 8)], [1, 1, 6, 8]),
              ttype("bool", [1, 1, 6, 8])),
        op("scaled_dot_product_attention", [("query", "qa"), ("key", "ka"), ("value", "va"),
                                            ("attn_mask", "mc")], [("yc", f16(A[3]))]),
        op("scaled_dot_product_attention", [("query", "qd"), ("key", "qd"), ("value", "qd")],
           [("yd", f16(D[3]))]),
    ]
    inputs = [("qa", A[0]), ("ka", A[1]), ("va", A[2]), ("ma", [1, 4, 6, 8]),
              ("qb", B[0]), ("kb", B[1]), ("vb", B[2]), ("qd", D[0])]
    outputs = [("ya", A[3]), ("yb", B[3]), ("yc", A[3]), ("yd", D[3])]
    desc = description([array_feature(n, d, FLOAT16) for n, d in inputs],
                       [array_feature(n, d, FLOAT16) for n, d in outputs],
                       short="fix fixture: scaled_dot_product_attention -> per-head split einsum")
    return model(9, desc, 502, mil_program(inputs, [n for n, _ in outputs], ops, opset="CoreML8"))


def fix_mil_bc1s():
    """A feed-forward block for mil-block-bc1s-conv, and two linears it refuses."""
    def vals(n, k):
        return [((i * 37 + k) % 23 - 11) / 16.0 for i in range(n)]
    blobs = [(1, struct.pack("<%de" % n, *vals(n, k))) for k, n in
             enumerate([32 * 16, 32, 16 * 32, 16, 16, 16, 16 * 16])]
    weights, offs = weight_bin(blobs)
    X, H = [1, 8, 16], [1, 8, 32]
    ops = [
        const("w1", v_blob("fp16", [32, 16], offs[0]), f16([32, 16])),
        const("b1", v_blob("fp16", [32], offs[1]), f16([32])),
        op("linear", [("x", "x"), ("weight", "w1"), ("bias", "b1")], [("h1", f16(H))]),
        const("mode", v_string("EXACT"), ttype("string", [])),
        op("gelu", [("x", "h1"), ("mode", "mode")], [("g", f16(H))]),
        const("w2", v_blob("fp16", [16, 32], offs[2]), f16([16, 32])),
        const("b2", v_blob("fp16", [16], offs[3]), f16([16])),
        op("linear", [("x", "g"), ("weight", "w2"), ("bias", "b2")], [("h2", f16(X))]),
        op("add", [("x", "h2"), ("y", "x")], [("r", f16(X))]),
        const("axes", v_ints([-1]), ttype("int32", [1])),
        const("gamma", v_blob("fp16", [16], offs[4]), f16([16])),
        const("beta", v_blob("fp16", [16], offs[5]), f16([16])),
        const("eps", v_half_scalar(1e-5), f16([])),
        op("layer_norm", [("x", "r"), ("axes", "axes"), ("gamma", "gamma"), ("beta", "beta"),
                          ("epsilon", "eps")], [("y", f16(X))]),
        # a lone linear: the reshapes around it do not work in the layout
        const("same", v_ints(X), ttype("int32", [3])),
        op("reshape", [("x", "x"), ("shape", "same")], [("xr", f16(X))]),
        const("w3", v_blob("fp16", [16, 16], offs[6]), f16([16, 16])),
        op("linear", [("x", "xr"), ("weight", "w3")], [("l3", f16(X))]),
        const("flat", v_ints([1, 128]), ttype("int32", [2])),
        op("reshape", [("x", "l3"), ("shape", "flat")], [("z", f16([1, 128]))]),
        # a linear with an immediate weight
        const("wi", v_half(vals(64, 9), [4, 16]), f16([4, 16])),
        op("linear", [("x", "x"), ("weight", "wi")], [("li", f16([1, 8, 4]))]),
        op("relu", [("x", "li")], [("u", f16([1, 8, 4]))]),
    ]
    return program([("x", X)], [("y", X), ("z", [1, 128]), ("u", [1, 8, 4])], ops,
                   "fix fixture: a feed-forward block -> the (B, C, 1, S) layout"), weights


def fix_mil_flex():
    """mil-block-bc1s-conv on flexible inputs: a symbolic sequence length is
    carried (xs), a symbolic batch is refused (xb)."""
    def vals(n, k):
        return [((i * 37 + k) % 23 - 11) / 16.0 for i in range(n)]
    blobs = [(1, struct.pack("<%de" % n, *vals(n, k))) for k, n in
             enumerate([32 * 16, 32, 16 * 32, 16, 16, 16])]
    weights, offs = weight_bin(blobs)
    ops = [
        const("w1", v_blob("fp16", [32, 16], offs[0]), f16([32, 16])),
        const("b1", v_blob("fp16", [32], offs[1]), f16([32])),
        const("w2", v_blob("fp16", [16, 32], offs[2]), f16([16, 32])),
        const("b2", v_blob("fp16", [16], offs[3]), f16([16])),
        const("mode", v_string("EXACT"), ttype("string", [])),
        const("axes", v_ints([-1]), ttype("int32", [1])),
        const("gamma", v_blob("fp16", [16], offs[4]), f16([16])),
        const("beta", v_blob("fp16", [16], offs[5]), f16([16])),
        const("eps", v_half_scalar(1e-5), f16([])),
    ]
    for t, X, H in (("s", [1, None, 16], [1, None, 32]), ("b", [None, 8, 16], [None, 8, 32])):
        x = "x" + t
        ops += [
            op("linear", [("x", x), ("weight", "w1"), ("bias", "b1")], [("h1" + t, f16(H))]),
            op("gelu", [("x", "h1" + t), ("mode", "mode")], [("g" + t, f16(H))]),
            op("linear", [("x", "g" + t), ("weight", "w2"), ("bias", "b2")], [("h2" + t, f16(X))]),
            op("add", [("x", "h2" + t), ("y", x)], [("r" + t, f16(X))]),
            op("layer_norm", [("x", "r" + t), ("axes", "axes"), ("gamma", "gamma"), ("beta", "beta"),
                              ("epsilon", "eps")], [("y" + t, f16(X))]),
        ]
    desc = description([array_feature("xs", [1, 8, 16], FLOAT16, enum=[[1, 8, 16], [1, 4, 16]]),
                        shape_range_feature("xb", [2, 8, 16], [(1, 4), (8, 8), (16, 16)], FLOAT16)],
                       [array_feature("ys", [], FLOAT16), array_feature("yb", [], FLOAT16)],
                       short="fix fixture: the (B, C, 1, S) layout on a flexible sequence length")
    return model(8, desc, 502, mil_program([("xs", [1, None, 16]), ("xb", [None, 8, 16])], ["ys", "yb"], ops)), \
        weights


def fix_mil_matmul():
    """Two matmuls by constant weights (mil-matmul-const-bc1s-conv), and one it refuses."""
    def vals(n, k):
        return [((i * 29 + k) % 19 - 9) / 16.0 for i in range(n)]
    blobs = [(1, struct.pack("<%de" % n, *vals(n, k))) for k, n in enumerate([16 * 32, 16 * 32])]
    weights, offs = weight_bin(blobs)
    X, H = [1, 8, 16], [1, 8, 32]
    ops = [
        const("no", v_bool(False), ttype("bool", [])),
        const("yes", v_bool(True), ttype("bool", [])),
        # x [1,8,16] @ wa [16,32]: the weight is [K, N] (copied transposed)
        const("wa", v_blob("fp16", [16, 32], offs[0]), f16([16, 32])),
        op("matmul", [("x", "x"), ("y", "wa"), ("transpose_x", "no"), ("transpose_y", "no")], [("ma", f16(H))]),
        const("mode", v_string("TANH_APPROXIMATION"), ttype("string", [])),
        op("gelu", [("x", "ma"), ("mode", "mode")], [("g", f16(H))]),
        # g [1,8,32] @ wb^T, wb [16,32]: the weight is [N, K] (its blob as it is)
        const("wb", v_blob("fp16", [16, 32], offs[1]), f16([16, 32])),
        op("matmul", [("x", "g"), ("y", "wb"), ("transpose_x", "no"), ("transpose_y", "yes")], [("mb", f16(X))]),
        op("add", [("x", "mb"), ("y", "x")], [("y", f16(X))]),
        # a matmul by an immediate weight (refused: not in weight.bin)
        const("wi", v_half(vals(64, 5), [16, 4]), f16([16, 4])),
        op("matmul", [("x", "x"), ("y", "wi")], [("mi", f16([1, 8, 4]))]),
        op("relu", [("x", "mi")], [("u", f16([1, 8, 4]))]),
    ]
    return program([("x", X)], [("y", X), ("u", [1, 8, 4])], ops,
                   "fix fixture: matmul by constant weights -> 1x1 conv in (B, C, 1, S)"), weights


def fix_mil_matmul_lone():
    """A lone matmul by a constant weight (mil-matmul-const-bc1s-conv refuses it) and a
    matmul by a runtime weight (not a candidate)."""
    S, K, N = 16384, 64, 8
    blobs = [(1, struct.pack("<%de" % (N * K), *[((i * 29) % 19 - 9) / 16.0 for i in range(N * K)]))]
    weights, offs = weight_bin(blobs)
    ops = [
        const("no", v_bool(False), ttype("bool", [])),
        const("yes", v_bool(True), ttype("bool", [])),
        # x @ wc^T, wc [N, K] in weight.bin: [1, S, N], the last axis 16 bytes of 64
        const("wc", v_blob("fp16", [N, K], offs[0]), f16([N, K])),
        op("matmul", [("x", "x"), ("y", "wc"), ("transpose_x", "no"), ("transpose_y", "yes")], [("yc", f16([1, S, N]))]),
    ]
    # x @ w, w a model input: two runtime tensors (not a candidate)
    tail = [op("matmul", [("x", "x"), ("y", "w"), ("transpose_x", "no"), ("transpose_y", "no")],
               [("yw", f16([1, S, N]))])]
    lone = ops[:4] + tail
    # the first matmul as a 1x1 conv in (B, C, 1, S), the weight's blob declared [N, K, 1, 1]
    conv = [
        const("s4", v_ints([1, S, 1, K]), ttype("int32", [4])),
        op("reshape", [("x", "x"), ("shape", "s4")], [("x_bs1c", f16([1, S, 1, K]))]),
        const("perm", v_ints([0, 3, 2, 1]), ttype("int32", [4])),
        op("transpose", [("x", "x_bs1c"), ("perm", "perm")], [("x_bc1s", f16([1, K, 1, S]))]),
        const("wc", v_blob("fp16", [N, K, 1, 1], offs[0]), f16([N, K, 1, 1])),
        op("conv", [("x", "x_bc1s"), ("weight", "wc")], [("yc_bc1s", f16([1, N, 1, S]))]),
        op("transpose", [("x", "yc_bc1s"), ("perm", "perm")], [("yc_bs1c", f16([1, S, 1, N]))]),
        const("s3", v_ints([1, S, N]), ttype("int32", [3])),
        op("reshape", [("x", "yc_bs1c"), ("shape", "s3")], [("yc", f16([1, S, N]))]),
        const("no", v_bool(False), ttype("bool", [])),
    ] + tail
    io = ([("x", [1, S, K]), ("w", [K, N])], [("yc", [1, S, N]), ("yw", [1, S, N])])
    return program(*io, lone, "fix fixture: a lone matmul by a constant weight (refused) and one by a "
                   "runtime weight"), \
        program(*io, conv, "fix fixture: the lone matmul's 1x1 conv form, by hand (ANE062 on its exits)"), weights


def fix_mil_attn():
    """Two self-attention blocks as coremltools converts a batch-first PyTorch
    one (linear q/k/v, reshape to heads, transposes, matmul, scale, softmax,
    matmul, transpose, reshape, out projection, residual add): on x the layout
    is carried through; on x2 the attention weights are also a model output,
    so no run can carry them (refused)."""
    def vals(n, k):
        return [((i * 37 + k) % 23 - 11) / 32.0 for i in range(n)]
    sizes = [16 * 16, 16] * 4
    blobs = [(1, struct.pack("<%de" % n, *vals(n, k))) for k, n in enumerate(sizes)]
    weights, offs = weight_bin(blobs)
    X, HD, SC = [1, 8, 16], [1, 8, 2, 8], [1, 2, 8, 8]
    ops = [
        const("no", v_bool(False), ttype("bool", [])),
        const("heads", v_ints(HD), ttype("int32", [4])),
        const("flat", v_ints(X), ttype("int32", [3])),
        const("p0213", v_ints([0, 2, 1, 3]), ttype("int32", [4])),
        const("pq", v_ints([0, 2, -3, -1]), ttype("int32", [4])),
        const("pk", v_ints([0, 2, -1, -3]), ttype("int32", [4])),
        const("scale", v_half_scalar(0.25), f16([])),
        const("last", v_int_scalar(-1), ttype("int32", [])),
    ]
    for j, nm in enumerate("qkvo"):
        ops += [const("w" + nm, v_blob("fp16", [16, 16], offs[2 * j]), f16([16, 16])),
                const("b" + nm, v_blob("fp16", [16], offs[2 * j + 1]), f16([16]))]
    for t, xin in (("", "x"), ("2", "x2")):
        def n(s):
            return s + t
        for nm in "qkv":
            ops += [op("linear", [("x", xin), ("weight", "w" + nm), ("bias", "b" + nm)], [(n("l" + nm), f16(X))]),
                    op("reshape", [("x", n("l" + nm)), ("shape", "heads")], [(n("r" + nm), f16(HD))])]
        ops += [
            op("transpose", [("x", n("rk")), ("perm", "pk")], [(n("tk"), f16([1, 2, 8, 8]))]),
            op("transpose", [("x", n("rq")), ("perm", "pq")], [(n("tq"), f16([1, 2, 8, 8]))]),
            op("matmul", [("x", n("tq")), ("y", n("tk")), ("transpose_x", "no"), ("transpose_y", "no")],
               [(n("s"), f16(SC))]),
            op("mul", [("x", n("s")), ("y", "scale")], [(n("a"), f16(SC))]),
            op("softmax", [("x", n("a")), ("axis", "last")], [(n("p"), f16(SC))]),
            op("transpose", [("x", n("rv")), ("perm", "p0213")], [(n("tv"), f16([1, 2, 8, 8]))]),
            op("matmul", [("x", n("p")), ("y", n("tv")), ("transpose_x", "no"), ("transpose_y", "no")],
               [(n("c"), f16([1, 2, 8, 8]))]),
            op("transpose", [("x", n("c")), ("perm", "p0213")], [(n("tc"), f16(HD))]),
            op("reshape", [("x", n("tc")), ("shape", "flat")], [(n("j"), f16(X))]),
            op("linear", [("x", n("j")), ("weight", "wo"), ("bias", "bo")], [(n("lo"), f16(X))]),
            op("add", [("x", xin), ("y", n("lo"))], [(n("y"), f16(X))]),
        ]
    return program([("x", X), ("x2", X)], [("y", X), ("y2", X), ("p2", SC)], ops,
                   "fix fixture: self-attention blocks -> the (B, C, 1, S) layout"), weights


def fix_mil_xattn():
    """Cross-attention as coremltools converts a batch-first PyTorch one whose
    keys and values come from another tensor (an encoder's memory of another
    length): the run carries two sequences, Sq 8 and Sk 6."""
    def vals(n, k):
        return [((i * 37 + k) % 23 - 11) / 32.0 for i in range(n)]
    blobs = [(1, struct.pack("<%de" % n, *vals(n, k))) for k, n in enumerate([16 * 16, 16] * 4)]
    weights, offs = weight_bin(blobs)
    X, M = [1, 8, 16], [1, 6, 16]
    ops = [
        const("no", v_bool(False), ttype("bool", [])),
        const("hq", v_ints([1, 8, 2, 8]), ttype("int32", [4])),
        const("hm", v_ints([1, 6, 2, 8]), ttype("int32", [4])),
        const("flat", v_ints(X), ttype("int32", [3])),
        const("p0213", v_ints([0, 2, 1, 3]), ttype("int32", [4])),
        const("pk", v_ints([0, 2, 3, 1]), ttype("int32", [4])),
        const("scale", v_half_scalar(0.25), f16([])),
        const("last", v_int_scalar(-1), ttype("int32", [])),
    ]
    for j, nm in enumerate("qkvo"):
        ops += [const("w" + nm, v_blob("fp16", [16, 16], offs[2 * j]), f16([16, 16])),
                const("b" + nm, v_blob("fp16", [16], offs[2 * j + 1]), f16([16]))]
    ops += [
        op("linear", [("x", "x"), ("weight", "wq"), ("bias", "bq")], [("lq", f16(X))]),
        op("reshape", [("x", "lq"), ("shape", "hq")], [("rq", f16([1, 8, 2, 8]))]),
        op("linear", [("x", "m"), ("weight", "wk"), ("bias", "bk")], [("lk", f16(M))]),
        op("reshape", [("x", "lk"), ("shape", "hm")], [("rk", f16([1, 6, 2, 8]))]),
        op("linear", [("x", "m"), ("weight", "wv"), ("bias", "bv")], [("lv", f16(M))]),
        op("reshape", [("x", "lv"), ("shape", "hm")], [("rv", f16([1, 6, 2, 8]))]),
        op("transpose", [("x", "rq"), ("perm", "p0213")], [("tq", f16([1, 2, 8, 8]))]),
        op("transpose", [("x", "rk"), ("perm", "pk")], [("tk", f16([1, 2, 8, 6]))]),
        op("matmul", [("x", "tq"), ("y", "tk"), ("transpose_x", "no"), ("transpose_y", "no")],
           [("s", f16([1, 2, 8, 6]))]),
        op("mul", [("x", "s"), ("y", "scale")], [("a", f16([1, 2, 8, 6]))]),
        op("softmax", [("x", "a"), ("axis", "last")], [("p", f16([1, 2, 8, 6]))]),
        op("transpose", [("x", "rv"), ("perm", "p0213")], [("tv", f16([1, 2, 6, 8]))]),
        op("matmul", [("x", "p"), ("y", "tv"), ("transpose_x", "no"), ("transpose_y", "no")],
           [("c", f16([1, 2, 8, 8]))]),
        op("transpose", [("x", "c"), ("perm", "p0213")], [("tc", f16([1, 8, 2, 8]))]),
        op("reshape", [("x", "tc"), ("shape", "flat")], [("j", f16(X))]),
        op("linear", [("x", "j"), ("weight", "wo"), ("bias", "bo")], [("lo", f16(X))]),
        op("add", [("x", "x"), ("y", "lo")], [("y", f16(X))]),
    ]
    return program([("x", X), ("m", M)], [("y", X)], ops,
                   "fix fixture: cross-attention -> the (B, C, 1, S) layout"), weights


def fix_mil_lstm():
    H, I = 4, 4
    def ramp(n, lo, step):
        return [lo + step * (k % 13) for k in range(n)]
    ops = [
        const("wih", v_half(ramp(4 * H * I, -0.5, 0.078125), [4 * H, I]), f16([4 * H, I])),
        const("whh", v_half(ramp(4 * H * H, -0.375, 0.0625), [4 * H, H]), f16([4 * H, H])),
        const("b", v_half(ramp(4 * H, -0.25, 0.046875), [4 * H]), f16([4 * H])),
        const("h0", v_half([0.25, -0.5, 0.125, 0.0], [1, H]), f16([1, H])),
        const("c0", v_half([-0.25, 0.5, 0.75, -1.0], [1, H]), f16([1, H])),
        const("fwd", v_string("forward"), ttype("string", [])),
        const("sig", v_string("sigmoid"), ttype("string", [])),
        const("tnh", v_string("tanh"), ttype("string", [])),
        const("last", v_bool(False), ttype("bool", [])),
        const("all", v_bool(True), ttype("bool", [])),
    ]
    common = [("initial_h", "h0"), ("initial_c", "c0"), ("weight_ih", "wih"), ("weight_hh", "whh"),
              ("bias", "b"), ("direction", "fwd"), ("recurrent_activation", "sig"),
              ("cell_activation", "tnh"), ("activation", "tnh")]
    ops += [
        op("lstm", [("x", "x3")] + common + [("output_sequence", "last")],
           [("y", f16([1, 1, H])), ("h", f16([1, H])), ("c", f16([1, H]))]),
        op("lstm", [("x", "x20")] + common + [("output_sequence", "all")],
           [("z", f16([20, 1, H])), ("zh", f16([1, H])), ("zc", f16([1, H]))]),
    ]
    return program([("x3", [3, 1, I]), ("x20", [20, 1, I])],
                   [("y", [1, 1, H]), ("h", [1, H]), ("c", [1, H]), ("z", [20, 1, H])], ops,
                   "fix fixture: a 3-step lstm (unrolled) and a 20-step one (refused)")


def lstm_ops(prefix, dt, I, H, dirs, k):
    """The consts of one lstm (weights ramped, non-zero initial states) named prefix_*,
    and its parameter bindings. dt: a ttype maker; values as fp16 (v_half) or fp32."""
    tv = (lambda vals, dims: v_half(vals, dims)) if dt is f16 else (lambda vals, dims: v_floats(vals, dims))
    wv = lambda n, j: [((i * 7 + j + k) % 13 - 6) / 16.0 for i in range(n)]
    ops, bind = [], []
    for d, sfx in enumerate(["", "_back"][:dirs]):
        ops += [const(prefix + "_wih" + sfx, tv(wv(4 * H * I, 1 + d), [4 * H, I]), dt([4 * H, I])),
                const(prefix + "_whh" + sfx, tv(wv(4 * H * H, 2 + d), [4 * H, H]), dt([4 * H, H])),
                const(prefix + "_b" + sfx, tv(wv(4 * H, 3 + d), [4 * H]), dt([4 * H]))]
        bind += [("weight_ih" + sfx, prefix + "_wih" + sfx), ("weight_hh" + sfx, prefix + "_whh" + sfx),
                 ("bias" + sfx, prefix + "_b" + sfx)]
    ops += [const(prefix + "_h0", tv([0.25, -0.5, 0.125, 0.0, 0.5, -0.25, 0.0, 0.375][:dirs * H], [1, dirs * H]),
                  dt([1, dirs * H])),
            const(prefix + "_c0", tv([-0.25, 0.5, 0.75, -1.0, 0.125, 0.0, -0.5, 0.25][:dirs * H], [1, dirs * H]),
                  dt([1, dirs * H]))]
    bind += [("initial_h", prefix + "_h0"), ("initial_c", prefix + "_c0")]
    return ops, bind


def pass_mil_lstm_unroll():
    """Two programs for tests/pass_mil_lstm_unroll.sh (H = I = 4, 3 steps, non-zero
    initial states). _fp32: an fp32 program on the iOS 15 opset (spec 6; its lstm
    takes fp32 only): a bidirectional lstm with the whole sequence, whose output
    feeds a reverse lstm (last step only), and a clipped one (refused); _fp16: an
    fp16 iOS 17 program with a bidirectional lstm (last step only) and a reverse
    one (the whole sequence)."""
    f32 = lambda dims: ttype("fp32", dims)
    H = I = 4
    out = {}
    for name, dt in (("fp32", f32), ("fp16", f16)):
        ops = [const("bi_dir", v_string("bidirectional"), ttype("string", [])),
               const("rv_dir", v_string("reverse"), ttype("string", [])),
               const("all", v_bool(True), ttype("bool", [])),
               const("last", v_bool(False), ttype("bool", []))]
        bo, bb = lstm_ops("bi", dt, I, H, 2, 0)
        ro, rb = lstm_ops("rv", dt, 2 * H if name == "fp32" else I, H, 1, 5)
        ops += bo + ro
        if name == "fp32":
            co, cb = lstm_ops("cl", dt, I, H, 1, 3)
            ops += co + [const("clip", v_floats([1.0], []), f32([]))]
            ops += [op("lstm", [("x", "x")] + bb + [("direction", "bi_dir"), ("output_sequence", "all")],
                       [("y", f32([3, 1, 2 * H])), ("yh", f32([1, 2 * H])), ("yc", f32([1, 2 * H]))]),
                    op("lstm", [("x", "y")] + rb + [("direction", "rv_dir"), ("output_sequence", "last")],
                       [("r", f32([1, 1, H])), ("rh", f32([1, H])), ("rc", f32([1, H]))]),
                    op("lstm", [("x", "x")] + cb + [("clip", "clip")],
                       [("k", f32([1, 1, H])), ("kh", f32([1, H])), ("kc", f32([1, H]))])]
            outs = [("y", [3, 1, 2 * H]), ("r", [1, 1, H]), ("rc", [1, H]), ("k", [1, 1, H])]
            desc = description([array_feature("x", [3, 1, I])], [array_feature(n, d) for n, d in outs],
                               short="fix fixture: fp32 lstms (iOS 15): bidirectional into reverse, and a "
                                     "clipped one")
            block = b"".join(f_str(2, n) for n, _ in outs) + b"".join(ops)
            fn = f_msg(1, named("x", f32([3, 1, I]))) + f_str(2, "CoreML5") + \
                f_msg(3, f_str(1, "CoreML5"), f_msg(2, block))
            out[name] = model(6, desc, 502, f_varint(1, 1) + f_msg(2, f_str(1, "main"), f_msg(2, fn)))
        else:
            ops += [op("lstm", [("x", "x")] + bb + [("direction", "bi_dir"), ("output_sequence", "last")],
                       [("y", f16([1, 1, 2 * H])), ("yh", f16([1, 2 * H])), ("yc", f16([1, 2 * H]))]),
                    op("lstm", [("x", "x")] + rb + [("direction", "rv_dir"), ("output_sequence", "all")],
                       [("r", f16([3, 1, H])), ("rh", f16([1, H])), ("rc", f16([1, H]))])]
            out[name] = program([("x", [3, 1, I])], [("y", [1, 1, 2 * H]), ("yc", [1, 2 * H]), ("r", [3, 1, H]),
                                                     ("rh", [1, H])], ops,
                                "fix fixture: fp16 lstms: bidirectional (last step) and reverse (sequence)")
    return out


def pass_mil_while_unroll():
    """Two while_loops in the form coremltools 8.3 writes for PyTorch's GRU, small
    (fp16, iOS 17 opset): x [4, 2]; loop a: i from [0] while less(i, [4]), body
    gather(x, i) + gather(buf, i) -> tanh -> scatter(buf, i + 1, row), buf0 a
    [5, 2] const with a non-zero first row, its result read by a relu (unrolled);
    loop b: the same with the row read at i * 1 (a mul of the index: refused)."""
    i32 = lambda dims: ttype("int32", dims)
    X, Bf = [4, 2], [5, 2]

    def loop(tag, mul_index):
        iv, bv = tag + "_i", tag + "_buf"
        body = [const(tag + "_ax", v_int_scalar(0), i32([])),
                const(tag + "_one", v_int_scalar(1), i32([])),
                const(tag + "_upd", v_string("update"), ttype("string", []))]
        idx = iv
        if mul_index:
            body.append(op("mul", [("x", iv), ("y", tag + "_one")], [(tag + "_k", i32([1]))]))
            idx = tag + "_k"
        body += [op("gather", [("x", "x"), ("indices", idx), ("axis", tag + "_ax")], [(tag + "_g", f16([1, 2]))]),
                 op("gather", [("x", bv), ("indices", iv), ("axis", tag + "_ax")], [(tag + "_r", f16([1, 2]))]),
                 op("add", [("x", tag + "_g"), ("y", tag + "_r")], [(tag + "_s", f16([1, 2]))]),
                 op("tanh", [("x", tag + "_s")], [(tag + "_t", f16([1, 2]))]),
                 op("add", [("x", iv), ("y", tag + "_one")], [(tag + "_j", i32([1]))]),
                 op("scatter", [("data", bv), ("indices", tag + "_j"), ("updates", tag + "_t"),
                                ("axis", tag + "_ax"), ("mode", tag + "_upd")], [(tag + "_b2", f16(Bf))])]
        ins = f_msg(1, named(iv, i32([1]))) + f_msg(1, named(bv, f16(Bf)))
        cond = ins + f_str(2, tag + "_lt") + \
            op("less", [("x", iv), ("y", tag + "_n")], [(tag + "_lt", ttype("bool", [1]))])
        bdy = ins + f_str(2, tag + "_j") + f_str(2, tag + "_b2") + b"".join(body)
        loop_vars = f_msg(2, f_str(1, "loop_vars"), f_msg(2, f_msg(1, f_str(1, tag + "_i0")) +
                                                       f_msg(1, f_str(1, tag + "_b0"))))
        wl = f_msg(3, f_str(1, "while_loop"), loop_vars, f_msg(3, named(tag + "_w0", i32([1]))),
                   f_msg(3, named(tag + "_w1", f16(Bf))), f_msg(4, cond), f_msg(4, bdy),
                   f_msg(5, f_str(1, "name"), f_msg(2, v_string(tag + "_loop"))))
        return [const(tag + "_i0", v_ints([0], [1]), i32([1])),
                const(tag + "_n", v_ints([4], [1]), i32([1])),
                const(tag + "_b0", v_half([0.5, -0.25] + [0.0] * 8, Bf), f16(Bf)), wl,
                op("relu", [("x", tag + "_w1")], [(tag + "_y", f16(Bf))])]
    ops = loop("a", False) + loop("b", True)
    return program([("x", X)], [("a_y", Bf), ("b_y", Bf)], ops,
                   "fix fixture: two GRU-style while_loops (one unrolled, one refused)")


def fix_mil_gru():
    H, I = 4, 4
    def ramp(n, lo, step):
        return [lo + step * (k % 11) for k in range(n)]
    wih, whh, b = ramp(3 * H * I, -0.5, 0.09375), ramp(3 * H * H, -0.4375, 0.078125), ramp(3 * H, -0.25, 0.0625)
    weights, offs = weight_bin([(1, struct.pack("<%de" % len(v), *v)) for v in (wih, whh, b)])
    ops = [
        const("wih", v_blob("fp16", [3 * H, I], offs[0]), f16([3 * H, I])),
        const("whh", v_blob("fp16", [3 * H, H], offs[1]), f16([3 * H, H])),
        const("b", v_blob("fp16", [3 * H], offs[2]), f16([3 * H])),
        const("wih_i", v_half(ramp(3 * H * I, -0.375, 0.0625), [3 * H, I]), f16([3 * H, I])),
        const("whh_i", v_half(ramp(3 * H * H, -0.5, 0.09375), [3 * H, H]), f16([3 * H, H])),
        const("h0", v_half([0.25, -0.5, 0.125, 0.0], [1, H]), f16([1, H])),
        const("fwd", v_string("forward"), ttype("string", [])),
        const("rev", v_string("reverse"), ttype("string", [])),
        const("sig", v_string("sigmoid"), ttype("string", [])),
        const("tnh", v_string("tanh"), ttype("string", [])),
        const("last", v_bool(False), ttype("bool", [])),
        const("all", v_bool(True), ttype("bool", [])),
        op("gru", [("x", "x3"), ("initial_h", "h0"), ("weight_ih", "wih"), ("weight_hh", "whh"),
                   ("bias", "b"), ("direction", "fwd"), ("output_sequence", "last"),
                   ("recurrent_activation", "sig"), ("activation", "tnh")],
           [("y", f16([1, 1, H])), ("h", f16([1, H]))]),
        op("gru", [("x", "x4"), ("initial_h", "h0"), ("weight_ih", "wih_i"), ("weight_hh", "whh_i"),
                   ("direction", "rev"), ("output_sequence", "all")],
           [("r", f16([4, 1, H])), ("rh", f16([1, H]))]),
        op("gru", [("x", "x20"), ("initial_h", "h0"), ("weight_ih", "wih"), ("weight_hh", "whh"),
                   ("bias", "b"), ("output_sequence", "all")],
           [("z", f16([20, 1, H])), ("zh", f16([1, H]))]),
    ]
    return program([("x3", [3, 1, I]), ("x4", [4, 1, I]), ("x20", [20, 1, I])],
                   [("y", [1, 1, H]), ("h", [1, H]), ("r", [4, 1, H]), ("rh", [1, H]), ("z", [20, 1, H])], ops,
                   "fix fixture: a 3-step gru and a 4-step reverse one (unrolled), a 20-step one (refused)"), \
        weights


def main():
    if not os.path.isdir(os.path.join("tests", "data")):
        sys.exit("run from the repository root")
    os.makedirs(OUT, exist_ok=True)
    fill, fill_w = fix_mil_fill()
    bc1s, bc1s_w = fix_mil_bc1s()
    gru, gru_w = fix_mil_gru()
    mm, mm_w = fix_mil_matmul()
    mml, mmlc, mml_w = fix_mil_matmul_lone()
    attn, attn_w = fix_mil_attn()
    flex, flex_w = fix_mil_flex()
    xattn, xattn_w = fix_mil_xattn()
    lstm2 = pass_mil_lstm_unroll()
    for name, mb, w in (("fix_mil_range", fix_mil_range(), None), ("fix_mil_fill", fill, fill_w),
                        ("fix_mil_fill_like", fix_mil_fill_like(), None),
                        ("fix_mil_cumsum", fix_mil_cumsum(), None),
                        ("fix_mil_island", fix_mil_island(), None),
                        ("fix_mil_fp32", fix_mil_fp32(), None),
                        ("fix_mil_sdpa", fix_mil_sdpa(), None),
                        ("fix_mil_bc1s", bc1s, bc1s_w),
                        ("fix_mil_matmul", mm, mm_w),
                        ("fix_mil_matmul_lone", mml, mml_w),
                        ("fix_mil_matmul_lone_conv", mmlc, mml_w),
                        ("fix_mil_attn", attn, attn_w),
                        ("fix_mil_flex", flex, flex_w),
                        ("fix_mil_xattn", xattn, xattn_w),
                        ("fix_mil_lstm", fix_mil_lstm(), None),
                        ("fix_mil_gru", gru, gru_w),
                        ("fix_valid_ios15", fix_valid_ios15(), None),
                        ("pass_mil_lstm_unroll_fp32", lstm2["fp32"], None),
                        ("pass_mil_lstm_unroll_fp16", lstm2["fp16"], None),
                        ("pass_mil_while_unroll", pass_mil_while_unroll(), None)):
        write_package(os.path.join(OUT, name + ".mlpackage"), mb, w)
        print(f"{OUT}/{name}.mlpackage")
    # models Core ML refuses: apart, so the sweeps over crafted/ meet valid models only
    invalid = os.path.join("tests", "data", "invalid")
    os.makedirs(invalid, exist_ok=True)
    write_package(os.path.join(invalid, "mil_invalid_ops.mlpackage"), mil_invalid_ops())
    print(f"{invalid}/mil_invalid_ops.mlpackage")


if __name__ == "__main__":
    main()
