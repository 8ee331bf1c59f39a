#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""split.py: which reports behind tests/observed are for development and which are held out.

Issue #30 item 6: rules are written from the development reports only; tests/fidelity.py scores
the held-out reports separately, so the held-out figure says how anelint does on reports nobody
tuned it to. The unit is the REPORT (the `report` of cases.json), never the case: the cases of
one report always fall on the same side.

The split is drawn once per batch of reports and committed (tests/observed/split.json); a batch
is never redrawn. Draw for one batch: its report ids, sorted, shuffled by
random.Random(SEED) (Python's Mersenne Twister, the same sequence on every Python 3), and the
first ceil(HELDOUT_FRACTION * n) of the shuffled list are held out, the rest are development.
A later batch (reports added to tests/observed afterwards) is drawn the same way, with the same
seed, over its own reports only, and appended: earlier assignments never move.

    python3 tests/observed/split.py            # check: split.json is what the draw gives, and
                                               # every report of cases.json is assigned (exit 1 if not)
    python3 tests/observed/split.py --draw NAME [--note TEXT]
                                               # append batch NAME: the reports of cases.json
                                               # that split.json does not assign yet

Python stdlib only.
"""

import json
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SPLIT = os.path.join(HERE, "split.json")
CASES = os.path.join(HERE, "cases.json")
SEED = 20261207          # the day the first batch was drawn, before any rule change of issue #30
HELDOUT_FRACTION = 0.3   # at least 30% of each batch's reports held out


def draw(reports):
    """{report: "dev" | "heldout"} for one batch; depends only on the set of ids and SEED."""
    ids = sorted(set(reports))
    random.Random(SEED).shuffle(ids)
    k = math.ceil(HELDOUT_FRACTION * len(ids))
    return {r: ("heldout" if i < k else "dev") for i, r in enumerate(ids)}


def load(path=SPLIT):
    with open(path) as f:
        return json.load(f)


def assignment(split):
    """{report: part} over every batch."""
    out = {}
    for b in split["batches"]:
        out.update(b["reports"])
    return out


def case_reports():
    with open(CASES) as f:
        return [c["report"] for c in json.load(f)["cases"]]


def write(split):
    with open(SPLIT, "w") as f:
        json.dump(split, f, indent=1, sort_keys=False)
        f.write("\n")


def check():
    split = load()
    ok = True
    if split.get("seed") != SEED or split.get("heldout_fraction") != HELDOUT_FRACTION:
        print("split.json: seed or fraction differ from split.py")
        ok = False
    seen = set()
    for b in split["batches"]:
        again = draw(b["reports"])
        if again != b["reports"]:
            print("split.json: batch %s is not what the draw gives" % b["name"])
            ok = False
        if seen & set(b["reports"]):
            print("split.json: batch %s reassigns %s" % (b["name"], sorted(seen & set(b["reports"]))))
            ok = False
        seen |= set(b["reports"])
    missing = sorted(set(case_reports()) - seen)
    if missing:
        print("split.json: reports of cases.json not assigned (draw a new batch): %s" % ", ".join(missing))
        ok = False
    a = assignment(split)
    held = sum(1 for v in a.values() if v == "heldout")
    print("tests/observed/split.json: %d reports, %d held out, %d development%s" % (
        len(a), held, len(a) - held, "" if ok else " (FAILED)"))
    return 0 if ok else 1


def main(argv):
    if "--draw" not in argv:
        return check()
    name = argv[argv.index("--draw") + 1]
    note = argv[argv.index("--note") + 1] if "--note" in argv else ""
    split = load() if os.path.exists(SPLIT) else {
        "about": "Which reports behind tests/observed are development (rules may be written from "
                 "them) and which are held out (scored apart, never used to write or tune a rule). "
                 "Drawn by tests/observed/split.py; do not edit by hand.",
        "seed": SEED, "heldout_fraction": HELDOUT_FRACTION, "batches": []}
    if any(b["name"] == name for b in split["batches"]):
        print("split.py: batch %s exists; batches are never redrawn" % name, file=sys.stderr)
        return 2
    new = sorted(set(case_reports()) - set(assignment(split)))
    if not new:
        print("split.py: every report of cases.json is assigned already", file=sys.stderr)
        return 2
    parts = draw(new)
    split["batches"].append({"name": name, "note": note, "reports": dict(sorted(parts.items()))})
    write(split)
    held = sorted(r for r, v in parts.items() if v == "heldout")
    print("batch %s: %d reports, %d held out: %s" % (name, len(parts), len(held), ", ".join(held)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
