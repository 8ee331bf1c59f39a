/* SPDX-License-Identifier: MIT */
/* rule_engine.c: the engine that evaluates the rule table (rule_table.c) for one
 * chip family: the rules of a node's scope and family on every layer / op of
 * every graph, then the model rules, with user rules (user_rules.c) overriding
 * rows and adding their own. It fills node->verdict and submodel->findings.
 *
 * Path through this file:
 *   ali_rules_run   clear_verdicts (the last check's arena), then check_model per
 *                  sub-model: sub_totals, check_graph -> check_node per node
 *                  (eval_builtin, eval_user, decide), then the model rules */
#include "rules.h"

#include <string.h>

/* ================================================================ the engine */

#define REASON_CAP 320

static int conf_rank(char c)
{
	return c == 'A' ? 3 : c == 'M' ? 2 : c == 'G' ? 1 : 0;
}

/* Reasons are one line: control characters (from hostile names) become '?'. */
static const char *keep_reason(struct al_arena *a, const char *r)
{
	char *p = ali_arena_strndup(a, r, strnlen(r, REASON_CAP));
	for (char *c = p; c && *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return p;
}

/* One check: the target, the rule rows in effect (a user override replaces its
 * built-in row's metadata, the predicate stays), the user rules that match by
 * type, and scratch space for one node's fired rules. */
struct run {
	struct al_model *m;
	const struct al_target *t;
	int fam;                         /* index of t: bit in al_rule.families */
	const struct al_release *os;
	int rel;                         /* index of os: bit in al_rule.releases */
	const al_user_rules *u;
	const struct al_check_opts *o;   /* its rule selection */
	const struct al_rule *eff[AL_N_RULES];
	/* per scope, the built-in rows in effect (applies() holds), in table
	 * order: worked out once per check, not once per node and row */
	struct active {
		al_rule_pred *pred;
		const struct al_rule *rule;
	} act[3][AL_N_RULES];
	size_t n_act[3];
	const struct al_rule **fired;    /* cap entries */
	char (*reasons)[REASON_CAP];     /* cap entries */
	size_t cap;
	struct al_rctx ctx;
};

static bool applies(const struct run *r, const struct al_rule *rule)
{
	return r->fam >= 0 && r->rel >= 0 && al_rule_evaluated(rule, (size_t)r->fam, (size_t)r->rel) &&
	       al_check_rule_on(r->o, rule);
}

bool al_check_rule_on(const struct al_check_opts *o, const struct al_rule *r)
{
	return !o || !o->rule_on || !r || o->rule_on(r, o->rule_on_ctx);
}

/* The verdict of one node from the rules that fired. ane: no illegal/cost
 * rule fired. unit: that of the strongest fallback rule (highest confidence,
 * then first fired: table order, user rules last). confidence: the highest
 * among fired fallback rules, since one sufficient reason is enough; with no
 * fallback it is 'G': the absence of a known obstacle is weak evidence. */
static void decide(struct al_verdict *v, const struct al_rule *const *fired, size_t n_fired)
{
	const struct al_rule *best = NULL;
	for (size_t i = 0; i < n_fired; i++) {
		const struct al_rule *r = fired[i];
		if (r->kind == AL_RULE_WARN)
			continue;
		if (!best || conf_rank(r->confidence) > conf_rank(best->confidence))
			best = r;
	}
	v->ane = best == NULL;
	v->unit = best ? best->unit : AL_UNIT_ANE;
	v->confidence = best ? best->confidence : 'G';
	v->unknown = false;
	for (size_t i = 0; i < n_fired && v->ane; i++)
		if (strcmp(fired[i]->id, ALI_RULE_UNKNOWN_KIND) == 0)
			v->unknown = true; /* no fallback rule, and nothing says it is ANE work */
}

static bool is_const_op(const struct al_node *n, enum al_rule_scope scope)
{
	return scope == AL_SCOPE_MIL && (ali_rx_mil_flags(n) & AL_OPF_CONST);
}

static int scope_slot(enum al_rule_scope scope)
{
	return scope == AL_SCOPE_NN ? 0 : scope == AL_SCOPE_MIL ? 1 : 2;
}

/* r->act: the built-in rows of each scope in effect for r's target, release
 * and rule selection (r->eff set). */
static void list_active(struct run *r)
{
	memset(r->n_act, 0, sizeof r->n_act);
	for (size_t i = 0; i < AL_N_RULES; i++) {
		const struct al_rule *rule = r->eff[i];
		al_rule_pred *pred = ali_rule_pred_at(i);
		enum al_rule_scope scope = al_rule_at(i)->scope;
		if (!pred || (scope != AL_SCOPE_NN && scope != AL_SCOPE_MIL && scope != AL_SCOPE_MODEL) ||
		    !applies(r, rule))
			continue;
		int k = scope_slot(scope);
		r->act[k][r->n_act[k]++] = (struct active){pred, rule};
	}
}

/* Built-in rows of `scope` in effect for r's target; n NULL for model rules. */
static size_t eval_builtin(struct run *r, enum al_rule_scope scope)
{
	size_t n_fired = 0;
	int k = scope_slot(scope);
	for (size_t i = 0; i < r->n_act[k]; i++) {
		r->reasons[n_fired][0] = '\0';
		if (r->act[k][i].pred(&r->ctx, r->reasons[n_fired], REASON_CAP))
			r->fired[n_fired++] = r->act[k][i].rule;
	}
	return n_fired;
}

/* User rules of their own (not overrides) that match n's type. */
static size_t eval_user(struct run *r, const struct al_node *n, enum al_rule_scope scope,
			size_t n_fired)
{
	size_t nu = al_user_rules_count(r->u);
	for (size_t i = 0; i < nu && n_fired < r->cap; i++) {
		const struct al_user_rule *ur = ali_user_rules_get(r->u, i);
		if (ur->base || ur->rule.scope != scope || !applies(r, &ur->rule) ||
		    !ali_user_rule_matches(ur, n))
			continue;
		ali_rx_say(r->reasons[n_fired], REASON_CAP, "%s: %s", n->type ? n->type : "?",
			  ur->reason ? ur->reason : ur->rule.title);
		r->fired[n_fired++] = &ur->rule;
	}
	return n_fired;
}

static enum al_status check_node(struct run *r, struct al_node *n, enum al_rule_scope scope)
{
	struct al_model *m = r->m;
	struct al_verdict *v = &n->verdict;
	memset(v, 0, sizeof *v);
	if (is_const_op(n, scope)) { /* holds data: nothing to run, nothing to flag */
		v->ane = true;
		v->unit = AL_UNIT_NONE;
		v->confidence = 'A';
		return AL_OK;
	}
	r->ctx.n = n;
	size_t n_fired = eval_builtin(r, scope);
	n_fired = eval_user(r, n, scope, n_fired);
	decide(v, r->fired, n_fired);
	if (n_fired == 0)
		return AL_OK;
	const struct al_rule **rules = ali_arena_array(&m->verdicts, n_fired, sizeof *rules);
	const char **why = ali_arena_array(&m->verdicts, n_fired, sizeof *why);
	if (!rules || !why)
		return AL_E_NOMEM;
	for (size_t i = 0; i < n_fired; i++) {
		rules[i] = r->fired[i];
		why[i] = keep_reason(&m->verdicts, r->reasons[i][0] ? r->reasons[i] : r->fired[i]->title);
		if (!why[i])
			return AL_E_NOMEM;
	}
	v->rules = rules;
	v->reasons = why;
	v->n_rules = (uint32_t)n_fired;
	return AL_OK;
}

static enum al_status check_graph(struct run *r, struct al_graph *g, enum al_rule_scope scope,
				  int depth)
{
	if (!g || depth > AL_MAX_DEPTH + 1) /* the loaders bound nesting; this is a backstop */
		return AL_OK;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct al_node *n = &g->nodes[i];
		enum al_status st = check_node(r, n, scope);
		if (st)
			return st;
		if (i % 16 == 15)
			ali_model_trim(r->m); /* see core.c: keep weight pages from piling up */
		for (uint32_t k = 0; k < n->n_sub; k++)
			if ((st = check_graph(r, n->sub[k], scope, depth + 1)))
				return st;
	}
	return AL_OK;
}

