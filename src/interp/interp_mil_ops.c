/* SPDX-License-Identifier: MIT */
/* interp_mil_ops.c: the ML Program compute ops without windows or state:
 * elementwise (unary, binary with broadcasting, select, cast), reductions,
 * normalisation, linear / matmul, quantize / dequantize and
 * scaled_dot_product_attention.
 *
 * Semantics follow the MIL op definitions (coremltools ops/defs iOS15..iOS18):
 * parameter names, defaults and shapes. Each op checks its inputs' shapes against
 * each other before it allocates, so a hostile model is a diagnostic, never an
 * out-of-bounds access; the maths is in kernels.c. Tensor movement is in
 * interp_mil_data.c, conv / pooling / resampling / recurrent ops in
 * interp_mil_nn.c.
 */
#include "interp_mil.h"

#include <math.h>
#include <string.h>

/* ================================================================ elementwise */

enum al_status mx_unary(struct mx *c, int op)
{
	struct al_tensor *x = mx_req(c, "x");
	if (!x)
		return c->st;
	int dt = op == AL_UN_LOGICAL_NOT ? AL_DT_BOOL : x->dtype;
	struct al_tensor *y = mx_alloc_raw(c, 0, dt, x->rank, x->dims);
	if (!y)
		return c->st;
	if (op < 0) /* relu6 */
		ali_unary(AL_UN_CLIP, 0, 6, x->f, y->f, x->n);
	else
		ali_unary((enum al_unop)op, 0, 0, x->f, y->f, x->n);
	return AL_OK;
}

/* log / rsqrt / inverse: y = f(x + epsilon). */
enum al_status mx_unary_eps(struct mx *c, int op)
{
	double def = op == AL_UN_LOG_EPS ? 1e-45 : op == AL_UN_RSQRT_EPS ? 1e-12 : 1e-4, eps;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_float(c, "epsilon", def, &eps))
		return c->st;
	struct al_tensor *y = mx_alloc_raw(c, 0, mx_fdtype(x), x->rank, x->dims);
	if (y)
		ali_unary((enum al_unop)op, (float)eps, 0, x->f, y->f, x->n);
	return c->st;
}

/* Activations with alpha / beta parameters (defaults per the MIL definitions;
 * NAN = required). */
enum al_status mx_unary_ab(struct mx *c, int op)
{
	double da = NAN, db = 0, a, b;
	switch (op) {
	case AL_UN_CLIP: db = NAN; break;
	case AL_UN_LEAKY_RELU: da = 0.01; break;
	case AL_UN_SCALED_TANH: da = 1, db = 1; break;
	case AL_UN_SIGMOID_HARD: da = 0.2, db = 0.5; break;
	case AL_UN_THRESHOLDED_RELU: da = 1; break;
	default: break;
	}
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_float(c, "alpha", da, &a) || !mx_float(c, "beta", db, &b))
		return c->st;
	if (isnan(a) && !mx_present(c, "alpha"))
		return mx_fail(c, AL_E_FORMAT, "parameter 'alpha' is missing");
	if (isnan(b) && !mx_present(c, "beta"))
		return mx_fail(c, AL_E_FORMAT, "parameter 'beta' is missing");
	struct al_tensor *y = mx_alloc_raw(c, 0, x->dtype, x->rank, x->dims);
	if (y)
		ali_unary((enum al_unop)op, (float)a, (float)b, x->f, y->f, x->n);
	return c->st;
}

enum al_status mx_gelu(struct mx *c, int arg)
{
	(void)arg;
	char mode[32];
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_str(c, "mode", "EXACT", mode, sizeof mode))
		return c->st;
	enum al_unop op;
	if (strcmp(mode, "EXACT") == 0)
		op = AL_UN_GELU_ERF;
	else if (strcmp(mode, "TANH_APPROXIMATION") == 0)
		op = AL_UN_GELU_TANH;
	else if (strcmp(mode, "SIGMOID_APPROXIMATION") == 0)
		op = AL_UN_GELU_SIGMOID;
	else
		return mx_unsupported(c, "gelu mode", mode);
	struct al_tensor *y = mx_alloc_raw(c, 0, x->dtype, x->rank, x->dims);
	if (y)
		ali_unary(op, 0, 0, x->f, y->f, x->n);
	return c->st;
}

