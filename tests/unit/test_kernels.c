/* SPDX-License-Identifier: MIT */
/* test_kernels.c: the interpreter's maths kernels (kernels*.c) against small
 * cases computed by hand (the arithmetic is in the comments), numbers from an
 * independent double-precision reference (the LSTM/GRU/RNN and transcendental
 * constants: plain Python `math`, formulas of kernels.h), exhaustive fp16
 * checks, and cross-checks: BLAS gemm against the loop, im2col/gemm convolution
 * against the direct loop, conv_transpose as the adjoint of conv, broadcasting,
 * reductions and transposes against brute-force index arithmetic written here. */
#include "testutil.h"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis.h"
#include "kernels.h"

#include <math.h>
#include <time.h>

/* ================================================================ helpers */

static void check_close(const float *got, const float *want, size_t n, float tol, const char *what)
{
	for (size_t i = 0; i < n; i++) {
		float g = got[i], w = want[i];
		bool ok = (isnan(w) && isnan(g)) || (isinf(w) && g == w) ||
			  fabsf(g - w) <= tol * (1.0f + fabsf(w));
		if (!ok) {
			print_error("%s[%zu]: got %.9g want %.9g\n", what, i, (double)g, (double)w);
			fail();
		}
	}
}
#define CLOSE(got, want, tol) check_close(got, want, sizeof(want) / sizeof(want[0]), tol, #got)

static uint64_t rng_state = 88172645463325252ull;
static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 32);
}
static float frand(void) /* [-1, 1) */
{
	return (float)rnd() / 2147483648.0f - 1.0f;
}
static int64_t irand(int64_t lo, int64_t hi) /* [lo, hi] */
{
	return lo + (int64_t)(rnd() % (uint32_t)(hi - lo + 1));
}
static float *frand_array(size_t n)
{
	float *p = malloc((n ? n : 1) * sizeof *p);
	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		p[i] = frand();
	return p;
}

static uint16_t f16_bits_of(float x)
{
	return ali_f16_from_f32(x);
}

/* ================================================================ fp16 */

static void test_f16_exhaustive(void **state)
{
	(void)state;
	int nan_count = 0;
	for (uint32_t h = 0; h < 65536; h++) {
		float f = ali_f16_to_f32((uint16_t)h);
		uint16_t back = ali_f16_from_f32(f);
		bool is_nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
		if (is_nan) {
			nan_count++;
			assert_true(isnan(f));
			assert_true((back & 0x7c00u) == 0x7c00u && (back & 0x3ffu)); /* still NaN */
			assert_int_equal(back & 0x8000u, h & 0x8000u);
			continue;
		}
		if (back != h) {
			print_error("half %#x -> %.9g -> %#x\n", h, (double)f, back);
			fail();
		}
		assert_true(ali_f16_round(f) == f || (f == 0.0f && ali_f16_round(f) == 0.0f));
		/* the midpoint to the next half up ties to the even one; one float ulp
		 * either side goes to the nearer */
		if ((h & 0x7fffu) < 0x7bffu) {
			float up = ali_f16_to_f32((uint16_t)(h + 1));
			float mid = (f + up) / 2; /* exact: 12 significant bits */
			uint16_t even = (h & 1u) ? (uint16_t)(h + 1) : (uint16_t)h;
			assert_int_equal(ali_f16_from_f32(mid), even);
			/* toward zero: the smaller magnitude h; away: h + 1 */
			assert_int_equal(ali_f16_from_f32(nextafterf(mid, 0.0f)), h);
			assert_int_equal(ali_f16_from_f32(nextafterf(mid, (h & 0x8000u) ? -INFINITY : INFINITY)),
					 h + 1);
		}
	}
	assert_int_equal(nan_count, 2 * 1023);
}

/* ali_f16_round_array (its own branch-free code) against ali_f16_round on a
 * dense sample of all 2^32 float patterns plus every float near the edges. */
static void test_f16_round_array(void **state)
{
	(void)state;
	enum { CHUNK = 4096 };
	static float buf[CHUNK], ref[CHUNK];
	size_t k = 0;
	uint64_t checked = 0;
	for (uint64_t u = 0; u < (1ull << 32); u += 251) {
		uint32_t v = (uint32_t)u;
		memcpy(&buf[k], &v, sizeof v);
		ref[k] = ali_f16_round(buf[k]);
		if (++k == CHUNK || u + 251 >= (1ull << 32)) {
			ali_f16_round_array(buf, k);
			for (size_t i = 0; i < k; i++) {
				bool same = (isnan(ref[i]) && isnan(buf[i])) ||
					    memcmp(&ref[i], &buf[i], sizeof(float)) == 0;
				if (!same) {
					print_error("round_array: %a -> %a, ali_f16_round %a\n", (double)buf[i],
						    (double)buf[i], (double)ref[i]);
					fail();
				}
			}
			checked += k;
			k = 0;
		}
	}
	/* every float within 2^16 ulps of the boundaries: 0, 2^-24, 2^-14, 65504, 65520, inf */
	const float edges[] = {0.0f, 0x1p-25f, 0x1p-24f, 0x1p-15f, 0x1p-14f, 65504.0f, 65520.0f, INFINITY};
	for (size_t e = 0; e < sizeof edges / sizeof edges[0]; e++) {
		uint32_t c;
		memcpy(&c, &edges[e], sizeof c);
		for (int64_t d = -(1 << 16); d <= (1 << 16); d++) {
			int64_t b = (int64_t)c + d;
			if (b < 0 || b > 0xffffffffll)
				continue;
			for (int sgn = 0; sgn < 2; sgn++) {
				uint32_t v = (uint32_t)b ^ (sgn ? 0x80000000u : 0);
				float f, g;
				memcpy(&f, &v, sizeof f);
				g = f;
				ali_f16_round_array(&g, 1);
				float want = ali_f16_round(f);
				assert_true((isnan(want) && isnan(g)) || memcmp(&want, &g, sizeof g) == 0);
				checked++;
			}
		}
	}
	assert_true(checked > 17000000);
}

