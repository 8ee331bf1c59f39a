/* SPDX-License-Identifier: MIT */
/* test_blobmeta.c: checking an ML Program package reads weight.bin's 64-byte
 * blob metadata records with pread (ali_map_read), never through the mapping
 * (issue #34 item 2): a fault on the mapping maps the neighbouring pages the
 * page cache holds too, so peak RSS followed the cache's state (61 MB warm
 * against 39 MB cold at LLM scale). With weight.bin wholly in the page cache,
 * a check leaves its mapping with no resident page at all. Also: ali_map_read's
 * bounds, a file that shrank after it was mapped (a short read, not SIGBUS),
 * and that checking a model maps no BLAS (it is loaded by the interpreter only,
 * src/interp/kernels.c). Linux reads /proc/self/smaps; elsewhere those skip. */
#include "testutil.h"

#include "analysis.h"

#include <fcntl.h>
#include <unistd.h>

#define PKG "converted/transformer_encoder__mlp_fp32.mlpackage"

/* Read every byte of path, so the page cache holds all of it. */
static void warm(const char *path)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	char buf[65536];
	while (read(fd, buf, sizeof buf) > 0)
		;
	close(fd);
}

/* Resident kB of this process's mappings of files whose path ends in `suffix`
 * (the sum of their smaps Rss lines); -1 when there is no /proc/self/smaps, -2
 * when no such mapping exists. */
static long mapped_rss_kb(const char *suffix)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[4096];
	bool in = false, found = false;
	long kb = 0;
	size_t sl = strlen(suffix);
	while (fgets(line, sizeof line, f)) {
		size_t n = strlen(line);
		while (n && (line[n - 1] == '\n' || line[n - 1] == ' '))
			line[--n] = 0;
		long v;
		if ((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f')) {
			/* a mapping's header line, "start-end perms offset dev inode path"
			 * (lower-case hex); the fields below it are "Name: value" */
			in = n >= sl && strcmp(line + n - sl, suffix) == 0;
			found |= in;
		} else if (in && sscanf(line, "Rss: %ld kB", &v) == 1) {
			kb += v;
		}
	}
	fclose(f);
	return found ? kb : -2;
}

static bool maps_blas(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return false;
	char line[4096];
	bool found = false;
	while (!found && fgets(line, sizeof line, f))
		found = strstr(line, "libopenblas") != NULL;
	fclose(f);
	return found;
}

/* weight.bin of `model` (a package or a compiled model) wholly cached, then
 * open + check: its mapping stays non-resident, yet every blob was read (the
 * weight statistics count them). */
static void check_cached(const char *model, const char *weights_rel, uint32_t min_blobs)
{
	char weights[8192], path[4096];
	snprintf(path, sizeof path, "%s", fixture(model));
	snprintf(weights, sizeof weights, "%s/%s", path, weights_rel);
	warm(weights);
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(path, &m, d), AL_OK);
	assert_int_equal(al_model_check(m, NULL, d), AL_OK);
	uint32_t blobs = 0;
	for (size_t i = 0; al_model_get(m, i); i++)
		blobs += al_model_get(m, i)->weights.n_blobs;
	long kb = mapped_rss_kb("/weights/weight.bin");
	print_message("%s: %u blobs read; weight.bin mapping: %ld kB resident after the check "
		      "(cache warm)\n", model, blobs, kb);
	assert_true(blobs >= min_blobs);
	assert_int_equal(kb, 0);
	/* and nothing loaded BLAS */
	assert_false(maps_blas());
	al_model_free(m);
	al_diags_free(d);
}

static void test_check_faults_no_weight_page(void **state)
{
	(void)state;
	if (mapped_rss_kb("/nonexistent") == -1)
		skip(); /* no /proc/self/smaps */
	check_cached(PKG, "Data/com.apple.CoreML/weights/weight.bin", 10);
	check_cached("compiled/silero_vad_palette_4bit.mlmodelc", "weights/weight.bin", 1);
}

/* ali_map_read: inside the file only; a file cut short after it was mapped
 * reads short (false) where the mapping would raise SIGBUS. */
static void test_map_read(void **state)
{
	(void)state;
	char path[] = "/tmp/anelint_blobmeta_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	uint8_t data[3 * 4096];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (uint8_t)(i * 7 + 1);
	assert_int_equal(write(fd, data, sizeof data), (ssize_t)sizeof data);
	al_diags *d = al_diags_new();
	struct al_map keep, plain;
	assert_int_equal(ali_map_file_open(path, NULL, &keep, d), AL_OK);
	assert_int_equal(ali_map_file(path, NULL, &plain, d), AL_OK);
	assert_true(keep.fd_open || ali_guard_maps());
	assert_false(plain.fd_open);
	uint8_t got[64];
	for (uint64_t off = 0; off + 64 <= sizeof data; off += 4000) {
		assert_true(ali_map_read(&keep, off, got, 64));
		assert_memory_equal(got, data + off, 64);
		assert_true(ali_map_read(&plain, off, got, 64));
		assert_memory_equal(got, data + off, 64);
	}
	assert_true(ali_map_read(&keep, sizeof data - 64, got, 64));
	assert_false(ali_map_read(&keep, sizeof data - 63, got, 64));
	assert_false(ali_map_read(&keep, UINT64_MAX - 10, got, 64));
	assert_false(ali_map_read(&plain, sizeof data, got, 1));
	/* cut to one page: the record on the third page is gone */
	assert_int_equal(ftruncate(fd, 4096), 0);
	if (keep.fd_open)
		assert_false(ali_map_read(&keep, 2 * 4096 + 8, got, 64));
	assert_true(ali_map_read(&keep, 8, got, 64));
	assert_memory_equal(got, data + 8, 64);
	ali_unmap(&keep);
	ali_unmap(&plain);
	close(fd);
	unlink(path);
	al_diags_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_faults_no_weight_page),
		cmocka_unit_test(test_map_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
