/* SPDX-License-Identifier: MIT */
/* interp_nn_ops.c: the NeuralNetwork layers that compute: activations,
 * convolution and deconvolution, pooling, innerProduct / embedding / batchedMatmul,
 * batchnorm / mvn / l2normalize / softmax / lrn / layerNormalization, the legacy and
 * broadcastable elementwise layers, comparisons and logic, and the reductions.
 * Semantics from the comments of coremltools' NeuralNetwork.proto; legacy layers
 * work on the last three axes [C, H, W] of a rank >= 3 blob with every leading axis
 * a batch (RANK5 blobs are [Seq, Batch, C, H, W]), ND layers on any rank.
 *
 * Each function validates its parameters and its inputs' shapes before it allocates
 * anything and calls kernels.h for the maths. It does not guess: a parameter value
 * whose behaviour is not documented (an unknown enum, a padding type it does not
 * know) is AL_E_UNSUPPORTED naming it.
 */
#include "interp_nn.h"
#include "nn_params.h"

#include <math.h>
#include <string.h>

/* out[0] = op(in[0]) elementwise. */
static enum al_status unary_out(struct nn_layer *l, enum al_unop op, float a, float b)
{
	const struct al_tensor *x = l->in[0];
	struct al_tensor *y = nn_alloc(l, x->rank, x->dims);
	if (!y)
		return AL_E_NOMEM;
	ali_unary(op, a, b, x->f, y->f, x->n);
	l->out[0] = y;
	return AL_OK;
}

/* a op b with numpy broadcasting into a new tensor. */
static struct al_tensor *binary_new(struct nn_layer *l, enum al_binop op, const struct al_tensor *a,
				    const struct al_tensor *b)
{
	int ry;
	int64_t dy[AL_TENSOR_MAX_RANK];
	if (!ali_broadcast_shape(a->rank, a->dims, b->rank, b->dims, &ry, dy) || ry > AL_TENSOR_MAX_RANK) {
		char ba[160], bb[160];
		nn_fail(l, AL_E_FORMAT, "shapes %s and %s do not broadcast",
			nn_dims_str(ba, sizeof ba, a->rank, a->dims), nn_dims_str(bb, sizeof bb, b->rank, b->dims));
		return NULL;
	}
	struct al_tensor *y = nn_alloc(l, ry, dy);
	if (y)
		ali_binary(op, a->f, a->rank, a->dims, b->f, b->rank, b->dims, y->f, ry, dy);
	return y;
}

/* l's output y, or when y is NULL the status of the failure that made it so
 * (a broadcast error is FORMAT, the budget UNSUPPORTED, an allocation NOMEM). */
static enum al_status produced(struct nn_layer *l, struct al_tensor *y)
{
	l->out[0] = y;
	if (y)
		return AL_OK;
	return l->r->x->last_fail ? l->r->x->last_fail : AL_E_NOMEM;
}

/* A scalar tensor [1] holding v (for single-input comparisons). */
static void scalar_view(struct al_tensor *s, float *v)
{
	memset(s, 0, sizeof *s);
	s->kind = AL_TK_TENSOR;
	s->dtype = AL_DT_FP32;
	s->rank = 0;
	s->n = 1;
	s->f = v;
}

/* SamePadding total padding split by asymmetryMode (0 BOTTOM_RIGHT_HEAVY, 1 TOP_LEFT_HEAVY). */
static bool same_split(int64_t total, int64_t mode, int64_t *a, int64_t *b)
{
	if (mode != 0 && mode != 1)
		return false;
	if (total < 0)
		total = 0;
	if (mode == 0) {
		*a = total / 2;
		*b = total - *a;
	} else {
		*b = total / 2;
		*a = total - *b;
	}
	return true;
}

/* ================================================================ activations */

static const struct {
	uint32_t field;
	const char *name;
	enum al_unop op;
} act_table[] = {
	{5, "linear", AL_UN_LINEAR}, {10, "ReLU", AL_UN_RELU}, {15, "leakyReLU", AL_UN_LEAKY_RELU},
	{20, "thresholdedReLU", AL_UN_COUNT}, {25, "PReLU", AL_UN_COUNT}, {30, "tanh", AL_UN_TANH},
	{31, "scaledTanh", AL_UN_SCALED_TANH}, {40, "sigmoid", AL_UN_SIGMOID},
	{41, "sigmoidHard", AL_UN_SIGMOID_HARD}, {50, "ELU", AL_UN_ELU}, {60, "softsign", AL_UN_SOFTSIGN},
	{70, "softplus", AL_UN_SOFTPLUS}, {71, "parametricSoftplus", AL_UN_COUNT},
};

/* The member of ActivationParams' oneof (the last one present), its params. */
static uint32_t act_member(al_span act, al_span *params)
{
	struct pb_iter it;
	struct pb_field f;
	uint32_t m = 0;
	pb_iter_init(&it, act);
	while (pb_next(&it, &f))
		if (f.wire == PB_LEN) {
			m = f.num;
			*params = f.data;
		}
	return it.err ? 0 : m;
}

bool nn_activation_op(al_span act, struct al_rnn_acts *op, const char **name)
{
	al_span p = {0};
	uint32_t m = act_member(act, &p);
	*name = "none";
	for (size_t i = 0; i < sizeof act_table / sizeof act_table[0]; i++) {
		if (act_table[i].field != m)
			continue;
		*name = act_table[i].name;
		if (act_table[i].op == AL_UN_COUNT)
			return false;
		op->op = act_table[i].op;
		op->a = nn_pf(p, 1, 0.0f);
		op->b = nn_pf(p, 2, 0.0f);
		return true;
	}
	return false;
}

/* ActivationParams at the layer: per-channel PReLU / parametricSoftplus (alpha,
 * beta of length C or 1 along axis -3), thresholdedReLU (x >= alpha ? x : 0), or
 * a kernels.h unary op. */
enum al_status nn_l_activation(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	struct al_rnn_acts op;
	const char *name;
	if (nn_activation_op(l->p, &op, &name))
		return unary_out(l, op.op, op.a, op.b);
	al_span p = {0};
	uint32_t m = act_member(l->p, &p);
	const struct al_tensor *x = l->in[0];
	if (m == 20) {
		float a = nn_pf(p, 1, 0.0f);
		struct al_tensor *y = nn_alloc(l, x->rank, x->dims);
		if (!y)
			return AL_E_NOMEM;
		for (size_t i = 0; i < x->n; i++)
			y->f[i] = x->f[i] >= a ? x->f[i] : 0.0f;
		l->out[0] = y;
		return AL_OK;
	}
	if (m != 25 && m != 71)
		return nn_unsupported(l, "activation %s (field %u)", name, m);
	/* per channel: alpha (and beta) of length 1 or C */
	size_t na = nn_weight_len(nn_psub(p, 1)), nb = m == 71 ? nn_weight_len(nn_psub(p, 2)) : 1;
	int64_t c = x->rank >= 3 ? x->dims[x->rank - 3] : 1;
	if (na != 1 && (x->rank < 3 || na != (size_t)c))
		return nn_fail(l, AL_E_FORMAT, "%s: alpha has %zu values for %lld channels", name, na,
			       (long long)c);
	if (nb != 1 && (x->rank < 3 || nb != (size_t)c))
		return nn_fail(l, AL_E_FORMAT, "%s: beta has %zu values for %lld channels", name, nb,
			       (long long)c);
	int64_t da = (int64_t)na, db = (int64_t)nb;
	struct al_tensor *alpha = NULL, *beta = NULL;
	if ((st = nn_weight(l, p, 1, "alpha", 1, &da, true, &alpha)) != AL_OK)
		return st;
	if (m == 71 && (st = nn_weight(l, p, 2, "beta", 1, &db, true, &beta)) != AL_OK) {
		ali_tensor_unref(alpha);
		return st;
	}
	struct al_tensor *y = nn_alloc(l, x->rank, x->dims);
	if (y) {
		int64_t inner = x->rank >= 3 ? x->dims[x->rank - 2] * x->dims[x->rank - 1] : (int64_t)x->n;
		int64_t cc = x->rank >= 3 ? c : 1;
		int64_t outer = cc * inner != 0 ? (int64_t)x->n / (cc * inner) : 0;
		for (int64_t o = 0; o < outer; o++)
			for (int64_t ch = 0; ch < cc; ch++) {
				float a = alpha->f[na == 1 ? 0 : ch];
				float b = m == 71 ? beta->f[nb == 1 ? 0 : ch] : 0.0f;
				size_t off = (size_t)((o * cc + ch) * inner);
				if (m == 25)
					ali_unary(AL_UN_LEAKY_RELU, a, 0.0f, x->f + off, y->f + off, (size_t)inner);
				else
					ali_unary(AL_UN_SOFTPLUS_PARAM, a, b, x->f + off, y->f + off, (size_t)inner);
			}
	}
	ali_tensor_unref(alpha);
	ali_tensor_unref(beta);
	if (!y)
		return AL_E_NOMEM;
	l->out[0] = y;
	return AL_OK;
}

