/* SPDX-License-Identifier: MIT */
/* espresso.c: a NeuralNetwork compiled by espresso (model.espresso.net JSON,
 * model.espresso.weights blobs) read back into a NeuralNetwork message whose
 * layers carry the kinds and parameters the rules know (nn_layers.def).
 *
 * The compiled form has less than the source (FORMAT-NOTES.md section 2):
 * layer names are espresso's, activations may be fused into the layer before
 * (fused_relu, has_relu), the weights sit in model.espresso.weights by blob id
 * and are not put back into the layers (never copied: their sizes are counted
 * into the weight statistics), and a few espresso types or codes have no known
 * NeuralNetwork kind. Those layers keep their espresso type as the node type,
 * with a kind no rule knows (like an unknown layer of a .mlmodel); every such
 * loss is said once in a warning.
 *
 * Mapping (espresso type -> NeuralNetworkLayer member), from the corpus:
 *   convolution -> convolution, inner_product -> innerProduct, pool -> pooling
 *   (avg_or_max 1 = max: the PoolingMax histogram of metadata.json), softmax,
 *   softmax_nd -> softmaxND, concat, sequence_concat -> concat(sequenceConcat),
 *   flatten, reshape -> reshape (reshapeStatic with dst_nd_rank), transpose,
 *   slice, reduce, general_padding -> padding, activation mode 0 -> ReLU,
 *   mode 6 -> linear (alpha, beta: the "__neg__" layers of ReLU6 use alpha -1),
 *   elementwise operation 0 -> add (the two-input residual sums of SSDOcr).
 */
#include "mlmodelc.h"

#include <limits.h>
#include <string.h>

#include <json-c/json.h>

#define MAX_LAYERS (1u << 20)
#define ESP_MAX_TOPS 64 /* tops of one layer given compiled shapes */

struct esp {
	struct al_model *m;
	al_diags *d;
	const char *net;     /* shown name of model.espresso.net */
	uint64_t *blob_size; /* model.espresso.weights: size of blob id i */
	uint64_t n_blobs;
	bool have_weights;
	uint32_t fused, fused_tanh, batchnorm, inferred, unknown, bad_blobs;
	uint64_t layer_bytes; /* blob bytes of the layer being read */
	const char *shape_file; /* shown name of model.espresso.shape */
	uint32_t shapes_found;
	bool nomem;
	struct al_weight_stats ws;
};

static bool jint(struct json_object *o, const char *key, int64_t *out)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, key, &v) ||
	    !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double) ||
	      json_object_is_type(v, json_type_boolean)))
		return false;
	*out = json_object_get_int64(v);
	return true;
}

static int64_t jget(struct json_object *o, const char *key, int64_t dflt)
{
	int64_t v;
	return jint(o, key, &v) ? v : dflt;
}

static double jdbl(struct json_object *o, const char *key, double dflt)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, key, &v) ||
	    !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
		return dflt;
	return json_object_get_double(v);
}

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

static uint64_t u64(int64_t v)
{
	return v < 0 ? 0 : (uint64_t)v;
}

static void packed2(struct al_buf *b, uint32_t field, int64_t a, int64_t c)
{
	uint64_t v[2] = {u64(a), u64(c)};
	ali_buf_packed(b, field, v, 2);
}

/* BorderAmounts {borderAmounts = 10 EdgeSizes{start = 1, end = 2}} for
 * [top, bottom], [left, right] */
static void border(struct al_buf *b, uint32_t field, struct json_object *l, const char *pfx)
{
	char k[4][32];
	static const char *const side[4] = {"t", "b", "l", "r"};
	for (int i = 0; i < 4; i++)
		snprintf(k[i], sizeof k[i], "%s%s", pfx, side[i]);
	struct al_buf ba = {0}, e = {0};
	for (int i = 0; i < 4; i += 2) {
		e.n = 0;
		int64_t s = jget(l, k[i], 0), t = jget(l, k[i + 1], 0);
		if (s > 0)
			ali_buf_uint(&e, 1, (uint64_t)s);
		if (t > 0)
			ali_buf_uint(&e, 2, (uint64_t)t);
		ali_buf_len(&ba, 10, e.p, e.n);
	}
	ali_buf_len(b, field, ba.p, ba.n);
	if (ba.failed || e.failed)
		b->failed = true;
	ali_buf_free(&ba);
	ali_buf_free(&e);
}

