/* SPDX-License-Identifier: MIT */
/* surgery.c: the pass table of `anelint fix` and the rewritten model file.
 *
 * Each pass looks at one NeuralNetwork layer, decides from its inferred shapes
 * and parameters whether its rewrite keeps the results (exact) or only the
 * maths (reassociate), and if so builds the new layer bytes. The new layers go
 * into the file with pbsplice: the rewritten layer replaces the old one's
 * payload, helper layers are inserted just before it; every other byte is the
 * input's. Proving a rewrite (running both models) and checking that it
 * reduces fallbacks is the caller's job (src/cli/fix.c).
 */
#include "analysis.h"
#include "pbsplice.h"
#include "surgery_int.h"
#include "passes.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* NeuralNetworkLayer fields, and the layer types the passes emit. */
enum { L_NAME = 1, L_INPUT = 2, L_OUTPUT = 3, L_INPUT_TENSOR = 4, NN_LAYERS = 1 };
enum { F_POOLING = 120, F_ACTIVATION = 130, F_UPSAMPLE = 210, F_ADD = 230, F_MULTIPLY = 231,
       F_SCALE = 245, F_LOAD_CONSTANT = 290, F_CONCAT = 320, F_SPLIT = 330, F_INNER_PRODUCT = 140,
       F_SLICE = 350, F_UNARY = 220, F_RESHAPE = 300, F_PERMUTE = 310 };

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

static bool shape_known(const struct al_shape *s)
{
	return ali_nn_shape_static(s);
}

static void fmt_shape(const struct al_shape *s, char *buf, size_t cap)
{
	ali_shape_format(s, buf, cap);
}

static const char *fresh_name(struct pctx *c, const char *base, const char *suffix)
{
	return ali_nn_fresh_name(&c->s->arena, c->n, c->names, c->n_names, base, suffix);
}

/* The new payload of c->n: its fields in order, the params field replaced by
 * field `pfield` with payload params, and (when inputs) its inputs replaced
 * (dropping the inputTensor ranks, which described the old inputs). */
static bool rebuild_layer(struct pctx *c, uint32_t pfield, const struct al_buf *params,
			  const char *const *inputs, uint32_t n_inputs)
{
	struct pb_iter it;
	struct pb_field f;
	bool inputs_done = false, params_done = false;
	pb_iter_init(&it, c->src->msg);
	size_t start = 0;
	while ((start = it.pos, pb_next(&it, &f))) {
		const uint8_t *raw = c->src->msg.p + start;
		size_t rawn = it.pos - start;
		if (f.wire == PB_LEN && f.data.p == c->src->params.p && f.data.n == c->src->params.n) {
			ali_buf_len(&c->layer, pfield, params->p, params->n);
			params_done = true;
		} else if (inputs && f.num == L_INPUT) {
			if (!inputs_done)
				for (uint32_t i = 0; i < n_inputs; i++)
					ali_buf_str(&c->layer, L_INPUT, inputs[i]);
			inputs_done = true;
		} else if (inputs && f.num == L_INPUT_TENSOR) {
			continue;
		} else {
			ali_buf_put(&c->layer, raw, rawn);
		}
	}
	if (it.err || !params_done)
		return say(c, "the layer message could not be re-read");
	if (inputs && !inputs_done)
		return say(c, "the layer has no inputs");
	return !c->layer.failed || say(c, "out of memory");
}

/* A whole `layers` field holding a new layer: name, inputs, output, params. */
static void new_layer(struct pctx *c, const char *name, const char *const *inputs, uint32_t n_in,
		      const char *output, uint32_t pfield, const struct al_buf *params)
{
	struct al_buf l = {0};
	ali_buf_str(&l, L_NAME, name);
	for (uint32_t i = 0; i < n_in; i++)
		ali_buf_str(&l, L_INPUT, inputs[i]);
	ali_buf_str(&l, L_OUTPUT, output);
	ali_buf_len(&l, pfield, params->p, params->n);
	if (l.failed)
		c->pre.failed = true;
	else
		ali_buf_len(&c->pre, NN_LAYERS, l.p, l.n);
	ali_buf_free(&l);
	if (c->n_names < 15)
		c->names[c->n_names++] = name;
}

/* One step of a chain that replaces a layer (upsample x2 chain, pooling
 * cascades): before the last step a new layer `<layer>__<stem>`,
 * `<layer>__<stem>_1`, ... reading *prev; the last step is the layer itself,
 * rebuilt to read *prev. Frees params. */
static bool chain_step(struct pctx *c, bool last, bool first, const char *stem, uint32_t pfield,
		       struct al_buf *params, const char **prev)
{
	bool ok = true;
	if (!last) {
		char suffix[16];
		snprintf(suffix, sizeof suffix, first ? "%s" : "%s_", stem);
		const char *nm = fresh_name(c, c->n->name, suffix);
		if (!nm) {
			ok = say(c, "no free name");
		} else {
			new_layer(c, nm, prev, 1, nm, pfield, params);
			*prev = nm;
		}
	} else {
		ok = rebuild_layer(c, pfield, params, prev, 1);
	}
	ali_buf_free(params);
	return ok;
}

/* Legacy add / multiply broadcast only among [B,1,1,1], [B,C,1,1], [B,1,H,W] and
 * [B,C,H,W]-style shapes (the format facts): equal ranks, equal leading axes,
 * and the smaller operand's (C, H, W) one of 1x1x1, Cx1x1, 1xHxW, CxHxW. */
static bool legacy_broadcast(struct pctx *c, const struct al_shape *a, const struct al_shape *b)
{
	char sa[64], sb[64];
	fmt_shape(a, sa, sizeof sa);
	fmt_shape(b, sb, sizeof sb);
	if (!shape_known(a) || !shape_known(b))
		return say(c, "input shapes %s, %s not known statically", sa, sb);
	if (a->rank != b->rank)
		return say(c, "input ranks differ (%s, %s): legacy layers do not broadcast ranks", sa, sb);
	if (a->rank < 1 || a->rank > 5)
		return say(c, "rank %d: legacy layers take ranks 1 to 5", a->rank);
	if (memcmp(a->dims, b->dims, (size_t)a->rank * sizeof a->dims[0]) == 0)
		return true;
	if (a->rank < 3)
		return say(c, "broadcast of %s with %s below rank 3", sa, sb);
	int r = a->rank;
	for (int i = 0; i < r - 3; i++)
		if (a->dims[i] != b->dims[i])
			return say(c, "%s and %s differ in a leading (batch) axis", sa, sb);
	for (int side = 0; side < 2; side++) {
		const struct al_shape *full = side ? b : a, *x = side ? a : b;
		int64_t C = full->dims[r - 3], H = full->dims[r - 2], W = full->dims[r - 1];
		int64_t c3 = x->dims[r - 3], h3 = x->dims[r - 2], w3 = x->dims[r - 1];
		bool cok = c3 == C || c3 == 1, hw_one = h3 == 1 && w3 == 1, hw_full = h3 == H && w3 == W;
		if (cok && (hw_one || hw_full))
			return true;
	}
	return say(c, "%s with %s is not a legacy broadcast (1x1x1, Cx1x1, 1xHxW, CxHxW)", sa, sb);
}

