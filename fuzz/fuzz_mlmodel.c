/* SPDX-License-Identifier: MIT */
/* fuzz_mlmodel.c: libFuzzer harness for the protobuf wire reader and the
 * .mlmodel loader. The input is the bytes of a .mlmodel file (one serialized
 * Model message), read with al_model_open_buffer and no weight.bin; then
 * al_model_check and both report sinks (fuzz_common.h). */
#include "fuzz_common.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	al_diags *d = al_diags_new();
	FUZZ_CHECK(d != NULL);
	al_model *m = (al_model *)1; /* must be reset by the call */
	enum al_status st = al_model_open_buffer(data, size, NULL, 0, "fuzz.mlmodel", &m, d);
	fuzz_run(st, m, d, "fuzz.mlmodel", fuzz_seed(data, size));
	al_diags_free(d);
	return 0;
}
