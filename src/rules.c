/* rules.c: the rule table (expanded from rules.def), its lookups, and the engine
 * that evaluates it for one chip family: the rules of a node's scope and family on
 * every layer / op of every graph, then the model rules, with user rules
 * (user_rules.c) overriding rows and adding their own. It fills node->verdict and
 * submodel->findings; what a rule checks is in rules_*.c.
 */
#include "rules.h"

#include <stdarg.h>
#include <string.h>
#include <strings.h>

/* ================================================================ the table */

struct rule_row {
	struct al_rule rule; /* first member: al_rule_at() hands out &row->rule */
	al_rule_pred *pred;
};

#define AL_NODE_RULE(id, name, scope, kind, unit, conf, fam, catalog, pred, title, prov, url, why, \
		     fix)                                                                            \
	{{id, name, title, scope, kind, unit, conf, catalog, prov, url, why, fix, fam, NULL}, pred},
#define AL_MODEL_RULE AL_NODE_RULE
static const struct rule_row rows[] = {
#include "rules.def"
};
#undef AL_NODE_RULE
#undef AL_MODEL_RULE

#define N_ROWS (sizeof rows / sizeof rows[0])

size_t al_rules_count(void)
{
	return N_ROWS;
}

const struct al_rule *al_rule_at(size_t i)
{
	return i < N_ROWS ? &rows[i].rule : NULL;
}

/* By id ("ANE012", any case) or by name ("nn-pool-kernel-gt-13", exact). */
const struct al_rule *al_rule_find(const char *id_or_name)
{
	if (!id_or_name)
		return NULL;
	for (size_t i = 0; i < N_ROWS; i++)
		if (strcasecmp(rows[i].rule.id, id_or_name) == 0 ||
		    strcmp(rows[i].rule.name, id_or_name) == 0)
			return &rows[i].rule;
	return NULL;
}

/* ================================================================ helpers for predicates */

bool al_rx_say(char *reason, size_t cap, const char *fmt, ...)
{
	if (!reason || cap == 0)
		return true;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, cap, fmt, ap);
	va_end(ap);
	return true;
}

static const char *join(char *buf, size_t cap, const int64_t *v, size_t n, const char *open,
			const char *sep, const char *close)
{
	size_t len = 0;
	int k = snprintf(buf, cap, "%s", open);
	len = k > 0 ? (size_t)k : 0;
	for (size_t i = 0; i < n && i < AL_RX_MAX_DIMS && len < cap; i++) {
		k = snprintf(buf + len, cap - len, "%s%lld", i ? sep : "", (long long)v[i]);
		if (k < 0)
			break;
		len += (size_t)k;
	}
	if (n > AL_RX_MAX_DIMS && len < cap) {
		k = snprintf(buf + len, cap - len, "%s...", sep);
		len += k > 0 ? (size_t)k : 0;
	}
	if (len < cap)
		snprintf(buf + len, cap - len, "%s", close);
	return buf;
}

const char *al_rx_ints(char *buf, size_t cap, const int64_t *v, size_t n)
{
	return join(buf, cap, v, n, "[", ",", "]");
}

const char *al_rx_dims(char *buf, size_t cap, const int64_t *v, size_t n)
{
	return join(buf, cap, v, n, "", "x", "");
}

static bool has_output(const struct al_node *x, const char *name)
{
	for (uint32_t k = 0; k < x->n_outputs; k++)
		if (x->outputs[k] && strcmp(x->outputs[k], name) == 0)
			return true;
	return false;
}

const struct al_node *al_rx_producer(const struct al_node *n, const char *name)
{
	if (!n || !name)
		return NULL;
	/* n's own graph up to n, then each enclosing graph up to the node that owns
	 * the body; the depth of the chain is bounded by the loaders. */
	const struct al_graph *g = n->owner;
	const struct al_node *upto = n;
	/* At most PRODUCER_WINDOW layers back per graph: producers are nearly always
	 * a few layers back, and a bound keeps a file of 10^6 layers that name no
	 * producer from costing 10^12 comparisons. Farther producers count as unknown,
	 * so the rules that ask (ANE011, ANE013) stay silent rather than guess. */
	enum { PRODUCER_WINDOW = 256 };
	for (int guard = 0; g && guard <= AL_MAX_DEPTH; guard++) {
		if (upto >= g->nodes && upto < g->nodes + g->n_nodes) {
			const struct al_node *stop =
				upto - g->nodes > PRODUCER_WINDOW ? upto - PRODUCER_WINDOW : g->nodes;
			for (const struct al_node *x = upto; x-- > stop;)
				if (has_output(x, name))
					return x;
		}
		upto = g->parent_node;
		g = g->parent;
	}
	return NULL;
}

