/* cost.c: the work of one layer / op, as estimates from its shapes (docs/shapes.md
 * "Cost"): FLOPs with a multiply-add counted as 2, the bytes of weights and
 * constants it reads as stored (NeuralNetwork: WeightParams lengths; ML Program:
 * blob sizes from weight.bin's 64-byte blob headers, immediate values by element
 * count), and activation bytes at fp16. Weight data is never read. A cost that
 * needs a shape that is unknown is marked known = false (its FLOPs count what could be).
 */
#include "shapes.h"

#include <string.h>
#include <stdlib.h>

#define MAXV 16
#define CONST_DEPTH 4 /* constexpr_* chains followed for stored bytes */

/* How an op's FLOPs are counted. */
enum cls {
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
	const char *name; /* MIL op type, or NULL for NN rows */
	uint32_t field;   /* NN layer field number */
	enum cls cls;
	int k;
};

/* NeuralNetwork layers by field number; absent rows are K_NONE. */
static const struct cost_row nn_rows[] = {
	{NULL, 100, K_CONV, 0}, {NULL, 120, K_POOL, 0}, {NULL, 130, K_EW, 1},
	{NULL, 140, K_FC, 0}, {NULL, 160, K_EW, 2}, {NULL, 165, K_EW, 5},
	{NULL, 170, K_EW, 3}, {NULL, 175, K_EW, 5}, {NULL, 180, K_EW, 5},
	{NULL, 210, K_RESIZE, 0}, {NULL, 211, K_EW, 4}, {NULL, 212, K_EW, 4},
	{NULL, 220, K_EW, 1}, {NULL, 230, K_EWN, 1}, {NULL, 231, K_EWN, 1},
	{NULL, 240, K_EWN, 1}, {NULL, 245, K_EW, 1}, {NULL, 250, K_EW, 1},
	{NULL, 260, K_EWN, 1}, {NULL, 261, K_EWN, 1}, {NULL, 270, K_IN, 2},
	{NULL, 280, K_IN, 1}, {NULL, 400, K_RNN, 1}, {NULL, 410, K_RNN, 3},
	{NULL, 420, K_RNN, 4}, {NULL, 430, K_RNN, 4}, {NULL, 500, K_UNKNOWN, 0},
	{NULL, 660, K_EW, 1}, {NULL, 665, K_EW, 1}, {NULL, 670, K_EW, 1},
	{NULL, 680, K_EW, 1}, {NULL, 685, K_EW, 1}, {NULL, 700, K_EW, 1},
	{NULL, 710, K_EW, 1}, {NULL, 715, K_EW, 1}, {NULL, 720, K_EW, 1},
	{NULL, 730, K_EW, 1}, {NULL, 735, K_EW, 1}, {NULL, 740, K_EW, 1},
	{NULL, 750, K_EW, 1}, {NULL, 755, K_EW, 1}, {NULL, 760, K_EW, 1},
	{NULL, 770, K_EW, 1}, {NULL, 775, K_EW, 1}, {NULL, 780, K_EW, 1},
	{NULL, 790, K_EW, 1}, {NULL, 795, K_EW, 1}, {NULL, 815, K_EW, 1},
	{NULL, 820, K_EW, 1}, {NULL, 825, K_EW, 1}, {NULL, 827, K_EW, 1},
	{NULL, 830, K_EW, 1}, {NULL, 832, K_EW, 1}, {NULL, 840, K_EW, 1},
	{NULL, 845, K_EW, 1}, {NULL, 850, K_EW, 1}, {NULL, 855, K_EW, 1},
	{NULL, 865, K_EW, 1}, {NULL, 870, K_EW, 1}, {NULL, 875, K_EW, 1},
	{NULL, 880, K_EW, 1}, {NULL, 885, K_EW, 1}, {NULL, 890, K_EW, 1},
	{NULL, 895, K_EW, 1}, {NULL, 900, K_EW, 1}, {NULL, 905, K_EW, 1},
	{NULL, 950, K_EW, 5}, {NULL, 1015, K_IN, 1}, {NULL, 1020, K_IN, 1},
	{NULL, 1025, K_IN, 1}, {NULL, 1045, K_MATMUL, 0}, {NULL, 1170, K_EW, 1},
	{NULL, 1175, K_EW, 1}, {NULL, 1180, K_EW, 1}, {NULL, 1190, K_EW, 1},
	{NULL, 1195, K_EW, 1}, {NULL, 1200, K_EW, 1}, {NULL, 1210, K_EW, 1},
	{NULL, 1215, K_EW, 1}, {NULL, 1220, K_EW, 1}, {NULL, 1230, K_IN, 1},
	{NULL, 1250, K_IN, 1}, {NULL, 1255, K_IN, 1}, {NULL, 1260, K_IN, 1},
	{NULL, 1265, K_IN, 1}, {NULL, 1270, K_IN, 1}, {NULL, 1275, K_IN, 1},
	{NULL, 1280, K_IN, 1}, {NULL, 1285, K_IN, 1}, {NULL, 1290, K_IN, 1},
	{NULL, 1295, K_IN, 1}, {NULL, 1313, K_IN, 1}, {NULL, 1315, K_EW, 1},
	{NULL, 1320, K_EW, 1}, {NULL, 1325, K_EW, 1}, {NULL, 1330, K_EW, 1},
	{NULL, 1350, K_EW, 5}, {NULL, 1400, K_UNKNOWN, 0}, {NULL, 1455, K_EW, 1},
	{NULL, 1460, K_EW, 1}, {NULL, 1461, K_IN, 1}, {NULL, 1465, K_POOL, 0},
	{NULL, 1466, K_IN, 1}, {NULL, 1471, K_CONV, 0},
};

