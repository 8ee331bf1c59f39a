/* SPDX-License-Identifier: MIT */
/* test_mlmodel.c: the Model message loader (src/mlmodel.c) on models built
 * byte by byte here (two layers, features, metadata, weights), on every
 * truncation of them, on garbage, on nesting bombs and under failing
 * allocations; then on a few corpus models when the shared corpus is present.
 * It does not cover ML Programs (mil.c) or packages (mlpackage.c). */
#include "testutil.h"
#include "pbwrite.h"

#include "analysis.h"

/* ================================================================ helpers */

struct loaded {
	struct al_model *m;
	al_diags *d;
	enum al_status st;
};

static struct loaded load_bytes(const uint8_t *p, size_t n)
{
	struct loaded r;
	r.d = al_diags_new();
	r.m = ali_calloc(1, sizeof *r.m);
	assert_non_null(r.d);
	assert_non_null(r.m);
	r.st = ali_load_model_message(r.m, (al_span){p, n}, "mem.mlmodel", "mem.mlmodel", r.d);
	return r;
}

static void unload(struct loaded *r)
{
	al_model_free(r->m);
	al_diags_free(r->d);
}

/* The first diagnostic of severity sev, or NULL. */
static const struct al_diag *first_diag(const al_diags *d, enum al_severity sev)
{
	for (size_t i = 0; i < al_diags_count(d); i++)
		if (al_diags_get(d, i)->severity == sev)
			return al_diags_get(d, i);
	return NULL;
}

