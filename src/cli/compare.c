/* SPDX-License-Identifier: MIT */
/* compare.c: `anelint compare MODEL EVIDENCE...` (what a Mac observed against
 * the prediction, docs/evidence.md) and `anelint calibrate EVIDENCE... -o RULES`
 * (a --rules file that makes check agree with the evidence). */
#include "cli.h"
#include "base.h"     /* ali_write_atomic */
#include "evidence.h" /* the evidence readers and the comparison */
#include "report.h"   /* the anelint-compare document (report_evidence.c) */

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- output */

/* The whole output to -o FILE (atomically) or stdout. */
static int emit(const struct cli *c, const char *p, size_t n)
{
	if (!c->output) {
		fwrite(p, 1, n, stdout);
		return fflush(stdout) == 0 ? EXIT_ALL_ANE : EXIT_IO;
	}
	al_diags *d = al_diags_new();
	enum al_status st = d ? ali_write_atomic_bytes(c->output, p, n, d) : AL_E_NOMEM;
	if (st != AL_OK)
		print_errors(c->output, d);
	al_diags_free(d);
	return st == AL_OK ? EXIT_ALL_ANE : EXIT_IO;
}

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

/* Open the model compare and calibrate take first: EXIT_ALL_ANE and *m, or the
 * exit status after its errors were printed. */
static int open_model_path(const char *path, al_model **m)
{
	al_diags *d = al_diags_new();
	enum al_status st = d ? al_model_open(path, m, d) : AL_E_NOMEM;
	if (st != AL_OK)
		print_errors(path, d);
	al_diags_free(d);
	return st == AL_OK ? EXIT_ALL_ANE : status_exit(st);
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
	const char *bad = x && x->where ? x->where : "";
	al_diags_free(wd);
	if (wst == AL_E_NOMEM || (wst != AL_OK && !x))
		return EXIT_IO;
	if (strcmp(bad, "target") == 0)
		return usage_error(cmd, "unknown target '%s' (see 'anelint targets')", c->target);
	if (strcmp(bad, "os") == 0)
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
	*f = AL_EVF_AUTO;
	if (v && ((*f = ali_ev_format_find(v)) < 0 || (!c->evidence_format && *f == AL_EVF_AUTO)))
		return usage_error(cmd, "evidence formats: json, mil, plan, mlperf, oslog, placement (and auto to read); not '%s'", v);
	return EXIT_ALL_ANE;
}

/* ---------------------------------------------------------------- one comparison */

struct one {
	const char *path;
	struct al_evidence *ev;
	struct al_where where; /* what the evidence says, else the options, else the defaults */
	struct al_cmp cmp;
	bool ok;
};

/* Where evidence e was observed: what it says, else the options s, else the
 * defaults (a target and a release, never NULL). */
static struct al_where observed_where(const struct al_evidence *e, const struct settings *s)
{
	return (struct al_where){
		.target = e->target ? e->target : s->where.target ? s->where.target : al_target_default(),
		.os = e->release ? e->release : s->where.os ? s->where.os : al_release_default(),
		.compute_units = e->has_cu ? e->cu : s->where.compute_units};
}

static const char *unit_short(enum al_unit u)
{
	return al_unit_name(u);
}

static void text_reasons(FILE *f, const struct al_node *n)
{
	const struct al_verdict *v = &n->verdict;
	bool any = false;
	for (uint32_t i = 0; i < v->n_rules; i++) {
		fputs(any ? "; " : "", f);
		fputs(v->rules[i]->id, f);
		fputs(": ", f);
		put_text(f, v->reasons[i], CLI_MSG_MAX);
		any = true;
	}
	if (v->moved_by) {
		fprintf(f, "%s%s: %s", any ? "; " : "", v->moved_by->id, v->moved_by->title);
		any = true;
	}
	if (!any)
		fputs(v->placed == AL_UNIT_ANE ? "no rule fired" : "placed by the partition", f);
}

