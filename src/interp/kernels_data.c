/* SPDX-License-Identifier: MIT */
/* kernels_data.c: data movement kernels: transpose, strided slice, concat /
 * split, the gathers and scatter, pad, cumsum and top-k. Contract: kernels.h.
 *
 * Indices arrive as floats; they are range-checked (NaN included) before any
 * cast to an integer, and a non-integer index is rejected like an out-of-range
 * one. Nothing here allocates: transpose tiles, pad and slice walk odometers,
 * top-k keeps its heap in the output arrays.
 */
#include "kernels.h"
#include "analysis.h"

#include <math.h>
#include <string.h>

/* ================================================================== transpose */

#define TILE 32

void ali_transpose(const float *x, int rank, const int64_t *dims, const int *perm, float *y)
{
	if (rank < 0 || rank > AL_MAX_RANK)
		return;
	size_t total = 1;
	for (int i = 0; i < rank; i++)
		total *= (size_t)dims[i];
	if (total == 0)
		return;
	/* input strides; drop size-1 axes, then merge output neighbours that are
	 * input neighbours too */
	int64_t is[AL_MAX_RANK];
	int64_t s = 1;
	for (int i = rank - 1; i >= 0; i--) {
		is[i] = s;
		s *= dims[i];
	}
	int newax[AL_MAX_RANK];
	int nk = 0;
	for (int i = 0; i < rank; i++)
		newax[i] = dims[i] == 1 ? -1 : nk++;
	int64_t od[AL_MAX_RANK], ist[AL_MAX_RANK];
	int r = 0, last = -2;
	for (int i = 0; i < rank; i++) {
		int a = perm[i];
		if (newax[a] < 0)
			continue;
		if (r > 0 && newax[a] == last + 1) {
			od[r - 1] *= dims[a];
			ist[r - 1] = is[a];
		} else {
			od[r] = dims[a];
			ist[r] = is[a];
			r++;
		}
		last = newax[a];
	}
	if (r <= 1) {
		memcpy(y, x, total * sizeof *y);
		return;
	}
	if (ist[r - 1] == 1) {
		/* rows of the output are contiguous runs of the input */
		int64_t run = od[r - 1];
		int64_t idx[AL_MAX_RANK] = {0}, off = 0;
		for (size_t o = 0; o < total / (size_t)run; o++) {
			memcpy(y, x + off, (size_t)run * sizeof *y);
			y += run;
			for (int ax = r - 2; ax >= 0; ax--) {
				idx[ax]++;
				off += ist[ax];
				if (idx[ax] < od[ax])
					break;
				off -= ist[ax] * od[ax];
				idx[ax] = 0;
			}
		}
		return;
	}
	/* The input's contiguous axis is output axis q != r-1: tile (q, r-1) so
	 * reads and writes both stay within a few cache lines. */
	int q = 0;
	for (int i = 0; i < r; i++)
		if (ist[i] == 1)
			q = i;
	int64_t ost[AL_MAX_RANK];
	s = 1;
	for (int i = r - 1; i >= 0; i--) {
		ost[i] = s;
		s *= od[i];
	}
	int64_t rd[AL_MAX_RANK], rxs[AL_MAX_RANK], rys[AL_MAX_RANK];
	int nr = 0;
	size_t outer = 1;
	for (int i = 0; i < r - 1; i++)
		if (i != q) {
			rd[nr] = od[i];
			rxs[nr] = ist[i];
			rys[nr] = ost[i];
			outer *= (size_t)od[i];
			nr++;
		}
	int64_t nq = od[q], nj = od[r - 1], sq = ost[q], sj = ist[r - 1];
	int64_t idx[AL_MAX_RANK] = {0}, xo = 0, yo = 0;
	for (size_t o = 0; o < outer; o++) {
		for (int64_t q0 = 0; q0 < nq; q0 += TILE) {
			int64_t q1 = q0 + TILE < nq ? q0 + TILE : nq;
			for (int64_t j0 = 0; j0 < nj; j0 += TILE) {
				int64_t j1 = j0 + TILE < nj ? j0 + TILE : nj;
				for (int64_t a = q0; a < q1; a++) {
					const float *restrict xr = x + xo + a;
					float *restrict yr = y + yo + a * sq;
					for (int64_t j = j0; j < j1; j++)
						yr[j] = xr[j * sj];
				}
			}
		}
		for (int ax = nr - 1; ax >= 0; ax--) {
			idx[ax]++;
			xo += rxs[ax];
			yo += rys[ax];
			if (idx[ax] < rd[ax])
				break;
			xo -= rxs[ax] * rd[ax];
			yo -= rys[ax] * rd[ax];
			idx[ax] = 0;
		}
	}
}

