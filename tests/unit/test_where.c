/* SPDX-License-Identifier: MIT */
/* test_where.c: al_where_parse (src/analysis/where.c), the one reading of where a
 * model runs: ids and aliases, `all`, comma lists as the cross product of verdict
 * columns, compute units, and its errors as diagnostics (which option, the id,
 * what is known) rather than printed; and the options structs carrying the value
 * as `where` and by its fields' names. */
#include "testutil.h"

#include "anelint.h"

#include <string.h>

static const struct al_diag *only_error(const al_diags *d)
{
	assert_int_equal(al_diags_count(d), 1);
	const struct al_diag *x = al_diags_get(d, 0);
	assert_int_equal(x->severity, AL_SEV_ERROR);
	return x;
}

static void test_one_each(void **state)
{
	(void)state;
	struct al_where_spec w;
	al_diags *d = al_diags_new();
	assert_int_equal(al_where_parse("m1", "iOS17", "cpu-and-ne", 0, &w, d), AL_OK);
	assert_ptr_equal(w.where.target, al_target_find("a14"));
	assert_ptr_equal(w.where.os, al_release_find("ios17"));
	assert_int_equal(w.where.compute_units, AL_CU_CPU_AND_NE);
	assert_false(w.all_targets || w.all_releases || w.n_columns);
	/* nothing given: the defaults */
	assert_int_equal(al_where_parse(NULL, NULL, NULL, AL_WHERE_ONE, &w, d), AL_OK);
	assert_null(w.where.target);
	assert_null(w.where.os);
	assert_int_equal(w.where.compute_units, AL_CU_DEFAULT);
	assert_int_equal(al_diags_count(d), 0);
	al_diags_free(d);
}

static void test_all_and_lists(void **state)
{
	(void)state;
	struct al_where_spec w;
	al_diags *d = al_diags_new();
	assert_int_equal(al_where_parse("all", "ios16", NULL, 0, &w, d), AL_OK);
	assert_true(w.all_targets);
	assert_false(w.all_releases);
	assert_int_equal(w.n_columns, 0);
	assert_ptr_equal(w.where.os, al_release_find("ios16"));
	/* lists: every target with every release, targets first; an id twice is one */
	assert_int_equal(al_where_parse("a14,a17,m1", "ios17,ios18", NULL, 0, &w, d), AL_OK);
	assert_int_equal(w.n_columns, 4);
	const char *want[4][2] = {{"a14", "ios17"}, {"a14", "ios18"}, {"a17", "ios17"}, {"a17", "ios18"}};
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(w.columns[i].target->id, want[i][0]);
		assert_string_equal(w.columns[i].os->id, want[i][1]);
	}
	assert_ptr_equal(w.where.target, w.columns[0].target);
	assert_ptr_equal(w.where.os, w.columns[0].os);
	/* all of one with a list of the other: columns */
	assert_int_equal(al_where_parse("all", "ios17,ios18", NULL, 0, &w, d), AL_OK);
	assert_int_equal(w.n_columns, 2 * al_targets_count());
	assert_int_equal(al_diags_count(d), 0);
	al_diags_free(d);
}

static void test_errors_are_diagnostics(void **state)
{
	(void)state;
	struct al_where_spec w;
	al_diags *d = al_diags_new();
	assert_int_equal(al_where_parse("a14,nope", NULL, NULL, 0, &w, d), AL_E_INVALID_ARG);
	const struct al_diag *x = only_error(d);
	assert_string_equal(x->where, "target");
	assert_string_equal(x->node, "nope");
	assert_string_equal(x->msg, "unknown target 'nope' (a12, a14, a15, a16, a17, a18, or all; a comma list "
				    "compares several)");
	al_diags_free(d);

	d = al_diags_new();
	assert_int_equal(al_where_parse(NULL, "ios99", NULL, 0, &w, d), AL_E_INVALID_ARG);
	x = only_error(d);
	assert_string_equal(x->where, "os");
	assert_non_null(strstr(x->msg, "unknown OS release 'ios99' (ios13, "));
	assert_non_null(strstr(x->msg, ", or macos11 ... macos27, or all; a comma list compares several)"));
	al_diags_free(d);

	/* one id each: `all` and lists are ids not known */
	d = al_diags_new();
	assert_int_equal(al_where_parse("all", NULL, NULL, AL_WHERE_ONE, &w, d), AL_E_INVALID_ARG);
	x = only_error(d);
	assert_string_equal(x->where, "target");
	assert_string_equal(x->msg, "unknown target 'all' (a12, a14, a15, a16, a17, a18)");
	al_diags_free(d);

	d = al_diags_new();
	assert_int_equal(al_where_parse("all", "all", NULL, 0, &w, d), AL_E_INVALID_ARG);
	x = only_error(d);
	assert_null(x->where);
	assert_non_null(strstr(x->msg, "--target all with --os all would be "));
	al_diags_free(d);

	d = al_diags_new();
	assert_int_equal(al_where_parse("a17", NULL, "npu", 0, &w, d), AL_E_INVALID_ARG);
	x = only_error(d);
	assert_string_equal(x->where, "compute_units");
	assert_string_equal(x->node, "npu");
	al_diags_free(d);

	/* no diagnostics list: the status alone */
	assert_int_equal(al_where_parse("nope", NULL, NULL, 0, &w, NULL), AL_E_INVALID_ARG);
	assert_int_equal(al_where_parse("a17", NULL, NULL, 0, NULL, NULL), AL_E_INVALID_ARG);
}

/* The options carry the value as `where`, and by its fields' own names. */
static void test_options_carry_it(void **state)
{
	(void)state;
	struct al_where_spec w;
	assert_int_equal(al_where_parse("a16", "ios18", "cpu-only", AL_WHERE_ONE, &w, NULL), AL_OK);
	struct al_check_opts co = {.where = w.where};
	assert_ptr_equal(co.target, al_target_find("a16"));
	assert_ptr_equal(co.os, al_release_find("ios18"));
	assert_int_equal(co.compute_units, AL_CU_CPU_ONLY);
	struct al_plan_opts po = {.target = co.target, .os = co.os, .compute_units = co.compute_units};
	assert_ptr_equal(po.where.target, co.where.target);
	assert_ptr_equal(po.where.os, co.where.os);
	assert_int_equal(po.where.compute_units, co.where.compute_units);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_each),
		cmocka_unit_test(test_all_and_lists),
		cmocka_unit_test(test_errors_are_diagnostics),
		cmocka_unit_test(test_options_carry_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
