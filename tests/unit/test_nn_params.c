/* SPDX-License-Identifier: MIT */
/* test_nn_params.c: the typed NeuralNetwork params of src/format/nn_params.h
 * read in one pass what the pb_get_* readers read field by field: for
 * hand-written ConvolutionLayerParams / PoolingLayerParams / LSTM messages and
 * every prefix of each (a cut message is malformed), every typed field equals
 * the reader's answer for its number (last scalar wins, packed and unpacked
 * repeats add up, a wrong wire type or a fault drops the value). Also: an
 * accessor of another kind gives nothing, and the MIL Value readers of
 * src/format/mil_fields.h. */
#include "testutil.h"

#include "mil_fields.h"
#include "nn_params.h"
#include "pb.h"

#include <string.h>

#define SPAN(a) ((al_span){(const uint8_t *)(a), sizeof(a) - 1})

static void same_u64(al_span p, uint32_t num, struct al_pb_u64 v)
{
	uint64_t u = 0;
	bool has = pb_get_varint(p, num, &u);
	assert_int_equal(v.has, has);
	if (has)
		assert_int_equal(v.v, u);
	assert_int_equal(v.present, pb_has(p, num));
}

static void same_u64s(al_span p, uint32_t num, const struct al_pb_u64s *v)
{
	uint64_t u[AL_NN_MAXV];
	long n = pb_get_varints(p, num, u, AL_NN_MAXV);
	assert_int_equal(v->n, n);
	for (long i = 0; i < n && i < AL_NN_MAXV; i++)
		assert_int_equal(v->v[i], u[i]);
}

static void same_msg(al_span p, uint32_t num, struct al_pb_msg v)
{
	al_span s = {0};
	bool has = pb_get_bytes(p, num, &s);
	assert_int_equal(v.has, has);
	if (has) {
		assert_ptr_equal(v.v.p, s.p);
		assert_int_equal(v.v.n, s.n);
	}
	assert_int_equal(v.present, pb_has(p, num));
}

static struct al_node node_of(int kind, struct al_node_src *src, al_span params)
{
	memset(src, 0, sizeof *src);
	src->params = params;
	struct al_node n = {0};
	n.kind = kind;
	n.priv = src;
	return n;
}

/* outputChannels 8 (then 16: the last wins), kernelSize packed [3] then
 * unpacked 5, stride unpacked 2 2, dilation with a fixed32 (wrong wire: -1),
 * valid {paddingAmounts {}}, same as a varint (present, not a message),
 * isDeconvolution 1, hasBias 1, outputShape packed [7, 9]. */
static const char conv_msg[] = "\x08\x08\x08\x10"
			       "\xa2\x01\x01\x03\xa0\x01\x05"
			       "\xf0\x01\x02\xf0\x01\x02"
			       "\xc5\x02\x01\x00\x00\x00"
			       "\x92\x03\x02\x0a\x00"
			       "\x98\x03\x01"
			       "\xe0\x03\x01"
			       "\xb0\x04\x01"
			       "\xa2\x06\x02\x07\x09";

static void check_conv(al_span p)
{
	struct al_node_src src;
	struct al_node n = node_of(AL_NNK_convolution, &src, p);
	struct al_nn_convolution c;
	assert_true(ali_nn_convolution(&n, &c));
	same_u64(p, 1, c.output_channels);
	same_u64(p, 2, c.kernel_channels);
	same_u64(p, 10, c.n_groups);
	same_u64s(p, 20, &c.kernel_size);
	same_u64s(p, 30, &c.stride);
	same_u64s(p, 40, &c.dilation_factor);
	same_msg(p, 50, c.valid);
	same_msg(p, 51, c.same);
	same_u64(p, 60, c.is_deconvolution);
	same_u64(p, 70, c.has_bias);
	same_u64s(p, 100, &c.output_shape);
}

static void test_convolution_matches_reader(void **state)
{
	(void)state;
	al_span whole = SPAN(conv_msg);
	struct al_node_src src;
	struct al_node n = node_of(AL_NNK_convolution, &src, whole);
	struct al_nn_convolution c;
	assert_true(ali_nn_convolution(&n, &c));
	assert_int_equal(c.output_channels.v, 16);
	assert_int_equal(c.kernel_size.n, 2);
	assert_int_equal(c.kernel_size.v[0], 3);
	assert_int_equal(c.kernel_size.v[1], 5);
	assert_int_equal(c.stride.n, 2);
	assert_int_equal(c.dilation_factor.n, -1);
	assert_true(c.valid.has);
	assert_true(c.same.present);
	assert_false(c.same.has);
	assert_true(al_pb_true(c.is_deconvolution));
	assert_int_equal(c.output_shape.n, 2);
	assert_int_equal(c.output_shape.v[1], 9);
	for (size_t cut = 0; cut <= whole.n; cut++)
		check_conv((al_span){whole.p, cut});
}

