/* SPDX-License-Identifier: MIT */
/* mlmodel.c: one serialized CoreML.Specification.Model message -> al_submodel(s).
 * Reads the type, the description (features, metadata), NeuralNetwork layers with
 * branch/loop bodies as nested graphs, pipeline stages (recursively) and NN weight
 * byte counts. Never decodes or copies weights, only names; ML Programs go to mil.c,
 * and other layer params are only walked for wire errors (the rules read them).
 */
#include "model.h"

#include <string.h>

/* ================================================================ context */

/* A field path kept on the stack as a chain from the innermost element out;
 * rendered only when a diagnostic needs it. index -1 = not a repeated element. */
struct where {
	const struct where *up;
	const char *name;
	long index;
};

#define WHERE_MAX 512 /* elements rendered; nesting is bounded well below this */

struct ctx {
	struct al_model *m;
	al_diags *d;
	const char *file;    /* arena copy, shared by every sub-model */
	const uint8_t *base; /* first byte of the file: offsets are relative to it */
	size_t size;         /* bytes in the file */
	const char *node;    /* layer being read, for diagnostics; NULL outside layers */
};

/* Field numbers to names, for field paths in diagnostics. Ends with {0, NULL}. */
struct field_name {
	uint32_t num;
	const char *name;
};

static const struct field_name model_fields[] = {
	{1, "specificationVersion"}, {2, "description"}, {10, "isUpdatable"},
	/* oneof Type */
#define AL_MODEL(name, field) {field, #name},
#include "model_types.def"
#undef AL_MODEL
	{0, NULL},
};
#define MODEL_TYPE_MIN 200 /* Model fields >= this are members of oneof Type */

static const struct field_name description_fields[] = {
	{1, "input"}, {10, "output"}, {11, "predictedFeatureName"},
	{12, "predictedProbabilitiesName"}, {13, "state"}, {20, "functions"},
	{21, "defaultFunctionName"}, {50, "trainingInput"}, {100, "metadata"}, {0, NULL},
};
static const struct field_name function_fields[] = {
	{1, "name"}, {2, "input"}, {3, "output"}, {4, "predictedFeatureName"},
	{5, "predictedProbabilitiesName"}, {6, "state"}, {0, NULL},
};
static const struct field_name metadata_fields[] = {
	{1, "shortDescription"}, {2, "versionString"}, {3, "author"}, {4, "license"},
	{100, "userDefined"}, {0, NULL},
};
static const struct field_name map_entry_fields[] = {{1, "key"}, {2, "value"}, {0, NULL}};
static const struct field_name feature_fields[] = {
	{1, "name"}, {2, "shortDescription"}, {3, "type"}, {0, NULL},
};
static const struct field_name feature_type_fields[] = {
	{1, "int64Type"}, {2, "doubleType"}, {3, "stringType"}, {4, "imageType"},
	{5, "multiArrayType"}, {6, "dictionaryType"}, {7, "sequenceType"}, {8, "stateType"},
	{1000, "isOptional"}, {0, NULL},
};
static const struct field_name array_type_fields[] = {
	{1, "shape"}, {2, "dataType"}, {21, "enumeratedShapes"}, {31, "shapeRange"},
	{41, "intDefaultValue"}, {51, "floatDefaultValue"}, {61, "doubleDefaultValue"}, {0, NULL},
};
static const struct field_name state_type_fields[] = {{1, "arrayType"}, {0, NULL}};
static const struct field_name shapes_fields[] = {{1, "shapes"}, {0, NULL}};
static const struct field_name shape_fields[] = {{1, "shape"}, {0, NULL}};
static const struct field_name size_ranges_fields[] = {{1, "sizeRanges"}, {0, NULL}};
static const struct field_name size_range_fields[] = {
	{1, "lowerBound"}, {2, "upperBound"}, {0, NULL},
};
static const struct field_name image_type_fields[] = {
	{1, "width"}, {2, "height"}, {3, "colorSpace"}, {21, "enumeratedSizes"},
	{31, "imageSizeRange"}, {0, NULL},
};
static const struct field_name image_sizes_fields[] = {{1, "sizes"}, {0, NULL}};
static const struct field_name image_size_fields[] = {{1, "width"}, {2, "height"}, {0, NULL}};
static const struct field_name image_range_fields[] = {
	{1, "widthRange"}, {2, "heightRange"}, {0, NULL},
};
static const struct field_name pipeline_holder_fields[] = {{1, "pipeline"}, {0, NULL}};
static const struct field_name pipeline_fields[] = {{1, "models"}, {2, "names"}, {0, NULL}};
/* NeuralNetwork, NeuralNetworkClassifier and NeuralNetworkRegressor share 1-10. */
static const struct field_name network_fields[] = {
	{1, "layers"}, {2, "preprocessing"}, {5, "arrayInputShapeMapping"},
	{6, "imageInputShapeMapping"}, {10, "updateParams"}, {100, "stringClassLabels"},
	{101, "int64ClassLabels"}, {200, "labelProbabilityLayerName"}, {0, NULL},
};
/* NeuralNetworkLayer; its oneof members (>= 100) come from ali_nn_kinds. */
static const struct field_name layer_fields[] = {
	{1, "name"}, {2, "input"}, {3, "output"}, {4, "inputTensor"}, {5, "outputTensor"},
	{10, "isUpdatable"}, {0, NULL},
};
#define LAYER_TYPE_MIN 100
static const struct field_name weight_params_fields[] = {
	{1, "floatValue"}, {2, "float16Value"}, {30, "rawValue"}, {31, "int8RawValue"},
	{40, "quantization"}, {50, "isUpdatable"}, {0, NULL},
};

static const char *lookup_name(const struct field_name *t, uint32_t num)
{
	for (; t && t->name; t++)
		if (t->num == num)
			return t->name;
	return NULL;
}

/* A field's name for a path: from the table, the NN layer table for layer
 * messages, or "#<num>" written into buf. */
static const char *field_label(const struct field_name *t, uint32_t num, char *buf, size_t cap)
{
	const char *s = lookup_name(t, num);
	if (!s && t == layer_fields) {
		int k = ali_nn_kind_by_field(num);
		s = k >= 0 ? ali_nn_kinds[k].name : NULL;
	}
	if (s)
		return s;
	snprintf(buf, cap, "#%u", num);
	return buf;
}

/* ================================================================ diagnostics */

/* Render the chain from the outermost element down to w. */
static void where_render(const struct where *w, char *buf, size_t cap)
{
	const struct where *chain[WHERE_MAX];
	size_t n = 0, len = 0;
	for (; w && n < WHERE_MAX; w = w->up)
		chain[n++] = w;
	buf[0] = '\0';
	while (n-- > 0 && len < cap) {
		const struct where *e = chain[n];
		int k = e->index >= 0
				? snprintf(buf + len, cap - len, "%s%s[%ld]", len ? "." : "", e->name, e->index)
				: snprintf(buf + len, cap - len, "%s%s", len ? "." : "", e->name);
		if (k < 0)
			break;
		len += (size_t)k;
	}
}

static uint64_t offset_of(const struct ctx *c, const uint8_t *p)
{
	return p ? (uint64_t)(p - c->base) : UINT64_MAX;
}

/* Add a diagnostic at byte `at` (NULL: none) and field path w. Returns
 * AL_E_FORMAT for errors, AL_OK otherwise, so callers can `return report(...)`. */
