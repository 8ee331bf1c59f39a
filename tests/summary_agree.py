#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/summary_agree.py: one story across outputs (issue 29 item 2). For each
model given (a directory: every model in it), the figures of `check` (text and
JSON) and of `report` (HTML and Markdown) must agree: layers, ANE-eligible by
their own verdict, placed on the ANE, the moves by rule, and the failing
findings. Usage: summary_agree.py ANELINT MODEL_OR_DIR... ; prints one line per
disagreement and "N passed, M failed"."""
import concurrent.futures as cf
import html
import json
import os
import re
import subprocess
import sys

ANELINT = sys.argv[1]


def models(paths):
    for p in paths:
        if p.endswith((".mlpackage", ".mlmodelc")) or os.path.isfile(p):
            yield p
            continue
        for root, dirs, files in os.walk(p):
            keep = []
            for d in sorted(dirs):
                (yield os.path.join(root, d)) if d.endswith((".mlpackage", ".mlmodelc")) else keep.append(d)
            dirs[:] = keep
            for f in sorted(files):
                if f.endswith(".mlmodel"):
                    yield os.path.join(root, f)


def run(*args):
    r = subprocess.run([ANELINT, *args], capture_output=True, text=True, errors="replace")
    return r.returncode, r.stdout


MOVES = re.compile(r"(\d+) moved(?: by (\w+)|: ((?:,? ?\d+ by \w+)+))")


def moves(text):
    """'516 moved: 312 by ANE073, 204 by ANE072' -> (516, {ANE073: 312, ...})"""
    m = MOVES.search(text)
    if not m:
        return (0, {})
    if m.group(2):
        return (int(m.group(1)), {m.group(2): int(m.group(1))})
    return (int(m.group(1)), {r: int(n) for n, r in re.findall(r"(\d+) by (\w+)", m.group(3))})


def failing(text, pattern):
    m = re.search(pattern, text, re.M)
    if not m:
        return (0, {})
    return (int(m.group(1)), {r: int(n) for r, n in re.findall(r"(ANE\d+|\w+)\*{0,2} x(\d+)", m.group(2))})


def figures(path):
    """{format: (layers, eligible, ane, moves, failing)} of a model of one sub-model, or None."""
    rc, js = run("check", "--format", "json", path)
    if rc >= 2:
        return None
    doc = json.loads(js)
    subs = [m for m in doc["models"] if m["summary"]["layers"] > 0]
    if len(doc["models"]) != 1 or len(subs) != 1:
        return None  # pipelines and models without layers: several summaries
    s = subs[0]["summary"]
    out = {"json": (s["layers"], s["ane_eligible"], s["units"]["ane"],
                    (s["moved"], {x["rule"]: x["count"] for x in s["moved_by"]}),
                    (s["failing"], {x["rule"]: x["count"] for x in s["failing_rules"]}))}
    _, tx = run("check", path)
    m = re.search(r"^summary: (\d+) (?:layers|ops)(?: \(\+\d+ const\))?(?:, (\d+) ANE-eligible)?, (\d+) "
                  r"(?:placed on|on) the ANE", tx, re.M)
    line = re.search(r"^summary: .*$", tx, re.M)
    if m:
        ane = int(m.group(3))
        out["text"] = (int(m.group(1)), int(m.group(2)) if m.group(2) else ane, ane, moves(line.group(0)),
                       failing(tx, r"^failing: (\d+) findings?:(.*)$"))
    _, ht = run("report", "--format", "html", path)
    le = re.search(r"<dt>(?:layers|ops)</dt><dd>(\d+)", ht)
    el = re.search(r'data-eligible="(\d+)"', ht)
    an = re.search(r'data-ane="(\d+)">[^<]*', ht)
    if le and el and an:
        out["html"] = (int(le.group(1)), int(el.group(1)), int(an.group(1)), moves(html.unescape(an.group(0))),
                       failing(ht, r'data-failing="\d+">failing: (\d+) findings?:([^<]*)'))
    _, md = run("report", "--format", "markdown", path)
    m = re.search(r"^(\d+) (?:layers|ops), (\d+) ANE-eligible, (\d+) placed on the ANE(.*)$", md, re.M)
    if m:
        out["markdown"] = (int(m.group(1)), int(m.group(2)), int(m.group(3)), moves(m.group(4)),
                           failing(md, r"^\*\*Failing\*\*: (\d+) findings?:(.*)$"))
    else:  # every layer on the ANE: the table's row only
        row = re.search(r"^\| [^|]* \| [^|]* \| (\d+) \| (\d+) \(", md, re.M)
        if row:
            out["markdown"] = (int(row.group(1)), None, int(row.group(2)), None, None)
    return out


def check(path):
    try:
        f = figures(path)
    except Exception as e:  # noqa: BLE001 - a crash or bad JSON is a failure to report
        return [f"{path}: {e!r}"]
    if not f:
        return None
    ref, bad = f["json"], []
    for fmt in ("text", "html", "markdown"):
        if fmt not in f:
            bad.append(f"{path}: no figures in the {fmt} output")
            continue
        for name, a, b in zip(("layers", "eligible", "on the ANE", "moves", "failing"), ref, f[fmt]):
            if b is not None and a != b:
                bad.append(f"{path}: {name}: json {a}, {fmt} {b}")
    return bad


def main():
    paths = list(models(sys.argv[2:]))
    passed = failed = skipped = 0
    with cf.ThreadPoolExecutor(max_workers=2) as ex:
        for path, bad in zip(paths, ex.map(check, paths)):
            if bad is None:
                skipped += 1  # a pipeline, a model without layers, or one that cannot be read
            elif bad:
                failed += 1
                print("FAIL " + "\n     ".join(bad))
            else:
                passed += 1
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