/* ================================================================ convolution */

/* ConvolutionLayerParams (al_nn_convolution), weights = 90, bias = 91; or the weight blob as input 1. */
enum al_status nn_l_conv(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 2, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	struct nn_chw g;
	if ((st = nn_get_chw(l, x, &g)) != AL_OK)
		return st;
	al_span p = l->p;
	struct al_nn_convolution cv;
	ali_nn_convolution(l->n, &cv);
	bool deconv = al_pb_true(cv.is_deconvolution), has_bias = al_pb_true(cv.has_bias);
	uint64_t cout = al_pb_or(cv.output_channels, 0), kc = al_pb_or(cv.kernel_channels, 0), groups = al_pb_or(cv.n_groups, 0);
	if (groups == 0)
		groups = 1;
	int64_t k[2], s[2], d[2], pad[4] = {0};
	if (!ali_nn_pair(&cv.kernel_size, 3, k) || !ali_nn_pair(&cv.stride, 1, s) || !ali_nn_pair(&cv.dilation_factor, 1, d))
		return nn_fail(l, AL_E_FORMAT, "kernelSize, stride and dilationFactor take [H, W]");
	const struct al_tensor *wblob = l->n_in == 2 ? l->in[1] : NULL;
	if (wblob) {
		if (deconv)
			return nn_fail(l, AL_E_FORMAT, "a deconvolution cannot take its weights as an input");
		if (wblob->rank != 4)
			return nn_fail(l, AL_E_FORMAT, "the weight input must be [Cout, Cin/groups, kH, kW]");
		cout = (uint64_t)wblob->dims[0];
		k[0] = wblob->dims[2];
		k[1] = wblob->dims[3];
	}
	if (deconv)
		d[0] = d[1] = 1; /* ignored for deconvolution */
	for (int a = 0; a < 2; a++)
		if (!nn_in_range(k[a], 1, NN_BIG) || !nn_in_range(s[a], 1, NN_BIG) || !nn_in_range(d[a], 1, NN_BIG))
			return nn_fail(l, AL_E_FORMAT, "kernel %lldx%lld, stride %lldx%lld, dilation "
				       "%lldx%lld: each must be in 1..2^32", (long long)k[0], (long long)k[1],
				       (long long)s[0], (long long)s[1], (long long)d[0], (long long)d[1]);
	if (cout < 1 || cout > (uint64_t)NN_BIG || groups > (uint64_t)NN_BIG)
		return nn_fail(l, AL_E_FORMAT, "outputChannels %llu, nGroups %llu",
			       (unsigned long long)cout, (unsigned long long)groups);
	int64_t C = g.c, G = (int64_t)groups, Co = (int64_t)cout;
	if (C % G || Co % G)
		return nn_fail(l, AL_E_FORMAT, "%lld input and %lld output channels do not divide into %lld "
			       "groups", (long long)C, (long long)Co, (long long)G);
	if (kc && (int64_t)kc != (deconv ? C : C / G))
		return nn_fail(l, AL_E_FORMAT, "kernelChannels %llu does not match %lld input channels in "
			       "%lld groups", (unsigned long long)kc, (long long)C, (long long)G);
	bool same = cv.same.present;
	int64_t mode = same ? nn_pi(cv.same.v, AL_NN_F_SAME_PADDING_ASYMMETRY_MODE, 0) : 0;
	if (cv.valid.present && !nn_border(nn_psub(cv.valid.v, AL_NN_F_VALID_PADDING_AMOUNTS), pad))
		return nn_fail(l, AL_E_FORMAT, "bad paddingAmounts");
	if (same && mode != 0 && mode != 1)
		return nn_unsupported(l, "SamePadding asymmetryMode %lld", (long long)mode);
	int64_t in[2] = {g.h, g.w}, out[2], extra[2] = {0, 0};
	int64_t os[NN_MAXV];
	long nos = deconv ? cv.output_shape.n : 0;
	for (long i = 0; i < nos && i < 2; i++) os[i] = al_pb_s64(cv.output_shape.v[i]);
	if (nos != 0 && nos != 2)
		return nn_fail(l, AL_E_FORMAT, "outputShape takes [H_out, W_out]");
	for (int a = 0; a < 2; a++) {
		if ((k[a] - 1) > NN_BIG / d[a] || (in[a] > 1 && s[a] > NN_BIG / (in[a] - 1)))
			return nn_fail(l, AL_E_FORMAT, "kernel %lld dilated by %lld (stride %lld) is too large",
				       (long long)k[a], (long long)d[a], (long long)s[a]);
		int64_t keff = (k[a] - 1) * d[a] + 1, *pa = &pad[2 * a], *pz = &pad[2 * a + 1];
		if (!deconv) {
			if (same) {
				out[a] = (in[a] + s[a] - 1) / s[a];
				same_split((out[a] - 1) * s[a] + keff - in[a], mode, pa, pz);
			} else {
				int64_t span = in[a] + *pa + *pz - keff;
				if (span < 0)
					return nn_fail(l, AL_E_FORMAT, "a %lld kernel (dilated) is larger than the "
						       "padded input %lld", (long long)keff,
						       (long long)(in[a] + *pa + *pz));
				out[a] = span / s[a] + 1;
			}
			continue;
		}
		/* deconvolution: full = (in-1)*s + k, cropped by the padding */
		int64_t full = (in[a] - 1) * s[a] + keff;
		if (nos == 2)
			out[a] = os[a];
		else
			out[a] = same ? in[a] * s[a] : full - *pa - *pz;
		if (!nn_in_range(out[a], 1, NN_BIG))
			return nn_fail(l, AL_E_FORMAT, "deconvolution output size %lld", (long long)out[a]);
		if (same)
			same_split(full - out[a], mode, pa, pz);
		*pz = full - *pa - out[a];
		if (*pz < 0) { /* output padding: extra rows past the full result */
			extra[a] = -*pz;
			*pz = 0;
		}
		if (*pa > full)
			return nn_fail(l, AL_E_FORMAT, "padding %lld is larger than the output %lld",
				       (long long)*pa, (long long)full);
	}
	int64_t wd[4];
	if (deconv) {
		wd[0] = C, wd[1] = Co / G;
	} else {
		wd[0] = Co, wd[1] = C / G;
	}
	wd[2] = k[0], wd[3] = k[1];
	struct al_tensor *w = NULL, *b = NULL;
	if (wblob) {
		if (wblob->dims[1] != wd[1])
			return nn_fail(l, AL_E_FORMAT, "the weight input has %lld input channels; %lld per group",
				       (long long)wblob->dims[1], (long long)wd[1]);
		w = al_tensor_ref((struct al_tensor *)wblob);
	} else if ((st = nn_weight(l, p, 90, "weights", 4, wd, true, &w)) != AL_OK) {
		return st;
	}
	if (has_bias && (st = nn_weight(l, p, 91, "bias", 1, &Co, true, &b)) != AL_OK) {
		ali_tensor_unref(w);
		return st;
	}
	int64_t od[AL_TENSOR_MAX_RANK];
	memcpy(od, x->dims, sizeof od);
	od[x->rank - 3] = Co;
	od[x->rank - 2] = out[0];
	od[x->rank - 1] = out[1];
	struct al_tensor *y = nn_alloc(l, x->rank, od);
	if (y && g.n > 0) {
		struct al_conv2d c = {
			.n = g.n, .cin = C, .h = g.h, .w = g.w, .cout = Co, .kh = k[0], .kw = k[1],
			.groups = G, .sh = s[0], .sw = s[1], .dh = d[0], .dw = d[1],
			.pt = pad[0], .pb = pad[1], .pl = pad[2], .pr = pad[3], .oh = out[0], .ow = out[1],
		};
		bool ok = deconv ? ali_conv2d_transpose(&c, x->f, w->f, b ? b->f : NULL, y->f)
				 : ali_conv2d(&c, x->f, w->f, b ? b->f : NULL, y->f);
		(void)extra;
		if (!ok) {
			ali_tensor_unref(y);
			y = NULL;
			nn_fail(l, AL_E_NOMEM, "out of memory (convolution scratch)");
		}
	}
	ali_tensor_unref(w);
	ali_tensor_unref(b);
	if (!y)
		return AL_E_NOMEM;
	l->out[0] = y;
	return AL_OK;
}

/* ================================================================ pooling */

