/* SPDX-License-Identifier: MIT */
/* interp_nn_gather.c: the NeuralNetwork layers that make or pick values rather
 * than move a tensor whole (interp_nn_data.c moves them): ranges, fills, shapes,
 * broadcasts, tile / stack, gather / scatter (plain, ND, along an axis), masks
 * and one-hot. Semantics from the comments of coremltools'
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

/* gatherAlongAxis and scatterAlongAxis number their axis alike (along_axis_shapes reads both) */
_Static_assert(AL_PB_GatherAlongAxisLayerParams_axis == AL_PB_ScatterAlongAxisLayerParams_axis, "axis");
#define ALONG_AXIS AL_PB_GatherAlongAxisLayerParams_axis
#define BAND(f) AL_PB_MatrixBandPartLayerParams_##f

/* ================================================================ generators */

/* arange(start, end, step) into out[0]. */
static enum al_status arange(struct nn_layer *l, float start, float end, float step)
{
	if (!isfinite(start) || !isfinite(end) || !isfinite(step) || step == 0.0f)
		return nn_fail(l, AL_E_FORMAT, "range %g to %g by %g", (double)start, (double)end, (double)step);
	double n = ceil(((double)end - (double)start) / (double)step);
	if (n < 0)
		n = 0;
	if (n > (double)NN_BIG)
		return nn_fail(l, AL_E_UNSUPPORTED, "a range of %.0f values", n);
	int64_t d = (int64_t)n;
	struct al_tensor *y = nn_alloc(l, 1, &d);
	if (!y)
		return AL_E_NOMEM;
	for (int64_t i = 0; i < d; i++)
		y->f[i] = (float)((double)start + (double)i * (double)step);
	l->out[0] = y;
	return AL_OK;
}

/* RangeStaticLayerParams endValue = 1, startValue = 2, stepSizeValue = 3. */
enum al_status nn_l_range_static(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 0, 0, 1, 1);
	if (st)
		return st;
	float start = nn_pf(l->p, AL_PB_RangeStaticLayerParams_startValue, 0.0f);
	float end = nn_pf(l->p, AL_PB_RangeStaticLayerParams_endValue, 0.0f);
	return arange(l, start, end, nn_pf(l->p, AL_PB_RangeStaticLayerParams_stepSizeValue, 0.0f));
}

/* RangeDynamicLayerParams startValue = 2, stepSizeValue = 3; inputs: end, then
 * optionally start and step. */
enum al_status nn_l_range_dynamic(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 3, 1, 1);
	if (st)
		return st;
	for (uint32_t i = 0; i < l->n_in; i++)
		if (l->in[i]->n != 1)
			return nn_fail(l, AL_E_FORMAT, "input %u must hold one value", i);
	float end = l->in[0]->f[0];
	float start = l->n_in > 1 ? l->in[1]->f[0] : nn_pf(l->p, AL_PB_RangeDynamicLayerParams_startValue, 0.0f);
	float step = l->n_in > 2 ? l->in[2]->f[0] : nn_pf(l->p, AL_PB_RangeDynamicLayerParams_stepSizeValue, 0.0f);
	return arange(l, start, end, step);
}

/* out[0] of shape dims filled with v. */
static enum al_status fill(struct nn_layer *l, int rank, const int64_t *dims, float v)
{
	struct al_tensor *y = nn_alloc(l, rank, dims);
	if (!y)
		return AL_E_NOMEM;
	for (size_t i = 0; i < y->n; i++)
		y->f[i] = v;
	l->out[0] = y;
	return AL_OK;
}

/* A shape from tensor t's values (each >= 0). */
static enum al_status shape_input(struct nn_layer *l, const struct al_tensor *t, int64_t *dims, int *rank)
{
	size_t n;
	enum al_status st = nn_tensor_ints(l, t, "the shape", dims, AL_TENSOR_MAX_RANK, &n);
	if (st)
		return st;
	for (size_t i = 0; i < n; i++)
		if (dims[i] < 0)
			return nn_fail(l, AL_E_FORMAT, "negative dimension %lld", (long long)dims[i]);
	*rank = (int)n;
	return AL_OK;
}

