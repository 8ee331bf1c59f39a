/* SPDX-License-Identifier: MIT */
/* test_targets.c: the chip-family table (src/targets.def, src/targets.c).
 *
 * The table's consistency (ids and aliases unique and resolving to their row,
 * every figure positive, figures and capabilities monotone from older to newer
 * families, the ANEForge anchors as documented in docs/cost-model.md), the
 * default target, and the families syntax that rules and user rule files use
 * ("all", "a15+", "a12..a14", lists), parsed and formatted back.
 */
#include "testutil.h"

#include "anelint.h"
#include "analysis.h"

#include <ctype.h>
#include <math.h>

static void test_count_and_at(void **state)
{
	(void)state;
	assert_int_equal(al_targets_count(), 6);
	assert_int_equal(al_targets_count(), AL_FAM_COUNT);
	assert_null(al_target_at(al_targets_count()));
	const char *ids[] = {"a12", "a14", "a15", "a16", "a17", "a18"};
	for (size_t i = 0; i < al_targets_count(); i++) {
		const struct al_target *t = al_target_at(i);
		assert_non_null(t);
		assert_string_equal(t->id, ids[i]);
		assert_int_equal(ali_target_index(t), (int)i);
	}
	assert_int_equal(ali_target_index(NULL), -1);
	struct al_target copy = *al_target_at(0);
	assert_int_equal(ali_target_index(&copy), -1);
}

/* Every name (ids and aliases) appears once in the whole table. */
static void test_names_unique_and_resolve(void **state)
{
	(void)state;
	char seen[64][16];
	size_t n_seen = 0;
	for (size_t i = 0; i < al_targets_count(); i++) {
		const struct al_target *t = al_target_at(i);
		char list[128];
		snprintf(list, sizeof list, "%s,%s", t->id, t->aliases ? t->aliases : "");
		for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
			for (const char *c = tok; *c; c++)
				assert_true(islower((unsigned char)*c) || isdigit((unsigned char)*c));
			for (size_t k = 0; k < n_seen; k++)
				assert_string_not_equal(seen[k], tok);
			assert_true(n_seen < 64 && strlen(tok) < 16);
			snprintf(seen[n_seen++], sizeof seen[0], "%s", tok);
			assert_ptr_equal(al_target_find(tok), t); /* each alias finds its row */
			char up[16];
			size_t k = 0;
			for (; tok[k]; k++)
				up[k] = (char)toupper((unsigned char)tok[k]);
			up[k] = '\0';
			assert_ptr_equal(al_target_find(up), t); /* case-insensitive */
		}
	}
	assert_ptr_equal(al_target_find("m1"), al_target_find("a14"));
	assert_ptr_equal(al_target_find("h13"), al_target_find("a14"));
	assert_ptr_equal(al_target_find("M4"), al_target_find("a17"));
	assert_ptr_equal(al_target_find("a13"), al_target_find("a12"));
	assert_ptr_equal(al_target_find("m5"), al_target_find("a18"));
	assert_null(al_target_find("a11"));
	assert_null(al_target_find("m1,h13"));
	assert_null(al_target_find("m"));
	assert_null(al_target_find(""));
	assert_null(al_target_find("all")); /* the CLI's word, not a family */
	assert_null(al_target_find(NULL));
}

