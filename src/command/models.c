/* SPDX-License-Identifier: MIT */
/* models.c: al_models_run, check, info, plan and report as one library call: every
 * model loaded (and checked), the release columns no model loads on left out, a
 * front end's per-model settings and evidence applied (hooks), the analyses a
 * sink shows run once, the sink written, and the outcome: errors dominate
 * findings (fail_on), an I/O error (4) an invalid model (3). One model at a time
 * when the sink streams and nothing needs them all.
 *
 * Path through this file:
 *   al_models_run   can_stream ? stream_models (load_one, analyse, the sink's
 *                   stream_model, a baseline or fail_on per model)
 *                   : load_all, keep_loadable_releases, the own and evidence
 *                   hooks, analyze_all, the sink, a baseline or fail_on */
#include "command.h"
#include "base.h" /* ali_diag_add */

#include <stdlib.h>
#include <string.h>

int al_outcome_of(enum al_status st)
{
	switch (st) {
	case AL_OK: return AL_OUTCOME_PASS;
	case AL_E_IO: return AL_OUTCOME_IO;
	case AL_E_NOMEM: return AL_OUTCOME_IO;
	default: return AL_OUTCOME_INVALID;
	}
}

/* The worse of two outcomes: errors dominate findings, and among errors an I/O
 * error (4) dominates an invalid model (3). */
static int worst(int rc, int e)
{
	return e > rc ? e : rc;
}

/* A model's errors: to the front end, else into r->diags. */
static void errors(struct al_models_run *r, const char *path, const al_diags *d)
{
	if (r->errors) {
		r->errors(r, path, d);
		return;
	}
	if (!d) {
		ali_diag_add(r->diags, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL, "out of memory");
		return;
	}
	size_t before = al_diags_errors(r->diags);
	for (size_t i = 0; i < al_diags_count(d); i++) {
		const struct al_diag *x = al_diags_get(d, i);
		if (x->severity == AL_SEV_ERROR)
			ali_diag_add(r->diags, AL_SEV_ERROR, x->file ? x->file : path, x->offset, x->where, x->node,
				     "%s", x->msg);
	}
	if (al_diags_errors(r->diags) == before)
		ali_diag_add(r->diags, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL, "cannot load");
}

static void note(struct al_models_run *r, const char *path, const char *msg)
{
	if (r->note)
		r->note(r, path, msg);
	else
		ali_diag_add(r->diags, AL_SEV_NOTE, path, UINT64_MAX, NULL, NULL, "%s", msg);
}

/* How one step on a model ends that had diagnostics d of its own (NULL: none
 * could be made, st is AL_E_NOMEM): its errors reported, d freed; the worse. */
static int step(struct al_models_run *r, const char *path, al_diags *d, enum al_status st, int rc)
{
	if (st != AL_OK && r->status == AL_OK)
		r->status = st;
	if (st != AL_OK)
		errors(r, path, d);
	al_diags_free(d);
	return worst(rc, al_outcome_of(st));
}

/* Load (and for check and plan, evaluate) one path into *it: its outcome
 * (AL_OUTCOME_USAGE: the function names none of its functions; the run stops). */
/* Whether item i's model is the caller's (r->models): not ours to free. */
static bool borrowed(const struct al_models_run *r, size_t i)
{
	return r->models && r->models[i];
}

static void drop_model(const struct al_models_run *r, size_t i, struct al_report_item *it)
{
	if (!borrowed(r, i))
		al_model_free(it->model);
	it->model = NULL;
}

static int load_one(struct al_models_run *r, const struct al_check_opts *check, struct al_report_item *it, size_t i)
{
	it->path = r->paths[i];
	al_diags *d = al_diags_new();
	if (!d) {
		errors(r, it->path, NULL);
		return AL_OUTCOME_IO;
	}
	it->diags = d;
	if (borrowed(r, i))
		it->model = r->models[i], it->status = AL_OK;
	else
		it->status = al_model_open(it->path, &it->model, d);
	if (it->status == AL_OK && r->function &&
	    (it->status = al_model_select_function(it->model, r->function, d)) != AL_OK) {
		drop_model(r, i, it);
		r->status = r->status == AL_OK ? it->status : r->status;
		errors(r, it->path, d);
		return AL_OUTCOME_USAGE;
	}
	if (it->status == AL_OK && check) {
		it->status = al_model_check(it->model, check, d);
		if (it->status != AL_OK)
			drop_model(r, i, it);
	}
	if (it->status != AL_OK) {
		r->status = r->status == AL_OK ? it->status : r->status;
		errors(r, it->path, d);
		return al_outcome_of(it->status);
	}
	return AL_OUTCOME_PASS;
}

