/* SPDX-License-Identifier: MIT */
/* nn_global_avgpool_valid_to_same.c: the pass global-avgpool-valid-to-same
 * (its row in surgery.c's pass table; docs/surgery.md).
 * Match:   a top-level global average pooling with VALID padding of zero amounts.
 * Rewrite: the same pooling with SAME padding.
 * Proves:  exact: a global pool averages its whole input whatever the padding says. */
#include "nn_layer.h"
#include "coreml_fields.h"

#include <stdio.h>
#include <string.h>

/* A global average pool averages its whole input whatever the padding says
 * (the window is the input, the output 1x1, no padding is added), so VALID ->
 * SAME changes nothing computed; with VALID Core ML of iOS 13/14 built it as a
 * plain pooling kernel that the ANE refused above 13 wide, and pulled the layer
 * before it off the ANE too (ANE056, hollance/neural-engine #1: SAME worked). */
bool ali_pass_nn_global_avg(struct al_mil_pass *c)
{
	if (!ali_nn_top_level(c))
		return false;
	al_span p = c->src->params, valid;
	uint64_t v;
	if (!(pb_get_varint(p, AL_PB_PoolingLayerParams_type, &v) && v == 1))
		return ali_mil_say(c, "not average pooling");
	if (!(pb_get_varint(p, AL_PB_PoolingLayerParams_globalPooling, &v) && v))
		return ali_mil_say(c, "not global pooling");
	if (!pb_get_bytes(p, AL_PB_PoolingLayerParams_valid, &valid))
		return ali_mil_say(c, "padding is not VALID");
	if (!ali_nn_zero_padding(valid))
		return ali_mil_say(c, "valid padding with non-zero amounts");
	struct al_buf prm = {0};
	struct pb_iter it;
	struct pb_field f;
	size_t start;
	pb_iter_init(&it, p);
	while ((start = it.pos, pb_next(&it, &f)))
		if (f.num != AL_PB_PoolingLayerParams_valid)
			ali_buf_put(&prm, p.p + start, it.pos - start);
	static const uint8_t none[1];
	ali_buf_len(&prm, AL_PB_PoolingLayerParams_same, none, 0); /* same = SamePadding{} (asymmetryMode default) */
	bool ok = !it.err && ali_nn_rebuild_layer(c, F_POOLING, &prm, NULL, 0);
	ali_buf_free(&prm);
	if (!ok)
		return c->why[0] ? false : ali_mil_say(c, "the pooling message could not be re-read");
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "global average pooling with SAME padding");
	return true;
}
