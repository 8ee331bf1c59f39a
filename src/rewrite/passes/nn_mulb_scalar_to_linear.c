/* SPDX-License-Identifier: MIT */
/* nn_mulb_scalar_to_linear.c: the pass mulb-scalar-to-linear
 * (its row in surgery.c's pass table; docs/surgery.md).
 * Match:   a top-level multiplyBroadcastable of x by a one-value loadConstant(ND), the
 *          result of x's shape.
 * Rewrite: activation linear(alpha c, beta -0.0) on x; the constant deleted when
 *          nothing else reads it (nn_const_operand.c).
 * Proves:  exact: x * c == c * x + (-0.0) bit for bit. */
#include "nn_layer.h"

#include <stdio.h>
#include <string.h>

/* x * c == c * x == alpha * x + (-0.0) bit for bit (IEEE multiplication
 * commutes; adding -0.0 keeps every value, -0.0 included; +0.0 would turn a
 * -0.0 product into +0.0). */
bool ali_pass_nn_mulb_scalar(struct al_mil_pass *c)
{
	struct ali_nn_constop o;
	if (!ali_nn_const_operand(c, false, &o))
		return false;
	if (o.cv.count != 1)
		return ali_mil_say(c, "the constant '%s' has %zu values (not a scalar)",
			   o.cv.p->name ? o.cv.p->name : "?", o.cv.count);
	struct al_buf act = {0};
	ali_nn_linear_params(&act, o.cv.v[0]);
	char what[96];
	snprintf(what, sizeof what, "activation linear(alpha %.9g, beta -0.0)", (double)o.cv.v[0]);
	bool ok = !act.failed && ali_nn_finish_const(c, &o, F_ACTIVATION, &act, what);
	ali_buf_free(&act);
	if (!ok && !c->why[0])
		ali_mil_say(c, "out of memory");
	return ok;
}