/* A blob id of the layer: counted into the weight statistics. */
static void blob(struct esp *E, struct json_object *l, const char *key, bool fp16)
{
	int64_t id;
	if (!jint(l, key, &id))
		return;
	if (!E->have_weights)
		return;
	if (id < 0 || (uint64_t)id >= E->n_blobs) {
		E->bad_blobs++;
		return;
	}
	uint64_t n = E->blob_size[id];
	E->layer_bytes += n;
	if (fp16)
		E->ws.fp16 += n;
	else
		E->ws.fp32 += n;
	E->ws.n_blobs++;
}

/* The private field of an espresso type with no known kind. */
static uint32_t unknown_field(struct esp *E, const char *what)
{
	struct al_compiled *ci = &E->m->compiled;
	for (uint32_t i = 0; i < ci->n_esp_types; i++)
		if (strcmp(ci->esp_types[i], what) == 0)
			return AL_ESPRESSO_FIELD + i;
	if (ci->n_esp_types == AL_ESPRESSO_TYPES)
		return AL_ESPRESSO_FIELD + AL_ESPRESSO_TYPES;
	const char *s = ali_arena_strndup(&E->m->arena, what, strlen(what));
	if (!s)
		return AL_ESPRESSO_FIELD + AL_ESPRESSO_TYPES;
	ci->esp_types[ci->n_esp_types] = s;
	return AL_ESPRESSO_FIELD + ci->n_esp_types++;
}

