/* SPDX-License-Identifier: MIT */
/* nn_maxpool_cascade.c: the pass maxpool-cascade
 * (its row in surgery.c's pass table; docs/surgery.md).
 * Match:   a top-level max pooling, not global, VALID padding of zero amounts, kernel
 *          > 13 (<= 1024) on an axis.
 * Rewrite: a cascade of stride-1 max pools of kernels <= 13, the last with the
 *          layer's stride.
 * Proves:  exact: max over K == max over K1 then K2 windows when K1 + K2 - 1 = K. */
#include "nn_layer.h"
#include "coreml_fields.h"

#include <stdio.h>
#include <string.h>

#define POOL(field) AL_PB_PoolingLayerParams_##field

/* max over a K window == max over K1 then over K2 windows when K1 + K2 - 1 = K
 * (the first with stride 1, the last with the layer's stride), no padding. */

bool ali_pass_nn_maxpool(struct al_mil_pass *c)
{
	if (!ali_nn_top_level(c))
		return false;
	al_span p = c->src->params, valid;
	uint64_t v, ks[4] = {3, 3}, st[4] = {1, 1};
	if (pb_get_varint(p, POOL(type), &v) && v != 0)
		return ali_mil_say(c, "%s pooling (only max decomposes exactly)", v == 1 ? "average" : "L2");
	if (pb_get_varint(p, POOL(globalPooling), &v) && v)
		return ali_mil_say(c, "global pooling");
	if (pb_has(p, POOL(same)) || pb_has(p, POOL(includeLastPixel)) || !pb_get_bytes(p, POOL(valid), &valid))
		return ali_mil_say(c, "padding is not valid (same / includeLastPixel change the windows)");
	if (!ali_nn_zero_padding(valid))
		return ali_mil_say(c, "valid padding with non-zero amounts");
	if (pb_has(p, POOL(kernelSize)) && pb_get_varints(p, POOL(kernelSize), ks, 4) != 2)
		return ali_mil_say(c, "kernelSize is not [H, W]");
	if (pb_has(p, POOL(stride)) && pb_get_varints(p, POOL(stride), st, 4) != 2)
		return ali_mil_say(c, "stride is not [H, W]");
	if (ks[0] <= 13 && ks[1] <= 13)
		return ali_mil_say(c, "kernel %llux%llu already <= 13", (unsigned long long)ks[0],
			   (unsigned long long)ks[1]);
	if (ks[0] == 0 || ks[1] == 0 || ks[0] > 1024 || ks[1] > 1024)
		return ali_mil_say(c, "kernel %llux%llu out of range", (unsigned long long)ks[0],
			   (unsigned long long)ks[1]);
	if (c->n->n_inputs != 1)
		return ali_mil_say(c, "%u inputs", c->n->n_inputs);
	uint64_t rest[2] = {ks[0] - 1, ks[1] - 1}; /* sum of (k_i - 1) still to cover */
	int steps = (int)(((rest[0] > rest[1] ? rest[0] : rest[1]) + 11) / 12);
	const char *prev = c->n->inputs[0];
	char desc[96] = "";
	size_t dl = 0;
	for (int i = 0; i < steps; i++) {
		uint64_t k[2];
		for (int a = 0; a < 2; a++) {
			uint64_t take = rest[a] > 12 ? 12 : rest[a];
			k[a] = take + 1;
			rest[a] -= take;
		}
		if (dl < sizeof desc)
			dl += (size_t)snprintf(desc + dl, sizeof desc - dl, "%s%llux%llu", i ? " + " : "",
					       (unsigned long long)k[0], (unsigned long long)k[1]);
		struct al_buf pp = {0};
		if (i < steps - 1) {
			uint64_t one[2] = {1, 1};
			ali_buf_packed(&pp, POOL(kernelSize), k, 2);
			ali_buf_packed(&pp, POOL(stride), one, 2);
			ali_buf_len(&pp, POOL(valid), NULL, 0);
		} else {
			/* the layer's own params with the last kernel */
			struct pb_iter it;
			struct pb_field f;
			size_t start;
			pb_iter_init(&it, p);
			while ((start = it.pos, pb_next(&it, &f)))
				if (f.num != POOL(kernelSize))
					ali_buf_put(&pp, p.p + start, it.pos - start);
			ali_buf_packed(&pp, POOL(kernelSize), k, 2);
			if (it.err) {
				ali_buf_free(&pp);
				return ali_mil_say(c, "the pooling message could not be re-read");
			}
		}
		if (!ali_nn_chain_step(c, i == steps - 1, i == 0, "pool", F_POOLING, &pp, &prev))
			return false;
	}
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "max pools %s (stride %llux%llu on the last)", desc,
		 (unsigned long long)st[0], (unsigned long long)st[1]);
	return true;
}
