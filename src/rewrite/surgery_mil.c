/* SPDX-License-Identifier: MIT */
/* surgery_mil.c: the ML Program passes of `anelint fix`, new constants in
 * weight.bin, and the .mlpackage writer.
 *
 * Passes (rows of AL_PASSES in surgery.c):
 *   range_1d / fill / fill_like whose result is known when the file is read
 *     (constant inputs, a static ref_tensor shape) -> a const op of the same
 *     value, same output name (exact);
 *   cumsum on one of the last two axes of a static shape -> matmul with a
 *     constant 0/1 triangle (reassociate: the same sums, added in another order).
 * A const with 10 or more fp16 / fp32 values goes into weight.bin as a new blob
 * (storage v2, docs in coreml-format-facts section 8) appended after the
 * existing ones at a 64-byte aligned offset; smaller ones are immediate.
 *
 * The package writer builds the new package in a temporary directory next to
 * the destination (every file copied, model.mlmodel spliced, weight.bin with the
 * new blobs appended and its header count raised, or, when the rewrites left
 * blobs unreferenced, only the live ones: compact.c), opens it with anelint's
 * own loader, and only then renames it into place.
 */
#include "surgery_int.h"
#include "kernels.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WEIGHTS_FILE "@model_path/weights/weight.bin"
#define BLOB_ALIGN 64
#define BLOB_META 64
#define BLOB_MIN_ELEMS 10          /* coremltools: a const of >= 10 values goes to weight.bin */
#define MAX_CONST_ELEMS (1u << 24) /* a folded constant larger than this is refused */
#define MAX_TRIANGLE 1024          /* cumsum axis length: an N x N constant, N^2 MACs per row */

/* MIL.proto field numbers (coreml-format-facts section 7). */
enum { OP_TYPE = 1, OP_INPUTS = 2, OP_OUTPUTS = 3, OP_ATTRS = 5, BLOCK_OPS = 3 };
enum { V_TYPE = 2, V_IMMEDIATE = 3, V_BLOB = 5 };

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

/* The message in list field `num` of msg whose field 1 (a name) is `name`. */
bool ali_pb_named(al_span msg, uint32_t num, const char *name, al_span *out)
{
	struct pb_iter it;
	struct pb_field f;
	al_span nm;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f))
		if (f.num == num && f.wire == PB_LEN && pb_get_bytes(f.data, 1, &nm) && ali_span_eq(nm, name)) {
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
static const char *fresh(struct al_mil_pass *c, const char *base, const char *suffix)
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
static uint64_t add_blob(struct al_surgery *s, uint32_t blob_dtype, const void *data, size_t n)
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
	ali_buf_str(&bf, 1, WEIGHTS_FILE);
	ali_buf_uint(&bf, 2, off);
	ali_buf_len(v, V_BLOB, bf.p, bf.n);
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
static void put_vtype(struct al_buf *b, int dtype, int rank, const int64_t *dims)
{
	struct al_buf tt = {0};
	ali_buf_uint(&tt, 1, (uint64_t)dtype);
	ali_buf_uint(&tt, 2, (uint64_t)rank);
	for (int i = 0; i < rank; i++) {
		struct al_buf cd = {0}, dim = {0};
		if (dims[i] >= 0)
			ali_buf_uint(&cd, 1, (uint64_t)dims[i]);
		ali_buf_len(&dim, dims[i] >= 0 ? 1 : 2, cd.p, cd.n);
		ali_buf_len(&tt, 3, dim.p, dim.n);
		tt.failed |= cd.failed || dim.failed;
		ali_buf_free(&cd);
		ali_buf_free(&dim);
	}
	b->failed |= tt.failed;
	ali_buf_len(b, 1, tt.p, tt.n);
	ali_buf_free(&tt);
}

void ali_surgery_put_vtype(struct al_buf *b, int dtype, int rank, const int64_t *dims)
{
	put_vtype(b, dtype, rank, dims);
}

/* attributes entry {key 1, value 2} */
static void put_attr(struct al_buf *op, const char *key, const void *val, size_t n)
{
	struct al_buf e = {0};
	ali_buf_str(&e, 1, key);
	ali_buf_len(&e, 2, val, n);
	op->failed |= e.failed;
	ali_buf_len(op, OP_ATTRS, e.p, e.n);
	ali_buf_free(&e);
}

/* A scalar string Value (an op's "name" attribute). */
static void put_string_value(struct al_buf *v, const char *s)
{
	struct al_buf vt = {0}, rs = {0}, tv = {0}, iv = {0};
	put_vtype(&vt, AL_DT_STRING, 0, NULL);
	ali_buf_str(&rs, 1, s);
	ali_buf_len(&tv, 4, rs.p, rs.n);
	ali_buf_len(&iv, 1, tv.p, tv.n);
	ali_buf_len(v, V_TYPE, vt.p, vt.n);
	ali_buf_len(v, V_IMMEDIATE, iv.p, iv.n);
	v->failed |= vt.failed || rs.failed || tv.failed || iv.failed;
	ali_buf_free(&vt);
	ali_buf_free(&rs);
	ali_buf_free(&tv);
	ali_buf_free(&iv);
}

/* Whether x is exactly a value of dtype (fp16 / fp32 / int32 / bool). */
static bool exact_in(int dtype, double x)
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
	ali_buf_len(&iv, 1, tv.p, tv.n);
	ali_buf_len(v, V_IMMEDIATE, iv.p, iv.n);
	v->failed |= rep->failed || tv.failed || iv.failed;
	ali_buf_free(&tv);
	ali_buf_free(&iv);
}

/* A tensor Value of dtype and shape holding x[0..n): fp16 / fp32 with >= 10
 * values as a new weight.bin blob, else immediate. Values must be exact_in. */
static bool put_tensor_value(struct al_mil_pass *c, struct al_buf *v, int dtype, int rank,
			     const int64_t *dims, const double *x, size_t n, bool *blob)
{
	struct al_buf vt = {0}, rep = {0};
	uint32_t field;
	put_vtype(&vt, dtype, rank, dims);
	ali_buf_len(v, V_TYPE, vt.p, vt.n);
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
			uint64_t off = add_blob(c->s, dtype == AL_DT_FP16 ? 1 : 2, raw, n * w);
			ali_free(raw);
			if (off == UINT64_MAX) {
				v->failed = true;
				return ali_mil_say(c, "out of memory");
			}
			ali_mil_put_blob_value(v, off);
			return !v->failed || ali_mil_say(c, "out of memory");
		}
		/* TensorValue.bytes = 7 {values = 1}; floats = 1 {values = 1 packed} */
		ali_buf_len(&rep, 1, raw, n * w);
		field = dtype == AL_DT_FP16 ? 7 : 1;
		ali_free(raw);
	} else if (dtype == AL_DT_INT32 || dtype == AL_DT_BOOL) {
		uint64_t *u = ali_malloc(n * sizeof *u + 1);
		if (!u) {
			v->failed = true;
			return ali_mil_say(c, "out of memory");
		}
		for (size_t i = 0; i < n; i++)
			u[i] = (uint64_t)(int64_t)x[i]; /* int32 negatives: sign-extended varints */
		ali_buf_packed(&rep, 1, u, n);
		field = dtype == AL_DT_INT32 ? 2 : 3;
		ali_free(u);
	} else {
		return ali_mil_say(c, "a %s constant is not written", al_dtype_name(dtype));
	}
	ali_mil_put_immediate(v, field, &rep);
	ali_buf_free(&rep);
	return !v->failed || ali_mil_say(c, "out of memory");
}

/* The op's own "name" attribute (copied), else one naming `fallback`. */
static void put_name_attr(struct al_mil_pass *c, struct al_buf *op, const char *fallback)
{
	al_span val;
	if (c && ali_mil_attr(c->n, "name", &val)) {
		put_attr(op, "name", val.p, val.n);
		return;
	}
	struct al_buf v = {0};
	put_string_value(&v, fallback);
	op->failed |= v.failed;
	put_attr(op, "name", v.p, v.n);
	ali_buf_free(&v);
}

/* The source op's outputs (all, or output 0 only) and its name attribute
 * copied onto the rewritten op `op`: what every pass that replaces an op in
 * place keeps, so the values read after it keep their names. */
static bool keep_outputs(struct al_mil_pass *c, struct al_buf *op, const char *base, bool first_only)
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
	put_name_attr(c, op, base);
	return true;
}

/* A const op (Operation message) with output `name` holding value v of type vt. */
static void put_const_op(struct al_buf *op, const char *name, const struct al_buf *vt,
			 const struct al_buf *v, struct al_mil_pass *keep_name)
{
	struct al_buf nv = {0};
	ali_buf_str(op, OP_TYPE, "const");
	ali_buf_str(&nv, 1, name);
	ali_buf_len(&nv, 2, vt->p, vt->n);
	ali_buf_len(op, OP_OUTPUTS, nv.p, nv.n);
	op->failed |= nv.failed;
	ali_buf_free(&nv);
	put_name_attr(keep_name, op, name);
	put_attr(op, "val", v->p, v->n);
}

/* Replace op c->n by a const of the given value (its output name kept). */
static bool fold_to_const(struct al_mil_pass *c, int dtype, int rank, const int64_t *dims, const double *x,
			  size_t n)
{
	struct al_buf v = {0}, vt = {0};
	bool blob = false;
	if (!put_tensor_value(c, &v, dtype, rank, dims, x, n, &blob)) {
		ali_buf_free(&v);
		return false;
	}
	put_vtype(&vt, dtype, rank, dims);
	put_const_op(&c->layer, c->n->outputs[0], &vt, &v, c);
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

static bool mil_op(struct al_mil_pass *c)
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
static bool not_const(struct al_mil_pass *c, const char *p)
{
	al_span b;
	if (ali_mil_param_binding(c->n, p, 0, &b) == 1)
		return ali_mil_say(c, "'%s' is %.*s, computed at run time: the result is dynamic", p,
			   (int)(b.n < 80 ? b.n : 80), (const char *)b.p);
	return ali_mil_say(c, "'%s' is not an immediate constant (a blob or another type)", p);
}

/* A scalar numeric constant parameter into *x (def when absent and def_ok). */
static bool const_scalar(struct al_mil_pass *c, const char *p, double *x, bool def_ok, double def)
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
		return not_const(c, p);
	if (k != 1)
		return ali_mil_say(c, "'%s' has %ld values (one expected)", p, k);
	*x = v[0];
	return true;
}

static int out_dtype(const struct al_mil_pass *c)
{
	return c->n->out_types[0].kind == 0 ? c->n->out_types[0].dtype : AL_DT_UNKNOWN;
}

static bool dtype_ok(struct al_mil_pass *c, int dt)
{
	if (dt != AL_DT_FP16 && dt != AL_DT_FP32 && dt != AL_DT_INT32 && dt != AL_DT_BOOL)
		return ali_mil_say(c, "output dtype %s: only fp16, fp32, int32 and bool constants are written",
			   al_dtype_name(dt));
	return true;
}

static bool static_shape(const struct al_shape *s)
{
	if (s->rank < 0 || s->rank > AL_SHAPE_MAX_RANK || s->flex)
		return false;
	for (int i = 0; i < s->rank; i++)
		if (s->dims[i] < 0)
			return false;
	return true;
}

