/* SPDX-License-Identifier: MIT */
/* model_input_shape.c: the model-level passes input-fixed-shape and
 * input-enumerated-shapes (their rows in surgery.c's pass table, run by its
 * plan_model once per --shape / --enumerate request; docs/surgery.md
 * "Model-level fixes"). They edit the model description (and an ML Program's
 * function inputs), not layers.
 *
 *   input-fixed-shape        Match:   --shape NAME=D1,D2,... / NAME=default of a flexible
 *                                     multi-array or image input (shape range / enumerated
 *                                     shapes, imageSizeRange / enumeratedSizes), a shape it
 *                                     accepts.
 *                            Rewrite: the input's type -> that one fixed shape.
 *   input-enumerated-shapes  Match:   --enumerate NAME=S1;S2;... of a range-flexible input,
 *                                     1-128 distinct shapes inside its range.
 *                            Rewrite: the shape range -> the enumerated shapes (first = default).
 *
 * Proves (exact): both only narrow the shapes a model accepts to ones it
 * accepted before: every layer's bytes stay the same, so on the shapes kept the
 * model computes what it did. The rule they answer is ANE040 (a shape range
 * keeps the whole model off the ANE; evidence R2, catalog S2-S4). */
#include "passes.h"
#include "coreml_fields.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* the fields of the model description and of an ML Program's function inputs
 * these passes edit (src/format/coreml_fields.h) */
enum {
	MODEL_DESC = AL_PB_Model_description,
	MODEL_PROGRAM = AL_PB_Model_mlProgram,
	DESC_INPUT = AL_PB_ModelDescription_input,
	FT_IMAGE = AL_PB_FeatureType_imageType,
	FT_ARRAY = AL_PB_FeatureType_multiArrayType,
};
enum {
	IMG_WIDTH = AL_PB_ImageFeatureType_width,
	IMG_HEIGHT = AL_PB_ImageFeatureType_height,
	IMG_ENUM = AL_PB_ImageFeatureType_enumeratedSizes,
	IMG_RANGE = AL_PB_ImageFeatureType_imageSizeRange,
};
enum {
	ARR_SHAPE = AL_PB_ArrayFeatureType_shape,
	ARR_ENUM = AL_PB_ArrayFeatureType_enumeratedShapes,
	ARR_RANGE = AL_PB_ArrayFeatureType_shapeRange,
};
#define MAX_ENUM 128 /* coremltools flexible-inputs: at most 128 enumerated shapes (catalog S2) */

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
			return ali_mil_say(c, "shape %s: every dimension must be at least 1", b);
	if (ft->flex == AL_FLEX_RANGE) {
		for (uint32_t i = 0; i < ft->rank; i++) {
			int64_t lo = ft->flex_values[2 * i], hi = ft->flex_values[2 * i + 1];
			if (dims[i] < lo || (hi >= 0 && dims[i] > hi))
				return ali_mil_say(c, "shape %s: axis %u is outside the input's range %lld..%lld", b, i,
					   (long long)lo, (long long)hi);
		}
		return true;
	}
	for (uint32_t k = 0; k < ft->n_shapes; k++)
		if (memcmp(ft->flex_values + (size_t)k * ft->rank, dims, ft->rank * sizeof *dims) == 0)
			return true;
	return ali_mil_say(c, "shape %s is not one of the input's %u enumerated shapes", b, ft->n_shapes);
}

static void put_shape(struct al_buf *b, uint32_t field, const int64_t *dims, uint32_t rank)
{
	uint64_t v[AL_MAX_RANK];
	for (uint32_t i = 0; i < rank; i++)
		v[i] = (uint64_t)dims[i];
	ali_buf_packed(b, field, v, rank);
}

/* The ML Program function input `name`'s TensorType with every dimension
 * constant: its last `rank` axes dims, the ones before them (an image input's
 * batch and channels before [H, W]) the constants they are already; its other
 * fields copied in order. */
