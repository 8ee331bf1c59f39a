/* SPDX-License-Identifier: MIT */
/* interp_nn_rnn.c: the NeuralNetwork recurrent layers: simpleRecurrent, gru,
 * uniDirectionalLSTM and biDirectionalLSTM, on [Seq, Batch, inputVectorSize, 1, 1]
 * blobs with optional initial states [1, Batch, outputVectorSize, 1, 1].
 *
 * The per-gate weight matrices are gathered into the kernels' layouts (kernels.h
 * ali_lstm_run: gates i, f, o, z; ali_gru_run: z, r, o with the reset applied before
 * the recurrent product, as NeuralNetwork.proto defines the GRU) and run by the
 * kernels. NeuralNetwork.proto clips every gate's pre-activation to [-50, 50]: that
 * changes nothing for the saturating activations and is folded into identity and
 * ReLU; the other activations are unsupported rather than silently different
 * (rnn_act, which also gives parameterless activations their standard values).
 */
#include "interp_nn.h"
#include "nn_params.h"

#include <math.h>
#include <string.h>

/* The layer's input sizes: x [T, B, I, 1, 1] with I = inputVectorSize. */
struct rnn_shape {
	int64_t T, B, I, H;
};

static enum al_status rnn_shape(struct nn_layer *l, struct rnn_shape *s)
{
	const struct al_tensor *x = l->in[0];
	struct al_nn_recurrent r;
	ali_nn_recurrent(l->n, &r);
	uint64_t in = al_pb_or(r.input_vector_size, 0), out = al_pb_or(r.output_vector_size, 0);
	if (x->rank != 5 || x->dims[3] != 1 || x->dims[4] != 1) {
		char b[160];
		return nn_fail(l, AL_E_FORMAT, "input of shape %s; it takes [Seq, Batch, %llu, 1, 1]",
			       nn_dims_str(b, sizeof b, x->rank, x->dims), (unsigned long long)in);
	}
	if ((uint64_t)x->dims[2] != in)
		return nn_fail(l, AL_E_FORMAT, "input vectors of %lld; inputVectorSize is %llu",
			       (long long)x->dims[2], (unsigned long long)in);
	if (out < 1 || out > (UINT64_C(1) << 24))
		return nn_fail(l, AL_E_FORMAT, "outputVectorSize %llu", (unsigned long long)out);
	s->T = x->dims[0], s->B = x->dims[1], s->I = x->dims[2], s->H = (int64_t)out;
	return AL_OK;
}

/* State input i ([1, B, H, 1, 1], or any shape of B*H values) into buf, else zeros. */
static enum al_status rnn_state(struct nn_layer *l, uint32_t i, const struct rnn_shape *s, float *buf)
{
	size_t n = (size_t)(s->B * s->H);
	if (i >= l->n_in) {
		memset(buf, 0, n * sizeof *buf);
		return AL_OK;
	}
	if (l->in[i]->n != n)
		return nn_fail(l, AL_E_FORMAT, "initial state %u has %zu values; [1, %lld, %lld, 1, 1] needs "
			       "%zu", i, l->in[i]->n, (long long)s->B, (long long)s->H, n);
	memcpy(buf, l->in[i]->f, n * sizeof *buf);
	return AL_OK;
}

/* A scratch buffer of n floats counted against the run's budget (a tensor), or
 * NULL with a diagnostic; release with ali_tensor_unref(*t). */
static float *scratch(struct nn_layer *l, int64_t n, struct al_tensor **t)
{
	*t = nn_alloc(l, 1, &n);
	return *t ? (*t)->f : NULL;
}

/* out[o] = [rows, B, width, 1, 1] copied from src. */
static enum al_status rnn_out(struct nn_layer *l, uint32_t o, int64_t rows, int64_t B, int64_t width,
			      const float *src)
{
	if (o >= l->n_out)
		return AL_OK;
	int64_t d[5] = {rows, B, width, 1, 1};
	struct al_tensor *t = nn_alloc(l, 5, d);
	if (!t)
		return AL_E_NOMEM;
	memcpy(t->f, src, t->n * sizeof *t->f);
	l->out[o] = t;
	return AL_OK;
}

/* A recurrent gate activation. coremltools writes them without parameters (an empty
 * linear / sigmoidHard / scaledTanh message), and its own recurrent tests compute
 * them with the standard values (identity, 0.2 x + 0.5, tanh), so absent
 * parameters take those. NeuralNetwork.proto clips each gate's input to [-50, 50]:
 * folded in exactly (identity and ReLU become clamps; the saturating activations do
 * not change), and a parameter set where the clip would show and cannot be folded
 * is unsupported rather than silently different. */
