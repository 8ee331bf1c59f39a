/* SPDX-License-Identifier: MIT */
/* interp_nn_data.c: the NeuralNetwork data-movement and shape layers: concat /
 * split / slice / crop / padding / resampling, reshape, flatten, permute and
 * transpose, constants, reverse, legacy (last three axes of a rank >= 3 blob)
 * and ND (fills, ranges, gather / scatter, tile / stack, masks and one-hot:
 * interp_nn_gather.c). Semantics from the comments of coremltools'
 * NeuralNetwork.proto.
 *
 * Every index, size and count read from the params or from an index tensor is
 * bounded before use; an index out of range is an error, never clamped (slices
 * clamp python-style, as NeuralNetwork.proto defines them).
 */
#include "interp_nn.h"
#include "coreml_fields.h"

#include <math.h>
#include <string.h>

/* a layer's field, named (src/format/coreml_fields.h): F(Slice, axis) */
#define F(m, f) AL_PB_##m##LayerParams_##f

/* ================================================================ data movement */

/* Concatenation of ins[0..n) along axis a (same rank, same dims elsewhere). */
static enum al_status concat_axis(struct nn_layer *l, struct al_tensor *const *ins, uint32_t n, int a)
{
	const struct al_tensor *x0 = ins[0];
	int64_t od[AL_TENSOR_MAX_RANK], sum = 0;
	memcpy(od, x0->dims, sizeof od);
	int64_t *sizes = ali_malloc(n * sizeof *sizes);
	const float **xs = ali_malloc(n * sizeof *xs);
	if (!sizes || !xs) {
		ali_free(sizes);
		ali_free(xs);
		return nn_fail(l, AL_E_NOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct al_tensor *t = ins[i];
		bool ok = t->rank == x0->rank;
		for (int k = 0; ok && k < t->rank; k++)
			ok = k == a || t->dims[k] == x0->dims[k];
		if (!ok) {
			char b0[160], b1[160];
			ali_free(sizes);
			ali_free(xs);
			return nn_fail(l, AL_E_FORMAT, "inputs of shapes %s and %s do not concatenate along "
				       "axis %d", nn_dims_str(b0, sizeof b0, x0->rank, x0->dims),
				       nn_dims_str(b1, sizeof b1, t->rank, t->dims), a);
		}
		sizes[i] = t->dims[a];
		xs[i] = t->f;
		sum += t->dims[a];
	}
	od[a] = sum;
	struct al_tensor *y = nn_alloc(l, x0->rank, od);
	if (y && y->n)
		ali_concat(xs, sizes, (int)n, nn_prod(x0->dims, 0, a), nn_prod(x0->dims, a + 1, x0->rank), y->f);
	ali_free(sizes);
	ali_free(xs);
	if (!y)
		return AL_E_NOMEM;
	l->out[0] = y;
	return AL_OK;
}

/* ConcatLayerParams sequenceConcat = 100: axis -5, else -3. */
enum al_status nn_l_concat(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 0, 1, 1);
	if (st)
		return st;
	int back = nn_pb(l->p, F(Concat, sequenceConcat)) ? 5 : 3;
	if ((st = nn_need_rank(l, l->in[0], back, AL_TENSOR_MAX_RANK)) != AL_OK)
		return st;
	return concat_axis(l, l->in, l->n_in, l->in[0]->rank - back);
}

/* ConcatNDLayerParams axis = 1, interleave = 2. */
enum al_status nn_l_concat_nd(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 0, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x0 = l->in[0];
	int a = nn_axis(nn_pi(l->p, F(ConcatND, axis), 0), x0->rank);
	if (a < 0)
		return nn_fail(l, AL_E_FORMAT, "axis %lld of a rank-%d input", (long long)nn_pi(l->p, F(ConcatND, axis), 0),
			       x0->rank);
	if (!nn_pb(l->p, F(ConcatND, interleave)))
		return concat_axis(l, l->in, l->n_in, a);
	/* interleave: inputs of one shape; y[.., i*n + k, ..] = x_k[.., i, ..] */
	for (uint32_t i = 1; i < l->n_in; i++)
		if (l->in[i]->rank != x0->rank ||
		    memcmp(l->in[i]->dims, x0->dims, (size_t)x0->rank * sizeof *x0->dims) != 0)
			return nn_fail(l, AL_E_FORMAT, "interleave takes inputs of one shape");
	int64_t od[AL_TENSOR_MAX_RANK];
	memcpy(od, x0->dims, sizeof od);
	od[a] = x0->dims[a] * (int64_t)l->n_in;
	struct al_tensor *y = nn_alloc(l, x0->rank, od);
	int64_t *sizes = ali_malloc(l->n_in * sizeof *sizes);
	const float **xs = ali_malloc(l->n_in * sizeof *xs);
	if (y && sizes && xs) {
		for (uint32_t i = 0; i < l->n_in; i++) {
			sizes[i] = 1;
			xs[i] = l->in[i]->f;
		}
		if (y->n)
			ali_concat(xs, sizes, (int)l->n_in, nn_prod(x0->dims, 0, a + 1), 
				  nn_prod(x0->dims, a + 1, x0->rank), y->f);
	}
	ali_free(sizes);
	ali_free(xs);
	if (!y || !sizes || !xs) {
		ali_tensor_unref(y);
		return y ? nn_fail(l, AL_E_NOMEM, "out of memory") : AL_E_NOMEM;
	}
	l->out[0] = y;
	return AL_OK;
}

/* Split x along axis a into the outputs with the given sizes (summing to the axis). */
static enum al_status split_axis(struct nn_layer *l, const struct al_tensor *x, int a,
				 const int64_t *sizes)
{
	float **ys = ali_calloc(l->n_out, sizeof *ys);
	if (!ys)
		return nn_fail(l, AL_E_NOMEM, "out of memory");
	for (uint32_t i = 0; i < l->n_out; i++) {
		int64_t od[AL_TENSOR_MAX_RANK];
		memcpy(od, x->dims, sizeof od);
		od[a] = sizes[i];
		if (!(l->out[i] = nn_alloc(l, x->rank, od))) {
			ali_free(ys);
			return AL_E_NOMEM;
		}
		ys[i] = l->out[i]->f;
	}
	if (x->n)
		ali_split(x->f, sizes, (int)l->n_out, nn_prod(x->dims, 0, a), nn_prod(x->dims, a + 1, x->rank),
			 ys);
	ali_free(ys);
	return AL_OK;
}

/* `n` equal parts of axis a, into the layer's outputs. */
static enum al_status split_even(struct nn_layer *l, const struct al_tensor *x, int a, uint64_t n)
{
	if (n != l->n_out)
		return nn_fail(l, AL_E_FORMAT, "%llu parts for %u outputs", (unsigned long long)n, l->n_out);
	if (x->dims[a] % (int64_t)n)
		return nn_fail(l, AL_E_FORMAT, "an axis of %lld does not split into %llu equal parts",
			       (long long)x->dims[a], (unsigned long long)n);
	int64_t *sizes = ali_malloc(n * sizeof *sizes);
	if (!sizes)
		return nn_fail(l, AL_E_NOMEM, "out of memory");
	for (uint64_t i = 0; i < n; i++)
		sizes[i] = x->dims[a] / (int64_t)n;
	enum al_status st = split_axis(l, x, a, sizes);
	ali_free(sizes);
	return st;
}

