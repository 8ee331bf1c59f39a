/* SPDX-License-Identifier: MIT */
/* test_reader.c: the one "read a span at an offset" interface (struct ali_reader,
 * src/base/file.c) that ali_map_read goes through: from bytes in memory (a
 * mapping or a copy) and with pread on an open file, the latter being what the
 * WebAssembly page uses on its WORKERFS files (docs/web.md). Bounds: nothing
 * past the size is read; a file that shrank reads short and says so. */
#include "testutil.h"

#include "base.h"

#include <fcntl.h>
#include <unistd.h>

static void test_span_reader(void **state)
{
	(void)state;
	const uint8_t bytes[] = "0123456789";
	struct ali_reader r;
	ali_reader_span(&r, (al_span){bytes, 10});
	uint8_t buf[10] = {0};
	assert_true(ali_reader_read(&r, 3, buf, 4));
	assert_memory_equal(buf, "3456", 4);
	assert_true(ali_reader_read(&r, 10, buf, 0)); /* empty at the end */
	assert_false(ali_reader_read(&r, 7, buf, 4)); /* past the end */
	assert_false(ali_reader_read(&r, 11, buf, 0));
	assert_false(ali_reader_read(&r, UINT64_MAX, buf, 1));
	assert_false(ali_reader_read(&r, 1, buf, SIZE_MAX));
}

static void test_fd_reader_and_map(void **state)
{
	(void)state;
	char path[] = "/tmp/anelint_reader_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	uint8_t data[8192];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (uint8_t)(i * 7);
	assert_true(ali_write_all(fd, data, sizeof data));

	struct ali_reader r;
	ali_reader_fd(&r, fd, sizeof data);
	uint8_t buf[64];
	assert_true(ali_reader_read(&r, 4000, buf, sizeof buf));
	assert_memory_equal(buf, data + 4000, sizeof buf);
	assert_false(ali_reader_read(&r, sizeof data - 10, buf, 11));

	/* ali_map_file_open reads through a pread reader, ali_map_file from the mapping:
	 * the same bytes either way */
	al_diags *d = al_diags_new();
	struct al_map kept, mapped;
	assert_int_equal(ali_map_file_open(path, NULL, &kept, d), AL_OK);
	assert_int_equal(ali_map_file(path, NULL, &mapped, d), AL_OK);
	assert_true(kept.fd_open && kept.rd.read_at && !mapped.fd_open);
	uint8_t a[100], b[100];
	assert_true(ali_map_read(&kept, 8000, a, sizeof a));
	assert_true(ali_map_read(&mapped, 8000, b, sizeof b));
	assert_memory_equal(a, data + 8000, sizeof a);
	assert_memory_equal(b, data + 8000, sizeof b);
	assert_false(ali_map_read(&kept, 8100, a, sizeof a));

	/* the file shrinks: the pread reader reads short and fails, never past the end */
	assert_int_equal(ftruncate(fd, 4096), 0);
	assert_false(ali_reader_read(&r, 4090, buf, sizeof buf)); /* within its size, past the end now */
	assert_false(ali_map_read(&kept, 5000, a, sizeof a));
	assert_true(ali_map_read(&kept, 100, a, sizeof a));

	ali_unmap(&kept);
	ali_unmap(&mapped);
	al_diags_free(d);
	close(fd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_span_reader),
		cmocka_unit_test(test_fd_reader_and_map),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
