/* SPDX-License-Identifier: MIT */
/* shape_infer.c: the shape inference driver. al_model_infer_shapes walks every
 * sub-model's graphs in model order with a name -> shape table per graph scope
 * (nested graphs see the enclosing names), asks shapes_nn.c / shapes_mil.c for
 * each node's outputs, checks ML Program results against the declared types (a
 * mismatch is a warning) and has cost.c fill node->cost. It never reads
 * weights; an unknown dim stays unknown, never invented.
 *
 * Path through this file:
 *   al_model_infer_shapes  infer_sub per sub-model: its inputs (nn_input_shape,
 *                          mil_input_shape), then infer_graph
 *   infer_graph            infer_node per node (ali_shapes_nn / ali_shapes_mil,
 *                          mil_outputs to merge the declared types, ali_cost_node),
 *                          nested graphs with a child scope (export_names) */
#include "shapes.h"

#include <limits.h>
#include <string.h>

/* ================================================================ name tables */

struct slot {
	const char *name;
	uint64_t hash;
	const struct al_shape *shape;
};

/* The names one graph defines, in the order first defined, found through the
 * one hash table; lookups fall through to the enclosing graphs. */
struct scope {
	const struct scope *parent;
	struct slot *slots;
	size_t n, cap;
	struct ali_hashtab index; /* items index slots */
};

static bool slot_eq(size_t item, const void *key, void *ctx)
{
	const struct scope *sc = ctx;
	return strcmp(sc->slots[item].name, key) == 0;
}

static const struct al_shape *scope_own(const struct scope *sc, const char *name, uint64_t h)
{
	if (!sc->n)
		return NULL;
	size_t i = ali_hashtab_find(&sc->index, h, slot_eq, name, (void *)sc);
	return i == SIZE_MAX ? NULL : sc->slots[i].shape;
}

static const struct al_shape *scope_get(const struct scope *sc, const char *name)
{
	if (!name)
		return NULL;
	uint64_t h = ali_hash_str(name);
	for (; sc; sc = sc->parent) { /* at most AL_MAX_DEPTH + 1 levels */
		const struct al_shape *s = scope_own(sc, name, h);
		if (s)
			return s;
	}
	return NULL;
}

static bool scope_put(struct scope *sc, const char *name, const struct al_shape *shape)
{
	if (!name || !shape)
		return true;
	uint64_t h = ali_hash_str(name);
	size_t i = sc->n ? ali_hashtab_find(&sc->index, h, slot_eq, name, sc) : SIZE_MAX;
	if (i != SIZE_MAX) {
		sc->slots[i].shape = shape;
		return true;
	}
	if (sc->n == sc->cap) {
		size_t cap = sc->cap ? sc->cap * 2 : 16;
		struct slot *ns = cap <= SIZE_MAX / sizeof *ns ? ali_realloc(sc->slots, cap * sizeof *ns) : NULL;
		if (!ns)
			return false;
		sc->slots = ns;
		sc->cap = cap;
	}
	if (!ali_hashtab_add(&sc->index, h, sc->n))
		return false;
	sc->slots[sc->n++] = (struct slot){name, h, shape};
	return true;
}

static void scope_free(struct scope *sc)
{
	ali_free(sc->slots);
	ali_hashtab_free(&sc->index);
}

/* ================================================================ the walk */

#define MAX_MISMATCH_DIAGS 20 /* declared/inferred mismatches reported per sub-model */

struct ctx {
	struct al_model *m;
	struct al_submodel *s;
	al_diags *d;
	bool nomem;
	uint32_t mismatches; /* in this sub-model */
	uint32_t compiled_used, compiled_diff; /* model.espresso.shape: shapes used, differing */
};

static void *arena_array(struct ctx *c, size_t count, size_t size)
{
	if (!count)
		return NULL;
	void *p = ali_arena_array(&c->m->arena, count, size);
	if (!p)
		c->nomem = true;
	return p;
}

/* Flex bit of axis k of a feature: a range whose bounds differ, or
 * enumerated shapes that differ in that axis. `r` axes in flex_values. */
