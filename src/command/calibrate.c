/* SPDX-License-Identifier: MIT */
/* calibrate.c: `anelint calibrate MODEL EVIDENCE... -o RULES` as one library call,
 * al_calibrate (docs/evidence.md "Calibrate"): check the model against each piece
 * of evidence, turn what a Mac observed against the prediction into a rules file
 * (overrides of built-in rules: off: CHIP@RELEASE or a unit; new CALnnn rules per
 * layer / op type), check it loads and that check agrees with it, then write it
 * atomically. What the CLI printed to stderr as it went is returned as note lines
 * (res->notes); errors go to the caller's diagnostics. */
#include "command.h"
#include "base.h"     /* ali_write_atomic, ali_map_file */
#include "evidence.h" /* the evidence readers and the comparison */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOTE_NAME_MAX 200 /* a name in a note, escaped and cut as the CLI prints names */

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
static int gather(const struct al_calibrate_opts *c, al_model *m, const al_user_rules *u, struct fact **facts,
		  size_t *n, struct al_evidence **evs, size_t *agreed, size_t *matched, al_diags *errors)
{
	int rc = X_OK;
	*agreed = *matched = 0;
	for (size_t i = 0; i < c->n_evidence; i++) {
		al_diags *d = al_diags_new();
		if (!d)
			return X_IO;
		struct al_evidence *e = evs[i];
		enum al_status st = e ? AL_OK : ali_evidence_load(c->evidence[i], c->evidence_format, &e, d);
		struct al_cmp cmp = {0};
		const struct al_target *t = NULL;
		const struct al_release *os = NULL;
		if (st == AL_OK) {
			evs[i] = e;
			t = e->target ? e->target : c->where.target ? c->where.target : al_target_default();
			os = e->release ? e->release : c->where.os ? c->where.os : al_release_default();
			struct al_check_opts co = {.target = t, .os = os, .user_rules = u,
						   .compute_units = e->has_cu ? e->cu : c->where.compute_units};
			st = al_model_check(m, &co, d);
			if (st == AL_OK)
				st = ali_compare(m, e, &cmp);
		}
		if (st != AL_OK) {
			ali_cmd_pass_errors(errors, d, c->evidence[i], "cannot load");
			rc = worst(rc, exit_of(st));
		}
		al_diags_free(d);
		if (st != AL_OK)
			continue;
		*agreed += cmp.agreed;
		*matched += cmp.matched;
		struct fact *v = facts ? realloc(*facts, (*n + cmp.n_rows + 1) * sizeof *v) : NULL;
		if (facts && !v) {
			ali_cmp_free(&cmp);
			return X_IO;
		}
		if (facts)
			*facts = v;
		for (size_t r = 0; facts && r < cmp.n_rows; r++) {
			const struct al_cmp_row *row = &cmp.rows[r];
			if (!row->node)
				continue;
			struct fact *f = &v[(*n)++];
			memset(f, 0, sizeof *f);
			f->file = c->evidence[i];
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

/* The edit of one built-in rule (steps 1 and 3): one override block, written at the end. */
struct edit {
	const struct al_rule *r;
	uint32_t off[32]; /* per family index: release bits */
	bool any_off;
	int unit;         /* -1: unchanged; else AL_OBS_GPU / AL_OBS_CPU */
};

/* What al_calibrate works on: the compared ops, the rules file being written (out),
 * the notes, and its figures. Steps (docs/evidence.md "Calibrate"):
 * 1. predicted off the ANE, observed on it: switch the rules that moved it off
 *    for that chip on that release (off: CHIP@RELEASE), unless the same rule
 *    was right on that chip and release elsewhere (a conflict)
 * 2. predicted on the ANE, observed off it: a new rule for the op type on that
 *    chip and release, unless an op of that type was seen on the ANE there
 * 3. predicted GPU, observed CPU (or the reverse): the unit of the rule that
 *    decided it, unless that rule's ops were seen on the other unit too
 * 4. observed on the ANE where the prediction was the ANE but uncertain because no
 *    report saw the kind there: a warn rule of unit ane for the type there.
 * Steps 1 and 3 edit built-in rules: one override block per rule, written first. */
struct calib {
	const struct al_calibrate_opts *c;
	const struct fact *facts;
	size_t n;
	FILE *note, *out;
	bool *done_f;       /* facts a new rule by type (steps 2 and 4) already covers */
	struct edit *edits;
	size_t n_edits;
	int next_id;        /* of the next CALnnn rule */
	size_t conflicts, written, uncal;
};

/* The head of the rules file: what it was calibrated from, and the --rules it was
 * calibrated with, copied so that the file stands alone. The exit code. */
static int cal_header(struct calib *cb, al_diags *errors)
{
	const struct al_calibrate_opts *c = cb->c;
	FILE *out = cb->out;
	/* paths escaped as everywhere (put_text): a newline in one cannot start a rule line */
	fputs("# anelint calibrate: rules that make `anelint check` agree with the evidence\n# model: ", out);
	al_put_escaped(out, c->model, 0);
	for (size_t i = 0; i < c->n_evidence; i++) {
		fputs("\n# evidence: ", out);
		al_put_escaped(out, c->evidence[i], 0);
	}
	fputs("\n", out);
	fputs("# (docs/evidence.md \"Calibrate\"); each rule is preceded by the evidence that justified it.\n", out);
	if (c->rules_path) { /* the file stands alone: the --rules it was calibrated with come first */
		struct al_map map;
		al_diags *d = al_diags_new();
		enum al_status st = d ? ali_map_file(c->rules_path, NULL, &map, d) : AL_E_NOMEM;
		if (st != AL_OK) {
			ali_cmd_pass_errors(errors, d, c->rules_path, "cannot load");
			al_diags_free(d);
			return exit_of(st);
		}
		al_diags_free(d);
		fputs("\n# ---- the rules of --rules ", out);
		al_put_escaped(out, c->rules_path, 0);
		fputs(", as given\n", out);
		fwrite(map.s.p, 1, map.s.n, out);
		fputs("\n# ---- calibrated\n", out);
		ali_unmap(&map);
	}
	return X_OK;
}

/* Step 1: the rules that moved ops off the ANE where they were observed on it. */
static void cal_off_edits(struct calib *cb)
{
	const struct fact *facts = cb->facts;
	size_t n = cb->n;
	FILE *note = cb->note, *out = cb->out;
	struct edit *edits = cb->edits;
	for (size_t i = 0; i < n; i++) {
		const struct fact *f = &facts[i];
		if (f->obs != AL_OBS_ANE || f->pred == AL_UNIT_ANE)
			continue;
		if (!f->n_off) {
			fprintf(note, "calibrate: ");
			al_put_escaped(note, f->name, NOTE_NAME_MAX);
			fprintf(note, ": observed on the ANE, placed off it by the partition policy, not a rule: "
					"nothing to calibrate\n");
			cb->uncal++;
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
				fprintf(note, "calibrate: %s comes from %s and was wrong for ", r->id, r->origin);
				al_put_escaped(note, f->name, NOTE_NAME_MAX);
				fprintf(note, ": change it there\n");
				cb->uncal++;
				continue;
			}
			struct edit *ed = &edits[cb->n_edits];
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
						fprintf(note, "calibrate: conflict: %s is wrong for ", r->id);
						al_put_escaped(note, g->name, NOTE_NAME_MAX);
						fprintf(note, " (observed on the ANE) but right for ");
						al_put_escaped(note, w->name, NOTE_NAME_MAX);
						fprintf(note, " (observed %s, %s) on %s/%s: left as it is\n", ali_obs_name(w->obs),
							plain(w->file, a, sizeof a, 70), g->target->id, g->os->id);
						fprintf(out, "\n# conflict, no rule: %s wrong for %s, right for %s on %s/%s\n", r->id,
							plain(g->name, a, sizeof a, 60), plain(w->type, b, sizeof b, 60),
							g->target->id, g->os->id);
						cb->conflicts++;
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
				cb->n_edits++;
		}
	}
}

/* Step 3: the unit of the rule that put ops on the GPU observed on the CPU, or the reverse. */
static void cal_unit_edits(struct calib *cb)
{
	const struct fact *facts = cb->facts;
	size_t n = cb->n;
	FILE *note = cb->note, *out = cb->out;
	struct edit *edits = cb->edits;
	for (size_t i = 0; i < n; i++) {
		const struct fact *f = &facts[i];
		if (f->pred == AL_UNIT_ANE || f->obs == AL_OBS_ANE || f->obs == AL_OBS_NOT_ANE ||
		    (int)f->obs == (f->pred == AL_UNIT_GPU ? AL_OBS_GPU : AL_OBS_CPU))
			continue;
		const struct al_rule *r = f->unit_rule;
		if (!r) {
			fprintf(note, "calibrate: ");
			al_put_escaped(note, f->name, NOTE_NAME_MAX);
			fprintf(note, ": observed on the %s, placed on the %s by the partition, not a rule: nothing to "
					"calibrate\n", ali_obs_name(f->obs), al_unit_name(f->pred));
			cb->uncal++;
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
			fprintf(note, "calibrate: %s comes from %s and put ", r->id, r->origin);
			al_put_escaped(note, f->name, NOTE_NAME_MAX);
			fprintf(note, " on the wrong unit: change it there\n");
			cb->uncal++;
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
			fprintf(note, "calibrate: conflict: %s put ", r->id);
			al_put_escaped(note, f->name, NOTE_NAME_MAX);
			fprintf(note, " on the %s (observed %s) and ", al_unit_name(f->pred), ali_obs_name(f->obs));
			al_put_escaped(note, w->name, NOTE_NAME_MAX);
			fprintf(note, " was observed on the %s: a rule has one unit, left as it is\n", ali_obs_name(w->obs));
			fprintf(out, "\n# conflict, no rule: %s's ops observed on the gpu and on the cpu (%s, %s)\n", r->id,
				plain(f->name, a, sizeof a, 60), plain(w->type, b, sizeof b, 60));
			cb->conflicts++;
			continue;
		}
		struct edit *ed = NULL;
		for (size_t e = 0; e < cb->n_edits && !ed; e++)
			if (edits[e].r == r)
				ed = &edits[e];
		if (!ed) {
			ed = &edits[cb->n_edits++];
			ed->r = r;
		}
		ed->unit = f->obs;
	}
}

/* The override blocks of steps 1 and 3, each after the evidence that justified it. */
static void cal_write_edits(struct calib *cb)
{
	const struct fact *facts = cb->facts;
	size_t n = cb->n;
	FILE *out = cb->out;
	const struct edit *edits = cb->edits;
	for (size_t e = 0; e < cb->n_edits; e++) {
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
		cb->written++;
	}
}

/* New ids follow the CALnnn rules of --rules (a file calibrated before, given again to
 * add to it), which are copied into the output: an id twice would not load. */
static int first_cal_id(const al_user_rules *user)
{
	int next_id = 1;
	for (size_t i = 0; user && i < al_user_rules_count(user); i++) {
		const struct al_rule *r = al_user_rule_at(user, i);
		int k = 0;
		char tail = 0;
		if (r && r->id && sscanf(r->id, "CAL%d%c", &k, &tail) == 1 && k >= next_id && k < 1000000)
			next_id = k + 1;
	}
	return next_id;
}

/* Step 2: a new rule per op type observed off the ANE where it was predicted on it. */
static void cal_new_rules(struct calib *cb)
{
	const struct fact *facts = cb->facts;
	size_t n = cb->n;
	FILE *note = cb->note, *out = cb->out;
	bool *done_f = cb->done_f;
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
			fprintf(note, "calibrate: %s type ", f->nn ? "layer" : "op");
			al_put_escaped(note, f->type, NOTE_NAME_MAX);
			fprintf(note, " observed off the ANE cannot be named in a rules file (letters, digits and _): "
					"not calibrated\n");
			fprintf(out, "\n# not calibratable: %s type %s observed off the ANE on %s/%s: a rules file names "
				     "letters, digits and _ only\n",
				f->nn ? "layer" : "op", plain(f->type, t, sizeof t, 60), f->target->id, f->os->id);
			cb->uncal++;
			continue;
		}
		if (w) {
			fprintf(note, "calibrate: conflict: %s ", f->nn ? "layer type" : "op type");
			al_put_escaped(note, f->type, NOTE_NAME_MAX);
			fprintf(note, " observed off the ANE (");
			al_put_escaped(note, f->name, NOTE_NAME_MAX);
			fprintf(note, ") and on it (");
			al_put_escaped(note, w->name, NOTE_NAME_MAX);
			fprintf(note, ") on %s/%s: no rule by type can say both\n", f->target->id, f->os->id);
			fprintf(out, "\n# conflict, no rule: %s %s off the ANE (%s) and on it (%s) on %s/%s\n",
				f->nn ? "layer" : "op", plain(f->type, t, sizeof t, 60), plain(f->name, a, sizeof a, 60),
				plain(w->name, b, sizeof b, 60), f->target->id, f->os->id);
			cb->conflicts++;
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
			cb->next_id++, f->nn ? "layer" : "op", f->type, f->target->id, f->os->id, unit, f->type, f->target->id,
			f->os->id, plain(f->file, a, sizeof a, 70));
		cb->written++;
	}
}

