/* SPDX-License-Identifier: MIT */
/* mil_layout.c: mil-block-bc1s-conv and mil-matmul-const-bc1s-conv (one pass,
 * started from a linear or a matmul by a constant): a run of a transformer
 * block's ops -> Apple's (B, C, 1, S) layout with 1x1 convs (docs/surgery.md
 * rows; tests/fix_mil.sh, tests/fix_matmul_conv.sh,
 * tests/pass_mil_layout_seqfirst.sh, tests/pass_mil_layout_palettized.sh). */
#include "passes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ a transformer block -> (B, C, 1, S)
 * Apple's recipe for transformers on the ANE (ml-ane-transformers 2022, catalog
 * R5 / O16 / O21, rule ANE062's fix): keep activations as [B, C, 1, S] (channels
 * on axis 1, the sequence last), linear -> 1x1 conv, layer_norm over axis 1. Done
 * per op, each linear would need a transpose in and out; here the layout is
 * carried through a run of ops that all work in it: from a linear (or a matmul by
 * a constant weight), the next non-const ops of the block while each is
 *  - a linear with constant weights, or a matmul of a [B, S, K] value by a
 *    constant [K, N] (or, transpose_y, [N, K]) weight: a 1x1 conv;
 *  - an elementwise activation (relu, gelu, silu, sigmoid, tanh), an add / sub /
 *    mul of two [B, S, C] values or of a value and a one-element constant;
 *  - a layer_norm over the last axis: over axis 1;
 *  - the attention between them (catalog R6 / O19): the reshape of [B, S, C] to
 *    the heads [B, S, H, D] is a reshape of [B, C, 1, S] to [B, H, D, S]
 *    (c = h D + d: no data moves); a transpose of the heads is dropped (every
 *    orientation of q / k / v is kept as [B, H, D, S]); the scores
 *    q k^T [B, H, Sq, Sk] become matmul(k^T, q) = [B, H, Sk, Sq], the keys on
 *    axis 2 as in the split-einsum form, and their softmax over the keys is on
 *    axis 2; the context w v [B, H, Sq, D] becomes matmul(v, w) = [B, H, D, Sq];
 *    the transpose back is dropped and the reshape to [B, S, C] is a reshape of
 *    [B, H, D, S] to [B, C, 1, S];
 *  - sequence-first attention (nn.MultiheadAttention without batch_first, as
 *    coremltools converts it): the transpose [B, S, C] -> [S, B, C] right before
 *    the in-projection (the run's entry op) and the one back are dropped, as is
 *    a reshape [S, B, C] <-> [S*B, C] (the same bytes); the fused in-projection's
 *    split on the channel axis is a split on axis 1; the heads merged with the
 *    batch, [S, B*H, D] (b major), are the [B, H, D, S] values above;
 *  - a pre-LN block's layer_norm right before the first linear (the entry op).
 * A palettized weight (constexpr_lut_to_dense) is read as it is: the lut op is
 * written again expanding to [N, K, 1, 1] (the same indices and lut).
 * Each value the run reads from before it is converted once at its start
 * (reshape to [B, S, 1, C], transpose to [B, C, 1, S]); each value read after
 * it (or a block output) is converted back once at its end, under its own name;
 * a run ends before a value in the heads / scores form would have to leave it.
 * The run's ops move to its last op's place (nothing else sits between them:
 * the run is contiguous but for consts). A conv sums the same K products as the
 * linear in another order, the score and context matmuls the same products with
 * their operands swapped: reassociate. The conv weights are the linear's blob
 * (a matmul's [N, K] one too), declared [N, K, 1, 1], no bytes copied; a
 * matmul's [K, N] weight is copied once, transposed (bytes moved, never
 * decoded). An old weight const is deleted when nothing else reads it. A run
 * with one linear is refused: its two conversions would cost more than the
 * layout gains.
 * Sequences: a run holds at most two, its first op's and (cross-attention) the
 * keys' / values' read from another tensor; each value knows its own, so the
 * scores [B, H, Sq, Sk] may be rectangular. A sequence may be symbolic (a
 * flexible input: enumerated shapes or a range; shape inference gives it its
 * default size and a flex bit): every reshape the run writes then has -1 on
 * that axis and every type it declares leaves it unknown, so no op depends on a
 * concrete length (the form coremltools writes for a flexible reshape). A
 * symbolic batch or channel axis is refused. */

#define MAX_RUN 64
#define MAX_DELS (MAX_RUN * 4) /* consts deleted with a run */

enum { LAY_BSC, LAY_HEADS, LAY_SCORES };          /* the form of a run value */
enum { AX_B, AX_S, AX_H, AX_D };                   /* the axes of the heads form */
enum { K_COPY, K_CONV, K_MMW, K_ALIAS, K_SPLITR, K_JOINR, K_SCORES, K_CTX, K_SOFTMAX, K_SPLIT };
/* A LAY_BSC (token) value's original form: [B, S, C]; sequence-first (as
 * PyTorch's nn.MultiheadAttention without batch_first converts) [S, B, C] or
 * the out-projection's [S * B, C]. All are [B, C, 1, S] in the layout. */
enum { TF_BSC, TF_SBC, TF_TC };

struct run {
	/* a slot per value: op[i]'s output out[i] (a split fills one slot per output) */
	const struct al_node *op[MAX_RUN];
	const char *bc[MAX_RUN]; /* the new name of the slot's value */
	uint8_t out[MAX_RUN], tf[MAX_RUN], rk[MAX_RUN]; /* rk: a heads / scores value's rank (3: the sequence-first [S, B*H, D] forms, the batch merged with the heads, b major) */
	uint8_t lay[MAX_RUN], kind[MAX_RUN];
	/* heads: original axis i holds AX_ ord[i] (rank 3: no AX_B); the new value is [B, H, D, S] */
	uint8_t ord[MAX_RUN][4];
	int64_t X[MAX_RUN], H[MAX_RUN], D[MAX_RUN];
	int src[MAX_RUN][2];     /* K_ALIAS: the op aliased; K_SCORES: q, k; K_CTX: w, v */
	bool wt[MAX_RUN];        /* K_MMW: the weight is [K, N] (copied transposed) */
	uint8_t sq[MAX_RUN], sk[MAX_RUN]; /* the sequence (an index of S) of value i; scores: of the queries, keys */
	uint32_t n, n_linear, n_attn, n_dropped, n_conv; /* n_conv: values converted in and out */
	uint32_t n_ops; /* the ops of its n slots */
	uint32_t n_gain; /* of those, the ops whose conversion the layout pays for (all but a layer_norm entry op) */
	/* the sequences of the run: its first op's, and the keys' / values' of a
	 * cross-attention (another tensor); a symbolic one (a flexible input) has
	 * flex set and its default size */
	int64_t B, S[2];
	bool flex[2];
	uint8_t ns;
	int dt;
};

/* An activation the layout carries (elementwise, one input). */
static bool is_unary(const struct al_node *n)
{
	return n->kind == AL_MILK_relu || n->kind == AL_MILK_gelu || n->kind == AL_MILK_silu ||
	       n->kind == AL_MILK_sigmoid || n->kind == AL_MILK_tanh;
}

static const struct al_node *const_of(const struct al_node *n, const char *p)
{
	al_span b;
	if (ali_mil_param_binding(n, p, 0, &b) != 1)
		return NULL;
	char nm[256];
	snprintf(nm, sizeof nm, "%.*s", (int)(b.n < 255 ? b.n : 255), (const char *)b.p);
	const struct al_node *pr = ali_mil_producer(n, nm);
	return pr && pr->kind == AL_MILK_const ? pr : NULL;
}

/* A const, or a constexpr_* op (a compressed constant, e.g. a palettized
 * weight): the walks of a run step over them. */
static bool const_like(const struct al_node *n)
{
	return n->type && (n->kind == AL_MILK_const || strncmp(n->type, "constexpr_", 10) == 0);
}

static bool in_run(const struct run *r, const struct al_node *n)
{
	for (uint32_t i = 0; i < r->n; i++)
		if (r->op[i] == n)
			return true;
	return false;
}

/* The value of slot i: its name, its shape. */
static const char *slot_name(const struct run *r, uint32_t i)
{
	return r->op[i]->outputs[r->out[i]];
}

static const struct al_shape *slot_shape(const struct run *r, uint32_t i)
{
	return &r->op[i]->out_shapes[r->out[i]];
}

/* The slot of r holding value v, or -1. */
static int run_producer(const struct run *r, const char *v)
{
	for (uint32_t i = 0; i < r->n; i++)
		if (strcmp(slot_name(r, i), v) == 0)
			return (int)i;
	return -1;
}

/* A token form's rank, and whether shape o is that form (any channel count,
 * its last dim) of sequence sid. */
static int tok_rank(int tf)
{
	return tf == TF_TC ? 2 : 3;
}

static bool tok_is(const struct al_shape *o, const struct run *r, int tf, int sid)
{
	if (sid < 0 || sid >= r->ns || o->rank != tok_rank(tf) || o->dims[o->rank - 1] <= 0)
		return false;
	if (tf == TF_BSC)
		return o->dims[0] == r->B && o->dims[1] == r->S[sid];
	if (tf == TF_TC)
		return o->dims[0] == r->S[sid] * r->B;
	return o->dims[0] == r->S[sid] && o->dims[1] == r->B;
}

/* The symbolic axis of a token form: its sequence axis. */
static unsigned tok_flex(int tf)
{
	return tf == TF_BSC ? 2u : 1u;
}

/* Whether value v (made in r) is read outside r or is an output of the block. */
static bool read_outside(const struct run *r, const struct al_graph *g, const char *v)
{
	struct al_mil_block_io io;
	if (ali_mil_block_io(g, &io))
		for (uint32_t i = 0; i < io.n_outputs; i++)
			if (io.outputs[i] && strcmp(io.outputs[i], v) == 0)
				return true;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *n = &g->nodes[k];
		bool reads = n->n_sub && ali_mil_readers(n->sub[0], v, 1) > 0;
		for (uint32_t i = 0; i < n->n_inputs && !reads; i++)
			reads = n->inputs[i] && strcmp(n->inputs[i], v) == 0;
		if (reads && !in_run(r, n))
			return true;
	}
	return false;
}