static bool top_level(struct pctx *c)
{
	if (c->n->owner->depth != 0)
		return say(c, "layer in a nested network (branch / loop body)");
	if (!c->src->msg.p || !c->src->params.p)
		return say(c, "no layer message");
	return true;
}

/* ------------------------------------------------------------------ passes */

static bool elementwise(struct pctx *c, uint32_t field, const char *to)
{
	if (!top_level(c))
		return false;
	if (c->n->n_inputs != 2)
		return say(c, "%u inputs (2 expected)", c->n->n_inputs);
	if (!legacy_broadcast(c, ali_node_in_shape(c->n, 0), ali_node_in_shape(c->n, 1)))
		return false;
	struct al_buf empty = {0};
	if (!rebuild_layer(c, field, &empty, NULL, 0))
		return false;
	snprintf(c->after, sizeof c->after, "%s", to);
	c->names[c->n_names++] = c->n->name;
	return true;
}

static bool p_addb(struct pctx *c)
{
	return elementwise(c, F_ADD, "add");
}

static bool p_mulb(struct pctx *c)
{
	return elementwise(c, F_MULTIPLY, "multiply");
}

/* a - b == a + (-b) exactly in IEEE arithmetic (negation is exact). The
 * negation is linear(alpha -1, beta -0.0): with beta +0.0 it would give +0.0
 * for b = +0.0, and a + (+0.0) is +0.0 where a - (+0.0) is -0.0 (a = -0.0). */
static bool p_subb(struct pctx *c)
{
	if (!top_level(c))
		return false;
	if (c->n->n_inputs != 2)
		return say(c, "%u inputs (2 expected)", c->n->n_inputs);
	if (!legacy_broadcast(c, ali_node_in_shape(c->n, 0), ali_node_in_shape(c->n, 1)))
		return false;
	const char *neg = fresh_name(c, c->n->name, "neg");
	if (!neg)
		return say(c, "no free name for the negation");
	struct al_buf lin = {0}, act = {0}, empty = {0};
	ali_buf_float(&lin, 1, -1.0f);
	ali_buf_float(&lin, 2, -0.0f); /* -1 * (+0) + (+0) would be +0, not -0: a - (+0) for a = -0 */
	ali_buf_len(&act, 5, lin.p, lin.n); /* ActivationParams.linear = 5 */
	const char *in_b = c->n->inputs[1];
	new_layer(c, neg, &in_b, 1, neg, F_ACTIVATION, &act);
	ali_buf_free(&lin);
	ali_buf_free(&act);
	const char *ins[2] = {c->n->inputs[0], neg};
	if (!rebuild_layer(c, F_ADD, &empty, ins, 2))
		return false;
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "activation linear(-1, -0.0) '%s' + add", neg);
	return true;
}

/* concatND along axis rank-3 of equal-rank inputs is the legacy channel concat. */
static bool p_concatnd(struct pctx *c)
{
	if (!top_level(c))
		return false;
	uint64_t v;
	int64_t axis = pb_get_varint(c->src->params, 1, &v) ? (int64_t)v : 0;
	if (pb_get_varint(c->src->params, 2, &v) && v)
		return say(c, "interleave is set");
	if (c->n->n_inputs < 2)
		return say(c, "%u inputs", c->n->n_inputs);
	int rank = -1;
	for (uint32_t i = 0; i < c->n->n_inputs; i++) {
		const struct al_shape *s = ali_node_in_shape(c->n, i);
		if (!shape_known(s))
			return say(c, "input %u shape not known statically", i);
		if (rank >= 0 && s->rank != rank)
			return say(c, "inputs of different ranks");
		rank = s->rank;
	}
	if (rank < 3 || rank > 5)
		return say(c, "rank %d (concat takes ranks 3 to 5)", rank);
	int64_t ax = axis < 0 ? axis + rank : axis;
	if (ax != rank - 3)
		return say(c, "axis %lld is not the channel axis (-3) of rank-%d inputs", (long long)axis, rank);
	struct al_buf empty = {0};
	if (!rebuild_layer(c, F_CONCAT, &empty, NULL, 0))
		return false;
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "concat");
	return true;
}

/* Equal-rank inputs of static shape, rank 3-5: the rank, or -1 with c->why. */
static int static_rank(struct pctx *c)
{
	int rank = -1;
	for (uint32_t i = 0; i < c->n->n_inputs; i++) {
		const struct al_shape *s = ali_node_in_shape(c->n, i);
		if (!shape_known(s))
			return say(c, "input %u shape not known statically", i), -1;
		if (rank >= 0 && s->rank != rank)
			return say(c, "inputs of different ranks"), -1;
		rank = s->rank;
	}
	if (rank < 3 || rank > 5)
		return say(c, "rank %d (the legacy layers take ranks 3 to 5)", rank), -1;
	return rank;
}

/* The channel shuffle: concatND(interleave) of n inputs of C channels along the
 * channel axis, y[i*n + k] = x_k[i], is pure data movement: split each input
 * into C single channels (legacy split, equal parts) and concat (legacy, axis -3)
 * the 1-channel blobs in the order x_0[0], x_1[0], ..., x_0[1], ...: every value
 * is copied, none computed, so the result is bit-identical (NaN payloads and
 * signed zeros included). A 1x1 convolution by a 0/1 permutation matrix would
 * also run on the ANE but is not exact: 0 x inf = NaN, and -0 + 0 = +0. */
#define MAX_SHUFFLE 1024 /* blobs the concat reads */
static bool p_concatnd_interleave(struct pctx *c)
{
	if (!top_level(c))
		return false;
	uint64_t v;
	int64_t axis = pb_get_varint(c->src->params, 1, &v) ? (int64_t)v : 0;
	if (!(pb_get_varint(c->src->params, 2, &v) && v))
		return say(c, "interleave is not set");
	uint32_t n = c->n->n_inputs;
	if (n < 2)
		return say(c, "%u inputs", n);
	int rank = static_rank(c);
	if (rank < 0)
		return false;
	int64_t ax = axis < 0 ? axis + rank : axis;
	if (ax != rank - 3)
		return say(c, "axis %lld is not the channel axis (-3) of rank-%d inputs", (long long)axis, rank);
	const struct al_shape *s0 = ali_node_in_shape(c->n, 0);
	for (uint32_t i = 1; i < n; i++)
		if (memcmp(ali_node_in_shape(c->n, i)->dims, s0->dims, (size_t)rank * sizeof s0->dims[0]))
			return say(c, "inputs of different shapes (interleave takes one shape)");
	int64_t C = s0->dims[rank - 3];
	if (C < 1 || (uint64_t)C * n > MAX_SHUFFLE)
		return say(c, "%u inputs of %lld channels: more than %d single-channel blobs", n, (long long)C,
			   MAX_SHUFFLE);
	const char **parts = ali_arena_array(&c->s->arena, (size_t)C * n, sizeof *parts);
	if (!parts)
		return say(c, "out of memory");
	for (uint32_t k = 0; k < n; k++) {
		const char *sp = fresh_name(c, c->n->name, k ? "split_" : "split");
		if (!sp)
			return say(c, "no free name for a split");
		/* a split layer: input k, C outputs <layer>__il<k>_<i> */
		struct al_buf l = {0}, prm = {0};
		ali_buf_uint(&prm, 1, (uint64_t)C); /* SplitLayerParams.nOutputs */
		ali_buf_str(&l, L_NAME, sp);
		ali_buf_str(&l, L_INPUT, c->n->inputs[k]);
		for (int64_t i = 0; i < C; i++) {
			char *nm = ali_arena_printf(&c->s->arena, "%s__il%u_%lld", c->n->name, k, (long long)i);
			if (!nm || ali_nn_name_taken(c->n, nm)) {
				ali_buf_free(&l);
				ali_buf_free(&prm);
				return say(c, "the helper name '%.80s' is taken", nm ? nm : "?");
			}
			parts[i * n + k] = nm;
			ali_buf_str(&l, L_OUTPUT, nm);
		}
		ali_buf_len(&l, F_SPLIT, prm.p, prm.n);
		if (l.failed || prm.failed)
			c->pre.failed = true;
		else
			ali_buf_len(&c->pre, NN_LAYERS, l.p, l.n);
		ali_buf_free(&l);
		ali_buf_free(&prm);
		if (c->n_names < 15)
			c->names[c->n_names++] = sp;
	}
	struct al_buf empty = {0};
	if (!rebuild_layer(c, F_CONCAT, &empty, parts, (uint32_t)(C * n)))
		return false;
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "%u split x%lld + concat of %lld channels in interleaved order",
		 n, (long long)C, (long long)(C * n));
	return true;
}

