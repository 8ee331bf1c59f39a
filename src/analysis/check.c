/* SPDX-License-Identifier: MIT */
/* check.c: al_model_check, the analysis entry point.
 *
 * Path through this file:
 *   al_model_check   al_model_infer_shapes (shape_infer.c: shapes and cost of
 *                    every node), then ali_rules_run (rule_engine.c: a verdict
 *                    per node and the model findings, for one target), then
 *                    place: every node's final unit, from the partition of its
 *                    sub-model (al_model_plan, plan.c: policy auto, no fix
 *                    search, so the check stays linear in the model's size),
 *                    the same placement `plan` prints; then how sure each
 *                    placement is (certainty.c: p_ane and the verdict) */
#include "analysis.h"

static void own_placement(void *ctx, const struct al_node *n)
{
	(void)ctx;
	struct al_verdict *v = (struct al_verdict *)(uintptr_t)&n->verdict;
	v->placed_ane = v->ane;
	v->placed = v->ane ? AL_UNIT_ANE : v->unit;
	v->place = AL_PLACE_VERDICT;
	v->moved_by = NULL;
}

/* The partition rule naming each way the partition moves a node (rules.def:
 * ANE072-076); AL_PLACE_MODEL names the model-level rule itself (al_plan.model_rule). */
static const char *const place_rule_ids[AL_PLACE_COUNT] = {
	[AL_PLACE_GPU_STICKS] = "ANE073", [AL_PLACE_CPU_STICKS] = "ANE074", [AL_PLACE_OWNER] = "ANE075",
	[AL_PLACE_SMALL] = "ANE072",      [AL_PLACE_UNITS] = "ANE076",
};

const struct al_rule *ali_place_rule(enum al_place place, const struct al_rule *model_rule,
				     const al_user_rules *u)
{
	if (place == AL_PLACE_MODEL)
		return model_rule;
	const char *id = (unsigned)place < AL_PLACE_COUNT ? place_rule_ids[place] : NULL;
	if (!id)
		return NULL;
	const struct al_rule *r = u ? al_user_rules_find(u, id) : NULL;
	return r ? r : al_rule_find(id);
}

const struct al_rule *al_place_rule(enum al_place p, const al_user_rules *u)
{
	return ali_place_rule(p, NULL, u);
}

bool ali_verdict_moved(const struct al_verdict *v)
{
	if (v->placed_ane != v->ane)
		return true;
	return !v->ane && (v->unit == AL_UNIT_GPU || v->unit == AL_UNIT_CPU) && v->placed != v->unit;
}

struct certainty_ctx {
	const struct al_submodel *s;
	const struct al_check_opts *o;
};

static void node_certainty(void *ctx, const struct al_node *n)
{
	const struct certainty_ctx *c = ctx;
	ali_certainty((struct al_node *)(uintptr_t)n, c->s, c->o->target, c->o->os);
}

static enum al_status place(al_model *m, const struct al_check_opts *o, al_diags *d)
{
	m->checked_floor_off = !ali_work_floor_on(o); /* decided once: every plan of m reads it */
	m->checked_cu = o->compute_units;
	struct al_plan_opts po = {.target = o->target, .policy = AL_POLICY_AUTO, .no_fixes = true,
				  .os = o->os, .compute_units = o->compute_units};
	for (size_t i = 0; i < m->n_subs; i++) {
		ali_walk_nodes(m->subs[i], own_placement, NULL);
		const struct al_plan *p;
		enum al_status rc = al_model_plan(m, i, &po, &p, d);
		if (rc != AL_OK)
			return rc;
		for (uint32_t k = 0; k < p->n_nodes; k++) {
			struct al_verdict *v = (struct al_verdict *)(uintptr_t)&p->nodes[k]->verdict;
			v->placed = p->unit[k];
			v->placed_ane = p->unit[k] == AL_UNIT_ANE;
			v->place = p->place[k];
			/* every move names a rule: a model-level one, or the partition's
			 * (also where the unit it gives is the verdict's own: ali_verdict_moved) */
			v->moved_by = ali_place_rule(p->place[k], p->model_rule, o->user_rules);
		}
		al_plan_free(p);
		struct certainty_ctx c = {m->subs[i], o};
		ali_walk_nodes(m->subs[i], node_certainty, &c);
	}
	return AL_OK;
}

enum al_status al_model_check(al_model *m, const struct al_check_opts *opts, al_diags *d)
{
	if (!m)
		return AL_E_INVALID_ARG;
	/* a program Core ML would refuse to compile is no model to predict for; the
	 * verdict does not depend on the target or release, so a model checked again
	 * (the deployment range, --target all) is validated once */
	enum al_status rc = m->validated ? AL_OK : al_model_validate(m, d);
	if (rc != AL_OK)
		return rc;
	m->validated = true;
	rc = al_model_infer_shapes(m, d);
	if (rc != AL_OK)
		return rc;
	struct al_check_opts o = {0};
	if (opts)
		o = *opts;
	if (!o.target)
		o.target = al_target_default();
	m->checked = false;
	rc = ali_rules_run(m, &o, d);
	if (rc != AL_OK)
		return rc;
	m->checked = true; /* al_model_plan needs the verdicts */
	rc = place(m, &o, d);
	if (rc != AL_OK)
		m->checked = false;
	return rc;
}
