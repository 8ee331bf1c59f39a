/* SPDX-License-Identifier: MIT */
/* fuzz_evidence.c: libFuzzer harness for the placement evidence readers
 * (src/analysis/evidence.c: anelint evidence JSON, analytics.mil, compute plan
 * dumps, .mlperf report.json, os_log lines, compute placement counts) and the comparison with a model.
 *
 * Framing of an input: [1 byte: format, mod 7: auto, json, mil, plan, mlperf,
 * oslog, placement][rest: the evidence text, in an exact-size heap block]. When it reads,
 * the evidence is compared with tests/data/crafted/mil_rules.mlpackage (opened
 * and checked once; run from the repo root). Promises checked:
 *   - AL_OK exactly when evidence came back, and then no error diagnostic; a
 *     refused file is exactly one error diagnostic, one line (fuzz_common.h);
 *   - every op has a name, a type (maybe ""), an observed unit in range, and the
 *     strings it keeps are at most AL_EV_MAX_TEXT bytes;
 *   - the comparison accounts for every op once (matched + unmatched = ops),
 *     agreed <= matched, the confusion table sums to matched, agreement in [0, 100];
 *   - the model's prediction written in the detected format reads back. */
#include "fuzz_common.h"
#include "evidence.h"

#include <stdint.h>

static al_model *model;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_guard_maps();
	al_diags *d = al_diags_new();
	FUZZ_CHECK(d != NULL);
	if (al_model_open("tests/data/crafted/mil_rules.mlpackage", &model, d) != AL_OK ||
	    al_model_check(model, NULL, d) != AL_OK) {
		fprintf(stderr, "fuzz_evidence: cannot open tests/data/crafted/mil_rules.mlpackage (run from the repo root)\n");
		__builtin_trap();
	}
	al_diags_free(d);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int format = data[0] % AL_EVF_COUNT;
	size_t n = size - 1;
	char *text = malloc(n ? n : 1);
	FUZZ_CHECK(text != NULL);
	memcpy(text, data + 1, n);
	al_diags *d = al_diags_new();
	FUZZ_CHECK(d != NULL);
	struct al_evidence *e = NULL;
	enum al_status st = ali_evidence_parse(text, n, "fuzz.evidence", format, &e, d);
	fuzz_check_diags(d);
	FUZZ_CHECK((st == AL_OK) == (e != NULL));
	if (st != AL_OK) {
		FUZZ_CHECK(al_diags_errors(d) >= 1);
	} else {
		FUZZ_CHECK(al_diags_errors(d) == 0);
		for (size_t i = 0; i < e->n_ops; i++) {
			const struct al_ev_op *o = &e->ops[i];
			FUZZ_CHECK(o->name && o->type);
			FUZZ_CHECK(o->obs >= 0 && o->obs < AL_OBS_COUNT);
			FUZZ_CHECK(strlen(o->name) <= AL_EV_MAX_TEXT && strlen(o->type) <= AL_EV_MAX_TEXT);
			FUZZ_CHECK(!o->reason || strlen(o->reason) <= AL_EV_MAX_TEXT);
		}
		struct al_cmp c;
		FUZZ_CHECK(ali_compare(model, e, &c) == AL_OK);
		size_t sum = 0;
		for (int p = 0; p < 3; p++)
			for (int k = 0; k < AL_OBS_COUNT; k++)
				sum += c.confusion[p][k];
		FUZZ_CHECK(c.agreed <= c.matched);
		if (c.model_level) { /* a placement file: counts, no rows */
			FUZZ_CHECK(e->n_ops == 0 && c.n_rows == 0 && sum == 0);
			FUZZ_CHECK(c.entry ? c.unmatched + 1 == e->n_models : c.unmatched == e->n_models && !c.matched);
			for (size_t i = 0; i < e->n_models; i++)
				for (int u = 0; u < 3; u++)
					FUZZ_CHECK(e->models[i].count[u] <= AL_EV_MAX_COUNT);
		} else {
			FUZZ_CHECK(c.matched + c.unmatched == e->n_ops && sum == c.matched);
		}
		double a = ali_cmp_agreement(&c);
		FUZZ_CHECK(a >= 0 && a <= 100);
		ali_cmp_free(&c);
		/* the prediction in this format reads back */
		struct al_buf b = {0};
		const struct al_target *t = al_target_at(fuzz_seed(data, size) % al_targets_count());
		FUZZ_CHECK(ali_evidence_write(model, e->format, t->id, "ios18", &b) == AL_OK);
		struct al_evidence *back = NULL;
		al_diags *d2 = al_diags_new();
		FUZZ_CHECK(ali_evidence_parse(b.p, b.n, "written", e->format, &back, d2) == AL_OK);
		ali_evidence_free(back);
		al_diags_free(d2);
		ali_buf_free(&b);
		ali_evidence_free(e);
	}
	al_diags_free(d);
	free(text);
	return 0;
}
