/* SPDX-License-Identifier: MIT */
/* kernels.c: the interpreter's dense maths: fp16 rounding, matrix product
 * (OpenBLAS, loaded by the first product, or Accelerate; else a blocked loop), 2-D
 * convolution and its transpose (im2col / col2im around ali_gemm, depthwise as a
 * direct loop), pooling and resampling. The contract is kernels.h.
 *
 * Threads: OpenBLAS's, plus the interpreter's pool (pool.c, POSIX threads: one
 * band of planes each) when ali_kernels_set_threads asked for more than one.
 * Does not: check shapes (the executors do) or know about Core ML. Elementwise ops and
 * reductions are in kernels_elem.c, data movement in kernels_data.c, recurrent
 * layers in kernels_rnn.c.
 */
#include "kernels.h"
#include "analysis.h"

#include <limits.h>
#include <math.h>
#include <string.h>

/* Where cblas_sgemm comes from (the Makefile's BLAS=):
 *   ANELINT_BLAS=2 (openblas, Linux's default): OpenBLAS loaded at run time
 *     (ali_dl_open) by the first product, so the commands that never multiply
 *     (check, plan, report) neither map it nor start its threads; when it is
 *     absent, or ANELINT_BLAS=none is in the environment, the loops run;
 *   ANELINT_BLAS=1 (accelerate, macOS's default): linked, through <cblas.h>
 *     (tools/accelerate/cblas.h); its threads are its own;
 *   else (none): the loops. */
#if defined(ANELINT_BLAS) && ANELINT_BLAS == 2
#define AL_BLAS_DLOPEN 1
#define AL_BLAS_LINKED 0
#include <pthread.h>
#include <stdlib.h>
#elif defined(ANELINT_BLAS) && ANELINT_BLAS
#define AL_BLAS_DLOPEN 0
#define AL_BLAS_LINKED 1
#include <cblas.h>
#else
#define AL_BLAS_DLOPEN 0
#define AL_BLAS_LINKED 0
#endif

#define AL_MAX_THREADS 64 /* the pool's cap (pool.c) */

/* ================================================================== fp16 */

static uint32_t f32_bits(float x)
{
	uint32_t u;
	memcpy(&u, &x, sizeof u);
	return u;
}

static float bits_f32(uint32_t u)
{
	float x;
	memcpy(&x, &u, sizeof x);
	return x;
}

uint16_t ali_f16_from_f32(float x)
{
	uint32_t u = f32_bits(x);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
	uint32_t ex = (u >> 23) & 0xffu, mant = u & 0x7fffffu;
	if (ex == 0xffu) {
		if (mant) /* NaN: keep the top payload bits, force quiet so it stays NaN */
			return (uint16_t)(sign | 0x7e00u | (mant >> 13));
		return (uint16_t)(sign | 0x7c00u);
	}
	int e = (int)ex - 127;
	if (e > 15)
		return (uint16_t)(sign | 0x7c00u);
	if (e >= -14) {
		/* normal half: 10 mantissa bits kept, 13 rounded off; a carry out of
		 * the mantissa bumps the exponent (0x7bff + 1 = 0x7c00 = inf). */
		uint32_t h = ((uint32_t)(e + 15) << 10) | (mant >> 13);
		uint32_t rem = mant & 0x1fffu;
		if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
			h++;
		return (uint16_t)(sign | h);
	}
	/* subnormal half: value = M * 2^(e-23) with M the 24-bit significand; in
	 * units of 2^-24 that is M >> (-e-1). */
	int shift = -e - 1; /* >= 14 */
	if (shift > 24)
		return sign; /* below half the smallest subnormal */
	uint32_t m = mant | 0x800000u;
	uint32_t h = m >> shift;
	uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
	if (rem > half || (rem == half && (h & 1u)))
		h++;
	return (uint16_t)(sign | h);
}

float ali_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
	if (e == 0) {
		float v = (float)m * AL_F16_MIN_SUBNORMAL; /* exact */
		return sign ? -v : v;
	}
	if (e == 31)
		return bits_f32(sign | 0x7f800000u | (m << 13));
	return bits_f32(sign | ((e - 15 + 127) << 23) | (m << 13));
}

float ali_f16_round(float x)
{
	return ali_f16_to_f32(ali_f16_from_f32(x));
}

/* The same rounding without going through the 16-bit encoding, branch-free so
 * it vectorises (800k values: 2.2 ms through ali_f16_round, 0.4 ms here; the
 * tests compare the two on every float of a dense sample):
 *   |x| >= 2^-14 (half normals): round the float's mantissa to 10 bits, ties to
 *     even, in the bit pattern; a carry moves into the exponent; >= 65520 comes
 *     out >= 65536 and becomes inf.
 *   |x| < 2^-14 (half subnormals): (|x| + 0.5) - 0.5 rounds to a multiple of
 *     2^-24 (the ulp of floats in [0.5, 1)) in the FPU's round-to-nearest-even.
 *   NaN and inf pass unchanged. */
static inline float f16_round(float x)
{
	uint32_t u = f32_bits(x);
	uint32_t sign = u & 0x80000000u, a = u & 0x7fffffffu;
	uint32_t r = (a + 0xfffu + ((a >> 13) & 1u)) & 0xffffe000u;
	uint32_t sub = f32_bits((bits_f32(a) + 0.5f) - 0.5f);
	/* selects as masks (GCC does not if-convert the ternaries) */
	uint32_t big = 0u - (uint32_t)(r > 0x477fe000u);    /* above 65504: inf */
	uint32_t tiny = 0u - (uint32_t)(a < 0x38800000u);   /* below 2^-14 */
	uint32_t keep = 0u - (uint32_t)(a >= 0x7f800000u);  /* inf, NaN */
	r = (r & ~big) | (0x7f800000u & big);
	r = (r & ~tiny) | (sub & tiny);
	r = (r & ~keep) | (a & keep);
	return bits_f32(sign | r);
}

