/* SPDX-License-Identifier: MIT */
/* interp_mil_nn.c: the ML Program ops with windows or state: conv and
 * conv_transpose (1-D and 2-D, groups, dilations, pad_type valid / same /
 * same_lower / custom), max / avg / l2 pooling (ceil_mode,
 * exclude_padding_from_average), upsampling and resizing, the iOS15 recurrent
 * ops lstm / gru / rnn, and classify.
 *
 * Window arithmetic follows coremltools' ops/defs/_utils.py (aggregated_pad,
 * spatial_dimensions_out_shape); recurrent gate orders follow the op
 * definitions (lstm: input, forget, output, cell; gru: reset, output, update).
 * 3-D convolution and pooling are refused (AL_E_UNSUPPORTED).
 */
#include "interp_mil.h"

#include <math.h>
#include <string.h>

/* ================================================================ windows */

struct win {
	int nsp;                 /* spatial dims: 1 or 2 */
	int64_t in[2], k[2], s[2], d[2];
	int64_t pb[2], pa[2];    /* padding before / after */
	int64_t out[2];
};

/* strides / dilations (nsp values, default 1), pad (2*nsp, default 0). */
static bool win_params(struct mx *c, struct win *w, bool dilations)
{
	int64_t v[MX_MAXV];
	size_t n;
	for (int i = 0; i < w->nsp; i++)
		w->s[i] = w->d[i] = 1, w->pb[i] = w->pa[i] = 0;
	if (!mx_ints(c, "strides", v, MX_MAXV, &n))
		return false;
	if (n && n != (size_t)w->nsp)
		return mx_fail(c, AL_E_FORMAT, "strides has %zu values for %d spatial dims", n, w->nsp), false;
	for (size_t i = 0; i < n; i++)
		w->s[i] = v[i];
	if (dilations) {
		if (!mx_ints(c, "dilations", v, MX_MAXV, &n))
			return false;
		if (n && n != (size_t)w->nsp)
			return mx_fail(c, AL_E_FORMAT, "dilations has %zu values", n), false;
		for (size_t i = 0; i < n; i++)
			w->d[i] = v[i];
	}
	for (int i = 0; i < w->nsp; i++)
		if (w->s[i] < 1 || w->d[i] < 1 || w->s[i] > 65536 || w->d[i] > 65536)
			return mx_fail(c, AL_E_FORMAT, "strides and dilations must be 1..65536"), false;
	return true;
}

/* Padding per pad_type: valid, custom (pad), same / same_lower (total padding
 * max(0, s*ceil(in/s) - in + keff - s), the odd one after / before). */
static bool win_pad(struct mx *c, struct win *w, const char *pad_type)
{
	int64_t v[MX_MAXV];
	size_t n;
	bool same = strcmp(pad_type, "same") == 0, lower = strcmp(pad_type, "same_lower") == 0;
	if (strcmp(pad_type, "custom") == 0) {
		if (!mx_ints(c, "pad", v, MX_MAXV, &n))
			return false;
		if (n != 2 * (size_t)w->nsp)
			return mx_fail(c, AL_E_FORMAT, "pad has %zu values for %d spatial dims", n, w->nsp),
			       false;
		for (int i = 0; i < w->nsp; i++) {
			w->pb[i] = v[2 * i], w->pa[i] = v[2 * i + 1];
			if (w->pb[i] < 0 || w->pa[i] < 0 || w->pb[i] > 65536 || w->pa[i] > 65536)
				return mx_fail(c, AL_E_FORMAT, "pad values must be 0..65536"), false;
		}
	} else if (same || lower) {
		for (int i = 0; i < w->nsp; i++) {
			int64_t keff = (w->k[i] - 1) * w->d[i] + 1;
			int64_t t = w->s[i] * ((w->in[i] + w->s[i] - 1) / w->s[i]) - w->in[i] + keff - w->s[i];
			if (t < 0)
				t = 0;
			w->pb[i] = lower ? t - t / 2 : t / 2;
			w->pa[i] = t - w->pb[i];
		}
	} else if (strcmp(pad_type, "valid") != 0) {
		mx_unsupported(c, "pad_type", pad_type);
		return false;
	}
	return true;
}

/* Output sizes: floor, or ceil_mode as coremltools computes it. */
static bool win_out(struct mx *c, struct win *w, bool ceil_mode)
{
	for (int i = 0; i < w->nsp; i++) {
		int64_t keff = (w->k[i] - 1) * w->d[i] + 1, pad = w->pb[i] + w->pa[i];
		int64_t span = w->in[i] + pad - keff;
		if (span < 0)
			return mx_fail(c, AL_E_FORMAT, "the window (%lld) is larger than the padded input "
				       "(%lld)", (long long)keff, (long long)(w->in[i] + pad)), false;
		int64_t o = span / w->s[i] + 1;
		if (ceil_mode) {
			o = (span + w->s[i] - 1) / w->s[i] + 1;
			if (pad > 0 && 2 * (o - 1) * w->s[i] >= 2 * w->in[i] + pad)
				o--;
			if ((o - 1) * w->s[i] - w->pb[i] >= w->in[i])
				return mx_fail(c, AL_E_FORMAT, "a ceil_mode window lies outside the input"),
				       false;
		}
		w->out[i] = o;
	}
	return true;
}