/* round: to the nearest integer, halves to even (numpy.round). */
enum al_status mx_round(struct mx *c, int arg)
{
	(void)arg;
	struct al_tensor *x = mx_req(c, "x");
	struct al_tensor *y = x ? mx_alloc(c, 0, x->dtype, x->rank, x->dims) : NULL;
	for (size_t i = 0; y && i < x->n; i++)
		y->f[i] = nearbyintf(x->f[i]);
	return c->st;
}

enum al_status mx_clamped_relu(struct mx *c, int arg)
{
	(void)arg;
	double a, b;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_float(c, "alpha", 0, &a) || !mx_float(c, "beta", 6, &b))
		return c->st;
	struct al_tensor *y = mx_alloc(c, 0, x->dtype, x->rank, x->dims);
	for (size_t i = 0; y && i < x->n; i++) {
		float v = x->f[i] >= 0 ? x->f[i] : (float)a * x->f[i];
		y->f[i] = v < (float)b ? v : (float)b;
	}
	return c->st;
}

/* prelu / softplus_parametric: per-channel (axis 1) parameters. */
static bool per_channel(struct mx *c, const struct al_tensor *x, const char *param,
			const struct al_tensor **p)
{
	*p = mx_req(c, param);
	if (!*p)
		return false;
	if (x->rank < 2 || (*p)->n != (size_t)x->dims[1]) {
		mx_fail(c, AL_E_FORMAT, "'%s' must hold one value per channel (dim 1 of x)", param);
		return false;
	}
	return true;
}

enum al_status mx_prelu(struct mx *c, int arg)
{
	(void)arg;
	const struct al_tensor *a;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !per_channel(c, x, "alpha", &a))
		return c->st;
	struct al_tensor *y = mx_alloc(c, 0, x->dtype, x->rank, x->dims);
	if (!y)
		return c->st;
	int64_t C = x->dims[1], inner = mx_prod(x->dims, 2, x->rank), outer = x->dims[0];
	for (int64_t o = 0; o < outer; o++)
		for (int64_t ch = 0; ch < C; ch++)
			for (int64_t i = 0; i < inner; i++) {
				size_t k = (size_t)((o * C + ch) * inner + i);
				y->f[k] = x->f[k] > 0 ? x->f[k] : a->f[ch] * x->f[k];
			}
	return AL_OK;
}

enum al_status mx_softplus_parametric(struct mx *c, int arg)
{
	(void)arg;
	const struct al_tensor *a, *b;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !per_channel(c, x, "alpha", &a) || !per_channel(c, x, "beta", &b))
		return c->st;
	struct al_tensor *y = mx_alloc(c, 0, x->dtype, x->rank, x->dims);
	if (!y)
		return c->st;
	int64_t C = x->dims[1], inner = mx_prod(x->dims, 2, x->rank), outer = x->dims[0];
	for (int64_t o = 0; o < outer; o++)
		for (int64_t ch = 0; ch < C; ch++) {
			size_t k = (size_t)((o * C + ch) * inner);
			ali_unary(AL_UN_SOFTPLUS_PARAM, a->f[ch], b->f[ch], x->f + k, y->f + k,
				 (size_t)inner);
		}
	return AL_OK;
}

static bool broadcast(struct mx *c, const struct al_tensor *a, const struct al_tensor *b, int *ry,
		      int64_t *dy)
{
	if (ali_broadcast_shape(a->rank, a->dims, b->rank, b->dims, ry, dy))
		return true;
	char s1[96], s2[96];
	mx_fail(c, AL_E_FORMAT, "shapes %s and %s do not broadcast", mx_dims_str(a, s1, sizeof s1),
		mx_dims_str(b, s2, sizeof s2));
	return false;
}

enum al_status mx_binary(struct mx *c, int op)
{
	struct al_tensor *a = mx_req(c, "x"), *b = a ? mx_req(c, "y") : NULL;
	int ry;
	int64_t dy[AL_TENSOR_MAX_RANK];
	if (!b || !broadcast(c, a, b, &ry, dy))
		return c->st;
	int dt;
	if (op >= AL_BIN_EQ)
		dt = AL_DT_BOOL;
	else if (mx_is_float(a->dtype))
		dt = a->dtype;
	else if (mx_is_float(b->dtype))
		dt = b->dtype;
	else if (op == AL_BIN_DIV)
		dt = AL_DT_FP32; /* real_div of integers */
	else
		dt = a->dtype;
	struct al_tensor *y = mx_alloc_raw(c, 0, dt, ry, dy); /* ali_binary writes every value */
	if (y)
		ali_binary((enum al_binop)op, a->f, a->rank, a->dims, b->f, b->rank, b->dims, y->f, ry, dy);
	return c->st;
}

