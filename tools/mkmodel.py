#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mkmodel.py: write small (and one very large) Core ML models for anelint's
bad-input tests and its benchmark.

Its protobuf wire encoding is tools/pbwire.py (Python stdlib only; no protobuf
library), with the field numbers of coreml-format-facts.md sections 1-9.
A message is a list of "parts": `bytes`, or `Fill(n)` for n bytes of filler
that are written in chunks, so a 500 MB model never sits in memory.

    mkmodel.py nn OUT.mlmodel                 conv + ReLU NeuralNetwork (2 layers)
    mkmodel.py mlpackage OUT.mlpackage [--root-path P] [--blob-offset N]
                                              ML Program: cast, const (one fp16
                                              blob in weights/weight.bin), mul, cast
    mkmodel.py nested OUT.mlmodel DEPTH       NeuralNetwork with loop layers DEPTH deep
    mkmodel.py pipeline OUT.mlmodel DEPTH     pipelines nested DEPTH deep around `nn`
    mkmodel.py deepchain OUT.mlmodel SIZE     unnamed loop layers nested as deep as SIZE
                                              bytes allow (hostile)
    mkmodel.py manylayers OUT.mlmodel SIZE    about SIZE bytes of empty layers (hostile)
    mkmodel.py random OUT SIZE SEED           SIZE deterministic pseudo-random bytes
    mkmodel.py big OUT.mlmodel [--mb 500]     a large conv net whose fp32 weights hold
                                              the bytes; prints "layers N" on stdout
    mkmodel.py count MODEL                    print how many NN layers / MIL ops the
                                              top-level graphs of MODEL hold
