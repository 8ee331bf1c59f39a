/* SPDX-License-Identifier: MIT */
/* shapes_mil.c: output shapes of the main ML Program ops, inferred from the
 * input shapes and the ops' const parameters (ali_mil_param_ints & co.), so that
 * shapes.c can check them against the types the file declares and fill in
 * declared dims that are unknown. The formulas follow the MIL op definitions
 * (coremltools ops/defs iOS15..iOS18). An op not in the table, or a parameter
 * that is not a constant, leaves the declared type alone; weights are never read.
 */
#include "shapes.h"
#include "mil_fields.h"

#include <math.h>
#include <string.h>
#include <stdlib.h>

#define MAXV 16 /* values read from one const parameter */

/* ================================================================ bindings */

/* The Argument entry of `param` is ali_mil_find_arg's (mil_fields.h), with its
 * bindings as the loader read them (mil.c parse_inputs: kind, and for a name
 * its position in n->inputs). */

uint32_t shp_mil_param_count(const struct al_node *n, const char *param)
{
	const struct al_mil_arg *a = ali_mil_find_arg(n, param);
	return a ? a->n_binds : 0;
}

/* Value.type (ValueType.tensorType) of a literal as a shape. */
static bool literal_shape(al_span val, struct al_shape *out)
{
	struct ali_mil_tensor_type tt;
	if (!ali_mil_value_tensor_type(val, &tt))
		return false;
	uint64_t dt = tt.dtype;
	int64_t dims[AL_SHAPE_MAX_RANK];
	size_t n = tt.n_dims;
	if (tt.err || n > AL_SHAPE_MAX_RANK)
		return false;
	for (size_t i = 0; i < n; i++)
		dims[i] = tt.constant[i] && tt.size[i] <= INT64_MAX ? (int64_t)tt.size[i] : AL_DIM_UNKNOWN;
	shp_from(out, dims, n, dt <= 64 ? (int)dt : AL_DT_UNKNOWN);
	return true;
}

bool shp_mil_param(const struct al_node *n, const struct al_shape *const *in, uint32_t n_in,
		   const char *param, uint32_t k, struct al_shape *out)
{
	shp_unknown(out);
	const struct al_mil_arg *a = ali_mil_find_arg(n, param);
	if (!a || k >= a->n_binds)
		return false;
	const struct al_mil_bind *b = &a->binds[k];
	if (b->kind == 2)
		return literal_shape(b->data, out);
	uint32_t idx = b->input; /* its name's position in n->inputs */
	if (b->kind != 1 || !in || idx >= n_in || !in[idx])
		return false;
	*out = *in[idx];
	return true;
}

/* ================================================================ helpers */

/* The shape bound to `param` (first binding); false when absent or rank unknown. */
static bool P(const struct shp_node *x, const char *param, struct al_shape *s)
{
	return shp_mil_param(x->n, x->in, x->n_in, param, 0, s) && s->rank >= 0;
}

/* Const ints of `param` into v (count in *n); false when not a readable
 * constant or longer than MAXV. An absent param gives true with *n = 0. */
static bool ints(const struct shp_node *x, const char *param, int64_t *v, size_t *n)
{
	long k = ali_mil_param_ints(x->n, param, v, MAXV);
	*n = k > 0 ? (size_t)k : 0;
	return k >= 0 && k <= MAXV;
}

static int64_t int1(const struct shp_node *x, const char *param, int64_t def)
{
	int64_t v[MAXV];
	size_t n;
	return ints(x, param, v, &n) && n == 1 ? v[0] : def;
}

static bool flag(const struct shp_node *x, const char *param)
{
	return int1(x, param, 0) != 0;
}