static void test_figures(void **state)
{
	(void)state;
	for (size_t i = 0; i < al_targets_count(); i++) {
		const struct al_target *t = al_target_at(i);
		const double v[] = {t->ane_tflops, t->ane_gbs, t->ane_overhead_us, t->gpu_tflops,
				    t->gpu_gbs, t->gpu_overhead_us, t->cpu_tflops, t->cpu_gbs,
				    t->cpu_overhead_us, t->ane_layer_us, t->gpu_kernel_us};
		for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
			assert_true(isfinite(v[k]) && v[k] > 0);
		assert_true(t->axis_cap > 0 && t->channel_cap >= t->axis_cap);
		assert_true(t->conv_kw_cap > 0);
		assert_true(t->name && *t->name && t->arch && *t->arch);
		assert_true(t->source && strlen(t->source) > 20);
		for (const char *c = t->source; *c; c++)
			assert_true((unsigned char)*c >= 0x20); /* one line */
		/* the ANE is the fast unit for its work: peak above the GPU's and CPU's */
		assert_true(t->ane_tflops > t->cpu_tflops);
		if (i == 0)
			continue;
		const struct al_target *p = al_target_at(i - 1);
		/* newer families are never slower, never smaller, never lose a capability */
		assert_true(t->ane_tflops >= p->ane_tflops);
		assert_true(t->ane_gbs >= p->ane_gbs);
		assert_true(t->ane_overhead_us <= p->ane_overhead_us);
		assert_true(t->ane_layer_us <= p->ane_layer_us);
		assert_true(t->gpu_kernel_us <= p->gpu_kernel_us);
		assert_true(t->gpu_tflops >= p->gpu_tflops && t->gpu_gbs >= p->gpu_gbs);
		assert_true(t->cpu_tflops >= p->cpu_tflops && t->cpu_gbs >= p->cpu_gbs);
		assert_true(t->axis_cap >= p->axis_cap && t->channel_cap >= p->channel_cap);
		assert_true(t->conv_kw_cap >= p->conv_kw_cap);
		assert_int_equal(t->features & p->features, p->features);
	}
}

/* The measured anchors and capability steps, as docs/cost-model.md states them. */
static void test_anchors(void **state)
{
	(void)state;
	const struct al_target *m1 = al_target_find("m1"), *m5 = al_target_find("m5");
	assert_true(fabs(m1->ane_tflops - 3.25) < 1e-9);
	assert_true(fabs(m1->ane_gbs - 9.0) < 1e-9);
	assert_true(fabs(m1->ane_overhead_us - 220) < 1e-9);
	assert_true(fabs(m5->ane_tflops - 8.9) < 1e-9);
	assert_true(fabs(m5->ane_gbs - 57.0) < 1e-9);
	assert_true(fabs(m5->ane_overhead_us - 110) < 1e-9);
	assert_true(fabs(m1->gpu_tflops - 2.6) < 1e-9); /* Apple, M1 */
	/* ANEForge (catalog C6): ~6.3 us a layer fused into one program on M1; the other
	 * families scale it as their overhead (no measurement) */
	assert_true(fabs(m1->ane_layer_us - 6.3) < 1e-9);
	for (size_t i = 0; i < al_targets_count(); i++) {
		const struct al_target *t = al_target_at(i);
		assert_true(fabs(t->ane_layer_us - 6.3 * t->ane_overhead_us / 220) < 0.05);
	}
	/* H13-H15: 16384 and 13; H16+: 65536 and 15 */
	for (size_t i = 0; i < al_targets_count(); i++) {
		const struct al_target *t = al_target_at(i);
		bool h16 = i >= (size_t)AL_FAMIDX_a17;
		assert_int_equal(t->axis_cap, h16 ? 65536 : 16384);
		assert_int_equal(t->conv_kw_cap, h16 ? 15 : 13);
		assert_int_equal(t->channel_cap, 65536);
		assert_int_equal(!!(t->features & AL_TF_TEXTURE), i >= (size_t)AL_FAMIDX_a15);
		assert_int_equal(!!(t->features & AL_TF_TRIG), i >= (size_t)AL_FAMIDX_a16);
		assert_int_equal(!!(t->features & AL_TF_INT8_COMPUTE), h16);
	}
	assert_string_equal(al_target_find("a14")->arch, "h13");
	assert_string_equal(al_target_find("a17")->arch, "h16");
}

static void test_default(void **state)
{
	(void)state;
	assert_ptr_equal(al_target_default(), al_target_find("a14"));
}

/* The oldest release that loads a specificationVersion (issue #29: check says so
 * when asked for an older one). */
static void test_release_for_spec(void **state)
{
	(void)state;
	assert_string_equal(al_release_for_spec(8)->id, "ios17");
	assert_string_equal(al_release_for_spec(9)->id, "ios18");
	assert_string_equal(al_release_for_spec(10)->id, "ios26");
	assert_string_equal(al_release_for_spec(5)->id, "ios14");
	assert_string_equal(al_release_for_spec(4)->id, "ios13");
	assert_string_equal(al_release_for_spec(1)->id, "ios13"); /* older than every release known */
	assert_string_equal(al_release_for_spec(0)->id, "ios13");
	assert_string_equal(al_release_for_spec(-3)->id, "ios13");
	assert_null(al_release_for_spec(11)); /* newer than every release known */
	assert_null(al_release_for_spec(1 << 30));
}