/* PoolingLayerParams (al_nn_pooling): type MAX, AVERAGE or L2. */
enum al_status nn_l_pool(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	struct nn_chw g;
	if ((st = nn_get_chw(l, x, &g)) != AL_OK)
		return st;
	struct al_nn_pooling pl;
	ali_nn_pooling(l->n, &pl);
	int64_t type = al_pb_i64(pl.type, 0);
	if (type < 0 || type > 2)
		return nn_unsupported(l, "pooling type %lld", (long long)type);
	int64_t k[2], s[2], pad[4] = {0}, in[2] = {g.h, g.w}, out[2];
	if (!ali_nn_pair(&pl.kernel_size, 3, k) || !ali_nn_pair(&pl.stride, 1, s))
		return nn_fail(l, AL_E_FORMAT, "kernelSize and stride take [H, W]");
	bool global = al_pb_true(pl.global_pooling);
	if (global) {
		k[0] = g.h, k[1] = g.w, s[0] = s[1] = 1;
		if (g.h < 1 || g.w < 1)
			return nn_fail(l, AL_E_FORMAT, "global pooling of an empty input");
	}
	for (int a = 0; a < 2; a++)
		if (!nn_in_range(k[a], 1, NN_BIG) || !nn_in_range(s[a], 1, NN_BIG))
			return nn_fail(l, AL_E_FORMAT, "kernel %lldx%lld, stride %lldx%lld: each must be in "
				       "1..2^32", (long long)k[0], (long long)k[1], (long long)s[0],
				       (long long)s[1]);
	enum { VALID, SAME, LAST } kind = VALID;
	int64_t mode = 0;
	if (!global) {
		if (pl.same.present) {
			kind = SAME;
			mode = nn_pi(pl.same.v, AL_NN_F_SAME_PADDING_ASYMMETRY_MODE, 0);
			if (mode != 0 && mode != 1)
				return nn_unsupported(l, "SamePadding asymmetryMode %lld", (long long)mode);
		} else if (pl.include_last_pixel.present) {
			kind = LAST;
			int64_t pp[2];
			if (!nn_pair(pl.include_last_pixel.v, AL_NN_F_LAST_PIXEL_PADDING, 0, pp) || !nn_in_range(pp[0], 0, NN_BIG) || !nn_in_range(pp[1], 0, NN_BIG))
				return nn_fail(l, AL_E_FORMAT, "bad includeLastPixel paddingAmounts");
			pad[0] = pad[1] = pp[0];
			pad[2] = pad[3] = pp[1];
		} else if (pl.valid.present && !nn_border(nn_psub(pl.valid.v, AL_NN_F_VALID_PADDING_AMOUNTS), pad)) {
			return nn_fail(l, AL_E_FORMAT, "bad paddingAmounts");
		}
	}
	for (int a = 0; a < 2; a++) {
		int64_t *pa = &pad[2 * a], *pz = &pad[2 * a + 1];
		if (kind == SAME) {
			out[a] = (in[a] + s[a] - 1) / s[a];
			same_split((out[a] - 1) * s[a] + k[a] - in[a], mode, pa, pz);
			continue;
		}
		int64_t span = in[a] + *pa + *pz - k[a];
		if (span < 0)
			return nn_fail(l, AL_E_FORMAT, "a %lld kernel is larger than the padded input %lld",
				       (long long)k[a], (long long)(in[a] + *pa + *pz));
		if (kind == VALID) {
			out[a] = span / s[a] + 1;
		} else { /* ceil, then drop a window that starts in the end padding */
			out[a] = (span + s[a] - 1) / s[a] + 1;
			if (*pa > 0 && (out[a] - 1) * s[a] >= in[a] + *pa)
				out[a]--;
		}
	}
	int64_t od[AL_TENSOR_MAX_RANK];
	memcpy(od, x->dims, sizeof od);
	od[x->rank - 2] = out[0];
	od[x->rank - 1] = out[1];
	struct al_tensor *y = nn_alloc(l, x->rank, od);
	if (!y)
		return AL_E_NOMEM;
	struct al_pool2d pp = {
		.n = g.n, .c = g.c, .h = g.h, .w = g.w, .kh = k[0], .kw = k[1], .sh = s[0], .sw = s[1],
		.pt = pad[0], .pb = pad[1], .pl = pad[2], .pr = pad[3], .oh = out[0], .ow = out[1],
		.exclude_pad = al_pb_true(pl.avg_pool_exclude_padding),
	};
	if (y->n) {
		if (type == 0)
			ali_maxpool2d(&pp, x->f, y->f);
		else if (type == 1)
			ali_avgpool2d(&pp, x->f, y->f);
		else
			ali_l2pool2d(&pp, x->f, y->f);
	}
	l->out[0] = y;
	return AL_OK;
}

/* GlobalPooling3DLayerParams type = 1 (MAX, AVERAGE): [B, C, D, H, W] -> [B, C, 1, 1, 1]. */
enum al_status nn_l_global_pool3d(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st || (st = nn_need_rank(l, l->in[0], 5, 5)))
		return st;
	int64_t type = nn_pi(l->p, 1, 0);
	if (type != 0 && type != 1)
		return nn_unsupported(l, "pooling type %lld", (long long)type);
	const struct al_tensor *x = l->in[0];
	if (nn_prod(x->dims, 2, 5) == 0)
		return nn_fail(l, AL_E_FORMAT, "global pooling of an empty input");
	int64_t od[5] = {x->dims[0], x->dims[1], 1, 1, 1};
	struct al_tensor *y = nn_alloc(l, 5, od);
	if (!y)
		return AL_E_NOMEM;
	ali_reduce(type == 0 ? AL_RED_MAX : AL_RED_MEAN, x->f, 5, x->dims, 0x1cu, y->f);
	l->out[0] = y;
	return AL_OK;
}

/* ================================================================ dense */

/* InnerProductLayerParams (al_nn_inner_product), weights = 20 [Cout, Cin], bias = 21.
 * Input [Cin], [x1,Cin], [x1,x2,Cin], [x1,Cin...(3 axes)], [x1,x2,Cin...(3 axes)]. */
enum al_status nn_l_inner_product(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	if ((st = nn_need_rank(l, x, 1, 5)) != AL_OK)
		return st;
	struct al_nn_inner_product ip;
	ali_nn_inner_product(l->n, &ip);
	if (al_pb_true(ip.int8_dynamic_quantize))
		return nn_unsupported(l, "int8DynamicQuantize");
	uint64_t cin = al_pb_or(ip.input_channels, 0), cout = al_pb_or(ip.output_channels, 0);
	int r = x->rank;
	int feat = r <= 3 ? r - 1 : 2; /* first axis of the features */
	if (r == 4)
		feat = 1;
	int64_t m = nn_prod(x->dims, 0, feat), k = nn_prod(x->dims, feat, r);
	if (cin && (uint64_t)k != cin)
		return nn_fail(l, AL_E_FORMAT, "the input has %lld features; inputChannels is %llu",
			       (long long)k, (unsigned long long)cin);
	if (cout < 1 || cout > (uint64_t)NN_BIG)
		return nn_fail(l, AL_E_FORMAT, "outputChannels %llu", (unsigned long long)cout);
	int64_t co = (int64_t)cout, wd[2] = {co, k};
	struct al_tensor *w = NULL, *b = NULL;
	if ((st = nn_weight(l, l->p, 20, "weights", 2, wd, true, &w)) != AL_OK)
		return st;
	if (al_pb_true(ip.has_bias) && (st = nn_weight(l, l->p, 21, "bias", 1, &co, true, &b)) != AL_OK) {
		ali_tensor_unref(w);
		return st;
	}
	int64_t od[5];
	memcpy(od, x->dims, (size_t)feat * sizeof *od);
	od[feat] = co;
	for (int i = feat + 1; i < r; i++)
		od[i] = 1;
	struct al_tensor *y = nn_alloc(l, r, od);
	if (y && m > 0) {
		ali_gemm(false, true, (size_t)m, (size_t)co, (size_t)k, 1.0f, x->f, (size_t)k, w->f,
			(size_t)k, 0.0f, y->f, (size_t)co);
		if (b)
			for (int64_t i = 0; i < m; i++)
				for (int64_t j = 0; j < co; j++)
					y->f[i * co + j] += b->f[j];
	}
	ali_tensor_unref(w);
	ali_tensor_unref(b);
	if (!y)
		return AL_E_NOMEM;
	l->out[0] = y;
	return AL_OK;
}

/* Rows `idx` (values in [0, vocab)) of a table stored as W[emb, vocab] (column
 * idx), plus bias: y [n, emb]. */
static enum al_status embed(struct nn_layer *l, const float *idx, size_t n, const struct al_tensor *w,
			    const struct al_tensor *b, int64_t vocab, int64_t emb, float *y)
{
	for (size_t i = 0; i < n; i++) {
		int64_t v;
		if (!nn_f2i(idx[i], &v) || v < 0 || v >= vocab)
			return nn_fail(l, AL_E_FORMAT, "index %g is outside the vocabulary [0, %lld)",
				       (double)idx[i], (long long)vocab);
		for (int64_t e = 0; e < emb; e++)
			y[(int64_t)i * emb + e] = w->f[e * vocab + v] + (b ? b->f[e] : 0.0f);
	}
	return AL_OK;
}