/* A constant of `count` values of x (all the same when x_one). */
static bool fold_filled(struct al_mil_pass *c, int dt, int rank, const int64_t *dims, double val)
{
	uint64_t count = 1;
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0)
			return ali_mil_say(c, "dim %d is %lld", i, (long long)dims[i]);
		if (dims[i] && count > MAX_CONST_ELEMS / (uint64_t)dims[i])
			return ali_mil_say(c, "more than %u values: too large to fold", MAX_CONST_ELEMS);
		count *= (uint64_t)dims[i];
	}
	if (!exact_in(dt, val))
		return ali_mil_say(c, "value %g is not exact in %s", val, al_dtype_name(dt));
	double *x = ali_malloc((size_t)count * sizeof *x + 1);
	if (!x)
		return ali_mil_say(c, "out of memory");
	for (uint64_t i = 0; i < count; i++)
		x[i] = val;
	bool ok = fold_to_const(c, dt, rank, dims, x, (size_t)count);
	ali_free(x);
	return ok;
}

/* ------------------------------------------------------------------ passes */

bool ali_pass_mil_range(struct al_mil_pass *c)
{
	if (!mil_op(c))
		return false;
	double v[3];
	static const char *const nm[3] = {"start", "end", "step"};
	for (int i = 0; i < 3; i++)
		if (!const_scalar(c, nm[i], &v[i], false, 0))
			return false;
	if (v[2] == 0 || !isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]))
		return ali_mil_say(c, "range_1d(%g, %g, %g) is not a finite range", v[0], v[1], v[2]);
	int dt = out_dtype(c);
	if (!dtype_ok(c, dt) || dt == AL_DT_BOOL)
		return dt == AL_DT_BOOL ? ali_mil_say(c, "a bool range") : false;
	double cnt = ceil((v[1] - v[0]) / v[2]);
	if (cnt < 0)
		cnt = 0;
	if (cnt > MAX_CONST_ELEMS)
		return ali_mil_say(c, "%g values: too large to fold", cnt);
	int64_t n = (int64_t)cnt;
	double *x = ali_malloc((size_t)n * sizeof *x + 1);
	if (!x)
		return ali_mil_say(c, "out of memory");
	for (int64_t i = 0; i < n; i++) {
		/* the MIL definition start + i * step, which must be exact in the
		 * output dtype (so that no implementation can round it otherwise);
		 * integers up to 2^24, where the fp32 interpreter holds them exactly */
		x[i] = v[0] + (double)i * v[2];
		if (!exact_in(dt, x[i]) || (dt == AL_DT_INT32 && fabs(x[i]) > 16777216.0)) {
			double bad = x[i];
			ali_free(x);
			return ali_mil_say(c, "value %lld (%.9g) is not exact in %s", (long long)i, bad,
				   al_dtype_name(dt));
		}
	}
	bool ok = fold_to_const(c, dt, 1, &n, x, (size_t)n);
	ali_free(x);
	return ok;
}

bool ali_pass_mil_fill(struct al_mil_pass *c)
{
	if (!mil_op(c))
		return false;
	int64_t dims[AL_SHAPE_MAX_RANK + 1];
	long r = ali_mil_param_ints(c->n, "shape", dims, AL_SHAPE_MAX_RANK + 1);
	if (r < 0)
		return not_const(c, "shape");
	if (r == 0 && !ali_mil_param_present(c->n, "shape"))
		return ali_mil_say(c, "'shape' is missing");
	if (r > AL_SHAPE_MAX_RANK)
		return ali_mil_say(c, "a result of rank %ld", r);
	double val;
	if (!const_scalar(c, "value", &val, true, 0.0))
		return false;
	int dt = out_dtype(c);
	if (!dtype_ok(c, dt))
		return false;
	return fold_filled(c, dt, (int)r, dims, val);
}

bool ali_pass_mil_fill_like(struct al_mil_pass *c)
{
	if (!mil_op(c))
		return false;
	struct al_shape s;
	if (!ali_mil_param_shape(c->n, "ref_tensor", &s))
		return ali_mil_say(c, "the shape of 'ref_tensor' is not known");
	if (!static_shape(&s)) {
		char sh[96];
		ali_shape_format(&s, sh, sizeof sh);
		return ali_mil_say(c, "'ref_tensor' has shape %s, not static: the result is dynamic", sh);
	}
	double val;
	if (!const_scalar(c, "value", &val, true, 0.0))
		return false;
	int dt = out_dtype(c);
	if (!dtype_ok(c, dt))
		return false;
	return fold_filled(c, dt, s.rank, s.dims, val);
}

/* Inputs map entry {key 1, value 2 Argument{arguments 1 Binding{name 1}}}. */
static void put_input(struct al_buf *op, const char *param, const char *name)
{
	struct al_buf b = {0}, a = {0}, e = {0};
	ali_buf_str(&b, 1, name);
	ali_buf_len(&a, 1, b.p, b.n);
	ali_buf_str(&e, 1, param);
	ali_buf_len(&e, 2, a.p, a.n);
	ali_buf_len(op, OP_INPUTS, e.p, e.n);
	op->failed |= b.failed || a.failed || e.failed;
	ali_buf_free(&b);
	ali_buf_free(&a);
	ali_buf_free(&e);
}

/* Inputs map entry of a variadic parameter: param -> Argument{arguments 1
 * Binding{name 1} for each of names} (concat's / stack's values). */
static void put_inputs(struct al_buf *op, const char *param, const char *const *names, size_t n)
{
	struct al_buf arg = {0}, e = {0};
	for (size_t i = 0; i < n; i++) {
		struct al_buf b = {0};
		ali_buf_str(&b, 1, names[i]);
		ali_buf_len(&arg, 1, b.p, b.n);
		arg.failed |= b.failed;
		ali_buf_free(&b);
	}
	ali_buf_str(&e, 1, param);
	ali_buf_len(&e, 2, arg.p, arg.n);
	ali_buf_len(op, OP_INPUTS, e.p, e.n);
	op->failed |= arg.failed || e.failed;
	ali_buf_free(&arg);
	ali_buf_free(&e);
}

/* A new const op (a whole Block.operations field) before c->n. */
static bool pre_const(struct al_mil_pass *c, const char *name, int dt, int rank, const int64_t *dims,
		      const double *x, size_t n, bool *blob)
{
	struct al_buf v = {0}, vt = {0}, op = {0};
	if (!put_tensor_value(c, &v, dt, rank, dims, x, n, blob)) {
		ali_buf_free(&v);
		return false;
	}
	put_vtype(&vt, dt, rank, dims);
	put_const_op(&op, name, &vt, &v, NULL);
	c->pre.failed |= op.failed;
	ali_buf_len(&c->pre, BLOCK_OPS, op.p, op.n);
	ali_buf_free(&v);
	ali_buf_free(&vt);
	ali_buf_free(&op);
	if (c->n_names < 15)
		c->names[c->n_names++] = name;
	return !c->pre.failed || ali_mil_say(c, "out of memory");
}

bool ali_pass_mil_cumsum(struct al_mil_pass *c)
{
	if (!mil_op(c))
		return false;
	al_span xb;
	if (ali_mil_param_binding(c->n, "x", 0, &xb) != 1)
		return ali_mil_say(c, "'x' is not a named value");
	struct al_shape s;
	char sh[96];
	if (!ali_mil_param_shape(c->n, "x", &s) || !static_shape(&s)) {
		if (!ali_mil_param_shape(c->n, "x", &s))
			s.rank = -1;
		ali_shape_format(&s, sh, sizeof sh);
		return ali_mil_say(c, "'x' has shape %s, not static", sh);
	}
	ali_shape_format(&s, sh, sizeof sh);
	int dt = s.dtype ? s.dtype : out_dtype(c);
	if (dt != AL_DT_FP16 && dt != AL_DT_FP32)
		return ali_mil_say(c, "'x' is %s: the matmul form is for fp16 / fp32", al_dtype_name(dt));
	if (s.rank < 1)
		return ali_mil_say(c, "'x' is a scalar");
	double ax, ex, rev;
	if (!const_scalar(c, "axis", &ax, true, 0) || !const_scalar(c, "exclusive", &ex, true, 0) ||
	    !const_scalar(c, "reverse", &rev, true, 0))
		return false;
	if (ax != floor(ax) || ax < -s.rank || ax >= s.rank)
		return ali_mil_say(c, "axis %g out of range for rank %d", ax, s.rank);
	int a = (int)ax < 0 ? (int)ax + s.rank : (int)ax;
	if (a != s.rank - 1 && a != s.rank - 2)
		return ali_mil_say(c, "axis %d of %s is not one of the last two (a matmul sums over those only)",
			   a, sh);
	int64_t N = s.dims[a];
	if (N < 1 || N > MAX_TRIANGLE)
		return ali_mil_say(c, "axis %d has length %lld; the triangle is built for 1..%d", a,
			   (long long)N, MAX_TRIANGLE);
	bool last = a == s.rank - 1;
	if (c->s->opts && c->s->opts->allow < AL_EQ_REASSOCIATE) { /* reported, nothing built */
		snprintf(c->after, sizeof c->after, "matmul by a %lldx%lld 0/1 triangle", (long long)N,
			 (long long)N);
		return true;
	}
	/* last: y = x @ T, T[j][i] = 1 when x[j] goes into y[i]; else y = T' @ x with
	 * T'[i][j] the same condition. */
	double *t = ali_malloc((size_t)(N * N) * sizeof *t);
	if (!t)
		return ali_mil_say(c, "out of memory");
	for (int64_t r = 0; r < N; r++)
		for (int64_t q = 0; q < N; q++) {
			int64_t j = last ? r : q, i = last ? q : r; /* j contributes to i */
			bool in = rev ? (ex ? j > i : j >= i) : (ex ? j < i : j <= i);
			t[r * N + q] = in ? 1.0 : 0.0;
		}
	const char *base = c->n->outputs[0];
	const char *tri = fresh(c, base, "triangle"), *tx = fresh(c, base, "transpose_x"),
		   *ty = fresh(c, base, "transpose_y");
	if (!tri || !tx || !ty) {
		ali_free(t);
		return ali_mil_say(c, "no free value name");
	}
	int64_t td[2] = {N, N};
	double zero = 0;
	bool blob = false, b2;
	bool ok = pre_const(c, tri, dt, 2, td, t, (size_t)(N * N), &blob) &&
		  pre_const(c, tx, AL_DT_BOOL, 0, NULL, &zero, 1, &b2) &&
		  pre_const(c, ty, AL_DT_BOOL, 0, NULL, &zero, 1, &b2);
	ali_free(t);
	if (!ok)
		return false;
	char *xname = ali_arena_strndup(&c->s->arena, xb.p, xb.n);
	if (!xname)
		return ali_mil_say(c, "out of memory");
	/* the matmul: type, inputs, the cumsum's outputs and name attribute */
	ali_buf_str(&c->layer, OP_TYPE, "matmul");
	put_input(&c->layer, "x", last ? xname : tri);
	put_input(&c->layer, "y", last ? tri : xname);
	put_input(&c->layer, "transpose_x", tx);
	put_input(&c->layer, "transpose_y", ty);
	if (!keep_outputs(c, &c->layer, base, false))
		return false;
	if (c->layer.failed)
		return ali_mil_say(c, "out of memory");
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "matmul(%s) with T a %lldx%lld 0/1 triangle%s%s (%s)",
		 last ? "x, T" : "T, x", (long long)N, (long long)N,
		 ex ? ", exclusive" : "", rev ? ", reverse" : "",
		 blob ? "a new blob in weight.bin" : "immediate");
	return true;
}