/* x [N, C, *D] with 1 or 2 spatial dims. */
static bool spatial(struct mx *c, const struct al_tensor *x, struct win *w)
{
	if (x->rank == 5)
		return mx_fail(c, AL_E_UNSUPPORTED, "3-D %s is not supported by the interpreter",
			       c->n->type), false;
	if (x->rank != 3 && x->rank != 4)
		return mx_fail(c, AL_E_FORMAT, "x must be [N, C, W] or [N, C, H, W]"), false;
	w->nsp = x->rank - 2;
	for (int i = 0; i < w->nsp; i++)
		w->in[i] = x->dims[2 + i];
	return true;
}

/* The 2-D view of a 1- or 2-D window (1-D: height 1). */
static void as2d(const struct win *w, int64_t *v, const int64_t *a, int64_t one)
{
	v[0] = w->nsp == 2 ? a[0] : one;
	v[1] = w->nsp == 2 ? a[1] : a[0];
}

/* ================================================================ conv */

static bool conv_common(struct mx *c, struct al_tensor **x, struct al_tensor **wt, struct win *w,
			int64_t *groups, char *pt, size_t ptcap)
{
	*x = mx_req(c, "x");
	*wt = *x ? mx_req(c, "weight") : NULL;
	if (!*wt || !spatial(c, *x, w) || !mx_int(c, "groups", 1, groups) ||
	    !mx_str(c, "pad_type", "valid", pt, ptcap) || !win_params(c, w, true))
		return false;
	if ((*wt)->rank != (*x)->rank)
		return mx_fail(c, AL_E_FORMAT, "weight has rank %d for x of rank %d", (*wt)->rank,
			       (*x)->rank), false;
	if (*groups < 1 || (*x)->dims[1] % *groups)
		return mx_fail(c, AL_E_FORMAT, "groups %lld does not divide %lld input channels",
			       (long long)*groups, (long long)(*x)->dims[1]), false;
	for (int i = 0; i < w->nsp; i++) {
		w->k[i] = (*wt)->dims[2 + i];
		if (w->k[i] < 1)
			return mx_fail(c, AL_E_FORMAT, "an empty kernel"), false;
	}
	return true;
}

/* The optional bias of `n` values. */
static bool conv_bias(struct mx *c, int64_t n, const float **bias)
{
	const struct al_tensor *b = mx_in(c, "bias");
	*bias = NULL;
	if (b && (b->kind != AL_TK_TENSOR || !b->f || b->n != (size_t)n))
		return mx_fail(c, AL_E_FORMAT, "bias must hold %lld values", (long long)n), false;
	if (b)
		*bias = b->f;
	return c->st == AL_OK;
}

static void wino_fill(const struct al_tensor *w, float *u, void *ctx)
{
	const struct al_conv2d *p = ctx;
	ali_winograd_weights(p->cout, p->cin, w->f, u);
}

enum al_status mx_conv(struct mx *c, int arg)
{
	(void)arg;
	struct al_tensor *x, *wt;
	const float *bias;
	struct win w;
	int64_t g;
	char pt[32];
	if (!conv_common(c, &x, &wt, &w, &g, pt, sizeof pt))
		return c->st;
	int64_t cout = wt->dims[0];
	if (!conv_bias(c, cout, &bias))
		return c->st;
	if (wt->dims[1] * g != x->dims[1] || cout % g)
		return mx_fail(c, AL_E_FORMAT, "weight [%lld, %lld, ...] does not fit %lld input channels "
			       "in %lld groups", (long long)cout, (long long)wt->dims[1],
			       (long long)x->dims[1], (long long)g);
	if (!win_pad(c, &w, pt) || !win_out(c, &w, false))
		return c->st;
	int64_t dims[4] = {x->dims[0], cout, w.out[0], w.out[1]};
	/* every value written: the kernels sum each output (bias or 0 first) */
	struct al_tensor *y = mx_alloc_raw(c, 0, mx_fdtype(x), x->rank, dims);
	if (!y || !y->n)
		return c->st;
	struct al_conv2d p = {.n = x->dims[0], .cin = x->dims[1], .cout = cout, .groups = g};
	int64_t t[2];
	as2d(&w, t, w.in, 1), p.h = t[0], p.w = t[1];
	as2d(&w, t, w.k, 1), p.kh = t[0], p.kw = t[1];
	as2d(&w, t, w.s, 1), p.sh = t[0], p.sw = t[1];
	as2d(&w, t, w.d, 1), p.dh = t[0], p.dw = t[1];
	as2d(&w, t, w.pb, 0), p.pt = t[0], p.pl = t[1];
	as2d(&w, t, w.pa, 0), p.pb = t[0], p.pr = t[1];
	as2d(&w, t, w.out, 1), p.oh = t[0], p.ow = t[1];
	if (ali_conv2d_winograd_fits(&p)) {
		/* the transformed weights once per model (kernels_wino.c) */
		struct al_tensor *u = mx_derived(c, wt, MX_DERIVED_WINOGRAD,
						 ali_winograd_weights_len(p.cout, p.cin), wino_fill, &p);
		if (!u)
			return c->st;
		bool ok = ali_conv2d_winograd(&p, x->f, u->f, bias, y->f);
		ali_tensor_unref(u);
		if (!ok)
			return mx_fail(c, AL_E_NOMEM, "out of memory (convolution scratch)");
		return AL_OK;
	}
	if (!ali_conv2d(&p, x->f, wt->f, bias, y->f))
		return mx_fail(c, AL_E_NOMEM, "out of memory (convolution scratch)");
	return AL_OK;
}

