/* SPDX-License-Identifier: MIT */
/* rules_nn.c: the predicates of the NeuralNetwork rules (ANE001-019, 053-054 in
 * rules.def). Each reads one layer: its type (the layer table row), its parameters
 * (the layer-type sub-message, read on demand with pb.h; field numbers from
 * coreml-format-facts.md section 6), the target's caps and features, and, for two
 * rules, the layers and inferred shapes of its inputs (rules_shape.c has the rest).
 */
#include "rules.h"
#include "nn_params.h"

#include <math.h>
#include <string.h>

/* ================================================================ helpers */

static al_span params_of(const struct al_node *n)
{
	const struct al_node_src *src = al_src(n);
	return src ? src->params : (al_span){0};
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Whether n is a layer of kind k (AL_NNK_*). */
static bool is_kind(const struct al_node *n, int k)
{
	return n->kind == k;
}

/* Whether n's kind is one of kinds[0..count). */
static bool kind_in(const struct al_node *n, const int *kinds, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (n->kind == kinds[i])
			return true;
	return false;
}

/* A repeated unsigned field (n values v, as pb_get_varints counts them) as
 * int64 values, or `dflt` (n_dflt values) when absent. Returns the count
 * stored in out (<= max), 0 if malformed. */
static size_t dims_of(long n, const uint64_t *v, int64_t *out, size_t max, const int64_t *dflt,
		      size_t n_dflt)
{
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

static size_t get_dims(al_span msg, uint32_t num, int64_t *out, size_t max, const int64_t *dflt,
		       size_t n_dflt)
{
	uint64_t v[AL_RX_MAX_DIMS];
	long n = pb_get_varints(msg, num, v, AL_RX_MAX_DIMS);
	return dims_of(n, v, out, max, dflt, n_dflt);
}

/* The same of a typed repeated field (nn_params.h). */
static size_t typed_dims(const struct al_pb_u64s *r, int64_t *out, size_t max, const int64_t *dflt,
			 size_t n_dflt)
{
	_Static_assert(AL_NN_MAXV >= AL_RX_MAX_DIMS, "a typed field keeps what the rules read");
	return dims_of(r->n, r->v, out, max, dflt, n_dflt);
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
	al_span cls;
	if (pb_get_string(params_of(n), AL_NN_F_CUSTOM_CLASS_NAME, &cls) && cls.n)
		return ali_rx_say(reason, cap, "custom layer className '%.*s'", SPAN_ARGS(cls));
	return ali_rx_say(reason, cap, "custom layer (no className)");
}

bool ali_rp_nn_recurrent(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!(ali_rx_nn_flags(n) & AL_NNF_RNN))
		return false;
	struct al_nn_recurrent r;
	ali_nn_recurrent(n, &r);
	if (r.output_vector_size.has)
		return ali_rx_say(reason, cap, "%s outputVectorSize %llu runs step by step on the CPU",
				 n->type, (unsigned long long)r.output_vector_size.v);
	return ali_rx_say(reason, cap, "%s runs step by step on the CPU", n->type);
}

bool ali_rp_nn_gather(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!(ali_rx_nn_flags(n) & AL_NNF_GATHER))
		return false;
	const char *idx = n->n_inputs > 1 && n->inputs[1] ? n->inputs[1] : "?";
	uint64_t axis = 0; /* gather / gatherAlongAxis: axis (int64) */
	if (!is_kind(n, AL_NNK_gatherND)) {
		pb_get_varint(params_of(n), AL_NN_F_AXIS, &axis);
		return ali_rx_say(reason, cap, "%s axis %lld by runtime indices '%s'", n->type,
				 (long long)(int64_t)axis, idx);
	}
	return ali_rx_say(reason, cap, "%s by runtime indices '%s'", n->type, idx);
}

