#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fixtures of the NeuralNetwork recurrent passes (nn-gru-unroll,
nn-lstm-unroll reverse, nn-bilstm-unroll), written the way coremltools writes
them: with coremltools' NeuralNetworkBuilder (a dev tool, not a project
dependency: PYTHONPATH=/work/ct/src /usr/bin/python3 tools/mkfixtures_nn_recurrent.py),
weights from numpy's seeded generator. Writes tests/data/crafted/:

  fix_nn_gru.mlmodel      gru_a: 5 steps, sigmoid gates, biases, the whole sequence;
                          gru_b: 4 steps from an h0 input, reverseInput, sigmoidHard gates
                          (the builder's default), the last step; gru_c: 64 steps, the
                          sequence (the most unrolled); gru_d: 65 steps (refused)
  fix_nn_lstm_rev_bi.mlmodel
                          lstm_r: a reverseInput uniDirectionalLSTM, 4 steps, the sequence;
                          bilstm: a biDirectionalLSTM, 3 steps, the sequence, from h0 / c0
                          inputs of both directions
  fix_nn_zero_state.mlmodel
                          expanddims-const-to-loadconst: lstm_a's h0 / c0 zero loadConstantND
                          [1, 4] each read by an expandDims to [1, 1, 4, 1, 1] (as coremltools
                          writes them); lstm_b's one constant read by two (left)
  nn_lstm_classifier.mlmodel, nn_lstm_classifier_inputs/tokens.npy
                          a text classifier: embedding (vocabulary 40, 8) over 12 tokens,
                          uniDirectionalLSTM (H 16, the last step), innerProduct 3, softmax
"""
import os

import numpy as np
from coremltools.models import datatypes
from coremltools.models.neural_network import NeuralNetworkBuilder
from coremltools.models.utils import save_spec

OUT = os.path.join("tests", "data", "crafted")
rng = np.random.default_rng(31)


def w(*shape, s=0.5):
    return (rng.standard_normal(shape) * s).astype(np.float32)


def arr(*shape):
    return datatypes.Array(*shape)


def gru(b, name, I, H, ins, outs, **kw):
    b.add_gru(name, W_h=[w(H, H) for _ in range(3)], W_x=[w(H, I) for _ in range(3)],
              b=[w(H) for _ in range(3)], hidden_size=H, input_size=I, input_names=ins,
              output_names=outs, **kw)


def fix_nn_gru():
    I, H = 3, 4
    ins = [("xa", arr(5, 1, I, 1, 1)), ("xb", arr(4, 1, I, 1, 1)), ("h0", arr(1, 1, H, 1, 1)),
           ("xc", arr(64, 1, I, 1, 1)), ("xd", arr(65, 1, I, 1, 1))]
    outs = [("ya", None), ("ha", None), ("yb", None), ("hb", None), ("yc", None), ("yd", None)]
    b = NeuralNetworkBuilder(ins, outs, disable_rank5_shape_mapping=True)
    gru(b, "gru_a", I, H, ["xa"], ["ya", "ha"], inner_activation="SIGMOID", output_all=True)
    gru(b, "gru_b", I, H, ["xb", "h0"], ["yb", "hb"], reverse_input=True)
    gru(b, "gru_c", I, H, ["xc"], ["yc", "hc"], output_all=True)
    gru(b, "gru_d", I, H, ["xd"], ["yd", "hd"])
    return b.spec


def lstm_w(I, H):
    return [w(H, H) for _ in range(4)], [w(H, I) for _ in range(4)], [w(H, s=0.2) for _ in range(4)]


def fix_nn_lstm_rev_bi():
    I, H = 3, 4
    ins = [("xr", arr(4, 1, I, 1, 1)), ("xbi", arr(3, 1, I, 1, 1)), ("h0f", arr(1, 1, H, 1, 1)),
           ("c0f", arr(1, 1, H, 1, 1)), ("h0b", arr(1, 1, H, 1, 1)), ("c0b", arr(1, 1, H, 1, 1))]
    outs = [("yr", None), ("ybi", None), ("hf", None), ("cf", None), ("hbk", None), ("cbk", None)]
    b = NeuralNetworkBuilder(ins, outs, disable_rank5_shape_mapping=True)
    wh, wx, bb = lstm_w(I, H)
    b.add_unilstm("lstm_r", wh, wx, bb, H, I, ["xr"], ["yr", "hr", "cr"], output_all=True, reverse_input=True)
    wh, wx, bb = lstm_w(I, H)
    wh2, wx2, bb2 = lstm_w(I, H)
    b.add_bidirlstm("bilstm", wh, wx, bb, wh2, wx2, bb2, H, I, ["xbi", "h0f", "c0f", "h0b", "c0b"],
                    ["ybi", "hf", "cf", "hbk", "cbk"], output_all=True)
    return b.spec


def fix_nn_zero_state():
    I, H = 3, 4
    ins = [("xa", arr(3, 1, I, 1, 1)), ("xb", arr(3, 1, I, 1, 1))]
    outs = [("ya", None), ("yb", None)]
    b = NeuralNetworkBuilder(ins, outs, disable_rank5_shape_mapping=True)
    zero = np.zeros((1, H), np.float32)
    # a: h0 and c0 each a zero loadConstantND [1, H] read by one expandDims (taken in)
    for k in ("h", "c"):
        b.add_load_constant_nd("a_%s0" % k, "a_%s0" % k, zero, [1, H])
        b.add_expand_dims("a_%s0_x" % k, "a_%s0" % k, "a_%s0_5d" % k, axes=[0, 3, 4])
    wh, wx, bb = lstm_w(I, H)
    b.add_unilstm("lstm_a", wh, wx, bb, H, I, ["xa", "a_h0_5d", "a_c0_5d"], ["ya", "ha", "ca"], output_all=True)
    # b: one constant read by both expandDims (left: it has another reader)
    b.add_load_constant_nd("b_s0", "b_s0", zero, [1, H])
    b.add_expand_dims("b_h0_x", "b_s0", "b_h0_5d", axes=[0, 3, 4])
    b.add_expand_dims("b_c0_x", "b_s0", "b_c0_5d", axes=[0, 3, 4])
    wh, wx, bb = lstm_w(I, H)
    b.add_unilstm("lstm_b", wh, wx, bb, H, I, ["xb", "b_h0_5d", "b_c0_5d"], ["yb", "hb", "cb"], output_all=True)
    return b.spec


def nn_lstm_classifier():
    T, V, E, H, K = 12, 40, 8, 16, 3
    b = NeuralNetworkBuilder([("tokens", arr(T, 1, 1, 1, 1))], [("probs", None)],
                             disable_rank5_shape_mapping=True)
    b.add_embedding("embed", W=w(E, V), b=None, input_dim=V, output_channels=E, has_bias=False,
                    input_name="tokens", output_name="emb")
    wh, wx, bb = lstm_w(E, H)
    b.add_unilstm("lstm", wh, wx, bb, H, E, ["emb"], ["h", "h_n", "c_n"], output_all=False)
    b.add_inner_product("dense", W=w(K, H), b=w(K), input_channels=H, output_channels=K, has_bias=True,
                        input_name="h", output_name="logits")
    b.add_softmax("softmax", "logits", "probs")
    return b.spec


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, fn in (("fix_nn_gru", fix_nn_gru), ("fix_nn_lstm_rev_bi", fix_nn_lstm_rev_bi),
                     ("nn_lstm_classifier", nn_lstm_classifier)):
        path = os.path.join(OUT, name + ".mlmodel")
        save_spec(fn(), path)
        print(f"{path}: {os.path.getsize(path)} bytes")
    # the classifier's tokens (indices into the vocabulary), for run / verify / fix --inputs
    d = os.path.join(OUT, "nn_lstm_classifier_inputs")
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "tokens.npy"), rng.integers(0, 40, (12, 1, 1, 1, 1)).astype(np.float32))
    # last, so that the fixtures above keep their weights
    path = os.path.join(OUT, "fix_nn_zero_state.mlmodel")
    save_spec(fix_nn_zero_state(), path)
    print(f"{path}: {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