static bool starts_with(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ================================================================ the hand-built model */

/* Layer 0: convolution with 8 fp32 weights (packed) and 4 fp16 bias values.
 * Layer 1: ReLU activation. Kept for byte comparisons. */
static struct buf layer0, layer1;

static struct buf build_model(void)
{
	struct buf wt = {0}, bias = {0}, conv = {0}, act = {0}, relu = {0}, net = {0};
	float w[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	put_bytes(&wt, 1, w, sizeof w);
	uint8_t h[8] = {0};
	put_bytes(&bias, 2, h, sizeof h);
	put_uint(&conv, 1, 4);
	put_msg(&conv, 90, &wt);
	put_msg(&conv, 91, &bias);

	free(layer0.p);
	free(layer1.p);
	layer0 = (struct buf){0};
	layer1 = (struct buf){0};
	put_str(&layer0, 1, "conv");
	put_str(&layer0, 2, "x");
	put_str(&layer0, 3, "c");
	put_msg(&layer0, 100, &conv);
	put_bytes(&relu, 10, NULL, 0);
	put_str(&layer1, 1, "relu");
	put_str(&layer1, 2, "c");
	put_str(&layer1, 3, "y");
	put_msg(&act, 10, &relu); /* ActivationParams { ReLU {} } */
	put_msg(&layer1, 130, &act);

	put_bytes(&net, 1, layer0.p, layer0.n);
	put_bytes(&net, 1, layer1.p, layer1.n);
	put_uint(&net, 5, 1); /* EXACT_ARRAY_MAPPING */

	/* input x: multiArray fp32 [1,3,8,8] with a range on H and W */
	struct buf arr = {0}, ranges = {0}, type = {0}, feat = {0}, desc = {0};
	int64_t shape[] = {1, 3, 8, 8};
	put_packed(&arr, 1, shape, 4);
	put_uint(&arr, 2, 65568);
	for (int i = 0; i < 4; i++) {
		struct buf r = {0};
		put_uint(&r, 1, i < 2 ? (uint64_t)shape[i] : 8);
		put_uint(&r, 2, i < 2 ? (uint64_t)shape[i] : (uint64_t)-1); /* -1: unbounded */
		put_msg(&ranges, 1, &r);
	}
	put_msg(&arr, 31, &ranges);
	put_msg(&type, 5, &arr);
	put_str(&feat, 1, "x");
	put_str(&feat, 2, "the input");
	put_msg(&feat, 3, &type);
	put_msg(&desc, 1, &feat);

	/* input img: GRAYSCALE_FLOAT16 64x32 with two enumerated sizes, optional */
	struct buf img = {0}, sizes = {0};
	put_uint(&img, 1, 64);
	put_uint(&img, 2, 32);
	put_uint(&img, 3, 40);
	for (int i = 1; i <= 2; i++) {
		struct buf sz = {0};
		put_uint(&sz, 1, 64u * (unsigned)i);
		put_uint(&sz, 2, 32u * (unsigned)i);
		put_msg(&sizes, 1, &sz);
	}
	put_msg(&img, 21, &sizes);
	put_msg(&type, 4, &img);
	put_uint(&type, 1000, 1);
	put_str(&feat, 1, "img");
	put_msg(&feat, 3, &type);
	put_msg(&desc, 1, &feat);

	/* output y: fp16 with enumerated shapes, the last one short (padded with -1) */
	struct buf shapes = {0};
	int64_t s0[] = {1, 4, 8, 8}, s1[] = {1, 4, 16, 16}, s2[] = {2};
	struct buf sh = {0};
	put_packed(&sh, 1, s0, 4);
	put_msg(&shapes, 1, &sh);
	put_packed(&sh, 1, s1, 4);
	put_msg(&shapes, 1, &sh);
	put_packed(&sh, 1, s2, 1);
	put_msg(&shapes, 1, &sh);
	put_packed(&arr, 1, s0, 4);
	put_uint(&arr, 2, 65552);
	put_msg(&arr, 21, &shapes);
	put_msg(&type, 5, &arr);
	put_str(&feat, 1, "y");
	put_msg(&feat, 3, &type);
	put_msg(&desc, 10, &feat);

	struct buf meta = {0}, kv = {0};
	put_str(&meta, 1, "a test model");
	put_str(&meta, 3, "anelint");
	put_str(&kv, 1, "key");
	put_str(&kv, 2, "value");
	put_msg(&meta, 100, &kv);
	put_msg(&desc, 100, &meta);

	struct buf model = {0};
	put_uint(&model, 1, 4);
	put_msg(&model, 2, &desc);
	put_msg(&model, 500, &net);
	return model;
}

static void test_hand_built(void **state)
{
	(void)state;
	struct buf b = build_model();
	struct loaded r = load_bytes(b.p, b.n);
	assert_int_equal(r.st, AL_OK);
	assert_int_equal(al_diags_count(r.d), 0);
	assert_int_equal(al_model_count(r.m), 1);
	const struct al_submodel *s = al_model_get(r.m, 0);
	assert_string_equal(s->type, "neuralNetwork");
	assert_int_equal(s->world, AL_WORLD_NN);
	assert_int_equal(s->spec_version, 4);
	assert_int_equal(s->offset, 0);
	assert_int_equal(s->depth, 0);
	assert_string_equal(s->path, "mem.mlmodel");
	assert_string_equal(s->file, "mem.mlmodel");
	assert_int_equal(s->array_mapping, 1);
	assert_int_equal(s->image_mapping, 0);
	assert_string_equal(s->short_description, "a test model");
	assert_string_equal(s->author, "anelint");
	assert_null(s->license);
	assert_int_equal(s->n_user_defined, 1);
	assert_string_equal(s->user_defined[0].key, "key");
	assert_string_equal(s->user_defined[0].value, "value");

	/* features */
	assert_int_equal(s->n_inputs, 2);
	const struct al_feature *x = &s->inputs[0];
	assert_string_equal(x->name, "x");
	assert_string_equal(x->description, "the input");
	assert_int_equal(x->kind, AL_FEAT_MULTIARRAY);
	assert_int_equal(x->dtype, AL_DT_FP32);
	assert_false(x->optional);
	assert_int_equal(x->rank, 4);
	assert_int_equal(x->shape[3], 8);
	assert_int_equal(x->flex, AL_FLEX_RANGE);
	const int64_t xr[] = {1, 1, 3, 3, 8, -1, 8, -1};
	for (int i = 0; i < 8; i++)
		assert_int_equal(x->flex_values[i], xr[i]);
	const struct al_feature *img = &s->inputs[1];
	assert_int_equal(img->kind, AL_FEAT_IMAGE);
	assert_true(img->optional);
	assert_int_equal(img->dtype, AL_DT_FP16);
	assert_int_equal(img->color_space, 40);
	assert_int_equal(img->rank, 2);
	assert_int_equal(img->shape[0], 32);
	assert_int_equal(img->shape[1], 64);
	assert_int_equal(img->flex, AL_FLEX_ENUMERATED);
	assert_int_equal(img->n_shapes, 2);
	const int64_t ir[] = {32, 64, 64, 128};
	for (int i = 0; i < 4; i++)
		assert_int_equal(img->flex_values[i], ir[i]);
	assert_int_equal(s->n_outputs, 1);
	const struct al_feature *y = &s->outputs[0];
	assert_int_equal(y->dtype, AL_DT_FP16);
	assert_int_equal(y->flex, AL_FLEX_ENUMERATED);
	assert_int_equal(y->n_shapes, 3);
	assert_int_equal(y->rank, 4);
	assert_int_equal(y->flex_values[4 + 2], 16);
	assert_int_equal(y->flex_values[8 + 0], 2);
	assert_int_equal(y->flex_values[8 + 1], -1);

	/* graph */
	assert_int_equal(s->n_graphs, 1);
	const struct al_graph *g = s->graphs[0];
	assert_int_equal(g->n_nodes, 2);
	assert_string_equal(g->block, "");
	assert_null(g->parent);
	assert_null(g->function);
	const struct al_node *n0 = &g->nodes[0], *n1 = &g->nodes[1];
	assert_string_equal(n0->name, "conv");
	assert_string_equal(n0->type, "convolution");
	assert_int_equal(n0->kind, ali_nn_kind_by_field(100));
	assert_int_equal(n0->n_inputs, 1);
	assert_string_equal(n0->inputs[0], "x");
	assert_string_equal(n0->outputs[0], "c");
	assert_string_equal(n0->path, "neuralNetwork.layers[0]");
	assert_ptr_equal(n0->owner, g);
	assert_int_equal(n1->index, 1);
	assert_string_equal(n1->type, "activation");
	assert_string_equal(n1->path, "neuralNetwork.layers[1]");
	/* offsets and source spans point at the layer bytes in the file */
	assert_int_equal(al_src(n0)->msg.n, layer0.n);
	assert_memory_equal(b.p + n0->offset, layer0.p, layer0.n);
	assert_memory_equal(b.p + n1->offset, layer1.p, layer1.n);
	assert_ptr_equal(al_src(n0)->sub, s);
	uint64_t cv;
	assert_true(pb_get_varint(al_src(n0)->params, 1, &cv)); /* outputChannels */
	assert_int_equal(cv, 4);

	/* weights: lengths only */
	assert_int_equal(s->weights.fp32, 32);
	assert_int_equal(s->weights.fp16, 8);
	assert_int_equal(s->weights.quantized, 0);
	assert_int_equal(s->weights.n_blobs, 2);
	unload(&r);
	free(b.p);
}

/* Every proper prefix of the model fails cleanly with an error and no crash. */
static void test_truncated(void **state)
{
	(void)state;
	struct buf b = build_model();
	for (size_t n = 1; n < b.n; n++) {
		uint8_t *copy = malloc(n); /* exact size, so ASan sees any overread */
		assert_non_null(copy);
		memcpy(copy, b.p, n);
		struct loaded r = load_bytes(copy, n);
		assert_int_not_equal(r.st, AL_OK);
		assert_int_equal(r.st, AL_E_FORMAT);
		assert_true(al_diags_errors(r.d) >= 1);
		unload(&r);
		free(copy);
	}
	/* cut inside the network: the error names the neuralNetwork field */
	struct loaded r = load_bytes(b.p, b.n - 3);
	const struct al_diag *e = first_diag(r.d, AL_SEV_ERROR);
	assert_non_null(e);
	assert_string_equal(e->where, "neuralNetwork");
	assert_string_equal(e->file, "mem.mlmodel");
	assert_non_null(strstr(e->msg, "runs past the end of the file"));
	unload(&r);
	free(b.p);
}

/* A layer whose convolution claims 4e9 bytes: the path goes down to the field. */
static void test_bad_length_in_layer(void **state)
{
	(void)state;
	struct buf layer = {0}, net = {0}, model = {0};
	put_str(&layer, 1, "conv_12");
	put_tag(&layer, 100, PB_LEN);
	put_varint(&layer, 4000000000u);
	put_raw(&layer, "\x08\x01", 2);
	put_msg(&net, 1, &layer);
	put_uint(&model, 1, 4);
	put_msg(&model, 500, &net);
	struct loaded r = load_bytes(model.p, model.n);
	assert_int_equal(r.st, AL_E_FORMAT);
	const struct al_diag *e = first_diag(r.d, AL_SEV_ERROR);
	assert_non_null(e);
	assert_string_equal(e->where, "neuralNetwork.layers[0].convolution");
	assert_string_equal(e->node, "conv_12");
	assert_string_equal(e->msg, "truncated field (length 4000000000 runs past the end of the file)");
	/* the offset is the convolution tag's: after the model, network and layer headers */
	assert_int_equal(model.p[e->offset], 0xA2);
	assert_int_equal(model.p[e->offset + 1], 0x06);
	unload(&r);
	free(model.p);
}

static void test_not_a_model(void **state)
{
	(void)state;
	struct loaded r = load_bytes(NULL, 0);
	assert_int_equal(r.st, AL_E_FORMAT);
	assert_true(starts_with(first_diag(r.d, AL_SEV_ERROR)->msg, "not a Core ML model"));
	assert_int_equal(al_model_count(r.m), 0);
	unload(&r);

	/* random bytes */
	uint8_t junk[4096];
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof junk; i++) {
		x = x * 1103515245u + 12345u;
		junk[i] = (uint8_t)(x >> 16);
	}
	r = load_bytes(junk, sizeof junk);
	assert_int_equal(r.st, AL_E_FORMAT);
	assert_true(starts_with(first_diag(r.d, AL_SEV_ERROR)->msg, "not a Core ML model"));
	unload(&r);

	/* text */
	const char *text = "{\"hello\": \"this is JSON, not a model\"}\n";
	r = load_bytes((const uint8_t *)text, strlen(text));
	assert_int_equal(r.st, AL_E_FORMAT);
	assert_true(starts_with(first_diag(r.d, AL_SEV_ERROR)->msg, "not a Core ML model"));
	unload(&r);

	/* a version and a description but no type */
	struct buf m = {0};
	put_uint(&m, 1, 4);
	put_bytes(&m, 2, NULL, 0);
	r = load_bytes(m.p, m.n);
	assert_int_equal(r.st, AL_E_FORMAT);
	assert_string_equal(first_diag(r.d, AL_SEV_ERROR)->msg, "model has no type");
	unload(&r);
	free(m.p);
}

/* Unknown model and layer types load with warnings. */
static void test_unknown_types(void **state)
{
	(void)state;
	struct buf layer = {0}, net = {0}, m = {0};
	put_str(&layer, 1, "future");
	put_bytes(&layer, 9999, "\x08\x01", 2);
	put_msg(&net, 1, &layer);
	put_uint(&m, 1, 11);
	put_msg(&m, 500, &net);
	struct loaded r = load_bytes(m.p, m.n);
	assert_int_equal(r.st, AL_OK);
	const struct al_node *n = &al_model_get(r.m, 0)->graphs[0]->nodes[0];
	assert_string_equal(n->type, "unknown(9999)");
	assert_int_equal(n->kind, -1);
	assert_non_null(first_diag(r.d, AL_SEV_WARNING));
	assert_int_equal(al_diags_errors(r.d), 0);
	unload(&r);
	free(m.p);

	m = (struct buf){0};
	put_uint(&m, 1, 11);
	put_bytes(&m, 777, "\x08\x01", 2);
	r = load_bytes(m.p, m.n);
	assert_int_equal(r.st, AL_OK);
	assert_string_equal(al_model_get(r.m, 0)->type, "unknown(777)");
	assert_int_equal(al_model_get(r.m, 0)->world, AL_WORLD_OTHER);
	assert_non_null(first_diag(r.d, AL_SEV_WARNING));
	unload(&r);
	free(m.p);
}

/* A loop nested `levels` deep: NeuralNetwork { layer { loop { bodyNetwork ... } } }. */
static struct buf build_deep_loops(int levels)
{
	struct buf net = {0};
	put_str(&net, 99, "innermost"); /* an unknown field keeps the message non-empty */
	for (int i = 0; i < levels; i++) {
		struct buf loop = {0}, layer = {0}, outer = {0};
		put_msg(&loop, 4, &net);
		put_str(&layer, 1, "loop");
		put_msg(&layer, 615, &loop);
		put_msg(&outer, 1, &layer);
		net = outer;
	}
	struct buf m = {0};
	put_uint(&m, 1, 4);
	put_msg(&m, 500, &net);
	return m;
}

/* A pipeline nested `levels` deep, ending in an identity model. */
static struct buf build_deep_pipelines(int levels)
{
	struct buf model = {0};
	put_uint(&model, 1, 4);
	put_bytes(&model, 900, NULL, 0);
	for (int i = 0; i < levels; i++) {
		struct buf pipe = {0}, outer = {0};
		put_msg(&pipe, 1, &model);
		put_uint(&outer, 1, 4);
		put_msg(&outer, 202, &pipe);
		model = outer;
	}
	return model;
}

static void test_nesting(void **state)
{
	(void)state;
	struct buf m = build_deep_loops(AL_MAX_DEPTH);
	struct loaded r = load_bytes(m.p, m.n);
	assert_int_equal(r.st, AL_OK);
	const struct al_graph *g = al_model_get(r.m, 0)->graphs[0];
	for (int i = 0; i < 3; i++)
		g = g->nodes[0].sub[0];
	assert_int_equal(g->depth, 3);
	assert_string_equal(g->block, "layers[0].loop.bodyNetwork.layers[0].loop.bodyNetwork."
				      "layers[0].loop.bodyNetwork");
	assert_string_equal(g->nodes[0].path,
			    "neuralNetwork.layers[0].loop.bodyNetwork.layers[0].loop.bodyNetwork."
			    "layers[0].loop.bodyNetwork.layers[0]");
	assert_ptr_equal(g->parent_node->sub[0], g);
	unload(&r);
	free(m.p);

	m = build_deep_loops(AL_MAX_DEPTH + 1);
	r = load_bytes(m.p, m.n);
	assert_int_equal(r.st, AL_E_FORMAT);
	assert_string_equal(first_diag(r.d, AL_SEV_ERROR)->msg, "nesting deeper than 32");
	unload(&r);
	free(m.p);

	m = build_deep_pipelines(AL_MAX_DEPTH);
	r = load_bytes(m.p, m.n);
	assert_int_equal(r.st, AL_OK);
	assert_int_equal(al_model_count(r.m), AL_MAX_DEPTH + 1);
	assert_string_equal(al_model_get(r.m, 2)->path, "mem.mlmodel:pipeline/model0:pipeline/model0");
	assert_int_equal(al_model_get(r.m, AL_MAX_DEPTH)->depth, AL_MAX_DEPTH);
	assert_string_equal(al_model_get(r.m, AL_MAX_DEPTH)->type, "identity");
	unload(&r);
	free(m.p);

	m = build_deep_pipelines(AL_MAX_DEPTH + 1);
	r = load_bytes(m.p, m.n);
	assert_int_equal(r.st, AL_E_FORMAT);
	assert_string_equal(first_diag(r.d, AL_SEV_ERROR)->msg, "nesting deeper than 32");
	unload(&r);
	free(m.p);
}

/* Fail the k-th allocation for k = 1, 2, ...: always a clean status, no leak. */
static void test_out_of_memory(void **state)
{
	(void)state;
	struct buf b = build_model();
	for (unsigned long k = 1;; k++) {
		al_diags *d = al_diags_new();
		struct al_model *m = ali_calloc(1, sizeof *m);
		assert_non_null(d);
		assert_non_null(m);
		ali_alloc_fail_after(k);
		enum al_status st = ali_load_model_message(m, (al_span){b.p, b.n}, "mem", "mem", d);
		ali_alloc_fail_after(0);
		al_model_free(m);
		al_diags_free(d);
		if (st == AL_OK)
			break;
		assert_int_equal(st, AL_E_NOMEM);
		assert_true(k < 1000);
	}
	free(b.p);
}

/* ================================================================ the corpus */

/* "<corpus>/<rel>", or NULL when the corpus is absent. (Not testutil.h's
 * corpus_file: gcc -O2 flags its unchecked snprintf with -Wformat-truncation.) */
static const char *corpus_path(const char *rel)
{
	static char buf[4096];
	const char *c = corpus_dir();
	if (!c)
		return NULL;
	int k = snprintf(buf, sizeof buf, "%s/%s", c, rel);
	return k > 0 && (size_t)k < sizeof buf ? buf : NULL;
}

static struct loaded open_corpus(const char *rel)
{
	struct loaded r = {0};
	const char *path = corpus_path(rel);
	struct stat st;
	if (!path || stat(path, &st) != 0) {
		r.st = AL_E_IO;
		return r;
	}
	r.d = al_diags_new();
	r.st = al_model_open(path, &r.m, r.d);
	return r;
}
#define OPEN_OR_SKIP(r, rel)                        \
	do {                                        \
		r = open_corpus(rel);               \
		if (r.st == AL_E_IO && !r.d)        \
			skip();                     \
	} while (0)

static void test_corpus_squeezenet(void **state)
{
	(void)state;
	struct loaded r;
	OPEN_OR_SKIP(r, "converted/squeezenet1_1__nn_ios13.mlmodel");
	assert_int_equal(r.st, AL_OK);
	assert_int_equal(al_diags_errors(r.d), 0);
	assert_int_equal(al_model_count(r.m), 1);
	const struct al_submodel *s = al_model_get(r.m, 0);
	assert_string_equal(s->type, "neuralNetworkClassifier");
	assert_int_equal(s->world, AL_WORLD_NN);
	assert_string_equal(s->path, "squeezenet1_1__nn_ios13.mlmodel");
	const struct al_graph *g = s->graphs[0];
	assert_int_equal(g->n_nodes, 65);
	int act = 0, conv = 0, concat = 0, pool = 0, reshape = 0;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const char *t = g->nodes[i].type;
		act += !strcmp(t, "activation");
		conv += !strcmp(t, "convolution");
		concat += !strcmp(t, "concat");
		pool += !strcmp(t, "pooling");
		reshape += !strcmp(t, "reshapeStatic");
	}
	assert_int_equal(act, 26);
	assert_int_equal(conv, 26);
	assert_int_equal(concat, 8);
	assert_int_equal(pool, 4);
	assert_int_equal(reshape, 1);
	assert_string_equal(g->nodes[3].path, "neuralNetworkClassifier.layers[3]");
	assert_true(s->weights.fp32 > 3000000);
	assert_int_equal(s->weights.fp16, 0);
	unload(&r);

	/* the same bytes cut in half: an error at the network field */
	const char *path = corpus_path("converted/squeezenet1_1__nn_ios13.mlmodel");
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	size_t n = (size_t)ftell(f) / 2;
	fseek(f, 0, SEEK_SET);
	uint8_t *half = malloc(n);
	assert_non_null(half);
	assert_int_equal(fread(half, 1, n, f), n);
	fclose(f);
	r = load_bytes(half, n);
	assert_int_equal(r.st, AL_E_FORMAT);
	const struct al_diag *e = first_diag(r.d, AL_SEV_ERROR);
	assert_string_equal(e->where, "neuralNetworkClassifier");
	assert_non_null(strstr(e->msg, "runs past the end of the file"));
	unload(&r);
	free(half);
}