/* EmbeddingLayerParams / EmbeddingNDLayerParams: the table's sizes, weights and
 * bias fields; the output replaces axis `axis` (size 1) with the embedding size. */
static enum al_status embedding_common(struct nn_layer *l, uint32_t f_vocab, uint32_t f_emb,
				       uint32_t f_bias_flag, int axis_from_end, int min_rank)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	if ((st = nn_need_rank(l, x, min_rank, AL_TENSOR_MAX_RANK)) != AL_OK)
		return st;
	uint64_t vocab = nn_pu(l->p, f_vocab, 0), emb = nn_pu(l->p, f_emb, 0);
	if (vocab < 1 || vocab > (uint64_t)NN_BIG || emb < 1 || emb > (uint64_t)NN_BIG)
		return nn_fail(l, AL_E_FORMAT, "table of %llu x %llu", (unsigned long long)vocab,
			       (unsigned long long)emb);
	int ax = x->rank - axis_from_end;
	for (int i = ax; i < x->rank; i++)
		if (x->dims[i] != 1) {
			char b[160];
			return nn_fail(l, AL_E_FORMAT, "input of shape %s: the last %d axes must be 1",
				       nn_dims_str(b, sizeof b, x->rank, x->dims), axis_from_end);
		}
	int64_t V = (int64_t)vocab, E = (int64_t)emb, wd[2] = {E, V};
	struct al_tensor *w = NULL, *b = NULL;
	if ((st = nn_weight(l, l->p, 20, "weights", 2, wd, true, &w)) != AL_OK)
		return st;
	if (nn_pb(l->p, f_bias_flag) && (st = nn_weight(l, l->p, 21, "bias", 1, &E, true, &b)) != AL_OK) {
		ali_tensor_unref(w);
		return st;
	}
	int64_t od[AL_TENSOR_MAX_RANK];
	memcpy(od, x->dims, sizeof od);
	od[ax] = E;
	struct al_tensor *y = nn_alloc(l, x->rank, od);
	if (y && (st = embed(l, x->f, x->n, w, b, V, E, y->f)) != AL_OK) {
		ali_tensor_unref(y);
		y = NULL;
	}
	ali_tensor_unref(w);
	ali_tensor_unref(b);
	if (!y)
		return st ? st : AL_E_NOMEM;
	l->out[0] = y;
	return AL_OK;
}

/* EmbeddingLayerParams inputDim = 1, outputChannels = 2, hasBias = 10, weights = 20
 * [Cout, inputDim], bias = 21: [x1,1,1,1] -> [x1,Cout,1,1] (rank 4 or 5). */
enum al_status nn_l_embedding(struct nn_layer *l)
{
	return embedding_common(l, 1, 2, 10, 3, 3);
}

/* EmbeddingNDLayerParams vocabSize = 1, embeddingSize = 2, hasBias = 3, weights =
 * 20 [E, V], bias = 21: [..., 1] -> [..., E]. */
enum al_status nn_l_embedding_nd(struct nn_layer *l)
{
	return embedding_common(l, 1, 2, 3, 1, 1);
}

/* Matrix product of a [..., M, K] and b [..., K, N] (transposed when ta / tb) with
 * broadcast batch axes; rank-1 a is [1, K], rank-1 b is [K, 1]. */
static enum al_status matmul2(struct nn_layer *l, const struct al_tensor *a, const struct al_tensor *b,
			      bool ta, bool tb)
{
	int64_t da[AL_TENSOR_MAX_RANK], db[AL_TENSOR_MAX_RANK];
	int ra = a->rank, rb = b->rank;
	if (ra < 1 || rb < 1)
		return nn_fail(l, AL_E_FORMAT, "matrix product of a scalar");
	if (ra == 1) {
		da[0] = 1, da[1] = a->dims[0], ra = 2;
		ta = false;
	} else {
		memcpy(da, a->dims, (size_t)ra * sizeof *da);
	}
	if (rb == 1) {
		db[0] = b->dims[0], db[1] = 1, rb = 2;
		tb = false;
	} else {
		memcpy(db, b->dims, (size_t)rb * sizeof *db);
	}
	int64_t M = ta ? da[ra - 1] : da[ra - 2], K = ta ? da[ra - 2] : da[ra - 1];
	int64_t K2 = tb ? db[rb - 1] : db[rb - 2], N = tb ? db[rb - 2] : db[rb - 1];
	if (K != K2)
		return nn_fail(l, AL_E_FORMAT, "inner dimensions %lld and %lld differ", (long long)K,
			       (long long)K2);
	int rbat;
	int64_t bat[AL_TENSOR_MAX_RANK];
	if (!ali_broadcast_shape(ra - 2, da, rb - 2, db, &rbat, bat) || rbat + 2 > AL_TENSOR_MAX_RANK)
		return nn_fail(l, AL_E_FORMAT, "batch axes do not broadcast");
	int64_t od[AL_TENSOR_MAX_RANK];
	memcpy(od, bat, (size_t)rbat * sizeof *od);
	od[rbat] = M, od[rbat + 1] = N;
	struct al_tensor *y = nn_alloc(l, rbat + 2, od);
	if (!y)
		return AL_E_NOMEM;
	int64_t nb = nn_prod(bat, 0, rbat), sa = M * K, sb = K * N;
	int64_t idx[AL_TENSOR_MAX_RANK] = {0};
	for (int64_t i = 0; i < nb; i++) {
		/* offsets of batch index idx in a and b (right-aligned, broadcast) */
		int64_t oa = 0, ob = 0;
		for (int j = 0; j < rbat; j++) {
			int ja = j - (rbat - (ra - 2)), jb = j - (rbat - (rb - 2));
			if (ja >= 0)
				oa = oa * da[ja] + (da[ja] == 1 ? 0 : idx[j]);
			if (jb >= 0)
				ob = ob * db[jb] + (db[jb] == 1 ? 0 : idx[j]);
		}
		if (M > 0 && N > 0)
			ali_gemm(ta, tb, (size_t)M, (size_t)N, (size_t)K, 1.0f, a->f + oa * sa,
				(size_t)(ta ? M : K), b->f + ob * sb, (size_t)(tb ? K : N), 0.0f,
				y->f + i * M * N, (size_t)N);
		for (int j = rbat - 1; j >= 0; j--) {
			if (++idx[j] < bat[j])
				break;
			idx[j] = 0;
		}
	}
	l->out[0] = y;
	return AL_OK;
}

/* BatchedMatMulLayerParams (al_nn_batched_matmul): weights = 8 ([X1, X2] column-major), bias = 9. */
enum al_status nn_l_batched_matmul(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 2, 1, 1);
	if (st)
		return st;
	struct al_nn_batched_matmul bm;
	ali_nn_batched_matmul(l->n, &bm);
	if (l->n_in == 2)
		return matmul2(l, l->in[0], l->in[1], al_pb_true(bm.transpose_a), al_pb_true(bm.transpose_b));
	if (al_pb_true(bm.int8_dynamic_quantize))
		return nn_unsupported(l, "int8DynamicQuantize");
	const struct al_tensor *a = l->in[0];
	if ((st = nn_need_rank(l, a, 1, AL_TENSOR_MAX_RANK)) != AL_OK)
		return st;
	uint64_t x1 = al_pb_or(bm.weight_matrix_first_dimension, 0), x2 = al_pb_or(bm.weight_matrix_second_dimension, 0);
	int64_t K = a->dims[a->rank - 1];
	if ((uint64_t)K != x1 || x2 < 1 || x2 > (uint64_t)NN_BIG)
		return nn_fail(l, AL_E_FORMAT, "weights [%llu, %llu] for an input of %lld features",
			       (unsigned long long)x1, (unsigned long long)x2, (long long)K);
	int64_t N = (int64_t)x2, wd[2] = {N, K}; /* column-major [X1, X2] = row-major [X2, X1] */
	struct al_tensor *w = NULL, *b = NULL;
	if ((st = nn_weight(l, l->p, 8, "weights", 2, wd, true, &w)) != AL_OK)
		return st;
	if (al_pb_true(bm.has_bias) && (st = nn_weight(l, l->p, 9, "bias", 1, &N, true, &b)) != AL_OK) {
		ali_tensor_unref(w);
		return st;
	}
	int64_t od[AL_TENSOR_MAX_RANK];
	memcpy(od, a->dims, sizeof od);
	od[a->rank - 1] = N;
	struct al_tensor *y = nn_alloc(l, a->rank, od);
	int64_t M = K ? (int64_t)a->n / K : 0;
	if (y && M > 0) {
		ali_gemm(false, true, (size_t)M, (size_t)N, (size_t)K, 1.0f, a->f, (size_t)K, w->f, (size_t)K,
			0.0f, y->f, (size_t)N);
		if (b)
			for (int64_t i = 0; i < M; i++)
				for (int64_t j = 0; j < N; j++)
					y->f[i * N + j] += b->f[j];
	}
	ali_tensor_unref(w);
	ali_tensor_unref(b);
	if (!y)
		return AL_E_NOMEM;
	l->out[0] = y;
	return AL_OK;
}

