/* SPDX-License-Identifier: MIT */
/* mil_build.c: what the ML Program passes (src/rewrite/passes/mil_*.c,
 * surgery_fp16.c, surgery_quant.c, surgery_model.c) build their rewrites with:
 * the checks every pass starts with, fresh value names, MIL Operation / Value /
 * ValueType messages, const ops before the rewritten op, new constants in
 * weight.bin, the fp16 edits of a model description, and the glue to the
 * package writer (src/format/pkgwrite.c).
 *
 * A const with 10 or more fp16 / fp32 values goes into weight.bin as a new blob
 * (storage v2, docs in coreml-format-facts section 8) appended after the
 * existing ones at a 64-byte aligned offset; smaller ones are immediate. The
 * package writer then writes the input's weight.bin with the new blobs
 * appended and its header count raised, or, when the rewrites left blobs
 * unreferenced, only the live ones (compact.c). */
#include "surgery_int.h"
#include "coreml_fields.h"
#include "kernels.h"
#include "pkgwrite.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WEIGHTS_FILE "@model_path/weights/weight.bin"
#define BLOB_ALIGN 64
#define BLOB_META 64
#define BLOB_MIN_ELEMS 10          /* coremltools: a const of >= 10 values goes to weight.bin */



bool ali_mil_say(struct al_mil_pass *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof c->why, fmt, ap);
	va_end(ap);
	return false;
}

/* The first field `num` of msg (its payload, and its [start, end) in msg). */
bool ali_pb_first(al_span msg, uint32_t num, al_span *data, size_t *start, size_t *end)
{
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f))
		if (f.num == num && (!data || f.wire == PB_LEN)) {
			if (data)
				*data = f.data;
			if (start)
				*start = f.start;
			if (end)
				*end = it.pos;
			return true;
		}
	return false;
}

/* The message in list field `num` of msg whose name is `name`: the lists it reads
 * (a function's inputs, the description's features) name their entries alike. */
_Static_assert(AL_PB_NamedValueType_name == AL_PB_FeatureDescription_name, "entry names");
#define NAMED_NAME AL_PB_NamedValueType_name
bool ali_pb_named(al_span msg, uint32_t num, const char *name, al_span *out)
{
	struct pb_iter it;
	struct pb_field f;
	al_span nm;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f))
		if (f.num == num && f.wire == PB_LEN && pb_get_bytes(f.data, NAMED_NAME, &nm) && ali_span_eq(nm, name)) {
			*out = f.data;
			return true;
		}
	return false;
}

/* ------------------------------------------------------------------ names */

static bool graph_has(const struct al_graph *g, const char *name, int depth)
{
	struct al_mil_block_io io;
	if (!g || depth > AL_MAX_DEPTH)
		return false;
	if (ali_mil_block_io(g, &io))
		for (uint32_t i = 0; i < io.n_inputs; i++)
			if (io.inputs[i] && strcmp(io.inputs[i], name) == 0)
				return true;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *n = &g->nodes[k];
		for (uint32_t j = 0; j < n->n_outputs; j++)
			if (n->outputs[j] && strcmp(n->outputs[j], name) == 0)
				return true;
		for (uint32_t j = 0; j < n->n_sub; j++)
			if (graph_has(n->sub[j], name, depth + 1))
				return true;
	}
	return false;
}

/* A value name no op of the program defines and no earlier rewrite took. */
const char *ali_mil_fresh(struct al_mil_pass *c, const char *base, const char *suffix)
{
	const struct al_submodel *sub = c->src->sub;
	for (int k = 0; k < 100; k++) {
		char *nm = k ? ali_arena_printf(&c->s->arena, "%s_%s%d", base, suffix, k)
			     : ali_arena_printf(&c->s->arena, "%s_%s", base, suffix);
		if (!nm)
			return NULL;
		bool taken = false;
		for (uint32_t i = 0; i < sub->n_inputs && !taken; i++)
			taken = strcmp(sub->inputs[i].name, nm) == 0;
		for (uint32_t g = 0; g < sub->n_graphs && !taken; g++)
			taken = graph_has(sub->graphs[g], nm, 0);
		for (size_t i = 0; i < c->s->n_newnames && !taken; i++)
			taken = strcmp(c->s->newnames[i], nm) == 0;
		if (taken)
			continue;
		const char **nn = ali_realloc(c->s->newnames, (c->s->n_newnames + 1) * sizeof *nn);
		if (!nn)
			return NULL;
		c->s->newnames = nn;
		nn[c->s->n_newnames++] = nm;
		return nm;
	}
	return NULL;
}

/* ------------------------------------------------------------------ weight.bin */

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

uint64_t ali_surgery_wsize(const struct al_surgery *s)
{
	return (uint64_t)s->m->weights.n + s->wtail.n;
}

/* Append one blob (metadata + data) to the new weight.bin; its metadata offset
 * (what BlobFileValue.offset names), or UINT64_MAX when out of memory. */
uint64_t ali_mil_add_blob(struct al_surgery *s, uint32_t blob_dtype, const void *data, size_t n)
{
	static const uint8_t zeros[BLOB_ALIGN];
	struct al_buf *t = &s->wtail;
	if (ali_surgery_wsize(s) == 0) { /* no weight.bin yet: a storage header, count patched later */
		uint8_t h[64] = {0};
		le32(h + 4, 2);
		ali_buf_put(t, h, sizeof h);
	}
	uint64_t end = ali_surgery_wsize(s);
	uint64_t meta = (end + BLOB_ALIGN - 1) / BLOB_ALIGN * BLOB_ALIGN;
	ali_buf_put(t, zeros, (size_t)(meta - end));
	uint8_t md[BLOB_META] = {0};
	le32(md, 0xDEADBEEFu);
	le32(md + 4, blob_dtype);
	le64(md + 8, n);
	le64(md + 16, meta + BLOB_META);
	ali_buf_put(t, md, sizeof md);
	ali_buf_put(t, data, n);
	if (t->failed)
		return UINT64_MAX;
	s->wcount++;
	return meta;
}

/* Value.blobFileValue (5) {fileName 1 = @model_path/weights/weight.bin, offset 2}
 * into v: a value held by the new weight.bin's blob at metadata offset `off`. */
