/* SPDX-License-Identifier: MIT */
/* interp_mil_data.c: the ML Program ops that move data rather than compute:
 * reshape / transpose / expand_dims / squeeze / flatten2d, concat / split /
 * stack, slice_by_index / slice_by_size / slice_update / reverse /
 * reverse_sequence / crop, gather / gather_along_axis / gather_nd and the
 * scatters, tile / pad / cumsum / fill / fill_like / range_1d / shape /
 * identity / topk / argsort / one_hot / band_part and the depth <-> space ops.
 *
 * Semantics follow the MIL op definitions (coremltools ops/defs iOS15..iOS18);
 * slices follow Python's (coremltools' solve_slice_by_index_*). Every index and
 * size is checked against the input's shape before it is used; the loops over
 * memory are in kernels.c where one fits.
 */
#include "interp_mil.h"

#include <math.h>
#include <string.h>

static struct al_tensor *copy_of(struct mx *c, const struct al_tensor *d);
static struct al_tensor *copy_or_take(struct mx *c, const char *param, const struct al_tensor *d);

/* ================================================================ shape ops */

enum al_status mx_reshape(struct mx *c, int arg)
{
	(void)arg;
	int64_t s[MX_MAXV];
	size_t ns;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_ints(c, "shape", s, MX_MAXV, &ns))
		return c->st;
	if (!mx_present(c, "shape"))
		return mx_fail(c, AL_E_FORMAT, "input 'shape' is missing");
	if (ns > AL_TENSOR_MAX_RANK)
		return mx_fail(c, AL_E_UNSUPPORTED, "a result of rank %zu", ns);
	int infer = -1;
	int64_t known = 1;
	for (size_t i = 0; i < ns; i++) {
		if (s[i] == -1) {
			if (infer >= 0)
				return mx_fail(c, AL_E_FORMAT, "shape has more than one -1");
			infer = (int)i;
			continue;
		}
		if (s[i] == 0 && ns == (size_t)x->rank)
			s[i] = x->dims[i];
		if (s[i] < 0 || (s[i] && known > INT64_MAX / s[i]))
			return mx_fail(c, AL_E_FORMAT, "shape holds %lld", (long long)s[i]);
		known *= s[i];
	}
	if (infer >= 0) {
		if (!known || (int64_t)x->n % known)
			return mx_fail(c, AL_E_FORMAT, "cannot infer the -1 of shape for %zu values", x->n);
		s[infer] = (int64_t)x->n / known;
	}
	mx_reshaped(c, 0, x, (int)ns, s);
	return c->st;
}

enum al_status mx_transpose(struct mx *c, int arg)
{
	(void)arg;
	int64_t p[MX_MAXV], dims[AL_TENSOR_MAX_RANK];
	int perm[AL_TENSOR_MAX_RANK];
	size_t np;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_ints(c, "perm", p, MX_MAXV, &np))
		return c->st;
	if (np != (size_t)x->rank)
		return mx_fail(c, AL_E_FORMAT, "perm has %zu values for rank %d", np, x->rank);
	unsigned seen = 0;
	for (int i = 0; i < x->rank; i++) {
		int a = mx_axis(c, p[i], x->rank, 0);
		if (a < 0)
			return c->st;
		if (seen >> a & 1)
			return mx_fail(c, AL_E_FORMAT, "perm repeats axis %d", a);
		seen |= 1u << a;
		perm[i] = a;
		dims[i] = x->dims[a];
	}
	struct al_tensor *y = mx_alloc(c, 0, x->dtype, x->rank, dims);
	if (y && x->n)
		ali_transpose(x->f, x->rank, x->dims, perm, y->f);
	return c->st;
}

enum al_status mx_expand_dims(struct mx *c, int arg)
{
	(void)arg;
	int64_t ax[MX_MAXV], dims[AL_TENSOR_MAX_RANK];
	size_t na;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_ints(c, "axes", ax, MX_MAXV, &na))
		return c->st;
	int r = x->rank + (int)na;
	if (r > AL_TENSOR_MAX_RANK)
		return mx_fail(c, AL_E_UNSUPPORTED, "a result of rank %d", r);
	unsigned m = 0;
	for (size_t i = 0; i < na; i++) {
		int a = mx_axis(c, ax[i], r, 0);
		if (a < 0)
			return c->st;
		if (m >> a & 1)
			return mx_fail(c, AL_E_FORMAT, "axes repeat %d", a);
		m |= 1u << a;
	}
	for (int i = 0, j = 0; i < r; i++)
		dims[i] = m >> i & 1 ? 1 : x->dims[j++];
	mx_reshaped(c, 0, x, r, dims);
	return c->st;
}

enum al_status mx_squeeze(struct mx *c, int arg)
{
	(void)arg;
	int64_t ax[MX_MAXV], dims[AL_TENSOR_MAX_RANK];
	size_t na;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_ints(c, "axes", ax, MX_MAXV, &na))
		return c->st;
	unsigned m = 0;
	if (!mx_present(c, "axes"))
		for (int i = 0; i < x->rank; i++)
			m |= (unsigned)(x->dims[i] == 1) << i;
	for (size_t i = 0; i < na; i++) {
		int a = mx_axis(c, ax[i], x->rank, 0);
		if (a < 0)
			return c->st;
		if (x->dims[a] != 1)
			return mx_fail(c, AL_E_FORMAT, "squeezes axis %d of size %lld", a,
				       (long long)x->dims[a]);
		m |= 1u << a;
	}
	int r = mx_reduced_dims(x, m, false, dims);
	mx_reshaped(c, 0, x, r, dims);
	return c->st;
}

enum al_status mx_flatten2d(struct mx *c, int arg)
{
	(void)arg;
	int64_t ax;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_int(c, "axis", 1, &ax))
		return c->st;
	int a = mx_axis(c, ax, x->rank, 1);
	if (a < 0)
		return c->st;
	int64_t dims[2] = {mx_prod(x->dims, 0, a), mx_prod(x->dims, a, x->rank)};
	mx_reshaped(c, 0, x, 2, dims);
	return c->st;
}

/* The tensors of a variadic parameter; scalars count as [1] (concat of shape
 * values). Returns the count, 0 on failure. */
