/* SPDX-License-Identifier: MIT */
/* test_miltext.c: the MIL text reader and writer, and compiled models.
 *
 * Round trip: every ML Program of the fixtures (and, when ../shared/corpus is
 * present, of every corpus .mlpackage and .mlmodelc) is written as MIL text,
 * read back into a Program message and loaded into a second model; the two IRs
 * must agree op for op (type, name, outputs and their types, every parameter
 * binding, every attribute value, blob references by offset), and writing the
 * second gives the same text. The compiled fixtures' model.mil read and written
 * again equals the file up to indentation. Bad text gives one located error. */
#include "testutil.h"

#include "miltext.h"
#include "mlmodelc.h"

#include <dirent.h>
#include <math.h>

/* ================================================================ IR comparison */

static void same_type(const struct al_ttype *a, const struct al_ttype *b)
{
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->dtype, b->dtype);
	assert_int_equal(a->rank, b->rank);
	for (int i = 0; i < a->rank && a->dims && b->dims; i++)
		assert_int_equal(a->dims[i], b->dims[i]);
}

/* Two Value messages hold the same value (not necessarily the same bytes:
 * the text picks one TensorValue encoding per dtype). */
static void same_value(al_span a, al_span b)
{
	struct al_mil_value va, vb;
	assert_true(ali_mil_value_read(a, &va));
	assert_true(ali_mil_value_read(b, &vb));
	assert_int_equal(va.kind, vb.kind);
	assert_int_equal(va.dtype, vb.dtype);
	assert_int_equal(va.rank, vb.rank);
	for (int i = 0; i < va.rank; i++)
		assert_int_equal(va.dims[i], vb.dims[i]);
	if (va.kind == AL_MV_BLOB) {
		assert_int_equal(va.blob_offset, vb.blob_offset);
		assert_int_equal(va.blob_in_weights, vb.blob_in_weights);
	} else if (va.kind == AL_MV_TENSOR) {
		long na = ali_mil_value_floats(a, NULL, 0), nb = ali_mil_value_floats(b, NULL, 0);
		assert_int_equal(na, nb);
		if (na > 0) {
			float *x = malloc((size_t)na * sizeof *x), *y = malloc((size_t)na * sizeof *y);
			assert_non_null(x);
			assert_non_null(y);
			ali_mil_value_floats(a, x, (size_t)na);
			ali_mil_value_floats(b, y, (size_t)na);
			for (long i = 0; i < na; i++)
				assert_true(memcmp(&x[i], &y[i], sizeof x[i]) == 0 || (isnan(x[i]) && isnan(y[i])));
			free(x);
			free(y);
		}
	} else if (va.kind == AL_MV_STRINGS) {
		al_span sa[64], sb[64];
		long na = ali_mil_value_strings(a, sa, 64), nb = ali_mil_value_strings(b, sb, 64);
		assert_int_equal(na, nb);
		for (long i = 0; i < na && i < 64; i++) {
			assert_int_equal(sa[i].n, sb[i].n);
			assert_memory_equal(sa[i].p, sb[i].p, sa[i].n);
		}
	}
}

/* The attribute keys of op n, in order. */
static size_t attr_keys(const struct al_node *n, al_span *keys, size_t max)
{
	struct pb_iter it;
	struct pb_field f;
	size_t k = 0;
	pb_iter_init(&it, al_src(n)->msg);
	while (pb_next(&it, &f))
		if (f.num == 5 && f.wire == PB_LEN && k < max)
			pb_get_bytes(f.data, 1, &keys[k++]);
	return k;
}

static size_t n_compared;

