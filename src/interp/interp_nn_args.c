/* SPDX-License-Identifier: MIT */
/* interp_nn_args.c: what every NeuralNetwork layer function uses (interp_nn.h):
 * failures, arity and rank checks, dims and axis helpers, repeated parameters,
 * and the layer's weights (fp32, fp16, quantized: dequantized into a new
 * tensor). The driver and the layer table are in interp_nn.c. */
#include "interp_nn.h"
#include "nn_params.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* ================================================================ shared helpers */

long nn_pints(al_span p, uint32_t f, int64_t *v)
{
	uint64_t u[NN_MAXV];
	long n = pb_get_varints(p, f, u, NN_MAXV);
	for (long i = 0; i < n && i < NN_MAXV; i++)
		v[i] = u[i] <= INT64_MAX ? (int64_t)u[i] : -(int64_t)(~u[i]) - 1;
	return n;
}

const char *nn_type_of(const struct al_node *n)
{
	return n && n->type ? n->type : "?";
}

enum al_status nn_fail(struct nn_layer *l, enum al_status st, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return ali_exec_fail(l->r->x, l->n, st, "%s: %s", nn_type_of(l->n), msg);
}

enum al_status nn_unsupported(struct nn_layer *l, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return ali_exec_fail(l->r->x, l->n, AL_E_UNSUPPORTED,
			    "layer type %s: %s is not supported by the interpreter", nn_type_of(l->n), msg);
}

/* "2", "1 to 3", "1 or more" */
static const char *count_str(char *buf, size_t cap, uint32_t lo, uint32_t hi)
{
	if (hi == lo)
		snprintf(buf, cap, "%u", lo);
	else if (hi)
		snprintf(buf, cap, "%u to %u", lo, hi);
	else
		snprintf(buf, cap, "%u or more", lo);
	return buf;
}

enum al_status nn_arity(struct nn_layer *l, uint32_t in_lo, uint32_t in_hi, uint32_t out_lo,
			uint32_t out_hi)
{
	char b[48];
	if (l->n_in < in_lo || (in_hi && l->n_in > in_hi))
		return nn_fail(l, AL_E_FORMAT, "has %u inputs; it takes %s", l->n_in,
			       count_str(b, sizeof b, in_lo, in_hi));
	if (l->n_out < out_lo || (out_hi && l->n_out > out_hi))
		return nn_fail(l, AL_E_FORMAT, "has %u outputs; it gives %s", l->n_out,
			       count_str(b, sizeof b, out_lo, out_hi));
	return AL_OK;
}

const char *nn_dims_str(char *buf, size_t cap, int rank, const int64_t *dims)
{
	ali_dims_str(buf, cap, dims, rank > 0 ? (size_t)rank : 0, 0);
	return buf;
}

struct al_tensor *nn_alloc(struct nn_layer *l, int rank, const int64_t *dims)
{
	size_t count;
	if (!ali_dims_count(rank, dims, &count))
		l->too_big = true; /* ali_tensor_alloc reports it */
	return ali_tensor_alloc(l->r->x, l->n, AL_DT_FP32, rank, dims);
}

struct al_tensor *nn_reshaped(struct nn_layer *l, const struct al_tensor *t, int rank,
			      const int64_t *dims)
{
	struct al_tensor *r = ali_tensor_reshaped(l->r->x, l->n, t, rank, dims);
	if (r)
		r->dtype = AL_DT_FP32;
	return r;
}

int64_t nn_prod(const int64_t *dims, int from, int to)
{
	int64_t p = 1;
	for (int i = from; i < to; i++)
		p *= dims[i];
	return p;
}

/* ---------------------------------------------------------------- helpers of the layers
 * (interp_nn.h says what each does) */

bool nn_f2i(float v, int64_t *o)
{
	if (!(v >= -9.0e15f && v <= 9.0e15f) || v != floorf(v))
		return false;
	*o = (int64_t)v;
	return true;
}

int nn_axis(int64_t a, int r)
{
	if (a < 0)
		a += r;
	return a >= 0 && a < r ? (int)a : -1;
}

enum al_status nn_need_rank(struct nn_layer *l, const struct al_tensor *t, int lo, int hi)
{
	if (t->rank >= lo && t->rank <= hi)
		return AL_OK;
	char b[160];
	if (lo == hi)
		return nn_fail(l, AL_E_FORMAT, "input of shape %s; it takes rank %d",
			       nn_dims_str(b, sizeof b, t->rank, t->dims), lo);
	return nn_fail(l, AL_E_FORMAT, "input of shape %s; it takes rank %d to %d",
		       nn_dims_str(b, sizeof b, t->rank, t->dims), lo, hi);
}

