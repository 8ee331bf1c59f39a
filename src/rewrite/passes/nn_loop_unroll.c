/* SPDX-License-Identifier: MIT */
/* nn_loop_unroll.c: nn-loop-unroll, a NeuralNetwork `loop` layer whose trip
 * count is known when the file is read, unrolled into its body's layers step by
 * step (docs/surgery.md has its row; tests/pass_nn_loop_unroll.sh).
 *
 * coremltools 8.3 converts PyTorch's nn.GRU to a NeuralNetwork (its gate order
 * and reset_after form are not the `gru` layer's) as
 *   i = copy(loadConstantND 0); buf = copy(loadConstantND zeros [T+1, B, H])
 *   loop (maxLoopIterations 0) cond: lessThan(i, loadConstantND T)
 *     body: gather(x, i), gather(buf, i), squeeze, innerProduct ... the gates,
 *           add(i, alpha 1), expandDims, scatter(buf, i + 1, h, mode add),
 *           copy -> i, copy -> buf
 * which falls back whole (ANE016 the loop, ANE003 the gathers by a runtime
 * index, ANE017 the scatter, ANE006 the loadConstantNDs). The NeuralNetwork
 * loop has no loop variables: its networks read and write blobs of the
 * enclosing scope. The pass runs the condition and the body symbolically, a
 * blob being one of
 *   - a value known when the file is read (a loadConstantND, a copy of one, the
 *     index i + alpha, a comparison of such): folded, no layer;
 *   - a runtime blob: the body's layers copied per step under new names
 *     (<output>__u<step>), their inputs renamed to the current blobs;
 *   - a buffer written row by row (scatter on axis 0 at a known index into a
 *     constant): the rows tracked one by one, each a runtime blob or a row of
 *     the constant.
 * and rewrites
 *   - gather(x, k)       -> sliceStatic [k, k+1) of x on the gather's axis (the
 *                           same rank: the index is [1]); of a tracked buffer:
 *                           the row's blob itself
 *   - scatter(buf, k, u) -> row k is u (mode update, or mode add onto a row of
 *                           +-0 constants; another row: add(row, u))
 *   - add / multiply of a one-value [1] constant -> activation linear
 *                           (x + c: alpha 1, beta c; c x: alpha c, beta -0.0)
 *   - a blob the loop writes and a later layer reads: its last value under its
 *     own name (a buffer: concatND of its rows on axis 0, written -rank so that
 *     concatnd-to-concat takes a rank-3 one; a runtime blob: activation linear
 *     1, -0.0), the copy that set it before the loop deleted, and the index's
 *     copy and constant too when nothing else reads them.
 * The same layers on the same values in the same order: exact (the one
 * difference: a mode-add scatter onto +0.0 turns an update of -0.0 into +0.0,
 * a sign of zero no consumer of a GRU's h tells apart). Refused: a loop with an
 * input (a runtime iteration count), a condition not known when the file is
 * read, more than LOOP_MAX_STEPS steps, loopBreak / loopContinue / nested
 * networks in the body, a blob read before anything writes it, a buffer read
 * by any layer but gather / scatter. A folded value another layer reads as a
 * tensor becomes a new loadConstantND (ANE006: `fix` then drops the rewrite,
 * saying that layer would still fall back). */
#include "passes.h"
#include "coreml_fields.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { L_NAME = 1, L_INPUT = 2, L_OUTPUT = 3 };
enum { F_ACTIVATION = 130, F_ADD = 230, F_CONCAT_ND = 980,
       F_SLICE_STATIC = 995, F_LOAD_CONSTANT_ND = 1070 };

#define LOOP_MAX_STEPS 64
#define LOOP_MAX_VALS 512  /* blob names tracked */
#define LOOP_MAX_KNOWN 64  /* values of a folded constant */
#define LOOP_MAX_ROWS 4096 /* rows of a tracked buffer */
#define LOOP_MAX_CONSTS 64 /* body constants emitted */

enum vkind { V_BLOB, V_CONST, V_ROWS };

/* One row of a tracked buffer: a runtime blob of shape [1, ...], or (blob
 * NULL) the row of the buffer's constant. */
struct lrow {
	const char *blob;
};

struct lval {
	const char *name; /* in the loop's scope */
	enum vkind kind;
	const char *blob; /* V_BLOB: its name now; V_CONST / V_ROWS: the constant's blob
			   * holding exactly these values (NULL: none yet) */
	/* V_CONST and V_ROWS: the constant's shape, its values when few */
	int rank;
	int64_t dims[AL_SHAPE_MAX_RANK];
	float k[LOOP_MAX_KNOWN];
	uint32_t nk;      /* values known (0: not read) */
	al_span weights;  /* the loadConstantND's WeightParams, or {0} */
	const struct al_node *knode; /* that loadConstantND */
	/* V_ROWS */
	struct lrow *rows;
	uint32_t n_rows;
};

struct lu {
	struct ali_nn_pass *p;
	struct al_mil_pass *c;
	struct lval v[LOOP_MAX_VALS];
	uint32_t nv;
	int step;
	struct { const struct al_node *n; const char *blob; } consts[LOOP_MAX_CONSTS];
	uint32_t n_consts;
	float *zeros_of; /* scratch: the values of constant zeros_node, for its rows */
	const struct al_node *zeros_node;
	const char *used[64]; /* blobs of constants before the loop that new layers read */
	uint32_t n_used;
};