/* ================================================================ normalisation */

/* BatchnormLayerParams (al_nn_batchnorm; epsilon 0 -> 1e-5): gamma, beta, mean, variance = 15..18. */
enum al_status nn_l_batchnorm(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	struct nn_chw g;
	if ((st = nn_get_chw(l, x, &g)) != AL_OK)
		return st;
	struct al_nn_batchnorm bn;
	ali_nn_batchnorm(l->n, &bn);
	uint64_t ch = al_pb_or(bn.channels, 0);
	if (ch != (uint64_t)g.c)
		return nn_fail(l, AL_E_FORMAT, "channels is %llu; the input has %lld",
			       (unsigned long long)ch, (long long)g.c);
	float eps = bn.epsilon.has ? bn.epsilon.v : 0.0f;
	if (eps == 0.0f)
		eps = 1e-5f;
	bool compute = al_pb_true(bn.compute_mean_var), instance = al_pb_true(bn.instance_normalization);
	int64_t C = g.c, inner = g.h * g.w;
	struct al_tensor *w[4] = {NULL, NULL, NULL, NULL};
	static const char *const names[4] = {"gamma", "beta", "mean", "variance"};
	for (int i = 0; i < (compute ? 2 : 4) && st == AL_OK; i++)
		st = nn_weight(l, l->p, 15 + (uint32_t)i, names[i], 1, &C, true, &w[i]);
	struct al_tensor *y = NULL;
	int64_t groups = compute && instance ? g.n * C : C;
	double *sc = st == AL_OK ? ali_calloc((size_t)groups * 2 + 1, sizeof *sc) : NULL;
	if (st == AL_OK && !sc)
		st = nn_fail(l, AL_E_NOMEM, "out of memory");
	if (st == AL_OK && !(y = nn_alloc(l, x->rank, x->dims)))
		st = AL_E_NOMEM;
	if (st == AL_OK) {
		double *bi = sc + groups;
		for (int64_t k = 0; k < groups; k++) {
			int64_t c = k % C;
			double mean, var;
			if (compute) { /* over H, W (and the batch unless instance) */
				double s = 0, s2 = 0;
				int64_t cnt = 0;
				for (int64_t n = instance ? k / C : 0; n < (instance ? k / C + 1 : g.n); n++)
					for (int64_t i = 0; i < inner; i++) {
						double v = x->f[(n * C + c) * inner + i];
						s += v;
						s2 += v * v;
						cnt++;
					}
				mean = cnt ? s / (double)cnt : 0;
				var = cnt ? s2 / (double)cnt - mean * mean : 0;
				if (var < 0)
					var = 0;
			} else {
				mean = w[2]->f[c];
				var = w[3]->f[c];
			}
			sc[k] = (double)w[0]->f[c] / sqrt(var + (double)eps);
			bi[k] = (double)w[1]->f[c] - mean * sc[k];
		}
		for (int64_t n = 0; n < g.n; n++)
			for (int64_t c = 0; c < C; c++) {
				int64_t k = compute && instance ? n * C + c : c;
				float a = (float)sc[k], b = (float)bi[k];
				const float *xp = x->f + (n * C + c) * inner;
				float *yp = y->f + (n * C + c) * inner;
				for (int64_t i = 0; i < inner; i++)
					yp[i] = xp[i] * a + b;
			}
	}
	ali_free(sc);
	for (int i = 0; i < 4; i++)
		ali_tensor_unref(w[i]);
	if (st != AL_OK) {
		ali_tensor_unref(y);
		return st;
	}
	l->out[0] = y;
	return AL_OK;
}

/* MeanVarianceNormalizeLayerParams acrossChannels = 1, normalizeVariance = 2,
 * epsilon = 3 (0 -> 1e-6): y = (x - mean) / sqrt(var + eps) over [C,H,W] or [H,W]. */
enum al_status nn_l_mvn(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	struct nn_chw g;
	if ((st = nn_get_chw(l, x, &g)) != AL_OK)
		return st;
	float eps = nn_pf(l->p, 3, 0.0f);
	if (eps == 0.0f)
		eps = 1e-6f;
	bool across = nn_pb(l->p, 1);
	int64_t inner = across ? g.c * g.h * g.w : g.h * g.w;
	int64_t outer = inner ? (int64_t)x->n / inner : 0;
	struct al_tensor *y = nn_alloc(l, x->rank, x->dims);
	if (!y)
		return AL_E_NOMEM;
	if (inner > 0)
		ali_layer_norm(x->f, outer, inner, NULL, NULL, eps, nn_pb(l->p, 2), y->f);
	l->out[0] = y;
	return AL_OK;
}

/* L2NormalizeLayerParams epsilon = 1 (0 -> 1e-6): y = x / sqrt(sum x^2 + eps) over
 * [C,H,W] of each batch. */
enum al_status nn_l_l2normalize(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	struct nn_chw g;
	if ((st = nn_get_chw(l, x, &g)) != AL_OK)
		return st;
	float eps = nn_pf(l->p, 1, 0.0f);
	if (eps == 0.0f)
		eps = 1e-6f;
	struct al_tensor *y = nn_alloc(l, x->rank, x->dims);
	if (!y)
		return AL_E_NOMEM;
	ali_l2_normalize(x->f, g.n, g.c * g.h * g.w, (double)eps, y->f);
	l->out[0] = y;
	return AL_OK;
}

/* Softmax along axis a of x into a new tensor. */
static enum al_status softmax_axis(struct nn_layer *l, const struct al_tensor *x, int a)
{
	struct al_tensor *y = nn_alloc(l, x->rank, x->dims);
	if (!y)
		return AL_E_NOMEM;
	int64_t d = x->dims[a], inner = nn_prod(x->dims, a + 1, x->rank);
	int64_t outer = nn_prod(x->dims, 0, a);
	if (x->n)
		ali_softmax(x->f, outer, d, inner, y->f);
	l->out[0] = y;
	return AL_OK;
}

/* SoftmaxLayerParams {}: along axis -3 (rank >= 3). */
enum al_status nn_l_softmax(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st || (st = nn_need_rank(l, l->in[0], 3, AL_TENSOR_MAX_RANK)))
		return st;
	return softmax_axis(l, l->in[0], l->in[0]->rank - 3);
}

/* SoftmaxNDLayerParams axis = 1. */
enum al_status nn_l_softmax_nd(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	int a = nn_axis(nn_pi(l->p, 1, 0), l->in[0]->rank);
	if (a < 0)
		return nn_fail(l, AL_E_FORMAT, "axis %lld of a rank-%d input", (long long)nn_pi(l->p, 1, 0),
			       l->in[0]->rank);
	return softmax_axis(l, l->in[0], a);
}

/* LRNLayerParams alpha = 1, beta = 2, localSize = 3, k = 4 (0 -> 1). */
enum al_status nn_l_lrn(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	struct nn_chw g;
	if ((st = nn_get_chw(l, x, &g)) != AL_OK)
		return st;
	uint64_t size = nn_pu(l->p, 3, 0);
	if (size < 1 || size > (uint64_t)NN_BIG)
		return nn_fail(l, AL_E_FORMAT, "localSize %llu", (unsigned long long)size);
	float k = nn_pf(l->p, 4, 0.0f);
	if (k == 0.0f)
		k = 1.0f;
	struct al_tensor *y = nn_alloc(l, x->rank, x->dims);
	if (!y)
		return AL_E_NOMEM;
	if (x->n)
		ali_lrn(x->f, g.n, g.c, g.h * g.w, (int64_t)size, nn_pf(l->p, 1, 0.0f), nn_pf(l->p, 2, 0.0f),
		       k, y->f);
	l->out[0] = y;
	return AL_OK;
}

/* LayerNormalizationLayerParams normalizedShape = 1, eps = 2, gamma = 3, beta = 4. */
enum al_status nn_l_layer_norm(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int64_t ns[NN_MAXV];
	long nn = nn_pints(l->p, 1, ns);
	if (nn < 1 || nn > x->rank)
		return nn_fail(l, AL_E_FORMAT, "normalizedShape of %ld axes for a rank-%d input", nn, x->rank);
	for (long i = 0; i < nn; i++)
		if (ns[i] != x->dims[x->rank - nn + i])
			return nn_fail(l, AL_E_FORMAT, "normalizedShape does not match the input's last axes");
	int64_t inner = nn_prod(x->dims, x->rank - (int)nn, x->rank);
	int64_t outer = nn_prod(x->dims, 0, x->rank - (int)nn);
	struct al_tensor *gm = NULL, *bt = NULL;
	if ((st = nn_weight(l, l->p, 3, "gamma", (int)nn, ns, false, &gm)) != AL_OK)
		return st;
	if ((st = nn_weight(l, l->p, 4, "beta", (int)nn, ns, false, &bt)) != AL_OK) {
		ali_tensor_unref(gm);
		return st;
	}
	struct al_tensor *y = nn_alloc(l, x->rank, x->dims);
	if (y && inner > 0)
		ali_layer_norm(x->f, outer, inner, gm ? gm->f : NULL, bt ? bt->f : NULL,
			      nn_pf(l->p, 2, 0.0f), true, y->f);
	ali_tensor_unref(gm);
	ali_tensor_unref(bt);
	if (!y)
		return AL_E_NOMEM;
	l->out[0] = y;
	return AL_OK;
}