static bool feature_axis_flex(const struct al_feature *f, uint32_t r, uint32_t k)
{
	if (!f->flex_values || k >= r)
		return false;
	if (f->flex == AL_FLEX_RANGE)
		return f->flex_values[2 * k] != f->flex_values[2 * k + 1];
	if (f->flex == AL_FLEX_ENUMERATED)
		for (uint32_t i = 1; i < f->n_shapes; i++)
			if (f->flex_values[(size_t)i * r + k] != f->flex_values[k])
				return true;
	return false;
}

static int image_channels(const struct al_feature *f)
{
	switch (f->color_space) {
	case 10: case 40: return 1;
	case 20: case 30: return 3;
	}
	return -1;
}

/* A NeuralNetwork model input as the network sees it (facts section 4):
 * RANK5 arrays [C] -> [1,1,C,1,1], [C,H,W] -> [1,1,C,H,W]; EXACT arrays as
 * declared; images [1,1,C,H,W] (RANK5) or [1,C,H,W] (RANK4). */
static void nn_input_shape(const struct al_submodel *s, const struct al_feature *f,
			   struct al_shape *out)
{
	shp_unknown(out);
	if (f->kind == AL_FEAT_IMAGE && f->rank == 2 && f->shape) {
		int r = s->image_mapping ? 4 : 5;
		shp_rank(out, r, AL_DT_FP32);
		for (int i = 0; i < r - 3; i++)
			shp_set(out, i, 1, false);
		shp_set(out, r - 3, image_channels(f), false);
		for (uint32_t k = 0; k < 2; k++)
			shp_set(out, r - 2 + (int)k, f->shape[k], feature_axis_flex(f, 2, k));
		return;
	}
	if ((f->kind != AL_FEAT_MULTIARRAY && f->kind != AL_FEAT_STATE) || !f->shape || !f->rank)
		return;
	int dtype = f->dtype ? f->dtype : AL_DT_FP32;
	if (s->array_mapping) {
		shp_from(out, f->shape, f->rank, dtype);
		for (uint32_t k = 0; k < f->rank && k < AL_SHAPE_MAX_RANK; k++)
			shp_set(out, (int)k, f->shape[k], feature_axis_flex(f, f->rank, k));
		return;
	}
	if (f->rank != 1 && f->rank != 3) {
		shp_rank(out, 5, dtype); /* the validator rejects other ranks */
		return;
	}
	shp_rank(out, 5, dtype);
	shp_set(out, 0, 1, false);
	shp_set(out, 1, 1, false);
	for (uint32_t k = 0; k < 3; k++) {
		if (k < f->rank)
			shp_set(out, 2 + (int)k, f->shape[k], feature_axis_flex(f, f->rank, k));
		else
			shp_set(out, 2 + (int)k, 1, false);
	}
}

static const struct al_feature *find_input(const struct al_submodel *s, const char *name)
{
	for (uint32_t i = 0; i < s->n_inputs; i++)
		if (s->inputs[i].name && strcmp(s->inputs[i].name, name) == 0)
			return &s->inputs[i];
	return NULL;
}

/* An ML Program value no op of the walk produced: a function or block input.
 * Its declared type, with a function input's flexible axes (from the model
 * description) given their default size and flagged. */
static const struct al_shape *mil_input_shape(struct ctx *c, const struct al_node *n,
					      const char *name)
{
	const struct al_ttype *t = ali_mil_value_type(n, name);
	struct al_shape *sh = arena_array(c, 1, sizeof *sh);
	if (!sh)
		return NULL;
	shp_from_ttype(sh, t);
	const struct al_feature *f = t ? find_input(c->s, name) : NULL;
	if (!f || sh->rank < 0)
		return sh;
	if (f->kind == AL_FEAT_IMAGE && f->rank == 2 && f->shape && sh->rank == 4) {
		for (uint32_t k = 0; k < 2; k++) {
			int i = 2 + (int)k;
			bool flex = feature_axis_flex(f, 2, k);
			if (shp_dim(sh, i) < 0 || flex)
				shp_set(sh, i, shp_dim(sh, i) >= 0 ? shp_dim(sh, i) : f->shape[k], flex);
		}
	} else if (f->kind == AL_FEAT_MULTIARRAY && f->shape && f->rank == (uint32_t)sh->rank) {
		for (uint32_t k = 0; k < f->rank && k < AL_SHAPE_MAX_RANK; k++) {
			bool flex = feature_axis_flex(f, f->rank, k);
			int64_t d = shp_dim(sh, (int)k) >= 0 ? shp_dim(sh, (int)k) : f->shape[k];
			shp_set(sh, (int)k, d, flex);
		}
	}
	return sh;
}