/* FillLikeLayerParams value = 1. */
enum al_status nn_l_fill_like(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	return st ? st : fill(l, l->in[0]->rank, l->in[0]->dims, nn_pf(l->p, AL_PB_FillLikeLayerParams_value, 0.0f));
}

/* FillStaticLayerParams value = 1, targetShape = 2. */
enum al_status nn_l_fill_static(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 0, 0, 1, 1);
	if (st)
		return st;
	int64_t v[NN_MAXV];
	long n = nn_pints(l->p, AL_PB_FillStaticLayerParams_targetShape, v);
	if (n < 1 || n > AL_TENSOR_MAX_RANK)
		return nn_unsupported(l, "a target shape of rank %ld", n);
	for (long i = 0; i < n; i++)
		if (v[i] < 0)
			return nn_fail(l, AL_E_FORMAT, "negative dimension %lld", (long long)v[i]);
	return fill(l, (int)n, v, nn_pf(l->p, AL_PB_FillStaticLayerParams_value, 0.0f));
}

/* FillDynamicLayerParams value = 1; the input holds the shape. */
enum al_status nn_l_fill_dynamic(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	int64_t d[NN_MAXV];
	int r;
	if ((st = shape_input(l, l->in[0], d, &r)) != AL_OK)
		return st;
	return fill(l, r, d, nn_pf(l->p, AL_PB_FillDynamicLayerParams_value, 0.0f));
}

/* GetShape: [rank] holding the input's dims. */
enum al_status nn_l_get_shape(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int64_t d = x->rank;
	struct al_tensor *y = nn_alloc(l, 1, &d);
	if (!y)
		return AL_E_NOMEM;
	for (int i = 0; i < x->rank; i++)
		y->f[i] = (float)x->dims[i];
	y->dtype = AL_DT_INT32; /* a shape: never rounded to fp16 */
	l->out[0] = y;
	return AL_OK;
}

/* x broadcast against shape (rank r dims d) into out[0]. */
static enum al_status broadcast_to(struct nn_layer *l, const struct al_tensor *x, int r, const int64_t *d)
{
	int ry;
	int64_t dy[AL_TENSOR_MAX_RANK];
	if (!ali_broadcast_shape(x->rank, x->dims, r, d, &ry, dy) || ry > AL_TENSOR_MAX_RANK) {
		char b0[160], b1[160];
		return nn_fail(l, AL_E_FORMAT, "%s does not broadcast to %s",
			       nn_dims_str(b0, sizeof b0, x->rank, x->dims), nn_dims_str(b1, sizeof b1, r, d));
	}
	struct al_tensor *y = nn_alloc(l, ry, dy);
	if (!y)
		return AL_E_NOMEM;
	if (y->n)
		ali_broadcast_to(x->f, x->rank, x->dims, y->f, ry, dy);
	l->out[0] = y;
	return AL_OK;
}

enum al_status nn_l_broadcast_to_like(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 2, 2, 1, 1);
	return st ? st : broadcast_to(l, l->in[0], l->in[1]->rank, l->in[1]->dims);
}

/* BroadcastToStaticLayerParams targetShape = 1. */
enum al_status nn_l_broadcast_to_static(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	int64_t v[NN_MAXV];
	long n = nn_pints(l->p, AL_PB_BroadcastToStaticLayerParams_targetShape, v);
	if (n < 0 || n > AL_TENSOR_MAX_RANK)
		return nn_unsupported(l, "a target shape of rank %ld", n);
	return broadcast_to(l, l->in[0], (int)n, v);
}

enum al_status nn_l_broadcast_to_dynamic(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 2, 2, 1, 1);
	if (st)
		return st;
	int64_t d[NN_MAXV];
	int r;
	if ((st = shape_input(l, l->in[1], d, &r)) != AL_OK)
		return st;
	return broadcast_to(l, l->in[0], r, d);
}

/* TileLayerParams reps = 1 (fewer than the rank: 1s prepended); a second input
 * gives the reps. x [.., d_i, ..] is broadcast as [.., r_i, d_i, ..] (axes with r_i
 * = 1 merged into their neighbours). */
