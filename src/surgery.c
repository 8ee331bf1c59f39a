/* surgery.c: the pass table of `anelint fix` and the rewritten model file.
 *
 * Each pass looks at one NeuralNetwork layer, decides from its inferred shapes
 * and parameters whether its rewrite keeps the results (exact) or only the
 * maths (reassociate), and if so builds the new layer bytes. The new layers go
 * into the file with pbsplice: the rewritten layer replaces the old one's
 * payload, helper layers are inserted just before it; every other byte is the
 * input's. Proving a rewrite (running both models) and checking that it
 * reduces fallbacks is the caller's job (src/cli/fix.c).
 */
#include "internal.h"
#include "pbsplice.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* NeuralNetworkLayer fields, and the layer types the passes emit. */
enum { L_NAME = 1, L_INPUT = 2, L_OUTPUT = 3, L_INPUT_TENSOR = 4, NN_LAYERS = 1 };
enum { F_POOLING = 120, F_ACTIVATION = 130, F_UPSAMPLE = 210, F_ADD = 230, F_MULTIPLY = 231,
       F_CONCAT = 320 };

struct pctx {
	struct al_surgery *s;
	const struct al_node *n;
	const struct al_node_src *src;
	char why[200];
	char after[160];
	struct al_buf pre;     /* whole layers fields inserted before the layer */
	struct al_buf layer;   /* the layer's new payload */
	const char *names[16]; /* names of the output layers produced */
	uint32_t n_names;
};

typedef bool (*pass_fn)(struct pctx *c);

static bool p_addb(struct pctx *c);
static bool p_mulb(struct pctx *c);
static bool p_subb(struct pctx *c);
static bool p_concatnd(struct pctx *c);
static bool p_upsample(struct pctx *c);
static bool p_maxpool(struct pctx *c);

/* The pass table: name, rule answered, class, layer type, before -> after, function. */
#define AL_PASSES(X)                                                                                    \
	X("addb-to-add", "ANE005", AL_EQ_EXACT, "addBroadcastable",                                     \
	  "addBroadcastable -> add (legacy broadcast shapes only)", p_addb)                             \
	X("mulb-to-multiply", "ANE005", AL_EQ_EXACT, "multiplyBroadcastable",                           \
	  "multiplyBroadcastable -> multiply (legacy broadcast shapes only)", p_mulb)                   \
	X("subb-to-neg-add", "ANE005", AL_EQ_EXACT, "subtractBroadcastable",                            \
	  "subtractBroadcastable a-b -> activation linear(alpha -1) on b + add", p_subb)                \
	X("concatnd-to-concat", "ANE006", AL_EQ_EXACT, "concatND",                                      \
	  "concatND on the channel axis (-3) -> concat", p_concatnd)                                    \
	X("upsample-x2-chain", "ANE010", AL_EQ_EXACT, "upsample",                                       \
	  "nearest upsample x4 / x8 -> a chain of x2 upsamples", p_upsample)                            \
	X("maxpool-cascade", "ANE008", AL_EQ_EXACT, "pooling",                                          \
	  "max pooling kernel > 13 -> a cascade of stride-1 pools with kernels <= 13", p_maxpool)

static const struct al_pass passes[] = {
#define ROW(nm, rule, eq, from, what, fn) {nm, rule, eq, from, what},
	AL_PASSES(ROW)
#undef ROW
};
static const pass_fn pass_fns[] = {
#define FN(nm, rule, eq, from, what, fn) fn,
	AL_PASSES(FN)
#undef FN
};
#define N_PASSES (sizeof passes / sizeof passes[0])

size_t al_passes_count(void)
{
	return N_PASSES;
}

const struct al_pass *al_pass_at(size_t i)
{
	return i < N_PASSES ? &passes[i] : NULL;
}

const char *al_equiv_name(enum al_equiv e)
{
	switch (e) {
	case AL_EQ_EXACT: return "exact";
	case AL_EQ_REASSOCIATE: return "reassociate";
	case AL_EQ_APPROXIMATE: return "approximate";
	}
	return "?";
}

