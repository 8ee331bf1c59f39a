/* SPDX-License-Identifier: MIT */
/* mil_recurrent.c: the ML Program recurrent ops unrolled into steps the ANE
 * runs, mil-lstm-unroll and mil-gru-unroll (docs/surgery.md has their rows;
 * tests/pass_mil_lstm_unroll.sh, tests/fix_mil.sh). */
#include "passes.h"
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OP_TYPE = 1 }; /* Operation.type */

/* ------------------------------------------------------------------ lstm unrolled
 * An ML Program lstm runs step by step on the CPU (ANE021). With a static,
 * short sequence it is unrolled into the ops the ANE runs: per step t
 *   x_t = slice_by_index(x, [t,0,0], [t+1,B,I], squeeze axis 0)      [B, I]
 *   g   = linear(x_t, weight_ih, bias) + linear(h, weight_hh)        [B, 4H]
 *   i, f, o, z = split(g, 4, axis -1); sigmoid(i, f, o), tanh(z)     (MIL gate order)
 *   c   = f * c + i * z;  h = o * tanh(c)
 * the last step's h and c named as the lstm's outputs 1 and 2, and the op itself
 * a stack of every h on axis 0 (output_sequence) or an expand_dims of the last h
 * (its output 0). The same products and sums as the interpreter's lstm kernel,
 * but the gate sums are added in another order (x W_ih^T + b, then + h W_hh^T
 * as a separate add): reassociate. The weights are the lstm's own const ops
 * (read by name, no blob copied). Only forward, fp16 programs (fp32 ops would
 * stay off the ANE: ANE029), default activations, no peephole or clip, and at
 * most LSTM_MAX_STEPS steps: the program grows by 14 ops per step and every
 * step depends on the one before, so a long sequence becomes a long chain of
 * small dispatches and a large program for the ANE compiler. */

#define LSTM_MAX_STEPS 16
#define LSTM_OPS_PER_STEP 14

struct kv {
	const char *k, *v;
};



/* A new op before c->n: type, named inputs, n_out outputs of one type. */
static bool pre_op(struct al_mil_pass *c, const char *type, const struct kv *in, int n_in,
		   const char *const *outs, int n_out, int dt, int rank, const int64_t *dims)
{
	struct al_buf op = {0};
	ali_buf_str(&op, OP_TYPE, type);
	for (int i = 0; i < n_in; i++)
		ali_mil_put_input(&op, in[i].k, in[i].v);
	return ali_mil_pre_op_end(c, &op, outs, n_out, dt, rank, dims);
}

/* The name of the value parameter p is bound to (NULL, with the reason, when it
 * is not a named value; const_only: it must come from a const op). */
static const char *bound(struct al_mil_pass *c, const char *p, bool const_only)
{
	al_span b;
	if (ali_mil_param_binding(c->n, p, 0, &b) != 1)
		return ali_mil_say(c, "'%s' is not a named value", p), NULL;
	char *nm = ali_arena_strndup(&c->s->arena, b.p, b.n);
	if (!nm)
		return ali_mil_say(c, "out of memory"), NULL;
	const struct al_node *pr = const_only ? ali_mil_producer(c->n, nm) : NULL;
	if (const_only && (!pr || !pr->type || strcmp(pr->type, "const") != 0))
		return ali_mil_say(c, "'%s' is not a const op", p), NULL;
	return nm;
}

static bool act_is(struct al_mil_pass *c, const char *p, const char *want)
{
	char s[32];
	if (!ali_mil_param_present(c->n, p))
		return true;
	if (!ali_mil_param_string(c->n, p, s, sizeof s))
		return ali_mil_say(c, "'%s' is not a constant string", p);
	if (strcmp(s, want) != 0)
		return ali_mil_say(c, "%s %s: only the default %s is unrolled", p, s, want);
	return true;
}

/* The checks an unrolled recurrent op (lstm: 4 gates, gru: 3) opens with: fp16,
 * x a static [T, B, I] of 1..max_steps steps, weight_hh a static [gates*H, H],
 * gates*H under the ANE's axis cap. */