enum al_status mx_select(struct mx *c, int arg)
{
	(void)arg;
	struct al_tensor *p = mx_req(c, "cond"), *a = p ? mx_req(c, "a") : NULL;
	struct al_tensor *b = a ? mx_req(c, "b") : NULL;
	int r1, ry;
	int64_t d1[AL_TENSOR_MAX_RANK], dy[AL_TENSOR_MAX_RANK];
	if (!b || !broadcast(c, p, a, &r1, d1))
		return c->st;
	if (!ali_broadcast_shape(r1, d1, b->rank, b->dims, &ry, dy))
		return mx_fail(c, AL_E_FORMAT, "cond, a and b do not broadcast");
	struct al_tensor *y = mx_alloc(c, 0, a->dtype, ry, dy);
	if (y)
		ali_select(p->f, p->rank, p->dims, a->f, a->rank, a->dims, b->f, b->rank, b->dims, y->f,
			  ry, dy);
	return c->st;
}

/* cast: float types keep the value (fp32 mode computes fp16 programs in fp32;
 * fp16 mode rounds every float result after the op); integers truncate toward
 * zero and saturate (NaN -> 0), as numpy's astype does for in-range values;
 * bool is x != 0. */
enum al_status mx_cast(struct mx *c, int arg)
{
	(void)arg;
	char name[16];
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_str(c, "dtype", "", name, sizeof name))
		return c->st;
	int dt = mx_dtype_named(name);
	double lo, hi;
	switch (dt) {
	case AL_DT_INT8: lo = -128, hi = 127; break;
	case AL_DT_UINT8: lo = 0, hi = 255; break;
	case AL_DT_INT16: lo = -32768, hi = 32767; break;
	case AL_DT_UINT16: lo = 0, hi = 65535; break;
	case AL_DT_INT32: lo = -2147483648.0, hi = 2147483647.0; break;
	case AL_DT_UINT32: lo = 0, hi = 4294967295.0; break;
	case AL_DT_INT64: lo = -9223372036854775808.0, hi = 9223372036854775807.0; break;
	case AL_DT_FP16: case AL_DT_FP32: case AL_DT_FP64: case AL_DT_BOOL: lo = hi = 0; break;
	default: return mx_unsupported(c, "cast to", name);
	}
	if (dt != AL_DT_BOOL && mx_is_float(dt) && !c->x->fp16) {
		/* the values as they are: x's own, under the new type (a stateful
		 * decoder casts its whole fp16 KV cache to fp32 on every step) */
		struct al_tensor *v = ali_tensor_view(c->x, c->n, x, dt, x->rank, x->dims);
		if (!v)
			return c->st = c->x->over_budget ? AL_E_UNSUPPORTED : AL_E_NOMEM;
		mx_set(c, 0, v);
		ali_tensor_unref(v);
		return AL_OK;
	}
	struct al_tensor *y = mx_alloc_raw(c, 0, dt, x->rank, x->dims); /* every element written */
	if (!y)
		return c->st;
	if (dt != AL_DT_BOOL && mx_is_float(dt)) { /* the values as they are (fp16 mode rounds later) */
		if (x->n)
			memcpy(y->f, x->f, x->n * sizeof *y->f);
		return AL_OK;
	}
	for (size_t i = 0; i < x->n; i++) {
		float v = x->f[i];
		if (dt == AL_DT_BOOL)
			y->f[i] = v != 0;
		else if (v != v)
			y->f[i] = 0;
		else
			y->f[i] = (float)fmin(fmax(trunc((double)v), lo), hi);
	}
	return AL_OK;
}

/* ================================================================ reductions */

enum al_status mx_reduce(struct mx *c, int op)
{
	int64_t axes[MX_MAXV], dims[AL_TENSOR_MAX_RANK];
	size_t na;
	bool keep;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_ints(c, "axes", axes, MX_MAXV, &na) || !mx_bool(c, "keep_dims", false, &keep))
		return c->st;
	uint32_t mask = 0;
	if (!mx_present(c, "axes"))
		mask = x->rank ? (1u << x->rank) - 1 : 0;
	for (size_t i = 0; i < na; i++) {
		int a = mx_axis(c, axes[i], x->rank, 0);
		if (a < 0)
			return c->st;
		mask |= 1u << a;
	}
	for (int i = 0; i < x->rank; i++)
		if ((mask >> i & 1) && x->dims[i] == 0)
			return mx_fail(c, AL_E_FORMAT, "reduces an empty axis");
	int r = mx_reduced_dims(x, mask, keep, dims);
	struct al_tensor *y = mx_alloc(c, 0, mx_is_float(x->dtype) || op == AL_RED_SUM ||
				       op == AL_RED_PROD || op == AL_RED_MAX || op == AL_RED_MIN
				       ? x->dtype : AL_DT_FP32, r, dims);
	if (y) {
		int64_t one = 1;
		if (x->rank)
			ali_reduce((enum al_redop)op, x->f, x->rank, x->dims, mask, y->f);
		else
			ali_reduce((enum al_redop)op, x->f, 1, &one, 0, y->f);
	}
	return c->st;
}

