/* SPDX-License-Identifier: MIT */
/* surgery.c: the pass table of `anelint fix`, the driver that runs it and the
 * rewritten model file.
 *
 * Each pass (one file each in src/rewrite/passes/, a few ML Program ones still in
 * surgery_mil.c) looks at one layer / op, decides from its inferred shapes and
 * parameters whether its rewrite keeps the results (exact) or only the maths
 * (reassociate), and if so builds the new layer bytes. The new layers go
 * into the file with pbsplice: the rewritten layer replaces the old one's
 * payload, helper layers are inserted just before it; every other byte is the
 * input's. Proving a rewrite (running both models) and checking that it
 * reduces fallbacks is the caller's job (src/cli/fix.c).
 */
#include "analysis.h"
#include "pbsplice.h"
#include "surgery_int.h"
#include "passes.h"
#include "nn_layer.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The context of a table row's function: an al_mil_pass's fields and what
 * nn_pass adds (more layers deleted, the layer also replaced). */
struct pctx {
	struct al_surgery *s;
	const struct al_node *n;
	const struct al_node_src *src;
	char why[200];
	char after[160];
	struct al_buf pre;     /* whole layers fields inserted before the layer */
	struct al_buf layer;   /* the layer's new payload */
	const char *names[AL_PASS_MAX_NAMES]; /* names of the output layers produced */
	uint32_t n_names;
	al_span drop;          /* a whole layer message to delete (a constant taken in), or {0} */
	al_span more_drops[ALI_NN_PASS_MAX_DROPS]; /* more of them (passes/: ali_nn_pass.drop) */
	const char *stays_off; /* al_rewrite.stays_off */
	bool off_until_next_round; /* al_rewrite.off_until_next_round */
	const char *also;      /* al_rewrite.also_replaces */
};

typedef bool (*pass_fn)(struct pctx *c);

static bool p_addb(struct pctx *c);
static bool p_mulb(struct pctx *c);
static bool p_subb(struct pctx *c);
static bool p_concatnd(struct pctx *c);
static bool p_concatnd_interleave(struct pctx *c);
static bool p_splitnd(struct pctx *c);
static bool p_splitnd_ip(struct pctx *c);
static bool p_splitnd_slices(struct pctx *c);
static bool p_global_avg(struct pctx *c);
static bool p_upsample(struct pctx *c);
static bool p_maxpool(struct pctx *c);
static bool p_mul_scalar(struct pctx *c);
static bool p_mul_const(struct pctx *c);
static bool p_div_const(struct pctx *c);
static bool p_lcnd(struct pctx *c);
static bool p_avgpool(struct pctx *c);
static bool p_mil_range(struct pctx *c);
static bool p_mil_fill(struct pctx *c);
static bool p_mil_fill_like(struct pctx *c);
static bool p_mil_cumsum(struct pctx *c);
static bool p_mil_io_fp16(struct pctx *c);
static bool p_mil_island(struct pctx *c);
static bool p_model_level(struct pctx *c);
static bool p_mil_linear_split(struct pctx *c);
static bool p_mil_upsample(struct pctx *c);
static bool p_mil_sdpa_split(struct pctx *c);
static bool p_mil_block_conv(struct pctx *c);
static bool p_mil_lstm(struct pctx *c);
static bool p_mil_lstm16(struct pctx *c);
static bool p_mil_while(struct pctx *c);
static bool p_mil_gru(struct pctx *c);
static bool p_mil_block_channel(struct pctx *c);
static bool p_nn_lstm(struct pctx *c);
static bool p_nn_attention(struct pctx *c);
static bool p_nn_bilstm(struct pctx *c);
static bool p_nn_gru(struct pctx *c);
static bool p_nn_expand_const(struct pctx *c);
static bool p_nn_loop(struct pctx *c);

/* The layer type of the model-level rows: no layer has it (model passes run
 * once per --shape / --enumerate request, not per layer). */
#define MODEL_INPUT "(model input)"
/* The type of mil-fp16-compute's stand-in node: the whole function, run once
 * by plan_mil_fp16 before the per-op rows. */
#define MIL_PROGRAM "(ML Program)"

/* The pass table: name, rule answered, class, layer type, before -> after, function.
 * Rows of the same layer type are tried in order; the first that applies wins. */