/* Whether shape s has every dim known and flex bits exactly `fmask`: those of
 * its symbolic sequence axes. A flexible batch, channel, head or key-dim axis
 * never enters a run, and a static S never meets a symbolic one. */
static bool run_shape(const struct al_shape *s, unsigned fmask)
{
	if (s->rank < 0 || s->rank > AL_SHAPE_MAX_RANK)
		return false;
	for (int i = 0; i < s->rank; i++)
		if (s->dims[i] < 0)
			return false;
	return s->flex == fmask;
}

/* The index of the run's sequence of this size and flexibility; a second one
 * is added (cross-attention: the keys and values from another tensor); -1
 * when the run has two others. */
static int seq_id(struct run *r, int64_t size, bool flex, bool add)
{
	for (int i = 0; i < r->ns; i++)
		if (r->S[i] == size && r->flex[i] == flex)
			return i;
	if (!add || r->ns >= 2)
		return -1;
	r->S[r->ns] = size, r->flex[r->ns] = flex;
	return r->ns++;
}

/* A sequence's size in the new types and reshapes: -1 when symbolic. */
static int64_t seq_dim(const struct run *r, int id)
{
	return r->flex[id] ? -1 : r->S[id];
}

/* A run's first output o: 0 a static [B, S, C], 1 one whose S alone is
 * symbolic (enumerated shapes or a range on the sequence axis: its default
 * size), -1 not a [B, S, C] of known dims, -2 one with a symbolic B or C. */
static int seq_flex(const struct al_shape *o)
{
	if (!o || o->rank != 3 || o->dims[0] < 0 || o->dims[1] < 0 || o->dims[2] < 0)
		return -1;
	if (o->flex & ~2u)
		return -2;
	return o->flex ? 1 : 0;
}

/* Activation parameter p of n: a named non-const value. *k is its run
 * producer, or -1 for a value from before the run, then a [B, S, X] one of
 * known dims (*x = X), S one of the run's sequences or a second one, symbolic
 * on that axis alone or static. *sid: its sequence (the queries' of scores);
 * *tf: a token value's form (a value from before the run: TF_BSC). */
static bool act_form(struct run *r, const struct al_node *n, const char *p, int *k, int64_t *x, int *sid, int *tf)
{
	al_span b;
	if (ali_mil_param_binding(n, p, 0, &b) != 1 || const_of(n, p))
		return false;
	char nm[256];
	snprintf(nm, sizeof nm, "%.*s", (int)(b.n < 255 ? b.n : 255), (const char *)b.p);
	*k = run_producer(r, nm);
	*tf = TF_BSC;
	if (*k >= 0) {
		*x = r->lay[*k] == LAY_BSC ? r->X[*k] : -1;
		*sid = r->sq[*k];
		*tf = r->tf[*k];
		return true;
	}
	struct al_shape s;
	if (!ali_mil_param_shape(n, p, &s) || s.rank != 3 || !run_shape(&s, s.flex & 2u) || s.dims[0] != r->B ||
	    (s.dtype && s.dtype != r->dt) || (*sid = seq_id(r, s.dims[1], s.flex != 0, true)) < 0)
		return false;
	*x = s.dims[2];
	return true;
}

static bool act_of(struct run *r, const struct al_node *n, const char *p, int *k, int64_t *x, int *sid)
{
	int tf;
	return act_form(r, n, p, k, x, sid, &tf);
}

/* Whether parameter p of n is a one-element constant (broadcast alike in any layout). */
static bool one_const(const struct al_node *n, const char *p)
{
	struct al_shape s;
	if (!const_of(n, p) || !ali_mil_param_shape(n, p, &s) || !ali_mil_static_shape(&s))
		return false;
	for (int i = 0; i < s.rank; i++)
		if (s.dims[i] != 1)
			return false;
	return s.rank <= 3;
}

/* A bool parameter (false when absent); false when not a constant. */
static bool flag_of(const struct al_node *n, const char *p, bool *v)
{
	int64_t x[2];
	long k = ali_mil_param_ints(n, p, x, 2);
	*v = k == 1 && x[0] != 0;
	return k == 0 || k == 1;
}

static bool dims_are(const struct al_shape *o, int rank, const int64_t *d)
{
	if (o->rank != rank)
		return false;
	for (int i = 0; i < rank; i++)
		if (o->dims[i] != d[i])
			return false;
	return true;
}

/* The original dims of a heads value of order ord (rank rk: 3 has no AX_B). */
static void heads_dims(const struct run *r, const uint8_t *ord, int rk, int64_t S, int64_t H, int64_t D, int64_t *d)
{
	const int64_t size[4] = {r->B, S, rk == 3 ? r->B * H : H, D}; /* rank 3: the batch merged with the heads */
	for (int i = 0; i < rk; i++)
		d[i] = size[ord[i]];
}

/* Whether order o of rank rk is (a, b, c3, d), a = AX_B dropped at rank 3. */
static bool ord_is(const uint8_t *o, int rk, int a, int b, int c3, int d)
{
	if (rk == 3)
		return a == AX_B && o[0] == b && o[1] == c3 && o[2] == d;
	return o[0] == a && o[1] == b && o[2] == c3 && o[3] == d;
}

/* The weight of a matmul by a constant: [K, N] or [N, K] (transpose_y) in weight.bin. */
static bool mm_weight(struct al_mil_pass *c, const struct al_node *n, al_span *wd, int *wdt, struct al_mil_value *wv)
{
	const struct al_node *saved = c->n;
	c->n = n;
	bool ok = ali_mil_param_blob(c, "y", wd, wdt, wv) && wv->rank == 2;
	c->n = saved;
	return ok;
}

/* An int permutation of rank rk (negative axes counted from the end) into p. */
static bool perm_of(const struct al_node *n, int rk, int *p)
{
	double pm[5];
	if (ali_mil_param_floats(n, "perm", pm, 5) != rk)
		return false;
	unsigned seen = 0;
	for (int a = 0; a < rk; a++) {
		if (!(pm[a] >= -rk && pm[a] <= rk - 1) || pm[a] != floor(pm[a]))
			return false;
		p[a] = (int)pm[a] < 0 ? (int)pm[a] + rk : (int)pm[a];
		if (seen & (1u << p[a]))
			return false;
		seen |= 1u << p[a];
	}
	return true;
}

/* In layout_kind's helpers (o: the op's first output shape): a token value of
 * form f and sequence id (its channels the last axis), the output's channels. */
#define TOK_OF(f, id) tok_is(o, r, (f), (id))
#define XO (o->rank > 0 ? o->dims[o->rank - 1] : -1)

/* layout_kind of a linear of a token value by a constant [N, K] weight (a palettized one too), a
 * constant bias: a 1x1 conv. */
static bool kind_linear(struct al_mil_pass *c, struct run *r, const struct al_node *n, uint32_t i)
{
	int kx = -1, sx = -1, fx = TF_BSC;
	int64_t xx = -1;
	const struct al_shape *o = &n->out_shapes[0];
	const struct al_node *saved = c->n;
	al_span wd;
	int wdt;
	struct al_mil_value wv, bv;
	c->n = n;
	struct ali_lut_weight lw;
	bool ok = act_form(r, n, "x", &kx, &xx, &sx, &fx) && TOK_OF(fx, sx) && xx > 0;
	if (ok && ali_mil_lut_weight(n, "weight", r->dt, &lw)) /* palettized: read as it is */
		ok = lw.N == XO && lw.K == xx;
	else
		ok = ok && ali_mil_param_blob(c, "weight", &wd, &wdt, &wv) && wv.rank == 2 && wv.dims[0] == XO &&
		     wv.dims[1] == xx;
	if (ok && ali_mil_param_present(n, "bias"))
		ok = ali_mil_param_blob(c, "bias", &wd, &wdt, &bv) && bv.rank == 1;
	c->n = saved;
	r->kind[i] = K_CONV, r->sq[i] = (uint8_t)(sx > 0 ? sx : 0), r->tf[i] = (uint8_t)fx;
	return ok;
}

/* layout_kind of a matmul of a token value by a constant [K, N] (transpose_y: [N, K]) weight: a
 * 1x1 conv. */
static bool kind_matmul_weight(struct al_mil_pass *c, struct run *r, const struct al_node *n, uint32_t i)
{
	int kx = -1, sx = -1, fx = TF_BSC;
	int64_t xx = -1;
	const struct al_shape *o = &n->out_shapes[0];
	al_span wd;
	int wdt;
	struct al_mil_value wv;
	bool tx, ty;
	if (!act_form(r, n, "x", &kx, &xx, &sx, &fx) || !TOK_OF(fx, sx) || xx <= 0 ||
	    !flag_of(n, "transpose_x", &tx) || tx || !flag_of(n, "transpose_y", &ty) ||
	    !mm_weight(c, n, &wd, &wdt, &wv))
		return false;
	int64_t K = ty ? wv.dims[1] : wv.dims[0], N = ty ? wv.dims[0] : wv.dims[1];
	r->kind[i] = K_MMW, r->wt[i] = !ty, r->sq[i] = (uint8_t)sx, r->tf[i] = (uint8_t)fx;
	return K == xx && N == XO;
}

