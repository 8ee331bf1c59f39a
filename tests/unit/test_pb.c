/* SPDX-License-Identifier: MIT */
/* test_pb.c: the protobuf wire reader on hand-written byte strings: every wire
 * type, packed and unpacked repeats, negative int32 as 10-byte varints, and
 * every way a field can be malformed (it must stop, never read past the span).
 * Also the layer/op tables: sorted, so the binary searches find every row. */
#include "testutil.h"

#include "analysis.h"
#include "pb.h"

#define SPAN(a) ((al_span){(const uint8_t *)(a), sizeof(a) - 1})

static void test_varint(void **state)
{
	(void)state;
	const uint8_t one[] = {0x01}, big[] = {0xAC, 0x02};
	uint64_t v;
	size_t pos = 0;
	assert_int_equal(pb_varint(one, 1, &pos, &v), PB_OK);
	assert_int_equal(v, 1);
	assert_int_equal(pos, 1);
	pos = 0;
	assert_int_equal(pb_varint(big, 2, &pos, &v), PB_OK);
	assert_int_equal(v, 300);
	/* -1 as int32 is written as ten bytes, sign-extended to 64 bits */
	const uint8_t minus1[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
	pos = 0;
	assert_int_equal(pb_varint(minus1, sizeof minus1, &pos, &v), PB_OK);
	assert_int_equal((int64_t)v, -1);
	/* truncated and over-long */
	pos = 0;
	assert_int_equal(pb_varint(big, 1, &pos, &v), PB_ERR_TRUNCATED);
	const uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
	pos = 0;
	assert_int_equal(pb_varint(eleven, sizeof eleven, &pos, &v), PB_ERR_VARINT);
}

static void test_fields(void **state)
{
	(void)state;
	/* 1: varint 150; 2: string "hi"; 3: fixed32 1.0f; 4: fixed64; 5: empty message */
	al_span m = SPAN("\x08\x96\x01"
			 "\x12\x02hi"
			 "\x1d\x00\x00\x80\x3f"
			 "\x21\x01\x00\x00\x00\x00\x00\x00\x00"
			 "\x2a\x00");
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, m);
	assert_true(pb_next(&it, &f));
	assert_int_equal(f.num, 1);
	assert_int_equal(f.wire, PB_VARINT);
	assert_int_equal(f.u, 150);
	assert_true(pb_next(&it, &f));
	assert_int_equal(f.num, 2);
	assert_int_equal(f.data.n, 2);
	assert_memory_equal(f.data.p, "hi", 2);
	assert_int_equal(f.data.p - m.p, 5); /* the payload, after tag and length */
	assert_true(pb_next(&it, &f));
	assert_int_equal(f.wire, PB_FIXED32);
	assert_true(pb_next(&it, &f));
	assert_int_equal(f.wire, PB_FIXED64);
	assert_int_equal(f.u, 1);
	assert_true(pb_next(&it, &f));
	assert_int_equal(f.num, 5);
	assert_int_equal(f.data.n, 0);
	assert_false(pb_next(&it, &f));
	assert_int_equal(it.err, PB_OK);

	float x;
	assert_true(pb_get_float(m, 3, &x));
	assert_true(x == 1.0f);
	uint64_t v;
	assert_true(pb_get_varint(m, 1, &v));
	assert_int_equal(v, 150);
	assert_false(pb_get_varint(m, 9, &v));
	al_span s;
	assert_true(pb_get_string(m, 2, &s));
	assert_true(ali_span_eq(s, "hi"));
	assert_false(ali_span_eq(s, "h"));
	assert_true(pb_has(m, 5));
	assert_int_equal(pb_count(m, 2), 1);
}

static void test_last_scalar_wins(void **state)
{
	(void)state;
	al_span m = SPAN("\x08\x01\x08\x02");
	uint64_t v;
	assert_true(pb_get_varint(m, 1, &v));
	assert_int_equal(v, 2);
}

static void test_repeated(void **state)
{
	(void)state;
	/* kernelSize=10 packed [15,15], then one unpacked 7, then packed [3] */
	al_span m = SPAN("\x52\x02\x0f\x0f"
			 "\x50\x07"
			 "\x52\x01\x03");
	uint64_t out[8];
	assert_int_equal(pb_get_varints(m, 10, out, 8), 4);
	assert_int_equal(out[0], 15);
	assert_int_equal(out[1], 15);
	assert_int_equal(out[2], 7);
	assert_int_equal(out[3], 3);
	/* more present than room: count is still the total */
	assert_int_equal(pb_get_varints(m, 10, out, 2), 4);
	/* packed floats [1.0, 2.0] */
	al_span f = SPAN("\x0a\x08\x00\x00\x80\x3f\x00\x00\x00\x40");
	float fl[4];
	assert_int_equal(pb_get_floats(f, 1, fl, 4), 2);
	assert_true(fl[0] == 1.0f && fl[1] == 2.0f);
	/* packed floats whose length is not a multiple of 4 */
	al_span bad = SPAN("\x0a\x03\x00\x00\x80");
	assert_int_equal(pb_get_floats(bad, 1, fl, 4), -1);
	/* packed varints ending mid-varint */
	al_span badv = SPAN("\x52\x01\x80");
	assert_int_equal(pb_get_varints(badv, 10, out, 8), -1);
}