/* conv_transpose: weight [Cin, Cout/groups, *K]; the output size from
 * output_shape when given (the extra rows past the formula are output padding),
 * else (in-1)*s + keff - pad (same: in*s). */
enum al_status mx_conv_transpose(struct mx *c, int arg)
{
	(void)arg;
	struct al_tensor *x, *wt;
	const float *bias;
	struct win w;
	int64_t g, os[MX_MAXV];
	size_t nos;
	char pt[32];
	if (!conv_common(c, &x, &wt, &w, &g, pt, sizeof pt))
		return c->st;
	int64_t cout = wt->dims[1] * g;
	if (!conv_bias(c, cout, &bias))
		return c->st;
	if (wt->dims[0] != x->dims[1])
		return mx_fail(c, AL_E_FORMAT, "weight [%lld, ...] does not fit %lld input channels",
			       (long long)wt->dims[0], (long long)x->dims[1]);
	if (!mx_ints(c, "output_shape", os, MX_MAXV, &nos))
		return c->st;
	if (nos && nos != (size_t)x->rank && nos != (size_t)w.nsp)
		return mx_fail(c, AL_E_FORMAT, "output_shape has %zu values", nos);
	const int64_t *want = nos ? os + (nos - (size_t)w.nsp) : NULL;
	bool same = strcmp(pt, "same") == 0 || strcmp(pt, "same_lower") == 0;
	if (same) {
		for (int i = 0; i < w.nsp; i++) {
			int64_t keff = (w.k[i] - 1) * w.d[i] + 1, full = (w.in[i] - 1) * w.s[i] + keff;
			int64_t o = want ? want[i] : w.in[i] * w.s[i], t = full - o;
			if (t < 0)
				t = 0;
			w.pb[i] = strcmp(pt, "same_lower") == 0 ? t - t / 2 : t / 2;
			w.pa[i] = t - w.pb[i];
		}
	} else if (!win_pad(c, &w, pt)) {
		return c->st;
	}
	int64_t base[2];
	for (int i = 0; i < w.nsp; i++) {
		int64_t keff = (w.k[i] - 1) * w.d[i] + 1;
		base[i] = (w.in[i] - 1) * w.s[i] + keff - w.pb[i] - w.pa[i];
		w.out[i] = want ? want[i] : base[i];
		if (base[i] < 1 || w.out[i] < base[i] || w.out[i] - base[i] >= w.s[i] + w.d[i])
			return mx_fail(c, AL_E_FORMAT, "output size %lld does not fit the transposed "
				       "convolution (%lld)", (long long)w.out[i], (long long)base[i]);
	}
	int64_t dims[4] = {x->dims[0], cout, w.out[0], w.out[1]};
	struct al_tensor *y = mx_alloc(c, 0, mx_fdtype(x), x->rank, dims);
	if (!y || !y->n)
		return c->st;
	struct al_conv2d p = {.n = x->dims[0], .cin = x->dims[1], .cout = cout, .groups = g};
	int64_t t[2];
	as2d(&w, t, w.in, 1), p.h = t[0], p.w = t[1];
	as2d(&w, t, w.k, 1), p.kh = t[0], p.kw = t[1];
	as2d(&w, t, w.s, 1), p.sh = t[0], p.sw = t[1];
	as2d(&w, t, w.d, 1), p.dh = t[0], p.dw = t[1];
	as2d(&w, t, w.pb, 0), p.pt = t[0], p.pl = t[1];
	as2d(&w, t, w.pa, 0), p.pb = t[0], p.pr = t[1];
	as2d(&w, t, w.out, 1), p.oh = t[0], p.ow = t[1];
	if (!ali_conv2d_transpose(&p, x->f, wt->f, bias, y->f))
		return mx_fail(c, AL_E_NOMEM, "out of memory (convolution scratch)");
	return AL_OK;
}

/* ================================================================ pooling */

