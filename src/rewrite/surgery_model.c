/* SPDX-License-Identifier: MIT */
/* surgery_model.c: model-level passes of `anelint fix` (docs/surgery.md
 * "Model-level fixes"): they edit the model description (and an ML Program's
 * function inputs), not layers.
 *
 *   input-fixed-shape        --shape NAME=D1,D2,... / NAME=default: a flexible
 *                            multi-array input (shape range or enumerated shapes)
 *                            -> one fixed shape
 *   input-enumerated-shapes  --enumerate NAME=S1;S2;...: a shape range -> the
 *                            enumerated shapes given (first = default)
 *
 * Both only narrow the shapes a model accepts to ones it accepted before: every
 * layer's bytes stay the same, so on the shapes kept the model computes what it
 * did (exact). The rule they answer is ANE040 (a shape range keeps the whole
 * model off the ANE; evidence R2, catalog S2-S4). */
#include "analysis.h"
#include "pbsplice.h"
#include "surgery_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { MODEL_DESC = 2, MODEL_PROGRAM = 502, DESC_INPUT = 1, FT_ARRAY = 5 };
enum { ARR_SHAPE = 1, ARR_ENUM = 21, ARR_RANGE = 31 };
#define MAX_ENUM 128 /* coremltools flexible-inputs: at most 128 enumerated shapes (catalog S2) */

static bool say(struct al_mil_pass *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool say(struct al_mil_pass *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof c->why, fmt, ap);
	va_end(ap);
	return false;
}

static bool field_at(al_span msg, uint32_t num, al_span *data)
{
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f))
		if (f.num == num && f.wire == PB_LEN) {
			*data = f.data;
			return true;
		}
	return false;
}

static bool named_entry(al_span msg, uint32_t num, const char *name, al_span *out)
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

static void fmt_dims(const int64_t *d, uint32_t rank, char *buf, size_t cap)
{
	size_t k = 0;
	buf[0] = '\0';
	for (uint32_t i = 0; i < rank && k + 24 < cap; i++)
		k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? "x" : "", (long long)d[i]);
}

/* Whether dims (rank long) is a shape the feature accepts now; why when not. */
static bool accepted(struct al_mil_pass *c, const struct al_feature *ft, const int64_t *dims)
{
	char b[96];
	fmt_dims(dims, ft->rank, b, sizeof b);
	for (uint32_t i = 0; i < ft->rank; i++)
		if (dims[i] < 1)
			return say(c, "shape %s: every dimension must be at least 1", b);
	if (ft->flex == AL_FLEX_RANGE) {
		for (uint32_t i = 0; i < ft->rank; i++) {
			int64_t lo = ft->flex_values[2 * i], hi = ft->flex_values[2 * i + 1];
			if (dims[i] < lo || (hi >= 0 && dims[i] > hi))
				return say(c, "shape %s: axis %u is outside the input's range %lld..%lld", b, i,
					   (long long)lo, (long long)hi);
		}
		return true;
	}
	for (uint32_t k = 0; k < ft->n_shapes; k++)
		if (memcmp(ft->flex_values + (size_t)k * ft->rank, dims, ft->rank * sizeof *dims) == 0)
			return true;
	return say(c, "shape %s is not one of the input's %u enumerated shapes", b, ft->n_shapes);
}

static void put_shape(struct al_buf *b, uint32_t field, const int64_t *dims, uint32_t rank)
{
	uint64_t v[AL_MAX_RANK];
	for (uint32_t i = 0; i < rank; i++)
		v[i] = (uint64_t)dims[i];
	ali_buf_packed(b, field, v, rank);
}

/* The ML Program function input `name`'s TensorType with every dimension
 * constant (dims): its other fields copied in order. */
