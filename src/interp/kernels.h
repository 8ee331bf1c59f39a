/* SPDX-License-Identifier: MIT */
/* kernels.h: the reference interpreter's maths, over plain float arrays.
 *
 * Nothing here knows Core ML: no protobuf, no names, no diagnostics. The
 * executors (interp_nn.c, interp_mil.c) read a layer's parameters, check its
 * shapes and sizes, allocate the output and call one of these. Every array is
 * row-major (C order), dims named the way the Core ML spec names them (N, C, H,
 * W). Integers and booleans flow through the interpreter as float values (exact
 * up to 2^24), so one set of kernels serves every dtype.
 *
 * fp16: the ANE computes in IEEE binary16. ali_f16_round() rounds a float to the
 * nearest fp16 value (ties to even), overflow to +-inf, subnormals kept.
 *
 * Aliasing: an output may be the same array as an input (in place) only where a
 * comment says so: ali_unary, ali_binary / ali_select (same shape), ali_softmax,
 * ali_log_softmax, ali_layer_norm, ali_channel_affine, ali_l2_normalize, ali_cumsum,
 * ali_f16_round_array. Everything else needs distinct arrays.
 *
 * BLAS: ali_gemm() uses cblas_sgemm of OpenBLAS, loaded at the first product
 * (BLAS=openblas, the default on Linux: dlopen, so commands that never multiply
 * never map it; ANELINT_BLAS=none in the environment, or a path to load instead)
 * or Accelerate (linked, BLAS=accelerate), else ali_gemm_naive(); both are kept
 * so tests can compare them. Kernels that need scratch memory take it from
 * ali_malloc (hookable) and return false when it fails; the others cannot fail.
 */
#ifndef ANELINT_KERNELS_H
#define ANELINT_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ fp16 */
uint16_t ali_f16_from_f32(float x); /* round to nearest even; NaN stays NaN */
float ali_f16_to_f32(uint16_t h);
float ali_f16_round(float x);       /* ali_f16_to_f32(ali_f16_from_f32(x)) */
void ali_f16_round_array(float *x, size_t n);
/* Whether ali_f16_round_array would leave x[0..n) unchanged (read only). */
bool ali_f16_is_rounded(const float *x, size_t n);
/* dst[i] = src[i] rounded as ali_f16_round_array does, in one pass (distinct arrays). */
void ali_f16_round_copy(float *restrict dst, const float *restrict src, size_t n);
/* x86-64 vector forms (kernels_simd.c), chosen at run time: ali_simd_level() is
 * 0 (the portable loops), 1 (AVX + F16C: fp16 rounding) or 2 (also AVX2 + FMA:
 * one-row products in ali_gemm). ali_simd_force(L) caps the level at L (tests
 * compare the paths; -1 lifts the cap). The ali_simd_* kernels are only called
 * at a level that has them; the fp16 ones give exactly the portable loops' bits. */
int ali_simd_level(void);
void ali_simd_force(int level);
void ali_simd_f16_round(float *dst, const float *src, size_t n); /* dst may be src */
bool ali_simd_f16_is_rounded(const float *x, size_t n);
/* y[j] = alpha * sum_p x[p] * B[j * ldb + p] + beta * y[j] for j < N (beta 0: y
 * not read); each y[j] the same operations whatever N and j. */
void ali_simd_gemv_t(size_t N, size_t K, float alpha, const float *x, const float *B, size_t ldb,
		     float beta, float *y);
#define AL_F16_MAX 65504.0f
#define AL_F16_MIN_NORMAL 6.103515625e-05f    /* 2^-14 */
#define AL_F16_MIN_SUBNORMAL 5.9604644775390625e-08f /* 2^-24 */

/* ------------------------------------------------------------------ matrix product
 * C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C, row-major; op = transpose
 * when ta/tb. lda/ldb/ldc: row strides of A, B, C as stored. beta 0 ignores C's
 * old contents (NaN included). */
void ali_gemm(bool ta, bool tb, size_t M, size_t N, size_t K, float alpha, const float *A,
	     size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc);
void ali_gemm_naive(bool ta, bool tb, size_t M, size_t N, size_t K, float alpha, const float *A,
		   size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc);
