/* SPDX-License-Identifier: MIT */
/* test_npy.c: .npy reading and writing (npy.c), and the tensor / environment
 * basics of the interpreter (tensor.c): header parsing by hand-written bytes,
 * every dtype, round trips, hostile headers, the byte budget. */
#include "testutil.h"

#include "interp.h"

/* A .npy file image: magic, version 1.0, header padded to 64, then data. */
static size_t make_npy(uint8_t *buf, size_t cap, const char *header, const void *data, size_t n)
{
	size_t hl = strlen(header);
	size_t total = 10 + hl + 1;
	size_t pad = (64 - total % 64) % 64;
	assert_true(total + pad + n <= cap);
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (uint8_t)((hl + pad + 1) & 0xff);
	buf[9] = (uint8_t)((hl + pad + 1) >> 8);
	memcpy(buf + 10, header, hl);
	memset(buf + 10 + hl, ' ', pad);
	buf[10 + hl + pad] = '\n';
	memcpy(buf + total + pad, data, n);
	return total + pad + n;
}

static al_tensor *read_ok(const uint8_t *buf, size_t n)
{
	al_diags *d = al_diags_new();
	al_tensor *t = NULL;
	enum al_status st = al_npy_read_buffer(buf, n, "t.npy", &t, d);
	if (st != AL_OK && al_diags_count(d))
		fprintf(stderr, "%s\n", al_diags_get(d, 0)->msg);
	assert_int_equal(st, AL_OK);
	al_diags_free(d);
	return t;
}

static void test_read_f4(void **state)
{
	(void)state;
	uint8_t buf[256];
	float v[6] = {1, -2.5f, 3, 0.125f, 1e-8f, 65504};
	size_t n = make_npy(buf, sizeof buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", v,
			    sizeof v);
	al_tensor *t = read_ok(buf, n);
	assert_int_equal(al_tensor_dtype(t), AL_DT_FP32);
	assert_int_equal(al_tensor_rank(t), 2);
	assert_int_equal(al_tensor_dims(t)[0], 2);
	assert_int_equal(al_tensor_dims(t)[1], 3);
	assert_memory_equal(al_tensor_data(t), v, sizeof v);
	al_tensor_free(t);
}