/* SplitLayerParams nOutputs = 1: axis -3 in equal parts. */
enum al_status nn_l_split(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 0);
	if (st || (st = nn_need_rank(l, l->in[0], 3, AL_TENSOR_MAX_RANK)))
		return st;
	uint64_t n = nn_pu(l->p, F(Split, nOutputs), 0);
	return split_even(l, l->in[0], l->in[0]->rank - 3, n ? n : l->n_out);
}

/* SplitNDLayerParams axis = 1, numSplits = 2, splitSizes = 3. */
enum al_status nn_l_split_nd(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 0);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int a = nn_axis(nn_pi(l->p, F(SplitND, axis), 0), x->rank);
	if (a < 0)
		return nn_fail(l, AL_E_FORMAT, "axis %lld of a rank-%d input", (long long)nn_pi(l->p, F(SplitND, axis), 0),
			       x->rank);
	int64_t sz[NN_MAXV];
	long n = nn_pints(l->p, F(SplitND, splitSizes), sz);
	if (n == 0) {
		uint64_t k = nn_pu(l->p, F(SplitND, numSplits), 0);
		return split_even(l, x, a, k ? k : l->n_out);
	}
	if (n < 0 || (uint64_t)n != l->n_out || n > NN_MAXV)
		return nn_fail(l, AL_E_FORMAT, "%ld splitSizes for %u outputs", n, l->n_out);
	int64_t sum = 0;
	for (long i = 0; i < n; i++) {
		if (sz[i] < 0 || sz[i] > x->dims[a])
			return nn_fail(l, AL_E_FORMAT, "split size %lld", (long long)sz[i]);
		sum += sz[i];
	}
	if (sum != x->dims[a])
		return nn_fail(l, AL_E_FORMAT, "split sizes add up to %lld, the axis is %lld", (long long)sum,
			       (long long)x->dims[a]);
	return split_axis(l, x, a, sz);
}

/* One axis of a python slice [b:e:st] (masks take the whole side) of a dim d: the
 * first index and the count. st != 0 and |st| < 2^62. */
static void slice_axis(int64_t d, int64_t b, int64_t e, int64_t st, bool bm, bool em, int64_t *begin,
		       int64_t *count)
{
	if (st > 0) {
		int64_t lo = bm ? 0 : b < 0 ? (b + d < 0 ? 0 : b + d) : (b > d ? d : b);
		int64_t hi = em ? d : e < 0 ? (e + d < 0 ? 0 : e + d) : (e > d ? d : e);
		*begin = lo;
		*count = hi > lo ? (hi - lo + st - 1) / st : 0;
	} else {
		int64_t hi = bm ? d - 1 : b < 0 ? (b + d < 0 ? -1 : b + d) : (b > d - 1 ? d - 1 : b);
		int64_t lo = em ? -1 : e < 0 ? (e + d < 0 ? -1 : e + d) : (e > d - 1 ? d - 1 : e);
		*begin = hi;
		*count = hi > lo ? (hi - lo + (-st) - 1) / (-st) : 0;
	}
	if (*count == 0)
		*begin = 0;
}

/* y = x[begin + i*stride] per axis, shaped [out rank odims] (same count as cnt). */
static enum al_status slice_to(struct nn_layer *l, const struct al_tensor *x, const int64_t *begin,
			       const int64_t *stride, const int64_t *cnt, int orank, const int64_t *odims,
			       uint32_t o)
{
	struct al_tensor *y = nn_alloc(l, orank, odims);
	if (!y)
		return AL_E_NOMEM;
	if (y->n)
		ali_slice(x->f, x->rank, x->dims, begin, stride, cnt, y->f);
	l->out[o] = y;
	return AL_OK;
}

/* SliceLayerParams startIndex = 1, endIndex = 2 (exclusive), stride = 3 (0 -> 1),
 * axis = 4 (CHANNEL -3, HEIGHT -2, WIDTH -1). */
enum al_status nn_l_slice(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int64_t axis = nn_pi(l->p, F(Slice, axis), 0);
	if (axis < 0 || axis > 2)
		return nn_unsupported(l, "slice axis %lld", (long long)axis);
	if ((st = nn_need_rank(l, x, (int)(3 - axis), AL_TENSOR_MAX_RANK)) != AL_OK)
		return st;
	int a = x->rank - (int)(3 - axis);
	uint64_t su = nn_pu(l->p, F(Slice, stride), 1);
	if (su == 0)
		su = 1;
	if (su > (uint64_t)NN_BIG)
		return nn_fail(l, AL_E_FORMAT, "stride %llu", (unsigned long long)su);
	int64_t begin[AL_TENSOR_MAX_RANK] = {0}, stride[AL_TENSOR_MAX_RANK], cnt[AL_TENSOR_MAX_RANK];
	for (int i = 0; i < x->rank; i++) {
		stride[i] = 1;
		cnt[i] = x->dims[i];
	}
	stride[a] = (int64_t)su;
	slice_axis(x->dims[a], nn_pi(l->p, F(Slice, startIndex), 0), nn_pi(l->p, F(Slice, endIndex), 0), stride[a],
		   false, false, &begin[a],
		   &cnt[a]);
	return slice_to(l, x, begin, stride, cnt, x->rank, cnt, 0);
}

/* The strided slice of SliceStatic / SliceDynamic: per axis begin, end, stride and
 * the three masks (arrays of the input's rank). */
static enum al_status slice_nd(struct nn_layer *l, const struct al_tensor *x, const int64_t *b,
			       const int64_t *e, const int64_t *s, const int64_t *bm, const int64_t *em,
			       const int64_t *sq)
{
	int64_t begin[AL_TENSOR_MAX_RANK], stride[AL_TENSOR_MAX_RANK], cnt[AL_TENSOR_MAX_RANK];
	int64_t od[AL_TENSOR_MAX_RANK];
	int orank = 0;
	for (int i = 0; i < x->rank; i++) {
		int64_t d = x->dims[i];
		if (sq[i]) {
			int64_t bi = b[i] < 0 ? b[i] + d : b[i];
			if (bi < 0 || bi >= d)
				return nn_fail(l, AL_E_FORMAT, "squeezed index %lld of an axis of %lld",
					       (long long)b[i], (long long)d);
			begin[i] = bi, stride[i] = 1, cnt[i] = 1;
			continue;
		}
		if (s[i] == 0 || s[i] > NN_BIG || s[i] < -NN_BIG)
			return nn_fail(l, AL_E_FORMAT, "stride %lld", (long long)s[i]);
		stride[i] = s[i];
		slice_axis(d, b[i], e[i], s[i], bm[i] != 0, em[i] != 0, &begin[i], &cnt[i]);
		od[orank++] = cnt[i];
	}
	if (orank == 0)
		od[orank++] = 1;
	return slice_to(l, x, begin, stride, cnt, orank, od, 0);
}

