/* SPDX-License-Identifier: MIT */
/* pkgwrite.c: the .mlpackage writer (pkgwrite.h): every file of the input
 * package copied into a temporary directory next to the destination,
 * model.mlmodel spliced (or written whole), weight.bin with the new blobs
 * appended and its header count raised (or written whole by the caller), the
 * result opened with anelint's own loader, and only then renamed into place.
 * Library code: errors are diagnostics, never printed. */
#include "pkgwrite.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static enum al_status pw_fail(struct ali_pkg_writer *w, enum al_status st, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static enum al_status pw_fail(struct ali_pkg_writer *w, enum al_status st, const char *file, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ali_diag_vadd(w->d, AL_SEV_ERROR, file, UINT64_MAX, NULL, NULL, fmt, ap);
	va_end(ap);
	return st;
}

/* The input file src, opened for a copy (-1 when it cannot be: the caller
 * copies from the mapping). Through ali_open_regular: a FIFO must not hang. */
static int open_in(const char *src, struct stat *sb)
{
	int fd;
	return src && ali_open_regular(src, NULL, &fd, sb, NULL) == AL_OK ? fd : -1;
}

/* A copy of n bytes of the sparse file `in` that cannot keep its holes would
 * write them all: refuse past the budget (ali_copy_dense_ok). */
static bool dense_refused(struct ali_pkg_writer *w, const struct stat *in, uint64_t n, const char *src)
{
	if (ali_copy_dense_ok(in, n))
		return false;
	pw_fail(w, AL_E_IO, src,
		"sparse (%llu bytes, %llu on disk): a copy without its holes would write them all; refused",
		(unsigned long long)in->st_size, (unsigned long long)in->st_blocks * 512);
	return true;
}

static int open_out(const char *path, mode_t mode)
{
	return open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 0777 ? mode & 0777 : 0644);
}

/* The new model.mlmodel: the splice over the input's bytes. */
static enum al_status write_model(struct ali_pkg_writer *w, const char *src, const char *dst, mode_t mode)
{
	int fd = open_out(dst, mode);
	if (fd < 0)
		return pw_fail(w, AL_E_IO, dst, "cannot create: %s", strerror(errno));
	struct stat sb;
	int in_fd = w->model_whole ? -1 : open_in(src, &sb);
	if (in_fd >= 0 && (uint64_t)sb.st_size != w->root_n) {
		close(in_fd); /* changed since it was mapped: copy from the mapping */
		in_fd = -1;
	}
	enum al_status st = AL_OK;
	if (w->model_whole) /* e.g. its blob offsets moved with the blobs */
		st = ali_write_all(fd, w->model, w->model_n) ? AL_OK : AL_E_IO;
	else
		st = ali_splice_to_fd(w->sp, in_fd, fd);
	if (in_fd >= 0)
		close(in_fd);
	if (st == AL_OK && ali_sync_fd(fd) != 0)
		st = AL_E_IO;
	if (close(fd) != 0 && st == AL_OK)
		st = AL_E_IO;
	if (st)
		return pw_fail(w, st, dst, "cannot write: %s",
			       st == AL_E_IO ? strerror(errno) : al_status_str(st));
	w->wrote_model = true;
	return AL_OK;
}

/* The new weight.bin: the input's bytes with the blob count raised, then the
 * new blobs (or a copy when none were added). src NULL: none existed. */
