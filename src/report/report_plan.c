/* SPDX-License-Identifier: MIT */
/* report_plan.c: the `plan` output of the text and JSON sinks. For every model
 * (and, with --target all, every chip family) it takes the plan al_report_analyze
 * made and prints the unit bar, the segments, the switches, the totals, the
 * policy that was used and why, and the cheapest fixes. Every time is an
 * estimate and says so; docs/partition.md explains the model behind them. */
#include "report.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BAR_WIDTH 100 /* characters of the unit bar at most */
#define TEXT_SEGMENTS 100 /* segment rows in the text table (JSON has them all) */
#define FIX_NAMES 4 /* layer names shown per fix in text */

/* One line per policy for the report; provenance in docs/partition.md. */
/* Where the plan put the layers the model-level rule moved ("cpu", "gpu", "gpu
 * and cpu"): with the GPU taking the fallbacks, ANE071 sends them to the GPU. */
static const char *model_moved_to(const struct al_plan *p)
{
	bool gpu = false, cpu = false;
	for (uint32_t k = 0; k < p->n_nodes; k++)
		if (p->place[k] == AL_PLACE_MODEL) {
			gpu |= p->unit[k] == AL_UNIT_GPU;
			cpu |= p->unit[k] == AL_UNIT_CPU;
		}
	return gpu && cpu ? "gpu and cpu" : gpu ? "gpu" : cpu ? "cpu" : al_unit_name(p->model_rule->unit);
}

static const char *const policy_text[AL_POLICY_COUNT] = {
	[AL_POLICY_AUTO] = "NeuralNetwork: nn2020, ML Program: mlprogram",
	[AL_POLICY_NN2020] = "work that depends on GPU work stays on the GPU; after a CPU fallback, "
			     "back to the ANE (hollance 2020)",
	[AL_POLICY_MLPROGRAM] = "work that depends on a CPU-only op (cumsum, fill, range_1d) stays on "
				"the CPU; other fallbacks are islands",
	[AL_POLICY_OPTIMISTIC] = "every fallback is an island, then back to the ANE (a lower bound)",
};

static const char *const fix_kind_names[] = {"node", "rule", "segment", "model"};

static char unit_letter(enum al_unit u)
{
	return u == AL_UNIT_ANE ? 'A' : u == AL_UNIT_GPU ? 'G' : u == AL_UNIT_CPU ? 'C' : '?';
}

static const char *unit_upper(enum al_unit u)
{
	return u == AL_UNIT_ANE ? "ANE" : u == AL_UNIT_GPU ? "GPU" : u == AL_UNIT_CPU ? "CPU" : "?";
}

/* ================================================================ walking the plans */

/* Model-order index of a fix's node: a plan's nodes sorted by address, looked
 * up by binary search (a fix may name thousands of layers). */
struct index_map {
	struct node_pos {
		uintptr_t node;
		uint32_t index;
	} *v;
	uint32_t n;
	const struct al_plan *p; /* linear search when v could not be allocated */
};

static int cmp_pos(const void *a, const void *b)
{
	uintptr_t x = ((const struct node_pos *)a)->node, y = ((const struct node_pos *)b)->node;
	return x < y ? -1 : x > y;
}

static void map_build(struct index_map *m, const struct al_plan *p)
{
	m->n = 0;
	m->p = p;
	m->v = p->n_fixes ? ali_malloc(((size_t)p->n_nodes + 1) * sizeof *m->v) : NULL;
	if (!m->v)
		return;
	for (uint32_t k = 0; k < p->n_nodes; k++)
		m->v[k] = (struct node_pos){(uintptr_t)p->nodes[k], p->index[k]};
	m->n = p->n_nodes;
	qsort(m->v, m->n, sizeof *m->v, cmp_pos);
}

static long node_index(const struct index_map *m, const struct al_node *n)
{
	struct node_pos key = {(uintptr_t)n, 0};
	if (!m->v) {
		for (uint32_t k = 0; n && k < m->p->n_nodes; k++)
			if (m->p->nodes[k] == n)
				return m->p->index[k];
		return -1;
	}
	const struct node_pos *hit = n ? bsearch(&key, m->v, m->n, sizeof *m->v, cmp_pos) : NULL;
	return hit ? (long)hit->index : -1;
}

/* ================================================================ text */

struct text_ctx {
	FILE *out;
	const struct al_report_opts *o;
	bool first;
};

