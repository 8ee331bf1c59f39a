/* SPDX-License-Identifier: MIT */
/* nn_params.h: a NeuralNetwork layer's parameters, decoded by the format stage.
 *
 * The stages above read a layer's params message (ConvolutionLayerParams, ...)
 * through this header only: no protobuf field number is written outside
 * src/format/ (tests/architecture.py checks it).
 *
 *   typed params  one struct per layer kind that several readers share
 *                 (convolution, pooling, innerProduct, batchnorm, upsample,
 *                 the recurrent layers, ...), filled by one accessor in one
 *                 pass over the message (nn_params.c: a table of fields per
 *                 kind). Shapes, rules, cost and the interpreter read these.
 *   field names   AL_NN_F_<MESSAGE>_<FIELD>: the field numbers of the other
 *                 params messages, for readers of a single field and for the
 *                 write side (rewrite/), which must name a field it splices.
 *
 * A value keeps what the wire says, with the same meaning as the pb_get_*
 * readers (pb.h): a scalar is the last occurrence with the scalar's wire type
 * (`has` false when absent, or when the message is malformed); a repeated
 * field counts every occurrence, packed or not (`n` -1 when malformed, may
 * exceed AL_NN_MAXV: then only the first AL_NN_MAXV values are kept); a
 * message field is the last one with the length wire type, `present` says
 * whether the field occurs at all (whatever its wire type). */
#ifndef ANELINT_NN_PARAMS_H
#define ANELINT_NN_PARAMS_H

#include "model.h"

#define AL_NN_MAXV 16 /* values kept of one repeated parameter */

struct al_pb_u64 {
	uint64_t v;
	bool has;     /* a varint occurrence was read */
	bool present; /* the field occurs, whatever its wire type */
};
struct al_pb_f32 {
	float v;
	bool has;
};
struct al_pb_msg {
	al_span v;    /* the last length-delimited occurrence ({0} when none) */
	bool has;     /* a length-delimited occurrence was read */
	bool present; /* the field occurs, whatever its wire type */
};
struct al_pb_u64s {
	uint64_t v[AL_NN_MAXV];
	long n; /* values present (may exceed AL_NN_MAXV), -1 when malformed */
};
struct al_pb_f32s {
	float v[AL_NN_MAXV];
	long n;
};

/* A varint as a signed integer (an int64 / enum field: two's complement). */
static inline int64_t al_pb_s64(uint64_t v)
{
	return v <= INT64_MAX ? (int64_t)v : -(int64_t)(~v) - 1;
}
/* The value as a signed integer, def when absent. */
static inline int64_t al_pb_i64(struct al_pb_u64 f, int64_t def)
{
	return f.has ? al_pb_s64(f.v) : def;
}
/* The value, def when absent. */
static inline uint64_t al_pb_or(struct al_pb_u64 f, uint64_t def)
{
	return f.has ? f.v : def;
}
/* Set and non-zero (a bool field that is true). */
static inline bool al_pb_true(struct al_pb_u64 f)
{
	return f.has && f.v != 0;
}

/* ------------------------------------------------------------------ typed params */

/* ConvolutionLayerParams. */
struct al_nn_convolution {
	struct al_pb_u64 output_channels, kernel_channels, n_groups, is_deconvolution, has_bias;
	struct al_pb_u64s kernel_size, stride, dilation_factor, output_shape;
	struct al_pb_msg valid, same, weights, bias;
};
/* PoolingLayerParams (type: MAX = 0, AVERAGE = 1, L2 = 2). */
struct al_nn_pooling {
	struct al_pb_u64 type, avg_pool_exclude_padding, global_pooling;
	struct al_pb_u64s kernel_size, stride;
	struct al_pb_msg valid, same, include_last_pixel;
};
/* InnerProductLayerParams. */
struct al_nn_inner_product {
	struct al_pb_u64 input_channels, output_channels, has_bias, int8_dynamic_quantize;
	struct al_pb_msg weights, bias;
};
/* BatchnormLayerParams. */
struct al_nn_batchnorm {
	struct al_pb_u64 channels, compute_mean_var, instance_normalization;
	struct al_pb_f32 epsilon;
	struct al_pb_msg gamma, beta, mean, variance;
};
/* UpsampleLayerParams. */
struct al_nn_upsample {
	struct al_pb_u64 mode, linear_upsample_mode;
	struct al_pb_u64s scaling_factor;
	struct al_pb_f32s fractional_scaling_factor;
};
/* Convolution3DLayerParams: kernel, stride, dilation and custom padding per
 * axis in the order depth, height, width (padding: front, back, top, bottom,
 * left, right). */
