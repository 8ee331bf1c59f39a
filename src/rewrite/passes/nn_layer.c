/* SPDX-License-Identifier: MIT */
/* nn_layer.c: what the NeuralNetwork layer passes of this folder share (nn_layer.h):
 * a layer rebuilt with new params / inputs, a new layer before it, a chain of
 * layers replacing it, the legacy broadcast shapes, the top-level and static-rank
 * checks, a zero ValidPadding, the exact log2, the binary elementwise rewrite and
 * the channel-axis splitND conditions. */
#include "nn_layer.h"
#include "coreml_fields.h"

#include <string.h>

/* The new payload of c->n: its fields in order, the params field replaced by
 * field `pfield` with payload params, and (when inputs) its inputs replaced
 * (dropping the inputTensor ranks, which described the old inputs). */
bool ali_nn_rebuild_layer(struct al_mil_pass *c, uint32_t pfield, const struct al_buf *params,
			  const char *const *inputs, uint32_t n_inputs)
{
	struct pb_iter it;
	struct pb_field f;
	bool inputs_done = false, params_done = false;
	pb_iter_init(&it, c->src->msg);
	size_t start = 0;
	while ((start = it.pos, pb_next(&it, &f))) {
		const uint8_t *raw = c->src->msg.p + start;
		size_t rawn = it.pos - start;
		if (f.wire == PB_LEN && f.data.p == c->src->params.p && f.data.n == c->src->params.n) {
			ali_buf_len(&c->layer, pfield, params->p, params->n);
			params_done = true;
		} else if (inputs && f.num == L_INPUT) {
			if (!inputs_done)
				for (uint32_t i = 0; i < n_inputs; i++)
					ali_buf_str(&c->layer, L_INPUT, inputs[i]);
			inputs_done = true;
		} else if (inputs && f.num == L_INPUT_TENSOR) {
			continue;
		} else {
			ali_buf_put(&c->layer, raw, rawn);
		}
	}
	if (it.err || !params_done)
		return ali_mil_say(c, "the layer message could not be re-read");
	if (inputs && !inputs_done)
		return ali_mil_say(c, "the layer has no inputs");
	return !c->layer.failed || ali_mil_say(c, "out of memory");
}

/* A whole `layers` field holding a new layer: name, inputs, output, params. */
void ali_nn_new_layer(struct al_mil_pass *c, const char *name, const char *const *inputs, uint32_t n_in,
		      const char *output, uint32_t pfield, const struct al_buf *params)
{
	struct al_buf l = {0};
	ali_buf_str(&l, L_NAME, name);
	for (uint32_t i = 0; i < n_in; i++)
		ali_buf_str(&l, L_INPUT, inputs[i]);
	ali_buf_str(&l, L_OUTPUT, output);
	ali_buf_len(&l, pfield, params->p, params->n);
	if (l.failed)
		c->pre.failed = true;
	else
		ali_buf_len(&c->pre, NN_LAYERS, l.p, l.n);
	ali_buf_free(&l);
	if (c->n_names < 15)
		c->names[c->n_names++] = name;
}

/* One step of a chain that replaces a layer (upsample x2 chain, pooling
 * cascades): before the last step a new layer `<layer>__<stem>`,
 * `<layer>__<stem>_1`, ... reading *prev; the last step is the layer itself,
 * rebuilt to read *prev. Frees params. */
bool ali_nn_chain_step(struct al_mil_pass *c, bool last, bool first, const char *stem, uint32_t pfield,
		       struct al_buf *params, const char **prev)
{
	bool ok = true;
	if (!last) {
		char suffix[16];
		snprintf(suffix, sizeof suffix, first ? "%s" : "%s_", stem);
		const char *nm = ali_nn_fresh(c, c->n->name, suffix);
		if (!nm) {
			ok = ali_mil_say(c, "no free name");
		} else {
			ali_nn_new_layer(c, nm, prev, 1, nm, pfield, params);
			*prev = nm;
		}
	} else {
		ok = ali_nn_rebuild_layer(c, pfield, params, prev, 1);
	}
	ali_buf_free(params);
	return ok;
}

/* Legacy add / multiply broadcast only among [B,1,1,1], [B,C,1,1], [B,1,H,W] and
 * [B,C,H,W]-style shapes (the format facts): equal ranks, equal leading axes,
 * and the smaller operand's (C, H, W) one of 1x1x1, Cx1x1, 1xHxW, CxHxW. */
