#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/architecture.py: the layering of src/ is checked, not just drawn.

1. Includes: a file under src/STAGE/ may include headers of its own stage and of
   the stages below it (base < format < analysis < interp < rewrite < report <
   command < cli; a stage's one level of subfolders, e.g. src/rewrite/passes/, is its own), never one above.
2. Symbols: among the library's objects (BUILD/libanelint.a), draw an edge
   a.o -> b.o when a.o uses a symbol b.o defines (nm), and find the strongly
   connected components (Tarjan): none may hold more than one file.
3. Sinks only read: no object of src/report/ but report_analyze.o (the driver
   the caller runs first) uses al_model_check, al_model_plan,
   al_model_infer_shapes or al_report_analyze.
4. Names: the prefix says what is public. Every global symbol of the library
   that starts with al_ is declared in include/anelint.h; internal functions
   and data shared between files start with ali_ (SQLite's sqlite3_ / sqlite3).
5. Exports: the shared library is built with -fvisibility=hidden, so a public
   function is exported only if its declaration carries AL_API: every function
   declared at file scope in include/anelint.h must.
6. A thin CLI (#32): every command's meaning lives in the library (src/command/),
   so every file of src/cli/ is a front end: it includes no header of the
   project but cli.h (the CLI's own) and anelint.h, and no object of src/cli/
   uses an internal ali_ symbol (nm), only the public API.
7. Tests named by pass (#32): every row of the pass table (AL_PASSES in
   src/rewrite/surgery.c) has a test whose file name is the pass name, "-" as
   "_": tests/pass_<name>.sh or tests/unit/test_pass_<name>.c, so that a reader
   finds the test of mil-lstm-unroll by its name. PASS_TESTS_TODO lists the rows
   whose tests are still named otherwise (it only shrinks).
8. Core ML fields decoded in format/ (#32 item 3): no file of src/ outside
   src/format/ reads or writes a protobuf field by its number (pb_get_*(msg, 20, ..),
   f.num == 5, a local reader such as nn_pu(p, 1, 0), an ali_buf_* writer with a
   number) or compares an op's type string with an op name (strcmp(n->type,
   "conv")): they read the typed params of src/format/nn_params.h, the names of
   src/format/mil_fields.h and the AL_NNK_* / AL_MILK_* kinds. FIELD_NUMBERS_LEFT
   and OP_NAMES_LEFT list the files not yet converted; a listed file that no
   longer needs its entry fails too, so the lists only shrink.
Prints one line per violation and closes with "N passed, M failed".
Usage: python3 tests/architecture.py [BUILD]   (from the repository root);
       python3 tests/architecture.py --add-al-api   adds AL_API where 5. finds it missing."""
import collections, os, re, subprocess, sys

STAGES = ["base", "format", "analysis", "interp", "rewrite", "report", "command", "cli"]
RANK = {s: i for i, s in enumerate(STAGES)}
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL", what)


def stage_files(st):
    """The files of src/STAGE/ and of its subfolders (one level), as paths relative to it."""
    top = os.path.join("src", st)
    out = []
    for f in sorted(os.listdir(top)):
        if os.path.isdir(os.path.join(top, f)):
            out += [os.path.join(f, g) for g in sorted(os.listdir(os.path.join(top, f)))]
        else:
            out.append(f)
    return out


def header_stage():
    where = {}
    for st in STAGES:
        for f in (os.path.basename(x) for x in stage_files(st)):
            if f.endswith((".h", ".def")):
                check(f not in where, f"header name {f} is unique across src/")
                where[f] = st
    return where


def includes():
    where = header_stage()
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    for st in STAGES:
        for f in stage_files(st):
            if not f.endswith((".c", ".h", ".def")):
                continue
            path = os.path.join("src", st, f)
            bad = []
            for no, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                m = inc.match(line)
                if m and m.group(1) in where and RANK[where[m.group(1)]] > RANK[st]:
                    bad.append(f"{path}:{no} includes {m.group(1)} of src/{where[m.group(1)]}/")
            check(not bad, "; ".join(bad) or path)


def symbols(build):
    lib = os.path.join(build, "libanelint.a")
    names = subprocess.run(["ar", "t", lib], capture_output=True, text=True, check=True).stdout.split()
    check(len(names) == len(set(names)), "object file names are unique across src/")
    defs, uses = {}, {}
    out = subprocess.run(["nm", lib], capture_output=True, text=True, check=True).stdout
    cur = None
    for line in out.splitlines():
        if line.endswith(".o:"):
            cur = line[:-1]
            defs[cur], uses[cur] = set(), set()
            continue
        p = line.split()
        if cur is None:
            continue
        if len(p) == 3 and p[1] in "TDBRCV":
            defs[cur].add(p[2])
        elif len(p) == 2 and p[0] == "U":
            uses[cur].add(p[1])
    owner = {s: o for o, ds in defs.items() for s in ds}
    graph = collections.defaultdict(set)
    for o, us in uses.items():
        for s in us:
            if s in owner and owner[s] != o:
                graph[o].add(owner[s])
    # Tarjan's strongly connected components, iteratively.
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]
    for root in defs:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1
        stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1
                    stack.append(w); on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                comps.append(comp)
    for c in comps:
        check(len(c) == 1, "a circle of library objects: " + " ".join(sorted(c)))
    analysis = {"al_model_check", "al_model_plan", "al_model_infer_shapes", "al_report_analyze"}
    for o in sorted(defs):
        # report_compare.o is report --evidence's analysis step (al_report_compare), run before the sinks like al_report_analyze
        if o.startswith("report") and o not in ("report_analyze.o", "report_compare.o"):
            ran = sorted(uses[o] & analysis)
            check(not ran, f"{o} only reads what it shows" + (f", but uses {', '.join(ran)}" if ran else ""))
    print(f"# {len(defs)} library objects, {sum(len(v) for v in graph.values())} file edges, "
          f"{sum(1 for c in comps if len(c) > 1)} circles")


def names(build):
    lib = os.path.join(build, "libanelint.a")
    out = subprocess.run(["nm", "-g", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    public = set(re.findall(r"\bal_\w+", open(os.path.join("include", "anelint.h")).read()))
    exported = sorted({p[2] for p in (l.split() for l in out.splitlines())
                       if len(p) == 3 and p[2].startswith("al_")})
    for name in exported:
        check(name in public, f"{name} is exported with the public prefix al_ but not declared "
                              "in include/anelint.h: an internal name starts with ali_")
    check(len(exported) > 0, "the library exports its public al_ API")


def blank(m):
    return re.sub(r"[^\n]", " ", m.group(0))


def public_decls(text):
    """Every function declaration at file scope of a header: (offset, text on one line)."""
    t = re.sub(r"/\*.*?\*/|//[^\n]*", blank, text, flags=re.S)
    t = re.sub(r"#ifdef __cplusplus.*?#endif", blank, t, flags=re.S)
    t = re.sub(r"(?m)^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", blank, t)
    out, depth, start = [], 0, None
    for i, c in enumerate(t):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            start = None
        elif depth == 0:
            if start is None and not c.isspace() and c != ";":
                start = i
            if c == ";" and start is not None:
                st = " ".join(t[start:i].split())
                if "(" in st and not st.startswith("typedef"):
                    out.append((start, st))
                start = None
    return out


def exports():
    found = public_decls(open(os.path.join("include", "anelint.h")).read())
    for _, st in found:
        check(st.startswith("AL_API "), f"include/anelint.h: '{st[:80]}' lacks AL_API "
                                        "(the shared library would not export it; "
                                        "python3 tests/architecture.py --add-al-api adds it)")
    check(len(found) > 50, f"include/anelint.h declares the public API ({len(found)} functions)")


# What a file of src/cli/ may include of the project: the CLI's own header and the public API.
THIN_INCLUDES = {"cli.h", "anelint.h"}


def thin_cli(build):
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    files = stage_files("cli")
    check(any(f.endswith(".c") for f in files), "src/cli/ has source files")
    for f in files:
        if not f.endswith((".c", ".h")):
            continue
        path = os.path.join("src", "cli", f)
        extra = [m.group(1) for m in map(inc.match, open(path, encoding="utf-8")) if m]
        extra = [h for h in extra if h not in THIN_INCLUDES]
        check(not extra, f"{path} includes only cli.h and anelint.h, not {', '.join(extra)}")
        if not f.endswith(".c"):
            continue
        obj = os.path.join(build, "src", "cli", f[:-2] + ".o")
        if not os.path.exists(obj):
            check(False, f"{obj} is built (make)")
            continue
        undef = subprocess.run(["nm", "-u", obj], capture_output=True, text=True, check=True).stdout.split()
        inner = sorted({u for u in undef if u.startswith("ali_")})
        check(not inner, f"{path} calls only the public API, not {', '.join(inner)}")


# Files still reading Core ML fields by number / comparing op-type strings (#32
# item 3): the interpreter's NN layers,
# probe's model writer.
FIELD_NUMBERS_LEFT = {
    "src/interp/interp_nn_ops.c",
}
OP_NAMES_LEFT = set()
FIELD_NUMBER = re.compile(
    r"\bpb_(?:get_\w+|has|count)\s*\(\s*(?:[^,;()]|\([^;()]*\))+,\s*\d+\s*[,)]"
    r"|\.num\s*[!=]=\s*\d"
    r"|\b(?:nn_p(?:u|i|b|f|ints|sub|air)|p[uibf]|pints|psub|pair|get_dims"
    r"|ali_buf_(?:len|varint|tag|float|fixed32|bytes|str|key)\w*)"
    r"\s*\(\s*(?:[^,;()]|\([^;()]*\))+,\s*\d+\s*[,)]"
    r"|\bnn_weight\s*\([^,;]+,[^,;]+,\s*\d+\s*,")  # the interpreter's weight reader: (l, msg, field, ..)
# src/rewrite/ files still writing fields by number / comparing op-type strings
# (#32 item 3), one set per side (converted in parallel; a listed clean file fails).
REWRITE_LEFT_NN = set()
REWRITE_LEFT_MIL = set()
REWRITE_LEFT = REWRITE_LEFT_NN | REWRITE_LEFT_MIL
OP_NAME = re.compile(r"\b(?:strcmp|ali_str_eq|is_type)\s*\(\s*(?:[\w\[\]]+(?:->|\.))*type\s*,\s*\"[A-Za-z_]\w*\"")


def fields_in_format():
    for st in STAGES:
        if st == "format":
            continue
        for f in stage_files(st):
            path = os.path.join("src", st, f)
            if not f.endswith((".c", ".h")):
                continue
            text = open(path, encoding="utf-8", errors="replace").read()
            if path.startswith("src/rewrite/"):  # one list for both regexes
                rewrite_left = REWRITE_LEFT
                hits = FIELD_NUMBER.findall(text) + OP_NAME.findall(text)
                if path in rewrite_left:
                    check(bool(hits), f"{path} no longer names a field number or an op-type string: "
                          "remove it from the list")
                else:
                    check(not hits, f"{path} names a field number or an op-type string: {hits[:3]}")
                continue
            for what, rx, left in (("a protobuf field by number", FIELD_NUMBER, FIELD_NUMBERS_LEFT),
                                   ("an op-type string", OP_NAME, OP_NAMES_LEFT)):
                hits = rx.findall(text)
                if path in left:
                    check(bool(hits), f"{path} no longer names {what}: remove it from the list")
                else:
                    check(not hits, f"{path} names {what} outside src/format/: {hits[:3]}")


def add_al_api():
    """Prefix AL_API to every declaration of include/anelint.h that lacks it."""
    path = os.path.join("include", "anelint.h")
    text = open(path).read()
    missing = [at for at, st in public_decls(text) if not st.startswith("AL_API ")]
    for at in reversed(missing):
        text = text[:at] + "AL_API " + text[at:]
    open(path, "w").write(text)
    print(f"AL_API added to {len(missing)} declarations of {path}")


# Rows of the pass table whose tests still have other names (tests/fix_mil.sh,
# tests/pass_nn_attention_split_heads.sh, ...): the ML Program passes of surgery_mil.c and
# passes/ and the attention pass, renamed with their files (#32 item 4).
PASS_TESTS_TODO = set()


def pass_tests():
    """7. every row of the pass table has a test named after the pass"""
    rows = re.findall(r'^\s*X\("([a-z0-9-]+)",', open(os.path.join("src", "rewrite", "surgery.c")).read(),
                      flags=re.M)
    check(len(rows) > 30, f"src/rewrite/surgery.c's pass table read ({len(rows)} rows)")
    for name in rows:
        stem = name.replace("-", "_")
        script, unit = f"tests/pass_{stem}.sh", f"tests/unit/test_pass_{stem}.c"
        found = os.path.exists(script) or os.path.exists(unit)
        if name in PASS_TESTS_TODO:
            if found:
                print(f"# {name} has {script if os.path.exists(script) else unit} now: "
                      "drop it from PASS_TESTS_TODO")
            continue
        check(found, f"the pass {name} has a test named after it ({script} or {unit})")


if __name__ == "__main__":
    if sys.argv[1:] == ["--add-al-api"]:
        add_al_api()
        sys.exit(0)
    includes()
    exports()
    fields_in_format()
    build = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BUILD", "build")
    symbols(build)
    names(build)
    thin_cli(build)
    pass_tests()
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
