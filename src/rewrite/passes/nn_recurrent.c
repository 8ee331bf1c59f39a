/* SPDX-License-Identifier: MIT */
/* nn_recurrent.c: the NeuralNetwork recurrent layers (ANE002) unrolled into
 * Core ML 2 layers the rules put on the ANE: nn-lstm-unroll, and the reason
 * given for the recurrent layers not unrolled (docs/surgery.md "NeuralNetwork
 * recurrent layers"). Rows in surgery.c's pass table; run through its
 * mil_pass (they append nothing to weight.bin). */
#include "passes.h"

#include <string.h>

/* NeuralNetworkLayer fields, and the layer types these passes emit. */
enum { L_NAME = 1, L_INPUT = 2, L_OUTPUT = 3, NN_LAYERS = 1 };
enum { F_ACTIVATION = 130, F_INNER_PRODUCT = 140, F_UNARY = 220, F_ADD = 230, F_MULTIPLY = 231,
       F_RESHAPE = 300, F_PERMUTE = 310, F_CONCAT = 320, F_SPLIT = 330, F_SLICE = 350 };

static bool nn_top_level(struct al_mil_pass *c)
{
	if (c->n->owner->depth != 0)
		return ali_mil_say(c, "layer in a nested network (branch / loop body)");
	if (!c->src->msg.p || !c->src->params.p)
		return ali_mil_say(c, "no layer message");
	return true;
}

/* ------------------------------------------------------------------ NN LSTM unrolled
 * A NeuralNetwork uniDirectionalLSTM (ANE002) with a static, short sequence,
 * unrolled into Core ML 2 layers the rules put on the ANE. Its input is rank 5
 * [T, 1, I, 1, 1]; the sequence axis is reached by a permute, not by the
 * general-rank sliceStatic / squeeze (ANE007):
 *   ax  = innerProduct(x, W_x [i|f|o|z], b)     [T, 1, 4H, 1, 1]  (once, as the
 *   axp = permute(ax, [2, 1, 0, 3])             [1, 1, 4H, T, 1]   kernel's gemm)
 * per step t: g = slice(axp, height t) + innerProduct(h, W_h [i|f|o|z]); split
 * into 4; sigmoid i, f, o; tanh z; c = clip(f * c + i * z) (the clip as
 * max(c, -L), -1 *, max(., -L), -1 *: exact); h = o * tanh(c). The sequence
 * output is a concat of every h on channels reshaped to [T, H, 1, 1], else a
 * copy (linear 1 x + -0.0, exact) of the last h. NeuralNetwork layers cannot
 * share weights: every step's recurrent innerProduct carries its own copy of
 * W_h (the file grows by (T - 1) x 4H x H values: capped). The same terms as
 * the interpreter's LSTM kernel in the same order; reassociate, as the matrix
 * kernels' order may differ. Forward, batch 1, default activations, no
 * peephole / coupled gates / forgetBias, fp32 or fp16 weights. */
#define NN_LSTM_MAX_STEPS 16
#define NN_LSTM_MAX_COPY (32u << 20) /* bytes of recurrent weights copied into the steps */

/* One new layer: into c->layer when last (it replaces the LSTM), else before it. */
static bool nn_emit(struct al_mil_pass *c, bool last, const char *name, const char *const *ins, int n_in,
		    const char *const *outs, int n_out, uint32_t field, const struct al_buf *prm)
{
	struct al_buf l = {0};
	ali_buf_str(&l, L_NAME, name);
	for (int i = 0; i < n_in; i++)
		ali_buf_str(&l, L_INPUT, ins[i]);
	for (int i = 0; i < n_out; i++)
		ali_buf_str(&l, L_OUTPUT, outs[i]);
	ali_buf_len(&l, field, prm ? prm->p : NULL, prm ? prm->n : 0);
	if (last)
		ali_buf_put(&c->layer, l.p, l.n);
	else
		ali_buf_len(&c->pre, NN_LAYERS, l.p, l.n);
	c->pre.failed |= l.failed || (prm && prm->failed);
	ali_buf_free(&l);
	if (c->n_names < AL_PASS_MAX_NAMES)
		c->names[c->n_names++] = name;
	return !c->pre.failed && !c->layer.failed ? true : ali_mil_say(c, "out of memory");
}

