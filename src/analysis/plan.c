/* SPDX-License-Identifier: MIT */
/* plan.c: the partition simulator (docs/partition.md). From the verdicts of a
 * checked (sub-)model it predicts how Core ML splits the work into ANE / GPU /
 * CPU segments under a named policy, following the dataflow (value names) and
 * not the list order; estimates time with a per-unit roofline plus a cost per
 * switch; and searches greedily for the fewest rewrites that merge segments.
 * Scratch memory is freed before returning; the plan lives in an arena of its
 * own (struct owned_plan), freed by al_plan_free: planning a model again and
 * again takes no more of the model's memory.
 *
 * Path through this file:
 *   al_model_plan   an owned_plan (its own arena), then plan_sub:
 *                   policy and switch costs, count_node + alloc_work + fill_node
 *                   (the items: top-level nodes with their nested graphs),
 *                   build_edges (the dataflow), evaluate (assign_units, asap /
 *                   alap, segment, switch_cost), write_plan (segments, switches,
 *                   per-node units), find_fixes (greedy: gen_cands, apply,
 *                   evaluate, undo)
 *   al_plan_free    frees the plan's arena and the plan */
#include "analysis.h"
#include "shapes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(AL_UNIT_ANE == 0 && AL_UNIT_GPU == 1 && AL_UNIT_CPU == 2,
	       "the cost tables index units ANE, GPU, CPU as 0, 1, 2");
enum { U_ANE = AL_UNIT_ANE, U_GPU = AL_UNIT_GPU, U_CPU = AL_UNIT_CPU, N_U = 3 };

#define DEFAULT_FIXES 5
#define MAX_FIXES 64
/* Node visits the fix search may spend per step (each candidate re-partitions
 * the model): every candidate of a model of a few thousand layers, bounded for a
 * hostile one. At least MIN_EVALS candidates are always tried. */
#define EVAL_BUDGET (1u << 22)
#define MIN_EVALS 32u
#define EPS_US 1e-6

/* ================================================================ policies */

/* One row per policy; provenance and discussion in docs/partition.md. */
struct policy_row {
	const char *name;
	uint8_t either;  /* where a gpu_or_cpu verdict goes */
	bool gpu_sticks; /* ANE-capable work downstream of GPU work stays on the GPU */
	bool cpu_sticks; /* work downstream of a CPU-only op stays on the CPU */
};

static const struct policy_row policies[AL_POLICY_COUNT] = {
	[AL_POLICY_AUTO] = {"auto", U_CPU, false, false},
	/* hollance, unsupported-layers.md (2020): S->U->S->U goes ANE->GPU once;
	 * ANE->CPU->ANE ping-pong does happen (the CPU switch is cheaper) */
	[AL_POLICY_NN2020] = {"nn2020", U_GPU, true, false},
	/* coreml-fallback-notes: after cumsum/fill/fill_like/range_1d every later op is
	 * put back on the CPU; fallbacks "mostly drop straight to the CPU" */
	[AL_POLICY_MLPROGRAM] = {"mlprogram", U_CPU, false, true},
	/* the lower bound: every fallback an island, then back to the ANE */
	[AL_POLICY_OPTIMISTIC] = {"optimistic", U_CPU, false, false},
};

/* Rules whose op drags what follows onto the CPU under a cpu_sticks policy:
 * the ML Program CPU-only ops, and their NeuralNetwork counterparts. */
static const char *const cpu_only_rules[] = {"ANE020", "ANE015"};

const char *al_policy_name(enum al_policy p)
{
	return (unsigned)p < AL_POLICY_COUNT ? policies[p].name : "?";
}

bool al_policy_parse(const char *name, enum al_policy *out)
{
	for (int p = 0; name && p < AL_POLICY_COUNT; p++)
		if (strcmp(policies[p].name, name) == 0) {
			*out = (enum al_policy)p;
			return true;
		}
	return false;
}

static const char *const place_names[AL_PLACE_COUNT] = {
	"verdict", "resolved", "gpu_sticks", "cpu_sticks", "owner", "model", "small_segment",
	"compute_units",
};

/* ================================================================ compute units */

static const char *const cu_names[AL_CU_COUNT] = {
	"all", "all", "cpu-and-gpu", "cpu-and-ne", "cpu-only",
};
/* the same in coremltools' and Core ML's spelling */
static const char *const cu_aliases[AL_CU_COUNT] = {
	"", "ALL", "CPU_AND_GPU,cpuAndGPU", "CPU_AND_NE,cpuAndNeuralEngine", "CPU_ONLY,cpuOnly",
};

const char *al_compute_units_name(enum al_compute_units cu)
{
	return (unsigned)cu < AL_CU_COUNT ? cu_names[cu] : "?";
}

bool al_compute_units_parse(const char *name, enum al_compute_units *out)
{
	for (int c = AL_CU_ALL; name && c < AL_CU_COUNT; c++)
		if (strcmp(cu_names[c], name) == 0 || ali_idset_in_list(cu_aliases[c], name, strlen(name))) {
			*out = (enum al_compute_units)c;
			return true;
		}
	return false;
}

const char *al_place_name(enum al_place p)
{
	return (unsigned)p < AL_PLACE_COUNT ? place_names[p] : "?";
}

/* Switch costs in µs (catalog C3, C4; docs/partition.md "Switch costs"):
 * ANE<->CPU 720 (0.72 ms per region boundary, measured on M4); ANE<->GPU 1750
 * (dearer than the CPU switch per hollance, no measurement: the top of the
 * 0.6-1.75 ms range measured per fallback op); GPU<->CPU 720 (a guess). */
static const double default_switch[N_U][N_U] = {
	[U_ANE] = {0, 1750, 720},
	[U_GPU] = {1750, 0, 720},
	[U_CPU] = {720, 720, 0},
};

double al_switch_default_us(enum al_unit from, enum al_unit to)
{
	return (unsigned)from < N_U && (unsigned)to < N_U ? default_switch[from][to] : 0;
}

/* ================================================================ the working graph */

/* An item is what gets placed: a top-level non-const node together with the
 * nodes of its nested graphs (a loop body runs where the loop runs). */
struct item {
	uint32_t node0, n_nodes; /* w->nodes[node0 .. node0 + n_nodes) */
	uint32_t graph;          /* top-level graph (ML Program function) it is in */
	uint32_t pred0, pred1;   /* its producers: w->preds[pred0 .. pred1) */
	uint32_t succ0, succ1;   /* its consumers: w->succs[succ0 .. succ1) */
	uint8_t req;             /* requested unit: ANE, GPU, CPU or GPU_OR_CPU */
	bool cpu_only;           /* fires a CPU-only rule */
	const struct al_rule *rule; /* the rule moving it off the ANE, or NULL */
	double flops;
	double t[N_U];           /* estimated µs on each unit (the ANE's without activations) */
	double out_bytes;        /* activations it writes (its top node's outputs, fp16) */
	double in_bytes;         /* model inputs it reads (fp16) */
	bool model_out;          /* writes a model output */
	struct al_work work;     /* for the work floor (work_floor.c) */
};

struct eval {
	uint32_t n_segments, n_switches;
	double compute_us, switch_us;
};

