#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fidelity.py: how often anelint's placement agrees with what Core ML was seen to do.

For each case of tests/observed/cases.json (docs/fidelity.md) runs
`anelint check --format json --target CHIP [--os RELEASE] [--compute-units UNITS] MODEL` and compares
each op's predicted `unit` with the observed verdict:

  an op agrees when both are the ANE, or both are off the ANE and the observed
  verdict is "not_ane" / "gpu_or_cpu" or names the predicted unit (a predicted
  "gpu_or_cpu" or "not_ane" matches an observed "cpu" or "gpu"). Ops observed
  "unknown" (the report says nothing about them) are not counted.

Prints, for all cases and for the development and held-out reports of
tests/observed/split.json apart (issue #30 item 6):
  - agreement per op (ops agreeing / ops observed) and per case (cases whose every
    observed op agrees / cases with an observed op);
  - confident accuracy (agreement over the ops whose verdict is confident) and
    coverage (share of observed ops with a confident verdict). A layer's verdict is
    not confident when its JSON says `"verdict": "uncertain"` or `"ane": null`;
    a JSON without these fields is confident everywhere (coverage 100%);
  - leave-one-report-out: for each report, its agreement when every rule that rests
    on that report alone (tests/observed/rule_support.json) is switched off
    (`anelint check --ignore RULES`);
then the agreement per evidence rule tag, the anelint rules that fired on the
disagreeing ops, per report, and every disagreement. Exit 1 when the overall agreement
(all cases) is below --min (percent), 2 on a usage or setup error.

    tests/fidelity.py [--anelint build/anelint] [--cases tests/observed/cases.json]
                      [--split tests/observed/split.json] [--support tests/observed/rule_support.json]
                      [--min 90] [--no-loro] [--json] [--case ID]...

--os RELEASE and --compute-units UNITS (the case's) are passed when `anelint check --help`
lists them.
Python stdlib only; reads nothing outside the repository.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
from collections import OrderedDict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARTS = ("all", "dev", "heldout")
PART_NAME = {"all": "all", "dev": "development", "heldout": "held out", "unassigned": "unassigned"}


def agrees(observed, predicted):
    if observed == "ane" or predicted == "ane":
        return observed == predicted
    if observed in ("not_ane", "gpu_or_cpu"):
        return predicted in ("cpu", "gpu", "gpu_or_cpu", "not_ane")
    if predicted in ("gpu_or_cpu", "not_ane"):
        return observed in ("cpu", "gpu")
    return observed == predicted


def predicted_unit(layer):
    """The layer's final unit; from `verdict` when a JSON has no `unit`."""
    if layer is None:
        return "missing"
    if "unit" in layer:
        return layer["unit"]
    return {"ane": "ane", "not_ane": "not_ane"}.get(layer.get("verdict"), "uncertain")


def confident(layer):
    """False when check says it does not know: `verdict` "uncertain" or `ane` null."""
    if layer is None:
        return False
    if layer.get("verdict") == "uncertain":
        return False
    if "ane" in layer and layer["ane"] is None:
        return False
    return True


def check_options(anelint):
    """Which of --os, --compute-units, --ignore `anelint check --help` lists."""
    try:
        out = subprocess.run([anelint, "check", "--help"], capture_output=True, text=True, timeout=60)
    except OSError as e:
        sys.exit("fidelity: cannot run %s: %s" % (anelint, e))
    text = out.stdout + out.stderr
    return {o for o in ("--os", "--compute-units", "--ignore") if o in text}


def predict(anelint, case, base, opts, ignore=()):
    cmd = [anelint, "check", "--format", "json", "--fail-on", "never", "--target", case["chip"]]
    if "--os" in opts:
        cmd += ["--os", case["os"]]
    if "--compute-units" in opts and case.get("compute_units"):
        cmd += ["--compute-units", case["compute_units"]]
    if ignore:
        cmd += ["--ignore", ",".join(ignore)]
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


def score_case(case, layers):
    """[(op, observed, predicted, agrees, confident, layer)] over the case's observed ops."""
    out = []
    for o in case["ops"]:
        if o["observed"] == "unknown":
            continue
        l = layers.get(o["name"])
        unit = predicted_unit(l)
        out.append((o, o["observed"], unit, l is not None and agrees(o["observed"], unit), confident(l), l))
    return out


class Tally(OrderedDict):
    def add(self, key, ok):
        a = self.setdefault(key, [0, 0])
        a[0] += ok
        a[1] += 1


def pct(a):
    return 100.0 * a[0] / a[1] if a[1] else 0.0


def frac(a):
    return {"agree": a[0], "observed": a[1], "percent": round(pct(a), 1)}


class Part:
    """The figures of one part (all, dev, heldout): per op, per case, confident ops."""

    def __init__(self):
        self.ops, self.cases, self.conf_ok, self.cover = [0, 0], [0, 0], [0, 0], [0, 0]
        self.reports = set()

    def add_case(self, report, scored):
        if not scored:
            return
        self.reports.add(report)
        self.cases[0] += all(s[3] for s in scored)
        self.cases[1] += 1
        for s in scored:
            self.ops[0] += s[3]
            self.ops[1] += 1
            self.cover[0] += s[4]
            self.cover[1] += 1
            if s[4]:
                self.conf_ok[0] += s[3]
                self.conf_ok[1] += 1

    def as_json(self):
        return {"reports": len(self.reports), "ops": frac(self.ops), "cases": frac(self.cases),
                "confident_accuracy": frac(self.conf_ok), "coverage": frac(self.cover)}


def load_split(path):
    """({report: part}, {report: batch name}) from split.json."""
    if not os.path.exists(path):
        return {}, {}
    with open(path) as f:
        doc = json.load(f)
    part, batch = {}, {}
    for b in doc["batches"]:
        part.update(b["reports"])
        batch.update({r: b["name"] for r in b["reports"]})
    return part, batch


def solo_rules(support_path, known_rules):
    """{report: [rules resting on that report alone]} from rule_support.json, keeping the
    rules anelint has (an unknown id would make --ignore fail)."""
    if not os.path.exists(support_path):
        return {}, []
    with open(support_path) as f:
        doc = json.load(f)
    solo, stale = {}, []
    for r in doc["rules"]:
        if known_rules is not None and r["rule"] not in known_rules:
            stale.append(r["rule"])
            continue
        if len(r["reports"]) == 1 and not r["other"]:
            solo.setdefault(r["reports"][0], []).append(r["rule"])
    return solo, stale


def rule_table(anelint):
    """{id: provenance + url} from `anelint rules --format json`, or None."""
    try:
        r = subprocess.run([anelint, "rules", "--format", "json"], capture_output=True, text=True, timeout=60)
        return {x["id"]: "%s %s" % (x.get("provenance") or "", x.get("url") or "")
                for x in json.loads(r.stdout)["rules"]}
    except (OSError, ValueError, KeyError):
        return None


def unmapped_citations(rules, support_path, cases):
    """Rules whose provenance cites the issue or PR of a report in the set but that
    rule_support.json does not list: the mapping is out of date for them."""
    if rules is None or not os.path.exists(support_path):
        return []
    with open(support_path) as f:
        mapped = {r["rule"] for r in json.load(f)["rules"]}
    keys = {}
    for c in cases:
        m = re.match(r"https://github\.com/[^/]+/([^/]+)/(?:issues|pull)/(\d+)$", c.get("url", ""))
        if m:
            keys[c["report"]] = re.compile(r"\b%s\b[^;()]{0,40}?#%s\b" % (re.escape(m.group(1)), m.group(2)))
    out = []
    for rid, text in sorted(rules.items()):
        if rid in mapped:
            continue
        hit = sorted(rep for rep, k in keys.items() if k.search(text))
        if hit:
            out.append((rid, hit))
    return out


def main():
    ap = argparse.ArgumentParser(description="agreement of anelint's placement with observed placement")
    ap.add_argument("--anelint", default=os.environ.get("ANELINT", os.path.join(ROOT, "build", "anelint")))
    ap.add_argument("--cases", default=os.path.join(ROOT, "tests", "observed", "cases.json"))
    ap.add_argument("--split", default=None, help="report -> dev / heldout (default: split.json beside the cases)")
    ap.add_argument("--support", default=None,
                    help="rule -> reports (default: rule_support.json beside the cases)")
    ap.add_argument("--models", default=None,
                    help="the directory the case models were generated into (tools/mkobserved.py --out); "
                         "default: beside the cases file")
    ap.add_argument("--min", type=float, default=90.0, help="fail below this overall agreement (percent)")
    ap.add_argument("--min-batch", action="append", default=[], metavar="NAME=PCT",
                    help="also fail when batch NAME (split.json) agrees on fewer than PCT percent of its ops; "
                         "make check holds the first batch, which the rules were written from, at 95")
    ap.add_argument("--no-loro", action="store_true", help="skip leave-one-report-out")
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
    cdir = os.path.dirname(os.path.abspath(args.cases))
    base = cdir
    if args.models:  # cases name their model as "models/NAME"
        base = os.path.dirname(os.path.abspath(args.models.rstrip("/")))
    split, batch_of = load_split(args.split or os.path.join(cdir, "split.json"))
    support = args.support or os.path.join(cdir, "rule_support.json")
    opts = check_options(args.anelint)
    rules = rule_table(args.anelint)
    solo, stale = solo_rules(support, set(rules) if rules is not None else None)

    def part_of(c):
        return split.get(c["report"], "unassigned")

    overall, by_tag, by_report, by_fired = [0, 0], Tally(), Tally(), Tally()
    parts = {p: Part() for p in PARTS}
    batches = OrderedDict((b, Part()) for b in OrderedDict.fromkeys(batch_of.values()))
    disagreements, errors, per_case, scored_by_case = [], [], [], {}
    for c in cases:
        pred, err = predict(args.anelint, c, base, opts)
        if err:
            errors.append({"case": c["id"], "error": err})
            continue
        layers, model_rules = pred
        scored = score_case(c, layers)
        scored_by_case[c["id"]] = scored
        part = part_of(c)
        parts["all"].add_case(c["report"], scored)
        if part in parts:
            parts[part].add_case(c["report"], scored)
        if c["report"] in batch_of:
            batches[batch_of[c["report"]]].add_case(c["report"], scored)
        for o, observed, unit, ok, conf, l in scored:
            rules_fired = (l["rules"] if l else []) + [r + "(model)" for r in model_rules]
            overall[0] += ok
            overall[1] += 1
            for t in c["rules"]:
                by_tag.add(t, ok)
            by_report.add(c["report"], ok)
            if not ok:
                for r in rules_fired or ["(no rule)"]:
                    by_fired.add(r, 0)
                disagreements.append({"case": c["id"], "report": c["report"], "part": part, "rules": c["rules"],
                                      "chip": c["chip"], "os": c["os"], "compute_units": c.get("compute_units", "all"),
                                      "op": o["name"], "type": o["type"], "observed": observed, "predicted": unit,
                                      "confident": conf, "fired": rules_fired})
        per_case.append({"case": c["id"], "part": part, "agree": sum(s[3] for s in scored), "observed": len(scored),
                         "confident": sum(s[4] for s in scored)})

    # leave-one-report-out: each report's cases again, its own rules switched off
    loro = OrderedDict()
    if not args.no_loro:
        for rep in OrderedDict((c["report"], 1) for c in cases):
            off = sorted(solo.get(rep, []))
            before, after, cbefore, cafter = [0, 0], [0, 0], [0, 0], [0, 0]
            for c in cases:
                if c["report"] != rep or c["id"] not in scored_by_case:
                    continue
                s0 = scored_by_case[c["id"]]
                if not s0:
                    continue
                if off and "--ignore" in opts:
                    pred, err = predict(args.anelint, c, base, opts, off)
                    if err:
                        errors.append({"case": c["id"], "error": "leave-one-report-out: " + err})
                        continue
                    s1 = score_case(c, pred[0])
                else:
                    s1 = s0
                for a, s in ((before, s0), (after, s1)):
                    a[0] += sum(x[3] for x in s)
                    a[1] += len(s)
                cbefore[0] += all(x[3] for x in s0)
                cafter[0] += all(x[3] for x in s1)
                cbefore[1] += 1
                cafter[1] += 1
            if before[1]:
                loro[rep] = {"part": split.get(rep, "unassigned"), "rules_off": off, "before": frac(before),
                             "after": frac(after), "cases_before": frac(cbefore), "cases_after": frac(cafter)}

    def loro_sum(pred):
        a, b, ca, cb, n = [0, 0], [0, 0], [0, 0], [0, 0], 0
        for v in loro.values():
            if not pred(v):
                continue
            n += 1
            for acc, key in ((a, "before"), (b, "after"), (ca, "cases_before"), (cb, "cases_after")):
                acc[0] += v[key]["agree"]
                acc[1] += v[key]["observed"]
        return {"reports": n, "before": frac(a), "after": frac(b), "cases_before": frac(ca), "cases_after": frac(cb)}

    loro_summary = {
        "all": loro_sum(lambda v: True),
        "dev": loro_sum(lambda v: v["part"] == "dev"),
        "heldout": loro_sum(lambda v: v["part"] == "heldout"),
        "with_own_rules": loro_sum(lambda v: bool(v["rules_off"])),
    } if loro else {}
    unmapped = unmapped_citations(rules, support, cases)

    result = {
        "anelint": args.anelint, "os_option": "--os" in opts, "compute_units_option": "--compute-units" in opts,
        "cases": len(cases),
        "overall": frac(overall),
        "parts": {p: parts[p].as_json() for p in PARTS},
        "batches": {b: x.as_json() for b, x in batches.items()},
        "unassigned_reports": sorted({c["report"] for c in cases if part_of(c) == "unassigned"}),
        "leave_one_report_out": {"summary": loro_summary, "reports": loro, "stale_rules": stale,
                                 "unmapped_citations": [{"rule": r, "reports": h} for r, h in unmapped]},
        "by_rule_tag": {k: frac(v) for k, v in by_tag.items()},
        "by_report": {k: dict(frac(v), part=split.get(k, "unassigned")) for k, v in by_report.items()},
        "fired_on_disagreements": {k: v[1] for k, v in sorted(by_fired.items(), key=lambda kv: -kv[1][1])},
        "per_case": per_case, "disagreements": disagreements, "errors": errors, "min": args.min,
    }
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print_text(args, opts, cases, overall, parts, batches, loro, loro_summary, stale, unmapped, by_tag, by_report,
                   split, result, disagreements, errors)
    if errors:
        return 2
    ok = pct(overall) >= args.min
    for spec in args.min_batch:
        name, _, floor = spec.partition("=")
        b = result["batches"].get(name)
        if b is None:
            print("fidelity: --min-batch: no batch %r in the split" % name, file=sys.stderr)
            return 2
        got = 100.0 * b["ops"]["agree"] / b["ops"]["observed"] if b["ops"]["observed"] else 100.0
        if got < float(floor):
            print("fidelity: batch %s agrees on %.1f%% of its ops, below %s%%" % (name, got, floor))
            ok = False
    return 0 if ok else 1


def fmt(a, w=4):
    return "%*d / %-*d %5.1f%%" % (w, a[0], w, a[1], pct(a))


def fj(d):
    return fmt((d["agree"], d["observed"]))


def print_text(args, opts, cases, overall, parts, batches, loro, loro_summary, stale, unmapped, by_tag, by_report,
               split, result, disagreements, errors):
    # the first two lines are what tests/fidelity.sh shows
    print("fidelity: %d cases, anelint %s%s" % (len(cases), args.anelint,
                                              "" if "--os" in opts else " (no --os option: release not passed)"))
    print("overall  %d / %d ops agree (%.1f%%)" % (overall[0], overall[1], pct(overall)))
    for p in ("dev", "heldout"):
        print("%-8s %d / %d ops agree (%.1f%%), %d reports" % (
            {"dev": "dev", "heldout": "held-out"}[p], parts[p].ops[0], parts[p].ops[1], pct(parts[p].ops),
            len(parts[p].reports)))
    if loro_summary:
        s = loro_summary["all"]
        print("leave-one-report-out  %d / %d ops agree (%.1f%%), %d reports" % (
            s["after"]["agree"], s["after"]["observed"], s["after"]["percent"], s["reports"]))
    print("\n%-30s %-21s %-21s %-21s %-21s" % ("part (reports)", "ops agree", "cases agree",
                                             "confident accuracy", "coverage"))
    for p in PARTS:
        x = parts[p]
        print("%-30s %s  %s  %s  %s" % ("%s (%d)" % (PART_NAME[p], len(x.reports)), fmt(x.ops), fmt(x.cases),
                                        fmt(x.conf_ok), fmt(x.cover)))
    for b, x in batches.items():
        print("%-30s %s  %s  %s  %s" % ("batch %s (%d)" % (b, len(x.reports)), fmt(x.ops), fmt(x.cases),
                                        fmt(x.conf_ok), fmt(x.cover)))
    if result["unassigned_reports"]:
        print("not in split.json (counted in all only): %s" % ", ".join(result["unassigned_reports"]))
    if loro:
        print("\nleave-one-report-out (each report with the rules that rest on it alone switched off; "
              "tests/observed/rule_support.json)")
        print("  %-40s %-8s %-17s %-17s %s" % ("report", "part", "ops before", "ops after", "rules off"))
        for rep, v in loro.items():
            if v["rules_off"]:
                print("  %-40s %-8s %-17s %-17s %s" % (rep, v["part"], fj(v["before"]), fj(v["after"]),
                                                      ",".join(v["rules_off"])))
        n0 = sum(1 for v in loro.values() if not v["rules_off"])
        print("  (%d reports have no rule of their own: unchanged)" % n0)
        for p in ("all", "dev", "heldout", "with_own_rules"):
            s = loro_summary[p]
            print("  %-24s %2d reports  ops %s -> %s   cases %s -> %s" % (
                {"all": "all", "dev": "development", "heldout": "held out",
                 "with_own_rules": "with rules of their own"}[p], s["reports"], fj(s["before"]), fj(s["after"]),
                fj(s["cases_before"]), fj(s["cases_after"])))
        for r in stale:
            print("  note: rule_support.json names %s, which anelint does not have" % r)
        for r, h in unmapped:
            print("  note: %s's provenance cites %s, but rule_support.json has no row for it" % (r, ", ".join(h)))
    print("\nby evidence rule")
    for k in sorted(by_tag, key=lambda k: (len(k), k)):
        print("  %-10s %s" % (k, fmt(by_tag[k])))
    print("\nanelint rules fired on the disagreeing ops (count)")
    for k, v in result["fired_on_disagreements"].items():
        print("  %-16s %d" % (k, v))
    print("\nby report")
    for k, v in by_report.items():
        print("  %-40s %-8s %s" % (k, split.get(k, "-"), fmt(v)))
    print("\ndisagreements (case, op, observed, predicted, rules fired)")
    for d in disagreements:
        print("  %-30s %-18s %-10s %-10s %s%s" % (d["case"], d["op"], d["observed"], d["predicted"],
                                                 " ".join(d["fired"]) or "-", "" if d["confident"] else " (uncertain)"))
    for e in errors:
        print("error: %s: %s" % (e["case"], e["error"]))


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the listing quietly
    sys.exit(main())