/* layout_kind of a matmul of two run values: the attention's scores q k^T or its context w v. */
static bool kind_attention(struct run *r, const struct al_node *n, uint32_t i)
{
	int kx = -1, ky = -1, sx = -1, sy = -1;
	int64_t xx = -1, xy = -1;
	const struct al_shape *o = &n->out_shapes[0];
	bool tx, ty;
	if (!act_of(r, n, "x", &kx, &xx, &sx) || !act_of(r, n, "y", &ky, &xy, &sy) || kx < 0 || ky < 0 ||
	    !flag_of(n, "transpose_x", &tx) || !flag_of(n, "transpose_y", &ty) || r->rk[kx] != r->rk[ky])
		return false;
	int rk = r->rk[kx];
	uint8_t ex[4], ey[4];
	memcpy(ex, r->ord[kx], 4), memcpy(ey, r->ord[ky], 4);
	if (tx)
		ex[rk - 2] = r->ord[kx][rk - 1], ex[rk - 1] = r->ord[kx][rk - 2];
	if (ty)
		ey[rk - 2] = r->ord[ky][rk - 1], ey[rk - 1] = r->ord[ky][rk - 2];
	r->rk[i] = (uint8_t)rk;
	/* scores q k^T [B, H, Sq, Sk]: q and k may come from different tensors */
	if (r->lay[kx] == LAY_HEADS && r->lay[ky] == LAY_HEADS && ord_is(ex, rk, AX_B, AX_H, AX_S, AX_D) &&
	    ord_is(ey, rk, AX_B, AX_H, AX_D, AX_S) && r->H[kx] == r->H[ky] && r->D[kx] == r->D[ky]) {
		int64_t d[4] = {r->B, r->H[kx] * (rk == 3 ? r->B : 1), r->S[r->sq[kx]], r->S[r->sq[ky]]};
		r->lay[i] = LAY_SCORES, r->kind[i] = K_SCORES, r->H[i] = r->H[kx];
		r->src[i][0] = kx, r->src[i][1] = ky, r->sq[i] = r->sq[kx], r->sk[i] = r->sq[ky];
		return dims_are(o, rk, d + 4 - rk);
	}
	/* the context w v [B, H, Sq, D]: v over the keys' sequence */
	if (r->lay[kx] == LAY_SCORES && !tx && r->lay[ky] == LAY_HEADS &&
	    ord_is(ey, rk, AX_B, AX_H, AX_S, AX_D) && r->H[kx] == r->H[ky] && r->sk[kx] == r->sq[ky]) {
		int64_t d[4] = {r->B, r->H[ky] * (rk == 3 ? r->B : 1), r->S[r->sq[kx]], r->D[ky]};
		r->lay[i] = LAY_HEADS, r->kind[i] = K_CTX, r->H[i] = r->H[ky], r->D[i] = r->D[ky];
		if (rk == 4)
			memcpy(r->ord[i], (uint8_t[4]){AX_B, AX_H, AX_S, AX_D}, 4);
		else
			memcpy(r->ord[i], (uint8_t[4]){AX_H, AX_S, AX_D, 0}, 4);
		r->src[i][0] = kx, r->src[i][1] = ky, r->sq[i] = r->sq[kx];
		return dims_are(o, rk, d + 4 - rk);
	}
	return false;
}

/* layout_kind of a split of a token value's channels (e.g. a fused q / k / v projection). */
static bool kind_split(struct run *r, const struct al_node *n, uint32_t i)
{
	int kx = -1, sx = -1, fx = TF_BSC;
	int64_t xx = -1;
	double ax[2];
	if (!act_form(r, n, "x", &kx, &xx, &sx, &fx) || xx <= 0 || ali_mil_param_floats(n, "axis", ax, 2) != 1 ||
	    (ax[0] != -1 && ax[0] != tok_rank(fx) - 1))
		return false;
	int64_t sum = 0;
	for (uint32_t j = 0; j < n->n_outputs; j++) {
		const struct al_shape *oj = &n->out_shapes[j];
		if (!tok_is(oj, r, fx, sx))
			return false;
		uint32_t s = i + j;
		r->lay[s] = LAY_BSC, r->kind[s] = K_SPLIT, r->X[s] = oj->dims[oj->rank - 1], r->wt[s] = false;
		r->H[s] = r->D[s] = 0, r->src[s][0] = r->src[s][1] = -1, r->sq[s] = (uint8_t)sx, r->sk[s] = 0;
		r->tf[s] = (uint8_t)fx, r->rk[s] = 4, r->out[s] = (uint8_t)j;
		sum += r->X[s];
	}
	return sum == xx;
}

/* layout_kind of a reshape: a token value to the heads, the heads back, or one token form to
 * another. */
static bool kind_reshape(struct run *r, const struct al_node *n, uint32_t i)
{
	int kx = -1, sx = -1, fx = TF_BSC;
	int64_t xx = -1;
	const struct al_shape *o = &n->out_shapes[0];
	if (!act_form(r, n, "x", &kx, &xx, &sx, &fx) || !const_of(n, "shape"))
		return false;
	r->sq[i] = (uint8_t)sx, r->tf[i] = (uint8_t)fx;
	/* the heads: [B, S, C] -> [B, S, H, D]; sequence-first [S, B, C] -> [S, B*H, D] */
	int hr = fx == TF_BSC ? 4 : 3;
	int64_t m = hr == 3 ? r->B : 1; /* the batch merged with the heads */
	if (xx > 0 && (fx == TF_BSC || fx == TF_SBC) && o->rank == hr && m > 0 &&
	    (hr == 3 || o->dims[0] == r->B) && o->dims[hr - 3] == r->S[sx] && o->dims[hr - 2] > 0 &&
	    o->dims[hr - 2] % m == 0 && o->dims[hr - 1] > 0 && o->dims[hr - 2] / m <= xx &&
	    o->dims[hr - 1] <= xx && o->dims[hr - 2] / m * o->dims[hr - 1] == xx) {
		r->lay[i] = LAY_HEADS, r->kind[i] = K_SPLITR, r->H[i] = o->dims[hr - 2] / m, r->D[i] = o->dims[hr - 1];
		r->rk[i] = (uint8_t)hr;
		if (hr == 4)
			memcpy(r->ord[i], (uint8_t[4]){AX_B, AX_S, AX_H, AX_D}, 4);
		else
			memcpy(r->ord[i], (uint8_t[4]){AX_S, AX_H, AX_D, 0}, 4);
		return true;
	}
	/* the heads back: [B, S, H, D] -> [B, S, C]; [S, B*H, D] -> [S*B, C] or [S, B, C] */
	if (kx >= 0 && r->lay[kx] == LAY_HEADS && ord_is(r->ord[kx], r->rk[kx], AX_B, AX_S, AX_H, AX_D) &&
	    XO == r->H[kx] * r->D[kx]) {
		r->kind[i] = K_JOINR;
		for (int f = r->rk[kx] == 4 ? TF_BSC : TF_SBC; f <= (r->rk[kx] == 4 ? TF_BSC : TF_TC); f++)
			if (TOK_OF(f, sx)) {
				r->tf[i] = (uint8_t)f;
				return true;
			}
		return false;
	}
	/* one token form to another holding the same bytes: [S, B, C] <-> [S*B, C], and at
	 * B = 1 [1, S, C] too */
	if (kx >= 0 && r->lay[kx] == LAY_BSC && XO == xx) {
		r->kind[i] = K_ALIAS, r->src[i][0] = kx;
		for (int f = TF_BSC; f <= TF_TC; f++)
			if (TOK_OF(f, sx) && (r->B == 1 || (f != TF_BSC && r->tf[kx] != TF_BSC))) {
				r->tf[i] = (uint8_t)f;
				return true;
			}
	}
	return false;
}

/* layout_kind of a transpose: [B, S, C] <-> [S, B, C], or of the heads (dropped). */
static bool kind_transpose(struct run *r, const struct al_node *n, uint32_t i)
{
	int kx = -1, sx = -1, fx = TF_BSC;
	int64_t xx = -1;
	const struct al_shape *o = &n->out_shapes[0];
	int pm[4];
	if (!act_form(r, n, "x", &kx, &xx, &sx, &fx))
		return false;
	r->sq[i] = (uint8_t)sx;
	/* [B, S, C] <-> [S, B, C] (sequence-first attention's way in and out): the same value */
	if ((kx < 0 || r->lay[kx] == LAY_BSC) && fx != TF_TC && perm_of(n, 3, pm) && pm[0] == 1 &&
	    pm[1] == 0 && pm[2] == 2) {
		r->kind[i] = K_ALIAS, r->src[i][0] = kx, r->tf[i] = fx == TF_BSC ? TF_SBC : TF_BSC;
		return TOK_OF(r->tf[i], sx) && XO == xx;
	}
	int rk = kx >= 0 ? r->rk[kx] : 0;
	if (kx < 0 || r->lay[kx] != LAY_HEADS || !perm_of(n, rk, pm))
		return false;
	for (int a = 0; a < rk; a++)
		r->ord[i][a] = r->ord[kx][pm[a]];
	int64_t d[4];
	heads_dims(r, r->ord[i], rk, r->S[sx], r->H[kx], r->D[kx], d);
	r->lay[i] = LAY_HEADS, r->kind[i] = K_ALIAS, r->H[i] = r->H[kx], r->D[i] = r->D[kx], r->src[i][0] = kx;
	r->rk[i] = (uint8_t)rk;
	return (rk == 3 || r->ord[i][0] == AX_B) && dims_are(o, rk, d);
}

/* layout_kind of a softmax of the scores over the keys. */
static bool kind_softmax(struct run *r, const struct al_node *n, uint32_t i)
{
	int kx = -1, sx = -1;
	int64_t xx = -1;
	double ax[2];
	if (!act_of(r, n, "x", &kx, &xx, &sx) || kx < 0 || r->lay[kx] != LAY_SCORES ||
	    ali_mil_param_floats(n, "axis", ax, 2) != 1 || (ax[0] != -1 && ax[0] != r->rk[kx] - 1))
		return false;
	r->lay[i] = LAY_SCORES, r->kind[i] = K_SOFTMAX, r->H[i] = r->H[kx], r->rk[i] = r->rk[kx];
	r->sq[i] = r->sq[kx], r->sk[i] = r->sk[kx];
	return true;
}

