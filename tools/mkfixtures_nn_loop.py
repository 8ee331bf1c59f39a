#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fixtures of nn-loop-unroll (src/rewrite/passes/nn_loop_unroll.c), cut down
from the corpus' two NeuralNetwork GRUs (PyTorch nn.GRU converted by
coremltools 8.3 to a `loop` layer whose body gathers x[i] and h[i], computes
the gates and scatters h[i + 1] into a zero buffer):
shared/corpus/converted/gru__nn_ios14.mlmodel (the last step, spec 5) and
gru_seqout__nn_ios13.mlmodel (the sequence, spec 4). Their layers are kept as
the converter wrote them; only the sizes shrink (input I 32 -> 4, hidden
H 64 -> 8: the leading rows / columns of each weight matrix; the sequence T,
the buffer's T + 1 rows, the condition's constant and the slice after the loop
follow T). A dev tool (coremltools' protobuf classes, not a project dependency):
  PYTHONPATH=/work/ct/src /usr/bin/python3 tools/mkfixtures_nn_loop.py [CORPUS_DIR]
Writes tests/data/crafted/:
  loop_gru_last.mlmodel      from gru__nn_ios14, T 10 (applied)
  loop_gru_seq.mlmodel       from gru_seqout__nn_ios13, T 10 (applied)
  loop_gru_64.mlmodel        from gru_seqout__nn_ios13, T 64 (applied: the most unrolled)
  loop_gru_65.mlmodel        T 65 (refused: more than 64 steps)
  loop_gru_dynamic.mlmodel   T 10, the condition's bound a model input `n` (refused:
                             the trip count is known only at run time)
  loop_gru_h0.mlmodel        T 6, the buffer's constant not zero (row 0 the initial h,
                             the scatter's mode add onto non-zero rows: add layers)
"""
import os
import sys

from coremltools.proto import Model_pb2, FeatureTypes_pb2

CORPUS = sys.argv[1] if len(sys.argv) > 1 else os.path.join("..", "shared", "corpus", "converted")
OUT = os.path.join("tests", "data", "crafted")
I_OLD, H_OLD, I_NEW, H_NEW = 32, 64, 4, 8


def load(name):
    m = Model_pb2.Model()
    with open(os.path.join(CORPUS, name), "rb") as f:
        m.ParseFromString(f.read())
    return m


def shrink_ip(p, out_c, in_c):
    """innerProduct: the leading out_c x in_c block of W, the first out_c biases."""
    w = list(p.weights.floatValue)
    old_in = p.inputChannels
    p.weights.ClearField("floatValue")
    p.weights.floatValue.extend(w[r * old_in + c] for r in range(out_c) for c in range(in_c))
    if p.hasBias:
        b = list(p.bias.floatValue)[:out_c]
        p.bias.ClearField("floatValue")
        p.bias.floatValue.extend(b)
    p.inputChannels, p.outputChannels = in_c, out_c


def shrink(m, T, dynamic=False, fill=0.0):
    x = m.description.input[0]
    x.type.multiArrayType.ClearField("shape")
    x.type.multiArrayType.shape.extend([T, 1, I_NEW])
    nn = m.neuralNetwork
    for l in nn.layers:
        k = l.WhichOneof("layer")
        if k == "loadConstantND" and list(l.loadConstantND.shape) == [11, 1, H_OLD]:
            l.loadConstantND.ClearField("shape")
            l.loadConstantND.shape.extend([T + 1, 1, H_NEW])
            l.loadConstantND.data.ClearField("floatValue")
            l.loadConstantND.data.floatValue.extend([fill * ((i % 7) - 3) for i in range((T + 1) * H_NEW)])
        elif k == "slice" and l.slice.endIndex == 11:
            l.slice.endIndex = T + 1
        elif k == "innerProduct":  # the head after the loop: 10 outputs kept
            shrink_ip(l.innerProduct, l.innerProduct.outputChannels, H_NEW)
        elif k == "loop":
            for b in l.loop.bodyNetwork.layers:
                if b.WhichOneof("layer") == "innerProduct":
                    ip = b.innerProduct
                    shrink_ip(ip, H_NEW, I_NEW if ip.inputChannels == I_OLD else H_NEW)
            cond = l.loop.conditionNetwork
            for c in cond.layers:
                if c.WhichOneof("layer") == "loadConstantND":
                    c.loadConstantND.data.ClearField("floatValue")
                    c.loadConstantND.data.floatValue.append(float(T))
            if dynamic:  # lessThan(i, n): n a model input
                less = [c for c in cond.layers if c.WhichOneof("layer") == "lessThan"][0]
                less.input[1] = "n"
                keep = [c for c in cond.layers if c.WhichOneof("layer") != "loadConstantND"]
                del cond.layers[:]
                cond.layers.extend(keep)
                n = m.description.input.add()
                n.name = "n"
                n.type.multiArrayType.shape.append(1)
                n.type.multiArrayType.dataType = FeatureTypes_pb2.ArrayFeatureType.FLOAT32
    m.description.metadata.shortDescription = (
        "%s cut down by tools/mkfixtures_nn_loop.py: I %d, H %d, T %d%s"
        % (m.description.metadata.shortDescription.split(":")[0], I_NEW, H_NEW, T,
           (", the loop's bound the input n" if dynamic else "") +
           (", the buffer not zero (an h0 of its own)" if fill else "")))
    return m


def save(m, name):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(m.SerializeToString())


save(shrink(load("gru__nn_ios14.mlmodel"), 10), "loop_gru_last.mlmodel")
save(shrink(load("gru_seqout__nn_ios13.mlmodel"), 10), "loop_gru_seq.mlmodel")
save(shrink(load("gru_seqout__nn_ios13.mlmodel"), 64), "loop_gru_64.mlmodel")
save(shrink(load("gru_seqout__nn_ios13.mlmodel"), 65), "loop_gru_65.mlmodel")
save(shrink(load("gru_seqout__nn_ios13.mlmodel"), 10, dynamic=True), "loop_gru_dynamic.mlmodel")
save(shrink(load("gru_seqout__nn_ios13.mlmodel"), 6, fill=0.25), "loop_gru_h0.mlmodel")
