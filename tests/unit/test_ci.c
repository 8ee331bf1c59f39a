/* SPDX-License-Identifier: MIT */
/* test_ci.c: what an anelint.toml means, through the library's public calls
 * (al_ci_*, src/command/ci.c; issue 32): the settings the top level gives the
 * options not given, what a [[model]] gives the models its glob matches (the
 * caller's settings win), fail_on per model, the rule selection, and errors
 * kept as message lines (the library prints nothing).
 */
#include "testutil.h"

#include "anelint.h"

#include <unistd.h>

static char dir[64];

static const char *write_config(const char *text)
{
	static char path[128];
	snprintf(dir, sizeof dir, "/tmp/anelint-test-ci-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/anelint.toml", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static void remove_config(void)
{
	char path[128];
	snprintf(path, sizeof path, "%s/anelint.toml", dir);
	unlink(path);
	rmdir(dir);
}

static const char config[] = "target = \"m1\"\n"
			     "fail_on = \"cpu\"\n"
			     "select = [\"ANE00\"]\n"
			     "[[model]]\n"
			     "path = \"big_*.mlmodel\"\n"
			     "target = \"a17\"\n"
			     "os = \"ios17\"\n"
			     "fail_on = \"never\"\n";

static void test_settings(void **state)
{
	(void)state;
	const char *path = write_config(config);
	struct al_ci_opts o = {.config = path, .given = {.os = "ios16"}};
	al_ci *ci = NULL;
	assert_int_equal(al_ci_open(&o, &ci), AL_OK);
	assert_string_equal(al_ci_messages(ci), "");
	assert_string_equal(al_ci_config_path(ci), path);
	const struct al_ci_settings *s = al_ci_settings_of(ci);
	assert_string_equal(s->target, "m1");   /* the configuration's */
	assert_string_equal(s->os, "ios16");    /* given: wins */
	assert_string_equal(s->fail_on, "cpu");
	assert_null(s->policy);

	/* a model the [[model]] glob matches (by its file name) gets its target; the
	 * given os still wins */
	struct al_ci_settings got;
	uint32_t line = 0;
	char model[160];
	snprintf(model, sizeof model, "%s/sub/big_net.mlmodel", dir);
	assert_true(al_ci_model_settings(ci, model, s, &got, &line));
	assert_string_equal(got.target, "a17");
	assert_string_equal(got.os, "ios16");
	assert_int_equal(line, 6);
	assert_int_equal(al_ci_fail_on(ci, model, AL_FAIL_CPU), AL_FAIL_NEVER);
	/* one it does not match keeps the top level's */
	assert_false(al_ci_model_settings(ci, "small.mlmodel", s, &got, &line));
	assert_string_equal(got.target, "m1");
	assert_int_equal(al_ci_fail_on(ci, "small.mlmodel", AL_FAIL_CPU), AL_FAIL_CPU);

	/* select = ["ANE00"]: the rules ANE00x only */
	struct al_check_opts check = {0};
	assert_int_equal(al_ci_select(ci, &check), AL_OK);
	assert_non_null(check.rule_on);
	bool any_on = false, any_off = false;
	for (size_t i = 0; i < al_rules_count(); i++) {
		const struct al_rule *r = al_rule_at(i);
		bool on = check.rule_on(r, check.rule_on_ctx);
		assert_true(on == (strncmp(r->id, "ANE00", 5) == 0));
		any_on |= on, any_off |= !on;
	}
	assert_true(any_on && any_off);
	al_ci_free(ci);
	remove_config();
}

static void test_errors_are_messages(void **state)
{
	(void)state;
	const char *path = write_config("targte = \"a17\"\n");
	struct al_ci_opts o = {.config = path};
	al_ci *ci = NULL;
	assert_int_equal(al_ci_open(&o, &ci), AL_E_INVALID_ARG);
	char want[256];
	snprintf(want, sizeof want, "anelint: error: %s: line 1: unknown key 'targte' (did you mean 'target'?)\n",
		 path);
	assert_string_equal(al_ci_messages(ci), want);
	al_ci_messages_clear(ci);
	assert_string_equal(al_ci_messages(ci), "");
	al_ci_free(ci);
	remove_config();

	/* a selector naming no rule: a usage error with a hint */
	const char *const sel[] = {"ANE99x"};
	struct al_ci_opts o2 = {.no_config = true, .select = sel, .n_select = 1};
	assert_int_equal(al_ci_open(&o2, &ci), AL_OK);
	struct al_check_opts check = {0};
	assert_int_equal(al_ci_select(ci, &check), AL_E_INVALID_ARG);
	assert_non_null(strstr(al_ci_messages(ci), "--select: no rule is named or starts with 'ANE99x'"));
	assert_null(check.rule_on);
	al_ci_free(ci);

	/* a caller's mistake is a status, not a crash */
	ci = (al_ci *)1;
	assert_int_equal(al_ci_open(NULL, &ci), AL_E_INVALID_ARG);
	assert_null(ci);
	assert_int_equal(al_ci_select(NULL, &check), AL_E_INVALID_ARG);
	assert_null(al_ci_baseline_begin(NULL, "b.json"));
	assert_int_equal(al_ci_baseline_end(NULL, true), AL_E_IO);
	assert_string_equal(al_ci_messages(NULL), "");

	assert_string_equal(al_nearest("tagret", (const char *const[]){"target", "os"}, 2), "target");
	assert_null(al_nearest("xyz", (const char *const[]){"target", "os"}, 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_errors_are_messages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