/* layout_kind of an activation, or an add / sub / mul of two run values or of one and a
 * one-element constant. */
static bool kind_elementwise(struct run *r, const struct al_node *n, uint32_t i)
{
	int kx = -1, ky = -1, sx = -1, sy = -1, fx = TF_BSC, fy = TF_BSC;
	int64_t xx = -1, xy = -1;
	const struct al_shape *o = &n->out_shapes[0];
	bool bin = n->kind == AL_MILK_add || n->kind == AL_MILK_sub || n->kind == AL_MILK_mul;
	const char *src = "x";
	if (bin && one_const(n, "x"))
		src = "y";
	else if (bin && !one_const(n, "y")) { /* two token values of one sequence and form */
		bool ok = act_form(r, n, "x", &kx, &xx, &sx, &fx) && act_form(r, n, "y", &ky, &xy, &sy, &fy) &&
			  sx == sy && fx == fy && TOK_OF(fx, sx) && xx == XO && xy == XO;
		r->sq[i] = (uint8_t)(sx > 0 ? sx : 0), r->tf[i] = (uint8_t)fx;
		return ok;
	}
	if (!act_form(r, n, src, &kx, &xx, &sx, &fx))
		return false;
	r->sq[i] = (uint8_t)sx, r->tf[i] = (uint8_t)fx;
	if (kx < 0 || r->lay[kx] == LAY_BSC)
		return TOK_OF(fx, sx) && xx == XO;
	r->lay[i] = r->lay[kx], r->H[i] = r->H[kx], r->D[i] = r->D[kx], r->sk[i] = r->sk[kx], r->rk[i] = r->rk[kx];
	memcpy(r->ord[i], r->ord[kx], 4);
	const struct al_shape *ks = slot_shape(r, (uint32_t)kx);
	return dims_are(o, ks->rank, ks->dims);
}

/* layout_kind of a layer_norm over the channels (the last axis). */
static bool kind_layer_norm(struct run *r, const struct al_node *n, uint32_t i)
{
	int kx = -1, sx = -1, fx = TF_BSC;
	int64_t xx = -1;
	const struct al_shape *o = &n->out_shapes[0];
	double ax[4];
	long k = ali_mil_param_floats(n, "axes", ax, 4);
	bool ok = k == 1 && act_form(r, n, "x", &kx, &xx, &sx, &fx) && (ax[0] == -1 || ax[0] == tok_rank(fx) - 1) &&
		  TOK_OF(fx, sx) && xx == XO;
	r->sq[i] = (uint8_t)(sx > 0 ? sx : 0), r->tf[i] = (uint8_t)fx;
	return ok;
}

#undef TOK_OF
#undef XO

/* Whether n works in the layout, given the run so far: fills slot r->n (a
 * split: one slot per output; layout_op checks the flex bits). */
static bool layout_kind(struct al_mil_pass *c, struct run *r, const struct al_node *n)
{
	if (!n->type || n->n_sub || n->n_outputs < 1 || !n->out_shapes || !n->out_types ||
	    r->n + n->n_outputs > MAX_RUN)
		return false;
	for (uint32_t j = 0; j < n->n_outputs; j++)
		if (n->out_types[j].kind != 0 || n->out_types[j].dtype != r->dt || n->out_shapes[j].rank < 0 ||
		    n->out_shapes[j].rank > AL_SHAPE_MAX_RANK)
			return false;
	const struct al_shape *o = &n->out_shapes[0];
	uint32_t i = r->n;
	r->lay[i] = LAY_BSC, r->kind[i] = K_COPY, r->X[i] = o->rank > 0 ? o->dims[o->rank - 1] : -1, r->wt[i] = false;
	r->H[i] = r->D[i] = 0, r->src[i][0] = r->src[i][1] = -1, r->sq[i] = r->sk[i] = 0;
	r->tf[i] = TF_BSC, r->rk[i] = 4, r->out[i] = 0;
	if (n->n_outputs != 1 && n->kind != AL_MILK_split)
		return false;
	switch (n->kind) {
	case AL_MILK_linear: return kind_linear(c, r, n, i);
	case AL_MILK_matmul: return const_of(n, "y") ? kind_matmul_weight(c, r, n, i) : kind_attention(r, n, i);
	case AL_MILK_split: return kind_split(r, n, i);
	case AL_MILK_reshape: return kind_reshape(r, n, i);
	case AL_MILK_transpose: return kind_transpose(r, n, i);
	case AL_MILK_softmax: return kind_softmax(r, n, i);
	case AL_MILK_add:
	case AL_MILK_sub:
	case AL_MILK_mul:
	case AL_MILK_relu:
	case AL_MILK_gelu:
	case AL_MILK_silu:
	case AL_MILK_sigmoid:
	case AL_MILK_tanh: return kind_elementwise(r, n, i);
	case AL_MILK_layer_norm: return kind_layer_norm(r, n, i);
	}
	return false;
}

/* layout_kind, and each output's symbolic axes where its sequences are: a
 * token value its sequence axis, the heads form where its order puts S, the
 * scores [B, H, Sq, Sk] the queries' and the keys' axes, each when that
 * sequence is symbolic. Every value of a run then has a sequence as its only
 * symbolic axis, and every op it emits is as valid at any length (reshapes
 * with -1 there). The slots filled (0: n does not work in the layout). */
static uint32_t layout_op(struct al_mil_pass *c, struct run *r, const struct al_node *n)
{
	if (!layout_kind(c, r, n))
		return 0;
	uint32_t k = n->kind == AL_MILK_split ? n->n_outputs : 1;
	for (uint32_t j = 0; j < k; j++) {
		uint32_t i = r->n + j;
		unsigned m = 0;
		bool fq = r->flex[r->sq[i]];
		int rk = r->rk[i];
		if (r->lay[i] == LAY_BSC)
			m = fq ? tok_flex(r->tf[i]) : 0u;
		else if (r->lay[i] == LAY_SCORES)
			m = ((fq ? 1u : 0u) << (rk - 2)) | ((r->flex[r->sk[i]] ? 1u : 0u) << (rk - 1));
		else
			for (int a = 0; a < rk; a++)
				m |= r->ord[i][a] == AX_S && fq ? 1u << a : 0u;
		if (!run_shape(&n->out_shapes[j], m))
			return 0;
		r->op[i] = n, r->out[i] = (uint8_t)j;
	}
	return k;
}

static bool starts_run(struct al_mil_pass *c, const struct al_node *p)
{
	return p->kind == AL_MILK_linear || (p->kind == AL_MILK_matmul && const_of(p, "y"));
}

/* The op a run takes along before `first` (its x's producer, right before it:
 * only consts between them, at index >= floor, i.e. in no earlier run): the
 * way into sequence-first attention, a transpose [B, S, C] -> [S, B, C] (perm
 * [1, 0, 2]), or a pre-LN block's layer_norm over the last axis; NULL
 * when there is none. */
static const struct al_node *run_entry_op(const struct al_node *first, uint32_t floor)
{
	const struct al_graph *g = first->owner;
	al_span b;
	if (!g || ali_mil_param_binding(first, "x", 0, &b) != 1)
		return NULL;
	char nm[256];
	snprintf(nm, sizeof nm, "%.*s", (int)(b.n < 255 ? b.n : 255), (const char *)b.p);
	const struct al_node *p = ali_mil_producer(first, nm);
	int pm[3];
	double ax[2];
	struct al_shape s;
	if (!p || p->owner != g || p->index >= first->index || p->index < floor || !p->type ||
	    !ali_mil_param_shape(p, "x", &s) || s.rank != 3 || seq_flex(&s) < 0)
		return NULL;
	bool ln = p->kind == AL_MILK_layer_norm && ali_mil_param_floats(p, "axes", ax, 2) == 1 &&
		  (ax[0] == -1 || ax[0] == 2);
	bool sf = p->kind == AL_MILK_transpose && perm_of(p, 3, pm) && pm[0] == 1 && pm[1] == 0 && pm[2] == 2;
	if (!ln && !sf)
		return NULL;
	for (uint32_t k = p->index + 1; k < first->index; k++)
		if (!const_like(&g->nodes[k]))
			return NULL;
	return p;
}

/* A run's batch, first sequence and dtype: from `first`'s output [B, S, C], or
 * from the [B, S, C] its entry op reads. False when neither is a token value
 * of known dims (or B or C is symbolic). */
static bool run_init(const struct al_node *first, const struct al_node *pre, struct run *r)
{
	struct al_shape s;
	const struct al_shape *o = first->out_shapes ? &first->out_shapes[0] : NULL;
	if (pre && ali_mil_param_shape(pre, "x", &s))
		o = &s;
	int sf = seq_flex(o);
	if (sf < 0 || !first->out_types || first->out_types[0].kind != 0)
		return false;
	memset(r, 0, sizeof *r);
	r->B = o->dims[0], r->S[0] = o->dims[1], r->flex[0] = sf == 1, r->ns = 1, r->dt = first->out_types[0].dtype;
	return true;
}

/* The run from op `first` (a linear or matmul by a constant; with its entry
 * op when it has one at or after floor): its slots, cut before a heads /
 * scores value would have to leave it. *stop: the op that ended it. False
 * when `first` itself does not work in the layout. */