/* The layer's member and its parameters; field 0 = not mapped. */
static uint32_t params(struct esp *E, struct json_object *l, const char *type, struct al_buf *p)
{
	struct al_buf x = {0};
	uint32_t field = 0;
	if (strcmp(type, "convolution") == 0 || strcmp(type, "deconvolution") == 0) {
		int64_t g = jget(l, "n_groups", 1), k = jget(l, "K", 0);
		ali_buf_uint(p, 1, u64(jget(l, "C", 0)));
		if (g > 0 && k % g == 0)
			ali_buf_uint(p, 2, u64(k / g));
		ali_buf_uint(p, 10, u64(g));
		packed2(p, 20, jget(l, "Ny", 1), jget(l, "Nx", 1));
		packed2(p, 30, jget(l, "stride_y", 1), jget(l, "stride_x", 1));
		struct al_buf v = {0};
		border(&v, 1, l, "pad_");
		ali_buf_len(p, 50, v.p, v.n);
		ali_buf_free(&v);
		if (type[0] == 'd')
			ali_buf_uint(p, 60, 1);
		if (jget(l, "has_biases", 0))
			ali_buf_uint(p, 70, 1);
		E->fused += jget(l, "fused_relu", 0) != 0;
		E->fused_tanh += jget(l, "fused_tanh", 0) != 0;
		E->batchnorm += jget(l, "has_batch_norm", 0) != 0;
		blob(E, l, "blob_weights", false);
		blob(E, l, "blob_weights_f16", true);
		blob(E, l, "blob_biases", false);
		field = AL_NN_FIELD_convolution;
	} else if (strcmp(type, "inner_product") == 0) {
		ali_buf_uint(p, 1, u64(jget(l, "nB", 0)));
		ali_buf_uint(p, 2, u64(jget(l, "nC", 0)));
		if (jget(l, "has_biases", 0))
			ali_buf_uint(p, 10, 1);
		E->fused += jget(l, "has_relu", 0) != 0 || jget(l, "has_prelu", 0) != 0;
		E->fused_tanh += jget(l, "has_tanh", 0) != 0;
		blob(E, l, "blob_weights", false);
		blob(E, l, "blob_weights_f16", true);
		blob(E, l, "blob_biases", false);
		field = AL_NN_FIELD_innerProduct;
	} else if (strcmp(type, "pool") == 0) {
		int64_t am = jget(l, "avg_or_max", -1);
		if (am != 0 && am != 1)
			return unknown_field(E, "pool(avg_or_max?)");
		ali_buf_uint(p, 1, am == 1 ? 0 : 1); /* MAX = 0, AVERAGE = 1 */
		packed2(p, 10, jget(l, "size_y", 1), jget(l, "size_x", 1));
		packed2(p, 20, jget(l, "stride_y", 1), jget(l, "stride_x", 1));
		struct al_buf v = {0};
		border(&v, 1, l, "pad_");
		ali_buf_len(p, 30, v.p, v.n);
		ali_buf_free(&v);
		if (jget(l, "average_count_exclude_padding", 0))
			ali_buf_uint(p, 50, 1);
		if (jget(l, "is_global", 0))
			ali_buf_uint(p, 60, 1);
		field = AL_NN_FIELD_pooling;
	} else if (strcmp(type, "activation") == 0) {
		int64_t mode = jget(l, "mode", -1);
		if (mode == 0) {
			ali_buf_len(p, 10, "", 0); /* ReLU */
		} else if (mode == 6) {
			ali_buf_float(&x, 1, (float)jdbl(l, "alpha", 1));
			ali_buf_float(&x, 2, (float)jdbl(l, "beta", 0));
			ali_buf_len(p, 5, x.p, x.n); /* linear */
			E->inferred++;
		} else {
			char what[48];
			snprintf(what, sizeof what, "activation(mode %lld)", (long long)mode);
			ali_buf_free(&x);
			return unknown_field(E, what);
		}
		field = AL_NN_FIELD_activation;
	} else if (strcmp(type, "elementwise") == 0) {
		int64_t op = jget(l, "operation", -1);
		if (op != 0) {
			char what[48];
			snprintf(what, sizeof what, "elementwise(operation %lld)", (long long)op);
			return unknown_field(E, what);
		}
		E->inferred++;
		E->fused += jget(l, "fused_relu", 0) != 0;
		field = AL_NN_FIELD_add;
	} else if (strcmp(type, "softmax") == 0) {
		field = AL_NN_FIELD_softmax;
	} else if (strcmp(type, "softmax_nd") == 0) {
		int64_t ax = jget(l, "nd_axis", -1);
		ali_buf_uint(p, 1, (uint64_t)ax); /* two's complement varint */
		field = AL_NN_FIELD_softmaxND;
	} else if (strcmp(type, "concat") == 0) {
		field = AL_NN_FIELD_concat;
	} else if (strcmp(type, "sequence_concat") == 0) {
		ali_buf_uint(p, 100, 1);
		field = AL_NN_FIELD_concat;
	} else if (strcmp(type, "flatten") == 0) {
		int64_t mode = jget(l, "mode", 0);
		if (mode)
			ali_buf_uint(p, 1, u64(mode));
		field = AL_NN_FIELD_flatten;
	} else if (strcmp(type, "reshape") == 0) {
		field = jget(l, "dst_nd_rank", 0) > 0 ? AL_NN_FIELD_reshapeStatic : AL_NN_FIELD_reshape;
	} else if (strcmp(type, "transpose") == 0) {
		field = AL_NN_FIELD_transpose;
	} else if (strcmp(type, "slice") == 0) {
		field = AL_NN_FIELD_slice;
	} else if (strcmp(type, "reduce") == 0) {
		field = AL_NN_FIELD_reduce;
	} else if (strcmp(type, "general_padding") == 0) {
		border(p, 10, l, "pad_");
		field = AL_NN_FIELD_padding;
	} else {
		char what[64];
		snprintf(what, sizeof what, "%.60s", type);
		field = unknown_field(E, what);
	}
	ali_buf_free(&x);
	return field;
}

/* "a,b,c" into repeated string field `num` of b */
static void names(struct al_buf *b, uint32_t num, const char *s)
{
	while (s && *s) {
		size_t k = strcspn(s, ",");
		ali_buf_len(b, num, s, k < AL_MAX_NAME ? k : AL_MAX_NAME);
		s += k + (s[k] == ',');
	}
}

