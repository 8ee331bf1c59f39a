/* SPDX-License-Identifier: MIT */
/* compare.c: `anelint compare MODEL EVIDENCE...` (what a Mac observed against
 * the prediction, docs/evidence.md: al_compare), `anelint report --evidence`
 * (al_report_compare) and `anelint calibrate EVIDENCE... -o RULES` (a --rules
 * file that makes check agree with the evidence: al_calibrate): the options
 * parsed, one library call, its document and errors printed. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool parse_pct(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !(v >= 0 && v <= 100))
		return false;
	*out = v;
	return true;
}

/* --target / --os / --compute-units (one id each: al_where_parse) and --rules. */
struct settings {
	struct al_where where; /* compute units: evidence that says its own wins */
	al_user_rules *rules;
};

static int settings_of(const struct cli *c, const struct command_row *cmd, struct settings *s)
{
	memset(s, 0, sizeof *s);
	struct al_where_spec w;
	al_diags *wd = al_diags_new();
	enum al_status wst = wd ? al_where_parse(c->target, c->os, c->compute_units, AL_WHERE_ONE, &w, wd)
				: AL_E_NOMEM;
	const struct al_diag *x = wst != AL_OK && wd && al_diags_count(wd) ? al_diags_get(wd, 0) : NULL;
	/* which option it was, read before the diagnostics (and x->where) are freed */
	bool bad_target = x && x->where && strcmp(x->where, "target") == 0;
	bool bad_os = x && x->where && strcmp(x->where, "os") == 0;
	bool said = x != NULL;
	al_diags_free(wd);
	if (wst == AL_E_NOMEM || (wst != AL_OK && !said))
		return EXIT_IO;
	if (bad_target)
		return usage_error(cmd, "unknown target '%s' (see 'anelint targets')", c->target);
	if (bad_os)
		return usage_error(cmd, "unknown OS release '%s' (see 'anelint targets')", c->os);
	if (wst != AL_OK)
		return usage_error(cmd, "--compute-units takes all, cpu-and-gpu, cpu-and-ne or cpu-only, not '%s'",
				   c->compute_units);
	s->where = w.where;
	if (c->rules) {
		al_diags *d = al_diags_new();
		if (!d)
			return EXIT_IO;
		enum al_status st = al_user_rules_load(c->rules, &s->rules, d);
		if (st != AL_OK)
			print_errors(c->rules, d);
		al_diags_free(d);
		if (st != AL_OK)
			return status_exit(st);
	}
	return EXIT_ALL_ANE;
}

static int evidence_format_of(const struct cli *c, const struct command_row *cmd, const char *v, int *f)
{
	*f = 0;
	if (v && ((*f = al_evidence_format_find(v)) < 0 || (!c->evidence_format && *f == 0)))
		return usage_error(cmd, "evidence formats: json, mil, plan, mlperf, oslog, placement (and auto to read); not '%s'", v);
	return EXIT_ALL_ANE;
}

/* ---------------------------------------------------------------- compare */

int cmd_compare(struct cli *c)
{
	const struct command_row *cmd = command("compare");
	struct settings s;
	int rc = settings_of(c, cmd, &s);
	if (rc != EXIT_ALL_ANE)
		return rc;
	double under = 0;
	int fmt = 0, write = 0;
	const char *out = c->format ? c->format : "text";
	if (c->fail_under && !parse_pct(c->fail_under, &under))
		rc = usage_error(cmd, "--fail-under takes a percentage 0-100, not '%s'", c->fail_under);
	else if (strcmp(out, "text") != 0 && strcmp(out, "json") != 0)
		rc = usage_error(cmd, "compare writes text or json, not '%s'", out);
	else if (c->evidence_format)
		rc = evidence_format_of(c, cmd, c->evidence_format, &fmt);
	if (rc == EXIT_ALL_ANE && !c->write_evidence && c->n_paths < 2)
		rc = usage_error(cmd, "compare needs a model and at least one evidence file%s", "");
	if (rc == EXIT_ALL_ANE && c->write_evidence && c->n_paths != 1)
		rc = usage_error(cmd, "--write-evidence takes the model only, not '%s'", c->paths[1]);
	if (rc == EXIT_ALL_ANE && c->write_evidence)
		rc = evidence_format_of(c, cmd, c->write_evidence, &write);
	if (rc == EXIT_ALL_ANE && c->write_evidence && write == 0)
		rc = usage_error(cmd, "--write-evidence takes json, mil, plan, mlperf, oslog or placement, not '%s'", "auto");
	if (rc == EXIT_ALL_ANE) /* -o must not name the model, --rules or an evidence file */
		rc = guard_output(c, c->output, 0);
	al_diags *d = rc == EXIT_ALL_ANE ? al_diags_new() : NULL;
	if (rc != EXIT_ALL_ANE || !d) {
		al_user_rules_free(s.rules);
		return rc != EXIT_ALL_ANE ? rc : EXIT_IO;
	}
	struct al_compare_opts o = {
		.model = c->paths[0], .evidence = c->paths + 1, .n_evidence = (size_t)(c->n_paths - 1),
		.evidence_format = fmt, .where = s.where, .rules = s.rules, .json = strcmp(out, "json") == 0,
		.fail_under = under, .write_evidence = write, .output = c->output,
	};
	if (write)
		o.n_evidence = 0;
	struct al_compare_result r = {0};
	enum al_status st = al_compare(&o, &r, d);
	rc = st == AL_E_INVALID_ARG ? EXIT_USAGE : r.exit_code;
	if (rc >= EXIT_INVALID)
		print_errors(c->paths[0], d);
	al_diags_free(d);
	al_user_rules_free(s.rules);
	if (r.doc && !c->output) {
		fwrite(r.doc, 1, r.n_doc, stdout);
		if (fflush(stdout) != 0)
			rc = worst_exit(rc, EXIT_IO);
	}
	if (r.under && rc == EXIT_FALLBACK)
		fprintf(stderr, "anelint: agreement %.1f%% is under --fail-under %g\n", r.agreement, under);
	al_compare_result_free(&r);
	return rc;
}