/* ------------------------------------------------------------------ shared with passes/
 * What the passes in src/rewrite/passes/ build their ops with (surgery_int.h). */

static void put_output(struct al_buf *op, const char *name, int dt, int rank, const int64_t *dims);
static bool pre_scalar(struct al_mil_pass *c, const char *name, int dt, double x);
static bool param_blob(struct al_mil_pass *c, const char *p, al_span *data, int *dt, struct al_mil_value *mv);

/* The end of a new op before c->n whose type and inputs are in op: n_out
 * outputs of one type, its name attribute (and node name) the first output,
 * appended to c->pre and listed in names. op is freed. */
static bool pre_op_end(struct al_mil_pass *c, struct al_buf *op, const char *const *outs, int n_out,
		       int dt, int rank, const int64_t *dims)
{
	struct al_buf v = {0};
	for (int i = 0; i < n_out; i++)
		put_output(op, outs[i], dt, rank, dims);
	put_string_value(&v, outs[0]);
	put_attr(op, "name", v.p, v.n);
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

bool ali_mil_pre_op_end(struct al_mil_pass *c, struct al_buf *op, const char *const *outs, int n_out, int dt,
			int rank, const int64_t *dims)
{
	return pre_op_end(c, op, outs, n_out, dt, rank, dims);
}

bool ali_mil_pre_const(struct al_mil_pass *c, const char *name, int dt, int rank, const int64_t *dims,
		       const double *x, size_t n, bool *blob)
{
	return pre_const(c, name, dt, rank, dims, x, n, blob);
}

bool ali_mil_pre_scalar(struct al_mil_pass *c, const char *name, int dt, double x)
{
	return pre_scalar(c, name, dt, x);
}

void ali_mil_put_inputs(struct al_buf *op, const char *param, const char *const *names, size_t n)
{
	put_inputs(op, param, names, n);
}

void ali_mil_put_output(struct al_buf *op, const char *name, int dt, int rank, const int64_t *dims)
{
	put_output(op, name, dt, rank, dims);
}

bool ali_mil_keep_outputs(struct al_mil_pass *c, struct al_buf *op, const char *base, bool first_only)
{
	return keep_outputs(c, op, base, first_only);
}

int ali_mil_out_dtype(const struct al_mil_pass *c)
{
	return out_dtype(c);
}

bool ali_mil_static_shape(const struct al_shape *s)
{
	return static_shape(s);
}

bool ali_mil_const_scalar(struct al_mil_pass *c, const char *p, double *x, bool def_ok, double def)
{
	return const_scalar(c, p, x, def_ok, def);
}

bool ali_mil_param_blob(struct al_mil_pass *c, const char *p, al_span *data, int *dt, struct al_mil_value *mv)
{
	return param_blob(c, p, data, dt, mv);
}

/* ------------------------------------------------------------------ fp32 model I/O -> fp16
 * cast(fp32 input -> fp16) and cast(fp16 -> fp32 output) at the model boundary
 * run on the CPU (ANE030). With fp16 I/O (spec >= 7, iOS 16) they become
 * identity ops: the model's inputs / outputs are rounded to fp16 by the caller
 * instead (approximate). */

enum { MODEL_SPEC = 1, MODEL_DESC = 2, MODEL_PROGRAM = 502, DESC_INPUT = 1, DESC_OUTPUT = 10 };
enum { ARRAY_FP32 = 65568, ARRAY_FP16 = 65552 };

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
static bool retyped(al_span nvt, int dt, struct al_buf *out)
{
	al_span vt, tt;
	if (!pb_get_bytes(nvt, 2, &vt) || !pb_get_bytes(vt, 1, &tt))
		return false;
	struct al_buf t = {0}, v = {0};
	with_varint(&t, tt, 1, (uint64_t)dt);
	struct pb_iter it;
	struct pb_field f;
	size_t start;
	ali_buf_len(&v, 1, t.p, t.n);
	pb_iter_init(&it, vt);
	while ((start = it.pos, pb_next(&it, &f)))
		if (f.num != 1)
			ali_buf_put(&v, vt.p + start, it.pos - start);
	pb_iter_init(&it, nvt);
	while ((start = it.pos, pb_next(&it, &f)))
		if (f.num != 2)
			ali_buf_put(out, nvt.p + start, it.pos - start);
	ali_buf_len(out, 2, v.p, v.n);
	out->failed |= t.failed || v.failed;
	ali_buf_free(&t);
	ali_buf_free(&v);
	return true;
}

/* How many inputs of the ops of g (and nested graphs) read value `name`. */
static uint32_t readers_of(const struct al_graph *g, const char *name, int depth)
{
	uint32_t r = 0;
	if (!g || depth > AL_MAX_DEPTH)
		return 1000;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *n = &g->nodes[k];
		for (uint32_t i = 0; i < n->n_inputs; i++)
			r += n->inputs[i] && strcmp(n->inputs[i], name) == 0;
		for (uint32_t j = 0; j < n->n_sub; j++)
			r += readers_of(n->sub[j], name, depth + 1);
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

bool ali_pass_mil_io_fp16(struct al_mil_pass *c)
{
	if (!mil_op(c))
		return false;
	const struct al_node *n = c->n;
	const struct al_submodel *sub = c->src->sub;
	/* casts that are no model I/O cast are no candidates: an empty reason
	 * keeps them out of the report */
	if (sub != c->s->m->subs[0] || sub->world != AL_WORLD_MIL || n->owner->depth != 0)
		return c->why[0] = '\0', false;
	al_span xb;
	if (ali_mil_param_binding(n, "x", 0, &xb) != 1)
		return c->why[0] = '\0', false;
	char *x = ali_arena_strndup(&c->s->arena, xb.p, xb.n);
	const struct al_ttype *in = ali_mil_param_type(n, "x"), *out = &n->out_types[0];
	if (!x || !in)
		return ali_mil_say(c, "the type of 'x' is not known");
	const char *y = n->outputs[0];
	const struct al_feature *fi = NULL, *fo = NULL;
	bool fin_read_once = false;
	for (uint32_t i = 0; i < sub->n_inputs; i++)
		if (strcmp(sub->inputs[i].name, x) == 0)
			fi = &sub->inputs[i];
	for (uint32_t i = 0; i < sub->n_outputs; i++)
		if (strcmp(sub->outputs[i].name, y) == 0)
			fo = &sub->outputs[i];
	bool is_in = fi && in->dtype == AL_DT_FP32 && out->dtype == AL_DT_FP16;
	bool is_out = fo && in->dtype == AL_DT_FP16 && out->dtype == AL_DT_FP32;
	if (!is_in && !is_out)
		return c->why[0] = '\0', false;
	const struct al_feature *ft = is_in ? fi : fo;
	if (sub->n_functions != 1 || sub->n_fdescs > 1) /* also one kept by --function */
		return ali_mil_say(c, "a program with %u functions", sub->n_fdescs > 1 ? sub->n_fdescs : sub->n_functions);
	if (ft->kind != AL_FEAT_MULTIARRAY || ft->dtype != AL_DT_FP32)
		return ali_mil_say(c, "model %s '%s' is not an fp32 multi-array", is_in ? "input" : "output",
			    ft->name);
	for (uint32_t i = 0; is_in && i < sub->n_outputs; i++)
		if (strcmp(sub->outputs[i].name, x) == 0)
			return ali_mil_say(c, "input '%s' is also a model output", x);
	/* --shape / --enumerate edit the same description and function input: the
	 * two edits would overlap in the file (the next round takes the cast) */
	for (size_t i = 0; is_in && c->s->opts && i < c->s->opts->n_shapes; i++)
		if (c->s->opts->shapes[i].input && strcmp(c->s->opts->shapes[i].input, x) == 0)
			return ali_mil_say(c, "input '%s' gets its --shape / --enumerate in this round: the next round "
					   "makes it fp16", x);
	fin_read_once = readers_of(sub->graphs[0], is_in ? x : y, 0) == (is_in ? 1 : 0);
	if (!fin_read_once)
		return ali_mil_say(c, "%s '%s' is also read by other ops", is_in ? "input" : "output",
			   is_in ? x : y);
	/* the new op: identity(x) -> y, y typed fp16 */
	al_span nvt;
	if (!ali_pb_first(c->src->msg, OP_OUTPUTS, &nvt, NULL, NULL))
		return ali_mil_say(c, "the op has no output type");
	ali_buf_str(&c->layer, OP_TYPE, "identity");
	put_input(&c->layer, "x", x);
	struct al_buf o = {0};
	if (!retyped(nvt, AL_DT_FP16, &o)) {
		ali_buf_free(&o);
		return ali_mil_say(c, "the output type is not a tensor type");
	}
	ali_buf_len(&c->layer, OP_OUTPUTS, o.p, o.n);
	c->layer.failed |= o.failed;
	ali_buf_free(&o);
	put_name_attr(c, &c->layer, y);
	if (c->layer.failed)
		return ali_mil_say(c, "out of memory");
	/* the other edits: the feature's dataType, the function input's type, spec >= 7 */
	uint64_t spec = 0;
	al_span prog, fe, fn, fin = {0}, vt, tt;
	size_t a = 0, b = 0;
	if (!pb_get_varint(c->s->root, MODEL_SPEC, &spec))
		return ali_mil_say(c, "no specificationVersion");
	if (is_in && !(ali_pb_first(c->s->root, MODEL_PROGRAM, &prog, NULL, NULL) &&
		       ali_pb_first(prog, 2, &fe, NULL, NULL) && ali_pb_first(fe, 2, &fn, NULL, NULL) &&
		       ali_pb_named(fn, 1, x, &fin) && pb_get_bytes(fin, 2, &vt) &&
		       pb_get_bytes(vt, 1, &tt) && ali_pb_first(tt, 1, NULL, &a, &b)))
		return ali_mil_say(c, "the function input '%s' has no tensor type", x);
	if (c->s->opts && c->s->opts->allow < AL_EQ_APPROXIMATE) { /* reported, nothing built */
		snprintf(c->after, sizeof c->after, "identity, with fp16 model %s '%s'",
			 is_in ? "input" : "output", ft->name);
		return true;
	}
	enum al_status st = ali_surgery_desc_fp16(c->s, is_in ? DESC_INPUT : DESC_OUTPUT, ft->name);
	if (st == AL_OK && is_in) {
		struct al_buf d = {0};
		ali_buf_uint(&d, 1, AL_DT_FP16);
		st = d.failed ? AL_E_NOMEM : ali_splice_replace(c->s->sp, tt, tt.p + a, b - a, d.p, d.n);
		ali_buf_free(&d);
	}
	if (st == AL_OK)
		st = ali_surgery_spec_fp16(c->s);
	if (st != AL_OK)
		return ali_mil_say(c, "the model description could not be rewritten (%s)", al_status_str(st));
	c->names[c->n_names++] = n->name;
	snprintf(c->after, sizeof c->after, "identity, with fp16 model %s '%s'%s",
		 is_in ? "input" : "output", ft->name,
		 spec < 7 ? " (specificationVersion 7: iOS 16 / macOS 13)" : "");
	return true;
}

/* ------------------------------------------------------------------ fp32 islands -> fp16
 * cast(fp16 -> fp32), then fp32 ops, then cast(fp32 -> fp16): the fp32 ops run
 * off the ANE (ANE029) and the casts cost two switches. Run in fp16 instead,
 * the casts become identities and the ops' outputs are typed fp16
 * (approximate: the ops then round to fp16). Only islands whose ops are
 * elementwise ones from ISLAND_OPS reading nothing but island values (an fp32
 * constant would need its values converted), all in the top-level block, none
 * a block output, each ending in casts back to fp16. */

static const char *const ISLAND_OPS[] = {
	"relu", "sigmoid", "tanh", "abs", "square", "exp", "sqrt", "rsqrt", "sin", "cos", "erf",
	"softplus", "add", "sub", "mul", "maximum", "minimum", "real_div",
};
#define MAX_ISLAND 64

static bool island_op(const struct al_node *n)
{
	for (size_t i = 0; i < sizeof ISLAND_OPS / sizeof ISLAND_OPS[0]; i++)
		if (n->type && strcmp(n->type, ISLAND_OPS[i]) == 0)
			return true;
	return false;
}

/* The cast `n` from `from` to `to` (dtypes), its x bound to a name: that name. */
static const char *cast_of(struct al_mil_pass *c, const struct al_node *n, int from, int to)
{
	al_span xb;
	const struct al_ttype *in;
	if (!n->type || strcmp(n->type, "cast") != 0 || n->n_outputs != 1 || !n->out_types ||
	    n->out_types[0].dtype != to || !(in = ali_mil_param_type(n, "x")) || in->dtype != from ||
	    ali_mil_param_binding(n, "x", 0, &xb) != 1)
		return NULL;
	return ali_arena_strndup(&c->s->arena, xb.p, xb.n);
}

static bool in_set(const char *const *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], name) == 0)
			return true;
	return false;
}