__attribute__((format(printf, 5, 6)))
static enum al_status report(struct ctx *c, enum al_severity sev, const uint8_t *at,
			     const struct where *w, const char *fmt, ...)
{
	char path[1024];
	where_render(w, path, sizeof path);
	va_list ap;
	va_start(ap, fmt);
	ali_diag_vadd(c->d, sev, c->file, offset_of(c, at), path[0] ? path : NULL, c->node, fmt, ap);
	va_end(ap);
	return sev == AL_SEV_ERROR ? AL_E_FORMAT : AL_OK;
}

/* Report the wire error that stopped `it`, naming the failing field with the
 * message's field table. */
static enum al_status wire_error(struct ctx *c, const struct pb_iter *it, const struct where *w,
				 const struct field_name *names)
{
	const uint8_t *p = it->msg.p;
	size_t n = it->msg.n, pos = it->err_pos;
	const uint8_t *at = p + pos;
	uint64_t tag;
	if (pb_varint(p, n, &pos, &tag) != PB_OK)
		return report(c, AL_SEV_ERROR, at, w, "%s (in a field tag)", pb_err_str(it->err));
	uint64_t num = tag >> 3;
	unsigned wt = (unsigned)(tag & 7);
	if (it->err == PB_ERR_FIELDNUM)
		return report(c, AL_SEV_ERROR, at, w, "invalid field number %llu",
			      (unsigned long long)num);
	char buf[24];
	struct where fw = {w, field_label(names, (uint32_t)num, buf, sizeof buf), -1};
	if (it->err == PB_ERR_WIRETYPE)
		return report(c, AL_SEV_ERROR, at, &fw, "invalid wire type %u", wt);
	if (it->err != PB_ERR_TRUNCATED)
		return report(c, AL_SEV_ERROR, at, &fw, "%s", pb_err_str(it->err));
	if (wt != PB_LEN) {
		const char *what = wt == PB_VARINT ? "varint" : wt == PB_FIXED32 ? "fixed32" : "fixed64";
		return report(c, AL_SEV_ERROR, at, &fw, "truncated field (its %s value is cut off)", what);
	}
	uint64_t len;
	if (pb_varint(p, n, &pos, &len) != PB_OK)
		return report(c, AL_SEV_ERROR, at, &fw, "truncated field (its length is cut off)");
	uint64_t in_file = c->size - offset_of(c, p + pos);
	if (len > in_file)
		return report(c, AL_SEV_ERROR, at, &fw,
			      "truncated field (length %llu runs past the end of the file)",
			      (unsigned long long)len);
	return report(c, AL_SEV_ERROR, at, &fw,
		      "truncated field (length %llu runs past the end of the enclosing message, "
		      "%zu bytes left)", (unsigned long long)len, n - pos);
}

/* ================================================================ small helpers */

static inline bool is(const struct pb_field *f, uint32_t num, enum pb_wire wire)
{
	return f->num == num && f->wire == wire;
}

/* A name or string field, cut at AL_MAX_NAME. NULL only when out of memory. */
static const char *copy_str(struct ctx *c, al_span s)
{
	if (s.n > AL_MAX_NAME)
		s.n = AL_MAX_NAME;
	return ali_arena_span_str(&c->m->arena, s);
}

/* count elements of `size` bytes; NULL for count 0 (not an error). */
static void *alloc_array(struct ctx *c, size_t count, size_t size)
{
	return count ? ali_arena_array(&c->m->arena, count, size) : NULL;
}

static bool oom(const struct ctx *c)
{
	return c->m->arena.failed;
}

/* Append the values of repeated int64 field f (one varint, or a packed run)
 * to out[0..max), counting all of them in *n. False if the packed run is bad. */
static bool push_varints(const struct pb_field *f, int64_t *out, size_t max, size_t *n)
{
	if (f->wire == PB_VARINT) {
		if (*n < max)
			out[*n] = (int64_t)f->u;
		(*n)++;
		return true;
	}
	size_t pos = 0;
	while (pos < f->data.n) {
		uint64_t v;
		if (pb_varint(f->data.p, f->data.n, &pos, &v) != PB_OK)
			return false;
		if (*n < max)
			out[*n] = (int64_t)v;
		(*n)++;
	}
	return true;
}

/* Repeated int64 field `num` of msg (packed or not) into out[0..max); *n gets
 * the number present, which may exceed max. */
static enum al_status read_int64s(struct ctx *c, al_span msg, uint32_t num, const struct where *w,
				  const struct field_name *names, int64_t *out, size_t max, size_t *n)
{
	struct pb_iter it;
	struct pb_field f;
	*n = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (f.num != num || (f.wire != PB_VARINT && f.wire != PB_LEN))
			continue;
		if (!push_varints(&f, out, max, n)) {
			struct where fw = {w, lookup_name(names, num), -1};
			return report(c, AL_SEV_ERROR, msg.p + f.start, &fw, "malformed packed varints");
		}
	}
	return it.err ? wire_error(c, &it, w, names) : AL_OK;
}

static int array_dtype(uint64_t v)
{
	switch (v) {
	case 65568: return AL_DT_FP32;
	case 65600: return AL_DT_FP64;
	case 131104: return AL_DT_INT32;
	case 131080: return AL_DT_INT8;
	case 65552: return AL_DT_FP16;
	}
	return AL_DT_UNKNOWN;
}

/* ================================================================ feature types */

/* SizeRange {lowerBound = 1 uint64, upperBound = 2 int64 (negative = unbounded)}. */
static enum al_status load_size_range(struct ctx *c, al_span msg, const struct where *w,
				      int64_t *lo, int64_t *hi)
{
	struct pb_iter it;
	struct pb_field f;
	*lo = 0;
	*hi = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (is(&f, 1, PB_VARINT))
			*lo = (int64_t)f.u;
		else if (is(&f, 2, PB_VARINT))
			*hi = (int64_t)f.u;
	}
	return it.err ? wire_error(c, &it, w, size_range_fields) : AL_OK;
}

/* ArrayFeatureType.enumeratedShapes: EnumeratedShapes {repeated Shape shapes = 1}.
 * Each shape is padded with -1 or cut to ft->rank; an empty default shape takes
 * the first enumerated shape (coremltools writes the default first). */
static enum al_status load_enumerated_shapes(struct ctx *c, struct al_feature *ft, al_span msg,
					     const struct where *w)
{
	struct pb_iter it;
	struct pb_field f;
	size_t count = 0;
	al_span first = {0};
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f))
		if (is(&f, 1, PB_LEN) && count++ == 0)
			first = f.data;
	if (it.err)
		return wire_error(c, &it, w, shapes_fields);
	ft->flex = AL_FLEX_ENUMERATED;
	ft->n_shapes = (uint32_t)count;
	if (count == 0)
		return AL_OK;

	int64_t dims[AL_MAX_RANK];
	size_t n;
	enum al_status st;
	if (ft->rank == 0) {
		struct where sw = {w, "shapes", 0};
		if ((st = read_int64s(c, first, 1, &sw, shape_fields, dims, AL_MAX_RANK, &n)))
			return st;
		ft->rank = (uint32_t)(n < AL_MAX_RANK ? n : AL_MAX_RANK);
		int64_t *shape = alloc_array(c, ft->rank, sizeof *shape);
		if (ft->rank && !shape)
			return AL_E_NOMEM;
		if (ft->rank)
			memcpy(shape, dims, ft->rank * sizeof *shape);
		ft->shape = shape;
	}
	if (ft->rank == 0)
		return AL_OK;
	int64_t *vals = alloc_array(c, count * ft->rank, sizeof *vals);
	if (!vals)
		return AL_E_NOMEM;
	size_t i = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f) && i < count) {
		if (!is(&f, 1, PB_LEN))
			continue;
		struct where sw = {w, "shapes", (long)i};
		if ((st = read_int64s(c, f.data, 1, &sw, shape_fields, dims, AL_MAX_RANK, &n)))
			return st;
		for (size_t k = 0; k < ft->rank; k++)
			vals[i * ft->rank + k] = k < n && k < AL_MAX_RANK ? dims[k] : -1;
		i++;
	}
	ft->flex_values = vals;
	return AL_OK;
}

