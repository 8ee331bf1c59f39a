/* SPDX-License-Identifier: MIT */
/* src/rewrite/passes/: one model-surgery pass per file, each of the same shape: what it matches,
 * how it rewrites, what its proof class claims (docs/surgery.md has its row), and a fixture and
 * test named after the pass (tests/pass_<name>.sh or tests/unit/test_pass_<name>.c). The pass
 * table (AL_PASSES, src/rewrite/surgery.c) lists them. Part of the rewrite stage. */
#ifndef ANELINT_PASSES_H
#define ANELINT_PASSES_H
#include "surgery_int.h"
#endif
