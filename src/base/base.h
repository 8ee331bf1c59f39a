/* SPDX-License-Identifier: MIT */
/* base.h: the ground floor every module stands on, and knows nothing of Core ML.
 *
 *   memory      ali_malloc (hookable, so tests can fail the Nth allocation) and
 *               arenas (alloc.c).
 *   diagnostics ali_diag_add: errors carry file, byte offset, field path, node
 *               (diag.c).
 *   files       ali_open_regular: the one way a file is opened for reading;
 *               ali_map_file: read-only mappings of regular files (file.c);
 *               in the guard-page test mode each ends right before a PROT_NONE
 *               page, so a parser reading past the end faults.
 *               ali_write_all, al_atomic_*: the one way an output is written:
 *               a temporary beside it, fsync, rename (atomic.c).
 *   utilities   ali_hash_str (FNV-1a 64), al_rd32le (hash.c); ali_hashtab: the one
 *               generic hash table (hashtab.c).
 *               al_buf: the one growable buffer, with printf onto its end;
 *               ali_strdup; ali_dims_str: the one formatter of dimensions (text.c).
 *               ali_span_u64/i64/double: numbers read from a span bounded by
 *               its length, never by a terminator (span_num.c).
 *               the registry that tells a fault on a mapping from a bug (guard.c).
 */
#ifndef ANELINT_BASE_H
#define ANELINT_BASE_H

#include "anelint.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Longest name (of a file, field path or node) kept verbatim in a diagnostic. */
#define AL_MAX_NAME 4096        /* longest name kept verbatim */

/* A borrowed run of bytes (of a mapped file, or a caller's buffer). */
typedef struct al_span {
	const uint8_t *p; /* borrowed; never owned */
	size_t n;
} al_span;

/* ------------------------------------------------------------------ memory */

void *ali_malloc(size_t n);
void *ali_calloc(size_t n, size_t size);
void *ali_realloc(void *p, size_t n);
void ali_free(void *p);
/* Fault injection for tests: the Nth allocation from now (1-based) and all
 * later ones fail; 0 disables. Returns the number of allocations made since
 * the last call. */
unsigned long ali_alloc_fail_after(unsigned long n);

