/* SPDX-License-Identifier: MIT */
/* mil_fp16_compute.c: the pass mil-fp16-compute (its row in surgery.c's pass
 * table, run by its plan_mil_fp16 once per program before the per-op rows;
 * docs/surgery.md "mil-fp16-compute").
 * Match:   an ML Program converted with compute_precision=FLOAT32 (every op
 *          fp32: ANE029 sends each one to the GPU / CPU); refusals below.
 * Rewrite: the program computing in fp16, as coremltools' FLOAT16 compute
 *          precision (its add_fp16_cast pass followed by the cast clean-ups)
 *          would have produced it (below).
 * Proves:  approximate: every op rounds to fp16 (the whole models are run).
 *
 * Per value of the function's block:
 *   - an op output of dtype fp32 -> fp16 (the op computes in fp16), unless the
 *     op stays fp32 (below);
 *   - an fp32 const read by fp16 ops only -> an fp16 const (>= 10 values: a new
 *     blob in weight.bin, written once; else immediate); read by both kinds, the
 *     fp32 const stays and an fp16 copy is added for the fp16 readers. A
 *     nonzero value of a const of < 400 values that rounds to zero in fp16
 *     becomes +-2^-24 (coremltools' underflow rule: an epsilon must not vanish);
 *   - a `cast` to fp32 -> a cast to fp16; casts to other dtypes read fp16;
 *   - the function's fp32 inputs stay fp32, each with one cast to fp16 after it;
 *     an fp32 block output is produced in fp16 under another name and cast back
 *     to fp32 under its own: the model's interface does not change;
 *   - where an fp32 op reads an fp16 value (or the other way), one cast per
 *     value, right after its producer.
 * Ops that stay fp32 (between casts): coremltools' list (cast, while_loop,
 * cond, the list ops, read_state, coreml_update_state) and the constexpr_*
 * ops (their dtype is their stored scale's); an op reading an fp32 constant
 * with a finite value beyond fp16's range (|v| > 65504, below 1e38: larger
 * ones are infinities as far as the model goes and become fp16 inf) stays fp32
 * with its constant, as coremltools keeps it: clipping the constant would
 * change what it means. Refused: a program that already has fp16 ops (mixed:
 * mil-fp32-island's), more than one function, nested blocks (cond /
 * while_loop bodies read outer values by name), an op type anelint does not
 * know (its fp16 form could not be proved), an inline fp32 literal. */
#include "passes.h"
#include "coreml_fields.h"
#include "kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOB_MIN_ELEMS 10  /* coremltools: a const of >= 10 values goes to weight.bin */
#define UNDERFLOW_MAX 400  /* coremltools: the underflow rule for consts of fewer values */
#define FP16_MAX 65504.0
#define INF_LIKE 1e38      /* coremltools: |v| >= 1e38 is an infinity, fp16 inf is fine */


/* What happens to an op. */
enum { K_OTHER, K_CONV, K_KEEP, K_CAST, K_CONST16, K_CONSTDUP, K_CONST };
/* What a value is after the rewrite. */
enum { VAL_OTHER, VAL_KEEP32, VAL_CONV16 };

struct fval {
	const char *name;
	int prod;       /* producing op, -1: a function input */
	uint32_t out_k; /* which output of it */
	int dt;         /* declared dtype */
	int cls;
	bool need16, need32, is_out;
	const char *n16, *n32; /* the names fp16 / fp32 readers read */
};

struct fx {
	struct al_mil_pass *c;
	const struct al_graph *g;
	al_span block, fn;
	struct fval *v;
	uint32_t nv, cap;
	uint32_t *sorted; /* v indices by name */
	int *kind;        /* per op */
	const char **why_kept; /* per op: why it stays fp32 */
	const char *dt16, *dt32; /* the shared dtype string consts */
	uint32_t n_conv, n_keep, n_c16, n_dup, n_casts, n_blobs;
	const char *keep_eg; /* one op kept, for the report */
	const char *keep_why;
	int ios;           /* the function's opset (iOS version), 0 unknown */
	uint32_t n_in32;   /* inputs of fp16 ops left fp32: their op's definition takes fp32 only */
};

static int by_name(const void *a, const void *b, void *ctx)
{
	const struct fval *v = ctx;
	return strcmp(v[*(const uint32_t *)a].name, v[*(const uint32_t *)b].name);
}