static int load_all(struct al_models_run *r, const struct al_check_opts *check, struct al_report_item *items)
{
	int rc = AL_OUTCOME_PASS;
	for (size_t i = 0; i < r->n_paths; i++) {
		int e = load_one(r, check, &items[i], i);
		if (e == AL_OUTCOME_USAGE || !items[i].diags)
			return e;
		rc = worst(rc, e);
	}
	return rc;
}

static void free_items(const struct al_models_run *r, struct al_report_item *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		al_analysis_free(items[i].analysis);
		al_comparison_free(items[i].comparison);
		drop_model(r, i, &items[i]);
		al_diags_free((al_diags *)items[i].diags);
	}
	free(items);
}

/* Check (per target) and plan what the sink shows, once, before it runs: sinks
 * only read. A model that cannot be analysed is an error, like one that cannot
 * be read; the sink shows the failure where its plan or target would be. */
static int analyze_all(struct al_models_run *r, struct al_report_item *items, const struct al_report_opts *const *own,
		       int rc)
{
	for (size_t i = 0; i < r->n_paths; i++) {
		if (!items[i].model)
			continue;
		al_diags *d = al_diags_new();
		const struct al_report_opts *o = own && own[i] ? own[i] : &r->report;
		enum al_status st = d ? al_report_analyze(&items[i], 1, o, d) : AL_E_NOMEM;
		rc = step(r, items[i].path, d, st, rc);
	}
	return rc;
}

/* ================================================================ releases no model loads on */

static size_t release_index(const struct al_release *os)
{
	size_t i = 0;
	while (i < al_releases_count() && al_release_at(i) != os)
		i++;
	return i;
}

/* "ios13..ios16", "ios14, ios16" or "ios14": the releases of v */
static void release_ids(char *buf, size_t cap, const struct al_release *const *v, size_t n)
{
	bool run = n > 2;
	for (size_t i = 1; i < n && run; i++)
		run = release_index(v[i]) == release_index(v[i - 1]) + 1;
	if (run) {
		snprintf(buf, cap, "%s..%s", v[0]->id, v[n - 1]->id);
		return;
	}
	size_t len = 0;
	buf[0] = 0;
	for (size_t i = 0; i < n && len < cap; i++) {
		int k = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", v[i]->id);
		len += k > 0 ? (size_t)k : 0;
	}
}

/* The oldest release that loads item it (its specificationVersion), or NULL. */
static const struct al_release *needs_release(const struct al_report_item *it)
{
	const struct al_submodel *s = it->model ? al_model_get(it->model, 0) : NULL;
	return s ? al_release_for_spec(s->spec_version) : NULL;
}

/* The releases asked for (--os all, the columns', one --os). */
static size_t asked_releases(const struct al_models_run *r, const struct al_release **asked)
{
	const struct al_where_spec *w = &r->where;
	size_t n = 0;
	if (w->all_releases)
		for (; n < al_releases_count() && n < AL_WHERE_MAX_COLUMNS; n++)
			asked[n] = al_release_at(n);
	for (size_t i = 0; i < w->n_columns; i++) {
		bool seen = !w->columns[i].os; /* the default release, the newest */
		for (size_t k = 0; k < n && !seen; k++)
			seen = asked[k] == w->columns[i].os;
		if (!seen && n < AL_WHERE_MAX_COLUMNS)
			asked[n++] = w->columns[i].os;
	}
	if (!n && r->check.os)
		asked[n++] = r->check.os;
	return n;
}

/* A release whose Core ML cannot load a model (its specificationVersion is
 * newer) gives no prediction worth reading: each such model says so in a note,
 * and the release columns (--os all, lists) that no model loads on are left
 * out, while one column stays; a single release is predicted anyway. */
