/* SPDX-License-Identifier: MIT */
/* kernels_elem.c: elementwise kernels (unary ops, broadcasting binary ops,
 * select, broadcast_to), reductions over any set of axes, and the
 * normalisations (softmax, layer norm, channel affine, l2 normalise, LRN).
 * Contract: kernels.h.
 *
 * Broadcasting never divides per element: the shapes are collapsed (size-1
 * axes dropped, axes merged where every operand is contiguous across them) and
 * walked with an odometer over all axes but the last; the last axis is a run
 * whose operand strides are 0 or 1, special-cased in the inner loops.
 * Reductions accumulate in double; they and the softmaxes process 64 lanes of
 * the contiguous inner axis at a time from stack buffers, so nothing here
 * allocates and nothing can fail.
 */
#include "kernels.h"
#include "analysis.h"

#include <math.h>
#include <string.h>

#define AL_BC_MAX 8 /* largest rank ali_broadcast_shape accepts */
#define AL_BC_WALK AL_MAX_RANK /* largest rank the walk handles (beyond: no-op) */

/* ================================================================== unary */

static float sigmoidf(float v)
{
	return 1.0f / (1.0f + expf(-v));
}

static float softplusf(float v)
{
	/* log(1 + e^v) without overflow: v + log1p(e^-v) for v > 0. */
	return v > 0.0f ? v + log1pf(expf(-v)) : log1pf(expf(v));
}

/* erf for exact GELU, branch-free so the loop vectorises (libm's erff is a
 * call per element: 12% of the transformer encoder's time in bench-interp, the
 * GELU loop around it another 6%). x clamped to [-4, 4] (erf is +-1 in float
 * beyond; a NaN x stays NaN through the product with x), then
 * erf(x) = x P(x^2) / Q(x^2) with the degree-13 / 8 rational minimax
 * coefficients Eigen and XLA use for float erf. Measured against double
 * erf on [-8, 8] in steps of 1e-4: max absolute error 4.5e-7 (libm's erff:
 * ~1e-7); in GELU that is below 2.3e-7 |x|, far inside the 1e-4 tolerance. */
static float erf_clamped(float x)
{
	float x2 = x * x;
	float p = -2.72614225801306e-10f;
	p = p * x2 + 2.77068142495902e-08f;
	p = p * x2 - 2.10102402082508e-06f;
	p = p * x2 - 5.69250639462346e-05f;
	p = p * x2 - 7.34990630326855e-04f;
	p = p * x2 - 2.95459980854025e-03f;
	p = p * x2 - 1.60960333262415e-02f;
	float q = -1.45660718464996e-05f;
	q = q * x2 - 2.13374055278905e-04f;
	q = q * x2 - 1.68282697438203e-03f;
	q = q * x2 - 7.37332916720468e-03f;
	q = q * x2 - 1.42647390514189e-02f;
	return x * p / q;
}

/* Its own function, in blocks: the clamp in one loop and the rational in
 * another (GCC vectorises neither inside ali_unary's switch, nor the two in one
 * loop: "control flow in loop"); the block buffer keeps y == x allowed. */
__attribute__((noinline)) static void gelu_erf(const float *x, float *y, size_t n)
{
	enum { B = 256 };
	float t[B];
	for (size_t i0 = 0; i0 < n; i0 += B) {
		size_t m = n - i0 < B ? n - i0 : B;
		for (size_t i = 0; i < m; i++) {
			float c = x[i0 + i] * 0.70710678118654752f;
			c = c < 4.0f ? c : 4.0f;
			t[i] = c > -4.0f ? c : -4.0f;
		}
		for (size_t i = 0; i < m; i++)
			y[i0 + i] = 0.5f * x[i0 + i] * (1.0f + erf_clamped(t[i]));
	}
}

static void unary_run(enum al_unop op, float a, float b, const float *x, float *y, size_t n);

struct un_job {
	enum al_unop op;
	float a, b;
	const float *x;
	float *y;
	size_t n;
};

static void un_part(void *arg, int part, int parts)
{
	const struct un_job *j = arg;
	size_t lo = j->n * (size_t)part / (size_t)parts, hi = j->n * (size_t)(part + 1) / (size_t)parts;
	unary_run(j->op, j->a, j->b, j->x + lo, j->y + lo, hi - lo);
}

/* Split over the pool from ~20 us of work (cheap ops ~0.5 ns a value, the
 * transcendental ones several). */
void ali_unary(enum al_unop op, float a, float b, const float *x, float *y, size_t n)
{
	bool cheap = op == AL_UN_IDENTITY || op == AL_UN_RELU || op == AL_UN_ABS ||
		     op == AL_UN_NEG || op == AL_UN_LINEAR || op == AL_UN_CLIP ||
		     op == AL_UN_LEAKY_RELU || op == AL_UN_THRESHOLD || op == AL_UN_SQUARE;
	struct un_job j = {op, a, b, x, y, n};
	ali_pool_run(ali_pool_parts((double)n, cheap ? 0.5 : 5.0), un_part, &j);
}