static const struct al_feature *find_feature(const struct al_feature *f, uint32_t n,
					     const char *name)
{
	if (!name)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		if (f[i].name && strcmp(f[i].name, name) == 0)
			return &f[i];
	return NULL;
}

const struct al_feature *al_rx_input(const struct al_submodel *s, const char *name)
{
	return s ? find_feature(s->inputs, s->n_inputs, name) : NULL;
}

const struct al_feature *al_rx_output(const struct al_submodel *s, const char *name)
{
	return s ? find_feature(s->outputs, s->n_outputs, name) : NULL;
}

unsigned al_rx_nn_flags(const struct al_node *n)
{
	return n->kind >= 0 && (size_t)n->kind < al_nn_kinds_count ? al_nn_kinds[n->kind].flags : 0;
}

unsigned al_rx_mil_flags(const struct al_node *n)
{
	return n->kind >= 0 && (size_t)n->kind < al_mil_kinds_count ? al_mil_kinds[n->kind].flags : 0;
}

bool al_rx_type_in(const struct al_node *n, const char *const *names)
{
	if (!n->type)
		return false;
	for (; *names; names++)
		if (strcmp(n->type, *names) == 0)
			return true;
	return false;
}

/* ================================================================ shapes for predicates */

bool al_rx_ttype_shape(const struct al_ttype *t, struct al_shape *out)
{
	if (!t || t->kind != 0 || t->rank < 0)
		return false;
	memset(out, 0, sizeof *out);
	out->rank = t->rank;
	out->dtype = t->dtype;
	for (int i = 0; i < AL_SHAPE_MAX_RANK; i++)
		out->dims[i] = i < t->rank && t->dims && t->dims[i] >= 0 ? t->dims[i] : AL_DIM_UNKNOWN;
	return true;
}

bool al_rx_out_shape(const struct al_node *n, uint32_t i, struct al_shape *out)
{
	if (!n || i >= n->n_outputs)
		return false;
	if (n->out_shapes && n->out_shapes[i].rank >= 0) {
		*out = n->out_shapes[i];
		return true;
	}
	return n->out_types && al_rx_ttype_shape(&n->out_types[i], out);
}

bool al_rx_in_shape(const struct al_node *n, uint32_t i, struct al_shape *out)
{
	if (!n || i >= n->n_inputs)
		return false;
	const struct al_shape *sh = al_node_in_shape(n, i);
	if (sh && sh->rank >= 0) {
		*out = *sh;
		return true;
	}
	const struct al_node_src *src = al_src(n);
	return src && src->mil_scope && al_rx_ttype_shape(al_mil_value_type(n, n->inputs[i]), out);
}

bool al_rx_shape_known(const struct al_shape *s)
{
	if (!s || s->rank < 0 || s->rank > AL_SHAPE_MAX_RANK)
		return false;
	for (int i = 0; i < s->rank; i++)
		if (s->dims[i] < 0)
			return false;
	return true;
}

const char *al_rx_shape_str(char *buf, size_t cap, const struct al_shape *s)
{
	if (!buf || cap == 0)
		return "";
	if (!s || s->rank < 0) {
		snprintf(buf, cap, "[?]");
		return buf;
	}
	size_t len = 0;
	int k = snprintf(buf, cap, "[");
	len = k > 0 ? (size_t)k : 0;
	for (int i = 0; i < s->rank && len < cap; i++) {
		const char *sep = i ? "," : "";
		if (i >= AL_SHAPE_MAX_RANK) {
			k = snprintf(buf + len, cap - len, "%s...", sep);
			len += k > 0 ? (size_t)k : 0;
			break;
		}
		if (s->dims[i] < 0)
			k = snprintf(buf + len, cap - len, "%s?", sep);
		else
			k = snprintf(buf + len, cap - len, "%s%lld", sep, (long long)s->dims[i]);
		len += k > 0 ? (size_t)k : 0;
	}
	if (len < cap)
		snprintf(buf + len, cap - len, "]");
	return buf;
}

unsigned al_rx_elem_bytes(int dtype)
{
	switch (dtype) {
	case AL_DT_INT8: case AL_DT_UINT8: case AL_DT_BOOL:
		return 1;
	}
	return 2;
}