void ali_mil_put_blob_value(struct al_buf *v, uint64_t off)
{
	struct al_buf bf = {0};
	ali_buf_str(&bf, AL_PB_Value_BlobFileValue_fileName, WEIGHTS_FILE);
	ali_buf_uint(&bf, AL_PB_Value_BlobFileValue_offset, off);
	ali_buf_len(v, VALUE_BLOB, bf.p, bf.n);
	v->failed |= bf.failed;
	ali_buf_free(&bf);
}

/* The first 4 bytes of the new weight.bin: the blob count. */
static uint32_t new_count(const struct al_surgery *s)
{
	uint32_t old = s->m->weights.n >= 4 ? al_rd32le(s->m->weights.p) : 0;
	return old + s->wcount;
}

enum al_status al_surgery_weights(al_surgery *s, const void **out, size_t *n, al_diags *d)
{
	if (!s || !out || !n)
		return AL_E_INVALID_ARG;
	*out = s->m->weights.n ? s->m->weights.p : NULL;
	*n = s->m->weights.n;
	if (s->wtail.failed) {
		ali_diag_add(d, AL_SEV_ERROR, s->m->path, UINT64_MAX, NULL, NULL, "out of memory");
		return AL_E_NOMEM;
	}
	if (!s->wcount)
		return AL_OK;
	if (!s->wimage && s->m->weights.n && s->m->weights_path) {
		/* the input's weight.bin mapped again, copy-on-write, with the new
		 * blobs after it: only the count's page and the tail's are written, so
		 * a 500 MB weight.bin costs no copy here and no 500 MB of memory
		 * (bench/README.md "fix against cp"); else the copy below */
		size_t a = s->m->weights.n;
		int fd;
		struct stat sb;
		if (ali_open_regular(s->m->weights_path, NULL, &fd, &sb, NULL) == AL_OK) {
			uint8_t *p = (uint64_t)sb.st_size == a ? ali_map_cow(fd, a, s->wtail.n) : NULL;
			close(fd);
			if (p) {
				memcpy(p + a, s->wtail.p, s->wtail.n);
				le32(p, new_count(s));
				ali_guard_add(p, a, s->m->weights_path);
				s->wimage = p;
				s->wimage_n = a + s->wtail.n;
				s->wimage_mapped = true;
			}
		}
	}
	if (!s->wimage) {
		size_t a = s->m->weights.n, total = a + s->wtail.n;
		uint8_t *p = ali_malloc(total ? total : 1);
		if (!p) {
			ali_diag_add(d, AL_SEV_ERROR, s->m->path, UINT64_MAX, NULL, NULL, "out of memory");
			return AL_E_NOMEM;
		}
		if (a)
			memcpy(p, s->m->weights.p, a);
		memcpy(p + a, s->wtail.p, s->wtail.n);
		le32(p, new_count(s));
		s->wimage = p;
		s->wimage_n = total;
	}
	*out = s->wimage;
	*n = s->wimage_n;
	return AL_OK;
}

/* ------------------------------------------------------------------ values */

/* ValueType{tensorType{dataType 1, rank 2, dimensions 3 {constant 1 {size 1}}}};
 * a negative dim is an unknown one (dimensions 3 {unknown 2 {}}): a symbolic
 * axis of a flexible input, as the converter declares it ("?" in MIL text). */
void ali_surgery_put_vtype(struct al_buf *b, int dtype, int rank, const int64_t *dims)
{
	struct al_buf tt = {0};
	ali_buf_uint(&tt, AL_PB_TensorType_dataType, (uint64_t)dtype);
	ali_buf_uint(&tt, AL_PB_TensorType_rank, (uint64_t)rank);
	for (int i = 0; i < rank; i++) {
		struct al_buf cd = {0}, dim = {0};
		if (dims[i] >= 0)
			ali_buf_uint(&cd, AL_PB_Dimension_ConstantDimension_size, (uint64_t)dims[i]);
		ali_buf_len(&dim, dims[i] >= 0 ? AL_PB_Dimension_constant : AL_PB_Dimension_unknown, cd.p, cd.n);
		ali_buf_len(&tt, AL_PB_TensorType_dimensions, dim.p, dim.n);
		tt.failed |= cd.failed || dim.failed;
		ali_buf_free(&cd);
		ali_buf_free(&dim);
	}
	b->failed |= tt.failed;
	ali_buf_len(b, AL_PB_ValueType_tensorType, tt.p, tt.n);
	ali_buf_free(&tt);
}

/* attributes entry {key, value} */
void ali_mil_put_attr(struct al_buf *op, const char *key, const void *val, size_t n)
{
	struct al_buf e = {0};
	ali_buf_str(&e, PB_MAP_KEY, key);
	ali_buf_len(&e, PB_MAP_VALUE, val, n);
	op->failed |= e.failed;
	ali_buf_len(op, OP_ATTRS, e.p, e.n);
	ali_buf_free(&e);
}

/* A scalar string Value (an op's "name" attribute). */
void ali_mil_put_string_value(struct al_buf *v, const char *s)
{
	struct al_buf vt = {0}, rs = {0}, tv = {0}, iv = {0};
	ali_surgery_put_vtype(&vt, AL_DT_STRING, 0, NULL);
	ali_buf_str(&rs, AL_PB_TensorValue_RepeatedStrings_values, s);
	ali_buf_len(&tv, AL_PB_TensorValue_strings, rs.p, rs.n);
	ali_buf_len(&iv, AL_PB_Value_ImmediateValue_tensor, tv.p, tv.n);
	ali_buf_len(v, VALUE_TYPE, vt.p, vt.n);
	ali_buf_len(v, VALUE_IMMEDIATE, iv.p, iv.n);
	v->failed |= vt.failed || rs.failed || tv.failed || iv.failed;
	ali_buf_free(&vt);
	ali_buf_free(&rs);
	ali_buf_free(&tv);
	ali_buf_free(&iv);
}

/* Whether x is exactly a value of dtype (fp16 / fp32 / int32 / bool). */
bool ali_mil_exact_in(int dtype, double x)
{
	switch (dtype) {
	case AL_DT_FP32: return isnan(x) || (double)(float)x == x;
	case AL_DT_FP16: {
		float f = (float)x;
		return isnan(x) || ((double)f == x && ali_f16_to_f32(ali_f16_from_f32(f)) == f);
	}
	case AL_DT_INT32: return x == floor(x) && x >= -2147483648.0 && x <= 2147483647.0;
	case AL_DT_BOOL: return x == 0 || x == 1;
	}
	return false;
}