static uint32_t variadic(struct mx *c, const char *param, struct al_tensor ***out)
{
	uint32_t k = mx_count(c, param);
	*out = NULL;
	if (!k) {
		mx_fail(c, AL_E_FORMAT, "'%s' is empty", param);
		return 0;
	}
	struct al_tensor **v = ali_calloc(k, sizeof *v);
	if (!v) {
		mx_fail(c, AL_E_NOMEM, "out of memory");
		return 0;
	}
	for (uint32_t i = 0; i < k; i++) {
		v[i] = mx_in_k(c, param, i);
		if (v[i] && (v[i]->kind != AL_TK_TENSOR || !v[i]->f))
			mx_fail(c, AL_E_FORMAT, "%s[%u] is not a numeric tensor", param, i);
		if (!v[i] || c->st != AL_OK) {
			ali_free(v);
			if (c->st == AL_OK)
				mx_fail(c, AL_E_FORMAT, "%s[%u] is not bound", param, i);
			return 0;
		}
	}
	*out = v;
	return k;
}

enum al_status mx_concat(struct mx *c, int arg)
{
	(void)arg;
	int64_t ax;
	bool inter;
	struct al_tensor **v;
	if (!mx_int(c, "axis", INT64_MIN, &ax) || !mx_bool(c, "interleave", false, &inter))
		return c->st;
	if (ax == INT64_MIN)
		return mx_fail(c, AL_E_FORMAT, "parameter 'axis' is missing");
	if (inter)
		return mx_unsupported(c, "interleave", "true");
	uint32_t k = variadic(c, "values", &v);
	if (!k)
		return c->st;
	const struct al_tensor *f = v[0];
	int rank = f->rank ? f->rank : 1;
	int64_t one = 1;
	const int64_t *fd = f->rank ? f->dims : &one;
	int a = mx_axis(c, ax, rank, 0);
	int64_t *sizes = ali_calloc(k, sizeof *sizes);
	const float **xs = ali_calloc(k, sizeof *xs);
	if (a >= 0 && (!sizes || !xs))
		mx_fail(c, AL_E_NOMEM, "out of memory");
	int64_t total = 0, dims[AL_TENSOR_MAX_RANK];
	for (uint32_t i = 0; i < k && c->st == AL_OK; i++) {
		int ri = v[i]->rank ? v[i]->rank : 1;
		const int64_t *di = v[i]->rank ? v[i]->dims : &one;
		bool ok = ri == rank;
		for (int d = 0; ok && d < rank; d++)
			ok = d == a || di[d] == fd[d];
		if (!ok) {
			mx_fail(c, AL_E_FORMAT, "values[%u] does not match values[0] off the axis", i);
			break;
		}
		sizes[i] = di[a];
		xs[i] = v[i]->f;
		total += di[a];
	}
	if (c->st == AL_OK) {
		memcpy(dims, fd, sizeof dims[0] * (size_t)rank);
		dims[a] = total;
		struct al_tensor *y = mx_alloc(c, 0, f->dtype, rank, dims);
		if (y && y->n)
			ali_concat(xs, sizes, (int)k, mx_prod(fd, 0, a), mx_prod(fd, a + 1, rank), y->f);
	}
	ali_free(sizes);
	ali_free(xs);
	ali_free(v);
	return c->st;
}

enum al_status mx_stack(struct mx *c, int arg)
{
	(void)arg;
	int64_t ax;
	struct al_tensor **v;
	if (!mx_int(c, "axis", INT64_MIN, &ax))
		return c->st;
	if (ax == INT64_MIN)
		return mx_fail(c, AL_E_FORMAT, "parameter 'axis' is missing");
	uint32_t k = variadic(c, "values", &v);
	if (!k)
		return c->st;
	const struct al_tensor *f = v[0];
	int a = mx_axis(c, ax, f->rank, 1);
	int64_t *sizes = ali_calloc(k, sizeof *sizes);
	const float **xs = ali_calloc(k, sizeof *xs);
	if (a >= 0 && (!sizes || !xs))
		mx_fail(c, AL_E_NOMEM, "out of memory");
	if (a >= 0 && f->rank + 1 > AL_TENSOR_MAX_RANK)
		mx_fail(c, AL_E_UNSUPPORTED, "a result of rank %d", f->rank + 1);
	for (uint32_t i = 0; i < k && c->st == AL_OK; i++) {
		if (!mx_same_dims(v[i], f->rank, f->dims))
			mx_fail(c, AL_E_FORMAT, "values[%u] differs in shape from values[0]", i);
		sizes[i] = 1;
		xs[i] = v[i]->f;
	}
	if (c->st == AL_OK) {
		int64_t dims[AL_TENSOR_MAX_RANK];
		for (int i = 0, j = 0; i <= f->rank; i++)
			dims[i] = i == a ? (int64_t)k : f->dims[j++];
		struct al_tensor *y = mx_alloc(c, 0, f->dtype, f->rank + 1, dims);
		if (y && y->n)
			ali_concat(xs, sizes, (int)k, mx_prod(f->dims, 0, a), mx_prod(f->dims, a, f->rank),
				  y->f);
	}
	ali_free(sizes);
	ali_free(xs);
	ali_free(v);
	return c->st;
}

enum al_status mx_split(struct mx *c, int arg)
{
	(void)arg;
	int64_t ax, ns, sz[MX_MAXV];
	size_t nsz;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_int(c, "axis", INT64_MIN, &ax) || !mx_int(c, "num_splits", 0, &ns))
		return c->st;
	if (ax == INT64_MIN)
		return mx_fail(c, AL_E_FORMAT, "parameter 'axis' is missing");
	int a = mx_axis(c, ax, x->rank, 0);
	if (a < 0)
		return c->st;
	uint32_t k = c->n_out;
	int64_t *sizes = ali_calloc(k, sizeof *sizes);
	float **ys = ali_calloc(k, sizeof *ys);
	if (!sizes || !ys) {
		ali_free(sizes);
		ali_free(ys);
		return mx_fail(c, AL_E_NOMEM, "out of memory");
	}
	int64_t d = x->dims[a], sum = 0;
	if (mx_present(c, "split_sizes")) {
		if (k > MX_MAXV || !mx_ints(c, "split_sizes", sz, MX_MAXV, &nsz) || nsz != k) {
			if (c->st == AL_OK)
				mx_fail(c, AL_E_FORMAT, "split_sizes must have one size per output (%u)", k);
		} else {
			for (uint32_t i = 0; i < k; i++) {
				if (sz[i] < 0 || sz[i] > d)
					break;
				sizes[i] = sz[i];
				sum += sz[i];
			}
		}
	} else if ((ns && ns != (int64_t)k) || d % (int64_t)k) {
		mx_fail(c, AL_E_FORMAT, "cannot split %lld into %u equal parts", (long long)d, k);
	} else {
		for (uint32_t i = 0; i < k; i++)
			sizes[i] = d / (int64_t)k;
		sum = d;
	}
	if (c->st == AL_OK && sum != d)
		mx_fail(c, AL_E_FORMAT, "split sizes do not add up to %lld", (long long)d);
	for (uint32_t i = 0; i < k && c->st == AL_OK; i++) {
		int64_t dims[AL_TENSOR_MAX_RANK];
		memcpy(dims, x->dims, sizeof dims[0] * (size_t)x->rank);
		dims[a] = sizes[i];
		struct al_tensor *y = mx_alloc(c, i, x->dtype, x->rank, dims);
		if (y)
			ys[i] = y->f;
	}
	if (c->st == AL_OK && x->n)
		ali_split(x->f, sizes, (int)k, mx_prod(x->dims, 0, a), mx_prod(x->dims, a + 1, x->rank), ys);
	ali_free(sizes);
	ali_free(ys);
	return c->st;
}

