/* SPDX-License-Identifier: MIT */
/* nn_params.c: the typed parameters of NeuralNetwork layers (nn_params.h).
 *
 * Each kind has a table of its fields (number, where in the struct, the value
 * type, which follows from the member's C type through _Generic, so a row can
 * not disagree with its struct); one loop reads the message once and fills
 * every field of the table. Field numbers from coremltools
 * mlmodel/format/NeuralNetwork.proto. */
#include "nn_params.h"

#include <stddef.h>
#include <string.h>

enum val_type { V_U64, V_F32, V_MSG, V_U64S, V_F32S };

struct field_row {
	uint32_t num;
	uint8_t type;
	uint16_t at; /* offsetof in the kind's struct */
};

#define VT(x) _Generic((x), struct al_pb_u64: V_U64, struct al_pb_f32: V_F32, \
		       struct al_pb_msg: V_MSG, struct al_pb_u64s: V_U64S, struct al_pb_f32s: V_F32S)
#define ROW(st, member, number) {number, VT(((struct st *)0)->member), offsetof(struct st, member)}

static const struct field_row convolution_rows[] = {
	ROW(al_nn_convolution, output_channels, 1),
	ROW(al_nn_convolution, kernel_channels, 2),
	ROW(al_nn_convolution, n_groups, 10),
	ROW(al_nn_convolution, kernel_size, 20),
	ROW(al_nn_convolution, stride, 30),
	ROW(al_nn_convolution, dilation_factor, 40),
	ROW(al_nn_convolution, valid, 50),
	ROW(al_nn_convolution, same, 51),
	ROW(al_nn_convolution, is_deconvolution, 60),
	ROW(al_nn_convolution, has_bias, 70),
	ROW(al_nn_convolution, weights, 90),
	ROW(al_nn_convolution, bias, 91),
	ROW(al_nn_convolution, output_shape, 100),
	{0, 0, 0},
};

static const struct field_row pooling_rows[] = {
	ROW(al_nn_pooling, type, 1),
	ROW(al_nn_pooling, kernel_size, 10),
	ROW(al_nn_pooling, stride, 20),
	ROW(al_nn_pooling, valid, 30),
	ROW(al_nn_pooling, same, 31),
	ROW(al_nn_pooling, include_last_pixel, 32),
	ROW(al_nn_pooling, avg_pool_exclude_padding, 50),
	ROW(al_nn_pooling, global_pooling, 60),
	{0, 0, 0},
};

static const struct field_row inner_product_rows[] = {
	ROW(al_nn_inner_product, input_channels, 1),
	ROW(al_nn_inner_product, output_channels, 2),
	ROW(al_nn_inner_product, has_bias, 10),
	ROW(al_nn_inner_product, weights, 20),
	ROW(al_nn_inner_product, bias, 21),
	ROW(al_nn_inner_product, int8_dynamic_quantize, 22),
	{0, 0, 0},
};

static const struct field_row batchnorm_rows[] = {
	ROW(al_nn_batchnorm, channels, 1),
	ROW(al_nn_batchnorm, compute_mean_var, 5),
	ROW(al_nn_batchnorm, instance_normalization, 6),
	ROW(al_nn_batchnorm, epsilon, 10),
	ROW(al_nn_batchnorm, gamma, 15),
	ROW(al_nn_batchnorm, beta, 16),
	ROW(al_nn_batchnorm, mean, 17),
	ROW(al_nn_batchnorm, variance, 18),
	{0, 0, 0},
};

static const struct field_row upsample_rows[] = {
	ROW(al_nn_upsample, scaling_factor, 1),
	ROW(al_nn_upsample, mode, 5),
	ROW(al_nn_upsample, linear_upsample_mode, 6),
	ROW(al_nn_upsample, fractional_scaling_factor, 7),
	{0, 0, 0},
};

