/* SPDX-License-Identifier: MIT */
/* certainty.c: how sure a placement is (issue #30): the scope of each rule's evidence
 * (rule_scope.def), the ANE status of each layer kind / op type (kind_status.c), and from
 * them every node's p_ane and three-way verdict after the partition (al_model_check).
 *
 * p_ane comes from a small table, so that it can be explained in one line:
 *   a rule that decided, in the scope of its evidence: its strength s by confidence letter
 *     and number of independent reports (A .97 / .95, M .9 / .85, G .8 / .75 for >= 2 / 1
 *     reports); the node is off the ANE with probability s (p_ane = 1 - s), or on it when
 *     the rule is a warning of ANE work (p_ane = s);
 *   outside that scope with a mechanism argument: s - .05; without one, or in a release
 *     where the reports conflict: .5 (uncertain);
 *   no rule moved it: its kind's status for the release: supported .9, no evidence .5 (a
 *     NeuralNetwork convolution with runtime weights too: the evidence is of constant ones);
 *   moved by the partition's policy (GPU / CPU stickiness, owner, resolution): .25 off /
 *     .75 on; excluded by the compute units: 0; a const op: 1.
 * verdict: ANE at p_ane >= .7, not ANE at <= .3, else uncertain. */
#include "rules.h"

#include <pthread.h>
#include <string.h>

/* ================================================================ evidence scope */

struct scope_row {
	const char *id;
	uint32_t families, releases, conflict, n_reports;
	const char *detail, *seen, *mechanism;
};

#define AL_RULE_SCOPE(id_, fam, rel, confl, n, detail_, seen_, mech) {id_, fam, rel, confl, n, detail_, seen_, mech},
static const struct scope_row scope_rows[] = {
#include "rule_scope.def"
};
#undef AL_RULE_SCOPE

/* The scope row of a built-in rule id ("ANE" and three digits), found through an index by
 * number built once: the certainty of every node asks for every rule that fired on it, and a
 * scan of the rows with strcmp was a fifth of an LLM-scale check (issue #34). */
#define SCOPE_IDS 1000
static int16_t scope_by_number[SCOPE_IDS]; /* row + 1; 0: none */
static pthread_once_t scope_once = PTHREAD_ONCE_INIT;

static int rule_number(const char *id)
{
	if (!id || strncmp(id, "ANE", 3) != 0)
		return -1;
	int n = 0;
	for (int i = 3; i < 6; i++) {
		if (id[i] < '0' || id[i] > '9')
			return -1;
		n = n * 10 + (id[i] - '0');
	}
	return id[6] ? -1 : n;
}

static void scope_index_init(void)
{
	for (size_t i = 0; i < sizeof scope_rows / sizeof scope_rows[0]; i++) {
		int n = rule_number(scope_rows[i].id);
		if (n >= 0 && !scope_by_number[n])
			scope_by_number[n] = (int16_t)(i + 1);
	}
}

static const struct scope_row *scope_row_of(const char *id)
{
	int n = rule_number(id);
	if (n >= 0) {
		pthread_once(&scope_once, scope_index_init);
		return scope_by_number[n] ? &scope_rows[scope_by_number[n] - 1] : NULL;
	}
	for (size_t i = 0; id && i < sizeof scope_rows / sizeof scope_rows[0]; i++)
		if (strcmp(scope_rows[i].id, id) == 0)
			return &scope_rows[i];
	return NULL;
}

void al_rule_evidence_of(const struct al_rule *r, struct al_rule_evidence *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof *out);
	if (!r)
		return;
	out->families = r->families;
	out->releases = r->releases;
	out->n_reports = 1;
	out->seen = r->provenance;
	/* a user rule (--rules FILE, anelint calibrate) is its author's evidence: it decides
	 * where it is evaluated */
	if (r->origin)
		return;
	const struct scope_row *row = scope_row_of(r->id);
	if (row) {
		out->families = row->families;
		out->releases = row->releases;
		out->conflict = row->conflict;
		out->n_reports = row->n_reports;
		out->seen = row->seen;
		out->detail = row->detail;
		out->mechanism = row->mechanism;
	}
}

const char *al_ane_verdict_name(enum al_ane_verdict v)
{
	switch (v) {
	case AL_VERDICT_ANE: return "ane";
	case AL_VERDICT_NOT_ANE: return "not_ane";
	case AL_VERDICT_UNCERTAIN: return "uncertain";
	}
	return "?";
}

