/* SPDX-License-Identifier: MIT */
/* mil_linear_split.c: mil-linear-split-cap (a row of AL_PASSES in surgery.c; docs/surgery.md;
 * tests/pass_mil_linear_split_cap.sh).
 *   match:   linear with more than 16384 output features (an LM head, ANE061), its weight (and
 *            bias) blobs in weight.bin
 *   rewrite: at most 8 linear slices under the axis cap (their weight rows copied into new blobs) +
 *            concat on the last axis
 *   proves:  reassociate: each output is the same dot product over the same K terms, in the
 *            kernel's own order */
#include "passes.h"

#include <stdio.h>

/* linear over the axis cap:
 * A linear whose output features N exceed the smallest ANE axis cap (16384
 * through H15; evidence R4, rule ANE061: an LM head over a 24k-50k vocabulary)
 * runs off the ANE. Split its weight rows (and bias) into S slices of at most
 * the cap, one linear per slice, and concat them on the last axis: y[.., n] is
 * the same dot product over the same K terms, computed by a linear op of the
 * same K; a matrix kernel's order of adding them may follow the matrix size (its
 * tiling), so the class is reassociate (bit-identical in the interpreter on the
 * fixtures, not promised). The slices' weights are new
 * blobs: the rows are contiguous in the row-major [N, K] blob, copied as bytes
 * (never decoded). The concat still has N on its last axis and may stay off
 * the ANE (it copies; the matmul work is in the slices): the rewrite names it
 * in stays_off so that its fallback does not drop the rewrite. */

#define AXIS_CAP 16384                    /* the smallest per-axis cap (H13-H15) */
#define MAX_SPLIT_BYTES (1024ull << 20)   /* weight bytes copied into new blobs */

