/* SPDX-License-Identifier: MIT */
/* rules_nn.c: the predicates of the NeuralNetwork rules (ANE001-019, 053-054 in
 * rules.def). Each reads one layer: its type (the layer table row), its parameters
 * (the layer-type sub-message, read on demand with pb.h; field numbers from
 * coreml-format-facts.md section 6), the target's caps and features, and, for two
 * rules, the layers and inferred shapes of its inputs (rules_shape.c has the rest).
 */
#include "rules.h"

#include <math.h>
#include <string.h>

/* ================================================================ helpers */

static al_span params_of(const struct al_node *n)
{
	const struct al_node_src *src = al_src(n);
	return src ? src->params : (al_span){0};
}

static bool is_type(const struct al_node *n, const char *type)
{
	return n->type && ali_str_eq(n->type, type);
}

/* Repeated unsigned field `num` as int64 values, or `dflt` (n_dflt values)
 * when absent. Returns the count stored in out (<= max), 0 if malformed. */
static size_t get_dims(al_span msg, uint32_t num, int64_t *out, size_t max, const int64_t *dflt,
		       size_t n_dflt)
{
	uint64_t v[AL_RX_MAX_DIMS];
	long n = pb_get_varints(msg, num, v, AL_RX_MAX_DIMS);
	if (n < 0)
		return 0;
	if (n == 0) {
		size_t k = n_dflt < max ? n_dflt : max;
		for (size_t i = 0; i < k; i++)
			out[i] = dflt[i];
		return k;
	}
	size_t k = (size_t)n < max ? (size_t)n : max;
	if (k > AL_RX_MAX_DIMS)
		k = AL_RX_MAX_DIMS;
	for (size_t i = 0; i < k; i++)
		out[i] = v[i] > INT64_MAX ? INT64_MAX : (int64_t)v[i];
	return k;
}

static const int64_t ones2[2] = {1, 1}, threes2[2] = {3, 3};

/* A string field as "%.*s" arguments, bounded for one-line reasons. */
#define SPAN_ARGS(s) (int)((s).n > 80 ? 80 : (s).n), (const char *)(s).p

static bool ends_with_nd(const char *t)
{
	size_t n = t ? strlen(t) : 0;
	return n > 2 && strcmp(t + n - 2, "ND") == 0;
}

/* ================================================================ ANE001-007: layer types */

bool ali_rp_nn_custom(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!(ali_rx_nn_flags(n) & AL_NNF_CUSTOM))
		return false;
	al_span cls; /* CustomLayerParams.className = 10 */
	if (pb_get_string(params_of(n), 10, &cls) && cls.n)
		return ali_rx_say(reason, cap, "custom layer className '%.*s'", SPAN_ARGS(cls));
	return ali_rx_say(reason, cap, "custom layer (no className)");
}

bool ali_rp_nn_recurrent(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!(ali_rx_nn_flags(n) & AL_NNF_RNN))
		return false;
	uint64_t size = 0; /* outputVectorSize = 2 in all four recurrent params */
	if (pb_get_varint(params_of(n), 2, &size))
		return ali_rx_say(reason, cap, "%s outputVectorSize %llu runs step by step on the CPU",
				 n->type, (unsigned long long)size);
	return ali_rx_say(reason, cap, "%s runs step by step on the CPU", n->type);
}

bool ali_rp_nn_gather(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!(ali_rx_nn_flags(n) & AL_NNF_GATHER))
		return false;
	const char *idx = n->n_inputs > 1 && n->inputs[1] ? n->inputs[1] : "?";
	uint64_t axis = 0; /* gather / gatherAlongAxis: axis = 1 (int64) */
	if (!is_type(n, "gatherND")) {
		pb_get_varint(params_of(n), 1, &axis);
		return ali_rx_say(reason, cap, "%s axis %lld by runtime indices '%s'", n->type,
				 (long long)(int64_t)axis, idx);
	}
	return ali_rx_say(reason, cap, "%s by runtime indices '%s'", n->type, idx);
}

