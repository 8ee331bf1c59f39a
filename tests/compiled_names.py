#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""compiled_names.py MODEL.mlmodelc CHECK.json: every layer of the model's
espresso files and every op of its model.mil (pipeline stages included) must be
listed by name in `anelint check --consts --format json` output. Prints the
count, or the names missing; exit 1 when any is."""
import glob
import json
import os
import re
import sys

model, report = sys.argv[1:3]
want = []
for d in [model] + sorted(glob.glob(os.path.join(model, "model[0-9]*"))):
    net = os.path.join(d, "model.espresso.net")
    if os.path.exists(net):
        want += [layer["name"] for layer in json.load(open(net))["layers"]]
    mil = os.path.join(d, "model.mil")
    if os.path.exists(mil):
        for line in open(mil):
            s = line.strip()
            # "<type> name[, <type> name] = op(...)": the op's first output
            m = re.match(r"^(?:tensor|list|tuple|dict|state)<.*?>\s+(\w+)\s*[,=]", s)
            if m and "= " in s and not s.startswith("func "):
                want.append(m.group(1))
got = set()
for m in json.load(open(report))["models"]:
    for layer in m.get("layers", []):
        got.add(layer["name"])
missing = [n for n in want if n not in got]
if missing:
    print("missing %d of %d: %s" % (len(missing), len(want), " ".join(missing[:10])))
    sys.exit(1)
print(len(want))