static bool program_dims(struct al_mil_pass *c, const char *name, const int64_t *dims, uint32_t rank)
{
	al_span prog, fe, fn, fin, vt, tt;
	const struct al_submodel *sub = c->s->m->subs[0];
	if (sub->n_functions != 1 || sub->n_fdescs > 1) /* also one kept by --function */
		return say(c, "a program with %u functions", sub->n_fdescs > 1 ? sub->n_fdescs : sub->n_functions);
	if (!field_at(c->s->root, MODEL_PROGRAM, &prog) || !field_at(prog, 2, &fe) || !field_at(fe, 2, &fn) ||
	    !named_entry(fn, 1, name, &fin) || !pb_get_bytes(fin, 2, &vt) || !pb_get_bytes(vt, 1, &tt))
		return say(c, "the function input '%s' has no tensor type", name);
	size_t n_dims = pb_count(tt, 3);
	if (n_dims != rank)
		return say(c, "the function input '%s' has rank %zu, the description %u", name, n_dims, rank);
	struct al_buf t = {0};
	struct pb_iter it;
	struct pb_field f;
	size_t start;
	bool done = false;
	uint32_t k = 0;
	pb_iter_init(&it, tt);
	while ((start = it.pos, pb_next(&it, &f))) {
		if (f.num != 3) {
			ali_buf_put(&t, tt.p + start, it.pos - start);
			continue;
		}
		/* a constant dimension must already be the one asked for */
		al_span cst;
		uint64_t size;
		if (pb_get_bytes(f.data, 1, &cst) && pb_get_varint(cst, 1, &size) && (int64_t)size != dims[k]) {
			ali_buf_free(&t);
			return say(c, "the function input '%s' fixes axis %u to %llu", name, k,
				   (unsigned long long)size);
		}
		k++;
		if (done)
			continue;
		done = true;
		for (uint32_t i = 0; i < rank; i++) { /* Dimension{constant = 1 {size = 1}} */
			struct al_buf sz = {0}, d = {0};
			ali_buf_uint(&sz, 1, (uint64_t)dims[i]);
			ali_buf_len(&d, 1, sz.p, sz.n);
			ali_buf_len(&t, 3, d.p, d.n);
			t.failed |= sz.failed || d.failed;
			ali_buf_free(&sz);
			ali_buf_free(&d);
		}
	}
	enum al_status st = t.failed ? AL_E_NOMEM : ali_splice_replace(c->s->sp, tt, tt.p, tt.n, t.p, t.n);
	ali_buf_free(&t);
	if (st != AL_OK)
		return say(c, "the function input could not be rewritten (%s)", al_status_str(st));
	return true;
}

/* The common part: the feature, its ArrayFeatureType payload, the checks. */
static const struct al_feature *input_of(struct al_mil_pass *c, const struct al_input_shape *r,
					 al_span *arr)
{
	const struct al_submodel *sub = c->s->m->n_subs ? c->s->m->subs[0] : NULL;
	if (!sub || (sub->world != AL_WORLD_NN && sub->world != AL_WORLD_MIL))
		return say(c, "only NeuralNetwork and ML Program models (not %s)", sub ? sub->type : "?"), NULL;
	const struct al_feature *ft = NULL;
	for (uint32_t i = 0; i < sub->n_inputs; i++)
		if (sub->inputs[i].name && strcmp(sub->inputs[i].name, r->input) == 0)
			ft = &sub->inputs[i];
	if (!ft)
		return say(c, "the model has no input '%.80s'", r->input), NULL;
	if (ft->kind != AL_FEAT_MULTIARRAY)
		return say(c, "input '%.80s' is not a multi-array (%s): only multi-array inputs are done",
			   r->input, al_feature_kind_name(ft->kind)), NULL;
	if (ft->flex == AL_FLEX_NONE || (ft->flex == AL_FLEX_ENUMERATED && ft->n_shapes < 2))
		return say(c, "input '%.80s' has one fixed shape already", r->input), NULL;
	if (!ft->flex_values || !ft->rank || ft->rank > AL_MAX_RANK)
		return say(c, "input '%.80s': its flexible shapes could not be read", r->input), NULL;
	al_span desc, fd, ftype;
	if (!field_at(c->s->root, MODEL_DESC, &desc) || !named_entry(desc, DESC_INPUT, r->input, &fd) ||
	    !field_at(fd, 3, &ftype) || !field_at(ftype, FT_ARRAY, arr))
		return say(c, "input '%.80s' has no multi-array type in the file", r->input), NULL;
	return ft;
}

/* arr rebuilt: shape = dims, no range / enumeration, then (enum_n > 0) the
 * enumerated shapes; every other field (dataType, default values) copied. */