/* ArrayFeatureType.shapeRange: ShapeRange {repeated SizeRange sizeRanges = 1}.
 * rank pairs; an axis without a range keeps its default size (or 0..unbounded),
 * and an empty default shape becomes rank unknown (-1) dims. */
static enum al_status load_shape_range(struct ctx *c, struct al_feature *ft, al_span msg,
				       const struct where *w)
{
	struct pb_iter it;
	struct pb_field f;
	size_t count = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f))
		if (is(&f, 1, PB_LEN))
			count++;
	if (it.err)
		return wire_error(c, &it, w, size_ranges_fields);
	ft->flex = AL_FLEX_RANGE;
	if (ft->rank == 0 && count > 0) {
		ft->rank = (uint32_t)(count < AL_MAX_RANK ? count : AL_MAX_RANK);
		int64_t *shape = alloc_array(c, ft->rank, sizeof *shape);
		if (!shape)
			return AL_E_NOMEM;
		for (uint32_t k = 0; k < ft->rank; k++)
			shape[k] = -1;
		ft->shape = shape;
	}
	if (ft->rank == 0)
		return AL_OK;
	int64_t *vals = alloc_array(c, 2 * (size_t)ft->rank, sizeof *vals);
	if (!vals)
		return AL_E_NOMEM;
	for (uint32_t k = 0; k < ft->rank; k++) {
		bool known = ft->shape[k] >= 0;
		vals[2 * k] = known ? ft->shape[k] : 0;
		vals[2 * k + 1] = known ? ft->shape[k] : -1;
	}
	size_t i = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f) && i < ft->rank) {
		if (!is(&f, 1, PB_LEN))
			continue;
		struct where rw = {w, "sizeRanges", (long)i};
		enum al_status st = load_size_range(c, f.data, &rw, &vals[2 * i], &vals[2 * i + 1]);
		if (st)
			return st;
		i++;
	}
	ft->flex_values = vals;
	return AL_OK;
}

/* ArrayFeatureType: shape = 1, dataType = 2, enumeratedShapes = 21 | shapeRange = 31. */
static enum al_status load_array_type(struct ctx *c, struct al_feature *ft, al_span msg,
				      const struct where *w)
{
	int64_t dims[AL_MAX_RANK];
	size_t n;
	enum al_status st = read_int64s(c, msg, 1, w, array_type_fields, dims, AL_MAX_RANK, &n);
	if (st)
		return st;
	if (n > AL_MAX_RANK) {
		report(c, AL_SEV_WARNING, msg.p, w, "shape has %zu dimensions; keeping the first %d",
		       n, AL_MAX_RANK);
		n = AL_MAX_RANK;
	}
	int64_t *shape = alloc_array(c, n, sizeof *shape);
	if (n && !shape)
		return AL_E_NOMEM;
	if (n)
		memcpy(shape, dims, n * sizeof *shape);
	ft->shape = shape;
	ft->rank = (uint32_t)n;

	struct pb_iter it;
	struct pb_field f;
	al_span flex = {0};
	uint32_t flex_field = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (is(&f, 2, PB_VARINT)) {
			ft->dtype = array_dtype(f.u);
		} else if (is(&f, 21, PB_LEN) || is(&f, 31, PB_LEN)) {
			flex = f.data; /* oneof ShapeFlexibility: the last one wins */
			flex_field = f.num;
		}
	}
	if (it.err)
		return wire_error(c, &it, w, array_type_fields);
	if (flex_field == 21) {
		struct where fw = {w, "enumeratedShapes", -1};
		return load_enumerated_shapes(c, ft, flex, &fw);
	}
	if (flex_field == 31) {
		struct where fw = {w, "shapeRange", -1};
		return load_shape_range(c, ft, flex, &fw);
	}
	return AL_OK;
}

/* ImageFeatureType.enumeratedSizes: {repeated ImageSize sizes = 1}, ImageSize
 * {width = 1, height = 2} -> (H, W) pairs. */
static enum al_status load_image_sizes(struct ctx *c, struct al_feature *ft, al_span msg,
				       const struct where *w)
{
	struct pb_iter it, jt;
	struct pb_field f, g;
	size_t count = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f))
		if (is(&f, 1, PB_LEN))
			count++;
	if (it.err)
		return wire_error(c, &it, w, image_sizes_fields);
	ft->flex = AL_FLEX_ENUMERATED;
	ft->n_shapes = (uint32_t)count;
	int64_t *vals = alloc_array(c, 2 * count, sizeof *vals);
	if (count && !vals)
		return AL_E_NOMEM;
	size_t i = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f) && i < count) {
		if (!is(&f, 1, PB_LEN))
			continue;
		int64_t wd = 0, ht = 0;
		pb_iter_init(&jt, f.data);
		while (pb_next(&jt, &g)) {
			if (is(&g, 1, PB_VARINT))
				wd = (int64_t)g.u;
			else if (is(&g, 2, PB_VARINT))
				ht = (int64_t)g.u;
		}
		if (jt.err) {
			struct where sw = {w, "sizes", (long)i};
			return wire_error(c, &jt, &sw, image_size_fields);
		}
		vals[2 * i] = ht;
		vals[2 * i + 1] = wd;
		i++;
	}
	ft->flex_values = vals;
	return AL_OK;
}

/* ImageFeatureType.imageSizeRange: {widthRange = 1, heightRange = 2} -> [hlo, hhi, wlo, whi]. */
static enum al_status load_image_range(struct ctx *c, struct al_feature *ft, al_span msg,
				       const struct where *w)
{
	struct pb_iter it;
	struct pb_field f;
	int64_t *vals = alloc_array(c, 4, sizeof *vals);
	if (!vals)
		return AL_E_NOMEM;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (!is(&f, 1, PB_LEN) && !is(&f, 2, PB_LEN))
			continue;
		struct where rw = {w, f.num == 1 ? "widthRange" : "heightRange", -1};
		size_t k = f.num == 1 ? 2 : 0;
		enum al_status st = load_size_range(c, f.data, &rw, &vals[k], &vals[k + 1]);
		if (st)
			return st;
	}
	if (it.err)
		return wire_error(c, &it, w, image_range_fields);
	ft->flex = AL_FLEX_RANGE;
	ft->flex_values = vals;
	return AL_OK;
}

/* ImageFeatureType: width = 1, height = 2, colorSpace = 3, enumeratedSizes = 21 |
 * imageSizeRange = 31. Shape is [H, W]; pixels are uint8 except GRAYSCALE_FLOAT16. */
