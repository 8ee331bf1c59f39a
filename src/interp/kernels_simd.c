/* SPDX-License-Identifier: MIT */
/* kernels_simd.c: x86-64 vector forms of two hot loops, chosen at run time
 * (CPUID), with the portable C in kernels.c as the fallback and the reference:
 *
 *   fp16 rounding (F16C: vcvtps2ph / vcvtph2ps round to nearest even,
 *   subnormals kept, overflow to inf, as f16_round does; NaN lanes are put
 *   back unchanged, as f16_round leaves them), 8 values per instruction pair
 *   instead of ~40 scalar-equivalent instructions per 4: a stateful decoder's
 *   fp16 state rounded on every write_state was 16% of its step.
 *
 *   one-row products y = x B^T (AVX2 + FMA): a decoder step's linear layers
 *   and attention scores have one row; cblas_sgemm packs the whole of B for
 *   them (a third of the step's instructions), this reads B once. Every y[j]
 *   is the same sequence of operations whatever N, j or the split over
 *   threads (two 8-lane accumulators over blocks of 16, one block of 8, a fixed
 *   horizontal sum, the scalar tail), so results never depend on the blocking.
 *
 * Other compilers and machines get 0 from ali_simd_level() and the kernels.c
 * loops. ali_simd_force() lets tests compare both paths on one machine.
 */
#include "kernels.h"

#include <stdatomic.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define ALI_X86 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define ALI_X86 0
#endif

/* -1: not probed yet; else the level; ali_simd_force overrides */
static atomic_int simd_level = -1;
static atomic_int simd_forced = -1;

#if ALI_X86
static int probe(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return 0;
	bool osxsave = c & (1u << 27), avx = c & (1u << 28), f16c = c & (1u << 29),
	     fma = c & (1u << 12);
	if (!osxsave || !avx || !f16c)
		return 0;
	unsigned lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	(void)hi;
	if ((lo & 6u) != 6u) /* the OS saves the YMM registers */
		return 0;
	int level = 1;
	if (fma && __get_cpuid_max(0, NULL) >= 7) {
		__cpuid_count(7, 0, a, b, c, d);
		if (b & (1u << 5)) /* AVX2 */
			level = 2;
	}
	return level;
}
#else
static int probe(void)
{
	return 0;
}
#endif

int ali_simd_level(void)
{
	int f = atomic_load_explicit(&simd_forced, memory_order_relaxed);
	int l = atomic_load_explicit(&simd_level, memory_order_relaxed);
	if (l < 0) {
		l = probe();
		atomic_store_explicit(&simd_level, l, memory_order_relaxed);
	}
	return f >= 0 && f < l ? f : l;
}

void ali_simd_force(int level)
{
	atomic_store_explicit(&simd_forced, level, memory_order_relaxed);
}

#if ALI_X86

/* Eight values rounded; NaN lanes (|bits| > inf's) keep their bits. */
__attribute__((target("avx,f16c"))) static inline __m256 round8(__m256 v)
{
	__m256 r = _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
	/* NaN lanes: unordered compare of v with itself */
	__m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
	return _mm256_or_ps(_mm256_andnot_ps(nan, r), _mm256_and_ps(nan, v));
}

__attribute__((target("avx,f16c"))) void ali_simd_f16_round(float *dst, const float *src, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(dst + i, round8(_mm256_loadu_ps(src + i)));
	if (i < n) { /* the tail through a zero-padded block */
		float t[8] = {0};
		memcpy(t, src + i, (n - i) * sizeof *t);
		_mm256_storeu_ps(t, round8(_mm256_loadu_ps(t)));
		memcpy(dst + i, t, (n - i) * sizeof *t);
	}
}

__attribute__((target("avx,f16c"))) bool ali_simd_f16_is_rounded(const float *x, size_t n)
{
	size_t i = 0;
	while (i + 8 <= n) {
		/* 64 values per test of the accumulated difference */
		size_t end = n - i >= 64 ? i + 64 : i + (n - i) / 8 * 8;
		__m256i diff = _mm256_setzero_si256();
		for (; i < end; i += 8) {
			__m256 v = _mm256_loadu_ps(x + i);
			__m256 d = _mm256_xor_ps(round8(v), v);
			diff = _mm256_castps_si256(_mm256_or_ps(_mm256_castsi256_ps(diff), d));
		}
		if (!_mm256_testz_si256(diff, diff))
			return false;
	}
	if (i < n) {
		float t[8] = {0}, r[8];
		memcpy(t, x + i, (n - i) * sizeof *t);
		_mm256_storeu_ps(r, round8(_mm256_loadu_ps(t)));
		return memcmp(r, t, (n - i) * sizeof *t) == 0;
	}
	return true;
}

/* The sum of an accumulator's lanes, always in this order. */
__attribute__((target("avx2,fma"))) static inline float hsum(__m256 s)
{
	__m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
	h = _mm_add_ps(h, _mm_movehl_ps(h, h));
	h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
	return _mm_cvtss_f32(h);
}