/* The value named by the n bytes at p (not NUL-terminated), or NULL. */
static struct fval *fx_find_n(const struct fx *x, const void *p, size_t n)
{
	size_t lo = 0, hi = x->nv;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const char *nm = x->v[x->sorted[mid]].name;
		size_t l = strlen(nm);
		int r = memcmp(nm, p, l < n ? l : n);
		if (!r)
			r = l < n ? -1 : l > n;
		if (!r)
			return &x->v[x->sorted[mid]];
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static struct fval *fx_find(const struct fx *x, const char *name)
{
	return fx_find_n(x, name, strlen(name));
}

static bool is_float(int dt)
{
	return dt == AL_DT_FP16 || dt == AL_DT_FP32;
}

/* Op types coremltools leaves fp32 (and the compressed-weight ops). */
static const char *kept_type(const char *t)
{
	static const char *const keep[] = {"while_loop", "cond", "make_list", "list_gather", "list_scatter",
					   "list_read", "list_write", "list_length", "read_state",
					   "coreml_update_state"};
	for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
		if (strcmp(t, keep[i]) == 0)
			return "an op coremltools keeps in fp32";
	if (strncmp(t, "constexpr_", 10) == 0)
		return "a compressed-weight op: its dtype is its stored scale's";
	return NULL;
}

/* Whether input `param` of op n takes fp32 but not fp16 on the program's
 * opset (mil_domains.def, coremltools' op definitions: an iOS15 lstm's every
 * input, classify's probabilities, upsample's scale factors): it stays fp32
 * when the op computes in fp16, as coremltools' add_fp16_cast leaves it. */
static bool fp32_only(const struct fx *x, const struct al_node *n, const char *param)
{
	uint64_t dt = ali_mil_input_dtypes(n->kind, x->ios, param, NULL);
	return (dt >> AL_DT_FP32 & 1) && !(dt >> AL_DT_FP16 & 1);
}

/* Op n's float inputs (by their parameters): *n_float how many are bound to a
 * name or a literal of a float dtype, *n_only32 how many of those are fp32_only. */
static void float_inputs(const struct fx *x, const struct al_node *n, uint32_t *n_float, uint32_t *n_only32)
{
	const struct al_node_src *src = al_src(n);
	*n_float = *n_only32 = 0;
	for (uint32_t i = 0; src && i < src->n_mil_args; i++) {
		const struct al_mil_arg *a = &src->mil_args[i];
		bool only32 = a->param && fp32_only(x, n, a->param);
		for (uint32_t k = 0; k < a->n_binds; k++) {
			const struct al_mil_bind *b = &a->binds[k];
			int dt = 0;
			if (b->kind == 1 && b->input < n->n_inputs) {
				const struct fval *v = n->inputs[b->input] ? fx_find(x, n->inputs[b->input]) : NULL;
				dt = v ? v->dt : 0;
			} else if (b->kind == 2) {
				struct al_mil_value mv;
				dt = ali_mil_value_read(b->data, &mv) ? mv.dtype : 0;
			}
			if (is_float(dt)) {
				++*n_float;
				*n_only32 += only32;
			}
		}
	}
}

/* ------------------------------------------------------------------ constants */

/* The fp32 values of const op n (ali_malloc'd, *count), or NULL with *why. */
static float *const_floats(struct fx *x, const struct al_node *n, size_t *count, const char **why)
{
	al_span val;
	struct al_mil_value mv;
	if (!ali_mil_attr(n, "val", &val) || !ali_mil_value_read(val, &mv)) {
		*why = "a const without a readable value";
		return NULL;
	}
	if (mv.kind == AL_MV_BLOB) {
		al_span data;
		int dt;
		if (!mv.blob_in_weights || ali_mil_blob(x->c->s->m, mv.blob_offset, &data, &dt) || dt != AL_DT_FP32 ||
		    data.n % 4) {
			*why = "an fp32 const whose blob is not fp32 values in weight.bin";
			return NULL;
		}
		*count = data.n / 4;
		float *f = ali_malloc(data.n + 4);
		if (!f) {
			*why = "out of memory";
			return NULL;
		}
		for (size_t i = 0; i < *count; i++) {
			uint32_t u = al_rd32le(data.p + 4 * i);
			memcpy(&f[i], &u, 4);
		}
		return f;
	}
	long k = ali_mil_value_floats(val, NULL, 0);
	if (k < 0 || mv.kind != AL_MV_TENSOR) {
		*why = "an fp32 const that is not a numeric tensor";
		return NULL;
	}
	float *f = ali_malloc((size_t)k * sizeof *f + 4);
	if (!f) {
		*why = "out of memory";
		return NULL;
	}
	*count = (size_t)ali_mil_value_floats(val, f, (size_t)k);
	return f;
}

/* Whether an fp32 constant keeps its meaning in fp16 (no finite value beyond
 * 65504 below the infinity-like 1e38). */
static bool fits_fp16(const float *f, size_t n, double *bad)
{
	for (size_t i = 0; i < n; i++) {
		double a = fabs((double)f[i]);
		if (isfinite(a) && a > FP16_MAX && a < INF_LIKE) {
			*bad = f[i];
			return false;
		}
	}
	return true;
}

/* Whether const n's fp32 values keep their meaning in fp16 (a blob is scanned
 * in place, not copied). */
static bool const_fits(struct fx *x, const struct al_node *n)
{
	al_span val, data;
	struct al_mil_value mv;
	int dt;
	double bad = 0;
	if (ali_mil_attr(n, "val", &val) && ali_mil_value_read(val, &mv) && mv.kind == AL_MV_BLOB) {
		if (!mv.blob_in_weights || ali_mil_blob(x->c->s->m, mv.blob_offset, &data, &dt) || dt != AL_DT_FP32 ||
		    data.n % 4)
			return false;
		for (size_t i = 0; i < data.n / 4; i++) {
			uint32_t u = al_rd32le(data.p + 4 * i);
			float f;
			memcpy(&f, &u, 4);
			if (!fits_fp16(&f, 1, &bad))
				return false;
		}
		return true;
	}
	const char *why = NULL;
	size_t cnt = 0;
	float *f = const_floats(x, n, &cnt, &why);
	bool ok = f && fits_fp16(f, cnt, &bad);
	ali_free(f);
	return ok;
}

/* A ValueType with its tensor dtype set to dt (other fields copied). */
static bool vtype_as(al_span vt, int dt, struct al_buf *out)
{
	al_span tt;
	if (!pb_get_bytes(vt, AL_PB_ValueType_tensorType, &tt))
		return false;
	struct al_buf t = {0};
	struct pb_iter it;
	struct pb_field f;
	size_t start;
	ali_buf_uint(&t, AL_PB_TensorType_dataType, (uint64_t)dt);
	pb_iter_init(&it, tt);
	while ((start = it.pos, pb_next(&it, &f)))
		if (f.num != AL_PB_TensorType_dataType)
			ali_buf_put(&t, tt.p + start, it.pos - start);
	ali_buf_len(out, AL_PB_ValueType_tensorType, t.p, t.n);
	pb_iter_init(&it, vt);
	while ((start = it.pos, pb_next(&it, &f)))
		if (f.num != AL_PB_ValueType_tensorType)
			ali_buf_put(out, vt.p + start, it.pos - start);
	out->failed |= t.failed || it.err;
	ali_buf_free(&t);
	return !it.err;
}

/* A NamedValueType named `name` of nvt's type with dtype dt. */
static bool nvt_as(al_span nvt, const char *name, int dt, struct al_buf *out)
{
	al_span vt;
	struct al_buf t = {0};
	if (!pb_get_bytes(nvt, AL_PB_NamedValueType_type, &vt) || !vtype_as(vt, dt, &t)) {
		ali_buf_free(&t);
		return false;
	}
	ali_buf_str(out, AL_PB_NamedValueType_name, name);
	ali_buf_len(out, AL_PB_NamedValueType_type, t.p, t.n);
	out->failed |= t.failed;
	ali_buf_free(&t);
	return true;
}

/* The Value of const n as fp16 into *out: its type retyped, the values
 * rounded (underflow rule), a new blob or immediate bytes. */
static bool value16(struct fx *x, const struct al_node *n, struct al_buf *out)
{
	al_span val, vt;
	const char *why = NULL;
	size_t cnt = 0;
	if (!ali_mil_attr(n, "val", &val) || !pb_get_bytes(val, VALUE_TYPE, &vt))
		return ali_mil_say(x->c, "const '%s' has no value type", n->outputs[0]);
	float *f = const_floats(x, n, &cnt, &why);
	if (!f)
		return ali_mil_say(x->c, "const '%s': %s", n->outputs[0], why);
	uint8_t *raw = ali_malloc(cnt * 2 + 2);
	if (!raw) {
		ali_free(f);
		return ali_mil_say(x->c, "out of memory");
	}
	for (size_t i = 0; i < cnt; i++) {
		float v = f[i];
		uint16_t h = ali_f16_from_f32(fabsf(v) >= (float)INF_LIKE && isfinite(v) ? v * INFINITY : v);
		if (cnt < UNDERFLOW_MAX && v != 0 && isfinite(v) && (h & 0x7fff) == 0)
			h = (uint16_t)((h & 0x8000) | 1); /* +-2^-24, the smallest fp16 subnormal */
		raw[2 * i] = (uint8_t)h;
		raw[2 * i + 1] = (uint8_t)(h >> 8);
	}
	ali_free(f);
	struct al_buf t = {0};
	bool ok = vtype_as(vt, AL_DT_FP16, &t);
	ali_buf_len(out, VALUE_TYPE, t.p, t.n);
	ali_buf_free(&t);
	if (ok && cnt >= BLOB_MIN_ELEMS) {
		uint64_t off = ali_mil_add_blob(x->c->s, 1, raw, cnt * 2);
		if (off == UINT64_MAX)
			ok = ali_mil_say(x->c, "out of memory");
		ali_mil_put_blob_value(out, off);
		x->n_blobs++;
	} else if (ok) { /* TensorValue.bytes {values}: fp16 immediates */
		struct al_buf rep = {0};
		ali_buf_len(&rep, AL_PB_TensorValue_RepeatedBytes_values, raw, cnt * 2);
		ali_mil_put_immediate(out, AL_PB_TensorValue_bytes, &rep);
		ali_buf_free(&rep);
	}
	ali_free(raw);
	if (!ok && !x->c->why[0])
		ali_mil_say(x->c, "const '%s': its type is not a tensor type", n->outputs[0]);
	return ok && (!out->failed || ali_mil_say(x->c, "out of memory"));
}

/* ------------------------------------------------------------------ new ops */

/* A scalar string const op `name` = s (a whole Block.operations field). */
static void string_const(struct al_buf *to, const char *name, const char *s)
{
	struct al_buf op = {0}, nv = {0}, vt = {0}, tt = {0}, v = {0}, nm = {0};
	ali_buf_uint(&tt, AL_PB_TensorType_dataType, AL_DT_STRING);
	ali_buf_uint(&tt, AL_PB_TensorType_rank, 0);
	ali_buf_len(&vt, AL_PB_ValueType_tensorType, tt.p, tt.n);
	ali_buf_str(&op, OP_TYPE, "const");
	ali_buf_str(&nv, AL_PB_NamedValueType_name, name);
	ali_buf_len(&nv, AL_PB_NamedValueType_type, vt.p, vt.n);
	ali_buf_len(&op, OP_OUTPUTS, nv.p, nv.n);
	ali_mil_put_string_value(&nm, name);
	ali_mil_put_attr(&op, "name", nm.p, nm.n);
	ali_mil_put_string_value(&v, s);
	ali_mil_put_attr(&op, "val", v.p, v.n);
	op.failed |= nv.failed || vt.failed || tt.failed || v.failed || nm.failed;
	ali_buf_len(to, BLOCK_OPS, op.p, op.n);
	to->failed |= op.failed;
	ali_buf_free(&op);
	ali_buf_free(&nv);
	ali_buf_free(&vt);
	ali_buf_free(&tt);
	ali_buf_free(&v);
	ali_buf_free(&nm);
}

/* The NamedValueType of value v (its producer's output, or the function input). */
static bool nvt_of(const struct fx *x, const struct fval *v, al_span *nvt)
{
	if (v->prod < 0)
		return ali_pb_named(x->fn, 1, v->name, nvt);
	const struct al_node_src *src = al_src(&x->g->nodes[v->prod]);
	struct pb_iter it;
	struct pb_field f;
	uint32_t k = 0;
	pb_iter_init(&it, src->msg);
	while (pb_next(&it, &f))
		if (f.num == OP_OUTPUTS && f.wire == PB_LEN && k++ == v->out_k) {
			*nvt = f.data;
			return true;
		}
	return false;
}

/* cast(x = from, dtype) -> to, typed as value v with dtype dt (a whole field). */
static bool cast_op(struct fx *x, struct al_buf *to, const struct fval *v, const char *from, const char *out,
		    int dt)
{
	al_span nvt;
	if (!nvt_of(x, v, &nvt))
		return ali_mil_say(x->c, "the type of '%s' is not found", v->name);
	struct al_buf op = {0}, o = {0}, nm = {0};
	ali_buf_str(&op, OP_TYPE, "cast");
	ali_mil_put_input(&op, "x", from);
	ali_mil_put_input(&op, "dtype", dt == AL_DT_FP16 ? x->dt16 : x->dt32);
	bool ok = nvt_as(nvt, out, dt, &o);
	ali_buf_len(&op, OP_OUTPUTS, o.p, o.n);
	/* its name: the output's, unless that may be its producer's op name (a
	 * cast back to fp32 takes the value's own name) */
	const char *opname = dt == AL_DT_FP32 ? ali_mil_fresh(x->c, out, "to_fp32") : out;
	if (!opname)
		return ali_mil_say(x->c, "no free value name");
	ali_mil_put_string_value(&nm, opname);
	ali_mil_put_attr(&op, "name", nm.p, nm.n);
	op.failed |= o.failed || nm.failed;
	ali_buf_len(to, BLOCK_OPS, op.p, op.n);
	to->failed |= op.failed;
	ali_buf_free(&op);
	ali_buf_free(&o);
	ali_buf_free(&nm);
	x->n_casts++;
	return ok || ali_mil_say(x->c, "the type of '%s' is not a tensor type", v->name);
}

/* One inputs entry of op k rebuilt: its bindings renamed for the op's kind
 * (and a cast's dtype bound to the fp16 string). */
static void rebind(struct fx *x, const struct al_node *n, int kind, bool cast32, al_span entry,
		   struct al_buf *out)
{
	al_span key = {0}, arg;
	(void)pb_get_bytes(entry, PB_MAP_KEY, &key);
	if (kind == K_CONV) { /* an input its definition takes in fp32 only reads the fp32 form */
		char param[64];
		if (key.p && key.n < sizeof param) { /* an entry without a name: no memcpy from NULL */
			memcpy(param, key.p, key.n);
			param[key.n] = '\0';
			if (fp32_only(x, n, param))
				kind = K_KEEP;
		}
	}
	if (cast32 && ali_span_eq(key, "dtype")) {
		struct al_buf e = {0};
		ali_mil_put_input(&e, "dtype", x->dt16);
		ali_buf_put(out, e.p, e.n);
		out->failed |= e.failed;
		ali_buf_free(&e);
		return;
	}
	struct al_buf a = {0}, e = {0};
	struct pb_iter it;
	struct pb_field f;
	size_t start;
	if (!pb_get_bytes(entry, PB_MAP_VALUE, &arg)) {
		ali_buf_len(out, OP_INPUTS, entry.p, entry.n);
		return;
	}
	pb_iter_init(&it, arg);
	while ((start = it.pos, pb_next(&it, &f))) {
		al_span nm;
		struct fval *v = NULL;
		if (f.num == AL_PB_Argument_arguments && f.wire == PB_LEN &&
		    pb_get_bytes(f.data, AL_PB_Argument_Binding_name, &nm))
			v = fx_find_n(x, nm.p, nm.n);
		/* fp32 ops read the fp32 form, fp16 ops the fp16 one, a cast what there is */
		const char *to = !v ? NULL : kind == K_KEEP ? v->n32 : kind == K_CONV ? v->n16
			       : v->cls == VAL_CONV16 ? v->n16 : v->n32;
		if (v && to && strcmp(to, v->name) != 0) {
			struct al_buf b = {0};
			ali_buf_str(&b, AL_PB_Argument_Binding_name, to);
			ali_buf_len(&a, AL_PB_Argument_arguments, b.p, b.n);
			a.failed |= b.failed;
			ali_buf_free(&b);
		} else {
			ali_buf_put(&a, arg.p + start, it.pos - start);
		}
	}
	pb_iter_init(&it, entry);
	while ((start = it.pos, pb_next(&it, &f)))
		if (f.num != PB_MAP_VALUE)
			ali_buf_put(&e, entry.p + start, it.pos - start);
	ali_buf_len(&e, PB_MAP_VALUE, a.p, a.n);
	ali_buf_len(out, OP_INPUTS, e.p, e.n);
	out->failed |= a.failed || e.failed;
	ali_buf_free(&a);
	ali_buf_free(&e);
}

/* The new payload of op k (NULL-free: *changed false when it is the input's). */
static bool rebuild_op(struct fx *x, uint32_t k, struct al_buf *out)
{
	const struct al_node *n = &x->g->nodes[k];
	al_span msg = al_src(n)->msg;
	int kind = x->kind[k];
	bool cast32 = false;
	if (kind == K_CAST) {
		char d[16];
		cast32 = ali_mil_param_string(n, "dtype", d, sizeof d) && strcmp(d, "fp32") == 0;
	}
	struct pb_iter it;
	struct pb_field f;
	size_t start;
	uint32_t ko = 0;
	pb_iter_init(&it, msg);
	while ((start = it.pos, pb_next(&it, &f))) {
		if (f.num == OP_INPUTS && f.wire == PB_LEN && kind != K_CONST16) {
			rebind(x, n, kind, cast32, f.data, out);
		} else if (f.num == OP_OUTPUTS && f.wire == PB_LEN) {
			const struct fval *v = ko < n->n_outputs ? fx_find(x, n->outputs[ko]) : NULL;
			ko++;
			if (v && v->cls == VAL_CONV16) {
				struct al_buf o = {0};
				if (!nvt_as(f.data, v->n16, AL_DT_FP16, &o)) {
					ali_buf_free(&o);
					return ali_mil_say(x->c, "the output type of '%s' is not a tensor type", v->name);
				}
				ali_buf_len(out, OP_OUTPUTS, o.p, o.n);
				out->failed |= o.failed;
				ali_buf_free(&o);
			} else {
				ali_buf_put(out, msg.p + start, it.pos - start);
			}
		} else if (f.num == OP_ATTRS && f.wire == PB_LEN && kind == K_CONST16) {
			al_span key;
			if (pb_get_bytes(f.data, PB_MAP_KEY, &key) && ali_span_eq(key, "val")) {
				struct al_buf v = {0}, e = {0};
				if (!value16(x, n, &v)) {
					ali_buf_free(&v);
					return false;
				}
				ali_buf_str(&e, PB_MAP_KEY, "val");
				ali_buf_len(&e, PB_MAP_VALUE, v.p, v.n);
				ali_buf_len(out, OP_ATTRS, e.p, e.n);
				out->failed |= v.failed || e.failed;
				ali_buf_free(&v);
				ali_buf_free(&e);
			} else {
				ali_buf_put(out, msg.p + start, it.pos - start);
			}
		} else {
			ali_buf_put(out, msg.p + start, it.pos - start);
		}
	}
	if (it.err)
		return ali_mil_say(x->c, "op '%s' could not be re-read", n->name);
	return !out->failed || ali_mil_say(x->c, "out of memory");
}

/* The fp16 copy of const op k, named n16 (a whole field). */
static bool dup_const(struct fx *x, uint32_t k, const struct fval *v, struct al_buf *to)
{
	const struct al_node *n = &x->g->nodes[k];
	al_span nvt;
	struct al_buf op = {0}, o = {0}, val = {0}, nm = {0};
	bool ok = nvt_of(x, v, &nvt) && nvt_as(nvt, v->n16, AL_DT_FP16, &o);
	if (!ok)
		return ali_mil_say(x->c, "the type of const '%s' is not a tensor type", v->name);
	ok = value16(x, n, &val);
	ali_buf_str(&op, OP_TYPE, "const");
	ali_buf_len(&op, OP_OUTPUTS, o.p, o.n);
	ali_mil_put_string_value(&nm, v->n16);
	ali_mil_put_attr(&op, "name", nm.p, nm.n);
	ali_mil_put_attr(&op, "val", val.p, val.n);
	op.failed |= o.failed || val.failed || nm.failed;
	ali_buf_len(to, BLOCK_OPS, op.p, op.n);
	to->failed |= op.failed;
	ali_buf_free(&op);
	ali_buf_free(&o);
	ali_buf_free(&val);
	ali_buf_free(&nm);
	return ok;
}

/* ------------------------------------------------------------------ the pass */

/* The function's Function and Block messages in the root (the block holding
 * the graph's first op). */
static bool find_block(struct fx *x, const struct al_submodel *sub)
{
	al_span prog;
	if (!ali_mil_program_of(x->c->s->m, sub, &prog) || !x->g->n_nodes)
		return false;
	const uint8_t *first = al_src(&x->g->nodes[0])->msg.p;
	struct pb_iter it, fi, bi;
	struct pb_field f, ff, bf;
	pb_iter_init(&it, prog);
	while (pb_next(&it, &f)) {
		al_span fn;
		if (f.num != AL_PB_Program_functions || f.wire != PB_LEN || !pb_get_bytes(f.data, PB_MAP_VALUE, &fn))
			continue;
		pb_iter_init(&fi, fn);
		while (pb_next(&fi, &ff)) {
			al_span blk;
			if (ff.num != AL_PB_Function_block_specializations || ff.wire != PB_LEN ||
			    !pb_get_bytes(ff.data, PB_MAP_VALUE, &blk))
				continue;
			if (first >= blk.p && first < blk.p + blk.n) {
				pb_iter_init(&bi, blk);
				while (pb_next(&bi, &bf))
					if (bf.num == BLOCK_OPS && bf.wire == PB_LEN && bf.data.p == first) {
						x->block = blk;
						x->fn = fn;
						return true;
					}
			}
		}
	}
	return false;
}

/* [start, end) of op k's whole field in the block. */
static bool op_field(const struct fx *x, uint32_t k, size_t *start, size_t *end)
{
	const uint8_t *p = al_src(&x->g->nodes[k])->msg.p;
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, x->block);
	while ((*start = it.pos, pb_next(&it, &f)))
		if (f.num == BLOCK_OPS && f.wire == PB_LEN && f.data.p == p) {
			*end = it.pos;
			return true;
		}
	return false;
}

