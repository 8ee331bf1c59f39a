/* SPDX-License-Identifier: MIT */
/* nn_recurrent.c: the NeuralNetwork recurrent layers (ANE002) unrolled into
 * Core ML 2 layers the rules put on the ANE: nn-lstm-unroll
 * (uniDirectionalLSTM, forward or reverseInput), nn-bilstm-unroll
 * (biDirectionalLSTM) and nn-gru-unroll (gru, forward or reverseInput)
 * (docs/surgery.md "NeuralNetwork recurrent layers"). Rows in surgery.c's
 * pass table; run through its mil_pass (they append nothing to weight.bin).
 *
 * The input is rank 5 [T, 1, I, 1, 1]; the sequence axis is reached by a
 * permute, not by the general-rank sliceStatic / squeeze (ANE007):
 *   ax  = innerProduct(x, W_x, b)       [T, 1, G, 1, 1]  (once, as the
 *   axp = permute(ax, [2, 1, 0, 3])     [1, 1, G, T, 1]   kernel's gemm)
 * and each step takes its height slice t. NeuralNetwork layers cannot share
 * weights: every step's recurrent innerProduct carries its own copy of W_h
 * (the file grows by (T - 1) x G x H values: capped). A reverseInput layer
 * runs the same steps from t = T - 1 down to 0; its sequence output keeps
 * each h at its position t, as the interpreter's kernels write it. The terms
 * are the interpreter's kernels' (src/interp/kernels_rnn.c) in the same
 * order; reassociate, as the matrix kernels' summation order may differ.
 * Batch 1, default activations, fp32 or fp16 weights. */
#include "passes.h"
#include "coreml_fields.h"

#include <string.h>

/* field names, shortened (src/format/coreml_fields.h) */
#define WP(f) AL_PB_WeightParams_##f
#define LSTMW(f) AL_PB_LSTMWeightParams_##f
#define LSTMP(f) AL_PB_LSTMParams_##f
#define GRU(f) AL_PB_GRULayerParams_##f

/* NeuralNetworkLayer fields, and the layer types these passes emit. */
enum { L_NAME = 1, L_INPUT = 2, L_OUTPUT = 3, NN_LAYERS = 1 };
enum { F_ACTIVATION = 130, F_INNER_PRODUCT = 140, F_UNARY = 220, F_ADD = 230, F_MULTIPLY = 231,
       F_RESHAPE = 300, F_PERMUTE = 310, F_CONCAT = 320, F_SPLIT = 330, F_SLICE = 350 };
/* ActivationParams: tanh 30, sigmoid 40, sigmoidHard 41 */
enum { ACT_TANH = 30, ACT_SIGMOID = 40, ACT_SIGMOID_HARD = 41 };

/* At most 64 steps (#31: the fixed lengths of text models): a step is 14
 * (GRU) to 17 (LSTM) layers, each waiting for the one before, so the layer
 * count and the chain grow with T; every step copies W_h (NN_RNN_MAX_COPY
 * bounds the bytes added). A bidirectional 64-step LSTM is 2182 layers, under
 * AL_PASS_MAX_NAMES. */
#define NN_RNN_MAX_STEPS 64
#define NN_RNN_MAX_COPY (32u << 20) /* bytes of recurrent weights copied into the steps */

static bool nn_top_level(struct al_mil_pass *c)
{
	if (c->n->owner->depth != 0)
		return ali_mil_say(c, "layer in a nested network (branch / loop body)");
	if (!c->src->msg.p || !c->src->params.p)
		return ali_mil_say(c, "no layer message");
	return true;
}

/* One new layer: c->layer when last (it replaces the layer), else a layer before it. */
static bool nn_emit(struct al_mil_pass *c, bool last, const char *name, const char *const *ins, int n_in,
		    const char *const *outs, int n_out, uint32_t field, const struct al_buf *prm)
{
	return ali_nn_emit(c, last, name, ins, (uint32_t)n_in, outs, (uint32_t)n_out, field, prm);
}

/* The n WeightParams fields f[] of w stacked into one WeightParams (same
 * format, fp32 floatValue 1 or fp16 float16Value 2, each `each` values). */
static bool nn_stack(struct al_mil_pass *c, al_span w, const uint32_t *f, int n, size_t each, struct al_buf *out)
{
	int fmt = 0;
	struct al_buf v = {0};
	for (int g = 0; g < n; g++) {
		al_span wp, d;
		if (!pb_get_bytes(w, f[g], &wp))
			return ali_buf_free(&v), ali_mil_say(c, "weight field %u is missing", f[g]);
		int k = pb_get_bytes(wp, WP(floatValue), &d) && d.n ? WP(floatValue)
			: pb_get_bytes(wp, WP(float16Value), &d) && d.n ? WP(float16Value) : 0;
		if (!k || pb_has(wp, WP(rawValue)) || pb_has(wp, WP(int8RawValue)) || pb_has(wp, WP(quantization)) ||
		    (fmt && k != fmt))
			return ali_buf_free(&v),
			       ali_mil_say(c, "weights quantized, raw or of mixed formats (fp32 / fp16 only)");
		fmt = k;
		if (d.n != each * (k == WP(floatValue) ? 4u : 2u))
			return ali_buf_free(&v),
			       ali_mil_say(c, "weight field %u holds %zu bytes, not %zu values", f[g], d.n, each);
		ali_buf_put(&v, d.p, d.n);
	}
	ali_buf_len(out, (uint32_t)fmt, v.p, v.n);
	out->failed |= v.failed;
	ali_buf_free(&v);
	return true;
}

