#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""validate_json.py: validate anelint JSON documents against a JSON Schema.

    python3 tests/validate_json.py SCHEMA FILE...

Prints one "FAIL FILE: why" line per invalid document and exits 1 if any;
exits 2 when the `jsonschema` module is missing: the tests that use this
must fail loudly then, not skip (tools/install-deps.sh installs
python3-jsonschema). For `plan` documents it also checks a few invariants
that a schema cannot state (segments cover every layer, totals add up).
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("FAIL: the python3 jsonschema module is missing "
          "(install python3-jsonschema; tools/install-deps.sh does)")
    sys.exit(2)


def plan_invariants(doc):
    for m in doc.get("models", []):
        t = m["totals"]
        segs = m["segments"]
        if sum(s["layers"] for s in segs) != t["layers"]:
            return "%s: segment layers do not add up to %d" % (m["path"], t["layers"])
        if len(segs) != t["segments"] or len(m["switches"]) != t["switches"]:
            return "%s: segment / switch counts differ from the totals" % m["path"]
        if len(m["layers"]) != t["layers"] or len(m["bar"]) != t["layers"]:
            return "%s: %d layers listed, bar %d, totals %d" % (
                m["path"], len(m["layers"]), len(m["bar"]), t["layers"])
        if abs(t["est_us"] - t["compute_us"] - t["switch_us"]) > 0.01:
            return "%s: est_us != compute_us + switch_us" % m["path"]
        for l in m["layers"]:
            s = segs[l["segment"]] if l["segment"] < len(segs) else None
            if not s or s["unit"] != l["unit"] or not s["first"] <= l["index"] <= s["last"]:
                return "%s: layer %d is not in its segment" % (m["path"], l["index"])
        for x in m["switches"]:
            if segs[x["from"]]["unit"] == segs[x["to"]]["unit"]:
                return "%s: a switch between segments of one unit" % m["path"]
    return None


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: validate_json.py SCHEMA FILE...")
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)
    bad = 0
    for path in sys.argv[2:]:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print("FAIL %s: not JSON: %s" % (path, e))
            bad += 1
            continue
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        why = None
        if errors:
            e = errors[0]
            why = "%s at /%s" % (e.message[:200], "/".join(str(p) for p in e.path))
        elif doc.get("command") == "plan":
            why = plan_invariants(doc)
        if why:
            print("FAIL %s: %s" % (path, why))
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
