/* shapes.c: the shape inference driver and the helpers the shape and cost modules
 * share. al_model_infer_shapes walks every sub-model's graphs in model order with a
 * name -> shape table per graph scope (nested graphs see the enclosing names), asks
 * shapes_nn.c / shapes_mil.c for each node's outputs, checks ML Program results
 * against the declared types (a mismatch is a warning) and has cost.c fill
 * node->cost. It never reads weights; an unknown dim stays unknown, never invented. */
#include "shapes.h"

#include <limits.h>
#include <string.h>

/* ================================================================ dim arithmetic */

int64_t dim_add(int64_t a, int64_t b)
{
	if (a < 0 || b < 0 || a > INT64_MAX - b)
		return AL_DIM_UNKNOWN;
	return a + b;
}

int64_t dim_sub(int64_t a, int64_t b)
{
	if (a < 0 || b < 0 || a < b)
		return AL_DIM_UNKNOWN;
	return a - b;
}

int64_t dim_mul(int64_t a, int64_t b)
{
	if (a < 0 || b < 0 || (b && a > INT64_MAX / b))
		return AL_DIM_UNKNOWN;
	return a * b;
}

int64_t dim_div_floor(int64_t a, int64_t b)
{
	if (a < 0 || b <= 0)
		return AL_DIM_UNKNOWN;
	return a / b;
}

int64_t dim_div_ceil(int64_t a, int64_t b)
{
	if (a < 0 || b <= 0)
		return AL_DIM_UNKNOWN;
	return a / b + (a % b != 0);
}

/* ================================================================ one shape */

void shp_rank(struct al_shape *s, int rank, int dtype)
{
	s->rank = rank < -1 ? -1 : rank;
	s->dtype = dtype;
	s->flex = 0;
	for (int i = 0; i < AL_SHAPE_MAX_RANK; i++)
		s->dims[i] = AL_DIM_UNKNOWN;
}

void shp_unknown(struct al_shape *s)
{
	shp_rank(s, -1, AL_DT_UNKNOWN);
}

void shp_from(struct al_shape *s, const int64_t *v, size_t n, int dtype)
{
	shp_rank(s, n > INT_MAX ? -1 : (int)n, dtype);
	for (size_t i = 0; i < n && i < AL_SHAPE_MAX_RANK; i++)
		s->dims[i] = v[i] >= 0 ? v[i] : AL_DIM_UNKNOWN;
}

int64_t shp_dim(const struct al_shape *s, int i)
{
	if (!s || i < 0 || i >= s->rank || i >= AL_SHAPE_MAX_RANK)
		return AL_DIM_UNKNOWN;
	return s->dims[i];
}

bool shp_flex(const struct al_shape *s, int i)
{
	if (!s || i < 0 || i >= s->rank || i >= AL_SHAPE_MAX_RANK)
		return false;
	return (s->flex >> i) & 1;
}

void shp_set(struct al_shape *s, int i, int64_t v, bool flex)
{
	if (i < 0 || i >= AL_SHAPE_MAX_RANK)
		return;
	s->dims[i] = v >= 0 ? v : AL_DIM_UNKNOWN;
	if (flex)
		s->flex |= (uint8_t)(1u << i);
	else
		s->flex &= (uint8_t)~(1u << i);
}

void shp_copy_dim(struct al_shape *dst, int i, const struct al_shape *src, int j)
{
	shp_set(dst, i, shp_dim(src, j), shp_flex(src, j));
}

int64_t shp_prod(const struct al_shape *s, int from, int to, bool *flex)
{
	if (!s || s->rank < 0 || from < 0 || to > s->rank)
		return AL_DIM_UNKNOWN;
	int64_t p = 1;
	for (int i = from; i < to; i++) {
		if (flex && shp_flex(s, i))
			*flex = true;
		p = dim_mul(p, shp_dim(s, i));
	}
	return p;
}

int64_t shp_numel(const struct al_shape *s)
{
	return s ? shp_prod(s, 0, s->rank, NULL) : AL_DIM_UNKNOWN;
}

int shp_axis(const struct al_shape *s, int64_t a)
{
	if (!s || s->rank < 0)
		return -1;
	if (a < 0)
		a += s->rank;
	return a >= 0 && a < s->rank ? (int)a : -1;
}