/* model.espresso.weights: u64 count N, N x (u64 id, u64 size), then the blobs. */
static enum al_status read_weights(struct esp *E, const char *dir, const char *rel)
{
	struct al_mlmodelc_file f;
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s%smodel.espresso.weights", rel, *rel ? "/" : "");
	enum al_status st = ali_mlmodelc_map(&f, E->m, dir, path, E->d);
	if (st || !f.present)
		return st;
	const uint8_t *p = f.map.s.p;
	size_t n = f.map.s.n;
	uint64_t count = n >= 8 ? al_rd64le(p) : 0;
	if (n < 8 || count > (n - 8) / 16) {
		ali_diag_add(E->d, AL_SEV_WARNING, f.shown, 0, NULL, NULL,
			    "model.espresso.weights: blob table of %llu entries does not fit the %zu "
			    "bytes; weights not counted", (unsigned long long)count, n);
		ali_unmap(&f.map);
		return AL_OK;
	}
	E->blob_size = count ? ali_arena_array(&E->m->arena, (size_t)count, sizeof *E->blob_size) : NULL;
	if (count && !E->blob_size) {
		ali_unmap(&f.map);
		return AL_E_NOMEM;
	}
	uint64_t total = 8 + 16 * count;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t id = al_rd64le(p + 8 + 16 * i), size = al_rd64le(p + 16 + 16 * i);
		if (id != i || size > n || total > n - size) {
			ali_diag_add(E->d, AL_SEV_WARNING, f.shown, 8 + 16 * i, NULL, NULL,
				    "model.espresso.weights: entry %llu (id %llu, %llu bytes) does not fit "
				    "the file; weights not counted", (unsigned long long)i,
				    (unsigned long long)id, (unsigned long long)size);
			ali_unmap(&f.map);
			return AL_OK;
		}
		E->blob_size[i] = size;
		total += size;
	}
	E->n_blobs = count;
	E->have_weights = true;
	ali_unmap(&f.map);
	return AL_OK;
}

/* model.espresso.shape: {"layer_shapes": {blob: {"n", "k", "h", "w", "seq"?,
 * "_rank"?}}} (FORMAT-NOTES.md section 2). *table: the layer_shapes object of
 * *doc, both NULL when the file is absent; a malformed file is an error. */
static enum al_status read_shapes(struct esp *E, const char *dir, const char *rel,
				  struct json_object **doc, struct json_object **table)
{
	*doc = *table = NULL;
	struct al_mlmodelc_file f;
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s%smodel.espresso.shape", rel, *rel ? "/" : "");
	enum al_status st = ali_mlmodelc_map(&f, E->m, dir, path, E->d);
	if (st || !f.present)
		return st;
	E->shape_file = f.shown;
	struct json_object *top = ali_json_read(f.map.s, f.shown, E->d);
	ali_unmap(&f.map);
	if (!top)
		return AL_E_FORMAT;
	struct json_object *t;
	if (!json_object_is_type(top, json_type_object) ||
	    !json_object_object_get_ex(top, "layer_shapes", &t) ||
	    !json_object_is_type(t, json_type_object)) {
		json_object_put(top);
		ali_diag_add(E->d, AL_SEV_ERROR, f.shown, UINT64_MAX, "layer_shapes", NULL,
			    "model.espresso.shape has no \"layer_shapes\" object");
		return AL_E_FORMAT;
	}
	*doc = top;
	*table = t;
	return AL_OK;
}

/* The shape of one blob of model.espresso.shape: the last _rank of [seq, n, k,
 * h, w] (no _rank: all five, the RANK5 blob [Seq, Batch, C, H, W]); seq absent
 * is 1, another dim absent is unknown. false, with a located error, when the
 * entry is not an object of dims in [0, 2^31) and a _rank in 1..5. */
static bool blob_shape(struct esp *E, struct json_object *o, const char *blob, struct al_shape *sh)
{
	static const char *const key[5] = {"seq", "n", "k", "h", "w"};
	int64_t v[5], rank = 5;
	const char *bad = NULL;
	if (!json_object_is_type(o, json_type_object))
		bad = "is not an object";
	else if (json_object_object_get_ex(o, "_rank", NULL) && (!jint(o, "_rank", &rank) || rank < 1 || rank > 5))
		bad = "has a _rank that is not 1..5";
	for (int i = 0; i < 5 && !bad; i++) {
		if (!json_object_object_get_ex(o, key[i], NULL))
			v[i] = i == 0 ? 1 : AL_DIM_UNKNOWN;
		else if (!jint(o, key[i], &v[i]) || v[i] < 0 || v[i] > INT32_MAX)
			bad = "has a dim that is not an integer in 0..2^31-1";
	}
	if (bad) {
		ali_diag_add(E->d, AL_SEV_ERROR, E->shape_file, UINT64_MAX, "layer_shapes", blob,
			    "the entry of a blob %s", bad);
		return false;
	}
	memset(sh, 0, sizeof *sh);
	sh->rank = (int)rank;
	sh->dtype = AL_DT_FP32; /* NeuralNetwork blobs are float */
	for (int j = 0; j < AL_SHAPE_MAX_RANK; j++)
		sh->dims[j] = j < rank ? v[5 - rank + j] : AL_DIM_UNKNOWN;
	return true;
}