static void text_bar(FILE *out, const struct al_plan *p, const struct al_report_opts *o)
{
	uint32_t n = p->n_nodes;
	uint32_t group = (n + BAR_WIDTH - 1) / BAR_WIDTH;
	if (group < 1)
		group = 1;
	fputs("  bar      ", out);
	bool any_unknown = false;
	for (uint32_t a = 0; a < n; a += group) {
		uint32_t b = a + group < n ? a + group : n;
		uint32_t cnt[AL_UNIT_COUNT] = {0};
		bool own[AL_UNIT_COUNT] = {0};
		bool unknown = false;
		for (uint32_t k = a; k < b; k++) {
			enum al_unit u = p->unit[k] < AL_UNIT_COUNT ? p->unit[k] : AL_UNIT_CPU;
			cnt[u]++;
			unknown |= u == AL_UNIT_ANE && p->nodes[k]->verdict.unknown;
			own[u] |= p->place[k] == AL_PLACE_VERDICT || p->place[k] == AL_PLACE_RESOLVED;
		}
		/* the off-ANE unit if any layer of the group is off the ANE (the commoner one) */
		enum al_unit u = AL_UNIT_ANE;
		if (cnt[AL_UNIT_GPU] || cnt[AL_UNIT_CPU])
			u = cnt[AL_UNIT_CPU] >= cnt[AL_UNIT_GPU] ? AL_UNIT_CPU : AL_UNIT_GPU;
		char c = unit_letter(u);
		if (u != AL_UNIT_ANE && !own[u])
			c = (char)(c - 'A' + 'a');
		if (u == AL_UNIT_ANE && unknown) /* ANE057: a layer of unknown unit */
			c = '?';
		any_unknown |= c == '?';
		fprintf(out, "%s%c", al_col(o, c == '?' ? C_YELLOW : al_unit_colour(u)), c);
	}
	fprintf(out, "%s\n", al_col(o, C_RESET));
	fprintf(out, "%s           A ANE, G GPU, C CPU%s; lower case: moved there by the policy or a model-level rule",
		al_col(o, C_DIM), any_unknown ? ", ? unit unknown (ANE057; estimated as ANE)" : "");
	if (group > 1)
		fprintf(out, "; one mark = %" PRIu32 " layers (an off-ANE unit shows if any has it)", group);
	fprintf(out, "%s\n", al_col(o, C_RESET));
}

static void text_ms(FILE *out, bool timed, double us)
{
	if (timed)
		fprintf(out, "%9.3f", us / 1000.0);
	else
		fprintf(out, "%9s", "-");
}

/* Whether a pass rewriting layers of type `from` applies to n: n is of that
 * type, or (ML Program) an op of that type produces one of n's inputs, as the
 * constexpr_* op holding a weight a linear reads (mil-blockwise-to-per-channel
 * answers the linear's ANE038 by rewriting its weight's producer). */
static bool pass_reaches(const struct al_node *n, const char *from)
{
	if (!n || !from)
		return false;
	if (n->type && strcmp(n->type, from) == 0)
		return true;
	for (uint32_t i = 0; i < n->n_inputs; i++) {
		const struct al_node *p = n->inputs[i] ? ali_mil_producer(n, n->inputs[i]) : NULL;
		if (p && p->type && strcmp(p->type, from) == 0)
			return true;
	}
	return false;
}

/* The passes of `anelint fix` answering the rule of fix f for the layer types
 * it names (or their inputs' producers): "name (class)" items, into buf. */
static bool fix_passes(const struct al_fix *f, char *buf, size_t n)
{
	size_t l = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < al_passes_count() && l < n; k++) {
		const struct al_pass *ps = al_pass_at(k);
		if (!ps || !ps->rule || !f->rule || !f->rule->id || strcmp(ps->rule, f->rule->id) != 0)
			continue;
		bool type = false;
		if (f->kind == AL_FIX_NODE)
			type = pass_reaches(f->node, ps->from);
		for (uint32_t i = 0; f->kind != AL_FIX_NODE && i < f->n_nodes && !type; i++)
			type = pass_reaches(f->nodes[i], ps->from);
		if (!type)
			continue;
		if (ps->equiv == AL_EQ_EXACT)
			l += (size_t)snprintf(buf + l, n - l, "%s%s (exact)", l ? ", " : "", ps->name);
		else
			l += (size_t)snprintf(buf + l, n - l, "%s%s (%s: --allow %s)", l ? ", " : "", ps->name,
					      al_equiv_name(ps->equiv), al_equiv_name(ps->equiv));
	}
	return l > 0;
}

