/* SPDX-License-Identifier: MIT */
/* test_base.c: the shared utilities of src/base: the one string hash (FNV-1a
 * 64 test vectors), the little-endian reads, ali_open_regular refusing FIFOs
 * without blocking, the atomic writer (modes from the umask, nothing left on
 * failure, directories renamed whole, a package replaced), and copies that
 * keep holes (and, forced dense, the budget on sparse inputs), down to the
 * package writer of `fix`. The platform calls (src/base/platform.c) in both
 * builds: `make check-portable` runs this file with their fallbacks forced. */
#include "testutil.h"

#include "anelint.h"
#include "base.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static char root[] = "/tmp/anelint_base_XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(root) ? 0 : -1;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return flag == FTW_DP ? rmdir(p) : unlink(p);
}

static int teardown(void **state)
{
	(void)state;
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

static const char *at(const char *rel)
{
	static char buf[2][4096];
	static int k;
	k ^= 1;
	snprintf(buf[k], sizeof buf[k], "%s/%s", root, rel);
	return buf[k];
}

/* Entries of dir other than . and .. */
static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

/* Arena memory comes zeroed (chunks are calloc'd once, not cleared per
 * allocation) and 16-aligned, through the chunks growing past 2 MB (advised
 * for huge pages): 30 MB in blocks of 1 byte to 300 KB, each checked all zero
 * and then dirtied, so a block handed out twice or left unzeroed shows. */
static void test_arena(void **state)
{
	(void)state;
	struct al_arena a = {0};
	size_t total = 0, sizes[] = {1, 17, 200, 4096, 70000, 300000, 33};
	for (size_t i = 0; total < 30u << 20; i++) {
		size_t n = sizes[i % (sizeof sizes / sizeof sizes[0])];
		unsigned char *p = ali_arena_alloc(&a, n);
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % 16, 0);
		for (size_t k = 0; k < n; k++)
			if (p[k]) {
				fail_msg("block %zu byte %zu not zero", i, k);
			}
		memset(p, 0xff, n);
		total += n;
	}
	assert_false(a.failed);
	assert_true(a.used >= total && a.cap >= a.used);
	ali_arena_free(&a);
	unsigned char *big = malloc(6u << 20); /* advice on any block is only a hint */
	assert_non_null(big);
	ali_advise_huge(big, 6u << 20);
	ali_advise_huge(big + 1, 100);
	memset(big, 1, 6u << 20);
	assert_int_equal(big[(6u << 20) - 1], 1);
	free(big);
}

static void test_hash(void **state)
{
	(void)state;
	/* FNV-1a 64 steps from anelint's offset basis (see base.h: a tenth of
	 * the standard one, kept so that seeds per input name do not change) */
	const uint64_t prime = UINT64_C(1099511628211);
	assert_true(ali_hash_str("") == UINT64_C(1469598103934665603));
	assert_true(ali_hash_str(NULL) == UINT64_C(1469598103934665603));
	assert_true(ali_hash_str("a") == ((UINT64_C(1469598103934665603) ^ 'a') * prime));
	assert_true(ali_hash_str("ab") == ((((UINT64_C(1469598103934665603) ^ 'a') * prime) ^ 'b') * prime));
	assert_true(ali_hash_bytes(AL_HASH_INIT, "foobar", 6) == ali_hash_str("foobar"));
	/* bytes past 0x7f hash as unsigned */
	assert_true(ali_hash_str("\xff") == ali_hash_bytes(AL_HASH_INIT, "\xff", 1));
	assert_true(ali_hash_str("x") != ali_hash_str("y"));
}

/* The one hash table: 100,000 names found by name, the same hash holding several
 * items in turn, growth from empty, misses; a lookup walks only its own hash. */
static const char *const *names_for_eq;
static bool name_eq(size_t item, const void *key, void *ctx)
{
	(void)ctx;
	return strcmp(names_for_eq[item], key) == 0;
}