/* Whether products go to BLAS (loads OpenBLAS if not yet done). */
bool ali_gemm_has_blas(void);
/* "openblas", "blas" (Accelerate, linked) or "none" (also loads). */
const char *ali_gemm_blas_name(void);
/* Threads the kernels may use (1 = single-threaded): the interpreter's own pool
 * (pool.c, POSIX threads), which also splits ali_gemm's products (OpenBLAS is then
 * set to one thread as it loads: its spinning workers would take the cores the
 * pool needs). It loads OpenBLAS (BLAS=openblas) if no product has yet. Until it
 * is called the kernels' own threading is off. Call it before running, not
 * while kernels run. */
void ali_kernels_set_threads(int n);
int ali_kernels_threads(void);
/* OpenBLAS's own threads alone (loads it); nothing without OpenBLAS. */
void ali_blas_set_threads(int n);
/* Run fn(ctx, part, parts) for part = 0..parts-1, each on its own thread of the
 * interpreter's pool (part 0 on the caller), and return when all are done. One
 * job at a time; a part whose thread could not start runs on the caller. Called
 * from inside a part (ali_pool_nested()), it runs every part in line on the
 * calling thread. */
void ali_pool_run(int parts, void (*fn)(void *ctx, int part, int parts), void *ctx);
bool ali_pool_nested(void);
/* The pool's size, which ali_kernels_threads() returns (ali_kernels_set_threads
 * calls it: the pool does not call into kernels.c). */
void ali_pool_set_threads(int n);
/* For measuring (bench/opprof.c), not for running: while on, ali_pool_run runs
 * every part in line on the caller and adds to two counters, the CPU time of
 * the parts and the time they would take on the pool's threads (per job: its
 * longest part, or its sum over the threads if more). Serial work is what runs
 * outside them, so the run's time on the pool follows without another thread
 * or an idle machine. */
void ali_pool_simulate(bool on);
void ali_pool_sim_stats(double *in_parts_ns, double *critical_ns);
/* Parts for a loop of n items costing `cost` each (in element operations,
 * roughly ns): 1 below ~20 us of work, else up to ali_kernels_threads(). */
int ali_pool_parts(double n, double cost);

/* ------------------------------------------------------------------ convolution
 * 2-D convolution, NCHW (1-D: h = kh = 1). Caller fills every field, the output
 * size included (oh, ow), and has checked that the sizes agree:
 *   oh = (h + pt + pb - dh*(kh-1) - 1) / sh + 1, likewise ow.
 * Padding is zeros. groups divides cin and cout. */
struct al_conv2d {
	int64_t n, cin, h, w;
	int64_t cout, kh, kw, groups;
	int64_t sh, sw, dh, dw; /* stride, dilation (>= 1) */
	int64_t pt, pb, pl, pr; /* padding top, bottom, left, right (>= 0) */
	int64_t oh, ow;
};
/* x [n,cin,h,w], w [cout, cin/groups, kh, kw], bias [cout] or NULL -> y [n,cout,oh,ow].
 * False when scratch allocation failed, or on parameters no caller should pass
 * (groups, strides or dilations < 1, negative sizes or padding). */
bool ali_conv2d(const struct al_conv2d *p, const float *x, const float *w, const float *bias,
	       float *y);
/* Winograd F(4x4, 3x3) (kernels_wino.c) for callers that run the same weights
 * many times (the ML Program executor keeps them with the model): the weights
 * transformed once by ali_winograd_weights into ali_winograd_weights_len
 * floats, then ali_conv2d_winograd, same contract as ali_conv2d otherwise
 * (false: p is not 3x3 / stride 1 / dilation 1 / groups 1, or scratch failed).
 * ali_conv2d_winograd_fits: where it was measured faster than ali_conv2d. */
bool ali_conv2d_winograd_fits(const struct al_conv2d *p);
size_t ali_winograd_weights_len(int64_t cout, int64_t cin);
void ali_winograd_weights(int64_t cout, int64_t cin, const float *w, float *u);
bool ali_conv2d_winograd(const struct al_conv2d *p, const float *x, const float *u,
			 const float *bias, float *y);
