/* SPDX-License-Identifier: MIT */
/* report_matrix.c: `check --target all` (or `--os all`), the verdict of every
 * layer/op on every chip family (or OS release) side by side, from the per-target verdicts al_report_analyze kept
 * (the model itself holds only the requested target's): the unit of every node
 * per target is recorded, then printed. Text prints one mark column per family;
 * JSON adds "units" per layer to the usual check document. */
#include "report.h"

#include <inttypes.h>
#include <string.h>

#define MAX_TARGETS 32      /* columns; targets.def has far fewer rows */
#define RULES_PER_NODE 8    /* distinct rules remembered per node across targets */
#define FINDINGS_PER_SUB 32 /* distinct model-level rules remembered per sub-model */
#define UNIT_UNKNOWN 0xff   /* the check for that target failed */

/* Three-column mark per unit: upper case on the ANE, lower case off it. */
static const char *mark(uint8_t u)
{
	switch (u) {
	case AL_UNIT_ANE: return "ANE";
	case AL_UNIT_GPU: return "gpu";
	case AL_UNIT_CPU: return "cpu";
	case AL_UNIT_GPU_OR_CPU: return "g/c";
	case AL_UNIT_NONE: return "-";
	default: return "?";
	}
}

static const char *mark_colour(uint8_t u)
{
	return u == AL_UNIT_ANE ? C_GREEN : u == AL_UNIT_GPU ? C_YELLOW
				: u == AL_UNIT_CPU || u == AL_UNIT_GPU_OR_CPU ? C_RED : "";
}

/* const ops hold data: no unit */
static uint8_t node_unit(const struct al_node *n, const struct al_verdict *v)
{
	if (ali_node_is_const(n))
		return AL_UNIT_NONE;
	return v->placed_ane ? AL_UNIT_ANE : (uint8_t)v->placed; /* the final placement */
}

size_t ali_columns(const struct al_report_opts *o)
{
	size_t n = o && o->n_columns ? o->n_columns
		 : o && o->all_releases && !o->all_targets ? al_releases_count() : al_targets_count();
	return n < MAX_TARGETS ? n : MAX_TARGETS;
}

/* What varies between the columns: ALI_COL_TARGETS, ALI_COL_RELEASES or both. */
unsigned ali_column_axes(const struct al_report_opts *o)
{
	if (!o || !o->n_columns)
		return o && o->all_releases && !o->all_targets ? ALI_COL_RELEASES : ALI_COL_TARGETS;
	unsigned axes = 0;
	for (size_t t = 1; t < ali_columns(o); t++) {
		axes |= o->columns[t].target != o->columns[0].target ? ALI_COL_TARGETS : 0;
		axes |= o->columns[t].os != o->columns[0].os ? ALI_COL_RELEASES : 0;
	}
	return axes ? axes : ALI_COL_TARGETS;
}

static bool by_release(const struct al_report_opts *o)
{
	return ali_column_axes(o) == ALI_COL_RELEASES;
}

/* "target", "release" or (both vary) "column", plural with s */
static const char *axis_word(const struct al_report_opts *o, bool plural)
{
	unsigned a = ali_column_axes(o);
	return a == ALI_COL_RELEASES ? (plural ? "releases" : "release")
	     : a == ALI_COL_TARGETS ? (plural ? "targets" : "target") : (plural ? "columns" : "column");
}

const struct al_target *ali_column_target(const struct al_report_opts *o, size_t t)
{
	if (o && o->n_columns)
		return o->columns[t].target ? o->columns[t].target
		     : o->check && o->check->target ? o->check->target : al_target_default();
	return by_release(o) ? NULL : al_target_at(t);
}

const struct al_release *ali_column_os(const struct al_report_opts *o, size_t t)
{
	if (o && o->n_columns)
		return o->columns[t].os ? o->columns[t].os
		     : o->check && o->check->os ? o->check->os : al_release_default();
	return by_release(o) ? al_release_at(t) : NULL;
}

