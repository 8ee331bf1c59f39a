/* SPDX-License-Identifier: MIT */
/* cost.c: the work of one layer / op, as estimates from its shapes (docs/shapes.md
 * "Cost"): FLOPs with a multiply-add counted as 2, the bytes of weights and
 * constants it reads as stored (NeuralNetwork: WeightParams lengths; ML Program:
 * blob sizes from weight.bin's 64-byte blob headers, immediate values by element
 * count), and activation bytes at fp16. Weight data is never read. A cost that
 * needs a shape that is unknown is marked known = false (its FLOPs count what could be).
 */
#include "shapes.h"
#include "nn_params.h"
#include "mil_fields.h"

#include <string.h>
#include <stdlib.h>

#define MAXV 16
#define CONST_DEPTH 4 /* constexpr_* chains followed for stored bytes */

/* How an op's FLOPs are counted. */
enum cls {
	K_ABSENT,  /* no row for this kind (see nn_rows / mil_rows) */
	K_NONE,    /* no arithmetic: data movement, constants, control flow */
	K_EW,      /* k per output element */
	K_EWN,     /* k per output element per extra input (legacy n-ary add, ...) */
	K_IN,      /* k per input element (reductions, sorts) */
	K_CONV,    /* 2 * out * (Cin/groups) * kernel (+ bias) */
	K_DECONV,  /* 2 * in * (Cout/groups) * kernel (+ bias) */
	K_FC,      /* 2 * rows * in * out (+ bias) */
	K_MATMUL,  /* 2 * M * N * K * batch */
	K_POOL,    /* kernel window per output element */
	K_RNN,     /* k gates: steps * k * H * (2 (I + H) + 3) */
	K_SDPA,    /* scaled dot-product attention */
	K_RESIZE,  /* 4 per output element when bilinear, else 0 */
	K_UNKNOWN, /* not estimated (custom layers, ops anelint does not model) */
};

struct cost_row {
	enum cls cls;
	int k;
};