struct work {
	const struct al_submodel *s;
	const struct policy_row *pol;
	const struct al_target *target;
	double sw[N_U][N_U];
	double overhead[N_U];         /* per segment, from the target */
	uint32_t n_nodes, n_items, n_preds, n_outputs;
	uint64_t inputs_seen, outputs_seen; /* counting pass: bounds n_preds, n_outputs */
	const struct al_node **nodes; /* non-const, model order */
	uint32_t *index;              /* per node: model-order index */
	struct item *items;
	uint32_t *preds, *succs;
	bool forced;                  /* a model-level rule moves everything */
	bool floor;                   /* apply the work floor (ANE072) */
	const struct al_release *os;  /* for the work floor */
	enum al_compute_units cu;     /* never AL_CU_DEFAULT */
	bool gpu_fallback;            /* fallbacks the ANE cannot run go to the GPU */
	bool tiny;                    /* ANE071 with gpu_fallback: every ANE region is too small */
	bool tiny_to_gpu;             /* ANE071 up to iOS 16 with the GPU allowed: that work to the GPU */
	uint8_t forced_unit;
	const struct al_rule *model_rule;
	/* per item, rewritten by every evaluation */
	uint8_t *req, *fin, *place, *gt, *ct;
	uint32_t *uf;             /* the work floor: ANE regions (union-find) */
	struct feat_slot *feat;   /* the sub-model's input and output names */
	size_t n_feat;
	struct ali_hashtab feat_index; /* items index feat */
	struct al_work *region;   /* their work, at the root */
	uint32_t *stage, *stage2, *seg, *seg2, *keymap;
	uint64_t *pairs, *pairs2; /* switches of the chosen layering / of the other one */
	/* the walk */
	uint32_t row, cur_graph;
	const struct al_graph *last_top;
};

static int conf_rank(char c)
{
	return c == 'A' ? 3 : c == 'M' ? 2 : c == 'G' ? 1 : 0;
}

/* The rule that decided a fallback verdict: highest confidence, first on ties
 * (how rules.c picks the unit). */
static const struct al_rule *primary_rule(const struct al_verdict *v)
{
	const struct al_rule *best = NULL;
	for (uint32_t r = 0; r < v->n_rules; r++) {
		const struct al_rule *x = v->rules[r];
		if (x->kind == AL_RULE_WARN)
			continue;
		if (!best || conf_rank(x->confidence) > conf_rank(best->confidence))
			best = x;
	}
	return best;
}

static uint8_t requested(const struct al_verdict *v)
{
	if (v->ane)
		return U_ANE;
	if (v->unit == AL_UNIT_GPU || v->unit == AL_UNIT_CPU || v->unit == AL_UNIT_GPU_OR_CPU)
		return (uint8_t)v->unit;
	return AL_UNIT_GPU_OR_CPU; /* off the ANE, unit not named */
}

static bool fires_cpu_only(const struct al_verdict *v)
{
	for (uint32_t r = 0; r < v->n_rules; r++)
		for (size_t k = 0; k < sizeof cpu_only_rules / sizeof cpu_only_rules[0]; k++)
			if (v->rules[r]->id && strcmp(v->rules[r]->id, cpu_only_rules[k]) == 0)
				return true;
	return false;
}

/* Cost of one op (docs/cost-model.md "The cost model"), in µs: the roofline
 * max(flops / peak, bytes / bandwidth) plus the unit's fixed cost per op. On
 * the ANE the bytes are the op's weights only: inside one fused program the
 * activations stay on chip, and what enters or leaves a segment is charged
 * once per segment (boundary_us); the ANE pays ane_layer_us a layer. On the
 * GPU each op is a kernel that reads and writes its activations and pays
 * gpu_kernel_us. The target's overhead is paid once per segment (one
 * dispatched program). */
static double op_flops(const struct al_cost *c)
{
	return c->flops > 0 && isfinite(c->flops) ? c->flops : 0;
}

static double nonneg(double v)
{
	return v > 0 && isfinite(v) ? v : 0;
}

static double op_us(const struct al_cost *c, double tflops, double gbs, bool activations, double fixed_us)
{
	double flops = op_flops(c);
	double bytes = (double)c->param_bytes + (activations ? (double)c->act_bytes : 0);
	double tc = tflops > 0 ? flops / (tflops * 1e6) : 0;
	double tm = gbs > 0 ? bytes / (gbs * 1e3) : 0;
	return (tc > tm ? tc : tm) + nonneg(fixed_us);
}

static void node_times(const struct al_target *t, const struct al_node *n, double out[N_U])
{
	out[U_ANE] = op_us(&n->cost, t->ane_tflops, t->ane_gbs, false, t->ane_layer_us);
	out[U_GPU] = op_us(&n->cost, t->gpu_tflops, t->gpu_gbs, true, t->gpu_kernel_us);
	out[U_CPU] = op_us(&n->cost, t->cpu_tflops, t->cpu_gbs, true, 0);
}

/* Bytes of a tensor of shape s at fp16 (0 when its size is not known). */
static double shape_bytes(const struct al_shape *s)
{
	int64_t e = s ? shp_numel(s) : -1;
	return e > 0 ? 2.0 * (double)e : 0;
}

/* The sub-model's input and output names, found through the one hash table:
 * which values cross the model's edge. */
enum { FEAT_IN = 1, FEAT_OUT = 2 };

struct feat_slot {
	const char *name;
	uint8_t kind; /* FEAT_IN | FEAT_OUT */
};

static bool feat_eq(size_t item, const void *key, void *ctx)
{
	const struct feat_slot *feat = ctx;
	return strcmp(feat[item].name, key) == 0;
}

static uint8_t feat_kind(const struct work *w, const char *name)
{
	if (!name || !w->n_feat)
		return 0;
	size_t i = ali_hashtab_find(&w->feat_index, ali_hash_str(name), feat_eq, name, w->feat);
	return i == SIZE_MAX ? 0 : w->feat[i].kind;
}

static enum al_status feat_build(struct work *w)
{
	size_t n = (size_t)w->s->n_inputs + w->s->n_outputs;
	w->feat = ali_calloc(n ? n : 1, sizeof *w->feat);
	if (!w->feat || !ali_hashtab_reserve(&w->feat_index, n))
		return AL_E_NOMEM;
	for (uint32_t k = 0; k < 2; k++) {
		const struct al_feature *f = k ? w->s->outputs : w->s->inputs;
		uint32_t m = k ? w->s->n_outputs : w->s->n_inputs;
		for (uint32_t i = 0; f && i < m; i++) {
			if (!f[i].name)
				continue;
			uint64_t h = ali_hash_str(f[i].name);
			size_t at = ali_hashtab_find(&w->feat_index, h, feat_eq, f[i].name, w->feat);
			if (at == SIZE_MAX) {
				if (w->n_feat == n || !ali_hashtab_add(&w->feat_index, h, w->n_feat))
					continue; /* not reached: room for every name was reserved */
				at = w->n_feat++;
				w->feat[at].name = f[i].name;
			}
			w->feat[at].kind |= k ? FEAT_OUT : FEAT_IN;
		}
	}
	return AL_OK;
}

static bool target_timed(const struct al_target *t)
{
	return (t->ane_tflops > 0 || t->ane_gbs > 0) && (t->gpu_tflops > 0 || t->gpu_gbs > 0) &&
	       (t->cpu_tflops > 0 || t->cpu_gbs > 0);
}

/* ---- pass 1: count; pass 2: fill nodes and items */

static void count_node(void *ctx, const struct al_node *n)
{
	struct work *w = ctx;
	if (ali_node_is_const(n))
		return;
	w->n_nodes++;
	w->outputs_seen += n->n_outputs;
	w->inputs_seen += n->n_inputs;
	if (!n->owner || n->owner->depth == 0 || w->n_items == 0)
		w->n_items++;
}