static bool add_val(struct fx *x, const char *name, int prod, uint32_t k, int dt)
{
	if (!name)
		return true; /* an unnamed output: nothing reads it */
	if (x->nv == x->cap) {
		uint32_t cap = x->cap ? 2 * x->cap : 64;
		struct fval *v = ali_realloc(x->v, (size_t)cap * sizeof *v);
		if (!v)
			return false;
		x->v = v;
		x->cap = cap;
	}
	x->v[x->nv++] = (struct fval){.name = name, .prod = prod, .out_k = k, .dt = dt, .n16 = name, .n32 = name};
	return true;
}

/* The function's values (its inputs, every op's outputs) into x->v, and the
 * checks of the whole block: no nested blocks, no unknown op, some fp32
 * compute (else false with no reason: nothing to convert), no fp16 op yet, one
 * function. io: the block's inputs and outputs. */
static bool scan_values(struct fx *x, const struct al_submodel *sub, const struct al_mil_block_io *io)
{
	struct al_mil_pass *c = x->c;
	const struct al_graph *g = x->g;
	for (uint32_t i = 0; i < io->n_inputs; i++)
		if (io->inputs[i] && !add_val(x, io->inputs[i], -1, 0, io->in_types[i].kind == 0 ? io->in_types[i].dtype : 0))
			return ali_mil_say(c, "out of memory");
	uint32_t n16 = 0, n32 = 0;
	const struct al_node *eg16 = NULL;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *n = &g->nodes[k];
		if (!n->type || !al_src(n) || !al_src(n)->msg.p)
			return ali_mil_say(c, "op %u has no message", k);
		if (n->n_sub)
			return ali_mil_say(c, "'%s' (%s) has nested blocks: their ops read outer values by name "
					   "(not converted)", n->name ? n->name : "?", n->type);
		if (n->kind < 0)
			return ali_mil_say(c, "'%s' is a %s, an op anelint does not know: its fp16 form cannot be "
					   "proved", n->name ? n->name : "?", n->type);
		bool is_const = n->kind == AL_MILK_const;
		for (uint32_t j = 0; j < n->n_outputs; j++) {
			int dt = n->out_types && n->out_types[j].kind == 0 ? n->out_types[j].dtype : 0;
			if (!is_const && dt == AL_DT_FP16 && !eg16)
				eg16 = n;
			n16 += !is_const && dt == AL_DT_FP16;
			/* casts alone (an fp16 program's I/O casts) are no fp32 compute */
			n32 += !is_const && dt == AL_DT_FP32 && n->kind != AL_MILK_cast;
			if (!add_val(x, n->outputs[j], (int)k, j, dt))
				return ali_mil_say(c, "out of memory");
		}
	}
	if (!n32)
		return c->why[0] = '\0', false;
	if (n16)
		return ali_mil_say(c, "%u ops produce fp16 values already (e.g. '%s', a %s): a mixed program (fp32 "
				   "islands are mil-fp32-island's)", n16, eg16->name ? eg16->name : "?", eg16->type);
	if (sub->n_functions != 1 || sub->n_fdescs > 1)
		return ali_mil_say(c, "a program with %u functions", sub->n_fdescs > 1 ? sub->n_fdescs : sub->n_functions);
	return true;
}