/* NeuralNetwork layers by kind; kinds without a row (K_ABSENT) are K_NONE. */
static const struct cost_row nn_rows[AL_NNK_COUNT] = {
	[AL_NNK_convolution] = {K_CONV, 0}, [AL_NNK_pooling] = {K_POOL, 0},
	[AL_NNK_activation] = {K_EW, 1}, [AL_NNK_innerProduct] = {K_FC, 0},
	[AL_NNK_batchnorm] = {K_EW, 2}, [AL_NNK_mvn] = {K_EW, 5}, [AL_NNK_l2normalize] = {K_EW, 3},
	[AL_NNK_softmax] = {K_EW, 5}, [AL_NNK_lrn] = {K_EW, 5}, [AL_NNK_upsample] = {K_RESIZE, 0},
	[AL_NNK_resizeBilinear] = {K_EW, 4}, [AL_NNK_cropResize] = {K_EW, 4},
	[AL_NNK_unary] = {K_EW, 1}, [AL_NNK_add] = {K_EWN, 1}, [AL_NNK_multiply] = {K_EWN, 1},
	[AL_NNK_average] = {K_EWN, 1}, [AL_NNK_scale] = {K_EW, 1}, [AL_NNK_bias] = {K_EW, 1},
	[AL_NNK_max] = {K_EWN, 1}, [AL_NNK_min] = {K_EWN, 1}, [AL_NNK_dot] = {K_IN, 2},
	[AL_NNK_reduce] = {K_IN, 1}, [AL_NNK_simpleRecurrent] = {K_RNN, 1},
	[AL_NNK_gru] = {K_RNN, 3}, [AL_NNK_uniDirectionalLSTM] = {K_RNN, 4},
	[AL_NNK_biDirectionalLSTM] = {K_RNN, 4}, [AL_NNK_custom] = {K_UNKNOWN, 0},
	[AL_NNK_clip] = {K_EW, 1}, [AL_NNK_ceil] = {K_EW, 1}, [AL_NNK_floor] = {K_EW, 1},
	[AL_NNK_sign] = {K_EW, 1}, [AL_NNK_round] = {K_EW, 1}, [AL_NNK_exp2] = {K_EW, 1},
	[AL_NNK_sin] = {K_EW, 1}, [AL_NNK_cos] = {K_EW, 1}, [AL_NNK_tan] = {K_EW, 1},
	[AL_NNK_asin] = {K_EW, 1}, [AL_NNK_acos] = {K_EW, 1}, [AL_NNK_atan] = {K_EW, 1},
	[AL_NNK_sinh] = {K_EW, 1}, [AL_NNK_cosh] = {K_EW, 1}, [AL_NNK_tanh] = {K_EW, 1},
	[AL_NNK_asinh] = {K_EW, 1}, [AL_NNK_acosh] = {K_EW, 1}, [AL_NNK_atanh] = {K_EW, 1},
	[AL_NNK_erf] = {K_EW, 1}, [AL_NNK_gelu] = {K_EW, 1}, [AL_NNK_equal] = {K_EW, 1},
	[AL_NNK_notEqual] = {K_EW, 1}, [AL_NNK_lessThan] = {K_EW, 1},
	[AL_NNK_lessEqual] = {K_EW, 1}, [AL_NNK_greaterThan] = {K_EW, 1},
	[AL_NNK_greaterEqual] = {K_EW, 1}, [AL_NNK_logicalOr] = {K_EW, 1},
	[AL_NNK_logicalXor] = {K_EW, 1}, [AL_NNK_logicalNot] = {K_EW, 1},
	[AL_NNK_logicalAnd] = {K_EW, 1}, [AL_NNK_modBroadcastable] = {K_EW, 1},
	[AL_NNK_minBroadcastable] = {K_EW, 1}, [AL_NNK_maxBroadcastable] = {K_EW, 1},
	[AL_NNK_addBroadcastable] = {K_EW, 1}, [AL_NNK_powBroadcastable] = {K_EW, 1},
	[AL_NNK_divideBroadcastable] = {K_EW, 1}, [AL_NNK_floorDivBroadcastable] = {K_EW, 1},
	[AL_NNK_multiplyBroadcastable] = {K_EW, 1}, [AL_NNK_subtractBroadcastable] = {K_EW, 1},
	[AL_NNK_softmaxND] = {K_EW, 5}, [AL_NNK_topK] = {K_IN, 1}, [AL_NNK_argMin] = {K_IN, 1},
	[AL_NNK_argMax] = {K_IN, 1}, [AL_NNK_batchedMatmul] = {K_MATMUL, 0},
	[AL_NNK_randomNormalLike] = {K_EW, 1}, [AL_NNK_randomNormalStatic] = {K_EW, 1},
	[AL_NNK_randomNormalDynamic] = {K_EW, 1}, [AL_NNK_randomUniformLike] = {K_EW, 1},
	[AL_NNK_randomUniformStatic] = {K_EW, 1}, [AL_NNK_randomUniformDynamic] = {K_EW, 1},
	[AL_NNK_randomBernoulliLike] = {K_EW, 1}, [AL_NNK_randomBernoulliStatic] = {K_EW, 1},
	[AL_NNK_randomBernoulliDynamic] = {K_EW, 1}, [AL_NNK_categoricalDistribution] = {K_IN, 1},
	[AL_NNK_reduceL1] = {K_IN, 1}, [AL_NNK_reduceL2] = {K_IN, 1},
	[AL_NNK_reduceMax] = {K_IN, 1}, [AL_NNK_reduceMin] = {K_IN, 1},
	[AL_NNK_reduceSum] = {K_IN, 1}, [AL_NNK_reduceProd] = {K_IN, 1},
	[AL_NNK_reduceMean] = {K_IN, 1}, [AL_NNK_reduceLogSum] = {K_IN, 1},
	[AL_NNK_reduceSumSquare] = {K_IN, 1}, [AL_NNK_reduceLogSumExp] = {K_IN, 1},
	[AL_NNK_whereNonZero] = {K_IN, 1}, [AL_NNK_matrixBandPart] = {K_EW, 1},
	[AL_NNK_lowerTriangular] = {K_EW, 1}, [AL_NNK_upperTriangular] = {K_EW, 1},
	[AL_NNK_whereBroadcastable] = {K_EW, 1}, [AL_NNK_layerNormalization] = {K_EW, 5},
	[AL_NNK_NonMaximumSuppression] = {K_UNKNOWN, 0}, [AL_NNK_cumSum] = {K_EW, 1},
	[AL_NNK_clampedReLU] = {K_EW, 1}, [AL_NNK_argSort] = {K_IN, 1},
	[AL_NNK_pooling3d] = {K_POOL, 0}, [AL_NNK_globalPooling3d] = {K_IN, 1},
	[AL_NNK_convolution3d] = {K_CONV, 0},
};
_Static_assert(sizeof nn_rows / sizeof nn_rows[0] == AL_NNK_COUNT, "one row per NN kind");