static int dtype_named(const char *s)
{
	static const struct { const char *name; int dt; } t[] = {
		{"fp16", AL_DT_FP16}, {"fp32", AL_DT_FP32}, {"fp64", AL_DT_FP64}, {"int8", AL_DT_INT8},
		{"uint8", AL_DT_UINT8}, {"int16", AL_DT_INT16}, {"uint16", AL_DT_UINT16},
		{"int32", AL_DT_INT32}, {"uint32", AL_DT_UINT32}, {"int64", AL_DT_INT64},
		{"bool", AL_DT_BOOL},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (strcmp(t[i].name, s) == 0)
			return t[i].dt;
	return AL_DT_UNKNOWN;
}

/* One spatial axis of conv / pooling (coremltools _utils.spatial_dimensions_out_shape):
 * total padding from the pad type, then floor (or ceil_mode) of the windows. */
static int64_t window(int64_t in, int64_t k, int64_t st, int64_t dil, int64_t pa, int64_t pb,
		      const char *pad_type, bool ceil_mode)
{
	if (in < 0 || k < 1 || st < 1 || dil < 1 || pa < 0 || pb < 0)
		return AL_DIM_UNKNOWN;
	int64_t keff = dim_add(dim_mul(k - 1, dil), 1), pad;
	if (strcmp(pad_type, "same") == 0 || strcmp(pad_type, "same_lower") == 0) {
		int64_t t = dim_sub(dim_add(dim_mul(st, dim_div_ceil(in, st)), keff), dim_add(in, st));
		pad = t < 0 ? 0 : t; /* unknown (negative) means max(0, .) = 0 */
	} else if (strcmp(pad_type, "custom") == 0) {
		pad = dim_add(pa, pb);
	} else if (strcmp(pad_type, "valid") == 0) {
		pad = 0;
	} else {
		return AL_DIM_UNKNOWN;
	}
	int64_t span = dim_sub(dim_add(in, pad), keff);
	if (span < 0)
		return AL_DIM_UNKNOWN;
	if (!ceil_mode)
		return dim_add(span / st, 1);
	int64_t o = dim_add(dim_add(span, st - 1) / st, 1);
	if (o >= 1 && pad > 0 && dim_mul(2, dim_mul(o - 1, st)) >= dim_add(dim_mul(2, in), pad))
		o--;
	return o;
}

static void pad_type_of(const struct shp_node *x, char *buf, size_t cap)
{
	if (!ali_mil_param_string(x->n, "pad_type", buf, cap))
		snprintf(buf, cap, "valid");
}

/* ================================================================ op shape functions */

typedef bool mil_fn(const struct shp_node *x, const char *arg);

/* Same shape as input `arg` (default "x"). */
static bool m_same(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	if (!x->n_out || !P(x, arg ? arg : "x", &s))
		return false;
	x->out[0] = s;
	return true;
}

/* cast: x's shape, dtype named by `dtype`. */
static bool m_cast(const struct shp_node *x, const char *arg)
{
	char dt[16];
	(void)arg;
	if (!m_same(x, "x"))
		return false;
	if (ali_mil_param_string(x->n, "dtype", dt, sizeof dt))
		x->out[0].dtype = dtype_named(dt);
	return true;
}

/* Elementwise binary ops: broadcast of x and y; `arg` "bool" for comparisons. */
static bool m_binary(const struct shp_node *x, const char *arg)
{
	struct al_shape a, b;
	if (!x->n_out || !P(x, "x", &a) || !P(x, "y", &b))
		return false;
	if (!shp_broadcast(&a, &b, &x->out[0]))
		return false; /* incompatible: leave the declared type to speak */
	if (arg)
		x->out[0].dtype = AL_DT_BOOL;
	return true;
}

/* select: broadcast of cond, a and b. */
static bool m_select(const struct shp_node *x, const char *arg)
{
	struct al_shape c, a, b, t;
	(void)arg;
	if (!x->n_out || !P(x, "cond", &c) || !P(x, "a", &a) || !P(x, "b", &b))
		return false;
	if (!shp_broadcast(&c, &a, &t) || !shp_broadcast(&t, &b, &x->out[0]))
		return false;
	x->out[0].dtype = a.dtype;
	return true;
}

/* Read strides / dilations (n values, default 1) and pad (2n, default 0). */
static bool conv_params(const struct shp_node *x, int nsp, int64_t *st, int64_t *dl, int64_t *pad)
{
	size_t n;
	for (int i = 0; i < nsp; i++) {
		st[i] = dl[i] = 1;
		pad[2 * i] = pad[2 * i + 1] = 0;
	}
	int64_t v[MAXV];
	if (!ints(x, "strides", v, &n) || (n && n != (size_t)nsp))
		return false;
	for (size_t i = 0; i < n; i++)
		st[i] = v[i];
	if (!ints(x, "dilations", v, &n) || (n && n != (size_t)nsp))
		return false;
	for (size_t i = 0; i < n; i++)
		dl[i] = v[i];
	if (!ints(x, "pad", v, &n) || (n && n != 2 * (size_t)nsp))
		return false;
	for (size_t i = 0; i < n; i++)
		pad[i] = v[i];
	return true;
}

/* x [N, C, *D] with 1 to 3 spatial dims and a weight of the same rank. */
static bool conv_inputs(const struct shp_node *x, struct al_shape *s, struct al_shape *w)
{
	return x->n_out && P(x, "x", s) && P(x, "weight", w) && s->rank >= 3 && s->rank <= 5 &&
	       w->rank == s->rank;
}

/* conv: x [N, Cin, *D], weight [Cout, Cin/groups, *K] -> [N, Cout, *D_out]. */
static bool m_conv(const struct shp_node *x, const char *arg)
{
	struct al_shape s, w;
	(void)arg;
	if (!conv_inputs(x, &s, &w))
		return false;
	int nsp = s.rank - 2;
	int64_t st[3], dl[3], pad[6];
	char pt[16];
	if (!conv_params(x, nsp, st, dl, pad))
		return false;
	pad_type_of(x, pt, sizeof pt);
	struct al_shape *o = &x->out[0];
	*o = s;
	shp_set(o, 1, shp_dim(&w, 0), false);
	for (int i = 0; i < nsp; i++)
		shp_set(o, 2 + i,
			window(shp_dim(&s, 2 + i), shp_dim(&w, 2 + i), st[i], dl[i], pad[2 * i], pad[2 * i + 1],
			       pt, false),
			shp_flex(&s, 2 + i));
	return true;
}

/* conv_transpose: weight [Cin, Cout/groups, *K]; output_shape (full) when given. */
static bool m_conv_transpose(const struct shp_node *x, const char *arg)
{
	struct al_shape s, w;
	(void)arg;
	if (!conv_inputs(x, &s, &w))
		return false;
	int nsp = s.rank - 2;
	struct al_shape *o = &x->out[0];
	int64_t os[MAXV];
	size_t no;
	if (ints(x, "output_shape", os, &no) && no == (size_t)s.rank) {
		shp_from(o, os, no, s.dtype);
		return true;
	}
	int64_t st[3], dl[3], pad[6];
	char pt[16];
	if (!conv_params(x, nsp, st, dl, pad))
		return false;
	pad_type_of(x, pt, sizeof pt);
	int64_t g = int1(x, "groups", 1);
	*o = s;
	shp_set(o, 1, g > 0 ? dim_mul(shp_dim(&w, 1), g) : AL_DIM_UNKNOWN, false);
	for (int i = 0; i < nsp; i++) {
		int64_t d = shp_dim(&s, 2 + i), k = shp_dim(&w, 2 + i), v;
		int64_t keff = k >= 1 && dl[i] >= 1 ? dim_add(dim_mul(k - 1, dl[i]), 1) : AL_DIM_UNKNOWN;
		if (d < 1 || st[i] < 1 || keff < 0)
			v = AL_DIM_UNKNOWN;
		else if (strcmp(pt, "same") == 0)
			v = dim_mul(d, st[i]);
		else if (strcmp(pt, "valid") == 0)
			v = dim_add(dim_mul(d - 1, st[i]), keff);
		else if (strcmp(pt, "custom") == 0)
			v = dim_sub(dim_add(dim_mul(d - 1, st[i]), keff), dim_add(pad[2 * i], pad[2 * i + 1]));
		else
			v = AL_DIM_UNKNOWN;
		shp_set(o, 2 + i, v, shp_flex(&s, 2 + i));
	}
	return true;
}

/* avg_pool / max_pool / l2_pool: kernel_sizes, strides, pad_type, pad, ceil_mode. */
static bool m_pool(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	(void)arg;
	if (!x->n_out || !P(x, "x", &s) || s.rank < 3 || s.rank > 5)
		return false;
	int nsp = s.rank - 2;
	int64_t k[MAXV], st[3], dl[3], pad[6];
	size_t nk;
	char pt[16];
	if (!ints(x, "kernel_sizes", k, &nk) || nk != (size_t)nsp || !conv_params(x, nsp, st, dl, pad))
		return false;
	pad_type_of(x, pt, sizeof pt);
	bool ceil_mode = flag(x, "ceil_mode");
	struct al_shape *o = &x->out[0];
	*o = s;
	for (int i = 0; i < nsp; i++)
		shp_set(o, 2 + i,
			window(shp_dim(&s, 2 + i), k[i], st[i], 1, pad[2 * i], pad[2 * i + 1], pt, ceil_mode),
			shp_flex(&s, 2 + i));
	return true;
}

/* The matrix product shape of a [..., M, K] and b [..., K, N] (batch broadcast,
 * rank-1 operands promoted and dropped as numpy does). */
static bool matmul_of(struct al_shape *o, const struct al_shape *a, const struct al_shape *b, bool ta,
		      bool tb)
{
	struct al_shape t;
	if (a->rank > AL_SHAPE_MAX_RANK || b->rank > AL_SHAPE_MAX_RANK ||
	    !shp_matmul(&t, a, b, ta, tb, a->dtype))
		return false;
	*o = t;
	return true;
}

static bool m_matmul(const struct shp_node *x, const char *arg)
{
	struct al_shape a, b;
	(void)arg;
	return x->n_out && P(x, "x", &a) && P(x, "y", &b) &&
	       matmul_of(&x->out[0], &a, &b, flag(x, "transpose_x"), flag(x, "transpose_y"));
}

/* linear: x [..., Din], weight [Dout, Din] -> [..., Dout]. */
static bool m_linear(const struct shp_node *x, const char *arg)
{
	struct al_shape s, w;
	(void)arg;
	if (!x->n_out || !P(x, "x", &s) || !P(x, "weight", &w) || s.rank < 1 || w.rank != 2)
		return false;
	x->out[0] = s;
	shp_set(&x->out[0], s.rank - 1, shp_dim(&w, 0), false);
	return true;
}

/* reshape: shape (const; -1 inferred, 0 copies x's dim). */
static bool m_reshape(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	int64_t t[MAXV];
	size_t n;
	(void)arg;
	if (!x->n_out || !P(x, "x", &s) || !ints(x, "shape", t, &n) || !ali_mil_param_present(x->n, "shape"))
		return false;
	struct al_shape *o = &x->out[0];
	shp_rank(o, (int)n, s.dtype);
	int infer = -1;
	int64_t known = 1;
	bool fl = false;
	int64_t total = shp_prod(&s, 0, s.rank, &fl);
	for (size_t i = 0; i < n; i++) {
		if (t[i] == -1 && infer < 0) {
			infer = (int)i;
		} else if (t[i] == 0 && (int)i < s.rank) {
			shp_copy_dim(o, (int)i, &s, (int)i);
			known = dim_mul(known, shp_dim(&s, (int)i));
		} else {
			shp_set(o, (int)i, t[i], false);
			known = dim_mul(known, t[i] >= 0 ? t[i] : AL_DIM_UNKNOWN);
		}
	}
	if (infer >= 0)
		shp_set(o, infer, known > 0 && total >= 0 && total % known == 0 ? total / known : AL_DIM_UNKNOWN,
			fl);
	return true;
}

/* transpose: perm. */
static bool m_transpose(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	int64_t p[MAXV];
	size_t n;
	(void)arg;
	if (!x->n_out || !P(x, "x", &s) || !ints(x, "perm", p, &n) || n != (size_t)s.rank)
		return false;
	struct al_shape *o = &x->out[0];
	shp_rank(o, s.rank, s.dtype);
	unsigned seen = 0;
	for (size_t i = 0; i < n; i++) {
		int a = shp_axis(&s, p[i]);
		if (a < 0 || (seen >> a & 1))
			return false;
		seen |= 1u << a;
		shp_copy_dim(o, (int)i, &s, a);
	}
	return true;
}

/* concat: values (variadic), axis: the sum along axis. */
static bool m_concat(const struct shp_node *x, const char *arg)
{
	(void)arg;
	uint32_t nv = shp_mil_param_count(x->n, "values");
	struct al_shape s;
	if (!x->n_out || !nv || !shp_mil_param(x->n, x->in, x->n_in, "values", 0, &s) || s.rank < 0)
		return false;
	int64_t ax = int1(x, "axis", INT64_MIN);
	int a = ax == INT64_MIN ? -1 : shp_axis(&s, ax);
	if (a < 0)
		return false;
	int64_t sum = 0;
	bool fl = false;
	for (uint32_t i = 0; i < nv; i++) {
		struct al_shape t;
		if (!shp_mil_param(x->n, x->in, x->n_in, "values", i, &t) || t.rank != s.rank) {
			sum = AL_DIM_UNKNOWN;
			break;
		}
		fl |= shp_flex(&t, a);
		sum = dim_add(sum, shp_dim(&t, a));
	}
	x->out[0] = s;
	shp_set(&x->out[0], a, sum, fl);
	return true;
}

/* stack: values, axis: a new axis of size len(values). */
static bool m_stack(const struct shp_node *x, const char *arg)
{
	(void)arg;
	uint32_t nv = shp_mil_param_count(x->n, "values");
	struct al_shape s;
	if (!x->n_out || !nv || !shp_mil_param(x->n, x->in, x->n_in, "values", 0, &s) || s.rank < 0)
		return false;
	int64_t ax = int1(x, "axis", INT64_MIN);
	int r = s.rank + 1;
	if (ax == INT64_MIN)
		return false;
	if (ax < 0)
		ax += r;
	if (ax < 0 || ax >= r)
		return false;
	struct al_shape *o = &x->out[0];
	shp_rank(o, r, s.dtype);
	for (int i = 0, j = 0; i < r; i++)
		if (i == ax)
			shp_set(o, i, nv, false);
		else
			shp_copy_dim(o, i, &s, j++);
	return true;
}

/* split: num_splits or split_sizes along axis. */
static bool m_split(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	(void)arg;
	if (!P(x, "x", &s))
		return false;
	int a = shp_axis(&s, int1(x, "axis", INT64_MIN));
	int64_t sz[MAXV];
	size_t nsz;
	if (a < 0 || !ints(x, "split_sizes", sz, &nsz))
		return false;
	int64_t ns = int1(x, "num_splits", 0), d = shp_dim(&s, a);
	if (nsz && nsz != x->n_out)
		return false;
	if (!nsz && ns <= 0)
		ns = x->n_out;
	for (uint32_t o = 0; o < x->n_out; o++) {
		x->out[o] = s;
		int64_t v = nsz ? sz[o] : (d >= 0 && ns > 0 && d % ns == 0 ? d / ns : AL_DIM_UNKNOWN);
		shp_set(&x->out[o], a, v, false);
	}
	return true;
}

/* Reduce axes m (bit mask) of s: keep them as 1 or drop them. */
static void reduce_mask(struct al_shape *o, const struct al_shape *s, unsigned m, bool keep, int dtype)
{
	shp_rank(o, 0, dtype);
	int r = 0;
	for (int i = 0; i < s->rank && i < AL_SHAPE_MAX_RANK; i++) {
		bool red = m >> i & 1;
		if (red && !keep)
			continue;
		o->rank = r + 1;
		if (red)
			shp_set(o, r++, 1, false);
		else
			shp_copy_dim(o, r++, s, i);
	}
}

/* reduce_*: axes (absent: all), keep_dims (default false). */
static bool m_reduce(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	int64_t a[MAXV];
	size_t n;
	(void)arg;
	if (!x->n_out || !P(x, "x", &s) || s.rank > AL_SHAPE_MAX_RANK || !ints(x, "axes", a, &n))
		return false;
	unsigned m = 0;
	if (!ali_mil_param_present(x->n, "axes"))
		m = (1u << s.rank) - 1;
	for (size_t i = 0; i < n; i++) {
		int ax = shp_axis(&s, a[i]);
		if (ax < 0)
			return false;
		m |= 1u << ax;
	}
	reduce_mask(&x->out[0], &s, m, flag(x, "keep_dims"), s.dtype);
	return true;
}

/* reduce_argmax / reduce_argmin: axis (default -1), keep_dims; int32 result. */
static bool m_argreduce(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	(void)arg;
	if (!x->n_out || !P(x, "x", &s) || s.rank > AL_SHAPE_MAX_RANK)
		return false;
	int a = shp_axis(&s, int1(x, "axis", -1));
	if (a < 0)
		return false;
	reduce_mask(&x->out[0], &s, 1u << a, flag(x, "keep_dims"), AL_DT_INT32);
	return true;
}

/* A scale parameter read as a number (int in iOS15, float from iOS16). */
static bool scale_of(const struct shp_node *x, const char *param, double *v)
{
	double d[2];
	long k = ali_mil_param_floats(x->n, param, d, 2);
	if (k == 0) {
		*v = 1;
		return true;
	}
	if (k != 1 || !isfinite(d[0]) || d[0] <= 0)
		return false;
	*v = d[0];
	return true;
}

static int64_t scaled(int64_t d, double f)
{
	if (d < 0)
		return AL_DIM_UNKNOWN;
	double t = floor((double)d * f);
	return t >= 0 && t < 9e15 ? (int64_t)t : AL_DIM_UNKNOWN;
}

/* upsample_nearest_neighbor / upsample_bilinear: scale_factor_height/width. */
static bool m_upsample(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	double fh, fw;
	(void)arg;
	if (!x->n_out || !P(x, "x", &s) || s.rank < 3 || !scale_of(x, "scale_factor_height", &fh) ||
	    !scale_of(x, "scale_factor_width", &fw))
		return false;
	struct al_shape *o = &x->out[0];
	*o = s;
	shp_set(o, s.rank - 2, scaled(shp_dim(&s, s.rank - 2), fh), shp_flex(&s, s.rank - 2));
	shp_set(o, s.rank - 1, scaled(shp_dim(&s, s.rank - 1), fw), shp_flex(&s, s.rank - 1));
	return true;
}

/* resize_bilinear / resize_nearest_neighbor: target_size_height/width. */
static bool m_resize(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	(void)arg;
	if (!x->n_out || !P(x, "x", &s) || s.rank < 3)
		return false;
	int64_t h = int1(x, "target_size_height", -1), w = int1(x, "target_size_width", -1);
	if (h < 0 || w < 0)
		return false;
	x->out[0] = s;
	shp_set(&x->out[0], s.rank - 2, h, false);
	shp_set(&x->out[0], s.rank - 1, w, false);
	return true;
}

/* Elements of python slice [b:e:st] of a dim of size d (masks take the whole
 * side); d unknown still decides the cases coremltools decides without it. */
static int64_t slice_len(int64_t d, bool hb, int64_t b, bool he, int64_t e, int64_t st, bool bm, bool em)
{
	if (st == INT64_MIN)
		return AL_DIM_UNKNOWN;
	return shp_slice_count(d, b, e, st, bm || !hb, em || !he, true);
}

/* slice_by_index: begin, end, stride, begin_mask, end_mask, squeeze_mask (consts). */
static bool m_slice_by_index(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	int64_t b[MAXV], e[MAXV], st[MAXV], bm[MAXV], em[MAXV], sq[MAXV];
	size_t nb, ne, ns, nbm, nem, nsq;
	(void)arg;
	if (!x->n_out || !P(x, "x", &s) || s.rank > MAXV || !ints(x, "begin", b, &nb) ||
	    !ints(x, "end", e, &ne) || !ints(x, "stride", st, &ns) || !ints(x, "begin_mask", bm, &nbm) ||
	    !ints(x, "end_mask", em, &nem) || !ints(x, "squeeze_mask", sq, &nsq))
		return false;
	size_t r = (size_t)s.rank;
	if ((nb && nb != r) || (ne && ne != r) || (ns && ns != r) || (nbm && nbm != r) ||
	    (nem && nem != r) || (nsq && nsq != r))
		return false;
	if ((!nb && ali_mil_param_present(x->n, "begin")) || (!ne && ali_mil_param_present(x->n, "end")))
		return false; /* bound but not constant */
	struct al_shape *o = &x->out[0];
	shp_rank(o, 0, s.dtype);
	int k = 0;
	for (size_t i = 0; i < r; i++) {
		if (nsq && sq[i])
			continue;
		int64_t stride = ns ? st[i] : 1;
		bool fb = nbm && bm[i], fe = nem && em[i];
		int64_t v = slice_len(shp_dim(&s, (int)i), nb > 0, nb ? b[i] : 0, ne > 0, ne ? e[i] : 0,
				      stride, fb, fe);
		bool whole = (fb || !nb) && (fe || !ne) && (stride == 1 || stride == -1);
		o->rank = k + 1;
		if (whole)
			shp_copy_dim(o, k++, &s, (int)i);
		else
			shp_set(o, k++, v, false);
	}
	return true;
}

/* slice_by_size: begin, size (-1 = to the end). */
static bool m_slice_by_size(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	int64_t b[MAXV], sz[MAXV];
	size_t nb, ns;
	(void)arg;
	if (!x->n_out || !P(x, "x", &s) || !ints(x, "size", sz, &ns) || ns != (size_t)s.rank)
		return false;
	bool have_b = ints(x, "begin", b, &nb) && nb == ns;
	x->out[0] = s;
	for (size_t i = 0; i < ns; i++) {
		int64_t v = sz[i];
		if (v < 0)
			v = have_b && b[i] >= 0 ? dim_sub(shp_dim(&s, (int)i), b[i]) : AL_DIM_UNKNOWN;
		shp_set(&x->out[0], (int)i, v, sz[i] < 0 && shp_flex(&s, (int)i));
	}
	return true;
}

/* expand_dims: axes (against the output rank). */
static bool m_expand_dims(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	int64_t a[MAXV];
	size_t n;
	(void)arg;
	if (!x->n_out || !P(x, "x", &s) || !ints(x, "axes", a, &n) || !n)
		return false;
	int r = s.rank + (int)n;
	unsigned m = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t ax = a[i] < 0 ? a[i] + r : a[i];
		if (ax < 0 || ax >= r || ax >= 32 || (m >> ax & 1))
			return false;
		m |= 1u << ax;
	}
	struct al_shape *o = &x->out[0];
	shp_rank(o, r, s.dtype);
	for (int i = 0, j = 0; i < r; i++)
		if (m >> i & 1)
			shp_set(o, i, 1, false);
		else
			shp_copy_dim(o, i, &s, j++);
	return true;
}