static void act_params(struct al_buf *a, uint32_t which)
{
	ali_buf_len(a, which, NULL, 0); /* ActivationParams.{tanh 30, sigmoid 40} {} */
}

/* The gates' activation: sigmoid, or sigmoidHard (alpha x + beta clamped to
 * [0, 1]; unset: 0.2, 0.5, as coremltools computes it and the interpreter's
 * recurrent kernels apply it). */
struct gate_act {
	uint32_t which; /* ACT_SIGMOID or ACT_SIGMOID_HARD */
	float alpha, beta;
};

/* The activations of list field `field` of p are exactly want[0..n), the
 * first (the gates') a sigmoid or a sigmoidHard whose [-50, 50] input clip
 * (NeuralNetwork.proto) cannot show; *gate gets it. */
static bool nn_acts(struct al_mil_pass *c, al_span p, uint32_t field, const uint32_t *want, int n,
		    struct gate_act *gate)
{
	struct pb_iter it;
	struct pb_field f;
	int na = 0;
	pb_iter_init(&it, p);
	while (pb_next(&it, &f)) {
		if (f.num != field || f.wire != PB_LEN)
			continue;
		struct pb_iter ai;
		struct pb_field af;
		pb_iter_init(&ai, f.data);
		bool got = na < n && pb_next(&ai, &af);
		if (got && na == 0 && af.num == ACT_SIGMOID_HARD && af.wire == PB_LEN) {
			float a = 0, b = 0;
			(void)pb_get_float(af.data, AL_PB_ActivationSigmoidHard_alpha, &a);
			(void)pb_get_float(af.data, AL_PB_ActivationSigmoidHard_beta, &b);
			if (a == 0 && b == 0)
				a = 0.2f, b = 0.5f;
			if (!(b >= 0 && b <= 1 && (a >= 0.02f || a <= -0.02f) && a < 1e30f && a > -1e30f))
				return ali_mil_say(c, "sigmoidHard alpha %g beta %g: Core ML's [-50, 50] input clip "
						   "would show", (double)a, (double)b);
			*gate = (struct gate_act){ACT_SIGMOID_HARD, a, b};
		} else if (got && af.num == want[na]) {
			if (na == 0)
				*gate = (struct gate_act){ACT_SIGMOID, 0, 0};
		} else {
			return ali_mil_say(c, n == 3 ? "activations other than sigmoid (or sigmoidHard), tanh, tanh"
						      : "activations other than sigmoid (or sigmoidHard), tanh");
		}
		na++;
	}
	if (na != n)
		return ali_mil_say(c, "%d activations (%d expected)", na, n);
	return true;
}

/* The [T, 1, I, 1, 1] input of a batch-1 static sequence, T its steps. */
static bool nn_seq_input(struct al_mil_pass *c, uint64_t I, int64_t *T)
{
	const struct al_shape *xs = ali_node_in_shape(c->n, 0);
	if (!ali_nn_shape_static(xs) || xs->rank != 5 || xs->dims[1] != 1 || xs->dims[2] != (int64_t)I ||
	    xs->dims[3] != 1 || xs->dims[4] != 1)
		return ali_mil_say(c, "the input is not a static [T, 1, %llu, 1, 1] (batch 1 only)",
				   (unsigned long long)I);
	*T = xs->dims[0];
	if (*T < 1 || *T > NN_RNN_MAX_STEPS)
		return ali_mil_say(c, "%lld steps: at most %d are unrolled (14 to 17 layers a step, each step "
				   "waiting for the one before)", (long long)*T, NN_RNN_MAX_STEPS);
	return true;
}

/* innerProduct(in; w [rows x cols], b) then, when perm, its permute to [1, 1, rows, T, 1]. */
static bool nn_ip(struct al_mil_pass *c, const char *name, const char *in, uint64_t cols, uint64_t rows,
		  const struct al_buf *w, const struct al_buf *b)
{
	struct al_buf prm = {0};
	ali_buf_uint(&prm, AL_PB_InnerProductLayerParams_inputChannels, cols);
	ali_buf_uint(&prm, AL_PB_InnerProductLayerParams_outputChannels, rows);
	if (b && b->n)
		ali_buf_uint(&prm, AL_PB_InnerProductLayerParams_hasBias, 1);
	ali_buf_len(&prm, AL_PB_InnerProductLayerParams_weights, w->p, w->n);
	if (b && b->n)
		ali_buf_len(&prm, AL_PB_InnerProductLayerParams_bias, b->p, b->n);
	bool ok = nn_emit(c, false, name, &in, 1, &name, 1, F_INNER_PRODUCT, &prm);
	ali_buf_free(&prm);
	return ok;
}

static bool nn_permute_seq(struct al_mil_pass *c, const char *name, const char *in)
{
	struct al_buf prm = {0};
	uint64_t perm[4] = {2, 1, 0, 3};
	ali_buf_packed(&prm, 1, perm, 4);
	bool ok = nn_emit(c, false, name, &in, 1, &name, 1, F_PERMUTE, &prm);
	ali_buf_free(&prm);
	return ok;
}

