/* base.h: the ground floor every module stands on, and knows nothing of Core ML.
 *
 *   memory      al_malloc (hookable, so tests can fail the Nth allocation) and
 *               arenas (alloc.c).
 *   diagnostics al_diag_add: errors carry file, byte offset, field path, node
 *               (diag.c).
 *   files       al_map_file: read-only mappings of regular files (file.c), and
 *               the registry that tells a fault on one from a bug (guard.c).
 */
#ifndef ANELINT_BASE_H
#define ANELINT_BASE_H

#include "anelint.h"

#include <stdarg.h>
#include <stdio.h>

/* Longest name (of a file, field path or node) kept verbatim in a diagnostic. */
#define AL_MAX_NAME 4096        /* longest name kept verbatim */

/* A borrowed run of bytes (of a mapped file, or a caller's buffer). */
typedef struct al_span {
	const uint8_t *p; /* borrowed; never owned */
	size_t n;
} al_span;

/* ------------------------------------------------------------------ memory */

void *al_malloc(size_t n);
void *al_calloc(size_t n, size_t size);
void *al_realloc(void *p, size_t n);
void al_free(void *p);
/* Fault injection for tests: the Nth allocation from now (1-based) and all
 * later ones fail; 0 disables. Returns the number of allocations made since
 * the last call. */
unsigned long al_alloc_fail_after(unsigned long n);

struct al_arena_chunk;
struct al_arena {
	struct al_arena_chunk *head;
	size_t used, cap;
	bool failed; /* an allocation failed; the owner reports AL_E_NOMEM */
};
void *al_arena_alloc(struct al_arena *a, size_t n);           /* zeroed, 16-aligned */
void *al_arena_array(struct al_arena *a, size_t count, size_t size); /* overflow-checked */
char *al_arena_strndup(struct al_arena *a, const void *s, size_t n);
char *al_arena_span_str(struct al_arena *a, al_span s);
char *al_arena_printf(struct al_arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void al_arena_free(struct al_arena *a);

/* ------------------------------------------------------------------ diagnostics */

#define AL_MAX_DIAGS 200 /* diagnostics kept per al_diags; the rest are counted */
struct al_diags {
	struct al_diag *items;
	size_t n, cap, n_errors;
	size_t n_dropped; /* diagnostics not kept past AL_MAX_DIAGS */
	struct al_arena strings;
};
/* Append a diagnostic; strings are copied. offset UINT64_MAX = none. */
void al_diag_add(al_diags *d, enum al_severity sev, const char *file, uint64_t offset,
		 const char *where, const char *node, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
/* The same with a va_list, for modules that wrap it with their own context. */
void al_diag_vadd(al_diags *d, enum al_severity sev, const char *file, uint64_t offset,
		  const char *where, const char *node, const char *fmt, va_list ap)
	__attribute__((format(printf, 7, 0)));

/* ------------------------------------------------------------------ files */

/* A read-only mapping of a whole file (mmap; an empty file maps to n = 0).
 * `path` is opened; diagnostics name `shown` (the path as the user gave it),
 * or `path` when shown is NULL. */
struct al_map {
	al_span s;
	void *base;
	size_t len;
};
enum al_status al_map_file(const char *path, const char *shown, struct al_map *m, al_diags *d);
void al_unmap(struct al_map *m);
/* The registry of live mappings (guard.c) behind al_mapped_file_at: al_map_file
 * adds each mapping under the name its diagnostics use, al_unmap removes it. */
void al_guard_add(const void *base, size_t len, const char *name);
void al_guard_remove(const void *base);

#endif