/* Value.immediateValue (3) {tensor 1 {TensorValue field tv_field: rep}} into v:
 * tv_field 1 floats, 2 ints, 3 bools, 7 bytes (fp16); rep holds its values. */
void ali_mil_put_immediate(struct al_buf *v, uint32_t tv_field, const struct al_buf *rep)
{
	struct al_buf tv = {0}, iv = {0};
	ali_buf_len(&tv, tv_field, rep->p, rep->n);
	ali_buf_len(&iv, AL_PB_Value_ImmediateValue_tensor, tv.p, tv.n);
	ali_buf_len(v, VALUE_IMMEDIATE, iv.p, iv.n);
	v->failed |= rep->failed || tv.failed || iv.failed;
	ali_buf_free(&tv);
	ali_buf_free(&iv);
}

/* A tensor Value of dtype and shape holding x[0..n): fp16 / fp32 with >= 10
 * values as a new weight.bin blob, else immediate. Values must be exact_in. */
bool ali_mil_put_tensor_value(struct al_mil_pass *c, struct al_buf *v, int dtype, int rank,
			     const int64_t *dims, const double *x, size_t n, bool *blob)
{
	struct al_buf vt = {0}, rep = {0};
	uint32_t field;
	ali_surgery_put_vtype(&vt, dtype, rank, dims);
	ali_buf_len(v, VALUE_TYPE, vt.p, vt.n);
	v->failed |= vt.failed;
	ali_buf_free(&vt);
	*blob = (dtype == AL_DT_FP16 || dtype == AL_DT_FP32) && n >= BLOB_MIN_ELEMS;
	size_t w = dtype == AL_DT_FP16 ? 2 : 4;
	if (dtype == AL_DT_FP16 || dtype == AL_DT_FP32) {
		uint8_t *raw = ali_malloc(n * w + 1);
		if (!raw) {
			v->failed = true;
			return ali_mil_say(c, "out of memory");
		}
		for (size_t i = 0; i < n; i++) {
			float f = (float)x[i];
			if (dtype == AL_DT_FP16) {
				uint16_t h = ali_f16_from_f32(f);
				raw[2 * i] = (uint8_t)h;
				raw[2 * i + 1] = (uint8_t)(h >> 8);
			} else {
				uint32_t u;
				memcpy(&u, &f, 4);
				le32(raw + 4 * i, u);
			}
		}
		if (*blob) {
			uint64_t off = ali_mil_add_blob(c->s, dtype == AL_DT_FP16 ? 1 : 2, raw, n * w);
			ali_free(raw);
			if (off == UINT64_MAX) {
				v->failed = true;
				return ali_mil_say(c, "out of memory");
			}
			ali_mil_put_blob_value(v, off);
			return !v->failed || ali_mil_say(c, "out of memory");
		}
		/* TensorValue.bytes {values}; floats {values, packed}: both a first field */
		_Static_assert(AL_PB_TensorValue_RepeatedBytes_values == AL_PB_TensorValue_RepeatedFloats_values, "");
		ali_buf_len(&rep, AL_PB_TensorValue_RepeatedFloats_values, raw, n * w);
		field = dtype == AL_DT_FP16 ? AL_PB_TensorValue_bytes : AL_PB_TensorValue_floats;
		ali_free(raw);
	} else if (dtype == AL_DT_INT32 || dtype == AL_DT_BOOL) {
		uint64_t *u = ali_malloc(n * sizeof *u + 1);
		if (!u) {
			v->failed = true;
			return ali_mil_say(c, "out of memory");
		}
		for (size_t i = 0; i < n; i++)
			u[i] = (uint64_t)(int64_t)x[i]; /* int32 negatives: sign-extended varints */
		_Static_assert(AL_PB_TensorValue_RepeatedInts_values == AL_PB_TensorValue_RepeatedBools_values, "");
		ali_buf_packed(&rep, AL_PB_TensorValue_RepeatedInts_values, u, n);
		field = dtype == AL_DT_INT32 ? AL_PB_TensorValue_ints : AL_PB_TensorValue_bools;
		ali_free(u);
	} else {
		return ali_mil_say(c, "a %s constant is not written", al_dtype_name(dtype));
	}
	ali_mil_put_immediate(v, field, &rep);
	ali_buf_free(&rep);
	return !v->failed || ali_mil_say(c, "out of memory");
}

/* The op's own "name" attribute (copied), else one naming `fallback`. */
void ali_mil_put_name_attr(struct al_mil_pass *c, struct al_buf *op, const char *fallback)
{
	al_span val;
	if (c && ali_mil_attr(c->n, "name", &val)) {
		ali_mil_put_attr(op, "name", val.p, val.n);
		return;
	}
	struct al_buf v = {0};
	ali_mil_put_string_value(&v, fallback);
	op->failed |= v.failed;
	ali_mil_put_attr(op, "name", v.p, v.n);
	ali_buf_free(&v);
}

/* The source op's outputs (all, or output 0 only) and its name attribute
 * copied onto the rewritten op `op`: what every pass that replaces an op in
 * place keeps, so the values read after it keep their names. */
bool ali_mil_keep_outputs(struct al_mil_pass *c, struct al_buf *op, const char *base, bool first_only)
{
	struct pb_iter it;
	struct pb_field f;
	size_t start;
	pb_iter_init(&it, c->src->msg);
	while ((start = it.pos, pb_next(&it, &f)))
		if (f.num == OP_OUTPUTS) {
			ali_buf_put(op, c->src->msg.p + start, it.pos - start);
			if (first_only)
				break;
		}
	if (it.err)
		return ali_mil_say(c, "the op message could not be re-read");
	ali_mil_put_name_attr(c, op, base);
	return true;
}

/* A const op (Operation message) with output `name` holding value v of type vt. */
static void const_op(struct al_buf *op, const char *name, const struct al_buf *vt,
			 const struct al_buf *v, struct al_mil_pass *keep_name)
{
	struct al_buf nv = {0};
	ali_buf_str(op, OP_TYPE, "const");
	ali_buf_str(&nv, AL_PB_NamedValueType_name, name);
	ali_buf_len(&nv, AL_PB_NamedValueType_type, vt->p, vt->n);
	ali_buf_len(op, OP_OUTPUTS, nv.p, nv.n);
	op->failed |= nv.failed;
	ali_buf_free(&nv);
	ali_mil_put_name_attr(keep_name, op, name);
	ali_mil_put_attr(op, "val", v->p, v->n);
}

