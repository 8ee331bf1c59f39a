/* SPDX-License-Identifier: MIT */
/* mil_upsample_chain.c: mil-upsample-x2-chain (a row of AL_PASSES in surgery.c; docs/surgery.md;
 * tests/pass_mil_upsample_x2_chain.sh).
 *   match:   upsample_nearest_neighbor by powers of two (x4, x8 ... up to 64) on x of a static
 *            shape
 *   rewrite: a chain of x2 upsample_nearest_neighbor ops, the last under the op's own name
 *   proves:  exact: nearest-neighbour by 4 is nearest-neighbour by 2 twice (the same values copied) */
#include "passes.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* upsample_nearest_neighbor by 2^a x 2^b (a or b >= 2) runs off the ANE of the
 * H13-era devices (ANE027: a factor of 2 only). Nearest-neighbour by 4 is
 * nearest-neighbour by 2 twice: output pixel (i, j) reads input (i / 4, j / 4)
 * = ((i / 2) / 2, (j / 2) / 2), so the chain copies the same values (exact), as
 * upsample-x2-chain does for NeuralNetwork layers. */

static int log2_of(double f)
{
	if (f != floor(f) || f < 1 || f > 64)
		return -1;
	uint64_t u = (uint64_t)f;
	if (u & (u - 1))
		return -1;
	int k = 0;
	while (u > 1)
		u >>= 1, k++;
	return k;
}

bool ali_pass_mil_upsample(struct al_mil_pass *c)
{
	if (!ali_mil_op_ok(c))
		return false;
	double fh, fw;
	if (!ali_mil_const_scalar(c, "scale_factor_height", &fh, true, 1) ||
	    !ali_mil_const_scalar(c, "scale_factor_width", &fw, true, 1))
		return false;
	int eh = log2_of(fh), ew = log2_of(fw);
	if (eh < 0 || ew < 0)
		return ali_mil_say(c, "scale factors %gx%g are not powers of two up to 64", fh, fw);
	int steps = eh > ew ? eh : ew;
	if (steps < 2)
		return ali_mil_say(c, "scale factors %gx%g need no chain", fh, fw);
	al_span xb;
	if (ali_mil_param_binding(c->n, "x", 0, &xb) != 1)
		return ali_mil_say(c, "'x' is not a named value");
	struct al_shape xs;
	if (!ali_mil_param_shape(c->n, "x", &xs) || !ali_mil_static_shape(&xs) || xs.rank < 3)
		return ali_mil_say(c, "the shape of 'x' is not static (rank 3 or more)");
	const struct al_ttype *ft = ali_mil_param_type(c->n, "scale_factor_height");
	int sdt = ft && ft->kind == 0 && ft->dtype == AL_DT_INT32 ? AL_DT_INT32 : AL_DT_FP32;
	int dt = ali_mil_out_dtype(c);
	const char *base = c->n->outputs[0];
	const char *prev = ali_arena_strndup(&c->s->arena, xb.p, xb.n);
	if (!prev)
		return ali_mil_say(c, "out of memory");
	int64_t dims[AL_SHAPE_MAX_RANK];
	memcpy(dims, xs.dims, (size_t)xs.rank * sizeof dims[0]);
	for (int i = 0; i < steps; i++) {
		double h = i < eh ? 2 : 1, w = i < ew ? 2 : 1;
		const char *shn = ali_mil_fresh(c, base, "x2_h"), *swn = ali_mil_fresh(c, base, "x2_w");
		if (!shn || !swn || !ali_mil_pre_scalar(c, shn, sdt, h) || !ali_mil_pre_scalar(c, swn, sdt, w))
			return ali_mil_say(c, "no free value name");
		dims[xs.rank - 2] *= (int64_t)h;
		dims[xs.rank - 1] *= (int64_t)w;
		struct al_buf *op = &c->layer, tmp = {0};
		const char *out = NULL;
		if (i < steps - 1) {
			op = &tmp;
			if (!(out = ali_mil_fresh(c, base, "x2")))
				return ali_mil_say(c, "no free value name");
		}
		ali_mil_put_type(op, "upsample_nearest_neighbor");
		ali_mil_put_input(op, "x", prev);
		ali_mil_put_input(op, "scale_factor_height", shn);
		ali_mil_put_input(op, "scale_factor_width", swn);
		if (out) {
			ali_mil_put_output(op, out, dt, xs.rank, dims);
			struct al_buf v = {0};
			ali_mil_put_string_value(&v, out);
			ali_mil_put_attr(op, "name", v.p, v.n);
			op->failed |= v.failed;
			ali_buf_free(&v);
			ali_mil_pre_put(c, op);
			ali_buf_free(&tmp);
			if (c->n_names < 14)
				c->names[c->n_names++] = out;
			prev = out;
			continue;
		}
		if (!ali_mil_keep_outputs(c, op, base, false))
			return false;
	}
	if (c->layer.failed || c->pre.failed)
		return ali_mil_say(c, "out of memory");
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "%d upsample_nearest_neighbor x2 ops", steps);
	return true;
}
