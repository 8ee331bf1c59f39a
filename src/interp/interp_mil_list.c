/* SPDX-License-Identifier: MIT */
/* interp_mil_list.c: the ML Program list ops (make_list, list_length,
 * list_read, list_write, list_gather, list_scatter), the tensor arrays TF
 * programs carry through while_loop bodies.
 *
 * A list value is an AL_TK_LIST tensor, immutable like the others: list_write
 * and list_scatter make a new list sharing the untouched items (a pointer copy
 * per write). Its rank/dims hold the element shape make_list declared (-1 = an
 * unknown dim, rank -1 = unknown), used to read unset items as zeros when the
 * shape is known; an unset item of unknown shape is an error, never a guess.
 */
#include "interp_mil.h"

#include <string.h>

static struct al_tensor *req_list(struct mx *c, const char *param)
{
	struct al_tensor *t = mx_in(c, param);
	if (!t && c->st == AL_OK)
		mx_fail(c, AL_E_FORMAT, "input '%s' is missing", param);
	if (t && t->kind != AL_TK_LIST) {
		mx_fail(c, AL_E_FORMAT, "input '%s' is not a list", param);
		return NULL;
	}
	return t;
}

static struct al_tensor *list_new(struct mx *c, int elem_dtype, int rank, const int64_t *dims)
{
	struct al_tensor *l = ali_tensor_list_new(c->x, c->n, elem_dtype);
	if (!l) {
		c->st = AL_E_NOMEM;
		return NULL;
	}
	l->rank = rank;
	for (int i = 0; i < rank; i++)
		l->dims[i] = dims[i];
	return l;
}

/* A new list with ls's items (length at least `len`). */
static struct al_tensor *list_copy(struct mx *c, const struct al_tensor *ls, size_t len)
{
	struct al_tensor *l = list_new(c, ls->elem_dtype, ls->rank, ls->dims);
	size_t n = ls->n_items > len ? ls->n_items : len;
	if (!l)
		return NULL;
	if (n && !ali_tensor_list_set(c->x, c->n, l, n - 1, n - 1 < ls->n_items ? ls->items[n - 1] : NULL)) {
		ali_tensor_unref(l);
		c->st = c->x->over_budget ? AL_E_UNSUPPORTED : AL_E_NOMEM;
		return NULL;
	}
	for (size_t i = 0; i + 1 < n && i < ls->n_items; i++)
		ali_tensor_list_set(c->x, c->n, l, i, ls->items[i]); /* capacity is there: cannot fail */
	return l;
}

static bool list_index(struct mx *c, const char *param, size_t len, bool grow, size_t *out)
{
	int64_t i;
	if (!mx_int(c, param, INT64_MIN, &i))
		return false;
	if (i == INT64_MIN) {
		mx_fail(c, AL_E_FORMAT, "input '%s' is missing", param);
		return false;
	}
	if (i < 0 || (!grow && (uint64_t)i >= len) || (uint64_t)i > AL_TENSOR_MAX_ELEMS) {
		mx_fail(c, AL_E_FORMAT, "list index %lld is out of range (length %zu)", (long long)i, len);
		return false;
	}
	*out = (size_t)i;
	return true;
}

enum al_status mx_make_list(struct mx *c, int arg)
{
	(void)arg;
	char dts[16];
	int64_t len, dims[AL_TENSOR_MAX_RANK];
	if (!mx_int(c, "init_length", 1, &len) || !mx_str(c, "dtype", "fp32", dts, sizeof dts))
		return c->st;
	int dt = mx_dtype_named(dts);
	if (!dt)
		return mx_unsupported(c, "list dtype", dts);
	if (len < 0 || (uint64_t)len > AL_TENSOR_MAX_ELEMS)
		return mx_fail(c, AL_E_FORMAT, "init_length %lld is out of range", (long long)len);
	uint32_t ne = mx_count(c, "elem_shape");
	int rank = ne <= AL_TENSOR_MAX_RANK ? (int)ne : -1;
	for (uint32_t i = 0; i < ne && rank >= 0; i++) {
		al_span b;
		dims[i] = -1; /* a symbolic (string) dim */
		if (ali_mil_param_binding(c->n, "elem_shape", i, &b) == 1) {
			const struct al_tensor *t = mx_in_k(c, "elem_shape", i);
			int64_t d;
			if (!t)
				return c->st;
			if (t->f && t->n == 1 && mx_f2i(t->f[0], &d) && d >= 0)
				dims[i] = d;
		}
	}
	struct al_tensor *l = list_new(c, dt, rank, dims);
	if (!l)
		return c->st;
	c->out[0] = l;
	if (len && !ali_tensor_list_set(c->x, c->n, l, (size_t)len - 1, NULL))
		c->st = c->x->over_budget ? AL_E_UNSUPPORTED : AL_E_NOMEM;
	return c->st;
}

enum al_status mx_list_length(struct mx *c, int arg)
{
	(void)arg;
	const struct al_tensor *ls = req_list(c, "ls");
	struct al_tensor *t = ls ? mx_alloc(c, 0, AL_DT_INT32, 0, NULL) : NULL;
	if (t)
		t->f[0] = (float)ls->n_items;
	return c->st;
}

enum al_status mx_list_write(struct mx *c, int arg)
{
	(void)arg;
	size_t i;
	const struct al_tensor *ls = req_list(c, "ls");
	struct al_tensor *v = ls ? mx_req(c, "value") : NULL;
	if (!v || !list_index(c, "index", ls->n_items, true, &i))
		return c->st;
	struct al_tensor *l = list_copy(c, ls, i + 1);
	if (!l)
		return c->st;
	c->out[0] = l;
	if (!ali_tensor_list_set(c->x, c->n, l, i, v))
		c->st = AL_E_NOMEM;
	return c->st;
}

