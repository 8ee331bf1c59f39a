/* SPDX-License-Identifier: MIT */
/* report_json.c: the JSON sink (schema in docs/json-schema.md, versioned by
 * ANELINT_JSON_SCHEMA_VERSION). check's document is written as a stream
 * (ali_jw, report_jsonw.c, which says why), info's is built with json-c; both
 * escape every string from a hostile file the same way, and write keys in a
 * fixed order so the output is stable for golden tests and diffs. */
#include "report.h"
#include "interp.h" /* ali_nn_class_labels */

#include <json-c/json.h>
#include <string.h>

static json_object *str_or_null(const char *s)
{
	return s ? ali_json_string(s) : NULL;
}

static json_object *int64_array(const int64_t *v, uint32_t n)
{
	json_object *a = json_object_new_array_ext((int)n);
	for (uint32_t i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_int64(v[i]));
	return a;
}

static json_object *diag_json(const struct al_diag *x)
{
	json_object *o = json_object_new_object();
	static const char *const sev[] = {"note", "warning", "error"};
	json_object_object_add(o, "severity", ali_json_string(sev[x->severity]));
	json_object_object_add(o, "file", str_or_null(x->file));
	json_object_object_add(o, "offset",
			       x->offset == UINT64_MAX ? NULL : json_object_new_int64((int64_t)x->offset));
	json_object_object_add(o, "where", str_or_null(x->where));
	json_object_object_add(o, "node", str_or_null(x->node));
	json_object_object_add(o, "message", ali_json_string(x->msg));
	return o;
}

static json_object *diags_json(const al_diags *d, bool errors_only)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < al_diags_count(d); i++) {
		const struct al_diag *x = al_diags_get(d, i);
		if (!errors_only || x->severity == AL_SEV_ERROR)
			json_object_array_add(a, diag_json(x));
	}
	return a;
}

/* ================================================================ check */

/* check's document is written as a stream (ali_jw, report_jsonw.c: why), in
 * the key order the json-c tree had; info is small and stays a tree (plan's is
 * streamed too: report_plan.c). */

static void jw_conf(struct ali_jw *w, const char *key, char c)
{
	char s[2] = {c ? c : '?', 0};
	ali_jw_str(w, key, s);
}

/* The chip families and OS releases a rule applies to, on a finding (they say
 * where the prediction holds; explain and the rules table give the same). */
static void jw_scope(struct ali_jw *w, const struct al_rule *rule)
{
	char buf[128];
	al_rule_families(rule, buf, sizeof buf);
	ali_jw_str(w, "families", buf);
	al_rule_releases(rule, buf, sizeof buf);
	ali_jw_str(w, "releases", buf);
}

struct layers_ctx {
	struct ali_jw *w;
	uint32_t row;
	size_t k; /* the sub-model's index in its model (the matrix's) */
	const struct sub_rec *matrix;
	const struct al_report_opts *o;
	const struct al_submodel *s;
	const struct al_report_item *it; /* its deployment range (by_release) */
};

/* "by_release" (issue #30): on a layer whose unit or verdict differs inside the
 * model's deployment range, every release of it as runs of equal placement,
 * oldest first: releases ("ios15" or "ios15..ios16"), unit, verdict, op_unit,
 * and rule when one moves the op itself off the ANE there. */
static void jw_by_release(struct ali_jw *w, const struct layers_ctx *c, const struct al_node *n)
{
	unsigned f;
	int lo, hi;
	const struct ali_range_cell *cells = ali_range_node(c->it, c->k, n, &f);
	if (!cells || !ali_range_of(c->it, &lo, &hi))
		return;
	struct ali_range_group g[AL_REL_COUNT];
	size_t ng = ali_range_groups(cells, lo, hi, g, AL_REL_COUNT);
	ali_jw_array(w, "by_release");
	for (size_t i = 0; i < ng && i < AL_REL_COUNT; i++) {
		char name[48];
		ali_range_name(name, sizeof name, g[i].lo, g[i].hi, true);
		ali_jw_object(w, NULL);
		ali_jw_str(w, "releases", name);
		ali_jw_str(w, "unit", ali_range_unit_name(g[i].unit));
		ali_jw_str(w, "verdict", al_ane_verdict_name((enum al_ane_verdict)g[i].verdict));
		ali_jw_str(w, "op_unit", ali_range_unit_name(g[i].own));
		if (g[i].rule)
			ali_jw_str(w, "rule", g[i].rule->id);
		ali_jw_end(w);
	}
	ali_jw_end(w);
}

/* "deployment_range" in the summary, only when a verdict varies inside it:
 * releases (ids), varying (layers), op_varying (those whose own verdict varies). */