#define AL_PASSES(X)                                                                                    \
	X("addb-to-add", "ANE005", AL_EQ_EXACT, "addBroadcastable",                                     \
	  "addBroadcastable -> add (legacy broadcast shapes only)", p_addb)                             \
	X("mulb-scalar-to-linear", "ANE005", AL_EQ_EXACT, "multiplyBroadcastable",                      \
	  "multiplyBroadcastable by a constant scalar c -> activation linear(alpha c, beta -0.0)",       \
	  p_mul_scalar)                                                                                 \
	X("mulb-const-to-scale", "ANE005", AL_EQ_EXACT, "multiplyBroadcastable",                        \
	  "multiplyBroadcastable by a constant C/1xHxW or Cx1x1 -> scale (gamma = the constant)",       \
	  p_mul_const)                                                                                  \
	X("mulb-to-multiply", "ANE005", AL_EQ_EXACT, "multiplyBroadcastable",                           \
	  "multiplyBroadcastable -> multiply (legacy broadcast shapes only)", p_mulb)                   \
	X("subb-to-neg-add", "ANE005", AL_EQ_EXACT, "subtractBroadcastable",                            \
	  "subtractBroadcastable a-b -> activation linear(alpha -1, beta -0.0) on b + add", p_subb)     \
	X("concatnd-to-concat", "ANE006", AL_EQ_EXACT, "concatND",                                      \
	  "concatND on the channel axis (-3) -> concat", p_concatnd)                                    \
	X("concatnd-interleave-to-split-concat", "ANE006", AL_EQ_EXACT, "concatND",                     \
	  "interleaved concatND on the channel axis (channel shuffle) -> a split of each input into "    \
	  "single channels + concat in interleaved order", p_concatnd_interleave)                       \
	X("splitnd-of-innerproduct", "ANE006", AL_EQ_REASSOCIATE, "splitND",                                  \
	  "innerProduct then splitND of its output channels (a fused q/k/v projection) -> one "          \
	  "innerProduct per part, each with its weight rows", p_splitnd_ip)                              \
	X("nn-attention-split-heads", "ANE012", AL_EQ_REASSOCIATE, "batchedMatmul",                    \
	  "batchedMatmul -> softmaxND (last axis) -> batchedMatmul (attention) -> per head 1x1 "         \
	  "convolutions with runtime weights, softmax on the channel axis (keys), concat "              \
	  "(split einsum; NeuralNetwork)", p_nn_attention)                                              \
	X("splitnd-to-split", "ANE006", AL_EQ_EXACT, "splitND",                                         \
	  "splitND on the channel axis (-3) into equal parts -> split", p_splitnd)                       \
	X("splitnd-to-slices", "ANE006", AL_EQ_EXACT, "splitND",                                        \
	  "splitND on the channel axis (-3) into unequal parts -> one slice per part", p_splitnd_slices) \
	X("upsample-x2-chain", "ANE010", AL_EQ_EXACT, "upsample",                                       \
	  "nearest upsample x4 / x8 -> a chain of x2 upsamples", p_upsample)                            \
	X("global-avgpool-valid-to-same", "ANE056", AL_EQ_EXACT, "pooling",                            \
	  "global average pooling with VALID padding -> SAME padding (the same average)", p_global_avg) \
	X("maxpool-cascade", "ANE008", AL_EQ_EXACT, "pooling",                                          \
	  "max pooling kernel > 13 -> a cascade of stride-1 pools with kernels <= 13", p_maxpool)      \
	X("avgpool-cascade", "ANE008", AL_EQ_REASSOCIATE, "pooling",                                    \
	  "average pooling kernel = stride 2^k -> a cascade of 4x4 / 2x2 average pools", p_avgpool)    \
	X("divb-const-to-reciprocal", "ANE005", AL_EQ_REASSOCIATE, "divideBroadcastable",               \
	  "divideBroadcastable by a constant c -> scale / linear by 1/c", p_div_const)                  \
	X("expanddims-const-to-loadconst", "ANE006", AL_EQ_EXACT, "expandDims",                        \
	  "loadConstantND read only by an expandDims to rank 5 [1, 1, C, H, W] (a recurrent layer's "    \
	  "zero state as coremltools writes it) -> loadConstant [C, H, W], the constant removed",        \
	  p_nn_expand_const)                                                                             \
	X("loadconstnd-to-loadconst", "ANE006", AL_EQ_EXACT, "loadConstantND",                          \
	  "loadConstantND of shape [1,1,C,H,W] -> loadConstant [C,H,W]", p_lcnd)                       \
	X("mil-range-to-const", "ANE020", AL_EQ_EXACT, "range_1d",                                      \
	  "range_1d of constant start / end / step -> const (ML Program)", p_mil_range)                  \
	X("mil-fill-to-const", "ANE020", AL_EQ_EXACT, "fill",                                           \
	  "fill of a constant shape and value -> const (ML Program)", p_mil_fill)                        \
	X("mil-fill-like-to-const", "ANE020", AL_EQ_EXACT, "fill_like",                                 \
	  "fill_like of a static ref_tensor shape, constant value -> const (ML Program)",                \
	  p_mil_fill_like)                                                                              \
	X("mil-cumsum-to-matmul", "ANE020", AL_EQ_REASSOCIATE, "cumsum",                                \
	  "cumsum on one of the last two axes of a static shape -> matmul by a 0/1 triangle "            \
	  "(ML Program)", p_mil_cumsum)                                                                  \
	X("mil-io-fp16", "ANE030", AL_EQ_APPROXIMATE, "cast",                                           \
	  "cast at an fp32 model input / output -> identity, the model I/O fp16 (ML Program)",           \
	  p_mil_io_fp16)                                                                                 \
	X("mil-fp32-island", "ANE029", AL_EQ_APPROXIMATE, "cast",                                       \
	  "cast fp16 -> fp32, elementwise fp32 ops, casts back -> identities, the ops in fp16 "          \
	  "(ML Program)", p_mil_island)                                                                  \
	X("mil-fp16-compute", "ANE029", AL_EQ_APPROXIMATE, MIL_PROGRAM,                                 \
	  "every fp32 op of an ML Program (compute_precision FLOAT32) -> fp16: fp32 constants -> fp16, "  \
	  "one cast after each fp32 input and before each output (the interface kept), ops that must "   \
	  "stay fp32 between casts (only with --allow approximate)", p_model_level)                       \
	X("mil-linear-split-cap", "ANE061", AL_EQ_REASSOCIATE, "linear",                                      \
	  "linear with more than 16384 output features (an LM head) -> linear slices under the ANE "     \
	  "axis cap + concat (ML Program)", p_mil_linear_split)                                          \
	X("mil-block-bc1s-conv", "ANE062", AL_EQ_REASSOCIATE, "linear",                                 \
	  "a run of linear / activation / add / layer_norm ops -> the (B, C, 1, S) layout: linear -> "  \
	  "1x1 conv, layer_norm over the channel axis, one transpose in and out (ML Program)",           \
	  p_mil_block_conv)                                                                             \
	X("mil-matmul-const-bc1s-conv", "ANE062", AL_EQ_REASSOCIATE, "matmul",                          \
	  "matmul of a [B, S, K] value by a constant [K, N] weight -> 1x1 conv in the (B, C, 1, S) "     \
	  "layout, with the run of ops around it (as mil-block-bc1s-conv; ML Program)", p_mil_block_conv) \
	X("mil-upsample-x2-chain", "ANE027", AL_EQ_EXACT, "upsample_nearest_neighbor",                  \
	  "upsample_nearest_neighbor x4 / x8 -> a chain of x2 ops (ML Program)", p_mil_upsample)         \
	X("mil-sdpa-split-heads", "ANE067", AL_EQ_REASSOCIATE, "scaled_dot_product_attention",         \
	  "scaled_dot_product_attention -> per-head matmuls with the softmax on the channel axis "      \
	  "(split einsum), concat (ML Program)", p_mil_sdpa_split)                                      \
	X("mil-lstm-unroll", "ANE021", AL_EQ_REASSOCIATE, "lstm",                                        \
	  "static-length fp16 lstm (forward / reverse / bidirectional, <= 16 steps) -> per step linear + " \
	  "sigmoid / tanh + mul / add ops (ML Program)", p_mil_lstm)                                     \
	X("mil-lstm-unroll-fp16", "ANE021", AL_EQ_APPROXIMATE, "lstm",                                   \
	  "static-length fp32 lstm (as mil-lstm-unroll) -> the same steps in fp16 ops, weights copied "  \
	  "to fp16, casts at its inputs and outputs (ML Program; --allow approximate)", p_mil_lstm16)    \
	X("mil-gru-unroll", "ANE021", AL_EQ_REASSOCIATE, "gru",                                          \
	  "static-length gru (forward / reverse, fp16, <= 16 steps) -> linear + per step sigmoid / "     \
	  "tanh + mul / add / sub ops, weights regrouped (ML Program)", p_mil_gru)                       \
	X("mil-while-unroll", "ANE033", AL_EQ_EXACT, "while_loop",                                      \
	  "while_loop with a static trip count (<= 16 steps; cond less(index, a constant)) -> its body's " \
	  "ops step by step, gather / scatter at the index as slices / concat (ML Program)", p_mil_while) \
	X("mil-blockwise-to-per-channel", "ANE038", AL_EQ_APPROXIMATE, "constexpr_blockwise_shift_scale", \
	  "a weight quantized per block (constexpr_blockwise_shift_scale) -> requantized int8 per "     \
	  "output channel, one scale per row (ML Program; --allow approximate)", p_mil_block_channel)  \
	X("nn-lstm-unroll", "ANE002", AL_EQ_REASSOCIATE, "uniDirectionalLSTM",                          \
	  "static-length uniDirectionalLSTM (forward / reverse, batch 1, <= 16 steps) -> permute + per " \
	  "step slice, innerProduct, activation, add / multiply, exact cell clip (NeuralNetwork)",       \
	  p_nn_lstm)                                                                                     \
	X("nn-bilstm-unroll", "ANE002", AL_EQ_REASSOCIATE, "biDirectionalLSTM",                         \
	  "static-length biDirectionalLSTM (batch 1, <= 16 steps) -> a forward and a reverse chain as "  \
	  "nn-lstm-unroll's, the h of both concatenated per step (NeuralNetwork)", p_nn_bilstm)          \
	X("nn-gru-unroll", "ANE002", AL_EQ_REASSOCIATE, "gru",                                           \
	  "static-length gru (forward / reverse, batch 1, <= 16 steps) -> permute + per step slice, "    \
	  "innerProduct, sigmoid / tanh, add / multiply, the reset before R_o (NeuralNetwork)",          \
	  p_nn_gru)                                                                                      \
	X("nn-loop-unroll", "ANE016", AL_EQ_EXACT, "loop",                                              \
	  "loop of a static trip count (a constant condition / maxLoopIterations, <= 64 steps) -> its "  \
	  "body's layers step by step: gather at the index -> sliceStatic, scatter rows tracked, "       \
	  "concatND of the rows after it (NeuralNetwork)", p_nn_loop)                                     \
	X("nn-io-fp16", "ANE030", AL_EQ_APPROXIMATE, MODEL_INPUT,                                       \
	  "fp32 multi-array model inputs / outputs -> fp16, specificationVersion >= 7 (NeuralNetwork; "  \
	  "only with --allow approximate)", p_model_level)                                               \
	X("input-fixed-shape", "ANE040", AL_EQ_EXACT, MODEL_INPUT,                                      \
	  "a flexible multi-array or image model input -> one fixed shape (fix --shape NAME=D1,...|default)", \
	  p_model_level)                                                                                \
	X("input-enumerated-shapes", "ANE040", AL_EQ_EXACT, MODEL_INPUT,                                \
	  "a range-flexible multi-array model input -> enumerated shapes (fix --enumerate "              \
	  "NAME=S1;S2;...)", p_model_level)