/* Transposed convolution (the gradient of ali_conv2d with the same fields, cin the
 * input channels and cout the output channels): x [n,cin,h,w],
 * w [cin, cout/groups, kh, kw], bias [cout] or NULL -> y [n,cout,oh,ow], where
 *   oh = (h-1)*sh - pt - pb + dh*(kh-1) + 1 (+ any output padding, which the caller
 * adds to oh/ow; the extra rows get the bias only). */
bool ali_conv2d_transpose(const struct al_conv2d *p, const float *x, const float *w,
			 const float *bias, float *y);
/* Reference versions (direct loops, double accumulation for conv2d), same
 * contract; the tests cross-check the fast ones against them. */
bool ali_conv2d_naive(const struct al_conv2d *p, const float *x, const float *w, const float *bias,
		     float *y);
bool ali_conv2d_transpose_naive(const struct al_conv2d *p, const float *x, const float *w,
			       const float *bias, float *y);

/* ------------------------------------------------------------------ pooling
 * x [n,c,h,w] -> y [n,c,oh,ow]; caller computes oh/ow (floor or ceil mode).
 * Windows that extend past the padded input are clipped. max: padding is -inf
 * (never selected; NaN in the window wins). avg: divide by the window's count of
 * real input elements when exclude_pad, else by the window size clipped to the
 * padded extent (kh*kw for a window fully inside the padding frame). A window
 * with nothing to count gives 0 (avg) or -inf (max). */
struct al_pool2d {
	int64_t n, c, h, w;
	int64_t kh, kw, sh, sw;
	int64_t pt, pb, pl, pr;
	int64_t oh, ow;
	bool exclude_pad;
};
void ali_maxpool2d(const struct al_pool2d *p, const float *x, float *y);
void ali_avgpool2d(const struct al_pool2d *p, const float *x, float *y);
/* L2 pooling: sqrt of the sum of squares in the window. */
void ali_l2pool2d(const struct al_pool2d *p, const float *x, float *y);

/* ------------------------------------------------------------------ resampling
 * x [nc, h, w] -> y [nc, oh, ow] (nc = n*c planes).
 * nearest: source index = floor(dst * sy + oy) clamped to [0, h-1] (likewise x).
 * bilinear: source coordinate = dst * sy + oy, clamped to [0, h-1]; linear blend of
 * the two neighbours. The executors pick (sy, oy) per mode, e.g. PyTorch
 * align_corners=False: sy = h/oh, oy = 0.5*sy - 0.5; align_corners=True:
 * sy = (h-1)/(oh-1), oy = 0. */
void ali_resize_nearest(int64_t nc, int64_t h, int64_t w, int64_t oh, int64_t ow, double sy,
		       double oy, double sx, double ox, const float *x, float *y);
void ali_resize_bilinear(int64_t nc, int64_t h, int64_t w, int64_t oh, int64_t ow, double sy,
			double oy, double sx, double ox, const float *x, float *y);