static enum al_status check_model(struct run *r, struct al_submodel *s)
{
	struct al_model *m = r->m;
	r->ctx.n = NULL;
	size_t n_fired = eval_builtin(r, AL_SCOPE_MODEL);
	s->findings = NULL;
	s->n_findings = 0;
	if (n_fired == 0)
		return AL_OK;
	struct al_finding *f = ali_arena_array(&m->verdicts, n_fired, sizeof *f);
	if (!f)
		return AL_E_NOMEM;
	for (size_t i = 0; i < n_fired; i++) {
		f[i].rule = r->fired[i];
		f[i].reason = keep_reason(&m->verdicts,
					  r->reasons[i][0] ? r->reasons[i] : r->fired[i]->title);
		if (!f[i].reason)
			return AL_E_NOMEM;
	}
	s->findings = f;
	s->n_findings = (uint32_t)n_fired;
	return AL_OK;
}

/* Forget the verdicts of the previous check before its memory is reused: a
 * check that stops early must not leave nodes pointing into it. */
static void clear_graph(struct al_graph *g, int depth)
{
	if (!g || depth > AL_MAX_DEPTH + 1)
		return;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		memset(&g->nodes[i].verdict, 0, sizeof g->nodes[i].verdict);
		for (uint32_t k = 0; k < g->nodes[i].n_sub; k++)
			clear_graph(g->nodes[i].sub[k], depth + 1);
	}
}