bool ali_rp_nn_dilated_conv(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!is_type(n, "convolution"))
		return false;
	al_span p = params_of(n);
	uint64_t deconv = 0; /* isDeconvolution = 60: dilation is ignored there */
	if (pb_get_varint(p, 60, &deconv) && deconv)
		return false;
	int64_t d[AL_RX_MAX_DIMS];
	size_t nd = get_dims(p, 40, d, AL_RX_MAX_DIMS, ones2, 2); /* dilationFactor */
	for (size_t i = 0; i < nd; i++) {
		if (d[i] > 1) {
			char b[96];
			return ali_rx_say(reason, cap, "convolution dilationFactor %s",
					 ali_rx_ints(b, sizeof b, d, nd));
		}
	}
	return false;
}

bool ali_rp_nn_broadcastable(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!(ali_rx_nn_flags(n) & AL_NNF_BROADCASTABLE))
		return false;
	return ali_rx_say(reason, cap, "layer type %s (general-rank broadcasting)", n->type);
}

bool ali_rp_nn_nd_layer(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (n->kind < 0 || !ends_with_nd(n->type))
		return false;
	al_span p = params_of(n);
	uint64_t axis = 0; /* axis = 1 (int64); absent = 0 */
	if (is_type(n, "concatND") || is_type(n, "splitND") || is_type(n, "softmaxND")) {
		pb_get_varint(p, 1, &axis);
		return ali_rx_say(reason, cap, "layer type %s (axis %lld)", n->type,
				 (long long)(int64_t)axis);
	}
	if (is_type(n, "loadConstantND")) {
		int64_t shape[AL_RX_MAX_DIMS];
		char b[160];
		size_t k = get_dims(p, 1, shape, AL_RX_MAX_DIMS, NULL, 0);
		return ali_rx_say(reason, cap, "layer type loadConstantND (shape %s)",
				 ali_rx_ints(b, sizeof b, shape, k));
	}
	return ali_rx_say(reason, cap, "layer type %s (general-rank)", n->type);
}

bool ali_rp_nn_general_rank(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	unsigned f = ali_rx_nn_flags(n);
	if (!(f & AL_NNF_ND) || (f & AL_NNF_BROADCASTABLE) || ends_with_nd(n->type))
		return false;
	/* a layer that a specific rule already decides needs no "unverified" note */
	if (ali_rp_nn_gather(c, NULL, 0) || ali_rp_nn_bmm_dynamic(c, NULL, 0) ||
	    ali_rp_nn_cpu_only(c, NULL, 0) || ali_rp_nn_control_flow(c, NULL, 0) ||
	    ali_rp_nn_no_lowering(c, NULL, 0) || ali_rp_nn_trig(c, NULL, 0))
		return false;
	return ali_rx_say(reason, cap, "%s is a Core ML 3 general-rank layer; ANE support unverified",
			 n->type);
}

/* ================================================================ ANE008-010: windows and factors */

bool ali_rp_nn_pool_kernel(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!is_type(n, "pooling"))
		return false;
	al_span p = params_of(n);
	uint64_t global = 0; /* globalPooling = 60: the window is the input */
	if (pb_get_varint(p, 60, &global) && global)
		return false;
	int64_t k[AL_RX_MAX_DIMS];
	size_t nk = get_dims(p, 10, k, AL_RX_MAX_DIMS, threes2, 2); /* kernelSize [H, W] */
	for (size_t i = 0; i < nk; i++) {
		if (k[i] > 13) {
			char b[96];
			return ali_rx_say(reason, cap, "pooling kernel %s > 13",
					 ali_rx_dims(b, sizeof b, k, nk));
		}
	}
	return false;
}

