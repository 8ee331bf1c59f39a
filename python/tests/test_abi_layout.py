# SPDX-License-Identifier: MIT
"""The ctypes mirrors of _native.py against include/anelint.h: every mirrored struct
has the header's fields, in order (a field added in C and not here would make the
library read past a Python-allocated struct). Field names only: the types are
exercised by test_anelint.py."""
import os
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
from anelint import _native  # noqa: E402

RENAMED = {"pass_": "pass", "from_": "from", "in_": "in"}  # Python keywords


def header_fields(name):
    text = open(os.path.join(ROOT, "include", "anelint.h")).read()
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
    # where a model runs (struct al_where), also by its fields' names: the member where
    text = re.sub(r"union\s*\{\s*struct\s+al_where\s+where\s*;\s*struct\s*\{(.*?)\}\s*;\s*\}\s*;",
                  "struct al_where where;", text, flags=re.S)
    m = re.search(r"\bstruct\s+%s\s*\{(.*?)\};" % re.escape(name), text, flags=re.S)
    assert m, f"struct {name} is not in include/anelint.h"
    names = []
    for decl in m.group(1).split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        fp = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", decl)  # a function pointer
        if fp:
            names.append(fp.group(1))
            continue
        decl = re.sub(r"\[[^\]]*\]", "", decl)  # array sizes
        head, _, rest = decl.partition(",")
        names.append(re.findall(r"\w+", head)[-1])
        names += [re.findall(r"\w+", d)[-1] for d in rest.split(",") if d.strip()]
    return names


@pytest.mark.parametrize("mirror", _native.MIRRORS, ids=lambda c: c.c_name)
def test_mirror_matches_the_header(mirror):
    mine = [RENAMED.get(f[0], f[0]) for f in mirror._fields_]
    theirs = header_fields(mirror.c_name)
    if mirror is _native.NodeHead:
        theirs = theirs[:len(mine)]
    assert mine == theirs