/* The height slice t of a permuted projection. */
static bool nn_slice_step(struct al_mil_pass *c, const char *name, const char *in, int64_t t)
{
	struct al_buf prm = {0};
	ali_buf_uint(&prm, 1, (uint64_t)t);
	ali_buf_uint(&prm, 2, (uint64_t)t + 1);
	ali_buf_uint(&prm, 3, 1);
	ali_buf_uint(&prm, 4, 1); /* HEIGHT_AXIS */
	bool ok = nn_emit(c, false, name, &in, 1, &name, 1, F_SLICE, &prm);
	ali_buf_free(&prm);
	return ok;
}

static bool nn_act(struct al_mil_pass *c, const char *name, const char *in, uint32_t which)
{
	struct al_buf prm = {0};
	act_params(&prm, which);
	bool ok = nn_emit(c, false, name, &in, 1, &name, 1, F_ACTIVATION, &prm);
	ali_buf_free(&prm);
	return ok;
}

static bool nn_gate(struct al_mil_pass *c, const char *name, const char *in, const struct gate_act *g)
{
	if (g->which == ACT_SIGMOID)
		return nn_act(c, name, in, ACT_SIGMOID);
	struct al_buf prm = {0}, sh = {0};
	ali_buf_float(&sh, AL_PB_ActivationSigmoidHard_alpha, g->alpha);
	ali_buf_float(&sh, AL_PB_ActivationSigmoidHard_beta, g->beta);
	ali_buf_len(&prm, ACT_SIGMOID_HARD, sh.p, sh.n);
	prm.failed |= sh.failed;
	bool ok = nn_emit(c, false, name, &in, 1, &name, 1, F_ACTIVATION, &prm);
	ali_buf_free(&sh);
	ali_buf_free(&prm);
	return ok;
}

static bool nn_binary(struct al_mil_pass *c, const char *name, const char *a, const char *b, uint32_t field)
{
	const char *in[2] = {a, b};
	return nn_emit(c, false, name, in, 2, &name, 1, field, NULL);
}

/* One direction of a recurrent layer being unrolled. */
struct nn_chain {
	const char *pfx;           /* name prefix of its layers ("", "f_", "b_") */
	bool reverse;              /* steps from t = T - 1 down to 0 */
	const char *h0, *c0;       /* initial states, or NULL (zeros) */
	const char *h_out, *c_out; /* names of the final h / c (layer outputs), or NULL */
	const char **hs;           /* [T]: h at each position t */
	const char *h_last;        /* the final h */
	struct gate_act gate;      /* the gates' activation */
};

/* Name helper for the chain emitters: a fresh name base__<pfx><suffix>. */
#define NNM(var, ...)                                                                                    \
	snprintf(sfx, sizeof sfx, __VA_ARGS__);                                                          \
	const char *var = ali_nn_fresh(c, c->n->name, sfx);                                              \
	if (!var)                                                                                        \
		return ali_mil_say(c, "no free name");

/* ------------------------------------------------------------------ LSTM */

/* One direction's stacked weights, gate order i, f, o, z. */
struct lstm_w {
	struct al_buf wx, wh, bb;
};

static void lstm_w_free(struct lstm_w *w)
{
	ali_buf_free(&w->wx);
	ali_buf_free(&w->wh);
	ali_buf_free(&w->bb);
}

/* LSTMWeightParams w: its matrices and biases stacked in the order input, forget, output, block input. */
static bool lstm_weights(struct al_mil_pass *c, al_span w, uint64_t I, uint64_t H, bool hasb, struct lstm_w *o)
{
	static const uint32_t fx[4] = {LSTMW(inputGateWeightMatrix), LSTMW(forgetGateWeightMatrix),
					LSTMW(outputGateWeightMatrix), LSTMW(blockInputWeightMatrix)};
	static const uint32_t fh[4] = {LSTMW(inputGateRecursionMatrix), LSTMW(forgetGateRecursionMatrix),
					LSTMW(outputGateRecursionMatrix), LSTMW(blockInputRecursionMatrix)};
	static const uint32_t fb[4] = {LSTMW(inputGateBiasVector), LSTMW(forgetGateBiasVector),
					LSTMW(outputGateBiasVector), LSTMW(blockInputBiasVector)};
	return nn_stack(c, w, fx, 4, (size_t)(H * I), &o->wx) && nn_stack(c, w, fh, 4, (size_t)(H * H), &o->wh) &&
	       (!hasb || nn_stack(c, w, fb, 4, (size_t)H, &o->bb));
}

/* The steps of one LSTM direction: per step g = slice(axp, t) + innerProduct(h,
 * W_h); split into 4; sigmoid i, f, o; tanh z; c = clip(f * c + i * z) (the
 * clip as max(c, -L), -1 *, max(., -L), -1 *: exact); h = o * tanh(c). */