static void keep_loadable_releases(struct al_models_run *r, struct al_report_item *items)
{
	struct al_where_spec *w = &r->where;
	const struct al_release *asked[AL_WHERE_MAX_COLUMNS];
	size_t n = asked_releases(r, asked);
	/* the columns kept: those of a release some model loads on */
	int floor = -1;
	for (size_t i = 0; i < r->n_paths; i++) {
		const struct al_release *min = needs_release(&items[i]);
		if (min && (floor < 0 || min->ios < floor))
			floor = min->ios;
	}
	struct al_column keep[AL_WHERE_MAX_COLUMNS];
	size_t nk = 0;
	if (n > 1 && floor >= 0) {
		if (w->all_releases) {
			for (size_t k = 0; k < n; k++)
				if (asked[k]->ios >= floor)
					keep[nk++] = (struct al_column){r->check.target, asked[k]};
		} else {
			for (size_t i = 0; i < w->n_columns && nk < AL_WHERE_MAX_COLUMNS; i++)
				if (!w->columns[i].os || w->columns[i].os->ios >= floor)
					keep[nk++] = w->columns[i];
		}
	}
	bool drop = nk > 0 && nk < (w->all_releases ? n : w->n_columns);
	for (size_t i = 0; i < r->n_paths; i++) {
		const struct al_release *min = needs_release(&items[i]);
		const struct al_release *below[AL_WHERE_MAX_COLUMNS];
		size_t nb = 0;
		bool all_dropped = drop;
		for (size_t k = 0; min && k < n; k++)
			if (asked[k]->ios < min->ios) {
				below[nb++] = asked[k];
				all_dropped &= asked[k]->ios < floor;
			}
		if (!nb)
			continue;
		char ids[256], msg[400];
		release_ids(ids, sizeof ids, below, nb);
		snprintf(msg, sizeof msg, "specificationVersion %d needs %s or newer: Core ML on %s cannot load it (%s)",
			 al_model_get(items[i].model, 0)->spec_version, min->name, ids,
			 all_dropped ? "left out" : "predicted anyway");
		note(r, items[i].path, msg);
	}
	if (!drop)
		return;
	w->all_releases = false;
	if (nk == 1) { /* one column left: a plain prediction for it, checked again for it */
		w->n_columns = 0;
		r->check.target = r->plan.target = keep[0].target;
		r->check.os = keep[0].os;
		for (size_t i = 0; i < r->n_paths; i++) {
			al_diags *d = items[i].model ? al_diags_new() : NULL;
			if (d && al_model_check(items[i].model, &r->check, d) != AL_OK)
				errors(r, items[i].path, d);
			al_diags_free(d);
		}
		return;
	}
	memcpy(w->columns, keep, nk * sizeof keep[0]);
	w->n_columns = nk;
	r->check.target = r->plan.target = w->columns[0].target;
	r->check.os = w->columns[0].os;
}

/* ================================================================ one model at a time */

/* Whether the models can be written as each is checked (so memory does not grow
 * with their number): the sink streams, no evidence, no model has settings of
 * its own (those are checked again, and the text shows their predictions per
 * model), and no OS release asked for. */
static bool can_stream(struct al_models_run *r)
{
	const struct al_sink *sink = r->sink;
	if (!sink->stream_begin || !sink->stream_model || !sink->stream_end || r->evidence || r->models)
		return false;
	bool info = r->cmd == AL_SINK_INFO;
	/* a release asked for (--os, several columns): which of them the models can
	 * load on is decided over all the models first (keep_loadable_releases) */
	if (!info && (r->where.all_releases || r->where.n_columns > 1 || r->check.os))
		return false;
	for (size_t i = 0; !info && r->has_own && i < r->n_paths; i++)
		if (r->has_own(r, r->paths[i]))
			return false;
	return true;
}

static enum al_fail_on fail_on_of(struct al_models_run *r, const char *path, enum al_fail_on dflt)
{
	return r->fail_on ? r->fail_on(r, path, dflt) : dflt;
}

/* One model at a time: loaded, checked, analysed, written by the sink's stream
 * st, its findings recorded (a baseline) or its outcome decided, and freed
 * before the next (a directory of 12,000 models in constant memory). */
static int stream_models(struct al_models_run *r, void *st)
{
	struct al_report_opts *o = &r->report;
	bool info = r->cmd == AL_SINK_INFO;
	int rc = AL_OUTCOME_PASS;
	bool fails = false;
	void *bw = NULL;
	if (!info && r->records_baseline && r->baseline_begin && !(bw = r->baseline_begin(r)))
		rc = AL_OUTCOME_IO;
	for (size_t i = 0; i < r->n_paths && rc != AL_OUTCOME_USAGE; i++) {
		struct al_report_item it = {0};
		int e = load_one(r, info ? NULL : &r->check, &it, i);
		rc = worst(rc, e);
		if (e == AL_OUTCOME_USAGE || !it.diags) {
			al_model_free(it.model);
			al_diags_free((al_diags *)it.diags);
			break;
		}
		if (!info && it.model) {
			if (r->accepts) /* a model's metadata may accept findings */
				r->accepts(r, &it, 1);
			al_diags *d = al_diags_new();
			enum al_status ast = d ? al_report_analyze(&it, 1, o, d) : AL_E_NOMEM;
			rc = step(r, it.path, d, ast, rc);
		}
		r->sink->stream_model(st, &it);
		if (!info && it.model && bw) {
			r->baseline_add(bw, &it);
		} else if (!info && it.model) {
			struct al_report_opts oi = *o;
			oi.fail_on = fail_on_of(r, it.path, o->fail_on);
			fails |= al_report_fails(&it, &oi);
		}
		al_analysis_free(it.analysis);
		al_model_free(it.model);
		al_diags_free((al_diags *)it.diags);
	}
	r->sink->stream_end(st);
	if (bw) /* recorded: accepted */
		rc = worst(rc, r->baseline_end(bw, rc == AL_OUTCOME_PASS));
	else if (fails)
		rc = worst(rc, AL_OUTCOME_FALLBACK);
	r->fails = fails;
	return rc;
}

