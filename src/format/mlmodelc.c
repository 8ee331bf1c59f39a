/* SPDX-License-Identifier: MIT */
/* mlmodelc.c: opens a compiled model directory (.mlmodelc, what Xcode ships
 * inside an app) by turning what it holds back into a Core ML Model message,
 * which the .mlmodel loader (mlmodel.c) then reads like any other: one IR.
 *
 *   coremldata.bin   model type code, spec version, then the ModelDescription
 *                    (or, for "spec" models, the whole Model message)
 *   model.mil        ML Program as MIL text (miltext.c) + weights/weight.bin
 *                    (mapped, attached as the model's weights: never copied)
 *   model.espresso.* NeuralNetwork compiled by espresso: the JSON layers are
 *                    mapped onto NeuralNetwork layer kinds (espresso.c)
 *   model0/, model1/ pipeline stages, each laid out like a model of its own
 *   metadata.json    spec version and model type names, the compiler's
 *                    metadata version
 * FORMAT-NOTES.md (corpus/compiled) describes every file as observed.
 *
 * Every path is below the directory (realpath checked), every file is opened
 * through ali_map_file (al_open_regular: regular files only), every length in
 * coremldata.bin is bounded by the bytes present, and stage directories nest
 * at most AL_MAX_DEPTH deep. What the compiled form lacks against the source
 * (weights of espresso layers, fused activations, the parameters of non-neural
 * models) is said in notes, and the rules then find "unknown", not a guess.
 */
#include "miltext.h"
#include "mlmodelc.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>


struct cc {
	struct al_model *m;
	al_diags *d;
	const char *dir;  /* as given */
	char real[PATH_MAX];
	const char *shown; /* the report name of the root */
};

__attribute__((format(printf, 5, 6)))
static enum al_status fail(struct cc *c, enum al_status st, const char *file, uint64_t off,
			   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ali_diag_vadd(c->d, AL_SEV_ERROR, file, off, NULL, NULL, fmt, ap);
	va_end(ap);
	return st;
}

/* dir/rel below the model directory (ali_mlmodelc_locate). */
static enum al_status locate(struct cc *c, const char *rel, char out[PATH_MAX], const char **shown,
			     bool *present)
{
	return ali_mlmodelc_locate(c->m, c->dir, c->real, rel, out, shown, present, c->d);
}

/* ================================================================ coremldata.bin */

struct cdata {
	uint32_t type;     /* Model oneof field number */
	uint32_t spec;
	al_span kind;      /* "generic", "spec", "notreesyet", or a pipeline's stage list */
	al_span desc;      /* ModelDescription (generic) */
	al_span model;     /* whole Model message ("spec") */
};

#define CD_STR_LEN 0x1c
#define CD_STR 0x24
#define CD_AFTER 0x20 /* from the end of the string to the description's length word */

static enum al_status read_cdata(struct cc *c, al_span b, const char *shown, struct cdata *out)
{
	memset(out, 0, sizeof *out);
	if (b.n < CD_STR)
		return fail(c, AL_E_FORMAT, shown, 0,
			    "coremldata.bin is %zu bytes, shorter than its %d-byte header", b.n, CD_STR);
	out->type = al_rd32le(b.p);
	uint64_t len = al_rd64le(b.p + CD_STR_LEN);
	if (len > b.n - CD_STR || b.n - CD_STR - len < 4)
		return fail(c, AL_E_FORMAT, shown, CD_STR_LEN,
			    "coremldata.bin: model kind string of %llu bytes runs past the end (%zu bytes)",
			    (unsigned long long)len, b.n);
	out->kind = (al_span){b.p + CD_STR, (size_t)len};
	size_t s = CD_STR + (size_t)len;
	out->spec = al_rd32le(b.p + s);
	size_t at = s + CD_AFTER;
	if (ali_span_eq(out->kind, "spec")) {
		if (at > b.n)
			return fail(c, AL_E_FORMAT, shown, s,
				    "coremldata.bin ends before its model message");
		out->model = (al_span){b.p + at, b.n - at};
		return AL_OK;
	}
	if (at > b.n || b.n - at < 8)
		return fail(c, AL_E_FORMAT, shown, s,
			    "coremldata.bin ends before its model description");
	uint64_t dl = al_rd64le(b.p + at);
	if (dl > b.n - at - 8)
		return fail(c, AL_E_FORMAT, shown, at,
			    "coremldata.bin: model description of %llu bytes runs past the end (%zu bytes)",
			    (unsigned long long)dl, b.n);
	out->desc = (al_span){b.p + at + 8, (size_t)dl};
	/* the wire format of the description, checked here so that an error names
	 * its offset in coremldata.bin (the Model walk sees a rebuilt message) */
	struct pb_iter it;
	struct pb_field pf;
	pb_iter_init(&it, out->desc);
	while (pb_next(&it, &pf))
		;
	if (it.err)
		return fail(c, AL_E_FORMAT, shown, at + 8 + it.err_pos,
			    "coremldata.bin: malformed model description: %s", pb_err_str(it.err));
	return AL_OK;
}