static void jw_range_summary(struct ali_jw *w, const struct al_report_item *it, size_t k)
{
	int lo, hi;
	uint32_t own, n = ali_range_varying(it, k, &own);
	if (!n || !ali_range_of(it, &lo, &hi))
		return;
	char name[48];
	ali_range_name(name, sizeof name, lo, hi, true);
	ali_jw_object(w, "deployment_range");
	ali_jw_str(w, "releases", name);
	ali_jw_int(w, "varying", n);
	ali_jw_int(w, "op_varying", own);
	ali_jw_end(w);
}

/* "suppressed": {"kind", "reason"} on a finding the options accept (a suppression
 * in the configuration or the model's metadata, a baseline): shown, not dropped. */
static void jw_suppressed_as(struct ali_jw *w, const char *key, const struct al_report_opts *o,
			     const struct al_submodel *s, const char *layer, const struct al_rule *r)
{
	const char *kind;
	const char *why = ali_accepted(o, s, layer, r, &kind);
	if (!why)
		return;
	ali_jw_object(w, key);
	ali_jw_str(w, "kind", kind);
	ali_jw_str(w, "reason", why);
	ali_jw_end(w);
}

static void jw_suppressed(struct ali_jw *w, const struct al_report_opts *o, const struct al_submodel *s,
			  const char *layer, const struct al_rule *r)
{
	jw_suppressed_as(w, "suppressed", o, s, layer, r);
}

/* One inferred shape: dtype, rank and dims (null when unknown), flex (indices
 * of the dims that follow a flexible input). */
static void jw_shape(struct ali_jw *w, const struct al_shape *sh)
{
	ali_jw_object(w, NULL);
	ali_jw_str(w, "dtype", sh->dtype ? al_dtype_name(sh->dtype) : NULL);
	if (sh->rank >= 0)
		ali_jw_int(w, "rank", sh->rank);
	else
		ali_jw_null(w, "rank");
	if (sh->rank >= 0) {
		ali_jw_array(w, "dims");
		for (int i = 0; i < sh->rank; i++) {
			if (i < AL_SHAPE_MAX_RANK && sh->dims[i] >= 0)
				ali_jw_int(w, NULL, sh->dims[i]);
			else
				ali_jw_null(w, NULL);
		}
		ali_jw_end(w);
	} else {
		ali_jw_null(w, "dims");
	}
	ali_jw_array(w, "flex");
	for (int i = 0; i < sh->rank && i < AL_SHAPE_MAX_RANK; i++)
		if (sh->flex >> i & 1)
			ali_jw_int(w, NULL, i);
	ali_jw_end(w);
	ali_jw_end(w);
}

static void jw_shapes(struct ali_jw *w, const struct al_node *n)
{
	if (!n->out_shapes && n->n_outputs) {
		ali_jw_null(w, "shapes");
		return;
	}
	ali_jw_array(w, "shapes");
	for (uint32_t i = 0; n->out_shapes && i < n->n_outputs; i++)
		jw_shape(w, &n->out_shapes[i]);
	ali_jw_end(w);
}

static void jw_cost(struct ali_jw *w, const struct al_cost *c)
{
	ali_jw_object(w, "cost");
	double f = c->flops >= 0 && c->flops < 9e18 ? c->flops + 0.5 : 0;
	ali_jw_int(w, "flops", (int64_t)f);
	ali_jw_int(w, "param_bytes", (int64_t)(c->param_bytes & INT64_MAX));
	ali_jw_int(w, "act_bytes", (int64_t)(c->act_bytes & INT64_MAX));
	ali_jw_bool(w, "known", c->known);
	ali_jw_end(w);
}

static void jw_strings(struct ali_jw *w, const char *key, const char *const *v, uint32_t n)
{
	ali_jw_array(w, key);
	for (uint32_t i = 0; i < n; i++)
		ali_jw_str(w, NULL, v[i] ? v[i] : "");
	ali_jw_end(w);
}