/* squeeze: axes (absent: every dim of size 1). */
static bool m_squeeze(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	int64_t a[MAXV];
	size_t n;
	(void)arg;
	if (!x->n_out || !P(x, "x", &s) || s.rank > AL_SHAPE_MAX_RANK || !ints(x, "axes", a, &n))
		return false;
	unsigned m = 0;
	if (!n) {
		if (ali_mil_param_present(x->n, "axes"))
			return false;
		for (int i = 0; i < s.rank; i++) {
			if (shp_dim(&s, i) < 0)
				return false;
			if (shp_dim(&s, i) == 1)
				m |= 1u << i;
		}
	}
	for (size_t i = 0; i < n; i++) {
		int ax = shp_axis(&s, a[i]);
		if (ax < 0)
			return false;
		m |= 1u << ax;
	}
	reduce_mask(&x->out[0], &s, m, false, s.dtype);
	return true;
}

/* gather: x[:axis] + indices[batch_dims:] + x[axis+1:]. */
static bool m_gather(const struct shp_node *x, const char *arg)
{
	struct al_shape d, idx;
	(void)arg;
	if (!x->n_out || !P(x, "x", &d) || !P(x, "indices", &idx))
		return false;
	int a = shp_axis(&d, int1(x, "axis", 0));
	int64_t bd = int1(x, "batch_dims", 0);
	if (a < 0 || bd < 0 || bd > idx.rank || bd > a)
		return false;
	int r = d.rank - 1 + idx.rank - (int)bd, k = 0;
	struct al_shape *o = &x->out[0];
	shp_rank(o, r, d.dtype);
	for (int i = 0; i < a; i++)
		shp_copy_dim(o, k++, &d, i);
	for (int i = (int)bd; i < idx.rank; i++)
		shp_copy_dim(o, k++, &idx, i);
	for (int i = a + 1; i < d.rank; i++)
		shp_copy_dim(o, k++, &d, i);
	return true;
}

