/* SPDX-License-Identifier: MIT */
/* kernels_wino.c: 3x3 stride-1 convolution by Winograd's minimal filtering,
 * F(4x4, 3x3) (Lavin & Gray 2015), for ali_conv2d (kernels.h "convolution").
 *
 * Each 4x4 block of output ("tile") is computed from the 6x6 input patch under
 * it: V = B^T d B (input transform), U = G g G^T (weight transform, 6x6 per
 * output / input channel pair), M = sum over input channels of U .* V, and
 * Y = A^T M A. The channel sums are 36 independent matrix products,
 * M[e] [cout x tiles] = U[e] [cout x cin] * V[e] [cin x tiles], done by
 * ali_gemm: 36 * cin * cout multiply-adds per tile against im2col's
 * 9 * 16 * cin * cout, a 4x cut of the dominant work, paid for with the two
 * transforms (O(cin + cout) per tile) and scratch for V and M.
 *
 * Numerics: the transforms' constants (1/4, 1/6, 1/24, 8 ...) lose a few bits
 * against direct summation; measured on the corpus' ResNet-18 and random 3x3
 * layers the results stay within 2e-6 of max|y| (the interpreter's fp32
 * tolerance is 1e-4). F(6x6, 3x3) would cut multiplies further but its
 * constants grow (up to 5.6^2) and so does the error: not used.
 *
 * Where it is used (ali_conv2d_winograd_fits): groups 1, 3x3, stride 1,
 * dilation 1, at least 16 input and output channels, and at least 32 tiles
 * (e.g. 21x21 outputs and up). Measured with bench/wino.c (CPU time per call,
 * 1 thread, OpenBLAS 0.3.21, Winograd / im2col + sgemm): 64ch 56x56 0.53,
 * 128ch 28x28 0.42, 256ch 28x28 0.48, 32ch 112x112 0.83, but 256ch 14x14 1.08
 * and 512ch 7x7 1.82: with 16 or 4 tiles each of the 36 products is a thin
 * [cout x cin] x [cin x 16] and the transformed weights (4x the raw ones) are
 * streamed for little work. bench/README.md "Winograd" has the table.
 *
 * Threads: each phase is split over the interpreter's pool (input transform by
 * input channel, the 36 products by e, each product on one thread, output
 * transform by output channel).
 */
#include "kernels.h"
#include "analysis.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

/* Scratch budget (floats) for V and M of one band of tiles: 16 MB. */
#define WINO_BUDGET ((size_t)1 << 22)

/* Whether p has a Winograd form at all. */
static bool wino_form(const struct al_conv2d *p)
{
	return p->groups == 1 && p->kh == 3 && p->kw == 3 && p->sh == 1 && p->sw == 1 &&
	       p->dh == 1 && p->dw == 1 && p->cin >= 1 && p->cout >= 1 && p->oh >= 1 &&
	       p->ow >= 1 && p->cin <= INT_MAX / 36 && p->cout <= INT_MAX / 36 && p->n >= 0 &&
	       p->pt >= 0 && p->pl >= 0 && p->oh + 2 <= p->h + p->pt + p->pb &&
	       p->ow + 2 <= p->w + p->pl + p->pr;
}

bool ali_conv2d_winograd_fits(const struct al_conv2d *p)
{
	return wino_form(p) && p->cin >= 16 && p->cout >= 16 &&
	       ((p->oh + 3) / 4) * ((p->ow + 3) / 4) >= 32;
}

size_t ali_winograd_weights_len(int64_t cout, int64_t cin)
{
	return (size_t)36 * (size_t)cout * (size_t)cin;
}

/* u[0..5] = G g for g[0..2]. */
static void wt1d(const double *g, double *u)
{
	double g0 = g[0], g1 = g[1], g2 = g[2];
	u[0] = g0 / 4;
	u[1] = -(g0 + g1 + g2) / 6;
	u[2] = -(g0 - g1 + g2) / 6;
	u[3] = g0 / 24 + g1 / 12 + g2 / 6;
	u[4] = g0 / 24 - g1 / 12 + g2 / 6;
	u[5] = g2;
}

