#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/llm_check.sh: `anelint check` on an LLM-scale package against `cat` of the
# same package, warm, in one script (bench/README.md "LLM-scale check").
#   sh bench/llm_check.sh [ANELINT]
# The package (bench/mkllm.py: a 32-block 4-bit palettized decoder, ~3 GB sparse
# weight.bin, > 20000 ops) is written once into $BENCH_DIR (default build/bench/llm),
# never committed. Targets: check warm median <= 100 ms, peak RSS <= 64 MB.
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
chk_min=$1 chk_med=$2 chk_rss=$3 chk_exit=$4
python3 - "$cat_min" "$cat_med" "$cat_rss" "$chk_min" "$chk_med" "$chk_rss" "$chk_exit" <<'PY'
import sys
cmin, cmed, crss, amin, amed, arss, aexit = sys.argv[1:]
cmed, amed, arss = float(cmed), float(amed), float(arss) / 1024
print("%-14s %10s %10s %10s" % ("", "min ms", "median ms", "RSS MB"))
print("%-14s %10.1f %10.1f %10.1f" % ("cat", float(cmin), cmed, float(crss) / 1024))
print("%-14s %10.1f %10.1f %10.1f   (exit %s: 1 = findings)" % ("anelint check", float(amin), amed, arss, aexit))
print("check / cat: %.3f; targets: check <= 100 ms (%s), peak RSS <= 64 MB (%s)"
      % (amed / cmed, "met" if amed <= 100 else "NOT met", "met" if arss <= 64 else "NOT met"))
PY
