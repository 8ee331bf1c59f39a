/* SPDX-License-Identifier: MIT */
/* report_github.c: `--format github`, GitHub Actions workflow commands
 * ("::error file=...,title=...::message"), which the Actions log turns into
 * annotations on the pull request's files. One line per layer/op that falls
 * back (its fallback rules), per layer a partition rule moved when that move
 * fails the check, per warning rule (::notice) and per model-level finding,
 * then a summary notice per model. ::error is exactly a finding that fails the
 * check (ali_each_failing: the exit status); a fallback that does not (--fail-on)
 * is a ::warning. Accepted findings (suppressions, baseline) are not
 * annotated: the summary counts them. A model file has no lines, so every
 * annotation is on line 1 of the model; the layer is in the title and message.
 * Workflow commands are parsed by the runner: the message escapes % CR LF, the
 * properties also : and , (GitHub's toolkit does the same), and names from the
 * file are shown with control characters visible first (ali_put_esc). */
#include "report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Text from the model, made safe for a workflow command: control characters
 * visible (ali_put_esc), then % \r \n (and for a property : ,) percent-encoded. */
static void put_cmd(FILE *out, const char *s, bool property)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return;
	ali_put_esc(m, s ? s : "", AL_ESC_TEXT, 0);
	if (fclose(m) != 0) {
		free(buf);
		return;
	}
	for (size_t i = 0; i < len; i++) {
		char c = buf[i];
		if (c == '%')
			fputs("%25", out);
		else if (c == '\r')
			fputs("%0D", out);
		else if (c == '\n')
			fputs("%0A", out);
		else if (property && c == ':')
			fputs("%3A", out);
		else if (property && c == ',')
			fputs("%2C", out);
		else
			fputc(c, out);
	}
	free(buf);
}

/* The model's file as given (a package: its directory): where GitHub shows it. */
static void put_file(FILE *out, const struct al_submodel *s)
{
	const char *f = s->file ? s->file : s->path;
	const char *pkg = strstr(f, ".mlpackage/");
	char *cut = pkg ? strndup(f, (size_t)(pkg - f) + strlen(".mlpackage")) : NULL;
	put_cmd(out, cut ? cut : f, true);
	free(cut);
}

static const char *level(const struct al_rule *r)
{
	return r->kind == AL_RULE_ILLEGAL ? "error" : r->kind == AL_RULE_COST ? "warning" : "notice";
}

struct gh {
	FILE *out;
	const struct al_report_opts *o;
};

static void annotate(FILE *out, const char *lvl, const struct al_submodel *s, const char *title,
		     const char *layer, const char *type, const char *weights, const char *msg)
{
	fprintf(out, "::%s file=", lvl);
	put_file(out, s);
	fputs(",line=1,title=", out);
	put_cmd(out, title, true);
	fputs("::", out);
	if (layer) {
		put_cmd(out, s->world == AL_WORLD_MIL ? "op '" : "layer '", false);
		put_cmd(out, layer, false);
		fputs("' (", out);
		put_cmd(out, type, false);
		if (weights) { /* where the op came from, as far as the file says */
			fputs(", weights ", out);
			put_cmd(out, weights, false);
		}
		fputs("): ", out);
	}
	put_cmd(out, msg, false);
	fputc('\n', out);
}

/* The model-level rules with a failing finding: a whole-model move (one for
 * every layer it moves) or a finding of a model without layers. */
struct model_fails {
	const struct al_rule *r[16];
	uint32_t n;
};

static void add_model_fail(void *ctx, const struct al_node *n, const struct al_rule *r)
{
	struct model_fails *m = ctx;
	if (!n && m->n < 16)
		m->r[m->n++] = r;
}

static bool model_fails(const struct model_fails *m, const struct al_rule *r)
{
	for (uint32_t i = 0; i < m->n; i++)
		if (m->r[i] == r)
			return true;
	return false;
}