/* u [36][cout][cin] from w [cout][cin][3][3], in double then rounded once. */
void ali_winograd_weights(int64_t cout, int64_t cin, const float *w, float *u)
{
	size_t plane = (size_t)cout * (size_t)cin;
	for (int64_t co = 0; co < cout; co++)
		for (int64_t ci = 0; ci < cin; ci++) {
			const float *g = w + ((size_t)co * (size_t)cin + (size_t)ci) * 9;
			double t[6][3], r[6];
			for (int c = 0; c < 3; c++) { /* G g: columns */
				double col[3] = {g[c], g[3 + c], g[6 + c]};
				wt1d(col, r);
				for (int i = 0; i < 6; i++)
					t[i][c] = r[i];
			}
			for (int i = 0; i < 6; i++) { /* (G g) G^T: rows */
				double o[6];
				wt1d(t[i], o);
				for (int j = 0; j < 6; j++)
					u[(size_t)(i * 6 + j) * plane + (size_t)co * (size_t)cin + (size_t)ci] =
						(float)o[j];
			}
		}
}

/* One band of tiles [t0, t1) of one image, shared by the three phases. */
struct wino_job {
	const struct al_conv2d *p;
	const float *x; /* the image: [cin][h][w] */
	const float *u, *bias;
	float *y;       /* the image's output: [cout][oh][ow] */
	float *v, *m;   /* [36][cin][nt], [36][cout][nt] */
	int64_t tw;     /* tiles per row */
	int64_t t0, nt; /* first tile, tiles in the band */
	float *scratch; /* scratch_each floats per part (row buffers) */
	size_t scratch_each;
};

static int64_t part_lo(int64_t n, int part, int parts)
{
	return n * part / parts;
}

/* The four 1-D passes of the transforms, restrict-qualified so GCC vectorises
 * them (without, it gives up on the alias checks of 12 arrays). */
static void bt_down(size_t W, const float *restrict d0, const float *restrict d1,
		    const float *restrict d2, const float *restrict d3, const float *restrict d4,
		    const float *restrict d5, float *restrict s0, float *restrict s1,
		    float *restrict s2, float *restrict s3, float *restrict s4, float *restrict s5)
{
	for (size_t c = 0; c < W; c++) {
		s0[c] = 4 * d0[c] - 5 * d2[c] + d4[c];
		s1[c] = -4 * (d1[c] + d2[c]) + d3[c] + d4[c];
		s2[c] = 4 * (d1[c] - d2[c]) - d3[c] + d4[c];
		s3[c] = 2 * (d3[c] - d1[c]) - d2[c] + d4[c];
		s4[c] = 2 * (d1[c] - d3[c]) - d2[c] + d4[c];
		s5[c] = 4 * d1[c] - 5 * d3[c] + d5[c];
	}
}

static void bt_along(int64_t a, int64_t b, const float *restrict si, float *restrict q0,
		     float *restrict q1, float *restrict q2, float *restrict q3, float *restrict q4,
		     float *restrict q5)
{
	for (int64_t tx = a; tx < b; tx++) {
		const float *e = si + tx * 4;
		q0[tx] = 4 * e[0] - 5 * e[2] + e[4];
		q1[tx] = -4 * (e[1] + e[2]) + e[3] + e[4];
		q2[tx] = 4 * (e[1] - e[2]) - e[3] + e[4];
		q3[tx] = 2 * (e[3] - e[1]) - e[2] + e[4];
		q4[tx] = 2 * (e[1] - e[3]) - e[2] + e[4];
		q5[tx] = 4 * e[1] - 5 * e[3] + e[5];
	}
}

static void at_down(int64_t a, int64_t b, const float *restrict m0, const float *restrict m1,
		    const float *restrict m2, const float *restrict m3, const float *restrict m4,
		    const float *restrict m5, float *restrict r0, float *restrict r1,
		    float *restrict r2, float *restrict r3)
{
	for (int64_t tx = a; tx < b; tx++) {
		float pa = m1[tx] + m2[tx], pb = m1[tx] - m2[tx];
		float pc = m3[tx] + m4[tx], pd = m3[tx] - m4[tx];
		r0[tx] = m0[tx] + pa + pc;
		r1[tx] = pb + 2 * pd;
		r2[tx] = pa + 4 * pc;
		r3[tx] = pb + 8 * pd + m5[tx];
	}
}

static void at_along(int64_t a, int64_t b, float b0, const float *restrict s0,
		     const float *restrict s1, const float *restrict s2, const float *restrict s3,
		     const float *restrict s4, const float *restrict s5, float *restrict orow)
{
	for (int64_t tx = a; tx < b; tx++) {
		float pa = s1[tx] + s2[tx], pb = s1[tx] - s2[tx];
		float pc = s3[tx] + s4[tx], pd = s3[tx] - s4[tx];
		orow[tx * 4] = s0[tx] + pa + pc + b0;
		orow[tx * 4 + 1] = pb + 2 * pd + b0;
		orow[tx * 4 + 2] = pa + 4 * pc + b0;
		orow[tx * 4 + 3] = pb + 8 * pd + s5[tx] + b0;
	}
}