static void test_family_macros(void **state)
{
	(void)state;
	assert_int_equal(AL_FAM_ALL, (1u << 6) - 1);
	assert_int_equal(AL_FAM_UPTO(a14), AL_FAM(a12) | AL_FAM(a14));
	assert_int_equal(AL_FAM_FROM(a17), AL_FAM(a17) | AL_FAM(a18));
	assert_int_equal(AL_FAM_FROM(a12), AL_FAM_ALL);
	assert_int_equal(AL_FAM_UPTO(a18), AL_FAM_ALL);
}

static uint32_t parse(const char *s)
{
	uint32_t f = 0xdeadbeef;
	char bad[32];
	if (!ali_families_parse(s, &f, bad, sizeof bad)) {
		assert_int_equal(f, 0xdeadbeef); /* untouched on failure */
		return 0xffffffffu;
	}
	return f;
}

static void test_families_parse(void **state)
{
	(void)state;
	assert_int_equal(parse("all"), AL_FAM_ALL);
	assert_int_equal(parse("ALL"), AL_FAM_ALL);
	assert_int_equal(parse("none"), 0);
	assert_int_equal(parse("a15+"), AL_FAM_FROM(a15));
	assert_int_equal(parse("m2+"), AL_FAM_FROM(a15));
	assert_int_equal(parse("a12..a14"), AL_FAM_UPTO(a14));
	assert_int_equal(parse("m1..a12"), AL_FAM_UPTO(a14)); /* either order */
	assert_int_equal(parse("m1, a16"), AL_FAM(a14) | AL_FAM(a16));
	assert_int_equal(parse("  a14 ,a14  "), AL_FAM(a14));
	assert_int_equal(parse("h13,m4+"), AL_FAM(a14) | AL_FAM_FROM(a17));
	assert_int_equal(parse("none, a12"), AL_FAM(a12));
	const char *bad[] = {"", " ", "a13x", "a15++", ",", "a14,", ",a14", "a14,,a15", "a14 a15",
			     "..", "a14..", "..a14", "zzz+", "+", "all+", "a14...a15"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (parse(bad[i]) != 0xffffffffu)
			print_error("'%s' parsed\n", bad[i]);
		assert_int_equal(parse(bad[i]), 0xffffffffu);
	}
	char word[32];
	uint32_t f;
	assert_false(ali_families_parse("a14, zzz", &f, word, sizeof word));
	assert_string_equal(word, "zzz");
	assert_false(ali_families_parse(NULL, &f, NULL, 0));
}

/* Formatting: every subset formats to text that parses back to it. */
static void test_families_round_trip(void **state)
{
	(void)state;
	struct al_rule r = {0};
	char buf[128];
	for (uint32_t f = 0; f <= AL_FAM_ALL; f++) {
		r.families = f;
		size_t n = al_rule_families(&r, buf, sizeof buf);
		assert_int_equal(n, strlen(buf));
		uint32_t back = 0;
		if (!ali_families_parse(buf, &back, NULL, 0))
			print_error("%#x -> '%s' does not parse\n", f, buf);
		assert_int_equal(back, f);
	}
	r.families = AL_FAM(a12) | AL_FAM(a14) | AL_FAM(a15);
	al_rule_families(&r, buf, sizeof buf);
	assert_string_equal(buf, "a12..a15");
	r.families = AL_FAM(a14) | AL_FAM(a16);
	al_rule_families(&r, buf, sizeof buf);
	assert_string_equal(buf, "a14,a16");
	r.families = AL_FAM_FROM(a16);
	al_rule_families(&r, buf, sizeof buf);
	assert_string_equal(buf, "a16+");
	assert_int_equal(al_rule_families(NULL, buf, sizeof buf), 4);
	assert_string_equal(buf, "none");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count_and_at),
		cmocka_unit_test(test_names_unique_and_resolve),
		cmocka_unit_test(test_figures),
		cmocka_unit_test(test_anchors),
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_release_for_spec),
		cmocka_unit_test(test_family_macros),
		cmocka_unit_test(test_families_parse),
		cmocka_unit_test(test_families_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