struct al_nn_convolution3d {
	struct al_pb_u64 output_channels, input_channels, n_groups, has_bias, padding_type,
		is_deconvolution;
	struct al_pb_u64 kernel[3], stride[3], dilation[3], custom_padding[6];
	struct al_pb_u64s output_shape;
	struct al_pb_msg weights, bias;
};
/* Pooling3DLayerParams (paddingType: CUSTOM = 0, VALID = 1, SAME = 2). */
struct al_nn_pooling3d {
	struct al_pb_u64 type, padding_type, count_exclude_padding;
	struct al_pb_u64 kernel[3], stride[3], custom_padding[6];
};
/* The four recurrent layers (simpleRecurrent, gru, uniDirectionalLSTM,
 * biDirectionalLSTM): the sizes, and whether the whole sequence is output
 * (sequenceOutput of the first two, LSTMParams.sequenceOutput of the LSTMs). */
struct al_nn_recurrent {
	struct al_pb_u64 input_vector_size, output_vector_size, sequence_output, has_bias_vectors,
		reverse_input;
	struct al_pb_msg lstm_params; /* the LSTMs: LSTMParams, whose other fields follow */
	struct al_pb_u64 forget_bias, has_peephole_vectors, coupled_input_and_forget_gate;
	struct al_pb_f32 cell_clip_threshold;
};
/* BatchedMatMulLayerParams. */
struct al_nn_batched_matmul {
	struct al_pb_u64 transpose_a, transpose_b, weight_matrix_first_dimension,
		weight_matrix_second_dimension, has_bias, int8_dynamic_quantize;
	struct al_pb_msg weights, bias;
};

/* Each accessor fills *out from layer n's params when n is a layer of that
 * kind (recurrent: of any of the four) and returns true; otherwise *out is
 * zeroed (every field absent) and it returns false. */
bool ali_nn_convolution(const struct al_node *n, struct al_nn_convolution *out);
bool ali_nn_pooling(const struct al_node *n, struct al_nn_pooling *out);
bool ali_nn_inner_product(const struct al_node *n, struct al_nn_inner_product *out);
bool ali_nn_batchnorm(const struct al_node *n, struct al_nn_batchnorm *out);
bool ali_nn_upsample(const struct al_node *n, struct al_nn_upsample *out);
bool ali_nn_convolution3d(const struct al_node *n, struct al_nn_convolution3d *out);
bool ali_nn_pooling3d(const struct al_node *n, struct al_nn_pooling3d *out);
bool ali_nn_recurrent(const struct al_node *n, struct al_nn_recurrent *out);
bool ali_nn_batched_matmul(const struct al_node *n, struct al_nn_batched_matmul *out);
/* [H, W] of a repeated field (kernelSize, stride, ...): no value gives (d, d),
 * one (v, v), two (v0, v1); false for more values or a malformed field. */
bool ali_nn_pair(const struct al_pb_u64s *r, int64_t d, int64_t v[2]);

/* The bytes of weights layer n holds in its params: every WeightParams of
 * ali_nn_weight_sites (floatValue, float16Value, rawValue, int8RawValue), a
 * holder counting every one it holds; 0 for a node of no NN kind. */
uint64_t ali_nn_weight_bytes(const struct al_node *n);

/* The params message of layer n (the layer-type member of NeuralNetworkLayer),
 * {0} for a node without one; for the readers of a single named field. */