bool al_equiv_parse(const char *s, enum al_equiv *out)
{
	for (int e = AL_EQ_EXACT; e <= AL_EQ_APPROXIMATE; e++)
		if (s && strcmp(s, al_equiv_name((enum al_equiv)e)) == 0) {
			*out = (enum al_equiv)e;
			return true;
		}
	return false;
}

struct al_surgery {
	al_model *m;
	al_span root;
	struct al_arena arena;
	struct al_rewrite *rw;
	size_t n_rw, n_applied;
	struct al_splice *sp;
};

/* ------------------------------------------------------------------ helpers */

static bool say(struct pctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool say(struct pctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof c->why, fmt, ap);
	va_end(ap);
	return false;
}

static bool shape_known(const struct al_shape *s)
{
	if (!s || s->rank < 0 || s->rank > AL_SHAPE_MAX_RANK || s->flex)
		return false;
	for (int i = 0; i < s->rank; i++)
		if (s->dims[i] < 0)
			return false;
	return true;
}

static void fmt_shape(const struct al_shape *s, char *buf, size_t cap)
{
	al_shape_format(s, buf, cap);
}

/* Whether a name is already a blob or layer name of n's model. */
static bool name_taken(const struct al_node *n, const char *name)
{
	const struct al_submodel *sub = al_src(n)->sub;
	for (uint32_t i = 0; i < sub->n_inputs; i++)
		if (strcmp(sub->inputs[i].name, name) == 0)
			return true;
	const struct al_graph *g = n->owner;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *m = &g->nodes[k];
		if (m->name && strcmp(m->name, name) == 0)
			return true;
		for (uint32_t j = 0; j < m->n_outputs; j++)
			if (strcmp(m->outputs[j], name) == 0)
				return true;
	}
	return false;
}

static const char *fresh_name(struct pctx *c, const char *base, const char *suffix)
{
	for (int k = 0; k < 100; k++) {
		char *nm = k ? al_arena_printf(&c->s->arena, "%s__%s%d", base, suffix, k)
			     : al_arena_printf(&c->s->arena, "%s__%s", base, suffix);
		if (!nm)
			return NULL;
		if (!name_taken(c->n, nm))
			return nm;
	}
	return NULL;
}

/* The new payload of c->n: its fields in order, the params field replaced by
 * field `pfield` with payload params, and (when inputs) its inputs replaced
 * (dropping the inputTensor ranks, which described the old inputs). */
static bool rebuild_layer(struct pctx *c, uint32_t pfield, const struct al_buf *params,
			  const char *const *inputs, uint32_t n_inputs)
{
	struct pb_iter it;
	struct pb_field f;
	bool inputs_done = false, params_done = false;
	pb_iter_init(&it, c->src->msg);
	size_t start = 0;
	while ((start = it.pos, pb_next(&it, &f))) {
		const uint8_t *raw = c->src->msg.p + start;
		size_t rawn = it.pos - start;
		if (f.wire == PB_LEN && f.data.p == c->src->params.p && f.data.n == c->src->params.n) {
			al_buf_len(&c->layer, pfield, params->p, params->n);
			params_done = true;
		} else if (inputs && f.num == L_INPUT) {
			if (!inputs_done)
				for (uint32_t i = 0; i < n_inputs; i++)
					al_buf_str(&c->layer, L_INPUT, inputs[i]);
			inputs_done = true;
		} else if (inputs && f.num == L_INPUT_TENSOR) {
			continue;
		} else {
			al_buf_put(&c->layer, raw, rawn);
		}
	}
	if (it.err || !params_done)
		return say(c, "the layer message could not be re-read");
	if (inputs && !inputs_done)
		return say(c, "the layer has no inputs");
	return !c->layer.failed || say(c, "out of memory");
}

/* A whole `layers` field holding a new layer: name, inputs, output, params. */
static void new_layer(struct pctx *c, const char *name, const char *const *inputs, uint32_t n_in,
		      const char *output, uint32_t pfield, const struct al_buf *params)
{
	struct al_buf l = {0};
	al_buf_str(&l, L_NAME, name);
	for (uint32_t i = 0; i < n_in; i++)
		al_buf_str(&l, L_INPUT, inputs[i]);
	al_buf_str(&l, L_OUTPUT, output);
	al_buf_len(&l, pfield, params->p, params->n);
	if (l.failed)
		c->pre.failed = true;
	else
		al_buf_len(&c->pre, NN_LAYERS, l.p, l.n);
	al_buf_free(&l);
	if (c->n_names < 15)
		c->names[c->n_names++] = name;
}

