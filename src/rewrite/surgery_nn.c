/* SPDX-License-Identifier: MIT */
/* surgery_nn.c: the NeuralNetwork helpers surgery.c's passes and those of
 * src/rewrite/passes/ share (surgery_int.h): a static shape, a blob's
 * producer and readers, a free layer / blob name, ActivationParams.linear. A file of its own so that the passes
 * do not call back into surgery.c, whose pass table calls them. */
#include "surgery_int.h"
#include "coreml_fields.h"

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

const struct al_node *ali_nn_producer(const struct al_node *n, const char *blob)
{
	const struct al_graph *g = n->owner;
	const struct al_node *found = NULL;
	for (uint32_t k = 0; k < g->n_nodes && &g->nodes[k] != n; k++)
		for (uint32_t j = 0; j < g->nodes[k].n_outputs; j++)
			if (g->nodes[k].outputs[j] && strcmp(g->nodes[k].outputs[j], blob) == 0)
				found = &g->nodes[k];
	return found;
}

/* How many inputs of the layers of g (and of the graphs nested in them) read blob. */
static uint32_t readers(const struct al_graph *g, const char *blob, int depth)
{
	uint32_t r = 0;
	if (!g || depth > 64)
		return 1000; /* too deep to tell: count it as read */
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *m = &g->nodes[k];
		for (uint32_t i = 0; i < m->n_inputs; i++)
			r += m->inputs[i] && strcmp(m->inputs[i], blob) == 0;
		for (uint32_t j = 0; j < m->n_sub; j++)
			r += readers(m->sub[j], blob, depth + 1);
	}
	return r;
}

/* Whether blob is read only by n, once, and is not a model output. */
bool ali_nn_only_reader(const struct al_node *n, const char *blob)
{
	const struct al_submodel *sub = al_src(n)->sub;
	for (uint32_t i = 0; i < sub->n_outputs; i++)
		if (strcmp(sub->outputs[i].name, blob) == 0)
			return false;
	const struct al_graph *root = n->owner;
	while (root->parent)
		root = root->parent;
	uint32_t mine = 0;
	for (uint32_t i = 0; i < n->n_inputs; i++)
		mine += n->inputs[i] && strcmp(n->inputs[i], blob) == 0;
	return mine == 1 && readers(root, blob, 0) == 1;
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

const char *ali_nn_fresh_name(struct al_arena *a, const struct al_node *n, const char *const *names,
			      uint32_t n_names, const char *base, const char *suffix)
{
	for (int k = 0; k < 100; k++) {
		char *nm = k ? ali_arena_printf(a, "%s__%s%d", base, suffix, k) : ali_arena_printf(a, "%s__%s", base, suffix);
		if (!nm)
			return NULL;
		bool mine = false; /* a helper this pass already named */
		for (uint32_t i = 0; i < n_names; i++)
			mine |= strcmp(names[i], nm) == 0;
		if (!mine && !ali_nn_name_taken(n, nm))
			return nm;
	}
	return NULL;
}

const char *ali_nn_fresh(struct al_mil_pass *c, const char *base, const char *suffix)
{
	return ali_nn_fresh_name(&c->s->arena, c->n, c->names, c->n_names, base, suffix);
}

/* One new NeuralNetwork layer (name, inputs, outputs, its params in field): c->layer when
 * last (the layer rewritten), else a `layers` field before it; named in c->names. */
bool ali_nn_emit(struct al_mil_pass *c, bool last, const char *name, const char *const *ins, uint32_t n_in,
		 const char *const *outs, uint32_t n_out, uint32_t field, const struct al_buf *prm)
{
	if (!name)
		return ali_mil_say(c, "no free name for a new layer");
	if (c->n_names >= AL_PASS_MAX_NAMES)
		return ali_mil_say(c, "more than %d new layers", AL_PASS_MAX_NAMES);
	struct al_buf l = {0};
	ali_buf_str(&l, AL_PB_NeuralNetworkLayer_name, name);
	for (uint32_t i = 0; i < n_in; i++)
		ali_buf_str(&l, AL_PB_NeuralNetworkLayer_input, ins[i]);
	for (uint32_t i = 0; i < n_out; i++)
		ali_buf_str(&l, AL_PB_NeuralNetworkLayer_output, outs[i]);
	ali_buf_len(&l, field, prm ? prm->p : NULL, prm ? prm->n : 0);
	if (last)
		ali_buf_put(&c->layer, l.p, l.n);
	else
		ali_buf_len(&c->pre, AL_PB_NeuralNetwork_layers, l.p, l.n);
	c->pre.failed |= l.failed || (prm && prm->failed);
	ali_buf_free(&l);
	c->names[c->n_names++] = name;
	return !c->pre.failed && !c->layer.failed ? true : ali_mil_say(c, "out of memory");
}

void ali_nn_linear_params(struct al_buf *act, float alpha)
{
	struct al_buf lin = {0};
	ali_buf_float(&lin, AL_PB_ActivationLinear_alpha, alpha);
	/* beta -0.0: a * x + (-0.0) == a * x for every x, -0.0 included */
	ali_buf_float(&lin, AL_PB_ActivationLinear_beta, -0.0f);
	ali_buf_len(act, AL_PB_ActivationParams_linear, lin.p, lin.n);
	if (lin.failed)
		act->failed = true;
	ali_buf_free(&lin);
}