static void unary_run(enum al_unop op, float a, float b, const float *x, float *y, size_t n)
{
#define UN(EXPR)                                 \
	for (size_t i = 0; i < n; i++) {         \
		float v = x[i];                  \
		y[i] = (EXPR);                   \
	}                                        \
	break
	switch (op) {
	case AL_UN_IDENTITY: UN(v);
	case AL_UN_RELU: UN(v < 0.0f ? 0.0f : v);
	case AL_UN_SIGMOID: UN(sigmoidf(v));
	case AL_UN_TANH: UN(tanhf(v));
	case AL_UN_EXP: UN(expf(v));
	case AL_UN_EXP2: UN(exp2f(v));
	case AL_UN_LOG: UN(logf(v));
	case AL_UN_SQRT: UN(sqrtf(v));
	case AL_UN_RSQRT: UN(1.0f / sqrtf(v));
	case AL_UN_ABS: UN(fabsf(v));
	case AL_UN_NEG: UN(-v);
	case AL_UN_RECIP: UN(1.0f / v);
	case AL_UN_FLOOR: UN(floorf(v));
	case AL_UN_CEIL: UN(ceilf(v));
	case AL_UN_ROUND: UN(roundf(v));
	case AL_UN_SIGN: UN(v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v);
	case AL_UN_SIN: UN(sinf(v));
	case AL_UN_COS: UN(cosf(v));
	case AL_UN_TAN: UN(tanf(v));
	case AL_UN_ASIN: UN(asinf(v));
	case AL_UN_ACOS: UN(acosf(v));
	case AL_UN_ATAN: UN(atanf(v));
	case AL_UN_SINH: UN(sinhf(v));
	case AL_UN_COSH: UN(coshf(v));
	case AL_UN_ASINH: UN(asinhf(v));
	case AL_UN_ACOSH: UN(acoshf(v));
	case AL_UN_ATANH: UN(atanhf(v));
	case AL_UN_ERF: UN(erff(v));
	case AL_UN_SQUARE: UN(v * v);
	case AL_UN_CUBE: UN(v * v * v);
	case AL_UN_LOGICAL_NOT: UN(v == 0.0f ? 1.0f : 0.0f);
	case AL_UN_GELU_ERF:
		gelu_erf(x, y, n);
		break;
	case AL_UN_GELU_TANH:
		UN(0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v))));
	case AL_UN_GELU_SIGMOID: UN(v * sigmoidf(1.702f * v));
	case AL_UN_SILU: UN(v * sigmoidf(v));
	case AL_UN_SOFTPLUS: UN(softplusf(v));
	case AL_UN_SOFTSIGN: UN(v / (1.0f + fabsf(v)));
	case AL_UN_LINEAR: UN(a * v + b);
	case AL_UN_LEAKY_RELU: UN(v >= 0.0f ? v : a * v);
	case AL_UN_ELU: UN(v >= 0.0f ? v : a * expm1f(v));
	case AL_UN_THRESHOLDED_RELU: UN(v > a ? v : 0.0f);
	case AL_UN_SCALED_TANH: UN(a * tanhf(b * v));
	case AL_UN_SIGMOID_HARD: {
		UN(fminf(fmaxf(a * v + b, 0.0f), 1.0f));
	}
	case AL_UN_CLIP: UN(v < a ? a : v > b ? b : v);
	case AL_UN_POW: UN(powf(v, a));
	case AL_UN_SOFTPLUS_PARAM: UN(a * softplusf(b * v));
	case AL_UN_THRESHOLD: UN(v < a ? a : v);
	case AL_UN_INVERSE_EPS: UN(1.0f / (v + a));
	case AL_UN_LOG_EPS: UN(logf(v + a));
	case AL_UN_RSQRT_EPS: UN(1.0f / sqrtf(v + a));
	case AL_UN_COUNT:
	default:
		/* not an op: copy, so the output is at least defined */
		UN(v);
	}
#undef UN
}

/* ================================================================== broadcasting */

bool ali_broadcast_shape(int ra, const int64_t *da, int rb, const int64_t *db, int *ry,
			int64_t *dy)
{
	if (ra < 0 || rb < 0 || ra > AL_BC_MAX || rb > AL_BC_MAX)
		return false;
	int r = ra > rb ? ra : rb;
	for (int i = 0; i < r; i++) {
		int ia = i - (r - ra), ib = i - (r - rb);
		int64_t a = ia >= 0 ? da[ia] : 1, b = ib >= 0 ? db[ib] : 1;
		if (a == b || b == 1)
			dy[i] = a;
		else if (a == 1)
			dy[i] = b;
		else
			return false;
	}
	*ry = r;
	return true;
}

/* A collapsed broadcast walk over up to 3 operands. */
struct bcast {
	int r;                 /* >= 1 */
	int64_t dims[AL_BC_WALK];
	int64_t st[3][AL_BC_WALK]; /* element strides of each operand per axis (0 = broadcast) */
	size_t outer;          /* product of dims[0 .. r-2] */
	int64_t inner;         /* dims[r-1] */
};

