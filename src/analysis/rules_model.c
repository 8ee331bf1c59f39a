/* SPDX-License-Identifier: MIT */
/* rules_model.c: the predicates of the whole-model rules (ANE040-049, 070-079 in
 * rules.def).
 *
 * Each looks at one sub-model as the loaders describe it: its type, its input
 * features (shapes and flexibility), its weight byte counts, and (ANE070-071)
 * its op types and the total work the cost stage computed. Pipeline containers
 * are left to their stages, which are sub-models of their own.
 */
#include "rules.h"

#include <string.h>

/* ================================================================ helpers */

static bool in_list(const char *type, const char *const *names)
{
	if (!type)
		return false;
	for (; *names; names++)
		if (ali_str_eq(type, *names))
			return true;
	return false;
}

static bool is_neural(const struct al_submodel *s)
{
	return s->world == AL_WORLD_NN || s->world == AL_WORLD_MIL;
}

static const char *const containers[] = {"pipeline", "pipelineClassifier", "pipelineRegressor",
					 NULL};

static const char *const non_neural[] = {
	"glmRegressor", "supportVectorRegressor", "treeEnsembleRegressor",
	"bayesianProbitRegressor", "glmClassifier", "supportVectorClassifier",
	"treeEnsembleClassifier", "kNearestNeighborsClassifier", "itemSimilarityRecommender",
	"oneHotEncoder", "imputer", "featureVectorizer", "dictVectorizer", "scaler",
	"categoricalMapping", "normalizer", "arrayFeatureExtractor", "nonMaximumSuppression",
	"identity", "classConfidenceThresholding", NULL};

static const char *const os_provided[] = {
	"visionFeaturePrint", "audioFeaturePrint", "soundAnalysisPreprocessing", "textClassifier",
	"wordTagger", "gazetteer", "wordEmbedding", NULL};

/* "[1, 1..64]" from (lo, hi) pairs; hi < 0 = unbounded. */
static void ranges_str(char *buf, size_t cap, const int64_t *v, uint32_t n)
{
	size_t len = 0;
	int k = snprintf(buf, cap, "[");
	len = k > 0 ? (size_t)k : 0;
	for (uint32_t i = 0; i < n && i < AL_RX_MAX_DIMS && len < cap; i++) {
		int64_t lo = v[2 * i], hi = v[2 * i + 1];
		const char *sep = i ? ", " : "";
		if (lo == hi)
			k = snprintf(buf + len, cap - len, "%s%lld", sep, (long long)lo);
		else if (hi < 0)
			k = snprintf(buf + len, cap - len, "%s%lld..inf", sep, (long long)lo);
		else
			k = snprintf(buf + len, cap - len, "%s%lld..%lld", sep, (long long)lo,
				     (long long)hi);
		if (k < 0)
			break;
		len += (size_t)k;
	}
	if (len < cap)
		snprintf(buf + len, cap - len, "]");
}

/* ================================================================ ANE040-041: flexible shapes */

bool ali_rp_model_range_flex(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_submodel *s = c->s;
	if (!is_neural(s))
		return false;
	for (uint32_t i = 0; i < s->n_inputs; i++) {
		const struct al_feature *f = &s->inputs[i];
		if (f->flex != AL_FLEX_RANGE || !f->flex_values)
			continue;
		/* images: [hlo, hhi, wlo, whi]; arrays: rank (lo, hi) pairs */
		uint32_t axes = f->kind == AL_FEAT_IMAGE ? 2 : f->rank;
		bool flexible = false;
		for (uint32_t k = 0; k < axes; k++)
			flexible |= f->flex_values[2 * k] != f->flex_values[2 * k + 1];
		if (!flexible)
			continue;
		char b[256];
		ranges_str(b, sizeof b, f->flex_values, axes);
		return ali_rx_say(reason, cap, "input '%s' has a shape range %s%s: the whole model off "
				 "the ANE at non-default shapes, and at the default one in coremltools issue #1764 "
				 "(measured: a range model on the CPU at its default shape)",
				 f->name ? f->name : "?", b, f->kind == AL_FEAT_IMAGE ? " (H, W)" : "");
	}
	return false;
}