enum al_status nn_l_tile(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 2, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int64_t reps[NN_MAXV], rr[AL_TENSOR_MAX_RANK];
	size_t n;
	if (l->n_in == 2) {
		if ((st = nn_tensor_ints(l, l->in[1], "reps", reps, AL_TENSOR_MAX_RANK, &n)) != AL_OK)
			return st;
	} else {
		long k = nn_pints(l->p, AL_PB_TileLayerParams_reps, reps);
		if (k < 0 || k > NN_MAXV)
			return nn_fail(l, AL_E_FORMAT, "bad reps");
		n = (size_t)k;
	}
	if (n < 1 || n > (size_t)x->rank)
		return nn_fail(l, AL_E_FORMAT, "%zu reps for a rank-%d input", n, x->rank);
	int64_t od[AL_TENSOR_MAX_RANK], src[2 * AL_TENSOR_MAX_RANK], dst[2 * AL_TENSOR_MAX_RANK];
	int k = 0;
	for (int i = 0; i < x->rank; i++) {
		int j = i - (x->rank - (int)n);
		rr[i] = j >= 0 ? reps[j] : 1;
		if (rr[i] < 1 || rr[i] > NN_BIG || (x->dims[i] && rr[i] > NN_BIG / x->dims[i]))
			return nn_fail(l, AL_E_FORMAT, "reps %lld", (long long)rr[i]);
		od[i] = x->dims[i] * rr[i];
		if (rr[i] > 1) {
			src[k] = 1, dst[k] = rr[i], k++;
			src[k] = x->dims[i], dst[k] = x->dims[i], k++;
		} else if (k > 0 && src[k - 1] == dst[k - 1]) { /* merge into the previous kept axis */
			src[k - 1] *= x->dims[i], dst[k - 1] *= x->dims[i];
		} else {
			src[k] = dst[k] = x->dims[i], k++;
		}
	}
	if (k > AL_TENSOR_MAX_RANK)
		return nn_unsupported(l, "tiling this many axes (%d after merging)", k);
	struct al_tensor *y = nn_alloc(l, x->rank, od);
	if (!y)
		return AL_E_NOMEM;
	if (y->n)
		ali_broadcast_to(x->f, k, src, y->f, k, dst);
	l->out[0] = y;
	return AL_OK;
}

