/* SPDX-License-Identifier: MIT */
/* fuzz_mlpackage.c: libFuzzer harness for the .mlpackage loader (mlpackage.c):
 * Manifest.json through json-c, the item path checks, weight.bin from a file,
 * and the root model, all through al_model_open on a real directory.
 *
 * Framing of an input (lengths little-endian, clamped to the bytes present;
 * a header cut short counts as length 0):
 *     [u32 A][A bytes: Manifest.json][u32 B][B bytes: model.mlmodel][rest: weight.bin]
 * written to a per-process directory made once in LLVMFuzzerInitialize
 * ($TMPDIR, else /dev/shm, else /tmp: anelint-fuzz.XXXXXX), as
 *     p.mlpackage/Manifest.json
 *     p.mlpackage/Data/com.apple.CoreML/model.mlmodel
 *     p.mlpackage/Data/com.apple.CoreML/weights/weight.bin   (only when rest is non-empty)
 * Manifest.json and model.mlmodel are always written (possibly empty). The
 * directory is removed at exit; a crash leaves it behind. */
#include "fuzz_common.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[512], pkg[600], manifest[700], model[700], weights[700];

static void cleanup(void)
{
	unlink(weights);
	unlink(model);
	unlink(manifest);
	static const char *const dirs[] = {"/Data/com.apple.CoreML/weights",
					   "/Data/com.apple.CoreML", "/Data", ""};
	for (size_t i = 0; i < 4; i++) {
		char dir[700];
		snprintf(dir, sizeof dir, "%s%s", pkg, dirs[i]);
		rmdir(dir);
	}
	rmdir(root);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_guard_maps();
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(root, sizeof root, "%s/anelint-fuzz.XXXXXX", tmp);
	FUZZ_CHECK(mkdtemp(root) != NULL);
	snprintf(pkg, sizeof pkg, "%s/p.mlpackage", root);
	static const char *const dirs[] = {"", "/Data", "/Data/com.apple.CoreML",
					   "/Data/com.apple.CoreML/weights"};
	for (size_t i = 0; i < 4; i++) {
		char dir[700];
		snprintf(dir, sizeof dir, "%s%s", pkg, dirs[i]);
		FUZZ_CHECK(mkdir(dir, 0700) == 0);
	}
	snprintf(manifest, sizeof manifest, "%s/Manifest.json", pkg);
	snprintf(model, sizeof model, "%s/Data/com.apple.CoreML/model.mlmodel", pkg);
	snprintf(weights, sizeof weights, "%s/Data/com.apple.CoreML/weights/weight.bin", pkg);
	atexit(cleanup);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *mf, *mm;
	size_t mf_n, mm_n;
	fuzz_take(&data, &size, &mf, &mf_n);
	fuzz_take(&data, &size, &mm, &mm_n);
	fuzz_put_file(manifest, mf, mf_n);
	fuzz_put_file(model, mm, mm_n);
	if (size)
		fuzz_put_file(weights, data, size);
	else
		unlink(weights);

	al_diags *d = al_diags_new();
	FUZZ_CHECK(d != NULL);
	al_model *m = (al_model *)1;
	enum al_status st = al_model_open(pkg, &m, d);
	fuzz_run(st, m, d, pkg, fuzz_seed(mm, mm_n));
	al_diags_free(d);
	return 0;
}
