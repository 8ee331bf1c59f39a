#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/mkllm.py: writes an LLM-scale ML Program package for bench/llm_check.sh
(never committed; build/bench/llm/llm_decoder_32x4096.mlpackage by default):

  a 32-block decoder, width 4096, 32 heads, MLP 11008 (Llama-7B's shapes): per
  block an RMS-style norm, q/k/v/o and gate/up/down projections whose weights are
  iOS18 4-bit palettized (constexpr_lut_to_dense: uint4 indices in weight.bin, a
  per-grouped-channel fp16 LUT of 16 entries per 16 output channels), and the
  attention written per head (slices, two matmuls, scale, mask, softmax, concat),
  as converters emit it; fp16 throughout, spec 9 / CoreML8.

weight.bin holds every index blob at its real size (about 3.2 GB in all) but is
written as a sparse file: the blob headers are real, the index bytes are holes
(zeros), so writing it takes seconds and no disk. The op count (const ops
included, as the corpus manifests count them) is printed and is above 20000.

Usage: python3 bench/mkllm.py [OUTDIR]
"""
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.dont_write_bytecode = True
from pbwire import f_msg, f_str, f_varint  # noqa: E402
from mkfixtures import DT, FLOAT16, array_feature, const, description, model, named, op, ttype, v_ints  # noqa: E402
from mkfixtures_mil import v_blob, v_bool, v_half, write_package  # noqa: E402

DT.setdefault("uint4", 35)  # MIL.proto DataType UINT4 (anelint.h AL_DT_UINT4)

BLOCKS, W, HEADS, MLP, SEQ, GROUP = 32, 4096, 32, 11008, 8, 16
HD = W // HEADS


def concat(names, axis, inter, out, dims):
    """concat with one `values` Argument of several bindings (mkfixtures.op makes
    one Argument per pair: a map key given twice keeps the last)."""
    vals = f_msg(2, f_str(1, "values"), f_msg(2, *[f_msg(1, f_str(1, n)) for n in names]))
    rest = op("concat", [("axis", axis), ("interleave", inter)], [(out, f16(dims))])
    # splice the values argument in after the type field of the Operation message
    body = rest[1:]
    i = 0
    while body[i] & 0x80:
        i += 1
    inner = body[i + 1:]
    return f_msg(3, inner[:2 + len("concat")] + vals + inner[2 + len("concat"):])


def f16(dims):
    return ttype("fp16", dims)


class Bin:
    """weight.bin storage v2, written sparse: metadata records only."""

    def __init__(self, path):
        self.f = open(path, "wb")
        self.f.write(struct.pack("<II", 0, 2) + b"\0" * 56)
        self.end = 64
        self.count = 0

    def blob(self, dtype, nbytes):
        meta = (self.end + 63) // 64 * 64
        self.f.seek(meta)
        self.f.write(struct.pack("<IIQQ", 0xDEADBEEF, dtype, nbytes, meta + 64) + b"\0" * 40)
        self.end = meta + 64 + nbytes
        self.count += 1
        return meta

    def close(self):
        self.f.truncate(self.end)
        self.f.seek(0)
        self.f.write(struct.pack("<II", self.count, 2))
        self.f.close()


class Prog:
    def __init__(self, wbin):
        self.ops, self.n, self.bin = [], 0, wbin

    def add(self, o):
        self.ops.append(o)
        self.n += 1

    def ints(self, name, vals):
        self.add(const(name, v_ints(vals), ttype("int32", [len(vals)])))
        return name

    def half(self, name, vals, dims):
        self.add(const(name, v_half(vals, dims), f16(dims)))
        return name

    def pal_linear(self, x, name, cin, cout, dims_out):
        """4-bit palettized weight [cout, cin]: uint4 indices blob + LUT [cout/16,1,16,1]."""
        off = self.bin.blob(11, cout * cin // 2)  # 11 = uint4
        self.add(const(name + "_idx", v_blob("uint4", [cout, cin], off), ttype("uint4", [cout, cin])))
        lut = [((i % 16) - 8) / 64.0 for i in range(16)] * (cout // GROUP)
        self.half(name + "_lut", lut, [cout // GROUP, 1, 16, 1])
        self.add(op("constexpr_lut_to_dense", [("indices", name + "_idx"), ("lut", name + "_lut")],
                    [(name + "_w", f16([cout, cin]))]))
        self.add(op("linear", [("x", x), ("weight", name + "_w")], [(name, f16(dims_out))]))
        return name


def block(p, b, x):
    pre = "b%d" % b
    X = [1, SEQ, W]
    p.add(op("mul", [("x", x), ("y", x)], [(pre + "_sq", f16(X))]))
    ax = p.ints(pre + "_ax", [-1])
    kd = pre + "_kd"
    p.add(const(kd, v_bool(True), ttype("bool", [])))
    p.add(op("reduce_mean", [("x", pre + "_sq"), ("axes", ax), ("keep_dims", kd)], [(pre + "_ms", f16([1, SEQ, 1]))]))
    p.add(op("rsqrt", [("x", pre + "_ms")], [(pre + "_rs", f16([1, SEQ, 1]))]))
    p.add(op("mul", [("x", x), ("y", pre + "_rs")], [(pre + "_n", f16(X))]))
    q = p.pal_linear(pre + "_n", pre + "_q", W, W, X)
    k = p.pal_linear(pre + "_n", pre + "_k", W, W, X)
    v = p.pal_linear(pre + "_n", pre + "_v", W, W, X)
    scale = p.half(pre + "_scale", [1.0 / HD ** 0.5], [])
    mask = p.half(pre + "_mask", [0.0] * (SEQ * SEQ), [1, SEQ, SEQ])
    rb0, re0 = p.ints(pre + "_rb0", [0, 0, 0]), p.ints(pre + "_re0", [1, SEQ, HD // 2])
    rb1, re1 = p.ints(pre + "_rb1", [0, 0, HD // 2]), p.ints(pre + "_re1", [1, SEQ, HD])
    neg = p.half(pre + "_neg", [-1.0], [])
    cos = p.half(pre + "_cos", [1.0] * (SEQ * HD), [1, SEQ, HD])
    sin = p.half(pre + "_sin", [0.0] * (SEQ * HD), [1, SEQ, HD])
    rax = p.ints(pre + "_rax", [2])
    rint = pre + "_rint"
    p.add(const(rint, v_bool(False), ttype("bool", [])))
    heads = []
    for h in range(HEADS):
        hp = "%s_h%d" % (pre, h)
        beg = p.ints(hp + "_beg", [0, 0, h * HD])
        end = p.ints(hp + "_end", [1, SEQ, (h + 1) * HD])
        for t, src in (("q", q), ("k", k), ("v", v)):
            p.add(op("slice_by_index", [("x", src), ("begin", beg), ("end", end)], [(hp + "_" + t, f16([1, SEQ, HD]))]))
        for t in ("q", "k"):  # rotary embedding, per head as converters write it
            src = hp + "_" + t
            p.add(op("slice_by_index", [("x", src), ("begin", rb0), ("end", re0)], [(src + "1", f16([1, SEQ, HD // 2]))]))
            p.add(op("slice_by_index", [("x", src), ("begin", rb1), ("end", re1)], [(src + "2", f16([1, SEQ, HD // 2]))]))
            p.add(op("mul", [("x", src + "2"), ("y", neg)], [(src + "n", f16([1, SEQ, HD // 2]))]))
            p.add(concat([src + "n", src + "1"], rax, rint, src + "r", [1, SEQ, HD]))
            p.add(op("mul", [("x", src), ("y", cos)], [(src + "c", f16([1, SEQ, HD]))]))
            p.add(op("mul", [("x", src + "r"), ("y", sin)], [(src + "s", f16([1, SEQ, HD]))]))
            p.add(op("add", [("x", src + "c"), ("y", src + "s")], [(src + "o", f16([1, SEQ, HD]))]))
        tf = hp + "_tf"
        p.add(const(tf, v_bool(True), ttype("bool", [])))
        p.add(op("matmul", [("x", hp + "_qo"), ("y", hp + "_ko"), ("transpose_y", tf)], [(hp + "_s", f16([1, SEQ, SEQ]))]))
        p.add(op("mul", [("x", hp + "_s"), ("y", scale)], [(hp + "_ss", f16([1, SEQ, SEQ]))]))
        p.add(op("add", [("x", hp + "_ss"), ("y", mask)], [(hp + "_sm", f16([1, SEQ, SEQ]))]))
        p.add(op("softmax", [("x", hp + "_sm")], [(hp + "_p", f16([1, SEQ, SEQ]))]))
        p.add(op("matmul", [("x", hp + "_p"), ("y", hp + "_v")], [(hp + "_a", f16([1, SEQ, HD]))]))
        heads.append(hp + "_a")
    cax = p.ints(pre + "_cax", [2])
    inter = pre + "_inter"
    p.add(const(inter, v_bool(False), ttype("bool", [])))
    p.add(concat(heads, cax, inter, pre + "_cat", X))
    o = p.pal_linear(pre + "_cat", pre + "_o", W, W, X)
    p.add(op("add", [("x", x), ("y", o)], [(pre + "_r1", f16(X))]))
    g = p.pal_linear(pre + "_r1", pre + "_gate", W, MLP, [1, SEQ, MLP])
    u = p.pal_linear(pre + "_r1", pre + "_up", W, MLP, [1, SEQ, MLP])
    p.add(op("silu", [("x", g)], [(pre + "_act", f16([1, SEQ, MLP]))]))
    p.add(op("mul", [("x", pre + "_act"), ("y", u)], [(pre + "_gu", f16([1, SEQ, MLP]))]))
    d = p.pal_linear(pre + "_gu", pre + "_down", MLP, W, X)
    p.add(op("add", [("x", pre + "_r1"), ("y", d)], [(pre + "_out", f16(X))]))
    return pre + "_out"


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "bench", "llm")
    pkg = os.path.join(out, "llm_decoder_32x4096.mlpackage")
    os.makedirs(out, exist_ok=True)
    write_package(pkg, b"", b"")  # the layout; both files are rewritten below
    data = os.path.join(pkg, "Data", "com.apple.CoreML")
    wbin = Bin(os.path.join(data, "weights", "weight.bin"))
    p = Prog(wbin)
    x = "x"
    for b in range(BLOCKS):
        x = block(p, b, x)
    p.add(op("identity", [("x", x)], [("y", f16([1, SEQ, W]))]))
    wbin.close()
    block_bytes = b"".join(p.ops)
    fn = f_msg(1, named("x", f16([1, SEQ, W]))) + f_str(2, "CoreML8") + \
        f_msg(3, f_str(1, "CoreML8"), f_msg(2, f_str(2, "y") + block_bytes))
    prog = f_varint(1, 1) + f_msg(2, f_str(1, "main"), f_msg(2, fn))
    desc = description([array_feature("x", [1, SEQ, W], FLOAT16)], [array_feature("y", [1, SEQ, W], FLOAT16)],
                       short="bench: LLM-scale 4-bit palettized decoder (sparse weight.bin)")
    with open(os.path.join(data, "model.mlmodel"), "wb") as f:
        f.write(model(9, desc, 502, prog))
    size = os.path.getsize(os.path.join(data, "weights", "weight.bin"))
    print("%s: %d ops (const included), weight.bin %.2f GB (sparse), %d blobs" % (pkg, p.n, size / 2 ** 30,
                                                                                  wbin.count))


if __name__ == "__main__":
    main()
