/* SPDX-License-Identifier: MIT */
/* tensor.c: the interpreter's values. A tensor is refcounted and, once an op has
 * produced it, never written again while anyone else can see it (fp16 rounding
 * in exec.c runs before anyone else sees the tensor; an ML Program op may write
 * into a value that it reads last and nothing else holds: mx_take). A view
 * (ali_tensor_view) shares another tensor's values. The environment maps
 * value names to tensors, with a parent chain for nested blocks.
 *
 * Every allocation goes through ali_malloc (fault injection reaches it) and is
 * counted against the run's byte budget (al_exec.max_bytes), so a hostile shape
 * in a 1 KB file is a clean error, never gigabytes. Nothing here does maths. */
#include "interp.h"

#include <stdlib.h>
#include <string.h>

bool ali_dims_count(int rank, const int64_t *dims, size_t *out)
{
	if (rank < 0 || rank > AL_TENSOR_MAX_RANK)
		return false;
	size_t n = 1;
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0 || (uint64_t)dims[i] > AL_TENSOR_MAX_ELEMS)
			return false;
		if (dims[i] != 0 && n > AL_TENSOR_MAX_ELEMS / (size_t)dims[i])
			return false;
		n *= (size_t)dims[i];
	}
	*out = n;
	return true;
}

/* Reserve `bytes` of the run's budget; false (with a diagnostic) when over it. */
static bool budget_take(struct al_exec *x, const struct al_node *n, size_t bytes)
{
	if (!x)
		return true;
	/* what the caller holds meanwhile (inputs, an earlier run's outputs, the values
	 * its observer keeps) shares the budget: al_run_opts.held_bytes */
	uint64_t held = x->opts && x->opts->held_bytes ? *x->opts->held_bytes : 0;
	if (held > x->max_bytes || x->bytes_live + bytes > x->max_bytes - held) {
		if (!x->over_budget && held)
			ali_exec_fail(x, n, AL_E_UNSUPPORTED,
				     "needs more than the %llu MB of activations allowed "
				     "(%llu MB live, %llu MB held by the caller, %llu MB more asked)",
				     (unsigned long long)(x->max_bytes >> 20),
				     (unsigned long long)(x->bytes_live >> 20),
				     (unsigned long long)(held >> 20), (unsigned long long)(bytes >> 20));
		else if (!x->over_budget)
			ali_exec_fail(x, n, AL_E_UNSUPPORTED,
				     "needs more than the %llu MB of activations allowed "
				     "(%llu MB live, %llu MB more asked)",
				     (unsigned long long)(x->max_bytes >> 20),
				     (unsigned long long)(x->bytes_live >> 20),
				     (unsigned long long)(bytes >> 20));
		x->over_budget = true;
		return false;
	}
	x->bytes_live += bytes;
	if (x->bytes_live > x->bytes_peak)
		x->bytes_peak = x->bytes_live;
	return true;
}

static struct al_tensor *shell(struct al_exec *x, const struct al_node *n, int dtype, int rank,
			       const int64_t *dims, size_t *count)
{
	if (!ali_dims_count(rank, dims, count)) {
		if (x)
			ali_exec_fail(x, n, AL_E_UNSUPPORTED, "a tensor of rank %d with these dims is "
					 "too large or invalid (at most 2^32 elements, rank <= %d)",
				     rank, AL_TENSOR_MAX_RANK);
		return NULL;
	}
	struct al_tensor *t = ali_calloc(1, sizeof *t);
	if (!t) {
		if (x)
			ali_exec_fail(x, n, AL_E_NOMEM, "out of memory");
		return NULL;
	}
	t->kind = AL_TK_TENSOR;
	t->dtype = dtype ? dtype : AL_DT_FP32;
	t->rank = rank;
	for (int i = 0; i < rank; i++)
		t->dims[i] = dims[i];
	t->n = *count;
	t->refs = 1;
	return t;
}

struct zero_job {
	char *p;
	size_t bytes;
};

static void zero_part(void *arg, int part, int parts)
{
	const struct zero_job *j = arg;
	size_t a = j->bytes / 64 * (size_t)part / (size_t)parts * 64,
	       b = part + 1 == parts ? j->bytes : j->bytes / 64 * (size_t)(part + 1) / (size_t)parts * 64;
	memset(j->p + a, 0, b - a);
}