static const struct al_node *producer(const struct al_node *n, const char *blob);
static bool only_reader(const struct al_node *n, const char *blob);

/* innerProduct L (out t, N output channels) then splitND S of t along that
 * channel axis into parts n_0 + n_1 + ... = N: part i is the innerProduct with
 * weight rows [a_i, a_i + n_i) and those bias entries. Each output value is the
 * same dot product over the same inputs as in L, but a matrix kernel's order of
 * adding the K products follows its tiling, which follows the matrix size (the
 * interpreter's sgemm: rel 2.7e-7 on the corpus transformer): reassociate. S's
 * fallback goes (and L with it when nothing else reads t). Weights are copied as bytes (fp32 or
 * fp16 WeightParams; quantized / raw ones refused). */
#define MAX_IP_SPLIT_BYTES (256u << 20)
static bool p_splitnd_ip(struct pctx *c)
{
	if (!top_level(c))
		return false;
	if (c->n->n_inputs != 1 || c->n->n_outputs < 2 || c->n->n_outputs > 12)
		return say(c, "%u inputs, %u outputs", c->n->n_inputs, c->n->n_outputs);
	const struct al_node *L = producer(c->n, c->n->inputs[0]);
	if (!L || !L->type || strcmp(L->type, "innerProduct") != 0 || L->owner != c->n->owner)
		return say(c, "its input is not an innerProduct's output");
	const struct al_node_src *ls = al_src(L);
	if (!ls || !ls->msg.p || !ls->params.p || L->n_inputs != 1 || L->n_outputs != 1)
		return say(c, "the innerProduct message could not be read");
	const struct al_shape *t = L->out_shapes ? &L->out_shapes[0] : NULL;
	if (!shape_known(t))
		return say(c, "the innerProduct's output shape is not known statically");
	uint64_t v, N = 0, K = 0, hasb = 0;
	pb_get_varint(ls->params, 1, &K);
	pb_get_varint(ls->params, 2, &N);
	pb_get_varint(ls->params, 10, &hasb);
	if (pb_has(ls->params, 22))
		return say(c, "the innerProduct quantizes its input dynamically");
	int64_t axis = pb_get_varint(c->src->params, 1, &v) ? (int64_t)v : 0;
	int rank = t->rank;
	int64_t ax = axis < 0 ? axis + rank : axis;
	if (ax < 0 || ax >= rank || t->dims[ax] != (int64_t)N || N < 2)
		return say(c, "axis %lld is not the innerProduct's %llu output channels", (long long)axis,
			   (unsigned long long)N);
	bool last = ax == rank - 1, chw = ax == rank - 3 && t->dims[rank - 1] == 1 && t->dims[rank - 2] == 1;
	if (!last && !chw)
		return say(c, "axis %lld holds the channels but is neither the last axis nor C of [C,1,1]",
			   (long long)axis);
	/* the parts */
	uint32_t n = c->n->n_outputs;
	uint64_t sz[12];
	long k = pb_get_varints(c->src->params, 3, sz, 12);
	if (k == 0) {
		if (N % n)
			return say(c, "%llu channels do not split into %u equal parts", (unsigned long long)N, n);
		for (uint32_t i = 0; i < n; i++)
			sz[i] = N / n;
	} else if (k != (long)n) {
		return say(c, "%ld splitSizes for %u outputs", k, n);
	}
	uint64_t sum = 0;
	for (uint32_t i = 0; i < n; i++)
		sum += sz[i];
	if (sum != N)
		return say(c, "split sizes add up to %llu, not %llu", (unsigned long long)sum, (unsigned long long)N);
	/* the weights: floatValue 1 (packed floats) or float16Value 2 (bytes), row-major [N, K] */
	al_span wp, bp = {0}, wv, bv = {0};
	if (!pb_get_bytes(ls->params, 20, &wp))
		return say(c, "the innerProduct has no weights");
	int wf = pb_get_bytes(wp, 1, &wv) && wv.n ? 1 : pb_get_bytes(wp, 2, &wv) && wv.n ? 2 : 0;
	if (!wf || pb_has(wp, 30) || pb_has(wp, 31) || pb_has(wp, 40))
		return say(c, "the weights are quantized or raw (fp32 / fp16 values only)");
	size_t esz = wf == 1 ? 4 : 2;
	if (K == 0 || wv.n != N * K * esz)
		return say(c, "the weights hold %zu bytes, not %llu x %llu values", wv.n, (unsigned long long)N,
			   (unsigned long long)K);
	if (wv.n > MAX_IP_SPLIT_BYTES)
		return say(c, "the weights are %zu MB: more than 256 MB copied", wv.n >> 20);
	int bf = 0;
	if (hasb) {
		if (!pb_get_bytes(ls->params, 21, &bp))
			return say(c, "hasBias without a bias");
		bf = pb_get_bytes(bp, 1, &bv) && bv.n ? 1 : pb_get_bytes(bp, 2, &bv) && bv.n ? 2 : 0;
		if (!bf || pb_has(bp, 30) || pb_has(bp, 40) || bv.n != N * (bf == 1 ? 4u : 2u))
			return say(c, "the bias is not %llu fp32 / fp16 values", (unsigned long long)N);
	}
	/* one innerProduct per part: helpers before S, the last one S itself */
	uint64_t a = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct al_buf prm = {0}, w = {0}, b = {0}, l = {0};
		ali_buf_uint(&prm, 1, K);
		ali_buf_uint(&prm, 2, sz[i]);
		if (hasb)
			ali_buf_uint(&prm, 10, 1);
		ali_buf_len(&w, (uint32_t)wf, wv.p + a * K * esz, sz[i] * K * esz);
		ali_buf_len(&prm, 20, w.p, w.n);
		if (hasb) {
			size_t be = bf == 1 ? 4 : 2;
			ali_buf_len(&b, (uint32_t)bf, bv.p + a * be, sz[i] * be);
			ali_buf_len(&prm, 21, b.p, b.n);
		}
		const char *nm = i == n - 1 ? c->n->name : fresh_name(c, c->n->name, i ? "ip_" : "ip");
		bool ok = nm != NULL;
		if (ok) {
			ali_buf_str(&l, L_NAME, nm);
			ali_buf_str(&l, L_INPUT, L->inputs[0]);
			ali_buf_str(&l, L_OUTPUT, c->n->outputs[i]);
			ali_buf_len(&l, F_INNER_PRODUCT, prm.p, prm.n);
			if (i < n - 1) {
				ali_buf_len(&c->pre, NN_LAYERS, l.p, l.n);
				if (c->n_names < 15)
					c->names[c->n_names++] = nm;
			} else {
				ali_buf_put(&c->layer, l.p, l.n);
			}
			c->pre.failed |= l.failed || prm.failed || w.failed || b.failed;
		}
		ali_buf_free(&prm);
		ali_buf_free(&w);
		ali_buf_free(&b);
		ali_buf_free(&l);
		if (!ok)
			return say(c, "no free name");
		a += sz[i];
	}
	if (c->pre.failed || c->layer.failed)
		return say(c, "out of memory");
	bool drop = only_reader(c->n, c->n->inputs[0]);
	if (drop)
		c->drop = ls->msg;
	c->also = L->name;
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "%u innerProduct layers (weight rows split)%s", n,
		 drop ? "; the fused innerProduct deleted" : "");
	return true;
}