static const struct al_pass passes[] = {
#define ROW(nm, rule, eq, from, what, fn) {nm, rule, eq, from, what},
	AL_PASSES(ROW)
#undef ROW
};
static const pass_fn pass_fns[] = {
#define FN(nm, rule, eq, from, what, fn) fn,
	AL_PASSES(FN)
#undef FN
};
#define N_PASSES (sizeof passes / sizeof passes[0])

size_t al_passes_count(void)
{
	return N_PASSES;
}

const struct al_pass *al_pass_at(size_t i)
{
	return i < N_PASSES ? &passes[i] : NULL;
}

const char *al_equiv_name(enum al_equiv e)
{
	switch (e) {
	case AL_EQ_EXACT: return "exact";
	case AL_EQ_REASSOCIATE: return "reassociate";
	case AL_EQ_APPROXIMATE: return "approximate";
	}
	return "?";
}

bool al_equiv_parse(const char *s, enum al_equiv *out)
{
	for (int e = AL_EQ_EXACT; e <= AL_EQ_APPROXIMATE; e++)
		if (s && strcmp(s, al_equiv_name((enum al_equiv)e)) == 0) {
			*out = (enum al_equiv)e;
			return true;
		}
	return false;
}


/* ------------------------------------------------------------------ helpers */

static bool say(struct pctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool say(struct pctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof c->why, fmt, ap);
	va_end(ap);
	return false;
}