/* Repeated field f of the params into v[0..rank) with default d (fewer values: the
 * rest default); error when more values than the rank. */
static enum al_status per_axis(struct nn_layer *l, uint32_t f, const char *what, int rank, int64_t d,
			       int64_t *v)
{
	int64_t t[NN_MAXV];
	long n = nn_pints(l->p, f, t);
	if (n < 0 || n > rank)
		return nn_fail(l, AL_E_FORMAT, "%s has %ld values for a rank-%d input", what, n, rank);
	for (int i = 0; i < rank; i++)
		v[i] = i < n ? t[i] : d;
	return AL_OK;
}

/* SliceStaticLayerParams beginIds = 1, beginMasks = 2, endIds = 3, endMasks = 4,
 * strides = 5, squeezeMasks = 6. */
enum al_status nn_l_slice_static(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int r = x->rank;
	int64_t b[AL_TENSOR_MAX_RANK], e[AL_TENSOR_MAX_RANK], s[AL_TENSOR_MAX_RANK];
	int64_t bm[AL_TENSOR_MAX_RANK], em[AL_TENSOR_MAX_RANK], sq[AL_TENSOR_MAX_RANK];
	if ((st = per_axis(l, 1, "beginIds", r, 0, b)) || (st = per_axis(l, 2, "beginMasks", r, 0, bm)) ||
	    (st = per_axis(l, 3, "endIds", r, 0, e)) || (st = per_axis(l, 4, "endMasks", r, 0, em)) ||
	    (st = per_axis(l, 5, "strides", r, 1, s)) || (st = per_axis(l, 6, "squeezeMasks", r, 0, sq)))
		return st;
	int64_t tmp[NN_MAXV];
	for (long i = nn_pints(l->p, F(SliceStatic, endIds), tmp); i < r; i++) /* no endId: to the end */
		em[i] = 1;
	return slice_nd(l, x, b, e, s, bm, em, sq);
}

/* Input i's values (one per axis), or the params' field f. */
static enum al_status dyn_axis(struct nn_layer *l, uint32_t i, uint32_t f, const char *what, int rank,
			       int64_t d, int64_t *v)
{
	if (i >= l->n_in)
		return per_axis(l, f, what, rank, d, v);
	size_t n;
	int64_t t[NN_MAXV];
	enum al_status st = nn_tensor_ints(l, l->in[i], what, t, (size_t)rank, &n);
	if (st)
		return st;
	for (int k = 0; k < rank; k++)
		v[k] = (size_t)k < n ? t[k] : d;
	return AL_OK;
}

/* SliceDynamicLayerParams beginMasks = 2, endIds = 3, endMasks = 4, strides = 5,
 * squeezeMasks = 6; inputs: data, begin, then optionally end, strides, beginMasks,
 * endMasks, squeezeMasks. */
enum al_status nn_l_slice_dynamic(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 2, 7, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int r = x->rank;
	int64_t b[AL_TENSOR_MAX_RANK], e[AL_TENSOR_MAX_RANK], s[AL_TENSOR_MAX_RANK];
	int64_t bm[AL_TENSOR_MAX_RANK], em[AL_TENSOR_MAX_RANK], sq[AL_TENSOR_MAX_RANK];
	if ((st = dyn_axis(l, 1, 0, "begin", r, 0, b)) || (st = dyn_axis(l, 2, 3, "end", r, 0, e)) ||
	    (st = dyn_axis(l, 3, 5, "strides", r, 1, s)) ||
	    (st = dyn_axis(l, 4, 2, "beginMasks", r, 0, bm)) ||
	    (st = dyn_axis(l, 5, 4, "endMasks", r, 0, em)) ||
	    (st = dyn_axis(l, 6, 6, "squeezeMasks", r, 0, sq)))
		return st;
	int64_t tmp[NN_MAXV];
	long ne = l->n_in > 2 ? (long)l->in[2]->n : nn_pints(l->p, F(SliceDynamic, endIds), tmp);
	for (long i = ne < 0 ? 0 : ne; i < r; i++) /* no end: to the end */
		em[i] = 1;
	return slice_nd(l, x, b, e, s, bm, em, sq);
}

/* SliceBySizeLayerParams size = 2, axis = 3; the second input is the begin index. */
enum al_status nn_l_slice_by_size(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 2, 2, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int a = nn_axis(nn_pi(l->p, F(SliceBySize, axis), 0), x->rank);
	int64_t size = nn_pi(l->p, F(SliceBySize, size), 0), b;
	if (a < 0)
		return nn_fail(l, AL_E_FORMAT, "axis %lld of a rank-%d input", (long long)nn_pi(l->p, F(SliceBySize, axis), 0),
			       x->rank);
	if (l->in[1]->n < 1 || !nn_f2i(l->in[1]->f[0], &b))
		return nn_fail(l, AL_E_FORMAT, "the begin input holds no index");
	if (b < 0)
		b += x->dims[a];
	if (size < 0 || b < 0 || b > x->dims[a] || size > x->dims[a] - b)
		return nn_fail(l, AL_E_FORMAT, "[%lld, +%lld) is outside an axis of %lld", (long long)b,
			       (long long)size, (long long)x->dims[a]);
	int64_t begin[AL_TENSOR_MAX_RANK] = {0}, stride[AL_TENSOR_MAX_RANK], cnt[AL_TENSOR_MAX_RANK];
	for (int i = 0; i < x->rank; i++)
		stride[i] = 1, cnt[i] = x->dims[i];
	begin[a] = b;
	cnt[a] = size;
	return slice_to(l, x, begin, stride, cnt, x->rank, cnt, 0);
}

/* CropLayerParams cropAmounts = 1 (one input), offset = 5 [H, W] (two inputs: the
 * size is the second input's H, W). */
enum al_status nn_l_crop(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 2, 1, 1);
	if (st || (st = nn_need_rank(l, l->in[0], 3, AL_TENSOR_MAX_RANK)))
		return st;
	const struct al_tensor *x = l->in[0];
	int r = x->rank;
	int64_t H = x->dims[r - 2], W = x->dims[r - 1], t, lft, oh, ow;
	if (l->n_in == 2) {
		const struct al_tensor *ref = l->in[1];
		int64_t off[2];
		if (ref->rank < 2 || !nn_pair(l->p, F(Crop, offset), 0, off))
			return nn_fail(l, AL_E_FORMAT, "bad reference input or offset");
		t = off[0], lft = off[1];
		oh = ref->dims[ref->rank - 2], ow = ref->dims[ref->rank - 1];
	} else {
		int64_t c[4];
		if (!nn_border(nn_psub(l->p, F(Crop, cropAmounts)), c))
			return nn_fail(l, AL_E_FORMAT, "bad cropAmounts");
		t = c[0], lft = c[2];
		oh = H - c[0] - c[1], ow = W - c[2] - c[3];
	}
	if (t < 0 || lft < 0 || oh < 0 || ow < 0 || t > H - oh || lft > W - ow)
		return nn_fail(l, AL_E_FORMAT, "cropping %lldx%lld at (%lld, %lld) out of %lldx%lld",
			       (long long)oh, (long long)ow, (long long)t, (long long)lft, (long long)H,
			       (long long)W);
	int64_t begin[AL_TENSOR_MAX_RANK] = {0}, stride[AL_TENSOR_MAX_RANK], cnt[AL_TENSOR_MAX_RANK];
	for (int i = 0; i < r; i++)
		stride[i] = 1, cnt[i] = x->dims[i];
	begin[r - 2] = t, begin[r - 1] = lft, cnt[r - 2] = oh, cnt[r - 1] = ow;
	return slice_to(l, x, begin, stride, cnt, r, cnt, 0);
}