/* The conditions both splitND passes share: a top-level splitND of one input of
 * static rank, along the channel axis (-3); *C is that axis' extent. */
static bool splitnd_of_channels(struct pctx *c, int64_t *C)
{
	if (!top_level(c))
		return false;
	if (c->n->n_inputs != 1)
		return say(c, "%u inputs", c->n->n_inputs);
	int rank = static_rank(c);
	if (rank < 0)
		return false;
	uint64_t v;
	int64_t axis = pb_get_varint(c->src->params, 1, &v) ? (int64_t)v : 0;
	int64_t ax = axis < 0 ? axis + rank : axis;
	if (ax != rank - 3)
		return say(c, "axis %lld is not the channel axis (-3) of a rank-%d input", (long long)axis, rank);
	*C = ali_node_in_shape(c->n, 0)->dims[rank - 3];
	return true;
}

/* splitND along the channel axis (rank-3) into equal parts is the legacy split
 * (nOutputs parts of axis -3): the same copies. */
static bool p_splitnd(struct pctx *c)
{
	int64_t C;
	if (!splitnd_of_channels(c, &C))
		return false;
	uint32_t n = c->n->n_outputs;
	if (n < 2)
		return say(c, "%u outputs (split makes 2 or more)", n);
	uint64_t sz[64], v;
	long k = pb_get_varints(c->src->params, 3, sz, 64);
	if (k < 0 || k > 64)
		return say(c, "splitSizes could not be read");
	if (k > 0) {
		if ((uint32_t)k != n)
			return say(c, "%ld splitSizes for %u outputs", k, n);
		for (long i = 1; i < k; i++)
			if (sz[i] != sz[0])
				return say(c, "unequal split sizes (%llu, %llu): split makes equal parts",
					   (unsigned long long)sz[0], (unsigned long long)sz[i]);
	} else if (pb_get_varint(c->src->params, 2, &v) && v && v != n) {
		return say(c, "numSplits %llu for %u outputs", (unsigned long long)v, n);
	}
	if (C % n)
		return say(c, "%lld channels do not split into %u equal parts", (long long)C, n);
	struct al_buf prm = {0};
	ali_buf_uint(&prm, 1, n);
	bool ok = rebuild_layer(c, F_SPLIT, &prm, NULL, 0);
	ali_buf_free(&prm);
	if (!ok)
		return false;
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "split into %u", n);
	return true;
}

/* splitND of the channel axis into unequal parts n_0, n_1, ...: part i is the
 * legacy slice of channels [a_i, a_i + n_i) (axis CHANNEL, stride 1), the same
 * copies. Helpers `<layer>__slice`, ...; the layer itself the last slice. */
static bool p_splitnd_slices(struct pctx *c)
{
	int64_t C;
	if (!splitnd_of_channels(c, &C))
		return false;
	uint32_t n = c->n->n_outputs;
	uint64_t sz[16];
	long k = pb_get_varints(c->src->params, 3, sz, 16);
	if (n < 2 || n > 14 || k != (long)n)
		return say(c, "%u outputs, %ld splitSizes (2-14 parts with their sizes)", n, k);
	uint64_t sum = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!sz[i])
			return say(c, "an empty part");
		sum += sz[i];
	}
	if (sum != (uint64_t)C)
		return say(c, "split sizes add up to %llu, not the %lld channels", (unsigned long long)sum,
			   (long long)C);
	uint64_t a = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct al_buf prm = {0}, l = {0};
		ali_buf_uint(&prm, 1, a);         /* startIndex */
		ali_buf_uint(&prm, 2, a + sz[i]); /* endIndex, exclusive */
		ali_buf_uint(&prm, 3, 1);         /* stride */
		ali_buf_uint(&prm, 4, 0);         /* axis CHANNEL_AXIS */
		const char *nm = i == n - 1 ? c->n->name : fresh_name(c, c->n->name, i ? "slice_" : "slice");
		if (nm) {
			ali_buf_str(&l, L_NAME, nm);
			ali_buf_str(&l, L_INPUT, c->n->inputs[0]);
			ali_buf_str(&l, L_OUTPUT, c->n->outputs[i]);
			ali_buf_len(&l, F_SLICE, prm.p, prm.n);
			if (i < n - 1) {
				ali_buf_len(&c->pre, NN_LAYERS, l.p, l.n);
				if (c->n_names < 15)
					c->names[c->n_names++] = nm;
			} else {
				ali_buf_put(&c->layer, l.p, l.n);
			}
			c->pre.failed |= l.failed || prm.failed;
		}
		ali_buf_free(&prm);
		ali_buf_free(&l);
		if (!nm)
			return say(c, "no free name");
		a += sz[i];
	}
	if (c->pre.failed || c->layer.failed)
		return say(c, "out of memory");
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "%u slice layers on the channel axis", n);
	return true;
}

static int log2_exact(uint64_t f)
{
	if (f == 0 || (f & (f - 1)))
		return -1;
	int k = 0;
	while (f > 1) {
		f >>= 1;
		k++;
	}
	return k;
}

/* Nearest-neighbour upsampling by 2^a x 2^b is a chain of x2 (or x1) steps. */
static bool p_upsample(struct pctx *c)
{
	if (!top_level(c))
		return false;
	al_span p = c->src->params;
	uint64_t v, sf[4] = {1, 1};
	if (pb_get_varint(p, 5, &v) && v != 0)
		return say(c, "mode is bilinear (only nearest is exact as a chain)");
	if (pb_has(p, 7))
		return say(c, "fractional scaling factor");
	if (pb_get_varint(p, 6, &v) && v != 0)
		return say(c, "linearUpsampleMode is set");
	long k = pb_get_varints(p, 1, sf, 4);
	if (k != 2)
		return say(c, "scalingFactor has %ld values", k);
	int eh = log2_exact(sf[0]), ew = log2_exact(sf[1]);
	if (eh < 0 || ew < 0 || eh > 6 || ew > 6)
		return say(c, "scalingFactor %llux%llu is not a power of two", (unsigned long long)sf[0],
			   (unsigned long long)sf[1]);
	int steps = eh > ew ? eh : ew;
	if (steps < 2)
		return say(c, "scalingFactor %llux%llu needs no chain", (unsigned long long)sf[0],
			   (unsigned long long)sf[1]);
	const char *prev = c->n->inputs && c->n->n_inputs == 1 ? c->n->inputs[0] : NULL;
	if (!prev)
		return say(c, "%u inputs", c->n->n_inputs);
	for (int i = 0; i < steps; i++) {
		struct al_buf up = {0};
		uint64_t f2[2] = {i < eh ? 2u : 1u, i < ew ? 2u : 1u};
		ali_buf_packed(&up, 1, f2, 2);
		if (!chain_step(c, i == steps - 1, i == 0, "x2", F_UPSAMPLE, &up, &prev))
			return false;
	}
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "%d upsample x2 layers", steps);
	return true;
}