/* Python slice x[b:e:s] of a dim of size d (PySlice_AdjustIndices): first index
 * and count. bm / em take the whole side. */
static int64_t pyslice(int64_t d, int64_t b, int64_t e, int64_t s, bool bm, bool em, int64_t *first)
{
	int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? d : d - 1;
	if (bm) {
		b = s > 0 ? 0 : d - 1;
	} else {
		if (b < 0)
			b = b < -d ? lo : b + d;
		b = b < lo ? lo : b > hi ? hi : b;
	}
	if (em) {
		e = s > 0 ? d : -1;
	} else {
		if (e < 0)
			e = e < -d ? lo : e + d;
		e = e < lo ? lo : e > hi ? hi : e;
	}
	*first = b;
	if (s > 0)
		return e > b ? (e - b - 1) / s + 1 : 0;
	return b > e ? (b - e - 1) / -s + 1 : 0;
}

/* One axis' vector parameter: rank values, or absent (all `def`). */
static bool axis_vec(struct mx *c, const char *param, int rank, int64_t def, int64_t *v)
{
	size_t n;
	if (!mx_ints(c, param, v, MX_MAXV, &n))
		return false;
	if (n == 0 && !mx_present(c, param)) {
		for (int i = 0; i < rank; i++)
			v[i] = def;
		return true;
	}
	if (n != (size_t)rank) {
		mx_fail(c, AL_E_FORMAT, "'%s' has %zu values for rank %d", param, n, rank);
		return false;
	}
	return true;
}

/* The slice_by_index parameters of x as per-axis first index, stride and
 * count, and the result dims (squeezed axes dropped). */
static bool slice_plan(struct mx *c, const struct al_tensor *x, int64_t *first, int64_t *stride,
		       int64_t *cnt, int64_t *dims, int *ro)
{
	int64_t b[MX_MAXV], e[MX_MAXV], s[MX_MAXV], bm[MX_MAXV], em[MX_MAXV], sq[MX_MAXV];
	int r = x->rank;
	if (!axis_vec(c, "begin", r, 0, b) || !axis_vec(c, "end", r, 0, e) ||
	    !axis_vec(c, "stride", r, 1, s) || !axis_vec(c, "begin_mask", r, 0, bm) ||
	    !axis_vec(c, "end_mask", r, 0, em) || !axis_vec(c, "squeeze_mask", r, 0, sq))
		return false;
	if (!mx_present(c, "begin") || !mx_present(c, "end"))
		return mx_fail(c, AL_E_FORMAT, "begin and end are required"), false;
	*ro = 0;
	for (int i = 0; i < r; i++) {
		int64_t d = x->dims[i];
		if (s[i] == 0)
			return mx_fail(c, AL_E_FORMAT, "stride 0 on axis %d", i), false;
		if (sq[i]) { /* a pure index at begin */
			int64_t at = bm[i] ? (s[i] > 0 ? 0 : d - 1) : b[i] < 0 ? b[i] + d : b[i];
			if (at < 0 || at >= d)
				return mx_fail(c, AL_E_FORMAT, "index %lld is out of range for axis %d of "
					       "size %lld", (long long)b[i], i, (long long)d), false;
			first[i] = at, stride[i] = 1, cnt[i] = 1;
			continue;
		}
		cnt[i] = pyslice(d, b[i], e[i], s[i], bm[i] != 0, em[i] != 0, &first[i]);
		stride[i] = s[i];
		dims[(*ro)++] = cnt[i];
		if (!cnt[i])
			first[i] = 0;
	}
	return true;
}

enum al_status mx_slice_by_index(struct mx *c, int arg)
{
	(void)arg;
	int64_t first[AL_TENSOR_MAX_RANK], stride[AL_TENSOR_MAX_RANK], cnt[AL_TENSOR_MAX_RANK];
	int64_t dims[AL_TENSOR_MAX_RANK];
	int ro;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !slice_plan(c, x, first, stride, cnt, dims, &ro))
		return c->st;
	struct al_tensor *y = mx_alloc(c, 0, x->dtype, ro, dims);
	if (y && y->n && x->n)
		ali_slice(x->f, x->rank, x->dims, first, stride, cnt, y->f);
	return c->st;
}

/* slice_update (iOS18): x with the slice_by_index region replaced by update. */
enum al_status mx_slice_update(struct mx *c, int arg)
{
	(void)arg;
	int64_t first[AL_TENSOR_MAX_RANK], stride[AL_TENSOR_MAX_RANK], cnt[AL_TENSOR_MAX_RANK];
	int64_t dims[AL_TENSOR_MAX_RANK], idx[AL_TENSOR_MAX_RANK] = {0}, xs[AL_TENSOR_MAX_RANK];
	int ro;
	struct al_tensor *x = mx_req(c, "x"), *u = x ? mx_req(c, "update") : NULL;
	if (!u || !slice_plan(c, x, first, stride, cnt, dims, &ro))
		return c->st;
	if (x->rank == 0)
		return mx_fail(c, AL_E_FORMAT, "x must have rank 1 or more");
	if (!mx_same_dims(u, ro, dims))
		return mx_fail(c, AL_E_FORMAT, "update does not have the shape of the slice");
	struct al_tensor *y = copy_or_take(c, "x", x);
	if (!y || !u->n)
		return c->st;
	xs[x->rank - 1] = 1;
	for (int i = x->rank - 2; i >= 0; i--)
		xs[i] = xs[i + 1] * x->dims[i + 1];
	for (size_t k = 0; k < u->n; k++) {
		int64_t off = 0;
		for (int i = 0; i < x->rank; i++)
			off += (first[i] + idx[i] * stride[i]) * xs[i];
		y->f[off] = u->f[k];
		for (int i = x->rank - 1; i >= 0; i--) {
			if (++idx[i] < cnt[i])
				break;
			idx[i] = 0;
		}
	}
	return AL_OK;
}