static void test_f16_values(void **state)
{
	(void)state;
	assert_int_equal(f16_bits_of(1.0f), 0x3c00);
	assert_int_equal(f16_bits_of(-2.0f), 0xc000);
	assert_int_equal(f16_bits_of(0.0f), 0x0000);
	assert_int_equal(f16_bits_of(-0.0f), 0x8000);
	assert_int_equal(f16_bits_of(65504.0f), 0x7bff);
	assert_int_equal(f16_bits_of(65519.99f), 0x7bff);
	assert_int_equal(f16_bits_of(65520.0f), 0x7c00); /* the tie above max rounds to inf */
	assert_int_equal(f16_bits_of(-65520.0f), 0xfc00);
	assert_int_equal(f16_bits_of(1e10f), 0x7c00);
	assert_int_equal(f16_bits_of(INFINITY), 0x7c00);
	assert_int_equal(f16_bits_of(-INFINITY), 0xfc00);
	assert_true(isnan(ali_f16_round(NAN)));
	assert_true(isinf(ali_f16_round(70000.0f)));
	assert_true(ali_f16_round(65504.0f) == 65504.0f);
	/* RNE: 1 + 2^-11 is halfway between 1 and 1 + 2^-10: to even (1.0);
	 * 1 + 3*2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9: up */
	assert_int_equal(f16_bits_of(1.0f + 0x1p-11f), 0x3c00);
	assert_int_equal(f16_bits_of(1.0f + 3 * 0x1p-11f), 0x3c02);
	assert_int_equal(f16_bits_of(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
	/* subnormals: 2^-24 is the smallest; 2^-25 ties to 0 (even); 3*2^-25 ties up to 2 */
	assert_int_equal(f16_bits_of(0x1p-24f), 0x0001);
	assert_int_equal(f16_bits_of(0x1p-25f), 0x0000);
	assert_int_equal(f16_bits_of(0x1p-25f + 0x1p-40f), 0x0001);
	assert_int_equal(f16_bits_of(3 * 0x1p-25f), 0x0002);
	assert_int_equal(f16_bits_of(1023 * 0x1p-24f), 0x03ff);
	assert_int_equal(f16_bits_of(1023.5f * 0x1p-24f), 0x0400); /* ties up into the normals */
	assert_int_equal(f16_bits_of(AL_F16_MIN_NORMAL), 0x0400);
	assert_int_equal(f16_bits_of(-AL_F16_MIN_SUBNORMAL), 0x8001);
	assert_int_equal(f16_bits_of(1e-10f), 0x0000);
	assert_int_equal(f16_bits_of(0x1p-149f), 0x0000); /* float subnormal */
	assert_true(ali_f16_to_f32(0x0001) == AL_F16_MIN_SUBNORMAL);
	assert_true(ali_f16_to_f32(0x7bff) == AL_F16_MAX);
	assert_true(ali_f16_to_f32(0x3555) == 0.333251953125f);
	float a[4] = {0.1f, 1e6f, -3e-8f, 2.0f};
	ali_f16_round_array(a, 4);
	assert_true(a[0] == 0.0999755859375f);
	assert_true(isinf(a[1]));
	assert_true(a[2] == -AL_F16_MIN_SUBNORMAL); /* 3e-8 is just above half of 2^-24 */
	assert_true(a[3] == 2.0f);
}

/* The vector fp16 paths (kernels_simd.c) against the portable loops, bit for
 * bit, NaN payloads included: round in place and into another array, and
 * is_rounded, on a dense sample of all float patterns in arrays of every length
 * 0..40 (the 8-wide body and each tail), plus NaNs and the edges. Skipped where
 * the machine has no F16C (then the portable loops are all there is). */
static void simd_round_case(const float *src, size_t n)
{
	float a[48], b[48], c[48], d[48];
	memcpy(a, src, n * sizeof *a);
	memcpy(b, src, n * sizeof *b);
	ali_simd_force(0);
	ali_f16_round_array(a, n);
	ali_f16_round_copy(c, src, n);
	bool r0 = ali_f16_is_rounded(src, n);
	ali_simd_force(-1);
	ali_f16_round_array(b, n);
	ali_f16_round_copy(d, src, n);
	bool r1 = ali_f16_is_rounded(src, n);
	if (memcmp(a, b, n * sizeof *a) != 0 || memcmp(c, d, n * sizeof *c) != 0 ||
	    memcmp(a, c, n * sizeof *a) != 0 || r0 != r1 || r0 != (memcmp(a, src, n * sizeof *a) == 0)) {
		for (size_t i = 0; i < n; i++)
			print_error("%zu: %a -> portable %a, vector %a\n", i, (double)src[i], (double)a[i],
				    (double)b[i]);
		print_error("is_rounded: portable %d, vector %d\n", r0, r1);
		fail();
	}
}

static void test_f16_simd(void **state)
{
	(void)state;
	if (ali_simd_level() < 1) {
		skip();
		return;
	}
	float buf[48];
	uint64_t u = 0, cases = 0;
	for (size_t n = 0; u < (1ull << 32); n = n == 40 ? 0 : n + 1) {
		for (size_t i = 0; i < n; i++, u += 4099) {
			uint32_t v = (uint32_t)u;
			memcpy(&buf[i], &v, sizeof v);
		}
		simd_round_case(buf, n);
		cases += n;
	}
	/* NaNs with payload bits the rounding would drop, signalling ones, infinities,
	 * the edges of the fp16 range, among rounded values (is_rounded true but
	 * for one lane) */
	const uint32_t odd[] = {0x7fc00001u, 0xffc01234u, 0x7f800001u, 0xff80ffffu, 0x7f800000u,
				0xff800000u, 0x477fe000u, 0x477ff000u, 0x477fefffu, 0x33800000u,
				0x33000000u, 0x38800000u, 0x387fffffu, 0x80000001u, 0x00000000u};
	for (size_t k = 0; k < sizeof odd / sizeof odd[0]; k++)
		for (size_t n = 1; n <= 40; n++)
			for (size_t at = 0; at < n; at++) {
				for (size_t i = 0; i < n; i++)
					buf[i] = (float)i * 0.5f;
				memcpy(&buf[at], &odd[k], sizeof odd[k]);
				simd_round_case(buf, n);
				cases += n;
			}
	assert_true(cases > 1300000); /* values checked */
}

/* ================================================================ gemm */

static void test_gemm_hand(void **state)
{
	(void)state;
	/* A = [1 2 3; 4 5 6], B = [1 0; 0 1; 1 1]: AB = [4 5; 10 11] */
	const float A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {1, 0, 0, 1, 1, 1};
	const float At[6] = {1, 4, 2, 5, 3, 6}, Bt[6] = {1, 0, 1, 0, 1, 1};
	const float want[4] = {4, 5, 10, 11};
	for (int impl = 0; impl < 2; impl++) {
		void (*g)(bool, bool, size_t, size_t, size_t, float, const float *, size_t, const float *,
			  size_t, float, float *, size_t) = impl ? ali_gemm : ali_gemm_naive;
		float C[4] = {NAN, NAN, NAN, NAN};
		g(false, false, 2, 2, 3, 1.0f, A, 3, B, 2, 0.0f, C, 2); /* beta 0 ignores NaN */
		CLOSE(C, want, 0);
		float C2[4] = {0};
		g(true, false, 2, 2, 3, 1.0f, At, 2, B, 2, 0.0f, C2, 2);
		CLOSE(C2, want, 0);
		float C3[4] = {0};
		g(false, true, 2, 2, 3, 1.0f, A, 3, Bt, 3, 0.0f, C3, 2);
		CLOSE(C3, want, 0);
		float C4[4] = {0};
		g(true, true, 2, 2, 3, 1.0f, At, 2, Bt, 3, 0.0f, C4, 2);
		CLOSE(C4, want, 0);
		/* alpha 2, beta 0.5 on C = 1s, C stored with ldc 3: 2*AB + 0.5 */
		float C5[6] = {1, 1, -7, 1, 1, -7};
		g(false, false, 2, 2, 3, 2.0f, A, 3, B, 2, 0.5f, C5, 3);
		const float want5[6] = {8.5f, 10.5f, -7, 20.5f, 22.5f, -7};
		CLOSE(C5, want5, 0);
		/* K = 0: C = beta * C */
		float C6[4] = {1, 2, 3, 4};
		g(false, false, 2, 2, 0, 1.0f, A, 0, B, 2, 2.0f, C6, 2);
		const float want6[4] = {2, 4, 6, 8};
		CLOSE(C6, want6, 0);
	}
}

/* One-row products (M = 1, B transposed: kernels_simd.c's dot products when the
 * machine has AVX2 + FMA, else BLAS / the loop): against the loop for K = 0..70
 * and a few large K, beta 0 (C's NaNs not read), 1 and 0.5, alpha 1 and 0.75;
 * and every element of C the same bits whether computed among N rows or alone
 * (row j of B as a product of one column) on the vector path, which is what
 * makes splitting the columns over threads, or a layer into parts, give the
 * same results. */
static void test_gemm_one_row(void **state)
{
	(void)state;
	const size_t Ks[] = {256, 1000, 1024, 4099};
	for (size_t it = 0; it < 71 + sizeof Ks / sizeof Ks[0]; it++) {
		size_t K = it < 71 ? it : Ks[it - 71], N = (size_t)irand(1, 37), ldb = K + (size_t)irand(0, 5);
		float alpha = it % 3 ? 1.0f : 0.75f, beta = it % 3 == 0 ? 0.0f : it % 3 == 1 ? 1.0f : 0.5f;
		float *A = frand_array(K), *B = frand_array(N * ldb), *C0 = frand_array(N);
		float *C1 = malloc(N * sizeof *C1), *C2 = malloc(N * sizeof *C2), *C3 = malloc(N * sizeof *C3);
		assert_non_null(C1);
		assert_non_null(C2);
		assert_non_null(C3);
		if (beta == 0.0f)
			for (size_t j = 0; j < N; j++)
				C0[j] = NAN;
		memcpy(C1, C0, N * sizeof *C1);
		memcpy(C2, C0, N * sizeof *C2);
		memcpy(C3, C0, N * sizeof *C3);
		ali_gemm(false, true, 1, N, K, alpha, A, K, B, ldb, beta, C1, N);
		ali_gemm_naive(false, true, 1, N, K, alpha, A, K, B, ldb, beta, C2, N);
		for (size_t j = 0; j < N; j++)
			ali_gemm(false, true, 1, 1, K, alpha, A, K, B + j * ldb, ldb, beta, C3 + j, 1);
		for (size_t j = 0; j < N; j++) {
			if (!(fabsf(C1[j] - C2[j]) <= 1e-5f * (float)(K + 1))) {
				print_error("N%zu K%zu [%zu] %g vs the loop's %g\n", N, K, j, (double)C1[j],
					    (double)C2[j]);
				fail();
			}
			if (ali_simd_level() >= 2 && memcmp(&C1[j], &C3[j], sizeof C1[j]) != 0) {
				print_error("N%zu K%zu [%zu] %a among %zu rows, %a alone\n", N, K, j,
					    (double)C1[j], N, (double)C3[j]);
				fail();
			}
		}
		free(A);
		free(B);
		free(C0);
		free(C1);
		free(C2);
		free(C3);
	}
}

static void test_gemm_blas_vs_naive(void **state)
{
	(void)state;
	if (!ali_gemm_has_blas())
		print_message("(built without BLAS: ali_gemm is the loop)\n");
	for (int it = 0; it < 60; it++) {
		size_t M = (size_t)irand(1, 70), N = (size_t)irand(1, 70), K = (size_t)irand(1, 90);
		bool ta = rnd() & 1, tb = rnd() & 1;
		size_t lda = (ta ? M : K) + (size_t)irand(0, 3), ldb = (tb ? K : N) + (size_t)irand(0, 3);
		size_t ldc = N + (size_t)irand(0, 3);
		float alpha = it % 3 ? 1.0f : 0.75f, beta = it % 4 == 0 ? 0.5f : 0.0f;
		float *A = frand_array((ta ? K : M) * lda), *B = frand_array((tb ? N : K) * ldb);
		float *C1 = frand_array(M * ldc), *C2 = malloc(M * ldc * sizeof *C2);
		assert_non_null(C2);
		memcpy(C2, C1, M * ldc * sizeof *C2);
		ali_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C1, ldc);
		ali_gemm_naive(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C2, ldc);
		/* relative to the size of the sum of |terms| (the values are in [-1, 1)) */
		for (size_t i = 0; i < M; i++)
			for (size_t j = 0; j < ldc; j++) {
				float d = fabsf(C1[i * ldc + j] - C2[i * ldc + j]);
				if (d > 1e-5f * (float)K) {
					print_error("M%zu N%zu K%zu ta%d tb%d [%zu,%zu] %g vs %g\n", M, N, K, ta,
						    tb, i, j, (double)C1[i * ldc + j], (double)C2[i * ldc + j]);
					fail();
				}
			}
		free(A);
		free(B);
		free(C1);
		free(C2);
	}
}

/* ================================================================ convolution */

static struct al_conv2d conv_params(int64_t n, int64_t cin, int64_t h, int64_t w, int64_t cout,
				    int64_t kh, int64_t kw, int64_t groups, int64_t s, int64_t d,
				    int64_t pt, int64_t pb, int64_t pl, int64_t pr)
{
	struct al_conv2d p = {.n = n, .cin = cin, .h = h, .w = w, .cout = cout, .kh = kh, .kw = kw,
			      .groups = groups, .sh = s, .sw = s, .dh = d, .dw = d, .pt = pt,
			      .pb = pb, .pl = pl, .pr = pr};
	p.oh = (h + pt + pb - d * (kh - 1) - 1) / s + 1;
	p.ow = (w + pl + pr - d * (kw - 1) - 1) / s + 1;
	return p;
}

typedef bool (*conv_fn)(const struct al_conv2d *, const float *, const float *, const float *,
			float *);

static void test_conv_hand(void **state)
{
	(void)state;
	const float x9[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
	conv_fn fns[2] = {ali_conv2d, ali_conv2d_naive};
	for (int f = 0; f < 2; f++) {
		conv_fn conv = fns[f];
		/* valid 2x2 kernel [1 0; 0 1] + bias 1: x[i][j] + x[i+1][j+1] + 1 */
		struct al_conv2d p = conv_params(1, 1, 3, 3, 1, 2, 2, 1, 1, 1, 0, 0, 0, 0);
		const float w1[4] = {1, 0, 0, 1}, b1[1] = {1};
		float y[9];
		assert_true(conv(&p, x9, w1, b1, y));
		const float want1[4] = {7, 9, 13, 15};
		CLOSE(y, want1, 0);
		/* asymmetric padding: top 1, right 1, ones 2x2 -> 3x3 output (see the
		 * padded input: a zero row above, a zero column on the right) */
		p = conv_params(1, 1, 3, 3, 1, 2, 2, 1, 1, 1, 1, 0, 0, 1);
		assert_int_equal(p.oh, 3);
		assert_int_equal(p.ow, 3);
		const float ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
		assert_true(conv(&p, x9, ones, NULL, y));
		const float want2[9] = {3, 5, 3, 12, 16, 9, 24, 28, 15};
		CLOSE(y, want2, 0);
		/* stride 2, dilation 2 on x[i][j] = 5i + j (5x5): taps (0,0) (0,2) (2,0) (2,2) */
		float x25[25];
		for (int i = 0; i < 25; i++)
			x25[i] = (float)i;
		p = conv_params(1, 1, 5, 5, 1, 2, 2, 1, 2, 2, 0, 0, 0, 0);
		assert_int_equal(p.oh, 2);
		assert_true(conv(&p, x25, ones, NULL, y));
		const float want3[4] = {24, 32, 64, 72};
		CLOSE(y, want3, 0);
		/* depthwise with multiplier 2: cin 2, cout 4, groups 2, 1x1 weights 1..4 */
		const float x2[8] = {1, 2, 3, 4, 10, 20, 30, 40};
		const float w4[4] = {1, 2, 3, 4};
		p = conv_params(1, 2, 2, 2, 4, 1, 1, 2, 1, 1, 0, 0, 0, 0);
		float y16[16];
		assert_true(conv(&p, x2, w4, NULL, y16));
		const float want4[16] = {1, 2, 3, 4, 2, 4, 6, 8, 30, 60, 90, 120, 40, 80, 120, 160};
		CLOSE(y16, want4, 0);
		/* grouped, 2 input channels per group (gemm path): cin 4, cout 2, groups 2 */
		const float x4[4] = {1, 10, 100, 1000};
		const float wg[4] = {1, 2, 3, 4};
		p = conv_params(1, 4, 1, 1, 2, 1, 1, 2, 1, 1, 0, 0, 0, 0);
		assert_true(conv(&p, x4, wg, NULL, y));
		const float want5[2] = {21, 4300};
		CLOSE(y, want5, 0);
		/* depthwise 3x3 ones, pad 1, stride 2 on 1..9 (two channels: x and 10x) */
		float x18[18];
		for (int i = 0; i < 9; i++) {
			x18[i] = x9[i];
			x18[9 + i] = 10 * x9[i];
		}
		float w18[18];
		for (int i = 0; i < 18; i++)
			w18[i] = 1;
		p = conv_params(1, 2, 3, 3, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1);
		assert_int_equal(p.oh, 2);
		assert_true(conv(&p, x18, w18, NULL, y));
		const float want6[8] = {12, 16, 24, 28, 120, 160, 240, 280};
		CLOSE(y, want6, 0);
		/* 1-D: h = kh = 1, [1 2 3 4] * [1 -1], pad left 1: [-1, -1, -1, -1]... */
		const float x1d[4] = {1, 2, 4, 8}, w1d[2] = {1, -1};
		p = conv_params(1, 1, 1, 4, 1, 1, 2, 1, 1, 1, 0, 0, 1, 0);
		assert_int_equal(p.ow, 4);
		assert_true(conv(&p, x1d, w1d, NULL, y));
		/* y[j] = x[j-1] - x[j] with x[-1] = 0 */
		const float want7[4] = {-1, -1, -2, -4};
		CLOSE(y, want7, 0);
		/* batch 2 */
		const float xb[18] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 8, 7, 6, 5, 4, 3, 2, 1};
		p = conv_params(2, 1, 3, 3, 1, 2, 2, 1, 1, 1, 0, 0, 0, 0);
		assert_true(conv(&p, xb, w1, NULL, y));
		const float want8[8] = {6, 8, 12, 14, 14, 12, 8, 6};
		CLOSE(y, want8, 0);
	}
}

static void conv_cross_check(struct al_conv2d p, bool with_bias)
{
	size_t nx = (size_t)(p.n * p.cin * p.h * p.w), nw = (size_t)(p.cout * (p.cin / p.groups) * p.kh * p.kw);
	size_t ny = (size_t)(p.n * p.cout * p.oh * p.ow);
	float *x = frand_array(nx), *w = frand_array(nw), *b = frand_array((size_t)p.cout);
	float *y1 = frand_array(ny), *y2 = frand_array(ny);
	assert_true(ali_conv2d(&p, x, w, with_bias ? b : NULL, y1));
	assert_true(ali_conv2d_naive(&p, x, w, with_bias ? b : NULL, y2));
	for (size_t i = 0; i < ny; i++)
		if (fabsf(y1[i] - y2[i]) > 1e-5f * (float)(p.kh * p.kw * p.cin)) {
			print_error("conv n%ld cin%ld %ldx%ld cout%ld k%ldx%ld g%ld s%ld d%ld pad %ld %ld %ld %ld: [%zu] %g vs %g\n",
				    (long)p.n, (long)p.cin, (long)p.h, (long)p.w, (long)p.cout, (long)p.kh,
				    (long)p.kw, (long)p.groups, (long)p.sh, (long)p.dh, (long)p.pt,
				    (long)p.pb, (long)p.pl, (long)p.pr, i, (double)y1[i], (double)y2[i]);
			fail();
		}
	free(x);
	free(w);
	free(b);
	free(y1);
	free(y2);
}

static void test_conv_fast_vs_naive(void **state)
{
	(void)state;
	/* fixed shapes: 1x1 direct gemm, depthwise stride 2, ResNet-like 3x3 */
	conv_cross_check(conv_params(2, 8, 5, 6, 4, 1, 1, 1, 1, 1, 0, 0, 0, 0), true);
	conv_cross_check(conv_params(1, 6, 9, 9, 6, 3, 3, 6, 2, 1, 1, 1, 1, 1), true);
	conv_cross_check(conv_params(1, 16, 14, 14, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1), false);
	conv_cross_check(conv_params(1, 3, 17, 17, 8, 7, 7, 1, 2, 1, 3, 3, 3, 3), true);
	/* depthwise with 2 threads (enough work to start them), odd plane counts */
	ali_kernels_set_threads(2);
	conv_cross_check(conv_params(1, 15, 64, 64, 15, 3, 3, 15, 1, 1, 1, 1, 1, 1), true);
	conv_cross_check(conv_params(3, 7, 65, 63, 14, 3, 3, 7, 2, 1, 0, 1, 1, 0), true);
	conv_cross_check(conv_params(1, 9, 40, 40, 9, 5, 5, 9, 1, 2, 4, 4, 4, 4), false);
	ali_kernels_set_threads(1);
	for (int it = 0; it < 150; it++) {
		int64_t g = irand(1, 3), cig = irand(1, 3), cog = irand(1, 3);
		if (it % 5 == 0)
			cig = 1; /* depthwise-style */
		int64_t kh = irand(1, 4), kw = irand(1, 4), s = irand(1, 3), d = irand(1, 2);
		struct al_conv2d p = {.n = irand(1, 2), .cin = g * cig, .h = irand(1, 9), .w = irand(1, 9),
				      .cout = g * cog, .kh = kh, .kw = kw, .groups = g,
				      .sh = s, .sw = irand(1, 3), .dh = d, .dw = irand(1, 2),
				      .pt = irand(0, 2), .pb = irand(0, 2), .pl = irand(0, 2), .pr = irand(0, 2)};
		int64_t eh = p.h + p.pt + p.pb - p.dh * (p.kh - 1), ew = p.w + p.pl + p.pr - p.dw * (p.kw - 1);
		if (eh < 1 || ew < 1)
			continue;
		p.oh = (eh - 1) / p.sh + 1;
		p.ow = (ew - 1) / p.sw + 1;
		conv_cross_check(p, it & 1);
	}
}

/* Winograd F(4x4, 3x3) against the direct loop: outputs that are not multiples
 * of 4, every padding form, two images, with and without bias, 1 and 2
 * threads; then the shapes it declines. */
static void wino_cross_check(struct al_conv2d p, bool with_bias)
{
	size_t nx = (size_t)(p.n * p.cin * p.h * p.w), nw = (size_t)(p.cout * p.cin * 9);
	size_t ny = (size_t)(p.n * p.cout * p.oh * p.ow);
	float *x = frand_array(nx), *w = frand_array(nw), *b = frand_array((size_t)p.cout);
	float *y1 = frand_array(ny), *y2 = frand_array(ny);
	float *u = frand_array(ali_winograd_weights_len(p.cout, p.cin));
	ali_winograd_weights(p.cout, p.cin, w, u);
	assert_true(ali_conv2d_winograd(&p, x, u, with_bias ? b : NULL, y1));
	assert_true(ali_conv2d_naive(&p, x, w, with_bias ? b : NULL, y2));
	for (size_t i = 0; i < ny; i++)
		if (fabsf(y1[i] - y2[i]) > 1e-5f * (float)(9 * p.cin)) {
			print_error("winograd cin%ld %ldx%ld: [%zu] %g vs %g\n", (long)p.cin, (long)p.h,
				    (long)p.w, i, (double)y1[i], (double)y2[i]);
			fail();
		}
	free(x);
	free(w);
	free(b);
	free(y1);
	free(y2);
	free(u);
}

static void test_conv_winograd(void **state)
{
	(void)state;
	struct al_conv2d ps[] = {
		conv_params(1, 16, 23, 25, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1),
		conv_params(2, 20, 26, 27, 16, 3, 3, 1, 1, 1, 0, 0, 0, 0),
		conv_params(1, 16, 30, 22, 24, 3, 3, 1, 1, 1, 0, 1, 1, 0),
		conv_params(1, 33, 32, 32, 16, 3, 3, 1, 1, 1, 2, 2, 1, 1),
	};
	for (int th = 1; th <= 2; th++) {
		ali_kernels_set_threads(th);
		for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
			assert_true(ali_conv2d_winograd_fits(&ps[i]));
			wino_cross_check(ps[i], i & 1);
		}
	}
	ali_kernels_set_threads(1);
	/* 4096 tiles of 16 channels: more than one band of scratch (16 MB holds
	 * 3640), the second starting mid-row; against im2col (faster than the loop) */
	{
		struct al_conv2d p = conv_params(1, 16, 256, 256, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1);
		size_t nx = (size_t)(16 * 256 * 256), nw = 16 * 16 * 9;
		float *x = frand_array(nx), *w = frand_array(nw), *b = frand_array(16);
		float *y1 = frand_array(nx), *y2 = frand_array(nx);
		float *u = frand_array(ali_winograd_weights_len(16, 16));
		ali_winograd_weights(16, 16, w, u);
		assert_true(ali_conv2d_winograd(&p, x, u, b, y1));
		assert_true(ali_conv2d(&p, x, w, b, y2));
		for (size_t i = 0; i < nx; i++)
			if (fabsf(y1[i] - y2[i]) > 1e-5f * 9 * 16)
				fail_msg("banded winograd [%zu] %g vs %g", i, (double)y1[i], (double)y2[i]);
		free(x), free(w), free(b), free(y1), free(y2), free(u);
	}
	/* a 7x7 output (ResNet-18's last stage) is computed right though not chosen */
	wino_cross_check(conv_params(1, 32, 7, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1), true);
	/* declined: too few tiles, too few channels, stride 2, 5x5, grouped */
	struct al_conv2d no[] = {
		conv_params(1, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1),
		conv_params(1, 8, 64, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1),
		conv_params(1, 64, 64, 64, 64, 3, 3, 1, 2, 1, 1, 1, 1, 1),
		conv_params(1, 64, 64, 64, 64, 5, 5, 1, 1, 1, 2, 2, 2, 2),
		conv_params(1, 64, 64, 64, 64, 3, 3, 2, 1, 1, 1, 1, 1, 1),
	};
	float one = 1;
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
		assert_false(ali_conv2d_winograd_fits(&no[i]));
		if (i >= 2) /* no Winograd form at all */
			assert_false(ali_conv2d_winograd(&no[i], &one, &one, NULL, &one));
	}
}

