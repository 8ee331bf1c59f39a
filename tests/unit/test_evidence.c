/* SPDX-License-Identifier: MIT */
/* test_evidence.c: the placement evidence readers (src/analysis/evidence.c), the
 * comparison and the writers (evidence_compare.c), from memory: each format's
 * fields, format detection, matching by name and by type and order, bounds, and
 * one located error per malformed file. docs/evidence.md. */
#include "testutil.h"
#include "evidence.h"

static struct al_evidence *parse(const char *text, int format, al_diags *d)
{
	struct al_evidence *e = NULL;
	enum al_status st = ali_evidence_parse(text, strlen(text), "t.ev", format, &e, d);
	assert_true((st == AL_OK) == (e != NULL));
	return e;
}

/* One error diagnostic naming t.ev, whose message contains `what`. */
static void refused(const char *text, int format, const char *what)
{
	al_diags *d = al_diags_new();
	struct al_evidence *e = parse(text, format, d);
	assert_null(e);
	assert_int_equal(al_diags_errors(d), 1);
	const struct al_diag *x = al_diags_get(d, 0);
	assert_string_equal(x->file, "t.ev");
	if (!strstr(x->msg, what))
		fail_msg("message '%s' lacks '%s'", x->msg, what);
	al_diags_free(d);
}

static void test_own_json(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	struct al_evidence *e = parse(
		"{\"schema\": \"anelint-evidence\", \"version\": 1, \"chip\": \"m1\", \"os\": \"macOS 15.2\","
		" \"ops\": [{\"name\": \"a\", \"type\": \"ios18.conv\", \"unit\": \"ane\"},"
		" {\"name\": \"b\", \"unit\": \"not_ane\", \"reason\": \"why\", \"extra\": 3}]}",
		AL_EVF_AUTO, d);
	assert_non_null(e);
	assert_int_equal(e->format, AL_EVF_JSON);
	assert_string_equal(e->target->id, "a14"); /* m1 is an alias */
	assert_string_equal(e->release->id, "ios18"); /* macOS 15 = iOS 18 */
	assert_int_equal(e->n_ops, 2);
	assert_string_equal(e->ops[0].type, "conv");
	assert_int_equal(e->ops[0].obs, AL_OBS_ANE);
	assert_string_equal(e->ops[1].type, "");
	assert_int_equal(e->ops[1].obs, AL_OBS_NOT_ANE);
	assert_string_equal(e->ops[1].reason, "why");
	ali_evidence_free(e);
	al_diags_free(d);
	refused("{\"schema\": \"anelint-evidence\", \"version\": 2, \"ops\": []}", AL_EVF_AUTO, "version");
	refused("{\"schema\": \"anelint-evidence\", \"version\": 1, \"ops\": [{\"name\": \"a\", \"unit\": \"tpu\"}]}",
		AL_EVF_AUTO, "unit must be");
	refused("{\"schema\": \"anelint-evidence\", \"version\": 1, \"ops\": [{\"unit\": \"ane\"}]}", AL_EVF_AUTO,
		"needs");
	refused("{\"schema\": \"x\"}", AL_EVF_AUTO, "neither");
	refused("{\"a\": [1, 2", AL_EVF_AUTO, "invalid JSON");
	refused("{} {}", AL_EVF_JSON, "invalid JSON");
	refused("\"x\"", AL_EVF_JSON, "not an object");
	refused("[1]", AL_EVF_JSON, "an entry must be an object"); /* an array: a placement file */
	refused("[{\"preferredOperations\": {\"ANE\": -1}}]", AL_EVF_AUTO, "must be a count");
	refused("{\"preferredOperations\": {\"TPU\": 1}}", AL_EVF_AUTO, "not ANE, GPU, CPU or unknown");
}

static void test_deep_json(void **state)
{
	(void)state;
	size_t n = 3 * 10000;
	char *s = malloc(n + 1);
	for (size_t i = 0; i < n; i += 3)
		memcpy(s + i, "[[[", 3);
	s[0] = '{';
	s[n] = 0;
	refused(s, AL_EVF_JSON, "invalid JSON");
	free(s);
}

static void test_mlperf(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	struct al_evidence *e = parse(
		"{\"deviceInfo\": {\"modelName\": \"iPhone16,1\", \"osNameAndVersionWithoutBuildNumber\": \"iOS 17.4\"},"
		" \"deviceResults\": [{\"modelStructure\": {\"program\": {\"_0\": {\"functions\": {\"main\": {\"block\":"
		" {\"operations\": [{\"operatorName\": \"const\", \"outputs\": [{\"name\": \"w\"}]},"
		" {\"operatorName\": \"ios17.conv\", \"outputs\": [{\"name\": \"y\"}], \"deviceUsage\": {\"preferred\":"
		" {\"deviceType\": \"neuralEngine\"}}}]}}}}}}}]}",
		AL_EVF_AUTO, d);
	assert_non_null(e);
	assert_int_equal(e->format, AL_EVF_MLPERF);
	assert_int_equal(e->n_ops, 1); /* the const has no device usage */
	assert_string_equal(e->ops[0].name, "y");
	assert_string_equal(e->ops[0].type, "conv");
	assert_int_equal(e->ops[0].obs, AL_OBS_ANE);
	assert_string_equal(e->release->id, "ios17");
	assert_string_equal(e->device, "iPhone16,1");
	assert_null(e->target);
	ali_evidence_free(e);
	al_diags_free(d);
	refused("{\"deviceResults\": {}}", AL_EVF_AUTO, "program._0.functions");
}

