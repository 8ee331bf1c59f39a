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
 * input channel, the 36 products by e with BLAS at one thread inside so the
 * two never oversubscribe, output transform by output channel).
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
};

static int64_t part_lo(int64_t n, int part, int parts)
{
	return n * part / parts;
}

/* V = B^T d B per input channel and tile. */
static void wino_in(void *ctx, int part, int parts)
{
	const struct wino_job *j = ctx;
	const struct al_conv2d *p = j->p;
	int64_t c0 = part_lo(p->cin, part, parts), c1 = part_lo(p->cin, part + 1, parts);
	size_t es = (size_t)p->cin * (size_t)j->nt; /* stride between the 36 matrices */
	for (int64_t ci = c0; ci < c1; ci++) {
		const float *xp = j->x + (size_t)ci * (size_t)p->h * (size_t)p->w;
		float *vc = j->v + (size_t)ci * (size_t)j->nt;
		for (int64_t k = 0; k < j->nt; k++) {
			int64_t t = j->t0 + k, y0 = (t / j->tw) * 4 - p->pt, x0 = (t % j->tw) * 4 - p->pl;
			float d[6][6];
			if (y0 >= 0 && x0 >= 0 && y0 + 6 <= p->h && x0 + 6 <= p->w) {
				for (int r = 0; r < 6; r++)
					memcpy(d[r], xp + (size_t)(y0 + r) * (size_t)p->w + (size_t)x0,
					       sizeof d[r]);
			} else {
				for (int r = 0; r < 6; r++)
					for (int c = 0; c < 6; c++) {
						int64_t iy = y0 + r, ix = x0 + c;
						d[r][c] = iy >= 0 && iy < p->h && ix >= 0 && ix < p->w
								  ? xp[iy * p->w + ix]
								  : 0.0f;
					}
			}
			float s[6][6];
			for (int c = 0; c < 6; c++) { /* B^T d: columns */
				float d0 = d[0][c], d1 = d[1][c], d2 = d[2][c], d3 = d[3][c], d4 = d[4][c],
				      d5 = d[5][c];
				s[0][c] = 4 * d0 - 5 * d2 + d4;
				s[1][c] = -4 * (d1 + d2) + d3 + d4;
				s[2][c] = 4 * (d1 - d2) - d3 + d4;
				s[3][c] = 2 * (d3 - d1) - d2 + d4;
				s[4][c] = 2 * (d1 - d3) - d2 + d4;
				s[5][c] = 4 * d1 - 5 * d3 + d5;
			}
			float *o = vc + k;
			for (int r = 0; r < 6; r++) { /* (B^T d) B: rows */
				float d0 = s[r][0], d1 = s[r][1], d2 = s[r][2], d3 = s[r][3], d4 = s[r][4],
				      d5 = s[r][5];
				float *q = o + (size_t)(r * 6) * es;
				q[0] = 4 * d0 - 5 * d2 + d4;
				q[es] = -4 * (d1 + d2) + d3 + d4;
				q[2 * es] = 4 * (d1 - d2) - d3 + d4;
				q[3 * es] = 2 * (d3 - d1) - d2 + d4;
				q[4 * es] = 2 * (d1 - d3) - d2 + d4;
				q[5 * es] = 4 * d1 - 5 * d3 + d5;
			}
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

/* Y = A^T M A (+ bias) per output channel and tile, clipped to the output. */
static void wino_out(void *ctx, int part, int parts)
{
	const struct wino_job *j = ctx;
	const struct al_conv2d *p = j->p;
	int64_t c0 = part_lo(p->cout, part, parts), c1 = part_lo(p->cout, part + 1, parts);
	size_t es = (size_t)p->cout * (size_t)j->nt;
	for (int64_t co = c0; co < c1; co++) {
		float b0 = j->bias ? j->bias[co] : 0.0f;
		float *yp = j->y + (size_t)co * (size_t)p->oh * (size_t)p->ow;
		const float *mc = j->m + (size_t)co * (size_t)j->nt;
		for (int64_t k = 0; k < j->nt; k++) {
			int64_t t = j->t0 + k, y0 = (t / j->tw) * 4, x0 = (t % j->tw) * 4;
			const float *q = mc + k;
			float s[4][6];
			for (int c = 0; c < 6; c++) { /* A^T M: columns */
				float m0 = q[(size_t)c * es], m1 = q[(size_t)(6 + c) * es],
				      m2 = q[(size_t)(12 + c) * es], m3 = q[(size_t)(18 + c) * es],
				      m4 = q[(size_t)(24 + c) * es], m5 = q[(size_t)(30 + c) * es];
				float a = m1 + m2, b = m1 - m2, cc = m3 + m4, d = m3 - m4;
				s[0][c] = m0 + a + cc;
				s[1][c] = b + 2 * d;
				s[2][c] = a + 4 * cc;
				s[3][c] = b + 8 * d + m5;
			}
			float o[4][4];
			for (int r = 0; r < 4; r++) { /* (A^T M) A: rows */
				float m0 = s[r][0], m5 = s[r][5];
				float a = s[r][1] + s[r][2], b = s[r][1] - s[r][2];
				float cc = s[r][3] + s[r][4], d = s[r][3] - s[r][4];
				o[r][0] = m0 + a + cc + b0;
				o[r][1] = b + 2 * d + b0;
				o[r][2] = a + 4 * cc + b0;
				o[r][3] = b + 8 * d + m5 + b0;
			}
			int64_t nr = p->oh - y0 < 4 ? p->oh - y0 : 4, nc = p->ow - x0 < 4 ? p->ow - x0 : 4;
			for (int64_t r = 0; r < nr; r++)
				memcpy(yp + (size_t)(y0 + r) * (size_t)p->ow + (size_t)x0, o[r],
				       (size_t)nc * sizeof(float));
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
	float *v = ali_malloc(per_tile * (size_t)band * sizeof *v);
	if (!v)
		return false;
	float *m = v + (size_t)36 * (size_t)p->cin * (size_t)band;
	int threads = ali_kernels_threads();
	size_t plane = (size_t)p->h * (size_t)p->w, oplane = (size_t)p->oh * (size_t)p->ow;
	for (int64_t n = 0; n < p->n; n++)
		for (int64_t t0 = 0; t0 < tiles; t0 += band) {
			struct wino_job j = {.p = p, .x = x + (size_t)(n * p->cin) * plane, .u = u,
					     .bias = bias, .y = y + (size_t)(n * p->cout) * oplane,
					     .v = v, .m = m, .tw = tw, .t0 = t0,
					     .nt = tiles - t0 < band ? tiles - t0 : band};
			ali_pool_run(threads, wino_in, &j);
			if (threads > 1) {
				/* the 36 products on the pool, BLAS single-threaded inside */
				ali_blas_set_threads(1);
				ali_pool_run(threads < 36 ? threads : 36, wino_mul, &j);
				ali_blas_set_threads(threads);
			} else {
				wino_mul(&j, 0, 1);
			}
			ali_pool_run(threads, wino_out, &j);
		}
	ali_free(v);
	return true;
}