static bool rewrite_array(struct al_mil_pass *c, al_span arr, const int64_t *dims, uint32_t rank,
			  const int64_t *enums, uint32_t enum_n)
{
	struct al_buf a = {0};
	struct pb_iter it;
	struct pb_field f;
	size_t start;
	put_shape(&a, ARR_SHAPE, dims, rank);
	pb_iter_init(&it, arr);
	while ((start = it.pos, pb_next(&it, &f)))
		if (f.num != ARR_SHAPE && f.num != ARR_ENUM && f.num != ARR_RANGE)
			ali_buf_put(&a, arr.p + start, it.pos - start);
	if (enum_n) {
		struct al_buf e = {0};
		for (uint32_t k = 0; k < enum_n; k++) { /* EnumeratedShapes{shapes = 1 {shape = 1}} */
			struct al_buf s = {0};
			put_shape(&s, 1, enums + (size_t)k * rank, rank);
			ali_buf_len(&e, 1, s.p, s.n);
			e.failed |= s.failed;
			ali_buf_free(&s);
		}
		ali_buf_len(&a, ARR_ENUM, e.p, e.n);
		a.failed |= e.failed;
		ali_buf_free(&e);
	}
	enum al_status st = a.failed ? AL_E_NOMEM : ali_splice_replace(c->s->sp, arr, arr.p, arr.n, a.p, a.n);
	ali_buf_free(&a);
	if (st != AL_OK)
		return say(c, "the input's type could not be rewritten (%s)", al_status_str(st));
	return true;
}

bool ali_pass_input_shape(struct al_mil_pass *c, const struct al_input_shape *r)
{
	al_span arr;
	const struct al_feature *ft = input_of(c, r, &arr);
	if (!ft)
		return false;
	const int64_t *dims = r->use_default ? ft->shape : r->dims;
	if (r->use_default && !ft->shape)
		return say(c, "input '%.80s' has no default shape", r->input);
	if (!r->use_default && r->rank != ft->rank)
		return say(c, "%u dimensions given, input '%.80s' has rank %u", r->rank, r->input, ft->rank);
	if (!accepted(c, ft, dims))
		return false;
	char b[96];
	fmt_dims(dims, ft->rank, b, sizeof b);
	bool mil = c->s->m->subs[0]->world == AL_WORLD_MIL;
	/* the program's input type first: it can refuse (a constant axis that differs) */
	if (mil && !program_dims(c, r->input, dims, ft->rank))
		return false;
	if (!rewrite_array(c, arr, dims, ft->rank, NULL, 0))
		return false;
	snprintf(c->after, sizeof c->after, "input '%.40s' fixed to %.50s%s", r->input, b,
		 mil ? " (description and function input)" : "");
	return true;
}

bool ali_pass_input_enum(struct al_mil_pass *c, const struct al_input_shape *r)
{
	al_span arr;
	const struct al_feature *ft = input_of(c, r, &arr);
	if (!ft)
		return false;
	if (r->rank != ft->rank)
		return say(c, "shapes of %u dimensions given, input '%.80s' has rank %u", r->rank, r->input,
			   ft->rank);
	if (r->n_shapes < 1 || r->n_shapes > MAX_ENUM)
		return say(c, "%u shapes: Core ML takes 1 to %d enumerated shapes", r->n_shapes, MAX_ENUM);
	for (uint32_t k = 0; k < r->n_shapes; k++) {
		const int64_t *s = r->dims + (size_t)k * r->rank;
		if (!accepted(c, ft, s))
			return false;
		for (uint32_t j = 0; j < k; j++)
			if (memcmp(r->dims + (size_t)j * r->rank, s, r->rank * sizeof *s) == 0)
				return say(c, "shape %u is given twice", k + 1);
	}
	/* the function input keeps its unknown dimensions (coremltools writes an
	 * enumerated input the same way: only the description lists the shapes) */
	if (!rewrite_array(c, arr, r->dims, r->rank, r->dims, r->n_shapes))
		return false;
	char b[96];
	fmt_dims(r->dims, r->rank, b, sizeof b);
	snprintf(c->after, sizeof c->after, "input '%.40s': %u enumerated shape%s (default %.50s)", r->input,
		 r->n_shapes, r->n_shapes == 1 ? "" : "s", b);
	return true;
}