/* Whether a padding message (ValidPadding) pads nothing. */
static bool zero_padding(al_span valid)
{
	al_span border;
	if (!pb_get_bytes(valid, 1, &border))
		return true;
	struct pb_iter it;
	struct pb_field f;
	pb_iter_init(&it, border);
	while (pb_next(&it, &f)) {
		if (f.num != 10 || f.wire != PB_LEN)
			continue;
		uint64_t v;
		if ((pb_get_varint(f.data, 1, &v) && v) || (pb_get_varint(f.data, 2, &v) && v))
			return false;
	}
	return it.err == 0;
}

/* max over a K window == max over K1 then over K2 windows when K1 + K2 - 1 = K
 * (the first with stride 1, the last with the layer's stride), no padding. */
/* A global average pool averages its whole input whatever the padding says
 * (the window is the input, the output 1x1, no padding is added), so VALID ->
 * SAME changes nothing computed; with VALID Core ML of iOS 13/14 built it as a
 * plain pooling kernel that the ANE refused above 13 wide, and pulled the layer
 * before it off the ANE too (ANE056, hollance/neural-engine #1: SAME worked). */
static bool p_global_avg(struct pctx *c)
{
	if (!top_level(c))
		return false;
	al_span p = c->src->params, valid;
	uint64_t v;
	if (!(pb_get_varint(p, 1, &v) && v == 1))
		return say(c, "not average pooling");
	if (!(pb_get_varint(p, 60, &v) && v))
		return say(c, "not global pooling");
	if (!pb_get_bytes(p, 30, &valid))
		return say(c, "padding is not VALID");
	if (!zero_padding(valid))
		return say(c, "valid padding with non-zero amounts");
	struct al_buf prm = {0};
	struct pb_iter it;
	struct pb_field f;
	size_t start;
	pb_iter_init(&it, p);
	while ((start = it.pos, pb_next(&it, &f)))
		if (f.num != 30)
			ali_buf_put(&prm, p.p + start, it.pos - start);
	static const uint8_t none[1];
	ali_buf_len(&prm, 31, none, 0); /* same = SamePadding{} (asymmetryMode default) */
	bool ok = !it.err && rebuild_layer(c, F_POOLING, &prm, NULL, 0);
	ali_buf_free(&prm);
	if (!ok)
		return c->why[0] ? false : say(c, "the pooling message could not be re-read");
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "global average pooling with SAME padding");
	return true;
}

static bool p_maxpool(struct pctx *c)
{
	if (!top_level(c))
		return false;
	al_span p = c->src->params, valid;
	uint64_t v, ks[4] = {3, 3}, st[4] = {1, 1};
	if (pb_get_varint(p, 1, &v) && v != 0)
		return say(c, "%s pooling (only max decomposes exactly)", v == 1 ? "average" : "L2");
	if (pb_get_varint(p, 60, &v) && v)
		return say(c, "global pooling");
	if (pb_has(p, 31) || pb_has(p, 32) || !pb_get_bytes(p, 30, &valid))
		return say(c, "padding is not valid (same / includeLastPixel change the windows)");
	if (!zero_padding(valid))
		return say(c, "valid padding with non-zero amounts");
	if (pb_has(p, 10) && pb_get_varints(p, 10, ks, 4) != 2)
		return say(c, "kernelSize is not [H, W]");
	if (pb_has(p, 20) && pb_get_varints(p, 20, st, 4) != 2)
		return say(c, "stride is not [H, W]");
	if (ks[0] <= 13 && ks[1] <= 13)
		return say(c, "kernel %llux%llu already <= 13", (unsigned long long)ks[0],
			   (unsigned long long)ks[1]);
	if (ks[0] == 0 || ks[1] == 0 || ks[0] > 1024 || ks[1] > 1024)
		return say(c, "kernel %llux%llu out of range", (unsigned long long)ks[0],
			   (unsigned long long)ks[1]);
	if (c->n->n_inputs != 1)
		return say(c, "%u inputs", c->n->n_inputs);
	uint64_t rest[2] = {ks[0] - 1, ks[1] - 1}; /* sum of (k_i - 1) still to cover */
	int steps = (int)(((rest[0] > rest[1] ? rest[0] : rest[1]) + 11) / 12);
	const char *prev = c->n->inputs[0];
	char desc[96] = "";
	size_t dl = 0;
	for (int i = 0; i < steps; i++) {
		uint64_t k[2];
		for (int a = 0; a < 2; a++) {
			uint64_t take = rest[a] > 12 ? 12 : rest[a];
			k[a] = take + 1;
			rest[a] -= take;
		}
		if (dl < sizeof desc)
			dl += (size_t)snprintf(desc + dl, sizeof desc - dl, "%s%llux%llu", i ? " + " : "",
					       (unsigned long long)k[0], (unsigned long long)k[1]);
		struct al_buf pp = {0};
		if (i < steps - 1) {
			uint64_t one[2] = {1, 1};
			ali_buf_packed(&pp, 10, k, 2);
			ali_buf_packed(&pp, 20, one, 2);
			ali_buf_len(&pp, 30, NULL, 0);
		} else {
			/* the layer's own params with the last kernel */
			struct pb_iter it;
			struct pb_field f;
			size_t start;
			pb_iter_init(&it, p);
			while ((start = it.pos, pb_next(&it, &f)))
				if (f.num != 10)
					ali_buf_put(&pp, p.p + start, it.pos - start);
			ali_buf_packed(&pp, 10, k, 2);
			if (it.err) {
				ali_buf_free(&pp);
				return say(c, "the pooling message could not be re-read");
			}
		}
		if (!chain_step(c, i == steps - 1, i == 0, "pool", F_POOLING, &pp, &prev))
			return false;
	}
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "max pools %s (stride %llux%llu on the last)", desc,
		 (unsigned long long)st[0], (unsigned long long)st[1]);
	return true;
}

/* ------------------------------------------------------------------ constants */

#define CONST_MAX_VALUES (1u << 20) /* a constant taken into a layer: at most 4 MiB of fp32 */

struct cval {
	const struct al_node *p; /* the loadConstant / loadConstantND layer */
	int rank;                /* of its result: loadConstant [1,1,C,H,W] is rank 5 */
	int64_t dims[5];
	size_t count;
	float *v;                /* count values, in the arena */
};

/* The top-level layer before n that produces blob, or NULL (a model input). */
static const struct al_node *producer(const struct al_node *n, const char *blob)
{
	return ali_nn_producer(n, blob);
}