/* Step 4: a warn rule of unit ane per uncertain kind observed on the ANE. */
static void cal_warn_rules(struct calib *cb)
{
	const struct fact *facts = cb->facts;
	size_t n = cb->n;
	FILE *out = cb->out;
	bool *done_f = cb->done_f;
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
			f->type, f->os->id, cb->next_id++, f->nn ? "layer" : "op", f->type, f->target->id, f->os->id, f->type,
			f->target->id, f->os->id, plain(f->file, a, sizeof a, 70));
		cb->written++;
	}
}

/* The rules must load, and say what they were written for: check *m again with them
 * (the model is freed: its verdicts point at them), then write the file text[0..text_n).
 * The exit code; res filled when written. */
static int cal_finish(const struct calib *cb, al_model **m, struct al_evidence **evs, const char *text,
		      size_t text_n, size_t agreed0, size_t matched0, struct al_calibrate_result *res,
		      al_diags *errors)
{
	const struct al_calibrate_opts *c = cb->c;
	FILE *note = cb->note;
	al_user_rules *cal = NULL;
	al_diags *d = al_diags_new();
	enum al_status st = d ? al_user_rules_parse(text, text_n, c->output, &cal, d) : AL_E_NOMEM;
	if (st != AL_OK) {
		fprintf(note, "calibrate: internal error: the rules written do not load:\n");
		ali_cmd_pass_errors(errors, d, c->output, "cannot load");
		al_diags_free(d);
		return X_INVALID;
	}
	al_diags_free(d);
	size_t agreed1 = 0, matched1 = 0;
	int rc = gather(c, *m, cal, NULL, NULL, evs, &agreed1, &matched1, errors);
	al_model_free(*m); /* its verdicts point at cal's rules */
	*m = NULL;
	al_user_rules_free(cal);
	if (rc != X_OK)
		return rc;
	d = al_diags_new();
	st = d ? ali_write_atomic_bytes(c->output, text, text_n, d) : AL_E_NOMEM;
	if (st != AL_OK)
		ali_cmd_pass_errors(errors, d, c->output, "cannot load");
	al_diags_free(d);
	if (st != AL_OK)
		return X_IO;
	res->written = true;
	res->rules_written = cb->written;
	res->conflicts = cb->conflicts;
	res->not_calibratable = cb->uncal;
	res->agreed_before = agreed0;
	res->matched_before = matched0;
	res->agreed_after = agreed1;
	res->matched_after = matched1;
	return cb->conflicts || cb->uncal || agreed1 != matched1 ? X_FALLBACK : X_OK;
}

