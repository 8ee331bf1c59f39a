#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""regress_inputs.py: turn tests/regress/ and a sample of mutated fixtures into
files the command line opens, for tests/hostile_cli.sh.

    regress_inputs.py OUTDIR

Each file of tests/regress/<harness>/ is unframed the way the unit suite
replays it (tests/regress/README.md):
  mlmodel/*    the .mlmodel as it is               -> OUTDIR/regress-mlmodel-NAME.mlmodel
  mil/*        [u16 L][L bytes weight.bin][Program] -> a package whose model is
               Model{specificationVersion 6, mlProgram = Program} (and weight.bin
               when L > 0)                          -> OUTDIR/regress-mil-NAME.mlpackage
  mlpackage/*  [u32 A][Manifest][u32 B][model][weight.bin] -> a package directory
  rules/*      a rules file                         -> OUTDIR/regress-rules-NAME.rules
Then the mutations: a few small fixtures of tests/data, each truncated at 4
offsets, with 5 bits flipped and 4 bytes replaced, one change per file, at
positions drawn from a fixed seed (the same files on every run):
  OUTDIR/mut-FIXTURE-K-KIND-POS.mlmodel, or .mlpackage (model.mlmodel mutated).
Prints one path per line. Python 3 stdlib only.
"""

import os
import shutil
import struct
import sys

MANIFEST = b"""{
    "fileFormatVersion": "1.0.0",
    "itemInfoEntries": {
        "00000000-0000-0000-0000-000000000001": {
            "author": "com.apple.CoreML",
            "description": "CoreML Model Specification",
            "name": "model.mlmodel",
            "path": "com.apple.CoreML/model.mlmodel"
        }
    },
    "rootModelIdentifier": "00000000-0000-0000-0000-000000000001"
}
"""

FIXTURES = [
    "crafted/nn_tiny.mlmodel",
    "crafted/split_classifier_image.mlmodel",
    "crafted/enum_pipeline.mlmodel",
    "crafted/mil_tiny.mlpackage",
]


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def write_package(path, manifest, model, weights):
    data = os.path.join(path, "Data", "com.apple.CoreML")
    os.makedirs(os.path.join(data, "weights"))
    with open(os.path.join(path, "Manifest.json"), "wb") as f:
        f.write(manifest)
    with open(os.path.join(data, "model.mlmodel"), "wb") as f:
        f.write(model)
    if weights:
        with open(os.path.join(data, "weights", "weight.bin"), "wb") as f:
            f.write(weights)


def take(data):
    """One [u32 LE len][bytes] part (fuzz_mlpackage.c's take): clamped, 0 when cut."""
    if len(data) < 4:
        return b"", b""
    n = struct.unpack("<I", data[:4])[0]
    data = data[4:]
    n = min(n, len(data))
    return data[:n], data[n:]


def regress(root, out):
    made = []
    base = os.path.join(root, "tests", "regress")
    for harness in sorted(os.listdir(base)):
        hdir = os.path.join(base, harness)
        if not os.path.isdir(hdir):
            continue
        for name in sorted(os.listdir(hdir)):
            src = os.path.join(hdir, name)
            if name.startswith(".") or name.startswith("README") or name.endswith(".md"):
                continue
            with open(src, "rb") as f:
                data = f.read()
            stem = name[:-8] if name.endswith(".mlmodel") else name
            dst = os.path.join(out, "regress-%s-%s" % (harness, stem))
            if harness == "mil":
                wlen = struct.unpack("<H", data[:2])[0] if len(data) >= 2 else 0
                data = data[2:]
                wlen = min(wlen, len(data))
                prog = data[wlen:]
                model = b"\x08\x06\xb2\x1f" + varint(len(prog)) + prog
                dst += ".mlpackage"
                write_package(dst, MANIFEST, model, data[:wlen])
            elif harness == "mlpackage":
                manifest, rest = take(data)
                model, rest = take(rest)
                dst += ".mlpackage"
                write_package(dst, manifest, model, rest)
            elif harness == "rules":
                dst += ".rules"
                with open(dst, "wb") as f:
                    f.write(data)
            else:
                dst += ".mlmodel"
                with open(dst, "wb") as f:
                    f.write(data)
            made.append(dst)
    return made


def mutations(root, out):
    made = []
    seed = 0x9E3779B9

    def rnd(n):
        nonlocal seed
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        return seed % n

    for rel in FIXTURES:
        src = os.path.join(root, "tests", "data", rel)
        pkg = rel.endswith(".mlpackage")
        model_path = os.path.join(src, "Data", "com.apple.CoreML", "model.mlmodel") if pkg else src
        if not os.path.exists(model_path):
            continue
        with open(model_path, "rb") as f:
            data = f.read()
        n = len(data)
        cases = [("cut", n * k // 4, data[:n * k // 4]) for k in (1, 2, 3)] + [("cut", n - 1, data[:-1])]
        for _ in range(5):
            bit = rnd(n * 8)
            b = bytearray(data)
            b[bit // 8] ^= 1 << (bit % 8)
            cases.append(("flip", bit, bytes(b)))
        for _ in range(4):
            pos = rnd(n)
            b = bytearray(data)
            b[pos] = 0xFF if b[pos] != 0xFF else 0x00
            cases.append(("byte", pos, bytes(b)))
        stem = os.path.basename(rel).split(".")[0]
        for k, (kind, pos, mutated) in enumerate(cases):
            dst = os.path.join(out, "mut-%s-%02d-%s-%d" % (stem, k, kind, pos))
            if pkg:
                dst += ".mlpackage"
                shutil.copytree(src, dst)
                for d, _, files in os.walk(dst):  # a writable copy
                    os.chmod(d, 0o755)
                    for fn in files:
                        os.chmod(os.path.join(d, fn), 0o644)
                with open(os.path.join(dst, "Data", "com.apple.CoreML", "model.mlmodel"), "wb") as f:
                    f.write(mutated)
            else:
                dst += ".mlmodel"
                with open(dst, "wb") as f:
                    f.write(mutated)
            made.append(dst)
    return made


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: regress_inputs.py OUTDIR")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for p in regress(root, out) + mutations(root, out):
        print(p)


if __name__ == "__main__":
    main()