/* A kept buffer of exactly `bytes`, zeroed (over the pool when big) unless
 * !zero, or NULL. */
static float *bufs_take(struct al_exec *x, size_t bytes, bool zero)
{
	struct ali_bufs *b = x ? x->bufs : NULL;
	if (!b || bytes < ALI_BUFS_MIN)
		return NULL;
	for (size_t i = b->n; i-- > 0;)
		if (b->v[i].bytes == bytes) {
			float *p = b->v[i].p;
			b->v[i] = b->v[--b->n];
			b->held -= bytes;
			struct zero_job j = {(char *)p, bytes};
			if (zero)
				ali_pool_run(ali_pool_parts((double)bytes, 0.05), zero_part, &j);
			return p;
		}
	return NULL;
}

/* Keep t's buffer for a later tensor of its size; false: free it. */
static bool bufs_keep(struct al_tensor *t)
{
	struct ali_bufs *b = t->owner ? t->owner->bufs : NULL;
	if (!b || !t->f || t->borrowed || t->bytes < ALI_BUFS_MIN || b->n == ALI_BUFS_MAX ||
	    t->bytes > ALI_BUFS_BYTES - b->held)
		return false;
	b->v[b->n].bytes = t->bytes;
	b->v[b->n].p = t->f;
	b->n++;
	b->held += t->bytes;
	return true;
}

void ali_bufs_clear(struct ali_bufs *b)
{
	for (size_t i = 0; i < b->n; i++)
		ali_free(b->v[i].p);
	b->n = 0;
	b->held = 0;
}

static struct al_tensor *tensor_alloc(struct al_exec *x, const struct al_node *n, int dtype,
				      int rank, const int64_t *dims, bool zero)
{
	size_t count;
	struct al_tensor *t = shell(x, n, dtype, rank, dims, &count);
	if (!t)
		return NULL;
	size_t each = t->dtype == AL_DT_STRING ? sizeof(char *) : sizeof(float);
	size_t bytes = (count ? count : 1) * each;
	if (!budget_take(x, n, bytes)) {
		ali_free(t);
		return NULL;
	}
	t->bytes = bytes;
	t->owner = x;
	if (t->dtype == AL_DT_STRING)
		t->s = ali_calloc(count ? count : 1, sizeof(char *));
	else if (!(t->f = bufs_take(x, bytes, zero)))
		t->f = zero ? ali_calloc(count ? count : 1, sizeof(float)) : ali_malloc(bytes);
	if (!t->s && !t->f) {
		if (x)
			ali_exec_fail(x, n, AL_E_NOMEM, "out of memory (%zu bytes)", bytes);
		ali_tensor_unref(t);
		return NULL;
	}
	return t;
}

struct al_tensor *ali_tensor_alloc(struct al_exec *x, const struct al_node *n, int dtype, int rank,
				  const int64_t *dims)
{
	return tensor_alloc(x, n, dtype, rank, dims, true);
}

struct al_tensor *ali_tensor_alloc_raw(struct al_exec *x, const struct al_node *n, int dtype,
				      int rank, const int64_t *dims)
{
	return tensor_alloc(x, n, dtype, rank, dims, dtype == AL_DT_STRING);
}

struct al_tensor *ali_tensor_borrow(struct al_exec *x, const struct al_node *n, int dtype, int rank,
				   const int64_t *dims, const float *data)
{
	size_t count;
	struct al_tensor *t = shell(x, n, dtype, rank, dims, &count);
	if (!t)
		return NULL;
	t->f = (float *)data; /* never written: borrowed tensors are weights */
	t->borrowed = true;
	return t;
}

struct al_tensor *ali_tensor_view(struct al_exec *x, const struct al_node *n, struct al_tensor *t,
				 int dtype, int rank, const int64_t *dims)
{
	size_t count;
	if (!ali_dims_count(rank, dims, &count) || count != t->n || t->kind != AL_TK_TENSOR || !t->f ||
	    t->s) {
		ali_exec_fail(x, n, AL_E_FORMAT, "cannot view %zu values in this shape", t->n);
		return NULL;
	}
	struct al_tensor *v = shell(x, n, dtype, rank, dims, &count);
	if (!v)
		return NULL;
	v->f = t->f;
	v->borrowed = t->borrowed;
	v->base = al_tensor_ref(t);
	v->owner = x; /* a run's value (0 bytes), not a constant of the model's */
	return v;
}