/* reverse_sequence: along seq_axis, the first lengths[b] elements of each
 * batch_axis slice b reversed. */
enum al_status mx_reverse_sequence(struct mx *c, int arg)
{
	(void)arg;
	int64_t sa, ba;
	struct al_tensor *x = mx_req(c, "x"), *len = x ? mx_req(c, "lengths") : NULL;
	if (!len || !mx_int(c, "seq_axis", 0, &sa) || !mx_int(c, "batch_axis", 0, &ba))
		return c->st;
	int s = mx_axis(c, sa, x->rank, 0), b = s >= 0 ? mx_axis(c, ba, x->rank, 0) : -1;
	if (b < 0)
		return c->st;
	if (s == b || len->n != (size_t)x->dims[b])
		return mx_fail(c, AL_E_FORMAT, "lengths must hold one value per batch and the axes differ");
	struct al_tensor *y = copy_of(c, x);
	if (!y || !x->n)
		return c->st;
	int64_t xs[AL_TENSOR_MAX_RANK], idx[AL_TENSOR_MAX_RANK] = {0};
	xs[x->rank - 1] = 1;
	for (int i = x->rank - 2; i >= 0; i--)
		xs[i] = xs[i + 1] * x->dims[i + 1];
	for (size_t k = 0; k < x->n; k++) {
		int64_t L;
		if (!mx_f2i(len->f[idx[b]], &L) || L < 0 || L > x->dims[s])
			return mx_fail(c, AL_E_FORMAT, "length %g is out of range", (double)len->f[idx[b]]);
		if (idx[s] < L)
			y->f[k] = x->f[(int64_t)k + (L - 1 - 2 * idx[s]) * xs[s]];
		for (int i = x->rank - 1; i >= 0; i--) {
			if (++idx[i] < x->dims[i])
				break;
			idx[i] = 0;
		}
	}
	return AL_OK;
}

enum al_status mx_slice_by_size(struct mx *c, int arg)
{
	(void)arg;
	int64_t b[MX_MAXV], sz[MX_MAXV], one[AL_TENSOR_MAX_RANK];
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !axis_vec(c, "begin", x->rank, 0, b) || !axis_vec(c, "size", x->rank, -1, sz))
		return c->st;
	for (int i = 0; i < x->rank; i++) {
		int64_t d = x->dims[i];
		if (b[i] < 0)
			b[i] += d;
		if (sz[i] == -1)
			sz[i] = d - b[i];
		if (b[i] < 0 || b[i] > d || sz[i] < 0 || sz[i] > d - b[i])
			return mx_fail(c, AL_E_FORMAT, "begin %lld size %lld is out of range for axis %d "
				       "of size %lld", (long long)b[i], (long long)sz[i], i, (long long)d);
		one[i] = 1;
	}
	struct al_tensor *y = mx_alloc(c, 0, x->dtype, x->rank, sz);
	if (y && y->n)
		ali_slice(x->f, x->rank, x->dims, b, one, sz, y->f);
	return c->st;
}

enum al_status mx_reverse(struct mx *c, int arg)
{
	(void)arg;
	int64_t ax[MX_MAXV], first[AL_TENSOR_MAX_RANK], stride[AL_TENSOR_MAX_RANK];
	size_t na;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_ints(c, "axes", ax, MX_MAXV, &na))
		return c->st;
	unsigned m = mx_present(c, "axes") ? 0 : ~0u;
	for (size_t i = 0; i < na; i++) {
		int a = mx_axis(c, ax[i], x->rank, 0);
		if (a < 0)
			return c->st;
		m |= 1u << a;
	}
	for (int i = 0; i < x->rank; i++) {
		bool rev = (m >> i & 1) && x->dims[i] > 0;
		first[i] = rev ? x->dims[i] - 1 : 0;
		stride[i] = rev ? -1 : 1;
	}
	struct al_tensor *y = mx_alloc(c, 0, x->dtype, x->rank, x->dims);
	if (y && x->n)
		ali_slice(x->f, x->rank, x->dims, first, stride, x->dims, y->f);
	return c->st;
}

enum al_status mx_crop(struct mx *c, int arg)
{
	(void)arg;
	int64_t h[MX_MAXV], w[MX_MAXV], first[AL_TENSOR_MAX_RANK], one[AL_TENSOR_MAX_RANK];
	int64_t dims[AL_TENSOR_MAX_RANK];
	size_t nh, nw;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_ints(c, "crop_height", h, MX_MAXV, &nh) || !mx_ints(c, "crop_width", w, MX_MAXV, &nw))
		return c->st;
	if (x->rank < 2 || nh != 2 || nw != 2)
		return mx_fail(c, AL_E_FORMAT, "crop needs rank >= 2 and two crop values per axis");
	memcpy(dims, x->dims, sizeof dims[0] * (size_t)x->rank);
	for (int i = 0; i < x->rank; i++)
		first[i] = 0, one[i] = 1;
	const int64_t *cr[2] = {h, w};
	for (int k = 0; k < 2; k++) {
		int i = x->rank - 2 + k;
		if (cr[k][0] < 0 || cr[k][1] < 0 || cr[k][0] > x->dims[i] - cr[k][1])
			return mx_fail(c, AL_E_FORMAT, "crops more than axis %d holds", i);
		first[i] = cr[k][0];
		dims[i] = x->dims[i] - cr[k][0] - cr[k][1];
	}
	struct al_tensor *y = mx_alloc(c, 0, x->dtype, x->rank, dims);
	if (y && y->n)
		ali_slice(x->f, x->rank, x->dims, first, one, dims, y->f);
	return c->st;
}

/* ================================================================ gather / scatter */

