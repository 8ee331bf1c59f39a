/* SPDX-License-Identifier: MIT */
/* compact.c: the new weight.bin without the blobs nothing refers to any more.
 *
 * ML Program passes append their blobs to weight.bin; the fp32 or int4 blobs
 * they replace stay, unreferenced (an fp16-compute output was 1.5x its input).
 * When a rewrite left a blob without a reference (one the input program
 * referred to, or one a pass appended), the package writer lays out a new
 * weight.bin instead: the storage header (its blob count the live blobs'),
 * then each blob still referenced, in the order of its old offset, its
 * 64-byte metadata at the next 64-byte boundary with the data right after it
 * (the MILBlob storage format: GetAllOffsets walks exactly this chain), and
 * the program's blobFileValue offsets rewritten to match (a splice over the
 * rewritten model). Data is copied as bytes, never decoded; from the input
 * file with its holes kept (ali_copy_range), so a sparse weight.bin stays
 * sparse. No blob dropped: nothing planned, the writer copies as before.
 */
#include "surgery_int.h"
#include "mil_blobs.h"

#include <stdlib.h>
#include <string.h>

#define WEIGHTS_FILE "@model_path/weights/weight.bin"
#define STORAGE_ALIGN 64
#define BLOB_META 64
#define BLOB_SENTINEL 0xDEADBEEFu

struct refs {
	struct ali_blob_ref *r;
	size_t n, cap;
	bool other_file; /* a reference to another file: not compacted */
};

static bool collect(void *ctx, const struct ali_blob_ref *r)
{
	struct refs *x = ctx;
	if (!ali_span_eq(r->file, WEIGHTS_FILE))
		x->other_file = true;
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 64;
		struct ali_blob_ref *p = cap <= SIZE_MAX / sizeof *p ? ali_realloc(x->r, cap * sizeof *p) : NULL;
		if (!p)
			return false;
		x->r = p;
		x->cap = cap;
	}
	x->r[x->n++] = *r;
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The sorted distinct offsets of refs (ali_free it); NULL with *n 0 for none. */
static uint64_t *distinct_offsets(const struct refs *x, size_t *n, bool *nomem)
{
	*n = 0;
	if (!x->n)
		return NULL;
	uint64_t *o = ali_malloc(x->n * sizeof *o);
	if (!o) {
		*nomem = true;
		return NULL;
	}
	for (size_t i = 0; i < x->n; i++)
		o[i] = x->r[i].offset;
	qsort(o, x->n, sizeof *o, cmp_u64);
	size_t k = 0;
	for (size_t i = 0; i < x->n; i++)
		if (k == 0 || o[i] != o[k - 1])
			o[k++] = o[i];
	*n = k;
	return o;
}

/* The size of the new weight.bin before compaction (mil_build.c's
 * ali_surgery_wsize, not called: the writer calls this file, not back). */
static uint64_t image_size(const struct al_surgery *s)
{
	return (uint64_t)s->m->weights.n + s->wtail.n;
}

static bool has(const uint64_t *o, size_t n, uint64_t v)
{
	return o && bsearch(&v, o, n, sizeof *o, cmp_u64) != NULL;
}

/* n bytes at offset off of the new weight.bin before compaction (the input's
 * bytes, then the appended tail), or NULL when they are not all in one of
 * the two. */
static const uint8_t *image_at(const struct al_surgery *s, uint64_t off, uint64_t n)
{
	uint64_t a = s->m->weights.n, total = image_size(s);
	if (off > total || n > total - off)
		return NULL;
	if (off < a)
		return n <= a - off ? s->m->weights.p + off : NULL;
	return s->wtail.p + (off - a);
}