static const struct field_row convolution3d_rows[] = {
	ROW(al_nn_convolution3d, output_channels, 1),
	ROW(al_nn_convolution3d, input_channels, 2),
	ROW(al_nn_convolution3d, n_groups, 10),
	ROW(al_nn_convolution3d, kernel[0], 20),
	ROW(al_nn_convolution3d, kernel[1], 21),
	ROW(al_nn_convolution3d, kernel[2], 22),
	ROW(al_nn_convolution3d, stride[0], 31),
	ROW(al_nn_convolution3d, stride[1], 32),
	ROW(al_nn_convolution3d, stride[2], 33),
	ROW(al_nn_convolution3d, dilation[0], 40),
	ROW(al_nn_convolution3d, dilation[1], 41),
	ROW(al_nn_convolution3d, dilation[2], 42),
	ROW(al_nn_convolution3d, has_bias, 50),
	ROW(al_nn_convolution3d, weights, 60),
	ROW(al_nn_convolution3d, bias, 61),
	ROW(al_nn_convolution3d, padding_type, 70),
	ROW(al_nn_convolution3d, custom_padding[0], 80),
	ROW(al_nn_convolution3d, custom_padding[1], 81),
	ROW(al_nn_convolution3d, custom_padding[2], 82),
	ROW(al_nn_convolution3d, custom_padding[3], 83),
	ROW(al_nn_convolution3d, custom_padding[4], 84),
	ROW(al_nn_convolution3d, custom_padding[5], 85),
	ROW(al_nn_convolution3d, is_deconvolution, 86),
	ROW(al_nn_convolution3d, output_shape, 87),
	{0, 0, 0},
};

static const struct field_row pooling3d_rows[] = {
	ROW(al_nn_pooling3d, type, 1),
	ROW(al_nn_pooling3d, kernel[0], 2),
	ROW(al_nn_pooling3d, kernel[1], 3),
	ROW(al_nn_pooling3d, kernel[2], 4),
	ROW(al_nn_pooling3d, stride[0], 5),
	ROW(al_nn_pooling3d, stride[1], 6),
	ROW(al_nn_pooling3d, stride[2], 7),
	ROW(al_nn_pooling3d, custom_padding[0], 8),
	ROW(al_nn_pooling3d, custom_padding[1], 9),
	ROW(al_nn_pooling3d, custom_padding[2], 10),
	ROW(al_nn_pooling3d, custom_padding[3], 11),
	ROW(al_nn_pooling3d, custom_padding[4], 12),
	ROW(al_nn_pooling3d, custom_padding[5], 13),
	ROW(al_nn_pooling3d, count_exclude_padding, 14),
	ROW(al_nn_pooling3d, padding_type, 15),
	{0, 0, 0},
};

/* simpleRecurrent and gru: sequenceOutput = 15, hasBiasVector(s) = 20 */
static const struct field_row rnn_rows[] = {
	ROW(al_nn_recurrent, input_vector_size, 1),
	ROW(al_nn_recurrent, output_vector_size, 2),
	ROW(al_nn_recurrent, sequence_output, 15),
	ROW(al_nn_recurrent, has_bias_vectors, 20),
	ROW(al_nn_recurrent, reverse_input, 100),
	{0, 0, 0},
};
/* the LSTMs: params = 15 (LSTMParams), reverseInput = 100 (unidirectional) */
static const struct field_row lstm_rows[] = {
	ROW(al_nn_recurrent, input_vector_size, 1),
	ROW(al_nn_recurrent, output_vector_size, 2),
	ROW(al_nn_recurrent, lstm_params, 15),
	ROW(al_nn_recurrent, reverse_input, 100),
	{0, 0, 0},
};
/* LSTMParams */
static const struct field_row lstm_params_rows[] = {
	ROW(al_nn_recurrent, sequence_output, 10),
	ROW(al_nn_recurrent, has_bias_vectors, 20),
	ROW(al_nn_recurrent, forget_bias, 30),
	ROW(al_nn_recurrent, has_peephole_vectors, 40),
	ROW(al_nn_recurrent, coupled_input_and_forget_gate, 50),
	ROW(al_nn_recurrent, cell_clip_threshold, 60),
	{0, 0, 0},
};