enum al_status mx_gather(struct mx *c, int arg)
{
	(void)arg;
	int64_t ax, bd, dims[AL_TENSOR_MAX_RANK];
	struct al_tensor *x = mx_req(c, "x"), *idx = x ? mx_req(c, "indices") : NULL;
	if (!idx || !mx_int(c, "axis", 0, &ax) || !mx_int(c, "batch_dims", 0, &bd))
		return c->st;
	if (bd != 0)
		return mx_fail(c, AL_E_UNSUPPORTED, "batch_dims %lld is not supported by the interpreter",
			       (long long)bd);
	int a = mx_axis(c, ax, x->rank, 0);
	if (a < 0)
		return c->st;
	int r = x->rank - 1 + idx->rank, k = 0;
	if (r > AL_TENSOR_MAX_RANK)
		return mx_fail(c, AL_E_UNSUPPORTED, "a result of rank %d", r);
	for (int i = 0; i < a; i++)
		dims[k++] = x->dims[i];
	for (int i = 0; i < idx->rank; i++)
		dims[k++] = idx->dims[i];
	for (int i = a + 1; i < x->rank; i++)
		dims[k++] = x->dims[i];
	struct al_tensor *y = mx_alloc(c, 0, x->dtype, r, dims);
	if (y && y->n &&
	    !ali_gather(x->f, mx_prod(x->dims, 0, a), x->dims[a], mx_prod(x->dims, a + 1, x->rank), idx->f,
		       (int64_t)idx->n, y->f))
		mx_fail(c, AL_E_FORMAT, "an index is out of range for axis %d of size %lld", a,
			(long long)x->dims[a]);
	return c->st;
}

/* x and indices of one rank, equal off `axis`. */
static int along_axis(struct mx *c, const struct al_tensor *x, const struct al_tensor *idx)
{
	int64_t ax;
	if (!mx_int(c, "axis", 0, &ax))
		return -1;
	int a = mx_axis(c, ax, x->rank, 0);
	if (a < 0)
		return -1;
	bool ok = idx->rank == x->rank;
	for (int i = 0; ok && i < x->rank; i++)
		ok = i == a || idx->dims[i] == x->dims[i];
	if (!ok) {
		mx_fail(c, AL_E_FORMAT, "indices must have x's shape off axis %d", a);
		return -1;
	}
	return a;
}

enum al_status mx_gather_along_axis(struct mx *c, int arg)
{
	(void)arg;
	struct al_tensor *x = mx_req(c, "x"), *idx = x ? mx_req(c, "indices") : NULL;
	int a = idx ? along_axis(c, x, idx) : -1;
	if (a < 0)
		return c->st;
	struct al_tensor *y = mx_alloc(c, 0, x->dtype, idx->rank, idx->dims);
	if (y && y->n &&
	    !ali_gather_along_axis(x->f, mx_prod(x->dims, 0, a), x->dims[a],
				  mx_prod(x->dims, a + 1, x->rank), idx->f, idx->dims[a], y->f))
		mx_fail(c, AL_E_FORMAT, "an index is out of range for axis %d of size %lld", a,
			(long long)x->dims[a]);
	return c->st;
}

enum al_status mx_gather_nd(struct mx *c, int arg)
{
	(void)arg;
	int64_t bd, dims[AL_TENSOR_MAX_RANK];
	struct al_tensor *x = mx_req(c, "x"), *idx = x ? mx_req(c, "indices") : NULL;
	if (!idx || !mx_int(c, "batch_dims", 0, &bd))
		return c->st;
	if (bd != 0)
		return mx_fail(c, AL_E_UNSUPPORTED, "batch_dims %lld is not supported by the interpreter",
			       (long long)bd);
	if (idx->rank < 1 || idx->dims[idx->rank - 1] > x->rank || idx->dims[idx->rank - 1] < 1)
		return mx_fail(c, AL_E_FORMAT, "the last dim of indices must be 1..rank(x)");
	int k = (int)idx->dims[idx->rank - 1], r = 0;
	for (int i = 0; i < idx->rank - 1; i++)
		dims[r++] = idx->dims[i];
	for (int i = k; i < x->rank; i++)
		dims[r++] = x->dims[i];
	if (r > AL_TENSOR_MAX_RANK)
		return mx_fail(c, AL_E_UNSUPPORTED, "a result of rank %d", r);
	struct al_tensor *y = mx_alloc(c, 0, x->dtype, r, dims);
	if (y && y->n && !ali_gather_nd(x->f, x->rank, x->dims, idx->f, (int64_t)idx->n / k, k, y->f))
		mx_fail(c, AL_E_FORMAT, "an index is out of range");
	return c->st;
}

static bool scatter_mode(struct mx *c, const char *def, enum al_binop *op)
{
	char m[16];
	static const struct {
		const char *name;
		enum al_binop op;
	} t[] = {{"update", AL_BIN_COUNT}, {"add", AL_BIN_ADD}, {"sub", AL_BIN_SUB},
		 {"mul", AL_BIN_MUL},      {"div", AL_BIN_DIV}, {"max", AL_BIN_MAX},
		 {"min", AL_BIN_MIN}};
	if (!mx_str(c, "mode", def, m, sizeof m))
		return false;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (strcmp(m, t[i].name) == 0) {
			*op = t[i].op;
			return true;
		}
	mx_unsupported(c, "scatter mode", m);
	return false;
}

static float apply(enum al_binop op, float a, float b)
{
	switch (op) {
	case AL_BIN_ADD: return a + b;
	case AL_BIN_SUB: return a - b;
	case AL_BIN_MUL: return a * b;
	case AL_BIN_DIV: return a / b;
	case AL_BIN_MAX: return a > b ? a : b;
	case AL_BIN_MIN: return a < b ? a : b;
	default: return b;
	}
}

/* A copy of `data` as output 0. */
static struct al_tensor *copy_of(struct mx *c, const struct al_tensor *d)
{
	struct al_tensor *y = mx_alloc_raw(c, 0, d->dtype, d->rank, d->dims); /* all written */
	if (y && d->n)
		memcpy(y->f, d->f, d->n * sizeof(float));
	return y;
}

/* Output 0 to be d (bound to param) with some values changed: d itself when
 * nothing else reads it (mx_take), else a copy. */
static struct al_tensor *copy_or_take(struct mx *c, const char *param, const struct al_tensor *d)
{
	struct al_tensor *t = mx_take(c, param);
	if (t != d)
		return copy_of(c, d);
	mx_set(c, 0, t);
	return t;
}

/* An index into a dim of size d (negative from the end); false when outside. */
static bool index_of(float v, int64_t d, int64_t *out)
{
	int64_t i;
	if (!mx_f2i(v, &i))
		return false;
	if (i < 0)
		i += d;
	*out = i;
	return i >= 0 && i < d;
}