static bool recurrent_dims(struct al_mil_pass *c, const char *kind, int gates, int max_steps, int ops_per_step,
			   int64_t *T, int64_t *B, int64_t *I, int64_t *H)
{
	int dt = ali_mil_out_dtype(c);
	if (dt != AL_DT_FP16)
		return ali_mil_say(c, "the %s computes in %s: unrolled into %s ops it would still fall back "
				   "(ANE029); only fp16 programs are unrolled", kind, al_dtype_name(dt), al_dtype_name(dt));
	struct al_shape xs, ws;
	if (!ali_mil_param_shape(c->n, "x", &xs) || !ali_mil_static_shape(&xs) || xs.rank != 3)
		return ali_mil_say(c, "the shape of 'x' is not a static [T, B, I]");
	*T = xs.dims[0], *B = xs.dims[1], *I = xs.dims[2];
	if (*T < 1 || *T > max_steps)
		return ali_mil_say(c, "%lld steps: at most %d are unrolled (%d ops a step, each step waiting for "
				   "the one before)", (long long)*T, max_steps, ops_per_step);
	if (!ali_mil_param_shape(c->n, "weight_hh", &ws) || !ali_mil_static_shape(&ws) || ws.rank != 2 ||
	    ws.dims[1] < 1 || ws.dims[1] > 1 << 20 || ws.dims[0] != gates * ws.dims[1])
		return ali_mil_say(c, "'weight_hh' is not a static [%dH, H]", gates);
	*H = ws.dims[1];
	if (gates * *H > 16384)
		return ali_mil_say(c, "%dH = %lld gate features exceed the ANE's axis cap (16384)", gates,
				   (long long)(gates * *H));
	return true;
}

/* The end of an unrolled recurrent op (lstm, gru): the op itself becomes its
 * output 0, the sequence [T, B, H] (a stack of the steps' h, hseq) or the last
 * step [1, B, H] (h with the axis sax added), under the op's own names. */
static bool end_recurrent(struct al_mil_pass *c, const char *base, bool seq, const char **hseq, int64_t T,
			  const char *h, const char *sax)
{
	if (seq) {
		ali_buf_str(&c->layer, OP_TYPE, "stack");
		ali_mil_put_inputs(&c->layer, "values", hseq, (size_t)T);
		ali_mil_put_input(&c->layer, "axis", sax);
	} else {
		ali_buf_str(&c->layer, OP_TYPE, "expand_dims");
		ali_mil_put_input(&c->layer, "x", h);
		ali_mil_put_input(&c->layer, "axes", sax);
	}
	if (!ali_mil_keep_outputs(c, &c->layer, base, true))
		return false;
	if (c->layer.failed || c->pre.failed)
		return ali_mil_say(c, "out of memory");
	if (c->n_names < AL_PASS_MAX_NAMES)
		c->names[c->n_names++] = c->n->name;
	return true;
}