static void layer_json(void *vctx, const struct al_node *n)
{
	struct layers_ctx *c = vctx;
	struct ali_jw *w = c->w;
	const struct al_graph *g = n->owner;
	uint32_t row = c->row++;
	ali_jw_object(w, NULL);
	ali_jw_int(w, "index", row);
	ali_jw_str(w, "name", n->name ? n->name : "");
	ali_jw_str(w, "type", n->type ? n->type : "");
	ali_jw_str(w, "function", g ? g->function : NULL);
	ali_jw_str(w, "block", g && (g->function || g->depth) ? g->block : NULL);
	ali_jw_int(w, "depth", g ? g->depth : 0);
	/* ane / unit: the final placement; op_ane / op_unit: the op's own eligibility */
	/* a unit unknown (ANE057): "unit"/"op_unit" "unknown", "ane"/"op_ane" false */
	/* verdict / p_ane (schema 3): how sure; "ane" is null when the verdict is uncertain */
	const struct al_verdict *v = &n->verdict;
	if (v->verdict == AL_VERDICT_UNCERTAIN)
		ali_jw_null(w, "ane");
	else
		ali_jw_bool(w, "ane", v->placed_ane && !v->unknown);
	ali_jw_str(w, "verdict", al_ane_verdict_name(v->verdict));
	char p_text[16];
	snprintf(p_text, sizeof p_text, "%.2f", v->p_ane);
	ali_jw_raw(w, "p_ane", p_text);
	if (v->verdict == AL_VERDICT_UNCERTAIN) {
		char why[160];
		ali_jw_str(w, "uncertain", ali_uncertain_text(v, why, sizeof why));
	}
	ali_jw_str(w, "unit", ali_placed_name(v));
	ali_jw_bool(w, "op_ane", v->ane && !v->unknown);
	ali_jw_str(w, "op_unit", v->unknown ? "unknown" : al_unit_name(v->unit));
	if (v->unknown)
		ali_jw_bool(w, "unknown", true);
	if (v->place != AL_PLACE_VERDICT)
		ali_jw_str(w, "moved_by", ali_moved_by(v));
	if (v->moved_by && ali_verdict_moved(v)) /* the move accepted as a finding */
		jw_suppressed_as(w, "moved_suppressed", c->o, c->s, ali_move_layer(n, v), v->moved_by);
	jw_conf(w, "confidence", v->confidence);
	ali_jw_array(w, "rules");
	for (uint32_t r = 0; r < v->n_rules; r++)
		ali_jw_str(w, NULL, v->rules[r]->id);
	ali_jw_end(w);
	/* "reason": the findings' reasons joined by "; " */
	size_t reason_len = 0;
	for (uint32_t r = 0; r < v->n_rules; r++)
		reason_len += strlen(v->reasons[r]) + 2;
	char stack[512], *reason = reason_len < sizeof stack ? stack : ali_malloc(reason_len + 1);
	if (reason) {
		size_t at = 0;
		for (uint32_t r = 0; r < v->n_rules; r++) {
			size_t len = strlen(v->reasons[r]);
			if (r)
				memcpy(reason + at, "; ", 2), at += 2;
			memcpy(reason + at, v->reasons[r], len);
			at += len;
		}
		reason[at] = 0;
	}
	ali_jw_str(w, "reason", reason ? reason : "");
	if (reason != stack)
		ali_free(reason);
	ali_jw_array(w, "findings");
	for (uint32_t r = 0; r < v->n_rules; r++) {
		const struct al_rule *rule = v->rules[r];
		ali_jw_object(w, NULL);
		ali_jw_str(w, "rule", rule->id);
		ali_jw_str(w, "kind", al_rule_kind_name(rule->kind));
		jw_conf(w, "confidence", rule->confidence);
		jw_scope(w, rule);
		ali_jw_str(w, "reason", v->reasons[r]);
		jw_suppressed(w, c->o, c->s, n->name, rule);
		ali_jw_end(w);
	}
	ali_jw_end(w);
	jw_strings(w, "inputs", n->inputs, n->n_inputs);
	jw_strings(w, "outputs", n->outputs, n->n_outputs);
	const char *weights = ali_node_weights(n); /* where the op came from, as far as the file says */
	if (weights)
		ali_jw_str(w, "weights", weights);
	ali_jw_str(w, "path", n->path);
	ali_jw_int(w, "offset", (int64_t)n->offset);
	jw_shapes(w, n);
	jw_cost(w, &n->cost);
	if (c->matrix)
		ali_jw_matrix_layer(w, c->matrix, c->k, row, c->o);
	jw_by_release(w, c, n);
	ali_jw_end(w);
}