static void fill_node(void *ctx, const struct al_node *n)
{
	struct work *w = ctx;
	uint32_t row = w->row++;
	if (ali_node_is_const(n))
		return;
	uint32_t k = w->n_nodes++;
	w->nodes[k] = n;
	w->index[k] = row;
	bool top = !n->owner || n->owner->depth == 0 || w->n_items == 0;
	if (top) {
		if (n->owner != w->last_top && w->n_items) /* another function's graph */
			w->cur_graph++;
		w->last_top = n->owner;
		struct item *it = &w->items[w->n_items++];
		it->node0 = k;
		it->graph = w->cur_graph;
		it->work.known = true;
	}
	struct item *it = &w->items[w->n_items - 1];
	it->n_nodes++;
	uint8_t r = requested(&n->verdict);
	if (it->req == U_ANE && r != U_ANE) { /* the owner's verdict first, then its body's */
		it->req = r;
		it->rule = primary_rule(&n->verdict);
	}
	it->cpu_only |= !n->verdict.ane && fires_cpu_only(&n->verdict);
	double t[N_U];
	node_times(w->target, n, t);
	for (int u = 0; u < N_U; u++)
		it->t[u] += t[u];
	it->flops += op_flops(&n->cost);
	/* activations across a segment's edge: what the item writes (its top node's
	 * tensors), and the model inputs any of its nodes read */
	for (uint32_t o = 0; top && o < n->n_outputs && n->out_shapes; o++) {
		const struct al_ttype *ty = n->out_types ? &n->out_types[o] : NULL;
		if (!ty || ty->kind == 0 || ty->kind == 4) /* a tensor, not a list or tuple */
			it->out_bytes += shape_bytes(&n->out_shapes[o]);
		it->model_out |= (feat_kind(w, n->outputs[o]) & FEAT_OUT) != 0;
	}
	for (uint32_t a = 0; a < n->n_inputs; a++)
		if (feat_kind(w, n->inputs[a]) & FEAT_IN)
			it->in_bytes += shape_bytes(ali_node_in_shape(n, a));
	ali_work_add(&it->work, &n->cost);
	it->work.deep |= ali_work_deep_decode(n, w->os);
}

/* ---- producers by value name: (graph, name) found through the one hash table */

struct slot {
	const char *name;
	uint32_t graph, item;
};

struct producers {
	struct slot *v; /* one per (graph, name), in the order first produced */
	size_t n, cap;
	struct ali_hashtab index; /* items index v */
};

/* A name within one graph: the shared hash, the graph's number mixed in. */
static uint64_t name_hash(const char *s, uint32_t graph)
{
	return ali_hash_str(s) ^ (graph * UINT64_C(0x9e3779b97f4a7c15));
}

struct slot_key {
	const char *name;
	uint32_t graph;
};

static bool slot_eq(size_t item, const void *key, void *ctx)
{
	const struct producers *p = ctx;
	const struct slot_key *k = key;
	return p->v[item].graph == k->graph && strcmp(p->v[item].name, k->name) == 0;
}

/* The producer entry of name in graph; with add, made (item UINT32_MAX) when
 * absent. NULL when absent (and past the room reserved, which every name fits). */
static struct slot *slot_find(struct producers *p, const char *name, uint32_t graph, bool add)
{
	struct slot_key k = {name, graph};
	uint64_t h = name_hash(name, graph);
	size_t i = p->n ? ali_hashtab_find(&p->index, h, slot_eq, &k, p) : SIZE_MAX;
	if (i != SIZE_MAX)
		return &p->v[i];
	if (!add || p->n == p->cap || !ali_hashtab_add(&p->index, h, p->n))
		return NULL;
	p->v[p->n] = (struct slot){name, graph, UINT32_MAX};
	return &p->v[p->n++];
}

/* Edges item -> item from value names: an input resolves to the latest earlier
 * producer of that name in the same top-level graph (NeuralNetwork blobs may be
 * rewritten in place; ML Program names are SSA). Inputs and outputs of nested
 * nodes count as their item's. Constants and model inputs make no edge. */
static enum al_status build_edges(struct work *w)
{
	struct producers tab = {.cap = w->n_outputs};
	tab.v = ali_calloc(tab.cap ? tab.cap : 1, sizeof *tab.v);
	uint32_t *stamp = ali_malloc(((size_t)w->n_items + 1) * sizeof *stamp);
	uint32_t *n_succ = ali_calloc((size_t)w->n_items + 1, sizeof *n_succ);
	if (!tab.v || !stamp || !n_succ || !ali_hashtab_reserve(&tab.index, tab.cap)) {
		ali_free(tab.v);
		ali_hashtab_free(&tab.index);
		ali_free(stamp);
		ali_free(n_succ);
		return AL_E_NOMEM;
	}
	for (uint32_t i = 0; i < w->n_items; i++)
		stamp[i] = UINT32_MAX;
	uint32_t np = 0;
	for (uint32_t i = 0; i < w->n_items; i++) {
		struct item *it = &w->items[i];
		it->pred0 = np;
		for (uint32_t k = it->node0; k < it->node0 + it->n_nodes; k++) {
			const struct al_node *n = w->nodes[k];
			for (uint32_t a = 0; a < n->n_inputs; a++) {
				if (!n->inputs[a])
					continue;
				struct slot *s = slot_find(&tab, n->inputs[a], it->graph, false);
				if (!s || s->item == i || stamp[s->item] == i)
					continue;
				stamp[s->item] = i;
				w->preds[np++] = s->item;
				n_succ[s->item]++;
			}
		}
		it->pred1 = np;
		for (uint32_t k = it->node0; k < it->node0 + it->n_nodes; k++) {
			const struct al_node *n = w->nodes[k];
			for (uint32_t o = 0; o < n->n_outputs; o++) {
				if (!n->outputs[o])
					continue;
				struct slot *s = slot_find(&tab, n->outputs[o], it->graph, true);
				if (s)
					s->item = i;
			}
		}
	}
	w->n_preds = np;
	/* consumers, for the as-late-as-possible layering */
	uint32_t acc = 0;
	for (uint32_t i = 0; i < w->n_items; i++) {
		w->items[i].succ0 = w->items[i].succ1 = acc;
		acc += n_succ[i];
	}
	for (uint32_t i = 0; i < w->n_items; i++)
		for (uint32_t k = w->items[i].pred0; k < w->items[i].pred1; k++) {
			struct item *p = &w->items[w->preds[k]];
			w->succs[p->succ1++] = i;
		}
	ali_free(tab.v);
	ali_hashtab_free(&tab.index);
	ali_free(stamp);
	ali_free(n_succ);
	return AL_OK;
}

/* ================================================================ one evaluation */

static void decide(const struct policy_row *p, uint8_t req, bool gt, bool ct, bool gpu_fb,
		   bool cpu_only, uint8_t *u, uint8_t *pl)
{
	if (gpu_fb && req == AL_UNIT_GPU_OR_CPU && !cpu_only && !ct) {
		*u = U_GPU, *pl = AL_PLACE_RESOLVED;
		return;
	}
	switch (req) {
	case U_CPU:
		*u = U_CPU, *pl = AL_PLACE_VERDICT;
		return;
	case U_GPU:
		if (ct)
			*u = U_CPU, *pl = AL_PLACE_CPU_STICKS;
		else
			*u = U_GPU, *pl = AL_PLACE_VERDICT;
		return;
	case AL_UNIT_GPU_OR_CPU:
		if (ct && p->either != U_CPU)
			*u = U_CPU, *pl = AL_PLACE_CPU_STICKS;
		else
			*u = p->either, *pl = AL_PLACE_RESOLVED;
		return;
	default:
		if (ct)
			*u = U_CPU, *pl = AL_PLACE_CPU_STICKS;
		else if (gt)
			*u = U_GPU, *pl = AL_PLACE_GPU_STICKS;
		else
			*u = U_ANE, *pl = AL_PLACE_VERDICT;
	}
}