enum al_status nn_tensor_ints(struct nn_layer *l, const struct al_tensor *t, const char *what,
			      int64_t *v, size_t max, size_t *n)
{
	if (t->n > max)
		return nn_fail(l, AL_E_UNSUPPORTED, "%s has %zu values (at most %zu)", what, t->n, max);
	for (size_t i = 0; i < t->n; i++)
		if (!nn_f2i(t->f[i], &v[i]))
			return nn_fail(l, AL_E_FORMAT, "%s holds a value that is not an index (%g)", what,
				       (double)t->f[i]);
	*n = t->n;
	return AL_OK;
}

enum al_status nn_get_chw(struct nn_layer *l, const struct al_tensor *t, struct nn_chw *g)
{
	enum al_status st = nn_need_rank(l, t, 3, AL_TENSOR_MAX_RANK);
	if (st)
		return st;
	g->n = nn_prod(t->dims, 0, t->rank - 3);
	g->c = t->dims[t->rank - 3];
	g->h = t->dims[t->rank - 2];
	g->w = t->dims[t->rank - 1];
	return AL_OK;
}

bool nn_pair(al_span p, uint32_t f, int64_t d, int64_t v[2])
{
	int64_t t[NN_MAXV];
	long n = nn_pints(p, f, t);
	if (n < 0 || n > 2)
		return false;
	v[0] = n >= 1 ? t[0] : d;
	v[1] = n == 2 ? t[1] : n == 1 ? t[0] : d;
	return true;
}

bool nn_border(al_span b, int64_t pad[4])
{
	struct pb_iter it;
	struct pb_field f;
	int k = 0;
	memset(pad, 0, 4 * sizeof pad[0]);
	pb_iter_init(&it, b);
	while (pb_next(&it, &f)) {
		if (f.num != AL_NN_F_BORDER_AMOUNTS_EDGES || f.wire != PB_LEN)
			continue;
		if (k >= 2)
			return false;
		uint64_t s = nn_pu(f.data, AL_NN_F_EDGE_START, 0), e = nn_pu(f.data, AL_NN_F_EDGE_END, 0);
		if (s > (uint64_t)NN_BIG || e > (uint64_t)NN_BIG)
			return false;
		pad[2 * k] = (int64_t)s;
		pad[2 * k + 1] = (int64_t)e;
		k++;
	}
	return it.err == 0;
}

/* ================================================================ weights */

/* WeightParams: floatValue = 1, float16Value = 2, rawValue = 30, int8RawValue = 31,
 * quantization = 40 {numberOfBits = 1, linearQuantization = 101 {scale = 1, bias = 2},
 * lookupTableQuantization = 102 {floatValue = 1}}. */
struct wparts {
	al_span f32, f16, raw, q;
	size_t n_f32_fields; /* floatValue occurrences (packed runs or single values) */
	bool int8;
};

static bool weight_parts(al_span wp, struct wparts *w)
{
	struct pb_iter it;
	struct pb_field f;
	memset(w, 0, sizeof *w);
	pb_iter_init(&it, wp);
	while (pb_next(&it, &f)) {
		if (f.num == AL_NN_F_WEIGHT_FLOAT_VALUE && (f.wire == PB_LEN || f.wire == PB_FIXED32)) {
			w->n_f32_fields++;
			if (f.wire == PB_LEN)
				w->f32 = f.data;
		} else if (f.num == AL_NN_F_WEIGHT_FLOAT16_VALUE && f.wire == PB_LEN) {
			w->f16 = f.data;
		} else if ((f.num == AL_NN_F_WEIGHT_RAW_VALUE || f.num == AL_NN_F_WEIGHT_INT8_RAW_VALUE) &&
			   f.wire == PB_LEN) {
			w->raw = f.data;
			w->int8 = f.num == AL_NN_F_WEIGHT_INT8_RAW_VALUE;
		} else if (f.num == AL_NN_F_WEIGHT_QUANTIZATION && f.wire == PB_LEN) {
			w->q = f.data;
		}
	}
	return it.err == 0;
}