static void text_fix(FILE *out, const struct al_plan *p, const struct index_map *map,
		     const struct al_fix *f, uint32_t rank, const struct al_report_opts *o)
{
	fprintf(out, "    %" PRIu32 ". ", rank);
	switch (f->kind) {
	case AL_FIX_MODEL:
		fprintf(out, "the model-level rule %s (%s)", f->rule ? f->rule->id : "?",
			f->rule ? f->rule->name : "?");
		break;
	case AL_FIX_NODE:
		fprintf(out, "#%ld ", node_index(map, f->node));
		ali_put_name(out, f->node ? f->node->name : "", 40);
		fputs(" (", out);
		ali_put_name(out, f->node ? f->node->type : "", 24);
		fprintf(out, ", %s %s)", f->rule ? f->rule->id : "-", f->rule ? f->rule->name : "");
		if (f->node && f->node->n_sub)
			fputs(" with the layers nested in it", out);
		break;
	case AL_FIX_RULE:
	case AL_FIX_SEGMENT:
		if (f->kind == AL_FIX_RULE)
			fprintf(out, "the %" PRIu32 " layers %s (%s) moves:", f->n_nodes,
				f->rule ? f->rule->id : "?", f->rule ? f->rule->name : "?");
		else
			fprintf(out, "the %" PRIu32 " fallback layers of one segment:", f->n_nodes);
		for (uint32_t k = 0; k < f->n_nodes && k < FIX_NAMES; k++) {
			fprintf(out, "%s #%ld ", k ? "," : "", node_index(map, f->nodes[k]));
			ali_put_name(out, f->nodes[k]->name, 30);
		}
		if (f->n_nodes > FIX_NAMES)
			fputs(", ...", out);
		break;
	}
	char fp[240];
	if (f->kind != AL_FIX_MODEL && fix_passes(f, fp, sizeof fp))
		fprintf(out, "\n         anelint fix rewrites it: %s", fp);
	fprintf(out, "\n         %ssegments %" PRIu32 " -> %" PRIu32 ", switches %" PRIu32 " -> %" PRIu32,
		al_col(o, C_DIM), f->segments_before, f->segments_after, f->switches_before,
		f->switches_after);
	if (p->timed)
		fprintf(out, ", est. gain %.3f ms", f->gain_us / 1000.0);
	else
		fprintf(out, ", est. gain %.3f ms in switch costs", f->gain_us / 1000.0);
	fprintf(out, "%s\n", al_col(o, C_RESET));
}

/* The model-level fix `anelint fix` makes when its rule decides the placement,
 * and the plan of the fixed model (al_plan.fix_rule). */
static void text_model_fix(FILE *out, const char *path, const struct al_submodel *s, const struct al_plan *p,
			   const struct al_report_opts *o)
{
	if (!p->fix_rule || !s)
		return;
	fprintf(out, "  model    %s%s%s is removed by: anelint fix", al_col(o, C_BOLD), p->fix_rule->id,
		al_col(o, C_RESET));
	ali_put_default_shapes(out, s, AL_FLEX_RANGE, false);
	fputc(' ', out);
	ali_put_name(out, path ? path : "MODEL", 0);
	fputs(" -o OUT (pass input-fixed-shape, exact: the description only)\n", out);
	if (p->then_rule) {
		fprintf(out, "           then %s (%s) still moves the whole model off the ANE (-> %s)", p->then_rule->id,
			p->then_rule->name, al_unit_name(p->then_rule->unit));
		for (uint32_t k = 0; k < s->n_findings; k++)
			if (s->findings[k].rule == p->then_rule && s->findings[k].reason) {
				fputs(": ", out);
				ali_put_name(out, s->findings[k].reason, 200);
				break;
			}
		fputc('\n', out);
		return;
	}
	fprintf(out, "           then %" PRIu32 " segment%s, %" PRIu32 " switch%s, ", p->then_segments,
		p->then_segments == 1 ? "" : "s", p->then_switches, p->then_switches == 1 ? "" : "es");
	if (p->total_flops > 0)
		fprintf(out, "%.1f%% of the FLOPs on the ANE", 100.0 * p->then_ane_flops / p->total_flops);
	else
		fprintf(out, "%" PRIu32 " of %" PRIu32 " layers on the ANE", p->then_ane_nodes, p->n_nodes);
	if (p->timed)
		fprintf(out, ", est. %.3f ms (now %.3f)", p->then_est_us / 1000.0, p->est_us / 1000.0);
	fputc('\n', out);
}

/* Issue #30: the layers whose verdict is uncertain could each change the segments
 * above (placed the other way, they split or join one): how many, and the first few. */