/* Whether blob is read only by n, once, and is not a model output. */
static bool only_reader(const struct al_node *n, const char *blob)
{
	return ali_nn_only_reader(n, blob);
}

/* IEEE binary16 -> binary32 (exact). */
static float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
	if (e == 0x1f) {
		u = sign | 0x7f800000u | m << 13;
	} else if (e) {
		u = sign | (e + 112) << 23 | m << 13;
	} else if (m) { /* subnormal: m * 2^-24 */
		float f = (float)m * 0x1p-24f;
		memcpy(&u, &f, 4);
		u |= sign;
	} else {
		u = sign;
	}
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static bool is_const_layer(const struct al_node *p)
{
	return p && p->type &&
	       (strcmp(p->type, "loadConstant") == 0 || strcmp(p->type, "loadConstantND") == 0);
}

/* The values of a loadConstant / loadConstantND layer: fp32 (floatValue) or
 * fp16 (float16Value) weights only, every dimension >= 1, at most
 * CONST_MAX_VALUES values. */
static bool const_values(struct pctx *c, const struct al_node *p, struct cval *cv)
{
	const struct al_node_src *ps = al_src(p);
	const char *nm = p->name ? p->name : "?";
	if (!ps || !ps->params.p || p->owner->depth != 0)
		return say(c, "constant '%s' has no layer message", nm);
	bool legacy = strcmp(p->type, "loadConstant") == 0;
	uint64_t sh[6];
	long k = pb_get_varints(ps->params, 1, sh, 6);
	if (legacy ? k != 3 : (k < 1 || k > 5))
		return say(c, "constant '%s' has a shape of %ld dimensions", nm, k);
	memset(cv, 0, sizeof *cv);
	cv->p = p;
	cv->rank = legacy ? 5 : (int)k;
	for (int i = 0; i < cv->rank; i++)
		cv->dims[i] = 1;
	size_t count = 1;
	for (long i = 0; i < k; i++) {
		if (sh[i] < 1 || sh[i] > CONST_MAX_VALUES || count * sh[i] > CONST_MAX_VALUES)
			return say(c, "constant '%s': a dimension is 0 or it has more than %u values",
				   nm, CONST_MAX_VALUES);
		count *= (size_t)sh[i];
		cv->dims[cv->rank - k + i] = (int64_t)sh[i];
	}
	al_span wp, h = {0};
	if (!pb_get_bytes(ps->params, 2, &wp))
		return say(c, "constant '%s' has no data", nm);
	if (pb_has(wp, 30) || pb_has(wp, 31) || pb_has(wp, 40))
		return say(c, "constant '%s' is stored as raw or quantized bytes (fp32 / fp16 values only)",
			   nm);
	long n32 = pb_get_floats(wp, 1, NULL, 0);
	bool has16 = pb_get_bytes(wp, 2, &h) && h.n;
	if (n32 < 0 || (n32 > 0 && has16))
		return say(c, "constant '%s': malformed weights", nm);
	if (has16 ? h.n != 2 * count : (size_t)n32 != count)
		return say(c, "constant '%s': %zu values for a shape of %zu", nm,
			   has16 ? h.n / 2 : (size_t)n32, count);
	cv->v = ali_arena_array(&c->s->arena, count, sizeof *cv->v);
	if (!cv->v)
		return say(c, "out of memory");
	cv->count = count;
	if (has16)
		for (size_t i = 0; i < count; i++)
			cv->v[i] = half_to_float((uint16_t)(h.p[2 * i] | h.p[2 * i + 1] << 8));
	else
		pb_get_floats(wp, 1, cv->v, count);
	return true;
}

static bool same_shape(const struct al_shape *a, const struct al_shape *b)
{
	return shape_known(a) && shape_known(b) && a->rank == b->rank &&
	       memcmp(a->dims, b->dims, (size_t)a->rank * sizeof a->dims[0]) == 0;
}

/* x (*|/) constant, the constant produced by a top-level loadConstant(ND): which
 * input is x, the constant's values, and x's shape. The result must have x's
 * shape (the constant broadcasts into x, never x into it). A divide takes its
 * constant as the divisor only. */
struct constop {
	uint32_t xi;
	struct cval cv;
	const struct al_shape *xs;
};

static bool const_operand(struct pctx *c, bool divide, struct constop *o)
{
	if (!top_level(c))
		return false;
	if (c->n->n_inputs != 2 || c->n->n_outputs != 1)
		return say(c, "%u inputs, %u outputs (2 and 1 expected)", c->n->n_inputs, c->n->n_outputs);
	const struct al_node *p = NULL;
	int ci = -1;
	for (int i = 1; i >= (divide ? 1 : 0) && ci < 0; i--) {
		p = c->n->inputs[i] ? producer(c->n, c->n->inputs[i]) : NULL;
		if (is_const_layer(p))
			ci = i;
	}
	if (ci < 0)
		return say(c, divide ? "the divisor '%s' is not a loadConstant / loadConstantND output"
				     : "neither input is a loadConstant / loadConstantND output (%s)",
			   c->n->inputs[1] ? c->n->inputs[1] : "?");
	o->xi = (uint32_t)(1 - ci);
	if (!c->n->inputs[0] || !c->n->inputs[1] || strcmp(c->n->inputs[0], c->n->inputs[1]) == 0)
		return say(c, "both inputs are the constant");
	if (!const_values(c, p, &o->cv))
		return false;
	o->xs = ali_node_in_shape(c->n, o->xi);
	char sx[64], so[64];
	fmt_shape(o->xs, sx, sizeof sx);
	if (!shape_known(o->xs))
		return say(c, "input shape %s not known statically", sx);
	const struct al_shape *ys = c->n->out_shapes ? &c->n->out_shapes[0] : NULL;
	fmt_shape(ys, so, sizeof so);
	if (!same_shape(o->xs, ys))
		return say(c, "the result %s is not the shape of '%s' %s (the constant would broadcast it)",
			   so, c->n->inputs[o->xi], sx);
	if (o->cv.rank > o->xs->rank)
		return say(c, "the constant has rank %d > %d", o->cv.rank, o->xs->rank);
	return true;
}

/* The constant as a scale layer's gamma: its last three axes (C', H', W') one
 * of 1x1x1, Cx1x1, 1xHxW, CxHxW of x's last three, and 1 on every other axis. */
static bool scale_shape(struct pctx *c, const struct constop *o, uint64_t *shp, size_t *n_shp)
{
	const struct al_shape *xs = o->xs;
	const struct cval *cv = &o->cv;
	if (xs->rank < 3 || xs->rank > 5)
		return say(c, "input rank %d (scale takes ranks 3 to 5)", xs->rank);
	for (int i = 0; i < cv->rank - 3; i++)
		if (cv->dims[i] != 1)
			return say(c, "the constant is not 1 on its leading axes");
	int64_t d3[3] = {1, 1, 1}, x3[3];
	for (int i = 0; i < 3; i++) {
		x3[i] = xs->dims[xs->rank - 3 + i];
		if (cv->rank - 3 + i >= 0)
			d3[i] = cv->dims[cv->rank - 3 + i];
	}
	bool hw1 = d3[1] == 1 && d3[2] == 1, hwx = d3[1] == x3[1] && d3[2] == x3[2];
	if (!(d3[0] == 1 || d3[0] == x3[0]) || !(hw1 || hwx))
		return say(c, "a %lldx%lldx%lld constant is not a scale shape (1, C, 1xHxW, CxHxW)",
			   (long long)d3[0], (long long)d3[1], (long long)d3[2]);
	if (hw1) {
		shp[0] = (uint64_t)d3[0];
		*n_shp = 1;
	} else {
		for (int i = 0; i < 3; i++)
			shp[i] = (uint64_t)d3[i];
		*n_shp = 3;
	}
	return true;
}

