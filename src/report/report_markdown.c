/* SPDX-License-Identifier: MIT */
/* report_markdown.c: a short Markdown summary for a pull-request comment
 * (`--format markdown`, GitHub-flavoured tables). A heading with the verdict, one
 * table row per model (layers on the ANE, segments, switches, FLOP share,
 * estimate), then per model with fallbacks the first MD_FALLBACKS of them with
 * rule ids and reasons, the cheapest fixes, and the rules that fired in a
 * collapsed <details>. Every text from a model (or a user rules file) is
 * escaped with AL_ESC_MD: no markup, link, mention, HTML or table cell break
 * can come from a name. */
#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MD_FALLBACKS 20 /* fallback rows listed per model */
#define MD_FIXES 3
#define MD_NAME 60 /* characters of a name in a table */

struct md {
	FILE *out;
	const struct al_report_opts *o;
	bool summary_done;
	const struct al_rule **fired;
	size_t n_fired, cap_fired;
	uint32_t models, failing; /* models, not (model, target) rows */
	uint32_t unsure;          /* models that do not fail, with ops whose verdict is uncertain off the ANE */
	const struct al_submodel **seen; /* each model once: SEEN_FAILS, SEEN_UNSURE */
	unsigned char *seen_state;
	size_t n_seen;
};

enum { SEEN_FAILS = 1, SEEN_UNSURE = 2 };

/* Count s once however many targets it is shown for; it fails when it falls
 * back on any of them, and is unsure when it does not fail but an op of it has
 * an uncertain verdict off the ANE on one of them. */
static void count_model(struct md *c, const struct al_submodel *s, bool fails, bool unsure)
{
	unsigned char st = (unsigned char)((fails ? SEEN_FAILS : 0) | (unsure ? SEEN_UNSURE : 0));
	for (size_t i = 0; i < c->n_seen; i++)
		if (c->seen[i] == s) {
			unsigned char old = c->seen_state[i], now = (unsigned char)(old | st);
			c->seen_state[i] = now;
			c->failing += !(old & SEEN_FAILS) && (now & SEEN_FAILS);
			c->unsure -= !(old & SEEN_FAILS) && (old & SEEN_UNSURE) && (now & SEEN_FAILS);
			c->unsure += !(now & SEEN_FAILS) && !(old & SEEN_UNSURE) && (now & SEEN_UNSURE);
			return;
		}
	const struct al_submodel **v = ali_realloc(c->seen, (c->n_seen + 1) * sizeof *v);
	if (v)
		c->seen = v;
	unsigned char *f = v ? ali_realloc(c->seen_state, (c->n_seen + 1) * sizeof *f) : NULL;
	if (f)
		c->seen_state = f;
	if (v && f) {
		c->seen[c->n_seen] = s;
		c->seen_state[c->n_seen++] = st;
	}
	c->models++;
	c->failing += fails;
	c->unsure += !fails && unsure;
}

static void md(FILE *out, const char *s, size_t max)
{
	ali_put_esc(out, s, AL_ESC_MD, max);
}

static void note_rule(struct md *c, const struct al_rule *r)
{
	for (size_t i = 0; i < c->n_fired; i++)
		if (c->fired[i] == r)
			return;
	if (c->n_fired == c->cap_fired) {
		size_t nc = c->cap_fired ? 2 * c->cap_fired : 16;
		const struct al_rule **v = ali_realloc(c->fired, nc * sizeof *v);
		if (!v)
			return;
		c->fired = v;
		c->cap_fired = nc;
	}
	c->fired[c->n_fired++] = r;
}