#define TEXT_UNCERTAIN 8
static void text_uncertain(FILE *out, const struct al_view *v, const struct al_plan *p,
			   const struct al_report_opts *o)
{
	uint32_t n = 0;
	for (uint32_t k = 0; k < p->n_nodes; k++)
		n += ali_view_verdict(v, p->nodes[k])->verdict == AL_VERDICT_UNCERTAIN;
	if (!n)
		return;
	fprintf(out, "  %suncertain %" PRIu32 "%s (could change these segments):", al_col(o, C_YELLOW), n,
		al_col(o, C_RESET));
	uint32_t shown = 0;
	for (uint32_t k = 0; k < p->n_nodes && shown < TEXT_UNCERTAIN; k++) {
		const struct al_verdict *vd = ali_view_verdict(v, p->nodes[k]);
		if (vd->verdict != AL_VERDICT_UNCERTAIN)
			continue;
		fputs(shown++ ? ", " : " ", out);
		ali_put_name(out, p->nodes[k]->name, 40);
		fprintf(out, " (segment %" PRIu32 ", %s)", p->segment[k],
			vd->uncertain_rule ? vd->uncertain_rule->id : "no evidence for its kind");
	}
	if (n > shown)
		fputs(", ...", out);
	fputc('\n', out);
}

static void text_one(void *vctx, const struct al_report_item *it, const struct al_view *v)
{
	struct text_ctx *c = vctx;
	const struct al_submodel *s = v->s;
	const struct al_plan *p = v->plan;
	const char *error = v->error;
	FILE *out = c->out;
	const struct al_report_opts *o = c->o;
	(void)it;
	if (!c->first)
		fputc('\n', out);
	c->first = false;
	fprintf(out, "%s", al_col(o, C_BOLD));
	ali_put_name(out, s ? s->path : "?", 0);
	if (s)
		fprintf(out, "%s  %s, spec %d (%s)\n", al_col(o, C_RESET), s->type, s->spec_version,
			al_spec_min_os(s->spec_version));
	else
		fprintf(out, "%s\n", al_col(o, C_RESET));
	if (!p) {
		fprintf(out, "  %splan failed:%s %s\n", al_col(o, C_RED), al_col(o, C_RESET), error ? error : "?");
		return;
	}
	const struct al_target *t = p->target;
	fprintf(out, "  target   %s, %s\n", t && t->id ? t->id : "?", t && t->name ? t->name : "?");
	fprintf(out, "  os       %s (%s), compute units %s%s\n", p->os ? p->os->id : "?",
		p->os ? p->os->name : "?", al_compute_units_name(p->compute_units),
		p->gpu_fallback ? ": fallbacks the ANE cannot run go to the GPU" : "");
	fprintf(out, "  policy   %s (%s)\n%s           %s%s\n", al_policy_name(p->policy), p->policy_why,
		al_col(o, C_DIM), policy_text[p->policy < AL_POLICY_COUNT ? p->policy : 0], al_col(o, C_RESET));
	if (p->model_rule)
		fprintf(out, "  model    %s%s%s (%s) moves the whole model off the ANE (-> %s)\n",
			al_col(o, C_RED), p->model_rule->id, al_col(o, C_RESET), p->model_rule->name,
			model_moved_to(p));
	if (p->n_nodes == 0) {
		if (s->n_children)
			fprintf(out, "  pipeline of %" PRIu32 " models (planned below)\n", s->n_children);
		else
			fputs("  no layers to place\n", out);
		return;
	}
	text_bar(out, p, o);
	bool flops = p->total_flops > 0;
	char b1[32], b2[32];
	fprintf(out, "%s  %7s  %-4s  %7s  %13s  %10s  %6s  %9s%s\n", al_col(o, C_DIM), "segment", "unit",
		"layers", "first..last", "FLOPs", "share", "est. ms", al_col(o, C_RESET));
	for (uint32_t k = 0; k < p->n_segments && k < TEXT_SEGMENTS; k++) {
		const struct al_segment *g = &p->segments[k];
		char range[32];
		snprintf(range, sizeof range, "%" PRIu32 "..%" PRIu32, g->first, g->last);
		fprintf(out, "  %7" PRIu32 "  %s%-4s%s  %7" PRIu32 "  %13s  %10s  ", k,
			al_col(o, al_unit_colour(g->unit)), unit_upper(g->unit), al_col(o, C_RESET), g->n_nodes,
			range, flops ? ali_si(b1, sizeof b1, g->flops) : "-");
		if (flops)
			fprintf(out, "%5.1f%%", 100.0 * g->flops / p->total_flops);
		else
			fprintf(out, "%6s", "-");
		fputs("  ", out);
		text_ms(out, p->timed, g->est_us);
		fputc('\n', out);
	}
	if (p->n_segments > TEXT_SEGMENTS)
		fprintf(out, "  ... %" PRIu32 " more segments (--format json lists them all)\n",
			p->n_segments - TEXT_SEGMENTS);
	fprintf(out, "  switches %" PRIu32, p->switches);
	if (p->switches) {
		fputs(":", out);
		uint32_t shown = 0;
		for (uint32_t k = 0; k < p->switches && shown < 8; k++, shown++) {
			const struct al_switch *x = &p->switch_list[k];
			fprintf(out, "%s %s->%s (%" PRIu32 "->%" PRIu32 ", %.3f ms)", k ? "," : "",
				unit_upper(p->segments[x->from].unit), unit_upper(p->segments[x->to].unit),
				x->from, x->to, x->us / 1000.0);
		}
		if (p->switches > shown)
			fputs(", ...", out);
	}
	fputc('\n', out);
	text_uncertain(out, v, p, o);
	fprintf(out, "  on ANE   ");
	if (flops)
		fprintf(out, "%.1f%% of the FLOPs (%s of %s)", 100.0 * p->ane_flops / p->total_flops,
			ali_si(b1, sizeof b1, p->ane_flops), ali_si(b2, sizeof b2, p->total_flops));
	else
		fprintf(out, "%" PRIu32 " of %" PRIu32 " layers (%.1f%%; no FLOPs known, layers counted)",
			p->ane_nodes, p->n_nodes, 100.0 * p->ane_nodes / p->n_nodes);
	fputc('\n', out);
	if (p->timed)
		fprintf(out, "  estimate %.3f ms = %.3f compute + %.3f switches (roofline estimate, not a "
			     "measurement)",
			p->est_us / 1000.0, p->compute_us / 1000.0, p->switch_us / 1000.0);
	else
		fprintf(out, "  estimate %.3f ms of switches only (target %s has no roofline figures)",
			p->switch_us / 1000.0, t && t->id ? t->id : "?");
	if (p->n_uncosted)
		fprintf(out, "; %" PRIu32 " of %" PRIu32 " layers without a cost", p->n_uncosted,
			p->n_nodes);
	fputc('\n', out);
	if (!p->n_fixes) {
		fprintf(out, "  fixes    %s\n",
			p->n_segments <= 1 && p->n_nodes == p->ane_nodes ? "none needed: everything runs on the ANE"
									  : "no rewrite of the fallback layers is estimated to save time");
		text_model_fix(out, it ? it->path : NULL, s, p, o);
		return;
	}
	fputs("  cheapest fixes (rewrite the layers, or move them to the app, so they run on the ANE):\n",
	      out);
	struct index_map map;
	map_build(&map, p);
	for (uint32_t k = 0; k < p->n_fixes; k++)
		text_fix(out, p, &map, &p->fixes[k], k + 1, o);
	ali_free(map.v);
	text_model_fix(out, it ? it->path : NULL, s, p, o);
}