/* The strides of a pooling layer that is not global; 0 when n is not one. */
static size_t pool_strides(const struct al_node *n, int64_t st[AL_RX_MAX_DIMS])
{
	if (!is_type(n, "pooling"))
		return 0;
	al_span p = params_of(n);
	uint64_t global = 0;
	if (pb_get_varint(p, 60, &global) && global)
		return 0;
	return get_dims(p, 20, st, AL_RX_MAX_DIMS, ones2, 2); /* stride [H, W] */
}

bool ali_rp_nn_pool_stride(const struct al_rctx *c, char *reason, size_t cap)
{
	int64_t st[AL_RX_MAX_DIMS];
	size_t ns = pool_strides(c->n, st);
	for (size_t i = 0; i < ns; i++) {
		if (st[i] > 2 && st[i] != 4) {
			char b[96];
			return ali_rx_say(reason, cap, "pooling stride %s (ANE: 1, 2 or 4)",
					 ali_rx_dims(b, sizeof b, st, ns));
		}
	}
	return false;
}

/* Stride 4 where every other stride is one the ANE takes (ANE009 has the rest). */
bool ali_rp_nn_pool_stride4(const struct al_rctx *c, char *reason, size_t cap)
{
	int64_t st[AL_RX_MAX_DIMS];
	size_t ns = pool_strides(c->n, st);
	bool four = false;
	for (size_t i = 0; i < ns; i++) {
		if (st[i] > 2 && st[i] != 4)
			return false;
		four |= st[i] == 4;
	}
	char b[96];
	return four && ali_rx_say(reason, cap, "pooling stride %s (%s: stride > 2 refused)",
				 ali_rx_dims(b, sizeof b, st, ns), ali_rx_os(c)->name);
}

bool ali_rp_nn_upsample(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!is_type(n, "upsample"))
		return false;
	al_span p = params_of(n);
	float fr[AL_RX_MAX_DIMS];
	long nf = pb_get_floats(p, 7, fr, AL_RX_MAX_DIMS); /* fractionalScalingFactor */
	if (nf > 0) {
		size_t k = (size_t)nf < AL_RX_MAX_DIMS ? (size_t)nf : AL_RX_MAX_DIMS;
		for (size_t i = 0; i < k; i++) {
			if (fr[i] > 2.0f || fr[i] != floorf(fr[i])) {
				if (k >= 2)
					return ali_rx_say(reason, cap,
							 "upsample fractionalScalingFactor %gx%g (only 2 is "
							 "supported)", (double)fr[0], (double)fr[1]);
				return ali_rx_say(reason, cap,
						 "upsample fractionalScalingFactor %g (only 2 is supported)",
						 (double)fr[0]);
			}
		}
		return false;
	}
	int64_t f[AL_RX_MAX_DIMS];
	size_t k = get_dims(p, 1, f, AL_RX_MAX_DIMS, ones2, 2); /* scalingFactor [H, W] */
	for (size_t i = 0; i < k; i++) {
		if (f[i] > 2) {
			char b[96];
			return ali_rx_say(reason, cap, "upsample scalingFactor %s (only 2 is supported)",
					 ali_rx_dims(b, sizeof b, f, k));
		}
	}
	return false;
}

/* ================================================================ ANE011: channel-broadcast multiply */

/* The (C, H, W) of a blob: a model input or a loadConstant / loadConstantND
 * output as the file declares it, else the shape inferred for its producer.
 * Legacy layers read the last three axes as C, H, W (missing leading axes are
 * 1). */
struct chw {
	int64_t c, h, w;
	bool constant;
};

static bool last3(const int64_t *v, size_t n, struct chw *out)
{
	int64_t d[3] = {1, 1, 1};
	for (size_t i = 0; i < 3 && i < n; i++)
		d[2 - i] = v[n - 1 - i];
	if (d[0] <= 0 || d[1] <= 0 || d[2] <= 0)
		return false;
	out->c = d[0];
	out->h = d[1];
	out->w = d[2];
	return true;
}

