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

/* ================================================================ weight bytes (cost.c) */

/* WeightParams: floatValue = 1 (packed, or fixed32 each), float16Value = 2,
 * rawValue = 30, int8RawValue = 31; lengths only. */
static uint64_t weight_bytes(al_span w)
{
	struct pb_iter it;
	struct pb_field f;
	uint64_t n = 0;
	pb_iter_init(&it, w);
	while (pb_next(&it, &f)) {
		if (f.num == 1 && f.wire == PB_FIXED32)
			n += 4;
		else if (f.wire == PB_LEN && (f.num == 1 || f.num == 2 || f.num == 30 || f.num == 31))
			n += f.data.n;
	}
	return n;
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
