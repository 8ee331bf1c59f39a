/* SPDX-License-Identifier: MIT */
/* interp_nn.c: ali_nn_exec, the NeuralNetwork executor.
 *
 * It maps the model's inputs to the network's blob layout (images get the
 * NeuralNetworkPreprocessing scaler / mean image; RANK5 array mapping turns a [C] or
 * [C,H,W] multi-array into [1,1,C,H,W], RANK5 image mapping an image into
 * [1,1,C,H,W]), runs the layers in file order in a scope of its own (branch and loop
 * bodies share it, as NeuralNetwork.proto says their blobs are visible to the whole
 * network), and leaves the output features in x->env: reshaped to the declared shape
 * when the file declares one, the classifier's label and probability dictionary
 * built from the class labels. The layers live in interp_nn_ops.c, interp_nn_data.c
 * and interp_nn_rnn.c; this file holds the table that maps a layer's kind to its
 * function, the weight reader and the helpers the layers share.
 *
 * It does not: run custom layers, random layers, NonMaximumSuppression, cropResize,
 * 3-D convolution / pooling or slidingWindows (AL_E_UNSUPPORTED naming the layer),
 * nor the int8DynamicQuantize path of innerProduct / batchedMatmul.
 *
 * Path through this file:
 *   ali_nn_exec   bind_input per input feature (preprocess: scaler / mean
 *                image), last_use_build, run_graph: run_layer per layer (the
 *                kind-indexed table, ali_exec_node_done, blob lifetimes; branch
 *                and loop bodies through run_graph again), then bind_output per
 *                output feature (reshape, image outputs, classify for a
 *                classifier's label and probabilities)
 */
#include "interp_nn.h"
#include "coreml_fields.h"

#include <math.h>
#include <string.h>

/* field names, shortened (src/format/coreml_fields.h) */
#define NNC(f) AL_PB_NeuralNetworkClassifier_##f
#define SCALER(f) AL_PB_NeuralNetworkImageScaler_##f

/* ================================================================ the model message */

/* The NeuralNetwork / NeuralNetworkClassifier / NeuralNetworkRegressor message of
 * sub-model s. The loader keeps only the layers' spans; the message around them is
 * found again from the Model message at s->offset, reading only bytes before the
 * first layer (which are in the buffer: that layer is). Empty when s has no layers. */
static al_span nn_body(const struct al_submodel *s)
{
	al_span none = {0};
	if (!s || s->n_graphs < 1 || !s->graphs[0] || s->graphs[0]->n_nodes == 0)
		return none;
	const struct al_node *n0 = &s->graphs[0]->nodes[0];
	const struct al_node_src *src = al_src(n0);
	if (!src || !src->msg.p || n0->offset < s->offset)
		return none;
	const uint8_t *layer = src->msg.p;
	const uint8_t *model = layer - (n0->offset - s->offset);
	size_t lim = (size_t)(n0->offset - s->offset), pos = 0;
	while (pos < lim) {
		uint64_t tag, len = 0;
		if (pb_varint(model, lim, &pos, &tag) != PB_OK)
			return none;
		uint32_t num = (uint32_t)(tag >> 3);
		switch (tag & 7) {
		case PB_VARINT:
			if (pb_varint(model, lim, &pos, &len) != PB_OK)
				return none;
			break;
		case PB_FIXED64:
			pos += 8;
			break;
		case PB_FIXED32:
			pos += 4;
			break;
		case PB_LEN:
			if (pb_varint(model, lim, &pos, &len) != PB_OK)
				return none;
			if (len > lim - pos) { /* runs past the first layer: it holds the layers */
				if (num == 500 || num == 403 || num == 303)
					return (al_span){model + pos, (size_t)len};
				return none;
			}
			pos += (size_t)len;
			break;
		default:
			return none;
		}
	}
	return none;
}

/* ================================================================ the layer table */

static enum al_status run_graph(struct nn_run *r, const struct al_graph *g, int depth);

static bool truthy(const struct al_tensor *t)
{
	return t && t->f && t->n >= 1 && fabsf(t->f[0]) > 1e-6f;
}

/* BranchLayerParams: ifBranch = 1, elseBranch = 2; input: the condition scalar. */
static enum al_status nn_l_branch(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 0, 0);
	if (st)
		return st;
	const struct al_graph *g = ali_node_sub_graph(l->n, truthy(l->in[0]) ? "ifBranch" : "elseBranch");
	if (!g && truthy(l->in[0]))
		return nn_fail(l, AL_E_FORMAT, "the ifBranch network is missing");
	return g ? run_graph(l->r, g, l->depth + 1) : AL_OK;
}

/* Whether g or a graph nested in it holds a loopBreak (which may end a loop early). */
static bool has_break(const struct al_graph *g, int depth)
{
	for (uint32_t i = 0; g && i < g->n_nodes; i++) {
		const struct al_node *n = &g->nodes[i];
		if (depth > AL_MAX_DEPTH || (n->type && ali_nn_kind_by_name(n->type) == AL_NNK_loopBreak))
			return true;
		for (uint32_t k = 0; k < n->n_sub; k++)
			if (has_break(n->sub[k], depth + 1))
				return true;
	}
	return false;
}

/* LoopLayerParams: maxLoopIterations = 1, conditionVar = 2, conditionNetwork = 3,
 * bodyNetwork = 4; an optional input overrides maxLoopIterations. */
static enum al_status nn_l_loop(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 0, 1, 0, 0);
	if (st)
		return st;
	struct nn_run *r = l->r;
	const struct al_graph *cond = ali_node_sub_graph(l->n, "conditionNetwork");
	const struct al_graph *body = ali_node_sub_graph(l->n, "bodyNetwork");
	if (!body)
		return nn_fail(l, AL_E_FORMAT, "the bodyNetwork is missing");
	uint64_t max = nn_pu(l->p, AL_PB_LoopLayerParams_maxLoopIterations, 0);
	if (l->n_in == 1) {
		float v = l->in[0]->n ? l->in[0]->f[0] : 0.0f;
		max = !(v >= 1.0f) ? 0 : v >= 1e18f ? UINT64_MAX : (uint64_t)v;
	}
	al_span cvs = {0};
	pb_get_string(l->p, AL_PB_LoopLayerParams_conditionVar, &cvs);
	char *cvar = NULL;
	if (cvs.n) {
		cvar = ali_malloc(cvs.n + 1);
		if (!cvar)
			return nn_fail(l, AL_E_NOMEM, "out of memory");
		memcpy(cvar, cvs.p, cvs.n);
		cvar[cvs.n] = '\0';
	}
	bool has_cond = cond || cvar;
	if (cond && !cvar) {
		ali_free(cvar);
		return nn_fail(l, AL_E_FORMAT, "a conditionNetwork without a conditionVar");
	}
	bool bounded = l->n_in == 1 || max > 0 || !has_cond;
	/* no condition and no break: exactly max iterations, known before the first */
	if (bounded && !has_cond && !has_break(body, 0) && !ali_exec_loop_fits(r->x, l->n, max, body)) {
		ali_free(cvar);
		return AL_E_UNSUPPORTED;
	}
	r->loops++;
	for (uint64_t i = 0; st == AL_OK; i++) {
		if (bounded && i >= max)
			break;
		if (has_cond) {
			if (cond && (st = run_graph(r, cond, l->depth + 1)) != AL_OK)
				break;
			const struct al_tensor *c = ali_env_get(r->env, cvar);
			if (!c || c->kind != AL_TK_TENSOR || !c->f) {
				st = nn_fail(l, AL_E_FORMAT, "the condition '%s' is not produced", cvar);
				break;
			}
			if (!truthy(c))
				break;
		}
		if (!ali_exec_step(r->x, l->n)) {
			st = AL_E_UNSUPPORTED;
			break;
		}
		st = run_graph(r, body, l->depth + 1);
		if (r->flow == NN_FLOW_BREAK) {
			r->flow = NN_FLOW_NONE;
			break;
		}
		r->flow = NN_FLOW_NONE;
	}
	r->loops--;
	ali_free(cvar);
	return st;
}