/* An identity op replacing cast `n` (x -> its output), output typed fp16. */
static bool identity_of(struct al_mil_pass *c, const struct al_node *n, const char *x,
			struct al_buf *op)
{
	al_span nvt, val;
	if (!ali_pb_first(al_src(n)->msg, OP_OUTPUTS, &nvt, NULL, NULL))
		return ali_mil_say(c, "'%s' has no output type", n->outputs[0]);
	ali_buf_str(op, OP_TYPE, "identity");
	put_input(op, "x", x);
	struct al_buf o = {0};
	bool ok = retyped(nvt, AL_DT_FP16, &o);
	if (ok)
		ali_buf_len(op, OP_OUTPUTS, o.p, o.n);
	op->failed |= o.failed;
	ali_buf_free(&o);
	if (!ok)
		return ali_mil_say(c, "the output type of '%s' is not a tensor type", n->outputs[0]);
	if (ali_mil_attr(n, "name", &val))
		put_attr(op, "name", val.p, val.n);
	return !op->failed || ali_mil_say(c, "out of memory");
}

bool ali_pass_mil_island(struct al_mil_pass *c)
{
	const struct al_node *n = c->n;
	if (!n->owner || !cast_of(c, n, AL_DT_FP16, AL_DT_FP32))
		return c->why[0] = '\0', false; /* not the start of an island: not a candidate */
	if (!mil_op(c))
		return false;
	const struct al_graph *g = n->owner;
	const struct al_submodel *sub = c->src->sub;
	if (g->depth != 0)
		return ali_mil_say(c, "inside a nested block");
	for (uint32_t o = 0; o < sub->n_outputs; o++)
		if (strcmp(sub->outputs[o].name, n->outputs[0]) == 0)
			return c->why[0] = '\0', false; /* a model output cast: mil-io-fp16's */
	/* grow the island from the cast's output, in op order (a block is topological) */
	const char *vals[MAX_ISLAND];
	const struct al_node *ops[MAX_ISLAND], *exits[MAX_ISLAND];
	size_t nv = 0, no = 0, ne = 0;
	vals[nv++] = n->outputs[0];
	uint32_t start = (uint32_t)(n - g->nodes);
	for (uint32_t k = start + 1; k < g->n_nodes; k++) {
		const struct al_node *r = &g->nodes[k];
		bool reads = false;
		for (uint32_t i = 0; i < r->n_inputs && !reads; i++)
			reads = r->inputs[i] && in_set(vals, nv, r->inputs[i]);
		if (!reads)
			continue;
		const char *x = cast_of(c, r, AL_DT_FP32, AL_DT_FP16);
		if (x && in_set(vals, nv, x)) {
			if (ne == MAX_ISLAND)
				return ali_mil_say(c, "more than %d casts back to fp16", MAX_ISLAND);
			exits[ne++] = r;
			continue;
		}
		if (!island_op(r) || r->n_outputs != 1 || !r->out_types || r->out_types[0].dtype != AL_DT_FP32)
			return ali_mil_say(c, "'%s' (%s) reads the fp32 value of the island", r->name ? r->name : "?",
				   r->type ? r->type : "?");
		for (uint32_t i = 0; i < r->n_inputs; i++)
			if (r->inputs[i] && !in_set(vals, nv, r->inputs[i]))
				return ali_mil_say(c, "'%s' (%s) also reads '%s', which is not fp16 before the island",
					   r->name ? r->name : "?", r->type, r->inputs[i]);
		if (nv == MAX_ISLAND || no == MAX_ISLAND)
			return ali_mil_say(c, "an island of more than %d ops", MAX_ISLAND);
		ops[no++] = r;
		vals[nv++] = r->outputs[0];
	}
	if (!ne)
		return ali_mil_say(c, "the fp32 values never go back to fp16");
	for (size_t i = 0; i < nv; i++) {
		for (uint32_t o = 0; o < sub->n_outputs; o++)
			if (strcmp(sub->outputs[o].name, vals[i]) == 0)
				return ali_mil_say(c, "'%s' is a model output", vals[i]);
		uint32_t top = 0;
		for (uint32_t k = 0; k < g->n_nodes; k++)
			for (uint32_t j = 0; j < g->nodes[k].n_inputs; j++)
				top += g->nodes[k].inputs[j] && strcmp(g->nodes[k].inputs[j], vals[i]) == 0;
		if (readers_of(g, vals[i], 0) != top)
			return ali_mil_say(c, "'%s' is read inside a nested block", vals[i]);
	}
	if (c->s->opts && c->s->opts->allow < AL_EQ_APPROXIMATE) { /* reported, nothing built */
		snprintf(c->after, sizeof c->after, "identity; %zu op%s and %zu cast%s back run in fp16", no,
			 no == 1 ? "" : "s", ne, ne == 1 ? "" : "s");
		return true;
	}
	/* the cast up becomes this op's new payload; the rest are splices, made
	 * only once every new payload is built (a pass that says no leaves none) */
	const char *x = cast_of(c, n, AL_DT_FP16, AL_DT_FP32);
	if (!identity_of(c, n, x, &c->layer))
		return false;
	struct al_buf bufs[2 * MAX_ISLAND];
	al_span at[2 * MAX_ISLAND], in_msg[2 * MAX_ISLAND];
	size_t nb = 0;
	bool ok = true;
	memset(bufs, 0, sizeof bufs);
	for (size_t i = 0; i < no && ok; i++) {
		al_span msg = al_src(ops[i])->msg, nvt;
		size_t a, b;
		struct al_buf t = {0};
		ok = ali_pb_first(msg, OP_OUTPUTS, &nvt, &a, &b) && retyped(nvt, AL_DT_FP16, &t);
		if (ok) {
			ali_buf_len(&bufs[nb], OP_OUTPUTS, t.p, t.n);
			in_msg[nb] = msg;
			at[nb++] = (al_span){msg.p + a, b - a};
		} else {
			ali_mil_say(c, "the output type of '%s' is not a tensor type", ops[i]->outputs[0]);
		}
		ali_buf_free(&t);
	}
	for (size_t i = 0; i < ne && ok; i++) {
		const char *ex = cast_of(c, exits[i], AL_DT_FP32, AL_DT_FP16);
		ok = ex && identity_of(c, exits[i], ex, &bufs[nb]);
		in_msg[nb] = al_src(exits[i])->msg;
		at[nb] = in_msg[nb];
		nb++;
	}
	enum al_status st = AL_OK;
	for (size_t i = 0; i < nb && ok; i++)
		ok = !bufs[i].failed || ali_mil_say(c, "out of memory");
	for (size_t i = 0; i < nb && ok && st == AL_OK; i++)
		st = ali_splice_replace(c->s->sp, in_msg[i], at[i].p, at[i].n, bufs[i].p, bufs[i].n);
	for (size_t i = 0; i < nb; i++)
		ali_buf_free(&bufs[i]);
	if (!ok)
		return false;
	if (st != AL_OK)
		return ali_mil_say(c, "the island could not be rewritten (%s)", al_status_str(st));
	c->names[c->n_names++] = n->name;
	for (size_t i = 0; i < no && c->n_names < 16; i++)
		c->names[c->n_names++] = ops[i]->name;
	snprintf(c->after, sizeof c->after, "identity; %zu op%s and %zu cast%s back run in fp16", no,
		 no == 1 ? "" : "s", ne, ne == 1 ? "" : "s");
	return true;
}

/* ------------------------------------------------------------------ linear over the axis cap
 * A linear whose output features N exceed the smallest ANE axis cap (16384
 * through H15; evidence R4, rule ANE061: an LM head over a 24k-50k vocabulary)
 * runs off the ANE. Split its weight rows (and bias) into S slices of at most
 * the cap, one linear per slice, and concat them on the last axis: y[.., n] is
 * the same dot product over the same K terms, computed by a linear op of the
 * same K; a matrix kernel's order of adding them may follow the matrix size (its
 * tiling), so the class is reassociate (bit-identical in the interpreter on the
 * fixtures, not promised). The slices' weights are new
 * blobs: the rows are contiguous in the row-major [N, K] blob, copied as bytes
 * (never decoded). The concat still has N on its last axis and may stay off
 * the ANE (it copies; the matmul work is in the slices): the rewrite names it
 * in stays_off so that its fallback does not drop the rewrite. */

#define AXIS_CAP 16384                    /* the smallest per-axis cap (H13-H15) */
#define MAX_SPLIT_BYTES (1024ull << 20)   /* weight bytes copied into new blobs */