static void use(struct lu *u, const char *blob)
{
	for (uint32_t i = 0; i < u->n_used; i++)
		if (strcmp(u->used[i], blob) == 0)
			return;
	if (u->n_used < 64)
		u->used[u->n_used++] = blob;
	else
		u->n_used = UINT32_MAX / 2; /* too many to tell: treat every one as read */
}

static bool used(const struct lu *u, const char *blob)
{
	if (u->n_used > 64)
		return true;
	for (uint32_t i = 0; i < u->n_used; i++)
		if (strcmp(u->used[i], blob) == 0)
			return true;
	return false;
}

static bool say(struct lu *u, const char *fmt, const char *a, const char *b)
{
	return ali_mil_say(u->c, fmt, a ? a : "?", b ? b : "?");
}

static struct lval *find(struct lu *u, const char *name)
{
	for (uint32_t i = u->nv; i-- > 0;)
		if (strcmp(u->v[i].name, name) == 0)
			return &u->v[i];
	return NULL;
}

/* The entry of name, set anew (kind, no values). */
static struct lval *put(struct lu *u, const char *name, enum vkind kind)
{
	struct lval *w = find(u, name);
	if (!w) {
		if (u->nv >= LOOP_MAX_VALS)
			return ali_mil_say(u->c, "more than %d blobs in the loop", LOOP_MAX_VALS), NULL;
		w = &u->v[u->nv++];
	}
	memset(w, 0, sizeof *w);
	w->name = name;
	w->kind = kind;
	return w;
}

static bool is(const struct al_node *n, const char *type)
{
	return n && n->type && strcmp(n->type, type) == 0;
}

/* A loadConstantND's shape and (when at most LOOP_MAX_KNOWN float values) values into w. */
static bool read_const(const struct al_node *k, struct lval *w)
{
	const struct al_node_src *s = al_src(k);
	uint64_t sh[AL_SHAPE_MAX_RANK + 1];
	if (!s || !s->params.p)
		return false;
	long r = pb_get_varints(s->params, AL_PB_LoadConstantNDLayerParams_shape, sh, AL_SHAPE_MAX_RANK + 1);
	if (r < 1 || r > AL_SHAPE_MAX_RANK)
		return false;
	uint64_t count = 1;
	for (long i = 0; i < r; i++) {
		if (sh[i] < 1 || sh[i] > (1u << 30) || (count *= sh[i]) > (UINT64_C(1) << 32))
			return false;
		w->dims[i] = (int64_t)sh[i];
	}
	w->rank = (int)r;
	w->knode = k;
	w->nk = 0;
	if (pb_get_bytes(s->params, AL_PB_LoadConstantNDLayerParams_data, &w->weights) && count <= LOOP_MAX_KNOWN &&
	    pb_get_floats(w->weights, AL_PB_WeightParams_floatValue, w->k, LOOP_MAX_KNOWN) == (long)count)
		w->nk = (uint32_t)count;
	return true;
}

static uint32_t pos(const struct al_node *loop);

/* Whether a layer of g (or of a network nested in it) writes blob. */
static bool writes(const struct al_graph *g, const char *blob, int depth)
{
	if (!g || depth > AL_MAX_DEPTH)
		return true;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *m = &g->nodes[k];
		for (uint32_t j = 0; j < m->n_outputs; j++)
			if (m->outputs[j] && strcmp(m->outputs[j], blob) == 0)
				return true;
		for (uint32_t j = 0; j < m->n_sub; j++)
			if (writes(m->sub[j], blob, depth + 1))
				return true;
	}
	return false;
}

/* What an outer blob is when the loop starts: a constant (a loadConstantND,
 * through copies) or a runtime blob. */
static struct lval *outer(struct lu *u, const char *name)
{
	const struct al_node *n = u->c->n, *pr;
	const char *nm = name;
	for (int hop = 0; hop < 8 && (pr = ali_nn_producer(n, nm)) != NULL; hop++) {
		if (is(pr, "copy") && pr->n_inputs == 1 && pr->inputs[0]) {
			nm = pr->inputs[0];
			n = pr;
			continue;
		}
		if (is(pr, "loadConstantND") && pr->n_outputs == 1) {
			struct lval tmp = {0};
			if (!read_const(pr, &tmp))
				break;
			struct lval *w = put(u, name, V_CONST);
			if (!w)
				return NULL;
			tmp.name = name;
			tmp.kind = V_CONST;
			tmp.blob = pr->outputs[0];
			*w = tmp;
			return w;
		}
		break;
	}
	/* a runtime blob: a model input or a layer's output before the loop */
	const struct al_submodel *sub = u->c->src->sub;
	bool input = false;
	for (uint32_t i = 0; i < sub->n_inputs && !input; i++)
		input = sub->inputs[i].name && strcmp(sub->inputs[i].name, name) == 0;
	const struct al_node *loop = u->c->n;
	bool nested = false; /* written inside a branch / loop before this one */
	for (uint32_t k = 0; !input && k < pos(loop) && !nested; k++)
		for (uint32_t j = 0; j < loop->owner->nodes[k].n_sub && !nested; j++)
			nested = writes(loop->owner->nodes[k].sub[j], name, 0);
	if (!input && !nested && !ali_nn_producer(loop, name))
		return ali_mil_say(u->c, "'%s' is read in the loop before anything writes it", name), NULL;
	struct lval *w = put(u, name, V_BLOB);
	if (w)
		w->blob = name;
	return w;
}