/* x padded by before[] / after[] per axis into out[0]. */
static enum al_status pad_to(struct nn_layer *l, const struct al_tensor *x, const int64_t *before,
			     const int64_t *after, enum al_pad_mode mode, float value)
{
	int64_t od[AL_TENSOR_MAX_RANK];
	for (int i = 0; i < x->rank; i++) {
		if (before[i] < 0 || after[i] < 0 || before[i] > NN_BIG || after[i] > NN_BIG)
			return nn_fail(l, AL_E_FORMAT, "padding %lld, %lld", (long long)before[i],
				       (long long)after[i]);
		if (mode == AL_PAD_REFLECT && (before[i] > x->dims[i] - 1 || after[i] > x->dims[i] - 1) &&
		    (before[i] || after[i]))
			return nn_fail(l, AL_E_FORMAT, "reflection padding %lld, %lld of an axis of %lld",
				       (long long)before[i], (long long)after[i], (long long)x->dims[i]);
		if (mode == AL_PAD_REPLICATE && x->dims[i] == 0 && (before[i] || after[i]))
			return nn_fail(l, AL_E_FORMAT, "replication padding of an empty axis");
		od[i] = x->dims[i] + before[i] + after[i];
	}
	struct al_tensor *y = nn_alloc(l, x->rank, od);
	if (!y)
		return AL_E_NOMEM;
	if (y->n)
		ali_pad(x->f, x->rank, x->dims, before, after, mode, value, y->f);
	l->out[0] = y;
	return AL_OK;
}

/* PaddingLayerParams constant = 1 {value = 1}, reflection = 2, replication = 3,
 * paddingAmounts = 10 (BorderAmounts [H, W]): the last two axes. */
enum al_status nn_l_padding(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st || (st = nn_need_rank(l, l->in[0], 2, AL_TENSOR_MAX_RANK)))
		return st;
	const struct al_tensor *x = l->in[0];
	enum al_pad_mode mode;
	float value = 0.0f;
	if (pb_has(l->p, F(Padding, constant))) {
		mode = AL_PAD_CONSTANT;
		value = nn_pf(nn_psub(l->p, F(Padding, constant)), AL_PB_PaddingLayerParams_PaddingConstant_value, 0.0f);
	} else if (pb_has(l->p, F(Padding, reflection))) {
		mode = AL_PAD_REFLECT;
	} else if (pb_has(l->p, F(Padding, replication))) {
		mode = AL_PAD_REPLICATE;
	} else {
		return nn_unsupported(l, "a padding layer without a padding type");
	}
	int64_t c[4], before[AL_TENSOR_MAX_RANK] = {0}, after[AL_TENSOR_MAX_RANK] = {0};
	if (!nn_border(nn_psub(l->p, F(Padding, paddingAmounts)), c))
		return nn_fail(l, AL_E_FORMAT, "bad paddingAmounts");
	before[x->rank - 2] = c[0], after[x->rank - 2] = c[1];
	before[x->rank - 1] = c[2], after[x->rank - 1] = c[3];
	return pad_to(l, x, before, after, mode, value);
}

/* ConstantPaddingLayerParams value = 1, padAmounts = 2 ([before, after] for the last
 * axes; a second input gives them), padToGivenOutputSizeMode = 3. */
enum al_status nn_l_constant_pad(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 2, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int64_t v[NN_MAXV];
	size_t n;
	if (l->n_in == 2) {
		if ((st = nn_tensor_ints(l, l->in[1], "padAmounts", v, NN_MAXV, &n)) != AL_OK)
			return st;
	} else {
		long k = nn_pints(l->p, F(ConstantPadding, padAmounts), v);
		if (k < 0 || k > NN_MAXV)
			return nn_fail(l, AL_E_FORMAT, "bad padAmounts");
		n = (size_t)k;
	}
	if (n % 2 || n / 2 > (size_t)x->rank)
		return nn_fail(l, AL_E_FORMAT, "%zu padAmounts for a rank-%d input", n, x->rank);
	int64_t before[AL_TENSOR_MAX_RANK] = {0}, after[AL_TENSOR_MAX_RANK] = {0};
	int first = x->rank - (int)(n / 2);
	bool to_size = nn_pb(l->p, F(ConstantPadding, padToGivenOutputSizeMode));
	for (int i = first; i < x->rank; i++) {
		int64_t b = v[2 * (i - first)], e = v[2 * (i - first) + 1];
		if (to_size) {
			if (b && e)
				return nn_fail(l, AL_E_FORMAT, "padToGivenOutputSizeMode with both sides set");
			b = b ? (b > x->dims[i] ? b - x->dims[i] : 0) : 0;
			e = e ? (e > x->dims[i] ? e - x->dims[i] : 0) : 0;
		}
		before[i] = b, after[i] = e;
	}
	return pad_to(l, x, before, after, AL_PAD_CONSTANT, nn_pf(l->p, F(ConstantPadding, value), 0.0f));
}

/* Resampling of the last two axes of x to oh x ow with the kernel's source
 * coordinate dst * s + o per axis. */
static enum al_status resample(struct nn_layer *l, const struct al_tensor *x, int64_t oh, int64_t ow,
			       bool bilinear, double sy, double oy, double sx, double ox)
{
	int r = x->rank;
	int64_t od[AL_TENSOR_MAX_RANK];
	memcpy(od, x->dims, sizeof od);
	od[r - 2] = oh, od[r - 1] = ow;
	struct al_tensor *y = nn_alloc(l, r, od);
	if (!y)
		return AL_E_NOMEM;
	int64_t nc = nn_prod(x->dims, 0, r - 2), h = x->dims[r - 2], w = x->dims[r - 1];
	if (y->n && h > 0 && w > 0) {
		if (bilinear)
			ali_resize_bilinear(nc, h, w, oh, ow, sy, oy, sx, ox, x->f, y->f);
		else
			ali_resize_nearest(nc, h, w, oh, ow, sy, oy, sx, ox, x->f, y->f);
	}
	l->out[0] = y;
	return AL_OK;
}