static void expect_error(al_span m, int err, size_t at)
{
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, m);
	while (pb_next(&it, &f))
		;
	assert_int_equal(it.err, err);
	assert_int_equal(it.err_pos, at);
}

static void test_malformed(void **state)
{
	(void)state;
	/* a length prefix of ~4 GB in a 7-byte buffer */
	expect_error(SPAN("\x12\xff\xff\xff\xff\x0f" "ab"), PB_ERR_TRUNCATED, 0);
	/* length one past the end, after a valid field */
	expect_error(SPAN("\x08\x01\x12\x03" "ab"), PB_ERR_TRUNCATED, 2);
	/* groups (wire types 3, 4) and the undefined 6, 7 */
	expect_error(SPAN("\x0b"), PB_ERR_WIRETYPE, 0);
	expect_error(SPAN("\x0c"), PB_ERR_WIRETYPE, 0);
	expect_error(SPAN("\x0e"), PB_ERR_WIRETYPE, 0);
	/* field number 0 */
	expect_error(SPAN("\x00\x01"), PB_ERR_FIELDNUM, 0);
	/* truncated fixed32 / fixed64 / tag */
	expect_error(SPAN("\x1d\x00\x00"), PB_ERR_TRUNCATED, 0);
	expect_error(SPAN("\x21\x00\x00\x00\x00"), PB_ERR_TRUNCATED, 0);
	expect_error(SPAN("\x80"), PB_ERR_TRUNCATED, 0);
	/* lookups on malformed input report absence, never garbage */
	uint64_t v;
	assert_false(pb_get_varint(SPAN("\x08\x01\x12\x09"), 1, &v));
	assert_string_equal(pb_err_str(PB_ERR_TRUNCATED), "truncated field");
}

static void test_every_prefix_is_safe(void **state)
{
	(void)state;
	/* Walking every prefix of a message must end cleanly at a field boundary
	 * or with an error; under ASan this also proves no read past the span. */
	static const uint8_t msg[] = "\x08\x96\x01\x12\x02hi\x1d\x00\x00\x80\x3f\x2a\x04\x08\x01\x10\x02";
	for (size_t n = 0; n <= sizeof msg - 1; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		memcpy(copy, msg, n);
		struct pb_iter it;
		struct pb_field f;
		pb_iter_init(&it, (al_span){copy, n});
		int fields = 0;
		while (pb_next(&it, &f))
			fields++;
		assert_true(fields <= 5);
		assert_true(it.err != PB_OK || it.pos == n);
		free(copy);
	}
}

static void test_tables_sorted(void **state)
{
	(void)state;
	for (size_t i = 1; i < ali_nn_kinds_count; i++)
		assert_true(ali_nn_kinds[i - 1].field < ali_nn_kinds[i].field);
	for (size_t i = 1; i < ali_mil_kinds_count; i++)
		assert_true(strcmp(ali_mil_kinds[i - 1].name, ali_mil_kinds[i].name) < 0);
	for (size_t i = 0; i < ali_nn_kinds_count; i++)
		assert_int_equal(ali_nn_kind_by_field(ali_nn_kinds[i].field), (int)i);
	for (size_t i = 0; i < ali_mil_kinds_count; i++)
		assert_int_equal(ali_mil_kind_by_name(ali_mil_kinds[i].name), (int)i);
	assert_int_equal(ali_nn_kinds_count, 158);
	assert_string_equal(ali_nn_kinds[ali_nn_kind_by_field(880)].name, "addBroadcastable");
	assert_string_equal(ali_nn_kinds[ali_nn_kind_by_field(100)].name, "convolution");
	assert_int_equal(ali_nn_kind_by_field(101), -1);
	assert_int_equal(ali_mil_kind_by_name("no_such_op"), -1);
	assert_true(ali_mil_kinds[ali_mil_kind_by_name("cumsum")].flags & AL_OPF_CPU_ONLY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varint),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_last_scalar_wins),
		cmocka_unit_test(test_repeated),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_every_prefix_is_safe),
		cmocka_unit_test(test_tables_sorted),
	};
	return cmocka_run_group_tests_name("pb", tests, NULL, NULL);
}
