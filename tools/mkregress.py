#!/usr/bin/env python3
"""mkregress.py: writes the hand-made files of tests/regress/ that stand for a
fuzzer find whose artifact stayed on the CI machine (tests/regress/README.md).

  mil/stack-overflow-scalar-param-list
      An fp16 ML Program (fuzz_mil framing: u16 weight length 0, then the
      Program) whose cumsum `axis`, gather `axis` and topk `k` are constant
      lists of 24 ints where a scalar is expected. The MIL rules read each into
      one int64_t but told the reader there was room for 16.

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