static void test_mil(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	struct al_evidence *e = parse(
		"program(1.0)\n{\n    func main<ios18>(tensor<fp16, [1, 8]> x) {\n"
		"        tensor<fp16, [1, 8]> y = relu(x = x)[SelectedBackend = tensor<string, []>(\"bnns\"), "
		"ValidationMessage = dict<tensor<string, []>, tensor<string, []>>({{\"ane\", \"no\"}, {\"gpu\", \"ok\"}})];\n"
		"        tensor<fp16, [1, 8]> z = sigmoid(x = y)[SelectedBackend = tensor<string, []>(\"mps_graph\")];\n"
		"        tensor<fp16, [1, 8]> k = const()[val = tensor<fp16, [1, 8]>([0, 0, 0, 0, 0, 0, 0, 0])];\n"
		"    } -> (z);\n}\n",
		AL_EVF_AUTO, d);
	assert_non_null(e);
	assert_int_equal(e->format, AL_EVF_MIL);
	assert_int_equal(e->n_ops, 2);
	assert_string_equal(e->ops[0].name, "y");
	assert_int_equal(e->ops[0].obs, AL_OBS_CPU);
	assert_string_equal(e->ops[0].reason, "ane: no; gpu: ok");
	assert_int_equal(e->ops[1].obs, AL_OBS_GPU);
	assert_null(e->ops[1].reason);
	ali_evidence_free(e);
	al_diags_free(d);
	refused("program(1.0)\n{ func main<ios18>() { tensor<fp16, [1]> a = relu()[SelectedBackend = "
		"tensor<string, []>(\"tpu\")]; } -> (a); }\n",
		AL_EVF_MIL, "not a known backend");
	refused("program(1.0)\n{ func main<ios18>( { SelectedBackend", AL_EVF_MIL, "line");
	/* the text ends inside a block after an op: the op buffer was leaked (fuzz_evidence) */
	refused("program(1.0)\n{ func main<ios18>() { tensor<fp16, [1]> a = relu()[SelectedBackend = "
		"tensor<string, []>(\"ane\")];\n",
		AL_EVF_MIL, "block not closed");
}

static void test_plan_text(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	struct al_evidence *e = parse("# chip: a16\n# os: ios17\nKey: C=CPU, G=GPU, N=NeuralEngine\n"
				      "           w = const()\n"
				      "0.68% G|CG x_1 = ios16.gather(x: [\"a\"])\n"
				      "[3] ios18.conv outputs=[\"y\", z] preferred=MLNeuralEngineComputeDevice supported=[]\n"
				      "Operation | Identifier | Selected Device\n"
				      "relu | r1 | cpu | 0.1\n",
				      AL_EVF_AUTO, d);
	assert_non_null(e);
	assert_int_equal(e->format, AL_EVF_PLAN);
	assert_string_equal(e->target->id, "a16");
	assert_string_equal(e->release->id, "ios17");
	assert_int_equal(e->n_ops, 3);
	assert_string_equal(e->ops[0].name, "x_1");
	assert_string_equal(e->ops[0].type, "gather");
	assert_int_equal(e->ops[0].obs, AL_OBS_GPU);
	assert_int_equal(e->ops[0].line, 5);
	assert_string_equal(e->ops[1].name, "y");
	assert_int_equal(e->ops[1].obs, AL_OBS_ANE);
	assert_string_equal(e->ops[2].name, "r1");
	assert_string_equal(e->ops[2].type, "relu");
	assert_int_equal(e->ops[2].obs, AL_OBS_CPU);
	ali_evidence_free(e);
	al_diags_free(d);
	refused("hello\nworld\n", AL_EVF_AUTO, "no compute plan op lines");
	refused("ok\n1.0% N|N = conv()\n", AL_EVF_PLAN, "cannot be read");
}