static void test_corpus_gru_loop(void **state)
{
	(void)state;
	struct loaded r;
	OPEN_OR_SKIP(r, "converted/gru__nn_ios14.mlmodel");
	assert_int_equal(r.st, AL_OK);
	assert_int_equal(al_diags_errors(r.d), 0);
	const struct al_graph *g = al_model_get(r.m, 0)->graphs[0];
	const struct al_node *loop = NULL;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (!strcmp(g->nodes[i].type, "loop"))
			loop = &g->nodes[i];
	assert_non_null(loop);
	assert_int_equal(loop->n_sub, 2); /* conditionNetwork, bodyNetwork */
	const struct al_graph *body = loop->sub[1];
	char block[64];
	snprintf(block, sizeof block, "layers[%u].loop.bodyNetwork", loop->index);
	assert_string_equal(body->block, block);
	assert_ptr_equal(body->parent, g);
	assert_ptr_equal(body->parent_node, loop);
	assert_int_equal(body->depth, 1);
	assert_true(body->n_nodes > 0);
	char path[96];
	snprintf(path, sizeof path, "neuralNetwork.%s.layers[0]", block);
	assert_string_equal(body->nodes[0].path, path);
	assert_ptr_equal(body->nodes[0].owner, body);
	unload(&r);
}

