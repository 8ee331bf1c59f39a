/* SPDX-License-Identifier: MIT */
/* surgery_nn.c: the NeuralNetwork helpers surgery.c's passes and those of
 * src/rewrite/passes/ share (surgery_int.h): a static shape, a free layer /
 * blob name, ActivationParams.linear. A file of its own so that the passes
 * do not call back into surgery.c, whose pass table calls them. */
#include "surgery_int.h"

#include <string.h>

bool ali_nn_shape_static(const struct al_shape *s)
{
	if (!s || s->rank < 0 || s->rank > AL_SHAPE_MAX_RANK || s->flex)
		return false;
	for (int i = 0; i < s->rank; i++)
		if (s->dims[i] < 0)
			return false;
	return true;
}

bool ali_nn_name_taken(const struct al_node *n, const char *name)
{
	const struct al_submodel *sub = al_src(n)->sub;
	for (uint32_t i = 0; i < sub->n_inputs; i++)
		if (strcmp(sub->inputs[i].name, name) == 0)
			return true;
	const struct al_graph *g = n->owner;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *m = &g->nodes[k];
		if (m->name && strcmp(m->name, name) == 0)
			return true;
		for (uint32_t j = 0; j < m->n_outputs; j++)
			if (strcmp(m->outputs[j], name) == 0)
				return true;
	}
	return false;
}

const char *ali_nn_fresh(struct al_mil_pass *c, const char *base, const char *suffix)
{
	for (int k = 0; k < 100; k++) {
		char *nm = k ? ali_arena_printf(&c->s->arena, "%s__%s%d", base, suffix, k)
			     : ali_arena_printf(&c->s->arena, "%s__%s", base, suffix);
		if (!nm)
			return NULL;
		bool mine = false; /* a helper this pass already named */
		for (uint32_t i = 0; i < c->n_names; i++)
			mine |= strcmp(c->names[i], nm) == 0;
		if (!mine && !ali_nn_name_taken(c->n, nm))
			return nm;
	}
	return NULL;
}

void ali_nn_linear_params(struct al_buf *act, float alpha)
{
	struct al_buf lin = {0};
	ali_buf_float(&lin, 1, alpha);
	ali_buf_float(&lin, 2, -0.0f); /* a * x + (-0.0) == a * x for every x, -0.0 included */
	ali_buf_len(act, 5, lin.p, lin.n); /* ActivationParams.linear = 5 */
	if (lin.failed)
		act->failed = true;
	ali_buf_free(&lin);
}