/* gather_along_axis: the indices' shape, x's dtype. */
static bool m_gather_along_axis(const struct shp_node *x, const char *arg)
{
	struct al_shape d, idx;
	(void)arg;
	if (!x->n_out || !P(x, "x", &d) || !P(x, "indices", &idx))
		return false;
	x->out[0] = idx;
	x->out[0].dtype = d.dtype;
	return true;
}

/* tile: reps (one per axis). */
static bool m_tile(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	int64_t r[MAXV];
	size_t n;
	(void)arg;
	if (!x->n_out || !P(x, "x", &s) || !ints(x, "reps", r, &n) || n != (size_t)s.rank)
		return false;
	x->out[0] = s;
	for (size_t i = 0; i < n; i++)
		shp_set(&x->out[0], (int)i, r[i] >= 0 ? dim_mul(shp_dim(&s, (int)i), r[i]) : AL_DIM_UNKNOWN,
			shp_flex(&s, (int)i));
	return true;
}

/* pad: pad (begin/end pairs for the last len/2 axes). */
static bool m_pad(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	int64_t p[MAXV];
	size_t n;
	(void)arg;
	if (!x->n_out || !P(x, "x", &s) || !ints(x, "pad", p, &n) || !n || n % 2 ||
	    n / 2 > (size_t)s.rank)
		return false;
	x->out[0] = s;
	int first = s.rank - (int)(n / 2);
	for (int i = first; i < s.rank; i++) {
		int64_t a = p[2 * (i - first)], b = p[2 * (i - first) + 1];
		shp_set(&x->out[0], i, dim_add(dim_add(shp_dim(&s, i), a), b), shp_flex(&s, i));
	}
	return true;
}

