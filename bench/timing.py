#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""timing.py: run a command several times and report its wall time, for
bench/run.sh (POSIX sh has no sub-second clock).

    timing.py [--runs N] [--cold PATH]... -- COMMAND [ARG]...

Runs COMMAND once untimed (to warm the page cache), then N times (default 7)
with stdout and stderr sent to /dev/null. With --cold, the warm-up run is
skipped and before every run each PATH (a file, or every file under a
directory) is dropped from the page cache with posix_fadvise(DONTNEED), which
needs no root; pages another process keeps mapped, and any cache below the
kernel (disk, hypervisor), stay warm.

Prints one line: "MIN_MS MEDIAN_MS MAX_RSS_KB EXIT", where MAX_RSS_KB is the
largest peak RSS of the timed runs (from wait4, the figure GNU time's %M shows)
and EXIT is the exit status of the last run (128 + N for signal N).
"""
import os
import statistics
import sys
import time


def files_under(path):
    if os.path.isdir(path):
        for top, _, names in os.walk(path):
            for name in names:
                yield os.path.join(top, name)
    else:
        yield path


def evict(paths):
    for path in paths:
        for f in files_under(path):
            try:
                fd = os.open(f, os.O_RDONLY)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def run_once(argv):
    """Wall milliseconds, peak RSS (KB) and exit status of one run."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    ms = (time.perf_counter() - start) * 1000
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
    return ms, usage.ru_maxrss, code


def main(args):
    runs, cold = 7, []
    while args and args[0] != "--":
        if args[0] == "--runs" and len(args) > 1:
            runs = int(args[1])
            args = args[2:]
        elif args[0] == "--cold" and len(args) > 1:
            cold.append(args[1])
            args = args[2:]
        else:
            sys.exit(__doc__)
    argv = args[1:]
    if not argv or runs < 1:
        sys.exit(__doc__)
    if not cold:
        run_once(argv)
    times, rss, code = [], 0, 0
    for _ in range(runs):
        if cold:
            evict(cold)
        ms, kb, code = run_once(argv)
        times.append(ms)
        rss = max(rss, kb)
    print("%.1f %.1f %d %d" % (min(times), statistics.median(times), rss, code))


if __name__ == "__main__":
    main(sys.argv[1:])
