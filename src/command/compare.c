/* SPDX-License-Identifier: MIT */
/* compare.c: `anelint compare MODEL EVIDENCE...` as one library call, al_compare
 * (docs/evidence.md): the model is checked for the chip, release and compute
 * units each evidence file says it was observed on (else the options') and what
 * a Mac observed is lined up with the prediction, as text or as the
 * anelint-compare document (report_compare.c builds it, for report --evidence
 * too); or, with write_evidence, the prediction written as evidence in one of
 * the formats. The document is returned, and written atomically to an output
 * file when one is given; errors go to the caller's diagnostics, each naming
 * its file. */
#include "command.h"
#include "base.h"     /* ali_write_atomic_bytes, ali_buf_free */
#include "evidence.h" /* the evidence readers and the comparison */
#include "report.h"   /* the anelint-compare document */

#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_SHOWN 200 /* a name or a path, escaped and cut as the CLI prints names */
#define MSG_MAX_SHOWN 600  /* a reason from a rule or the device */

/* The exit codes of README "Exit codes" this command ends with. */
enum { X_OK = 0, X_FALLBACK = 1, X_INVALID = 3, X_IO = 4 };

static int exit_of(enum al_status st)
{
	return st == AL_OK ? X_OK : st == AL_E_IO || st == AL_E_NOMEM ? X_IO : X_INVALID;
}

static int worst(int rc, int e)
{
	return e > rc ? e : rc;
}

int al_evidence_format_find(const char *name)
{
	return name ? ali_ev_format_find(name) : -1;
}

const char *al_evidence_format_name(int format)
{
	return format > 0 && format < AL_EVF_COUNT ? ali_ev_format_name(format) : "auto";
}

/* Where evidence e was observed: what it says, else the options', else the
 * defaults (a target and a release, never NULL). */
static struct al_where observed_where(const struct al_evidence *e, const struct al_where *given)
{
	return (struct al_where){
		.target = e->target ? e->target : given->target ? given->target : al_target_default(),
		.os = e->release ? e->release : given->os ? given->os : al_release_default(),
		.compute_units = e->has_cu ? e->cu : given->compute_units};
}

/* ---------------------------------------------------------------- the text of one comparison */

static void text_reasons(FILE *f, const struct al_node *n)
{
	const struct al_verdict *v = &n->verdict;
	bool any = false;
	for (uint32_t i = 0; i < v->n_rules; i++) {
		fputs(any ? "; " : "", f);
		fputs(v->rules[i]->id, f);
		fputs(": ", f);
		al_put_escaped(f, v->reasons[i], MSG_MAX_SHOWN);
		any = true;
	}
	if (v->moved_by) {
		fprintf(f, "%s%s: %s", any ? "; " : "", v->moved_by->id, v->moved_by->title);
		any = true;
	}
	if (!any)
		fputs(v->placed == AL_UNIT_ANE ? "no rule fired" : "placed by the partition", f);
}

/* A placement file (model level): op counts per unit, predicted and observed. */
static void text_counts(FILE *f, const struct al_cmp *c)
{
	static const char *const un[3] = {"ane", "gpu", "cpu"};
	if (!c->entry) {
		fputs("  no entry of the file names this model\n", f);
		return;
	}
	fputs("  entry ", f);
	al_put_escaped(f, c->entry->model, NAME_MAX_SHOWN);
	fprintf(f, ": op counts per unit (model level: no op named)\n  %-10s %9s %9s\n", "", "predicted", "observed");
	for (int u = 0; u < 3; u++)
		fprintf(f, "  %-10s %9zu %9" PRIu64 "%s\n", un[u], c->predicted_count[u], c->entry->count[u],
			(uint64_t)c->predicted_count[u] == c->entry->count[u] ? "" : "  <- differs");
	fprintf(f, "  %-10s %9zu %9" PRIu64 "\n", "consts", c->consts, c->entry->unknown);
}