/* shape: [rank] int32. */
static bool m_shape(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	(void)arg;
	if (!x->n_out || !P(x, "x", &s))
		return false;
	shp_rank(&x->out[0], 1, AL_DT_INT32);
	shp_set(&x->out[0], 0, s.rank, false);
	return true;
}

/* flatten2d: axis (default 1): [prod(:axis), prod(axis:)]. */
static bool m_flatten2d(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	(void)arg;
	if (!x->n_out || !P(x, "x", &s))
		return false;
	int64_t a = int1(x, "axis", 1);
	if (a < 0)
		a += s.rank;
	if (a < 0 || a > s.rank)
		return false;
	bool f0 = false, f1 = false;
	int64_t d0 = shp_prod(&s, 0, (int)a, &f0), d1 = shp_prod(&s, (int)a, s.rank, &f1);
	shp_rank(&x->out[0], 2, s.dtype);
	shp_set(&x->out[0], 0, d0, f0);
	shp_set(&x->out[0], 1, d1, f1);
	return true;
}

/* depth_to_space / pixel_shuffle (arg "up") and space_to_depth /
 * pixel_unshuffle ("down") on [N, C, H, W]. */
static bool m_block(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	if (!x->n_out || !P(x, "x", &s) || s.rank != 4)
		return false;
	const char *param = x->n->kind == AL_MILK_pixel_shuffle	  ? "upscale_factor"
			    : x->n->kind == AL_MILK_pixel_unshuffle ? "downscale_factor"
									 : "block_size";
	int64_t b = int1(x, param, 0), b2 = dim_mul(b, b);
	if (b < 1 || b2 < 1)
		return false;
	int64_t C = shp_dim(&s, 1), H = shp_dim(&s, 2), W = shp_dim(&s, 3);
	struct al_shape *o = &x->out[0];
	*o = s;
	if (strcmp(arg, "up") == 0) {
		shp_set(o, 1, C >= 0 && C % b2 == 0 ? C / b2 : AL_DIM_UNKNOWN, shp_flex(&s, 1));
		shp_set(o, 2, dim_mul(H, b), shp_flex(&s, 2));
		shp_set(o, 3, dim_mul(W, b), shp_flex(&s, 3));
	} else {
		shp_set(o, 1, dim_mul(C, b2), shp_flex(&s, 1));
		shp_set(o, 2, H >= 0 && H % b == 0 ? H / b : AL_DIM_UNKNOWN, shp_flex(&s, 2));
		shp_set(o, 3, W >= 0 && W % b == 0 ? W / b : AL_DIM_UNKNOWN, shp_flex(&s, 3));
	}
	return true;
}