/* ------------------------------------------------------------------ ML Program passes
 * (a pass of src/rewrite/passes/ fills an al_mil_pass; its results are copied into c) */

/* Run ML Program pass fn; when it does not apply, weight.bin is left as it was. */
static bool mil_pass(struct pctx *c, bool (*fn)(struct al_mil_pass *))
{
	struct al_mil_pass m = {.s = c->s, .n = c->n, .src = c->src};
	size_t tn = c->s->wtail.n;
	uint32_t wc = c->s->wcount;
	bool ok = fn(&m);
	if (!ok) {
		c->s->wtail.n = tn;
		c->s->wcount = wc;
	}
	snprintf(c->why, sizeof c->why, "%s", m.why);
	snprintf(c->after, sizeof c->after, "%s", m.after);
	ali_buf_free(&c->pre);
	ali_buf_free(&c->layer);
	c->pre = m.pre;
	c->layer = m.layer;
	c->n_names = 0;
	for (uint32_t i = 0; i < m.n_names && i < sizeof c->names / sizeof c->names[0]; i++)
		c->names[c->n_names++] = m.names[i];
	c->stays_off = m.stays_off;
	c->off_until_next_round = m.off_until_next_round;
	if (m.drop.p)
		c->drop = m.drop;
	return ok;
}

/* The table's ML Program rows: each runs its pass (src/rewrite/passes/) through mil_pass. */
#define MIL_ROW(p, fn)                                                                                  \
	static bool p(struct pctx *c)                                                                   \
	{                                                                                               \
		return mil_pass(c, fn);                                                                 \
	}
MIL_ROW(p_mil_range, ali_pass_mil_range)
MIL_ROW(p_mil_fill, ali_pass_mil_fill)
MIL_ROW(p_mil_fill_like, ali_pass_mil_fill_like)
MIL_ROW(p_mil_cumsum, ali_pass_mil_cumsum)
MIL_ROW(p_mil_io_fp16, ali_pass_mil_io_fp16)
MIL_ROW(p_mil_island, ali_pass_mil_island)
MIL_ROW(p_mil_linear_split, ali_pass_mil_linear_split)
MIL_ROW(p_mil_upsample, ali_pass_mil_upsample)
MIL_ROW(p_mil_lstm, ali_pass_mil_lstm_unroll)
MIL_ROW(p_mil_lstm16, ali_pass_mil_lstm_unroll_fp16)
MIL_ROW(p_mil_while, ali_pass_mil_while_unroll)
MIL_ROW(p_mil_gru, ali_pass_mil_gru_unroll)
MIL_ROW(p_mil_block_channel, ali_pass_mil_block_to_channel)
MIL_ROW(p_mil_block_conv, ali_pass_mil_block_conv)
MIL_ROW(p_mil_sdpa_split, ali_pass_mil_sdpa_split)

/* ------------------------------------------------------------------ NeuralNetwork passes
 * of src/rewrite/passes/ (each fills an ali_nn_pass; its results are copied into c) */

static bool nn_pass(struct pctx *c, bool (*fn)(struct ali_nn_pass *))
{
	struct ali_nn_pass p = {.c = {.s = c->s, .n = c->n, .src = c->src}};
	bool ok = fn(&p);
	snprintf(c->why, sizeof c->why, "%s", p.c.why);
	snprintf(c->after, sizeof c->after, "%s", p.c.after);
	ali_buf_free(&c->pre);
	ali_buf_free(&c->layer);
	c->pre = p.c.pre;
	c->layer = p.c.layer;
	c->n_names = 0;
	for (uint32_t i = 0; i < p.c.n_names && i < sizeof c->names / sizeof c->names[0]; i++)
		c->names[c->n_names++] = p.c.names[i];
	c->stays_off = p.c.stays_off;
	for (uint32_t i = 0; ok && i < p.n_drop && i < ALI_NN_PASS_MAX_DROPS; i++)
		c->more_drops[i] = p.drop[i];
	c->also = ok ? p.also : NULL;
	return ok;
}

static bool p_nn_attention(struct pctx *c)
{
	return nn_pass(c, ali_pass_nn_attention);
}

static bool p_nn_loop(struct pctx *c)
{
	return nn_pass(c, ali_pass_nn_loop_unroll);
}

/* The NeuralNetwork recurrent rows: src/rewrite/passes/nn_recurrent.c, run
 * through mil_pass (the same pass context; they append nothing to weight.bin). */
MIL_ROW(p_nn_lstm, ali_pass_nn_lstm_unroll)
MIL_ROW(p_nn_bilstm, ali_pass_nn_bilstm_unroll)
MIL_ROW(p_nn_gru, ali_pass_nn_gru_unroll)
MIL_ROW(p_nn_expand_const, ali_pass_nn_expand_const)

