# SPDX-License-Identifier: MIT
"""tests/corpus_counts.py: compare anelint's reading of a corpus model with the ground truth the
corpus ships (coremltools' own reading, written when the corpus was made):
converted/manifest.json ("type", "spec_version", "ops": type -> count) and the
"layers/ops:" lines of real/SOURCES.md. Usage: python3 corpus_counts.py CORPUS MODEL INFO_JSON
Exits 0 when they agree or the model is not listed, 1 with a one-line reason otherwise."""
import json
import os
import re
import sys


def truth(corpus, model):
    name = os.path.basename(model.rstrip("/"))
    man = os.path.join(corpus, "converted", "manifest.json")
    if os.path.exists(man):
        for m in json.load(open(man))["models"]:
            if m.get("file") == name and m.get("status") == "ok":
                return m.get("type"), m.get("spec_version"), m.get("ops")
    src = os.path.join(corpus, "real", "SOURCES.md")
    if os.path.exists(src):
        text = open(src).read()
        block = re.search(r"^- `" + re.escape(name) + r"`\n((?:  - .*\n)+)", text, re.M)
        if block:
            line = re.search(r"layers/ops: (.*)", block.group(1))
            if line and "[" not in line.group(1):
                ops = {}
                for part in line.group(1).split(", "):
                    k, _, v = part.rpartition(":")
                    if not k or not v.strip().isdigit():
                        return None, None, None  # prose, not a count list
                    ops[k] = int(v)
                return None, None, ops
    return None, None, None


def main():
    corpus, model, info = sys.argv[1:4]
    want_type, want_spec, want_ops = truth(corpus, model)
    if want_ops is None:
        return 0
    root = json.load(open(info))["models"][0]
    if want_type and root["type"] != want_type:
        print("type %s, expected %s" % (root["type"], want_type))
        return 1
    if want_spec and root["spec_version"] != want_spec:
        print("spec %s, expected %s" % (root["spec_version"], want_spec))
        return 1
    if root["layer_types"] != want_ops:
        print("layer counts %s, expected %s" % (root["layer_types"], want_ops))
        return 1
    return 0


sys.exit(main())