static void same_graph(const struct al_graph *a, const struct al_graph *b)
{
	assert_int_equal(a->n_nodes, b->n_nodes);
	struct al_mil_block_io ia, ib;
	assert_true(ali_mil_block_io(a, &ia));
	assert_true(ali_mil_block_io(b, &ib));
	assert_int_equal(ia.n_inputs, ib.n_inputs);
	for (uint32_t i = 0; i < ia.n_inputs; i++) {
		assert_string_equal(ia.inputs[i], ib.inputs[i]);
		same_type(&ia.in_types[i], &ib.in_types[i]);
	}
	assert_int_equal(ia.n_outputs, ib.n_outputs);
	for (uint32_t i = 0; i < ia.n_outputs; i++)
		assert_string_equal(ia.outputs[i], ib.outputs[i]);
	for (uint32_t i = 0; i < a->n_nodes; i++) {
		const struct al_node *x = &a->nodes[i], *y = &b->nodes[i];
		n_compared++;
		assert_string_equal(x->type, y->type);
		assert_string_equal(x->name, y->name);
		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->n_outputs, y->n_outputs);
		for (uint32_t o = 0; o < x->n_outputs; o++) {
			assert_string_equal(x->outputs[o], y->outputs[o]);
			same_type(&x->out_types[o], &y->out_types[o]);
		}
		assert_int_equal(x->n_inputs, y->n_inputs);
		for (uint32_t k = 0; k < x->n_inputs; k++)
			assert_string_equal(x->inputs[k], y->inputs[k]);
		const struct al_node_src *sx = al_src(x), *sy = al_src(y);
		assert_int_equal(sx->n_mil_args, sy->n_mil_args);
		for (uint32_t k = 0; k < sx->n_mil_args; k++) {
			const char *p = sx->mil_args[k].param;
			assert_string_equal(p, sy->mil_args[k].param);
			uint32_t nb = ali_mil_param_count(x, p);
			assert_int_equal(nb, ali_mil_param_count(y, p));
			for (uint32_t j = 0; j < nb; j++) {
				al_span bx, by;
				int kx = ali_mil_param_binding(x, p, j, &bx), ky = ali_mil_param_binding(y, p, j, &by);
				assert_int_equal(kx, ky);
				if (kx == 1) {
					assert_int_equal(bx.n, by.n);
					assert_memory_equal(bx.p, by.p, bx.n);
				} else if (kx == 2) {
					same_value(bx, by);
				}
			}
		}
		al_span ka[64], kb[64];
		size_t na = attr_keys(x, ka, 64), nb = attr_keys(y, kb, 64);
		assert_int_equal(na, nb);
		for (size_t k = 0; k < na; k++) {
			char key[256];
			assert_int_equal(ka[k].n, kb[k].n);
			assert_memory_equal(ka[k].p, kb[k].p, ka[k].n);
			snprintf(key, sizeof key, "%.*s", (int)ka[k].n, (const char *)ka[k].p);
			al_span vx, vy;
			assert_true(ali_mil_attr(x, key, &vx));
			assert_true(ali_mil_attr(y, key, &vy));
			same_value(vx, vy);
		}
		assert_int_equal(x->n_sub, y->n_sub);
		for (uint32_t k = 0; k < x->n_sub; k++)
			same_graph(x->sub[k], y->sub[k]);
	}
}

static char *write_text(al_span prog, size_t *n)
{
	struct al_buf b = {0};
	assert_true(ali_mil_text_write(prog, &b));
	ali_buf_put(&b, "", 1);
	assert_false(b.failed);
	*n = b.n - 1;
	return (char *)b.p;
}

/* protobuf -> text -> protobuf -> IR on every ML Program of the model at path;
 * the number of programs compared. */
