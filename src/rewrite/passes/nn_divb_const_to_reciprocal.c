/* SPDX-License-Identifier: MIT */
/* nn_divb_const_to_reciprocal.c: the pass divb-const-to-reciprocal
 * (its row in surgery.c's pass table; docs/surgery.md).
 * Match:   a top-level divideBroadcastable of x by a loadConstant(ND) divisor of finite,
 *          non-zero values with normal reciprocals (a scalar or a scale shape).
 * Rewrite: activation linear(1/c) for a scalar, else a scale layer of 1/c.
 * Proves:  reassociate: 1/c rounds once and the product once more. */
#include "nn_layer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* x / c -> x * (1/c): 1/c rounds once and the product once more, so the result
 * may differ from x / c in the last bit (reassociate). c must be finite and
 * non-zero with a normal reciprocal. A scalar becomes a linear activation, any
 * other scale-shaped constant a scale layer. */
bool ali_pass_nn_divb_const(struct al_mil_pass *c)
{
	struct ali_nn_constop o;
	if (!ali_nn_const_operand(c, true, &o))
		return false;
	float *r = ali_arena_array(&c->s->arena, o.cv.count, sizeof *r);
	if (!r)
		return ali_mil_say(c, "out of memory");
	for (size_t i = 0; i < o.cv.count; i++) {
		float v = o.cv.v[i];
		r[i] = 1.0f / v;
		if (!isfinite(v) || v == 0.0f || !isnormal(r[i]))
			return ali_mil_say(c, "the divisor '%s' holds %g at %zu (finite, non-zero values with a normal "
				   "reciprocal only)", o.cv.p->name ? o.cv.p->name : "?", (double)v, i);
	}
	struct al_buf b = {0};
	bool ok;
	if (o.cv.count == 1) {
		ali_nn_linear_params(&b, r[0]);
		char what[96];
		snprintf(what, sizeof what, "activation linear(alpha 1/%.9g, beta -0.0)", (double)o.cv.v[0]);
		ok = !b.failed && ali_nn_finish_const(c, &o, F_ACTIVATION, &b, what);
	} else {
		uint64_t shp[3];
		size_t n_shp;
		if (!ali_nn_scale_shape(c, &o, shp, &n_shp))
			return false;
		ali_nn_scale_params(&b, shp, n_shp, r, o.cv.count);
		ok = !b.failed && ali_nn_finish_const(c, &o, F_SCALE, &b, "scale (gamma = 1 / the constant)");
	}
	ali_buf_free(&b);
	if (!ok && !c->why[0])
		ali_mil_say(c, "out of memory");
	return ok;
}
