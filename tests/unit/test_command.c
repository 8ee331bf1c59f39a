/* SPDX-License-Identifier: MIT */
/* test_command.c: run, verify and split as library calls (src/command/,
 * include/anelint.h "commands"): results, the failures a front end words (an
 * option that does not fit the model, a missing input), the in-memory inputs
 * and outputs a binding uses, the JSON document, and every allocation failure
 * handled (AL_OK or AL_E_NOMEM, nothing leaked under ASan). */
#include "testutil.h"

#include "anelint.h"
#include "base.h" /* ali_alloc_fail_after */

#include <unistd.h>

#define POOL "converted/pool_k15_s3__nn_ios13.mlmodel" /* x: fp32 [1, 8, 64, 64] -> var_31 */

static struct al_exec_opts pool_opts(const char *path)
{
	return (struct al_exec_opts){.model = path, .model_b = path, .tol = 1e-4, .threads = 1,
				     .in = {.random = true, .seed = 1}};
}

static void test_verify_a_model_against_itself(void **state)
{
	(void)state;
	char path[4096];
	snprintf(path, sizeof path, "%s", fixture(POOL));
	struct al_exec_opts o = pool_opts(path);
	al_diags *d = al_diags_new();
	struct al_exec_result *r = NULL;
	assert_int_equal(al_verify(&o, &r, d), AL_OK);
	assert_true(r->pass);
	assert_int_equal(r->n_diffs, 1);
	assert_string_equal(r->diffs[0].name, "var_31");
	assert_true(r->diffs[0].identical);
	assert_string_equal(r->inputs_how, "random (seed 1)");
	/* the JSON document: the CLI's `verify --format json` */
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	al_exec_result_json(f, r);
	fclose(f);
	assert_non_null(strstr(text, "\"command\": \"verify\""));
	assert_non_null(strstr(text, "\"identical\": true, \"nan\": 0, \"pass\": true}"));
	assert_non_null(strstr(text, "\"pass\": true\n}\n"));
	free(text);
	al_exec_result_free(r);
	al_diags_free(d);
}

static void test_failures_say_how(void **state)
{
	(void)state;
	char path[4096];
	snprintf(path, sizeof path, "%s", fixture(POOL));
	struct al_exec_opts o = pool_opts(path);
	o.in.random = false;
	al_diags *d = al_diags_new();
	struct al_exec_result *r = NULL;
	/* no value for x, and no random: the input is named, with its kind */
	assert_int_equal(al_run_model(&o, &r, d), AL_E_INVALID_ARG);
	assert_int_equal(r->fail.kind, AL_FAIL_MISSING_INPUT);
	assert_string_equal(r->fail.subject, "x");
	assert_false(r->started);
	assert_int_equal(al_diags_count(d), 1);
	assert_non_null(strstr(al_diags_get(d, 0)->msg, "no value for input 'x'"));
	al_exec_result_free(r);
	/* a file for an input the model does not have: the option's fault */
	const char *files[] = {"y=nothing.npy"};
	o.in.files = files;
	o.in.n_files = 1;
	assert_int_equal(al_run_model(&o, &r, d), AL_E_INVALID_ARG);
	assert_int_equal(r->fail.kind, AL_FAIL_OPTION);
	assert_string_equal(r->fail.arg, "y=nothing.npy");
	assert_non_null(strstr(r->fail.fmt, "the model has no input of that name"));
	al_exec_result_free(r);
	/* a model that is not there: its diagnostics, about its path */
	o = pool_opts("/nonexistent/m.mlmodel");
	assert_int_equal(al_run_model(&o, &r, d), AL_E_IO);
	assert_int_equal(r->fail.kind, AL_FAIL_DIAGS);
	assert_string_equal(r->fail.subject, "/nonexistent/m.mlmodel");
	al_exec_result_free(r);
	al_diags_free(d);
}

/* A binding's way: the model opened by the caller, inputs in memory, outputs kept. */
static void test_values_in_and_out(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(fixture(POOL), &m, d), AL_OK);
	int64_t dims[4] = {1, 8, 64, 64};
	al_tensor *x = al_tensor_new(AL_DT_FP32, 4, dims);
	float *v = al_tensor_data(x);
	for (size_t i = 0; i < al_tensor_count(x); i++)
		v[i] = (float)(i % 97) - 40.0f;
	struct al_named_tensor in = {"x", x};
	struct al_exec_opts o = {.model = "pool", .open_a = m, .in = {.values = &in, .n_values = 1},
				 .keep_values = true, .threads = 1};
	struct al_exec_result *r = NULL;
	assert_int_equal(al_run_model(&o, &r, d), AL_OK);
	size_t n = 0;
	const struct al_named_tensor *out = al_exec_result_values(r, &n);
	assert_int_equal(n, 1);
	assert_string_equal(out[0].name, "var_31");
	assert_int_equal(al_tensor_count(out[0].t), 16 * 17 * 17);
	assert_string_equal(r->inputs[0].from, "given");
	assert_string_equal(r->outputs[0].shape, "[1,16,17,17]");
	/* max pool of the first 15 x 15 window of channel 0: the largest of i % 97 - 40 there */
	assert_true(al_tensor_data(out[0].t)[0] > 50.0f);
	al_exec_result_free(r);
	al_model_free(m); /* the caller's: still open after the result */
	al_tensor_free(x);
	al_diags_free(d);
}

static void test_alloc_failures(void **state)
{
	(void)state;
	char path[4096], dir[] = "/tmp/anelint-cmd-XXXXXX", pipe[4200];
	snprintf(path, sizeof path, "%s", fixture(POOL));
	assert_non_null(mkdtemp(dir));
	snprintf(pipe, sizeof pipe, "%s/pipeline.mlmodel", dir);
	struct al_exec_opts o = pool_opts(path);
	const char *at[] = {"0"};
	struct al_split_command so = {.model = path, .at = at, .n_at = 1, .pipeline = pipe, .seed = 1};
	for (int which = 0; which < 2; which++) {
		bool done = false;
		unsigned long k;
		for (k = 1; k < 5000 && !done; k++) {
			al_diags *d = al_diags_new();
			struct al_exec_result *r = NULL;
			struct al_split_result *sr = NULL;
			ali_alloc_fail_after(k);
			enum al_status st = which == 0 ? al_verify(&o, &r, d) : al_split_model(&so, &sr, d);
			ali_alloc_fail_after(0);
			if (st != AL_OK && st != AL_E_NOMEM)
				fprintf(stderr, "which %d k %lu st %d: %s\n", which, k, st,
					al_diags_count(d) ? al_diags_get(d, al_diags_count(d) - 1)->msg : "");
			assert_true(st == AL_OK || st == AL_E_NOMEM);
			done = st == AL_OK;
			if (done)
				assert_true(which == 0 ? r->pass : sr->written);
			al_exec_result_free(r);
			al_split_result_free(sr);
			al_diags_free(d);
		}
		assert_true(done);
		assert_true(k > 20); /* the failures did reach into the command */
	}
	assert_int_equal(access(pipe, F_OK), 0);
	rm_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verify_a_model_against_itself),
		cmocka_unit_test(test_failures_say_how),
		cmocka_unit_test(test_values_in_and_out),
		cmocka_unit_test(test_alloc_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
