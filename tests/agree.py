#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""agree.py: `check`, `plan` and `report` tell one story (issue #15).

For every model given, and each set of prediction options below, runs
`anelint check|plan|report --format json OPTIONS MODEL` and compares the unit of every
placed layer/op: check's `unit` (the final placement) and report's `unit` must be the same for every layer of every
sub-model, and plan's `unit` the same for every layer it places (the non-constant ones). Prints one FAIL line per
disagreeing model and the counts "N passed, M failed, K skipped" (a model `check` cannot load
is skipped); exit 1 on any failure.

    tests/agree.py [--anelint build/anelint] MODEL...

Python stdlib only. tests/plan_corpus.sh runs it over tests/data and ../shared/corpus.
"""
import argparse
import json
import subprocess
import sys

OPTION_SETS = [
    [],                                                   # the defaults: a14, the newest release, all
    ["--target", "a17", "--os", "ios17"],                 # where an ML Program's fallbacks take the GPU
    ["--target", "a15", "--os", "ios16", "--compute-units", "cpu-and-ne"],
]


def run(anelint, cmd, opts, model):
    r = subprocess.run([anelint, cmd, "--format", "json", "--fail-on", "never"] + opts + [model],
                       capture_output=True, text=True, timeout=600)
    if r.returncode not in (0, 1):
        return None, "%s exit %d: %s" % (cmd, r.returncode, r.stderr.strip()[:200])
    try:
        return json.loads(r.stdout), None
    except ValueError as e:
        return None, "%s: bad JSON: %s" % (cmd, e)


def units(doc, placed_only):
    """[(sub-model path, layer index, name, unit)] of every layer of every sub-model."""
    out = []
    for m in doc.get("models", []):
        for layer in m.get("layers", []):
            if placed_only and layer.get("type") == "const":
                continue
            out.append((m.get("path"), layer["index"], layer["name"], layer["unit"]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--anelint", default="build/anelint")
    ap.add_argument("models", nargs="*")
    a = ap.parse_args()
    passed = failed = skipped = 0
    for model in a.models:
        why = None
        probe, err = run(a.anelint, "check", [], model)
        if err:  # not a model anelint loads (bad-input tests, formats not read yet): nothing to compare
            skipped += 1
            continue
        for opts in OPTION_SETS:
            docs = {}
            for cmd in ("check", "plan", "report"):
                docs[cmd], err = run(a.anelint, cmd, opts, model)
                if err:
                    why = err
                    break
            if why:
                break
            c = units(docs["check"], True)
            r = units(docs["report"], True)
            p = units(docs["plan"], True)
            if c != r:
                why = "check and report differ (%s)" % " ".join(opts)
            else:  # plan places the non-const ops (constexpr_* ops are constants too)
                cu = {(x[0], x[1]): x for x in c}
                diff = [x for x in p if cu.get((x[0], x[1])) != x]
                if diff or not p and c:
                    why = "check and plan differ (%s): %s" % (" ".join(opts), diff[:3])
            if why:
                break
        if why:
            failed += 1
            print("FAIL %s: %s" % (model, why))
        else:
            passed += 1
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