/* The shapes of a layer's tops or bottoms (comma-separated, split as names() does). */
static bool list_shapes(struct esp *E, struct json_object *table, const char *top,
			const struct al_shape **out, uint32_t *n_out, bool count)
{
	uint32_t n = 0;
	for (const char *s = top; s && *s; n++) {
		size_t k = strcspn(s, ",");
		s += k + (s[k] == ',');
	}
	*n_out = 0;
	*out = NULL;
	if (!n || n > ESP_MAX_TOPS)
		return true; /* no tops, or more than any layer seen: no compiled shapes */
	struct al_shape *sh = ali_arena_array(&E->m->arena, n, sizeof *sh);
	if (!sh) {
		E->nomem = true;
		return false;
	}
	char name[AL_MAX_NAME + 1];
	uint32_t i = 0;
	for (const char *s = top; *s; i++) {
		size_t k = strcspn(s, ",");
		snprintf(name, sizeof name, "%.*s", (int)(k < AL_MAX_NAME ? k : AL_MAX_NAME), s);
		s += k + (s[k] == ',');
		struct json_object *o;
		sh[i].rank = -1;
		if (json_object_object_get_ex(table, name, &o)) {
			if (!blob_shape(E, o, name, &sh[i]))
				return false;
			E->shapes_found += count;
		}
	}
	*out = sh;
	*n_out = n;
	return true;
}

static bool layer_shapes(struct esp *E, struct json_object *table, struct json_object *l,
			 struct al_esp_tops *t)
{
	return list_shapes(E, table, jstr(l, "top"), &t->shape, &t->n, true) &&
	       list_shapes(E, table, jstr(l, "bottom"), &t->in, &t->n_in, false);
}