static enum al_status rnn_act(struct nn_layer *l, al_span act, struct al_rnn_acts *op)
{
	const char *name;
	if (!nn_activation_op(act, op, &name))
		return nn_unsupported(l, "recurrent activation %s", name);
	bool unset = op->a == 0.0f && op->b == 0.0f;
	switch (op->op) {
	case AL_UN_SIGMOID:
	case AL_UN_TANH:
		return AL_OK;
	case AL_UN_RELU:
		*op = (struct al_rnn_acts){AL_UN_CLIP, 0.0f, 50.0f};
		return AL_OK;
	case AL_UN_LINEAR:
		if (unset || (op->a == 1.0f && op->b == 0.0f)) {
			*op = (struct al_rnn_acts){AL_UN_CLIP, -50.0f, 50.0f};
			return AL_OK;
		}
		break;
	case AL_UN_SCALED_TANH: /* alpha * tanh(beta * x), saturated at |x| = 50 */
		if (unset)
			*op = (struct al_rnn_acts){AL_UN_TANH, 0.0f, 0.0f};
		if (unset || fabsf(op->b) >= 0.2f)
			return AL_OK;
		break;
	case AL_UN_SIGMOID_HARD: /* clamp(alpha * x + beta, 0, 1), saturated at |x| = 50 */
		if (unset)
			op->a = 0.2f, op->b = 0.5f;
		if (op->b >= 0.0f && op->b <= 1.0f && fabsf(op->a) * 50.0f >= 1.0f)
			return AL_OK;
		break;
	default:
		break;
	}
	return nn_unsupported(l, "recurrent activation %s with these parameters (Core ML clips its "
			      "input to [-50, 50], which the interpreter does not emulate for it)", name);
}

/* The activation list (repeated ActivationParams at field f) into acts[0..n). */
static enum al_status rnn_acts(struct nn_layer *l, al_span p, uint32_t f, struct al_rnn_acts *acts,
			       size_t n)
{
	struct pb_iter it;
	struct pb_field fl;
	size_t k = 0;
	pb_iter_init(&it, p);
	while (pb_next(&it, &fl)) {
		if (fl.num != f || fl.wire != PB_LEN)
			continue;
		if (k >= n)
			return nn_fail(l, AL_E_FORMAT, "more than %zu activations", n);
		enum al_status st = rnn_act(l, fl.data, &acts[k]);
		if (st)
			return st;
		k++;
	}
	if (k != n)
		return nn_fail(l, AL_E_FORMAT, "%zu activations; it takes %zu", k, n);
	return AL_OK;
}

/* Weights: `n` WeightParams fields of msg, each of dims (rows, cols), stacked into
 * one new buffer [n*rows, cols] in the order given. NULL *out (and OK) when none of
 * them is present and !required. */
static enum al_status stack_weights(struct nn_layer *l, al_span msg, const uint32_t *fields,
				    const char *const *names, size_t n, int64_t rows, int64_t cols,
				    bool required, float **out)
{
	*out = NULL;
	bool any = false;
	for (size_t i = 0; i < n; i++)
		any |= pb_has(msg, fields[i]);
	if (!any && !required)
		return AL_OK;
	size_t each = (size_t)(rows * cols);
	float *buf = ali_malloc((n * each + 1) * sizeof *buf);
	if (!buf)
		return nn_fail(l, AL_E_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		int64_t d[2] = {rows, cols};
		struct al_tensor *w;
		enum al_status st = nn_weight(l, msg, fields[i], names[i], cols == 1 ? 1 : 2, d, true, &w);
		if (st) {
			ali_free(buf);
			return st;
		}
		memcpy(buf + i * each, w->f, each * sizeof *buf);
		ali_tensor_unref(w);
	}
	*out = buf;
	return AL_OK;
}

/* ================================================================ simple RNN */

/* SimpleRecurrentLayerParams inputVectorSize = 1, outputVectorSize = 2, activation
 * = 10, sequenceOutput = 15, hasBiasVector = 20, weightMatrix = 30,
 * recursionMatrix = 31, biasVector = 32, reverseInput = 100. In: x, h0. Out: y, h. */