enum al_status mx_scatter(struct mx *c, int arg)
{
	(void)arg;
	int64_t ax;
	enum al_binop op;
	struct al_tensor *d = mx_req(c, "data"), *idx = d ? mx_req(c, "indices") : NULL;
	struct al_tensor *u = idx ? mx_req(c, "updates") : NULL;
	if (!u || !mx_int(c, "axis", 0, &ax) || !scatter_mode(c, "add", &op))
		return c->st;
	int a = mx_axis(c, ax, d->rank, 0);
	if (a < 0)
		return c->st;
	bool ok = idx->rank <= 1 && u->rank == d->rank;
	for (int i = 0; ok && i < d->rank; i++)
		ok = u->dims[i] == (i == a ? (int64_t)idx->n : d->dims[i]);
	if (!ok)
		return mx_fail(c, AL_E_FORMAT, "updates must be data's shape with %zu along axis %d",
			       idx->n, a);
	struct al_tensor *y = copy_or_take(c, "data", d);
	if (y && !ali_scatter(y->f, mx_prod(d->dims, 0, a), d->dims[a], mx_prod(d->dims, a + 1, d->rank),
			     idx->f, (int64_t)idx->n, u->f, op))
		mx_fail(c, AL_E_FORMAT, "an index is out of range for axis %d of size %lld", a,
			(long long)d->dims[a]);
	return c->st;
}

enum al_status mx_scatter_along_axis(struct mx *c, int arg)
{
	(void)arg;
	enum al_binop op;
	struct al_tensor *d = mx_req(c, "data"), *idx = d ? mx_req(c, "indices") : NULL;
	struct al_tensor *u = idx ? mx_req(c, "updates") : NULL;
	int a = u ? along_axis(c, d, idx) : -1;
	if (a < 0 || !scatter_mode(c, "add", &op))
		return c->st;
	if (!mx_same_dims(u, idx->rank, idx->dims))
		return mx_fail(c, AL_E_FORMAT, "updates must have the shape of indices");
	struct al_tensor *y = copy_or_take(c, "data", d);
	if (!y)
		return c->st;
	int64_t outer = mx_prod(d->dims, 0, a), inner = mx_prod(d->dims, a + 1, d->rank);
	int64_t n = idx->dims[a], dd = d->dims[a];
	for (int64_t o = 0; o < outer; o++)
		for (int64_t j = 0; j < n; j++)
			for (int64_t i = 0; i < inner; i++) {
				size_t s = (size_t)((o * n + j) * inner + i);
				int64_t t;
				if (!index_of(idx->f[s], dd, &t))
					return mx_fail(c, AL_E_FORMAT, "index %g is out of range for axis %d",
						       (double)idx->f[s], a);
				float *p = &y->f[(o * dd + t) * inner + i];
				*p = apply(op, *p, u->f[s]);
			}
	return AL_OK;
}

enum al_status mx_scatter_nd(struct mx *c, int arg)
{
	(void)arg;
	enum al_binop op;
	struct al_tensor *d = mx_req(c, "data"), *idx = d ? mx_req(c, "indices") : NULL;
	struct al_tensor *u = idx ? mx_req(c, "updates") : NULL;
	if (!u || !scatter_mode(c, "add", &op))
		return c->st;
	if (idx->rank < 1 || idx->dims[idx->rank - 1] < 1 || idx->dims[idx->rank - 1] > d->rank)
		return mx_fail(c, AL_E_FORMAT, "the last dim of indices must be 1..rank(data)");
	int k = (int)idx->dims[idx->rank - 1];
	int64_t m = (int64_t)idx->n / k, slice = mx_prod(d->dims, k, d->rank);
	if ((int64_t)u->n != m * slice)
		return mx_fail(c, AL_E_FORMAT, "updates must hold %lld values",
			       (long long)(m * slice));
	struct al_tensor *y = copy_or_take(c, "data", d);
	for (int64_t j = 0; y && j < m; j++) {
		int64_t off = 0;
		for (int q = 0; q < k; q++) {
			int64_t t;
			if (!index_of(idx->f[j * k + q], d->dims[q], &t))
				return mx_fail(c, AL_E_FORMAT, "an index is out of range for axis %d", q);
			off = off * d->dims[q] + t;
		}
		for (int64_t i = 0; i < slice; i++)
			y->f[off * slice + i] = apply(op, y->f[off * slice + i], u->f[j * slice + i]);
	}
	return c->st;
}

/* ================================================================ construction */

enum al_status mx_tile(struct mx *c, int arg)
{
	(void)arg;
	int64_t reps[MX_MAXV], dims[AL_TENSOR_MAX_RANK];
	size_t nr;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_ints(c, "reps", reps, MX_MAXV, &nr))
		return c->st;
	if (nr != (size_t)x->rank)
		return mx_fail(c, AL_E_FORMAT, "reps has %zu values for rank %d", nr, x->rank);
	for (int i = 0; i < x->rank; i++) {
		if (reps[i] < 0 || (reps[i] && x->dims[i] > (int64_t)AL_TENSOR_MAX_ELEMS / reps[i]))
			return mx_fail(c, AL_E_FORMAT, "reps[%d] = %lld", i, (long long)reps[i]);
		dims[i] = x->dims[i] * reps[i];
	}
	struct al_tensor *y = mx_alloc(c, 0, x->dtype, x->rank, dims);
	if (!y || !y->n)
		return c->st;
	int64_t idx[AL_TENSOR_MAX_RANK] = {0};
	for (size_t k = 0; k < y->n; k++) {
		int64_t off = 0;
		for (int i = 0; i < x->rank; i++)
			off = off * x->dims[i] + idx[i] % x->dims[i];
		y->f[k] = x->f[off];
		for (int i = x->rank - 1; i >= 0; i--) {
			if (++idx[i] < dims[i])
				break;
			idx[i] = 0;
		}
	}
	return AL_OK;
}

enum al_status mx_pad(struct mx *c, int arg)
{
	(void)arg;
	int64_t p[MX_MAXV], before[AL_TENSOR_MAX_RANK], after[AL_TENSOR_MAX_RANK];
	int64_t dims[AL_TENSOR_MAX_RANK];
	size_t np;
	char mode[16];
	double val;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_ints(c, "pad", p, MX_MAXV, &np) || !mx_str(c, "mode", "constant", mode, sizeof mode) ||
	    !mx_float(c, "constant_val", 0, &val))
		return c->st;
	enum al_pad_mode pm;
	if (strcmp(mode, "constant") == 0)
		pm = AL_PAD_CONSTANT;
	else if (strcmp(mode, "reflect") == 0)
		pm = AL_PAD_REFLECT;
	else if (strcmp(mode, "replicate") == 0)
		pm = AL_PAD_REPLICATE;
	else
		return mx_unsupported(c, "pad mode", mode);
	if (np % 2 || np / 2 > (size_t)x->rank)
		return mx_fail(c, AL_E_FORMAT, "pad has %zu values for rank %d", np, x->rank);
	int first = x->rank - (int)(np / 2);
	for (int i = 0; i < x->rank; i++) {
		before[i] = i < first ? 0 : p[2 * (i - first)];
		after[i] = i < first ? 0 : p[2 * (i - first) + 1];
		int64_t lim = pm == AL_PAD_REFLECT ? x->dims[i] - 1 : pm == AL_PAD_REPLICATE ? INT32_MAX : INT32_MAX;
		if (before[i] < 0 || after[i] < 0 || before[i] > lim || after[i] > lim ||
		    (pm != AL_PAD_CONSTANT && x->dims[i] == 0 && (before[i] || after[i])))
			return mx_fail(c, AL_E_FORMAT, "pad %lld/%lld on axis %d of size %lld (mode %s)",
				       (long long)before[i], (long long)after[i], i, (long long)x->dims[i],
				       mode);
		dims[i] = x->dims[i] + before[i] + after[i];
	}
	struct al_tensor *y = mx_alloc(c, 0, x->dtype, x->rank, dims);
	if (y && y->n)
		ali_pad(x->f, x->rank, x->dims, before, after, pm, (float)val, y->f);
	return c->st;
}