static bool lstm_chain(struct al_mil_pass *c, const struct lstm_w *w, int64_t T, uint64_t I, uint64_t H,
		       float clip, struct nn_chain *ch)
{
	char sfx[48];
	const char *p = ch->pfx;
	NNM(ax, "%sax", p) NNM(axp, "%saxp", p)
	if (!nn_ip(c, ax, c->n->inputs[0], I, 4 * H, &w->wx, &w->bb) || !nn_permute_seq(c, axp, ax))
		return false;
	const char *hcur = ch->h0, *ccur = ch->c0;
	struct al_buf prm = {0};
	for (int64_t s = 0; s < T; s++) {
		int64_t t = ch->reverse ? T - 1 - s : s;
		long long tl = (long long)t;
		bool lastt = s == T - 1;
		NNM(xt, "%st%lld_x", p, tl) NNM(gh, "%st%lld_gh", p, tl) NNM(g, "%st%lld_g", p, tl)
		NNM(gi, "%st%lld_gi", p, tl) NNM(gf, "%st%lld_gf", p, tl) NNM(go, "%st%lld_go", p, tl)
		NNM(gz, "%st%lld_gz", p, tl) NNM(ig, "%st%lld_i", p, tl) NNM(fg, "%st%lld_f", p, tl)
		NNM(og, "%st%lld_o", p, tl) NNM(zg, "%st%lld_z", p, tl) NNM(fc, "%st%lld_fc", p, tl)
		NNM(iz, "%st%lld_iz", p, tl) NNM(cs, "%st%lld_cs", p, tl) NNM(k1, "%st%lld_k1", p, tl)
		NNM(k2, "%st%lld_k2", p, tl) NNM(k3, "%st%lld_k3", p, tl) NNM(tc, "%st%lld_tc", p, tl)
		const char *cn = lastt ? ch->c_out : NULL, *hn = lastt ? ch->h_out : NULL;
		if (!cn) {
			NNM(cx, "%st%lld_c", p, tl)
			cn = cx;
		}
		if (!hn) {
			NNM(hx, "%st%lld_h", p, tl)
			hn = hx;
		}
		bool ok = nn_slice_step(c, xt, axp, t);
		const char *gates_in = xt;
		if (ok && hcur) {
			ok = nn_ip(c, gh, hcur, H, 4 * H, &w->wh, NULL) && nn_binary(c, g, xt, gh, F_ADD);
			gates_in = g;
		}
		const char *four[4] = {gi, gf, go, gz};
		ali_buf_uint(&prm, 1, 4);
		ok = ok && nn_emit(c, false, gi, &gates_in, 1, four, 4, F_SPLIT, &prm);
		ali_buf_free(&prm);
		ok = ok && nn_gate(c, ig, gi, &ch->gate) && nn_gate(c, fg, gf, &ch->gate) &&
		     nn_gate(c, og, go, &ch->gate) && nn_act(c, zg, gz, ACT_TANH);
		/* c = clip(f * c + i * z): with no c0 the first c is i * z (f * 0 + i * z) */
		const char *sum = iz;
		ok = ok && nn_binary(c, iz, ig, zg, F_MULTIPLY);
		if (ok && ccur) {
			ok = nn_binary(c, fc, fg, ccur, F_MULTIPLY) && nn_binary(c, cs, fc, iz, F_ADD);
			sum = cs;
		}
		const char *chain[5] = {sum, k1, k2, k3, cn};
		for (int k = 0; ok && k < 4; k++) {
			if (k % 2 == 0) { /* UnaryFunction THRESHOLD: max(x, -clip) */
				ali_buf_uint(&prm, AL_PB_UnaryFunctionLayerParams_type, 7); /* THRESHOLD */
				ali_buf_float(&prm, AL_PB_UnaryFunctionLayerParams_alpha, -clip);
				ali_buf_float(&prm, AL_PB_UnaryFunctionLayerParams_scale, 1.0f);
				ok = nn_emit(c, false, chain[k + 1], &chain[k], 1, &chain[k + 1], 1, F_UNARY, &prm);
			} else { /* -x, exactly */
				ali_nn_linear_params(&prm, -1.0f);
				ok = nn_emit(c, false, chain[k + 1], &chain[k], 1, &chain[k + 1], 1, F_ACTIVATION, &prm);
			}
			ali_buf_free(&prm);
		}
		ok = ok && nn_act(c, tc, cn, ACT_TANH) && nn_binary(c, hn, og, tc, F_MULTIPLY);
		if (!ok)
			return false;
		hcur = hn, ccur = cn, ch->hs[t] = hn;
	}
	ch->h_last = hcur;
	return true;
}

/* LSTMParams (the layer's `params`): what is unrolled, and the cell clip. */
static bool lstm_params(struct al_mil_pass *c, al_span lp, bool *seq, bool *hasb, float *clip)
{
	uint64_t v;
	*seq = pb_get_varint(lp, LSTMP(sequenceOutput), &v) && v;
	*hasb = pb_get_varint(lp, LSTMP(hasBiasVectors), &v) && v;
	if ((pb_get_varint(lp, LSTMP(forgetBias), &v) && v) || (pb_get_varint(lp, LSTMP(hasPeepholeVectors), &v) && v) ||
	    (pb_get_varint(lp, LSTMP(coupledInputAndForgetGate), &v) && v))
		return ali_mil_say(c, "forgetBias, peepholes or coupled gates: not unrolled");
	*clip = 0;
	if (!pb_get_float(lp, LSTMP(cellClipThreshold), clip) || *clip == 0)
		*clip = 50.0f; /* NeuralNetwork.proto's default, as the interpreter applies it */
	if (!(*clip > 0) || *clip > 1e30f)
		return ali_mil_say(c, "cellClipThreshold %g", (double)*clip);
	return true;
}

/* The sequence output: every h in position order (pairs of directions
 * interleaved: h_f(t), h_b(t)), concatenated on channels and reshaped to
 * [T, width, 1, 1]; a concat takes at least 2 inputs (Core ML's validator):
 * a single h is reshaped as it is. The last layer (it replaces the layer). */