/* The NeuralNetwork layer rows: one file each in src/rewrite/passes/ (nn_layer.h),
 * run through mil_pass (they append nothing to weight.bin); splitnd-of-innerproduct,
 * which names the layer it also replaces, through nn_pass. */
MIL_ROW(p_addb, ali_pass_nn_addb)
MIL_ROW(p_mulb, ali_pass_nn_mulb)
MIL_ROW(p_subb, ali_pass_nn_subb)
MIL_ROW(p_concatnd, ali_pass_nn_concatnd)
MIL_ROW(p_concatnd_interleave, ali_pass_nn_concatnd_interleave)
MIL_ROW(p_splitnd, ali_pass_nn_splitnd)
MIL_ROW(p_splitnd_slices, ali_pass_nn_splitnd_slices)
MIL_ROW(p_global_avg, ali_pass_nn_global_avg)
MIL_ROW(p_upsample, ali_pass_nn_upsample)
MIL_ROW(p_maxpool, ali_pass_nn_maxpool)
MIL_ROW(p_mul_scalar, ali_pass_nn_mulb_scalar)
MIL_ROW(p_mul_const, ali_pass_nn_mulb_const)
MIL_ROW(p_div_const, ali_pass_nn_divb_const)
MIL_ROW(p_lcnd, ali_pass_nn_lcnd)
MIL_ROW(p_avgpool, ali_pass_nn_avgpool)

static bool p_splitnd_ip(struct pctx *c)
{
	return nn_pass(c, ali_pass_nn_splitnd_ip);
}

/* Model-level rows are run by plan_model, never per layer. */
static bool p_model_level(struct pctx *c)
{
	return say(c, "a model-level pass");
}

/* ------------------------------------------------------------------ plan */

static bool skipped(const struct al_surgery_opts *o, const char *name)
{
	for (size_t i = 0; o && i < o->n_skip; i++)
		if (o->skip[i] && name && strcmp(o->skip[i], name) == 0)
			return true;
	return false;
}

/* The root Model bytes of m: the mapping holding its layer / op messages (in a
 * package, the one that is not weight.bin). */
static bool find_root(const al_model *m, al_span *root)
{
	for (int i = 0; i < m->n_maps; i++) {
		if (m->is_package && m->weights.n && m->maps[i].s.p == m->weights.p)
			continue;
		*root = m->maps[i].s;
		return root->p != NULL;
	}
	return false;
}

static enum al_status add_rw(struct al_surgery *s, const struct al_pass *p, const struct al_node *n,
			     bool applied, const char *after, const char *why, const char *const *names,
			     uint32_t n_names)
{
	struct al_rewrite *r = ali_realloc(s->rw, (s->n_rw + 1) * sizeof *r);
	if (!r)
		return AL_E_NOMEM;
	s->rw = r;
	r = &s->rw[s->n_rw++];
	memset(r, 0, sizeof *r);
	r->pass = p;
	r->node = n;
	r->applied = applied;
	r->after = after ? ali_arena_strndup(&s->arena, after, strlen(after)) : NULL;
	r->why_not = why ? ali_arena_strndup(&s->arena, why, strlen(why)) : NULL;
	if (n_names) {
		r->layers = ali_arena_array(&s->arena, n_names, sizeof *r->layers);
		if (r->layers)
			for (uint32_t i = 0; i < n_names; i++)
				r->layers[i] = names[i];
		r->n_layers = r->layers ? n_names : 0;
	}
	if (applied)
		s->n_applied++;
	return s->arena.failed ? AL_E_NOMEM : AL_OK;
}