static int roundtrip(const char *path)
{
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	enum al_status st = al_model_open(path, &m, d);
	if (st != AL_OK) {
		print_message("cannot open %s: %s\n", path,
			      al_diags_count(d) ? al_diags_get(d, 0)->msg : "?");
		al_diags_free(d);
		return 0;
	}
	int programs = 0;
	for (size_t i = 0; i < al_model_count(m); i++) {
		const struct al_submodel *s = al_model_get(m, i);
		al_span prog;
		if (!ali_mil_program_of(m, s, &prog))
			continue;
		size_t n1, n2;
		char *t1 = write_text(prog, &n1);
		struct al_buf pb = {0};
		al_diags *d2 = al_diags_new();
		st = ali_mil_text_parse((al_span){(const uint8_t *)t1, n1}, "rt.mil", &pb, d2);
		if (st != AL_OK)
			print_message("%s: %s\n", path, al_diags_get(d2, 0)->msg);
		assert_int_equal(st, AL_OK);
		/* a second model over the same weights */
		struct al_model *m2 = ali_calloc(1, sizeof *m2);
		assert_non_null(m2);
		m2->path = "rt";
		m2->weights = m->weights;
		m2->weights_path = m->weights_path;
		struct al_submodel *s2 = ali_model_add_sub(m2);
		assert_non_null(s2);
		s2->world = AL_WORLD_MIL;
		s2->path = "rt";
		st = ali_load_mil_program(m2, s2, (al_span){pb.p, pb.n}, 0, "rt", d2);
		assert_true(st == AL_OK || st == AL_E_UNSUPPORTED);
		assert_int_equal(s->n_functions, s2->n_functions);
		for (uint32_t f = 0; f < s->n_functions; f++) {
			assert_string_equal(s->functions[f], s2->functions[f]);
			assert_string_equal(s->opsets[f], s2->opsets[f]);
			same_graph(s->graphs[f], s2->graphs[f]);
		}
		assert_int_equal(s->weights.n_blobs, s2->weights.n_blobs);
		assert_int_equal(s->weights.fp16, s2->weights.fp16);
		assert_int_equal(s->weights.quantized, s2->weights.quantized);
		char *t2 = write_text((al_span){pb.p, pb.n}, &n2);
		assert_int_equal(n1, n2);
		assert_memory_equal(t1, t2, n1);
		ali_free(t1);
		ali_free(t2);
		ali_buf_free(&pb);
		al_model_free(m2);
		al_diags_free(d2);
		programs++;
	}
	al_model_free(m);
	al_diags_free(d);
	return programs;
}

static void test_roundtrip_fixtures(void **state)
{
	(void)state;
	static const char *const models[] = {
		"converted/lstm__mlp_ios17_fp16.mlpackage",
		"converted/transformer_encoder__mlp_ios17_fp16.mlpackage",
		"converted/gru__mlp_fp16.mlpackage",
		"crafted/mil_rules.mlpackage",
		"crafted/mil_shapes.mlpackage",
		"crafted/plan_mil_branches.mlpackage",
		"compiled/coremltools_add_model.mlmodelc",
		"compiled/fluidaudio_TokenDurationPrediction.mlmodelc",
		"compiled/fluidaudio_TransposeEncoder.mlmodelc",
		"compiled/silero_vad_palette_4bit.mlmodelc",
	};
	int n = 0;
	for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
		int k = roundtrip(fixture(models[i]));
		assert_true(k >= 1);
		n += k;
	}
	print_message("round trip: %d fixture programs, %zu ops compared\n", n, n_compared);
}

/* Every .mlpackage / .mlmodelc of the corpus folders. */
static void test_roundtrip_corpus(void **state)
{
	(void)state;
	if (!corpus_dir())
		skip();
	static const char *const dirs[] = {"converted", "modern", "real", "compiled"};
	int programs = 0, models = 0;
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		char dir[4096];
		snprintf(dir, sizeof dir, "%.4000s/%s", corpus_dir(), dirs[i]);
		DIR *dp = opendir(dir);
		if (!dp)
			continue;
		struct dirent *e;
		while ((e = readdir(dp))) {
			size_t l = strlen(e->d_name);
			if (!(l > 10 && (strcmp(e->d_name + l - 10, ".mlpackage") == 0 ||
					 strcmp(e->d_name + l - 9, ".mlmodelc") == 0)))
				continue;
			char p[8192];
			snprintf(p, sizeof p, "%.4000s/%.1000s", dir, e->d_name);
			int k = roundtrip(p);
			programs += k;
			models += k > 0;
		}
		closedir(dp);
	}
	print_message("round trip: %d corpus programs in %d models\n", programs, models);
	assert_true(programs >= 7);
}

