/* SPDX-License-Identifier: MIT */
/* atomic.c: the one way anelint writes an output (check/report -o, run --out,
 * fix, split, the .mlpackage writer). Path through this file:
 *   ali_atomic_begin    a temporary "<dest>.tmpXXXXXX" beside the target (so
 *                      the rename stays on one file system), file or directory,
 *                      with the mode of a plain create (0666 or 0777 & ~umask;
 *                      mkstemp/mkdtemp alone would give 0600/0700)
 *   (the caller fills it: a->fd, or files inside a->tmp)
 *   ali_atomic_commit   fsync when writes are durable, rename over the
 *                      target; a directory target is
 *                      replaced only on request (ali_rename_exchange where the
 *                      system has it, else move aside, rename, remove)
 *   ali_atomic_abort    remove the temporary (recursively): no partial output
 * ali_write_atomic wraps the three for one file; ali_write_all and ali_remove_tree
 * are the shared helpers. al_output_check, the output guard every writer asks
 * first: no output over an input, inside an input package, or replacing a
 * directory that holds one (by device and inode). Nothing here prints. */
#include "base.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Durability (al_set_durable_writes): off, as for cp. The rename alone keeps a
 * crashed or interrupted run from leaving a partial output; only a power loss
 * before the device has the data needs the fsync, and it costs as much as the
 * copy on a large model (bench/fixcp.sh: fix 2.0x cp with it, 1.1-1.5x cp
 * without, 0.8-1.0x cp followed by sync). */
static atomic_bool durable_writes;

void al_set_durable_writes(bool on)
{
	atomic_store(&durable_writes, on);
}

bool ali_durable_writes(void)
{
	return atomic_load(&durable_writes);
}

int ali_sync_fd(int fd)
{
	return ali_durable_writes() ? fsync(fd) : 0;
}

bool ali_write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n > 0) {
		ssize_t k = write(fd, b, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO;
			return false;
		}
		b += k;
		n -= (size_t)k;
	}
	return true;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return flag == FTW_DP ? rmdir(p) : unlink(p);
}

void ali_remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (!S_ISDIR(st.st_mode))
		(void)unlink(path);
	else
		(void)nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static mode_t current_umask(void)
{
	mode_t m = umask(0); /* POSIX has no way to read it without setting it */
	umask(m);
	return m;
}

static enum al_status io_fail(al_diags *d, const char *file, const char *what, int e)
{
	ali_diag_add(d, AL_SEV_ERROR, file, UINT64_MAX, NULL, NULL, "cannot %s: %s", what, strerror(e));
	errno = e; /* for callers that print strerror themselves */
	return AL_E_IO;
}

enum al_status ali_atomic_begin(struct al_atomic *a, const char *dest, bool dir, al_diags *d)
{
	memset(a, 0, sizeof *a);
	a->fd = -1;
	a->dir = dir;
	size_t n = dest ? strlen(dest) : 0;
	while (n > 1 && dest[n - 1] == '/') /* "out/" names the directory "out" */
		n--;
	if (n == 0)
		return AL_E_INVALID_ARG;
	a->dest = ali_malloc(n + 1);
	a->tmp = ali_malloc(n + 16);
	if (!a->dest || !a->tmp) {
		ali_free(a->dest);
		ali_free(a->tmp);
		memset(a, 0, sizeof *a);
		a->fd = -1;
		return AL_E_NOMEM;
	}
	memcpy(a->dest, dest, n);
	a->dest[n] = '\0';
	snprintf(a->tmp, n + 16, "%s.tmpXXXXXX", a->dest);
	mode_t mask = current_umask();
	if (dir) {
		if (!mkdtemp(a->tmp) || chmod(a->tmp, 0777 & ~mask) != 0) {
			int e = errno;
			ali_remove_tree(a->tmp);
			ali_free(a->tmp);
			a->tmp = NULL;
			enum al_status st = io_fail(d, a->dest, "create a directory beside it", e);
			ali_free(a->dest); /* nothing begun: the caller has nothing to abort */
			a->dest = NULL;
			return st;
		}
		return AL_OK;
	}
	a->fd = mkstemp(a->tmp);
	if (a->fd < 0 || fchmod(a->fd, 0666 & ~mask) != 0) {
		int e = errno;
		if (a->fd >= 0) {
			close(a->fd);
			unlink(a->tmp);
		}
		a->fd = -1;
		ali_free(a->tmp);
		a->tmp = NULL;
		enum al_status st = io_fail(d, a->dest, "create a file beside it", e);
		ali_free(a->dest);
		a->dest = NULL;
		return st;
	}
	return AL_OK;
}

