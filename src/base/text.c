/* SPDX-License-Identifier: MIT */
/* text.c: the library's one growable buffer (al_buf: bytes or text, printf onto
 * its end), its one strdup and its one formatter of dimensions ("[1,3,224,224]",
 * "[1, 3, ?, 224]"). Nothing here prints: ali_dims_fput writes to the caller's
 * stream, as a report does. */
#include "base.h"

#include <stdarg.h>
#include <string.h>

/* ================================================================ al_buf */

void ali_buf_free(struct al_buf *b)
{
	ali_free(b->p);
	memset(b, 0, sizeof *b);
}

void ali_buf_put(struct al_buf *b, const void *p, size_t n)
{
	if (b->failed || n == 0)
		return;
	if (n > SIZE_MAX / 2 - b->n) {
		b->failed = true;
		return;
	}
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->n + n)
			cap *= 2;
		uint8_t *q = ali_realloc(b->p, cap);
		if (!q) {
			b->failed = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

/* The one printf of the library onto a growing buffer (MIL text, probe models, the
 * calibration rules): a short line formatted on the stack, a longer one in its own allocation. */
void ali_buf_printf(struct al_buf *t, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0) {
		t->failed = true;
		return;
	}
	if ((size_t)n < sizeof small) {
		ali_buf_put(t, small, (size_t)n);
		return;
	}
	char *big = ali_malloc((size_t)n + 1);
	if (!big) {
		t->failed = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	ali_buf_put(t, big, (size_t)n);
	ali_free(big);
}

/* ================================================================ strings */

char *ali_strdup(const char *s)
{
	size_t len = strlen(s);
	char *c = ali_malloc(len + 1);
	if (c)
		memcpy(c, s, len + 1);
	return c;
}

/* ================================================================ dimensions */

/* One dimension's text into t (at least 21 bytes): "?" for a negative one in
 * the AL_DIMS_QUERY style, else its decimal digits (without printf: a report
 * formats a shape per layer). Returns its length. */
static size_t dim_text(char *t, int64_t d, unsigned style)
{
	if (d < 0 && (style & AL_DIMS_QUERY)) {
		t[0] = '?';
		return 1;
	}
	char dg[20], *e = dg + sizeof dg, *q = e;
	uint64_t u = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
	do
		*--q = (char)('0' + u % 10);
	while (u /= 10);
	size_t n = 0;
	if (d < 0)
		t[n++] = '-';
	memcpy(t + n, q, (size_t)(e - q));
	return n + (size_t)(e - q);
}

/* Calls put(ctx, bytes, n) for each piece of the text of dims in `style`. */
static void dims_pieces(const int64_t *dims, size_t rank, unsigned style,
			void (*put)(void *ctx, const char *s, size_t n), void *ctx)
{
	bool spaced = (style & AL_DIMS_SPACED) != 0, bare = (style & AL_DIMS_BARE) != 0;
	if (!bare)
		put(ctx, "[", 1);
	for (size_t i = 0; i < rank; i++) {
		char t[24];
		if (i)
			put(ctx, ", ", spaced ? 2 : 1);
		put(ctx, t, dim_text(t, dims[i], style));
	}
	if (!bare)
		put(ctx, "]", 1);
}

struct dims_cut {
	char *buf;
	size_t cap, len; /* len: the full text's length so far */
};

static void put_cut(void *ctx, const char *s, size_t n)
{
	struct dims_cut *c = ctx;
	if (c->len < c->cap - 1) {
		size_t room = c->cap - 1 - c->len;
		memcpy(c->buf + c->len, s, n < room ? n : room);
	}
	c->len += n;
}

size_t ali_dims_str(char *buf, size_t cap, const int64_t *dims, size_t rank, unsigned style)
{
	if (!cap)
		return 0;
	struct dims_cut c = {buf, cap, 0};
	dims_pieces(dims, rank, style, put_cut, &c);
	buf[c.len < cap - 1 ? c.len : cap - 1] = '\0';
	return c.len;
}

static void put_file(void *ctx, const char *s, size_t n)
{
	fwrite(s, 1, n, (FILE *)ctx);
}

void ali_dims_fput(FILE *out, const int64_t *dims, size_t rank, unsigned style)
{
	dims_pieces(dims, rank, style, put_file, out);
}

static void put_buf(void *ctx, const char *s, size_t n)
{
	ali_buf_put(ctx, s, n);
}

void ali_buf_dims(struct al_buf *b, const int64_t *dims, size_t rank, unsigned style)
{
	dims_pieces(dims, rank, style, put_buf, b);
}