static inline al_span ali_nn_params_msg(const struct al_node *n)
{
	const struct al_node_src *s = al_src(n);
	return s ? s->params : (al_span){0};
}

/* ------------------------------------------------------------------ fields in words
 * The fields of each kind's params message a reader shows by name (the report's
 * node panel, report_params.c): ali_nn_param_fields[kind], ended by a row with
 * field 0; NULL for a kind not listed. */
enum ali_nn_ptype {
	ALI_P_U,   /* uint64 (varint) */
	ALI_P_I,   /* int64 (varint, two's complement) */
	ALI_P_B,   /* bool */
	ALI_P_F,   /* float (fixed32) */
	ALI_P_US,  /* repeated uint64 */
	ALI_P_IS,  /* repeated int64 */
	ALI_P_FS,  /* repeated float */
	ALI_P_E,   /* enum: names "A|B|C" in `names`, by value */
	ALI_P_ONE, /* a oneof member: present -> "name" shown as the value of `names` */
};

struct ali_nn_pfield {
	uint32_t field;
	const char *name;
	enum ali_nn_ptype type;
	const char *names; /* ALI_P_E: values; ALI_P_ONE: the label it is shown under */
};

extern const struct ali_nn_pfield *const ali_nn_param_fields[AL_NNK_COUNT];

/* A WeightParams message's storage, never its values: bytes of floatValue
 * (fp32), float16Value, rawValue and int8RawValue; `quantized`: it has
 * quantization params. */
struct ali_nn_weight_form {
	uint64_t fp32, fp16, raw, int8;
	bool quantized;
};
void ali_nn_weight_form(al_span weight_params, struct ali_nn_weight_form *out);

/* ------------------------------------------------------------------ field names
 * NeuralNetwork.proto field numbers of the params messages read one field at
 * a time (by shapes_nn.c, rules, report_params.c, the interpreter). */