/* The 4 WeightParams fields f[] of w stacked into one WeightParams (same
 * format, fp32 floatValue 1 or fp16 float16Value 2, each `each` values). */
static bool nn_stack(struct al_mil_pass *c, al_span w, const uint32_t *f, size_t each, struct al_buf *out)
{
	int fmt = 0;
	struct al_buf v = {0};
	for (int g = 0; g < 4; g++) {
		al_span wp, d;
		if (!pb_get_bytes(w, f[g], &wp))
			return ali_buf_free(&v), ali_mil_say(c, "weight field %u is missing", f[g]);
		int k = pb_get_bytes(wp, 1, &d) && d.n ? 1 : pb_get_bytes(wp, 2, &d) && d.n ? 2 : 0;
		if (!k || pb_has(wp, 30) || pb_has(wp, 31) || pb_has(wp, 40) || (fmt && k != fmt))
			return ali_buf_free(&v), ali_mil_say(c, "weights quantized, raw or of mixed formats (fp32 / fp16 only)");
		fmt = k;
		if (d.n != each * (k == 1 ? 4u : 2u))
			return ali_buf_free(&v), ali_mil_say(c, "weight field %u holds %zu bytes, not %zu values", f[g], d.n, each);
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

bool ali_pass_nn_lstm_unroll(struct al_mil_pass *c)
{
	if (!c->src || !c->src->sub || c->src->sub->world != AL_WORLD_NN)
		return false;
	if (!nn_top_level(c))
		return false;
	al_span p = c->src->params, lp = {0}, w;
	uint64_t I = 0, H = 0, v;
	pb_get_varint(p, 1, &I);
	pb_get_varint(p, 2, &H);
	if (pb_get_varint(p, 100, &v) && v)
		return ali_mil_say(c, "reverseInput: only forward LSTMs are unrolled");
	(void)pb_get_bytes(p, 15, &lp);
	if (!pb_get_bytes(p, 20, &w))
		return ali_mil_say(c, "no weightParams");
	/* activations: sigmoid, tanh, tanh (ActivationParams sigmoid 40, tanh 30) */
	static const uint32_t want[3] = {40, 30, 30};
	struct pb_iter it;
	struct pb_field f;
	int na = 0;
	pb_iter_init(&it, p);
	while (pb_next(&it, &f)) {
		if (f.num != 10 || f.wire != PB_LEN)
			continue;
		struct pb_iter ai;
		struct pb_field af;
		pb_iter_init(&ai, f.data);
		if (na >= 3 || !pb_next(&ai, &af) || af.num != want[na])
			return ali_mil_say(c, "activations other than sigmoid, tanh, tanh");
		na++;
	}
	if (na != 3)
		return ali_mil_say(c, "%d activations (3 expected)", na);
	bool seq = pb_get_varint(lp, 10, &v) && v, hasb = pb_get_varint(lp, 20, &v) && v;
	if ((pb_get_varint(lp, 30, &v) && v) || (pb_get_varint(lp, 40, &v) && v) || (pb_get_varint(lp, 50, &v) && v))
		return ali_mil_say(c, "forgetBias, peepholes or coupled gates: not unrolled");
	float clip = 0;
	if (!pb_get_float(lp, 60, &clip) || clip == 0)
		clip = 50.0f; /* NeuralNetwork.proto's default, as the interpreter applies it */
	if (!(clip > 0) || clip > 1e30f)
		return ali_mil_say(c, "cellClipThreshold %g", (double)clip);
	if (c->n->n_inputs != 1 && c->n->n_inputs != 3)
		return ali_mil_say(c, "%u inputs (x, or x, h0, c0)", c->n->n_inputs);
	const struct al_shape *xs = ali_node_in_shape(c->n, 0);
	if (!ali_nn_shape_static(xs) || xs->rank != 5 || xs->dims[1] != 1 || xs->dims[2] != (int64_t)I || xs->dims[3] != 1 ||
	    xs->dims[4] != 1)
		return ali_mil_say(c, "the input is not a static [T, 1, %llu, 1, 1] (batch 1 only)", (unsigned long long)I);
	int64_t T = xs->dims[0];
	if (T < 1 || T > NN_LSTM_MAX_STEPS)
		return ali_mil_say(c, "%lld steps: at most %d are unrolled (17 layers a step, each step waiting for the one "
			   "before)", (long long)T, NN_LSTM_MAX_STEPS);
	if (I < 1 || H < 1 || 4 * H > 16384 || I > (1u << 24))
		return ali_mil_say(c, "sizes I %llu, H %llu (4H <= 16384, I <= 2^24)", (unsigned long long)I, (unsigned long long)H);
	/* the stacked weights, gate order i, f, o, z (fields: input 1, forget 2, output 4, block input 3) */
	static const uint32_t fx[4] = {1, 2, 4, 3}, fh[4] = {20, 21, 23, 22}, fb[4] = {40, 41, 43, 42};
	struct al_buf wx = {0}, wh = {0}, bb = {0};
	bool ok = nn_stack(c, w, fx, (size_t)(H * I), &wx) && nn_stack(c, w, fh, (size_t)(H * H), &wh) &&
		  (!hasb || nn_stack(c, w, fb, (size_t)H, &bb));
	bool h0 = c->n->n_inputs == 3;
	size_t copies = (size_t)(h0 ? T : T - 1);
	if (ok && wh.n * copies > NN_LSTM_MAX_COPY)
		ok = ali_mil_say(c, "%zu recurrent weight copies of %zu KB: more than 32 MB would be added", copies, wh.n >> 10);
	if (!ok) {
		ali_buf_free(&wx);
		ali_buf_free(&wh);
		ali_buf_free(&bb);
		return false;
	}
	if (c->s->opts && c->s->opts->allow < AL_EQ_REASSOCIATE) { /* reported, nothing built */
		ali_buf_free(&wx);
		ali_buf_free(&wh);
		ali_buf_free(&bb);
		snprintf(c->after, sizeof c->after, "%lld steps of innerProduct + activation + add / multiply "
			 "(permute, slice; %lld layers)", (long long)T, (long long)(T * 17 + 3));
		return true;
	}
	const char *base = c->n->name;
	char sfx[48];
#define NNM(var, ...)                                                                                    \
	snprintf(sfx, sizeof sfx, __VA_ARGS__);                                                          \
	const char *var = ali_nn_fresh(c, base, sfx);                                                     \
	if (!var) {                                                                                      \
		ok = ali_mil_say(c, "no free name");                                                             \
		goto out;                                                                                \
	}
	struct al_buf prm = {0};
	const char *hcur = h0 ? c->n->inputs[1] : NULL, *ccur = h0 ? c->n->inputs[2] : NULL;
	const char **hs = ali_arena_array(&c->s->arena, (size_t)T, sizeof *hs);
	if (!hs) {
		ok = ali_mil_say(c, "out of memory");
		goto out;
	}
	{
		NNM(ax, "ax") NNM(axp, "axp")
		ali_buf_uint(&prm, 1, I);
		ali_buf_uint(&prm, 2, 4 * H);
		if (hasb)
			ali_buf_uint(&prm, 10, 1);
		ali_buf_len(&prm, 20, wx.p, wx.n);
		if (hasb)
			ali_buf_len(&prm, 21, bb.p, bb.n);
		ok = nn_emit(c, false, ax, &c->n->inputs[0], 1, &ax, 1, F_INNER_PRODUCT, &prm);
		ali_buf_free(&prm);
		uint64_t perm[4] = {2, 1, 0, 3};
		ali_buf_packed(&prm, 1, perm, 4);
		ok = ok && nn_emit(c, false, axp, &ax, 1, &axp, 1, F_PERMUTE, &prm);
		ali_buf_free(&prm);
		if (!ok)
			goto out;
		for (int64_t t = 0; t < T; t++) {
			bool lastt = t == T - 1;
			NNM(xt, "t%lld_x", (long long)t) NNM(gh, "t%lld_gh", (long long)t) NNM(g, "t%lld_g", (long long)t)
			NNM(gi, "t%lld_gi", (long long)t) NNM(gf, "t%lld_gf", (long long)t) NNM(go, "t%lld_go", (long long)t)
			NNM(gz, "t%lld_gz", (long long)t) NNM(ig, "t%lld_i", (long long)t) NNM(fg, "t%lld_f", (long long)t)
			NNM(og, "t%lld_o", (long long)t) NNM(zg, "t%lld_z", (long long)t) NNM(fc, "t%lld_fc", (long long)t)
			NNM(iz, "t%lld_iz", (long long)t) NNM(cs, "t%lld_cs", (long long)t) NNM(k1, "t%lld_k1", (long long)t)
			NNM(k2, "t%lld_k2", (long long)t) NNM(k3, "t%lld_k3", (long long)t) NNM(tc, "t%lld_tc", (long long)t)
			const char *cn = lastt && c->n->n_outputs > 2 ? c->n->outputs[2] : NULL;
			const char *hn = lastt && c->n->n_outputs > 1 ? c->n->outputs[1] : NULL;
			if (!cn) {
				NNM(cx, "t%lld_c", (long long)t)
				cn = cx;
			}
			if (!hn) {
				NNM(hx, "t%lld_h", (long long)t)
				hn = hx;
			}
			/* x_t: the height slice t of the permuted projections */
			ali_buf_uint(&prm, 1, (uint64_t)t);
			ali_buf_uint(&prm, 2, (uint64_t)t + 1);
			ali_buf_uint(&prm, 3, 1);
			ali_buf_uint(&prm, 4, 1); /* HEIGHT_AXIS */
			ok = nn_emit(c, false, xt, &axp, 1, &xt, 1, F_SLICE, &prm);
			ali_buf_free(&prm);
			const char *gates_in = xt;
			if (ok && hcur) {
				ali_buf_uint(&prm, 1, H);
				ali_buf_uint(&prm, 2, 4 * H);
				ali_buf_len(&prm, 20, wh.p, wh.n);
				ok = nn_emit(c, false, gh, &hcur, 1, &gh, 1, F_INNER_PRODUCT, &prm);
				ali_buf_free(&prm);
				const char *ad[2] = {xt, gh};
				ok = ok && nn_emit(c, false, g, ad, 2, &g, 1, F_ADD, NULL);
				gates_in = g;
			}
			const char *four[4] = {gi, gf, go, gz};
			ali_buf_uint(&prm, 1, 4);
			ok = ok && nn_emit(c, false, gi, &gates_in, 1, four, 4, F_SPLIT, &prm);
			ali_buf_free(&prm);
			const char *acts_in[4] = {gi, gf, go, gz}, *acts_out[4] = {ig, fg, og, zg};
			for (int a = 0; ok && a < 4; a++) {
				act_params(&prm, a < 3 ? 40 : 30);
				ok = nn_emit(c, false, acts_out[a], &acts_in[a], 1, &acts_out[a], 1, F_ACTIVATION, &prm);
				ali_buf_free(&prm);
			}
			/* c = clip(f * c + i * z): with no c0 the first c is i * z (f * 0 + i * z) */
			const char *mi[2] = {ig, zg};
			const char *sum = iz;
			ok = ok && nn_emit(c, false, iz, mi, 2, &iz, 1, F_MULTIPLY, NULL);
			if (ok && ccur) {
				const char *mf[2] = {fg, ccur}, *sa[2] = {fc, iz};
				ok = nn_emit(c, false, fc, mf, 2, &fc, 1, F_MULTIPLY, NULL) &&
				     nn_emit(c, false, cs, sa, 2, &cs, 1, F_ADD, NULL);
				sum = cs;
			}
			const char *chain[5] = {sum, k1, k2, k3, cn};
			for (int k = 0; ok && k < 4; k++) {
				if (k % 2 == 0) { /* UnaryFunction THRESHOLD: max(x, -clip) */
					ali_buf_uint(&prm, 1, 7);
					ali_buf_float(&prm, 2, -clip);
					ali_buf_float(&prm, 5, 1.0f);
					ok = nn_emit(c, false, chain[k + 1], &chain[k], 1, &chain[k + 1], 1, F_UNARY, &prm);
				} else { /* -x, exactly */
					ali_nn_linear_params(&prm, -1.0f);
					ok = nn_emit(c, false, chain[k + 1], &chain[k], 1, &chain[k + 1], 1, F_ACTIVATION, &prm);
				}
				ali_buf_free(&prm);
			}
			act_params(&prm, 30);
			ok = ok && nn_emit(c, false, tc, &cn, 1, &tc, 1, F_ACTIVATION, &prm);
			ali_buf_free(&prm);
			const char *mo[2] = {og, tc};
			ok = ok && nn_emit(c, false, hn, mo, 2, &hn, 1, F_MULTIPLY, NULL);
			if (!ok)
				goto out;
			hcur = hn, ccur = cn, hs[t] = hn;
		}
		/* the LSTM itself: output 0 */
		if (seq) {
			/* a concat takes at least 2 inputs (Core ML's validator): one
			 * step's h is reshaped as it is */
			const char *cat = hcur;
			if (T > 1) {
				NNM(catn, "seq")
				cat = catn;
				ok = nn_emit(c, false, cat, hs, (int)T, &cat, 1, F_CONCAT, NULL);
			}
			uint64_t shp[4] = {(uint64_t)T, H, 1, 1};
			ali_buf_packed(&prm, 1, shp, 4);
			ok = ok && nn_emit(c, true, base, &cat, 1, &c->n->outputs[0], 1, F_RESHAPE, &prm);
		} else {
			ali_nn_linear_params(&prm, 1.0f);
			ok = nn_emit(c, true, base, &hcur, 1, &c->n->outputs[0], 1, F_ACTIVATION, &prm);
		}
		ali_buf_free(&prm);
	}
#undef NNM
	if (ok)
		snprintf(c->after, sizeof c->after, "%lld steps of innerProduct + activation + add / multiply "
			 "(permute, slice; %u layers, W_h copied into %zu steps)", (long long)T, c->n_names, copies);
out:
	ali_buf_free(&prm);
	ali_buf_free(&wx);
	ali_buf_free(&wh);
	ali_buf_free(&bb);
	return ok;
}

/* NeuralNetwork uniDirectionalLSTM / gru (ANE002): refused, with the reason.
 * A form whose every layer the rules put on the ANE exists (a permute moving
 * the Seq axis of the rank-5 (Seq, B, C, 1, 1) input to H, a slice per step,
 * innerProduct, activation, add / multiply, concat, a reshape back to Seq;
 * sliceStatic / squeeze would be ANE007, support unverified), and the
 * interpreter runs it; not built: NeuralNetwork layers cannot share weights, so
 * every step's innerProduct carries its own copy of the recurrent matrices,
 * and the LSTM's cell clip (50 when unset) needs 4 more layers a step.
 * docs/surgery.md. An ML Program gru is mil-gru-unroll's: not reported here. */
bool ali_pass_nn_recurrent(struct al_mil_pass *c)
{
	if (!c->src || !c->src->sub || c->src->sub->world != AL_WORLD_NN)
		return false;
	return ali_mil_say(c, "not unrolled (ANE002): no NeuralNetwork form yet (every step would carry its own copy of "
		   "the recurrent weights); convert to an ML Program (%s)",
		   strcmp(c->n->type, "gru") == 0 ? "mil-gru-unroll" : "mil-lstm-unroll");
}
