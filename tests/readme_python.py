#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""readme_python.py: the README's Python example runs, as tests/readme.py runs its shell ones.

    python3 tests/readme_python.py LIBANELINT README.md

Every ```python block of the README is run in a scratch directory, with python/ on the
path and the library LIBANELINT, once per model below: "Model.mlmodel" there is a copy
of the model (one that `fix` rewrites, one it leaves alone, so that both of fix's
answers meet the `verify` line after it). The block's free names (`traced_model`,
`example`) come from a prelude. Without coremltools and torch, which the README's first
lines use, the import drops coremltools and the `ct.convert` line becomes
`mlmodel = "Model.mlmodel"` (a path, which anelint takes as it takes an MLModel);
with both, a small traced network is converted as the README shows. A block passes
when it exits 0 and prints its "of the layers on the ANE" line. Prints "ok" or
"FAIL" per run and a closing "N passed, M failed, K skipped" line.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# (model under tests/data, its input x's shape): fix rewrites the first, not the second
MODELS = [("converted/upsample_x4_nearest__nn_ios13.mlmodel", (1, 8, 16, 16)),
          ("converted/dilated_conv__nn_ios13.mlmodel", (1, 8, 64, 64))]


def blocks(path):
    text = open(path, encoding="utf-8").read()
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.S | re.M)


def have(module):
    return subprocess.run([sys.executable, "-c", "import " + module], capture_output=True).returncode == 0


def prelude(shape, converter):
    lines = ["import numpy as _np", "",
             "class _Example:  # what the README's torch tensor offers: .numpy()",
             "    def numpy(self):",
             f"        return _np.random.default_rng(29).standard_normal({shape!r}).astype(_np.float32)", ""]
    if converter:  # a traced network whose input x has the README's shape
        lines += ["import torch",
                  "traced_model = torch.jit.trace(torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU()).eval(),",
                  "                               torch.rand(1, 3, 224, 224))",
                  "example = torch.rand(1, 3, 224, 224)", ""]
    else:
        lines += ["traced_model = None", "example = _Example()", ""]
    return "\n".join(lines) + "\n"


def without_converter(code):
    """The block with coremltools left out: the import, and ct.convert -> the model's path."""
    out = []
    for line in code.split("\n"):
        if re.match(r"^import .*\bcoremltools\b", line):
            names = [n.strip() for n in line[len("import "):].split(",")]
            names = [n for n in names if not n.startswith("coremltools")]
            if names:
                out.append("import " + ", ".join(names))
            continue
        m = re.match(r"^(\s*)(\w+)\s*=\s*ct\.convert\(", line)
        if m:
            out.append(f'{m.group(1)}{m.group(2)} = "Model.mlmodel"  # in place of ct.convert (no coremltools)')
            continue
        if re.search(r"\bct\.", line):
            raise SystemExit(f"readme_python.py: a coremltools line it cannot stand in for: {line}")
        out.append(line)
    return "\n".join(out)


def main():
    lib, readme = sys.argv[1], sys.argv[2]
    passed = failed = skipped = 0
    found = blocks(readme)
    if not found:
        print(f"FAIL {readme}: no ```python block")
        failed += 1
    converter = have("coremltools") and have("torch")
    if not converter:
        print("note: coremltools or torch is absent: the ct.convert line stands in for a tests/data model")
    env = dict(os.environ, ANELINT_LIBRARY=os.path.abspath(lib),
               PYTHONPATH=os.path.join(ROOT, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for k, code in enumerate(found):
        body = code if converter else without_converter(code)
        for model, shape in MODELS:
            tmp = tempfile.mkdtemp(prefix="anelint-readme-py-")
            try:
                shutil.copyfile(os.path.join(ROOT, "tests", "data", model), os.path.join(tmp, "Model.mlmodel"))
                with open(os.path.join(tmp, "example.py"), "w", encoding="utf-8") as f:
                    f.write(prelude(shape, converter) + body)
                r = subprocess.run([sys.executable, "example.py"], cwd=tmp, env=env, capture_output=True,
                                   text=True, timeout=120)
                name = f"README python block {k + 1} on {os.path.basename(model)}"
                if r.returncode == 0 and "of the layers on the ANE" in r.stdout:
                    passed += 1
                    print("ok   " + name)
                else:
                    failed += 1
                    print(f"FAIL {name} (exit {r.returncode}):\n{r.stdout}{r.stderr}")
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
