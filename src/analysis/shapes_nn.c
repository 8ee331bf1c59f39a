/* SPDX-License-Identifier: MIT */
/* shapes_nn.c: output shapes of NeuralNetwork layers: one shape function per family,
 * in a table indexed by the layer's kind. Legacy layers work on the last three
 * axes [C, H, W] of a rank >= 3 blob (RANK5: [Seq, Batch, C, H, W]), ND layers on any
 * rank (NeuralNetwork.proto; coreml-format-facts.md sections 4-6). Params are read
 * from the params span, weights never. A size that is data-dependent, a custom layer
 * or an unknown layer gives unknown dims, not a guess. Blobs are fp32. */
#include "shapes.h"
#include "nn_params.h"

#include <math.h>
#include <string.h>

#define MAXV 16 /* values read from one repeated parameter */
_Static_assert(MAXV == AL_NN_MAXV, "a typed field keeps as many values as shapes read");

/* ================================================================ params */

static uint64_t pu(al_span p, uint32_t f, uint64_t def)
{
	uint64_t v;
	return pb_get_varint(p, f, &v) ? v : def;
}

/* An int64 / enum field (two's complement in a varint). */
static int64_t pi(al_span p, uint32_t f, int64_t def)
{
	uint64_t v;
	if (!pb_get_varint(p, f, &v))
		return def;
	return v <= INT64_MAX ? (int64_t)v : -(int64_t)(~v) - 1;
}

static bool pb(al_span p, uint32_t f)
{
	return pu(p, f, 0) != 0;
}

static float pf(al_span p, uint32_t f, float def)
{
	float v;
	return pb_get_float(p, f, &v) ? v : def;
}

/* Repeated (u)int64 field f into v[0..MAXV) as signed values; the count
 * present (may exceed MAXV; then only the first MAXV are read), 0 if absent
 * or malformed. */
/* The same of a typed repeated field (nn_params.h). */
static size_t sints(const struct al_pb_u64s *r, int64_t *v)
{
	if (r->n <= 0)
		return 0;
	for (long i = 0; i < r->n && i < MAXV; i++)
		v[i] = al_pb_s64(r->v[i]);
	return (size_t)r->n;
}

static size_t pints(al_span p, uint32_t f, int64_t *v)
{
	struct al_pb_u64s r;
	r.n = pb_get_varints(p, f, r.v, MAXV);
	return sints(&r, v);
}

static al_span psub(al_span p, uint32_t f)
{
	al_span s = {0};
	pb_get_bytes(p, f, &s);
	return s;
}

/* BorderAmounts {repeated EdgeSizes borderAmounts = 10 {start = 1, end = 2}}:
 * [top, bottom, left, right]; absent entries are 0. */
static void border(al_span b, int64_t pad[4])
{
	struct pb_iter it;
	struct pb_field f;
	int k = 0;
	memset(pad, 0, 4 * sizeof pad[0]);
	pb_iter_init(&it, b);
	while (pb_next(&it, &f) && k < 2) {
		if (f.num != AL_NN_F_BORDER_AMOUNTS_EDGES || f.wire != PB_LEN)
			continue;
		int64_t s = (int64_t)(pu(f.data, AL_NN_F_EDGE_START, 0) & INT64_MAX),
			e = (int64_t)(pu(f.data, AL_NN_F_EDGE_END, 0) & INT64_MAX);
		pad[2 * k] = s;
		pad[2 * k + 1] = e;
		k++;
	}
}

/* ================================================================ helpers */

static const struct al_shape *in_at(const struct shp_node *x, uint32_t i)
{
	const struct al_shape *s = i < x->n_in ? x->in[i] : NULL;
	return s && s->rank >= 0 ? s : NULL;
}

/* out[o] = input i (flex bits included), fp32. */
static void copy_in(const struct shp_node *x, uint32_t o, uint32_t i)
{
	const struct al_shape *s = in_at(x, i);
	if (o >= x->n_out || !s)
		return;
	x->out[o] = *s;
	x->out[o].dtype = AL_DT_FP32;
}

/* The index of axis -k (k = 1 width, 2 height, 3 channel, 5 sequence) of s, or -1. */
static int back(const struct al_shape *s, int k)
{
	return s && s->rank >= k ? s->rank - k : -1;
}

/* out[0] starts as input 0 with dims [-3..-1] to be replaced; false when the
 * input is missing or has rank < min_rank. */
static bool start_chw(const struct shp_node *x, int min_rank)
{
	const struct al_shape *s = in_at(x, 0);
	if (!x->n_out || !s || s->rank < min_rank)
		return false;
	x->out[0] = *s;
	x->out[0].dtype = AL_DT_FP32;
	return true;
}

/* Spatial output of a convolution / pooling window along one axis. */
enum pad_kind { PAD_VALID, PAD_SAME, PAD_LAST_PIXEL };

static int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t pad_a,
			  int64_t pad_b, enum pad_kind kind)
{
	if (in < 0 || k <= 0 || stride <= 0 || dil <= 0)
		return AL_DIM_UNKNOWN;
	if (kind == PAD_SAME)
		return dim_div_ceil(in, stride);
	int64_t keff = dim_add(dim_mul(k - 1, dil), 1);
	int64_t span = dim_sub(dim_add(in, dim_add(pad_a, pad_b)), keff);
	if (kind == PAD_VALID)
		return dim_add(dim_div_floor(span, stride), 1);
	/* ValidCompletePadding (includeLastPixel): symmetric pad_a, last window kept */
	int64_t o = dim_add(dim_div_ceil(span, stride), 1);
	if (o >= 1 && pad_a > 0 && dim_mul(o - 1, stride) >= dim_add(in, pad_a))
		o--;
	return o;
}

/* Deconvolution output along one axis (NeuralNetwork.proto ValidPadding / SamePadding). */
static int64_t deconv_out(int64_t in, int64_t k, int64_t stride, int64_t pads, bool same)
{
	if (in < 1 || k <= 0 || stride <= 0)
		return AL_DIM_UNKNOWN;
	if (same)
		return dim_mul(in, stride);
	return dim_sub(dim_add(dim_mul(in - 1, stride), k), pads);
}

/* Two values [H, W] of a repeated field, default d. */
static void pair_of(size_t n, const int64_t *t, int64_t d, int64_t v[2])
{
	v[0] = n >= 1 ? t[0] : d;
	v[1] = n >= 2 ? t[1] : n == 1 ? t[0] : d;
}

static void pair(al_span p, uint32_t f, int64_t d, int64_t v[2])
{
	int64_t t[MAXV];
	pair_of(pints(p, f, t), t, d, v);
}

static void pair_typed(const struct al_pb_u64s *r, int64_t d, int64_t v[2])
{
	int64_t t[MAXV];
	pair_of(sints(r, t), t, d, v);
}

/* ================================================================ shape functions */

typedef void nn_fn(const struct shp_node *x, al_span p);

static void nn_same(const struct shp_node *x, al_span p)
{
	(void)p;
	copy_in(x, 0, 0);
}

static void nn_none(const struct shp_node *x, al_span p)
{
	(void)x;
	(void)p;
}

/* Numpy broadcast of every input (legacy add/multiply/... broadcast the same way
 * among the shapes they accept); a single input keeps its shape. */
static void nn_broadcast(const struct shp_node *x, al_span p)
{
	(void)p;
	if (!x->n_out || !x->n_in)
		return;
	struct al_shape acc;
	if (!x->in[0]) {
		shp_unknown(&x->out[0]);
		return;
	}
	acc = *x->in[0];
	for (uint32_t i = 1; i < x->n_in; i++) {
		struct al_shape t;
		if (!shp_broadcast(&acc, x->in[i], &t) || t.rank < 0) {
			shp_unknown(&x->out[0]);
			return;
		}
		acc = t;
	}
	x->out[0] = acc;
	x->out[0].dtype = AL_DT_FP32;
}

