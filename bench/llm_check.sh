#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/llm_check.sh: `anelint check` on an LLM-scale package against `cat` of the
# same package, warm, in one script (bench/README.md "LLM-scale check").
#   sh bench/llm_check.sh [ANELINT]
# The package (bench/mkllm.py: a 32-block 4-bit palettized decoder, ~3 GB sparse
# weight.bin, > 20000 ops) is written once into $BENCH_DIR (default build/bench/llm),
# never committed. Targets: check warm median <= 100 ms, peak RSS <= 64 MB; the
# machine-readable outputs a CI job reads (`check --format json`, `--format sarif`,
# `plan --format json --os ios27`)
# within 2x of the text check's median and <= 64 MB; `--format html` is timed
# beside them (no target: a page for people).
set -u
here=$(dirname "$0")
anelint=${1:-build/anelint}
dir=${BENCH_DIR:-build/bench/llm}
runs=${RUNS:-7}
pkg=$dir/llm_decoder_32x4096.mlpackage
if [ ! -f "$pkg/Data/com.apple.CoreML/model.mlmodel" ] || [ "$here/mkllm.py" -nt "$pkg/Data/com.apple.CoreML/model.mlmodel" ]; then
	python3 "$here/mkllm.py" "$dir" || exit 1
fi
files=$(find "$pkg" -type f | sort)
echo "package: $pkg ($(du -sh --apparent-size "$pkg" | cut -f1) apparent, $(du -sh "$pkg" | cut -f1) on disk); load: $(cut -d' ' -f1-3 /proc/loadavg)"
# cat first: the package's pages are then warm for both
set -- $(python3 "$here/timing.py" --runs "$runs" -- cat $files)
cat_min=$1 cat_med=$2 cat_rss=$3
set -- $(python3 "$here/timing.py" --runs "$runs" -- "$anelint" check "$pkg")
chk="$*"
set -- $(python3 "$here/timing.py" --runs "$runs" -- "$anelint" check --format json "$pkg")
json="$*"
set -- $(python3 "$here/timing.py" --runs "$runs" -- "$anelint" check --format sarif "$pkg")
sarif="$*"
set -- $(python3 "$here/timing.py" --runs "$runs" -- "$anelint" check --format html "$pkg")
html="$*"
set -- $(python3 "$here/timing.py" --runs "$runs" -- "$anelint" plan --format json --os ios27 "$pkg")
planj="$*"
python3 - "$cat_min $cat_med $cat_rss" "$chk" "$json" "$sarif" "$html" "$planj" <<'PY'
import sys
rows = [[float(x) for x in a.split()] for a in sys.argv[1:]]
names = ["cat", "anelint check", "  --format json", "  --format sarif", "  --format html", "plan -f json"]
print("%-17s %10s %10s %10s %8s %8s" % ("", "min ms", "median ms", "RSS MB", "/ cat", "/ check"))
cat_med, chk_med = rows[0][1], rows[1][1]
for name, r in zip(names, rows):
    extra = "" if len(r) < 4 else "   (exit %d: 1 = findings)" % r[3]
    print("%-17s %10.1f %10.1f %10.1f %8.3f %8.3f%s" % (name, r[0], r[1], r[2] / 1024, r[1] / cat_med,
                                                         r[1] / chk_med, extra))
def met(ok):
    return "met" if ok else "NOT met"
chk = rows[1]
print("targets: check <= 100 ms (%s), peak RSS <= 64 MB (%s)" % (met(chk[1] <= 100), met(chk[2] / 1024 <= 64)))
for name, r in (("check --format json", rows[2]), ("check --format sarif", rows[3]),
                ("plan --format json --os ios27", rows[5])):
    print("         %s <= 2x check (%.2fx: %s), peak RSS <= 64 MB (%s)"
          % (name, r[1] / chk_med, met(r[1] <= 2 * chk_med), met(r[2] / 1024 <= 64)))
PY