const char *ali_column_id(const struct al_report_opts *o, size_t t)
{
	if (o && o->n_columns && ali_column_axes(o) == (ALI_COL_TARGETS | ALI_COL_RELEASES)) {
		static _Thread_local char ids[MAX_TARGETS][48]; /* "a17/ios18": stable while the sink runs */
		snprintf(ids[t], sizeof ids[t], "%s/%s", ali_column_target(o, t)->id, ali_column_os(o, t)->id);
		return ids[t];
	}
	return by_release(o) ? ali_column_os(o, t)->id : ali_column_target(o, t)->id;
}

const char *ali_column_name(const struct al_report_opts *o, size_t t)
{
	if (o && o->n_columns && ali_column_axes(o) == (ALI_COL_TARGETS | ALI_COL_RELEASES)) {
		static _Thread_local char names[MAX_TARGETS][128];
		const struct al_target *tg = ali_column_target(o, t);
		snprintf(names[t], sizeof names[t], "%s, %s", tg->name ? tg->name : tg->id, ali_column_os(o, t)->name);
		return names[t];
	}
	const char *n = by_release(o) ? ali_column_os(o, t)->name : ali_column_target(o, t)->name;
	return n ? n : "";
}

/* Whether view v is column t's (its check did not fail). */
static bool view_is_column(const struct al_view *v, const struct al_report_opts *o, size_t t)
{
	if (!v)
		return false;
	if (o && o->n_columns)
		return v->target == ali_column_target(o, t) && v->os == ali_column_os(o, t);
	return by_release(o) ? v->os == al_release_at(t) : v->target == al_target_at(t);
}

/* ================================================================ recording */

struct node_rec {
	bool is_const;
	uint8_t unit[MAX_TARGETS];
	uint32_t unsure; /* bit t: the verdict for target t is uncertain */
	const struct al_rule *rules[RULES_PER_NODE];
	uint8_t n_rules;
};

struct finding_rec {
	const struct al_rule *rule;
	uint32_t targets; /* bit t: fired for target t */
};

struct sub_rec {
	struct node_rec *nodes;
	uint32_t n_nodes; /* every node in walk order, const ops included */
	struct finding_rec findings[FINDINGS_PER_SUB];
	uint32_t n_findings;
};

struct rec_ctx {
	struct sub_rec *sub;
	const struct al_view *view;
	size_t target;
	uint32_t row;
};

static void count_node(void *ctx, const struct al_node *n)
{
	(void)n;
	(*(uint32_t *)ctx)++;
}

static void record_node(void *vctx, const struct al_node *n)
{
	struct rec_ctx *c = vctx;
	if (c->row >= c->sub->n_nodes)
		return;
	struct node_rec *r = &c->sub->nodes[c->row++];
	const struct al_verdict *v = ali_view_verdict(c->view, n);
	r->is_const = ali_node_is_const(n);
	r->unit[c->target] = node_unit(n, v);
	if (v->verdict == AL_VERDICT_UNCERTAIN && !r->is_const)
		r->unsure |= 1u << c->target;
	for (uint32_t k = 0; k < v->n_rules; k++) {
		const struct al_rule *rule = v->rules[k];
		uint8_t j = 0;
		while (j < r->n_rules && r->rules[j] != rule)
			j++;
		if (j == r->n_rules && r->n_rules < RULES_PER_NODE)
			r->rules[r->n_rules++] = rule;
	}
}

static void record_findings(struct sub_rec *r, const struct al_view *v, size_t t)
{
	const struct al_finding *f;
	uint32_t nf = ali_view_findings(v, v->s, &f);
	for (uint32_t k = 0; k < nf; k++) {
		const struct al_rule *rule = f[k].rule;
		uint32_t j = 0;
		while (j < r->n_findings && r->findings[j].rule != rule)
			j++;
		if (j == r->n_findings) {
			if (r->n_findings == FINDINGS_PER_SUB)
				continue;
			r->findings[r->n_findings++] = (struct finding_rec){rule, 0};
		}
		r->findings[j].targets |= 1u << t;
	}
}

/* Record every target's verdicts from the analysis a of m (a target whose check
 * failed, or was not analysed, is UNIT_UNKNOWN); NULL on out of memory. */