/* Legacy add / multiply broadcast only among [B,1,1,1], [B,C,1,1], [B,1,H,W] and
 * [B,C,H,W]-style shapes (the format facts): equal ranks, equal leading axes,
 * and the smaller operand's (C, H, W) one of 1x1x1, Cx1x1, 1xHxW, CxHxW. */
static bool legacy_broadcast(struct pctx *c, const struct al_shape *a, const struct al_shape *b)
{
	char sa[64], sb[64];
	fmt_shape(a, sa, sizeof sa);
	fmt_shape(b, sb, sizeof sb);
	if (!shape_known(a) || !shape_known(b))
		return say(c, "input shapes %s, %s not known statically", sa, sb);
	if (a->rank != b->rank)
		return say(c, "input ranks differ (%s, %s): legacy layers do not broadcast ranks", sa, sb);
	if (a->rank < 1 || a->rank > 5)
		return say(c, "rank %d: legacy layers take ranks 1 to 5", a->rank);
	if (memcmp(a->dims, b->dims, (size_t)a->rank * sizeof a->dims[0]) == 0)
		return true;
	if (a->rank < 3)
		return say(c, "broadcast of %s with %s below rank 3", sa, sb);
	int r = a->rank;
	for (int i = 0; i < r - 3; i++)
		if (a->dims[i] != b->dims[i])
			return say(c, "%s and %s differ in a leading (batch) axis", sa, sb);
	for (int side = 0; side < 2; side++) {
		const struct al_shape *full = side ? b : a, *x = side ? a : b;
		int64_t C = full->dims[r - 3], H = full->dims[r - 2], W = full->dims[r - 1];
		int64_t c3 = x->dims[r - 3], h3 = x->dims[r - 2], w3 = x->dims[r - 1];
		bool cok = c3 == C || c3 == 1, hw_one = h3 == 1 && w3 == 1, hw_full = h3 == H && w3 == W;
		if (cok && (hw_one || hw_full))
			return true;
	}
	return say(c, "%s with %s is not a legacy broadcast (1x1x1, Cx1x1, 1xHxW, CxHxW)", sa, sb);
}

static bool top_level(struct pctx *c)
{
	if (c->n->owner->depth != 0)
		return say(c, "layer in a nested network (branch / loop body)");
	if (!c->src->msg.p || !c->src->params.p)
		return say(c, "no layer message");
	return true;
}

/* ------------------------------------------------------------------ passes */

static bool elementwise(struct pctx *c, uint32_t field, const char *to)
{
	if (!top_level(c))
		return false;
	if (c->n->n_inputs != 2)
		return say(c, "%u inputs (2 expected)", c->n->n_inputs);
	if (!legacy_broadcast(c, al_node_in_shape(c->n, 0), al_node_in_shape(c->n, 1)))
		return false;
	struct al_buf empty = {0};
	if (!rebuild_layer(c, field, &empty, NULL, 0))
		return false;
	snprintf(c->after, sizeof c->after, "%s", to);
	c->names[c->n_names++] = c->n->name;
	return true;
}

static bool p_addb(struct pctx *c)
{
	return elementwise(c, F_ADD, "add");
}

static bool p_mulb(struct pctx *c)
{
	return elementwise(c, F_MULTIPLY, "multiply");
}

/* a - b == a + (-b) exactly in IEEE arithmetic (negation is exact). */
static bool p_subb(struct pctx *c)
{
	if (!top_level(c))
		return false;
	if (c->n->n_inputs != 2)
		return say(c, "%u inputs (2 expected)", c->n->n_inputs);
	if (!legacy_broadcast(c, al_node_in_shape(c->n, 0), al_node_in_shape(c->n, 1)))
		return false;
	const char *neg = fresh_name(c, c->n->name, "neg");
	if (!neg)
		return say(c, "no free name for the negation");
	struct al_buf lin = {0}, act = {0}, empty = {0};
	al_buf_float(&lin, 1, -1.0f);
	al_buf_len(&act, 5, lin.p, lin.n); /* ActivationParams.linear = 5 */
	const char *in_b = c->n->inputs[1];
	new_layer(c, neg, &in_b, 1, neg, F_ACTIVATION, &act);
	al_buf_free(&lin);
	al_buf_free(&act);
	const char *ins[2] = {c->n->inputs[0], neg};
	if (!rebuild_layer(c, F_ADD, &empty, ins, 2))
		return false;
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "activation linear(-1) '%s' + add", neg);
	return true;
}

