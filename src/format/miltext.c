/* SPDX-License-Identifier: MIT */
/* miltext.c: reads the MIL text syntax (model.mil of a compiled model,
 * analytics.mil) into a serialized MILSpec.Program message, which mil.c then
 * walks like the Program of a .mlpackage: one IR for both.
 *
 * Grammar, as seen in the corpus (FORMAT-NOTES.md section 3):
 *   program   := "program" "(" number ")" [attrs] "{" function* "}"
 *   function  := "func" name ["<" opset ">"] "(" [param ("," param)*] ")" [attrs]
 *                "{" op* "}" "->" "(" [name ("," name)*] ")" ";"
 *   param     := type name
 *   op        := [param ("," param)* "="] optype "(" [arg ("," arg)*] ")" [attrs]
 *                block* ";"
 *   block     := ["(" [param ("," param)*] ")"] "{" op* "}" "->" "(" names ")"
 *   arg       := name "=" (binding | "(" binding ("," binding)* ")")
 *   binding   := name | value
 *   attrs     := "[" name "=" value ("," name "=" value)* "]"
 *   value     := type "(" literal ")"
 *   type      := tensor<dtype, [dims]> | tensor<dtype, *> | list<type, n|?> |
 *                tuple<type, ...> | dict<type, type> | state<type>
 *   literal   := scalar | [literal, ...] | BLOBFILE(path = value, offset = value)
 *                (tuple: "(" literal, ... ")"; dict: "{" {k, v}, ... "}")
 *
 * Every rule is a function of bounded recursion: each nesting (type, value,
 * block) counts against AL_MILTEXT_MAX_NEST / AL_MAX_DEPTH. The first error
 * stops the parse and is reported with its byte offset, line and column.
 */
#include "miltext.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================ the parser */

struct ty {
	int kind;      /* 0 tensor, 1 list, 2 tuple, 3 dict, 4 state */
	int dtype;
	int rank;      /* tensor: -1 = unknown rank */
	int64_t *dims; /* -1 = unknown */
	int64_t len;   /* list: length, -1 = unknown */
	struct ty **el;
	uint32_t n_el;
};

struct p {
	const char *s;
	size_t n, pos;
	const char *name;
	al_diags *d;
	bool failed;
	bool nomem;
	int nest;
	struct al_arena tmp; /* type trees */
};

