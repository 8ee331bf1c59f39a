/* SPDX-License-Identifier: MIT */
/* pb.h: a zero-copy protobuf wire reader over a borrowed byte span.
 *
 * It knows the wire format only (varints, the four wire types, packed and
 * unpacked repeated scalars); it knows nothing of Core ML. Nothing is copied:
 * a field's bytes stay a span into the caller's buffer (an mmap of the file),
 * so reading a layer header never touches the weights that follow it.
 *
 * Why hand-written rather than protobuf-c (Debian libprotobuf-c): protobuf-c
 * unpacks whole messages and copies every `bytes` field (weights included:
 * 9.34 MB of fp32 weights in mobilenet_v2__nn_ios13.mlmodel, counted by this
 * loader from span lengths), and on malformed input returns NULL with no offset
 * or field. Measured with this reader (bench/run.sh): `anelint check` of a 495 MB
 * model takes 6 ms warm and 21 ms cold with 10 MB peak RSS cold, against 29 ms /
 * 332 ms for `cat` of the same file; errors carry the failing field's offset.
 *
 * Every length is bounded by the bytes actually present; no function reads
 * outside [span.p, span.p + span.n).
 */
#ifndef ANELINT_PB_H
#define ANELINT_PB_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "base.h"


enum pb_wire {
	PB_VARINT = 0,
	PB_FIXED64 = 1,
	PB_LEN = 2,
	PB_SGROUP = 3, /* groups are not used by Core ML; rejected */
	PB_EGROUP = 4,
	PB_FIXED32 = 5,
};

/* The fields of a map entry (a protobuf map<K, V> is a repeated message of
 * these two: MIL's Operation.inputs, attributes, a Function's inputs ...). */
enum { PB_MAP_KEY = 1, PB_MAP_VALUE = 2 };

/* One decoded field. For PB_LEN, `data` is the payload; for scalars `u` holds
 * the raw value (varint, or the little-endian fixed32/fixed64 bits). */
struct pb_field {
	uint32_t num;
	enum pb_wire wire;
	uint64_t u;
	al_span data;
	size_t start; /* offset of the tag within the message span */
};

/* A cursor over one message's fields. */
struct pb_iter {
	al_span msg;
	size_t pos;
	int err;        /* 0, or one of PB_ERR_* */
	size_t err_pos; /* offset (within msg) where decoding failed */
};

enum {
	PB_OK = 0,
	PB_ERR_TRUNCATED = 1, /* a varint, fixed or length runs past the end */
	PB_ERR_VARINT = 2,    /* varint longer than 10 bytes */
	PB_ERR_WIRETYPE = 3,  /* group or unknown wire type */
	PB_ERR_FIELDNUM = 4,  /* field number 0 or > 2^29-1 */
};

const char *pb_err_str(int err);

void pb_iter_init(struct pb_iter *it, al_span msg);

/* Decode a varint at *pos inside [p, p+n); advances *pos. Returns PB_OK or an error. */
int pb_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *out);

/* Next field; returns false at the end or on error (then it->err != 0).
 * Inline: the loaders and rules call it for every field they read (a third of
 * a large check's instructions were its calls). */
/* pb_varint with the one-byte case (most tags and lengths) inline: pb_next
 * is a third of a large check's instructions. */
static inline int pb_varint1_(const uint8_t *p, size_t n, size_t *pos, uint64_t *out)
{
	size_t i = *pos;
	if (i < n && p[i] < 0x80) {
		*out = p[i];
		*pos = i + 1;
		return PB_OK;
	}
	return pb_varint(p, n, pos, out);
}

static inline bool pb_fail_(struct pb_iter *it, int err, size_t at)
{
	it->err = err;
	it->err_pos = at;
	return false;
}

static inline bool pb_next(struct pb_iter *it, struct pb_field *f)
{
	const uint8_t *p = it->msg.p;
	size_t n = it->msg.n;
	if (it->err || it->pos >= n)
		return false;
	size_t start = it->pos;
	uint64_t tag;
	int e = pb_varint1_(p, n, &it->pos, &tag);
	if (e)
		return pb_fail_(it, e, start);
	uint64_t num = tag >> 3;
	if (num == 0 || num > 0x1fffffff)
		return pb_fail_(it, PB_ERR_FIELDNUM, start);
	f->num = (uint32_t)num;
	f->wire = (enum pb_wire)(tag & 7);
	f->start = start;
	f->u = 0;
	f->data.p = NULL;
	f->data.n = 0;
	switch (f->wire) {
	case PB_VARINT:
		e = pb_varint1_(p, n, &it->pos, &f->u);
		if (e)
			return pb_fail_(it, e, start);
		return true;
	case PB_FIXED64:
		if (n - it->pos < 8)
			return pb_fail_(it, PB_ERR_TRUNCATED, start);
		for (int i = 7; i >= 0; i--)
			f->u = (f->u << 8) | p[it->pos + (size_t)i];
		it->pos += 8;
		return true;
	case PB_FIXED32:
		if (n - it->pos < 4)
			return pb_fail_(it, PB_ERR_TRUNCATED, start);
		for (int i = 3; i >= 0; i--)
			f->u = (f->u << 8) | p[it->pos + (size_t)i];
		it->pos += 4;
		return true;
	case PB_LEN: {
		uint64_t len;
		e = pb_varint1_(p, n, &it->pos, &len);
		if (e)
			return pb_fail_(it, e, start);
		if (len > n - it->pos)
			return pb_fail_(it, PB_ERR_TRUNCATED, start);
		f->data.p = p + it->pos;
		f->data.n = (size_t)len;
		f->u = len;
		it->pos += (size_t)len;
		return true;
	}
	default:
		return pb_fail_(it, PB_ERR_WIRETYPE, start);
	}
}


/* ---- convenience lookups on one message (last occurrence wins for scalars,
 *      as protobuf readers do). Each returns false if the field is absent or
 *      the message is malformed; malformed input is reported by the loaders,
 *      which walk every message once with pb_next before rules look inside. */
bool pb_get_varint(al_span msg, uint32_t num, uint64_t *out);
bool pb_get_fixed32(al_span msg, uint32_t num, uint32_t *out);
bool pb_get_float(al_span msg, uint32_t num, float *out);
bool pb_get_bytes(al_span msg, uint32_t num, al_span *out);
bool pb_has(al_span msg, uint32_t num);
/* Number of occurrences of field `num` (repeated sub-messages/strings). */
size_t pb_count(al_span msg, uint32_t num);

/* Repeated varints (packed or not, or mixed). Writes up to `max` values into
 * out, returns the total number present (may exceed max), or -1 if malformed. */
long pb_get_varints(al_span msg, uint32_t num, uint64_t *out, size_t max);
/* Repeated floats (packed or not). Same contract. */
long pb_get_floats(al_span msg, uint32_t num, float *out, size_t max);

/* Field `num` as a string span; false if absent. */
static inline bool pb_get_string(al_span msg, uint32_t num, al_span *out)
{
	return pb_get_bytes(msg, num, out);
}

/* Equality of a span with a C string. */
bool ali_span_eq(al_span s, const char *z);

#endif
