#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/mkmodels.py: writes the ML Programs bench/interp.py times that the corpus
has no size for (never committed; into build/bench/models by default):

  encoder_s128_w256.mlpackage   a 2-layer post-LN transformer encoder, sequence
                                128, width 256, 4 heads, FFN 1024 (GELU), fp32
  decoder_step_w256.mlpackage   one decoder step of a stateful block (iOS 18):
                                x [1,1,256]; k_cache / v_cache states
                                [1,4,128,64] (fp16) read, one row written with
                                slice_update at position 64, written back, then
                                attention over the 128 cached rows, output
                                projection and FFN 1024

Weights are random (seeded) fp32 in weight.bin; only time is compared. The
protobuf is written with the helpers of tools/mkfixtures.py (field numbers from
coremltools' MIL.proto). Usage: python3 bench/mkmodels.py [OUTDIR]
"""
import os
import random
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.dont_write_bytecode = True
from pbwire import f_msg, f_str, f_varint, f_packed_varints  # noqa: E402
from mkfixtures import (FLOAT16, FLOAT32, array_feature, const, description, model, named,  # noqa: E402
                        op, ttype, v_floats, v_ints, v_string)
from mkfixtures_mil import v_blob, weight_bin, write_package  # noqa: E402

W, HEADS, FFN, SEQ, CACHE, POS = 256, 4, 1024, 128, 128, 64
HD = W // HEADS


class Weights:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.blobs = []

    def add(self, name, dims, scale):
        n = 1
        for d in dims:
            n *= d
        vals = [self.rng.uniform(-scale, scale) for _ in range(n)]
        self.blobs.append((name, dims, struct.pack("<%df" % n, *vals)))
        return name

    def ops_and_bin(self):
        data, offs = weight_bin([(2, b) for _, _, b in self.blobs])  # 2 = fp32
        ops = [op("const", [], [(name, ttype("fp32", dims))], {"val": v_blob("fp32", dims, off)})
               for (name, dims, _), off in zip(self.blobs, offs)]
        return ops, data


def f32(dims):
    return ttype("fp32", dims)


def linear(ops, w, x, name, cin, cout, dims_out):
    wn = w.add(name + "_w", [cout, cin], 1.0 / cin ** 0.5)
    bn = w.add(name + "_b", [cout], 0.1)
    ops.append(op("linear", [("x", x), ("weight", wn), ("bias", bn)], [(name, f32(dims_out))]))
    return name


def consts(ops, name, val):
    ops.append(const(name, val[0], val[1]))
    return name


def layer_norm(ops, w, x, name, dims):
    g = w.add(name + "_g", [W], 0.1)
    b = w.add(name + "_bb", [W], 0.1)
    ax = consts(ops, name + "_ax", (v_ints([-1]), ttype("int32", [1])))
    ep = consts(ops, name + "_eps", (v_floats([1e-5], []), f32([])))
    ops.append(op("layer_norm", [("x", x), ("axes", ax), ("gamma", g), ("beta", b), ("epsilon", ep)],
                  [(name, f32(dims))]))
    return name


def attention(ops, w, x, pre, seq_q, k_src=None, v_src=None, seq_k=None):
    """q from x; keys / values from x (encoder) or given [1,H,seq_k,HD] tensors."""
    seq_k = seq_k or seq_q
    q = linear(ops, w, x, pre + "_q", W, W, [1, seq_q, W])
    shp = consts(ops, pre + "_shp", (v_ints([1, seq_q, HEADS, HD]), ttype("int32", [4])))
    perm = consts(ops, pre + "_perm", (v_ints([0, 2, 1, 3]), ttype("int32", [4])))
    ops.append(op("reshape", [("x", q), ("shape", shp)], [(pre + "_qr", f32([1, seq_q, HEADS, HD]))]))
    ops.append(op("transpose", [("x", pre + "_qr"), ("perm", perm)], [(pre + "_qt", f32([1, HEADS, seq_q, HD]))]))
    if k_src is None:
        for t in "kv":
            lin = linear(ops, w, x, pre + "_" + t, W, W, [1, seq_q, W])
            ops.append(op("reshape", [("x", lin), ("shape", shp)], [(pre + "_%sr" % t, f32([1, seq_q, HEADS, HD]))]))
            ops.append(op("transpose", [("x", pre + "_%sr" % t), ("perm", perm)],
                          [(pre + "_%st" % t, f32([1, HEADS, seq_q, HD]))]))
        k_src, v_src = pre + "_kt", pre + "_vt"
    tf = consts(ops, pre + "_false", (f_msg(2, ttype("bool", [])) + f_msg(3, f_msg(1, f_msg(3, f_packed_varints(1, [0])))), ttype("bool", [])))
    tt = consts(ops, pre + "_true", (f_msg(2, ttype("bool", [])) + f_msg(3, f_msg(1, f_msg(3, f_packed_varints(1, [1])))), ttype("bool", [])))
    ops.append(op("matmul", [("x", pre + "_qt"), ("y", k_src), ("transpose_x", tf), ("transpose_y", tt)],
                  [(pre + "_s", f32([1, HEADS, seq_q, seq_k]))]))
    sc = consts(ops, pre + "_scale", (v_floats([1.0 / HD ** 0.5], []), f32([])))
    ops.append(op("mul", [("x", pre + "_s"), ("y", sc)], [(pre + "_ss", f32([1, HEADS, seq_q, seq_k]))]))
    axm = consts(ops, pre + "_axm", (v_ints([-1], []), ttype("int32", [])))
    ops.append(op("softmax", [("x", pre + "_ss"), ("axis", axm)], [(pre + "_p", f32([1, HEADS, seq_q, seq_k]))]))
    ops.append(op("matmul", [("x", pre + "_p"), ("y", v_src), ("transpose_x", tf), ("transpose_y", tf)],
                  [(pre + "_a", f32([1, HEADS, seq_q, HD]))]))
    ops.append(op("transpose", [("x", pre + "_a"), ("perm", perm)], [(pre + "_at", f32([1, seq_q, HEADS, HD]))]))
    shp2 = consts(ops, pre + "_shp2", (v_ints([1, seq_q, W]), ttype("int32", [3])))
    ops.append(op("reshape", [("x", pre + "_at"), ("shape", shp2)], [(pre + "_ar", f32([1, seq_q, W]))]))
    return linear(ops, w, pre + "_ar", pre + "_o", W, W, [1, seq_q, W])


def ffn(ops, w, x, pre, seq):
    h = linear(ops, w, x, pre + "_fc1", W, FFN, [1, seq, FFN])
    mode = consts(ops, pre + "_mode", (v_string("EXACT"), ttype("string", [])))
    ops.append(op("gelu", [("x", h), ("mode", mode)], [(pre + "_g", f32([1, seq, FFN]))]))
    return linear(ops, w, pre + "_g", pre + "_fc2", FFN, W, [1, seq, W])


def program(fn_inputs, outs, ops, opset):
    block = b"".join(f_str(2, o) for o in outs) + b"".join(ops)
    fn = b"".join(f_msg(1, named(n, t)) for n, t in fn_inputs) + f_str(2, opset) + \
        f_msg(3, f_str(1, opset), f_msg(2, block))
    return f_varint(1, 1) + f_msg(2, f_str(1, "main"), f_msg(2, fn))


def encoder(out):
    w, ops = Weights(1), []
    x = "x"
    for layer in range(2):
        pre = "l%d" % layer
        a = attention(ops, w, x, pre, SEQ)
        ops.append(op("add", [("x", x), ("y", a)], [(pre + "_r1", f32([1, SEQ, W]))]))
        n1 = layer_norm(ops, w, pre + "_r1", pre + "_ln1", [1, SEQ, W])
        f = ffn(ops, w, n1, pre, SEQ)
        ops.append(op("add", [("x", n1), ("y", f)], [(pre + "_r2", f32([1, SEQ, W]))]))
        x = layer_norm(ops, w, pre + "_r2", "y" if layer == 1 else pre + "_ln2", [1, SEQ, W])
    wops, data = w.ops_and_bin()
    desc = description([array_feature("x", [1, SEQ, W], FLOAT32)], [array_feature("y", [1, SEQ, W], FLOAT32)],
                       short="bench: transformer encoder, seq 128, width 256")
    prog = program([("x", f32([1, SEQ, W]))], ["y"], wops + ops, "CoreML7")
    write_package(os.path.join(out, "encoder_s128_w256.mlpackage"), model(8, desc, 502, prog), data)


def state_type(dims):  # ValueType{stateType = 5 {wrappedType = 1: fp16 tensor}}
    return f_msg(5, f_msg(1, ttype("fp16", dims)))


def state_feature(name, dims):  # FeatureDescription{name, type{stateType = 8 {arrayType = 1}}}
    arr = [f_packed_varints(1, dims), f_varint(2, FLOAT16)]
    return f_str(1, name) + f_msg(3, f_msg(8, f_msg(1, *arr)))


def decoder(out):
    w, ops = Weights(2), []
    cache = [1, HEADS, CACHE, HD]
    f16c = ttype("fp16", cache)
    shp = consts(ops, "d_shp", (v_ints([1, 1, HEADS, HD]), ttype("int32", [4])))
    perm = consts(ops, "d_perm", (v_ints([0, 2, 1, 3]), ttype("int32", [4])))
    beg = consts(ops, "d_beg", (v_ints([0, 0, POS, 0]), ttype("int32", [4])))
    end = consts(ops, "d_end", (v_ints([1, HEADS, POS + 1, HD]), ttype("int32", [4])))
    dt16 = consts(ops, "d_fp16", (v_string("fp16"), ttype("string", [])))
    dt32 = consts(ops, "d_fp32", (v_string("fp32"), ttype("string", [])))
    kv = {}
    for t in "kv":
        lin = linear(ops, w, "x", "d_" + t, W, W, [1, 1, W])
        ops.append(op("reshape", [("x", lin), ("shape", shp)], [("d_%sr" % t, f32([1, 1, HEADS, HD]))]))
        ops.append(op("transpose", [("x", "d_%sr" % t), ("perm", perm)], [("d_%st" % t, f32([1, HEADS, 1, HD]))]))
        ops.append(op("cast", [("x", "d_%st" % t), ("dtype", dt16)], [("d_%sh" % t, ttype("fp16", [1, HEADS, 1, HD]))]))
        ops.append(op("read_state", [("input", t + "_cache")], [("d_%sc" % t, f16c)]))
        ops.append(op("slice_update", [("x", "d_%sc" % t), ("update", "d_%sh" % t), ("begin", beg), ("end", end)],
                      [("d_%su" % t, f16c)]))
        ops.append(op("write_state", [("input", t + "_cache"), ("data", "d_%su" % t)], [],
                      name="d_%sw" % t))
        ops.append(op("read_state", [("input", t + "_cache")], [("d_%sn" % t, f16c)]))
        ops.append(op("cast", [("x", "d_%sn" % t), ("dtype", dt32)], [("d_%sf" % t, f32(cache))]))
        kv[t] = "d_%sf" % t
    a = attention(ops, w, "x", "d", 1, kv["k"], kv["v"], CACHE)
    ops.append(op("add", [("x", "x"), ("y", a)], [("d_r1", f32([1, 1, W]))]))
    n1 = layer_norm(ops, w, "d_r1", "d_ln1", [1, 1, W])
    f = ffn(ops, w, n1, "d", 1)
    ops.append(op("add", [("x", n1), ("y", f)], [("y", f32([1, 1, W]))]))
    wops, data = w.ops_and_bin()
    desc_parts = description([array_feature("x", [1, 1, W], FLOAT32)], [array_feature("y", [1, 1, W], FLOAT32)],
                             short="bench: one stateful decoder step, width 256, cache 128")
    # description is field 2 of Model: add the states (ModelDescription.state = 13) inside it
    states = b"".join(f_msg(13, state_feature(n, cache)) for n in ("k_cache", "v_cache"))
    desc = rebuild_description(desc_parts, states)
    prog = program([("x", f32([1, 1, W])), ("k_cache", state_type(cache)), ("v_cache", state_type(cache))],
                   ["y"], wops + ops, "CoreML8")
    write_package(os.path.join(out, "decoder_step_w256.mlpackage"), model(9, desc, 502, prog), data)


def rebuild_description(desc_msg, extra):
    """desc_msg is f_msg(2, body): return f_msg(2, body + extra)."""
    # skip the tag byte and the length varint
    i = 1
    while desc_msg[i] & 0x80:
        i += 1
    body = desc_msg[i + 1:]
    return f_msg(2, body + extra)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "bench", "models")
    os.makedirs(out, exist_ok=True)
    encoder(out)
    decoder(out)
    print(out)


if __name__ == "__main__":
    main()