/* Pass 1: the table of models. */
static void summary_row(void *vctx, const struct al_report_item *it, const struct al_view *v)
{
	struct md *c = vctx;
	FILE *out = c->out;
	const struct al_submodel *s = v->s;
	const struct al_plan *p = v->plan;
	const char *error = v->error;
	(void)it;
	struct al_summary sum;
	ali_summarize(s, v, &sum);
	count_model(c, s, ali_summary_fails(s, v, &sum, AL_FAIL_ANY),
		    sum.verdicts[AL_VERDICT_UNCERTAIN] > sum.uncertain_ane);
	fputs("| ", out);
	md(out, s->path, MD_NAME);
	fputs(" | ", out);
	md(out, p && p->target ? p->target->id : "-", 0);
	fputs(" | ", out);
	if (!s->n_graphs) {
		if (s->n_children)
			fprintf(out, "pipeline of %" PRIu32 " | | | | | |\n", s->n_children);
		else
			fputs("no layers | | | | | |\n", out);
		return;
	}
	uint32_t ane = sum.per_unit[AL_UNIT_ANE];
	fprintf(out, "%" PRIu32 " | %" PRIu32 " (%.1f%%) | ", sum.nodes, ane, sum.nodes ? 100.0 * ane / sum.nodes : 0.0);
	if (!p) {
		fputs("plan failed: ", out);
		md(out, error ? error : "?", 0);
		fputs(" | | |\n", out);
		return;
	}
	fprintf(out, "%" PRIu32 " / %" PRIu32 " | ", p->n_segments, p->switches);
	if (p->total_flops > 0)
		fprintf(out, "%.1f%% | ", 100.0 * p->ane_flops / p->total_flops);
	else
		fputs("\\- | ", out);
	if (p->timed)
		fprintf(out, "%.3f ms |\n", isfinite(p->est_us) ? p->est_us / 1000.0 : 0.0);
	else
		fputs("\\- |\n", out);
}

static void fix_line(FILE *out, const struct al_fix *f, uint32_t rank)
{
	fprintf(out, "%" PRIu32 ". ", rank);
	if (f->kind == AL_FIX_MODEL) {
		fprintf(out, "the model-level rule %s", f->rule ? f->rule->id : "?");
	} else {
		if (f->kind == AL_FIX_RULE)
			fprintf(out, "the %" PRIu32 " layers %s moves: ", f->n_nodes, f->rule ? f->rule->id : "?");
		else if (f->kind == AL_FIX_SEGMENT)
			fprintf(out, "the %" PRIu32 " fallback layers of one segment: ", f->n_nodes);
		for (uint32_t i = 0; i < f->n_nodes && i < 4; i++) {
			fputs(i ? ", " : "", out);
			md(out, f->nodes[i] ? f->nodes[i]->name : "", MD_NAME);
		}
		if (f->n_nodes > 4)
			fputs(", …", out);
		if (f->kind == AL_FIX_NODE && f->node) {
			fputs(" (", out);
			md(out, f->node->type, 0);
			fprintf(out, ", %s)", f->rule ? f->rule->id : "?");
		}
	}
	fprintf(out, ": segments %" PRIu32 " → %" PRIu32 ", switches %" PRIu32 " → %" PRIu32
		     ", est. gain %.3f ms\n",
		f->segments_before, f->segments_after, f->switches_before, f->switches_after,
		isfinite(f->gain_us) ? f->gain_us / 1000.0 : 0.0);
}