static struct sub_rec *record(const al_model *m, const al_analysis *a, const struct al_report_opts *o)
{
	size_t ns = al_model_count(m), nt = ali_columns(o);
	struct sub_rec *subs = ali_calloc(ns ? ns : 1, sizeof *subs);
	if (!subs)
		return NULL;
	for (size_t k = 0; k < ns; k++) {
		ali_walk_nodes(al_model_get(m, k), count_node, &subs[k].n_nodes);
		subs[k].nodes = ali_calloc(subs[k].n_nodes ? subs[k].n_nodes : 1, sizeof *subs[k].nodes);
		if (!subs[k].nodes) {
			for (size_t j = 0; j <= k; j++)
				ali_free(subs[j].nodes);
			ali_free(subs);
			return NULL;
		}
	}
	for (size_t t = 0; t < nt; t++) {
		for (size_t k = 0; k < ns; k++) {
			const struct al_view *v = ali_analysis_view(a, t, k);
			if (!view_is_column(v, o, t)) {
				for (uint32_t j = 0; j < subs[k].n_nodes; j++)
					subs[k].nodes[j].unit[t] = UNIT_UNKNOWN;
				continue;
			}
			struct rec_ctx c = {.sub = &subs[k], .view = v, .target = t};
			ali_walk_nodes(al_model_get(m, k), record_node, &c);
			record_findings(&subs[k], v, t);
		}
	}
	return subs;
}

static void free_record(struct sub_rec *subs, size_t ns)
{
	for (size_t k = 0; subs && k < ns; k++)
		ali_free(subs[k].nodes);
	ali_free(subs);
}

static bool differs(const struct node_rec *r, size_t nt)
{
	for (size_t t = 1; t < nt; t++)
		if (r->unit[t] != r->unit[0])
			return true;
	return false;
}

/* ================================================================ text */

struct row_ctx {
	FILE *out;
	const struct al_report_opts *o;
	const struct sub_rec *rec;
	const struct al_graph *last_graph;
	uint32_t row, hidden, changed, unsure;
};

/* A cell is at least 4 wide: a mark and the '?' of an uncertain verdict. */
static int cell_width(const struct al_report_opts *o, size_t t)
{
	size_t idw = strlen(ali_column_id(o, t));
	return (int)(idw > 4 ? idw : 4);
}

static void print_row(void *vctx, const struct al_node *n)
{
	struct row_ctx *c = vctx;
	FILE *out = c->out;
	const struct al_report_opts *o = c->o;
	uint32_t row = c->row++;
	if (row >= c->rec->n_nodes)
		return;
	const struct node_rec *r = &c->rec->nodes[row];
	if (ali_node_is_const(n) && !o->show_consts) {
		c->hidden++;
		return;
	}
	ali_put_graph_header(out, o, n, &c->last_graph);
	size_t nt = ali_columns(o);
	bool diff = differs(r, nt);
	c->changed += diff;
	int depth = n->owner ? n->owner->depth : 0;
	int width = 30 - depth * 2 > 8 ? 30 - depth * 2 : 8;
	fprintf(out, "%5" PRIu32 "%c %*s", row, diff ? '*' : ' ', depth * 2, "");
	int w = ali_put_name(out, n->name, 0); /* never cut: a longer name shifts its row */
	fprintf(out, "%*s  ", width - w > 0 ? width - w : 0, "");
	w = ali_put_name(out, n->type, 22);
	fprintf(out, "%*s ", 22 - w > 0 ? 22 - w : 0, "");
	c->unsure += r->unsure != 0;
	for (size_t t = 0; t < nt; t++) {
		bool q = r->unsure >> t & 1u;
		fprintf(out, " %s%*s%s%s", al_col(o, mark_colour(r->unit[t])), cell_width(o, t) - q,
			mark(r->unit[t]), q ? "?" : "", al_col(o, C_RESET));
	}
	if (r->n_rules)
		fputs(" ", out);
	for (uint8_t k = 0; k < r->n_rules; k++)
		fprintf(out, "%s%s", k ? "," : " ", r->rules[k]->id);
	fputc('\n', out);
}

