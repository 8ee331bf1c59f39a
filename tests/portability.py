#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/portability.py: no Linux-only (or glibc-only) call outside its feature check,
and nothing Apple's SDK rejects under -Werror.

anelint builds on Linux (glibc, musl) and macOS. A call that only some systems
have lives in src/base/platform.c, behind a feature check with a portable
fallback that `make PORTABLE=1` forces (and CI tests). This script reads every
C file and header under src/ and include/ (comments removed) and fails on such
a call, include or constant anywhere else. KNOWN lists the places that may
keep one, each with its reason.
Prints one line per violation and closes with "N passed, M failed".
Usage: python3 tests/portability.py   (from the repository root)."""
import os, re, sys

# name -> regular expression over code with comments blanked
LINUX_ONLY = {
    "renameat2": r"\brenameat2\b|\bRENAME_(EXCHANGE|NOREPLACE|WHITEOUT)\b",
    "copy_file_range": r"\bcopy_file_range\b",
    "loff_t/off64_t": r"\b(loff_t|off64_t|lseek64|pread64|pwrite64|mmap64)\b",
    "madvise": r"\bmadvise\s*\(|\bMADV_\w+",
    "/proc, /sys": r'"/(proc|sys)/',
    "qsort_r (argument order differs on macOS/BSD)": r"\bqsort_r\b",
    "sendfile/splice/tee": r"\b(sendfile|vmsplice|tee)\s*\(|(?<![\w.>])splice\s*\(",
    "Linux file calls": r"\b(memfd_create|statx|syncfs|fallocate|name_to_handle_at|O_TMPFILE|O_PATH|O_NOATIME)\b",
    "Linux process calls": r"\b(getrandom|sched_[gs]etaffinity|get_nprocs(_conf)?|sysinfo|prctl|"
                           r"pipe2|accept4|dup3|epoll_\w+|inotify_\w+|signalfd|eventfd|timerfd_\w+)\s*\(",
    "non-portable threads calls (_np: GNU-only or other signatures on macOS)":
        r"\bpthread_\w+_np\b|\bcpu_set_t\b|\bCPU_(SET|ZERO|ISSET|COUNT)\b|\bsyscall\s*\(",
    "Linux mmap flags": r"\b(MAP_POPULATE|MAP_HUGETLB|MAP_LOCKED|MAP_FIXED_NOREPLACE|mremap)\b",
    "glibc extensions": r"\b(program_invocation(_short)?_name|secure_getenv|strchrnul|mempcpy|"
                        r"malloc_usable_size|mallinfo2?|malloc_trim|bswap_(16|32|64)|error_at_line)\b",
    "Linux/glibc headers": r"#\s*include\s*<(linux/[^>]+|sys/(sysinfo|sendfile|prctl|epoll|inotify|vfs|statfs|"
                           r"syscall)\.h|malloc\.h|endian\.h|byteswap\.h|error\.h|features\.h|mcheck\.h)>",
    "struct stat's Linux time fields (macOS: st_mtimespec)": r"\bst_[acm]tim\b",
    "sprintf/vsprintf (deprecated in Apple's SDK: an error under -Werror; snprintf)":
        r"\b(v?sprintf)\s*\(",
    "dynamic loading (a system may have no loader: ali_dl_open, with the caller's fallback)":
        r"\bdl(open|sym|close|error)\s*\(|#\s*include\s*<dlfcn\.h>",
    "C11 threads (macOS has none: POSIX threads)": r"#\s*include\s*<threads\.h>|\b(thrd|mtx|cnd|tss)_[a-z]+\b",
}
# (file, name): where a match is allowed, and why
KNOWN = {
    ("src/base/platform.c", "*"): "the feature checks themselves",
}


def blank(m):
    return re.sub(r"[^\n]", " ", m.group(0))


def code_of(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", blank, text, flags=re.S)


def main():
    passed = failed = 0
    files = []
    for top in ("src", "include"):
        for d, _, names in os.walk(top):
            files += [os.path.join(d, n) for n in sorted(names) if n.endswith((".c", ".h", ".def"))]
    for path in sorted(files):
        code = code_of(open(path, encoding="utf-8", errors="replace").read())
        bad = []
        for name, rx in LINUX_ONLY.items():
            if (path, "*") in KNOWN or (path, name) in KNOWN:
                continue
            for m in re.finditer(rx, code):
                line = code.count("\n", 0, m.start()) + 1
                bad.append(f"{path}:{line}: {m.group(0).strip()} ({name}): move it behind a feature "
                           "check in src/base/platform.c, with a fallback")
        if bad:
            failed += 1
            print("FAIL", "\n     ".join(bad))
        else:
            passed += 1
    print(f"# {len(files)} files of src/ and include/ read for {len(LINUX_ONLY)} kinds of Linux-only call")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