/* False when the output is empty. */
static bool bc_setup(struct bcast *bc, int nops, const int *rk, const int64_t *const *dk, int ry,
		     const int64_t *dy)
{
	int64_t st[3][AL_BC_WALK];
	if (ry < 0 || ry > AL_BC_WALK)
		return false;
	for (int k = 0; k < nops; k++)
		if (rk[k] < 0 || rk[k] > ry)
			return false;
	for (int i = 0; i < ry; i++)
		if (dy[i] <= 0)
			return false;
	for (int k = 0; k < nops; k++) {
		int64_t s = 1;
		for (int i = ry - 1; i >= 0; i--) {
			int j = i - (ry - rk[k]);
			int64_t d = j >= 0 ? dk[k][j] : 1;
			st[k][i] = d == 1 ? 0 : s;
			s *= d;
		}
	}
	int r = 0;
	for (int i = 0; i < ry; i++) {
		if (dy[i] == 1)
			continue;
		bool merge = r > 0;
		for (int k = 0; k < nops && merge; k++)
			merge = st[k][i] * dy[i] == bc->st[k][r - 1] ||
				(st[k][i] == 0 && bc->st[k][r - 1] == 0);
		if (merge && r > 0) {
			/* axis r-1 then i, both contiguous-compatible: one axis */
			bc->dims[r - 1] *= dy[i];
			for (int k = 0; k < nops; k++)
				bc->st[k][r - 1] = st[k][i];
			continue;
		}
		bc->dims[r] = dy[i];
		for (int k = 0; k < nops; k++)
			bc->st[k][r] = st[k][i];
		r++;
	}
	if (r == 0) {
		bc->dims[0] = 1;
		for (int k = 0; k < nops; k++)
			bc->st[k][0] = 0;
		r = 1;
	}
	bc->r = r;
	bc->outer = 1;
	for (int i = 0; i + 1 < r; i++)
		bc->outer *= (size_t)bc->dims[i];
	bc->inner = bc->dims[r - 1];
	return true;
}

/* Advance the odometer over axes 0 .. r-2, keeping each operand's offset. */
static void bc_next(const struct bcast *bc, int nops, int64_t *idx, int64_t *off)
{
	for (int ax = bc->r - 2; ax >= 0; ax--) {
		idx[ax]++;
		for (int k = 0; k < nops; k++)
			off[k] += bc->st[k][ax];
		if (idx[ax] < bc->dims[ax])
			return;
		for (int k = 0; k < nops; k++)
			off[k] -= bc->st[k][ax] * bc->dims[ax];
		idx[ax] = 0;
	}
}

static float fmod_floor(float u, float v)
{
	float r = fmodf(u, v);
	if (r != 0.0f && ((r < 0.0f) != (v < 0.0f)))
		r += v;
	return r;
}

/* y[i] = a[i*sa] op b[i*sb] for i < n; sa, sb in {0, 1} get their own loops. */
static void bin_run(enum al_binop op, const float *a, int64_t sa, const float *b, int64_t sb,
		    float *y, int64_t n)
{
#define BIN(EXPR)                                                        \
	if (sa == 1 && sb == 1) {                                        \
		for (int64_t i = 0; i < n; i++) {                        \
			float u = a[i], v = b[i];                        \
			y[i] = (EXPR);                                   \
		}                                                        \
	} else if (sa == 0 && sb == 1) {                                 \
		float u = a[0];                                          \
		for (int64_t i = 0; i < n; i++) {                        \
			float v = b[i];                                  \
			y[i] = (EXPR);                                   \
		}                                                        \
	} else if (sa == 1 && sb == 0) {                                 \
		float v = b[0];                                          \
		for (int64_t i = 0; i < n; i++) {                        \
			float u = a[i];                                  \
			y[i] = (EXPR);                                   \
		}                                                        \
	} else {                                                         \
		for (int64_t i = 0; i < n; i++) {                        \
			float u = a[i * sa], v = b[i * sb];              \
			y[i] = (EXPR);                                   \
		}                                                        \
	}                                                                \
	break
	switch (op) {
	case AL_BIN_ADD: BIN(u + v);
	case AL_BIN_SUB: BIN(u - v);
	case AL_BIN_MUL: BIN(u * v);
	case AL_BIN_DIV: BIN(u / v);
	case AL_BIN_FLOOR_DIV: BIN(floorf(u / v));
	case AL_BIN_MOD: BIN(fmod_floor(u, v));
	case AL_BIN_POW: BIN(powf(u, v));
	case AL_BIN_MAX: BIN(u > v || isnan(u) ? u : v);
	case AL_BIN_MIN: BIN(u < v || isnan(u) ? u : v);
	case AL_BIN_EQ: BIN(u == v ? 1.0f : 0.0f);
	case AL_BIN_NE: BIN(u != v ? 1.0f : 0.0f);
	case AL_BIN_LT: BIN(u < v ? 1.0f : 0.0f);
	case AL_BIN_LE: BIN(u <= v ? 1.0f : 0.0f);
	case AL_BIN_GT: BIN(u > v ? 1.0f : 0.0f);
	case AL_BIN_GE: BIN(u >= v ? 1.0f : 0.0f);
	case AL_BIN_AND: BIN(u != 0.0f && v != 0.0f ? 1.0f : 0.0f);
	case AL_BIN_OR: BIN(u != 0.0f || v != 0.0f ? 1.0f : 0.0f);
	case AL_BIN_XOR: BIN((u != 0.0f) != (v != 0.0f) ? 1.0f : 0.0f);
	case AL_BIN_COUNT:
	default:
		BIN(u + 0.0f * v);
	}
#undef BIN
}

/* The odometer of bc_next set to outer row o. */
static void bc_seek(const struct bcast *bc, int nops, size_t o, int64_t *idx, int64_t *off)
{
	for (int k = 0; k < nops; k++)
		off[k] = 0;
	for (int ax = bc->r - 2; ax >= 0; ax--) {
		idx[ax] = (int64_t)(o % (size_t)bc->dims[ax]);
		o /= (size_t)bc->dims[ax];
		for (int k = 0; k < nops; k++)
			off[k] += idx[ax] * bc->st[k][ax];
	}
}