/* type AVERAGE, kernelSize 20 values packed (more than AL_NN_MAXV kept),
 * includeLastPixel {paddingAmounts [1, 1]}, globalPooling 1. */
static void test_pooling_matches_reader(void **state)
{
	(void)state;
	uint8_t msg[64];
	size_t k = 0;
	msg[k++] = 0x08;
	msg[k++] = 0x01;
	msg[k++] = 0x52; /* field 10, length-delimited */
	msg[k++] = 20;
	for (int i = 0; i < 20; i++)
		msg[k++] = (uint8_t)(i + 1);
	const uint8_t tail[] = {0x82, 0x02, 0x04, 0x52, 0x02, 0x01, 0x01, 0xe0, 0x03, 0x01};
	memcpy(msg + k, tail, sizeof tail);
	k += sizeof tail;
	for (size_t cut = 0; cut <= k; cut++) {
		al_span p = {msg, cut};
		struct al_node_src src;
		struct al_node n = node_of(AL_NNK_pooling, &src, p);
		struct al_nn_pooling pl;
		assert_true(ali_nn_pooling(&n, &pl));
		same_u64(p, 1, pl.type);
		same_u64s(p, 10, &pl.kernel_size);
		same_u64s(p, 20, &pl.stride);
		same_msg(p, 30, pl.valid);
		same_msg(p, 31, pl.same);
		same_msg(p, 32, pl.include_last_pixel);
		same_u64(p, 50, pl.avg_pool_exclude_padding);
		same_u64(p, 60, pl.global_pooling);
		if (cut == k) {
			assert_int_equal(pl.kernel_size.n, 20);
			assert_int_equal(pl.kernel_size.v[AL_NN_MAXV - 1], AL_NN_MAXV);
			assert_true(al_pb_true(pl.global_pooling));
		}
	}
}

/* uniDirectionalLSTM: outputVectorSize 4, params {sequenceOutput 1}. */
static void test_recurrent(void **state)
{
	(void)state;
	static const char lstm[] = "\x10\x04\x7a\x02\x50\x01";
	struct al_node_src src;
	struct al_node n = node_of(AL_NNK_uniDirectionalLSTM, &src, SPAN(lstm));
	struct al_nn_recurrent r;
	assert_true(ali_nn_recurrent(&n, &r));
	assert_int_equal(r.output_vector_size.v, 4);
	assert_true(al_pb_true(r.sequence_output));
	/* the same bytes read as a GRU: field 15 is sequenceOutput there, a message here */
	n.kind = AL_NNK_gru;
	assert_true(ali_nn_recurrent(&n, &r));
	assert_false(r.sequence_output.has);
	assert_true(r.sequence_output.present);
}

static void test_other_kind_gives_nothing(void **state)
{
	(void)state;
	struct al_node_src src;
	struct al_node n = node_of(AL_NNK_pooling, &src, SPAN(conv_msg));
	struct al_nn_convolution c;
	memset(&c, 0xff, sizeof c);
	assert_false(ali_nn_convolution(&n, &c));
	assert_false(c.output_channels.has);
	assert_int_equal(c.kernel_size.n, 0);
	n.kind = -1;
	struct al_nn_pooling pl;
	assert_false(ali_nn_pooling(&n, &pl));
	assert_false(ali_nn_convolution(NULL, &c));
}

/* Value {type {tensorType {dataType 14, dimensions [{constant {size 2}},
 * {unknown}]}}, immediateValue {}} and a blobFileValue {offset 64}. */
static void test_mil_value_fields(void **state)
{
	(void)state;
	static const char val[] = "\x12\x0c\x0a\x0a\x08\x0e\x1a\x04\x0a\x02\x08\x02\x1a\x00"
				  "\x1a\x00";
	struct ali_mil_tensor_type t;
	assert_true(ali_mil_value_tensor_type(SPAN(val), &t));
	assert_true(t.has_dtype);
	assert_int_equal(t.dtype, 14);
	assert_int_equal(t.n_dims, 2);
	assert_true(t.constant[0]);
	assert_int_equal(t.size[0], 2);
	assert_false(t.constant[1]);
	assert_false(t.err);
	al_span iv;
	assert_true(ali_mil_value_immediate(SPAN(val), &iv));
	uint64_t off = 1;
	assert_false(ali_mil_value_blob_offset(SPAN(val), &off));
	static const char blob[] = "\x2a\x02\x10\x40";
	assert_true(ali_mil_value_blob_offset(SPAN(blob), &off));
	assert_int_equal(off, 64);
	assert_false(ali_mil_value_tensor_type(SPAN(blob), &t));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_convolution_matches_reader),
		cmocka_unit_test(test_pooling_matches_reader),
		cmocka_unit_test(test_recurrent),
		cmocka_unit_test(test_other_kind_gives_nothing),
		cmocka_unit_test(test_mil_value_fields),
	};
	return cmocka_run_group_tests_name("nn_params", tests, NULL, NULL);
}
