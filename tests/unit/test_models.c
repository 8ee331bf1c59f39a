/* SPDX-License-Identifier: MIT */
/* test_models.c: al_models_run (src/command/models.c), check, plan and info as one
 * library call with no front end's hooks (as the Python package calls it): the
 * document written, the outcome (the CLI's exit codes), errors kept as
 * diagnostics by file, models the caller opened checked and left to it, and the
 * release columns no model loads on left out with a note. */
#include "testutil.h"

#include "anelint.h"

#include <stdio.h>
#include <string.h>

#define POOL "converted/pool_k15_s3__nn_ios13.mlmodel"

/* The document r wrote to a temporary file, in buf. */
static size_t run_into(struct al_models_run *r, char *buf, size_t cap, int *outcome)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	r->out = f;
	*outcome = al_models_run(r);
	size_t n = (size_t)ftell(f);
	rewind(f);
	n = fread(buf, 1, n < cap - 1 ? n : cap - 1, f);
	buf[n] = 0;
	fclose(f);
	return n;
}

static char doc[1 << 20];

static void test_check_plan_info(void **state)
{
	(void)state;
	const char *paths[] = {fixture(POOL)};
	al_diags *d = al_diags_new();
	int outcome;
	struct al_models_run r = {.cmd = AL_SINK_CHECK, .paths = paths, .n_paths = 1, .diags = d};
	assert_true(run_into(&r, doc, sizeof doc, &outcome) > 0);
	/* the pooling layer falls back: fail_on any (the default) fails */
	assert_int_equal(outcome, AL_OUTCOME_FALLBACK);
	assert_true(r.fails);
	assert_int_equal(r.status, AL_OK);
	assert_non_null(strstr(doc, "\"command\": \"check\""));
	r = (struct al_models_run){.cmd = AL_SINK_PLAN, .paths = paths, .n_paths = 1, .diags = d};
	r.report.fail_on = AL_FAIL_NEVER;
	run_into(&r, doc, sizeof doc, &outcome);
	assert_int_equal(outcome, AL_OUTCOME_PASS);
	assert_non_null(strstr(doc, "\"segments\""));
	r = (struct al_models_run){.cmd = AL_SINK_INFO, .paths = paths, .n_paths = 1, .diags = d,
				   .sink = al_sink_by_name("text")};
	run_into(&r, doc, sizeof doc, &outcome);
	assert_int_equal(outcome, AL_OUTCOME_PASS);
	assert_non_null(strstr(doc, "minimum OS: iOS 13"));
	assert_int_equal(al_diags_count(d), 0);
	al_diags_free(d);
}

static void test_errors_are_kept(void **state)
{
	(void)state;
	char missing[4096], pool[4096]; /* fixture() returns one buffer */
	snprintf(missing, sizeof missing, "%s", fixture("converted/no_such.mlmodel"));
	snprintf(pool, sizeof pool, "%s", fixture(POOL));
	const char *paths[] = {missing, pool};
	al_diags *d = al_diags_new();
	int outcome;
	struct al_models_run r = {.cmd = AL_SINK_CHECK, .paths = paths, .n_paths = 2, .diags = d};
	run_into(&r, doc, sizeof doc, &outcome);
	assert_int_equal(outcome, AL_OUTCOME_IO); /* errors dominate findings */
	assert_int_equal(r.status, AL_E_IO);
	assert_true(al_diags_errors(d) >= 1);
	assert_non_null(strstr(al_diags_get(d, 0)->file, "no_such.mlmodel"));
	al_diags_free(d);

	/* a function no model has: the request is wrong */
	d = al_diags_new();
	r = (struct al_models_run){.cmd = AL_SINK_CHECK, .paths = paths + 1, .n_paths = 1, .diags = d,
				   .function = "nope"};
	run_into(&r, doc, sizeof doc, &outcome);
	assert_int_equal(outcome, AL_OUTCOME_USAGE);
	assert_true(al_diags_errors(d) >= 1);
	al_diags_free(d);
}

/* A model the caller opened: checked for r's release, left open; a release
 * column it cannot load on is left out, with a note naming it. */
static void test_borrowed_model_and_releases(void **state)
{
	(void)state;
	al_model *m = NULL;
	assert_int_equal(al_model_open(fixture("modern/mlp_int4_block32_ios18.mlpackage"), &m, NULL), AL_OK);
	const char *paths[] = {"mlp"};
	al_model *const models[] = {m};
	al_diags *d = al_diags_new();
	struct al_models_run r = {.cmd = AL_SINK_CHECK, .paths = paths, .n_paths = 1, .models = models, .diags = d};
	r.report.fail_on = AL_FAIL_NEVER;
	assert_int_equal(al_where_parse("a17", "ios17,ios18", NULL, 0, &r.where, d), AL_OK);
	int outcome;
	run_into(&r, doc, sizeof doc, &outcome);
	assert_int_equal(outcome, AL_OUTCOME_PASS);
	/* ios17 cannot load it: one column left, a plain prediction for ios18 */
	assert_int_equal(r.where.n_columns, 0);
	assert_ptr_equal(r.check.os, al_release_find("ios18"));
	assert_int_equal(al_diags_count(d), 1);
	const struct al_diag *x = al_diags_get(d, 0);
	assert_int_equal(x->severity, AL_SEV_NOTE);
	assert_string_equal(x->file, "mlp");
	assert_non_null(strstr(x->msg, "cannot load it (left out)"));
	assert_non_null(strstr(doc, "\"path\": \"mlp_int4_block32_ios18.mlpackage\""));
	assert_non_null(al_model_get(m, 0)); /* still the caller's */
	al_model_free(m);
	al_diags_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_plan_info),
		cmocka_unit_test(test_errors_are_kept),
		cmocka_unit_test(test_borrowed_model_and_releases),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