/* Declared (d) and inferred (x) output of a MIL op into out; true when they
 * disagree where both are known. The declared type wins a disagreement; an
 * unknown declared dim takes the inferred one, with its flex bit. */
static bool merge_declared(const struct al_shape *d, const struct al_shape *x, struct al_shape *out)
{
	*out = *d;
	if (x->rank < 0)
		return false;
	if (d->rank < 0) {
		*out = *x;
		if (d->dtype)
			out->dtype = d->dtype;
		return false;
	}
	if (d->rank != x->rank)
		return true;
	bool bad = false;
	out->flex = 0;
	for (int i = 0; i < d->rank && i < AL_SHAPE_MAX_RANK; i++) {
		int64_t dd = d->dims[i], xd = x->dims[i];
		if (dd >= 0 && xd >= 0 && dd != xd)
			bad = true;
		else if (dd < 0)
			shp_set(out, i, xd, shp_flex(x, i));
		else
			shp_set(out, i, dd, shp_flex(x, i));
	}
	if (bad) {
		*out = *d;
		out->flex = 0;
	}
	if (!out->dtype)
		out->dtype = x->dtype;
	return bad;
}

static void mil_outputs(struct ctx *c, const struct shp_node *x)
{
	const struct al_node *n = x->n;
	struct al_shape local[8], *inf = local;
	if (x->n_out > 8 && !(inf = ali_malloc(x->n_out * sizeof *inf))) {
		c->nomem = true;
		return;
	}
	for (uint32_t o = 0; o < x->n_out; o++)
		shp_unknown(&inf[o]);
	struct shp_node y = *x;
	y.out = inf;
	bool ran = ali_shapes_mil(&y);
	for (uint32_t o = 0; o < x->n_out; o++) {
		struct al_shape d;
		shp_from_ttype(&d, n->out_types ? &n->out_types[o] : NULL);
		if (!ran) {
			x->out[o] = d;
			continue;
		}
		if (!merge_declared(&d, &inf[o], &x->out[o]))
			continue;
		if (c->mismatches++ >= MAX_MISMATCH_DIAGS)
			continue;
		char a[128], b[128];
		shp_format(&d, a, sizeof a);
		shp_format(&inf[o], b, sizeof b);
		ali_diag_add(c->d, AL_SEV_WARNING, c->s->file, n->offset, n->path, n->name,
			    "op %s (%s): output '%s' is declared %s but its inputs give %s",
			    n->name, n->type, n->outputs[o] ? n->outputs[o] : "", a, b);
	}
	if (inf != local)
		ali_free(inf);
}

/* A layer of a compiled espresso net: the compiler's output shapes
 * (model.espresso.shape, at the default input shapes) replace the inferred
 * ones. Same rank: dim by dim (a dim the file leaves out keeps the inferred
 * one; the inferred flex bits are kept). A rank-5 entry (no _rank) against an
 * inferred rank r < 5: its last r dims when the others are 1. A known,
 * non-flexible dim that differs is counted (one note per sub-model). */
static void merge_compiled(struct ctx *c, const struct al_shape *e, struct al_shape *x)
{
	struct al_shape k = *e;
	int r = x->rank;
	if (r > 0 && r < e->rank && e->rank == 5) {
		bool ones = true;
		for (int j = 0; j < 5 - r; j++)
			ones = ones && e->dims[j] == 1;
		if (ones) {
			shp_rank(&k, r, e->dtype);
			for (int j = 0; j < r; j++)
				k.dims[j] = e->dims[5 - r + j];
		}
	}
	if (k.rank == r) {
		for (int j = 0; j < r && j < AL_SHAPE_MAX_RANK; j++) {
			if (k.dims[j] == AL_DIM_UNKNOWN)
				k.dims[j] = x->dims[j];
			else if (x->dims[j] != AL_DIM_UNKNOWN && x->dims[j] != k.dims[j] && !shp_flex(x, j))
				c->compiled_diff++;
		}
		k.flex = x->flex;
	} else if (r >= 0) {
		c->compiled_diff++;
	}
	if (x->dtype != AL_DT_UNKNOWN)
		k.dtype = x->dtype;
	*x = k;
}

