/* SPDX-License-Identifier: MIT */
/* report_analyze.c: what a report shows, computed once by its caller before any
 * sink runs. al_report_analyze checks and plans each model for the targets the
 * report shows (the requested one, or with --target all every chip family),
 * keeps each target's verdicts and model findings (a copy: the next check
 * empties them) and its plans, and turns every failure into the item's status
 * and an error. The sinks only read the result (report.c: ali_each_plan,
 * ali_view_verdict) and never link to this file: no sink checks or plans.
 *
 * Path through this file:
 *   al_report_analyze  per loaded model: the analysis and its arena, then
 *                      analyze_item:
 *                        one target: the model's own check (check_for when it
 *                        was not checked; with deployment_range analyze_range:
 *                        check_for per release of the range, record_cell per
 *                        node, the requested check last, then mark_varying),
 *                        then plan_sub per sub-model;
 *                        --target all: index_sub per sub-model, then per target
 *                        check_for (al_model_check), snapshot (copy_verdict per
 *                        node, the findings) and plan_sub (al_model_plan); last,
 *                        check_for with the requested options, so the model is
 *                        left as the caller checked it
 *   al_analysis_free   the plans (al_plan_free), then the arena */
#include "report.h"

#include <stdlib.h>
#include <string.h>

void al_analysis_free(al_analysis *a)
{
	if (!a)
		return;
	for (size_t i = 0; a->views && i < a->n_targets * a->n_subs; i++)
		al_plan_free(a->views[i].plan);
	struct al_arena arena = a->arena;
	ali_arena_free(&arena); /* a itself lives in it */
}

/* ================================================================ snapshots */

struct index_ctx {
	struct graph_slot *graphs;
	uint32_t n, cap;
	const struct al_graph *last;
	bool nomem;
};

static void add_owner(void *vctx, const struct al_node *n)
{
	struct index_ctx *c = vctx;
	if (n->owner == c->last || !n->owner)
		return;
	c->last = n->owner;
	if (c->n == c->cap) {
		uint32_t cap = c->cap ? 2 * c->cap : 16;
		struct graph_slot *g = cap > c->cap ? ali_realloc(c->graphs, (size_t)cap * sizeof *g) : NULL;
		if (!g) {
			c->nomem = true;
			return;
		}
		c->graphs = g;
		c->cap = cap;
	}
	c->graphs[c->n++] = (struct graph_slot){(uintptr_t)n->owner, 0};
}

/* The graphs of s sorted by address, each given n_nodes slots. */
static enum al_status index_sub(struct al_arena *arena, const struct al_submodel *s,
				struct sub_index *ix)
{
	struct index_ctx c = {0};
	ali_walk_nodes(s, add_owner, &c);
	if (c.nomem) {
		ali_free(c.graphs);
		return AL_E_NOMEM;
	}
	if (c.n) /* a pipeline's root has no graph: c.graphs is NULL */
		qsort(c.graphs, c.n, sizeof *c.graphs, ali_graph_slot_cmp);
	uint32_t n = 0;
	uint64_t slots = 0;
	for (uint32_t i = 0; i < c.n; i++) {
		if (n && c.graphs[n - 1].graph == c.graphs[i].graph)
			continue;
		c.graphs[n] = c.graphs[i];
		c.graphs[n].base = (uint32_t)slots;
		slots += ((const struct al_graph *)c.graphs[i].graph)->n_nodes;
		n++;
	}
	ix->graphs = ali_arena_array(arena, n ? n : 1, sizeof *ix->graphs);
	if (!ix->graphs || slots > UINT32_MAX) {
		ali_free(c.graphs);
		return AL_E_NOMEM;
	}
	if (n)
		memcpy(ix->graphs, c.graphs, n * sizeof *ix->graphs);
	ix->n_graphs = n;
	ix->n_slots = (uint32_t)slots;
	ali_free(c.graphs);
	return AL_OK;
}

struct copy_ctx {
	struct al_arena *arena;
	struct al_view *v;
	struct al_verdict *out;
	bool nomem;
};