static void test_read_ints_and_half(void **state)
{
	(void)state;
	uint8_t buf[256];
	int64_t i8[3] = {-7, 0, 1 << 20};
	size_t n = make_npy(buf, sizeof buf, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", i8,
			    sizeof i8);
	al_tensor *t = read_ok(buf, n);
	assert_int_equal(al_tensor_dtype(t), AL_DT_INT64);
	assert_true(al_tensor_data(t)[0] == -7.0f && al_tensor_data(t)[2] == 1048576.0f);
	al_tensor_free(t);

	uint16_t h[4] = {0x3c00, 0xc000, 0x7bff, 0x0001}; /* 1, -2, 65504, 2^-24 */
	n = make_npy(buf, sizeof buf, "{'descr': '<f2', 'fortran_order': False, 'shape': (4,), }", h, sizeof h);
	t = read_ok(buf, n);
	assert_int_equal(al_tensor_dtype(t), AL_DT_FP16);
	const float *f = al_tensor_data(t);
	assert_true(f[0] == 1.0f && f[1] == -2.0f && f[2] == 65504.0f && f[3] == 5.9604644775390625e-08f);
	al_tensor_free(t);

	uint8_t px[6] = {0, 255, 7, 8, 9, 10};
	n = make_npy(buf, sizeof buf, "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 2, 3), }", px,
		     sizeof px);
	t = read_ok(buf, n);
	assert_int_equal(al_tensor_dtype(t), AL_DT_UINT8);
	assert_true(al_tensor_data(t)[1] == 255.0f);
	al_tensor_free(t);

	/* a 0-d scalar */
	double dv = 0.25;
	n = make_npy(buf, sizeof buf, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", &dv, 8);
	t = read_ok(buf, n);
	assert_int_equal(al_tensor_rank(t), 0);
	assert_int_equal(al_tensor_count(t), 1);
	assert_true(al_tensor_data(t)[0] == 0.25f);
	al_tensor_free(t);
}

static void test_read_unicode(void **state)
{
	(void)state;
	uint8_t buf[256];
	/* "cl\u00e9" in <U4: UTF-32LE, zero-padded */
	uint32_t s[4] = {'c', 'l', 0xe9, 0};
	size_t n = make_npy(buf, sizeof buf, "{'descr': '<U4', 'fortran_order': False, 'shape': (), }", s,
			    sizeof s);
	al_tensor *t = read_ok(buf, n);
	assert_int_equal(al_tensor_dtype(t), AL_DT_STRING);
	assert_string_equal(al_tensor_string(t, 0), "cl\xc3\xa9");
	al_tensor_free(t);
}

static void expect_error(const uint8_t *buf, size_t n, const char *needle)
{
	al_diags *d = al_diags_new();
	al_tensor *t = (al_tensor *)1;
	assert_int_not_equal(al_npy_read_buffer(buf, n, "bad.npy", &t, d), AL_OK);
	assert_null(t);
	assert_true(al_diags_errors(d) >= 1);
	const char *msg = al_diags_get(d, 0)->msg;
	if (!strstr(msg, needle))
		fail_msg("'%s' does not mention '%s'", msg, needle);
	assert_null(strchr(msg, '\n'));
	al_diags_free(d);
}

static void test_hostile_headers(void **state)
{
	(void)state;
	uint8_t buf[512];
	float v[2] = {1, 2};
	expect_error((const uint8_t *)"hello world", 11, "magic");
	size_t n = make_npy(buf, sizeof buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", v, 8);
	expect_error(buf, 20, "header length"); /* cut inside the header */
	expect_error(buf, n - 1, "shorter");    /* one byte of data missing */
	n = make_npy(buf, sizeof buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
		     v, 8);
	expect_error(buf, n, "shape");
	n = make_npy(buf, sizeof buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000,), }", v, 8);
	expect_error(buf, n, "shorter"); /* no allocation from the header alone */
	n = make_npy(buf, sizeof buf, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", v, 8);
	expect_error(buf, n, "dtype");
	n = make_npy(buf, sizeof buf, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", v, 8);
	expect_error(buf, n, "dtype");
	n = make_npy(buf, sizeof buf, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", v, 8);
	expect_error(buf, n, "Fortran");
	n = make_npy(buf, sizeof buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }",
		     v, 8);
	expect_error(buf, n, "rank");
	n = make_npy(buf, sizeof buf, "{'descr': '<f4', 'fortran_order': False}", v, 8);
	expect_error(buf, n, "shape");
	/* version 9 */
	n = make_npy(buf, sizeof buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", v, 8);
	buf[6] = 9;
	expect_error(buf, n, "version");
}

/* Every prefix of a valid file is refused cleanly or read (never a crash). */
static void test_truncations(void **state)
{
	(void)state;
	uint8_t buf[256];
	float v[3] = {1, 2, 3};
	size_t n = make_npy(buf, sizeof buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", v, 12);
	for (size_t k = 0; k < n; k++) {
		uint8_t *copy = malloc(k ? k : 1);
		memcpy(copy, buf, k);
		al_diags *d = al_diags_new();
		al_tensor *t = NULL;
		assert_int_not_equal(al_npy_read_buffer(copy, k, "cut.npy", &t, d), AL_OK);
		assert_null(t);
		al_diags_free(d);
		free(copy);
	}
}

static al_tensor *roundtrip(const al_tensor *t, int dtype)
{
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);
	assert_int_equal(al_npy_write(f, t, dtype), AL_OK);
	fclose(f);
	assert_int_equal(len % 64 == 0 || len > 64, 1);
	/* the header block is 64-byte aligned, as numpy writes it */
	size_t hl = (size_t)(uint8_t)mem[8] | (size_t)(uint8_t)mem[9] << 8;
	assert_int_equal((10 + hl) % 64, 0);
	al_tensor *r = read_ok((const uint8_t *)mem, len);
	free(mem);
	return r;
}

static void test_write_roundtrip(void **state)
{
	(void)state;
	int64_t dims[3] = {2, 1, 3};
	al_tensor *t = al_tensor_new(AL_DT_FP32, 3, dims);
	float *v = al_tensor_data(t);
	float vals[6] = {0.1f, -1, 3.5f, 70000, 1e-9f, -0.0f};
	memcpy(v, vals, sizeof vals);
	al_tensor *r = roundtrip(t, 0);
	assert_int_equal(al_tensor_rank(r), 3);
	assert_memory_equal(al_tensor_dims(r), dims, sizeof dims);
	assert_memory_equal(al_tensor_data(r), vals, sizeof vals);
	al_tensor_free(r);
	/* as fp16: 70000 overflows to inf, 1e-9 underflows to 0, 0.1 rounds */
	r = roundtrip(t, AL_DT_FP16);
	assert_int_equal(al_tensor_dtype(r), AL_DT_FP16);
	const float *h = al_tensor_data(r);
	assert_true(h[0] == 0.0999755859375f);
	assert_true(h[3] > 65504.0f && h[3] == h[3] * 2); /* +inf */
	assert_true(h[4] == 0.0f);
	al_tensor_free(r);
	/* as int32: rounded, clamped */
	r = roundtrip(t, AL_DT_INT32);
	assert_true(al_tensor_data(r)[2] == 4.0f && al_tensor_data(r)[1] == -1.0f);
	al_tensor_free(r);
	/* a 1-d shape is written "(n,)" and reads back as rank 1 */
	int64_t one = 6;
	al_tensor *flat = al_tensor_new(AL_DT_FP32, 1, &one);
	r = roundtrip(flat, 0);
	assert_int_equal(al_tensor_rank(r), 1);
	assert_int_equal(al_tensor_dims(r)[0], 6);
	al_tensor_free(r);
	al_tensor_free(flat);
	al_tensor_free(t);
}

/* The environment: bind, replace, look up through parents, many names. */
static void test_env(void **state)
{
	(void)state;
	struct al_exec x = {.max_bytes = 1 << 20};
	al_diags *d = al_diags_new();
	x.d = d;
	struct al_env *outer = ali_env_new(&x, NULL), *inner = ali_env_new(&x, outer);
	int64_t dim = 4;
	char name[32];
	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof name, "v%d", i);
		struct al_tensor *t = ali_tensor_alloc(&x, NULL, AL_DT_FP32, 1, &dim);
		assert_non_null(t);
		t->f[0] = (float)i;
		assert_true(ali_env_put(outer, name, t));
	}
	assert_int_equal(x.bytes_live, 500 * 16);
	struct al_tensor *shadow = ali_tensor_alloc(&x, NULL, AL_DT_FP32, 1, &dim);
	shadow->f[0] = -1;
	assert_true(ali_env_put(inner, "v7", shadow));
	assert_true(ali_env_get(inner, "v7")->f[0] == -1.0f);
	assert_true(ali_env_get(outer, "v7")->f[0] == 7.0f);
	assert_true(ali_env_get(inner, "v499")->f[0] == 499.0f);
	assert_null(ali_env_get(inner, "v500"));
	ali_env_free(inner);
	ali_env_free(outer);
	assert_int_equal(x.bytes_live, 0);
	assert_int_equal(al_diags_errors(d), 0);
	al_diags_free(d);
}

/* The byte budget refuses what a hostile shape asks for, with one clean error. */
static void test_budget(void **state)
{
	(void)state;
	struct al_exec x = {.max_bytes = 1 << 20};
	al_diags *d = al_diags_new();
	x.d = d;
	int64_t big[2] = {1 << 20, 1 << 20};
	assert_null(ali_tensor_alloc(&x, NULL, AL_DT_FP32, 2, big));
	int64_t huge[3] = {INT64_C(1) << 40, 1 << 30, 1 << 30};
	assert_null(ali_tensor_alloc(&x, NULL, AL_DT_FP32, 3, huge));
	int64_t neg = -1;
	assert_null(ali_tensor_alloc(&x, NULL, AL_DT_FP32, 1, &neg));
	assert_true(al_diags_errors(d) >= 2);
	assert_int_equal(x.bytes_live, 0);
	al_diags_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_f4),
		cmocka_unit_test(test_read_ints_and_half),
		cmocka_unit_test(test_read_unicode),
		cmocka_unit_test(test_hostile_headers),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_write_roundtrip),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_budget),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
