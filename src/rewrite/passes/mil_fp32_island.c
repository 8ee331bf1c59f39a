/* SPDX-License-Identifier: MIT */
/* mil_fp32_island.c: mil-fp32-island (a row of AL_PASSES in surgery.c; docs/surgery.md;
 * tests/pass_mil_fp32_island.sh).
 *   match:   cast fp16 -> fp32, then elementwise fp32 ops of the top-level block reading only
 *            island values, ending in casts back to fp16
 *   rewrite: the casts -> identities, the ops' outputs typed fp16
 *   proves:  approximate: the ops then round to fp16 (--allow approximate) */
#include "passes.h"

#include <stdio.h>
#include <string.h>

/* fp32 islands -> fp16:
 * cast(fp16 -> fp32), then fp32 ops, then cast(fp32 -> fp16): the fp32 ops run
 * off the ANE (ANE029) and the casts cost two switches. Run in fp16 instead,
 * the casts become identities and the ops' outputs are typed fp16
 * (approximate: the ops then round to fp16). Only islands whose ops are
 * elementwise ones from ISLAND_OPS reading nothing but island values (an fp32
 * constant would need its values converted), all in the top-level block, none
 * a block output, each ending in casts back to fp16. */

static const int ISLAND_OPS[] = {
	AL_MILK_relu, AL_MILK_sigmoid, AL_MILK_tanh, AL_MILK_abs, AL_MILK_square, AL_MILK_exp, AL_MILK_sqrt,
	AL_MILK_rsqrt, AL_MILK_sin, AL_MILK_cos, AL_MILK_erf, AL_MILK_softplus, AL_MILK_add, AL_MILK_sub,
	AL_MILK_mul, AL_MILK_maximum, AL_MILK_minimum, AL_MILK_real_div,
};
#define MAX_ISLAND 64

static bool island_op(const struct al_node *n)
{
	for (size_t i = 0; i < sizeof ISLAND_OPS / sizeof ISLAND_OPS[0]; i++)
		if (n->kind == ISLAND_OPS[i])
			return true;
	return false;
}

/* The cast `n` from `from` to `to` (dtypes), its x bound to a name: that name. */
static const char *cast_of(struct al_mil_pass *c, const struct al_node *n, int from, int to)
{
	al_span xb;
	const struct al_ttype *in;
	if (n->kind != AL_MILK_cast || n->n_outputs != 1 || !n->out_types ||
	    n->out_types[0].dtype != to || !(in = ali_mil_param_type(n, "x")) || in->dtype != from ||
	    ali_mil_param_binding(n, "x", 0, &xb) != 1)
		return NULL;
	return ali_arena_strndup(&c->s->arena, xb.p, xb.n);
}

static bool in_set(const char *const *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], name) == 0)
			return true;
	return false;
}

/* An identity op replacing cast `n` (x -> its output), output typed fp16. */
static bool identity_of(struct al_mil_pass *c, const struct al_node *n, const char *x,
			struct al_buf *op)
{
	al_span nvt, val;
	if (!ali_mil_first_output(al_src(n)->msg, &nvt, NULL, NULL))
		return ali_mil_say(c, "'%s' has no output type", n->outputs[0]);
	ali_mil_put_type(op, "identity");
	ali_mil_put_input(op, "x", x);
	if (!ali_mil_put_output_retyped(op, nvt, AL_DT_FP16))
		return ali_mil_say(c, "the output type of '%s' is not a tensor type", n->outputs[0]);
	if (ali_mil_attr(n, "name", &val))
		ali_mil_put_attr(op, "name", val.p, val.n);
	return !op->failed || ali_mil_say(c, "out of memory");
}