enum al_status al_calibrate(const struct al_calibrate_opts *c, struct al_calibrate_result *res, al_diags *errors)
{
	if (!c || !res || !c->model || !c->output || (c->n_evidence && !c->evidence))
		return AL_E_INVALID_ARG;
	memset(res, 0, sizeof *res);
	int rc = X_OK;
	const al_user_rules *user = c->rules;
	size_t note_n = 0;
	FILE *note = open_memstream(&res->notes, &note_n);
	if (!note) {
		res->exit_code = X_IO;
		return AL_E_NOMEM;
	}
	al_model *m = NULL;
	al_diags *md = al_diags_new();
	enum al_status mst = md ? al_model_open(c->model, &m, md) : AL_E_NOMEM;
	if (mst != AL_OK) {
		ali_cmd_pass_errors(errors, md, c->model, "cannot load");
		al_diags_free(md);
		fclose(note);
		res->exit_code = exit_of(mst);
		return mst;
	}
	al_diags_free(md);
	struct al_evidence **evs = calloc(c->n_evidence + 1, sizeof *evs);
	struct fact *facts = NULL;
	size_t n = 0, agreed0 = 0, matched0 = 0;
	char *text = NULL;
	size_t text_n = 0;
	FILE *out = evs ? open_memstream(&text, &text_n) : NULL;
	if (!out) {
		rc = X_IO;
		goto done;
	}
	rc = gather(c, m, user, &facts, &n, evs, &agreed0, &matched0, errors);
	if (rc != X_OK)
		goto done;
	struct calib cb = {.c = c, .facts = facts, .n = n, .note = note, .out = out, .next_id = first_cal_id(user)};
	rc = cal_header(&cb, errors);
	if (rc != X_OK)
		goto done;
	cb.done_f = calloc(n + 1, sizeof *cb.done_f);
	cb.edits = calloc(n + 1, sizeof *cb.edits);
	if (!cb.done_f || !cb.edits) {
		free(cb.done_f);
		free(cb.edits);
		rc = X_IO;
		goto done;
	}
	cal_off_edits(&cb);
	cal_unit_edits(&cb);
	cal_write_edits(&cb);
	free(cb.edits);
	cal_new_rules(&cb);
	cal_warn_rules(&cb);
	free(cb.done_f);
	if (fflush(out) != 0 || ferror(out)) {
		rc = X_IO;
		goto done;
	}
	rc = cal_finish(&cb, &m, evs, text, text_n, agreed0, matched0, res, errors);
done:
	if (out)
		fclose(out);
	free(text);
	free(facts);
	for (size_t i = 0; evs && i < c->n_evidence; i++)
		ali_evidence_free(evs[i]);
	free(evs);
	al_model_free(m);
	if (fclose(note) != 0 && rc == X_OK)
		rc = X_IO;
	res->exit_code = rc;
	return rc == X_OK || rc == X_FALLBACK ? AL_OK : rc == X_IO ? AL_E_IO : AL_E_FORMAT;
}

void al_calibrate_result_free(struct al_calibrate_result *res)
{
	if (!res)
		return;
	free(res->notes);
	res->notes = NULL;
}