static enum al_status flow(struct nn_layer *l, enum nn_flow f)
{
	enum al_status st = nn_arity(l, 0, 0, 0, 0);
	if (st)
		return st;
	if (!l->r->loops)
		return nn_fail(l, AL_E_FORMAT, "outside a loop");
	l->r->flow = f;
	return AL_OK;
}

static enum al_status nn_l_loop_break(struct nn_layer *l)
{
	return flow(l, NN_FLOW_BREAK);
}

static enum al_status nn_l_loop_continue(struct nn_layer *l)
{
	return flow(l, NN_FLOW_CONTINUE);
}

/* Layers whose output holds integers when their inputs do (data movement, and
 * integer arithmetic): such outputs keep an integer dtype, so fp16 mode does not
 * round shape and index values (docs/interpreter.md). NN_INTS: when every input
 * holds integers; NN_INTS0: when input 0 does (gathers, dynamic slices / reshapes /
 * broadcasts: input 0 holds the values). */
enum { NN_INTS = 1, NN_INTS0 = 2 };
#define WHY_CUSTOM " (custom layers run code that is not in the model file)"
#define WHY_RANDOM " (Core ML's random number generator cannot be reproduced)"

struct nn_row {
	nn_fn *fn;        /* NULL: not run, reported as unsupported naming the layer */
	unsigned ints;    /* NN_INTS, NN_INTS0 or 0 */
	const char *why;  /* why a layer without fn is not run ("" when not said) */
};