static enum al_status load_image_type(struct ctx *c, struct al_feature *ft, al_span msg,
				      const struct where *w)
{
	struct pb_iter it;
	struct pb_field f;
	int64_t *shape = alloc_array(c, 2, sizeof *shape);
	if (!shape)
		return AL_E_NOMEM;
	al_span flex = {0};
	uint32_t flex_field = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (is(&f, 1, PB_VARINT)) {
			shape[1] = (int64_t)f.u;
		} else if (is(&f, 2, PB_VARINT)) {
			shape[0] = (int64_t)f.u;
		} else if (is(&f, 3, PB_VARINT)) {
			ft->color_space = (int)(int32_t)f.u;
		} else if (is(&f, 21, PB_LEN) || is(&f, 31, PB_LEN)) {
			flex = f.data;
			flex_field = f.num;
		}
	}
	if (it.err)
		return wire_error(c, &it, w, image_type_fields);
	ft->shape = shape;
	ft->rank = 2;
	ft->dtype = ft->color_space == 40 ? AL_DT_FP16 : AL_DT_UINT8;
	if (flex_field == 21) {
		struct where fw = {w, "enumeratedSizes", -1};
		return load_image_sizes(c, ft, flex, &fw);
	}
	if (flex_field == 31) {
		struct where fw = {w, "imageSizeRange", -1};
		return load_image_range(c, ft, flex, &fw);
	}
	return AL_OK;
}

/* FeatureType: oneof Type (1..8), isOptional = 1000. */
static enum al_status load_feature_type(struct ctx *c, struct al_feature *ft, al_span msg,
					const struct where *w)
{
	struct pb_iter it;
	struct pb_field f;
	al_span body = {0};
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (f.num >= 1 && f.num <= 8 && f.wire == PB_LEN) {
			ft->kind = (enum al_feature_kind)f.num; /* enum values follow the field numbers */
			body = f.data;
		} else if (is(&f, 1000, PB_VARINT)) {
			ft->optional = f.u != 0;
		}
	}
	if (it.err)
		return wire_error(c, &it, w, feature_type_fields);

	struct where bw = {w, lookup_name(feature_type_fields, (uint32_t)ft->kind), -1};
	switch (ft->kind) {
	case AL_FEAT_INT64:
		ft->dtype = AL_DT_INT64;
		return AL_OK;
	case AL_FEAT_DOUBLE:
		ft->dtype = AL_DT_FP64;
		return AL_OK;
	case AL_FEAT_STRING:
		ft->dtype = AL_DT_STRING;
		return AL_OK;
	case AL_FEAT_IMAGE:
		return load_image_type(c, ft, body, &bw);
	case AL_FEAT_MULTIARRAY:
		return load_array_type(c, ft, body, &bw);
	case AL_FEAT_STATE: {
		/* StateFeatureType {oneof Type {ArrayFeatureType arrayType = 1}} */
		al_span arr = {0};
		bool has = false;
		pb_iter_init(&it, body);
		while (pb_next(&it, &f))
			if (is(&f, 1, PB_LEN)) {
				arr = f.data;
				has = true;
			}
		if (it.err)
			return wire_error(c, &it, &bw, state_type_fields);
		struct where aw = {&bw, "arrayType", -1};
		return has ? load_array_type(c, ft, arr, &aw) : AL_OK;
	}
	case AL_FEAT_DICTIONARY:
	case AL_FEAT_SEQUENCE:
	case AL_FEAT_INVALID:
		break;
	}
	return AL_OK;
}

/* FeatureDescription: name = 1, shortDescription = 2, type = 3. */
static enum al_status load_feature(struct ctx *c, struct al_feature *ft, al_span msg,
				   const struct where *w)
{
	struct pb_iter it;
	struct pb_field f;
	al_span name = {0}, desc = {0}, type = {0};
	bool has_desc = false, has_type = false;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (is(&f, 1, PB_LEN)) {
			name = f.data;
		} else if (is(&f, 2, PB_LEN)) {
			desc = f.data;
			has_desc = true;
		} else if (is(&f, 3, PB_LEN)) {
			type = f.data;
			has_type = true;
		}
	}
	if (it.err)
		return wire_error(c, &it, w, feature_fields);
	ft->name = copy_str(c, name);
	ft->description = has_desc ? copy_str(c, desc) : NULL;
	if (oom(c))
		return AL_E_NOMEM;
	struct where tw = {w, "type", -1};
	return has_type ? load_feature_type(c, ft, type, &tw) : AL_OK;
}

/* The `count` occurrences of repeated FeatureDescription field `num` of msg
 * (counted by the caller) into a new array. */
static enum al_status load_features(struct ctx *c, al_span msg, uint32_t num, size_t count,
				    const struct where *w, const char *field,
				    struct al_feature **out, uint32_t *n_out)
{
	struct al_feature *fs = alloc_array(c, count, sizeof *fs);
	if (count && !fs)
		return AL_E_NOMEM;
	struct pb_iter it;
	struct pb_field f;
	size_t i = 0;
	pb_iter_init(&it, msg);
	while (i < count && pb_next(&it, &f)) {
		if (!is(&f, num, PB_LEN))
			continue;
		struct where fw = {w, field, (long)i};
		enum al_status st = load_feature(c, &fs[i], f.data, &fw);
		if (st)
			return st;
		i++;
	}
	*out = fs;
	*n_out = (uint32_t)count;
	return AL_OK;
}

/* ================================================================ description */

/* Feature names are keys: a model's inputs, outputs and states need distinct
 * names. Core ML refuses a repeat: its NeuralNetwork validator matches each
 * declared output to a blob once (a second 'y' is "not produced by any layer"),
 * refuses an output that only names an input and a layer writing an input's
 * name; its ML Program validator keys the main function's inputs by name, so a
 * repeated input no longer matches the model's count. Tables sized by the
 * distinct names (split's parts, run's outputs) rely on it. `nums`: the field
 * numbers of the inputs, outputs and states in msg (a ModelDescription or a
 * FunctionDescription); names compared as kept (AL_MAX_NAME bytes). */