void ali_text_plan(FILE *out, const struct al_report_item *items, size_t n,
		  const struct al_report_opts *o)
{
	struct text_ctx c = {.out = out, .o = o, .first = true};
	ali_each_plan(items, n, o, text_one, &c);
}

/* ================================================================ JSON */

/* plan's document is written as a stream (ali_jw, report_jsonw.c), in the key
 * order the json-c tree it replaces had: at LLM scale (bench/llm_check.sh) the
 * tree of every layer took ~590 ms and 86 MB before a byte was written. Only
 * the "errors" entries (small) are still json-c objects. */

/* A number with a fixed format (as json-c's double with its own text); not
 * finite: 0. */
static void jw_fixed(struct ali_jw *w, const char *key, double v, const char *fmt)
{
	char buf[64];
	if (!isfinite(v))
		v = 0;
	snprintf(buf, sizeof buf, fmt, v);
	ali_jw_raw(w, key, buf);
}

static void jw_us(struct ali_jw *w, const char *key, double v)
{
	jw_fixed(w, key, v, "%.3f");
}

static void jw_share(struct ali_jw *w, const char *key, double a, double b)
{
	jw_fixed(w, key, b > 0 ? a / b : 0.0, "%.4f");
}

static void jw_flops(struct ali_jw *w, const char *key, double v)
{
	jw_fixed(w, key, v, "%.0f");
}

static void jw_layer_ref(struct ali_jw *w, const struct index_map *map, const struct al_node *n)
{
	ali_jw_object(w, NULL);
	ali_jw_int(w, "index", node_index(map, n));
	ali_jw_str(w, "name", n && n->name ? n->name : "");
	ali_jw_str(w, "type", n && n->type ? n->type : "");
	ali_jw_end(w);
}