static void text_summary(FILE *out, const struct al_submodel *s, const struct sub_rec *rec,
			 const struct al_report_opts *o)
{
	size_t nt = ali_columns(o);
	uint32_t layers = 0;
	uint32_t ane[MAX_TARGETS] = {0};
	/* rows are in walk order; const ops have unit "none" */
	for (uint32_t j = 0; j < rec->n_nodes; j++) {
		if (rec->nodes[j].is_const)
			continue;
		layers++;
		for (size_t t = 0; t < nt; t++)
			ane[t] += rec->nodes[j].unit[t] == AL_UNIT_ANE;
	}
	fprintf(out, "summary: %" PRIu32 " %s; on the ANE:", layers,
		s->world == AL_WORLD_MIL ? "ops" : "layers");
	for (size_t t = 0; t < nt; t++)
		fprintf(out, "%s %s %s%" PRIu32 "%s", t ? "," : "", ali_column_id(o, t),
			al_col(o, ane[t] == layers ? C_GREEN : C_RED), ane[t], al_col(o, C_RESET));
	fputc('\n', out);
}

static void text_findings(FILE *out, const struct sub_rec *rec, const struct al_report_opts *o)
{
	size_t nt = ali_columns(o);
	for (uint32_t k = 0; k < rec->n_findings; k++) {
		const struct finding_rec *f = &rec->findings[k];
		bool warn = f->rule->kind == AL_RULE_WARN;
		fprintf(out, "model: %s%s%s %s (%s) on", al_col(o, warn ? C_YELLOW : C_RED), f->rule->id,
			al_col(o, C_RESET), al_rule_kind_name(f->rule->kind), f->rule->name);
		if (f->targets == (nt >= 32 ? 0xffffffffu : (1u << nt) - 1)) {
			fprintf(out, " every %s", axis_word(o, false));
		} else {
			bool first = true;
			for (size_t t = 0; t < nt; t++)
				if (f->targets & (1u << t)) {
					fprintf(out, "%s %s", first ? "" : ",", ali_column_id(o, t));
					first = false;
				}
		}
		if (!warn)
			fprintf(out, " (-> %s)", al_unit_name(f->rule->unit));
		fputc('\n', out);
	}
}

void ali_text_check_matrix(FILE *out, const struct al_report_item *items, size_t n,
			  const struct al_report_opts *o)
{
	bool first = true;
	size_t nt = ali_columns(o);
	for (size_t i = 0; i < n; i++) {
		if (!items[i].model)
			continue;
		al_model *m = items[i].model;
		struct sub_rec *rec = record(m, items[i].analysis, o);
		if (!rec) {
			fputs("anelint: out of memory\n", out);
			continue;
		}
		for (size_t k = 0; k < al_model_count(m); k++) {
			const struct al_submodel *s = al_model_get(m, k);
			if (!first)
				fputc('\n', out);
			first = false;
			fprintf(out, "%s", al_col(o, C_BOLD));
			ali_put_name(out, s->path, 0);
			fprintf(out, "%s  %s, spec %d (%s)\n", al_col(o, C_RESET), s->type, s->spec_version,
				al_spec_min_os(s->spec_version));
			if (s->n_graphs) {
				fprintf(out, "%s%5s  %-30s  %-22s ", al_col(o, C_DIM), "#", "name", "type");
				for (size_t t = 0; t < nt; t++)
					fprintf(out, " %*s", cell_width(o, t), ali_column_id(o, t));
				fprintf(out, "  rules (any %s)%s\n", axis_word(o, false),
					al_col(o, C_RESET));
				struct row_ctx c = {.out = out, .o = o, .rec = &rec[k]};
				ali_walk_nodes(s, print_row, &c);
				if (c.hidden)
					fprintf(out, "%s  (%" PRIu32 " const ops not shown; --consts shows them)%s\n",
						al_col(o, C_DIM), c.hidden, al_col(o, C_RESET));
				if (c.changed)
					fprintf(out, "%s  * the unit differs between %s: %" PRIu32 " %s%s\n",
						al_col(o, C_DIM), axis_word(o, true), c.changed,
						s->world == AL_WORLD_MIL ? (c.changed == 1 ? "op" : "ops")
									 : (c.changed == 1 ? "layer" : "layers"),
						al_col(o, C_RESET));
				if (c.unsure)
					fprintf(out, "%s  ? the verdict is uncertain there (the evidence does not "
						"reach that %s): %" PRIu32 " %s%s\n", al_col(o, C_DIM),
						axis_word(o, false), c.unsure,
						s->world == AL_WORLD_MIL ? (c.unsure == 1 ? "op" : "ops")
									 : (c.unsure == 1 ? "layer" : "layers"),
						al_col(o, C_RESET));
				text_summary(out, s, &rec[k], o);
			} else if (s->n_children) {
				fprintf(out, "  pipeline of %" PRIu32 " models (below)\n", s->n_children);
			}
			text_findings(out, &rec[k], o);
		}
		free_record(rec, al_model_count(m));
	}
}