enum al_status mx_argreduce(struct mx *c, int op)
{
	int64_t ax, dims[AL_TENSOR_MAX_RANK];
	bool keep;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_int(c, "axis", -1, &ax) || !mx_bool(c, "keep_dims", false, &keep))
		return c->st;
	int a = mx_axis(c, ax, x->rank, 0);
	if (a < 0)
		return c->st;
	if (x->dims[a] == 0)
		return mx_fail(c, AL_E_FORMAT, "reduces an empty axis");
	int r = mx_reduced_dims(x, 1u << a, keep, dims);
	struct al_tensor *y = mx_alloc(c, 0, AL_DT_INT32, r, dims);
	if (y)
		ali_reduce((enum al_redop)op, x->f, x->rank, x->dims, 1u << a, y->f);
	return c->st;
}

/* ================================================================ normalisation */

enum al_status mx_softmax(struct mx *c, int arg)
{
	(void)arg;
	int64_t ax;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_int(c, "axis", -1, &ax))
		return c->st;
	int a = mx_axis(c, ax, x->rank, 0);
	struct al_tensor *y = a >= 0 ? mx_alloc(c, 0, mx_fdtype(x), x->rank, x->dims) : NULL;
	if (y && x->n)
		ali_softmax(x->f, mx_prod(x->dims, 0, a), x->dims[a], mx_prod(x->dims, a + 1, x->rank),
			   y->f);
	return c->st;
}

/* An optional per-element parameter of `n` values (gamma, beta ...). */
static bool opt_vec(struct mx *c, const char *param, size_t n, const float **out)
{
	const struct al_tensor *t = mx_in(c, param);
	*out = NULL;
	if (!t)
		return c->st == AL_OK;
	if (t->kind != AL_TK_TENSOR || !t->f || t->n != n) {
		mx_fail(c, AL_E_FORMAT, "'%s' must hold %zu values", param, n);
		return false;
	}
	*out = t->f;
	return true;
}

/* layer_norm: over the trailing axes named by `axes` (every axis when absent), or
 * over one axis that is not the last. */
enum al_status mx_layer_norm(struct mx *c, int arg)
{
	(void)arg;
	int64_t axes[MX_MAXV];
	size_t na;
	double eps;
	const float *g, *b;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_ints(c, "axes", axes, MX_MAXV, &na) || !mx_float(c, "epsilon", 1e-5, &eps))
		return c->st;
	uint32_t mask = 0;
	if (!mx_present(c, "axes"))
		mask = x->rank ? (1u << x->rank) - 1 : 0;
	for (size_t i = 0; i < na; i++) {
		int a = mx_axis(c, axes[i], x->rank, 0);
		if (a < 0)
			return c->st;
		mask |= 1u << a;
	}
	int first = x->rank;
	while (first > 0 && (mask >> (first - 1) & 1))
		first--;
	if (mask >> first != (x->rank ? (1u << (x->rank - first)) - 1 : 0) || (mask & ((1u << first) - 1))) {
		/* one axis a that is not the last (the channel axis of a [B, C, 1, S]
		 * transformer layout): each of its lines gathered, normalized as the
		 * trailing case does (same values, same order), scattered back */
		int a = -1;
		for (int i = 0; i < x->rank; i++)
			if (mask == 1u << i)
				a = i;
		if (a < 0)
			return mx_fail(c, AL_E_UNSUPPORTED, "layer_norm over several axes that are not the "
				       "trailing ones is not supported by the interpreter");
		int64_t n = x->dims[a], in = mx_prod(x->dims, a + 1, x->rank), out = mx_prod(x->dims, 0, a);
		if (!opt_vec(c, "gamma", (size_t)n, &g) || !opt_vec(c, "beta", (size_t)n, &b))
			return c->st;
		struct al_tensor *y = mx_alloc(c, 0, mx_fdtype(x), x->rank, x->dims);
		float *line = y && n ? ali_malloc((size_t)n * 2 * sizeof *line) : NULL;
		if (y && n && !line)
			return mx_fail(c, AL_E_NOMEM, "out of memory");
		for (int64_t o = 0; line && o < out; o++)
			for (int64_t i = 0; i < in; i++) {
				const float *src = x->f + o * n * in + i;
				float *dst = y->f + o * n * in + i;
				for (int64_t k = 0; k < n; k++)
					line[k] = src[k * in];
				ali_layer_norm(line, 1, n, g, b, (float)eps, true, line + n);
				for (int64_t k = 0; k < n; k++)
					dst[k * in] = line[n + k];
			}
		ali_free(line);
		return c->st;
	}
	int64_t inner = mx_prod(x->dims, first, x->rank), outer = mx_prod(x->dims, 0, first);
	if (!opt_vec(c, "gamma", (size_t)inner, &g) || !opt_vec(c, "beta", (size_t)inner, &b))
		return c->st;
	struct al_tensor *y = mx_alloc(c, 0, mx_fdtype(x), x->rank, x->dims);
	if (y && inner)
		ali_layer_norm(x->f, outer, inner, g, b, (float)eps, true, y->f);
	return c->st;
}

