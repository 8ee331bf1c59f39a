/* SPDX-License-Identifier: MIT */
/* nn_concatnd_interleave_to_split_concat.c: the pass concatnd-interleave-to-split-concat
 * (its row in surgery.c's pass table; docs/surgery.md).
 * Match:   a top-level concatND with interleave (a channel shuffle) of 2+ inputs of one
 *          static shape, rank 3-5, on the channel axis, at most 1024 channels in all.
 * Rewrite: one split per input into single channels + the layer as a concat of them
 *          in interleaved order.
 * Proves:  exact: every value is copied, none computed. */
#include "nn_layer.h"
#include "coreml_fields.h"

#include <stdio.h>
#include <string.h>

/* The channel shuffle: concatND(interleave) of n inputs of C channels along the
 * channel axis, y[i*n + k] = x_k[i], is pure data movement: split each input
 * into C single channels (legacy split, equal parts) and concat (legacy, axis -3)
 * the 1-channel blobs in the order x_0[0], x_1[0], ..., x_0[1], ...: every value
 * is copied, none computed, so the result is bit-identical (NaN payloads and
 * signed zeros included). A 1x1 convolution by a 0/1 permutation matrix would
 * also run on the ANE but is not exact: 0 x inf = NaN, and -0 + 0 = +0. */
#define MAX_SHUFFLE 1024 /* blobs the concat reads */
bool ali_pass_nn_concatnd_interleave(struct al_mil_pass *c)
{
	if (!ali_nn_top_level(c))
		return false;
	uint64_t v;
	int64_t axis = pb_get_varint(c->src->params, AL_PB_ConcatNDLayerParams_axis, &v) ? (int64_t)v : 0;
	if (!(pb_get_varint(c->src->params, AL_PB_ConcatNDLayerParams_interleave, &v) && v))
		return ali_mil_say(c, "interleave is not set");
	uint32_t n = c->n->n_inputs;
	if (n < 2)
		return ali_mil_say(c, "%u inputs", n);
	int rank = ali_nn_static_rank(c);
	if (rank < 0)
		return false;
	int64_t ax = axis < 0 ? axis + rank : axis;
	if (ax != rank - 3)
		return ali_mil_say(c, "axis %lld is not the channel axis (-3) of rank-%d inputs", (long long)axis, rank);
	const struct al_shape *s0 = ali_node_in_shape(c->n, 0);
	for (uint32_t i = 1; i < n; i++)
		if (memcmp(ali_node_in_shape(c->n, i)->dims, s0->dims, (size_t)rank * sizeof s0->dims[0]))
			return ali_mil_say(c, "inputs of different shapes (interleave takes one shape)");
	int64_t C = s0->dims[rank - 3];
	if (C < 1 || (uint64_t)C * n > MAX_SHUFFLE)
		return ali_mil_say(c, "%u inputs of %lld channels: more than %d single-channel blobs", n, (long long)C,
			   MAX_SHUFFLE);
	const char **parts = ali_arena_array(&c->s->arena, (size_t)C * n, sizeof *parts);
	if (!parts)
		return ali_mil_say(c, "out of memory");
	for (uint32_t k = 0; k < n; k++) {
		const char *sp = ali_nn_fresh(c, c->n->name, k ? "split_" : "split");
		if (!sp)
			return ali_mil_say(c, "no free name for a split");
		/* a split layer: input k, C outputs <layer>__il<k>_<i> */
		struct al_buf l = {0}, prm = {0};
		ali_buf_uint(&prm, 1, (uint64_t)C); /* SplitLayerParams.nOutputs */
		ali_buf_str(&l, L_NAME, sp);
		ali_buf_str(&l, L_INPUT, c->n->inputs[k]);
		for (int64_t i = 0; i < C; i++) {
			char *nm = ali_arena_printf(&c->s->arena, "%s__il%u_%lld", c->n->name, k, (long long)i);
			if (!nm || ali_nn_name_taken(c->n, nm)) {
				ali_buf_free(&l);
				ali_buf_free(&prm);
				return ali_mil_say(c, "the helper name '%.80s' is taken", nm ? nm : "?");
			}
			parts[i * n + k] = nm;
			ali_buf_str(&l, L_OUTPUT, nm);
		}
		ali_buf_len(&l, F_SPLIT, prm.p, prm.n);
		if (l.failed || prm.failed)
			c->pre.failed = true;
		else
			ali_buf_len(&c->pre, NN_LAYERS, l.p, l.n);
		ali_buf_free(&l);
		ali_buf_free(&prm);
		if (c->n_names < 15)
			c->names[c->n_names++] = sp;
	}
	struct al_buf empty = {0};
	if (!ali_nn_rebuild_layer(c, F_CONCAT, &empty, parts, (uint32_t)(C * n)))
		return false;
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "%u split x%lld + concat of %lld channels in interleaved order",
		 n, (long long)C, (long long)(C * n));
	return true;
}