static bool collect_run(struct al_mil_pass *c, const struct al_node *first, uint32_t floor, struct run *r,
			const char **stop)
{
	const struct al_graph *g = first->owner;
	const struct al_node *pre = run_entry_op(first, floor);
again:
	*stop = NULL;
	if (!run_init(first, pre, r))
		return false;
	for (uint32_t k = pre ? pre->index : first->index; k < g->n_nodes; k++) {
		const struct al_node *p = &g->nodes[k];
		if (const_like(p))
			continue;
		uint32_t got = layout_op(c, r, p);
		if (!got) {
			if (r->n < MAX_RUN)
				*stop = ali_arena_printf(&c->s->arena, "the next op, %s (%s), does not work in the (B, C, "
							 "1, S) layout", p->name ? p->name : "?", p->type ? p->type : "?");
			break;
		}
		r->n += got;
	}
	if (pre && (r->n < 2 || r->op[1] != first)) { /* the entry op does not work in the layout: without it */
		pre = NULL;
		goto again;
	}
	if (!r->n)
		return false;
	/* where each value of the run is last read (UINT32_MAX: a block output,
	 * or read inside a nested block), and how many values from before the run
	 * each op is the first to read */
	uint32_t maxr[MAX_RUN] = {0}, newin[MAX_RUN] = {0}, all = r->n;
	struct al_mil_block_io io;
	if (ali_mil_block_io(g, &io))
		for (uint32_t i = 0; i < io.n_outputs; i++) {
			int j = io.outputs[i] ? run_producer(r, io.outputs[i]) : -1;
			if (j >= 0)
				maxr[j] = UINT32_MAX;
		}
	for (uint32_t k = r->op[0]->index + 1; k < g->n_nodes; k++) {
		const struct al_node *q = &g->nodes[k];
		if (const_like(q))
			continue;
		for (uint32_t a = 0; a < q->n_inputs; a++) {
			int j = q->inputs[a] ? run_producer(r, q->inputs[a]) : -1;
			if (j >= 0 && maxr[j] < k)
				maxr[j] = k;
		}
		for (uint32_t j = 0; q->n_sub && j < all; j++)
			if (ali_mil_readers(q->sub[0], slot_name(r, j), 1) > 0)
				maxr[j] = UINT32_MAX;
	}
	for (uint32_t i = 0; i < all; i++) {
		static const char *const act[2] = {"x", "y"};
		for (int j = 0; j < 2 && !(i > 0 && r->op[i] == r->op[i - 1]); j++) {
			al_span b;
			if (ali_mil_param_binding(r->op[i], act[j], 0, &b) != 1 || const_of(r->op[i], act[j]))
				continue;
			char nm[256];
			snprintf(nm, sizeof nm, "%.*s", (int)(b.n < 255 ? b.n : 255), (const char *)b.p);
			bool seen = run_producer(r, nm) >= 0;
			for (uint32_t q = 0; q < i && !seen; q++)
				for (int t = 0; t < 2 && !seen; t++) {
					al_span b2;
					seen = ali_mil_param_binding(r->op[q], act[t], 0, &b2) == 1 && b2.n == b.n &&
					       memcmp(b2.p, b.p, b.n) == 0;
				}
			if (j == 1 && !seen) { /* x and y the same value */
				al_span b0;
				seen = ali_mil_param_binding(r->op[i], "x", 0, &b0) == 1 && b0.n == b.n &&
				       memcmp(b0.p, b.p, b.n) == 0;
			}
			newin[i] += !seen;
		}
	}
	/* the prefix to rewrite: no heads / scores value may leave it; of those with
	 * two linears, the one needing the fewest conversions (entries + exits),
	 * the longest of equals */
	uint32_t best = 0, best_cost = UINT32_MAX, longest = 1, lin = 0, ne = 0;
	for (uint32_t m = 1; m <= all; m++) {
		uint32_t E = r->op[m - 1]->index, nx = 0;
		bool ok = m == all || r->op[m] != r->op[m - 1]; /* never between a split's outputs */
		lin += r->kind[m - 1] == K_CONV || r->kind[m - 1] == K_MMW;
		ne += newin[m - 1];
		if (!ok)
			continue;
		for (uint32_t i = 0; i < m && ok; i++) {
			if (maxr[i] > E && r->lay[i] != LAY_BSC)
				ok = false;
			nx += maxr[i] > E;
		}
		if (!ok)
			continue;
		longest = m;
		if (lin >= 2 && ne + nx <= best_cost)
			best = m, best_cost = ne + nx;
	}
	r->n = best ? best : longest;
	r->n_conv = best ? best_cost : 0;
	if (longest < all)
		*stop = ali_arena_printf(&c->s->arena, "the run ends before %s (%s): a value in the heads / scores "
					 "form would leave it", r->op[longest]->name ? r->op[longest]->name : "?",
					 r->op[longest]->type);
	r->n_linear = r->n_attn = r->n_dropped = r->n_ops = 0;
	r->n_gain = pre && pre->kind == AL_MILK_layer_norm ? (uint32_t)-1 : 0;
	for (uint32_t i = 0; i < r->n; i++) {
		r->n_ops += i == 0 || r->op[i] != r->op[i - 1];
		r->n_gain += i == 0 || r->op[i] != r->op[i - 1];
		r->n_linear += r->kind[i] == K_CONV || r->kind[i] == K_MMW;
		r->n_attn += r->kind[i] >= K_ALIAS && (i == 0 || r->op[i] != r->op[i - 1]);
		r->n_dropped += r->kind[i] == K_ALIAS && r->op[i]->kind == AL_MILK_transpose;
	}
	return true;
}

/* The ops converting r's values in and out: a reshape and a transpose each, a
 * reshape alone at one position (S = 1). A run needing more than it has ops is
 * refused: the layout would cost more ops than it moves. */
static uint32_t conv_ops(const struct run *r)
{
	bool one = true;
	for (int k = 0; k < r->ns; k++)
		one &= r->S[k] == 1 && !r->flex[k];
	return (one ? 1 : 2) * r->n_conv;
}

/* The new dims of run value i; a symbolic S is -1 (an unknown dim, and the
 * -1 of a reshape's shape: one per value but the scores, never reshaped). */
static void new_dims(const struct run *r, uint32_t i, int64_t *d)
{
	int64_t S = seq_dim(r, r->sq[i]);
	if (r->lay[i] == LAY_BSC)
		d[0] = r->B, d[1] = r->X[i], d[2] = 1, d[3] = S;
	else if (r->lay[i] == LAY_HEADS)
		d[0] = r->B, d[1] = r->H[i], d[2] = r->D[i], d[3] = S;
	else /* the new scores [B, H, Sk, Sq] */
		d[0] = r->B, d[1] = r->H[i], d[2] = seq_dim(r, r->sk[i]), d[3] = S;
}

/* What ali_pass_mil_block_conv builds, step by step: the run, the entries (each
 * value the run reads from before it, converted once: ein[e] -> ebc[e]), the
 * shared consts, the ops in the layout (body), the exits, and the ops and consts
 * deleted with the run (dels). */
struct build {
	struct al_mil_pass *c;
	struct run *r;
	const struct al_graph *g;
	const char *base; /* the pass's op's output: the shared consts' names */
	int dt;
	int64_t B;
	struct al_buf ent, body, tail;
	const char *ein[MAX_RUN * 2], *ebc[MAX_RUN * 2];
	uint32_t ne, nd, nx;
	al_span dels[MAX_DELS];
	const char *cperm, *cperm_sb, *cstr, *cpad, *cdil, *cgrp, *cvalid, *cax1, *cf, *ct, *cax2, *csplit;
};

/* The first op of the stretch of layout ops n is in: the runs before n in it
 * are replayed (*floor: the first op after them), and n may be in one. */
static bool block_floor(struct al_mil_pass *c, struct run *r, uint32_t *floor)
{
	const struct al_node *n = c->n;
	const struct al_graph *g = n->owner;
	const char *stop = NULL;
	/* an earlier run of the same stretch of layout ops takes this one along:
	 * replay the runs from the first linear of the stretch */
	uint32_t w = n->index;
	for (uint32_t k = n->index; k-- > 0;) {
		const struct al_node *p = &g->nodes[k];
		if (const_like(p))
			continue;
		if (!p->type || !(p->kind == AL_MILK_linear || p->kind == AL_MILK_matmul || p->kind == AL_MILK_reshape ||
				  p->kind == AL_MILK_transpose || p->kind == AL_MILK_softmax ||
				  p->kind == AL_MILK_layer_norm || p->kind == AL_MILK_add || p->kind == AL_MILK_sub ||
				  p->kind == AL_MILK_mul || p->kind == AL_MILK_split || is_unary(p)))
			break;
		w = k;
	}
	*floor = w; /* the first op after the runs before n: an entry op may be taken from there on */
	for (uint32_t k = w; k < n->index;) {
		const struct al_node *p = &g->nodes[k];
		if (!starts_run(c, p)) {
			k++;
			continue;
		}
		uint32_t next = k + 1;
		if (collect_run(c, p, *floor, r, &stop) && r->n_linear >= 2 && conv_ops(r) <= r->n_gain) {
			if (in_run(r, n))
				return ali_mil_say(c, "in the run of '%s' (rewritten with it)", p->name);
			next = *floor = r->op[r->n - 1]->index + 1;
		}
		k = next;
	}
	return true;
}

/* The match: c->n starts a run of at least two linears (or matmuls by a
 * constant) that gains more ops than its conversions cost. */