enum al_status ali_espresso_build(struct al_model *m, const char *dir, const char *rel,
				  uint32_t spec, struct al_buf *out, al_diags *d)
{
	struct esp E = {.m = m, .d = d};
	struct al_mlmodelc_file f;
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s%smodel.espresso.net", rel, *rel ? "/" : "");
	enum al_status st = ali_mlmodelc_map(&f, m, dir, path, d);
	if (st)
		return st;
	if (!f.present) {
		ali_diag_add(d, AL_SEV_ERROR, f.shown, UINT64_MAX, NULL, NULL,
			    "compiled NeuralNetwork without model.espresso.net");
		return AL_E_FORMAT;
	}
	E.net = f.shown;
	struct json_object *top = ali_json_read(f.map.s, f.shown, d);
	ali_unmap(&f.map);
	if (!top)
		return AL_E_FORMAT;
	struct json_object *layers;
	if (!json_object_is_type(top, json_type_object) ||
	    !json_object_object_get_ex(top, "layers", &layers) ||
	    !json_object_is_type(layers, json_type_array)) {
		json_object_put(top);
		ali_diag_add(d, AL_SEV_ERROR, E.net, UINT64_MAX, "layers", NULL,
			    "model.espresso.net has no \"layers\" array");
		return AL_E_FORMAT;
	}
	struct json_object *shape_doc = NULL, *shapes = NULL;
	if ((st = read_weights(&E, dir, rel)) || (st = read_shapes(&E, dir, rel, &shape_doc, &shapes))) {
		json_object_put(top);
		return st;
	}
	size_t n = json_object_array_length(layers);
	if (n > MAX_LAYERS) {
		json_object_put(top);
		json_object_put(shape_doc);
		ali_diag_add(d, AL_SEV_ERROR, E.net, UINT64_MAX, "layers", NULL,
			    "%zu espresso layers; more than %u is refused", n, MAX_LAYERS);
		return AL_E_FORMAT;
	}
	struct al_buf layer = {0}, p = {0};
	uint32_t stage = m->compiled.n_stages ? m->compiled.n_stages - 1 : 0;
	uint64_t *lb = n && stage < AL_ESPRESSO_STAGES ? ali_arena_array(&m->arena, n, sizeof *lb) : NULL;
	if (lb) {
		m->compiled.esp_layer_bytes[stage] = lb;
		m->compiled.esp_n_layers[stage] = (uint32_t)n;
	}
	struct al_esp_tops *tops = lb && shapes ? ali_arena_array(&m->arena, n, sizeof *tops) : NULL;
	if (lb && shapes && !tops)
		st = AL_E_NOMEM;
	if (tops) /* lb: stage < AL_ESPRESSO_STAGES */
		m->compiled.esp_tops[stage] = tops;
	for (size_t i = 0; i < n && !st; i++) {
		struct json_object *l = json_object_array_get_idx(layers, i);
		const char *type = l && json_object_is_type(l, json_type_object) ? jstr(l, "type") : NULL;
		const char *name = type ? jstr(l, "name") : NULL;
		if (!type || !name) {
			ali_diag_add(d, AL_SEV_ERROR, E.net, UINT64_MAX, "layers", NULL,
				    "espresso layer %zu has no string \"type\" and \"name\"", i);
			st = AL_E_FORMAT;
			break;
		}
		layer.n = 0;
		p.n = 0;
		ali_buf_len(&layer, 1, name, strnlen(name, AL_MAX_NAME));
		names(&layer, 2, jstr(l, "bottom"));
		names(&layer, 3, jstr(l, "top"));
		E.layer_bytes = 0;
		uint32_t field = params(&E, l, type, &p);
		if (lb)
			lb[i] = E.layer_bytes;
		if (tops && !layer_shapes(&E, shapes, l, &tops[i])) {
			st = E.nomem ? AL_E_NOMEM : AL_E_FORMAT;
			break;
		}
		ali_buf_len(&layer, field, p.p, p.n);
		ali_buf_len(out, 1, layer.p, layer.n);
	}
	if (layer.failed || p.failed || out->failed)
		st = AL_E_NOMEM;
	ali_buf_free(&layer);
	ali_buf_free(&p);
	json_object_put(top);
	json_object_put(shape_doc);
	if (st)
		return st;
	/* compiled files do not say the shape mapping: ND layers need EXACT */
	if (spec >= 4)
		ali_buf_uint(out, 5, 1);

	if (stage < AL_ESPRESSO_STAGES && E.have_weights) {
		m->compiled.esp_weights[stage] = E.ws;
		m->compiled.esp_stage[stage] = true;
	}
	const char *at = f.shown;
	ali_diag_add(d, AL_SEV_WARNING, at, UINT64_MAX, NULL, NULL,
		    "compiled by espresso: %zu layers with espresso's names; weights stay in "
		    "model.espresso.weights (counted, not attached to the layers)", n);
	if (E.fused)
		ali_diag_add(d, AL_SEV_WARNING, at, UINT64_MAX, NULL, NULL,
			    "%u layers carry a fused activation (fused_relu / has_relu): the source's "
			    "separate activation layers are not in the compiled model", E.fused);
	if (E.fused_tanh || E.batchnorm)
		ali_diag_add(d, AL_SEV_WARNING, at, UINT64_MAX, NULL, NULL,
			    "%u layers carry a fused tanh and %u a fused batch norm", E.fused_tanh,
			    E.batchnorm);
	if (E.inferred)
		ali_diag_add(d, AL_SEV_NOTE, at, UINT64_MAX, NULL, NULL,
			    "%u layers mapped from espresso codes inferred from observed models "
			    "(activation mode 6 = linear, elementwise operation 0 = add)", E.inferred);
	if (E.bad_blobs)
		ali_diag_add(d, AL_SEV_WARNING, at, UINT64_MAX, NULL, NULL,
			    "%u blob ids are not in model.espresso.weights", E.bad_blobs);
	return AL_OK;
}