/* ================================================================== slice */

void ali_slice(const float *x, int rank, const int64_t *dims, const int64_t *begin,
	      const int64_t *stride, const int64_t *out_dims, float *y)
{
	if (rank < 0 || rank > AL_MAX_RANK)
		return;
	if (rank == 0) {
		y[0] = x[0];
		return;
	}
	int64_t is[AL_MAX_RANK], step[AL_MAX_RANK];
	int64_t s = 1, off = 0;
	size_t total = 1;
	for (int i = rank - 1; i >= 0; i--) {
		is[i] = s;
		s *= dims[i];
		step[i] = stride[i] * is[i];
		off += begin[i] * is[i];
		total *= (size_t)out_dims[i];
	}
	if (total == 0)
		return;
	int64_t n = out_dims[rank - 1], st = step[rank - 1];
	int64_t idx[AL_MAX_RANK] = {0};
	for (size_t o = 0; o < total / (size_t)n; o++) {
		const float *xr = x + off;
		if (st == 1)
			memcpy(y, xr, (size_t)n * sizeof *y);
		else
			for (int64_t j = 0; j < n; j++)
				y[j] = xr[j * st];
		y += n;
		for (int ax = rank - 2; ax >= 0; ax--) {
			idx[ax]++;
			off += step[ax];
			if (idx[ax] < out_dims[ax])
				break;
			off -= step[ax] * out_dims[ax];
			idx[ax] = 0;
		}
	}
}

/* ================================================================== concat / split */

void ali_concat(const float *const *xs, const int64_t *sizes, int n, int64_t outer,
	       int64_t inner, float *y)
{
	for (int64_t o = 0; o < outer; o++)
		for (int k = 0; k < n; k++) {
			size_t len = (size_t)(sizes[k] * inner);
			if (len)
				memcpy(y, xs[k] + (size_t)o * len, len * sizeof *y);
			y += len;
		}
}

void ali_split(const float *x, const int64_t *sizes, int n, int64_t outer, int64_t inner,
	      float *const *ys)
{
	for (int64_t o = 0; o < outer; o++)
		for (int k = 0; k < n; k++) {
			size_t len = (size_t)(sizes[k] * inner);
			if (len)
				memcpy(ys[k] + (size_t)o * len, x, len * sizeof *x);
			x += len;
		}
}

/* ================================================================== gather / scatter */

/* An index as a float -> [0, n); false when NaN, not an integer or out of
 * [-n, n). The range test comes first: casting NaN or a huge float is UB. */
static bool to_index(float v, int64_t n, int64_t *out)
{
	if (!(v >= -(double)n && v < (double)n) || v != floorf(v))
		return false;
	int64_t i = (int64_t)v;
	*out = i < 0 ? i + n : i;
	return true;
}

bool ali_gather(const float *x, int64_t outer, int64_t axis, int64_t inner, const float *idx,
	       int64_t n_idx, float *y)
{
	for (int64_t j = 0; j < n_idx; j++) {
		int64_t a;
		if (!to_index(idx[j], axis, &a))
			return false;
		for (int64_t o = 0; o < outer; o++)
			memcpy(y + (o * n_idx + j) * inner, x + (o * axis + a) * inner,
			       (size_t)inner * sizeof *y);
	}
	return true;
}

bool ali_gather_along_axis(const float *x, int64_t outer, int64_t axis, int64_t inner,
			  const float *idx, int64_t n, float *y)
{
	for (int64_t o = 0; o < outer; o++)
		for (int64_t j = 0; j < n; j++) {
			const float *ir = idx + (o * n + j) * inner;
			float *yr = y + (o * n + j) * inner;
			const float *xo = x + o * axis * inner;
			for (int64_t i = 0; i < inner; i++) {
				int64_t a;
				if (!to_index(ir[i], axis, &a))
					return false;
				yr[i] = xo[a * inner + i];
			}
		}
	return true;
}

bool ali_gather_nd(const float *x, int rank, const int64_t *dims, const float *idx, int64_t m,
		  int k, float *y)
{
	if (k < 0 || k > rank)
		return false;
	int64_t slice = 1;
	for (int i = k; i < rank; i++)
		slice *= dims[i];
	for (int64_t r = 0; r < m; r++) {
		int64_t off = 0;
		for (int j = 0; j < k; j++) {
			int64_t c;
			if (!to_index(idx[r * k + j], dims[j], &c))
				return false;
			off = off * dims[j] + c;
		}
		memcpy(y + r * slice, x + off * slice, (size_t)slice * sizeof *y);
	}
	return true;
}