/* arg: 0 max, 1 avg, 2 l2. */
enum al_status mx_pool(struct mx *c, int kind)
{
	struct win w;
	int64_t k[MX_MAXV];
	size_t nk;
	bool ceil_mode, excl;
	char pt[32];
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !spatial(c, x, &w) || !mx_ints(c, "kernel_sizes", k, MX_MAXV, &nk) ||
	    !mx_str(c, "pad_type", "valid", pt, sizeof pt) || !mx_bool(c, "ceil_mode", false, &ceil_mode) ||
	    !mx_bool(c, "exclude_padding_from_average", false, &excl) || !win_params(c, &w, false))
		return c->st;
	if (nk != (size_t)w.nsp)
		return mx_fail(c, AL_E_FORMAT, "kernel_sizes has %zu values for %d spatial dims", nk, w.nsp);
	for (int i = 0; i < w.nsp; i++) {
		if (k[i] < 1 || k[i] > 65536)
			return mx_fail(c, AL_E_FORMAT, "kernel size %lld", (long long)k[i]);
		w.k[i] = k[i];
	}
	if (!win_pad(c, &w, pt) || !win_out(c, &w, ceil_mode))
		return c->st;
	int64_t dims[4] = {x->dims[0], x->dims[1], w.out[0], w.out[1]};
	struct al_tensor *y = mx_alloc_raw(c, 0, mx_fdtype(x), x->rank, dims); /* pool2d writes all */
	if (!y || !y->n)
		return c->st;
	struct al_pool2d p = {.n = x->dims[0], .c = x->dims[1], .exclude_pad = excl};
	int64_t t[2];
	as2d(&w, t, w.in, 1), p.h = t[0], p.w = t[1];
	as2d(&w, t, w.k, 1), p.kh = t[0], p.kw = t[1];
	as2d(&w, t, w.s, 1), p.sh = t[0], p.sw = t[1];
	as2d(&w, t, w.pb, 0), p.pt = t[0], p.pl = t[1];
	as2d(&w, t, w.pa, 0), p.pb = t[0], p.pr = t[1];
	as2d(&w, t, w.out, 1), p.oh = t[0], p.ow = t[1];
	if (kind == 0)
		ali_maxpool2d(&p, x->f, y->f);
	else if (kind == 1)
		ali_avgpool2d(&p, x->f, y->f);
	else
		ali_l2pool2d(&p, x->f, y->f);
	return AL_OK;
}

/* ================================================================ resampling */

/* The last two dims of x resampled to oh x ow with the given grids. */
static enum al_status resample(struct mx *c, const struct al_tensor *x, int64_t oh, int64_t ow,
			       bool bilinear, double sy, double oy, double sx, double ox)
{
	if (oh < 1 || ow < 1 || oh > (int64_t)AL_TENSOR_MAX_ELEMS || ow > (int64_t)AL_TENSOR_MAX_ELEMS)
		return mx_fail(c, AL_E_FORMAT, "output size %lld x %lld", (long long)oh, (long long)ow);
	int64_t dims[AL_TENSOR_MAX_RANK];
	memcpy(dims, x->dims, sizeof dims[0] * (size_t)x->rank);
	dims[x->rank - 2] = oh;
	dims[x->rank - 1] = ow;
	struct al_tensor *y = mx_alloc(c, 0, mx_fdtype(x), x->rank, dims);
	if (!y || !x->n)
		return c->st;
	int64_t h = x->dims[x->rank - 2], w = x->dims[x->rank - 1], nc = mx_prod(x->dims, 0, x->rank - 2);
	if (bilinear)
		ali_resize_bilinear(nc, h, w, oh, ow, sy, oy, sx, ox, x->f, y->f);
	else
		ali_resize_nearest(nc, h, w, oh, ow, sy, oy, sx, ox, x->f, y->f);
	return AL_OK;
}

static struct al_tensor *image_like(struct mx *c)
{
	struct al_tensor *x = mx_req(c, "x");
	if (x && x->rank < 3) {
		mx_fail(c, AL_E_FORMAT, "x must have rank 3 or more");
		return NULL;
	}
	return x;
}

/* Bilinear grid of one axis: align_corners / half_pixel_centers as the iOS15
 * and iOS16 upsample_bilinear define them. */
static bool bilinear_grid(struct mx *c, int64_t in, int64_t out, bool ac, bool hp, double *s,
			  double *o)
{
	if (ac && hp) {
		mx_unsupported(c, "align_corners with half_pixel_centers", "true");
		return false;
	}
	if (ac)
		*s = out > 1 ? (double)(in - 1) / (double)(out - 1) : 0, *o = 0;
	else if (hp)
		*s = (double)in / (double)out, *o = 0.5 * *s - 0.5;
	else
		*s = (double)in / (double)out, *o = 0;
	return true;
}