/* UpsampleLayerParams scalingFactor = 1 [H, W], fractionalScalingFactor = 7, mode =
 * 5 (NN, BILINEAR), linearUpsampleMode = 6 (DEFAULT, ALIGN_CORNERS_TRUE,
 * ALIGN_CORNERS_FALSE); grids as NeuralNetwork.proto gives them. */
enum al_status nn_l_upsample(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st || (st = nn_need_rank(l, l->in[0], 3, AL_TENSOR_MAX_RANK)))
		return st;
	const struct al_tensor *x = l->in[0];
	int64_t mode = nn_pi(l->p, F(Upsample, mode), 0), lin = nn_pi(l->p, F(Upsample, linearUpsampleMode), 0);
	if (mode != 0 && mode != 1)
		return nn_unsupported(l, "interpolation mode %lld", (long long)mode);
	if (lin < 0 || lin > 2)
		return nn_unsupported(l, "linearUpsampleMode %lld", (long long)lin);
	float fr[2];
	long nf = pb_get_floats(l->p, F(Upsample, fractionalScalingFactor), fr, 2);
	int64_t sf[2];
	if (nf != 0 && nf != 2)
		return nn_fail(l, AL_E_FORMAT, "fractionalScalingFactor takes [H, W]");
	if (!nn_pair(l->p, F(Upsample, scalingFactor), 1, sf))
		return nn_fail(l, AL_E_FORMAT, "scalingFactor takes [H, W]");
	int64_t in[2] = {x->dims[x->rank - 2], x->dims[x->rank - 1]}, out[2];
	double s[2], o[2];
	for (int a = 0; a < 2; a++) {
		double f;
		if (nf == 2) {
			double t = (double)in[a] * fr[a];
			if (!(fr[a] > 0.0f) || !(t < 9e15))
				return nn_fail(l, AL_E_FORMAT, "fractional scaling factor %g", (double)fr[a]);
			out[a] = (int64_t)floor(t);
			f = fr[a];
		} else {
			if (!nn_in_range(sf[a], 1, NN_BIG) || (in[a] && sf[a] > NN_BIG / in[a]))
				return nn_fail(l, AL_E_FORMAT, "scaling factor %lld", (long long)sf[a]);
			out[a] = in[a] * sf[a];
			f = (double)sf[a];
		}
		if (out[a] < 1 || out[a] > NN_BIG)
			return nn_fail(l, AL_E_FORMAT, "output size %lld", (long long)out[a]);
		double X = (double)in[a], N = (double)out[a];
		if (mode == 0) { /* nearest: floor(dst / f); the +0.5/f keeps integer factors exact */
			s[a] = 1.0 / f;
			o[a] = nf == 2 ? 0.0 : 0.5 / f;
		} else if (lin == 0) {
			s[a] = out[a] > 1 ? (X - X / N) / (N - 1) : 0.0;
			o[a] = 0.0;
		} else if (lin == 1) {
			s[a] = out[a] > 1 ? (X - 1) / (N - 1) : 0.0;
			o[a] = 0.0;
		} else {
			s[a] = X / N;
			o[a] = 0.5 * s[a] - 0.5;
		}
	}
	return resample(l, x, out[0], out[1], mode == 1, s[0], o[0], s[1], o[1]);
}

/* ResizeBilinearLayerParams targetSize = 1 [H, W], mode = 2 {samplingMethod = 1:
 * STRICT_ALIGN_ENDPOINTS, ALIGN_ENDPOINTS, UPSAMPLE, ROI_ALIGN}. */
enum al_status nn_l_resize_bilinear(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st || (st = nn_need_rank(l, l->in[0], 3, AL_TENSOR_MAX_RANK)))
		return st;
	const struct al_tensor *x = l->in[0];
	int64_t t[2];
	if (!nn_pair(l->p, F(ResizeBilinear, targetSize), 1, t) || !nn_in_range(t[0], 1, NN_BIG) ||
	    !nn_in_range(t[1], 1, NN_BIG))
		return nn_fail(l, AL_E_FORMAT, "bad targetSize");
	int64_t m = nn_pi(nn_psub(l->p, F(ResizeBilinear, mode)), AL_PB_SamplingMode_samplingMethod, 0);
	if (m < 0 || m > 3)
		return nn_unsupported(l, "sampling mode %lld", (long long)m);
	double s[2], o[2];
	for (int a = 0; a < 2; a++) {
		double X = (double)x->dims[x->rank - 2 + a], N = (double)t[a];
		o[a] = 0.0;
		if (m == 0 || m == 1) {
			s[a] = N > 1 ? (X - 1) / (N - 1) : 0.0;
			if (m == 1 && N == 1)
				o[a] = (X - 1) / 2;
		} else if (m == 2) {
			s[a] = N > 1 ? (X - X / N) / (N - 1) : 0.0;
		} else {
			s[a] = (X - 1 > 1 ? X - 1 : 1) / N;
			o[a] = 0.5 * s[a];
		}
	}
	return resample(l, x, t[0], t[1], true, s[0], o[0], s[1], o[1]);
}

/* LoadConstantLayerParams shape = 1 [C, H, W], data = 2 -> [1, 1, C, H, W]. */
enum al_status nn_l_load_constant(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 0, 0, 1, 1);
	if (st)
		return st;
	int64_t v[NN_MAXV];
	if (nn_pints(l->p, F(LoadConstant, shape), v) != 3)
		return nn_fail(l, AL_E_FORMAT, "shape must be [C, H, W]");
	int64_t d[5] = {1, 1, v[0], v[1], v[2]};
	for (int i = 2; i < 5; i++)
		if (d[i] < 0)
			return nn_fail(l, AL_E_FORMAT, "shape [%lld,%lld,%lld]", (long long)v[0], (long long)v[1],
				       (long long)v[2]);
	return nn_weight(l, l->p, F(LoadConstant, data), "data", 5, d, true, &l->out[0]);
}

/* LoadConstantNDLayerParams shape = 1, data = 2. */
enum al_status nn_l_load_constant_nd(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 0, 0, 1, 1);
	if (st)
		return st;
	int64_t v[NN_MAXV];
	long n = nn_pints(l->p, F(LoadConstantND, shape), v);
	if (n < 1 || n > AL_TENSOR_MAX_RANK)
		return nn_unsupported(l, "a constant of rank %ld", n);
	for (long i = 0; i < n; i++)
		if (v[i] < 0)
			return nn_fail(l, AL_E_FORMAT, "negative dimension %lld", (long long)v[i]);
	return nn_weight(l, l->p, F(LoadConstantND, data), "data", (int)n, v, true, &l->out[0]);
}

/* CopyLayerParams {}: the same tensor under a new name (tensors are immutable). */
enum al_status nn_l_copy(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	l->out[0] = al_tensor_ref(l->in[0]);
	return AL_OK;
}