static enum al_status write_weights(struct ali_pkg_writer *w, const char *src, const char *dst, mode_t mode)
{
	int fd = open_out(dst, mode);
	if (fd < 0)
		return pw_fail(w, AL_E_IO, dst, "cannot create: %s", strerror(errno));
	bool ok = true;
	uint64_t a = w->m->weights.n;
	struct stat sb;
	int in_fd = open_in(src, &sb);
	if (in_fd >= 0 && (uint64_t)sb.st_size != a) {
		close(in_fd);
		in_fd = -1;
	}
	/* written whole (compacted): only the bytes it copies count (a sparse
	 * input's holes past them, or in its dead blobs, are not written at all) */
	if (in_fd >= 0 && dense_refused(w, &sb, w->weights_whole ? w->weights_size : (uint64_t)sb.st_size, src)) {
		close(in_fd);
		close(fd);
		return AL_E_IO;
	}
	if (w->weights_whole) {
		ok = w->write_weights(w->ctx, in_fd, fd);
	} else if (a && w->n_new) {
		uint8_t cnt[4];
		le32(cnt, w->count);
		ok = ali_write_all(fd, cnt, 4);
		if (ok && in_fd >= 0)
			ok = ali_copy_range(in_fd, 4, a - 4, fd);
		else if (ok)
			ok = ali_write_all(fd, w->m->weights.p + 4, a - 4);
		ok = ok && ali_write_all(fd, w->tail, w->tail_n);
	} else if (a) {
		ok = in_fd >= 0 ? ali_copy_range(in_fd, 0, a, fd) : ali_write_all(fd, w->m->weights.p, a);
	} else if (w->n_new) { /* a fresh file: the tail starts with the header */
		uint8_t h[4];
		le32(h, w->count);
		ok = ali_write_all(fd, h, 4) && ali_write_all(fd, w->tail + 4, w->tail_n - 4);
	} else if (src && in_fd >= 0) {
		ok = ali_copy_range(in_fd, 0, (uint64_t)sb.st_size, fd);
	}
	int e = errno;
	if (ok && ali_sync_fd(fd) != 0) {
		ok = false;
		e = errno;
	}
	if (in_fd >= 0)
		close(in_fd);
	if (close(fd) != 0)
		ok = false;
	if (!ok)
		return pw_fail(w, AL_E_IO, dst, "cannot write: %s", strerror(e));
	w->wrote_weights = true;
	return AL_OK;
}

static enum al_status copy_file(struct ali_pkg_writer *w, const char *src, const char *dst, mode_t mode)
{
	struct stat sb;
	int in_fd;
	if (ali_open_regular(src, NULL, &in_fd, &sb, w->d) != AL_OK)
		return AL_E_IO;
	if (dense_refused(w, &sb, (uint64_t)sb.st_size, src)) {
		close(in_fd);
		return AL_E_IO;
	}
	int fd = open_out(dst, mode);
	if (fd < 0) {
		int e = errno;
		close(in_fd);
		return pw_fail(w, AL_E_IO, dst, "cannot create: %s", strerror(e));
	}
	bool ok = ali_copy_range(in_fd, 0, (uint64_t)sb.st_size, fd);
	int e = errno;
	if (ok && ali_sync_fd(fd) != 0) {
		ok = false;
		e = errno;
	}
	close(in_fd);
	if (close(fd) != 0)
		ok = false;
	return ok ? AL_OK : pw_fail(w, AL_E_IO, dst, "cannot write: %s", strerror(e));
}

static bool inside(const char *base, const char *s)
{
	size_t n = strlen(base);
	return strncmp(s, base, n) == 0 && (s[n] == '/' || s[n] == '\0');
}