/* V = B^T d B per input channel, one row of tiles at a time so both passes
 * run along contiguous arrays (they vectorise): the 6 input rows under the
 * tile row, zero-padded to 4 tw + 2 columns; B^T down each column (all columns
 * at once); then B along each row, tile by tile, each of the 6 results of a
 * row into its own matrix V[e] (contiguous in the tile index). Measured: 10% of
 * ResNet-18's time one tile at a time, a third of that here. */
static void wino_in(void *ctx, int part, int parts)
{
	const struct wino_job *j = ctx;
	const struct al_conv2d *p = j->p;
	int64_t c0 = part_lo(p->cin, part, parts), c1 = part_lo(p->cin, part + 1, parts);
	size_t es = (size_t)p->cin * (size_t)j->nt; /* stride between the 36 matrices */
	size_t W = (size_t)j->tw * 4 + 2;
	float *r = j->scratch + (size_t)part * j->scratch_each, *sv = r + 6 * W;
	for (int64_t ci = c0; ci < c1; ci++) {
		const float *xp = j->x + (size_t)ci * (size_t)p->h * (size_t)p->w;
		for (int64_t t = j->t0; t < j->t0 + j->nt;) {
			int64_t ty = t / j->tw, a = t % j->tw;
			int64_t b = j->tw < a + (j->t0 + j->nt - t) ? j->tw : a + (j->t0 + j->nt - t);
			int64_t y0 = ty * 4 - p->pt;
			for (int k = 0; k < 6; k++) { /* the rows, zero-padded */
				float *rk = r + (size_t)k * W;
				int64_t iy = y0 + k;
				memset(rk, 0, W * sizeof *rk);
				if (iy < 0 || iy >= p->h)
					continue;
				int64_t lo = p->pl, n = p->w; /* x column ix lands at ix + pl */
				if (lo + n > (int64_t)W)
					n = (int64_t)W - lo;
				if (n > 0)
					memcpy(rk + lo, xp + (size_t)iy * (size_t)p->w, (size_t)n * sizeof *rk);
			}
			bt_down(W, r, r + W, r + 2 * W, r + 3 * W, r + 4 * W, r + 5 * W, sv, sv + W,
				sv + 2 * W, sv + 3 * W, sv + 4 * W, sv + 5 * W);
			size_t k0 = (size_t)(t - j->t0) - (size_t)a; /* V column of tile (ty, 0) */
			for (int i = 0; i < 6; i++) { /* (B^T d) B: along the rows */
				float *q0 = j->v + (size_t)(i * 6) * es + (size_t)ci * (size_t)j->nt + k0;
				bt_along(a, b, sv + (size_t)i * W, q0, q0 + es, q0 + 2 * es, q0 + 3 * es,
					 q0 + 4 * es, q0 + 5 * es);
			}
			t += b - a;
		}
	}
}

/* M[e] = U[e] V[e] for e in this part's share of the 36. */
static void wino_mul(void *ctx, int part, int parts)
{
	const struct wino_job *j = ctx;
	const struct al_conv2d *p = j->p;
	size_t ci = (size_t)p->cin, co = (size_t)p->cout, nt = (size_t)j->nt;
	for (int64_t e = part_lo(36, part, parts); e < part_lo(36, part + 1, parts); e++)
		ali_gemm(false, false, co, nt, ci, 1.0f, j->u + (size_t)e * co * ci, ci,
			 j->v + (size_t)e * ci * nt, nt, 0.0f, j->m + (size_t)e * co * nt, nt);
}

/* Y = A^T M A (+ bias) per output channel, one row of tiles at a time: A^T
 * down the 6 rows of each tile (contiguous in the tile index, all tiles of the
 * row at once), then A along them into 4 output rows, copied clipped. */