static struct lval *get(struct lu *u, const char *name)
{
	struct lval *w = find(u, name);
	return w ? w : outer(u, name);
}

/* A layer message into c->pre (or c->layer when last), listed by name. */
static bool emit(struct lu *u, bool last, const char *name, const char *const *ins, uint32_t n_in,
		 const char *out, uint32_t field, struct al_buf *prm)
{
	bool ok = ali_nn_emit(u->c, last, name, ins, n_in, &out, 1, field, prm);
	ali_buf_free(prm);
	return ok;
}

static const char *fresh(struct lu *u, const char *base, const char *what)
{
	char sfx[32];
	snprintf(sfx, sizeof sfx, "%s%d", what, u->step);
	const char *nm = ali_nn_fresh(u->c, base, sfx);
	if (!nm)
		ali_mil_say(u->c, "no free name after '%s'", base);
	return nm;
}

/* sliceStatic of x (rank r) at [b, b + 1) on axis a, named out. */
static bool emit_row(struct lu *u, const char *x, int r, int a, int64_t b, const char *out)
{
	uint64_t bi[AL_SHAPE_MAX_RANK], ei[AL_SHAPE_MAX_RANK], bm[AL_SHAPE_MAX_RANK], em[AL_SHAPE_MAX_RANK],
		st[AL_SHAPE_MAX_RANK];
	for (int i = 0; i < r; i++) {
		bi[i] = i == a ? (uint64_t)b : 0;
		ei[i] = i == a ? (uint64_t)(b + 1) : 0;
		bm[i] = em[i] = i != a;
		st[i] = 1;
	}
	use(u, x);
	struct al_buf prm = {0};
	ali_buf_packed(&prm, 1, bi, (size_t)r);
	ali_buf_packed(&prm, 2, bm, (size_t)r);
	ali_buf_packed(&prm, 3, ei, (size_t)r);
	ali_buf_packed(&prm, 4, em, (size_t)r);
	ali_buf_packed(&prm, 5, st, (size_t)r);
	return emit(u, false, out, &x, 1, out, F_SLICE_STATIC, &prm);
}

/* The blob holding w's values: its own, a body constant written once, or a
 * folded value written as a new loadConstantND. */
static const char *blob_of(struct lu *u, struct lval *w, const char *base)
{
	if (w->kind == V_BLOB)
		return w->blob;
	if (w->blob) {
		use(u, w->blob);
		return w->blob;
	}
	if (w->kind == V_ROWS)
		return ali_mil_say(u->c, "the buffer '%s' is read by a layer other than gather / scatter", w->name),
		       NULL;
	for (uint32_t i = 0; w->knode && i < u->n_consts; i++)
		if (u->consts[i].n == w->knode && w->weights.p)
			return w->blob = u->consts[i].blob;
	const char *nm = fresh(u, base, "k");
	if (!nm)
		return NULL;
	struct al_buf prm = {0};
	if (w->weights.p && w->knode) { /* a body constant: its bytes as they are, once */
		const struct al_node_src *s = al_src(w->knode);
		ali_buf_put(&prm, s->params.p, s->params.n);
		if (u->n_consts < LOOP_MAX_CONSTS) {
			u->consts[u->n_consts].n = w->knode;
			u->consts[u->n_consts++].blob = nm;
		}
	} else if (w->nk) {
		uint64_t sh[AL_SHAPE_MAX_RANK];
		for (int i = 0; i < w->rank; i++)
			sh[i] = (uint64_t)w->dims[i];
		struct al_buf wp = {0};
		for (uint32_t i = 0; i < w->nk; i++)
			ali_buf_float(&wp, AL_PB_WeightParams_floatValue, w->k[i]);
		ali_buf_packed(&prm, AL_PB_LoadConstantNDLayerParams_shape, sh, (size_t)w->rank);
		ali_buf_len(&prm, AL_PB_LoadConstantNDLayerParams_data, wp.p, wp.n);
		prm.failed |= wp.failed;
		ali_buf_free(&wp);
	} else {
		return ali_mil_say(u->c, "the value of '%s' is not known", w->name), NULL;
	}
	if (!emit(u, false, nm, NULL, 0, nm, F_LOAD_CONSTANT_ND, &prm))
		return NULL;
	return w->blob = nm;
}

/* A one-value [1] constant of known value. */
static bool scalar(const struct lval *w, float *x)
{
	if (!w || w->kind != V_CONST || w->nk != 1 || w->rank != 1)
		return false;
	*x = w->k[0];
	return true;
}

static float alpha_of(const struct al_node *n, uint32_t field, float def)
{
	float a = def;
	const struct al_node_src *s = al_src(n);
	if (s && s->params.p)
		pb_get_float(s->params, field, &a);
	return a;
}

/* Fold a layer whose inputs are all known values (add, multiply, the
 * comparisons); *done false when it is not such a layer. */
