/* SPDX-License-Identifier: MIT */
/* npy.c: NumPy .npy files in and out (the format users already have for inputs
 * and reference outputs). Reads format versions 1.0, 2.0 and 3.0, C order (or
 * Fortran order when at most one dim exceeds 1, where the two agree), little-endian
 * or single-byte dtypes: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, and <U strings.
 * Values become floats (int64 beyond 2^24 loses precision, as every value in the
 * interpreter does). Writes version 1.0 with the header padded to 64 bytes.
 *
 * The header is untrusted: its length, the shape's product and the data size are
 * all checked against the bytes present before anything is allocated. */
#include "interp.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static enum al_status npy_err(al_diags *d, const char *name, uint64_t off, const char *msg)
{
	ali_diag_add(d, AL_SEV_ERROR, name, off, NULL, NULL, "%s", msg);
	return AL_E_FORMAT;
}

/* The value of key `key` in the header dict: a pointer just past "'key':" and spaces. */
static const char *dict_value(const char *h, size_t n, const char *key)
{
	size_t kl = strlen(key);
	for (size_t i = 0; i + kl + 2 < n; i++) {
		if ((h[i] == '\'' || h[i] == '"') && memcmp(h + i + 1, key, kl) == 0 &&
		    h[i + 1 + kl] == h[i]) {
			const char *p = h + i + kl + 2;
			while (p < h + n && (*p == ' ' || *p == ':'))
				p++;
			return p;
		}
	}
	return NULL;
}

struct npy_type {
	char kind; /* f i u b U */
	int size;  /* bytes per element (U: 4 * chars) */
	int dtype;
};

static bool parse_descr(const char *p, const char *end, struct npy_type *t)
{
	if (p >= end || (*p != '\'' && *p != '"'))
		return false;
	char q = *p++;
	if (end - p < 2) /* the byte order and the kind; a header may end right after the quote */
		return false;
	char order = *p++;
	if (order != '<' && order != '|' && order != '=')
		return false; /* big-endian: not supported */
	t->kind = *p++;
	uint64_t size;
	size_t k = ali_span_u64(p, (size_t)(end - p), 1000000, &size);
	p += k;
	if (k == 0 || p >= end || *p != q || size == 0)
		return false;
	t->size = (int)size;
	switch (t->kind) {
	case 'f':
		t->dtype = size == 2 ? AL_DT_FP16 : size == 4 ? AL_DT_FP32 : size == 8 ? AL_DT_FP64 : 0;
		break;
	case 'i':
		t->dtype = size == 1 ? AL_DT_INT8 : size == 2 ? AL_DT_INT16 : size == 4 ? AL_DT_INT32
			 : size == 8 ? AL_DT_INT64 : 0;
		break;
	case 'u':
		t->dtype = size == 1 ? AL_DT_UINT8 : size == 2 ? AL_DT_UINT16 : size == 4 ? AL_DT_UINT32
			 : size == 8 ? AL_DT_UINT64 : 0;
		break;
	case 'b':
		t->dtype = size == 1 ? AL_DT_BOOL : 0;
		break;
	case 'U':
		if (size > 4096)
			return false;
		t->dtype = AL_DT_STRING;
		t->size = (int)size * 4;
		break;
	default:
		return false;
	}
	return t->dtype != 0;
}

static bool parse_shape(const char *p, const char *end, int *rank, int64_t *dims)
{
	if (p >= end || *p != '(')
		return false;
	p++;
	*rank = 0;
	for (;;) {
		while (p < end && (*p == ' ' || *p == ','))
			p++;
		if (p >= end)
			return false;
		if (*p == ')')
			return true;
		if (*p < '0' || *p > '9' || *rank >= AL_TENSOR_MAX_RANK)
			return false;
		uint64_t v;
		size_t k = ali_span_u64(p, (size_t)(end - p), UINT64_C(1) << 44, &v);
		if (k == 0)
			return false;
		p += k;
		while (p < end && (*p == 'L'))
			p++;
		dims[(*rank)++] = (int64_t)v;
	}
}