static bool compiled_ok(const struct al_shape *e)
{
	return e->rank >= 0 && e->rank <= AL_SHAPE_MAX_RANK;
}

static void use_compiled(struct ctx *c, const struct al_node_src *src, const struct al_node *n,
			 struct al_shape *out)
{
	for (uint32_t o = 0; o < n->n_outputs && o < src->n_compiled_out; o++)
		if (compiled_ok(&src->compiled_out[o])) {
			merge_compiled(c, &src->compiled_out[o], &out[o]);
			c->compiled_used++;
		}
}

/* The same for the layer's inputs: the model's inputs (whose declared shape
 * may not be the one the compiler used) and the outputs of earlier layers
 * (already the compiled ones). The merged shapes are this node's own. */
static void compiled_inputs(struct ctx *c, const struct al_node_src *src, const struct al_node *n,
			    const struct al_shape **in)
{
	for (uint32_t i = 0; i < n->n_inputs && i < src->n_compiled_in && !c->nomem; i++) {
		if (!compiled_ok(&src->compiled_in[i]))
			continue;
		struct al_shape *x = arena_array(c, 1, sizeof *x);
		if (!x)
			return;
		if (in[i])
			*x = *in[i];
		else
			shp_unknown(x);
		merge_compiled(c, &src->compiled_in[i], x);
		in[i] = x;
	}
}

static void infer_node(struct ctx *c, struct al_node *n, struct scope *sc)
{
	struct al_node_src *src = (struct al_node_src *)n->priv; /* arena-owned, written here only */
	const struct al_shape **in = arena_array(c, n->n_inputs, sizeof *in);
	struct al_shape *out = arena_array(c, n->n_outputs, sizeof *out);
	if (c->nomem)
		return;
	bool mil = c->s->world == AL_WORLD_MIL;
	for (uint32_t i = 0; i < n->n_inputs; i++) {
		in[i] = scope_get(sc, n->inputs[i]);
		if (!in[i] && mil && n->inputs[i]) {
			in[i] = mil_input_shape(c, n, n->inputs[i]);
			if (in[i] && !scope_put(sc, n->inputs[i], in[i]))
				c->nomem = true;
		}
	}
	if (src && src->compiled_in)
		compiled_inputs(c, src, n, in);
	if (c->nomem)
		return;
	for (uint32_t o = 0; o < n->n_outputs; o++)
		shp_unknown(&out[o]);
	struct shp_node x = {n, c->s, in, n->n_inputs, out, n->n_outputs};
	if (mil)
		mil_outputs(c, &x);
	else
		ali_shapes_nn(&x);
	if (src && src->compiled_out)
		use_compiled(c, src, n, out);
	n->out_shapes = out;
	if (src)
		src->in_shapes = in;
	ali_cost_node(n, c->m, in, n->n_inputs);
}

