/* SPDX-License-Identifier: MIT */
/* tests/accelerate/Accelerate/Accelerate.h: a stand-in for Apple's umbrella header,
 * for `make check-accelerate` on Linux: it declares the CBLAS names the interpreter
 * uses (the CBLAS standard's enum values and cblas_sgemm signature, as Accelerate's
 * vecLib declares them), and no OpenBLAS extension, so kernels.c compiles through
 * tools/accelerate/cblas.h exactly as on a Mac, minus the real framework. */
#ifndef ANELINT_TEST_ACCELERATE_H
#define ANELINT_TEST_ACCELERATE_H
enum CBLAS_ORDER { CblasRowMajor = 101, CblasColMajor = 102 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 };
void cblas_sgemm(const enum CBLAS_ORDER order, const enum CBLAS_TRANSPOSE ta,
		 const enum CBLAS_TRANSPOSE tb, const int m, const int n, const int k, const float alpha,
		 const float *a, const int lda, const float *b, const int ldb, const float beta, float *c,
		 const int ldc);
#endif