static double read_elem(const uint8_t *p, const struct npy_type *t)
{
	uint64_t u = 0;
	for (int i = 0; i < t->size && i < 8; i++)
		u |= (uint64_t)p[i] << (8 * i);
	switch (t->kind) {
	case 'f':
		if (t->size == 2)
			return ali_f16_to_f32((uint16_t)u);
		if (t->size == 4) {
			float f;
			uint32_t w = (uint32_t)u;
			memcpy(&f, &w, 4);
			return f;
		} else {
			double v;
			memcpy(&v, &u, 8);
			return v;
		}
	case 'i':
		if (t->size < 8 && (u >> (8 * t->size - 1)) & 1)
			u |= ~UINT64_C(0) << (8 * t->size);
		return (double)(int64_t)u;
	case 'u':
		return (double)u;
	default: /* b */
		return u ? 1.0 : 0.0;
	}
}

/* A NUL-terminated UTF-8 copy of a UTF-32LE field of `chars` code points. */
static char *utf32_to_utf8(const uint8_t *p, int chars)
{
	char *s = ali_malloc((size_t)chars * 4 + 1);
	if (!s)
		return NULL;
	size_t k = 0;
	for (int i = 0; i < chars; i++) {
		uint32_t c = al_rd32le(p + 4 * i);
		if (c == 0)
			break;
		if (c > 0x10FFFF || (c >= 0xD800 && c < 0xE000))
			c = 0xFFFD;
		if (c < 0x80) {
			s[k++] = (char)c;
		} else if (c < 0x800) {
			s[k++] = (char)(0xC0 | c >> 6);
			s[k++] = (char)(0x80 | (c & 63));
		} else if (c < 0x10000) {
			s[k++] = (char)(0xE0 | c >> 12);
			s[k++] = (char)(0x80 | ((c >> 6) & 63));
			s[k++] = (char)(0x80 | (c & 63));
		} else {
			s[k++] = (char)(0xF0 | c >> 18);
			s[k++] = (char)(0x80 | ((c >> 12) & 63));
			s[k++] = (char)(0x80 | ((c >> 6) & 63));
			s[k++] = (char)(0x80 | (c & 63));
		}
	}
	s[k] = 0;
	return s;
}

static enum al_status read_npy(const void *bytes, size_t n, const char *name, al_tensor **out, al_diags *d)
{
	const uint8_t *b = bytes;
	if (!out || !d)
		return AL_E_INVALID_ARG;
	*out = NULL;
	if (!name)
		name = "<npy>";
	if (n < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
		return npy_err(d, name, 0, "not a .npy file (no \\x93NUMPY magic)");
	int major = b[6];
	size_t hlen, hoff;
	if (major == 1) {
		hlen = (size_t)b[8] | (size_t)b[9] << 8;
		hoff = 10;
	} else if (major == 2 || major == 3) {
		if (n < 12)
			return npy_err(d, name, 6, ".npy header cut short");
		hlen = al_rd32le(b + 8);
		hoff = 12;
	} else {
		return npy_err(d, name, 6, "unsupported .npy format version (1.0-3.0 are read)");
	}
	if (hlen > n - hoff)
		return npy_err(d, name, 8, ".npy header length runs past the end of the file");
	const char *h = (const char *)b + hoff, *hend = h + hlen;
	struct npy_type t;
	const char *v = dict_value(h, hlen, "descr");
	if (!v || !parse_descr(v, hend, &t))
		return npy_err(d, name, hoff, ".npy dtype not supported (f2 f4 f8 i1-i8 u1-u8 b1 <U; "
					      "little-endian)");
	v = dict_value(h, hlen, "fortran_order");
	bool fortran = v && v < hend && *v == 'T';
	int rank;
	int64_t dims[AL_TENSOR_MAX_RANK];
	v = dict_value(h, hlen, "shape");
	if (!v || !parse_shape(v, hend, &rank, dims))
		return npy_err(d, name, hoff, ".npy shape missing, malformed or of rank > 8");
	size_t count;
	if (!ali_dims_count(rank, dims, &count))
		return npy_err(d, name, hoff, ".npy shape too large");
	if (fortran) {
		int big = 0;
		for (int i = 0; i < rank; i++)
			big += dims[i] > 1;
		if (big > 1)
			return npy_err(d, name, hoff, ".npy in Fortran order is not supported "
						      "(save with C order)");
	}
	size_t data = hoff + hlen;
	if (count > (n - data) / (size_t)t.size)
		return npy_err(d, name, data, ".npy data is shorter than its shape says");
	al_tensor *tt = al_tensor_new(t.dtype, rank, dims);
	if (!tt) {
		ali_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "out of memory");
		return AL_E_NOMEM;
	}
	const uint8_t *p = b + data;
	for (size_t i = 0; i < count; i++, p += t.size) {
		if (t.kind == 'U') {
			if (!(tt->s[i] = utf32_to_utf8(p, t.size / 4))) {
				al_tensor_free(tt);
				ali_diag_add(d, AL_SEV_ERROR, name, UINT64_MAX, NULL, NULL, "out of memory");
				return AL_E_NOMEM;
			}
		} else {
			tt->f[i] = (float)read_elem(p, &t);
		}
	}
	*out = tt;
	return AL_OK;
}