/* ML Program ops by type (sorted); absent rows are K_UNKNOWN. */
static const struct cost_row mil_rows[] = {
	{"abs", 0, K_EW, 1}, {"acos", 0, K_EW, 1}, {"add", 0, K_EW, 1}, {"affine", 0, K_EW, 4},
	{"argsort", 0, K_IN, 1}, {"asin", 0, K_EW, 1}, {"atan", 0, K_EW, 1}, {"atanh", 0, K_EW, 1},
	{"avg_pool", 0, K_POOL, 0}, {"band_part", 0, K_EW, 1}, {"batch_norm", 0, K_EW, 2},
	{"batch_to_space", 0, K_NONE, 0}, {"cast", 0, K_NONE, 0}, {"ceil", 0, K_EW, 1},
	{"clamped_relu", 0, K_EW, 1}, {"classify", 0, K_NONE, 0}, {"clip", 0, K_EW, 1},
	{"concat", 0, K_NONE, 0}, {"cond", 0, K_NONE, 0}, {"const", 0, K_NONE, 0},
	{"constexpr_affine_dequantize", 0, K_NONE, 0}, {"constexpr_blockwise_shift_scale", 0, K_NONE, 0},
	{"constexpr_cast", 0, K_NONE, 0}, {"constexpr_lut_to_dense", 0, K_NONE, 0},
	{"constexpr_lut_to_sparse", 0, K_NONE, 0},
	{"constexpr_sparse_blockwise_shift_scale", 0, K_NONE, 0},
	{"constexpr_sparse_to_dense", 0, K_NONE, 0}, {"conv", 0, K_CONV, 0},
	{"conv_quantized", 0, K_CONV, 0}, {"conv_transpose", 0, K_DECONV, 0}, {"cos", 0, K_EW, 1},
	{"cosh", 0, K_EW, 1}, {"crop", 0, K_NONE, 0}, {"crop_resize", 0, K_EW, 4},
	{"cumsum", 0, K_EW, 1}, {"depth_to_space", 0, K_NONE, 0}, {"dequantize", 0, K_EW, 2},
	{"elu", 0, K_EW, 1}, {"equal", 0, K_EW, 1}, {"erf", 0, K_EW, 1}, {"exp", 0, K_EW, 1},
	{"exp2", 0, K_EW, 1}, {"expand_dims", 0, K_NONE, 0}, {"fill", 0, K_NONE, 0},
	{"fill_like", 0, K_NONE, 0}, {"flatten2d", 0, K_NONE, 0}, {"floor", 0, K_EW, 1},
	{"floor_div", 0, K_EW, 1}, {"gather", 0, K_NONE, 0}, {"gather_along_axis", 0, K_NONE, 0},
	{"gather_nd", 0, K_NONE, 0}, {"gelu", 0, K_EW, 1}, {"greater", 0, K_EW, 1},
	{"greater_equal", 0, K_EW, 1}, {"gru", 0, K_RNN, 3}, {"identity", 0, K_NONE, 0},
	{"instance_norm", 0, K_EW, 5}, {"inverse", 0, K_EW, 1}, {"l2_norm", 0, K_EW, 3},
	{"l2_pool", 0, K_POOL, 0}, {"layer_norm", 0, K_EW, 5}, {"leaky_relu", 0, K_EW, 1},
	{"less", 0, K_EW, 1}, {"less_equal", 0, K_EW, 1}, {"linear", 0, K_FC, 0},
	{"linear_activation", 0, K_EW, 1}, {"list_gather", 0, K_NONE, 0},
	{"list_length", 0, K_NONE, 0}, {"list_read", 0, K_NONE, 0}, {"list_scatter", 0, K_NONE, 0},
	{"list_write", 0, K_NONE, 0}, {"local_response_norm", 0, K_EW, 5}, {"log", 0, K_EW, 1},
	{"logical_and", 0, K_EW, 1}, {"logical_not", 0, K_EW, 1}, {"logical_or", 0, K_EW, 1},
	{"logical_xor", 0, K_EW, 1}, {"lstm", 0, K_RNN, 4}, {"make_list", 0, K_NONE, 0},
	{"matmul", 0, K_MATMUL, 0}, {"max_pool", 0, K_POOL, 0}, {"maximum", 0, K_EW, 1},
	{"minimum", 0, K_EW, 1}, {"mod", 0, K_EW, 1}, {"mul", 0, K_EW, 1},
	{"non_zero", 0, K_IN, 1}, {"not_equal", 0, K_EW, 1}, {"one_hot", 0, K_NONE, 0},
	{"pad", 0, K_NONE, 0}, {"pixel_shuffle", 0, K_NONE, 0}, {"pixel_unshuffle", 0, K_NONE, 0},
	{"pow", 0, K_EW, 1}, {"prelu", 0, K_EW, 1}, {"quantize", 0, K_EW, 2},
	{"random_bernoulli", 0, K_EW, 1}, {"random_categorical", 0, K_IN, 1},
	{"random_normal", 0, K_EW, 1}, {"random_uniform", 0, K_EW, 1}, {"range_1d", 0, K_NONE, 0},
	{"read_state", 0, K_NONE, 0}, {"real_div", 0, K_EW, 1}, {"reduce_argmax", 0, K_IN, 1},
	{"reduce_argmin", 0, K_IN, 1}, {"reduce_l1_norm", 0, K_IN, 1}, {"reduce_l2_norm", 0, K_IN, 1},
	{"reduce_log_sum", 0, K_IN, 1}, {"reduce_log_sum_exp", 0, K_IN, 1},
	{"reduce_max", 0, K_IN, 1}, {"reduce_mean", 0, K_IN, 1}, {"reduce_min", 0, K_IN, 1},
	{"reduce_prod", 0, K_IN, 1}, {"reduce_sum", 0, K_IN, 1}, {"reduce_sum_square", 0, K_IN, 1},
	{"relu", 0, K_EW, 1}, {"relu6", 0, K_EW, 1}, {"resample", 0, K_EW, 4},
	{"reshape", 0, K_NONE, 0}, {"reshape_like", 0, K_NONE, 0}, {"resize", 0, K_RESIZE, 0},
	{"resize_bilinear", 0, K_EW, 4}, {"resize_nearest_neighbor", 0, K_NONE, 0},
	{"reverse", 0, K_NONE, 0}, {"reverse_sequence", 0, K_NONE, 0}, {"rnn", 0, K_RNN, 1},
	{"round", 0, K_EW, 1}, {"rsqrt", 0, K_EW, 1}, {"scaled_dot_product_attention", 0, K_SDPA, 0},
	{"scaled_tanh", 0, K_EW, 1}, {"scatter", 0, K_NONE, 0}, {"scatter_along_axis", 0, K_NONE, 0},
	{"scatter_nd", 0, K_NONE, 0}, {"select", 0, K_EW, 1}, {"shape", 0, K_NONE, 0},
	{"sigmoid", 0, K_EW, 1}, {"sigmoid_hard", 0, K_EW, 1}, {"sign", 0, K_EW, 1},
	{"silu", 0, K_EW, 1}, {"sin", 0, K_EW, 1}, {"sinh", 0, K_EW, 1},
	{"slice_by_index", 0, K_NONE, 0}, {"slice_by_size", 0, K_NONE, 0},
	{"slice_update", 0, K_NONE, 0}, {"sliding_windows", 0, K_NONE, 0}, {"softmax", 0, K_EW, 5},
	{"softplus", 0, K_EW, 1}, {"softplus_parametric", 0, K_EW, 1}, {"softsign", 0, K_EW, 1},
	{"space_to_batch", 0, K_NONE, 0}, {"space_to_depth", 0, K_NONE, 0}, {"split", 0, K_NONE, 0},
	{"sqrt", 0, K_EW, 1}, {"square", 0, K_EW, 1}, {"squeeze", 0, K_NONE, 0},
	{"stack", 0, K_NONE, 0}, {"sub", 0, K_EW, 1}, {"tan", 0, K_EW, 1}, {"tanh", 0, K_EW, 1},
	{"threshold", 0, K_EW, 1}, {"thresholded_relu", 0, K_EW, 1}, {"tile", 0, K_NONE, 0},
	{"topk", 0, K_IN, 1}, {"transpose", 0, K_NONE, 0}, {"upsample_bilinear", 0, K_EW, 4},
	{"upsample_nearest_neighbor", 0, K_NONE, 0}, {"while_loop", 0, K_NONE, 0},
	{"write_state", 0, K_NONE, 0},
};