static enum al_status check_feature_names(struct ctx *c, al_span msg, const uint32_t nums[3],
					  const struct where *w)
{
	static const char *const kinds[3] = {"input", "output", "state"};
	struct pb_iter it;
	struct pb_field f;
	size_t n = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f))
		n += f.wire == PB_LEN && (f.num == nums[0] || f.num == nums[1] || f.num == nums[2]);
	if (n < 2)
		return AL_OK;
	al_span *names = ali_malloc(n * sizeof *names); /* n <= msg.n / 2 */
	if (!names) {
		c->m->arena.failed = true;
		return AL_E_NOMEM;
	}
	size_t k = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f) && k < n) {
		if (f.wire != PB_LEN || (f.num != nums[0] && f.num != nums[1] && f.num != nums[2]))
			continue;
		struct pb_iter ft;
		struct pb_field g;
		al_span name = {0};
		pb_iter_init(&ft, f.data); /* the last name field wins, as load_feature reads it */
		while (pb_next(&ft, &g))
			if (is(&g, 1, PB_LEN))
				name = g.data;
		if (name.n > AL_MAX_NAME)
			name.n = AL_MAX_NAME;
		names[k++] = name;
	}
	size_t first, again;
	enum al_status st = ali_first_repeat(names, k, &first, &again);
	ali_free(names);
	if (st != AL_OK) {
		c->m->arena.failed = true;
		return st;
	}
	if (again == SIZE_MAX)
		return AL_OK;
	/* the kind and per-kind index of both, and where the repeat is */
	int kind[2] = {0, 0};
	long index[2] = {0, 0};
	const uint8_t *at = NULL;
	al_span name = {0};
	long per[3] = {0, 0, 0};
	k = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f) && k <= again) {
		int kk = f.wire != PB_LEN ? -1 : f.num == nums[0] ? 0 : f.num == nums[1] ? 1 : f.num == nums[2] ? 2 : -1;
		if (kk < 0)
			continue;
		if (k == first || k == again) {
			kind[k == again] = kk;
			index[k == again] = per[kk];
		}
		if (k == again) {
			at = msg.p + f.start;
			pb_get_bytes(f.data, 1, &name);
		}
		per[kk]++;
		k++;
	}
	struct where fw = {w, kinds[kind[1]], index[1]};
	int shown = name.n < 200 ? (int)name.n : 200;
	return report(c, AL_SEV_ERROR, at, &fw,
		      "%s '%.*s%s' repeats the name of %s %ld: a model's inputs, outputs and states "
		      "need distinct names (Core ML refuses the model)",
		      kinds[kind[1]], shown, (const char *)name.p, name.n > 200 ? "..." : "",
		      kinds[kind[0]], index[0]);
}

/* Metadata: shortDescription = 1, versionString = 2, author = 3, license = 4,
 * map<string, string> userDefined = 100. */
static enum al_status load_metadata(struct ctx *c, struct al_submodel *s, al_span msg,
				    const struct where *w)
{
	struct pb_iter it, jt;
	struct pb_field f, g;
	size_t n_kv = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (is(&f, 1, PB_LEN))
			s->short_description = copy_str(c, f.data);
		else if (is(&f, 2, PB_LEN))
			s->version_string = copy_str(c, f.data);
		else if (is(&f, 3, PB_LEN))
			s->author = copy_str(c, f.data);
		else if (is(&f, 4, PB_LEN))
			s->license = copy_str(c, f.data);
		else if (is(&f, 100, PB_LEN))
			n_kv++;
	}
	if (it.err)
		return wire_error(c, &it, w, metadata_fields);
	struct al_keyval *kv = alloc_array(c, n_kv, sizeof *kv);
	if (oom(c))
		return AL_E_NOMEM;
	size_t i = 0;
	pb_iter_init(&it, msg);
	while (i < n_kv && pb_next(&it, &f)) {
		if (!is(&f, 100, PB_LEN))
			continue;
		al_span key = {0}, value = {0};
		pb_iter_init(&jt, f.data);
		while (pb_next(&jt, &g)) {
			if (is(&g, 1, PB_LEN))
				key = g.data;
			else if (is(&g, 2, PB_LEN))
				value = g.data;
		}
		if (jt.err) {
			struct where ew = {w, "userDefined", (long)i};
			return wire_error(c, &jt, &ew, map_entry_fields);
		}
		kv[i].key = copy_str(c, key);
		kv[i].value = copy_str(c, value);
		i++;
	}
	if (oom(c))
		return AL_E_NOMEM;
	s->user_defined = kv;
	s->n_user_defined = (uint32_t)n_kv;
	return AL_OK;
}

/* FunctionDescription (spec 9 multi-function models): name = 1, input = 2,
 * output = 3, predictedFeatureName = 4, predictedProbabilitiesName = 5,
 * state = 6, into *fd. */
static enum al_status load_function(struct ctx *c, struct al_submodel *s, al_span msg,
				    const struct where *w, struct al_function_desc *fd)
{
	struct pb_iter it;
	struct pb_field f;
	size_t n_in = 0, n_out = 0, n_st = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (is(&f, 1, PB_LEN))
			fd->name = copy_str(c, f.data);
		else if (is(&f, 2, PB_LEN))
			n_in++;
		else if (is(&f, 3, PB_LEN))
			n_out++;
		else if (is(&f, 6, PB_LEN))
			n_st++;
		else if (is(&f, 4, PB_LEN) && !s->predicted_feature)
			s->predicted_feature = copy_str(c, f.data);
		else if (is(&f, 5, PB_LEN) && !s->predicted_probabilities)
			s->predicted_probabilities = copy_str(c, f.data);
	}
	if (it.err)
		return wire_error(c, &it, w, function_fields);
	if (oom(c))
		return AL_E_NOMEM;
	static const uint32_t names[3] = {2, 3, 6}; /* input, output, state */
	enum al_status st = check_feature_names(c, msg, names, w);
	if (!st)
		st = load_features(c, msg, 2, n_in, w, "input", &fd->inputs, &fd->n_inputs);
	if (!st)
		st = load_features(c, msg, 3, n_out, w, "output", &fd->outputs, &fd->n_outputs);
	if (!st)
		st = load_features(c, msg, 6, n_st, w, "state", &fd->states, &fd->n_states);
	return st;
}

/* ModelDescription: input = 1, output = 10, predictedFeatureName = 11,
 * predictedProbabilitiesName = 12, functions = 20, metadata = 100. */
static enum al_status load_description(struct ctx *c, struct al_submodel *s, al_span msg,
				       const struct where *w)
{
	struct pb_iter it;
	struct pb_field f;
	size_t n_in = 0, n_out = 0, n_fn = 0, n_st = 0;
	al_span meta = {0};
	bool has_meta = false;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (is(&f, 1, PB_LEN)) {
			n_in++;
		} else if (is(&f, 10, PB_LEN)) {
			n_out++;
		} else if (is(&f, 11, PB_LEN)) {
			s->predicted_feature = copy_str(c, f.data);
		} else if (is(&f, 12, PB_LEN)) {
			s->predicted_probabilities = copy_str(c, f.data);
		} else if (is(&f, 13, PB_LEN)) {
			n_st++;
		} else if (is(&f, 20, PB_LEN)) {
			n_fn++;
		} else if (is(&f, 21, PB_LEN)) {
			s->default_function = copy_str(c, f.data);
		} else if (is(&f, 100, PB_LEN)) {
			meta = f.data;
			has_meta = true;
		}
	}
	if (it.err)
		return wire_error(c, &it, w, description_fields);
	if (oom(c))
		return AL_E_NOMEM;
	static const uint32_t names[3] = {1, 10, 13}; /* input, output, state */
	enum al_status st = check_feature_names(c, msg, names, w);
	if (!st)
		st = load_features(c, msg, 1, n_in, w, "input", &s->inputs, &s->n_inputs);
	if (!st)
		st = load_features(c, msg, 10, n_out, w, "output", &s->outputs, &s->n_outputs);
	if (!st)
		st = load_features(c, msg, 13, n_st, w, "state", &s->states, &s->n_states);
	if (!st && n_fn > 0) {
		s->fdescs = alloc_array(c, n_fn, sizeof *s->fdescs);
		if (!s->fdescs)
			return AL_E_NOMEM;
		size_t i = 0;
		pb_iter_init(&it, msg);
		while (!st && i < n_fn && pb_next(&it, &f)) {
			if (!is(&f, 20, PB_LEN))
				continue;
			struct where fw = {w, "functions", (long)i};
			st = load_function(c, s, f.data, &fw, &s->fdescs[i]);
			i++;
		}
		s->n_fdescs = (uint32_t)i;
	}
	/* the default function's interface where the top level has none */
	if (!st && s->n_fdescs && (n_in == 0 || n_out == 0)) {
		const struct al_function_desc *fd = &s->fdescs[0];
		for (uint32_t i = 0; s->default_function && i < s->n_fdescs; i++)
			if (s->fdescs[i].name && strcmp(s->fdescs[i].name, s->default_function) == 0)
				fd = &s->fdescs[i];
		if (n_in == 0) {
			s->inputs = fd->inputs;
			s->n_inputs = fd->n_inputs;
		}
		if (n_out == 0) {
			s->outputs = fd->outputs;
			s->n_outputs = fd->n_outputs;
		}
		if (n_st == 0) {
			s->states = fd->states;
			s->n_states = fd->n_states;
		}
	}
	if (!st && has_meta) {
		struct where mw = {w, "metadata", -1};
		st = load_metadata(c, s, meta, &mw);
	}
	return st;
}