bool ali_rp_model_enum_multi(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_submodel *s = c->s;
	if (!is_neural(s))
		return false;
	const struct al_feature *first = NULL, *second = NULL;
	uint32_t count = 0;
	for (uint32_t i = 0; i < s->n_inputs; i++) {
		const struct al_feature *f = &s->inputs[i];
		if (f->flex != AL_FLEX_ENUMERATED || f->n_shapes < 2)
			continue; /* one enumerated shape is a fixed shape */
		if (count == 0)
			first = f;
		else if (count == 1)
			second = f;
		count++;
	}
	if (count < 2)
		return false;
	return ali_rx_say(reason, cap, "%u inputs have enumerated shapes: '%s' (%u shapes), '%s' (%u)%s",
			 count, first->name ? first->name : "?", first->n_shapes,
			 second->name ? second->name : "?", second->n_shapes, count > 2 ? ", ..." : "");
}

/* ================================================================ ANE042-044: model types */

bool ali_rp_model_non_neural(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_submodel *s = c->s;
	if (s->world != AL_WORLD_OTHER || !in_list(s->type, non_neural))
		return false;
	return ali_rx_say(reason, cap, "model type %s is not a neural network; it runs on the CPU",
			 s->type);
}

bool ali_rp_model_opaque(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_submodel *s = c->s;
	if (s->world != AL_WORLD_OTHER || in_list(s->type, non_neural) || in_list(s->type, containers))
		return false;
	const char *t = s->type ? s->type : "?";
	if (in_list(t, os_provided))
		return ali_rx_say(reason, cap, "%s is provided by the OS; its network is not in the file",
				 t);
	if (strcmp(t, "linkedModel") == 0)
		return ali_rx_say(reason, cap, "linkedModel: the model is in another file");
	if (strcmp(t, "customModel") == 0)
		return ali_rx_say(reason, cap, "customModel: the app's own code, not analysable");
	return ali_rx_say(reason, cap, "model type %s: anelint cannot see its operations", t);
}

bool ali_rp_model_nn_classifier(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_submodel *s = c->s;
	if (!ali_submodel_is(s, AL_MODEL_FIELD_neuralNetworkClassifier))
		return false;
	return ali_rx_say(reason, cap, "class label '%s' and probabilities '%s' are computed after "
			 "the ANE segment", s->predicted_feature ? s->predicted_feature : "?",
			 s->predicted_probabilities ? s->predicted_probabilities : "?");
}

/* ================================================================ ANE045-046 */

#define GIB (1024.0 * 1024.0 * 1024.0)

bool ali_rp_model_weights_1g(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_submodel *s = c->s;
	if (in_list(s->type, containers) || s->n_children > 0)
		return false; /* the stages carry the weights and are checked themselves */
	const struct al_weight_stats *w = &s->weights;
	uint64_t total = ali_rx_weights_total(w);
	if (total <= (uint64_t)1 << 30)
		return false;
	return ali_rx_say(reason, cap, "weights %.2f GiB > 1 GiB (fp32 %.2f, fp16 %.2f, quantized "
			 "%.2f, other %.2f GiB)", (double)total / GIB, (double)w->fp32 / GIB,
			 (double)w->fp16 / GIB, (double)w->quantized / GIB, (double)w->other / GIB);
}

bool ali_rp_model_int_input(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_submodel *s = c->s;
	if (!is_neural(s))
		return false;
	for (uint32_t i = 0; i < s->n_inputs; i++) {
		const struct al_feature *f = &s->inputs[i];
		bool is_int = f->kind == AL_FEAT_INT64 ||
			      (f->kind == AL_FEAT_MULTIARRAY && f->dtype == AL_DT_INT32);
		if (is_int)
			return ali_rx_say(reason, cap, "input '%s' is %s", f->name ? f->name : "?",
					 f->kind == AL_FEAT_INT64 ? "int64" : "int32");
	}
	return false;
}

