/* SPDX-License-Identifier: MIT */
/* test_text.c: the base toolkit's text (src/base/text.c): the one dimension
 * formatter gives, in each style, the bytes of the copies it replaced (their
 * snprintf loops are kept here as the reference, cut at every buffer size),
 * the growable buffer takes a line longer than its stack buffer, and strdup. */
#include "testutil.h"

#include "base.h"

#include <string.h>

/* The copies' loops as they were (interp.c, interp_nn_args.c, interp_mil_args.c:
 * "[1,3]"; fix.c: "1,3" after a name). */
static void old_compact(char *buf, size_t cap, int rank, const int64_t *dims)
{
	size_t k = (size_t)snprintf(buf, cap, "[");
	for (int i = 0; i < rank && k < cap; i++)
		k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? "," : "", (long long)dims[i]);
	if (k < cap)
		snprintf(buf + k, cap - k, "]");
}

static void old_bare(char *b, size_t cap, const int64_t *d, uint32_t r)
{
	size_t k = strlen(b);
	for (uint32_t i = 0; i < r && k < cap; i++)
		k += (size_t)snprintf(b + k, cap - k, "%s%lld", i ? "," : "", (long long)d[i]);
}

/* report_text.c's print_shape and report_params.c's put_ttype: "[1, ?, 3]". */
static void old_spaced_query(FILE *out, const int64_t *v, uint32_t n)
{
	fputc('[', out);
	for (uint32_t i = 0; i < n; i++) {
		if (v[i] < 0)
			fprintf(out, "%s?", i ? ", " : "");
		else
			fprintf(out, "%s%lld", i ? ", " : "", (long long)v[i]);
	}
	fputc(']', out);
}

static const int64_t dims_a[] = {1, 3, 224, 224};
static const int64_t dims_b[] = {-1, 0, INT64_MAX, INT64_MIN, 7, -42};

static void test_dims_compact(void **state)
{
	(void)state;
	const int64_t *sets[] = {dims_a, dims_b};
	int ranks[] = {4, 6};
	for (int s = 0; s < 2; s++)
		for (int r = 0; r <= ranks[s]; r++)
			for (size_t cap = 1; cap < 120; cap++) {
				char want[128], got[128];
				memset(want, 'Z', sizeof want);
				memset(got, 'Z', sizeof got);
				old_compact(want, cap, r, sets[s]);
				size_t n = ali_dims_str(got, cap, sets[s], (size_t)r, 0);
				assert_string_equal(got, want);
				assert_memory_equal(got, want, sizeof got); /* nothing written past the cut */
				char full[128];
				old_compact(full, sizeof full, r, sets[s]);
				assert_int_equal(n, strlen(full));
			}
	char one[4] = "abc";
	assert_int_equal(ali_dims_str(one, 0, dims_a, 4, 0), 0); /* cap 0: untouched */
	assert_string_equal(one, "abc");
	char b[64];
	ali_dims_str(b, sizeof b, dims_a, 4, 0);
	assert_string_equal(b, "[1,3,224,224]");
	ali_dims_str(b, sizeof b, dims_a, 0, 0);
	assert_string_equal(b, "[]");
}

static void test_dims_bare(void **state)
{
	(void)state;
	for (size_t cap = 3; cap < 40; cap++) {
		char want[64] = "x=", got[64] = "x=";
		old_bare(want, cap, dims_b, 6);
		ali_dims_str(got + 2, cap - 2, dims_b, 6, AL_DIMS_BARE);
		assert_string_equal(got, want);
	}
}

static void test_dims_spaced(void **state)
{
	(void)state;
	char *want = NULL, *got = NULL;
	size_t nw = 0, ng = 0;
	FILE *fw = open_memstream(&want, &nw), *fg = open_memstream(&got, &ng);
	assert_non_null(fw);
	assert_non_null(fg);
	for (uint32_t r = 0; r <= 6; r++) {
		old_spaced_query(fw, dims_b, r);
		ali_dims_fput(fg, dims_b, r, AL_DIMS_SPACED | AL_DIMS_QUERY);
	}
	fclose(fw);
	fclose(fg);
	assert_string_equal(got, want);
	free(want);
	free(got);
	char b[64];
	ali_dims_str(b, sizeof b, dims_a, 4, AL_DIMS_SPACED);
	assert_string_equal(b, "[1, 3, 224, 224]");
	ali_dims_str(b, sizeof b, dims_b, 2, AL_DIMS_SPACED);
	assert_string_equal(b, "[-1, 0]"); /* negatives as numbers without AL_DIMS_QUERY */
	struct al_buf t = {0};
	ali_buf_dims(&t, dims_b, 3, AL_DIMS_QUERY);
	assert_int_equal(t.n, strlen("[?,0,9223372036854775807]"));
	assert_memory_equal(t.p, "[?,0,9223372036854775807]", t.n);
	ali_buf_free(&t);
}

static void test_buf(void **state)
{
	(void)state;
	struct al_buf t = {0};
	char line[2000];
	memset(line, 'a', sizeof line - 1);
	line[sizeof line - 1] = '\0';
	ali_buf_printf(&t, "%d:", 12);
	ali_buf_printf(&t, "%s", line); /* longer than the stack buffer */
	assert_false(t.failed);
	assert_int_equal(t.n, 3 + sizeof line - 1);
	assert_memory_equal(t.p, "12:aaa", 6);
	ali_buf_free(&t);
	assert_null(t.p);
	char *c = ali_strdup("conv_1");
	assert_string_equal(c, "conv_1");
	ali_free(c);
	ali_alloc_fail_after(1);
	assert_null(ali_strdup("x"));
	ali_alloc_fail_after(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dims_compact),
		cmocka_unit_test(test_dims_bare),
		cmocka_unit_test(test_dims_spaced),
		cmocka_unit_test(test_buf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