/* ================================================================ metadata.json */

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;
	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

/* Facts of metadata.json kept for `info`. */
static void read_metadata(struct cc *c, const char *rel, struct al_compiled *ci)
{
	struct al_mlmodelc_file f;
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s%smetadata.json", rel, *rel ? "/" : "");
	if (ali_mlmodelc_map(&f, c->m, c->dir, path, c->d) != AL_OK || !f.present)
		return;
	al_diags *quiet = al_diags_new(); /* a damaged metadata.json is only noted */
	struct json_object *top = quiet ? ali_json_read(f.map.s, f.shown, quiet) : NULL;
	if (!top && quiet && al_diags_count(quiet))
		ali_diag_add(c->d, AL_SEV_WARNING, f.shown, al_diags_get(quiet, 0)->offset, NULL, NULL,
			    "%s; ignored", al_diags_get(quiet, 0)->msg);
	al_diags_free(quiet);
	ali_unmap(&f.map);
	if (!top)
		return;
	struct json_object *o = json_object_is_type(top, json_type_array) &&
					json_object_array_length(top) > 0
				? json_object_array_get_idx(top, 0)
				: top;
	const char *v = jstr(o, "metadataOutputVersion");
	struct json_object *mt;
	const char *type = NULL;
	if (o && json_object_object_get_ex(o, "modelType", &mt))
		type = jstr(mt, "name");
	const char *sp = jstr(o, "storagePrecision"), *cp = jstr(o, "computePrecision");
	if (!ci->metadata)
		ci->metadata = ali_arena_printf(&c->m->arena, "metadata.json version %s%s%s%s%s%s%s",
					       v ? v : "?", type ? ", " : "", type ? type : "",
					       sp ? ", storage " : "", sp ? sp : "",
					       cp ? ", compute " : "", cp ? cp : "");
	json_object_put(top);
}

/* ================================================================ building the Model message */

static enum al_status build(struct cc *c, const char *rel, int depth, struct al_buf *out);

/* model.mil -> Program message (field 502 of Model) */
static enum al_status build_mil(struct cc *c, const char *rel, struct al_buf *model)
{
	struct al_mlmodelc_file f;
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s%smodel.mil", rel, *rel ? "/" : "");
	enum al_status st = ali_mlmodelc_map(&f, c->m, c->dir, path, c->d);
	if (st)
		return st;
	if (!f.present)
		return fail(c, AL_E_FORMAT, f.shown, UINT64_MAX,
			    "compiled ML Program without model.mil");
	struct al_buf prog = {0};
	st = ali_mil_text_parse(f.map.s, f.shown, &prog, c->d);
	/* buildInfo: the compiler versions, for `info` */
	if (st == AL_OK && !c->m->compiled.compiler) {
		const char *s = (const char *)f.map.s.p;
		size_t n = f.map.s.n < 4096 ? f.map.s.n : 4096;
		char v1[64] = "", v2[64] = "";
		static const char *const keys[2] = {"\"coremlc-version\", \"",
						    "\"coremlc-component-MIL\", \""};
		char *dsts[2] = {v1, v2};
		for (size_t i = 0; i < n; i++)
			for (int k = 0; k < 2; k++) {
				size_t kl = strlen(keys[k]);
				if (n - i < kl || memcmp(s + i, keys[k], kl) != 0)
					continue;
				size_t j = 0;
				for (size_t q = i + kl; q < n && s[q] != '"' && j < 40; q++)
					if ((s[q] >= '0' && s[q] <= '9') || s[q] == '.')
						dsts[k][j++] = s[q];
				dsts[k][j] = '\0';
			}
		if (v1[0] || v2[0])
			c->m->compiled.compiler = ali_arena_printf(&c->m->arena, "coremlc %s%s%s%s",
								  v1[0] ? v1 : "?", v2[0] ? " (MIL " : "",
								  v2, v2[0] ? ")" : "");
	}
	ali_unmap(&f.map);
	if (st == AL_OK)
		ali_buf_len(model, 502, prog.p, prog.n);
	ali_buf_free(&prog);
	if (st)
		return st;