void ali_atomic_abort(struct al_atomic *a)
{
	if (a->tmp && a->fd >= 0) /* a zeroed struct (fd 0) owns nothing */
		close(a->fd);
	a->fd = -1;
	if (a->tmp)
		ali_remove_tree(a->tmp);
	ali_free(a->tmp);
	ali_free(a->dest);
	a->tmp = a->dest = NULL;
}

/* fsync the directory holding path, so the rename itself is durable (best
 * effort; only when writes are durable). */
static void sync_parent(const char *path)
{
	if (!ali_durable_writes())
		return;
	const char *slash = strrchr(path, '/');
	char buf[4096];
	const char *dir = ".";
	if (slash && (size_t)(slash - path) < sizeof buf) {
		size_t k = slash == path ? 1 : (size_t)(slash - path);
		memcpy(buf, path, k);
		buf[k] = '\0';
		dir = buf;
	}
	int fd = open(dir, O_RDONLY | O_CLOEXEC | O_DIRECTORY);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

/* Move the existing directory a->dest away and a->tmp into its place. */
static int replace_dir(struct al_atomic *a)
{
	if (ali_rename_exchange(a->tmp, a->dest) == 0)
		return 0; /* a->tmp now holds the old one: removed by the caller */
	size_t n = strlen(a->dest) + 16;
	char *old = ali_malloc(n);
	if (!old)
		return errno = ENOMEM, -1;
	snprintf(old, n, "%s.oldXXXXXX", a->dest);
	int rc = -1;
	if (mkdtemp(old) && rmdir(old) == 0 && rename(a->dest, old) == 0) {
		if (rename(a->tmp, a->dest) == 0) {
			memcpy(a->tmp, old, strlen(old) + 1); /* same length as the tmp name */
			rc = 0;
		} else {
			int e = errno;
			(void)rename(old, a->dest);
			errno = e;
		}
	}
	ali_free(old);
	return rc;
}

enum al_status ali_atomic_commit(struct al_atomic *a, al_diags *d)
{
	if (!a->tmp)
		return AL_E_INVALID_ARG;
	enum al_status st = AL_OK;
	if (a->fd >= 0) {
		bool ok = ali_sync_fd(a->fd) == 0;
		int e = errno;
		ok = close(a->fd) == 0 && ok;
		if (!ok && !e)
			e = errno;
		a->fd = -1;
		if (!ok)
			st = io_fail(d, a->dest, "write", e);
	} else if (a->dir) {
		int fd = ali_durable_writes() ? open(a->tmp, O_RDONLY | O_CLOEXEC | O_DIRECTORY) : -1;
		if (fd >= 0) {
			(void)fsync(fd);
			close(fd);
		}
	}
	struct stat sb;
	if (st == AL_OK) {
		bool swap = a->dir && a->replace && lstat(a->dest, &sb) == 0 && S_ISDIR(sb.st_mode);
		if (swap ? replace_dir(a) != 0 : rename(a->tmp, a->dest) != 0)
			st = io_fail(d, a->dest, "rename into place", errno);
		else if (!swap) {
			ali_free(a->tmp);
			a->tmp = NULL;
		}
		if (st == AL_OK)
			sync_parent(a->dest);
	}
	int e = errno;
	ali_atomic_abort(a); /* the temporary on failure, the old directory after a swap */
	errno = e;          /* the failure's, for callers that print strerror */
	return st;
}

enum al_status ali_write_atomic(const char *path, bool (*fill)(int fd, void *ctx), void *ctx,
			       al_diags *d)
{
	struct al_atomic a;
	enum al_status st = ali_atomic_begin(&a, path, false, d);
	if (st != AL_OK)
		return st;
	if (!fill(a.fd, ctx)) {
		int e = errno;
		ali_atomic_abort(&a);
		return io_fail(d, path, "write", e);
	}
	return ali_atomic_commit(&a, d);
}

/* al_atomic_file: the same for a front end's stream (the CLI's -o FILE). */
struct al_atomic_file {
	struct al_atomic a;
};

al_atomic_file *al_atomic_file_open(const char *path, FILE **f)
{
	*f = NULL;
	struct al_atomic_file *o = ali_calloc(1, sizeof *o);
	if (!o) {
		errno = ENOMEM;
		return NULL;
	}
	if (ali_atomic_begin(&o->a, path, false, NULL) != AL_OK) {
		int e = errno; /* the create's */
		ali_free(o);
		errno = e;
		return NULL;
	}
	int fd = dup(o->a.fd); /* the stream's own; a.fd is fsynced and closed on commit */
	FILE *s = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!s) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		ali_atomic_abort(&o->a);
		ali_free(o);
		errno = e;
		return NULL;
	}
	*f = s;
	return o;
}

