/* SPDX-License-Identifier: MIT */
/* hashtab.c: the project's one generic hash table, for joins of one list by
 * another (findings by baseline entries, suppressions by rule, ...): open
 * addressing with linear probing over (hash, item) slots. The caller keeps the
 * items in its own array and gives their indexes; the table keeps each item's
 * full 64-bit hash (ali_hash_str / ali_hash_bytes), so a lookup compares hashes
 * first and asks the caller's equality only of the candidates that share it.
 * Load stays at most 1/2, so a lookup is O(1) expected whatever the insertion
 * order. Nothing here prints. */
#include "base.h"

#include <string.h>

#define HASHTAB_MIN 16

static bool hashtab_place(struct ali_slot *v, size_t cap, uint64_t h, size_t item)
{
	size_t mask = cap - 1, at = ali_hashtab_home(h, mask);
	for (size_t probe = 0; probe < cap; probe++) {
		struct ali_slot *s = &v[(at + probe) & mask];
		if (!s->item1) {
			*s = (struct ali_slot){.hash = h, .item1 = item + 1};
			return true;
		}
	}
	return false; /* unreachable at load <= 1/2 */
}

static bool hashtab_grow(struct ali_hashtab *t, size_t want)
{
	size_t cap = t->cap ? t->cap : HASHTAB_MIN;
	while (cap / 2 < want) {
		if (cap > SIZE_MAX / 2 / sizeof(struct ali_slot))
			return false;
		cap *= 2;
	}
	if (cap == t->cap)
		return true;
	struct ali_slot *v = ali_calloc(cap, sizeof *v);
	if (!v)
		return false;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i].item1)
			hashtab_place(v, cap, t->slot[i].hash, t->slot[i].item1 - 1);
	ali_free(t->slot);
	t->slot = v;
	t->cap = cap;
	return true;
}

bool ali_hashtab_reserve(struct ali_hashtab *t, size_t n)
{
	return hashtab_grow(t, n);
}

bool ali_hashtab_add(struct ali_hashtab *t, uint64_t hash, size_t item)
{
	if (item == SIZE_MAX || !hashtab_grow(t, t->n + 1))
		return false;
	if (!hashtab_place(t->slot, t->cap, hash, item))
		return false;
	t->n++;
	return true;
}

size_t ali_hashtab_next(const struct ali_hashtab *t, uint64_t hash, size_t *cursor,
			bool (*eq)(size_t item, const void *key, void *ctx), const void *key, void *ctx)
{
	if (!t->cap)
		return SIZE_MAX;
	size_t mask = t->cap - 1, at = ali_hashtab_home(hash, mask);
	for (size_t probe = *cursor; probe < t->cap; probe++) {
		const struct ali_slot *s = &t->slot[(at + probe) & mask];
		if (!s->item1)
			break;
		if (s->hash == hash && (!eq || eq(s->item1 - 1, key, ctx))) {
			*cursor = probe + 1;
			return s->item1 - 1;
		}
	}
	*cursor = t->cap;
	return SIZE_MAX;
}

void ali_hashtab_clear(struct ali_hashtab *t)
{
	if (t->cap)
		memset(t->slot, 0, t->cap * sizeof *t->slot);
	t->n = 0;
}

bool ali_hashtab_name_eq(size_t item, const void *key, void *ctx)
{
	const char *const *names = ctx;
	return strcmp(names[item], key) == 0;
}

void ali_hashtab_free(struct ali_hashtab *t)
{
	ali_free(t->slot);
	memset(t, 0, sizeof *t);
}