	/* weights/weight.bin, mapped once for the whole model */
	snprintf(path, sizeof path, "%s%sweights/weight.bin", rel, *rel ? "/" : "");
	if (c->m->weights_path) {
		char real[PATH_MAX];
		const char *shown;
		bool present;
		if ((st = locate(c, path, real, &shown, &present)))
			return st;
		if (present)
			ali_diag_add(c->d, AL_SEV_WARNING, shown, UINT64_MAX, NULL, NULL,
				    "a second ML Program stage with weights: anelint reads the weights "
				    "of the first (%s) only", c->m->weights_path);
		return AL_OK;
	}
	if (c->m->n_maps >= AL_MAX_MAPS)
		return fail(c, AL_E_IO, c->dir, UINT64_MAX, "too many mapped files");
	/* kept open: blob metadata is read with pread (ali_weights_meta) */
	st = ali_mlmodelc_map_open(&f, c->m, c->dir, path, c->d);
	if (st || !f.present)
		return st;
	c->m->maps[c->m->n_maps++] = f.map;
	c->m->weights_rel = ali_arena_strndup(&c->m->arena, path, strlen(path));
	return ali_weights_attach(c->m, f.map.s, f.shown, c->d);
}

static enum al_status build_pipeline(struct cc *c, const char *rel, int depth, uint32_t type,
				     struct al_buf *model)
{
	struct al_buf pipe = {0};
	enum al_status st = AL_OK;
	int i;
	for (i = 0; i < 1000; i++) {
		char sub[PATH_MAX + 16], path[PATH_MAX + 48], real[PATH_MAX];
		snprintf(sub, sizeof sub, "%s%smodel%d", rel, *rel ? "/" : "", i);
		snprintf(path, sizeof path, "%s/coremldata.bin", sub);
		const char *shown;
		bool present;
		if ((st = locate(c, path, real, &shown, &present)) || !present)
			break;
		struct al_buf stage = {0};
		st = build(c, sub, depth + 1, &stage);
		if (st == AL_OK)
			ali_buf_len(&pipe, 1, stage.p, stage.n);
		ali_buf_free(&stage);
		if (st)
			break;
	}
	for (int k = 0; st == AL_OK && k < i; k++) {
		char name[24];
		snprintf(name, sizeof name, "model%d", k);
		ali_buf_str(&pipe, 2, name);
	}
	if (st == AL_OK && i == 0)
		ali_diag_add(c->d, AL_SEV_WARNING, c->dir, UINT64_MAX, NULL, NULL,
			    "compiled pipeline without stage directories (model0/, ...)");
	if (st == AL_OK) {
		if (type == AL_MODEL_FIELD_pipeline) {
			ali_buf_len(model, type, pipe.p, pipe.n);
		} else { /* PipelineClassifier / PipelineRegressor: pipeline = 1 */
			struct al_buf holder = {0};
			ali_buf_len(&holder, 1, pipe.p, pipe.n);
			ali_buf_len(model, type, holder.p, holder.n);
			if (holder.failed)
				st = AL_E_NOMEM;
			ali_buf_free(&holder);
		}
	}
	if (pipe.failed)
		st = AL_E_NOMEM;
	ali_buf_free(&pipe);
	return st;
}

