#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mkfixtures.py: writes the crafted Core ML fixtures of tests/data/crafted/.

These are the smallest models that trigger (or must not trigger) the rules no
converted corpus model covers: wide convolution kernels, unfolded batchnorm,
tiny normalisation epsilons, fractional upsampling, rank-6 tensors, custom and
topk ops, enumerated shapes on two inputs, non-neural and OS-provided pipeline
stages, a NeuralNetwork classifier; and for the shape- and family-dependent
rules (nn_shapes, mil_shapes, nn_tiny, mil_tiny): channel-broadcast multiplies,
axes over the per-family caps, short last axes, sin/cos, texture ops,
activation quantization and models too small for the ANE. The protobuf wire bytes are encoded by
hand (tools/pbwire.py; no protobuf library); field numbers come from coremltools'
mlmodel/format/*.proto as listed in shared/knowledge/coreml-format-facts.md.

The files are committed; run `python3 tools/mkfixtures.py` from the repo root
to regenerate them (the output is deterministic). It does not write the
> 1 GiB weights fixture: tests/unit/test_rules.c builds that one as a sparse
file in a temporary directory at test time.
"""

import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tools/, whatever the cwd
sys.dont_write_bytecode = True  # no tools/__pycache__ in the work tree
from pbwire import (f_bytes, f_float, f_msg, f_packed_floats,  # noqa: E402
                    f_packed_varints, f_str, f_varint)

OUT = os.path.join("tests", "data", "crafted")

# ---------------------------------------------------------------- Model.proto

FLOAT32, FLOAT16, INT32 = 65568, 65552, 131104  # ArrayDataType


def array_feature(name, shape, dtype=FLOAT32, enum=None):
    """FeatureDescription{name=1, type=3 FeatureType{multiArrayType=5}}."""
    arr = [f_packed_varints(1, shape), f_varint(2, dtype)]
    if enum:  # EnumeratedShapes = 21 {repeated Shape shapes = 1 {shape = 1}}
        arr.append(f_msg(21, *[f_msg(1, f_packed_varints(1, s)) for s in enum]))
    return f_str(1, name) + f_msg(3, f_msg(5, *arr))


def image_feature(name, w, h, color=20):
    return f_str(1, name) + f_msg(3, f_msg(4, f_varint(1, w), f_varint(2, h), f_varint(3, color)))


def string_feature(name):
    return f_str(1, name) + f_msg(3, f_msg(3))


def dict_feature(name):  # DictionaryFeatureType{stringKeyType = 2 {}}
    return f_str(1, name) + f_msg(3, f_msg(6, f_msg(2)))


def description(inputs, outputs, predicted=None, probs=None, short=None,
                weights="generated test input, zero weights", user=None):
    parts = [f_msg(1, i) for i in inputs] + [f_msg(10, o) for o in outputs]
    if predicted:
        parts.append(f_str(11, predicted))
    if probs:
        parts.append(f_str(12, probs))
    meta = [f_str(1, short or "anelint crafted fixture"), f_str(3, "tools/mkfixtures.py"),
            f_str(4, weights)]
    for k, v in (user or {}).items():  # Metadata.userDefined = 100 (map<string, string>)
        meta.append(f_msg(100, f_str(1, k), f_str(2, v)))
    parts.append(f_msg(100, *meta))
    return f_msg(2, *parts)


def model(spec, desc, type_field, body):
    return f_varint(1, spec) + desc + f_bytes(type_field, body)


# ---------------------------------------------------------------- NeuralNetwork.proto


def layer(name, inputs, outputs, type_field, params):
    parts = [f_str(1, name)] + [f_str(2, i) for i in inputs] + [f_str(3, o) for o in outputs]
    return f_msg(1, *parts, f_bytes(type_field, params))


def weights_f16(count):  # WeightParams.float16Value = 2 (zeros)
    return f_bytes(2, b"\0\0" * count)


def weights_f32(vals):  # WeightParams.floatValue = 1
    return f_packed_floats(1, vals)


def conv(cin, cout, kh, kw, dil=(1, 1)):
    """ConvolutionLayerParams: outputChannels 1, kernelChannels 2, nGroups 10,
    kernelSize 20, stride 30, dilationFactor 40, valid 50, weights 90."""
    return b"".join([
        f_varint(1, cout), f_varint(2, cin), f_varint(10, 1),
        f_packed_varints(20, [kh, kw]), f_packed_varints(30, [1, 1]),
        f_packed_varints(40, list(dil)), f_msg(50),
        f_msg(90, weights_f16(cout * cin * kh * kw)),
    ])


def batchnorm(channels, eps=None, instance=False):
    """BatchnormLayerParams: channels 1, computeMeanVar 5, instanceNormalization 6,
    epsilon 10, gamma 15, beta 16, mean 17, variance 18."""
    parts = [f_varint(1, channels)]
    if instance:
        parts += [f_varint(5, 1), f_varint(6, 1)]
    if eps is not None:
        parts.append(f_float(10, eps))
    parts += [f_msg(15, weights_f32([1.0] * channels)), f_msg(16, weights_f32([0.0] * channels))]
    if not instance:
        parts += [f_msg(17, weights_f32([0.0] * channels)),
                  f_msg(18, weights_f32([1.0] * channels))]
    return b"".join(parts)


def nn_body(layers, exact=True):
    return b"".join(layers) + (f_varint(5, 1) if exact else b"")


def nn_rules():
    """One NeuralNetwork whose layers each trigger, or carefully do not
    trigger, one NN rule (layer names say which)."""
    x = array_feature("x", [1, 8, 16, 16])
    layers = [
        # ANE014 fires (kW 15); ANE014 / ANE004 do not fire on the tall one
        layer("conv_wide", ["x"], ["conv_wide"], 100, conv(8, 1, 3, 15)),
        layer("conv_tall", ["x"], ["conv_tall"], 100, conv(8, 1, 15, 3)),
        # ANE013 fires on bn_fold (batchnorm right after a convolution)
        layer("conv_a", ["x"], ["conv_a"], 100, conv(8, 8, 1, 1)),
        layer("bn_fold", ["conv_a"], ["bn_fold"], 160, batchnorm(8, eps=1e-5)),
        # ANE013 does not fire: instance normalisation cannot be folded
        layer("bn_inst", ["conv_a"], ["bn_inst"], 160, batchnorm(8, eps=1e-5, instance=True)),
        # ANE018 fires (epsilon 1e-10); ANE013 does not (input is an activation)
        layer("relu_x", ["x"], ["relu_x"], 130, f_msg(10)),
        layer("bn_eps", ["relu_x"], ["bn_eps"], 160, batchnorm(8, eps=1e-10)),
        # ANE018 fires: layerNormalization without eps (protobuf default 0)
        layer("ln_noeps", ["x"], ["ln_noeps"], 1350,
              f_packed_varints(1, [16]) + f_msg(3, weights_f32([1.0] * 16)) +
              f_msg(4, weights_f32([0.0] * 16))),
        # ANE018 does not fire: mvn without variance normalisation ignores epsilon
        layer("mvn_nov", ["x"], ["mvn_nov"], 165, b""),
        # ANE010 fires (fractional 1.5) / does not fire (x2)
        layer("up_frac", ["x"], ["up_frac"], 210,
              f_varint(5, 1) + f_varint(6, 1) + f_packed_floats(7, [1.5, 1.5])),
        layer("up2", ["x"], ["up2"], 210, f_packed_varints(1, [2, 2])),
        # ANE008 / ANE009 do not fire: global pooling, and stride 4
        layer("pool_global", ["x"], ["pool_global"], 120,
              f_varint(1, 1) + f_packed_varints(10, [15, 15]) + f_packed_varints(20, [3, 3]) +
              f_msg(30) + f_varint(60, 1)),
        layer("pool_s4", ["x"], ["pool_s4"], 120,
              f_packed_varints(10, [4, 4]) + f_packed_varints(20, [4, 4]) + f_msg(30)),
        # ANE012 fires (two runtime operands) / does not fire (constant weights:
        # weightMatrixFirstDimension 5, weightMatrixSecondDimension 6, weights 8)
        layer("bmm_dyn", ["x", "x"], ["bmm_dyn"], 1045, b""),
        layer("bmm_w", ["x"], ["bmm_w"], 1045,
              f_varint(5, 16) + f_varint(6, 4) + f_msg(8, weights_f16(64))),
    ]
    outs = ["conv_wide", "conv_tall", "bn_fold", "bn_inst", "bn_eps", "ln_noeps", "mvn_nov",
            "up_frac", "up2", "pool_global", "pool_s4", "bmm_dyn", "bmm_w"]
    desc = description([x], [array_feature(o, []) for o in outs],
                       short="NN rule fixture: ANE008-010, ANE012-014, ANE018")
    return model(5, desc, 500, nn_body(layers))


def pooling_global():
    """PoolingLayerParams: type 1 AVERAGE, valid 30, globalPooling 60."""
    return f_varint(1, 1) + f_msg(30) + f_varint(60, 1)


def nn_shapes():
    """NeuralNetwork (EXACT array mapping) for the rules that need inferred
    shapes or depend on the chip family. Input shapes are declared; the rest
    comes from shape inference. Layer names say which rule fires."""
    feats = [array_feature("x", [1, 8, 16, 16]), array_feature("wide", [1, 1, 20000]),
             array_feature("chan", [20000, 1, 32]), array_feature("tall", [1, 128, 256, 1]),
             array_feature("flat", [1, 128, 1, 256]), array_feature("big", [1, 64, 128, 128])]
    layers = [
        # ANE011 fires: x [1,8,16,16] times its own global average [1,8,1,1] (computed)
        layer("se_pool", ["x"], ["se_pool"], 120, pooling_global()),
        layer("se_mul", ["x", "se_pool"], ["se_mul"], 231, b""),
        # ANE011 does not fire: same shapes on both sides
        layer("sq_mul", ["x", "x"], ["sq_mul"], 231, b""),
        # ANE050 fires: reshapeStatic to rank 6 / does not fire: rank 3
        layer("r6", ["x"], ["r6"], 1140, f_packed_varints(1, [2, 4, 4, 4, 4, 4])),
        layer("r3", ["x"], ["r3"], 1140, f_packed_varints(1, [1, 8, 256])),
        # ANE051 fires on a14 (last axis 20000 > 16384), not on a17 (65536);
        # the channel axis of chan (20000) is within 65536 everywhere
        layer("wide_relu", ["wide"], ["wide_relu"], 130, f_msg(10)),
        layer("chan_relu", ["chan"], ["chan_relu"], 130, f_msg(10)),
        # ANE052 fires: last axis 1 over 128x256 rows (2 MiB padded) / not: last axis 256
        layer("tall_relu", ["tall"], ["tall_relu"], 130, f_msg(10)),
        layer("flat_relu", ["flat"], ["flat_relu"], 130, f_msg(10)),
        # ANE053 fires before H15 (a14, a15), not from a16
        layer("sin_x", ["x"], ["sin_x"], 710, b""),
        # ANE054 fires before H14 (a14), not from a15
        layer("crop_x", ["x", "x"], ["crop_x"], 212, f_packed_varints(1, [4, 4])),
        # enough work (1.2 GFLOP) that ANE071 (tiny model) must not fire
        layer("big_conv", ["big"], ["big_conv"], 100, conv(64, 64, 3, 3)),
    ]
    outs = ["se_mul", "sq_mul", "r6", "r3", "wide_relu", "chan_relu", "tall_relu", "flat_relu",
            "sin_x", "crop_x", "big_conv"]
    desc = description(feats, [array_feature(o, []) for o in outs],
                       short="NN shape/family fixture: ANE011, ANE050-054, ANE071")
    return model(5, desc, 500, nn_body(layers))


def nn_tiny():
    """A NeuralNetwork that does 512 FLOPs: ANE071 (tiny model) fires."""
    ip = f_varint(1, 16) + f_varint(2, 16) + f_msg(20, weights_f16(256))
    body = nn_body([layer("fc", ["x"], ["y"], 140, ip)])
    desc = description([array_feature("x", [1, 16])], [array_feature("y", [])],
                       short="tiny NN fixture: ANE071")
    return model(5, desc, 500, body)


def nn_releases():
    """A NeuralNetwork whose layers' placement depends on the OS release: a
    convolution feeding a global average pool with VALID padding over 16x16
    (ANE056 on both, iOS 13/14), the same with SAME padding (nothing fires), and
    a global max pool with VALID padding (nothing fires)."""
    x = array_feature("x", [1, 8, 16, 16])
    gap = lambda pad, kind=1: (f_varint(1, kind) + f_packed_varints(10, [1, 1]) +
                               f_packed_varints(20, [1, 1]) + f_msg(pad) + f_varint(60, 1))
    layers = [
        layer("conv_v", ["x"], ["conv_v"], 100, conv(8, 8, 3, 3)),
        layer("gap_valid", ["conv_v"], ["gap_valid"], 120, gap(30)),
        layer("conv_s", ["x"], ["conv_s"], 100, conv(8, 8, 3, 3)),
        layer("gap_same", ["conv_s"], ["gap_same"], 120, gap(31)),
        layer("conv_m", ["x"], ["conv_m"], 100, conv(8, 8, 3, 3)),
        layer("gmp_valid", ["conv_m"], ["gmp_valid"], 120, gap(30, kind=0)),
    ]
    outs = ["gap_valid", "gap_same", "gmp_valid"]
    desc = description([x], [array_feature(o, []) for o in outs],
                       short="NN release rule fixture: ANE056")
    return model(4, desc, 500, nn_body(layers))


def huge_input():
    """A 200-byte model declaring an unused 1x3x18000x18000 input (3.9 GB of fp32)
    next to a tiny one: `run --random` must refuse it before allocating (found by
    fuzz_mlmodel in CI: the model's work is tiny, so the harness ran it)."""
    body = nn_body([layer("relu", ["a"], ["y"], 130, f_msg(10))])
    desc = description([array_feature("a", [1, 4]), array_feature("x", [1, 3, 18000, 18000])],
                       [array_feature("y", [])],
                       short="huge declared input: the interpreter's budget")
    return model(4, desc, 500, body)


def nn_classifier():
    """A neuralNetworkClassifier (ANE044): softmax, two string labels."""
    x = array_feature("x", [2])
    body = layer("probs", ["x"], ["probs"], 175, b"") + f_msg(100, f_str(1, "cat"), f_str(1, "dog"))
    desc = description([x], [dict_feature("probs"), string_feature("classLabel")],
                       predicted="classLabel", probs="probs",
                       short="NeuralNetwork classifier fixture: ANE044")
    return model(1, desc, 403, body)


def enum_pipeline():
    """pipeline: stage two_enum enumerates two inputs (ANE041 fires), stage
    one_enum enumerates one (ANE041 does not; a single listed shape is fixed)."""
    a = array_feature("a", [1, 3], enum=[[1, 3], [1, 5]])
    b = array_feature("b", [1, 3], enum=[[1, 3], [1, 7]])
    c = array_feature("c", [1, 3], enum=[[1, 3], [1, 5]])
    d = array_feature("d", [1, 3], enum=[[1, 3]])
    y = array_feature("y", [])
    z = array_feature("z", [])
    m0 = model(4, description([a, b], [y], short="two enumerated inputs"), 500,
               nn_body([layer("y", ["a", "b"], ["y"], 880, b"")]))
    m1 = model(4, description([c, d], [z], short="one enumerated input"), 500,
               nn_body([layer("z", ["c", "d"], ["z"], 880, b"")]))
    pipe = f_bytes(1, m0) + f_bytes(1, m1) + f_str(2, "two_enum") + f_str(2, "one_enum")
    desc = description([a, b, c, d], [y, z], short="pipeline fixture: ANE041")
    return model(4, desc, 202, pipe)


def enum_two():
    """NeuralNetwork (spec 4), not in a pipeline: two inputs with enumerated
    shapes (ANE041), added. check prints the fix that keeps a's shapes and fixes
    b's (`fix --shape b=default`), which leaves one enumerated input."""
    a = array_feature("a", [1, 3], enum=[[1, 3], [1, 5]])
    b = array_feature("b", [1, 3], enum=[[1, 3], [1, 7]])
    y = array_feature("y", [])
    return model(4, description([a, b], [y], short="two enumerated inputs: ANE041"), 500,
                 nn_body([layer("y", ["a", "b"], ["y"], 880, b"")]))


def nonneural_pipeline():
    """pipelineClassifier = visionFeaturePrint (ANE043) + glmClassifier (ANE042),
    the shape of a Create ML image classifier; the bodies are empty messages."""
    img = image_feature("image", 299, 299)
    fp = array_feature("featurePrint", [2048])
    vfp = model(3, description([img], [fp], short="OS feature print"), 2002, b"")
    glm = model(1, description([fp], [dict_feature("probs"), string_feature("label")],
                               predicted="label", probs="probs", short="linear classifier"),
                400, b"")
    pipe = f_msg(1, f_bytes(1, vfp), f_bytes(1, glm))
    desc = description([img], [dict_feature("probs"), string_feature("label")],
                       predicted="label", probs="probs",
                       short="pipeline fixture: ANE042, ANE043")
    return model(3, desc, 200, pipe)


# ---------------------------------------------------------------- MIL.proto

DT = {"bool": 1, "string": 2, "fp16": 10, "fp32": 11, "fp64": 12, "int8": 21, "int32": 23}


def ttype(dtype, dims):
    """ValueType{tensorType = 1 {dataType 1, rank 2, dimensions 3}}; a dim None
    is an unknown one (Dimension.unknown = 2 {}: "?", a flexible input's axis)."""
    t = [f_varint(1, DT[dtype]), f_varint(2, len(dims))]
    t += [f_msg(3, f_msg(2) if d is None else f_msg(1, f_varint(1, d))) for d in dims]
    return f_msg(1, *t)


def dict_type(key, val):  # ValueType{dictionaryType = 4 {keyType 1, valueType 2}}
    return f_msg(4, f_msg(1, key), f_msg(2, val))


def named(name, vtype):  # NamedValueType{name 1, type 2}
    return f_str(1, name) + f_msg(2, vtype)


def value(vtype, tensor_value):  # Value{type 2, immediateValue 3 {tensor 1}}
    return f_msg(2, vtype) + f_msg(3, f_msg(1, tensor_value))


def v_ints(vals, dims=None):
    return value(ttype("int32", [len(vals)] if dims is None else dims),
                 f_msg(2, f_packed_varints(1, vals)))


def v_floats(vals, dims=None):
    return value(ttype("fp32", [len(vals)] if dims is None else dims),
                 f_msg(1, f_packed_floats(1, vals)))


def v_string(s):
    return value(ttype("string", []), f_msg(4, f_str(1, s)))


def v_fp16_zeros(dims):
    n = 1
    for d in dims:
        n *= d
    return value(ttype("fp16", dims), f_msg(7, f_bytes(1, b"\0\0" * n)))


def v_fp16(vals, dims):
    """An immediate fp16 tensor: TensorValue.bytes = 7 {values = 1}."""
    return value(ttype("fp16", dims), f_msg(7, f_bytes(1, struct.pack("<%de" % len(vals), *vals))))


def op(type_, inputs, outputs, attrs=None, name=None):
    """Operation{type 1, inputs 2 map<string, Argument{arguments 1 Binding{name 1 |
    value 2}}>, outputs 3, attributes 5 map<string, Value>}."""
    parts = [f_str(1, type_)]
    for param, bound in inputs:
        binding = f_str(1, bound) if isinstance(bound, str) else f_msg(2, bound[1])
        parts.append(f_msg(2, f_str(1, param), f_msg(2, f_msg(1, binding))))
    parts += [f_msg(3, named(n, t)) for n, t in outputs]
    attrs = dict(attrs or {})
    attrs.setdefault("name", v_string(name or outputs[0][0]))
    for k in sorted(attrs):
        parts.append(f_msg(5, f_str(1, k), f_msg(2, attrs[k])))
    return f_msg(3, *parts)


def const(name, val, vtype):
    return op("const", [], [(name, vtype)], {"val": val})


def mil_rules():
    """One fp16 ML Program whose ops trigger, or must not trigger, the MIL rules
    that no converted model covers (op names say which)."""
    X = [1, 8, 16, 16]
    f16 = lambda dims: ttype("fp16", dims)
    ops = [
        # ANE028 fires (kernel width 15) / does not fire (width 3, height 15);
        # conv_tall has dilations [1,1]: ANE024 must not fire
        const("w_wide", v_fp16_zeros([1, 8, 3, 15]), f16([1, 8, 3, 15])),
        op("conv", [("x", "x"), ("weight", "w_wide")], [("conv_wide", f16([1, 1, 14, 2]))]),
        const("w_tall", v_fp16_zeros([1, 8, 15, 3]), f16([1, 8, 15, 3])),
        const("dil1", v_ints([1, 1]), ttype("int32", [2])),
        op("conv", [("x", "x"), ("weight", "w_tall"), ("dilations", "dil1")],
           [("conv_tall", f16([1, 1, 2, 14]))]),
        # ANE023 fires
        op("custom_layer", [("x", "x")], [("custom", f16(X))],
           {"class_name": v_string("CraftedOp")}),
        # ANE035 fires (and ANE031 on the int32 indices)
        const("k3", v_ints([3], dims=[]), ttype("int32", [])),
        op("topk", [("x", "x"), ("k", "k3")],
           [("topk_values", f16([1, 8, 16, 3])), ("topk_indices", ttype("int32", [1, 8, 16, 3]))]),
        # ANE034 fires
        # (every float input of one op in one dtype: the iOS 16 op definitions take no
        # mix, src/format/mil_domains.def)
        const("two", v_fp16([2.0], []), f16([])),
        op("mod", [("x", "x"), ("y", "two")], [("mod_out", f16(X))]),
        # ANE036 fires (epsilon 1e-10 in fp16) / does not fire (1e-5)
        const("ln_axes", v_ints([-1]), ttype("int32", [1])),
        const("eps_tiny", v_fp16([1e-10], []), f16([])),
        const("eps_ok", v_fp16([1e-5], []), f16([])),
        op("layer_norm", [("x", "x"), ("axes", "ln_axes"), ("epsilon", "eps_tiny")],
           [("ln_tiny", f16(X))]),
        op("layer_norm", [("x", "x"), ("axes", "ln_axes"), ("epsilon", "eps_ok")],
           [("ln_ok", f16(X))]),
        # ANE032 fires (rank 6)
        const("shape6", v_ints([1, 2, 4, 4, 4, 4]), ttype("int32", [6])),
        op("reshape", [("x", "x"), ("shape", "shape6")], [("r6", f16([1, 2, 4, 4, 4, 4]))]),
        # an fp32 island: ANE029 fires on x32 and relu32; ANE030 must not fire
        # (neither cast touches a model input or output)
        const("to32", v_string("fp32"), ttype("string", [])),
        op("cast", [("x", "x"), ("dtype", "to32")], [("x32", ttype("fp32", X))]),
        op("relu", [("x", "x32")], [("relu32", ttype("fp32", X))]),
        const("to16", v_string("fp16"), ttype("string", [])),
        op("cast", [("x", "relu32"), ("dtype", "to16")], [("back16", f16(X))]),
        # nothing fires on a plain fp16 relu
        op("relu", [("x", "x")], [("relu16", f16(X))]),
        # ANE037 fires (classify takes fp32 probabilities only)
        const("probs", v_floats([0.0, 0.0], [2]), ttype("fp32", [2])),
        op("classify", [("probabilities", "probs"),
                        ("classes", ("value", value(ttype("string", [2]),
                                                    f_msg(4, f_str(1, "a"), f_str(1, "b")))))],
           [("classLabel", ttype("string", [])),
            ("classProbs", dict_type(ttype("string", []), ttype("fp64", [])))]),
    ]
    outs = ["conv_wide", "conv_tall", "custom", "topk_values", "mod_out", "ln_tiny", "ln_ok",
            "r6", "back16", "relu16", "classLabel"]
    block = b"".join(f_str(2, o) for o in outs) + b"".join(ops)
    fn = f_msg(1, named("x", f16(X))) + f_str(2, "CoreML6") + \
        f_msg(3, f_str(1, "CoreML6"), f_msg(2, block))
    program = f_varint(1, 1) + f_msg(2, f_str(1, "main"), f_msg(2, fn))
    out_feats = [array_feature(o, [], FLOAT16) for o in outs if o != "classLabel"]
    desc = description([array_feature("x", X, FLOAT16)],
                       out_feats + [string_feature("classLabel")],
                       short="ML Program rule fixture: ANE023, ANE028, ANE029, ANE031, ANE032, "
                             "ANE034-037")
    return model(7, desc, 502, program)


def mil_releases():
    """One fp16 ML Program with the ops whose placement the evidence shows moving
    between OS releases or chips: softplus (ANE066, A15/M2 from iOS 17),
    resample, what grid_sample converts to (ANE065, A15/M2 on iOS 18), and
    weights palettized with a per-channel scale (ANE039, from iOS 26), beside a
    per-channel int8 weight (ANE038 must not fire)."""
    X = [1, 8, 16, 16]
    f16 = lambda dims: ttype("fp16", dims)
    ops = [
        op("softplus", [("x", "x")], [("softplus_out", f16(X))]),
        const("grid", v_fp16_zeros([1, 8, 8, 2]), f16([1, 8, 8, 2])),
        const("mode", v_string("bilinear"), ttype("string", [])),
        const("pad_mode", v_string("zeros"), ttype("string", [])),
        const("pad_value", v_floats([0.0], dims=[]), ttype("fp32", [])),
        const("coord_mode", v_string("normalized_minus_one_to_one"), ttype("string", [])),
        const("align", value(ttype("bool", []), f_msg(3, f_varint(1, 0))), ttype("bool", [])),
        op("resample", [("x", "x"), ("coordinates", "grid"), ("sampling_mode", "mode"),
                        ("padding_mode", "pad_mode"), ("padding_value", "pad_value"),
                        ("coordinates_mode", "coord_mode"), ("align_corners", "align")],
           [("resample_out", f16([1, 8, 8, 8]))]),
        op("relu", [("x", "x")], [("relu_out", f16(X))]),
        # ANE039 (from iOS 26): a 1x1 conv whose weight is a LUT rescaled per channel
        const("lut_indices", v_ints([0] * 64, dims=[8, 8, 1, 1]), ttype("int32", [8, 8, 1, 1])),
        const("lut", v_fp16_zeros([1, 1, 16, 1]), f16([1, 1, 16, 1])),
        op("constexpr_lut_to_dense", [("indices", "lut_indices"), ("lut", "lut")],
           [("w_pal", f16([8, 8, 1, 1]))]),
        const("w_scale", v_fp16_zeros([8, 1, 1, 1]), f16([8, 1, 1, 1])),
        op("constexpr_blockwise_shift_scale", [("data", "w_pal"), ("scale", "w_scale")],
           [("w_pal_scaled", f16([8, 8, 1, 1]))]),
        op("conv", [("x", "x"), ("weight", "w_pal_scaled")], [("conv_pal_scaled", f16(X))]),
        # ANE038 does not fire: per-channel scale on an int8 weight
        const("w_int8", v_ints([0] * 64, dims=[8, 8, 1, 1]), ttype("int8", [8, 8, 1, 1])),
        const("w_int8_scale", v_fp16_zeros([8, 1, 1, 1]), f16([8, 1, 1, 1])),
        op("constexpr_blockwise_shift_scale", [("data", "w_int8"), ("scale", "w_int8_scale")],
           [("w_channel", f16([8, 8, 1, 1]))]),
        op("conv", [("x", "x"), ("weight", "w_channel")], [("conv_per_channel", f16(X))]),
    ]
    outs = ["softplus_out", "resample_out", "relu_out", "conv_pal_scaled", "conv_per_channel"]
    block = b"".join(f_str(2, o) for o in outs) + b"".join(ops)
    fn = f_msg(1, named("x", f16(X))) + f_str(2, "CoreML6") + \
        f_msg(3, f_str(1, "CoreML6"), f_msg(2, block))
    program = f_varint(1, 1) + f_msg(2, f_str(1, "main"), f_msg(2, fn))
    desc = description([array_feature("x", X, FLOAT16)],
                       [array_feature(o, [], FLOAT16) for o in outs],
                       short="ML Program release/chip rule fixture: ANE038, ANE039, ANE065, ANE066")
    return model(7, desc, 502, program)


def mil_decode_int8():
    """A decode step of one token through a linear whose weight is int8 (per-channel
    constexpr_blockwise_shift_scale), reduction depth 4096, 8 outputs: 65 kFLOP, far
    under the work floor, but larql (macOS 15) saw such a linear preferred on the ANE
    from a depth of 4096 (int8): ANE071 does not fire on iOS 18, does elsewhere."""
    K, N = 4096, 8
    f16 = lambda dims: ttype("fp16", dims)
    ops = [
        const("w_q", v_ints([0] * (N * K), dims=[N, K]), ttype("int8", [N, K])),
        const("w_s", v_fp16_zeros([N, 1]), f16([N, 1])),
        op("constexpr_blockwise_shift_scale", [("data", "w_q"), ("scale", "w_s")], [("w", f16([N, K]))]),
        op("linear", [("x", "x"), ("weight", "w")], [("proj", f16([1, N]))]),
    ]
    block = f_str(2, "proj") + b"".join(ops)
    fn = f_msg(1, named("x", f16([1, K]))) + f_str(2, "CoreML8") + \
        f_msg(3, f_str(1, "CoreML8"), f_msg(2, block))
    program = f_varint(1, 1) + f_msg(2, f_str(1, "main"), f_msg(2, fn))
    desc = description([array_feature("x", [1, K], FLOAT16)], [array_feature("proj", [], FLOAT16)],
                       short="ML Program: an int8 decode linear of depth 4096 (ANE071 by release)")
    return model(9, desc, 502, program)


# ---------------------------------------------------------------- partition fixtures
# Small models whose supported (S) / unsupported (U) sequence is known, for
# tests/unit/test_plan.c: the segments each partition policy predicts. The first
# layer is a 1x1 convolution over 16x512x512 (134 MFLOP), so the whole-model
# "tiny model stays on the CPU" rule (ANE071, <= 113 MFLOP) does not mask them.
PLAN_X = [1, 16, 512, 512]


def custom(class_name):
    """CustomLayerParams: className 10."""
    return f_str(10, class_name)


def plan_nn(layers, inputs, outputs, short, spec=4):
    desc = description(inputs, [array_feature(o, []) for o in outputs], short=short)
    return model(spec, desc, 500, nn_body(layers))


def plan_susus():
    """conv, custom, conv, custom, conv: S U S U S in a chain. nn2020: ANE then
    GPU to the end (2 segments); optimistic: five islands."""
    x = array_feature("x", PLAN_X)
    layers = [
        layer("s1", ["x"], ["s1"], 100, conv(16, 16, 1, 1)),
        layer("u1", ["s1"], ["u1"], 500, custom("PlanOpA")),
        layer("s2", ["u1"], ["s2"], 100, conv(16, 16, 1, 1)),
        layer("u2", ["s2"], ["u2"], 500, custom("PlanOpB")),
        layer("s3", ["u2"], ["s3"], 100, conv(16, 16, 1, 1)),
    ]
    return plan_nn(layers, [x], ["s3"], "partition fixture: S U S U S (custom layers)")


def plan_pingpong():
    """conv, gather, conv, gather, conv: the gathers are CPU fallbacks, so under
    nn2020 the work returns to the ANE after each (ANE CPU ANE CPU ANE)."""
    x = array_feature("x", PLAN_X)
    idx = array_feature("idx", [4], INT32)
    gather = f_varint(1, 1)  # GatherLayerParams: axis 1
    layers = [
        layer("s1", ["x"], ["s1"], 100, conv(16, 16, 1, 1)),
        layer("g1", ["s1", "idx"], ["g1"], 930, gather),
        layer("s2", ["g1"], ["s2"], 100, conv(4, 4, 1, 1)),
        layer("g2", ["s2", "idx"], ["g2"], 930, gather),
        layer("s3", ["g2"], ["s3"], 100, conv(4, 4, 1, 1)),
    ]
    return plan_nn(layers, [x, idx], ["s3"], "partition fixture: ANE/CPU ping-pong (gathers)")


def plan_branches():
    """Two branches from x, interleaved in the list: a1 -> a2 -> a3 (convs) and
    u1 -> u2 (custom layers), joined by an add. In list order that is A U A U A A;
    over the dataflow the a-branch is one ANE segment the u-branch never splits."""
    x = array_feature("x", PLAN_X)
    layers = [
        layer("a1", ["x"], ["a1"], 100, conv(16, 16, 1, 1)),
        layer("u1", ["x"], ["u1"], 500, custom("PlanBranchA")),
        layer("a2", ["a1"], ["a2"], 100, conv(16, 16, 1, 1)),
        layer("u2", ["u1"], ["u2"], 500, custom("PlanBranchB")),
        layer("a3", ["a2"], ["a3"], 100, conv(16, 16, 1, 1)),
        layer("join", ["a3", "u2"], ["join"], 230, b""),  # AddLayer
    ]
    return plan_nn(layers, [x], ["join"], "partition fixture: parallel branches")


def plan_mil_branches():
    """fp16 ML Program: a 1x1 conv k, then k -> r1 -> cumsum -> r2 on one branch,
    k -> r3 -> r4 on the other, add(r2, r4). Under mlprogram the CPU-only cumsum
    drags r2 and the add (downstream) onto the CPU, not r3 / r4."""
    X = PLAN_X
    f16 = lambda dims: ttype("fp16", dims)
    ops = [
        const("w", v_fp16_zeros([16, 16, 1, 1]), f16([16, 16, 1, 1])),
        op("conv", [("x", "x"), ("weight", "w")], [("k", f16(X))]),
        op("relu", [("x", "k")], [("r1", f16(X))]),
        const("axis", v_ints([2], dims=[]), ttype("int32", [])),
        op("cumsum", [("x", "r1"), ("axis", "axis")], [("c", f16(X))]),
        op("relu", [("x", "c")], [("r2", f16(X))]),
        op("relu", [("x", "k")], [("r3", f16(X))]),
        op("relu", [("x", "r3")], [("r4", f16(X))]),
        op("add", [("x", "r2"), ("y", "r4")], [("out", f16(X))]),
    ]
    block = f_str(2, "out") + b"".join(ops)
    fn = f_msg(1, named("x", f16(X))) + f_str(2, "CoreML6") + \
        f_msg(3, f_str(1, "CoreML6"), f_msg(2, block))
    program = f_varint(1, 1) + f_msg(2, f_str(1, "main"), f_msg(2, fn))
    desc = description([array_feature("x", X, FLOAT16)], [array_feature("out", [], FLOAT16)],
                       short="partition fixture: cumsum on one branch of an fp16 ML Program")
    return model(7, desc, 502, program)


def layer_b(name, inputs, outputs, type_field, params):
    """layer() with names as bytes (not necessarily UTF-8)."""
    parts = [f_bytes(1, name)] + [f_bytes(2, i) for i in inputs] + [f_bytes(3, o) for o in outputs]
    return f_msg(1, *parts, f_bytes(type_field, params))


# Names that break an escaper: HTML/SVG, Markdown tables, Graphviz strings, JSON,
# terminals (control bytes), invalid UTF-8 and a bidi override.
HOSTILE = [
    b'<script>alert("x")</script>',
    b'"\'><img src=x onerror=alert(1)>&amp;',
    b'| pipe | **bold** [link](javascript:alert(1)) @someone #1 `tick` www.example.com',
    b'line1\nline2\x01\x1b[31mred\x7f',
    b'bad\xff\xfe\xc0\xafutf8 abc\xe2\x80\xaedcba',
    b'"}; digraph x { a -> b [label="\\N\\"',
    b'--> ]]> </style></script><!-- ' + b'long' * 70,
]


def huge_conv():
    """A 300-byte NeuralNetwork whose one convolution does about 8e12 FLOPs (10^12
    element operations of the interpreter's work count): fillStatic makes its
    [64, 64, 61, 61] weights (61 MB), the input is [1, 64, 512, 512] (67 MB). Its
    memory fits the default budget; `run --max-work 1e9` must refuse the
    convolution before it starts (issue #28: work was counted when an op ended)."""
    fill = f_float(1, 0.001) + f_packed_varints(2, [64, 64, 61, 61])  # FillStaticLayerParams
    params = b"".join([f_varint(1, 64), f_varint(2, 64), f_varint(10, 1),
                       f_packed_varints(20, [61, 61]), f_packed_varints(30, [1, 1]),
                       f_packed_varints(40, [1, 1]), f_msg(50)])  # weights: the second input
    body = nn_body([layer("w", [], ["w"], 1085, fill),
                    layer("conv", ["x", "w"], ["y"], 100, params)])
    desc = description([array_feature("x", [1, 64, 512, 512])], [array_feature("y", [])],
                       short="one enormous convolution: the interpreter's work bound")
    return model(4, desc, 500, body)


def hostile_names():
    """NeuralNetwork (spec 4): convs and custom layers (CPU/GPU fallbacks) in a
    chain joined by an add, every layer and blob named with HOSTILE text; a
    hostile description and output name. For the report escaping tests."""
    x = array_feature("x", [1, 16, 64, 64])
    h = HOSTILE
    blob = [b"x"] + [b"blob " + n for n in h]
    layers = [
        layer_b(h[0], [blob[0]], [blob[1]], 100, conv(16, 16, 1, 1)),
        layer_b(h[1], [blob[1]], [blob[2]], 500, custom("Evil</code><b>")),
        layer_b(h[2], [blob[2]], [blob[3]], 100, conv(16, 16, 1, 1)),
        layer_b(h[3], [blob[3]], [blob[4]], 500, custom("Ctl\x1b[0m")),
        layer_b(h[4], [blob[4]], [blob[5]], 100, conv(16, 16, 1, 1)),
        layer_b(h[5], [blob[5]], [blob[6]], 100, conv(16, 16, 1, 1)),
        layer_b(h[6], [blob[6], blob[1]], [b"out<>&"], 230, b""),  # AddLayer
    ]
    desc = description([x], [array_feature("out<>&", [])],
                       short='<i>hostile</i> "names" | fixture & `escapes`')
    return model(4, desc, 500, nn_body(layers))


# ---------------------------------------------------------------- shape and family fixtures


def mil_program(inputs, outs, ops, opset="CoreML7"):
    """Program{version 1, functions 2 map{"main": Function{inputs 1, opset 2,
    block_specializations 3 map{opset: Block{outputs 2, operations 3}}}}}."""
    block = b"".join(f_str(2, o) for o in outs) + b"".join(ops)
    fn = b"".join(f_msg(1, named(n, ttype("fp16", d))) for n, d in inputs) + \
        f_str(2, opset) + f_msg(3, f_str(1, opset), f_msg(2, block))
    return f_varint(1, 1) + f_msg(2, f_str(1, "main"), f_msg(2, fn))


def mil_shapes():
    """An fp16 ML Program (iOS 17 opset) for the shape- and family-dependent
    MIL rules; every op declares its output type. Op names say which fires."""
    f16 = lambda dims: ttype("fp16", dims)
    X, C11 = [1, 16, 8, 8], [1, 16, 1, 1]
    inputs = [("x", X), ("wide", [1, 1, 1, 20000]), ("chan", [1, 20000, 1, 32]),
              ("tall", [1, 128, 256, 1]), ("flat", [1, 128, 1, 256]), ("big", [1, 64, 128, 128])]
    ops = [
        # ANE060 fires: x times its computed per-channel mean / not: a constant vector, x * x
        const("hw", v_ints([2, 3]), ttype("int32", [2])),
        const("keep", value(ttype("bool", []), f_msg(3, f_packed_varints(1, [1]))),
              ttype("bool", [])),
        op("reduce_mean", [("x", "x"), ("axes", "hw"), ("keep_dims", "keep")],
           [("se_mean", f16(C11))]),
        op("mul", [("x", "x"), ("y", "se_mean")], [("se_mul", f16(X))]),
        const("scale", v_fp16_zeros(C11), f16(C11)),
        op("mul", [("x", "x"), ("y", "scale")], [("const_mul", f16(X))]),
        op("mul", [("x", "x"), ("y", "x")], [("sq_mul", f16(X))]),
        # ANE061 fires on a14 (last axis 20000 > 16384), not on a17; the channel
        # axis (axis 1 of rank 4) of chan is 20000 <= 65536 everywhere
        op("relu", [("x", "wide")], [("wide_relu", f16([1, 1, 1, 20000]))]),
        op("relu", [("x", "chan")], [("chan_relu", f16([1, 20000, 1, 32]))]),
        # ANE062 fires: [1,128,256,1] (2 MiB padded) / not: [1,128,1,256]
        op("relu", [("x", "tall")], [("tall_relu", f16([1, 128, 256, 1]))]),
        op("relu", [("x", "flat")], [("flat_relu", f16([1, 128, 1, 256]))]),
        # ANE063 fires before H15 (a14, a15), not from a16
        op("sin", [("x", "x")], [("sin_x", f16(X))]),
        op("cos", [("x", "x")], [("cos_x", f16(X))]),
        # ANE064 fires before H14 (a14), not from a15
        const("roi", v_fp16_zeros([1, 1, 5, 1, 1]), f16([1, 1, 5, 1, 1])),
        op("crop_resize", [("x", "x"), ("roi", "roi")], [("crop_x", f16([1, 1, 16, 4, 4]))]),
        # ANE070 (model rule) fires before A17 Pro / M4: activation quantization
        const("qscale", v_floats([0.1], dims=[]), ttype("fp32", [])),
        const("qdtype", v_string("int8"), ttype("string", [])),
        op("quantize", [("input", "x"), ("scale", "qscale"), ("output_dtype", "qdtype")],
           [("x_q", ttype("int8", X))]),
        op("dequantize", [("input", "x_q"), ("scale", "qscale")], [("x_dq", f16(X))]),
        # 1.2 GFLOP: ANE071 (tiny model) must not fire
        const("w_big", v_fp16_zeros([64, 64, 3, 3]), f16([64, 64, 3, 3])),
        const("same", v_string("same"), ttype("string", [])),
        op("conv", [("x", "big"), ("weight", "w_big"), ("pad_type", "same")],
           [("big_conv", f16([1, 64, 128, 128]))]),
    ]
    outs = ["se_mul", "const_mul", "sq_mul", "wide_relu", "chan_relu", "tall_relu", "flat_relu",
            "sin_x", "cos_x", "crop_x", "x_dq", "big_conv"]
    desc = description([array_feature(n, d, FLOAT16) for n, d in inputs],
                       [array_feature(o, [], FLOAT16) for o in outs],
                       short="ML Program shape/family fixture: ANE060-064, ANE070, ANE071")
    return model(8, desc, 502, mil_program(inputs, outs, ops))


def mil_tiny():
    """An fp16 ML Program with one 16x16 linear (512 FLOPs): ANE071 fires."""
    ops = [
        const("w", v_fp16_zeros([16, 16]), ttype("fp16", [16, 16])),
        op("linear", [("x", "x"), ("weight", "w")], [("y", ttype("fp16", [1, 16]))]),
    ]
    desc = description([array_feature("x", [1, 16], FLOAT16)], [array_feature("y", [], FLOAT16)],
                       short="tiny ML Program fixture: ANE071")
    return model(8, desc, 502, mil_program([("x", [1, 16])], ["y"], ops))


# ---------------------------------------------------------------- `anelint fix` fixtures
# tests/fix.sh: each NeuralNetwork rewrite pass of src/rewrite/surgery.c applies on one of
# these (spec 4, EXACT array mapping) and lowers the fallbacks; some layers are
# built so that a pass must refuse them, with its reason. Constants are non-zero
# so that a proof by running both models means something.
FIX_NOTE = "generated test input, non-zero constants"


def fix_model(layers, inputs, outputs, short):
    desc = description(inputs, [array_feature(o, []) for o in outputs], short=short,
                       weights=FIX_NOTE)
    return model(4, desc, 500, nn_body(layers))


def const_nd(shape, vals, fp16=False):
    """LoadConstantNDLayerParams: shape 1, data 2 (WeightParams floatValue 1 /
    float16Value 2). LoadConstantLayerParams has the same two fields."""
    data = f_bytes(2, struct.pack("<%de" % len(vals), *vals)) if fp16 else weights_f32(vals)
    return f_packed_varints(1, shape) + f_msg(2, data)


def ramp(n, lo=-2.0, step=0.375):
    """n non-zero values (no value is 0: the ramp skips it)."""
    out, v = [], lo
    while len(out) < n:
        if v != 0.0:
            out.append(v)
        v += step
        if v > 3.0:
            v = lo + step / 3
    return out


def pool(kind, k, s):
    """PoolingLayerParams: type 1 (MAX 0 is the default, not written),
    kernelSize 10, stride 20, valid 30 (empty: no padding)."""
    return (f_varint(1, kind) if kind else b"") + f_packed_varints(10, k) + \
        f_packed_varints(20, s) + f_msg(30)


def fix_subb():
    """subtractBroadcastable a [1,8,4,4] - b [1,8,1,1] (a legacy Cx1x1 broadcast):
    subb-to-neg-add."""
    ins = [array_feature("a", [1, 8, 4, 4]), array_feature("b", [1, 8, 1, 1])]
    layers = [layer("sub", ["a", "b"], ["y"], 905, b"")]
    return fix_model(layers, ins, ["y"], "fix fixture: subtractBroadcastable")


def fix_concatnd():
    """concatND on axis -3 of [1,4,4,4] and [1,2,4,4]: concatnd-to-concat."""
    ins = [array_feature("a", [1, 4, 4, 4]), array_feature("b", [1, 2, 4, 4])]
    layers = [layer("cat", ["a", "b"], ["y"], 980, f_varint(1, -3))]
    return fix_model(layers, ins, ["y"], "fix fixture: concatND on the channel axis")


def nn_concat_one():
    """A legacy concat of one input: Core ML's validator refuses it ("has 1
    inputs but expects at least 2"); check refuses it too."""
    ins = [array_feature("a", [1, 4, 4, 4])]
    layers = [layer("cat", ["a"], ["y"], 320, b"")]
    return fix_model(layers, ins, ["y"], "check fixture: a concat of one input")


def fix_mulb():
    """multiplyBroadcastable a [1,8,4,4] * b [1,1,4,4] (1xHxW, computed: ANE011
    does not apply to it): mulb-to-multiply."""
    ins = [array_feature("a", [1, 8, 4, 4]), array_feature("b", [1, 1, 4, 4])]
    layers = [layer("mulb", ["a", "b"], ["y"], 900, b"")]
    return fix_model(layers, ins, ["y"], "fix fixture: multiplyBroadcastable by a 1xHxW input")


def fix_maxpool():
    """max pooling on [1,4,48,48], no padding: kernel 15 stride 2 (legal) ->
    13 then 3; kernel 40x5 stride 1 -> 13x5, 13x1, 13x1, 4x1 (three helper
    layers, each needing its own name)."""
    layers = [layer("pool15", ["x"], ["y"], 120, pool(0, [15, 15], [2, 2])),
              layer("pool40", ["x"], ["z"], 120, pool(0, [40, 5], [1, 1]))]
    return fix_model(layers, [array_feature("x", [1, 4, 48, 48])], ["y", "z"],
                     "fix fixture: max pooling kernels 15 and 40x5")


def fix_mulconst():
    """x [1,8,4,4] times a constant [8,1,1] (fp16 values) -> scale, then a
    constant scalar [1] times that -> activation linear; both constants
    (loadConstantND, read by nothing else) go. And x times a constant [8,4,1]
    (not a scale shape) stays."""
    ins = [array_feature("x", [1, 8, 4, 4])]
    layers = [
        layer("g", [], ["g"], 1070,
              const_nd([8, 1, 1], [0.5, -1.25, 2.0, 3.5, -0.75, 1.5, 4.0, -2.0], fp16=True)),
        layer("s", [], ["s"], 1070, const_nd([1], [-1.5])),
        layer("mul_g", ["x", "g"], ["xg"], 900, b""),
        layer("mul_s", ["s", "xg"], ["y"], 900, b""),
        layer("h", [], ["h"], 1070, const_nd([8, 4, 1], ramp(32))),
        layer("mul_h", ["x", "h"], ["z"], 900, b""),
    ]
    return fix_model(layers, ins, ["y", "z"], "fix fixture: multiplyBroadcastable by constants")


def fix_io_range():
    """x [1,8,4,4] scaled by 1e-9 (output "tiny": every value under fp16's
    smallest subnormal, 6e-8, as mobilenet_v2__nn_ios13's ~6e-10 outputs) and by
    1e6 (output "huge": above fp16's largest, 65504): nn-io-fp16 makes one all
    zeros and the other infinite, and fix refuses it (its tolerance)."""
    def scale(a):  # ActivationParams.linear 5 {alpha 1}
        return f_msg(5, f_float(1, a))
    layers = [layer("tiny", ["x"], ["tiny"], 130, scale(1e-9)),
              layer("huge", ["x"], ["huge"], 130, scale(1e6))]
    return fix_model(layers, [array_feature("x", [1, 8, 4, 4])], ["tiny", "huge"],
                     "fix fixture: outputs outside fp16's range")


def fix_io_gap():
    """x [1,8,4,4] -> global average pool with VALID padding (ANE056 on iOS 13/14:
    the exact global-avgpool-valid-to-same) -> scaled by 1e-9 (output "tiny", under
    fp16's smallest subnormal): nn-io-fp16's proof collapses, so fix refuses the
    approximate rewrite and keeps the exact one (the round without it)."""
    gpool = f_varint(1, 1) + f_msg(30) + f_varint(60, 1)
    layers = [layer("gap", ["x"], ["g"], 120, gpool),
              layer("tiny", ["g"], ["tiny"], 130, f_msg(5, f_float(1, 1e-9)))]
    return fix_model(layers, [array_feature("x", [1, 8, 4, 4])], ["tiny"],
                     "fix fixture: an exact rewrite beside an approximate one the proof refuses")


def fix_divconst():
    """x [1,8,4,4] / a constant [1,8,1,1] -> scale by the reciprocals, then / a
    constant scalar 3 -> linear(1/3) (--allow reassociate). Left: x / a constant
    holding a 0, x / the input w."""
    ins = [array_feature("x", [1, 8, 4, 4]), array_feature("w", [1, 8, 4, 4])]
    layers = [
        layer("d", [], ["d"], 1070, const_nd([1, 8, 1, 1], [3.0, -7.0, 0.1, 1.5, -2.5, 9.0, 0.3, 11.0])),
        layer("r", [], ["r"], 1070, const_nd([1], [3.0])),
        layer("div_d", ["x", "d"], ["xd"], 890, b""),
        layer("div_r", ["xd", "r"], ["y"], 890, b""),
        layer("z", [], ["z"], 1070, const_nd([8, 1, 1], [1.0, 2.0, 0.0, 4.0, 5.0, 6.0, 7.0, 8.0])),
        layer("div_z", ["x", "z"], ["yz"], 890, b""),
        layer("div_w", ["x", "w"], ["yw"], 890, b""),
    ]
    return fix_model(layers, ins, ["y", "yz", "yw"],
                     "fix fixture: divideBroadcastable by constants and by an input")


def fix_lcnd():
    """loadConstantND [1,1,8,4,4] added (legacy add) to a rank-5 input ->
    loadConstant [8,4,4]; [1,1,8,1,1] read only by a multiplyBroadcastable (which
    takes it into a scale layer); [8,4,4] (rank 3: loadConstant would give rank
    5) stays; [1,1,8,4,1] read only by a multiplyBroadcastable that cannot take it
    (8x4x1 is no scale shape) -> loadConstant [8,4,1]."""
    ins = [array_feature("x5", [1, 1, 8, 4, 4]), array_feature("x3", [8, 4, 4])]
    layers = [
        layer("k5", [], ["k5"], 1070, const_nd([1, 1, 8, 4, 4], ramp(128))),
        layer("add5", ["x5", "k5"], ["y5"], 230, b""),
        layer("g5", [], ["g5"], 1070, const_nd([1, 1, 8, 1, 1], ramp(8, 0.25, 0.5))),
        layer("mul5", ["y5", "g5"], ["m5"], 900, b""),
        layer("k3", [], ["k3"], 1070, const_nd([8, 4, 4], ramp(128, -1.0, 0.25))),
        layer("add3", ["x3", "k3"], ["y3"], 230, b""),
        layer("g6", [], ["g6"], 1070, const_nd([1, 1, 8, 4, 1], ramp(32, 0.5, 0.25))),
        layer("mul6", ["x5", "g6"], ["m6"], 900, b""),
    ]
    return fix_model(layers, ins, ["m5", "y3", "m6"],
                     "fix fixture: loadConstantND of ranks 5 and 3")


def fix_avgpool():
    """average pooling on [1,4,32,32]: kernel 16 stride 16 -> 4x4/4 twice; kernel 8
    stride 8 (stride illegal) -> 4x4/4 then 2x2/2; kernel 15 stride 3 stays
    (overlapping windows). On [1,2,128,64]: kernel 128x32 = stride -> 4x4, 4x4,
    4x2, 2x1 (three helper layers, each needing its own name)."""
    x = array_feature("x", [1, 4, 32, 32])
    x64 = array_feature("x64", [1, 2, 128, 64])
    layers = [
        layer("avg16", ["x"], ["a16"], 120, pool(1, [16, 16], [16, 16])),
        layer("avg8", ["x"], ["a8"], 120, pool(1, [8, 8], [8, 8])),
        layer("avg15", ["x"], ["a15"], 120, pool(1, [15, 15], [3, 3])),
        layer("avg128", ["x64"], ["a128"], 120, pool(1, [128, 32], [128, 32])),
    ]
    return fix_model(layers, [x, x64], ["a16", "a8", "a15", "a128"], "fix fixture: average pooling")


def fp16_nan():
    """x [1,64] * 300, squared, minus itself: 0 in fp32; in fp16 the square of
    values above ~0.853*300 overflows to inf and inf - inf is NaN (anelint fp16
    must fail and say NaN)."""
    ins = [array_feature("x", [1, 64])]
    layers = [
        layer("k", [], ["k"], 1070, const_nd([1], [300.0])),
        layer("scaled", ["x", "k"], ["s"], 900, b""),
        layer("squared", ["s", "s"], ["q"], 900, b""),
        layer("diff", ["q", "q"], ["y"], 905, b""),
    ]
    return fix_model(layers, ins, ["y"], "fp16 fixture: overflow then inf - inf = NaN")


CI_PREFIX = "encoder.layers.0.attention.output.dense."


def ci_model(new_fallback, ignore=None):
    """examples/ci and the CI tests: layer names longer than 30 characters that
    differ only at the end; a multiplyBroadcastable falls back (ANE005), a
    convolution runs on the ANE; 300 MFLOP so that the work floor keeps out.
    new_fallback: a second multiplyBroadcastable first (the layers after it
    move by one index, a new fallback appears)."""
    x = array_feature("x", [1, 64, 64, 64])
    layers, src = [], "x"
    if new_fallback:
        layers.append(layer(CI_PREFIX + "mul_broadcast_new", [src, src], ["n"], 900, b""))
        src = "n"
    layers += [
        layer(CI_PREFIX + "mul_broadcast_a", [src, src], ["a"], 900, b""),
        layer(CI_PREFIX + "activation_b", ["a"], ["b"], 130, f_msg(10)),
        layer(CI_PREFIX + "conv_plain_c", ["b"], ["y"], 100, conv(64, 64, 3, 3)),
    ]
    user = {"com.anelint.ignore": ignore} if ignore else None
    desc = description([x], [array_feature("y", [])], short="CI fixture: long layer names", user=user)
    return model(4, desc, 500, nn_body(layers))


def fix_custom():
    """subtractBroadcastable a [1,8,4,4] - b [1,8,1,1] (subb-to-neg-add) next to a
    custom layer (className AnelintSwish) on another input: the interpreter cannot
    run the whole model, so `--proof auto` proves the rewrite on its region."""
    ins = [array_feature("a", [1, 8, 4, 4]), array_feature("b", [1, 8, 1, 1]),
           array_feature("x", [1, 4, 4, 4])]
    layers = [layer("sub", ["a", "b"], ["y"], 905, b""),
              layer("swish", ["x"], ["u"], 500, custom("AnelintSwish"))]
    return fix_model(layers, ins, ["y", "u"], "fix fixture: a rewrite next to a custom layer")


# ---------------------------------------------------------------- model-level fix fixtures
# (issue 21): `fix --shape` / `--enumerate` on inputs with a shape range (ANE040).


def shape_range_feature(name, default, ranges, dtype=FLOAT32):
    """A multi-array input with a default shape and ShapeRange = 31
    {sizeRanges 1 {lowerBound 1, upperBound 2}} (upper -1: unbounded)."""
    rng = f_msg(31, *[f_msg(1, f_varint(1, lo), f_varint(2, hi)) for lo, hi in ranges])
    arr = [f_packed_varints(1, default), f_varint(2, dtype), rng]
    return f_str(1, name) + f_msg(3, f_msg(5, *arr))


def fix_shape():
    """NeuralNetwork: input x [1,16,H,W], H and W in 64..512 (default 512x512), two
    1x1 convolutions 16 -> 16 (268 MFLOP at the default shape, so the tiny-model
    rule ANE071 does not mask ANE040). `fix --shape x=default` / `--enumerate`
    turn the range into one shape / enumerated shapes."""
    def conv1x1(seed):
        w = ramp(16 * 16, lo=-1.0 + seed * 0.01, step=0.0625)
        return b"".join([f_varint(1, 16), f_varint(2, 16), f_varint(10, 1),
                         f_packed_varints(20, [1, 1]), f_packed_varints(30, [1, 1]),
                         f_packed_varints(40, [1, 1]), f_msg(50), f_msg(90, weights_f32(w))])
    x = shape_range_feature("x", [1, 16, 512, 512], [(1, 1), (16, 16), (64, 512), (64, 512)])
    layers = [layer("c1", ["x"], ["h"], 100, conv1x1(1)),
              layer("c2", ["h"], ["y"], 100, conv1x1(2))]
    return fix_model(layers, [x], ["y"], "fix fixture: an input with a shape range")


def fix_shape_rounds():
    """NeuralNetwork: subtractBroadcastable a - b, a [1,8,H,W] with H and W in 4..16
    (default 4x4), b [1,8,1,1]. subb-to-neg-add needs static shapes, so `fix --shape
    a=default` takes two rounds: the shape, then the subtraction (the .mlmodel path
    of fix's rounds, tests/fix_rounds.sh)."""
    a = shape_range_feature("a", [1, 8, 4, 4], [(1, 1), (8, 8), (4, 16), (4, 16)])
    layers = [layer("sub", ["a", "b"], ["y"], 905, b"")]
    return fix_model(layers, [a, array_feature("b", [1, 8, 1, 1])], ["y"],
                     "fix fixture: a shape range, then a subtractBroadcastable")


def fix_shape_big():
    """NeuralNetwork: input x [1,64,H,W], H and W in 64..512 (default 512x512), two
    1x1 convolutions 64 -> 64: 4.3 GFLOP at the default shape, above fix's 2 GFLOP
    bound for running the whole models. `fix --shape x=default` changes only the
    description, so --proof auto proves it structurally (every layer byte-identical)
    instead of running both models at every shape (issue #29)."""
    def conv1x1(seed):
        w = ramp(64 * 64, lo=-1.0 + seed * 0.01, step=0.0078125)
        return b"".join([f_varint(1, 64), f_varint(2, 64), f_varint(10, 1),
                         f_packed_varints(20, [1, 1]), f_packed_varints(30, [1, 1]),
                         f_packed_varints(40, [1, 1]), f_msg(50), f_msg(90, weights_f32(w))])
    x = shape_range_feature("x", [1, 64, 512, 512], [(1, 1), (64, 64), (64, 512), (64, 512)])
    layers = [layer("c1", ["x"], ["h"], 100, conv1x1(1)),
              layer("c2", ["h"], ["y"], 100, conv1x1(2))]
    return fix_model(layers, [x], ["y"], "fix fixture: a 4.3 GFLOP model with an input shape range")


def fix_mil_shape():
    """ML Program (iOS 17 opset, fp16): input x [1,32,H,W], H and W in 32..256
    (default 128x128), the function input's H, W unknown dimensions as coremltools
    writes them, a 3x3 conv 32 -> 32 (302 MFLOP at 128x128) then relu, outputs
    typed with unknown H, W. `fix --shape x=1,32,128,128` fixes the description and
    the function input."""
    unknown = f_msg(3, f_msg(2))  # Dimension{unknown = 2 {}}
    def t(dtype, dims):
        parts = [f_varint(1, DT[dtype]), f_varint(2, len(dims))]
        parts += [unknown if d is None else f_msg(3, f_msg(1, f_varint(1, d))) for d in dims]
        return f_msg(1, *parts)
    X = [1, 32, None, None]
    w = ramp(32 * 32 * 9, lo=-0.5, step=0.0078125)
    wval = value(ttype("fp16", [32, 32, 3, 3]), f_msg(7, f_bytes(1, struct.pack("<%de" % len(w), *w))))
    ops = [
        const("w", wval, ttype("fp16", [32, 32, 3, 3])),
        const("same", v_string("same"), ttype("string", [])),
        op("conv", [("x", "x"), ("weight", "w"), ("pad_type", "same")], [("c", t("fp16", X))]),
        op("relu", [("x", "c")], [("y", t("fp16", X))]),
    ]
    block = f_str(2, "y") + b"".join(ops)
    fn = f_msg(1, named("x", t("fp16", X))) + f_str(2, "CoreML7") + \
        f_msg(3, f_str(1, "CoreML7"), f_msg(2, block))
    prog = f_varint(1, 1) + f_msg(2, f_str(1, "main"), f_msg(2, fn))
    x = shape_range_feature("x", [1, 32, 128, 128], [(1, 1), (32, 32), (32, 256), (32, 256)],
                            FLOAT16)
    desc = description([x], [array_feature("y", [], FLOAT16)], weights=FIX_NOTE,
                       short="fix fixture: an ML Program input with a shape range")
    return model(8, desc, 502, prog)


def fix_mil_image():
    """ML Program (iOS 17 opset, fp32): RGB image img, default 128x128, width and
    height in 32..256 (imageSizeRange), the function input [1, 3, H, W] with H, W
    unknown as coremltools writes it, a 1x1 conv 3 -> 8 then relu. `fix --shape
    img=H,W` fixes the description's size and the function input's last two axes."""
    unknown = f_msg(3, f_msg(2))  # Dimension{unknown = 2 {}}
    def t(dtype, dims):
        parts = [f_varint(1, DT[dtype]), f_varint(2, len(dims))]
        parts += [unknown if d is None else f_msg(3, f_msg(1, f_varint(1, d))) for d in dims]
        return f_msg(1, *parts)
    w = ramp(8 * 3, lo=-0.5, step=0.0625)
    wval = value(ttype("fp32", [8, 3, 1, 1]), f_msg(7, f_bytes(1, struct.pack("<%df" % len(w), *w))))
    ops = [
        const("w", wval, ttype("fp32", [8, 3, 1, 1])),
        const("valid", v_string("valid"), ttype("string", [])),
        op("conv", [("x", "img"), ("weight", "w"), ("pad_type", "valid")], [("c", t("fp32", [1, 8, None, None]))]),
        op("relu", [("x", "c")], [("y", t("fp32", [1, 8, None, None]))]),
    ]
    block = f_str(2, "y") + b"".join(ops)
    fn = f_msg(1, named("img", t("fp32", [1, 3, None, None]))) + f_str(2, "CoreML7") + \
        f_msg(3, f_str(1, "CoreML7"), f_msg(2, block))
    prog = f_varint(1, 1) + f_msg(2, f_str(1, "main"), f_msg(2, fn))
    img = image_range_feature("img", 128, 128, (32, 256), (32, 256))
    desc = description([img], [array_feature("y", [])], weights=FIX_NOTE,
                       short="fix fixture: an ML Program image input with a size range")
    return model(8, desc, 502, prog)


def fix_shuffle():
    """A ShuffleNet-v2 style unit (NeuralNetwork spec 5, interleave needs it): x
    [1,16,8,8] -> splitND axis -3 [8,8] -> (a, b); b -> 1x1 conv 8 -> 8 -> c;
    concatND interleave axis -3 of (a, c) = the channel shuffle -> y. Refused:
    splitND on the last axis, splitND into unequal parts, interleaved concatND on
    the last axis."""
    w = ramp(8 * 8, lo=-1.0, step=0.125)
    cv = b"".join([f_varint(1, 8), f_varint(2, 8), f_varint(10, 1), f_packed_varints(20, [1, 1]),
                   f_packed_varints(30, [1, 1]), f_packed_varints(40, [1, 1]), f_msg(50),
                   f_msg(90, weights_f32(w))])
    x = array_feature("x", [1, 16, 8, 8])
    layers = [
        layer("split", ["x"], ["a", "b"], 975, f_varint(1, -3) + f_packed_varints(3, [8, 8])),
        layer("conv", ["b"], ["c"], 100, cv),
        layer("shuffle", ["a", "c"], ["y"], 980, f_varint(1, -3) + f_varint(2, 1)),
        layer("split_w", ["x"], ["w0", "w1"], 975, f_varint(1, -1) + f_varint(2, 2)),
        layer("split_uneq", ["x"], ["u0", "u1"], 975, f_varint(1, 1) + f_packed_varints(3, [4, 12])),
        layer("shuffle_w", ["w0", "w1"], ["z"], 980, f_varint(1, -1) + f_varint(2, 1)),
    ]
    desc = description([x], [array_feature(o, []) for o in ["y", "z", "u0", "u1"]],
                       short="fix fixture: a ShuffleNet-style channel split and shuffle",
                       weights=FIX_NOTE)
    return model(5, desc, 500, nn_body(layers))


def weight_bin(blobs):
    """storage v2 weight.bin: a 64-byte header {count u32, version u32 = 2}, then
    per blob its 64-byte metadata {0xDEADBEEF, dtype (1 fp16, 2 fp32), size u64,
    data offset u64} at a 64-aligned offset, then the data. Returns the bytes and
    each blob's metadata offset (what BlobFileValue.offset names)."""
    out = bytearray(struct.pack("<II", len(blobs), 2) + b"\0" * 56)
    offs = []
    for dtype, data in blobs:
        out += b"\0" * ((-len(out)) % 64)
        meta = len(out)
        offs.append(meta)
        out += struct.pack("<IIQQ", 0xDEADBEEF, dtype, len(data), meta + 64) + b"\0" * 40
        out += data
    return bytes(out), offs


def fix_mil_lmhead():
    """ML Program (fp16, iOS 17 opset): an LM-head-like linear x [1,4,4] ->
    [1,4,16400] (weight [16400,4] and bias [16400] in weight.bin): over the
    16384 axis cap (ANE061), split into 2 slices of 8200 + concat. And a
    linear of 8 features (weight immediate) that fits: left."""
    N, K = 16400, 4
    w = [((i * 7) % 61 - 30) / 32.0 for i in range(N * K)]
    b = [((i * 5) % 37 - 18) / 16.0 for i in range(N)]
    wb, (w_off, b_off) = weight_bin([(1, struct.pack("<%de" % len(w), *w)),
                                      (1, struct.pack("<%de" % len(b), *b))])
    def blobval(dims, off):  # Value{type 2, blobFileValue 5 {fileName 1, offset 2}}
        return f_msg(2, ttype("fp16", dims)) + \
            f_msg(5, f_str(1, "@model_path/weights/weight.bin"), f_varint(2, off))
    small = ramp(8 * 4, lo=-1.0, step=0.125)
    sval = value(ttype("fp16", [8, 4]), f_msg(7, f_bytes(1, struct.pack("<%de" % len(small), *small))))
    f16 = lambda dims: ttype("fp16", dims)
    ops = [
        const("head_w", blobval([N, K], w_off), f16([N, K])),
        const("head_b", blobval([N], b_off), f16([N])),
        op("linear", [("x", "x"), ("weight", "head_w"), ("bias", "head_b")], [("logits", f16([1, 4, N]))]),
        const("small_w", sval, f16([8, 4])),
        op("linear", [("x", "x"), ("weight", "small_w")], [("small", f16([1, 4, 8]))]),
    ]
    desc = description([array_feature("x", [1, 4, K], FLOAT16)],
                       [array_feature(o, [], FLOAT16) for o in ("logits", "small")],
                       short="fix fixture: a linear over the ANE axis cap (LM head)", weights=FIX_NOTE)
    return model(8, desc, 502, mil_program([("x", [1, 4, K])], ["logits", "small"], ops)), wb


def fix_mil_upsample():
    """ML Program (fp16, iOS 17 opset): upsample_nearest_neighbor of x [1,4,8,8]
    by 4x4 and by 8x2 (ANE027 on a14): chains of x2 ops; by 3x3 (not a power of
    two) and by 2x2 (legal already): left."""
    f16 = lambda dims: ttype("fp16", dims)
    def up(out, fh, fw, dims):
        return [const(out + "_h", v_floats([fh], dims=[]), ttype("fp32", [])),
                const(out + "_w", v_floats([fw], dims=[]), ttype("fp32", [])),
                op("upsample_nearest_neighbor", [("x", "x"), ("scale_factor_height", out + "_h"),
                                                 ("scale_factor_width", out + "_w")], [(out, f16(dims))])]
    ops = up("up4", 4, 4, [1, 4, 32, 32]) + up("up82", 8, 2, [1, 4, 64, 16]) + \
        up("up3", 3, 3, [1, 4, 24, 24]) + up("up2", 2, 2, [1, 4, 16, 16])
    outs = ["up4", "up82", "up3", "up2"]
    desc = description([array_feature("x", [1, 4, 8, 8], FLOAT16)],
                       [array_feature(o, [], FLOAT16) for o in outs],
                       short="fix fixture: nearest upsampling by 4 and 8", weights=FIX_NOTE)
    return model(8, desc, 502, mil_program([("x", [1, 4, 8, 8])], outs, ops))


def fix_qkv():
    """NeuralNetwork (spec 4): a fused q/k/v projection as the PyTorch converter
    writes it (transformer_encoder__nn_ios13): innerProduct 8 -> 24 with bias on
    x [16,1,8], then splitND axis -1 into 3 x 8 (ANE006): one innerProduct per
    part. And an innerProduct 8 -> 12 (no bias) split into 4 + 8, whose output is
    also read by an add (so it stays); and a splitND of x itself on its last axis: left."""
    def ip(k, n, bias):
        w = ramp(n * k, lo=-1.0, step=0.0625)
        parts = [f_varint(1, k), f_varint(2, n)]
        if bias:
            parts += [f_varint(10, 1)]
        parts += [f_msg(20, weights_f32(w))]
        if bias:
            parts += [f_msg(21, weights_f32(ramp(n, lo=-0.5, step=0.125)))]
        return b"".join(parts)
    x = array_feature("x", [16, 1, 8])
    layers = [
        layer("qkv", ["x"], ["qkv"], 140, ip(8, 24, True)),
        layer("split", ["qkv"], ["q", "k", "v"], 975, f_varint(1, -1) + f_varint(2, 3)),
        layer("kv", ["x"], ["kv"], 140, ip(8, 12, False)),
        layer("split2", ["kv"], ["k2", "v2"], 975, f_varint(1, 2) + f_packed_varints(3, [4, 8])),
        layer("sum", ["kv", "kv"], ["kv2"], 230, b""),
        layer("split0", ["x"], ["x0", "x1"], 975, f_varint(1, 2) + f_varint(2, 2)),
    ]
    return fix_model(layers, [x], ["q", "k", "v", "k2", "v2", "kv2", "x0", "x1"],
                     "fix fixture: a fused q/k/v innerProduct split by splitND")


def fix_nn_attn():
    """NeuralNetwork (spec 4): attention as the PyTorch converter writes it
    (transformer_encoder__nn_ios13): batchedMatmul(q [2,6,4], k [2,4,8]) (ANE012),
    softmaxND on the last axis (ANE006), batchedMatmul by v [2,8,3] (ANE012): 2 heads,
    Sq 6 != Sk 8 != D 4 != Dv 3, so a swapped axis cannot pass the proof. Left: the same
    chain with the softmaxND on axis 1 (not the keys), one whose scores are also a model
    output, one whose first product transposes q (transposeA), and one head (q1, k1, v1).
    Applied too: one whose
    first product reads the keys as kt [2,8,4] with transposeB."""
    def bmm(transpose_b=False, transpose_a=False):
        return (f_varint(1, 1) if transpose_a else b"") + (f_varint(2, 1) if transpose_b else b"")
    q = array_feature("q", [2, 6, 4])
    k = array_feature("k", [2, 4, 8])
    kt = array_feature("kt", [2, 8, 4])
    v = array_feature("v", [2, 8, 3])
    layers = [
        layer("scores", ["q", "k"], ["scores"], 1045, bmm()),
        layer("weights", ["scores"], ["weights"], 950, f_varint(1, -1)),
        layer("attn", ["weights", "v"], ["attn"], 1045, bmm()),
        layer("scores_q", ["q", "k"], ["scores_q"], 1045, bmm()),
        layer("weights_q", ["scores_q"], ["weights_q"], 950, f_varint(1, 1)),
        layer("attn_q", ["weights_q", "v"], ["attn_q"], 1045, bmm()),
        layer("scores_out", ["q", "k"], ["scores_out"], 1045, bmm()),
        layer("weights_out", ["scores_out"], ["weights_out"], 950, f_varint(1, -1)),
        layer("attn_out", ["weights_out", "v"], ["attn_out"], 1045, bmm()),
        layer("scores_tb", ["q", "kt"], ["scores_tb"], 1045, bmm(True)),
        layer("weights_tb", ["scores_tb"], ["weights_tb"], 950, f_varint(1, -1)),
        layer("attn_tb", ["weights_tb", "v"], ["attn_tb"], 1045, bmm()),
        layer("scores_ta", ["qt", "k"], ["scores_ta"], 1045, bmm(transpose_a=True)),
        layer("weights_ta", ["scores_ta"], ["weights_ta"], 950, f_varint(1, -1)),
        layer("attn_ta", ["weights_ta", "v"], ["attn_ta"], 1045, bmm()),
        layer("scores_1h", ["q1", "k1"], ["scores_1h"], 1045, bmm()),
        layer("weights_1h", ["scores_1h"], ["weights_1h"], 950, f_varint(1, -1)),
        layer("attn_1h", ["weights_1h", "v1"], ["attn_1h"], 1045, bmm()),
    ]
    qt = array_feature("qt", [2, 4, 6])
    one = [array_feature("q1", [1, 6, 4]), array_feature("k1", [1, 4, 8]), array_feature("v1", [1, 8, 3])]
    return fix_model(layers, [q, k, kt, qt, v] + one, ["attn", "attn_q", "attn_out", "scores_out", "attn_tb",
                                                       "attn_ta", "attn_1h"],
                     "fix fixture: NeuralNetwork attention (batchedMatmul, softmaxND, batchedMatmul)")


def fix_gap():
    """NeuralNetwork (spec 4): conv 1x1 on x [1,8,20,20] then a global average pool
    with VALID padding (ANE056 on iOS 13/14 fires on both): -> SAME padding. A
    global max pool with VALID padding and a global average pool with SAME
    padding: left."""
    w = ramp(8 * 8, lo=-1.0, step=0.125)
    cv = b"".join([f_varint(1, 8), f_varint(2, 8), f_varint(10, 1), f_packed_varints(20, [1, 1]),
                   f_packed_varints(30, [1, 1]), f_packed_varints(40, [1, 1]), f_msg(50),
                   f_msg(90, weights_f32(w))])
    def gpool(kind, same=False):
        return (f_varint(1, kind) if kind else b"") + (f_msg(31) if same else f_msg(30)) + f_varint(60, 1)
    layers = [
        layer("conv", ["x"], ["c"], 100, cv),
        layer("gap", ["c"], ["y"], 120, gpool(1)),
        layer("gmax", ["c"], ["m"], 120, gpool(0)),
        layer("gap_same", ["c"], ["s"], 120, gpool(1, same=True)),
    ]
    return fix_model(layers, [array_feature("x", [1, 8, 20, 20])], ["y", "m", "s"],
                     "fix fixture: global average pooling with VALID padding")


def fix_nn_lstm():
    """NeuralNetwork (spec 4): three uniDirectionalLSTMs (I = H = 4) on rank-5
    [T, 1, 4, 1, 1] inputs. a: 3 steps, x only, the whole sequence, fp32 weights
    with biases; b: 3 steps from h0 / c0 inputs, the last step, fp16 weights, no
    bias, cellClipThreshold 0.5 (the clip acts); both unrolled with --allow
    reassociate. c: 20 steps (refused: more than 16)."""
    H, I = 4, 4

    def wp(vals, fp16):  # WeightParams: float16Value 2 (bytes) or floatValue 1
        return f_bytes(2, struct.pack("<%de" % len(vals), *vals)) if fp16 else weights_f32(vals)

    def lstm(seq, bias, fp16, clip=None, k=0):
        w = []
        for g, f in enumerate((1, 2, 3, 4)):  # input, forget, block input, output: [H, I]
            w.append(f_msg(f, wp(ramp(H * I, lo=-0.5 + 0.0625 * g + 0.03125 * k, step=0.09375), fp16)))
        for g, f in enumerate((20, 21, 22, 23)):  # recursion matrices [H, H]
            w.append(f_msg(f, wp(ramp(H * H, lo=-0.4375 + 0.0625 * g, step=0.078125), fp16)))
        if bias:
            for g, f in enumerate((40, 41, 42, 43)):
                w.append(f_msg(f, wp(ramp(H, lo=-0.25 + 0.125 * g, step=0.0625), fp16)))
        lp = (f_varint(10, 1) if seq else b"") + (f_varint(20, 1) if bias else b"") + \
            (f_float(60, clip) if clip else b"")
        acts = f_msg(10, f_msg(40)) + f_msg(10, f_msg(30)) + f_msg(10, f_msg(30))  # sigmoid, tanh, tanh
        return f_varint(1, I) + f_varint(2, H) + acts + f_msg(15, lp) + f_msg(20, *w)

    layers = [
        layer("lstm_a", ["xa"], ["ya", "ha", "ca"], 420, lstm(True, True, False)),
        layer("lstm_b", ["xb", "h0", "c0"], ["yb", "hb", "cb"], 420, lstm(False, False, True, 0.5, 1)),
        layer("lstm_c", ["xc"], ["yc", "hc", "cc"], 420, lstm(True, True, False)),
    ]
    ins = [array_feature("xa", [3, 1, I, 1, 1]), array_feature("xb", [3, 1, I, 1, 1]),
           array_feature("h0", [1, 1, H, 1, 1]), array_feature("c0", [1, 1, H, 1, 1]),
           array_feature("xc", [20, 1, I, 1, 1])]
    return fix_model(layers, ins, ["ya", "ha", "ca", "yb", "hb", "cb", "yc"],
                     "fix fixture: uniDirectionalLSTMs of 3 steps (unrolled) and 20 (refused)")


def fix_shape_custom():
    """NeuralNetwork: input x with a shape range [1,4,8..64,8..64] read by a custom
    layer (className AnelintSwish): the interpreter cannot run it, and --shape
    changes no layer, so the proof is structural (every layer byte-identical)."""
    x = shape_range_feature("x", [1, 4, 16, 16], [(1, 1), (4, 4), (8, 64), (8, 64)])
    layers = [layer("swish", ["x"], ["y"], 500, custom("AnelintSwish"))]
    return fix_model(layers, [x], ["y"], "fix fixture: a shape range read by a custom layer")


def image_range_feature(name, w, h, wr, hr, color=20):
    """An image input with a default size and ImageSizeRange = 31 {widthRange 1,
    heightRange 2 {lowerBound 1, upperBound 2}}."""
    rng = f_msg(31, f_msg(1, f_varint(1, wr[0]), f_varint(2, wr[1])),
                f_msg(2, f_varint(1, hr[0]), f_varint(2, hr[1])))
    return f_str(1, name) + f_msg(3, f_msg(4, f_varint(1, w), f_varint(2, h), f_varint(3, color), rng))


def image_enum_feature(name, w, h, sizes, color=20):
    """An image input with a default size and EnumeratedSizes = 21 {sizes 1
    {width 1, height 2}}."""
    en = f_msg(21, *[f_msg(1, f_varint(1, sw), f_varint(2, sh)) for sw, sh in sizes])
    return f_str(1, name) + f_msg(3, f_msg(4, f_varint(1, w), f_varint(2, h), f_varint(3, color), en))


def fix_shape_image():
    """NeuralNetwork: RGB image img, default 512x512, width and height in 64..512
    (imageSizeRange), then 1x1 convolutions 3 -> 32 -> 32 (587 MFLOP at the
    default size, so the tiny-model rule ANE071 does not mask ANE040); a second
    RGB image pic with enumerated sizes 64x32, 128x64 (default 64x32) into a 1x1
    convolution 3 -> 4. `fix --shape img=default` / `--shape pic=64,128`
    (H, W) turn them into fixed sizes."""
    def conv1x1(cin, cout, seed):
        w = ramp(cin * cout, lo=-1.0 + seed * 0.01, step=0.0625)
        return b"".join([f_varint(1, cout), f_varint(2, cin), f_varint(10, 1),
                         f_packed_varints(20, [1, 1]), f_packed_varints(30, [1, 1]),
                         f_packed_varints(40, [1, 1]), f_msg(50), f_msg(90, weights_f32(w))])
    img = image_range_feature("img", 512, 512, (64, 512), (64, 512))
    pic = image_enum_feature("pic", 64, 32, [(64, 32), (128, 64)])
    layers = [layer("c1", ["img"], ["h"], 100, conv1x1(3, 32, 1)),
              layer("c2", ["h"], ["y"], 100, conv1x1(32, 32, 2)),
              layer("c3", ["pic"], ["z"], 100, conv1x1(3, 4, 3))]
    return fix_model(layers, [img, pic], ["y", "z"], "fix fixture: image inputs with flexible sizes")


def write_package(path, model_bytes):
    data = os.path.join(path, "Data", "com.apple.CoreML")
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(data, "model.mlmodel"), "wb") as f:
        f.write(model_bytes)
    manifest = {
        "fileFormatVersion": "1.0.0",
        "itemInfoEntries": {
            "00000000-0000-0000-0000-000000000001": {
                "author": "com.apple.CoreML",
                "description": "CoreML Model Specification",
                "name": "model.mlmodel",
                "path": "com.apple.CoreML/model.mlmodel",
            },
        },
        "rootModelIdentifier": "00000000-0000-0000-0000-000000000001",
    }
    with open(os.path.join(path, "Manifest.json"), "w") as f:
        json.dump(manifest, f, indent=4, sort_keys=True)
        f.write("\n")


def main():
    if not os.path.isdir(os.path.join("tests", "data")):
        sys.exit("run from the repository root")
    os.makedirs(OUT, exist_ok=True)
    files = {
        "nn_rules.mlmodel": nn_rules(),
        "nn_classifier.mlmodel": nn_classifier(),
        "enum_pipeline.mlmodel": enum_pipeline(),
        "nonneural_pipeline.mlmodel": nonneural_pipeline(),
        "plan_susus.mlmodel": plan_susus(),
        "plan_pingpong.mlmodel": plan_pingpong(),
        "plan_branches.mlmodel": plan_branches(),
        "nn_shapes.mlmodel": nn_shapes(),
        "nn_tiny.mlmodel": nn_tiny(),
        "nn_releases.mlmodel": nn_releases(),
        "huge_input.mlmodel": huge_input(),
        "huge_conv.mlmodel": huge_conv(),
        "hostile_names.mlmodel": hostile_names(),
        "fix_subb.mlmodel": fix_subb(),
        "fix_concatnd.mlmodel": fix_concatnd(),
        "fix_mulb.mlmodel": fix_mulb(),
        "fix_maxpool.mlmodel": fix_maxpool(),
        "fix_mulconst.mlmodel": fix_mulconst(),
        "fix_divconst.mlmodel": fix_divconst(),
        "fix_io_range.mlmodel": fix_io_range(),
        "fix_io_gap.mlmodel": fix_io_gap(),
        "fix_shape_rounds.mlmodel": fix_shape_rounds(),
        "fix_lcnd.mlmodel": fix_lcnd(),
        "fix_avgpool.mlmodel": fix_avgpool(),
        "fp16_nan.mlmodel": fp16_nan(),
        "ci_model.mlmodel": ci_model(False),
        "ci_model_v2.mlmodel": ci_model(True),
        # the suppression inside the model: its user-defined metadata
        "ci_model_meta.mlmodel": ci_model(False, "ANE005@*.mul_broadcast_a: broadcast measured on the "
                                                  "GPU at 0.1 ms, accepted; ANE006@*:"),
        "fix_custom.mlmodel": fix_custom(),
        "fix_shape.mlmodel": fix_shape(),
        "fix_shuffle.mlmodel": fix_shuffle(),
        "fix_qkv.mlmodel": fix_qkv(),
        "fix_nn_attn.mlmodel": fix_nn_attn(),
        "fix_gap.mlmodel": fix_gap(),
        "fix_nn_lstm.mlmodel": fix_nn_lstm(),
        "enum_two.mlmodel": enum_two(),
        "fix_shape_custom.mlmodel": fix_shape_custom(),
        "fix_shape_image.mlmodel": fix_shape_image(),
        "fix_shape_big.mlmodel": fix_shape_big(),
    }
    for name, data in files.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        print(f"{OUT}/{name}: {len(data)} bytes")
    # models Core ML refuses: apart, so the sweeps over crafted/ meet valid models only
    invalid = os.path.join("tests", "data", "invalid")
    os.makedirs(invalid, exist_ok=True)
    with open(os.path.join(invalid, "nn_concat_one.mlmodel"), "wb") as f:
        f.write(nn_concat_one())
    print(f"{invalid}/nn_concat_one.mlmodel")
    write_package(os.path.join(OUT, "mil_rules.mlpackage"), mil_rules())
    print(f"{OUT}/mil_rules.mlpackage")
    write_package(os.path.join(OUT, "plan_mil_branches.mlpackage"), plan_mil_branches())
    print(f"{OUT}/plan_mil_branches.mlpackage")
    for name, fn in (("mil_shapes", mil_shapes), ("mil_tiny", mil_tiny),
                     ("mil_releases", mil_releases), ("mil_decode_int8", mil_decode_int8),
                     ("fix_mil_shape", fix_mil_shape), ("fix_mil_image", fix_mil_image),
                     ("fix_mil_upsample", fix_mil_upsample)):
        write_package(os.path.join(OUT, name + ".mlpackage"), fn())
        print(f"{OUT}/{name}.mlpackage")
    for name, fn in (("fix_mil_lmhead", fix_mil_lmhead),):
        mbytes, wbytes = fn()
        pkg = os.path.join(OUT, name + ".mlpackage")
        write_package(pkg, mbytes)
        os.makedirs(os.path.join(pkg, "Data", "com.apple.CoreML", "weights"), exist_ok=True)
        with open(os.path.join(pkg, "Data", "com.apple.CoreML", "weights", "weight.bin"), "wb") as f:
            f.write(wbytes)
        print(f"{pkg} (with weights/weight.bin)")


if __name__ == "__main__":
    main()