struct al_arena_chunk;
struct al_arena {
	struct al_arena_chunk *head;
	size_t used, cap;
	bool failed; /* an allocation failed; the owner reports AL_E_NOMEM */
};
void *ali_arena_alloc(struct al_arena *a, size_t n);           /* zeroed, 16-aligned */
void *ali_arena_array(struct al_arena *a, size_t count, size_t size); /* overflow-checked */
char *ali_arena_strndup(struct al_arena *a, const void *s, size_t n);
char *ali_arena_span_str(struct al_arena *a, al_span s);
char *ali_arena_printf(struct al_arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ali_arena_free(struct al_arena *a);

/* ------------------------------------------------------------------ names (names.c)
 * The first name of names[0..n) that repeats an earlier one: *again its index
 * (the smallest such), *first the index of its first occurrence; both SIZE_MAX
 * when every name is distinct. O(n log n); AL_E_NOMEM when the scratch array
 * cannot be allocated. */
enum al_status ali_first_repeat(const al_span *names, size_t n, size_t *first, size_t *again);

/* ------------------------------------------------------------------ diagnostics */

#define AL_MAX_DIAGS 200 /* diagnostics kept per al_diags; the rest are counted */
struct al_diags {
	struct al_diag *items;
	size_t n, cap, n_errors;
	size_t n_dropped; /* diagnostics not kept past AL_MAX_DIAGS */
	struct al_arena strings;
};
/* Append a diagnostic; strings are copied. offset UINT64_MAX = none. */
void ali_diag_add(al_diags *d, enum al_severity sev, const char *file, uint64_t offset,
		 const char *where, const char *node, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
/* The same with a va_list, for modules that wrap it with their own context. */
void ali_diag_vadd(al_diags *d, enum al_severity sev, const char *file, uint64_t offset,
		  const char *where, const char *node, const char *fmt, va_list ap)
	__attribute__((format(printf, 7, 0)));

/* ------------------------------------------------------------------ files */

/* The one way the library reads a span of a file at an offset (file.c): n bytes
 * at off into buf; true when all n were read, false when [off, off + n) is not
 * inside the file, the read failed or came up short (the file shrank). Three
 * implementations: a copy out of a mapping (mmap) or of a copy in memory; pread
 * on the open file; and in the WebAssembly page the same pread on a file of
 * emscripten's WORKERFS, which reads a File.slice with FileReaderSync in the
 * page's worker (web/worker.js, docs/web.md), so only that span leaves the disk. */
struct ali_reader {
	bool (*read_at)(const struct ali_reader *r, uint64_t off, void *buf, size_t n);
	const uint8_t *p; /* the bytes (ali_reader_span) */
	int fd;           /* the file (ali_reader_fd) */
	uint64_t size;    /* bytes readable: reads past it fail */
};
void ali_reader_span(struct ali_reader *r, al_span s);
void ali_reader_fd(struct ali_reader *r, int fd, uint64_t size);
/* r->read_at after the bounds check. */
bool ali_reader_read(const struct ali_reader *r, uint64_t off, void *buf, size_t n);

/* A read-only mapping of a whole file (mmap; an empty file maps to n = 0).
 * `path` is opened; diagnostics name `shown` (the path as the user gave it),
 * or `path` when shown is NULL. Where files cannot be mapped (mmap fails with
 * ENODEV or ENOSYS: the WebAssembly build, whose files are emscripten's) the
 * file is read into memory through its reader instead (`copy`); a file kept
 * open (ali_map_file_open: weight.bin) is not read at all: s.p is NULL, s.n its
 * size, and only ali_map_read (pread through the reader) reaches its bytes. */
struct al_map {
	al_span s;
	void *base; /* the file mapping (NULL for an empty file or a guarded copy) */
	size_t len;
	void *guarded;     /* guard-page mode: the anonymous region holding the copy */
	size_t guarded_len;
	int fd;            /* ali_map_file_open: the file, kept open for ali_map_read */
	bool fd_open;      /* false: fd means nothing (a zeroed al_map has none) */
	void *copy;        /* the file read into memory where it could not be mapped */
	struct ali_reader rd; /* how ali_map_read reads: pread when fd_open, else from s */
};
enum al_status ali_map_file(const char *path, const char *shown, struct al_map *m, al_diags *d);
/* ali_map_file, keeping the file open so that small records can be read with
 * pread (ali_map_read) instead of through the mapping: a fault on a mapping maps
 * the neighbouring pages the page cache holds too (fault-around), so what a few
 * 64-byte reads add to RSS would depend on the page cache's state. Not kept in
 * the guard-page mode (the copy is read instead) or for an empty file. */
enum al_status ali_map_file_open(const char *path, const char *shown, struct al_map *m, al_diags *d);
/* n bytes at offset off of the mapped file into buf, through m->rd: pread when m
 * keeps the file open, else a copy from m->s. False when [off, off + n) is not inside m->s, or
 * the read failed or came up short (the file shrank). */
bool ali_map_read(const struct al_map *m, uint64_t off, void *buf, size_t n);
void ali_unmap(struct al_map *m);
/* The guard-page test mode: on when the environment has ANELINT_GUARD_MAPS=1 (read
 * once, at the first call) or the library was built with -DAL_GUARD_MAPS. Then
 * ali_map_file copies each file into anonymous memory whose last readable byte is
 * the file's last byte, followed by a PROT_NONE page (an empty file: s.p points at
 * that page), and the text parsers (MIL text, .npy, evidence, rules, configuration)
 * read their caller's buffer through such a copy too: a read one byte past the end
 * faults every time, where ASan cannot see it (past an mmap, or inside libc). */
bool ali_guard_maps(void);
/* p[0..n) copied into a region ending right before a PROT_NONE page, as above,
 * whatever the mode (for tests and fuzzers); ali_unmap frees it. AL_E_NOMEM (and
 * *m zeroed) when the system has no anonymous mappings or memory ran out. */
enum al_status ali_map_guarded_copy(const void *p, size_t n, struct al_map *m);
/* The bytes a parser should read: `s` itself, or in the guard-page mode a guarded
 * copy of it kept in *m (zeroed otherwise); ali_unmap(m) when done, either way. */
al_span ali_guard_span(al_span s, struct al_map *m);
/* Open `path` for reading (O_RDONLY | O_NOCTTY | O_CLOEXEC; opened O_NONBLOCK,
 * then cleared) and fstat it into *st (when not NULL). Anything but a regular
 * file (FIFO, device, directory) is refused: AL_E_IO with a diagnostic naming
 * `shown` (or `path`). On success *fd is open and owned by the caller. */
enum al_status ali_open_regular(const char *path, const char *shown, int *fd, struct stat *st,
			       al_diags *d);

/* ------------------------------------------------------------------ outputs */

/* Write all n bytes to fd, retrying short writes and EINTR; false with errno. */
bool ali_write_all(int fd, const void *p, size_t n);

/* An output made atomically: a temporary file (or directory) in the target's
 * directory, filled by the caller, fsynced and renamed over the target by
 * ali_atomic_commit. Modes are those of a plain create: files 0666 & ~umask,
 * directories 0777 & ~umask. On any failure ali_atomic_abort removes the
 * temporary (recursively for a directory), so no partial output is left. */
struct al_atomic {
	char *dest;   /* owned copy of the target path */
	char *tmp;    /* owned path of the temporary; NULL once committed or aborted */
	int fd;       /* the temporary file, or -1 (a directory, or closed) */
	bool dir;
	bool replace; /* commit may replace an existing target directory */
};
/* Begin: create the temporary. dir: a directory, else a file opened on a->fd. */
enum al_status ali_atomic_begin(struct al_atomic *a, const char *dest, bool dir, al_diags *d);
/* Finish: close the file (fsync it first, or the directory's files, when
 * writes are durable), rename
 * over dest. An existing dest directory is replaced only when a->replace is
 * set (moved aside, then removed once the new one is in place). On failure
 * the temporary is removed and the target left as it was. */
enum al_status ali_atomic_commit(struct al_atomic *a, al_diags *d);
/* fsync(fd) when durable writes are on (al_set_durable_writes), else 0. */
int ali_sync_fd(int fd);
bool ali_durable_writes(void);
/* Abandon: remove the temporary (no-op after commit, and on a zeroed struct).
 * Safe to call twice. */
void ali_atomic_abort(struct al_atomic *a);
/* Write one file atomically: fill(fd, ctx) writes its bytes (returns false,
 * with errno, on failure). */
enum al_status ali_write_atomic(const char *path, bool (*fill)(int fd, void *ctx), void *ctx,
			       al_diags *d);
/* The same for bytes in memory: p[0..n). */
enum al_status ali_write_atomic_bytes(const char *path, const void *p, size_t n, al_diags *d);
/* ------------------------------------------------------------------ platform (platform.c)
 * Calls only some systems have, behind feature checks with portable fallbacks
 * (forced by -DAL_PORTABLE). ali_rename_exchange / ali_copy_file_range return
 * -1 with errno ENOSYS where the system has no such call. */
bool ali_platform_portable(void); /* true when the fallbacks are in use */
int ali_rename_exchange(const char *a, const char *b);
long long ali_copy_file_range(int in_fd, uint64_t off, int out_fd, size_t n);
/* A private, writable mapping of n + extra bytes: the first n those of fd
 * (n > 0; file pages shared with the page cache until written: copy-on-write),
 * the rest zeros. NULL with errno (ENOSYS where the system has no anonymous
 * mappings: the caller copies instead). Unmapped by ali_unmap_cow(p, n + extra). */
void *ali_map_cow(int fd, size_t n, size_t extra);
void ali_unmap_cow(void *p, size_t len);
/* Start writing fd's dirty pages to the device, without waiting (a hint: the
 * fsync that follows a long copy then waits for less). Callers ask only when
 * writes are durable (ali_durable_writes): otherwise no fsync follows, and pages
 * under writeback only slow the next chunk's copy. No-op where unknown. */
void ali_writeback_start(int fd);
void ali_advise_random(void *p, size_t n);   /* readahead would pull in weights */
void ali_advise_dontneed(void *p, size_t n); /* drop clean pages of a file mapping */
void ali_advise_huge(void *p, size_t n);     /* back untouched anonymous memory by huge pages */
/* Page faults this process has taken so far (every thread): a mapping gains
 * resident pages only through faults, so an unchanged count means none came
 * in. False where the system does not count them (AL_PORTABLE builds). */
bool ali_fault_count(uint64_t *out);
void ali_keep_freed_memory(void); /* glibc: no heap trimming per op (mallopt) */
/* A shared library loaded at run time (dlopen, RTLD_NOW | RTLD_LOCAL: its symbols
 * stay its own) and its functions; NULL where it is absent, a symbol is missing
 * or the system has no dynamic loader (built with -DAL_NO_DLOPEN). */
typedef void (*ali_dl_fn)(void);
void *ali_dl_open(const char *name);
ali_dl_fn ali_dl_sym(void *lib, const char *name); /* cast to the function's own type */
void ali_dl_close(void *lib);
/* Sort with a context pointer (qsort_r differs between glibc and BSD/macOS). */
void ali_sort_r(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *),
		void *ctx);

/* Copy n bytes of in_fd from offset off to out_fd's current position,
 * keeping the input's holes as holes (SEEK_DATA/SEEK_HOLE) where the system
 * has them, the data in the kernel (ali_copy_file_range) where it can, else
 * through a buffer; false with errno on failure (a short input is an error). */
bool ali_copy_range(int in_fd, uint64_t off, uint64_t n, int out_fd);
/* Whether copies keep holes: false when built with -DAL_NO_SEEK_HOLE, on a
 * system without SEEK_DATA, or after ali_copy_force_dense(true) (for tests;
 * returns the previous setting). */
bool ali_copy_keeps_holes(void);
bool ali_copy_force_dense(bool on);
/* A file with fewer bytes allocated than its size (holes). */
bool ali_file_is_sparse(const struct stat *st);
/* Whether writing n_out dense bytes for the sparse input `in` is within
 * budget: a copy that cannot keep holes writes at most AL_DENSE_BUDGET bytes
 * or 16 times what the input really holds, so an 8 GB file of 28 KB on disk
 * does not fill the disk. Always true when holes are kept or `in` is dense. */
#define AL_DENSE_BUDGET (UINT64_C(64) << 20)
bool ali_copy_dense_ok(const struct stat *in, uint64_t n_out);
/* Remove a file or a directory tree (best effort; does not follow links). */
void ali_remove_tree(const char *path);

/* ------------------------------------------------------------------ utilities */

/* The one string hash: FNV-1a, 64 bit, of the bytes before the NUL (NULL
 * hashes as ""). Hash tables take the low bits; al_random_input's seeds per
 * input name depend on its exact values. The offset basis is the one the
 * copies it replaces used, 1469598103934665603: a tenth (one digit short) of
 * FNV's 14695981039346656037. It mixes as well; it is kept because changing
 * it would change every random input, and so golden outputs. */
uint64_t ali_hash_str(const char *s);
/* The same over n bytes, continuing from h (start with AL_HASH_INIT). */
#define AL_HASH_INIT UINT64_C(1469598103934665603)
uint64_t ali_hash_bytes(uint64_t h, const void *p, size_t n);
/* Numbers at the start of s[0..n), bounded by n: no terminator is read or needed
 * (span_num.c). Each returns the count of bytes that form the number (0 when s
 * does not start with one) and stores the value only when it fits.
 *   ali_span_u64: decimal digits; 0 also when the value exceeds max.
 *   ali_span_i64: an optional sign ('+' or '-') and decimal digits, in [min, max].
 *   ali_span_double: what strtod reads (decimal or hex, inf, nan; no leading
 *   blanks) from a NUL-terminated copy of at most AL_SPAN_NUM_MAX bytes. */
#define AL_SPAN_NUM_MAX 127
size_t ali_span_u64(const char *s, size_t n, uint64_t max, uint64_t *v);
size_t ali_span_i64(const char *s, size_t n, int64_t min, int64_t max, int64_t *v);
size_t ali_span_double(const char *s, size_t n, double *v);


/* The one generic hash table (hashtab.c): items are the caller's indexes
 * (0..SIZE_MAX-2), kept with their 64-bit hash; open addressing, load <= 1/2.
 * Zero-initialise, add, look up, free. eq(item, key, ctx) says whether a
 * candidate of the same hash is the key (NULL: the hash alone decides). */
struct ali_slot {
	uint64_t hash;
	size_t item1; /* the item + 1; 0: empty */
};
struct ali_hashtab {
	struct ali_slot *slot;
	size_t cap, n;
};
bool ali_hashtab_reserve(struct ali_hashtab *t, size_t n); /* room for n items without growing */
bool ali_hashtab_add(struct ali_hashtab *t, uint64_t hash, size_t item); /* false: out of memory */
/* The slot a hash starts at: its bits mixed (a 64-bit finaliser), because the
 * low bits of FNV-1a depend only on the low bits of the bytes hashed, and
 * linear probing clusters on such keys ("L1", "L2", ...). */
static inline size_t ali_hashtab_home(uint64_t h, size_t mask)
{
	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64_C(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return (size_t)h & mask;
}
/* The first item of that hash eq accepts, or SIZE_MAX. Inline, so that a
 * caller's eq (a static function) is inlined into its lookups: the name
 * tables of shape inference, the plan and the interpreter are hot. */
static inline size_t ali_hashtab_find(const struct ali_hashtab *t, uint64_t hash,
				      bool (*eq)(size_t item, const void *key, void *ctx),
				      const void *key, void *ctx)
{
	size_t mask = t->cap - 1;
	for (size_t probe = 0, at = t->cap ? ali_hashtab_home(hash, mask) : 0; probe < t->cap;
	     probe++, at = (at + 1) & mask) {
		const struct ali_slot *s = &t->slot[at];
		if (!s->item1)
			break;
		if (s->hash == hash && (!eq || eq(s->item1 - 1, key, ctx)))
			return s->item1 - 1;
	}
	return SIZE_MAX;
}
/* Every such item in turn: *cursor starts at 0; SIZE_MAX after the last. */
size_t ali_hashtab_next(const struct ali_hashtab *t, uint64_t hash, size_t *cursor,
			bool (*eq)(size_t item, const void *key, void *ctx), const void *key, void *ctx);
void ali_hashtab_clear(struct ali_hashtab *t); /* no items, the room kept */
void ali_hashtab_free(struct ali_hashtab *t);
/* eq for a table whose items index an array of NUL-terminated names: ctx is
 * that array (const char *const *), key the name looked up. */
bool ali_hashtab_name_eq(size_t item, const void *key, void *ctx);
/* ------------------------------------------------------------------ text (text.c) */

/* The one growable buffer (bytes or text; not NUL-terminated). Zero-initialise,
 * append, free. */
struct al_buf {
	uint8_t *p;
	size_t n, cap;
	bool failed; /* an allocation failed; every later append is a no-op */
};
void ali_buf_free(struct al_buf *b);
void ali_buf_put(struct al_buf *b, const void *p, size_t n);
/* printf onto the end of b, whatever the length (b->failed when it cannot grow) */
void ali_buf_printf(struct al_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A heap copy of s (ali_malloc; free with ali_free), or NULL. */
char *ali_strdup(const char *s);
/* Dimensions as text: "[1,3,224,224]" by default; the style flags change the
 * separator to ", " (AL_DIMS_SPACED), print a negative dimension as "?"
 * (AL_DIMS_QUERY, else as its number) and leave out the brackets
 * (AL_DIMS_BARE). Each caller keeps the style its output always had. */
enum { AL_DIMS_SPACED = 1, AL_DIMS_QUERY = 2, AL_DIMS_BARE = 4 };
/* Into buf, cut to cap - 1 bytes and NUL-terminated (cap > 0); returns the
 * full text's length (as snprintf). */
size_t ali_dims_str(char *buf, size_t cap, const int64_t *dims, size_t rank, unsigned style);
void ali_dims_fput(FILE *out, const int64_t *dims, size_t rank, unsigned style);
void ali_buf_dims(struct al_buf *b, const int64_t *dims, size_t rank, unsigned style);

/* Little-endian unsigned 32 and 64-bit reads from unaligned bytes. */
static inline uint32_t al_rd32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t al_rd64le(const uint8_t *p)
{
	return (uint64_t)al_rd32le(p) | (uint64_t)al_rd32le(p + 4) << 32;
}

/* The registry of live mappings (guard.c) behind al_mapped_file_at: ali_map_file
 * adds each mapping under the name its diagnostics use, ali_unmap removes it. */
void ali_guard_add(const void *base, size_t len, const char *name);
void ali_guard_remove(const void *base);

#endif