enum al_status al_npy_read_buffer(const void *bytes, size_t n, const char *name, al_tensor **out,
				  al_diags *d)
{
	struct al_map guarded; /* the guard-page test mode's copy (base.h) */
	al_span s = ali_guard_span((al_span){bytes, n}, &guarded);
	enum al_status st = read_npy(s.p, s.n, name, out, d);
	ali_unmap(&guarded);
	return st;
}

enum al_status al_npy_read(const char *path, al_tensor **out, al_diags *d)
{
	if (!out || !d || !path)
		return AL_E_INVALID_ARG;
	*out = NULL;
	struct al_map m;
	enum al_status st = ali_map_file(path, NULL, &m, d);
	if (st != AL_OK)
		return st;
	st = read_npy(m.s.p, m.s.n, path, out, d);
	ali_unmap(&m);
	return st;
}

/* ---------------------------------------------------------------- writing */

static const char *descr_of(int dtype, int *size)
{
	switch (dtype) {
	case AL_DT_FP16: *size = 2; return "<f2";
	case AL_DT_FP64: *size = 8; return "<f8";
	case AL_DT_INT8: *size = 1; return "|i1";
	case AL_DT_INT16: *size = 2; return "<i2";
	case AL_DT_INT32: *size = 4; return "<i4";
	case AL_DT_INT64: *size = 8; return "<i8";
	case AL_DT_UINT8: *size = 1; return "|u1";
	case AL_DT_UINT16: *size = 2; return "<u2";
	case AL_DT_UINT32: *size = 4; return "<u4";
	case AL_DT_UINT64: *size = 8; return "<u8";
	case AL_DT_BOOL: *size = 1; return "|b1";
	default: *size = 4; return "<f4";
	}
}

static void put_le(FILE *out, uint64_t u, int size)
{
	for (int i = 0; i < size; i++)
		fputc((int)((u >> (8 * i)) & 0xff), out);
}

/* An integer from a float, clamped to the type's range (NaN -> 0). */
static uint64_t to_int(double v, int dtype)
{
	double lo, hi;
	switch (dtype) {
	case AL_DT_INT8: lo = -128; hi = 127; break;
	case AL_DT_INT16: lo = -32768; hi = 32767; break;
	case AL_DT_INT32: lo = -2147483648.0; hi = 2147483647.0; break;
	case AL_DT_INT64: lo = -9.2e18; hi = 9.2e18; break;
	case AL_DT_UINT8: lo = 0; hi = 255; break;
	case AL_DT_UINT16: lo = 0; hi = 65535; break;
	case AL_DT_UINT32: lo = 0; hi = 4294967295.0; break;
	default: lo = 0; hi = 1.8e19; break;
	}
	if (!(v == v))
		return 0;
	v = v < lo ? lo : v > hi ? hi : v;
	v = nearbyint(v);
	return v < 0 ? (uint64_t)(int64_t)v : (uint64_t)v;
}

