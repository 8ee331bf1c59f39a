/* SPDX-License-Identifier: MIT */
/* nn_const_expand.c: expanddims-const-to-loadconst. coremltools writes a
 * recurrent layer's zero initial state as a rank-2 loadConstantND [1, H]
 * (ANE006) read by an expandDims to [1, 1, H, 1, 1] (ANE007): loadConstant,
 * a Core ML 2 layer whose result is rank 5 [1, 1, C, H, W], writes that
 * directly. When the expandDims' result is rank 5 with leading 1, 1 and the
 * constant is read by it alone (not a model output), the expandDims becomes a
 * loadConstant [C, H, W] of the same WeightParams bytes and the loadConstantND
 * is deleted: the same values in the same order (exact). Its row in surgery.c's
 * pass table; run through its mil_pass. docs/surgery.md. */
#include "passes.h"
#include "coreml_fields.h"

#include <string.h>

enum { L_NAME = 1, L_OUTPUT = 3, F_LOAD_CONSTANT = 290 };

bool ali_pass_nn_expand_const(struct al_mil_pass *c)
{
	if (!c->src || !c->src->sub || c->src->sub->world != AL_WORLD_NN)
		return false;
	if (c->n->owner->depth != 0)
		return ali_mil_say(c, "layer in a nested network (branch / loop body)");
	if (!c->src->msg.p || c->n->n_inputs != 1 || c->n->n_outputs != 1 || !c->n->outputs[0])
		return ali_mil_say(c, "%u inputs, %u outputs", c->n->n_inputs, c->n->n_outputs);
	const struct al_node *k = ali_nn_producer(c->n, c->n->inputs[0]);
	if (!k || !k->type || k->kind != AL_NNK_loadConstantND)
		return ali_mil_say(c, "its input is not a loadConstantND's");
	const struct al_node_src *ks = al_src(k);
	al_span data;
	if (!ks || !ks->msg.p || !ks->params.p || !pb_get_bytes(ks->params, AL_PB_LoadConstantNDLayerParams_data, &data))
		return ali_mil_say(c, "the loadConstantND message could not be read");
	if (!ali_nn_only_reader(c->n, c->n->inputs[0]))
		return ali_mil_say(c, "the constant '%s' has other readers (or is a model output)", c->n->inputs[0]);
	const struct al_shape *o = c->n->out_shapes ? &c->n->out_shapes[0] : NULL;
	if (!ali_nn_shape_static(o) || o->rank != 5 || o->dims[0] != 1 || o->dims[1] != 1)
		return ali_mil_say(c, "its result is not a static rank-5 [1, 1, C, H, W]");
	/* the values: as many as C x H x W (the constant's shape, any rank, holds them in order) */
	uint64_t sh[6], count = 1;
	long r = pb_get_varints(ks->params, AL_PB_LoadConstantNDLayerParams_shape, sh, 6);
	if (r < 1 || r > 5)
		return ali_mil_say(c, "a constant of %ld dimensions", r);
	for (long i = 0; i < r; i++) {
		if (sh[i] > (1u << 30) || (count *= sh[i]) > (UINT64_C(1) << 32))
			return ali_mil_say(c, "a constant of more than 2^32 values");
	}
	uint64_t chw_n = 1;
	for (int i = 2; i < 5; i++) {
		if ((uint64_t)o->dims[i] > (1u << 30) || (chw_n *= (uint64_t)o->dims[i]) > (UINT64_C(1) << 32))
			return ali_mil_say(c, "a result of more than 2^32 values");
	}
	if (count != chw_n)
		return ali_mil_say(c, "the constant's shape does not hold C x H x W values");
	struct al_buf prm = {0};
	uint64_t chw[3] = {(uint64_t)o->dims[2], (uint64_t)o->dims[3], (uint64_t)o->dims[4]};
	ali_buf_packed(&prm, AL_PB_LoadConstantLayerParams_shape, chw, 3);
	ali_buf_len(&prm, AL_PB_LoadConstantLayerParams_data, data.p, data.n);
	ali_buf_str(&c->layer, L_NAME, c->n->name ? c->n->name : c->n->outputs[0]);
	ali_buf_str(&c->layer, L_OUTPUT, c->n->outputs[0]);
	ali_buf_len(&c->layer, F_LOAD_CONSTANT, prm.p, prm.n);
	c->layer.failed |= prm.failed;
	ali_buf_free(&prm);
	if (c->layer.failed)
		return ali_mil_say(c, "out of memory");
	c->drop = ks->msg;
	c->names[c->n_names++] = c->n->name ? c->n->name : c->n->outputs[0];
	snprintf(c->after, sizeof c->after, "loadConstant [%lld,%lld,%lld] (constant layer '%s' removed)",
		 (long long)chw[0], (long long)chw[1], (long long)chw[2], k->name ? k->name : "?");
	return true;
}