/* ML Program ops by kind; kinds without a row (K_ABSENT) are K_UNKNOWN. */
static const struct cost_row mil_rows[AL_MILK_COUNT] = {
	[AL_MILK_abs] = {K_EW, 1}, [AL_MILK_acos] = {K_EW, 1}, [AL_MILK_add] = {K_EW, 1},
	[AL_MILK_affine] = {K_EW, 4}, [AL_MILK_argsort] = {K_IN, 1}, [AL_MILK_asin] = {K_EW, 1},
	[AL_MILK_atan] = {K_EW, 1}, [AL_MILK_atanh] = {K_EW, 1}, [AL_MILK_avg_pool] = {K_POOL, 0},
	[AL_MILK_band_part] = {K_EW, 1}, [AL_MILK_batch_norm] = {K_EW, 2},
	[AL_MILK_batch_to_space] = {K_NONE, 0}, [AL_MILK_cast] = {K_NONE, 0},
	[AL_MILK_ceil] = {K_EW, 1}, [AL_MILK_clamped_relu] = {K_EW, 1},
	[AL_MILK_classify] = {K_NONE, 0}, [AL_MILK_clip] = {K_EW, 1},
	[AL_MILK_concat] = {K_NONE, 0}, [AL_MILK_cond] = {K_NONE, 0}, [AL_MILK_const] = {K_NONE, 0},
	[AL_MILK_constexpr_affine_dequantize] = {K_NONE, 0},
	[AL_MILK_constexpr_blockwise_shift_scale] = {K_NONE, 0},
	[AL_MILK_constexpr_cast] = {K_NONE, 0}, [AL_MILK_constexpr_lut_to_dense] = {K_NONE, 0},
	[AL_MILK_constexpr_lut_to_sparse] = {K_NONE, 0},
	[AL_MILK_constexpr_sparse_blockwise_shift_scale] = {K_NONE, 0},
	[AL_MILK_constexpr_sparse_to_dense] = {K_NONE, 0}, [AL_MILK_conv] = {K_CONV, 0},
	[AL_MILK_conv_quantized] = {K_CONV, 0}, [AL_MILK_conv_transpose] = {K_DECONV, 0},
	[AL_MILK_cos] = {K_EW, 1}, [AL_MILK_cosh] = {K_EW, 1}, [AL_MILK_crop] = {K_NONE, 0},
	[AL_MILK_crop_resize] = {K_EW, 4}, [AL_MILK_cumsum] = {K_EW, 1},
	[AL_MILK_depth_to_space] = {K_NONE, 0}, [AL_MILK_dequantize] = {K_EW, 2},
	[AL_MILK_elu] = {K_EW, 1}, [AL_MILK_equal] = {K_EW, 1}, [AL_MILK_erf] = {K_EW, 1},
	[AL_MILK_exp] = {K_EW, 1}, [AL_MILK_exp2] = {K_EW, 1}, [AL_MILK_expand_dims] = {K_NONE, 0},
	[AL_MILK_fill] = {K_NONE, 0}, [AL_MILK_fill_like] = {K_NONE, 0},
	[AL_MILK_flatten2d] = {K_NONE, 0}, [AL_MILK_floor] = {K_EW, 1},
	[AL_MILK_floor_div] = {K_EW, 1}, [AL_MILK_gather] = {K_NONE, 0},
	[AL_MILK_gather_along_axis] = {K_NONE, 0}, [AL_MILK_gather_nd] = {K_NONE, 0},
	[AL_MILK_gelu] = {K_EW, 1}, [AL_MILK_greater] = {K_EW, 1},
	[AL_MILK_greater_equal] = {K_EW, 1}, [AL_MILK_gru] = {K_RNN, 3},
	[AL_MILK_identity] = {K_NONE, 0}, [AL_MILK_instance_norm] = {K_EW, 5},
	[AL_MILK_inverse] = {K_EW, 1}, [AL_MILK_l2_norm] = {K_EW, 3},
	[AL_MILK_l2_pool] = {K_POOL, 0}, [AL_MILK_layer_norm] = {K_EW, 5},
	[AL_MILK_leaky_relu] = {K_EW, 1}, [AL_MILK_less] = {K_EW, 1},
	[AL_MILK_less_equal] = {K_EW, 1}, [AL_MILK_linear] = {K_FC, 0},
	[AL_MILK_linear_activation] = {K_EW, 1}, [AL_MILK_list_gather] = {K_NONE, 0},
	[AL_MILK_list_length] = {K_NONE, 0}, [AL_MILK_list_read] = {K_NONE, 0},
	[AL_MILK_list_scatter] = {K_NONE, 0}, [AL_MILK_list_write] = {K_NONE, 0},
	[AL_MILK_local_response_norm] = {K_EW, 5}, [AL_MILK_log] = {K_EW, 1},
	[AL_MILK_logical_and] = {K_EW, 1}, [AL_MILK_logical_not] = {K_EW, 1},
	[AL_MILK_logical_or] = {K_EW, 1}, [AL_MILK_logical_xor] = {K_EW, 1},
	[AL_MILK_lstm] = {K_RNN, 4}, [AL_MILK_make_list] = {K_NONE, 0},
	[AL_MILK_matmul] = {K_MATMUL, 0}, [AL_MILK_max_pool] = {K_POOL, 0},
	[AL_MILK_maximum] = {K_EW, 1}, [AL_MILK_minimum] = {K_EW, 1}, [AL_MILK_mod] = {K_EW, 1},
	[AL_MILK_mul] = {K_EW, 1}, [AL_MILK_non_zero] = {K_IN, 1}, [AL_MILK_not_equal] = {K_EW, 1},
	[AL_MILK_one_hot] = {K_NONE, 0}, [AL_MILK_pad] = {K_NONE, 0},
	[AL_MILK_pixel_shuffle] = {K_NONE, 0}, [AL_MILK_pixel_unshuffle] = {K_NONE, 0},
	[AL_MILK_pow] = {K_EW, 1}, [AL_MILK_prelu] = {K_EW, 1}, [AL_MILK_quantize] = {K_EW, 2},
	[AL_MILK_random_bernoulli] = {K_EW, 1}, [AL_MILK_random_categorical] = {K_IN, 1},
	[AL_MILK_random_normal] = {K_EW, 1}, [AL_MILK_random_uniform] = {K_EW, 1},
	[AL_MILK_range_1d] = {K_NONE, 0}, [AL_MILK_read_state] = {K_NONE, 0},
	[AL_MILK_real_div] = {K_EW, 1}, [AL_MILK_reduce_argmax] = {K_IN, 1},
	[AL_MILK_reduce_argmin] = {K_IN, 1}, [AL_MILK_reduce_l1_norm] = {K_IN, 1},
	[AL_MILK_reduce_l2_norm] = {K_IN, 1}, [AL_MILK_reduce_log_sum] = {K_IN, 1},
	[AL_MILK_reduce_log_sum_exp] = {K_IN, 1}, [AL_MILK_reduce_max] = {K_IN, 1},
	[AL_MILK_reduce_mean] = {K_IN, 1}, [AL_MILK_reduce_min] = {K_IN, 1},
	[AL_MILK_reduce_prod] = {K_IN, 1}, [AL_MILK_reduce_sum] = {K_IN, 1},
	[AL_MILK_reduce_sum_square] = {K_IN, 1}, [AL_MILK_relu] = {K_EW, 1},
	[AL_MILK_relu6] = {K_EW, 1}, [AL_MILK_resample] = {K_EW, 4},
	[AL_MILK_reshape] = {K_NONE, 0}, [AL_MILK_reshape_like] = {K_NONE, 0},
	[AL_MILK_resize] = {K_RESIZE, 0}, [AL_MILK_resize_bilinear] = {K_EW, 4},
	[AL_MILK_resize_nearest_neighbor] = {K_NONE, 0}, [AL_MILK_reverse] = {K_NONE, 0},
	[AL_MILK_reverse_sequence] = {K_NONE, 0}, [AL_MILK_rnn] = {K_RNN, 1},
	[AL_MILK_round] = {K_EW, 1}, [AL_MILK_rsqrt] = {K_EW, 1},
	[AL_MILK_scaled_dot_product_attention] = {K_SDPA, 0}, [AL_MILK_scaled_tanh] = {K_EW, 1},
	[AL_MILK_scatter] = {K_NONE, 0}, [AL_MILK_scatter_along_axis] = {K_NONE, 0},
	[AL_MILK_scatter_nd] = {K_NONE, 0}, [AL_MILK_select] = {K_EW, 1},
	[AL_MILK_shape] = {K_NONE, 0}, [AL_MILK_sigmoid] = {K_EW, 1},
	[AL_MILK_sigmoid_hard] = {K_EW, 1}, [AL_MILK_sign] = {K_EW, 1}, [AL_MILK_silu] = {K_EW, 1},
	[AL_MILK_sin] = {K_EW, 1}, [AL_MILK_sinh] = {K_EW, 1},
	[AL_MILK_slice_by_index] = {K_NONE, 0}, [AL_MILK_slice_by_size] = {K_NONE, 0},
	[AL_MILK_slice_update] = {K_NONE, 0}, [AL_MILK_sliding_windows] = {K_NONE, 0},
	[AL_MILK_softmax] = {K_EW, 5}, [AL_MILK_softplus] = {K_EW, 1},
	[AL_MILK_softplus_parametric] = {K_EW, 1}, [AL_MILK_softsign] = {K_EW, 1},
	[AL_MILK_space_to_batch] = {K_NONE, 0}, [AL_MILK_space_to_depth] = {K_NONE, 0},
	[AL_MILK_split] = {K_NONE, 0}, [AL_MILK_sqrt] = {K_EW, 1}, [AL_MILK_square] = {K_EW, 1},
	[AL_MILK_squeeze] = {K_NONE, 0}, [AL_MILK_stack] = {K_NONE, 0}, [AL_MILK_sub] = {K_EW, 1},
	[AL_MILK_tan] = {K_EW, 1}, [AL_MILK_tanh] = {K_EW, 1}, [AL_MILK_threshold] = {K_EW, 1},
	[AL_MILK_thresholded_relu] = {K_EW, 1}, [AL_MILK_tile] = {K_NONE, 0},
	[AL_MILK_topk] = {K_IN, 1}, [AL_MILK_transpose] = {K_NONE, 0},
	[AL_MILK_upsample_bilinear] = {K_EW, 4}, [AL_MILK_upsample_nearest_neighbor] = {K_NONE, 0},
	[AL_MILK_while_loop] = {K_NONE, 0}, [AL_MILK_write_state] = {K_NONE, 0},
};
_Static_assert(sizeof mil_rows / sizeof mil_rows[0] == AL_MILK_COUNT, "one row per MIL kind");

