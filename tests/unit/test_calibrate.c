/* SPDX-License-Identifier: MIT */
/* test_calibrate: al_calibrate, `anelint calibrate` as one library call
 * (src/command/calibrate.c): the rules file written and the agreement figures in the
 * result struct, what is left as it is returned as notes (the library prints
 * nothing), errors in the caller's diagnostics with the exit code the CLI returns. */
#include "anelint.h"
#include "testutil.h"

#include <string.h>
#include <unistd.h>

#define MODEL "converted/transformer_encoder__mlp_ios17_fp16.mlpackage"

static const char *tmp_dir(void)
{
	static char dir[64];
	snprintf(dir, sizeof dir, "/tmp/anelint-test-calibrate.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return dir;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* The work floor keeps this small model on the CPU; evidence of one op on the ANE on
 * a17 / iOS 18 switches ANE071 off there, and ANE072, which it pre-empts. */
#define EV_HEAD "{\"schema\":\"anelint-evidence\",\"version\":1,\"chip\":\"a17\",\"os\":\"ios18\",\"ops\":["
#define LINEAR_ANE "{\"name\":\"linear_0_cast_fp16\",\"type\":\"linear\",\"unit\":\"ane\"}"
#define QUERY_CPU "{\"name\":\"query_cast_fp16\",\"type\":\"transpose\",\"unit\":\"cpu\"}"

static void test_override(void **state)
{
	(void)state;
	char model[4096], ev[128], out[128];
	const char *t = tmp_dir();
	snprintf(model, sizeof model, "%s", fixture(MODEL));
	snprintf(ev, sizeof ev, "%s/one.json", t);
	snprintf(out, sizeof out, "%s/one.rules", t);
	put(ev, EV_HEAD LINEAR_ANE "]}");
	const char *evs[] = {ev};
	struct al_calibrate_opts o = {.model = model, .evidence = evs, .n_evidence = 1, .output = out};
	struct al_calibrate_result r;
	al_diags *d = al_diags_new();
	assert_int_equal(al_calibrate(&o, &r, d), AL_OK);
	assert_int_equal(r.exit_code, 0);
	assert_true(r.written);
	assert_int_equal(r.rules_written, 2);
	assert_int_equal(r.conflicts, 0);
	assert_int_equal(r.agreed_before, 0);
	assert_int_equal(r.matched_before, 1);
	assert_int_equal(r.agreed_after, 1);
	assert_int_equal(r.matched_after, 1);
	assert_true(!r.notes || !*r.notes);
	al_user_rules *u = NULL;
	assert_int_equal(al_user_rules_load(out, &u, d), AL_OK);
	const struct al_rule *floor = al_user_rules_find(u, "ANE071");
	assert_non_null(floor);
	al_user_rules_free(u);
	al_calibrate_result_free(&r);
	al_diags_free(d);
	rm_tree(t);
}

/* The same rule wrong for one op and right for another on the same chip and release: a
 * conflict, as a note; no rule written, exit 1. */
static void test_conflict_note(void **state)
{
	(void)state;
	char model[4096], ev[128], out[128];
	const char *t = tmp_dir();
	snprintf(model, sizeof model, "%s", fixture(MODEL));
	snprintf(ev, sizeof ev, "%s/two.json", t);
	snprintf(out, sizeof out, "%s/two.rules", t);
	put(ev, EV_HEAD LINEAR_ANE "," QUERY_CPU "]}");
	const char *evs[] = {ev};
	struct al_calibrate_opts o = {.model = model, .evidence = evs, .n_evidence = 1, .output = out};
	struct al_calibrate_result r;
	al_diags *d = al_diags_new();
	assert_int_equal(al_calibrate(&o, &r, d), AL_OK);
	assert_int_equal(r.exit_code, 1);
	assert_true(r.written);
	assert_int_equal(r.rules_written, 0);
	assert_int_equal(r.conflicts, 2);
	assert_non_null(r.notes);
	assert_non_null(strstr(r.notes, "calibrate: conflict: ANE071 is wrong for linear_0_cast_fp16"));
	assert_int_equal(strncmp(r.notes, "calibrate: ", 11), 0);
	assert_int_equal(al_diags_count(d), 0);
	al_calibrate_result_free(&r);
	al_diags_free(d);
	rm_tree(t);
}

/* Evidence that cannot be read: exit 4, its error names it, nothing written. */
static void test_missing_evidence(void **state)
{
	(void)state;
	char model[4096], ev[128], out[128];
	const char *t = tmp_dir();
	snprintf(model, sizeof model, "%s", fixture(MODEL));
	snprintf(ev, sizeof ev, "%s/none.json", t);
	snprintf(out, sizeof out, "%s/none.rules", t);
	const char *evs[] = {ev};
	struct al_calibrate_opts o = {.model = model, .evidence = evs, .n_evidence = 1, .output = out};
	struct al_calibrate_result r;
	al_diags *d = al_diags_new();
	assert_int_equal(al_calibrate(&o, &r, d), AL_E_IO);
	assert_int_equal(r.exit_code, 4);
	assert_false(r.written);
	assert_true(al_diags_count(d) >= 1);
	assert_string_equal(al_diags_get(d, 0)->file, ev);
	assert_int_not_equal(access(out, F_OK), 0);
	al_calibrate_result_free(&r);
	al_diags_free(d);
	rm_tree(t);
}

static void test_bad_args(void **state)
{
	(void)state;
	struct al_calibrate_result r;
	struct al_calibrate_opts o = {.model = "m"};
	assert_int_equal(al_calibrate(NULL, &r, NULL), AL_E_INVALID_ARG);
	assert_int_equal(al_calibrate(&o, &r, NULL), AL_E_INVALID_ARG); /* no output */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_override),
		cmocka_unit_test(test_conflict_note),
		cmocka_unit_test(test_missing_evidence),
		cmocka_unit_test(test_bad_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