const char *al_atomic_file_temp(const al_atomic_file *o)
{
	return o ? o->a.tmp : NULL;
}

bool al_atomic_file_close(al_atomic_file *o, FILE *f, bool keep)
{
	bool good = keep && fflush(f) == 0 && !ferror(f);
	int e = errno;
	good = fclose(f) == 0 && good;
	if (good) { /* fsync, rename over the path */
		al_diags *d = al_diags_new();
		good = d && ali_atomic_commit(&o->a, d) == AL_OK;
		e = good ? e : !d ? ENOMEM : errno;
		al_diags_free(d);
	}
	ali_atomic_abort(&o->a); /* the temporary, unless committed */
	ali_free(o);
	errno = e;
	return good;
}

struct bytes {
	const void *p;
	size_t n;
};

static bool fill_bytes(int fd, void *ctx)
{
	const struct bytes *b = ctx;
	return ali_write_all(fd, b->p, b->n);
}

enum al_status ali_write_atomic_bytes(const char *path, const void *p, size_t n, al_diags *d)
{
	struct bytes b = {p, n};
	return ali_write_atomic(path, fill_bytes, &b, d);
}

/* ================================================================ copies */

/* SEEK_DATA/SEEK_HOLE (Linux, FreeBSD, Solaris, macOS 10.15+) find a sparse
 * file's holes, so a copy can keep them instead of writing zeros: an 8 GB
 * weight.bin with 28 KB of data stays 28 KB. Built with -DAL_NO_SEEK_HOLE, or
 * where the system lacks them, copies are plain reads and writes, and
 * al_copy_dense_budget refuses a dense copy of a sparse input past a budget. */
#if defined(SEEK_DATA) && defined(SEEK_HOLE) && !defined(AL_NO_SEEK_HOLE)
#define HAVE_SEEK_HOLE 1
#else
#define HAVE_SEEK_HOLE 0
#endif
static bool force_dense;

bool ali_copy_force_dense(bool on)
{
	bool was = force_dense || !HAVE_SEEK_HOLE;
	force_dense = on;
	return was;
}

bool ali_copy_keeps_holes(void)
{
	return HAVE_SEEK_HOLE && !force_dense;
}

bool ali_file_is_sparse(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_size > 0 &&
	       (uint64_t)st->st_blocks * 512 < (uint64_t)st->st_size;
}

/* Plain copy of n bytes from in_fd at o to out_fd's position (a buffer on the
 * stack: a copy must not fail for want of memory, nor count against it). */
static bool copy_plain(int in_fd, uint64_t o, uint64_t n, int out_fd)
{
	uint8_t buf[1 << 16];
	bool ok = true;
	while (ok && n) {
		size_t chunk = n > sizeof buf ? sizeof buf : (size_t)n;
		ssize_t k = pread(in_fd, buf, chunk, (off_t)o);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO; /* the file shrank under us */
			ok = false;
			break;
		}
		ok = ali_write_all(out_fd, buf, (size_t)k);
		o += (uint64_t)k;
		n -= (uint64_t)k;
	}
	return ok;
}

