#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mkespresso.py: writes the espresso files of the crafted compiled model
tests/data/compiled/crafted_espresso.mlmodelc/ (model.espresso.net, .shape,
.weights). Its coremldata.bin and metadata.json are copies of the MIT-licensed
chiron_parkinson_wave.mlmodelc (see tests/data/PROVENANCE.md): a NeuralNetwork
with one input `input_1` and one output `Identity`. The layers follow the
layout observed in shared/corpus/compiled/FORMAT-NOTES.md section 2: a fused
ReLU, fp16 conv weights (blob_weights_f16), odd blob ids with even filler blobs,
and one espresso code with no known NeuralNetwork kind (elementwise 25).
Run from the repo root: python3 tools/mkespresso.py (deterministic)."""
import json
import os
import struct

OUT = "tests/data/compiled/crafted_espresso.mlmodelc"


def layer(**kw):
    d = {"weights": {}}
    d.update(kw)
    return d


layers = [
    layer(name="conv1", type="convolution", bottom="input_1", top="c1", C=16, K=1, Nx=3, Ny=3,
          stride_x=1, stride_y=1, pad_t=1, pad_b=1, pad_l=1, pad_r=1, n_groups=1, has_biases=1,
          fused_relu=1, fused_tanh=0, has_batch_norm=0, blob_weights_f16=3, blob_biases=1),
    layer(name="pool1", type="pool", bottom="c1", top="p1", size_x=2, size_y=2, stride_x=2,
          stride_y=2, avg_or_max=1, pad_t=0, pad_b=0, pad_l=0, pad_r=0),
    layer(name="relu1", type="activation", bottom="p1", top="a1", mode=0, alpha=0, beta=0),
    layer(name="clip1", type="elementwise", bottom="a1,a1", top="e1", operation=25, alpha=-6,
          beta=0),
    layer(name="fc1", type="inner_product", bottom="e1", top="f1", nB=16, nC=8, has_biases=0,
          has_relu=0, has_tanh=0, has_prelu=0, blob_weights=5),
    layer(name="softmax", type="softmax_nd", bottom="f1", top="Identity", nd_axis=-1,
          attributes={"is_output": 1}),
]
net = {"storage": "model.espresso.weights", "format_version": 200, "layers": layers,
       "properties": {}, "analyses": {}, "metadata_in_weights": []}
shapes = {"layer_shapes": {b: {"n": 1, "k": k, "h": h, "w": w, "_rank": 4} for b, k, h, w in [
    ("input_1", 1, 128, 128), ("c1", 16, 128, 128), ("p1", 16, 64, 64), ("a1", 16, 64, 64),
    ("e1", 16, 64, 64), ("f1", 8, 1, 1), ("Identity", 8, 1, 1)]}}
sizes = [56, 16 * 4, 0, 16 * 3 * 3 * 2, 0, 8 * 16 * 4]
blob = struct.pack("<Q", len(sizes))
for i, s in enumerate(sizes):
    blob += struct.pack("<QQ", i, s)
for i, s in enumerate(sizes):
    blob += bytes((i * 7 + k) % 251 for k in range(s))
os.makedirs(OUT, exist_ok=True)
with open(os.path.join(OUT, "model.espresso.net"), "w") as f:
    json.dump(net, f, indent=2, separators=(",", " : "))
with open(os.path.join(OUT, "model.espresso.shape"), "w") as f:
    json.dump(shapes, f, indent=2, separators=(",", " : "))
with open(os.path.join(OUT, "model.espresso.weights"), "wb") as f:
    f.write(blob)