static bool block_match(struct al_mil_pass *c, struct run *r, const char **stop)
{
	const struct al_node *n = c->n;
	const struct al_graph *g = n->owner;
	struct run r0;
	uint32_t floor;
	if (!g || g->depth != 0 || n->index >= g->n_nodes || &g->nodes[n->index] != n)
		return ali_mil_say(c, "not in the program's main block");
	if (!block_floor(c, r, &floor))
		return false;
	const struct al_shape *o = n->out_shapes ? &n->out_shapes[0] : NULL;
	int sf = seq_flex(o);
	if (sf == -1)
		return ali_mil_say(c, "the output is not a [B, S, C] (rank 3) tensor of known shape");
	if (sf == -2)
		return ali_mil_say(c, "the output's %s axis is symbolic (a flexible input shape): only the sequence "
			      "axis may be", o->flex & 1u ? "batch" : "channel");
	int odt = c->n->out_types[0].kind == 0 ? c->n->out_types[0].dtype : AL_DT_UNKNOWN;
	if (odt != AL_DT_FP16 && odt != AL_DT_FP32)
		return ali_mil_say(c, "the output is %s (fp16 / fp32 only)", al_dtype_name(odt));
	const struct al_node *pre = run_entry_op(n, floor);
	bool starts = run_init(n, pre, &r0);
	if (starts && pre && !(r0.n = layout_op(c, &r0, pre)))
		starts = run_init(n, NULL, &r0); /* the entry op does not work in the layout: without it */
	if (!starts || !layout_op(c, &r0, n)) {
		if (n->kind == AL_MILK_matmul)
			return ali_mil_say(c, "not a [B, S, K] value by a constant [K, N] weight in weight.bin");
		return ali_mil_say(c, "the weight (and bias) are not constants in weight.bin of [N, K] ([N])");
	}
	if (!collect_run(c, n, floor, r, stop))
		return ali_mil_say(c, "the output is not a [B, S, C] (rank 3) tensor of known shape");
	/* A lone matmul by a constant gets no pass of its own: its readers keep its
	 * [B, S, N] output, so the exit writes that shape again and a short last axis
	 * (ANE062) moves onto the exit ops (1 finding -> 2, measured), and no rule
	 * keeps a matmul by a constant off the ANE (docs/surgery.md). */
	if (r->n_linear < 2 && n->kind == AL_MILK_matmul)
		return ali_mil_say(c, "a lone matmul by a constant (%s): a 1x1 conv clears no finding (the [B, S, N] "
			      "output stays)", *stop ? *stop : "the block ends after it");
	if (r->n_linear < 2)
		return ali_mil_say(c, "a lone linear (%s): its entry and exit transposes would cost more than the "
			      "layout gains", *stop ? *stop : "the block ends after it");
	if (conv_ops(r) > r->n_gain)
		return ali_mil_say(c, "a run of %u ops%s would need %u reshapes / transposes in and out (%s)", r->n_gain,
			      r->n_gain < r->n_ops ? " (and the layer_norm it starts at)" : "",
			      conv_ops(r), *stop ? *stop : "the block ends after it");
	return true;
}

/* The converted value of v: the run's (r->bc), else an entry's, else NULL. */
static const char *layout_value(const struct build *b, const char *v)
{
	int k = run_producer(b->r, v);
	const char *xv = k >= 0 ? b->r->bc[k] : NULL;
	for (uint32_t e = 0; e < b->ne && !xv; e++)
		if (strcmp(b->ein[e], v) == 0)
			xv = b->ebc[e];
	return xv;
}

/* Entry v (read by p as act): [B, S, C] -> reshape [B, S, 1, C] -> transpose
 * [B, C, 1, S] (a static single position: one reshape). */
static bool block_entry(struct build *b, const struct al_node *p, const char *act, char *v)
{
	struct al_mil_pass *c = b->c;
	struct run *r = b->r;
	int dt = b->dt;
	int64_t B = b->B, d4[1] = {4};
	struct al_shape s;
	int sid = -1;
	if (!ali_mil_param_shape(p, act, &s) || s.rank != 3 || !run_shape(&s, s.flex & 2u) ||
	    (s.dtype && s.dtype != dt) || (sid = seq_id(r, s.dims[1], s.flex != 0, false)) < 0)
		return ali_mil_say(c, "'%s' read by %s is not a [B, S, C] %s value of one of the run's "
			      "sequences and static B and C", v, p->name, al_dtype_name(dt));
	int64_t S = seq_dim(r, sid);
	bool one = S == 1;
	int64_t d1[4] = {B, S, 1, s.dims[2]}, d2[4] = {B, s.dims[2], 1, S};
	double sh[4] = {(double)B, (double)S, 1, (double)s.dims[2]};
	if (one)
		sh[1] = (double)s.dims[2], sh[3] = 1;
	const char *cs = ali_mil_emit_const(c, &b->ent, v, "shape_bs1c", AL_DT_INT32, 1, d4, sh, 4, NULL);
	const char *t1 = cs ? ali_mil_fresh(c, v, "bs1c") : NULL, *t2 = t1 ? ali_mil_fresh(c, v, "bc1s") : NULL;
	if (!t2)
		return cs ? ali_mil_say(c, "no free value name") : false;
	const char *i1[] = {"x", v, "shape", cs}, *i2[] = {"x", t1, "perm", b->cperm};
	if (one) {
		ali_mil_emit_op(&b->ent, "reshape", i1, 2, t2, dt, 4, d2);
	} else {
		ali_mil_emit_op(&b->ent, "reshape", i1, 2, t1, dt, 4, d1);
		ali_mil_emit_op(&b->ent, "transpose", i2, 2, t2, dt, 4, d2);
	}
	b->ein[b->ne] = v;
	b->ebc[b->ne++] = t2;
	return true;
}

/* The entries: every value the run reads from before it, once. */
static bool block_entries(struct build *b)
{
	struct al_mil_pass *c = b->c;
	struct run *r = b->r;
	double perm[4] = {0, 3, 2, 1};
	int64_t d4[1] = {4};
	b->cperm = ali_mil_emit_const(c, &b->ent, c->n->outputs[0], "perm_bc1s", AL_DT_INT32, 1, d4, perm, 4, NULL);
	if (!b->cperm)
		return false;
	for (uint32_t i = 0; i < r->n; i++) {
		const struct al_node *p = r->op[i];
		static const char *const act[2] = {"x", "y"};
		for (uint32_t j = 0; j < 2; j++) {
			al_span bn;
			if (ali_mil_param_binding(p, act[j], 0, &bn) != 1)
				continue;
			char *v = ali_arena_strndup(&c->s->arena, bn.p, bn.n);
			if (!v)
				return ali_mil_say(c, "out of memory");
			if (run_producer(r, v) >= 0 || const_of(p, act[j]))
				continue;
			bool seen = false;
			for (uint32_t e = 0; e < b->ne && !seen; e++)
				seen = strcmp(b->ein[e], v) == 0;
			if (!seen && !block_entry(b, p, act[j], v))
				return false;
		}
	}
	return true;
}

/* The new names: an alias is the value it aliases (one converted at the
 * entry: sequence-first attention's way in). */
static bool block_names(struct build *b)
{
	struct run *r = b->r;
	for (uint32_t i = 0; i < r->n; i++) {
		al_span bn;
		r->bc[i] = NULL;
		if (r->kind[i] == K_ALIAS && r->src[i][0] >= 0)
			r->bc[i] = r->bc[r->src[i][0]];
		else if (r->kind[i] == K_ALIAS && ali_mil_param_binding(r->op[i], "x", 0, &bn) == 1)
			for (uint32_t e = 0; e < b->ne && !r->bc[i]; e++)
				r->bc[i] = strlen(b->ein[e]) == bn.n && memcmp(b->ein[e], bn.p, bn.n) == 0 ? b->ebc[e] : NULL;
		else if (r->kind[i] != K_ALIAS)
			r->bc[i] = ali_mil_fresh(b->c, slot_name(r, i), "bc1s");
		if (!r->bc[i])
			return ali_mil_say(b->c, "no free value name");
	}
	return true;
}

/* The consts the run's convs, layer_norms, attention and splits share. */
static bool block_consts(struct build *b)
{
	struct al_mil_pass *c = b->c;
	const char *base = b->base;
	double one2[2] = {1, 1}, zero4[4] = {0, 0, 0, 0}, g1 = 1, ax1[1] = {1}, fv = 0, tv = 1, ax2 = 2;
	bool any_split = false;
	for (uint32_t i = 0; i < b->r->n; i++)
		any_split |= b->r->kind[i] == K_SPLIT;
	int64_t d2a[1] = {2}, d1a[1] = {1}, d4[1] = {4};
	b->cstr = ali_mil_emit_const(c, &b->body, base, "strides", AL_DT_INT32, 1, d2a, one2, 2, NULL);
	b->cpad = b->cstr ? ali_mil_emit_const(c, &b->body, base, "pad", AL_DT_INT32, 1, d4, zero4, 4, NULL) : NULL;
	b->cdil = b->cpad ? ali_mil_emit_const(c, &b->body, base, "dilations", AL_DT_INT32, 1, d2a, one2, 2, NULL) : NULL;
	b->cgrp = b->cdil ? ali_mil_emit_const(c, &b->body, base, "groups", AL_DT_INT32, 0, NULL, &g1, 1, NULL) : NULL;
	b->cvalid = b->cgrp ? ali_mil_emit_const(c, &b->body, base, "pad_type", 0, 0, NULL, NULL, 0, "valid") : NULL;
	b->cax1 = b->cvalid ? ali_mil_emit_const(c, &b->body, base, "axes_c", AL_DT_INT32, 1, d1a, ax1, 1, NULL) : NULL;
	if (!b->cax1)
		return false;
	if (b->r->n_attn) {
		b->cf = ali_mil_emit_const(c, &b->body, base, "false", AL_DT_BOOL, 0, NULL, &fv, 1, NULL);
		b->ct = b->cf ? ali_mil_emit_const(c, &b->body, base, "true", AL_DT_BOOL, 0, NULL, &tv, 1, NULL) : NULL;
		b->cax2 = b->ct ? ali_mil_emit_const(c, &b->body, base, "axis_keys", AL_DT_INT32, 0, NULL, &ax2, 1, NULL) : NULL;
		if (!b->cax2)
			return false;
	}
	if (any_split) {
		b->csplit = ali_mil_emit_const(c, &b->body, base, "axis_c", AL_DT_INT32, 0, NULL, ax1, 1, NULL);
		if (!b->csplit)
			return false;
	}
	return true;
}