static void jw_summary(struct ali_jw *w, const struct al_report_item *it, size_t sub, const struct al_submodel *s,
		       const struct al_check_opts *co, const struct al_report_opts *ro)
{
	struct al_summary sum;
	ali_summarize(s, NULL, &sum);
	ali_jw_object(w, "summary");
	ali_jw_int(w, "layers", sum.nodes);
	ali_jw_int(w, "consts", sum.consts);
	ali_jw_object(w, "units");
	for (int u = 0; u < AL_UNIT_COUNT; u++)
		if (u != AL_UNIT_NONE)
			ali_jw_int(w, al_unit_name(u), sum.per_unit[u]);
	if (sum.unknown)
		ali_jw_int(w, "unknown", sum.unknown);
	ali_jw_end(w);
	ali_jw_int(w, "ane_eligible", sum.eligible);
	double share = sum.nodes ? (double)sum.per_unit[AL_UNIT_ANE] / sum.nodes : 0.0;
	char buf[32];
	snprintf(buf, sizeof buf, "%.4f", share);
	ali_jw_raw(w, "ane_share", buf);
	/* issue #30: N on the ANE, M off, K uncertain, and the share if the uncertain go either way */
	ali_jw_object(w, "verdicts");
	for (int k = 0; k < 3; k++)
		ali_jw_int(w, al_ane_verdict_name((enum al_ane_verdict)k), sum.verdicts[k]);
	ali_jw_end(w);
	ali_jw_array(w, "ane_share_range");
	snprintf(buf, sizeof buf, "%.4f", sum.nodes ? (double)sum.verdicts[AL_VERDICT_ANE] / sum.nodes : 0.0);
	ali_jw_raw(w, NULL, buf);
	snprintf(buf, sizeof buf, "%.4f", sum.nodes ? (double)(sum.verdicts[AL_VERDICT_ANE] + sum.verdicts[AL_VERDICT_UNCERTAIN]) / sum.nodes : 0.0);
	ali_jw_raw(w, NULL, buf);
	ali_jw_end(w);
	ali_jw_array(w, "rules");
	for (uint32_t i = 0; i < sum.n_top; i++) {
		ali_jw_object(w, NULL);
		ali_jw_str(w, "rule", sum.top[i].rule->id);
		ali_jw_int(w, "count", sum.top[i].count);
		ali_jw_end(w);
	}
	ali_jw_end(w);
	/* the layers placed elsewhere than their own verdict, by the rule that moved them */
	ali_jw_int(w, "moved", sum.moved);
	ali_jw_array(w, "moved_by");
	for (uint32_t i = 0; i < sum.n_moves; i++) {
		ali_jw_object(w, NULL);
		ali_jw_str(w, "rule", sum.moves[i].rule ? sum.moves[i].rule->id : "");
		ali_jw_int(w, "count", sum.moves[i].count);
		ali_jw_object(w, "units");
		for (int u = 0; u < AL_UNIT_COUNT; u++)
			if (u != AL_UNIT_NONE && sum.moves[i].per_unit[u])
				ali_jw_int(w, al_unit_name(u), sum.moves[i].per_unit[u]);
		ali_jw_end(w);
		ali_jw_end(w);
	}
	ali_jw_end(w);
	/* what fails the check (the exit status, --format github's ::error) */
	struct ali_failing f;
	ali_failing_count(ro, co, NULL, s, &f);
	ali_jw_int(w, "failing", f.n);
	ali_jw_array(w, "failing_rules");
	for (uint32_t i = 0; i < f.n_rules; i++) {
		ali_jw_object(w, NULL);
		ali_jw_str(w, "rule", f.by_rule[i].rule->id);
		ali_jw_int(w, "count", f.by_rule[i].count);
		ali_jw_end(w);
	}
	ali_jw_end(w);
	jw_range_summary(w, it, sub);
	ali_jw_end(w);
}

static void jw_check_model(struct ali_jw *w, const struct al_report_item *it, size_t k,
			   const struct sub_rec *matrix, const struct al_report_opts *ro)
{
	const struct al_submodel *s = al_model_get(it->model, k);
	ali_jw_object(w, NULL);
	ali_jw_submodel_head(w, s);
	jw_summary(w, it, k, s, ali_item_check(it, ro), ro);
	ali_jw_array(w, "findings");
	for (uint32_t i = 0; i < s->n_findings; i++) {
		const struct al_finding *x = &s->findings[i];
		ali_jw_object(w, NULL);
		ali_jw_str(w, "rule", x->rule->id);
		ali_jw_str(w, "kind", al_rule_kind_name(x->rule->kind));
		ali_jw_str(w, "unit", al_unit_name(x->rule->unit));
		jw_conf(w, "confidence", x->rule->confidence);
		jw_scope(w, x->rule);
		ali_jw_str(w, "reason", x->reason ? x->reason : "");
		jw_suppressed(w, ro, s, NULL, x->rule);
		ali_jw_end(w);
	}
	ali_jw_end(w);
	ali_jw_array(w, "layers");
	struct layers_ctx c = {.w = w, .k = k, .matrix = matrix, .o = ro, .s = s, .it = it};
	ali_walk_nodes(s, layer_json, &c);
	ali_jw_end(w);
	if (ali_item_own_prediction(it, ro)) { /* a [[model]] of the configuration */
		const struct al_check_opts *co = ali_item_check(it, ro);
		const struct al_target *tg = co && co->target ? co->target : al_target_default();
		const struct al_release *os = co && co->os ? co->os : al_release_default();
		ali_jw_object(w, "prediction");
		ali_jw_str(w, "target", tg->id);
		ali_jw_str(w, "os", os->id);
		ali_jw_str(w, "compute_units", al_compute_units_name(co ? co->compute_units : AL_CU_DEFAULT));
		ali_jw_end(w);
	}
	if (matrix)
		ali_jw_matrix_model(w, matrix, k, ro);
	ali_jw_end(w);
}