/* Replace op c->n by a const of the given value (its output name kept). */
bool ali_mil_fold_to_const(struct al_mil_pass *c, int dtype, int rank, const int64_t *dims, const double *x,
			  size_t n)
{
	struct al_buf v = {0}, vt = {0};
	bool blob = false;
	if (!ali_mil_put_tensor_value(c, &v, dtype, rank, dims, x, n, &blob)) {
		ali_buf_free(&v);
		return false;
	}
	ali_surgery_put_vtype(&vt, dtype, rank, dims);
	const_op(&c->layer, c->n->outputs[0], &vt, &v, c);
	ali_buf_free(&v);
	ali_buf_free(&vt);
	if (c->layer.failed)
		return ali_mil_say(c, "out of memory");
	char sh[96];
	struct al_shape s = {.rank = rank, .dtype = dtype};
	for (int i = 0; i < rank; i++)
		s.dims[i] = dims[i];
	ali_shape_format(&s, sh, sizeof sh);
	snprintf(c->after, sizeof c->after, "const %s %s (%s)", al_dtype_name(dtype), sh,
		 blob ? "a new blob in weight.bin" : "immediate");
	c->names[c->n_names++] = c->n->name;
	return true;
}

/* ------------------------------------------------------------------ checks */

bool ali_mil_op_ok(struct al_mil_pass *c)
{
	if (!c->src || !c->src->mil_scope || !c->src->msg.p)
		return ali_mil_say(c, "not an ML Program op");
	/* a package, or a program opened from memory with its weight image (the
	 * fuzz harness; al_surgery_weights gives the new image, al_surgery_write
	 * refuses new blobs without a package) */
	if (!c->s->m->is_package && !c->s->m->weights.p)
		return ali_mil_say(c, "an ML Program outside its .mlpackage: new constants need its weight.bin");
	if (c->n->n_outputs != 1 || !c->n->out_types)
		return ali_mil_say(c, "%u outputs (1 expected)", c->n->n_outputs);
	return true;
}

/* Why parameter p of n is not a constant: "'end' comes from gather_0 (computed
 * at run time)". */
bool ali_mil_not_const(struct al_mil_pass *c, const char *p)
{
	al_span b;
	if (ali_mil_param_binding(c->n, p, 0, &b) == 1)
		return ali_mil_say(c, "'%s' is %.*s, computed at run time: the result is dynamic", p,
			   (int)(b.n < 80 ? b.n : 80), (const char *)b.p);
	return ali_mil_say(c, "'%s' is not an immediate constant (a blob or another type)", p);
}

/* A scalar numeric constant parameter into *x (def when absent and def_ok). */
bool ali_mil_const_scalar(struct al_mil_pass *c, const char *p, double *x, bool def_ok, double def)
{
	double v[2];
	long k = ali_mil_param_floats(c->n, p, v, 2);
	if (k == 0 && def_ok) {
		*x = def;
		return true;
	}
	if (k == 0)
		return ali_mil_say(c, "'%s' is missing", p);
	if (k < 0)
		return ali_mil_not_const(c, p);
	if (k != 1)
		return ali_mil_say(c, "'%s' has %ld values (one expected)", p, k);
	*x = v[0];
	return true;
}

int ali_mil_out_dtype(const struct al_mil_pass *c)
{
	return c->n->out_types[0].kind == 0 ? c->n->out_types[0].dtype : AL_DT_UNKNOWN;
}

bool ali_mil_dtype_ok(struct al_mil_pass *c, int dt)
{
	if (dt != AL_DT_FP16 && dt != AL_DT_FP32 && dt != AL_DT_INT32 && dt != AL_DT_BOOL)
		return ali_mil_say(c, "output dtype %s: only fp16, fp32, int32 and bool constants are written",
			   al_dtype_name(dt));
	return true;
}

bool ali_mil_static_shape(const struct al_shape *s)
{
	if (s->rank < 0 || s->rank > AL_SHAPE_MAX_RANK || s->flex)
		return false;
	for (int i = 0; i < s->rank; i++)
		if (s->dims[i] < 0)
			return false;
	return true;
}

/* A constant of `count` values of x (all the same when x_one). */
bool ali_mil_fold_filled(struct al_mil_pass *c, int dt, int rank, const int64_t *dims, double val)
{
	uint64_t count = 1;
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0)
			return ali_mil_say(c, "dim %d is %lld", i, (long long)dims[i]);
		if (dims[i] && count > ALI_MIL_MAX_CONST_ELEMS / (uint64_t)dims[i])
			return ali_mil_say(c, "more than %u values: too large to fold", ALI_MIL_MAX_CONST_ELEMS);
		count *= (uint64_t)dims[i];
	}
	if (!ali_mil_exact_in(dt, val))
		return ali_mil_say(c, "value %g is not exact in %s", val, al_dtype_name(dt));
	double *x = ali_malloc((size_t)count * sizeof *x + 1);
	if (!x)
		return ali_mil_say(c, "out of memory");
	for (uint64_t i = 0; i < count; i++)
		x[i] = val;
	bool ok = ali_mil_fold_to_const(c, dt, rank, dims, x, (size_t)count);
	ali_free(x);
	return ok;
}

/* Inputs map entry {key 1, value 2 Argument{arguments 1 Binding{name 1}}}. */
void ali_mil_put_input(struct al_buf *op, const char *param, const char *name)
{
	struct al_buf b = {0}, a = {0}, e = {0};
	ali_buf_str(&b, AL_PB_Argument_Binding_name, name);
	ali_buf_len(&a, AL_PB_Argument_arguments, b.p, b.n);
	ali_buf_str(&e, PB_MAP_KEY, param);
	ali_buf_len(&e, PB_MAP_VALUE, a.p, a.n);
	ali_buf_len(op, OP_INPUTS, e.p, e.n);
	op->failed |= b.failed || a.failed || e.failed;
	ali_buf_free(&b);
	ali_buf_free(&a);
	ali_buf_free(&e);
}

/* Inputs map entry of a variadic parameter: param -> Argument{arguments 1
 * Binding{name 1} for each of names} (concat's / stack's values). */
