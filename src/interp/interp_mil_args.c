/* SPDX-License-Identifier: MIT */
/* interp_mil_args.c: what every ML Program op function uses (interp_mil.h):
 * failures, axis and dtype helpers, an op's parameters (a name binding is looked
 * up in the environment, a literal Value decoded into a tensor) and its outputs.
 * The driver and the op table are in interp_mil.c. */
#include "interp_mil.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================ failures and helpers */

enum al_status mx_fail(struct mx *c, enum al_status st, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (c->st == AL_OK) { /* one diagnostic per op: the first cause */
		c->st = st;
		ali_exec_fail(c->x, c->n, st, "op %s: %s", c->n->type, msg);
	}
	return c->st;
}

enum al_status mx_unsupported(struct mx *c, const char *what, const char *value)
{
	return mx_fail(c, AL_E_UNSUPPORTED, "%s '%s' is not supported by the interpreter", what,
		       value);
}

bool mx_f2i(float v, int64_t *out)
{
	if (!(v == v) || v > 9007199254740992.0f || v < -9007199254740992.0f || floorf(v) != v)
		return false;
	*out = (int64_t)v;
	return true;
}

int mx_axis(struct mx *c, int64_t a, int rank, int extra)
{
	int64_t r = (int64_t)rank + extra;
	int64_t v = a < 0 ? a + r : a;
	if (v < 0 || v >= r) {
		mx_fail(c, AL_E_FORMAT, "axis %lld is out of range for rank %d", (long long)a, rank);
		return -1;
	}
	return (int)v;
}

int64_t mx_prod(const int64_t *dims, int from, int to)
{
	int64_t p = 1;
	for (int i = from; i < to; i++)
		p *= dims[i]; /* tensors that exist have products below 2^32 */
	return p;
}

bool mx_is_float(int dtype)
{
	return dtype == AL_DT_FP16 || dtype == AL_DT_FP32 || dtype == AL_DT_FP64 ||
	       dtype == AL_DT_BF16;
}

bool mx_is_int(int dtype)
{
	return !mx_is_float(dtype) && dtype != AL_DT_BOOL && dtype != AL_DT_STRING &&
	       dtype != AL_DT_UNKNOWN;
}

int mx_reduced_dims(const struct al_tensor *x, uint32_t mask, bool keep, int64_t *dims)
{
	int r = 0;
	for (int i = 0; i < x->rank; i++) {
		if (!(mask >> i & 1))
			dims[r++] = x->dims[i];
		else if (keep)
			dims[r++] = 1;
	}
	return r;
}

int mx_fdtype(const struct al_tensor *x)
{
	return x && mx_is_float(x->dtype) ? x->dtype : AL_DT_FP32;
}

bool mx_same_dims(const struct al_tensor *t, int rank, const int64_t *dims)
{
	if (t->rank != rank)
		return false;
	for (int i = 0; i < rank; i++)
		if (t->dims[i] != dims[i])
			return false;
	return true;
}

const char *mx_dims_str(const struct al_tensor *t, char *buf, size_t cap)
{
	ali_dims_str(buf, cap, t->dims, t->rank > 0 ? (size_t)t->rank : 0, 0);
	return buf;
}