bool ali_scatter(float *y, int64_t outer, int64_t axis, int64_t inner, const float *idx,
		int64_t n_idx, const float *upd, enum al_binop op)
{
	for (int64_t j = 0; j < n_idx; j++) {
		int64_t a;
		if (!to_index(idx[j], axis, &a))
			return false;
		for (int64_t o = 0; o < outer; o++) {
			float *yr = y + (o * axis + a) * inner;
			const float *ur = upd + (o * n_idx + j) * inner;
			switch (op) {
			case AL_BIN_ADD:
				for (int64_t i = 0; i < inner; i++)
					yr[i] += ur[i];
				break;
			case AL_BIN_SUB:
				for (int64_t i = 0; i < inner; i++)
					yr[i] -= ur[i];
				break;
			case AL_BIN_MUL:
				for (int64_t i = 0; i < inner; i++)
					yr[i] *= ur[i];
				break;
			case AL_BIN_DIV:
				for (int64_t i = 0; i < inner; i++)
					yr[i] /= ur[i];
				break;
			case AL_BIN_MAX:
				for (int64_t i = 0; i < inner; i++)
					yr[i] = ur[i] > yr[i] || isnan(ur[i]) ? ur[i] : yr[i];
				break;
			case AL_BIN_MIN:
				for (int64_t i = 0; i < inner; i++)
					yr[i] = ur[i] < yr[i] || isnan(ur[i]) ? ur[i] : yr[i];
				break;
			default: /* AL_BIN_COUNT: plain update */
				memcpy(yr, ur, (size_t)inner * sizeof *yr);
				break;
			}
		}
	}
	return true;
}

/* ================================================================== pad */

/* Source coordinate of padded coordinate s (already shifted by -before) in an
 * axis of size d, or -1 for the constant value. */
static int64_t pad_src(int64_t s, int64_t d, enum al_pad_mode mode)
{
	if (s >= 0 && s < d)
		return s;
	if (d <= 0 || mode == AL_PAD_CONSTANT)
		return -1;
	if (mode == AL_PAD_REPLICATE)
		return s < 0 ? 0 : d - 1;
	if (d == 1)
		return 0;
	/* reflect (edge not repeated): period 2(d-1), folded */
	int64_t p = 2 * (d - 1);
	int64_t m = s % p;
	if (m < 0)
		m += p;
	return m >= d ? p - m : m;
}

void ali_pad(const float *x, int rank, const int64_t *dims, const int64_t *before,
	    const int64_t *after, enum al_pad_mode mode, float value, float *y)
{
	if (rank < 0 || rank > AL_MAX_RANK)
		return;
	if (rank == 0) {
		y[0] = x[0];
		return;
	}
	int64_t od[AL_MAX_RANK], is[AL_MAX_RANK];
	int64_t s = 1;
	size_t total = 1;
	for (int i = rank - 1; i >= 0; i--) {
		od[i] = dims[i] + before[i] + after[i];
		is[i] = s;
		s *= dims[i];
		total *= (size_t)(od[i] > 0 ? od[i] : 0);
	}
	if (total == 0)
		return;
	int64_t n = od[rank - 1], d = dims[rank - 1], b = before[rank - 1];
	/* columns j with j - b in [0, d): a straight copy */
	int64_t lo = b > 0 ? b : 0, hi = d + b < n ? d + b : n;
	if (hi < lo)
		hi = lo;
	int64_t idx[AL_MAX_RANK] = {0};
	for (size_t o = 0; o < total / (size_t)n; o++) {
		int64_t off = 0;
		bool blank = false;
		for (int ax = 0; ax < rank - 1 && !blank; ax++) {
			int64_t c = pad_src(idx[ax] - before[ax], dims[ax], mode);
			if (c < 0)
				blank = true;
			else
				off += c * is[ax];
		}
		if (blank) {
			for (int64_t j = 0; j < n; j++)
				y[j] = value;
		} else {
			const float *xr = x + off;
			for (int64_t j = 0; j < lo; j++) {
				int64_t c = pad_src(j - b, d, mode);
				y[j] = c < 0 ? value : xr[c];
			}
			if (hi > lo)
				memcpy(y + lo, xr + (lo - b), (size_t)(hi - lo) * sizeof *y);
			for (int64_t j = hi; j < n; j++) {
				int64_t c = pad_src(j - b, d, mode);
				y[j] = c < 0 ? value : xr[c];
			}
		}
		y += n;
		for (int ax = rank - 2; ax >= 0; ax--) {
			if (++idx[ax] < od[ax])
				break;
			idx[ax] = 0;
		}
	}
}