/* The blob behind const-bound parameter p: data, dtype and declared dims. */
static bool param_blob(struct al_mil_pass *c, const char *p, al_span *data, int *dt, struct al_mil_value *mv)
{
	al_span b, val;
	if (ali_mil_param_binding(c->n, p, 0, &b) != 1)
		return ali_mil_say(c, "'%s' is not a named constant", p);
	char nm[256];
	snprintf(nm, sizeof nm, "%.*s", (int)(b.n < 255 ? b.n : 255), (const char *)b.p);
	const struct al_node *pr = ali_mil_producer(c->n, nm);
	if (!pr || !pr->type || strcmp(pr->type, "const") != 0 || !ali_mil_attr(pr, "val", &val) ||
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
static bool pre_blob_const(struct al_mil_pass *c, const char *name, int dt, int rank, const int64_t *dims,
			   const uint8_t *bytes, size_t n)
{
	uint64_t off = add_blob(c->s, dt == AL_DT_FP16 ? 1 : 2, bytes, n);
	if (off == UINT64_MAX)
		return ali_mil_say(c, "out of memory");
	struct al_buf v = {0}, vt = {0}, op = {0};
	put_vtype(&vt, dt, rank, dims);
	ali_buf_len(&v, V_TYPE, vt.p, vt.n);
	ali_mil_put_blob_value(&v, off);
	put_const_op(&op, name, &vt, &v, NULL);
	c->pre.failed |= op.failed || v.failed;
	ali_buf_len(&c->pre, BLOCK_OPS, op.p, op.n);
	ali_buf_free(&v);
	ali_buf_free(&vt);
	ali_buf_free(&op);
	return !c->pre.failed || ali_mil_say(c, "out of memory");
}

/* An immediate scalar const op before c->n (int32 or bool). */
static bool pre_scalar(struct al_mil_pass *c, const char *name, int dt, double x)
{
	bool blob;
	return pre_const(c, name, dt, 0, NULL, &x, 1, &blob);
}

/* A NamedValueType {name 1, type 2} field `field` of op. */
static void put_output(struct al_buf *op, const char *name, int dt, int rank, const int64_t *dims)
{
	struct al_buf nv = {0}, vt = {0};
	put_vtype(&vt, dt, rank, dims);
	ali_buf_str(&nv, 1, name);
	ali_buf_len(&nv, 2, vt.p, vt.n);
	ali_buf_len(op, OP_OUTPUTS, nv.p, nv.n);
	op->failed |= nv.failed || vt.failed;
	ali_buf_free(&nv);
	ali_buf_free(&vt);
}

bool ali_pass_mil_linear_split(struct al_mil_pass *c)
{
	if (!mil_op(c))
		return false;
	const struct al_shape *o = c->n->out_shapes ? &c->n->out_shapes[0] : NULL;
	bool known = o && o->rank >= 1 && o->rank <= AL_SHAPE_MAX_RANK;
	for (int i = 0; known && i < o->rank; i++)
		known = o->dims[i] >= 0;
	/* a symbolic leading axis (a flexible sequence length) is fine: the slices
	 * declare it unknown, as the linear does; the features must be static */
	if (!known || (o->flex >> (o->rank - 1) & 1u))
		return ali_mil_say(c, "the output's feature count is not known statically");
	int r = o->rank;
	int64_t N = o->dims[r - 1];
	if (N <= AXIS_CAP)
		return ali_mil_say(c, "%lld output features fit the ANE's axis cap (%d)", (long long)N, AXIS_CAP);
	al_span xb;
	if (ali_mil_param_binding(c->n, "x", 0, &xb) != 1)
		return ali_mil_say(c, "'x' is not a named value");
	al_span wd, bd = {0};
	int wdt, bdt = 0;
	struct al_mil_value wv, bv;
	if (!param_blob(c, "weight", &wd, &wdt, &wv))
		return false;
	if (wv.rank != 2 || wv.dims[0] != N || wv.dims[1] < 1)
		return ali_mil_say(c, "the weight is not [%lld, K]", (long long)N);
	int64_t K = wv.dims[1];
	size_t esz = wdt == AL_DT_FP16 ? 2 : 4;
	if ((uint64_t)N * (uint64_t)K * esz != wd.n)
		return ali_mil_say(c, "the weight blob holds %zu bytes, not %lld x %lld values", wd.n, (long long)N,
			   (long long)K);
	if (wd.n > MAX_SPLIT_BYTES)
		return ali_mil_say(c, "the weight is %zu MB: more than %llu MB would be copied into new blobs",
			   wd.n >> 20, MAX_SPLIT_BYTES >> 20);
	bool has_bias = ali_mil_param_present(c->n, "bias");
	if (has_bias) {
		if (!param_blob(c, "bias", &bd, &bdt, &bv))
			return false;
		size_t bsz = bdt == AL_DT_FP16 ? 2 : 4;
		if (bv.rank != 1 || bv.dims[0] != N || bd.n != (uint64_t)N * bsz)
			return ali_mil_say(c, "the bias is not [%lld]", (long long)N);
	}
	int64_t S = (N + AXIS_CAP - 1) / AXIS_CAP, chunk = (N + S - 1) / S;
	if (S > 8)
		return ali_mil_say(c, "%lld output features: more than 8 slices of %d", (long long)N, AXIS_CAP);
	if (c->s->opts && c->s->opts->allow < AL_EQ_REASSOCIATE) { /* reported, nothing built */
		snprintf(c->after, sizeof c->after, "%lld linear slices of <= %lld features + concat", (long long)S,
			 (long long)chunk);
		return true;
	}
	char *xname = ali_arena_strndup(&c->s->arena, xb.p, xb.n);
	const char *base = c->n->outputs[0];
	const char **parts = ali_arena_array(&c->s->arena, (size_t)S, sizeof *parts);
	if (!xname || !parts)
		return ali_mil_say(c, "out of memory");
	int dt = out_dtype(c);
	for (int64_t i = 0; i < S; i++) {
		int64_t a = i * chunk, n = i == S - 1 ? N - a : chunk;
		char sfx[32];
		snprintf(sfx, sizeof sfx, "w%lld", (long long)i);
		const char *wn = fresh(c, base, sfx);
		snprintf(sfx, sizeof sfx, "b%lld", (long long)i);
		const char *bn = has_bias ? fresh(c, base, sfx) : "";
		snprintf(sfx, sizeof sfx, "part%lld", (long long)i);
		const char *pn = fresh(c, base, sfx);
		if (!wn || !bn || !pn)
			return ali_mil_say(c, "no free value name");
		int64_t wdims[2] = {n, K}, bdims[1] = {n};
		if (!pre_blob_const(c, wn, wdt, 2, wdims, wd.p + (size_t)a * (size_t)K * esz,
				    (size_t)n * (size_t)K * esz))
			return false;
		size_t bsz = bdt == AL_DT_FP16 ? 2 : 4;
		if (has_bias && !pre_blob_const(c, bn, bdt, 1, bdims, bd.p + (size_t)a * bsz, (size_t)n * bsz))
			return false;
		struct al_buf op = {0};
		ali_buf_str(&op, OP_TYPE, "linear");
		put_input(&op, "x", xname);
		put_input(&op, "weight", wn);
		if (has_bias)
			put_input(&op, "bias", bn);
		int64_t od[AL_SHAPE_MAX_RANK];
		for (int k = 0; k < r; k++)
			od[k] = o->flex >> k & 1u ? -1 : o->dims[k];
		od[r - 1] = n;
		put_output(&op, pn, dt, r, od);
		struct al_buf v = {0};
		put_string_value(&v, pn);
		put_attr(&op, "name", v.p, v.n);
		op.failed |= v.failed;
		ali_buf_free(&v);
		c->pre.failed |= op.failed;
		ali_buf_len(&c->pre, BLOCK_OPS, op.p, op.n);
		ali_buf_free(&op);
		parts[i] = pn;
		if (c->n_names < 14)
			c->names[c->n_names++] = pn;
	}
	const char *an = fresh(c, base, "axis"), *in = fresh(c, base, "interleave");
	if (!an || !in || !pre_scalar(c, an, AL_DT_INT32, -1) || !pre_scalar(c, in, AL_DT_BOOL, 0))
		return ali_mil_say(c, "no free value name");
	/* the op itself: concat(values = parts, axis = -1, interleave = false) */
	ali_buf_str(&c->layer, OP_TYPE, "concat");
	put_inputs(&c->layer, "values", parts, (size_t)S);
	put_input(&c->layer, "axis", an);
	put_input(&c->layer, "interleave", in);
	if (!keep_outputs(c, &c->layer, base, false))
		return false;
	if (c->layer.failed || c->pre.failed)
		return ali_mil_say(c, "out of memory");
	c->names[c->n_names++] = c->n->name;
	c->stays_off = c->n->name;
	snprintf(c->after, sizeof c->after, "%lld linear slices of <= %lld features (new blobs) + concat",
		 (long long)S, (long long)chunk);
	return true;
}

/* ------------------------------------------------------------------ upsample x4 / x8 -> x2 chain
 * upsample_nearest_neighbor by 2^a x 2^b (a or b >= 2) runs off the ANE of the
 * H13-era devices (ANE027: a factor of 2 only). Nearest-neighbour by 4 is
 * nearest-neighbour by 2 twice: output pixel (i, j) reads input (i / 4, j / 4)
 * = ((i / 2) / 2, (j / 2) / 2), so the chain copies the same values (exact), as
 * upsample-x2-chain does for NeuralNetwork layers. */

static int log2_of(double f)
{
	if (f != floor(f) || f < 1 || f > 64)
		return -1;
	uint64_t u = (uint64_t)f;
	if (u & (u - 1))
		return -1;
	int k = 0;
	while (u > 1)
		u >>= 1, k++;
	return k;
}

bool ali_pass_mil_upsample(struct al_mil_pass *c)
{
	if (!mil_op(c))
		return false;
	double fh, fw;
	if (!const_scalar(c, "scale_factor_height", &fh, true, 1) ||
	    !const_scalar(c, "scale_factor_width", &fw, true, 1))
		return false;
	int eh = log2_of(fh), ew = log2_of(fw);
	if (eh < 0 || ew < 0)
		return ali_mil_say(c, "scale factors %gx%g are not powers of two up to 64", fh, fw);
	int steps = eh > ew ? eh : ew;
	if (steps < 2)
		return ali_mil_say(c, "scale factors %gx%g need no chain", fh, fw);
	al_span xb;
	if (ali_mil_param_binding(c->n, "x", 0, &xb) != 1)
		return ali_mil_say(c, "'x' is not a named value");
	struct al_shape xs;
	if (!ali_mil_param_shape(c->n, "x", &xs) || !static_shape(&xs) || xs.rank < 3)
		return ali_mil_say(c, "the shape of 'x' is not static (rank 3 or more)");
	const struct al_ttype *ft = ali_mil_param_type(c->n, "scale_factor_height");
	int sdt = ft && ft->kind == 0 && ft->dtype == AL_DT_INT32 ? AL_DT_INT32 : AL_DT_FP32;
	int dt = out_dtype(c);
	const char *base = c->n->outputs[0];
	const char *prev = ali_arena_strndup(&c->s->arena, xb.p, xb.n);
	if (!prev)
		return ali_mil_say(c, "out of memory");
	int64_t dims[AL_SHAPE_MAX_RANK];
	memcpy(dims, xs.dims, (size_t)xs.rank * sizeof dims[0]);
	for (int i = 0; i < steps; i++) {
		double h = i < eh ? 2 : 1, w = i < ew ? 2 : 1;
		const char *shn = fresh(c, base, "x2_h"), *swn = fresh(c, base, "x2_w");
		if (!shn || !swn || !pre_scalar(c, shn, sdt, h) || !pre_scalar(c, swn, sdt, w))
			return ali_mil_say(c, "no free value name");
		dims[xs.rank - 2] *= (int64_t)h;
		dims[xs.rank - 1] *= (int64_t)w;
		struct al_buf *op = &c->layer, tmp = {0};
		const char *out = NULL;
		if (i < steps - 1) {
			op = &tmp;
			if (!(out = fresh(c, base, "x2")))
				return ali_mil_say(c, "no free value name");
		}
		ali_buf_str(op, OP_TYPE, "upsample_nearest_neighbor");
		put_input(op, "x", prev);
		put_input(op, "scale_factor_height", shn);
		put_input(op, "scale_factor_width", swn);
		if (out) {
			put_output(op, out, dt, xs.rank, dims);
			struct al_buf v = {0};
			put_string_value(&v, out);
			put_attr(op, "name", v.p, v.n);
			op->failed |= v.failed;
			ali_buf_free(&v);
			c->pre.failed |= op->failed;
			ali_buf_len(&c->pre, BLOCK_OPS, op->p, op->n);
			ali_buf_free(&tmp);
			if (c->n_names < 14)
				c->names[c->n_names++] = out;
			prev = out;
			continue;
		}
		if (!keep_outputs(c, op, base, false))
			return false;
	}
	if (c->layer.failed || c->pre.failed)
		return ali_mil_say(c, "out of memory");
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "%d upsample_nearest_neighbor x2 ops", steps);
	return true;
}


/* ------------------------------------------------------------------ attention -> split-einsum form
 * scaled_dot_product_attention (iOS 18) on little work is kept on the CPU
 * (ANE067), and Apple's recipe for the ANE (ml-ane-transformers 2022, catalog
 * R6 / O19) is attention split per head with the softmax on the channel axis.
 * For query [B, H, L, E], key [B, H, S, E], value [B, H, S, EV]:
 *   q' = q * a1, k' = k * a2 (a1 * a2 = 1/sqrt(E); a2 = 1 when 1/sqrt(E) is
 *   exact in the dtype), split q', k', v on the head axis, and per head h
 *   t_h = matmul(k'_h, q'_h^T)            [B, 1, S, L]  (key on axis 2)
 *   t_h += mask_h^T                        (the mask's last two axes swapped)
 *   w_h = softmax(reshape(t_h, [B, S, 1, L]), axis 1)     (key on the channel axis)
 *   o_h = matmul(reshape(w_h, [B, 1, S, L])^T, v_h)       [B, 1, L, EV]
 * and the op itself a concat of the o_h on axis 1. The reshapes move a
 * singleton axis only (no data moves). The same products and sums, grouped per
 * head and scaled before the dot products instead of after: reassociate. In
 * fp16, 1/sqrt(E) is rarely exact: it is then two fp16 factors (on q and on k)
 * whose product is within 2^-20 of it (E = 32: 2.5e-7), else refused. */

#define MAX_HEADS 16
#define SCALE_TOL 9.5367431640625e-07 /* 2^-20 */

/* pre_op with the inputs as a flat (param, value) list. */
static bool pre_op_list(struct al_mil_pass *c, const char *type, const char *const *in, int n_in,
			const char *const *outs, int n_out, int dt, int rank, const int64_t *dims)
{
	struct al_buf op = {0};
	ali_buf_str(&op, OP_TYPE, type);
	for (int i = 0; i < n_in; i++)
		put_input(&op, in[2 * i], in[2 * i + 1]);
	return pre_op_end(c, &op, outs, n_out, dt, rank, dims);
}

/* A const before c->n named base_sfx (not listed in names): its name, or NULL. */
static const char *kconst(struct al_mil_pass *c, const char *base, const char *sfx, int dt, int rank,
			  const int64_t *dims, const double *x, size_t n)
{
	const char *nm = fresh(c, base, sfx);
	uint32_t keep = c->n_names;
	bool blob;
	if (!nm) {
		ali_mil_say(c, "no free value name");
		return NULL;
	}
	bool ok = pre_const(c, nm, dt, rank, dims, x, n, &blob);
	c->n_names = keep;
	return ok ? nm : NULL;
}

/* Two fp16 factors a1 * a2 closest to alpha (relative error into *err). */
static void fp16_factors(double alpha, double *a1, double *a2, double *err)
{
	*err = 1;
	*a1 = alpha;
	*a2 = 1;
	for (int e = -8; e <= 2; e++)
		for (int m = 1024; m < 2048; m++) {
			double x = ldexp(m, e - 10);
			double y = ali_f16_to_f32(ali_f16_from_f32((float)(alpha / x)));
			if (y == 0 || isinf(y))
				continue;
			double r = fabs(x * y / alpha - 1);
			if (r < *err)
				*err = r, *a1 = x, *a2 = y;
		}
}

/* Split value x of dims d (rank 4) into H parts on axis 1: their names. */
static bool split_heads(struct al_mil_pass *c, const char *x, const int64_t *d, int64_t H, const char *axis1,
			const char *nh, int dt, const char *base, const char *tag, const char **parts)
{
	if (H == 1) {
		parts[0] = x;
		return true;
	}
	for (int64_t h = 0; h < H; h++) {
		char sfx[32];
		snprintf(sfx, sizeof sfx, "%s_h%lld", tag, (long long)h);
		if (!(parts[h] = fresh(c, base, sfx)))
			return ali_mil_say(c, "no free value name");
	}
	int64_t pd[4] = {d[0], 1, d[2], d[3]};
	const char *in[] = {"x", x, "num_splits", nh, "axis", axis1};
	return pre_op_list(c, "split", in, 3, parts, (int)H, dt, 4, pd);
}

static bool shape_of(struct al_mil_pass *c, const char *p, struct al_shape *s, char *sh, size_t n)
{
	if (!ali_mil_param_shape(c->n, p, s))
		s->rank = -1;
	ali_shape_format(s, sh, n);
	if (s->rank < 0 || !static_shape(s))
		return ali_mil_say(c, "'%s' has shape %s, not static", p, sh);
	return true;
}

bool ali_pass_mil_sdpa_split(struct al_mil_pass *c)
{
	if (!mil_op(c))
		return false;
	al_span b;
	const char *pn[4] = {"query", "key", "value", "attn_mask"};
	const char *nm[4] = {NULL, NULL, NULL, NULL};
	struct al_shape s[4];
	char sh[4][96];
	bool has_mask = ali_mil_param_present(c->n, "attn_mask");
	for (int i = 0; i < 3 + has_mask; i++) {
		if (ali_mil_param_binding(c->n, pn[i], 0, &b) != 1)
			return ali_mil_say(c, "'%s' is not a named value", pn[i]);
		if (!(nm[i] = ali_arena_strndup(&c->s->arena, b.p, b.n)))
			return ali_mil_say(c, "out of memory");
		if (!shape_of(c, pn[i], &s[i], sh[i], sizeof sh[i]))
			return false;
	}
	if (s[0].rank != 4 || s[1].rank != 4 || s[2].rank != 4)
		return ali_mil_say(c, "query %s, key %s, value %s: rank 4 [B, heads, L, E] expected", sh[0], sh[1], sh[2]);
	const int64_t *q = s[0].dims, *k = s[1].dims, *v = s[2].dims;
	int64_t B = q[0], H = q[1], L = q[2], E = q[3], S = k[2], EV = v[3];
	if (k[0] != B || v[0] != B || k[1] != H || v[1] != H || k[3] != E || v[2] != S)
		return ali_mil_say(c, "query %s, key %s, value %s do not match as [B,H,L,E], [B,H,S,E], [B,H,S,EV]",
			   sh[0], sh[1], sh[2]);
	if (B < 1 || H < 1 || L < 1 || E < 1 || S < 1 || EV < 1)
		return ali_mil_say(c, "an empty axis in %s / %s / %s", sh[0], sh[1], sh[2]);
	if (H > MAX_HEADS)
		return ali_mil_say(c, "%lld heads: more than %d (the per-head ops grow with them)", (long long)H, MAX_HEADS);
	int dt = s[0].dtype ? s[0].dtype : out_dtype(c);
	if (dt != AL_DT_FP16 && dt != AL_DT_FP32)
		return ali_mil_say(c, "query is %s (fp16 / fp32 only)", al_dtype_name(dt));
	if (s[1].dtype != dt || s[2].dtype != dt)
		return ali_mil_say(c, "query, key and value differ in dtype");
	int mr = has_mask ? s[3].rank : 0;
	int64_t md[4] = {1, 1, 1, 1};
	if (has_mask) {
		if (s[3].dtype != dt)
			return ali_mil_say(c, "attn_mask is %s: a bool mask would need a select per head (only %s mask "
				      "added to the scores is rewritten)", al_dtype_name(s[3].dtype),
				   dt == AL_DT_FP16 ? "an fp16" : "an fp32");
		if (mr < 2 || mr > 4)
			return ali_mil_say(c, "attn_mask has shape %s: rank 2-4 expected", sh[3]);
		for (int i = 0; i < mr; i++)
			md[4 - mr + i] = s[3].dims[i];
		const int64_t full[4] = {B, H, L, S};
		for (int i = 0; i < 4; i++)
			if (md[i] != 1 && md[i] != full[i])
				return ali_mil_say(c, "attn_mask %s does not broadcast to the scores [%lld,%lld,%lld,%lld]", sh[3],
					   (long long)B, (long long)H, (long long)L, (long long)S);
	}
	double alpha = (float)(1.0 / sqrt((double)E)), a1 = alpha, a2 = 1, err = 0;
	if (!exact_in(dt, alpha)) {
		fp16_factors(alpha, &a1, &a2, &err);
		if (err > SCALE_TOL)
			return ali_mil_say(c, "1/sqrt(%lld) is not exact in fp16 and no two fp16 factors come within 2^-20 "
				      "of it (best %.2g)", (long long)E, err);
	}
	if (c->s->opts && c->s->opts->allow < AL_EQ_REASSOCIATE) { /* reported, nothing built */
		snprintf(c->after, sizeof c->after, "%lld heads: per-head matmuls, softmax on the channel axis, concat",
			 (long long)H);
		return true;
	}
	const char *base = c->n->outputs[0];
	int64_t d4[1] = {4};
	double fv = 0, tv = 1, ax1 = 1, hv = (double)H;
	double sh1[4] = {(double)B, (double)S, 1, (double)L}, sh2[4] = {(double)B, 1, (double)S, (double)L};
	const char *cf = kconst(c, base, "false", AL_DT_BOOL, 0, NULL, &fv, 1);
	const char *ct = cf ? kconst(c, base, "true", AL_DT_BOOL, 0, NULL, &tv, 1) : NULL;
	const char *cax = ct ? kconst(c, base, "axis1", AL_DT_INT32, 0, NULL, &ax1, 1) : NULL;
	const char *cnh = cax && H > 1 ? kconst(c, base, "heads", AL_DT_INT32, 0, NULL, &hv, 1) : cax;
	const char *cs1 = cnh ? kconst(c, base, "bs1l", AL_DT_INT32, 1, d4, sh1, 4) : NULL;
	const char *cs2 = cs1 ? kconst(c, base, "b1sl", AL_DT_INT32, 1, d4, sh2, 4) : NULL;
	const char *ca1 = cs2 ? kconst(c, base, "scale_q", dt, 0, NULL, &a1, 1) : NULL;
	const char *ca2 = ca1 && a2 != 1 ? kconst(c, base, "scale_k", dt, 0, NULL, &a2, 1) : ca1;
	if (!ca2)
		return false;
	/* the scaled query (and key) */
	const char *qs = fresh(c, base, "q_scaled"), *ks = a2 != 1 ? fresh(c, base, "k_scaled") : nm[1];
	if (!qs || !ks)
		return ali_mil_say(c, "no free value name");
	const char *in_q[] = {"x", nm[0], "y", ca1};
	if (!pre_op_list(c, "mul", in_q, 2, &qs, 1, dt, 4, q))
		return false;
	const char *in_k[] = {"x", nm[1], "y", ca2};
	if (a2 != 1 && !pre_op_list(c, "mul", in_k, 2, &ks, 1, dt, 4, k))
		return false;
	const char *qh[MAX_HEADS], *kh[MAX_HEADS], *vh[MAX_HEADS], *mh[MAX_HEADS], *oh[MAX_HEADS];
	if (!split_heads(c, qs, q, H, cax, cnh, dt, base, "q", qh) ||
	    !split_heads(c, ks, k, H, cax, cnh, dt, base, "k", kh) ||
	    !split_heads(c, nm[2], v, H, cax, cnh, dt, base, "v", vh))
		return false;
	/* the mask, its last two axes swapped (key first), per head when it has them */
	if (has_mask) {
		const char *mt = nm[3];
		int64_t td[4];
		memcpy(td, s[3].dims, sizeof td[0] * (size_t)mr);
		if (md[2] != 1 || md[3] != 1) {
			double perm[4];
			int64_t pd[1] = {mr};
			for (int i = 0; i < mr; i++)
				perm[i] = i;
			perm[mr - 2] = mr - 1, perm[mr - 1] = mr - 2;
			td[mr - 2] = s[3].dims[mr - 1], td[mr - 1] = s[3].dims[mr - 2];
			const char *cp = kconst(c, base, "mask_perm", AL_DT_INT32, 1, pd, perm, (size_t)mr);
			const char *mto = cp ? fresh(c, base, "mask_t") : NULL;
			if (!mto)
				return cp ? ali_mil_say(c, "no free value name") : false;
			const char *in_m[] = {"x", nm[3], "perm", cp};
			if (!pre_op_list(c, "transpose", in_m, 2, &mto, 1, dt, mr, td))
				return false;
			mt = mto;
		}
		bool per_head = mr >= 3 && md[1] == H && H > 1;
		for (int64_t h = 0; h < H; h++)
			mh[h] = mt;
		if (per_head) {
			int64_t sd[4];
			memcpy(sd, td, sizeof sd[0] * (size_t)mr);
			sd[mr - 3] = 1;
			double axm = mr - 3;
			const char *cam = kconst(c, base, "mask_axis", AL_DT_INT32, 0, NULL, &axm, 1);
			if (!cam)
				return false;
			for (int64_t h = 0; h < H; h++) {
				char sfx[32];
				snprintf(sfx, sizeof sfx, "mask_h%lld", (long long)h);
				if (!(mh[h] = fresh(c, base, sfx)))
					return ali_mil_say(c, "no free value name");
			}
			const char *in_s[] = {"x", mt, "num_splits", cnh, "axis", cam};
			if (!pre_op_list(c, "split", in_s, 3, mh, (int)H, dt, mr, sd))
				return false;
		}
	}
	for (int64_t h = 0; h < H; h++) {
		char sfx[32];
		const char *t[6];
		static const char *const tags[6] = {"scores", "masked", "bs1l", "weights", "b1sl", "out"};
		for (int i = 0; i < 6; i++) {
			snprintf(sfx, sizeof sfx, "%s_h%lld", tags[i], (long long)h);
			if (!(t[i] = fresh(c, base, sfx)))
				return ali_mil_say(c, "no free value name");
		}
		int64_t d1[4] = {B, 1, S, L}, d2[4] = {B, S, 1, L}, d3[4] = {B, 1, L, EV};
		const char *in0[] = {"x", kh[h], "y", qh[h], "transpose_x", cf, "transpose_y", ct};
		const char *in1[] = {"x", t[0], "y", has_mask ? mh[h] : ""};
		const char *sc = has_mask ? t[1] : t[0];
		const char *in2[] = {"x", sc, "shape", cs1};
		const char *in3[] = {"x", t[2], "axis", cax};
		const char *in4[] = {"x", t[3], "shape", cs2};
		const char *in5[] = {"x", t[4], "y", vh[h], "transpose_x", ct, "transpose_y", cf};
		if (!pre_op_list(c, "matmul", in0, 4, &t[0], 1, dt, 4, d1) ||
		    (has_mask && !pre_op_list(c, "add", in1, 2, &t[1], 1, dt, 4, d1)) ||
		    !pre_op_list(c, "reshape", in2, 2, &t[2], 1, dt, 4, d2) ||
		    !pre_op_list(c, "softmax", in3, 2, &t[3], 1, dt, 4, d2) ||
		    !pre_op_list(c, "reshape", in4, 2, &t[4], 1, dt, 4, d1) ||
		    !pre_op_list(c, "matmul", in5, 4, &t[5], 1, dt, 4, d3))
			return false;
		oh[h] = t[5];
	}
	/* the op itself: concat(values = o_0 .. o_H-1, axis = 1, interleave = false) */
	ali_buf_str(&c->layer, OP_TYPE, "concat");
	struct al_buf arg = {0}, e = {0};
	for (int64_t h = 0; h < H; h++) {
		struct al_buf bb = {0};
		ali_buf_str(&bb, 1, oh[h]);
		ali_buf_len(&arg, 1, bb.p, bb.n);
		arg.failed |= bb.failed;
		ali_buf_free(&bb);
	}
	ali_buf_str(&e, 1, "values");
	ali_buf_len(&e, 2, arg.p, arg.n);
	ali_buf_len(&c->layer, OP_INPUTS, e.p, e.n);
	c->layer.failed |= arg.failed || e.failed;
	ali_buf_free(&arg);
	ali_buf_free(&e);
	put_input(&c->layer, "axis", cax);
	put_input(&c->layer, "interleave", cf);
	if (!keep_outputs(c, &c->layer, base, false))
		return false;
	if (c->layer.failed || c->pre.failed)
		return ali_mil_say(c, "out of memory");
	c->names[c->n_names++] = c->n->name;
	if (a2 != 1)
		snprintf(c->after, sizeof c->after,
			 "%lld heads: per-head matmuls, softmax on the channel axis, concat (scale as 2 fp16 "
			 "factors, rel %.1e)", (long long)H, err);
	else
		snprintf(c->after, sizeof c->after, "%lld heads: per-head matmuls, softmax on the channel axis, concat",
			 (long long)H);
	return true;
}


/* ------------------------------------------------------------------ shared with passes/mil_layout.c */

bool ali_mil_op_ok(struct al_mil_pass *c)
{
	return mil_op(c);
}

uint32_t ali_mil_readers(const struct al_graph *g, const char *name, int depth)
{
	return readers_of(g, name, depth);
}

/* (ali_mil_static_shape, ali_mil_param_blob and ali_mil_put_output: with the lstm's wrappers above) */

bool ali_mil_put_tensor_value(struct al_mil_pass *c, struct al_buf *v, int dtype, int rank, const int64_t *dims,
			      const double *x, size_t n, bool *blob)
{
	return put_tensor_value(c, v, dtype, rank, dims, x, n, blob);
}

void ali_mil_put_const_op(struct al_buf *op, const char *name, const struct al_buf *vt, const struct al_buf *v)
{
	put_const_op(op, name, vt, v, NULL);
}


/* ------------------------------------------------------------------ the package writer */

struct pw {
	struct al_surgery *s;
	al_diags *d;
	const char *dest;
	char in_real[PATH_MAX];
	char model_real[PATH_MAX];
	char weights_real[PATH_MAX];
	bool have_weights, wrote_model, wrote_weights;
	const struct ali_compact *cp; /* on: weight.bin without its dead blobs (compact.c) */
};

static enum al_status pw_fail(struct pw *w, enum al_status st, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static enum al_status pw_fail(struct pw *w, enum al_status st, const char *file, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ali_diag_vadd(w->d, AL_SEV_ERROR, file, UINT64_MAX, NULL, NULL, fmt, ap);
	va_end(ap);
	return st;
}

/* The input file src, opened for a copy (-1 when it cannot be: the caller
 * copies from the mapping). Through ali_open_regular: a FIFO must not hang. */
static int open_in(const char *src, struct stat *sb)
{
	int fd;
	return src && ali_open_regular(src, NULL, &fd, sb, NULL) == AL_OK ? fd : -1;
}

/* A copy of n bytes of the sparse file `in` that cannot keep its holes would
 * write them all: refuse past the budget (ali_copy_dense_ok). */
static bool dense_refused(struct pw *w, const struct stat *in, uint64_t n, const char *src)
{
	if (ali_copy_dense_ok(in, n))
		return false;
	pw_fail(w, AL_E_IO, src,
		"sparse (%llu bytes, %llu on disk): a copy without its holes would write them all; refused",
		(unsigned long long)in->st_size, (unsigned long long)in->st_blocks * 512);
	return true;
}

static int open_out(const char *path, mode_t mode)
{
	return open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 0777 ? mode & 0777 : 0644);
}

/* The new model.mlmodel: the splice over the input's bytes. */
static enum al_status write_model(struct pw *w, const char *src, const char *dst, mode_t mode)
{
	int fd = open_out(dst, mode);
	if (fd < 0)
		return pw_fail(w, AL_E_IO, dst, "cannot create: %s", strerror(errno));
	struct stat sb;
	int in_fd = w->cp->on ? -1 : open_in(src, &sb);
	if (in_fd >= 0 && (uint64_t)sb.st_size != w->s->root.n) {
		close(in_fd); /* changed since it was mapped: copy from the mapping */
		in_fd = -1;
	}
	enum al_status st = AL_OK;
	if (w->cp->on) /* its blob offsets moved with the blobs */
		st = ali_write_all(fd, w->cp->model, w->cp->model_n) ? AL_OK : AL_E_IO;
	else
		st = ali_splice_to_fd(w->s->sp, in_fd, fd);
	if (in_fd >= 0)
		close(in_fd);
	if (st == AL_OK && ali_sync_fd(fd) != 0)
		st = AL_E_IO;
	if (close(fd) != 0 && st == AL_OK)
		st = AL_E_IO;
	if (st)
		return pw_fail(w, st, dst, "cannot write: %s",
			       st == AL_E_IO ? strerror(errno) : al_status_str(st));
	w->wrote_model = true;
	return AL_OK;
}

/* The new weight.bin: the input's bytes with the blob count raised, then the
 * new blobs (or a copy when none were added). src NULL: none existed. */
static enum al_status write_weights(struct pw *w, const char *src, const char *dst, mode_t mode)
{
	struct al_surgery *s = w->s;
	int fd = open_out(dst, mode);
	if (fd < 0)
		return pw_fail(w, AL_E_IO, dst, "cannot create: %s", strerror(errno));
	bool ok = true;
	uint64_t a = s->m->weights.n;
	struct stat sb;
	int in_fd = open_in(src, &sb);
	if (in_fd >= 0 && (uint64_t)sb.st_size != a) {
		close(in_fd);
		in_fd = -1;
	}
	/* compacted: only the live blobs' bytes are copied (a sparse input's holes
	 * past them, or in its dead blobs, are not written at all) */
	if (in_fd >= 0 && dense_refused(w, &sb, w->cp->on ? w->cp->size : (uint64_t)sb.st_size, src)) {
		close(in_fd);
		close(fd);
		return AL_E_IO;
	}
	if (w->cp->on) {
		ok = ali_compact_write(s, w->cp, in_fd, fd);
	} else if (a && s->wcount) {
		uint8_t cnt[4];
		le32(cnt, new_count(s));
		ok = ali_write_all(fd, cnt, 4);
		if (ok && in_fd >= 0)
			ok = ali_copy_range(in_fd, 4, a - 4, fd);
		else if (ok)
			ok = ali_write_all(fd, s->m->weights.p + 4, a - 4);
		ok = ok && ali_write_all(fd, s->wtail.p, s->wtail.n);
	} else if (a) {
		ok = in_fd >= 0 ? ali_copy_range(in_fd, 0, a, fd) : ali_write_all(fd, s->m->weights.p, a);
	} else if (s->wcount) { /* a fresh file: the tail starts with the header */
		uint8_t h[4];
		le32(h, new_count(s));
		ok = ali_write_all(fd, h, 4) && ali_write_all(fd, s->wtail.p + 4, s->wtail.n - 4);
	} else if (src && in_fd >= 0) {
		ok = ali_copy_range(in_fd, 0, (uint64_t)sb.st_size, fd);
	}
	int e = errno;
	if (ok && ali_sync_fd(fd) != 0) {
		ok = false;
		e = errno;
	}
	if (in_fd >= 0)
		close(in_fd);
	if (close(fd) != 0)
		ok = false;
	if (!ok)
		return pw_fail(w, AL_E_IO, dst, "cannot write: %s", strerror(e));
	w->wrote_weights = true;
	return AL_OK;
}

static enum al_status copy_file(struct pw *w, const char *src, const char *dst, mode_t mode)
{
	struct stat sb;
	int in_fd;
	if (ali_open_regular(src, NULL, &in_fd, &sb, w->d) != AL_OK)
		return AL_E_IO;
	if (dense_refused(w, &sb, (uint64_t)sb.st_size, src)) {
		close(in_fd);
		return AL_E_IO;
	}
	int fd = open_out(dst, mode);
	if (fd < 0) {
		int e = errno;
		close(in_fd);
		return pw_fail(w, AL_E_IO, dst, "cannot create: %s", strerror(e));
	}
	bool ok = ali_copy_range(in_fd, 0, (uint64_t)sb.st_size, fd);
	int e = errno;
	if (ok && ali_sync_fd(fd) != 0) {
		ok = false;
		e = errno;
	}
	close(in_fd);
	if (close(fd) != 0)
		ok = false;
	return ok ? AL_OK : pw_fail(w, AL_E_IO, dst, "cannot write: %s", strerror(e));
}

static bool inside(const char *base, const char *s)
{
	size_t n = strlen(base);
	return strncmp(s, base, n) == 0 && (s[n] == '/' || s[n] == '\0');
}

/* Copy directory src (inside the input package) to dst, which exists. */
static enum al_status copy_tree(struct pw *w, const char *src, const char *dst, int depth)
{
	if (depth > AL_MAX_DEPTH)
		return pw_fail(w, AL_E_FORMAT, src, "directories nested deeper than %d levels",
			       AL_MAX_DEPTH);
	DIR *dir = opendir(src);
	if (!dir)
		return pw_fail(w, AL_E_IO, src, "cannot open: %s", strerror(errno));
	enum al_status st = AL_OK;
	struct dirent *e;
	while (st == AL_OK && (errno = 0, e = readdir(dir))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char sp[PATH_MAX], dp[PATH_MAX], real[PATH_MAX];
		if ((size_t)snprintf(sp, sizeof sp, "%s/%s", src, e->d_name) >= sizeof sp ||
		    (size_t)snprintf(dp, sizeof dp, "%s/%s", dst, e->d_name) >= sizeof dp) {
			st = pw_fail(w, AL_E_IO, src, "a path in the package is too long");
			break;
		}
		struct stat lb, sb;
		if (lstat(sp, &lb) != 0 || !realpath(sp, real) || stat(real, &sb) != 0) {
			st = pw_fail(w, AL_E_IO, sp, "cannot read: %s", strerror(errno));
			break;
		}
		if (!inside(w->in_real, real)) {
			st = pw_fail(w, AL_E_FORMAT, sp, "resolves to %.200s, outside the package", real);
			break;
		}
		if (S_ISDIR(lb.st_mode)) {
			if (mkdir(dp, (lb.st_mode & 0777) | 0700) != 0)
				st = pw_fail(w, AL_E_IO, dp, "cannot create: %s", strerror(errno));
			else
				st = copy_tree(w, sp, dp, depth + 1);
		} else if (S_ISLNK(lb.st_mode) && S_ISDIR(sb.st_mode)) {
			st = pw_fail(w, AL_E_UNSUPPORTED, sp, "a symbolic link to a directory is not copied");
		} else if (!S_ISREG(sb.st_mode)) {
			st = pw_fail(w, AL_E_UNSUPPORTED, sp, "not a regular file or directory");
		} else if (strcmp(real, w->model_real) == 0) {
			st = write_model(w, real, dp, sb.st_mode);
		} else if (w->have_weights && strcmp(real, w->weights_real) == 0) {
			st = write_weights(w, real, dp, sb.st_mode);
		} else {
			st = copy_file(w, real, dp, sb.st_mode);
		}
	}
	if (st == AL_OK && errno)
		st = pw_fail(w, AL_E_IO, src, "cannot list: %s", strerror(errno));
	closedir(dir);
	return st;
}

/* mkdir -p of dst/rel's directories (rel relative, '/'-separated). */
static enum al_status make_dirs(struct pw *w, const char *dst, const char *rel)
{
	char p[PATH_MAX];
	if ((size_t)snprintf(p, sizeof p, "%s/%s", dst, rel) >= sizeof p)
		return pw_fail(w, AL_E_IO, dst, "a path in the package is too long");
	for (char *q = p + strlen(dst) + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			return pw_fail(w, AL_E_IO, p, "cannot create: %s", strerror(errno));
		*q = '/';
	}
	return AL_OK;
}

enum al_status ali_surgery_write_package(struct al_surgery *s, const char *path, al_diags *d)
{
	struct ali_compact cp = {0};
	struct pw w = {.s = s, .d = d, .dest = path, .cp = &cp};
	al_model *m = s->m;
	if (!m->n_subs || !m->subs[0]->file)
		return AL_E_INVALID_ARG;
	if (!realpath(m->path, w.in_real))
		return pw_fail(&w, AL_E_IO, m->path, "cannot open: %s", strerror(errno));
	if (!realpath(m->subs[0]->file, w.model_real))
		return pw_fail(&w, AL_E_IO, m->subs[0]->file, "cannot open: %s", strerror(errno));
	w.have_weights = m->weights_path && realpath(m->weights_path, w.weights_real);
	/* the destination: path without trailing slashes; its directory must exist */
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	if (n == 0 || n >= PATH_MAX - 32)
		return pw_fail(&w, AL_E_INVALID_ARG, path, "bad output path");
	if (n >= 8 && memcmp(path + n - 8, ".mlmodel", 8) == 0)
		return pw_fail(&w, AL_E_INVALID_ARG, path,
			       "the input is a package: the output is a package too (name it .mlpackage)");
	char dest[PATH_MAX], parent[PATH_MAX], preal[PATH_MAX];
	memcpy(dest, path, n);
	dest[n] = '\0';
	struct stat db;
	bool exists = lstat(dest, &db) == 0;
	if (exists && S_ISDIR(db.st_mode) && !realpath(path, dest)) /* ".", "..": its real name */
		return pw_fail(&w, AL_E_IO, path, "cannot open: %s", strerror(errno));
	n = strlen(dest);
	memcpy(parent, dest, n + 1);
	char *slash = strrchr(parent, '/');
	if (!slash)
		strcpy(parent, ".");
	else if (slash == parent)
		parent[1] = '\0';
	else
		*slash = '\0';
	if (!realpath(parent, preal))
		return pw_fail(&w, AL_E_IO, dest, "cannot write: %s: %s", parent, strerror(errno));
	if (inside(w.in_real, preal))
		return pw_fail(&w, AL_E_INVALID_ARG, dest, "the output would be inside the input package");
	if (exists) {
		char dreal[PATH_MAX], mf[PATH_MAX + 32];
		struct stat mb;
		if (!S_ISDIR(db.st_mode))
			return pw_fail(&w, AL_E_INVALID_ARG, dest,
				       "exists and is not a directory; a package is written as one");
		snprintf(mf, sizeof mf, "%s/Manifest.json", dest);
		if (stat(mf, &mb) != 0)
			return pw_fail(&w, AL_E_INVALID_ARG, dest,
				       "exists and is not a model package (no Manifest.json): not replaced");
		if (realpath(dest, dreal) && inside(dreal, w.in_real) && strcmp(dreal, w.in_real) != 0)
			return pw_fail(&w, AL_E_INVALID_ARG, dest, "the input package is inside it");
	}
	enum al_status st = ali_compact_plan(s, &cp, d);
	if (st != AL_OK)
		return st;
	struct al_atomic out;
	if ((st = ali_atomic_begin(&out, dest, true, d)) != AL_OK) {
		ali_compact_free(&cp);
		return st;
	}
	out.replace = exists; /* checked above: a package, not the input's parent */
	const char *tmp = out.tmp;
	st = copy_tree(&w, w.in_real, tmp, 0);
	if (st == AL_OK && !w.wrote_model)
		st = pw_fail(&w, AL_E_FORMAT, m->subs[0]->file, "the root model is not inside the package");
	if (st == AL_OK && s->wcount && !w.wrote_weights) {
		/* no weight.bin in the input: where the loader reads it, the Manifest's
		 * weights item (Data/com.apple.CoreML/weights unless it says otherwise:
		 * a package whose item points elsewhere got its new blobs next to the
		 * model, which the new package then did not load; found by fuzz_pkgwrite) */
		char wrel[PATH_MAX], wp[PATH_MAX];
		if (m->weights_rel) {
			snprintf(wrel, sizeof wrel, "%s", m->weights_rel);
		} else {
			const char *rel = w.model_real + strlen(w.in_real) + 1;
			const char *ms = strrchr(rel, '/');
			int dl = ms ? (int)(ms - rel) : 0;
			snprintf(wrel, sizeof wrel, "%.*s%sweights/weight.bin", dl, rel, ms ? "/" : "");
		}
		st = make_dirs(&w, tmp, wrel);
		if (st == AL_OK && (size_t)snprintf(wp, sizeof wp, "%s/%s", tmp, wrel) >= sizeof wp)
			st = pw_fail(&w, AL_E_IO, dest, "a path in the package is too long");
		if (st == AL_OK)
			st = write_weights(&w, NULL, wp, 0644);
	}
	if (st == AL_OK) { /* it must load before it replaces anything */
		al_diags *d2 = al_diags_new();
		al_model *chk = NULL;
		enum al_status cs = d2 ? al_model_open(tmp, &chk, d2) : AL_E_NOMEM;
		if (cs != AL_OK) {
			const struct al_diag *e = NULL; /* the first error, not a warning before it */
			for (size_t i = 0; d2 && i < al_diags_count(d2) && !e; i++)
				if (al_diags_get(d2, i)->severity == AL_SEV_ERROR)
					e = al_diags_get(d2, i);
			st = pw_fail(&w, AL_E_FORMAT, dest, "the new package does not load: %s",
				     e ? e->msg : al_status_str(cs));
		}
		al_model_free(chk);
		al_diags_free(d2);
	}
	ali_compact_free(&cp);
	if (st == AL_OK) /* renamed into place, or swapped with the old package */
		return ali_atomic_commit(&out, d);
	ali_atomic_abort(&out);
	return st;
}


/* ------------------------------------------------------------------ shared with surgery_fp16.c
 * and surgery_quant.c (mil-fp16-compute and mil-blockwise-to-per-channel build their
 * ops and blobs with the same writers) */

const char *ali_mil_fresh(struct al_mil_pass *c, const char *base, const char *suffix)
{
	return fresh(c, base, suffix);
}

uint64_t ali_mil_add_blob(struct al_surgery *s, uint32_t blob_dtype, const void *data, size_t n)
{
	return add_blob(s, blob_dtype, data, n);
}

void ali_mil_put_attr(struct al_buf *op, const char *key, const void *val, size_t n)
{
	put_attr(op, key, val, n);
}

void ali_mil_put_string_value(struct al_buf *v, const char *s)
{
	put_string_value(v, s);
}

void ali_mil_put_input(struct al_buf *op, const char *param, const char *name)
{
	put_input(op, param, name);
}