static enum al_status plan_node(struct al_surgery *s, const struct al_surgery_opts *o,
				const struct al_node *n, bool can_write)
{
	/* the rows of n's type in order: the first that applies wins; when none
	 * does, one "left" entry with the reason of each row tried */
	const struct al_pass *last = NULL;
	char why[800] = "", first[200] = "";
	int tried = 0;
	for (size_t k = 0; k < N_PASSES; k++) {
		if (!n->type || strcmp(n->type, passes[k].from) != 0)
			continue;
		const struct al_pass *p = &passes[k];
		if (!can_write)
			return add_rw(s, p, n, false, NULL,
				      "only NeuralNetwork and ML Program models opened from their file "
				      "(.mlmodel / .mlpackage) are rewritten", NULL, 0);
		struct pctx c = {.s = s, .n = n, .src = al_src(n)};
		bool allowed = p->equiv <= (o ? o->allow : AL_EQ_EXACT);
		/* a pass above --allow, or of a skipped layer, runs only to say whether
		 * it would apply (which pass a skipped layer's entry names), and only
		 * when it has no side effect (NN passes; ML Program passes, which may
		 * append to weight.bin, build nothing above --allow: see s->opts) */
		bool nn = c.src && c.src->sub && c.src->sub->world == AL_WORLD_NN;
		bool pure = nn || (c.src && c.src->sub && c.src->sub->world == AL_WORLD_MIL);
		bool skip = skipped(o, n->name);
		if (skip && !nn)
			return add_rw(s, p, n, false, NULL, "left as it was (skipped)", NULL, 0);
		bool ok = c.src && (allowed || pure) && pass_fns[k](&c);
		if (ok && skip) {
			ali_buf_free(&c.pre);
			ali_buf_free(&c.layer);
			return add_rw(s, p, n, false, NULL, "left as it was (skipped)", NULL, 0);
		}
		if (!ok && pure && !c.why[0]) { /* not a candidate at all (an ML Program cast
						 * inside the model): not reported */
			ali_buf_free(&c.pre);
			ali_buf_free(&c.layer);
			continue;
		}
		if (!allowed && !ok && !pure)
			snprintf(c.why, sizeof c.why, "%s",
				 p->equiv == AL_EQ_REASSOCIATE ? "rounds differently: needs --allow reassociate"
							       : "changes results: needs --allow approximate");
		if (ok && !allowed) {
			snprintf(c.why, sizeof c.why, "%s (it would be: %.100s)",
				 p->equiv == AL_EQ_REASSOCIATE ? "rounds differently: needs --allow reassociate"
							       : "changes results: needs --allow approximate",
				 c.after);
			ok = false;
		}
		enum al_status st = AL_OK;
		if (ok && (c.pre.failed || c.layer.failed))
			st = AL_E_NOMEM;
		if (ok && !st && c.pre.n)
			st = ali_splice_insert_before(s->sp, c.src->msg, c.pre.p, c.pre.n);
		if (ok && !st)
			st = ali_splice_replace(s->sp, c.src->msg, c.src->msg.p, c.src->msg.n, c.layer.p,
					       c.layer.n);
		if (ok && !st && c.drop.p)
			st = ali_splice_delete(s->sp, c.drop);
		for (size_t i = 0; ok && !st && i < ALI_NN_PASS_MAX_DROPS; i++)
			if (c.more_drops[i].p)
				st = ali_splice_delete(s->sp, c.more_drops[i]);
		ali_buf_free(&c.pre);
		ali_buf_free(&c.layer);
		if (st)
			return st;
		if (ok) {
			st = add_rw(s, p, n, true, c.after, NULL, c.names, c.n_names);
			if (st == AL_OK) {
				s->rw[s->n_rw - 1].stays_off = c.stays_off;
				s->rw[s->n_rw - 1].off_until_next_round = c.off_until_next_round;
				s->rw[s->n_rw - 1].also_replaces = c.also;
			}
			return st;
		}
		size_t wl = strlen(why);
		snprintf(why + wl, sizeof why - wl, "%s%s: %s", wl ? "; " : "", p->name, c.why);
		if (!tried++)
			snprintf(first, sizeof first, "%s", c.why);
		last = p;
	}
	if (!last)
		return AL_OK;
	return add_rw(s, last, n, false, NULL, tried > 1 ? why : first, NULL, 0);
}

/* One --shape / --enumerate request: a rewrite entry whose node is a stand-in
 * named after the input. Its edits touch the description only, so they never
 * overlap a layer's. */
static enum al_status plan_model(struct al_surgery *s, const struct al_input_shape *r, bool can_write)
{
	const char *pname = r->n_shapes ? "input-enumerated-shapes" : "input-fixed-shape";
	const struct al_pass *p = NULL;
	for (size_t k = 0; k < N_PASSES; k++)
		if (strcmp(passes[k].name, pname) == 0)
			p = &passes[k];
	struct al_node *n = ali_arena_alloc(&s->arena, sizeof *n);
	if (!p || !n || !(n->name = ali_arena_strndup(&s->arena, r->input ? r->input : "", r->input ? strlen(r->input) : 0)))
		return AL_E_NOMEM;
	n->type = MODEL_INPUT;
	n->kind = -1;
	struct al_mil_pass c = {.s = s, .n = n};
	bool ok;
	if (!can_write)
		ok = false, snprintf(c.why, sizeof c.why, "the model file could not be found to rewrite it");
	else if (!r->input)
		ok = false, snprintf(c.why, sizeof c.why, "no input named");
	else
		ok = r->n_shapes ? ali_pass_input_enum(&c, r) : ali_pass_input_shape(&c, r);
	enum al_status st = add_rw(s, p, n, ok, ok ? c.after : NULL, ok ? NULL : c.why, NULL, 0);
	if (st == AL_OK)
		s->rw[s->n_rw - 1].model_level = true;
	return st;
}

/* NeuralNetwork fp16 model I/O: one entry (its node a stand-in named "model
 * I/O"), only under --allow approximate; not reported where nothing is fp32. */
static enum al_status plan_nn_io(struct al_surgery *s)
{
	const struct al_pass *p = NULL;
	for (size_t k = 0; k < N_PASSES; k++)
		if (strcmp(passes[k].name, "nn-io-fp16") == 0)
			p = &passes[k];
	struct al_node *n = ali_arena_alloc(&s->arena, sizeof *n);
	if (!p || !n || !(n->name = ali_arena_strndup(&s->arena, "model I/O", 9)))
		return AL_E_NOMEM;
	n->type = MODEL_INPUT;
	n->kind = -1;
	struct al_mil_pass c = {.s = s, .n = n};
	bool ok = ali_pass_nn_io_fp16(&c);
	if (!ok && !c.why[0])
		return AL_OK;
	enum al_status st = add_rw(s, p, n, ok, ok ? c.after : NULL, ok ? NULL : c.why, NULL, 0);
	if (st == AL_OK)
		s->rw[s->n_rw - 1].model_level = true;
	return st;
}

/* mil-fp16-compute: one entry (its node a stand-in named after the function,
 * type MIL_PROGRAM) for an ML Program that computes in fp32. It runs before the
 * per-op rows and, when it applies, they are not run on that program (their
 * rewrites would overlap its edits; run fix again on its output for them).
 * Applied: model-level (the whole models prove it, no op list to check); a
 * refusal is an ordinary entry; nothing fp32 to convert (an fp16 program): a
 * quiet entry (the stand-in counts as on the ANE). Its weight.bin blobs are
 * taken back when it does not apply. */