/* StackLayerParams axis = 1: inputs of one shape along a new axis. */
enum al_status nn_l_stack(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 0, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x0 = l->in[0];
	if (x0->rank + 1 > AL_TENSOR_MAX_RANK)
		return nn_unsupported(l, "stacking rank-%d inputs", x0->rank);
	int a = nn_axis(nn_pi(l->p, AL_PB_StackLayerParams_axis, 0), x0->rank + 1);
	if (a < 0)
		return nn_fail(l, AL_E_FORMAT, "axis %lld", (long long)nn_pi(l->p, AL_PB_StackLayerParams_axis, 0));
	for (uint32_t i = 1; i < l->n_in; i++)
		if (l->in[i]->rank != x0->rank ||
		    memcmp(l->in[i]->dims, x0->dims, (size_t)x0->rank * sizeof *x0->dims) != 0)
			return nn_fail(l, AL_E_FORMAT, "stack takes inputs of one shape");
	int64_t od[AL_TENSOR_MAX_RANK];
	for (int i = 0, j = 0; i <= x0->rank; i++)
		od[i] = i == a ? (int64_t)l->n_in : x0->dims[j++];
	struct al_tensor *y = nn_alloc(l, x0->rank + 1, od);
	int64_t *sizes = ali_malloc(l->n_in * sizeof *sizes);
	const float **xs = ali_malloc(l->n_in * sizeof *xs);
	if (y && sizes && xs) {
		for (uint32_t i = 0; i < l->n_in; i++)
			sizes[i] = 1, xs[i] = l->in[i]->f;
		if (y->n)
			ali_concat(xs, sizes, (int)l->n_in, nn_prod(x0->dims, 0, a), nn_prod(x0->dims, a, x0->rank),
				  y->f);
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

/* ================================================================ gather / scatter */

/* GatherLayerParams axis = 1: data[..., idx, ...] with the indices' shape in place
 * of the axis. */
enum al_status nn_l_gather(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 2, 2, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0], *idx = l->in[1];
	int a = nn_axis(nn_pi(l->p, AL_PB_GatherLayerParams_axis, 0), x->rank);
	if (a < 0)
		return nn_fail(l, AL_E_FORMAT, "axis %lld of a rank-%d input",
			       (long long)nn_pi(l->p, AL_PB_GatherLayerParams_axis, 0),
			       x->rank);
	int orank = x->rank - 1 + idx->rank;
	if (orank > AL_TENSOR_MAX_RANK)
		return nn_unsupported(l, "an output of rank %d", orank);
	int64_t od[AL_TENSOR_MAX_RANK];
	int k = 0;
	for (int i = 0; i < a; i++)
		od[k++] = x->dims[i];
	for (int i = 0; i < idx->rank; i++)
		od[k++] = idx->dims[i];
	for (int i = a + 1; i < x->rank; i++)
		od[k++] = x->dims[i];
	struct al_tensor *y = nn_alloc(l, orank, od);
	if (!y)
		return AL_E_NOMEM;
	if (y->n && !ali_gather(x->f, nn_prod(x->dims, 0, a), x->dims[a], nn_prod(x->dims, a + 1, x->rank),
			       idx->f, (int64_t)idx->n, y->f)) {
		ali_tensor_unref(y);
		return nn_fail(l, AL_E_FORMAT, "an index is not an integer in [-%lld, %lld)",
			       (long long)x->dims[a], (long long)x->dims[a]);
	}
	l->out[0] = y;
	return AL_OK;
}

/* ScatterMode (UPDATE, ADD, SUB, MUL, DIV, MAX, MIN) -> kernels op. */
static bool scatter_op(int64_t mode, enum al_binop *op)
{
	static const enum al_binop ops[7] = {
		AL_BIN_COUNT, AL_BIN_ADD, AL_BIN_SUB, AL_BIN_MUL, AL_BIN_DIV, AL_BIN_MAX, AL_BIN_MIN,
	};
	if (mode < 0 || mode > 6)
		return false;
	*op = ops[mode];
	return true;
}

static float scatter_apply(enum al_binop op, float a, float b)
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

/* ScatterLayerParams axis = 1, mode = 2: inputs container, indices, updates
 * (container[:axis] + indices.shape + container[axis+1:]). */
enum al_status nn_l_scatter(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 3, 3, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0], *idx = l->in[1], *upd = l->in[2];
	int a = nn_axis(nn_pi(l->p, AL_PB_ScatterLayerParams_axis, 0), x->rank);
	enum al_binop op;
	if (a < 0)
		return nn_fail(l, AL_E_FORMAT, "axis %lld of a rank-%d input",
			       (long long)nn_pi(l->p, AL_PB_ScatterLayerParams_axis, 0),
			       x->rank);
	if (!scatter_op(nn_pi(l->p, AL_PB_ScatterLayerParams_mode, 0), &op))
		return nn_unsupported(l, "scatter mode %lld", (long long)nn_pi(l->p, AL_PB_ScatterLayerParams_mode, 0));
	int64_t outer = nn_prod(x->dims, 0, a), inner = nn_prod(x->dims, a + 1, x->rank);
	if ((int64_t)upd->n != outer * (int64_t)idx->n * inner)
		return nn_fail(l, AL_E_FORMAT, "%zu updates for %zu indices", upd->n, idx->n);
	struct al_tensor *y = nn_reshaped(l, x, x->rank, x->dims);
	if (!y)
		return AL_E_NOMEM;
	if (y->n && !ali_scatter(y->f, outer, x->dims[a], inner, idx->f, (int64_t)idx->n, upd->f, op)) {
		ali_tensor_unref(y);
		return nn_fail(l, AL_E_FORMAT, "an index is outside the axis of %lld", (long long)x->dims[a]);
	}
	l->out[0] = y;
	return AL_OK;
}

