#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mksplit_fixtures.py: writes the crafted fixtures of `anelint split` (tests/split.sh,
tests/unit/test_split.c) into tests/data/crafted/split_*.mlmodel.

split_classifier_image.mlmodel: a RANK5 neuralNetworkClassifier with an RGB image
input and its scaler preprocessing, a second (multi-array) input read only near the
end, a model output ('feat') that a later layer also reads, and three string labels:

    image -> relu 'act' -> global average pool 'pool' (= output 'feat')
          -> add 'addb' (feat + bias) -> add 'addk' (+ constant 'k') -> softmax 'prob'
          -> classifier (probs, classLabel)

The constant 'k' (a loadConstant [3,1,1]) is the first layer, read only by 'addk': cut
after 'pool', the second part must carry a copy of it rather than take it as an input.

The wire bytes are encoded by hand with tools/pbwire.py (no protobuf library);
field numbers as in shared/knowledge/coreml-format-facts.md. Deterministic: run
`python3 tools/mksplit_fixtures.py` from the repo root to regenerate.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from pbwire import f_float, f_msg, f_packed_floats, f_packed_varints, f_str, f_varint  # noqa: E402

OUT = os.path.join("tests", "data", "crafted")
FLOAT32 = 65568  # ArrayDataType


def array_feature(name, shape):
    return f_str(1, name) + f_msg(3, f_msg(5, f_packed_varints(1, shape), f_varint(2, FLOAT32)))


def image_feature(name, w, h, color=20):  # ImageFeatureType{width 1, height 2, colorSpace 3}
    return f_str(1, name) + f_msg(3, f_msg(4, f_varint(1, w), f_varint(2, h), f_varint(3, color)))


def layer(name, inputs, outputs, type_field, params):
    parts = [f_str(1, name)] + [f_str(2, i) for i in inputs] + [f_str(3, o) for o in outputs]
    return f_msg(1, *parts, f_msg(type_field, params))


def classifier_image():
    image = image_feature("image", 4, 4)
    bias = array_feature("bias", [3])
    outs = [f_str(1, "probs") + f_msg(3, f_msg(6, f_msg(2))),   # dictionary, string keys
            f_str(1, "classLabel") + f_msg(3, f_msg(3)),        # string
            array_feature("feat", [3, 1, 1])]
    meta = f_msg(100, f_str(1, "split fixture: classifier, image input, preprocessing"),
                 f_str(3, "tools/mksplit_fixtures.py"), f_str(4, "generated test input, no weights"))
    desc = f_msg(2, *[f_msg(1, i) for i in (image, bias)], *[f_msg(10, o) for o in outs],
                 f_str(11, "classLabel"), f_str(12, "probs"), meta)
    layers = [
        layer("kconst", [], ["k"], 290,                                          # loadConstant
              f_packed_varints(1, [3, 1, 1]) + f_msg(2, f_packed_floats(1, [0.25, -0.5, 0.125]))),
        layer("act", ["image"], ["a"], 130, f_msg(10)),                          # activation ReLU
        layer("pool", ["a"], ["feat"], 120,                                      # global average pool
              f_varint(1, 1) + f_msg(30) + f_varint(60, 1)),
        layer("addb", ["feat", "bias"], ["s"], 230, b""),                        # add
        layer("addk", ["s", "k"], ["sk"], 230, b""),                             # add
        layer("prob", ["sk"], ["prob_out"], 175, b""),                           # softmax
    ]
    pre = f_msg(2, f_str(1, "image"),                                            # preprocessing
                f_msg(10, f_float(10, 1 / 255), f_float(20, 0.1), f_float(21, 0.2),
                      f_float(22, 0.3)))
    labels = f_msg(100, f_str(1, "red"), f_str(1, "green"), f_str(1, "blue"))
    body = b"".join(layers) + pre + labels
    return f_varint(1, 1) + desc + f_msg(403, body)


FIXTURES = {
    "split_classifier_image.mlmodel": classifier_image,
}


def main():
    for name, fn in FIXTURES.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(fn())


if __name__ == "__main__":
    main()