enum al_status al_npy_write(FILE *out, const al_tensor *t, int dtype)
{
	if (!out || !t || t->kind != AL_TK_TENSOR)
		return AL_E_INVALID_ARG;
	if (!dtype)
		dtype = t->dtype;
	int size;
	char descr[32];
	bool strings = t->dtype == AL_DT_STRING;
	size_t chars = 1;
	if (strings) {
		for (size_t i = 0; i < t->n; i++) {
			/* code points: count UTF-8 lead bytes */
			size_t c = 0;
			for (const char *p = t->s[i] ? t->s[i] : ""; *p; p++)
				c += ((unsigned char)*p & 0xC0) != 0x80;
			if (c > chars)
				chars = c;
		}
		snprintf(descr, sizeof descr, "<U%zu", chars);
		size = (int)(chars * 4);
	} else {
		snprintf(descr, sizeof descr, "%s", descr_of(dtype, &size));
	}
	char shape[256];
	size_t k = (size_t)snprintf(shape, sizeof shape, "(");
	for (int i = 0; i < t->rank; i++)
		k += (size_t)snprintf(shape + k, sizeof shape - k, "%lld%s", (long long)t->dims[i],
				      t->rank == 1 ? "," : i + 1 < t->rank ? ", " : "");
	snprintf(shape + k, sizeof shape - k, ")");
	char header[512];
	int hl = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
			  descr, shape);
	size_t total = 10 + (size_t)hl + 1;
	size_t pad = (64 - total % 64) % 64;
	fwrite("\x93NUMPY\x01\x00", 1, 8, out);
	put_le(out, (uint64_t)hl + pad + 1, 2);
	fwrite(header, 1, (size_t)hl, out);
	for (size_t i = 0; i < pad; i++)
		fputc(' ', out);
	fputc('\n', out);
	for (size_t i = 0; i < t->n; i++) {
		if (strings) {
			const unsigned char *p = (const unsigned char *)(t->s[i] ? t->s[i] : "");
			size_t c = 0;
			while (*p && c < chars) {
				uint32_t cp = *p++;
				int more = cp >= 0xF0 ? 3 : cp >= 0xE0 ? 2 : cp >= 0xC0 ? 1 : 0;
				cp &= more == 3 ? 7 : more == 2 ? 15 : more == 1 ? 31 : 127;
				for (; more && (*p & 0xC0) == 0x80; more--)
					cp = cp << 6 | (*p++ & 63);
				put_le(out, cp, 4);
				c++;
			}
			for (; c < chars; c++)
				put_le(out, 0, 4);
			continue;
		}
		float v = t->f[i];
		switch (dtype) {
		case AL_DT_FP16:
			put_le(out, ali_f16_from_f32(v), 2);
			break;
		case AL_DT_FP64: {
			double dv = v;
			uint64_t u;
			memcpy(&u, &dv, 8);
			put_le(out, u, 8);
			break;
		}
		case AL_DT_BOOL:
			put_le(out, v != 0, 1);
			break;
		case AL_DT_INT8: case AL_DT_INT16: case AL_DT_INT32: case AL_DT_INT64:
		case AL_DT_UINT8: case AL_DT_UINT16: case AL_DT_UINT32: case AL_DT_UINT64:
			put_le(out, to_int(v, dtype), size);
			break;
		default: {
			uint32_t u;
			memcpy(&u, &v, 4);
			put_le(out, u, 4);
		}
		}
	}
	return ferror(out) ? AL_E_IO : AL_OK;
}