/* GatherND: params [rank r], indices [..., K] -> indices.shape[:-1] + params.shape[K:]. */
enum al_status nn_l_gather_nd(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 2, 2, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0], *idx = l->in[1];
	if (idx->rank < 1)
		return nn_fail(l, AL_E_FORMAT, "the indices must have rank >= 1");
	int64_t K = idx->dims[idx->rank - 1];
	if (K < 1 || K > x->rank)
		return nn_fail(l, AL_E_FORMAT, "index tuples of %lld for a rank-%d input", (long long)K, x->rank);
	int orank = idx->rank - 1 + x->rank - (int)K;
	if (orank > AL_TENSOR_MAX_RANK)
		return nn_unsupported(l, "an output of rank %d", orank);
	int64_t od[AL_TENSOR_MAX_RANK];
	int k = 0;
	for (int i = 0; i < idx->rank - 1; i++)
		od[k++] = idx->dims[i];
	for (int i = (int)K; i < x->rank; i++)
		od[k++] = x->dims[i];
	if (k == 0)
		od[k++] = 1;
	struct al_tensor *y = nn_alloc(l, k, od);
	if (!y)
		return AL_E_NOMEM;
	if (y->n && !ali_gather_nd(x->f, x->rank, x->dims, idx->f, (int64_t)idx->n / K, (int)K, y->f)) {
		ali_tensor_unref(y);
		return nn_fail(l, AL_E_FORMAT, "an index is out of range");
	}
	l->out[0] = y;
	return AL_OK;
}

/* ScatterNDLayerParams mode = 1: container, indices [..., K], updates
 * [indices.shape[:-1] + container.shape[K:]]. */
enum al_status nn_l_scatter_nd(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 3, 3, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0], *idx = l->in[1], *upd = l->in[2];
	enum al_binop op;
	if (!scatter_op(nn_pi(l->p, AL_PB_ScatterNDLayerParams_mode, 0), &op))
		return nn_unsupported(l, "scatter mode %lld", (long long)nn_pi(l->p, AL_PB_ScatterNDLayerParams_mode, 0));
	if (idx->rank < 1)
		return nn_fail(l, AL_E_FORMAT, "the indices must have rank >= 1");
	int64_t K = idx->dims[idx->rank - 1];
	if (K < 1 || K > x->rank)
		return nn_fail(l, AL_E_FORMAT, "index tuples of %lld for a rank-%d input", (long long)K, x->rank);
	int64_t m = (int64_t)idx->n / K, slice = nn_prod(x->dims, (int)K, x->rank);
	if ((int64_t)upd->n != m * slice)
		return nn_fail(l, AL_E_FORMAT, "%zu updates for %lld slices of %lld", upd->n, (long long)m,
			       (long long)slice);
	struct al_tensor *y = nn_reshaped(l, x, x->rank, x->dims);
	if (!y)
		return AL_E_NOMEM;
	for (int64_t j = 0; j < m; j++) {
		int64_t off = 0;
		for (int64_t k = 0; k < K; k++) {
			int64_t v, d = x->dims[k];
			if (!nn_f2i(idx->f[j * K + k], &v) || v < -d || v >= d) {
				ali_tensor_unref(y);
				return nn_fail(l, AL_E_FORMAT, "an index is out of range");
			}
			off = off * d + (v < 0 ? v + d : v);
		}
		for (int64_t i = 0; i < slice; i++)
			y->f[off * slice + i] = scatter_apply(op, y->f[off * slice + i], upd->f[j * slice + i]);
	}
	l->out[0] = y;
	return AL_OK;
}