static uint32_t uf_root(uint32_t *uf, uint32_t i)
{
	while (uf[i] != i) {
		uf[i] = uf[uf[i]];
		i = uf[i];
	}
	return i;
}

/* Whether the work floor moved item i off the ANE (ANE072, or ANE071 when tiny). */
static bool moved_small(const struct work *w, uint32_t i)
{
	return w->fin[i] == U_CPU && (w->place[i] == AL_PLACE_SMALL || (w->tiny && w->place[i] == AL_PLACE_MODEL));
}

/* The work floor (ANE072, docs/partition.md "Too little work"): the ANE
 * regions (items on the ANE joined by dataflow edges) whose work is below the
 * floor go to the CPU. Glue squeezed between CPU work is such a region too. */
static void work_floor(struct work *w)
{
	for (uint32_t i = 0; i < w->n_items; i++) {
		w->uf[i] = i;
		w->region[i] = (struct al_work){.known = true};
	}
	for (uint32_t i = 0; i < w->n_items; i++) {
		if (w->fin[i] != U_ANE)
			continue;
		for (uint32_t k = w->items[i].pred0; k < w->items[i].pred1; k++) {
			uint32_t q = w->preds[k];
			if (w->fin[q] != U_ANE)
				continue;
			uint32_t a = uf_root(w->uf, i), b = uf_root(w->uf, q);
			if (a != b)
				w->uf[a > b ? a : b] = a < b ? a : b;
		}
	}
	for (uint32_t i = 0; i < w->n_items; i++) {
		if (w->fin[i] != U_ANE)
			continue;
		struct al_work *r = &w->region[uf_root(w->uf, i)];
		const struct al_work *x = &w->items[i].work;
		r->flops += x->flops;
		r->weight_bytes += x->weight_bytes;
		r->act_bytes += x->act_bytes;
		r->ops += x->ops;
		r->known = r->known && x->known;
		r->deep = r->deep || x->deep;
	}
	for (uint32_t i = 0; i < w->n_items; i++)
		if (w->fin[i] == U_ANE && (w->tiny || ali_work_too_little(&w->region[uf_root(w->uf, i)], w->os))) {
			w->fin[i] = U_CPU;
			w->place[i] = w->tiny ? AL_PLACE_MODEL : AL_PLACE_SMALL;
		}
	if (w->tiny_to_gpu) { /* up to iOS 16 (ct1761), see al_plan's ANE071 */
		for (uint32_t i = 0; i < w->n_items; i++)
			if (moved_small(w, i))
				w->fin[i] = U_GPU;
		return;
	}
	if (!w->gpu_fallback)
		return;
	/* With the GPU allowed and already running part of the sub-model, the work
	 * too small for the ANE goes to the GPU too, not the CPU (R6: glue goes with
	 * its neighbours; CoreMLInspect: the mul after a GPU gather, "G|CN", primary
	 * GPU; Anemll: the int16 casts, greater_equal and select beside a GPU gather) */
	bool gpu_used = false;
	for (uint32_t i = 0; i < w->n_items && !gpu_used; i++)
		gpu_used = w->fin[i] == U_GPU;
	for (uint32_t i = 0; gpu_used && i < w->n_items; i++)
		if (moved_small(w, i))
			w->fin[i] = U_GPU;
}

/* What the compute units exclude (docs/partition.md "Compute units"): without
 * the GPU, GPU work goes to the CPU; without the Neural Engine, ANE work goes
 * to the GPU (or the CPU when the GPU is excluded too). */
static void exclude_units(struct work *w)
{
	bool no_gpu = w->cu == AL_CU_CPU_AND_NE || w->cu == AL_CU_CPU_ONLY;
	bool no_ane = w->cu == AL_CU_CPU_AND_GPU || w->cu == AL_CU_CPU_ONLY;
	for (uint32_t i = 0; i < w->n_items; i++) {
		uint8_t u = w->fin[i];
		if ((u == U_GPU && no_gpu) || (u == U_ANE && no_ane)) {
			w->fin[i] = u == U_ANE && !no_gpu ? U_GPU : U_CPU;
			w->place[i] = AL_PLACE_UNITS;
		}
	}
}

/* Units after the policy, in dataflow order (producers come first). gt / ct:
 * the item is downstream of GPU work / of a CPU-only op. */
static void assign_units(struct work *w)
{
	const struct policy_row *p = w->pol;
	for (uint32_t i = 0; i < w->n_items; i++) {
		const struct item *it = &w->items[i];
		bool gt = false, ct = false;
		for (uint32_t k = it->pred0; k < it->pred1; k++) {
			uint32_t q = w->preds[k];
			gt |= w->gt[q] || w->fin[q] == U_GPU;
			ct |= w->ct[q] || (w->items[q].cpu_only && w->req[q] != U_ANE && w->fin[q] == U_CPU);
		}
		gt = gt && p->gpu_sticks && !w->forced;
		ct = ct && p->cpu_sticks && !w->forced;
		w->gt[i] = gt;
		w->ct[i] = ct;
		if (w->forced) {
			w->fin[i] = w->forced_unit;
			w->place[i] = AL_PLACE_MODEL;
		} else {
			decide(p, w->req[i], gt, ct, w->gpu_fallback, w->items[i].cpu_only, &w->fin[i],
			       &w->place[i]);
		}
	}
	if (!w->forced && (w->floor || w->tiny) && w->cu != AL_CU_CPU_ONLY) /* cpu-only: the units decide */
		work_floor(w);
	if (w->cu != AL_CU_ALL)
		exclude_units(w);
}

/* Layering: a segment is the items of one unit on one stage of one graph, where
 * the stage counts unit changes along the dataflow. Every edge between
 * segments then goes to a later stage, so segments can run one after the other.
 * ASAP puts each item on its earliest stage, ALAP on its latest; the plan takes
 * whichever gives fewer segments. */
static void asap(struct work *w, uint32_t *st)
{
	for (uint32_t i = 0; i < w->n_items; i++) {
		uint32_t s = 0;
		for (uint32_t k = w->items[i].pred0; k < w->items[i].pred1; k++) {
			uint32_t q = w->preds[k];
			uint32_t v = st[q] + (w->fin[q] != w->fin[i]);
			if (v > s)
				s = v;
		}
		st[i] = s;
	}
}