/* Indexed by kind (tests/unit/test_kinds.c lists the kinds without fn). Rows
 * leave out `why` (NULL) unless the layer is refused; clang's
 * -Wmissing-field-initializers would flag every row of the table for it. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct nn_row rows[AL_NNK_COUNT] = {
	[AL_NNK_convolution] = {nn_l_conv, 0}, [AL_NNK_pooling] = {nn_l_pool, 0},
	[AL_NNK_activation] = {nn_l_activation, 0}, [AL_NNK_innerProduct] = {nn_l_inner_product, 0},
	[AL_NNK_embedding] = {nn_l_embedding, 0}, [AL_NNK_batchnorm] = {nn_l_batchnorm, 0},
	[AL_NNK_mvn] = {nn_l_mvn, 0}, [AL_NNK_l2normalize] = {nn_l_l2normalize, 0},
	[AL_NNK_softmax] = {nn_l_softmax, 0}, [AL_NNK_lrn] = {nn_l_lrn, 0},
	[AL_NNK_crop] = {nn_l_crop, 0}, [AL_NNK_padding] = {nn_l_padding, 0},
	[AL_NNK_upsample] = {nn_l_upsample, 0}, [AL_NNK_resizeBilinear] = {nn_l_resize_bilinear, 0},
	[AL_NNK_unary] = {nn_l_unary, 0}, [AL_NNK_add] = {nn_l_add, NN_INTS},
	[AL_NNK_multiply] = {nn_l_multiply, NN_INTS}, [AL_NNK_average] = {nn_l_average, 0},
	[AL_NNK_scale] = {nn_l_scale, 0}, [AL_NNK_bias] = {nn_l_bias, 0},
	[AL_NNK_max] = {nn_l_max, NN_INTS}, [AL_NNK_min] = {nn_l_min, NN_INTS},
	[AL_NNK_dot] = {nn_l_dot, 0}, [AL_NNK_reduce] = {nn_l_reduce, 0},
	[AL_NNK_loadConstant] = {nn_l_load_constant, 0}, [AL_NNK_reshape] = {nn_l_reshape, NN_INTS},
	[AL_NNK_flatten] = {nn_l_flatten, NN_INTS}, [AL_NNK_permute] = {nn_l_permute, NN_INTS},
	[AL_NNK_concat] = {nn_l_concat, NN_INTS}, [AL_NNK_split] = {nn_l_split, NN_INTS},
	[AL_NNK_sequenceRepeat] = {nn_l_sequence_repeat, 0},
	[AL_NNK_reorganizeData] = {nn_l_reorganize, 0}, [AL_NNK_slice] = {nn_l_slice, NN_INTS},
	[AL_NNK_simpleRecurrent] = {nn_l_simple_rnn, 0}, [AL_NNK_gru] = {nn_l_gru, 0},
	[AL_NNK_uniDirectionalLSTM] = {nn_l_lstm, 0}, [AL_NNK_biDirectionalLSTM] = {nn_l_bilstm, 0},
	[AL_NNK_copy] = {nn_l_copy, NN_INTS}, [AL_NNK_branch] = {nn_l_branch, 0},
	[AL_NNK_loop] = {nn_l_loop, 0}, [AL_NNK_loopBreak] = {nn_l_loop_break, 0},
	[AL_NNK_loopContinue] = {nn_l_loop_continue, 0},
	[AL_NNK_rangeStatic] = {nn_l_range_static, 0},
	[AL_NNK_rangeDynamic] = {nn_l_range_dynamic, 0}, [AL_NNK_clip] = {nn_l_clip, 0},
	[AL_NNK_ceil] = {nn_l_unary_nd, 0}, [AL_NNK_floor] = {nn_l_unary_nd, 0},
	[AL_NNK_sign] = {nn_l_unary_nd, 0}, [AL_NNK_round] = {nn_l_unary_nd, 0},
	[AL_NNK_exp2] = {nn_l_unary_nd, 0}, [AL_NNK_sin] = {nn_l_unary_nd, 0},
	[AL_NNK_cos] = {nn_l_unary_nd, 0}, [AL_NNK_tan] = {nn_l_unary_nd, 0},
	[AL_NNK_asin] = {nn_l_unary_nd, 0}, [AL_NNK_acos] = {nn_l_unary_nd, 0},
	[AL_NNK_atan] = {nn_l_unary_nd, 0}, [AL_NNK_sinh] = {nn_l_unary_nd, 0},
	[AL_NNK_cosh] = {nn_l_unary_nd, 0}, [AL_NNK_tanh] = {nn_l_unary_nd, 0},
	[AL_NNK_asinh] = {nn_l_unary_nd, 0}, [AL_NNK_acosh] = {nn_l_unary_nd, 0},
	[AL_NNK_atanh] = {nn_l_unary_nd, 0}, [AL_NNK_erf] = {nn_l_unary_nd, 0},
	[AL_NNK_gelu] = {nn_l_gelu, 0}, [AL_NNK_equal] = {nn_l_compare, 0},
	[AL_NNK_notEqual] = {nn_l_compare, 0}, [AL_NNK_lessThan] = {nn_l_compare, 0},
	[AL_NNK_lessEqual] = {nn_l_compare, 0}, [AL_NNK_greaterThan] = {nn_l_compare, 0},
	[AL_NNK_greaterEqual] = {nn_l_compare, 0}, [AL_NNK_logicalOr] = {nn_l_logical, 0},
	[AL_NNK_logicalXor] = {nn_l_logical, 0}, [AL_NNK_logicalNot] = {nn_l_logical_not, 0},
	[AL_NNK_logicalAnd] = {nn_l_logical, 0},
	[AL_NNK_modBroadcastable] = {nn_l_broadcastable, NN_INTS},
	[AL_NNK_minBroadcastable] = {nn_l_broadcastable, NN_INTS},
	[AL_NNK_maxBroadcastable] = {nn_l_broadcastable, NN_INTS},
	[AL_NNK_addBroadcastable] = {nn_l_broadcastable, NN_INTS},
	[AL_NNK_powBroadcastable] = {nn_l_broadcastable, 0},
	[AL_NNK_divideBroadcastable] = {nn_l_broadcastable, 0},
	[AL_NNK_floorDivBroadcastable] = {nn_l_broadcastable, NN_INTS},
	[AL_NNK_multiplyBroadcastable] = {nn_l_broadcastable, NN_INTS},
	[AL_NNK_subtractBroadcastable] = {nn_l_broadcastable, NN_INTS},
	[AL_NNK_tile] = {nn_l_tile, NN_INTS0}, [AL_NNK_stack] = {nn_l_stack, NN_INTS},
	[AL_NNK_gather] = {nn_l_gather, NN_INTS0}, [AL_NNK_scatter] = {nn_l_scatter, 0},
	[AL_NNK_gatherND] = {nn_l_gather_nd, NN_INTS0}, [AL_NNK_scatterND] = {nn_l_scatter_nd, 0},
	[AL_NNK_softmaxND] = {nn_l_softmax_nd, 0},
	[AL_NNK_gatherAlongAxis] = {nn_l_gather_along_axis, NN_INTS0},
	[AL_NNK_scatterAlongAxis] = {nn_l_scatter_along_axis, 0},
	[AL_NNK_reverse] = {nn_l_reverse, NN_INTS}, [AL_NNK_reverseSeq] = {nn_l_reverse_seq, 0},
	[AL_NNK_splitND] = {nn_l_split_nd, NN_INTS}, [AL_NNK_concatND] = {nn_l_concat_nd, NN_INTS},
	[AL_NNK_transpose] = {nn_l_transpose, NN_INTS},
	[AL_NNK_sliceStatic] = {nn_l_slice_static, NN_INTS},
	[AL_NNK_sliceDynamic] = {nn_l_slice_dynamic, NN_INTS0}, [AL_NNK_topK] = {nn_l_topk, 0},
	[AL_NNK_argMin] = {nn_l_argminmax, 0}, [AL_NNK_argMax] = {nn_l_argminmax, 0},
	[AL_NNK_embeddingND] = {nn_l_embedding_nd, 0},
	[AL_NNK_batchedMatmul] = {nn_l_batched_matmul, 0}, [AL_NNK_getShape] = {nn_l_get_shape, 0},
	[AL_NNK_loadConstantND] = {nn_l_load_constant_nd, 0},
	[AL_NNK_fillLike] = {nn_l_fill_like, 0}, [AL_NNK_fillStatic] = {nn_l_fill_static, 0},
	[AL_NNK_fillDynamic] = {nn_l_fill_dynamic, 0},
	[AL_NNK_broadcastToLike] = {nn_l_broadcast_to_like, NN_INTS0},
	[AL_NNK_broadcastToStatic] = {nn_l_broadcast_to_static, NN_INTS},
	[AL_NNK_broadcastToDynamic] = {nn_l_broadcast_to_dynamic, NN_INTS0},
	[AL_NNK_squeeze] = {nn_l_squeeze, NN_INTS},
	[AL_NNK_expandDims] = {nn_l_expand_dims, NN_INTS},
	[AL_NNK_flattenTo2D] = {nn_l_flatten_to_2d, NN_INTS},
	[AL_NNK_reshapeLike] = {nn_l_reshape_like, NN_INTS0},
	[AL_NNK_reshapeStatic] = {nn_l_reshape_static, NN_INTS},
	[AL_NNK_reshapeDynamic] = {nn_l_reshape_dynamic, NN_INTS0},
	[AL_NNK_rankPreservingReshape] = {nn_l_rank_preserving_reshape, NN_INTS},
	[AL_NNK_constantPad] = {nn_l_constant_pad, 0}, [AL_NNK_reduceL1] = {nn_l_reduce_nd, 0},
	[AL_NNK_reduceL2] = {nn_l_reduce_nd, 0}, [AL_NNK_reduceMax] = {nn_l_reduce_nd, 0},
	[AL_NNK_reduceMin] = {nn_l_reduce_nd, 0}, [AL_NNK_reduceSum] = {nn_l_reduce_nd, 0},
	[AL_NNK_reduceProd] = {nn_l_reduce_nd, 0}, [AL_NNK_reduceMean] = {nn_l_reduce_nd, 0},
	[AL_NNK_reduceLogSum] = {nn_l_reduce_nd, 0}, [AL_NNK_reduceSumSquare] = {nn_l_reduce_nd, 0},
	[AL_NNK_reduceLogSumExp] = {nn_l_reduce_nd, 0},
	[AL_NNK_whereNonZero] = {nn_l_where_nonzero, 0},
	[AL_NNK_matrixBandPart] = {nn_l_band_part, 0},
	[AL_NNK_lowerTriangular] = {nn_l_band_part, 0},
	[AL_NNK_upperTriangular] = {nn_l_band_part, 0},
	[AL_NNK_whereBroadcastable] = {nn_l_where, 0},
	[AL_NNK_layerNormalization] = {nn_l_layer_norm, 0}, [AL_NNK_oneHot] = {nn_l_one_hot, 0},
	[AL_NNK_cumSum] = {nn_l_cumsum, 0}, [AL_NNK_clampedReLU] = {nn_l_clamped_relu, 0},
	[AL_NNK_argSort] = {nn_l_argsort, 0}, [AL_NNK_globalPooling3d] = {nn_l_global_pool3d, 0},
	[AL_NNK_sliceBySize] = {nn_l_slice_by_size, NN_INTS0},
	[AL_NNK_custom] = {NULL, 0, WHY_CUSTOM}, [AL_NNK_randomNormalLike] = {NULL, 0, WHY_RANDOM},
	[AL_NNK_randomNormalStatic] = {NULL, 0, WHY_RANDOM},
	[AL_NNK_randomNormalDynamic] = {NULL, 0, WHY_RANDOM},
	[AL_NNK_randomUniformLike] = {NULL, 0, WHY_RANDOM},
	[AL_NNK_randomUniformStatic] = {NULL, 0, WHY_RANDOM},
	[AL_NNK_randomUniformDynamic] = {NULL, 0, WHY_RANDOM},
	[AL_NNK_randomBernoulliLike] = {NULL, 0, WHY_RANDOM},
	[AL_NNK_randomBernoulliStatic] = {NULL, 0, WHY_RANDOM},
	[AL_NNK_randomBernoulliDynamic] = {NULL, 0, WHY_RANDOM},
	[AL_NNK_categoricalDistribution] = {NULL, 0, WHY_RANDOM},
};
#pragma GCC diagnostic pop
_Static_assert(sizeof rows / sizeof rows[0] == AL_NNK_COUNT, "one row per NN kind");

/* Layers whose work can grow past the values they read and write (windows,
 * matrix products, recurrences: FLOPs per output set by parameters or inputs),
 * or whose output size is set by parameters or values (resampling, tiles, pads,
 * gathers, fills): ali_exec_node_start estimates their work from the shapes they
 * are given before they run, when the shapes inferred before the run may not be
 * the run's. */