/* ================================================================ NeuralNetwork */

/* Where NN weights live: ali_nn_weight_sites (tables.c). A holder's fields that
 * are WeightParams, by holder (ended by {0, NULL}). */
static const struct field_name prelu_weights[] = {{1, "alpha"}, {0, NULL}};
static const struct field_name softplus_weights[] = {{1, "alpha"}, {2, "beta"}, {0, NULL}};
static const struct field_name lstm_weights[] = { /* LSTMWeightParams */
	{1, "inputGateWeightMatrix"}, {2, "forgetGateWeightMatrix"},
	{3, "blockInputWeightMatrix"}, {4, "outputGateWeightMatrix"},
	{20, "inputGateRecursionMatrix"}, {21, "forgetGateRecursionMatrix"},
	{22, "blockInputRecursionMatrix"}, {23, "outputGateRecursionMatrix"},
	{40, "inputGateBiasVector"}, {41, "forgetGateBiasVector"},
	{42, "blockInputBiasVector"}, {43, "outputGateBiasVector"},
	{60, "inputGatePeepholeVector"}, {61, "forgetGatePeepholeVector"},
	{62, "outputGatePeepholeVector"}, {0, NULL},
};
static const struct field_name *const holder_fields[] = {
	[AL_WH_NONE] = NULL, [AL_WH_PRELU] = prelu_weights, [AL_WH_SOFTPLUS] = softplus_weights,
	[AL_WH_LSTM] = lstm_weights,
};

/* Nested NeuralNetwork messages of branch and loop, by kind (ended by {0}). */
static const struct al_weight_site branch_nets[] = {
	{1, "ifBranch", AL_WH_NONE}, {2, "elseBranch", AL_WH_NONE}, {0}};
static const struct al_weight_site loop_nets[] = {
	{3, "conditionNetwork", AL_WH_NONE}, {4, "bodyNetwork", AL_WH_NONE}, {0}};
static const struct al_weight_site *const network_sites[AL_NNK_COUNT] = {
	[AL_NNK_branch] = branch_nets, [AL_NNK_loop] = loop_nets,
};
_Static_assert(sizeof network_sites / sizeof network_sites[0] == AL_NNK_COUNT,
	       "one row per NN kind");

/* The row for params field `field` in a per-kind site list (NULL: none). */
static const struct al_weight_site *find_site(const struct al_weight_site *t, uint32_t field)
{
	for (; t && t->field; t++)
		if (t->field == field)
			return t;
	return NULL;
}
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* WeightParams: floatValue = 1, float16Value = 2, rawValue = 30, int8RawValue = 31.
 * Only lengths are read. Unknown length-delimited fields count as `other`. */
static enum al_status load_weight_params(struct ctx *c, struct al_submodel *s, al_span msg,
					 const struct where *w)
{
	struct al_weight_stats *ws = &s->weights;
	struct pb_iter it;
	struct pb_field f;
	uint64_t bytes = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (is(&f, 1, PB_FIXED32)) {
			ws->fp32 += 4;
			bytes += 4;
			continue;
		}
		if (f.wire != PB_LEN || f.num == 40)
			continue;
		if (f.num == 1)
			ws->fp32 += f.data.n;
		else if (f.num == 2)
			ws->fp16 += f.data.n;
		else if (f.num == 30 || f.num == 31)
			ws->quantized += f.data.n;
		else
			ws->other += f.data.n;
		bytes += f.data.n;
	}
	if (it.err)
		return wire_error(c, &it, w, weight_params_fields);
	if (bytes)
		ws->n_blobs++;
	return AL_OK;
}

/* A message holding WeightParams at the fields of `inner` (PReLU, LSTMWeightParams). */
static enum al_status load_weight_holder(struct ctx *c, struct al_submodel *s, al_span msg,
					 const struct field_name *inner, const struct where *w)
{
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		const char *name = f.wire == PB_LEN ? lookup_name(inner, f.num) : NULL;
		if (!name)
			continue;
		struct where fw = {w, name, -1};
		enum al_status st = load_weight_params(c, s, f.data, &fw);
		if (st)
			return st;
	}
	return it.err ? wire_error(c, &it, w, inner) : AL_OK;
}

static enum al_status load_network(struct ctx *c, struct al_submodel *s, al_span msg,
				   const struct where *w, const char *prefix, struct al_graph *parent,
				   struct al_node *parent_node, int depth, struct al_graph **out);

/* A wire error in layer params: the fields named are the ones this file knows
 * (weights, nested networks); the rest get "#<num>". */
static enum al_status params_wire_error(struct ctx *c, const struct pb_iter *it, int kind,
					const struct where *w)
{
	struct field_name names[24];
	size_t k = 0;
	const struct al_weight_site *t;
	for (t = ali_nn_weight_sites[kind]; t && t->field && k + 1 < N_OF(names); t++)
		names[k++] = (struct field_name){t->field, t->name};
	for (t = network_sites[kind]; t && t->field && k + 1 < N_OF(names); t++)
		names[k++] = (struct field_name){t->field, t->name};
	names[k] = (struct field_name){0, NULL};
	return wire_error(c, it, w, names);
}

/* The params of one layer (e.g. ConvolutionLayerParams): walked once for wire
 * errors, weight sizes and nested networks; the rules read the rest. */
static enum al_status load_params(struct ctx *c, struct al_submodel *s, struct al_node *node,
				  int kind, al_span msg, const struct where *w)
{
	struct pb_iter it;
	struct pb_field f;
	enum al_status st;
	size_t n_sub = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (f.wire != PB_LEN)
			continue;
		if (find_site(network_sites[kind], f.num)) {
			n_sub++;
			continue;
		}
		const struct al_weight_site *ws = find_site(ali_nn_weight_sites[kind], f.num);
		if (!ws)
			continue;
		struct where fw = {w, ws->name, -1};
		st = ws->holder ? load_weight_holder(c, s, f.data, holder_fields[ws->holder], &fw)
			       : load_weight_params(c, s, f.data, &fw);
		if (st)
			return st;
	}
	if (it.err)
		return params_wire_error(c, &it, kind, w);
	if (n_sub == 0)
		return AL_OK;

	node->sub = alloc_array(c, n_sub, sizeof *node->sub);
	if (!node->sub)
		return AL_E_NOMEM;
	pb_iter_init(&it, msg);
	while (node->n_sub < n_sub && pb_next(&it, &f)) {
		const struct al_weight_site *ns =
			f.wire == PB_LEN ? find_site(network_sites[kind], f.num) : NULL;
		if (!ns)
			continue;
		const char *prefix = ali_arena_printf(&c->m->arena, "%s.%s.%s", node->path, node->type,
						     ns->name);
		if (!prefix)
			return AL_E_NOMEM;
		struct where nw = {w, ns->name, -1};
		struct al_graph *g;
		st = load_network(c, s, f.data, &nw, prefix, node->owner, node, node->owner->depth + 1, &g);
		if (st)
			return st;
		node->sub[node->n_sub++] = g;
	}
	return AL_OK;
}

