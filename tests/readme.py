#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""readme.py: the README's example outputs are the program's outputs.

    python3 tests/readme.py ANELINT README.md

Every indented block in the README that starts with "$ anelint ..." is run
(anelint -> ANELINT, /tmp/ -> a temporary directory) and its output compared
line by line with the lines that follow it. In the expected text "..." matches
anything and a time ("0.6 ms" after "ran in"/"fp32"/"fp16") any time. Prints
"ok" or "FAIL" per example and a closing "N passed, M failed" line.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile


def examples(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^    \$ (anelint .*)$", lines[i])
        if not m:
            i += 1
            continue
        cmd, out = m.group(1), []
        i += 1
        while i < len(lines) and lines[i].startswith("    ") and not lines[i].startswith("    $ "):
            out.append(lines[i][4:])
            i += 1
        yield cmd, out


def pattern(line):
    """"..." matches anything; so does the wall time of "ran in fp32, 0.6 ms"."""
    line = re.sub(r"(ran in fp(?:32|16)[^,]*, )[0-9.]+( ms)", lambda m: m.group(1) + "\0" + m.group(2), line)
    rx = ".*".join(re.escape(p) for p in line.split("..."))
    return re.compile("^" + rx.replace("\0", "[0-9.]+") + "$")


def main():
    anelint, readme = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="anelint-readme-")
    passed = failed = 0
    for cmd, want in examples(readme):
        argv = [a.replace("/tmp/", tmp + "/") for a in shlex.split(cmd)]
        argv[0] = anelint
        got = subprocess.run(argv, capture_output=True, text=True).stdout.rstrip("\n").split("\n")
        want = [w.replace("/tmp/", tmp + "/") for w in want]
        bad = len(got) != len(want) and not any("..." == w.strip() for w in want)
        for k, w in enumerate(want):
            if bad or k >= len(got) or not pattern(w).match(got[k]):
                bad = True
                print("FAIL %s\n  line %d want: %s\n  line %d got:  %s" % (
                    cmd, k + 1, w, k + 1, got[k] if k < len(got) else "(nothing)"))
                break
        if len(got) != len(want) and not bad:
            bad = True
            print("FAIL %s: %d lines, the README shows %d" % (cmd, len(got), len(want)))
        if bad:
            failed += 1
        else:
            passed += 1
            print("ok   " + cmd)
    subprocess.run(["rm", "-rf", tmp])
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
