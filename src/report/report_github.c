/* SPDX-License-Identifier: MIT */
/* report_github.c: `--format github`, GitHub Actions workflow commands
 * ("::error file=...,title=...::message"), which the Actions log turns into
 * annotations on the pull request's files. One line per layer/op that falls
 * back (its fallback rules: ::error for an illegal rule, ::warning for a cost
 * rule), per warning rule (::notice) and per model-level finding, then a
 * summary notice per model. Accepted findings (suppressions, baseline) are not
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
		     const char *layer, const char *type, const char *msg)
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
		fputs("): ", out);
	}
	put_cmd(out, msg, false);
	fputc('\n', out);
}

static void github_model(void *vctx, const struct al_report_item *it, const struct al_view *v)
{
	struct gh *g = vctx;
	const struct al_submodel *s = v->s;
	(void)it;
	uint32_t accepted = 0, shown = 0;
	char title[160];
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
		const struct al_check_opts *co = g->o->check;
		bool unsure = r->kind != AL_RULE_WARN &&
			      !al_rule_decides_at(r, fs[i].reason, v->plan ? v->plan->target : co ? co->target : NULL,
						  co ? co->os : NULL);
		annotate(g->out, unsure ? "notice" : level(r), s, title, NULL, NULL, fs[i].reason);
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
				annotate(g->out, vd->verdict == AL_VERDICT_UNCERTAIN ? "notice" : level(r), s, title,
					 n->name, n->type, vd->reasons[i]);
				shown++;
			}
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
			" finding%s annotated, %" PRIu32 " accepted (suppressions, baseline)\n",
		v->plan && v->plan->target ? " on " : "", v->plan && v->plan->target ? v->plan->target->id : "",
		sum.per_unit[AL_UNIT_ANE], sum.nodes, s->world == AL_WORLD_MIL ? "ops" : "layers",
		sum.verdicts[AL_VERDICT_UNCERTAIN], shown, shown == 1 ? "" : "s", accepted);
}

static void github_report(FILE *out, const struct al_report_item *items, size_t n,
			  const struct al_report_opts *o)
{
	struct gh g = {.out = out, .o = o};
	for (size_t i = 0; i < n; i++) /* a model that cannot be read: stderr has the error too */
		if (!items[i].model) {
			fputs("::error file=", out);
			put_cmd(out, items[i].path, true);
			fputs(",line=1,title=anelint: cannot read the model::", out);
			put_cmd(out, al_status_str(items[i].status), false);
			fputc('\n', out);
		}
	ali_each_plan(items, n, o, github_model, &g);
}

const struct al_sink ali_sink_github = {
	.name = "github",
	.check = github_report,
	.plan = github_report,
	.extensions = NULL,
	.shows_plans = true,
};
