/* SPDX-License-Identifier: MIT */
/* pipeline.c: check, info, plan and report: the configuration and directories
 * expanded (ci.c), the options turned into settings (settings.c), then one
 * library call (al_models_run, src/command/models.c) that loads, checks,
 * analyses and writes the models, with this file's hooks: errors and notes on
 * stderr (output.c), a [[model]]'s own settings, report --evidence (compare.c),
 * accepted findings and baselines (ci.c), stdout or -o FILE (output.c). */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* What the hooks share: the command line, its configuration and settings. */
struct front {
	struct cli *c;
	const struct command_row *cmd;
	struct ci *ci;
	struct run *r;
	struct own_opts *own; /* [[model]] settings, per path (NULL: none) */
	FILE *out;
};

static struct front *front_of(struct al_models_run *m)
{
	return m->ctx;
}

static void on_errors(struct al_models_run *m, const char *path, const al_diags *d)
{
	(void)m;
	if (d)
		print_errors(path, d);
	else
		fprintf(stderr, "anelint: error: out of memory\n");
}

static void on_note(struct al_models_run *m, const char *path, const char *msg)
{
	(void)m;
	fputs("anelint: note: ", stderr);
	put_text(stderr, path, CLI_NAME_MAX);
	fprintf(stderr, ": %s\n", msg);
}

/* A model's own options: the [[model]] settings of the configuration. */
struct own_opts {
	struct run r;
	struct al_report_opts o;
};

/* The models a [[model]] section gives settings of their own (target, os,
 * compute_units, policy, select/ignore) are checked again with them, and
 * analysed with them (*own_o[i]); the report's columns stay the top level's, so
 * a [[model]] target or os goes only with one target and one release there. */
static int model_settings(struct al_models_run *m, struct al_report_item *items, size_t n,
			  const struct al_report_opts **own_o, int rc)
{
	struct front *f = front_of(m);
	struct cli *c = f->c;
	const struct command_row *cmd = f->cmd;
	struct ci *ci = f->ci;
	const struct al_report_opts *o = &m->report;
	/* the top level's columns, as the models were loaded (some releases left out) */
	struct run top = *f->r;
	top.where = m->where;
	const struct run *r = &top;
	struct own_opts **own = &f->own;
	for (size_t i = 0; i < n; i++) {
		struct cli cc;
		uint32_t line = 0;
		if (!items[i].model || !ci_model_cli(ci, items[i].path, c, &cc, &line))
			continue;
		if (!*own && !(*own = calloc(n, sizeof **own)))
			return EXIT_IO;
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
			memcpy(x->r.where.columns, r->where.columns, sizeof r->where.columns);
			x->r.where.n_columns = r->where.n_columns;
			x->r.where.all_targets = r->where.all_targets;
			x->r.where.all_releases = r->where.all_releases;
		}
		x->r.check.user_rules = r->check.user_rules;
		x->r.check.rule_on = r->check.rule_on;
		x->r.check.rule_on_ctx = r->check.rule_on_ctx;
		ci_model_selection(ci, items[i].path, &x->r.check);
		x->o = *o;
		x->o.check = &x->r.check;
		x->o.plan = &x->r.plan;
		x->o.columns = x->r.where.columns;
		own_o[i] = &x->o;
		al_diags *d = al_diags_new();
		enum al_status st = d ? al_model_check(items[i].model, &x->r.check, d) : AL_E_NOMEM;
		rc = model_step_exit(items[i].path, d, st, rc);
	}
	return rc;
}

static bool has_own(struct al_models_run *m, const char *path)
{
	struct front *f = front_of(m);
	struct cli cc;
	uint32_t line = 0;
	return ci_model_cli(f->ci, path, f->c, &cc, &line);
}