/* Pass 2: the fallbacks and fixes of each model that has any. */
static void details(void *vctx, const struct al_report_item *it, const struct al_view *v)
{
	struct md *c = vctx;
	FILE *out = c->out;
	const struct al_submodel *s = v->s;
	const struct al_plan *p = v->plan;
	const struct al_finding *fs;
	uint32_t n_fs = ali_view_findings(v, s, &fs);
	for (uint32_t i = 0; i < n_fs; i++)
		note_rule(c, fs[i].rule);
	struct al_summary sum;
	ali_summarize(s, v, &sum);
	uint32_t off = sum.nodes - sum.per_unit[AL_UNIT_ANE] - sum.unknown;
	bool findings = false;
	for (uint32_t i = 0; i < n_fs; i++)
		findings |= fs[i].rule->kind != AL_RULE_WARN;
	if (!off && !findings)
		return;
	fputs("\n#### ", out);
	md(out, s->path, 0);
	unsigned axes = ali_column_axes(c->o);
	if (p && p->target && ali_multi(c->o) && (axes & ALI_COL_TARGETS)) {
		fputs(" on ", out);
		md(out, p->target->id, 0);
	}
	if (p && p->os && ali_multi(c->o) && (axes & ALI_COL_RELEASES)) {
		fputs(" under ", out);
		md(out, p->os->id, 0);
	}
	fputc('\n', out);
	for (uint32_t i = 0; i < n_fs; i++) {
		const struct al_finding *f = &fs[i];
		fprintf(out, "\n- model: **%s** ", f->rule->id);
		md(out, f->reason, 0);
		if (f->rule->kind != AL_RULE_WARN) { /* where its layers went, as the rows say */
			const char *to = ali_moved_to(&sum, f->rule);
			fprintf(out, " (→ %s)", to ? to : al_unit_name(f->rule->unit));
		}
	}
	if (n_fs)
		fputc('\n', out);
	/* the figures of check's summary line (ali_summarize) */
	fprintf(out, "\n%" PRIu32 " %s, %" PRIu32 " ANE-eligible, %" PRIu32 " placed on the ANE", sum.nodes,
		s->world == AL_WORLD_MIL ? "ops" : "layers", sum.eligible, sum.per_unit[AL_UNIT_ANE]);
	if (sum.moved) {
		fputs(": ", out);
		ali_put_moves(out, &sum); /* rule ids: nothing to escape */
	}
	fputs(".\n", out);
	if (sum.whole_rows) /* said once, not per row */
		fprintf(out, "\n%s moves the whole model off the ANE: %" PRIu32 " %s%s without a finding of %s own "
			     "%s to the %s (not listed).\n", sum.whole_model->id, sum.whole_rows,
			s->world == AL_WORLD_MIL ? "op" : "layer", sum.whole_rows == 1 ? "" : "s",
			sum.whole_rows == 1 ? "its" : "their", sum.whole_rows == 1 ? "goes" : "go",
			ali_moved_to(&sum, sum.whole_model));
	struct ali_failing fl;
	ali_failing_count(c->o, ali_item_check(it, c->o), v, s, &fl);
	if (fl.n) { /* what fails the check, as the exit status counts it */
		fprintf(out, "\n**Failing**: %" PRIu32 " finding%s:", fl.n, fl.n == 1 ? "" : "s");
		for (uint32_t i = 0; i < fl.n_rules; i++)
			fprintf(out, "%s **%s** x%" PRIu32, i ? "," : "", fl.by_rule[i].rule->id, fl.by_rule[i].count);
		fputs(".\n", out);
	}
	struct al_dag g;
	if (off && ali_dag_build(v, &g)) {
		uint32_t shown = 0;
		for (uint32_t r = 0; r < g.n_rows; r++) {
			const struct al_node *n = g.rows[r].node;
			const struct al_verdict *nv = g.rows[r].verdict;
			/* the rows off the ANE (final placement; a unit unknown, ANE057, too),
			 * but not those only a whole-model rule moved: said once above */
			if ((nv->placed_ane && !nv->unknown) || ali_node_is_const(n) ||
			    (nv->place == AL_PLACE_MODEL && !nv->n_rules && ali_verdict_moved(nv)))
				continue;
			for (uint32_t k = 0; k < nv->n_rules; k++)
				note_rule(c, nv->rules[k]);
			bool moved = ali_verdict_moved(nv) && nv->moved_by;
			if (moved)
				note_rule(c, nv->moved_by);
			if (shown++ >= MD_FALLBACKS)
				continue;
			if (shown == 1) /* no header without a row */
				fputs("\n| # | layer | type | unit | rules and reasons |\n|--:|---|---|---|---|\n", out);
			fprintf(out, "| %" PRIu32 " | ", g.rows[r].index);
			md(out, n->name, MD_NAME);
			const char *weights = ali_node_weights(n); /* where the op came from */
			if (weights) {
				fputs(" (weights ", out);
				md(out, weights, MD_NAME);
				fputc(')', out);
			}
			fputs(" | ", out);
			md(out, n->type, 0);
			fprintf(out, " | %s", nv->unknown ? "unknown" : nv->ane ? "ane" : al_unit_name(nv->unit));
			enum al_unit u = ali_row_unit(&g.rows[r], p);
			if (p && u != (nv->ane ? AL_UNIT_ANE : nv->unit) && !(nv->unknown && u == AL_UNIT_ANE))
				fprintf(out, " → %s", ali_unit_upper(u));
			/* `?` as in check's text: an uncertain verdict (issue #30), the unit a best guess */
			bool unsure = nv->verdict == AL_VERDICT_UNCERTAIN && !nv->unknown;
			if (unsure)
				fputc('?', out);
			fputs(" |", out);
			for (uint32_t k = 0; k < nv->n_rules; k++) {
				fprintf(out, "%s **%s** ", k ? ";" : "", nv->rules[k]->id);
				md(out, nv->reasons[k], 120);
			}
			if (moved)
				fprintf(out, "%s moved by **%s**", nv->n_rules ? ";" : "", nv->moved_by->id);
			if (unsure) {
				char why[160], head[48];
				snprintf(head, sizeof head, "%s ? uncertain (p_ane %.2f): ", nv->n_rules || moved ? ";" : "",
					 nv->p_ane);
				md(out, head, 0);
				md(out, ali_uncertain_text(nv, why, sizeof why), 120);
			}
			fputs(" |\n", out);
		}
		if (shown > MD_FALLBACKS)
			fprintf(out, "\n… and %" PRIu32 " more (the HTML or SARIF report lists them all).\n",
				shown - MD_FALLBACKS);
		ali_dag_free(&g);
	}
	if (p && p->n_fixes) {
		fputs("\n**Cheapest fixes** (estimates):\n\n", out);
		for (uint32_t k = 0; k < p->n_fixes && k < MD_FIXES; k++)
			fix_line(out, &p->fixes[k], k + 1);
	}
}