/* check's document: the head (up to the opened "models" array), one model, and
 * the tail (the errors kept, comparisons, columns); json_check and the stream. */
static void json_check_head(struct ali_jw *w, const struct al_report_opts *o)
{
	ali_jw_object(w, NULL);
	ali_jw_str(w, "anelint", ANELINT_VERSION);
	ali_jw_int(w, "schema", ANELINT_JSON_SCHEMA_VERSION);
	ali_jw_str(w, "command", "check");
	/* what the verdicts are predicted for: chip family, OS release, compute units
	 * ("all" for the columns of --target all / --os all) */
	const struct al_check_opts *co = o->check;
	const struct al_target *tg = co && co->target ? co->target : al_target_default();
	const struct al_release *os = co && co->os ? co->os : al_release_default();
	ali_jw_object(w, "prediction");
	if (o->n_columns) { /* explicit columns: their targets and releases, in order, once each */
		char tl[512] = "", rl[512] = "";
		for (size_t t = 0; t < ali_columns(o); t++) {
			const char *ti = ali_column_target(o, t)->id, *ri = ali_column_os(o, t)->id;
			bool seen_t = false, seen_r = false;
			for (size_t u = 0; u < t; u++) {
				seen_t |= ali_column_target(o, u) == ali_column_target(o, t);
				seen_r |= ali_column_os(o, u) == ali_column_os(o, t);
			}
			if (!seen_t && strlen(tl) + strlen(ti) + 2 < sizeof tl)
				strcat(strcat(tl, *tl ? "," : ""), ti);
			if (!seen_r && strlen(rl) + strlen(ri) + 2 < sizeof rl)
				strcat(strcat(rl, *rl ? "," : ""), ri);
		}
		ali_jw_str(w, "target", tl);
		ali_jw_str(w, "os", rl);
	} else {
		ali_jw_str(w, "target", o->all_targets ? "all" : tg->id);
		ali_jw_str(w, "os", o->all_releases && !o->all_targets ? "all" : os->id);
	}
	ali_jw_str(w, "compute_units", al_compute_units_name(co ? co->compute_units : AL_CU_DEFAULT));
	ali_jw_end(w);
	ali_jw_array(w, "models");
}

static void json_check_model(struct ali_jw *w, const struct al_report_item *it, const struct al_report_opts *o)
{
	if (!it->model)
		return;
	/* "units" per target / release on every layer: report_matrix.c */
	struct sub_rec *matrix = ali_multi(o) ? ali_matrix_record(it, o) : NULL;
	for (size_t k = 0; k < al_model_count(it->model); k++)
		jw_check_model(w, it, k, matrix, o);
	ali_matrix_free(matrix, it);
}

/* A model that cannot be read, for "errors": path, status, diagnostics. */
static json_object *json_check_error(const struct al_report_item *it)
{
	json_object *e = json_object_new_object();
	json_object_object_add(e, "path", ali_json_string(it->path ? it->path : ""));
	json_object_object_add(e, "status", ali_json_string(al_status_str(it->status)));
	json_object_object_add(e, "diagnostics", diags_json(it->diags, true));
	return e;
}

static void json_check(FILE *out, const struct al_report_item *items, size_t n,
		       const struct al_report_opts *o)
{
	struct ali_jw jw, *w = &jw;
	ali_jw_init(w, out);
	json_check_head(w, o);
	for (size_t i = 0; i < n; i++)
		json_check_model(w, &items[i], o);
	ali_jw_end(w);
	ali_jw_array(w, "errors");
	for (size_t i = 0; i < n; i++) {
		if (items[i].model)
			continue;
		json_object *e = json_check_error(&items[i]);
		ali_jw_tree(w, NULL, e);
		json_object_put(e);
	}
	ali_jw_end(w);
	bool cmps = false; /* report --evidence: one anelint-compare document per model */
	for (size_t i = 0; i < n; i++)
		if (items[i].comparison) {
			if (!cmps)
				ali_jw_array(w, "comparisons");
			cmps = true;
			json_object *j = ali_comparison_json(items[i].comparison);
			ali_jw_tree(w, NULL, j);
			json_object_put(j);
		}
	if (cmps)
		ali_jw_end(w);
	if (ali_multi(o))
		ali_jw_matrix_columns(w, o);
	ali_jw_end(w);
	ali_jw_finish(w);
}