static bool nn_seq_output(struct al_mil_pass *c, const char *const *hs, int n, int64_t T, uint64_t width)
{
	char sfx[48];
	struct al_buf prm = {0};
	const char *cat = hs[0];
	if (n > 1) {
		NNM(catn, "seq")
		cat = catn;
		if (!nn_emit(c, false, cat, hs, n, &cat, 1, F_CONCAT, NULL))
			return false;
	}
	uint64_t shp[4] = {(uint64_t)T, width, 1, 1};
	ali_buf_packed(&prm, 1, shp, 4);
	bool ok = nn_emit(c, true, c->n->name, &cat, 1, &c->n->outputs[0], 1, F_RESHAPE, &prm);
	ali_buf_free(&prm);
	return ok;
}

/* A copy of h as the layer's output 0 (linear 1 x + -0.0, exact). */
static bool nn_last_output(struct al_mil_pass *c, const char *h)
{
	struct al_buf prm = {0};
	ali_nn_linear_params(&prm, 1.0f);
	bool ok = nn_emit(c, true, c->n->name, &h, 1, &c->n->outputs[0], 1, F_ACTIVATION, &prm);
	ali_buf_free(&prm);
	return ok;
}

/* Whether the rewrite is only reported (--allow below reassociate): nothing built. */
static bool report_only(const struct al_mil_pass *c)
{
	return c->s->opts && c->s->opts->allow < AL_EQ_REASSOCIATE;
}

/* UniDirectionalLSTMLayerParams: inputVectorSize 1, outputVectorSize 2,
 * activations 10, params 15, weightParams 20, reverseInput 100. In: x, or x,
 * h0, c0. Out: y, h, c. */
bool ali_pass_nn_lstm_unroll(struct al_mil_pass *c)
{
	if (!c->src || !c->src->sub || c->src->sub->world != AL_WORLD_NN)
		return false;
	if (!nn_top_level(c))
		return false;
	al_span p = c->src->params, lp = {0}, wp;
	uint64_t I = 0, H = 0, v;
	pb_get_varint(p, AL_PB_UniDirectionalLSTMLayerParams_inputVectorSize, &I);
	pb_get_varint(p, AL_PB_UniDirectionalLSTMLayerParams_outputVectorSize, &H);
	bool reverse = pb_get_varint(p, AL_PB_UniDirectionalLSTMLayerParams_reverseInput, &v) && v;
	(void)pb_get_bytes(p, AL_PB_UniDirectionalLSTMLayerParams_params, &lp);
	if (!pb_get_bytes(p, AL_PB_UniDirectionalLSTMLayerParams_weightParams, &wp))
		return ali_mil_say(c, "no weightParams");
	static const uint32_t want[3] = {ACT_SIGMOID, ACT_TANH, ACT_TANH};
	bool seq, hasb;
	float clip;
	int64_t T;
	struct gate_act gate;
	if (!nn_acts(c, p, AL_PB_UniDirectionalLSTMLayerParams_activations, want, 3, &gate) ||
	    !lstm_params(c, lp, &seq, &hasb, &clip))
		return false;
	if (c->n->n_inputs != 1 && c->n->n_inputs != 3)
		return ali_mil_say(c, "%u inputs (x, or x, h0, c0)", c->n->n_inputs);
	if (!nn_seq_input(c, I, &T))
		return false;
	if (I < 1 || H < 1 || 4 * H > 16384 || I > (1u << 24))
		return ali_mil_say(c, "sizes I %llu, H %llu (4H <= 16384, I <= 2^24)", (unsigned long long)I,
				   (unsigned long long)H);
	struct lstm_w w;
	memset(&w, 0, sizeof w);
	bool h0 = c->n->n_inputs == 3;
	size_t copies = (size_t)(h0 ? T : T - 1);
	bool ok = lstm_weights(c, wp, I, H, hasb, &w);
	if (ok && w.wh.n * copies > NN_RNN_MAX_COPY)
		ok = ali_mil_say(c, "%zu recurrent weight copies of %zu KB: more than 32 MB would be added", copies,
				 w.wh.n >> 10);
	if (ok && report_only(c)) {
		snprintf(c->after, sizeof c->after, "%lld %ssteps of innerProduct + activation + add / multiply "
			 "(permute, slice; %lld layers)", (long long)T, reverse ? "reverse " : "",
			 (long long)(T * 17 + 3));
		lstm_w_free(&w);
		return true;
	}
	const char **hs = ok ? ali_arena_array(&c->s->arena, (size_t)T, sizeof *hs) : NULL;
	if (ok && !hs)
		ok = ali_mil_say(c, "out of memory");
	struct nn_chain ch = {
		.pfx = "", .reverse = reverse, .h0 = h0 ? c->n->inputs[1] : NULL, .c0 = h0 ? c->n->inputs[2] : NULL,
		.h_out = c->n->n_outputs > 1 ? c->n->outputs[1] : NULL,
		.c_out = c->n->n_outputs > 2 ? c->n->outputs[2] : NULL, .hs = hs, .gate = gate,
	};
	ok = ok && lstm_chain(c, &w, T, I, H, clip, &ch);
	ok = ok && (seq ? nn_seq_output(c, hs, (int)T, T, H) : nn_last_output(c, ch.h_last));
	lstm_w_free(&w);
	if (ok)
		snprintf(c->after, sizeof c->after, "%lld %ssteps of innerProduct + activation + add / multiply "
			 "(permute, slice; %u layers, W_h copied into %zu steps)", (long long)T,
			 reverse ? "reverse " : "", c->n_names, copies);
	return ok;
}