/* ------------------------------------------------------------------ elementwise */
enum al_unop {
	AL_UN_IDENTITY, AL_UN_RELU, AL_UN_SIGMOID, AL_UN_TANH, AL_UN_EXP, AL_UN_EXP2, AL_UN_LOG,
	AL_UN_SQRT, AL_UN_RSQRT, AL_UN_ABS, AL_UN_NEG, AL_UN_RECIP, AL_UN_FLOOR, AL_UN_CEIL,
	AL_UN_ROUND, /* half away from zero */
	AL_UN_SIGN, AL_UN_SIN, AL_UN_COS, AL_UN_TAN, AL_UN_ASIN, AL_UN_ACOS, AL_UN_ATAN,
	AL_UN_SINH, AL_UN_COSH, AL_UN_ASINH, AL_UN_ACOSH, AL_UN_ATANH, AL_UN_ERF, AL_UN_SQUARE,
	AL_UN_CUBE, AL_UN_LOGICAL_NOT,
	AL_UN_GELU_ERF,     /* x * 0.5 * (1 + erf(x / sqrt 2)) */
	AL_UN_GELU_TANH,    /* tanh approximation */
	AL_UN_GELU_SIGMOID, /* x * sigmoid(1.702 x) */
	AL_UN_SILU,         /* x * sigmoid(x) */
	AL_UN_SOFTPLUS,     /* log(1 + e^x) */
	AL_UN_SOFTSIGN,     /* x / (1 + |x|) */
	/* with parameters a, b: */
	AL_UN_LINEAR,       /* a*x + b */
	AL_UN_LEAKY_RELU,   /* x >= 0 ? x : a*x */
	AL_UN_ELU,          /* x >= 0 ? x : a*(e^x - 1) */
	AL_UN_THRESHOLDED_RELU, /* x > a ? x : 0 */
	AL_UN_SCALED_TANH,  /* a * tanh(b*x) */
	AL_UN_SIGMOID_HARD, /* clamp(a*x + b, 0, 1) */
	AL_UN_CLIP,         /* clamp(x, a, b) */
	AL_UN_POW,          /* x^a */
	AL_UN_SOFTPLUS_PARAM, /* a * log(1 + e^(b*x)) (NN parametricSoftplus, per channel by caller) */
	AL_UN_THRESHOLD,    /* max(x, a) (NN unary threshold) */
	AL_UN_INVERSE_EPS,  /* 1 / (x + a) */
	AL_UN_LOG_EPS,      /* log(x + a) */
	AL_UN_RSQRT_EPS,    /* 1 / sqrt(x + a) */
	AL_UN_COUNT
};
void ali_unary(enum al_unop op, float a, float b, const float *x, float *y, size_t n);

enum al_binop {
	AL_BIN_ADD, AL_BIN_SUB, AL_BIN_MUL, AL_BIN_DIV, AL_BIN_FLOOR_DIV, AL_BIN_MOD,
	AL_BIN_POW, AL_BIN_MAX, AL_BIN_MIN,
	AL_BIN_EQ, AL_BIN_NE, AL_BIN_LT, AL_BIN_LE, AL_BIN_GT, AL_BIN_GE, /* 1.0f / 0.0f */
	AL_BIN_AND, AL_BIN_OR, AL_BIN_XOR,
	AL_BIN_COUNT
};
/* NumPy broadcasting of a [ra dims] and b [rb dims] (dims aligned at the right).
 * False when they do not broadcast; else the result shape in (ry, dy), rank max(ra, rb)
 * (at most 8). */
bool ali_broadcast_shape(int ra, const int64_t *da, int rb, const int64_t *db, int *ry,
			int64_t *dy);
/* y[dy] = a op b with broadcasting; dy from ali_broadcast_shape. y may alias a or b
 * when it has the same shape. MOD takes the sign of the divisor (Python %, MIL
 * mod); FLOOR_DIV is floor(a / b); MAX/MIN propagate NaN. */
void ali_binary(enum al_binop op, const float *a, int ra, const int64_t *da, const float *b,
	       int rb, const int64_t *db, float *y, int ry, const int64_t *dy);
/* y = cond ? a : b, the three broadcast to dy. */
void ali_select(const float *cond, int rc, const int64_t *dc, const float *a, int ra,
	       const int64_t *da, const float *b, int rb, const int64_t *db, float *y, int ry,
	       const int64_t *dy);
/* Copy x [rx dims] broadcast to y [ry dims] (tile / broadcast_to). */
void ali_broadcast_to(const float *x, int rx, const int64_t *dx, float *y, int ry,
		     const int64_t *dy);

/* ------------------------------------------------------------------ reductions
 * x [rank dims]; axes: bit i set = reduce axis i. y has the reduced axes kept as
 * size 1 (the caller drops them when keep_dims is false: same data). argmax /
 * argmin take exactly one axis and give the first index of the extreme (a NaN
 * counts as the extreme, like NumPy). Accumulation in double; max/min propagate
 * NaN; an empty reduction gives the identity (sum 0, prod 1, max -inf, mean NaN). */