static void test_corpus_pipeline(void **state)
{
	(void)state;
	struct loaded r;
	OPEN_OR_SKIP(r, "real/CreateML_ImageClassifier_pipeline.mlmodel");
	assert_int_equal(r.st, AL_OK);
	assert_int_equal(al_diags_errors(r.d), 0);
	assert_int_equal(al_model_count(r.m), 3);
	const struct al_submodel *root = al_model_get(r.m, 0);
	assert_string_equal(root->type, "pipelineClassifier");
	assert_int_equal(root->n_children, 2);
	assert_int_equal(root->world, AL_WORLD_OTHER);
	const struct al_submodel *a = al_model_get(r.m, 1), *b = al_model_get(r.m, 2);
	assert_string_equal(a->type, "visionFeaturePrint");
	assert_string_equal(b->type, "glmClassifier");
	assert_int_equal(a->depth, 1);
	assert_true(a->offset > 0 && b->offset > a->offset);
	assert_string_equal(a->path, "CreateML_ImageClassifier_pipeline.mlmodel:pipeline/model0");
	assert_int_equal(root->inputs[0].kind, AL_FEAT_IMAGE);
	unload(&r);
}

static void test_corpus_tree_ensemble(void **state)
{
	(void)state;
	struct loaded r;
	OPEN_OR_SKIP(r, "real/XGBoost_TreeEnsemble_dummy_v6.mlmodel");
	assert_int_equal(r.st, AL_OK);
	assert_int_equal(al_diags_errors(r.d), 0);
	const struct al_submodel *s = al_model_get(r.m, 0);
	assert_string_equal(s->type, "treeEnsembleClassifier");
	assert_int_equal(s->world, AL_WORLD_OTHER);
	assert_int_equal(s->n_inputs, 303);
	assert_int_equal(s->n_graphs, 0);
	unload(&r);
}