bool ali_pass_mil_lstm_unroll(struct al_mil_pass *c)
{
	if (!c->src || !c->src->mil_scope || !c->src->msg.p)
		return ali_mil_say(c, "not an ML Program op");
	if (c->n->n_outputs != 3 || !c->n->out_types)
		return ali_mil_say(c, "%u outputs (3 expected)", c->n->n_outputs);
	char dir[32] = "forward";
	if (ali_mil_param_present(c->n, "direction") && !ali_mil_param_string(c->n, "direction", dir, sizeof dir))
		return ali_mil_say(c, "'direction' is not a constant string");
	if (strcmp(dir, "forward") != 0)
		return ali_mil_say(c, "direction %s: only forward lstms are unrolled", dir);
	if (!act_is(c, "recurrent_activation", "sigmoid") || !act_is(c, "cell_activation", "tanh") ||
	    !act_is(c, "activation", "tanh"))
		return false;
	if (ali_mil_param_present(c->n, "peephole"))
		return ali_mil_say(c, "a peephole lstm is not unrolled");
	double clip = 0, seq = 0;
	if (ali_mil_param_present(c->n, "clip") && (!ali_mil_const_scalar(c, "clip", &clip, true, 0) || clip != 0))
		return ali_mil_say(c, "a clipped lstm (clip %g) is not unrolled", clip);
	if (!ali_mil_const_scalar(c, "output_sequence", &seq, true, 0))
		return false;
	int64_t T, B, I, H;
	if (!recurrent_dims(c, "lstm", 4, LSTM_MAX_STEPS, LSTM_OPS_PER_STEP, &T, &B, &I, &H))
		return false;
	int dt = AL_DT_FP16; /* recurrent_dims checked it */
	struct al_shape hs, ws;
	const char *x = bound(c, "x", false), *wih = x ? bound(c, "weight_ih", true) : NULL;
	const char *whh = wih ? bound(c, "weight_hh", true) : NULL;
	const char *bias = NULL;
	if (whh && ali_mil_param_present(c->n, "bias") && !(bias = bound(c, "bias", true)))
		return false;
	const char *h = whh ? bound(c, "initial_h", false) : NULL;
	const char *cc = h ? bound(c, "initial_c", false) : NULL;
	if (!cc)
		return false;
	if (!ali_mil_param_shape(c->n, "initial_h", &hs) || hs.rank != 2 || hs.dims[0] != B || hs.dims[1] != H ||
	    !ali_mil_param_shape(c->n, "initial_c", &ws) || ws.rank != 2 || ws.dims[0] != B || ws.dims[1] != H)
		return ali_mil_say(c, "the initial states are not [B, H] = [%lld, %lld]", (long long)B, (long long)H);
	if (c->s->opts && c->s->opts->allow < AL_EQ_REASSOCIATE) { /* reported, nothing built */
		snprintf(c->after, sizeof c->after, "%lld steps of linear x2 + split + sigmoid / tanh + mul / add "
			 "(%lld ops)", (long long)T, (long long)(T * LSTM_OPS_PER_STEP + 1));
		return true;
	}
	const char *base = c->n->outputs[0];
	const char *em = ali_mil_fresh(c, base, "end_mask"), *sm = ali_mil_fresh(c, base, "squeeze_mask");
	const char *ns = ali_mil_fresh(c, base, "num_splits"), *ax = ali_mil_fresh(c, base, "split_axis");
	const char *sax = ali_mil_fresh(c, base, "seq_axis");
	const char **hseq = ali_arena_array(&c->s->arena, (size_t)T, sizeof *hseq);
	if (!em || !sm || !ns || !ax || !sax || !hseq)
		return ali_mil_say(c, "no free value name");
	bool blob;
	int64_t three[1] = {3};
	double emv[3] = {0, 1, 1}, smv[3] = {1, 0, 0}, zero = 0;
	if (!ali_mil_pre_const(c, em, AL_DT_BOOL, 1, three, emv, 3, &blob) ||
	    !ali_mil_pre_const(c, sm, AL_DT_BOOL, 1, three, smv, 3, &blob) || !ali_mil_pre_scalar(c, ns, AL_DT_INT32, 4) ||
	    !ali_mil_pre_scalar(c, ax, AL_DT_INT32, -1))
		return false;
	if (seq ? !ali_mil_pre_scalar(c, sax, AL_DT_INT32, 0) : !ali_mil_pre_const(c, sax, AL_DT_INT32, 1, (int64_t[]){1}, &zero, 1, &blob))
		return false;
	int64_t dBI[2] = {B, I}, dBG[2] = {B, 4 * H}, dBH[2] = {B, H};
	for (int64_t t = 0; t < T; t++) {
		bool last = t == T - 1;
		char sfx[48];
#define NM(var, tag)                                                                                     \
	snprintf(sfx, sizeof sfx, "t%lld_%s", (long long)t, tag);                                       \
	const char *var = ali_mil_fresh(c, base, sfx);                                                         \
	if (!var)                                                                                        \
		return ali_mil_say(c, "no free value name");
		NM(bn, "begin") NM(en, "end") NM(xt, "x") NM(gx, "gx") NM(gh, "gh") NM(g, "g")
		NM(gi, "gi") NM(gf, "gf") NM(go, "go") NM(gz, "gz") NM(ig, "i") NM(fg, "f") NM(og, "o")
		NM(zg, "z") NM(fc, "fc") NM(iz, "iz") NM(tc, "tanh_c")
#undef NM
		const char *cn = last ? c->n->outputs[2] : ali_mil_fresh(c, base, "c");
		const char *hn = last ? c->n->outputs[1] : ali_mil_fresh(c, base, "h");
		if (!cn || !hn)
			return ali_mil_say(c, "no free value name");
		double bv[3] = {(double)t, 0, 0}, ev[3] = {(double)t + 1, 0, 0};
		if (!ali_mil_pre_const(c, bn, AL_DT_INT32, 1, three, bv, 3, &blob) ||
		    !ali_mil_pre_const(c, en, AL_DT_INT32, 1, three, ev, 3, &blob))
			return false;
		const char *gates[4] = {gi, gf, go, gz};
		bool ok = pre_op(c, "slice_by_index",
				 (struct kv[]){{"x", x}, {"begin", bn}, {"end", en}, {"end_mask", em},
					       {"squeeze_mask", sm}}, 5, &xt, 1, dt, 2, dBI) &&
			  (bias ? pre_op(c, "linear", (struct kv[]){{"x", xt}, {"weight", wih}, {"bias", bias}}, 3,
					 &gx, 1, dt, 2, dBG)
				: pre_op(c, "linear", (struct kv[]){{"x", xt}, {"weight", wih}}, 2, &gx, 1, dt, 2, dBG)) &&
			  pre_op(c, "linear", (struct kv[]){{"x", h}, {"weight", whh}}, 2, &gh, 1, dt, 2, dBG) &&
			  pre_op(c, "add", (struct kv[]){{"x", gx}, {"y", gh}}, 2, &g, 1, dt, 2, dBG) &&
			  pre_op(c, "split", (struct kv[]){{"x", g}, {"num_splits", ns}, {"axis", ax}}, 3, gates, 4,
				 dt, 2, dBH) &&
			  pre_op(c, "sigmoid", (struct kv[]){{"x", gi}}, 1, &ig, 1, dt, 2, dBH) &&
			  pre_op(c, "sigmoid", (struct kv[]){{"x", gf}}, 1, &fg, 1, dt, 2, dBH) &&
			  pre_op(c, "sigmoid", (struct kv[]){{"x", go}}, 1, &og, 1, dt, 2, dBH) &&
			  pre_op(c, "tanh", (struct kv[]){{"x", gz}}, 1, &zg, 1, dt, 2, dBH) &&
			  pre_op(c, "mul", (struct kv[]){{"x", fg}, {"y", cc}}, 2, &fc, 1, dt, 2, dBH) &&
			  pre_op(c, "mul", (struct kv[]){{"x", ig}, {"y", zg}}, 2, &iz, 1, dt, 2, dBH) &&
			  pre_op(c, "add", (struct kv[]){{"x", fc}, {"y", iz}}, 2, &cn, 1, dt, 2, dBH) &&
			  pre_op(c, "tanh", (struct kv[]){{"x", cn}}, 1, &tc, 1, dt, 2, dBH) &&
			  pre_op(c, "mul", (struct kv[]){{"x", og}, {"y", tc}}, 2, &hn, 1, dt, 2, dBH);
		if (!ok)
			return false;
		h = hn, cc = cn, hseq[t] = hn;
	}
	if (!end_recurrent(c, base, seq, hseq, T, h, sax))
		return false;
	snprintf(c->after, sizeof c->after, "%lld steps of linear x2 + split + sigmoid / tanh + mul / add, then %s "
		 "(%lld ops)", (long long)T, seq ? "stack" : "expand_dims", (long long)(T * LSTM_OPS_PER_STEP + 1));
	return true;
}