/* The confusion matrix, the disagreements, the unmatched ops and the rules' score. */
static void text_rows(FILE *f, const struct al_cmp *c)
{
	fprintf(f, "  confusion (rows: predicted, columns: observed)\n  %-10s", "");
	for (int k = 0; k < AL_OBS_COUNT; k++)
		fprintf(f, " %8s", ali_obs_name(k));
	fputs("\n", f);
	static const char *const pred[3] = {"ane", "gpu", "cpu"};
	for (int p = 0; p < 3; p++) {
		fprintf(f, "  %-10s", pred[p]);
		for (int k = 0; k < AL_OBS_COUNT; k++)
			fprintf(f, " %8zu", c->confusion[p][k]);
		fputs("\n", f);
	}
	size_t dis = c->matched - c->agreed;
	if (dis)
		fprintf(f, "  disagreements (%zu)\n", dis);
	for (size_t r = 0; r < c->n_rows; r++) {
		const struct al_cmp_row *row = &c->rows[r];
		if (!row->node || row->agree)
			continue;
		fputs("    ", f);
		if (row->ev->line)
			fprintf(f, "line %u: ", row->ev->line);
		al_put_escaped(f, row->ev->name, NAME_MAX_SHOWN);
		fputs(" (", f);
		al_put_escaped(f, row->node->type, NAME_MAX_SHOWN);
		fprintf(f, "): predicted %s [", al_unit_name(row->predicted));
		text_reasons(f, row->node);
		fprintf(f, "], observed %s", ali_obs_name(row->ev->obs));
		if (row->ev->reason) {
			fputs(" [device: ", f);
			al_put_escaped(f, row->ev->reason, MSG_MAX_SHOWN);
			fputs("]", f);
		}
		fputs("\n", f);
	}
	if (c->unmatched) {
		fprintf(f, "  unmatched evidence ops (%zu):", c->unmatched);
		size_t shown = 0;
		for (size_t r = 0; r < c->n_rows && shown < 10; r++)
			if (!c->rows[r].node) {
				fputs(" ", f);
				al_put_escaped(f, c->rows[r].ev->name, NAME_MAX_SHOWN);
				shown++;
			}
		fputs(c->unmatched > shown ? " ...\n" : "\n", f);
	}
	if (c->n_rules)
		fputs("  rules (how often what each rule says held)\n", f);
	for (size_t i = 0; i < c->n_rules; i++)
		fprintf(f, "    %-8s %-34s right %zu, wrong %zu\n", c->rules[i].rule->id, c->rules[i].rule->name,
			c->rules[i].right, c->rules[i].wrong);
}

static void text_one(FILE *f, const char *model, const char *path, const struct al_evidence *e,
		     const struct al_where *w, const struct al_cmp *c)
{
	al_put_escaped(f, model, NAME_MAX_SHOWN);
	fputs(" vs ", f);
	al_put_escaped(f, path, NAME_MAX_SHOWN);
	fprintf(f, " (%s; target %s%s, os %s%s, compute units %s%s)\n", ali_ev_format_name(e->format), w->target->id,
		e->target ? " from the evidence" : "", w->os->id, e->release ? " from the evidence" : "",
		al_compute_units_name(w->compute_units), e->has_cu ? " from the evidence" : "");
	if (c->model_level)
		fprintf(f, "  model-level entries %zu (this model's: %s), ops counted %zu\n", e->n_models,
			c->entry ? "found" : "none", c->matched);
	else
		fprintf(f, "  evidence ops %zu, matched %zu (%zu by type and order), unmatched %zu\n", c->n_rows,
			c->matched, c->by_order, c->unmatched);
	fprintf(f, "  agreement %.1f%% (%zu of %zu)\n", ali_cmp_agreement(c), c->agreed, c->matched);
	if (c->model_level)
		text_counts(f, c);
	else
		text_rows(f, c);
}

/* ---------------------------------------------------------------- the comparisons */

/* Compare m with evidence file i: its entry into the text f or the JSON array
 * entries, its figures into res; its errors into errors. The exit code of it. */
static int compare_one(const struct al_compare_opts *o, al_model *m, size_t i, FILE *f, json_object *entries,
		       struct al_compare_result *res, al_diags *errors)
{
	const char *path = o->evidence[i];
	al_diags *d = al_diags_new();
	if (!d)
		return X_IO;
	struct al_evidence *e = NULL;
	struct al_cmp cmp = {0};
	struct al_where w = {0};
	enum al_status st = ali_evidence_load(path, o->evidence_format, &e, d);
	if (st == AL_OK) {
		w = observed_where(e, &o->where);
		struct al_check_opts co = {.where = w, .user_rules = o->rules};
		st = al_model_check(m, &co, d);
		if (st == AL_OK)
			st = ali_compare(m, e, &cmp);
	}
	if (st != AL_OK) {
		ali_cmd_pass_errors(errors, d, path, "cannot load");
	} else {
		/* now: the next check replaces the verdicts the rows point at */
		res->matched += cmp.matched;
		res->agreed += cmp.agreed;
		if (o->json)
			json_object_array_add(entries, ali_compare_entry(path, e, w.target, w.os, w.compute_units, &cmp));
		else
			text_one(f, o->model, path, e, &w, &cmp);
	}
	al_diags_free(d);
	ali_cmp_free(&cmp);
	ali_evidence_free(e);
	return exit_of(st);
}

/* Every evidence file, one at a time (each may name its own chip and release),
 * into the document f; the worst exit code of them. */