/* ConvolutionLayerParams. Input [..., C, H, W]. */
static void nn_conv(const struct shp_node *x, al_span p)
{
	if (!start_chw(x, 3))
		return;
	struct al_nn_convolution cv;
	ali_nn_convolution(x->n, &cv);
	struct al_shape *o = &x->out[0];
	const struct al_shape *s = x->in[0];
	int c = back(s, 3), h = back(s, 2), w = back(s, 1);
	int64_t cout = (int64_t)(al_pb_or(cv.output_channels, 0) & INT64_MAX);
	const struct al_shape *wt = in_at(x, 1);
	if (!cout && wt && wt->rank == 4)
		cout = shp_dim(wt, 0);
	shp_set(o, c, cout > 0 ? cout : AL_DIM_UNKNOWN, false);
	int64_t k[2], st[2], dl[2], pad[4] = {0};
	pair_typed(&cv.kernel_size, 3, k);
	pair_typed(&cv.stride, 1, st);
	pair_typed(&cv.dilation_factor, 1, dl);
	bool same = cv.same.present;
	if (cv.valid.present)
		border(psub(cv.valid.v, AL_NN_F_VALID_PADDING_AMOUNTS), pad);
	if (al_pb_true(cv.is_deconvolution)) {
		int64_t os[MAXV];
		size_t no = sints(&cv.output_shape, os);
		for (int a = 0; a < 2; a++) {
			int ax = a ? w : h;
			if (no >= 2)
				shp_set(o, ax, os[a], false);
			else
				shp_set(o, ax, deconv_out(shp_dim(s, ax), k[a], st[a], pad[2 * a] + pad[2 * a + 1], same),
					shp_flex(s, ax));
		}
		return;
	}
	for (int a = 0; a < 2; a++) {
		int ax = a ? w : h;
		shp_set(o, ax, window_out(shp_dim(s, ax), k[a], st[a], dl[a], pad[2 * a], pad[2 * a + 1],
					  same ? PAD_SAME : PAD_VALID),
			shp_flex(s, ax));
	}
}

/* PoolingLayerParams: kernelSize, stride, valid / same / includeLastPixel
 * {paddingAmounts [H, W]}, globalPooling. */
static void nn_pool(const struct shp_node *x, al_span p)
{
	if (!start_chw(x, 3))
		return;
	struct al_nn_pooling pl;
	ali_nn_pooling(x->n, &pl);
	struct al_shape *o = &x->out[0];
	const struct al_shape *s = x->in[0];
	int h = back(s, 2), w = back(s, 1);
	if (al_pb_true(pl.global_pooling)) {
		shp_set(o, h, 1, false);
		shp_set(o, w, 1, false);
		return;
	}
	int64_t k[2], st[2], pad[4] = {0};
	pair_typed(&pl.kernel_size, 3, k);
	pair_typed(&pl.stride, 1, st);
	enum pad_kind kind = PAD_VALID;
	if (pl.same.present) {
		kind = PAD_SAME;
	} else if (pl.include_last_pixel.present) {
		int64_t pp[2];
		pair(pl.include_last_pixel.v, AL_NN_F_LAST_PIXEL_PADDING, 0, pp);
		pad[0] = pad[1] = pp[0];
		pad[2] = pad[3] = pp[1];
		kind = PAD_LAST_PIXEL;
	} else if (pl.valid.present) {
		border(psub(pl.valid.v, AL_NN_F_VALID_PADDING_AMOUNTS), pad);
	}
	for (int a = 0; a < 2; a++) {
		int ax = a ? w : h;
		shp_set(o, ax, window_out(shp_dim(s, ax), k[a], st[a], 1, pad[2 * a], pad[2 * a + 1], kind),
			shp_flex(s, ax));
	}
}

/* InnerProductLayerParams outputChannels; ranks 1..5 as NeuralNetwork.proto
 * lists them: [Cout], [x1,Cout], [x1,x2,Cout], [x1,Cout,1,1], [x1,x2,Cout,1,1]. */
static void nn_inner_product(const struct shp_node *x, al_span p)
{
	const struct al_shape *s = in_at(x, 0);
	if (!x->n_out || !s || s->rank < 1 || s->rank > 5)
		return;
	struct al_nn_inner_product ip;
	ali_nn_inner_product(x->n, &ip);
	int64_t cout = (int64_t)(al_pb_or(ip.output_channels, 0) & INT64_MAX);
	struct al_shape *o = &x->out[0];
	*o = *s;
	o->dtype = AL_DT_FP32;
	int c = s->rank <= 3 ? s->rank - 1 : s->rank - 3;
	shp_set(o, c, cout ? cout : AL_DIM_UNKNOWN, false);
	for (int i = c + 1; i < s->rank; i++)
		shp_set(o, i, 1, false);
}

/* EmbeddingLayerParams outputChannels: [x1,1,1,1] -> [x1,Cout,1,1] (rank 4 or 5). */
static void nn_embedding(const struct shp_node *x, al_span p)
{
	if (!start_chw(x, 4))
		return;
	int64_t cout = (int64_t)(pu(p, AL_NN_F_EMBEDDING_OUTPUT_CHANNELS, 0) & INT64_MAX);
	shp_set(&x->out[0], back(x->in[0], 3), cout ? cout : AL_DIM_UNKNOWN, false);
}

/* EmbeddingNDLayerParams embeddingSize: the last axis (1) becomes it. */
static void nn_embedding_nd(const struct shp_node *x, al_span p)
{
	if (!start_chw(x, 1))
		return;
	int64_t e = (int64_t)(pu(p, AL_NN_F_EMBEDDING_ND_EMBEDDING_SIZE, 0) & INT64_MAX);
	shp_set(&x->out[0], back(x->in[0], 1), e ? e : AL_DIM_UNKNOWN, false);
}

/* CropLayerParams: one input, cropAmounts = 1 (BorderAmounts); two inputs,
 * H and W of the second. */
static void nn_crop(const struct shp_node *x, al_span p)
{
	if (!start_chw(x, 3))
		return;
	const struct al_shape *s = x->in[0], *ref = in_at(x, 1);
	struct al_shape *o = &x->out[0];
	int h = back(s, 2), w = back(s, 1);
	if (x->n_in >= 2) {
		shp_copy_dim(o, h, ref, ref ? back(ref, 2) : -1);
		shp_copy_dim(o, w, ref, ref ? back(ref, 1) : -1);
		return;
	}
	int64_t c[4];
	border(psub(p, AL_NN_F_CROP_CROP_AMOUNTS), c);
	shp_set(o, h, dim_sub(dim_sub(shp_dim(s, h), c[0]), c[1]), shp_flex(s, h));
	shp_set(o, w, dim_sub(dim_sub(shp_dim(s, w), c[2]), c[3]), shp_flex(s, w));
}

/* PaddingLayerParams paddingAmounts = 10 (BorderAmounts). */
static void nn_padding(const struct shp_node *x, al_span p)
{
	if (!start_chw(x, 2))
		return;
	const struct al_shape *s = x->in[0];
	struct al_shape *o = &x->out[0];
	int h = back(s, 2), w = back(s, 1);
	int64_t c[4];
	border(psub(p, AL_NN_F_PADDING_PADDING_AMOUNTS), c);
	shp_set(o, h, dim_add(dim_add(shp_dim(s, h), c[0]), c[1]), shp_flex(s, h));
	shp_set(o, w, dim_add(dim_add(shp_dim(s, w), c[2]), c[3]), shp_flex(s, w));
}

/* UpsampleLayerParams scalingFactor [H, W] (default 1), fractionalScalingFactor. */
static void nn_upsample(const struct shp_node *x, al_span p)
{
	if (!start_chw(x, 3))
		return;
	struct al_nn_upsample up;
	ali_nn_upsample(x->n, &up);
	const struct al_shape *s = x->in[0];
	struct al_shape *o = &x->out[0];
	const float *fr = up.fractional_scaling_factor.v;
	long nf = up.fractional_scaling_factor.n;
	int64_t sf[2];
	pair_typed(&up.scaling_factor, 1, sf);
	for (int a = 0; a < 2; a++) {
		int ax = back(s, 2 - a);
		int64_t d = shp_dim(s, ax), v;
		if (nf >= 2) {
			double t = d >= 0 ? floor((double)d * fr[a]) : -1;
			v = isfinite(t) && t >= 0 && t < 9e15 ? (int64_t)t : AL_DIM_UNKNOWN;
		} else {
			v = sf[a] > 0 ? dim_mul(d, sf[a]) : AL_DIM_UNKNOWN;
		}
		shp_set(o, ax, v, shp_flex(s, ax));
	}
}

/* ResizeBilinearLayerParams targetSize [H, W] (default [1, 1]). */
static void nn_resize(const struct shp_node *x, al_span p)
{
	if (!start_chw(x, 3))
		return;
	int64_t t[2];
	pair(p, AL_NN_F_RESIZE_BILINEAR_TARGET_SIZE, 1, t);
	shp_set(&x->out[0], back(x->in[0], 2), t[0], false);
	shp_set(&x->out[0], back(x->in[0], 1), t[1], false);
}

/* CropResizeLayerParams targetSize = 1: input [1,B,C,H,W], RoIs [N,1,4|5,1,1]
 * -> [N, B (4 coordinates) or 1 (5), C, Ht, Wt]. */
