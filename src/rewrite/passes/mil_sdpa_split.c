/* SPDX-License-Identifier: MIT */
/* mil_sdpa_split.c: mil-sdpa-split-heads (a row of AL_PASSES in surgery.c; docs/surgery.md;
 * tests/pass_mil_sdpa_split_heads.sh).
 *   match:   scaled_dot_product_attention of static rank-4 fp16 / fp32 query / key / value, at most
 *            16 heads, an optional float mask
 *   rewrite: per head: matmul, mask add, reshape, softmax on the channel axis, reshape, matmul;
 *            concat of the heads
 *   proves:  reassociate: the same products and sums, grouped per head, the scale applied before
 *            the dot products */
#include "passes.h"
#include "kernels.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* attention -> split-einsum form:
 * scaled_dot_product_attention (iOS 18) on little work is kept on the CPU
 * (ANE067), and Apple's recipe for the ANE (ml-ane-transformers 2022, catalog
 * R6 / O19) is attention split per head with the softmax on the channel axis.
 * For query [B, H, L, E], key [B, H, S, E], value [B, H, S, EV]:
 *   q' = q * a1, k' = k * a2 (a1 * a2 = 1/sqrt(E); a2 = 1 when 1/sqrt(E) is
 *   exact in the dtype), split q', k', v on the head axis, and per head h
 *   t_h = matmul(k'_h, q'_h^T)            [B, 1, S, L]  (key on axis 2)
 *   t_h += mask_h^T                        (the mask's last two axes swapped)
 *   w_h = softmax(reshape(t_h, [B, S, 1, L]), axis 1)     (key on the channel axis)
 *   o_h = matmul(reshape(w_h, [B, 1, S, L])^T, v_h)       [B, 1, L, EV]
 * and the op itself a concat of the o_h on axis 1. The reshapes move a
 * singleton axis only (no data moves). The same products and sums, grouped per
 * head and scaled before the dot products instead of after: reassociate. In
 * fp16, 1/sqrt(E) is rarely exact: it is then two fp16 factors (on q and on k)
 * whose product is within 2^-20 of it (E = 32: 2.5e-7), else refused. */

#define MAX_HEADS 16
#define SCALE_TOL 9.5367431640625e-07 /* 2^-20 */
/* pre_op with the inputs as a flat (param, value) list. */
static bool pre_op_list(struct al_mil_pass *c, const char *type, const char *const *in, int n_in,
			const char *const *outs, int n_out, int dt, int rank, const int64_t *dims)
{
	struct al_buf op = {0};
	ali_mil_put_type(&op, type);
	for (int i = 0; i < n_in; i++)
		ali_mil_put_input(&op, in[2 * i], in[2 * i + 1]);
	return ali_mil_pre_op_end(c, &op, outs, n_out, dt, rank, dims);
}

/* A const before c->n named base_sfx (not listed in names): its name, or NULL. */
static const char *kconst(struct al_mil_pass *c, const char *base, const char *sfx, int dt, int rank,
			  const int64_t *dims, const double *x, size_t n)
{
	const char *nm = ali_mil_fresh(c, base, sfx);
	uint32_t keep = c->n_names;
	bool blob;
	if (!nm) {
		ali_mil_say(c, "no free value name");
		return NULL;
	}
	bool ok = ali_mil_pre_const(c, nm, dt, rank, dims, x, n, &blob);
	c->n_names = keep;
	return ok ? nm : NULL;
}

/* Two fp16 factors a1 * a2 closest to alpha (relative error into *err). */
static void fp16_factors(double alpha, double *a1, double *a2, double *err)
{
	*err = 1;
	*a1 = alpha;
	*a2 = 1;
	for (int e = -8; e <= 2; e++)
		for (int m = 1024; m < 2048; m++) {
			double x = ldexp(m, e - 10);
			double y = ali_f16_to_f32(ali_f16_from_f32((float)(alpha / x)));
			if (y == 0 || isinf(y))
				continue;
			double r = fabs(x * y / alpha - 1);
			if (r < *err)
				*err = r, *a1 = x, *a2 = y;
		}
}

/* Split value x of dims d (rank 4) into H parts on axis 1: their names. */
static bool split_heads(struct al_mil_pass *c, const char *x, const int64_t *d, int64_t H, const char *axis1,
			const char *nh, int dt, const char *base, const char *tag, const char **parts)
{
	if (H == 1) {
		parts[0] = x;
		return true;
	}
	for (int64_t h = 0; h < H; h++) {
		char sfx[32];
		snprintf(sfx, sizeof sfx, "%s_h%lld", tag, (long long)h);
		if (!(parts[h] = ali_mil_fresh(c, base, sfx)))
			return ali_mil_say(c, "no free value name");
	}
	int64_t pd[4] = {d[0], 1, d[2], d[3]};
	const char *in[] = {"x", x, "num_splits", nh, "axis", axis1};
	return pre_op_list(c, "split", in, 3, parts, (int)H, dt, 4, pd);
}

static bool shape_of(struct al_mil_pass *c, const char *p, struct al_shape *s, char *sh, size_t n)
{
	if (!ali_mil_param_shape(c->n, p, s))
		s->rank = -1;
	ali_shape_format(s, sh, n);
	if (s->rank < 0 || !ali_mil_static_shape(s))
		return ali_mil_say(c, "'%s' has shape %s, not static", p, sh);
	return true;
}

/* What the match found: the operands' names and shapes, the sizes, the mask's
 * rank and its dims aligned to the scores' [B, H, L, S]; then the names of the
 * shared consts (false, true, axis 1, the head count, the two reshapes). */
struct sdpa {
	const char *nm[4]; /* query, key, value, attn_mask */
	struct al_shape s[4];
	char sh[4][96];
	bool has_mask;
	int64_t B, H, L, E, S, EV;
	int dt, mr;
	int64_t md[4];
	const char *base, *cf, *ct, *cax, *cnh, *cs1, *cs2;
};

/* The mask's checks: its dtype the scores', rank 2-4, broadcasting to them. */
static bool sdpa_mask_ok(struct al_mil_pass *c, struct sdpa *a)
{
	if (a->s[3].dtype != a->dt)
		return ali_mil_say(c, "attn_mask is %s: a bool mask would need a select per head (only %s mask "
			      "added to the scores is rewritten)", al_dtype_name(a->s[3].dtype),
			   a->dt == AL_DT_FP16 ? "an fp16" : "an fp32");
	if (a->mr < 2 || a->mr > 4)
		return ali_mil_say(c, "attn_mask has shape %s: rank 2-4 expected", a->sh[3]);
	for (int i = 0; i < a->mr; i++)
		a->md[4 - a->mr + i] = a->s[3].dims[i];
	const int64_t full[4] = {a->B, a->H, a->L, a->S};
	for (int i = 0; i < 4; i++)
		if (a->md[i] != 1 && a->md[i] != full[i])
			return ali_mil_say(c, "attn_mask %s does not broadcast to the scores [%lld,%lld,%lld,%lld]", a->sh[3],
				   (long long)a->B, (long long)a->H, (long long)a->L, (long long)a->S);
	return true;
}

/* The match: named operands of static rank-4 shapes that fit together, at most
 * MAX_HEADS heads, fp16 / fp32, a float mask that broadcasts. */
static bool sdpa_match(struct al_mil_pass *c, struct sdpa *a)
{
	al_span b;
	const char *pn[4] = {"query", "key", "value", "attn_mask"};
	a->has_mask = ali_mil_param_present(c->n, "attn_mask");
	for (int i = 0; i < 3 + a->has_mask; i++) {
		if (ali_mil_param_binding(c->n, pn[i], 0, &b) != 1)
			return ali_mil_say(c, "'%s' is not a named value", pn[i]);
		if (!(a->nm[i] = ali_arena_strndup(&c->s->arena, b.p, b.n)))
			return ali_mil_say(c, "out of memory");
		if (!shape_of(c, pn[i], &a->s[i], a->sh[i], sizeof a->sh[i]))
			return false;
	}
	const struct al_shape *s = a->s;
	char (*sh)[96] = a->sh;
	if (s[0].rank != 4 || s[1].rank != 4 || s[2].rank != 4)
		return ali_mil_say(c, "query %s, key %s, value %s: rank 4 [B, heads, L, E] expected", sh[0], sh[1], sh[2]);
	const int64_t *q = s[0].dims, *k = s[1].dims, *v = s[2].dims;
	int64_t B = q[0], H = q[1], L = q[2], E = q[3], S = k[2], EV = v[3];
	if (k[0] != B || v[0] != B || k[1] != H || v[1] != H || k[3] != E || v[2] != S)
		return ali_mil_say(c, "query %s, key %s, value %s do not match as [B,H,L,E], [B,H,S,E], [B,H,S,EV]",
			   sh[0], sh[1], sh[2]);
	if (B < 1 || H < 1 || L < 1 || E < 1 || S < 1 || EV < 1)
		return ali_mil_say(c, "an empty axis in %s / %s / %s", sh[0], sh[1], sh[2]);
	if (H > MAX_HEADS)
		return ali_mil_say(c, "%lld heads: more than %d (the per-head ops grow with them)", (long long)H, MAX_HEADS);
	a->B = B, a->H = H, a->L = L, a->E = E, a->S = S, a->EV = EV;
	int dt = a->dt = s[0].dtype ? s[0].dtype : ali_mil_out_dtype(c);
	if (dt != AL_DT_FP16 && dt != AL_DT_FP32)
		return ali_mil_say(c, "query is %s (fp16 / fp32 only)", al_dtype_name(dt));
	if (s[1].dtype != dt || s[2].dtype != dt)
		return ali_mil_say(c, "query, key and value differ in dtype");
	a->mr = a->has_mask ? s[3].rank : 0;
	for (int i = 0; i < 4; i++)
		a->md[i] = 1;
	return !a->has_mask || sdpa_mask_ok(c, a);
}

/* The mask, its last two axes swapped (key first), per head when it has them:
 * mh[0..H) the value each head adds. */
static bool sdpa_mask(struct al_mil_pass *c, const struct sdpa *a, const char **mh)
{
	const char *base = a->base, *mt = a->nm[3];
	int mr = a->mr, dt = a->dt;
	int64_t td[4], H = a->H;
	memcpy(td, a->s[3].dims, sizeof td[0] * (size_t)mr);
	if (a->md[2] != 1 || a->md[3] != 1) {
		double perm[4];
		int64_t pd[1] = {mr};
		for (int i = 0; i < mr; i++)
			perm[i] = i;
		perm[mr - 2] = mr - 1, perm[mr - 1] = mr - 2;
		td[mr - 2] = a->s[3].dims[mr - 1], td[mr - 1] = a->s[3].dims[mr - 2];
		const char *cp = kconst(c, base, "mask_perm", AL_DT_INT32, 1, pd, perm, (size_t)mr);
		const char *mto = cp ? ali_mil_fresh(c, base, "mask_t") : NULL;
		if (!mto)
			return cp ? ali_mil_say(c, "no free value name") : false;
		const char *in_m[] = {"x", a->nm[3], "perm", cp};
		if (!pre_op_list(c, "transpose", in_m, 2, &mto, 1, dt, mr, td))
			return false;
		mt = mto;
	}
	bool per_head = mr >= 3 && a->md[1] == H && H > 1;
	for (int64_t h = 0; h < H; h++)
		mh[h] = mt;
	if (!per_head)
		return true;
	int64_t sd[4];
	memcpy(sd, td, sizeof sd[0] * (size_t)mr);
	sd[mr - 3] = 1;
	double axm = mr - 3;
	const char *cam = kconst(c, base, "mask_axis", AL_DT_INT32, 0, NULL, &axm, 1);
	if (!cam)
		return false;
	for (int64_t h = 0; h < H; h++) {
		char sfx[32];
		snprintf(sfx, sizeof sfx, "mask_h%lld", (long long)h);
		if (!(mh[h] = ali_mil_fresh(c, base, sfx)))
			return ali_mil_say(c, "no free value name");
	}
	const char *in_s[] = {"x", mt, "num_splits", a->cnh, "axis", cam};
	return pre_op_list(c, "split", in_s, 3, mh, (int)H, dt, mr, sd);
}

/* Head h: scores = matmul(k_h, q_h^T) (+ mask), reshaped to [B, S, 1, L],
 * softmax on axis 1, reshaped back, out = matmul(weights^T, v_h): its name. */
static const char *sdpa_head(struct al_mil_pass *c, const struct sdpa *a, int64_t h, const char *qh,
			     const char *kh, const char *vh, const char *mh)
{
	char sfx[32];
	const char *t[6];
	static const char *const tags[6] = {"scores", "masked", "bs1l", "weights", "b1sl", "out"};
	for (int i = 0; i < 6; i++) {
		snprintf(sfx, sizeof sfx, "%s_h%lld", tags[i], (long long)h);
		if (!(t[i] = ali_mil_fresh(c, a->base, sfx))) {
			ali_mil_say(c, "no free value name");
			return NULL;
		}
	}
	int64_t B = a->B, S = a->S, L = a->L;
	int dt = a->dt;
	int64_t d1[4] = {B, 1, S, L}, d2[4] = {B, S, 1, L}, d3[4] = {B, 1, L, a->EV};
	const char *in0[] = {"x", kh, "y", qh, "transpose_x", a->cf, "transpose_y", a->ct};
	const char *in1[] = {"x", t[0], "y", a->has_mask ? mh : ""};
	const char *sc = a->has_mask ? t[1] : t[0];
	const char *in2[] = {"x", sc, "shape", a->cs1};
	const char *in3[] = {"x", t[2], "axis", a->cax};
	const char *in4[] = {"x", t[3], "shape", a->cs2};
	const char *in5[] = {"x", t[4], "y", vh, "transpose_x", a->ct, "transpose_y", a->cf};
	if (!pre_op_list(c, "matmul", in0, 4, &t[0], 1, dt, 4, d1) ||
	    (a->has_mask && !pre_op_list(c, "add", in1, 2, &t[1], 1, dt, 4, d1)) ||
	    !pre_op_list(c, "reshape", in2, 2, &t[2], 1, dt, 4, d2) ||
	    !pre_op_list(c, "softmax", in3, 2, &t[3], 1, dt, 4, d2) ||
	    !pre_op_list(c, "reshape", in4, 2, &t[4], 1, dt, 4, d1) ||
	    !pre_op_list(c, "matmul", in5, 4, &t[5], 1, dt, 4, d3))
		return NULL;
	return t[5];
}

bool ali_pass_mil_sdpa_split(struct al_mil_pass *c)
{
	struct sdpa a = {0};
	if (!ali_mil_op_ok(c) || !sdpa_match(c, &a))
		return false;
	int64_t B = a.B, H = a.H, L = a.L, E = a.E, S = a.S;
	int dt = a.dt;
	double alpha = (float)(1.0 / sqrt((double)E)), a1 = alpha, a2 = 1, err = 0;
	if (!ali_mil_exact_in(dt, alpha)) {
		fp16_factors(alpha, &a1, &a2, &err);
		if (err > SCALE_TOL)
			return ali_mil_say(c, "1/sqrt(%lld) is not exact in fp16 and no two fp16 factors come within 2^-20 "
				      "of it (best %.2g)", (long long)E, err);
	}
	if (c->s->opts && c->s->opts->allow < AL_EQ_REASSOCIATE) { /* reported, nothing built */
		snprintf(c->after, sizeof c->after, "%lld heads: per-head matmuls, softmax on the channel axis, concat",
			 (long long)H);
		return true;
	}
	const char *base = a.base = c->n->outputs[0];
	int64_t d4[1] = {4};
	double fv = 0, tv = 1, ax1 = 1, hv = (double)H;
	double sh1[4] = {(double)B, (double)S, 1, (double)L}, sh2[4] = {(double)B, 1, (double)S, (double)L};
	a.cf = kconst(c, base, "false", AL_DT_BOOL, 0, NULL, &fv, 1);
	a.ct = a.cf ? kconst(c, base, "true", AL_DT_BOOL, 0, NULL, &tv, 1) : NULL;
	a.cax = a.ct ? kconst(c, base, "axis1", AL_DT_INT32, 0, NULL, &ax1, 1) : NULL;
	a.cnh = a.cax && H > 1 ? kconst(c, base, "heads", AL_DT_INT32, 0, NULL, &hv, 1) : a.cax;
	a.cs1 = a.cnh ? kconst(c, base, "bs1l", AL_DT_INT32, 1, d4, sh1, 4) : NULL;
	a.cs2 = a.cs1 ? kconst(c, base, "b1sl", AL_DT_INT32, 1, d4, sh2, 4) : NULL;
	const char *ca1 = a.cs2 ? kconst(c, base, "scale_q", dt, 0, NULL, &a1, 1) : NULL;
	const char *ca2 = ca1 && a2 != 1 ? kconst(c, base, "scale_k", dt, 0, NULL, &a2, 1) : ca1;
	if (!ca2)
		return false;
	/* the scaled query (and key) */
	const char *qs = ali_mil_fresh(c, base, "q_scaled"), *ks = a2 != 1 ? ali_mil_fresh(c, base, "k_scaled") : a.nm[1];
	if (!qs || !ks)
		return ali_mil_say(c, "no free value name");
	const int64_t *q = a.s[0].dims, *k = a.s[1].dims, *v = a.s[2].dims;
	const char *in_q[] = {"x", a.nm[0], "y", ca1};
	if (!pre_op_list(c, "mul", in_q, 2, &qs, 1, dt, 4, q))
		return false;
	const char *in_k[] = {"x", a.nm[1], "y", ca2};
	if (a2 != 1 && !pre_op_list(c, "mul", in_k, 2, &ks, 1, dt, 4, k))
		return false;
	const char *qh[MAX_HEADS], *kh[MAX_HEADS], *vh[MAX_HEADS], *mh[MAX_HEADS], *oh[MAX_HEADS];
	if (!split_heads(c, qs, q, H, a.cax, a.cnh, dt, base, "q", qh) ||
	    !split_heads(c, ks, k, H, a.cax, a.cnh, dt, base, "k", kh) ||
	    !split_heads(c, a.nm[2], v, H, a.cax, a.cnh, dt, base, "v", vh))
		return false;
	if (a.has_mask && !sdpa_mask(c, &a, mh))
		return false;
	for (int64_t h = 0; h < H; h++)
		if (!(oh[h] = sdpa_head(c, &a, h, qh[h], kh[h], vh[h], a.has_mask ? mh[h] : NULL)))
			return false;
	/* the op itself: concat(values = o_0 .. o_H-1, axis = 1, interleave = false) */
	ali_mil_put_type(&c->layer, "concat");
	ali_mil_put_inputs(&c->layer, "values", oh, (size_t)H);
	ali_mil_put_input(&c->layer, "axis", a.cax);
	ali_mil_put_input(&c->layer, "interleave", a.cf);
	if (!ali_mil_keep_outputs(c, &c->layer, base, false))
		return false;
	if (c->layer.failed || c->pre.failed)
		return ali_mil_say(c, "out of memory");
	c->names[c->n_names++] = c->n->name;
	if (a2 != 1)
		snprintf(c->after, sizeof c->after,
			 "%lld heads: per-head matmuls, softmax on the channel axis, concat (scale as 2 fp16 "
			 "factors, rel %.1e)", (long long)H, err);
	else
		snprintf(c->after, sizeof c->after, "%lld heads: per-head matmuls, softmax on the channel axis, concat",
			 (long long)H);
	return true;
}
