/* SPDX-License-Identifier: MIT */
/* fuzz_mil.c: libFuzzer harness for the ML Program walker (mil.c) and the
 * weight.bin checks, fed directly.
 *
 * Framing of an input:
 *     [u16 little-endian L][L bytes: weight.bin image][rest: a MILSpec.Program message]
 * L is clamped to the bytes present. The Program is wrapped into the smallest
 * Model message that carries it,
 *     Model { specificationVersion (1) = 6; mlProgram (502) = <rest> }
 *     = 08 06  B2 1F <varint len(rest)> <rest>
 * and opened with al_model_open_buffer, with the weight image when L > 0.
 * Both parts are copied into their own heap blocks so that AddressSanitizer
 * sees a read past either end. Then check + both sinks (fuzz_common.h). */
#include "fuzz_common.h"

#include <stdint.h>

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
	const uint8_t *prog = data + wlen;
	size_t plen = size - wlen;

	uint8_t *model = malloc(plen + 16);
	FUZZ_CHECK(model != NULL);
	size_t n = 0;
	model[n++] = 0x08; /* field 1, varint */
	model[n++] = 6;
	model[n++] = 0xB2; /* field 502, length-delimited */
	model[n++] = 0x1F;
	for (size_t v = plen; ; v >>= 7) {
		model[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		if (v <= 0x7f)
			break;
	}
	if (plen)
		memcpy(model + n, prog, plen);
	n += plen;

	al_diags *d = al_diags_new();
	FUZZ_CHECK(d != NULL);
	al_model *m = (al_model *)1;
	enum al_status st = al_model_open_buffer(model, n, w, wlen, "fuzz.mlpackage", &m, d);
	fuzz_run(st, m, d, "fuzz.mlpackage", fuzz_seed(data, size));
	al_diags_free(d);
	free(model);
	free(w);
	return 0;
}