static void test_hashtab(void **state)
{
	(void)state;
	enum { N = 100000 };
	char **names = calloc(N, sizeof *names);
	assert_non_null(names);
	struct ali_hashtab t = {0};
	assert_true(ali_hashtab_find(&t, 1, NULL, NULL, NULL) == SIZE_MAX); /* empty */
	for (size_t i = 0; i < N; i++) {
		char buf[32];
		snprintf(buf, sizeof buf, "L%zu", i);
		names[i] = strdup(buf);
		assert_true(ali_hashtab_add(&t, ali_hash_str(names[i]), i));
	}
	names_for_eq = (const char *const *)names;
	assert_int_equal(t.n, N);
	assert_true(t.cap >= 2 * t.n);
	for (size_t i = 0; i < N; i += 997)
		assert_int_equal(ali_hashtab_find(&t, ali_hash_str(names[i]), name_eq, names[i], NULL), i);
	assert_true(ali_hashtab_find(&t, ali_hash_str("L-1"), name_eq, "L-1", NULL) == SIZE_MAX);
	/* one hash, three items: each in turn, in the order added, then SIZE_MAX */
	struct ali_hashtab u = {0};
	assert_true(ali_hashtab_add(&u, 42, 7) && ali_hashtab_add(&u, 42, 8) && ali_hashtab_add(&u, 43, 9) &&
		    ali_hashtab_add(&u, 42, 10));
	size_t cur = 0;
	assert_int_equal(ali_hashtab_next(&u, 42, &cur, NULL, NULL, NULL), 7);
	assert_int_equal(ali_hashtab_next(&u, 42, &cur, NULL, NULL, NULL), 8);
	assert_int_equal(ali_hashtab_next(&u, 42, &cur, NULL, NULL, NULL), 10);
	assert_true(ali_hashtab_next(&u, 42, &cur, NULL, NULL, NULL) == SIZE_MAX);
	assert_int_equal(ali_hashtab_find(&u, 43, NULL, NULL, NULL), 9);
	assert_false(ali_hashtab_add(&u, 1, SIZE_MAX)); /* not an item: SIZE_MAX means none */
	/* cleared: no items, the room kept (a name map reused per function) */
	size_t room = u.cap;
	ali_hashtab_clear(&u);
	assert_int_equal(u.n, 0);
	assert_int_equal(u.cap, room);
	assert_true(ali_hashtab_find(&u, 43, NULL, NULL, NULL) == SIZE_MAX);
	/* the shared eq over an array of names: ctx is the array */
	assert_int_equal(ali_hashtab_find(&t, ali_hash_str(names[5]), ali_hashtab_name_eq, names[5], names), 5);
	assert_true(ali_hashtab_find(&t, ali_hash_str("L5x"), ali_hashtab_name_eq, "L5x", names) == SIZE_MAX);
	ali_hashtab_free(&u);
	ali_hashtab_free(&t);
	assert_null(t.slot);
	for (size_t i = 0; i < N; i++)
		free(names[i]);
	free(names);
}

static void test_rd(void **state)
{
	(void)state;
	const uint8_t b[8] = {0xef, 0xbe, 0xad, 0xde, 0x01, 0x02, 0x03, 0x84};
	assert_true(al_rd32le(b) == 0xdeadbeefu);
	assert_true(al_rd64le(b) == UINT64_C(0x84030201deadbeef));
}

static void test_open_regular(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	int fd = 7;
	assert_int_equal(mkfifo(at("fifo"), 0600), 0);
	time_t t0 = time(NULL);
	assert_int_equal(ali_open_regular(at("fifo"), "shown.fifo", &fd, NULL, d), AL_E_IO);
	assert_true(time(NULL) - t0 < 3); /* refused at once, not blocked in open() */
	assert_int_equal(fd, -1);
	assert_int_equal(al_diags_count(d), 1);
	assert_string_equal(al_diags_get(d, 0)->file, "shown.fifo");
	assert_non_null(strstr(al_diags_get(d, 0)->msg, "not a regular file"));
	assert_int_equal(ali_open_regular(root, NULL, &fd, NULL, d), AL_E_IO); /* a directory */
	assert_int_equal(ali_open_regular(at("absent"), NULL, &fd, NULL, d), AL_E_IO);
	FILE *f = fopen(at("plain"), "w");
	fputs("abc", f);
	fclose(f);
	struct stat st;
	assert_int_equal(ali_open_regular(at("plain"), NULL, &fd, &st, d), AL_OK);
	assert_int_equal(st.st_size, 3);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0); /* cleared again */
	char buf[4];
	assert_int_equal(read(fd, buf, 4), 3);
	close(fd);
	/* the user rules loader goes through it: a FIFO fails at once, exit-4 kind */
	al_user_rules *u = NULL;
	assert_int_equal(al_user_rules_load(at("fifo"), &u, d), AL_E_IO);
	assert_null(u);
	unlink(at("fifo"));
	unlink(at("plain"));
	al_diags_free(d);
}

