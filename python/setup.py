# SPDX-License-Identifier: MIT
"""Builds the anelint Python package: pure Python over libanelint (ctypes).
`pip install ./python` runs `make shared` in the repository above and bundles the
shared library it builds into anelint/_lib, so the installed package works
outside the source tree. The version is ANELINT_VERSION of include/anelint.h."""
import glob
import os
import re
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
HEADER = os.path.join(ROOT, "include", "anelint.h")


def version():
    m = re.search(r'#define ANELINT_VERSION "([^"]+)"', open(HEADER).read())
    return m.group(1)


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        subprocess.check_call(["make", "-C", ROOT, "-s", "shared"])
        libs = [p for p in glob.glob(os.path.join(ROOT, "build", "libanelint.so.*.*.*")) +
                glob.glob(os.path.join(ROOT, "build", "libanelint.*.dylib")) if not os.path.islink(p)]
        if not libs:
            raise RuntimeError("make shared built no libanelint in build/")
        dest = os.path.join(self.build_lib, "anelint", "_lib")
        os.makedirs(dest, exist_ok=True)
        for p in libs:
            shutil.copy2(p, dest)


setup(
    name="anelint",
    version=version(),
    description="Will my Core ML model run on the Apple Neural Engine? (bindings of libanelint)",
    license="MIT",
    packages=["anelint"],
    python_requires=">=3.8",
    extras_require={"run": ["numpy"]},
    cmdclass={"build_py": BuildWithLibrary},
    zip_safe=False,
)