void ali_mil_put_inputs(struct al_buf *op, const char *param, const char *const *names, size_t n)
{
	struct al_buf arg = {0}, e = {0};
	for (size_t i = 0; i < n; i++) {
		struct al_buf b = {0};
		ali_buf_str(&b, AL_PB_Argument_Binding_name, names[i]);
		ali_buf_len(&arg, AL_PB_Argument_arguments, b.p, b.n);
		arg.failed |= b.failed;
		ali_buf_free(&b);
	}
	ali_buf_str(&e, PB_MAP_KEY, param);
	ali_buf_len(&e, PB_MAP_VALUE, arg.p, arg.n);
	ali_buf_len(op, OP_INPUTS, e.p, e.n);
	op->failed |= arg.failed || e.failed;
	ali_buf_free(&arg);
	ali_buf_free(&e);
}

/* A new const op (a whole Block.operations field) before c->n. */
bool ali_mil_pre_const(struct al_mil_pass *c, const char *name, int dt, int rank, const int64_t *dims,
		      const double *x, size_t n, bool *blob)
{
	struct al_buf v = {0}, vt = {0}, op = {0};
	if (!ali_mil_put_tensor_value(c, &v, dt, rank, dims, x, n, blob)) {
		ali_buf_free(&v);
		return false;
	}
	ali_surgery_put_vtype(&vt, dt, rank, dims);
	const_op(&op, name, &vt, &v, NULL);
	c->pre.failed |= op.failed;
	ali_buf_len(&c->pre, BLOCK_OPS, op.p, op.n);
	ali_buf_free(&v);
	ali_buf_free(&vt);
	ali_buf_free(&op);
	if (c->n_names < 15)
		c->names[c->n_names++] = name;
	return !c->pre.failed || ali_mil_say(c, "out of memory");
}


/* ------------------------------------------------------------------ fp16 model I/O
 * The edits mil-io-fp16 (passes/mil_io_fp16.c) and nn-io-fp16 (surgery_model.c)
 * share: a description feature's dataType, specificationVersion; an output
 * type retyped (mil-fp32-island too). Model / FeatureDescription fields. */

enum { MODEL_SPEC = AL_PB_Model_specificationVersion, MODEL_DESC = AL_PB_Model_description };
enum { ARRAY_FP16 = 65552 };

/* msg with its varint field `num` set to v (other fields copied). */
static void with_varint(struct al_buf *b, al_span msg, uint32_t num, uint64_t v)
{
	struct pb_iter it;
	struct pb_field f;
	size_t start;
	ali_buf_uint(b, num, v);
	pb_iter_init(&it, msg);
	while ((start = it.pos, pb_next(&it, &f)))
		if (f.num != num)
			ali_buf_put(b, msg.p + start, it.pos - start);
}

/* A NamedValueType with its tensor dtype set to dt. */
bool ali_mil_retyped(al_span nvt, int dt, struct al_buf *out)
{
	al_span vt, tt;
	if (!pb_get_bytes(nvt, AL_PB_NamedValueType_type, &vt) || !pb_get_bytes(vt, AL_PB_ValueType_tensorType, &tt))
		return false;
	struct al_buf t = {0}, v = {0};
	with_varint(&t, tt, AL_PB_TensorType_dataType, (uint64_t)dt);
	struct pb_iter it;
	struct pb_field f;
	size_t start;
	ali_buf_len(&v, AL_PB_ValueType_tensorType, t.p, t.n);
	pb_iter_init(&it, vt);
	while ((start = it.pos, pb_next(&it, &f)))
		if (f.num != AL_PB_ValueType_tensorType)
			ali_buf_put(&v, vt.p + start, it.pos - start);
	pb_iter_init(&it, nvt);
	while ((start = it.pos, pb_next(&it, &f)))
		if (f.num != AL_PB_NamedValueType_type)
			ali_buf_put(out, nvt.p + start, it.pos - start);
	ali_buf_len(out, AL_PB_NamedValueType_type, v.p, v.n);
	out->failed |= t.failed || v.failed;
	ali_buf_free(&t);
	ali_buf_free(&v);
	return true;
}

/* How many inputs of the ops of g (and nested graphs) read value `name`. */
uint32_t ali_mil_readers(const struct al_graph *g, const char *name, int depth)
{
	uint32_t r = 0;
	if (!g || depth > AL_MAX_DEPTH)
		return 1000;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *n = &g->nodes[k];
		for (uint32_t i = 0; i < n->n_inputs; i++)
			r += n->inputs[i] && strcmp(n->inputs[i], name) == 0;
		for (uint32_t j = 0; j < n->n_sub; j++)
			r += ali_mil_readers(n->sub[j], name, depth + 1);
	}
	return r;
}

/* Edit 1 (description feature dataType) of the fp16 I/O passes, as a splice:
 * list DESC_INPUT (1) or DESC_OUTPUT (10). */
enum al_status ali_surgery_desc_fp16(struct al_surgery *s, uint32_t list, const char *name)
{
	al_span desc, fd, ft, arr;
	size_t a, b;
	if (!ali_pb_first(s->root, MODEL_DESC, &desc, NULL, NULL) || !ali_pb_named(desc, list, name, &fd) ||
	    !ali_pb_first(fd, 3, &ft, NULL, NULL) || !ali_pb_first(ft, 5, &arr, NULL, NULL) ||
	    !ali_pb_first(arr, 2, NULL, &a, &b))
		return AL_E_FORMAT;
	struct al_buf f = {0};
	ali_buf_uint(&f, 2, ARRAY_FP16);
	enum al_status st = f.failed ? AL_E_NOMEM : ali_splice_replace(s->sp, arr, arr.p + a, b - a, f.p, f.n);
	ali_buf_free(&f);
	return st;
}

/* specificationVersion raised to 7 (FLOAT16 multi-array I/O: iOS 16 / macOS
 * 13) when it is lower, once per surgery. */
enum al_status ali_surgery_spec_fp16(struct al_surgery *s)
{
	uint64_t spec = 0;
	size_t sa = 0, sb = 0;
	if (s->spec_raised)
		return AL_OK;
	if (!ali_pb_first(s->root, MODEL_SPEC, NULL, &sa, &sb) || !pb_get_varint(s->root, MODEL_SPEC, &spec))
		return AL_E_FORMAT;
	if (spec >= 7)
		return AL_OK;
	struct al_buf d = {0};
	ali_buf_uint(&d, MODEL_SPEC, 7);
	enum al_status st = d.failed ? AL_E_NOMEM : ali_splice_replace(s->sp, s->root, s->root.p + sa, sb - sa, d.p, d.n);
	ali_buf_free(&d);
	s->spec_raised = st == AL_OK;
	return st;
}