/* The rewritten layer reads x only; the constant's layer goes when nothing else reads it. */
static bool finish_const(struct pctx *c, const struct constop *o, uint32_t field,
			 const struct al_buf *params, const char *what)
{
	const char *x = c->n->inputs[o->xi];
	if (!rebuild_layer(c, field, params, &x, 1))
		return false;
	const char *cname = c->n->inputs[1 - o->xi];
	bool gone = only_reader(c->n, cname);
	if (gone)
		c->drop = al_src(o->cv.p)->msg;
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "%s%s%s%s", what, gone ? " (constant layer '" : "",
		 gone && o->cv.p->name ? o->cv.p->name : "", gone ? "' removed)" : "");
	return true;
}

static void linear_params(struct al_buf *act, float alpha)
{
	ali_nn_linear_params(act, alpha);
}

static void scale_params(struct al_buf *sp, const uint64_t *shp, size_t n_shp, const float *v,
			 size_t count)
{
	struct al_buf w = {0};
	ali_buf_packed(sp, 1, shp, n_shp); /* shapeScale */
	ali_buf_tag(&w, 1, PB_LEN);        /* WeightParams.floatValue, packed */
	ali_buf_varint(&w, (uint64_t)count * 4);
	for (size_t i = 0; i < count; i++) {
		uint32_t u;
		memcpy(&u, &v[i], 4);
		uint8_t b[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
		ali_buf_put(&w, b, 4);
	}
	ali_buf_len(sp, 2, w.p, w.n); /* scale */
	if (w.failed)
		sp->failed = true;
	ali_buf_free(&w);
}

/* x * c == c * x == alpha * x + (-0.0) bit for bit (IEEE multiplication
 * commutes; adding -0.0 keeps every value, -0.0 included; +0.0 would turn a
 * -0.0 product into +0.0). */
static bool p_mul_scalar(struct pctx *c)
{
	struct constop o;
	if (!const_operand(c, false, &o))
		return false;
	if (o.cv.count != 1)
		return say(c, "the constant '%s' has %zu values (not a scalar)",
			   o.cv.p->name ? o.cv.p->name : "?", o.cv.count);
	struct al_buf act = {0};
	linear_params(&act, o.cv.v[0]);
	char what[96];
	snprintf(what, sizeof what, "activation linear(alpha %.9g, beta -0.0)", (double)o.cv.v[0]);
	bool ok = !act.failed && finish_const(c, &o, F_ACTIVATION, &act, what);
	ali_buf_free(&act);
	if (!ok && !c->why[0])
		say(c, "out of memory");
	return ok;
}

/* x * gamma with gamma broadcast over x's last three axes is the scale layer
 * without bias (the interpreter computes x * gamma; multiplication commutes). */
static bool p_mul_const(struct pctx *c)
{
	struct constop o;
	uint64_t shp[3];
	size_t n_shp;
	if (!const_operand(c, false, &o) || !scale_shape(c, &o, shp, &n_shp))
		return false;
	struct al_buf sp = {0};
	scale_params(&sp, shp, n_shp, o.cv.v, o.cv.count);
	bool ok = !sp.failed && finish_const(c, &o, F_SCALE, &sp, "scale (gamma = the constant)");
	ali_buf_free(&sp);
	if (!ok && !c->why[0])
		say(c, "out of memory");
	return ok;
}

/* x / c -> x * (1/c): 1/c rounds once and the product once more, so the result
 * may differ from x / c in the last bit (reassociate). c must be finite and
 * non-zero with a normal reciprocal. A scalar becomes a linear activation, any
 * other scale-shaped constant a scale layer. */
static bool p_div_const(struct pctx *c)
{
	struct constop o;
	if (!const_operand(c, true, &o))
		return false;
	float *r = ali_arena_array(&c->s->arena, o.cv.count, sizeof *r);
	if (!r)
		return say(c, "out of memory");
	for (size_t i = 0; i < o.cv.count; i++) {
		float v = o.cv.v[i];
		r[i] = 1.0f / v;
		if (!isfinite(v) || v == 0.0f || !isnormal(r[i]))
			return say(c, "the divisor '%s' holds %g at %zu (finite, non-zero values with a normal "
				   "reciprocal only)", o.cv.p->name ? o.cv.p->name : "?", (double)v, i);
	}
	struct al_buf b = {0};
	bool ok;
	if (o.cv.count == 1) {
		linear_params(&b, r[0]);
		char what[96];
		snprintf(what, sizeof what, "activation linear(alpha 1/%.9g, beta -0.0)", (double)o.cv.v[0]);
		ok = !b.failed && finish_const(c, &o, F_ACTIVATION, &b, what);
	} else {
		uint64_t shp[3];
		size_t n_shp;
		if (!scale_shape(c, &o, shp, &n_shp))
			return false;
		scale_params(&b, shp, n_shp, r, o.cv.count);
		ok = !b.failed && finish_const(c, &o, F_SCALE, &b, "scale (gamma = 1 / the constant)");
	}
	ali_buf_free(&b);
	if (!ok && !c->why[0])
		say(c, "out of memory");
	return ok;
}

/* Whether a pass of m (the only reader of c's constant) would take the constant
 * into m's own layer and delete c's layer, whatever --allow says: then c's
 * layer must stay as it is (two edits of one layer would overlap). */
static bool takes_in(struct pctx *c, const struct al_node *m)
{
	bool (*const fns[3])(struct pctx *) = {p_mul_scalar, p_mul_const, p_div_const};
	bool divide = strcmp(m->type, "divideBroadcastable") == 0, takes = false;
	for (int i = divide ? 2 : 0; i < (divide ? 3 : 2) && !takes; i++) {
		struct pctx r = {.s = c->s, .n = m, .src = al_src(m)};
		takes = r.src && fns[i](&r) && r.drop.p == c->src->msg.p;
		ali_buf_free(&r.pre);
		ali_buf_free(&r.layer);
	}
	return takes;
}

/* loadConstantND of shape [1,1,C,H,W] is loadConstant [C,H,W]: the interpreter
 * (and the format) give loadConstant a rank-5 [1,1,C,H,W] result, so any other
 * rank would change the ranks its consumers see. */
static bool p_lcnd(struct pctx *c)
{
	if (!top_level(c))
		return false;
	uint64_t sh[6];
	long k = pb_get_varints(c->src->params, 1, sh, 6);
	if (k < 1 || k > 5)
		return say(c, "shape of %ld dimensions", k);
	char s[96] = "";
	size_t sl = 0;
	for (long i = 0; i < k && sl < sizeof s; i++)
		sl += (size_t)snprintf(s + sl, sizeof s - sl, "%s%llu", i ? "," : "", (unsigned long long)sh[i]);
	if (k != 5 || sh[0] != 1 || sh[1] != 1)
		return say(c, "shape [%s]: loadConstant's result is rank 5 [1,1,C,H,W], so its consumers "
			   "would see another rank (rank-5 [1,1,C,H,W] constants only)", s);
	if (c->n->n_outputs != 1 || !c->n->outputs[0])
		return say(c, "%u outputs", c->n->n_outputs);
	const struct al_node *m = NULL; /* the first top-level layer reading it */
	for (uint32_t k2 = 0; k2 < c->n->owner->n_nodes && !m; k2++)
		for (uint32_t i = 0; i < c->n->owner->nodes[k2].n_inputs && !m; i++)
			if (c->n->owner->nodes[k2].inputs[i] &&
			    strcmp(c->n->owner->nodes[k2].inputs[i], c->n->outputs[0]) == 0)
				m = &c->n->owner->nodes[k2];
	if (m && m->type &&
	    (strcmp(m->type, "multiplyBroadcastable") == 0 || strcmp(m->type, "divideBroadcastable") == 0) &&
	    only_reader(m, c->n->outputs[0]) && takes_in(c, m))
		return say(c, "its only reader '%s' (%s) takes the constant into its own layer",
			   m->name ? m->name : "?", m->type);
	struct al_buf p = {0};
	struct pb_iter it;
	struct pb_field f;
	size_t start;
	ali_buf_packed(&p, 1, sh + 2, 3);
	pb_iter_init(&it, c->src->params);
	while ((start = it.pos, pb_next(&it, &f)))
		if (f.num != 1)
			ali_buf_put(&p, c->src->params.p + start, it.pos - start);
	bool ok = !it.err && !p.failed && rebuild_layer(c, F_LOAD_CONSTANT, &p, NULL, 0);
	ali_buf_free(&p);
	if (!ok)
		return c->why[0] ? false : say(c, "the layer message could not be re-read");
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "loadConstant [%llu,%llu,%llu]", (unsigned long long)sh[2],
		 (unsigned long long)sh[3], (unsigned long long)sh[4]);
	return true;
}