int mx_dtype_named(const char *s)
{
	static const struct {
		const char *name;
		int dt;
	} t[] = {
		{"fp16", AL_DT_FP16}, {"fp32", AL_DT_FP32}, {"fp64", AL_DT_FP64},
		{"int8", AL_DT_INT8}, {"uint8", AL_DT_UINT8}, {"int16", AL_DT_INT16},
		{"uint16", AL_DT_UINT16}, {"int32", AL_DT_INT32}, {"uint32", AL_DT_UINT32},
		{"int64", AL_DT_INT64}, {"bool", AL_DT_BOOL},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (strcmp(t[i].name, s) == 0)
			return t[i].dt;
	return AL_DT_UNKNOWN;
}

/* ================================================================ values */

/* The dims a Value declares for `count` elements: its type's when known (the
 * counts must agree), else a vector. */
static bool value_dims(struct mx *c, const struct al_mil_value *mv, size_t count, int *rank,
		       int64_t *dims)
{
	if (mv->rank < 0) {
		*rank = 1;
		dims[0] = (int64_t)count;
		return true;
	}
	size_t want;
	if (!ali_dims_count(mv->rank, mv->dims, &want)) {
		mx_fail(c, AL_E_UNSUPPORTED, "a value of rank %d with these dims is too large",
			mv->rank);
		return false;
	}
	if (want != count) {
		mx_fail(c, AL_E_FORMAT, "a value declares %zu elements and holds %zu", want, count);
		return false;
	}
	*rank = mv->rank;
	memcpy(dims, mv->dims, sizeof mv->dims[0] * (size_t)mv->rank);
	return true;
}

/* Bytes per value of the blob types the interpreter reads (ali_exec_weight's). */
static size_t blob_size(int dtype)
{
	switch (dtype) {
	case AL_DT_FP32: case AL_DT_INT32: case AL_DT_UINT32: return 4;
	case AL_DT_FP16: case AL_DT_BF16: case AL_DT_INT16: case AL_DT_UINT16: return 2;
	case AL_DT_INT8: case AL_DT_UINT8: return 1;
	default: return 0; /* sub-byte and fp8 types */
	}
}

/* Bits per value of the packed blob types (compressed weights' indices and
 * quantized data, LSB first), 0 for the others. */
static unsigned sub_byte_bits(int dtype)
{
	switch (dtype) {
	case AL_DT_UINT1: return 1;
	case AL_DT_UINT2: return 2;
	case AL_DT_UINT3: return 3;
	case AL_DT_UINT4: case AL_DT_INT4: return 4;
	case AL_DT_UINT6: return 6;
	default: return 0;
	}
}

/* A packed sub-byte blob as a tensor of its declared dims (the values widened
 * to float, int4 sign-extended); the blob must hold every value. */
static struct al_tensor *sub_byte_blob(struct mx *c, const struct al_mil_value *mv, al_span data,
				       int bdt)
{
	unsigned bits = sub_byte_bits(bdt);
	int rank;
	int64_t dims[AL_TENSOR_MAX_RANK];
	size_t count;
	if (mv->rank < 0) {
		mx_fail(c, AL_E_UNSUPPORTED, "a weight without a known shape");
		return NULL;
	}
	if (!ali_dims_count(mv->rank, mv->dims, &count)) {
		mx_fail(c, AL_E_UNSUPPORTED, "a value of rank %d with these dims is too large",
			mv->rank);
		return NULL;
	}
	rank = mv->rank;
	memcpy(dims, mv->dims, sizeof mv->dims[0] * (size_t)mv->rank);
	if (count > data.n * 8 / bits) {
		mx_fail(c, AL_E_FORMAT, "the blob holds %zu bytes, not %zu values of %s", data.n,
			count, al_dtype_name(bdt));
		return NULL;
	}
	struct al_tensor *t = mx_alloc(c, UINT32_MAX, bdt, rank, dims);
	if (!t)
		return NULL;
	const uint8_t *p = data.p;
	unsigned mask = (1u << bits) - 1;
	for (size_t i = 0; i < count; i++) {
		size_t pos = i * bits;
		unsigned v = p[pos / 8] >> (pos % 8);
		if (pos % 8 + bits > 8)
			v |= (unsigned)p[pos / 8 + 1] << (8 - pos % 8);
		v &= mask;
		t->f[i] = bdt == AL_DT_INT4 && v >= 8 ? (float)v - 16.0f : (float)v;
	}
	return t;
}

/* A Value message (a const's val, a literal binding) as a new tensor. */
struct al_tensor *mx_value_tensor(struct mx *c, al_span v)
{
	struct al_mil_value mv;
	int rank;
	int64_t dims[AL_TENSOR_MAX_RANK];
	if (!ali_mil_value_read(v, &mv)) {
		mx_fail(c, AL_E_FORMAT, "malformed value");
		return NULL;
	}
	if (mv.kind == AL_MV_TENSOR) {
		long cnt = ali_mil_value_floats(v, NULL, 0);
		if (cnt < 0) {
			mx_fail(c, AL_E_UNSUPPORTED, "a %s value that the interpreter cannot read",
				al_dtype_name(mv.dtype));
			return NULL;
		}
		if (!value_dims(c, &mv, (size_t)cnt, &rank, dims))
			return NULL;
		int dt = mv.dtype && mv.dtype != AL_DT_STRING ? mv.dtype : AL_DT_FP32;
		struct al_tensor *t = mx_alloc(c, UINT32_MAX, dt, rank, dims);
		if (t)
			ali_mil_value_floats(v, t->f, t->n);
		return t;
	}
	if (mv.kind == AL_MV_STRINGS) {
		long cnt = ali_mil_value_strings(v, NULL, 0);
		if (cnt < 0 || !value_dims(c, &mv, (size_t)cnt, &rank, dims))
			return NULL;
		al_span *sp = cnt ? ali_calloc((size_t)cnt, sizeof *sp) : NULL;
		struct al_tensor *t = (!cnt || sp) ? mx_alloc(c, UINT32_MAX, AL_DT_STRING, rank, dims) : NULL;
		if (!t) {
			if (cnt && !sp)
				mx_fail(c, AL_E_NOMEM, "out of memory");
			ali_free(sp);
			return NULL;
		}
		ali_mil_value_strings(v, sp, (size_t)cnt);
		for (size_t i = 0; i < t->n && i < (size_t)cnt; i++) {
			if (!(t->s[i] = ali_malloc(sp[i].n + 1))) {
				ali_free(sp);
				ali_tensor_unref(t);
				mx_fail(c, AL_E_NOMEM, "out of memory");
				return NULL;
			}
			if (sp[i].n)
				memcpy(t->s[i], sp[i].p, sp[i].n);
			t->s[i][sp[i].n] = '\0';
		}
		ali_free(sp);
		return t;
	}
	if (mv.kind == AL_MV_BLOB) {
		al_span data;
		int bdt;
		const char *why;
		if (!mv.blob_in_weights) {
			mx_fail(c, AL_E_UNSUPPORTED, "weights outside weights/weight.bin are not supported");
			return NULL;
		}
		if ((why = ali_mil_blob(c->x->m, mv.blob_offset, &data, &bdt))) {
			mx_fail(c, AL_E_FORMAT, "blob at offset %llu: %s",
				(unsigned long long)mv.blob_offset, why);
			return NULL;
		}
		size_t count, each = blob_size(bdt);
		if (mv.rank < 0) {
			mx_fail(c, AL_E_UNSUPPORTED, "a weight without a known shape");
			return NULL;
		}
		if (!each && sub_byte_bits(bdt))
			return sub_byte_blob(c, &mv, data, bdt);
		if (!each) {
			mx_fail(c, AL_E_UNSUPPORTED, "%s weights are not supported by the interpreter",
				al_dtype_name(bdt));
			return NULL;
		}
		if (!value_dims(c, &mv, data.n / each, &rank, dims))
			return NULL;
		if (!ali_dims_count(rank, dims, &count) || count * each != data.n) {
			mx_fail(c, AL_E_FORMAT, "the blob holds %zu bytes, not %zu values of %s", data.n,
				count, al_dtype_name(bdt));
			return NULL;
		}
		/* checked: a failure now is memory or the run's budget */
		bool over = c->x->over_budget;
		struct al_tensor *t = ali_exec_weight(c->x, c->n, data, bdt, rank, dims);
		if (!t) {
			c->st = !over && c->x->over_budget ? AL_E_UNSUPPORTED : AL_E_NOMEM;
			return NULL;
		}
		if (mv.dtype == bdt && mx_is_float(bdt))
			t->dtype = bdt; /* fp16 weights stay fp16-typed (widened to float) */
		return t;
	}
	mx_fail(c, AL_E_UNSUPPORTED, "%s values are not supported",
		mv.kind == AL_MV_LIST ? "list or tuple" : mv.kind == AL_MV_NONE ? "empty" : "dictionary");
	return NULL;
}

/* ================================================================ inputs */

uint32_t mx_count(const struct mx *c, const char *param)
{
	return ali_mil_param_count(c->n, param);
}

bool mx_present(const struct mx *c, const char *param)
{
	return ali_mil_param_count(c->n, param) > 0;
}

struct al_tensor *mx_in_k(struct mx *c, const char *param, uint32_t k)
{
	al_span b;
	if (c->st != AL_OK)
		return NULL;
	int kind = ali_mil_param_binding(c->n, param, k, &b);
	if (kind == 0)
		return NULL;
	if (kind == 1) {
		char name[AL_MAX_NAME + 1];
		size_t len = b.n < AL_MAX_NAME ? b.n : AL_MAX_NAME; /* as mil.c keeps names */
		memcpy(name, b.p, len);
		name[len] = '\0';
		struct al_tensor *t = ali_env_get(c->env, name);
		if (!t)
			mx_fail(c, AL_E_FORMAT, "input %s = '%.100s' is not defined", param, name);
		return t;
	}
	if (c->n_tmp == MX_MAX_TMP) {
		mx_fail(c, AL_E_UNSUPPORTED, "more than %d literal inputs", MX_MAX_TMP);
		return NULL;
	}
	struct al_tensor *t = mx_value_tensor(c, b);
	if (t)
		c->tmp[c->n_tmp++] = t;
	return t;
}

struct al_tensor *mx_in(struct mx *c, const char *param)
{
	return mx_in_k(c, param, 0);
}

struct al_tensor *mx_req(struct mx *c, const char *param)
{
	struct al_tensor *t = mx_in(c, param);
	if (!t) {
		if (c->st == AL_OK)
			mx_fail(c, AL_E_FORMAT, "input '%s' is missing", param);
		return NULL;
	}
	if (t->kind != AL_TK_TENSOR || !t->f) {
		mx_fail(c, AL_E_FORMAT, "input '%s' is not a numeric tensor", param);
		return NULL;
	}
	return t;
}

/* The single value of `param`, or absent (*t NULL). */
static bool scalar_of(struct mx *c, const char *param, const struct al_tensor **t)
{
	*t = mx_in(c, param);
	if (!*t)
		return c->st == AL_OK;
	if ((*t)->kind != AL_TK_TENSOR || !(*t)->f || (*t)->n != 1) {
		mx_fail(c, AL_E_FORMAT, "parameter '%s' must be a single number", param);
		return false;
	}
	return true;
}

bool mx_int(struct mx *c, const char *param, int64_t def, int64_t *v)
{
	const struct al_tensor *t;
	if (!scalar_of(c, param, &t))
		return false;
	*v = def;
	if (t && !mx_f2i(t->f[0], v)) {
		mx_fail(c, AL_E_FORMAT, "parameter '%s' = %g is not an integer", param, (double)t->f[0]);
		return false;
	}
	return true;
}

bool mx_float(struct mx *c, const char *param, double def, double *v)
{
	const struct al_tensor *t;
	if (!scalar_of(c, param, &t))
		return false;
	*v = t ? (double)t->f[0] : def;
	return true;
}

bool mx_bool(struct mx *c, const char *param, bool def, bool *v)
{
	const struct al_tensor *t;
	if (!scalar_of(c, param, &t))
		return false;
	*v = t ? t->f[0] != 0 : def;
	return true;
}

bool mx_ints(struct mx *c, const char *param, int64_t *v, size_t max, size_t *n)
{
	*n = 0;
	const struct al_tensor *t = mx_in(c, param);
	if (!t)
		return c->st == AL_OK;
	if (t->kind != AL_TK_TENSOR || !t->f || t->rank > 1) {
		mx_fail(c, AL_E_FORMAT, "parameter '%s' must be a vector of integers", param);
		return false;
	}
	if (t->n > max) {
		mx_fail(c, AL_E_UNSUPPORTED, "parameter '%s' has %zu values (at most %zu)", param, t->n,
			max);
		return false;
	}
	for (size_t i = 0; i < t->n; i++)
		if (!mx_f2i(t->f[i], &v[i])) {
			mx_fail(c, AL_E_FORMAT, "parameter '%s' holds %g, not an integer", param,
				(double)t->f[i]);
			return false;
		}
	*n = t->n;
	return true;
}

bool mx_str(struct mx *c, const char *param, const char *def, char *buf, size_t cap)
{
	if (c->st != AL_OK)
		return false;
	if (ali_mil_param_string(c->n, param, buf, cap))
		return true;
	if (!mx_present(c, param)) {
		snprintf(buf, cap, "%s", def);
		return true;
	}
	/* a string tensor computed at run time, or too long for buf */
	const struct al_tensor *t = mx_in(c, param);
	if (t && t->s && t->n == 1 && t->s[0] && strlen(t->s[0]) < cap) {
		snprintf(buf, cap, "%s", t->s[0]);
		return true;
	}
	if (c->st == AL_OK)
		mx_fail(c, AL_E_UNSUPPORTED, "parameter '%s' must be a constant string", param);
	return false;
}

size_t mx_lt_find(const struct lifetimes *u, const char *name)
{
	if (!name)
		return SIZE_MAX;
	return ali_hashtab_find(&u->index, ali_hash_str(name), ali_hashtab_name_eq, name, (void *)u->name);
}

struct al_tensor *mx_take(struct mx *c, const char *param)
{
	const struct mx_run *r = c->run;
	al_span b;
	if (!r->lt || c->env != r->top || c->st != AL_OK || c->n->n_sub ||
	    ali_mil_param_count(c->n, param) != 1 || ali_mil_param_binding(c->n, param, 0, &b) != 1)
		return NULL;
	char name[AL_MAX_NAME + 1];
	size_t len = b.n < AL_MAX_NAME ? b.n : AL_MAX_NAME; /* as mx_in_k */
	memcpy(name, b.p, len);
	name[len] = '\0';
	size_t j = mx_lt_find(r->lt, name);
	if (j == SIZE_MAX || !r->lt->own[j] || r->lt->last[j] != r->at)
		return NULL;
	unsigned reads = 0; /* read once: not also another parameter of this op */
	for (uint32_t i = 0; i < c->n->n_inputs; i++)
		reads += c->n->inputs[i] && strcmp(c->n->inputs[i], name) == 0;
	struct al_tensor *t = reads == 1 ? ali_env_get(c->env, name) : NULL;
	if (!t || t->kind != AL_TK_TENSOR || !t->f || t->s || t->borrowed || t->base || t->refs != 1 ||
	    t->owner != c->x)
		return NULL;
	return t;
}

/* ================================================================ outputs */

static struct al_tensor *out_alloc(struct mx *c, uint32_t i, int dtype, int rank,
				   const int64_t *dims, bool zero)
{
	size_t count;
	if (c->st != AL_OK)
		return NULL;
	if (!ali_dims_count(rank, dims, &count)) {
		mx_fail(c, AL_E_UNSUPPORTED, "a result of rank %d with these dims is too large or invalid "
			"(at most 2^32 elements, rank <= %d)", rank, AL_TENSOR_MAX_RANK);
		return NULL;
	}
	bool over = c->x->over_budget;
	struct al_tensor *t = zero ? ali_tensor_alloc(c->x, c->n, dtype, rank, dims)
				   : ali_tensor_alloc_raw(c->x, c->n, dtype, rank, dims);
	if (!t) {
		/* ali_tensor_alloc has reported it */
		c->st = !over && c->x->over_budget ? AL_E_UNSUPPORTED : AL_E_NOMEM;
		return NULL;
	}
	if (i != UINT32_MAX && i < c->n_out) {
		ali_tensor_unref(c->out[i]);
		c->out[i] = t;
	}
	return t;
}

struct al_tensor *mx_alloc(struct mx *c, uint32_t i, int dtype, int rank, const int64_t *dims)
{
	return out_alloc(c, i, dtype, rank, dims, true);
}

struct al_tensor *mx_alloc_raw(struct mx *c, uint32_t i, int dtype, int rank, const int64_t *dims)
{
	return out_alloc(c, i, dtype, rank, dims, false);
}

void mx_set(struct mx *c, uint32_t i, struct al_tensor *t)
{
	if (i >= c->n_out)
		return;
	ali_tensor_unref(c->out[i]);
	c->out[i] = al_tensor_ref(t);
}

bool mx_reshaped(struct mx *c, uint32_t i, const struct al_tensor *t, int rank, const int64_t *dims)
{
	size_t count;
	if (!ali_dims_count(rank, dims, &count) || count != t->n) {
		mx_fail(c, AL_E_FORMAT, "cannot hold %zu values in the requested shape", t->n);
		return false;
	}
	if (!c->x->fp16 && t->kind == AL_TK_TENSOR && t->f && !t->s && i < c->n_out) {
		/* the same values: a view of t's (reshape, expand_dims, squeeze ...) */
		struct al_tensor *v = ali_tensor_view(c->x, c->n, (struct al_tensor *)t, t->dtype, rank,
						      dims);
		if (!v) {
			c->st = c->x->over_budget ? AL_E_UNSUPPORTED : AL_E_NOMEM;
			return false;
		}
		mx_set(c, i, v);
		ali_tensor_unref(v);
		return true;
	}
	struct al_tensor *r = mx_alloc_raw(c, i, t->dtype, rank, dims); /* every value set below */
	if (!r)
		return false;
	if (t->s) {
		for (size_t k = 0; k < count; k++)
			if (t->s[k] && !(r->s[k] = ali_strdup(t->s[k]))) {
				mx_fail(c, AL_E_NOMEM, "out of memory");
				return false;
			}
	} else if (count) {
		memcpy(r->f, t->f, count * sizeof(float));
	}
	return true;
}

