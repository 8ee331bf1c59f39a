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

struct mem {
	const char *p;
	size_t n;
};

static bool fill_mem(int fd, void *ctx)
{
	struct mem *m = ctx;
	return ali_write_all(fd, m->p, m->n);
}

/* The whole output to -o FILE (atomically) or stdout. */
static int emit(const struct cli *c, const char *p, size_t n)
{
	if (!c->output) {
		fwrite(p, 1, n, stdout);
		return fflush(stdout) == 0 ? EXIT_ALL_ANE : EXIT_IO;
	}
	al_diags *d = al_diags_new();
	struct mem m = {p, n};
	enum al_status st = d ? ali_write_atomic(c->output, fill_mem, &m, d) : AL_E_NOMEM;
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

/* One compared op, kept past the next check (verdicts are per check). */
struct fact {
	const char *file, *name, *type;
	uint32_t line;
	bool nn;
	const struct al_target *target;
	const struct al_release *os;
	int obs;
	enum al_unit pred;
	const struct al_rule *off[8]; /* fallback rules that fired, and the rule that moved it */
	int n_off;
	const struct al_rule *unit_rule; /* the fallback rule that decided its unit (NULL: none fired) */
	bool unsure_kind; /* predicted on the ANE, uncertain: no report saw its kind there (kind_status.c) */
};

static int conf_rank(char c)
{
	return c == 'A' ? 3 : c == 'M' ? 2 : c == 'G' ? 1 : 0;
}

static int release_index(const struct al_release *os)
{
	for (size_t i = 0; i < al_releases_count(); i++)
		if (al_release_at(i) == os)
			return (int)i;
	return -1;
}

/* Printable ASCII of s, at most max bytes, into buf (rules files refuse control characters). */
static const char *plain(const char *s, char *buf, size_t cap, size_t max)
{
	size_t k = 0;
	for (; s && *s && k + 1 < cap && k < max; s++)
		buf[k++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
	buf[k] = 0;
	return buf;
}

/* Whether a type from the model can be a rules file's `op:` / `layer:` item:
 * 1-128 letters, digits or '_' (what src/analysis/user_rules.c parse_types
 * reads back). Other types (a hostile model's newline, comma or '#') are
 * reported as not calibratable rather than written. */
static bool rules_type_name(const char *s)
{
	size_t n = 0;
	for (; s && s[n]; n++)
		if (!(s[n] >= 'a' && s[n] <= 'z') && !(s[n] >= 'A' && s[n] <= 'Z') && !(s[n] >= '0' && s[n] <= '9') &&
		    s[n] != '_')
			return false;
	return n > 0 && n <= 128;
}

static int target_index(const struct al_target *t)
{
	for (size_t i = 0; i < al_targets_count(); i++)
		if (al_target_at(i) == t)
			return (int)i;
	return -1;
}

static bool has_rule(const struct fact *f, const struct al_rule *r)
{
	for (int i = 0; i < f->n_off; i++)
		if (strcmp(f->off[i]->id, r->id) == 0)
			return true;
	return false;
}

/* Rules that pre-empt another where both would move the same ops: the whole-model work floor
 * (ANE071) is the floor per ANE segment (ANE072) applied to a model of one segment, with the
 * same thresholds. */
static const struct {
	const char *rule, *then;
} preempts[] = {{"ANE071", "ANE072"}};

/* Check and compare m with every evidence file; append the matched ops to *facts. */
static int gather(struct cli *c, al_model *m, const struct settings *s, int fmt, const al_user_rules *u,
		  struct fact **facts, size_t *n, struct al_evidence **evs, size_t *agreed, size_t *matched)
{
	int rc = EXIT_ALL_ANE;
	*agreed = *matched = 0;
	for (int i = 1; i < c->n_paths; i++) {
		al_diags *d = al_diags_new();
		if (!d)
			return EXIT_IO;
		struct al_evidence *e = evs[i];
		enum al_status st = e ? AL_OK : ali_evidence_load(c->paths[i], fmt, &e, d);
		struct al_cmp cmp = {0};
		const struct al_target *t = NULL;
		const struct al_release *os = NULL;
		if (st == AL_OK) {
			evs[i] = e;
			struct al_check_opts co = {.where = observed_where(e, s), .user_rules = u};
			t = co.target;
			os = co.os;
			st = al_model_check(m, &co, d);
			if (st == AL_OK)
				st = ali_compare(m, e, &cmp);
		}
		rc = model_step_exit(c->paths[i], d, st, rc);
		if (st != AL_OK)
			continue;
		*agreed += cmp.agreed;
		*matched += cmp.matched;
		struct fact *v = facts ? realloc(*facts, (*n + cmp.n_rows + 1) * sizeof *v) : NULL;
		if (facts && !v) {
			ali_cmp_free(&cmp);
			return EXIT_IO;
		}
		if (facts)
			*facts = v;
		for (size_t r = 0; facts && r < cmp.n_rows; r++) {
			const struct al_cmp_row *row = &cmp.rows[r];
			if (!row->node)
				continue;
			struct fact *f = &v[(*n)++];
			memset(f, 0, sizeof *f);
			f->file = c->paths[i];
			f->name = row->ev->name;
			f->type = row->node->type;
			f->line = row->ev->line;
			f->nn = !row->node->owner || !row->node->owner->function;
			f->target = t;
			f->os = os;
			f->obs = row->ev->obs;
			f->pred = row->predicted;
			const struct al_verdict *vd = &row->node->verdict;
			for (uint32_t k = 0; k < vd->n_rules && f->n_off < 7; k++)
				if (vd->rules[k]->kind != AL_RULE_WARN)
					f->off[f->n_off++] = vd->rules[k];
			if (vd->moved_by && f->n_off < 8)
				f->off[f->n_off++] = vd->moved_by;
			/* a rule that pre-empts another: an op seen on the ANE against the first
			 * refutes the second there too, else switching the first off lets the
			 * second move it (anelint probe's work floor probes, work_s*) */
			for (size_t k = 0; vd->moved_by && k < sizeof preempts / sizeof preempts[0]; k++) {
				const struct al_rule *r2 = NULL;
				if (strcmp(vd->moved_by->id, preempts[k].rule) == 0 && f->n_off < 8)
					r2 = u ? al_user_rules_find(u, preempts[k].then) : al_rule_find(preempts[k].then);
				if (r2 && !has_rule(f, r2))
					f->off[f->n_off++] = r2;
			}
			f->unsure_kind = vd->placed == AL_UNIT_ANE && vd->verdict == AL_VERDICT_UNCERTAIN && f->n_off == 0 &&
					 !vd->uncertain_rule && !vd->unknown && al_kind_ane_status(f->nn, f->type, os, NULL) == '?';
			/* the unit: the strongest fallback rule (rule_engine.c decide), unless a
			 * model-level or partition rule moved it */
			for (uint32_t k = 0; !vd->moved_by && k < vd->n_rules; k++)
				if (vd->rules[k]->kind != AL_RULE_WARN &&
				    (!f->unit_rule || conf_rank(vd->rules[k]->confidence) > conf_rank(f->unit_rule->confidence)))
					f->unit_rule = vd->rules[k];
		}
		ali_cmp_free(&cmp);
	}
	return rc;
}

static void evidence_note(FILE *out, const struct fact *f)
{
	char a[80], b[80];
	fprintf(out, "# %s", plain(f->file, a, sizeof a, 70));
	if (f->line)
		fprintf(out, " line %u", f->line);
	char c[80];
	fprintf(out, ": %s (%s) observed %s on %s/%s, predicted %s\n", plain(f->name, b, sizeof b, 60),
		plain(f->type, c, sizeof c, 60),
		ali_obs_name(f->obs), f->target->id, f->os->id, al_unit_name(f->pred));
}

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
	if (rc != EXIT_ALL_ANE) {
		al_user_rules_free(s.rules);
		return rc;
	}
	al_model *m = NULL;
	if ((rc = open_model_path(c->paths[0], &m)) != EXIT_ALL_ANE) {
		al_user_rules_free(s.rules);
		return rc;
	}
	struct al_evidence **evs = calloc((size_t)c->n_paths, sizeof *evs);
	struct fact *facts = NULL;
	size_t n = 0, agreed0 = 0, matched0 = 0;
	char *text = NULL;
	size_t text_n = 0;
	FILE *out = evs ? open_memstream(&text, &text_n) : NULL;
	if (!out) {
		rc = EXIT_IO;
		goto done;
	}
	rc = gather(c, m, &s, fmt, s.rules, &facts, &n, evs, &agreed0, &matched0);
	if (rc != EXIT_ALL_ANE)
		goto done;
	/* paths escaped as everywhere (put_text): a newline in one cannot start a rule line */
	fputs("# anelint calibrate: rules that make `anelint check` agree with the evidence\n# model: ", out);
	put_text(out, c->paths[0], 0);
	for (int i = 1; i < c->n_paths; i++) {
		fputs("\n# evidence: ", out);
		put_text(out, c->paths[i], 0);
	}
	fputs("\n", out);
	fputs("# (docs/evidence.md \"Calibrate\"); each rule is preceded by the evidence that justified it.\n", out);
	if (c->rules) { /* the file stands alone: the --rules it was calibrated with come first */
		struct al_map map;
		al_diags *d = al_diags_new();
		enum al_status st = d ? ali_map_file(c->rules, NULL, &map, d) : AL_E_NOMEM;
		if (st != AL_OK) {
			print_errors(c->rules, d);
			al_diags_free(d);
			rc = status_exit(st);
			goto done;
		}
		al_diags_free(d);
		fputs("\n# ---- the rules of --rules ", out);
		put_text(out, c->rules, 0);
		fputs(", as given\n", out);
		fwrite(map.s.p, 1, map.s.n, out);
		fputs("\n# ---- calibrated\n", out);
		ali_unmap(&map);
	}
	size_t conflicts = 0, written = 0, uncal = 0;
	bool *done_f = calloc(n + 1, sizeof *done_f);
	if (!done_f) {
		rc = EXIT_IO;
		goto done;
	}
	/* 1. predicted off the ANE, observed on it: switch the rules that moved it off
	 *    for that chip on that release (off: CHIP@RELEASE), unless the same rule
	 *    was right on that chip and release elsewhere (a conflict)
	 * 3. predicted GPU, observed CPU (or the reverse): the unit of the rule that
	 *    decided it, unless that rule's ops were seen on the other unit too
	 * Both edit built-in rules: one override block per rule, written at the end. */
	struct edit {
		const struct al_rule *r;
		uint32_t off[32]; /* per family index: release bits */
		bool any_off;
		int unit;         /* -1: unchanged; else AL_OBS_GPU / AL_OBS_CPU */
	} *edits = calloc(n + 1, sizeof *edits);
	size_t n_edits = 0;
	if (!edits) {
		free(done_f);
		rc = EXIT_IO;
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		const struct fact *f = &facts[i];
		if (f->obs != AL_OBS_ANE || f->pred == AL_UNIT_ANE)
			continue;
		if (!f->n_off) {
			fprintf(stderr, "anelint: calibrate: ");
			put_text(stderr, f->name, CLI_NAME_MAX);
			fprintf(stderr, ": observed on the ANE, placed off it by the partition policy, not a rule: "
					"nothing to calibrate\n");
			uncal++;
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct fact *f = &facts[i];
		if (f->obs != AL_OBS_ANE || f->pred == AL_UNIT_ANE)
			continue;
		for (int k = 0; k < f->n_off; k++) {
			const struct al_rule *r = f->off[k];
			/* once per rule: every chip and release it was wrong on, unless it was right there too */
			bool seen = false;
			for (size_t j = 0; j < i && !seen; j++)
				seen = facts[j].obs == AL_OBS_ANE && facts[j].pred != AL_UNIT_ANE && has_rule(&facts[j], r);
			if (seen)
				continue;
			if (r->origin) { /* a rule of the --rules file: its author edits it */
				fprintf(stderr, "anelint: calibrate: %s comes from %s and was wrong for ", r->id, r->origin);
				put_text(stderr, f->name, CLI_NAME_MAX);
				fprintf(stderr, ": change it there\n");
				uncal++;
				continue;
			}
			struct edit *ed = &edits[n_edits];
			ed->r = r;
			ed->unit = -1;
			bool conflict_said = false;
			for (size_t j = i; j < n; j++) {
				const struct fact *g = &facts[j];
				if (g->obs != AL_OBS_ANE || g->pred == AL_UNIT_ANE || !has_rule(g, r))
					continue;
				int ti = target_index(g->target), ri = release_index(g->os);
				const struct fact *w = NULL;
				for (size_t h = 0; h < n && !w; h++)
					if (facts[h].target == g->target && facts[h].os == g->os && facts[h].obs != AL_OBS_ANE &&
					    has_rule(&facts[h], r))
						w = &facts[h];
				if (w) {
					if (!conflict_said) {
						char a[80], b[80];
						fprintf(stderr, "anelint: calibrate: conflict: %s is wrong for ", r->id);
						put_text(stderr, g->name, CLI_NAME_MAX);
						fprintf(stderr, " (observed on the ANE) but right for ");
						put_text(stderr, w->name, CLI_NAME_MAX);
						fprintf(stderr, " (observed %s, %s) on %s/%s: left as it is\n", ali_obs_name(w->obs),
							plain(w->file, a, sizeof a, 70), g->target->id, g->os->id);
						fprintf(out, "\n# conflict, no rule: %s wrong for %s, right for %s on %s/%s\n", r->id,
							plain(g->name, a, sizeof a, 60), plain(w->type, b, sizeof b, 60),
							g->target->id, g->os->id);
						conflicts++;
					}
					conflict_said = true;
					continue;
				}
				if (ti >= 0 && ti < 32 && ri >= 0 && ri < 32) {
					ed->off[ti] |= 1u << ri;
					ed->any_off = true;
				}
			}
			if (ed->any_off)
				n_edits++;
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct fact *f = &facts[i];
		if (f->pred == AL_UNIT_ANE || f->obs == AL_OBS_ANE || f->obs == AL_OBS_NOT_ANE ||
		    (int)f->obs == (f->pred == AL_UNIT_GPU ? AL_OBS_GPU : AL_OBS_CPU))
			continue;
		const struct al_rule *r = f->unit_rule;
		if (!r) {
			fprintf(stderr, "anelint: calibrate: ");
			put_text(stderr, f->name, CLI_NAME_MAX);
			fprintf(stderr, ": observed on the %s, placed on the %s by the partition, not a rule: nothing to "
					"calibrate\n", ali_obs_name(f->obs), al_unit_name(f->pred));
			uncal++;
			continue;
		}
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = facts[j].unit_rule == r && facts[j].obs != AL_OBS_ANE && facts[j].obs != AL_OBS_NOT_ANE &&
			       facts[j].pred != AL_UNIT_ANE &&
			       (int)facts[j].obs != (facts[j].pred == AL_UNIT_GPU ? AL_OBS_GPU : AL_OBS_CPU);
		if (seen)
			continue;
		if (r->origin) {
			fprintf(stderr, "anelint: calibrate: %s comes from %s and put ", r->id, r->origin);
			put_text(stderr, f->name, CLI_NAME_MAX);
			fprintf(stderr, " on the wrong unit: change it there\n");
			uncal++;
			continue;
		}
		/* a rule's unit holds on every chip and release: every op it decided must agree */
		const struct fact *w = NULL;
		for (size_t h = 0; h < n && !w; h++)
			if (facts[h].unit_rule == r && (facts[h].obs == AL_OBS_GPU || facts[h].obs == AL_OBS_CPU) &&
			    facts[h].obs != f->obs)
				w = &facts[h];
		if (w) {
			char a[80], b[80];
			fprintf(stderr, "anelint: calibrate: conflict: %s put ", r->id);
			put_text(stderr, f->name, CLI_NAME_MAX);
			fprintf(stderr, " on the %s (observed %s) and ", al_unit_name(f->pred), ali_obs_name(f->obs));
			put_text(stderr, w->name, CLI_NAME_MAX);
			fprintf(stderr, " was observed on the %s: a rule has one unit, left as it is\n", ali_obs_name(w->obs));
			fprintf(out, "\n# conflict, no rule: %s's ops observed on the gpu and on the cpu (%s, %s)\n", r->id,
				plain(f->name, a, sizeof a, 60), plain(w->type, b, sizeof b, 60));
			conflicts++;
			continue;
		}
		struct edit *ed = NULL;
		for (size_t e = 0; e < n_edits && !ed; e++)
			if (edits[e].r == r)
				ed = &edits[e];
		if (!ed) {
			ed = &edits[n_edits++];
			ed->r = r;
		}
		ed->unit = f->obs;
	}
	for (size_t e = 0; e < n_edits; e++) {
		const struct edit *ed = &edits[e];
		const struct al_rule *r = ed->r;
		fputs("\n", out);
		for (size_t j = 0; j < n; j++) {
			const struct fact *g = &facts[j];
			bool off_note = ed->any_off && g->obs == AL_OBS_ANE && g->pred != AL_UNIT_ANE && has_rule(g, r) &&
					(ed->off[target_index(g->target)] >> release_index(g->os) & 1u);
			bool unit_note = ed->unit >= 0 && g->unit_rule == r && (int)g->obs == ed->unit && g->pred != AL_UNIT_ANE &&
					 (int)g->obs != (g->pred == AL_UNIT_GPU ? AL_OBS_GPU : AL_OBS_CPU);
			if (off_note || unit_note)
				evidence_note(out, g);
		}
		fprintf(out, "id: %s\n", r->id);
		if (ed->any_off) {
			char list[512];
			size_t k = 0;
			list[0] = 0;
			for (size_t ti = 0; ti < al_targets_count() && ti < 32; ti++)
				for (size_t ri = 0; ri < al_releases_count() && ri < 32; ri++)
					if (ed->off[ti] >> ri & 1u && k + 40 < sizeof list)
						k += (size_t)snprintf(list + k, sizeof list - k, "%s%s@%s", k ? ", " : "",
								      al_target_at(ti)->id, al_release_at(ri)->id);
			fprintf(out, "# %s (%s) switched off where it was observed on the ANE against it: that chip on that "
				     "release only\noff: %s\n", r->id, r->name, list);
		}
		if (ed->unit >= 0)
			fprintf(out, "# %s's ops observed on the %s: its unit (one for every chip and release)\nunit: %s\n",
				r->id, ali_obs_name(ed->unit), ali_obs_name(ed->unit));
		fprintf(out, "provenance: anelint calibrate: evidence listed above\n");
		written++;
	}
	free(edits);
	/* 2. predicted on the ANE, observed off it: a new rule for the op type on that
	 *    chip and release, unless an op of that type was seen on the ANE there */
	/* new ids follow the CALnnn rules of --rules (a file calibrated before, given again to
	 * add to it), which are copied into the output: an id twice would not load */
	int next_id = 1;
	for (size_t i = 0; s.rules && i < al_user_rules_count(s.rules); i++) {
		const struct al_rule *r = al_user_rule_at(s.rules, i);
		int k = 0;
		char tail = 0;
		if (r && r->id && sscanf(r->id, "CAL%d%c", &k, &tail) == 1 && k >= next_id && k < 1000000)
			next_id = k + 1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct fact *f = &facts[i];
		if (done_f[i] || f->pred != AL_UNIT_ANE || f->obs == AL_OBS_ANE)
			continue;
		const struct fact *w = NULL;
		for (size_t h = 0; h < n && !w; h++)
			if (facts[h].target == f->target && facts[h].os == f->os && facts[h].nn == f->nn &&
			    facts[h].obs == AL_OBS_ANE && strcmp(facts[h].type, f->type) == 0)
				w = &facts[h];
		unsigned units = 0;
		for (size_t j = i; j < n; j++) {
			const struct fact *g = &facts[j];
			if (g->pred == AL_UNIT_ANE && g->obs != AL_OBS_ANE && g->target == f->target && g->os == f->os &&
			    g->nn == f->nn && strcmp(g->type, f->type) == 0) {
				done_f[j] = true;
				units |= 1u << g->obs;
			}
		}
		char a[80], b[80], t[80];
		if (!rules_type_name(f->type)) {
			fprintf(stderr, "anelint: calibrate: %s type ", f->nn ? "layer" : "op");
			put_text(stderr, f->type, CLI_NAME_MAX);
			fprintf(stderr, " observed off the ANE cannot be named in a rules file (letters, digits and _): "
					"not calibrated\n");
			fprintf(out, "\n# not calibratable: %s type %s observed off the ANE on %s/%s: a rules file names "
				     "letters, digits and _ only\n",
				f->nn ? "layer" : "op", plain(f->type, t, sizeof t, 60), f->target->id, f->os->id);
			uncal++;
			continue;
		}
		if (w) {
			fprintf(stderr, "anelint: calibrate: conflict: %s ", f->nn ? "layer type" : "op type");
			put_text(stderr, f->type, CLI_NAME_MAX);
			fprintf(stderr, " observed off the ANE (");
			put_text(stderr, f->name, CLI_NAME_MAX);
			fprintf(stderr, ") and on it (");
			put_text(stderr, w->name, CLI_NAME_MAX);
			fprintf(stderr, ") on %s/%s: no rule by type can say both\n", f->target->id, f->os->id);
			fprintf(out, "\n# conflict, no rule: %s %s off the ANE (%s) and on it (%s) on %s/%s\n",
				f->nn ? "layer" : "op", plain(f->type, t, sizeof t, 60), plain(f->name, a, sizeof a, 60),
				plain(w->name, b, sizeof b, 60), f->target->id, f->os->id);
			conflicts++;
			continue;
		}
		const char *unit = units == (1u << AL_OBS_CPU) ? "cpu" : units == (1u << AL_OBS_GPU) ? "gpu" : "gpu_or_cpu";
		fputs("\n", out);
		for (size_t j = i; j < n; j++)
			if (done_f[j] && facts[j].pred == AL_UNIT_ANE && facts[j].obs != AL_OBS_ANE &&
			    facts[j].target == f->target && facts[j].os == f->os && facts[j].nn == f->nn &&
			    strcmp(facts[j].type, f->type) == 0)
				evidence_note(out, &facts[j]);
		fprintf(out, "id: CAL%03d\n%s: %s\nfamilies: %s\nreleases: %s\nkind: cost\nunit: %s\nconfidence: M\n"
			     "title: %s observed off the ANE on %s, %s\nprovenance: anelint calibrate from %s\n",
			next_id++, f->nn ? "layer" : "op", f->type, f->target->id, f->os->id, unit, f->type, f->target->id,
			f->os->id, plain(f->file, a, sizeof a, 70));
		written++;
	}
	/* 4. observed on the ANE where the prediction was the ANE but uncertain because no
	 *    report saw the kind there (anelint probe's kind probes): a warn rule of unit ane
	 *    for the type on that chip and release, which makes the verdict there ane; not
	 *    when an op of the type was observed off the ANE there (step 2's conflict) */
	for (size_t i = 0; i < n; i++) {
		const struct fact *f = &facts[i];
		if (done_f[i] || !f->unsure_kind || f->obs != AL_OBS_ANE || !rules_type_name(f->type))
			continue;
		bool off = false;
		for (size_t j = 0; j < n; j++) {
			const struct fact *g = &facts[j];
			if (g->target == f->target && g->os == f->os && g->nn == f->nn && strcmp(g->type, f->type) == 0) {
				off |= g->obs != AL_OBS_ANE;
				if (g->unsure_kind && g->obs == AL_OBS_ANE)
					done_f[j] = true;
			}
		}
		if (off)
			continue;
		char a[80];
		fputs("\n", out);
		for (size_t j = i; j < n; j++)
			if (facts[j].unsure_kind && facts[j].obs == AL_OBS_ANE && facts[j].target == f->target &&
			    facts[j].os == f->os && facts[j].nn == f->nn && strcmp(facts[j].type, f->type) == 0)
				evidence_note(out, &facts[j]);
		fprintf(out, "# no report saw %s on the ANE on %s (the verdict was uncertain): this evidence is one\n"
			     "id: CAL%03d\n%s: %s\nfamilies: %s\nreleases: %s\nkind: warn\nunit: ane\nconfidence: M\n"
			     "title: %s observed on the ANE on %s, %s\nprovenance: anelint calibrate from %s\n",
			f->type, f->os->id, next_id++, f->nn ? "layer" : "op", f->type, f->target->id, f->os->id, f->type,
			f->target->id, f->os->id, plain(f->file, a, sizeof a, 70));
		written++;
	}
	free(done_f);
	if (fflush(out) != 0 || ferror(out)) {
		rc = EXIT_IO;
		goto done;
	}
	/* the rules must load, and say what they were written for: check again with them */
	al_user_rules *cal = NULL;
	al_diags *d = al_diags_new();
	enum al_status st = d ? al_user_rules_parse(text, text_n, c->output, &cal, d) : AL_E_NOMEM;
	if (st != AL_OK) {
		fprintf(stderr, "anelint: calibrate: internal error: the rules written do not load:\n");
		print_errors(c->output, d);
		al_diags_free(d);
		rc = EXIT_INVALID;
		goto done;
	}
	al_diags_free(d);
	size_t agreed1 = 0, matched1 = 0;
	struct settings s2 = s;
	rc = gather(c, m, &s2, fmt, cal, NULL, NULL, evs, &agreed1, &matched1);
	al_model_free(m); /* its verdicts point at cal's rules */
	m = NULL;
	al_user_rules_free(cal);
	if (rc != EXIT_ALL_ANE)
		goto done;
	rc = emit(&(struct cli){.output = c->output}, text, text_n);
	if (rc != EXIT_ALL_ANE)
		goto done;
	printf("calibrate: %zu rule%s written to ", written, written == 1 ? "" : "s");
	put_text(stdout, c->output, CLI_NAME_MAX);
	printf("; %zu conflict%s, %zu not calibratable; agreement %.1f%% (%zu of %zu) before, %.1f%% (%zu of %zu) with "
	       "the rules\n",
	       conflicts, conflicts == 1 ? "" : "s", uncal, matched0 ? 100.0 * (double)agreed0 / (double)matched0 : 100.0,
	       agreed0, matched0, matched1 ? 100.0 * (double)agreed1 / (double)matched1 : 100.0, agreed1, matched1);
	if (conflicts || uncal || agreed1 != matched1)
		rc = EXIT_FALLBACK;
done:
	if (out)
		fclose(out);
	free(text);
	free(facts);
	for (int i = 0; evs && i < c->n_paths; i++)
		ali_evidence_free(evs[i]);
	free(evs);
	al_model_free(m);
	al_user_rules_free(s.rules);
	return rc;
}