static bool input_chw(const struct al_submodel *s, const struct al_feature *f, struct chw *out)
{
	if (f->flex != AL_FLEX_NONE || !f->shape)
		return false; /* flexible shapes: the default alone does not decide */
	if (f->kind == AL_FEAT_IMAGE && f->rank == 2) {
		int64_t v[3] = {f->color_space == 10 || f->color_space == 40 ? 1 : 3, f->shape[0],
				f->shape[1]};
		return last3(v, 3, out);
	}
	if (f->kind != AL_FEAT_MULTIARRAY || f->rank == 0)
		return false;
	if (s->array_mapping == 0) { /* RANK5: [C] -> C,1,1; [C,H,W] as is */
		if (f->rank == 1) {
			int64_t v[3] = {f->shape[0], 1, 1};
			return last3(v, 3, out);
		}
		return f->rank == 3 && last3(f->shape, 3, out);
	}
	return last3(f->shape, f->rank, out); /* EXACT: the rank passes through */
}

/* From the shape inferred for input i of n: known and not flexible in its last three axes. */
static bool inferred_chw(const struct al_node *n, uint32_t i, struct chw *out)
{
	struct al_shape sh;
	if (!ali_rx_in_shape(n, i, &sh) || sh.rank < 1 || sh.rank > AL_SHAPE_MAX_RANK)
		return false;
	for (int k = sh.rank - 3 < 0 ? 0 : sh.rank - 3; k < sh.rank; k++)
		if (sh.dims[k] < 0 || (sh.flex >> k) & 1u)
			return false;
	return last3(sh.dims, (size_t)sh.rank, out);
}

static bool blob_chw(const struct al_node *n, const struct al_submodel *s, uint32_t i,
		     struct chw *out)
{
	memset(out, 0, sizeof *out);
	const char *name = i < n->n_inputs ? n->inputs[i] : NULL;
	if (!name)
		return false;
	const struct al_node *p = ali_rx_producer(n, name);
	if (!p) {
		const struct al_feature *f = n->owner && n->owner->depth == 0 ? ali_rx_input(s, name)
									       : NULL;
		return f && input_chw(s, f, out);
	}
	int64_t shape[AL_RX_MAX_DIMS];
	if (is_type(p, "loadConstant") || is_type(p, "loadConstantND")) {
		size_t k = get_dims(params_of(p), 1, shape, AL_RX_MAX_DIMS, NULL, 0);
		if (k == 0 || (is_type(p, "loadConstant") && k != 3))
			return false;
		out->constant = true;
		return last3(shape, k, out);
	}
	return inferred_chw(n, i, out); /* produced by another layer */
}

bool ali_rp_nn_channel_mul(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	const struct al_submodel *s = c->s;
	if (!is_type(n, "multiply") || n->n_inputs != 2)
		return false;
	struct chw a, b;
	if (!blob_chw(n, s, 0, &a) || !blob_chw(n, s, 1, &b))
		return false;
	for (int swap = 0; swap < 2; swap++) {
		const struct chw *full = swap ? &b : &a, *vec = swap ? &a : &b;
		const char *vname = n->inputs[swap ? 0 : 1];
		/* h, w > 0 (last3); not h * w > 1: declared dims reach 2^63 - 1 and the
		 * product would overflow */
		if (full->c == vec->c && vec->c > 1 && vec->h == 1 && vec->w == 1 &&
		    (full->h > 1 || full->w > 1) && !vec->constant)
			return ali_rx_say(reason, cap,
					 "multiply %lldx%lldx%lld by non-constant %lldx1x1 '%s'",
					 (long long)full->c, (long long)full->h, (long long)full->w,
					 (long long)vec->c, vname);
	}
	return false;
}

/* ================================================================ ANE012-014 */

bool ali_rp_nn_bmm_dynamic(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!is_type(n, "batchedMatmul") || n->n_inputs < 2)
		return false;
	return ali_rx_say(reason, cap, "batchedMatmul of two runtime inputs '%s' x '%s' (no weights)",
			 n->inputs[0] ? n->inputs[0] : "?", n->inputs[1] ? n->inputs[1] : "?");
}