enum al_status nn_l_simple_rnn(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 2, 1, 2);
	struct rnn_shape s;
	if (st || (st = rnn_shape(l, &s)))
		return st;
	struct al_nn_recurrent r;
	ali_nn_recurrent(l->n, &r);
	struct al_rnn p = {.T = s.T, .B = s.B, .I = s.I, .H = s.H, .reverse = al_pb_true(r.reverse_input)};
	if ((st = rnn_act(l, nn_psub(l->p, AL_NN_F_RNN_ACTIVATIONS), &p.f)) != AL_OK)
		return st;
	static const uint32_t fw[1] = {AL_NN_F_SIMPLE_RNN_WEIGHT_MATRIX},
			      fr[1] = {AL_NN_F_SIMPLE_RNN_RECURSION_MATRIX}, fb[1] = {AL_NN_F_SIMPLE_RNN_BIAS_VECTOR};
	static const char *const nw[1] = {"weightMatrix"}, *const nr[1] = {"recursionMatrix"};
	static const char *const nb[1] = {"biasVector"};
	float *wx = NULL, *wh = NULL, *b = NULL, *h = NULL, *y = NULL;
	struct al_tensor *th = NULL, *ty = NULL;
	if (!(st = stack_weights(l, l->p, fw, nw, 1, s.H, s.I, true, &wx)) &&
	    !(st = stack_weights(l, l->p, fr, nr, 1, s.H, s.H, true, &wh)) &&
	    (!al_pb_true(r.has_bias_vectors) || !(st = stack_weights(l, l->p, fb, nb, 1, s.H, 1, true, &b)))) {
		h = scratch(l, s.B * s.H, &th);
		y = h ? scratch(l, s.T * s.B * s.H, &ty) : NULL;
		if (!h || !y)
			st = AL_E_NOMEM;
		else if (!(st = rnn_state(l, 1, &s, h))) {
			p.wx = wx, p.wh = wh, p.bias = b;
			if (!ali_rnn_run(&p, l->in[0]->f, h, y))
				st = nn_fail(l, AL_E_NOMEM, "out of memory");
		}
	}
	if (st == AL_OK) {
		bool seq = al_pb_true(r.sequence_output);
		st = rnn_out(l, 0, seq ? s.T : 1, s.B, s.H, seq ? y : h);
		if (st == AL_OK)
			st = rnn_out(l, 1, 1, s.B, s.H, h);
	}
	ali_free(wx);
	ali_free(wh);
	ali_free(b);
	ali_tensor_unref(th);
	ali_tensor_unref(ty);
	return st;
}

/* ================================================================ GRU */

/* GRULayerParams inputVectorSize = 1, outputVectorSize = 2, activations = 10 [f, g],
 * sequenceOutput = 15, hasBiasVectors = 20, update/reset/output gate weights 30-32,
 * recursions 50-52, biases 70-72, reverseInput = 100. In: x, h0. Out: y, h. */