/* ================================================================ elementwise */

/* Inputs folded with op under numpy broadcasting; one input: op with `alpha`. */
static enum al_status fold(struct nn_layer *l, enum al_binop op, bool single_alpha, float alpha)
{
	enum al_status st = nn_arity(l, 1, 0, 1, 1);
	if (st)
		return st;
	if (l->n_in == 1) {
		if (!single_alpha) {
			l->out[0] = nn_reshaped(l, l->in[0], l->in[0]->rank, l->in[0]->dims);
			return l->out[0] ? AL_OK : AL_E_NOMEM;
		}
		struct al_tensor s;
		scalar_view(&s, &alpha);
		return produced(l, binary_new(l, op, l->in[0], &s));
	}
	struct al_tensor *acc = binary_new(l, op, l->in[0], l->in[1]);
	for (uint32_t i = 2; acc && i < l->n_in; i++) {
		const struct al_tensor *b = l->in[i];
		int ry;
		int64_t dy[AL_TENSOR_MAX_RANK];
		if (ali_broadcast_shape(acc->rank, acc->dims, b->rank, b->dims, &ry, dy) && ry == acc->rank &&
		    memcmp(dy, acc->dims, (size_t)ry * sizeof *dy) == 0) {
			ali_binary(op, acc->f, acc->rank, acc->dims, b->f, b->rank, b->dims, acc->f, ry, dy);
			continue;
		}
		struct al_tensor *n = binary_new(l, op, acc, b);
		ali_tensor_unref(acc);
		acc = n;
	}
	return produced(l, acc);
}

/* AddLayerParams alpha = 1 (added when there is one input). */
enum al_status nn_l_add(struct nn_layer *l)
{
	return fold(l, AL_BIN_ADD, true, nn_pf(l->p, 1, 0.0f));
}

/* MultiplyLayerParams alpha = 1 (the factor when there is one input). */
enum al_status nn_l_multiply(struct nn_layer *l)
{
	return fold(l, AL_BIN_MUL, true, nn_pf(l->p, 1, 0.0f));
}

enum al_status nn_l_max(struct nn_layer *l)
{
	return fold(l, AL_BIN_MAX, false, 0.0f);
}

enum al_status nn_l_min(struct nn_layer *l)
{
	return fold(l, AL_BIN_MIN, false, 0.0f);
}

enum al_status nn_l_average(struct nn_layer *l)
{
	enum al_status st = fold(l, AL_BIN_ADD, false, 0.0f);
	if (st == AL_OK && l->n_in > 1) {
		struct al_tensor *y = l->out[0];
		ali_unary(AL_UN_LINEAR, 1.0f / (float)l->n_in, 0.0f, y->f, y->f, y->n);
	}
	return st;
}

/* A scale / bias parameter of shape [1], [C], [1,H,W] or [C,H,W] (field fs) with
 * values in field fw, as a rank-3 tensor broadcasting against x's last three axes. */
static enum al_status chw_param(struct nn_layer *l, const struct al_tensor *x, uint32_t fs,
				uint32_t fw, const char *what, struct al_tensor **out)
{
	int64_t sh[NN_MAXV], d3[3] = {1, 1, 1};
	long n = nn_pints(l->p, fs, sh);
	if (n == 0) { /* no shape: [1] */
		n = 1;
		sh[0] = 1;
	}
	if (n == 1) {
		d3[0] = sh[0];
	} else if (n == 3) {
		memcpy(d3, sh, sizeof d3);
	} else {
		return nn_fail(l, AL_E_FORMAT, "%s shape must be [1], [C], [1,H,W] or [C,H,W]", what);
	}
	for (int i = 0; i < 3; i++) {
		int64_t xd = x->dims[x->rank - 3 + i];
		if (d3[i] != 1 && d3[i] != xd) {
			char b[160];
			return nn_fail(l, AL_E_FORMAT, "%s of shape [%lld,%lld,%lld] does not fit an input of "
				       "shape %s", what, (long long)d3[0], (long long)d3[1], (long long)d3[2],
				       nn_dims_str(b, sizeof b, x->rank, x->dims));
		}
	}
	return nn_weight(l, l->p, fw, what, 3, d3, true, out);
}

/* ScaleLayerParams shapeScale = 1, scale = 2, hasBias = 3, shapeBias = 4, bias = 5. */
enum al_status nn_l_scale(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st || (st = nn_need_rank(l, l->in[0], 3, AL_TENSOR_MAX_RANK)))
		return st;
	const struct al_tensor *x = l->in[0];
	struct al_tensor *s = NULL, *b = NULL;
	if ((st = chw_param(l, x, 1, 2, "scale", &s)) != AL_OK)
		return st;
	if (nn_pb(l->p, 3) && (st = chw_param(l, x, 4, 5, "bias", &b)) != AL_OK) {
		ali_tensor_unref(s);
		return st;
	}
	struct al_tensor *y = binary_new(l, AL_BIN_MUL, x, s);
	if (y && b)
		ali_binary(AL_BIN_ADD, y->f, y->rank, y->dims, b->f, b->rank, b->dims, y->f, y->rank, y->dims);
	ali_tensor_unref(s);
	ali_tensor_unref(b);
	if (!y)
		return AL_E_NOMEM;
	l->out[0] = y;
	return AL_OK;
}

/* BiasLayerParams shape = 1, bias = 2. */
enum al_status nn_l_bias(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st || (st = nn_need_rank(l, l->in[0], 3, AL_TENSOR_MAX_RANK)))
		return st;
	struct al_tensor *b = NULL;
	if ((st = chw_param(l, l->in[0], 1, 2, "bias", &b)) != AL_OK)
		return st;
	enum al_status st2 = produced(l, binary_new(l, AL_BIN_ADD, l->in[0], b));
	ali_tensor_unref(b);
	return st2;
}

/* DotProductLayerParams cosineSimilarity = 1: [..., C, 1, 1] x2 -> [..., 1, 1, 1]. */
enum al_status nn_l_dot(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 2, 2, 1, 1);
	if (st)
		return st;
	const struct al_tensor *a = l->in[0], *b = l->in[1];
	struct nn_chw g;
	if ((st = nn_get_chw(l, a, &g)) != AL_OK)
		return st;
	if (a->rank != b->rank || memcmp(a->dims, b->dims, (size_t)a->rank * sizeof *a->dims) != 0 ||
	    g.h != 1 || g.w != 1)
		return nn_fail(l, AL_E_FORMAT, "the inputs must have the same shape [..., C, 1, 1]");
	int64_t od[AL_TENSOR_MAX_RANK];
	memcpy(od, a->dims, sizeof od);
	od[a->rank - 3] = 1;
	struct al_tensor *y = nn_alloc(l, a->rank, od);
	if (!y)
		return AL_E_NOMEM;
	bool cosine = nn_pb(l->p, 1);
	for (int64_t n = 0; n < g.n; n++) {
		double s = 0, na = 0, nb = 0;
		for (int64_t c = 0; c < g.c; c++) {
			double u = a->f[n * g.c + c], v = b->f[n * g.c + c];
			s += u * v;
			na += u * u;
			nb += v * v;
		}
		y->f[n] = (float)(cosine ? s / (sqrt(na) * sqrt(nb)) : s);
	}
	l->out[0] = y;
	return AL_OK;
}

/* UnaryFunctionLayerParams type = 1 (SQRT, RSQRT, INVERSE, POWER, EXP, LOG, ABS,
 * THRESHOLD), alpha = 2, epsilon = 3 (0 -> 1e-6), shift = 4, scale = 5 (0 -> 1);
 * x <- scale * x + shift first. */