/* The blob behind const-bound parameter p: data, dtype and declared dims. */
bool ali_mil_param_blob(struct al_mil_pass *c, const char *p, al_span *data, int *dt, struct al_mil_value *mv)
{
	al_span b, val;
	if (ali_mil_param_binding(c->n, p, 0, &b) != 1)
		return ali_mil_say(c, "'%s' is not a named constant", p);
	char nm[256];
	snprintf(nm, sizeof nm, "%.*s", (int)(b.n < 255 ? b.n : 255), (const char *)b.p);
	const struct al_node *pr = ali_mil_producer(c->n, nm);
	if (!pr || pr->kind != AL_MILK_const || !ali_mil_attr(pr, "val", &val) ||
	    !ali_mil_value_read(val, mv))
		return ali_mil_say(c, "'%s' is not a const op", p);
	if (mv->kind != AL_MV_BLOB || !mv->blob_in_weights)
		return ali_mil_say(c, "'%s' is not stored in weight.bin (an immediate or other value)", p);
	const char *why = ali_mil_blob(c->s->m, mv->blob_offset, data, dt);
	if (why)
		return ali_mil_say(c, "'%s': %s", p, why);
	if (*dt != AL_DT_FP16 && *dt != AL_DT_FP32)
		return ali_mil_say(c, "'%s' is %s (fp16 / fp32 only)", p, al_dtype_name(*dt));
	return true;
}

/* A const op before c->n holding the raw bytes of a new blob. */
bool ali_mil_pre_blob_const(struct al_mil_pass *c, const char *name, int dt, int rank, const int64_t *dims,
			   const uint8_t *bytes, size_t n)
{
	uint64_t off = ali_mil_add_blob(c->s, dt == AL_DT_FP16 ? 1 : 2, bytes, n);
	if (off == UINT64_MAX)
		return ali_mil_say(c, "out of memory");
	struct al_buf v = {0}, vt = {0}, op = {0};
	ali_surgery_put_vtype(&vt, dt, rank, dims);
	ali_buf_len(&v, VALUE_TYPE, vt.p, vt.n);
	ali_mil_put_blob_value(&v, off);
	const_op(&op, name, &vt, &v, NULL);
	c->pre.failed |= op.failed || v.failed;
	ali_buf_len(&c->pre, BLOCK_OPS, op.p, op.n);
	ali_buf_free(&v);
	ali_buf_free(&vt);
	ali_buf_free(&op);
	return !c->pre.failed || ali_mil_say(c, "out of memory");
}

/* An immediate scalar const op before c->n (int32 or bool). */
bool ali_mil_pre_scalar(struct al_mil_pass *c, const char *name, int dt, double x)
{
	bool blob;
	return ali_mil_pre_const(c, name, dt, 0, NULL, &x, 1, &blob);
}

/* A NamedValueType {name 1, type 2} field `field` of op. */
void ali_mil_put_output(struct al_buf *op, const char *name, int dt, int rank, const int64_t *dims)
{
	struct al_buf nv = {0}, vt = {0};
	ali_surgery_put_vtype(&vt, dt, rank, dims);
	ali_buf_str(&nv, AL_PB_NamedValueType_name, name);
	ali_buf_len(&nv, AL_PB_NamedValueType_type, vt.p, vt.n);
	ali_buf_len(op, OP_OUTPUTS, nv.p, nv.n);
	op->failed |= nv.failed || vt.failed;
	ali_buf_free(&nv);
	ali_buf_free(&vt);
}

/* ------------------------------------------------------------------ new ops before c->n */

/* The end of a new op before c->n whose type and inputs are in op: n_out
 * outputs of one type, its name attribute (and node name) the first output,
 * appended to c->pre and listed in names. op is freed. */
bool ali_mil_pre_op_end(struct al_mil_pass *c, struct al_buf *op, const char *const *outs, int n_out,
			int dt, int rank, const int64_t *dims)
{
	struct al_buf v = {0};
	for (int i = 0; i < n_out; i++)
		ali_mil_put_output(op, outs[i], dt, rank, dims);
	ali_mil_put_string_value(&v, outs[0]);
	ali_mil_put_attr(op, "name", v.p, v.n);
	op->failed |= v.failed;
	ali_buf_free(&v);
	c->pre.failed |= op->failed;
	ali_buf_len(&c->pre, BLOCK_OPS, op->p, op->n);
	ali_buf_free(op);
	if (c->n_names >= AL_PASS_MAX_NAMES)
		return ali_mil_say(c, "more new ops than the region lists");
	c->names[c->n_names++] = outs[0];
	return !c->pre.failed || ali_mil_say(c, "out of memory");
}

/* Operation.type of a new op. */
void ali_mil_put_type(struct al_buf *op, const char *type)
{
	ali_buf_str(op, OP_TYPE, type);
}

/* A whole new op (an Operation message) appended to c->pre. */
void ali_mil_pre_put(struct al_mil_pass *c, const struct al_buf *op)
{
	c->pre.failed |= op->failed;
	ali_buf_len(&c->pre, BLOCK_OPS, op->p, op->n);
}

void ali_mil_put_const_op(struct al_buf *op, const char *name, const struct al_buf *vt, const struct al_buf *v)
{
	const_op(op, name, vt, v, NULL);
}

/* An op message's first output (a NamedValueType): its payload, its [start, end). */
bool ali_mil_first_output(al_span op_msg, al_span *nvt, size_t *start, size_t *end)
{
	return ali_pb_first(op_msg, OP_OUTPUTS, nvt, start, end);
}

/* Output nvt with its tensor dtype set to dt, appended to op; false (nothing
 * appended) when it is not a tensor type. */
bool ali_mil_put_output_retyped(struct al_buf *op, al_span nvt, int dt)
{
	struct al_buf o = {0};
	bool ok = ali_mil_retyped(nvt, dt, &o);
	if (ok)
		ali_buf_len(op, OP_OUTPUTS, o.p, o.n);
	op->failed |= o.failed;
	ali_buf_free(&o);
	return ok;
}