static const struct cost_row *nn_row(uint32_t field)
{
	for (size_t i = 0; i < sizeof nn_rows / sizeof nn_rows[0]; i++)
		if (nn_rows[i].field == field)
			return &nn_rows[i];
	return NULL;
}

static int mil_cmp(const void *key, const void *row)
{
	return strcmp((const char *)key, ((const struct cost_row *)row)->name);
}

static const struct cost_row *mil_row(const char *type)
{
	return type ? bsearch(type, mil_rows, sizeof mil_rows / sizeof mil_rows[0], sizeof mil_rows[0],
			      mil_cmp)
		    : NULL;
}

/* ================================================================ parameter bytes */

/* Where NeuralNetwork weights live: WeightParams at field `field` of the
 * params of layer `layer`; `holder` marks messages (PReLU, LSTMWeightParams,
 * repeated for biLSTM) whose length-delimited fields are WeightParams. */
struct wsite {
	uint32_t layer, field;
	bool holder;
};
static const struct wsite wsites[] = {
	{100, 90, false}, {100, 91, false}, {130, 25, true}, {130, 71, true}, {140, 20, false},
	{140, 21, false}, {150, 20, false}, {150, 21, false}, {160, 15, false}, {160, 16, false},
	{160, 17, false}, {160, 18, false}, {245, 2, false}, {245, 5, false}, {250, 2, false},
	{290, 2, false}, {400, 30, false}, {400, 31, false}, {400, 32, false}, {410, 30, false},
	{410, 31, false}, {410, 32, false}, {410, 50, false}, {410, 51, false}, {410, 52, false},
	{410, 70, false}, {410, 71, false}, {410, 72, false}, {420, 20, true}, {430, 20, true},
	{500, 20, false}, {1040, 20, false}, {1040, 21, false}, {1045, 8, false}, {1045, 9, false},
	{1070, 2, false}, {1350, 3, false}, {1350, 4, false}, {1471, 60, false}, {1471, 61, false},
};

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