static void test_conv_transpose(void **state)
{
	(void)state;
	conv_fn fns[2] = {ali_conv2d_transpose, ali_conv2d_transpose_naive};
	for (int f = 0; f < 2; f++) {
		conv_fn convt = fns[f];
		/* stride 2, 2x2 ones: each input becomes a 2x2 block */
		const float x[4] = {1, 2, 3, 4}, ones[4] = {1, 1, 1, 1};
		struct al_conv2d p = {.n = 1, .cin = 1, .h = 2, .w = 2, .cout = 1, .kh = 2, .kw = 2,
				      .groups = 1, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .oh = 4, .ow = 4};
		float y[25];
		assert_true(convt(&p, x, ones, NULL, y));
		const float want1[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
		CLOSE(y, want1, 0);
		/* output padding 1 (oh = ow = 5) and bias 10: the extra row/column is the bias */
		p.oh = p.ow = 5;
		const float b10[1] = {10};
		assert_true(convt(&p, x, ones, b10, y));
		const float want2[25] = {11, 11, 12, 12, 10, 11, 11, 12, 12, 10, 13, 13, 14, 14, 10,
					 13, 13, 14, 14, 10, 10, 10, 10, 10, 10};
		CLOSE(y, want2, 0);
		/* stride 1, w = [1 2; 3 4], x = identity 2x2: w at (0,0) plus w at (1,1) */
		const float xi[4] = {1, 0, 0, 1}, w[4] = {1, 2, 3, 4};
		p = (struct al_conv2d){.n = 1, .cin = 1, .h = 2, .w = 2, .cout = 1, .kh = 2, .kw = 2,
				       .groups = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .oh = 3, .ow = 3};
		assert_true(convt(&p, xi, w, NULL, y));
		const float want3[9] = {1, 2, 0, 3, 5, 2, 0, 3, 4};
		CLOSE(y, want3, 0);
		/* padding top/left 1 crops the first row and column */
		p.pt = p.pl = 1;
		p.oh = p.ow = 2;
		assert_true(convt(&p, xi, w, NULL, y));
		const float want4[4] = {5, 2, 3, 4};
		CLOSE(y, want4, 0);
		/* groups 2, cin 2, cout 4: w [2, 2, 1, 1] = {1, 2, 3, 4} */
		const float xg[2] = {10, 100};
		p = (struct al_conv2d){.n = 1, .cin = 2, .h = 1, .w = 1, .cout = 4, .kh = 1, .kw = 1,
				       .groups = 2, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .oh = 1, .ow = 1};
		assert_true(convt(&p, xg, w, NULL, y));
		const float want5[4] = {10, 20, 300, 400};
		CLOSE(y, want5, 0);
	}
	/* adjoint: <conv(x), u> == <x, conv_transpose(u)> with the same weights, for
	 * shapes whose sizes divide exactly (and with the remainder as output padding) */
	for (int it = 0; it < 80; it++) {
		int64_t g = irand(1, 2);
		struct al_conv2d c = {.n = 1, .cin = g * irand(1, 3), .h = irand(2, 9), .w = irand(2, 9),
				      .cout = g * irand(1, 3), .kh = irand(1, 3), .kw = irand(1, 3),
				      .groups = g, .sh = irand(1, 3), .sw = irand(1, 3), .dh = irand(1, 2),
				      .dw = irand(1, 2), .pt = irand(0, 1), .pb = irand(0, 1),
				      .pl = irand(0, 1), .pr = irand(0, 1)};
		int64_t eh = c.h + c.pt + c.pb - c.dh * (c.kh - 1), ew = c.w + c.pl + c.pr - c.dw * (c.kw - 1);
		if (eh < 1 || ew < 1)
			continue;
		c.oh = (eh - 1) / c.sh + 1;
		c.ow = (ew - 1) / c.sw + 1;
		struct al_conv2d t = c;
		t.cin = c.cout;
		t.cout = c.cin;
		t.h = c.oh;
		t.w = c.ow;
		t.oh = c.h;
		t.ow = c.w;
		size_t nx = (size_t)(c.cin * c.h * c.w), nu = (size_t)(c.cout * c.oh * c.ow);
		size_t nw = (size_t)(c.cout * (c.cin / g) * c.kh * c.kw);
		float *x = frand_array(nx), *u = frand_array(nu), *w = frand_array(nw);
		float *cx = frand_array(nu), *tu = frand_array(nx);
		assert_true(ali_conv2d(&c, x, w, NULL, cx));
		assert_true(ali_conv2d_transpose(&t, u, w, NULL, tu));
		double l = 0, r = 0, mag = 0;
		for (size_t i = 0; i < nu; i++) {
			l += (double)cx[i] * u[i];
			mag += fabs((double)cx[i] * u[i]);
		}
		for (size_t i = 0; i < nx; i++)
			r += (double)x[i] * tu[i];
		assert_true(fabs(l - r) <= 1e-5 * (1 + mag));
		float *tu2 = frand_array(nx);
		assert_true(ali_conv2d_transpose_naive(&t, u, w, NULL, tu2));
		check_close(tu, tu2, nx, 1e-5f, "convt fast vs naive");
		free(x);
		free(u);
		free(w);
		free(cx);
		free(tu);
		free(tu2);
	}
}

/* ================================================================ pooling */

static void test_pool(void **state)
{
	(void)state;
	const float x9[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
	float y[16];
	/* 4x4, 2x2 stride 2 max */
	float x16[16];
	for (int i = 0; i < 16; i++)
		x16[i] = (float)(i + 1);
	struct al_pool2d p = {.n = 1, .c = 1, .h = 4, .w = 4, .kh = 2, .kw = 2, .sh = 2, .sw = 2,
			      .oh = 2, .ow = 2};
	ali_maxpool2d(&p, x16, y);
	const float want1[4] = {6, 8, 14, 16};
	CLOSE(y, want1, 0);
	/* 3x3, k2 s2, pad top/left 1: windows rows {-1,0},{1,2} x cols the same */
	p = (struct al_pool2d){.n = 1, .c = 1, .h = 3, .w = 3, .kh = 2, .kw = 2, .sh = 2, .sw = 2,
			       .pt = 1, .pl = 1, .oh = 2, .ow = 2};
	ali_maxpool2d(&p, x9, y);
	const float want2[4] = {1, 3, 7, 9};
	CLOSE(y, want2, 0);
	p.exclude_pad = true; /* {1}/1, {2,3}/2, {4,7}/2, {5,6,8,9}/4 */
	ali_avgpool2d(&p, x9, y);
	const float want3[4] = {1, 2.5f, 5.5f, 7};
	CLOSE(y, want3, 1e-7f);
	p.exclude_pad = false; /* every window has 4 slots */
	ali_avgpool2d(&p, x9, y);
	const float want4[4] = {0.25f, 1.25f, 2.75f, 7};
	CLOSE(y, want4, 1e-7f);
	/* ceil mode: 3x3, k2 s2, no pad -> 2x2; the last windows hang past the edge
	 * and are clipped (both ways: there is no padding to count) */
	p = (struct al_pool2d){.n = 1, .c = 1, .h = 3, .w = 3, .kh = 2, .kw = 2, .sh = 2, .sw = 2,
			       .oh = 2, .ow = 2};
	for (int e = 0; e < 2; e++) {
		p.exclude_pad = e;
		ali_avgpool2d(&p, x9, y); /* {1,2,4,5}/4, {3,6}/2, {7,8}/2, {9}/1 */
		const float want5[4] = {3, 4.5f, 7.5f, 9};
		CLOSE(y, want5, 1e-7f);
	}
	ali_maxpool2d(&p, x9, y);
	const float want6[4] = {5, 6, 8, 9};
	CLOSE(y, want6, 0);
	/* ceil mode with padding 1 all round, k3 s2 on 3x3: oh = ceil((3+2-3)/2)+1 = 2;
	 * windows rows [-1,2) and [1,4) -> clipped to the padded extent [-1,4):
	 * include-pad divides by 9 both; exclude-pad by the real counts 4, 4, 4, 4 */
	p = (struct al_pool2d){.n = 1, .c = 1, .h = 3, .w = 3, .kh = 3, .kw = 3, .sh = 2, .sw = 2,
			       .pt = 1, .pb = 1, .pl = 1, .pr = 1, .oh = 2, .ow = 2};
	ali_avgpool2d(&p, x9, y);
	const float want7[4] = {12.0f / 9, 16.0f / 9, 24.0f / 9, 28.0f / 9};
	CLOSE(y, want7, 1e-6f);
	p.exclude_pad = true;
	ali_avgpool2d(&p, x9, y);
	const float want8[4] = {3, 4, 6, 7};
	CLOSE(y, want8, 1e-6f);
	/* ceil mode past the padding: 4x4, k3 s2, pad 0/0 top-left, oh = 2 where the
	 * second window covers rows 2..4 (row 4 beyond the input, no padding there):
	 * include-pad counts only the clipped window (2 rows) */
	p = (struct al_pool2d){.n = 1, .c = 1, .h = 4, .w = 4, .kh = 3, .kw = 3, .sh = 2, .sw = 2,
			       .oh = 2, .ow = 2};
	ali_avgpool2d(&p, x16, y);
	/* (0,0): rows 0-2 cols 0-2: 1+2+3+5+6+7+9+10+11 = 54 / 9 = 6
	 * (0,1): rows 0-2 cols 2-3: 3+4+7+8+11+12 = 45 / 6 = 7.5
	 * (1,0): rows 2-3 cols 0-2: 9+10+11+13+14+15 = 72 / 6 = 12
	 * (1,1): rows 2-3 cols 2-3: 11+12+15+16 = 54 / 4 = 13.5 */
	const float want9[4] = {6, 7.5f, 12, 13.5f};
	CLOSE(y, want9, 1e-6f);
	/* L2: sqrt(sum of squares) */
	const float xl[4] = {3, 4, 0, 0};
	p = (struct al_pool2d){.n = 1, .c = 1, .h = 2, .w = 2, .kh = 2, .kw = 2, .sh = 2, .sw = 2,
			       .oh = 1, .ow = 1};
	ali_l2pool2d(&p, xl, y);
	assert_true(fabsf(y[0] - 5) < 1e-6f);
	/* random shapes against the contract written out per window */
	for (int it = 0; it < 300; it++) {
		struct al_pool2d q = {.n = irand(1, 2), .c = irand(1, 3), .h = irand(1, 9), .w = irand(1, 9),
				      .kh = irand(1, 4), .kw = irand(1, 4), .sh = irand(1, 3), .sw = irand(1, 3),
				      .exclude_pad = rnd() & 1};
		if (it % 7 == 0) { /* global */
			q.kh = q.h;
			q.kw = q.w;
		}
		q.pt = irand(0, q.kh - 1);
		q.pb = irand(0, q.kh - 1);
		q.pl = irand(0, q.kw - 1);
		q.pr = irand(0, q.kw - 1);
		int64_t eh = q.h + q.pt + q.pb - q.kh, ew = q.w + q.pl + q.pr - q.kw;
		if (eh < 0 || ew < 0)
			continue;
		bool ceil_mode = rnd() & 1;
		q.oh = (ceil_mode ? (eh + q.sh - 1) / q.sh : eh / q.sh) + 1;
		q.ow = (ceil_mode ? (ew + q.sw - 1) / q.sw : ew / q.sw) + 1;
		/* PyTorch's rule: the last window must start inside the input or left padding */
		if ((q.oh - 1) * q.sh >= q.h + q.pt)
			q.oh--;
		if ((q.ow - 1) * q.sw >= q.w + q.pl)
			q.ow--;
		size_t nx = (size_t)(q.n * q.c * q.h * q.w), ny = (size_t)(q.n * q.c * q.oh * q.ow);
		float *X = frand_array(nx), *Y = frand_array(ny), *W = frand_array(ny);
		for (int kind = 0; kind < 3; kind++) {
			if (kind == 0)
				ali_maxpool2d(&q, X, Y);
			else if (kind == 1)
				ali_avgpool2d(&q, X, Y);
			else
				ali_l2pool2d(&q, X, Y);
			for (int64_t pl = 0; pl < q.n * q.c; pl++)
				for (int64_t oy = 0; oy < q.oh; oy++)
					for (int64_t ox = 0; ox < q.ow; ox++) {
						double acc = kind == 0 ? -INFINITY : 0;
						int64_t real = 0, padded = 0;
						for (int64_t ky = 0; ky < q.kh; ky++)
							for (int64_t kx = 0; kx < q.kw; kx++) {
								int64_t iy = oy * q.sh - q.pt + ky, ix = ox * q.sw - q.pl + kx;
								if (iy >= -q.pt && iy < q.h + q.pb && ix >= -q.pl && ix < q.w + q.pr)
									padded++;
								if (iy < 0 || iy >= q.h || ix < 0 || ix >= q.w)
									continue;
								double v = X[(pl * q.h + iy) * q.w + ix];
								real++;
								if (kind == 0)
									acc = v > acc ? v : acc;
								else
									acc += kind == 1 ? v : v * v;
							}
						if (kind == 1) {
							int64_t cnt = q.exclude_pad ? real : padded;
							acc = cnt ? acc / (double)cnt : 0;
						} else if (kind == 2) {
							acc = sqrt(acc);
						}
						W[(pl * q.oh + oy) * q.ow + ox] = (float)acc;
					}
			check_close(Y, W, ny, 1e-6f, kind == 0 ? "maxpool" : kind == 1 ? "avgpool" : "l2pool");
		}
		free(X);
		free(Y);
		free(W);
	}
	/* two planes (n=1, c=2) are independent */
	float x2[8] = {1, 2, 3, 4, -1, -2, -3, -4};
	p.c = 2;
	ali_maxpool2d(&p, x2, y);
	assert_true(y[0] == 4 && y[1] == -1);
}

/* ================================================================ resampling */

static void test_resize(void **state)
{
	(void)state;
	const float x[4] = {0, 1, 2, 3};
	float y[16];
	/* nearest 2x2 -> 4x4, scale 0.5: rows/cols 0 0 1 1 */
	ali_resize_nearest(1, 2, 2, 4, 4, 0.5, 0, 0.5, 0, x, y);
	const float want1[16] = {0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3};
	CLOSE(y, want1, 0);
	/* NaN / huge coordinates are clamped, never cast */
	ali_resize_nearest(1, 2, 2, 2, 2, NAN, 0, 1e300, 0, x, y);
	assert_true(y[0] == 0 && y[1] == 1);
	/* bilinear align_corners 2x2 -> 3x3: coordinates 0, 0.5, 1 */
	ali_resize_bilinear(1, 2, 2, 3, 3, 0.5, 0, 0.5, 0, x, y);
	const float want2[9] = {0, 0.5f, 1, 1, 1.5f, 2, 2, 2.5f, 3};
	CLOSE(y, want2, 1e-7f);
	/* bilinear half-pixel 2x2 -> 4x4: sy = 0.5, oy = -0.25: coordinates
	 * -0.25 (clamped 0), 0.25, 0.75, 1.25 (clamped 1) -> c = 0, .25, .75, 1 and
	 * y[i][j] = 2 c[i] + c[j] */
	ali_resize_bilinear(1, 2, 2, 4, 4, 0.5, -0.25, 0.5, -0.25, x, y);
	const float c[4] = {0, 0.25f, 0.75f, 1};
	float want3[16];
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			want3[i * 4 + j] = 2 * c[i] + c[j];
	CLOSE(y, want3, 1e-7f);
	/* two planes, 1x2 -> 1x4 nearest with offset */
	const float x2[4] = {5, 6, 7, 8};
	ali_resize_nearest(2, 1, 2, 1, 4, 1, 0, 0.5, 0, x2, y);
	const float want4[8] = {5, 5, 6, 6, 7, 7, 8, 8};
	CLOSE(y, want4, 0);
}

/* ================================================================ elementwise */

/* Exact GELU uses a rational erf (kernels_elem.c): against double erf on a
 * dense grid, in place, across block edges, and at NaN / infinities. */
static void test_gelu_erf_accuracy(void **state)
{
	(void)state;
	enum { NG = 4001 };
	static float x[NG], y[NG];
	for (int i = 0; i < NG; i++)
		x[i] = -10.0f + 0.005f * (float)i;
	ali_unary(AL_UN_GELU_ERF, 0, 0, x, y, NG);
	ali_unary(AL_UN_GELU_ERF, 0, 0, x, x, NG); /* in place */
	for (int i = 0; i < NG; i++) {
		double v = -10.0 + 0.005 * i, want = 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
		if (fabs(y[i] - want) > 1e-6 * (fabs(v) > 1 ? fabs(v) : 1) || x[i] != y[i])
			fail_msg("gelu(%g) = %.9g (in place %.9g), want %.9g", v, (double)y[i], (double)x[i],
				 want);
	}
	float sp[3] = {NAN, INFINITY, 3}, sy[3];
	ali_unary(AL_UN_GELU_ERF, 0, 0, sp, sy, 3);
	assert_true(isnan(sy[0]));
	assert_true(isinf(sy[1]) && sy[1] > 0);
	assert_true(fabsf(sy[2] - 2.99595031f) < 1e-6f);
}

static void test_unary(void **state)
{
	(void)state;
	struct {
		enum al_unop op;
		float a, b, x, want;
	} cases[] = {
		{AL_UN_IDENTITY, 0, 0, -3, -3},
		{AL_UN_RELU, 0, 0, -1, 0},
		{AL_UN_RELU, 0, 0, 2, 2},
		{AL_UN_SIGMOID, 0, 0, 0, 0.5f},
		{AL_UN_SIGMOID, 0, 0, -200, 0},
		{AL_UN_SIGMOID, 0, 0, 200, 1},
		{AL_UN_TANH, 0, 0, 0, 0},
		{AL_UN_EXP, 0, 0, 1, 2.71828183f},
		{AL_UN_EXP2, 0, 0, 3, 8},
		{AL_UN_LOG, 0, 0, 2.71828183f, 1},
		{AL_UN_SQRT, 0, 0, 4, 2},
		{AL_UN_RSQRT, 0, 0, 4, 0.5f},
		{AL_UN_ABS, 0, 0, -3, 3},
		{AL_UN_NEG, 0, 0, 3, -3},
		{AL_UN_RECIP, 0, 0, 4, 0.25f},
		{AL_UN_FLOOR, 0, 0, -1.5f, -2},
		{AL_UN_CEIL, 0, 0, -1.5f, -1},
		{AL_UN_ROUND, 0, 0, 2.5f, 3},
		{AL_UN_ROUND, 0, 0, -2.5f, -3},
		{AL_UN_ROUND, 0, 0, 2.4f, 2},
		{AL_UN_SIGN, 0, 0, -3, -1},
		{AL_UN_SIGN, 0, 0, 0, 0},
		{AL_UN_SIGN, 0, 0, 0.1f, 1},
		{AL_UN_SIN, 0, 0, 0, 0},
		{AL_UN_COS, 0, 0, 0, 1},
		{AL_UN_TAN, 0, 0, 0.78539816f, 1},
		{AL_UN_ASIN, 0, 0, 1, 1.57079633f},
		{AL_UN_ACOS, 0, 0, 1, 0},
		{AL_UN_ATAN, 0, 0, 1, 0.78539816f},
		{AL_UN_SINH, 0, 0, 0, 0},
		{AL_UN_COSH, 0, 0, 0, 1},
		{AL_UN_ASINH, 0, 0, 0, 0},
		{AL_UN_ACOSH, 0, 0, 1, 0},
		{AL_UN_ATANH, 0, 0, 0, 0},
		{AL_UN_ERF, 0, 0, 0, 0},
		{AL_UN_SQUARE, 0, 0, -3, 9},
		{AL_UN_CUBE, 0, 0, -2, -8},
		{AL_UN_LOGICAL_NOT, 0, 0, 0, 1},
		{AL_UN_LOGICAL_NOT, 0, 0, 2, 0},
		{AL_UN_GELU_ERF, 0, 0, 1, 0.841344746f},
		{AL_UN_GELU_TANH, 0, 0, 1, 0.841191991f},
		{AL_UN_GELU_SIGMOID, 0, 0, 1, 0.845795766f},
		{AL_UN_SILU, 0, 0, 1, 0.731058579f},
		{AL_UN_SOFTPLUS, 0, 0, 0, 0.693147181f},
		{AL_UN_SOFTPLUS, 0, 0, 100, 100},   /* no overflow */
		{AL_UN_SOFTPLUS, 0, 0, -100, 0},
		{AL_UN_SOFTSIGN, 0, 0, 1, 0.5f},
		{AL_UN_LINEAR, 2, 1, 3, 7},
		{AL_UN_LEAKY_RELU, 0.1f, 0, -2, -0.2f},
		{AL_UN_LEAKY_RELU, 0.1f, 0, 2, 2},
		{AL_UN_ELU, 1, 0, -1, -0.632120559f},
		{AL_UN_ELU, 1, 0, 3, 3},
		{AL_UN_THRESHOLDED_RELU, 1, 0, 1, 0},
		{AL_UN_THRESHOLDED_RELU, 1, 0, 2, 2},
		{AL_UN_SCALED_TANH, 2, 0.5f, 0, 0},
		{AL_UN_SIGMOID_HARD, 0.2f, 0.5f, 10, 1},
		{AL_UN_SIGMOID_HARD, 0.2f, 0.5f, 0, 0.5f},
		{AL_UN_SIGMOID_HARD, 0.2f, 0.5f, -10, 0},
		{AL_UN_CLIP, 0, 6, 7, 6},
		{AL_UN_CLIP, 0, 6, -1, 0},
		{AL_UN_CLIP, 0, 6, 3, 3},
		{AL_UN_POW, 2, 0, 3, 9},
		{AL_UN_POW, 0.5f, 0, 9, 3},
		{AL_UN_SOFTPLUS_PARAM, 2, 1, 0, 1.38629436f},
		{AL_UN_THRESHOLD, 1, 0, 0, 1},
		{AL_UN_THRESHOLD, 1, 0, 5, 5},
		{AL_UN_INVERSE_EPS, 1, 0, 1, 0.5f},
		{AL_UN_LOG_EPS, 1, 0, 1.71828183f, 1},
		{AL_UN_RSQRT_EPS, 1, 0, 3, 0.5f},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		float y = NAN;
		ali_unary(cases[i].op, cases[i].a, cases[i].b, &cases[i].x, &y, 1);
		if (!(fabsf(y - cases[i].want) <= 2e-6f * (1 + fabsf(cases[i].want)))) {
			print_error("op %d x %g: got %.9g want %.9g\n", cases[i].op, (double)cases[i].x,
				    (double)y, (double)cases[i].want);
			fail();
		}
	}
	/* in place over an array; NaN passes through relu */
	float v[3] = {-1, NAN, 2};
	ali_unary(AL_UN_RELU, 0, 0, v, v, 3);
	assert_true(v[0] == 0 && isnan(v[1]) && v[2] == 2);
}

/* flat index of y coordinate c (rank ry) in an operand of rank r, dims d, broadcast */
static size_t bc_index(const int64_t *c, int ry, int r, const int64_t *d)
{
	size_t off = 0;
	for (int i = 0; i < r; i++) {
		int64_t ci = d[i] == 1 ? 0 : c[i + ry - r];
		off = off * (size_t)d[i] + (size_t)ci;
	}
	return off;
}

static void test_binary_broadcast(void **state)
{
	(void)state;
	/* rank 5: a [2,1,3,1,2] = 100 i0 + 10 i2 + i4, b [1,2,1,2,1] = 1000 j1 + 10000 j3 */
	const int64_t da[5] = {2, 1, 3, 1, 2}, db[5] = {1, 2, 1, 2, 1};
	float a[12], b[4];
	for (int i0 = 0; i0 < 2; i0++)
		for (int i2 = 0; i2 < 3; i2++)
			for (int i4 = 0; i4 < 2; i4++)
				a[(i0 * 3 + i2) * 2 + i4] = (float)(100 * i0 + 10 * i2 + i4);
	for (int j1 = 0; j1 < 2; j1++)
		for (int j3 = 0; j3 < 2; j3++)
			b[j1 * 2 + j3] = (float)(1000 * j1 + 10000 * j3);
	int ry;
	int64_t dy[8];
	assert_true(ali_broadcast_shape(5, da, 5, db, &ry, dy));
	assert_int_equal(ry, 5);
	const int64_t wantd[5] = {2, 2, 3, 2, 2};
	for (int i = 0; i < 5; i++)
		assert_int_equal(dy[i], wantd[i]);
	float y[48];
	ali_binary(AL_BIN_ADD, a, 5, da, b, 5, db, y, 5, dy);
	int k = 0;
	for (int i0 = 0; i0 < 2; i0++)
		for (int i1 = 0; i1 < 2; i1++)
			for (int i2 = 0; i2 < 3; i2++)
				for (int i3 = 0; i3 < 2; i3++)
					for (int i4 = 0; i4 < 2; i4++)
						assert_true(y[k++] == (float)(100 * i0 + 10 * i2 + i4 + 1000 * i1 + 10000 * i3));
	/* different ranks: [2,3] - [3] and [3] - [2,3] */
	const float m[6] = {1, 2, 3, 4, 5, 6}, r3[3] = {1, 10, 100};
	const int64_t d23[2] = {2, 3}, d3[1] = {3}, d32[2] = {3, 2};
	assert_true(ali_broadcast_shape(2, d23, 1, d3, &ry, dy));
	assert_int_equal(ry, 2);
	ali_binary(AL_BIN_SUB, m, 2, d23, r3, 1, d3, y, 2, dy);
	const float want1[6] = {0, -8, -97, 3, -5, -94};
	CLOSE(y, want1, 0);
	ali_binary(AL_BIN_SUB, r3, 1, d3, m, 2, d23, y, 2, dy);
	const float want2[6] = {0, 8, 97, -3, 5, 94};
	CLOSE(y, want2, 0);
	assert_false(ali_broadcast_shape(2, d23, 2, d32, &ry, dy));
	/* 0-sized axis broadcasts with 1 */
	const int64_t d0[2] = {0, 3}, d13[2] = {1, 3};
	assert_true(ali_broadcast_shape(2, d0, 2, d13, &ry, dy));
	assert_true(dy[0] == 0 && dy[1] == 3);
	ali_binary(AL_BIN_ADD, m, 2, d0, r3, 2, d13, y, 2, dy); /* writes nothing */
	/* rank 0 (scalar) with a vector, in place into the vector */
	float v[3] = {1, 2, 3};
	const float two = 2;
	const int64_t none[1] = {0};
	ali_binary(AL_BIN_MUL, &two, 0, none, v, 1, d3, v, 1, d3);
	const float want3[3] = {2, 4, 6};
	CLOSE(v, want3, 0);
	/* beyond ali_broadcast_shape's rank 8 the walk still works: rank 10,
	 * a [2,1,..,1,3] + b [1,...,1,3] */
	int64_t d10a[10], d10b[10], d10y[10];
	for (int i = 0; i < 10; i++)
		d10a[i] = d10b[i] = d10y[i] = 1;
	d10a[0] = d10y[0] = 2;
	d10a[9] = d10b[9] = d10y[9] = 3;
	ali_binary(AL_BIN_ADD, m, 10, d10a, r3, 10, d10b, y, 10, d10y);
	const float want10[6] = {2, 12, 103, 5, 15, 106};
	CLOSE(y, want10, 0);
	/* the ops, elementwise */
	const float u[6] = {-7, 7, 7, -7, 2, 0}, w[6] = {2, 2, -2, -2, 3, 0};
	const int64_t d6[1] = {6};
	struct {
		enum al_binop op;
		float want[6];
	} ops[] = {
		{AL_BIN_ADD, {-5, 9, 5, -9, 5, 0}},
		{AL_BIN_DIV, {-3.5f, 3.5f, -3.5f, 3.5f, 2.0f / 3, NAN}},
		{AL_BIN_FLOOR_DIV, {-4, 3, -4, 3, 0, NAN}},
		{AL_BIN_MOD, {1, 1, -1, -1, 2, NAN}}, /* sign of the divisor (Python %) */
		{AL_BIN_POW, {49, 49, 1.0f / 49, 1.0f / 49, 8, 1}},
		{AL_BIN_MAX, {2, 7, 7, -2, 3, 0}},
		{AL_BIN_MIN, {-7, 2, -2, -7, 2, 0}},
		{AL_BIN_EQ, {0, 0, 0, 0, 0, 1}},
		{AL_BIN_NE, {1, 1, 1, 1, 1, 0}},
		{AL_BIN_LT, {1, 0, 0, 1, 1, 0}},
		{AL_BIN_LE, {1, 0, 0, 1, 1, 1}},
		{AL_BIN_GT, {0, 1, 1, 0, 0, 0}},
		{AL_BIN_GE, {0, 1, 1, 0, 0, 1}},
		{AL_BIN_AND, {1, 1, 1, 1, 1, 0}},
		{AL_BIN_OR, {1, 1, 1, 1, 1, 0}},
		{AL_BIN_XOR, {0, 0, 0, 0, 0, 0}},
	};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		ali_binary(ops[i].op, u, 1, d6, w, 1, d6, y, 1, d6);
		check_close(y, ops[i].want, 6, 1e-6f, "binary op");
	}
	const float p0[2] = {0, 1}, q0[2] = {1, 1};
	const int64_t d2[1] = {2};
	ali_binary(AL_BIN_XOR, p0, 1, d2, q0, 1, d2, y, 1, d2);
	assert_true(y[0] == 1 && y[1] == 0);
	/* max/min propagate NaN */
	const float pn[2] = {NAN, 1}, qn[2] = {1, NAN};
	ali_binary(AL_BIN_MAX, pn, 1, d2, qn, 1, d2, y, 1, d2);
	assert_true(isnan(y[0]) && isnan(y[1]));
	/* random shapes up to rank 6 against index arithmetic */
	for (int it = 0; it < 200; it++) {
		int rk = (int)irand(1, 6), ra = (int)irand(0, rk), rb = rk;
		if (rnd() & 1) {
			rb = ra;
			ra = rk;
		}
		int64_t full[6], ea[6], eb[6];
		for (int i = 0; i < rk; i++)
			full[i] = irand(1, 4);
		for (int i = 0; i < ra; i++)
			ea[i] = (rnd() % 3 == 0) ? 1 : full[i + rk - ra];
		for (int i = 0; i < rb; i++)
			eb[i] = (rnd() % 3 == 0) ? 1 : full[i + rk - rb];
		int64_t dd[8];
		assert_true(ali_broadcast_shape(ra, ea, rb, eb, &ry, dd));
		size_t na = 1, nb = 1, ny = 1;
		for (int i = 0; i < ra; i++)
			na *= (size_t)ea[i];
		for (int i = 0; i < rb; i++)
			nb *= (size_t)eb[i];
		for (int i = 0; i < ry; i++)
			ny *= (size_t)dd[i];
		float *A = frand_array(na), *B = frand_array(nb), *Y = frand_array(ny), *S = frand_array(ny);
		ali_binary(AL_BIN_MUL, A, ra, ea, B, rb, eb, Y, ry, dd);
		ali_select(A, ra, ea, B, rb, eb, A, ra, ea, S, ry, dd);
		int64_t c[8] = {0};
		for (size_t i = 0; i < ny; i++) {
			float av = A[bc_index(c, ry, ra, ea)], bv = B[bc_index(c, ry, rb, eb)];
			assert_true(Y[i] == av * bv);
			assert_true(S[i] == (av != 0 ? bv : av));
			for (int ax = ry - 1; ax >= 0; ax--) {
				if (++c[ax] < dd[ax])
					break;
				c[ax] = 0;
			}
		}
		ali_broadcast_to(A, ra, ea, Y, ry, dd);
		memset(c, 0, sizeof c);
		for (size_t i = 0; i < ny; i++) {
			assert_true(Y[i] == A[bc_index(c, ry, ra, ea)]);
			for (int ax = ry - 1; ax >= 0; ax--) {
				if (++c[ax] < dd[ax])
					break;
				c[ax] = 0;
			}
		}
		free(A);
		free(B);
		free(Y);
		free(S);
	}
}

static void test_select_broadcast_to(void **state)
{
	(void)state;
	/* cond [2,1], a [1,3], b scalar -> [2,3] */
	const float cond[2] = {1, 0}, a[3] = {1, 2, 3}, b = -1;
	const int64_t dc[2] = {2, 1}, da[2] = {1, 3}, dy[2] = {2, 3};
	float y[6];
	ali_select(cond, 2, dc, a, 2, da, &b, 0, NULL, y, 2, dy);
	const float want[6] = {1, 2, 3, -1, -1, -1};
	CLOSE(y, want, 0);
	/* tile [3] -> [2, 3] */
	const int64_t d3[1] = {3};
	ali_broadcast_to(a, 1, d3, y, 2, dy);
	const float want2[6] = {1, 2, 3, 1, 2, 3};
	CLOSE(y, want2, 0);
}

/* ================================================================ reductions */

static float brute_reduce(enum al_redop op, const float *x, int rank, const int64_t *dims,
			  uint32_t axes, const int64_t *yc)
{
	/* walk every x element whose kept coordinates match yc */
	size_t n = 1;
	for (int i = 0; i < rank; i++)
		n *= (size_t)dims[i];
	double acc = op == AL_RED_PROD ? 1 : op == AL_RED_MAX ? -INFINITY : op == AL_RED_MIN ? INFINITY : 0;
	double mx = -INFINITY;
	size_t cnt = 0;
	int64_t c[8] = {0};
	for (size_t i = 0; i < n; i++) {
		bool match = true;
		for (int a = 0; a < rank; a++)
			if (!(axes >> a & 1) && c[a] != yc[a])
				match = false;
		if (match) {
			double v = x[i];
			cnt++;
			switch (op) {
			case AL_RED_SUM: case AL_RED_MEAN: case AL_RED_LOGSUM: acc += v; break;
			case AL_RED_PROD: acc *= v; break;
			case AL_RED_MAX: acc = v > acc ? v : acc; break;
			case AL_RED_MIN: acc = v < acc ? v : acc; break;
			case AL_RED_L1: acc += fabs(v); break;
			case AL_RED_L2: case AL_RED_SUMSQUARE: acc += v * v; break;
			case AL_RED_LOGSUMEXP: mx = v > mx ? v : mx; acc += exp(v); break;
			default: break;
			}
		}
		for (int a = rank - 1; a >= 0; a--) {
			if (++c[a] < dims[a])
				break;
			c[a] = 0;
		}
	}
	(void)mx;
	switch (op) {
	case AL_RED_MEAN: return (float)(acc / (double)cnt);
	case AL_RED_L2: return (float)sqrt(acc);
	case AL_RED_LOGSUM: case AL_RED_LOGSUMEXP: return (float)log(acc);
	default: return (float)acc;
	}
}

static void test_reduce(void **state)
{
	(void)state;
	/* x [2,3,4] = 0..23, x[i][j][k] = 12i + 4j + k */
	float x[24];
	for (int i = 0; i < 24; i++)
		x[i] = (float)i;
	const int64_t d[3] = {2, 3, 4};
	float y[24];
	/* sum over axes 0 and 2: sum_i sum_k (12i + 4j + k) = 32j + 60 */
	ali_reduce(AL_RED_SUM, x, 3, d, 0x5, y);
	const float want1[3] = {60, 92, 124};
	CLOSE(y, want1, 0);
	ali_reduce(AL_RED_MEAN, x, 3, d, 0x5, y);
	const float want2[3] = {7.5f, 11.5f, 15.5f};
	CLOSE(y, want2, 0);
	/* max over axis 1 (the inner axis is kept: lanes) = 12i + 8 + k */
	ali_reduce(AL_RED_MAX, x, 3, d, 0x2, y);
	const float want3[8] = {8, 9, 10, 11, 20, 21, 22, 23};
	CLOSE(y, want3, 0);
	ali_reduce(AL_RED_MIN, x, 3, d, 0x2, y);
	const float want4[8] = {0, 1, 2, 3, 12, 13, 14, 15};
	CLOSE(y, want4, 0);
	/* everything */
	ali_reduce(AL_RED_SUM, x, 3, d, 0x7, y);
	assert_true(y[0] == 276);
	/* no axis: identity */
	ali_reduce(AL_RED_SUM, x, 3, d, 0, y);
	CLOSE(y, x, 0);
	/* the others over the last axis of [1,2] rows: [3, 4] and [-1, 2] */
	const float r[4] = {3, 4, -1, 2};
	const int64_t d22[2] = {2, 2};
	struct {
		enum al_redop op;
		float want[2];
	} cases[] = {
		{AL_RED_PROD, {12, -2}},
		{AL_RED_L1, {7, 3}},
		{AL_RED_L2, {5, 2.23606798f}},
		{AL_RED_SUMSQUARE, {25, 5}},
		{AL_RED_LOGSUM, {1.94591015f, 0}},
		{AL_RED_LOGSUMEXP, {4.31326169f, 2.04858735f}},
		{AL_RED_ARGMAX, {1, 1}},
		{AL_RED_ARGMIN, {0, 0}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ali_reduce(cases[i].op, r, 2, d22, 0x2, y);
		check_close(y, cases[i].want, 2, 1e-6f, "reduce");
	}
	/* argmax / argmin ties: the first index; along the outer axis too */
	const float t[4] = {1, 3, 3, 2};
	const int64_t d4[1] = {4};
	ali_reduce(AL_RED_ARGMAX, t, 1, d4, 0x1, y);
	assert_true(y[0] == 1);
	const float t2[6] = {5, 1, 1, 1, 5, 0}; /* [3,2]: columns {5,1,5} {1,1,0} */
	const int64_t d32[2] = {3, 2};
	ali_reduce(AL_RED_ARGMAX, t2, 2, d32, 0x1, y);
	assert_true(y[0] == 0 && y[1] == 0);
	ali_reduce(AL_RED_ARGMIN, t2, 2, d32, 0x1, y);
	assert_true(y[0] == 1 && y[1] == 2);
	/* logsumexp of large values does not overflow: 1000 + ln 2 */
	const float big[2] = {1000, 1000};
	const int64_t d2[1] = {2};
	ali_reduce(AL_RED_LOGSUMEXP, big, 1, d2, 0x1, y);
	assert_true(fabsf(y[0] - 1000.693147f) < 1e-3f);
	const float minf[2] = {-INFINITY, -INFINITY};
	ali_reduce(AL_RED_LOGSUMEXP, minf, 1, d2, 0x1, y);
	assert_true(isinf(y[0]) && y[0] < 0);
	/* NaN propagates through max */
	const float nn[2] = {1, NAN};
	ali_reduce(AL_RED_MAX, nn, 1, d2, 0x1, y);
	assert_true(isnan(y[0]));
	/* random shapes and axis sets against brute force (wide inner axes exercise
	 * the 64-lane chunks) */
	for (int it = 0; it < 150; it++) {
		int rank = (int)irand(1, 5);
		int64_t dd[8];
		size_t n = 1;
		for (int i = 0; i < rank; i++) {
			dd[i] = irand(1, i == rank - 1 && it % 4 == 0 ? 140 : 5);
			n *= (size_t)dd[i];
		}
		uint32_t axes = rnd() & ((1u << rank) - 1);
		enum al_redop ops[] = {AL_RED_SUM, AL_RED_MEAN, AL_RED_MAX, AL_RED_MIN, AL_RED_L1,
				       AL_RED_L2, AL_RED_SUMSQUARE, AL_RED_LOGSUMEXP, AL_RED_PROD};
		enum al_redop op = ops[it % 9];
		float *X = frand_array(n), *Y = frand_array(n);
		ali_reduce(op, X, rank, dd, axes, Y);
		int64_t c[8] = {0};
		size_t ny = 1;
		for (int i = 0; i < rank; i++)
			ny *= (axes >> i & 1) ? 1 : (size_t)dd[i];
		for (size_t i = 0; i < ny; i++) {
			float want = brute_reduce(op, X, rank, dd, axes, c);
			if (!(fabsf(Y[i] - want) <= 1e-5f * (1 + fabsf(want)))) {
				print_error("reduce op %d rank %d axes %#x [%zu]: %g vs %g\n", op, rank, axes, i,
					    (double)Y[i], (double)want);
				fail();
			}
			for (int ax = rank - 1; ax >= 0; ax--) {
				if (axes >> ax & 1)
					continue;
				if (++c[ax] < dd[ax])
					break;
				c[ax] = 0;
			}
		}
		free(X);
		free(Y);
	}
}

/* ================================================================ normalisation */

static void test_softmax(void **state)
{
	(void)state;
	/* large values: no overflow (Python: exp(x - 1002) / sum) */
	const float x[3] = {1000, 1001, 1002};
	const float want[3] = {0.0900305732f, 0.244728471f, 0.665240956f};
	const float wlog[3] = {-2.40760596f, -1.40760596f, -0.407605964f};
	float y[6];
	ali_softmax(x, 1, 3, 1, y);
	CLOSE(y, want, 1e-6f);
	ali_log_softmax(x, 1, 3, 1, y);
	CLOSE(y, wlog, 1e-6f);
	/* [1, 3, 2]: the same along the axis in both lanes, the second lane shifted */
	const float x2[6] = {1000, -5, 1001, -4, 1002, -3};
	ali_softmax(x2, 1, 3, 2, y);
	const float want2[6] = {want[0], want[0], want[1], want[1], want[2], want[2]};
	CLOSE(y, want2, 1e-6f);
	/* two outer blocks; -inf masks get exactly 0 */
	const float x3[4] = {0, -INFINITY, 5, 5};
	ali_softmax(x3, 2, 2, 1, y);
	const float want3[4] = {1, 0, 0.5f, 0.5f};
	CLOSE(y, want3, 1e-7f);
	/* in place */
	float x4[3] = {1000, 1001, 1002};
	ali_softmax(x4, 1, 3, 1, x4);
	CLOSE(x4, want, 1e-6f);
	/* a long row (the vectorised exp, blocks of 256 and a tail) against double:
	 * values spread over [-90, 0] so terms run from 1 down past float's normals */
	enum { N = 1000 };
	static float xl[N], yl[N];
	double sum = 0.0;
	for (int i = 0; i < N; i++) {
		xl[i] = -90.0f * (float)((i * 7919) % N) / N + (i % 3 ? 0.0f : 0.3f);
		sum += exp((double)xl[i]);
	}
	ali_softmax(xl, 1, N, 1, yl);
	double worst = 0.0;
	for (int i = 0; i < N; i++) {
		double w = exp((double)xl[i]) / sum, d = fabs(yl[i] - w) / (w > 1e-30 ? w : 1.0);
		if (w > 1e-30)
			worst = d > worst ? d : worst;
		else
			assert_true(yl[i] <= 1e-30f);
	}
	/* x - max rounds in float (half an ulp of 90 is 3.8e-6: e^x moves by that
	 * relatively), as it did with libm's expf */
	assert_true(worst < 8e-6);
	/* NaN anywhere in a row: the row is NaN (as libm's expf gave) */
	float xn[3] = {1, NAN, 2};
	ali_softmax(xn, 1, 3, 1, y);
	assert_true(isnan(y[0]) && isnan(y[1]) && isnan(y[2]));
}

static void test_norms(void **state)
{
	(void)state;
	/* layer norm of [1 2 3 4]: mean 2.5, biased var 1.25 */
	const float x[4] = {1, 2, 3, 4};
	const float want[4] = {-1.34163542f, -0.447211807f, 0.447211807f, 1.34163542f};
	float y[8];
	ali_layer_norm(x, 1, 4, NULL, NULL, 1e-5f, true, y);
	CLOSE(y, want, 1e-6f);
	const float g[4] = {1, 2, 3, 4}, b[4] = {0, 1, 0, -1};
	ali_layer_norm(x, 1, 4, g, b, 1e-5f, true, y);
	const float want2[4] = {want[0], 2 * want[1] + 1, 3 * want[2], 4 * want[3] - 1};
	CLOSE(y, want2, 1e-6f);
	ali_layer_norm(x, 1, 4, NULL, NULL, 1e-5f, false, y);
	const float want3[4] = {-1.5f, -0.5f, 0.5f, 1.5f};
	CLOSE(y, want3, 0);
	/* two blocks of 2; a constant block gives 0 (eps keeps it finite) */
	const float x2[4] = {1, 3, 7, 7};
	ali_layer_norm(x2, 2, 2, NULL, NULL, 0.0f, true, y);
	assert_true(fabsf(y[0] + 1) < 1e-6f && fabsf(y[1] - 1) < 1e-6f);
	ali_layer_norm(x2, 2, 2, NULL, NULL, 1e-3f, true, y);
	assert_true(y[2] == 0 && y[3] == 0);
	/* channel affine: x [1, 2, 2] */
	const float sc[2] = {2, -1}, bi[2] = {1, 0};
	ali_channel_affine(x, 1, 2, 2, sc, bi, y);
	const float want4[4] = {3, 5, -3, -4};
	CLOSE(y, want4, 0);
	ali_channel_affine(x, 2, 1, 2, NULL, bi, y);
	const float want5[4] = {2, 3, 4, 5};
	CLOSE(y, want5, 0);
	/* l2 normalise: [3 4] -> [.6 .8]; zeros stay 0 with eps; eps inside the root:
	 * [0 1e-3] with eps 3e-6 -> 1e-3 / sqrt(1e-6 + 3e-6) = 0.5 */
	const float x3[4] = {3, 4, 0, 0};
	ali_l2_normalize(x3, 2, 2, 1e-6, y);
	const float want6[4] = {0.6f, 0.8f, 0, 0};
	CLOSE(y, want6, 1e-6f);
	const float x3b[2] = {0, 1e-3f};
	ali_l2_normalize(x3b, 1, 2, 3e-6, y);
	const float want6b[2] = {0, 0.5f};
	CLOSE(y, want6b, 1e-6f);
	/* LRN, c = 3, size 3, alpha 3 (alpha/size = 1), beta 1, k 1:
	 * y_c = x_c / (1 + sum of squares over channels c-1..c+1) */
	const float xl[3] = {1, 2, 3};
	ali_lrn(xl, 1, 3, 1, 3, 3, 1, 1, y);
	const float want7[3] = {1.0f / 6, 2.0f / 15, 3.0f / 14};
	CLOSE(y, want7, 1e-7f);
	/* beta 0.5, k 2, size 1 (only the channel itself): x / sqrt(2 + x^2 * alpha) */
	ali_lrn(xl, 1, 3, 1, 1, 1, 0.5f, 2, y);
	const float want8[3] = {1 / sqrtf(3), 2 / sqrtf(6), 3 / sqrtf(11)};
	CLOSE(y, want8, 1e-6f);
	/* even size 4 (window c-1 .. c+2), 2 x 5 channels x 70 positions */
	float *X = frand_array(700), *Y = frand_array(700), *W = frand_array(700);
	ali_lrn(X, 2, 5, 70, 4, 0.8f, 0.75f, 1.5f, Y);
	for (int bb = 0; bb < 2; bb++)
		for (int ch = 0; ch < 5; ch++)
			for (int j = 0; j < 70; j++) {
				double s = 0;
				for (int q = ch - 1; q <= ch + 2; q++)
					if (q >= 0 && q < 5)
						s += (double)X[(bb * 5 + q) * 70 + j] * X[(bb * 5 + q) * 70 + j];
				W[(bb * 5 + ch) * 70 + j] =
					(float)(X[(bb * 5 + ch) * 70 + j] / pow(1.5 + 0.8 / 4 * s, 0.75));
			}
	check_close(Y, W, 700, 1e-6f, "lrn size 4");
	free(X);
	free(Y);
	free(W);
}

/* ================================================================ data movement */

static void test_transpose(void **state)
{
	(void)state;
	/* [2,3,4] perm (2,0,1) -> [4,2,3]: y[k][i][j] = x[i][j][k] = 12i + 4j + k */
	float x[24], y[24];
	for (int i = 0; i < 24; i++)
		x[i] = (float)i;
	const int64_t d[3] = {2, 3, 4};
	const int perm[3] = {2, 0, 1};
	ali_transpose(x, 3, d, perm, y);
	for (int k = 0; k < 4; k++)
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 3; j++)
				assert_true(y[(k * 2 + i) * 3 + j] == (float)(12 * i + 4 * j + k));
	/* identity and size-1 axes: a copy */
	const int64_t d1[3] = {1, 24, 1};
	const int p1[3] = {2, 1, 0};
	ali_transpose(x, 3, d1, p1, y);
	CLOSE(y, x, 0);
	/* random ranks/perms, tiles included (sides up to 70) */
	for (int it = 0; it < 120; it++) {
		int rank = (int)irand(1, 6);
		int64_t dd[6];
		size_t n = 1;
		for (int i = 0; i < rank; i++) {
			dd[i] = irand(1, rank <= 2 ? 70 : 5);
			n *= (size_t)dd[i];
		}
		int pp[6];
		for (int i = 0; i < rank; i++)
			pp[i] = i;
		for (int i = rank - 1; i > 0; i--) {
			int j = (int)(rnd() % (uint32_t)(i + 1)), t = pp[i];
			pp[i] = pp[j];
			pp[j] = t;
		}
		float *X = frand_array(n), *Y = frand_array(n);
		ali_transpose(X, rank, dd, pp, Y);
		int64_t c[6] = {0}, xs[6];
		int64_t s = 1;
		for (int i = rank - 1; i >= 0; i--) {
			xs[i] = s;
			s *= dd[i];
		}
		for (size_t i = 0; i < n; i++) {
			int64_t off = 0;
			for (int a = 0; a < rank; a++)
				off += c[a] * xs[pp[a]];
			assert_true(Y[i] == X[off]);
			for (int a = rank - 1; a >= 0; a--) {
				if (++c[a] < dd[pp[a]])
					break;
				c[a] = 0;
			}
		}
		free(X);
		free(Y);
	}
}

static void test_slice_concat_split(void **state)
{
	(void)state;
	/* x [3,4] = 0..11; rows 2,0 (stride -2), columns 1..3 stride 2 */
	float x[12], y[12];
	for (int i = 0; i < 12; i++)
		x[i] = (float)i;
	const int64_t d[2] = {3, 4}, begin[2] = {2, 1}, stride[2] = {-2, 2}, od[2] = {2, 2};
	ali_slice(x, 2, d, begin, stride, od, y);
	const float want[4] = {9, 11, 1, 3};
	CLOSE(y, want, 0);
	/* reverse the last axis */
	const int64_t b2[2] = {0, 3}, s2[2] = {1, -1}, od2[2] = {3, 4};
	ali_slice(x, 2, d, b2, s2, od2, y);
	const float want2[12] = {3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8};
	CLOSE(y, want2, 0);
	/* concat [2,1,2] and [2,2,2] on axis 1 -> [2,3,2] */
	const float a[4] = {1, 2, 3, 4}, b[8] = {10, 11, 12, 13, 14, 15, 16, 17};
	const float *xs[2] = {a, b};
	const int64_t sizes[2] = {1, 2};
	ali_concat(xs, sizes, 2, 2, 2, y);
	const float want3[12] = {1, 2, 10, 11, 12, 13, 3, 4, 14, 15, 16, 17};
	CLOSE(y, want3, 0);
	float sa[4], sb[8];
	float *ys[2] = {sa, sb};
	ali_split(y, sizes, 2, 2, 2, ys);
	CLOSE(sa, a, 0);
	CLOSE(sb, b, 0);
}

static void test_gather_scatter(void **state)
{
	(void)state;
	/* x [2,3,2]: x[o][a][i] = 100 o + 10 a + i */
	float x[12];
	for (int o = 0; o < 2; o++)
		for (int a = 0; a < 3; a++)
			for (int i = 0; i < 2; i++)
				x[(o * 3 + a) * 2 + i] = (float)(100 * o + 10 * a + i);
	float y[16];
	const float idx[2] = {-1, 0}; /* -1 = last */
	assert_true(ali_gather(x, 2, 3, 2, idx, 2, y));
	const float want[8] = {20, 21, 0, 1, 120, 121, 100, 101};
	CLOSE(y, want, 0);
	const float bad[5][1] = {{3}, {-4}, {NAN}, {1e30f}, {0.5f}};
	for (int i = 0; i < 5; i++)
		assert_false(ali_gather(x, 2, 3, 2, bad[i], 1, y));
	/* gather_along_axis: idx [2,1,2] */
	const float ia[4] = {2, 0, -3, 1};
	assert_true(ali_gather_along_axis(x, 2, 3, 2, ia, 1, y));
	const float want2[4] = {20, 1, 100, 111};
	CLOSE(y, want2, 0);
	const float ib[4] = {3, 0, 0, 0};
	assert_false(ali_gather_along_axis(x, 2, 3, 2, ib, 1, y));
	/* gather_nd on x [2,3,2]: idx [[1,2],[0,-1]] -> slices of 2 */
	const int64_t d[3] = {2, 3, 2};
	const float in[4] = {1, 2, 0, -1};
	assert_true(ali_gather_nd(x, 3, d, in, 2, 2, y));
	const float want3[4] = {120, 121, 20, 21};
	CLOSE(y, want3, 0);
	const float in3[3] = {1, 0, 1}; /* full coordinates: one element */
	assert_true(ali_gather_nd(x, 3, d, in3, 1, 3, y));
	assert_true(y[0] == 101);
	const float inb[2] = {2, 0};
	assert_false(ali_gather_nd(x, 3, d, inb, 1, 2, y));
	/* scatter into y [1,3,1] = {1,2,3}: rows 0 and -1 */
	const float sidx[2] = {0, -1}, upd[2] = {10, 20};
	struct {
		enum al_binop op;
		float want[3];
	} cases[] = {
		{AL_BIN_COUNT, {10, 2, 20}}, {AL_BIN_ADD, {11, 2, 23}}, {AL_BIN_SUB, {-9, 2, -17}},
		{AL_BIN_MUL, {10, 2, 60}},   {AL_BIN_DIV, {0.1f, 2, 0.15f}}, {AL_BIN_MAX, {10, 2, 20}},
		{AL_BIN_MIN, {1, 2, 3}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		float s[3] = {1, 2, 3};
		assert_true(ali_scatter(s, 1, 3, 1, sidx, 2, upd, cases[i].op));
		check_close(s, cases[i].want, 3, 1e-7f, "scatter");
	}
	/* repeated index: applied in order */
	float s[3] = {1, 2, 3};
	const float rep[2] = {1, 1};
	assert_true(ali_scatter(s, 1, 3, 1, rep, 2, upd, AL_BIN_ADD));
	assert_true(s[1] == 32);
	const float sbad[1] = {3};
	assert_false(ali_scatter(s, 1, 3, 1, sbad, 1, upd, AL_BIN_ADD));
}

static void test_pad(void **state)
{
	(void)state;
	const float x[3] = {1, 2, 3};
	const int64_t d[1] = {3}, two[1] = {2};
	float y[16];
	ali_pad(x, 1, d, two, two, AL_PAD_CONSTANT, 0, y);
	const float want1[7] = {0, 0, 1, 2, 3, 0, 0};
	CLOSE(y, want1, 0);
	ali_pad(x, 1, d, two, two, AL_PAD_REFLECT, 0, y);
	const float want2[7] = {3, 2, 1, 2, 3, 2, 1};
	CLOSE(y, want2, 0);
	ali_pad(x, 1, d, two, two, AL_PAD_REPLICATE, 0, y);
	const float want3[7] = {1, 1, 1, 2, 3, 3, 3};
	CLOSE(y, want3, 0);
	/* negative before crops */
	const int64_t m1[1] = {-1}, p1[1] = {1};
	ali_pad(x, 1, d, m1, p1, AL_PAD_CONSTANT, 9, y);
	const float want4[3] = {2, 3, 9};
	CLOSE(y, want4, 0);
	/* reflect wider than the axis (numpy: [1,2] pad 3 before -> 2 1 2 1 2) */
	const float x2[2] = {1, 2};
	const int64_t d2[1] = {2}, three[1] = {3}, zero[1] = {0};
	ali_pad(x2, 1, d2, three, zero, AL_PAD_REFLECT, 0, y);
	const float want5[5] = {2, 1, 2, 1, 2};
	CLOSE(y, want5, 0);
	/* 2-D [2,2] = {1 2; 3 4}, pad 1 all round */
	const float x4[4] = {1, 2, 3, 4};
	const int64_t d22[2] = {2, 2}, ones[2] = {1, 1};
	ali_pad(x4, 2, d22, ones, ones, AL_PAD_REFLECT, 0, y);
	const float want6[16] = {4, 3, 4, 3, 2, 1, 2, 1, 4, 3, 4, 3, 2, 1, 2, 1};
	CLOSE(y, want6, 0);
	ali_pad(x4, 2, d22, ones, ones, AL_PAD_REPLICATE, 0, y);
	const float want7[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
	CLOSE(y, want7, 0);
	ali_pad(x4, 2, d22, ones, ones, AL_PAD_CONSTANT, -1, y);
	const float want8[16] = {-1, -1, -1, -1, -1, 1, 2, -1, -1, 3, 4, -1, -1, -1, -1, -1};
	CLOSE(y, want8, 0);
	/* only the first axis padded: rows */
	const int64_t b10[2] = {1, 0}, a01[2] = {0, 0};
	ali_pad(x4, 2, d22, b10, a01, AL_PAD_REPLICATE, 0, y);
	const float want9[6] = {1, 2, 1, 2, 3, 4};
	CLOSE(y, want9, 0);
}

static void test_cumsum_topk(void **state)
{
	(void)state;
	const float x[4] = {1, 2, 3, 4};
	float y[8];
	ali_cumsum(x, 1, 4, 1, false, false, y);
	const float w1[4] = {1, 3, 6, 10};
	CLOSE(y, w1, 0);
	ali_cumsum(x, 1, 4, 1, true, false, y);
	const float w2[4] = {0, 1, 3, 6};
	CLOSE(y, w2, 0);
	ali_cumsum(x, 1, 4, 1, false, true, y);
	const float w3[4] = {10, 9, 7, 4};
	CLOSE(y, w3, 0);
	ali_cumsum(x, 1, 4, 1, true, true, y);
	const float w4[4] = {9, 7, 4, 0};
	CLOSE(y, w4, 0);
	/* [1, 2, 2] along the middle axis: columns {1,3} {2,4} */
	ali_cumsum(x, 1, 2, 2, false, false, y);
	const float w5[4] = {1, 2, 4, 6};
	CLOSE(y, w5, 0);
	/* two outer blocks of [2] */
	ali_cumsum(x, 2, 2, 1, false, true, y);
	const float w6[4] = {3, 2, 7, 4};
	CLOSE(y, w6, 0);

	const float t[8] = {3, 1, 4, 1, 5, 9, 2, 6};
	float v[8], ix[8];
	ali_topk(t, 1, 8, 1, 3, true, v, ix);
	const float wv[3] = {9, 6, 5}, wi[3] = {5, 7, 4};
	check_close(v, wv, 3, 0, "topk v");
	check_close(ix, wi, 3, 0, "topk i");
	ali_topk(t, 1, 8, 1, 3, false, v, ix); /* the two 1s: lower index first */
	const float av[3] = {1, 1, 2}, ai[3] = {1, 3, 6};
	check_close(v, av, 3, 0, "topk asc v");
	check_close(ix, ai, 3, 0, "topk asc i");
	ali_topk(t, 1, 8, 1, 8, true, v, ix); /* full sort */
	const float sv[8] = {9, 6, 5, 4, 3, 2, 1, 1}, si[8] = {5, 7, 4, 2, 0, 6, 1, 3};
	CLOSE(v, sv, 0);
	CLOSE(ix, si, 0);
	/* inner 2: columns {3,4,5,2} and {1,1,9,6} (x [1,4,2]) */
	ali_topk(t, 1, 4, 2, 2, true, v, ix);
	const float cv[4] = {5, 9, 4, 6}, ci[4] = {2, 2, 1, 3};
	check_close(v, cv, 4, 0, "topk inner v");
	check_close(ix, ci, 4, 0, "topk inner i");
	/* equal values everywhere: indices in order */
	const float eq[4] = {7, 7, 7, 7};
	ali_topk(eq, 1, 4, 1, 4, true, v, ix);
	const float ei[4] = {0, 1, 2, 3};
	check_close(ix, ei, 4, 0, "topk ties");
	/* random against selection by hand: the k-th value of a sorted copy */
	for (int it = 0; it < 50; it++) {
		int64_t n = irand(1, 40), k = irand(1, n);
		float *X = frand_array((size_t)n), *V = frand_array((size_t)k), *I = frand_array((size_t)k);
		for (int64_t i = 0; i < n; i++)
			X[i] = (float)(rnd() % 10); /* many ties */
		bool desc = it & 1;
		ali_topk(X, 1, n, 1, k, desc, V, I);
		for (int64_t j = 0; j < k; j++) {
			int64_t at = (int64_t)I[j];
			assert_true(at >= 0 && at < n && X[at] == V[j]);
			/* rank of (V[j], at) = j: count the elements that come before it */
			int64_t before = 0;
			for (int64_t i = 0; i < n; i++)
				if (desc ? (X[i] > V[j] || (X[i] == V[j] && i < at))
					 : (X[i] < V[j] || (X[i] == V[j] && i < at)))
					before++;
			assert_int_equal(before, j);
		}
		free(X);
		free(V);
		free(I);
	}
}

/* ================================================================ recurrent */

static const struct al_rnn_acts SIG = {AL_UN_SIGMOID, 0, 0}, TANH = {AL_UN_TANH, 0, 0};

static void test_lstm(void **state)
{
	(void)state;
	/* H = 1, I = 1: wx (i f o z) = .5 -.5 1 2, wh = .1 .2 .3 .4, bias f = 1.
	 * Step 1 (h = c = 0): i = f = s(.5), o = s(1), z = tanh 2,
	 * c = s(.5) tanh 2 = 0.600068, h = s(1) tanh(c) = 0.392650. */
	const float wx[4] = {0.5f, -0.5f, 1, 2}, wh[4] = {0.1f, 0.2f, 0.3f, 0.4f}, bias[4] = {0, 1, 0, 0};
	const float x[2] = {1, 2};
	struct al_lstm p = {.T = 1, .B = 1, .I = 1, .H = 1, .wx = wx, .wh = wh, .bias = bias,
			    .f1 = SIG, .f2 = TANH, .f3 = TANH};
	float h = 0, c = 0, y[4];
	assert_true(ali_lstm_run(&p, x, &h, &c, y));
	assert_true(fabsf(h - 0.392650046f) < 1e-6f && fabsf(c - 0.600067963f) < 1e-6f);
	assert_true(y[0] == h);
	p.T = 2;
	h = c = 0;
	assert_true(ali_lstm_run(&p, x, &h, &c, y));
	const float wy[2] = {0.392650046f, 0.697910375f};
	check_close(y, wy, 2, 1e-6f, "lstm y");
	assert_true(fabsf(c - 1.050155f) < 1e-6f);
	/* reverse: x[1] first; y in time order */
	p.reverse = true;
	h = c = 0;
	assert_true(ali_lstm_run(&p, x, &h, &c, y));
	const float wr[2] = {0.608423468f, 0.549100243f};
	check_close(y, wr, 2, 1e-6f, "lstm reverse");
	p.reverse = false;
	/* peepholes (i .5, f -.25, o 1) and cell clip 0.7 */
	const float peep[3] = {0.5f, -0.25f, 1};
	p.peep = peep;
	p.clip = 0.7f;
	h = c = 0;
	assert_true(ali_lstm_run(&p, x, &h, &c, y));
	const float wp[2] = {0.446880451f, 0.570818758f};
	check_close(y, wp, 2, 1e-6f, "lstm peep");
	assert_true(c == 0.7f);
	p.peep = NULL;
	p.clip = 0;
	/* coupled input/forget */
	p.coupled_input_forget = true;
	h = c = 0;
	assert_true(ali_lstm_run(&p, x, &h, &c, y));
	const float wc[2] = {0.392650046f, 0.637262283f};
	check_close(y, wc, 2, 1e-6f, "lstm coupled");
	assert_true(fabsf(c - 0.895139097f) < 1e-6f);
	/* H = 2, I = 3, two steps (weights from formulas; Python reference) */
	float wx2[24], wh2[16], b2[8];
	for (int r = 0; r < 8; r++) {
		for (int k = 0; k < 3; k++)
			wx2[r * 3 + k] = 0.1f * (float)(r + 1) * (k % 2 == 0 ? 1.0f : -1.0f) + 0.05f * (float)k;
		for (int k = 0; k < 2; k++)
			wh2[r * 2 + k] = 0.2f - 0.1f * (float)r + 0.3f * (float)k;
		b2[r] = 0.1f * (float)r - 0.3f;
	}
	const float x2[6] = {1, -1, 0.5f, 0.25f, 2, -1};
	struct al_lstm q = {.T = 2, .B = 1, .I = 3, .H = 2, .wx = wx2, .wh = wh2, .bias = b2,
			    .f1 = SIG, .f2 = TANH, .f3 = TANH};
	float h2[2] = {0, 0}, c2[2] = {0, 0};
	assert_true(ali_lstm_run(&q, x2, h2, c2, y));
	const float wy2[4] = {0.349017824f, 0.432681709f, -0.0542260473f, -0.0359844416f};
	const float wc2[2] = {-0.259153109f, -0.209328514f};
	check_close(y, wy2, 4, 1e-5f, "lstm H2 y");
	check_close(c2, wc2, 2, 1e-5f, "lstm H2 c");
	/* batch 2 with the same sequence twice: both rows equal the B = 1 result */
	const float xb[12] = {1, -1, 0.5f, 1, -1, 0.5f, 0.25f, 2, -1, 0.25f, 2, -1};
	float hb[4] = {0}, cb[4] = {0}, yb[8];
	q.B = 2;
	assert_true(ali_lstm_run(&q, xb, hb, cb, yb));
	const float wyb[8] = {wy2[0], wy2[1], wy2[0], wy2[1], wy2[2], wy2[3], wy2[2], wy2[3]};
	CLOSE(yb, wyb, 1e-5f);
	/* scratch allocation failure */
	ali_alloc_fail_after(1);
	assert_false(ali_lstm_run(&q, xb, hb, cb, NULL));
	ali_alloc_fail_after(0);
}

static void test_gru_rnn(void **state)
{
	(void)state;
	/* H = 1: wx (z r o) = .5 -1 2, wh = .3 .6 -.7, bias .1 .2 .3, bias_h -.2 .1 .4 */
	const float wx[3] = {0.5f, -1, 2}, wh[3] = {0.3f, 0.6f, -0.7f};
	const float b[3] = {0.1f, 0.2f, 0.3f}, bh[3] = {-0.2f, 0.1f, 0.4f};
	const float x[2] = {1, -2};
	struct al_gru p = {.T = 2, .B = 1, .I = 1, .H = 1, .wx = wx, .wh = wh, .bias = b,
			   .bias_h = bh, .f1 = SIG, .f2 = TANH};
	float h = 0, y[4];
	assert_true(ali_gru_run(&p, x, &h, y));
	const float w0[2] = {0.39770352f, -0.617589169f};
	check_close(y, w0, 2, 1e-6f, "gru reset_after=0");
	p.reset_after = true;
	h = 0;
	assert_true(ali_gru_run(&p, x, &h, y));
	const float w1[2] = {0.395172746f, -0.618552732f};
	check_close(y, w1, 2, 1e-6f, "gru reset_after=1");
	/* H = 2, I = 2 */
	float gwx[12], gwh[12], gb[6], gbh[6];
	for (int r = 0; r < 6; r++) {
		for (int k = 0; k < 2; k++) {
			gwx[r * 2 + k] = 0.1f * (float)(r + 1) - 0.2f * (float)k;
			gwh[r * 2 + k] = 0.3f - 0.1f * (float)r + 0.2f * (float)k;
		}
		gb[r] = 0.05f * (float)r;
		gbh[r] = -0.05f * (float)r;
	}
	const float x2[4] = {1, 2, -1, 0.5f};
	struct al_gru q = {.T = 2, .B = 1, .I = 2, .H = 2, .wx = gwx, .wh = gwh, .bias = gb,
			   .bias_h = gbh, .f1 = SIG, .f2 = TANH};
	for (int ra = 0; ra < 2; ra++) {
		q.reset_after = ra;
		float h2[2] = {0, 0};
		assert_true(ali_gru_run(&q, x2, h2, y));
		const float want[2][4] = {
			{0.420245326f, 0.398555212f, 0.0740716697f, 0.00121267062f},
			{0.433648529f, 0.405599453f, 0.126545832f, 0.0656681236f}};
		check_close(y, want[ra], 4, 1e-5f, "gru H2");
		assert_true(h2[1] == y[3]);
	}
	ali_alloc_fail_after(1);
	float hh[2] = {0, 0};
	assert_false(ali_gru_run(&q, x2, hh, NULL));
	ali_alloc_fail_after(0);
	/* simple RNN, tanh: h' = tanh(.5 x + .8 h + .1) */
	const float rwx[1] = {0.5f}, rwh[1] = {0.8f}, rb[1] = {0.1f};
	const float rx[2] = {1, 2};
	struct al_rnn r = {.T = 2, .B = 1, .I = 1, .H = 1, .wx = rwx, .wh = rwh, .bias = rb, .f = TANH};
	h = 0;
	assert_true(ali_rnn_run(&r, rx, &h, y));
	const float wr[2] = {0.537049567f, 0.910362909f};
	check_close(y, wr, 2, 1e-6f, "rnn");
	/* reverse: the last input first; y[1] is the first step */
	r.reverse = true;
	h = 0;
	assert_true(ali_rnn_run(&r, rx, &h, y));
	assert_true(fabsf(y[1] - tanhf(0.5f * 2 + 0.1f)) < 1e-6f);
}

/* ================================================================ faults, threads */

static void test_conv_alloc_failure(void **state)
{
	(void)state;
	struct al_conv2d p = conv_params(1, 2, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1);
	float x[32] = {0}, w[36] = {0}, y[32];
	ali_alloc_fail_after(1);
	bool ok = ali_conv2d(&p, x, w, NULL, y);
	bool ok2 = ali_conv2d_transpose(&p, x, w, NULL, y);
	ali_alloc_fail_after(0);
	assert_false(ok);
	assert_false(ok2);
	/* a 1x1 stride-1 conv needs no scratch */
	p = conv_params(1, 2, 4, 4, 2, 1, 1, 1, 1, 1, 0, 0, 0, 0);
	ali_alloc_fail_after(1);
	ok = ali_conv2d(&p, x, w, NULL, y);
	ali_alloc_fail_after(0);
	assert_true(ok);
	/* parameters no caller should pass: refused, not a crash */
	struct al_conv2d bad = conv_params(1, 2, 4, 4, 2, 1, 1, 1, 1, 1, 0, 0, 0, 0);
	bad.groups = 0;
	assert_false(ali_conv2d(&bad, x, w, NULL, y));
	assert_false(ali_conv2d_transpose(&bad, x, w, NULL, y));
	bad.groups = 1;
	bad.sw = 0;
	assert_false(ali_conv2d(&bad, x, w, NULL, y));
	bad.sw = 1;
	bad.cin = 3;
	bad.groups = 2; /* does not divide */
	assert_false(ali_conv2d_naive(&bad, x, w, NULL, y));
	ali_kernels_set_threads(1);
	ali_kernels_set_threads(2);
	ali_kernels_set_threads(1);
}

/* The pool runs every part exactly once, with the part count it was given,
 * however many parts there are (more than workers, one, the cap). */
struct pool_probe {
	int hits[80];
	int parts_seen[80];
};

static void pool_part(void *ctx, int part, int parts)
{
	struct pool_probe *p = ctx;
	p->hits[part]++;
	p->parts_seen[part] = parts;
}

static void test_thread_pool(void **state)
{
	(void)state;
	static const int counts[] = {1, 2, 3, 7, 64, 2, 5};
	for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
		struct pool_probe p;
		memset(&p, 0, sizeof p);
		for (int rep = 0; rep < 20; rep++)
			ali_pool_run(counts[k], pool_part, &p);
		for (int t = 0; t < 80; t++) {
			assert_int_equal(p.hits[t], t < counts[k] ? 20 : 0);
			if (t < counts[k])
				assert_int_equal(p.parts_seen[t], counts[k]);
		}
	}
}

/* ali_gemm gives the same bits at any thread count, and inside a pool part
 * (where it runs in line, as Winograd's 36 products do): the product is cut
 * into blocks by its shape alone, each one sgemm call. Run by `make check` once
 * per OpenBLAS core type (tests/coretypes.sh): Haswell's and Zen's sgemm round
 * an element differently by where it sits in the call, so a cut that moved
 * with the thread count changed ~2,000 elements of the first shape there.
 * Shapes that split both ways, sizes off the blocks of 16 / 8, every transpose
 * form, beta 0 and 1, strided operands. */
struct gemm_call {
	bool ta, tb;
	size_t M, N, K, lda, ldb, ldc;
	float beta;
	const float *a, *b;
	float *c;
};

static void gemm_call_part(void *ctx, int part, int parts)
{
	(void)parts;
	const struct gemm_call *g = ctx;
	if (part == 0)
		ali_gemm(g->ta, g->tb, g->M, g->N, g->K, 0.5f, g->a, g->lda, g->b, g->ldb, g->beta, g->c, g->ldc);
}

static void test_gemm_threads(void **state)
{
	(void)state;
	static const size_t shapes[][3] = {
		{64, 784, 147}, {256, 196, 300}, {512, 49, 200}, {37, 129, 65}, {129, 37, 65}, {8, 4000, 40},
		{1, 3000, 300}, {200, 1000, 3},
	};
	static const int threads[] = {2, 3, 4, 0}; /* 0: in a pool part */
	for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
		for (int form = 0; form < 8; form++) {
			size_t M = shapes[k][0], N = shapes[k][1], K = shapes[k][2];
			bool ta = form & 1, tb = form & 2;
			float beta = form & 4 ? 1.0f : 0.0f;
			size_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 5, ldc = N + 2;
			float *a = frand_array((ta ? K : M) * lda), *b = frand_array((tb ? N : K) * ldb);
			float *c1 = frand_array(M * ldc), *c2 = malloc(M * ldc * sizeof *c2);
			float *c0 = malloc(M * ldc * sizeof *c0);
			memcpy(c0, c1, M * ldc * sizeof *c0);
			ali_kernels_set_threads(1);
			ali_gemm(ta, tb, M, N, K, 0.5f, a, lda, b, ldb, beta, c1, ldc);
			for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
				memcpy(c2, c0, M * ldc * sizeof *c2);
				if (threads[t]) {
					ali_kernels_set_threads(threads[t]);
					ali_gemm(ta, tb, M, N, K, 0.5f, a, lda, b, ldb, beta, c2, ldc);
				} else {
					struct gemm_call g = {ta, tb, M, N, K, lda, ldb, ldc, beta, a, b, c2};
					ali_kernels_set_threads(2);
					ali_pool_run(2, gemm_call_part, &g);
				}
				ali_kernels_set_threads(1);
				for (size_t i = 0; i < M; i++)
					if (memcmp(c1 + i * ldc, c2 + i * ldc, N * sizeof *c1) != 0) {
						print_error("gemm %zux%zux%zu form %d, %d threads: row %zu differs\n", M, N,
							    K, form, threads[t], i);
						fail();
					}
			}
			free(a);
			free(b);
			free(c0);
			free(c1);
			free(c2);
		}
}

/* Convolutions give the same bits at 1, 2 and 3 threads on every path the
 * pool splits: im2col (ResNet's 7x7/2 first layer on 3 channels, a 3x3/2 and
 * a 1x1/2 layer), the 1x1 direct product, depthwise, and Winograd (its input
 * transform by input channel, the 36 products, the output transform by output
 * channel), with bias. Then the balance of the split: ResNet's first layer has
 * 3 input channels, which im2col once split 1 : 2 over 2 threads (the critical
 * path 2/3 of the work); it is split by rows of the column matrix now (147
 * rows, ~1/2; measured 0.50-0.52 against 0.63 before). Measured with the pool's measuring mode (each part's thread CPU
 * time: load hardly matters), best of 5. */
static void test_conv_threads_bitwise(void **state)
{
	(void)state;
	struct {
		struct al_conv2d p;
		bool wino;
	} cs[] = {
		{conv_params(1, 3, 64, 64, 16, 7, 7, 1, 2, 1, 3, 3, 3, 3), false},
		{conv_params(2, 20, 29, 29, 24, 3, 3, 1, 2, 1, 1, 1, 1, 1), false},
		{conv_params(1, 32, 28, 28, 48, 1, 1, 1, 2, 1, 0, 0, 0, 0), false},
		{conv_params(1, 64, 14, 14, 80, 1, 1, 1, 1, 1, 0, 0, 0, 0), false},
		{conv_params(1, 40, 30, 30, 40, 3, 3, 40, 1, 1, 1, 1, 1, 1), false},
		{conv_params(1, 3, 224, 224, 1, 7, 7, 1, 2, 1, 3, 3, 3, 3), false},
		{conv_params(1, 16, 30, 26, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1), true},
		{conv_params(2, 33, 32, 32, 17, 3, 3, 1, 1, 1, 0, 1, 1, 0), true},
	};
	for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
		struct al_conv2d p = cs[k].p;
		size_t nx = (size_t)(p.n * p.cin * p.h * p.w), ny = (size_t)(p.n * p.cout * p.oh * p.ow);
		size_t nw = (size_t)(p.cout * (p.cin / p.groups) * p.kh * p.kw);
		float *x = frand_array(nx), *w = frand_array(nw), *b = frand_array((size_t)p.cout);
		float *y1 = frand_array(ny), *y2 = frand_array(ny), *u = NULL;
		if (cs[k].wino) {
			assert_true(ali_conv2d_winograd_fits(&p));
			u = frand_array(ali_winograd_weights_len(p.cout, p.cin));
			ali_winograd_weights(p.cout, p.cin, w, u);
		}
		for (int th = 1; th <= 3; th++) {
			ali_kernels_set_threads(th);
			float *y = th == 1 ? y1 : y2;
			assert_true(cs[k].wino ? ali_conv2d_winograd(&p, x, u, b, y) : ali_conv2d(&p, x, w, b, y));
			if (th > 1 && memcmp(y1, y2, ny * sizeof *y1) != 0)
				fail_msg("conv case %zu: %d threads differ from 1", k, th);
		}
		ali_kernels_set_threads(1);
		free(x), free(w), free(b), free(y1), free(y2), free(u);
	}
	/* the balance: 224x224 -> 112x112, 3 channels, one output channel (the
	 * product is small, the 147 x 12544 im2col is most of the work) */
	struct al_conv2d p = cs[5].p;
	size_t nx = (size_t)(3 * 224 * 224), ny = (size_t)(112 * 112);
	float *x = frand_array(nx), *w = frand_array(147), *y = frand_array(ny);
	double best = 1.0;
	ali_kernels_set_threads(2);
	for (int round = 0; round < 5; round++) {
		double par0, crit0, par1, crit1;
		ali_pool_sim_stats(&par0, &crit0);
		ali_pool_simulate(true);
		assert_true(ali_conv2d(&p, x, w, NULL, y));
		ali_pool_simulate(false);
		ali_pool_sim_stats(&par1, &crit1);
		double r = (crit1 - crit0) / (par1 - par0);
		best = r < best ? r : best;
	}
	ali_kernels_set_threads(1);
	/* printed, not asserted: a figure of thread CPU time is a measurement (bench/README.md
	 * "Issue 34 (5)"), and a loaded CI machine must not fail a test for it */
	print_message("im2col on 3 channels, 2 threads: critical path %.2f of the work (0.50-0.52 "
		      "measured, 0.63 before the split by rows)\n", best);
	free(x), free(w), free(y);
}

