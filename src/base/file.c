/* SPDX-License-Identifier: MIT */
/* file.c: opening files for reading, and read-only mappings of whole files.
 * Every file anelint reads (model, Manifest, weights, .npy, rules file, the
 * source of a copy) is opened by ali_open_regular, which refuses what is not a
 * regular file: a FIFO or a device must not hang a run. ali_map_file maps what
 * it opened; ali_map_file_open keeps it open too, for ali_map_read (pread of a
 * record without touching the mapping: weight.bin's blob metadata). Every read
 * of a span at an offset goes through a struct ali_reader (base.h): a copy from
 * the mapping, or pread; where a file system has no mappings (the WebAssembly
 * page's, docs/web.md) the file is read into memory through one instead.
 *
 * The guard-page test mode (ANELINT_GUARD_MAPS=1, or built with -DAL_GUARD_MAPS):
 * a file mapping ends wherever the file does, and the rest of its last page reads
 * as zeros, so a parser that reads a byte too many goes unnoticed. A file mapping
 * cannot start mid-page either (its offset must be page-aligned), so in this mode
 * the file is copied instead, into anonymous memory laid out so that its last
 * byte is the last one before a PROT_NONE page; the copy is then made read-only
 * like the mapping it stands for. Tests and the fuzzers run in this mode. */
#include "base.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ================================================================ files */

enum al_status ali_open_regular(const char *path, const char *shown, int *fd_out, struct stat *st_out,
			       al_diags *d)
{
	*fd_out = -1;
	const char *name = shown ? shown : path;
	/* O_NONBLOCK: opening a FIFO (no writer) or a device must not block; it
	 * is refused below, and cleared again for a regular file. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		ali_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "cannot open: %s",
			    strerror(errno));
		return AL_E_IO;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		ali_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "not a regular file");
		close(fd);
		return AL_E_IO;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
		ali_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "cannot open: %s",
			    strerror(errno));
		close(fd);
		return AL_E_IO;
	}
	if (st_out)
		*st_out = st;
	*fd_out = fd;
	return AL_OK;
}

/* ================================================================ readers */

static bool read_span(const struct ali_reader *r, uint64_t off, void *buf, size_t n)
{
	if (n)
		memcpy(buf, r->p + off, n);
	return true;
}

/* pread until n bytes are in, retrying EINTR: a short file is a failure (errno
 * kept, EIO for an end of file) */
static bool pread_all(int fd, uint64_t off, void *buf, size_t n)
{
	for (size_t k = 0; k < n;) {
		ssize_t got = pread(fd, (uint8_t *)buf + k, n - k, (off_t)(off + k));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (got == 0)
				errno = EIO;
			return false;
		}
		k += (size_t)got;
	}
	return true;
}

static bool read_fd(const struct ali_reader *r, uint64_t off, void *buf, size_t n)
{
	return pread_all(r->fd, off, buf, n);
}

void ali_reader_span(struct ali_reader *r, al_span s)
{
	*r = (struct ali_reader){.read_at = read_span, .p = s.p, .fd = -1, .size = s.n};
}

void ali_reader_fd(struct ali_reader *r, int fd, uint64_t size)
{
	*r = (struct ali_reader){.read_at = read_fd, .fd = fd, .size = size};
}

bool ali_reader_read(const struct ali_reader *r, uint64_t off, void *buf, size_t n)
{
	if (off > r->size || n > r->size - off)
		return false;
	return r->read_at(r, off, buf, n);
}

/* ================================================================ guard-page mode */

#if !defined(MAP_ANONYMOUS) && defined(MAP_ANON)
#define MAP_ANONYMOUS MAP_ANON
#endif

/* Under AddressSanitizer the bytes of a guarded region before the copy are
 * poisoned, so that a read before the start is reported too (the guard page
 * catches reads past the end). ASan's shadow describes 8-byte granules and can
 * mark only a granule's tail as poisoned, not its head: the up to 7 bytes that
 * share the copy's first granule stay readable. */
#if defined(__SANITIZE_ADDRESS__)
#define AL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AL_ASAN 1
#endif
#endif
#ifdef AL_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) __asan_poison_memory_region((p), (n))
#define UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