enum al_status nn_l_gru(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 2, 1, 2);
	struct rnn_shape s;
	if (st || (st = rnn_shape(l, &s)))
		return st;
	struct al_nn_recurrent r;
	ali_nn_recurrent(l->n, &r);
	struct al_gru p = {.T = s.T, .B = s.B, .I = s.I, .H = s.H, .reverse = al_pb_true(r.reverse_input)};
	struct al_rnn_acts acts[2];
	if ((st = rnn_acts(l, l->p, AL_NN_F_RNN_ACTIVATIONS, acts, 2)) != AL_OK)
		return st;
	p.f1 = acts[0], p.f2 = acts[1];
	static const uint32_t fw[3] = {AL_NN_F_GRU_UPDATE_GATE_WEIGHT_MATRIX, AL_NN_F_GRU_RESET_GATE_WEIGHT_MATRIX,
				       AL_NN_F_GRU_OUTPUT_GATE_WEIGHT_MATRIX};
	static const uint32_t fr[3] = {AL_NN_F_GRU_UPDATE_GATE_RECURSION_MATRIX,
				       AL_NN_F_GRU_RESET_GATE_RECURSION_MATRIX,
				       AL_NN_F_GRU_OUTPUT_GATE_RECURSION_MATRIX};
	static const uint32_t fb[3] = {AL_NN_F_GRU_UPDATE_GATE_BIAS_VECTOR, AL_NN_F_GRU_RESET_GATE_BIAS_VECTOR,
				       AL_NN_F_GRU_OUTPUT_GATE_BIAS_VECTOR};
	static const char *const nw[3] = {"updateGateWeightMatrix", "resetGateWeightMatrix",
					  "outputGateWeightMatrix"};
	static const char *const nr[3] = {"updateGateRecursionMatrix", "resetGateRecursionMatrix",
					  "outputGateRecursionMatrix"};
	static const char *const nb[3] = {"updateGateBiasVector", "resetGateBiasVector",
					  "outputGateBiasVector"};
	float *wx = NULL, *wh = NULL, *b = NULL, *h = NULL, *y = NULL;
	struct al_tensor *th = NULL, *ty = NULL;
	if (!(st = stack_weights(l, l->p, fw, nw, 3, s.H, s.I, true, &wx)) &&
	    !(st = stack_weights(l, l->p, fr, nr, 3, s.H, s.H, true, &wh)) &&
	    (!al_pb_true(r.has_bias_vectors) || !(st = stack_weights(l, l->p, fb, nb, 3, s.H, 1, true, &b)))) {
		h = scratch(l, s.B * s.H, &th);
		y = h ? scratch(l, s.T * s.B * s.H, &ty) : NULL;
		if (!h || !y)
			st = AL_E_NOMEM;
		else if (!(st = rnn_state(l, 1, &s, h))) {
			p.wx = wx, p.wh = wh, p.bias = b;
			if (!ali_gru_run(&p, l->in[0]->f, h, y))
				st = nn_fail(l, AL_E_NOMEM, "out of memory");
		}
	}
	if (st == AL_OK) {
		bool seq = al_pb_true(r.sequence_output);
		st = rnn_out(l, 0, seq ? s.T : 1, s.B, s.H, seq ? y : h);
		if (st == AL_OK)
			st = rnn_out(l, 1, 1, s.B, s.H, h);
	}
	ali_free(wx);
	ali_free(wh);
	ali_free(b);
	ali_tensor_unref(th);
	ali_tensor_unref(ty);
	return st;
}

/* ================================================================ LSTM */

/* LSTMParams (al_nn_recurrent): sequenceOutput, hasBiasVectors, forgetBias,
 * hasPeepholeVectors, coupledInputAndForgetGate, cellClipThreshold. */
struct lstm_opts {
	bool seq, bias, forget_bias, peep, coupled;
	float clip;
};

static struct lstm_opts lstm_opts(const struct al_node *n)
{
	struct al_nn_recurrent r;
	ali_nn_recurrent(n, &r);
	struct lstm_opts o = {
		.seq = al_pb_true(r.sequence_output), .bias = al_pb_true(r.has_bias_vectors),
		.forget_bias = al_pb_true(r.forget_bias), .peep = al_pb_true(r.has_peephole_vectors),
		.coupled = al_pb_true(r.coupled_input_and_forget_gate),
		.clip = r.cell_clip_threshold.has ? r.cell_clip_threshold.v : 0.0f,
	};
	if (o.clip == 0.0f)
		o.clip = 50.0f;
	return o;
}