/* upsample_nearest_neighbor (0) / upsample_bilinear (1): scale factors. */
enum al_status mx_upsample(struct mx *c, int bilinear)
{
	double fh, fw;
	bool ac, hp;
	struct al_tensor *x = image_like(c);
	if (!x || !mx_float(c, "scale_factor_height", 1, &fh) || !mx_float(c, "scale_factor_width", 1, &fw))
		return c->st;
	if (!(fh > 0 && fw > 0 && fh < 65536 && fw < 65536))
		return mx_fail(c, AL_E_FORMAT, "scale factors %g x %g", fh, fw);
	int64_t h = x->dims[x->rank - 2], w = x->dims[x->rank - 1];
	int64_t oh = (int64_t)floor((double)h * fh), ow = (int64_t)floor((double)w * fw);
	if (!bilinear)
		return resample(c, x, oh, ow, false, 1.0 / fh, 0, 1.0 / fw, 0);
	if (!mx_bool(c, "align_corners", true, &ac) || !mx_bool(c, "half_pixel_centers", !ac, &hp))
		return c->st;
	double sy, oy, sx, ox;
	if (!bilinear_grid(c, h, oh, ac, hp, &sy, &oy) || !bilinear_grid(c, w, ow, ac, hp, &sx, &ox))
		return c->st;
	return resample(c, x, oh, ow, true, sy, oy, sx, ox);
}

/* resize_bilinear's sampling modes (iOS15 definition) for one axis. */
static bool sampling_grid(struct mx *c, const char *mode, int64_t in, int64_t out, double *s, double *o)
{
	*o = 0;
	if (strcmp(mode, "STRICT_ALIGN_CORNERS") == 0 || strcmp(mode, "ALIGN_CORNERS") == 0) {
		*s = out > 1 ? (double)(in - 1) / (double)(out - 1) : 0;
		if (out == 1 && mode[0] == 'A')
			*o = (double)(in - 1) / 2;
	} else if (strcmp(mode, "DEFAULT") == 0) {
		*s = out > 1 ? ((double)in - (double)in / (double)out) / (double)(out - 1) : 0;
	} else if (strcmp(mode, "OFFSET_CORNERS") == 0) {
		double delta = (double)(in > 2 ? in - 1 : 1) / (double)out;
		*s = delta, *o = 0.5 * delta;
	} else if (strcmp(mode, "UNALIGN_CORNERS") == 0) {
		*s = (double)in / (double)out, *o = 0.5 * *s - 0.5;
	} else {
		mx_unsupported(c, "sampling_mode", mode);
		return false;
	}
	return true;
}

/* resize_nearest_neighbor (0) / resize_bilinear (1): target sizes. */
enum al_status mx_resize(struct mx *c, int bilinear)
{
	int64_t oh, ow;
	char mode[32];
	struct al_tensor *x = image_like(c);
	if (!x || !mx_int(c, "target_size_height", 1, &oh) || !mx_int(c, "target_size_width", 1, &ow) ||
	    !mx_str(c, "sampling_mode", "DEFAULT", mode, sizeof mode))
		return c->st;
	int64_t h = x->dims[x->rank - 2], w = x->dims[x->rank - 1];
	if (oh < 1 || ow < 1)
		return mx_fail(c, AL_E_FORMAT, "target size %lld x %lld", (long long)oh, (long long)ow);
	if (!bilinear)
		return resample(c, x, oh, ow, false, (double)h / (double)oh, 0, (double)w / (double)ow, 0);
	double sy, oy, sx, ox;
	if (!sampling_grid(c, mode, h, oh, &sy, &oy) || !sampling_grid(c, mode, w, ow, &sx, &ox))
		return c->st;
	return resample(c, x, oh, ow, true, sy, oy, sx, ox);
}

/* ================================================================ recurrent */

/* An activation named by `param` (sigmoid, tanh, relu, linear). */
static bool rnn_act(struct mx *c, const char *param, const char *def, struct al_rnn_acts *a)
{
	char s[32];
	if (!mx_str(c, param, def, s, sizeof s))
		return false;
	a->a = 1, a->b = 0;
	if (strcmp(s, "sigmoid") == 0)
		a->op = AL_UN_SIGMOID;
	else if (strcmp(s, "tanh") == 0)
		a->op = AL_UN_TANH;
	else if (strcmp(s, "relu") == 0)
		a->op = AL_UN_RELU;
	else if (strcmp(s, "linear") == 0)
		a->op = AL_UN_IDENTITY;
	else
		return mx_unsupported(c, param, s), false;
	return true;
}

/* A weight that must hold rows x cols values (a [rows, cols] matrix or a vector). */
static const float *rnn_w(struct mx *c, const char *param, int64_t rows, int64_t cols, bool required)
{
	const struct al_tensor *t = required ? mx_req(c, param) : mx_in(c, param);
	if (!t)
		return NULL;
	if (t->kind != AL_TK_TENSOR || !t->f || (int64_t)t->n != rows * cols) {
		mx_fail(c, AL_E_FORMAT, "'%s' must hold %lld x %lld values", param, (long long)rows,
			(long long)cols);
		return NULL;
	}
	return t->f;
}

