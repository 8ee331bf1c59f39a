/* SPDX-License-Identifier: MIT */
/* interp_nn.h: what the NeuralNetwork executor's files share.
 *
 *   interp_nn.c      ali_nn_exec: input mapping and preprocessing, the layer loop,
 *                    branch / loop, outputs and classifiers, weights, the table
 *   interp_nn_ops.c  elementwise maths, convolution, pooling, dense, normalisation,
 *                    reductions
 *   interp_nn_data.c data movement and shape layers, constants, gather / scatter
 *   interp_nn_rnn.c  simpleRecurrent, gru, uniDirectionalLSTM, biDirectionalLSTM
 *
 * A layer function reads its parameters from the params span (the oneof member of
 * NeuralNetworkLayer), checks every count and size against its input tensors, and
 * fills its outputs; the maths is kernels.h. It never guesses: a parameter value it
 * does not implement is AL_E_UNSUPPORTED naming the layer and the value. */
#ifndef ANELINT_INTERP_NN_H
#define ANELINT_INTERP_NN_H

#include "interp.h"

enum nn_flow { NN_FLOW_NONE, NN_FLOW_BREAK, NN_FLOW_CONTINUE };

/* One run of one NeuralNetwork (sub-)model. */
struct nn_run {
	struct al_exec *x;
	struct al_env *env;     /* the network's blobs (a child of x->env) */
	bool rank5;             /* RANK5_ARRAY_MAPPING: legacy [Seq, B, C, H, W] blobs */
	enum nn_flow flow;      /* set by loopBreak / loopContinue */
	uint32_t loops;         /* loops being run (break/continue need one) */
	struct al_tensor *tomb; /* bound to blobs dropped after their last use */
	const char **keep;      /* blobs never dropped (outputs, class probabilities) */
	uint32_t n_keep;
};

/* One layer being run. */
struct nn_layer {
	struct nn_run *r;
	const struct al_node *n;
	al_span p;                  /* the layer's params message */
	int depth;                  /* nesting of branch / loop bodies */
	struct al_tensor **in;      /* n_in inputs, borrowed from the environment */
	uint32_t n_in;
	struct al_tensor **out;     /* n_out outputs the layer fills (owned references) */
	uint32_t n_out;
	bool too_big;               /* an allocation was refused for its size */
};

typedef enum al_status nn_fn(struct nn_layer *l);

/* ---------------------------------------------------------------- parameters */
#define NN_MAXV 64 /* values read from one repeated parameter */

static inline uint64_t nn_pu(al_span p, uint32_t f, uint64_t def)
{
	uint64_t v;
	return pb_get_varint(p, f, &v) ? v : def;
}

/* A signed int32/int64/enum field (two's complement in a varint). */
static inline int64_t nn_pi(al_span p, uint32_t f, int64_t def)
{
	uint64_t v;
	if (!pb_get_varint(p, f, &v))
		return def;
	return v <= INT64_MAX ? (int64_t)v : -(int64_t)(~v) - 1;
}

static inline bool nn_pb(al_span p, uint32_t f)
{
	return nn_pu(p, f, 0) != 0;
}

static inline float nn_pf(al_span p, uint32_t f, float def)
{
	float v;
	return pb_get_float(p, f, &v) ? v : def;
}

static inline al_span nn_psub(al_span p, uint32_t f)
{
	al_span s = {0};
	pb_get_bytes(p, f, &s);
	return s;
}

/* Repeated (u)int64 field f as signed values into v[0..NN_MAXV); returns the count
 * present (-1 when malformed; a count above NN_MAXV means only NN_MAXV were read). */
long nn_pints(al_span p, uint32_t f, int64_t *v);

