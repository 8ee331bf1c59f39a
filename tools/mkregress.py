#!/usr/bin/env python3
"""mkregress.py: writes the hand-made files of tests/regress/ that stand for a
fuzzer find whose artifact stayed on the CI machine (tests/regress/README.md).

  mil/stack-overflow-scalar-param-list
      An fp16 ML Program (fuzz_mil framing: u16 weight length 0, then the
      Program) whose cumsum `axis`, gather `axis` and topk `k` are constant
      lists of 24 ints where a scalar is expected. The MIL rules read each into
      one int64_t but told the reader there was room for 16.

Deterministic: run `python3 tools/mkregress.py` from the repository root.
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from mkfixtures import const, mil_program, op, ttype, v_ints  # noqa: E402


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


def main():
    if not os.path.isdir(os.path.join("tests", "regress")):
        sys.exit("run from the repository root")
    path = os.path.join("tests", "regress", "mil", "stack-overflow-scalar-param-list")
    with open(path, "wb") as f:
        f.write(scalar_param_list())
    print(path)


if __name__ == "__main__":
    main()