static bool fill_abc(int fd, void *ctx)
{
	(void)ctx;
	return ali_write_all(fd, "abc", 3);
}

static bool fill_fail(int fd, void *ctx)
{
	(void)ctx;
	(void)ali_write_all(fd, "partial", 7);
	errno = ENOSPC;
	return false;
}

static void test_write_atomic(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	mode_t old = umask(027);
	assert_int_equal(ali_write_atomic(at("out.txt"), fill_abc, NULL, d), AL_OK);
	struct stat st;
	assert_int_equal(stat(at("out.txt"), &st), 0);
	assert_int_equal(st.st_size, 3);
	assert_int_equal(st.st_mode & 0777, 0640); /* 0666 & ~027, not mkstemp's 0600 */
	/* a failed fill leaves the old file and no temporary */
	assert_int_equal(ali_write_atomic(at("out.txt"), fill_fail, NULL, d), AL_E_IO);
	assert_int_equal(stat(at("out.txt"), &st), 0);
	assert_int_equal(st.st_size, 3);
	assert_int_equal(count_entries(root), 1);
	/* a directory: made whole under a temporary name, 0777 & ~umask */
	struct al_atomic a;
	assert_int_equal(ali_atomic_begin(&a, at("dir/"), true, d), AL_OK);
	char p[4200];
	snprintf(p, sizeof p, "%s/x", a.tmp);
	FILE *f = fopen(p, "w");
	fclose(f);
	assert_int_equal(stat(at("dir"), &st), -1);
	assert_int_equal(ali_atomic_commit(&a, d), AL_OK);
	assert_int_equal(stat(at("dir"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0750);
	assert_int_equal(count_entries(at("dir")), 1);
	/* an existing directory is replaced only when asked */
	assert_int_equal(ali_atomic_begin(&a, at("dir"), true, d), AL_OK);
	assert_int_equal(ali_atomic_commit(&a, d), AL_E_IO); /* rename over a non-empty dir */
	assert_int_equal(count_entries(at("dir")), 1);
	assert_int_equal(count_entries(root), 2); /* out.txt, dir: the temporary is gone */
	assert_int_equal(ali_atomic_begin(&a, at("dir"), true, d), AL_OK);
	a.replace = true;
	assert_int_equal(ali_atomic_commit(&a, d), AL_OK);
	assert_int_equal(count_entries(at("dir")), 0); /* the new, empty one */
	assert_int_equal(count_entries(root), 2);       /* the old one removed */
	/* abort removes a whole temporary tree; a zeroed struct owns nothing */
	assert_int_equal(ali_atomic_begin(&a, at("gone"), true, d), AL_OK);
	snprintf(p, sizeof p, "%s/sub", a.tmp);
	assert_int_equal(mkdir(p, 0777), 0);
	ali_atomic_abort(&a);
	ali_atomic_abort(&a);
	struct al_atomic z = {0};
	ali_atomic_abort(&z);
	assert_true(fcntl(0, F_GETFD) != -1 || errno != EBADF); /* stdin not closed */
	assert_int_equal(count_entries(root), 2);
	umask(old);
	al_diags_free(d);
	unlink(at("out.txt"));
	rmdir(at("dir"));
}

/* ali_sort_r with its context, and the two calls with fallbacks: the build
 * says which it has (-DAL_PORTABLE: ENOSYS, and the callers fall back). */
static int cmp_by_key(const void *a, const void *b, void *ctx)
{
	const int *key = ctx;
	int x = key[*(const size_t *)a], y = key[*(const size_t *)b];
	return (x > y) - (x < y);
}

static void test_platform(void **state)
{
	(void)state;
	int key[] = {5, -1, 9, 0, 5, 3, -7, 2, 8, 1, 4};
	size_t n = sizeof key / sizeof key[0], order[sizeof key / sizeof key[0]];
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	ali_sort_r(order, n, sizeof *order, cmp_by_key, key);
	for (size_t i = 1; i < n; i++)
		assert_true(key[order[i - 1]] <= key[order[i]]);
	ali_sort_r(order, 0, sizeof *order, cmp_by_key, key); /* nothing to sort */
#ifdef AL_PORTABLE
	assert_true(ali_platform_portable());
#endif
	/* page faults counted (ali_model_trim skips madvise until some were taken):
	 * touching 16 fresh anonymous pages takes at least one */
	uint64_t f0 = 0, f1 = 0;
	if (ali_fault_count(&f0)) {
		assert_false(ali_platform_portable());
		size_t len = 16 * (size_t)sysconf(_SC_PAGESIZE);
		unsigned char *pg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert_true(pg != MAP_FAILED);
		for (size_t i = 0; i < len; i += (size_t)sysconf(_SC_PAGESIZE))
			pg[i] = 1;
		assert_true(ali_fault_count(&f1));
		assert_true(f1 > f0);
		munmap(pg, len);
	} else {
		assert_true(ali_platform_portable());
	}
	/* two directories swapped whole, or ENOSYS where the system cannot */
	assert_int_equal(mkdir(at("sa"), 0777), 0);
	assert_int_equal(mkdir(at("sb"), 0777), 0);
	assert_int_equal(mkdir(at("sb/inner"), 0777), 0);
	int rc = ali_rename_exchange(at("sa"), at("sb"));
	if (ali_platform_portable()) {
		assert_int_equal(rc, -1);
		assert_int_equal(errno, ENOSYS);
		assert_int_equal(count_entries(at("sb")), 1);
	} else {
		assert_int_equal(rc, 0);
		assert_int_equal(count_entries(at("sa")), 1);
		assert_int_equal(count_entries(at("sb")), 0);
	}
	/* an in-kernel copy of 5 bytes from offset 2, or ENOSYS */
	int in = open(at("cfr_in"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	int out = open(at("cfr_out"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(in >= 0 && out >= 0);
	assert_true(ali_write_all(in, "0123456789", 10));
	long long k = ali_copy_file_range(in, 2, out, 5);
	if (ali_platform_portable()) {
		assert_int_equal(k, -1);
		assert_int_equal(errno, ENOSYS);
	} else {
		assert_int_equal(k, 5);
		char buf[8] = {0};
		assert_int_equal(pread(out, buf, sizeof buf, 0), 5);
		assert_string_equal(buf, "23456");
	}
	close(in);
	close(out);
	unlink(at("cfr_in"));
	unlink(at("cfr_out"));
	rmdir(at("sa/inner"));
	rmdir(at("sb/inner"));
	rmdir(at("sa"));
	rmdir(at("sb"));
}

/* ali_map_cow: the file's bytes then zeros, writable without touching the
 * file; NULL with ENOSYS in the portable build (the caller copies instead).
 * ali_copy_range of a dense file: in the kernel or through the buffer, the
 * same bytes either way, at the output's position. */
static void test_map_cow(void **state)
{
	(void)state;
	int fd = open(at("cow.bin"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	char data[10000];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (char)('a' + i % 26);
	assert_true(ali_write_all(fd, data, sizeof data));
	uint8_t *p = ali_map_cow(fd, sizeof data, 5000);
	if (ali_platform_portable()) {
		assert_null(p);
		assert_int_equal(errno, ENOSYS);
	} else {
		assert_non_null(p);
		assert_memory_equal(p, data, sizeof data);
		for (size_t i = sizeof data; i < sizeof data + 5000; i++)
			assert_int_equal(p[i], 0);
		p[0] = 'Z';               /* a file page, copied on write */
		p[sizeof data + 10] = 'Y'; /* past the file's end: the last file page or an anonymous one */
		p[sizeof data + 4999] = 'X';
		char back[4] = {0};
		assert_int_equal(pread(fd, back, 1, 0), 1);
		assert_int_equal(back[0], 'a'); /* the file is unchanged */
		struct stat st;
		assert_int_equal(fstat(fd, &st), 0);
		assert_int_equal(st.st_size, (off_t)sizeof data);
		ali_unmap_cow(p, sizeof data + 5000);
	}
	errno = 0;
	assert_null(ali_map_cow(fd, 0, 10)); /* nothing to map */
	int out = open(at("cow_copy.bin"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(out >= 0);
	assert_true(ali_write_all(out, "HDR", 3));
	assert_true(ali_copy_range(fd, 7, sizeof data - 7, out));
	ali_writeback_start(out); /* a hint: no effect on the bytes */
	char got[sizeof data];
	assert_int_equal(pread(out, got, sizeof got, 0), (ssize_t)(sizeof data - 4));
	assert_memory_equal(got, "HDR", 3);
	assert_memory_equal(got + 3, data + 7, sizeof data - 7);
	bool was = ali_copy_force_dense(true); /* a short input is an error (the dense path) */
	assert_false(ali_copy_range(fd, sizeof data - 2, 10, out));
	ali_copy_force_dense(was);
	close(out);
	close(fd);
	unlink(at("cow.bin"));
	unlink(at("cow_copy.bin"));
}

/* A sparse file: `size` bytes, data only at 0 and in the middle. */
static void make_sparse(const char *path, off_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "head", 4, 0), 4);
	assert_int_equal(pwrite(fd, "mid", 3, size / 2), 3);
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
}

static bool same_bytes_at(int fd, off_t off, const char *want)
{
	char buf[8] = {0};
	size_t n = strlen(want);
	return pread(fd, buf, n, off) == (ssize_t)n && memcmp(buf, want, n) == 0;
}

static void test_copy_holes(void **state)
{
	(void)state;
	const off_t size = 8 << 20; /* 8 MiB apparent, a few KB on disk */
	make_sparse(at("sparse.bin"), size);
	int in = open(at("sparse.bin"), O_RDONLY);
	struct stat st;
	assert_int_equal(fstat(in, &st), 0);
	if (!ali_file_is_sparse(&st)) {
		close(in);
		skip(); /* a file system without holes */
	}
	bool was = ali_copy_force_dense(false);
#ifdef AL_NO_SEEK_HOLE
	assert_false(ali_copy_keeps_holes()); /* the build flag forces the plain copy */
	assert_true(was);
#elif defined(SEEK_DATA) && defined(SEEK_HOLE)
	assert_true(ali_copy_keeps_holes()); /* and here the system has them */
#endif
	for (int dense = 0; dense < 2; dense++) {
		if (!dense && !ali_copy_keeps_holes())
			continue; /* built with -DAL_NO_SEEK_HOLE */
		ali_copy_force_dense(dense);
		assert_int_equal(ali_copy_keeps_holes(), !dense);
		int out = open(at("copy.bin"), O_RDWR | O_CREAT | O_TRUNC, 0644);
		assert_true(out >= 0);
		assert_true(ali_write_all(out, "HDR", 3));
		assert_true(ali_copy_range(in, 0, (uint64_t)size, out));
		struct stat o;
		assert_int_equal(fstat(out, &o), 0);
		assert_int_equal(o.st_size, size + 3);
		assert_true(same_bytes_at(out, 3, "head"));
		assert_true(same_bytes_at(out, 3 + size / 2, "mid"));
		if (dense)
			assert_true((uint64_t)o.st_blocks * 512 >= (uint64_t)size);
		else
			assert_true((uint64_t)o.st_blocks * 512 < (uint64_t)size / 16);
		close(out);
		/* the budget: a dense copy of a sparse input past it is refused
		 * (the input's stat made 1 GiB apparent: nothing is written here) */
		struct stat big = st;
		big.st_size = (off_t)1 << 30;
		assert_true(ali_copy_dense_ok(&big, (uint64_t)big.st_size) == !dense);
		assert_true(ali_copy_dense_ok(&st, (uint64_t)size)); /* 8 MiB: within budget */
	}
	/* a short input is an error, not a silent truncation */
	int out = open(at("copy.bin"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	ali_copy_force_dense(true);
	assert_false(ali_copy_range(in, (uint64_t)size - 2, 10, out));
	close(out);
	ali_copy_force_dense(was);
	struct stat dense_in = st;
	dense_in.st_size = (off_t)1 << 30;
	dense_in.st_blocks = (blkcnt_t)(dense_in.st_size / 512);
	assert_true(ali_copy_dense_ok(&dense_in, (uint64_t)dense_in.st_size)); /* a dense input: no budget */
	close(in);
	unlink(at("sparse.bin"));
	unlink(at("copy.bin"));
}

/* `fix`'s package writer on a package whose weight.bin is 1 GB apparent, a
 * few KB on disk: holes kept, or (copies forced dense) refused, nothing left. */
static void test_sparse_package(void **state)
{
	(void)state;
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'",
		 fixture("converted/dilated_conv__mlp_ios17_fp16.mlpackage"), at("sp.mlpackage"));
	assert_int_equal(system(cmd), 0);
	const char *w = at("sp.mlpackage/Data/com.apple.CoreML/weights/weight.bin");
	assert_int_equal(truncate(w, (off_t)1 << 30), 0);
	struct stat st;
	assert_int_equal(stat(w, &st), 0);
	if (!ali_file_is_sparse(&st))
		skip();
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(at("sp.mlpackage"), &m, d), AL_OK);
	al_surgery *s = NULL;
	assert_int_equal(al_surgery_plan(m, NULL, &s, d), AL_OK);
	bool was = ali_copy_force_dense(true);
	assert_int_equal(al_surgery_write(s, at("dense.mlpackage"), d), AL_E_IO);
	assert_int_equal(stat(at("dense.mlpackage"), &st), -1);
	assert_int_equal(count_entries(root), 1); /* only the input: no temporary left */
	bool found = false;
	for (size_t i = 0; i < al_diags_count(d); i++)
		found |= strstr(al_diags_get(d, i)->msg, "sparse") != NULL;
	assert_true(found);
	ali_copy_force_dense(false);
	if (ali_copy_keeps_holes()) {
		assert_int_equal(al_surgery_write(s, at("out.mlpackage"), d), AL_OK);
		assert_int_equal(stat(at("out.mlpackage/Data/com.apple.CoreML/weights/weight.bin"), &st), 0);
		assert_int_equal(st.st_size, (off_t)1 << 30);
		assert_true((uint64_t)st.st_blocks * 512 < (UINT64_C(1) << 20));
		assert_int_equal(stat(at("out.mlpackage"), &st), 0);
		mode_t mask = umask(0);
		umask(mask);
		assert_int_equal(st.st_mode & 0777, 0777 & ~mask);
	}
	ali_copy_force_dense(was);
	al_surgery_free(s);
	al_model_free(m);
	al_diags_free(d);
	snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", at("sp.mlpackage"), at("out.mlpackage"));
	assert_int_equal(system(cmd), 0);
}


/* The output guard (al_output_check, issue #28): an output that is an input
 * (by path, symlink, hard link), lies inside an input directory (existing or
 * new, also through a symlinked directory), or is a directory holding an input
 * is refused with one error naming both; what is beside the inputs, an input
 * that does not exist, and the two flags' cases pass. */
static void test_output_check(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	assert_int_equal(mkdir(at("g"), 0777), 0);
	assert_int_equal(mkdir(at("g/p.mlpackage"), 0777), 0);
	assert_int_equal(mkdir(at("g/p.mlpackage/Data"), 0777), 0);
	FILE *f = fopen(at("g/m.mlmodel"), "w");
	fclose(f);
	f = fopen(at("g/p.mlpackage/Manifest.json"), "w");
	fclose(f);
	assert_int_equal(symlink("m.mlmodel", at("g/link")), 0);
	assert_int_equal(symlink("p.mlpackage", at("g/plink")), 0);
	assert_int_equal(link(at("g/m.mlmodel"), at("g/hard")), 0);
	char m[4096], pkg[4096], absent[4096]; /* at() reuses its buffers */
	snprintf(m, sizeof m, "%s", at("g/m.mlmodel"));
	snprintf(pkg, sizeof pkg, "%s", at("g/p.mlpackage"));
	snprintf(absent, sizeof absent, "%s", at("g/absent.mlmodel"));
	const char *in[] = {m, pkg, absent};
	static const struct {
		const char *out;
		unsigned flags;
		enum al_status want;
		const char *says;
	} cases[] = {
		{"g/m.mlmodel", 0, AL_E_INVALID_ARG, "the output is the input"},
		{"g/link", 0, AL_E_INVALID_ARG, "the output is the input"},
		{"g/hard", 0, AL_E_INVALID_ARG, "the output is the input"},
		{"g/./m.mlmodel", AL_OUTPUT_MAY_REPLACE_INPUT, AL_OK, NULL},
		{"g/p.mlpackage", 0, AL_E_INVALID_ARG, "the output is the input"},
		{"g/p.mlpackage", AL_OUTPUT_MAY_REPLACE_INPUT, AL_OK, NULL},
		{"g/p.mlpackage/Manifest.json", 0, AL_E_INVALID_ARG, "the output is inside the input"},
		{"g/p.mlpackage/new.json", 0, AL_E_INVALID_ARG, "the output is inside the input"},
		{"g/p.mlpackage/Data/", AL_OUTPUT_INTO_DIR, AL_E_INVALID_ARG, "the output is inside the input"},
		{"g/plink/Manifest.json", 0, AL_E_INVALID_ARG, "the output is inside the input"},
		{"g/p.mlpackage/Data/new/x.json", 0, AL_OK, NULL}, /* its directory is absent: nothing written */
		{"g", 0, AL_E_INVALID_ARG, "the output holds the input"},
		{"g/", AL_OUTPUT_INTO_DIR, AL_OK, NULL},
		{"g/report.json", 0, AL_OK, NULL},
		{"g/absent.mlmodel", 0, AL_OK, NULL},
		{"g/new.mlpackage", 0, AL_OK, NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		al_diags *e = al_diags_new();
		enum al_status st = al_output_check(at(cases[i].out), in, 3, cases[i].flags, e);
		if (st != cases[i].want)
			fail_msg("%s (flags %u): %d, want %d", cases[i].out, cases[i].flags, st, cases[i].want);
		assert_int_equal(al_diags_count(e), cases[i].says ? 1 : 0);
		if (cases[i].says) {
			const struct al_diag *x = al_diags_get(e, 0);
			assert_non_null(strstr(x->msg, cases[i].says));
			assert_string_equal(x->file, at(cases[i].out));
			bool in_pkg = strstr(cases[i].out, "p.mlpackage") || strstr(cases[i].out, "plink");
			assert_non_null(strstr(x->msg, in_pkg ? pkg : m)); /* names the input */
		}
		al_diags_free(e);
	}
	/* relative paths, from inside the directory */
	char cwd[4096];
	assert_non_null(getcwd(cwd, sizeof cwd));
	assert_int_equal(chdir(at("g")), 0);
	const char *rel[] = {"p.mlpackage"};
	assert_int_equal(al_output_check("p.mlpackage/x", rel, 1, 0, d), AL_E_INVALID_ARG);
	assert_int_equal(al_output_check("x", rel, 1, 0, d), AL_OK);
	assert_int_equal(al_output_check(".", rel, 1, 0, d), AL_E_INVALID_ARG);
	assert_int_equal(al_output_check(".", rel, 1, AL_OUTPUT_INTO_DIR, d), AL_OK);
	assert_int_equal(chdir(cwd), 0);
	/* no inputs: nothing to lose; bad arguments */
	assert_int_equal(al_output_check(at("g/m.mlmodel"), NULL, 0, 0, d), AL_OK);
	assert_int_equal(al_output_check(NULL, in, 1, 0, d), AL_E_INVALID_ARG);
	assert_int_equal(al_output_check("", in, 1, 0, d), AL_E_INVALID_ARG);
	al_diags_free(d);
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", at("g"));
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arena),
		cmocka_unit_test(test_hashtab),
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_rd),
		cmocka_unit_test(test_open_regular),
		cmocka_unit_test(test_write_atomic),
		cmocka_unit_test(test_platform),
		cmocka_unit_test(test_copy_holes),
		cmocka_unit_test(test_map_cow),
		cmocka_unit_test(test_sparse_package),
		cmocka_unit_test(test_output_check),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