struct al_tensor *ali_tensor_list_new(struct al_exec *x, const struct al_node *n, int elem_dtype)
{
	size_t count;
	struct al_tensor *t = shell(x, n, AL_DT_UNKNOWN, 0, NULL, &count);
	if (!t)
		return NULL;
	t->kind = AL_TK_LIST;
	t->elem_dtype = elem_dtype;
	return t;
}

bool ali_tensor_list_set(struct al_exec *x, const struct al_node *n, struct al_tensor *list,
			size_t i, struct al_tensor *item)
{
	if (list->kind != AL_TK_LIST)
		return ali_exec_fail(x, n, AL_E_FORMAT, "not a list"), false;
	if (i > AL_TENSOR_MAX_ELEMS)
		return ali_exec_fail(x, n, AL_E_UNSUPPORTED, "list index %zu too large", i), false;
	if (i >= list->cap_items) {
		size_t cap = list->cap_items ? list->cap_items : 4;
		while (cap <= i)
			cap *= 2;
		if (!budget_take(x, n, (cap - list->cap_items) * sizeof *list->items))
			return false;
		struct al_tensor **items = ali_realloc(list->items, cap * sizeof *items);
		if (!items)
			return ali_exec_fail(x, n, AL_E_NOMEM, "out of memory"), false;
		memset(items + list->cap_items, 0, (cap - list->cap_items) * sizeof *items);
		list->bytes += (cap - list->cap_items) * sizeof *items;
		list->owner = x;
		list->items = items;
		list->cap_items = cap;
	}
	struct al_tensor *old = list->items[i];
	list->items[i] = al_tensor_ref(item);
	ali_tensor_unref(old);
	if (i >= list->n_items)
		list->n_items = i + 1;
	return true;
}

struct al_tensor *al_tensor_ref(struct al_tensor *t)
{
	if (t)
		t->refs++;
	return t;
}

void ali_tensor_unref(struct al_tensor *t)
{
	if (!t || --t->refs > 0)
		return;
	if (t->s)
		for (size_t i = 0; i < t->n; i++)
			ali_free(t->s[i]);
	ali_free(t->s);
	if (t->base)
		ali_tensor_unref(t->base);
	else if (!t->borrowed && !bufs_keep(t))
		ali_free(t->f);
	for (size_t i = 0; i < t->n_items; i++)
		ali_tensor_unref(t->items[i]);
	ali_free(t->items);
	if (t->owner)
		t->owner->bytes_live -= t->bytes <= t->owner->bytes_live ? t->bytes : t->owner->bytes_live;
	ali_free(t);
}

struct al_tensor *ali_tensor_reshaped(struct al_exec *x, const struct al_node *n,
				     const struct al_tensor *t, int rank, const int64_t *dims)
{
	size_t count;
	if (!ali_dims_count(rank, dims, &count) || count != t->n || t->kind != AL_TK_TENSOR) {
		ali_exec_fail(x, n, AL_E_FORMAT, "cannot reshape %zu elements to this shape", t->n);
		return NULL;
	}
	/* every element is written below: not zeroed first */
	struct al_tensor *r = tensor_alloc(x, n, t->dtype, rank, dims, false);
	if (!r)
		return NULL;
	if (t->s) {
		for (size_t i = 0; i < count; i++)
			if (t->s[i] && !(r->s[i] = ali_strdup(t->s[i]))) {
				ali_tensor_unref(r);
				ali_exec_fail(x, n, AL_E_NOMEM, "out of memory");
				return NULL;
			}
	} else if (count) {
		memcpy(r->f, t->f, count * sizeof(float));
	}
	r->labels = t->labels;
	return r;
}

/* ================================================================ environment
 * (name, tensor) entries in the order bound, found through the one hash table;
 * names are copied. */
struct env_slot {
	char *name;
	struct al_tensor *t;
};
struct al_env {
	struct al_exec *x;
	struct al_env *parent;
	struct env_slot *slots;
	size_t n, cap;
	struct ali_hashtab index; /* items index slots */
};