static void clear_verdicts(struct al_model *m)
{
	for (size_t i = 0; i < m->n_subs; i++) {
		struct al_submodel *s = m->subs[i];
		s->findings = NULL;
		s->n_findings = 0;
		for (uint32_t g = 0; g < s->n_graphs; g++)
			clear_graph(s->graphs[g], 0);
	}
	ali_arena_free(&m->verdicts);
}

/* FLOPs of every node of g (nested graphs included); *known false when a
 * non-const node has no cost. */
static void graph_flops(const struct al_graph *g, enum al_rule_scope scope, double *flops,
			bool *known, int depth)
{
	if (!g || depth > AL_MAX_DEPTH + 1)
		return;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct al_node *n = &g->nodes[i];
		if (!is_const_op(n, scope)) {
			*known &= n->cost.known;
			*flops += n->cost.flops;
		}
		for (uint32_t k = 0; k < n->n_sub; k++)
			graph_flops(n->sub[k], scope, flops, known, depth + 1);
	}
}

static void sub_totals(struct run *r, const struct al_submodel *s, enum al_rule_scope scope)
{
	r->ctx.sub_flops = 0;
	r->ctx.sub_cost_known = s->n_graphs > 0;
	for (uint32_t g = 0; g < s->n_graphs; g++)
		graph_flops(s->graphs[g], scope, &r->ctx.sub_flops, &r->ctx.sub_cost_known, 0);
}

enum al_status ali_rules_run(struct al_model *m, const struct al_check_opts *opts, al_diags *d)
{
	if (!m)
		return AL_E_INVALID_ARG;
	struct run r = {.m = m};
	r.t = opts && opts->target ? opts->target : al_target_default();
	r.fam = ali_target_index(r.t);
	if (r.fam < 0) { /* a struct the caller made, not a row of the table */
		ali_diag_add(d, AL_SEV_ERROR, m->path, UINT64_MAX, NULL, NULL,
			    "unknown target '%s': use al_target_find()",
			    r.t->id ? r.t->id : "?");
		return AL_E_INVALID_ARG;
	}
	r.os = opts && opts->os ? opts->os : al_release_default();
	r.rel = ali_release_index(r.os);
	if (r.rel < 0) {
		ali_diag_add(d, AL_SEV_ERROR, m->path, UINT64_MAX, NULL, NULL,
			    "unknown OS release '%s': use al_release_find()",
			    r.os->id ? r.os->id : "?");
		return AL_E_INVALID_ARG;
	}
	r.u = opts ? opts->user_rules : NULL;
	r.o = opts;
	for (size_t i = 0; i < AL_N_RULES; i++) {
		const struct al_user_rule *ov = ali_user_rules_override(r.u, al_rule_at(i));
		r.eff[i] = ov ? &ov->rule : al_rule_at(i);
	}
	list_active(&r);
	clear_verdicts(m);
	m->checked = false;
	r.cap = AL_N_RULES + al_user_rules_count(r.u);
	r.fired = ali_calloc(r.cap, sizeof *r.fired);
	r.reasons = ali_calloc(r.cap, sizeof *r.reasons);
	r.ctx.t = r.t;
	r.ctx.os = r.os;
	enum al_status st = r.fired && r.reasons ? AL_OK : AL_E_NOMEM;
	for (size_t i = 0; i < m->n_subs && st == AL_OK; i++) {
		struct al_submodel *s = m->subs[i];
		enum al_rule_scope scope = s->world == AL_WORLD_NN ? AL_SCOPE_NN : AL_SCOPE_MIL;
		r.ctx.s = s;
		sub_totals(&r, s, scope);
		st = check_model(&r, s);
		if (st || s->world == AL_WORLD_OTHER)
			continue;
		for (uint32_t g = 0; g < s->n_graphs && st == AL_OK; g++)
			st = check_graph(&r, s->graphs[g], scope, 0);
	}
	ali_free(r.fired);
	ali_free(r.reasons);
	if (st == AL_OK) {
		m->checked_target = r.t;
		m->checked_os = r.os;
	}
	/* every allocation above is checked where it is made; m->arena.failed is
	 * sticky and may predate this call, so it is not consulted here */
	if (st == AL_E_NOMEM)
		ali_diag_add(d, AL_SEV_ERROR, m->path, UINT64_MAX, NULL, NULL,
			    "out of memory while checking rules");
	return st;
}
