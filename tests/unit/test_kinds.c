/* SPDX-License-Identifier: MIT */
/* test_kinds.c: every per-kind table, checked against the kind lists.
 *
 * The layer and op kinds come from nn_layers.def and mil_ops.def; each stage keeps
 * one table indexed by kind (shape functions, cost rows, weight sites, executors).
 * For each table this names the kinds without an entry and compares them with the
 * list written here, which is what each stage leaves out today: a kind that loses
 * its entry (a row deleted or misplaced, a new kind without one) fails with both
 * lists printed. A kind that gains an entry fails too, until its line here goes:
 * what a stage does not cover is decided in this file, never silently. */
#include "testutil.h"

#include "analysis.h"
#include "interp.h"
#include "interp_mil.h"
#include "interp_nn.h"
#include "shapes.h"

#include <stdio.h>
#include <string.h>

typedef bool has_fn(int k);

/* The names of the kinds of [0, n) for which has(k) is false, space-separated. */
static const char *missing(has_fn *has, int n, bool nn)
{
	static char buf[8192];
	size_t len = 0;
	buf[0] = '\0';
	for (int k = 0; k < n; k++) {
		if (has(k))
			continue;
		const char *name = nn ? ali_nn_kinds[k].name : ali_mil_kinds[k].name;
		int w = snprintf(buf + len, sizeof buf - len, "%s%s", len ? " " : "", name);
		assert_true(w > 0 && (size_t)w < sizeof buf - len);
		len += (size_t)w;
	}
	return buf;
}

static void expect_missing(has_fn *has, bool nn, const char *table, const char *want)
{
	const char *got = missing(has, nn ? AL_NNK_COUNT : AL_MILK_COUNT, nn);
	if (strcmp(got, want) != 0)
		print_error("%s: the kinds without an entry changed\n  want: %s\n  got:  %s\n", table, want,
			    got);
	assert_string_equal(got, want);
	/* the accessors refuse what is not a kind */
	assert_false(has(-1));
	assert_false(has(nn ? AL_NNK_COUNT : AL_MILK_COUNT));
}