/* Repeated string field `num` of msg (count known) into a new array of names. */
static enum al_status load_names(struct ctx *c, al_span msg, uint32_t num, size_t count,
				 const char ***out, uint32_t *n_out)
{
	const char **names = alloc_array(c, count, sizeof *names);
	if (count && !names)
		return AL_E_NOMEM;
	struct pb_iter it;
	struct pb_field f;
	size_t i = 0;
	pb_iter_init(&it, msg);
	while (i < count && pb_next(&it, &f))
		if (is(&f, num, PB_LEN))
			names[i++] = copy_str(c, f.data);
	if (oom(c))
		return AL_E_NOMEM;
	*out = names;
	*n_out = (uint32_t)count;
	return AL_OK;
}

/* NeuralNetworkLayer: name = 1, input = 2, output = 3, oneof layer (>= 100). */
static enum al_status load_layer(struct ctx *c, struct al_submodel *s, struct al_graph *g,
				 uint32_t index, al_span msg, const char *prefix, const struct where *w)
{
	struct al_node *node = &g->nodes[index];
	struct pb_iter it;
	struct pb_field f;
	size_t n_in = 0, n_out = 0;
	al_span name = {0}, params = {0};
	uint32_t type = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (is(&f, 1, PB_LEN))
			name = f.data;
		else if (is(&f, 2, PB_LEN))
			n_in++;
		else if (is(&f, 3, PB_LEN))
			n_out++;
		else if (f.num >= LAYER_TYPE_MIN && f.wire == PB_LEN) {
			type = f.num; /* oneof layer: the last one wins */
			params = f.data;
		}
	}
	node->name = copy_str(c, name);
	if (!node->name)
		return AL_E_NOMEM;
	const char *outer_node = c->node;
	c->node = node->name;
	enum al_status st = it.err ? wire_error(c, &it, w, layer_fields) : AL_OK;
	if (st)
		goto out;

	node->index = index;
	node->owner = g;
	node->offset = offset_of(c, msg.p);
	node->path = ali_arena_printf(&c->m->arena, "%s.layers[%u]", prefix, index);
	node->kind = type ? ali_nn_kind_by_field(type) : -1;
	if (node->kind >= 0)
		node->type = ali_nn_kinds[node->kind].name;
	else if (type)
		node->type = ali_arena_printf(&c->m->arena, "unknown(%u)", type);
	else
		node->type = "none";
	struct al_node_src *src = ali_arena_alloc(&c->m->arena, sizeof *src);
	if (!node->path || !node->type || !src) {
		st = AL_E_NOMEM;
		goto out;
	}
	src->msg = msg;
	src->params = params;
	src->sub = s;
	node->priv = src;
	if ((st = load_names(c, msg, 2, n_in, &node->inputs, &node->n_inputs)) ||
	    (st = load_names(c, msg, 3, n_out, &node->outputs, &node->n_outputs)))
		goto out;

	if (!type) {
		/* Core ML's validator rejects a layer without its oneof; so do we, which
		 * also stops a file of empty layers from passing as "all on the ANE". */
		st = report(c, AL_SEV_ERROR, msg.p, w, "layer has no type");
	} else {
		struct where tw = {w, node->type, -1};
		if (node->kind < 0)
			report(c, AL_SEV_WARNING, params.p, &tw, "unknown layer type (field %u)", type);
		else
			st = load_params(c, s, node, node->kind, params, &tw);
	}
out:
	c->node = outer_node;
	return st;
}

/* NeuralNetwork / NeuralNetworkClassifier / NeuralNetworkRegressor: layers = 1,
 * arrayInputShapeMapping = 5, imageInputShapeMapping = 6 (read for the top
 * network only). `prefix` is the path of this network, e.g.
 * "neuralNetwork" or "neuralNetwork.layers[4].loop.bodyNetwork". */
static enum al_status load_network(struct ctx *c, struct al_submodel *s, al_span msg,
				   const struct where *w, const char *prefix, struct al_graph *parent,
				   struct al_node *parent_node, int depth, struct al_graph **out)
{
	if (depth > AL_MAX_DEPTH)
		return report(c, AL_SEV_ERROR, msg.p, w, "nesting deeper than %d", AL_MAX_DEPTH);
	struct pb_iter it;
	struct pb_field f;
	size_t n = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (is(&f, 1, PB_LEN)) {
			if (++n % 16 == 0)
				ali_model_trim(c->m); /* counting touches every layer's tag */
		} else if (depth == 0 && is(&f, 5, PB_VARINT))
			s->array_mapping = (int)(int32_t)f.u;
		else if (depth == 0 && is(&f, 6, PB_VARINT))
			s->image_mapping = (int)(int32_t)f.u;
	}
	if (it.err)
		return wire_error(c, &it, w, network_fields);

	if (!ali_model_reserve_nodes(c->m, n))
		return report(c, AL_SEV_ERROR, msg.p, w, "more than %u layers in this file (anelint's limit)",
			      AL_MAX_NODES);
	struct al_graph *g = ali_arena_alloc(&c->m->arena, sizeof *g);
	if (!g)
		return AL_E_NOMEM;
	/* block: the prefix without the model type, "" for the top network */
	size_t tl = strlen(s->type);
	g->block = strlen(prefix) > tl ? prefix + tl + 1 : "";
	g->parent = parent;
	g->parent_node = parent_node;
	g->depth = depth;
	g->nodes = alloc_array(c, n, sizeof *g->nodes);
	if (n && !g->nodes)
		return AL_E_NOMEM;
	g->n_nodes = (uint32_t)n;
	*out = g;

	uint32_t i = 0;
	pb_iter_init(&it, msg);
	while (i < n && pb_next(&it, &f)) {
		if (!is(&f, 1, PB_LEN))
			continue;
		struct where lw = {w, "layers", (long)i};
		enum al_status st = load_layer(c, s, g, i, f.data, prefix, &lw);
		if (st)
			return st;
		if (++i % 8 == 0)
			ali_model_trim(c->m); /* see core.c: keep weight pages from piling up */
	}
	return AL_OK;
}

static enum al_status load_nn(struct ctx *c, struct al_submodel *s, al_span msg,
			      const struct where *w)
{
	s->graphs = alloc_array(c, 1, sizeof *s->graphs);
	if (!s->graphs)
		return AL_E_NOMEM;
	s->n_graphs = 1;
	return load_network(c, s, msg, w, s->type, NULL, NULL, 0, &s->graphs[0]);
}

/* ================================================================ Model and pipelines */

static enum al_status load_model(struct ctx *c, al_span msg, const char *path, int depth,
				 const struct where *w);