/* x [N, C, *D] with rank >= 3 (instance / batch norm). */
static bool nchw(struct mx *c, const struct al_tensor *x, int64_t *n, int64_t *ch, int64_t *inner)
{
	if (x->rank < 2) {
		mx_fail(c, AL_E_FORMAT, "x must be [N, C, ...]");
		return false;
	}
	*n = x->dims[0];
	*ch = x->dims[1];
	*inner = mx_prod(x->dims, 2, x->rank);
	return true;
}

enum al_status mx_instance_norm(struct mx *c, int arg)
{
	(void)arg;
	int64_t n, ch, inner;
	double eps;
	const float *g, *b;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !nchw(c, x, &n, &ch, &inner) || !mx_float(c, "epsilon", 1e-5, &eps) ||
	    !opt_vec(c, "gamma", (size_t)ch, &g) || !opt_vec(c, "beta", (size_t)ch, &b))
		return c->st;
	struct al_tensor *y = mx_alloc(c, 0, mx_fdtype(x), x->rank, x->dims);
	if (y && inner) {
		ali_layer_norm(x->f, n * ch, inner, NULL, NULL, (float)eps, true, y->f);
		ali_channel_affine(y->f, n, ch, inner, g, b, y->f);
	}
	return c->st;
}

enum al_status mx_batch_norm(struct mx *c, int arg)
{
	(void)arg;
	int64_t n, ch, inner;
	double eps;
	const float *mean, *var, *g, *b;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !nchw(c, x, &n, &ch, &inner) || !mx_float(c, "epsilon", 1e-5, &eps) ||
	    !opt_vec(c, "mean", (size_t)ch, &mean) || !opt_vec(c, "variance", (size_t)ch, &var) ||
	    !opt_vec(c, "gamma", (size_t)ch, &g) || !opt_vec(c, "beta", (size_t)ch, &b))
		return c->st;
	if (!mean || !var)
		return mx_fail(c, AL_E_FORMAT, "mean and variance are required");
	float *scale = ali_malloc((size_t)(ch ? ch : 1) * 2 * sizeof(float));
	if (!scale)
		return mx_fail(c, AL_E_NOMEM, "out of memory");
	float *bias = scale + ch;
	for (int64_t k = 0; k < ch; k++) {
		double s = (g ? g[k] : 1.0) / sqrt((double)var[k] + eps);
		scale[k] = (float)s;
		bias[k] = (float)((b ? b[k] : 0.0) - (double)mean[k] * s);
	}
	struct al_tensor *y = mx_alloc(c, 0, mx_fdtype(x), x->rank, x->dims);
	if (y)
		ali_channel_affine(x->f, n, ch, inner, scale, bias, y->f);
	ali_free(scale);
	return c->st;
}

/* l2_norm: x / sqrt(sum x^2 + eps) over the last three axes (all of a rank-3
 * x), each leading index a batch. */
enum al_status mx_l2_norm(struct mx *c, int arg)
{
	(void)arg;
	double eps;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_float(c, "epsilon", 1e-6, &eps))
		return c->st;
	if (x->rank < 3)
		return mx_fail(c, AL_E_FORMAT, "x must have rank 3 or more");
	int64_t inner = mx_prod(x->dims, x->rank - 3, x->rank), outer = mx_prod(x->dims, 0, x->rank - 3);
	struct al_tensor *y = mx_alloc(c, 0, mx_fdtype(x), x->rank, x->dims);
	if (y)
		ali_l2_normalize(x->f, outer, inner, eps, y->f);
	return c->st;
}