bool ali_guard_maps(void)
{
#ifdef AL_GUARD_MAPS
	return true;
#else
	static _Atomic int on = -1; /* -1: not read yet */
	int v = atomic_load_explicit(&on, memory_order_relaxed);
	if (v < 0) {
		const char *e = getenv("ANELINT_GUARD_MAPS");
		v = e && strcmp(e, "1") == 0;
		atomic_store_explicit(&on, v, memory_order_relaxed);
	}
	return v == 1;
#endif
}

/* A region of whole pages, writable, whose last page is PROT_NONE; *data is where
 * n bytes start so that they end right before that page. NULL when impossible. */
static void *guarded_region(size_t n, size_t *total, uint8_t **data)
{
#ifdef MAP_ANONYMOUS
	long pg = sysconf(_SC_PAGESIZE);
	size_t page = pg > 0 ? (size_t)pg : 4096;
	if (n > SIZE_MAX - 2 * page)
		return NULL;
	size_t body = (n + page - 1) / page * page;
	void *r = mmap(NULL, body + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	if (mprotect((uint8_t *)r + body, page, PROT_NONE) != 0) {
		munmap(r, body + page);
		return NULL;
	}
	*total = body + page;
	*data = (uint8_t *)r + body - n;
	return r;
#else
	(void)n;
	(void)total;
	(void)data;
	return NULL;
#endif
}

/* The filled region made read-only, and *m set to it. */
static void guarded_done(struct al_map *m, void *r, size_t total, const uint8_t *data, size_t n)
{
	size_t body = (size_t)(data + n - (const uint8_t *)r);
	if (body)
		(void)mprotect(r, body, PROT_READ);
	POISON(r, (size_t)(data - (const uint8_t *)r));
	m->guarded = r;
	m->guarded_len = total;
	m->s.p = data;
	m->s.n = n;
}

enum al_status ali_map_guarded_copy(const void *p, size_t n, struct al_map *m)
{
	memset(m, 0, sizeof *m);
	size_t total;
	uint8_t *data;
	void *r = guarded_region(n, &total, &data);
	if (!r)
		return AL_E_NOMEM;
	if (n)
		memcpy(data, p, n);
	guarded_done(m, r, total, data, n);
	return AL_OK;
}

al_span ali_guard_span(al_span s, struct al_map *m)
{
	memset(m, 0, sizeof *m);
	if (ali_guard_maps() && ali_map_guarded_copy(s.p, s.n, m) == AL_OK)
		return m->s;
	return s;
}

/* The file's n bytes read into a guarded region; false with errno on failure (a
 * file that shrank meanwhile: EIO). */
static bool guarded_read(int fd, size_t n, struct al_map *m)
{
	size_t total;
	uint8_t *data;
	void *r = guarded_region(n, &total, &data);
	if (!r) {
		errno = ENOMEM;
		return false;
	}
	if (!pread_all(fd, 0, data, n)) {
		int e = errno;
		munmap(r, total);
		errno = e;
		return false;
	}
	guarded_done(m, r, total, data, n);
	return true;
}

/* ================================================================ mappings */

/* A big file where files cannot be mapped (the WebAssembly page): a .mlmodel of
 * hundreds of MB is mostly weights the analysis skips. Such a file is given a
 * buffer of its size of which only its protobuf structure is read: every field
 * header, every field of at most SPARSE_FIELD bytes, and the inside of a bigger
 * length-delimited field when it parses as a message in turn (to SPARSE_DEPTH
 * levels); a bigger field that does not (raw weights) is left unread, its bytes
 * those of untouched memory. Reads go by chunks of 2^SPARSE_CHUNK_SHIFT bytes through the fd
 * reader. A file whose top level is not a protobuf message to its last byte
 * (MIL text, JSON, a damaged model) is read whole instead, so what the parsers
 * see differs from the file only inside big fields nobody parses as messages. */
enum { SPARSE_MIN = 64 << 20, SPARSE_FIELD = 64 << 10, SPARSE_CHUNK_SHIFT = 14, SPARSE_DEPTH = 32 };
struct sparse {
	uint8_t *buf;
	size_t n;
	uint8_t *loaded; /* one bit per chunk */
	struct ali_reader r;
};

static bool sparse_need(struct sparse *s, size_t off, size_t len)
{
	if (off > s->n || len > s->n - off)
		return false;
	if (len == 0)
		return true;
	for (size_t c = off >> SPARSE_CHUNK_SHIFT, last = (off + len - 1) >> SPARSE_CHUNK_SHIFT; c <= last; c++) {
		if (s->loaded[c >> 3] & (1u << (c & 7)))
			continue;
		size_t at = c << SPARSE_CHUNK_SHIFT, chunk = (size_t)1 << SPARSE_CHUNK_SHIFT;
		if (!ali_reader_read(&s->r, at, s->buf + at, s->n - at < chunk ? s->n - at : chunk))
			return false;
		s->loaded[c >> 3] |= (uint8_t)(1u << (c & 7));
	}
	return true;
}

static bool sparse_varint(struct sparse *s, size_t *pos, size_t end, uint64_t *v)
{
	uint64_t x = 0;
	for (int i = 0; i < 10; i++) {
		if (*pos >= end || !sparse_need(s, *pos, 1))
			return false;
		uint8_t b = s->buf[(*pos)++];
		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

/* [pos, end) walked as a message, loading as above; true when it parsed to its end. */
static bool sparse_walk(struct sparse *s, size_t pos, size_t end, int depth)
{
	while (pos < end) {
		uint64_t key, v;
		if (!sparse_varint(s, &pos, end, &key) || key >> 3 == 0)
			return false;
		switch (key & 7) {
		case 0:
			if (!sparse_varint(s, &pos, end, &v))
				return false;
			break;
		case 1:
		case 5: {
			size_t w = (key & 7) == 1 ? 8 : 4;
			if (end - pos < w || !sparse_need(s, pos, w))
				return false;
			pos += w;
			break;
		}
		case 2:
			if (!sparse_varint(s, &pos, end, &v) || v > end - pos)
				return false;
			if (v <= SPARSE_FIELD) {
				if (!sparse_need(s, pos, (size_t)v))
					return false;
			} else if (depth < SPARSE_DEPTH) {
				(void)sparse_walk(s, pos, pos + (size_t)v, depth + 1); /* false: raw bytes */
			}
			pos += (size_t)v;
			break;
		default:
			return false;
		}
	}
	return true;
}

/* The n bytes of fd as above into m->copy; false (nothing kept) when the file is
 * not a protobuf message, too small to bother, or out of memory. */
static bool read_sparse(int fd, size_t n, struct al_map *m)
{
	if (n < SPARSE_MIN)
		return false;
	struct sparse s = {.n = n};
	s.buf = malloc(n); /* not zeroed: calloc would touch every page */
	s.loaded = calloc(((n - 1) >> SPARSE_CHUNK_SHIFT) / 8 + 1, 1);
	ali_reader_fd(&s.r, fd, n);
	bool ok = s.buf && s.loaded && sparse_walk(&s, 0, n, 0);
	free(s.loaded);
	if (!ok) {
		free(s.buf);
		return false;
	}
	m->copy = s.buf;
	m->s.p = s.buf;
	m->s.n = n;
	return true;
}

/* The n bytes of fd read into memory (m->copy), in chunks through an fd reader. */
static enum al_status read_copy(int fd, size_t n, const char *name, struct al_map *m, al_diags *d)
{
	uint8_t *buf = malloc(n);
	if (!buf) {
		ali_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL,
			    "cannot read: %zu bytes do not fit in memory", n);
		return AL_E_NOMEM;
	}
	struct ali_reader r;
	ali_reader_fd(&r, fd, n);
	enum { CHUNK = 1 << 20 };
	for (size_t k = 0; k < n; k += CHUNK) {
		size_t len = n - k < CHUNK ? n - k : CHUNK;
		if (!ali_reader_read(&r, k, buf + k, len)) {
			ali_diag_add(d, AL_SEV_ERROR, name, k, NULL, NULL, "cannot read: %s",
				    strerror(errno));
			free(buf);
			return AL_E_IO;
		}
	}
	m->copy = buf;
	m->s.p = buf;
	m->s.n = n;
	return AL_OK;
}

static enum al_status map_file(const char *path, const char *shown, struct al_map *m, bool keep_open,
			       al_diags *d)
{
	memset(m, 0, sizeof *m);
	const char *name = shown ? shown : path;
	int fd;
	struct stat st;
	enum al_status rc = ali_open_regular(path, shown, &fd, &st, d);
	if (rc != AL_OK)
		return rc;
	if ((uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		ali_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "file too large");
		return AL_E_IO;
	}
	if (ali_guard_maps()) { /* the test mode: a copy that ends at a PROT_NONE page */
		if (!guarded_read(fd, (size_t)st.st_size, m)) {
			ali_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "cannot read: %s",
				    strerror(errno));
			close(fd);
			return AL_E_IO;
		}
		ali_guard_add(m->s.p, m->s.n, name);
	} else if (st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED && (errno == ENODEV || errno == ENOSYS) && keep_open) {
			/* no mappings of this file system (the WebAssembly build's files),
			 * and a file read by records (weight.bin: ali_map_read): nothing is
			 * read now, s.p is NULL and every read goes through the fd reader,
			 * so a multi-GB weight.bin costs its blob headers only. Who needs
			 * the bytes in memory (ali_mil_blob) is told so. */
			m->s.p = NULL;
			m->s.n = (size_t)st.st_size;
			m->fd = fd;
			m->fd_open = true;
			ali_reader_fd(&m->rd, fd, m->s.n);
			return AL_OK;
		}
		if (p == MAP_FAILED && (errno == ENODEV || errno == ENOSYS)) {
			/* no mappings of this file system: the file read into memory
			 * through its reader (a big protobuf file: its structure only) */
			rc = read_sparse(fd, (size_t)st.st_size, m) ? AL_OK
								    : read_copy(fd, (size_t)st.st_size, name, m, d);
			if (rc != AL_OK) {
				close(fd);
				return rc;
			}
			ali_guard_add(m->s.p, m->s.n, name);
			ali_reader_span(&m->rd, m->s);
			close(fd);
			return AL_OK;
		}
		if (p == MAP_FAILED) {
			ali_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "cannot map: %s",
				    strerror(errno));
			close(fd);
			return AL_E_IO;
		}
		/* Analysis touches layer headers scattered between weights; readahead
		 * would pull the weights in. Measured on a generated 495 MB model (bench/):
		 * a cold check took 376 ms with default readahead, ~10 ms with MADV_RANDOM.
		 * A stage that streams every weight (the interpreter) re-advises. */
		ali_advise_random(p, (size_t)st.st_size);
		ali_guard_add(p, (size_t)st.st_size, name);
		m->base = p;
		m->len = (size_t)st.st_size;
		m->s.p = p;
		m->s.n = m->len;
		ali_reader_span(&m->rd, m->s);
		if (keep_open) {
			m->fd = fd;
			m->fd_open = true;
			ali_reader_fd(&m->rd, fd, m->len);
			return AL_OK;
		}
	}
	close(fd);
	return AL_OK;
}

enum al_status ali_map_file(const char *path, const char *shown, struct al_map *m, al_diags *d)
{
	return map_file(path, shown, m, false, d);
}

enum al_status ali_map_file_open(const char *path, const char *shown, struct al_map *m, al_diags *d)
{
	return map_file(path, shown, m, true, d);
}

bool ali_map_read(const struct al_map *m, uint64_t off, void *buf, size_t n)
{
	if (off > m->s.n || n > m->s.n - off)
		return false;
	if (!m->rd.read_at) { /* a guarded copy, or a map made without a reader */
		struct ali_reader r;
		ali_reader_span(&r, m->s);
		return ali_reader_read(&r, off, buf, n);
	}
	/* the mapping covers the file as it was when mapped: a file that has
	 * shrunk since reads short, and is reported so, never past its end */
	return ali_reader_read(&m->rd, off, buf, n);
}

void ali_unmap(struct al_map *m)
{
	if (m->fd_open)
		close(m->fd);
	ali_guard_remove(m->s.p);
	if (m->base)
		munmap(m->base, m->len);
	if (m->guarded) {
		UNPOISON(m->guarded, m->guarded_len);
		munmap(m->guarded, m->guarded_len);
	}
	free(m->copy);
	memset(m, 0, sizeof *m);
}