static void nn_crop_resize(const struct shp_node *x, al_span p)
{
	const struct al_shape *s = in_at(x, 0), *r = in_at(x, 1);
	if (!x->n_out || !s || s->rank != 5)
		return;
	int64_t t[2];
	pair(p, AL_NN_F_CROP_RESIZE_TARGET_SIZE, 1, t);
	struct al_shape *o = &x->out[0];
	shp_rank(o, 5, AL_DT_FP32);
	shp_copy_dim(o, 0, r, 0);
	int64_t rc = shp_dim(r, 2);
	if (rc == 4)
		shp_copy_dim(o, 1, s, 1);
	else
		shp_set(o, 1, rc == 5 ? 1 : AL_DIM_UNKNOWN, false);
	shp_copy_dim(o, 2, s, 2);
	shp_set(o, 3, t[0], false);
	shp_set(o, 4, t[1], false);
}

/* DotProduct: [..., C, 1, 1] x2 -> [..., 1, 1, 1]. */
static void nn_dot(const struct shp_node *x, al_span p)
{
	(void)p;
	if (!start_chw(x, 3))
		return;
	shp_set(&x->out[0], back(x->in[0], 3), 1, false);
}

/* ReduceLayerParams (legacy) axis = 3: CHW, HW, C, H, W -> those dims become 1. */
static void nn_reduce_legacy(const struct shp_node *x, al_span p)
{
	static const int axes[5][3] = {{3, 2, 1}, {2, 1, 0}, {3, 0, 0}, {2, 0, 0}, {1, 0, 0}};
	static const int min_rank[5] = {3, 2, 3, 2, 1};
	int64_t a = pi(p, AL_NN_F_REDUCE_AXIS, 0);
	if (a < 0 || a > 4 || !start_chw(x, min_rank[a]))
		return;
	for (int k = 0; k < 3 && axes[a][k]; k++)
		shp_set(&x->out[0], back(x->in[0], axes[a][k]), 1, false);
}

/* LoadConstantLayerParams shape = 1 [C, H, W] -> [1, 1, C, H, W]. */
static void nn_load_constant(const struct shp_node *x, al_span p)
{
	int64_t v[MAXV];
	if (!x->n_out || pints(p, AL_NN_F_LOAD_CONSTANT_SHAPE, v) != 3)
		return;
	int64_t d[5] = {1, 1, v[0], v[1], v[2]};
	shp_from(&x->out[0], d, 5, AL_DT_FP32);
}

/* LoadConstantNDLayerParams shape = 1 (any rank). */
static void nn_load_constant_nd(const struct shp_node *x, al_span p)
{
	int64_t v[MAXV];
	size_t n = pints(p, AL_NN_F_LOAD_CONSTANT_SHAPE, v);
	if (!x->n_out || n == 0 || n > MAXV)
		return;
	shp_from(&x->out[0], v, n, AL_DT_FP32);
}

/* Fill `o` (rank r) from target t[0..r): 0 copies the input dim at that index
 * (when `zero_copies`), one -1 takes what is left of `total` elements. */
static void reshape_to(struct al_shape *o, const int64_t *t, size_t r, const struct al_shape *s,
		       int64_t total, bool total_flex, bool zero_copies)
{
	shp_rank(o, (int)r, AL_DT_FP32);
	int infer = -1;
	int64_t known = 1;
	for (size_t i = 0; i < r && i < AL_SHAPE_MAX_RANK; i++) {
		if (t[i] == -1 && infer < 0) {
			infer = (int)i;
			continue;
		}
		if (t[i] == 0 && zero_copies) {
			shp_copy_dim(o, (int)i, s, (int)i);
			known = dim_mul(known, shp_dim(s, (int)i));
			continue;
		}
		shp_set(o, (int)i, t[i] >= 0 ? t[i] : AL_DIM_UNKNOWN, false);
		known = dim_mul(known, t[i] >= 0 ? t[i] : AL_DIM_UNKNOWN);
	}
	if (r > AL_SHAPE_MAX_RANK)
		return;
	if (infer >= 0) {
		int64_t v = known > 0 && total >= 0 && total % known == 0 ? total / known : AL_DIM_UNKNOWN;
		shp_set(o, infer, v, total_flex);
	}
}

/* ReshapeLayerParams (legacy, rank 5) targetShape = 1: 3 values [C,H,W] keep the
 * input's sequence length, 4 values [Seq,C,H,W] set it; the batch axis stays.
 * One -1 takes what is left of the elements being redistributed. */
static void nn_reshape_legacy(const struct shp_node *x, al_span p)
{
	const struct al_shape *s = in_at(x, 0);
	int64_t t[MAXV];
	size_t n = pints(p, AL_NN_F_RESHAPE_TARGET_SHAPE, t);
	if (!x->n_out || !s || s->rank != 5 || (n != 3 && n != 4))
		return;
	bool fl = false;
	int64_t total = shp_prod(s, 2, 5, &fl); /* C*H*W, times Seq when the target sets it */
	if (n == 4) {
		total = dim_mul(total, shp_dim(s, 0));
		fl |= shp_flex(s, 0);
	}
	struct al_shape r;
	reshape_to(&r, t, n, s, total, fl, false);
	struct al_shape *o = &x->out[0];
	shp_rank(o, 5, AL_DT_FP32);
	if (n == 4)
		shp_copy_dim(o, 0, &r, 0);
	else
		shp_copy_dim(o, 0, s, 0);
	shp_copy_dim(o, 1, s, 1);
	for (int i = 0; i < 3; i++)
		shp_copy_dim(o, 2 + i, &r, (int)n - 3 + i);
}

/* Flatten: [..., C, H, W] -> [..., C*H*W, 1, 1]. */
static void nn_flatten(const struct shp_node *x, al_span p)
{
	(void)p;
	if (!start_chw(x, 3))
		return;
	const struct al_shape *s = x->in[0];
	bool fl = false;
	int64_t v = shp_prod(s, s->rank - 3, s->rank, &fl);
	shp_set(&x->out[0], s->rank - 3, v, fl);
	shp_set(&x->out[0], s->rank - 2, 1, false);
	shp_set(&x->out[0], s->rank - 1, 1, false);
}

/* PermuteLayerParams axis = 1: a permutation of [0,1,2,3] over [Seq, C, H, W]
 * of a rank-5 blob; the batch axis stays. */
static void nn_permute(const struct shp_node *x, al_span p)
{
	static const int pos[4] = {0, 2, 3, 4};
	const struct al_shape *s = in_at(x, 0);
	int64_t a[MAXV];
	size_t n = pints(p, AL_NN_F_PERMUTE_AXIS, a);
	if (!x->n_out || !s || s->rank != 5)
		return;
	struct al_shape *o = &x->out[0];
	*o = *s;
	o->dtype = AL_DT_FP32;
	if (n == 0)
		return;
	if (n != 4) {
		shp_rank(o, 5, AL_DT_FP32);
		return;
	}
	for (int i = 0; i < 4; i++) {
		if (a[i] < 0 || a[i] > 3) {
			shp_rank(o, 5, AL_DT_FP32);
			return;
		}
		shp_copy_dim(o, pos[i], s, pos[a[i]]);
	}
}

/* Concatenation of every input along axis `ax` of input 0 (negative = from the end). */
static void concat_along(const struct shp_node *x, int64_t ax)
{
	const struct al_shape *s = in_at(x, 0);
	if (!x->n_out || !s)
		return;
	int a = shp_axis(s, ax);
	if (a < 0)
		return;
	struct al_shape *o = &x->out[0];
	*o = *s;
	o->dtype = AL_DT_FP32;
	int64_t sum = 0;
	bool fl = false;
	for (uint32_t i = 0; i < x->n_in; i++) {
		const struct al_shape *t = in_at(x, i);
		if (!t || t->rank != s->rank) {
			sum = AL_DIM_UNKNOWN;
			break;
		}
		fl |= shp_flex(t, a);
		sum = dim_add(sum, shp_dim(t, a));
	}
	shp_set(o, a, sum, fl);
}

/* ConcatLayerParams sequenceConcat = 100: axis -5, else -3. */
static void nn_concat(const struct shp_node *x, al_span p)
{
	concat_along(x, pb(p, AL_NN_F_CONCAT_SEQUENCE_CONCAT) ? -5 : -3);
}

/* ConcatNDLayerParams axis = 1. */
static void nn_concat_nd(const struct shp_node *x, al_span p)
{
	concat_along(x, pi(p, AL_NN_F_AXIS, 0));
}

/* Even or given split of input 0's axis `ax` into the outputs. */
static void split_along(const struct shp_node *x, int64_t ax, const int64_t *sizes, size_t n_sizes,
			uint64_t n_splits)
{
	const struct al_shape *s = in_at(x, 0);
	int a = s ? shp_axis(s, ax) : -1;
	if (a < 0)
		return;
	uint64_t n = n_splits ? n_splits : x->n_out;
	int64_t d = shp_dim(s, a), even = n && d >= 0 && d % (int64_t)n == 0 ? d / (int64_t)n : AL_DIM_UNKNOWN;
	for (uint32_t o = 0; o < x->n_out; o++) {
		x->out[o] = *s;
		x->out[o].dtype = AL_DT_FP32;
		int64_t v = n_sizes ? (o < n_sizes && n_sizes <= MAXV ? sizes[o] : AL_DIM_UNKNOWN) : even;
		shp_set(&x->out[o], a, v, false);
	}
}