/* ------------------------------------------------------------------ ops into a buffer
 * (a whole Block.operations field each), for passes that place their ops
 * themselves (passes/mil_layout.c) */

/* A new op into buffer `to` (a whole Block.operations field): type, (param,
 * value) pairs, one output of dtype/dims, name attribute = the output. */
void ali_mil_emit_op_outs(struct al_buf *to, const char *type, const char *const *in, int n_in,
			 const char *const *out, int n_out, int dt, int rank, const int64_t (*dims)[4])
{
	struct al_buf op = {0}, v = {0};
	ali_mil_put_type(&op, type);
	for (int i = 0; i < n_in; i++)
		ali_mil_put_input(&op, in[2 * i], in[2 * i + 1]);
	for (int i = 0; i < n_out; i++)
		ali_mil_put_output(&op, out[i], dt, rank, dims[i]);
	ali_mil_put_string_value(&v, out[0]);
	ali_mil_put_attr(&op, "name", v.p, v.n);
	op.failed |= v.failed;
	ali_buf_free(&v);
	to->failed |= op.failed;
	ali_buf_len(to, BLOCK_OPS, op.p, op.n);
	ali_buf_free(&op);
}

void ali_mil_emit_op(struct al_buf *to, const char *type, const char *const *in, int n_in, const char *out,
		    int dt, int rank, const int64_t *dims)
{
	int64_t d[1][4] = {{0}};
	if (rank > 0 && dims) /* every op the run writes is of rank 2 to 4 */
		memcpy(d[0], dims, (size_t)(rank < 4 ? rank : 4) * sizeof *dims);
	ali_mil_emit_op_outs(to, type, in, n_in, &out, 1, dt, rank, (const int64_t(*)[4])d);
}

/* A const into `to`: an immediate int32 / bool / fp tensor, or a string scalar. */
const char *ali_mil_emit_const(struct al_mil_pass *c, struct al_buf *to, const char *base, const char *sfx,
			      int dt, int rank, const int64_t *dims, const double *x, size_t n, const char *str)
{
	const char *nm = ali_mil_fresh(c, base, sfx);
	if (!nm) {
		ali_mil_say(c, "no free value name");
		return NULL;
	}
	struct al_buf v = {0}, vt = {0}, op = {0};
	bool blob;
	if (str) {
		ali_mil_put_string_value(&v, str);
		ali_surgery_put_vtype(&vt, AL_DT_STRING, 0, NULL);
	} else if (!ali_mil_put_tensor_value(c, &v, dt, rank, dims, x, n, &blob)) {
		ali_buf_free(&v);
		return NULL;
	} else {
		ali_surgery_put_vtype(&vt, dt, rank, dims);
	}
	ali_mil_put_const_op(&op, nm, &vt, &v);
	to->failed |= op.failed || v.failed || vt.failed;
	ali_buf_len(to, BLOCK_OPS, op.p, op.n);
	ali_buf_free(&v);
	ali_buf_free(&vt);
	ali_buf_free(&op);
	return nm;
}

/* A const into `to` naming a weight.bin blob at `off`, declared dt [N, K, 1, 1]. */
void ali_mil_emit_blob_const(struct al_buf *to, const char *name, int dt, const int64_t *dims, uint64_t off)
{
	struct al_buf val = {0}, vt = {0}, op = {0};
	ali_surgery_put_vtype(&vt, dt, 4, dims);
	ali_buf_len(&val, VALUE_TYPE, vt.p, vt.n);
	ali_mil_put_blob_value(&val, off);
	ali_mil_put_const_op(&op, name, &vt, &val);
	to->failed |= op.failed || val.failed;
	ali_buf_len(to, BLOCK_OPS, op.p, op.n);
	ali_buf_free(&val);
	ali_buf_free(&vt);
	ali_buf_free(&op);
}

/* The whole Block.operations field bytes of the last op in `b` split off:
 * its payload into *last (b keeps the fields before it). */
bool ali_mil_split_last(struct al_buf *b, struct al_buf *last)
{
	struct pb_iter it;
	struct pb_field f;
	size_t start = 0, ls = 0;
	al_span lp = {0};
	bool any = false;
	pb_iter_init(&it, (al_span){b->p, b->n});
	while ((start = it.pos, pb_next(&it, &f))) {
		ls = start;
		lp = f.data;
		any = true;
	}
	if (it.err || !any)
		return false;
	ali_buf_put(last, lp.p, lp.n);
	b->n = ls;
	return !last->failed;
}

/* ------------------------------------------------------------------ palettized weights
 * (surgery_int.h: struct ali_lut_weight) */

bool ali_mil_lut_weight(const struct al_node *n, const char *p, int dt, struct ali_lut_weight *w)
{
	al_span b;
	int64_t sh[3];
	memset(w, 0, sizeof *w);
	if (ali_mil_param_binding(n, p, 0, &b) != 1)
		return false;
	char nm[256];
	snprintf(nm, sizeof nm, "%.*s", (int)(b.n < 255 ? b.n : 255), (const char *)b.p);
	const struct al_node *op = ali_mil_producer(n, nm);
	if (!op || !op->type || op->kind != AL_MILK_constexpr_lut_to_dense || op->n_outputs != 1 ||
	    !op->out_types || op->out_types[0].kind != 0 || op->out_types[0].dtype != dt)
		return false;
	w->op = op;
	if (al_src(op)->n_mil_args == 0) { /* iOS 16 / 17: attributes */
		if (!ali_mil_attr(op, "indices", &w->iv) || !ali_mil_attr(op, "lut", &w->lv) ||
		    !ali_mil_value_read(w->iv, &w->ix) || !ali_mil_value_read(w->lv, &w->lut) ||
		    ali_mil_param_ints(op, "shape", sh, 3) != 2 || w->lut.rank != 1 || w->lut.dtype != dt)
			return false;
		w->N = sh[0], w->K = sh[1];
		return w->N > 0 && w->K > 0;
	}
	al_span iv, lv;
	w->ios18 = true;
	if (al_src(op)->n_mil_args != 2 || ali_mil_param_binding(op, "indices", 0, &iv) != 2 ||
	    ali_mil_param_binding(op, "lut", 0, &lv) != 2 || !ali_mil_value_read(iv, &w->ix) ||
	    !ali_mil_value_read(lv, &w->lut))
		return false;
	if (w->ix.kind != AL_MV_BLOB || w->lut.kind != AL_MV_BLOB || !w->ix.blob_in_weights ||
	    !w->lut.blob_in_weights || w->ix.rank != 2 || w->lut.rank != 4 || w->lut.dtype != dt)
		return false;
	for (int i = 0; i < 4; i++)
		if (w->lut.dims[i] <= 0)
			return false;
	w->N = w->ix.dims[0], w->K = w->ix.dims[1];
	return w->N > 0 && w->K > 0;
}