/* Whether a kind has a cost row (for tests/unit/test_kinds.c). */
bool ali_cost_nn_has(int k)
{
	return k >= 0 && k < AL_NNK_COUNT && nn_rows[k].cls != K_ABSENT;
}

bool ali_cost_mil_has(int k)
{
	return k >= 0 && k < AL_MILK_COUNT && mil_rows[k].cls != K_ABSENT;
}

/* ================================================================ parameter bytes */

/* Bits per element of a MIL dtype (0 when not a fixed-size number). */
static unsigned dtype_bits(int dt)
{
	switch (dt) {
	case AL_DT_BOOL: case AL_DT_INT8: case AL_DT_UINT8: case AL_DT_FP8E4M3: case AL_DT_FP8E5M2:
		return 8;
	case AL_DT_FP16: case AL_DT_BF16: case AL_DT_INT16: case AL_DT_UINT16: return 16;
	case AL_DT_FP32: case AL_DT_INT32: case AL_DT_UINT32: return 32;
	case AL_DT_FP64: case AL_DT_INT64: case AL_DT_UINT64: return 64;
	case AL_DT_INT4: case AL_DT_UINT4: return 4;
	case AL_DT_UINT1: return 1;
	case AL_DT_UINT2: return 2;
	case AL_DT_UINT3: return 3;
	case AL_DT_UINT6: return 6;
	}
	return 0;
}