/* ------------------------------------------------------------------ gru unrolled
 * An ML Program gru (iOS15-17: the reset gate applied to h before the
 * recurrent product) runs on the CPU (ANE021) like the lstm. Unrolled with the
 * weights regrouped once into new consts, the reset and update rows [r | z]
 * and the output rows o (MIL's gate order is r, o, z):
 *   ax_rz = linear(x, W_ih[r|z], b[r|z])  [T, B, 2H]   (once, as the
 *   ax_o  = linear(x, W_ih[o],   b[o])    [T, B, H]     kernel's input gemm)
 * per step t (t = T-1 .. 0 for direction reverse):
 *   rz  = sigmoid(slice(ax_rz, t) + linear(h, W_hh[r|z]));  r, z = split(rz, 2)
 *   o   = tanh(slice(ax_o, t) + linear(r * h, W_hh[o]))
 *   h   = (1 - z) * o + z * h
 * The same terms as the interpreter's gru kernel in the same order (its input
 * projection is one gemm up front too); the class is reassociate because a
 * BLAS may block the per-step products differently from the one-gemm form.
 * Limits as for the lstm (fp16, default activations, at most GRU_MAX_STEPS),
 * and the regrouped weights copied: at most GRU_MAX_COPY values a matrix. */

#define GRU_MAX_STEPS 16
#define GRU_OPS_PER_STEP 14
#define GRU_MAX_COPY (4L << 20)