/* SplitLayerParams nOutputs = 1: axis -3 in equal parts. */
static void nn_split(const struct shp_node *x, al_span p)
{
	split_along(x, -3, NULL, 0, pu(p, AL_NN_F_SPLIT_N_OUTPUTS, 0));
}

/* SplitNDLayerParams axis = 1, numSplits = 2, splitSizes = 3. */
static void nn_split_nd(const struct shp_node *x, al_span p)
{
	int64_t sz[MAXV];
	size_t n = pints(p, AL_NN_F_SPLIT_ND_SPLIT_SIZES, sz);
	split_along(x, pi(p, AL_NN_F_AXIS, 0), sz, n, pu(p, AL_NN_F_SPLIT_ND_NUM_SPLITS, 0));
}

/* SequenceRepeatLayerParams nRepetitions = 1 (0 -> 1): axis -5 times n. */
static void nn_sequence_repeat(const struct shp_node *x, al_span p)
{
	if (!start_chw(x, 5))
		return;
	uint64_t n = pu(p, AL_NN_F_SEQUENCE_REPEAT_N_REPETITIONS, 1);
	int a = back(x->in[0], 5);
	shp_set(&x->out[0], a, dim_mul(shp_dim(x->in[0], a), n ? (int64_t)(n & INT64_MAX) : 1),
		shp_flex(x->in[0], a));
}

/* ReorganizeDataLayerParams mode = 1 (SPACE_TO_DEPTH, DEPTH_TO_SPACE,
 * PIXEL_SHUFFLE), blockSize = 2. */
static void nn_reorganize(const struct shp_node *x, al_span p)
{
	if (!start_chw(x, 3))
		return;
	const struct al_shape *s = x->in[0];
	struct al_shape *o = &x->out[0];
	int64_t b = (int64_t)(pu(p, AL_NN_F_REORGANIZE_BLOCK_SIZE, 0) & INT64_MAX), b2 = dim_mul(b, b);
	int c = back(s, 3), h = back(s, 2), w = back(s, 1);
	int64_t C = shp_dim(s, c), H = shp_dim(s, h), W = shp_dim(s, w);
	if (b < 1) {
		shp_rank(o, s->rank, AL_DT_FP32);
		return;
	}
	if (pi(p, AL_NN_F_REORGANIZE_MODE, 0) == 0) {
		shp_set(o, c, dim_mul(C, b2), shp_flex(s, c));
		shp_set(o, h, H >= 0 && H % b == 0 ? H / b : AL_DIM_UNKNOWN, shp_flex(s, h));
		shp_set(o, w, W >= 0 && W % b == 0 ? W / b : AL_DIM_UNKNOWN, shp_flex(s, w));
	} else {
		shp_set(o, c, C >= 0 && b2 > 0 && C % b2 == 0 ? C / b2 : AL_DIM_UNKNOWN, shp_flex(s, c));
		shp_set(o, h, dim_mul(H, b), shp_flex(s, h));
		shp_set(o, w, dim_mul(W, b), shp_flex(s, w));
	}
}

/* SliceLayerParams (legacy) startIndex = 1, endIndex = 2 (exclusive), stride =
 * 3, axis = 4 (CHANNEL -3, HEIGHT -2, WIDTH -1). */
static void nn_slice_legacy(const struct shp_node *x, al_span p)
{
	int64_t a = pi(p, AL_NN_F_SLICE_AXIS, 0);
	if (a < 0 || a > 2 || !start_chw(x, (int)(3 - a)))
		return;
	int ax = back(x->in[0], (int)(3 - a));
	int64_t st = (int64_t)(pu(p, AL_NN_F_SLICE_STRIDE, 1) & INT64_MAX);
	int64_t d = shp_dim(x->in[0], ax);
	int64_t v = shp_slice_count(d, pi(p, AL_NN_F_SLICE_START_INDEX, 0), pi(p, AL_NN_F_SLICE_END_INDEX, 0),
				    st ? st : 1, false, false, false);
	shp_set(&x->out[0], ax, v, false);
}

/* SliceStaticLayerParams beginIds = 1, beginMasks = 2, endIds = 3, endMasks =
 * 4, strides = 5, squeezeMasks = 6; SliceDynamic takes begin from an input. */
static void slice_nd(const struct shp_node *x, al_span p, bool dynamic)
{
	const struct al_shape *s = in_at(x, 0);
	if (!x->n_out || !s || s->rank > MAXV)
		return;
	int64_t b[MAXV] = {0}, e[MAXV] = {0}, st[MAXV], bm[MAXV] = {0}, em[MAXV] = {0}, sq[MAXV] = {0};
	size_t nb = pints(p, AL_NN_F_SLICE_ND_BEGIN_IDS, b), ne = pints(p, AL_NN_F_SLICE_ND_END_IDS, e),
	       ns = pints(p, AL_NN_F_SLICE_ND_STRIDES, st);
	pints(p, AL_NN_F_SLICE_ND_BEGIN_MASKS, bm);
	pints(p, AL_NN_F_SLICE_ND_END_MASKS, em);
	pints(p, AL_NN_F_SLICE_ND_SQUEEZE_MASKS, sq);
	(void)nb;
	(void)ne;
	struct al_shape *o = &x->out[0];
	int r = 0;
	shp_rank(o, 0, AL_DT_FP32);
	for (int i = 0; i < s->rank; i++) {
		if (sq[i])
			continue;
		int64_t stride = (size_t)i < ns ? st[i] : 1;
		int64_t v;
		bool fl = false;
		if (bm[i] && em[i] && (stride == 1 || stride == -1)) {
			v = shp_dim(s, i);
			fl = shp_flex(s, i);
		} else if (dynamic && !bm[i]) {
			v = AL_DIM_UNKNOWN;
		} else {
			v = shp_slice_count(shp_dim(s, i), b[i], e[i], stride, bm[i], em[i], false);
		}
		o->rank = r + 1;
		shp_set(o, r++, v, fl);
	}
	if (r == 0) { /* everything squeezed: a scalar is kept as [1] */
		o->rank = 1;
		shp_set(o, 0, 1, false);
	}
}

static void nn_slice_static(const struct shp_node *x, al_span p)
{
	slice_nd(x, p, false);
}

static void nn_slice_dynamic(const struct shp_node *x, al_span p)
{
	slice_nd(x, p, true);
}

/* SliceBySizeLayerParams size = 2, axis = 3. */
static void nn_slice_by_size(const struct shp_node *x, al_span p)
{
	if (!start_chw(x, 1))
		return;
	int a = shp_axis(x->in[0], pi(p, AL_NN_F_SLICE_BY_SIZE_AXIS, 0));
	int64_t n = pi(p, AL_NN_F_SLICE_BY_SIZE_SIZE, -1);
	if (a >= 0)
		shp_set(&x->out[0], a, n >= 0 ? n : AL_DIM_UNKNOWN, false);
}

/* Recurrent layers: input [Seq, B, I, 1, 1] -> output [Seq or 1, B, O, 1, 1]
 * and state outputs [1, B, O, 1, 1] (bidirectional: 2*O for the output, O for
 * each state). */
static void rnn_outputs(const struct shp_node *x, int64_t osize, bool seq_out, int64_t mult)
{
	const struct al_shape *s = in_at(x, 0);
	if (!s || s->rank < 3)
		return;
	int c = back(s, 3);
	for (uint32_t o = 0; o < x->n_out; o++) {
		struct al_shape *t = &x->out[o];
		*t = *s;
		t->dtype = AL_DT_FP32;
		shp_set(t, c, osize > 0 ? (o == 0 ? dim_mul(osize, mult) : osize) : AL_DIM_UNKNOWN, false);
		for (int i = c + 1; i < s->rank; i++)
			shp_set(t, i, 1, false);
		if (o > 0 || !seq_out)
			shp_set(t, 0, 1, false); /* the sequence axis of [Seq, B, C, 1, 1] */
	}
}

/* SimpleRecurrent, GRU and the LSTMs: outputVectorSize, sequenceOutput. */
static void rnn_shapes(const struct shp_node *x, int64_t mult)
{
	struct al_nn_recurrent r;
	ali_nn_recurrent(x->n, &r);
	rnn_outputs(x, (int64_t)(al_pb_or(r.output_vector_size, 0) & INT64_MAX),
		    al_pb_true(r.sequence_output), mult);
}

static void nn_rnn(const struct shp_node *x, al_span p)
{
	rnn_shapes(x, x->n->kind == AL_NNK_biDirectionalLSTM ? 2 : 1);
}