static void test_oslog(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	struct al_evidence *e = parse("noise\n2020-01-01 x[1:2] Kernel validation warning conv 1\\x28a (convolution) @ 3: "
				      "Unsupported: kernel   \r\n",
				      AL_EVF_AUTO, d);
	assert_non_null(e);
	assert_int_equal(e->format, AL_EVF_OSLOG);
	assert_int_equal(e->n_ops, 1);
	assert_string_equal(e->ops[0].name, "conv 1(a"); /* \x28 unescaped */
	assert_string_equal(e->ops[0].type, "convolution");
	assert_string_equal(e->ops[0].reason, "Unsupported: kernel");
	assert_int_equal(e->ops[0].obs, AL_OBS_NOT_ANE);
	assert_int_equal(e->ops[0].line, 2);
	ali_evidence_free(e);
	al_diags_free(d);
	refused("a\nKernel validation warning nothing\n", AL_EVF_AUTO, "expected 'Kernel validation warning");
}

static void test_long_strings_cut(void **state)
{
	(void)state;
	size_t n = 5000;
	char *s = malloc(n + 200);
	int k = sprintf(s, "relu | ");
	memset(s + k, 'a', n);
	strcpy(s + k + n, " | ane\n");
	al_diags *d = al_diags_new();
	struct al_evidence *e = parse(s, AL_EVF_PLAN, d);
	assert_non_null(e);
	assert_int_equal(strlen(e->ops[0].name), AL_EV_MAX_TEXT);
	ali_evidence_free(e);
	al_diags_free(d);
	free(s);
}

/* Matching: by name, else the k-th op of a type to the k-th node of it; the
 * writers' output reads back to 100% agreement. */
static void test_compare_round_trip(void **state)
{
	(void)state;
	al_model *m = NULL;
	al_diags *d = al_diags_new();
	assert_int_equal(al_model_open(fixture("crafted/mil_rules.mlpackage"), &m, d), AL_OK);
	struct al_check_opts o = {.target = al_target_find("a14"), .os = al_release_find("ios18")};
	assert_int_equal(al_model_check(m, &o, d), AL_OK);
	for (int f = AL_EVF_JSON; f < AL_EVF_COUNT; f++) {
		struct al_buf b = {0};
		assert_int_equal(ali_evidence_write(m, f, "a14", "ios18", &b), AL_OK);
		struct al_evidence *e = NULL;
		assert_int_equal(ali_evidence_parse(b.p, b.n, "w", f, &e, d), AL_OK);
		struct al_cmp c;
		assert_int_equal(ali_compare(m, e, &c), AL_OK);
		assert_int_equal(c.unmatched, 0);
		assert_int_equal(c.agreed, c.matched);
		assert_true(c.matched > 0);
		assert_true(ali_cmp_agreement(&c) == 100.0);
		ali_cmp_free(&c);
		ali_evidence_free(e);
		ali_buf_free(&b);
	}
	/* unknown names: matched by type and order; a type not in the model: unmatched */
	const char *t = "{\"schema\": \"anelint-evidence\", \"version\": 1, \"ops\": ["
			"{\"name\": \"renamed_1\", \"type\": \"conv\", \"unit\": \"ane\"},"
			"{\"name\": \"renamed_2\", \"type\": \"conv\", \"unit\": \"cpu\"},"
			"{\"name\": \"gone\", \"type\": \"softmax\", \"unit\": \"ane\"}]}";
	struct al_evidence *e = NULL;
	assert_int_equal(ali_evidence_parse(t, strlen(t), "t", AL_EVF_AUTO, &e, d), AL_OK);
	struct al_cmp c;
	assert_int_equal(ali_compare(m, e, &c), AL_OK);
	assert_int_equal(c.by_order, 2);
	assert_int_equal(c.unmatched, 1);
	assert_string_equal(c.rows[0].node->name, "conv_wide");
	assert_string_equal(c.rows[1].node->name, "conv_tall");
	assert_int_equal(c.rows[0].match, AL_MATCH_ORDER);
	assert_false(c.rows[0].agree); /* conv_wide: ANE028 on a14 */
	ali_cmp_free(&c);
	ali_evidence_free(e);
	al_model_free(m);
	al_diags_free(d);
}

static void test_agrees(void **state)
{
	(void)state;
	assert_true(ali_obs_agrees(AL_OBS_NOT_ANE, AL_UNIT_GPU));
	assert_true(ali_obs_agrees(AL_OBS_NOT_ANE, AL_UNIT_CPU));
	assert_false(ali_obs_agrees(AL_OBS_NOT_ANE, AL_UNIT_ANE));
	assert_false(ali_obs_agrees(AL_OBS_CPU, AL_UNIT_GPU));
	assert_int_equal(ali_ev_format_find("oslog"), AL_EVF_OSLOG);
	assert_int_equal(ali_ev_format_find("pdf"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_json),
		cmocka_unit_test(test_deep_json),
		cmocka_unit_test(test_mlperf),
		cmocka_unit_test(test_mil),
		cmocka_unit_test(test_plan_text),
		cmocka_unit_test(test_oslog),
		cmocka_unit_test(test_long_strings_cut),
		cmocka_unit_test(test_compare_round_trip),
		cmocka_unit_test(test_agrees),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