static enum al_status plan_mil_fp16(struct al_surgery *s, const struct al_surgery_opts *o, bool can_write,
				    bool *took)
{
	*took = false;
	const al_model *m = s->m;
	if (!can_write || m->n_subs != 1 || m->subs[0]->world != AL_WORLD_MIL || !m->subs[0]->n_graphs)
		return AL_OK;
	const struct al_pass *p = NULL;
	for (size_t k = 0; k < N_PASSES; k++)
		if (strcmp(passes[k].name, "mil-fp16-compute") == 0)
			p = &passes[k];
	struct al_node *n = ali_arena_alloc(&s->arena, sizeof *n);
	const char *fname = m->subs[0]->graphs[0]->function ? m->subs[0]->graphs[0]->function : "main";
	if (!p || !n || !(n->name = ali_arena_strndup(&s->arena, fname, strlen(fname))))
		return AL_E_NOMEM;
	n->type = MIL_PROGRAM;
	n->kind = -1;
	struct al_mil_pass c = {.s = s, .n = n};
	bool allowed = o && o->allow >= AL_EQ_APPROXIMATE;
	size_t tn = s->wtail.n;
	uint32_t wc = s->wcount;
	/* skipped: not run at all (its edits are splices of its own, made as it runs) */
	bool skip = skipped(o, n->name);
	bool ok = !skip && ali_pass_mil_fp16(&c);
	if (skip)
		snprintf(c.why, sizeof c.why, "left as it was (skipped)");
	if (!ok && !c.why[0]) {
		/* nothing to convert: quiet when the program has ops at all */
		snprintf(c.why, sizeof c.why, "no op computes in fp32");
		n->verdict.ane = true;
	}
	if (ok && !allowed)
		ok = false, snprintf(c.why, sizeof c.why, "changes results: needs --allow approximate (it would be: %.100s)",
				     c.after);
	if (!ok) {
		s->wtail.n = tn;
		s->wcount = wc;
	}
	enum al_status st = add_rw(s, p, n, ok, ok ? c.after : NULL, ok ? NULL : c.why, NULL, 0);
	if (st == AL_OK && ok)
		s->rw[s->n_rw - 1].model_level = true;
	*took = ok;
	return st;
}

static enum al_status plan_once(al_model *m, const struct al_surgery_opts *o, al_surgery **out,
				al_diags *d)
{
	if (!m || !out)
		return AL_E_INVALID_ARG;
	*out = NULL;
	enum al_status st = al_model_infer_shapes(m, d);
	if (st)
		return st;
	struct al_surgery *s = ali_calloc(1, sizeof *s);
	if (!s)
		return AL_E_NOMEM;
	s->m = m;
	s->opts = o;
	bool can_write = find_root(m, &s->root);
	if (can_write && !(s->sp = ali_splice_new(s->root))) {
		ali_free(s);
		return AL_E_NOMEM;
	}
	bool fp16_took = false;
	st = plan_mil_fp16(s, o, can_write, &fp16_took);
	for (size_t i = 0; i < m->n_subs && !st && !fp16_took; i++) {
		const struct al_submodel *sub = m->subs[i];
		/* ML Programs: from a package, or from memory (al_surgery_bytes +
		 * al_surgery_weights); al_surgery_write refuses new blobs without a package */
		bool world = sub->world == AL_WORLD_NN || sub->world == AL_WORLD_MIL;
		for (uint32_t g = 0; g < sub->n_graphs && !st; g++) {
			const struct al_graph *gr = sub->graphs[g];
			for (uint32_t k = 0; k < gr->n_nodes && !st; k++)
				st = plan_node(s, o, &gr->nodes[k], can_write && world);
		}
	}
	for (size_t i = 0; o && i < o->n_shapes && !st; i++)
		st = plan_model(s, &o->shapes[i], can_write);
	if (!st && can_write && o && o->allow >= AL_EQ_APPROXIMATE && !skipped(o, "model I/O"))
		st = plan_nn_io(s);
	s->opts = NULL;
	if (st == AL_OK && s->wtail.failed)
		st = AL_E_NOMEM;
	if (st == AL_OK && s->sp)
		st = ali_splice_finish(s->sp, NULL);
	if (st) {
		if (st == AL_E_INVALID_ARG || st == AL_E_FORMAT)
			ali_diag_add(d, AL_SEV_ERROR, m->path, UINT64_MAX, NULL, NULL,
				    "the rewrites could not be placed in the file (%s)", al_status_str(st));
		al_surgery_free(s);
		return st == AL_E_INVALID_ARG ? AL_E_FORMAT : st;
	}
	*out = s;
	return AL_OK;
}

/* Plan, then refuse what would not be valid Core ML (surgery_valid.c): a
 * rewrite whose output breaks an op definition of the program's opset is
 * skipped and the plan made again without it (a few times at most), its
 * reason the broken input. */
