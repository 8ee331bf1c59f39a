#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mkcompiled.py: lay out an ML Program package as a compiled model directory,
the way Xcode's compiler does (shared/corpus/compiled/FORMAT-NOTES.md), so
tests can run a package against "its compiled form" without a Mac:

    python3 tools/mkcompiled.py PKG.mlpackage MODEL.mil OUT.mlmodelc

OUT/coremldata.bin gets the observed header (type 502, "generic", the spec
version) and the package's ModelDescription; OUT/model.mil is MODEL.mil (e.g.
written by `anelint info --format mil PKG`); OUT/weights/weight.bin a copy of
the package's. Stdlib only; field numbers from coremltools' Model.proto."""
import os
import shutil
import struct
import sys


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(b, i)
            yield num, v
        elif wire == 2:
            n, i = varint(b, i)
            yield num, b[i:i + n]
            i += n
        elif wire == 5:
            yield num, b[i:i + 4]
            i += 4
        elif wire == 1:
            yield num, b[i:i + 8]
            i += 8
        else:
            raise ValueError("wire type %d" % wire)


def main():
    pkg, mil, out = sys.argv[1:4]
    data = os.path.join(pkg, "Data", "com.apple.CoreML")
    model = open(os.path.join(data, "model.mlmodel"), "rb").read()
    spec, desc = 0, b""
    for num, v in fields(model):
        if num == 1:
            spec = v
        elif num == 2:
            desc = v
    os.makedirs(os.path.join(out, "weights"), exist_ok=True)
    head = struct.pack("<II", 502, 5) + bytes(0x1C - 8) + struct.pack("<Q", 7) + b"generic"
    head += struct.pack("<I", spec) + bytes(0x4B - len(head) - 4)
    with open(os.path.join(out, "coremldata.bin"), "wb") as f:
        f.write(head + struct.pack("<Q", len(desc)) + desc + struct.pack("<I", 502))
    shutil.copyfile(mil, os.path.join(out, "model.mil"))
    w = os.path.join(data, "weights", "weight.bin")
    if os.path.exists(w):
        shutil.copyfile(w, os.path.join(out, "weights", "weight.bin"))


if __name__ == "__main__":
    main()