static const struct field_row batched_matmul_rows[] = {
	ROW(al_nn_batched_matmul, transpose_a, 1),
	ROW(al_nn_batched_matmul, transpose_b, 2),
	ROW(al_nn_batched_matmul, weight_matrix_first_dimension, 5),
	ROW(al_nn_batched_matmul, weight_matrix_second_dimension, 6),
	ROW(al_nn_batched_matmul, has_bias, 7),
	ROW(al_nn_batched_matmul, weights, 8),
	ROW(al_nn_batched_matmul, bias, 9),
	ROW(al_nn_batched_matmul, int8_dynamic_quantize, 10),
	{0, 0, 0},
};

/* One repeated varint occurrence (pb_get_varints' rules). */
static void add_u64s(struct al_pb_u64s *r, const struct pb_field *f)
{
	if (r->n < 0)
		return;
	if (f->wire == PB_VARINT) {
		if (r->n < AL_NN_MAXV)
			r->v[r->n] = f->u;
		r->n++;
	} else if (f->wire == PB_LEN) {
		size_t pos = 0;
		while (pos < f->data.n) {
			uint64_t v;
			if (pb_varint(f->data.p, f->data.n, &pos, &v)) {
				r->n = -1;
				return;
			}
			if (r->n < AL_NN_MAXV)
				r->v[r->n] = v;
			r->n++;
		}
	} else {
		r->n = -1;
	}
}

/* One repeated float occurrence (pb_get_floats' rules). */
static void add_f32s(struct al_pb_f32s *r, const struct pb_field *f)
{
	if (r->n < 0)
		return;
	if (f->wire == PB_FIXED32) {
		if (r->n < AL_NN_MAXV) {
			uint32_t b = (uint32_t)f->u;
			memcpy(&r->v[r->n], &b, 4);
		}
		r->n++;
	} else if (f->wire == PB_LEN && f->data.n % 4 == 0) {
		for (size_t i = 0; i < f->data.n; i += 4, r->n++)
			if (r->n < AL_NN_MAXV) {
				uint32_t b = al_rd32le(f->data.p + i);
				memcpy(&r->v[r->n], &b, 4);
			}
	} else {
		r->n = -1;
	}
}

static void put(void *out, const struct field_row *row, const struct pb_field *f)
{
	void *at = (char *)out + row->at;
	switch (row->type) {
	case V_U64: {
		struct al_pb_u64 *v = at;
		v->present = true;
		if (f->wire == PB_VARINT) {
			v->v = f->u;
			v->has = true;
		}
		return;
	}
	case V_F32: {
		struct al_pb_f32 *v = at;
		if (f->wire == PB_FIXED32) {
			uint32_t b = (uint32_t)f->u;
			memcpy(&v->v, &b, 4);
			v->has = true;
		}
		return;
	}
	case V_MSG: {
		struct al_pb_msg *v = at;
		v->present = true;
		if (f->wire == PB_LEN) {
			v->v = f->data;
			v->has = true;
		}
		return;
	}
	case V_U64S:
		add_u64s(at, f);
		return;
	case V_F32S:
		add_f32s(at, f);
		return;
	default:
		return;
	}
}

/* A malformed message: every value read is dropped (the pb_get_* readers find
 * nothing in it), only `present` stays for what came before the fault. */
static void drop(void *out, const struct field_row *rows)
{
	for (const struct field_row *r = rows; r->num; r++) {
		void *at = (char *)out + r->at;
		switch (r->type) {
		case V_U64:
			((struct al_pb_u64 *)at)->has = false;
			break;
		case V_F32:
			((struct al_pb_f32 *)at)->has = false;
			break;
		case V_MSG:
			((struct al_pb_msg *)at)->has = false;
			((struct al_pb_msg *)at)->v = (al_span){0};
			break;
		case V_U64S:
			((struct al_pb_u64s *)at)->n = -1;
			break;
		case V_F32S:
			((struct al_pb_f32s *)at)->n = -1;
			break;
		default:
			break;
		}
	}
}