/* An input bound to a literal Value v (Binding.value = 2). */
void ali_mil_put_input_value(struct al_buf *op, const char *param, const struct al_buf *v)
{
	struct al_buf b = {0}, a = {0}, e = {0};
	ali_buf_len(&b, AL_PB_Argument_Binding_value, v->p, v->n);
	ali_buf_len(&a, AL_PB_Argument_arguments, b.p, b.n);
	ali_buf_str(&e, PB_MAP_KEY, param);
	ali_buf_len(&e, PB_MAP_VALUE, a.p, a.n);
	ali_buf_len(op, OP_INPUTS, e.p, e.n);
	op->failed |= b.failed || a.failed || e.failed || v->failed;
	ali_buf_free(&b);
	ali_buf_free(&a);
	ali_buf_free(&e);
}

/* A literal Value naming weight.bin's blob at off, declared dt of rank / dims. */
void ali_mil_blob_value(struct al_buf *v, int dt, int rank, const int64_t *dims, uint64_t off)
{
	struct al_buf vt = {0};
	ali_surgery_put_vtype(&vt, dt, rank, dims);
	ali_buf_len(v, VALUE_TYPE, vt.p, vt.n);
	v->failed |= vt.failed;
	ali_buf_free(&vt);
	ali_mil_put_blob_value(v, off);
}

/* The palettized weight as a conv reads it, expanding to [N, K, 1, 1] (the
 * same order of values): iOS 18, the same indices and lut blobs declared
 * [N, K, 1, 1] and [G0, G1, 1, 1, 2^bits, V] (the op definition: a lut of the
 * indices' rank + 2, each group count dividing its axis); iOS 16 / 17, the same
 * indices and lut, shape [N, K, 1, 1]. Nothing decoded, no byte copied. */
void ali_mil_emit_lut_weight(struct al_buf *to, const char *name, int dt, const struct ali_lut_weight *w)
{
	struct al_buf op = {0}, iv = {0}, lv = {0}, nv = {0};
	int64_t id[4] = {w->N, w->K, 1, 1};
	ali_mil_put_type(&op, "constexpr_lut_to_dense");
	if (w->ios18) {
		int64_t ld[6] = {w->lut.dims[0], w->lut.dims[1], 1, 1, w->lut.dims[2], w->lut.dims[3]};
		ali_mil_blob_value(&iv, w->ix.dtype, 4, id, w->ix.blob_offset);
		ali_mil_blob_value(&lv, w->lut.dtype, 6, ld, w->lut.blob_offset);
		ali_mil_put_input_value(&op, "indices", &iv);
		ali_mil_put_input_value(&op, "lut", &lv);
	} else { /* shape: uint32 [4], an immediate TensorValue.bytes as coremltools writes it */
		struct al_buf vt = {0}, rep = {0};
		uint8_t raw[16];
		for (int i = 0; i < 4; i++)
			for (int k = 0; k < 4; k++)
				raw[4 * i + k] = (uint8_t)((uint64_t)id[i] >> (8 * k));
		int64_t d4[1] = {4};
		ali_surgery_put_vtype(&vt, AL_DT_UINT32, 1, d4);
		ali_buf_len(&iv, VALUE_TYPE, vt.p, vt.n);
		ali_buf_len(&rep, AL_PB_TensorValue_RepeatedBytes_values, raw, sizeof raw);
		ali_mil_put_immediate(&iv, AL_PB_TensorValue_bytes, &rep);
		iv.failed |= vt.failed;
		ali_buf_free(&vt);
		ali_buf_free(&rep);
		ali_mil_put_attr(&op, "indices", w->iv.p, w->iv.n);
		ali_mil_put_attr(&op, "lut", w->lv.p, w->lv.n);
		ali_mil_put_attr(&op, "shape", iv.p, iv.n);
		op.failed |= iv.failed;
	}
	ali_mil_put_output(&op, name, dt, 4, id);
	ali_mil_put_string_value(&nv, name);
	ali_mil_put_attr(&op, "name", nv.p, nv.n);
	op.failed |= nv.failed;
	to->failed |= op.failed;
	ali_buf_len(to, BLOCK_OPS, op.p, op.n);
	ali_buf_free(&op);
	ali_buf_free(&iv);
	ali_buf_free(&lv);
	ali_buf_free(&nv);
}

/* ------------------------------------------------------------------ the package */

struct compacted {
	const struct al_surgery *s;
	const struct ali_compact *cp;
};

static bool write_compacted(void *ctx, int in_fd, int out_fd)
{
	const struct compacted *k = ctx;
	return ali_compact_write(k->s, k->cp, in_fd, out_fd);
}

/* The package writer (src/format/pkgwrite.c) given the surgery's model and
 * weight.bin: the splice and the appended blobs, or, when rewrites left blobs
 * that nothing refers to, the compacted ones. */
enum al_status ali_surgery_write_package(struct al_surgery *s, const char *path, al_diags *d)
{
	struct ali_compact cp = {0};
	struct ali_pkg_writer w;
	enum al_status st = ali_pkg_prepare(&w, s->m, path, d);
	if (st != AL_OK)
		return st;
	if ((st = ali_compact_plan(s, &cp, d)) != AL_OK)
		return st;
	struct compacted k = {s, &cp};
	w.sp = s->sp;
	w.root_n = s->root.n;
	w.model_whole = cp.on;
	w.model = cp.model;
	w.model_n = cp.model_n;
	w.n_new = s->wcount;
	w.count = new_count(s);
	w.tail = s->wtail.p;
	w.tail_n = s->wtail.n;
	w.weights_whole = cp.on;
	w.write_weights = write_compacted;
	w.ctx = &k;
	w.weights_size = cp.size;
	st = ali_pkg_write(&w);
	ali_compact_free(&cp);
	return st;
}