/* Why op n must stay fp32 because it reads an fp32 const beyond fp16's range
 * (bad[its producer]), or NULL. */
static const char *const_reason(struct fx *x, const struct al_node *n, const bool *bad)
{
	struct al_mil_pass *c = x->c;
	const char *why = NULL;
	/* an fp32 constant beyond fp16 (read where the op would read fp16) */
	const struct al_node_src *src = al_src(n);
	for (uint32_t a = 0; !why && a < src->n_mil_args; a++) {
		const struct al_mil_arg *arg = &src->mil_args[a];
		if (arg->param && fp32_only(x, n, arg->param))
			continue;
		for (uint32_t b = 0; !why && b < arg->n_binds; b++) {
			const struct al_mil_bind *bd = &arg->binds[b];
			const struct fval *v = bd->kind == 1 && bd->input < n->n_inputs && n->inputs[bd->input]
						       ? fx_find(x, n->inputs[bd->input]) : NULL;
			if (v && v->prod >= 0 && bad[v->prod])
				why = ali_arena_printf(&c->s->arena, "reads '%s', an fp32 constant beyond fp16's "
						       "range (|v| > 65504) or not readable", v->name);
		}
	}
	return why;
}

/* Why op n must stay fp32 because of an fp32 literal bound in place (not a
 * const op) to a parameter that would read fp16, or NULL. */