void ali_f16_round_array(float *x, size_t n)
{
	if (n >= 8 && ali_simd_level() >= 1) {
		ali_simd_f16_round(x, x, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		x[i] = f16_round(x[i]);
}

void ali_f16_round_copy(float *restrict dst, const float *restrict src, size_t n)
{
	if (n >= 8 && ali_simd_level() >= 1) {
		ali_simd_f16_round(dst, src, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		dst[i] = f16_round(src[i]);
}

/* The same rounding, compared bit for bit, 64 values at a time (a
 * branch-free block the compiler vectorises; NaN payloads compare as bits). */
bool ali_f16_is_rounded(const float *x, size_t n)
{
	if (n >= 8 && ali_simd_level() >= 1)
		return ali_simd_f16_is_rounded(x, n);
	size_t i = 0;
	while (i < n) {
		size_t end = n - i > 64 ? i + 64 : n;
		uint32_t diff = 0;
		for (; i < end; i++) {
			uint32_t u = f32_bits(x[i]);
			uint32_t sign = u & 0x80000000u, a = u & 0x7fffffffu;
			uint32_t r = (a + 0xfffu + ((a >> 13) & 1u)) & 0xffffe000u;
			uint32_t sub = f32_bits((bits_f32(a) + 0.5f) - 0.5f);
			uint32_t big = 0u - (uint32_t)(r > 0x477fe000u);
			uint32_t tiny = 0u - (uint32_t)(a < 0x38800000u);
			uint32_t keep = 0u - (uint32_t)(a >= 0x7f800000u);
			r = (r & ~big) | (0x7f800000u & big);
			r = (r & ~tiny) | (sub & tiny);
			r = (r & ~keep) | (a & keep);
			diff |= (sign | r) ^ u;
		}
		if (diff)
			return false;
	}
	return true;
}

/* ================================================================== gemm */

#define A_AT(i, p) (ta ? A[(size_t)(p) * lda + (i)] : A[(size_t)(i) * lda + (p)])
#define B_AT(p, j) (tb ? B[(size_t)(j) * ldb + (p)] : B[(size_t)(p) * ldb + (j)])

void ali_gemm_naive(bool ta, bool tb, size_t M, size_t N, size_t K, float alpha, const float *A,
		   size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc)
{
	for (size_t i = 0; i < M; i++) {
		float *c = C + i * ldc;
		if (beta == 0.0f)
			memset(c, 0, N * sizeof *c);
		else if (beta != 1.0f)
			for (size_t j = 0; j < N; j++)
				c[j] *= beta;
	}
	if (alpha == 0.0f || K == 0)
		return;
	if (!tb) {
		/* i, p, j: the inner loop runs along rows of B and C (vectorises).
		 * Blocked over p so a panel of B stays in cache across rows of C. */
		const size_t PB = 256;
		for (size_t p0 = 0; p0 < K; p0 += PB) {
			size_t p1 = p0 + PB < K ? p0 + PB : K;
			for (size_t i = 0; i < M; i++) {
				float *restrict c = C + i * ldc;
				for (size_t p = p0; p < p1; p++) {
					float a = alpha * A_AT(i, p);
					const float *restrict b = B + p * ldb;
					for (size_t j = 0; j < N; j++)
						c[j] += a * b[j];
				}
			}
		}
		return;
	}
	/* B transposed: pack a panel of op(B) (PB x JB, on the stack) so the inner
	 * loop runs along contiguous columns like the case above; dot products
	 * along B's rows would not vectorise (float sums are not reassociated).
	 * Measured 1000^3 without BLAS: 1.34 s as dot products, 0.27 s packed. */
	enum { JB = 32, PBT = 256 };
	float panel[PBT * JB];
	for (size_t j0 = 0; j0 < N; j0 += JB) {
		size_t nj = N - j0 < JB ? N - j0 : JB;
		for (size_t p0 = 0; p0 < K; p0 += PBT) {
			size_t np = K - p0 < PBT ? K - p0 : PBT;
			for (size_t jj = 0; jj < nj; jj++) {
				const float *b = B + (j0 + jj) * ldb + p0;
				for (size_t pp = 0; pp < np; pp++)
					panel[pp * JB + jj] = b[pp];
			}
			for (size_t i = 0; i < M; i++) {
				float *restrict c = C + i * ldc + j0;
				for (size_t pp = 0; pp < np; pp++) {
					float a = alpha * A_AT(i, p0 + pp);
					const float *restrict b = panel + pp * JB;
					for (size_t jj = 0; jj < nj; jj++)
						c[jj] += a * b[jj];
				}
			}
		}
	}
}

#undef A_AT
#undef B_AT

/* ------------------------------------------------------------------ BLAS at run time
 * OpenBLAS through dlopen (AL_BLAS_DLOPEN): the first product (or
 * ali_kernels_set_threads, which the interpreter calls before it runs) loads it,
 * once per process. The library must export cblas_sgemm and
 * openblas_set_num_threads: a CBLAS without the latter (Debian's reference
 * libblas) cannot be held to one thread, and its Fortran sgemm is slower than
 * the loop. The CBLAS standard fixes the enums' values, so no header is needed
 * to build, and the library is only needed to run faster. */
#if AL_BLAS_DLOPEN
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };
typedef void (*sgemm_fn)(int order, int ta, int tb, int M, int N, int K, float alpha, const float *A,
			 int lda, const float *B, int ldb, float beta, float *C, int ldc);
typedef void (*set_threads_fn)(int n);
typedef int (*shutdown_fn)(void);

/* The names tried, in order, unless ANELINT_BLAS names one (a file name the
 * loader searches for, or a path) or says none (none, off, 0). */
static const char *const blas_names[] = {
	"libopenblas.so.0",  /* Debian (its alternatives pick pthread or openmp), most Linux */
	"libopenblasp.so.0", /* Fedora's pthread build */
	"libopenblas.so",    /* a development link only */
	"libopenblas.0.dylib", "/opt/homebrew/opt/openblas/lib/libopenblas.dylib",
	"/usr/local/opt/openblas/lib/libopenblas.dylib", /* macOS with Homebrew, BLAS=openblas */
};

static struct {
	sgemm_fn sgemm;               /* NULL: the loops */
	set_threads_fn set_threads;
	shutdown_fn shutdown;         /* NULL in builds without it */
	bool loaded;                  /* written once, by blas_load */
} blas;
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

/* Load one library; false (and unloaded) unless it has both functions. */
static bool blas_try(const char *name)
{
	void *lib = ali_dl_open(name);
	if (!lib)
		return false;
	sgemm_fn sgemm = (sgemm_fn)ali_dl_sym(lib, "cblas_sgemm");
	set_threads_fn set_threads = (set_threads_fn)ali_dl_sym(lib, "openblas_set_num_threads");
	if (!sgemm || !set_threads) {
		ali_dl_close(lib);
		return false;
	}
	/* One thread, and stop the workers the library started as it loaded (each
	 * busy-waits ~0.1 s): products are split over the interpreter's pool
	 * (ali_gemm); with the library's thread count at 1 no later call restarts
	 * them. The library stays loaded until the process exits.
	 * blas_thread_shutdown_ is exported by OpenBLAS's threaded builds, which
	 * call it themselves before a fork; not in cblas.h, absent from others. */
	set_threads(1);
	shutdown_fn shutdown = (shutdown_fn)ali_dl_sym(lib, "blas_thread_shutdown_");
	if (shutdown)
		(void)shutdown();
	blas.sgemm = sgemm;
	blas.set_threads = set_threads;
	blas.shutdown = shutdown;
	return true;
}

static void blas_load(void)
{
	const char *want = getenv("ANELINT_BLAS");
	if (want && *want) {
		if (strcmp(want, "none") != 0 && strcmp(want, "off") != 0 && strcmp(want, "0") != 0)
			(void)blas_try(want);
	} else {
		for (size_t i = 0; i < sizeof blas_names / sizeof blas_names[0] && !blas.sgemm; i++)
			(void)blas_try(blas_names[i]);
	}
	blas.loaded = true;
}

static sgemm_fn blas_sgemm(void)
{
	(void)pthread_once(&blas_once, blas_load);
	return blas.sgemm;
}
#endif

/* One product on the calling thread: BLAS, or the loop. */
static void gemm1(bool ta, bool tb, size_t M, size_t N, size_t K, float alpha, const float *A,
		  size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc)
{
	/* one row times a transposed B (a linear layer on one token, attention
	 * scores of one query): dot products along B's rows, read once, instead of
	 * sgemm packing all of B (kernels_simd.c) */
	if (M == 1 && tb && !ta && K && N && alpha != 0.0f && ali_simd_level() >= 2) {
		ali_simd_gemv_t(N, K, alpha, A, B, ldb, beta, C);
		return;
	}
#if AL_BLAS_DLOPEN || AL_BLAS_LINKED
	/* cblas takes int sizes and rejects (via xerbla, which prints) leading
	 * dimensions below max(1, row length): those cases, and the trivial ones,
	 * go to the loop. */
	size_t acols = ta ? M : K, bcols = tb ? K : N;
	if (M && N && K && alpha != 0.0f && M <= INT_MAX && N <= INT_MAX && K <= INT_MAX &&
	    lda <= INT_MAX && ldb <= INT_MAX && ldc <= INT_MAX && lda >= acols && ldb >= bcols &&
	    ldc >= N) {
#if AL_BLAS_DLOPEN
		sgemm_fn sgemm = blas_sgemm();
		if (sgemm) {
			sgemm(CBLAS_ROW_MAJOR, ta ? CBLAS_TRANS : CBLAS_NO_TRANS, tb ? CBLAS_TRANS : CBLAS_NO_TRANS,
			      (int)M, (int)N, (int)K, alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
			return;
		}
#else
		cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
			    (int)M, (int)N, (int)K, alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
		return;
#endif
	}
#endif
	ali_gemm_naive(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* Whether the interpreter splits products over its own pool: yes without BLAS
 * and with OpenBLAS (whose threads are then set to one, so the two never
 * oversubscribe); a BLAS whose threads cannot be set (Accelerate) keeps its own.
 * Whether OpenBLAS was found does not matter: the blocks are the same. */
#if AL_BLAS_LINKED
#define AL_POOL_GEMM 0
#else
#define AL_POOL_GEMM 1
#endif

/* A product in fixed blocks, split over the pool. The sum an element of C gets
 * from sgemm depends on where the element sits in the product sgemm was given
 * (OpenBLAS's Haswell and Zen kernels round an element differently by its
 * column in the call: measured, a 64x784x147 product cut at column 384 or 392
 * differs from the whole in ~2,000 elements; SkylakeX's does not). So the cut
 * never depends on the thread count: a product of at least 2^19 multiply-adds
 * is cut by its shape alone into gemm_blocks() blocks (of columns of C, multiples
 * of 16, when C is at least as wide as it is tall, else of rows, multiples of 8),
 * each one single-threaded sgemm call; threads take whole blocks. --threads 1
 * makes the same calls one after the other, so every thread count gives the
 * same bits, on every OpenBLAS core type. Shapes are another matter: a product
 * of another shape (a matmul rewritten as a 1x1 conv, a product cut into
 * slices) may round differently, which is why such rewrites are classed
 * reassociate (docs/surgery.md). */
struct gemm_job {
	bool ta, tb, by_n;
	size_t M, N, K;
	float alpha, beta;
	const float *A, *B;
	float *C;
	size_t lda, ldb, ldc;
	size_t blocks;
};

/* Products below this many multiply-adds (~20 us on one thread) are one call:
 * a second thread would cost more than it saves (OpenBLAS's own cut-off for
 * threading is 2^18). */
#define AL_GEMM_SPLIT_MIN 524288.0
/* The least work and the least extent (columns or rows) of a block: each
 * sgemm call packs the whole of the operand that is not cut, so narrow blocks
 * pay for it again and again. Measured with bench/opprof.c's sim mode against
 * cutting by the thread count (ResNet-18 224x224, 3 rounds): CPU time +7%
 * (46.4-48.6 -> 50.0-51.8 ms), the 2-thread estimate +7% (26.0-27.2 -> 27.9-29.1
 * ms); MobileNetV2 within the noise (+-3%). With 128: ResNet-18 +4-6%, but
 * MobileNetV2's 7x7 and 14x14 layers stay whole at 2 threads (+8%). Cutting
 * every product into 16 blocks however narrow: ResNet-18 +25%. */
#define AL_GEMM_BLOCK_MIN 262144.0
#define AL_GEMM_BLOCK_EXTENT 64

/* The blocks of an M x N x K product: a function of the shape alone, never of
 * the thread count. Rounded down to 2, a multiple of 4, 12 or 24, so 2, 3, 4 or
 * 6 threads mostly get equal shares. */
static size_t gemm_blocks(size_t M, size_t N, size_t K, bool *by_n)
{
	*by_n = N >= M;
	double work = (double)M * (double)N * (double)K;
	if (!AL_POOL_GEMM || work < AL_GEMM_SPLIT_MIN) /* Accelerate: its own threads, one call */
		return 1;
	size_t blocks = (*by_n ? N : M) / AL_GEMM_BLOCK_EXTENT;
	if ((double)blocks > work / AL_GEMM_BLOCK_MIN)
		blocks = (size_t)(work / AL_GEMM_BLOCK_MIN);
	if (blocks > AL_MAX_THREADS)
		blocks = AL_MAX_THREADS;
	size_t step = blocks >= 24 ? 24 : blocks >= 12 ? 12 : blocks >= 4 ? 4 : 2;
	blocks = blocks / step * step;
	return blocks < 1 ? 1 : blocks;
}

/* Where block b of n starts: a multiple of unit, the last one ends at len. */
static size_t block_at(size_t len, size_t b, size_t n, size_t unit)
{
	if (b >= n)
		return len;
	return (size_t)((double)len * (double)b / (double)n) / unit * unit;
}

static void gemm_block(const struct gemm_job *j, size_t blk)
{
	if (j->by_n) {
		size_t a = block_at(j->N, blk, j->blocks, 16), b = block_at(j->N, blk + 1, j->blocks, 16);
		if (b > a)
			gemm1(j->ta, j->tb, j->M, b - a, j->K, j->alpha, j->A, j->lda,
			      j->tb ? j->B + a * j->ldb : j->B + a, j->ldb, j->beta, j->C + a, j->ldc);
	} else {
		size_t a = block_at(j->M, blk, j->blocks, 8), b = block_at(j->M, blk + 1, j->blocks, 8);
		if (b > a)
			gemm1(j->ta, j->tb, b - a, j->N, j->K, j->alpha, j->ta ? j->A + a : j->A + a * j->lda,
			      j->lda, j->B, j->ldb, j->beta, j->C + a * j->ldc, j->ldc);
	}
}

/* Part p of P takes the blocks [blocks p / P, blocks (p + 1) / P). */
static void gemm_part(void *arg, int part, int parts)
{
	const struct gemm_job *j = arg;
	size_t b0 = j->blocks * (size_t)part / (size_t)parts, b1 = j->blocks * (size_t)(part + 1) / (size_t)parts;
	for (size_t b = b0; b < b1; b++)
		gemm_block(j, b);
}

/* One row times a transposed B (gemm1's ali_simd_gemv_t) over the pool, by
 * columns of C in multiples of 4: each element is the same dot product (in the
 * same order, kernels_simd.c) wherever the cut falls, so unlike sgemm's blocks
 * the cut may follow the thread count. ResNet-18's classifier (512 x 1000,
 * 2 MB of weights read once) was its largest op left on one thread. */
struct gemv_job {
	size_t N, K;
	float alpha, beta;
	const float *A, *B;
	float *C;
	size_t ldb;
};

static void gemv_part(void *arg, int part, int parts)
{
	const struct gemv_job *j = arg;
	size_t quads = (j->N + 3) / 4;
	size_t a = quads * (size_t)part / (size_t)parts * 4, b = quads * (size_t)(part + 1) / (size_t)parts * 4;
	if (b > j->N)
		b = j->N;
	if (b > a)
		ali_simd_gemv_t(b - a, j->K, j->alpha, j->A, j->B + a * j->ldb, j->ldb, j->beta, j->C + a);
}

void ali_gemm(bool ta, bool tb, size_t M, size_t N, size_t K, float alpha, const float *A,
	     size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc)
{
	if (M == 1 && tb && !ta && K && N && alpha != 0.0f && ali_simd_level() >= 2) {
		/* ~0.25 ns a weight (read from memory once) */
		int parts = ali_pool_parts((double)((N + 3) / 4), 1.0 * (double)K);
		struct gemv_job gj = {N, K, alpha, beta, A, B, C, ldb};
		ali_pool_run(parts, gemv_part, &gj);
		return;
	}
	bool by_n;
	size_t blocks = gemm_blocks(M, N, K, &by_n);
	if (blocks <= 1) {
		gemm1(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
		return;
	}
	int nt = AL_POOL_GEMM && !ali_pool_nested() ? ali_kernels_threads() : 1;
	if ((size_t)nt > blocks)
		nt = (int)blocks;
	struct gemm_job j = {ta, tb, by_n, M, N, K, alpha, beta, A, B, C, lda, ldb, ldc, blocks};
	ali_pool_run(nt, gemm_part, &j);
}

bool ali_gemm_has_blas(void)
{
#if AL_BLAS_DLOPEN
	return blas_sgemm() != NULL;
#else
	return AL_BLAS_LINKED;
#endif
}

const char *ali_gemm_blas_name(void)
{
	return ali_gemm_has_blas() ? (AL_BLAS_DLOPEN ? "openblas" : "blas") : "none";
}

void ali_kernels_set_threads(int n)
{
	ali_pool_set_threads(n);
#if AL_BLAS_DLOPEN
	/* the interpreter is about to run: load OpenBLAS now, on this thread, not
	 * inside the first product's timing (it is then held to one thread: the
	 * products are split over the pool, ali_gemm, and its own threads would
	 * spin on the cores the pool's workers need) */
	(void)blas_sgemm();
#endif
}

void al_blas_release_threads(void)
{
#if AL_BLAS_DLOPEN
	/* Loading stops them (blas_try); a later openblas_set_num_threads starts
	 * them again (ali_blas_set_threads), so stop them again. Nothing loads
	 * here: a command that never multiplies never maps the library. Not called
	 * while kernels run (blas.loaded is then settled). */
	if (blas.loaded && blas.set_threads) {
		blas.set_threads(1);
		if (blas.shutdown)
			(void)blas.shutdown();
	}
#endif
}

void ali_blas_set_threads(int n)
{
#if AL_BLAS_DLOPEN
	if (blas_sgemm())
		blas.set_threads(n < 1 ? 1 : n);
#else
	(void)n;
#endif
}


/* ================================================================== convolution */

/* Parameters the size formulas divide by or index with; the executors check
 * them, this only keeps a slip from becoming a crash. */
static bool conv_params_ok(const struct al_conv2d *p)
{
	return p->groups >= 1 && p->sh >= 1 && p->sw >= 1 && p->dh >= 1 && p->dw >= 1 &&
	       p->n >= 0 && p->cin >= 0 && p->h >= 0 && p->w >= 0 && p->cout >= 0 && p->kh >= 0 &&
	       p->kw >= 0 && p->pt >= 0 && p->pb >= 0 && p->pl >= 0 && p->pr >= 0 && p->oh >= 0 &&
	       p->ow >= 0 && p->cin % p->groups == 0 && p->cout % p->groups == 0;
}

/* Output positions o in [0, n_out) whose input index o*stride + off lies in
 * [0, size): the half-open range [*lo, *hi). */
static void valid_range(int64_t off, int64_t stride, int64_t size, int64_t n_out, int64_t *lo,
			int64_t *hi)
{
	int64_t l = off >= 0 ? 0 : (-off + stride - 1) / stride;
	int64_t h = size - off <= 0 ? 0 : (size - off + stride - 1) / stride;
	if (h > n_out)
		h = n_out;
	if (l > h)
		l = h;
	*lo = l;
	*hi = h;
}

bool ali_conv2d_naive(const struct al_conv2d *p, const float *x, const float *w, const float *bias,
		     float *y)
{
	if (!conv_params_ok(p))
		return false;
	int64_t cig = p->cin / p->groups, cog = p->cout / p->groups;
	for (int64_t n = 0; n < p->n; n++)
		for (int64_t co = 0; co < p->cout; co++) {
			int64_t g = co / cog;
			for (int64_t oy = 0; oy < p->oh; oy++)
				for (int64_t ox = 0; ox < p->ow; ox++) {
					double s = bias ? bias[co] : 0.0;
					for (int64_t ci = 0; ci < cig; ci++)
						for (int64_t ky = 0; ky < p->kh; ky++) {
							int64_t iy = oy * p->sh - p->pt + ky * p->dh;
							if (iy < 0 || iy >= p->h)
								continue;
							for (int64_t kx = 0; kx < p->kw; kx++) {
								int64_t ix = ox * p->sw - p->pl + kx * p->dw;
								if (ix < 0 || ix >= p->w)
									continue;
								s += (double)x[((n * p->cin + g * cig + ci) * p->h + iy) * p->w + ix] *
								     w[((co * cig + ci) * p->kh + ky) * p->kw + kx];
							}
						}
					y[((n * p->cout + co) * p->oh + oy) * p->ow + ox] = (float)s;
				}
		}
	return true;
}

/* Depthwise-style convolution (one input channel per group). Each input plane
 * is copied once into a zero-bordered scratch plane big enough for every tap of
 * every output, so the loops below have no bounds tests; each output row is then
 * one pass over ow (3x3: all nine taps in one expression, else one pass per
 * tap), which the compiler vectorises for stride 1. For 3x3 stride 2 the
 * scratch rows are stored deinterleaved (even columns, then odd ones) so the
 * taps read contiguous runs too.
 * Measured (MobileNetV2 layers, 1 thread, OpenBLAS): 144ch 56x56 3x3 s1:
 * 0.39 ms here vs 0.76 ms as im2col + sgemm per channel; 96ch 112x112 s2:
 * 0.83 ms (before deinterleaving) vs 2.1 ms. */
struct dw_job {
	const struct al_conv2d *p;
	const float *x, *w, *bias;
	float *y, *pad;
	int64_t PH, PW, b, e; /* planes (n * cin + ci) b .. e-1 */
};

static void dw_planes(const struct dw_job *j)
{
	const struct al_conv2d *p = j->p;
	const float *x = j->x, *w = j->w, *bias = j->bias;
	float *y = j->y, *pad = j->pad;
	int64_t PH = j->PH, PW = j->PW;
	int64_t cog = p->cout / p->groups;
	size_t plane = (size_t)p->h * (size_t)p->w, oplane = (size_t)p->oh * (size_t)p->ow;
	int64_t sw = p->sw, dw = p->dw, ow = p->ow;
	bool deint = p->kh == 3 && p->kw == 3 && sw == 2 && dw == 1;
	int64_t PWe = (PW + 1) / 2; /* even columns first when deinterleaved */
	for (int64_t item = j->b; item < j->e; item++) {
		int64_t n = item / p->cin, ci = item % p->cin;
		const float *xp = x + (size_t)(n * p->cin + ci) * plane;
		/* zero border, rows of x at (pt, pl); only the parts of the
		 * border rows/columns outside x are cleared */
		for (int64_t r = 0; r < PH; r++) {
			float *pr = pad + r * PW;
			int64_t ir = r - p->pt;
			if (ir < 0 || ir >= p->h) {
				memset(pr, 0, (size_t)PW * sizeof *pr);
				continue;
			}
			if (deint) {
				/* phase q holds padded columns 2t + q, i.e. x column 2t + q - pl */
				const float *restrict xr = xp + ir * p->w;
				for (int q = 0; q < 2; q++) {
					float *restrict dst = pr + (q ? PWe : 0);
					int64_t cnt = q ? PW / 2 : PWe, lo, hi;
					valid_range(q - p->pl, 2, p->w, cnt, &lo, &hi);
					for (int64_t t = 0; t < lo; t++)
						dst[t] = 0.0f;
					for (int64_t t = lo; t < hi; t++)
						dst[t] = xr[2 * t + q - p->pl];
					for (int64_t t = hi; t < cnt; t++)
						dst[t] = 0.0f;
				}
				continue;
			}
			memset(pr, 0, (size_t)p->pl * sizeof *pr);
			memcpy(pr + p->pl, xp + ir * p->w, (size_t)p->w * sizeof *pr);
			memset(pr + p->pl + p->w, 0, (size_t)(PW - p->pl - p->w) * sizeof *pr);
		}
		for (int64_t m = 0; m < cog; m++) {
			int64_t co = ci * cog + m;
			const float *wp = w + (size_t)co * (size_t)(p->kh * p->kw);
			float *yp = y + (size_t)(n * p->cout + co) * oplane;
			float b0 = bias ? bias[co] : 0.0f;
			for (int64_t oy = 0; oy < p->oh; oy++) {
				float *restrict yr = yp + oy * ow;
				const float *r0 = pad + oy * p->sh * PW;
				if (p->kh == 3 && p->kw == 3) {
					const float *restrict a = r0, *restrict b = r0 + p->dh * PW,
							   *restrict c = r0 + 2 * p->dh * PW;
					float w0 = wp[0], w1 = wp[1], w2 = wp[2], w3 = wp[3], w4 = wp[4],
					      w5 = wp[5], w6 = wp[6], w7 = wp[7], w8 = wp[8];
					int64_t d1 = dw, d2 = 2 * dw;
					if (deint) {
						const float *restrict ao = a + PWe, *restrict bo = b + PWe,
								   *restrict co_ = c + PWe;
						for (int64_t ox = 0; ox < ow; ox++)
							yr[ox] = b0 + w0 * a[ox] + w1 * ao[ox] + w2 * a[ox + 1] +
								 w3 * b[ox] + w4 * bo[ox] + w5 * b[ox + 1] +
								 w6 * c[ox] + w7 * co_[ox] + w8 * c[ox + 1];
					} else if (sw == 1) {
						for (int64_t ox = 0; ox < ow; ox++)
							yr[ox] = b0 + w0 * a[ox] + w1 * a[ox + d1] + w2 * a[ox + d2] +
								 w3 * b[ox] + w4 * b[ox + d1] + w5 * b[ox + d2] +
								 w6 * c[ox] + w7 * c[ox + d1] + w8 * c[ox + d2];
					} else {
						for (int64_t ox = 0; ox < ow; ox++) {
							int64_t i = ox * sw;
							yr[ox] = b0 + w0 * a[i] + w1 * a[i + d1] + w2 * a[i + d2] +
								 w3 * b[i] + w4 * b[i + d1] + w5 * b[i + d2] +
								 w6 * c[i] + w7 * c[i + d1] + w8 * c[i + d2];
						}
					}
					continue;
				}
				for (int64_t ox = 0; ox < ow; ox++)
					yr[ox] = b0;
				for (int64_t ky = 0; ky < p->kh; ky++)
					for (int64_t kx = 0; kx < p->kw; kx++) {
						const float *restrict xr = r0 + ky * p->dh * PW + kx * dw;
						float wv = wp[ky * p->kw + kx];
						if (sw == 1)
							for (int64_t ox = 0; ox < ow; ox++)
								yr[ox] += wv * xr[ox];
						else
							for (int64_t ox = 0; ox < ow; ox++)
								yr[ox] += wv * xr[ox * sw];
					}
			}
		}
	}
}

static void dw_part(void *arg, int part, int parts)
{
	(void)parts;
	dw_planes((const struct dw_job *)arg + part);
}

static bool conv_depthwise(const struct al_conv2d *p, const float *x, const float *w,
			   const float *bias, float *y)
{
	int64_t PH = (p->oh - 1) * p->sh + (p->kh - 1) * p->dh + 1;
	int64_t PW = (p->ow - 1) * p->sw + (p->kw - 1) * p->dw + 1;
	if (PH < p->pt + p->h)
		PH = p->pt + p->h;
	if (PW < p->pl + p->w)
		PW = p->pl + p->w;
	if ((size_t)PW > SIZE_MAX / sizeof(float) / (size_t)PH)
		return false;
	size_t padn = (size_t)PH * (size_t)PW;
	int64_t planes = p->n * p->cin;
	/* threads: one band of planes each, when there is enough work to pay for
	 * starting them (~30 us each) */
	double flops = 2.0 * (double)p->n * (double)p->cout * (double)p->oh * (double)p->ow *
		       (double)(p->kh * p->kw);
	int nt = flops < 1e6 ? 1 : ali_kernels_threads();
	if (nt > planes)
		nt = (int)planes;
	if (nt < 1)
		nt = 1;
	if (padn > SIZE_MAX / sizeof(float) / (size_t)nt)
		return false;
	float *pad = ali_malloc(padn * (size_t)nt * sizeof *pad);
	if (!pad)
		return false;
	struct dw_job jobs[AL_MAX_THREADS];
	for (int t = 0; t < nt; t++)
		jobs[t] = (struct dw_job){p, x, w, bias, y, pad + (size_t)t * padn, PH, PW,
					  planes * t / nt, planes * (t + 1) / nt};
	ali_pool_run(nt, dw_part, jobs);
	ali_free(pad);
	return true;
}

/* im2col for output rows [r0, r1) of one image and group: rows [k0, k1) of col
 * [cig*kh*kw, (r1-r0)*ow], row k being input channel k / (kh kw), tap
 * (k / kw % kh, k % kw). A copy: which thread fills a row changes no value. */
static void im2col(const struct al_conv2d *p, const float *xg, int64_t k0, int64_t k1, int64_t r0,
		   int64_t r1, float *col)
{
	int64_t ncols = (r1 - r0) * p->ow;
	size_t plane = (size_t)p->h * (size_t)p->w;
	for (int64_t k = k0; k < k1; k++) {
		int64_t c = k / (p->kh * p->kw), ky = k / p->kw % p->kh, kx = k % p->kw;
		float *restrict row = col + k * ncols;
		int64_t off = kx * p->dw - p->pl, lo, hi;
		valid_range(off, p->sw, p->w, p->ow, &lo, &hi);
		for (int64_t oy = r0; oy < r1; oy++) {
			float *restrict r = row + (oy - r0) * p->ow;
			int64_t iy = oy * p->sh - p->pt + ky * p->dh;
			if (iy < 0 || iy >= p->h || lo >= hi) {
				memset(r, 0, (size_t)p->ow * sizeof *r);
				continue;
			}
			const float *restrict xr = xg + (size_t)c * plane + (size_t)iy * (size_t)p->w;
			for (int64_t ox = 0; ox < lo; ox++)
				r[ox] = 0.0f;
			if (p->sw == 1)
				memcpy(r + lo, xr + lo + off, (size_t)(hi - lo) * sizeof *r);
			else
				for (int64_t ox = lo; ox < hi; ox++)
					r[ox] = xr[ox * p->sw + off];
			for (int64_t ox = hi; ox < p->ow; ox++)
				r[ox] = 0.0f;
		}
	}
}

/* im2col over the pool, by rows of col (input channel and tap), not by input
 * channels: ResNet's first layer has 3 input channels, which split 1 : 2 over
 * 2 threads (its im2col was a third of the run's pool imbalance,
 * bench/README.md "Issue 34 (5)"); its 147 rows split evenly. */
struct im2col_job {
	const struct al_conv2d *p;
	const float *xg;
	int64_t rows, r0, r1;
	float *col;
};

static void im2col_part(void *arg, int part, int parts)
{
	const struct im2col_job *j = arg;
	im2col(j->p, j->xg, j->rows * part / parts, j->rows * (part + 1) / parts, j->r0, j->r1, j->col);
}

/* y[plane] += bias[plane % c] over the pool, by planes. */
struct bias_job {
	float *y;
	const float *bias;
	int64_t planes, c;
	size_t plane;
};

static void bias_part(void *arg, int part, int parts)
{
	const struct bias_job *j = arg;
	for (int64_t i = j->planes * part / parts; i < j->planes * (part + 1) / parts; i++) {
		float *restrict yp = j->y + (size_t)i * j->plane;
		float b0 = j->bias[i % j->c];
		for (size_t k = 0; k < j->plane; k++)
			yp[k] += b0;
	}
}

/* im2col scratch budget in floats (16 MB): big images are processed in bands of
 * output rows so scratch stays bounded. */
#define AL_COL_BUDGET ((size_t)1 << 22)

bool ali_conv2d(const struct al_conv2d *p, const float *x, const float *w, const float *bias,
	       float *y)
{
	if (!conv_params_ok(p))
		return false;
	int64_t cig = p->cin / p->groups, cog = p->cout / p->groups;
	size_t oplane = (size_t)p->oh * (size_t)p->ow, plane = (size_t)p->h * (size_t)p->w;
	if (oplane == 0 || p->n == 0 || p->cout == 0)
		return true;
	if (cig == 1 && p->groups > 1)
		return conv_depthwise(p, x, w, bias, y);
	size_t K = (size_t)(cig * p->kh * p->kw);
	bool direct = p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->pt == 0 &&
		      p->pl == 0 && p->oh == p->h && p->ow == p->w;
	float *col = NULL;
	int64_t band = p->oh;
	if (!direct && K > 0) {
		size_t rows = AL_COL_BUDGET / (K * (size_t)p->ow);
		if (rows < 1)
			rows = 1;
		if ((int64_t)rows < band)
			band = (int64_t)rows;
		if (K > SIZE_MAX / sizeof(float) / ((size_t)band * (size_t)p->ow))
			return false;
		col = ali_malloc(K * (size_t)band * (size_t)p->ow * sizeof *col);
		if (!col)
			return false;
	}
	for (int64_t n = 0; n < p->n; n++)
		for (int64_t g = 0; g < p->groups; g++) {
			const float *xg = x + (size_t)(n * p->cin + g * cig) * plane;
			const float *wg = w + (size_t)(g * cog) * K;
			float *yg = y + (size_t)(n * p->cout + g * cog) * oplane;
			if (direct) {
				ali_gemm(false, false, (size_t)cog, oplane, K, 1.0f, wg, K, xg, plane, 0.0f, yg,
					oplane);
				continue;
			}
			for (int64_t r0 = 0; r0 < p->oh; r0 += band) {
				int64_t r1 = r0 + band < p->oh ? r0 + band : p->oh;
				size_t nc = (size_t)(r1 - r0) * (size_t)p->ow;
				struct im2col_job ij = {p, xg, (int64_t)K, r0, r1, col};
				ali_pool_run(ali_pool_parts((double)K, (double)nc), im2col_part, &ij);
				ali_gemm(false, false, (size_t)cog, nc, K, 1.0f, wg, K, col, nc, 0.0f,
					yg + (size_t)r0 * (size_t)p->ow, oplane);
			}
		}
	ali_free(col);
	if (bias) {
		struct bias_job bj = {y, bias, p->n * p->cout, p->cout, oplane};
		ali_pool_run(ali_pool_parts((double)bj.planes, 0.3 * (double)oplane), bias_part, &bj);
	}
	return true;
}

bool ali_conv2d_transpose_naive(const struct al_conv2d *p, const float *x, const float *w,
			       const float *bias, float *y)
{
	if (!conv_params_ok(p))
		return false;
	int64_t cig = p->cin / p->groups, cog = p->cout / p->groups;
	size_t oplane = (size_t)p->oh * (size_t)p->ow;
	for (int64_t n = 0; n < p->n; n++)
		for (int64_t co = 0; co < p->cout; co++)
			for (size_t i = 0; i < oplane; i++)
				y[(size_t)(n * p->cout + co) * oplane + i] = bias ? bias[co] : 0.0f;
	for (int64_t n = 0; n < p->n; n++)
		for (int64_t ci = 0; ci < p->cin; ci++) {
			int64_t g = ci / cig;
			for (int64_t iy = 0; iy < p->h; iy++)
				for (int64_t ix = 0; ix < p->w; ix++) {
					float xv = x[((n * p->cin + ci) * p->h + iy) * p->w + ix];
					for (int64_t c = 0; c < cog; c++) {
						int64_t co = g * cog + c;
						for (int64_t ky = 0; ky < p->kh; ky++) {
							int64_t oy = iy * p->sh - p->pt + ky * p->dh;
							if (oy < 0 || oy >= p->oh)
								continue;
							for (int64_t kx = 0; kx < p->kw; kx++) {
								int64_t ox = ix * p->sw - p->pl + kx * p->dw;
								if (ox < 0 || ox >= p->ow)
									continue;
								y[((n * p->cout + co) * p->oh + oy) * p->ow + ox] +=
									xv * w[((ci * cog + c) * p->kh + ky) * p->kw + kx];
							}
						}
					}
				}
		}
	return true;
}

/* Transposed convolution: col [cog*kh*kw, rows*w] = W_g^T x_g (one gemm per band
 * of input rows), then col2im scatters each column into the output. */
bool ali_conv2d_transpose(const struct al_conv2d *p, const float *x, const float *w,
			 const float *bias, float *y)
{
	if (!conv_params_ok(p))
		return false;
	int64_t cig = p->cin / p->groups, cog = p->cout / p->groups;
	size_t oplane = (size_t)p->oh * (size_t)p->ow, plane = (size_t)p->h * (size_t)p->w;
	if (oplane == 0 || p->n == 0 || p->cout == 0)
		return true;
	for (int64_t n = 0; n < p->n; n++)
		for (int64_t co = 0; co < p->cout; co++) {
			float *restrict yp = y + (size_t)(n * p->cout + co) * oplane;
			float b0 = bias ? bias[co] : 0.0f;
			for (size_t i = 0; i < oplane; i++)
				yp[i] = b0;
		}
	size_t M = (size_t)(cog * p->kh * p->kw);
	if (M == 0 || plane == 0 || cig == 0)
		return true;
	int64_t band = p->h;
	size_t rows = AL_COL_BUDGET / (M * (size_t)p->w);
	if (rows < 1)
		rows = 1;
	if ((int64_t)rows < band)
		band = (int64_t)rows;
	if (M > SIZE_MAX / sizeof(float) / ((size_t)band * (size_t)p->w))
		return false;
	float *col = ali_malloc(M * (size_t)band * (size_t)p->w * sizeof *col);
	if (!col)
		return false;
	for (int64_t n = 0; n < p->n; n++)
		for (int64_t g = 0; g < p->groups; g++) {
			const float *xg = x + (size_t)(n * p->cin + g * cig) * plane;
			const float *wg = w + (size_t)(g * cig) * M;
			float *yg = y + (size_t)(n * p->cout + g * cog) * oplane;
			for (int64_t r0 = 0; r0 < p->h; r0 += band) {
				int64_t r1 = r0 + band < p->h ? r0 + band : p->h;
				size_t nc = (size_t)(r1 - r0) * (size_t)p->w;
				ali_gemm(true, false, M, nc, (size_t)cig, 1.0f, wg, M,
					xg + (size_t)r0 * (size_t)p->w, plane, 0.0f, col, nc);
				for (int64_t c = 0; c < cog; c++)
					for (int64_t ky = 0; ky < p->kh; ky++)
						for (int64_t kx = 0; kx < p->kw; kx++) {
							const float *row = col + (size_t)((c * p->kh + ky) * p->kw + kx) * nc;
							float *yc = yg + (size_t)c * oplane;
							/* input ix -> ox = ix*sw + off */
							int64_t off = kx * p->dw - p->pl, lo, hi;
							valid_range(off, p->sw, p->ow, p->w, &lo, &hi);
							for (int64_t iy = r0; iy < r1; iy++) {
								int64_t oy = iy * p->sh - p->pt + ky * p->dh;
								if (oy < 0 || oy >= p->oh)
									continue;
								const float *restrict cr = row + (iy - r0) * p->w;
								float *restrict yr = yc + oy * p->ow;
								for (int64_t ix = lo; ix < hi; ix++)
									yr[ix * p->sw + off] += cr[ix];
							}
						}
			}
		}
	ali_free(col);
	return true;
}

/* ================================================================== pooling */

enum pool_kind { POOL_MAX, POOL_AVG, POOL_L2 };

/* Rows of the output at a time: each real input row of the window and each
 * kernel column updates the output row over the column range where that tap is
 * inside the input (no per-element window arithmetic); avg divides at the end by
 * a count that factors into rows x columns. Measured on ResNet's 3x3/2 max pool
 * (64x112x112): 1.25 ms with per-window loops, 0.45 ms this way. */
static void pool2d_planes(const struct al_pool2d *p, const float *x, float *y, enum pool_kind kind,
			  int64_t pl0, int64_t pl1)
{
	size_t plane = (size_t)p->h * (size_t)p->w, oplane = (size_t)p->oh * (size_t)p->ow;
	int64_t ow = p->ow, sw = p->sw;
	for (int64_t pl = pl0; pl < pl1; pl++) {
		const float *xp = x + (size_t)pl * plane;
		float *yp = y + (size_t)pl * oplane;
		for (int64_t oy = 0; oy < p->oh; oy++) {
			float *restrict yr = yp + oy * ow;
			int64_t hs = oy * p->sh - p->pt, he = hs + p->kh;
			int64_t hs_r = hs < 0 ? 0 : hs, he_r = he > p->h ? p->h : he;
			float init = kind == POOL_MAX ? -INFINITY : 0.0f;
			for (int64_t ox = 0; ox < ow; ox++)
				yr[ox] = init;
			if (ow == 1) {
				/* one window per row (global pooling): walk it directly */
				int64_t ws = -p->pl, we = ws + p->kw;
				ws = ws < 0 ? 0 : ws;
				we = we > p->w ? p->w : we;
				float acc = init;
				for (int64_t iy = hs_r; iy < he_r; iy++) {
					const float *xr = xp + iy * p->w;
					for (int64_t ix = ws; ix < we; ix++) {
						float v = xr[ix];
						if (kind == POOL_MAX)
							acc = v > acc || v != v ? v : acc;
						else
							acc += kind == POOL_AVG ? v : v * v;
					}
				}
				yr[0] = acc;
			}
			for (int64_t kx = 0; kx < p->kw && ow > 1; kx++) {
				int64_t off = kx - p->pl, lo, hi;
				valid_range(off, sw, p->w, ow, &lo, &hi);
				for (int64_t iy = hs_r; iy < he_r; iy++) {
					const float *restrict xr = xp + iy * p->w + off;
					if (kind == POOL_MAX) {
						for (int64_t ox = lo; ox < hi; ox++) {
							float v = xr[ox * sw], m = yr[ox];
							yr[ox] = v > m || v != v ? v : m; /* NaN wins */
						}
					} else if (kind == POOL_AVG) {
						for (int64_t ox = lo; ox < hi; ox++)
							yr[ox] += xr[ox * sw];
					} else {
						for (int64_t ox = lo; ox < hi; ox++)
							yr[ox] += xr[ox * sw] * xr[ox * sw];
					}
				}
			}
			if (kind == POOL_L2) {
				for (int64_t ox = 0; ox < ow; ox++)
					yr[ox] = sqrtf(yr[ox]);
			} else if (kind == POOL_AVG) {
				int64_t rows;
				if (p->exclude_pad) {
					rows = he_r > hs_r ? he_r - hs_r : 0;
				} else {
					int64_t hs_p = hs < -p->pt ? -p->pt : hs;
					int64_t he_p = he > p->h + p->pb ? p->h + p->pb : he;
					rows = he_p > hs_p ? he_p - hs_p : 0;
				}
				int64_t c0 = p->exclude_pad ? 0 : -p->pl;
				int64_t c1 = p->exclude_pad ? p->w : p->w + p->pr;
				for (int64_t ox = 0; ox < ow; ox++) {
					int64_t ws = ox * sw - p->pl, we = ws + p->kw;
					ws = ws < c0 ? c0 : ws;
					we = we > c1 ? c1 : we;
					int64_t cnt = rows * (we > ws ? we - ws : 0);
					yr[ox] = cnt > 0 ? yr[ox] / (float)cnt : 0.0f;
				}
			}
		}
	}
}

struct pool_job {
	const struct al_pool2d *p;
	const float *x;
	float *y;
	enum pool_kind kind;
};

static void pool_part(void *arg, int part, int parts)
{
	const struct pool_job *j = arg;
	int64_t planes = j->p->n * j->p->c;
	pool2d_planes(j->p, j->x, j->y, j->kind, planes * part / parts, planes * (part + 1) / parts);
}

/* Over the pool by planes. */
static void pool2d(const struct al_pool2d *p, const float *x, float *y, enum pool_kind kind)
{
	struct pool_job j = {p, x, y, kind};
	double per_plane = (double)p->oh * (double)p->ow * (double)(p->kh * p->kw) * 0.3 +
			   (double)p->h * (double)p->w * 0.2;
	ali_pool_run(ali_pool_parts((double)(p->n * p->c), per_plane), pool_part, &j);
}

void ali_maxpool2d(const struct al_pool2d *p, const float *x, float *y)
{
	pool2d(p, x, y, POOL_MAX);
}

void ali_avgpool2d(const struct al_pool2d *p, const float *x, float *y)
{
	pool2d(p, x, y, POOL_AVG);
}

void ali_l2pool2d(const struct al_pool2d *p, const float *x, float *y)
{
	pool2d(p, x, y, POOL_L2);
}

/* ================================================================== resampling */

/* floor(d*s + o) clamped to [0, n-1]; NaN and huge values are clamped before the
 * cast (converting them is undefined behaviour). */
static int64_t src_index(int64_t d, double s, double o, int64_t n)
{
	double v = floor((double)d * s + o);
	if (!(v >= 0.0))
		return 0;
	if (v > (double)(n - 1))
		return n - 1;
	return (int64_t)v;
}

/* Source coordinate clamped to [0, n-1] split into a lower index and weight. */
static void src_coord(int64_t d, double s, double o, int64_t n, int64_t *i0, int64_t *i1,
		      float *frac)
{
	double v = (double)d * s + o;
	if (!(v >= 0.0))
		v = 0.0;
	if (v > (double)(n - 1))
		v = (double)(n - 1);
	double f = floor(v);
	*i0 = (int64_t)f;
	*i1 = *i0 + 1 < n ? *i0 + 1 : n - 1;
	*frac = (float)(v - f);
}

void ali_resize_nearest(int64_t nc, int64_t h, int64_t w, int64_t oh, int64_t ow, double sy,
		       double oy, double sx, double ox, const float *x, float *y)
{
	if (h <= 0 || w <= 0)
		return;
	for (int64_t c = 0; c < nc; c++) {
		const float *xp = x + (size_t)c * (size_t)h * (size_t)w;
		float *yp = y + (size_t)c * (size_t)oh * (size_t)ow;
		for (int64_t i = 0; i < oh; i++) {
			const float *xr = xp + src_index(i, sy, oy, h) * w;
			float *yr = yp + i * ow;
			for (int64_t j = 0; j < ow; j++)
				yr[j] = xr[src_index(j, sx, ox, w)];
		}
	}
}

void ali_resize_bilinear(int64_t nc, int64_t h, int64_t w, int64_t oh, int64_t ow, double sy,
			double oy, double sx, double ox, const float *x, float *y)
{
	if (h <= 0 || w <= 0)
		return;
	for (int64_t c = 0; c < nc; c++) {
		const float *xp = x + (size_t)c * (size_t)h * (size_t)w;
		float *yp = y + (size_t)c * (size_t)oh * (size_t)ow;
		for (int64_t i = 0; i < oh; i++) {
			int64_t y0, y1, x0, x1;
			float fy, fx;
			src_coord(i, sy, oy, h, &y0, &y1, &fy);
			const float *r0 = xp + y0 * w, *r1 = xp + y1 * w;
			float *yr = yp + i * ow;
			for (int64_t j = 0; j < ow; j++) {
				src_coord(j, sx, ox, w, &x0, &x1, &fx);
				float top = (1.0f - fx) * r0[x0] + fx * r0[x1];
				float bot = (1.0f - fx) * r1[x0] + fx * r1[x1];
				yr[j] = (1.0f - fy) * top + fy * bot;
			}
		}
	}
}