/* Copy directory src (inside the input package) to dst, which exists. */
static enum al_status copy_tree(struct ali_pkg_writer *w, const char *src, const char *dst, int depth)
{
	if (depth > AL_MAX_DEPTH)
		return pw_fail(w, AL_E_FORMAT, src, "directories nested deeper than %d levels",
			       AL_MAX_DEPTH);
	DIR *dir = opendir(src);
	if (!dir)
		return pw_fail(w, AL_E_IO, src, "cannot open: %s", strerror(errno));
	enum al_status st = AL_OK;
	struct dirent *e;
	while (st == AL_OK && (errno = 0, e = readdir(dir))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char sp[PATH_MAX], dp[PATH_MAX], real[PATH_MAX];
		if ((size_t)snprintf(sp, sizeof sp, "%s/%s", src, e->d_name) >= sizeof sp ||
		    (size_t)snprintf(dp, sizeof dp, "%s/%s", dst, e->d_name) >= sizeof dp) {
			st = pw_fail(w, AL_E_IO, src, "a path in the package is too long");
			break;
		}
		struct stat lb, sb;
		if (lstat(sp, &lb) != 0 || !realpath(sp, real) || stat(real, &sb) != 0) {
			st = pw_fail(w, AL_E_IO, sp, "cannot read: %s", strerror(errno));
			break;
		}
		if (!inside(w->in_real, real)) {
			st = pw_fail(w, AL_E_FORMAT, sp, "resolves to %.200s, outside the package", real);
			break;
		}
		if (S_ISDIR(lb.st_mode)) {
			if (mkdir(dp, (lb.st_mode & 0777) | 0700) != 0)
				st = pw_fail(w, AL_E_IO, dp, "cannot create: %s", strerror(errno));
			else
				st = copy_tree(w, sp, dp, depth + 1);
		} else if (S_ISLNK(lb.st_mode) && S_ISDIR(sb.st_mode)) {
			st = pw_fail(w, AL_E_UNSUPPORTED, sp, "a symbolic link to a directory is not copied");
		} else if (!S_ISREG(sb.st_mode)) {
			st = pw_fail(w, AL_E_UNSUPPORTED, sp, "not a regular file or directory");
		} else if (strcmp(real, w->model_real) == 0) {
			st = write_model(w, real, dp, sb.st_mode);
		} else if (w->have_weights && strcmp(real, w->weights_real) == 0) {
			st = write_weights(w, real, dp, sb.st_mode);
		} else {
			st = copy_file(w, real, dp, sb.st_mode);
		}
	}
	if (st == AL_OK && errno)
		st = pw_fail(w, AL_E_IO, src, "cannot list: %s", strerror(errno));
	closedir(dir);
	return st;
}

/* mkdir -p of dst/rel's directories (rel relative, '/'-separated). */
static enum al_status make_dirs(struct ali_pkg_writer *w, const char *dst, const char *rel)
{
	char p[PATH_MAX];
	if ((size_t)snprintf(p, sizeof p, "%s/%s", dst, rel) >= sizeof p)
		return pw_fail(w, AL_E_IO, dst, "a path in the package is too long");
	for (char *q = p + strlen(dst) + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			return pw_fail(w, AL_E_IO, p, "cannot create: %s", strerror(errno));
		*q = '/';
	}
	return AL_OK;
}

enum al_status ali_pkg_prepare(struct ali_pkg_writer *w, const al_model *m, const char *path, al_diags *d)
{
	memset(w, 0, sizeof *w);
	w->m = m;
	w->d = d;
	if (!m->n_subs || !m->subs[0]->file)
		return AL_E_INVALID_ARG;
	if (!realpath(m->path, w->in_real))
		return pw_fail(w, AL_E_IO, m->path, "cannot open: %s", strerror(errno));
	if (!realpath(m->subs[0]->file, w->model_real))
		return pw_fail(w, AL_E_IO, m->subs[0]->file, "cannot open: %s", strerror(errno));
	w->have_weights = m->weights_path && realpath(m->weights_path, w->weights_real);
	/* the destination: path without trailing slashes; its directory must exist */
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	if (n == 0 || n >= PATH_MAX - 32)
		return pw_fail(w, AL_E_INVALID_ARG, path, "bad output path");
	if (n >= 8 && memcmp(path + n - 8, ".mlmodel", 8) == 0)
		return pw_fail(w, AL_E_INVALID_ARG, path,
			       "the input is a package: the output is a package too (name it .mlpackage)");
	char *dest = w->dest, parent[PATH_MAX], preal[PATH_MAX];
	memcpy(dest, path, n);
	dest[n] = '\0';
	struct stat db;
	w->exists = lstat(dest, &db) == 0;
	if (w->exists && S_ISDIR(db.st_mode) && !realpath(path, dest)) /* ".", "..": its real name */
		return pw_fail(w, AL_E_IO, path, "cannot open: %s", strerror(errno));
	n = strlen(dest);
	memcpy(parent, dest, n + 1);
	char *slash = strrchr(parent, '/');
	if (!slash)
		strcpy(parent, ".");
	else if (slash == parent)
		parent[1] = '\0';
	else
		*slash = '\0';
	if (!realpath(parent, preal))
		return pw_fail(w, AL_E_IO, dest, "cannot write: %s: %s", parent, strerror(errno));
	if (inside(w->in_real, preal))
		return pw_fail(w, AL_E_INVALID_ARG, dest, "the output would be inside the input package");
	if (w->exists) {
		char dreal[PATH_MAX], mf[PATH_MAX + 32];
		struct stat mb;
		if (!S_ISDIR(db.st_mode))
			return pw_fail(w, AL_E_INVALID_ARG, dest,
				       "exists and is not a directory; a package is written as one");
		snprintf(mf, sizeof mf, "%s/Manifest.json", dest);
		if (stat(mf, &mb) != 0)
			return pw_fail(w, AL_E_INVALID_ARG, dest,
				       "exists and is not a model package (no Manifest.json): not replaced");
		if (realpath(dest, dreal) && inside(dreal, w->in_real) && strcmp(dreal, w->in_real) != 0)
			return pw_fail(w, AL_E_INVALID_ARG, dest, "the input package is inside it");
	}
	return AL_OK;
}