struct rnn_io {
	struct al_tensor *x;
	int64_t T, B, I, H;
	int dirs;          /* 1 or 2 */
	bool reverse, seq;
};

/* x [T, B, I], direction, output_sequence; H from weight_hh [G*H, H]. */
static bool rnn_io(struct mx *c, struct rnn_io *r, int gates, bool bidir_ok)
{
	char dir[32];
	r->x = mx_req(c, "x");
	const struct al_tensor *wh = r->x ? mx_req(c, "weight_hh") : NULL;
	if (!wh || !mx_str(c, "direction", "forward", dir, sizeof dir) ||
	    !mx_bool(c, "output_sequence", false, &r->seq))
		return false;
	if (r->x->rank != 3)
		return mx_fail(c, AL_E_FORMAT, "x must be [T, B, I]"), false;
	if (wh->rank != 2 || wh->dims[0] != gates * wh->dims[1] || wh->dims[1] < 1)
		return mx_fail(c, AL_E_FORMAT, "weight_hh must be [%d*H, H]", gates), false;
	r->T = r->x->dims[0], r->B = r->x->dims[1], r->I = r->x->dims[2], r->H = wh->dims[1];
	r->reverse = strcmp(dir, "reverse") == 0;
	r->dirs = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
	if (!(strcmp(dir, "forward") == 0 || r->reverse || (bidir_ok && r->dirs == 2)))
		return mx_unsupported(c, "direction", dir), false;
	if (r->T < 1)
		return mx_fail(c, AL_E_FORMAT, "an empty sequence"), false;
	return true;
}

/* The initial state `param` [B, dirs*H] (or [1, B, dirs*H]) split per direction
 * into st[d] (B*H each). */
static bool rnn_state(struct mx *c, const struct rnn_io *r, const char *param, float *st)
{
	const struct al_tensor *t = mx_req(c, param);
	int64_t DH = r->dirs * r->H;
	if (!t)
		return false;
	if ((int64_t)t->n != r->B * DH)
		return mx_fail(c, AL_E_FORMAT, "'%s' must hold B x %lld values", param, (long long)DH),
		       false;
	for (int d = 0; d < r->dirs; d++)
		for (int64_t b = 0; b < r->B; b++)
			memcpy(st + (d * r->B + b) * r->H, t->f + b * DH + d * r->H,
			       (size_t)r->H * sizeof(float));
	return true;
}

/* Outputs: 0 = the sequence [T, B, dirs*H] (or the last step [1, B, dirs*H]),
 * then the final states [B, dirs*H] (h, and c for the lstm). ys[d] is direction
 * d's output [T, B, H] in time order; a unidirectional reverse op gives its
 * sequence in processing order (coremltools' reference does). */
static enum al_status rnn_outputs(struct mx *c, const struct rnn_io *r, float *const *ys,
				  const float *h, const float *cst)
{
	int64_t DH = r->dirs * r->H, T = r->T, B = r->B, H = r->H;
	int64_t d0[3] = {r->seq ? T : 1, B, DH}, d1[2] = {B, DH};
	int dt = mx_fdtype(r->x);
	struct al_tensor *y = mx_alloc(c, 0, dt, 3, d0);
	if (!y)
		return c->st;
	for (int64_t t = 0; t < d0[0]; t++)
		for (int d = 0; d < r->dirs; d++) {
			int64_t src;
			if (r->seq)
				src = r->dirs == 1 && r->reverse ? T - 1 - t : t;
			else /* the last step each direction took */
				src = (r->dirs == 2 && d == 1) || r->reverse ? 0 : T - 1;
			for (int64_t b = 0; b < B; b++)
				memcpy(y->f + (t * B + b) * DH + d * H, ys[d] + (src * B + b) * H,
				       (size_t)H * sizeof(float));
		}
	for (uint32_t o = 1; o < c->n_out && o < 3; o++) {
		const float *s = o == 1 ? h : cst;
		if (!s)
			break;
		struct al_tensor *t = mx_alloc(c, o, dt, 2, d1);
		for (int d = 0; t && d < r->dirs; d++)
			for (int64_t b = 0; b < B; b++)
				memcpy(t->f + b * DH + d * H, s + (d * B + b) * H, (size_t)H * sizeof(float));
	}
	return c->st;
}

/* Scratch for the recurrent ops: states and per-direction outputs. */
static float *scratch(struct mx *c, size_t n)
{
	if (n > AL_TENSOR_MAX_ELEMS) {
		mx_fail(c, AL_E_UNSUPPORTED, "a recurrent state of %zu values", n);
		return NULL;
	}
	float *p = ali_calloc(n ? n : 1, sizeof(float));
	if (!p)
		mx_fail(c, AL_E_NOMEM, "out of memory");
	return p;
}

