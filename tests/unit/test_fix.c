/* SPDX-License-Identifier: MIT */
/* test_fix: al_model_fix, `anelint fix` as one library call (src/command/fix.c): the
 * rounds and their proof in the result struct, the refusal, the errors in the
 * caller's diagnostics, the JSON writer. */
#include "anelint.h"
#include "testutil.h"

#include <unistd.h>

static const char *tmp_dir(void)
{
	static char dir[64];
	snprintf(dir, sizeof dir, "/tmp/anelint-test-fix.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return dir;
}

/* An fp32 ML Program: mil-fp16-compute in round 1, the per-op passes in round 2. */
static void test_rounds_dry_run(void **state)
{
	(void)state;
	char in[4096];
	snprintf(in, sizeof in, "%s", fixture("converted/cumsum__mlp_fp32.mlpackage"));
	struct al_fix_opts o = {.input = in, .dry_run = true, .allow = AL_EQ_APPROXIMATE, .seed = 1, .threads = 1};
	struct al_fix_result r;
	al_diags *d = al_diags_new();
	assert_int_equal(al_model_fix(&o, &r, d), AL_OK);
	assert_int_equal(r.exit_code, 0);
	assert_true(r.decided && !r.written && !r.refused && r.fixed_point && r.dry_run);
	assert_int_equal(r.n_rounds, 2);
	assert_int_equal(r.applied, 5);
	size_t applied = 0;
	for (int k = 0; k < r.n_rounds; k++) {
		const struct al_fix_round *g = &r.rounds[k];
		assert_int_equal(g->round, k + 1);
		assert_true(g->proof.run && g->proof.proved && g->proof.ok);
		for (size_t i = 0; i < g->n_rewrites; i++) {
			assert_int_equal(g->rewrites[i].round, k + 1);
			applied += g->rewrites[i].applied;
		}
	}
	assert_int_equal(applied, r.applied);
	assert_true(r.shown >= 0 && r.shown < r.n_rounds);
	FILE *f = tmpfile();
	assert_non_null(f);
	al_fix_write_json(f, &r);
	long n = ftell(f);
	assert_true(n > 0);
	char *text = calloc((size_t)n + 1, 1);
	rewind(f);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	assert_non_null(strstr(text, "\"command\": \"fix\""));
	assert_non_null(strstr(text, "\"fixed_point\": true"));
	assert_non_null(strstr(text, "\"written\": false"));
	free(text);
	fclose(f);
	assert_int_equal(al_diags_errors(d), 0);
	al_fix_result_free(&r);
	al_fix_result_free(&r); /* twice: nothing left to free */
	al_diags_free(d);
}

/* An approximate rewrite whose output collapses in fp16: refused, nothing written. */
static void test_refused(void **state)
{
	(void)state;
	const char *dir = tmp_dir();
	char in[4096], out[256];
	snprintf(in, sizeof in, "%s", fixture("crafted/fix_io_range.mlmodel"));
	snprintf(out, sizeof out, "%s/out.mlmodel", dir);
	struct al_fix_opts o = {.input = in, .output = out, .allow = AL_EQ_APPROXIMATE, .tolerance = 10, .seed = 1};
	struct al_fix_result r;
	al_diags *d = al_diags_new();
	assert_int_equal(al_model_fix(&o, &r, d), AL_OK);
	assert_int_equal(r.exit_code, 1);
	assert_true(r.decided && r.refused && !r.written);
	const struct al_fix_round *g = &r.rounds[r.n_rounds - 1];
	assert_true(g->proof.proved && !g->proof.ok);
	bool collapsed = false;
	for (size_t i = 0; i < g->proof.n_diffs; i++) {
		char why[128];
		const struct al_proof_diff *df = &g->proof.diffs[i];
		collapsed |= df->collapsed && strstr(al_fix_diff_why(g, df, why, sizeof why), "collapsed") != NULL;
	}
	assert_true(collapsed);
	assert_int_equal(access(out, F_OK), -1);
	al_fix_result_free(&r);
	al_diags_free(d);
	rm_tree(dir);
}

/* Errors: in the caller's diagnostics, each naming its file; the exit code says which. */
static void test_errors(void **state)
{
	(void)state;
	struct al_fix_result r;
	al_diags *d = al_diags_new();
	struct al_fix_opts none = {.input = "/nonexistent/m.mlmodel", .dry_run = true};
	assert_int_equal(al_model_fix(&none, &r, d), AL_OK);
	assert_false(r.decided);
	assert_int_equal(r.exit_code, 4);
	assert_true(al_diags_errors(d) > 0);
	assert_string_equal(al_diags_get(d, 0)->file, "/nonexistent/m.mlmodel");
	al_fix_result_free(&r);

	char in[4096];
	snprintf(in, sizeof in, "%s", fixture("crafted/fix_shape.mlmodel"));
	struct al_fix_opts nowhere = {.input = in}; /* neither an output nor a dry run */
	assert_int_equal(al_model_fix(&nowhere, &r, d), AL_E_INVALID_ARG);
	al_fix_result_free(&r);

	const int64_t dims[] = {1, 2};
	struct al_input_shape sh = {.input = "nosuch", .dims = dims, .rank = 2};
	struct al_fix_opts shape = {.input = in, .dry_run = true, .shapes = &sh, .n_shapes = 1};
	assert_int_equal(al_model_fix(&shape, &r, d), AL_OK);
	assert_int_equal(r.exit_code, 2);
	assert_false(r.decided);
	assert_string_equal(r.usage, "--shape: the model has no input 'nosuch'");
	al_fix_result_free(&r);

	/* the output guard: never over the input */
	struct al_fix_opts over = {.input = in, .output = in};
	assert_int_equal(al_model_fix(&over, &r, d), AL_OK);
	assert_int_equal(r.exit_code, 2);
	al_fix_result_free(&r);
	al_diags_free(d);
}

/* Written: the output is there, the result says where. */
static void test_writes(void **state)
{
	(void)state;
	const char *dir = tmp_dir();
	char in[4096], out[256];
	snprintf(in, sizeof in, "%s", fixture("converted/upsample_x4_nearest__nn_ios13.mlmodel"));
	snprintf(out, sizeof out, "%s/fixed.mlmodel", dir);
	struct al_fix_opts o = {.input = in, .output = out, .seed = 1};
	struct al_fix_result r;
	al_diags *d = al_diags_new();
	assert_int_equal(al_model_fix(&o, &r, d), AL_OK);
	assert_int_equal(r.exit_code, 0);
	assert_true(r.decided && r.written);
	assert_string_equal(r.output, out);
	assert_int_equal(r.applied, 1);
	assert_int_equal(access(out, F_OK), 0);
	al_fix_result_free(&r);
	al_diags_free(d);
	rm_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rounds_dry_run),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_writes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