/* concatND along axis rank-3 of equal-rank inputs is the legacy channel concat. */
static bool p_concatnd(struct pctx *c)
{
	if (!top_level(c))
		return false;
	uint64_t v;
	int64_t axis = pb_get_varint(c->src->params, 1, &v) ? (int64_t)v : 0;
	if (pb_get_varint(c->src->params, 2, &v) && v)
		return say(c, "interleave is set");
	if (c->n->n_inputs < 2)
		return say(c, "%u inputs", c->n->n_inputs);
	int rank = -1;
	for (uint32_t i = 0; i < c->n->n_inputs; i++) {
		const struct al_shape *s = al_node_in_shape(c->n, i);
		if (!shape_known(s))
			return say(c, "input %u shape not known statically", i);
		if (rank >= 0 && s->rank != rank)
			return say(c, "inputs of different ranks");
		rank = s->rank;
	}
	if (rank < 3 || rank > 5)
		return say(c, "rank %d (concat takes ranks 3 to 5)", rank);
	int64_t ax = axis < 0 ? axis + rank : axis;
	if (ax != rank - 3)
		return say(c, "axis %lld is not the channel axis (-3) of rank-%d inputs", (long long)axis, rank);
	struct al_buf empty = {0};
	if (!rebuild_layer(c, F_CONCAT, &empty, NULL, 0))
		return false;
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "concat");
	return true;
}

static int log2_exact(uint64_t f)
{
	if (f == 0 || (f & (f - 1)))
		return -1;
	int k = 0;
	while (f > 1) {
		f >>= 1;
		k++;
	}
	return k;
}

/* Nearest-neighbour upsampling by 2^a x 2^b is a chain of x2 (or x1) steps. */
static bool p_upsample(struct pctx *c)
{
	if (!top_level(c))
		return false;
	al_span p = c->src->params;
	uint64_t v, sf[4] = {1, 1};
	if (pb_get_varint(p, 5, &v) && v != 0)
		return say(c, "mode is bilinear (only nearest is exact as a chain)");
	if (pb_has(p, 7))
		return say(c, "fractional scaling factor");
	if (pb_get_varint(p, 6, &v) && v != 0)
		return say(c, "linearUpsampleMode is set");
	long k = pb_get_varints(p, 1, sf, 4);
	if (k != 2)
		return say(c, "scalingFactor has %ld values", k);
	int eh = log2_exact(sf[0]), ew = log2_exact(sf[1]);
	if (eh < 0 || ew < 0 || eh > 6 || ew > 6)
		return say(c, "scalingFactor %llux%llu is not a power of two", (unsigned long long)sf[0],
			   (unsigned long long)sf[1]);
	int steps = eh > ew ? eh : ew;
	if (steps < 2)
		return say(c, "scalingFactor %llux%llu needs no chain", (unsigned long long)sf[0],
			   (unsigned long long)sf[1]);
	const char *prev = c->n->inputs && c->n->n_inputs == 1 ? c->n->inputs[0] : NULL;
	if (!prev)
		return say(c, "%u inputs", c->n->n_inputs);
	for (int i = 0; i < steps; i++) {
		struct al_buf up = {0};
		uint64_t f2[2] = {i < eh ? 2u : 1u, i < ew ? 2u : 1u};
		al_buf_packed(&up, 1, f2, 2);
		if (i < steps - 1) {
			const char *nm = fresh_name(c, c->n->name, i ? "x2_" : "x2");
			if (!nm) {
				al_buf_free(&up);
				return say(c, "no free name");
			}
			new_layer(c, nm, &prev, 1, nm, F_UPSAMPLE, &up);
			prev = nm;
		} else if (!rebuild_layer(c, F_UPSAMPLE, &up, &prev, 1)) {
			al_buf_free(&up);
			return false;
		}
		al_buf_free(&up);
	}
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "%d upsample x2 layers", steps);
	return true;
}