/* ================================================================ info */

static json_object *info_head(const struct al_submodel *s)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "path", ali_json_string(s->path ? s->path : ""));
	json_object_object_add(o, "file", str_or_null(s->file));
	json_object_object_add(o, "type", ali_json_string(s->type ? s->type : ""));
	json_object_object_add(o, "spec_version", json_object_new_int(s->spec_version));
	json_object_object_add(o, "min_os", ali_json_string(al_spec_min_os(s->spec_version)));
	json_object_object_add(o, "depth", json_object_new_int(s->depth));
	return o;
}

static void emit(FILE *out, json_object *root)
{
	const char *s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							       JSON_C_TO_STRING_SPACED |
							       JSON_C_TO_STRING_NOSLASHESCAPE);
	fputs(s, out);
	fputc('\n', out);
	json_object_put(root);
}

static json_object *feature_json(const struct al_feature *f)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "name", ali_json_string(f->name ? f->name : ""));
	json_object_object_add(o, "kind", ali_json_string(al_feature_kind_name(f->kind)));
	if (f->kind == AL_FEAT_MULTIARRAY || f->kind == AL_FEAT_IMAGE || f->kind == AL_FEAT_STATE) {
		json_object_object_add(o, "dtype", ali_json_string(al_dtype_name(f->dtype)));
		json_object_object_add(o, "shape", int64_array(f->shape, f->rank));
	}
	if (f->kind == AL_FEAT_IMAGE)
		json_object_object_add(o, "color_space", json_object_new_int(f->color_space));
	json_object_object_add(o, "optional", json_object_new_boolean(f->optional));
	static const char *const flex[] = {"none", "enumerated", "range"};
	json_object_object_add(o, "flexibility", ali_json_string(flex[f->flex]));
	uint32_t r = f->kind == AL_FEAT_IMAGE ? 2 : f->rank;
	if (f->flex == AL_FLEX_ENUMERATED) {
		json_object *shapes = json_object_new_array();
		for (uint32_t i = 0; i < f->n_shapes && r; i++)
			json_object_array_add(shapes, int64_array(f->flex_values + (size_t)i * r, r));
		json_object_object_add(o, "shapes", shapes);
	} else if (f->flex == AL_FLEX_RANGE) {
		json_object *ranges = json_object_new_array();
		for (uint32_t i = 0; i < r; i++)
			json_object_array_add(ranges, int64_array(f->flex_values + 2 * (size_t)i, 2));
		json_object_object_add(o, "ranges", ranges);
	}
	json_object_object_add(o, "description", str_or_null(f->description));
	return o;
}

static json_object *features_json(const struct al_feature *f, uint32_t n)
{
	json_object *a = json_object_new_array();
	for (uint32_t i = 0; i < n; i++)
		json_object_array_add(a, feature_json(&f[i]));
	return a;
}

/* "class_labels": a NeuralNetwork classifier's labels (the first 10000), strings
 * or integers; absent for other models. */
static void class_labels_json(json_object *o, const struct al_submodel *s)
{
	enum { MAX = 10000 };
	bool is_int = false;
	long n = s->world == AL_WORLD_NN ? ali_nn_class_labels(s, NULL, NULL, 0, &is_int) : -1;
	if (n < 0)
		return;
	size_t k = n < MAX ? (size_t)n : MAX;
	al_span *str = k ? calloc(k, sizeof *str) : NULL;
	int64_t *ints = k ? calloc(k, sizeof *ints) : NULL;
	json_object *a = json_object_new_array();
	if (k && str && ints && ali_nn_class_labels(s, str, ints, k, &is_int) >= 0)
		for (size_t i = 0; i < k; i++) {
			if (is_int) {
				json_object_array_add(a, json_object_new_int64(ints[i]));
				continue;
			}
			char *t = malloc(str[i].n + 1);
			if (!t)
				break;
			memcpy(t, str[i].p, str[i].n);
			t[str[i].n] = 0;
			json_object_array_add(a, ali_json_string(t));
			free(t);
		}
	free(str);
	free(ints);
	json_object_object_add(o, "class_labels", a);
	json_object_object_add(o, "class_label_count", json_object_new_int64(n));
}

/* Each function with its own interface: a multifunction package's from its
 * FunctionDescription, else the model's (text info shows the same). */
