/* SPDX-License-Identifier: MIT */
/* fuzz_fix.c: libFuzzer harness for model surgery (surgery.c, mil_build.c, the
 * passes of src/rewrite/passes/, pbsplice.c). The input is the bytes of a .mlmodel file, or an ML Program in
 * fuzz_mil's framing (below). It is opened from memory; when it loads,
 * the rewrites are planned (up to the equivalence class picked by input bits) and
 * the rewritten file is produced in memory. Promises checked:
 *   - every status agrees with the diagnostics (fuzz_common.h);
 *   - with no rewrite applied, the output is the input, byte for byte, and so
 *     is the weight image;
 *   - with rewrites applied, the output loads again (with the new weight image:
 *     appended blobs) and checks without error;
 *   - every rewrite names its pass and node, and a reason when not applied.
 * The interpreter proof of `anelint fix` is not run here (fuzz_common's
 * fuzz_interp covers the interpreter). */
#include "fuzz_common.h"

#include <stdint.h>

/* An input that starts with 08 (Model.specificationVersion) is a .mlmodel; any
 * other is framed as fuzz_mil's (fuzz_mil_frame), so the ML Program passes (and
 * their new weight.bin blobs) are fed too. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *framed = NULL, *w = NULL;
	size_t wlen = 0;
	if (size && data[0] != 0x08) {
		framed = fuzz_mil_frame(data, size, &w, &wlen, &size);
		data = framed;
	}
	al_diags *d = al_diags_new();
	FUZZ_CHECK(d != NULL);
	al_model *m = (al_model *)1;
	enum al_status st = al_model_open_buffer(data, size, w, wlen, "fuzz.mlmodel", &m, d);
	fuzz_check_diags(d);
	fuzz_check_status(st, d, 0);
	if (st != AL_OK) {
		FUZZ_CHECK(m == NULL);
		al_diags_free(d);
		free(framed);
		free(w);
		return 0;
	}
	unsigned seed = fuzz_seed(data, size);
	struct al_surgery_opts o = {.allow = (enum al_equiv)(seed % 3)};
	al_surgery *s = NULL;
	size_t before = al_diags_errors(d);
	st = al_surgery_plan(m, &o, &s, d);
	fuzz_check_diags(d);
	fuzz_check_status(st, d, before);
	if (st == AL_OK) {
		FUZZ_CHECK(s != NULL);
		for (size_t i = 0; i < al_surgery_count(s); i++) {
			const struct al_rewrite *r = al_surgery_get(s, i);
			FUZZ_CHECK(r && r->pass && r->pass->name && r->node);
			FUZZ_CHECK(r->applied ? r->after != NULL : r->why_not != NULL);
		}
		uint8_t *out = NULL;
		size_t n = 0;
		before = al_diags_errors(d);
		st = al_surgery_bytes(s, &out, &n, d);
		fuzz_check_diags(d);
		fuzz_check_status(st, d, before);
		if (st == AL_OK) {
			const void *w2 = NULL;
			size_t w2n = 0;
			FUZZ_CHECK(al_surgery_weights(s, &w2, &w2n, d) == AL_OK);
			if (al_surgery_applied(s) == 0) {
				FUZZ_CHECK(n == size && (size == 0 || memcmp(out, data, size) == 0));
				FUZZ_CHECK(w2n == wlen && (wlen == 0 || memcmp(w2, w, wlen) == 0));
			} else {
				al_diags *d2 = al_diags_new();
				al_model *m2 = NULL;
				FUZZ_CHECK(al_model_open_buffer(out, n, w2, w2n, "fixed.mlmodel", &m2, d2) == AL_OK);
				FUZZ_CHECK(al_model_check(m2, NULL, d2) == AL_OK);
				al_model_free(m2);
				al_diags_free(d2);
			}
			free(out);
		}
		al_surgery_free(s);
	}
	al_model_free(m);
	al_diags_free(d);
	free(framed);
	free(w);
	return 0;
}
