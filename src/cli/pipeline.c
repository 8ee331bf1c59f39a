/* SPDX-License-Identifier: MIT */
/* pipeline.c: check, info, plan and report, one pipeline: the configuration and
 * directories expanded (ci.c), the options turned into settings (settings.c), every
 * model loaded (and checked), a [[model]]'s own settings applied, report
 * --evidence compared, the analyses a sink shows run once, the sink written to
 * stdout or -o FILE (output.c), and the exit code: errors dominate findings
 * (--fail-on), an I/O error (4) an invalid model (3). */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Load (and for `check` and `plan`, evaluate) one path into *it: its exit code
 * (EXIT_USAGE: --function names none of its functions; the run stops). */
static int load_one(struct cli *c, const struct al_check_opts *check, struct al_report_item *it, const char *path)
{
	it->path = path;
	al_diags *d = al_diags_new();
	if (!d) {
		fprintf(stderr, "anelint: error: out of memory\n");
		return EXIT_IO;
	}
	it->diags = d;
	it->status = al_model_open(it->path, &it->model, d);
	if (it->status == AL_OK && c->function &&
	    (it->status = al_model_select_function(it->model, c->function, d)) != AL_OK) {
		al_model_free(it->model);
		it->model = NULL;
		print_errors(it->path, d);
		return EXIT_USAGE;
	}
	if (it->status == AL_OK && check) {
		it->status = al_model_check(it->model, check, d);
		if (it->status != AL_OK) {
			al_model_free(it->model);
			it->model = NULL;
		}
	}
	if (it->status != AL_OK) {
		print_errors(it->path, d);
		return status_exit(it->status);
	}
	return EXIT_ALL_ANE;
}

/* Load every path; errors dominate findings, and among errors an I/O error (4)
 * dominates an invalid model (3). */
static int load_all(struct cli *c, const struct al_check_opts *check, struct al_report_item *items)
{
	int rc = EXIT_ALL_ANE;
	for (int i = 0; i < c->n_paths; i++) {
		int e = load_one(c, check, &items[i], c->paths[i]);
		if (e == EXIT_USAGE || !items[i].diags)
			return e;
		rc = worst_exit(rc, e);
	}
	return rc;
}

static void free_items(struct al_report_item *items, int n)
{
	for (int i = 0; i < n; i++) {
		al_analysis_free(items[i].analysis);
		al_comparison_free(items[i].comparison);
		al_model_free(items[i].model);
		al_diags_free((al_diags *)items[i].diags);
	}
	free(items);
}

/* Check (per target) and plan what the sink shows, once, before it runs: sinks
 * only read. A model that cannot be analysed is an error, like one that cannot
 * be read; the sink shows the failure where its plan or target would be. */
static int analyze_all(struct cli *c, struct al_report_item *items, const struct al_report_opts *o,
		       const struct al_report_opts *const *own, int rc)
{
	for (int i = 0; i < c->n_paths; i++) {
		if (!items[i].model)
			continue;
		al_diags *d = al_diags_new();
		enum al_status st = d ? al_report_analyze(&items[i], 1, own && own[i] ? own[i] : o, d) : AL_E_NOMEM;
		rc = model_step_exit(items[i].path, d, st, rc);
	}
	return rc;
}

#define MAX_RELEASE_COLUMNS 32 /* the report's columns */