bool shp_broadcast(const struct al_shape *a, const struct al_shape *b, struct al_shape *out)
{
	int dtype = a && a->dtype ? a->dtype : b ? b->dtype : AL_DT_UNKNOWN;
	if (!a || !b || a->rank < 0 || b->rank < 0) {
		shp_rank(out, -1, dtype);
		return true;
	}
	int r = a->rank > b->rank ? a->rank : b->rank;
	shp_rank(out, r, dtype);
	for (int k = 0; k < r; k++) {
		int i = r - 1 - k, ia = a->rank - 1 - k, ib = b->rank - 1 - k;
		int64_t da = ia >= 0 ? shp_dim(a, ia) : 1, db = ib >= 0 ? shp_dim(b, ib) : 1;
		bool fa = ia >= 0 && shp_flex(a, ia), fb = ib >= 0 && shp_flex(b, ib);
		if (da >= 0 && da == db)
			shp_set(out, i, da, fa || fb);
		else if (da == 1)
			shp_set(out, i, db, fb);
		else if (db == 1)
			shp_set(out, i, da, fa);
		else if (da >= 0 && db >= 0 && da != db) {
			shp_rank(out, -1, dtype);
			return false;
		} else if (da >= 0)
			shp_set(out, i, da, fa || fb); /* db is unknown: 1 or da */
		else if (db >= 0)
			shp_set(out, i, db, fa || fb);
		else
			shp_set(out, i, AL_DIM_UNKNOWN, fa || fb);
	}
	return true;
}

void shp_format(const struct al_shape *s, char *buf, size_t cap)
{
	size_t len = 0;
	if (!cap)
		return;
	buf[0] = '\0';
	if (!s || s->rank < 0) {
		snprintf(buf, cap, "[?...]");
		return;
	}
	len = (size_t)snprintf(buf, cap, "[");
	for (int i = 0; i < s->rank && len < cap; i++) {
		int k;
		if (i >= AL_SHAPE_MAX_RANK) {
			k = snprintf(buf + len, cap - len, ",...");
			len += k > 0 ? (size_t)k : 0;
			break;
		}
		int64_t d = s->dims[i];
		const char *sep = i ? "," : "";
		const char *fl = shp_flex(s, i) ? "*" : "";
		if (d < 0)
			k = snprintf(buf + len, cap - len, "%s?%s", sep, fl);
		else
			k = snprintf(buf + len, cap - len, "%s%lld%s", sep, (long long)d, fl);
		if (k < 0)
			return;
		len += (size_t)k;
	}
	if (len < cap)
		snprintf(buf + len, cap - len, "]");
}

void shp_from_ttype(struct al_shape *s, const struct al_ttype *t)
{
	if (!t) {
		shp_unknown(s);
		return;
	}
	if (t->kind != 0 && t->kind != 4) { /* list, tuple, dictionary: no tensor shape */
		shp_rank(s, -1, t->dtype);
		return;
	}
	if (t->rank < 0 || (t->rank > 0 && !t->dims)) {
		shp_rank(s, -1, t->dtype);
		return;
	}
	shp_from(s, t->dims, (size_t)t->rank, t->dtype);
}

/* ================================================================ name tables */

struct slot {
	const char *name; /* NULL = empty */
	uint64_t hash;
	const struct al_shape *shape;
};