/* ================================================================ p_ane */

#define P_SURE 0.7 /* p_ane at or above: ANE; at or below 1 - P_SURE: not ANE */

static double strength(char confidence, uint32_t n_reports)
{
	bool many = n_reports >= 2;
	switch (confidence) {
	case 'A': return many ? 0.97 : 0.95;
	case 'M': return many ? 0.9 : 0.85;
	default: return many ? 0.8 : 0.75;
	}
}

/* Why a verdict is uncertain: a reason, and the rule whose evidence does not reach (or NULL). */
struct why {
	const char *text;
	const struct al_rule *rule;
};

/* Release index ri lies between two releases the rule's reports saw it on (releases.def is in
 * release order): what held on the releases before and after held there too, unless a report of
 * that release disagrees (the conflict mask, tested first). A layer/op rule seen on iOS 16 and
 * iOS 18 is not uncertain on iOS 17 for want of a report of it: an op's lowering is not taken
 * out and put back. Not for the model rules (the work floor, flexible shapes, the compile
 * limits): Core ML's scheduling changes with each release, and their evidence conflicts in
 * ways no release mask holds (ANE040's RangeDim models on the ANE, release not given). */
static bool between_seen(uint32_t releases, int ri)
{
	if (ri <= 0 || ri >= 31)
		return false;
	return (releases & ((1u << ri) - 1u)) && (releases >> (ri + 1));
}

/* How much rule r, deciding at target index ti and release index ri with this reason, is
 * worth: its strength, or 0.5 outside its evidence without a mechanism; *why says so then. */
static double rule_strength(const struct al_rule *r, const char *reason, int ti, int ri, struct why *why)
{
	struct al_rule_evidence e;
	al_rule_evidence_of(r, &e);
	double s = strength(r->confidence, e.n_reports);
	bool in_fam = ti >= 0 && (e.families >> ti & 1u);
	bool in_rel = ri >= 0 && (e.releases >> ri & 1u ||
				  (r->scope != AL_SCOPE_MODEL && between_seen(e.releases, ri)));
	if (ri >= 0 && (e.conflict >> ri & 1u)) {
		*why = (struct why){"its reports disagree on this release", r};
		return 0.5;
	}
	if (e.n_reports == 0 && !e.mechanism) {
		*why = (struct why){"no report observed it", r};
		return 0.5;
	}
	bool in_detail = !e.detail || (reason && strstr(reason, e.detail));
	if (in_fam && in_rel && in_detail)
		return s;
	if (e.mechanism)
		return s - 0.05;
	why->rule = r;
	why->text = !in_rel ? "no report observed it on this OS release"
		  : !in_fam ? "no report observed it on this chip"
			    : "no report observed it in this form (its reports saw another)";
	return 0.5;
}

bool al_rule_decides_at(const struct al_rule *r, const char *reason, const struct al_target *t,
			const struct al_release *os)
{
	struct why w = {0};
	return r && rule_strength(r, reason, ali_target_index(t ? t : al_target_default()),
				  ali_release_index(os ? os : al_release_default()), &w) > 0.5;
}

/* Off the ANE by its own rules: the strongest of the fallback rules that fired (one
 * sufficient reason is enough), and *why from the first of them when none is sure. */
static double own_strength(const struct al_verdict *v, int ti, int ri, struct why *why)
{
	double best = 0;
	struct why w0 = {0};
	for (uint32_t i = 0; i < v->n_rules; i++) {
		const struct al_rule *r = v->rules[i];
		if (!r || r->kind == AL_RULE_WARN)
			continue;
		struct why w = {0};
		double s = rule_strength(r, v->reasons ? v->reasons[i] : NULL, ti, ri, &w);
		if (s > best)
			best = s;
		if (!w0.text)
			w0 = w;
	}
	if (best <= 0.5)
		*why = w0;
	return best > 0 ? best : 0.5;
}

/* Off the ANE by the model-level rules of s: the strongest of those that fired. */
static double model_strength(const struct al_submodel *s, const struct al_rule *moved_by, int ti, int ri,
			     struct why *why)
{
	double best = 0;
	struct why w0 = {0};
	for (uint32_t i = 0; s && i < s->n_findings; i++) {
		const struct al_rule *r = s->findings[i].rule;
		if (!r || r->kind == AL_RULE_WARN || r->unit == AL_UNIT_ANE || r->unit == AL_UNIT_NONE)
			continue;
		struct why w = {0};
		double x = rule_strength(r, s->findings[i].reason, ti, ri, &w);
		if (x > best)
			best = x;
		if (r == moved_by || !w0.text)
			w0 = w;
	}
	if (best == 0) /* the partition's own rule (ANE072), not a finding */
		best = rule_strength(moved_by, NULL, ti, ri, &w0);
	if (best <= 0.5)
		*why = w0;
	return best;
}