enum al_status mx_cumsum(struct mx *c, int arg)
{
	(void)arg;
	int64_t ax;
	bool ex, rev;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_int(c, "axis", 0, &ax) || !mx_bool(c, "exclusive", false, &ex) ||
	    !mx_bool(c, "reverse", false, &rev))
		return c->st;
	int a = mx_axis(c, ax, x->rank, 0);
	struct al_tensor *y = a >= 0 ? mx_alloc(c, 0, x->dtype, x->rank, x->dims) : NULL;
	if (y && y->n)
		ali_cumsum(x->f, mx_prod(x->dims, 0, a), x->dims[a], mx_prod(x->dims, a + 1, x->rank), ex,
			  rev, y->f);
	return c->st;
}

/* value (default 0) into every element of output 0. */
static enum al_status fill_with(struct mx *c, int rank, const int64_t *dims)
{
	const struct al_tensor *v = mx_in(c, "value");
	if (v && (v->kind != AL_TK_TENSOR || !v->f || v->n != 1))
		return mx_fail(c, AL_E_FORMAT, "value must be a single number");
	if (c->st != AL_OK)
		return c->st;
	struct al_tensor *y = mx_alloc(c, 0, v ? v->dtype : AL_DT_FP32, rank, dims);
	for (size_t i = 0; y && i < y->n; i++)
		y->f[i] = v ? v->f[0] : 0.0f;
	return c->st;
}

enum al_status mx_fill(struct mx *c, int arg)
{
	(void)arg;
	int64_t s[MX_MAXV];
	size_t ns;
	if (!mx_ints(c, "shape", s, MX_MAXV, &ns))
		return c->st;
	if (!mx_present(c, "shape"))
		return mx_fail(c, AL_E_FORMAT, "input 'shape' is missing");
	if (ns > AL_TENSOR_MAX_RANK)
		return mx_fail(c, AL_E_UNSUPPORTED, "a result of rank %zu", ns);
	return fill_with(c, (int)ns, s);
}

enum al_status mx_fill_like(struct mx *c, int arg)
{
	(void)arg;
	struct al_tensor *r = mx_req(c, "ref_tensor");
	return r ? fill_with(c, r->rank, r->dims) : c->st;
}

enum al_status mx_range_1d(struct mx *c, int arg)
{
	(void)arg;
	const struct al_tensor *t[3];
	static const char *const names[3] = {"start", "end", "step"};
	double v[3];
	bool all_int = true;
	for (int i = 0; i < 3; i++) {
		t[i] = mx_req(c, names[i]);
		if (!t[i])
			return c->st;
		if (t[i]->n != 1)
			return mx_fail(c, AL_E_FORMAT, "'%s' must be a single number", names[i]);
		v[i] = t[i]->f[0];
		all_int &= mx_is_int(t[i]->dtype);
	}
	if (v[2] == 0 || !isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]))
		return mx_fail(c, AL_E_FORMAT, "range_1d(%g, %g, %g) is not a finite range", v[0], v[1], v[2]);
	double cnt = ceil((v[1] - v[0]) / v[2]);
	if (cnt < 0)
		cnt = 0;
	if (cnt > (double)AL_TENSOR_MAX_ELEMS)
		return mx_fail(c, AL_E_UNSUPPORTED, "range_1d of %g values", cnt);
	int64_t n = (int64_t)cnt;
	struct al_tensor *y = mx_alloc(c, 0, all_int ? AL_DT_INT32 : mx_fdtype(t[0]), 1, &n);
	for (int64_t i = 0; y && i < n; i++)
		y->f[i] = (float)(v[0] + (double)i * v[2]);
	return c->st;
}

enum al_status mx_shape(struct mx *c, int arg)
{
	(void)arg;
	struct al_tensor *x = mx_in(c, "x");
	if (!x || x->kind != AL_TK_TENSOR)
		return c->st ? c->st : mx_fail(c, AL_E_FORMAT, "input 'x' is missing or not a tensor");
	int64_t r = x->rank;
	struct al_tensor *y = mx_alloc(c, 0, AL_DT_INT32, 1, &r);
	for (int i = 0; y && i < x->rank; i++)
		y->f[i] = (float)x->dims[i];
	return c->st;
}

enum al_status mx_identity(struct mx *c, int arg)
{
	(void)arg;
	struct al_tensor *x = mx_in(c, "x");
	if (!x)
		return c->st ? c->st : mx_fail(c, AL_E_FORMAT, "input 'x' is missing");
	mx_set(c, 0, x);
	return AL_OK;
}

/* topk: values and int32 indices of the k largest (smallest when ascending). */
enum al_status mx_topk(struct mx *c, int arg)
{
	(void)arg;
	int64_t k, ax, dims[AL_TENSOR_MAX_RANK];
	bool asc, sort, ri;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_int(c, "k", 1, &k) || !mx_int(c, "axis", -1, &ax) ||
	    !mx_bool(c, "ascending", false, &asc) || !mx_bool(c, "sort", true, &sort) ||
	    !mx_bool(c, "return_indices", true, &ri))
		return c->st;
	int a = mx_axis(c, ax, x->rank, 0);
	if (a < 0)
		return c->st;
	if (k < 0 || k > x->dims[a])
		return mx_fail(c, AL_E_FORMAT, "k = %lld for an axis of size %lld", (long long)k,
			       (long long)x->dims[a]);
	if (!sort || !ri)
		return mx_unsupported(c, "topk without sort or indices", "false");
	memcpy(dims, x->dims, sizeof dims[0] * (size_t)x->rank);
	dims[a] = k;
	struct al_tensor *v = mx_alloc(c, 0, x->dtype, x->rank, dims);
	struct al_tensor *i = c->n_out > 1 ? mx_alloc(c, 1, AL_DT_INT32, x->rank, dims)
					   : mx_alloc(c, UINT32_MAX, AL_DT_INT32, x->rank, dims);
	if (v && i && v->n)
		ali_topk(x->f, mx_prod(x->dims, 0, a), x->dims[a], mx_prod(x->dims, a + 1, x->rank), k,
			!asc, v->f, i->f);
	if (c->n_out == 1)
		ali_tensor_unref(i);
	return c->st;
}