static size_t release_index(const struct al_release *r)
{
	size_t i = 0;
	while (i < al_releases_count() && al_release_at(i) != r)
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

/* A release whose Core ML cannot load a model (its specificationVersion is
 * newer) gives no prediction worth reading: each such model says so on one
 * line (stderr), and the release columns (--os all, lists) that no model loads
 * on are left out, while one column stays; a single --os is predicted anyway. */
static void unloadable_releases(const struct cli *c, struct run *r, struct al_report_item *items)
{
	const struct al_release *asked[MAX_RELEASE_COLUMNS];
	size_t n = 0;
	if (r->all_releases)
		for (; n < al_releases_count() && n < MAX_RELEASE_COLUMNS; n++)
			asked[n] = al_release_at(n);
	for (size_t i = 0; i < r->n_columns; i++) {
		bool seen = !r->columns[i].os; /* the default release, the newest */
		for (size_t k = 0; k < n && !seen; k++)
			seen = asked[k] == r->columns[i].os;
		if (!seen && n < MAX_RELEASE_COLUMNS)
			asked[n++] = r->columns[i].os;
	}
	if (!n && r->check.os)
		asked[n++] = r->check.os;
	/* the columns kept: those of a release some model loads on */
	int floor = -1;
	for (int i = 0; i < c->n_paths; i++) {
		const struct al_release *min = needs_release(&items[i]);
		if (min && (floor < 0 || min->ios < floor))
			floor = min->ios;
	}
	struct al_column keep[MAX_RELEASE_COLUMNS];
	size_t nk = 0;
	if (n > 1 && floor >= 0) {
		if (r->all_releases) {
			for (size_t k = 0; k < n; k++)
				if (asked[k]->ios >= floor)
					keep[nk++] = (struct al_column){r->check.target, asked[k]};
		} else {
			for (size_t i = 0; i < r->n_columns && nk < MAX_RELEASE_COLUMNS; i++)
				if (!r->columns[i].os || r->columns[i].os->ios >= floor)
					keep[nk++] = r->columns[i];
		}
	}
	bool drop = nk > 0 && nk < (r->all_releases ? n : r->n_columns);
	for (int i = 0; i < c->n_paths; i++) {
		const struct al_release *min = needs_release(&items[i]);
		const struct al_release *below[MAX_RELEASE_COLUMNS];
		size_t nb = 0;
		bool all_dropped = drop;
		for (size_t k = 0; min && k < n; k++)
			if (asked[k]->ios < min->ios) {
				below[nb++] = asked[k];
				all_dropped &= asked[k]->ios < floor;
			}
		if (!nb)
			continue;
		char ids[256];
		release_ids(ids, sizeof ids, below, nb);
		fputs("anelint: note: ", stderr);
		put_text(stderr, items[i].path, CLI_NAME_MAX);
		fprintf(stderr, ": specificationVersion %d needs %s or newer: Core ML on %s cannot load it (%s)\n",
			al_model_get(items[i].model, 0)->spec_version, min->name, ids,
			all_dropped ? "left out" : "predicted anyway");
	}
	if (!drop)
		return;
	r->all_releases = false;
	if (nk == 1) { /* one column left: a plain prediction for it, checked again for it */
		r->n_columns = 0;
		r->check.target = r->plan.target = keep[0].target;
		r->check.os = keep[0].os;
		for (int i = 0; i < c->n_paths; i++) {
			al_diags *d = items[i].model ? al_diags_new() : NULL;
			if (d && al_model_check(items[i].model, &r->check, d) != AL_OK)
				print_errors(items[i].path, d);
			al_diags_free(d);
		}
		return;
	}
	memcpy(r->columns, keep, nk * sizeof keep[0]);
	r->n_columns = nk;
	r->check.target = r->plan.target = r->columns[0].target;
	r->check.os = r->columns[0].os;
}

enum mode { M_CHECK, M_INFO, M_PLAN };

/* A model's own options: the [[model]] settings of the configuration. */
struct own_opts {
	struct run r;
	struct al_report_opts o;
};

/* The models a [[model]] section gives settings of their own (target, os,
 * compute_units, policy, select/ignore) are checked again with them, and
 * analysed with them (*own_o[i]); the report's columns stay the top level's, so
 * a [[model]] target or os goes only with one target and one release there. */
static int model_settings(struct cli *c, const struct command_row *cmd, struct ci *ci, const struct run *r,
			  const struct al_report_opts *o, struct al_report_item *items, struct own_opts **own,
			  const struct al_report_opts ***own_o, int rc)
{
	for (int i = 0; i < c->n_paths; i++) {
		struct cli cc;
		uint32_t line = 0;
		if (!items[i].model || !ci_model_cli(ci, items[i].path, c, &cc, &line))
			continue;
		if (!*own) {
			*own = calloc((size_t)c->n_paths, sizeof **own);
			*own_o = calloc((size_t)c->n_paths, sizeof **own_o);
			if (!*own || !*own_o)
				return EXIT_IO;
		}
		struct own_opts *x = &(*own)[i];
		cc.rules = NULL; /* loaded once */
		int prc = prepare(&cc, cmd, &x->r);
		if (prc)
			return prc;
		bool moved = cc.target != c->target || cc.os != c->os;
		if (moved && (run_is_multi(r) || run_is_multi(&x->r))) {
			fputs("anelint: error: ", stderr);
			put_text(stderr, ci_config_path(ci), CLI_NAME_MAX);
			fprintf(stderr, ": line %u: a [[model]] target or os is one id, and goes with one target and one "
					"release at the top level (the report's columns are the same for every model)\n",
				line);
			return EXIT_USAGE;
		}
		if (!moved) { /* the top level's columns */
			memcpy(x->r.columns, r->columns, sizeof r->columns);
			x->r.n_columns = r->n_columns;
			x->r.all_targets = r->all_targets;
			x->r.all_releases = r->all_releases;
		}
		x->r.check.user_rules = r->check.user_rules;
		x->r.check.rule_on = r->check.rule_on;
		x->r.check.rule_on_ctx = r->check.rule_on_ctx;
		ci_model_selection(ci, items[i].path, &x->r.check);
		x->o = *o;
		x->o.check = &x->r.check;
		x->o.plan = &x->r.plan;
		x->o.columns = x->r.columns;
		(*own_o)[i] = &x->o;
		al_diags *d = al_diags_new();
		enum al_status st = d ? al_model_check(items[i].model, &x->r.check, d) : AL_E_NOMEM;
		rc = model_step_exit(items[i].path, d, st, rc);
	}
	return rc;
}

/* Whether the models can be written as each is checked (so memory does not grow
 * with their number): the sink streams, no report --evidence, and no model has
 * [[model]] settings of its own (those are checked again, and the text shows
 * their predictions per model), and no OS release asked for. */
static bool can_stream(struct cli *c, const struct al_sink *sink, enum mode mode, struct ci *ci,
		       const struct run *r)
{
	if (!sink->stream_begin || !sink->stream_model || !sink->stream_end || c->evidence.n)
		return false;
	/* a release asked for (--os, several columns): which of them the models can
	 * load on is decided over all the models first (unloadable_releases) */
	if (mode != M_INFO && (r->all_releases || r->n_columns > 1 || r->check.os))
		return false;
	for (int i = 0; mode != M_INFO && i < c->n_paths; i++) {
		struct cli cc;
		uint32_t line = 0;
		if (ci_model_cli(ci, c->paths[i], c, &cc, &line))
			return false;
	}
	return true;
}

/* One model at a time: loaded, checked, analysed, written by the sink's stream
 * st, its findings recorded (--write-baseline) or its exit decided, and freed
 * before the next (a directory of 12,000 models in constant memory). */
static int stream_models(struct cli *c, const struct al_sink *sink, void *st, enum mode mode, struct ci *ci,
			 struct run *r, struct al_report_opts *o)
{
	int rc = EXIT_ALL_ANE;
	bool fails = false;
	struct ci_baseline_writer *bw = NULL;
	if (mode != M_INFO && c->write_baseline && !(bw = ci_baseline_begin(ci, c->write_baseline)))
		rc = EXIT_IO;
	for (int i = 0; i < c->n_paths && rc != EXIT_USAGE; i++) {
		struct al_report_item it = {0};
		int e = load_one(c, mode == M_INFO ? NULL : &r->check, &it, c->paths[i]);
		rc = worst_exit(rc, e);
		if (e == EXIT_USAGE || !it.diags) {
			al_model_free(it.model);
			al_diags_free((al_diags *)it.diags);
			break;
		}
		if (mode != M_INFO && it.model) {
			if (ci_accepts_anything(ci, &it, 1)) { /* a model's metadata may accept findings */
				o->accepted = ci_accepted;
				o->accepted_ctx = ci;
			}
			al_diags *d = al_diags_new();
			enum al_status ast = d ? al_report_analyze(&it, 1, o, d) : AL_E_NOMEM;
			rc = model_step_exit(it.path, d, ast, rc);
		}
		sink->stream_model(st, &it);
		if (mode != M_INFO && it.model && bw) {
			ci_baseline_add(bw, &it);
		} else if (mode != M_INFO && it.model) {
			struct al_report_opts oi = *o;
			oi.fail_on = (enum al_fail_on)ci_fail_on(ci, it.path, (int)o->fail_on);
			fails |= al_report_fails(&it, &oi);
		}
		al_analysis_free(it.analysis);
		al_model_free(it.model);
		al_diags_free((al_diags *)it.diags);
	}
	sink->stream_end(st);
	if (bw) /* recorded: accepted */
		rc = worst_exit(rc, ci_baseline_end(bw, rc == EXIT_ALL_ANE));
	else if (fails)
		rc = worst_exit(rc, EXIT_FALLBACK);
	return rc;
}

static int run_models(struct cli *c, const struct command_row *cmd, enum mode mode)
{
	int rc = EXIT_ALL_ANE;
	const struct al_sink *sink = pick_sink(c, cmd, &rc);
	struct run r;
	struct al_report_opts o = {.show_consts = c->consts, .shapes = c->shapes, .all_layers = c->all,
				   .base = c->base};
	o.color = want_color(c, &rc, cmd);
	/* directories -> the models in them; the configuration (check, plan, report)
	 * fills in the options not given */
	struct ci *ci = NULL;
	if (!rc) {
		if (mode == M_INFO)
			c->no_config = true, c->config = NULL;
		rc = ci_setup(c, &ci);
		if (!rc)
			rc = ci_expand_paths(ci, c);
	}
	if (rc) {
		ci_free(ci);
		return rc;
	}
	if (c->fail_on) {
		static const char *const names[] = {"any", "cpu", "gpu", "never", "uncertain"};
		bool found = false;
		for (int i = 0; i < 5; i++)
			if (strcmp(c->fail_on, names[i]) == 0) {
				o.fail_on = (enum al_fail_on)i;
				found = true;
			}
		if (!found)
			rc = usage_error(cmd, "--fail-on takes any, cpu, gpu, uncertain or never, not '%s'", c->fail_on);
	}
	if (rc) {
		ci_free(ci);
		return rc;
	}
	rc = prepare(c, cmd, &r);
	if (!rc)
		rc = ci_selection(ci, c, cmd, &r.check);
	if (rc) {
		al_user_rules_free(r.rules);
		ci_free(ci);
		return rc;
	}
	o.check = &r.check;
	o.plan = &r.plan;
	o.all_targets = r.all_targets;
	o.all_releases = r.all_releases;
	o.columns = r.columns;
	o.n_columns = r.n_columns;
	o.information_uri = ci_information_uri(ci);
	if ((rc = guard_output(c, c->output, 0)) || (rc = guard_output(c, c->write_baseline, 0))) {
		al_user_rules_free(r.rules);
		ci_free(ci);
		return rc;
	}
	o.plans = mode == M_PLAN || sink->shows_plans;
	/* check (text, JSON) with no release asked: every release of each model's
	 * deployment range too (per model, so a folder still streams) */
	o.deployment_range = cmd->bit == C_CHECK && !r.check.os &&
			     (strcmp(sink->name, "text") == 0 || strcmp(sink->name, "json") == 0);
	if (can_stream(c, sink, mode, ci, &r)) {
		FILE *out = !c->output ? stdout : out_open(c->output);
		void *st = out ? sink->stream_begin(out, mode == M_INFO ? AL_SINK_INFO : mode == M_PLAN ? AL_SINK_PLAN
											: AL_SINK_CHECK, &o) : NULL;
		if (!out) {
			error_at(c->output, "cannot write: %s", strerror(errno));
			rc = EXIT_IO;
		} else if (st) {
			rc = worst_exit(stream_models(c, sink, st, mode, ci, &r, &o), ci_unsearched_exit(ci));
			/* an error (a model that cannot be read) leaves no output file */
			bool keep = !c->output || rc < EXIT_USAGE;
			if (!out_close(out, c->output, keep) && keep) {
				if (c->output)
					error_at(c->output, "cannot write: %s", strerror(errno));
				else
					fprintf(stderr, "anelint: error: cannot write the output\n");
				rc = EXIT_IO;
			}
		} else if (out != stdout) {
			out_close(out, c->output, false);
		}
		if (!out || st) {
			al_user_rules_free(r.rules); /* after the models: verdicts point at their rules */
			ci_free(ci);
			return rc;
		}
	}
	struct al_report_item *items = calloc((size_t)c->n_paths, sizeof *items);
	if (!items) {
		al_user_rules_free(r.rules);
		ci_free(ci);
		return EXIT_IO;
	}
	rc = worst_exit(load_all(c, mode == M_INFO ? NULL : &r.check, items), ci_unsearched_exit(ci));
	if (mode != M_INFO) {
		unloadable_releases(c, &r, items);
		o.all_releases = r.all_releases;
		o.n_columns = r.n_columns;
	}
	if (mode != M_INFO && ci_accepts_anything(ci, items, c->n_paths)) {
		o.accepted = ci_accepted;
		o.accepted_ctx = ci;
	}
	struct own_opts *own = NULL;
	const struct al_report_opts **own_o = NULL;
	if (mode != M_INFO && rc < EXIT_USAGE)
		rc = model_settings(c, cmd, ci, &r, &o, items, &own, &own_o, rc);
	if (mode != M_INFO && c->evidence.n)
		rc = report_evidence(c, items, &r.check, rc); /* compare.c; before the analysis */
	if (mode != M_INFO)
		rc = analyze_all(c, items, &o, own_o, rc);
	/* an error (a model that cannot be read) leaves no output file */
	FILE *out = !c->output ? stdout : rc < EXIT_USAGE ? out_open(c->output) : NULL;
	if (c->output && rc < EXIT_USAGE && !out) {
		error_at(c->output, "cannot write: %s", strerror(errno));
		rc = EXIT_IO;
	}
	if (out && mode == M_INFO)
		sink->info(out, items, (size_t)c->n_paths, &o);
	else if (out && mode == M_PLAN)
		sink->plan(out, items, (size_t)c->n_paths, &o);
	else if (out)
		sink->check(out, items, (size_t)c->n_paths, &o);
	if (mode != M_INFO && rc == EXIT_ALL_ANE && c->write_baseline) {
		rc = ci_write_baseline(ci, c->write_baseline, items, c->n_paths); /* recorded: accepted */
	} else if (mode != M_INFO && rc == EXIT_ALL_ANE) {
		for (int i = 0; i < c->n_paths; i++) {
			struct al_report_opts oi = own_o && own_o[i] ? *own_o[i] : o; /* [[model]] settings */
			oi.fail_on = (enum al_fail_on)ci_fail_on(ci, items[i].path, (int)o.fail_on);
			if (items[i].model && al_report_fails(&items[i], &oi))
				rc = EXIT_FALLBACK;
		}
	}
	free_items(items, c->n_paths);
	free(own);
	free(own_o);
	al_user_rules_free(r.rules); /* after the models: verdicts point at their rules */
	ci_free(ci);
	if (out && !out_close(out, c->output, true)) {
		if (c->output)
			error_at(c->output, "cannot write: %s", strerror(errno));
		else
			fprintf(stderr, "anelint: error: cannot write the output\n");
		return EXIT_IO;
	}
	return rc;
}

int cmd_check(struct cli *c)
{
	return run_models(c, command("check"), M_CHECK);
}

int cmd_info(struct cli *c)
{
	return run_models(c, command("info"), M_INFO);
}

int cmd_plan(struct cli *c)
{
	return run_models(c, command("plan"), M_PLAN);
}

/* report: check + plan in a report format (html by default); exit codes as check */
int cmd_report(struct cli *c)
{
	return run_models(c, command("report"), M_CHECK);
}