struct al_env *ali_env_new(struct al_exec *x, struct al_env *parent)
{
	struct al_env *e = ali_calloc(1, sizeof *e);
	if (!e) {
		if (x)
			ali_exec_fail(x, NULL, AL_E_NOMEM, "out of memory");
		return NULL;
	}
	e->x = x;
	e->parent = parent;
	return e;
}

void ali_env_free(struct al_env *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n; i++) {
		ali_free(e->slots[i].name);
		ali_tensor_unref(e->slots[i].t);
	}
	ali_free(e->slots);
	ali_hashtab_free(&e->index);
	ali_free(e);
}

static bool env_eq(size_t item, const void *key, void *ctx)
{
	const struct al_env *e = ctx;
	return strcmp(e->slots[item].name, key) == 0;
}

static struct env_slot *find_slot(const struct al_env *e, const char *name, uint64_t h)
{
	if (!e->n)
		return NULL;
	size_t i = ali_hashtab_find(&e->index, h, env_eq, name, (void *)e);
	return i == SIZE_MAX ? NULL : &e->slots[i];
}

struct al_tensor *ali_env_get(const struct al_env *e, const char *name)
{
	if (!name)
		return NULL;
	uint64_t h = ali_hash_str(name);
	for (; e; e = e->parent) {
		struct env_slot *s = find_slot(e, name, h);
		if (s)
			return s->t;
	}
	return NULL;
}

static bool env_nomem(struct al_env *e, struct al_tensor *t)
{
	ali_tensor_unref(t);
	if (e->x)
		ali_exec_fail(e->x, NULL, AL_E_NOMEM, "out of memory");
	return false;
}

bool ali_env_put(struct al_env *e, const char *name, struct al_tensor *t)
{
	if (!name || !t) {
		ali_tensor_unref(t);
		return false;
	}
	uint64_t h = ali_hash_str(name);
	struct env_slot *s = find_slot(e, name, h);
	if (s) {
		ali_tensor_unref(s->t);
		s->t = t;
		return true;
	}
	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 64;
		struct env_slot *v = ali_realloc(e->slots, cap * sizeof *v);
		if (!v)
			return env_nomem(e, t);
		e->slots = v;
		e->cap = cap;
	}
	char *copy = ali_strdup(name);
	if (!copy)
		return env_nomem(e, t);
	if (!ali_hashtab_add(&e->index, h, e->n)) {
		ali_free(copy);
		return env_nomem(e, t);
	}
	e->slots[e->n++] = (struct env_slot){copy, t};
	return true;
}

/* ================================================================ public accessors */

al_tensor *al_tensor_new(int dtype, int rank, const int64_t *dims)
{
	return ali_tensor_alloc(NULL, NULL, dtype, rank, dims);
}

void al_tensor_free(al_tensor *t)
{
	ali_tensor_unref(t);
}

int al_tensor_dtype(const al_tensor *t)
{
	return t ? t->dtype : AL_DT_UNKNOWN;
}

int al_tensor_rank(const al_tensor *t)
{
	return t ? t->rank : -1;
}

const int64_t *al_tensor_dims(const al_tensor *t)
{
	return t ? t->dims : NULL;
}

size_t al_tensor_count(const al_tensor *t)
{
	return t ? t->n : 0;
}

float *al_tensor_data(al_tensor *t)
{
	return t && t->kind == AL_TK_TENSOR && !t->borrowed ? t->f : NULL;
}

const char *al_tensor_string(const al_tensor *t, size_t i)
{
	return t && t->s && i < t->n ? t->s[i] : NULL;
}

const char *al_tensor_label(const al_tensor *t, size_t i)
{
	return t && t->labels && i < t->n ? t->labels[i] : NULL;
}

uint64_t al_values_bytes(const struct al_named_tensor *v, size_t n)
{
	uint64_t b = 0;
	for (size_t i = 0; v && i < n; i++)
		if (v[i].t) /* numbers are held as float, strings as pointers */
			b += (uint64_t)v[i].t->n * (v[i].t->f ? sizeof(float) : sizeof(char *));
	return b;
}