/* ================================================================ ANE070: W8A8 before int8 compute */

static uint32_t count_type(const struct al_graph *g, const char *type, int depth)
{
	uint32_t k = 0;
	if (!g || depth > AL_MAX_DEPTH + 1)
		return 0;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct al_node *n = &g->nodes[i];
		k += n->type && ali_str_eq(n->type, type);
		for (uint32_t j = 0; j < n->n_sub; j++)
			k += count_type(n->sub[j], type, depth + 1);
	}
	return k;
}

bool ali_rp_model_w8a8(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_submodel *s = c->s;
	if (s->world != AL_WORLD_MIL || (c->t->features & AL_TF_INT8_COMPUTE))
		return false;
	uint32_t q = 0;
	for (uint32_t g = 0; g < s->n_graphs; g++)
		q += count_type(s->graphs[g], "quantize", 0);
	if (q == 0)
		return false;
	return ali_rx_say(reason, cap, "%u quantize op%s (activation quantization): no int8-int8 "
			 "compute on %s before A17 Pro / M4", q, q == 1 ? "" : "s", c->t->id);
}

/* ================================================================ ANE071: a model too small for the ANE */

struct tiny_ctx {
	struct al_work w;
	const struct al_release *os;
};

static void add_work(void *ctx, const struct al_node *n)
{
	struct tiny_ctx *t = ctx;
	if (ali_node_is_const(n))
		return;
	ali_work_add(&t->w, &n->cost);
	t->w.deep |= ali_work_deep_decode(n, t->os);
}

/* The whole model under the work floor (work_floor.c, shared with the
 * partition's per-segment ANE072): docs/partition.md "Too little work". */
bool ali_rp_model_tiny(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_submodel *s = c->s;
	if (!is_neural(s) || !c->sub_cost_known)
		return false;
	/* A stateful model (MLState) is not held to the floor: every small stateful
	 * model in the evidence that the ANE compiler accepted ran there
	 * (coremltools #2631: a 90 MFLOP conv RNN with a width-256 state on an M4;
	 * #2553: the Anemll-style KV cache at sequence 16 and 32). */
	for (uint32_t i = 0; i < s->n_inputs; i++)
		if (s->inputs[i].kind == AL_FEAT_STATE)
			return false;
	struct tiny_ctx t = {.w = {.known = true}, .os = ali_rx_os(c)};
	ali_walk_nodes(s, add_work, &t);
	const struct al_work w = t.w;
	if (!ali_work_too_little(&w, ali_rx_os(c)))
		return false;
	double f = w.flops;
	const char *unit = f >= 1e6 ? "MFLOP" : f >= 1e3 ? "kFLOP" : "FLOP";
	double v = f >= 1e6 ? f / 1e6 : f >= 1e3 ? f / 1e3 : f;
	double b = w.weight_bytes;
	const char *bu = b >= 1e6 ? "MB" : b >= 1e3 ? "kB" : "bytes";
	double bv = b >= 1e6 ? b / 1e6 : b >= 1e3 ? b / 1e3 : b;
	return ali_rx_say(reason, cap, "the whole model does %.3g %s and reads %.3g %s of weights "
			 "(under 200 MFLOP and %.3g MB on %s, and not 8 ops doing 20 MFLOP): too "
			 "little work for the ANE", v, unit, bv, bu, ali_work_floor_weights(ali_rx_os(c)) / 1e6,
			 ali_rx_os(c)->id);
}

/* ================================================================ ANE047-049: whole-graph rejections */

/* Whether some op of s (top-level graphs; nested blocks included through
 * ali_walk_nodes) satisfies fn. */