static uint64_t nn_param_bytes(uint32_t layer, al_span p)
{
	struct pb_iter it, jt;
	struct pb_field f, g;
	uint64_t n = 0;
	pb_iter_init(&it, p);
	while (pb_next(&it, &f)) {
		if (f.wire != PB_LEN)
			continue;
		for (size_t i = 0; i < sizeof wsites / sizeof wsites[0]; i++) {
			if (wsites[i].layer != layer || wsites[i].field != f.num)
				continue;
			if (!wsites[i].holder) {
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
	al_span bfv, iv;
	if (pb_get_bytes(v, 5, &bfv)) {
		uint64_t off = 0;
		pb_get_varint(bfv, 2, &off);
		const uint8_t *w = m->weights.p;
		size_t size = m->weights.n;
		if (!w || off > size || size - off < 64 || al_rd32le(w + off) != 0xDEADBEEFu)
			return 0;
		uint64_t n = al_rd64le(w + off + 8);
		return n <= size ? n : 0;
	}
	if (!pb_get_bytes(v, 3, &iv))
		return 0;
	struct al_shape s;
	al_span vt, tt;
	uint64_t dt = 0;
	if (pb_get_bytes(v, 2, &vt) && pb_get_bytes(vt, 1, &tt) && pb_get_varint(tt, 1, &dt)) {
		struct al_ttype t = {0};
		int64_t dims[AL_SHAPE_MAX_RANK];
		size_t nd = 0;
		struct pb_iter it;
		struct pb_field f;
		bool ok = true;
		pb_iter_init(&it, tt);
		while (pb_next(&it, &f)) {
			if (f.num != 3 || f.wire != PB_LEN)
				continue;
			al_span c;
			uint64_t sz = 0;
			if (!pb_get_bytes(f.data, 1, &c) || nd >= AL_SHAPE_MAX_RANK) {
				ok = false;
				break;
			}
			pb_get_varint(c, 1, &sz);
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
	return p && p->type && (strcmp(p->type, "const") == 0 || strncmp(p->type, "constexpr_", 10) == 0);
}

/* attributes[key] of a MIL op (the last entry wins). */
static bool op_attr(const struct al_node *n, const char *key, al_span *val)
{
	const struct al_node_src *s = al_src(n);
	struct pb_iter it;
	struct pb_field f;
	bool found = false;
	pb_iter_init(&it, s->msg);
	while (pb_next(&it, &f)) {
		al_span k;
		if (f.num == 5 && f.wire == PB_LEN && pb_get_bytes(f.data, 1, &k) && al_span_eq(k, key) &&
		    pb_get_bytes(f.data, 2, val))
			found = true;
	}
	return found;
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
	if (strcmp(p->type, "const") == 0)
		return op_attr(p, "val", &v) ? value_bytes(m, v) : 0;
	uint64_t n = 0;
	struct pb_iter it, jt, kt;
	struct pb_field f, g, h;
	pb_iter_init(&it, s->msg);
	while (pb_next(&it, &f)) {
		al_span k;
		if (f.num == 5 && f.wire == PB_LEN && pb_get_bytes(f.data, 1, &k) &&
		    !al_span_eq(k, "name") && pb_get_bytes(f.data, 2, &v))
			n += value_bytes(m, v);
	}
	for (uint32_t i = 0; i < s->n_mil_args; i++) {
		pb_iter_init(&jt, s->mil_args[i].arg);
		while (pb_next(&jt, &g)) {
			if (g.num != 1 || g.wire != PB_LEN)
				continue;
			pb_iter_init(&kt, g.data);
			while (pb_next(&kt, &h)) {
				if (h.num == 2 && h.wire == PB_LEN) {
					n += value_bytes(m, h.data);
				} else if (h.num == 1 && h.wire == PB_LEN && h.data.n < AL_MAX_NAME) {
					char name[AL_MAX_NAME];
					memcpy(name, h.data.p, h.data.n);
					name[h.data.n] = '\0';
					const struct al_node *q = al_mil_producer(p, name);
					if (is_const_like(q))
						n += const_bytes(m, q, depth + 1);
				}
			}
		}
	}
	return n;
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
	long k = al_mil_param_ints(c->n, param, v, MAXV);
	return k == 1 ? v[0] : def;
}

/* Kernel elements and input channels per group of a NN convolution. */
static void nn_conv_flops(struct cx *c, al_span p, bool is3d)
{
	const struct al_shape *s = in0(c), *o = out0(c);
	uint64_t g = 1, v;
	int64_t kernel = 1;
	bool bias;
	if (is3d) {
		if (pb_get_varint(p, 10, &v) && v)
			g = v;
		for (uint32_t f = 20; f <= 22; f++)
			kernel = dim_mul(kernel, pb_get_varint(p, f, &v) ? (int64_t)(v & 0x7fffffff) : 1);
		bias = pb_get_varint(p, 50, &v) && v;
	} else {
		uint64_t k[MAXV];
		long nk = pb_get_varints(p, 20, k, MAXV);
		if (pb_get_varint(p, 10, &v) && v)
			g = v;
		if (nk <= 0)
			kernel = 9;
		for (long i = 0; i < nk && i < 2; i++)
			kernel = dim_mul(kernel, k[i] <= INT64_MAX ? (int64_t)k[i] : -1);
		if (nk == 1)
			kernel = dim_mul(kernel, kernel);
		bias = pb_get_varint(p, 70, &v) && v;
	}
	bool deconv = !is3d && pb_get_varint(p, 60, &v) && v;
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

static void nn_flops(struct cx *c, const struct cost_row *r, al_span p)
{
	const struct al_shape *s = in0(c), *o = out0(c);
	uint64_t v;
	switch (r->cls) {
	case K_CONV:
		nn_conv_flops(c, p, r->field == 1471);
		return;
	case K_POOL: {
		if (r->field == 120 && pb_get_varint(p, 60, &v) && v) { /* global */
			c->flops = term(c, numel(s));
			return;
		}
		int64_t kernel = 1;
		if (r->field == 1465) {
			for (uint32_t f = 2; f <= 4; f++)
				kernel = dim_mul(kernel, pb_get_varint(p, f, &v) ? (int64_t)(v & 0x7fffffff) : 1);
		} else {
			uint64_t k[MAXV];
			long nk = pb_get_varints(p, 10, k, MAXV);
			if (nk <= 0)
				kernel = 9;
			for (long i = 0; i < nk && i < 2; i++)
				kernel = dim_mul(kernel, k[i] <= INT64_MAX ? (int64_t)k[i] : -1);
		}
		c->flops = term(c, numel(o)) * term(c, kernel);
		return;
	}
	case K_FC: {
		int64_t cin = pb_get_varint(p, 1, &v) && v <= INT64_MAX ? (int64_t)v : -1;
		int64_t cout = pb_get_varint(p, 2, &v) && v <= INT64_MAX ? (int64_t)v : -1;
		int64_t rows = cout > 0 && numel(o) >= 0 ? numel(o) / cout : -1;
		c->flops = 2 * term(c, rows) * term(c, cin) * term(c, cout);
		if (pb_get_varint(p, 10, &v) && v)
			c->flops += term(c, numel(o));
		return;
	}
	case K_MATMUL: {
		int64_t k;
		if (c->n_in >= 2) {
			bool ta = pb_get_varint(p, 1, &v) && v;
			k = s && s->rank >= 1 ? shp_dim(s, s->rank == 1 ? 0 : ta ? s->rank - 2 : s->rank - 1) : -1;
		} else {
			k = pb_get_varint(p, 5, &v) && v <= INT64_MAX ? (int64_t)v : -1;
			if (pb_get_varint(p, 7, &v) && v)
				c->flops += term(c, numel(o));
		}
		c->flops += 2 * term(c, numel(o)) * term(c, k);
		return;
	}
	case K_RNN: {
		int64_t in_sz = pb_get_varint(p, 1, &v) && v <= INT64_MAX ? (int64_t)v : -1;
		int64_t h = pb_get_varint(p, 2, &v) && v <= INT64_MAX ? (int64_t)v : -1;
		int64_t steps = in_sz > 0 && numel(s) >= 0 ? numel(s) / in_sz : -1;
		double dirs = r->field == 430 ? 2 : 1;
		c->flops = dirs * term(c, steps) * r->k * term(c, h) *
			   (2 * (term(c, in_sz) + term(c, h)) + 3);
		return;
	}
	case K_RESIZE:
		c->flops = pb_get_varint(p, 5, &v) && v == 1 ? 4 * term(c, numel(o)) : 0;
		return;
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
		if (al_mil_param_present(c->n, "bias"))
			c->flops += term(c, numel(o));
		return;
	case K_FC: /* linear: weight [Dout, Din] */
		if (!mil_shape(c, "weight", &w) || w.rank != 2) {
			c->known = false;
			return;
		}
		c->flops = 2 * term(c, numel(o)) * term(c, shp_dim(&w, 1));
		if (al_mil_param_present(c->n, "bias"))
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
		long nk = al_mil_param_ints(c->n, "kernel_sizes", k, MAXV);
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
		double dirs = al_mil_param_string(c->n, "direction", dir, sizeof dir) &&
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
		bool lin = al_mil_param_string(c->n, "resize_mode", mode, sizeof mode) &&
			   strcmp(mode, "NEAREST_NEIGHBOR") != 0;
		c->flops = lin ? 4 * term(c, numel(o)) : 0;
		return;
	}
	default:
		return;
	}
}

/* Per-element classes, shared by both worlds. */
static void simple_flops(struct cx *c, const struct cost_row *r)
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
		const struct al_shape *s = !r->name ? in0(c) : mil_shape(c, "x", &x) ? &x : NULL;
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

void al_cost_node(struct al_node *n, const struct al_model *m, const struct al_shape *const *in,
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

	const struct cost_row *r = NULL;
	if (mil) {
		r = mil_row(n->type);
	} else if (n->kind >= 0) {
		uint32_t field = al_nn_kinds[n->kind].field;
		r = nn_row(field);
		n->cost.param_bytes = nn_param_bytes(field, src->params);
		static const struct cost_row none = {NULL, 0, K_NONE, 0};
		if (!r)
			r = &none;
	}
	if (!r) {
		c.known = false;
	} else if (r->cls == K_EW || r->cls == K_EWN || r->cls == K_IN || r->cls == K_UNKNOWN) {
		simple_flops(&c, r);
	} else if (mil) {
		mil_flops(&c, r);
	} else {
		nn_flops(&c, r, src->params);
	}

	/* activations: inputs that are not constants, and every output, at 2 bytes */
	uint64_t act = 0;
	bool act_known = true;
	for (uint32_t i = 0; i < n_in; i++) {
		const struct al_node *p = mil ? al_mil_producer(n, n->inputs[i]) : NULL;
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
			struct pb_iter it, jt;
			struct pb_field f, g;
			pb_iter_init(&it, src->mil_args[i].arg);
			while (pb_next(&it, &f)) {
				if (f.num != 1 || f.wire != PB_LEN)
					continue;
				pb_iter_init(&jt, f.data);
				while (pb_next(&jt, &g))
					if (g.num == 2 && g.wire == PB_LEN)
						n->cost.param_bytes += value_bytes(m, g.data);
			}
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
