#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""compiled_names.py MODEL.mlmodelc CHECK.json: every layer of the model's
espresso files and every op of its model.mil (pipeline stages included) must be
listed by name in `anelint check --consts --format json` output, and every
espresso layer whose top is in model.espresso.shape has that shape as its first
output's shape (the last _rank of [seq, n, k, h, w]; no _rank: all five, or the
inferred rank's last dims when the rest are 1). Prints the count, or what is
missing or wrong; exit 1 when any is."""
import glob
import json
import os
import re
import sys

model, report = sys.argv[1:3]
want = []
shapes = {}  # (stage dir, layer name) -> the dims model.espresso.shape gives its first top
for d in [model] + sorted(glob.glob(os.path.join(model, "model[0-9]*"))):
    net = os.path.join(d, "model.espresso.net")
    if os.path.exists(net):
        layers = json.load(open(net))["layers"]
        want += [layer["name"] for layer in layers]
        shp = os.path.join(d, "model.espresso.shape")
        table = json.load(open(shp))["layer_shapes"] if os.path.exists(shp) else {}
        for layer in layers:
            e = table.get(layer.get("top", "").split(",")[0])
            if e is not None:
                full = [e.get("seq", 1), e.get("n", -1), e.get("k", -1), e.get("h", -1), e.get("w", -1)]
                shapes[(d, layer["name"])] = full[5 - e.get("_rank", 5):]
    mil = os.path.join(d, "model.mil")
    if os.path.exists(mil):
        for line in open(mil):
            s = line.strip()
            # "<type> name[, <type> name] = op(...)": the op's first output
            m = re.match(r"^(?:tensor|list|tuple|dict|state)<.*?>\s+(\w+)\s*[,=]", s)
            if m and "= " in s and not s.startswith("func "):
                want.append(m.group(1))
got = set()
wrong = []
for m in json.load(open(report))["models"]:
    # the stage directory of a sub-model: "...:pipeline/model1" -> model/model1
    stage = re.search(r"/(model\d+)$", m.get("path", ""))
    d = os.path.join(model, stage.group(1)) if stage else model
    for layer in m.get("layers", []):
        got.add(layer["name"])
        want_dims = shapes.get((d, layer["name"]))
        if want_dims is None or not layer.get("shapes"):
            continue
        dims = layer["shapes"][0].get("dims")
        if dims is None or not (dims == want_dims or (len(dims) < 5 and want_dims[:5 - len(dims)] ==
                                                      [1] * (5 - len(dims)) and dims == want_dims[5 - len(dims):])):
            wrong.append("%s %s != %s" % (layer["name"], dims, want_dims))
missing = [n for n in want if n not in got]
if missing or wrong:
    print("missing %d of %d: %s; shapes not from model.espresso.shape: %s" %
          (len(missing), len(want), " ".join(missing[:10]), "; ".join(wrong[:5])))
    sys.exit(1)
print("%d names, %d shapes" % (len(want), len(shapes)))
