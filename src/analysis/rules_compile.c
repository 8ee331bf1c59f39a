/* SPDX-License-Identifier: MIT */
/* rules_compile.c: the predicates of the ANE compile limits (ANE077-080 in rules.def, issue
 * #30 item 5): sizes under which the ANE compiler failed a whole segment, so that Core ML ran
 * it elsewhere. Each is a model rule: the compile takes the segment whole, and the partition
 * moves the (sub-)model a model rule fires on (plan.c).
 *
 * The thresholds are the sizes the reports saw: what compiled, and what failed. A rule fires
 * above the first; its reason says "in the failing range" only from the second, where a report
 * pins it: that is the detail of its scope row (rule_scope.def), and elsewhere the verdict is
 * uncertain. */
#include "rules.h"

#include <string.h>

/* The words of the sure band: rule_scope.def's detail of ANE077. */
#define FAILING_BAND "in the failing range"

static bool is_type(const struct al_node *n, const char *type)
{
	return n->type && ali_str_eq(n->type, type);
}

/* The op producing binding k of MIL op n's parameter `param`, or NULL (a function or block
 * input, a literal, or no such binding); *bound says whether the binding names a value. */
static const struct al_node *producer_at(const struct al_node *n, const char *param, uint32_t k,
					 bool *bound)
{
	al_span name;
	char buf[256];
	*bound = ali_mil_param_binding(n, param, k, &name) == 1 && name.n > 0 && name.n < sizeof buf;
	if (!*bound)
		return NULL;
	memcpy(buf, name.p, name.n);
	buf[name.n] = '\0';
	return ali_mil_producer(n, buf);
}

static const struct al_node *producer_of(const struct al_node *n, const char *param)
{
	bool bound;
	return producer_at(n, param, 0, &bound);
}

/* Whether binding k of `param` is a computed value: a name no const or constexpr_* op makes. */
static bool computed_binding(const struct al_node *n, const char *param, uint32_t k)
{
	bool bound;
	const struct al_node *p = producer_at(n, param, k, &bound);
	return bound && (!p || !ali_node_is_const(p));
}

/* Elements of a shape with every dim known, in double (dims may be huge); < 0 if unknown. */
static double elements(const struct al_shape *s)
{
	if (!ali_rx_shape_known(s))
		return -1;
	double e = 1;
	for (int i = 0; i < s->rank; i++)
		e *= (double)s->dims[i];
	return e;
}

/* ================================================================ ANE077: long attention */

/* Pummelchen/NVMAI #7 (M5, macOS 26.5): 8192 keys compiled, 32768 failed. */
#define ATTN_KEYS_COMPILED 8192
#define ATTN_KEYS_FAILED 32768
/* How far back from a softmax the score product is looked for: a mask add, a scale, a cast. */
#define ATTN_HOPS 3

struct attn_hit {
	const struct al_node *n; /* the SDPA or softmax */
	int64_t keys;
	double scores; /* elements of the score matrix */
};

/* The matmul / einsum of two computed tensors that softmax n's input comes from, through at
 * most ATTN_HOPS elementwise ops; NULL if none. */
static const struct al_node *score_product(const struct al_node *n)
{
	static const char *const through[] = {"add", "sub", "mul", "real_div", "cast", NULL};
	const struct al_node *p = producer_of(n, "x");
	for (int hop = 0; p && hop <= ATTN_HOPS; hop++) {
		if (is_type(p, "matmul"))
			return computed_binding(p, "x", 0) && computed_binding(p, "y", 0) ? p : NULL;
		if (is_type(p, "einsum"))
			return computed_binding(p, "values", 0) && computed_binding(p, "values", 1) ? p : NULL;
		if (!ali_rx_type_in(p, through))
			return NULL;
		/* the scores are the computed operand; a mask or a scale is the other */
		const struct al_node *a = computed_binding(p, "x", 0) ? producer_of(p, "x") : NULL;
		const struct al_node *b = computed_binding(p, "y", 0) ? producer_of(p, "y") : NULL;
		p = a && (is_type(a, "matmul") || is_type(a, "einsum") || ali_rx_type_in(a, through)) ? a : b;
	}
	return NULL;
}

static void find_attention(void *ctx, const struct al_node *n)
{
	struct attn_hit *best = ctx;
	struct al_shape k, q, x;
	int64_t keys = -1;
	double scores = -1;
	if (is_type(n, "scaled_dot_product_attention")) {
		if (!ali_mil_param_shape(n, "key", &k) || k.rank < 2 || !ali_mil_param_shape(n, "query", &q) ||
		    q.rank < 2)
			return;
		keys = k.dims[k.rank - 2];
		double e = elements(&q);
		if (keys <= 0 || e < 0 || q.dims[q.rank - 1] <= 0)
			return;
		scores = e / (double)q.dims[q.rank - 1] * (double)keys;
	} else if (is_type(n, "softmax")) {
		if (!ali_mil_param_shape(n, "x", &x) || x.rank < 2)
			return;
		int64_t axis = -1;
		if (ali_mil_param_ints(n, "axis", &axis, 1) < 0)
			return;
		if (axis < 0)
			axis += x.rank;
		if (axis < 0 || axis >= x.rank)
			return;
		keys = x.dims[axis];
		scores = elements(&x);
		/* the producer search is linear in the graph: only for a softmax long enough */
		if (keys <= ATTN_KEYS_COMPILED || keys <= best->keys || scores < 0 || !score_product(n))
			return;
	} else {
		return;
	}
	if (keys > best->keys)
		*best = (struct attn_hit){n, keys, scores};
}

