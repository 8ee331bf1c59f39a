/* SPDX-License-Identifier: MIT */
/* pbwrite.h: a minimal protobuf wire writer into a growing byte buffer, so
 * unit tests can build Core ML messages byte by byte. For tests only: it
 * aborts the test (cmocka) when memory runs out; the library never uses it. */
#ifndef ANELINT_PBWRITE_H
#define ANELINT_PBWRITE_H

#include "testutil.h"

#include "pb.h"

/* An owned, growing byte buffer; {0} is empty. Free p when done. */
struct buf {
	uint8_t *p;
	size_t n, cap;
};

/* Write v as a varint at p (room for 10 bytes); returns its length. */
static inline size_t encode_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	do {
		p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

/* How many bytes the varint of v takes. */
static inline size_t varint_len(uint64_t v)
{
	uint8_t tmp[10];
	return encode_varint(tmp, v);
}

static inline void put_raw(struct buf *o, const void *p, size_t n)
{
	if (o->n + n > o->cap) {
		o->cap = (o->n + n) * 2 + 64;
		o->p = realloc(o->p, o->cap);
		assert_non_null(o->p);
	}
	if (n)
		memcpy(o->p + o->n, p, n);
	o->n += n;
}

static inline void put_varint(struct buf *o, uint64_t v)
{
	uint8_t tmp[10];
	put_raw(o, tmp, encode_varint(tmp, v));
}

static inline void put_tag(struct buf *o, uint32_t num, enum pb_wire wire)
{
	put_varint(o, (uint64_t)num << 3 | wire);
}

static inline void put_uint(struct buf *o, uint32_t num, uint64_t v)
{
	put_tag(o, num, PB_VARINT);
	put_varint(o, v);
}

static inline void put_bytes(struct buf *o, uint32_t num, const void *p, size_t n)
{
	put_tag(o, num, PB_LEN);
	put_varint(o, n);
	put_raw(o, p, n);
}

static inline void put_str(struct buf *o, uint32_t num, const char *s)
{
	put_bytes(o, num, s, strlen(s));
}

/* Append m as field num and free m. */
static inline void put_msg(struct buf *o, uint32_t num, struct buf *m)
{
	put_bytes(o, num, m->p, m->n);
	free(m->p);
	*m = (struct buf){0};
}

/* Field num as packed varints (each v[i] as its 64-bit two's complement). */
static inline void put_packed(struct buf *o, uint32_t num, const int64_t *v, size_t n)
{
	struct buf p = {0};
	for (size_t i = 0; i < n; i++)
		put_varint(&p, (uint64_t)v[i]);
	put_msg(o, num, &p);
}

/* MIL NamedValueType{name, type}; frees type. */
static inline struct buf named(const char *name, struct buf *type)
{
	struct buf nv = {0};
	put_str(&nv, 1, name);
	put_msg(&nv, 2, type);
	return nv;
}

/* One NeuralNetworkLayer; inputs and outputs are space-separated names. */
static inline void layer(struct buf *net, const char *name, const char *ins, const char *outs,
		  uint32_t field, struct buf *params)
{
	struct buf l = {0};
	char tmp[256];
	put_str(&l, 1, name);
	for (int pass = 0; pass < 2; pass++) {
		const char *s = pass ? outs : ins;
		while (s && *s) {
			size_t k = strcspn(s, " ");
			memcpy(tmp, s, k);
			tmp[k] = '\0';
			if (k)
				put_str(&l, pass ? 3 : 2, tmp);
			s += k + (s[k] == ' ');
		}
	}
	if (params && params->n)
		put_msg(&l, field, params);
	else
		put_bytes(&l, field, "", 0);
	if (params)
		free(params->p), *params = (struct buf){0};
	put_msg(net, 1, &l);
}

/* ValueType{tensorType{dataType, rank, dims}}; rank < 0: dtype only. */
static inline struct buf vtype(int dtype, int rank, const int64_t *dims)
{
	struct buf tt = {0}, vt = {0};
	put_uint(&tt, 1, (uint64_t)dtype);
	if (rank >= 0)
		put_uint(&tt, 2, (uint64_t)rank);
	for (int i = 0; i < rank; i++) {
		struct buf dim = {0}, c = {0};
		put_uint(&c, 1, (uint64_t)dims[i]);
		put_msg(&dim, 1, &c);
		put_msg(&tt, 3, &dim);
	}
	put_msg(&vt, 1, &tt);
	return vt;
}

/* FeatureDescription{name, type: imageType{width, height, colorSpace}}. */
static inline struct buf image_feature(const char *name, int h, int w, int color)
{
	struct buf f = {0}, ft = {0}, it = {0};
	put_str(&f, 1, name);
	put_uint(&it, 1, (uint64_t)w);
	put_uint(&it, 2, (uint64_t)h);
	put_uint(&it, 3, (uint64_t)color);
	put_msg(&ft, 4, &it);
	put_msg(&f, 3, &ft);
	return f;
}

#endif