/* RangeStaticLayerParams endValue = 1, startValue = 2, stepSizeValue = 3 -> [n]. */
static void nn_range_static(const struct shp_node *x, al_span p)
{
	if (!x->n_out)
		return;
	double e = pf(p, AL_NN_F_RANGE_STATIC_END, 0), b = pf(p, AL_NN_F_RANGE_STATIC_START, 0),
	       st = pf(p, AL_NN_F_RANGE_STATIC_STEP, 1);
	shp_rank(&x->out[0], 1, AL_DT_FP32);
	double n = st != 0 ? ceil((e - b) / st) : -1;
	if (isfinite(n) && n >= 0 && n < 9e15)
		shp_set(&x->out[0], 0, (int64_t)n, false);
}

/* A rank-1 result whose length is data-dependent. */
static void nn_rank1(const struct shp_node *x, al_span p)
{
	(void)p;
	if (x->n_out)
		shp_rank(&x->out[0], 1, AL_DT_FP32);
}

/* TileLayerParams reps = 1 (one per axis). */
static void nn_tile(const struct shp_node *x, al_span p)
{
	if (!start_chw(x, 1))
		return;
	const struct al_shape *s = x->in[0];
	int64_t r[MAXV];
	size_t n = pints(p, AL_NN_F_TILE_REPS, r);
	if (x->n_in > 1 || n != (size_t)s->rank) {
		shp_rank(&x->out[0], s->rank, AL_DT_FP32);
		return;
	}
	for (int i = 0; i < s->rank; i++)
		shp_set(&x->out[0], i, dim_mul(shp_dim(s, i), r[i]), shp_flex(s, i));
}

/* Insert a new axis of size `n` at `ax` (normalized against rank + 1). */
static void insert_axis(struct al_shape *o, const struct al_shape *s, int64_t ax, int64_t n)
{
	int r = s->rank + 1;
	if (ax < 0)
		ax += r;
	if (ax < 0 || ax >= r) {
		shp_rank(o, r, AL_DT_FP32);
		return;
	}
	shp_rank(o, r, AL_DT_FP32);
	for (int i = 0, j = 0; i < r; i++)
		if (i == ax)
			shp_set(o, i, n, false);
		else
			shp_copy_dim(o, i, s, j++);
}

/* StackLayerParams axis = 1: a new axis of size n_inputs. */
static void nn_stack(const struct shp_node *x, al_span p)
{
	const struct al_shape *s = in_at(x, 0);
	if (x->n_out && s)
		insert_axis(&x->out[0], s, pi(p, AL_NN_F_AXIS, 0), x->n_in);
}

/* data[:axis] + indices + data[axis+1:]. */
static void gather_shape(struct al_shape *o, const struct al_shape *d, const struct al_shape *idx,
			 int64_t axis)
{
	int a = shp_axis(d, axis);
	if (!d || !idx || a < 0)
		return;
	int r = d->rank - 1 + idx->rank;
	shp_rank(o, r, d->dtype);
	int k = 0;
	for (int i = 0; i < a; i++)
		shp_copy_dim(o, k++, d, i);
	for (int i = 0; i < idx->rank; i++)
		shp_copy_dim(o, k++, idx, i);
	for (int i = a + 1; i < d->rank; i++)
		shp_copy_dim(o, k++, d, i);
}

/* GatherLayerParams axis = 1. */
static void nn_gather(const struct shp_node *x, al_span p)
{
	if (x->n_out)
		gather_shape(&x->out[0], in_at(x, 0), in_at(x, 1), pi(p, AL_NN_F_AXIS, 0));
	if (x->n_out && x->out[0].rank >= 0)
		x->out[0].dtype = AL_DT_FP32;
}

/* GatherND: indices[:-1] + data[indices[-1]:]. */
static void nn_gather_nd(const struct shp_node *x, al_span p)
{
	(void)p;
	const struct al_shape *d = in_at(x, 0), *idx = in_at(x, 1);
	if (!x->n_out || !d || !idx || idx->rank < 1)
		return;
	int64_t k = shp_dim(idx, idx->rank - 1);
	if (k < 0 || k > d->rank)
		return;
	struct al_shape *o = &x->out[0];
	shp_rank(o, idx->rank - 1 + d->rank - (int)k, AL_DT_FP32);
	int j = 0;
	for (int i = 0; i < idx->rank - 1; i++)
		shp_copy_dim(o, j++, idx, i);
	for (int i = (int)k; i < d->rank; i++)
		shp_copy_dim(o, j++, d, i);
}

/* GatherAlongAxis: the shape of the indices. */
static void nn_second(const struct shp_node *x, al_span p)
{
	(void)p;
	copy_in(x, 0, 1);
}

/* Permutation `perm` (n values) of s. */
static void permute_shape(struct al_shape *o, const struct al_shape *s, const int64_t *perm, size_t n)
{
	if (!s || n != (size_t)s->rank || n > MAXV) {
		if (s)
			shp_rank(o, s->rank, s->dtype);
		return;
	}
	shp_rank(o, s->rank, s->dtype);
	unsigned seen = 0;
	for (size_t i = 0; i < n; i++) {
		int a = shp_axis(s, perm[i]);
		if (a < 0 || (seen >> a & 1)) {
			shp_rank(o, s->rank, s->dtype);
			return;
		}
		seen |= 1u << a;
		shp_copy_dim(o, (int)i, s, a);
	}
}

/* TransposeLayerParams axes = 1. */
static void nn_transpose(const struct shp_node *x, al_span p)
{
	int64_t a[MAXV];
	size_t n = pints(p, AL_NN_F_TRANSPOSE_AXES, a);
	if (x->n_out && in_at(x, 0)) {
		permute_shape(&x->out[0], x->in[0], a, n);
		x->out[0].dtype = AL_DT_FP32;
	}
}

/* SlidingWindowsLayerParams axis = 1, windowSize = 2, step = 3: [.., L, ..] ->
 * [.., M, W, ..], M = (L - W) / step + 1. */
static void nn_sliding_windows(const struct shp_node *x, al_span p)
{
	const struct al_shape *s = in_at(x, 0);
	if (!x->n_out || !s)
		return;
	int a = shp_axis(s, pi(p, AL_NN_F_AXIS, 0));
	int64_t w = (int64_t)(pu(p, AL_NN_F_SLIDING_WINDOWS_WINDOW_SIZE, 0) & INT64_MAX),
		st = (int64_t)(pu(p, AL_NN_F_SLIDING_WINDOWS_STEP, 1) & INT64_MAX);
	if (a < 0)
		return;
	struct al_shape *o = &x->out[0];
	shp_rank(o, s->rank + 1, AL_DT_FP32);
	for (int i = 0, j = 0; i < s->rank; i++) {
		if (i == a) {
			shp_set(o, j++, dim_add(dim_div_floor(dim_sub(shp_dim(s, i), w), st), 1), shp_flex(s, i));
			shp_set(o, j++, w, false);
		} else {
			shp_copy_dim(o, j++, s, i);
		}
	}
}

/* TopKLayerParams axis = 1, K = 2 (a second input overrides K): two outputs. */
static void nn_topk(const struct shp_node *x, al_span p)
{
	const struct al_shape *s = in_at(x, 0);
	if (!s)
		return;
	int a = shp_axis(s, pi(p, AL_NN_F_AXIS, 0));
	int64_t k = x->n_in > 1 ? AL_DIM_UNKNOWN : (int64_t)(pu(p, AL_NN_F_TOPK_K, 0) & INT64_MAX);
	for (uint32_t o = 0; o < x->n_out && o < 2; o++) {
		x->out[o] = *s;
		x->out[o].dtype = AL_DT_FP32;
		if (a >= 0)
			shp_set(&x->out[o], a, k, false);
		else
			shp_rank(&x->out[o], s->rank, AL_DT_FP32);
	}
}

/* Reduce the axes a[0..n) of s (negative from the end); keep them as 1 or drop
 * them. A rank that would drop to 0 stays [1] when `min1`. */
static void reduce_shape(struct al_shape *o, const struct al_shape *s, const int64_t *a, size_t n,
			 bool keep, bool min1)
{
	if (!s)
		return;
	unsigned mask = 0;
	for (size_t i = 0; i < n && i < MAXV; i++) {
		int ax = shp_axis(s, a[i]);
		if (ax < 0 || ax >= 32) {
			shp_rank(o, keep ? s->rank : -1, AL_DT_FP32);
			return;
		}
		mask |= 1u << ax;
	}
	if (s->rank > 32)
		return;
	shp_rank(o, 0, s->dtype);
	int r = 0;
	for (int i = 0; i < s->rank; i++) {
		bool red = mask >> i & 1;
		if (red && !keep)
			continue;
		o->rank = r + 1;
		if (red)
			shp_set(o, r++, 1, false);
		else
			shp_copy_dim(o, r++, s, i);
	}
	if (r == 0 && min1) {
		o->rank = 1;
		shp_set(o, 0, 1, false);
	}
}