bool ali_rp_model_attention_long(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_submodel *s = c->s;
	if (s->world != AL_WORLD_MIL)
		return false;
	struct attn_hit h = {NULL, -1, -1};
	ali_walk_nodes(s, find_attention, &h);
	if (!h.n || h.keys <= ATTN_KEYS_COMPILED)
		return false;
	double mib = h.scores * 2 / (1024.0 * 1024.0);
	if (h.keys >= ATTN_KEYS_FAILED)
		return ali_rx_say(reason, cap, "'%s' (%s) attends over %lld keys (a score matrix of %.0f "
				 "MiB in fp16): at or beyond the %d keys seen failing the ANE compile, " FAILING_BAND,
				 h.n->name ? h.n->name : "?", h.n->type, (long long)h.keys, mib, ATTN_KEYS_FAILED);
	return ali_rx_say(reason, cap, "'%s' (%s) attends over %lld keys (a score matrix of %.0f MiB "
			 "in fp16): between the %d keys seen compiling and the %d seen failing, where "
			 "the limit is not known", h.n->name ? h.n->name : "?", h.n->type,
			 (long long)h.keys, mib, ATTN_KEYS_COMPILED, ATTN_KEYS_FAILED);
}

/* ================================================================ ANE078: one huge tensor */

/* the 8x64x512x512 fp16 input of a grid_sample on the NPU (Apple forums thread 745778) */
#define TENSOR_BYTES_RAN (8.0 * 64 * 512 * 512 * 2)

struct tensor_hit {
	const struct al_submodel *s;
	const struct al_node *n;
	const char *name;
	bool input; /* a model input the op reads, else one of its outputs */
	struct al_shape shape;
	double bytes;
};

static void consider(struct tensor_hit *h, const struct al_node *n, const char *name, bool input,
		     const struct al_shape *sh)
{
	double e = elements(sh);
	if (e < 0)
		return;
	double b = e * ali_rx_elem_bytes(sh->dtype);
	if (b > h->bytes) {
		h->n = n;
		h->name = name;
		h->input = input;
		h->shape = *sh;
		h->bytes = b;
	}
}

/* The outputs of every non-const op, and the model inputs the ops read (an unused input is
 * never on the ANE). */
static void find_tensor(void *ctx, const struct al_node *n)
{
	struct tensor_hit *h = ctx;
	/* constants are weights (ANE045, ANE079), not tensors the program computes */
	if (ali_node_is_const(n) || is_type(n, "loadConstant") || is_type(n, "loadConstantND"))
		return;
	struct al_shape sh;
	for (uint32_t i = 0; i < n->n_outputs; i++)
		if (ali_rx_out_shape(n, i, &sh))
			consider(h, n, n->outputs[i], false, &sh);
	for (uint32_t i = 0; i < n->n_inputs; i++)
		if (n->inputs[i] && ali_rx_input(h->s, n->inputs[i]) && ali_rx_in_shape(n, i, &sh))
			consider(h, n, n->inputs[i], true, &sh);
}

bool ali_rp_model_tensor_huge(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_submodel *s = c->s;
	if (s->world != AL_WORLD_MIL && s->world != AL_WORLD_NN)
		return false;
	struct tensor_hit h = {.s = s, .bytes = -1};
	ali_walk_nodes(s, find_tensor, &h);
	if (!h.n || h.bytes <= TENSOR_BYTES_RAN)
		return false;
	char b[160];
	return ali_rx_say(reason, cap, "tensor '%s' %s (%s %s) holds %.0f MB: more than the 268 MB (256 MiB) "
			 "seen running on the ANE; a model whose input alone held 186 MB failed the ANE "
			 "compile, and where the limit lies is not known", h.name ? h.name : "?",
			 ali_rx_shape_str(b, sizeof b, &h.shape),
			 h.input ? "the model input of" : "an output of", h.n->type ? h.n->type : "?",
			 h.bytes / 1e6);
}

/* ================================================================ ANE079: weights near the limit */

/* FluidAudio's int8 encoder (568 MB) ran on the ANE; above 1 GiB ANE045 decides. */
#define WEIGHTS_COMPILED UINT64_C(568000000)
#define WEIGHTS_IOS_LIMIT (UINT64_C(1) << 30)

bool ali_rp_model_weights_band(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_submodel *s = c->s;
	if (s->world != AL_WORLD_MIL && s->world != AL_WORLD_NN)
		return false;
	if (s->n_children > 0)
		return false; /* the stages carry the weights and are checked themselves */
	const struct al_weight_stats *w = &s->weights;
	uint64_t total = ali_rx_weights_total(w);
	if (total <= WEIGHTS_COMPILED || total > WEIGHTS_IOS_LIMIT)
		return false;
	return ali_rx_say(reason, cap, "weights of %.0f MB: between the 568 MB seen compiling for the "
			 "ANE and the 1 GiB of ANE045, where a 667 MB model was seen failing",
			 (double)total / 1e6);
}

/* ================================================================ ANE080: 8-bit palettized weights */

static void find_lut8(void *ctx, const struct al_node *n)
{
	const struct al_node **hit = ctx;
	struct ali_weight_form f;
	if (!*hit && is_type(n, "constexpr_lut_to_dense") && ali_mil_weight_info(n, &f) &&
	    f.storage == ALI_WS_LUT && f.bits == 8)
		*hit = n;
}

bool ali_rp_model_lut8(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_submodel *s = c->s;
	if (s->world != AL_WORLD_MIL)
		return false;
	const struct al_node *n = NULL;
	ali_walk_nodes(s, find_lut8, &n);
	if (!n)
		return false;
	return ali_rx_say(reason, cap, "weight '%s' is palettized with 8-bit indices (a 256-entry "
			 "look-up table): such a model failed the ANE compile on an M5 Max and fell back "
			 "on an M4 under macOS 26", n->name ? n->name : "?");
}
