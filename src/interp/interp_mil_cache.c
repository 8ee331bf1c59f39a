/* SPDX-License-Identifier: MIT */
/* interp_mil_cache.c: what the ML Program executor keeps between ops and runs:
 * decoded constants (const values, fp16 weights widened to float, every
 * constexpr form) kept with the model (al_model.interp) per precision, a run's
 * own cache for what is not worth keeping, and data ops derive from constants
 * once per model (mx_derived: a convolution's Winograd weights). Tables keyed
 * by addresses (the one hash table, ali_hashtab). interp_mil.h declares it.
 */
#include "interp_mil.h"

#include <string.h>

/* Keys are node addresses, not names: the address itself is the hash (the
 * table mixes its bits), and an entry matches only the same address. */
static uint64_t ptr_hash(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static bool slot_eq(size_t item, const void *key, void *ctx)
{
	const struct mx_cache *r = ctx;
	return r->slots[item].key == key;
}

static struct al_tensor *slot_get(const struct mx_cache *r, const void *key)
{
	if (!r->used)
		return NULL;
	size_t i = ali_hashtab_find(&r->index, ptr_hash(key), slot_eq, key, (void *)r);
	return i == SIZE_MAX ? NULL : r->slots[i].t;
}

/* Keeps a reference to t; false when it could not grow (then nothing is kept). */
static bool slot_put(struct mx_cache *r, const void *key, struct al_tensor *t)
{
	if (r->used == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct cache_slot *s = ali_realloc(r->slots, cap * sizeof *s);
		if (!s)
			return false;
		r->slots = s;
		r->cap = cap;
	}
	if (!ali_hashtab_add(&r->index, ptr_hash(key), r->used))
		return false;
	r->slots[r->used++] = (struct cache_slot){key, al_tensor_ref(t)};
	return true;
}

void mxc_free(struct mx_cache *r)
{
	for (size_t i = 0; i < r->used; i++)
		ali_tensor_unref(r->slots[i].t);
	ali_free(r->slots);
	ali_hashtab_free(&r->index);
	memset(r, 0, sizeof *r);
}

static void model_cache_free(void *p)
{
	struct mx_model_cache *mc = p;
	for (int i = 0; i < 2; i++) {
		mxc_free(&mc->prec[i]);
		mxc_free(&mc->derived[i]);
		mxc_free(&mc->pins[i]);
	}
	ali_bufs_clear(&mc->bufs);
	ali_free(mc);
}

/* The model's cache for x's precision, created on first use; NULL on OOM (then
 * runs cache per run only). */
struct mx_cache *mxc_model(struct al_exec *x)
{
	struct al_model *m = x->m;
	if (!m->interp) {
		if (!(m->interp = ali_calloc(1, sizeof(struct mx_model_cache))))
			return NULL;
		m->interp_free = model_cache_free;
	}
	return &((struct mx_model_cache *)m->interp)->prec[x->fp16 ? 1 : 0];
}

size_t ali_mil_cached(const al_model *m, bool fp16)
{
	const struct mx_model_cache *mc = m->interp;
	return mc ? mc->prec[fp16 ? 1 : 0].used : 0;
}

struct al_tensor *mx_derived(struct mx *c, const struct al_tensor *src, unsigned what, size_t n,
			     void (*fill)(const struct al_tensor *src, float *out, void *ctx), void *ctx)
{
	const void *key = (const char *)src + what % sizeof *src; /* one key per form of src */
	struct mx_cache *mc = c->run->model;
	struct mx_model_cache *all = c->x->m->interp;
	/* kept with the model: the constants it holds (owner NULL) and weights
	 * borrowed from the mapping; never a run's own values */
	bool keep = mc && all && src->owner == NULL && src->kind == AL_TK_TENSOR;
	int pi = c->x->fp16 ? 1 : 0;
	struct al_tensor *t = keep ? slot_get(&all->derived[pi], key) : NULL;
	if (t)
		return al_tensor_ref(t);
	int64_t dim = (int64_t)n;
	if (!(t = ali_tensor_alloc(c->x, c->n, AL_DT_FP32, 1, &dim)))
		return NULL;
	fill(src, t->f, ctx);
	if (keep && slot_put(&all->pins[pi], src, (struct al_tensor *)src)) {
		if (slot_put(&all->derived[pi], key, t) && t->owner == c->x) {
			t->owner = NULL; /* counted with the model's cache from now on */
			mc->bytes += t->bytes;
		}
	}
	return t;
}

static const void *cache_key(const struct al_node *n, uint32_t k)
{
	return (const char *)n + k;
}

struct al_tensor *mxc_get(const struct mx_run *r, const struct al_node *n, uint32_t k)
{
	struct al_tensor *t = r->model ? slot_get(r->model, cache_key(n, k)) : NULL;
	return t ? t : slot_get(&r->run, cache_key(n, k));
}

/* Worth keeping with the model: float values (weights as the ops read them)
 * and small values of any type (shapes, axes, perms, dtype names: decoding the
 * 30 of a decoder step again on every run was ~5% of it), not the packed
 * indices / integer data only the constexpr ops read. */
#define MX_KEEP_SMALL 64
static bool keep_with_model(const struct al_tensor *t)
{
	return t->kind == AL_TK_TENSOR &&
	       ((t->f && ali_exec_float_dtype(t->dtype)) || t->n <= MX_KEEP_SMALL);
}

/* Keeps a reference to t; a failure to grow only loses the caching. What a
 * constexpr op decoded (`decoded`) is always kept with the model. A tensor
 * kept with the model leaves the run's accounting: the model cache's bytes are
 * counted into every run instead (ali_mil_exec). */
void mxc_put(struct mx_run *r, const struct al_node *n, uint32_t k, struct al_tensor *t,
		      bool decoded)
{
	if (r->model && (decoded || keep_with_model(t)) && slot_put(r->model, cache_key(n, k), t)) {
		if (t->owner == r->x) {
			t->owner = NULL;
			r->model->bytes += t->bytes;
		}
		return;
	}
	slot_put(&r->run, cache_key(n, k), t);
}


struct al_tensor *ali_mil_zero_state(struct al_exec *x, const void *key, int dtype, int rank,
				     const int64_t *dims)
{
	struct mx_cache *mc = mxc_model(x);
	if (!mc)
		return NULL;
	struct al_tensor *t = slot_get(mc, key);
	if (t)
		return t->dtype == dtype && mx_same_dims(t, rank, dims) ? al_tensor_ref(t) : NULL;
	if (!(t = ali_tensor_alloc(x, NULL, dtype, rank, dims)))
		return NULL;
	t->dtype = dtype;
	if (slot_put(mc, key, t) && t->owner == x) {
		t->owner = NULL; /* counted with the model's cache from now on */
		x->bytes_live -= t->bytes <= x->bytes_live ? t->bytes : x->bytes_live;
		mc->bytes += t->bytes;
	}
	return t;
}