static bool fold(struct lu *u, const struct al_node *n, bool *done)
{
	*done = false;
	static const char *const cmp[] = {"lessThan", "lessEqual", "greaterThan", "greaterEqual", "equal", "notEqual"};
	int op = -1;
	for (int i = 0; i < 6; i++)
		if (is(n, cmp[i]))
			op = i;
	bool add = is(n, "add"), mul = is(n, "multiply");
	if ((op < 0 && !add && !mul) || n->n_outputs != 1 || n->n_inputs < 1 || n->n_inputs > 2)
		return true;
	struct lval *a = find(u, n->inputs[0]), *b = n->n_inputs == 2 ? find(u, n->inputs[1]) : NULL;
	if (!a)
		a = outer(u, n->inputs[0]);
	if (n->n_inputs == 2 && !b)
		b = outer(u, n->inputs[1]);
	if (!a || (n->n_inputs == 2 && !b))
		return false;
	if (a->kind != V_CONST || !a->nk || (b && (b->kind != V_CONST || !b->nk)))
		return true;
	if (b && a->nk != b->nk && a->nk != 1 && b->nk != 1)
		return true;
	float alpha = alpha_of(n, op >= 0 ? 2 : 1, 0.0f); /* proto3: absent is 0 */
	const struct lval *big = b && b->nk > a->nk ? b : a;
	struct lval r = *big;
	r.name = n->outputs[0];
	r.blob = NULL, r.knode = NULL, r.weights = (al_span){0};
	for (uint32_t i = 0; i < big->nk; i++) {
		float x = a->k[a->nk == 1 ? 0 : i], y = b ? b->k[b->nk == 1 ? 0 : i] : alpha;
		float z;
		switch (op) {
		case 0: z = x < y; break;
		case 1: z = x <= y; break;
		case 2: z = x > y; break;
		case 3: z = x >= y; break;
		case 4: z = x == y; break;
		case 5: z = x != y; break;
		default: z = add ? x + y : x * y; break;
		}
		r.k[i] = z;
	}
	struct lval *w = put(u, n->outputs[0], V_CONST);
	if (!w)
		return false;
	*w = r;
	*done = true;
	return true;
}

/* An index: a known [1] value, an integer, in [-D, D); normalized to [0, D). */
static bool index_of(struct lu *u, const struct al_node *n, const struct lval *w, int64_t D, int64_t *k)
{
	if (!w || w->kind != V_CONST || w->nk != 1)
		return say(u, "'%s' reads '%s', an index not known when the file is read", n->name, w ? w->name : NULL);
	float x = w->k[0];
	if (!(x == floorf(x)) || x < (float)-D || x >= (float)D)
		return ali_mil_say(u->c, "'%s' reads index %g of %lld", n->name, (double)x, (long long)D);
	*k = (int64_t)x < 0 ? (int64_t)x + D : (int64_t)x;
	return true;
}

/* gather's and scatter's axis (the first field of both) */
_Static_assert(AL_PB_GatherLayerParams_axis == AL_PB_ScatterLayerParams_axis, "gather / scatter axis");

static int axis_of(const struct al_node *n, int rank, bool *ok)
{
	uint64_t v = 0;
	const struct al_node_src *s = al_src(n);
	if (s && s->params.p)
		pb_get_varint(s->params, AL_PB_GatherLayerParams_axis, &v);
	int64_t a = (int64_t)v;
	if (a < 0)
		a += rank;
	*ok = a >= 0 && a < rank;
	return (int)a;
}

/* Whether the rows of constant w from r0 (n rows) are all +-0 (values read once). */
static bool rows_zero(struct lu *u, const struct lval *w, int64_t r0)
{
	if (!w->weights.p || w->rank < 1)
		return false;
	uint64_t row = 1, count;
	for (int i = 1; i < w->rank; i++)
		row *= (uint64_t)w->dims[i];
	count = row * (uint64_t)w->dims[0];
	if (count > (UINT64_C(1) << 24) || w->weights.n < count * 4) /* packed floats: 4 bytes each */
		return false;
	if (u->zeros_node != w->knode) {
		ali_free(u->zeros_of);
		u->zeros_node = w->knode;
		u->zeros_of = ali_malloc((size_t)count * sizeof(float));
		if (!u->zeros_of ||
		    pb_get_floats(w->weights, AL_PB_WeightParams_floatValue, u->zeros_of, (size_t)count) != (long)count) {
			ali_free(u->zeros_of);
			u->zeros_of = NULL;
			u->zeros_node = NULL;
			return false;
		}
	}
	for (uint64_t i = 0; i < row; i++)
		if (u->zeros_of[(uint64_t)r0 * row + i] != 0.0f)
			return false;
	return true;
}

