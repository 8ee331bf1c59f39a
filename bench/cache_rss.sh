#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/cache_rss.sh: peak RSS and time of `anelint check` on the LLM-scale package
# (bench/mkllm.py: ~3 GB sparse weight.bin, 224 blobs) with weight.bin warm (all
# of it in the page cache: cat first) and cold (dropped before every run with
# posix_fadvise DONTNEED, timing.py --cold: no root needed), for one or more
# builds in turn (issue #34 item 2: the page cache's state must not change the
# peak RSS).
#   sh bench/cache_rss.sh [ANELINT...]      (default build/anelint; RUNS, BENCH_DIR)
set -u
here=$(dirname "$0")
[ $# -gt 0 ] || set -- build/anelint
dir=${BENCH_DIR:-build/bench/llm}
runs=${RUNS:-5}
pkg=$dir/llm_decoder_32x4096.mlpackage
if [ ! -f "$pkg/Data/com.apple.CoreML/model.mlmodel" ] || [ "$here/mkllm.py" -nt "$pkg/Data/com.apple.CoreML/model.mlmodel" ]; then
	python3 "$here/mkllm.py" "$dir" >/dev/null || exit 1
fi
echo "package: $pkg; runs: $runs; load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
printf '%-34s %-5s %10s %10s %10s\n' binary state "min ms" "median ms" "RSS MB"
row() {
	set -- "$1" "$2" $3
	printf '%-34s %-5s %10.1f %10.1f %10.1f\n' "$1" "$2" "$3" "$4" "$(echo "$5" | awk '{print $1 / 1024}')"
}
find "$pkg" -type f -exec cat {} + >/dev/null # warm: every page of the package cached
for b in "$@"; do
	row "$b" warm "$(python3 "$here/timing.py" --runs "$runs" -- "$b" check "$pkg")"
done
for b in "$@"; do
	row "$b" cold "$(python3 "$here/timing.py" --runs "$runs" --cold "$pkg" -- "$b" check "$pkg")"
done
