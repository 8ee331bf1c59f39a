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

/* Load (and for `check` and `plan`, evaluate) every path; errors dominate
 * findings, and among errors an I/O error (4) dominates an invalid model (3). */
static int load_all(struct cli *c, const struct al_check_opts *check, struct al_report_item *items)
{
	int rc = EXIT_ALL_ANE;
	for (int i = 0; i < c->n_paths; i++) {
		struct al_report_item *it = &items[i];
		it->path = c->paths[i];
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
			rc = worst_exit(rc, status_exit(it->status));
		}
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
	if (output_is_input(c)) {
		al_user_rules_free(r.rules);
		ci_free(ci);
		return usage_error(cmd, "-o %s is one of the models: it would be replaced", c->output);
	}
	struct al_report_item *items = calloc((size_t)c->n_paths, sizeof *items);
	if (!items) {
		al_user_rules_free(r.rules);
		ci_free(ci);
		return EXIT_IO;
	}
	rc = load_all(c, mode == M_INFO ? NULL : &r.check, items);
	if (mode != M_INFO && ci_accepts_anything(ci, items, c->n_paths)) {
		o.accepted = ci_accepted;
		o.accepted_ctx = ci;
	}
	o.plans = mode == M_PLAN || sink->shows_plans;
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
