/* SPDX-License-Identifier: MIT */
/* alloc.c: the library's one allocator (hookable, so tests can fail the Nth
 * allocation) and arenas: objects that live as long as their owner and are freed
 * all at once. Nothing here knows about Core ML. */
#include "base.h"

#include <stdlib.h>
#include <string.h>

/* ================================================================ allocation */

static unsigned long alloc_count, alloc_fail_at;

unsigned long ali_alloc_fail_after(unsigned long n)
{
	unsigned long made = alloc_count;
	alloc_count = 0;
	alloc_fail_at = n;
	return made;
}

static bool alloc_should_fail(void)
{
	alloc_count++;
	return alloc_fail_at && alloc_count >= alloc_fail_at;
}

void *ali_malloc(size_t n)
{
	return alloc_should_fail() ? NULL : malloc(n ? n : 1);
}

void *ali_calloc(size_t n, size_t size)
{
	return alloc_should_fail() ? NULL : calloc(n ? n : 1, size ? size : 1);
}

void *ali_realloc(void *p, size_t n)
{
	return alloc_should_fail() ? NULL : realloc(p, n ? n : 1);
}

void ali_free(void *p)
{
	free(p);
}

/* ================================================================ arena */

struct al_arena_chunk {
	struct al_arena_chunk *next;
	size_t cap, used;
	_Alignas(16) unsigned char data[];
};

#define ARENA_CHUNK (64 * 1024)
#define ARENA_CHUNK_MAX (4 * 1024 * 1024)

void *ali_arena_alloc(struct al_arena *a, size_t n)
{
	/* Every arena allocation is a fault-injection point, not only the ones
	 * that need a new chunk: that takes test_faults from a handful of failure
	 * points per fixture to every allocation in load and check. */
	if (alloc_should_fail()) {
		a->failed = true;
		return NULL;
	}
	n = (n + 15) & ~(size_t)15;
	if (n == 0)
		n = 16;
	struct al_arena_chunk *c = a->head;
	if (!c || c->cap - c->used < n) {
		/* chunks grow with the arena (half of what it holds, up to
		 * ARENA_CHUNK_MAX): an LLM's 24 MB take ~30 chunks instead of
		 * ~370, and chunks past malloc's mmap threshold come as fresh
		 * zero pages, which calloc need not clear */
		size_t cap = a->cap / 2;
		if (cap < ARENA_CHUNK)
			cap = ARENA_CHUNK;
		if (cap > ARENA_CHUNK_MAX)
			cap = ARENA_CHUNK_MAX;
		if (cap < n)
			cap = n;
		if (cap > SIZE_MAX - sizeof *c) {
			a->failed = true;
			return NULL;
		}
		/* zeroed once per chunk (fresh pages from calloc are already zero),
		 * not per allocation: nothing is ever handed out twice */
		c = ali_calloc(1, sizeof *c + cap);
		if (!c) {
			a->failed = true;
			return NULL;
		}
		if (cap >= ARENA_CHUNK_MAX / 2) /* untouched yet: 2 MB pages, if any */
			ali_advise_huge(c->data, cap);
		c->cap = cap;
		c->used = 0;
		c->next = a->head;
		a->head = c;
		a->cap += cap;
	}
	void *p = c->data + c->used;
	c->used += n;
	a->used += n;
	return p;
}

void *ali_arena_array(struct al_arena *a, size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size) {
		a->failed = true;
		return NULL;
	}
	return ali_arena_alloc(a, count * size);
}

char *ali_arena_strndup(struct al_arena *a, const void *s, size_t n)
{
	if (n == SIZE_MAX)
		return NULL;
	char *p = ali_arena_alloc(a, n + 1);
	if (p && n)
		memcpy(p, s, n);
	return p;
}

char *ali_arena_span_str(struct al_arena *a, al_span s)
{
	return ali_arena_strndup(a, s.p, s.n);
}

char *ali_arena_printf(struct al_arena *a, const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *p = n < 0 ? NULL : ali_arena_alloc(a, (size_t)n + 1);
	if (p)
		vsnprintf(p, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	return p;
}

void ali_arena_free(struct al_arena *a)
{
	struct al_arena_chunk *c = a->head;
	while (c) {
		struct al_arena_chunk *next = c->next;
		ali_free(c);
		c = next;
	}
	memset(a, 0, sizeof *a);
}

