/* SPDX-License-Identifier: MIT */
/* tools/accelerate/cblas.h: with `make BLAS=accelerate` (the default on macOS)
 * the interpreter's `#include <cblas.h>` finds this file, which gives it the
 * CBLAS interface of Apple's Accelerate framework (cblas_sgemm). */
#ifndef ANELINT_ACCELERATE_CBLAS_H
#define ANELINT_ACCELERATE_CBLAS_H
#if defined(__APPLE__)
#include <Accelerate/Accelerate.h>
#else
#error "BLAS=accelerate needs macOS (Apple's Accelerate framework); use BLAS=openblas or BLAS=none"
#endif
#endif