struct bin_job {
	enum al_binop op;
	const float *a, *b;
	float *y;
	const struct bcast *bc;
};

/* Part of a binary op: a band of outer rows, or of the one row's elements. */
static void bin_part(void *arg, int part, int parts)
{
	const struct bin_job *j = arg;
	const struct bcast *bc = j->bc;
	int64_t sa = bc->st[0][bc->r - 1], sb = bc->st[1][bc->r - 1];
	if (bc->outer == 1) {
		int64_t lo = bc->inner * part / parts, hi = bc->inner * (part + 1) / parts;
		bin_run(j->op, j->a + lo * sa, sa, j->b + lo * sb, sb, j->y + lo, hi - lo);
		return;
	}
	size_t o0 = bc->outer * (size_t)part / (size_t)parts,
	       o1 = bc->outer * (size_t)(part + 1) / (size_t)parts;
	int64_t idx[AL_BC_WALK] = {0}, off[2] = {0, 0};
	bc_seek(bc, 2, o0, idx, off);
	float *y = j->y + o0 * (size_t)bc->inner;
	for (size_t o = o0; o < o1; o++) {
		bin_run(j->op, j->a + off[0], sa, j->b + off[1], sb, y, bc->inner);
		y += bc->inner;
		bc_next(bc, 2, idx, off);
	}
}

void ali_binary(enum al_binop op, const float *a, int ra, const int64_t *da, const float *b,
	       int rb, const int64_t *db, float *y, int ry, const int64_t *dy)
{
	struct bcast bc;
	const int rk[2] = {ra, rb};
	const int64_t *dk[2] = {da, db};
	if (!bc_setup(&bc, 2, rk, dk, ry, dy))
		return;
	struct bin_job j = {op, a, b, y, &bc};
	int parts = ali_pool_parts((double)bc.outer * (double)bc.inner, 0.5);
	if (bc.outer > 1 && (size_t)parts > bc.outer)
		parts = (int)bc.outer;
	ali_pool_run(parts, bin_part, &j);
}

void ali_select(const float *cond, int rc, const int64_t *dc, const float *a, int ra,
	       const int64_t *da, const float *b, int rb, const int64_t *db, float *y, int ry,
	       const int64_t *dy)
{
	struct bcast bc;
	const int rk[3] = {rc, ra, rb};
	const int64_t *dk[3] = {dc, da, db};
	if (!bc_setup(&bc, 3, rk, dk, ry, dy))
		return;
	int64_t idx[AL_BC_WALK] = {0}, off[3] = {0, 0, 0};
	int64_t sc = bc.st[0][bc.r - 1], sa = bc.st[1][bc.r - 1], sb = bc.st[2][bc.r - 1];
	for (size_t o = 0; o < bc.outer; o++) {
		const float *c = cond + off[0], *u = a + off[1], *v = b + off[2];
		for (int64_t i = 0; i < bc.inner; i++)
			y[i] = c[i * sc] != 0.0f ? u[i * sa] : v[i * sb];
		y += bc.inner;
		bc_next(&bc, 3, idx, off);
	}
}

void ali_broadcast_to(const float *x, int rx, const int64_t *dx, float *y, int ry,
		     const int64_t *dy)
{
	struct bcast bc;
	const int rk[1] = {rx};
	const int64_t *dk[1] = {dx};
	if (!bc_setup(&bc, 1, rk, dk, ry, dy))
		return;
	int64_t idx[AL_BC_WALK] = {0}, off[1] = {0};
	int64_t s = bc.st[0][bc.r - 1];
	for (size_t o = 0; o < bc.outer; o++) {
		const float *u = x + off[0];
		if (s == 1) {
			memcpy(y, u, (size_t)bc.inner * sizeof *y);
		} else {
			float v = u[0];
			for (int64_t i = 0; i < bc.inner; i++)
				y[i] = v;
		}
		y += bc.inner;
		bc_next(&bc, 1, idx, off);
	}
}

/* ================================================================== reductions */

#define LANES 64
#define RED_SUMEXP AL_RED_COUNT /* internal: sum of exp(x - shift) */

/* Reduced axes after collapsing, and how to walk them. */
struct red_geom {
	int nr;                  /* reduced groups walked by the odometer */
	int64_t rd[AL_MAX_RANK], rs[AL_MAX_RANK]; /* their sizes and x strides */
	int64_t run;             /* > 1: the innermost reduced group is contiguous and
				  * walked as a run (only with one lane) */
	size_t count;            /* number of odometer positions */
};

static void red_init(int op, double *acc, int64_t *ai, int n)
{
	double v0 = op == AL_RED_PROD ? 1.0 : op == AL_RED_MAX ? -INFINITY
					       : op == AL_RED_MIN ? INFINITY : 0.0;
	for (int l = 0; l < n; l++) {
		acc[l] = v0;
		ai[l] = -1;
	}
}

/* Accumulate xs[0 .. len) (contiguous) into the single accumulator *acc;
 * index base for argmax/argmin. */