#define MAX_REFUSED 16
enum al_status al_surgery_plan(al_model *m, const struct al_surgery_opts *o, al_surgery **out,
			       al_diags *d)
{
	if (!m || !out)
		return AL_E_INVALID_ARG;
	*out = NULL;
	/* a model Core ML would refuse has nothing to fix: its errors say why */
	enum al_status st = al_model_validate(m, d);
	if (st == AL_OK)
		st = plan_once(m, o, out, d);
	struct ali_refusal *ref = st == AL_OK ? ali_calloc(MAX_REFUSED, sizeof *ref) : NULL;
	const char **skip = NULL, **names = NULL;
	char (*why)[sizeof ref->why] = NULL;
	size_t n_skip = o ? o->n_skip : 0, n_ref = 0;
	if (st == AL_OK && (!ref || !(skip = ali_calloc(n_skip + MAX_REFUSED + 1, sizeof *skip)) ||
			    !(names = ali_calloc(MAX_REFUSED + 1, sizeof *names)) ||
			    !(why = ali_calloc(MAX_REFUSED + 1, sizeof *why))))
		st = AL_E_NOMEM;
	for (size_t i = 0; st == AL_OK && i < n_skip; i++)
		skip[i] = o->skip[i];
	for (int round = 0; st == AL_OK && round < 4 && n_ref < MAX_REFUSED; round++) {
		size_t n = 0;
		st = ali_surgery_invalid(*out, ref, MAX_REFUSED - n_ref, &n);
		if (st != AL_OK || !n)
			break;
		for (size_t i = 0; i < n; i++) {
			const struct al_rewrite *r = &(*out)->rw[ref[i].rewrite];
			/* a copy: a model-level rewrite's node lives in the plan freed below */
			const char *nm = r->node && r->node->name ? r->node->name : "";
			char *cp = ali_malloc(strlen(nm) + 1);
			if (!cp) {
				st = AL_E_NOMEM;
				break;
			}
			memcpy(cp, nm, strlen(nm) + 1);
			names[n_ref] = cp;
			snprintf(why[n_ref], sizeof why[n_ref], "%s", ref[i].why);
			skip[n_skip++] = names[n_ref++];
		}
		if (st != AL_OK)
			break;
		struct al_surgery_opts o2 = {0};
		if (o)
			o2 = *o;
		o2.skip = skip;
		o2.n_skip = n_skip;
		al_surgery_free(*out);
		*out = NULL;
		st = plan_once(m, &o2, out, d);
	}
	/* the refused ones say why (not "skipped") */
	for (size_t k = 0; st == AL_OK && k < (*out)->n_rw; k++) {
		struct al_rewrite *r = &(*out)->rw[k];
		for (size_t i = 0; i < n_ref && !r->applied; i++)
			if (r->node && r->node->name && strcmp(r->node->name, names[i]) == 0)
				r->why_not = ali_arena_strndup(&(*out)->arena, why[i], strlen(why[i]));
	}
	if (st != AL_OK) { /* plan_once said why, or out of memory */
		al_surgery_free(*out);
		*out = NULL;
	}
	for (size_t i = 0; names && i < n_ref; i++)
		ali_free((void *)names[i]);
	ali_free(ref);
	ali_free(skip);
	ali_free(names);
	ali_free(why);
	return st;
}

size_t al_surgery_count(const al_surgery *s)
{
	return s ? s->n_rw : 0;
}

const struct al_rewrite *al_surgery_get(const al_surgery *s, size_t i)
{
	return s && i < s->n_rw ? &s->rw[i] : NULL;
}

size_t al_surgery_applied(const al_surgery *s)
{
	return s ? s->n_applied : 0;
}

void al_surgery_free(al_surgery *s)
{
	if (!s)
		return;
	ali_splice_free(s->sp);
	ali_free(s->rw);
	ali_buf_free(&s->wtail);
	if (s->wimage_mapped) {
		ali_guard_remove(s->wimage);
		ali_unmap_cow(s->wimage, s->wimage_n);
	} else {
		ali_free(s->wimage);
	}
	ali_free(s->newnames);
	ali_arena_free(&s->arena);
	ali_free(s);
}

enum al_status al_surgery_bytes(al_surgery *s, uint8_t **out, size_t *n, al_diags *d)
{
	if (!s || !out || !n)
		return AL_E_INVALID_ARG;
	if (!s->sp) {
		ali_diag_add(d, AL_SEV_ERROR, s->m->path, UINT64_MAX, NULL, NULL,
			    "the model file could not be found to rewrite it");
		return AL_E_UNSUPPORTED;
	}
	enum al_status st = ali_splice_to_buffer(s->sp, out, n);
	if (st == AL_E_NOMEM)
		ali_diag_add(d, AL_SEV_ERROR, s->m->path, UINT64_MAX, NULL, NULL, "out of memory");
	return st;
}

enum al_status al_surgery_write(al_surgery *s, const char *path, al_diags *d)
{
	if (!s || !path)
		return AL_E_INVALID_ARG;
	if (!s->sp) {
		ali_diag_add(d, AL_SEV_ERROR, s->m->path, UINT64_MAX, NULL, NULL,
			    "the model file could not be found to rewrite it");
		return AL_E_UNSUPPORTED;
	}
	if (s->m->is_package)
		return ali_surgery_write_package(s, path, d);
	if (s->wcount) {
		ali_diag_add(d, AL_SEV_ERROR, s->m->path, UINT64_MAX, NULL, NULL,
			    "the rewrites add constants to weight.bin: only a .mlpackage can hold them");
		return AL_E_UNSUPPORTED;
	}
	struct al_atomic out;
	enum al_status st = ali_atomic_begin(&out, path, false, d);
	if (st != AL_OK)
		return st;
	int in_fd;
	struct stat sb;
	if (ali_open_regular(s->m->path, NULL, &in_fd, &sb, NULL) == AL_OK &&
	    (uint64_t)sb.st_size != s->root.n) {
		close(in_fd); /* changed since it was mapped: copy from the mapping */
		in_fd = -1;
	}
	st = ali_splice_to_fd(s->sp, in_fd, out.fd);
	if (in_fd >= 0)
		close(in_fd);
	if (st != AL_OK) {
		ali_diag_add(d, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL, "cannot write %s: %s", path,
			    st == AL_E_IO ? strerror(errno) : al_status_str(st));
		ali_atomic_abort(&out);
		return st;
	}
	return ali_atomic_commit(&out, d); /* fsync, rename; the temporary removed on failure */
}
