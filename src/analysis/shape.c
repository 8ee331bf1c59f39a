/* SPDX-License-Identifier: MIT */
/* shape.c: the shape arithmetic the shape and cost modules share: dims that may
 * be unknown (AL_DIM_UNKNOWN) or flexible, broadcasting, matmul and slice sizes,
 * and the accessors of inferred shapes. No model walking: shape_infer.c does it. */
#include "shapes.h"

#include <limits.h>
#include <string.h>

/* ================================================================ dim arithmetic */

int64_t dim_add(int64_t a, int64_t b)
{
	if (a < 0 || b < 0 || a > INT64_MAX - b)
		return AL_DIM_UNKNOWN;
	return a + b;
}

int64_t dim_sub(int64_t a, int64_t b)
{
	if (a < 0 || b < 0 || a < b)
		return AL_DIM_UNKNOWN;
	return a - b;
}

int64_t dim_mul(int64_t a, int64_t b)
{
	if (a < 0 || b < 0 || (b && a > INT64_MAX / b))
		return AL_DIM_UNKNOWN;
	return a * b;
}

int64_t dim_div_floor(int64_t a, int64_t b)
{
	if (a < 0 || b <= 0)
		return AL_DIM_UNKNOWN;
	return a / b;
}

int64_t dim_div_ceil(int64_t a, int64_t b)
{
	if (a < 0 || b <= 0)
		return AL_DIM_UNKNOWN;
	return a / b + (a % b != 0);
}

/* ================================================================ one shape */

void shp_rank(struct al_shape *s, int rank, int dtype)
{
	s->rank = rank < -1 ? -1 : rank;
	s->dtype = dtype;
	s->flex = 0;
	for (int i = 0; i < AL_SHAPE_MAX_RANK; i++)
		s->dims[i] = AL_DIM_UNKNOWN;
}

void shp_unknown(struct al_shape *s)
{
	shp_rank(s, -1, AL_DT_UNKNOWN);
}

void shp_from(struct al_shape *s, const int64_t *v, size_t n, int dtype)
{
	shp_rank(s, n > INT_MAX ? -1 : (int)n, dtype);
	for (size_t i = 0; i < n && i < AL_SHAPE_MAX_RANK; i++)
		s->dims[i] = v[i] >= 0 ? v[i] : AL_DIM_UNKNOWN;
}

int64_t shp_dim(const struct al_shape *s, int i)
{
	if (!s || i < 0 || i >= s->rank || i >= AL_SHAPE_MAX_RANK)
		return AL_DIM_UNKNOWN;
	return s->dims[i];
}

bool shp_flex(const struct al_shape *s, int i)
{
	if (!s || i < 0 || i >= s->rank || i >= AL_SHAPE_MAX_RANK)
		return false;
	return (s->flex >> i) & 1;
}

void shp_set(struct al_shape *s, int i, int64_t v, bool flex)
{
	if (i < 0 || i >= AL_SHAPE_MAX_RANK)
		return;
	s->dims[i] = v >= 0 ? v : AL_DIM_UNKNOWN;
	if (flex)
		s->flex |= (uint8_t)(1u << i);
	else
		s->flex &= (uint8_t)~(1u << i);
}

void shp_copy_dim(struct al_shape *dst, int i, const struct al_shape *src, int j)
{
	shp_set(dst, i, shp_dim(src, j), shp_flex(src, j));
}

int64_t shp_prod(const struct al_shape *s, int from, int to, bool *flex)
{
	if (!s || s->rank < 0 || from < 0 || to > s->rank)
		return AL_DIM_UNKNOWN;
	int64_t p = 1;
	for (int i = from; i < to; i++) {
		if (flex && shp_flex(s, i))
			*flex = true;
		p = dim_mul(p, shp_dim(s, i));
	}
	return p;
}

int64_t shp_numel(const struct al_shape *s)
{
	return s ? shp_prod(s, 0, s->rank, NULL) : AL_DIM_UNKNOWN;
}