static void red_run(int op, double *acc, int64_t *ai, const float *xs, int64_t len, int64_t base,
		    double shift)
{
	double s = *acc;
	switch (op) {
	case AL_RED_SUM:
	case AL_RED_MEAN:
		for (int64_t j = 0; j < len; j++)
			s += xs[j];
		break;
	case AL_RED_PROD:
		for (int64_t j = 0; j < len; j++)
			s *= xs[j];
		break;
	case AL_RED_MAX:
		for (int64_t j = 0; j < len; j++)
			if (xs[j] > s || isnan(xs[j]))
				s = xs[j];
		break;
	case AL_RED_MIN:
		for (int64_t j = 0; j < len; j++)
			if (xs[j] < s || isnan(xs[j]))
				s = xs[j];
		break;
	case AL_RED_L1:
		for (int64_t j = 0; j < len; j++)
			s += fabsf(xs[j]);
		break;
	case AL_RED_L2:
	case AL_RED_SUMSQUARE:
		for (int64_t j = 0; j < len; j++)
			s += (double)xs[j] * xs[j];
		break;
	case AL_RED_LOGSUM:
		for (int64_t j = 0; j < len; j++)
			s += xs[j];
		break;
	case RED_SUMEXP:
		for (int64_t j = 0; j < len; j++)
			s += exp((double)xs[j] - shift);
		break;
	case AL_RED_ARGMAX:
	case AL_RED_ARGMIN:
		for (int64_t j = 0; j < len; j++) {
			double v = xs[j];
			bool take = *ai < 0 || (isnan(v) && !isnan(s)) ||
				    (op == AL_RED_ARGMAX ? v > s : v < s);
			if (take) {
				s = v;
				*ai = base + j;
			}
		}
		break;
	default:
		break;
	}
	*acc = s;
}

/* Accumulate n lanes xs[0 .. n) into acc[0 .. n); r is the reduced position. */
static void red_lanes(int op, double *acc, int64_t *ai, const float *xs, int n, int64_t r,
		      const double *shift)
{
	switch (op) {
	case AL_RED_SUM:
	case AL_RED_MEAN:
	case AL_RED_LOGSUM:
		for (int l = 0; l < n; l++)
			acc[l] += xs[l];
		break;
	case AL_RED_PROD:
		for (int l = 0; l < n; l++)
			acc[l] *= xs[l];
		break;
	case AL_RED_L1:
		for (int l = 0; l < n; l++)
			acc[l] += fabsf(xs[l]);
		break;
	case AL_RED_L2:
	case AL_RED_SUMSQUARE:
		for (int l = 0; l < n; l++)
			acc[l] += (double)xs[l] * xs[l];
		break;
	case RED_SUMEXP:
		for (int l = 0; l < n; l++)
			acc[l] += exp((double)xs[l] - shift[l]);
		break;
	default: /* max, min, argmax, argmin */
		for (int l = 0; l < n; l++)
			red_run(op, &acc[l], &ai[l], xs + l, 1, r, 0.0);
		break;
	}
}

/* Walk every reduced position for lanes [0, n) starting at xb. */
static void red_block(int op, const struct red_geom *g, const float *xb, int n, double *acc,
		      int64_t *ai, const double *shift)
{
	int64_t idx[AL_MAX_RANK] = {0};
	int64_t off = 0;
	int64_t run = g->run > 1 ? g->run : 1;
	for (size_t r = 0; r < g->count; r++) {
		if (g->run > 1)
			red_run(op, acc, ai, xb + off, run, (int64_t)r * run, shift[0]);
		else
			red_lanes(op, acc, ai, xb + off, n, (int64_t)r, shift);
		for (int ax = g->nr - 1; ax >= 0; ax--) {
			idx[ax]++;
			off += g->rs[ax];
			if (idx[ax] < g->rd[ax])
				break;
			off -= g->rs[ax] * g->rd[ax];
			idx[ax] = 0;
		}
	}
}