static void copy_verdict(void *vctx, const struct al_node *n)
{
	struct copy_ctx *c = vctx;
	const struct al_verdict *src = &n->verdict;
	struct al_verdict *dst = (struct al_verdict *)ali_view_verdict(c->v, n);
	if (dst == &ali_no_verdict)
		return;
	*dst = *src;
	dst->rules = NULL;
	dst->reasons = NULL;
	if (!src->n_rules)
		return;
	const struct al_rule **rules = ali_arena_array(c->arena, src->n_rules, sizeof *rules);
	const char **reasons = ali_arena_array(c->arena, src->n_rules, sizeof *reasons);
	if (!rules || !reasons) {
		c->nomem = true;
		dst->n_rules = 0;
		return;
	}
	for (uint32_t r = 0; r < src->n_rules; r++) {
		rules[r] = src->rules[r];
		reasons[r] = src->reasons && src->reasons[r]
				     ? ali_arena_strndup(c->arena, src->reasons[r], strlen(src->reasons[r]))
				     : "";
		if (!reasons[r])
			c->nomem = true;
	}
	dst->rules = rules;
	dst->reasons = reasons;
}

/* Copy what the last check left on s (verdicts and findings) into v. */
static enum al_status snapshot(struct al_arena *arena, const struct al_submodel *s,
			       const struct sub_index *ix, struct al_view *v)
{
	struct al_verdict *verdicts = ali_arena_array(arena, ix->n_slots ? ix->n_slots : 1, sizeof *verdicts);
	if (!verdicts)
		return AL_E_NOMEM;
	for (uint32_t i = 0; i < ix->n_slots; i++)
		verdicts[i] = ali_no_verdict;
	v->verdicts = verdicts;
	v->index = ix;
	struct copy_ctx c = {.arena = arena, .v = v, .out = verdicts};
	ali_walk_nodes(s, copy_verdict, &c);
	if (c.nomem)
		return AL_E_NOMEM;
	if (s->n_findings) {
		struct al_finding *f = ali_arena_array(arena, s->n_findings, sizeof *f);
		if (!f)
			return AL_E_NOMEM;
		for (uint32_t i = 0; i < s->n_findings; i++) {
			f[i] = s->findings[i];
			if (f[i].reason && !(f[i].reason = ali_arena_strndup(arena, f[i].reason,
									    strlen(f[i].reason))))
				return AL_E_NOMEM;
		}
		v->findings = f;
	}
	v->n_findings = s->n_findings;
	return AL_OK;
}

/* ================================================================ analysing */

/* The message of a failed step: its first diagnostic, else the status. */
static const char *failure(struct al_arena *arena, const al_diags *d, enum al_status st)
{
	const char *msg = d && al_diags_count(d) ? al_diags_get(d, 0)->msg : al_status_str(st);
	const char *kept = ali_arena_strndup(arena, msg, strlen(msg));
	return kept ? kept : al_status_str(st);
}

/* Plan sub-model k of m into v (for v->target). */
static enum al_status plan_sub(al_analysis *a, al_model *m, size_t k, const struct al_report_opts *o,
			       struct al_view *v, al_diags *d)
{
	struct al_plan_opts po = {0};
	if (o->plan)
		po = *o->plan;
	po.target = v->target;
	/* the release of the view; the work floor is the one its check decided
	 * (al_model_check for this target and release, just before) */
	const struct al_check_opts *co = o->check;
	po.os = v->os ? v->os : co ? co->os : NULL;
	al_diags *pd = al_diags_new();
	enum al_status st = pd ? al_model_plan(m, k, &po, &v->plan, pd) : AL_E_NOMEM;
	if (st != AL_OK) {
		v->plan = NULL;
		v->error = failure(&a->arena, pd, st);
		ali_diag_add(d, AL_SEV_ERROR, v->s->path, UINT64_MAX, NULL, NULL, "cannot plan for %s: %s",
			    v->target->id ? v->target->id : "?", v->error);
	}
	al_diags_free(pd);
	return st;
}

/* Check m with o's user rules for target t (NULL: o's own target). The sinks
 * show a failed check as its status (*error); d gets the reason. */