enum al_status mx_lstm(struct mx *c, int arg)
{
	(void)arg;
	struct rnn_io r;
	struct al_lstm p[2];
	double clip;
	memset(p, 0, sizeof p);
	if (!rnn_io(c, &r, 4, true) || !rnn_act(c, "recurrent_activation", "sigmoid", &p[0].f1) ||
	    !rnn_act(c, "cell_activation", "tanh", &p[0].f2) || !rnn_act(c, "activation", "tanh", &p[0].f3) ||
	    !mx_float(c, "clip", 0, &clip))
		return c->st;
	static const char *const names[2][4] = {{"weight_ih", "weight_hh", "bias", "peephole"},
						{"weight_ih_back", "weight_hh_back", "bias_back",
						 "peephole_back"}};
	int64_t H = r.H;
	for (int d = 0; d < r.dirs; d++) {
		p[d] = p[0];
		p[d].T = r.T, p[d].B = r.B, p[d].I = r.I, p[d].H = H;
		p[d].clip = clip > 0 ? (float)clip : 0;
		p[d].reverse = d == 1 || r.reverse;
		p[d].wx = rnn_w(c, names[d][0], 4 * H, r.I, true);
		p[d].wh = p[d].wx ? rnn_w(c, names[d][1], 4 * H, H, true) : NULL;
		p[d].bias = rnn_w(c, names[d][2], 4 * H, 1, false);
		p[d].peep = rnn_w(c, names[d][3], 3 * H, 1, false);
		if (c->st != AL_OK)
			return c->st;
	}
	size_t sn = (size_t)(r.dirs * r.B * H), yn = (size_t)(r.T * r.B * H);
	float *h = scratch(c, sn), *cs = h ? scratch(c, sn) : NULL;
	float *ys[2] = {cs ? scratch(c, yn) : NULL, NULL};
	if (r.dirs == 2 && ys[0])
		ys[1] = scratch(c, yn);
	if (c->st == AL_OK && rnn_state(c, &r, "initial_h", h) && rnn_state(c, &r, "initial_c", cs)) {
		for (int d = 0; d < r.dirs && c->st == AL_OK; d++)
			if (!ali_lstm_run(&p[d], r.x->f, h + d * r.B * H, cs + d * r.B * H, ys[d]))
				mx_fail(c, AL_E_NOMEM, "out of memory (lstm scratch)");
		if (c->st == AL_OK)
			rnn_outputs(c, &r, ys, h, cs);
	}
	ali_free(h);
	ali_free(cs);
	ali_free(ys[0]);
	ali_free(ys[1]);
	return c->st;
}

/* gru: weights in r, o, z order (reset, output, update) reordered to the
 * kernel's z, r, o. iOS15-17: one bias, the reset gate applied to h before the
 * recurrent product (the definition's reference). iOS18 adds reset_after (the
 * reset gate applied to the recurrent product plus `bias`, PyTorch's form) and
 * input_bias (the input side). */
enum al_status mx_gru(struct mx *c, int arg)
{
	(void)arg;
	struct rnn_io r;
	struct al_gru p;
	bool after;
	memset(&p, 0, sizeof p);
	if (!rnn_io(c, &r, 3, false) || !rnn_act(c, "recurrent_activation", "sigmoid", &p.f1) ||
	    !rnn_act(c, "activation", "tanh", &p.f2) || !mx_bool(c, "reset_after", false, &after))
		return c->st;
	int64_t H = r.H, I = r.I;
	const float *wx = rnn_w(c, "weight_ih", 3 * H, I, true);
	const float *wh = wx ? rnn_w(c, "weight_hh", 3 * H, H, true) : NULL;
	const float *bias = wh ? rnn_w(c, "bias", 3 * H, 1, false) : NULL;
	const float *ibias = wh ? rnn_w(c, "input_bias", 3 * H, 1, false) : NULL;
	if (c->st != AL_OK)
		return c->st;
	size_t nx = (size_t)(3 * H * I), nh = (size_t)(3 * H * H), nb = (size_t)(3 * H);
	float *w = scratch(c, nx + nh + 2 * nb);
	float *h = w ? scratch(c, (size_t)(r.B * H)) : NULL;
	float *ys[2] = {h ? scratch(c, (size_t)(r.T * r.B * H)) : NULL, NULL};
	if (c->st == AL_OK) {
		static const int from[3] = {2, 0, 1}; /* kernel gate g takes MIL block from[g] */
		float *bi = w + nx + nh, *bh = bi + nb;
		for (int g = 0; g < 3; g++) {
			memcpy(w + g * H * I, wx + from[g] * H * I, (size_t)(H * I) * sizeof(float));
			memcpy(w + nx + g * H * H, wh + from[g] * H * H, (size_t)(H * H) * sizeof(float));
			for (int64_t k = 0; k < H; k++) {
				float b = bias ? bias[from[g] * H + k] : 0, ib = ibias ? ibias[from[g] * H + k] : 0;
				bi[g * H + k] = after ? ib : b + ib;
				bh[g * H + k] = after ? b : 0;
			}
		}
		p.T = r.T, p.B = r.B, p.I = I, p.H = H;
		p.wx = w, p.wh = w + nx, p.bias = bi, p.bias_h = after ? bh : NULL;
		p.reverse = r.reverse, p.reset_after = after;
		if (rnn_state(c, &r, "initial_h", h)) {
			if (!ali_gru_run(&p, r.x->f, h, ys[0]))
				mx_fail(c, AL_E_NOMEM, "out of memory (gru scratch)");
			else
				rnn_outputs(c, &r, ys, h, NULL);
		}
	}
	ali_free(w);
	ali_free(h);
	ali_free(ys[0]);
	return c->st;
}