/* n bytes of in_fd at o onto out_fd's position: in the kernel (one copy, no
 * trip through a buffer) where the system has copy_file_range, else, and for
 * whatever it leaves (EXDEV, EINVAL on some file systems, a short input),
 * copy_plain, which also reports a short input. */
#if HAVE_SEEK_HOLE
#define COPY_CHUNK ((size_t)64 << 20)
static bool copy_data(int in_fd, uint64_t o, uint64_t n, int out_fd)
{
	while (n) {
		size_t chunk = n > COPY_CHUNK ? COPY_CHUNK : (size_t)n;
		long long k = ali_copy_file_range(in_fd, o, out_fd, chunk);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		o += (uint64_t)k;
		n -= (uint64_t)k;
		if (n && ali_durable_writes())
			ali_writeback_start(out_fd); /* the device writes while the next chunk copies */
	}
	return copy_plain(in_fd, o, n, out_fd);
}
#endif

bool ali_copy_range(int in_fd, uint64_t off, uint64_t n, int out_fd)
{
	if (!ali_copy_keeps_holes())
		return copy_plain(in_fd, off, n, out_fd);
#if HAVE_SEEK_HOLE
	uint64_t end = off + n;
	bool hole_last = false;
	while (off < end) {
		off_t data = lseek(in_fd, (off_t)off, SEEK_DATA);
		if (data < 0 && errno == ENXIO) /* only a hole to the end of the file */
			data = (off_t)end;
		else if (data < 0) /* no hole support on this file system */
			return copy_data(in_fd, off, end - off, out_fd);
		if ((uint64_t)data > end)
			data = (off_t)end;
		if ((uint64_t)data > off) { /* a hole: skip it in the output too */
			if (lseek(out_fd, (off_t)((uint64_t)data - off), SEEK_CUR) < 0)
				return false;
			hole_last = true;
			off = (uint64_t)data;
			continue;
		}
		off_t hole = lseek(in_fd, (off_t)off, SEEK_HOLE);
		if (hole < 0 || (uint64_t)hole > end)
			hole = (off_t)end;
		if ((uint64_t)hole <= off) /* cannot happen for a regular file; stay safe */
			hole = (off_t)end;
		if (!copy_data(in_fd, off, (uint64_t)hole - off, out_fd))
			return false;
		hole_last = false;
		off = (uint64_t)hole;
	}
	if (hole_last) { /* a trailing hole: give the file its length */
		off_t pos = lseek(out_fd, 0, SEEK_CUR);
		struct stat st;
		if (pos < 0 || fstat(out_fd, &st) != 0)
			return false;
		if (st.st_size < pos && ftruncate(out_fd, pos) != 0)
			return false;
	}
	return true;
#else
	return copy_plain(in_fd, off, n, out_fd);
#endif
}

bool ali_copy_dense_ok(const struct stat *in, uint64_t n_out)
{
	if (ali_copy_keeps_holes() || !ali_file_is_sparse(in))
		return true;
	uint64_t on_disk = (uint64_t)in->st_blocks * 512;
	return n_out <= AL_DENSE_BUDGET || n_out / 16 <= on_disk;
}

/* ================================================================ the output guard */

/* A file or directory by identity: the same (device, inode) is the same object
 * whatever path, symlink, hard link or bind mount names it. */
struct ident {
	dev_t dev;
	ino_t ino;
};

static bool ident_of(const char *path, struct ident *id, bool *is_dir)
{
	struct stat sb;
	if (stat(path, &sb) != 0)
		return false;
	*id = (struct ident){sb.st_dev, sb.st_ino};
	if (is_dir)
		*is_dir = S_ISDIR(sb.st_mode);
	return true;
}