static bool gather(struct lu *u, const struct al_node *n)
{
	if (n->n_inputs != 2 || n->n_outputs != 1)
		return say(u, "'%s' (%s) is not a gather of one index", n->name, n->type);
	struct lval *d = get(u, n->inputs[0]), *ix = get(u, n->inputs[1]);
	if (!d || !ix)
		return false;
	int rank = d->kind == V_BLOB ? -1 : d->rank;
	if (d->kind == V_BLOB) {
		const struct al_shape *s = ali_node_in_shape(n, 0);
		rank = s && s->rank >= 1 && s->rank <= AL_SHAPE_MAX_RANK ? s->rank : -1;
	}
	bool ok;
	int a = rank > 0 ? axis_of(n, rank, &ok) : (ok = false, 0);
	if (!ok)
		return say(u, "'%s': the rank of '%s' or the gather axis is not known", n->name, n->inputs[0]);
	if (ix->kind != V_CONST || ix->nk != 1 || ix->rank != 1)
		return say(u, "'%s' reads '%s', not a [1] index known when the file is read", n->name, n->inputs[1]);
	int64_t D = -1;
	if (d->kind != V_BLOB)
		D = d->dims[a];
	else {
		const struct al_shape *s = ali_node_in_shape(n, 0);
		D = s && ali_nn_shape_static(s) ? s->dims[a] : -1;
	}
	int64_t k;
	if (D < 1)
		return say(u, "'%s': the gathered axis of '%s' has no static length", n->name, n->inputs[0]);
	if (!index_of(u, n, ix, D, &k))
		return false;
	if (d->kind == V_ROWS && a == 0 && d->rows[k].blob) {
		const char *row = d->rows[k].blob; /* before put: the output may be d's own name */
		struct lval *w = put(u, n->outputs[0], V_BLOB);
		return w && (w->blob = row, true);
	}
	const char *x = d->kind == V_ROWS ? d->blob : blob_of(u, d, n->inputs[0]);
	if (d->kind == V_ROWS && a != 0)
		return say(u, "'%s' gathers the buffer '%s' on another axis than its rows", n->name, n->inputs[0]);
	const char *out = x ? fresh(u, n->outputs[0], "u") : NULL;
	if (!out || !emit_row(u, x, rank, a, k, out))
		return false;
	struct lval *w = put(u, n->outputs[0], V_BLOB);
	return w && (w->blob = out, true);
}

static bool scatter(struct lu *u, const struct al_node *n)
{
	if (n->n_inputs != 3 || n->n_outputs != 1)
		return say(u, "'%s' (%s) is not a scatter of data, indices, updates", n->name, n->type);
	struct lval *d = get(u, n->inputs[0]), *ix = get(u, n->inputs[1]), *up = get(u, n->inputs[2]);
	if (!d || !ix || !up)
		return false;
	if (d->kind == V_BLOB || (d->kind == V_CONST && !d->blob))
		return say(u, "'%s' scatters into '%s', not a constant buffer", n->name, n->inputs[0]);
	bool ok;
	int a = axis_of(n, d->rank, &ok);
	uint64_t mode = 0;
	pb_get_varint(al_src(n)->params, AL_PB_ScatterLayerParams_mode, &mode);
	if (!ok || a != 0)
		return say(u, "'%s' scatters on another axis than %s's first", n->name, n->inputs[0]);
	if (mode > 1)
		return say(u, "'%s' (%s): only scatter modes update and add are unrolled", n->name, n->type);
	if (ix->kind != V_CONST || ix->nk != 1 || ix->rank != 1)
		return say(u, "'%s' reads '%s', not a [1] index known when the file is read", n->name, n->inputs[1]);
	int64_t k;
	if (!index_of(u, n, ix, d->dims[0], &k))
		return false;
	const char *ub = blob_of(u, up, n->inputs[2]);
	if (!ub)
		return false;
	if (d->dims[0] > LOOP_MAX_ROWS)
		return say(u, "'%s' scatters into '%s', a buffer of more rows than are tracked", n->name, n->inputs[0]);
	struct lrow *rows = ali_arena_array(&u->c->s->arena, (size_t)d->dims[0], sizeof *rows);
	if (!rows)
		return ali_mil_say(u->c, "out of memory");
	if (d->kind == V_ROWS)
		memcpy(rows, d->rows, (size_t)d->dims[0] * sizeof *rows);
	const char *row = rows[k].blob;
	if (mode == 1 && (row || !rows_zero(u, d, k))) { /* add onto a row that is not +-0: add(row, u) */
		const char *rb = row;
		if (!rb && !((rb = fresh(u, n->outputs[0], "row")) && emit_row(u, d->blob, d->rank, 0, k, rb)))
			return false;
		const char *sum = fresh(u, n->outputs[0], "u");
		if (!sum || !emit(u, false, sum, (const char *const[]){rb, ub}, 2, sum, F_ADD, &(struct al_buf){0}))
			return false;
		ub = sum;
	}
	rows[k].blob = ub;
	struct lval nw = *d;
	nw.name = n->outputs[0];
	nw.kind = V_ROWS;
	nw.rows = rows;
	nw.n_rows = (uint32_t)d->dims[0];
	struct lval *w = put(u, n->outputs[0], V_ROWS);
	return w && (*w = nw, true);
}

/* add / multiply of a runtime blob and a one-value [1] constant -> activation linear. */
static bool linear_fold(struct lu *u, const struct al_node *n, bool *done)
{
	*done = false;
	bool add = is(n, "add");
	if ((!add && !is(n, "multiply")) || n->n_inputs != 2 || n->n_outputs != 1)
		return true;
	struct lval *a = get(u, n->inputs[0]), *b = get(u, n->inputs[1]);
	float c;
	if (!a || !b)
		return false;
	if (scalar(a, &c) && b->kind == V_BLOB) {
		struct lval *t = a;
		a = b, b = t;
	} else if (!(scalar(b, &c) && a->kind == V_BLOB)) {
		return true;
	}
	const char *out = fresh(u, n->outputs[0], "u");
	if (!out)
		return false;
	struct al_buf lin = {0}, act = {0};
	ali_buf_float(&lin, AL_PB_ActivationLinear_alpha, add ? 1.0f : c);
	ali_buf_float(&lin, AL_PB_ActivationLinear_beta, add ? c : -0.0f);
	ali_buf_len(&act, AL_PB_ActivationParams_linear, lin.p, lin.n);
	act.failed |= lin.failed;
	ali_buf_free(&lin);
	const char *x = a->blob;
	if (!emit(u, false, out, &x, 1, out, F_ACTIVATION, &act))
		return false;
	struct lval *w = put(u, n->outputs[0], V_BLOB);
	*done = true;
	return w && (w->blob = out, true);
}

