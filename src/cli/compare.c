/* compare.c: `anelint compare MODEL EVIDENCE...` (what a Mac observed against
 * the prediction, docs/evidence.md) and `anelint calibrate EVIDENCE... -o RULES`
 * (a --rules file that makes check agree with the evidence). */
#include "cli.h"
#include "base.h"     /* ali_write_atomic */
#include "evidence.h" /* the evidence readers and the comparison */

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COMPARE_SCHEMA_VERSION 1

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

/* --target / --os / --rules, as check takes them. */
struct settings {
	const struct al_target *target;
	const struct al_release *os;
	al_user_rules *rules;
};

static int settings_of(const struct cli *c, const struct command_row *cmd, struct settings *s)
{
	memset(s, 0, sizeof *s);
	if (c->target && !(s->target = al_target_find(c->target)))
		return usage_error(cmd, "unknown target '%s' (see 'anelint targets')", c->target);
	if (c->os && !(s->os = al_release_find(c->os)))
		return usage_error(cmd, "unknown OS release '%s' (see 'anelint targets')", c->os);
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
	if (v && ((*f = al_ev_format_find(v)) < 0 || (!c->evidence_format && *f == AL_EVF_AUTO)))
		return usage_error(cmd, "evidence formats: json, mil, plan, mlperf, oslog (and auto to read); not '%s'", v);
	return EXIT_ALL_ANE;
}

/* ---------------------------------------------------------------- one comparison */

struct one {
	const char *path;
	struct al_evidence *ev;
	const struct al_target *target;
	const struct al_release *os;
	struct al_cmp cmp;
	bool ok;
};

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
	fprintf(f, " (%s; target %s%s, os %s%s)\n", al_ev_format_name(o->ev->format), o->target->id,
		o->ev->target ? " from the evidence" : "", o->os->id, o->ev->release ? " from the evidence" : "");
	fprintf(f, "  evidence ops %zu, matched %zu (%zu by type and order), unmatched %zu\n", c->n_rows, c->matched,
		c->by_order, c->unmatched);
	fprintf(f, "  agreement %.1f%% (%zu of %zu)\n", al_cmp_agreement(c), c->agreed, c->matched);
	fprintf(f, "  confusion (rows: predicted, columns: observed)\n  %-10s", "");
	for (int k = 0; k < AL_OBS_COUNT; k++)
		fprintf(f, " %8s", al_obs_name(k));
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
		fprintf(f, "], observed %s", al_obs_name(row->ev->obs));
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