static void rename_nodes(struct al_model *m, const struct al_graph *g, int depth)
{
	if (!g || depth > AL_MAX_DEPTH)
		return;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct al_node *n = &g->nodes[i];
		unsigned f;
		if (n->kind < 0 && n->type && sscanf(n->type, "unknown(%u)", &f) == 1 &&
		    f >= AL_ESPRESSO_FIELD && f - AL_ESPRESSO_FIELD < m->compiled.n_esp_types) {
			const char *t = ali_arena_printf(&m->arena, "espresso.%s",
							 m->compiled.esp_types[f - AL_ESPRESSO_FIELD]);
			if (t)
				n->type = t;
		}
		for (uint32_t k = 0; k < n->n_sub; k++)
			rename_nodes(m, n->sub[k], depth + 1);
	}
}

void ali_espresso_finish(struct al_model *m, const al_diags *tmp, al_diags *d)
{
	for (size_t i = 0; i < al_diags_count(tmp); i++) {
		const struct al_diag *x = al_diags_get(tmp, i);
		unsigned f;
		const char *u = strstr(x->msg, "unknown layer type (field ");
		if (u && sscanf(u, "unknown layer type (field %u)", &f) == 1 && f >= AL_ESPRESSO_FIELD)
			continue;
		ali_diag_add(d, x->severity, x->file, x->offset, x->where, x->node, "%s", x->msg);
	}
	for (size_t s = 0; s < m->n_subs; s++) {
		struct al_submodel *sub = m->subs[s];
		if (s < AL_ESPRESSO_STAGES && m->compiled.esp_stage[s])
			sub->weights = m->compiled.esp_weights[s];
		/* each layer's weight bytes, for the cost model (cost.c) */
		const struct al_graph *g0 = sub->world == AL_WORLD_NN && sub->n_graphs ? sub->graphs[0] : NULL;
		for (uint32_t i = 0; g0 && s < AL_ESPRESSO_STAGES && m->compiled.esp_stage[s] &&
				     i < g0->n_nodes && i < m->compiled.esp_n_layers[s];
		     i++) {
			struct al_node_src *src = (struct al_node_src *)g0->nodes[i].priv;
			if (src) {
				src->weights_elsewhere = true;
				src->weight_bytes_elsewhere = m->compiled.esp_layer_bytes[s][i];
			}
		}
		/* each layer's output shapes from model.espresso.shape (shape_infer.c) */
		const struct al_esp_tops *tops = s < AL_ESPRESSO_STAGES ? m->compiled.esp_tops[s] : NULL;
		for (uint32_t i = 0; tops && g0 && i < g0->n_nodes && i < m->compiled.esp_n_layers[s]; i++) {
			struct al_node_src *src = (struct al_node_src *)g0->nodes[i].priv;
			if (src) {
				src->compiled_out = tops[i].shape;
				src->n_compiled_out = tops[i].n;
				src->compiled_in = tops[i].in;
				src->n_compiled_in = tops[i].n_in;
			}
		}
		for (uint32_t g = 0; g < sub->n_graphs; g++)
			rename_nodes(m, sub->graphs[g], 0);
	}
	/* what `info` shows of the compiler: the root's metadata, keys compiled.* */
	struct al_submodel *root = m->n_subs ? m->subs[0] : NULL;
	const char *meta = m->compiled.metadata
				   ? m->compiled.metadata
				   : "none (no metadata.json: written by a compiler before 2020, or dropped)";
	if (root) {
		uint32_t n = root->n_user_defined, k = n;
		struct al_keyval *kv = ali_arena_array(&m->arena, n + 2, sizeof *kv);
		if (kv) {
			if (n)
				memcpy(kv, root->user_defined, n * sizeof *kv);
			if (m->compiled.compiler)
				kv[k++] = (struct al_keyval){"compiled.compiler", m->compiled.compiler};
			kv[k++] = (struct al_keyval){"compiled.metadata", meta};
			root->user_defined = kv;
			root->n_user_defined = k;
		}
	}
	for (uint32_t i = 0; i < m->compiled.n_esp_types; i++)
		ali_diag_add(d, AL_SEV_WARNING, m->path, UINT64_MAX, NULL, NULL,
			    "espresso layer type '%s' has no known NeuralNetwork kind: its layers "
			    "are listed as espresso.%s and their unit is unknown (ANE057)",
			    m->compiled.esp_types[i], m->compiled.esp_types[i]);
}