enum al_status mx_rnn(struct mx *c, int arg)
{
	(void)arg;
	struct rnn_io r;
	struct al_rnn p;
	memset(&p, 0, sizeof p);
	if (!rnn_io(c, &r, 1, false) || !rnn_act(c, "activation", "tanh", &p.f))
		return c->st;
	p.T = r.T, p.B = r.B, p.I = r.I, p.H = r.H, p.reverse = r.reverse;
	p.wx = rnn_w(c, "weight_ih", r.H, r.I, true);
	p.wh = p.wx ? rnn_w(c, "weight_hh", r.H, r.H, true) : NULL;
	p.bias = p.wh ? rnn_w(c, "bias", r.H, 1, false) : NULL;
	if (c->st != AL_OK)
		return c->st;
	float *h = scratch(c, (size_t)(r.B * r.H));
	float *ys[2] = {h ? scratch(c, (size_t)(r.T * r.B * r.H)) : NULL, NULL};
	if (c->st == AL_OK && rnn_state(c, &r, "initial_h", h)) {
		if (!ali_rnn_run(&p, r.x->f, h, ys[0]))
			mx_fail(c, AL_E_NOMEM, "out of memory (rnn scratch)");
		else
			rnn_outputs(c, &r, ys, h, NULL);
	}
	ali_free(h);
	ali_free(ys[0]);
	return c->st;
}

/* ================================================================ classify */

/* classify: probabilities [N] (or [1, N]) and the literal `classes` (strings
 * or integers). Output 0 the label of the largest probability (the first of
 * ties), output 1 the probabilities as a dictionary (labels in the model's
 * memory, which the dictionary borrows). */
enum al_status mx_classify(struct mx *c, int arg)
{
	(void)arg;
	al_span v;
	struct al_tensor *pr = mx_req(c, "probabilities");
	if (!pr)
		return c->st;
	if (ali_mil_param_binding(c->n, "classes", 0, &v) != 2)
		return mx_fail(c, AL_E_UNSUPPORTED, "classes must be a literal list");
	long ns = ali_mil_value_strings(v, NULL, 0), ni = ns < 0 ? ali_mil_value_list_ints(v, NULL, 0) : -1;
	long n = ns >= 0 ? ns : ni;
	if (n < 0)
		return mx_fail(c, AL_E_UNSUPPORTED, "classes must be strings or integers");
	if ((size_t)n != pr->n || n == 0)
		return mx_fail(c, AL_E_FORMAT, "%ld classes for %zu probabilities", n, pr->n);
	struct al_arena *ar = &c->x->m->arena;
	char **labels = ali_arena_array(ar, (size_t)n, sizeof *labels);
	al_span *sp = ns >= 0 ? ali_calloc((size_t)n, sizeof *sp) : NULL;
	int64_t *iv = ns < 0 ? ali_calloc((size_t)n, sizeof *iv) : NULL;
	if (!labels || (!sp && !iv)) {
		ali_free(sp);
		ali_free(iv);
		return mx_fail(c, AL_E_NOMEM, "out of memory");
	}
	if (sp)
		ali_mil_value_strings(v, sp, (size_t)n);
	else
		ali_mil_value_list_ints(v, iv, (size_t)n);
	for (long i = 0; i < n && c->st == AL_OK; i++) {
		labels[i] = sp ? ali_arena_span_str(ar, sp[i]) : ali_arena_printf(ar, "%lld", (long long)iv[i]);
		if (!labels[i])
			mx_fail(c, AL_E_NOMEM, "out of memory");
	}
	size_t best = 0;
	for (size_t i = 1; i < pr->n; i++)
		if (pr->f[i] > pr->f[best])
			best = i;
	if (c->st == AL_OK) {
		struct al_tensor *lab = mx_alloc(c, 0, sp ? AL_DT_STRING : AL_DT_INT64, 0, NULL);
		if (lab && sp && !(lab->s[0] = ali_strdup(labels[best])))
			mx_fail(c, AL_E_NOMEM, "out of memory");
		else if (lab && !sp)
			lab->f[0] = (float)iv[best];
	}
	if (c->st == AL_OK && c->n_out > 1) {
		int64_t dn = n;
		struct al_tensor *d = mx_alloc(c, 1, AL_DT_FP64, 1, &dn);
		if (d) {
			memcpy(d->f, pr->f, pr->n * sizeof(float));
			d->labels = (const char *const *)labels;
		}
	}
	ali_free(sp);
	ali_free(iv);
	return c->st;
}