static enum al_status check_for(al_model *m, const struct al_report_opts *o, const struct al_target *t,
				const struct al_release *os, const char **error, al_diags *d)
{
	struct al_check_opts co = {0};
	if (o->check)
		co = *o->check;
	if (t)
		co.target = t;
	if (os)
		co.os = os;
	al_diags *cd = al_diags_new();
	enum al_status st = cd ? al_model_check(m, &co, cd) : AL_E_NOMEM;
	if (st != AL_OK) {
		*error = al_status_str(st);
		ali_diag_add(d, AL_SEV_ERROR, al_model_path(m), UINT64_MAX, NULL, NULL, "cannot check%s%s: %s",
			    t ? " for " : "", t && t->id ? t->id : "",
			    cd && al_diags_count(cd) ? al_diags_get(cd, 0)->msg : *error);
	}
	al_diags_free(cd);
	return st;
}

static enum al_status worse(enum al_status a, enum al_status b)
{
	return a != AL_OK ? a : b;
}

/* ================================================================ the deployment range */

struct range_ctx {
	struct ali_range_sub *rs;
	size_t width;  /* releases in the range */
	size_t column; /* the release being recorded */
};

/* Node n's row in the range table: false when n is not a node of an indexed graph. */
static bool range_row(const struct range_ctx *c, const struct al_node *n, uint32_t *row)
{
	const struct al_graph *g = n->owner;
	if (!g || n < g->nodes || n >= g->nodes + g->n_nodes)
		return false;
	struct graph_slot key = {(uintptr_t)g, 0};
	const struct graph_slot *slot = bsearch(&key, c->rs->index->graphs, c->rs->index->n_graphs, sizeof key,
						ali_graph_slot_cmp);
	if (!slot)
		return false;
	*row = slot->base + (uint32_t)(n - g->nodes);
	return true;
}

static void record_cell(void *vctx, const struct al_node *n)
{
	struct range_ctx *c = vctx;
	uint32_t i;
	if (!range_row(c, n, &i))
		return;
	const struct al_verdict *v = &n->verdict;
	struct ali_range_cell *cell = &c->rs->cells[(size_t)i * c->width + c->column];
	cell->unit = v->unknown && v->placed_ane ? ALI_RANGE_UNKNOWN : (uint8_t)v->placed;
	cell->verdict = (uint8_t)v->verdict;
	cell->own = v->unknown ? ALI_RANGE_UNKNOWN : v->ane ? AL_UNIT_ANE : (uint8_t)v->unit;
	cell->rule = NULL;
	for (uint32_t k = 0; k < v->n_rules && !cell->rule; k++)
		if (v->rules[k]->kind != AL_RULE_WARN)
			cell->rule = v->rules[k];
}

/* After the last release is recorded: which nodes vary (const ops never count). */
static void mark_varying(void *vctx, const struct al_node *n)
{
	struct range_ctx *c = vctx;
	uint32_t i;
	if (ali_node_is_const(n) || !range_row(c, n, &i))
		return;
	const struct ali_range_cell *cell = &c->rs->cells[(size_t)i * c->width];
	uint8_t f = 0;
	for (size_t r = 1; r < c->width; r++) {
		if (cell[r].unit != cell[0].unit || cell[r].verdict != cell[0].verdict)
			f |= ALI_RANGE_VARIES;
		if (cell[r].own != cell[0].own || cell[r].rule != cell[0].rule)
			f |= ALI_RANGE_OWN_VARIES;
	}
	if (f & ALI_RANGE_OWN_VARIES) /* the own verdict varies, the shown one may not: still listed */
		f |= ALI_RANGE_VARIES;
	c->rs->flags[i] = f;
	c->rs->varying += (f & ALI_RANGE_VARIES) != 0;
	c->rs->own_varying += (f & ALI_RANGE_OWN_VARIES) != 0;
}

/* The deployment range of m (issue #30): every release from the one its
 * specificationVersion needs up to the newest, the requested check last. Only
 * the rules and the placement run again per release (al_model_check keeps the
 * shapes it inferred). A failed older check leaves the range out; the model is
 * left checked as the caller asked either way (the status of that check). */
