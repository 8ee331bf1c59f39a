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

#include <stdlib.h>
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
		size_t row; /* in rules.def */
	} act[3][AL_N_RULES];
	size_t n_act[3];
	const struct al_rule **fired;    /* cap entries */
	char (*reasons)[REASON_CAP];     /* cap entries */
	size_t cap;
	struct al_rctx ctx;
	struct memo *memo;               /* NULL: every predicate runs */
	bool memo_fill;                  /* this check writes the memo */
	size_t visit;                    /* nodes checked so far, in walk order */
	bool os_read;
};

/* ================================================================ the memo
 * A check of the same model for the same target and rules on another OS release (the
 * deployment range: one check per release) gives every predicate that never reads the
 * release the same answer on the same node. The first such check keeps, per node in walk
 * order, which of its rows in effect fired, with their reasons (a row not in effect then
 * runs as usual in a later check: evaluating every row up front cost a quadratic row,
 * ANE056's forward scan, 50x on tests/scale_cli.sh's 40,000 layers); a predicate that read the release on
 * any node (ali_rx_os) is marked and runs again in every later check. Model rules and
 * user rules always run. At LLM scale the rules were 31% of a check of the range. */
struct memo_hit {
	uint16_t row; /* rules.def row */
	const char *reason;
};
struct memo_node {
	const struct al_node *n; /* the walk order is checked, not assumed */
	const struct memo_hit *hits;
	uint16_t n_hits;
};
struct memo {
	const struct al_target *t;
	const al_user_rules *u;
	bool ready, broken;
	bool reads_os[AL_N_RULES];
	bool filled[AL_N_RULES]; /* rows in effect in the check that filled it: the others run as usual */
	struct memo_node *nodes;
	size_t cap;
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
		if (!pred || (scope != AL_SCOPE_NN && scope != AL_SCOPE_MIL && scope != AL_SCOPE_MODEL))
			continue;
		int k = scope_slot(scope);
		if (!applies(r, rule))
			continue;
		r->act[k][r->n_act[k]++] = (struct active){pred, rule, i};
	}
}

/* Every node predicate of the scope on the current node, its hits kept in the memo;
 * then the ones in effect, as eval_builtin gives them. false: out of memory (the memo
 * is then dropped and the caller evaluates as usual). */
static bool memo_fill_node(struct run *r, enum al_rule_scope scope, size_t v, size_t *n_fired)
{
	struct memo *mo = r->memo;
	struct memo_hit hits[AL_N_RULES];
	uint16_t nh = 0;
	char reason[REASON_CAP];
	size_t k = 0, nf = 0;
	int slot = scope_slot(scope);
	for (size_t j = 0; j < r->n_act[slot]; j++) {
		const struct active *a = &r->act[slot][j];
		mo->filled[a->row] = true;
		reason[0] = '\0';
		r->os_read = false;
		bool fired = a->pred(&r->ctx, reason, REASON_CAP);
		if (r->os_read)
			mo->reads_os[a->row] = true;
		if (!fired)
			continue;
		size_t len = strnlen(reason, REASON_CAP - 1);
		hits[nh].row = (uint16_t)a->row;
		hits[nh].reason = ali_arena_strndup(&r->m->rule_memo, reason, len);
		if (!hits[nh].reason)
			return false;
		nh++;
		/* in effect for this check: as eval_builtin would have it */
		while (k < r->n_act[slot] && r->act[slot][k].row < a->row)
			k++;
		if (k < r->n_act[slot] && r->act[slot][k].row == a->row) {
			memcpy(r->reasons[nf], reason, len);
			r->reasons[nf][len] = '\0';
			r->fired[nf++] = r->act[slot][k].rule;
		}
	}
	struct memo_hit *kept = nh ? ali_arena_array(&r->m->rule_memo, nh, sizeof *kept) : NULL;
	if (nh && !kept)
		return false;
	if (nh)
		memcpy(kept, hits, nh * sizeof *kept);
	mo->nodes[v] = (struct memo_node){r->ctx.n, kept, nh};
	*n_fired = nf;
	return true;
}

/* The rows in effect from the memo; the ones that read the release run again. */
static size_t memo_use_node(struct run *r, enum al_rule_scope scope, const struct memo_node *mn)
{
	size_t n_fired = 0, h = 0;
	int slot = scope_slot(scope);
	for (size_t i = 0; i < r->n_act[slot]; i++) {
		size_t row = r->act[slot][i].row;
		if (r->memo->reads_os[row] || !r->memo->filled[row]) {
			r->reasons[n_fired][0] = '\0';
			if (r->act[slot][i].pred(&r->ctx, r->reasons[n_fired], REASON_CAP))
				r->fired[n_fired++] = r->act[slot][i].rule;
			continue;
		}
		while (h < mn->n_hits && mn->hits[h].row < row)
			h++;
		if (h < mn->n_hits && mn->hits[h].row == row) {
			snprintf(r->reasons[n_fired], REASON_CAP, "%s", mn->hits[h].reason);
			r->fired[n_fired++] = r->act[slot][i].rule;
		}
	}
	return n_fired;
}

/* Whether this check fills or reads the memo: the first check of a target and rule set
 * fills it (only the rows in effect, as a check without the memo evaluates them),
 * the later ones read it. Another target or rule set starts over. */
static void memo_begin(struct run *r)
{
	struct al_model *m = r->m;
	struct memo *mo = m->rule_memo_state;
	if (mo && (mo->t != r->t || mo->u != r->u || mo->broken || !mo->ready)) {
		ali_arena_free(&m->rule_memo);
		m->rule_memo_state = mo = NULL;
	}
	if (mo) {
		r->memo = mo;
		r->memo_fill = false;
		return;
	}
	const char *off = getenv("ANELINT_RULE_MEMO"); /* "0": every predicate runs (tests/rule_memo.sh) */
	if (off && strcmp(off, "0") == 0)
		return;
	mo = ali_arena_alloc(&m->rule_memo, sizeof *mo);
	size_t cap = m->n_nodes + 1;
	struct memo_node *nodes = mo ? ali_arena_array(&m->rule_memo, cap, sizeof *nodes) : NULL;
	if (!nodes) {
		ali_arena_free(&m->rule_memo);
		return;
	}
	mo->t = r->t;
	mo->u = r->u;
	mo->nodes = nodes;
	mo->cap = cap;
	m->rule_memo_state = mo;
	r->memo = mo;
	r->memo_fill = true;
}

/* Built-in rows of `scope` in effect for r's target; n NULL for model rules. */
static size_t eval_builtin(struct run *r, enum al_rule_scope scope)
{
	if (r->memo && scope != AL_SCOPE_MODEL && r->ctx.n) {
		struct memo *mo = r->memo;
		size_t v = r->visit++;
		if (!mo->broken && v < mo->cap) {
			if (r->memo_fill) {
				size_t nf;
				if (memo_fill_node(r, scope, v, &nf))
					return nf;
				mo->broken = true;
			} else if (mo->nodes[v].n == r->ctx.n) {
				return memo_use_node(r, scope, &mo->nodes[v]);
			}
		}
		if (r->memo_fill)
			mo->broken = true;
	}
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
	r.ctx.release = r.os;
	r.ctx.os_read = &r.os_read;
	memo_begin(&r);
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
	if (r.memo && r.memo_fill)
		r.memo->ready = st == AL_OK && !r.memo->broken;
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