/* topk / argsort: topk gives two outputs with axis (default -1) of size k. */
static bool m_topk(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	(void)arg;
	if (!P(x, "x", &s))
		return false;
	int a = shp_axis(&s, int1(x, "axis", -1));
	int64_t k = int1(x, "k", 1);
	if (a < 0 || k < 0)
		return false;
	for (uint32_t o = 0; o < x->n_out && o < 2; o++) {
		x->out[o] = s;
		shp_set(&x->out[o], a, k, false);
		if (o == 1)
			x->out[o].dtype = AL_DT_INT32;
	}
	return true;
}

/* crop: crop_height [2], crop_width [2] off the last two axes. */
static bool m_crop(const struct shp_node *x, const char *arg)
{
	struct al_shape s;
	int64_t h[MAXV], w[MAXV];
	size_t nh, nw;
	(void)arg;
	if (!x->n_out || !P(x, "x", &s) || s.rank < 2 || !ints(x, "crop_height", h, &nh) || nh != 2 ||
	    !ints(x, "crop_width", w, &nw) || nw != 2)
		return false;
	x->out[0] = s;
	int hi = s.rank - 2, wi = s.rank - 1;
	shp_set(&x->out[0], hi, dim_sub(shp_dim(&s, hi), dim_add(h[0], h[1])), shp_flex(&s, hi));
	shp_set(&x->out[0], wi, dim_sub(shp_dim(&s, wi), dim_add(w[0], w[1])), shp_flex(&s, wi));
	return true;
}