/* One compiled model directory (the root, or a stage) into a Model message. */
static enum al_status build(struct cc *c, const char *rel, int depth, struct al_buf *out)
{
	if (depth > AL_MAX_DEPTH)
		return fail(c, AL_E_FORMAT, c->dir, UINT64_MAX, "pipeline stages nested deeper than %d",
			    AL_MAX_DEPTH);
	struct al_mlmodelc_file f;
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s%scoremldata.bin", rel, *rel ? "/" : "");
	enum al_status st = ali_mlmodelc_map(&f, c->m, c->dir, path, c->d);
	if (st)
		return st;
	if (!f.present)
		return fail(c, AL_E_IO, f.shown, UINT64_MAX,
			    "not a compiled model: coremldata.bin is missing");
	struct cdata cd;
	st = read_cdata(c, f.map.s, f.shown, &cd);
	if (st) {
		ali_unmap(&f.map);
		return st;
	}
	read_metadata(c, rel, &c->m->compiled);
	c->m->compiled.n_stages++;
	if (cd.model.p) { /* "spec": coremldata.bin carries the whole Model */
		ali_buf_put(out, cd.model.p, cd.model.n);
		ali_unmap(&f.map);
		return out->failed ? AL_E_NOMEM : AL_OK;
	}
	if (cd.spec)
		ali_buf_uint(out, 1, cd.spec);
	if (cd.desc.n)
		ali_buf_len(out, 2, cd.desc.p, cd.desc.n);
	char kind[64];
	size_t kl = 0;
	for (size_t i = 0; i < cd.kind.n && kl < sizeof kind - 1; i++)
		kind[kl++] = cd.kind.p[i] >= 0x20 && cd.kind.p[i] < 0x7f ? (char)cd.kind.p[i] : '?';
	kind[kl] = '\0';
	ali_unmap(&f.map);
	switch (cd.type) {
	case AL_MODEL_FIELD_mlProgram:
		st = build_mil(c, rel, out);
		break;
	case AL_MODEL_FIELD_neuralNetwork: case AL_MODEL_FIELD_neuralNetworkClassifier:
	case AL_MODEL_FIELD_neuralNetworkRegressor: {
		struct al_buf nn = {0};
		st = ali_espresso_build(c->m, c->dir, rel, cd.spec, &nn, c->d);
		if (st == AL_OK)
			ali_buf_len(out, cd.type, nn.p, nn.n);
		if (nn.failed)
			st = AL_E_NOMEM;
		ali_buf_free(&nn);
		break;
	}
	case AL_MODEL_FIELD_pipeline: case AL_MODEL_FIELD_pipelineClassifier:
	case AL_MODEL_FIELD_pipelineRegressor:
		st = build_pipeline(c, rel, depth, cd.type, out);
		break;
	default:
		if (cd.type < 1 || cd.type >= (1u << 29))
			return fail(c, AL_E_FORMAT, f.shown, 0,
				    "coremldata.bin: model type code %u is not a Core ML model type",
				    cd.type);
		/* the parameters stay in coremldata.bin's compiled form: the model is
		 * named and described, its contents are not read */
		ali_buf_len(out, cd.type, "", 0);
		ali_diag_add(c->d, AL_SEV_WARNING, f.shown, 0, NULL, NULL,
			    "compiled model of type code %u (%s): its parameters are in the compiled "
			    "binary form, which anelint does not read", cd.type, kind);
		break;
	}
	return st ? st : out->failed ? AL_E_NOMEM : AL_OK;
}

enum al_status ali_load_compiled(struct al_model *m, const char *dir, al_diags *d)
{
	size_t len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		len--;
	struct cc c = {.m = m, .d = d};
	c.dir = ali_arena_strndup(&m->arena, dir, len);
	if (!c.dir)
		return AL_E_NOMEM;
	if (!realpath(c.dir, c.real))
		return fail(&c, AL_E_IO, c.dir, UINT64_MAX, "cannot open: %s", strerror(errno));
	const char *base = strrchr(c.dir, '/');
	base = base ? base + 1 : c.dir;
	if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || !*base) {
		base = strrchr(c.real, '/');
		base = base && base[1] ? base + 1 : c.real;
	}
	m->compiled.is_compiled = true;
	struct al_buf model = {0};
	enum al_status st = build(&c, "", 0, &model);
	if (st == AL_OK && model.failed)
		st = AL_E_NOMEM;
	if (st) {
		ali_buf_free(&model);
		return st;
	}
	uint8_t *bytes = model.n ? ali_arena_alloc(&m->arena, model.n) : NULL;
	if (model.n && !bytes) {
		ali_buf_free(&model);
		return AL_E_NOMEM;
	}
	if (model.n)
		memcpy(bytes, model.p, model.n);
	size_t n = model.n;
	ali_buf_free(&model);
	/* diagnostics of the Model walk name the directory: their offsets are in
	 * the message rebuilt here, not in a file */
	const char *file = ali_arena_printf(&m->arena, "%s (rebuilt model)", c.dir);
	if (!file)
		return AL_E_NOMEM;
	al_diags *tmp = al_diags_new();
	if (!tmp)
		return AL_E_NOMEM;
	st = ali_load_model_message(m, (al_span){bytes, n}, file, base, tmp);
	ali_espresso_finish(m, tmp, d);
	al_diags_free(tmp);
	return st;
}

const char *ali_compiled_unrunnable(const struct al_model *m)
{
	if (!m || !m->compiled.is_compiled)
		return NULL;
	for (size_t i = 0; i < m->n_subs; i++)
		if (m->subs[i]->world == AL_WORLD_NN)
			return "a NeuralNetwork compiled by espresso keeps its weights in "
			       "model.espresso.weights, not in its layers: anelint runs compiled ML "
			       "Programs only";
	return NULL;
}
