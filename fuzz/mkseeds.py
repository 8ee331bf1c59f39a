#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mkseeds.py: build the libFuzzer seed corpora for the three harnesses.

    python3 fuzz/mkseeds.py OUTDIR SOURCE_DIR...

Writes OUTDIR/seeds-mlmodel, OUTDIR/seeds-mil, OUTDIR/seeds-mlpackage (each
emptied first) from every .mlmodel file and .mlpackage directory found under
the SOURCE_DIRs (fuzz/seed.sh passes tests/data and, when present,
../shared/corpus/converted and ../shared/corpus/real). Framings: fuzz/README.md.

Models are made small enough for -max_len without losing their structure:
  - any length-delimited field longer than 256 bytes that does not parse as a
    protobuf message (weights: packed floats, rawValue, long strings) is cut
    to its first 16 bytes; messages around it get their lengths re-encoded;
  - weight.bin is compacted: every blob keeps its 64-byte metadata record and
    at most 16 data bytes, records stay 64-aligned, and the blobFileValue
    offsets in the program are rewritten to the new positions.
Whatever is still longer than the harness's max_len is cut to it (libFuzzer
would do the same). OUTDIR/seeds-rules (user rule files, fuzz_rules.c) gets every
*.rules file under the SOURCE_DIRs, the example of docs/rules-file.md whole and
block by block, and a few hand-made files (continuations, CRLF, every key);
OUTDIR/seeds-config (anelint.toml, fuzz_config.c) every *.toml file under the
SOURCE_DIRs and examples/, and a few hand-made ones.
Python 3 standard library only.
"""
import hashlib
import json
import os
import struct
import sys

MAXLEN = {"mlmodel": 65536, "mil": 65536, "mlpackage": 262144, "rules": 16384, "config": 16384}
SHRINK_OVER = 256
KEEP = 16


# ---------------------------------------------------------------- protobuf wire

def varint(buf, pos):
    v = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ValueError("varint")
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


def enc_varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def parse(buf):
    """[(num, wire, value)] or None if buf is not one well-formed message."""
    fields, pos = [], 0
    try:
        while pos < len(buf):
            tag, pos = varint(buf, pos)
            num, wire = tag >> 3, tag & 7
            if num == 0 or num > (1 << 29) - 1:
                return None
            if wire == 0:
                v, pos = varint(buf, pos)
            elif wire == 1:
                if pos + 8 > len(buf):
                    return None
                v, pos = buf[pos:pos + 8], pos + 8
            elif wire == 2:
                n, pos = varint(buf, pos)
                if pos + n > len(buf):
                    return None
                v, pos = buf[pos:pos + n], pos + n
            elif wire == 5:
                if pos + 4 > len(buf):
                    return None
                v, pos = buf[pos:pos + 4], pos + 4
            else:
                return None
            fields.append((num, wire, v))
    except ValueError:
        return None
    return fields


def encode(fields):
    out = bytearray()
    for num, wire, v in fields:
        out += enc_varint(num << 3 | wire)
        if wire == 0:
            out += enc_varint(v)
        elif wire == 2:
            out += enc_varint(len(v)) + v
        else:
            out += v
    return bytes(out)


def shrink(buf, blob_map=None, depth=0):
    """(new bytes, changed). Cuts big opaque payloads, remaps blob offsets."""
    fields = parse(buf)
    if fields is None or depth > 64:
        return buf, False
    changed = False
    # Value.BlobFileValue { fileName = 1 "@model_path/...", offset = 2 }
    is_blob = blob_map is not None and any(
        n == 1 and w == 2 and v.startswith(b"@model_path") for n, w, v in fields)
    out = []
    for num, wire, v in fields:
        if is_blob and num == 2 and wire == 0 and v in blob_map:
            if blob_map[v] != v:
                v, changed = blob_map[v], True
        elif wire == 2 and len(v) > 0:
            nv, ch = shrink(v, blob_map, depth + 1)
            if ch:
                v, changed = nv, True
            elif len(v) > SHRINK_OVER and parse(v) is None:
                v, changed = v[:KEEP], True
        out.append((num, wire, v))
    return (encode(out), True) if changed else (buf, False)


def field(buf, num):
    fields = parse(buf) or []
    vals = [v for n, w, v in fields if n == num and w == 2]
    return vals[-1] if vals else None


# ---------------------------------------------------------------- weight.bin

def compact_weights(w):
    """(compacted weight.bin, {old metadata offset: new}) or (w, {}) if unreadable."""
    if len(w) < 64:
        return w, {}
    count, version = struct.unpack_from("<II", w, 0)
    out = bytearray(w[:64])
    remap, pos = {}, 64
    while pos + 64 <= len(w):
        sentinel, _dtype, size, off = struct.unpack_from("<IIQQ", w, pos)
        if sentinel != 0xDEADBEEF:
            break
        keep = min(size, KEEP)
        data = w[off:off + keep] if off <= len(w) else b""
        keep = len(data)
        new = len(out)
        md = bytearray(w[pos:pos + 64])
        struct.pack_into("<QQ", md, 8, keep, new + 64)
        remap[pos] = new
        out += md + data
        out += b"\0" * (-len(out) % 64)
        nxt = off + size
        pos = nxt + (-nxt % 64)
    if not remap:
        return w, {}
    # no padding after the last blob, as the writer does
    last = max(remap.values())
    end = last + 64 + struct.unpack_from("<Q", out, last + 8)[0]
    return bytes(out[:end]), remap


# ---------------------------------------------------------------- sources

def find_models(roots):
    """Yield ('mlmodel', path) and ('package', path), sorted."""
    found = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for d in list(dirnames):
                if d.endswith(".mlpackage"):
                    found.append(("package", os.path.join(dirpath, d)))
                    dirnames.remove(d)
            for f in filenames:
                if f.endswith(".mlmodel"):
                    found.append(("mlmodel", os.path.join(dirpath, f)))
    return sorted(found, key=lambda x: x[1])


def read(path):
    with open(path, "rb") as f:
        return f.read()


def package_parts(pkg):
    """(Manifest.json bytes, root model bytes, weight.bin bytes or None)."""
    manifest = read(os.path.join(pkg, "Manifest.json"))
    root = "com.apple.CoreML/model.mlmodel"
    weights_dir = "com.apple.CoreML/weights"
    try:
        mf = json.loads(manifest)
        items = mf["itemInfoEntries"]
        root = items[mf["rootModelIdentifier"]]["path"]
        for it in items.values():
            if it.get("name") == "weights" and it.get("author") == "com.apple.CoreML":
                weights_dir = it["path"]
    except (ValueError, KeyError, TypeError):
        pass
    model = read(os.path.join(pkg, "Data", root))
    wpath = os.path.join(pkg, "Data", weights_dir, "weight.bin")
    weights = read(wpath) if os.path.isfile(wpath) else None
    return manifest, model, weights


DEFAULT_MANIFEST = json.dumps({
    "fileFormatVersion": "1.0.0",
    "itemInfoEntries": {
        "7E1C4B52-0000-4000-8000-000000000001": {
            "author": "com.apple.CoreML", "description": "CoreML Model Specification",
            "name": "model.mlmodel", "path": "com.apple.CoreML/model.mlmodel"},
        "7E1C4B52-0000-4000-8000-000000000002": {
            "author": "com.apple.CoreML", "description": "CoreML Model Weights",
            "name": "weights", "path": "com.apple.CoreML/weights"},
    },
    "rootModelIdentifier": "7E1C4B52-0000-4000-8000-000000000001",
}, indent=4, sort_keys=True).encode()


def L(num, payload):
    return enc_varint(num << 3 | 2) + enc_varint(len(payload)) + payload


def V(num, value):
    return enc_varint(num << 3) + enc_varint(value)


def synthetic(out):
    """Hand-made seeds for the depth limits (AL_MAX_DEPTH = 32): 40 levels each."""
    # pipelines in pipelines: Model{spec 4, pipeline(202){models(1): Model{...}}}
    m = V(1, 4) + L(500, b"")
    for _ in range(40):
        m = V(1, 4) + L(202, L(1, m) + L(2, b"p"))
    out.put("mlmodel", "synthetic__pipeline_depth40", m)
    # NN branch layers in branch layers: layer{name, branch(605){ifBranch(1): NN{layers}}}
    layer = L(1, b"leaf") + L(2, b"x") + L(3, b"y") + L(130, L(10, b""))
    for i in range(40):
        layer = L(1, b"b%d" % i) + L(2, b"x") + L(3, b"y") + L(605, L(1, L(1, layer)))
    out.put("mlmodel", "synthetic__branch_depth40", V(1, 4) + L(500, L(1, layer)))
    # MIL cond blocks in cond blocks: Operation{type, outputs, blocks(4): Block{operations(3)}}
    tensor = L(2, L(1, V(1, 11) + V(2, 0)))  # ValueType{tensorType{fp32, rank 0}}
    op = L(1, b"relu") + L(2, L(1, b"x") + L(2, L(1, L(1, b"x")))) + L(3, L(1, b"y") + tensor)
    for i in range(40):
        op = (L(1, b"cond") + L(3, L(1, b"c%d" % i) + tensor) + L(4, L(2, b"y") + L(3, op))
              + L(4, L(2, b"x")))
    fn = L(1, L(1, b"x") + tensor) + L(2, b"CoreML5") + L(3, L(1, b"CoreML5") + L(2, L(2, b"y") + L(3, op)))
    prog = V(1, 1) + L(2, L(1, b"main") + L(2, fn))
    out.put("mil", "synthetic__cond_depth40", struct.pack("<H", 0) + prog)
    out.put("mlmodel", "synthetic__cond_depth40", V(1, 6) + L(502, prog))


class Out:
    def __init__(self, outdir):
        self.dirs = {}
        for h in MAXLEN:
            d = os.path.join(outdir, "seeds-" + h)
            os.makedirs(d, exist_ok=True)
            for f in os.listdir(d):
                os.unlink(os.path.join(d, f))
            self.dirs[h] = d
        self.seen = set()
        self.count = {h: 0 for h in MAXLEN}

    def put(self, harness, name, data):
        data = data[:MAXLEN[harness]]
        key = (harness, hashlib.sha1(data).digest())
        if key in self.seen:
            return
        self.seen.add(key)
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
        with open(os.path.join(self.dirs[harness], safe), "wb") as f:
            f.write(data)
        self.count[harness] += 1


RULES_HANDMADE = [
    # every key of a new rule, a continuation line, CRLF line ends
    b"id: USR900\r\nop: gather, conv, not_an_op\r\nfamilies: a12..a14, a17+\r\n"
    b"kind: illegal\r\nunit: gpu_or_cpu\r\nconfidence: M\r\ntitle: t\r\n"
    b"reason: r\r\nprovenance: p\r\n  continued\r\nsource: https://example.com/x\r\n"
    b"why: w\r\nfix: f\r\ncatalog: O10\r\nname: my-rule\r\n",
    # NeuralNetwork layers, a warn rule, an override that changes the kind
    b"id: USR901\nlayer: convolution, innerProduct, activation\nkind: warn\nconfidence: G\n"
    b"title: t\nsource: http://example.com\n\nid: ane012\nkind: cost\nfamilies: none\n"
    b"provenance: p\n",
    # overrides of many built-in rules at once
    b"".join(b"id: ANE%03d\nfamilies: m1\nprovenance: p\n\n" % i for i in range(1, 80)),
]


def rules_seeds(out, roots):
    here = os.path.dirname(os.path.abspath(__file__))
    for root in roots:
        for dirpath, _, filenames in os.walk(root):
            for f in sorted(filenames):
                if f.endswith(".rules"):
                    out.put("rules", f, read(os.path.join(dirpath, f)))
    try:
        doc = read(os.path.join(here, "..", "docs", "rules-file.md"))
        example = doc.split(b"<!-- example", 1)[1].split(b"```", 2)[1].split(b"\n", 1)[1]
        out.put("rules", "doc_example", example)
        for i, block in enumerate(example.split(b"\n\n")):
            out.put("rules", "doc_block%d" % i, block + b"\n")
    except (OSError, IndexError) as e:
        print("mkseeds: no rules example from docs/rules-file.md: %s" % e, file=sys.stderr)
    for i, text in enumerate(RULES_HANDMADE):
        out.put("rules", "handmade%d" % i, text)


CONFIG_HANDMADE = [
    b'target = "a14"\nos = \'ios17\'\nfail_on = "cpu"\nselect = ["ANE0", "nn-gather",]\n'
    b'ignore = [\n  "ANE046", # why\n  "ANE07"\n]\n[[suppress]]\nmodel = "m/*.mlmodel"\n'
    b'layer = "enc.*"\nrule = "ANE005"\nreason = "r \\u00e9 \\U0001F600 \\t"\n[[suppress]]\nrule = "x"\n'
    b'reason = "y"\n[[model]]\npath = "a"\nfail_on = "never"\n',
    b'[table]\n"quoted key" = true\nn = -12\n[other]\nx = false\r\n',
    b'a.b = 1\nc = {x = 1}\nd = """x"""\ne = 1.5\nf = [[1]]\n',
]


def config_seeds(out, roots):
    for root in roots + [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")]:
        for dirpath, _, filenames in os.walk(root):
            for f in sorted(filenames):
                if f.endswith(".toml"):
                    out.put("config", f, read(os.path.join(dirpath, f)))
    for i, text in enumerate(CONFIG_HANDMADE):
        out.put("config", "handmade%d" % i, text)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = Out(sys.argv[1])
    synthetic(out)
    rules_seeds(out, [r for r in sys.argv[2:] if os.path.isdir(r)])
    config_seeds(out, [r for r in sys.argv[2:] if os.path.isdir(r)])
    for kind, path in find_models([r for r in sys.argv[2:] if os.path.isdir(r)]):
        tag = os.path.basename(os.path.dirname(path)) + "__" + os.path.basename(path)
        try:
            if kind == "mlmodel":
                model = read(path)
                small, _ = shrink(model)
                out.put("mlmodel", tag, small)
                if small != model and len(model) <= MAXLEN["mlmodel"]:
                    out.put("mlmodel", tag + ".full", model)
                # the same model inside a package (NeuralNetworks may live there too)
                out.put("mlpackage", tag + ".pkg", struct.pack("<I", len(DEFAULT_MANIFEST))
                        + DEFAULT_MANIFEST + struct.pack("<I", len(small)) + small)
                continue
            manifest, model, weights = package_parts(path)
        except OSError as e:
            print("mkseeds: skipping %s: %s" % (path, e), file=sys.stderr)
            continue
        remap = {}
        if weights is not None:
            weights, remap = compact_weights(weights)
        small, _ = shrink(model, remap)
        out.put("mlmodel", tag + ".model", small)
        pkg = (struct.pack("<I", len(manifest)) + manifest + struct.pack("<I", len(small)) + small
               + (weights or b""))
        out.put("mlpackage", tag, pkg)
        program = field(small, 502)
        if program is not None:
            w = weights if weights is not None and len(weights) <= 0xFFFF else b""
            out.put("mil", tag, struct.pack("<H", len(w)) + w + program)
            if w:
                out.put("mil", tag + ".noweights", struct.pack("<H", 0) + program)
    print("mkseeds: " + ", ".join("%s %d" % (h, n) for h, n in out.count.items())
          + " seeds in " + sys.argv[1])


if __name__ == "__main__":
    main()