static void alap(struct work *w, const uint32_t *early, uint32_t *st)
{
	uint32_t end = w->n_items;
	while (end > 0) {
		uint32_t g = w->items[end - 1].graph, begin = end;
		while (begin > 0 && w->items[begin - 1].graph == g)
			begin--;
		uint32_t last = 0;
		for (uint32_t i = begin; i < end; i++)
			if (early[i] > last)
				last = early[i];
		for (uint32_t i = end; i-- > begin;) {
			uint32_t s = last;
			for (uint32_t k = w->items[i].succ0; k < w->items[i].succ1; k++) {
				uint32_t c = w->succs[k];
				uint32_t d = w->fin[c] != w->fin[i];
				uint32_t v = st[c] >= d ? st[c] - d : 0;
				if (v < s)
					s = v;
			}
			st[i] = s;
		}
		end = begin;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Segment ids (first appearance order) for a layering, and the switches:
 * distinct (segment, segment) pairs joined by an edge that changes unit,
 * left sorted and unique in pairs[0 .. n_switches). */
static void segment(struct work *w, const uint32_t *st, uint32_t *seg, uint64_t *pairs,
		    struct eval *e)
{
	uint32_t n = 0, g0 = 0;
	for (uint32_t i = 0; i <= w->n_items; i++) {
		if (i == w->n_items || (i && w->items[i].graph != w->items[i - 1].graph)) {
			for (uint32_t k = g0; k < i; k++)
				w->keymap[(size_t)st[k] * N_U + w->fin[k]] = UINT32_MAX;
			g0 = i;
			if (i == w->n_items)
				break;
		}
		uint32_t *slot = &w->keymap[(size_t)st[i] * N_U + w->fin[i]];
		if (*slot == UINT32_MAX)
			*slot = n++;
		seg[i] = *slot;
	}
	uint32_t np = 0;
	for (uint32_t i = 0; i < w->n_items; i++)
		for (uint32_t k = w->items[i].pred0; k < w->items[i].pred1; k++) {
			uint32_t q = w->preds[k];
			if (w->fin[q] != w->fin[i])
				pairs[np++] = (uint64_t)seg[q] << 32 | seg[i];
		}
	qsort(pairs, np, sizeof *pairs, cmp_u64);
	uint32_t u = 0;
	for (uint32_t k = 0; k < np; k++)
		if (u == 0 || pairs[k] != pairs[u - 1])
			pairs[u++] = pairs[k];
	e->n_segments = n;
	e->n_switches = u;
}

/* Cost of the switches in `pairs`; `units` (n_items slots) is scratch. */
static double switch_cost(struct work *w, const uint32_t *seg, const uint64_t *pairs,
			  uint32_t n_switches, uint8_t *units)
{
	for (uint32_t i = 0; i < w->n_items; i++)
		units[seg[i]] = w->fin[i];
	double us = 0;
	for (uint32_t k = 0; k < n_switches; k++)
		us += w->sw[units[pairs[k] >> 32]][units[(uint32_t)pairs[k]]];
	return us;
}

static bool better(const struct eval *a, const struct eval *b)
{
	if (a->n_segments != b->n_segments)
		return a->n_segments < b->n_segments;
	if (a->n_switches != b->n_switches)
		return a->n_switches < b->n_switches;
	return a->switch_us < b->switch_us - EPS_US;
}

/* The activations item i moves between DRAM and the ANE when it runs there,
 * in µs at the ANE's bandwidth: the model inputs it reads, the outputs of
 * producers in other segments it reads, and its own outputs once when a
 * consumer is in another segment or one is a model output. Each reading item
 * pays for what it reads (a value two items of a segment read counts twice). */
static double boundary_us(const struct work *w, uint32_t i, const uint32_t *seg)
{
	double gbs = w->target->ane_gbs;
	if (w->fin[i] != U_ANE || !(gbs > 0))
		return 0;
	const struct item *it = &w->items[i];
	double bytes = it->in_bytes;
	for (uint32_t k = it->pred0; k < it->pred1; k++)
		if (seg[w->preds[k]] != seg[i])
			bytes += w->items[w->preds[k]].out_bytes;
	bool leaves = it->model_out;
	for (uint32_t k = it->succ0; k < it->succ1 && !leaves; k++)
		leaves = seg[w->succs[k]] != seg[i];
	if (leaves)
		bytes += it->out_bytes;
	return bytes / (gbs * 1e3);
}

/* Partition under the current w->req: units, segments (w->seg, w->stage),
 * switches (w->pairs), and the estimate. Scratch `units` has n_items slots. */
static void evaluate(struct work *w, struct eval *out, uint8_t *units)
{
	assign_units(w);
	struct eval a = {0}, b = {0};
	asap(w, w->stage);
	segment(w, w->stage, w->seg, w->pairs, &a);
	a.switch_us = switch_cost(w, w->seg, w->pairs, a.n_switches, units);
	alap(w, w->stage, w->stage2);
	segment(w, w->stage2, w->seg2, w->pairs2, &b);
	b.switch_us = switch_cost(w, w->seg2, w->pairs2, b.n_switches, units);
	if (better(&b, &a)) { /* keep the chosen layering in stage, seg, pairs */
		uint32_t *t = w->stage;
		w->stage = w->stage2;
		w->stage2 = t;
		t = w->seg;
		w->seg = w->seg2;
		w->seg2 = t;
		uint64_t *q = w->pairs;
		w->pairs = w->pairs2;
		w->pairs2 = q;
		a = b;
	}
	a.compute_us = 0;
	for (uint32_t i = 0; i < w->n_items; i++) {
		a.compute_us += w->items[i].t[w->fin[i]] + boundary_us(w, i, w->seg);
		units[w->seg[i]] = w->fin[i];
	}
	for (uint32_t k = 0; k < a.n_segments; k++)
		a.compute_us += w->overhead[units[k]];
	*out = a;
}

static double total(const struct eval *e)
{
	return e->compute_us + e->switch_us;
}

/* ================================================================ the plan */

struct seg_order {
	uint32_t graph, stage, first, id;
};

static int cmp_seg(const void *a, const void *b)
{
	const struct seg_order *x = a, *y = b;
	if (x->graph != y->graph)
		return x->graph < y->graph ? -1 : 1;
	if (x->stage != y->stage)
		return x->stage < y->stage ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* Fill the plan's segments, per-node arrays and switches from the last evaluation. */
static enum al_status write_plan(struct work *w, struct al_plan *p, const struct eval *e,
				 struct al_arena *arena, uint8_t *units)
{
	uint32_t ns = e->n_segments;
	p->segments = ali_arena_array(arena, ns ? ns : 1, sizeof *p->segments);
	p->switch_list = ali_arena_array(arena, e->n_switches ? e->n_switches : 1, sizeof *p->switch_list);
	struct seg_order *ord = ali_calloc(ns ? ns : 1, sizeof *ord);
	uint32_t *remap = ali_malloc((ns ? ns : 1) * sizeof *remap);
	if (!p->segments || !p->switch_list || !ord || !remap) {
		ali_free(ord);
		ali_free(remap);
		return AL_E_NOMEM;
	}
	for (uint32_t s = 0; s < ns; s++)
		ord[s].first = UINT32_MAX, ord[s].id = s;
	for (uint32_t i = 0; i < w->n_items; i++) {
		struct seg_order *o = &ord[w->seg[i]];
		o->graph = w->items[i].graph;
		o->stage = w->stage[i];
		uint32_t idx = w->index[w->items[i].node0];
		if (idx < o->first)
			o->first = idx;
	}
	qsort(ord, ns, sizeof *ord, cmp_seg);
	for (uint32_t s = 0; s < ns; s++)
		remap[ord[s].id] = s;
	for (uint32_t s = 0; s < ns; s++)
		p->segments[s].first = UINT32_MAX;
	for (uint32_t i = 0; i < w->n_items; i++) {
		const struct item *it = &w->items[i];
		uint32_t s = remap[w->seg[i]];
		struct al_segment *sg = &p->segments[s];
		sg->unit = (enum al_unit)w->fin[i];
		sg->n_nodes += it->n_nodes;
		sg->flops += it->flops;
		double edge_us = boundary_us(w, i, w->seg); /* on the item's first node */
		sg->est_us += it->t[w->fin[i]] + edge_us;
		for (uint32_t k = it->node0; k < it->node0 + it->n_nodes; k++) {
			uint32_t idx = w->index[k];
			if (idx < sg->first)
				sg->first = idx;
			if (idx > sg->last)
				sg->last = idx;
			p->unit[k] = (enum al_unit)w->fin[i];
			p->segment[k] = s;
			p->place[k] = k == it->node0 || w->forced || w->place[i] == AL_PLACE_MODEL ||
					      w->place[i] == AL_PLACE_UNITS
					  ? (enum al_place)w->place[i]
					  : AL_PLACE_OWNER;
			double t[N_U];
			node_times(w->target, w->nodes[k], t);
			p->node_us[k] = t[w->fin[i]] + (k == it->node0 ? edge_us : 0);
			if (w->fin[i] == U_ANE && !w->nodes[k]->verdict.unknown) /* ANE057: not counted */
				p->ane_nodes++;
		}
		p->total_flops += it->flops;
		if (w->fin[i] == U_ANE)
			p->ane_flops += it->flops;
	}
	for (uint32_t s = 0; s < ns; s++) {
		units[s] = (uint8_t)p->segments[s].unit;
		p->segments[s].est_us += w->overhead[units[s]];
	}
	for (uint32_t k = 0; k < e->n_switches; k++) {
		uint32_t a = remap[(uint32_t)(w->pairs[k] >> 32)], b = remap[(uint32_t)w->pairs[k]];
		p->switch_list[k].from = a;
		p->switch_list[k].to = b;
		p->switch_list[k].us = w->sw[units[a]][units[b]];
	}
	/* in segment order */
	for (uint32_t k = 1; k < e->n_switches; k++) {
		struct al_switch x = p->switch_list[k];
		uint32_t j = k;
		while (j > 0 && (p->switch_list[j - 1].from > x.from ||
				 (p->switch_list[j - 1].from == x.from && p->switch_list[j - 1].to > x.to))) {
			p->switch_list[j] = p->switch_list[j - 1];
			j--;
		}
		p->switch_list[j] = x;
	}
	p->n_segments = ns;
	p->switches = e->n_switches;
	p->compute_us = e->compute_us;
	p->switch_us = e->switch_us;
	p->est_us = total(e);
	ali_free(ord);
	ali_free(remap);
	return AL_OK;
}

/* ================================================================ cheapest fixes */

struct cand {
	enum al_fix_kind kind;
	uint32_t first, n; /* items w->pool[first .. first + n) */
	const struct al_rule *rule;
};

struct search {
	uint32_t *pool, n_pool;
	struct cand *cands;
	uint32_t n_cands;
	uint8_t *saved;
	uint32_t *by_seg, *seg_start; /* items bucketed by segment */
	const struct al_rule **rules; /* distinct fallback rules */
	uint32_t *rule_count;
};

static void add_cand(struct search *s, enum al_fix_kind kind, const struct al_rule *rule,
		     const uint32_t *items, uint32_t n)
{
	struct cand *c = &s->cands[s->n_cands++];
	c->kind = kind;
	c->rule = rule;
	c->first = s->n_pool;
	c->n = n;
	if (n)
		memcpy(s->pool + s->n_pool, items, (size_t)n * sizeof *items);
	s->n_pool += n;
}

/* Candidates under the current state: the model-level rule; every rule moving
 * two or more items; every segment with two or more fallback items (unless one
 * rule covers exactly those); every fallback item on its own. */
static void gen_cands(struct work *w, struct search *s, uint32_t n_segments)
{
	s->n_cands = 0;
	s->n_pool = 0;
	if (w->forced) {
		add_cand(s, AL_FIX_MODEL, w->model_rule, NULL, 0);
		return;
	}
	uint32_t n_rules = 0;
	for (uint32_t i = 0; i < w->n_items; i++) {
		const struct al_rule *r = w->items[i].rule;
		if (w->req[i] == U_ANE || !r)
			continue;
		uint32_t k = 0;
		while (k < n_rules && s->rules[k] != r)
			k++;
		if (k == n_rules) {
			s->rules[n_rules] = r;
			s->rule_count[n_rules++] = 0;
		}
		s->rule_count[k]++;
	}
	for (uint32_t k = 0; k < n_rules; k++) {
		if (s->rule_count[k] < 2)
			continue;
		uint32_t first = s->n_pool, n = 0;
		for (uint32_t i = 0; i < w->n_items; i++)
			if (w->req[i] != U_ANE && w->items[i].rule == s->rules[k])
				s->pool[first + n++] = i;
		add_cand(s, AL_FIX_RULE, s->rules[k], s->pool + first, n);
	}
	/* bucket fallback items by segment (counting sort; items stay in order) */
	for (uint32_t g = 0; g <= n_segments; g++)
		s->seg_start[g] = 0;
	for (uint32_t i = 0; i < w->n_items; i++)
		if (w->req[i] != U_ANE)
			s->seg_start[w->seg[i] + 1]++;
	for (uint32_t g = 0; g < n_segments; g++)
		s->seg_start[g + 1] += s->seg_start[g];
	for (uint32_t i = 0; i < w->n_items; i++)
		if (w->req[i] != U_ANE)
			s->by_seg[s->seg_start[w->seg[i]]++] = i;
	for (uint32_t g = n_segments; g > 0; g--) /* shift back: start of g = end of g-1 */
		s->seg_start[g] = s->seg_start[g - 1];
	s->seg_start[0] = 0;
	for (uint32_t g = 0; g < n_segments; g++) {
		uint32_t a = s->seg_start[g], b = s->seg_start[g + 1];
		if (b - a < 2)
			continue;
		const struct al_rule *r = w->items[s->by_seg[a]].rule;
		bool one_rule = r != NULL;
		for (uint32_t k = a; k < b && one_rule; k++)
			one_rule = w->items[s->by_seg[k]].rule == r;
		if (one_rule) {
			uint32_t k = 0;
			while (k < n_rules && s->rules[k] != r)
				k++;
			if (k < n_rules && s->rule_count[k] == b - a)
				continue; /* the rule candidate is the same set */
		}
		add_cand(s, AL_FIX_SEGMENT, r, s->by_seg + a, b - a);
	}
	for (uint32_t i = 0; i < w->n_items; i++)
		if (w->req[i] != U_ANE)
			add_cand(s, AL_FIX_NODE, w->items[i].rule, &i, 1);
}

static void apply(struct work *w, struct search *s, const struct cand *c)
{
	if (c->kind == AL_FIX_MODEL)
		w->forced = false;
	for (uint32_t k = 0; k < c->n; k++) {
		uint32_t i = s->pool[c->first + k];
		s->saved[k] = w->req[i];
		w->req[i] = U_ANE;
	}
}

static void undo(struct work *w, struct search *s, const struct cand *c)
{
	if (c->kind == AL_FIX_MODEL)
		w->forced = true;
	for (uint32_t k = 0; k < c->n; k++)
		w->req[s->pool[c->first + k]] = s->saved[k];
}

struct score {
	double gain, per;
	uint32_t segs, n, first;
};

/* Gains per rewritten layer within 1% count as equal (estimates are not that
 * precise), and then the bigger total gain wins: one rewrite of every layer a
 * rule moves rather than one layer at a time. */
static bool score_better(const struct score *a, const struct score *b)
{
	double tol = 0.01 * (a->per > b->per ? a->per : b->per) + EPS_US;
	if (a->per > b->per + tol || a->per < b->per - tol)
		return a->per > b->per;
	if (a->gain > b->gain + EPS_US || a->gain < b->gain - EPS_US)
		return a->gain > b->gain;
	if (a->segs != b->segs)
		return a->segs < b->segs;
	if (a->n != b->n)
		return a->n < b->n;
	return a->first < b->first;
}

static enum al_status find_fixes(struct work *w, struct al_plan *p, uint32_t max_fixes,
				 const struct eval *start, struct al_arena *arena, uint8_t *units)
{
	struct search s = {0};
	size_t n = (size_t)w->n_items + 1;
	s.pool = ali_malloc(3 * n * sizeof *s.pool);
	s.cands = ali_malloc((3 * n + 1) * sizeof *s.cands);
	s.saved = ali_malloc(n);
	s.by_seg = ali_malloc(n * sizeof *s.by_seg);
	s.seg_start = ali_malloc((n + 1) * sizeof *s.seg_start);
	s.rules = ali_malloc(n * sizeof *s.rules);
	s.rule_count = ali_malloc(n * sizeof *s.rule_count);
	p->fixes = ali_arena_array(arena, max_fixes, sizeof *p->fixes);
	enum al_status st = AL_OK;
	if (!s.pool || !s.cands || !s.saved || !s.by_seg || !s.seg_start || !s.rules ||
	    !s.rule_count || !p->fixes) {
		st = AL_E_NOMEM;
		goto out;
	}
	struct eval cur = *start, e;
	uint64_t per_eval = (uint64_t)w->n_items + w->n_preds + 1;
	uint64_t evals = EVAL_BUDGET / per_eval;
	if (evals < MIN_EVALS)
		evals = MIN_EVALS;
	/* w->seg holds the segments of `cur` (the last evaluation was of the plan) */
	for (uint32_t step = 0; step < max_fixes; step++) {
		gen_cands(w, &s, cur.n_segments);
		int best = -1;
		struct score bs = {0};
		struct eval be = {0};
		for (uint32_t c = 0; c < s.n_cands && c < evals; c++) {
			apply(w, &s, &s.cands[c]);
			evaluate(w, &e, units);
			undo(w, &s, &s.cands[c]);
			double gain = total(&cur) - total(&e);
			if (gain < -EPS_US || (gain <= EPS_US && e.n_segments >= cur.n_segments))
				continue;
			uint32_t cn = s.cands[c].n ? s.cands[c].n : 1;
			struct score sc = {gain, gain / cn, e.n_segments, cn,
					   s.cands[c].n ? s.pool[s.cands[c].first] : 0};
			if (best < 0 || score_better(&sc, &bs)) {
				best = (int)c;
				bs = sc;
				be = e;
			}
		}
		if (best < 0)
			break;
		const struct cand *c = &s.cands[best];
		struct al_fix *f = &p->fixes[p->n_fixes];
		f->kind = c->kind;
		f->rule = c->rule;
		f->segments_before = cur.n_segments;
		f->segments_after = be.n_segments;
		f->switches_before = cur.n_switches;
		f->switches_after = be.n_switches;
		f->gain_us = total(&cur) - total(&be);
		f->n_nodes = c->n;
		f->nodes = ali_arena_array(arena, c->n ? c->n : 1, sizeof *f->nodes);
		if (!f->nodes) {
			st = AL_E_NOMEM;
			goto out;
		}
		for (uint32_t k = 0; k < c->n; k++)
			f->nodes[k] = w->nodes[w->items[s.pool[c->first + k]].node0];
		f->node = c->n ? f->nodes[0] : NULL;
		p->n_fixes++;
		apply(w, &s, c); /* keep it, and look for the next one from there */
		evaluate(w, &cur, units);
	}
out:
	ali_free(s.pool);
	ali_free(s.cands);
	ali_free(s.saved);
	ali_free(s.by_seg);
	ali_free(s.seg_start);
	ali_free(s.rules);
	ali_free(s.rule_count);
	return st;
}

/* ================================================================ entry point */

static void free_work(struct work *w)
{
	ali_free(w->nodes);
	ali_free(w->index);
	ali_free(w->items);
	ali_free(w->preds);
	ali_free(w->succs);
	ali_free(w->req);
	ali_free(w->fin);
	ali_free(w->place);
	ali_free(w->gt);
	ali_free(w->ct);
	ali_free(w->uf);
	ali_free(w->feat);
	ali_hashtab_free(&w->feat_index);
	ali_free(w->region);
	ali_free(w->stage);
	ali_free(w->stage2);
	ali_free(w->seg);
	ali_free(w->seg2);
	ali_free(w->keymap);
	ali_free(w->pairs);
	ali_free(w->pairs2);
}

static enum al_status alloc_work(struct work *w)
{
	size_t nn = (size_t)w->n_nodes + 1, ni = (size_t)w->n_items + 1, ne = (size_t)w->n_preds + 1;
	w->nodes = ali_malloc(nn * sizeof *w->nodes);
	w->index = ali_malloc(nn * sizeof *w->index);
	w->items = ali_calloc(ni, sizeof *w->items);
	w->preds = ali_malloc(ne * sizeof *w->preds);
	w->succs = ali_malloc(ne * sizeof *w->succs);
	w->req = ali_malloc(ni);
	w->fin = ali_malloc(ni);
	w->place = ali_malloc(ni);
	w->gt = ali_malloc(ni);
	w->ct = ali_malloc(ni);
	w->uf = ali_malloc(ni * sizeof *w->uf);
	w->region = ali_malloc(ni * sizeof *w->region);
	w->stage = ali_malloc(ni * sizeof *w->stage);
	w->stage2 = ali_malloc(ni * sizeof *w->stage2);
	w->seg = ali_malloc(ni * sizeof *w->seg);
	w->seg2 = ali_malloc(ni * sizeof *w->seg2);
	w->keymap = ali_malloc(ni * N_U * sizeof *w->keymap);
	w->pairs = ali_malloc(ne * sizeof *w->pairs);
	w->pairs2 = ali_malloc(ne * sizeof *w->pairs2);
	if (!w->nodes || !w->index || !w->items || !w->preds || !w->succs ||
	    !w->req || !w->fin || !w->place || !w->gt || !w->ct || !w->uf || !w->region || !w->stage || !w->stage2 ||
	    !w->seg || !w->seg2 || !w->keymap || !w->pairs || !w->pairs2)
		return AL_E_NOMEM;
	for (size_t k = 0; k < ni * N_U; k++)
		w->keymap[k] = UINT32_MAX;
	return AL_OK;
}

static const char *policy_why(enum al_policy asked, const struct al_submodel *s)
{
	if (asked != AL_POLICY_AUTO)
		return "requested";
	if (s->world == AL_WORLD_MIL)
		return "default for an ML Program";
	if (s->world == AL_WORLD_NN)
		return "default for a NeuralNetwork model";
	return "default (no layers to place)";
}

static enum al_status plan_sub(struct al_arena *arena, const al_model *m, const struct al_submodel *s,
			       const struct al_plan_opts *opts, struct al_plan *p, const struct al_rule *skip)
{
	struct work w = {.s = s};
	enum al_policy pol = opts ? opts->policy : AL_POLICY_AUTO;
	if ((unsigned)pol >= AL_POLICY_COUNT)
		return AL_E_INVALID_ARG;
	p->policy_why = policy_why(pol, s);
	if (pol == AL_POLICY_AUTO)
		pol = s->world == AL_WORLD_MIL ? AL_POLICY_MLPROGRAM : AL_POLICY_NN2020;
	p->policy = pol;
	w.pol = &policies[pol];
	/* where, the work floor, where fallbacks go, a model-level move: decide.c */
	struct ali_graph_decision dec;
	ali_decide_graph(m, s, opts, skip, &dec);
	w.target = dec.where.target;
	w.floor = dec.floor;
	w.os = dec.floor_os;
	p->target = w.target;
	p->timed = target_timed(w.target);
	w.overhead[U_ANE] = w.target->ane_overhead_us > 0 ? w.target->ane_overhead_us : 0;
	w.overhead[U_GPU] = w.target->gpu_overhead_us > 0 ? w.target->gpu_overhead_us : 0;
	w.overhead[U_CPU] = w.target->cpu_overhead_us > 0 ? w.target->cpu_overhead_us : 0;
	for (int a = 0; a < N_U; a++)
		for (int b = 0; b < N_U; b++) {
			double v = opts ? opts->switch_us[a][b] : 0;
			w.sw[a][b] = a == b ? 0 : v > 0 ? v : default_switch[a][b];
			p->switch_cost[a][b] = w.sw[a][b];
		}
	w.model_rule = p->model_rule = dec.model_rule;
	w.cu = dec.where.compute_units;
	w.gpu_fallback = p->gpu_fallback = dec.gpu_fallback;
	p->os = dec.where.os;
	p->compute_units = w.cu;
	w.tiny = dec.tiny;
	w.tiny_to_gpu = dec.tiny_to_gpu;
	w.forced = dec.forced;
	if (w.forced) {
		enum al_unit u = w.model_rule->unit;
		w.forced_unit = u == AL_UNIT_GPU || u == AL_UNIT_CPU ? (uint8_t)u
			      : u == AL_UNIT_ANE ? U_ANE : w.pol->either;
	}

	ali_walk_nodes(s, count_node, &w);
	/* edges <= inputs; a loaded model has at most 2^20 nodes, but not of bounded arity */
	if (w.inputs_seen > (1u << 30) || w.outputs_seen > (1u << 29))
		return AL_E_NOMEM;
	w.n_preds = (uint32_t)w.inputs_seen;
	w.n_outputs = (uint32_t)w.outputs_seen;
	uint32_t n_items = w.n_items;
	enum al_status st = alloc_work(&w);
	if (st == AL_OK)
		st = feat_build(&w);
	if (st == AL_OK) {
		w.n_nodes = w.n_items = 0;
		ali_walk_nodes(s, fill_node, &w);
		st = w.n_items == n_items ? build_edges(&w) : AL_E_INVALID_ARG;
	}
	uint8_t *units = ali_malloc((size_t)w.n_items + 1);
	size_t nn = w.n_nodes ? w.n_nodes : 1;
	if (st == AL_OK) {
		p->n_nodes = w.n_nodes;
		p->nodes = ali_arena_array(arena, nn, sizeof *p->nodes);
		p->unit = ali_arena_array(arena, nn, sizeof *p->unit);
		p->index = ali_arena_array(arena, nn, sizeof *p->index);
		p->segment = ali_arena_array(arena, nn, sizeof *p->segment);
		p->place = ali_arena_array(arena, nn, sizeof *p->place);
		p->node_us = ali_arena_array(arena, nn, sizeof *p->node_us);
		if (!units || !p->nodes || !p->unit || !p->index || !p->segment || !p->place ||
		    !p->node_us)
			st = AL_E_NOMEM;
	}
	if (st == AL_OK) {
		for (uint32_t k = 0; k < w.n_nodes; k++) {
			p->nodes[k] = w.nodes[k];
			p->index[k] = w.index[k];
			if (!w.nodes[k]->cost.known)
				p->n_uncosted++;
		}
		for (uint32_t i = 0; i < w.n_items; i++)
			w.req[i] = w.items[i].req;
		struct eval e;
		evaluate(&w, &e, units);
		st = write_plan(&w, p, &e, arena, units);
		if (st == AL_OK) {
			/* evaluate again: write_plan used `units` as scratch */
			evaluate(&w, &e, units);
			uint32_t mf = opts && opts->max_fixes ? opts->max_fixes : DEFAULT_FIXES;
			if (!(opts && opts->no_fixes))
				st = find_fixes(&w, p, mf < MAX_FIXES ? mf : MAX_FIXES, &e, arena, units);
		}
	}
	ali_free(units);
	free_work(&w);
	return st;
}

/* A plan and the arena its arrays live in; al_plan_free gets it back from the
 * plan pointer (the first member). */
struct owned_plan {
	struct al_plan plan;
	struct al_arena arena;
};

/* The model-level rules `anelint fix` removes by editing the model description
 * only (so that every op's verdict stays as it is): ANE040, a shape range ->
 * fix --shape NAME=default (pass input-fixed-shape). */
static bool description_fix(const struct al_rule *r)
{
	return r && r->id && strcmp(r->id, "ANE040") == 0;
}

/* When such a rule decides p's placement: p planned again without it, which is
 * the plan of the fixed model (its description is all the fix changes). */
static enum al_status plan_model_fix(const al_model *m, size_t i, const struct al_plan_opts *opts,
				     struct al_plan *p)
{
	const struct al_submodel *s = m->subs[i];
	if (!description_fix(p->model_rule) || s->depth != 0 || (s->world != AL_WORLD_NN && s->world != AL_WORLD_MIL))
		return AL_OK; /* fix rewrites a NeuralNetwork or ML Program model's own inputs, not a pipeline's */
	struct al_plan_opts o2 = opts ? *opts : (struct al_plan_opts){0};
	o2.no_fixes = true;
	struct al_arena a = {0};
	struct al_plan q = {.sub = m->subs[i]};
	enum al_status st = plan_sub(&a, m, m->subs[i], &o2, &q, p->model_rule);
	if (st == AL_OK) {
		p->fix_rule = p->model_rule;
		p->then_rule = q.model_rule;
		p->then_segments = q.n_segments;
		p->then_switches = q.switches;
		p->then_ane_nodes = q.ane_nodes;
		p->then_ane_flops = q.ane_flops;
		p->then_est_us = q.est_us;
	}
	ali_arena_free(&a);
	return st;
}

enum al_status al_model_plan(al_model *m, size_t i, const struct al_plan_opts *opts,
			     const struct al_plan **out, al_diags *d)
{
	if (out)
		*out = NULL;
	if (!m || !out || i >= m->n_subs) {
		ali_diag_add(d, AL_SEV_ERROR, m ? m->path : NULL, UINT64_MAX, NULL, NULL,
			    "al_model_plan: no model, no result pointer, or no sub-model %zu", i);
		return AL_E_INVALID_ARG;
	}
	if (!m->checked) {
		ali_diag_add(d, AL_SEV_ERROR, m->path, UINT64_MAX, NULL, NULL,
			    "al_model_plan: check the model (al_model_check) before planning it");
		return AL_E_INVALID_ARG;
	}
	struct owned_plan *o = ali_calloc(1, sizeof *o);
	if (!o) {
		ali_diag_add(d, AL_SEV_ERROR, m->path, UINT64_MAX, NULL, NULL, "out of memory while planning");
		return AL_E_NOMEM;
	}
	struct al_plan *p = &o->plan;
	p->sub = m->subs[i];
	enum al_status st = plan_sub(&o->arena, m, m->subs[i], opts, p, NULL);
	if (st == AL_OK)
		st = plan_model_fix(m, i, opts, p);
	if (st != AL_OK) {
		ali_diag_add(d, AL_SEV_ERROR, m->path, UINT64_MAX, NULL, NULL, "%s while planning %s",
			    st == AL_E_NOMEM ? "out of memory" : "internal error", p->sub->path);
		al_plan_free(p);
		return st;
	}
	*out = p;
	return AL_OK;
}

void al_plan_free(const struct al_plan *p)
{
	if (!p)
		return;
	/* p is the first member of the owned_plan al_model_plan allocated */
	struct owned_plan *o = (struct owned_plan *)(uintptr_t)p;
	ali_arena_free(&o->arena);
	ali_free(o);
}
