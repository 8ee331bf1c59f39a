/* SPDX-License-Identifier: MIT */
/* mil_recurrent.c: the ML Program recurrent ops unrolled into steps the ANE
 * runs, mil-lstm-unroll, mil-lstm-unroll-fp16 and mil-gru-unroll (docs/surgery.md
 * has their rows; tests/pass_mil_lstm_unroll.sh, tests/fix_mil.sh). */
#include "passes.h"
#include "kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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
 * (read by name, no blob copied). Reverse: the steps T-1 .. 0, the sequence
 * in processing order (as the definition's reference gives it); bidirectional:
 * a second chain over T-1 .. 0 with the _back weights, states and outputs
 * concatenated on the last axis. An fp32 lstm (coremltools' iOS 15 programs) is
 * mil-lstm-unroll-fp16's (approximate): the same steps in fp16 ops, weights
 * copied to fp16, casts where its fp32 inputs and outputs need them (fp32
 * steps would stay off the ANE, ANE029, and mil-fp16-compute leaves a mixed
 * program alone). Default activations, no peephole or clip, at most
 * LSTM_MAX_STEPS steps: the program grows by 14 ops per step and every step
 * depends on the one before, so a long sequence becomes a long chain of small
 * dispatches and a large program for the ANE compiler. */

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
	ali_mil_put_type(&op, type);
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
	if (const_only && (!pr || pr->kind != AL_MILK_const))
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

/* The checks an unrolled recurrent op (lstm: 4 gates, gru: 3) opens with: fp16
 * (or fp32 when fp32_ok),
 * x a static [T, B, I] of 1..max_steps steps, weight_hh a static [gates*H, H],
 * gates*H under the ANE's axis cap. */
static bool recurrent_dims(struct al_mil_pass *c, const char *kind, int gates, int max_steps, int ops_per_step,
			   bool fp32_ok, int64_t *T, int64_t *B, int64_t *I, int64_t *H)
{
	int dt = ali_mil_out_dtype(c);
	if (dt != AL_DT_FP16 && !(fp32_ok && dt == AL_DT_FP32))
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
		ali_mil_put_type(&c->layer, "stack");
		ali_mil_put_inputs(&c->layer, "values", hseq, (size_t)T);
		ali_mil_put_input(&c->layer, "axis", sax);
	} else {
		ali_mil_put_type(&c->layer, "expand_dims");
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

/* The n values of const parameter p into a new array (gru section below). */
static double *const_values(struct al_mil_pass *c, const char *p, size_t n, int *dt);
#define GRU_MAX_COPY (4L << 20)

/* A scalar string const before c->n (a cast's dtype). */
static bool pre_string(struct al_mil_pass *c, const char *name, const char *s)
{
	struct al_buf op = {0}, v = {0};
	ali_mil_put_type(&op, "const");
	ali_mil_put_string_value(&v, s);
	ali_mil_put_attr(&op, "val", v.p, v.n);
	op.failed |= v.failed;
	ali_buf_free(&v);
	return ali_mil_pre_op_end(c, &op, &name, 1, AL_DT_STRING, 0, NULL);
}

/* What one lstm unrolling builds from: the names of its weights per direction
 * (d 1: the backward chain of a bidirectional op), whether the op is fp32 and
 * the new ops compute in fp16 (half), and the shared consts. */
struct lstm_build {
	struct al_mil_pass *c;
	const char *base;
	bool half;
	int dirs;  /* 1, or 2: bidirectional */
	bool rev;  /* a unidirectional reverse op */
	int64_t T, B, I, H;
	const char *wih[2], *whh[2], *bias[2];
	const char *ns, *ax, *to16, *to32;
	double seq;       /* output 0 the whole sequence (else the last step) */
	const char *shape; /* the words of the "after" line: the chains' form */
};

static const char *const lstm_wnames[2][3] = {{"weight_ih", "weight_hh", "bias"},
					      {"weight_ih_back", "weight_hh_back", "bias_back"}};

/* Const parameter p ([rows, cols], or [rows] when cols is 0) as the new ops
 * read it: the parameter's own value, or (half) an fp16 copy named base_tag. */
static const char *lstm_weight(struct lstm_build *L, const char *p, int64_t rows, int64_t cols, const char *tag)
{
	struct al_mil_pass *c = L->c;
	if (!bound(c, p, true) || !L->half)
		return L->half ? NULL : bound(c, p, true);
	int64_t k = cols ? cols : 1;
	if ((uint64_t)rows * (uint64_t)k > (uint64_t)GRU_MAX_COPY)
		return ali_mil_say(c, "'%s' has %lld values: more than %ld would be copied to fp16", p,
				   (long long)(rows * k), GRU_MAX_COPY), NULL;
	int dt;
	double *v = const_values(c, p, (size_t)(rows * k), &dt);
	if (!v)
		return NULL;
	for (int64_t i = 0; i < rows * k; i++)
		if (!(fabs(v[i]) <= 65504.0)) {
			double bad = v[i];
			ali_free(v);
			return ali_mil_say(c, "'%s' holds %g: beyond fp16's range", p, bad), NULL;
		}
	const char *nm = ali_mil_fresh(c, L->base, tag);
	bool blob;
	int64_t d[2] = {rows, cols};
	bool ok = nm && ali_mil_pre_const(c, nm, AL_DT_FP16, cols ? 2 : 1, d, v, (size_t)(rows * k), &blob);
	ali_free(v);
	if (!nm)
		return ali_mil_say(c, "no free value name"), NULL;
	return ok ? nm : NULL;
}

/* A new op named base_tag (a fresh name); NULL with the reason. */
static const char *lstm_op(struct lstm_build *L, const char *type, const struct kv *in, int n_in, const char *tag,
			   int dt, int rank, const int64_t *dims)
{
	const char *nm = ali_mil_fresh(L->c, L->base, tag);
	if (!nm)
		return ali_mil_say(L->c, "no free value name"), NULL;
	return pre_op(L->c, type, in, n_in, &nm, 1, dt, rank, dims) ? nm : NULL;
}

/* Whether every reader of value v (an output of c->n) is a cast, in c->n's own
 * block, v no function output: then v may turn fp16 under its own name (a cast
 * reads any float dtype). */
static bool read_by_casts(struct al_mil_pass *c, const char *v)
{
	const struct al_graph *g = c->n->owner;
	const struct al_submodel *sub = c->src->sub;
	if (!g || g->depth != 0)
		return false;
	for (uint32_t o = 0; o < sub->n_outputs; o++)
		if (sub->outputs[o].name && strcmp(sub->outputs[o].name, v) == 0)
			return false;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *r = &g->nodes[k];
		bool reads = false;
		for (uint32_t i = 0; i < r->n_inputs && !reads; i++)
			reads = r->inputs[i] && strcmp(r->inputs[i], v) == 0;
		if (reads && (r->n_sub || r->kind != AL_MILK_cast))
			return false;
	}
	return true;
}

/* The fp16 value an fp32 value v already has: the x of the cast (fp16 -> fp32)
 * that produced v, or the output of a cast (v -> fp16) before c->n. */
static const char *fp16_twin(struct al_mil_pass *c, const char *v)
{
	const struct al_node *pr = ali_mil_producer(c->n, v);
	const struct al_ttype *in;
	al_span xb;
	if (pr && pr->kind == AL_MILK_cast && (in = ali_mil_param_type(pr, "x")) &&
	    in->kind == 0 && in->dtype == AL_DT_FP16 && ali_mil_param_binding(pr, "x", 0, &xb) == 1)
		return ali_arena_strndup(&c->s->arena, xb.p, xb.n);
	const struct al_graph *g = c->n->owner;
	for (uint32_t k = 0; g && &g->nodes[k] < c->n && k < g->n_nodes; k++) {
		const struct al_node *r = &g->nodes[k];
		if (r->kind == AL_MILK_cast && r->n_outputs == 1 && r->out_types &&
		    r->out_types[0].kind == 0 && r->out_types[0].dtype == AL_DT_FP16 &&
		    ali_mil_param_binding(r, "x", 0, &xb) == 1 && ali_span_eq(xb, v))
			return r->outputs[0];
	}
	return NULL;
}

/* Parameter p ([.., n] of the op's dtype) as the new ops read it: itself (an
 * fp16 op); half: an fp16 copy of a const, the fp16 value it was cast from or
 * to, else a new cast (that one stays off the ANE: ANE029, c->stays_off). */
static const char *lstm_in(struct lstm_build *L, const char *p, const char *tag, int rank, const int64_t *dims)
{
	struct al_mil_pass *c = L->c;
	const char *v = bound(c, p, false);
	if (!v || !L->half)
		return v;
	const struct al_node *pr = ali_mil_producer(c->n, v);
	if (rank == 2 && pr && pr->kind == AL_MILK_const) /* an initial state */
		return lstm_weight(L, p, dims[0], dims[1], tag);
	const char *tw = fp16_twin(c, v);
	if (tw)
		return tw;
	const char *nm = lstm_op(L, "cast", (struct kv[]){{"x", v}, {"dtype", L->to16}}, 2, tag, AL_DT_FP16, rank, dims);
	if (nm && c->stays_off)
		return ali_mil_say(c, "'%s' and '%s' would need casts from fp32 (each off the ANE: ANE029)",
				   c->stays_off, v), NULL;
	if (nm)
		c->stays_off = nm;
	return nm;
}

/* A variadic op before c->n: type(values = v[0..n), axis) named nm, its result of
 * the given rank (stack: one more than its values', concat: theirs). */
static bool lstm_join(struct lstm_build *L, const char *type, const char *const *v, size_t n, const char *axis,
		      const char *nm, int rank, const int64_t *dims)
{
	struct al_buf op = {0};
	ali_mil_put_type(&op, type);
	ali_mil_put_inputs(&op, "values", v, n);
	ali_mil_put_input(&op, "axis", axis);
	return ali_mil_pre_op_end(L->c, &op, &nm, 1, AL_DT_FP16, rank, dims);
}

/* out = cast(v, fp32) before c->n ([B, n] values). */
static bool lstm_cast32(struct lstm_build *L, const char *v, const char *out, const int64_t *dims)
{
	return pre_op(L->c, "cast", (struct kv[]){{"x", v}, {"dtype", L->to32}}, 2, &out, 1, AL_DT_FP32, 2, dims);
}

/* One step of direction d at time t: gates from x_t and *h, the new *cc and *h
 * (named hn / cn when given: the op's own outputs). */
static bool lstm_step(struct lstm_build *L, int d, int64_t t, const char *xt, const char **h, const char **cc,
		      const char *hn, const char *cn)
{
	struct al_mil_pass *c = L->c;
	int dt = AL_DT_FP16;
	int64_t dBG[2] = {L->B, 4 * L->H}, dBH[2] = {L->B, L->H};
	char sfx[16][48];
	static const char *const tags[16] = {"gx", "gh", "g", "gi", "gf", "go", "gz", "i", "f", "o",
					     "z", "fc", "iz", "tanh_c", "c", "h"};
	const char *nm[16];
	for (int k = 0; k < 16; k++) {
		snprintf(sfx[k], sizeof sfx[k], "%st%lld_%s", d ? "b_" : "", (long long)t, tags[k]);
		nm[k] = k == 14 && cn ? cn : k == 15 && hn ? hn : ali_mil_fresh(c, L->base, sfx[k]);
		if (!nm[k])
			return ali_mil_say(c, "no free value name");
	}
	const char *gx = nm[0], *gh = nm[1], *g = nm[2], *gates[4] = {nm[3], nm[4], nm[5], nm[6]};
	const char *ig = nm[7], *fg = nm[8], *og = nm[9], *zg = nm[10], *fc = nm[11], *iz = nm[12], *tc = nm[13];
	const char *cnew = nm[14], *hnew = nm[15];
	bool ok = (L->bias[d] ? pre_op(c, "linear", (struct kv[]){{"x", xt}, {"weight", L->wih[d]}, {"bias", L->bias[d]}},
				       3, &gx, 1, dt, 2, dBG)
			      : pre_op(c, "linear", (struct kv[]){{"x", xt}, {"weight", L->wih[d]}}, 2, &gx, 1, dt, 2, dBG)) &&
		  pre_op(c, "linear", (struct kv[]){{"x", *h}, {"weight", L->whh[d]}}, 2, &gh, 1, dt, 2, dBG) &&
		  pre_op(c, "add", (struct kv[]){{"x", gx}, {"y", gh}}, 2, &g, 1, dt, 2, dBG) &&
		  pre_op(c, "split", (struct kv[]){{"x", g}, {"num_splits", L->ns}, {"axis", L->ax}}, 3, gates, 4, dt, 2,
			 dBH) &&
		  pre_op(c, "sigmoid", (struct kv[]){{"x", gates[0]}}, 1, &ig, 1, dt, 2, dBH) &&
		  pre_op(c, "sigmoid", (struct kv[]){{"x", gates[1]}}, 1, &fg, 1, dt, 2, dBH) &&
		  pre_op(c, "sigmoid", (struct kv[]){{"x", gates[2]}}, 1, &og, 1, dt, 2, dBH) &&
		  pre_op(c, "tanh", (struct kv[]){{"x", gates[3]}}, 1, &zg, 1, dt, 2, dBH) &&
		  pre_op(c, "mul", (struct kv[]){{"x", fg}, {"y", *cc}}, 2, &fc, 1, dt, 2, dBH) &&
		  pre_op(c, "mul", (struct kv[]){{"x", ig}, {"y", zg}}, 2, &iz, 1, dt, 2, dBH) &&
		  pre_op(c, "add", (struct kv[]){{"x", fc}, {"y", iz}}, 2, &cnew, 1, dt, 2, dBH) &&
		  pre_op(c, "tanh", (struct kv[]){{"x", cnew}}, 1, &tc, 1, dt, 2, dBH) &&
		  pre_op(c, "mul", (struct kv[]){{"x", og}, {"y", tc}}, 2, &hnew, 1, dt, 2, dBH);
	*h = hnew, *cc = cnew;
	return ok;
}

/* The checks both lstm rows open with (half: the op is fp32 and the new ops
 * compute in fp16): three outputs, sigmoid / tanh activations, no peephole,
 * no clip, a static length of at most LSTM_MAX_STEPS, static weights. */
static bool lstm_match(struct al_mil_pass *c, struct lstm_build *L)
{
	if (!c->src || !c->src->mil_scope || !c->src->msg.p)
		return ali_mil_say(c, "not an ML Program op");
	if (c->n->n_outputs != 3 || !c->n->out_types)
		return ali_mil_say(c, "%u outputs (3 expected)", c->n->n_outputs);
	char dir[32] = "forward";
	if (ali_mil_param_present(c->n, "direction") && !ali_mil_param_string(c->n, "direction", dir, sizeof dir))
		return ali_mil_say(c, "'direction' is not a constant string");
	L->rev = strcmp(dir, "reverse") == 0;
	if (strcmp(dir, "bidirectional") == 0)
		L->dirs = 2;
	else if (!L->rev && strcmp(dir, "forward") != 0)
		return ali_mil_say(c, "direction %s: not an lstm direction", dir);
	if (!act_is(c, "recurrent_activation", "sigmoid") || !act_is(c, "cell_activation", "tanh") ||
	    !act_is(c, "activation", "tanh"))
		return false;
	if (ali_mil_param_present(c->n, "peephole") || ali_mil_param_present(c->n, "peephole_back"))
		return ali_mil_say(c, "a peephole lstm is not unrolled");
	double clip = 0;
	if (ali_mil_param_present(c->n, "clip") && (!ali_mil_const_scalar(c, "clip", &clip, true, 0) || clip != 0))
		return ali_mil_say(c, "a clipped lstm (clip %g) is not unrolled", clip);
	if (!ali_mil_const_scalar(c, "output_sequence", &L->seq, true, 0))
		return false;
	/* every new op is listed (c->names): T slices, 13 ops a step and direction, up to 32 more */
	int max_steps = (AL_PASS_MAX_NAMES - 32) / (1 + 13 * L->dirs);
	if (max_steps > LSTM_MAX_STEPS)
		max_steps = LSTM_MAX_STEPS;
	if (!recurrent_dims(c, "lstm", 4, max_steps, L->dirs * LSTM_OPS_PER_STEP, L->half, &L->T, &L->B, &L->I, &L->H))
		return false;
	int64_t B = L->B, I = L->I, H = L->H, DH = L->dirs * H;
	struct al_shape hs, cs, is;
	if (!ali_mil_param_shape(c->n, "initial_h", &hs) || hs.rank != 2 || hs.dims[0] != B || hs.dims[1] != DH ||
	    !ali_mil_param_shape(c->n, "initial_c", &cs) || cs.rank != 2 || cs.dims[0] != B || cs.dims[1] != DH)
		return ali_mil_say(c, "the initial states are not [B, %sH] = [%lld, %lld]", L->dirs == 2 ? "2" : "",
				   (long long)B, (long long)DH);
	if (!ali_mil_param_shape(c->n, "weight_ih", &is) || is.rank != 2 || is.dims[0] != 4 * H || is.dims[1] != I)
		return ali_mil_say(c, "'weight_ih' is not a static [4H, I] = [%lld, %lld]", (long long)(4 * H),
				   (long long)I);
	for (int d = 0; d < L->dirs; d++)
		for (int k = 0; k < 3; k++)
			if ((k < 2 || ali_mil_param_present(c->n, lstm_wnames[d][k])) && !bound(c, lstm_wnames[d][k], true))
				return false;
	return bound(c, "x", false) && bound(c, "initial_h", false) && bound(c, "initial_c", false);
}

/* Output 0 under its own name: the sequence [T, B, dirs*H] (stacked in
 * hseq[d][0..T)) or the last step [1, B, dirs*H] (own[1] expanded); op the
 * op's new payload, or (not direct) an fp16 op before it whose cast to fp32
 * the op becomes. */
static bool lstm_output0(struct lstm_build *L, const char **hseq[2], const char *const *own, bool direct,
			 const char *sax0, const char *ax1)
{
	struct al_mil_pass *c = L->c;
	int64_t T = L->T, B = L->B, H = L->H, DH = L->dirs * H;
	int64_t dTBH[3] = {T, B, H}, dTBD[3] = {T, B, DH}, d1BD[3] = {1, B, DH};
	struct al_buf *op = &c->layer, pre = {0};
	if (!direct)
		op = &pre;
	if (L->seq && L->dirs == 2) {
		const char *sv[2] = {ali_mil_fresh(c, L->base, "seq_f"), ali_mil_fresh(c, L->base, "seq_b")};
		if (!sv[0] || !sv[1])
			return ali_mil_say(c, "no free value name");
		if (!lstm_join(L, "stack", hseq[0], (size_t)T, sax0, sv[0], 3, dTBH) ||
		    !lstm_join(L, "stack", hseq[1], (size_t)T, sax0, sv[1], 3, dTBH))
			return false;
		ali_mil_put_type(op, "concat");
		ali_mil_put_inputs(op, "values", sv, 2);
		ali_mil_put_input(op, "axis", L->ax);
	} else if (L->seq) {
		ali_mil_put_type(op, "stack");
		ali_mil_put_inputs(op, "values", hseq[0], (size_t)T);
		ali_mil_put_input(op, "axis", sax0);
	} else {
		ali_mil_put_type(op, "expand_dims");
		ali_mil_put_input(op, "x", own[1]);
		ali_mil_put_input(op, "axes", ax1);
	}
	if (!direct) { /* y in fp16, then the op itself its cast to fp32 */
		if (!ali_mil_pre_op_end(c, &pre, &own[0], 1, AL_DT_FP16, 3, L->seq ? dTBD : d1BD))
			return false;
		ali_mil_put_type(&c->layer, "cast");
		ali_mil_put_input(&c->layer, "x", own[0]);
		ali_mil_put_input(&c->layer, "dtype", L->to32);
	}
	if (L->half && direct) { /* the op's output 0 turns fp16, its name attribute kept */
		al_span nv;
		ali_mil_put_output(&c->layer, c->n->outputs[0], AL_DT_FP16, 3, L->seq ? dTBD : d1BD);
		if (ali_mil_attr(c->n, "name", &nv))
			ali_mil_put_attr(&c->layer, "name", nv.p, nv.n);
	} else if (!ali_mil_keep_outputs(c, &c->layer, L->base, true)) {
		return false;
	}
	return true;
}

/* The unrolling (after lstm_match; half: in fp16 ops). */
static bool lstm_unroll(struct al_mil_pass *c, bool half)
{
	struct lstm_build L = {.c = c, .half = half, .base = c->n->outputs[0], .dirs = 1};
	if (!lstm_match(c, &L))
		return false;
	int64_t T = L.T, B = L.B, I = L.I, H = L.H, DH = L.dirs * H;
	double seq = L.seq;
	const char *shape = L.dirs == 2 ? "two chains (forward, backward) of " : L.rev ? "reversed, " : "";
	/* the new ops (casts of the fp16 form apart): slices, steps, the end op; a
	 * bidirectional one splits the states, concats them and stacks each chain */
	int64_t n_ops = T + L.dirs * 13 * T + 1 + (L.dirs == 2 ? 4 + (seq ? 2 : 0) : 0);
	if (c->s->opts && c->s->opts->allow < (half ? AL_EQ_APPROXIMATE : AL_EQ_REASSOCIATE)) {
		/* reported, nothing built */
		snprintf(c->after, sizeof c->after, "%lld steps, %slinear x2 + split + sigmoid / tanh + mul / add%s "
			 "(%lld ops%s)", (long long)T, shape, half ? " in fp16" : "", (long long)n_ops, half ? " and casts" : "");
		return true;
	}
	const char *em = ali_mil_fresh(c, L.base, "end_mask"), *sm = ali_mil_fresh(c, L.base, "squeeze_mask");
	L.ns = ali_mil_fresh(c, L.base, "num_splits"), L.ax = ali_mil_fresh(c, L.base, "split_axis");
	/* seq: stack's axis (a scalar 0); else expand_dims' axes ([0]) */
	const char *sax0 = seq ? ali_mil_fresh(c, L.base, "seq_axis") : "";
	const char *ax1 = seq ? "" : ali_mil_fresh(c, L.base, "step_axes");
	const char *two = L.dirs == 2 ? ali_mil_fresh(c, L.base, "two") : "";
	L.to16 = half ? ali_mil_fresh(c, L.base, "dtype_fp16") : "";
	L.to32 = half ? ali_mil_fresh(c, L.base, "dtype_fp32") : "";
	const char **xs = ali_arena_array(&c->s->arena, (size_t)T, sizeof *xs);
	const char **hseq[2] = {ali_arena_array(&c->s->arena, (size_t)T, sizeof *hseq[0]),
				ali_arena_array(&c->s->arena, (size_t)T, sizeof *hseq[1])};
	if (!em || !sm || !L.ns || !L.ax || !sax0 || !ax1 || !two || !L.to16 || !L.to32 || !xs || !hseq[0] ||
	    !hseq[1])
		return ali_mil_say(c, "no free value name");
	bool blob;
	int64_t three[1] = {3};
	double emv[3] = {0, 1, 1}, smv[3] = {1, 0, 0}, zero = 0;
	if (!ali_mil_pre_const(c, em, AL_DT_BOOL, 1, three, emv, 3, &blob) ||
	    !ali_mil_pre_const(c, sm, AL_DT_BOOL, 1, three, smv, 3, &blob) ||
	    !ali_mil_pre_scalar(c, L.ns, AL_DT_INT32, 4) || !ali_mil_pre_scalar(c, L.ax, AL_DT_INT32, -1) ||
	    (L.dirs == 2 && !ali_mil_pre_scalar(c, two, AL_DT_INT32, 2)) ||
	    (half && (!pre_string(c, L.to16, "fp16") || !pre_string(c, L.to32, "fp32"))) ||
	    (seq ? !ali_mil_pre_scalar(c, sax0, AL_DT_INT32, 0)
		 : !ali_mil_pre_const(c, ax1, AL_DT_INT32, 1, (int64_t[]){1}, &zero, 1, &blob)))
		return false;
	for (int d = 0; d < L.dirs; d++) {
		const char *tags[3] = {d ? "wih_back_fp16" : "wih_fp16", d ? "whh_back_fp16" : "whh_fp16",
				       d ? "bias_back_fp16" : "bias_fp16"};
		L.wih[d] = lstm_weight(&L, lstm_wnames[d][0], 4 * H, I, tags[0]);
		L.whh[d] = L.wih[d] ? lstm_weight(&L, lstm_wnames[d][1], 4 * H, H, tags[1]) : NULL;
		if (!L.whh[d])
			return false;
		if (ali_mil_param_present(c->n, lstm_wnames[d][2]) && !(L.bias[d] = lstm_weight(&L, lstm_wnames[d][2], 4 * H, 0, tags[2])))
			return false;
	}
	int64_t dTBI[3] = {T, B, I}, dBH[2] = {B, H}, dBD[2] = {B, DH}, dBI[2] = {B, I};
	const char *x = lstm_in(&L, "x", "x_fp16", 3, dTBI);
	const char *h0 = x ? lstm_in(&L, "initial_h", "h0_fp16", 2, dBD) : NULL;
	const char *c0 = h0 ? lstm_in(&L, "initial_c", "c0_fp16", 2, dBD) : NULL;
	if (!c0)
		return false;
	const char *h[2] = {h0, NULL}, *cc[2] = {c0, NULL};
	if (L.dirs == 2) { /* [B, 2H]: [:, :H] forward, [:, H:] backward */
		const char *hn[2] = {ali_mil_fresh(c, L.base, "h0_f"), ali_mil_fresh(c, L.base, "h0_b")};
		const char *cn[2] = {ali_mil_fresh(c, L.base, "c0_f"), ali_mil_fresh(c, L.base, "c0_b")};
		if (!hn[0] || !hn[1] || !cn[0] || !cn[1])
			return ali_mil_say(c, "no free value name");
		if (!pre_op(c, "split", (struct kv[]){{"x", h0}, {"num_splits", two}, {"axis", L.ax}}, 3, hn, 2,
			    AL_DT_FP16, 2, dBH) ||
		    !pre_op(c, "split", (struct kv[]){{"x", c0}, {"num_splits", two}, {"axis", L.ax}}, 3, cn, 2,
			    AL_DT_FP16, 2, dBH))
			return false;
		h[0] = hn[0], h[1] = hn[1], cc[0] = cn[0], cc[1] = cn[1];
	}
	for (int64_t t = 0; t < T; t++) {
		char b[32], e[32], xt[32];
		snprintf(b, sizeof b, "t%lld_begin", (long long)t);
		snprintf(e, sizeof e, "t%lld_end", (long long)t);
		snprintf(xt, sizeof xt, "t%lld_x", (long long)t);
		const char *bn = ali_mil_fresh(c, L.base, b), *en = ali_mil_fresh(c, L.base, e);
		if (!bn || !en)
			return ali_mil_say(c, "no free value name");
		double bv[3] = {(double)t, 0, 0}, ev[3] = {(double)t + 1, 0, 0};
		if (!ali_mil_pre_const(c, bn, AL_DT_INT32, 1, three, bv, 3, &blob) ||
		    !ali_mil_pre_const(c, en, AL_DT_INT32, 1, three, ev, 3, &blob) ||
		    !(xs[t] = lstm_op(&L, "slice_by_index",
				      (struct kv[]){{"x", x}, {"begin", bn}, {"end", en}, {"end_mask", em},
						    {"squeeze_mask", sm}}, 5, xt, AL_DT_FP16, 2, dBI)))
			return false;
	}
	/* outputs 1, 2 (h, c) and 0 under their own names: as they are (an fp16 op),
	 * in fp16 when only casts read them (half), else cast back to fp32 */
	bool direct[3];
	const char *own[3];
	for (int k = 0; k < 3; k++) {
		direct[k] = !half || read_by_casts(c, c->n->outputs[k]);
		own[k] = direct[k] ? c->n->outputs[k] : ali_mil_fresh(c, L.base, k == 0 ? "y_fp16" : k == 1 ? "h_fp16" : "c_fp16");
		if (!own[k])
			return ali_mil_say(c, "no free value name");
	}
	bool uni = L.dirs == 1;
	for (int d = 0; d < L.dirs; d++)
		for (int64_t s = 0; s < T; s++) {
			bool back = d == 1 || L.rev;
			int64_t t = back ? T - 1 - s : s;
			bool last = s == T - 1;
			if (!lstm_step(&L, d, t, xs[t], &h[d], &cc[d], uni && last ? own[1] : NULL, uni && last ? own[2] : NULL))
				return false;
			/* bidirectional: by time; unidirectional: in processing order (as the
			 * definition's reference gives a reverse op's sequence) */
			hseq[d][L.dirs == 2 ? t : s] = h[d];
		}
	/* the final states [B, dirs*H]: the last steps' (a concat of both directions') */
	if (L.dirs == 2 && (!lstm_join(&L, "concat", h, 2, L.ax, own[1], 2, dBD) ||
			      !lstm_join(&L, "concat", cc, 2, L.ax, own[2], 2, dBD)))
		return false;
	for (int k = 1; k < 3; k++)
		if (!direct[k] && !lstm_cast32(&L, own[k], c->n->outputs[k], dBD))
			return false;
	/* output 0: the sequence [T, B, dirs*H] or the last step [1, B, dirs*H] */
	if (!lstm_output0(&L, hseq, own, direct[0], sax0, ax1))
		return false;
	if (c->layer.failed || c->pre.failed)
		return ali_mil_say(c, "out of memory");
	if (c->n_names < AL_PASS_MAX_NAMES)
		c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "%d steps, %slinear x2 + split + sigmoid / tanh + mul / add%s, then %s "
		 "(%d ops%s)", (int)T, shape, half ? " in fp16" : "",
		 seq ? (L.dirs == 2 ? "stack x2 + concat" : "stack") : "expand_dims", (int)n_ops, half ? " and casts" : "");
	return true;
}

bool ali_pass_mil_lstm_unroll(struct al_mil_pass *c)
{
	if (c->n->out_types && c->n->n_outputs && ali_mil_out_dtype(c) == AL_DT_FP32)
		return ali_mil_say(c, "the lstm computes in fp32: unrolled into fp32 ops they would still fall back "
				   "(ANE029), and mil-fp16-compute leaves a mixed program's fp32 ops as they are; "
				   "mil-lstm-unroll-fp16 unrolls it in fp16");
	return lstm_unroll(c, false);
}

bool ali_pass_mil_lstm_unroll_fp16(struct al_mil_pass *c)
{
	if (!c->n->out_types || !c->n->n_outputs || ali_mil_out_dtype(c) != AL_DT_FP32)
		return false; /* an fp16 lstm is mil-lstm-unroll's (not reported here) */
	return lstm_unroll(c, true);
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
	if (!recurrent_dims(c, "gru", 3, GRU_MAX_STEPS, GRU_OPS_PER_STEP, false, &T, &B, &I, &H))
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