/* The n values of const parameter p (an immediate, or a blob in weight.bin of
 * fp16 / fp32) into a new array; *dt its dtype. NULL with the reason. */
static double *const_values(struct al_mil_pass *c, const char *p, size_t n, int *dt)
{
	if (n > (size_t)GRU_MAX_COPY)
		return ali_mil_say(c, "'%s' has %zu values: more than %ld would be copied", p, n, GRU_MAX_COPY),
		       NULL;
	double *v = ali_malloc(n * sizeof *v + 1);
	if (!v)
		return ali_mil_say(c, "out of memory"), NULL;
	long k = ali_mil_param_floats(c->n, p, v, n);
	if (k > 0) {
		const struct al_ttype *tt = NULL;
		al_span b;
		if (ali_mil_param_binding(c->n, p, 0, &b) == 1) {
			char nm[256];
			snprintf(nm, sizeof nm, "%.*s", (int)(b.n < 255 ? b.n : 255), (const char *)b.p);
			tt = ali_mil_value_type(c->n, nm);
		}
		*dt = tt && tt->kind == 0 ? tt->dtype : AL_DT_UNKNOWN;
		if ((size_t)k != n) {
			ali_free(v);
			return ali_mil_say(c, "'%s' holds %ld values, not %zu", p, k, n), NULL;
		}
		return v;
	}
	al_span d;
	struct al_mil_value mv;
	if (!ali_mil_param_blob(c, p, &d, dt, &mv)) {
		ali_free(v);
		return NULL;
	}
	size_t w = *dt == AL_DT_FP16 ? 2 : 4;
	if (d.n != n * w) {
		ali_free(v);
		return ali_mil_say(c, "'%s' holds %zu bytes, not %zu values", p, d.n, n), NULL;
	}
	for (size_t i = 0; i < n; i++) {
		const uint8_t *q = d.p + i * w;
		if (w == 2) {
			v[i] = ali_f16_to_f32((uint16_t)(q[0] | q[1] << 8));
		} else {
			uint32_t u = al_rd32le(q);
			float f;
			memcpy(&f, &u, 4);
			v[i] = f;
		}
	}
	return v;
}

/* New consts from the [3H, K] rows of p (gate blocks r, o, z): rz = [r | z]
 * rows ([2H, K], or [2H] when K is 0: a bias) and o. */
