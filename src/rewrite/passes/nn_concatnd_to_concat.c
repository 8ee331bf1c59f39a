/* SPDX-License-Identifier: MIT */
/* nn_concatnd_to_concat.c: the pass concatnd-to-concat
 * (its row in surgery.c's pass table; docs/surgery.md).
 * Match:   a top-level concatND without interleave of 2+ static inputs of one rank 3-5,
 *          on the channel axis (-3).
 * Rewrite: the same layer with ConcatLayerParams.
 * Proves:  exact: the same copies. */
#include "nn_layer.h"
#include "coreml_fields.h"

#include <stdio.h>
#include <string.h>

/* concatND along axis rank-3 of equal-rank inputs is the legacy channel concat. */
bool ali_pass_nn_concatnd(struct al_mil_pass *c)
{
	if (!ali_nn_top_level(c))
		return false;
	uint64_t v;
	int64_t axis = pb_get_varint(c->src->params, AL_PB_ConcatNDLayerParams_axis, &v) ? (int64_t)v : 0;
	if (pb_get_varint(c->src->params, AL_PB_ConcatNDLayerParams_interleave, &v) && v)
		return ali_mil_say(c, "interleave is set");
	if (c->n->n_inputs < 2)
		return ali_mil_say(c, "%u inputs", c->n->n_inputs);
	int rank = -1;
	for (uint32_t i = 0; i < c->n->n_inputs; i++) {
		const struct al_shape *s = ali_node_in_shape(c->n, i);
		if (!ali_nn_shape_static(s))
			return ali_mil_say(c, "input %u shape not known statically", i);
		if (rank >= 0 && s->rank != rank)
			return ali_mil_say(c, "inputs of different ranks");
		rank = s->rank;
	}
	if (rank < 3 || rank > 5)
		return ali_mil_say(c, "rank %d (concat takes ranks 3 to 5)", rank);
	int64_t ax = axis < 0 ? axis + rank : axis;
	if (ax != rank - 3)
		return ali_mil_say(c, "axis %lld is not the channel axis (-3) of rank-%d inputs", (long long)axis, rank);
	struct al_buf empty = {0};
	if (!ali_nn_rebuild_layer(c, F_CONCAT, &empty, NULL, 0))
		return false;
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "concat");
	return true;
}