/* BiDirectionalLSTMLayerParams: inputVectorSize 1, outputVectorSize 2,
 * activationsForwardLSTM 10, activationsBackwardLSTM 11, params 15,
 * weightParams 20 (forward, backward). In: x, or x, h0, c0, or x, h0, c0,
 * h0_back, c0_back. Out: y [T or 1, 1, 2H, 1, 1] (forward then backward h per
 * step), h, c, h_back, c_back. Two chains, the backward one reversed. */
bool ali_pass_nn_bilstm_unroll(struct al_mil_pass *c)
{
	if (!c->src || !c->src->sub || c->src->sub->world != AL_WORLD_NN)
		return false;
	if (!nn_top_level(c))
		return false;
	al_span p = c->src->params, lp = {0}, wd[2] = {{0}, {0}};
	uint64_t I = 0, H = 0;
	pb_get_varint(p, AL_PB_BiDirectionalLSTMLayerParams_inputVectorSize, &I);
	pb_get_varint(p, AL_PB_BiDirectionalLSTMLayerParams_outputVectorSize, &H);
	(void)pb_get_bytes(p, AL_PB_BiDirectionalLSTMLayerParams_params, &lp);
	{
		struct pb_iter it;
		struct pb_field f;
		int k = 0;
		pb_iter_init(&it, p);
		while (pb_next(&it, &f))
			if (f.num == AL_PB_BiDirectionalLSTMLayerParams_weightParams && f.wire == PB_LEN) {
				if (k >= 2)
					return ali_mil_say(c, "more than 2 weightParams");
				wd[k++] = f.data;
			}
		if (k != 2)
			return ali_mil_say(c, "%d weightParams (forward, backward expected)", k);
	}
	static const uint32_t want[3] = {ACT_SIGMOID, ACT_TANH, ACT_TANH};
	bool seq, hasb;
	float clip;
	int64_t T;
	struct gate_act gate[2];
	if (!nn_acts(c, p, AL_PB_BiDirectionalLSTMLayerParams_activationsForwardLSTM, want, 3, &gate[0]) ||
	    !nn_acts(c, p, AL_PB_BiDirectionalLSTMLayerParams_activationsBackwardLSTM, want, 3, &gate[1]) ||
	    !lstm_params(c, lp, &seq, &hasb, &clip))
		return false;
	uint32_t ni = c->n->n_inputs;
	if (ni != 1 && ni != 3 && ni != 5)
		return ali_mil_say(c, "%u inputs (x, or x with h0, c0, and h0_back, c0_back)", ni);
	if (!nn_seq_input(c, I, &T))
		return false;
	if (I < 1 || H < 1 || 4 * H > 16384 || I > (1u << 24))
		return ali_mil_say(c, "sizes I %llu, H %llu (4H <= 16384, I <= 2^24)", (unsigned long long)I,
				   (unsigned long long)H);
	struct lstm_w w[2];
	memset(w, 0, sizeof w);
	size_t copies = (size_t)(ni >= 3 ? T : T - 1) + (size_t)(ni == 5 ? T : T - 1);
	bool ok = lstm_weights(c, wd[0], I, H, hasb, &w[0]) && lstm_weights(c, wd[1], I, H, hasb, &w[1]);
	if (ok && w[0].wh.n * copies > NN_RNN_MAX_COPY)
		ok = ali_mil_say(c, "%zu recurrent weight copies of %zu KB: more than 32 MB would be added", copies,
				 w[0].wh.n >> 10);
	if (ok && report_only(c)) {
		snprintf(c->after, sizeof c->after, "2 x %lld steps (forward, reverse) of innerProduct + activation "
			 "+ add / multiply (permute, slice, concat; %lld layers)", (long long)T,
			 (long long)(2 * T * 17 + 6));
		lstm_w_free(&w[0]);
		lstm_w_free(&w[1]);
		return true;
	}
	const char **hs = ok ? ali_arena_array(&c->s->arena, (size_t)(2 * T), sizeof *hs) : NULL;
	if (ok && !hs)
		ok = ali_mil_say(c, "out of memory");
	struct nn_chain ch[2];
	for (int d = 0; d < 2; d++) {
		uint32_t hi = 1 + 2 * (uint32_t)d;
		ch[d] = (struct nn_chain){
			.pfx = d ? "b_" : "f_", .reverse = d == 1,
			.h0 = ni > hi ? c->n->inputs[hi] : NULL, .c0 = ni > hi + 1 ? c->n->inputs[hi + 1] : NULL,
			.h_out = c->n->n_outputs > hi ? c->n->outputs[hi] : NULL,
			.c_out = c->n->n_outputs > hi + 1 ? c->n->outputs[hi + 1] : NULL,
			.hs = hs ? hs + d * T : NULL, .gate = gate[d],
		};
		ok = ok && lstm_chain(c, &w[d], T, I, H, clip, &ch[d]);
	}
	if (ok) {
		if (seq) {
			const char **pairs = ali_arena_array(&c->s->arena, (size_t)(2 * T), sizeof *pairs);
			if (!pairs)
				ok = ali_mil_say(c, "out of memory");
			for (int64_t t = 0; ok && t < T; t++)
				pairs[2 * t] = ch[0].hs[t], pairs[2 * t + 1] = ch[1].hs[t];
			ok = ok && nn_seq_output(c, pairs, (int)(2 * T), T, 2 * H);
		} else {
			const char *two[2] = {ch[0].h_last, ch[1].h_last};
			ok = nn_emit(c, true, c->n->name, two, 2, &c->n->outputs[0], 1, F_CONCAT, NULL);
		}
	}
	lstm_w_free(&w[0]);
	lstm_w_free(&w[1]);
	if (ok)
		snprintf(c->after, sizeof c->after, "2 x %lld steps (forward, reverse) of innerProduct + activation "
			 "+ add / multiply (permute, slice, concat; %u layers, W_h copied into %zu steps)",
			 (long long)T, c->n_names, copies);
	return ok;
}

