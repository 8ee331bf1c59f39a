#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tools/spdx.py: every source file of anelint opens with its licence, as one
SPDX line (LICENSE: MIT). The line is the first of the file, or the second after
a #! line. Run it to add the line where missing; --check lists files without
it and fails (tests/spdx.sh, so a new file cannot forget it).
Usage: python3 tools/spdx.py [--check]   (from the repository root)."""
import subprocess, sys

TAG = "SPDX-License-Identifier: MIT"
SKIP_DIRS = ("tests/data/", "tests/golden/", "tests/observed/", "tests/regress/", "docs/")


def comment(path):
    if path.endswith((".c", ".h", ".def")):
        return f"/* {TAG} */\n"
    if path.endswith((".py", ".sh")) or path in ("Makefile", ".ci/run") or path.endswith("/Makefile"):
        return f"# {TAG}\n"
    return None


def main():
    check = "--check" in sys.argv[1:]
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                           capture_output=True, text=True, check=True).stdout.split("\n")
    missing, seen = [], 0
    for path in sorted(f for f in files if f and not f.startswith(SKIP_DIRS)):
        line = comment(path)
        if line is None:
            continue
        try:
            text = open(path, encoding="utf-8").read()
        except (FileNotFoundError, IsADirectoryError):
            continue
        seen += 1
        head = text.split("\n", 2)
        if any(TAG in h for h in head[:2]):
            continue
        missing.append(path)
        if not check:
            if text.startswith("#!"):
                first, _, rest = text.partition("\n")
                text = first + "\n" + line + rest
            else:
                text = line + text
            open(path, "w", encoding="utf-8").write(text)
    if check:
        for p in missing:
            print(f"FAIL {p}: no '{TAG}' line (run python3 tools/spdx.py)")
        print(f"{seen - len(missing)} passed, {len(missing)} failed")
        return 1 if missing else 0
    print(f"added the SPDX line to {len(missing)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