/* The compiled fixtures' model.mil, read and written, is the file again
 * (indentation and the final newline aside): the writer speaks coremlc's syntax. */
static void squeeze(const char *s, size_t n, char *out, size_t *k)
{
	*k = 0;
	bool sp = false;
	for (size_t i = 0; i < n; i++) {
		bool w = s[i] == ' ' || s[i] == '\n';
		if (w && !sp)
			out[(*k)++] = ' ';
		else if (!w)
			out[(*k)++] = s[i];
		sp = w;
	}
	while (*k && out[*k - 1] == ' ')
		(*k)--;
}

static void test_text_as_coremlc(void **state)
{
	(void)state;
	static const char *const models[] = {
		"compiled/coremltools_add_model.mlmodelc", "compiled/fluidaudio_TokenDurationPrediction.mlmodelc",
		"compiled/fluidaudio_TransposeEncoder.mlmodelc", "compiled/silero_vad_palette_4bit.mlmodelc",
	};
	for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
		char p[4200];
		snprintf(p, sizeof p, "%s/model.mil", fixture(models[i]));
		FILE *f = fopen(p, "rb");
		assert_non_null(f);
		static char buf[1 << 20], a[1 << 20], b[1 << 20];
		size_t n = fread(buf, 1, sizeof buf, f);
		fclose(f);
		struct al_buf pb = {0};
		al_diags *d = al_diags_new();
		assert_int_equal(ali_mil_text_parse((al_span){(const uint8_t *)buf, n}, p, &pb, d), AL_OK);
		size_t tn;
		char *t = write_text((al_span){pb.p, pb.n}, &tn);
		size_t ka, kb;
		squeeze(buf, n, a, &ka);
		squeeze(t, tn, b, &kb);
		assert_int_equal(ka, kb);
		assert_memory_equal(a, b, ka);
		ali_free(t);
		ali_buf_free(&pb);
		al_diags_free(d);
	}
}

/* ================================================================ bad text */

static void expect_error(const char *text, const char *where, const char *what)
{
	struct al_buf pb = {0};
	al_diags *d = al_diags_new();
	enum al_status st = ali_mil_text_parse((al_span){(const uint8_t *)text, strlen(text)}, "x.mil", &pb, d);
	assert_int_equal(st, AL_E_FORMAT);
	assert_int_equal(al_diags_count(d), 1);
	const char *msg = al_diags_get(d, 0)->msg;
	if (!strstr(msg, where) || !strstr(msg, what))
		print_message("got: %s\n", msg);
	assert_non_null(strstr(msg, where));
	assert_non_null(strstr(msg, what));
	ali_buf_free(&pb);
	al_diags_free(d);
}