enum al_status nn_l_unary(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	static const enum al_unop ops[8] = {
		AL_UN_SQRT, AL_UN_RSQRT_EPS, AL_UN_INVERSE_EPS, AL_UN_POW,
		AL_UN_EXP, AL_UN_LOG, AL_UN_ABS, AL_UN_THRESHOLD,
	};
	int64_t type = nn_pi(l->p, 1, 0);
	if (type < 0 || type > 7)
		return nn_unsupported(l, "unary function type %lld", (long long)type);
	float alpha = nn_pf(l->p, 2, 0.0f), eps = nn_pf(l->p, 3, 0.0f);
	float shift = nn_pf(l->p, 4, 0.0f), scale = nn_pf(l->p, 5, 0.0f);
	if (eps == 0.0f)
		eps = 1e-6f;
	if (scale == 0.0f)
		scale = 1.0f;
	const struct al_tensor *x = l->in[0];
	struct al_tensor *y = nn_alloc(l, x->rank, x->dims);
	if (!y)
		return AL_E_NOMEM;
	const float *src = x->f;
	if (scale != 1.0f || shift != 0.0f) {
		ali_unary(AL_UN_LINEAR, scale, shift, x->f, y->f, x->n);
		src = y->f;
	}
	float a = type == 1 || type == 2 ? eps : alpha;
	ali_unary(ops[type], a, 0.0f, src, y->f, x->n);
	l->out[0] = y;
	return AL_OK;
}

/* ClipLayerParams minVal = 1, maxVal = 2. */
enum al_status nn_l_clip(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	return unary_out(l, AL_UN_CLIP, nn_pf(l->p, 1, 0.0f), nn_pf(l->p, 2, 0.0f));
}

/* ClampedReLULayerParams alpha = 1, beta = 2: min(beta, x >= 0 ? x : alpha * x). */
enum al_status nn_l_clamped_relu(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st || (st = unary_out(l, AL_UN_LEAKY_RELU, nn_pf(l->p, 1, 0.0f), 0.0f)))
		return st;
	struct al_tensor *y = l->out[0];
	float beta = nn_pf(l->p, 2, 0.0f);
	for (size_t i = 0; i < y->n; i++)
		if (y->f[i] > beta)
			y->f[i] = beta;
	return AL_OK;
}

/* The parameterless ND unary layers, by kind. */
enum al_status nn_l_unary_nd(struct nn_layer *l)
{
	static const struct {
		bool ok;
		enum al_unop op;
	} map[AL_NNK_COUNT] = {
		[AL_NNK_ceil] = {true, AL_UN_CEIL}, [AL_NNK_floor] = {true, AL_UN_FLOOR},
		[AL_NNK_sign] = {true, AL_UN_SIGN}, [AL_NNK_round] = {true, AL_UN_ROUND},
		[AL_NNK_exp2] = {true, AL_UN_EXP2}, [AL_NNK_sin] = {true, AL_UN_SIN},
		[AL_NNK_cos] = {true, AL_UN_COS}, [AL_NNK_tan] = {true, AL_UN_TAN},
		[AL_NNK_asin] = {true, AL_UN_ASIN}, [AL_NNK_acos] = {true, AL_UN_ACOS},
		[AL_NNK_atan] = {true, AL_UN_ATAN}, [AL_NNK_sinh] = {true, AL_UN_SINH},
		[AL_NNK_cosh] = {true, AL_UN_COSH}, [AL_NNK_tanh] = {true, AL_UN_TANH},
		[AL_NNK_asinh] = {true, AL_UN_ASINH}, [AL_NNK_acosh] = {true, AL_UN_ACOSH},
		[AL_NNK_atanh] = {true, AL_UN_ATANH}, [AL_NNK_erf] = {true, AL_UN_ERF},
	};
	_Static_assert(sizeof map / sizeof map[0] == AL_NNK_COUNT, "one row per NN kind");
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	int k = l->n->kind;
	if (k >= 0 && k < AL_NNK_COUNT && map[k].ok)
		return unary_out(l, map[k].op, 0.0f, 0.0f);
	return nn_unsupported(l, "this unary layer");
}

/* GeluLayerParams mode = 1 (EXACT, TANH_APPROXIMATION, SIGMOID_APPROXIMATION). */
enum al_status nn_l_gelu(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	int64_t mode = nn_pi(l->p, 1, 0);
	static const enum al_unop ops[3] = {AL_UN_GELU_ERF, AL_UN_GELU_TANH, AL_UN_GELU_SIGMOID};
	if (mode < 0 || mode > 2)
		return nn_unsupported(l, "GELU mode %lld", (long long)mode);
	return unary_out(l, ops[mode], 0.0f, 0.0f);
}

/* Equal / NotEqual (alpha = 1), LessThan / LessEqual / GreaterThan / GreaterEqual
 * (alpha = 2): 1.0 / 0.0, with the second operand alpha when there is one input. */
enum al_status nn_l_compare(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 2, 1, 1);
	if (st)
		return st;
	enum al_binop op;
	uint32_t fa = 2;
	switch (l->n->kind) {
	case AL_NNK_equal: op = AL_BIN_EQ, fa = 1; break;
	case AL_NNK_notEqual: op = AL_BIN_NE, fa = 1; break;
	case AL_NNK_lessThan: op = AL_BIN_LT; break;
	case AL_NNK_lessEqual: op = AL_BIN_LE; break;
	case AL_NNK_greaterThan: op = AL_BIN_GT; break;
	default: op = AL_BIN_GE; break;
	}
	float alpha = nn_pf(l->p, fa, 0.0f);
	struct al_tensor s;
	scalar_view(&s, &alpha);
	return produced(l, binary_new(l, op, l->in[0], l->n_in == 2 ? l->in[1] : &s));
}

/* LogicalOr / LogicalXor / LogicalAnd: two inputs, non-zero is true. */
enum al_status nn_l_logical(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 2, 2, 1, 1);
	if (st)
		return st;
	int k = l->n->kind;
	enum al_binop op = k == AL_NNK_logicalOr ? AL_BIN_OR
			   : k == AL_NNK_logicalXor ? AL_BIN_XOR : AL_BIN_AND;
	return produced(l, binary_new(l, op, l->in[0], l->in[1]));
}

enum al_status nn_l_logical_not(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	return st ? st : unary_out(l, AL_UN_LOGICAL_NOT, 0.0f, 0.0f);
}

/* The *Broadcastable layers: two inputs, numpy broadcasting. */
enum al_status nn_l_broadcastable(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 2, 2, 1, 1);
	if (st)
		return st;
	enum al_binop op;
	switch (l->n->kind) {
	case AL_NNK_modBroadcastable: op = AL_BIN_MOD; break;
	case AL_NNK_minBroadcastable: op = AL_BIN_MIN; break;
	case AL_NNK_maxBroadcastable: op = AL_BIN_MAX; break;
	case AL_NNK_addBroadcastable: op = AL_BIN_ADD; break;
	case AL_NNK_powBroadcastable: op = AL_BIN_POW; break;
	case AL_NNK_divideBroadcastable: op = AL_BIN_DIV; break;
	case AL_NNK_floorDivBroadcastable: op = AL_BIN_FLOOR_DIV; break;
	case AL_NNK_multiplyBroadcastable: op = AL_BIN_MUL; break;
	default: op = AL_BIN_SUB; break;
	}
	return produced(l, binary_new(l, op, l->in[0], l->in[1]));
}

/* WhereBroadcastable: cond ? a : b, the three broadcast. */
enum al_status nn_l_where(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 3, 3, 1, 1);
	if (st)
		return st;
	const struct al_tensor *c = l->in[0], *a = l->in[1], *b = l->in[2];
	int r1, r2;
	int64_t d1[AL_TENSOR_MAX_RANK], d2[AL_TENSOR_MAX_RANK];
	if (!ali_broadcast_shape(c->rank, c->dims, a->rank, a->dims, &r1, d1) ||
	    !ali_broadcast_shape(r1, d1, b->rank, b->dims, &r2, d2) || r2 > AL_TENSOR_MAX_RANK)
		return nn_fail(l, AL_E_FORMAT, "the three inputs do not broadcast");
	struct al_tensor *y = nn_alloc(l, r2, d2);
	if (!y)
		return AL_E_NOMEM;
	ali_select(c->f, c->rank, c->dims, a->f, a->rank, a->dims, b->f, b->rank, b->dims, y->f, r2, d2);
	l->out[0] = y;
	return AL_OK;
}

/* ================================================================ reductions */

/* Reduce x over the axes in mask with op (keeping them as size 1), then drop them
 * unless keep (all dropped: [1]). LOGSUM here is the legacy sum of log(x + eps). */
static enum al_status reduce_mask(struct nn_layer *l, const struct al_tensor *x, enum al_redop op,
				  uint32_t mask, bool keep, bool legacy_logsum, float eps)
{
	int64_t kd[AL_TENSOR_MAX_RANK], od[AL_TENSOR_MAX_RANK];
	int orank = 0;
	for (int i = 0; i < x->rank; i++) {
		bool red = mask >> i & 1;
		kd[i] = red ? 1 : x->dims[i];
		if (!red || keep)
			od[orank++] = kd[i];
		if (red && x->dims[i] == 0)
			return nn_fail(l, AL_E_FORMAT, "reduction over an empty axis");
	}
	if (orank == 0)
		od[orank++] = 1;
	struct al_tensor *y = nn_alloc(l, orank, od);
	if (!y)
		return AL_E_NOMEM;
	const float *src = x->f;
	float *tmp = NULL;
	if (legacy_logsum) {
		tmp = ali_malloc((x->n ? x->n : 1) * sizeof *tmp);
		if (!tmp) {
			ali_tensor_unref(y);
			return nn_fail(l, AL_E_NOMEM, "out of memory");
		}
		ali_unary(AL_UN_LOG_EPS, eps, 0.0f, x->f, tmp, x->n);
		src = tmp;
	}
	if (x->n)
		ali_reduce(op, src, x->rank, x->dims, mask, y->f);
	ali_free(tmp);
	l->out[0] = y;
	return AL_OK;
}