static json_object *functions_json(const struct al_submodel *s)
{
	json_object *fns = json_object_new_array();
	for (uint32_t i = 0; i < s->n_functions; i++) {
		json_object *f = json_object_new_object();
		json_object_object_add(f, "name", ali_json_string(s->functions[i]));
		json_object_object_add(f, "opset", str_or_null(s->opsets ? s->opsets[i] : NULL));
		/* the one the description names, else the only one (or main) */
		bool dflt = s->functions[i] && (s->default_function ? strcmp(s->default_function, s->functions[i]) == 0
						: s->n_functions == 1 || strcmp(s->functions[i], "main") == 0);
		json_object_object_add(f, "default", json_object_new_boolean(dflt));
		const struct al_feature *in = s->inputs, *out = s->outputs, *st = s->states;
		uint32_t n_in = s->n_inputs, n_out = s->n_outputs, n_st = s->n_states;
		for (uint32_t d = 0; s->n_functions > 1 && d < s->n_fdescs; d++) {
			const struct al_function_desc *fd = &s->fdescs[d];
			if (fd->name && s->functions[i] && strcmp(fd->name, s->functions[i]) == 0) {
				in = fd->inputs, n_in = fd->n_inputs;
				out = fd->outputs, n_out = fd->n_outputs;
				st = fd->states, n_st = fd->n_states;
			}
		}
		json_object_object_add(f, "inputs", features_json(in, n_in));
		json_object_object_add(f, "outputs", features_json(out, n_out));
		json_object_object_add(f, "states", features_json(st, n_st));
		json_object_array_add(fns, f);
	}
	return fns;
}

/* Every compressed weight of an ML Program (a constexpr_* op of a function's
 * top-level block): how it is stored, from the types only (ali_mil_weight_info). */
static json_object *weight_forms_json(const struct al_submodel *s)
{
	json_object *a = json_object_new_array();
	for (uint32_t gi = 0; s->world == AL_WORLD_MIL && gi < s->n_graphs; gi++)
		for (uint32_t i = 0; s->graphs[gi] && i < s->graphs[gi]->n_nodes; i++) {
			const struct al_node *n = &s->graphs[gi]->nodes[i];
			struct ali_weight_form w;
			char form[80];
			if (!ali_mil_weight_info(n, &w) || !ali_mil_weight_form(n, form, sizeof form))
				continue;
			json_object *o = json_object_new_object();
			json_object_object_add(o, "function", str_or_null(s->graphs[gi]->function));
			json_object_object_add(o, "name", str_or_null(n->n_outputs ? n->outputs[0] : n->name));
			json_object_object_add(o, "op", ali_json_string(n->type));
			json_object_object_add(o, "form", ali_json_string(form));
			json_object_object_add(o, "storage", ali_json_string(ali_weight_storage_name(w.storage)));
			json_object_object_add(o, "dtype", ali_json_string(al_dtype_name(w.dtype)));
			json_object_object_add(o, "bits", json_object_new_int(w.bits));
			json_object_object_add(o, "granularity",
					       w.gran ? ali_json_string(ali_weight_gran_name(w.gran)) : NULL);
			json_object_object_add(o, "axis", w.axis >= 0 ? json_object_new_int(w.axis) : NULL);
			json_object_object_add(o, "block", w.gran == ALI_GRAN_BLOCK ? json_object_new_int64(w.size) : NULL);
			json_object_object_add(o, "group", w.gran == ALI_GRAN_GROUPED ? json_object_new_int64(w.size) : NULL);
			json_object_object_add(o, "vector", json_object_new_int64(w.vector ? w.vector : 1));
			json_object_object_add(o, "sparse", json_object_new_boolean(w.sparse));
			json_object_object_add(o, "offset", json_object_new_boolean(w.offset));
			json_object_array_add(a, o);
		}
	return a;
}