static const bool estimate_first[AL_NNK_COUNT] = {
	[AL_NNK_convolution] = true, [AL_NNK_pooling] = true, [AL_NNK_innerProduct] = true,
	[AL_NNK_batchedMatmul] = true, [AL_NNK_dot] = true, [AL_NNK_simpleRecurrent] = true,
	[AL_NNK_gru] = true, [AL_NNK_uniDirectionalLSTM] = true, [AL_NNK_biDirectionalLSTM] = true,
	[AL_NNK_upsample] = true, [AL_NNK_resizeBilinear] = true, [AL_NNK_padding] = true,
	[AL_NNK_constantPad] = true, [AL_NNK_tile] = true, [AL_NNK_sequenceRepeat] = true,
	[AL_NNK_gather] = true, [AL_NNK_gatherND] = true, [AL_NNK_gatherAlongAxis] = true,
	[AL_NNK_embedding] = true, [AL_NNK_embeddingND] = true, [AL_NNK_fillLike] = true,
	[AL_NNK_fillStatic] = true, [AL_NNK_fillDynamic] = true, [AL_NNK_broadcastToLike] = true,
	[AL_NNK_broadcastToStatic] = true, [AL_NNK_broadcastToDynamic] = true,
	[AL_NNK_oneHot] = true, [AL_NNK_topK] = true, [AL_NNK_argSort] = true,
};

long ali_nn_class_labels(const struct al_submodel *s, al_span *str, int64_t *ints, size_t max,
			 bool *is_int)
{
	al_span body = nn_body(s);
	bool strings = body.n && pb_has(body, NNC(stringClassLabels));
	bool isint = body.n && pb_has(body, NNC(int64ClassLabels));
	*is_int = isint && !strings;
	if (!strings && !isint)
		return -1;
	al_span vec = nn_psub(body, strings ? NNC(stringClassLabels) : NNC(int64ClassLabels));
	if (!strings) {
		long n = pb_get_varints(vec, AL_PB_Int64Vector_vector, NULL, 0);
		if (n > 0 && max) {
			uint64_t *u = ali_malloc((size_t)n * sizeof *u);
			if (u) {
				pb_get_varints(vec, AL_PB_Int64Vector_vector, u, (size_t)n);
				for (size_t i = 0; i < (size_t)n && i < max; i++)
					ints[i] = (int64_t)u[i];
				ali_free(u);
			}
		}
		return n;
	}
	struct pb_iter it;
	struct pb_field f;
	size_t i = 0;
	pb_iter_init(&it, vec);
	while (pb_next(&it, &f))
		if (f.num == AL_PB_StringVector_vector && f.wire == PB_LEN) {
			if (i < max)
				str[i] = f.data;
			i++;
		}
	return (long)i;
}

bool ali_nn_exec_has(int k)
{
	return k >= 0 && k < AL_NNK_COUNT && rows[k].fn;
}

const char *ali_nn_exec_why_not(int k)
{
	return k >= 0 && k < AL_NNK_COUNT && !rows[k].fn && rows[k].why ? rows[k].why : "";
}

/* ================================================================ running layers */

static bool int_dtype(int dt)
{
	return dt == AL_DT_INT8 || dt == AL_DT_INT16 || dt == AL_DT_INT32 || dt == AL_DT_INT64 ||
	       dt == AL_DT_UINT8 || dt == AL_DT_UINT16 || dt == AL_DT_UINT32 || dt == AL_DT_UINT64 ||
	       dt == AL_DT_BOOL;
}

/* After layer n ran: integer outputs for integer inputs (see NN_INTS). */
static void int_outputs(const struct nn_layer *l, int kind)
{
	if (!l->n_in || !rows[kind].ints)
		return;
	bool first_only = rows[kind].ints == NN_INTS0;
	for (uint32_t i = 0; i < (first_only ? 1 : l->n_in); i++)
		if (!int_dtype(l->in[i]->dtype))
			return;
	/* x + alpha, x * alpha */
	if ((kind == AL_NNK_add || kind == AL_NNK_multiply) && l->n_in == 1) {
		_Static_assert(AL_PB_AddLayerParams_alpha == AL_PB_MultiplyLayerParams_alpha, "alpha");
		float a = nn_pf(l->p, AL_PB_AddLayerParams_alpha, 0.0f);
		if (a != floorf(a))
			return;
	}
	for (uint32_t i = 0; i < l->n_out; i++)
		if (l->out[i] && l->out[i] != l->in[0])
			l->out[i]->dtype = AL_DT_INT32;
}