void ali_reduce(enum al_redop op, const float *x, int rank, const int64_t *dims, uint32_t axes,
	       float *y)
{
	if (rank < 0 || rank > AL_MAX_RANK)
		return;
	/* collapse: drop size-1 axes, merge neighbours of the same kind */
	int64_t gd[AL_MAX_RANK + 1];
	bool gred[AL_MAX_RANK + 1];
	int G = 0;
	int64_t kept_n = 1, red_n = 1;
	for (int i = 0; i < rank; i++) {
		bool red = i < 32 && (axes >> i & 1u);
		if (red)
			red_n *= dims[i];
		else
			kept_n *= dims[i];
		if (dims[i] == 1)
			continue;
		if (G > 0 && gred[G - 1] == red) {
			gd[G - 1] *= dims[i];
			continue;
		}
		gd[G] = dims[i];
		gred[G] = red;
		G++;
	}
	if (kept_n == 0)
		return;
	if (G == 0 || gred[G - 1]) {
		gd[G] = 1;
		gred[G] = false;
		G++;
	}
	/* x strides per group */
	int64_t gs[AL_MAX_RANK + 1];
	int64_t s = 1;
	for (int i = G - 1; i >= 0; i--) {
		gs[i] = s;
		s *= gd[i];
	}
	int64_t L = gd[G - 1];
	struct red_geom g = {.nr = 0, .run = 0, .count = 1};
	int nk = 0;
	int64_t kd[AL_MAX_RANK + 1], ks[AL_MAX_RANK + 1];
	for (int i = 0; i < G - 1; i++) {
		if (gred[i]) {
			g.rd[g.nr] = gd[i];
			g.rs[g.nr] = gs[i];
			g.nr++;
			g.count *= (size_t)gd[i];
		} else {
			kd[nk] = gd[i];
			ks[nk] = gs[i];
			nk++;
		}
	}
	if (red_n == 0)
		g.count = 0;
	/* one lane and the innermost reduced group contiguous: walk it as a run */
	if (L == 1 && g.nr > 0 && g.rs[g.nr - 1] == 1 && g.count > 0) {
		g.run = g.rd[g.nr - 1];
		g.count /= (size_t)g.run;
		g.nr--;
	}
	size_t outer = 1;
	for (int i = 0; i < nk; i++)
		outer *= (size_t)kd[i];
	int64_t kidx[AL_MAX_RANK + 1] = {0};
	int64_t xoff = 0;
	double acc[LANES], shift[LANES];
	int64_t ai[LANES];
	for (size_t o = 0; o < outer; o++) {
		for (int64_t c0 = 0; c0 < L; c0 += LANES) {
			int n = L - c0 < LANES ? (int)(L - c0) : LANES;
			const float *xb = x + xoff + c0;
			float *yb = y + (int64_t)o * L + c0;
			if (op == AL_RED_LOGSUMEXP) {
				red_init(AL_RED_MAX, shift, ai, n);
				red_block(AL_RED_MAX, &g, xb, n, shift, ai, shift);
				double sh[LANES];
				for (int l = 0; l < n; l++)
					sh[l] = isinf(shift[l]) ? 0.0 : shift[l];
				red_init(RED_SUMEXP, acc, ai, n);
				red_block(RED_SUMEXP, &g, xb, n, acc, ai, sh);
				for (int l = 0; l < n; l++)
					yb[l] = isinf(shift[l]) ? (float)shift[l] : (float)(sh[l] + log(acc[l]));
				continue;
			}
			red_init(op, acc, ai, n);
			for (int l = 0; l < n; l++)
				shift[l] = 0.0;
			red_block(op, &g, xb, n, acc, ai, shift);
			size_t cnt = g.count * (size_t)(g.run > 1 ? g.run : 1);
			for (int l = 0; l < n; l++) {
				double v = acc[l];
				switch (op) {
				case AL_RED_MEAN: v = cnt ? v / (double)cnt : NAN; break;
				case AL_RED_L2: v = sqrt(v); break;
				case AL_RED_LOGSUM: v = log(v); break;
				case AL_RED_ARGMAX:
				case AL_RED_ARGMIN: v = ai[l] < 0 ? 0.0 : (double)ai[l]; break;
				default: break;
				}
				yb[l] = (float)v;
			}
		}
		for (int ax = nk - 1; ax >= 0; ax--) {
			kidx[ax]++;
			xoff += ks[ax];
			if (kidx[ax] < kd[ax])
				break;
			xoff -= ks[ax] * kd[ax];
			kidx[ax] = 0;
		}
	}
}

/* ================================================================== normalisation */

/* y[i] = e^x[i] for x[i] <= 0 (softmax's x - max), branch-free so GCC
 * vectorises it (libm's expf is a call per value: softmax took 6.7% of the
 * transformer encoder's time at ~4.4 ns a value). x = n ln2 + r with n the
 * nearest integer to x / ln2 and |r| <= ln2 / 2, ln2 split in two so r is exact
 * to float precision; e^r by its Taylor series to r^7 (the remainder is below
 * (ln2/2)^8 / 8! = 5e-9, under float's 6e-8); 2^n built in the exponent bits.
 * x below -87 (e^x under float's smallest normal) gives 0 instead of a
 * subnormal: nothing next to the row's maximum, whose term is 1. A NaN x gives
 * NaN. Measured against double exp on [-87, 0]: relative error below
 * 2e-7. */
static void exp_nonpos(const float *restrict x, float *restrict y, size_t n)
{
	/* selects as bit masks: GCC does not if-convert float ternaries here */
	for (size_t i = 0; i < n; i++) {
		float v = x[i];
		uint32_t vb, cb, eb;
		memcpy(&vb, &v, sizeof vb);
		uint32_t inr = 0u - (uint32_t)(v >= -87.0f); /* false for NaN */
		uint32_t nan = 0u - (uint32_t)(v != v);
		cb = vb & inr; /* out of range and NaN: 0, so the conversion below is defined */
		float c;
		memcpy(&c, &cb, sizeof c);
		int k = (int)(c * 1.44269504088896341f - 0.5f); /* c <= 0: truncation rounds */
		float fk = (float)k;
		float r = c - fk * 0.693359375f; /* ln2's top bits: fk * this is exact */
		r = r + fk * 2.12194440e-4f;     /* ln2 - 0.693359375 */
		float p = 1.0f / 5040.0f;
		p = p * r + 1.0f / 720.0f;
		p = p * r + 1.0f / 120.0f;
		p = p * r + 1.0f / 24.0f;
		p = p * r + 1.0f / 6.0f;
		p = p * r + 0.5f;
		p = p * r + 1.0f;
		p = p * r + 1.0f;
		uint32_t sb = (uint32_t)(k + 127) << 23;
		float scale;
		memcpy(&scale, &sb, sizeof scale);
		float e = p * scale;
		memcpy(&eb, &e, sizeof eb);
		eb = (eb & inr) | (vb & nan);
		memcpy(&y[i], &eb, sizeof eb);
	}
}

/* One contiguous row of softmax, y may be x: the max in 8 lanes, e^(x - max)
 * by exp_nonpos in blocks, the sum in 8 lanes. */