/* ================================================================ feature names */

/* FeatureDescription{name, multiArrayType{shape [4], FLOAT32}} as field num of o. */
static void put_feature4(struct buf *o, uint32_t num, const char *name)
{
	struct buf f = {0}, ft = {0}, at = {0};
	int64_t shape[1] = {4};
	put_packed(&at, 1, shape, 1);
	put_uint(&at, 2, 65568);
	put_msg(&ft, 5, &at);
	put_str(&f, 1, name);
	put_msg(&f, 3, &ft);
	put_msg(o, num, &f);
}

/* Model{spec, description (consumed), neuralNetwork{relu x -> y}}: loaded. */
static struct loaded load_with_desc(struct buf *desc, struct buf *model)
{
	struct buf net = {0}, act = {0};
	put_bytes(&act, 10, "", 0);
	layer(&net, "r", "x", "y", 130, &act);
	*model = (struct buf){0};
	put_uint(model, 1, 9);
	put_msg(model, 2, desc);
	put_msg(model, 500, &net);
	return load_bytes(model->p, model->n);
}

/* One case: features (kind letter i/o/s/I/O/S: top level / in functions[0],
 * name) -> the error's field path and message start, or NULL for none. */
static void feature_case(const char *const *feats, size_t n, const char *where, const char *msg)
{
	struct buf desc = {0}, fn = {0}, model;
	bool in_fn = false;
	for (size_t i = 0; i < n; i++) {
		char k = feats[i][0];
		const char *name = feats[i] + 1;
		if (k == 'i' || k == 'o' || k == 's')
			put_feature4(&desc, k == 'i' ? 1 : k == 'o' ? 10 : 13, name);
		else
			put_feature4(&fn, k == 'I' ? 2 : k == 'O' ? 3 : 6, name), in_fn = true;
	}
	if (in_fn) {
		put_str(&fn, 1, "main");
		put_msg(&desc, 20, &fn);
	}
	struct loaded r = load_with_desc(&desc, &model);
	if (!where) {
		assert_int_equal(r.st, AL_OK);
		assert_int_equal(al_diags_errors(r.d), 0);
	} else {
		assert_int_equal(r.st, AL_E_FORMAT);
		assert_int_equal(al_diags_errors(r.d), 1);
		const struct al_diag *e = first_diag(r.d, AL_SEV_ERROR);
		assert_string_equal(e->where, where);
		if (!starts_with(e->msg, msg))
			fail_msg("'%s' does not start with '%s'", e->msg, msg);
		assert_non_null(strstr(e->msg, "need distinct names"));
		/* the offset is the repeated feature's field: its name is in the next bytes */
		assert_true(e->offset < model.n);
		const char *name = strchr(e->msg, '\'') + 1;
		size_t len = (size_t)(strchr(name, '\'') - name);
		assert_non_null(memmem(model.p + e->offset, len + 8, name, len));
	}
	unload(&r);
	free(model.p);
}