/* One direction's LSTMWeightParams into p (buffers owned by the caller: *bufs[4]). */
static enum al_status lstm_weights(struct nn_layer *l, al_span w, const struct rnn_shape *s,
				   const struct lstm_opts *o, struct al_lstm *p, float *bufs[4])
{
	/* kernels' gate order: i, f, o, z (Core ML: input, forget, block input, output) */
	static const uint32_t fw[4] = {AL_NN_F_LSTMW_INPUT_GATE_WEIGHT, AL_NN_F_LSTMW_FORGET_GATE_WEIGHT,
				       AL_NN_F_LSTMW_OUTPUT_GATE_WEIGHT, AL_NN_F_LSTMW_BLOCK_INPUT_WEIGHT};
	static const uint32_t fr[4] = {AL_NN_F_LSTMW_INPUT_GATE_RECURSION, AL_NN_F_LSTMW_FORGET_GATE_RECURSION,
				       AL_NN_F_LSTMW_OUTPUT_GATE_RECURSION, AL_NN_F_LSTMW_BLOCK_INPUT_RECURSION};
	static const uint32_t fb[4] = {AL_NN_F_LSTMW_INPUT_GATE_BIAS, AL_NN_F_LSTMW_FORGET_GATE_BIAS,
				       AL_NN_F_LSTMW_OUTPUT_GATE_BIAS, AL_NN_F_LSTMW_BLOCK_INPUT_BIAS};
	static const uint32_t fp[3] = {AL_NN_F_LSTMW_INPUT_GATE_PEEPHOLE, AL_NN_F_LSTMW_FORGET_GATE_PEEPHOLE,
				       AL_NN_F_LSTMW_OUTPUT_GATE_PEEPHOLE};
	static const char *const nw[4] = {"inputGateWeightMatrix", "forgetGateWeightMatrix",
					  "outputGateWeightMatrix", "blockInputWeightMatrix"};
	static const char *const nr[4] = {"inputGateRecursionMatrix", "forgetGateRecursionMatrix",
					  "outputGateRecursionMatrix", "blockInputRecursionMatrix"};
	static const char *const nb[4] = {"inputGateBiasVector", "forgetGateBiasVector",
					  "outputGateBiasVector", "blockInputBiasVector"};
	static const char *const np[3] = {"inputGatePeepholeVector", "forgetGatePeepholeVector",
					  "outputGatePeepholeVector"};
	enum al_status st;
	if ((st = stack_weights(l, w, fw, nw, 4, s->H, s->I, true, &bufs[0])) ||
	    (st = stack_weights(l, w, fr, nr, 4, s->H, s->H, true, &bufs[1])))
		return st;
	if (o->bias && (st = stack_weights(l, w, fb, nb, 4, s->H, 1, true, &bufs[2])))
		return st;
	if (o->forget_bias) {
		if (!bufs[2]) {
			bufs[2] = ali_calloc((size_t)(4 * s->H), sizeof *bufs[2]);
			if (!bufs[2])
				return nn_fail(l, AL_E_NOMEM, "out of memory");
		}
		for (int64_t i = 0; i < s->H; i++)
			bufs[2][s->H + i] += 1.0f;
	}
	if (o->peep && (st = stack_weights(l, w, fp, np, 3, s->H, 1, true, &bufs[3])))
		return st;
	p->wx = bufs[0], p->wh = bufs[1], p->bias = bufs[2], p->peep = bufs[3];
	p->clip = o->clip;
	p->coupled_input_forget = o->coupled;
	return AL_OK;
}

/* UniDirectionalLSTMLayerParams inputVectorSize = 1, outputVectorSize = 2,
 * activations = 10 [f, g, h], params = 15, weightParams = 20, reverseInput = 100.
 * In: x, h0, c0. Out: y, h, c. */
enum al_status nn_l_lstm(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 3, 1, 3);
	struct rnn_shape s;
	if (st || (st = rnn_shape(l, &s)))
		return st;
	struct lstm_opts o = lstm_opts(l->n);
	struct al_nn_recurrent r;
	ali_nn_recurrent(l->n, &r);
	struct al_lstm p = {.T = s.T, .B = s.B, .I = s.I, .H = s.H, .reverse = al_pb_true(r.reverse_input)};
	struct al_rnn_acts acts[3];
	if ((st = rnn_acts(l, l->p, AL_NN_F_RNN_ACTIVATIONS, acts, 3)) != AL_OK)
		return st;
	p.f1 = acts[0], p.f2 = acts[1], p.f3 = acts[2];
	float *bufs[4] = {NULL, NULL, NULL, NULL}, *h = NULL, *c = NULL, *y = NULL;
	struct al_tensor *th = NULL, *tc = NULL, *ty = NULL;
	if (!(st = lstm_weights(l, nn_psub(l->p, AL_NN_F_LSTM_WEIGHT_PARAMS), &s, &o, &p, bufs))) {
		int64_t n = s.B * s.H;
		h = scratch(l, n, &th);
		c = h ? scratch(l, n, &tc) : NULL;
		y = c ? scratch(l, s.T * n, &ty) : NULL;
		if (!h || !c || !y)
			st = AL_E_NOMEM;
		else if (!(st = rnn_state(l, 1, &s, h)) && !(st = rnn_state(l, 2, &s, c)) &&
			 !ali_lstm_run(&p, l->in[0]->f, h, c, y))
			st = nn_fail(l, AL_E_NOMEM, "out of memory");
	}
	if (st == AL_OK)
		st = rnn_out(l, 0, o.seq ? s.T : 1, s.B, s.H, o.seq ? y : h);
	if (st == AL_OK)
		st = rnn_out(l, 1, 1, s.B, s.H, h);
	if (st == AL_OK)
		st = rnn_out(l, 2, 1, s.B, s.H, c);
	for (int i = 0; i < 4; i++)
		ali_free(bufs[i]);
	ali_tensor_unref(th);
	ali_tensor_unref(tc);
	ali_tensor_unref(ty);
	return st;
}

