#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/startup.sh: what a short command costs from exec to exit, for one or more
# builds of anelint run alternately (issue #34 item 4: BLAS loaded only by `run`).
#   sh bench/startup.sh [ANELINT...]      (default build/anelint)
# Each round runs `check MODEL` once per binary, in turn, RUNS rounds (default 200),
# so load on a shared machine falls on all of them alike. Prints per binary the
# median and mean wall time and the median CPU time (user + system of the process
# and its threads: OpenBLAS's workers spin there), then the peak RSS of one more
# run each from GNU time (wait4's figure for a child forked from Python starts at
# Python's own RSS, ~10 MB, which hides a small command's).
# MODEL: $MODEL, default the bundled tests/data/converted/pool_k15_s3__nn_ios13.mlmodel.
set -u
[ $# -gt 0 ] || set -- build/anelint
model=${MODEL:-tests/data/converted/pool_k15_s3__nn_ios13.mlmodel}
echo "model: $model; runs: ${RUNS:-200}; load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
python3 - "${RUNS:-200}" "$model" "$@" <<'PY'
import os, statistics, sys, time
runs, model, bins = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
wall = {b: [] for b in bins}
cpu = {b: [] for b in bins}
null = os.open(os.devnull, os.O_WRONLY)
for _ in range(runs + 1):  # the first round warms the page cache, untimed
    for b in bins:
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os.dup2(null, 1)
            os.dup2(null, 2)
            try:
                os.execv(b, [b, "check", model])
            finally:
                os._exit(127)
        _, status, ru = os.wait4(pid, 0)
        ms = (time.perf_counter() - t0) * 1000
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 127:
            sys.exit("%s: could not run" % b)
        if _ == 0:
            continue
        wall[b].append(ms)
        cpu[b].append((ru.ru_utime + ru.ru_stime) * 1000)
print("%-34s %10s %10s %12s" % ("binary", "median ms", "mean ms", "CPU med ms"))
for b in bins:
    print("%-34s %10.2f %10.2f %12.2f" % (b, statistics.median(wall[b]), statistics.mean(wall[b]),
                                          statistics.median(cpu[b])))
PY
if [ -x /usr/bin/time ]; then
	for b in "$@"; do
		/usr/bin/time -f "%M" -o "${TMPDIR:-/tmp}/startup.$$" "$b" check "$model" >/dev/null 2>&1
		echo "$b: peak RSS $(tail -n 1 "${TMPDIR:-/tmp}/startup.$$" | awk '{printf "%.1f MB", $1 / 1024}')"
	done
	rm -f "${TMPDIR:-/tmp}/startup.$$"
fi