/* Bytes of one MIL Value as stored: a blob's data size from its 64-byte
 * blob_metadata record in weight.bin (sentinel, type, size; facts section 8),
 * an immediate tensor's element count times its dtype size (else the length of
 * its encoding). */
static uint64_t value_bytes(const struct al_model *m, al_span v)
{
	al_span iv;
	uint64_t off;
	if (ali_mil_value_blob_offset(v, &off)) {
		uint8_t md[AL_BLOB_META]; /* pread: no weight page faulted in */
		if (!ali_weights_meta(m, off, md) || al_rd32le(md) != 0xDEADBEEFu)
			return 0;
		uint64_t n = al_rd64le(md + 8);
		return n <= m->weights.n ? n : 0;
	}
	if (!ali_mil_value_immediate(v, &iv))
		return 0;
	struct al_shape s;
	struct ali_mil_tensor_type tt;
	if (ali_mil_value_tensor_type(v, &tt) && tt.has_dtype) {
		uint64_t dt = tt.dtype;
		struct al_ttype t = {0};
		int64_t dims[AL_SHAPE_MAX_RANK];
		size_t nd = 0;
		bool ok = true;
		for (uint32_t i = 0; i < tt.n_dims; i++) {
			if (i >= AL_SHAPE_MAX_RANK || !tt.constant[i]) {
				ok = false;
				break;
			}
			uint64_t sz = tt.size[i];
			dims[nd++] = sz <= INT64_MAX ? (int64_t)sz : -1;
		}
		t.dtype = dt <= 64 ? (int)dt : 0;
		t.rank = (int)nd;
		t.dims = dims;
		shp_from_ttype(&s, &t);
		int64_t ne = ok ? shp_numel(&s) : -1;
		unsigned bits = dtype_bits(t.dtype);
		if (ne >= 0 && bits && (uint64_t)ne <= UINT64_MAX / 64)
			return ((uint64_t)ne * bits + 7) / 8;
	}
	return iv.n;
}

static bool is_const_like(const struct al_node *p)
{
	/* constexpr_ by name: an op of that family not in mil_ops.def counts too */
	return p && p->type && (p->kind == AL_MILK_const || strncmp(p->type, "constexpr_", 10) == 0);
}

/* const_bytes of the Values and the const producers an op's bindings name. */
struct bind_bytes {
	const struct al_model *m;
	const struct al_node *p;
	int depth;
	uint64_t n;
};
static uint64_t const_bytes(const struct al_model *m, const struct al_node *p, int depth);

static void add_binding_bytes(void *ctx, int member, al_span data)
{
	struct bind_bytes *b = ctx;
	if (member == ALI_MIL_BIND_VALUE) {
		b->n += value_bytes(b->m, data);
	} else if (data.n < AL_MAX_NAME) {
		char name[AL_MAX_NAME];
		memcpy(name, data.p, data.n);
		name[data.n] = '\0';
		const struct al_node *q = ali_mil_producer(b->p, name);
		if (is_const_like(q))
			b->n += const_bytes(b->m, q, b->depth + 1);
	}
}

/* value_bytes of an op's literal bindings. */
static void add_literal_bytes(void *ctx, int member, al_span data)
{
	struct bind_bytes *b = ctx;
	if (member == ALI_MIL_BIND_VALUE)
		b->n += value_bytes(b->m, data);
}

/* Stored bytes behind a const / constexpr_* op: its `val`, or every value a
 * constexpr op holds (attributes other than its name, literal bindings, and the
 * const ops feeding it). */
static uint64_t const_bytes(const struct al_model *m, const struct al_node *p, int depth)
{
	const struct al_node_src *s = al_src(p);
	al_span v;
	if (!s || depth > CONST_DEPTH)
		return 0;
	if (p->kind == AL_MILK_const) {
		struct al_node_src *w = (struct al_node_src *)s; /* arena-owned; val_bytes written here only */
		if (!w->val_bytes_done) {
			w->val_bytes = ali_mil_attr(p, "val", &v) ? value_bytes(m, v) : 0;
			w->val_bytes_done = true;
		}
		return w->val_bytes;
	}
	struct bind_bytes b = {m, p, depth, 0};
	struct ali_mil_attr_iter it;
	al_span k;
	ali_mil_attr_begin(p, &it);
	while (ali_mil_attr_next(&it, &k, &v))
		if (!ali_span_eq(k, "name"))
			b.n += value_bytes(m, v);
	for (uint32_t i = 0; i < s->n_mil_args; i++)
		ali_mil_arg_each_binding(s->mil_args[i].arg, add_binding_bytes, &b);
	return b.n;
}

/* ================================================================ FLOPs */

struct cx {
	const struct al_node *n;
	const struct al_shape *const *in;
	uint32_t n_in;
	double flops;
	bool known;
};

