#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mkregress.py: writes the hand-made files of tests/regress/ that stand for a
fuzzer find whose artifact stayed on the CI machine (tests/regress/README.md).

  mil/stack-overflow-scalar-param-list
      An fp16 ML Program (fuzz_mil framing: u16 weight length 0, then the
      Program) whose cumsum `axis`, gather `axis` and topk `k` are constant
      lists of 24 ints where a scalar is expected. The MIL rules read each into
      one int64_t but told the reader there was room for 16.

  mlmodel/split-duplicate-outputs.mlmodel
  mlmodel/split-duplicate-outputs-interleaved.mlmodel
      A two-layer NeuralNetwork (ReLU a: x -> t, ReLU b: t -> y) whose
      description declares the output y three times (110 bytes), or the outputs
      y, t, y, t, y, t. The old loader accepted them; `split --at a` put the
      model outputs first by appending one tensor per declared output, past
      arrays sized for the distinct names (heap-buffer-overflow in ali_buf_put
      <- put_feature <- build_part).
  mlmodel/duplicate-input-names.mlmodel
  mlmodel/input-output-same-name.mlmodel
      The same network with the input x declared twice, or with an output
      named like the input: feature names Core ML refuses.
  mlpackage/split-duplicate-outputs-mlprogram
      An fp16 ML Program package (fuzz_mlpackage framing) relu -> cumsum ->
      relu, whose description and block return y 100 times: `split --at
      segments --pipeline OUT` overran the same arrays.
  mil/duplicate-function-inputs
      An ML Program (fuzz_mil framing) whose function declares its input x
      twice.

  mlmodel/diag-injection-layer-name.mlmodel
  mlmodel/diag-binary-layer-name.mlmodel
      A one-layer NeuralNetwork whose layer is malformed (a field of wire type
      7), so the error names the layer: "a\n anelint: error: forged\x1b[2J",
      or 4,000 bytes of binary holding 250 newlines. The CLI printed the name
      raw: a forged second error line, a cleared terminal, pages of binary.

  mlpackage/pkgwrite-weights-item-elsewhere
      tests/data/crafted/fix_mil_cumsum.mlpackage (no weight.bin) under a
      Manifest whose weights item is com.apple.CoreML/blobs. `fix --allow
      reassociate` turns the cumsum into a matmul by a new triangular constant
      in weight.bin; the package writer put it next to the model, where the
      loader does not look, and refused its own output ("the new package does
      not load"). Found by fuzz_pkgwrite.

  mlmodel/hang-nn-loop-1e9-iterations.mlmodel
      A NeuralNetwork whose `loop` layer (no condition) runs maxLoopIterations
      10^9 times over a body that adds and copies a 2^20-float blob: hours of
      work from a 200-byte file. Refused before the loop starts (exit 3).

  mlmodel/hang-mil-while-loop-constant-true.mlmodel
      An ML Program whose while_loop condition block returns a constant true,
      over a body adding a 2^20-value fp16 loop variable to itself. Refused
      after the condition's first evaluation (exit 3).

Deterministic: run `python3 tools/mkregress.py` from the repository root.
"""

import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from mkfixtures import (FLOAT16, FLOAT32, array_feature, const, description, layer,  # noqa: E402
                        mil_program, model, named, op, ttype, v_ints, value)
from pbwire import f_bytes, f_msg, f_packed_varints, f_str, f_varint  # noqa: E402

BIG = 1 << 20  # values of the blob a runaway loop rewrites on every iteration


def scalar_param_list():
    X = [2, 8, 12]
    f16 = lambda dims: ttype("fp16", dims)
    many = list(range(-12, 12))
    ops = [
        const("axes", v_ints(many), ttype("int32", [len(many)])),
        op("cumsum", [("x", "x"), ("axis", "axes")], [("c", f16(X))]),
        const("idx", v_ints([0, 1]), ttype("int32", [2])),
        op("gather", [("x", "c"), ("indices", "idx"), ("axis", "axes")], [("g", f16([2, 8, 2]))]),
        op("topk", [("x", "g"), ("k", "axes")], [("v", f16([2, 8, 1])), ("i", ttype("int32", [2, 8, 1]))]),
    ]
    return struct.pack("<H", 0) + mil_program([("x", X)], ["v"], ops)


RELU = f_msg(10)  # ActivationParams.ReLU


def two_relus(inputs, outputs):
    """Model{spec 4, description{inputs, outputs}, neuralNetwork{a: x -> t,
    b: t -> y, EXACT_ARRAY_MAPPING}}, without metadata: as small as it gets."""
    desc = f_msg(2, *[f_msg(1, array_feature(n, [4])) for n in inputs],
                 *[f_msg(10, array_feature(n, [4])) for n in outputs])
    net = layer("a", ["x"], ["t"], 130, RELU) + layer("b", ["t"], ["y"], 130, RELU) + f_varint(5, 1)
    return model(4, desc, 500, net)


def mlprogram_repeated_outputs(n):
    """Model{spec 7, mlProgram}: x fp16 [1, 8] -> relu a -> cumsum c -> relu y,
    the description and the block returning y n times."""
    X = [1, 8]
    f16 = lambda dims: ttype("fp16", dims)
    ops = [
        op("relu", [("x", "x")], [("a", f16(X))]),
        const("axis", v_ints([1], dims=[]), ttype("int32", [])),
        op("cumsum", [("x", "a"), ("axis", "axis")], [("c", f16(X))]),
        op("relu", [("x", "c")], [("y", f16(X))]),
    ]
    program = mil_program([("x", X)], ["y"] * n, ops)
    desc = f_msg(2, f_msg(1, array_feature("x", X, FLOAT16)),
                 *[f_msg(10, array_feature("y", X, FLOAT16)) for _ in range(n)])
    return model(7, desc, 502, program)


from regress_inputs import MANIFEST  # noqa: E402  (one Manifest.json for every framing)


def package_framing(model_bytes, weights=b""):
    """fuzz_mlpackage: [u32 A][Manifest.json][u32 B][model.mlmodel][weight.bin]."""
    return (struct.pack("<I", len(MANIFEST)) + MANIFEST + struct.pack("<I", len(model_bytes)) +
            model_bytes + weights)


def duplicate_function_inputs():
    """fuzz_mil framing: no weights, a Program whose function has x twice."""
    X = [1, 8]
    ops = [op("relu", [("x", "x")], [("y", ttype("fp16", X))])]
    return struct.pack("<H", 0) + mil_program([("x", X), ("x", X)], ["y"], ops)


def malformed_layer(name):
    """Model{spec 4, x -> y, neuralNetwork{layers[0]{name, x, y, field 130 of wire
    type 7}}}: the loader's error names the layer."""
    lay = f_bytes(1, name) + f_str(2, "x") + f_str(3, "y") + bytes([0x97, 0x08])
    desc = f_msg(2, f_msg(1, array_feature("x", [4])), f_msg(10, array_feature("y", [4])))
    return model(4, desc, 500, f_msg(1, lay))


def weights_item_elsewhere():
    src = os.path.join("tests", "data", "crafted", "fix_mil_cumsum.mlpackage", "Data",
                       "com.apple.CoreML", "model.mlmodel")
    with open(src, "rb") as f:
        model_bytes = f.read()
    items = {
        "00000000-0000-0000-0000-000000000001": {
            "author": "com.apple.CoreML", "description": "CoreML Model Specification",
            "name": "model.mlmodel", "path": "com.apple.CoreML/model.mlmodel"},
        "00000000-0000-0000-0000-000000000002": {
            "author": "com.apple.CoreML", "description": "CoreML Model Weights",
            "name": "weights", "path": "com.apple.CoreML/blobs"},
    }
    manifest = json.dumps({"fileFormatVersion": "1.0.0", "itemInfoEntries": items,
                           "rootModelIdentifier": "00000000-0000-0000-0000-000000000001"},
                          indent=4, sort_keys=True).encode() + b"\n"
    return (struct.pack("<I", len(manifest)) + manifest + struct.pack("<I", len(model_bytes)) +
            model_bytes)


FILES = [
    ("mil/stack-overflow-scalar-param-list", scalar_param_list),
    ("mlmodel/split-duplicate-outputs.mlmodel", lambda: two_relus(["x"], ["y"] * 3)),
    ("mlmodel/split-duplicate-outputs-interleaved.mlmodel",
     lambda: two_relus(["x"], ["y", "t"] * 3)),
    ("mlmodel/duplicate-input-names.mlmodel", lambda: two_relus(["x", "x"], ["y"])),
    ("mlmodel/input-output-same-name.mlmodel", lambda: two_relus(["x"], ["y", "x"])),
    ("mlpackage/split-duplicate-outputs-mlprogram",
     lambda: package_framing(mlprogram_repeated_outputs(100))),
    ("mil/duplicate-function-inputs", duplicate_function_inputs),
    ("mlmodel/diag-injection-layer-name.mlmodel",
     lambda: malformed_layer(b"a\n anelint: error: forged\x1b[2J")),
    ("mlpackage/pkgwrite-weights-item-elsewhere", weights_item_elsewhere),
    ("mlmodel/diag-binary-layer-name.mlmodel",
     lambda: malformed_layer(bytes((i * 7 + 3) % 256 if i % 16 else 10 for i in range(4000)))),
]


def main():
    if not os.path.isdir(os.path.join("tests", "regress")):
        sys.exit("run from the repository root")
    for rel, make in FILES:
        path = os.path.join("tests", "regress", *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(make())

def nn_loop_1e9():
    """LoopLayerParams{maxLoopIterations 1, bodyNetwork 4 {layers}}: add (230)
    x + x -> t, copy (600) t -> x; then y = copy(x)."""
    body = layer("twice", ["x", "x"], ["t"], 230, b"") + layer("back", ["t"], ["x"], 600, b"")
    net = layer("loop", [], [], 615, f_varint(1, 10**9) + f_bytes(4, body)) + \
        layer("out", ["x"], ["y"], 600, b"")
    desc = description([array_feature("x", [BIG])], [array_feature("y", [BIG])],
                       short="regress: loop of 1e9 iterations")
    return model(4, desc, 500, net)


def op_blocks(type_, inputs, outputs, blocks):
    """An Operation with nested blocks (field 4), as mkfixtures.op without attributes."""
    parts = [f_str(1, type_)]
    for param, bound in inputs:
        parts.append(f_msg(2, f_str(1, param), f_msg(2, f_msg(1, f_str(1, bound)))))
    parts += [f_msg(3, named(n, t)) for n, t in outputs]
    parts += [f_msg(4, b) for b in blocks]
    return f_msg(3, *parts)


def block(inputs, outputs, ops):
    """Block{inputs 1 NamedValueType, outputs 2, operations 3}."""
    return b"".join(f_msg(1, named(n, t)) for n, t in inputs) + \
        b"".join(f_str(2, o) for o in outputs) + b"".join(ops)


def mil_while_true():
    X = [1, BIG]
    t = ttype("fp16", X)
    true = value(ttype("bool", []), f_msg(3, f_packed_varints(1, [1])))
    cond = block([("cv", t)], ["go"], [const("go", true, ttype("bool", []))])
    body = block([("bv", t)], ["s"], [op("add", [("x", "bv"), ("y", "bv")], [("s", t)])])
    ops = [op_blocks("while_loop", [("loop_vars", "x")], [("out", t)], [cond, body])]
    program = mil_program([("x", X)], ["out"], ops)
    desc = description([array_feature("x", X, FLOAT16)], [array_feature("out", X, FLOAT16)],
                       short="regress: while_loop with a constant-true condition")
    return model(7, desc, 502, program)


def main():
    if not os.path.isdir(os.path.join("tests", "regress")):
        sys.exit("run from the repository root")
    files = [(("mil", "stack-overflow-scalar-param-list"), scalar_param_list()),
             (("mlmodel", "hang-nn-loop-1e9-iterations.mlmodel"), nn_loop_1e9()),
             (("mlmodel", "hang-mil-while-loop-constant-true.mlmodel"), mil_while_true())]
    for where, data in files:
        path = os.path.join("tests", "regress", *where)
        with open(path, "wb") as f:
            f.write(data)
        print(path)


if __name__ == "__main__":
    main()