static enum al_status run_layer(struct nn_run *r, const struct al_node *n, int depth)
{
	struct al_exec *x = r->x;
	nn_fn *fn = ali_nn_exec_has(n->kind) ? rows[n->kind].fn : NULL;
	if (!fn)
		return ali_exec_fail(x, n, AL_E_UNSUPPORTED,
				    "layer type %s is not supported by the interpreter%s", nn_type_of(n),
				    ali_nn_exec_why_not(n->kind));
	const struct al_node_src *src = al_src(n);
	struct nn_layer l = {r, n, src ? src->params : (al_span){0}, depth, NULL, n->n_inputs,
			     NULL, n->n_outputs, false};
	enum al_status st = AL_OK;
	l.in = ali_calloc(n->n_inputs + 1u, sizeof *l.in);
	l.out = ali_calloc(n->n_outputs + 1u, sizeof *l.out);
	if (!l.in || !l.out) {
		st = ali_exec_fail(x, n, AL_E_NOMEM, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < n->n_inputs; i++) {
		struct al_tensor *t = ali_env_get(r->env, n->inputs[i]);
		if (!t) {
			st = ali_exec_fail(x, n, AL_E_FORMAT, "input '%s' of layer %s is not defined (no "
					  "model input or earlier layer produces it)", n->inputs[i],
					  nn_type_of(n));
			goto out;
		}
		if (t == r->tomb) {
			st = ali_exec_fail(x, n, AL_E_FORMAT, "input '%s' of layer %s was dropped after its "
					  "last use (interpreter bug)", n->inputs[i], nn_type_of(n));
			goto out;
		}
		if (t->kind != AL_TK_TENSOR || !t->f) {
			st = ali_exec_fail(x, n, AL_E_UNSUPPORTED, "input '%s' of layer %s is not a numeric "
					  "tensor", n->inputs[i], nn_type_of(n));
			goto out;
		}
		l.in[i] = t;
	}
	st = ali_exec_node_start(x, n, estimate_first[n->kind], (const struct al_tensor *const *)l.in,
				 n->n_inputs);
	if (st != AL_OK)
		goto out;
	st = fn(&l);
	if (st == AL_E_NOMEM && (l.too_big || x->over_budget))
		st = AL_E_UNSUPPORTED; /* a size over the limits, not a failed malloc */
	if (st != AL_OK) {
		if (al_diags_errors(x->d) == 0)
			ali_exec_fail(x, n, st, "layer type %s failed", nn_type_of(n));
		goto out;
	}
	for (uint32_t i = 0; i < n->n_outputs; i++)
		if (!l.out[i]) {
			st = ali_exec_fail(x, n, AL_E_FORMAT, "layer type %s did not produce output %u",
					  nn_type_of(n), i);
			goto out;
		}
	int_outputs(&l, n->kind);
	st = ali_exec_node_done(x, n, l.out, n->n_outputs);
	for (uint32_t i = 0; st == AL_OK && i < n->n_outputs; i++) {
		struct al_tensor *t = l.out[i];
		l.out[i] = NULL;
		if (!ali_env_put(r->env, n->outputs[i], t))
			st = AL_E_NOMEM;
	}
out:
	for (uint32_t i = 0; l.out && i < n->n_outputs; i++)
		ali_tensor_unref(l.out[i]);
	ali_free(l.in);
	ali_free(l.out);
	return st;
}

/* ---------------------------------------------------------------- blob lifetimes
 * The top network's blobs are dropped after the last top-level layer that reads
 * them (reads inside a branch / loop count for the layer holding it), so peak
 * memory follows the live activations, not all of them. A dropped blob is bound to
 * a shared empty tensor (the environment has no unbind). */
struct last_use {
	struct ali_hashtab index; /* items index name / last */
	const char **name;
	uint32_t *last;
	size_t n, cap;
};

/* The entry of name, or SIZE_MAX. */
static size_t lu_find(const struct last_use *u, const char *name)
{
	if (!name)
		return SIZE_MAX;
	return ali_hashtab_find(&u->index, ali_hash_str(name), ali_hashtab_name_eq, name, (void *)u->name);
}

/* Call fn(ctx, name) for every input of n and of the layers nested in it. */
static void each_input(const struct al_node *n, int depth, void (*fn)(void *, const char *), void *ctx)
{
	for (uint32_t i = 0; i < n->n_inputs; i++)
		fn(ctx, n->inputs[i]);
	for (uint32_t s = 0; depth < AL_MAX_DEPTH && s < n->n_sub; s++)
		for (uint32_t k = 0; n->sub[s] && k < n->sub[s]->n_nodes; k++)
			each_input(&n->sub[s]->nodes[k], depth + 1, fn, ctx);
}

static void count_one(void *ctx, const char *name)
{
	(void)name;
	(*(size_t *)ctx)++;
}

struct lu_ctx {
	struct last_use *u;
	uint32_t index;
};

static void note_one(void *ctx, const char *name)
{
	struct lu_ctx *c = ctx;
	struct last_use *u = c->u;
	size_t i = lu_find(u, name);
	if (i == SIZE_MAX) {
		if (!name || u->n == u->cap || !ali_hashtab_add(&u->index, ali_hash_str(name), u->n))
			return; /* cannot happen: room for every input was reserved */
		i = u->n++;
		u->name[i] = name;
	}
	u->last[i] = c->index;
}

static bool last_use_build(struct last_use *u, const struct al_graph *g)
{
	size_t n = 0;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		each_input(&g->nodes[i], 0, count_one, &n);
	u->cap = n;
	u->name = ali_calloc(n ? n : 1, sizeof *u->name);
	u->last = ali_calloc(n ? n : 1, sizeof *u->last);
	if (!u->name || !u->last || !ali_hashtab_reserve(&u->index, n))
		return false;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct lu_ctx c = {u, i};
		each_input(&g->nodes[i], 0, note_one, &c);
	}
	return true;
}

struct drop_ctx {
	struct nn_run *r;
	const struct last_use *u;
	uint32_t index;
	bool failed;
};

static void drop_one(void *ctx, const char *name)
{
	struct drop_ctx *c = ctx;
	struct nn_run *r = c->r;
	size_t i = lu_find(c->u, name);
	if (i == SIZE_MAX || c->u->last[i] != c->index)
		return;
	for (uint32_t k = 0; k < r->n_keep; k++)
		if (strcmp(r->keep[k], name) == 0)
			return;
	struct al_tensor *t = ali_env_get(r->env, name);
	if (t && t != r->tomb && !ali_env_put(r->env, name, al_tensor_ref(r->tomb)))
		c->failed = true;
}

static enum al_status run_graph(struct nn_run *r, const struct al_graph *g, int depth)
{
	if (depth > AL_MAX_DEPTH)
		return ali_exec_fail(r->x, g->parent_node, AL_E_UNSUPPORTED,
				    "branch / loop bodies nested deeper than %d", AL_MAX_DEPTH);
	struct last_use u = {0};
	const bool *sel = depth == 0 ? r->x->sel : NULL; /* a region: only its layers, no drops */
	bool drop = depth == 0 && !sel && r->tomb && last_use_build(&u, g);
	enum al_status st = AL_OK;
	for (uint32_t i = 0; i < g->n_nodes && st == AL_OK; i++) {
		if (sel && !sel[i])
			continue;
		st = run_layer(r, &g->nodes[i], depth);
		if (st == AL_OK && drop) {
			struct drop_ctx c = {r, &u, i, false};
			each_input(&g->nodes[i], 0, drop_one, &c);
			if (c.failed)
				st = AL_E_NOMEM;
		}
		if (r->flow != NN_FLOW_NONE)
			break; /* loopBreak / loopContinue: the enclosing loop takes it */
	}
	ali_hashtab_free(&u.index);
	ali_free(u.name);
	ali_free(u.last);
	return st;
}