/* The model-level fix and the plan of the fixed model. */
static void jw_model_fix(struct ali_jw *w, const struct al_submodel *s, const struct al_plan *p)
{
	ali_jw_object(w, "model_fix");
	ali_jw_str(w, "rule", p->fix_rule->id);
	ali_jw_str(w, "pass", "input-fixed-shape");
	ali_jw_array(w, "shape_default");
	for (uint32_t k = 0; k < s->n_inputs; k++)
		if (s->inputs[k].flex == AL_FLEX_RANGE)
			ali_jw_str(w, NULL, s->inputs[k].name ? s->inputs[k].name : "");
	ali_jw_end(w);
	ali_jw_str(w, "then_rule", p->then_rule ? p->then_rule->id : NULL);
	ali_jw_int(w, "then_segments", p->then_segments);
	ali_jw_int(w, "then_switches", p->then_switches);
	ali_jw_int(w, "then_ane_layers", p->then_ane_nodes);
	/* json-c's own double text (%.17g and its trimming), as before */
	json_object *flops = json_object_new_double(p->then_ane_flops);
	ali_jw_tree(w, "then_ane_flops", flops);
	json_object_put(flops);
	jw_us(w, "then_est_us", p->then_est_us);
	ali_jw_end(w);
}

/* "bar": one letter per layer (a string of the model's layer count, not a tree). */
static void jw_bar(struct ali_jw *w, const struct al_view *v)
{
	const struct al_plan *p = v->plan;
	char *bar = ali_malloc((size_t)p->n_nodes + 1);
	if (bar) {
		for (uint32_t k = 0; k < p->n_nodes; k++) {
			char c = unit_letter(p->unit[k]);
			bool moved = p->place[k] != AL_PLACE_VERDICT && p->place[k] != AL_PLACE_RESOLVED;
			bar[k] = p->unit[k] != AL_UNIT_ANE && moved ? (char)(c - 'A' + 'a') : c;
			if (p->unit[k] == AL_UNIT_ANE && ali_view_verdict(v, p->nodes[k])->unknown)
				bar[k] = '?'; /* ANE057 */
		}
		bar[p->n_nodes] = 0;
	}
	ali_jw_str(w, "bar", bar ? bar : "");
	ali_free(bar);
}

/* jw_plan's parts (the plan JSON of one sub-model, docs/json-schema.md): with
 * which policy, estimates and switch costs it was planned; */
static void jw_plan_policy(struct ali_jw *w, const struct al_submodel *s, const struct al_plan *p)
{
	ali_jw_str(w, "compute_units", al_compute_units_name(p->compute_units));
	ali_jw_str(w, "policy", al_policy_name(p->policy));
	ali_jw_str(w, "policy_why", p->policy_why ? p->policy_why : "");
	ali_jw_str(w, "model_rule", p->model_rule ? p->model_rule->id : NULL);
	if (p->fix_rule)
		jw_model_fix(w, s, p);
	bool flops = p->total_flops > 0;
	ali_jw_object(w, "estimates");
	ali_jw_bool(w, "timed", p->timed);
	ali_jw_str(w, "share_basis", flops ? "flops" : "layers");
	ali_jw_int(w, "uncosted_layers", p->n_uncosted);
	ali_jw_end(w);
	ali_jw_object(w, "switch_costs_us");
	for (int a = 0; a < 3; a++)
		for (int b = 0; b < 3; b++) {
			if (a == b)
				continue;
			char key[16];
			snprintf(key, sizeof key, "%s-%s", al_unit_name(a), al_unit_name(b));
			jw_us(w, key, p->switch_cost[a][b]);
		}
	ali_jw_end(w);
}

/* the segments, the uncertain layers that could change them, the switches; */
static void jw_plan_segments(struct ali_jw *w, const struct al_view *v)
{
	const struct al_plan *p = v->plan;
	bool flops = p->total_flops > 0;
	ali_jw_array(w, "segments");
	for (uint32_t k = 0; k < p->n_segments; k++) {
		const struct al_segment *g = &p->segments[k];
		ali_jw_object(w, NULL);
		ali_jw_int(w, "index", k);
		ali_jw_str(w, "unit", al_unit_name(g->unit));
		ali_jw_int(w, "first", g->first);
		ali_jw_int(w, "last", g->last);
		ali_jw_int(w, "layers", g->n_nodes);
		jw_flops(w, "flops", g->flops);
		if (flops)
			jw_share(w, "share", g->flops, p->total_flops);
		else
			jw_share(w, "share", g->n_nodes, p->n_nodes);
		jw_us(w, "est_us", g->est_us);
		ali_jw_end(w);
	}
	ali_jw_end(w);
	/* issue #30: the layers whose uncertain verdict could change the segments */
	ali_jw_array(w, "uncertain");
	for (uint32_t k = 0; k < p->n_nodes; k++) {
		const struct al_verdict *vd = ali_view_verdict(v, p->nodes[k]);
		if (vd->verdict != AL_VERDICT_UNCERTAIN)
			continue;
		char why[160], pt[16];
		snprintf(pt, sizeof pt, "%.2f", vd->p_ane);
		ali_jw_object(w, NULL);
		ali_jw_int(w, "index", p->index[k]);
		ali_jw_str(w, "name", p->nodes[k]->name ? p->nodes[k]->name : "");
		ali_jw_int(w, "segment", p->segment[k]);
		ali_jw_raw(w, "p_ane", pt);
		ali_jw_str(w, "why", ali_uncertain_text(vd, why, sizeof why));
		ali_jw_end(w);
	}
	ali_jw_end(w);

	ali_jw_array(w, "switches");
	for (uint32_t k = 0; k < p->switches; k++) {
		const struct al_switch *x = &p->switch_list[k];
		ali_jw_object(w, NULL);
		ali_jw_int(w, "from", x->from);
		ali_jw_int(w, "to", x->to);
		ali_jw_str(w, "from_unit", al_unit_name(p->segments[x->from].unit));
		ali_jw_str(w, "to_unit", al_unit_name(p->segments[x->to].unit));
		jw_us(w, "cost_us", x->us);
		ali_jw_end(w);
	}
	ali_jw_end(w);
}

