/* SPDX-License-Identifier: MIT */
/* mil_fill_like_const.c: mil-fill-like-to-const (a row of AL_PASSES in surgery.c; docs/surgery.md;
 * tests/pass_mil_fill_like_to_const.sh).
 *   match:   fill_like whose ref_tensor has a static shape and whose value is an immediate constant
 *   rewrite: a const of that shape holding the value, the same output name
 *   proves:  exact: one value, exact in the output dtype, repeated */
#include "passes.h"

#include <stdio.h>

bool ali_pass_mil_fill_like(struct al_mil_pass *c)
{
	if (!ali_mil_op_ok(c))
		return false;
	struct al_shape s;
	if (!ali_mil_param_shape(c->n, "ref_tensor", &s))
		return ali_mil_say(c, "the shape of 'ref_tensor' is not known");
	if (!ali_mil_static_shape(&s)) {
		char sh[96];
		ali_shape_format(&s, sh, sizeof sh);
		return ali_mil_say(c, "'ref_tensor' has shape %s, not static: the result is dynamic", sh);
	}
	double val;
	if (!ali_mil_const_scalar(c, "value", &val, true, 0.0))
		return false;
	int dt = ali_mil_out_dtype(c);
	if (!ali_mil_dtype_ok(c, dt))
		return false;
	return ali_mil_fold_filled(c, dt, s.rank, s.dims, val);
}