/* One layer of the condition or the body, in step u->step. */
static bool step_layer(struct lu *u, const struct al_node *n, bool cond)
{
	const struct al_node_src *s = al_src(n);
	if (n->n_sub || is(n, "loopBreak") || is(n, "loopContinue"))
		return say(u, "'%s' (%s): nested networks and loop exits are not unrolled", n->name, n->type);
	if (!s || !s->msg.p || !s->params.p || !n->n_outputs)
		return say(u, "'%s' (%s) has no layer message or no output", n->name, n->type);
	for (uint32_t j = 0; j < n->n_outputs; j++)
		if (!n->outputs[j])
			return say(u, "'%s' (%s) has an unnamed output", n->name, n->type);
	if (is(n, "loadConstantND")) {
		struct lval *w = put(u, n->outputs[0], V_CONST);
		if (!w || !read_const(n, w))
			return w ? say(u, "the constant '%s' (%s) could not be read", n->name, n->type) : false;
		return true;
	}
	if (is(n, "copy") && n->n_inputs == 1 && n->n_outputs == 1) {
		struct lval *src = get(u, n->inputs[0]);
		if (!src)
			return false;
		struct lval cp = *src;
		cp.name = n->outputs[0];
		struct lval *w = put(u, n->outputs[0], cp.kind);
		return w && (*w = cp, true);
	}
	bool done;
	if (!fold(u, n, &done))
		return false;
	if (done)
		return true;
	if (cond)
		return say(u, "the condition's '%s' (%s) is not known when the file is read: the trip count is not static",
			   n->name, n->type);
	if (is(n, "gather"))
		return gather(u, n);
	if (is(n, "scatter"))
		return scatter(u, n);
	if (!linear_fold(u, n, &done))
		return false;
	if (done)
		return true;
	/* any other layer: copied, its inputs the current blobs, its outputs new */
	const char **ins = n->n_inputs ? ali_arena_array(&u->c->s->arena, n->n_inputs, sizeof *ins) : NULL;
	const char **outs = ali_arena_array(&u->c->s->arena, n->n_outputs, sizeof *outs);
	if ((n->n_inputs && !ins) || !outs)
		return ali_mil_say(u->c, "out of memory");
	for (uint32_t i = 0; i < n->n_inputs; i++) {
		if (!n->inputs[i])
			return say(u, "'%s' (%s) has an unnamed input", n->name, n->type);
		struct lval *w = get(u, n->inputs[i]);
		if (!w || !(ins[i] = blob_of(u, w, n->inputs[i])))
			return false;
	}
	for (uint32_t j = 0; j < n->n_outputs; j++)
		if (!(outs[j] = fresh(u, n->outputs[j], "u")))
			return false;
	/* the parameters: the layer message's field that is not name / input / output / tensor */
	struct pb_iter it;
	struct pb_field f;
	uint32_t field = 0;
	al_span prm = {0};
	pb_iter_init(&it, s->msg);
	while (pb_next(&it, &f))
		if (f.wire == PB_LEN && f.num > 5 && f.data.p == s->params.p)
			field = f.num, prm = f.data;
	if (it.err || !field)
		return say(u, "'%s' (%s) could not be re-read", n->name, n->type);
	struct al_buf pb = {0};
	ali_buf_put(&pb, prm.p, prm.n);
	bool ok = ali_nn_emit(u->c, false, outs[0], ins, n->n_inputs, outs, n->n_outputs, field, &pb);
	ali_buf_free(&pb);
	if (!ok)
		return false;
	for (uint32_t j = 0; j < n->n_outputs; j++) {
		struct lval *w = put(u, n->outputs[j], V_BLOB);
		if (!w)
			return false;
		w->blob = outs[j];
	}
	return true;
}

/* The loop's place in its network. */
static uint32_t pos(const struct al_node *loop)
{
	return (uint32_t)(loop - loop->owner->nodes);
}

/* Whether a layer after the loop (nested ones too) or a model output reads blob. */
static bool read_after(const struct al_node *loop, const char *blob)
{
	const struct al_submodel *sub = al_src(loop)->sub;
	for (uint32_t i = 0; i < sub->n_outputs; i++)
		if (sub->outputs[i].name && strcmp(sub->outputs[i].name, blob) == 0)
			return true;
	const struct al_graph *g = loop->owner;
	for (uint32_t k = pos(loop) + 1; k < g->n_nodes; k++) {
		const struct al_node *m = &g->nodes[k];
		for (uint32_t i = 0; i < m->n_inputs; i++)
			if (m->inputs[i] && strcmp(m->inputs[i], blob) == 0)
				return true;
		if (m->n_sub) /* reads of a nested network: not told apart */
			return true;
	}
	return false;
}

/* Every blob the loop's networks write, once. */
static uint32_t written(const struct al_node *loop, const char **out, uint32_t cap)
{
	uint32_t n = 0;
	for (uint32_t g = 0; g < loop->n_sub; g++)
		for (uint32_t k = 0; loop->sub[g] && k < loop->sub[g]->n_nodes; k++) {
			const struct al_node *m = &loop->sub[g]->nodes[k];
			for (uint32_t j = 0; j < m->n_outputs; j++) {
				bool seen = !m->outputs[j];
				for (uint32_t i = 0; i < n && !seen; i++)
					seen = strcmp(out[i], m->outputs[j]) == 0;
				if (!seen && n < cap)
					out[n++] = m->outputs[j];
				else if (!seen)
					return UINT32_MAX;
			}
		}
	return n;
}