static void github_model(void *vctx, const struct al_report_item *it, const struct al_view *v)
{
	struct gh *g = vctx;
	const struct al_submodel *s = v->s;
	const struct al_check_opts *co = ali_item_check(it, g->o);
	uint32_t accepted = 0, shown = 0;
	char title[200];
	struct model_fails mf = {0};
	uint32_t failing = ali_each_failing(g->o, co, v, s, add_model_fail, &mf);
	const struct al_finding *fs;
	uint32_t n_fs = ali_view_findings(v, s, &fs);
	for (uint32_t i = 0; i < n_fs; i++) {
		const struct al_rule *r = fs[i].rule;
		if (ali_accepted(g->o, s, NULL, r, NULL)) {
			accepted++;
			continue;
		}
		snprintf(title, sizeof title, "anelint %s %s: the whole model%s%s", r->id, r->name,
			 r->kind == AL_RULE_WARN ? "" : " goes to the ", r->kind == AL_RULE_WARN ? "" : al_unit_name(r->unit));
		/* a rule outside its evidence gives an uncertain verdict (issue #30): a notice */
		const struct al_check_opts *mco = g->o->check;
		bool unsure = r->kind != AL_RULE_WARN &&
			      !al_rule_decides_at(r, fs[i].reason, v->plan ? v->plan->target : mco ? mco->target : NULL,
						  mco ? mco->os : NULL);
		annotate(g->out, model_fails(&mf, r) ? "error" : unsure ? "notice" : level(r), s, title, NULL, NULL, NULL,
			 fs[i].reason);
		shown++;
	}
	struct al_dag d;
	if (s->n_graphs && ali_dag_build(v, &d)) {
		for (uint32_t k = 0; k < d.n_rows; k++) {
			const struct al_row *row = &d.rows[k];
			const struct al_node *n = row->node;
			const struct al_verdict *vd = row->verdict;
			if (ali_node_is_const(n))
				continue;
			enum al_unit u = ali_row_unit(row, v->plan);
			for (uint32_t i = 0; i < vd->n_rules; i++) {
				const struct al_rule *r = vd->rules[i];
				if (ali_accepted(g->o, s, n->name, r, NULL)) {
					accepted++;
					continue;
				}
				if (r->kind == AL_RULE_WARN)
					snprintf(title, sizeof title, "anelint %s %s", r->id, r->name);
				else
					snprintf(title, sizeof title, "anelint %s %s: falls back to the %s", r->id, r->name,
						 ali_unit_upper(u));
				/* ::error exactly for what fails the check; an uncertain verdict
				 * (issue #30) that does not is a notice */
				const char *lvl = ali_reason_fails(g->o, co, v, s, n, r, false) ? "error"
						  : vd->verdict == AL_VERDICT_UNCERTAIN || r->kind == AL_RULE_WARN ? "notice"
														     : "warning";
				annotate(g->out, lvl, s, title, n->name, n->type, ali_node_weights(n), vd->reasons[i]);
				shown++;
			}
			/* a layer a partition rule moved: its own annotation when the move
			 * fails the check (a whole-model move is the model's, above) */
			const struct al_rule *mb = ali_verdict_moved(vd) ? vd->moved_by : NULL;
			if (!mb || vd->place == AL_PLACE_MODEL)
				continue;
			if (ali_accepted(g->o, s, ali_move_layer(n, vd), mb, NULL)) {
				accepted++;
				continue;
			}
			if (!ali_reason_fails(g->o, co, v, s, n, mb, true))
				continue;
			snprintf(title, sizeof title, "anelint %s %s: moved to the %s", mb->id, mb->name, ali_unit_upper(u));
			char msg[320];
			snprintf(msg, sizeof msg, "%s (the %s by itself: %s)", mb->title, s->world == AL_WORLD_MIL ? "op" : "layer",
				 vd->unknown ? "unknown" : vd->ane ? "ANE" : ali_unit_upper(vd->unit));
			annotate(g->out, "error", s, title, n->name, n->type, ali_node_weights(n), msg);
			shown++;
		}
		ali_dag_free(&d);
	}
	struct al_summary sum;
	ali_summarize(s, v, &sum);
	fputs("::notice file=", g->out);
	put_file(g->out, s);
	fputs(",line=1,title=anelint summary::", g->out);
	put_cmd(g->out, s->path, false);
	fprintf(g->out, "%s%s: %" PRIu32 " of %" PRIu32 " %s on the ANE (%" PRIu32 " uncertain); %" PRIu32
			" finding%s annotated, %" PRIu32 " failing, %" PRIu32 " accepted (suppressions, baseline)\n",
		v->plan && v->plan->target ? " on " : "", v->plan && v->plan->target ? v->plan->target->id : "",
		sum.per_unit[AL_UNIT_ANE], sum.nodes, s->world == AL_WORLD_MIL ? "ops" : "layers",
		sum.verdicts[AL_VERDICT_UNCERTAIN], shown, shown == 1 ? "" : "s", failing, accepted);
}

/* A model that cannot be read: stderr has the error too. */
static void github_unread(FILE *out, const struct al_report_item *it)
{
	fputs("::error file=", out);
	put_cmd(out, it->path, true);
	fputs(",line=1,title=anelint: cannot read the model::", out);
	put_cmd(out, al_status_str(it->status), false);
	fputc('\n', out);
}

static void github_report(FILE *out, const struct al_report_item *items, size_t n,
			  const struct al_report_opts *o)
{
	struct gh g = {.out = out, .o = o};
	for (size_t i = 0; i < n; i++)
		if (!items[i].model)
			github_unread(out, &items[i]);
	ali_each_plan(items, n, o, github_model, &g);
}

/* Streaming: one line per annotation, written as each model comes (a model that
 * cannot be read is annotated where it comes, not first). */
static void *github_stream_begin(FILE *out, enum al_sink_cmd cmd, const struct al_report_opts *o)
{
	struct gh *g = cmd == AL_SINK_INFO ? NULL : ali_calloc(1, sizeof *g);
	if (g)
		*g = (struct gh){.out = out, .o = o};
	return g;
}

static void github_stream_model(void *state, const struct al_report_item *it)
{
	struct gh *g = state;
	if (!it->model)
		github_unread(g->out, it);
	else
		ali_each_plan(it, 1, g->o, github_model, g);
}

static void github_stream_end(void *state)
{
	ali_free(state);
}

const struct al_sink ali_sink_github = {
	.name = "github",
	.check = github_report,
	.plan = github_report,
	.extensions = NULL,
	.shows_plans = true,
	.stream_begin = github_stream_begin,
	.stream_model = github_stream_model,
	.stream_end = github_stream_end,
};