bool ali_pass_mil_island(struct al_mil_pass *c)
{
	const struct al_node *n = c->n;
	if (!n->owner || !cast_of(c, n, AL_DT_FP16, AL_DT_FP32))
		return c->why[0] = '\0', false; /* not the start of an island: not a candidate */
	if (!ali_mil_op_ok(c))
		return false;
	const struct al_graph *g = n->owner;
	const struct al_submodel *sub = c->src->sub;
	if (g->depth != 0)
		return ali_mil_say(c, "inside a nested block");
	for (uint32_t o = 0; o < sub->n_outputs; o++)
		if (strcmp(sub->outputs[o].name, n->outputs[0]) == 0)
			return c->why[0] = '\0', false; /* a model output cast: mil-io-fp16's */
	/* grow the island from the cast's output, in op order (a block is topological) */
	const char *vals[MAX_ISLAND];
	const struct al_node *ops[MAX_ISLAND], *exits[MAX_ISLAND];
	size_t nv = 0, no = 0, ne = 0;
	vals[nv++] = n->outputs[0];
	uint32_t start = (uint32_t)(n - g->nodes);
	for (uint32_t k = start + 1; k < g->n_nodes; k++) {
		const struct al_node *r = &g->nodes[k];
		bool reads = false;
		for (uint32_t i = 0; i < r->n_inputs && !reads; i++)
			reads = r->inputs[i] && in_set(vals, nv, r->inputs[i]);
		if (!reads)
			continue;
		const char *x = cast_of(c, r, AL_DT_FP32, AL_DT_FP16);
		if (x && in_set(vals, nv, x)) {
			if (ne == MAX_ISLAND)
				return ali_mil_say(c, "more than %d casts back to fp16", MAX_ISLAND);
			exits[ne++] = r;
			continue;
		}
		if (!island_op(r) || r->n_outputs != 1 || !r->out_types || r->out_types[0].dtype != AL_DT_FP32)
			return ali_mil_say(c, "'%s' (%s) reads the fp32 value of the island", r->name ? r->name : "?",
				   r->type ? r->type : "?");
		for (uint32_t i = 0; i < r->n_inputs; i++)
			if (r->inputs[i] && !in_set(vals, nv, r->inputs[i]))
				return ali_mil_say(c, "'%s' (%s) also reads '%s', which is not fp16 before the island",
					   r->name ? r->name : "?", r->type, r->inputs[i]);
		if (nv == MAX_ISLAND || no == MAX_ISLAND)
			return ali_mil_say(c, "an island of more than %d ops", MAX_ISLAND);
		ops[no++] = r;
		vals[nv++] = r->outputs[0];
	}
	if (!ne)
		return ali_mil_say(c, "the fp32 values never go back to fp16");
	for (size_t i = 0; i < nv; i++) {
		for (uint32_t o = 0; o < sub->n_outputs; o++)
			if (strcmp(sub->outputs[o].name, vals[i]) == 0)
				return ali_mil_say(c, "'%s' is a model output", vals[i]);
		uint32_t top = 0;
		for (uint32_t k = 0; k < g->n_nodes; k++)
			for (uint32_t j = 0; j < g->nodes[k].n_inputs; j++)
				top += g->nodes[k].inputs[j] && strcmp(g->nodes[k].inputs[j], vals[i]) == 0;
		if (ali_mil_readers(g, vals[i], 0) != top)
			return ali_mil_say(c, "'%s' is read inside a nested block", vals[i]);
	}
	if (c->s->opts && c->s->opts->allow < AL_EQ_APPROXIMATE) { /* reported, nothing built */
		snprintf(c->after, sizeof c->after, "identity; %zu op%s and %zu cast%s back run in fp16", no,
			 no == 1 ? "" : "s", ne, ne == 1 ? "" : "s");
		return true;
	}
	/* the cast up becomes this op's new payload; the rest are splices, made
	 * only once every new payload is built (a pass that says no leaves none) */
	const char *x = cast_of(c, n, AL_DT_FP16, AL_DT_FP32);
	if (!identity_of(c, n, x, &c->layer))
		return false;
	struct al_buf bufs[2 * MAX_ISLAND];
	al_span at[2 * MAX_ISLAND], in_msg[2 * MAX_ISLAND];
	size_t nb = 0;
	bool ok = true;
	memset(bufs, 0, sizeof bufs);
	for (size_t i = 0; i < no && ok; i++) {
		al_span msg = al_src(ops[i])->msg, nvt;
		size_t a, b;
		ok = ali_mil_first_output(msg, &nvt, &a, &b) && ali_mil_put_output_retyped(&bufs[nb], nvt, AL_DT_FP16);
		if (ok) {
			in_msg[nb] = msg;
			at[nb++] = (al_span){msg.p + a, b - a};
		} else {
			ali_mil_say(c, "the output type of '%s' is not a tensor type", ops[i]->outputs[0]);
		}
	}
	for (size_t i = 0; i < ne && ok; i++) {
		const char *ex = cast_of(c, exits[i], AL_DT_FP32, AL_DT_FP16);
		ok = ex && identity_of(c, exits[i], ex, &bufs[nb]);
		in_msg[nb] = al_src(exits[i])->msg;
		at[nb] = in_msg[nb];
		nb++;
	}
	enum al_status st = AL_OK;
	for (size_t i = 0; i < nb && ok; i++)
		ok = !bufs[i].failed || ali_mil_say(c, "out of memory");
	for (size_t i = 0; i < nb && ok && st == AL_OK; i++)
		st = ali_splice_replace(c->s->sp, in_msg[i], at[i].p, at[i].n, bufs[i].p, bufs[i].n);
	for (size_t i = 0; i < nb; i++)
		ali_buf_free(&bufs[i]);
	if (!ok)
		return false;
	if (st != AL_OK)
		return ali_mil_say(c, "the island could not be rewritten (%s)", al_status_str(st));
	c->names[c->n_names++] = n->name;
	for (size_t i = 0; i < no && c->n_names < 16; i++)
		c->names[c->n_names++] = ops[i]->name;
	snprintf(c->after, sizeof c->after, "identity; %zu op%s and %zu cast%s back run in fp16", no,
		 no == 1 ? "" : "s", ne, ne == 1 ? "" : "s");
	return true;
}