/* Whether a padding message (ValidPadding) pads nothing. */
static bool zero_padding(al_span valid)
{
	al_span border;
	if (!pb_get_bytes(valid, 1, &border))
		return true;
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, border);
	while (pb_next(&it, &f)) {
		if (f.num != 10 || f.wire != PB_LEN)
			continue;
		uint64_t v;
		if ((pb_get_varint(f.data, 1, &v) && v) || (pb_get_varint(f.data, 2, &v) && v))
			return false;
	}
	return it.err == 0;
}

/* max over a K window == max over K1 then over K2 windows when K1 + K2 - 1 = K
 * (the first with stride 1, the last with the layer's stride), no padding. */
static bool p_maxpool(struct pctx *c)
{
	if (!top_level(c))
		return false;
	al_span p = c->src->params, valid;
	uint64_t v, ks[4] = {3, 3}, st[4] = {1, 1};
	if (pb_get_varint(p, 1, &v) && v != 0)
		return say(c, "%s pooling (only max decomposes exactly)", v == 1 ? "average" : "L2");
	if (pb_get_varint(p, 60, &v) && v)
		return say(c, "global pooling");
	if (pb_has(p, 31) || pb_has(p, 32) || !pb_get_bytes(p, 30, &valid))
		return say(c, "padding is not valid (same / includeLastPixel change the windows)");
	if (!zero_padding(valid))
		return say(c, "valid padding with non-zero amounts");
	if (pb_has(p, 10) && pb_get_varints(p, 10, ks, 4) != 2)
		return say(c, "kernelSize is not [H, W]");
	if (pb_has(p, 20) && pb_get_varints(p, 20, st, 4) != 2)
		return say(c, "stride is not [H, W]");
	if (ks[0] <= 13 && ks[1] <= 13)
		return say(c, "kernel %llux%llu already <= 13", (unsigned long long)ks[0],
			   (unsigned long long)ks[1]);
	if (ks[0] == 0 || ks[1] == 0 || ks[0] > 1024 || ks[1] > 1024)
		return say(c, "kernel %llux%llu out of range", (unsigned long long)ks[0],
			   (unsigned long long)ks[1]);
	if (c->n->n_inputs != 1)
		return say(c, "%u inputs", c->n->n_inputs);
	uint64_t rest[2] = {ks[0] - 1, ks[1] - 1}; /* sum of (k_i - 1) still to cover */
	int steps = (int)(((rest[0] > rest[1] ? rest[0] : rest[1]) + 11) / 12);
	const char *prev = c->n->inputs[0];
	char desc[96] = "";
	size_t dl = 0;
	for (int i = 0; i < steps; i++) {
		uint64_t k[2];
		for (int a = 0; a < 2; a++) {
			uint64_t take = rest[a] > 12 ? 12 : rest[a];
			k[a] = take + 1;
			rest[a] -= take;
		}
		if (dl < sizeof desc)
			dl += (size_t)snprintf(desc + dl, sizeof desc - dl, "%s%llux%llu", i ? " + " : "",
					       (unsigned long long)k[0], (unsigned long long)k[1]);
		struct al_buf pp = {0};
		if (i < steps - 1) {
			uint64_t one[2] = {1, 1};
			al_buf_packed(&pp, 10, k, 2);
			al_buf_packed(&pp, 20, one, 2);
			al_buf_len(&pp, 30, NULL, 0);
			const char *nm = fresh_name(c, c->n->name, i ? "pool_" : "pool");
			if (!nm) {
				al_buf_free(&pp);
				return say(c, "no free name");
			}
			new_layer(c, nm, &prev, 1, nm, F_POOLING, &pp);
			prev = nm;
		} else {
			/* the layer's own params with the last kernel */
			struct pb_iter it;
			struct pb_field f;
			size_t start;
			pb_iter_init(&it, p);
			while ((start = it.pos, pb_next(&it, &f)))
				if (f.num != 10)
					al_buf_put(&pp, p.p + start, it.pos - start);
			al_buf_packed(&pp, 10, k, 2);
			if (it.err || !rebuild_layer(c, F_POOLING, &pp, &prev, 1)) {
				al_buf_free(&pp);
				return say(c, "the pooling message could not be re-read");
			}
		}
		al_buf_free(&pp);
	}
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "max pools %s (stride %llux%llu on the last)", desc,
		 (unsigned long long)st[0], (unsigned long long)st[1]);
	return true;
}

