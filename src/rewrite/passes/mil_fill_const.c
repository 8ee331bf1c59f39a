/* SPDX-License-Identifier: MIT */
/* mil_fill_const.c: mil-fill-to-const (a row of AL_PASSES in surgery.c; docs/surgery.md;
 * tests/pass_mil_fill_to_const.sh).
 *   match:   fill whose shape and value are immediate constants
 *   rewrite: a const of that shape holding the value, the same output name
 *   proves:  exact: one value, exact in the output dtype, repeated */
#include "passes.h"

bool ali_pass_mil_fill(struct al_mil_pass *c)
{
	if (!ali_mil_op_ok(c))
		return false;
	int64_t dims[AL_SHAPE_MAX_RANK + 1];
	long r = ali_mil_param_ints(c->n, "shape", dims, AL_SHAPE_MAX_RANK + 1);
	if (r < 0)
		return ali_mil_not_const(c, "shape");
	if (r == 0 && !ali_mil_param_present(c->n, "shape"))
		return ali_mil_say(c, "'shape' is missing");
	if (r > AL_SHAPE_MAX_RANK)
		return ali_mil_say(c, "a result of rank %ld", r);
	double val;
	if (!ali_mil_const_scalar(c, "value", &val, true, 0.0))
		return false;
	int dt = ali_mil_out_dtype(c);
	if (!ali_mil_dtype_ok(c, dt))
		return false;
	return ali_mil_fold_filled(c, dt, (int)r, dims, val);
}
