/* SPDX-License-Identifier: MIT */
/* pbsplice.c: splice edits into a serialized protobuf message (pbsplice.h). */
#include "pbsplice.h"
#include "model.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ writer */

size_t ali_varint_size(uint64_t v)
{
	size_t k = 1;
	while (v >= 0x80) {
		v >>= 7;
		k++;
	}
	return k;
}

static size_t varint_enc(uint64_t v, uint8_t out[10])
{
	size_t k = 0;
	while (v >= 0x80) {
		out[k++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[k++] = (uint8_t)v;
	return k;
}

void ali_buf_varint(struct al_buf *b, uint64_t v)
{
	uint8_t t[10];
	ali_buf_put(b, t, varint_enc(v, t));
}

void ali_buf_tag(struct al_buf *b, uint32_t field, enum pb_wire w)
{
	ali_buf_varint(b, ((uint64_t)field << 3) | (uint64_t)w);
}

void ali_buf_len(struct al_buf *b, uint32_t field, const void *p, size_t n)
{
	ali_buf_tag(b, field, PB_LEN);
	ali_buf_varint(b, n);
	ali_buf_put(b, p, n);
}

void ali_buf_str(struct al_buf *b, uint32_t field, const char *s)
{
	ali_buf_len(b, field, s, strlen(s));
}

void ali_buf_uint(struct al_buf *b, uint32_t field, uint64_t v)
{
	ali_buf_tag(b, field, PB_VARINT);
	ali_buf_varint(b, v);
}

void ali_buf_float(struct al_buf *b, uint32_t field, float v)
{
	uint32_t u;
	memcpy(&u, &v, 4);
	uint8_t le[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
	ali_buf_tag(b, field, PB_FIXED32);
	ali_buf_put(b, le, 4);
}

void ali_buf_packed(struct al_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += ali_varint_size(v[i]);
	ali_buf_tag(b, field, PB_LEN);
	ali_buf_varint(b, len);
	for (size_t i = 0; i < n; i++)
		ali_buf_varint(b, v[i]);
}

/* ------------------------------------------------------------------ splice */

#define NONE SIZE_MAX
#define SP_MAX_DEPTH 100 /* protobuf's own recursion limit */

/* A length-delimited field enclosing an edit. Offsets are from root.p. */
struct sp_field {
	size_t tag_pos, len_pos, len_len;
	uint64_t old_len;
	size_t parent; /* index, NONE: directly in the root */
	int depth;
	int64_t delta; /* change of the payload size */
	uint8_t enc[10];
	size_t enc_len;
};

struct sp_edit {
	size_t at, len;
	uint8_t *bytes; /* NULL for a length prefix (then enc of field `fi`) */
	size_t n;
	size_t parent; /* field index, NONE = root */
	size_t fi;
	size_t seq;
};

struct al_splice {
	al_span root;
	struct sp_field *f;
	size_t nf, capf;
	struct sp_edit *e;
	size_t ne, cape;
	struct sp_edit *pieces; /* after finish: edits + changed length prefixes, sorted */
	size_t np;
	size_t out_size;
	bool finished;
};

struct al_splice *ali_splice_new(al_span root)
{
	struct al_splice *s = ali_calloc(1, sizeof *s);
	if (s)
		s->root = root;
	return s;
}

void ali_splice_free(struct al_splice *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ne; i++)
		ali_free(s->e[i].bytes);
	ali_free(s->e);
	ali_free(s->f);
	ali_free(s->pieces);
	ali_free(s);
}

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return true;
	size_t c = *cap ? *cap * 2 : 16;
	while (c < need)
		c *= 2;
	void *q = ali_realloc(*p, c * size);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

static bool within(al_span outer, const uint8_t *p, size_t n)
{
	return p >= outer.p && (size_t)(p - outer.p) <= outer.n && n <= outer.n - (size_t)(p - outer.p);
}

/* Walk from the root to the field whose payload is exactly `target`,
 * recording every enclosing field; *out its index (NONE for the root). */
static enum al_status chain(struct al_splice *s, al_span target, size_t *out)
{
	if (target.p == s->root.p && target.n == s->root.n) {
		*out = NONE;
		return AL_OK;
	}
	if (!target.p || !within(s->root, target.p, target.n))
		return AL_E_INVALID_ARG;
	al_span cur = s->root;
	size_t parent = NONE;
	for (int depth = 0; depth < SP_MAX_DEPTH; depth++) {
		struct pb_iter it;
		struct pb_field f;
		pb_iter_init(&it, cur);
		bool found = false;
		while (pb_next(&it, &f)) {
			if (f.wire != PB_LEN || !within(f.data, target.p, target.n))
				continue;
			if (target.n == 0 && f.data.n != 0 && target.p == f.data.p + f.data.n)
				continue; /* an empty target at the end: the next field's */
			size_t pos = f.start;
			uint64_t v;
			if (pb_varint(cur.p, cur.n, &pos, &v) != PB_OK)
				return AL_E_FORMAT;
			size_t lp = pos;
			if (pb_varint(cur.p, cur.n, &pos, &v) != PB_OK)
				return AL_E_FORMAT;
			size_t abs_len = (size_t)(cur.p - s->root.p) + lp;
			size_t idx = NONE;
			for (size_t i = 0; i < s->nf; i++)
				if (s->f[i].len_pos == abs_len) {
					idx = i;
					break;
				}
			if (idx == NONE) {
				if (!grow((void **)&s->f, &s->capf, s->nf + 1, sizeof *s->f))
					return AL_E_NOMEM;
				idx = s->nf++;
				s->f[idx] = (struct sp_field){
					.tag_pos = (size_t)(cur.p - s->root.p) + f.start,
					.len_pos = abs_len,
					.len_len = pos - lp,
					.old_len = v,
					.parent = parent,
					.depth = depth,
				};
			}
			parent = idx;
			if (f.data.p == target.p && f.data.n == target.n) {
				*out = idx;
				return AL_OK;
			}
			cur = f.data;
			found = true;
			break;
		}
		if (it.err)
			return AL_E_FORMAT;
		if (!found)
			return AL_E_INVALID_ARG;
	}
	return AL_E_FORMAT;
}

static enum al_status add_edit(struct al_splice *s, size_t parent, size_t at, size_t len,
			       const void *bytes, size_t n)
{
	if (s->finished)
		return AL_E_INVALID_ARG;
	if (!grow((void **)&s->e, &s->cape, s->ne + 1, sizeof *s->e))
		return AL_E_NOMEM;
	uint8_t *copy = ali_malloc(n ? n : 1);
	if (!copy)
		return AL_E_NOMEM;
	if (n)
		memcpy(copy, bytes, n);
	s->e[s->ne] = (struct sp_edit){.at = at, .len = len, .bytes = copy, .n = n, .parent = parent,
				       .fi = NONE, .seq = s->ne};
	s->ne++;
	return AL_OK;
}

enum al_status ali_splice_replace(struct al_splice *s, al_span parent, const uint8_t *at, size_t len,
				 const void *bytes, size_t n)
{
	if (!s || (!bytes && n) || !within(parent, at, len))
		return AL_E_INVALID_ARG;
	size_t idx;
	enum al_status st = chain(s, parent, &idx);
	if (st)
		return st;
	return add_edit(s, idx, (size_t)(at - s->root.p), len, bytes, n);
}

enum al_status ali_splice_insert_before(struct al_splice *s, al_span msg, const void *bytes, size_t n)
{
	if (!s || (!bytes && n))
		return AL_E_INVALID_ARG;
	size_t idx;
	enum al_status st = chain(s, msg, &idx);
	if (st)
		return st;
	if (idx == NONE)
		return AL_E_INVALID_ARG;
	return add_edit(s, s->f[idx].parent, s->f[idx].tag_pos, 0, bytes, n);
}

enum al_status ali_splice_delete(struct al_splice *s, al_span msg)
{
	if (!s)
		return AL_E_INVALID_ARG;
	size_t idx;
	enum al_status st = chain(s, msg, &idx);
	if (st)
		return st;
	if (idx == NONE)
		return AL_E_INVALID_ARG;
	const struct sp_field *f = &s->f[idx];
	size_t end = f->len_pos + f->len_len + (size_t)f->old_len;
	return add_edit(s, f->parent, f->tag_pos, end - f->tag_pos, NULL, 0);
}

static int cmp_piece(const void *a, const void *b)
{
	const struct sp_edit *x = a, *y = b;
	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	if ((x->len == 0) != (y->len == 0))
		return x->len == 0 ? -1 : 1; /* an insertion before a replacement at the same place */
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_depth(const void *a, const void *b, void *ctx)
{
	const struct sp_field *f = ctx;
	int da = f[*(const size_t *)a].depth, db = f[*(const size_t *)b].depth;
	return db - da; /* deepest first */
}

enum al_status ali_splice_finish(struct al_splice *s, size_t *out_size)
{
	if (!s)
		return AL_E_INVALID_ARG;
	if (s->finished) {
		if (out_size)
			*out_size = s->out_size;
		return AL_OK;
	}
	for (size_t i = 0; i < s->nf; i++)
		s->f[i].delta = 0;
	int64_t total = 0;
	for (size_t i = 0; i < s->ne; i++) {
		int64_t d = (int64_t)s->e[i].n - (int64_t)s->e[i].len;
		if (s->e[i].parent == NONE)
			total += d;
		else
			s->f[s->e[i].parent].delta += d;
	}
	size_t *order = ali_malloc((s->nf ? s->nf : 1) * sizeof *order);
	if (!order)
		return AL_E_NOMEM;
	for (size_t i = 0; i < s->nf; i++)
		order[i] = i;
	ali_sort_r(order, s->nf, sizeof *order, cmp_depth, s->f);
	size_t n_changed = 0;
	for (size_t k = 0; k < s->nf; k++) {
		struct sp_field *f = &s->f[order[k]];
		if (f->delta == 0)
			continue;
		int64_t nl = (int64_t)f->old_len + f->delta;
		if (nl < 0) {
			ali_free(order);
			return AL_E_INVALID_ARG;
		}
		f->enc_len = varint_enc((uint64_t)nl, f->enc);
		int64_t grow_by = f->delta + (int64_t)f->enc_len - (int64_t)f->len_len;
		if (f->parent == NONE)
			total += grow_by;
		else
			s->f[f->parent].delta += grow_by;
		n_changed++;
	}
	ali_free(order);
	size_t np = s->ne + n_changed;
	s->pieces = ali_malloc((np ? np : 1) * sizeof *s->pieces);
	if (!s->pieces)
		return AL_E_NOMEM;
	size_t k = 0;
	for (size_t i = 0; i < s->ne; i++)
		s->pieces[k++] = s->e[i];
	for (size_t i = 0; i < s->nf; i++)
		if (s->f[i].delta != 0)
			s->pieces[k++] = (struct sp_edit){.at = s->f[i].len_pos, .len = s->f[i].len_len,
							  .n = s->f[i].enc_len, .fi = i, .seq = SIZE_MAX};
	s->np = k;
	qsort(s->pieces, s->np, sizeof *s->pieces, cmp_piece);
	for (size_t i = 1; i < s->np; i++) {
		const struct sp_edit *a = &s->pieces[i - 1], *b = &s->pieces[i];
		if (a->at + a->len > b->at || (a->len && b->len == 0 && a->at == b->at))
			return AL_E_INVALID_ARG; /* overlapping edits */
	}
	if (total < 0 && (uint64_t)-total > s->root.n)
		return AL_E_INVALID_ARG;
	s->out_size = (size_t)((int64_t)s->root.n + total);
	s->finished = true;
	if (out_size)
		*out_size = s->out_size;
	return AL_OK;
}

static const uint8_t *piece_bytes(const struct al_splice *s, const struct sp_edit *p)
{
	return p->fi == NONE ? p->bytes : s->f[p->fi].enc;
}

enum al_status ali_splice_to_buffer(struct al_splice *s, uint8_t **out, size_t *n)
{
	if (!out || !n)
		return AL_E_INVALID_ARG;
	*out = NULL;
	*n = 0;
	enum al_status st = ali_splice_finish(s, NULL);
	if (st)
		return st;
	uint8_t *o = ali_malloc(s->out_size ? s->out_size : 1);
	if (!o)
		return AL_E_NOMEM;
	size_t pos = 0, w = 0;
	for (size_t i = 0; i < s->np; i++) {
		const struct sp_edit *p = &s->pieces[i];
		memcpy(o + w, s->root.p + pos, p->at - pos);
		w += p->at - pos;
		if (p->n)
			memcpy(o + w, piece_bytes(s, p), p->n);
		w += p->n;
		pos = p->at + p->len;
	}
	if (s->root.n > pos)
		memcpy(o + w, s->root.p + pos, s->root.n - pos);
	*out = o;
	*n = s->out_size;
	return AL_OK;
}

/* Bytes [from, from + n) of the root onto out_fd: in-kernel when possible. */
static bool copy_range(const struct al_splice *s, int in_fd, bool *cfr_ok, size_t from, size_t n,
		       int out_fd)
{
	while (n && in_fd >= 0 && *cfr_ok) {
		/* 64 MB at a time, the device writing each while the next copies: the
		 * fsync before the rename (durable writes) then waits for less (bench/fixcp.sh) */
		long long k = ali_copy_file_range(in_fd, from, out_fd, n > ((size_t)64 << 20) ? (size_t)64 << 20 : n);
		if (k <= 0) {
			if (k < 0 && errno == EINTR)
				continue;
			*cfr_ok = false; /* EXDEV, ENOSYS (no such call), EINVAL...: write from memory */
			break;
		}
		from += (size_t)k;
		n -= (size_t)k;
		if (n && ali_durable_writes())
			ali_writeback_start(out_fd);
	}
	return ali_write_all(out_fd, s->root.p + from, n);
}

enum al_status ali_splice_to_fd(struct al_splice *s, int in_fd, int out_fd)
{
	enum al_status st = ali_splice_finish(s, NULL);
	if (st)
		return st;
	bool cfr = true;
	size_t pos = 0;
	for (size_t i = 0; i < s->np; i++) {
		const struct sp_edit *p = &s->pieces[i];
		if (!copy_range(s, in_fd, &cfr, pos, p->at - pos, out_fd) ||
		    !ali_write_all(out_fd, piece_bytes(s, p), p->n))
			return AL_E_IO;
		pos = p->at + p->len;
	}
	if (!copy_range(s, in_fd, &cfr, pos, s->root.n - pos, out_fd))
		return AL_E_IO;
	return AL_OK;
}