/* ArgMax / ArgMin: axis = 1, removeDim = 2. */
static void nn_argreduce(const struct shp_node *x, al_span p)
{
	int64_t a = pi(p, AL_NN_F_AXIS, 0);
	if (x->n_out)
		reduce_shape(&x->out[0], in_at(x, 0), &a, 1, !pb(p, AL_NN_F_ARG_REMOVE_DIM), true);
	if (x->n_out && x->out[0].rank >= 0)
		x->out[0].dtype = AL_DT_FP32;
}

/* Reduce{L1,L2,Max,Min,Sum,Prod,Mean,LogSum,SumSquare,LogSumExp}: axes = 1,
 * keepDims = 2, reduceAll = 3. */
static void nn_reduce(const struct shp_node *x, al_span p)
{
	const struct al_shape *s = in_at(x, 0);
	if (!x->n_out || !s)
		return;
	int64_t a[MAXV];
	size_t n = pints(p, AL_NN_F_REDUCE_ND_AXES, a);
	bool keep = pb(p, AL_NN_F_REDUCE_ND_KEEP_DIMS);
	if (pb(p, AL_NN_F_REDUCE_ND_REDUCE_ALL) || n == 0) {
		n = (size_t)(s->rank < MAXV ? s->rank : MAXV);
		for (size_t i = 0; i < n; i++)
			a[i] = (int64_t)i;
		if (s->rank > MAXV) {
			shp_rank(&x->out[0], keep ? s->rank : 1, AL_DT_FP32);
			return;
		}
	}
	reduce_shape(&x->out[0], s, a, n, keep, true);
	if (x->out[0].rank >= 0)
		x->out[0].dtype = AL_DT_FP32;
}

/* BatchedMatMulLayerParams transposeA, transposeB, weightMatrixSecondDimension
 * (one input: [..., X1] -> [..., X2]). */
static void nn_batched_matmul(const struct shp_node *x, al_span p)
{
	const struct al_shape *a = in_at(x, 0);
	if (!x->n_out || !a)
		return;
	struct al_nn_batched_matmul bm;
	ali_nn_batched_matmul(x->n, &bm);
	if (x->n_in >= 2) {
		shp_matmul(&x->out[0], a, in_at(x, 1), al_pb_true(bm.transpose_a), al_pb_true(bm.transpose_b),
			   AL_DT_FP32);
		return;
	}
	int64_t x2 = (int64_t)(al_pb_or(bm.weight_matrix_second_dimension, 0) & INT64_MAX);
	x->out[0] = *a;
	x->out[0].dtype = AL_DT_FP32;
	shp_set(&x->out[0], a->rank - 1, x2 ? x2 : AL_DIM_UNKNOWN, false);
}

/* GetShape: [rank]. */
static void nn_get_shape(const struct shp_node *x, al_span p)
{
	(void)p;
	const struct al_shape *s = in_at(x, 0);
	if (!x->n_out)
		return;
	shp_rank(&x->out[0], 1, AL_DT_FP32);
	if (s)
		shp_set(&x->out[0], 0, s->rank, false);
}

/* A shape given as a repeated field (FillStatic targetShape = 2, random
 * *Static outputShape, BroadcastToStatic targetShape = 1). */
static void static_shape(const struct shp_node *x, al_span p, uint32_t f)
{
	int64_t v[MAXV];
	size_t n = pints(p, f, v);
	if (x->n_out && n && n <= MAXV)
		shp_from(&x->out[0], v, n, AL_DT_FP32);
}

static void nn_fill_static(const struct shp_node *x, al_span p)
{
	static_shape(x, p, AL_NN_F_FILL_STATIC_TARGET_SHAPE);
}

static void nn_random_static(const struct shp_node *x, al_span p)
{
	static_shape(x, p, AL_NN_F_RANDOM_STATIC_OUTPUT_SHAPE);
}

static void nn_bernoulli_static(const struct shp_node *x, al_span p)
{
	static_shape(x, p, AL_NN_F_BERNOULLI_STATIC_OUTPUT_SHAPE);
}

/* *Dynamic layers: the shape comes in as a rank-1 tensor (input `i`); its
 * length is the output rank, the values are data. */
static void dynamic_shape(const struct shp_node *x, uint32_t i)
{
	const struct al_shape *s = in_at(x, i);
	if (!x->n_out)
		return;
	int64_t r = s && s->rank == 1 ? shp_dim(s, 0) : AL_DIM_UNKNOWN;
	shp_rank(&x->out[0], r >= 0 && r <= 64 ? (int)r : -1, AL_DT_FP32);
}

static void nn_dynamic0(const struct shp_node *x, al_span p)
{
	(void)p;
	dynamic_shape(x, 0);
}

static void nn_dynamic1(const struct shp_node *x, al_span p)
{
	(void)p;
	dynamic_shape(x, 1);
}

/* BroadcastToLike: broadcast of the two inputs; BroadcastToStatic: of the
 * input and targetShape = 1; BroadcastToDynamic: with a shape input. */
static void nn_broadcast_like(const struct shp_node *x, al_span p)
{
	nn_broadcast(x, p);
}

static void nn_broadcast_static(const struct shp_node *x, al_span p)
{
	const struct al_shape *s = in_at(x, 0);
	int64_t v[MAXV];
	size_t n = pints(p, AL_NN_F_BROADCAST_STATIC_TARGET_SHAPE, v);
	if (!x->n_out || !s || !n || n > MAXV)
		return;
	struct al_shape t;
	shp_from(&t, v, n, AL_DT_FP32);
	if (!shp_broadcast(s, &t, &x->out[0]))
		shp_unknown(&x->out[0]);
	x->out[0].dtype = AL_DT_FP32;
}

static void nn_broadcast_dynamic(const struct shp_node *x, al_span p)
{
	(void)p;
	dynamic_shape(x, 1);
	const struct al_shape *s = in_at(x, 0);
	if (x->n_out && s && x->out[0].rank >= 0) {
		struct al_shape t = x->out[0];
		if (!shp_broadcast(s, &t, &x->out[0]))
			shp_unknown(&x->out[0]);
		x->out[0].dtype = AL_DT_FP32;
	}
}

/* SqueezeLayerParams axes = 1, squeezeAll = 2 (rank 1 stays rank 1). */
static void nn_squeeze(const struct shp_node *x, al_span p)
{
	const struct al_shape *s = in_at(x, 0);
	if (!x->n_out || !s || s->rank > MAXV)
		return;
	int64_t a[MAXV];
	size_t n = 0;
	if (pb(p, AL_NN_F_SQUEEZE_ALL)) {
		for (int i = 0; i < s->rank; i++) {
			int64_t d = shp_dim(s, i);
			if (d < 0) {
				shp_unknown(&x->out[0]);
				return;
			}
			if (d == 1)
				a[n++] = i;
		}
	} else {
		n = pints(p, AL_NN_F_SQUEEZE_AXES, a);
		if (n > MAXV)
			return;
	}
	reduce_shape(&x->out[0], s, a, n, false, true);
	if (x->out[0].rank >= 0)
		x->out[0].dtype = AL_DT_FP32;
}

/* Insert unit axes a[0..n) (normalized against the output rank). */
static void expand_shape(struct al_shape *o, const struct al_shape *s, const int64_t *a, size_t n)
{
	if (!s || n > MAXV)
		return;
	int r = s->rank + (int)n;
	unsigned mask = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t ax = a[i] < 0 ? a[i] + r : a[i];
		if (ax < 0 || ax >= r || ax >= 32 || (mask >> ax & 1)) {
			shp_rank(o, r, s->dtype);
			return;
		}
		mask |= 1u << ax;
	}
	shp_rank(o, r, s->dtype);
	for (int i = 0, j = 0; i < r; i++)
		if (i < 32 && (mask >> i & 1))
			shp_set(o, i, 1, false);
		else
			shp_copy_dim(o, i, s, j++);
}

/* ExpandDimsLayerParams axes = 1. */
static void nn_expand_dims(const struct shp_node *x, al_span p)
{
	int64_t a[MAXV];
	size_t n = pints(p, AL_NN_F_EXPAND_DIMS_AXES, a);
	if (x->n_out && in_at(x, 0)) {
		expand_shape(&x->out[0], x->in[0], a, n);
		x->out[0].dtype = AL_DT_FP32;
	}
}