/* ------------------------------------------------------------------ plan */

static bool skipped(const struct al_surgery_opts *o, const char *name)
{
	for (size_t i = 0; o && i < o->n_skip; i++)
		if (o->skip[i] && name && strcmp(o->skip[i], name) == 0)
			return true;
	return false;
}

/* The root Model bytes of m: the mapping holding its layer messages. */
static bool find_root(const al_model *m, al_span *root)
{
	if (m->is_package || m->n_maps < 1)
		return false;
	*root = m->maps[0].s;
	return root->p != NULL;
}

static enum al_status add_rw(struct al_surgery *s, const struct al_pass *p, const struct al_node *n,
			     bool applied, const char *after, const char *why, const char *const *names,
			     uint32_t n_names)
{
	struct al_rewrite *r = al_realloc(s->rw, (s->n_rw + 1) * sizeof *r);
	if (!r)
		return AL_E_NOMEM;
	s->rw = r;
	r = &s->rw[s->n_rw++];
	memset(r, 0, sizeof *r);
	r->pass = p;
	r->node = n;
	r->applied = applied;
	r->after = after ? al_arena_strndup(&s->arena, after, strlen(after)) : NULL;
	r->why_not = why ? al_arena_strndup(&s->arena, why, strlen(why)) : NULL;
	if (n_names) {
		r->layers = al_arena_array(&s->arena, n_names, sizeof *r->layers);
		if (r->layers)
			for (uint32_t i = 0; i < n_names; i++)
				r->layers[i] = names[i];
		r->n_layers = r->layers ? n_names : 0;
	}
	if (applied)
		s->n_applied++;
	return s->arena.failed ? AL_E_NOMEM : AL_OK;
}

static enum al_status plan_node(struct al_surgery *s, const struct al_surgery_opts *o,
				const struct al_node *n, bool can_write)
{
	for (size_t k = 0; k < N_PASSES; k++) {
		if (!n->type || strcmp(n->type, passes[k].from) != 0)
			continue;
		const struct al_pass *p = &passes[k];
		if (!can_write)
			return add_rw(s, p, n, false, NULL, "only NeuralNetwork .mlmodel files are rewritten",
				      NULL, 0);
		if (skipped(o, n->name))
			return add_rw(s, p, n, false, NULL, "left as it was (skipped)", NULL, 0);
		if (p->equiv > (o ? o->allow : AL_EQ_EXACT))
			return add_rw(s, p, n, false, NULL,
				      p->equiv == AL_EQ_REASSOCIATE ? "rounds differently: needs --allow reassociate"
								    : "changes results: needs --allow approximate",
				      NULL, 0);
		struct pctx c = {.s = s, .n = n, .src = al_src(n)};
		bool ok = c.src && pass_fns[k](&c);
		enum al_status st = AL_OK;
		if (ok && (c.pre.failed || c.layer.failed))
			st = AL_E_NOMEM;
		if (ok && !st && c.pre.n)
			st = al_splice_insert_before(s->sp, c.src->msg, c.pre.p, c.pre.n);
		if (ok && !st)
			st = al_splice_replace(s->sp, c.src->msg, c.src->msg.p, c.src->msg.n, c.layer.p,
					       c.layer.n);
		al_buf_free(&c.pre);
		al_buf_free(&c.layer);
		if (st)
			return st;
		return add_rw(s, p, n, ok, ok ? c.after : NULL, ok ? NULL : c.why, c.names, c.n_names);
	}
	return AL_OK;
}