enum al_nn_field_number {
	/* shared shapes */
	AL_NN_F_BORDER_AMOUNTS_EDGES = 10, /* BorderAmounts.borderAmounts (EdgeSizes) */
	AL_NN_F_EDGE_START = 1,            /* EdgeSizes.startEdgeSize */
	AL_NN_F_EDGE_END = 2,              /* EdgeSizes.endEdgeSize */
	AL_NN_F_VALID_PADDING_AMOUNTS = 1, /* ValidPadding.paddingAmounts (BorderAmounts) */
	AL_NN_F_LAST_PIXEL_PADDING = 10,   /* ValidCompletePadding.paddingAmounts [H, W] */
	AL_NN_F_LSTM_SEQUENCE_OUTPUT = 10, /* LSTMParams.sequenceOutput */
	/* WeightParams and its QuantizationParams (the interpreter's weight reader) */
	AL_NN_F_WEIGHT_FLOAT_VALUE = 1,
	AL_NN_F_WEIGHT_FLOAT16_VALUE = 2,
	AL_NN_F_WEIGHT_RAW_VALUE = 30,
	AL_NN_F_WEIGHT_INT8_RAW_VALUE = 31,
	AL_NN_F_WEIGHT_QUANTIZATION = 40,
	AL_NN_F_QUANT_NUMBER_OF_BITS = 1,
	AL_NN_F_QUANT_LINEAR = 101,       /* LinearQuantizationParams */
	AL_NN_F_QUANT_LOOKUP_TABLE = 102, /* LookUpTableQuantizationParams */
	AL_NN_F_LINEAR_QUANT_SCALE = 1,
	AL_NN_F_LINEAR_QUANT_BIAS = 2,
	AL_NN_F_LOOKUP_TABLE_FLOAT_VALUE = 1,
	/* the recurrent layers (the interpreter): activation(s) of simpleRecurrent, gru,
	 * uniDirectionalLSTM, biDirectionalLSTM (forward); its backward ones; the LSTMs'
	 * weightParams (LSTMWeightParams, one per direction) */
	AL_NN_F_RNN_ACTIVATIONS = 10,
	AL_NN_F_BILSTM_ACTIVATIONS_BACKWARD = 11,
	AL_NN_F_LSTM_WEIGHT_PARAMS = 20,
	AL_NN_F_SIMPLE_RNN_WEIGHT_MATRIX = 30,
	AL_NN_F_SIMPLE_RNN_RECURSION_MATRIX = 31,
	AL_NN_F_SIMPLE_RNN_BIAS_VECTOR = 32,
	AL_NN_F_GRU_UPDATE_GATE_WEIGHT_MATRIX = 30, /* reset 31, output 32 */
	AL_NN_F_GRU_RESET_GATE_WEIGHT_MATRIX = 31,
	AL_NN_F_GRU_OUTPUT_GATE_WEIGHT_MATRIX = 32,
	AL_NN_F_GRU_UPDATE_GATE_RECURSION_MATRIX = 50,
	AL_NN_F_GRU_RESET_GATE_RECURSION_MATRIX = 51,
	AL_NN_F_GRU_OUTPUT_GATE_RECURSION_MATRIX = 52,
	AL_NN_F_GRU_UPDATE_GATE_BIAS_VECTOR = 70,
	AL_NN_F_GRU_RESET_GATE_BIAS_VECTOR = 71,
	AL_NN_F_GRU_OUTPUT_GATE_BIAS_VECTOR = 72,
	/* LSTMWeightParams: weight, recursion, bias and peephole per gate */
	AL_NN_F_LSTMW_INPUT_GATE_WEIGHT = 1,
	AL_NN_F_LSTMW_FORGET_GATE_WEIGHT = 2,
	AL_NN_F_LSTMW_BLOCK_INPUT_WEIGHT = 3,
	AL_NN_F_LSTMW_OUTPUT_GATE_WEIGHT = 4,
	AL_NN_F_LSTMW_INPUT_GATE_RECURSION = 20,
	AL_NN_F_LSTMW_FORGET_GATE_RECURSION = 21,
	AL_NN_F_LSTMW_BLOCK_INPUT_RECURSION = 22,
	AL_NN_F_LSTMW_OUTPUT_GATE_RECURSION = 23,
	AL_NN_F_LSTMW_INPUT_GATE_BIAS = 40,
	AL_NN_F_LSTMW_FORGET_GATE_BIAS = 41,
	AL_NN_F_LSTMW_BLOCK_INPUT_BIAS = 42,
	AL_NN_F_LSTMW_OUTPUT_GATE_BIAS = 43,
	AL_NN_F_LSTMW_INPUT_GATE_PEEPHOLE = 60,
	AL_NN_F_LSTMW_FORGET_GATE_PEEPHOLE = 61,
	AL_NN_F_LSTMW_OUTPUT_GATE_PEEPHOLE = 62,
	AL_NN_F_SAME_PADDING_ASYMMETRY_MODE = 1, /* SamePadding.asymmetryMode */
	/* single-field readers: <Message>Params field */
	AL_NN_F_CUSTOM_CLASS_NAME = 10,
	AL_NN_F_EMBEDDING_OUTPUT_CHANNELS = 2,
	AL_NN_F_EMBEDDING_ND_EMBEDDING_SIZE = 2,
	AL_NN_F_CROP_CROP_AMOUNTS = 1,
	AL_NN_F_PADDING_PADDING_AMOUNTS = 10,
	AL_NN_F_RESIZE_BILINEAR_TARGET_SIZE = 1,
	AL_NN_F_CROP_RESIZE_TARGET_SIZE = 1,
	AL_NN_F_REDUCE_AXIS = 3,
	AL_NN_F_LOAD_CONSTANT_SHAPE = 1, /* LoadConstant and LoadConstantND */
	AL_NN_F_RESHAPE_TARGET_SHAPE = 1,
	AL_NN_F_PERMUTE_AXIS = 1,
	AL_NN_F_CONCAT_SEQUENCE_CONCAT = 100,
	AL_NN_F_AXIS = 1, /* the axis of concatND, splitND, softmaxND, gather, gatherAlongAxis,
			   * stack, argMax/argMin, topK, slidingWindows, cumSum, ... */
	AL_NN_F_SPLIT_N_OUTPUTS = 1,
	AL_NN_F_SPLIT_ND_NUM_SPLITS = 2,
	AL_NN_F_SPLIT_ND_SPLIT_SIZES = 3,
	AL_NN_F_SEQUENCE_REPEAT_N_REPETITIONS = 1,
	AL_NN_F_REORGANIZE_MODE = 1,
	AL_NN_F_REORGANIZE_BLOCK_SIZE = 2,
	AL_NN_F_SLICE_START_INDEX = 1,
	AL_NN_F_SLICE_END_INDEX = 2,
	AL_NN_F_SLICE_STRIDE = 3,
	AL_NN_F_SLICE_AXIS = 4,
	AL_NN_F_SLICE_ND_BEGIN_IDS = 1,
	AL_NN_F_SLICE_ND_BEGIN_MASKS = 2,
	AL_NN_F_SLICE_ND_END_IDS = 3,
	AL_NN_F_SLICE_ND_END_MASKS = 4,
	AL_NN_F_SLICE_ND_STRIDES = 5,
	AL_NN_F_SLICE_ND_SQUEEZE_MASKS = 6,
	AL_NN_F_SLICE_BY_SIZE_SIZE = 2,
	AL_NN_F_SLICE_BY_SIZE_AXIS = 3,
	AL_NN_F_RANGE_STATIC_END = 1,
	AL_NN_F_RANGE_STATIC_START = 2,
	AL_NN_F_RANGE_STATIC_STEP = 3,
	AL_NN_F_TILE_REPS = 1,
	AL_NN_F_TRANSPOSE_AXES = 1,
	AL_NN_F_SLIDING_WINDOWS_WINDOW_SIZE = 2,
	AL_NN_F_SLIDING_WINDOWS_STEP = 3,
	AL_NN_F_TOPK_K = 2,
	AL_NN_F_ARG_REMOVE_DIM = 2,
	AL_NN_F_MVN_NORMALIZE_VARIANCE = 2,
	AL_NN_F_MVN_EPSILON = 3,
	AL_NN_F_LAYER_NORM_EPS = 2,
	AL_NN_F_LOOP_MAX_ITERATIONS = 1,
	AL_NN_F_REDUCE_ND_AXES = 1, /* Reduce{Sum,Mean,...}LayerParams */
	AL_NN_F_REDUCE_ND_KEEP_DIMS = 2,
	AL_NN_F_REDUCE_ND_REDUCE_ALL = 3,
	AL_NN_F_SQUEEZE_AXES = 1,
	AL_NN_F_SQUEEZE_ALL = 2,
	AL_NN_F_EXPAND_DIMS_AXES = 1,
	AL_NN_F_FLATTEN_2D_AXIS = 1,
	AL_NN_F_RESHAPE_ND_TARGET_SHAPE = 1, /* reshapeStatic, rankPreservingReshape */
	AL_NN_F_CONSTANT_PAD_AMOUNTS = 2,
	AL_NN_F_CONSTANT_PAD_TO_SIZE = 3,
	AL_NN_F_CATEGORICAL_NUM_SAMPLES = 2,
	AL_NN_F_ONE_HOT_SIZE = 1,
	AL_NN_F_ONE_HOT_AXIS = 2,
	AL_NN_F_FILL_STATIC_TARGET_SHAPE = 2,
	AL_NN_F_RANDOM_STATIC_OUTPUT_SHAPE = 4, /* randomNormalStatic, randomUniformStatic */
	AL_NN_F_BERNOULLI_STATIC_OUTPUT_SHAPE = 3,
	AL_NN_F_BROADCAST_STATIC_TARGET_SHAPE = 1,
	AL_NN_F_CUMSUM_AXIS = 1,
};

#endif