/* A model's metadata or the baseline may accept findings. */
static void accepts(struct al_models_run *m, const struct al_report_item *items, size_t n)
{
	struct front *f = front_of(m);
	if (ci_accepts_anything(f->ci, items, (int)n)) {
		m->report.accepted = ci_accepted;
		m->report.accepted_ctx = f->ci;
	}
}

static int evidence(struct al_models_run *m, struct al_report_item *items, size_t n, int rc)
{
	(void)n;
	return report_evidence(front_of(m)->c, items, &m->check, rc); /* compare.c */
}

static enum al_fail_on fail_on(struct al_models_run *m, const char *path, enum al_fail_on dflt)
{
	return (enum al_fail_on)ci_fail_on(front_of(m)->ci, path, (int)dflt);
}

static int baseline_write(struct al_models_run *m, const struct al_report_item *items, size_t n)
{
	struct front *f = front_of(m);
	return ci_write_baseline(f->ci, f->c->write_baseline, items, (int)n);
}

static void *baseline_begin(struct al_models_run *m)
{
	struct front *f = front_of(m);
	return ci_baseline_begin(f->ci, f->c->write_baseline);
}

static void baseline_add(void *b, const struct al_report_item *it)
{
	ci_baseline_add(b, it);
}

static int baseline_end(void *b, bool write)
{
	return ci_baseline_end(b, write);
}

/* stdout, or -o FILE unless an error came first (it leaves no output file) */
static FILE *open_out(struct al_models_run *m, bool failed)
{
	struct front *f = front_of(m);
	if (!f->c->output)
		return stdout;
	if (failed)
		return NULL;
	FILE *out = out_open(f->c->output);
	if (!out)
		error_at(f->c->output, "cannot write: %s", strerror(errno));
	return out;
}

static int close_out(struct al_models_run *m, FILE *out, bool keep)
{
	struct front *f = front_of(m);
	keep = keep || !f->c->output;
	if (!out_close(out, f->c->output, keep) && keep) {
		if (f->c->output)
			error_at(f->c->output, "cannot write: %s", strerror(errno));
		else
			fprintf(stderr, "anelint: error: cannot write the output\n");
		return EXIT_IO;
	}
	return EXIT_ALL_ANE;
}

enum mode { M_CHECK, M_INFO, M_PLAN };

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
	if (!rc && (rc = guard_output(c, c->output, 0)) == 0)
		rc = guard_output(c, c->write_baseline, 0);
	if (rc) {
		al_user_rules_free(r.rules);
		ci_free(ci);
		return rc;
	}
	o.information_uri = ci_information_uri(ci);
	/* check (text, JSON) with no release asked: every release of each model's
	 * deployment range too (per model, so a folder still streams) */
	o.deployment_range = cmd->bit == C_CHECK && !r.check.os &&
			     (strcmp(sink->name, "text") == 0 || strcmp(sink->name, "json") == 0);
	struct front f = {.c = c, .cmd = cmd, .ci = ci, .r = &r};
	struct al_models_run m = {
		.cmd = mode == M_INFO ? AL_SINK_INFO : mode == M_PLAN ? AL_SINK_PLAN : AL_SINK_CHECK,
		.sink = sink, .paths = c->paths, .n_paths = (size_t)c->n_paths, .function = c->function,
		.check = r.check, .plan = r.plan, .report = o, .ctx = &f,
		.errors = on_errors, .note = on_note, .has_own = has_own, .accepts = accepts,
		.own = model_settings, .evidence = c->evidence.n ? evidence : NULL, .fail_on = fail_on,
		.baseline_write = baseline_write, .baseline_begin = baseline_begin, .baseline_add = baseline_add,
		.baseline_end = baseline_end, .records_baseline = c->write_baseline != NULL,
		.open = open_out, .close = close_out, .outcome_floor = ci_unsearched_exit(ci),
	};
	m.where = r.where;
	rc = al_models_run(&m);
	free(f.own);
	al_user_rules_free(r.rules); /* after the models: verdicts point at their rules */
	ci_free(ci);
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