static void test_bad_text(void **state)
{
	(void)state;
	expect_error("", "line 1, column 1", "expected 'program'");
	expect_error("program(2.0)\n{\n}\n", "line 1, column 9", "version");
	expect_error("program(1.0)\n{\n    func main<ios15>(tensor<fp99, [1]> x) {\n", "line 3, column 29",
		     "unknown data type 'fp99'");
	expect_error("program(1.0)\n{\n    func main<ios15>(tensor<fp32, [1]> x) {\n"
		     "        tensor<fp32, [1]> y = relu(x = x)[name = tensor<string, []>(\"y)];\n",
		     "line 4", "string not closed");
	expect_error("program(1.0)\n{\n    func main<ios15>(tensor<fp32, [1]> x) {\n"
		     "        tensor<fp32, [1]> y = relu(x = x)\n    } -> (y);\n}\n",
		     "line 5, column 5", "expected ';'");
	expect_error("program(1.0)\n{\n    func main<ios15>(tensor<int32, [2]> x) {\n"
		     "        tensor<int32, [2]> c = const()[val = tensor<int32, [2]>([1.5, 2])];\n",
		     "line 4", "expected an integer");
	expect_error("program(1.0)\n{\n}\n}", "line 4, column 1", "text after the end");
	expect_error("program(1.0)\n{\n    func main() {\n        x = BLOBFILE(", "line 4", "expected");
	/* nesting is bounded, not recursive without end */
	char deep[4096] = "program(1.0)\n[a = ";
	for (int i = 0; i < 200; i++)
		strcat(deep, "list<");
	strcat(deep, "tensor<fp32, []>");
	expect_error(deep, "line 2", "nested deeper than");
	/* blocks nested past AL_MAX_DEPTH: refused, located */
	static char blocks[16384];
	strcpy(blocks, "program(1.0)\n{\n    func main<ios15>(tensor<bool, []> p) {\n");
	for (int i = 0; i < 40; i++)
		strcat(blocks, "tensor<bool, []> y = cond(pred = p) {\n");
	expect_error(blocks, "line 36", "blocks nested deeper than 32");
	/* sub-byte values print the declared count, not the padding */
	const char *u1 = "program(1.0)\n{\n    func main<ios16>() {\n        tensor<uint1, [3]> c = "
			 "const()[val = tensor<uint1, [3]>([1, 0, 1])];\n    } -> (c);\n}\n";
	struct al_buf q = {0};
	al_diags *dq = al_diags_new();
	assert_int_equal(ali_mil_text_parse((al_span){(const uint8_t *)u1, strlen(u1)}, "u.mil", &q, dq), AL_OK);
	size_t tn;
	char *t = write_text((al_span){q.p, q.n}, &tn);
	assert_non_null(strstr(t, "tensor<uint1, [3]>([1, 0, 1])"));
	ali_free(t);
	ali_buf_free(&q);
	al_diags_free(dq);
	/* a NUL byte */
	struct al_buf pb = {0};
	al_diags *d = al_diags_new();
	assert_int_equal(ali_mil_text_parse((al_span){(const uint8_t *)"program\0(1.0)", 13}, "x.mil", &pb, d),
			 AL_E_FORMAT);
	assert_non_null(strstr(al_diags_get(d, 0)->msg, "NUL byte"));
	ali_buf_free(&pb);
	al_diags_free(d);
}

/* Op attributes anelint does not use stay in the IR (analytics.mil keeps the
 * chosen backend in one). */
static void test_unused_attributes_kept(void **state)
{
	(void)state;
	const char *text =
		"program(1.0)\n{\n    func main<ios16>(tensor<fp16, [1, 8]> x) {\n"
		"        tensor<fp16, [1, 8]> y = relu(x = x)[SelectedBackend = tensor<string, []>(\"ane\"), "
		"name = tensor<string, []>(\"y\")];\n    } -> (y);\n}\n";
	/* ali_load_mil_text: the entry point for MIL text that is not a model.mil */
	al_diags *d = al_diags_new();
	struct al_model *m = ali_calloc(1, sizeof *m);
	m->path = "a";
	struct al_submodel *s = ali_model_add_sub(m);
	s->world = AL_WORLD_MIL;
	assert_int_equal(ali_load_mil_text(m, s, (al_span){(const uint8_t *)text, strlen(text)}, "a.mil", d),
			 AL_OK);
	const struct al_node *n = &s->graphs[0]->nodes[0];
	assert_string_equal(n->type, "relu");
	char be[16];
	al_span v;
	assert_true(ali_mil_attr(n, "SelectedBackend", &v));
	assert_true(ali_mil_param_string(n, "SelectedBackend", be, sizeof be));
	assert_string_equal(be, "ane");
	assert_string_equal(s->opsets[0], "CoreML6");
	al_model_free(m);
	al_diags_free(d);
}

/* ================================================================ compiled models */