/* x's data under another shape (count checked). */
static enum al_status reshape_out(struct nn_layer *l, const struct al_tensor *x, int rank,
				  const int64_t *dims)
{
	size_t count;
	if (rank < 0 || rank > AL_TENSOR_MAX_RANK || !ali_dims_count(rank, dims, &count) || count != x->n) {
		char b0[160], b1[160];
		return nn_fail(l, AL_E_FORMAT, "cannot reshape %s to %s",
			       nn_dims_str(b0, sizeof b0, x->rank, x->dims),
			       nn_dims_str(b1, sizeof b1, rank < 0 ? 0 : rank > 8 ? 8 : rank, dims));
	}
	l->out[0] = nn_reshaped(l, x, rank, dims);
	return l->out[0] ? AL_OK : AL_E_NOMEM;
}

/* A target shape t[0..n) for `total` elements: one -1 takes what is left; a 0
 * copies the input's dim at that index when zero_copies. */
static enum al_status target_shape(struct nn_layer *l, const struct al_tensor *x, const int64_t *t,
				   long n, size_t total, bool zero_copies, int64_t *od)
{
	if (n < 0 || n > AL_TENSOR_MAX_RANK)
		return nn_unsupported(l, "a target shape of rank %ld", n);
	int infer = -1;
	int64_t known = 1;
	for (long i = 0; i < n; i++) {
		int64_t v = t[i];
		if (v == 0 && zero_copies) {
			if (i >= x->rank)
				return nn_fail(l, AL_E_FORMAT, "0 at axis %ld of a rank-%d input", i, x->rank);
			v = x->dims[i];
		}
		if (v == -1 && infer < 0) {
			infer = (int)i;
			od[i] = 1;
			continue;
		}
		if (v < 0 || v > NN_BIG)
			return nn_fail(l, AL_E_FORMAT, "target dimension %lld", (long long)t[i]);
		od[i] = v;
		if (v && known > (INT64_C(1) << 62) / v)
			return nn_fail(l, AL_E_FORMAT, "target shape too large");
		known *= v;
	}
	if (infer >= 0) {
		if (known == 0 || (int64_t)total % known)
			return nn_fail(l, AL_E_FORMAT, "cannot infer the -1 of the target shape for %zu elements",
				       total);
		od[infer] = (int64_t)total / known;
	}
	return AL_OK;
}

/* ReshapeStaticLayerParams targetShape = 1 (-1 inferred). */
enum al_status nn_l_reshape_static(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	int64_t t[NN_MAXV], od[AL_TENSOR_MAX_RANK];
	long n = nn_pints(l->p, F(ReshapeStatic, targetShape), t);
	if ((st = target_shape(l, l->in[0], t, n, l->in[0]->n, false, od)) != AL_OK)
		return st;
	return reshape_out(l, l->in[0], (int)n, od);
}

/* RankPreservingReshapeLayerParams targetShape = 1 (0 copies, -1 inferred). */
enum al_status nn_l_rank_preserving_reshape(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	int64_t t[NN_MAXV], od[AL_TENSOR_MAX_RANK];
	long n = nn_pints(l->p, F(RankPreservingReshape, targetShape), t);
	if (n != l->in[0]->rank)
		return nn_fail(l, AL_E_FORMAT, "targetShape of %ld axes for a rank-%d input", n, l->in[0]->rank);
	if ((st = target_shape(l, l->in[0], t, n, l->in[0]->n, true, od)) != AL_OK)
		return st;
	return reshape_out(l, l->in[0], (int)n, od);
}

/* ReshapeDynamic: the second input holds the target shape. */
enum al_status nn_l_reshape_dynamic(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 2, 2, 1, 1);
	if (st)
		return st;
	int64_t t[NN_MAXV], od[AL_TENSOR_MAX_RANK];
	size_t n;
	if ((st = nn_tensor_ints(l, l->in[1], "the shape", t, AL_TENSOR_MAX_RANK, &n)) ||
	    (st = target_shape(l, l->in[0], t, (long)n, l->in[0]->n, false, od)))
		return st;
	return reshape_out(l, l->in[0], (int)n, od);
}

/* ReshapeLike: the second input's shape. */
enum al_status nn_l_reshape_like(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 2, 2, 1, 1);
	return st ? st : reshape_out(l, l->in[0], l->in[1]->rank, l->in[1]->dims);
}

/* FlattenTo2DLayerParams axis = 1: [prod(:axis), prod(axis:)]. */
enum al_status nn_l_flatten_to_2d(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int64_t a = nn_pi(l->p, F(FlattenTo2D, axis), 1);
	if (a < 0)
		a += x->rank;
	if (a < 0 || a > x->rank)
		return nn_fail(l, AL_E_FORMAT, "axis %lld of a rank-%d input", (long long)nn_pi(l->p, F(FlattenTo2D, axis), 1),
			       x->rank);
	int64_t od[2] = {nn_prod(x->dims, 0, (int)a), nn_prod(x->dims, (int)a, x->rank)};
	return reshape_out(l, x, 2, od);
}

/* SqueezeLayerParams axes = 1, squeezeAll = 2 (rank 1 stays [1]). */
enum al_status nn_l_squeeze(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	uint32_t mask = 0;
	if (nn_pb(l->p, F(Squeeze, squeezeAll))) {
		for (int i = 0; i < x->rank; i++)
			if (x->dims[i] == 1)
				mask |= 1u << i;
	} else {
		int64_t a[NN_MAXV];
		long n = nn_pints(l->p, F(Squeeze, axes), a);
		if (n < 0 || n > NN_MAXV)
			return nn_fail(l, AL_E_FORMAT, "bad axes");
		for (long i = 0; i < n; i++) {
			int ax = nn_axis(a[i], x->rank);
			if (ax < 0)
				return nn_fail(l, AL_E_FORMAT, "axis %lld of a rank-%d input", (long long)a[i],
					       x->rank);
			if (x->dims[ax] != 1)
				return nn_fail(l, AL_E_FORMAT, "axis %d has size %lld, not 1", ax,
					       (long long)x->dims[ax]);
			mask |= 1u << ax;
		}
	}
	int64_t od[AL_TENSOR_MAX_RANK];
	int r = 0;
	for (int i = 0; i < x->rank; i++)
		if (!(mask >> i & 1))
			od[r++] = x->dims[i];
	if (r == 0)
		od[r++] = 1;
	return reshape_out(l, x, r, od);
}

/* ExpandDimsLayerParams axes = 1 (against the output rank). */
enum al_status nn_l_expand_dims(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int64_t a[NN_MAXV];
	long n = nn_pints(l->p, F(ExpandDims, axes), a);
	if (n < 1 || x->rank + n > AL_TENSOR_MAX_RANK)
		return nn_fail(l, AL_E_FORMAT, "%ld axes added to a rank-%d input", n, x->rank);
	int r = x->rank + (int)n;
	uint32_t mask = 0;
	for (long i = 0; i < n; i++) {
		int ax = nn_axis(a[i], r);
		if (ax < 0 || (mask >> ax & 1))
			return nn_fail(l, AL_E_FORMAT, "axis %lld", (long long)a[i]);
		mask |= 1u << ax;
	}
	int64_t od[AL_TENSOR_MAX_RANK];
	for (int i = 0, j = 0; i < r; i++)
		od[i] = mask >> i & 1 ? 1 : x->dims[j++];
	return reshape_out(l, x, r, od);
}