/* ================================================================ inputs */

/* NeuralNetworkPreprocessing {featureName = 1, scaler = 10 {channelScale = 10,
 * blueBias = 20, greenBias = 21, redBias = 22, grayBias = 30}, meanImage = 11
 * {meanImage = 1}} applied to image t [1,C,H,W] (channels in the model's order). */
/* the preprocessing list: the same field in NeuralNetwork, -Classifier and -Regressor */
_Static_assert(AL_PB_NeuralNetwork_preprocessing == AL_PB_NeuralNetworkClassifier_preprocessing, "");
static enum al_status preprocess(struct nn_run *r, al_span body, const struct al_feature *f,
				 uint32_t n_images, struct al_tensor *t)
{
	struct pb_iter it;
	struct pb_field fl;
	pb_iter_init(&it, body);
	while (pb_next(&it, &fl)) {
		if (fl.num != AL_PB_NeuralNetwork_preprocessing || fl.wire != PB_LEN)
			continue;
		al_span name = {0};
		pb_get_string(fl.data, AL_PB_NeuralNetworkPreprocessing_featureName, &name);
		if (!(name.n ? ali_span_eq(name, f->name) : n_images == 1))
			continue;
		int64_t c = t->dims[1], hw = t->dims[2] * t->dims[3];
		if (pb_has(fl.data, AL_PB_NeuralNetworkPreprocessing_scaler)) {
			al_span sc = nn_psub(fl.data, AL_PB_NeuralNetworkPreprocessing_scaler);
			/* channelScale absent: 1 (coremltools always writes it) */
			float scale = nn_pf(sc, SCALER(channelScale), 1.0f), bias[3];
			if (c == 1) {
				bias[0] = nn_pf(sc, SCALER(grayBias), 0.0f);
			} else {
				float blue = nn_pf(sc, SCALER(blueBias), 0.0f), green = nn_pf(sc, SCALER(greenBias), 0.0f);
				float red = nn_pf(sc, SCALER(redBias), 0.0f);
				bool bgr = f->color_space == 30;
				bias[0] = bgr ? blue : red;
				bias[1] = green;
				bias[2] = bgr ? red : blue;
			}
			for (int64_t ch = 0; ch < c && ch < 3; ch++)
				for (int64_t i = 0; i < hw; i++)
					t->f[ch * hw + i] = t->f[ch * hw + i] * scale + bias[ch];
		} else if (pb_has(fl.data, AL_PB_NeuralNetworkPreprocessing_meanImage)) {
			al_span mi = nn_psub(fl.data, AL_PB_NeuralNetworkPreprocessing_meanImage);
			long n = pb_get_floats(mi, AL_PB_NeuralNetworkMeanImage_meanImage, NULL, 0);
			if (n < 0 || (size_t)n != t->n)
				return ali_exec_fail(r->x, NULL, AL_E_FORMAT,
						    "preprocessing of '%s': the mean image has %ld values, "
						    "the image %zu", f->name, n, t->n);
			float *mean = ali_malloc(t->n * sizeof *mean);
			if (!mean)
				return ali_exec_fail(r->x, NULL, AL_E_NOMEM, "out of memory");
			pb_get_floats(mi, AL_PB_NeuralNetworkMeanImage_meanImage, mean, t->n);
			for (size_t i = 0; i < t->n; i++)
				t->f[i] -= mean[i];
			ali_free(mean);
		}
		if (r->x->fp16)
			ali_f16_round_array(t->f, t->n);
	}
	return AL_OK;
}

/* Bind input feature f (as interp.c bound it in x->env) in the network's scope, in
 * the network's layout. */
static enum al_status bind_input(struct nn_run *r, al_span body, const struct al_feature *f,
				 uint32_t n_images)
{
	struct al_exec *x = r->x;
	const struct al_tensor *t = ali_env_get(x->env, f->name);
	if (!t)
		return f->optional ? AL_OK
				   : ali_exec_fail(x, NULL, AL_E_INVALID_ARG, "input '%s' is missing", f->name);
	if (t->kind != AL_TK_TENSOR || !t->f)
		return ali_exec_fail(x, NULL, AL_E_UNSUPPORTED, "input '%s' is not a numeric tensor "
				    "(NeuralNetwork inputs are images and multi-arrays)", f->name);
	int64_t dims[AL_TENSOR_MAX_RANK];
	int rank = t->rank;
	memcpy(dims, t->dims, sizeof dims);
	if (f->kind == AL_FEAT_IMAGE) {
		if (t->rank != 4 || t->dims[0] != 1)
			return ali_exec_fail(x, NULL, AL_E_INVALID_ARG, "image input '%s' is not [1,C,H,W]",
					    f->name);
		if (r->x->sub->image_mapping == 0) { /* RANK5: [1,1,C,H,W] */
			rank = 5;
			dims[0] = 1;
			memcpy(dims + 1, t->dims, 4 * sizeof *dims);
		}
	} else if (r->rank5) {
		/* [C] -> [1,1,C,1,1], [C,H,W] -> [1,1,C,H,W]; [Seq,B,C,H,W] as given */
		if (t->rank == 1 || t->rank == 3) {
			int64_t c = t->dims[0], h = t->rank == 3 ? t->dims[1] : 1, w = t->rank == 3 ? t->dims[2] : 1;
			int64_t d5[5] = {1, 1, c, h, w};
			memcpy(dims, d5, sizeof d5);
			rank = 5;
		} else if (t->rank != 5) {
			char b[160];
			return ali_exec_fail(x, NULL, AL_E_UNSUPPORTED,
					    "input '%s' has shape %s; with the rank-5 array mapping the "
					    "network takes [C], [C,H,W] or [Seq,B,C,H,W]", f->name,
					    nn_dims_str(b, sizeof b, t->rank, t->dims));
		}
	}
	struct al_tensor *b = ali_tensor_reshaped(x, NULL, t, rank, dims);
	if (!b)
		return AL_E_NOMEM;
	if (!int_dtype(b->dtype))
		b->dtype = AL_DT_FP32;
	enum al_status st = AL_OK;
	if (f->kind == AL_FEAT_IMAGE) {
		struct al_tensor view = *b; /* [1,C,H,W] view of the same data */
		view.rank = 4;
		memcpy(view.dims, t->dims, 4 * sizeof *view.dims);
		st = preprocess(r, body, f, n_images, &view);
	}
	if (st != AL_OK) {
		ali_tensor_unref(b);
		return st;
	}
	return ali_env_put(r->env, f->name, b) ? AL_OK : AL_E_NOMEM;
}

