/* SPDX-License-Identifier: MIT */
/* src/rewrite/passes/: one model-surgery pass per file, each of the same shape: what it matches,
 * how it rewrites, what its proof class claims (docs/surgery.md has its row), and a fixture and
 * test named after the pass (tests/pass_<name>.sh or tests/unit/test_pass_<name>.c). The pass
 * table (AL_PASSES, src/rewrite/surgery.c) lists them. Part of the rewrite stage. */
#ifndef ANELINT_PASSES_H
#define ANELINT_PASSES_H
#include "surgery_int.h"

/* What a NeuralNetwork pass of this folder fills: the context the ML Program passes fill
 * (c.n the layer it rewrites, c.why / c.after, c.pre the whole `layers` fields inserted
 * before it, c.layer its new message, c.names the layers produced, c.stays_off), and the
 * other layers of the input it replaces: their messages, deleted from the output, and one
 * of their names for the region proof (al_rewrite.also_replaces). surgery.c's nn_pass
 * copies it into its own pass context. */
#define ALI_NN_PASS_MAX_DROPS 4 /* nn-loop-unroll: the loop's copies in, a constant */
struct ali_nn_pass {
	struct al_mil_pass c;
	al_span drop[ALI_NN_PASS_MAX_DROPS];
	uint32_t n_drop;
	const char *also;
};

/* nn-attention-split-heads (nn_attention.c): batchedMatmul -> softmaxND -> batchedMatmul
 * (the attention the NeuralNetwork converter writes) -> per head 1x1 convolutions with
 * runtime weights, softmax on the channel axis, concat. */
bool ali_pass_nn_attention(struct ali_nn_pass *p);

/* nn-loop-unroll (nn_loop_unroll.c): a loop layer of a trip count known when the file
 * is read (<= 64 steps) -> its body's layers step by step, gather / scatter at the
 * folded index as sliceStatic / tracked rows, the rows concatenated after it. */
bool ali_pass_nn_loop_unroll(struct ali_nn_pass *p);

#endif