/* The K-tail of one dot product (K % 8 values), in order. */
static inline float tail_dot(const float *x, const float *b, size_t from, size_t K)
{
	float s = 0.0f;
	for (size_t p = from; p < K; p++)
		s += x[p] * b[p];
	return s;
}

static inline void put(float *y, float dot, float alpha, float beta)
{
	float t = alpha == 1.0f ? dot : alpha * dot;
	*y = beta == 0.0f ? t : beta == 1.0f ? *y + t : beta * *y + t;
}

/* y[j] = alpha * sum_p x[p] * B[j * ldb + p] + beta * y[j], j < N (beta 0: y
 * not read). Four rows of B at a time; each row's sum is the one dot1 makes. */
__attribute__((target("avx2,fma"))) void ali_simd_gemv_t(size_t N, size_t K, float alpha,
							 const float *x, const float *B, size_t ldb,
							 float beta, float *y)
{
	size_t K16 = K / 16 * 16, K8 = K / 8 * 8, j = 0;
	for (; j + 4 <= N; j += 4) {
		const float *b0 = B + j * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
		__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
		__m256 c0 = a0, c1 = a0, c2 = a0, c3 = a0;
		size_t p = 0;
		for (; p < K16; p += 16) {
			__m256 xa = _mm256_loadu_ps(x + p), xb = _mm256_loadu_ps(x + p + 8);
			a0 = _mm256_fmadd_ps(_mm256_loadu_ps(b0 + p), xa, a0);
			c0 = _mm256_fmadd_ps(_mm256_loadu_ps(b0 + p + 8), xb, c0);
			a1 = _mm256_fmadd_ps(_mm256_loadu_ps(b1 + p), xa, a1);
			c1 = _mm256_fmadd_ps(_mm256_loadu_ps(b1 + p + 8), xb, c1);
			a2 = _mm256_fmadd_ps(_mm256_loadu_ps(b2 + p), xa, a2);
			c2 = _mm256_fmadd_ps(_mm256_loadu_ps(b2 + p + 8), xb, c2);
			a3 = _mm256_fmadd_ps(_mm256_loadu_ps(b3 + p), xa, a3);
			c3 = _mm256_fmadd_ps(_mm256_loadu_ps(b3 + p + 8), xb, c3);
		}
		if (p < K8) {
			__m256 xa = _mm256_loadu_ps(x + p);
			a0 = _mm256_fmadd_ps(_mm256_loadu_ps(b0 + p), xa, a0);
			a1 = _mm256_fmadd_ps(_mm256_loadu_ps(b1 + p), xa, a1);
			a2 = _mm256_fmadd_ps(_mm256_loadu_ps(b2 + p), xa, a2);
			a3 = _mm256_fmadd_ps(_mm256_loadu_ps(b3 + p), xa, a3);
		}
		put(y + j, hsum(_mm256_add_ps(a0, c0)) + tail_dot(x, b0, K8, K), alpha, beta);
		put(y + j + 1, hsum(_mm256_add_ps(a1, c1)) + tail_dot(x, b1, K8, K), alpha, beta);
		put(y + j + 2, hsum(_mm256_add_ps(a2, c2)) + tail_dot(x, b2, K8, K), alpha, beta);
		put(y + j + 3, hsum(_mm256_add_ps(a3, c3)) + tail_dot(x, b3, K8, K), alpha, beta);
	}
	for (; j < N; j++) { /* dot1: the same operations for one row */
		const float *b0 = B + j * ldb;
		__m256 a0 = _mm256_setzero_ps(), c0 = a0;
		size_t p = 0;
		for (; p < K16; p += 16) {
			a0 = _mm256_fmadd_ps(_mm256_loadu_ps(b0 + p), _mm256_loadu_ps(x + p), a0);
			c0 = _mm256_fmadd_ps(_mm256_loadu_ps(b0 + p + 8), _mm256_loadu_ps(x + p + 8), c0);
		}
		if (p < K8)
			a0 = _mm256_fmadd_ps(_mm256_loadu_ps(b0 + p), _mm256_loadu_ps(x + p), a0);
		put(y + j, hsum(_mm256_add_ps(a0, c0)) + tail_dot(x, b0, K8, K), alpha, beta);
	}
}

#else /* never called: ali_simd_level() is 0 */

void ali_simd_f16_round(float *dst, const float *src, size_t n)
{
	(void)dst, (void)src, (void)n;
}

bool ali_simd_f16_is_rounded(const float *x, size_t n)
{
	(void)x, (void)n;
	return false;
}

void ali_simd_gemv_t(size_t N, size_t K, float alpha, const float *x, const float *B, size_t ldb,
		     float beta, float *y)
{
	(void)N, (void)K, (void)alpha, (void)x, (void)B, (void)ldb, (void)beta, (void)y;
}

#endif