/* The names one graph defines; lookups fall through to the enclosing graphs. */
struct scope {
	const struct scope *parent;
	struct slot *slots;
	size_t cap, n; /* cap is 0 or a power of two */
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static const struct al_shape *scope_own(const struct scope *sc, const char *name, uint64_t h)
{
	if (!sc->cap)
		return NULL;
	for (size_t i = h & (sc->cap - 1), k = 0; k < sc->cap; k++, i = (i + 1) & (sc->cap - 1)) {
		const struct slot *s = &sc->slots[i];
		if (!s->name)
			return NULL;
		if (s->hash == h && strcmp(s->name, name) == 0)
			return s->shape;
	}
	return NULL;
}

static const struct al_shape *scope_get(const struct scope *sc, const char *name)
{
	if (!name)
		return NULL;
	uint64_t h = hash_str(name);
	for (; sc; sc = sc->parent) { /* at most AL_MAX_DEPTH + 1 levels */
		const struct al_shape *s = scope_own(sc, name, h);
		if (s)
			return s;
	}
	return NULL;
}

static void slot_put(struct slot *slots, size_t cap, const char *name, uint64_t h,
		     const struct al_shape *shape, size_t *n)
{
	for (size_t i = h & (cap - 1), k = 0; k < cap; k++, i = (i + 1) & (cap - 1)) {
		struct slot *s = &slots[i];
		if (!s->name) {
			*s = (struct slot){name, h, shape};
			(*n)++;
			return;
		}
		if (s->hash == h && strcmp(s->name, name) == 0) {
			s->shape = shape;
			return;
		}
	}
}

static bool scope_put(struct scope *sc, const char *name, const struct al_shape *shape)
{
	if (!name || !shape)
		return true;
	if ((sc->n + 1) * 2 > sc->cap) {
		size_t cap = sc->cap ? sc->cap * 2 : 16;
		if (cap > SIZE_MAX / sizeof(struct slot))
			return false;
		struct slot *ns = al_calloc(cap, sizeof *ns);
		if (!ns)
			return false;
		size_t n = 0;
		for (size_t i = 0; i < sc->cap; i++)
			if (sc->slots[i].name)
				slot_put(ns, cap, sc->slots[i].name, sc->slots[i].hash, sc->slots[i].shape, &n);
		al_free(sc->slots);
		sc->slots = ns;
		sc->cap = cap;
		sc->n = n;
	}
	slot_put(sc->slots, sc->cap, name, hash_str(name), shape, &sc->n);
	return true;
}

/* ================================================================ the walk */

#define MAX_MISMATCH_DIAGS 20 /* declared/inferred mismatches reported per sub-model */

struct ctx {
	struct al_model *m;
	struct al_submodel *s;
	al_diags *d;
	bool nomem;
	uint32_t mismatches; /* in this sub-model */
};

static void *arena_array(struct ctx *c, size_t count, size_t size)
{
	if (!count)
		return NULL;
	void *p = al_arena_array(&c->m->arena, count, size);
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
	const struct al_ttype *t = al_mil_value_type(n, name);
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
	if (x->n_out > 8 && !(inf = al_malloc(x->n_out * sizeof *inf))) {
		c->nomem = true;
		return;
	}
	for (uint32_t o = 0; o < x->n_out; o++)
		shp_unknown(&inf[o]);
	struct shp_node y = *x;
	y.out = inf;
	bool ran = al_shapes_mil(&y);
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
		al_diag_add(c->d, AL_SEV_WARNING, c->s->file, n->offset, n->path, n->name,
			    "op %s (%s): output '%s' is declared %s but its inputs give %s",
			    n->name, n->type, n->outputs[o] ? n->outputs[o] : "", a, b);
	}
	if (inf != local)
		al_free(inf);
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
	for (uint32_t o = 0; o < n->n_outputs; o++)
		shp_unknown(&out[o]);
	struct shp_node x = {n, c->s, in, n->n_inputs, out, n->n_outputs};
	if (mil)
		mil_outputs(c, &x);
	else
		al_shapes_nn(&x);
	n->out_shapes = out;
	if (src)
		src->in_shapes = in;
	al_cost_node(n, c->m, in, n->n_inputs);
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
	for (size_t i = 0; i < from->cap && !c->nomem; i++) {
		const struct slot *s = &from->slots[i];
		if (!s->name)
			continue;
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
			al_free(child.slots);
		}
		for (uint32_t o = 0; o < n->n_outputs && n->out_shapes && !c->nomem; o++)
			if (!scope_put(sc, n->outputs[o], &n->out_shapes[o]))
				c->nomem = true;
		if (k % 32 == 31)
			al_model_trim(c->m); /* NN params were read near the weights */
	}
}

static void infer_sub(struct ctx *c, struct al_submodel *s)
{
	c->s = s;
	c->mismatches = 0;
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
		al_free(sc.slots);
	} else if (s->world == AL_WORLD_MIL) {
		for (uint32_t g = 0; g < s->n_graphs && !c->nomem; g++) {
			if (!s->graphs[g])
				continue;
			struct scope sc = {0};
			infer_graph(c, s->graphs[g], &sc);
			al_free(sc.slots);
		}
	}
	if (c->mismatches > MAX_MISMATCH_DIAGS)
		al_diag_add(c->d, AL_SEV_NOTE, s->file, UINT64_MAX, NULL, NULL,
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
	al_model_trim(m);
	/* every allocation is checked where it is made (c.nomem); m->arena.failed
	 * is sticky and may predate this call, so it is not consulted */
	if (c.nomem) {
		al_diag_add(d, AL_SEV_ERROR, m->path, UINT64_MAX, NULL, NULL,
			    "out of memory while inferring shapes");
		return AL_E_NOMEM;
	}
	m->shapes_done = true;
	return AL_OK;
}