/* Pipeline: repeated Model models = 1, repeated string names = 2. Each stage
 * is a sub-model "<path>:pipeline/<name>", default name "model<i>". */
static enum al_status load_pipeline(struct ctx *c, struct al_submodel *s, al_span msg, int depth,
				    const struct where *w)
{
	struct pb_iter it;
	struct pb_field f;
	size_t n_models = 0, n_names = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (is(&f, 1, PB_LEN))
			n_models++;
		else if (is(&f, 2, PB_LEN))
			n_names++;
	}
	if (it.err)
		return wire_error(c, &it, w, pipeline_fields);
	al_span *models = alloc_array(c, n_models, sizeof *models);
	al_span *names = alloc_array(c, n_names, sizeof *names);
	if ((n_models && !models) || (n_names && !names))
		return AL_E_NOMEM;
	size_t im = 0, in = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (is(&f, 1, PB_LEN) && im < n_models)
			models[im++] = f.data;
		else if (is(&f, 2, PB_LEN) && in < n_names)
			names[in++] = f.data;
	}
	s->n_children = (uint32_t)n_models;
	for (size_t i = 0; i < n_models; i++) {
		const char *path;
		if (i < n_names && names[i].n > 0) {
			size_t nl = names[i].n > AL_MAX_NAME ? AL_MAX_NAME : names[i].n;
			path = ali_arena_printf(&c->m->arena, "%s:pipeline/%.*s", s->path, (int)nl,
					       (const char *)names[i].p);
		} else {
			path = ali_arena_printf(&c->m->arena, "%s:pipeline/model%zu", s->path, i);
		}
		if (!path)
			return AL_E_NOMEM;
		struct where mw = {w, "models", (long)i};
		enum al_status st = load_model(c, models[i], path, depth + 1, &mw);
		if (st)
			return st;
	}
	return AL_OK;
}

/* PipelineClassifier / PipelineRegressor: Pipeline pipeline = 1. */
static enum al_status load_pipeline_holder(struct ctx *c, struct al_submodel *s, al_span msg,
					   int depth, const struct where *w)
{
	struct pb_iter it;
	struct pb_field f;
	al_span p = {0};
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f))
		if (is(&f, 1, PB_LEN))
			p = f.data;
	if (it.err)
		return wire_error(c, &it, w, pipeline_holder_fields);
	struct where pw = {w, "pipeline", -1};
	return load_pipeline(c, s, p, depth, &pw);
}

static enum al_world world_of(uint32_t type)
{
	switch (type) {
	case AL_MODEL_FIELD_neuralNetwork: case AL_MODEL_FIELD_neuralNetworkClassifier:
	case AL_MODEL_FIELD_neuralNetworkRegressor: return AL_WORLD_NN;
	case AL_MODEL_FIELD_mlProgram: return AL_WORLD_MIL;
	}
	return AL_WORLD_OTHER;
}

/* Model: specificationVersion = 1, description = 2, isUpdatable = 10, oneof
 * Type (>= 200). Appends the sub-model, then its pipeline stages. w is NULL
 * for the file's root Model, else the path of this Model inside the file. */
static enum al_status load_model(struct ctx *c, al_span msg, const char *path, int depth,
				 const struct where *w)
{
	if (depth > AL_MAX_DEPTH)
		return report(c, AL_SEV_ERROR, msg.p, w, "nesting deeper than %d", AL_MAX_DEPTH);
	struct pb_iter it;
	struct pb_field f;
	uint64_t spec = 0;
	bool updatable = false, has_desc = false;
	al_span desc = {0}, body = {0};
	uint32_t type = 0;
	const uint8_t *type_at = NULL;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (is(&f, 1, PB_VARINT)) {
			spec = f.u;
		} else if (is(&f, 2, PB_LEN)) {
			desc = f.data;
			has_desc = true;
		} else if (is(&f, 10, PB_VARINT)) {
			updatable = f.u != 0;
		} else if (f.num >= MODEL_TYPE_MIN && f.wire == PB_LEN) {
			type = f.num; /* oneof Type: the last one wins */
			body = f.data;
			type_at = msg.p + f.start;
		}
	}
	const char *type_name = type ? lookup_name(model_fields, type) : NULL;
	/* At the root, garbage is told apart from a damaged model by whether a
	 * plausible specificationVersion or a known model type was seen. */
	bool plausible = (spec >= 1 && spec <= 1000) || type_name;
	if (depth == 0 && !plausible) {
		if (it.err)
			return report(c, AL_SEV_ERROR, msg.p + it.err_pos, NULL,
				      "not a Core ML model: %s at byte %zu", pb_err_str(it.err),
				      it.err_pos);
		return report(c, AL_SEV_ERROR, msg.p, NULL,
			      "not a Core ML model: no specificationVersion and no model type");
	}
	if (it.err)
		return wire_error(c, &it, w, model_fields);
	if (!type)
		return report(c, AL_SEV_ERROR, msg.p, w, "model has no type");

	struct al_submodel *s = ali_model_add_sub(c->m);
	if (!s)
		return AL_E_NOMEM;
	s->path = path;
	s->file = c->file;
	s->spec_version = (int)(int32_t)spec;
	s->offset = offset_of(c, msg.p);
	s->depth = depth;
	s->is_updatable = updatable;
	s->world = world_of(type);
	s->type = type_name ? type_name : ali_arena_printf(&c->m->arena, "unknown(%u)", type);
	if (!s->type)
		return AL_E_NOMEM;
	if (!type_name)
		report(c, AL_SEV_WARNING, type_at, w, "unknown model type (Model field %u)", type);

	enum al_status st = AL_OK;
	if (has_desc) {
		struct where dw = {w, "description", -1};
		st = load_description(c, s, desc, &dw);
	}
	if (st)
		return st;
	struct where tw = {w, s->type, -1};
	switch (type) {
	case AL_MODEL_FIELD_neuralNetwork: case AL_MODEL_FIELD_neuralNetworkClassifier:
	case AL_MODEL_FIELD_neuralNetworkRegressor:
		return load_nn(c, s, body, &tw);
	case AL_MODEL_FIELD_mlProgram:
		return ali_load_mil_program(c->m, s, body, offset_of(c, body.p), c->file, c->d);
	case AL_MODEL_FIELD_pipeline:
		return load_pipeline(c, s, body, depth, &tw);
	case AL_MODEL_FIELD_pipelineClassifier: case AL_MODEL_FIELD_pipelineRegressor:
		return load_pipeline_holder(c, s, body, depth, &tw);
	}
	return AL_OK;
}

enum al_status ali_load_model_message(struct al_model *m, al_span bytes, const char *file,
				     const char *path, al_diags *d)
{
	if (!m || !file)
		return AL_E_INVALID_ARG;
	struct ctx c = {.m = m, .d = d, .base = bytes.p, .size = bytes.n};
	c.file = ali_arena_strndup(&m->arena, file, strlen(file));
	const char *root = path ? ali_arena_strndup(&m->arena, path, strlen(path)) : c.file;
	if (!c.file || !root)
		return AL_E_NOMEM;
	if (bytes.n == 0)
		return report(&c, AL_SEV_ERROR, NULL, NULL, "not a Core ML model: the file is empty");
	enum al_status st = load_model(&c, bytes, root, 0, NULL);
	if (st == AL_OK && m->arena.failed)
		st = AL_E_NOMEM;
	return st;
}