static void softmax_row(const float *x, float *y, int64_t n)
{
	enum { L = 8, B = 256 };
	float m[L];
	for (int l = 0; l < L; l++)
		m[l] = -INFINITY;
	int64_t a = 0;
	for (; a + L <= n; a += L)
		for (int l = 0; l < L; l++)
			m[l] = x[a + l] > m[l] ? x[a + l] : m[l];
	float mx = -INFINITY;
	for (; a < n; a++)
		mx = x[a] > mx ? x[a] : mx;
	for (int l = 0; l < L; l++)
		mx = m[l] > mx ? m[l] : mx;
	float t[B], s[L] = {0};
	float sum = 0.0f;
	for (int64_t b0 = 0; b0 < n; b0 += B) {
		int64_t k = n - b0 < B ? n - b0 : B, j = 0;
		for (int64_t i = 0; i < k; i++)
			t[i] = x[b0 + i] - mx;
		exp_nonpos(t, y + b0, (size_t)k);
		for (; j + L <= k; j += L)
			for (int l = 0; l < L; l++)
				s[l] += y[b0 + j + l];
		for (; j < k; j++)
			sum += y[b0 + j];
	}
	for (int l = 0; l < L; l++)
		sum += s[l];
	float inv = 1.0f / sum;
	for (int64_t i = 0; i < n; i++)
		y[i] *= inv;
}

static void softmax_impl(const float *x, int64_t outer, int64_t axis, int64_t inner, float *y,
			 bool log_out)
{
	float m[LANES], s[LANES];
	if (inner == 1 && !log_out) {
		for (int64_t o = 0; o < outer; o++)
			softmax_row(x + o * axis, y + o * axis, axis);
		return;
	}
	if (inner == 1) {
		/* contiguous rows: the lane loops below would run one lane at a time
		 * (measured 12.4 ms for 800 rows of 1000 vs 3.3 ms here) */
		for (int64_t o = 0; o < outer; o++) {
			const float *xr = x + o * axis; /* y may be x */
			float *yr = y + o * axis;
			float mx = -INFINITY, sum = 0.0f;
			for (int64_t a = 0; a < axis; a++)
				mx = xr[a] > mx ? xr[a] : mx;
			if (log_out) {
				for (int64_t a = 0; a < axis; a++)
					sum += expf(xr[a] - mx);
				float ls = logf(sum);
				for (int64_t a = 0; a < axis; a++)
					yr[a] = (xr[a] - mx) - ls;
			} else {
				for (int64_t a = 0; a < axis; a++) {
					float e = expf(xr[a] - mx);
					yr[a] = e;
					sum += e;
				}
				float inv = 1.0f / sum;
				for (int64_t a = 0; a < axis; a++)
					yr[a] *= inv;
			}
		}
		return;
	}
	for (int64_t o = 0; o < outer; o++) {
		const float *xo = x + o * axis * inner;
		float *yo = y + o * axis * inner;
		for (int64_t c0 = 0; c0 < inner; c0 += LANES) {
			int n = inner - c0 < LANES ? (int)(inner - c0) : LANES;
			for (int l = 0; l < n; l++) {
				m[l] = -INFINITY;
				s[l] = 0.0f;
			}
			for (int64_t a = 0; a < axis; a++) {
				const float *xr = xo + a * inner + c0;
				for (int l = 0; l < n; l++)
					m[l] = xr[l] > m[l] ? xr[l] : m[l];
			}
			for (int64_t a = 0; a < axis; a++) {
				const float *xr = xo + a * inner + c0;
				float *yr = yo + a * inner + c0;
				for (int l = 0; l < n; l++) {
					float e = expf(xr[l] - m[l]);
					s[l] += e;
					if (!log_out)
						yr[l] = e;
				}
			}
			/* log: (x - m) - log s, not x - (m + log s), which rounds m + log s
			 * at the magnitude of x (1000 + 0.4 loses 5 digits) */
			for (int l = 0; l < n; l++)
				s[l] = log_out ? logf(s[l]) : 1.0f / s[l];
			for (int64_t a = 0; a < axis; a++) {
				const float *xr = xo + a * inner + c0;
				float *yr = yo + a * inner + c0;
				if (log_out)
					for (int l = 0; l < n; l++)
						yr[l] = (xr[l] - m[l]) - s[l];
				else
					for (int l = 0; l < n; l++)
						yr[l] *= s[l];
			}
		}
	}
}

struct sm_job {
	const float *x;
	float *y;
	int64_t outer, axis, inner;
	bool log_out;
};

static void sm_part(void *arg, int part, int parts)
{
	const struct sm_job *j = arg;
	int64_t o0 = j->outer * part / parts, o1 = j->outer * (part + 1) / parts;
	size_t off = (size_t)o0 * (size_t)j->axis * (size_t)j->inner;
	softmax_impl(j->x + off, o1 - o0, j->axis, j->inner, j->y + off, j->log_out);
}

/* Over the pool by blocks of `outer`. */
static void softmax_split(const float *x, int64_t outer, int64_t axis, int64_t inner, float *y,
			  bool log_out)
{
	struct sm_job j = {x, y, outer, axis, inner, log_out};
	int parts = ali_pool_parts((double)outer, 3.0 * (double)axis * (double)inner);
	ali_pool_run(parts, sm_part, &j);
}

void ali_softmax(const float *x, int64_t outer, int64_t axis, int64_t inner, float *y)
{
	softmax_split(x, outer, axis, inner, y, false);
}

void ali_log_softmax(const float *x, int64_t outer, int64_t axis, int64_t inner, float *y)
{
	softmax_split(x, outer, axis, inner, y, true);
}