static const char *literal_reason(struct fx *x, const struct al_node *n)
{
	struct al_mil_pass *c = x->c;
	const char *why = NULL;
	/* a literal bound in place (not a const op) */
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, al_src(n)->msg);
	while (!why && pb_next(&it, &f)) {
		al_span arg, key = {0};
		if (f.num != OP_INPUTS || f.wire != PB_LEN || !pb_get_bytes(f.data, PB_MAP_VALUE, &arg))
			continue;
		(void)pb_get_bytes(f.data, PB_MAP_KEY, &key);
		char param[64] = "";
		if (key.p && key.n < sizeof param)
			memcpy(param, key.p, key.n), param[key.n] = '\0';
		if (param[0] && fp32_only(x, n, param))
			continue; /* stays fp32 where it is */
		struct pb_iter ai;
		struct pb_field af;
		pb_iter_init(&ai, arg);
		while (pb_next(&ai, &af)) {
			al_span lit;
			struct al_mil_value mv;
			if (af.num == AL_PB_Argument_arguments && af.wire == PB_LEN &&
			    pb_get_bytes(af.data, AL_PB_Argument_Binding_value, &lit) &&
			    ali_mil_value_read(lit, &mv) && mv.dtype == AL_DT_FP32)
				why = ali_arena_printf(&c->s->arena, "'%.*s' is an fp32 literal bound in place",
						       (int)(key.n < 64 ? key.n : 64), (const char *)key.p);
		}
	}
	return why;
}