/* Average pooling over non-overlapping K windows (stride = kernel, no padding)
 * is the average of averages over non-overlapping K1 then K2 windows when
 * K = K1 * K2: every element keeps the weight 1/K, and the output sizes agree
 * (floor(floor(H / K1) / K2) = floor(H / K)). The sums are grouped
 * differently, so the last bits may differ (reassociate). Steps of 4 and 2
 * keep each kernel <= 13 and each stride legal (1, 2 or 4): K must be a power
 * of two. Overlapping windows (stride != kernel) weight elements unequally in
 * any cascade of averages: refused. */
static bool p_avgpool(struct pctx *c)
{
	if (!top_level(c))
		return false;
	al_span p = c->src->params, valid;
	uint64_t v = 0, ks[4] = {3, 3}, st[4] = {1, 1};
	if (!pb_get_varint(p, 1, &v) || v != 1)
		return say(c, "%s pooling (the cascade is for average pooling)", v == 2 ? "L2" : "max");
	if (pb_get_varint(p, 60, &v) && v)
		return say(c, "global pooling");
	if (pb_has(p, 31) || pb_has(p, 32) || !pb_get_bytes(p, 30, &valid) || !zero_padding(valid))
		return say(c, "padding is not valid with zero amounts");
	if (pb_has(p, 10) && pb_get_varints(p, 10, ks, 4) != 2)
		return say(c, "kernelSize is not [H, W]");
	if (pb_has(p, 20) && pb_get_varints(p, 20, st, 4) != 2)
		return say(c, "stride is not [H, W]");
	bool legal_st = (st[0] <= 2 || st[0] == 4) && (st[1] <= 2 || st[1] == 4);
	if (ks[0] <= 13 && ks[1] <= 13 && legal_st)
		return say(c, "kernel %llux%llu <= 13 and stride %llux%llu legal already",
			   (unsigned long long)ks[0], (unsigned long long)ks[1], (unsigned long long)st[0],
			   (unsigned long long)st[1]);
	if (ks[0] != st[0] || ks[1] != st[1])
		return say(c, "stride %llux%llu != kernel %llux%llu: overlapping windows weight elements "
			   "unequally in any cascade of averages", (unsigned long long)st[0],
			   (unsigned long long)st[1], (unsigned long long)ks[0], (unsigned long long)ks[1]);
	int e[2] = {log2_exact(ks[0]), log2_exact(ks[1])};
	if (e[0] < 0 || e[1] < 0 || e[0] > 10 || e[1] > 10)
		return say(c, "kernel %llux%llu is not a power of two up to 1024 (steps of 4 and 2 only)",
			   (unsigned long long)ks[0], (unsigned long long)ks[1]);
	if (c->n->n_inputs != 1 || !c->n->inputs[0])
		return say(c, "%u inputs", c->n->n_inputs);
	const struct al_shape *xs = ali_node_in_shape(c->n, 0);
	if (!shape_known(xs) || xs->rank < 3 || xs->dims[xs->rank - 2] < (int64_t)ks[0] ||
	    xs->dims[xs->rank - 1] < (int64_t)ks[1])
		return say(c, "input shape unknown or smaller than the kernel");
	int steps_a[2] = {(e[0] + 1) / 2, (e[1] + 1) / 2};
	int steps = steps_a[0] > steps_a[1] ? steps_a[0] : steps_a[1];
	const char *prev = c->n->inputs[0];
	char desc[96] = "";
	size_t dl = 0;
	for (int i = 0; i < steps; i++) {
		uint64_t k[2];
		for (int a = 0; a < 2; a++) {
			int take = e[a] >= 2 ? 2 : e[a];
			e[a] -= take;
			k[a] = 1u << take;
		}
		if (dl < sizeof desc)
			dl += (size_t)snprintf(desc + dl, sizeof desc - dl, "%s%llux%llu", i ? " + " : "",
					       (unsigned long long)k[0], (unsigned long long)k[1]);
		struct al_buf pp = {0};
		struct pb_iter it;
		struct pb_field f;
		size_t start;
		pb_iter_init(&it, p);
		while ((start = it.pos, pb_next(&it, &f)))
			if (f.num != 10 && f.num != 20)
				ali_buf_put(&pp, p.p + start, it.pos - start);
		ali_buf_packed(&pp, 10, k, 2);
		ali_buf_packed(&pp, 20, k, 2);
		if (it.err || pp.failed) {
			ali_buf_free(&pp);
			return say(c, "the pooling message could not be re-read");
		}
		if (!chain_step(c, i == steps - 1, i == 0, "avg", F_POOLING, &pp, &prev))
			return false;
	}
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "average pools %s (stride = kernel)", desc);
	return true;
}

/* ------------------------------------------------------------------ ML Program passes
 * (surgery_mil.c fills an al_mil_pass; its results are copied into c) */

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

/* The table's ML Program rows: each runs its surgery_mil.c pass through mil_pass. */
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

/* The NeuralNetwork recurrent rows: src/rewrite/passes/nn_recurrent.c, run
 * through mil_pass (the same pass context; they append nothing to weight.bin). */
MIL_ROW(p_nn_lstm, ali_pass_nn_lstm_unroll)
MIL_ROW(p_nn_bilstm, ali_pass_nn_bilstm_unroll)
MIL_ROW(p_nn_gru, ali_pass_nn_gru_unroll)
MIL_ROW(p_nn_expand_const, ali_pass_nn_expand_const)

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