/* ---------------------------------------------------------------- report --evidence */

int report_evidence(const struct cli *c, struct al_report_item *items, const struct al_check_opts *check, int rc)
{
	if (c->evidence_format && strcmp(c->evidence_format, "auto") != 0 && al_evidence_format_find(c->evidence_format) < 0)
		return usage_error(command("report"), "evidence formats: json, mil, plan, mlperf, oslog, placement (and auto); not '%s'",
				   c->evidence_format);
	for (int i = 0; i < c->n_paths; i++) {
		if (!items[i].model)
			continue;
		al_diags *d = al_diags_new();
		enum al_status st = d ? al_report_compare(&items[i], c->evidence.v, (size_t)c->evidence.n,
							 c->evidence_format, check, d)
				      : AL_E_NOMEM;
		rc = model_step_exit(items[i].path, d, st, rc);
	}
	return rc;
}

/* ---------------------------------------------------------------- calibrate */

/* calibrate: al_calibrate (src/command/calibrate.c) does the work; this prints its notes,
 * errors and summary. */
int cmd_calibrate(struct cli *c)
{
	const struct command_row *cmd = command("calibrate");
	struct settings s;
	int rc = settings_of(c, cmd, &s), fmt = 0;
	if (rc == EXIT_ALL_ANE && !c->output)
		rc = usage_error(cmd, "calibrate writes a rules file: give -o RULES%s", "");
	if (rc == EXIT_ALL_ANE)
		rc = guard_output(c, c->output, 0);
	if (rc == EXIT_ALL_ANE && c->evidence_format)
		rc = evidence_format_of(c, cmd, c->evidence_format, &fmt);
	al_diags *d = rc == EXIT_ALL_ANE ? al_diags_new() : NULL;
	if (rc != EXIT_ALL_ANE || !d) {
		al_user_rules_free(s.rules);
		return rc != EXIT_ALL_ANE ? rc : EXIT_IO;
	}
	struct al_calibrate_opts o = {
		.model = c->paths[0], .evidence = c->paths + 1, .n_evidence = (size_t)(c->n_paths - 1),
		.evidence_format = fmt, .where = s.where,
		.rules_path = c->rules, .rules = s.rules, .output = c->output,
	};
	struct al_calibrate_result r;
	enum al_status st = al_calibrate(&o, &r, d);
	for (const char *p = r.notes, *nl; st != AL_E_INVALID_ARG && p && *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p) - 1;
		fputs("anelint: ", stderr);
		fwrite(p, 1, (size_t)(nl - p + 1), stderr);
	}
	if (st != AL_OK)
		print_errors(c->output, d);
	al_diags_free(d);
	al_user_rules_free(s.rules);
	if (st == AL_E_INVALID_ARG)
		return EXIT_USAGE;
	if (r.written) {
		printf("calibrate: %zu rule%s written to ", r.rules_written, r.rules_written == 1 ? "" : "s");
		put_text(stdout, c->output, CLI_NAME_MAX);
		printf("; %zu conflict%s, %zu not calibratable; agreement %.1f%% (%zu of %zu) before, %.1f%% (%zu of %zu) "
		       "with the rules\n",
		       r.conflicts, r.conflicts == 1 ? "" : "s", r.not_calibratable,
		       r.matched_before ? 100.0 * (double)r.agreed_before / (double)r.matched_before : 100.0, r.agreed_before,
		       r.matched_before, r.matched_after ? 100.0 * (double)r.agreed_after / (double)r.matched_after : 100.0,
		       r.agreed_after, r.matched_after);
	}
	rc = r.exit_code;
	al_calibrate_result_free(&r);
	return rc;
}