enum al_redop {
	AL_RED_SUM, AL_RED_MEAN, AL_RED_PROD, AL_RED_MAX, AL_RED_MIN, AL_RED_L1, AL_RED_L2,
	AL_RED_SUMSQUARE, AL_RED_LOGSUM, AL_RED_LOGSUMEXP, AL_RED_ARGMAX, AL_RED_ARGMIN,
	AL_RED_COUNT
};
void ali_reduce(enum al_redop op, const float *x, int rank, const int64_t *dims, uint32_t axes,
	       float *y);

/* ------------------------------------------------------------------ normalisation
 * The tensor seen as [outer, axis, inner] (inner contiguous). */
void ali_softmax(const float *x, int64_t outer, int64_t axis, int64_t inner, float *y);
void ali_log_softmax(const float *x, int64_t outer, int64_t axis, int64_t inner, float *y);
/* Normalise each of `outer` contiguous blocks of `inner` values:
 * y = (x - mean) / sqrt(var + eps) * gamma[j] + beta[j] (gamma/beta [inner] or NULL;
 * biased variance). With normalize_variance false: y = x - mean (NN mvn). */
void ali_layer_norm(const float *x, int64_t outer, int64_t inner, const float *gamma,
		   const float *beta, float eps, bool normalize_variance, float *y);
/* Per-channel affine: x [n, c, inner] -> y = x * scale[c] + bias[c] (either NULL = 1 / 0).
 * Batch norm with folded statistics and NN scale/bias layers use it. */
void ali_channel_affine(const float *x, int64_t n, int64_t c, int64_t inner, const float *scale,
		       const float *bias, float *y);
/* NN l2normalize / MIL l2_norm: y = x / sqrt(sum x^2 + eps) over each block of
 * inner (the sum and the division in double, rounded once). */
void ali_l2_normalize(const float *x, int64_t outer, int64_t inner, double eps, float *y);
/* Local response normalisation across channels, x [n, c, inner]:
 * y = x / (k + alpha/size * sum_{window of `size` channels} x^2)^beta; the window
 * of channel j is j - (size-1)/2 .. j + size/2, clipped (Caffe; the same as
 * PyTorch for odd sizes). */
void ali_lrn(const float *x, int64_t n, int64_t c, int64_t inner, int64_t size, float alpha,
	    float beta, float k, float *y);

/* ------------------------------------------------------------------ data movement */
/* y = x with axes permuted: y.dims[i] = x.dims[perm[i]]. */
void ali_transpose(const float *x, int rank, const int64_t *dims, const int *perm, float *y);
/* Strided slice: y[i] = x[begin + i*stride] per axis, out_dims given (strides may
 * be negative; the caller has bounded every index). */
void ali_slice(const float *x, int rank, const int64_t *dims, const int64_t *begin,
	      const int64_t *stride, const int64_t *out_dims, float *y);
/* Concatenate n tensors seen as [outer, sizes[k], inner] along the middle axis. */
void ali_concat(const float *const *xs, const int64_t *sizes, int n, int64_t outer,
	       int64_t inner, float *y);
/* The inverse: split x [outer, sum sizes, inner] into ys[k] [outer, sizes[k], inner]. */
void ali_split(const float *x, const int64_t *sizes, int n, int64_t outer, int64_t inner,
	      float *const *ys);
/* Gather along the middle axis of x [outer, axis, inner] with n_idx indices (as
 * floats, negative counts from the end) -> y [outer, n_idx, inner]. False when an
 * index is out of range, NaN or not an integer (y is then partly written); the
 * same for every index-taking kernel below. */
bool ali_gather(const float *x, int64_t outer, int64_t axis, int64_t inner, const float *idx,
	       int64_t n_idx, float *y);
/* gather_along_axis: x [outer, axis, inner], idx [outer, n, inner] -> y [outer, n, inner]. */
bool ali_gather_along_axis(const float *x, int64_t outer, int64_t axis, int64_t inner,
			  const float *idx, int64_t n, float *y);
/* gather_nd: x [rank dims], idx [m, k] (k <= rank leading coordinates per row) ->
 * y [m, slice] where slice = product of dims[k..]. */
bool ali_gather_nd(const float *x, int rank, const int64_t *dims, const float *idx, int64_t m,
		  int k, float *y);