enum al_status mx_lrn(struct mx *c, int arg)
{
	(void)arg;
	int64_t size, n, ch, inner;
	double a, b, k;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_int(c, "size", 0, &size) || !mx_float(c, "alpha", 1e-4, &a) ||
	    !mx_float(c, "beta", 0.75, &b) || !mx_float(c, "k", 1.0, &k) || !nchw(c, x, &n, &ch, &inner))
		return c->st;
	if (size < 1)
		return mx_fail(c, AL_E_FORMAT, "size %lld must be positive", (long long)size);
	struct al_tensor *y = mx_alloc(c, 0, mx_fdtype(x), x->rank, x->dims);
	if (y)
		ali_lrn(x->f, n, ch, inner, size, (float)a, (float)b, (float)k, y->f);
	return c->st;
}

/* ================================================================ linear algebra */

/* linear: x [..., Din] . weight[Dout, Din]^T + bias [Dout]. */
enum al_status mx_linear(struct mx *c, int arg)
{
	(void)arg;
	const float *bias;
	struct al_tensor *x = mx_req(c, "x"), *w = x ? mx_req(c, "weight") : NULL;
	if (!w)
		return c->st;
	if (w->rank != 2 || x->rank < 1 || x->dims[x->rank - 1] != w->dims[1])
		return mx_fail(c, AL_E_FORMAT, "x [..., %lld] and weight (rank %d) do not match",
			       x->rank ? (long long)x->dims[x->rank - 1] : 0LL, w->rank);
	int64_t dout = w->dims[0], din = w->dims[1], m = din ? (int64_t)x->n / din : 0;
	if (!opt_vec(c, "bias", (size_t)dout, &bias))
		return c->st;
	int64_t dims[AL_TENSOR_MAX_RANK];
	memcpy(dims, x->dims, sizeof dims[0] * (size_t)x->rank);
	dims[x->rank - 1] = dout;
	/* every value is written (the bias or beta 0) unless the sums are empty */
	struct al_tensor *y = din ? mx_alloc_raw(c, 0, mx_fdtype(x), x->rank, dims)
				  : mx_alloc(c, 0, mx_fdtype(x), x->rank, dims);
	if (!y || !m || !dout)
		return c->st;
	/* the bias first, then y += x w^T: one pass over y less than adding it after */
	if (bias)
		for (int64_t i = 0; i < m; i++)
			memcpy(y->f + i * dout, bias, (size_t)dout * sizeof *bias);
	ali_gemm(false, true, (size_t)m, (size_t)dout, (size_t)din, 1.0f, x->f, (size_t)din, w->f,
		(size_t)din, bias ? 1.0f : 0.0f, y->f, (size_t)dout);
	return AL_OK;
}