/* Fill out (already zeroed) from msg by the rows: one pass over the fields. */
static void decode(al_span msg, const struct field_row *rows, void *out)
{
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f))
		for (const struct field_row *r = rows; r->num; r++)
			if (r->num == f.num)
				put(out, r, &f);
	if (it.err)
		drop(out, rows);
}

static bool decode_kind(const struct al_node *n, int kind, const struct field_row *rows, void *out,
			size_t size)
{
	memset(out, 0, size);
	if (!n || n->kind != kind || !al_src(n))
		return false;
	decode(al_src(n)->params, rows, out);
	return true;
}

bool ali_nn_convolution(const struct al_node *n, struct al_nn_convolution *out)
{
	return decode_kind(n, AL_NNK_convolution, convolution_rows, out, sizeof *out);
}

bool ali_nn_pooling(const struct al_node *n, struct al_nn_pooling *out)
{
	return decode_kind(n, AL_NNK_pooling, pooling_rows, out, sizeof *out);
}

bool ali_nn_inner_product(const struct al_node *n, struct al_nn_inner_product *out)
{
	return decode_kind(n, AL_NNK_innerProduct, inner_product_rows, out, sizeof *out);
}

bool ali_nn_batchnorm(const struct al_node *n, struct al_nn_batchnorm *out)
{
	return decode_kind(n, AL_NNK_batchnorm, batchnorm_rows, out, sizeof *out);
}

bool ali_nn_upsample(const struct al_node *n, struct al_nn_upsample *out)
{
	return decode_kind(n, AL_NNK_upsample, upsample_rows, out, sizeof *out);
}

bool ali_nn_convolution3d(const struct al_node *n, struct al_nn_convolution3d *out)
{
	return decode_kind(n, AL_NNK_convolution3d, convolution3d_rows, out, sizeof *out);
}

bool ali_nn_pooling3d(const struct al_node *n, struct al_nn_pooling3d *out)
{
	return decode_kind(n, AL_NNK_pooling3d, pooling3d_rows, out, sizeof *out);
}

bool ali_nn_recurrent(const struct al_node *n, struct al_nn_recurrent *out)
{
	bool lstm = n && (n->kind == AL_NNK_uniDirectionalLSTM || n->kind == AL_NNK_biDirectionalLSTM);
	int kind = n && n->kind == AL_NNK_gru ? AL_NNK_gru : AL_NNK_simpleRecurrent;
	if (lstm)
		kind = n->kind;
	if (!decode_kind(n, kind, lstm ? lstm_rows : rnn_rows, out, sizeof *out))
		return false;
	if (lstm)
		decode(out->lstm_params.v, lstm_params_rows, out);
	return true;
}

bool ali_nn_batched_matmul(const struct al_node *n, struct al_nn_batched_matmul *out)
{
	return decode_kind(n, AL_NNK_batchedMatmul, batched_matmul_rows, out, sizeof *out);
}

bool ali_nn_pair(const struct al_pb_u64s *r, int64_t d, int64_t v[2])
{
	if (r->n < 0 || r->n > 2)
		return false;
	v[0] = r->n >= 1 ? al_pb_s64(r->v[0]) : d;
	v[1] = r->n == 2 ? al_pb_s64(r->v[1]) : v[0];
	return true;
}

/* ================================================================ weight bytes (cost.c) */

/* WeightParams: floatValue = 1 (packed, or fixed32 each), float16Value = 2,
 * rawValue = 30, int8RawValue = 31, quantization = 40; lengths only. */