bool ali_rp_nn_bn_after_conv(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!is_type(n, "batchnorm") || n->n_inputs < 1)
		return false;
	al_span p = params_of(n);
	uint64_t v = 0; /* computeMeanVar = 5, instanceNormalization = 6: not foldable */
	if ((pb_get_varint(p, 5, &v) && v) || (pb_get_varint(p, 6, &v) && v))
		return false;
	const struct al_node *prod = ali_rx_producer(n, n->inputs[0]);
	if (!prod || !is_type(prod, "convolution"))
		return false;
	return ali_rx_say(reason, cap, "batchnorm follows convolution '%s' without being folded",
			 prod->name ? prod->name : "?");
}

bool ali_rp_nn_conv_width(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!is_type(n, "convolution"))
		return false;
	int64_t k[AL_RX_MAX_DIMS];
	size_t nk = get_dims(params_of(n), 20, k, AL_RX_MAX_DIMS, threes2, 2); /* kernelSize [H,W] */
	if (nk < 2 || k[1] <= (int64_t)c->t->conv_kw_cap)
		return false;
	return ali_rx_say(reason, cap, "convolution kernel width %lld > %u on %s (kernelSize %lldx%lld)",
			 (long long)k[1], c->t->conv_kw_cap, c->t->id, (long long)k[0],
			 (long long)k[1]);
}

/* ================================================================ ANE015-018 */

bool ali_rp_nn_cpu_only(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	static const char *const types[] = {"cumSum", "fillLike", "fillStatic", "fillDynamic",
					    "rangeStatic", "rangeDynamic", NULL};
	if (n->kind < 0 || !ali_rx_type_in(n, types))
		return false;
	uint64_t axis;
	if (is_type(n, "cumSum") && pb_get_varint(params_of(n), 1, &axis))
		return ali_rx_say(reason, cap, "cumSum axis %lld runs on the CPU",
				 (long long)(int64_t)axis);
	return ali_rx_say(reason, cap, "%s runs on the CPU", n->type);
}

bool ali_rp_nn_control_flow(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!(ali_rx_nn_flags(n) & AL_NNF_CONTROL))
		return false;
	uint64_t iters;
	if (is_type(n, "loop") && pb_get_varint(params_of(n), 1, &iters))
		return ali_rx_say(reason, cap, "loop (maxLoopIterations %llu) is run-time control flow",
				 (unsigned long long)iters);
	if (is_type(n, "branch") && n->n_inputs > 0 && n->inputs[0])
		return ali_rx_say(reason, cap, "branch on '%s' is run-time control flow", n->inputs[0]);
	return ali_rx_say(reason, cap, "%s is run-time control flow", n->type);
}

bool ali_rp_nn_no_lowering(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	static const char *const types[] = {
		"oneHot", "matrixBandPart", "whereNonZero", "getShape", "reduceProd",
		"slidingWindows", "reverseSeq", "logicalAnd", "logicalOr", "logicalXor", "tan",
		"asin", "acos", "sinh", "cosh", "asinh", "acosh", "atanh", "topK", "argSort", NULL};
	unsigned f = ali_rx_nn_flags(n);
	if (n->kind < 0 || !((f & (AL_NNF_SCATTER | AL_NNF_RANDOM)) || ali_rx_type_in(n, types)))
		return false;
	return ali_rx_say(reason, cap, "%s: its ML Program counterpart has no ANE lowering", n->type);
}