/* y = x with axes permuted (out dims[i] = x dims[perm[i]]) into out[o]. */
static enum al_status transpose_to(struct nn_layer *l, const struct al_tensor *x, int rank,
				   const int64_t *dims, const int *perm, int orank, const int64_t *odims,
				   uint32_t o)
{
	struct al_tensor *y = nn_alloc(l, orank, odims);
	if (!y)
		return AL_E_NOMEM;
	if (y->n)
		ali_transpose(x->f, rank, dims, perm, y->f);
	l->out[o] = y;
	return AL_OK;
}

/* TransposeLayerParams axes = 1. */
enum al_status nn_l_transpose(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int64_t a[NN_MAXV], od[AL_TENSOR_MAX_RANK];
	int perm[AL_TENSOR_MAX_RANK];
	long n = nn_pints(l->p, F(Transpose, axes), a);
	if (n != x->rank)
		return nn_fail(l, AL_E_FORMAT, "%ld axes for a rank-%d input", n, x->rank);
	uint32_t seen = 0;
	for (int i = 0; i < x->rank; i++) {
		if (a[i] < 0 || a[i] >= x->rank || (seen >> a[i] & 1))
			return nn_fail(l, AL_E_FORMAT, "axes are not a permutation");
		seen |= 1u << a[i];
		perm[i] = (int)a[i];
		od[i] = x->dims[a[i]];
	}
	return transpose_to(l, x, x->rank, x->dims, perm, x->rank, od, 0);
}

/* PermuteLayerParams axis = 1: a permutation of [0,1,2,3] over [Seq, C, H, W] of a
 * rank-5 blob; the batch axis stays. */
enum al_status nn_l_permute(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st || (st = nn_need_rank(l, l->in[0], 5, 5)))
		return st;
	const struct al_tensor *x = l->in[0];
	static const int pos[4] = {0, 2, 3, 4};
	int64_t a[NN_MAXV], od[5];
	long n = nn_pints(l->p, F(Permute, axis), a);
	if (n == 0)
		return reshape_out(l, x, 5, x->dims);
	if (n != 4)
		return nn_fail(l, AL_E_FORMAT, "axis must have 4 values");
	int perm[5] = {0, 1, 2, 3, 4};
	uint32_t seen = 0;
	for (int i = 0; i < 4; i++) {
		if (a[i] < 0 || a[i] > 3 || (seen >> a[i] & 1))
			return nn_fail(l, AL_E_FORMAT, "axis is not a permutation of [0,1,2,3]");
		seen |= 1u << a[i];
		perm[pos[i]] = pos[a[i]];
	}
	for (int i = 0; i < 5; i++)
		od[i] = x->dims[perm[i]];
	return transpose_to(l, x, 5, x->dims, perm, 5, od, 0);
}

/* FlattenLayerParams mode = 1 (CHANNEL_FIRST, CHANNEL_LAST):
 * [..., C, H, W] -> [..., C*H*W, 1, 1]; CHANNEL_LAST flattens in H, W, C order. */
enum al_status nn_l_flatten(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	struct nn_chw g;
	if ((st = nn_get_chw(l, x, &g)) != AL_OK)
		return st;
	int64_t mode = nn_pi(l->p, F(Flatten, mode), 0);
	if (mode != 0 && mode != 1)
		return nn_unsupported(l, "flatten mode %lld", (long long)mode);
	int64_t od[AL_TENSOR_MAX_RANK];
	memcpy(od, x->dims, sizeof od);
	od[x->rank - 3] = g.c * g.h * g.w, od[x->rank - 2] = 1, od[x->rank - 1] = 1;
	if (mode == 0)
		return reshape_out(l, x, x->rank, od);
	int64_t d4[4] = {g.n, g.c, g.h, g.w};
	int perm[4] = {0, 2, 3, 1};
	return transpose_to(l, x, 4, d4, perm, x->rank, od, 0);
}

/* ReshapeLayerParams targetShape = 1 ([C,H,W], or [Seq,C,H,W]), mode = 2
 * (CHANNEL_FIRST, CHANNEL_LAST) of a rank-5 [Seq, B, C, H, W] blob. */
enum al_status nn_l_reshape(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st || (st = nn_need_rank(l, l->in[0], 5, 5)))
		return st;
	const struct al_tensor *x = l->in[0];
	int64_t t[NN_MAXV], r[4];
	long n = nn_pints(l->p, F(Reshape, targetShape), t);
	int64_t mode = nn_pi(l->p, F(Reshape, mode), 0);
	if (n != 3 && n != 4)
		return nn_fail(l, AL_E_FORMAT, "targetShape must have 3 or 4 values");
	if (mode != 0 && mode != 1)
		return nn_unsupported(l, "reshape mode %lld", (long long)mode);
	int64_t S = x->dims[0], B = x->dims[1], nn_chw = nn_prod(x->dims, 2, 5);
	if (n == 4 && B != 1 && t[0] != S)
		return nn_unsupported(l, "a new sequence length with a batch of %lld", (long long)B);
	size_t per = (size_t)(n == 4 ? S * nn_chw : nn_chw);
	if ((st = target_shape(l, x, t, n, per, false, r)) != AL_OK)
		return st;
	int64_t od[5] = {n == 4 ? r[0] : S, B, r[n - 3], r[n - 2], r[n - 1]};
	if (mode == 0)
		return reshape_out(l, x, 5, od);
	/* CHANNEL_LAST: [S*B, C, H, W] -> [S*B, H, W, C], reinterpreted as
	 * [S'*B, H', W', C'] -> [S'*B, C', H', W'] */
	int64_t d4[4] = {S * B, x->dims[2], x->dims[3], x->dims[4]}, t4[4];
	int p1[4] = {0, 2, 3, 1}, p2[4] = {0, 3, 1, 2};
	struct al_tensor *tmp = nn_alloc(l, 4, (int64_t[4]){d4[0], d4[2], d4[3], d4[1]});
	size_t cnt;
	if (!tmp)
		return AL_E_NOMEM;
	if (!ali_dims_count(5, od, &cnt) || cnt != x->n) {
		ali_tensor_unref(tmp);
		return nn_fail(l, AL_E_FORMAT, "the target shape does not hold the input");
	}
	if (x->n)
		ali_transpose(x->f, 4, d4, p1, tmp->f);
	t4[0] = od[0] * od[1], t4[1] = od[3], t4[2] = od[4], t4[3] = od[2];
	st = transpose_to(l, tmp, 4, t4, p2, 5, od, 0);
	ali_tensor_unref(tmp);
	return st;
}

/* ReorganizeDataLayerParams mode = 1 (SPACE_TO_DEPTH, DEPTH_TO_SPACE,
 * PIXEL_SHUFFLE), blockSize = 2, as permutations of a rank-6 view. */