/* Slot i a reshape to or from the heads: a reshape of its value in the layout. */
static bool op_reshape(struct build *b, uint32_t i, const int64_t *od)
{
	struct al_mil_pass *c = b->c;
	const struct al_node *p = b->r->op[i];
	al_span bn;
	int64_t d4[1] = {4};
	char *v = ali_mil_param_binding(p, "x", 0, &bn) == 1 ? ali_arena_strndup(&c->s->arena, bn.p, bn.n) : NULL;
	if (!v)
		return ali_mil_say(c, "out of memory");
	const char *xv = layout_value(b, v);
	double sh[4] = {(double)od[0], (double)od[1], (double)od[2], (double)od[3]};
	const char *cs = xv ? ali_mil_emit_const(c, &b->body, p->outputs[0], "shape_bc1s", AL_DT_INT32, 1, d4, sh, 4,
					 NULL) : NULL;
	if (!cs)
		return xv ? false : ali_mil_say(c, "'%s' of %s has no value in the layout", v, p->name);
	const char *i1[] = {"x", xv, "shape", cs};
	ali_mil_emit_op(&b->body, "reshape", i1, 2, b->r->bc[i], b->dt, 4, od);
	return true;
}

/* A deleted op or const, when the rewrite drops the last reader of value v
 * (wc its producer; NULL: none). */
static void drop_const(struct build *b, const struct al_node *wc, const char *v)
{
	if (wc && ali_mil_readers(b->g, v, 0) == 1 && b->nd < MAX_DELS)
		b->dels[b->nd++] = al_src(wc)->msg;
}

/* Slot i a matmul by a constant weight: a 1x1 conv on the weight, its blob
 * declared [N, K, 1, 1] ([K, N]: copied once, transposed). */
static bool op_matmul_weight(struct build *b, uint32_t i, const int64_t *od)
{
	struct al_mil_pass *c = b->c;
	struct run *r = b->r;
	const struct al_node *p = r->op[i];
	al_span wd, bn;
	int wdt;
	struct al_mil_value wv;
	char *xn = ali_mil_param_binding(p, "x", 0, &bn) == 1 ? ali_arena_strndup(&c->s->arena, bn.p, bn.n) : NULL;
	char *yn = ali_mil_param_binding(p, "y", 0, &bn) == 1 ? ali_arena_strndup(&c->s->arena, bn.p, bn.n) : NULL;
	if (!xn || !yn || !mm_weight(c, p, &wd, &wdt, &wv))
		return ali_mil_say(c, "the weight of %s could not be re-read", p->name);
	const char *xv = layout_value(b, xn);
	int64_t N = r->wt[i] ? wv.dims[1] : wv.dims[0], K = r->wt[i] ? wv.dims[0] : wv.dims[1];
	int64_t wdims[4] = {N, K, 1, 1};
	uint64_t off = wv.blob_offset;
	if (r->wt[i]) { /* [K, N] -> [N, K]: the bytes moved, never decoded */
		size_t es = wdt == AL_DT_FP16 ? 2 : 4;
		bool fits = N > 0 && K > 0 && (uint64_t)N <= wd.n / es / (uint64_t)K;
		size_t tot = fits ? (size_t)N * (size_t)K * es : 0;
		uint8_t *tb = fits && tot == wd.n ? ali_malloc(tot) : NULL;
		if (!tb)
			return ali_mil_say(c, tot == wd.n ? "out of memory" : "the weight blob of %s is not [K, N]", p->name);
		for (int64_t a = 0; a < N; a++)
			for (int64_t kk = 0; kk < K; kk++)
				memcpy(tb + ((size_t)a * (size_t)K + (size_t)kk) * es,
				       wd.p + ((size_t)kk * (size_t)N + (size_t)a) * es, es);
		off = ali_mil_add_blob(c->s, wdt == AL_DT_FP16 ? 1 : 2, tb, tot);
		ali_free(tb);
		if (off == UINT64_MAX)
			return ali_mil_say(c, "out of memory");
	}
	const char *wn = xv ? ali_mil_fresh(c, yn, "1x1") : NULL;
	if (!wn)
		return ali_mil_say(c, xv ? "no free value name" : "'%s' has no value in the layout", xn);
	ali_mil_emit_blob_const(&b->body, wn, wdt, wdims, off);
	drop_const(b, ali_mil_producer(p, yn), yn);
	const char *i1[] = {"x", xv, "weight", wn, "strides", b->cstr, "pad_type", b->cvalid, "pad", b->cpad,
			    "dilations", b->cdil, "groups", b->cgrp};
	ali_mil_emit_op(&b->body, "conv", i1, 7, r->bc[i], b->dt, 4, od);
	return true;
}

/* A linear's weight v as a conv's: a palettized one's lut op again, expanding
 * to [N, K, 1, 1], else the same blob declared [N, K, 1, 1]. Its name, or NULL. */
static const char *conv_weight(struct build *b, const struct al_node *p, const char *v)
{
	struct al_mil_pass *c = b->c;
	struct ali_lut_weight lw;
	if (ali_mil_lut_weight(p, "weight", b->dt, &lw)) {
		const char *wn = ali_mil_fresh(c, v, "1x1");
		if (!wn) {
			ali_mil_say(c, "no free value name");
			return NULL;
		}
		ali_mil_emit_lut_weight(&b->body, wn, b->dt, &lw);
		if (ali_mil_readers(b->g, v, 0) == 1 && b->nd < MAX_DELS)
			b->dels[b->nd++] = al_src(lw.op)->msg;
		return wn;
	}
	const struct al_node *saved = c->n;
	al_span wd;
	int wdt;
	struct al_mil_value wv;
	c->n = p;
	bool got = ali_mil_param_blob(c, "weight", &wd, &wdt, &wv);
	c->n = saved;
	const char *wn = got ? ali_mil_fresh(c, v, "1x1") : NULL;
	if (!wn) {
		if (got)
			ali_mil_say(c, "no free value name");
		return NULL;
	}
	int64_t wdims[4] = {wv.dims[0], wv.dims[1], 1, 1};
	ali_mil_emit_blob_const(&b->body, wn, wdt, wdims, wv.blob_offset);
	drop_const(b, ali_mil_producer(p, v), v);
	return wn;
}

/* Slot i an op kept in the layout (a linear as a conv): its parameters bound
 * to the values in the layout, the axes it takes moved to the layout's. */
static bool op_in_layout(struct build *b, uint32_t i, const int64_t *od)
{
	struct al_mil_pass *c = b->c;
	struct run *r = b->r;
	const struct al_node *p = r->op[i];
	const char *in[40];
	int ni = 0;
	struct al_mil_arg *args = al_src(p)->mil_args;
	if (al_src(p)->n_mil_args > 14)
		return ali_mil_say(c, "%s has %u parameters", p->name, al_src(p)->n_mil_args);
	for (uint32_t a = 0; a < al_src(p)->n_mil_args; a++) {
		const char *pm = args[a].param;
		al_span bn;
		if (!pm || ali_mil_param_binding(p, pm, 0, &bn) != 1)
			return ali_mil_say(c, "'%s' of %s is not bound to one name", pm ? pm : "?", p->name);
		char *v = ali_arena_strndup(&c->s->arena, bn.p, bn.n);
		if (!v)
			return ali_mil_say(c, "out of memory");
		const char *to = v;
		int k = run_producer(r, v);
		if (k >= 0 && strcmp(pm, "x") != 0 && strcmp(pm, "y") != 0)
			return ali_mil_say(c, "'%s' of %s is a value of the run", pm, p->name);
		if (k >= 0)
			to = r->bc[k];
		for (uint32_t e = 0; e < b->ne && k < 0; e++)
			if (strcmp(b->ein[e], v) == 0)
				to = b->ebc[e];
		if (p->kind == AL_MILK_layer_norm && strcmp(pm, "axes") == 0)
			to = b->cax1;
		if (r->kind[i] == K_SOFTMAX && strcmp(pm, "axis") == 0)
			to = b->cax2;
		if (r->kind[i] == K_SPLIT && strcmp(pm, "axis") == 0)
			to = b->csplit;
		if (p->kind == AL_MILK_linear && strcmp(pm, "weight") == 0 && !(to = conv_weight(b, p, v)))
			return false;
		in[ni++] = pm;
		in[ni++] = to;
	}
	if (p->kind == AL_MILK_linear) {
		const char *extra[] = {"strides", b->cstr, "pad_type", b->cvalid, "pad", b->cpad, "dilations", b->cdil,
				       "groups", b->cgrp};
		for (int e = 0; e < 10; e++)
			in[ni++] = extra[e];
		ali_mil_emit_op(&b->body, "conv", in, ni / 2, r->bc[i], b->dt, 4, od);
	} else if (r->kind[i] == K_SPLIT) { /* one op, a slot per output */
		const char *outs[MAX_RUN];
		int64_t dd[MAX_RUN][4];
		uint32_t k = 0;
		for (; i + k < r->n && r->op[i + k] == p; k++) {
			outs[k] = r->bc[i + k];
			new_dims(r, i + k, dd[k]);
		}
		ali_mil_emit_op_outs(&b->body, "split", in, ni / 2, outs, (int)k, b->dt, 4, (const int64_t(*)[4])dd);
	} else {
		ali_mil_emit_op(&b->body, p->type, in, ni / 2, r->bc[i], b->dt, 4, od);
	}
	return true;
}