/* The metadata offsets of the blobs the passes appended (the tail's chain). */
static uint64_t *appended(const struct al_surgery *s, size_t *n, bool *nomem)
{
	*n = 0;
	uint64_t a = s->m->weights.n, total = image_size(s);
	uint64_t pos = a ? a : BLOB_META; /* a fresh file: the tail starts with its header */
	if (!s->wcount || total <= pos)
		return NULL;
	uint64_t *o = ali_malloc(s->wcount * sizeof *o);
	if (!o) {
		*nomem = true;
		return NULL;
	}
	while (*n < s->wcount) {
		uint64_t meta = (pos + STORAGE_ALIGN - 1) / STORAGE_ALIGN * STORAGE_ALIGN;
		const uint8_t *md = image_at(s, meta, BLOB_META);
		if (!md)
			break;
		o[(*n)++] = meta;
		uint64_t size = al_rd64le(md + 8);
		if (size > total - meta - BLOB_META)
			break;
		pos = meta + BLOB_META + size;
	}
	return o;
}

void ali_compact_free(struct ali_compact *c)
{
	if (!c)
		return;
	ali_free(c->model);
	ali_free(c->blob);
	memset(c, 0, sizeof *c);
}

/* The new offset of the blob whose metadata was at old. */
static uint64_t moved(const struct ali_compact *c, uint64_t old)
{
	size_t lo = 0, hi = c->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->blob[mid].old_meta < old)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->n && c->blob[lo].old_meta == old ? c->blob[lo].new_meta : UINT64_MAX;
}

/* The layout of the live blobs; false when one of them is not a whole blob
 * of the image (the loader reports it; nothing is moved then). */
static bool lay_out(const struct al_surgery *s, struct ali_compact *c, const uint64_t *live, size_t n)
{
	uint64_t pos = BLOB_META;
	for (size_t i = 0; i < n; i++) {
		uint64_t o = live[i];
		const uint8_t *md = image_at(s, o, BLOB_META);
		if (!md || o % STORAGE_ALIGN || al_rd32le(md) != BLOB_SENTINEL)
			return false;
		uint64_t size = al_rd64le(md + 8), data = al_rd64le(md + 16);
		if (!image_at(s, data, size)) /* in the input, or in the tail, whole */
			return false;
		uint64_t meta = (pos + STORAGE_ALIGN - 1) / STORAGE_ALIGN * STORAGE_ALIGN;
		c->blob[i] = (struct ali_live_blob){o, meta, data, size};
		pos = meta + BLOB_META + size;
	}
	c->n = n;
	c->size = pos;
	return true;
}