static bool same_ident(const struct ident *a, const struct ident *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

/* The identities of the directories holding real (an absolute path without
 * symlinks, as realpath gives it), nearest first, and of real itself first when
 * self: one stat per level, once per output. *n of them (at most cap). */
static void chain_of(const char *real, bool self, struct ident *v, size_t cap, size_t *n)
{
	*n = 0;
	size_t len = strlen(real);
	char *p = ali_malloc(len + 1);
	if (!p)
		return;
	memcpy(p, real, len + 1);
	if (self && *n < cap && ident_of(p, &v[*n], NULL))
		(*n)++;
	while (*n < cap) {
		char *slash = strrchr(p, '/');
		if (!slash || (slash == p && !p[1]))
			break; /* "/" done */
		slash[slash == p] = '\0'; /* "/a/b" -> "/a", "/a" -> "/" */
		if (ident_of(p, &v[*n], NULL))
			(*n)++;
	}
	ali_free(p);
}

/* How many identities chain_of can find for real: its '/'s, and itself. */
static size_t levels(const char *real)
{
	size_t n = 1;
	for (; *real; real++)
		n += *real == '/';
	return n;
}

static bool in_chain(const struct ident *v, size_t n, const struct ident *want)
{
	for (size_t i = 0; i < n; i++)
		if (same_ident(&v[i], want))
			return true;
	return false;
}

/* realpath of path (*exists), or else of the directory it would be made in.
 * NULL when neither resolves. From malloc (realpath's): free(). */
static char *real_or_parent(const char *path, bool *exists)
{
	char *r = realpath(path, NULL);
	*exists = r != NULL;
	if (r)
		return r;
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/') /* "new/": the directory "new" */
		n--;
	while (n > 0 && path[n - 1] != '/')
		n--;
	if (n == 0)
		return realpath(".", NULL);
	if (n > 1)
		n--; /* "a/b" -> "a", "/b" -> "/" */
	char *dir = ali_malloc(n + 1);
	if (!dir)
		return NULL;
	memcpy(dir, path, n);
	dir[n] = '\0';
	r = realpath(dir, NULL);
	ali_free(dir);
	return r;
}

enum al_status al_output_check(const char *out, const char *const *inputs, size_t n_inputs, unsigned flags,
			       al_diags *d)
{
	if (!out || !*out || (n_inputs && !inputs))
		return AL_E_INVALID_ARG;
	bool exists = false, out_dir = false;
	struct ident out_id = {0};
	char *real = real_or_parent(out, &exists);
	if (!real)
		return AL_OK; /* its directory does not exist: nothing can be written there */
	exists = exists && ident_of(real, &out_id, &out_dir);
	/* the directories out is (or would be made) in: stat once, compared with every input */
	size_t depth = levels(real), n_above = 0;
	struct ident *above = ali_malloc(depth * sizeof *above);
	if (!above) {
		free(real);
		return AL_E_NOMEM;
	}
	chain_of(real, !exists, above, depth, &n_above);
	enum al_status st = AL_OK;
	for (size_t i = 0; i < n_inputs && st == AL_OK; i++) {
		struct ident in_id;
		bool in_dir = false;
		if (!inputs[i] || !*inputs[i] || !ident_of(inputs[i], &in_id, &in_dir))
			continue; /* not there: nothing to lose */
		const char *what = NULL;
		if (exists && same_ident(&out_id, &in_id)) {
			if (!(flags & AL_OUTPUT_MAY_REPLACE_INPUT))
				what = "the output is the input %s: it would be replaced";
		} else if (in_dir && in_chain(above, n_above, &in_id)) {
			what = "the output is inside the input %s: that model would change";
		} else if (exists && out_dir && !(flags & AL_OUTPUT_INTO_DIR)) {
			char *in_real = realpath(inputs[i], NULL);
			size_t n_in = 0, cap = in_real ? levels(in_real) : 0;
			struct ident *in_above = cap ? ali_malloc(cap * sizeof *in_above) : NULL;
			if (in_above)
				chain_of(in_real, false, in_above, cap, &n_in);
			if (in_chain(in_above, n_in, &out_id))
				what = "the output holds the input %s: replacing it would remove it";
			ali_free(in_above);
			free(in_real); /* realpath's, from malloc */
		}
		if (what) {
			ali_diag_add(d, AL_SEV_ERROR, out, UINT64_MAX, NULL, NULL, what, inputs[i]);
			st = AL_E_INVALID_ARG;
		}
	}
	ali_free(above);
	free(real);
	return st;
}