/* A job started from inside a part runs in line on that part's thread (a
 * nested job must not wait for a pool that is running its caller); the
 * measuring mode runs every part on the caller and counts their time. */
struct nest_probe {
	struct pool_probe inner[4];
	bool nested[4];
};

static void nest_part(void *ctx, int part, int parts)
{
	(void)parts;
	struct nest_probe *p = ctx;
	p->nested[part] = ali_pool_nested();
	ali_pool_run(3, pool_part, &p->inner[part]);
}

static void test_thread_pool_nested(void **state)
{
	(void)state;
	struct nest_probe p;
	memset(&p, 0, sizeof p);
	ali_kernels_set_threads(2);
	ali_pool_run(2, nest_part, &p);
	assert_false(ali_pool_nested());
	for (int t = 0; t < 2; t++) {
		assert_true(p.nested[t]);
		for (int q = 0; q < 3; q++)
			assert_int_equal(p.inner[t].hits[q], 1);
	}
	double par0, crit0, par1, crit1;
	ali_pool_sim_stats(&par0, &crit0);
	ali_pool_simulate(true);
	float *x = frand_array(1 << 20), *y = frand_array(1 << 20);
	ali_unary(AL_UN_EXP, 0, 0, x, y, 1 << 20); /* ~5 ms: split in 2 parts */
	ali_pool_simulate(false);
	ali_pool_sim_stats(&par1, &crit1);
	ali_kernels_set_threads(1);
	double par = par1 - par0, crit = crit1 - crit0;
	assert_true(par > 0.0);
	assert_true(crit >= par / 2 && crit <= par);
	for (size_t i = 0; i < (size_t)1 << 20; i += 4099)
		assert_true(y[i] == expf(x[i]));
	free(x);
	free(y);
}