/* No weight.bin in the input, new blobs: one where the loader reads it, the
 * Manifest's weights item (Data/com.apple.CoreML/weights unless it says
 * otherwise: a package whose item points elsewhere got its new blobs next to
 * the model, which the new package then did not load; found by fuzz_pkgwrite). */
static enum al_status add_weights(struct ali_pkg_writer *w, const char *tmp)
{
	char wrel[PATH_MAX], wp[PATH_MAX];
	if (w->m->weights_rel) {
		snprintf(wrel, sizeof wrel, "%s", w->m->weights_rel);
	} else {
		const char *rel = w->model_real + strlen(w->in_real) + 1;
		const char *ms = strrchr(rel, '/');
		int dl = ms ? (int)(ms - rel) : 0;
		snprintf(wrel, sizeof wrel, "%.*s%sweights/weight.bin", dl, rel, ms ? "/" : "");
	}
	enum al_status st = make_dirs(w, tmp, wrel);
	if (st == AL_OK && (size_t)snprintf(wp, sizeof wp, "%s/%s", tmp, wrel) >= sizeof wp)
		st = pw_fail(w, AL_E_IO, w->dest, "a path in the package is too long");
	if (st == AL_OK)
		st = write_weights(w, NULL, wp, 0644);
	return st;
}

/* The new package in tmp must load before it replaces anything. */
static enum al_status check_loads(struct ali_pkg_writer *w, const char *tmp)
{
	enum al_status st = AL_OK;
	al_diags *d2 = al_diags_new();
	al_model *chk = NULL;
	enum al_status cs = d2 ? al_model_open(tmp, &chk, d2) : AL_E_NOMEM;
	if (cs != AL_OK) {
		const struct al_diag *e = NULL; /* the first error, not a warning before it */
		for (size_t i = 0; d2 && i < al_diags_count(d2) && !e; i++)
			if (al_diags_get(d2, i)->severity == AL_SEV_ERROR)
				e = al_diags_get(d2, i);
		st = pw_fail(w, AL_E_FORMAT, w->dest, "the new package does not load: %s",
			     e ? e->msg : al_status_str(cs));
	}
	al_model_free(chk);
	al_diags_free(d2);
	return st;
}

enum al_status ali_pkg_write(struct ali_pkg_writer *w)
{
	struct al_atomic out;
	enum al_status st = ali_atomic_begin(&out, w->dest, true, w->d);
	if (st != AL_OK)
		return st;
	out.replace = w->exists; /* checked by ali_pkg_prepare: a package, not the input's parent */
	const char *tmp = out.tmp;
	st = copy_tree(w, w->in_real, tmp, 0);
	if (st == AL_OK && !w->wrote_model)
		st = pw_fail(w, AL_E_FORMAT, w->m->subs[0]->file, "the root model is not inside the package");
	if (st == AL_OK && w->n_new && !w->wrote_weights)
		st = add_weights(w, tmp);
	if (st == AL_OK)
		st = check_loads(w, tmp);
	if (st == AL_OK) /* renamed into place, or swapped with the old package */
		return ali_atomic_commit(&out, w->d);
	ali_atomic_abort(&out);
	return st;
}