/* matmul: numpy matmul with transpose_x / transpose_y and broadcast batch dims. */
enum al_status mx_matmul(struct mx *c, int arg)
{
	(void)arg;
	bool tx, ty;
	struct al_tensor *a = mx_req(c, "x"), *b = a ? mx_req(c, "y") : NULL;
	if (!b || !mx_bool(c, "transpose_x", false, &tx) || !mx_bool(c, "transpose_y", false, &ty))
		return c->st;
	if (a->rank < 1 || b->rank < 1)
		return mx_fail(c, AL_E_FORMAT, "matmul of a scalar");
	/* as matrices: a [.., M, K], b [.., K, N]; a rank-1 operand is a row / column */
	int64_t ad[AL_TENSOR_MAX_RANK + 1], bd[AL_TENSOR_MAX_RANK + 1];
	int ra = a->rank, rb = b->rank;
	memcpy(ad, a->dims, sizeof ad[0] * (size_t)ra);
	memcpy(bd, b->dims, sizeof bd[0] * (size_t)rb);
	bool a1 = ra == 1, b1 = rb == 1;
	if (a1) { /* [K] -> [1, K] */
		ad[1] = ad[0], ad[0] = 1, ra = 2, tx = false;
	}
	if (b1) { /* [K] -> [K, 1] */
		bd[1] = 1, rb = 2, ty = false;
	}
	int64_t M = tx ? ad[ra - 1] : ad[ra - 2], K = tx ? ad[ra - 2] : ad[ra - 1];
	int64_t K2 = ty ? bd[rb - 1] : bd[rb - 2], N = ty ? bd[rb - 2] : bd[rb - 1];
	if (K != K2)
		return mx_fail(c, AL_E_FORMAT, "inner dimensions %lld and %lld differ", (long long)K,
			       (long long)K2);
	int rby;
	int64_t by[AL_TENSOR_MAX_RANK], dims[AL_TENSOR_MAX_RANK + 2];
	if (!ali_broadcast_shape(ra - 2, ad, rb - 2, bd, &rby, by))
		return mx_fail(c, AL_E_FORMAT, "batch dimensions do not broadcast");
	int r = 0;
	for (int i = 0; i < rby; i++)
		dims[r++] = by[i];
	if (!a1)
		dims[r++] = M;
	if (!b1)
		dims[r++] = N;
	if (r > AL_TENSOR_MAX_RANK)
		return mx_fail(c, AL_E_UNSUPPORTED, "a result of rank %d", r);
	struct al_tensor *y = mx_alloc(c, 0, mx_fdtype(a), r, dims);
	if (!y || !M || !N)
		return c->st;
	int64_t batches = mx_prod(by, 0, rby), sa = M * K, sb = K * N;
	int64_t idx[AL_TENSOR_MAX_RANK];
	memset(idx, 0, sizeof idx);
	for (int64_t bi = 0; bi < batches; bi++) {
		/* the batch offsets of a and b (their dims aligned at the right) */
		int64_t oa = 0, ob = 0;
		for (int i = 0; i < rby; i++) {
			int ia = i - (rby - (ra - 2)), ib = i - (rby - (rb - 2));
			if (ia >= 0)
				oa = oa * ad[ia] + (ad[ia] == 1 ? 0 : idx[i]);
			if (ib >= 0)
				ob = ob * bd[ib] + (bd[ib] == 1 ? 0 : idx[i]);
		}
		if (K)
			ali_gemm(tx, ty, (size_t)M, (size_t)N, (size_t)K, 1.0f, a->f + oa * sa,
				(size_t)(tx ? M : K), b->f + ob * sb, (size_t)(ty ? K : N), 0.0f,
				y->f + bi * M * N, (size_t)N);
		for (int i = rby - 1; i >= 0; i--) { /* next batch index */
			if (++idx[i] < by[i])
				break;
			idx[i] = 0;
		}
	}
	return AL_OK;
}

/* ================================================================ quantization (iOS17) */

/* quantize (1): clip(round(x / scale) + zero_point) to int8 / uint8, halves to
 * even; dequantize (0): (x - zero_point) * scale. scale and zero_point are
 * scalars or vectors along `axis`. */
enum al_status mx_quantize(struct mx *c, int q)
{
	char dt[16];
	int64_t ax;
	struct al_tensor *x = mx_req(c, "input"), *sc = x ? mx_req(c, "scale") : NULL;
	const struct al_tensor *zp = sc ? mx_in(c, "zero_point") : NULL;
	if (!sc || !mx_int(c, "axis", INT64_MIN, &ax) ||
	    (q && !mx_str(c, "output_dtype", "", dt, sizeof dt)))
		return c->st;
	if (zp && (zp->kind != AL_TK_TENSOR || !zp->f))
		return mx_fail(c, AL_E_FORMAT, "zero_point is not numeric");
	int out = q ? mx_dtype_named(dt) : sc->dtype;
	if (q && out != AL_DT_INT8 && out != AL_DT_UINT8)
		return mx_unsupported(c, "output_dtype", dt);
	int64_t d = 1, inner = 1;
	if (ax != INT64_MIN) {
		int a = mx_axis(c, ax, x->rank, 0);
		if (a < 0)
			return c->st;
		d = x->dims[a], inner = mx_prod(x->dims, a + 1, x->rank);
	}
	if ((sc->n != 1 && sc->n != (size_t)d) || (zp && zp->n != 1 && zp->n != (size_t)d))
		return mx_fail(c, AL_E_FORMAT, "scale and zero_point must hold 1 or %lld values", (long long)d);
	float lo = out == AL_DT_INT8 ? -128 : 0, hi = out == AL_DT_INT8 ? 127 : 255;
	struct al_tensor *y = mx_alloc(c, 0, out, x->rank, x->dims);
	for (size_t i = 0; y && i < x->n; i++) {
		size_t k = (size_t)(((int64_t)i / inner) % d);
		float s = sc->f[sc->n == 1 ? 0 : k], z = zp ? zp->f[zp->n == 1 ? 0 : k] : 0;
		if (!q) {
			y->f[i] = (x->f[i] - z) * s;
			continue;
		}
		float v = nearbyintf(x->f[i] / s) + z;
		y->f[i] = v != v ? 0 : v < lo ? lo : v > hi ? hi : v;
	}
	return c->st;
}

