/* SPDX-License-Identifier: MIT */
/* nn_mulb_const_to_scale.c: the pass mulb-const-to-scale
 * (its row in surgery.c's pass table; docs/surgery.md).
 * Match:   a top-level multiplyBroadcastable of x by a loadConstant(ND) of a scale shape
 *          (1, C, 1xHxW or CxHxW of x's last three axes).
 * Rewrite: a scale layer, gamma = the constant; the constant deleted when nothing else
 *          reads it.
 * Proves:  exact: the scale layer computes x * gamma. */
#include "nn_layer.h"

#include <stdio.h>
#include <string.h>

/* x * gamma with gamma broadcast over x's last three axes is the scale layer
 * without bias (the interpreter computes x * gamma; multiplication commutes). */
bool ali_pass_nn_mulb_const(struct al_mil_pass *c)
{
	struct ali_nn_constop o;
	uint64_t shp[3];
	size_t n_shp;
	if (!ali_nn_const_operand(c, false, &o) || !ali_nn_scale_shape(c, &o, shp, &n_shp))
		return false;
	struct al_buf sp = {0};
	ali_nn_scale_params(&sp, shp, n_shp, o.cv.v, o.cv.count);
	bool ok = !sp.failed && ali_nn_finish_const(c, &o, F_SCALE, &sp, "scale (gamma = the constant)");
	ali_buf_free(&sp);
	if (!ok && !c->why[0])
		ali_mil_say(c, "out of memory");
	return ok;
}
