/* SPDX-License-Identifier: MIT */
/* report_compare.c: the comparison step of `anelint report MODEL --evidence FILE...`
 * (docs/evidence.md "In the reports"), run like al_report_analyze before any sink:
 * each evidence file is read, the model checked for its chip and release and
 * compared, and the result kept as the anelint-compare document (the one
 * `anelint compare --format json` prints, built here for both). The document
 * copies every name and reason, so it outlives those checks; the model is
 * checked again as the report asked before this returns. report_evidence.c
 * renders it in the sinks. */
#include "report.h"
#include "evidence.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#define COMPARE_SCHEMA_VERSION 1

static json_object *str(const char *s)
{
	return s ? ali_json_string(s) : NULL;
}

static json_object *reasons_json(const struct al_verdict *v)
{
	json_object *rs = json_object_new_array();
	for (uint32_t i = 0; i < v->n_rules; i++) {
		json_object *x = json_object_new_object();
		json_object_object_add(x, "rule", str(v->rules[i]->id));
		json_object_object_add(x, "reason", str(v->reasons[i]));
		json_object_array_add(rs, x);
	}
	if (v->moved_by) {
		json_object *x = json_object_new_object();
		json_object_object_add(x, "rule", str(v->moved_by->id));
		json_object_object_add(x, "reason", str(v->moved_by->title));
		json_object_array_add(rs, x);
	}
	return rs;
}

json_object *ali_compare_entry(const char *path, const struct al_evidence *e, const struct al_target *t,
			       const struct al_release *os, enum al_compute_units cu, const struct al_cmp *c)
{
	json_object *j = json_object_new_object();
	json_object_object_add(j, "file", str(path));
	json_object_object_add(j, "format", str(ali_ev_format_name(e->format)));
	json_object_object_add(j, "target", str(t->id));
	json_object_object_add(j, "os", str(os->id));
	json_object_object_add(j, "compute_units", str(al_compute_units_name(cu)));
	json_object_object_add(j, "evidence_chip", str(e->chip));
	json_object_object_add(j, "evidence_os", str(e->os));
	json_object_object_add(j, "device", str(e->device));
	json_object_object_add(j, "ops", json_object_new_int64((int64_t)c->n_rows));
	json_object_object_add(j, "matched", json_object_new_int64((int64_t)c->matched));
	json_object_object_add(j, "matched_by_order", json_object_new_int64((int64_t)c->by_order));
	json_object_object_add(j, "unmatched", json_object_new_int64((int64_t)c->unmatched));
	json_object_object_add(j, "agreed", json_object_new_int64((int64_t)c->agreed));
	json_object_object_add(j, "agreement", json_object_new_double(ali_cmp_agreement(c)));
	json_object *conf = json_object_new_object();
	static const char *const pred[3] = {"ane", "gpu", "cpu"};
	for (int p = 0; p < 3; p++) {
		json_object *row = json_object_new_object();
		for (int k = 0; k < AL_OBS_COUNT; k++)
			json_object_object_add(row, ali_obs_name(k), json_object_new_int64((int64_t)c->confusion[p][k]));
		json_object_object_add(conf, pred[p], row);
	}
	json_object_object_add(j, "confusion", conf);
	json_object_object_add(j, "level", str(c->model_level ? "model" : "op"));
	if (c->model_level) { /* a placement file: counts per unit, no op named */
		json_object *cn = json_object_new_object(), *pr = json_object_new_object(), *ob = NULL;
		for (int u = 0; u < 3; u++)
			json_object_object_add(pr, pred[u], json_object_new_int64((int64_t)c->predicted_count[u]));
		json_object_object_add(pr, "consts", json_object_new_int64((int64_t)c->consts));
		json_object_object_add(pr, "ane_eligible", json_object_new_int64((int64_t)c->predicted_ane_eligible));
		if (c->entry) {
			ob = json_object_new_object();
			for (int u = 0; u < 3; u++)
				json_object_object_add(ob, pred[u], json_object_new_int64((int64_t)c->entry->count[u]));
			json_object_object_add(ob, "unknown", json_object_new_int64((int64_t)c->entry->unknown));
			json_object_object_add(ob, "operations_supporting_ane",
					       c->entry->supports_ane >= 0 ? json_object_new_int64(c->entry->supports_ane) : NULL);
		}
		json_object_object_add(cn, "entry", c->entry ? str(c->entry->model) : NULL);
		json_object_object_add(cn, "predicted", pr);
		json_object_object_add(cn, "observed", ob);
		json_object_object_add(j, "counts", cn);
	}
	json_object *dis = json_object_new_array(), *um = json_object_new_array();
	for (size_t i = 0; c->model_level && !c->entry && i < e->n_models; i++)
		json_object_array_add(um, str(e->models[i].model));
	for (size_t r = 0; r < c->n_rows; r++) {
		const struct al_cmp_row *row = &c->rows[r];
		if (!row->node) {
			json_object_array_add(um, str(row->ev->name));
			continue;
		}
		if (row->agree)
			continue;
		json_object *d = json_object_new_object();
		json_object_object_add(d, "name", str(row->ev->name));
		json_object_object_add(d, "type", str(row->node->type));
		json_object_object_add(d, "line", row->ev->line ? json_object_new_int64(row->ev->line) : NULL);
		json_object_object_add(d, "matched_by", str(row->match == AL_MATCH_NAME ? "name" : "order"));
		json_object_object_add(d, "predicted", str(al_unit_name(row->predicted)));
		json_object_object_add(d, "observed", str(ali_obs_name(row->ev->obs)));
		json_object_object_add(d, "device_reason", str(row->ev->reason));
		json_object_object_add(d, "anelint_reasons", reasons_json(&row->node->verdict));
		json_object_array_add(dis, d);
	}
	json_object_object_add(j, "disagreements", dis);
	json_object_object_add(j, "unmatched_ops", um);
	json_object *rules = json_object_new_array();
	for (size_t i = 0; i < c->n_rules; i++) {
		json_object *x = json_object_new_object();
		json_object_object_add(x, "rule", str(c->rules[i].rule->id));
		json_object_object_add(x, "name", str(c->rules[i].rule->name));
		json_object_object_add(x, "right", json_object_new_int64((int64_t)c->rules[i].right));
		json_object_object_add(x, "wrong", json_object_new_int64((int64_t)c->rules[i].wrong));
		json_object_array_add(rules, x);
	}
	json_object_object_add(j, "rules", rules);
	return j;
}