static bool program_dims(struct al_mil_pass *c, const char *name, const int64_t *dims, uint32_t rank,
			 bool image)
{
	al_span prog, fe, fn, fin, vt, tt;
	const struct al_submodel *sub = c->s->m->subs[0];
	if (sub->n_functions != 1 || sub->n_fdescs > 1) /* also one kept by --function */
		return ali_mil_say(c, "a program with %u functions", sub->n_fdescs > 1 ? sub->n_fdescs : sub->n_functions);
	if (!ali_pb_first(c->s->root, MODEL_PROGRAM, &prog, NULL, NULL) || !ali_pb_first(prog, AL_PB_Program_functions, &fe, NULL, NULL) ||
	    !ali_pb_first(fe, PB_MAP_VALUE, &fn, NULL, NULL) ||
	    !ali_pb_named(fn, AL_PB_Function_inputs, name, &fin) || !pb_get_bytes(fin, AL_PB_NamedValueType_type, &vt) ||
	    !pb_get_bytes(vt, AL_PB_ValueType_tensorType, &tt))
		return ali_mil_say(c, "the function input '%s' has no tensor type", name);
	size_t n_dims = pb_count(tt, AL_PB_TensorType_dimensions), lead = n_dims - rank;
	if (n_dims < rank || n_dims > AL_MAX_RANK || (!image && n_dims != rank))
		return ali_mil_say(c, "the function input '%s' has rank %zu, the description %u", name, n_dims, rank);
	int64_t all[AL_MAX_RANK];
	struct al_buf t = {0};
	struct pb_iter it;
	struct pb_field f;
	size_t start;
	uint32_t k = 0;
	pb_iter_init(&it, tt);
	while ((start = it.pos, pb_next(&it, &f))) {
		if (f.num != AL_PB_TensorType_dimensions) {
			ali_buf_put(&t, tt.p + start, it.pos - start);
			continue;
		}
		/* a constant dimension must already be the one asked for; one before
		 * the given axes must be constant */
		al_span cst;
		uint64_t size;
		bool is_const = pb_get_bytes(f.data, AL_PB_Dimension_constant, &cst) &&
				pb_get_varint(cst, AL_PB_Dimension_ConstantDimension_size, &size) && size <= INT32_MAX;
		if (k < lead && !is_const) {
			ali_buf_free(&t);
			return ali_mil_say(c, "the function input '%s' has a flexible axis %u before [H, W]", name, k);
		}
		all[k] = k < lead ? (int64_t)size : dims[k - lead];
		if (is_const && (int64_t)size != all[k]) {
			ali_buf_free(&t);
			return ali_mil_say(c, "the function input '%s' fixes axis %u to %llu", name, k,
				   (unsigned long long)size);
		}
		k++;
		if (k < n_dims)
			continue;
		for (uint32_t i = 0; i < n_dims; i++) { /* Dimension{constant = 1 {size = 1}} */
			struct al_buf sz = {0}, d = {0};
			ali_buf_uint(&sz, AL_PB_Dimension_ConstantDimension_size, (uint64_t)all[i]);
			ali_buf_len(&d, AL_PB_Dimension_constant, sz.p, sz.n);
			ali_buf_len(&t, AL_PB_TensorType_dimensions, d.p, d.n);
			t.failed |= sz.failed || d.failed;
			ali_buf_free(&sz);
			ali_buf_free(&d);
		}
	}
	enum al_status st = t.failed ? AL_E_NOMEM : ali_splice_replace(c->s->sp, tt, tt.p, tt.n, t.p, t.n);
	ali_buf_free(&t);
	if (st != AL_OK)
		return ali_mil_say(c, "the function input could not be rewritten (%s)", al_status_str(st));
	return true;
}

/* The common part: the feature, its ArrayFeatureType (or ImageFeatureType)
 * payload, the checks. An image's shape is [H, W]. */
