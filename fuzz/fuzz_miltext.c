/* SPDX-License-Identifier: MIT */
/* fuzz_miltext.c: libFuzzer harness for the MIL text reader (miltext.c) and
 * writer (miltext_write.c), and the IR built from what they read.
 *
 * Framing of an input:
 *     [u16 little-endian L][L bytes: weight.bin image][rest: MIL text]
 * L is clamped to the bytes present. The text is parsed into a Program message;
 * when that succeeds, the Program is wrapped into the smallest Model message
 * that carries it (as fuzz_mil.c does) and opened with al_model_open_buffer,
 * then check + sinks (fuzz_common.h). Promises checked on the way: a failed
 * parse is exactly one error diagnostic naming a line and column; a parsed
 * program that loads writes back as text that parses again, to a program that
 * writes the same text (the writer and the reader agree). */
#include "fuzz_common.h"
#include "miltext.h"

#include <stdint.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_guard_maps();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t wlen = 0;
	if (size >= 2) {
		wlen = (size_t)data[0] | (size_t)data[1] << 8;
		data += 2;
		size -= 2;
		if (wlen > size)
			wlen = size;
	}
	uint8_t *w = NULL;
	if (wlen) {
		w = malloc(wlen);
		FUZZ_CHECK(w != NULL);
		memcpy(w, data, wlen);
	}
	size_t tlen = size - wlen;
	/* its own block; the parser reads it through a copy ending at a guard page */
	uint8_t *text = malloc(tlen ? tlen : 1);
	FUZZ_CHECK(text != NULL);
	if (tlen)
		memcpy(text, data + wlen, tlen);

	al_diags *d = al_diags_new();
	FUZZ_CHECK(d != NULL);
	struct al_buf prog = {0};
	enum al_status st = ali_mil_text_parse((al_span){text, tlen}, "fuzz.mil", &prog, d);
	fuzz_check_diags(d);
	if (st != AL_OK) {
		FUZZ_CHECK(st == AL_E_FORMAT || st == AL_E_NOMEM);
		FUZZ_CHECK(al_diags_count(d) == 1);
		FUZZ_CHECK(st == AL_E_NOMEM || strstr(al_diags_get(d, 0)->msg, "line ") != NULL ||
			   strstr(al_diags_get(d, 0)->msg, "refused") != NULL);
	} else {
		/* Model { specificationVersion = 7; mlProgram = prog } */
		size_t n = 0;
		uint8_t *model = malloc(prog.n + 16);
		FUZZ_CHECK(model != NULL);
		model[n++] = 0x08;
		model[n++] = 7;
		model[n++] = 0xB2;
		model[n++] = 0x1F;
		for (size_t v = prog.n;; v >>= 7) {
			model[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
			if (v <= 0x7f)
				break;
		}
		if (prog.n)
			memcpy(model + n, prog.p, prog.n);
		n += prog.n;
		al_model *m = (al_model *)1;
		st = al_model_open_buffer(model, n, w, wlen, "fuzz.mlmodelc", &m, d);
		if (st == AL_OK) {
			struct al_buf t1 = {0}, p2 = {0}, t2 = {0};
			FUZZ_CHECK(ali_mil_text_write((al_span){prog.p, prog.n}, &t1));
			al_diags *d2 = al_diags_new();
			FUZZ_CHECK(d2 != NULL);
			FUZZ_CHECK(ali_mil_text_parse((al_span){t1.p, t1.n}, "rt.mil", &p2, d2) == AL_OK);
			FUZZ_CHECK(ali_mil_text_write((al_span){p2.p, p2.n}, &t2));
			FUZZ_CHECK(t1.n == t2.n && (t1.n == 0 || memcmp(t1.p, t2.p, t1.n) == 0));
			al_diags_free(d2);
			ali_buf_free(&t1);
			ali_buf_free(&p2);
			ali_buf_free(&t2);
		}
		fuzz_run(st, m, d, "fuzz.mlmodelc", fuzz_seed(data, size));
		free(model);
	}
	ali_buf_free(&prog);
	al_diags_free(d);
	free(text);
	free(w);
	return 0;
}