/* every layer: its verdict, unit, placement and cost; */
static void jw_plan_layers(struct ali_jw *w, const struct al_view *v)
{
	const struct al_plan *p = v->plan;
	ali_jw_array(w, "layers");
	for (uint32_t k = 0; k < p->n_nodes; k++) {
		const struct al_node *n = p->nodes[k];
		ali_jw_object(w, NULL);
		ali_jw_int(w, "index", p->index[k]);
		ali_jw_str(w, "name", n->name ? n->name : "");
		ali_jw_str(w, "type", n->type ? n->type : "");
		const struct al_verdict *nv = ali_view_verdict(v, n);
		ali_jw_str(w, "verdict", nv->unknown ? "unknown" : nv->ane ? "ane" : al_unit_name(nv->unit));
		ali_jw_str(w, "unit", nv->unknown && p->unit[k] == AL_UNIT_ANE ? "unknown" : al_unit_name(p->unit[k]));
		ali_jw_str(w, "placed", al_place_name(p->place[k]));
		const struct al_rule *mr = ali_place_rule(p->place[k], p->model_rule, NULL);
		if (mr) /* the rule naming the move, as check's moved_by and `explain` */
			ali_jw_str(w, "moved_by", mr->id);
		ali_jw_int(w, "segment", p->segment[k]);
		jw_flops(w, "flops", n->cost.flops > 0 ? n->cost.flops : 0);
		ali_jw_bool(w, "cost_known", n->cost.known);
		jw_us(w, "est_us", p->node_us[k]);
		const char *weights = ali_node_weights(n); /* where the op came from, as far as the file says */
		if (weights)
			ali_jw_str(w, "weights", weights);
		ali_jw_end(w);
	}
	ali_jw_end(w);
}

/* the cheapest fixes. */
static void jw_plan_fixes(struct ali_jw *w, const struct al_plan *p)
{
	ali_jw_array(w, "fixes");
	struct index_map map;
	map_build(&map, p);
	for (uint32_t k = 0; k < p->n_fixes; k++) {
		const struct al_fix *f = &p->fixes[k];
		ali_jw_object(w, NULL);
		ali_jw_int(w, "rank", (int64_t)k + 1);
		ali_jw_str(w, "kind", fix_kind_names[f->kind]);
		ali_jw_str(w, "rule", f->rule ? f->rule->id : NULL);
		ali_jw_array(w, "layers");
		for (uint32_t i = 0; i < f->n_nodes; i++)
			jw_layer_ref(w, &map, f->nodes[i]);
		ali_jw_end(w);
		ali_jw_int(w, "segments_before", f->segments_before);
		ali_jw_int(w, "segments_after", f->segments_after);
		ali_jw_int(w, "switches_before", f->switches_before);
		ali_jw_int(w, "switches_after", f->switches_after);
		jw_us(w, "gain_us", f->gain_us);
		ali_jw_end(w);
	}
	ali_free(map.v);
	ali_jw_end(w);
}