int shp_axis(const struct al_shape *s, int64_t a)
{
	if (!s || s->rank < 0)
		return -1;
	if (a < 0)
		a += s->rank;
	return a >= 0 && a < s->rank ? (int)a : -1;
}

bool shp_broadcast(const struct al_shape *a, const struct al_shape *b, struct al_shape *out)
{
	int dtype = a && a->dtype ? a->dtype : b ? b->dtype : AL_DT_UNKNOWN;
	if (!a || !b || a->rank < 0 || b->rank < 0) {
		shp_rank(out, -1, dtype);
		return true;
	}
	int r = a->rank > b->rank ? a->rank : b->rank;
	shp_rank(out, r, dtype);
	for (int k = 0; k < r; k++) {
		int i = r - 1 - k, ia = a->rank - 1 - k, ib = b->rank - 1 - k;
		int64_t da = ia >= 0 ? shp_dim(a, ia) : 1, db = ib >= 0 ? shp_dim(b, ib) : 1;
		bool fa = ia >= 0 && shp_flex(a, ia), fb = ib >= 0 && shp_flex(b, ib);
		if (da >= 0 && da == db)
			shp_set(out, i, da, fa || fb);
		else if (da == 1)
			shp_set(out, i, db, fb);
		else if (db == 1)
			shp_set(out, i, da, fa);
		else if (da >= 0 && db >= 0 && da != db) {
			shp_rank(out, -1, dtype);
			return false;
		} else if (da >= 0)
			shp_set(out, i, da, fa || fb); /* db is unknown: 1 or da */
		else if (db >= 0)
			shp_set(out, i, db, fa || fb);
		else
			shp_set(out, i, AL_DIM_UNKNOWN, fa || fb);
	}
	return true;
}

void shp_format(const struct al_shape *s, char *buf, size_t cap)
{
	/* "[1,8,4096]", "[?...]", a flexible dim starred, "?" unknown, ",..." past
	 * AL_SHAPE_MAX_RANK; cut to cap - 1 bytes. Built without snprintf (~6k
	 * instructions a call in the CLI's process, where libquadmath's printf
	 * hook sends every printf down glibc's slow path; the HTML page formats
	 * one shape per layer). */
	char t[2 + AL_SHAPE_MAX_RANK * 23 + 6];
	size_t len = 0;
	if (!cap)
		return;
	if (!s || s->rank < 0) {
		memcpy(t, "[?...]", 6);
		len = 6;
	} else {
		t[len++] = '[';
		for (int i = 0; i < s->rank; i++) {
			if (i >= AL_SHAPE_MAX_RANK) {
				memcpy(t + len, ",...", 4);
				len += 4;
				break;
			}
			if (i)
				t[len++] = ',';
			int64_t d = s->dims[i];
			if (d < 0) {
				t[len++] = '?';
			} else {
				char dg[20], *e = dg + sizeof dg, *q = e;
				uint64_t u = (uint64_t)d;
				do
					*--q = (char)('0' + u % 10);
				while (u /= 10);
				memcpy(t + len, q, (size_t)(e - q));
				len += (size_t)(e - q);
			}
			if (shp_flex(s, i))
				t[len++] = '*';
		}
		t[len++] = ']';
	}
	len = len < cap - 1 ? len : cap - 1;
	memcpy(buf, t, len);
	buf[len] = 0;
}

void shp_from_ttype(struct al_shape *s, const struct al_ttype *t)
{
	if (!t) {
		shp_unknown(s);
		return;
	}
	if (t->kind != 0 && t->kind != 4) { /* list, tuple, dictionary: no tensor shape */
		shp_rank(s, -1, t->dtype);
		return;
	}
	if (t->rank < 0 || (t->rank > 0 && !t->dims)) {
		shp_rank(s, -1, t->dtype);
		return;
	}
	shp_from(s, t->dims, (size_t)t->rank, t->dtype);
}

/* ================================================================ accessors */