/* ---------------------------------------------------------------- errors */
/* The layer's type name for messages ("?" when unknown). */
const char *nn_type_of(const struct al_node *n);
enum al_status nn_fail(struct nn_layer *l, enum al_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "layer type T: <what> is not supported by the interpreter" */
enum al_status nn_unsupported(struct nn_layer *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Input / output count in [lo, hi] (hi 0 = any). */
enum al_status nn_arity(struct nn_layer *l, uint32_t in_lo, uint32_t in_hi, uint32_t out_lo,
			uint32_t out_hi);
/* "[1,2,3]" into buf. */
const char *nn_dims_str(char *buf, size_t cap, int rank, const int64_t *dims);

/* Whether the executor runs NN kind k; why it does not (" (...)", or ""). */
bool ali_nn_exec_has(int k);
const char *ali_nn_exec_why_not(int k);

/* ---------------------------------------------------------------- layer helpers */
#define NN_BIG (INT64_C(1) << 32) /* bound on sizes read from params (kernels, strides ...) */

static inline bool nn_in_range(int64_t v, int64_t lo, int64_t hi)
{
	return v >= lo && v <= hi;
}

/* A float holding an index or a size -> int64; false unless it is an integer of
 * magnitude <= 9e15 (NaN, inf and fractions are not indices). */
bool nn_f2i(float v, int64_t *o);
/* Axis a of a rank-r tensor (negative from the end) -> [0, r), or -1. */
int nn_axis(int64_t a, int r);
/* t's rank in [lo, hi], else an error naming its shape. */
enum al_status nn_need_rank(struct nn_layer *l, const struct al_tensor *t, int lo, int hi);
/* t's values as int64s (at most max, each an integral value in range). */
enum al_status nn_tensor_ints(struct nn_layer *l, const struct al_tensor *t, const char *what,
			      int64_t *v, size_t max, size_t *n);
/* Batch, C, H, W of a legacy blob (rank >= 3; the leading axes merged into batch). */
struct nn_chw {
	int64_t n, c, h, w;
};
enum al_status nn_get_chw(struct nn_layer *l, const struct al_tensor *t, struct nn_chw *g);
/* Two values [H, W] of repeated field f (one value: both), default d; false when
 * malformed or more than two. */
bool nn_pair(al_span p, uint32_t f, int64_t d, int64_t v[2]);
/* BorderAmounts {borderAmounts = 10 {startEdgeSize = 1, endEdgeSize = 2} [H, W]} ->
 * [top, bottom, left, right]; false when more than two or above NN_BIG. */
bool nn_border(al_span b, int64_t pad[4]);

/* ---------------------------------------------------------------- tensors */
struct al_tensor *nn_alloc(struct nn_layer *l, int rank, const int64_t *dims);
/* A copy of t with other dims (same count). */
struct al_tensor *nn_reshaped(struct nn_layer *l, const struct al_tensor *t, int rank,
			      const int64_t *dims);
/* Product of dims [from, to) (fits: the tensor exists). */
int64_t nn_prod(const int64_t *dims, int from, int to);

/* ---------------------------------------------------------------- weights
 * The WeightParams message at field `field` of msg as a tensor of the given dims:
 * floatValue, float16Value, rawValue with linear or lookup-table quantization
 * (1..8 bits, MSB first), through ali_exec_weight. *out NULL when the field is
 * absent or empty and not `required`. Every length is checked against dims. */
enum al_status nn_weight(struct nn_layer *l, al_span msg, uint32_t field, const char *what,
			 int rank, const int64_t *dims, bool required, struct al_tensor **out);
/* The number of values stored in WeightParams wp (quantized: the most that fit),
 * 0 when empty. */
size_t nn_weight_len(al_span wp);

/* ---------------------------------------------------------------- the layers
 * interp_nn_ops.c, interp_nn_data.c and interp_nn_rnn.c: one function per layer
 * family; the table in interp_nn.c maps field numbers to them. */
#define NN_LAYER_FNS(X)                                                                   \
	X(conv) X(pool) X(activation) X(inner_product) X(embedding) X(batchnorm) X(mvn)     \
	X(l2normalize) X(softmax) X(lrn) X(crop) X(padding) X(upsample) X(resize_bilinear)  \
	X(unary) X(add) X(multiply) X(average) X(scale) X(bias) X(max) X(min) X(dot)         \
	X(reduce) X(load_constant) X(reshape) X(flatten) X(permute) X(concat) X(split)       \
	X(sequence_repeat) X(reorganize) X(slice) X(copy) X(range_static) X(range_dynamic)  \
	X(clip) X(unary_nd) X(gelu) X(compare) X(logical) X(logical_not) X(broadcastable)   \
	X(tile) X(stack) X(gather) X(scatter) X(gather_nd) X(scatter_nd) X(softmax_nd)       \
	X(gather_along_axis) X(scatter_along_axis) X(reverse) X(reverse_seq) X(split_nd)    \
	X(concat_nd) X(transpose) X(slice_static) X(slice_dynamic) X(topk) X(argminmax)     \
	X(embedding_nd) X(batched_matmul) X(get_shape) X(load_constant_nd) X(fill_like)     \
	X(fill_static) X(fill_dynamic) X(broadcast_to_like) X(broadcast_to_static)          \
	X(broadcast_to_dynamic) X(squeeze) X(expand_dims) X(flatten_to_2d) X(reshape_like)  \
	X(reshape_static) X(reshape_dynamic) X(rank_preserving_reshape) X(constant_pad)     \
	X(reduce_nd) X(where_nonzero) X(band_part) X(where) X(layer_norm) X(one_hot)        \
	X(cumsum) X(clamped_relu) X(argsort) X(global_pool3d) X(slice_by_size)             \
	X(simple_rnn) X(gru) X(lstm) X(bilstm)
#define NN_DECLARE(name) nn_fn nn_l_##name;
NN_LAYER_FNS(NN_DECLARE)
#undef NN_DECLARE

/* Shared by the ops and the RNNs: an activation (ActivationParams message) as a
 * kernels.h unary op with parameters; false when it has per-channel weights or
 * is unknown (then *name says which). */
bool nn_activation_op(al_span act, struct al_rnn_acts *op, const char **name);

#endif