static void text_one(FILE *f, const char *model, const struct one *o)
{
	const struct al_cmp *c = &o->cmp;
	put_text(f, model, CLI_NAME_MAX);
	fputs(" vs ", f);
	put_text(f, o->path, CLI_NAME_MAX);
	fprintf(f, " (%s; target %s%s, os %s%s, compute units %s%s)\n", ali_ev_format_name(o->ev->format),
		o->where.target->id, o->ev->target ? " from the evidence" : "", o->where.os->id,
		o->ev->release ? " from the evidence" : "", al_compute_units_name(o->where.compute_units),
		o->ev->has_cu ? " from the evidence" : "");
	if (c->model_level)
		fprintf(f, "  model-level entries %zu (this model's: %s), ops counted %zu\n", o->ev->n_models,
			c->entry ? "found" : "none", c->matched);
	else
		fprintf(f, "  evidence ops %zu, matched %zu (%zu by type and order), unmatched %zu\n", c->n_rows,
			c->matched, c->by_order, c->unmatched);
	fprintf(f, "  agreement %.1f%% (%zu of %zu)\n", ali_cmp_agreement(c), c->agreed, c->matched);
	if (c->model_level) { /* a placement file: counts per unit */
		static const char *const un[3] = {"ane", "gpu", "cpu"};
		if (!c->entry) {
			fputs("  no entry of the file names this model\n", f);
			return;
		}
		fputs("  entry ", f);
		put_text(f, c->entry->model, CLI_NAME_MAX);
		fprintf(f, ": op counts per unit (model level: no op named)\n  %-10s %9s %9s\n", "", "predicted", "observed");
		for (int u = 0; u < 3; u++)
			fprintf(f, "  %-10s %9zu %9" PRIu64 "%s\n", un[u], c->predicted_count[u], c->entry->count[u],
				(uint64_t)c->predicted_count[u] == c->entry->count[u] ? "" : "  <- differs");
		fprintf(f, "  %-10s %9zu %9" PRIu64 "\n", "consts", c->consts, c->entry->unknown);
		return;
	}
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
		put_text(f, row->ev->name, CLI_NAME_MAX);
		fputs(" (", f);
		put_text(f, row->node->type, CLI_NAME_MAX);
		fprintf(f, "): predicted %s [", unit_short(row->predicted));
		text_reasons(f, row->node);
		fprintf(f, "], observed %s", ali_obs_name(row->ev->obs));
		if (row->ev->reason) {
			fputs(" [device: ", f);
			put_text(f, row->ev->reason, CLI_MSG_MAX);
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
				put_text(f, c->rows[r].ev->name, CLI_NAME_MAX);
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

static json_object *json_one(const struct one *o)
{
	return ali_compare_entry(o->path, o->ev, o->where.target, o->where.os, o->where.compute_units, &o->cmp);
}

/* Load every evidence file of paths[from..]; check m for each one's chip and
 * release; compare. Returns the worst exit code of the loads. */
static int compare_all(struct cli *c, al_model *m, const struct settings *s, int fmt, struct one *ones, int from)
{
	int rc = EXIT_ALL_ANE;
	for (int i = from; i < c->n_paths; i++) {
		struct one *o = &ones[i - from];
		o->path = c->paths[i];
		al_diags *d = al_diags_new();
		if (!d)
			return EXIT_IO;
		enum al_status st = ali_evidence_load(o->path, fmt, &o->ev, d);
		if (st == AL_OK) {
			o->where = observed_where(o->ev, s);
			if (m) {
				struct al_check_opts co = {.where = o->where, .user_rules = s->rules};
				st = al_model_check(m, &co, d);
				if (st == AL_OK)
					st = ali_compare(m, o->ev, &o->cmp);
			}
		}
		o->ok = st == AL_OK;
		rc = model_step_exit(o->path, d, st, rc);
	}
	return rc;
}

static int write_evidence(struct cli *c, const struct command_row *cmd, al_model *m, const struct settings *s)
{
	int f;
	int rc = evidence_format_of(c, cmd, c->write_evidence, &f);
	if (rc != EXIT_ALL_ANE)
		return rc;
	if (f == AL_EVF_AUTO)
		return usage_error(cmd, "--write-evidence takes json, mil, plan, mlperf, oslog or placement, not '%s'", "auto");
	const struct al_target *t = s->where.target ? s->where.target : al_target_default();
	const struct al_release *os = s->where.os ? s->where.os : al_release_default();
	struct al_check_opts co = {.target = t, .os = os, .user_rules = s->rules, .compute_units = s->where.compute_units};
	al_diags *d = al_diags_new();
	struct al_buf b = {0};
	enum al_status st = d ? al_model_check(m, &co, d) : AL_E_NOMEM;
	if (st == AL_OK)
		st = ali_evidence_write(m, f, t->id, os->id, &b);
	if (st != AL_OK) {
		print_errors(c->paths[0], d);
		rc = status_exit(st);
	} else {
		rc = emit(c, (const char *)b.p, b.n);
	}
	ali_buf_free(&b);
	al_diags_free(d);
	return rc;
}

int cmd_compare(struct cli *c)
{
	const struct command_row *cmd = command("compare");
	struct settings s;
	int rc = settings_of(c, cmd, &s);
	if (rc != EXIT_ALL_ANE)
		return rc;
	double under = -1;
	int fmt = AL_EVF_AUTO;
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
	if (rc != EXIT_ALL_ANE) {
		al_user_rules_free(s.rules);
		return rc;
	}
	al_model *m = NULL;
	if ((rc = open_model_path(c->paths[0], &m)) != EXIT_ALL_ANE) {
		al_user_rules_free(s.rules);
		return rc;
	}
	if (c->write_evidence) {
		rc = guard_output(c, c->output, 0);
		if (rc == EXIT_ALL_ANE)
			rc = write_evidence(c, cmd, m, &s);
		al_model_free(m);
		al_user_rules_free(s.rules);
		return rc;
	}
	int n = c->n_paths - 1;
	struct one *ones = calloc((size_t)n, sizeof *ones);
	char *text = NULL;
	size_t text_n = 0;
	FILE *f = ones ? open_memstream(&text, &text_n) : NULL;
	json_object *top = json_object_new_object(), *arr = json_object_new_array();
	size_t matched = 0, agreed = 0;
	if (!f) {
		rc = EXIT_IO;
		goto done;
	}
	/* one evidence file at a time: each may name its own chip and release, and a
	 * check replaces the verdicts the previous comparison's rows point at */
	for (int i = 0; i < n; i++) {
		struct cli one_c = *c;
		one_c.paths = c->paths + i;
		one_c.n_paths = 2;
		rc = worst_exit(rc, compare_all(&one_c, m, &s, fmt, &ones[i], 1));
		if (!ones[i].ok)
			continue;
		matched += ones[i].cmp.matched;
		agreed += ones[i].cmp.agreed;
		if (strcmp(out, "json") == 0)
			json_object_array_add(arr, json_one(&ones[i]));
		else
			text_one(f, c->paths[0], &ones[i]);
	}
	double total = matched ? 100.0 * (double)agreed / (double)matched : 100.0;
	if (strcmp(out, "json") == 0) {
		json_object_put(top);
		top = ali_compare_doc(c->paths[0], arr, matched, agreed);
		arr = NULL;
		fputs(json_object_to_json_string_ext(top, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE), f);
		fputs("\n", f);
	} else if (n > 1) {
		fprintf(f, "overall agreement %.1f%% (%zu of %zu)\n", total, agreed, matched);
	}
	if (fflush(f) != 0 || ferror(f)) {
		rc = EXIT_IO;
		goto done;
	}
	rc = worst_exit(rc, emit(c, text, text_n));
	if (rc == EXIT_ALL_ANE && under >= 0 && total < under) {
		fprintf(stderr, "anelint: agreement %.1f%% is under --fail-under %g\n", total, under);
		rc = EXIT_FALLBACK;
	}
done:
	if (f)
		fclose(f);
	free(text);
	json_object_put(top);
	json_object_put(arr);
	for (int i = 0; ones && i < n; i++) {
		ali_cmp_free(&ones[i].cmp);
		ali_evidence_free(ones[i].ev);
	}
	free(ones);
	al_model_free(m);
	al_user_rules_free(s.rules);
	return rc;
}

/* ---------------------------------------------------------------- report --evidence */

int report_evidence(const struct cli *c, struct al_report_item *items, const struct al_check_opts *check, int rc)
{
	if (c->evidence_format && strcmp(c->evidence_format, "auto") != 0 && ali_ev_format_find(c->evidence_format) < 0)
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
	int rc = settings_of(c, cmd, &s), fmt = AL_EVF_AUTO;
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