/* ================================================================== cumsum */

#define LANES 64

void ali_cumsum(const float *x, int64_t outer, int64_t axis, int64_t inner, bool exclusive,
	       bool reverse, float *y)
{
	double acc[LANES];
	for (int64_t o = 0; o < outer; o++)
		for (int64_t c0 = 0; c0 < inner; c0 += LANES) {
			int n = inner - c0 < LANES ? (int)(inner - c0) : LANES;
			for (int l = 0; l < n; l++)
				acc[l] = 0.0;
			for (int64_t t = 0; t < axis; t++) {
				int64_t a = reverse ? axis - 1 - t : t;
				const float *xr = x + (o * axis + a) * inner + c0;
				float *yr = y + (o * axis + a) * inner + c0;
				for (int l = 0; l < n; l++) {
					double v = xr[l];
					if (exclusive) {
						yr[l] = (float)acc[l];
						acc[l] += v;
					} else {
						acc[l] += v;
						yr[l] = (float)acc[l];
					}
				}
			}
		}
}

/* ================================================================== top-k */

/* Does (va, ia) come before (vb, ib) in the output order? NaN ranks above
 * every number (as in PyTorch); equal values: lower index first. */
static bool tk_before(float va, float ia, float vb, float ib, bool desc)
{
	bool an = isnan(va), bn = isnan(vb);
	if (an || bn) {
		if (an && bn)
			return ia < ib;
		return desc ? an : bn;
	}
	if (va != vb)
		return desc ? va > vb : va < vb;
	return ia < ib;
}

/* Heap whose root is the element that comes last; slots strided by st. */
static void tk_sift_down(float *v, float *ix, int64_t st, int64_t n, int64_t i, bool desc)
{
	for (;;) {
		int64_t l = 2 * i + 1, r = l + 1, w = i;
		if (l < n && tk_before(v[w * st], ix[w * st], v[l * st], ix[l * st], desc))
			w = l;
		if (r < n && tk_before(v[w * st], ix[w * st], v[r * st], ix[r * st], desc))
			w = r;
		if (w == i)
			return;
		float tv = v[i * st], ti = ix[i * st];
		v[i * st] = v[w * st];
		ix[i * st] = ix[w * st];
		v[w * st] = tv;
		ix[w * st] = ti;
		i = w;
	}
}

void ali_topk(const float *x, int64_t outer, int64_t axis, int64_t inner, int64_t k,
	     bool descending, float *values, float *indices)
{
	int64_t kk = k < axis ? k : axis;
	if (kk < 0)
		kk = 0;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			const float *xc = x + o * axis * inner + i;
			float *v = values + o * k * inner + i, *ix = indices + o * k * inner + i;
			int64_t n = 0;
			for (int64_t a = 0; a < axis; a++) {
				float xv = xc[a * inner], xi = (float)a;
				if (n < kk) {
					/* push and sift up */
					int64_t c = n++;
					v[c * inner] = xv;
					ix[c * inner] = xi;
					while (c > 0) {
						int64_t p = (c - 1) / 2;
						if (!tk_before(v[p * inner], ix[p * inner], v[c * inner],
							       ix[c * inner], descending))
							break;
						float tv = v[p * inner], ti = ix[p * inner];
						v[p * inner] = v[c * inner];
						ix[p * inner] = ix[c * inner];
						v[c * inner] = tv;
						ix[c * inner] = ti;
						c = p;
					}
				} else if (kk > 0 && tk_before(xv, xi, v[0], ix[0], descending)) {
					v[0] = xv;
					ix[0] = xi;
					tk_sift_down(v, ix, inner, kk, 0, descending);
				}
			}
			/* heap sort: move the last-ranked to the end each time */
			for (int64_t m = kk - 1; m > 0; m--) {
				float tv = v[0], ti = ix[0];
				v[0] = v[m * inner];
				ix[0] = ix[m * inner];
				v[m * inner] = tv;
				ix[m * inner] = ti;
				tk_sift_down(v, ix, inner, m, 0, descending);
			}
			for (int64_t j = kk; j < k; j++) {
				v[j * inner] = NAN;
				ix[j * inner] = -1.0f;
			}
		}
}