static int64_t numel(const struct al_shape *s)
{
	return s ? shp_numel(s) : -1;
}

static const struct al_shape *in0(const struct cx *c)
{
	return c->n_in ? c->in[0] : NULL;
}

static const struct al_shape *out0(const struct cx *c)
{
	return c->n->n_outputs && c->n->out_shapes ? &c->n->out_shapes[0] : NULL;
}

/* v (an element count or product) as a FLOP term; unknown marks the cost unknown. */
static double term(struct cx *c, int64_t v)
{
	if (v < 0) {
		c->known = false;
		return 0;
	}
	return (double)v;
}

static bool mil_shape(const struct cx *c, const char *param, struct al_shape *s)
{
	return shp_mil_param(c->n, c->in, c->n_in, param, 0, s) && s->rank >= 0;
}

static int64_t mil_int(const struct cx *c, const char *param, int64_t def)
{
	int64_t v[MAXV];
	long k = ali_mil_param_ints(c->n, param, v, MAXV);
	return k == 1 ? v[0] : def;
}

/* Kernel elements and input channels per group of a NN convolution. */
static void nn_conv_flops(struct cx *c, bool is3d)
{
	const struct al_shape *s = in0(c), *o = out0(c);
	uint64_t g = 1;
	int64_t kernel = 1;
	bool bias, deconv = false;
	if (is3d) {
		struct al_nn_convolution3d cv;
		ali_nn_convolution3d(c->n, &cv);
		if (al_pb_true(cv.n_groups))
			g = cv.n_groups.v;
		for (int a = 0; a < 3; a++)
			kernel = dim_mul(kernel, cv.kernel[a].has ? (int64_t)(cv.kernel[a].v & 0x7fffffff) : 1);
		bias = al_pb_true(cv.has_bias);
	} else {
		struct al_nn_convolution cv;
		ali_nn_convolution(c->n, &cv);
		const uint64_t *k = cv.kernel_size.v;
		long nk = cv.kernel_size.n;
		if (al_pb_true(cv.n_groups))
			g = cv.n_groups.v;
		if (nk <= 0)
			kernel = 9;
		for (long i = 0; i < nk && i < 2; i++)
			kernel = dim_mul(kernel, k[i] <= INT64_MAX ? (int64_t)k[i] : -1);
		if (nk == 1)
			kernel = dim_mul(kernel, kernel);
		bias = al_pb_true(cv.has_bias);
		deconv = al_pb_true(cv.is_deconvolution);
	}
	if (g > INT64_MAX)
		g = 1;
	int cax = s && s->rank >= 3 ? s->rank - (is3d ? 4 : 3) : -1;
	int64_t cin = shp_dim(s, cax), cout = o && o->rank >= 3 ? shp_dim(o, o->rank - (is3d ? 4 : 3)) : -1;
	int64_t per_group = deconv ? (cout >= 0 ? cout / (int64_t)g : -1) : (cin >= 0 ? cin / (int64_t)g : -1);
	int64_t base = deconv ? numel(s) : numel(o);
	c->flops = 2 * term(c, base) * term(c, per_group) * term(c, kernel);
	if (bias)
		c->flops += term(c, numel(o));
}