/* scatter (along the middle axis, like ali_gather): y starts as a copy of x (the
 * caller copies); rows idx[j] of y [outer, axis, inner] get op(y, upd[outer, j, inner]),
 * op one of ADD/SUB/MUL/DIV/MAX/MIN, or AL_BIN_COUNT for plain update. */
bool ali_scatter(float *y, int64_t outer, int64_t axis, int64_t inner, const float *idx,
		int64_t n_idx, const float *upd, enum al_binop op);
enum al_pad_mode { AL_PAD_CONSTANT, AL_PAD_REFLECT, AL_PAD_REPLICATE };
/* y [dims[i] + before[i] + after[i]] = x padded (negative before/after crop). */
void ali_pad(const float *x, int rank, const int64_t *dims, const int64_t *before,
	    const int64_t *after, enum al_pad_mode mode, float value, float *y);
/* Running sum along the middle axis of [outer, axis, inner]. */
void ali_cumsum(const float *x, int64_t outer, int64_t axis, int64_t inner, bool exclusive,
	       bool reverse, float *y);
/* Top k along the middle axis: values and indices [outer, k, inner]; largest first
 * when descending (ties: lower index first; NaN ranks above every number, as in
 * PyTorch). k <= axis (slots past axis get NaN / -1). Indices are exact below 2^24. */
void ali_topk(const float *x, int64_t outer, int64_t axis, int64_t inner, int64_t k,
	     bool descending, float *values, float *indices);

/* ------------------------------------------------------------------ recurrent layers
 * One direction over a sequence x [T, B, I] (t = T-1 .. 0 when reverse), state
 * h [B, H] and c [B, H] updated in place (the caller initialises them).
 * LSTM, gate order i, f, o, z (input, forget, output, cell candidate) in every
 * weight: wx [4H, I], wh [4H, H], bias [4H] or NULL, peep [3H] (i, f, o) or NULL.
 *   i = f1(Wi x + Ri h + bi + pi*c), f = f1(Wf x + Rf h + bf + pf*c),
 *   z = f2(Wz x + Rz h + bz), c' = f*c + i*z (clipped to +-clip when clip > 0),
 *   o = f1(Wo x + Ro h + bo + po*c'), h' = o * f3(c')
 * f1/f2/f3: al_unop with parameters (sigmoid, tanh, tanh by default). With
 * coupled_input_forget, f = 1 - i. y [T, B, H] (may be NULL) gets h at each step,
 * in time order (y[t] for input step t). False on scratch allocation failure. */
struct al_rnn_acts {
	enum al_unop op;
	float a, b;
};
struct al_lstm {
	int64_t T, B, I, H;
	const float *wx, *wh, *bias, *peep;
	struct al_rnn_acts f1, f2, f3;
	float clip;
	bool reverse, coupled_input_forget;
};
bool ali_lstm_run(const struct al_lstm *p, const float *x, float *h, float *c, float *y);
/* GRU, gate order z, r, o (update, reset, candidate): wx [3H, I], wh [3H, H], bias
 * [3H] (input side) or NULL, bias_h [3H] (recurrent side) or NULL.
 *   z = f1(Wz x + Rz h + bz + bhz), r = f1(Wr x + Rr h + br + bhr)
 *   reset_after false (Core ML NN): o = f2(Wo x + Ro (r*h) + bo + bho)
 *   reset_after true (PyTorch, MIL gru): o = f2(Wo x + bo + r*(Ro h + bho))
 *   h' = (1 - z) * o + z * h */
struct al_gru {
	int64_t T, B, I, H;
	const float *wx, *wh, *bias, *bias_h;
	struct al_rnn_acts f1, f2;
	bool reverse, reset_after;
};
bool ali_gru_run(const struct al_gru *p, const float *x, float *h, float *y);
/* Simple RNN: h' = f(W x + R h + b); wx [H, I], wh [H, H]. */
struct al_rnn {
	int64_t T, B, I, H;
	const float *wx, *wh, *bias;
	struct al_rnn_acts f;
	bool reverse;
};
bool ali_rnn_run(const struct al_rnn *p, const float *x, float *h, float *y);

#endif