static const struct al_feature *input_of(struct al_mil_pass *c, const struct al_input_shape *r,
					 al_span *arr)
{
	const struct al_submodel *sub = c->s->m->n_subs ? c->s->m->subs[0] : NULL;
	if (!sub || (sub->world != AL_WORLD_NN && sub->world != AL_WORLD_MIL))
		return ali_mil_say(c, "only NeuralNetwork and ML Program models (not %s)", sub ? sub->type : "?"), NULL;
	const struct al_feature *ft = NULL;
	for (uint32_t i = 0; i < sub->n_inputs; i++)
		if (sub->inputs[i].name && strcmp(sub->inputs[i].name, r->input) == 0)
			ft = &sub->inputs[i];
	if (!ft)
		return ali_mil_say(c, "the model has no input '%.80s'", r->input), NULL;
	if (ft->kind != AL_FEAT_MULTIARRAY && ft->kind != AL_FEAT_IMAGE)
		return ali_mil_say(c, "input '%.80s' is not a multi-array or an image (%s)", r->input,
				   al_feature_kind_name(ft->kind)), NULL;
	if (ft->flex == AL_FLEX_NONE || (ft->flex == AL_FLEX_ENUMERATED && ft->n_shapes < 2))
		return ali_mil_say(c, "input '%.80s' has one fixed shape already", r->input), NULL;
	if (!ft->flex_values || !ft->rank || ft->rank > AL_MAX_RANK)
		return ali_mil_say(c, "input '%.80s': its flexible shapes could not be read", r->input), NULL;
	al_span desc, fd, ftype;
	if (!ali_pb_first(c->s->root, MODEL_DESC, &desc, NULL, NULL) || !ali_pb_named(desc, DESC_INPUT, r->input, &fd) ||
	    !ali_pb_first(fd, AL_PB_FeatureDescription_type, &ftype, NULL, NULL) ||
	    !ali_pb_first(ftype, ft->kind == AL_FEAT_IMAGE ? FT_IMAGE : FT_ARRAY, arr, NULL, NULL))
		return ali_mil_say(c, "input '%.80s' has no %s type in the file", r->input,
				   al_feature_kind_name(ft->kind)), NULL;
	return ft;
}

/* The input type message old replaced by the one built in a (freed). */
static bool replace_type(struct al_mil_pass *c, al_span old, struct al_buf *a)
{
	enum al_status st = a->failed ? AL_E_NOMEM : ali_splice_replace(c->s->sp, old, old.p, old.n, a->p, a->n);
	ali_buf_free(a);
	if (st != AL_OK)
		return ali_mil_say(c, "the input's type could not be rewritten (%s)", al_status_str(st));
	return true;
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
			put_shape(&s, AL_PB_ArrayFeatureType_Shape_shape, enums + (size_t)k * rank, rank);
			ali_buf_len(&e, AL_PB_ArrayFeatureType_EnumeratedShapes_shapes, s.p, s.n);
			e.failed |= s.failed;
			ali_buf_free(&s);
		}
		ali_buf_len(&a, ARR_ENUM, e.p, e.n);
		a.failed |= e.failed;
		ali_buf_free(&e);
	}
	return replace_type(c, arr, &a);
}

/* img (an ImageFeatureType) rebuilt: width and height = dims [H, W], no size
 * range / enumeration, then (enum_n > 0) the enumerated sizes; colorSpace and
 * every other field copied. */
static bool rewrite_image(struct al_mil_pass *c, al_span img, const int64_t *dims, const int64_t *enums,
			  uint32_t enum_n)
{
	struct al_buf a = {0};
	struct pb_iter it;
	struct pb_field f;
	size_t start;
	ali_buf_uint(&a, IMG_WIDTH, (uint64_t)dims[1]);
	ali_buf_uint(&a, IMG_HEIGHT, (uint64_t)dims[0]);
	pb_iter_init(&it, img);
	while ((start = it.pos, pb_next(&it, &f)))
		if (f.num != IMG_WIDTH && f.num != IMG_HEIGHT && f.num != IMG_ENUM && f.num != IMG_RANGE)
			ali_buf_put(&a, img.p + start, it.pos - start);
	if (enum_n) {
		struct al_buf e = {0};
		for (uint32_t k = 0; k < enum_n; k++) { /* EnumeratedSizes{sizes = 1 {width = 1, height = 2}} */
			struct al_buf sz = {0};
			ali_buf_uint(&sz, AL_PB_ImageFeatureType_ImageSize_width, (uint64_t)enums[2 * k + 1]);
			ali_buf_uint(&sz, AL_PB_ImageFeatureType_ImageSize_height, (uint64_t)enums[2 * k]);
			ali_buf_len(&e, AL_PB_ImageFeatureType_EnumeratedImageSizes_sizes, sz.p, sz.n);
			e.failed |= sz.failed;
			ali_buf_free(&sz);
		}
		ali_buf_len(&a, IMG_ENUM, e.p, e.n);
		a.failed |= e.failed;
		ali_buf_free(&e);
	}
	return replace_type(c, img, &a);
}