static void nn_flops(struct cx *c, int kind, const struct cost_row *r)
{
	const struct al_shape *s = in0(c), *o = out0(c);
	switch (r->cls) {
	case K_CONV:
		nn_conv_flops(c, kind == AL_NNK_convolution3d);
		return;
	case K_POOL: {
		struct al_nn_pooling pl;
		ali_nn_pooling(c->n, &pl); /* absent for the other pooling kinds */
		if (kind == AL_NNK_pooling && al_pb_true(pl.global_pooling)) {
			c->flops = term(c, numel(s));
			return;
		}
		int64_t kernel = 1;
		if (kind == AL_NNK_pooling3d) {
			struct al_nn_pooling3d p3;
			ali_nn_pooling3d(c->n, &p3);
			for (int a = 0; a < 3; a++)
				kernel = dim_mul(kernel, p3.kernel[a].has ? (int64_t)(p3.kernel[a].v & 0x7fffffff) : 1);
		} else {
			const uint64_t *k = pl.kernel_size.v;
			long nk = pl.kernel_size.n;
			if (nk <= 0)
				kernel = 9;
			for (long i = 0; i < nk && i < 2; i++)
				kernel = dim_mul(kernel, k[i] <= INT64_MAX ? (int64_t)k[i] : -1);
		}
		c->flops = term(c, numel(o)) * term(c, kernel);
		return;
	}
	case K_FC: {
		struct al_nn_inner_product ip;
		ali_nn_inner_product(c->n, &ip);
		int64_t cin = ip.input_channels.has && ip.input_channels.v <= INT64_MAX ? (int64_t)ip.input_channels.v : -1;
		int64_t cout = ip.output_channels.has && ip.output_channels.v <= INT64_MAX ? (int64_t)ip.output_channels.v
											    : -1;
		int64_t rows = cout > 0 && numel(o) >= 0 ? numel(o) / cout : -1;
		c->flops = 2 * term(c, rows) * term(c, cin) * term(c, cout);
		if (al_pb_true(ip.has_bias))
			c->flops += term(c, numel(o));
		return;
	}
	case K_MATMUL: {
		struct al_nn_batched_matmul bm;
		ali_nn_batched_matmul(c->n, &bm);
		int64_t k;
		if (c->n_in >= 2) {
			bool ta = al_pb_true(bm.transpose_a);
			k = s && s->rank >= 1 ? shp_dim(s, s->rank == 1 ? 0 : ta ? s->rank - 2 : s->rank - 1) : -1;
		} else {
			struct al_pb_u64 x1 = bm.weight_matrix_first_dimension;
			k = x1.has && x1.v <= INT64_MAX ? (int64_t)x1.v : -1;
			if (al_pb_true(bm.has_bias))
				c->flops += term(c, numel(o));
		}
		c->flops += 2 * term(c, numel(o)) * term(c, k);
		return;
	}
	case K_RNN: {
		struct al_nn_recurrent rn;
		ali_nn_recurrent(c->n, &rn);
		struct al_pb_u64 i1 = rn.input_vector_size, o1 = rn.output_vector_size;
		int64_t in_sz = i1.has && i1.v <= INT64_MAX ? (int64_t)i1.v : -1;
		int64_t h = o1.has && o1.v <= INT64_MAX ? (int64_t)o1.v : -1;
		int64_t steps = in_sz > 0 && numel(s) >= 0 ? numel(s) / in_sz : -1;
		double dirs = kind == AL_NNK_biDirectionalLSTM ? 2 : 1;
		c->flops = dirs * term(c, steps) * r->k * term(c, h) *
			   (2 * (term(c, in_sz) + term(c, h)) + 3);
		return;
	}
	case K_RESIZE: { /* upsample: mode BILINEAR = 1 */
		struct al_nn_upsample up;
		ali_nn_upsample(c->n, &up);
		c->flops = up.mode.has && up.mode.v == 1 ? 4 * term(c, numel(o)) : 0;
		return;
	}
	default:
		return;
	}
}

static void mil_flops(struct cx *c, const struct cost_row *r)
{
	const struct al_shape *o = out0(c);
	struct al_shape x, w;
	switch (r->cls) {
	case K_CONV: /* weight [Cout, Cin/groups, *K] */
	case K_DECONV: /* weight [Cin, Cout/groups, *K] */
		if (!mil_shape(c, "x", &x) || !mil_shape(c, "weight", &w) || w.rank < 2) {
			c->known = false;
			return;
		}
		c->flops = 2 * term(c, r->cls == K_CONV ? numel(o) : shp_numel(&x)) *
			   term(c, shp_prod(&w, 1, w.rank, NULL));
		if (ali_mil_param_present(c->n, "bias"))
			c->flops += term(c, numel(o));
		return;
	case K_FC: /* linear: weight [Dout, Din] */
		if (!mil_shape(c, "weight", &w) || w.rank != 2) {
			c->known = false;
			return;
		}
		c->flops = 2 * term(c, numel(o)) * term(c, shp_dim(&w, 1));
		if (ali_mil_param_present(c->n, "bias"))
			c->flops += term(c, numel(o));
		return;
	case K_MATMUL: {
		if (!mil_shape(c, "x", &x)) {
			c->known = false;
			return;
		}
		bool tx = mil_int(c, "transpose_x", 0) != 0;
		int64_t k = shp_dim(&x, x.rank == 1 ? 0 : tx ? x.rank - 2 : x.rank - 1);
		c->flops = 2 * term(c, numel(o)) * term(c, k);
		return;
	}
	case K_POOL: {
		int64_t k[MAXV], kernel = 1;
		long nk = ali_mil_param_ints(c->n, "kernel_sizes", k, MAXV);
		if (nk <= 0 || nk > MAXV) {
			c->known = false;
			return;
		}
		for (long i = 0; i < nk; i++)
			kernel = dim_mul(kernel, k[i]);
		c->flops = term(c, numel(o)) * term(c, kernel);
		return;
	}
	case K_RNN: { /* x [T, B, I], weight_hh [G*H, H] */
		struct al_shape hh;
		if (!mil_shape(c, "x", &x) || x.rank != 3 || !mil_shape(c, "weight_hh", &hh) || hh.rank != 2) {
			c->known = false;
			return;
		}
		char dir[32];
		double dirs = ali_mil_param_string(c->n, "direction", dir, sizeof dir) &&
				      strcmp(dir, "bidirectional") == 0 ? 2 : 1;
		int64_t h = shp_dim(&hh, 1), in_sz = shp_dim(&x, 2);
		c->flops = dirs * term(c, shp_prod(&x, 0, 2, NULL)) * r->k * term(c, h) *
			   (2 * (term(c, in_sz) + term(c, h)) + 3);
		return;
	}
	case K_SDPA: { /* q [..., L, E], k [..., S, E], v [..., S, Ev] */
		struct al_shape q, k, v;
		if (!mil_shape(c, "query", &q) || !mil_shape(c, "key", &k) || !mil_shape(c, "value", &v) ||
		    q.rank < 2 || k.rank < 2 || v.rank < 2) {
			c->known = false;
			return;
		}
		double ls = term(c, numel(o)) / (shp_dim(&v, v.rank - 1) > 0 ? (double)shp_dim(&v, v.rank - 1) : 1);
		double sl = term(c, shp_dim(&k, k.rank - 2));
		c->flops = ls * sl * (2 * term(c, shp_dim(&q, q.rank - 1)) + 2 * term(c, shp_dim(&v, v.rank - 1)) + 5);
		return;
	}
	case K_RESIZE: {
		char mode[32];
		bool lin = ali_mil_param_string(c->n, "resize_mode", mode, sizeof mode) &&
			   strcmp(mode, "NEAREST_NEIGHBOR") != 0;
		c->flops = lin ? 4 * term(c, numel(o)) : 0;
		return;
	}
	default:
		return;
	}
}