/* ================================================================ accessors */

const struct al_shape *al_node_in_shape(const struct al_node *n, uint32_t i)
{
	const struct al_node_src *src = n ? al_src(n) : NULL;
	if (!src || !src->in_shapes || i >= n->n_inputs)
		return NULL;
	return src->in_shapes[i];
}

bool al_mil_param_shape(const struct al_node *n, const char *param, struct al_shape *out)
{
	const struct al_node_src *src = n ? al_src(n) : NULL;
	if (!src || !src->mil_scope || !out)
		return false;
	return shp_mil_param(n, src->in_shapes, src->in_shapes ? n->n_inputs : 0, param, 0, out) &&
	       out->rank >= 0;
}

void al_shape_format(const struct al_shape *s, char *buf, size_t cap)
{
	shp_format(s, buf, cap);
}

bool shp_matmul(struct al_shape *o, const struct al_shape *a, const struct al_shape *b, bool ta, bool tb,
		int dtype)
{
	if (!a || !b || a->rank < 1 || b->rank < 1)
		return false;
	struct al_shape A = *a, B = *b;
	bool a1 = a->rank == 1, b1 = b->rank == 1;
	if (a1) {
		shp_rank(&A, 2, a->dtype);
		shp_set(&A, 0, 1, false);
		shp_copy_dim(&A, 1, a, 0);
		ta = false;
	}
	if (b1) {
		shp_rank(&B, 2, b->dtype);
		shp_copy_dim(&B, 0, b, 0);
		shp_set(&B, 1, 1, false);
		tb = false;
	}
	int ar = A.rank, br = B.rank;
	int mi = ta ? ar - 1 : ar - 2, ni = tb ? br - 2 : br - 1;
	struct al_shape ba = A, bb = B, bo;
	ba.rank = ar - 2;
	bb.rank = br - 2;
	if (!shp_broadcast(&ba, &bb, &bo) || bo.rank < 0) {
		shp_rank(o, ar > br ? ar : br, dtype);
		return false;
	}
	int r = bo.rank + 2;
	*o = bo;
	o->rank = r;
	o->dtype = dtype;
	shp_copy_dim(o, r - 2, &A, mi);
	shp_copy_dim(o, r - 1, &B, ni);
	if (a1 && b1) {
		shp_rank(o, 0, dtype);
	} else if (a1) { /* drop the prepended M = 1 */
		shp_copy_dim(o, r - 2, o, r - 1);
		o->rank = r - 1;
	} else if (b1) {
		o->rank = r - 1;
	}
	return true;
}

/* Elements of a python-style slice [b:e:st] of a dim of size d (masks take the
 * whole side). With d unknown it still decides the cases that do not need d;
 * `masked_begin_ok` also decides [:e:st] with e > 0 as ceil(e/st), as
 * coremltools does for ML Programs. */
int64_t shp_slice_count(int64_t d, int64_t b, int64_t e, int64_t st, bool bm, bool em,
			bool masked_begin_ok)
{
	if (st == 0)
		return AL_DIM_UNKNOWN;
	if (d < 0) {
		if (!bm && !em && b >= 0 && e >= b && st > 0)
			return dim_div_ceil(e - b, st);
		if (!bm && !em && b < 0 && e < 0 && b >= e && st < 0 && st != INT64_MIN)
			return dim_div_ceil(b - e, -st);
		if (masked_begin_ok && bm && !em && e > 0 && st > 0)
			return dim_div_ceil(e, st);
		return AL_DIM_UNKNOWN;
	}
	if (st > 0) {
		int64_t lo = bm ? 0 : b < 0 ? (b + d < 0 ? 0 : b + d) : (b > d ? d : b);
		int64_t hi = em ? d : e < 0 ? (e + d < 0 ? 0 : e + d) : (e > d ? d : e);
		return hi > lo ? dim_div_ceil(hi - lo, st) : 0;
	}
	int64_t hi = bm ? d - 1 : b < 0 ? (b + d < 0 ? -1 : b + d) : (b > d - 1 ? d - 1 : b);
	int64_t lo = em ? -1 : e < 0 ? (e + d < 0 ? -1 : e + d) : (e > d - 1 ? d - 1 : e);
	if (st == INT64_MIN)
		return hi > lo ? 1 : 0;
	return hi > lo ? dim_div_ceil(hi - lo, -st) : 0;
}