void ali_nn_weight_form(al_span w, struct ali_nn_weight_form *out)
{
	struct pb_iter it;
	struct pb_field f;
	memset(out, 0, sizeof *out);
	pb_iter_init(&it, w);
	while (pb_next(&it, &f)) {
		if (f.num == 1 && f.wire == PB_FIXED32)
			out->fp32 += 4;
		else if (f.wire == PB_LEN && f.num == 1)
			out->fp32 += f.data.n;
		else if (f.wire == PB_LEN && f.num == 2)
			out->fp16 += f.data.n;
		else if (f.wire == PB_LEN && f.num == 30)
			out->raw += f.data.n;
		else if (f.wire == PB_LEN && f.num == 31)
			out->int8 += f.data.n;
		else if (f.num == 40)
			out->quantized = true;
	}
}

static uint64_t weight_bytes(al_span w)
{
	struct ali_nn_weight_form f;
	ali_nn_weight_form(w, &f);
	return f.fp32 + f.fp16 + f.raw + f.int8;
}

uint64_t ali_nn_weight_bytes(const struct al_node *node)
{
	int kind = node ? node->kind : -1;
	if (kind < 0 || kind >= AL_NNK_COUNT || !al_src(node))
		return 0;
	al_span p = al_src(node)->params;
	struct pb_iter it, jt;
	struct pb_field f, g;
	uint64_t n = 0;
	pb_iter_init(&it, p);
	while (pb_next(&it, &f)) {
		if (f.wire != PB_LEN)
			continue;
		const struct al_weight_site *ws = ali_nn_weight_sites[kind];
		for (; ws && ws->field; ws++) {
			if (ws->field != f.num)
				continue;
			if (ws->holder == AL_WH_NONE) {
				n += weight_bytes(f.data);
				break;
			}
			pb_iter_init(&jt, f.data);
			while (pb_next(&jt, &g))
				if (g.wire == PB_LEN)
					n += weight_bytes(g.data);
			break;
		}
	}
	return n;
}

/* ================================================================ fields in words (report_params.c)
 * Numbers and names from coremltools' NeuralNetwork.proto as listed in
 * knowledge/coreml-format-facts.md section 5. */

#define END {0, NULL, ALI_P_U, NULL}
static const struct ali_nn_pfield conv_f[] = {
	{1, "outputChannels", ALI_P_U, NULL}, {2, "kernelChannels", ALI_P_U, NULL}, {10, "nGroups", ALI_P_U, NULL},
	{20, "kernelSize", ALI_P_US, NULL}, {30, "stride", ALI_P_US, NULL}, {40, "dilationFactor", ALI_P_US, NULL},
	{50, "valid", ALI_P_ONE, "padding"}, {51, "same", ALI_P_ONE, "padding"}, {60, "isDeconvolution", ALI_P_B, NULL},
	{70, "hasBias", ALI_P_B, NULL}, {100, "outputShape", ALI_P_US, NULL}, END};
static const struct ali_nn_pfield pool_f[] = {
	{1, "type", ALI_P_E, "MAX|AVERAGE|L2"}, {10, "kernelSize", ALI_P_US, NULL}, {20, "stride", ALI_P_US, NULL},
	{30, "valid", ALI_P_ONE, "padding"}, {31, "same", ALI_P_ONE, "padding"}, {32, "includeLastPixel", ALI_P_ONE, "padding"},
	{50, "avgPoolExcludePadding", ALI_P_B, NULL}, {60, "globalPooling", ALI_P_B, NULL}, END};
static const struct ali_nn_pfield act_f[] = {
	{5, "linear", ALI_P_ONE, "function"}, {10, "ReLU", ALI_P_ONE, "function"}, {15, "leakyReLU", ALI_P_ONE, "function"},
	{20, "thresholdedReLU", ALI_P_ONE, "function"}, {25, "PReLU", ALI_P_ONE, "function"}, {30, "tanh", ALI_P_ONE, "function"},
	{31, "scaledTanh", ALI_P_ONE, "function"}, {40, "sigmoid", ALI_P_ONE, "function"},
	{41, "sigmoidHard", ALI_P_ONE, "function"}, {50, "ELU", ALI_P_ONE, "function"}, {60, "softsign", ALI_P_ONE, "function"},
	{70, "softplus", ALI_P_ONE, "function"}, {71, "parametricSoftplus", ALI_P_ONE, "function"}, END};
