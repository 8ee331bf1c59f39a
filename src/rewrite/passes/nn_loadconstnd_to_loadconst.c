/* SPDX-License-Identifier: MIT */
/* nn_loadconstnd_to_loadconst.c: the pass loadconstnd-to-loadconst
 * (its row in surgery.c's pass table; docs/surgery.md).
 * Match:   a loadConstantND of shape [1, 1, C, H, W] whose only reader does not take it in
 *          (mulb-scalar-to-linear, mulb-const-to-scale, divb-const-to-reciprocal).
 * Rewrite: the same layer as loadConstant [C, H, W] (its other params kept).
 * Proves:  exact: loadConstant's result is the rank-5 [1, 1, C, H, W] of the same values. */
#include "nn_layer.h"
#include "coreml_fields.h"

#include <stdio.h>
#include <string.h>

/* Whether a pass of m (the only reader of c's constant) would take the constant
 * into m's own layer and delete c's layer, whatever --allow says: then c's
 * layer must stay as it is (two edits of one layer would overlap). */
static bool takes_in(struct al_mil_pass *c, const struct al_node *m)
{
	bool (*const fns[3])(struct al_mil_pass *) = {ali_pass_nn_mulb_scalar, ali_pass_nn_mulb_const,
						     ali_pass_nn_divb_const};
	bool divide = m->kind == AL_NNK_divideBroadcastable, takes = false;
	for (int i = divide ? 2 : 0; i < (divide ? 3 : 2) && !takes; i++) {
		struct al_mil_pass r = {.s = c->s, .n = m, .src = al_src(m)};
		takes = r.src && fns[i](&r) && r.drop.p == c->src->msg.p;
		ali_buf_free(&r.pre);
		ali_buf_free(&r.layer);
	}
	return takes;
}

/* loadConstantND of shape [1,1,C,H,W] is loadConstant [C,H,W]: the interpreter
 * (and the format) give loadConstant a rank-5 [1,1,C,H,W] result, so any other
 * rank would change the ranks its consumers see. */
bool ali_pass_nn_lcnd(struct al_mil_pass *c)
{
	if (!ali_nn_top_level(c))
		return false;
	uint64_t sh[6];
	long k = pb_get_varints(c->src->params, AL_PB_LoadConstantNDLayerParams_shape, sh, 6);
	if (k < 1 || k > 5)
		return ali_mil_say(c, "shape of %ld dimensions", k);
	char s[96] = "";
	size_t sl = 0;
	for (long i = 0; i < k && sl < sizeof s; i++)
		sl += (size_t)snprintf(s + sl, sizeof s - sl, "%s%llu", i ? "," : "", (unsigned long long)sh[i]);
	if (k != 5 || sh[0] != 1 || sh[1] != 1)
		return ali_mil_say(c, "shape [%s]: loadConstant's result is rank 5 [1,1,C,H,W], so its consumers "
			   "would see another rank (rank-5 [1,1,C,H,W] constants only)", s);
	if (c->n->n_outputs != 1 || !c->n->outputs[0])
		return ali_mil_say(c, "%u outputs", c->n->n_outputs);
	const struct al_node *m = NULL; /* the first top-level layer reading it */
	for (uint32_t k2 = 0; k2 < c->n->owner->n_nodes && !m; k2++)
		for (uint32_t i = 0; i < c->n->owner->nodes[k2].n_inputs && !m; i++)
			if (c->n->owner->nodes[k2].inputs[i] &&
			    strcmp(c->n->owner->nodes[k2].inputs[i], c->n->outputs[0]) == 0)
				m = &c->n->owner->nodes[k2];
	if (m && m->type &&
	    (m->kind == AL_NNK_multiplyBroadcastable || m->kind == AL_NNK_divideBroadcastable) &&
	    ali_nn_only_reader(m, c->n->outputs[0]) && takes_in(c, m))
		return ali_mil_say(c, "its only reader '%s' (%s) takes the constant into its own layer",
			   m->name ? m->name : "?", m->type);
	struct al_buf p = {0};
	struct pb_iter it;
	struct pb_field f;
	size_t start;
	ali_buf_packed(&p, AL_PB_LoadConstantLayerParams_shape, sh + 2, 3);
	pb_iter_init(&it, c->src->params);
	while ((start = it.pos, pb_next(&it, &f)))
		if (f.num != AL_PB_LoadConstantNDLayerParams_shape)
			ali_buf_put(&p, c->src->params.p + start, it.pos - start);
	bool ok = !it.err && !p.failed && ali_nn_rebuild_layer(c, F_LOAD_CONSTANT, &p, NULL, 0);
	ali_buf_free(&p);
	if (!ok)
		return c->why[0] ? false : ali_mil_say(c, "the layer message could not be re-read");
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "loadConstant [%llu,%llu,%llu]", (unsigned long long)sh[2],
		 (unsigned long long)sh[3], (unsigned long long)sh[4]);
	return true;
}