/* Per-element classes, shared by both worlds. */
static void simple_flops(struct cx *c, bool mil, const struct cost_row *r)
{
	switch (r->cls) {
	case K_EW:
		c->flops = r->k * term(c, numel(out0(c)));
		return;
	case K_EWN:
		c->flops = r->k * (c->n_in > 1 ? (double)(c->n_in - 1) : 1) * term(c, numel(out0(c)));
		return;
	case K_IN: {
		struct al_shape x; /* ML Program: the op's `x`, not whatever binding comes first */
		const struct al_shape *s = !mil ? in0(c) : mil_shape(c, "x", &x) ? &x : NULL;
		c->flops = r->k * term(c, numel(s));
		return;
	}
	case K_UNKNOWN:
		c->known = false;
		return;
	default:
		return;
	}
}

/* ================================================================ the node */

void ali_cost_node(struct al_node *n, const struct al_model *m, const struct al_shape *const *in,
		  uint32_t n_in)
{
	const struct al_node_src *src = al_src(n);
	struct cx c = {.n = n, .in = in, .n_in = n_in, .known = true};
	bool mil = src && src->mil_scope;
	n->cost = (struct al_cost){0, 0, 0, true};
	if (!src)
		return;
	if (mil && is_const_like(n))
		return; /* data, not work: its bytes count where it is read */

	static const struct cost_row none = {K_NONE, 0}, unknown = {K_UNKNOWN, 0};
	const struct cost_row *r = NULL;
	if (mil) { /* an op type not in mil_ops.def (kind -1) is not estimated */
		r = n->kind >= 0 && n->kind < AL_MILK_COUNT ? &mil_rows[n->kind] : NULL;
		if (r && r->cls == K_ABSENT)
			r = &unknown;
	} else if (n->kind >= 0 && n->kind < AL_NNK_COUNT) {
		r = nn_rows[n->kind].cls != K_ABSENT ? &nn_rows[n->kind] : &none;
		n->cost.param_bytes = ali_nn_weight_bytes(n);
		if (src->weights_elsewhere) /* a compiled espresso layer (espresso.c) */
			n->cost.param_bytes = src->weight_bytes_elsewhere;
	}
	if (!r) {
		c.known = false;
	} else if (r->cls == K_EW || r->cls == K_EWN || r->cls == K_IN || r->cls == K_UNKNOWN) {
		simple_flops(&c, mil, r);
	} else if (mil) {
		mil_flops(&c, r);
	} else {
		nn_flops(&c, n->kind, r);
	}

	/* activations: inputs that are not constants, and every output, at 2 bytes */
	uint64_t act = 0;
	bool act_known = true;
	for (uint32_t i = 0; i < n_in; i++) {
		const struct al_node *p = mil ? ali_mil_producer(n, n->inputs[i]) : NULL;
		if (mil && is_const_like(p)) {
			n->cost.param_bytes += const_bytes(m, p, 0);
			continue;
		}
		int64_t e = numel(in[i]);
		if (e < 0)
			act_known = false;
		else
			act = (uint64_t)e > UINT64_MAX / 2 - act ? UINT64_MAX / 2 : act + (uint64_t)e;
	}
	if (mil) { /* literal bindings are constants too */
		for (uint32_t i = 0; i < src->n_mil_args; i++) {
			bool values = false; /* some binding holds a Value (mil.c read them) */
			for (uint32_t b = 0; b < src->mil_args[i].n_binds && !values; b++)
				values = src->mil_args[i].binds[b].has_value;
			if (!values)
				continue;
			struct bind_bytes b = {m, n, 0, 0};
			ali_mil_arg_each_binding(src->mil_args[i].arg, add_literal_bytes, &b);
			n->cost.param_bytes += b.n;
		}
	}
	for (uint32_t o = 0; o < n->n_outputs && n->out_shapes; o++) {
		const struct al_ttype *t = n->out_types ? &n->out_types[o] : NULL;
		if (t && t->kind != 0 && t->kind != 4)
			continue; /* lists, tuples, dictionaries: no tensor size */
		int64_t e = numel(&n->out_shapes[o]);
		if (e < 0)
			act_known = false;
		else
			act = (uint64_t)e > UINT64_MAX / 2 - act ? UINT64_MAX / 2 : act + (uint64_t)e;
	}
	n->cost.act_bytes = act * 2; /* act <= UINT64_MAX / 2 */
	n->cost.flops = c.flops;
	n->cost.known = c.known && act_known;
}