const struct al_shape *ali_node_in_shape(const struct al_node *n, uint32_t i)
{
	const struct al_node_src *src = n ? al_src(n) : NULL;
	if (!src || !src->in_shapes || i >= n->n_inputs)
		return NULL;
	return src->in_shapes[i];
}

void ali_shape_format(const struct al_shape *s, char *buf, size_t cap)
{
	shp_format(s, buf, cap);
}

bool shp_matmul(struct al_shape *o, const struct al_shape *a, const struct al_shape *b, bool ta, bool tb,
		int dtype)
{
	if (!a || !b || a->rank < 1 || b->rank < 1)
		return false;
	struct al_shape A = *a, B = *b;
	bool a1 = a->rank == 1, b1 = b->rank == 1;
	if (a1) {
		shp_rank(&A, 2, a->dtype);
		shp_set(&A, 0, 1, false);
		shp_copy_dim(&A, 1, a, 0);
		ta = false;
	}
	if (b1) {
		shp_rank(&B, 2, b->dtype);
		shp_copy_dim(&B, 0, b, 0);
		shp_set(&B, 1, 1, false);
		tb = false;
	}
	int ar = A.rank, br = B.rank;
	int mi = ta ? ar - 1 : ar - 2, ni = tb ? br - 2 : br - 1;
	struct al_shape ba = A, bb = B, bo;
	ba.rank = ar - 2;
	bb.rank = br - 2;
	if (!shp_broadcast(&ba, &bb, &bo) || bo.rank < 0) {
		shp_rank(o, ar > br ? ar : br, dtype);
		return false;
	}
	int r = bo.rank + 2;
	*o = bo;
	o->rank = r;
	o->dtype = dtype;
	shp_copy_dim(o, r - 2, &A, mi);
	shp_copy_dim(o, r - 1, &B, ni);
	if (a1 && b1) {
		shp_rank(o, 0, dtype);
	} else if (a1) { /* drop the prepended M = 1 */
		shp_copy_dim(o, r - 2, o, r - 1);
		o->rank = r - 1;
	} else if (b1) {
		o->rank = r - 1;
	}
	return true;
}

/* Elements of a python-style slice [b:e:st] of a dim of size d (masks take the
 * whole side). With d unknown it still decides the cases that do not need d;
 * `masked_begin_ok` also decides [:e:st] with e > 0 as ceil(e/st), as
 * coremltools does for ML Programs. */
int64_t shp_slice_count(int64_t d, int64_t b, int64_t e, int64_t st, bool bm, bool em,
			bool masked_begin_ok)
{
	if (st == 0)
		return AL_DIM_UNKNOWN;
	if (d < 0) {
		if (!bm && !em && b >= 0 && e >= b && st > 0)
			return dim_div_ceil(e - b, st);
		if (!bm && !em && b < 0 && e < 0 && b >= e && st < 0 && st != INT64_MIN)
			return dim_div_ceil(b - e, -st);
		if (masked_begin_ok && bm && !em && e > 0 && st > 0)
			return dim_div_ceil(e, st);
		return AL_DIM_UNKNOWN;
	}
	if (st > 0) {
		int64_t lo = bm ? 0 : b < 0 ? (b + d < 0 ? 0 : b + d) : (b > d ? d : b);
		int64_t hi = em ? d : e < 0 ? (e + d < 0 ? 0 : e + d) : (e > d ? d : e);
		return hi > lo ? dim_div_ceil(hi - lo, st) : 0;
	}
	int64_t hi = bm ? d - 1 : b < 0 ? (b + d < 0 ? -1 : b + d) : (b > d - 1 ? d - 1 : b);
	int64_t lo = em ? -1 : e < 0 ? (e + d < 0 ? -1 : e + d) : (e > d - 1 ? d - 1 : e);
	if (st == INT64_MIN)
		return hi > lo ? 1 : 0;
	return hi > lo ? dim_div_ceil(hi - lo, -st) : 0;
}