/* FlattenTo2DLayerParams axis = 1: [prod(:axis), prod(axis:)]. */
static void nn_flatten_2d(const struct shp_node *x, al_span p)
{
	const struct al_shape *s = in_at(x, 0);
	if (!x->n_out || !s)
		return;
	int64_t a = pi(p, AL_NN_F_FLATTEN_2D_AXIS, 1);
	if (a < 0)
		a += s->rank;
	shp_rank(&x->out[0], 2, AL_DT_FP32);
	if (a < 0 || a > s->rank)
		return;
	bool f0 = false, f1 = false;
	int64_t d0 = shp_prod(s, 0, (int)a, &f0), d1 = shp_prod(s, (int)a, s->rank, &f1);
	shp_set(&x->out[0], 0, d0, f0);
	shp_set(&x->out[0], 1, d1, f1);
}

/* ReshapeStatic (targetShape = 1, -1 inferred) and RankPreservingReshape (0 copies). */
static void reshape_nd(const struct shp_node *x, al_span p, bool zero_copies)
{
	const struct al_shape *s = in_at(x, 0);
	int64_t t[MAXV];
	size_t n = pints(p, AL_NN_F_RESHAPE_ND_TARGET_SHAPE, t);
	if (!x->n_out || !n || n > MAXV)
		return;
	bool fl = false;
	int64_t total = s ? shp_prod(s, 0, s->rank, &fl) : AL_DIM_UNKNOWN;
	reshape_to(&x->out[0], t, n, s, total, fl, zero_copies);
}

static void nn_reshape_static(const struct shp_node *x, al_span p)
{
	reshape_nd(x, p, false);
}

static void nn_reshape_rank_preserving(const struct shp_node *x, al_span p)
{
	reshape_nd(x, p, true);
}

/* ConstantPaddingLayerParams padAmounts = 2 ([begin, end] for the last axes),
 * padToGivenOutputSizeMode = 3. */
static void nn_constant_pad(const struct shp_node *x, al_span p)
{
	if (!start_chw(x, 1))
		return;
	const struct al_shape *s = x->in[0];
	int64_t v[MAXV];
	size_t n = pints(p, AL_NN_F_CONSTANT_PAD_AMOUNTS, v);
	if (n % 2 || n / 2 > (size_t)s->rank || n > MAXV) {
		shp_rank(&x->out[0], s->rank, AL_DT_FP32);
		return;
	}
	bool to_size = pb(p, AL_NN_F_CONSTANT_PAD_TO_SIZE);
	int first = s->rank - (int)(n / 2);
	for (int i = first; i < s->rank; i++) {
		int64_t b = v[2 * (i - first)], e = v[2 * (i - first) + 1];
		if (to_size) {
			shp_set(&x->out[0], i, b || e ? AL_DIM_UNKNOWN : shp_dim(s, i), false);
			continue;
		}
		shp_set(&x->out[0], i, dim_add(dim_add(shp_dim(s, i), b), e), shp_flex(s, i));
	}
}

/* CategoricalDistributionLayerParams numSamples = 2: the last axis. */
static void nn_categorical(const struct shp_node *x, al_span p)
{
	if (!start_chw(x, 1))
		return;
	int64_t n = pi(p, AL_NN_F_CATEGORICAL_NUM_SAMPLES, 0);
	shp_set(&x->out[0], x->in[0]->rank - 1, n > 0 ? n : AL_DIM_UNKNOWN, false);
}

/* WhereNonZero: [number of non-zeros (data), rank]. */
static void nn_where_nonzero(const struct shp_node *x, al_span p)
{
	(void)p;
	const struct al_shape *s = in_at(x, 0);
	if (!x->n_out)
		return;
	shp_rank(&x->out[0], 2, AL_DT_FP32);
	if (s)
		shp_set(&x->out[0], 1, s->rank, false);
}

/* OneHotLayerParams oneHotVectorSize = 1, axis = 2 (a second input sets the size). */
static void nn_one_hot(const struct shp_node *x, al_span p)
{
	const struct al_shape *s = in_at(x, 0);
	if (!x->n_out || !s)
		return;
	int64_t n = x->n_in > 1 ? AL_DIM_UNKNOWN : (int64_t)(pu(p, AL_NN_F_ONE_HOT_SIZE, 0) & INT64_MAX);
	insert_axis(&x->out[0], s, pi(p, AL_NN_F_ONE_HOT_AXIS, -1), n ? n : AL_DIM_UNKNOWN);
}

/* Pooling3DLayerParams kernel, strides, custom pads per axis D, H, W,
 * paddingType (CUSTOM, VALID, SAME); input [B, C, D, H, W]. */
static void nn_pool3d(const struct shp_node *x, al_span p)
{
	if (!start_chw(x, 5))
		return;
	struct al_nn_pooling3d pl;
	ali_nn_pooling3d(x->n, &pl);
	const struct al_shape *s = x->in[0];
	int64_t t = al_pb_i64(pl.padding_type, 0);
	for (int a = 0; a < 3; a++) {
		int ax = s->rank - 3 + a;
		int64_t k = al_pb_i64(pl.kernel[a], 0), st = al_pb_i64(pl.stride[a], 1);
		int64_t pa = t == 0 ? al_pb_i64(pl.custom_padding[2 * a], 0) : 0,
			pz = t == 0 ? al_pb_i64(pl.custom_padding[2 * a + 1], 0) : 0;
		shp_set(&x->out[0], ax,
			window_out(shp_dim(s, ax), k, st, 1, pa, pz, t == 2 ? PAD_SAME : PAD_VALID),
			shp_flex(s, ax));
	}
}

static void nn_global_pool3d(const struct shp_node *x, al_span p)
{
	(void)p;
	if (!start_chw(x, 3))
		return;
	for (int a = 1; a <= 3; a++)
		shp_set(&x->out[0], back(x->in[0], a), 1, false);
}

/* Convolution3DLayerParams outputChannels, kernel, stride, dilation (D, H, W),
 * paddingType, custom pads, isDeconvolution, outputShape. */
static void nn_conv3d(const struct shp_node *x, al_span p)
{
	if (!start_chw(x, 5))
		return;
	struct al_nn_convolution3d cv;
	ali_nn_convolution3d(x->n, &cv);
	const struct al_shape *s = x->in[0];
	struct al_shape *o = &x->out[0];
	int64_t cout = al_pb_i64(cv.output_channels, 0), t = al_pb_i64(cv.padding_type, 0), os[MAXV];
	bool deconv = al_pb_true(cv.is_deconvolution);
	size_t no = sints(&cv.output_shape, os);
	shp_set(o, s->rank - 4, cout > 0 ? cout : AL_DIM_UNKNOWN, false);
	for (int a = 0; a < 3; a++) {
		int ax = s->rank - 3 + a;
		int64_t k = al_pb_i64(cv.kernel[a], 0), st = al_pb_i64(cv.stride[a], 1);
		int64_t dl = al_pb_i64(cv.dilation[a], 1);
		int64_t pa = t == 0 ? al_pb_i64(cv.custom_padding[2 * a], 0) : 0;
		int64_t pz = t == 0 ? al_pb_i64(cv.custom_padding[2 * a + 1], 0) : 0;
		int64_t d = shp_dim(s, ax), v;
		if (deconv) {
			if (no == 3)
				v = os[a];
			else if (t == 2)
				v = dim_mul(d, st);
			else
				v = d >= 1 && st > 0 && k > 0 && dl > 0
					    ? dim_sub(dim_add(dim_mul(d - 1, st), dim_add(dim_mul(k - 1, dl), 1)),
						      dim_add(pa, pz))
					    : AL_DIM_UNKNOWN;
		} else {
			v = window_out(d, k, st, dl, pa, pz, t == 2 ? PAD_SAME : PAD_VALID);
		}
		shp_set(o, ax, v, !deconv || no != 3 ? shp_flex(s, ax) : false);
	}
}

/* Every output unknown (custom layers, non-maximum suppression). */
static void nn_unknown(const struct shp_node *x, al_span p)
{
	(void)p;
	for (uint32_t o = 0; o < x->n_out; o++)
		shp_unknown(&x->out[o]);
}

/* ================================================================ the table */

/* Indexed by kind. Kinds without a row: unknown shapes (tests/unit/test_kinds.c
 * lists them). */