/* ReduceLayerParams mode = 1 (SUM, AVG, PROD, LOGSUM, SUMSQUARE, L1, L2, MAX, MIN,
 * ARGMAX), epsilon = 2 (0 -> 1e-6), axis = 3 (CHW, HW, C, H, W); same rank out. */
enum al_status nn_l_reduce(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	static const enum al_redop ops[10] = {
		AL_RED_SUM, AL_RED_MEAN, AL_RED_PROD, AL_RED_SUM, AL_RED_SUMSQUARE,
		AL_RED_L1, AL_RED_L2, AL_RED_MAX, AL_RED_MIN, AL_RED_ARGMAX,
	};
	static const int nax[5] = {3, 2, 1, 1, 1}, first[5] = {3, 2, 3, 2, 1};
	int64_t mode = nn_pi(l->p, 1, 0), axis = nn_pi(l->p, 3, 0);
	if (mode < 0 || mode > 9)
		return nn_unsupported(l, "reduce mode %lld", (long long)mode);
	if (axis < 0 || axis > 4)
		return nn_unsupported(l, "reduce axis %lld", (long long)axis);
	if (mode == 9 && axis < 2)
		return nn_unsupported(l, "ARGMAX over more than one axis");
	const struct al_tensor *x = l->in[0];
	if ((st = nn_need_rank(l, x, first[axis], AL_TENSOR_MAX_RANK)) != AL_OK)
		return st;
	uint32_t mask = 0;
	for (int k = 0; k < nax[axis]; k++)
		mask |= 1u << (x->rank - first[axis] + k);
	float eps = nn_pf(l->p, 2, 0.0f);
	if (eps == 0.0f)
		eps = 1e-6f;
	st = reduce_mask(l, x, ops[mode], mask, true, mode == 3, eps);
	if (st == AL_OK && mode == 9)
		l->out[0]->dtype = AL_DT_INT32; /* indices: never rounded to fp16 */
	return st;
}

/* Reduce{L1,L2,Max,Min,Sum,Prod,Mean,LogSum,SumSquare,LogSumExp}: axes = 1,
 * keepDims = 2, reduceAll = 3. */
enum al_status nn_l_reduce_nd(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	enum al_redop op;
	switch (l->n->kind) {
	case AL_NNK_reduceL1: op = AL_RED_L1; break;
	case AL_NNK_reduceL2: op = AL_RED_L2; break;
	case AL_NNK_reduceMax: op = AL_RED_MAX; break;
	case AL_NNK_reduceMin: op = AL_RED_MIN; break;
	case AL_NNK_reduceSum: op = AL_RED_SUM; break;
	case AL_NNK_reduceProd: op = AL_RED_PROD; break;
	case AL_NNK_reduceMean: op = AL_RED_MEAN; break;
	case AL_NNK_reduceLogSum: op = AL_RED_LOGSUM; break;
	case AL_NNK_reduceSumSquare: op = AL_RED_SUMSQUARE; break;
	default: op = AL_RED_LOGSUMEXP; break;
	}
	const struct al_tensor *x = l->in[0];
	int64_t a[NN_MAXV];
	long n = nn_pints(l->p, 1, a);
	uint32_t mask = 0;
	if (n < 0 || n > NN_MAXV)
		return nn_fail(l, AL_E_FORMAT, "bad axes");
	if (nn_pb(l->p, 3) || n == 0) {
		mask = x->rank ? (uint32_t)((1u << x->rank) - 1) : 0;
	} else {
		for (long i = 0; i < n; i++) {
			int ax = nn_axis(a[i], x->rank);
			if (ax < 0)
				return nn_fail(l, AL_E_FORMAT, "axis %lld of a rank-%d input", (long long)a[i],
					       x->rank);
			mask |= 1u << ax;
		}
	}
	return reduce_mask(l, x, op, mask, nn_pb(l->p, 2), false, 0.0f);
}

/* ArgMin (1020) / ArgMax (1025): axis = 1, removeDim = 2 (rank 1 stays rank 1). */
enum al_status nn_l_argminmax(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int a = nn_axis(nn_pi(l->p, 1, 0), x->rank);
	if (a < 0)
		return nn_fail(l, AL_E_FORMAT, "axis %lld of a rank-%d input", (long long)nn_pi(l->p, 1, 0),
			       x->rank);
	enum al_redop op = l->n->kind == AL_NNK_argMin ? AL_RED_ARGMIN : AL_RED_ARGMAX;
	enum al_status st2 = reduce_mask(l, x, op, 1u << a, !nn_pb(l->p, 2), false, 0.0f);
	if (st2 == AL_OK)
		l->out[0]->dtype = AL_DT_INT32; /* indices: never rounded to fp16 */
	return st2;
}

/* CumSumLayerParams axis = 1, excludeFinalSum = 2, reverse = 3; a second input
 * gives the axis. */
enum al_status nn_l_cumsum(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 2, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int64_t av = nn_pi(l->p, 1, 0);
	if (l->n_in == 2 && (l->in[1]->n < 1 || !nn_f2i(l->in[1]->f[0], &av)))
		return nn_fail(l, AL_E_FORMAT, "the axis input holds no axis");
	int a = nn_axis(av, x->rank);
	if (a < 0)
		return nn_fail(l, AL_E_FORMAT, "axis %lld of a rank-%d input", (long long)av, x->rank);
	struct al_tensor *y = nn_alloc(l, x->rank, x->dims);
	if (!y)
		return AL_E_NOMEM;
	if (x->n)
		ali_cumsum(x->f, nn_prod(x->dims, 0, a), x->dims[a], nn_prod(x->dims, a + 1, x->rank),
			  nn_pb(l->p, 2), nn_pb(l->p, 3), y->f);
	l->out[0] = y;
	return AL_OK;
}

/* TopKLayerParams axis = 1, K = 2, useBottomK = 3; a second input gives K. */
enum al_status nn_l_topk(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 2, 2, 2);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int a = nn_axis(nn_pi(l->p, 1, 0), x->rank);
	if (a < 0)
		return nn_fail(l, AL_E_FORMAT, "axis %lld of a rank-%d input", (long long)nn_pi(l->p, 1, 0),
			       x->rank);
	int64_t k = (int64_t)(nn_pu(l->p, 2, 0) & INT64_MAX);
	if (l->n_in == 2 && (l->in[1]->n < 1 || !nn_f2i(l->in[1]->f[0], &k)))
		return nn_fail(l, AL_E_FORMAT, "the K input holds no count");
	if (k < 1 || k > x->dims[a])
		return nn_fail(l, AL_E_FORMAT, "K = %lld for an axis of %lld", (long long)k,
			       (long long)x->dims[a]);
	int64_t od[AL_TENSOR_MAX_RANK];
	memcpy(od, x->dims, sizeof od);
	od[a] = k;
	struct al_tensor *v = nn_alloc(l, x->rank, od), *i = v ? nn_alloc(l, x->rank, od) : NULL;
	if (!i) {
		ali_tensor_unref(v);
		return AL_E_NOMEM;
	}
	ali_topk(x->f, nn_prod(x->dims, 0, a), x->dims[a], nn_prod(x->dims, a + 1, x->rank), k,
		!nn_pb(l->p, 3), v->f, i->f);
	i->dtype = AL_DT_INT32;
	l->out[0] = v;
	l->out[1] = i;
	return AL_OK;
}

/* ArgSortLayerParams axis = 1, descending = 2. */
enum al_status nn_l_argsort(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int a = nn_axis(nn_pi(l->p, 1, 0), x->rank);
	if (a < 0)
		return nn_fail(l, AL_E_FORMAT, "axis %lld of a rank-%d input", (long long)nn_pi(l->p, 1, 0),
			       x->rank);
	struct al_tensor *v = nn_alloc(l, x->rank, x->dims), *i = v ? nn_alloc(l, x->rank, x->dims) : NULL;
	if (!i) {
		ali_tensor_unref(v);
		return AL_E_NOMEM;
	}
	if (x->n)
		ali_topk(x->f, nn_prod(x->dims, 0, a), x->dims[a], nn_prod(x->dims, a + 1, x->rank),
			x->dims[a], nn_pb(l->p, 2), v->f, i->f);
	ali_tensor_unref(v);
	i->dtype = AL_DT_INT32;
	l->out[0] = i;
	return AL_OK;
}