/* A model that cannot be read, for "Could not be read". */
static void md_unread(FILE *out, const struct al_report_item *it)
{
	fputs("- ", out);
	md(out, it->path, 0);
	fputs(": ", out);
	md(out, al_status_str(it->status), 0);
	for (size_t k = 0; k < al_diags_count(it->diags); k++) {
		const struct al_diag *x = al_diags_get(it->diags, k);
		if (x->severity == AL_SEV_ERROR) {
			fputs(": ", out);
			md(out, x->msg, 200);
			break;
		}
	}
	fputc('\n', out);
}

/* The heading, from the counts the table gave. */
static void md_heading(FILE *out, const struct md *c)
{
	if (c->failing)
		fprintf(out, "### ⚠️ anelint: %" PRIu32 " of %" PRIu32 " model%s fall%s back from the Neural "
			     "Engine\n\n",
			c->failing, c->models, c->models == 1 ? "" : "s", c->failing == 1 ? "s" : "");
	else if (c->unsure) /* never "every model runs on the ANE" over verdicts that are guesses */
		fprintf(out, "### ❔ anelint: %" PRIu32 " of %" PRIu32 " model%s may fall back from the Neural "
			     "Engine (uncertain verdicts: the evidence does not reach this chip or release)\n\n",
			c->unsure, c->models, c->models == 1 ? "" : "s");
	else if (c->models)
		fprintf(out, "### ✅ anelint: %s predicted to run on the Neural Engine\n\n",
			c->models == 1 ? "the model is" : "every model is");
	else
		fputs("### anelint: no model could be read\n\n", out);
}

static const char md_table_head[] = "| model | target | layers | on the ANE | segments / switches | ANE FLOPs | est. |\n"
				    "|---|---|--:|--:|--:|--:|--:|\n";