/* scaled_dot_product_attention: query [..., L, E], value [..., S, Ev] -> [..., L, Ev]. */
static bool m_sdpa(const struct shp_node *x, const char *arg)
{
	struct al_shape q, v;
	(void)arg;
	if (!x->n_out || !P(x, "query", &q) || !P(x, "value", &v) || q.rank < 2 || v.rank < 2)
		return false;
	x->out[0] = q;
	shp_copy_dim(&x->out[0], q.rank - 1, &v, v.rank - 1);
	return true;
}

/* ================================================================ the table */

struct mil_row {
	mil_fn *fn;
	const char *arg;
};

/* Indexed by kind. Kinds without a row (fn NULL): the declared types stand alone
 * (tests/unit/test_kinds.c lists them). */
static const struct mil_row rows[AL_MILK_COUNT] = {
	[AL_MILK_abs] = {m_same, NULL}, [AL_MILK_acos] = {m_same, NULL},
	[AL_MILK_add] = {m_binary, NULL}, [AL_MILK_argsort] = {m_same, NULL},
	[AL_MILK_asin] = {m_same, NULL}, [AL_MILK_atan] = {m_same, NULL},
	[AL_MILK_atanh] = {m_same, NULL}, [AL_MILK_avg_pool] = {m_pool, NULL},
	[AL_MILK_band_part] = {m_same, NULL}, [AL_MILK_batch_norm] = {m_same, NULL},
	[AL_MILK_cast] = {m_cast, NULL}, [AL_MILK_ceil] = {m_same, NULL},
	[AL_MILK_clamped_relu] = {m_same, NULL}, [AL_MILK_clip] = {m_same, NULL},
	[AL_MILK_concat] = {m_concat, NULL}, [AL_MILK_conv] = {m_conv, NULL},
	[AL_MILK_conv_transpose] = {m_conv_transpose, NULL}, [AL_MILK_cos] = {m_same, NULL},
	[AL_MILK_cosh] = {m_same, NULL}, [AL_MILK_crop] = {m_crop, NULL},
	[AL_MILK_cumsum] = {m_same, NULL}, [AL_MILK_depth_to_space] = {m_block, "up"},
	[AL_MILK_elu] = {m_same, NULL}, [AL_MILK_equal] = {m_binary, "bool"},
	[AL_MILK_erf] = {m_same, NULL}, [AL_MILK_exp] = {m_same, NULL},
	[AL_MILK_exp2] = {m_same, NULL}, [AL_MILK_expand_dims] = {m_expand_dims, NULL},
	[AL_MILK_fill_like] = {m_same, "ref_tensor"}, [AL_MILK_flatten2d] = {m_flatten2d, NULL},
	[AL_MILK_floor] = {m_same, NULL}, [AL_MILK_floor_div] = {m_binary, NULL},
	[AL_MILK_gather] = {m_gather, NULL},
	[AL_MILK_gather_along_axis] = {m_gather_along_axis, NULL}, [AL_MILK_gelu] = {m_same, NULL},
	[AL_MILK_greater] = {m_binary, "bool"}, [AL_MILK_greater_equal] = {m_binary, "bool"},
	[AL_MILK_identity] = {m_same, NULL}, [AL_MILK_instance_norm] = {m_same, NULL},
	[AL_MILK_inverse] = {m_same, NULL}, [AL_MILK_l2_norm] = {m_same, NULL},
	[AL_MILK_l2_pool] = {m_pool, NULL}, [AL_MILK_layer_norm] = {m_same, NULL},
	[AL_MILK_leaky_relu] = {m_same, NULL}, [AL_MILK_less] = {m_binary, "bool"},
	[AL_MILK_less_equal] = {m_binary, "bool"}, [AL_MILK_linear] = {m_linear, NULL},
	[AL_MILK_linear_activation] = {m_same, NULL},
	[AL_MILK_local_response_norm] = {m_same, NULL}, [AL_MILK_log] = {m_same, NULL},
	[AL_MILK_logical_and] = {m_binary, "bool"}, [AL_MILK_logical_not] = {m_same, NULL},
	[AL_MILK_logical_or] = {m_binary, "bool"}, [AL_MILK_logical_xor] = {m_binary, "bool"},
	[AL_MILK_matmul] = {m_matmul, NULL}, [AL_MILK_max_pool] = {m_pool, NULL},
	[AL_MILK_maximum] = {m_binary, NULL}, [AL_MILK_minimum] = {m_binary, NULL},
	[AL_MILK_mod] = {m_binary, NULL}, [AL_MILK_mul] = {m_binary, NULL},
	[AL_MILK_not_equal] = {m_binary, "bool"}, [AL_MILK_pad] = {m_pad, NULL},
	[AL_MILK_pixel_shuffle] = {m_block, "up"}, [AL_MILK_pixel_unshuffle] = {m_block, "down"},
	[AL_MILK_pow] = {m_binary, NULL}, [AL_MILK_prelu] = {m_same, NULL},
	[AL_MILK_real_div] = {m_binary, NULL}, [AL_MILK_reduce_argmax] = {m_argreduce, NULL},
	[AL_MILK_reduce_argmin] = {m_argreduce, NULL}, [AL_MILK_reduce_l1_norm] = {m_reduce, NULL},
	[AL_MILK_reduce_l2_norm] = {m_reduce, NULL}, [AL_MILK_reduce_log_sum] = {m_reduce, NULL},
	[AL_MILK_reduce_log_sum_exp] = {m_reduce, NULL}, [AL_MILK_reduce_max] = {m_reduce, NULL},
	[AL_MILK_reduce_mean] = {m_reduce, NULL}, [AL_MILK_reduce_min] = {m_reduce, NULL},
	[AL_MILK_reduce_prod] = {m_reduce, NULL}, [AL_MILK_reduce_sum] = {m_reduce, NULL},
	[AL_MILK_reduce_sum_square] = {m_reduce, NULL}, [AL_MILK_relu] = {m_same, NULL},
	[AL_MILK_relu6] = {m_same, NULL}, [AL_MILK_reshape] = {m_reshape, NULL},
	[AL_MILK_resize_bilinear] = {m_resize, NULL},
	[AL_MILK_resize_nearest_neighbor] = {m_resize, NULL}, [AL_MILK_reverse] = {m_same, NULL},
	[AL_MILK_reverse_sequence] = {m_same, NULL}, [AL_MILK_round] = {m_same, NULL},
	[AL_MILK_rsqrt] = {m_same, NULL}, [AL_MILK_scaled_dot_product_attention] = {m_sdpa, NULL},
	[AL_MILK_scaled_tanh] = {m_same, NULL}, [AL_MILK_scatter] = {m_same, "data"},
	[AL_MILK_scatter_along_axis] = {m_same, "data"}, [AL_MILK_scatter_nd] = {m_same, "data"},
	[AL_MILK_select] = {m_select, NULL}, [AL_MILK_shape] = {m_shape, NULL},
	[AL_MILK_sigmoid] = {m_same, NULL}, [AL_MILK_sigmoid_hard] = {m_same, NULL},
	[AL_MILK_sign] = {m_same, NULL}, [AL_MILK_silu] = {m_same, NULL},
	[AL_MILK_sin] = {m_same, NULL}, [AL_MILK_sinh] = {m_same, NULL},
	[AL_MILK_slice_by_index] = {m_slice_by_index, NULL},
	[AL_MILK_slice_by_size] = {m_slice_by_size, NULL}, [AL_MILK_softmax] = {m_same, NULL},
	[AL_MILK_softplus] = {m_same, NULL}, [AL_MILK_softplus_parametric] = {m_same, NULL},
	[AL_MILK_softsign] = {m_same, NULL}, [AL_MILK_space_to_depth] = {m_block, "down"},
	[AL_MILK_split] = {m_split, NULL}, [AL_MILK_sqrt] = {m_same, NULL},
	[AL_MILK_square] = {m_same, NULL}, [AL_MILK_squeeze] = {m_squeeze, NULL},
	[AL_MILK_stack] = {m_stack, NULL}, [AL_MILK_sub] = {m_binary, NULL},
	[AL_MILK_tan] = {m_same, NULL}, [AL_MILK_tanh] = {m_same, NULL},
	[AL_MILK_threshold] = {m_same, NULL}, [AL_MILK_thresholded_relu] = {m_same, NULL},
	[AL_MILK_tile] = {m_tile, NULL}, [AL_MILK_topk] = {m_topk, NULL},
	[AL_MILK_transpose] = {m_transpose, NULL}, [AL_MILK_upsample_bilinear] = {m_upsample, NULL},
	[AL_MILK_upsample_nearest_neighbor] = {m_upsample, NULL},
};
_Static_assert(sizeof rows / sizeof rows[0] == AL_MILK_COUNT, "one row per MIL kind");

/* Whether MIL kind k has a shape function (for tests/unit/test_kinds.c). */
bool ali_shapes_mil_has(int k)
{
	return k >= 0 && k < AL_MILK_COUNT && rows[k].fn;
}

bool ali_shapes_mil(const struct shp_node *x)
{
	int k = x->n->kind;
	const struct mil_row *r = k >= 0 && k < AL_MILK_COUNT && rows[k].fn ? &rows[k] : NULL;
	if (!r || !x->n_out)
		return false;
	for (uint32_t o = 0; o < x->n_out; o++)
		shp_unknown(&x->out[o]);
	if (r->fn(x, r->arg))
		return true;
	for (uint32_t o = 0; o < x->n_out; o++)
		shp_unknown(&x->out[o]);
	return false;
}

bool ali_mil_param_shape(const struct al_node *n, const char *param, struct al_shape *out)
{
	const struct al_node_src *src = n ? al_src(n) : NULL;
	if (!src || !src->mil_scope || !out)
		return false;
	return shp_mil_param(n, src->in_shapes, src->in_shapes ? n->n_inputs : 0, param, 0, out) &&
	       out->rank >= 0;
}
