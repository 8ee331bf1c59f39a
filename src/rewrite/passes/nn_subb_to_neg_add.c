/* SPDX-License-Identifier: MIT */
/* nn_subb_to_neg_add.c: the pass subb-to-neg-add
 * (its row in surgery.c's pass table; docs/surgery.md).
 * Match:   a top-level subtractBroadcastable a - b of legacy broadcast shapes.
 * Rewrite: activation linear(alpha -1, beta -0.0) on b (a new layer before it) + the
 *          layer as add of a and the negation.
 * Proves:  exact: a - b == a + (-b) in IEEE arithmetic (see below for the -0.0). */
#include "nn_layer.h"
#include "coreml_fields.h"

#include <stdio.h>
#include <string.h>

/* a - b == a + (-b) exactly in IEEE arithmetic (negation is exact). The
 * negation is linear(alpha -1, beta -0.0): with beta +0.0 it would give +0.0
 * for b = +0.0, and a + (+0.0) is +0.0 where a - (+0.0) is -0.0 (a = -0.0). */
bool ali_pass_nn_subb(struct al_mil_pass *c)
{
	if (!ali_nn_top_level(c))
		return false;
	if (c->n->n_inputs != 2)
		return ali_mil_say(c, "%u inputs (2 expected)", c->n->n_inputs);
	if (!ali_nn_legacy_broadcast(c, ali_node_in_shape(c->n, 0), ali_node_in_shape(c->n, 1)))
		return false;
	const char *neg = ali_nn_fresh(c, c->n->name, "neg");
	if (!neg)
		return ali_mil_say(c, "no free name for the negation");
	struct al_buf lin = {0}, act = {0}, empty = {0};
	ali_buf_float(&lin, AL_PB_ActivationLinear_alpha, -1.0f);
	/* beta -0: -1 * (+0) + (+0) would be +0, not -0, for a - (+0) with a = -0 */
	ali_buf_float(&lin, AL_PB_ActivationLinear_beta, -0.0f);
	ali_buf_len(&act, AL_PB_ActivationParams_linear, lin.p, lin.n);
	const char *in_b = c->n->inputs[1];
	ali_nn_new_layer(c, neg, &in_b, 1, neg, F_ACTIVATION, &act);
	ali_buf_free(&lin);
	ali_buf_free(&act);
	const char *ins[2] = {c->n->inputs[0], neg};
	if (!ali_nn_rebuild_layer(c, F_ADD, &empty, ins, 2))
		return false;
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "activation linear(-1, -0.0) '%s' + add", neg);
	return true;
}