/* The run's ops in the layout, into body. */
static bool block_ops(struct build *b)
{
	struct run *r = b->r;
	for (uint32_t i = 0; i < r->n; i++) {
		int64_t od[4];
		new_dims(r, i, od);
		if (r->kind[i] == K_ALIAS || (i > 0 && r->op[i] == r->op[i - 1]))
			continue;
		bool ok;
		if (r->kind[i] == K_SPLITR || r->kind[i] == K_JOINR) {
			ok = op_reshape(b, i, od);
		} else if (r->kind[i] == K_SCORES || r->kind[i] == K_CTX) {
			/* scores: matmul(k^T, q) [B, H, Sk, Sq]; context: matmul(v, w) [B, H, D, Sq] */
			const char *xv = r->bc[r->src[i][1]], *yv = r->bc[r->src[i][0]];
			const char *i1[] = {"x", xv, "y", yv, "transpose_x", r->kind[i] == K_SCORES ? b->ct : b->cf,
					    "transpose_y", b->cf};
			ali_mil_emit_op(&b->body, "matmul", i1, 4, r->bc[i], b->dt, 4, od);
			ok = true;
		} else if (r->kind[i] == K_MMW) {
			ok = op_matmul_weight(b, i, od);
		} else {
			ok = op_in_layout(b, i, od);
		}
		if (!ok)
			return false;
	}
	return true;
}

/* The consts only the run's dropped parameters read (shape, perm, axis, axes,
 * transpose flags) go with it. */
static void block_dropped(struct build *b)
{
	struct run *r = b->r;
	const struct al_graph *g = b->g;
	for (uint32_t i = 0; i < r->n; i++) {
		static const char *const dropped[] = {"shape", "perm", "axis", "axes", "transpose_x", "transpose_y"};
		for (size_t j = 0; j < sizeof dropped / sizeof dropped[0]; j++) {
			const struct al_node *cn = const_of(r->op[i], dropped[j]);
			bool drops = r->kind[i] != K_COPY && r->kind[i] != K_CONV;
			if (r->op[i]->kind == AL_MILK_layer_norm && strcmp(dropped[j], "axes") == 0)
				drops = true;
			if (!cn || !drops)
				continue;
			const char *v = cn->outputs[0];
			uint32_t inside = 0;
			for (uint32_t q = 0; q < r->n; q++)
				for (uint32_t a = 0; !(q > 0 && r->op[q] == r->op[q - 1]) && a < r->op[q]->n_inputs; a++)
					inside += r->op[q]->inputs[a] && strcmp(r->op[q]->inputs[a], v) == 0;
			bool seen = false;
			for (uint32_t q = 0; q < b->nd && !seen; q++)
				seen = b->dels[q].p == al_src(cn)->msg.p;
			if (!seen && inside == ali_mil_readers(g, v, 0) && !read_outside(r, g, v) && b->nd < MAX_DELS)
				b->dels[b->nd++] = al_src(cn)->msg;
		}
	}
}

/* The exits: each token value read after the run (or a block output) back to
 * its own form, under its own name: [B, S, X]; sequence-first [S, B, X] or
 * [S*B, X] (a transpose to [S, B, 1, X]; at B = 1 the [B, S, 1, X] one holds
 * the same bytes). */
static bool block_exits(struct build *b)
{
	struct al_mil_pass *c = b->c;
	struct run *r = b->r;
	int64_t B = b->B, d4[1] = {4};
	int dt = b->dt;
	for (uint32_t i = 0; i < r->n; i++) {
		const char *v = slot_name(r, i);
		if (r->lay[i] != LAY_BSC || !read_outside(r, b->g, v))
			continue;
		int64_t S = seq_dim(r, r->sq[i]);
		bool one = S == 1, sfirst = r->tf[i] != TF_BSC && B != 1;
		int rk = tok_rank(r->tf[i]);
		int64_t X = slot_shape(r, i)->dims[rk - 1], d1[4] = {B, S, 1, X}, d3[3] = {B, S, X};
		if (r->tf[i] == TF_SBC)
			d3[0] = S, d3[1] = B;
		else if (r->tf[i] == TF_TC)
			d3[0] = S < 0 ? -1 : S * B, d3[1] = X;
		if (sfirst && !one) {
			d1[0] = S, d1[1] = B;
			double psb[4] = {3, 0, 2, 1};
			if (!b->cperm_sb)
				b->cperm_sb = ali_mil_emit_const(c, &b->body, b->base, "perm_sb1c", AL_DT_INT32, 1, d4, psb, 4, NULL);
			if (!b->cperm_sb)
				return false;
		}
		double sh[3] = {(double)d3[0], (double)d3[1], (double)d3[2]};
		int64_t d3a[1] = {rk};
		const char *cs = ali_mil_emit_const(c, &b->body, v, "shape_bsc", AL_DT_INT32, 1, d3a, sh, (size_t)rk, NULL);
		const char *t1 = cs ? ali_mil_fresh(c, v, "bs1c") : NULL;
		if (!t1)
			return cs ? ali_mil_say(c, "no free value name") : false;
		const char *i1[] = {"x", r->bc[i], "perm", sfirst ? b->cperm_sb : b->cperm};
		const char *i2[] = {"x", one ? r->bc[i] : t1, "shape", cs};
		if (!one)
			ali_mil_emit_op(&b->body, "transpose", i1, 2, t1, dt, 4, d1);
		ali_mil_emit_op(&b->body, "reshape", i2, 2, v, dt, rk, d3);
		b->nx++;
	}
	return true;
}

/* The entries go where the pass's op was (its place: the last entry op), the
 * run and the exits where its last op was; the ops between are deleted. */
static bool block_splice(struct build *b)
{
	struct al_mil_pass *c = b->c;
	struct run *r = b->r;
	const struct al_node *last = r->op[r->n - 1];
	if (!ali_mil_split_last(&b->ent, &c->layer) || !ali_mil_split_last(&b->body, &b->tail))
		return ali_mil_say(c, "out of memory");
	ali_buf_put(&c->pre, b->ent.p, b->ent.n);
	enum al_status st = ali_splice_insert_before(c->s->sp, al_src(last)->msg, b->body.p, b->body.n);
	if (!st)
		st = ali_splice_replace(c->s->sp, al_src(last)->msg, al_src(last)->msg.p, al_src(last)->msg.n,
				       b->tail.p, b->tail.n);
	for (uint32_t i = 0; i < r->n && !st; i++)
		if (r->op[i] != c->n && r->op[i] != last && !(i > 0 && r->op[i] == r->op[i - 1]))
			st = ali_splice_delete(c->s->sp, al_src(r->op[i])->msg);
	for (uint32_t i = 0; i < b->nd && !st; i++)
		st = ali_splice_delete(c->s->sp, b->dels[i]);
	if (st)
		return ali_mil_say(c, "the run could not be rewritten (%s)", al_status_str(st));
	return true;
}

bool ali_pass_mil_block_conv(struct al_mil_pass *c)
{
	if (!ali_mil_op_ok(c))
		return false;
	const struct al_node *n = c->n;
	if (n->kind == AL_MILK_matmul && !const_of(n, "y"))
		return false; /* an attention product: not a candidate (a run takes it along) */
	struct run r;
	const char *stop = NULL;
	if (!block_match(c, &r, &stop))
		return false;
	if (c->s->opts && c->s->opts->allow < AL_EQ_REASSOCIATE) { /* reported, nothing built */
		if (r.n_attn)
			snprintf(c->after, sizeof c->after, "a run of %u ops (%u -> 1x1 conv, %u of attention, %u "
				 "transposes dropped) in the (B, C, 1, S) layout", r.n_ops, r.n_linear, r.n_attn, r.n_dropped);
		else
			snprintf(c->after, sizeof c->after, "a run of %u ops (%u linear -> 1x1 conv) in the (B, C, 1, S) layout",
				 r.n_ops, r.n_linear);
		return true;
	}
	/* per converted value, S: its sequence length in the new types and
	 * reshapes, -1 when symbolic; one: a static single position, where
	 * [B, 1, C] and [B, C, 1, 1] hold the same bytes (one reshape, no transpose) */
	struct build bs = {.c = c, .r = &r, .g = n->owner, .base = n->outputs[0], .dt = r.dt, .B = r.B}, *b = &bs;
	bool ok = block_entries(b) && block_names(b) && block_consts(b) && block_ops(b);
	if (ok)
		block_dropped(b);
	ok = ok && block_exits(b);
	if (ok && (b->ent.failed || b->body.failed))
		ok = ali_mil_say(c, "out of memory");
	if (ok && !b->nx)
		ok = ali_mil_say(c, "nothing reads the run's results");
	ok = ok && block_splice(b);
	ali_buf_free(&b->ent);
	ali_buf_free(&b->body);
	ali_buf_free(&b->tail);
	uint32_t ne = b->ne, nx = b->nx;
	for (uint32_t i = 0; ok && i < ne && c->n_names < 120; i++)
		c->names[c->n_names++] = b->ebc[i];
	if (!ok)
		return false;
	for (uint32_t i = 0; i < r.n && c->n_names < 120; i++)
		if (r.kind[i] != K_ALIAS && !(i > 0 && r.op[i] == r.op[i - 1]))
			c->names[c->n_names++] = r.bc[i];
	if (r.n_attn)
		snprintf(c->after, sizeof c->after,
			 "a run of %u ops (%u -> 1x1 conv, %u of attention, %u transposes dropped) in the (B, C, 1, S) "
			 "layout: %u entr%s, %u exit%s", r.n_ops, r.n_linear, r.n_attn, r.n_dropped, ne, ne == 1 ? "y" : "ies",
			 nx, nx == 1 ? "" : "s");
	else
		snprintf(c->after, sizeof c->after,
			 "a run of %u ops (%u linear -> 1x1 conv) in the (B, C, 1, S) layout: %u entr%s, %u exit%s", r.n_ops,
			 r.n_linear, ne, ne == 1 ? "y" : "ies", nx, nx == 1 ? "" : "s");
	return true;
}
