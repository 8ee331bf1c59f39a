/* SPDX-License-Identifier: MIT */
/* nn_avgpool_cascade.c: the pass avgpool-cascade
 * (its row in surgery.c's pass table; docs/surgery.md).
 * Match:   a top-level average pooling, stride = kernel = 2^k (<= 1024), VALID padding of
 *          zero amounts, kernel > 13 or a stride the ANE refuses.
 * Rewrite: a cascade of 4x4 / 2x2 average pools (stride = kernel), the last the layer.
 * Proves:  reassociate: the same weights 1/K, the sums grouped differently. */
#include "nn_layer.h"
#include "coreml_fields.h"

#include <stdio.h>
#include <string.h>

#define POOL(field) AL_PB_PoolingLayerParams_##field

/* Average pooling over non-overlapping K windows (stride = kernel, no padding)
 * is the average of averages over non-overlapping K1 then K2 windows when
 * K = K1 * K2: every element keeps the weight 1/K, and the output sizes agree
 * (floor(floor(H / K1) / K2) = floor(H / K)). The sums are grouped
 * differently, so the last bits may differ (reassociate). Steps of 4 and 2
 * keep each kernel <= 13 and each stride legal (1, 2 or 4): K must be a power
 * of two. Overlapping windows (stride != kernel) weight elements unequally in
 * any cascade of averages: refused. */
bool ali_pass_nn_avgpool(struct al_mil_pass *c)
{
	if (!ali_nn_top_level(c))
		return false;
	al_span p = c->src->params, valid;
	uint64_t v = 0, ks[4] = {3, 3}, st[4] = {1, 1};
	if (!pb_get_varint(p, POOL(type), &v) || v != 1)
		return ali_mil_say(c, "%s pooling (the cascade is for average pooling)", v == 2 ? "L2" : "max");
	if (pb_get_varint(p, POOL(globalPooling), &v) && v)
		return ali_mil_say(c, "global pooling");
	if (pb_has(p, POOL(same)) || pb_has(p, POOL(includeLastPixel)) || !pb_get_bytes(p, POOL(valid), &valid) ||
	    !ali_nn_zero_padding(valid))
		return ali_mil_say(c, "padding is not valid with zero amounts");
	if (pb_has(p, POOL(kernelSize)) && pb_get_varints(p, POOL(kernelSize), ks, 4) != 2)
		return ali_mil_say(c, "kernelSize is not [H, W]");
	if (pb_has(p, POOL(stride)) && pb_get_varints(p, POOL(stride), st, 4) != 2)
		return ali_mil_say(c, "stride is not [H, W]");
	bool legal_st = (st[0] <= 2 || st[0] == 4) && (st[1] <= 2 || st[1] == 4);
	if (ks[0] <= 13 && ks[1] <= 13 && legal_st)
		return ali_mil_say(c, "kernel %llux%llu <= 13 and stride %llux%llu legal already",
			   (unsigned long long)ks[0], (unsigned long long)ks[1], (unsigned long long)st[0],
			   (unsigned long long)st[1]);
	if (ks[0] != st[0] || ks[1] != st[1])
		return ali_mil_say(c, "stride %llux%llu != kernel %llux%llu: overlapping windows weight elements "
			   "unequally in any cascade of averages", (unsigned long long)st[0],
			   (unsigned long long)st[1], (unsigned long long)ks[0], (unsigned long long)ks[1]);
	int e[2] = {ali_nn_log2_exact(ks[0]), ali_nn_log2_exact(ks[1])};
	if (e[0] < 0 || e[1] < 0 || e[0] > 10 || e[1] > 10)
		return ali_mil_say(c, "kernel %llux%llu is not a power of two up to 1024 (steps of 4 and 2 only)",
			   (unsigned long long)ks[0], (unsigned long long)ks[1]);
	if (c->n->n_inputs != 1 || !c->n->inputs[0])
		return ali_mil_say(c, "%u inputs", c->n->n_inputs);
	const struct al_shape *xs = ali_node_in_shape(c->n, 0);
	if (!ali_nn_shape_static(xs) || xs->rank < 3 || xs->dims[xs->rank - 2] < (int64_t)ks[0] ||
	    xs->dims[xs->rank - 1] < (int64_t)ks[1])
		return ali_mil_say(c, "input shape unknown or smaller than the kernel");
	int steps_a[2] = {(e[0] + 1) / 2, (e[1] + 1) / 2};
	int steps = steps_a[0] > steps_a[1] ? steps_a[0] : steps_a[1];
	const char *prev = c->n->inputs[0];
	char desc[96] = "";
	size_t dl = 0;
	for (int i = 0; i < steps; i++) {
		uint64_t k[2];
		for (int a = 0; a < 2; a++) {
			int take = e[a] >= 2 ? 2 : e[a];
			e[a] -= take;
			k[a] = 1u << take;
		}
		if (dl < sizeof desc)
			dl += (size_t)snprintf(desc + dl, sizeof desc - dl, "%s%llux%llu", i ? " + " : "",
					       (unsigned long long)k[0], (unsigned long long)k[1]);
		struct al_buf pp = {0};
		struct pb_iter it;
		struct pb_field f;
		size_t start;
		pb_iter_init(&it, p);
		while ((start = it.pos, pb_next(&it, &f)))
			if (f.num != POOL(kernelSize) && f.num != POOL(stride))
				ali_buf_put(&pp, p.p + start, it.pos - start);
		ali_buf_packed(&pp, POOL(kernelSize), k, 2);
		ali_buf_packed(&pp, POOL(stride), k, 2);
		if (it.err || pp.failed) {
			ali_buf_free(&pp);
			return ali_mil_say(c, "the pooling message could not be re-read");
		}
		if (!ali_nn_chain_step(c, i == steps - 1, i == 0, "avg", F_POOLING, &pp, &prev))
			return false;
	}
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "average pools %s (stride = kernel)", desc);
	return true;
}