static bool regroup(struct al_mil_pass *c, const char *p, int64_t H, int64_t K, const char *rz, const char *o)
{
	int64_t k = K ? K : 1;
	int dt;
	double *v = const_values(c, p, (size_t)(3 * H * k), &dt);
	if (!v)
		return false;
	if (dt != AL_DT_FP16 && dt != AL_DT_FP32) {
		ali_free(v);
		return ali_mil_say(c, "'%s' is %s (fp16 / fp32 only)", p, al_dtype_name(dt));
	}
	double *g = ali_malloc((size_t)(3 * H * k) * sizeof *g + 1);
	if (!g) {
		ali_free(v);
		return ali_mil_say(c, "out of memory");
	}
	size_t blk = (size_t)(H * k) * sizeof *g;
	memcpy(g, v, blk);                           /* r */
	memcpy(g + H * k, v + 2 * H * k, blk);       /* z */
	memcpy(g + 2 * H * k, v + H * k, blk);       /* o */
	ali_free(v);
	bool blob;
	int64_t d2[2] = {2 * H, K}, d1[2] = {H, K};
	bool ok = ali_mil_pre_const(c, rz, dt, K ? 2 : 1, d2, g, (size_t)(2 * H * k), &blob) &&
		  ali_mil_pre_const(c, o, dt, K ? 2 : 1, d1, g + 2 * H * k, (size_t)(H * k), &blob);
	ali_free(g);
	return ok;
}