static json_object *info_json(const struct al_submodel *s)
{
	json_object *o = info_head(s);
	json_object_object_add(o, "inputs", features_json(s->inputs, s->n_inputs));
	json_object_object_add(o, "outputs", features_json(s->outputs, s->n_outputs));
	if (s->world == AL_WORLD_NN) {
		json_object_object_add(o, "array_shape_mapping",
				       ali_json_string(s->array_mapping ? "exact" : "rank5"));
		json_object_object_add(o, "image_shape_mapping",
				       ali_json_string(s->image_mapping ? "rank4" : "rank5"));
	}
	json_object_object_add(o, "updatable", json_object_new_boolean(s->is_updatable));
	json_object_object_add(o, "states", features_json(s->states, s->n_states));
	json_object_object_add(o, "default_function", str_or_null(s->default_function));
	json_object_object_add(o, "functions", functions_json(s));
	json_object_object_add(o, "compressed_weights", weight_forms_json(s));
	struct al_type_counts tc;
	ali_count_types(s, &tc);
	json_object *types = json_object_new_object();
	for (uint32_t t = 0; t < tc.n; t++)
		json_object_object_add(types, tc.items[t].type, json_object_new_int64(tc.items[t].count));
	json_object_object_add(o, "layer_types", types);
	json_object_object_add(o, "pipeline_stages", json_object_new_int64(s->n_children));
	class_labels_json(o, s);
	json_object *w = json_object_new_object();
	json_object_object_add(w, "fp32", json_object_new_int64((int64_t)s->weights.fp32));
	json_object_object_add(w, "fp16", json_object_new_int64((int64_t)s->weights.fp16));
	json_object_object_add(w, "quantized", json_object_new_int64((int64_t)s->weights.quantized));
	json_object_object_add(w, "other", json_object_new_int64((int64_t)s->weights.other));
	json_object_object_add(w, "tensors", json_object_new_int64(s->weights.n_blobs));
	json_object_object_add(o, "weight_bytes", w);
	json_object *meta = json_object_new_object();
	json_object_object_add(meta, "short_description", str_or_null(s->short_description));
	json_object_object_add(meta, "author", str_or_null(s->author));
	json_object_object_add(meta, "license", str_or_null(s->license));
	json_object_object_add(meta, "version", str_or_null(s->version_string));
	json_object *ud = json_object_new_object();
	for (uint32_t u = 0; u < s->n_user_defined; u++)
		json_object_object_add(ud, s->user_defined[u].key, ali_json_string(s->user_defined[u].value));
	json_object_object_add(meta, "user_defined", ud);
	json_object_object_add(o, "metadata", meta);
	return o;
}

static void json_info(FILE *out, const struct al_report_item *items, size_t n,
		      const struct al_report_opts *o)
{
	json_object *root = json_object_new_object();
	json_object_object_add(root, "anelint", ali_json_string(ANELINT_VERSION));
	json_object_object_add(root, "schema", json_object_new_int(ANELINT_JSON_SCHEMA_VERSION));
	json_object_object_add(root, "command", ali_json_string("info"));
	json_object *models = json_object_new_array();
	json_object *errors = json_object_new_array();
	for (size_t i = 0; i < n; i++) {
		if (!items[i].model) {
			json_object *e = json_object_new_object();
			json_object_object_add(e, "path", ali_json_string(items[i].path));
			json_object_object_add(e, "diagnostics", diags_json(items[i].diags, true));
			json_object_array_add(errors, e);
			continue;
		}
		for (size_t k = 0; k < al_model_count(items[i].model); k++)
			json_object_array_add(models, info_json(al_model_get(items[i].model, k)));
	}
	json_object_object_add(root, "models", models);
	json_object_object_add(root, "errors", errors);
	emit(out, root);
}

/* ================================================================ streaming */

/* check over several models, each written as it comes (a directory argument):
 * the models array streamed; the models that cannot be read kept (path, status,
 * diagnostics: small) for "errors" at the end. info (one tree) and plan
 * (written without a tree, after every model is loaded) are not streamed here. */
struct json_stream {
	struct ali_jw w;
	const struct al_report_opts *o;
	json_object *errors;
};

static void *json_stream_begin(FILE *out, enum al_sink_cmd cmd, const struct al_report_opts *o)
{
	if (cmd != AL_SINK_CHECK)
		return NULL;
	struct json_stream *j = ali_calloc(1, sizeof *j);
	if (!j || !(j->errors = json_object_new_array())) {
		ali_free(j);
		return NULL;
	}
	j->o = o;
	ali_jw_init(&j->w, out);
	json_check_head(&j->w, o);
	return j;
}

static void json_stream_model(void *state, const struct al_report_item *it)
{
	struct json_stream *j = state;
	if (it->model)
		json_check_model(&j->w, it, j->o);
	else
		json_object_array_add(j->errors, json_check_error(it));
}

static void json_stream_end(void *state)
{
	struct json_stream *j = state;
	struct ali_jw *w = &j->w;
	ali_jw_end(w);
	ali_jw_array(w, "errors");
	for (size_t i = 0; i < json_object_array_length(j->errors); i++)
		ali_jw_tree(w, NULL, json_object_array_get_idx(j->errors, i));
	ali_jw_end(w);
	if (ali_multi(j->o))
		ali_jw_matrix_columns(w, j->o);
	ali_jw_end(w);
	ali_jw_finish(w);
	json_object_put(j->errors);
	ali_free(j);
}

const struct al_sink ali_sink_json = {
	.name = "json",
	.check = json_check,
	.info = json_info,
	.plan = ali_json_plan,
	.extensions = "json",
	.stream_begin = json_stream_begin,
	.stream_model = json_stream_model,
	.stream_end = json_stream_end,
};