static const struct ali_nn_pfield ip_f[] = {
	{1, "inputChannels", ALI_P_U, NULL}, {2, "outputChannels", ALI_P_U, NULL}, {10, "hasBias", ALI_P_B, NULL},
	{22, "int8DynamicQuantize", ALI_P_B, NULL}, END};
static const struct ali_nn_pfield emb_f[] = {
	{1, "inputDim", ALI_P_U, NULL}, {2, "outputChannels", ALI_P_U, NULL}, {10, "hasBias", ALI_P_B, NULL}, END};
static const struct ali_nn_pfield embnd_f[] = {
	{1, "vocabSize", ALI_P_U, NULL}, {2, "embeddingSize", ALI_P_U, NULL}, {3, "hasBias", ALI_P_B, NULL}, END};
static const struct ali_nn_pfield bn_f[] = {
	{1, "channels", ALI_P_U, NULL}, {5, "computeMeanVar", ALI_P_B, NULL}, {6, "instanceNormalization", ALI_P_B, NULL},
	{10, "epsilon", ALI_P_F, NULL}, END};
static const struct ali_nn_pfield up_f[] = {
	{1, "scalingFactor", ALI_P_US, NULL}, {7, "fractionalScalingFactor", ALI_P_FS, NULL},
	{5, "mode", ALI_P_E, "NN|BILINEAR"}, {6, "linearUpsampleMode", ALI_P_E, "DEFAULT|ALIGN_CORNERS_TRUE|ALIGN_CORNERS_FALSE"},
	END};
static const struct ali_nn_pfield pad_f[] = {
	{1, "constant", ALI_P_ONE, "type"}, {2, "reflection", ALI_P_ONE, "type"}, {3, "replication", ALI_P_ONE, "type"}, END};
static const struct ali_nn_pfield lrn_f[] = {
	{1, "alpha", ALI_P_F, NULL}, {2, "beta", ALI_P_F, NULL}, {3, "localSize", ALI_P_U, NULL}, {4, "k", ALI_P_F, NULL}, END};
static const struct ali_nn_pfield mvn_f[] = {
	{1, "acrossChannels", ALI_P_B, NULL}, {2, "normalizeVariance", ALI_P_B, NULL}, {3, "epsilon", ALI_P_F, NULL}, END};
static const struct ali_nn_pfield eps1_f[] = {{1, "epsilon", ALI_P_F, NULL}, END};
static const struct ali_nn_pfield alpha1_f[] = {{1, "alpha", ALI_P_F, NULL}, END};
static const struct ali_nn_pfield unary_f[] = {
	{1, "type", ALI_P_E, "SQRT|RSQRT|INVERSE|POWER|EXP|LOG|ABS|THRESHOLD"}, {2, "alpha", ALI_P_F, NULL},
	{3, "epsilon", ALI_P_F, NULL}, {4, "shift", ALI_P_F, NULL}, {5, "scale", ALI_P_F, NULL}, END};
static const struct ali_nn_pfield scale_f[] = {
	{1, "shapeScale", ALI_P_US, NULL}, {3, "hasBias", ALI_P_B, NULL}, {4, "shapeBias", ALI_P_US, NULL}, END};
static const struct ali_nn_pfield shape1_f[] = {{1, "shape", ALI_P_US, NULL}, END};
static const struct ali_nn_pfield reshape_f[] = {
	{1, "targetShape", ALI_P_IS, NULL}, {2, "mode", ALI_P_E, "CHANNEL_FIRST|CHANNEL_LAST"}, END};
