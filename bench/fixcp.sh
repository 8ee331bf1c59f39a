#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/fixcp.sh: `anelint fix` against `cp` on the ~500 MB synthetic models,
# both forms, warm, in one script (issue #21: fix <= 1.5x cp):
#
#   .mlmodel   tools/mkmodel.py big (as bench/run.sh): 2 NeuralNetwork rewrites;
#              fix writes a temporary file next to OUT, proves from it, renames
#   .mlpackage tests/data/crafted/fix_mil_fill.mlpackage with a 500 MB blob
#              appended to its weight.bin (no op reads it): the fill -> const
#              pass adds a blob, so weight.bin is rewritten (count, the input's
#              bytes, the new blob), the case the package writer copies
#
# Runs alternate (fix, cp, fix --fsync, cp + sync, ...) so that a change in the
# machine's load hits all; medians of RUNS (default 5). Every run writes a new
# file: the previous output is removed first, for fix as for cp (timing.py's
# untimed warm-up run would otherwise leave one; renaming over an existing file
# makes ext4 start writing the new one back at once (auto_da_alloc), which cp's
# truncate-and-write does not: about 0.1-0.5 s on 500 MB). Pairs:
# `fix` against `cp` (what the target names; neither fsyncs), and `fix --fsync`
# (each output flushed before its rename) against `cp` + `sync FILE`. Prints
# the load average before and after: compare ratios from one run only.
#
#   sh bench/fixcp.sh [ANELINT]     (BENCH_DIR, default build/bench; RUNS)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
ANELINT=${1:-$root/build/anelint}
RUNS=${RUNS:-5}
BENCH_DIR=${BENCH_DIR:-$root/build/bench}
TIMING="python3 $here/timing.py"
[ -x "$ANELINT" ] || { echo "fixcp: $ANELINT is not an executable (run make first)" >&2; exit 2; }
mkdir -p "$BENCH_DIR" || exit 2

nn=$BENCH_DIR/synthetic-500mb.mlmodel
if [ ! -s "$nn" ]; then
	python3 "$root/tools/mkmodel.py" big "$nn" --mb 500 >/dev/null || exit 2
fi
pkg=$BENCH_DIR/synthetic-500mb.mlpackage
if [ ! -s "$pkg/Data/com.apple.CoreML/weights/weight.bin" ]; then
	python3 - "$root/tests/data/crafted/fix_mil_fill.mlpackage" "$pkg" <<'EOF' || exit 2
import os, random, shutil, struct, sys
src, dst = sys.argv[1], sys.argv[2]
if os.path.isdir(dst):
    shutil.rmtree(dst)
shutil.copytree(src, dst)
w = os.path.join(dst, "Data", "com.apple.CoreML", "weights", "weight.bin")
b = bytearray(open(w, "rb").read())
count = struct.unpack_from("<I", b, 0)[0]
while len(b) % 64:
    b.append(0)
meta, size = len(b), 500 << 20
b += struct.pack("<IIQQ", 0xDEADBEEF, 1, size, meta + 64) + b"\0" * 40
struct.pack_into("<I", b, 0, count + 1)
rng = random.Random(21)
chunk = bytes(rng.getrandbits(8) for _ in range(1 << 16)) * 16  # 1 MiB, not all zeros
with open(w, "wb") as f:
    f.write(b)
    for _ in range(500):
        f.write(chunk)
EOF
fi

median() { # the MEDIAN_MS field of one timing.py line
	echo "$1" | awk '{ print $2 }'
}

# one case: name, fix output, cp output, the input
bench_case() {
	name=$1 fout=$2 cout=$3 in=$4
	rm -rf "$fout" "$cout"
	fx="" cx="" sx="" fsx=""
	i=0
	while [ $i -lt "$RUNS" ]; do
		fx="$fx $(median "$($TIMING --runs 1 -- sh -c "rm -rf '$fout'; '$ANELINT' fix '$in' -o '$fout'")")"
		cx="$cx $(median "$($TIMING --runs 1 -- sh -c "rm -rf '$cout'; cp -r '$in' '$cout'")")"
		fsx="$fsx $(median "$($TIMING --runs 1 -- sh -c "rm -rf '$fout'; '$ANELINT' fix --fsync '$in' -o '$fout'")")"
		if [ -d "$in" ]; then
			sx="$sx $(median "$($TIMING --runs 1 -- sh -c "rm -rf '$cout'; cp -r '$in' '$cout' && sync '$cout/Data/com.apple.CoreML/weights/weight.bin'")")"
		else
			sx="$sx $(median "$($TIMING --runs 1 -- sh -c "rm -f '$cout'; cp '$in' '$cout' && sync '$cout'")")"
		fi
		i=$((i + 1))
	done
	rm -rf "$fout" "$cout"
	echo "$name $fx | $cx | $sx | $fsx" | awk '
		function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
		{ k = 0; n1 = n2 = n3 = n4 = 0
		  for (i = 2; i <= NF; i++) { if ($i == "|") { k++; continue }
			if (k == 0) f[++n1] = $i; else if (k == 1) c[++n2] = $i; else if (k == 2) s[++n3] = $i
			else d[++n4] = $i }
		  mf = med(f, n1); mc = med(c, n2); ms = med(s, n3); md = med(d, n4)
		  printf "%-10s fix %6.0f ms   cp %6.0f ms   fix/cp %.2fx %s\n", $1, mf, mc, mf / mc,
			(mf / mc <= 1.5 ? "(<= 1.5x: met)" : "(> 1.5x: NOT met)")
		  printf "%-10s fix --fsync %6.0f ms   cp+sync %6.0f ms   ratio %.2fx\n", "", md, ms, md / ms }'
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
bench_case mlmodel "$BENCH_DIR/fixcp-out.mlmodel" "$BENCH_DIR/fixcp-cp.mlmodel" "$nn"
bench_case mlpackage "$BENCH_DIR/fixcp-out.mlpackage" "$BENCH_DIR/fixcp-cp.mlpackage" "$pkg"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
exit 0
