/* SPDX-License-Identifier: MIT */
/* platform.c: the only file that may call what one system has and POSIX does
 * not (tests/portability.sh fails the build on such calls anywhere else). Each
 * call sits behind a feature check, with a portable fallback that `make
 * PORTABLE=1` (-DAL_PORTABLE) forces, so the fallbacks are tested on Linux too:
 *   ali_rename_exchange  renameat2(RENAME_EXCHANGE), glibc >= 2.28; else ENOSYS
 *                        (the caller moves the old directory aside instead)
 *   ali_copy_file_range  copy_file_range (in-kernel copy), glibc >= 2.27; else
 *                        ENOSYS (the caller writes from its mapping)
 *   ali_map_cow          a private writable mapping of a file's bytes followed
 *                        by anonymous zero pages (MAP_ANONYMOUS, MAP_FIXED):
 *                        the file pages are shared until written; else NULL
 *                        (the caller copies the bytes into memory instead)
 *   ali_writeback_start  sync_file_range(SYNC_FILE_RANGE_WRITE): start writing a
 *                        file's dirty pages without waiting, so that a long copy
 *                        and the fsync after it overlap; else nothing
 *   ali_advise_random    posix_madvise(POSIX_MADV_RANDOM): POSIX, everywhere
 *   ali_advise_dontneed  madvise(MADV_DONTNEED) on Linux (drops clean file
 *                        pages at once); else posix_madvise, a hint
 *   ali_advise_huge      madvise(MADV_HUGEPAGE) on the 2 MB-aligned interior of
 *                        a large anonymous block (an arena chunk): one fault
 *                        per 2 MB instead of 512; else nothing
 *   ali_fault_count      getrusage's ru_minflt + ru_majflt on Linux; else
 *                        false (callers then assume pages may have come in)
 *   ali_sort_r           a heap sort with a context pointer: qsort_r's argument
 *                        order differs between glibc and macOS/BSD, so none.
 *   ali_dl_open/_sym     dlopen(RTLD_NOW | RTLD_LOCAL) and dlsym (<dlfcn.h>:
 *                        glibc, musl, macOS; -DAL_NO_DLOPEN or no header: NULL,
 *                        and the caller runs without the library: the
 *                        interpreter's own loops instead of OpenBLAS). */
#include "base.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#if !defined(AL_PORTABLE) && defined(__linux__) && defined(__GLIBC__) && \
	(__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 28))
#define HAVE_LINUX_CALLS 1
#include <malloc.h> /* mallopt */
#else
#define HAVE_LINUX_CALLS 0
#endif

/* Not Linux-only (POSIX), but not every system has a dynamic loader: the
 * interpreter loads BLAS at its first product, and without one uses its loops. */
#if !defined(AL_NO_DLOPEN) && defined(__has_include)
#if __has_include(<dlfcn.h>)
#define HAVE_DLOPEN 1
#include <dlfcn.h>
#endif
#endif
#ifndef HAVE_DLOPEN
#define HAVE_DLOPEN 0
#endif

/* Keep freed memory in the process instead of giving it back to the kernel
 * after every op: glibc trims the heap top above 128 KB and maps big blocks
 * afresh, so each interpreter run faulted its pages in again (half of a small
 * decoder step's time, bench/README.md). Elsewhere, and with the fallbacks
 * forced: the C library's defaults. */