/* The description's type of ft rewritten (see rewrite_array / rewrite_image). */
static bool rewrite_type(struct al_mil_pass *c, const struct al_feature *ft, al_span t, const int64_t *dims,
			 const int64_t *enums, uint32_t enum_n)
{
	if (ft->kind == AL_FEAT_IMAGE)
		return rewrite_image(c, t, dims, enums, enum_n);
	return rewrite_array(c, t, dims, ft->rank, enums, enum_n);
}

bool ali_pass_input_shape(struct al_mil_pass *c, const struct al_input_shape *r)
{
	al_span arr;
	const struct al_feature *ft = input_of(c, r, &arr);
	if (!ft)
		return false;
	const int64_t *dims = r->use_default ? ft->shape : r->dims;
	if (r->use_default && !ft->shape)
		return ali_mil_say(c, "input '%.80s' has no default shape", r->input);
	if (!r->use_default && r->rank != ft->rank)
		return ali_mil_say(c, "%u dimensions given, input '%.80s' has rank %u", r->rank, r->input, ft->rank);
	if (!accepted(c, ft, dims))
		return false;
	char b[96];
	fmt_dims(dims, ft->rank, b, sizeof b);
	bool mil = c->s->m->subs[0]->world == AL_WORLD_MIL;
	/* the program's input type first: it can refuse (a constant axis that differs) */
	bool image = ft->kind == AL_FEAT_IMAGE;
	if (mil && !program_dims(c, r->input, dims, ft->rank, image))
		return false;
	if (!rewrite_type(c, ft, arr, dims, NULL, 0))
		return false;
	snprintf(c->after, sizeof c->after, "%s '%.40s' fixed to %.50s%s", image ? "image input" : "input",
		 r->input, b, mil ? " (description and function input)" : "");
	return true;
}

bool ali_pass_input_enum(struct al_mil_pass *c, const struct al_input_shape *r)
{
	al_span arr;
	const struct al_feature *ft = input_of(c, r, &arr);
	if (!ft)
		return false;
	if (r->rank != ft->rank)
		return ali_mil_say(c, "shapes of %u dimensions given, input '%.80s' has rank %u", r->rank, r->input,
			   ft->rank);
	if (r->n_shapes < 1 || r->n_shapes > MAX_ENUM)
		return ali_mil_say(c, "%u shapes: Core ML takes 1 to %d enumerated shapes", r->n_shapes, MAX_ENUM);
	for (uint32_t k = 0; k < r->n_shapes; k++) {
		const int64_t *s = r->dims + (size_t)k * r->rank;
		if (!accepted(c, ft, s))
			return false;
		for (uint32_t j = 0; j < k; j++)
			if (memcmp(r->dims + (size_t)j * r->rank, s, r->rank * sizeof *s) == 0)
				return ali_mil_say(c, "shape %u is given twice", k + 1);
	}
	/* the function input keeps its unknown dimensions (coremltools writes an
	 * enumerated input the same way: only the description lists the shapes) */
	if (!rewrite_type(c, ft, arr, r->dims, r->dims, r->n_shapes))
		return false;
	char b[96];
	fmt_dims(r->dims, r->rank, b, sizeof b);
	snprintf(c->after, sizeof c->after, "input '%.40s': %u enumerated shape%s (default %.50s)", r->input,
		 r->n_shapes, r->n_shapes == 1 ? "" : "s", b);
	return true;
}