/* Readers of blob in the outer network other than the loop (nested graphs counted). */
static uint32_t outer_readers(const struct al_node *loop, const char *blob)
{
	const struct al_graph *g = loop->owner;
	uint32_t r = 0;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *m = &g->nodes[k];
		if (m == loop)
			continue;
		for (uint32_t i = 0; i < m->n_inputs; i++)
			r += m->inputs[i] && strcmp(m->inputs[i], blob) == 0;
		if (m->n_sub)
			r += 1000;
	}
	const struct al_submodel *sub = al_src(loop)->sub;
	for (uint32_t i = 0; i < sub->n_outputs; i++)
		r += sub->outputs[i].name && strcmp(sub->outputs[i].name, blob) == 0;
	return r;
}

/* Layers before the loop that read / write blob. */
static uint32_t readers_before(const struct al_node *loop, const char *blob)
{
	uint32_t r = 0;
	for (uint32_t k = 0; k < pos(loop); k++) {
		const struct al_node *m = &loop->owner->nodes[k];
		for (uint32_t i = 0; i < m->n_inputs; i++)
			r += m->inputs[i] && strcmp(m->inputs[i], blob) == 0;
		r += m->n_sub ? 1000 : 0;
	}
	return r;
}

static uint32_t producers_before(const struct al_node *loop, const char *blob)
{
	uint32_t r = 0;
	for (uint32_t k = 0; k < pos(loop); k++) {
		const struct al_node *m = &loop->owner->nodes[k];
		for (uint32_t i = 0; i < m->n_outputs; i++)
			r += m->outputs[i] && strcmp(m->outputs[i], blob) == 0;
	}
	return r;
}

static bool add_drop(struct ali_nn_pass *p, const struct al_node *n)
{
	const struct al_node_src *s = al_src(n);
	if (!s)
		return false;
	for (uint32_t i = 0; i < p->n_drop; i++)
		if (p->drop[i].p == s->msg.p)
			return true;
	if (p->n_drop >= ALI_NN_PASS_MAX_DROPS || !s->msg.p)
		return false;
	p->drop[p->n_drop++] = s->msg;
	return true;
}

/* Run the loop: the condition, then the body, until the condition is false. */
static bool unroll(struct lu *u, const struct al_node *n, int *steps)
{
	struct al_mil_pass *c = u->c;
	const struct al_node_src *src = c->src;
	const struct al_graph *cond = ali_node_sub_graph(n, "conditionNetwork");
	const struct al_graph *body = ali_node_sub_graph(n, "bodyNetwork");
	uint64_t max = 0;
	pb_get_varint(src->params, AL_PB_LoopLayerParams_maxLoopIterations, &max);
	al_span cvs = {0};
	pb_get_string(src->params, AL_PB_LoopLayerParams_conditionVar, &cvs);
	const char *cvar = cvs.n ? ali_arena_strndup(&c->s->arena, cvs.p, cvs.n) : NULL;
	if (!body)
		return ali_mil_say(c, "no bodyNetwork");
	if (cond && !cvar)
		return ali_mil_say(c, "a conditionNetwork without a conditionVar");
	if (!cvar && max == 0)
		return ali_mil_say(c, "no condition and maxLoopIterations 0: the loop never runs");
	for (int s = 0;; s++) {
		u->step = s;
		if (max && (uint64_t)s >= max)
			break;
		if (cvar) {
			for (uint32_t k = 0; cond && k < cond->n_nodes; k++)
				if (!step_layer(u, &cond->nodes[k], true))
					return false;
			struct lval *cv = get(u, cvar);
			if (!cv)
				return false;
			if (cv->kind != V_CONST || !cv->nk)
				return ali_mil_say(c, "the condition '%s' is not known when the file is read: the trip count "
						   "is not static", cvar);
			if (!(fabsf(cv->k[0]) > 1e-6f))
				break;
		}
		if (s >= LOOP_MAX_STEPS)
			return ali_mil_say(c, "more than %d steps: at most %d are unrolled", LOOP_MAX_STEPS, LOOP_MAX_STEPS);
		for (uint32_t k = 0; k < body->n_nodes; k++)
			if (!step_layer(u, &body->nodes[k], false))
				return false;
		*steps = s + 1;
	}
	if (*steps < 1)
		return ali_mil_say(c, "the loop runs no step");
	return true;
}

/* The blobs the loop leaves for the layers after it, under their own names;
 * the last one is the rewritten layer. */