"""
import json
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tools/, whatever the cwd
sys.dont_write_bytecode = True  # no tools/__pycache__ in the work tree
import pbwire  # noqa: E402
from pbwire import I32, I64, LEN, VARINT, len_key  # noqa: E402

# ---------------------------------------------------------------- parts
#
# Each f_* here returns a field as a list of parts: pbwire's bytes, with the
# payload of f_bytes and f_msg as parts of their own (they may hold a Fill).


class Fill:
    """n bytes of filler, produced in chunks when written."""

    def __init__(self, n, chunk=b"\0"):
        self.n = n
        self.chunk = chunk

    def __len__(self):
        return self.n


def size(parts):
    return sum(len(p) for p in parts)


def f_varint(field, v):
    return [pbwire.f_varint(field, v)]


def f_float(field, x):
    return [pbwire.f_float(field, x)]


def f_bytes(field, data):
    return [len_key(field, len(data)), data]


def f_str(field, s):
    return f_bytes(field, s.encode())


def f_msg(field, parts):
    """A sub-message (also for an empty one: a set oneof member is always written)."""
    return [len_key(field, size(parts))] + list(parts)


def f_packed_varints(field, values):
    return [pbwire.f_packed_varints(field, values)]


def f_packed_floats(field, values):
    return [pbwire.f_packed_floats(field, values)]


def cat(*lists):
    out = []
    for part in lists:
        out.extend(part)
    return out


def encode(parts):
    """Join small parts (no Fill) into bytes."""
    return b"".join(parts)


def write_parts(path, parts):
    with open(path, "wb") as f:
        for p in parts:
            if isinstance(p, Fill):
                left = p.n
                while left:
                    piece = p.chunk[: min(left, len(p.chunk))]
                    f.write(piece)
                    left -= len(piece)
            else:
                f.write(p)


# ---------------------------------------------------------------- Core ML messages

FLOAT32_ARRAY = 65568  # ArrayDataType.FLOAT32


def feature(name, shape):
    """FeatureDescription{name, type: multiArrayType{shape, FLOAT32}}."""
    array = cat(f_packed_varints(1, shape), f_varint(2, FLOAT32_ARRAY))
    return cat(f_str(1, name), f_msg(3, f_msg(5, array)))


def description(inputs, outputs, note):
    """ModelDescription with input=1, output=10, metadata=100 (shortDescription, author)."""
    meta = cat(f_str(1, note), f_str(3, "anelint tools/mkmodel.py"))
    parts = []
    for name, shape in inputs:
        parts += f_msg(1, feature(name, shape))
    for name, shape in outputs:
        parts += f_msg(10, feature(name, shape))
    return parts + f_msg(100, meta)


def model(spec, desc, type_field, type_parts):
    """Model{specificationVersion=1, description=2, <oneof Type>}."""
    return cat(f_varint(1, spec), f_msg(2, desc), f_msg(type_field, type_parts))


def layer(name, inputs, outputs, type_field, params):
    """NeuralNetworkLayer{name=1, input=2, output=3, <oneof layer>}."""
    parts = f_str(1, name)
    for i in inputs:
        parts += f_str(2, i)
    for o in outputs:
        parts += f_str(3, o)
    return f_msg(1, parts + f_msg(type_field, params))  # NeuralNetwork.layers = 1


def weights_floats(values):
    return f_packed_floats(1, values)  # WeightParams.floatValue = 1


def weights_fill(n_floats, chunk):
    """WeightParams.floatValue with n_floats filler floats (streamed)."""
    return [len_key(1, 4 * n_floats), Fill(4 * n_floats, chunk)]


def conv(c_out, c_in, k, weights, stride=1):
    """ConvolutionLayerParams, `same` padding, no bias."""
    return cat(f_varint(1, c_out), f_varint(2, c_in), f_packed_varints(20, [k, k]),
               f_packed_varints(30, [stride, stride]), f_msg(51, []), f_msg(90, weights))


RELU = f_msg(10, [])  # ActivationParams.ReLU = 10 (empty message)


def pooling(kernel, stride, kind=0, same=False):
    """PoolingLayerParams{type (0 max, 1 average), kernelSize, stride, valid or same padding}."""
    return cat(f_varint(1, kind), f_packed_varints(10, [kernel, kernel]),
               f_packed_varints(20, [stride, stride]), f_msg(31 if same else 30, []))


# ---------------------------------------------------------------- generators

def small_nn():
    """Input x [3,8,8] -> conv 3x3 (4 out) -> c -> ReLU -> y [4,8,8]. Spec 4."""
    rng = random.Random(1)
    w = [rng.uniform(-1, 1) for _ in range(4 * 3 * 3 * 3)]
    net = cat(layer("conv", ["x"], ["c"], 100, conv(4, 3, 3, weights_floats(w))),
              layer("relu", ["c"], ["y"], 130, RELU))
    desc = description([("x", [3, 8, 8])], [("y", [4, 8, 8])], "anelint test: conv + relu")
    return model(4, desc, 500, net)


def nested_nn(depth):
    """Loop layers nested `depth` deep (each body holds the next loop; the innermost
    body holds one ReLU), followed by a ReLU x -> y. Spec 4, EXACT array mapping."""
    body = layer("inner_relu", ["x"], ["t%d" % depth], 130, RELU)
    for level in range(depth, 0, -1):
        loop = cat(f_varint(1, 1), f_msg(4, body))  # maxLoopIterations=1, bodyNetwork=4
        body = layer("loop%d" % level, [], [], 615, loop)
    net = cat(body, layer("relu", ["x"], ["y"], 130, RELU), f_varint(5, 1))
    desc = description([("x", [4])], [("y", [4])], "anelint test: loops nested %d deep" % depth)
    return model(4, desc, 500, net)


def nested_pipeline(depth):
    """Model{pipeline{models: [Model{pipeline{... small_nn ...}}]}}, `depth` pipelines."""
    inner = small_nn()
    desc = description([("x", [3, 8, 8])], [("y", [4, 8, 8])], "anelint test: nested pipeline")
    for _ in range(depth):
        pipe = cat(f_msg(1, inner), f_str(2, "model0"))  # Pipeline.models=1, names=2
        inner = model(4, desc, 202, pipe)
    return inner


def deep_chain(total):
    """Model.neuralNetwork{layers{loop{bodyNetwork{layers{loop{...}}}}}}: unnamed loop
    layers nested as deep as `total` bytes allow (about 100 levels per KB)."""
    body = []
    while True:
        wrapped = f_msg(1, f_msg(615, f_msg(4, body)))  # layers / loop / bodyNetwork
        if size(wrapped) + 8 > total:
            break
        body = [encode(wrapped)]
    return cat(f_varint(1, 4), f_msg(500, body))


def many_layers(total):
    """A NeuralNetwork of empty layers (2 bytes each) filling about `total` bytes."""
    n = max(1, (total - 16) // 2)
    net = [b"\x0a\x00" * n]
    return cat(f_varint(1, 4), f_msg(500, net))


def fp16_bits(x):
    return struct.unpack("<H", struct.pack("<e", x))[0]


def write_weight_bin(path, blob):
    """Blob storage v2 with one fp16 blob: header, metadata at 64, data at 128."""
    header = struct.pack("<II", 1, 2).ljust(64, b"\0")
    meta = struct.pack("<IIQQQ", 0xDEADBEEF, 1, len(blob), 128, 0).ljust(64, b"\0")
    with open(path, "wb") as f:
        f.write(header + meta + blob)


def mil_scalar_type(dtype):
    """ValueType{tensorType{dataType, rank 0}}."""
    return f_msg(1, cat(f_varint(1, dtype)))


def mil_tensor_type(dtype, dims):
    dims_parts = []
    for d in dims:
        dims_parts += f_msg(3, f_msg(1, f_varint(1, d)))  # Dimension.constant.size
    return f_msg(1, cat(f_varint(1, dtype), f_varint(2, len(dims)), dims_parts))


def mil_string_value(s):
    """Value{type: string scalar, immediateValue{tensor{strings{values: [s]}}}}."""
    imm = f_msg(1, f_msg(4, f_str(1, s)))  # ImmediateValue.tensor -> TensorValue.strings
    return cat(f_msg(2, mil_scalar_type(2)), f_msg(3, imm))


def mil_attr(name, value_parts):
    """map<string, Value> entry: key=1, value=2."""
    return cat(f_str(1, name), f_msg(2, value_parts))


def mil_op(op_type, name, inputs, outputs, attrs=()):
    """Operation{type=1, inputs=2 map<string, Argument>, outputs=3, attributes=5}."""
    parts = f_str(1, op_type)
    for param, var in inputs:
        arg = f_msg(1, f_str(1, var))  # Argument.arguments -> Binding.name
        parts += f_msg(2, cat(f_str(1, param), f_msg(2, arg)))
    for oname, vtype in outputs:
        parts += f_msg(3, cat(f_str(1, oname), f_msg(2, vtype)))
    parts += f_msg(5, mil_attr("name", mil_string_value(name)))
    for aname, aval in attrs:
        parts += f_msg(5, mil_attr(aname, aval))
    return f_msg(3, parts)  # Block.operations = 3


def small_program(blob_offset):
    """ML Program: y = cast(cast(x, fp16) * w, fp32); w is a const fp16 [1,16] blob."""
    FP16, FP32 = 10, 11
    t32, t16 = mil_tensor_type(FP32, [1, 16]), mil_tensor_type(FP16, [1, 16])
    blob_ref = cat(f_msg(2, t16), f_msg(5, cat(f_str(1, "@model_path/weights/weight.bin"),
                                                f_varint(2, blob_offset))))
    ops = cat(
        mil_op("const", "x_dtype", [], [("x_dtype", mil_scalar_type(2))],
               [("val", mil_string_value("fp16"))]),
        mil_op("cast", "x16", [("dtype", "x_dtype"), ("x", "x")], [("x16", t16)]),
        mil_op("const", "w", [], [("w", t16)], [("val", blob_ref)]),
        mil_op("mul", "m", [("x", "x16"), ("y", "w")], [("m", t16)]),
        mil_op("const", "y_dtype", [], [("y_dtype", mil_scalar_type(2))],
               [("val", mil_string_value("fp32"))]),
        mil_op("cast", "y", [("dtype", "y_dtype"), ("x", "m")], [("y", t32)]),
    )
    block = cat(f_str(2, "y"), ops)  # Block.outputs=2, operations=3
    func = cat(f_msg(1, cat(f_str(1, "x"), f_msg(2, t32))), f_str(2, "CoreML6"),
               f_msg(3, cat(f_str(1, "CoreML6"), f_msg(2, block))))
    program = cat(f_varint(1, 1), f_msg(2, cat(f_str(1, "main"), f_msg(2, func))))
    desc = description([("x", [1, 16])], [("y", [1, 16])], "anelint test: tiny ML Program")
    return model(7, desc, 502, program)


def write_package(out, root_path, blob_offset):
    data = os.path.join(out, "Data", "com.apple.CoreML")
    os.makedirs(os.path.join(data, "weights"), exist_ok=True)
    write_parts(os.path.join(data, "model.mlmodel"), small_program(blob_offset))
    blob = b"".join(struct.pack("<H", fp16_bits(0.5 + i / 32)) for i in range(16))
    write_weight_bin(os.path.join(data, "weights", "weight.bin"), blob)
    root_id, weights_id = "11111111-2222-4333-8444-555555555555", "66666666-7777-4888-9999-aaaaaaaaaaaa"
    manifest = {
        "fileFormatVersion": "1.0.0",
        "itemInfoEntries": {
            root_id: {"author": "com.apple.CoreML", "description": "CoreML Model Specification",
                      "name": "model.mlmodel", "path": root_path},
            weights_id: {"author": "com.apple.CoreML", "description": "CoreML Model Weights",
                         "name": "weights", "path": "com.apple.CoreML/weights"},
        },
        "rootModelIdentifier": root_id,
    }
    with open(os.path.join(out, "Manifest.json"), "w") as f:
        json.dump(manifest, f, indent=4, sort_keys=True)
        f.write("\n")


def big_nn(target_bytes):
    """A ResNet-like NeuralNetwork, input [3,224,224]: a stem, then stages of
    3x3 conv + ReLU pairs whose fp32 weights hold the bytes, with max pools between
    stages. A head makes rules fire: a batchnorm, a 15x15 average pool (kernel > 13),
    an addBroadcastable (ND layer), a 4x upsample, a global average pool.
    Returns (parts, layer count)."""
    rng = random.Random(7)
    chunk = struct.pack("<%df" % 65536, *(rng.uniform(-0.05, 0.05) for _ in range(65536)))
    layers, n = [], 0

    def add(name, ins, outs, field, params):
        nonlocal n
        layers.extend(layer(name, ins, outs, field, params))
        n += 1

    add("stem", ["image"], ["s0"], 100, conv(64, 3, 7, weights_fill(64 * 3 * 49, chunk), 2))
    add("stem_relu", ["s0"], ["s1"], 130, RELU)
    add("stem_pool", ["s1"], ["b0"], 120, pooling(3, 2))
    # (width, relative conv count) per stage, scaled so the weights reach the target.
    stages = [(64, 8), (128, 12), (256, 24), (512, 12), (512, 4)]
    unit = sum(36 * c * c * k for c, k in stages)  # bytes of one unit of conv weights
    scale = max(0.01, (target_bytes - 4 * 64 * 3 * 49) / unit)
    cur, width = "b0", 64
    for si, (c, k) in enumerate(stages):
        for j in range(max(1, round(k * scale))):
            c_in = width if j == 0 else c
            name = "s%d_b%d" % (si, j)
            add(name + "_conv", [cur], [name + "_c"], 100,
                conv(c, c_in, 3, weights_fill(c * c_in * 9, chunk)))
            add(name + "_relu", [name + "_c"], [name + "_r"], 130, RELU)
            cur = name + "_r"
        width = c
        if si < len(stages) - 1:
            add("s%d_pool" % si, [cur], ["p%d" % si], 120, pooling(2, 2))
            cur = "p%d" % si
    # Layers that make rules fire.
    bn = cat(f_varint(1, width), f_float(10, 1e-5),
             *[f_msg(f, weights_floats([1.0] * width)) for f in (15, 16, 17, 18)])
    add("head_bn", [cur], ["h0"], 160, bn)
    add("head_pool15", ["h0"], ["h1"], 120, pooling(15, 1, kind=1, same=True))
    add("head_add", ["h0", "h1"], ["h2"], 880, [])
    add("head_up4", ["h2"], ["h3"], 210, f_packed_varints(1, [4, 4]))
    add("head_gap", ["h3"], ["features"], 120, cat(f_varint(1, 1), f_varint(60, 1)))
    layers += f_varint(5, 1)  # arrayInputShapeMapping = EXACT (the net has an ND layer)
    desc = description([("image", [1, 3, 224, 224])], [("features", [1, width, 1, 1])],
                       "anelint benchmark: synthetic ~%d MB conv net" % (target_bytes >> 20))
    return model(4, desc, 500, layers), n


# ---------------------------------------------------------------- counting (a small decoder)

def read_varint(buf, pos, end):
    v = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise ValueError("bad varint at offset %d" % pos)
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, pos


def fields(buf, start, end):
    """Yield (field, wire type, start, end) for each field of the message in
    buf[start:end]; for a varint, start is its value and end is None."""
    pos = start
    while pos < end:
        tag, pos = read_varint(buf, pos, end)
        field, wire = tag >> 3, tag & 7
        if wire == VARINT:
            value, pos = read_varint(buf, pos, end)
            yield field, wire, value, None
            continue
        if wire == LEN:
            n, pos = read_varint(buf, pos, end)
        elif wire in (I64, I32):
            n = 8 if wire == I64 else 4
        else:
            raise ValueError("wire type %d at offset %d" % (wire, pos))
        if pos + n > end:
            raise ValueError("field %d runs past its message at offset %d" % (field, pos))
        yield field, wire, pos, pos + n
        pos += n


def sub(buf, start, end, *path):
    """Spans of the sub-messages reached by following field numbers `path`."""
    spans = [(start, end)]
    for number in path:
        spans = [(a, b) for s, e in spans for f, w, a, b in fields(buf, s, e) if f == number and w == LEN]
    return spans


def count_nodes(buf, start, end):
    """NeuralNetwork layers and ML Program ops of a Model (top-level graphs,
    pipeline stages included)."""
    n = 0
    for f, w, a, b in fields(buf, start, end):
        if w != LEN:
            continue
        if f in (303, 403, 500):  # neuralNetworkRegressor / Classifier / neuralNetwork
            n += sum(1 for x in fields(buf, a, b) if x[0] == 1)
        elif f == 502:  # mlProgram: functions -> Function -> block_specializations -> Block
            for s, e in sub(buf, a, b, 2, 2, 3, 2):
                n += sum(1 for x in fields(buf, s, e) if x[0] == 3)
        elif f in (200, 201):  # pipelineClassifier / pipelineRegressor
            for s, e in sub(buf, a, b, 1, 1):
                n += count_nodes(buf, s, e)
        elif f == 202:  # pipeline
            for s, e in sub(buf, a, b, 1):
                n += count_nodes(buf, s, e)
    return n


def count(path):
    import mmap
    if os.path.isdir(path):
        with open(os.path.join(path, "Manifest.json")) as f:
            manifest = json.load(f)
        item = manifest["itemInfoEntries"][manifest["rootModelIdentifier"]]
        path = os.path.join(path, "Data", item["path"])
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return 0
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            return count_nodes(buf, 0, len(buf))


# ---------------------------------------------------------------- command line

def usage():
    sys.stderr.write(__doc__)
    sys.exit(2)


def option(args, name, default, conv_fn=str):
    if name in args:
        i = args.index(name)
        value = conv_fn(args[i + 1])
        del args[i:i + 2]
        return value
    return default


def main(argv):
    if len(argv) < 3:
        usage()
    cmd, out, rest = argv[1], argv[2], list(argv[3:])
    if cmd == "nn":
        write_parts(out, small_nn())
    elif cmd == "mlpackage":
        root = option(rest, "--root-path", "com.apple.CoreML/model.mlmodel")
        offset = option(rest, "--blob-offset", 64, int)
        write_package(out, root, offset)
    elif cmd == "nested" and rest:
        write_parts(out, nested_nn(int(rest[0])))
    elif cmd == "pipeline" and rest:
        write_parts(out, nested_pipeline(int(rest[0])))
    elif cmd == "deepchain" and rest:
        write_parts(out, deep_chain(int(rest[0])))
    elif cmd == "manylayers" and rest:
        write_parts(out, many_layers(int(rest[0])))
    elif cmd == "random" and len(rest) == 2:
        rng = random.Random(int(rest[1]))
        write_parts(out, [bytes(rng.getrandbits(8) for _ in range(int(rest[0])))])
    elif cmd == "count":
        print(count(out))
    elif cmd == "big":
        mb = option(rest, "--mb", 500, int)
        parts, n = big_nn(mb << 20)
        write_parts(out, parts)
        print("layers %d" % n)
    else:
        usage()


if __name__ == "__main__":
    main(sys.argv)