enum al_status nn_l_reorganize(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	struct nn_chw g;
	if ((st = nn_get_chw(l, x, &g)) != AL_OK)
		return st;
	int64_t mode = nn_pi(l->p, F(ReorganizeData, mode), 0);
	uint64_t bu = nn_pu(l->p, F(ReorganizeData, blockSize), 0);
	if (mode < 0 || mode > 2)
		return nn_unsupported(l, "reorganization mode %lld", (long long)mode);
	if (bu < 1 || bu > 65536)
		return nn_fail(l, AL_E_FORMAT, "blockSize %llu", (unsigned long long)bu);
	int64_t b = (int64_t)bu, d6[6], od[AL_TENSOR_MAX_RANK];
	if (g.c > NN_BIG / (b * b) || g.h > NN_BIG / b || g.w > NN_BIG / b)
		return nn_fail(l, AL_E_FORMAT, "blockSize %lld is too large", (long long)b);
	int perm[6];
	memcpy(od, x->dims, sizeof od);
	int r = x->rank;
	if (mode == 0) {
		if (g.h % b || g.w % b)
			return nn_fail(l, AL_E_FORMAT, "blockSize %lld does not divide %lldx%lld", (long long)b,
				       (long long)g.h, (long long)g.w);
		/* [N, C, H/b, b, W/b, b] -> [N, b, b, C, H/b, W/b] */
		int64_t v[6] = {g.n, g.c, g.h / b, b, g.w / b, b};
		int p[6] = {0, 3, 5, 1, 2, 4};
		memcpy(d6, v, sizeof d6);
		memcpy(perm, p, sizeof perm);
		od[r - 3] = g.c * b * b, od[r - 2] = g.h / b, od[r - 1] = g.w / b;
	} else {
		if (g.c % (b * b))
			return nn_fail(l, AL_E_FORMAT, "blockSize^2 = %lld does not divide %lld channels",
				       (long long)(b * b), (long long)g.c);
		int64_t co = g.c / (b * b);
		if (mode == 1) { /* [N, b, b, C', H, W] -> [N, C', H, b, W, b] */
			int64_t v[6] = {g.n, b, b, co, g.h, g.w};
			int p[6] = {0, 3, 4, 1, 5, 2};
			memcpy(d6, v, sizeof d6);
			memcpy(perm, p, sizeof perm);
		} else { /* [N, C', b, b, H, W] -> [N, C', H, b, W, b] */
			int64_t v[6] = {g.n, co, b, b, g.h, g.w};
			int p[6] = {0, 1, 4, 2, 5, 3};
			memcpy(d6, v, sizeof d6);
			memcpy(perm, p, sizeof perm);
		}
		od[r - 3] = co, od[r - 2] = g.h * b, od[r - 1] = g.w * b;
	}
	return transpose_to(l, x, 6, d6, perm, r, od, 0);
}

/* SequenceRepeatLayerParams nRepetitions = 1 (0 -> 1): axis -5 repeated. */
enum al_status nn_l_sequence_repeat(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st || (st = nn_need_rank(l, l->in[0], 5, AL_TENSOR_MAX_RANK)))
		return st;
	const struct al_tensor *x = l->in[0];
	uint64_t n = nn_pu(l->p, F(SequenceRepeat, nRepetitions), 1);
	if (n == 0)
		n = 1;
	int a = x->rank - 5;
	if (n > (uint64_t)NN_BIG || (x->dims[a] && (int64_t)n > NN_BIG / x->dims[a]))
		return nn_fail(l, AL_E_UNSUPPORTED, "%llu repetitions", (unsigned long long)n);
	int64_t od[AL_TENSOR_MAX_RANK];
	memcpy(od, x->dims, sizeof od);
	od[a] = x->dims[a] * (int64_t)n;
	struct al_tensor *y = nn_alloc(l, x->rank, od);
	if (!y)
		return AL_E_NOMEM;
	int64_t outer = nn_prod(x->dims, 0, a), block = nn_prod(x->dims, a, x->rank);
	for (int64_t o = 0; o < outer; o++)
		for (uint64_t k = 0; k < n; k++)
			memcpy(y->f + (o * (int64_t)n + (int64_t)k) * block, x->f + o * block,
			       (size_t)block * sizeof(float));
	l->out[0] = y;
	return AL_OK;
}

/* ReverseLayerParams reverseDim = 1 (one bool per axis). */
enum al_status nn_l_reverse(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int64_t rd[AL_TENSOR_MAX_RANK], begin[AL_TENSOR_MAX_RANK], stride[AL_TENSOR_MAX_RANK];
	if ((st = per_axis(l, 1, "reverseDim", x->rank, 0, rd)) != AL_OK)
		return st;
	for (int i = 0; i < x->rank; i++) {
		bool r = rd[i] && x->dims[i] > 0;
		begin[i] = r ? x->dims[i] - 1 : 0;
		stride[i] = r ? -1 : 1;
	}
	return slice_to(l, x, begin, stride, x->dims, x->rank, x->dims, 0);
}

/* ReverseSeqLayerParams batchAxis = 1, sequenceAxis = 2; the second input holds the
 * lengths [B] to reverse per batch element. */
enum al_status nn_l_reverse_seq(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 2, 2, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0], *len = l->in[1];
	int64_t bai = nn_pi(l->p, F(ReverseSeq, batchAxis), 0), sai = nn_pi(l->p, F(ReverseSeq, sequenceAxis), 0);
	int ba = nn_axis(bai, x->rank), sa = nn_axis(sai, x->rank);
	if (ba < 0 || sa < 0 || ba >= sa)
		return nn_fail(l, AL_E_FORMAT, "batchAxis %lld, sequenceAxis %lld",
			       (long long)bai, (long long)sai);
	if ((int64_t)len->n != x->dims[ba])
		return nn_fail(l, AL_E_FORMAT, "%zu lengths for a batch of %lld", len->n, (long long)x->dims[ba]);
	struct al_tensor *y = nn_reshaped(l, x, x->rank, x->dims);
	if (!y)
		return AL_E_NOMEM;
	int64_t o1 = nn_prod(x->dims, 0, ba), B = x->dims[ba], mid = nn_prod(x->dims, ba + 1, sa);
	int64_t S = x->dims[sa], inner = nn_prod(x->dims, sa + 1, x->rank);
	for (int64_t b = 0; b < B; b++) {
		int64_t n;
		if (!nn_f2i(len->f[b], &n) || n < 0 || n > S) {
			ali_tensor_unref(y);
			return nn_fail(l, AL_E_FORMAT, "sequence length %g of an axis of %lld", (double)len->f[b],
				       (long long)S);
		}
		for (int64_t o = 0; o < o1; o++)
			for (int64_t m = 0; m < mid; m++) {
				int64_t base = ((o * B + b) * mid + m) * S;
				for (int64_t s = 0; s < n; s++)
					memcpy(y->f + (base + s) * inner, x->f + (base + n - 1 - s) * inner,
					       (size_t)inner * sizeof(float));
			}
	}
	l->out[0] = y;
	return AL_OK;
}