json_object *ali_compare_doc(const char *model, json_object *entries, size_t matched, size_t agreed)
{
	json_object *top = json_object_new_object();
	json_object_object_add(top, "schema", str("anelint-compare"));
	json_object_object_add(top, "version", json_object_new_int(COMPARE_SCHEMA_VERSION));
	json_object_object_add(top, "model", str(model));
	json_object_object_add(top, "evidence", entries);
	json_object_object_add(top, "matched", json_object_new_int64((int64_t)matched));
	json_object_object_add(top, "agreed", json_object_new_int64((int64_t)agreed));
	json_object_object_add(top, "agreement",
			       json_object_new_double(matched ? 100.0 * (double)agreed / (double)matched : 100.0));
	return top;
}

enum al_status al_report_compare(struct al_report_item *it, const char *const *paths, size_t n,
				 const char *format, const struct al_check_opts *check, al_diags *d)
{
	al_comparison_free(it->comparison);
	it->comparison = NULL;
	if (!it->model)
		return AL_E_INVALID_ARG;
	int fmt = format ? ali_ev_format_find(format) : AL_EVF_AUTO;
	if (fmt < 0) {
		ali_diag_add(d, AL_SEV_ERROR, format, UINT64_MAX, NULL, NULL, "unknown evidence format");
		return AL_E_INVALID_ARG;
	}
	struct al_check_opts base = check ? *check : (struct al_check_opts){0};
	json_object *entries = json_object_new_array();
	size_t matched = 0, agreed = 0;
	enum al_status st = entries ? AL_OK : AL_E_NOMEM;
	for (size_t i = 0; i < n && st == AL_OK; i++) {
		struct al_evidence *e = NULL;
		struct al_cmp cmp = {0};
		st = ali_evidence_load(paths[i], fmt, &e, d);
		if (st == AL_OK) {
			struct al_check_opts co = base;
			co.target = e->target ? e->target : base.target ? base.target : al_target_default();
			co.os = e->release ? e->release : base.os ? base.os : al_release_default();
			if (e->has_cu)
				co.compute_units = e->cu;
			st = al_model_check(it->model, &co, d);
			if (st == AL_OK)
				st = ali_compare(it->model, e, &cmp);
			if (st == AL_OK) {
				json_object_array_add(entries,
						      ali_compare_entry(paths[i], e, co.target, co.os, co.compute_units, &cmp));
				matched += cmp.matched;
				agreed += cmp.agreed;
			}
		}
		ali_cmp_free(&cmp);
		ali_evidence_free(e);
	}
	/* leave the model as the report checked it */
	enum al_status back = al_model_check(it->model, &base, d);
	if (st == AL_OK)
		st = back;
	struct al_comparison *c = st == AL_OK ? ali_calloc(1, sizeof *c) : NULL;
	if (st == AL_OK && !c)
		st = AL_E_NOMEM;
	if (st != AL_OK) {
		json_object_put(entries);
		return st;
	}
	c->doc = ali_compare_doc(it->path, entries, matched, agreed);
	it->comparison = c;
	return AL_OK;
}

void al_comparison_free(al_comparison *c)
{
	if (!c)
		return;
	json_object_put(c->doc);
	ali_free(c);
}

json_object *ali_comparison_json(const al_comparison *c)
{
	return c ? json_object_get(c->doc) : NULL;
}