/* A warning of ANE work (unit ANE) that fired and is in scope: evidence the node runs on
 * the ANE (ANE068: fp32 I/O casts on the ANE from iOS 26). */
static const struct al_rule *ane_warning(const struct al_verdict *v)
{
	for (uint32_t i = 0; i < v->n_rules; i++)
		if (v->rules[i] && v->rules[i]->kind == AL_RULE_WARN && v->rules[i]->unit == AL_UNIT_ANE &&
		    strcmp(v->rules[i]->id, ALI_RULE_UNKNOWN_KIND) != 0 && v->rules[i]->confidence != 'G')
			return v->rules[i];
	return NULL;
}

/* A NeuralNetwork convolution that takes its weights as a second input (from Core ML 3; what
 * nn-attention-split-heads writes): its kind's evidence (kind_status.c) is of constant weights. */
static bool runtime_weights(bool nn, const struct al_node *n)
{
	return nn && n->kind == AL_NNK_convolution && n->n_inputs > 1;
}

void ali_certainty(struct al_node *n, const struct al_submodel *s, const struct al_target *t,
		   const struct al_release *os)
{
	bool nn = s && s->world == AL_WORLD_NN;
	struct al_verdict *v = &n->verdict;
	int ti = ali_target_index(t ? t : al_target_default());
	int ri = ali_release_index(os ? os : al_release_default());
	struct why why = {0};
	double p;
	if (!nn && (ali_rx_mil_flags(n) & AL_OPF_CONST)) {
		p = 1.0;
	} else if (v->unknown) {
		p = 0.5;
		why.text = "the model does not say what the layer is";
	} else if (v->place == AL_PLACE_UNITS) {
		p = v->placed_ane ? 1.0 : 0.0;
	} else if (v->place == AL_PLACE_MODEL && v->moved_by) {
		double k = model_strength(s, v->moved_by, ti, ri, &why);
		if (!v->ane) { /* its own rules send it off the ANE too */
			struct why w2 = {0};
			double k2 = own_strength(v, ti, ri, &w2);
			if (k2 > k)
				k = k2, why = w2;
		}
		p = v->placed_ane ? k : 1.0 - k;
	} else if (v->place == AL_PLACE_SMALL && v->moved_by) {
		double k = rule_strength(v->moved_by, NULL, ti, ri, &why);
		p = v->placed_ane ? k : 1.0 - k;
	} else if (v->place == AL_PLACE_VERDICT || v->place == AL_PLACE_RESOLVED) {
		const struct al_rule *w = v->ane ? ane_warning(v) : NULL;
		const char *prov = NULL;
		struct why ww = {0};
		if (!v->ane) {
			p = 1.0 - own_strength(v, ti, ri, &why);
		} else if (w && rule_strength(w, NULL, ti, ri, &ww) > 0.5) {
			p = rule_strength(w, NULL, ti, ri, &ww);
		} else {
			char st = al_kind_ane_status(nn, n->type, os, &prov);
			p = st == 'S' ? 0.9 : 0.5;
			why.text = st == 'S' ? NULL : "no report saw this layer kind on the ANE on this OS release";
			if (st == 'S' && runtime_weights(nn, n)) {
				p = 0.5;
				why.text = "a convolution whose weights are a runtime input: the reports saw "
					   "convolutions with constant weights on the ANE; with runtime weights "
					   "the one report (catalog O15, the direct path) saw them ignored";
			}
		}
		if (!v->placed_ane && v->ane) /* the policy moved it after all */
			p = 0.25;
	} else {
		p = v->placed_ane ? 0.75 : 0.25;
	}
	v->p_ane = p;
	v->verdict = p >= P_SURE ? AL_VERDICT_ANE : p <= 1.0 - P_SURE ? AL_VERDICT_NOT_ANE : AL_VERDICT_UNCERTAIN;
	bool unsure = v->verdict == AL_VERDICT_UNCERTAIN;
	v->uncertain = unsure ? (why.text ? why.text : "the evidence is weak here") : NULL;
	v->uncertain_rule = unsure ? why.rule : NULL;
}
