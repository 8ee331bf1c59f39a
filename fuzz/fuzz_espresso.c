/* SPDX-License-Identifier: MIT */
/* fuzz_espresso.c: libFuzzer harness for compiled NeuralNetworks read from
 * espresso files (espresso.c through mlmodelc.c and the Model walk).
 *
 * Framing of an input:
 *     [u16 LE W][W bytes: model.espresso.weights][u16 LE S][S bytes: model.espresso.shape]
 *     [rest: model.espresso.net]
 * W and S are clamped to the bytes present; 0 leaves that file out. The files go into a fresh directory
 * x.mlmodelc/ next to a fixed coremldata.bin (a spec-4 neuralNetwork with one
 * input input_1 [1, 16, 16] and one output Identity), which al_model_open reads
 * as a compiled model. Then check + sinks (fuzz_common.h). */
#include "fuzz_common.h"

#include <stdint.h>

static const uint8_t cdata[] = {
	0xf4, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x67, 0x65, 0x6e, 0x65, 0x72, 0x69, 0x63, 0x04, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x31, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x0a, 0x16, 0x0a, 0x07, 0x69, 0x6e, 0x70, 0x75, 0x74, 0x5f, 0x31, 0x1a, 0x0b,
	0x2a, 0x09, 0x0a, 0x03, 0x01, 0x10, 0x10, 0x10, 0xa0, 0x80, 0x04, 0x52, 0x17, 0x0a, 0x08, 0x49,
	0x64, 0x65, 0x6e, 0x74, 0x69, 0x74, 0x79, 0x1a, 0x0b, 0x2a, 0x09, 0x0a, 0x03, 0x01, 0x10, 0x10,
	0x10, 0xa0, 0x80, 0x04,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_guard_maps();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *w = data, *sh = data;
	size_t wlen = 0, slen = 0;
	if (size >= 2) {
		wlen = (size_t)data[0] | (size_t)data[1] << 8;
		data += 2;
		size -= 2;
		if (wlen > size)
			wlen = size;
		w = data;
		data += wlen;
		size -= wlen;
	}
	if (size >= 2) {
		slen = (size_t)data[0] | (size_t)data[1] << 8;
		data += 2;
		size -= 2;
		if (slen > size)
			slen = size;
		sh = data;
		data += slen;
		size -= slen;
	}
	static unsigned serial;
	char dir[700], p[800];
	snprintf(dir, sizeof dir, "%s/x%u.mlmodelc", fuzz_scratch_dir(), serial++);
	FUZZ_CHECK(mkdir(dir, 0700) == 0);
	snprintf(p, sizeof p, "%s/coremldata.bin", dir);
	fuzz_put_file(p, cdata, sizeof cdata);
	snprintf(p, sizeof p, "%s/model.espresso.net", dir);
	fuzz_put_file(p, data, size);
	if (wlen) {
		snprintf(p, sizeof p, "%s/model.espresso.weights", dir);
		fuzz_put_file(p, w, wlen);
	}
	if (slen) {
		snprintf(p, sizeof p, "%s/model.espresso.shape", dir);
		fuzz_put_file(p, sh, slen);
	}
	al_diags *d = al_diags_new();
	FUZZ_CHECK(d != NULL);
	al_model *m = (al_model *)1;
	enum al_status st = al_model_open(dir, &m, d);
	fuzz_run(st, m, d, "x.mlmodelc", fuzz_seed(data, size));
	al_diags_free(d);
	fuzz_rm_tree(dir);
	return 0;
}