size_t nn_weight_len(al_span wp)
{
	struct wparts w;
	if (!weight_parts(wp, &w))
		return 0;
	if (w.n_f32_fields == 1 && w.f32.n)
		return w.f32.n / 4;
	if (w.n_f32_fields > 1)
		return (size_t)pb_get_floats(wp, AL_NN_F_WEIGHT_FLOAT_VALUE, NULL, 0);
	if (w.f16.n)
		return w.f16.n / 2;
	if (w.raw.n) {
		uint64_t bits = w.int8 ? 8 : nn_pu(w.q, AL_NN_F_QUANT_NUMBER_OF_BITS, 0);
		return bits >= 1 && bits <= 8 ? w.raw.n * 8 / bits : 0;
	}
	return 0;
}

/* Quantized rawValue: `bits`-bit unsigned values packed MSB first; linear
 * (per output channel: `count / n_scale` consecutive values share one scale) or a
 * lookup table. int8RawValue: signed bytes with one linear scale. */
static enum al_status dequantize(struct nn_layer *l, const struct wparts *w, const char *what,
				 int rank, const int64_t *dims, size_t count, struct al_tensor **out)
{
	uint64_t bits = w->int8 ? 8 : nn_pu(w->q, AL_NN_F_QUANT_NUMBER_OF_BITS, 0);
	if (!w->q.p && !pb_has(w->q, AL_NN_F_QUANT_NUMBER_OF_BITS) && !w->int8) {
		return nn_fail(l, AL_E_FORMAT, "%s: rawValue without quantization parameters", what);
	}
	if (bits < 1 || bits > 8) {
		return nn_unsupported(l, "%s: %llu-bit quantized weights", what, (unsigned long long)bits);
	}
	if (count > (SIZE_MAX - 7) / bits || (count * bits + 7) / 8 != w->raw.n) {
		return nn_fail(l, AL_E_FORMAT, "%s: %zu bytes of %llu-bit values; %zu values need %zu",
			       what, w->raw.n, (unsigned long long)bits, count,
			       count > (SIZE_MAX - 7) / bits ? (size_t)0 : (size_t)((count * bits + 7) / 8));
	}
	al_span lin = nn_psub(w->q, AL_NN_F_QUANT_LINEAR), lut = nn_psub(w->q, AL_NN_F_QUANT_LOOKUP_TABLE);
	bool has_lin = pb_has(w->q, AL_NN_F_QUANT_LINEAR), has_lut = pb_has(w->q, AL_NN_F_QUANT_LOOKUP_TABLE);
	long n_scale = 0, n_bias = 0, n_lut = 0;
	if (has_lin) {
		n_scale = pb_get_floats(lin, AL_NN_F_LINEAR_QUANT_SCALE, NULL, 0);
		n_bias = pb_get_floats(lin, AL_NN_F_LINEAR_QUANT_BIAS, NULL, 0);
	}
	if (has_lut)
		n_lut = pb_get_floats(lut, AL_NN_F_LOOKUP_TABLE_FLOAT_VALUE, NULL, 0);
	if (!has_lin && !has_lut) {
		return nn_fail(l, AL_E_FORMAT, "%s: quantized weights without linear or lookup-table "
			       "parameters", what);
	}
	if (has_lut && !has_lin && (uint64_t)n_lut != (UINT64_C(1) << bits)) {
		return nn_fail(l, AL_E_FORMAT, "%s: a %llu-bit lookup table needs %llu entries, it has %ld",
			       what, (unsigned long long)bits, (unsigned long long)(UINT64_C(1) << bits),
			       n_lut);
	}
	if (has_lin) {
		bool ok = n_scale >= 1 && (n_bias == 0 || n_bias == 1 || n_bias == n_scale);
		ok = ok && (n_scale == 1 || (count > 0 && count % (size_t)n_scale == 0));
		ok = ok && (n_bias <= 1 || (count > 0 && count % (size_t)n_bias == 0));
		if (!ok)
			return nn_fail(l, AL_E_FORMAT, "%s: %ld scales and %ld biases do not fit %zu values",
				       what, n_scale, n_bias, count);
	}
	float *table = ali_calloc(has_lin ? (size_t)(n_scale + n_bias + 1) : (size_t)n_lut + 1,
				 sizeof(float));
	if (!table)
		return nn_fail(l, AL_E_NOMEM, "out of memory");
	if (has_lin) {
		pb_get_floats(lin, AL_NN_F_LINEAR_QUANT_SCALE, table, (size_t)n_scale);
		pb_get_floats(lin, AL_NN_F_LINEAR_QUANT_BIAS, table + n_scale, (size_t)n_bias);
	} else {
		pb_get_floats(lut, AL_NN_F_LOOKUP_TABLE_FLOAT_VALUE, table, (size_t)n_lut);
	}
	struct al_tensor *t = nn_alloc(l, rank, dims);
	if (!t) {
		ali_free(table);
		return AL_E_NOMEM;
	}
	size_t per_s = has_lin && n_scale > 1 ? count / (size_t)n_scale : count;
	size_t per_b = has_lin && n_bias > 1 ? count / (size_t)n_bias : count;
	for (size_t i = 0; i < count; i++) {
		uint32_t q = 0;
		if (w->int8) {
			q = w->raw.p[i];
		} else {
			size_t bit = i * bits;
			for (uint64_t k = 0; k < bits; k++, bit++)
				q = q << 1 | ((w->raw.p[bit / 8] >> (7 - bit % 8)) & 1u);
		}
		float v;
		if (has_lin) {
			float qv = w->int8 ? (float)(int8_t)(uint8_t)q : (float)q;
			float sc = table[per_s ? i / per_s : 0];
			float bi = n_bias ? table[n_scale + (long)(per_b ? i / per_b : 0)] : 0.0f;
			v = qv * sc + bi;
		} else {
			v = table[q];
		}
		t->f[i] = v;
	}
	ali_free(table);
	if (l->r->x->fp16)
		ali_f16_round_array(t->f, t->n);
	*out = t;
	return AL_OK;
}