static json_object *jstr(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static json_object *json_one(const struct one *o)
{
	const struct al_cmp *c = &o->cmp;
	json_object *j = json_object_new_object();
	json_object_object_add(j, "file", jstr(o->path));
	json_object_object_add(j, "format", jstr(al_ev_format_name(o->ev->format)));
	json_object_object_add(j, "target", jstr(o->target->id));
	json_object_object_add(j, "os", jstr(o->os->id));
	json_object_object_add(j, "evidence_chip", jstr(o->ev->chip));
	json_object_object_add(j, "evidence_os", jstr(o->ev->os));
	json_object_object_add(j, "device", jstr(o->ev->device));
	json_object_object_add(j, "ops", json_object_new_int64((int64_t)c->n_rows));
	json_object_object_add(j, "matched", json_object_new_int64((int64_t)c->matched));
	json_object_object_add(j, "matched_by_order", json_object_new_int64((int64_t)c->by_order));
	json_object_object_add(j, "unmatched", json_object_new_int64((int64_t)c->unmatched));
	json_object_object_add(j, "agreed", json_object_new_int64((int64_t)c->agreed));
	json_object_object_add(j, "agreement", json_object_new_double(al_cmp_agreement(c)));
	json_object *conf = json_object_new_object();
	static const char *const pred[3] = {"ane", "gpu", "cpu"};
	for (int p = 0; p < 3; p++) {
		json_object *row = json_object_new_object();
		for (int k = 0; k < AL_OBS_COUNT; k++)
			json_object_object_add(row, al_obs_name(k), json_object_new_int64((int64_t)c->confusion[p][k]));
		json_object_object_add(conf, pred[p], row);
	}
	json_object_object_add(j, "confusion", conf);
	json_object *dis = json_object_new_array(), *um = json_object_new_array();
	for (size_t r = 0; r < c->n_rows; r++) {
		const struct al_cmp_row *row = &c->rows[r];
		if (!row->node) {
			json_object_array_add(um, jstr(row->ev->name));
			continue;
		}
		if (row->agree)
			continue;
		json_object *d = json_object_new_object();
		json_object_object_add(d, "name", jstr(row->ev->name));
		json_object_object_add(d, "type", jstr(row->node->type));
		json_object_object_add(d, "line", row->ev->line ? json_object_new_int64(row->ev->line) : NULL);
		json_object_object_add(d, "matched_by", jstr(row->match == AL_MATCH_NAME ? "name" : "order"));
		json_object_object_add(d, "predicted", jstr(al_unit_name(row->predicted)));
		json_object_object_add(d, "observed", jstr(al_obs_name(row->ev->obs)));
		json_object_object_add(d, "device_reason", jstr(row->ev->reason));
		json_object *rs = json_object_new_array();
		const struct al_verdict *v = &row->node->verdict;
		for (uint32_t i = 0; i < v->n_rules; i++) {
			json_object *x = json_object_new_object();
			json_object_object_add(x, "rule", jstr(v->rules[i]->id));
			json_object_object_add(x, "reason", jstr(v->reasons[i]));
			json_object_array_add(rs, x);
		}
		if (v->moved_by) {
			json_object *x = json_object_new_object();
			json_object_object_add(x, "rule", jstr(v->moved_by->id));
			json_object_object_add(x, "reason", jstr(v->moved_by->title));
			json_object_array_add(rs, x);
		}
		json_object_object_add(d, "anelint_reasons", rs);
		json_object_array_add(dis, d);
	}
	json_object_object_add(j, "disagreements", dis);
	json_object_object_add(j, "unmatched_ops", um);
	json_object *rules = json_object_new_array();
	for (size_t i = 0; i < c->n_rules; i++) {
		json_object *x = json_object_new_object();
		json_object_object_add(x, "rule", jstr(c->rules[i].rule->id));
		json_object_object_add(x, "name", jstr(c->rules[i].rule->name));
		json_object_object_add(x, "right", json_object_new_int64((int64_t)c->rules[i].right));
		json_object_object_add(x, "wrong", json_object_new_int64((int64_t)c->rules[i].wrong));
		json_object_array_add(rules, x);
	}
	json_object_object_add(j, "rules", rules);
	return j;
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
		enum al_status st = al_evidence_load(o->path, fmt, &o->ev, d);
		if (st == AL_OK) {
			o->target = o->ev->target ? o->ev->target : s->target ? s->target : al_target_default();
			o->os = o->ev->release ? o->ev->release : s->os ? s->os : al_release_default();
			if (m) {
				struct al_check_opts co = {.target = o->target, .os = o->os, .user_rules = s->rules};
				st = al_model_check(m, &co, d);
				if (st == AL_OK)
					st = al_compare(m, o->ev, &o->cmp);
			}
		}
		if (st != AL_OK) {
			print_errors(o->path, d);
			int e = status_exit(st);
			rc = e > rc ? e : rc;
		} else {
			o->ok = true;
		}
		al_diags_free(d);
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
		return usage_error(cmd, "--write-evidence takes json, mil, plan, mlperf or oslog, not '%s'", "auto");
	const struct al_target *t = s->target ? s->target : al_target_default();
	const struct al_release *os = s->os ? s->os : al_release_default();
	struct al_check_opts co = {.target = t, .os = os, .user_rules = s->rules};
	al_diags *d = al_diags_new();
	struct al_buf b = {0};
	enum al_status st = d ? al_model_check(m, &co, d) : AL_E_NOMEM;
	if (st == AL_OK)
		st = al_evidence_write(m, f, t->id, os->id, &b);
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
	al_diags *d = al_diags_new();
	enum al_status st = d ? al_model_open(c->paths[0], &m, d) : AL_E_NOMEM;
	if (st != AL_OK) {
		print_errors(c->paths[0], d);
		al_diags_free(d);
		al_user_rules_free(s.rules);
		return status_exit(st);
	}
	al_diags_free(d);
	if (c->write_evidence) {
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
		int e = compare_all(&one_c, m, &s, fmt, &ones[i], 1);
		rc = e > rc ? e : rc;
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
		json_object_object_add(top, "schema", jstr("anelint-compare"));
		json_object_object_add(top, "version", json_object_new_int(COMPARE_SCHEMA_VERSION));
		json_object_object_add(top, "model", jstr(c->paths[0]));
		json_object_object_add(top, "evidence", arr);
		arr = NULL;
		json_object_object_add(top, "matched", json_object_new_int64((int64_t)matched));
		json_object_object_add(top, "agreed", json_object_new_int64((int64_t)agreed));
		json_object_object_add(top, "agreement", json_object_new_double(total));
		fputs(json_object_to_json_string_ext(top, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE), f);
		fputs("\n", f);
	} else if (n > 1) {
		fprintf(f, "overall agreement %.1f%% (%zu of %zu)\n", total, agreed, matched);
	}
	if (fflush(f) != 0 || ferror(f)) {
		rc = EXIT_IO;
		goto done;
	}
	int e = emit(c, text, text_n);
	rc = e > rc ? e : rc;
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
		al_cmp_free(&ones[i].cmp);
		al_evidence_free(ones[i].ev);
	}
	free(ones);
	al_model_free(m);
	al_user_rules_free(s.rules);
	return rc;
}

int cmd_calibrate(struct cli *c)
{
	return usage_error(command("calibrate"), "calibrate: not yet%s", "");
}