static const struct ali_nn_pfield flatten_f[] = {{1, "mode", ALI_P_E, "CHANNEL_FIRST|CHANNEL_LAST"}, END};
static const struct ali_nn_pfield permute_f[] = {{1, "axis", ALI_P_US, NULL}, END};
static const struct ali_nn_pfield axes_u_f[] = {{1, "axes", ALI_P_US, NULL}, END};
static const struct ali_nn_pfield axes_i_f[] = {{1, "axes", ALI_P_IS, NULL}, END};
static const struct ali_nn_pfield concat_f[] = {{100, "sequenceConcat", ALI_P_B, NULL}, END};
static const struct ali_nn_pfield concatnd_f[] = {{1, "axis", ALI_P_I, NULL}, {2, "interleave", ALI_P_B, NULL}, END};
static const struct ali_nn_pfield axis1_f[] = {{1, "axis", ALI_P_I, NULL}, END};
static const struct ali_nn_pfield splitnd_f[] = {
	{1, "axis", ALI_P_I, NULL}, {2, "numSplits", ALI_P_U, NULL}, {3, "splitSizes", ALI_P_US, NULL}, END};
static const struct ali_nn_pfield target_i_f[] = {{1, "targetShape", ALI_P_IS, NULL}, END};
static const struct ali_nn_pfield squeeze_f[] = {{1, "axes", ALI_P_IS, NULL}, {2, "squeezeAll", ALI_P_B, NULL}, END};
static const struct ali_nn_pfield tile_f[] = {{1, "reps", ALI_P_US, NULL}, END};
static const struct ali_nn_pfield clip_f[] = {{1, "minVal", ALI_P_F, NULL}, {2, "maxVal", ALI_P_F, NULL}, END};
static const struct ali_nn_pfield gelu_f[] = {{1, "mode", ALI_P_E, "EXACT|TANH_APPROXIMATION|SIGMOID_APPROXIMATION"}, END};
static const struct ali_nn_pfield ln_f[] = {{1, "normalizedShape", ALI_P_IS, NULL}, {2, "eps", ALI_P_F, NULL}, END};

const struct ali_nn_pfield *const ali_nn_param_fields[AL_NNK_COUNT] = {
	[AL_NNK_convolution] = conv_f, [AL_NNK_pooling] = pool_f, [AL_NNK_activation] = act_f,
	[AL_NNK_innerProduct] = ip_f, [AL_NNK_embedding] = emb_f, [AL_NNK_embeddingND] = embnd_f,
	[AL_NNK_batchnorm] = bn_f, [AL_NNK_upsample] = up_f, [AL_NNK_padding] = pad_f, [AL_NNK_lrn] = lrn_f,
	[AL_NNK_mvn] = mvn_f, [AL_NNK_l2normalize] = eps1_f, [AL_NNK_add] = alpha1_f, [AL_NNK_multiply] = alpha1_f,
	[AL_NNK_unary] = unary_f, [AL_NNK_scale] = scale_f, [AL_NNK_bias] = shape1_f,
	[AL_NNK_loadConstant] = shape1_f, [AL_NNK_loadConstantND] = shape1_f, [AL_NNK_reshape] = reshape_f,
	[AL_NNK_flatten] = flatten_f, [AL_NNK_permute] = permute_f, [AL_NNK_transpose] = axes_u_f,
	[AL_NNK_concat] = concat_f, [AL_NNK_concatND] = concatnd_f, [AL_NNK_softmaxND] = axis1_f,
	[AL_NNK_stack] = axis1_f, [AL_NNK_gather] = axis1_f, [AL_NNK_splitND] = splitnd_f,
	[AL_NNK_reshapeStatic] = target_i_f, [AL_NNK_expandDims] = axes_i_f, [AL_NNK_squeeze] = squeeze_f,
	[AL_NNK_tile] = tile_f, [AL_NNK_clip] = clip_f, [AL_NNK_gelu] = gelu_f, [AL_NNK_layerNormalization] = ln_f,
};