enum al_status nn_weight(struct nn_layer *l, al_span msg, uint32_t field, const char *what,
			 int rank, const int64_t *dims, bool required, struct al_tensor **out)
{
	*out = NULL;
	al_span wp = {0};
	bool present = pb_get_bytes(msg, field, &wp);
	struct wparts w;
	if (present && !weight_parts(wp, &w))
		return nn_fail(l, AL_E_FORMAT, "%s: malformed WeightParams", what);
	if (!present || (!w.n_f32_fields && !w.f16.n && !w.raw.n)) {
		size_t count = 0;
		if (!required || (ali_dims_count(rank, dims, &count) && count == 0)) {
			if (!required)
				return AL_OK;
			*out = nn_alloc(l, rank, dims);
			return *out ? AL_OK : AL_E_NOMEM;
		}
		return nn_fail(l, AL_E_FORMAT, "%s: the weights are missing", what);
	}
	size_t count;
	if (!ali_dims_count(rank, dims, &count)) {
		char b[160];
		return nn_fail(l, AL_E_UNSUPPORTED, "%s: weights of shape %s are too large", what,
			       nn_dims_str(b, sizeof b, rank, dims));
	}
	int kinds = (w.n_f32_fields > 0) + (w.f16.n > 0) + (w.raw.n > 0);
	if (kinds > 1)
		return nn_fail(l, AL_E_FORMAT, "%s: more than one of floatValue, float16Value and rawValue "
			       "is set", what);
	if (w.raw.n)
		return dequantize(l, &w, what, rank, dims, count, out);
	if (w.f16.n) {
		if (w.f16.n != count * 2)
			return nn_fail(l, AL_E_FORMAT, "%s: %zu bytes of fp16 values; the shape needs %zu "
				       "values", what, w.f16.n, count);
		*out = ali_exec_weight(l->r->x, l->n, w.f16, AL_DT_FP16, rank, dims);
		return *out ? AL_OK : AL_E_NOMEM; /* the size was checked: out of memory or budget */
	}
	if (w.n_f32_fields == 1 && w.f32.n) { /* one packed run: borrow it */
		if (w.f32.n != count * 4)
			return nn_fail(l, AL_E_FORMAT, "%s: %zu fp32 values; the shape needs %zu", what,
				       w.f32.n / 4, count);
		*out = ali_exec_weight(l->r->x, l->n, w.f32, AL_DT_FP32, rank, dims);
		return *out ? AL_OK : AL_E_NOMEM; /* the size was checked: out of memory or budget */
	}
	/* unpacked or split floatValue: gather them */
	long n = pb_get_floats(wp, AL_NN_F_WEIGHT_FLOAT_VALUE, NULL, 0);
	if (n < 0 || (size_t)n != count)
		return nn_fail(l, AL_E_FORMAT, "%s: %ld fp32 values; the shape needs %zu", what, n, count);
	struct al_tensor *t = nn_alloc(l, rank, dims);
	if (!t)
		return AL_E_NOMEM;
	pb_get_floats(wp, AL_NN_F_WEIGHT_FLOAT_VALUE, t->f, count);
	if (l->r->x->fp16)
		ali_f16_round_array(t->f, t->n);
	*out = t;
	return AL_OK;
}