/* BiDirectionalLSTMLayerParams inputVectorSize = 1, outputVectorSize = 2,
 * activationsForwardLSTM = 10, activationsBackwardLSTM = 11, params = 15,
 * weightParams = 20 (forward, backward). In: x, h0, c0, h0_back, c0_back. Out: y
 * [.., 2H, ..] (forward then backward per step), h, c, h_back, c_back. */
enum al_status nn_l_bilstm(struct nn_layer *l)
{
	enum al_status st = nn_arity(l, 1, 5, 1, 5);
	struct rnn_shape s;
	if (st || (st = rnn_shape(l, &s)))
		return st;
	struct lstm_opts o = lstm_opts(l->n);
	if (pb_count(l->p, AL_NN_F_LSTM_WEIGHT_PARAMS) != 2)
		return nn_fail(l, AL_E_FORMAT, "%zu weightParams; it takes 2 (forward, backward)",
			       pb_count(l->p, AL_NN_F_LSTM_WEIGHT_PARAMS));
	al_span wdir[2] = {{0}, {0}};
	struct pb_iter it;
	struct pb_field f;
	int k = 0;
	pb_iter_init(&it, l->p);
	while (k < 2 && pb_next(&it, &f))
		if (f.num == AL_NN_F_LSTM_WEIGHT_PARAMS && f.wire == PB_LEN)
			wdir[k++] = f.data;
	struct al_lstm p[2];
	float *bufs[2][4] = {{NULL, NULL, NULL, NULL}, {NULL, NULL, NULL, NULL}};
	float *h[2] = {NULL, NULL}, *c[2] = {NULL, NULL}, *y[2] = {NULL, NULL}, *cat = NULL;
	struct al_tensor *tt[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
	int64_t n = s.B * s.H;
	for (int d = 0; d < 2 && st == AL_OK; d++) {
		struct al_rnn_acts acts[3];
		memset(&p[d], 0, sizeof p[d]);
		p[d].T = s.T, p[d].B = s.B, p[d].I = s.I, p[d].H = s.H, p[d].reverse = d == 1;
		if ((st = rnn_acts(l, l->p, d ? AL_NN_F_BILSTM_ACTIVATIONS_BACKWARD : AL_NN_F_RNN_ACTIVATIONS, acts, 3)) !=
		    AL_OK)
			break;
		p[d].f1 = acts[0], p[d].f2 = acts[1], p[d].f3 = acts[2];
		if ((st = lstm_weights(l, wdir[d], &s, &o, &p[d], bufs[d])) != AL_OK)
			break;
		h[d] = scratch(l, n, &tt[3 * d]);
		c[d] = h[d] ? scratch(l, n, &tt[3 * d + 1]) : NULL;
		y[d] = c[d] ? scratch(l, s.T * n, &tt[3 * d + 2]) : NULL;
		if (!y[d]) {
			st = AL_E_NOMEM;
			break;
		}
		if ((st = rnn_state(l, 1 + 2 * (uint32_t)d, &s, h[d])) ||
		    (st = rnn_state(l, 2 + 2 * (uint32_t)d, &s, c[d])))
			break;
		if (!ali_lstm_run(&p[d], l->in[0]->f, h[d], c[d], y[d]))
			st = nn_fail(l, AL_E_NOMEM, "out of memory");
	}
	int64_t rows = o.seq ? s.T : 1;
	if (st == AL_OK && !(cat = scratch(l, rows * 2 * n, &tt[6])))
		st = AL_E_NOMEM;
	if (st == AL_OK) {
		/* [rows, B, 2H]: forward then backward for each step and batch element */
		for (int64_t t = 0; t < rows; t++)
			for (int64_t b = 0; b < s.B; b++)
				for (int d = 0; d < 2; d++) {
					const float *src = o.seq ? y[d] + (t * s.B + b) * s.H : h[d] + b * s.H;
					memcpy(cat + (t * s.B + b) * 2 * s.H + d * s.H, src, (size_t)s.H * sizeof *cat);
				}
		st = rnn_out(l, 0, rows, s.B, 2 * s.H, cat);
		for (uint32_t i = 0; st == AL_OK && i < 4; i++)
			st = rnn_out(l, 1 + i, 1, s.B, s.H, i % 2 ? c[i / 2] : h[i / 2]);
	}
	for (int d = 0; d < 2; d++)
		for (int i = 0; i < 4; i++)
			ali_free(bufs[d][i]);
	for (int i = 0; i < 7; i++)
		ali_tensor_unref(tt[i]);
	return st;
}