/* ================================================================ all the models at once */

static int all_models(struct al_models_run *r)
{
	struct al_report_opts *o = &r->report;
	bool info = r->cmd == AL_SINK_INFO;
	size_t n = r->n_paths;
	struct al_report_item *items = calloc(n ? n : 1, sizeof *items);
	const struct al_report_opts **own = calloc(n ? n : 1, sizeof *own);
	if (!items || !own) {
		free(items);
		free(own);
		return AL_OUTCOME_IO;
	}
	int rc = worst(load_all(r, info ? NULL : &r->check, items), r->outcome_floor);
	if (!info) {
		keep_loadable_releases(r, items);
		o->all_releases = r->where.all_releases;
		o->n_columns = r->where.n_columns;
	}
	if (!info && r->accepts)
		r->accepts(r, items, n);
	if (!info && rc < AL_OUTCOME_USAGE && r->own)
		rc = r->own(r, items, n, own, rc);
	if (!info && r->evidence)
		rc = r->evidence(r, items, n, rc); /* before the analysis */
	if (!info)
		rc = analyze_all(r, items, own, rc);
	/* an error (a model that cannot be read) leaves no output file */
	FILE *out = r->open ? r->open(r, rc >= AL_OUTCOME_USAGE) : r->out;
	if (rc < AL_OUTCOME_USAGE && !out)
		rc = AL_OUTCOME_IO;
	if (out && info)
		r->sink->info(out, items, n, o);
	else if (out && r->cmd == AL_SINK_PLAN)
		r->sink->plan(out, items, n, o);
	else if (out)
		r->sink->check(out, items, n, o);
	if (!info && rc == AL_OUTCOME_PASS && r->records_baseline && r->baseline_write) {
		rc = r->baseline_write(r, items, n); /* recorded: accepted */
	} else if (!info && rc == AL_OUTCOME_PASS) {
		for (size_t i = 0; i < n; i++) {
			struct al_report_opts oi = own[i] ? *own[i] : *o; /* a model's own settings */
			oi.fail_on = fail_on_of(r, items[i].path, o->fail_on);
			if (items[i].model && al_report_fails(&items[i], &oi)) {
				rc = AL_OUTCOME_FALLBACK;
				r->fails = true;
			}
		}
	}
	free_items(r, items, n);
	free(own);
	if (out && r->close)
		rc = worst(rc, r->close(r, out, true));
	return rc;
}

int al_models_run(struct al_models_run *r)
{
	if (!r || (r->n_paths && !r->paths))
		return AL_OUTCOME_USAGE;
	if (!r->sink)
		r->sink = al_sink_by_name("json");
	r->fails = false;
	r->status = AL_OK;
	/* the options keep where the models run in step with the columns */
	r->check.where.target = r->where.where.target;
	r->check.where.os = r->where.where.os;
	r->check.where.compute_units = r->where.where.compute_units;
	r->plan.target = r->check.target;
	r->plan.compute_units = r->check.compute_units;
	r->report.check = &r->check;
	r->report.plan = &r->plan;
	r->report.all_targets = r->where.all_targets;
	r->report.all_releases = r->where.all_releases;
	r->report.columns = r->where.columns;
	r->report.n_columns = r->where.n_columns;
	r->report.plans = r->cmd == AL_SINK_PLAN || r->sink->shows_plans;
	if (can_stream(r)) {
		FILE *out = r->open ? r->open(r, false) : r->out;
		if (!out)
			return AL_OUTCOME_IO;
		void *st = r->sink->stream_begin(out, r->cmd, &r->report);
		if (!st) {
			if (r->close && out != r->out)
				r->close(r, out, false);
			return all_models(r);
		}
		int rc = worst(stream_models(r, st), r->outcome_floor);
		/* an error (a model that cannot be read) leaves no output file */
		if (r->close)
			rc = worst(rc, r->close(r, out, rc < AL_OUTCOME_USAGE));
		return rc;
	}
	return all_models(r);
}