bool ali_rp_nn_norm_eps(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	uint32_t field;
	if (is_type(n, "batchnorm")) {
		field = 10; /* BatchnormLayerParams.epsilon */
	} else if (is_type(n, "layerNormalization")) {
		field = 2; /* LayerNormalizationLayerParams.eps */
	} else if (is_type(n, "mvn")) {
		uint64_t nv = 0; /* normalizeVariance = 2: epsilon is used only then */
		if (!pb_get_varint(params_of(n), 2, &nv) || !nv)
			return false;
		field = 3;
	} else {
		return false;
	}
	float eps = 0.0f;
	bool present = pb_get_float(params_of(n), field, &eps);
	if (!(eps < 1e-7f) || isnan(eps))
		return false;
	if (!present)
		return ali_rx_say(reason, cap, "%s epsilon 0 (absent) < 1e-7", n->type);
	return ali_rx_say(reason, cap, "%s epsilon %g < 1e-7", n->type, (double)eps);
}

/* ================================================================ ANE053-054: family-gated layers */

bool ali_rp_nn_trig(const struct al_rctx *c, char *reason, size_t cap)
{
	static const char *const types[] = {"sin", "cos", NULL};
	const struct al_node *n = c->n;
	if (n->kind < 0 || !ali_rx_type_in(n, types) || (c->t->features & AL_TF_TRIG))
		return false;
	return ali_rx_say(reason, cap, "%s: no native sin/cos before H15 (target %s, %s)", n->type,
			 c->t->id, c->t->arch);
}

bool ali_rp_nn_texture(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!is_type(n, "cropResize") || (c->t->features & AL_TF_TEXTURE))
		return false;
	return ali_rx_say(reason, cap, "cropResize needs the texture engine of H14+ (target %s, %s)",
			 c->t->id, c->t->arch);
}

/* hollance #1: a global AVERAGE pool with VALID padding over more than 13 x 13
 * (its window is the whole input) failed ANE validation ("kernel size > 13") and
 * kept the convolution before it off the ANE too. Fires on the pool and on the
 * layer whose output it pools; the input's spatial size comes from shape
 * inference (no rule when unknown). */
static bool is_global_avg_valid(const struct al_node *n, int64_t *h, int64_t *w)
{
	if (!is_type(n, "pooling"))
		return false;
	al_span p = params_of(n);
	uint64_t global = 0, type = 0;
	if (!pb_get_varint(p, 60, &global) || !global || (pb_get_varint(p, 1, &type) && type != 1))
		return false; /* type AVERAGE = 1; MAX = 0 is the protobuf default */
	if (!pb_has(p, 1) || !pb_has(p, 30)) /* padding oneof: valid = 30 */
		return false;
	struct al_shape s;
	if (!ali_rx_in_shape(n, 0, &s) || s.rank < 2)
		return false;
	*h = s.dims[s.rank - 2];
	*w = s.dims[s.rank - 1];
	return (*h > 13 || *w > 13);
}

bool ali_rp_nn_global_avg_valid(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	int64_t h = 0, w = 0;
	if (is_global_avg_valid(n, &h, &w))
		return ali_rx_say(reason, cap, "global average pooling with VALID padding over %lldx%lld "
				 "(window > 13)", (long long)h, (long long)w);
	const struct al_graph *g = n->owner;
	for (uint32_t i = n->index + 1; g && i < g->n_nodes; i++) {
		const struct al_node *x = &g->nodes[i];
		if (x->n_inputs == 0 || n->n_outputs == 0 || !x->inputs[0] ||
		    strcmp(x->inputs[0], n->outputs[0]) != 0 || !is_global_avg_valid(x, &h, &w))
			continue;
		return ali_rx_say(reason, cap, "feeds '%s', a global average pooling with VALID padding "
				 "over %lldx%lld that pulls its producer off the ANE", x->name ? x->name : "?",
				 (long long)h, (long long)w);
	}
	return false;
}

/* ANE057: a layer of a compiled espresso net whose type/code maps onto no
 * NeuralNetwork kind (espresso.c names it "espresso.<type>"). */
bool ali_rp_nn_espresso_unknown(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (n->kind >= 0 || !n->type || strncmp(n->type, "espresso.", 9) != 0)
		return false;
	return ali_rx_say(reason, cap, "espresso type %s: the compiled form does not say what it is",
			 n->type + 9);
}