bool ali_pass_mil_linear_split(struct al_mil_pass *c)
{
	if (!ali_mil_op_ok(c))
		return false;
	const struct al_shape *o = c->n->out_shapes ? &c->n->out_shapes[0] : NULL;
	bool known = o && o->rank >= 1 && o->rank <= AL_SHAPE_MAX_RANK;
	for (int i = 0; known && i < o->rank; i++)
		known = o->dims[i] >= 0;
	/* a symbolic leading axis (a flexible sequence length) is fine: the slices
	 * declare it unknown, as the linear does; the features must be static */
	if (!known || (o->flex >> (o->rank - 1) & 1u))
		return ali_mil_say(c, "the output's feature count is not known statically");
	int r = o->rank;
	int64_t N = o->dims[r - 1];
	if (N <= AXIS_CAP)
		return ali_mil_say(c, "%lld output features fit the ANE's axis cap (%d)", (long long)N, AXIS_CAP);
	al_span xb;
	if (ali_mil_param_binding(c->n, "x", 0, &xb) != 1)
		return ali_mil_say(c, "'x' is not a named value");
	al_span wd, bd = {0};
	int wdt, bdt = 0;
	struct al_mil_value wv, bv;
	if (!ali_mil_param_blob(c, "weight", &wd, &wdt, &wv))
		return false;
	if (wv.rank != 2 || wv.dims[0] != N || wv.dims[1] < 1)
		return ali_mil_say(c, "the weight is not [%lld, K]", (long long)N);
	int64_t K = wv.dims[1];
	size_t esz = wdt == AL_DT_FP16 ? 2 : 4;
	if ((uint64_t)N * (uint64_t)K * esz != wd.n)
		return ali_mil_say(c, "the weight blob holds %zu bytes, not %lld x %lld values", wd.n, (long long)N,
			   (long long)K);
	if (wd.n > MAX_SPLIT_BYTES)
		return ali_mil_say(c, "the weight is %zu MB: more than %llu MB would be copied into new blobs",
			   wd.n >> 20, MAX_SPLIT_BYTES >> 20);
	bool has_bias = ali_mil_param_present(c->n, "bias");
	if (has_bias) {
		if (!ali_mil_param_blob(c, "bias", &bd, &bdt, &bv))
			return false;
		size_t bsz = bdt == AL_DT_FP16 ? 2 : 4;
		if (bv.rank != 1 || bv.dims[0] != N || bd.n != (uint64_t)N * bsz)
			return ali_mil_say(c, "the bias is not [%lld]", (long long)N);
	}
	int64_t S = (N + AXIS_CAP - 1) / AXIS_CAP, chunk = (N + S - 1) / S;
	if (S > 8)
		return ali_mil_say(c, "%lld output features: more than 8 slices of %d", (long long)N, AXIS_CAP);
	if (c->s->opts && c->s->opts->allow < AL_EQ_REASSOCIATE) { /* reported, nothing built */
		snprintf(c->after, sizeof c->after, "%lld linear slices of <= %lld features + concat", (long long)S,
			 (long long)chunk);
		return true;
	}
	char *xname = ali_arena_strndup(&c->s->arena, xb.p, xb.n);
	const char *base = c->n->outputs[0];
	const char **parts = ali_arena_array(&c->s->arena, (size_t)S, sizeof *parts);
	if (!xname || !parts)
		return ali_mil_say(c, "out of memory");
	int dt = ali_mil_out_dtype(c);
	for (int64_t i = 0; i < S; i++) {
		int64_t a = i * chunk, n = i == S - 1 ? N - a : chunk;
		char sfx[32];
		snprintf(sfx, sizeof sfx, "w%lld", (long long)i);
		const char *wn = ali_mil_fresh(c, base, sfx);
		snprintf(sfx, sizeof sfx, "b%lld", (long long)i);
		const char *bn = has_bias ? ali_mil_fresh(c, base, sfx) : "";
		snprintf(sfx, sizeof sfx, "part%lld", (long long)i);
		const char *pn = ali_mil_fresh(c, base, sfx);
		if (!wn || !bn || !pn)
			return ali_mil_say(c, "no free value name");
		int64_t wdims[2] = {n, K}, bdims[1] = {n};
		if (!ali_mil_pre_blob_const(c, wn, wdt, 2, wdims, wd.p + (size_t)a * (size_t)K * esz,
				    (size_t)n * (size_t)K * esz))
			return false;
		size_t bsz = bdt == AL_DT_FP16 ? 2 : 4;
		if (has_bias && !ali_mil_pre_blob_const(c, bn, bdt, 1, bdims, bd.p + (size_t)a * bsz, (size_t)n * bsz))
			return false;
		struct al_buf op = {0};
		ali_mil_put_type(&op, "linear");
		ali_mil_put_input(&op, "x", xname);
		ali_mil_put_input(&op, "weight", wn);
		if (has_bias)
			ali_mil_put_input(&op, "bias", bn);
		int64_t od[AL_SHAPE_MAX_RANK];
		for (int k = 0; k < r; k++)
			od[k] = o->flex >> k & 1u ? -1 : o->dims[k];
		od[r - 1] = n;
		ali_mil_put_output(&op, pn, dt, r, od);
		struct al_buf v = {0};
		ali_mil_put_string_value(&v, pn);
		ali_mil_put_attr(&op, "name", v.p, v.n);
		op.failed |= v.failed;
		ali_buf_free(&v);
		ali_mil_pre_put(c, &op);
		ali_buf_free(&op);
		parts[i] = pn;
		if (c->n_names < 14)
			c->names[c->n_names++] = pn;
	}
	const char *an = ali_mil_fresh(c, base, "axis"), *in = ali_mil_fresh(c, base, "interleave");
	if (!an || !in || !ali_mil_pre_scalar(c, an, AL_DT_INT32, -1) || !ali_mil_pre_scalar(c, in, AL_DT_BOOL, 0))
		return ali_mil_say(c, "no free value name");
	/* the op itself: concat(values = parts, axis = -1, interleave = false) */
	ali_mil_put_type(&c->layer, "concat");
	ali_mil_put_inputs(&c->layer, "values", parts, (size_t)S);
	ali_mil_put_input(&c->layer, "axis", an);
	ali_mil_put_input(&c->layer, "interleave", in);
	if (!ali_mil_keep_outputs(c, &c->layer, base, false))
		return false;
	if (c->layer.failed || c->pre.failed)
		return ali_mil_say(c, "out of memory");
	c->names[c->n_names++] = c->n->name;
	c->stays_off = c->n->name;
	snprintf(c->after, sizeof c->after, "%lld linear slices of <= %lld features (new blobs) + concat",
		 (long long)S, (long long)chunk);
	return true;
}