static enum al_status analyze_range(al_analysis *a, al_model *m, const struct al_report_opts *o, al_diags *d)
{
	a->range.lo = a->range.hi = -1;
	const struct al_submodel *root = al_model_get(m, 0);
	const struct al_release *min = root ? al_release_for_spec(root->spec_version) : NULL;
	int lo = ali_release_index(min), hi = (int)al_releases_count() - 1;
	if (lo < 0 || lo >= hi || a->check_opts.os)
		return AL_OK;
	size_t width = (size_t)(hi - lo + 1), ns = a->n_subs;
	struct ali_range_sub *subs = ali_arena_array(&a->arena, ns ? ns : 1, sizeof *subs);
	if (!subs)
		return AL_E_NOMEM;
	for (size_t k = 0; k < ns; k++) {
		struct sub_index *ix = &a->index[k];
		if (index_sub(&a->arena, al_model_get(m, k), ix) != AL_OK)
			return AL_E_NOMEM;
		size_t slots = ix->n_slots ? ix->n_slots : 1;
		subs[k] = (struct ali_range_sub){.index = ix};
		subs[k].cells = ali_arena_array(&a->arena, slots * width, sizeof *subs[k].cells);
		subs[k].flags = ali_arena_array(&a->arena, slots, 1);
		if (!subs[k].cells || !subs[k].flags)
			return AL_E_NOMEM;
		memset(subs[k].flags, 0, slots);
	}
	bool ok = true;
	for (int r = lo; r <= hi; r++) {
		const char *error = NULL;
		enum al_status st;
		if (r == hi) { /* the newest last, with the options as asked (os NULL): the model stays so */
			st = check_for(m, o, NULL, NULL, &error, d);
			if (st != AL_OK)
				return st;
		} else { /* an older release: a failure there leaves the range out, no error */
			al_diags *rd = al_diags_new();
			st = rd ? check_for(m, o, NULL, al_release_at((size_t)r), &error, rd) : AL_E_NOMEM;
			al_diags_free(rd);
			ok &= st == AL_OK;
		}
		for (size_t k = 0; k < ns && ok; k++) {
			struct range_ctx c = {.rs = &subs[k], .width = width, .column = (size_t)(r - lo)};
			ali_walk_nodes(al_model_get(m, k), record_cell, &c);
		}
	}
	if (!ok)
		return AL_OK;
	for (size_t k = 0; k < ns; k++) {
		struct range_ctx c = {.rs = &subs[k], .width = width};
		ali_walk_nodes(al_model_get(m, k), mark_varying, &c);
	}
	a->range = (struct ali_range){.lo = lo, .hi = hi, .subs = subs};
	return AL_OK;
}

