/* SPDX-License-Identifier: MIT */
/* nn_upsample_x2_chain.c: the pass upsample-x2-chain
 * (its row in surgery.c's pass table; docs/surgery.md).
 * Match:   a top-level nearest upsample of one input by 2^a x 2^b (a or b >= 2, <= 6).
 * Rewrite: a chain of x2 (or x1 on an axis already done) upsamples, the last the layer.
 * Proves:  exact: nearest-neighbour copies compose. */
#include "nn_layer.h"
#include "coreml_fields.h"

#include <stdio.h>
#include <string.h>

/* Nearest-neighbour upsampling by 2^a x 2^b is a chain of x2 (or x1) steps. */
bool ali_pass_nn_upsample(struct al_mil_pass *c)
{
	if (!ali_nn_top_level(c))
		return false;
	al_span p = c->src->params;
	uint64_t v, sf[4] = {1, 1};
	if (pb_get_varint(p, AL_PB_UpsampleLayerParams_mode, &v) && v != 0)
		return ali_mil_say(c, "mode is bilinear (only nearest is exact as a chain)");
	if (pb_has(p, AL_PB_UpsampleLayerParams_fractionalScalingFactor))
		return ali_mil_say(c, "fractional scaling factor");
	if (pb_get_varint(p, AL_PB_UpsampleLayerParams_linearUpsampleMode, &v) && v != 0)
		return ali_mil_say(c, "linearUpsampleMode is set");
	long k = pb_get_varints(p, AL_PB_UpsampleLayerParams_scalingFactor, sf, 4);
	if (k != 2)
		return ali_mil_say(c, "scalingFactor has %ld values", k);
	int eh = ali_nn_log2_exact(sf[0]), ew = ali_nn_log2_exact(sf[1]);
	if (eh < 0 || ew < 0 || eh > 6 || ew > 6)
		return ali_mil_say(c, "scalingFactor %llux%llu is not a power of two", (unsigned long long)sf[0],
			   (unsigned long long)sf[1]);
	int steps = eh > ew ? eh : ew;
	if (steps < 2)
		return ali_mil_say(c, "scalingFactor %llux%llu needs no chain", (unsigned long long)sf[0],
			   (unsigned long long)sf[1]);
	const char *prev = c->n->inputs && c->n->n_inputs == 1 ? c->n->inputs[0] : NULL;
	if (!prev)
		return ali_mil_say(c, "%u inputs", c->n->n_inputs);
	for (int i = 0; i < steps; i++) {
		struct al_buf up = {0};
		uint64_t f2[2] = {i < eh ? 2u : 1u, i < ew ? 2u : 1u};
		ali_buf_packed(&up, 1, f2, 2);
		if (!ali_nn_chain_step(c, i == steps - 1, i == 0, "x2", F_UPSAMPLE, &up, &prev))
			return false;
	}
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "%d upsample x2 layers", steps);
	return true;
}
