/* SPDX-License-Identifier: MIT */
/* names.c: ali_first_repeat, which finds a name given twice in a list (the
 * features of a model description, a function's inputs, the functions of a
 * program) in n log n, so the loaders can refuse what Core ML refuses. */
#include "base.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
struct name_at {
	al_span s;
	size_t i;
};

static bool same_name(al_span a, al_span b)
{
	return a.n == b.n && (!a.n || memcmp(a.p, b.p, a.n) == 0);
}

static int name_at_cmp(const void *a, const void *b)
{
	const struct name_at *x = a, *y = b;
	size_t n = x->s.n < y->s.n ? x->s.n : y->s.n;
	int c = n ? memcmp(x->s.p, y->s.p, n) : 0;
	if (c)
		return c;
	if (x->s.n != y->s.n)
		return x->s.n < y->s.n ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

enum al_status ali_first_repeat(const al_span *names, size_t n, size_t *first, size_t *again)
{
	*first = *again = SIZE_MAX;
	if (n < 2)
		return AL_OK;
	/* n is bounded by the bytes holding the names */
	struct name_at *v = n <= SIZE_MAX / sizeof *v ? ali_malloc(n * sizeof *v) : NULL;
	if (!v)
		return AL_E_NOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = (struct name_at){names[i], i};
	qsort(v, n, sizeof *v, name_at_cmp);
	/* a run of equal names is in index order: [0] the first, [1] its first repeat */
	size_t start = 0;
	for (size_t k = 1; k <= n; k++) {
		if (k < n && same_name(v[k].s, v[start].s))
			continue;
		if (k - start >= 2 && v[start + 1].i < *again) {
			*again = v[start + 1].i;
			*first = v[start].i;
		}
		start = k;
	}
	ali_free(v);
	return AL_OK;
}