/* The rules that fired, and the footer. */
static void md_tail(FILE *out, struct md *c)
{
	if (c->n_fired) {
		fputs("\n<details><summary>Rules that fired</summary>\n\n", out);
		for (size_t i = 0; i < c->n_fired; i++) {
			const struct al_rule *r = c->fired[i];
			fprintf(out, "- **%s** ", r->id);
			md(out, r->name, 0);
			fprintf(out, " (%s, confidence %c): ", al_rule_kind_name(r->kind), r->confidence ? r->confidence : '?');
			md(out, r->title, 0);
			if (r->fix) {
				fputs(". Fix: ", out);
				md(out, r->fix, 0);
			}
			fputc('\n', out);
		}
		fputs("\n</details>\n", out);
	}
	ali_free(c->fired);
	ali_free(c->seen);
	ali_free(c->seen_state);
	fprintf(out, "\n<sub>anelint %s: predictions from the model file; times are roofline estimates, not "
		     "measurements.</sub>\n",
		ANELINT_VERSION);
}

static void md_report(FILE *out, const struct al_report_item *items, size_t n, const struct al_report_opts *o)
{
	struct md c = {.out = out, .o = o};
	size_t bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += !items[i].model;
	/* the heading needs the counts, known once the table is written: the table
	 * goes first into memory */
	char *table = NULL;
	size_t table_len = 0;
	FILE *t = open_memstream(&table, &table_len);
	c.out = t ? t : out;
	if (!t)
		fputs("### anelint\n\n", out);
	fputs(md_table_head, c.out);
	ali_each_plan(items, n, o, summary_row, &c);
	if (t) {
		fclose(t);
		md_heading(out, &c);
		fputs(table ? table : "", out);
	}
	free(table);
	c.out = out;
	if (bad) {
		fputs("\nCould not be read:\n\n", out);
		for (size_t i = 0; i < n; i++)
			if (!items[i].model)
				md_unread(out, &items[i]);
	}
	ali_each_plan(items, n, o, details, &c);
	ali_md_comparisons(out, items, n); /* report --evidence: report_evidence.c */
	md_tail(out, &c);
}

/* ================================================================ streaming */

/* Several models, each processed as it comes: the table rows, the unreadable
 * models and the details go to three temporary files (disk, not memory), put
 * together under the heading at the end, which needs the counts. */
struct md_stream {
	FILE *out, *table, *unread, *body;
	struct md c;
	bool any_unread;
};

static void *md_stream_begin(FILE *out, enum al_sink_cmd cmd, const struct al_report_opts *o)
{
	if (cmd == AL_SINK_INFO)
		return NULL;
	struct md_stream *m = ali_calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->out = out;
	m->c.o = o;
	m->table = tmpfile();
	m->unread = tmpfile();
	m->body = tmpfile();
	if (!m->table || !m->unread || !m->body) {
		if (m->table)
			fclose(m->table);
		if (m->unread)
			fclose(m->unread);
		if (m->body)
			fclose(m->body);
		ali_free(m);
		return NULL;
	}
	fputs(md_table_head, m->table);
	return m;
}

static void md_stream_model(void *state, const struct al_report_item *it)
{
	struct md_stream *m = state;
	if (!it->model) {
		md_unread(m->unread, it);
		m->any_unread = true;
		return;
	}
	m->c.n_seen = 0; /* a model's sub-models are counted once across its targets */
	m->c.out = m->table;
	ali_each_plan(it, 1, m->c.o, summary_row, &m->c);
	m->c.out = m->body;
	ali_each_plan(it, 1, m->c.o, details, &m->c);
}

static void md_copy(FILE *to, FILE *from)
{
	char buf[1 << 14];
	size_t k;
	rewind(from);
	while ((k = fread(buf, 1, sizeof buf, from)) > 0)
		fwrite(buf, 1, k, to);
	fclose(from);
}

static void md_stream_end(void *state)
{
	struct md_stream *m = state;
	FILE *out = m->out;
	md_heading(out, &m->c);
	md_copy(out, m->table);
	if (m->any_unread)
		fputs("\nCould not be read:\n\n", out);
	md_copy(out, m->unread);
	md_copy(out, m->body);
	md_tail(out, &m->c);
	ali_free(m);
}

const struct al_sink ali_sink_markdown = {
	.name = "markdown",
	.check = md_report,
	.plan = md_report,
	.extensions = "md,markdown",
	.shows_plans = true,
	.stream_begin = md_stream_begin,
	.stream_model = md_stream_model,
	.stream_end = md_stream_end,
};
