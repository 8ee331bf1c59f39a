/* SPDX-License-Identifier: MIT */
/* fuzz_rules.c: libFuzzer harness for user rule files (`--rules FILE`,
 * src/user_rules.c). The input is the text of a rules file, parsed from memory
 * with al_user_rules_parse. When it loads, two fixtures that fire many rules
 * (tests/data/crafted/nn_rules.mlmodel and mil_rules.mlpackage, opened once; run
 * the harness from the repo root) are checked with the rules for a target picked
 * from the input, and every sink that carries rule text (text, JSON, SARIF,
 * Markdown, HTML, dot) writes its report: JSON and SARIF are parsed back.
 * Promises checked (anelint.h):
 *   - the status is AL_OK exactly when rules came back, and exactly when no
 *     error diagnostic was added; a refused file comes with at least one error;
 *   - every diagnostic is one line (fuzz_common.h);
 *   - each of the file's rules has an id, a name and a title, a user origin, and
 *     al_user_rules_find finds it again by id; al_rule_is_override says whether
 *     a built-in rule has its id;
 *   - al_rule_families behaves as snprintf does (same length at any cap, the
 *     text cut and terminated);
 *   - checking with the rules succeeds and every verdict names rules.
 * With FUZZ_QUICK=N (the long runs) the reports are written for 1 input in N. */
#include "fuzz_common.h"

#include <stdint.h>

static al_model *models[2];
static const char *const model_paths[2] = {"tests/data/crafted/nn_rules.mlmodel",
					   "tests/data/crafted/mil_rules.mlpackage"};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_guard_maps();
	for (size_t i = 0; i < 2; i++) {
		al_diags *d = al_diags_new();
		FUZZ_CHECK(d != NULL);
		if (al_model_open(model_paths[i], &models[i], d) != AL_OK) {
			fprintf(stderr, "fuzz_rules: cannot open %s (run from the repo root)\n",
				model_paths[i]);
			__builtin_trap();
		}
		al_diags_free(d);
	}
	fuzz_devnull = fopen("/dev/null", "w");
	FUZZ_CHECK(fuzz_devnull != NULL);
	return 0;
}

static void check_families(const struct al_rule *r)
{
	char full[512], cut[8];
	size_t n = al_rule_families(r, full, sizeof full);
	FUZZ_CHECK(n < sizeof full); /* a list of every family is short */
	FUZZ_CHECK(strlen(full) == n);
	FUZZ_CHECK(al_rule_families(r, cut, sizeof cut) == n);
	FUZZ_CHECK(strlen(cut) == (n < sizeof cut ? n : sizeof cut - 1));
	FUZZ_CHECK(strncmp(cut, full, strlen(cut)) == 0);
}

static void check_rule(const al_user_rules *u, const struct al_rule *r)
{
	FUZZ_CHECK(r != NULL);
	FUZZ_CHECK(r->id && *r->id && r->name && *r->name && r->title);
	FUZZ_CHECK(r->origin != NULL);
	FUZZ_CHECK(strchr(r->title, '\n') == NULL);
	FUZZ_CHECK(r->confidence == 'A' || r->confidence == 'M' || r->confidence == 'G');
	FUZZ_CHECK((unsigned)r->unit < AL_UNIT_COUNT);
	FUZZ_CHECK(al_user_rules_find(u, r->id) == r);
	FUZZ_CHECK(al_rule_is_override(r) == (al_rule_find(r->id) != NULL));
	fuzz_read_str(r->provenance);
	fuzz_read_str(r->url);
	fuzz_read_str(r->why);
	fuzz_read_str(r->fix);
	fuzz_read_str(r->catalog);
	check_families(r);
}

static void report(al_model *m, const char *path, al_diags *d, const struct al_check_opts *copts,
		   unsigned seed)
{
	struct al_report_item it = {.path = path, .model = m, .diags = d, .status = AL_OK};
	struct al_report_opts o = {.color = seed & 1, .shapes = (seed >> 1) & 1,
				   .fail_on = (enum al_fail_on)((seed >> 2) & 3), .check = copts, .plans = true};
	size_t before = al_diags_errors(d);
	enum al_status st = al_report_analyze(&it, 1, &o, d); /* what the sinks show */
	fuzz_check_diags(d);
	fuzz_check_status(st, d, before);
	static const char *const text_sinks[] = {"text", "markdown", "html", "dot"};
	for (size_t i = 0; i < sizeof text_sinks / sizeof *text_sinks; i++) {
		const struct al_sink *s = al_sink_by_name(text_sinks[i]);
		FUZZ_CHECK(s != NULL);
		s->check(fuzz_devnull, &it, 1, &o);
	}
	fuzz_json_roundtrip(al_sink_by_name("json")->check, &it, &o);
	fuzz_json_roundtrip(al_sink_by_name("sarif")->check, &it, &o);
	al_analysis_free(it.analysis);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	al_diags *d = al_diags_new();
	FUZZ_CHECK(d != NULL);
	al_user_rules *u = (al_user_rules *)1; /* must be reset by the call */
	enum al_status st = al_user_rules_parse((const char *)data, size, "fuzz.rules", &u, d);
	fuzz_check_diags(d);
	fuzz_check_status(st, d, 0);
	FUZZ_CHECK((st == AL_OK) == (u != NULL));
	FUZZ_CHECK(st == AL_OK || st == AL_E_FORMAT || st == AL_E_NOMEM);
	if (u) {
		for (size_t i = 0; i < al_user_rules_count(u); i++)
			check_rule(u, al_user_rule_at(u, i));
		FUZZ_CHECK(al_user_rule_at(u, al_user_rules_count(u)) == NULL);
		unsigned seed = fuzz_seed(data, size);
		struct al_check_opts copts = {
			.target = al_target_at(seed % al_targets_count()), .user_rules = u};
		for (size_t i = 0; i < 2; i++) {
			FUZZ_CHECK(al_model_check(models[i], &copts, d) == AL_OK);
			fuzz_check_diags(d);
			fuzz_check_model(models[i]);
		}
		if (fuzz_heavy()) /* FUZZ_QUICK: 1 input in N */
			for (size_t i = 0; i < 2; i++)
				report(models[i], model_paths[i], d, &copts, seed >> 8);
		/* the models keep no pointer into u once checked without it */
		for (size_t i = 0; i < 2; i++)
			FUZZ_CHECK(al_model_check(models[i], NULL, d) == AL_OK);
		al_user_rules_free(u);
	}
	al_diags_free(d);
	return 0;
}