static void layer_norm_rows(const float *x, int64_t outer, int64_t inner, const float *gamma,
			    const float *beta, float eps, bool normalize_variance, float *y);

struct ln_job {
	const float *x, *gamma, *beta;
	float *y;
	int64_t outer, inner;
	float eps;
	bool nv;
};

static void ln_part(void *arg, int part, int parts)
{
	const struct ln_job *j = arg;
	int64_t o0 = j->outer * part / parts, o1 = j->outer * (part + 1) / parts;
	size_t off = (size_t)o0 * (size_t)j->inner;
	layer_norm_rows(j->x + off, o1 - o0, j->inner, j->gamma, j->beta, j->eps, j->nv, j->y + off);
}

/* Over the pool by blocks of rows. */
void ali_layer_norm(const float *x, int64_t outer, int64_t inner, const float *gamma,
		   const float *beta, float eps, bool normalize_variance, float *y)
{
	struct ln_job j = {x, gamma, beta, y, outer, inner, eps, normalize_variance};
	ali_pool_run(ali_pool_parts((double)outer, 1.0 * (double)inner), ln_part, &j);
}

static void layer_norm_rows(const float *x, int64_t outer, int64_t inner, const float *gamma,
			    const float *beta, float eps, bool normalize_variance, float *y)
{
	if (inner <= 0)
		return;
	enum { L = 4 }; /* the sums in 4 lanes of doubles: they vectorise (one chain does not) */
	for (int64_t o = 0; o < outer; o++) {
		const float *xr = x + o * inner;
		float *yr = y + o * inner;
		double acc[L] = {0}, sum = 0.0;
		int64_t j = 0;
		for (; j + L <= inner; j += L)
			for (int l = 0; l < L; l++)
				acc[l] += xr[j + l];
		for (; j < inner; j++)
			sum += xr[j];
		sum += (acc[0] + acc[1]) + (acc[2] + acc[3]);
		double mean = sum / (double)inner, var = 0.0;
		for (int l = 0; l < L; l++)
			acc[l] = 0.0;
		for (j = 0; j + L <= inner; j += L)
			for (int l = 0; l < L; l++) {
				double d = xr[j + l] - mean;
				acc[l] += d * d;
			}
		for (; j < inner; j++) {
			double d = xr[j] - mean;
			var += d * d;
		}
		var += (acc[0] + acc[1]) + (acc[2] + acc[3]);
		var /= (double)inner;
		float scale = normalize_variance ? (float)(1.0 / sqrt(var + eps)) : 1.0f;
		float fm = (float)mean;
		if (gamma && beta) {
			for (j = 0; j < inner; j++)
				yr[j] = (xr[j] - fm) * scale * gamma[j] + beta[j];
			continue;
		}
		for (j = 0; j < inner; j++) {
			float v = (xr[j] - fm) * scale;
			if (gamma)
				v *= gamma[j];
			if (beta)
				v += beta[j];
			yr[j] = v;
		}
	}
}

void ali_channel_affine(const float *x, int64_t n, int64_t c, int64_t inner, const float *scale,
		       const float *bias, float *y)
{
	for (int64_t b = 0; b < n; b++)
		for (int64_t ch = 0; ch < c; ch++) {
			const float *xr = x + (b * c + ch) * inner;
			float *yr = y + (b * c + ch) * inner;
			float sc = scale ? scale[ch] : 1.0f, bi = bias ? bias[ch] : 0.0f;
			for (int64_t j = 0; j < inner; j++)
				yr[j] = xr[j] * sc + bi;
		}
}

void ali_l2_normalize(const float *x, int64_t outer, int64_t inner, double eps, float *y)
{
	for (int64_t o = 0; o < outer; o++) {
		const float *xr = x + o * inner;
		float *yr = y + o * inner;
		double s = 0.0; /* in double: a sum of 10^6 squares keeps its digits */
		for (int64_t j = 0; j < inner; j++)
			s += (double)xr[j] * xr[j];
		double nrm = sqrt(s + eps);
		for (int64_t j = 0; j < inner; j++)
			yr[j] = (float)(xr[j] / nrm);
	}
}

void ali_lrn(const float *x, int64_t n, int64_t c, int64_t inner, int64_t size, float alpha,
	    float beta, float k, float *y)
{
	int64_t before = (size - 1) / 2, after = size - 1 - before;
	float scale = alpha / (float)size;
	double acc[LANES];
	/* 64 positions of the inner axis at a time, so each channel row is read
	 * contiguously */
	for (int64_t b = 0; b < n; b++)
		for (int64_t j0 = 0; j0 < inner; j0 += LANES) {
			int nl = inner - j0 < LANES ? (int)(inner - j0) : LANES;
			for (int64_t ch = 0; ch < c; ch++) {
				int64_t c0 = ch - before < 0 ? 0 : ch - before;
				int64_t c1 = ch + after >= c ? c - 1 : ch + after;
				for (int l = 0; l < nl; l++)
					acc[l] = 0.0;
				for (int64_t q = c0; q <= c1; q++) {
					const float *xq = x + (b * c + q) * inner + j0;
					for (int l = 0; l < nl; l++)
						acc[l] += (double)xq[l] * xq[l];
				}
				const float *xr = x + (b * c + ch) * inner + j0;
				float *yr = y + (b * c + ch) * inner + j0;
				for (int l = 0; l < nl; l++)
					yr[l] = xr[l] / powf(k + scale * (float)acc[l], beta);
			}
		}
}
