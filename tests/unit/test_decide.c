/* SPDX-License-Identifier: MIT */
/* test_decide.c: the whole-graph decisions of a placement (src/analysis/decide.c),
 * made in one place: where a sub-model is placed (the plan's options, else its
 * check's), the work floor as the check decided it (its user rules and its rule
 * selection, once per check; every plan reads it), where fallbacks go, and the
 * model-level move. */
#include "testutil.h"

#include "anelint.h"
#include "analysis.h"

#include <string.h>

static const char *letters(const struct al_plan *p)
{
	static char buf[64];
	uint32_t k = 0;
	for (; k < p->n_nodes && k + 1 < sizeof buf; k++)
		buf[k] = p->unit[k] == AL_UNIT_ANE ? 'A' : p->unit[k] == AL_UNIT_GPU ? 'G' : 'C';
	buf[k] = 0;
	return buf;
}

static bool not_ane072(const struct al_rule *r, void *ctx)
{
	(void)ctx;
	return strcmp(r->id, "ANE072") != 0;
}

/* The check decides the work floor once, its selection included; the plans of
 * the model follow it without being told. */
static void test_floor_decided_by_the_check(void **state)
{
	(void)state;
	static const char no_model_floor[] = "id: ANE071\nfamilies: none\nprovenance: test\n";
	al_user_rules *u = NULL;
	assert_int_equal(al_user_rules_parse(no_model_floor, sizeof no_model_floor - 1, "t", &u, NULL), AL_OK);
	al_model *m = NULL;
	assert_int_equal(al_model_open(fixture("crafted/plan_pingpong.mlmodel"), &m, NULL), AL_OK);
	struct ali_graph_decision dec;
	const struct al_plan *p = NULL;

	struct al_check_opts co = {.user_rules = u};
	assert_true(ali_work_floor_on(&co));
	assert_int_equal(al_model_check(m, &co, NULL), AL_OK);
	ali_decide_graph(m, al_model_get(m, 0), NULL, NULL, &dec);
	assert_true(dec.floor);
	assert_null(dec.model_rule);
	assert_false(dec.forced || dec.tiny);
	assert_int_equal(al_model_plan(m, 0, NULL, &p, NULL), AL_OK);
	assert_string_equal(letters(p), "CCCCC");
	al_plan_free(p);

	/* --ignore ANE072: the check's selection switches the floor off for every plan */
	co.rule_on = not_ane072;
	assert_false(ali_work_floor_on(&co));
	assert_int_equal(al_model_check(m, &co, NULL), AL_OK);
	ali_decide_graph(m, al_model_get(m, 0), NULL, NULL, &dec);
	assert_false(dec.floor);
	assert_int_equal(al_model_plan(m, 0, &(struct al_plan_opts){.policy = AL_POLICY_AUTO}, &p, NULL), AL_OK);
	assert_string_equal(letters(p), "ACACA");
	al_plan_free(p);

	/* the built-in rules: ANE071 moves the whole (tiny) model */
	assert_int_equal(al_model_check(m, NULL, NULL), AL_OK);
	ali_decide_graph(m, al_model_get(m, 0), NULL, NULL, &dec);
	assert_non_null(dec.model_rule);
	assert_string_equal(dec.model_rule->id, "ANE071");
	/* a NeuralNetwork: no GPU fallback, so ANE071 forces its unit */
	assert_false(dec.gpu_fallback);
	assert_true(dec.forced);
	/* skipping that rule (a fix that removes it): none */
	ali_decide_graph(m, al_model_get(m, 0), NULL, dec.model_rule, &dec);
	assert_null(dec.model_rule);
	assert_false(dec.forced);
	al_model_free(m);
	al_user_rules_free(u);
}

/* Where: the plan's options, else the check's; the defaults resolved. */
static void test_where_and_fallbacks(void **state)
{
	(void)state;
	al_model *m = NULL;
	assert_int_equal(al_model_open(fixture("converted/cumsum__mlp_fp16.mlpackage"), &m, NULL), AL_OK);
	const struct al_release *ios16 = al_release_find("ios16"), *ios18 = al_release_find("ios18");
	assert_int_equal(al_model_check(m, &(struct al_check_opts){.os = ios18}, NULL), AL_OK);
	struct ali_graph_decision dec;
	ali_decide_graph(m, al_model_get(m, 0), NULL, NULL, &dec);
	assert_ptr_equal(dec.where.target, al_target_default());
	assert_ptr_equal(dec.where.os, ios18);
	assert_int_equal(dec.where.compute_units, AL_CU_ALL);
	assert_true(dec.gpu_fallback); /* an ML Program from iOS 17 with the GPU allowed */
	struct al_plan_opts po = {.where = {.target = al_target_find("a17"), .os = ios16}};
	ali_decide_graph(m, al_model_get(m, 0), &po, NULL, &dec);
	assert_ptr_equal(dec.where.target, al_target_find("a17"));
	assert_ptr_equal(dec.where.os, ios16);
	assert_false(dec.gpu_fallback);
	po.where = (struct al_where){.os = ios18, .compute_units = AL_CU_CPU_AND_NE};
	ali_decide_graph(m, al_model_get(m, 0), &po, NULL, &dec);
	assert_false(dec.gpu_fallback);
	/* the plan reports the decision */
	const struct al_plan *p = NULL;
	assert_int_equal(al_model_plan(m, 0, &po, &p, NULL), AL_OK);
	assert_ptr_equal(p->where.os, ios18);
	assert_int_equal(p->where.compute_units, AL_CU_CPU_AND_NE);
	assert_false(p->gpu_fallback);
	al_plan_free(p);
	al_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_floor_decided_by_the_check),
		cmocka_unit_test(test_where_and_fallbacks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
