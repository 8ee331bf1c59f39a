/* SPDX-License-Identifier: MIT */
/* nn_splitnd_to_slices.c: the pass splitnd-to-slices
 * (its row in surgery.c's pass table; docs/surgery.md).
 * Match:   a top-level splitND on the channel axis into 2-14 unequal parts.
 * Rewrite: one slice layer per part (helpers before it, the layer itself the last).
 * Proves:  exact: the same copies. */
#include "nn_layer.h"
#include "coreml_fields.h"

#include <stdio.h>
#include <string.h>

/* splitND of the channel axis into unequal parts n_0, n_1, ...: part i is the
 * legacy slice of channels [a_i, a_i + n_i) (axis CHANNEL, stride 1), the same
 * copies. Helpers `<layer>__slice`, ...; the layer itself the last slice. */
bool ali_pass_nn_splitnd_slices(struct al_mil_pass *c)
{
	int64_t C;
	if (!ali_nn_splitnd_of_channels(c, &C))
		return false;
	uint32_t n = c->n->n_outputs;
	uint64_t sz[16];
	long k = pb_get_varints(c->src->params, AL_PB_SplitNDLayerParams_splitSizes, sz, 16);
	if (n < 2 || n > 14 || k != (long)n)
		return ali_mil_say(c, "%u outputs, %ld splitSizes (2-14 parts with their sizes)", n, k);
	uint64_t sum = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!sz[i])
			return ali_mil_say(c, "an empty part");
		sum += sz[i];
	}
	if (sum != (uint64_t)C)
		return ali_mil_say(c, "split sizes add up to %llu, not the %lld channels", (unsigned long long)sum,
			   (long long)C);
	uint64_t a = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct al_buf prm = {0}, l = {0};
		ali_buf_uint(&prm, 1, a);         /* startIndex */
		ali_buf_uint(&prm, 2, a + sz[i]); /* endIndex, exclusive */
		ali_buf_uint(&prm, 3, 1);         /* stride */
		ali_buf_uint(&prm, 4, 0);         /* axis CHANNEL_AXIS */
		const char *nm = i == n - 1 ? c->n->name : ali_nn_fresh(c, c->n->name, i ? "slice_" : "slice");
		if (nm) {
			ali_buf_str(&l, L_NAME, nm);
			ali_buf_str(&l, L_INPUT, c->n->inputs[0]);
			ali_buf_str(&l, L_OUTPUT, c->n->outputs[i]);
			ali_buf_len(&l, F_SLICE, prm.p, prm.n);
			if (i < n - 1) {
				ali_buf_len(&c->pre, NN_LAYERS, l.p, l.n);
				if (c->n_names < 15)
					c->names[c->n_names++] = nm;
			} else {
				ali_buf_put(&c->layer, l.p, l.n);
			}
			c->pre.failed |= l.failed || prm.failed;
		}
		ali_buf_free(&prm);
		ali_buf_free(&l);
		if (!nm)
			return ali_mil_say(c, "no free name");
		a += sz[i];
	}
	if (c->pre.failed || c->layer.failed)
		return ali_mil_say(c, "out of memory");
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "%u slice layers on the channel axis", n);
	return true;
}