bool ali_rp_nn_dilated_conv(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	struct al_nn_convolution cv;
	if (!ali_nn_convolution(n, &cv))
		return false;
	if (al_pb_true(cv.is_deconvolution)) /* dilation is ignored there */
		return false;
	int64_t d[AL_RX_MAX_DIMS];
	size_t nd = typed_dims(&cv.dilation_factor, d, AL_RX_MAX_DIMS, ones2, 2);
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
	uint64_t axis = 0; /* axis (int64); absent = 0 */
	if (is_kind(n, AL_NNK_concatND) || is_kind(n, AL_NNK_splitND) || is_kind(n, AL_NNK_softmaxND)) {
		pb_get_varint(p, AL_NN_F_AXIS, &axis);
		return ali_rx_say(reason, cap, "layer type %s (axis %lld)", n->type,
				 (long long)(int64_t)axis);
	}
	if (is_kind(n, AL_NNK_loadConstantND)) {
		int64_t shape[AL_RX_MAX_DIMS];
		char b[160];
		size_t k = get_dims(p, AL_NN_F_LOAD_CONSTANT_SHAPE, shape, AL_RX_MAX_DIMS, NULL, 0);
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
	struct al_nn_pooling pl;
	if (!ali_nn_pooling(n, &pl))
		return false;
	if (al_pb_true(pl.global_pooling)) /* the window is the input */
		return false;
	int64_t k[AL_RX_MAX_DIMS];
	size_t nk = typed_dims(&pl.kernel_size, k, AL_RX_MAX_DIMS, threes2, 2); /* [H, W] */
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
	struct al_nn_pooling pl;
	if (!ali_nn_pooling(n, &pl))
		return 0;
	if (al_pb_true(pl.global_pooling))
		return 0;
	return typed_dims(&pl.stride, st, AL_RX_MAX_DIMS, ones2, 2); /* [H, W] */
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
	struct al_nn_upsample up;
	if (!ali_nn_upsample(n, &up))
		return false;
	const float *fr = up.fractional_scaling_factor.v;
	long nf = up.fractional_scaling_factor.n;
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
	size_t k = typed_dims(&up.scaling_factor, f, AL_RX_MAX_DIMS, ones2, 2); /* [H, W] */
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
	if (is_kind(p, AL_NNK_loadConstant) || is_kind(p, AL_NNK_loadConstantND)) {
		size_t k = get_dims(params_of(p), AL_NN_F_LOAD_CONSTANT_SHAPE, shape, AL_RX_MAX_DIMS, NULL, 0);
		if (k == 0 || (is_kind(p, AL_NNK_loadConstant) && k != 3))
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
	if (!is_kind(n, AL_NNK_multiply) || n->n_inputs != 2)
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
	if (!is_kind(n, AL_NNK_batchedMatmul) || n->n_inputs < 2)
		return false;
	return ali_rx_say(reason, cap, "batchedMatmul of two runtime inputs '%s' x '%s' (no weights)",
			 n->inputs[0] ? n->inputs[0] : "?", n->inputs[1] ? n->inputs[1] : "?");
}

bool ali_rp_nn_bn_after_conv(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	struct al_nn_batchnorm bn;
	if (!ali_nn_batchnorm(n, &bn) || n->n_inputs < 1)
		return false;
	/* computeMeanVar, instanceNormalization: not foldable */
	if (al_pb_true(bn.compute_mean_var) || al_pb_true(bn.instance_normalization))
		return false;
	const struct al_node *prod = ali_rx_producer(n, n->inputs[0]);
	if (!prod || !is_kind(prod, AL_NNK_convolution))
		return false;
	return ali_rx_say(reason, cap, "batchnorm follows convolution '%s' without being folded",
			 prod->name ? prod->name : "?");
}

bool ali_rp_nn_conv_width(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	struct al_nn_convolution cv;
	if (!ali_nn_convolution(n, &cv))
		return false;
	int64_t k[AL_RX_MAX_DIMS];
	size_t nk = typed_dims(&cv.kernel_size, k, AL_RX_MAX_DIMS, threes2, 2); /* [H,W] */
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
	static const int kinds[] = {AL_NNK_cumSum, AL_NNK_fillLike, AL_NNK_fillStatic, AL_NNK_fillDynamic,
				    AL_NNK_rangeStatic, AL_NNK_rangeDynamic};
	if (n->kind < 0 || !kind_in(n, kinds, N_OF(kinds)))
		return false;
	uint64_t axis;
	if (is_kind(n, AL_NNK_cumSum) && pb_get_varint(params_of(n), AL_NN_F_CUMSUM_AXIS, &axis))
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
	if (is_kind(n, AL_NNK_loop) && pb_get_varint(params_of(n), AL_NN_F_LOOP_MAX_ITERATIONS, &iters))
		return ali_rx_say(reason, cap, "loop (maxLoopIterations %llu) is run-time control flow",
				 (unsigned long long)iters);
	if (is_kind(n, AL_NNK_branch) && n->n_inputs > 0 && n->inputs[0])
		return ali_rx_say(reason, cap, "branch on '%s' is run-time control flow", n->inputs[0]);
	return ali_rx_say(reason, cap, "%s is run-time control flow", n->type);
}

bool ali_rp_nn_no_lowering(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	static const int kinds[] = {
		AL_NNK_oneHot, AL_NNK_matrixBandPart, AL_NNK_whereNonZero, AL_NNK_getShape,
		AL_NNK_reduceProd, AL_NNK_slidingWindows, AL_NNK_reverseSeq, AL_NNK_logicalAnd,
		AL_NNK_logicalOr, AL_NNK_logicalXor, AL_NNK_tan, AL_NNK_asin, AL_NNK_acos, AL_NNK_sinh,
		AL_NNK_cosh, AL_NNK_asinh, AL_NNK_acosh, AL_NNK_atanh, AL_NNK_topK, AL_NNK_argSort};
	unsigned f = ali_rx_nn_flags(n);
	if (n->kind < 0 || !((f & (AL_NNF_SCATTER | AL_NNF_RANDOM)) || kind_in(n, kinds, N_OF(kinds))))
		return false;
	return ali_rx_say(reason, cap, "%s: its ML Program counterpart has no ANE lowering", n->type);
}

bool ali_rp_nn_norm_eps(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	float eps = 0.0f;
	bool present;
	struct al_nn_batchnorm bn;
	if (ali_nn_batchnorm(n, &bn)) {
		present = bn.epsilon.has;
		if (present)
			eps = bn.epsilon.v;
	} else if (is_kind(n, AL_NNK_layerNormalization)) {
		present = pb_get_float(params_of(n), AL_NN_F_LAYER_NORM_EPS, &eps);
	} else if (is_kind(n, AL_NNK_mvn)) {
		uint64_t nv = 0; /* normalizeVariance: epsilon is used only then */
		if (!pb_get_varint(params_of(n), AL_NN_F_MVN_NORMALIZE_VARIANCE, &nv) || !nv)
			return false;
		present = pb_get_float(params_of(n), AL_NN_F_MVN_EPSILON, &eps);
	} else {
		return false;
	}
	if (!(eps < 1e-7f) || isnan(eps))
		return false;
	if (!present)
		return ali_rx_say(reason, cap, "%s epsilon 0 (absent) < 1e-7", n->type);
	return ali_rx_say(reason, cap, "%s epsilon %g < 1e-7", n->type, (double)eps);
}

/* ================================================================ ANE053-054: family-gated layers */

bool ali_rp_nn_trig(const struct al_rctx *c, char *reason, size_t cap)
{
	static const int kinds[] = {AL_NNK_sin, AL_NNK_cos};
	const struct al_node *n = c->n;
	if (n->kind < 0 || !kind_in(n, kinds, N_OF(kinds)) || (c->t->features & AL_TF_TRIG))
		return false;
	return ali_rx_say(reason, cap, "%s: no native sin/cos before H15 (target %s, %s)", n->type,
			 c->t->id, c->t->arch);
}

bool ali_rp_nn_texture(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!is_kind(n, AL_NNK_cropResize) || (c->t->features & AL_TF_TEXTURE))
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
	struct al_nn_pooling pl;
	if (!ali_nn_pooling(n, &pl))
		return false;
	if (!al_pb_true(pl.global_pooling) || (pl.type.has && pl.type.v != 1))
		return false; /* type AVERAGE = 1; MAX = 0 is the protobuf default */
	if (!pl.type.present || !pl.valid.present) /* padding oneof: valid */
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