/* Each op's kind (x->kind): converted to fp16, kept fp32 (with why), a cast, a
 * const, or other (no float value). bad: the fp32 consts that do not fit fp16. */
static void classify_ops(struct fx *x, const bool *bad)
{
	struct al_mil_pass *c = x->c;
	const struct al_graph *g = x->g;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *n = &g->nodes[k];
		if (x->kind[k] == K_CONST)
			continue;
		const char *why = kept_type(n->type);
		bool any_float = false;
		for (uint32_t j = 0; j < n->n_outputs; j++)
			any_float |= n->out_types && n->out_types[j].kind == 0 && is_float(n->out_types[j].dtype);
		for (uint32_t i = 0; i < n->n_inputs; i++) {
			const struct fval *v = n->inputs[i] ? fx_find(x, n->inputs[i]) : NULL;
			any_float |= v && is_float(v->dt);
		}
		if (!why)
			why = const_reason(x, n, bad);
		if (!why)
			why = literal_reason(x, n);
		uint32_t n_float = 0, n_only32 = 0;
		float_inputs(x, n, &n_float, &n_only32);
		if (!why && n_float && n_only32 == n_float)
			why = ali_arena_printf(&c->s->arena, "on opset iOS %d %s takes fp32 only (its op definition)",
					       x->ios, n->type);
		if (n->kind == AL_MILK_cast) {
			x->kind[k] = K_CAST; /* to fp32: to fp16 instead; else as it is */
			x->n_conv++;
		} else if (!any_float) {
			x->kind[k] = K_OTHER;
		} else if (why) {
			x->kind[k] = K_KEEP;
			x->why_kept[k] = why;
			x->n_keep++;
			if (!x->keep_eg) {
				x->keep_eg = n->name;
				x->keep_why = why;
			}
		} else {
			x->kind[k] = K_CONV;
			x->n_conv++;
			x->n_in32 += n_only32;
		}
	}
}

/* Which values are read in fp16 (need16) and which in fp32 (need32), by the
 * ops converted or kept. */
static void mark_readers(struct fx *x)
{
	const struct al_graph *g = x->g;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *n = &g->nodes[k];
		if (x->kind[k] != K_CONV && x->kind[k] != K_KEEP)
			continue;
		/* by parameter: an fp16 op's fp32-only inputs read the fp32 form */
		const struct al_node_src *src = al_src(n);
		for (uint32_t a = 0; a < src->n_mil_args; a++) {
			const struct al_mil_arg *arg = &src->mil_args[a];
			bool read16 = x->kind[k] == K_CONV && !(arg->param && fp32_only(x, n, arg->param));
			for (uint32_t b = 0; b < arg->n_binds; b++) {
				const struct al_mil_bind *bd = &arg->binds[b];
				struct fval *v = bd->kind == 1 && bd->input < n->n_inputs && n->inputs[bd->input]
							 ? fx_find(x, n->inputs[bd->input]) : NULL;
				if (!v || v->cls == VAL_OTHER)
					continue;
				if (read16)
					v->need16 = true;
				else
					v->need32 = true;
			}
		}
	}
}