struct any_ctx {
	bool (*fn)(const struct al_node *n, const void *arg);
	const void *arg;
	const struct al_node *hit;
};

static void any_visit(void *ctx, const struct al_node *n)
{
	struct any_ctx *a = ctx;
	if (!a->hit && a->fn(n, a->arg))
		a->hit = n;
}

static const struct al_node *find_op(const struct al_submodel *s,
				     bool (*fn)(const struct al_node *, const void *), const void *arg)
{
	struct any_ctx a = {fn, arg, NULL};
	ali_walk_nodes(s, any_visit, &a);
	return a.hit;
}

static bool type_is(const struct al_node *n, const void *type)
{
	return n->type && ali_str_eq(n->type, type);
}

bool ali_rp_model_state_width(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_submodel *s = c->s;
	for (uint32_t i = 0; i < s->n_inputs; i++) {
		const struct al_feature *f = &s->inputs[i];
		if (f->kind != AL_FEAT_STATE || f->rank == 0 || !f->shape)
			continue;
		int64_t w = f->shape[f->rank - 1];
		if (w > 0 && w % 32 != 0)
			return ali_rx_say(reason, cap, "state '%s' has a last axis of %lld, not a multiple "
					 "of 32", f->name ? f->name : "?", (long long)w);
	}
	return false;
}

/* The in-graph KV-cache update (ANE048) against a recurrent state update that looks alike.
 * Both read an MLState and write part of it back with slice_update. A KV cache is then read
 * by attention: the updated state (or a read_state of it) reaches, through view ops only, an
 * operand of scaled_dot_product_attention or of a matmul / einsum of two activations (q @ k^T,
 * coremltools #2553, mobius PR #77). A recurrent state (an RNN's hidden state, a conv state)
 * is consumed by ops with weights (linear, conv) that compute its next value: no
 * activation-by-activation product reads it. Bounded: the names followed are capped. */
#define KV_MAX_NAMES 256

struct kv_ctx {
	const char *states[KV_MAX_NAMES]; /* states written back by slice_update */
	const char *names[KV_MAX_NAMES];  /* values that are the cache or a view of it */
	uint32_t n_states, n_names;
	const struct al_node *update, *reader; /* the slice_update, the attention op reading it */
};

static bool name_in(const char *const *set, uint32_t n, const char *name)
{
	for (uint32_t i = 0; name && i < n; i++)
		if (strcmp(set[i], name) == 0)
			return true;
	return false;
}

static void name_add(const char **set, uint32_t *n, const char *name)
{
	if (name && *n < KV_MAX_NAMES && !name_in(set, *n, name))
		set[(*n)++] = name;
}

/* The name bound to param of n (its k-th binding), in buf, or NULL. */
static const char *binding(const struct al_node *n, const char *param, char *buf, size_t cap)
{
	al_span name;
	if (ali_mil_param_binding(n, param, 0, &name) != 1 || name.n >= cap)
		return NULL;
	memcpy(buf, name.p, name.n);
	buf[name.n] = '\0';
	return buf;
}

/* The state a read_state reads (an interned input name of n), or NULL. */
static const char *read_state_of(const struct al_node *n)
{
	char buf[256];
	const char *st = type_is(n, "read_state") ? binding(n, "input", buf, sizeof buf) : NULL;
	for (uint32_t i = 0; st && i < n->n_inputs; i++)
		if (n->inputs[i] && strcmp(n->inputs[i], st) == 0)
			return n->inputs[i];
	return NULL;
}

/* pass 1: the states that a slice_update of their read_state writes back */
static void kv_find_updates(void *ctx, const struct al_node *n)
{
	struct kv_ctx *k = ctx;
	char buf[256];
	const char *x = type_is(n, "slice_update") ? binding(n, "x", buf, sizeof buf) : NULL;
	const struct al_node *p = x ? ali_mil_producer(n, x) : NULL;
	const char *st = p ? read_state_of(p) : NULL;
	if (!st)
		return;
	name_add(k->states, &k->n_states, st);
	if (!k->update)
		k->update = n;
}