static void test_compiled_mil(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(fixture("compiled/silero_vad_palette_4bit.mlmodelc"), &m, d), AL_OK);
	const struct al_submodel *s = al_model_get(m, 0);
	assert_string_equal(s->type, "mlProgram");
	assert_int_equal(s->spec_version, 7);
	assert_int_equal(s->n_inputs, 3);
	assert_string_equal(s->inputs[0].name, "audio_input");
	assert_int_equal(s->n_functions, 1);
	assert_string_equal(s->opsets[0], "CoreML6");
	/* 7 palettized weights: uint8 indices and fp16 LUTs, referenced, not read */
	int luts = 0;
	for (uint32_t i = 0; i < s->graphs[0]->n_nodes; i++)
		luts += strcmp(s->graphs[0]->nodes[i].type, "constexpr_lut_to_dense") == 0;
	assert_int_equal(luts, 7);
	assert_true(s->weights.n_blobs >= 14);
	assert_true(s->weights.quantized > 0);
	bool compiler = false;
	for (uint32_t u = 0; u < s->n_user_defined; u++)
		if (strcmp(s->user_defined[u].key, "compiled.compiler") == 0) {
			assert_string_equal(s->user_defined[u].value, "coremlc 3500.32.1 (MIL 3500.14.1)");
			compiler = true;
		}
	assert_true(compiler);
	al_model_free(m);
	al_diags_free(d);
}

static void test_compiled_other(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(fixture("compiled/khmer_sms_classifier.mlmodelc"), &m, d), AL_OK);
	const struct al_submodel *s = al_model_get(m, 0);
	assert_string_equal(s->type, "textClassifier");
	assert_int_equal(s->spec_version, 3);
	assert_string_equal(s->inputs[0].name, "text");
	al_model_free(m);
	al_diags_free(d);
}

static void test_compiled_espresso(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(fixture("compiled/crafted_espresso.mlmodelc"), &m, d), AL_OK);
	const struct al_submodel *s = al_model_get(m, 0);
	assert_string_equal(s->type, "neuralNetwork");
	const struct al_graph *g = s->graphs[0];
	assert_int_equal(g->n_nodes, 6);
	assert_string_equal(g->nodes[0].name, "conv1");
	assert_string_equal(g->nodes[0].type, "convolution");
	assert_string_equal(g->nodes[1].type, "pooling");
	assert_string_equal(g->nodes[2].type, "activation");
	assert_string_equal(g->nodes[3].type, "espresso.elementwise(operation 25)");
	assert_true(g->nodes[3].kind < 0);
	assert_string_equal(g->nodes[4].type, "innerProduct");
	assert_string_equal(g->nodes[5].type, "softmaxND");
	assert_int_equal(g->nodes[3].n_inputs, 2);
	/* weights counted from model.espresso.weights: fp16 conv weights, fp32 biases */
	assert_int_equal(s->weights.fp16, 16 * 3 * 3 * 2);
	assert_int_equal(s->weights.fp32, 16 * 4 + 8 * 16 * 4);
	bool fused = false, unknown = false;
	for (size_t i = 0; i < al_diags_count(d); i++) {
		const char *msg = al_diags_get(d, i)->msg;
		fused |= strstr(msg, "fused activation") != NULL;
		unknown |= strstr(msg, "'elementwise(operation 25)' has no known") != NULL;
	}
	assert_true(fused);
	assert_true(unknown);
	/* the cost model counts each layer's blobs (the layers themselves carry none) */
	assert_int_equal(al_model_check(m, NULL, d), AL_OK);
	assert_int_equal(g->nodes[0].cost.param_bytes, 16 * 4 + 16 * 3 * 3 * 2);
	assert_int_equal(g->nodes[4].cost.param_bytes, 8 * 16 * 4);
	assert_int_equal(g->nodes[1].cost.param_bytes, 0);
	al_model_free(m);
	al_diags_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_fixtures),
		cmocka_unit_test(test_roundtrip_corpus),
		cmocka_unit_test(test_text_as_coremlc),
		cmocka_unit_test(test_bad_text),
		cmocka_unit_test(test_unused_attributes_kept),
		cmocka_unit_test(test_compiled_mil),
		cmocka_unit_test(test_compiled_other),
		cmocka_unit_test(test_compiled_espresso),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