static bool finish(struct lu *u, const struct al_node *n, const char **wr, uint32_t n_wr)
{
	struct al_mil_pass *c = u->c;
	const char *need[64];
	uint32_t n_need = 0;
	for (uint32_t i = 0; i < n_wr; i++)
		if (read_after(n, wr[i])) {
			if (n_need >= 64)
				return ali_mil_say(c, "more than 64 blobs of the loop are read after it");
			need[n_need++] = wr[i];
		}
	if (!n_need)
		return ali_mil_say(c, "nothing after the loop reads what it computes");
	for (uint32_t i = 0; i < n_need; i++) {
		struct lval *w = find(u, need[i]);
		bool last = i + 1 == n_need;
		if (!w)
			return say(u, "'%s' is read after the loop but not written by '%s'", need[i], n->name);
		/* set before the loop: by a copy that only the loop reads, deleted */
		const struct al_node *pr = ali_nn_producer(n, need[i]);
		if (pr && !(is(pr, "copy") && producers_before(n, need[i]) == 1 && readers_before(n, need[i]) == 0 &&
			    add_drop(u->p, pr)))
			return say(u, "'%s' is set before the loop by '%s', which stays: it cannot be written again",
				   need[i], pr->name);
		if (w->kind == V_CONST)
			return say(u, "'%s' is read after '%s' as a value known when the file is read: not unrolled", need[i],
				   n->name);
		/* the layer named after its blob, unless a layer of the network has that name */
		const char *lname = need[i];
		for (uint32_t k = 0; k < n->owner->n_nodes && lname == need[i]; k++)
			if (n->owner->nodes[k].name && strcmp(n->owner->nodes[k].name, need[i]) == 0 &&
			    !(lname = ali_nn_fresh(c, need[i], "out")))
				return ali_mil_say(c, "no free layer name after '%s'", need[i]);
		if (w->kind == V_BLOB) {
			struct al_buf act = {0};
			ali_nn_linear_params(&act, 1.0f);
			if (!emit(u, last, lname, &w->blob, 1, need[i], F_ACTIVATION, &act))
				return false;
			continue;
		}
		const char **parts = ali_arena_array(&c->s->arena, w->n_rows, sizeof *parts);
		if (!parts)
			return ali_mil_say(c, "out of memory");
		for (uint32_t r = 0; r < w->n_rows; r++) {
			parts[r] = w->rows[r].blob;
			if (!parts[r] && !((parts[r] = fresh(u, need[i], "row")) && emit_row(u, w->blob, w->rank, 0, r, parts[r])))
				return false;
		}
		struct al_buf prm = {0};
		if (w->n_rows == 1) { /* one row: the row itself (a concatND needs two inputs) */
			ali_nn_linear_params(&prm, 1.0f);
			if (!emit(u, last, lname, parts, 1, need[i], F_ACTIVATION, &prm))
				return false;
			continue;
		}
		ali_buf_uint(&prm, 1, (uint64_t)(int64_t)-w->rank); /* axis 0, as -rank */
		if (!emit(u, last, lname, parts, w->n_rows, need[i], F_CONCAT_ND, &prm))
			return false;
		c->stays_off = lname; /* ANE006 until concatnd-to-concat takes it (rank 3) */
	}
	return true;
}

bool ali_pass_nn_loop_unroll(struct ali_nn_pass *p)
{
	struct al_mil_pass *c = &p->c;
	const struct al_node *n = c->n;
	if (!c->src || !c->src->sub || c->src->sub->world != AL_WORLD_NN)
		return false;
	if (!n->owner || n->owner->depth != 0)
		return ali_mil_say(c, "layer in a nested network (branch / loop body)");
	if (!c->src->msg.p || !c->src->params.p)
		return ali_mil_say(c, "no layer message");
	if (n->n_inputs)
		return ali_mil_say(c, "its iteration count is an input, known only at run time");
	const char *wr[256];
	uint32_t n_wr = written(n, wr, 256);
	if (n_wr == UINT32_MAX)
		return ali_mil_say(c, "its networks write more than 256 blobs");
	struct lu *u = ali_calloc(1, sizeof *u);
	if (!u)
		return ali_mil_say(c, "out of memory");
	u->p = p, u->c = c;
	int steps = 0;
	bool ok = unroll(u, n, &steps) && finish(u, n, wr, n_wr);
	/* the carried blobs' copies before the loop, and the constants they copy,
	 * when nothing but the loop reads them */
	for (uint32_t i = 0; ok && i < n_wr; i++) {
		const struct al_node *pr = ali_nn_producer(n, wr[i]);
		if (!pr || !is(pr, "copy") || pr->n_inputs != 1 || outer_readers(n, wr[i]) != 0 || read_after(n, wr[i]))
			continue;
		if (!add_drop(p, pr))
			break;
		const struct al_node *k = ali_nn_producer(pr, pr->inputs[0]);
		/* not a rank-5 one: loadconstnd-to-loadconst may rewrite that in the same round
		 * (two edits of one layer would overlap) */
		uint64_t sh[AL_SHAPE_MAX_RANK + 1];
		const struct al_node_src *ks = k ? al_src(k) : NULL;
		if (k && is(k, "loadConstantND") && ks && ks->params.p &&
		    pb_get_varints(ks->params, AL_PB_LoadConstantNDLayerParams_shape, sh, AL_SHAPE_MAX_RANK + 1) < 5 &&
		    !used(u, pr->inputs[0]) &&
		    outer_readers(n, pr->inputs[0]) == 1)
			add_drop(p, k);
	}
	ali_free(u->zeros_of);
	ali_free(u);
	if (!ok)
		return false;
	if (c->layer.failed || c->pre.failed)
		return ali_mil_say(c, "out of memory");
	snprintf(c->after, sizeof c->after, "%d steps of its body's layers (gather -> sliceStatic, scatter rows "
		 "tracked, the index folded), %u layers, %u deleted", steps, c->n_names, p->n_drop);
	return true;
}