static void jw_plan(struct ali_jw *w, const struct al_view *v)
{
	const struct al_submodel *s = v->s;
	const struct al_plan *p = v->plan;
	ali_jw_object(w, NULL);
	ali_jw_submodel_head(w, s);
	ali_jw_object(w, "target");
	ali_jw_str(w, "id", p->target && p->target->id ? p->target->id : "");
	ali_jw_str(w, "name", p->target && p->target->name ? p->target->name : "");
	ali_jw_end(w);
	ali_jw_object(w, "os");
	ali_jw_str(w, "id", p->os ? p->os->id : "");
	ali_jw_str(w, "name", p->os ? p->os->name : "");
	ali_jw_end(w);
	jw_plan_policy(w, s, p);
	jw_bar(w, v);

	bool flops = p->total_flops > 0;
	ali_jw_object(w, "totals");
	ali_jw_int(w, "layers", p->n_nodes);
	ali_jw_int(w, "ane_layers", p->ane_nodes);
	ali_jw_int(w, "segments", p->n_segments);
	ali_jw_int(w, "switches", p->switches);
	jw_flops(w, "flops", p->total_flops);
	jw_flops(w, "ane_flops", p->ane_flops);
	if (flops)
		jw_share(w, "ane_share", p->ane_flops, p->total_flops);
	else
		jw_share(w, "ane_share", p->ane_nodes, p->n_nodes);
	jw_us(w, "compute_us", p->compute_us);
	jw_us(w, "switch_us", p->switch_us);
	jw_us(w, "est_us", p->est_us);
	ali_jw_end(w);
	jw_plan_segments(w, v);
	jw_plan_layers(w, v);
	jw_plan_fixes(w, p);
	ali_jw_end(w);
}

struct json_ctx {
	struct ali_jw *w;
	json_object *errors; /* the models whose plan failed, after the ones that cannot be read */
};

static void json_one(void *vctx, const struct al_report_item *it, const struct al_view *v)
{
	struct json_ctx *c = vctx;
	const struct al_submodel *s = v->s;
	const char *error = v->error;
	if (v->plan) {
		jw_plan(c->w, v);
		return;
	}
	if (!c->errors) /* out of memory */
		return;
	json_object *e = json_object_new_object();
	json_object_object_add(e, "path", ali_json_string(s && s->path ? s->path : it->path));
	json_object_object_add(e, "status", ali_json_string("plan failed"));
	json_object *d = json_object_new_array();
	json_object *x = json_object_new_object();
	json_object_object_add(x, "severity", ali_json_string("error"));
	json_object_object_add(x, "file", NULL);
	json_object_object_add(x, "offset", NULL);
	json_object_object_add(x, "where", NULL);
	json_object_object_add(x, "node", NULL);
	json_object_object_add(x, "message", ali_json_string(error ? error : "?"));
	json_object_array_add(d, x);
	json_object_object_add(e, "diagnostics", d);
	json_object_array_add(c->errors, e);
}

static json_object *diag_json(const struct al_diag *x)
{
	static const char *const sev[] = {"note", "warning", "error"};
	json_object *o = json_object_new_object();
	json_object_object_add(o, "severity", ali_json_string(sev[x->severity]));
	json_object_object_add(o, "file", x->file ? ali_json_string(x->file) : NULL);
	json_object_object_add(o, "offset",
			       x->offset == UINT64_MAX ? NULL : json_object_new_int64((int64_t)x->offset));
	json_object_object_add(o, "where", x->where ? ali_json_string(x->where) : NULL);
	json_object_object_add(o, "node", x->node ? ali_json_string(x->node) : NULL);
	json_object_object_add(o, "message", ali_json_string(x->msg));
	return o;
}

void ali_json_plan(FILE *out, const struct al_report_item *items, size_t n,
		  const struct al_report_opts *o)
{
	struct ali_jw jw, *w = &jw;
	ali_jw_init(w, out);
	ali_jw_object(w, NULL);
	ali_jw_str(w, "anelint", ANELINT_VERSION);
	ali_jw_int(w, "schema", ANELINT_JSON_SCHEMA_VERSION);
	ali_jw_str(w, "command", "plan");
	struct json_ctx c = {w, json_object_new_array()};
	for (size_t i = 0; c.errors && i < n; i++) {
		if (items[i].model)
			continue;
		json_object *e = json_object_new_object();
		json_object_object_add(e, "path", ali_json_string(items[i].path));
		json_object_object_add(e, "status", ali_json_string(al_status_str(items[i].status)));
		json_object *d = json_object_new_array();
		for (size_t k = 0; k < al_diags_count(items[i].diags); k++)
			if (al_diags_get(items[i].diags, k)->severity == AL_SEV_ERROR)
				json_object_array_add(d, diag_json(al_diags_get(items[i].diags, k)));
		json_object_object_add(e, "diagnostics", d);
		json_object_array_add(c.errors, e);
	}
	ali_jw_array(w, "models");
	ali_each_plan(items, n, o, json_one, &c);
	ali_jw_end(w);
	ali_jw_array(w, "errors");
	for (size_t i = 0; c.errors && i < json_object_array_length(c.errors); i++)
		ali_jw_tree(w, NULL, json_object_array_get_idx(c.errors, i));
	ali_jw_end(w);
	ali_jw_end(w);
	ali_jw_finish(w);
	json_object_put(c.errors);
}