/* Each value's class after the rewrite (from its producer's kind); then the
 * fp32 consts read in fp16: fp16 in place when only fp16 ops read them, else an
 * fp16 copy. */
static void classify_values(struct fx *x)
{
	for (uint32_t i = 0; i < x->nv; i++) {
		struct fval *v = &x->v[i];
		if (v->dt != AL_DT_FP32)
			v->cls = VAL_OTHER;
		else if (v->prod < 0 || x->kind[v->prod] == K_KEEP || x->kind[v->prod] == K_CONST)
			v->cls = VAL_KEEP32;
		else if (x->kind[v->prod] == K_CONV || x->kind[v->prod] == K_CAST)
			v->cls = VAL_CONV16;
		else
			v->cls = VAL_KEEP32;
	}
	mark_readers(x);
	/* fp32 consts: fp16 in place when only fp16 ops read them, else an fp16 copy */
	for (uint32_t i = 0; i < x->nv; i++) {
		struct fval *v = &x->v[i];
		if (v->cls != VAL_KEEP32 || v->prod < 0 || x->kind[v->prod] != K_CONST || !v->need16)
			continue;
		if (!v->need32 && !v->is_out) {
			v->cls = VAL_CONV16;
			x->kind[v->prod] = K_CONST16;
			x->n_c16++;
		} else {
			x->kind[v->prod] = K_CONSTDUP;
			x->n_dup++;
		}
	}
}

/* Classify every op and value (x->v, x->kind); false with c->why when the pass
 * does not apply (c->why empty: nothing to do, reported quietly). */
static bool classify(struct fx *x, const struct al_submodel *sub)
{
	struct al_mil_pass *c = x->c;
	const struct al_graph *g = x->g;
	struct al_mil_block_io io;
	if (!ali_mil_block_io(g, &io))
		return ali_mil_say(c, "the function's block is not readable");
	if (!scan_values(x, sub, &io))
		return false;
	if (!(x->sorted = ali_malloc((x->nv + 1) * sizeof *x->sorted)) ||
	    !(x->kind = ali_calloc(g->n_nodes + 1, sizeof *x->kind)) ||
	    !(x->why_kept = ali_calloc(g->n_nodes + 1, sizeof *x->why_kept)))
		return ali_mil_say(c, "out of memory");
	for (uint32_t i = 0; i < x->nv; i++)
		x->sorted[i] = i;
	ali_sort_r(x->sorted, x->nv, sizeof *x->sorted, by_name, x->v);
	for (uint32_t i = 0; i < io.n_outputs; i++) {
		struct fval *v = io.outputs[i] ? fx_find(x, io.outputs[i]) : NULL;
		if (v)
			v->is_out = true;
	}
	/* fp32 consts: whether they fit fp16 (an op reading one that does not stays fp32) */
	bool *bad = ali_calloc(g->n_nodes + 1, sizeof *bad);
	if (!bad)
		return ali_mil_say(c, "out of memory");
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *n = &g->nodes[k];
		if (n->kind != AL_MILK_const) {
			x->kind[k] = K_OTHER;
			continue;
		}
		x->kind[k] = K_CONST;
		if (n->n_outputs != 1 || !n->out_types || n->out_types[0].dtype != AL_DT_FP32)
			continue;
		bad[k] = !const_fits(x, n);
	}
	classify_ops(x, bad);
	ali_free(bad);
	classify_values(x);
	return true;
}

/* The names: fp16 / fp32 forms where a cast or a copy provides them. */
static bool name_values(struct fx *x)
{
	for (uint32_t i = 0; i < x->nv; i++) {
		struct fval *v = &x->v[i];
		if (v->cls == VAL_CONV16 && v->is_out) {
			v->n16 = ali_mil_fresh(x->c, v->name, "cast_fp16"); /* the cast back is v itself */
		} else if (v->cls == VAL_CONV16 && v->need32) {
			v->n32 = ali_mil_fresh(x->c, v->name, "to_fp32");
		} else if (v->cls == VAL_KEEP32 && v->need16) {
			v->n16 = ali_mil_fresh(x->c, v->name, "to_fp16");
		} else {
			continue;
		}
		if (!v->n16 || !v->n32)
			return ali_mil_say(x->c, "no free value name");
	}
	return true;
}

/* The cast / copy ops that follow value v's producer, appended to `to`. */
static bool after_ops(struct fx *x, const struct fval *v, struct al_buf *to)
{
	if (v->cls == VAL_CONV16 && (v->is_out || v->need32))
		return cast_op(x, to, v, v->n16, v->n32, AL_DT_FP32);
	if (v->cls == VAL_KEEP32 && v->need16) {
		if (v->prod >= 0 && x->kind[v->prod] == K_CONSTDUP)
			return dup_const(x, (uint32_t)v->prod, v, to);
		return cast_op(x, to, v, v->name, v->n16, AL_DT_FP16);
	}
	return true;
}

static void fx_free(struct fx *x)
{
	ali_free(x->v);
	ali_free(x->sorted);
	ali_free(x->kind);
	ali_free(x->why_kept);
}

