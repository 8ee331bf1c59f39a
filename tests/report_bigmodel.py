#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""report_bigmodel.py: write a NeuralNetwork of about N layers for the report tests.

    python3 tests/report_bigmodel.py OUT.mlmodel [N]      (default N = 2000)

Residual blocks (1x1 convolution 16->16, ReLU, add of the block's input) in a
chain, with a custom layer (a CPU/GPU fallback) every 250 layers, so the report
has thousands of layers, several segments and switches. Zero fp16 weights; the
encoding is tools/mkfixtures.py's. Deterministic."""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import mkfixtures as fx  # noqa: E402
from pbwire import f_msg  # noqa: E402

RELU = f_msg(10)  # ActivationParams.ReLU = 10


def big(n):
    layers, cur, i = [], "x", 0
    while len(layers) < n:
        b = "blk%d" % i
        if i % 83 == 82:  # a fallback about every 250 layers
            layers.append(fx.layer(b + "_custom", [cur], [b + "_u"], 500, fx.custom("Fallback%d" % i)))
            cur = b + "_u"
        layers.append(fx.layer(b + "_conv", [cur], [b + "_c"], 100, fx.conv(16, 16, 1, 1)))
        layers.append(fx.layer(b + "_relu", [b + "_c"], [b + "_r"], 130, RELU))
        layers.append(fx.layer(b + "_add", [b + "_r", cur], [b + "_a"], 230, b""))
        cur = b + "_a"
        i += 1
    desc = fx.description([fx.array_feature("x", [1, 16, 32, 32])], [fx.array_feature(cur, [])],
                          short="report test: %d-layer residual chain with custom layers" % len(layers))
    return fx.model(4, desc, 500, fx.nn_body(layers))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    with open(sys.argv[1], "wb") as f:
        f.write(big(n))


if __name__ == "__main__":
    main()
