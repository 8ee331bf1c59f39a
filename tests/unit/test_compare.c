/* SPDX-License-Identifier: MIT */
/* test_compare: al_compare, `anelint compare` as one library call (src/command/compare.c):
 * the document (text or JSON) and the agreement in the result struct, --fail-under as
 * exit 1, an evidence file that cannot be read left out with its error in the caller's
 * diagnostics (exit 4), --write-evidence read back, -o written whole (the library
 * prints nothing). The crafted model and its hand-written evidence (tests/data/evidence/
 * README.md): 5 ops compared, 3 agree. */
#include "anelint.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MODEL "crafted/mil_rules.mlpackage"
#define EVIDENCE "evidence/mil_rules.evidence.json"

static void test_json_and_text(void **state)
{
	(void)state;
	char model[4096], ev[4096];
	snprintf(model, sizeof model, "%s", fixture(MODEL));
	snprintf(ev, sizeof ev, "%s", fixture(EVIDENCE));
	const char *evs[] = {ev};
	struct al_compare_opts o = {.model = model, .evidence = evs, .n_evidence = 1, .json = true};
	struct al_compare_result r;
	al_diags *d = al_diags_new();
	assert_int_equal(al_compare(&o, &r, d), AL_OK);
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(r.matched, 5);
	assert_int_equal(r.agreed, 3);
	assert_true(r.agreement > 59.9 && r.agreement < 60.1);
	assert_false(r.under);
	assert_false(r.written);
	assert_non_null(r.doc);
	assert_int_equal(strlen(r.doc), r.n_doc);
	assert_non_null(strstr(r.doc, "\"anelint-compare\""));
	assert_int_equal(r.doc[r.n_doc - 1], '\n');
	al_compare_result_free(&r);
	assert_null(r.doc);
	o.json = false;
	o.fail_under = 61; /* 60% agree */
	assert_int_equal(al_compare(&o, &r, d), AL_OK);
	assert_int_equal(r.exit_code, 1);
	assert_true(r.under);
	assert_non_null(strstr(r.doc, " vs "));
	assert_non_null(strstr(r.doc, "agreement 60.0% (3 of 5)"));
	assert_null(strstr(r.doc, "overall agreement")); /* one evidence file */
	assert_int_equal(al_diags_count(d), 0);
	al_compare_result_free(&r);
	al_diags_free(d);
}

static void test_missing_evidence(void **state)
{
	(void)state;
	char model[4096], ev[4096];
	snprintf(model, sizeof model, "%s", fixture(MODEL));
	snprintf(ev, sizeof ev, "%s", fixture(EVIDENCE));
	const char *evs[] = {"/nonexistent/anelint-test.json", ev};
	struct al_compare_opts o = {.model = model, .evidence = evs, .n_evidence = 2};
	struct al_compare_result r;
	al_diags *d = al_diags_new();
	assert_int_equal(al_compare(&o, &r, d), AL_OK);
	assert_int_equal(r.exit_code, 4);
	assert_int_equal(r.matched, 5); /* the other one compared */
	assert_non_null(r.doc);
	assert_non_null(strstr(r.doc, "overall agreement 60.0% (3 of 5)"));
	assert_true(al_diags_count(d) >= 1);
	const struct al_diag *x = al_diags_get(d, 0);
	assert_int_equal(x->severity, AL_SEV_ERROR);
	assert_string_equal(x->file, "/nonexistent/anelint-test.json");
	al_compare_result_free(&r);
	al_diags_free(d);
	/* a model that cannot be opened: its error, no document */
	d = al_diags_new();
	o.model = "/nonexistent/anelint-test.mlmodel";
	assert_int_not_equal(al_compare(&o, &r, d), AL_OK);
	assert_true(r.exit_code >= 3);
	assert_null(r.doc);
	assert_string_equal(al_diags_get(d, 0)->file, "/nonexistent/anelint-test.mlmodel");
	al_diags_free(d);
}

static void test_write_evidence_round_trip(void **state)
{
	(void)state;
	char model[4096], out[64];
	snprintf(model, sizeof model, "%s", fixture(MODEL));
	snprintf(out, sizeof out, "/tmp/anelint-test-compare.XXXXXX");
	int fd = mkstemp(out);
	assert_true(fd >= 0);
	close(fd);
	struct al_compare_opts o = {.model = model, .write_evidence = al_evidence_format_find("mil"), .output = out};
	assert_true(o.write_evidence > 0);
	assert_string_equal(al_evidence_format_name(o.write_evidence), "mil");
	struct al_compare_result r;
	al_diags *d = al_diags_new();
	assert_int_equal(al_compare(&o, &r, d), AL_OK);
	assert_int_equal(r.exit_code, 0);
	assert_true(r.written);
	assert_non_null(r.doc);
	al_compare_result_free(&r);
	/* read back: the prediction agrees with itself */
	const char *evs[] = {out};
	struct al_compare_opts back = {.model = model, .evidence = evs, .n_evidence = 1,
				       .evidence_format = al_evidence_format_find("mil"), .fail_under = 100};
	assert_int_equal(al_compare(&back, &r, d), AL_OK);
	assert_int_equal(r.exit_code, 0);
	assert_true(r.matched > 0);
	assert_int_equal(r.agreed, r.matched);
	al_compare_result_free(&r);
	al_diags_free(d);
	unlink(out);
}

static void test_bad_args(void **state)
{
	(void)state;
	struct al_compare_result r;
	struct al_compare_opts o = {.model = "m", .write_evidence = 99};
	assert_int_equal(al_compare(NULL, &r, NULL), AL_E_INVALID_ARG);
	assert_int_equal(al_compare(&o, &r, NULL), AL_E_INVALID_ARG);
	assert_int_equal(al_evidence_format_find("pdf"), -1);
	assert_int_equal(al_evidence_format_find("auto"), 0);
	assert_int_equal(al_evidence_format_find(NULL), -1);
	assert_string_equal(al_evidence_format_name(0), "auto");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_and_text),
		cmocka_unit_test(test_missing_evidence),
		cmocka_unit_test(test_write_evidence_round_trip),
		cmocka_unit_test(test_bad_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
