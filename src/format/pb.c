/* SPDX-License-Identifier: MIT */
/* pb.c: protobuf wire decoding over a borrowed span (see pb.h).
 * Does not allocate, does not copy, never reads past the span. */
#include "pb.h"

#include <string.h>

const char *pb_err_str(int err)
{
	switch (err) {
	case PB_OK: return "ok";
	case PB_ERR_TRUNCATED: return "truncated field";
	case PB_ERR_VARINT: return "varint longer than 10 bytes";
	case PB_ERR_WIRETYPE: return "invalid wire type";
	case PB_ERR_FIELDNUM: return "invalid field number";
	}
	return "unknown wire error";
}

int pb_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = *pos;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (i >= n)
			return PB_ERR_TRUNCATED;
		uint8_t b = p[i++];
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pos = i;
			*out = v;
			return PB_OK;
		}
	}
	return PB_ERR_VARINT;
}

void pb_iter_init(struct pb_iter *it, al_span msg)
{
	it->msg = msg;
	it->pos = 0;
	it->err = PB_OK;
	it->err_pos = 0;
}

bool pb_get_varint(al_span msg, uint32_t num, uint64_t *out)
{
	struct pb_iter it;
	struct pb_field f;
	bool found = false;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f))
		if (f.num == num && f.wire == PB_VARINT) {
			*out = f.u;
			found = true;
		}
	return found && !it.err;
}

bool pb_get_fixed32(al_span msg, uint32_t num, uint32_t *out)
{
	struct pb_iter it;
	struct pb_field f;
	bool found = false;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f))
		if (f.num == num && f.wire == PB_FIXED32) {
			*out = (uint32_t)f.u;
			found = true;
		}
	return found && !it.err;
}

bool pb_get_float(al_span msg, uint32_t num, float *out)
{
	uint32_t bits;
	if (!pb_get_fixed32(msg, num, &bits))
		return false;
	memcpy(out, &bits, sizeof *out);
	return true;
}

bool pb_get_bytes(al_span msg, uint32_t num, al_span *out)
{
	struct pb_iter it;
	struct pb_field f;
	bool found = false;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f))
		if (f.num == num && f.wire == PB_LEN) {
			*out = f.data;
			found = true;
		}
	return found && !it.err;
}

bool pb_has(al_span msg, uint32_t num)
{
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f))
		if (f.num == num)
			return true;
	return false;
}

size_t pb_count(al_span msg, uint32_t num)
{
	struct pb_iter it;
	struct pb_field f;
	size_t c = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f))
		if (f.num == num)
			c++;
	return c;
}

long pb_get_varints(al_span msg, uint32_t num, uint64_t *out, size_t max)
{
	struct pb_iter it;
	struct pb_field f;
	size_t c = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (f.num != num)
			continue;
		if (f.wire == PB_VARINT) {
			if (c < max)
				out[c] = f.u;
			c++;
		} else if (f.wire == PB_LEN) {
			size_t pos = 0;
			while (pos < f.data.n) {
				uint64_t v;
				if (pb_varint(f.data.p, f.data.n, &pos, &v))
					return -1;
				if (c < max)
					out[c] = v;
				c++;
			}
		} else {
			return -1;
		}
	}
	return it.err ? -1 : (long)c;
}

long pb_get_floats(al_span msg, uint32_t num, float *out, size_t max)
{
	struct pb_iter it;
	struct pb_field f;
	size_t c = 0;
	pb_iter_init(&it, msg);
	while (pb_next(&it, &f)) {
		if (f.num != num)
			continue;
		if (f.wire == PB_FIXED32) {
			if (c < max) {
				uint32_t b = (uint32_t)f.u;
				memcpy(&out[c], &b, 4);
			}
			c++;
		} else if (f.wire == PB_LEN) {
			if (f.data.n % 4)
				return -1;
			for (size_t i = 0; i < f.data.n; i += 4, c++)
				if (c < max) {
					uint32_t b = al_rd32le(f.data.p + i);
					memcpy(&out[c], &b, 4);
				}
		} else {
			return -1;
		}
	}
	return it.err ? -1 : (long)c;
}

bool ali_span_eq(al_span s, const char *z)
{
	size_t n = strlen(z);
	return s.n == n && (n == 0 || memcmp(s.p, z, n) == 0);
}