static bool const_value(const struct al_node *n, const char *param)
{
	char buf[256];
	const char *v = binding(n, param, buf, sizeof buf);
	if (!v)
		return true; /* no such operand */
	const struct al_node *p = ali_mil_producer(n, v);
	return p && (ali_rx_mil_flags(p) & AL_OPF_CONST); /* no producer: a function input */
}

static const char *const kv_views[] = {"reshape", "transpose", "slice_by_index", "slice_by_size",
				       "expand_dims", "squeeze", "cast", "tile", "concat", "split",
				       "identity", "gather", "gather_along_axis", "slice_update", NULL};

/* pass 2, in model order (producers first): follow the cache through view ops to a reader */
static void kv_follow(void *ctx, const struct al_node *n)
{
	struct kv_ctx *k = ctx;
	if (k->reader)
		return;
	const char *st = read_state_of(n);
	if (st && name_in(k->states, k->n_states, st)) {
		for (uint32_t i = 0; i < n->n_outputs; i++)
			name_add(k->names, &k->n_names, n->outputs[i]);
		return;
	}
	bool reads = false;
	for (uint32_t i = 0; i < n->n_inputs && !reads; i++)
		reads = name_in(k->names, k->n_names, n->inputs[i]);
	if (!reads)
		return;
	if (type_is(n, "scaled_dot_product_attention") ||
	    ((type_is(n, "matmul") || type_is(n, "einsum")) && !const_value(n, "x") && !const_value(n, "y")) ||
	    (type_is(n, "einsum") && !const_value(n, "values"))) {
		k->reader = n;
		return;
	}
	if (in_list(n->type, kv_views))
		for (uint32_t i = 0; i < n->n_outputs; i++)
			name_add(k->names, &k->n_names, n->outputs[i]);
}

bool ali_rp_model_state_kv_linear(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_submodel *s = c->s;
	if (s->world != AL_WORLD_MIL)
		return false;
	struct kv_ctx k = {0};
	ali_walk_nodes(s, kv_find_updates, &k);
	if (!k.update)
		return false;
	ali_walk_nodes(s, kv_follow, &k);
	const struct al_node *l = k.reader ? find_op(s, type_is, "linear") : NULL;
	if (!l)
		return false;
	return ali_rx_say(reason, cap, "KV cache state updated in the graph ('%s', slice_update of a "
			 "read_state, read by '%s') with linear projections ('%s'): the ANE compiler "
			 "rejected such graphs", k.update->name ? k.update->name : "?",
			 k.reader->name ? k.reader->name : "?", l->name ? l->name : "?");
}

/* scatter* writing a rank-5 tensor. */
static bool rank5_scatter(const struct al_node *n, const void *arg)
{
	(void)arg;
	if (!n->type || strncmp(n->type, "scatter", 7) != 0 || n->n_outputs == 0)
		return false;
	struct al_shape sh;
	return ali_rx_out_shape(n, 0, &sh) && sh.rank == 5;
}

bool ali_rp_model_rank5_scatter(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_submodel *s = c->s;
	if (s->world != AL_WORLD_MIL)
		return false;
	const struct al_node *n = find_op(s, rank5_scatter, NULL);
	if (!n)
		return false;
	return ali_rx_say(reason, cap, "'%s' (%s) updates a rank-5 tensor: the ANE compiler rejects "
			 "the whole graph", n->name ? n->name : "?", n->type);
}

/* ================================================================ partition rules */

/* A partition rule (ANE072) is decided by the partition (plan.c), which names it
 * as the rule that moved a node (al_verdict.moved_by); per node or per model it
 * never fires. */
bool ali_rp_partition(const struct al_rctx *c, char *reason, size_t cap)
{
	(void)c, (void)reason, (void)cap;
	return false;
}