static void where(const struct p *P, size_t pos, unsigned long *line, unsigned long *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < pos && i < P->n; i++) {
		if (P->s[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

__attribute__((format(printf, 3, 4)))
static bool err_at(struct p *P, size_t pos, const char *fmt, ...)
{
	if (P->failed)
		return false;
	P->failed = true;
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	unsigned long line, col;
	where(P, pos, &line, &col);
	ali_diag_add(P->d, AL_SEV_ERROR, P->name, pos, NULL, NULL, "MIL text line %lu, column %lu: %s",
		    line, col, msg);
	return false;
}

static bool oom(struct p *P)
{
	P->nomem = true;
	P->failed = true;
	return false;
}

/* buffers that failed an allocation make the parse fail */
static bool buf_ok(struct p *P, const struct al_buf *b)
{
	return b->failed ? oom(P) : !P->failed;
}

static void ws(struct p *P)
{
	while (P->pos < P->n) {
		char c = P->s[P->pos];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			P->pos++;
		} else if (c == '/' && P->pos + 1 < P->n && P->s[P->pos + 1] == '/') {
			while (P->pos < P->n && P->s[P->pos] != '\n')
				P->pos++;
		} else {
			break;
		}
	}
}

/* The next non-blank character, or 0 at the end. */
static char peek(struct p *P)
{
	ws(P);
	return P->pos < P->n ? P->s[P->pos] : 0;
}

static bool accept(struct p *P, const char *tok)
{
	ws(P);
	size_t k = strlen(tok);
	if (P->n - P->pos >= k && memcmp(P->s + P->pos, tok, k) == 0) {
		P->pos += k;
		return true;
	}
	return false;
}

static const char *shown(const struct p *P, char buf[24])
{
	if (P->pos >= P->n)
		return "the end of the text";
	unsigned char c = (unsigned char)P->s[P->pos];
	if (c >= 0x21 && c < 0x7f)
		snprintf(buf, 24, "'%c'", c);
	else
		snprintf(buf, 24, "byte 0x%02x", c);
	return buf;
}

static bool expect(struct p *P, const char *tok)
{
	if (accept(P, tok))
		return true;
	char b[24];
	return err_at(P, P->pos, "expected '%s', found %s", tok, shown(P, b));
}

static bool is_id0(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_id(int c)
{
	return is_id0(c) || (c >= '0' && c <= '9') || c == '.' || c == '$';
}

static bool ident(struct p *P, al_span *out, const char *what)
{
	ws(P);
	size_t b = P->pos;
	if (b >= P->n || !is_id0((unsigned char)P->s[b])) {
		char t[24];
		return err_at(P, P->pos, "expected %s, found %s", what, shown(P, t));
	}
	while (P->pos < P->n && is_id((unsigned char)P->s[P->pos]))
		P->pos++;
	if (P->pos - b > AL_MAX_NAME)
		return err_at(P, b, "%s longer than %d bytes", what, AL_MAX_NAME);
	*out = (al_span){(const uint8_t *)P->s + b, P->pos - b};
	return true;
}

/* Whether the identifier at the cursor is `word` (not consumed). */
static bool at_word(struct p *P, const char *word)
{
	ws(P);
	size_t k = strlen(word);
	return P->n - P->pos >= k && memcmp(P->s + P->pos, word, k) == 0 &&
	       (P->pos + k == P->n || !is_id((unsigned char)P->s[P->pos + k]));
}

static bool enter(struct p *P)
{
	if (++P->nest > AL_MILTEXT_MAX_NEST)
		return err_at(P, P->pos, "nested deeper than %d levels", AL_MILTEXT_MAX_NEST);
	return true;
}

/* A quoted string with C escapes (\" \\ \n \t \r \xHH) into out. */
static bool string_lit(struct p *P, struct al_buf *out)
{
	if (peek(P) != '"') {
		char t[24];
		return err_at(P, P->pos, "expected a string, found %s", shown(P, t));
	}
	size_t b = P->pos++;
	while (P->pos < P->n && P->s[P->pos] != '"') {
		char c = P->s[P->pos++];
		if (c == '\n')
			return err_at(P, b, "string not closed on its line");
		if (c != '\\') {
			ali_buf_put(out, &c, 1);
			continue;
		}
		if (P->pos >= P->n)
			break;
		c = P->s[P->pos++];
		switch (c) {
		case 'n': c = '\n'; break;
		case 't': c = '\t'; break;
		case 'r': c = '\r'; break;
		case '"': case '\\': case '\'': break;
		case 'x': {
			int v = 0;
			for (int k = 0; k < 2; k++) {
				char h = P->pos < P->n ? P->s[P->pos] : 0;
				int x = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
					: h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
				if (x < 0)
					return err_at(P, P->pos, "bad \\x escape in a string");
				v = v * 16 + x;
				P->pos++;
			}
			c = (char)v;
			break;
		}
		default:
			return err_at(P, P->pos - 1, "unknown escape '\\%c' in a string", c);
		}
		ali_buf_put(out, &c, 1);
	}
	if (P->pos >= P->n)
		return err_at(P, b, "string not closed");
	P->pos++;
	return buf_ok(P, out);
}

/* ================================================================ types */

static const struct {
	const char *name;
	int dt;
} dtypes[] = {
	{"bool", AL_DT_BOOL}, {"string", AL_DT_STRING}, {"fp16", AL_DT_FP16}, {"fp32", AL_DT_FP32},
	{"fp64", AL_DT_FP64}, {"bf16", AL_DT_BF16}, {"int8", AL_DT_INT8}, {"int16", AL_DT_INT16},
	{"int32", AL_DT_INT32}, {"int64", AL_DT_INT64}, {"int4", AL_DT_INT4}, {"uint8", AL_DT_UINT8},
	{"uint16", AL_DT_UINT16}, {"uint32", AL_DT_UINT32}, {"uint64", AL_DT_UINT64},
	{"uint4", AL_DT_UINT4}, {"uint2", AL_DT_UINT2}, {"uint1", AL_DT_UINT1}, {"uint6", AL_DT_UINT6},
	{"uint3", AL_DT_UINT3}, {"fp8e4m3", AL_DT_FP8E4M3}, {"fp8e5m2", AL_DT_FP8E5M2},
	{"fp8e4m3fn", AL_DT_FP8E4M3},
};

static int dtype_of(al_span s)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (ali_span_eq(s, dtypes[i].name))
			return dtypes[i].dt;
	return -1;
}

static bool parse_type(struct p *P, struct ty **out);

static bool dim_value(struct p *P, int64_t *v)
{
	ws(P);
	if (accept(P, "?")) {
		*v = -1;
		return true;
	}
	char c = peek(P);
	if (c >= '0' && c <= '9') {
		uint64_t x;
		size_t k = ali_span_u64(P->s + P->pos, P->n - P->pos, INT64_MAX, &x);
		if (k == 0)
			return err_at(P, P->pos, "dimension out of range");
		P->pos += k;
		*v = (int64_t)x;
		return true;
	}
	al_span sym;
	if (!ident(P, &sym, "a dimension")) /* a symbolic dimension: unknown */
		return false;
	*v = -1;
	return true;
}

/* Types of tuple<...> / the elements of a list of values: grown by doubling. */
static bool push_el(struct p *P, struct ty *t, struct ty *e, uint32_t *cap)
{
	if (t->n_el == *cap) {
		uint32_t c = *cap ? *cap * 2 : 4;
		if (c > UINT32_MAX / 4)
			return err_at(P, P->pos, "too many elements");
		struct ty **a = ali_arena_array(&P->tmp, c, sizeof *a);
		if (!a)
			return oom(P);
		if (t->n_el)
			memcpy(a, t->el, t->n_el * sizeof *a);
		t->el = a;
		*cap = c;
	}
	t->el[t->n_el++] = e;
	return true;
}

static bool parse_type_body(struct p *P, struct ty *t, al_span kw, size_t at)
{
	if (ali_span_eq(kw, "tensor")) {
		al_span dn;
		if (!expect(P, "<") || !ident(P, &dn, "a data type"))
			return false;
		if ((t->dtype = dtype_of(dn)) < 0)
			return err_at(P, (size_t)((const char *)dn.p - P->s), "unknown data type '%.*s'",
				      (int)(dn.n < 40 ? dn.n : 40), (const char *)dn.p);
		if (!expect(P, ","))
			return false;
		if (accept(P, "*")) {
			t->rank = -1;
			return expect(P, ">");
		}
		if (!expect(P, "["))
			return false;
		uint32_t cap = 0;
		t->rank = 0;
		if (!accept(P, "]")) {
			do {
				int64_t v;
				if (!dim_value(P, &v))
					return false;
				if ((uint32_t)t->rank == cap) {
					cap = cap ? cap * 2 : 8;
					if (cap > AL_MAX_RANK * 2)
						return err_at(P, P->pos, "tensor rank above %d", AL_MAX_RANK);
					int64_t *dd = ali_arena_array(&P->tmp, cap, sizeof *dd);
					if (!dd)
						return oom(P);
					if (t->rank)
						memcpy(dd, t->dims, (size_t)t->rank * sizeof *dd);
					t->dims = dd;
				}
				t->dims[t->rank++] = v;
			} while (accept(P, ","));
			if (t->rank > AL_MAX_RANK)
				return err_at(P, P->pos, "tensor rank above %d", AL_MAX_RANK);
			if (!expect(P, "]"))
				return false;
		}
		return expect(P, ">");
	}
	if (ali_span_eq(kw, "list")) {
		struct ty *e;
		t->kind = 1;
		if (!expect(P, "<") || !parse_type(P, &e))
			return false;
		uint32_t cap = 0;
		if (!push_el(P, t, e, &cap) || !expect(P, ",") || !dim_value(P, &t->len))
			return false;
		return expect(P, ">");
	}
	if (ali_span_eq(kw, "tuple")) {
		t->kind = 2;
		uint32_t cap = 0;
		if (!expect(P, "<"))
			return false;
		if (accept(P, ">"))
			return true;
		do {
			struct ty *e;
			if (!parse_type(P, &e) || !push_el(P, t, e, &cap))
				return false;
		} while (accept(P, ","));
		return expect(P, ">");
	}
	if (ali_span_eq(kw, "dict")) {
		struct ty *k, *v;
		uint32_t cap = 0;
		t->kind = 3;
		if (!expect(P, "<") || !parse_type(P, &k) || !expect(P, ",") || !parse_type(P, &v))
			return false;
		return push_el(P, t, k, &cap) && push_el(P, t, v, &cap) && expect(P, ">");
	}
	if (ali_span_eq(kw, "state")) {
		struct ty *e;
		uint32_t cap = 0;
		t->kind = 4;
		if (!expect(P, "<") || !parse_type(P, &e))
			return false;
		return push_el(P, t, e, &cap) && expect(P, ">");
	}
	return err_at(P, at, "unknown type '%.*s' (expected tensor, list, tuple, dict or state)",
		      (int)(kw.n < 40 ? kw.n : 40), (const char *)kw.p);
}

static bool parse_type(struct p *P, struct ty **out)
{
	if (!enter(P))
		return false;
	struct ty *t = ali_arena_alloc(&P->tmp, sizeof *t);
	if (!t)
		return oom(P);
	t->len = -1;
	al_span kw;
	ws(P);
	size_t at = P->pos;
	bool ok = ident(P, &kw, "a type") && parse_type_body(P, t, kw, at);
	P->nest--;
	*out = t;
	return ok;
}

static void put_dim(struct al_buf *b, uint32_t field, int64_t v)
{
	/* Dimension: constant = 1 {size = 1}, unknown = 2 {variadic = 1} */
	struct al_buf d = {0};
	if (v >= 0) {
		uint8_t c[12];
		size_t k = 0;
		if (v) {
			c[k++] = 0x08;
			uint64_t u = (uint64_t)v;
			while (u >= 0x80) {
				c[k++] = (uint8_t)(u | 0x80);
				u >>= 7;
			}
			c[k++] = (uint8_t)u;
		}
		ali_buf_len(&d, 1, c, k);
	} else {
		ali_buf_len(&d, 2, "", 0);
	}
	ali_buf_len(b, field, d.p, d.n);
	ali_buf_free(&d);
}

/* ValueType message of t into b (the payload, no tag). */
static void encode_type(const struct ty *t, struct al_buf *b)
{
	struct al_buf x = {0}, y = {0};
	switch (t->kind) {
	case 0: /* TensorType: dataType = 1, rank = 2, dimensions = 3 */
		if (t->dtype)
			ali_buf_uint(&x, 1, (uint64_t)t->dtype);
		if (t->rank)
			ali_buf_uint(&x, 2, (uint64_t)(int64_t)t->rank);
		for (int i = 0; i < t->rank; i++)
			put_dim(&x, 3, t->dims[i]);
		ali_buf_len(b, 1, x.p, x.n);
		break;
	case 1: /* ListType: type = 1, length = 2 */
		encode_type(t->el[0], &y);
		ali_buf_len(&x, 1, y.p, y.n);
		put_dim(&x, 2, t->len);
		ali_buf_len(b, 2, x.p, x.n);
		break;
	case 2: /* TupleType: types = 1 */
		for (uint32_t i = 0; i < t->n_el; i++) {
			y.n = 0;
			encode_type(t->el[i], &y);
			ali_buf_len(&x, 1, y.p, y.n);
		}
		ali_buf_len(b, 3, x.p, x.n);
		break;
	case 3: /* DictionaryType: keyType = 1, valueType = 2 */
		encode_type(t->el[0], &y);
		ali_buf_len(&x, 1, y.p, y.n);
		y.n = 0;
		encode_type(t->el[1], &y);
		ali_buf_len(&x, 2, y.p, y.n);
		ali_buf_len(b, 4, x.p, x.n);
		break;
	case 4: /* StateType: wrappedType = 1 */
		encode_type(t->el[0], &y);
		ali_buf_len(&x, 1, y.p, y.n);
		ali_buf_len(b, 5, x.p, x.n);
		break;
	}
	if (x.failed || y.failed)
		b->failed = true;
	ali_buf_free(&x);
	ali_buf_free(&y);
}

/* ================================================================ literals */

/* Round a double to IEEE half (nearest even). */
static uint16_t to_half(double v)
{
	uint16_t sign = signbit(v) ? 0x8000 : 0;
	if (isnan(v))
		return sign | 0x7e00;
	v = fabs(v);
	if (isinf(v) || v >= 65520.0)
		return sign | 0x7c00;
	if (v < ldexp(1, -25))
		return sign;
	int e;
	double m = frexp(v, &e); /* v = m * 2^e, 0.5 <= m < 1 */
	int he = e + 14;          /* biased exponent of 1.xxx * 2^(e-1) */
	double q;
	if (he <= 0) { /* subnormal: units of 2^-24 */
		q = nearbyint(ldexp(v, 24));
		return sign | (uint16_t)q;
	}
	q = nearbyint(ldexp(m, 11)); /* 1024..2048 */
	if (q >= 2048) {
		q /= 2;
		he++;
	}
	if (he >= 31)
		return sign | 0x7c00;
	return sign | (uint16_t)(he << 10) | (uint16_t)((int)q & 0x3ff);
}

/* The elements of one tensor literal, encoded as its TensorValue member. */
struct elems {
	int dtype;
	struct al_buf data; /* packed payload, or repeated strings (whole fields) */
	uint64_t bits;      /* sub-byte types: bits written */
	uint64_t n;
};

static int member_of(int dt)
{
	switch (dt) {
	case AL_DT_FP32: return 1;                                   /* floats */
	case AL_DT_INT32: case AL_DT_INT16: case AL_DT_UINT16: return 2; /* ints */
	case AL_DT_BOOL: return 3;                                   /* bools */
	case AL_DT_STRING: return 4;                                 /* strings */
	case AL_DT_INT64: case AL_DT_UINT64: case AL_DT_UINT32: return 5; /* longInts */
	case AL_DT_FP64: return 6;                                   /* doubles */
	default: return 7;                                           /* bytes */
	}
}

static int bits_of(int dt)
{
	switch (dt) {
	case AL_DT_INT4: case AL_DT_UINT4: return 4;
	case AL_DT_UINT1: return 1;
	case AL_DT_UINT2: return 2;
	case AL_DT_UINT3: return 3;
	case AL_DT_UINT6: return 6;
	case AL_DT_FP16: case AL_DT_BF16: return 16;
	default: return 8;
	}
}

/* A number literal: its bytes (bounded by the text's end and by buf) are copied
 * into buf, NUL-terminated, before the libc conversions read them. */
static bool number(struct p *P, double *d, int64_t *i, bool *is_int)
{
	ws(P);
	const char *s = P->s + P->pos, *e = P->s + P->n;
	size_t k = 0;
	char buf[128];
	while (s + k < e && k < sizeof buf - 1 &&
	       (is_id((unsigned char)s[k]) || s[k] == '-' || s[k] == '+') &&
	       !(k > 0 && (s[k] == '-' || s[k] == '+') && !(s[k - 1] == 'e' || s[k - 1] == 'E' ||
							     s[k - 1] == 'p' || s[k - 1] == 'P')))
		k++;
	if (k == 0 || k >= sizeof buf - 1)
		return err_at(P, P->pos, "expected a number");
	memcpy(buf, s, k);
	buf[k] = '\0';
	*is_int = false;
	if (strcmp(buf, "true") == 0 || strcmp(buf, "false") == 0) {
		*is_int = true;
		*i = buf[0] == 't';
		*d = (double)*i;
		P->pos += k;
		return true;
	}
	bool hex = strchr(buf, 'x') || strchr(buf, 'X');
	bool flt = strpbrk(buf, ".pPn") || (!hex && strpbrk(buf, "eE")) || strstr(buf, "inf");
	char *end;
	errno = 0;
	if (!flt) {
		long long v = strtoll(buf, &end, 0);
		if (*end || errno) {
			errno = 0;
			unsigned long long u = strtoull(buf, &end, 0);
			if (*end || errno || buf[0] == '-')
				return err_at(P, P->pos, "bad integer '%s'", buf);
			*i = (int64_t)u; /* two's complement for uint64 above INT64_MAX */
			*d = (double)u;
		} else {
			*i = v;
			*d = (double)v;
		}
		*is_int = true;
	} else {
		*d = strtod(buf, &end);
		if (*end)
			return err_at(P, P->pos, "bad number '%s'", buf);
		*i = 0;
	}
	P->pos += k;
	return true;
}

static void put_le(struct al_buf *b, uint64_t u, int bytes)
{
	uint8_t x[8];
	for (int k = 0; k < bytes; k++)
		x[k] = (uint8_t)(u >> (8 * k));
	ali_buf_put(b, x, (size_t)bytes);
}

static bool scalar(struct p *P, struct elems *E)
{
	int dt = E->dtype;
	E->n++;
	if (dt == AL_DT_STRING) {
		struct al_buf s = {0};
		bool ok = string_lit(P, &s);
		if (ok)
			ali_buf_len(&E->data, 1, s.p, s.n);
		ali_buf_free(&s);
		return ok && buf_ok(P, &E->data);
	}
	size_t at = P->pos;
	double d;
	int64_t i;
	bool is_int;
	if (!number(P, &d, &i, &is_int))
		return false;
	int m = member_of(dt);
	bool fl = dt == AL_DT_FP16 || dt == AL_DT_BF16 || dt == AL_DT_FP32 || dt == AL_DT_FP64 ||
		  dt == AL_DT_FP8E4M3 || dt == AL_DT_FP8E5M2;
	if (!fl && !is_int)
		return err_at(P, at, "expected an integer for %s", al_dtype_name(dt));
	if (m == 1) {
		float f = (float)d;
		uint32_t u;
		memcpy(&u, &f, 4);
		put_le(&E->data, u, 4);
	} else if (m == 6) {
		uint64_t u;
		memcpy(&u, &d, 8);
		put_le(&E->data, u, 8);
	} else if (m == 2 || m == 3 || m == 5) {
		ali_buf_varint(&E->data, m == 3 ? (uint64_t)(i != 0) : (uint64_t)i);
	} else if (dt == AL_DT_FP16) {
		put_le(&E->data, to_half(d), 2);
	} else if (dt == AL_DT_BF16) {
		float f = (float)d;
		uint32_t u;
		memcpy(&u, &f, 4);
		put_le(&E->data, u >> 16, 2);
	} else if (fl) {
		return err_at(P, at, "literal %s values are not supported", al_dtype_name(dt));
	} else if (bits_of(dt) == 8) {
		put_le(&E->data, (uint64_t)i, 1);
	} else {
		int nb = bits_of(dt);
		uint64_t u = (uint64_t)i & ((1u << nb) - 1);
		for (int b = 0; b < nb; b++, E->bits++) {
			if (E->bits % 8 == 0)
				ali_buf_put(&E->data, "", 1);
			if (u >> b & 1)
				E->data.p[E->data.n - 1] |= (uint8_t)(1u << (E->bits % 8));
		}
	}
	return buf_ok(P, &E->data);
}

/* Nested [..] of scalars, flattened. */
static bool elements(struct p *P, struct elems *E)
{
	if (peek(P) != '[')
		return scalar(P, E);
	if (!enter(P))
		return false;
	P->pos++;
	if (!accept(P, "]")) {
		do {
			if (!elements(P, E))
				return false;
		} while (accept(P, ","));
		if (!expect(P, "]"))
			return false;
	}
	P->nest--;
	return true;
}

static bool literal(struct p *P, const struct ty *t, struct al_buf *value);

/* A typed value: "type(literal)" into a Value message. */
static bool typed_value(struct p *P, struct al_buf *value, struct ty **tout)
{
	struct ty *t;
	if (!parse_type(P, &t) || !expect(P, "("))
		return false;
	if (tout)
		*tout = t;
	return literal(P, t, value) && expect(P, ")");
}

/* BLOBFILE(path = string value, offset = uint64 value) */
static bool blobfile(struct p *P, struct al_buf *bfv)
{
	if (!expect(P, "BLOBFILE") || !expect(P, "("))
		return false;
	bool have_path = false, have_off = false;
	do {
		al_span key;
		ws(P);
		size_t at = P->pos;
		if (!ident(P, &key, "'path' or 'offset'") || !expect(P, "="))
			return false;
		struct ty *t;
		if (!parse_type(P, &t) || !expect(P, "("))
			return false;
		if (ali_span_eq(key, "path") && !have_path && t->kind == 0 && t->dtype == AL_DT_STRING) {
			struct al_buf s = {0};
			bool ok = string_lit(P, &s);
			if (ok)
				ali_buf_len(bfv, 1, s.p, s.n);
			ali_buf_free(&s);
			if (!ok)
				return false;
			have_path = true;
		} else if (ali_span_eq(key, "offset") && !have_off && t->kind == 0 && t->dtype != AL_DT_STRING) {
			double d;
			int64_t i;
			bool is_int;
			size_t a2 = P->pos;
			if (!number(P, &d, &i, &is_int))
				return false;
			if (!is_int || i < 0)
				return err_at(P, a2, "BLOBFILE offset must be a non-negative integer");
			if (i)
				ali_buf_uint(bfv, 2, (uint64_t)i);
			have_off = true;
		} else {
			return err_at(P, at, "BLOBFILE takes one string 'path' and one integer 'offset'");
		}
		if (!expect(P, ")"))
			return false;
	} while (accept(P, ","));
	if (!have_path || !have_off)
		return err_at(P, P->pos, "BLOBFILE needs both 'path' and 'offset'");
	return expect(P, ")") && buf_ok(P, bfv);
}

/* A literal of type t into a Value message: type = 2, immediateValue = 3 or
 * blobFileValue = 5. */
static bool literal(struct p *P, const struct ty *t, struct al_buf *value)
{
	if (!enter(P))
		return false;
	struct al_buf vt = {0}, iv = {0}, x = {0}, el = {0};
	bool ok = true;
	encode_type(t, &vt);
	ali_buf_len(value, 2, vt.p, vt.n);
	switch (t->kind) {
	case 0:
		if (at_word(P, "BLOBFILE")) {
			ok = blobfile(P, &x);
			if (ok)
				ali_buf_len(value, 5, x.p, x.n);
			break;
		} else {
			struct elems E = {.dtype = t->dtype};
			ok = elements(P, &E);
			if (ok) {
				int m = member_of(t->dtype);
				if (m == 4) {
					ali_buf_len(&el, 4, E.data.p, E.data.n);
				} else {
					ali_buf_len(&x, 1, E.data.p, E.data.n);
					ali_buf_len(&el, (uint32_t)m, x.p, x.n);
				}
				ali_buf_len(&iv, 1, el.p, el.n);
				ali_buf_len(value, 3, iv.p, iv.n);
			}
			if (E.data.failed)
				ok = oom(P);
			ali_buf_free(&E.data);
		}
		break;
	case 1: case 2: { /* list [a, b] / tuple (a, b): Tuple/ListValue values = 1 */
		bool list = t->kind == 1;
		uint32_t k = 0;
		ok = expect(P, list ? "[" : "(");
		if (ok && !accept(P, list ? "]" : ")")) {
			do {
				const struct ty *et = list ? t->el[0] : k < t->n_el ? t->el[k] : NULL;
				if (!et) {
					ok = err_at(P, P->pos, "tuple has more values than its type (%u)", t->n_el);
					break;
				}
				el.n = 0;
				if (!(ok = literal(P, et, &el)))
					break;
				ali_buf_len(&x, 1, el.p, el.n);
				k++;
			} while (accept(P, ","));
			ok = ok && expect(P, list ? "]" : ")");
		}
		if (ok && !list && k != t->n_el)
			ok = err_at(P, P->pos, "tuple has %u values, its type %u", k, t->n_el);
		if (ok) {
			ali_buf_len(&iv, list ? 3 : 2, x.p, x.n);
			ali_buf_len(value, 3, iv.p, iv.n);
		}
		break;
	}
	case 3: /* dict {{k, v}, ...}: DictionaryValue values = 1 {key = 1, value = 2} */
		ok = expect(P, "{");
		if (ok && !accept(P, "}")) {
			do {
				struct al_buf kv = {0};
				ok = expect(P, "{");
				el.n = 0;
				ok = ok && literal(P, t->el[0], &el);
				if (ok)
					ali_buf_len(&kv, 1, el.p, el.n);
				el.n = 0;
				ok = ok && expect(P, ",") && literal(P, t->el[1], &el);
				if (ok)
					ali_buf_len(&kv, 2, el.p, el.n);
				ok = ok && expect(P, "}");
				if (ok)
					ali_buf_len(&x, 1, kv.p, kv.n);
				if (kv.failed)
					ok = oom(P);
				ali_buf_free(&kv);
			} while (ok && accept(P, ","));
			ok = ok && expect(P, "}");
		}
		if (ok) {
			ali_buf_len(&iv, 4, x.p, x.n);
			ali_buf_len(value, 3, iv.p, iv.n);
		}
		break;
	default:
		ok = err_at(P, P->pos, "a state has no literal value");
		break;
	}
	if (vt.failed || iv.failed || x.failed || el.failed)
		ok = oom(P);
	ali_buf_free(&vt);
	ali_buf_free(&iv);
	ali_buf_free(&x);
	ali_buf_free(&el);
	P->nest--;
	return ok && buf_ok(P, value);
}

/* ================================================================ attributes, ops, blocks */

/* "[k = value, ...]": map entries {key = 1, value = 2} as field `field` of msg. */
static bool attrs(struct p *P, struct al_buf *msg, uint32_t field)
{
	if (!accept(P, "["))
		return true;
	if (accept(P, "]"))
		return true;
	do {
		al_span key;
		struct al_buf v = {0}, e = {0};
		bool ok = ident(P, &key, "an attribute name") && expect(P, "=") &&
			  typed_value(P, &v, NULL);
		if (ok) {
			ali_buf_len(&e, 1, key.p, key.n);
			ali_buf_len(&e, 2, v.p, v.n);
			ali_buf_len(msg, field, e.p, e.n);
		}
		if (v.failed || e.failed)
			ok = oom(P);
		ali_buf_free(&v);
		ali_buf_free(&e);
		if (!ok)
			return false;
	} while (accept(P, ","));
	return expect(P, "]") && buf_ok(P, msg);
}

/* "type name": a NamedValueType (name = 1, type = 2) as field `field` of msg. */
static bool named(struct p *P, struct al_buf *msg, uint32_t field)
{
	struct ty *t;
	al_span name;
	if (!parse_type(P, &t) || !ident(P, &name, "a value name"))
		return false;
	struct al_buf vt = {0}, nv = {0};
	encode_type(t, &vt);
	ali_buf_len(&nv, 1, name.p, name.n);
	ali_buf_len(&nv, 2, vt.p, vt.n);
	ali_buf_len(msg, field, nv.p, nv.n);
	bool ok = !vt.failed && !nv.failed;
	ali_buf_free(&vt);
	ali_buf_free(&nv);
	return ok ? buf_ok(P, msg) : oom(P);
}

/* "(type name, ...)" */
static bool params(struct p *P, struct al_buf *msg, uint32_t field)
{
	if (!expect(P, "("))
		return false;
	if (accept(P, ")"))
		return true;
	do {
		if (!named(P, msg, field))
			return false;
	} while (accept(P, ","));
	return expect(P, ")");
}

/* "-> (name, ...)": repeated strings as field `field` of msg. */
static bool returns(struct p *P, struct al_buf *msg, uint32_t field)
{
	if (!expect(P, "->") || !expect(P, "("))
		return false;
	if (accept(P, ")"))
		return true;
	do {
		al_span name;
		if (!ident(P, &name, "a returned value name"))
			return false;
		ali_buf_len(msg, field, name.p, name.n);
	} while (accept(P, ","));
	return expect(P, ")") && buf_ok(P, msg);
}

/* A binding: a value name (Binding.name = 1) or a typed value (value = 2). */
static bool binding(struct p *P, struct al_buf *arg)
{
	struct al_buf b = {0}, v = {0};
	bool ok;
	ws(P);
	size_t save = P->pos;
	al_span name;
	if (!ident(P, &name, "a value name or a typed value"))
		return false;
	if (peek(P) == '<') { /* a type: a literal value */
		P->pos = save;
		ok = typed_value(P, &v, NULL);
		if (ok)
			ali_buf_len(&b, 2, v.p, v.n);
	} else {
		ok = true;
		ali_buf_len(&b, 1, name.p, name.n);
	}
	if (ok)
		ali_buf_len(arg, 1, b.p, b.n);
	if (b.failed || v.failed)
		ok = oom(P);
	ali_buf_free(&b);
	ali_buf_free(&v);
	return ok && buf_ok(P, arg);
}

static bool block(struct p *P, struct al_buf *blk, int depth);

/* One op into an Operation message (type = 1, inputs = 2, outputs = 3,
 * blocks = 4, attributes = 5). */
static bool op(struct p *P, struct al_buf *o, int depth)
{
	ws(P);
	size_t at = P->pos;
	al_span first;
	if (!ident(P, &first, "an operation"))
		return false;
	bool has_outputs = peek(P) == '<';
	P->pos = at;
	if (has_outputs) {
		do {
			if (!named(P, o, 3))
				return false;
		} while (accept(P, ","));
		if (!expect(P, "="))
			return false;
	}
	al_span type;
	if (!ident(P, &type, "an operation type") || !expect(P, "("))
		return false;
	ali_buf_len(o, 1, type.p, type.n);
	if (!accept(P, ")")) {
		do {
			al_span param;
			struct al_buf arg = {0}, e = {0};
			bool ok = ident(P, &param, "a parameter name") && expect(P, "=");
			if (ok && peek(P) == '(') {
				P->pos++;
				do
					ok = binding(P, &arg);
				while (ok && accept(P, ","));
				ok = ok && expect(P, ")");
			} else if (ok) {
				ok = binding(P, &arg);
			}
			if (ok) {
				ali_buf_len(&e, 1, param.p, param.n);
				ali_buf_len(&e, 2, arg.p, arg.n);
				ali_buf_len(o, 2, e.p, e.n);
			}
			if (arg.failed || e.failed)
				ok = oom(P);
			ali_buf_free(&arg);
			ali_buf_free(&e);
			if (!ok)
				return false;
		} while (accept(P, ","));
		if (!expect(P, ")"))
			return false;
	}
	if (!attrs(P, o, 5))
		return false;
	for (char c = peek(P); c == '(' || c == '{'; c = peek(P)) {
		if (depth + 1 > AL_MAX_DEPTH)
			return err_at(P, P->pos, "blocks nested deeper than %d levels", AL_MAX_DEPTH);
		struct al_buf b = {0};
		bool ok = true;
		if (c == '(')
			ok = params(P, &b, 1);
		ok = ok && block(P, &b, depth + 1);
		if (ok)
			ali_buf_len(o, 4, b.p, b.n);
		if (b.failed)
			ok = oom(P);
		ali_buf_free(&b);
		if (!ok)
			return false;
	}
	return expect(P, ";") && buf_ok(P, o);
}

/* "{ op* } -> (names)" into a Block message (inputs = 1 are the caller's,
 * outputs = 2, operations = 3). */
static bool block(struct p *P, struct al_buf *blk, int depth)
{
	if (!expect(P, "{"))
		return false;
	struct al_buf o = {0};
	while (!P->failed && peek(P) != '}') {
		if (!peek(P)) {
			ali_buf_free(&o);
			return err_at(P, P->pos, "block not closed: expected '}'");
		}
		o.n = 0;
		if (!op(P, &o, depth))
			break;
		ali_buf_len(blk, 3, o.p, o.n);
	}
	bool ok = !P->failed && !o.failed;
	if (o.failed)
		oom(P);
	ali_buf_free(&o);
	return ok && expect(P, "}") && returns(P, blk, 2);
}

/* ML Program opset names: the text's ios15.. and the protobuf's CoreML5.. */
static const char *const opsets[][2] = {
	{"ios15", "CoreML5"}, {"ios16", "CoreML6"}, {"ios17", "CoreML7"},
	{"ios18", "CoreML8"}, {"ios26", "CoreML9"},
};

static bool function(struct p *P, struct al_buf *prog)
{
	al_span name, opset = {(const uint8_t *)"", 0};
	if (!expect(P, "func") || !ident(P, &name, "a function name"))
		return false;
	if (accept(P, "<") && !(ident(P, &opset, "an opset") && expect(P, ">")))
		return false;
	const char *os = NULL;
	for (size_t i = 0; i < sizeof opsets / sizeof opsets[0]; i++)
		if (ali_span_eq(opset, opsets[i][0]))
			os = opsets[i][1];
	struct al_buf fn = {0}, blk = {0}, e = {0};
	bool ok = params(P, &fn, 1);
	if (ok) {
		if (os)
			ali_buf_str(&fn, 2, os);
		else
			ali_buf_len(&fn, 2, opset.p, opset.n);
	}
	ok = ok && attrs(P, &fn, 4) && block(P, &blk, 0) && expect(P, ";");
	if (ok) { /* block_specializations[opset] */
		if (os)
			ali_buf_str(&e, 1, os);
		else
			ali_buf_len(&e, 1, opset.p, opset.n);
		ali_buf_len(&e, 2, blk.p, blk.n);
		ali_buf_len(&fn, 3, e.p, e.n);
		e.n = 0;
		ali_buf_len(&e, 1, name.p, name.n);
		ali_buf_len(&e, 2, fn.p, fn.n);
		ali_buf_len(prog, 2, e.p, e.n);
	}
	if (fn.failed || blk.failed || e.failed)
		ok = oom(P);
	ali_buf_free(&fn);
	ali_buf_free(&blk);
	ali_buf_free(&e);
	return ok && buf_ok(P, prog);
}

static enum al_status parse_text(al_span text, const char *name, struct al_buf *out, al_diags *d)
{
	struct p P = {.s = (const char *)text.p, .n = text.n, .name = name ? name : "model.mil", .d = d};
	if (text.n > AL_MILTEXT_MAX_BYTES) {
		ali_diag_add(d, AL_SEV_ERROR, P.name, UINT64_MAX, NULL, NULL,
			    "MIL text of %zu bytes; more than %zu is refused", text.n,
			    AL_MILTEXT_MAX_BYTES);
		return AL_E_FORMAT;
	}
	if (text.n && memchr(text.p, '\0', text.n))
		err_at(&P, (size_t)((const uint8_t *)memchr(text.p, '\0', text.n) - text.p),
		       "NUL byte in MIL text");
	if (!P.failed && P.n >= 3 && memcmp(P.s, "\xEF\xBB\xBF", 3) == 0)
		P.pos = 3;
	if (!P.failed && expect(&P, "program") && expect(&P, "(")) {
		double v;
		int64_t iv;
		bool is_int;
		size_t at = P.pos;
		if (number(&P, &v, &iv, &is_int)) {
			if (!(v >= 1 && v < 2))
				err_at(&P, at, "program version %g; anelint reads version 1", v);
			else
				ali_buf_uint(out, 1, 1);
		}
		if (expect(&P, ")") && attrs(&P, out, 4) && expect(&P, "{")) {
			while (!P.failed && peek(&P) != '}') {
				if (!peek(&P)) {
					err_at(&P, P.pos, "program not closed: expected '}'");
					break;
				}
				function(&P, out);
			}
			if (!P.failed && expect(&P, "}") && peek(&P))
				err_at(&P, P.pos, "text after the end of the program");
		}
	}
	ali_arena_free(&P.tmp);
	if (out->failed)
		P.nomem = true;
	if (P.nomem) {
		ali_diag_add(d, AL_SEV_ERROR, P.name, UINT64_MAX, NULL, NULL, "out of memory");
		return AL_E_NOMEM;
	}
	return P.failed ? AL_E_FORMAT : AL_OK;
}

enum al_status ali_mil_text_parse(al_span text, const char *name, struct al_buf *out, al_diags *d)
{
	struct al_map guarded; /* the guard-page test mode's copy (base.h) */
	enum al_status st = parse_text(ali_guard_span(text, &guarded), name, out, d);
	ali_unmap(&guarded);
	return st;
}

enum al_status ali_load_mil_text(struct al_model *m, struct al_submodel *sub, al_span text,
				 const char *file, al_diags *d)
{
	struct al_buf b = {0};
	enum al_status st = ali_mil_text_parse(text, file, &b, d);
	if (st) {
		ali_buf_free(&b);
		return st;
	}
	uint8_t *copy = b.n ? ali_arena_alloc(&m->arena, b.n) : NULL;
	if (b.n && !copy) {
		ali_buf_free(&b);
		return AL_E_NOMEM;
	}
	if (b.n)
		memcpy(copy, b.p, b.n);
	size_t n = b.n;
	ali_buf_free(&b);
	/* offsets of the protobuf walker's diagnostics are in the generated
	 * message; the text's own errors came above with line and column */
	return ali_load_mil_program(m, sub, (al_span){copy, n}, 0, file, d);
}