static bool same_shape(const struct al_shape *a, const struct al_shape *b)
{
	if (a->rank != b->rank || a->dtype != b->dtype || a->flex != b->flex)
		return false;
	for (int i = 0; i < AL_SHAPE_MAX_RANK; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
}

/* Copy the names a nested NeuralNetwork defined into the enclosing scope
 * (NeuralNetwork.proto: blobs of a loop's or branch's networks are visible in
 * the whole network). A name both branches write keeps the dims they agree on. */
static void export_names(struct ctx *c, const struct scope *from, struct scope *to)
{
	for (size_t i = 0; i < from->n && !c->nomem; i++) {
		const struct slot *s = &from->slots[i];
		const struct al_shape *old = scope_own(to, s->name, s->hash), *use = s->shape;
		if (old && old != s->shape && !same_shape(old, s->shape)) {
			struct al_shape *mix = arena_array(c, 1, sizeof *mix);
			if (!mix)
				return;
			*mix = *s->shape;
			if (old->rank != mix->rank) {
				shp_rank(mix, -1, mix->dtype);
			} else {
				for (int k = 0; k < mix->rank && k < AL_SHAPE_MAX_RANK; k++)
					if (old->dims[k] != mix->dims[k])
						shp_set(mix, k, AL_DIM_UNKNOWN, shp_flex(old, k) || shp_flex(mix, k));
			}
			use = mix;
		}
		if (!scope_put(to, s->name, use))
			c->nomem = true;
	}
}

static void infer_graph(struct ctx *c, struct al_graph *g, struct scope *sc)
{
	bool nn = c->s->world == AL_WORLD_NN;
	for (uint32_t k = 0; k < g->n_nodes && !c->nomem; k++) {
		struct al_node *n = &g->nodes[k];
		infer_node(c, n, sc);
		for (uint32_t j = 0; j < n->n_sub && !c->nomem; j++) {
			if (!n->sub[j])
				continue;
			struct scope child = {.parent = sc};
			infer_graph(c, n->sub[j], &child); /* depth bounded by the loaders */
			if (nn)
				export_names(c, &child, sc);
			scope_free(&child);
		}
		for (uint32_t o = 0; o < n->n_outputs && n->out_shapes && !c->nomem; o++)
			if (!scope_put(sc, n->outputs[o], &n->out_shapes[o]))
				c->nomem = true;
		if (k % 32 == 31)
			ali_model_trim(c->m); /* NN params were read near the weights */
	}
}

static void infer_sub(struct ctx *c, struct al_submodel *s)
{
	c->s = s;
	c->mismatches = 0;
	c->compiled_used = c->compiled_diff = 0;
	if (s->world == AL_WORLD_NN && s->n_graphs && s->graphs[0]) {
		struct scope sc = {0};
		for (uint32_t i = 0; i < s->n_inputs && !c->nomem; i++) {
			struct al_shape *sh = arena_array(c, 1, sizeof *sh);
			if (!sh)
				break;
			nn_input_shape(s, &s->inputs[i], sh);
			if (!scope_put(&sc, s->inputs[i].name, sh))
				c->nomem = true;
		}
		if (!c->nomem)
			infer_graph(c, s->graphs[0], &sc);
		scope_free(&sc);
	} else if (s->world == AL_WORLD_MIL) {
		for (uint32_t g = 0; g < s->n_graphs && !c->nomem; g++) {
			if (!s->graphs[g])
				continue;
			struct scope sc = {0};
			infer_graph(c, s->graphs[g], &sc);
			scope_free(&sc);
		}
	}
	if (c->compiled_used)
		ali_diag_add(c->d, AL_SEV_NOTE, s->file, UINT64_MAX, NULL, NULL,
			    "%u layer output shapes taken from model.espresso.shape%s", c->compiled_used,
			    c->compiled_diff ? " (some differ from the ones inferred from the inputs: the "
					       "compiled ones are used)" : "");
	if (c->mismatches > MAX_MISMATCH_DIAGS)
		ali_diag_add(c->d, AL_SEV_NOTE, s->file, UINT64_MAX, NULL, NULL,
			    "%u more declared/inferred shape mismatches not shown",
			    c->mismatches - MAX_MISMATCH_DIAGS);
}

enum al_status al_model_infer_shapes(al_model *m, al_diags *d)
{
	if (!m)
		return AL_E_INVALID_ARG;
	if (m->shapes_done)
		return AL_OK;
	struct ctx c = {.m = m, .d = d};
	for (size_t i = 0; i < m->n_subs && !c.nomem; i++)
		if (m->subs[i])
			infer_sub(&c, m->subs[i]);
	ali_model_trim(m);
	/* every allocation is checked where it is made (c.nomem); m->arena.failed
	 * is sticky and may predate this call, so it is not consulted */
	if (c.nomem) {
		ali_diag_add(d, AL_SEV_ERROR, m->path, UINT64_MAX, NULL, NULL,
			    "out of memory while inferring shapes");
		return AL_E_NOMEM;
	}
	m->shapes_done = true;
	return AL_OK;
}