/* ------------------------------------------------------------------ GRU */

/* GRULayerParams: inputVectorSize 1, outputVectorSize 2, activations 10 [f,
 * g], sequenceOutput 15, hasBiasVectors 20, update / reset / output gate
 * weights 30-32, recursions 50-52, biases 70-72, reverseInput 100. In: x, or
 * x, h0. Out: y, h. As NeuralNetwork.proto defines it and the interpreter's
 * ali_gru_run computes it, the reset applies to h before its product:
 *   z = sigmoid(W_z x + b_z + R_z h), r = sigmoid(W_r x + b_r + R_r h)
 *   o = tanh(W_o x + b_o + R_o (r * h)), h = (1 - z) * o + z * h
 * unrolled as: axzr = innerProduct(x, [W_z | W_r], [b_z | b_r]) and axo =
 * innerProduct(x, W_o, b_o), each permuted; per step the slices t, zr =
 * sigmoid(slice + innerProduct(h, [R_z | R_r])) split into z, r; o = tanh(
 * slice + innerProduct(r * h, R_o)); 1 - z as linear(-1 z + 1) (exact);
 * h = (1 - z) * o + z * h. With no h0 the first step drops the h terms (+ 0). */
struct gru_w {
	struct al_buf wzr, wo, rzr, ro, bzr, bo;
};

static void gru_w_free(struct gru_w *w)
{
	ali_buf_free(&w->wzr);
	ali_buf_free(&w->wo);
	ali_buf_free(&w->rzr);
	ali_buf_free(&w->ro);
	ali_buf_free(&w->bzr);
	ali_buf_free(&w->bo);
}

static bool gru_chain(struct al_mil_pass *c, const struct gru_w *w, int64_t T, uint64_t I, uint64_t H,
		      struct nn_chain *ch)
{
	char sfx[48];
	const char *p = ch->pfx;
	NNM(axzr, "%saxzr", p) NNM(axzrp, "%saxzrp", p) NNM(axo, "%saxo", p) NNM(axop, "%saxop", p)
	if (!nn_ip(c, axzr, c->n->inputs[0], I, 2 * H, &w->wzr, &w->bzr) || !nn_permute_seq(c, axzrp, axzr) ||
	    !nn_ip(c, axo, c->n->inputs[0], I, H, &w->wo, &w->bo) || !nn_permute_seq(c, axop, axo))
		return false;
	const char *hcur = ch->h0;
	struct al_buf prm = {0};
	for (int64_t s = 0; s < T; s++) {
		int64_t t = ch->reverse ? T - 1 - s : s;
		long long tl = (long long)t;
		bool lastt = s == T - 1;
		NNM(xzr, "%st%lld_xzr", p, tl) NNM(xo, "%st%lld_xo", p, tl) NNM(ghzr, "%st%lld_ghzr", p, tl)
		NNM(szr, "%st%lld_szr", p, tl) NNM(zr, "%st%lld_zr", p, tl) NNM(z, "%st%lld_z", p, tl)
		NNM(r, "%st%lld_r", p, tl) NNM(omz, "%st%lld_omz", p, tl) NNM(rh, "%st%lld_rh", p, tl)
		NNM(gho, "%st%lld_gho", p, tl) NNM(so, "%st%lld_so", p, tl) NNM(o, "%st%lld_o", p, tl)
		NNM(a, "%st%lld_a", p, tl) NNM(b, "%st%lld_b", p, tl)
		const char *hn = lastt ? ch->h_out : NULL;
		if (!hn) {
			NNM(hx, "%st%lld_h", p, tl)
			hn = hx;
		}
		bool ok = nn_slice_step(c, xzr, axzrp, t) && nn_slice_step(c, xo, axop, t);
		const char *zr_in = xzr, *o_in = xo;
		if (ok && hcur) {
			ok = nn_ip(c, ghzr, hcur, H, 2 * H, &w->rzr, NULL) && nn_binary(c, szr, ghzr, xzr, F_ADD);
			zr_in = szr;
		}
		ok = ok && nn_gate(c, zr, zr_in, &ch->gate);
		const char *two[2] = {z, r};
		ali_buf_uint(&prm, AL_PB_SplitLayerParams_nOutputs, 2);
		ok = ok && nn_emit(c, false, z, &zr, 1, two, 2, F_SPLIT, &prm); /* r unused with no h */
		ali_buf_free(&prm);
		if (ok) { /* 1 - z: -1 * z + 1, exact */
			struct al_buf lin = {0};
			ali_buf_float(&lin, AL_PB_ActivationLinear_alpha, -1.0f);
			ali_buf_float(&lin, AL_PB_ActivationLinear_beta, 1.0f);
			ali_buf_len(&prm, AL_PB_ActivationParams_linear, lin.p, lin.n);
			prm.failed |= lin.failed;
			ali_buf_free(&lin);
			ok = nn_emit(c, false, omz, &z, 1, &omz, 1, F_ACTIVATION, &prm);
			ali_buf_free(&prm);
		}
		if (ok && hcur) {
			ok = nn_binary(c, rh, r, hcur, F_MULTIPLY) && nn_ip(c, gho, rh, H, H, &w->ro, NULL) &&
			     nn_binary(c, so, gho, xo, F_ADD);
			o_in = so;
		}
		ok = ok && nn_act(c, o, o_in, ACT_TANH);
		if (ok && hcur)
			ok = nn_binary(c, a, omz, o, F_MULTIPLY) && nn_binary(c, b, z, hcur, F_MULTIPLY) &&
			     nn_binary(c, hn, a, b, F_ADD);
		else
			ok = ok && nn_binary(c, hn, omz, o, F_MULTIPLY);
		if (!ok)
			return false;
		hcur = hn, ch->hs[t] = hn;
	}
	ch->h_last = hcur;
	return true;
}