/* A child of fork() (the parent's workers are not in it) runs pool jobs on
 * workers of its own instead of waiting for ones that do not exist. */
static void test_thread_pool_fork(void **state)
{
	(void)state;
	struct pool_probe p;
	memset(&p, 0, sizeof p);
	ali_pool_run(2, pool_part, &p); /* the parent's worker exists now */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(20); /* a hang becomes a failure */
		memset(&p, 0, sizeof p);
		ali_pool_run(3, pool_part, &p);
		_exit(p.hits[0] == 1 && p.hits[1] == 1 && p.hits[2] == 1 ? 0 : 1);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* ================================================================ timing
 * Not a test of speed (the machine varies); prints figures when
 * ANELINT_KERNEL_BENCH is set. */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_bench(void **state)
{
	(void)state;
	if (!getenv("ANELINT_KERNEL_BENCH"))
		skip();
	int threads = atoi(getenv("ANELINT_KERNEL_BENCH"));
	ali_kernels_set_threads(threads > 0 ? threads : 1);
	size_t n = 1000;
	float *A = frand_array(n * n), *B = frand_array(n * n), *C = frand_array(n * n);
	double best = 1e30;
	for (int r = 0; r < 5; r++) {
		double s0 = now_s();
		ali_gemm(false, false, n, n, n, 1, A, n, B, n, 0, C, n);
		double s1 = now_s();
		best = s1 - s0 < best ? s1 - s0 : best;
	}
	double t0 = 0, t1 = best;
	double t1b = now_s();
	ali_gemm_naive(false, false, n, n, n, 1, A, n, B, n, 0, C, n);
	double t2 = now_s() - t1b + t1;
	print_message("gemm 1000^3: ali_gemm %.1f ms (%.1f GFLOP/s), naive %.1f ms\n", (t1 - t0) * 1e3,
		      2.0 / (t1 - t0), (t2 - t1) * 1e3);
	free(A);
	free(B);
	free(C);
	struct {
		const char *what;
		struct al_conv2d p;
	} convs[] = {
		{"resnet 3x3 64->64 56x56", conv_params(1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1)},
		{"resnet 3x3 256->256 14x14", conv_params(1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1)},
		{"resnet 7x7/2 3->64 224", conv_params(1, 3, 224, 224, 64, 7, 7, 1, 2, 1, 3, 3, 3, 3)},
		{"mbv2 1x1 96->24 56x56", conv_params(1, 96, 56, 56, 24, 1, 1, 1, 1, 1, 0, 0, 0, 0)},
		{"mbv2 dw 3x3 144 56x56", conv_params(1, 144, 56, 56, 144, 3, 3, 144, 1, 1, 1, 1, 1, 1)},
		{"mbv2 dw 3x3/2 96 112", conv_params(1, 96, 112, 112, 96, 3, 3, 96, 2, 1, 0, 1, 0, 1)},
	};
	for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) {
		struct al_conv2d *p = &convs[i].p;
		size_t nx = (size_t)(p->n * p->cin * p->h * p->w), nw = (size_t)(p->cout * (p->cin / p->groups) * p->kh * p->kw);
		size_t ny = (size_t)(p->n * p->cout * p->oh * p->ow);
		float *x = frand_array(nx), *w = frand_array(nw), *y = frand_array(ny);
		ali_conv2d(p, x, w, NULL, y); /* warm */
		best = 1e30; /* fastest of 9: the machine may be shared */
		for (int r = 0; r < 9; r++) {
			double s0 = now_s();
			ali_conv2d(p, x, w, NULL, y);
			double s1 = now_s();
			best = s1 - s0 < best ? s1 - s0 : best;
		}
		double s1 = now_s();
		ali_conv2d_naive(p, x, w, NULL, y);
		double s2 = now_s();
		double flop = 2.0 * (double)ny * (double)(p->cin / p->groups * p->kh * p->kw);
		print_message("conv %-28s fast %7.2f ms (%5.1f GFLOP/s)  naive %8.1f ms\n", convs[i].what,
			      best * 1e3, flop / best * 1e-9, (s2 - s1) * 1e3);
		free(x);
		free(w);
		free(y);
	}
}