static int compare_all(const struct al_compare_opts *o, al_model *m, FILE *f, struct al_compare_result *res,
		       al_diags *errors)
{
	json_object *entries = o->json ? json_object_new_array() : NULL;
	if (o->json && !entries)
		return X_IO;
	int rc = X_OK;
	for (size_t i = 0; i < o->n_evidence; i++)
		rc = worst(rc, compare_one(o, m, i, f, entries, res, errors));
	res->agreement = res->matched ? 100.0 * (double)res->agreed / (double)res->matched : 100.0;
	if (o->json) {
		json_object *top = ali_compare_doc(o->model, entries, res->matched, res->agreed);
		fputs(json_object_to_json_string_ext(top, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE), f);
		fputs("\n", f);
		json_object_put(top);
	} else if (o->n_evidence > 1) {
		fprintf(f, "overall agreement %.1f%% (%zu of %zu)\n", res->agreement, res->agreed, res->matched);
	}
	return rc;
}

/* write_evidence: m's prediction as evidence, into res->doc. */
static int write_evidence(const struct al_compare_opts *o, al_model *m, struct al_compare_result *res,
			  al_diags *errors)
{
	const struct al_target *t = o->where.target ? o->where.target : al_target_default();
	const struct al_release *os = o->where.os ? o->where.os : al_release_default();
	struct al_check_opts co = {.target = t, .os = os, .user_rules = o->rules, .compute_units = o->where.compute_units};
	al_diags *d = al_diags_new();
	struct al_buf b = {0};
	enum al_status st = d ? al_model_check(m, &co, d) : AL_E_NOMEM;
	if (st == AL_OK)
		st = ali_evidence_write(m, o->write_evidence, t->id, os->id, &b);
	if (st == AL_OK && !(res->doc = malloc(b.n + 1)))
		st = AL_E_NOMEM;
	if (st == AL_OK) {
		memcpy(res->doc, b.p, b.n);
		res->doc[b.n] = 0;
		res->n_doc = b.n;
	} else {
		ali_cmd_pass_errors(errors, d, o->model, "cannot load");
	}
	ali_buf_free(&b);
	al_diags_free(d);
	return exit_of(st);
}

/* The document to o->output, whole or not at all. */
static int write_output(const struct al_compare_opts *o, const struct al_compare_result *res, al_diags *errors)
{
	al_diags *d = al_diags_new();
	enum al_status st = d ? ali_write_atomic_bytes(o->output, res->doc, res->n_doc, d) : AL_E_NOMEM;
	if (st != AL_OK)
		ali_cmd_pass_errors(errors, d, o->output, "cannot load");
	al_diags_free(d);
	return st == AL_OK ? X_OK : X_IO;
}

enum al_status al_compare(const struct al_compare_opts *o, struct al_compare_result *res, al_diags *errors)
{
	if (!o || !res || !o->model || (o->n_evidence && !o->evidence) || o->write_evidence < 0 ||
	    o->write_evidence >= AL_EVF_COUNT || o->evidence_format < 0 || o->evidence_format >= AL_EVF_COUNT)
		return AL_E_INVALID_ARG;
	memset(res, 0, sizeof *res);
	al_model *m = NULL;
	al_diags *md = al_diags_new();
	enum al_status st = md ? al_model_open(o->model, &m, md) : AL_E_NOMEM;
	if (st != AL_OK) {
		ali_cmd_pass_errors(errors, md, o->model, "cannot load");
		al_diags_free(md);
		res->exit_code = exit_of(st);
		return st;
	}
	al_diags_free(md);
	int rc;
	bool made; /* a document to show (evidence files that failed are left out of it) */
	if (o->write_evidence) {
		rc = write_evidence(o, m, res, errors);
		made = rc == X_OK;
	} else {
		FILE *f = open_memstream(&res->doc, &res->n_doc);
		rc = f ? compare_all(o, m, f, res, errors) : X_IO;
		made = f && fflush(f) == 0 && !ferror(f);
		if (f && fclose(f) != 0)
			made = false;
		if (!made) {
			ali_diag_add(errors, AL_SEV_ERROR, o->model, UINT64_MAX, NULL, NULL, "out of memory");
			rc = X_IO;
		}
	}
	al_model_free(m);
	if (made && o->output) {
		int w = write_output(o, res, errors);
		res->written = w == X_OK;
		rc = worst(rc, w);
	}
	if (!made) {
		free(res->doc);
		res->doc = NULL;
		res->n_doc = 0;
	}
	if (rc == X_OK && !o->write_evidence && o->fail_under > 0 && res->agreement < o->fail_under) {
		res->under = true;
		rc = X_FALLBACK;
	}
	res->exit_code = rc;
	return AL_OK;
}

void al_compare_result_free(struct al_compare_result *res)
{
	if (!res)
		return;
	free(res->doc);
	res->doc = NULL;
	res->n_doc = 0;
}