/* ================================================================ outputs */

/* A string scalar tensor holding s. */
static struct al_tensor *string_scalar(struct al_exec *x, const char *s)
{
	struct al_tensor *t = ali_tensor_alloc(x, NULL, AL_DT_STRING, 0, NULL);
	if (!t)
		return NULL;
	if (!(t->s[0] = ali_strdup(s))) {
		ali_tensor_unref(t);
		ali_exec_fail(x, NULL, AL_E_NOMEM, "out of memory");
		return NULL;
	}
	return t;
}

/* NeuralNetworkClassifier (its class labels, labelProbabilityLayerName): binds the
 * predicted label (string, or int64 for integer classes) and the probability dictionary. */
static enum al_status classify(struct nn_run *r, al_span body)
{
	struct al_exec *x = r->x;
	const struct al_submodel *s = x->sub;
	bool strings = pb_has(body, NNC(stringClassLabels)), ints = pb_has(body, NNC(int64ClassLabels));
	if (!strings && !ints)
		return ali_exec_fail(x, NULL, AL_E_FORMAT, "the classifier has no class labels");
	al_span vec = nn_psub(body, strings ? NNC(stringClassLabels) : NNC(int64ClassLabels));
	size_t n = strings ? pb_count(vec, AL_PB_StringVector_vector) : 0;
	long ni = ints ? pb_get_varints(vec, AL_PB_Int64Vector_vector, NULL, 0) : 0;
	if (ints) {
		if (ni < 0)
			return ali_exec_fail(x, NULL, AL_E_FORMAT, "malformed int64ClassLabels");
		n = (size_t)ni;
	}
	if (n == 0)
		return ali_exec_fail(x, NULL, AL_E_FORMAT, "the classifier has no class labels");
	/* the probabilities: labelProbabilityLayerName, else the last layer's first output */
	char *pname = NULL;
	al_span ps = {0};
	if (pb_get_string(body, NNC(labelProbabilityLayerName), &ps) && ps.n) {
		pname = ali_malloc(ps.n + 1);
		if (!pname)
			return ali_exec_fail(x, NULL, AL_E_NOMEM, "out of memory");
		memcpy(pname, ps.p, ps.n);
		pname[ps.n] = '\0';
	}
	const struct al_graph *g = s->graphs[0];
	const struct al_node *last = g->n_nodes ? &g->nodes[g->n_nodes - 1] : NULL;
	const char *prob_blob = pname ? pname : last && last->n_outputs ? last->outputs[0] : NULL;
	const struct al_tensor *p = prob_blob ? ali_env_get(r->env, prob_blob) : NULL;
	enum al_status st = AL_OK;
	if (!p || !p->f) {
		st = ali_exec_fail(x, NULL, AL_E_FORMAT, "the class probabilities '%s' are not produced",
				  prob_blob ? prob_blob : "?");
		goto out;
	}
	if (p->n != n) {
		st = ali_exec_fail(x, NULL, AL_E_FORMAT, "'%s' holds %zu probabilities for %zu classes",
				  prob_blob, p->n, n);
		goto out;
	}
	/* the labels as strings, in the model's memory (the dictionary borrows them) */
	char **labels = ali_arena_array(&x->m->arena, n, sizeof *labels);
	if (!labels) {
		st = ali_exec_fail(x, NULL, AL_E_NOMEM, "out of memory");
		goto out;
	}
	int64_t *ivals = NULL;
	if (ints) {
		ivals = ali_malloc(n * sizeof *ivals);
		if (!ivals) {
			st = ali_exec_fail(x, NULL, AL_E_NOMEM, "out of memory");
			goto out;
		}
		uint64_t *u = (uint64_t *)ivals;
		pb_get_varints(vec, AL_PB_Int64Vector_vector, u, n);
		for (size_t i = 0; i < n; i++)
			labels[i] = ali_arena_printf(&x->m->arena, "%lld", (long long)(int64_t)u[i]);
	} else {
		struct pb_iter it;
		struct pb_field f;
		size_t i = 0;
		pb_iter_init(&it, vec);
		while (i < n && pb_next(&it, &f))
			if (f.num == AL_PB_StringVector_vector && f.wire == PB_LEN)
				labels[i++] = ali_arena_span_str(&x->m->arena, f.data);
	}
	if (x->m->arena.failed) {
		ali_free(ivals);
		st = ali_exec_fail(x, NULL, AL_E_NOMEM, "out of memory");
		goto out;
	}
	size_t best = 0;
	for (size_t i = 1; i < n; i++)
		if (p->f[i] > p->f[best] || (isnan(p->f[best]) && !isnan(p->f[i])))
			best = i;
	if (s->predicted_probabilities && *s->predicted_probabilities) {
		int64_t d1 = (int64_t)n;
		struct al_tensor *dict = ali_tensor_reshaped(x, NULL, p, 1, &d1);
		if (!dict) {
			ali_free(ivals);
			st = AL_E_NOMEM;
			goto out;
		}
		dict->dtype = AL_DT_FP64;
		dict->labels = (const char *const *)labels;
		if (!ali_env_put(x->env, s->predicted_probabilities, dict)) {
			ali_free(ivals);
			st = AL_E_NOMEM;
			goto out;
		}
	}
	if (s->predicted_feature && *s->predicted_feature) {
		struct al_tensor *lab;
		if (ints) {
			lab = ali_tensor_alloc(x, NULL, AL_DT_INT64, 0, NULL);
			if (lab)
				lab->f[0] = (float)ivals[best];
		} else {
			lab = string_scalar(x, labels[best]);
		}
		if (!lab || !ali_env_put(x->env, s->predicted_feature, lab))
			st = AL_E_NOMEM;
	}
	ali_free(ivals);
out:
	ali_free(pname);
	return st;
}

/* An image output: the blob [..,C,H,W] as [H,W,C] pixels (RGB order), rounded and
 * clamped to 0..255 (what Core ML writes into the pixel buffer). */
static struct al_tensor *image_output(struct al_exec *x, const struct al_feature *f,
				      const struct al_tensor *t)
{
	int64_t c = t->rank >= 3 ? t->dims[t->rank - 3] : 0;
	int64_t h = t->rank >= 3 ? t->dims[t->rank - 2] : 0, w = t->rank >= 3 ? t->dims[t->rank - 1] : 0;
	if (t->rank < 3 || (c != 1 && c != 3) || (size_t)(c * h * w) != t->n) {
		char b[160];
		ali_exec_fail(x, NULL, AL_E_FORMAT, "image output '%s' has shape %s, not [C,H,W]", f->name,
			     nn_dims_str(b, sizeof b, t->rank, t->dims));
		return NULL;
	}
	int64_t dims[3] = {h, w, c};
	struct al_tensor *r = ali_tensor_alloc(x, NULL, AL_DT_UINT8, 3, dims);
	if (!r)
		return NULL;
	bool bgr = f->color_space == 30;
	for (int64_t ch = 0; ch < c; ch++) {
		int64_t src = bgr ? c - 1 - ch : ch;
		for (int64_t i = 0; i < h * w; i++) {
			float v = t->f[src * h * w + i];
			v = !(v > 0.0f) ? 0.0f : v > 255.0f ? 255.0f : roundf(v);
			r->f[i * c + ch] = v;
		}
	}
	return r;
}