static bool build(struct fx *x)
{
	struct al_mil_pass *c = x->c;
	const struct al_graph *g = x->g;
	uint32_t nb = g->n_nodes + 1;
	struct al_buf *rep = ali_calloc(nb, sizeof *rep), *aft = ali_calloc(nb, sizeof *aft);
	bool ok = rep && aft;
	if (!ok)
		ok = ali_mil_say(c, "out of memory");
	x->dt16 = ok ? ali_mil_fresh(c, "fp16_compute", "dtype_fp16") : NULL;
	x->dt32 = ok ? ali_mil_fresh(c, "fp16_compute", "dtype_fp32") : NULL;
	if (ok && (!x->dt16 || !x->dt32))
		ok = ali_mil_say(c, "no free value name");
	/* aft[0]: before the first op (the dtype strings, the inputs' casts);
	 * aft[k + 1]: after op k */
	if (ok) {
		string_const(&aft[0], x->dt16, "fp16");
		string_const(&aft[0], x->dt32, "fp32");
	}
	for (uint32_t i = 0; i < x->nv && ok; i++) {
		const struct fval *v = &x->v[i];
		ok = after_ops(x, v, &aft[v->prod < 0 ? 0 : (uint32_t)v->prod + 1]);
	}
	for (uint32_t k = 0; k < g->n_nodes && ok; k++)
		if (x->kind[k] == K_CONV || x->kind[k] == K_KEEP || x->kind[k] == K_CAST || x->kind[k] == K_CONST16)
			ok = rebuild_op(x, k, &rep[k]);
	for (uint32_t k = 0; k < nb && ok; k++)
		ok = !(rep && rep[k].failed) && !aft[k].failed;
	if (!ok && !c->why[0])
		ali_mil_say(c, "out of memory");
	enum al_status st = AL_OK;
	for (uint32_t k = 0; k < g->n_nodes && ok && st == AL_OK; k++) {
		al_span msg = al_src(&g->nodes[k])->msg;
		size_t a, b;
		if (rep[k].n && (rep[k].n != msg.n || memcmp(rep[k].p, msg.p, msg.n) != 0))
			st = ali_splice_replace(c->s->sp, msg, msg.p, msg.n, rep[k].p, rep[k].n);
		if (st == AL_OK && aft[k].n) {
			if (!op_field(x, k, &a, &b))
				st = AL_E_FORMAT;
			else
				st = ali_splice_replace(c->s->sp, x->block, x->block.p + a, 0, aft[k].p, aft[k].n);
		}
		if (st == AL_OK && k + 1 == g->n_nodes && aft[k + 1].n) {
			if (!op_field(x, k, &a, &b))
				st = AL_E_FORMAT;
			else
				st = ali_splice_replace(c->s->sp, x->block, x->block.p + b, 0, aft[k + 1].p, aft[k + 1].n);
		}
	}
	for (uint32_t k = 0; k < nb; k++) {
		if (rep)
			ali_buf_free(&rep[k]);
		if (aft)
			ali_buf_free(&aft[k]);
	}
	ali_free(rep);
	ali_free(aft);
	if (ok && st != AL_OK)
		return ali_mil_say(c, "the program could not be rewritten (%s)", al_status_str(st));
	return ok;
}

bool ali_pass_mil_fp16(struct al_mil_pass *c)
{
	struct al_surgery *s = c->s;
	const al_model *m = s->m;
	if (m->n_subs != 1 || m->subs[0]->world != AL_WORLD_MIL || !m->subs[0]->n_graphs)
		return c->why[0] = '\0', false;
	const struct al_submodel *sub = m->subs[0];
	struct al_node_src fake = {.sub = sub};
	if (!c->src)
		c->src = &fake; /* ali_mil_fresh looks at the program's names */
	struct fx x = {.c = c, .g = sub->graphs[0], .ios = sub->opsets ? ali_mil_opset_ios(sub->opsets[0]) : 0};
	bool ok = classify(&x, sub);
	if (ok && !m->is_package && !m->weights.p)
		ok = ali_mil_say(c, "an ML Program outside its .mlpackage: new constants need its weight.bin");
	if (ok && s->opts && s->opts->n_shapes)
		ok = ali_mil_say(c, "with --shape / --enumerate: run fix --allow approximate again on their output");
	if (ok && !find_block(&x, sub))
		ok = ali_mil_say(c, "the function's block is not found in the file");
	if (!ok) {
		fx_free(&x);
		if (c->src == &fake)
			c->src = NULL;
		return false;
	}
	uint32_t n_io = 0;
	for (uint32_t i = 0; i < x.nv; i++)
		n_io += (x.v[i].prod < 0 && x.v[i].cls == VAL_KEEP32 && x.v[i].need16) ||
			(x.v[i].cls == VAL_CONV16 && x.v[i].is_out);
	/* every fp32 op one kept fp32 (an iOS 15 lstm): converting nothing would
	 * "apply" in every round and keep the per-op passes from running */
	if (!x.n_conv && !x.n_c16 && !x.n_dup && !n_io)
		ok = ali_mil_say(c, "its %u fp32 ops stay fp32 (e.g. '%.32s', %s): nothing to convert", x.n_keep,
				 x.keep_eg, "an op coremltools keeps in fp32");
	bool build_it = ok && (!s->opts || s->opts->allow >= AL_EQ_APPROXIMATE);
	if (build_it)
		ok = name_values(&x) && build(&x);
	if (ok) {
		char kept[80] = "";
		if (x.n_keep)
			snprintf(kept, sizeof kept, ", %u kept fp32 between casts (e.g. '%.32s')", x.n_keep, x.keep_eg);
		char in32[64] = "";
		if (x.n_in32)
			snprintf(in32, sizeof in32, ", %u fp32-only inputs left fp32", x.n_in32);
		char blobs[32] = "";
		if (build_it)
			snprintf(blobs, sizeof blobs, " (%u new blobs)", x.n_blobs);
		char all[320];
		snprintf(all, sizeof all, "%u ops in fp16%s%s; %u fp32 consts -> fp16%s; casts at %u fp32 inputs / outputs",
			 x.n_conv, kept, in32, x.n_c16 + x.n_dup, blobs, n_io);
		size_t al = strlen(all);
		if (al >= sizeof c->after)
			al = sizeof c->after - 1;
		memcpy(c->after, all, al);
		c->after[al] = '\0';
	}
	fx_free(&x);
	if (c->src == &fake)
		c->src = NULL;
	return ok;
}