static enum al_status analyze_item(al_analysis *a, al_model *m, const struct al_report_opts *o,
				   al_diags *d)
{
	size_t ns = a->n_subs, nt = a->n_targets;
	a->check = ali_arena_array(&a->arena, nt, sizeof *a->check);
	a->views = ali_arena_array(&a->arena, nt * ns > 0 ? nt * ns : 1, sizeof *a->views);
	a->index = ali_arena_array(&a->arena, ns ? ns : 1, sizeof *a->index);
	if (!a->check || !a->views || !a->index)
		return AL_E_NOMEM;
	const struct al_target *one = o->plan && o->plan->target   ? o->plan->target
				    : o->check && o->check->target ? o->check->target
								   : al_target_default();
	/* every view is shown, whatever fails below */
	for (size_t t = 0; t < nt; t++) {
		a->check[t] = AL_E_NOMEM;
		for (size_t k = 0; k < ns; k++)
			a->views[t * ns + k] = (struct al_view){
				.s = al_model_get(m, k),
				.target = a->columns ? ali_column_target(o, t) : a->all_targets ? al_target_at(t) : one,
				.os = a->columns ? ali_column_os(o, t) : a->all_releases ? al_release_at(t) : NULL,
				.error = al_status_str(AL_E_NOMEM), .index = &a->index[k]};
	}
	enum al_status st = AL_OK;
	a->range.lo = a->range.hi = -1;
	if (!a->all_targets && !a->all_releases && !a->columns) {
		const char *error = NULL;
		if (o->deployment_range && (a->check[0] = analyze_range(a, m, o, d)) != AL_OK)
			error = al_status_str(a->check[0]); /* the requested check failed (or no memory) */
		else
			a->check[0] = m->checked ? AL_OK : check_for(m, o, NULL, NULL, &error, d);
		for (size_t k = 0; k < ns; k++) {
			struct al_view *v = &a->views[k];
			v->error = error;
			if (a->check[0] == AL_OK && o->plans)
				st = worse(st, plan_sub(a, m, k, o, v, d));
		}
		return worse(a->check[0], st);
	}
	for (size_t k = 0; k < ns && st == AL_OK; k++)
		st = index_sub(&a->arena, al_model_get(m, k), &a->index[k]);
	for (size_t t = 0; t < nt && st != AL_E_NOMEM; t++) {
		const char *error = NULL;
		a->check[t] = check_for(m, o, a->views[t * ns].target, a->views[t * ns].os, &error, d);
		st = worse(st, a->check[t]);
		for (size_t k = 0; k < ns; k++) {
			struct al_view *v = &a->views[t * ns + k];
			v->error = error;
			if (a->check[t] != AL_OK)
				continue;
			enum al_status sst = snapshot(&a->arena, v->s, &a->index[k], v);
			if (sst != AL_OK) { /* shown as a failed check of the target */
				a->check[t] = sst;
				v->error = a->views[t * ns].error = al_status_str(sst);
				st = worse(st, sst);
				break;
			}
			if (o->plans)
				st = worse(st, plan_sub(a, m, k, o, v, d));
		}
	}
	/* leave the model with the verdicts of the requested check */
	const char *error = NULL;
	return worse(st, check_for(m, o, NULL, NULL, &error, d));
}

enum al_status al_report_analyze(struct al_report_item *items, size_t n, const struct al_report_opts *o,
				 al_diags *d)
{
	static const struct al_report_opts none = {0};
	if (!o)
		o = &none;
	enum al_status worst = AL_OK;
	for (size_t i = 0; i < n; i++) {
		struct al_report_item *it = &items[i];
		al_analysis_free(it->analysis);
		it->analysis = NULL;
		if (!it->model)
			continue;
		struct al_arena arena = {0};
		al_analysis *a = ali_arena_alloc(&arena, sizeof *a);
		enum al_status st = AL_E_NOMEM;
		if (a) {
			a->arena = arena;
			a->all_targets = o->all_targets && !o->n_columns;
			a->all_releases = o->all_releases && !o->all_targets && !o->n_columns;
			a->columns = o->n_columns > 0;
			if (o->check)
				a->check_opts = *o->check;
			a->n_targets = a->columns ? ali_columns(o) : a->all_targets ? al_targets_count()
				     : a->all_releases ? al_releases_count() : 1;
			a->n_subs = al_model_count(it->model);
			st = analyze_item(a, it->model, o, d);
			it->analysis = a;
		} else {
			ali_arena_free(&arena);
		}
		if (st != AL_OK) {
			if (st == AL_E_NOMEM)
				ali_diag_add(d, AL_SEV_ERROR, it->path, UINT64_MAX, NULL, NULL,
					    "out of memory while analysing the model");
			if (it->status == AL_OK)
				it->status = st;
			worst = worse(worst, st);
		}
	}
	return worst;
}

const struct al_check_opts *ali_item_check(const struct al_report_item *it, const struct al_report_opts *o)
{
	return it && it->analysis ? &it->analysis->check_opts : o ? o->check : NULL;
}

bool ali_item_own_prediction(const struct al_report_item *it, const struct al_report_opts *o)
{
	const struct al_check_opts *a = ali_item_check(it, o), *b = o ? o->check : NULL;
	if (!a || !b || a == b)
		return false;
	const struct al_target *ta = a->target ? a->target : al_target_default();
	const struct al_target *tb = b->target ? b->target : al_target_default();
	const struct al_release *ra = a->os ? a->os : al_release_default();
	const struct al_release *rb = b->os ? b->os : al_release_default();
	return ta != tb || ra != rb || a->compute_units != b->compute_units;
}