/* data and indices of one rank, equal dims except axis a. */
static enum al_status along_axis_shapes(struct nn_layer *l, const struct al_tensor *x,
					const struct al_tensor *idx, int *a)
{
	*a = nn_axis(nn_pi(l->p, ALONG_AXIS, 0), x->rank);
	if (*a < 0)
		return nn_fail(l, AL_E_FORMAT, "axis %lld of a rank-%d input", (long long)nn_pi(l->p, ALONG_AXIS, 0),
			       x->rank);
	bool ok = idx->rank == x->rank;
	for (int i = 0; ok && i < x->rank; i++)
		ok = i == *a || idx->dims[i] == x->dims[i];
	if (!ok) {
		char b0[160], b1[160];
		return nn_fail(l, AL_E_FORMAT, "indices of shape %s do not fit data of shape %s",
			       nn_dims_str(b0, sizeof b0, idx->rank, idx->dims),
			       nn_dims_str(b1, sizeof b1, x->rank, x->dims));
	}
	return AL_OK;
}

/* GatherAlongAxisLayerParams axis = 1. */
enum al_status nn_l_gather_along_axis(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 2, 2, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0], *idx = l->in[1];
	int a;
	if ((st = along_axis_shapes(l, x, idx, &a)) != AL_OK)
		return st;
	struct al_tensor *y = nn_alloc(l, idx->rank, idx->dims);
	if (!y)
		return AL_E_NOMEM;
	if (y->n && !ali_gather_along_axis(x->f, nn_prod(x->dims, 0, a), x->dims[a],
					  nn_prod(x->dims, a + 1, x->rank), idx->f, idx->dims[a], y->f)) {
		ali_tensor_unref(y);
		return nn_fail(l, AL_E_FORMAT, "an index is not an integer in [-%lld, %lld)",
			       (long long)x->dims[a], (long long)x->dims[a]);
	}
	l->out[0] = y;
	return AL_OK;
}

/* ScatterAlongAxisLayerParams axis = 1, mode = 2: container, indices, updates (of
 * the indices' shape). */
enum al_status nn_l_scatter_along_axis(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 3, 3, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0], *idx = l->in[1], *upd = l->in[2];
	int a;
	enum al_binop op;
	if ((st = along_axis_shapes(l, x, idx, &a)) != AL_OK)
		return st;
	if (!scatter_op(nn_pi(l->p, AL_PB_ScatterAlongAxisLayerParams_mode, 0), &op))
		return nn_unsupported(l, "scatter mode %lld", (long long)nn_pi(l->p, AL_PB_ScatterAlongAxisLayerParams_mode, 0));
	if (upd->n != idx->n)
		return nn_fail(l, AL_E_FORMAT, "%zu updates for %zu indices", upd->n, idx->n);
	struct al_tensor *y = nn_reshaped(l, x, x->rank, x->dims);
	if (!y)
		return AL_E_NOMEM;
	int64_t outer = nn_prod(x->dims, 0, a), inner = nn_prod(x->dims, a + 1, x->rank);
	int64_t d = x->dims[a], n = idx->dims[a];
	for (int64_t o = 0; o < outer; o++)
		for (int64_t j = 0; j < n; j++)
			for (int64_t i = 0; i < inner; i++) {
				int64_t q = (o * n + j) * inner + i, v;
				if (!nn_f2i(idx->f[q], &v) || v < -d || v >= d) {
					ali_tensor_unref(y);
					return nn_fail(l, AL_E_FORMAT, "an index is outside the axis of %lld",
						       (long long)d);
				}
				float *t = &y->f[(o * d + (v < 0 ? v + d : v)) * inner + i];
				*t = scatter_apply(op, *t, upd->f[q]);
			}
	l->out[0] = y;
	return AL_OK;
}

/* ================================================================ masks and indices */

/* WhereNonZero: [number of non-zeros, rank] of their indices. */
enum al_status nn_l_where_nonzero(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int64_t nz = 0;
	for (size_t i = 0; i < x->n; i++)
		nz += x->f[i] != 0.0f;
	int64_t od[2] = {nz, x->rank};
	struct al_tensor *y = nn_alloc(l, 2, od);
	if (!y)
		return AL_E_NOMEM;
	int64_t k = 0;
	for (size_t i = 0; i < x->n; i++) {
		if (x->f[i] == 0.0f)
			continue;
		size_t rem = i;
		for (int a = x->rank - 1; a >= 0; a--) {
			y->f[k * x->rank + a] = (float)(rem % (size_t)x->dims[a]);
			rem /= (size_t)x->dims[a];
		}
		k++;
	}
	y->dtype = AL_DT_INT32;
	l->out[0] = y;
	return AL_OK;
}