/* ================================================================ the engine */

#define REASON_CAP 320

static int conf_rank(char c)
{
	return c == 'A' ? 3 : c == 'M' ? 2 : c == 'G' ? 1 : 0;
}

/* Reasons are one line: control characters (from hostile names) become '?'. */
static const char *keep_reason(struct al_arena *a, const char *r)
{
	char *p = al_arena_strndup(a, r, strnlen(r, REASON_CAP));
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
	const al_user_rules *u;
	const struct al_rule *eff[N_ROWS];
	const struct al_rule **fired;    /* cap entries */
	char (*reasons)[REASON_CAP];     /* cap entries */
	size_t cap;
	struct al_rctx ctx;
};

static bool applies(const struct run *r, const struct al_rule *rule)
{
	return (rule->families >> r->fam) & 1u;
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
}

static bool is_const_op(const struct al_node *n, enum al_rule_scope scope)
{
	return scope == AL_SCOPE_MIL && (al_rx_mil_flags(n) & AL_OPF_CONST);
}

/* Built-in rows of `scope` in effect for r's target; n NULL for model rules. */
static size_t eval_builtin(struct run *r, enum al_rule_scope scope)
{
	size_t n_fired = 0;
	for (size_t i = 0; i < N_ROWS; i++) {
		const struct al_rule *rule = r->eff[i];
		if (rows[i].rule.scope != scope || !rows[i].pred || !applies(r, rule))
			continue;
		r->reasons[n_fired][0] = '\0';
		if (rows[i].pred(&r->ctx, r->reasons[n_fired], REASON_CAP))
			r->fired[n_fired++] = rule;
	}
	return n_fired;
}

/* User rules of their own (not overrides) that match n's type. */
static size_t eval_user(struct run *r, const struct al_node *n, enum al_rule_scope scope,
			size_t n_fired)
{
	size_t nu = al_user_rules_count(r->u);
	for (size_t i = 0; i < nu && n_fired < r->cap; i++) {
		const struct al_user_rule *ur = al_user_rules_get(r->u, i);
		if (ur->base || ur->rule.scope != scope || !applies(r, &ur->rule) ||
		    !al_user_rule_matches(ur, n))
			continue;
		al_rx_say(r->reasons[n_fired], REASON_CAP, "%s: %s", n->type ? n->type : "?",
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
	const struct al_rule **rules = al_arena_array(&m->verdicts, n_fired, sizeof *rules);
	const char **why = al_arena_array(&m->verdicts, n_fired, sizeof *why);
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
			al_model_trim(r->m); /* see core.c: keep weight pages from piling up */
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
	struct al_finding *f = al_arena_array(&m->verdicts, n_fired, sizeof *f);
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
	al_arena_free(&m->verdicts);
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

enum al_status al_rules_run(struct al_model *m, const struct al_check_opts *opts, al_diags *d)
{
	if (!m)
		return AL_E_INVALID_ARG;
	struct run r = {.m = m};
	r.t = opts && opts->target ? opts->target : al_target_default();
	r.fam = al_target_index(r.t);
	if (r.fam < 0) { /* a struct the caller made, not a row of the table */
		al_diag_add(d, AL_SEV_ERROR, m->path, UINT64_MAX, NULL, NULL,
			    "unknown target '%s': use al_target_find()",
			    r.t->id ? r.t->id : "?");
		return AL_E_INVALID_ARG;
	}
	r.u = opts ? opts->user_rules : NULL;
	for (size_t i = 0; i < N_ROWS; i++) {
		const struct al_user_rule *ov = al_user_rules_override(r.u, &rows[i].rule);
		r.eff[i] = ov ? &ov->rule : &rows[i].rule;
	}
	clear_verdicts(m);
	m->checked = false;
	r.cap = N_ROWS + al_user_rules_count(r.u);
	r.fired = al_calloc(r.cap, sizeof *r.fired);
	r.reasons = al_calloc(r.cap, sizeof *r.reasons);
	r.ctx.t = r.t;
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
	al_free(r.fired);
	al_free(r.reasons);
	if (st == AL_OK)
		m->checked_target = r.t;
	/* every allocation above is checked where it is made; m->arena.failed is
	 * sticky and may predate this call, so it is not consulted here */
	if (st == AL_E_NOMEM)
		al_diag_add(d, AL_SEV_ERROR, m->path, UINT64_MAX, NULL, NULL,
			    "out of memory while checking rules");
	return st;
}
