/* SPDX-License-Identifier: MIT */
/* report_dot.c: the dataflow graph for Graphviz (`--format dot`; render with
 * `dot -Tsvg report.dot -o report.svg`). One digraph; per model a cluster, and in
 * it one cluster per plan segment (labelled with its unit, layer range and
 * FLOPs), holding the segment's layers coloured by the unit they run on. The
 * graph is the collapsed one of report_graph.c (const ops left out, nested
 * graphs folded into their owner). Edges between units (switches) are red.
 * Node ids are generated (m<model>_<index>); names only ever appear inside
 * double-quoted strings, escaped with AL_ESC_DOT. */
#include "report.h"

#include <inttypes.h>
#include <string.h>

#define DOT_LABEL 32 /* characters of a name in a node label */

struct dot {
	FILE *out;
	const struct al_report_opts *o;
	uint32_t models;
};

static const char *fill_of(enum al_unit u)
{
	return u == AL_UNIT_ANE ? "#c8e6c9" : u == AL_UNIT_GPU ? "#fde3b5" : u == AL_UNIT_NONE ? "#e0e0e0" : "#ffcdd2";
}

static const char *line_of(enum al_unit u)
{
	return u == AL_UNIT_ANE ? "#2e7d32" : u == AL_UNIT_GPU ? "#b45309" : u == AL_UNIT_NONE ? "#616161" : "#c62828";
}

static const char *cluster_fill(enum al_unit u)
{
	return u == AL_UNIT_ANE ? "#f1f8f1" : u == AL_UNIT_GPU ? "#fff6e8" : "#fdf0f0";
}

static void q(FILE *out, const char *s, size_t max)
{
	ali_put_esc(out, s, AL_ESC_DOT, max);
}

static void node_stmt(struct dot *c, uint32_t m, const struct al_dag *g, uint32_t i, const struct al_plan *p)
{
	FILE *out = c->out;
	const struct al_row *row = &g->rows[g->top[i]];
	const struct al_node *n = row->node;
	const struct al_verdict *v = row->verdict;
	enum al_unit u = ali_row_unit(row, p);
	fprintf(out, "    m%" PRIu32 "_%" PRIu32 " [label=\"", m, row->index);
	q(out, n->name, DOT_LABEL);
	fputs("\\n", out);
	q(out, n->type, DOT_LABEL);
	fprintf(out, " (%s", ali_unit_upper(u));
	if (g->nested[i])
		fprintf(out, ", +%" PRIu32 " nested", g->nested[i]);
	fprintf(out, ")\", fillcolor=\"%s\", color=\"%s\"", fill_of(u), line_of(u));
	if (!v->ane)
		fputs(", penwidth=3", out);
	else if (ali_row_moved(row, p))
		fputs(", style=\"rounded,filled,dashed\", penwidth=2", out);
	fprintf(out, ", tooltip=\"#%" PRIu32 " ", row->index);
	q(out, n->name, 0);
	fputs(" (", out);
	q(out, n->type, 0);
	fputs(")", out);
	for (uint32_t r = 0; r < v->n_rules; r++) {
		fprintf(out, "; %s ", v->rules[r]->id);
		q(out, v->reasons[r], 0);
	}
	fputs("\"];\n", out);
}