/* MatrixBandPart (numLower = 1, numUpper = 2), LowerTriangular (k = 1),
 * UpperTriangular (k = 1): zero outside a band of the last two axes. */
enum al_status nn_l_band_part(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 1, 1, 1);
	if (st || (st = nn_need_rank(l, l->in[0], 2, AL_TENSOR_MAX_RANK)))
		return st;
	const struct al_tensor *x = l->in[0];
	int kind = l->n->kind;
	_Static_assert(AL_PB_LowerTriangularLayerParams_k == AL_PB_UpperTriangularLayerParams_k, "k");
	int64_t lo = nn_pi(l->p, BAND(numLower), 0), hi = nn_pi(l->p, BAND(numUpper), 0);
	int64_t k = nn_pi(l->p, AL_PB_LowerTriangularLayerParams_k, 0);
	struct al_tensor *y = nn_alloc(l, x->rank, x->dims);
	if (!y)
		return AL_E_NOMEM;
	int64_t M = x->dims[x->rank - 2], N = x->dims[x->rank - 1];
	int64_t outer = M * N != 0 ? (int64_t)x->n / (M * N) : 0;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < N; j++) {
				bool keep;
				if (kind == AL_NNK_matrixBandPart)
					keep = (lo < 0 || i - j <= lo) && (hi < 0 || j - i <= hi);
				else if (kind == AL_NNK_lowerTriangular)
					keep = j - i <= k;
				else
					keep = j - i >= k;
				int64_t q = (o * M + i) * N + j;
				y->f[q] = keep ? x->f[q] : 0.0f;
			}
	l->out[0] = y;
	return AL_OK;
}

/* OneHotLayerParams oneHotVectorSize = 1, axis = 2 (of the output), onValue = 3,
 * offValue = 4; a second input gives the size. */
enum al_status nn_l_one_hot(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 2, 1, 1);
	if (st)
		return st;
	const struct al_tensor *x = l->in[0];
	int64_t depth = (int64_t)(nn_pu(l->p, AL_PB_OneHotLayerParams_oneHotVectorSize, 0) & INT64_MAX);
	if (l->n_in == 2 && (l->in[1]->n < 1 || !nn_f2i(l->in[1]->f[0], &depth)))
		return nn_fail(l, AL_E_FORMAT, "the size input holds no size");
	if (depth < 1 || depth > NN_BIG || x->rank + 1 > AL_TENSOR_MAX_RANK)
		return nn_fail(l, AL_E_FORMAT, "one-hot size %lld for a rank-%d input", (long long)depth, x->rank);
	int a = nn_axis(nn_pi(l->p, AL_PB_OneHotLayerParams_axis, -1), x->rank + 1);
	if (a < 0)
		return nn_fail(l, AL_E_FORMAT, "axis %lld", (long long)nn_pi(l->p, AL_PB_OneHotLayerParams_axis, -1));
	int64_t od[AL_TENSOR_MAX_RANK];
	for (int i = 0, j = 0; i <= x->rank; i++)
		od[i] = i == a ? depth : x->dims[j++];
	float on = nn_pf(l->p, AL_PB_OneHotLayerParams_onValue, 0.0f);
	float off = nn_pf(l->p, AL_PB_OneHotLayerParams_offValue, 0.0f);
	struct al_tensor *y = nn_alloc(l, x->rank + 1, od);
	if (!y)
		return AL_E_NOMEM;
	int64_t outer = nn_prod(x->dims, 0, a), inner = nn_prod(x->dims, a, x->rank);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			int64_t v = -1;
			bool ok = nn_f2i(x->f[o * inner + i], &v);
			for (int64_t d = 0; d < depth; d++)
				y->f[(o * depth + d) * inner + i] = ok && v == d ? on : off;
		}
	l->out[0] = y;
	return AL_OK;
}