static void wino_out(void *ctx, int part, int parts)
{
	const struct wino_job *j = ctx;
	const struct al_conv2d *p = j->p;
	int64_t c0 = part_lo(p->cout, part, parts), c1 = part_lo(p->cout, part + 1, parts);
	size_t es = (size_t)p->cout * (size_t)j->nt;
	size_t TW = (size_t)j->tw;
	float *sv = j->scratch + (size_t)part * j->scratch_each; /* [4][6][tw] */
	float *o = sv + 24 * TW;                                 /* [4][4 tw] */
	for (int64_t co = c0; co < c1; co++) {
		float b0 = j->bias ? j->bias[co] : 0.0f;
		float *yp = j->y + (size_t)co * (size_t)p->oh * (size_t)p->ow;
		for (int64_t t = j->t0; t < j->t0 + j->nt;) {
			int64_t ty = t / j->tw, a = t % j->tw;
			int64_t b = j->tw < a + (j->t0 + j->nt - t) ? j->tw : a + (j->t0 + j->nt - t);
			size_t k0 = (size_t)(t - j->t0) - (size_t)a;
			const float *mc = j->m + (size_t)co * (size_t)j->nt + k0;
			for (int c = 0; c < 6; c++) { /* A^T M: down the columns */
				const float *m0 = mc + (size_t)c * es;
				float *r0 = sv + (size_t)c * TW;
				at_down(a, b, m0, m0 + 6 * es, m0 + 12 * es, m0 + 18 * es, m0 + 24 * es,
					m0 + 30 * es, r0, r0 + 6 * TW, r0 + 12 * TW, r0 + 18 * TW);
			}
			for (int r = 0; r < 4; r++) { /* (A^T M) A: along the rows */
				const float *s0 = sv + (size_t)(r * 6) * TW;
				at_along(a, b, b0, s0, s0 + TW, s0 + 2 * TW, s0 + 3 * TW, s0 + 4 * TW,
					 s0 + 5 * TW, o + (size_t)r * 4 * TW);
			}
			int64_t y0 = ty * 4, x0 = a * 4, x1 = b * 4 < p->ow ? b * 4 : p->ow;
			int64_t nr = p->oh - y0 < 4 ? p->oh - y0 : 4;
			for (int64_t r = 0; r < nr; r++)
				memcpy(yp + (size_t)(y0 + r) * (size_t)p->ow + (size_t)x0,
				       o + (size_t)r * 4 * TW + (size_t)x0, (size_t)(x1 - x0) * sizeof(float));
			t += b - a;
		}
	}
}

bool ali_conv2d_winograd(const struct al_conv2d *p, const float *x, const float *u,
			 const float *bias, float *y)
{
	if (!wino_form(p))
		return false;
	int64_t th = (p->oh + 3) / 4, tw = (p->ow + 3) / 4, tiles = th * tw;
	size_t per_tile = (size_t)36 * (size_t)(p->cin + p->cout);
	int64_t band = (int64_t)(WINO_BUDGET / per_tile);
	if (band < 1)
		band = 1;
	if (band > tiles)
		band = tiles;
	int threads = ali_kernels_threads();
	/* per part: in, 12 rows of 4 tw + 2; out, [4][6][tw] + [4][4 tw] */
	size_t each = (size_t)48 * (size_t)tw + 24;
	if (each < (size_t)40 * (size_t)tw)
		each = (size_t)40 * (size_t)tw;
	float *v = ali_malloc((per_tile * (size_t)band + each * (size_t)threads) * sizeof *v);
	if (!v)
		return false;
	float *m = v + (size_t)36 * (size_t)p->cin * (size_t)band;
	float *scratch = m + (size_t)36 * (size_t)p->cout * (size_t)band;
	size_t plane = (size_t)p->h * (size_t)p->w, oplane = (size_t)p->oh * (size_t)p->ow;
	for (int64_t n = 0; n < p->n; n++)
		for (int64_t t0 = 0; t0 < tiles; t0 += band) {
			struct wino_job j = {.p = p, .x = x + (size_t)(n * p->cin) * plane, .u = u,
					     .bias = bias, .y = y + (size_t)(n * p->cout) * oplane,
					     .v = v, .m = m, .tw = tw, .t0 = t0, .scratch = scratch,
					     .scratch_each = each,
					     .nt = tiles - t0 < band ? tiles - t0 : band};
			ali_pool_run(threads, wino_in, &j);
			/* the 36 products on the pool, one whole product per part (the
			 * ali_gemm inside a part runs on its thread: ali_pool_run nests) */
			ali_pool_run(threads < 36 ? threads : 36, wino_mul, &j);
			ali_pool_run(threads, wino_out, &j);
		}
	ali_free(v);
	return true;
}