enum al_status ali_compact_plan(struct al_surgery *s, struct ali_compact *c, al_diags *d)
{
	memset(c, 0, sizeof *c);
	const al_model *m = s->m;
	uint64_t a = m->weights.n;
	c->before = image_size(s);
	if (!s->sp || c->before == 0 || (a && a < BLOB_META) || (!a && s->wtail.n < BLOB_META) ||
	    m->n_subs != 1 || m->subs[0]->world != AL_WORLD_MIL)
		return AL_OK;
	uint8_t *out = NULL;
	size_t out_n = 0;
	enum al_status st = ali_splice_to_buffer(s->sp, &out, &out_n);
	if (st != AL_OK) {
		ali_free(out);
		return st == AL_E_NOMEM ? st : AL_OK;
	}
	struct refs now = {0}, was = {0};
	uint64_t *live = NULL, *before = NULL, *added = NULL;
	size_t n_live = 0, n_before = 0, n_added = 0;
	bool nomem = false;
	al_span prog_out, prog_in;
	bool walked = ali_model_program((al_span){out, out_n}, &prog_out) &&
		      ali_model_program(s->root, &prog_in);
	if (walked) {
		enum al_status a1 = ali_mil_blob_refs(prog_out, collect, &now);
		enum al_status a2 = a1 == AL_OK ? ali_mil_blob_refs(prog_in, collect, &was) : a1;
		nomem = a1 == AL_E_NOMEM || a2 == AL_E_NOMEM;
		walked = a1 == AL_OK && a2 == AL_OK && !now.other_file;
	}
	if (walked) {
		live = distinct_offsets(&now, &n_live, &nomem);
		before = distinct_offsets(&was, &n_before, &nomem);
		added = appended(s, &n_added, &nomem);
	}
	size_t n_dead = 0; /* blobs referenced before, or appended, that nothing refers to now */
	for (size_t i = 0; walked && !nomem && i < n_before; i++)
		n_dead += !has(live, n_live, before[i]);
	for (size_t i = 0; walked && !nomem && i < n_added; i++)
		n_dead += !has(live, n_live, added[i]);
	bool dead = n_dead > 0;
	if (dead && !nomem && !(c->blob = ali_malloc((n_live ? n_live : 1) * sizeof *c->blob)))
		nomem = true;
	if (dead && !nomem && lay_out(s, c, live, n_live) && c->size < c->before) {
		/* the offsets moved: a splice over the rewritten model */
		struct al_splice *sp = ali_splice_new((al_span){out, out_n});
		st = sp ? AL_OK : AL_E_NOMEM;
		for (size_t i = 0; st == AL_OK && i < now.n; i++) {
			const struct ali_blob_ref *r = &now.r[i];
			uint64_t to = moved(c, r->offset);
			if (to == r->offset)
				continue;
			struct al_buf v = {0};
			ali_buf_varint(&v, to);
			st = v.failed ? AL_E_NOMEM : ali_splice_replace(sp, r->bfv, r->off_at, r->off_len, v.p, v.n);
			ali_buf_free(&v);
		}
		if (st == AL_OK)
			st = ali_splice_finish(sp, NULL);
		if (st == AL_OK)
			st = ali_splice_to_buffer(sp, &c->model, &c->model_n);
		ali_splice_free(sp);
		if (st == AL_OK) {
			c->on = true;
			c->dropped = n_dead;
		} else {
			nomem = st == AL_E_NOMEM;
		}
	}
	ali_free(out);
	ali_free(now.r);
	ali_free(was.r);
	ali_free(live);
	ali_free(before);
	ali_free(added);
	if (!c->on) {
		uint64_t b = c->before;
		ali_compact_free(c);
		c->before = b;
	}
	if (nomem) {
		ali_diag_add(d, AL_SEV_ERROR, m->path, UINT64_MAX, NULL, NULL, "out of memory");
		return AL_E_NOMEM;
	}
	return AL_OK;
}

static bool write_zeros(int fd, uint64_t n)
{
	static const uint8_t zeros[STORAGE_ALIGN];
	while (n) {
		size_t k = n > sizeof zeros ? sizeof zeros : (size_t)n;
		if (!ali_write_all(fd, zeros, k))
			return false;
		n -= k;
	}
	return true;
}

bool ali_compact_write(const struct al_surgery *s, const struct ali_compact *c, int in_fd, int out_fd)
{
	uint64_t a = s->m->weights.n;
	uint8_t h[BLOB_META];
	memcpy(h, image_at(s, 0, BLOB_META), BLOB_META); /* the input's header, or the fresh one */
	for (int i = 0; i < 4; i++)
		h[i] = (uint8_t)(c->n >> (8 * i));
	if (!ali_write_all(out_fd, h, sizeof h))
		return false;
	uint64_t pos = BLOB_META;
	for (size_t i = 0; i < c->n; i++) {
		const struct ali_live_blob *b = &c->blob[i];
		uint8_t md[BLOB_META];
		memcpy(md, image_at(s, b->old_meta, BLOB_META), BLOB_META);
		uint64_t data = b->new_meta + BLOB_META;
		for (int k = 0; k < 8; k++)
			md[16 + k] = (uint8_t)(data >> (8 * k));
		if (!write_zeros(out_fd, b->new_meta - pos) || !ali_write_all(out_fd, md, sizeof md))
			return false;
		bool ok;
		if (b->data < a && in_fd >= 0)
			ok = ali_copy_range(in_fd, b->data, b->size, out_fd); /* holes stay holes */
		else
			ok = !b->size || ali_write_all(out_fd, image_at(s, b->data, b->size), (size_t)b->size);
		if (!ok)
			return false;
		pos = data + b->size;
	}
	return true;
}