/* Item i of ls, or NULL (zeros of the element shape are made when known). */
static struct al_tensor *list_item(struct mx *c, const struct al_tensor *ls, size_t i)
{
	if (ls->items[i])
		return al_tensor_ref(ls->items[i]);
	const struct al_tensor *like = NULL;
	for (size_t k = 0; k < ls->n_items && !like; k++)
		like = ls->items[k];
	int rank = like ? like->rank : ls->rank;
	const int64_t *dims = like ? like->dims : ls->dims;
	for (int d = 0; d < rank; d++)
		if (dims[d] < 0)
			rank = -1;
	if (rank < 0) {
		mx_fail(c, AL_E_FORMAT, "list item %zu is read before it is written", i);
		return NULL;
	}
	struct al_tensor *z = mx_alloc(c, UINT32_MAX, like ? like->dtype : ls->elem_dtype, rank, dims);
	return z;
}

enum al_status mx_list_read(struct mx *c, int arg)
{
	(void)arg;
	size_t i;
	const struct al_tensor *ls = req_list(c, "ls");
	if (!ls || !list_index(c, "index", ls->n_items, false, &i))
		return c->st;
	struct al_tensor *t = list_item(c, ls, i);
	if (t)
		c->out[0] = t;
	return c->st;
}

enum al_status mx_list_gather(struct mx *c, int arg)
{
	(void)arg;
	const struct al_tensor *ls = req_list(c, "ls");
	const struct al_tensor *idx = ls ? mx_req(c, "indices") : NULL;
	if (!idx)
		return c->st;
	size_t k = idx->n;
	struct al_tensor **items = ali_calloc(k ? k : 1, sizeof *items);
	if (!items)
		return mx_fail(c, AL_E_NOMEM, "out of memory");
	for (size_t j = 0; j < k && c->st == AL_OK; j++) {
		int64_t i;
		if (!mx_f2i(idx->f[j], &i) || i < 0 || (uint64_t)i >= ls->n_items)
			mx_fail(c, AL_E_FORMAT, "list index %g is out of range (length %zu)",
				(double)idx->f[j], ls->n_items);
		else
			items[j] = list_item(c, ls, (size_t)i);
	}
	const struct al_tensor *e = k && c->st == AL_OK ? items[0] : NULL;
	for (size_t j = 1; e && j < k && c->st == AL_OK; j++)
		if (!mx_same_dims(items[j], e->rank, e->dims))
			mx_fail(c, AL_E_FORMAT, "list items %zu and 0 differ in shape", j);
	if (c->st == AL_OK) {
		int64_t dims[AL_TENSOR_MAX_RANK];
		int rank = e ? e->rank + 1 : 1;
		if (rank > AL_TENSOR_MAX_RANK) {
			mx_fail(c, AL_E_UNSUPPORTED, "list items of rank %d", rank - 1);
		} else {
			dims[0] = (int64_t)k;
			for (int d = 1; d < rank; d++)
				dims[d] = e->dims[d - 1];
			if (!e && ls->rank >= 0 && ls->rank < AL_TENSOR_MAX_RANK) { /* no items: [0, elem] */
				rank = ls->rank + 1;
				for (int d = 1; d < rank; d++)
					dims[d] = ls->dims[d - 1] > 0 ? ls->dims[d - 1] : 0;
			}
			struct al_tensor *t = mx_alloc(c, 0, e ? e->dtype : ls->elem_dtype, rank, dims);
			for (size_t j = 0; t && j < k; j++)
				if (e->n)
					memcpy(t->f + j * e->n, items[j]->f, e->n * sizeof(float));
		}
	}
	for (size_t j = 0; j < k; j++)
		ali_tensor_unref(items[j]);
	ali_free(items);
	return c->st;
}

enum al_status mx_list_scatter(struct mx *c, int arg)
{
	(void)arg;
	const struct al_tensor *ls = req_list(c, "ls");
	const struct al_tensor *idx = ls ? mx_req(c, "indices") : NULL;
	const struct al_tensor *v = idx ? mx_req(c, "value") : NULL;
	if (!v)
		return c->st;
	if (v->rank < 1 || v->dims[0] != (int64_t)idx->n)
		return mx_fail(c, AL_E_FORMAT, "value's first dim must be the %zu indices", idx->n);
	size_t top = 0;
	for (size_t j = 0; j < idx->n; j++) {
		int64_t i;
		if (!mx_f2i(idx->f[j], &i) || i < 0 || (uint64_t)i >= AL_TENSOR_MAX_ELEMS)
			return mx_fail(c, AL_E_FORMAT, "list index %g is out of range", (double)idx->f[j]);
		if ((size_t)i + 1 > top)
			top = (size_t)i + 1;
	}
	struct al_tensor *l = list_copy(c, ls, top);
	if (!l)
		return c->st;
	c->out[0] = l;
	size_t each = idx->n ? v->n / idx->n : 0;
	for (size_t j = 0; j < idx->n && c->st == AL_OK; j++) {
		struct al_tensor *it = mx_alloc(c, UINT32_MAX, v->dtype, v->rank - 1, v->dims + 1);
		if (!it)
			break;
		if (each)
			memcpy(it->f, v->f + j * each, each * sizeof(float));
		if (!ali_tensor_list_set(c->x, c->n, l, (size_t)idx->f[j], it))
			c->st = AL_E_NOMEM;
		ali_tensor_unref(it);
	}
	return c->st;
}