/* Inputs, outputs and states of one description need distinct names (Core ML
 * refuses the rest, and split's per-part tables rely on it). */
static void test_feature_names(void **state)
{
	(void)state;
	static const char *const ok[] = {"ix", "oy", "sz", "ox2"};
	feature_case(ok, 4, NULL, NULL);
	static const char *const outs3[] = {"ix", "oy", "oy", "oy"};
	feature_case(outs3, 4, "description.output[1]", "output 'y' repeats the name of output 0");
	static const char *const ytyt[] = {"ix", "oy", "ot", "oy", "ot"};
	feature_case(ytyt, 5, "description.output[2]", "output 'y' repeats the name of output 0");
	static const char *const ins[] = {"ix", "ix", "oy"};
	feature_case(ins, 3, "description.input[1]", "input 'x' repeats the name of input 0");
	static const char *const io[] = {"ix", "oy", "ox"};
	feature_case(io, 3, "description.output[1]", "output 'x' repeats the name of input 0");
	static const char *const oi[] = {"oy", "ix", "iy"}; /* reported at the later field */
	feature_case(oi, 3, "description.input[1]", "input 'y' repeats the name of output 0");
	static const char *const st[] = {"ix", "oy", "sx"};
	feature_case(st, 3, "description.state[0]", "state 'x' repeats the name of input 0");
	static const char *const fn[] = {"Ix", "Oy", "Oy"};
	feature_case(fn, 3, "description.functions[0].output[1]",
		     "output 'y' repeats the name of output 0");
	static const char *const fns[] = {"Ix", "Oy", "Sy"};
	feature_case(fns, 3, "description.functions[0].state[0]",
		     "state 'y' repeats the name of output 0");

	/* many distinct names, then one repeat at the end: found, in n log n */
	enum { N = 20000 };
	const char **many = calloc(N + 2, sizeof *many);
	char (*names)[16] = calloc(N + 2, sizeof *names);
	assert_non_null(many);
	assert_non_null(names);
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof names[i], "i%d", i);
		many[i] = names[i];
	}
	strcpy(names[N], "oy");
	many[N] = names[N];
	feature_case(many, N + 1, NULL, NULL);
	strcpy(names[N + 1], "o12345");
	many[N + 1] = names[N + 1];
	feature_case(many, N + 2, "description.output[1]", "output '12345' repeats the name of input 12345");
	free(many);
	free(names);

	/* a long name is cut in the message, which stays one line */
	char *lng = malloc(6002);
	assert_non_null(lng);
	lng[0] = 'o';
	for (int i = 1; i < 6001; i++)
		lng[i] = i % 50 == 0 ? '\n' : 'a';
	lng[6001] = '\0';
	const char *const longs[] = {"ix", lng, lng};
	struct buf desc = {0}, model;
	for (int i = 0; i < 3; i++)
		put_feature4(&desc, longs[i][0] == 'i' ? 1 : 10, longs[i] + 1);
	struct loaded r = load_with_desc(&desc, &model);
	assert_int_equal(r.st, AL_E_FORMAT);
	const struct al_diag *e = first_diag(r.d, AL_SEV_ERROR);
	assert_non_null(strstr(e->msg, "...' repeats the name of output 0"));
	assert_true(strlen(e->msg) < 400);
	assert_null(strchr(e->msg, '\n'));
	unload(&r);
	free(model.p);
	free(lng);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_built),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bad_length_in_layer),
		cmocka_unit_test(test_not_a_model),
		cmocka_unit_test(test_unknown_types),
		cmocka_unit_test(test_nesting),
		cmocka_unit_test(test_out_of_memory),
		cmocka_unit_test(test_feature_names),
		cmocka_unit_test(test_corpus_squeezenet),
		cmocka_unit_test(test_corpus_gru_loop),
		cmocka_unit_test(test_corpus_pipeline),
		cmocka_unit_test(test_corpus_tree_ensemble),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	free(layer0.p);
	free(layer1.p);
	return rc;
}