bool ali_pass_nn_gru_unroll(struct al_mil_pass *c)
{
	if (!c->src || !c->src->sub || c->src->sub->world != AL_WORLD_NN)
		return false;
	if (!nn_top_level(c))
		return false;
	al_span p = c->src->params;
	uint64_t I = 0, H = 0, v;
	pb_get_varint(p, GRU(inputVectorSize), &I);
	pb_get_varint(p, GRU(outputVectorSize), &H);
	bool reverse = pb_get_varint(p, GRU(reverseInput), &v) && v;
	bool seq = pb_get_varint(p, GRU(sequenceOutput), &v) && v, hasb = pb_get_varint(p, GRU(hasBiasVectors), &v) && v;
	static const uint32_t want[2] = {ACT_SIGMOID, ACT_TANH};
	int64_t T;
	struct gate_act gate;
	if (!nn_acts(c, p, GRU(activations), want, 2, &gate))
		return false;
	if (c->n->n_inputs != 1 && c->n->n_inputs != 2)
		return ali_mil_say(c, "%u inputs (x, or x, h0)", c->n->n_inputs);
	if (!nn_seq_input(c, I, &T))
		return false;
	if (I < 1 || H < 1 || 3 * H > 16384 || I > (1u << 24))
		return ali_mil_say(c, "sizes I %llu, H %llu (3H <= 16384, I <= 2^24)", (unsigned long long)I,
				   (unsigned long long)H);
	/* update 30 / 50 / 70, reset 31 / 51 / 71, output 32 / 52 / 72 */
	static const uint32_t fzr[2] = {GRU(updateGateWeightMatrix), GRU(resetGateWeightMatrix)};
	static const uint32_t fo[1] = {GRU(outputGateWeightMatrix)};
	static const uint32_t rzr[2] = {GRU(updateGateRecursionMatrix), GRU(resetGateRecursionMatrix)};
	static const uint32_t ro[1] = {GRU(outputGateRecursionMatrix)};
	static const uint32_t bzr[2] = {GRU(updateGateBiasVector), GRU(resetGateBiasVector)};
	static const uint32_t bo[1] = {GRU(outputGateBiasVector)};
	struct gru_w w;
	memset(&w, 0, sizeof w);
	size_t hi = (size_t)(H * I), hh = (size_t)(H * H);
	bool ok = nn_stack(c, p, fzr, 2, hi, &w.wzr) && nn_stack(c, p, fo, 1, hi, &w.wo) &&
		  nn_stack(c, p, rzr, 2, hh, &w.rzr) && nn_stack(c, p, ro, 1, hh, &w.ro) &&
		  (!hasb || (nn_stack(c, p, bzr, 2, (size_t)H, &w.bzr) && nn_stack(c, p, bo, 1, (size_t)H, &w.bo)));
	bool h0 = c->n->n_inputs == 2;
	size_t copies = (size_t)(h0 ? T : T - 1);
	if (ok && (w.rzr.n + w.ro.n) * copies > NN_RNN_MAX_COPY)
		ok = ali_mil_say(c, "%zu recurrent weight copies of %zu KB: more than 32 MB would be added", copies,
				 (w.rzr.n + w.ro.n) >> 10);
	if (ok && report_only(c)) {
		snprintf(c->after, sizeof c->after, "%lld %ssteps of innerProduct + activation + add / multiply "
			 "(permute, slice; %lld layers)", (long long)T, reverse ? "reverse " : "",
			 (long long)(T * 14 + 5));
		gru_w_free(&w);
		return true;
	}
	const char **hs = ok ? ali_arena_array(&c->s->arena, (size_t)T, sizeof *hs) : NULL;
	if (ok && !hs)
		ok = ali_mil_say(c, "out of memory");
	struct nn_chain ch = {
		.pfx = "", .reverse = reverse, .h0 = h0 ? c->n->inputs[1] : NULL,
		.h_out = c->n->n_outputs > 1 ? c->n->outputs[1] : NULL, .hs = hs, .gate = gate,
	};
	ok = ok && gru_chain(c, &w, T, I, H, &ch);
	ok = ok && (seq ? nn_seq_output(c, hs, (int)T, T, H) : nn_last_output(c, ch.h_last));
	gru_w_free(&w);
	if (ok)
		snprintf(c->after, sizeof c->after, "%lld %ssteps of innerProduct + activation + add / multiply "
			 "(permute, slice; %u layers, R copied into %zu steps)", (long long)T,
			 reverse ? "reverse " : "", c->n_names, copies);
	return ok;
}
#undef NNM