bool ali_pass_mil_gru_unroll(struct al_mil_pass *c)
{
	if (!c->src || !c->src->mil_scope || !c->src->msg.p)
		return false; /* a NeuralNetwork gru: nn-gru-unroll says why (not reported here) */
	if (c->n->n_outputs != 2 || !c->n->out_types)
		return ali_mil_say(c, "%u outputs (2 expected)", c->n->n_outputs);
	char dir[32] = "forward";
	if (ali_mil_param_present(c->n, "direction") && !ali_mil_param_string(c->n, "direction", dir, sizeof dir))
		return ali_mil_say(c, "'direction' is not a constant string");
	bool rev = strcmp(dir, "reverse") == 0;
	if (!rev && strcmp(dir, "forward") != 0)
		return ali_mil_say(c, "direction %s: only forward and reverse grus are unrolled", dir);
	if (!act_is(c, "recurrent_activation", "sigmoid") || !act_is(c, "activation", "tanh"))
		return false;
	double seq = 0, after = 0;
	if (!ali_mil_const_scalar(c, "output_sequence", &seq, true, 0) || !ali_mil_const_scalar(c, "reset_after", &after, true, 0))
		return false;
	if (after != 0)
		return ali_mil_say(c, "reset_after (the reset gate applied after the recurrent product, "
				   "iOS 18): not unrolled");
	if (ali_mil_param_present(c->n, "input_bias"))
		return ali_mil_say(c, "an input_bias (iOS 18) is not unrolled");
	int64_t T, B, I, H;
	if (!recurrent_dims(c, "gru", 3, GRU_MAX_STEPS, GRU_OPS_PER_STEP, &T, &B, &I, &H))
		return false;
	int dt = AL_DT_FP16; /* recurrent_dims checked it */
	struct al_shape hs, is;
	if (!ali_mil_param_shape(c->n, "weight_ih", &is) || !ali_mil_static_shape(&is) || is.rank != 2 ||
	    is.dims[0] != 3 * H || is.dims[1] != I)
		return ali_mil_say(c, "'weight_ih' is not a static [3H, I] = [%lld, %lld]", (long long)(3 * H),
			   (long long)I);
	const char *x = bound(c, "x", false);
	if (!x || !bound(c, "weight_ih", true) || !bound(c, "weight_hh", true))
		return false;
	bool bias = ali_mil_param_present(c->n, "bias");
	if (bias && !bound(c, "bias", true))
		return false;
	const char *h = bound(c, "initial_h", false);
	if (!h)
		return false;
	if (!ali_mil_param_shape(c->n, "initial_h", &hs) || hs.rank != 2 || hs.dims[0] != B || hs.dims[1] != H)
		return ali_mil_say(c, "the initial state is not [B, H] = [%lld, %lld]", (long long)B, (long long)H);
	if ((uint64_t)(3 * H) * (uint64_t)(I > H ? I : H) > (uint64_t)GRU_MAX_COPY)
		return ali_mil_say(c, "3H x %lld = %lld weights: more than %ld would be regrouped", (long long)(I > H ? I : H),
			   (long long)(3 * H * (I > H ? I : H)), GRU_MAX_COPY);
	if (c->s->opts && c->s->opts->allow < AL_EQ_REASSOCIATE) { /* reported, nothing built */
		snprintf(c->after, sizeof c->after, "%lld steps%s of linear + sigmoid / tanh + mul / add / sub "
			 "(%lld ops, weights regrouped r|z, o)", (long long)T, rev ? " (reversed)" : "",
			 (long long)(T * GRU_OPS_PER_STEP + 3));
		return true;
	}
	const char *base = c->n->outputs[0];
	const char *wirz = ali_mil_fresh(c, base, "wih_rz"), *wio = ali_mil_fresh(c, base, "wih_o");
	const char *whrz = ali_mil_fresh(c, base, "whh_rz"), *who = ali_mil_fresh(c, base, "whh_o");
	const char *brz = ali_mil_fresh(c, base, "b_rz"), *bo = ali_mil_fresh(c, base, "b_o");
	const char *axrz = ali_mil_fresh(c, base, "ax_rz"), *axo = ali_mil_fresh(c, base, "ax_o");
	const char *em = ali_mil_fresh(c, base, "end_mask"), *sm = ali_mil_fresh(c, base, "squeeze_mask");
	const char *ns = ali_mil_fresh(c, base, "num_splits"), *ax = ali_mil_fresh(c, base, "split_axis");
	const char *one = ali_mil_fresh(c, base, "one"), *sax = ali_mil_fresh(c, base, "seq_axis");
	const char **hseq = ali_arena_array(&c->s->arena, (size_t)T, sizeof *hseq);
	if (!wirz || !wio || !whrz || !who || !brz || !bo || !axrz || !axo || !em || !sm || !ns || !ax || !one ||
	    !sax || !hseq)
		return ali_mil_say(c, "no free value name");
	if (!regroup(c, "weight_ih", H, I, wirz, wio) || !regroup(c, "weight_hh", H, H, whrz, who) ||
	    (bias && !regroup(c, "bias", H, 0, brz, bo)))
		return false;
	bool blob;
	int64_t three[1] = {3};
	double emv[3] = {0, 1, 1}, smv[3] = {1, 0, 0}, zero = 0;
	if (!ali_mil_pre_const(c, em, AL_DT_BOOL, 1, three, emv, 3, &blob) ||
	    !ali_mil_pre_const(c, sm, AL_DT_BOOL, 1, three, smv, 3, &blob) || !ali_mil_pre_scalar(c, ns, AL_DT_INT32, 2) ||
	    !ali_mil_pre_scalar(c, ax, AL_DT_INT32, -1) || !ali_mil_pre_scalar(c, one, dt, 1))
		return false;
	if (seq ? !ali_mil_pre_scalar(c, sax, AL_DT_INT32, 0) : !ali_mil_pre_const(c, sax, AL_DT_INT32, 1, (int64_t[]){1}, &zero, 1, &blob))
		return false;
	int64_t dT2[3] = {T, B, 2 * H}, dT1[3] = {T, B, H}, dB2[2] = {B, 2 * H}, dBH[2] = {B, H};
	bool ok = bias ? pre_op(c, "linear", (struct kv[]){{"x", x}, {"weight", wirz}, {"bias", brz}}, 3, &axrz, 1,
				dt, 3, dT2) &&
			 pre_op(c, "linear", (struct kv[]){{"x", x}, {"weight", wio}, {"bias", bo}}, 3, &axo, 1, dt, 3,
				dT1)
		       : pre_op(c, "linear", (struct kv[]){{"x", x}, {"weight", wirz}}, 2, &axrz, 1, dt, 3, dT2) &&
			 pre_op(c, "linear", (struct kv[]){{"x", x}, {"weight", wio}}, 2, &axo, 1, dt, 3, dT1);
	if (!ok)
		return false;
	for (int64_t s = 0; s < T; s++) {
		int64_t t = rev ? T - 1 - s : s;
		bool last = s == T - 1;
		char sfx[48];
#define NM(var, tag)                                                                                     \
	snprintf(sfx, sizeof sfx, "t%lld_%s", (long long)t, tag);                                       \
	const char *var = ali_mil_fresh(c, base, sfx);                                                         \
	if (!var)                                                                                        \
		return ali_mil_say(c, "no free value name");
		NM(bn, "begin") NM(en, "end") NM(xrz, "x_rz") NM(xo, "x_o") NM(hrz, "h_rz") NM(arz, "a_rz")
		NM(rz, "rz") NM(r, "r") NM(z, "z") NM(rh, "rh") NM(ho, "h_o") NM(ao, "a_o") NM(o, "o")
		NM(nz, "1mz") NM(p1, "p") NM(p2, "q")
#undef NM
		const char *hn = last ? c->n->outputs[1] : ali_mil_fresh(c, base, "h");
		if (!hn)
			return ali_mil_say(c, "no free value name");
		double bv[3] = {(double)t, 0, 0}, ev[3] = {(double)t + 1, 0, 0};
		if (!ali_mil_pre_const(c, bn, AL_DT_INT32, 1, three, bv, 3, &blob) ||
		    !ali_mil_pre_const(c, en, AL_DT_INT32, 1, three, ev, 3, &blob))
			return false;
		const char *gates[2] = {r, z};
		ok = pre_op(c, "slice_by_index",
			    (struct kv[]){{"x", axrz}, {"begin", bn}, {"end", en}, {"end_mask", em}, {"squeeze_mask", sm}},
			    5, &xrz, 1, dt, 2, dB2) &&
		     pre_op(c, "slice_by_index",
			    (struct kv[]){{"x", axo}, {"begin", bn}, {"end", en}, {"end_mask", em}, {"squeeze_mask", sm}},
			    5, &xo, 1, dt, 2, dBH) &&
		     pre_op(c, "linear", (struct kv[]){{"x", h}, {"weight", whrz}}, 2, &hrz, 1, dt, 2, dB2) &&
		     pre_op(c, "add", (struct kv[]){{"x", hrz}, {"y", xrz}}, 2, &arz, 1, dt, 2, dB2) &&
		     pre_op(c, "sigmoid", (struct kv[]){{"x", arz}}, 1, &rz, 1, dt, 2, dB2) &&
		     pre_op(c, "split", (struct kv[]){{"x", rz}, {"num_splits", ns}, {"axis", ax}}, 3, gates, 2, dt, 2,
			    dBH) &&
		     pre_op(c, "mul", (struct kv[]){{"x", r}, {"y", h}}, 2, &rh, 1, dt, 2, dBH) &&
		     pre_op(c, "linear", (struct kv[]){{"x", rh}, {"weight", who}}, 2, &ho, 1, dt, 2, dBH) &&
		     pre_op(c, "add", (struct kv[]){{"x", ho}, {"y", xo}}, 2, &ao, 1, dt, 2, dBH) &&
		     pre_op(c, "tanh", (struct kv[]){{"x", ao}}, 1, &o, 1, dt, 2, dBH) &&
		     pre_op(c, "sub", (struct kv[]){{"x", one}, {"y", z}}, 2, &nz, 1, dt, 2, dBH) &&
		     pre_op(c, "mul", (struct kv[]){{"x", nz}, {"y", o}}, 2, &p1, 1, dt, 2, dBH) &&
		     pre_op(c, "mul", (struct kv[]){{"x", z}, {"y", h}}, 2, &p2, 1, dt, 2, dBH) &&
		     pre_op(c, "add", (struct kv[]){{"x", p1}, {"y", p2}}, 2, &hn, 1, dt, 2, dBH);
		if (!ok)
			return false;
		h = hn, hseq[s] = hn; /* processing order, as coremltools' reference (y[0]: x[T-1] for reverse) */
	}
	if (!end_recurrent(c, base, seq, hseq, T, h, sax))
		return false;
	snprintf(c->after, sizeof c->after, "%lld steps%s of linear + sigmoid / tanh + mul / add / sub, then %s "
		 "(%lld ops, weights regrouped r|z, o)", (long long)T, rev ? " (reversed)" : "",
		 seq ? "stack" : "expand_dims", (long long)(T * GRU_OPS_PER_STEP + 3));
	return true;
}