enum al_status al_surgery_plan(al_model *m, const struct al_surgery_opts *o, al_surgery **out,
			       al_diags *d)
{
	if (!m || !out)
		return AL_E_INVALID_ARG;
	*out = NULL;
	enum al_status st = al_model_infer_shapes(m, d);
	if (st)
		return st;
	struct al_surgery *s = al_calloc(1, sizeof *s);
	if (!s)
		return AL_E_NOMEM;
	s->m = m;
	bool can_write = find_root(m, &s->root);
	if (can_write && !(s->sp = al_splice_new(s->root))) {
		al_free(s);
		return AL_E_NOMEM;
	}
	for (size_t i = 0; i < m->n_subs && !st; i++) {
		const struct al_submodel *sub = m->subs[i];
		bool nn = sub->world == AL_WORLD_NN;
		for (uint32_t g = 0; g < sub->n_graphs && !st; g++) {
			const struct al_graph *gr = sub->graphs[g];
			for (uint32_t k = 0; k < gr->n_nodes && !st; k++)
				st = plan_node(s, o, &gr->nodes[k], can_write && nn);
		}
	}
	if (st == AL_OK && s->sp)
		st = al_splice_finish(s->sp, NULL);
	if (st) {
		if (st == AL_E_INVALID_ARG || st == AL_E_FORMAT)
			al_diag_add(d, AL_SEV_ERROR, m->path, UINT64_MAX, NULL, NULL,
				    "the rewrites could not be placed in the file (%s)", al_status_str(st));
		al_surgery_free(s);
		return st == AL_E_INVALID_ARG ? AL_E_FORMAT : st;
	}
	*out = s;
	return AL_OK;
}

size_t al_surgery_count(const al_surgery *s)
{
	return s ? s->n_rw : 0;
}

const struct al_rewrite *al_surgery_get(const al_surgery *s, size_t i)
{
	return s && i < s->n_rw ? &s->rw[i] : NULL;
}

size_t al_surgery_applied(const al_surgery *s)
{
	return s ? s->n_applied : 0;
}

void al_surgery_free(al_surgery *s)
{
	if (!s)
		return;
	al_splice_free(s->sp);
	al_free(s->rw);
	al_arena_free(&s->arena);
	al_free(s);
}

enum al_status al_surgery_bytes(al_surgery *s, uint8_t **out, size_t *n, al_diags *d)
{
	if (!s || !out || !n)
		return AL_E_INVALID_ARG;
	if (!s->sp) {
		al_diag_add(d, AL_SEV_ERROR, s->m->path, UINT64_MAX, NULL, NULL,
			    "only NeuralNetwork .mlmodel files are rewritten");
		return AL_E_UNSUPPORTED;
	}
	enum al_status st = al_splice_to_buffer(s->sp, out, n);
	if (st == AL_E_NOMEM)
		al_diag_add(d, AL_SEV_ERROR, s->m->path, UINT64_MAX, NULL, NULL, "out of memory");
	return st;
}

enum al_status al_surgery_write(al_surgery *s, const char *path, al_diags *d)
{
	if (!s || !path)
		return AL_E_INVALID_ARG;
	if (!s->sp) {
		al_diag_add(d, AL_SEV_ERROR, s->m->path, UINT64_MAX, NULL, NULL,
			    "only NeuralNetwork .mlmodel files are rewritten");
		return AL_E_UNSUPPORTED;
	}
	size_t pl = strlen(path);
	char *tmp = al_malloc(pl + 16);
	if (!tmp)
		return AL_E_NOMEM;
	snprintf(tmp, pl + 16, "%s.tmpXXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		al_diag_add(d, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL, "cannot create %s: %s", tmp,
			    strerror(errno));
		al_free(tmp);
		return AL_E_IO;
	}
	(void)fchmod(fd, 0644);
	int in_fd = open(s->m->path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (in_fd >= 0 && (fstat(in_fd, &sb) != 0 || (uint64_t)sb.st_size != s->root.n)) {
		close(in_fd); /* changed since it was mapped: copy from the mapping */
		in_fd = -1;
	}
	enum al_status st = al_splice_to_fd(s->sp, in_fd, fd);
	if (in_fd >= 0)
		close(in_fd);
	if (close(fd) != 0 && st == AL_OK)
		st = AL_E_IO;
	if (st == AL_OK && rename(tmp, path) != 0)
		st = AL_E_IO;
	if (st != AL_OK) {
		al_diag_add(d, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL, "cannot write %s: %s", path,
			    st == AL_E_IO ? strerror(errno) : al_status_str(st));
		unlink(tmp);
	}
	al_free(tmp);
	return st;
}
