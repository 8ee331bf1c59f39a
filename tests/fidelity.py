#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fidelity.py: how often anelint's placement agrees with what Core ML was seen to do.

For each case of tests/observed/cases.json (docs/fidelity.md) runs
`anelint check --format json --target CHIP [--os RELEASE] [--compute-units UNITS] MODEL` and compares
each op's predicted `unit` with the observed verdict:

  an op agrees when both are the ANE, or both are off the ANE and the observed
  verdict is "not_ane" / "gpu_or_cpu" or names the predicted unit (a predicted
  "gpu_or_cpu" matches an observed "cpu" or "gpu"). Ops observed "unknown"
  (the report says nothing about them) are not counted.

Prints the agreement (ops agreeing / ops observed) overall, per evidence rule tag,
per anelint rule that fired on the disagreeing ops, and per report, then every
disagreement. Exit 1 when the overall agreement is below --min (percent), 2 on a
usage or setup error.

    tests/fidelity.py [--anelint build/anelint] [--cases tests/observed/cases.json]
                      [--min 95] [--json] [--case ID]...

--os RELEASE and --compute-units UNITS (the case's) are passed when `anelint check --help`
lists them.
Python stdlib only; reads nothing outside the repository.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
from collections import OrderedDict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def agrees(observed, predicted):
    if observed == "ane" or predicted == "ane":
        return observed == predicted
    if observed in ("not_ane", "gpu_or_cpu"):
        return True
    if predicted == "gpu_or_cpu":
        return observed in ("cpu", "gpu")
    return observed == predicted


def check_options(anelint):
    """Which of --os, --compute-units `anelint check --help` lists."""
    try:
        out = subprocess.run([anelint, "check", "--help"], capture_output=True, text=True, timeout=60)
    except OSError as e:
        sys.exit("fidelity: cannot run %s: %s" % (anelint, e))
    text = out.stdout + out.stderr
    return {o for o in ("--os", "--compute-units") if o in text}


def predict(anelint, case, base, opts):
    cmd = [anelint, "check", "--format", "json", "--fail-on", "never", "--target", case["chip"]]
    if "--os" in opts:
        cmd += ["--os", case["os"]]
    if "--compute-units" in opts and case.get("compute_units"):
        cmd += ["--compute-units", case["compute_units"]]
    cmd.append(os.path.join(base, case["model"]))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode not in (0, 1):
        return None, "exit %d: %s" % (r.returncode, r.stderr.strip().splitlines()[:1])
    doc = json.loads(r.stdout)
    if not doc.get("models"):
        return None, "no model in the JSON output"
    m = doc["models"][0]
    layers = {l["name"]: l for l in m["layers"]}
    model_rules = [f["rule"] for f in m.get("findings", [])]
    return (layers, model_rules), None


class Tally(OrderedDict):
    def add(self, key, ok):
        a = self.setdefault(key, [0, 0])
        a[0] += ok
        a[1] += 1


def pct(a):
    return 100.0 * a[0] / a[1] if a[1] else 0.0


def main():
    ap = argparse.ArgumentParser(description="agreement of anelint's placement with observed placement")
    ap.add_argument("--anelint", default=os.environ.get("ANELINT", os.path.join(ROOT, "build", "anelint")))
    ap.add_argument("--cases", default=os.path.join(ROOT, "tests", "observed", "cases.json"))
    ap.add_argument("--models", default=None,
                    help="the directory the case models were generated into (tools/mkobserved.py --out); "
                         "default: beside the cases file")
    ap.add_argument("--min", type=float, default=95.0, help="fail below this overall agreement (percent)")
    ap.add_argument("--json", action="store_true", help="print the result as one JSON document")
    ap.add_argument("--case", action="append", default=[], help="only these case ids")
    args = ap.parse_args()

    with open(args.cases) as f:
        cases = json.load(f)["cases"]
    if args.case:
        cases = [c for c in cases if c["id"] in args.case]
        if not cases:
            print("fidelity: no such case", file=sys.stderr)
            return 2
    base = os.path.dirname(os.path.abspath(args.cases))
    if args.models:  # cases name their model as "models/NAME"
        base = os.path.dirname(os.path.abspath(args.models.rstrip("/")))
    opts = check_options(args.anelint)

    overall, by_tag, by_report, by_fired = [0, 0], Tally(), Tally(), Tally()
    disagreements, errors, per_case = [], [], []
    for c in cases:
        pred, err = predict(args.anelint, c, base, opts)
        if err:
            errors.append({"case": c["id"], "error": err})
            continue
        layers, model_rules = pred
        ok_n = n = 0
        for o in c["ops"]:
            if o["observed"] == "unknown":
                continue
            l = layers.get(o["name"])
            unit = l["unit"] if l else "missing"
            rules = (l["rules"] if l else []) + [r + "(model)" for r in model_rules]
            ok = l is not None and agrees(o["observed"], unit)
            n += 1
            ok_n += ok
            overall[0] += ok
            overall[1] += 1
            for t in c["rules"]:
                by_tag.add(t, ok)
            by_report.add(c["report"], ok)
            if not ok:
                for r in rules or ["(no rule)"]:
                    by_fired.add(r, 0)
                disagreements.append({"case": c["id"], "report": c["report"], "rules": c["rules"],
                                      "chip": c["chip"], "os": c["os"], "compute_units": c.get("compute_units", "all"), "op": o["name"], "type": o["type"],
                                      "observed": o["observed"], "predicted": unit, "fired": rules})
        per_case.append({"case": c["id"], "agree": ok_n, "observed": n})

    result = {
        "anelint": args.anelint, "os_option": "--os" in opts, "compute_units_option": "--compute-units" in opts, "cases": len(cases),
        "overall": {"agree": overall[0], "observed": overall[1], "percent": round(pct(overall), 1)},
        "by_rule_tag": {k: {"agree": v[0], "observed": v[1], "percent": round(pct(v), 1)} for k, v in by_tag.items()},
        "by_report": {k: {"agree": v[0], "observed": v[1], "percent": round(pct(v), 1)}
                      for k, v in by_report.items()},
        "fired_on_disagreements": {k: v[1] for k, v in sorted(by_fired.items(), key=lambda kv: -kv[1][1])},
        "per_case": per_case, "disagreements": disagreements, "errors": errors, "min": args.min,
    }
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print("fidelity: %d cases, anelint %s%s" % (len(cases), args.anelint,
                                                  "" if "--os" in opts else " (no --os option: release not passed)"))
        print("overall  %d / %d ops agree (%.1f%%)" % (overall[0], overall[1], pct(overall)))
        print("\nby evidence rule")
        for k in sorted(by_tag, key=lambda k: (len(k), k)):
            v = by_tag[k]
            print("  %-10s %4d / %-4d %5.1f%%" % (k, v[0], v[1], pct(v)))
        print("\nanelint rules fired on the disagreeing ops (count)")
        for k, v in result["fired_on_disagreements"].items():
            print("  %-16s %d" % (k, v))
        print("\nby report")
        for k, v in by_report.items():
            print("  %-40s %4d / %-4d %5.1f%%" % (k, v[0], v[1], pct(v)))
        print("\ndisagreements (case, op, observed, predicted, rules fired)")
        for d in disagreements:
            print("  %-30s %-18s %-10s %-10s %s" % (d["case"], d["op"], d["observed"], d["predicted"],
                                                   " ".join(d["fired"]) or "-"))
        for e in errors:
            print("error: %s: %s" % (e["case"], e["error"]))
    if errors:
        return 2
    return 0 if pct(overall) >= args.min else 1


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the listing quietly
    sys.exit(main())