/* ================================================================ attention (iOS18) */

static bool mx_same_dims_raw(int ra, const int64_t *a, int rb, const int64_t *b)
{
	if (ra != rb)
		return false;
	for (int i = 0; i < ra; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* softmax(Q K^T / sqrt(E) + mask) V over the last two dims; a bool mask keeps
 * the positions where it is true (the others get -inf). */
enum al_status mx_sdpa(struct mx *c, int arg)
{
	(void)arg;
	struct al_tensor *q = mx_req(c, "query"), *k = q ? mx_req(c, "key") : NULL;
	struct al_tensor *v = k ? mx_req(c, "value") : NULL;
	const struct al_tensor *m = v ? mx_in(c, "attn_mask") : NULL;
	if (!v || c->st != AL_OK)
		return c->st;
	int r = q->rank;
	if (r < 3 || k->rank != r || v->rank != r)
		return mx_fail(c, AL_E_FORMAT, "query, key and value must have one rank >= 3");
	for (int i = 0; i < r - 2; i++)
		if (k->dims[i] != q->dims[i] || v->dims[i] != q->dims[i])
			return mx_fail(c, AL_E_FORMAT, "query, key and value differ in batch dims");
	int64_t L = q->dims[r - 2], E = q->dims[r - 1], S = k->dims[r - 2], EV = v->dims[r - 1];
	if (k->dims[r - 1] != E || v->dims[r - 2] != S)
		return mx_fail(c, AL_E_FORMAT, "key must be [..., S, E] and value [..., S, EV]");
	if (m && (m->kind != AL_TK_TENSOR || !m->f))
		return mx_fail(c, AL_E_FORMAT, "attn_mask is not numeric");
	int64_t sd[AL_TENSOR_MAX_RANK], od[AL_TENSOR_MAX_RANK];
	memcpy(sd, q->dims, sizeof sd[0] * (size_t)r);
	sd[r - 1] = S;
	memcpy(od, q->dims, sizeof od[0] * (size_t)r);
	od[r - 1] = EV;
	int rm;
	int64_t dm[AL_TENSOR_MAX_RANK];
	if (m && (!ali_broadcast_shape(m->rank, m->dims, r, sd, &rm, dm) || !mx_same_dims_raw(rm, dm, r, sd)))
		return mx_fail(c, AL_E_FORMAT, "attn_mask does not broadcast to the scores");
	struct al_tensor *sc = mx_alloc(c, UINT32_MAX, AL_DT_FP32, r, sd);
	struct al_tensor *y = sc ? mx_alloc(c, 0, mx_fdtype(q), r, od) : NULL;
	if (!y) {
		ali_tensor_unref(sc);
		return c->st;
	}
	int64_t B = mx_prod(q->dims, 0, r - 2);
	float alpha = E ? (float)(1.0 / sqrt((double)E)) : 1.0f;
	for (int64_t b = 0; b < B && L && S; b++)
		if (E)
			ali_gemm(false, true, (size_t)L, (size_t)S, (size_t)E, alpha, q->f + b * L * E, (size_t)E,
				k->f + b * S * E, (size_t)E, 0.0f, sc->f + b * L * S, (size_t)S);
	if (m && m->dtype == AL_DT_BOOL) {
		float ninf = -INFINITY;
		int64_t one = 1;
		ali_select(m->f, m->rank, m->dims, sc->f, r, sd, &ninf, 1, &one, sc->f, r, sd);
	} else if (m) {
		ali_binary(AL_BIN_ADD, sc->f, r, sd, m->f, m->rank, m->dims, sc->f, r, sd);
	}
	if (sc->n)
		ali_softmax(sc->f, B * L, S, 1, sc->f);
	for (int64_t b = 0; b < B && L && EV; b++)
		if (S)
			ali_gemm(false, false, (size_t)L, (size_t)EV, (size_t)S, 1.0f, sc->f + b * L * S, (size_t)S,
				v->f + b * S * EV, (size_t)EV, 0.0f, y->f + b * L * EV, (size_t)EV);
	ali_tensor_unref(sc);
	return c->st;
}