/* Threads of this process, from /proc/self/task; -1 where there is none. */
static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Whether this process maps a library whose path contains `name`, from
 * /proc/self/maps: 1 yes, 0 no, -1 where there is no such file. */
static int maps_library(const char *name)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	char line[4096];
	int found = 0;
	while (!found && fgets(line, sizeof line, f))
		found = strstr(line, name) != NULL;
	fclose(f);
	return found;
}

/* OpenBLAS is loaded by the first product, not when the process starts
 * (BLAS=openblas: dlopen, issue #34), and loading it stops the workers it
 * starts (one per core but the caller's), so a process keeps one thread. First
 * in main: nothing before it has multiplied or started the pool. Under
 * ANELINT_BLAS=none, or without the library, nothing is mapped at all. */
static void test_blas_loaded_by_first_product(void **state)
{
	(void)state;
	int mapped_before = maps_library("libopenblas"), before = count_threads();
	/* the first question loads it */
	const char *name = ali_gemm_blas_name();
	int mapped_after = maps_library("libopenblas"), after = count_threads();
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	print_message("%s: %d thread(s) and libopenblas %s before the first product, %d and %s after "
		      "(%ld cores)\n", name, before, mapped_before > 0 ? "mapped" : "not mapped", after,
		      mapped_after > 0 ? "mapped" : "not mapped", cores);
	if (strcmp(name, "openblas") == 0) { /* loaded at run time */
		if (mapped_before >= 0) {
			assert_int_equal(mapped_before, 0);
			assert_int_equal(mapped_after, 1);
		}
		if (before >= 0)
			assert_int_equal(after, 1);
	} else if (strcmp(name, "none") == 0 && mapped_after >= 0) {
		assert_int_equal(mapped_after, 0);
	}
	/* release after loading changes nothing, and a product gives the loop's answer */
	al_blas_release_threads();
	if (before >= 0 && strcmp(name, "blas") != 0)
		assert_int_equal(count_threads(), 1);
	float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4], want[4] = {19, 22, 43, 50};
	ali_gemm(false, false, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
	CLOSE(c, want, 0.0f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blas_loaded_by_first_product),
		cmocka_unit_test(test_f16_exhaustive),
		cmocka_unit_test(test_f16_values),
		cmocka_unit_test(test_f16_round_array),
		cmocka_unit_test(test_f16_simd),
		cmocka_unit_test(test_gemm_hand),
		cmocka_unit_test(test_gemm_blas_vs_naive),
		cmocka_unit_test(test_gemm_one_row),
		cmocka_unit_test(test_conv_hand),
		cmocka_unit_test(test_conv_fast_vs_naive),
		cmocka_unit_test(test_conv_winograd),
		cmocka_unit_test(test_conv_transpose),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_resize),
		cmocka_unit_test(test_unary),
		cmocka_unit_test(test_gelu_erf_accuracy),
		cmocka_unit_test(test_binary_broadcast),
		cmocka_unit_test(test_select_broadcast_to),
		cmocka_unit_test(test_reduce),
		cmocka_unit_test(test_softmax),
		cmocka_unit_test(test_norms),
		cmocka_unit_test(test_transpose),
		cmocka_unit_test(test_slice_concat_split),
		cmocka_unit_test(test_gather_scatter),
		cmocka_unit_test(test_pad),
		cmocka_unit_test(test_cumsum_topk),
		cmocka_unit_test(test_lstm),
		cmocka_unit_test(test_gru_rnn),
		cmocka_unit_test(test_conv_alloc_failure),
		cmocka_unit_test(test_thread_pool),
		cmocka_unit_test(test_thread_pool_fork),
		cmocka_unit_test(test_thread_pool_nested),
		cmocka_unit_test(test_gemm_threads),
		cmocka_unit_test(test_conv_threads_bitwise),
		cmocka_unit_test(test_bench),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
