/* rules.c: the rule table (expanded from rules.def), its lookups, and the
 * engine that evaluates it: every rule of a node's scope on every layer / op of
 * every graph (nested bodies included), then the model rules on every
 * sub-model. It fills node->verdict and submodel->findings from the model
 * arena. It does not know what any rule checks (that is rules_*.c) and it
 * does no shape inference or partitioning (that is the plan stage).
 */
#include "rules.h"

#include <stdarg.h>
#include <string.h>
#include <strings.h>

/* ================================================================ the table */

struct rule_row {
	struct al_rule rule; /* first member: al_rule_at() hands out &row->rule */
	al_node_pred *node;
	al_model_pred *model;
};

#define AL_NODE_RULE(id, name, scope, kind, unit, conf, catalog, pred, title, prov, url, why, fix) \
	{{id, name, title, scope, kind, unit, conf, catalog, prov, url, why, fix}, pred, NULL},
#define AL_MODEL_RULE(id, name, scope, kind, unit, conf, catalog, pred, title, prov, url, why, fix) \
	{{id, name, title, scope, kind, unit, conf, catalog, prov, url, why, fix}, NULL, pred},
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

/* The verdict of one node from the rules that fired (indices into rows[]).
 * ane: no illegal/cost rule fired. unit: that of the strongest fallback rule
 * (highest confidence, then first in the table). confidence: the highest
 * among fired fallback rules, since one sufficient reason is enough; with no
 * fallback it is 'G': the absence of a known obstacle is weak evidence. */
static void decide(struct al_verdict *v, const size_t *fired, size_t n_fired)
{
	const struct al_rule *best = NULL;
	for (size_t i = 0; i < n_fired; i++) {
		const struct al_rule *r = &rows[fired[i]].rule;
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

static enum al_status check_node(struct al_model *m, const struct al_submodel *s,
				 struct al_node *n, enum al_rule_scope scope)
{
	struct al_verdict *v = &n->verdict;
	memset(v, 0, sizeof *v);
	if (is_const_op(n, scope)) { /* holds data: nothing to run, nothing to flag */
		v->ane = true;
		v->unit = AL_UNIT_NONE;
		v->confidence = 'A';
		return AL_OK;
	}
	size_t fired[N_ROWS];
	char reasons[N_ROWS][REASON_CAP];
	size_t n_fired = 0;
	for (size_t i = 0; i < N_ROWS; i++) {
		if (rows[i].rule.scope != scope || !rows[i].node)
			continue;
		reasons[n_fired][0] = '\0';
		if (rows[i].node(n, s, reasons[n_fired], REASON_CAP))
			fired[n_fired++] = i;
	}
	decide(v, fired, n_fired);
	if (n_fired == 0)
		return AL_OK;
	const struct al_rule **rules = al_arena_array(&m->arena, n_fired, sizeof *rules);
	const char **why = al_arena_array(&m->arena, n_fired, sizeof *why);
	if (!rules || !why)
		return AL_E_NOMEM;
	for (size_t i = 0; i < n_fired; i++) {
		rules[i] = &rows[fired[i]].rule;
		why[i] = keep_reason(&m->arena, reasons[i][0] ? reasons[i] : rows[fired[i]].rule.title);
		if (!why[i])
			return AL_E_NOMEM;
	}
	v->rules = rules;
	v->reasons = why;
	v->n_rules = (uint32_t)n_fired;
	return AL_OK;
}

static enum al_status check_graph(struct al_model *m, const struct al_submodel *s,
				  struct al_graph *g, enum al_rule_scope scope, int depth)
{
	if (!g || depth > AL_MAX_DEPTH + 1) /* the loaders bound nesting; this is a backstop */
		return AL_OK;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct al_node *n = &g->nodes[i];
		enum al_status st = check_node(m, s, n, scope);
		if (st)
			return st;
		if (i % 16 == 15)
			al_model_trim(m); /* see core.c: keep weight pages from piling up */
		for (uint32_t k = 0; k < n->n_sub; k++)
			if ((st = check_graph(m, s, n->sub[k], scope, depth + 1)))
				return st;
	}
	return AL_OK;
}

static enum al_status check_model(struct al_model *m, struct al_submodel *s)
{
	size_t fired[N_ROWS];
	char reasons[N_ROWS][REASON_CAP];
	size_t n_fired = 0;
	for (size_t i = 0; i < N_ROWS; i++) {
		if (rows[i].rule.scope != AL_SCOPE_MODEL || !rows[i].model)
			continue;
		reasons[n_fired][0] = '\0';
		if (rows[i].model(s, reasons[n_fired], REASON_CAP))
			fired[n_fired++] = i;
	}
	s->findings = NULL;
	s->n_findings = 0;
	if (n_fired == 0)
		return AL_OK;
	struct al_finding *f = al_arena_array(&m->arena, n_fired, sizeof *f);
	if (!f)
		return AL_E_NOMEM;
	for (size_t i = 0; i < n_fired; i++) {
		f[i].rule = &rows[fired[i]].rule;
		f[i].reason = keep_reason(&m->arena,
					  reasons[i][0] ? reasons[i] : rows[fired[i]].rule.title);
		if (!f[i].reason)
			return AL_E_NOMEM;
	}
	s->findings = f;
	s->n_findings = (uint32_t)n_fired;
	return AL_OK;
}

enum al_status al_rules_run(struct al_model *m, const struct al_check_opts *opts, al_diags *d)
{
	(void)opts; /* STUB(plan issue): targets and user rules reach the predicates here */
	if (!m)
		return AL_E_INVALID_ARG;
	enum al_status st = AL_OK;
	for (size_t i = 0; i < m->n_subs && st == AL_OK; i++) {
		struct al_submodel *s = m->subs[i];
		st = check_model(m, s);
		if (st || s->world == AL_WORLD_OTHER)
			continue;
		enum al_rule_scope scope = s->world == AL_WORLD_NN ? AL_SCOPE_NN : AL_SCOPE_MIL;
		for (uint32_t g = 0; g < s->n_graphs && st == AL_OK; g++)
			st = check_graph(m, s, s->graphs[g], scope, 0);
	}
	/* every allocation above is checked where it is made; m->arena.failed is
	 * sticky and may predate this call, so it is not consulted here */
	if (st == AL_E_NOMEM)
		al_diag_add(d, AL_SEV_ERROR, m->path, UINT64_MAX, NULL, NULL,
			    "out of memory while checking rules");
	return st;
}