void ali_keep_freed_memory(void)
{
#if HAVE_LINUX_CALLS && defined(M_TRIM_THRESHOLD) && defined(M_MMAP_THRESHOLD)
	mallopt(M_MMAP_THRESHOLD, 32 << 20); /* glibc's largest */
	mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

void al_keep_freed_memory(void)
{
	ali_keep_freed_memory();
}

bool ali_platform_portable(void)
{
	return !HAVE_LINUX_CALLS;
}

int ali_rename_exchange(const char *a, const char *b)
{
#if HAVE_LINUX_CALLS && defined(RENAME_EXCHANGE)
	return renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
#else
	(void)a;
	(void)b;
	errno = ENOSYS;
	return -1;
#endif
}

void *ali_map_cow(int fd, size_t n, size_t extra)
{
#if HAVE_LINUX_CALLS && defined(MAP_ANONYMOUS)
	if (n == 0 || extra > SIZE_MAX - n) {
		errno = EINVAL;
		return NULL;
	}
	void *p = mmap(NULL, n + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* the file over the start of it: its last page's bytes past n are zeros
	 * (POSIX), private and writable like the anonymous pages after it */
	if (mmap(p, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
		int e = errno;
		munmap(p, n + extra);
		errno = e;
		return NULL;
	}
	return p;
#else
	(void)fd;
	(void)n;
	(void)extra;
	errno = ENOSYS;
	return NULL;
#endif
}

void ali_writeback_start(int fd)
{
#if HAVE_LINUX_CALLS && defined(SYNC_FILE_RANGE_WRITE)
	(void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
	(void)fd;
#endif
}

void ali_unmap_cow(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

long long ali_copy_file_range(int in_fd, uint64_t off, int out_fd, size_t n)
{
#if HAVE_LINUX_CALLS
	loff_t o = (loff_t)off;
	return (long long)copy_file_range(in_fd, &o, out_fd, NULL, n, 0);
#else
	(void)in_fd;
	(void)off;
	(void)out_fd;
	(void)n;
	errno = ENOSYS;
	return -1;
#endif
}

void ali_advise_random(void *p, size_t n)
{
	(void)posix_madvise(p, n, POSIX_MADV_RANDOM);
}

void ali_advise_dontneed(void *p, size_t n)
{
#if HAVE_LINUX_CALLS && defined(MADV_DONTNEED)
	(void)madvise(p, n, MADV_DONTNEED);
#else
	(void)posix_madvise(p, n, POSIX_MADV_DONTNEED);
#endif
}

void ali_advise_huge(void *p, size_t n)
{
#if HAVE_LINUX_CALLS && defined(MADV_HUGEPAGE)
	const uintptr_t huge = (uintptr_t)2 << 20;
	uintptr_t a = (uintptr_t)p, b = a + n;
	if (b < a)
		return;
	a = (a + huge - 1) & ~(huge - 1);
	b &= ~(huge - 1);
	if (b > a)
		(void)madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
	(void)p;
	(void)n;
#endif
}

bool ali_fault_count(uint64_t *out)
{
#if HAVE_LINUX_CALLS
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return false;
	*out = (uint64_t)ru.ru_minflt + (uint64_t)ru.ru_majflt;
	return true;
#else
	(void)out;
	return false;
#endif
}

static void swap_bytes(unsigned char *a, unsigned char *b, size_t size)
{
	while (size--) {
		unsigned char t = *a;
		*a++ = *b;
		*b++ = t;
	}
}

static void sift_down(unsigned char *v, size_t root, size_t n, size_t size,
		      int (*cmp)(const void *, const void *, void *), void *ctx)
{
	for (;;) {
		size_t child = 2 * root + 1;
		if (child >= n)
			return;
		if (child + 1 < n && cmp(v + child * size, v + (child + 1) * size, ctx) < 0)
			child++;
		if (cmp(v + root * size, v + child * size, ctx) >= 0)
			return;
		swap_bytes(v + root * size, v + child * size, size);
		root = child;
	}
}

void ali_sort_r(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *),
		void *ctx)
{
	unsigned char *v = base;
	if (n < 2)
		return;
	for (size_t i = n / 2; i-- > 0;)
		sift_down(v, i, n, size, cmp, ctx);
	for (size_t end = n - 1; end > 0; end--) {
		swap_bytes(v, v + end * size, size);
		sift_down(v, 0, end, size, cmp, ctx);
	}
}

void *ali_dl_open(const char *name)
{
#if HAVE_DLOPEN
	return name && *name ? dlopen(name, RTLD_NOW | RTLD_LOCAL) : NULL;
#else
	(void)name;
	return NULL;
#endif
}

ali_dl_fn ali_dl_sym(void *lib, const char *name)
{
	ali_dl_fn fn = NULL;
#if HAVE_DLOPEN
	void *p = lib ? dlsym(lib, name) : NULL;
	/* POSIX guarantees a function's address survives the trip through void *;
	 * ISO C has no conversion between the two, so copy the bits */
	_Static_assert(sizeof p == sizeof fn, "function and object pointers differ in size");
	if (p)
		memcpy(&fn, &p, sizeof fn);
#else
	(void)lib;
	(void)name;
#endif
	return fn;
}

void ali_dl_close(void *lib)
{
#if HAVE_DLOPEN
	if (lib)
		(void)dlclose(lib);
#else
	(void)lib;
#endif
}