enum al_status mx_argsort(struct mx *c, int arg)
{
	(void)arg;
	int64_t ax;
	bool asc;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_int(c, "axis", -1, &ax) || !mx_bool(c, "ascending", false, &asc))
		return c->st;
	int a = mx_axis(c, ax, x->rank, 0);
	if (a < 0)
		return c->st;
	struct al_tensor *i = mx_alloc(c, 0, AL_DT_INT32, x->rank, x->dims);
	struct al_tensor *v = i ? mx_alloc(c, UINT32_MAX, x->dtype, x->rank, x->dims) : NULL;
	if (v && v->n)
		ali_topk(x->f, mx_prod(x->dims, 0, a), x->dims[a], mx_prod(x->dims, a + 1, x->rank),
			x->dims[a], !asc, v->f, i->f);
	ali_tensor_unref(v);
	return c->st;
}

enum al_status mx_one_hot(struct mx *c, int arg)
{
	(void)arg;
	int64_t size, ax, dims[AL_TENSOR_MAX_RANK];
	double on, off;
	struct al_tensor *idx = mx_req(c, "indices");
	if (!idx || !mx_int(c, "one_hot_vector_size", -1, &size) || !mx_int(c, "axis", -1, &ax) ||
	    !mx_float(c, "on_value", 1, &on) || !mx_float(c, "off_value", 0, &off))
		return c->st;
	if (size < 0 || (uint64_t)size > AL_TENSOR_MAX_ELEMS)
		return mx_fail(c, AL_E_FORMAT, "one_hot_vector_size %lld", (long long)size);
	int a = mx_axis(c, ax, idx->rank, 1);
	if (a < 0)
		return c->st;
	if (idx->rank + 1 > AL_TENSOR_MAX_RANK)
		return mx_fail(c, AL_E_UNSUPPORTED, "a result of rank %d", idx->rank + 1);
	for (int i = 0, j = 0; i <= idx->rank; i++)
		dims[i] = i == a ? size : idx->dims[j++];
	const struct al_tensor *ov = mx_in(c, "on_value");
	struct al_tensor *y = mx_alloc(c, 0, ov ? ov->dtype : AL_DT_INT32, idx->rank + 1, dims);
	if (!y)
		return c->st;
	int64_t outer = mx_prod(idx->dims, 0, a), inner = mx_prod(idx->dims, a, idx->rank);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t s = 0; s < size; s++)
			for (int64_t i = 0; i < inner; i++) {
				int64_t v;
				bool hit = mx_f2i(idx->f[o * inner + i], &v) && v == s;
				y->f[(o * size + s) * inner + i] = (float)(hit ? on : off);
			}
	return AL_OK;
}

/* band_part: keep the band lower / upper (-1 = all) of the last two dims. */
enum al_status mx_band_part(struct mx *c, int arg)
{
	(void)arg;
	int64_t lo, up;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_int(c, "lower", -1, &lo) || !mx_int(c, "upper", -1, &up))
		return c->st;
	if (x->rank < 2)
		return mx_fail(c, AL_E_FORMAT, "x must have rank 2 or more");
	struct al_tensor *y = mx_alloc(c, 0, x->dtype, x->rank, x->dims);
	if (!y)
		return c->st;
	int64_t M = x->dims[x->rank - 2], N = x->dims[x->rank - 1];
	for (size_t k = 0; k < x->n; k++) {
		int64_t i = (int64_t)(k / (size_t)N) % M, j = (int64_t)(k % (size_t)N);
		bool keep = (lo < 0 || i - j <= lo) && (up < 0 || j - i <= up);
		y->f[k] = keep ? x->f[k] : 0;
	}
	return AL_OK;
}

/* depth_to_space (0: TF order, channel = (i*b + j)*C' + c), space_to_depth (1),
 * pixel_shuffle (2: PyTorch order, channel = c*b*b + i*b + j), pixel_unshuffle (3). */
enum al_status mx_space_depth(struct mx *c, int kind)
{
	static const char *const param[4] = {"block_size", "block_size", "upscale_factor",
					     "downscale_factor"};
	int64_t b;
	struct al_tensor *x = mx_req(c, "x");
	if (!x || !mx_int(c, param[kind], 0, &b))
		return c->st;
	if (x->rank != 4 || b < 1 || b > 65536)
		return mx_fail(c, AL_E_FORMAT, "needs x [N,C,H,W] and a block size >= 1");
	int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3], dims[4];
	bool up = kind == 0 || kind == 2;
	if (up ? C % (b * b) : (H % b || W % b))
		return mx_fail(c, AL_E_FORMAT, "the block size %lld does not divide the %s", (long long)b,
			       up ? "channels" : "spatial dims");
	int64_t Cs = up ? C / (b * b) : C, Hs = up ? H : H / b, Ws = up ? W : W / b; /* the small side */
	dims[0] = N;
	dims[1] = up ? Cs : C * b * b;
	dims[2] = up ? H * b : Hs;
	dims[3] = up ? W * b : Ws;
	struct al_tensor *y = mx_alloc(c, 0, x->dtype, 4, dims);
	for (int64_t n = 0; y && n < N; n++)
		for (int64_t ch = 0; ch < Cs; ch++)
			for (int64_t h = 0; h < Hs; h++)
				for (int64_t w = 0; w < Ws; w++)
					for (int64_t i = 0; i < b; i++)
						for (int64_t j = 0; j < b; j++) {
							int64_t deep = kind < 2 ? (i * b + j) * Cs + ch
										: ch * b * b + i * b + j;
							int64_t dz = ((n * Cs * b * b + deep) * Hs + h) * Ws + w;
							int64_t sp = ((n * Cs + ch) * Hs * b + h * b + i) * Ws * b +
								     w * b + j;
							if (up)
								y->f[sp] = x->f[dz];
							else
								y->f[dz] = x->f[sp];
						}
	return c->st;
}