/* ================================================================ JSON */

/* A JSON object keyed by column id: json-c kept one member per key (the first
 * one's place, the last one's value), so a column whose id an earlier column
 * has is left out and each column writes the value of the last with its id. */
static bool id_seen_before(const struct al_report_opts *o, size_t t)
{
	for (size_t u = 0; u < t; u++)
		if (strcmp(ali_column_id(o, u), ali_column_id(o, t)) == 0)
			return true;
	return false;
}

static size_t last_with_id(const struct al_report_opts *o, size_t t)
{
	size_t last = t;
	for (size_t u = t + 1; u < ali_columns(o); u++)
		if (strcmp(ali_column_id(o, u), ali_column_id(o, t)) == 0)
			last = u;
	return last;
}

void ali_jw_matrix_columns(struct ali_jw *w, const struct al_report_opts *o)
{
	ali_jw_array(w, ali_column_axes(o) == (ALI_COL_TARGETS | ALI_COL_RELEASES) ? "columns"
			: by_release(o) ? "releases" : "targets");
	for (size_t t = 0; t < ali_columns(o); t++) {
		ali_jw_object(w, NULL);
		ali_jw_str(w, "id", ali_column_id(o, t));
		ali_jw_str(w, "name", ali_column_name(o, t));
		if (o->n_columns) { /* what the column was checked for */
			ali_jw_str(w, "target", ali_column_target(o, t)->id);
			ali_jw_str(w, "os", ali_column_os(o, t)->id);
		}
		ali_jw_end(w);
	}
	ali_jw_end(w);
}

struct sub_rec *ali_matrix_record(const struct al_report_item *it, const struct al_report_opts *o)
{
	return it->model ? record(it->model, it->analysis, o) : NULL;
}

void ali_matrix_free(struct sub_rec *rec, const struct al_report_item *it)
{
	if (rec)
		free_record(rec, al_model_count(it->model));
}

void ali_jw_matrix_layer(struct ali_jw *w, const struct sub_rec *rec, size_t k, uint32_t row,
			 const struct al_report_opts *o)
{
	if (!rec || row >= rec[k].n_nodes)
		return;
	ali_jw_object(w, "units");
	for (size_t t = 0; t < ali_columns(o); t++) {
		if (id_seen_before(o, t))
			continue;
		uint8_t x = rec[k].nodes[row].unit[last_with_id(o, t)];
		ali_jw_str(w, ali_column_id(o, t), x < AL_UNIT_COUNT ? al_unit_name(x) : "unknown");
	}
	ali_jw_end(w);
}

void ali_jw_matrix_model(struct ali_jw *w, const struct sub_rec *rec, size_t k, const struct al_report_opts *o)
{
	if (!rec)
		return;
	ali_jw_object(w, ali_column_axes(o) == (ALI_COL_TARGETS | ALI_COL_RELEASES) ? "units_by_column"
			 : by_release(o) ? "units_by_release" : "units_by_target");
	for (size_t t = 0; t < ali_columns(o); t++) {
		if (id_seen_before(o, t))
			continue;
		size_t tl = last_with_id(o, t);
		uint32_t cnt[AL_UNIT_COUNT] = {0};
		for (uint32_t j = 0; j < rec[k].n_nodes; j++)
			if (rec[k].nodes[j].unit[tl] < AL_UNIT_COUNT)
				cnt[rec[k].nodes[j].unit[tl]]++;
		ali_jw_object(w, ali_column_id(o, t));
		for (int x = 0; x < AL_UNIT_COUNT; x++)
			if (x != AL_UNIT_NONE)
				ali_jw_int(w, al_unit_name(x), cnt[x]);
		ali_jw_end(w);
	}
	ali_jw_end(w);
}