/* Output feature f from the network's blob of that name into x->env. */
static enum al_status bind_output(struct nn_run *r, const struct al_feature *f)
{
	struct al_exec *x = r->x;
	const struct al_tensor *t = ali_env_get(r->env, f->name);
	if (!t)
		return ali_exec_fail(x, NULL, AL_E_FORMAT, "output '%s' was not produced by any layer",
				    f->name);
	struct al_tensor *o;
	if (f->kind == AL_FEAT_IMAGE) {
		o = image_output(x, f, t);
	} else {
		int rank = t->rank;
		int64_t dims[AL_TENSOR_MAX_RANK];
		memcpy(dims, t->dims, sizeof dims);
		size_t count;
		if (f->kind == AL_FEAT_MULTIARRAY && f->rank > 0 && f->rank <= AL_TENSOR_MAX_RANK &&
		    f->flex == AL_FLEX_NONE) {
			bool known = true;
			for (uint32_t i = 0; i < f->rank; i++)
				known &= f->shape[i] >= 0;
			if (known && ali_dims_count((int)f->rank, f->shape, &count) && count == t->n) {
				rank = (int)f->rank;
				memcpy(dims, f->shape, f->rank * sizeof *dims);
			}
		}
		if (f->kind == AL_FEAT_MULTIARRAY && f->rank > 0 && (int)f->rank < rank) {
			/* a legacy [1,1,C,H,W] blob of a declared [C,H,W] (flexible) output */
			int drop = rank - (int)f->rank;
			bool ones = true;
			for (int i = 0; i < drop; i++)
				ones &= dims[i] == 1;
			if (ones) {
				memmove(dims, dims + drop, (size_t)(rank - drop) * sizeof *dims);
				rank -= drop;
			}
		}
		o = ali_tensor_reshaped(x, NULL, t, rank, dims);
		if (o && f->kind == AL_FEAT_MULTIARRAY && f->dtype) {
			o->dtype = f->dtype;
			if (f->dtype == AL_DT_FP16)
				ali_f16_round_array(o->f, o->n);
		} else if (o && (f->kind == AL_FEAT_DOUBLE || f->kind == AL_FEAT_INT64)) {
			o->dtype = f->dtype;
		}
	}
	if (!o)
		return AL_E_NOMEM;
	return ali_env_put(x->env, f->name, o) ? AL_OK : AL_E_NOMEM;
}

/* ================================================================ the executor */

enum al_status ali_nn_exec(struct al_exec *x)
{
	const struct al_submodel *s = x->sub;
	if (!s || s->n_graphs < 1 || !s->graphs[0])
		return ali_exec_fail(x, NULL, AL_E_FORMAT, "the neural network has no layers");
	bool classifier = ali_submodel_is(s, AL_MODEL_FIELD_neuralNetworkClassifier);
	al_span body = nn_body(s);
	if (!body.p && s->graphs[0]->n_nodes)
		return ali_exec_fail(x, NULL, AL_E_FORMAT, "cannot find the neural network message");
	struct nn_run r = {.x = x, .rank5 = s->array_mapping == 0};
	r.env = ali_env_new(x, x->env);
	if (!r.env)
		return AL_E_NOMEM;
	/* never dropped: the output features and the class probabilities */
	r.keep = ali_calloc(s->n_outputs + 2u, sizeof *r.keep);
	r.tomb = ali_tensor_alloc(x, NULL, AL_DT_FP32, 1, (int64_t[1]){0});
	if (!r.keep || !r.tomb) {
		ali_free(r.keep);
		ali_tensor_unref(r.tomb);
		ali_env_free(r.env);
		return ali_exec_fail(x, NULL, AL_E_NOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < s->n_outputs; i++)
		r.keep[r.n_keep++] = s->outputs[i].name;
	const struct al_graph *g0 = s->graphs[0];
	if (classifier && g0->n_nodes && g0->nodes[g0->n_nodes - 1].n_outputs)
		r.keep[r.n_keep++] = g0->nodes[g0->n_nodes - 1].outputs[0];
	char *lpl = NULL;
	al_span lps = {0};
	if (classifier && pb_get_string(body, NNC(labelProbabilityLayerName), &lps) && lps.n) {
		if (!(lpl = ali_malloc(lps.n + 1))) {
			ali_free(r.keep);
			ali_tensor_unref(r.tomb);
			ali_env_free(r.env);
			return ali_exec_fail(x, NULL, AL_E_NOMEM, "out of memory");
		}
		memcpy(lpl, lps.p, lps.n);
		lpl[lps.n] = '\0';
		r.keep[r.n_keep++] = lpl;
	}
	uint32_t n_images = 0;
	for (uint32_t i = 0; i < s->n_inputs; i++)
		n_images += s->inputs[i].kind == AL_FEAT_IMAGE;
	enum al_status st = AL_OK;
	for (uint32_t i = 0; !x->sel && st == AL_OK && i < s->n_inputs; i++)
		st = bind_input(&r, body, &s->inputs[i], n_images);
	if (st == AL_OK)
		st = run_graph(&r, s->graphs[0], 0);
	if (st == AL_OK && r.flow != NN_FLOW_NONE)
		st = ali_exec_fail(x, NULL, AL_E_FORMAT, "loopBreak / loopContinue outside a loop");
	/* a region (al_model_run_region): its values as the layers left them */
	for (size_t i = 0; x->sel && st == AL_OK && i < x->n_region_out; i++) {
		struct al_tensor *t = ali_env_get(r.env, x->region_out[i]);
		if (t && !ali_env_put(x->env, x->region_out[i], al_tensor_ref(t)))
			st = AL_E_NOMEM;
	}
	if (st == AL_OK && classifier && !x->sel)
		st = classify(&r, body);
	for (uint32_t i = 0; !x->sel && st == AL_OK && i < s->n_outputs; i++) {
		const struct al_feature *f = &s->outputs[i];
		if (classifier && ((s->predicted_feature && strcmp(f->name, s->predicted_feature) == 0) ||
				   (s->predicted_probabilities &&
				    strcmp(f->name, s->predicted_probabilities) == 0)))
			continue;
		st = bind_output(&r, f);
	}
	ali_env_free(r.env);
	ali_tensor_unref(r.tomb);
	ali_free(r.keep);
	ali_free(lpl);
	return st;
}
