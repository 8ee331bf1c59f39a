/* SPDX-License-Identifier: MIT */
/* nn_splitnd_to_split.c: the pass splitnd-to-split
 * (its row in surgery.c's pass table; docs/surgery.md).
 * Match:   a top-level splitND of one static input of rank 3-5 on the channel axis into
 *          2+ equal parts.
 * Rewrite: the same layer with SplitLayerParams (nOutputs).
 * Proves:  exact: the same copies. */
#include "nn_layer.h"
#include "coreml_fields.h"

#include <stdio.h>
#include <string.h>

/* splitND along the channel axis (rank-3) into equal parts is the legacy split
 * (nOutputs parts of axis -3): the same copies. */
bool ali_pass_nn_splitnd(struct al_mil_pass *c)
{
	int64_t C;
	if (!ali_nn_splitnd_of_channels(c, &C))
		return false;
	uint32_t n = c->n->n_outputs;
	if (n < 2)
		return ali_mil_say(c, "%u outputs (split makes 2 or more)", n);
	uint64_t sz[64], v;
	long k = pb_get_varints(c->src->params, AL_PB_SplitNDLayerParams_splitSizes, sz, 64);
	if (k < 0 || k > 64)
		return ali_mil_say(c, "splitSizes could not be read");
	if (k > 0) {
		if ((uint32_t)k != n)
			return ali_mil_say(c, "%ld splitSizes for %u outputs", k, n);
		for (long i = 1; i < k; i++)
			if (sz[i] != sz[0])
				return ali_mil_say(c, "unequal split sizes (%llu, %llu): split makes equal parts",
					   (unsigned long long)sz[0], (unsigned long long)sz[i]);
	} else if (pb_get_varint(c->src->params, AL_PB_SplitNDLayerParams_numSplits, &v) && v && v != n) {
		return ali_mil_say(c, "numSplits %llu for %u outputs", (unsigned long long)v, n);
	}
	if (C % n)
		return ali_mil_say(c, "%lld channels do not split into %u equal parts", (long long)C, n);
	struct al_buf prm = {0};
	ali_buf_uint(&prm, 1, n);
	bool ok = ali_nn_rebuild_layer(c, F_SPLIT, &prm, NULL, 0);
	ali_buf_free(&prm);
	if (!ok)
		return false;
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "split into %u", n);
	return true;
}