static void dot_model(void *vctx, const struct al_report_item *it, const struct al_view *v)
{
	struct dot *c = vctx;
	const struct al_submodel *s = v->s;
	const struct al_plan *p = v->plan;
	const char *error = v->error;
	FILE *out = c->out;
	(void)it;
	uint32_t m = c->models++;
	fprintf(out, "  subgraph cluster_m%" PRIu32 " {\n    label=\"", m);
	q(out, s->path, 0);
	fputs(" (", out);
	q(out, s->type, 0);
	if (p) {
		fputs(", ", out);
		q(out, p->target && p->target->id ? p->target->id : "?", 0);
		fprintf(out, ", %s: %" PRIu32 " segment%s, %" PRIu32 " switch%s", al_policy_name(p->policy),
			p->n_segments, p->n_segments == 1 ? "" : "s", p->switches, p->switches == 1 ? "" : "es");
	} else {
		fputs(", plan failed: ", out);
		q(out, error ? error : "?", 0);
	}
	fputs(")\";\n    style=\"rounded\"; color=\"#999999\";\n", out);
	struct al_dag g;
	if (!s->n_graphs || !ali_dag_build(v, &g)) {
		fprintf(out, "    m%" PRIu32 "_empty [label=\"%s\", shape=plaintext, style=\"\"];\n  }\n", m,
			s->n_children ? "pipeline: its models follow" : "no layers");
		return;
	}
	if (!g.n)
		fprintf(out, "    m%" PRIu32 "_empty [label=\"no layers\", shape=plaintext, style=\"\"];\n", m);
	/* one cluster per segment (graph nodes bucketed by segment); the nodes of
	 * no segment (no plan, or out of memory) go in the model's cluster */
	uint32_t n_seg = p ? p->n_segments : 0;
	uint32_t *start = n_seg ? ali_calloc((size_t)n_seg + 1, sizeof *start) : NULL;
	uint32_t *by_seg = start ? ali_calloc(g.n ? g.n : 1, sizeof *by_seg) : NULL;
	if (!by_seg)
		n_seg = 0;
	for (uint32_t i = 0; i < g.n && n_seg; i++) {
		const struct al_row *row = &g.rows[g.top[i]];
		if (row->plan >= 0 && p->segment[row->plan] < n_seg)
			start[p->segment[row->plan] + 1]++;
	}
	for (uint32_t k = 0; k < n_seg; k++)
		start[k + 1] += start[k];
	for (uint32_t i = 0; i < g.n && n_seg; i++) {
		const struct al_row *row = &g.rows[g.top[i]];
		if (row->plan >= 0 && p->segment[row->plan] < n_seg)
			by_seg[start[p->segment[row->plan]]++] = i; /* start[k] ends at start[k + 1] of before */
	}
	for (uint32_t k = 0, a = 0; k < n_seg; k++) {
		uint32_t b = start[k];
		if (b > a) {
			const struct al_segment *sg = &p->segments[k];
			char buf[32];
			fprintf(out, "    subgraph cluster_m%" PRIu32 "_s%" PRIu32 " {\n      label=\"segment %" PRIu32
				     ": %s, %" PRIu32 " layers #%" PRIu32 "..#%" PRIu32 ", %s FLOPs\";\n"
				     "      style=\"filled,rounded\"; fillcolor=\"%s\"; color=\"%s\";\n",
				m, k, k, ali_unit_upper(sg->unit), sg->n_nodes, sg->first, sg->last,
				ali_si(buf, sizeof buf, sg->flops), cluster_fill(sg->unit), line_of(sg->unit));
			for (uint32_t j = a; j < b; j++) {
				fputs("  ", out);
				node_stmt(c, m, &g, by_seg[j], p);
			}
			fputs("    }\n", out);
		}
		a = b;
	}
	for (uint32_t i = 0; i < g.n; i++) {
		const struct al_row *row = &g.rows[g.top[i]];
		if (!n_seg || row->plan < 0 || p->segment[row->plan] >= n_seg)
			node_stmt(c, m, &g, i, p);
	}
	ali_free(start);
	ali_free(by_seg);
	for (uint32_t e = 0; e < g.n_edges; e++) {
		const struct al_row *a = &g.rows[g.top[g.edges[e].from]], *b = &g.rows[g.top[g.edges[e].to]];
		fprintf(out, "    m%" PRIu32 "_%" PRIu32 " -> m%" PRIu32 "_%" PRIu32, m, a->index, m, b->index);
		if (ali_row_unit(a, p) != ali_row_unit(b, p))
			fputs(" [color=\"#c62828\", penwidth=2, style=dashed]", out);
		fputs(";\n", out);
	}
	ali_dag_free(&g);
	fputs("  }\n", out);
}

static void dot_report(FILE *out, const struct al_report_item *items, size_t n, const struct al_report_opts *o)
{
	struct dot c = {.out = out, .o = o};
	fprintf(out, "// anelint %s: predicted ANE / GPU / CPU placement; clusters are the plan's segments.\n"
		     "// Render with: dot -Tsvg FILE.dot -o FILE.svg\n"
		     "digraph anelint {\n"
		     "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=11, newrank=true, nodesep=0.25, "
		     "ranksep=0.35];\n"
		     "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10, "
		     "height=0.3];\n"
		     "  edge [color=\"#888888\", arrowsize=0.6];\n",
		ANELINT_VERSION);
	ali_each_plan(items, n, o, dot_model, &c);
	fputs("}\n", out);
}

const struct al_sink ali_sink_dot = {
	.name = "dot",
	.check = dot_report,
	.plan = dot_report,
	.extensions = "dot,gv",
	.shows_plans = true,
};