static nn_fn *const rows[AL_NNK_COUNT] = {
	[AL_NNK_convolution] = nn_conv, [AL_NNK_pooling] = nn_pool, [AL_NNK_activation] = nn_same,
	[AL_NNK_innerProduct] = nn_inner_product, [AL_NNK_embedding] = nn_embedding,
	[AL_NNK_batchnorm] = nn_same, [AL_NNK_mvn] = nn_same, [AL_NNK_l2normalize] = nn_same,
	[AL_NNK_softmax] = nn_same, [AL_NNK_lrn] = nn_same, [AL_NNK_crop] = nn_crop,
	[AL_NNK_padding] = nn_padding, [AL_NNK_upsample] = nn_upsample,
	[AL_NNK_resizeBilinear] = nn_resize, [AL_NNK_cropResize] = nn_crop_resize,
	[AL_NNK_unary] = nn_same, [AL_NNK_add] = nn_broadcast, [AL_NNK_multiply] = nn_broadcast,
	[AL_NNK_average] = nn_broadcast, [AL_NNK_scale] = nn_same, [AL_NNK_bias] = nn_same,
	[AL_NNK_max] = nn_broadcast, [AL_NNK_min] = nn_broadcast, [AL_NNK_dot] = nn_dot,
	[AL_NNK_reduce] = nn_reduce_legacy, [AL_NNK_loadConstant] = nn_load_constant,
	[AL_NNK_reshape] = nn_reshape_legacy, [AL_NNK_flatten] = nn_flatten,
	[AL_NNK_permute] = nn_permute, [AL_NNK_concat] = nn_concat, [AL_NNK_split] = nn_split,
	[AL_NNK_sequenceRepeat] = nn_sequence_repeat, [AL_NNK_reorganizeData] = nn_reorganize,
	[AL_NNK_slice] = nn_slice_legacy, [AL_NNK_simpleRecurrent] = nn_rnn, [AL_NNK_gru] = nn_rnn,
	[AL_NNK_uniDirectionalLSTM] = nn_rnn, [AL_NNK_biDirectionalLSTM] = nn_rnn,
	[AL_NNK_custom] = nn_unknown, [AL_NNK_copy] = nn_same, [AL_NNK_branch] = nn_none,
	[AL_NNK_loop] = nn_none, [AL_NNK_loopBreak] = nn_none, [AL_NNK_loopContinue] = nn_none,
	[AL_NNK_rangeStatic] = nn_range_static, [AL_NNK_rangeDynamic] = nn_rank1,
	[AL_NNK_clip] = nn_same, [AL_NNK_ceil] = nn_same, [AL_NNK_floor] = nn_same,
	[AL_NNK_sign] = nn_same, [AL_NNK_round] = nn_same, [AL_NNK_exp2] = nn_same,
	[AL_NNK_sin] = nn_same, [AL_NNK_cos] = nn_same, [AL_NNK_tan] = nn_same,
	[AL_NNK_asin] = nn_same, [AL_NNK_acos] = nn_same, [AL_NNK_atan] = nn_same,
	[AL_NNK_sinh] = nn_same, [AL_NNK_cosh] = nn_same, [AL_NNK_tanh] = nn_same,
	[AL_NNK_asinh] = nn_same, [AL_NNK_acosh] = nn_same, [AL_NNK_atanh] = nn_same,
	[AL_NNK_erf] = nn_same, [AL_NNK_gelu] = nn_same, [AL_NNK_equal] = nn_broadcast,
	[AL_NNK_notEqual] = nn_broadcast, [AL_NNK_lessThan] = nn_broadcast,
	[AL_NNK_lessEqual] = nn_broadcast, [AL_NNK_greaterThan] = nn_broadcast,
	[AL_NNK_greaterEqual] = nn_broadcast, [AL_NNK_logicalOr] = nn_broadcast,
	[AL_NNK_logicalXor] = nn_broadcast, [AL_NNK_logicalNot] = nn_same,
	[AL_NNK_logicalAnd] = nn_broadcast, [AL_NNK_modBroadcastable] = nn_broadcast,
	[AL_NNK_minBroadcastable] = nn_broadcast, [AL_NNK_maxBroadcastable] = nn_broadcast,
	[AL_NNK_addBroadcastable] = nn_broadcast, [AL_NNK_powBroadcastable] = nn_broadcast,
	[AL_NNK_divideBroadcastable] = nn_broadcast, [AL_NNK_floorDivBroadcastable] = nn_broadcast,
	[AL_NNK_multiplyBroadcastable] = nn_broadcast,
	[AL_NNK_subtractBroadcastable] = nn_broadcast, [AL_NNK_tile] = nn_tile,
	[AL_NNK_stack] = nn_stack, [AL_NNK_gather] = nn_gather, [AL_NNK_scatter] = nn_same,
	[AL_NNK_gatherND] = nn_gather_nd, [AL_NNK_scatterND] = nn_same,
	[AL_NNK_softmaxND] = nn_same, [AL_NNK_gatherAlongAxis] = nn_second,
	[AL_NNK_scatterAlongAxis] = nn_same, [AL_NNK_reverse] = nn_same,
	[AL_NNK_reverseSeq] = nn_same, [AL_NNK_splitND] = nn_split_nd,
	[AL_NNK_concatND] = nn_concat_nd, [AL_NNK_transpose] = nn_transpose,
	[AL_NNK_sliceStatic] = nn_slice_static, [AL_NNK_sliceDynamic] = nn_slice_dynamic,
	[AL_NNK_slidingWindows] = nn_sliding_windows, [AL_NNK_topK] = nn_topk,
	[AL_NNK_argMin] = nn_argreduce, [AL_NNK_argMax] = nn_argreduce,
	[AL_NNK_embeddingND] = nn_embedding_nd, [AL_NNK_batchedMatmul] = nn_batched_matmul,
	[AL_NNK_getShape] = nn_get_shape, [AL_NNK_loadConstantND] = nn_load_constant_nd,
	[AL_NNK_fillLike] = nn_same, [AL_NNK_fillStatic] = nn_fill_static,
	[AL_NNK_fillDynamic] = nn_dynamic0, [AL_NNK_broadcastToLike] = nn_broadcast_like,
	[AL_NNK_broadcastToStatic] = nn_broadcast_static,
	[AL_NNK_broadcastToDynamic] = nn_broadcast_dynamic, [AL_NNK_squeeze] = nn_squeeze,
	[AL_NNK_expandDims] = nn_expand_dims, [AL_NNK_flattenTo2D] = nn_flatten_2d,
	[AL_NNK_reshapeLike] = nn_second, [AL_NNK_reshapeStatic] = nn_reshape_static,
	[AL_NNK_reshapeDynamic] = nn_dynamic1,
	[AL_NNK_rankPreservingReshape] = nn_reshape_rank_preserving,
	[AL_NNK_constantPad] = nn_constant_pad, [AL_NNK_randomNormalLike] = nn_same,
	[AL_NNK_randomNormalStatic] = nn_random_static, [AL_NNK_randomNormalDynamic] = nn_dynamic0,
	[AL_NNK_randomUniformLike] = nn_same, [AL_NNK_randomUniformStatic] = nn_random_static,
	[AL_NNK_randomUniformDynamic] = nn_dynamic0, [AL_NNK_randomBernoulliLike] = nn_same,
	[AL_NNK_randomBernoulliStatic] = nn_bernoulli_static,
	[AL_NNK_randomBernoulliDynamic] = nn_dynamic0,
	[AL_NNK_categoricalDistribution] = nn_categorical, [AL_NNK_reduceL1] = nn_reduce,
	[AL_NNK_reduceL2] = nn_reduce, [AL_NNK_reduceMax] = nn_reduce,
	[AL_NNK_reduceMin] = nn_reduce, [AL_NNK_reduceSum] = nn_reduce,
	[AL_NNK_reduceProd] = nn_reduce, [AL_NNK_reduceMean] = nn_reduce,
	[AL_NNK_reduceLogSum] = nn_reduce, [AL_NNK_reduceSumSquare] = nn_reduce,
	[AL_NNK_reduceLogSumExp] = nn_reduce, [AL_NNK_whereNonZero] = nn_where_nonzero,
	[AL_NNK_matrixBandPart] = nn_same, [AL_NNK_lowerTriangular] = nn_same,
	[AL_NNK_upperTriangular] = nn_same, [AL_NNK_whereBroadcastable] = nn_broadcast,
	[AL_NNK_layerNormalization] = nn_same, [AL_NNK_NonMaximumSuppression] = nn_unknown,
	[AL_NNK_oneHot] = nn_one_hot, [AL_NNK_cumSum] = nn_same, [AL_NNK_clampedReLU] = nn_same,
	[AL_NNK_argSort] = nn_same, [AL_NNK_pooling3d] = nn_pool3d,
	[AL_NNK_globalPooling3d] = nn_global_pool3d, [AL_NNK_sliceBySize] = nn_slice_by_size,
	[AL_NNK_convolution3d] = nn_conv3d,
};
_Static_assert(sizeof rows / sizeof rows[0] == AL_NNK_COUNT, "one row per NN kind");

/* Whether kind k has a shape function (for tests/unit/test_kinds.c). */
bool ali_shapes_nn_has(int k)
{
	return k >= 0 && k < AL_NNK_COUNT && rows[k];
}

void ali_shapes_nn(const struct shp_node *x)
{
	const struct al_node *n = x->n;
	const struct al_node_src *src = al_src(n);
	if (n->kind < 0 || n->kind >= AL_NNK_COUNT || !src)
		return;
	nn_fn *fn = rows[n->kind];
	if (fn)
		fn(x, src->params);
}