/* The generated names agree with the tables and the lookups. */
static void test_generated_names(void **state)
{
	(void)state;
	assert_int_equal(ali_nn_kinds_count, AL_NNK_COUNT);
	assert_int_equal(ali_mil_kinds_count, AL_MILK_COUNT);
#define AL_NN(id, num, fl)                                                      \
	assert_int_equal(ali_nn_kinds[AL_NNK_##id].field, AL_NN_FIELD_##id);      \
	assert_int_equal(AL_NN_FIELD_##id, num);                                 \
	assert_string_equal(ali_nn_kinds[AL_NNK_##id].name, #id);                 \
	assert_int_equal(ali_nn_kinds[AL_NNK_##id].flags, fl);                    \
	assert_int_equal(ali_nn_kind_by_field(AL_NN_FIELD_##id), AL_NNK_##id);    \
	assert_int_equal(ali_nn_kind_by_name(#id), AL_NNK_##id);
#include "nn_layers.def"
#undef AL_NN
#define AL_OP(id, first, fl)                                                    \
	assert_string_equal(ali_mil_kinds[AL_MILK_##id].name, #id);               \
	assert_int_equal(ali_mil_kinds[AL_MILK_##id].since, first);               \
	assert_int_equal(ali_mil_kinds[AL_MILK_##id].flags, fl);                  \
	assert_int_equal(ali_mil_kind_by_name(#id), AL_MILK_##id);
#include "mil_ops.def"
#undef AL_OP
	assert_int_equal(ali_nn_kind_by_name("conv"), -1); /* a MIL op, not a layer */
	assert_int_equal(ali_nn_kind_by_name(NULL), -1);
	/* spot checks against the proto, independent of the .def expansion */
	assert_int_equal(AL_NN_FIELD_convolution, 100);
	assert_int_equal(AL_NN_FIELD_sliceBySize, 1470);
	assert_int_equal(AL_NNK_convolution, 0);
	assert_string_equal(ali_nn_kinds[AL_NNK_COUNT - 1].name, "convolution3d");
	assert_int_equal(AL_MODEL_FIELD_neuralNetworkClassifier, 403);
	assert_int_equal(AL_MODEL_FIELD_mlProgram, 502);
}

static void test_nn_shapes(void **state)
{
	(void)state;
	expect_missing(ali_shapes_nn_has, true, "shapes_nn.c rows", "");
}

static void test_mil_shapes(void **state)
{
	(void)state;
	expect_missing(ali_shapes_mil_has, false, "shapes_mil.c rows", "affine batch_to_space classify cond const constexpr_affine_dequantize "
		       "constexpr_blockwise_shift_scale constexpr_cast constexpr_lut_to_dense "
		       "constexpr_lut_to_sparse constexpr_sparse_blockwise_shift_scale "
		       "constexpr_sparse_to_dense conv_quantized crop_resize custom_layer dequantize "
		       "einsum fill gather_nd gru list_gather list_length list_read list_scatter "
		       "list_write lstm make_list non_maximum_suppression non_zero one_hot quantize "
		       "random_bernoulli random_categorical random_normal random_uniform range_1d "
		       "read_state resample reshape_like resize rnn slice_update sliding_windows "
		       "space_to_batch while_loop write_state");
}

static void test_nn_cost(void **state)
{
	(void)state;
	/* without a row: no arithmetic (data movement, control flow, constants) */
	expect_missing(ali_cost_nn_has, true, "cost.c nn_rows", "embedding crop padding loadConstant reshape flatten permute concat split "
		       "sequenceRepeat reorganizeData slice copy branch loop loopBreak loopContinue "
		       "rangeStatic rangeDynamic tile stack gather scatter gatherND scatterND "
		       "gatherAlongAxis scatterAlongAxis reverse reverseSeq splitND concatND transpose "
		       "sliceStatic sliceDynamic slidingWindows embeddingND getShape loadConstantND "
		       "fillLike fillStatic fillDynamic broadcastToLike broadcastToStatic "
		       "broadcastToDynamic squeeze expandDims flattenTo2D reshapeLike reshapeStatic "
		       "reshapeDynamic rankPreservingReshape constantPad oneHot sliceBySize");
}

/* Issue #30 item 3: the kinds with no ANE evidence (kind_status.c): uncertain, never ANE by
 * default. The list changes only on purpose, when a report is added. */
static bool nn_status_has(int k)
{
	return ali_kind_status_has(true, k);
}

static bool mil_status_has(int k)
{
	return ali_kind_status_has(false, k);
}

static void test_nn_ane_status(void **state)
{
	(void)state;
	expect_missing(nn_status_has, true, "kind_status.c nn_rows", "embedding batchnorm mvn l2normalize softmax lrn crop padding upsample resizeBilinear "
		       "cropResize unary add multiply average scale bias max min dot reduce loadConstant reshape "
		       "flatten permute concat split sequenceRepeat reorganizeData slice simpleRecurrent gru "
		       "uniDirectionalLSTM biDirectionalLSTM custom copy branch loop loopBreak loopContinue "
		       "rangeStatic rangeDynamic clip ceil floor sign round exp2 sin cos tan asin acos atan sinh "
		       "cosh tanh asinh acosh atanh erf gelu equal notEqual lessThan lessEqual greaterThan "
		       "greaterEqual logicalOr logicalXor logicalNot logicalAnd modBroadcastable "
		       "minBroadcastable maxBroadcastable addBroadcastable powBroadcastable divideBroadcastable "
		       "floorDivBroadcastable multiplyBroadcastable subtractBroadcastable tile stack gather "
		       "scatter gatherND scatterND softmaxND gatherAlongAxis scatterAlongAxis reverse reverseSeq "
		       "splitND concatND transpose sliceStatic sliceDynamic slidingWindows topK argMin argMax "
		       "embeddingND batchedMatmul getShape loadConstantND fillLike fillStatic fillDynamic "
		       "broadcastToLike broadcastToStatic broadcastToDynamic squeeze expandDims flattenTo2D "
		       "reshapeLike reshapeStatic reshapeDynamic rankPreservingReshape constantPad "
		       "randomNormalLike randomNormalStatic randomNormalDynamic randomUniformLike "
		       "randomUniformStatic randomUniformDynamic randomBernoulliLike randomBernoulliStatic "
		       "randomBernoulliDynamic categoricalDistribution reduceL1 reduceL2 reduceMax reduceMin "
		       "reduceSum reduceProd reduceMean reduceLogSum reduceSumSquare reduceLogSumExp "
		       "whereNonZero matrixBandPart lowerTriangular upperTriangular whereBroadcastable "
		       "layerNormalization NonMaximumSuppression oneHot cumSum clampedReLU argSort pooling3d "
		       "globalPooling3d sliceBySize convolution3d");
	const char *prov = NULL;
	assert_int_equal(al_kind_ane_status(true, "innerProduct", al_release_find("ios13"), &prov), '?');
	assert_int_equal(al_kind_ane_status(true, "innerProduct", al_release_find("ios14"), &prov), 'S');
	assert_non_null(strstr(prov, "#1196"));
	assert_int_equal(al_kind_ane_status(true, "lrn", al_release_find("ios27"), &prov), '?');
	assert_int_equal(al_kind_ane_status(true, "no such layer", NULL, &prov), '?');
	assert_int_equal(al_kind_ane_status(true, NULL, NULL, NULL), '?');
}

static void test_mil_ane_status(void **state)
{
	(void)state;
	expect_missing(mil_status_has, false, "kind_status.c mil_rows", "abs acos affine argsort asin atan atanh band_part batch_norm batch_to_space cast ceil "
		       "clamped_relu classify clip cond const constexpr_affine_dequantize "
		       "constexpr_blockwise_shift_scale constexpr_cast constexpr_lut_to_dense "
		       "constexpr_lut_to_sparse constexpr_sparse_blockwise_shift_scale constexpr_sparse_to_dense "
		       "conv_quantized cos cosh crop crop_resize cumsum custom_layer depth_to_space dequantize "
		       "einsum elu equal erf exp exp2 expand_dims fill fill_like flatten2d floor floor_div "
		       "gather gather_along_axis gather_nd greater greater_equal gru identity instance_norm "
		       "inverse l2_norm l2_pool less less_equal linear_activation list_gather list_length "
		       "list_read list_scatter list_write local_response_norm log logical_and logical_not "
		       "logical_or logical_xor lstm make_list maximum minimum mod non_maximum_suppression "
		       "non_zero not_equal one_hot pad pixel_shuffle pixel_unshuffle pow prelu quantize "
		       "random_bernoulli random_categorical random_normal random_uniform range_1d real_div "
		       "reduce_argmax reduce_argmin reduce_l1_norm reduce_l2_norm reduce_log_sum "
		       "reduce_log_sum_exp reduce_max reduce_min reduce_prod reduce_sum reduce_sum_square relu6 "
		       "reshape_like resize resize_bilinear resize_nearest_neighbor reverse reverse_sequence rnn "
		       "round scaled_tanh scatter scatter_along_axis scatter_nd select shape sigmoid "
		       "sigmoid_hard sign silu sin sinh slice_by_index slice_by_size sliding_windows softplus "
		       "softplus_parametric softsign space_to_batch space_to_depth split sqrt square stack sub "
		       "tan threshold thresholded_relu tile topk upsample_bilinear upsample_nearest_neighbor "
		       "while_loop");
	assert_int_equal(al_kind_ane_status(false, "layer_norm", al_release_find("ios18"), NULL), '?');
	assert_int_equal(al_kind_ane_status(false, "layer_norm", al_release_find("ios26"), NULL), 'S');
	assert_int_equal(al_kind_ane_status(false, "layer_norm", al_release_find("ios27"), NULL), 'S');
}

static void test_mil_cost(void **state)
{
	(void)state;
	/* without a row: cost not estimated (known = false) */
	expect_missing(ali_cost_mil_has, false, "cost.c mil_rows", "custom_layer einsum non_maximum_suppression");
}

/* True for the kinds WITHOUT weight sites, so that the list names those with. */
static bool no_weights(int k)
{
	return k < 0 || k >= AL_NNK_COUNT || !ali_nn_weight_sites[k] || !ali_nn_weight_sites[k][0].field;
}

static void test_weight_sites(void **state)
{
	(void)state;
	/* the kinds WITH weight sites (the same for mlmodel.c and cost.c) */
	size_t n = 0;
	for (int k = 0; k < AL_NNK_COUNT; k++)
		n += !no_weights(k);
	assert_int_equal(n, 18);
	assert_string_equal(missing(no_weights, AL_NNK_COUNT, true),
			    "convolution activation innerProduct embedding batchnorm scale bias loadConstant "
			    "simpleRecurrent gru uniDirectionalLSTM biDirectionalLSTM custom embeddingND "
			    "batchedMatmul loadConstantND layerNormalization convolution3d");
	/* every list ends, and names each field once */
	for (int k = 0; k < AL_NNK_COUNT; k++)
		for (const struct al_weight_site *a = ali_nn_weight_sites[k]; a && a->field; a++) {
			assert_non_null(a->name);
			for (const struct al_weight_site *b = a + 1; b->field; b++)
				assert_int_not_equal(a->field, b->field);
		}
}

static void test_nn_exec(void **state)
{
	(void)state;
	expect_missing(ali_nn_exec_has, true, "interp_nn.c rows", "cropResize custom slidingWindows randomNormalLike randomNormalStatic "
		       "randomNormalDynamic randomUniformLike randomUniformStatic randomUniformDynamic "
		       "randomBernoulliLike randomBernoulliStatic randomBernoulliDynamic "
		       "categoricalDistribution NonMaximumSuppression pooling3d convolution3d");
	/* custom and random layers are refused with their reason, others say nothing more */
	for (int k = 0; k < AL_NNK_COUNT; k++) {
		const char *why = ali_nn_exec_why_not(k);
		bool told = ali_nn_kinds[k].flags & (AL_NNF_CUSTOM | AL_NNF_RANDOM);
		assert_int_equal(why[0] != '\0', told);
	}
	assert_non_null(strstr(ali_nn_exec_why_not(AL_NNK_custom), "custom layers"));
	assert_non_null(strstr(ali_nn_exec_why_not(AL_NNK_randomNormalLike), "random"));
	assert_string_equal(ali_nn_exec_why_not(-1), "");
}

static void test_mil_exec(void **state)
{
	(void)state;
	expect_missing(ali_mil_exec_has, false, "interp_mil.c ops", "affine batch_to_space "
		       "conv_quantized crop_resize custom_layer "
		       "einsum non_maximum_suppression non_zero random_bernoulli random_categorical "
		       "random_normal random_uniform resample reshape_like resize "
		       "sliding_windows space_to_batch");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generated_names), cmocka_unit_test(test_nn_shapes),
		cmocka_unit_test(test_mil_shapes),      cmocka_unit_test(test_nn_cost),
		cmocka_unit_test(test_mil_cost),        cmocka_unit_test(test_nn_ane_status),
		cmocka_unit_test(test_mil_ane_status),        cmocka_unit_test(test_weight_sites),
		cmocka_unit_test(test_nn_exec),         cmocka_unit_test(test_mil_exec),
	};
	return cmocka_run_group_tests_name("kinds", tests, NULL, NULL);
}