bool ali_nn_legacy_broadcast(struct al_mil_pass *c, const struct al_shape *a, const struct al_shape *b)
{
	char sa[64], sb[64];
	ali_shape_format(a, sa, sizeof sa);
	ali_shape_format(b, sb, sizeof sb);
	if (!ali_nn_shape_static(a) || !ali_nn_shape_static(b))
		return ali_mil_say(c, "input shapes %s, %s not known statically", sa, sb);
	if (a->rank != b->rank)
		return ali_mil_say(c, "input ranks differ (%s, %s): legacy layers do not broadcast ranks", sa, sb);
	if (a->rank < 1 || a->rank > 5)
		return ali_mil_say(c, "rank %d: legacy layers take ranks 1 to 5", a->rank);
	if (memcmp(a->dims, b->dims, (size_t)a->rank * sizeof a->dims[0]) == 0)
		return true;
	if (a->rank < 3)
		return ali_mil_say(c, "broadcast of %s with %s below rank 3", sa, sb);
	int r = a->rank;
	for (int i = 0; i < r - 3; i++)
		if (a->dims[i] != b->dims[i])
			return ali_mil_say(c, "%s and %s differ in a leading (batch) axis", sa, sb);
	for (int side = 0; side < 2; side++) {
		const struct al_shape *full = side ? b : a, *x = side ? a : b;
		int64_t C = full->dims[r - 3], H = full->dims[r - 2], W = full->dims[r - 1];
		int64_t c3 = x->dims[r - 3], h3 = x->dims[r - 2], w3 = x->dims[r - 1];
		bool cok = c3 == C || c3 == 1, hw_one = h3 == 1 && w3 == 1, hw_full = h3 == H && w3 == W;
		if (cok && (hw_one || hw_full))
			return true;
	}
	return ali_mil_say(c, "%s with %s is not a legacy broadcast (1x1x1, Cx1x1, 1xHxW, CxHxW)", sa, sb);
}

bool ali_nn_top_level(struct al_mil_pass *c)
{
	if (c->n->owner->depth != 0)
		return ali_mil_say(c, "layer in a nested network (branch / loop body)");
	if (!c->src->msg.p || !c->src->params.p)
		return ali_mil_say(c, "no layer message");
	return true;
}

bool ali_nn_elementwise(struct al_mil_pass *c, uint32_t field, const char *to)
{
	if (!ali_nn_top_level(c))
		return false;
	if (c->n->n_inputs != 2)
		return ali_mil_say(c, "%u inputs (2 expected)", c->n->n_inputs);
	if (!ali_nn_legacy_broadcast(c, ali_node_in_shape(c->n, 0), ali_node_in_shape(c->n, 1)))
		return false;
	struct al_buf empty = {0};
	if (!ali_nn_rebuild_layer(c, field, &empty, NULL, 0))
		return false;
	snprintf(c->after, sizeof c->after, "%s", to);
	c->names[c->n_names++] = c->n->name;
	return true;
}

/* Equal-rank inputs of static shape, rank 3-5: the rank, or -1 with c->why. */
int ali_nn_static_rank(struct al_mil_pass *c)
{
	int rank = -1;
	for (uint32_t i = 0; i < c->n->n_inputs; i++) {
		const struct al_shape *s = ali_node_in_shape(c->n, i);
		if (!ali_nn_shape_static(s))
			return ali_mil_say(c, "input %u shape not known statically", i), -1;
		if (rank >= 0 && s->rank != rank)
			return ali_mil_say(c, "inputs of different ranks"), -1;
		rank = s->rank;
	}
	if (rank < 3 || rank > 5)
		return ali_mil_say(c, "rank %d (the legacy layers take ranks 3 to 5)", rank), -1;
	return rank;
}

/* The conditions both splitND passes share: a top-level splitND of one input of
 * static rank, along the channel axis (-3); *C is that axis' extent. */
bool ali_nn_splitnd_of_channels(struct al_mil_pass *c, int64_t *C)
{
	if (!ali_nn_top_level(c))
		return false;
	if (c->n->n_inputs != 1)
		return ali_mil_say(c, "%u inputs", c->n->n_inputs);
	int rank = ali_nn_static_rank(c);
	if (rank < 0)
		return false;
	uint64_t v;
	int64_t axis = pb_get_varint(c->src->params, AL_PB_SplitNDLayerParams_axis, &v) ? (int64_t)v : 0;
	int64_t ax = axis < 0 ? axis + rank : axis;
	if (ax != rank - 3)
		return ali_mil_say(c, "axis %lld is not the channel axis (-3) of a rank-%d input", (long long)axis, rank);
	*C = ali_node_in_shape(c->n, 0)->dims[rank - 3];
	return true;
}

int ali_nn_log2_exact(uint64_t f)
{
	if (f == 0 || (f & (f - 1)))
		return -1;
	int k = 0;
	while (f > 1) {
		f >>= 1;
		k++;
	}
	return k;
}

/* Whether a padding message (ValidPadding) pads nothing. */
bool ali_nn_zero_padding(al_span valid)
{
	al_span border;
	if (!pb_get_bytes(valid, AL_PB_ValidPadding_paddingAmounts, &border))
		return true;
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, border);
	while (pb_next(&it, &f)) {
		if (f.num != AL_PB_BorderAmounts_borderAmounts || f.wire != PB_LEN)
			continue;
		uint64_t v;
		if ((pb_get_varint(f.data, AL_PB_BorderAmounts_EdgeSizes_startEdgeSize, &v) && v) ||
		    (pb_get_varint(f.data, AL_PB_BorderAmounts_EdgeSizes_endEdgeSize, &v) && v))
			return false;
	}
	return it.err == 0;
}
