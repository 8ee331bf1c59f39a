/* SPDX-License-Identifier: MIT */
/* nn_attention.c: nn-attention-split-heads, NeuralNetwork attention as the PyTorch converter
 * writes it (nn.MultiheadAttention, coremltools' neuralnetwork backend) -> the split-einsum
 * form of apple/ml-ane-transformers, in NeuralNetwork layers.
 *
 * Matched (anchored on the second product):
 *   s = batchedMatmul(qT [H, Sq, D], kT [H, D, Sk])   ANE012: two runtime operands (or
 *       k [H, Sk, D] with transposeB)
 *   w = softmaxND(s, axis -1)                        ANE006: an ND layer
 *   o = batchedMatmul(w, v [H, Sk, Dv])              ANE012
 * Written (the keys on the channel axis, as ml-ane-transformers' einsum bchq,bkhc->bkhq):
 *   q: transpose [0,2,1] -> [H, D, Sq], reshapeStatic [1, H*D, 1, Sq], split into H heads
 *   k: transpose [2,0,1] ([1,0,2] with transposeB) -> [Sk, H, D], reshapeStatic [Sk, H*D, 1, 1], split: K_h [Sk, D, 1, 1]
 *   v: transpose [2,0,1] -> [Dv, H, Sk], reshapeStatic [Dv, H*Sk, 1, 1], split: V_h^T
 *   per head: convolution 1x1 of q_h [1, D, 1, Sq] by the weights K_h (the layer's second
 *   input) -> scores [1, Sk, 1, Sq]; softmax (the Core ML 2 layer: the channel axis, the
 *   keys); convolution by V_h^T -> [1, Dv, 1, Sq]
 *   concat of the heads on the channel axis, reshapeStatic [H, Dv, Sq], and the layer itself
 *   a transpose [0,2,1] back to o's [H, Sq, Dv] (its name and output kept).
 *
 * What the rules say about the result, honestly: no NeuralNetwork layer that multiplies two
 * runtime tensors has evidence on the ANE. batchedMatmul was measured off it (ANE012); a
 * convolution has evidence with constant weights only (kind_status.c), and with runtime
 * weights the one report (catalog O15, Apple's direct path) saw the weights ignored, so
 * certainty.c calls such a convolution uncertain. The legacy softmax, split, concat and the
 * transposes / reshapes have no report either way (uncertain). So the three layers measured
 * or ruled off the ANE become layers nobody has measured: "off" -> "uncertain", never "ANE".
 *
 * Proof class reassociate: each score and output value is the same dot product over the same
 * terms, but a convolution kernel adds them in another order than a batched matrix product;
 * the softmax is the same function on the same values. */
#include "passes.h"
#include "coreml_fields.h"

#include <string.h>

enum { L_NAME = 1, L_INPUT = 2, L_OUTPUT = 3, NN_LAYERS = 1 };
enum { F_CONVOLUTION = 100, F_SOFTMAX = 175, F_CONCAT = 320, F_SPLIT = 330, F_TRANSPOSE = 985,
       F_RESHAPE_STATIC = 1140 };
/* BatchedMatMulLayerParams: transposeA 1, transposeB 2, weights 8, int8DynamicQuantize 10;
 * SoftmaxNDLayerParams: axis 1. */
enum { BMM_TRANSPOSE_A = 1, BMM_TRANSPOSE_B = 2, BMM_WEIGHTS = 8, BMM_INT8_DYNAMIC = 10 };

#define ATTN_MAX_HEADS 64 /* 3H + 12 layers <= AL_PASS_MAX_NAMES */

/* Whether name is a layer or blob name anywhere in g (nested graphs too). */
static bool graph_names(const struct al_graph *g, const char *name, int depth)
{
	if (!g || depth > AL_MAX_DEPTH)
		return true;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *m = &g->nodes[k];
		if (m->name && strcmp(m->name, name) == 0)
			return true;
		for (uint32_t j = 0; j < m->n_outputs; j++)
			if (m->outputs[j] && strcmp(m->outputs[j], name) == 0)
				return true;
		for (uint32_t j = 0; j < m->n_sub; j++)
			if (graph_names(m->sub[j], name, depth + 1))
				return true;
	}
	return false;
}

/* A name no layer, blob or model input has and no rewrite took (taken here: each new layer
 * is named after its output): `<layer>__<what>`, then `<layer>__<what>1`, ... */
static const char *fresh(struct ali_nn_pass *p, const char *what)
{
	struct al_mil_pass *c = &p->c;
	const struct al_submodel *sub = c->src->sub;
	for (int k = 0; k < 100; k++) {
		char *nm = k ? ali_arena_printf(&c->s->arena, "%s__%s%d", c->n->name, what, k)
			     : ali_arena_printf(&c->s->arena, "%s__%s", c->n->name, what);
		if (!nm)
			return NULL;
		bool taken = false;
		for (uint32_t i = 0; i < sub->n_inputs && !taken; i++)
			taken = strcmp(sub->inputs[i].name, nm) == 0;
		for (uint32_t i = 0; i < sub->n_outputs && !taken; i++)
			taken = strcmp(sub->outputs[i].name, nm) == 0;
		for (uint32_t g = 0; g < sub->n_graphs && !taken; g++)
			taken = graph_names(sub->graphs[g], nm, 0);
		for (size_t i = 0; i < c->s->n_newnames && !taken; i++)
			taken = strcmp(c->s->newnames[i], nm) == 0;
		if (taken)
			continue;
		const char **nn = ali_realloc(c->s->newnames, (c->s->n_newnames + 1) * sizeof *nn);
		if (!nn)
			return NULL;
		c->s->newnames = nn;
		nn[c->s->n_newnames++] = nm;
		return nm;
	}
	return NULL;
}

/* One new layer: the anchor's new message when last, else a `layers` field before it. */
static bool put_layer(struct ali_nn_pass *p, bool last, const char *name, const char *const *ins,
		      uint32_t n_in, const char *const *outs, uint32_t n_out, uint32_t field,
		      const struct al_buf *prm)
{
	return ali_nn_emit(&p->c, last, name, ins, n_in, outs, n_out, field, prm);
}

static bool put_transpose(struct ali_nn_pass *p, bool last, const char *name, const char *in,
			  const char *out, const uint64_t axes[3])
{
	struct al_buf prm = {0};
	ali_buf_packed(&prm, 1, axes, 3);
	bool ok = put_layer(p, last, name, &in, 1, &out, 1, F_TRANSPOSE, &prm);
	ali_buf_free(&prm);
	return ok;
}

static bool put_reshape(struct ali_nn_pass *p, const char *name, const char *in, const int64_t *dims,
			int rank)
{
	uint64_t d[4];
	for (int i = 0; i < rank; i++)
		d[i] = (uint64_t)dims[i];
	struct al_buf prm = {0};
	ali_buf_packed(&prm, 1, d, (size_t)rank);
	bool ok = put_layer(p, false, name, &in, 1, &name, 1, F_RESHAPE_STATIC, &prm);
	ali_buf_free(&prm);
	return ok;
}

/* A legacy split of in into n parts on the channel axis (-3), outputs named into outs. */
static bool put_split(struct ali_nn_pass *p, const char *what, const char *in, uint32_t n, const char **outs)
{
	char sfx[32];
	for (uint32_t i = 0; i < n; i++) {
		snprintf(sfx, sizeof sfx, "%s_h%u", what, i);
		if (!(outs[i] = fresh(p, sfx)))
			return ali_mil_say(&p->c, "no free name for a new layer");
	}
	snprintf(sfx, sizeof sfx, "%s_split", what);
	struct al_buf prm = {0};
	ali_buf_uint(&prm, 1, n);
	bool ok = put_layer(p, false, fresh(p, sfx), &in, 1, outs, n, F_SPLIT, &prm);
	ali_buf_free(&prm);
	return ok;
}

/* A 1x1 convolution of x [1, cin, 1, S] by the runtime weights w [cout, cin, 1, 1]. */
static bool put_conv(struct ali_nn_pass *p, const char *name, const char *x, const char *w, int64_t cout,
		     int64_t cin)
{
	static const uint64_t one[2] = {1, 1};
	struct al_buf prm = {0};
	ali_buf_uint(&prm, AL_PB_ConvolutionLayerParams_outputChannels, (uint64_t)cout);
	ali_buf_uint(&prm, AL_PB_ConvolutionLayerParams_kernelChannels, (uint64_t)cin);
	ali_buf_packed(&prm, AL_PB_ConvolutionLayerParams_kernelSize, one, 2);
	ali_buf_packed(&prm, AL_PB_ConvolutionLayerParams_stride, one, 2);
	ali_buf_packed(&prm, AL_PB_ConvolutionLayerParams_dilationFactor, one, 2);
	ali_buf_len(&prm, AL_PB_ConvolutionLayerParams_valid, NULL, 0); /* no padding */
	const char *ins[2] = {x, w};
	bool ok = put_layer(p, false, name, ins, 2, &name, 1, F_CONVOLUTION, &prm);
	ali_buf_free(&prm);
	return ok;
}

/* A batchedMatmul of two runtime operands as the converter writes it: neither transposed,
 * no weights, no dynamic quantization, one output. */
static bool plain_product(struct al_mil_pass *c, const struct al_node *m, const char *which, bool *tb)
{
	const struct al_node_src *ms = al_src(m);
	if (!ms || !ms->msg.p || !ms->params.p)
		return ali_mil_say(c, "the %s batchedMatmul message could not be read", which);
	if (m->n_inputs != 2 || m->n_outputs != 1)
		return ali_mil_say(c, "the %s batchedMatmul has %u inputs, %u outputs (2 and 1 expected)", which,
				   m->n_inputs, m->n_outputs);
	uint64_t a = 0, b = 0;
	pb_get_varint(ms->params, BMM_TRANSPOSE_A, &a);
	pb_get_varint(ms->params, BMM_TRANSPOSE_B, &b);
	if (a || (b && !tb))
		return ali_mil_say(c, "the %s batchedMatmul transposes its %s operand", which, a ? "first" : "second");
	if (tb)
		*tb = b != 0;
	if (pb_has(ms->params, BMM_WEIGHTS) || pb_has(ms->params, BMM_INT8_DYNAMIC))
		return ali_mil_say(c, "the %s batchedMatmul has weights", which);
	return true;
}

/* The first layer after n that reads blob (as any input), or NULL. */
static const struct al_node *reader_of(const struct al_node *n, const char *blob)
{
	const struct al_graph *g = n->owner;
	bool after = false;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *m = &g->nodes[k];
		if (m == n) {
			after = true;
			continue;
		}
		for (uint32_t i = 0; after && i < m->n_inputs; i++)
			if (m->inputs[i] && strcmp(m->inputs[i], blob) == 0)
				return m;
	}
	return NULL;
}

/* Whether n is the first product of an attention (its scores go through a softmaxND into
 * another batchedMatmul): the rewrite is anchored on that one, which reports it. */
static bool first_product(const struct al_node *n)
{
	if (n->n_outputs != 1 || !n->outputs[0])
		return false;
	const struct al_node *sm = reader_of(n, n->outputs[0]);
	if (!sm || sm->kind != AL_NNK_softmaxND || sm->n_outputs != 1 || !sm->outputs[0])
		return false;
	const struct al_node *o = reader_of(sm, sm->outputs[0]);
	return o && o->kind == AL_NNK_batchedMatmul && o->n_inputs == 2 && o->inputs[0] &&
	       strcmp(o->inputs[0], sm->outputs[0]) == 0;
}

static bool rank3(const struct al_shape *s, int64_t d[3])
{
	if (!s || s->rank != 3 || s->flex)
		return false;
	for (int i = 0; i < 3; i++)
		if ((d[i] = s->dims[i]) < 1)
			return false;
	return true;
}

bool ali_pass_nn_attention(struct ali_nn_pass *p)
{
	struct al_mil_pass *c = &p->c;
	const struct al_node *o = c->n;
	if (o->owner->depth != 0)
		return ali_mil_say(c, "layer in a nested network (branch / loop body)");
	if (!c->src->msg.p || !c->src->params.p)
		return ali_mil_say(c, "no layer message");
	if (o->n_inputs != 2 || first_product(o)) {
		/* not a candidate: a product by weights (no ANE012), or the first product of an
		 * attention, whose second product's entry says it all */
		c->why[0] = '\0';
		return false;
	}
	if (!o->name || !o->inputs[0] || !o->inputs[1] || o->n_outputs != 1 || !o->outputs[0])
		return ali_mil_say(c, "a layer without a name, an input or an output");
	if (!plain_product(c, o, "second", NULL))
		return false;
	/* the chain: o = bmm(softmaxND(bmm(qT, kT)), v) */
	const struct al_node *sm = ali_nn_producer(o, o->inputs[0]);
	if (!sm || sm->kind != AL_NNK_softmaxND)
		return ali_mil_say(c, "its first operand is not a softmaxND's output (not attention)");
	const struct al_node_src *ss = al_src(sm);
	if (!ss || !ss->msg.p || !ss->params.p || sm->n_inputs != 1 || sm->n_outputs != 1)
		return ali_mil_say(c, "the softmaxND message could not be read");
	if (!sm->inputs[0] || !sm->outputs[0])
		return ali_mil_say(c, "the softmaxND message could not be read");
	const struct al_node *s1 = ali_nn_producer(sm, sm->inputs[0]);
	if (!s1 || s1->kind != AL_NNK_batchedMatmul)
		return ali_mil_say(c, "the softmaxND does not read a batchedMatmul's output (not attention)");
	bool k_rows = false; /* transposeB: the keys come as K [H, Sk, D], not K^T [H, D, Sk] */
	if (!plain_product(c, s1, "first", &k_rows))
		return false;
	if (!s1->inputs[0] || !s1->inputs[1])
		return ali_mil_say(c, "the first batchedMatmul names no input");
	if (!ali_nn_only_reader(o, o->inputs[0]) || !ali_nn_only_reader(sm, sm->inputs[0]))
		return ali_mil_say(c, "the scores or the attention weights are read by other layers too");
	/* the shapes: qT [H, Sq, D], kT [H, D, Sk], v [H, Sk, Dv], o [H, Sq, Dv] */
	int64_t q[3], k[3], v[3], out[3];
	if (!rank3(ali_node_in_shape(s1, 0), q) || !rank3(ali_node_in_shape(s1, 1), k) ||
	    !rank3(ali_node_in_shape(o, 1), v) || !o->out_shapes || !rank3(&o->out_shapes[0], out))
		return ali_mil_say(c, "the operands are not of static rank 3 ([heads, rows, columns]; the "
				   "converter's form)");
	if (k_rows) { /* as K^T from here on */
		int64_t t = k[1];
		k[1] = k[2];
		k[2] = t;
	}
	int64_t H = q[0], Sq = q[1], D = q[2], Sk = k[2], Dv = v[2];
	if (k[0] != H || k[1] != D || v[0] != H || v[1] != Sk || out[0] != H || out[1] != Sq || out[2] != Dv)
		return ali_mil_say(c, "shapes [%lld,%lld,%lld] x [%lld,%lld,%lld], then x [%lld,%lld,%lld] are "
				   "not one attention", (long long)q[0], (long long)q[1], (long long)q[2],
				   (long long)k[0], (long long)k[1], (long long)k[2], (long long)v[0],
				   (long long)v[1], (long long)v[2]);
	uint64_t ax = 0;
	pb_get_varint(ss->params, AL_PB_SoftmaxNDLayerParams_axis, &ax);
	if ((int64_t)ax != -1 && (int64_t)ax != 2)
		return ali_mil_say(c, "the softmaxND is on axis %lld, not the keys' (the last)", (long long)(int64_t)ax);
	if (H < 2 || H > ATTN_MAX_HEADS)
		return ali_mil_say(c, "%lld heads (2 to %d are split)", (long long)H, ATTN_MAX_HEADS);
	if (D > INT32_MAX / H || Sk > INT32_MAX / H || Dv > INT32_MAX / H || Sq > INT32_MAX)
		return ali_mil_say(c, "the tensors are too large");

	/* q, k, v into heads */
	static const uint64_t swap_last[3] = {0, 2, 1}, last_first[3] = {2, 0, 1}, swap_first[3] = {1, 0, 2};
	const char *qh[ATTN_MAX_HEADS], *kh[ATTN_MAX_HEADS], *vh[ATTN_MAX_HEADS], *oh[ATTN_MAX_HEADS];
	const char *qt = fresh(p, "q_t"), *qr = fresh(p, "q_r");
	const char *kt = fresh(p, "k_t"), *kr = fresh(p, "k_r");
	const char *vt = fresh(p, "v_t"), *vr = fresh(p, "v_r");
	const int64_t qd[4] = {1, H * D, 1, Sq}, kd[4] = {Sk, H * D, 1, 1}, vd[4] = {Dv, H * Sk, 1, 1};
	if (!put_transpose(p, false, qt, s1->inputs[0], qt, swap_last) || !put_reshape(p, qr, qt, qd, 4) ||
	    !put_split(p, "q", qr, (uint32_t)H, qh) ||
	    !put_transpose(p, false, kt, s1->inputs[1], kt, k_rows ? swap_first : last_first) ||
	    !put_reshape(p, kr, kt, kd, 4) ||
	    !put_split(p, "k", kr, (uint32_t)H, kh) ||
	    !put_transpose(p, false, vt, o->inputs[1], vt, last_first) || !put_reshape(p, vr, vt, vd, 4) ||
	    !put_split(p, "v", vr, (uint32_t)H, vh))
		return false;
	/* per head: scores with the keys on the channel axis, softmax there, times V */
	for (int64_t h = 0; h < H; h++) {
		char sfx[32];
		snprintf(sfx, sizeof sfx, "scores_h%lld", (long long)h);
		const char *sc = fresh(p, sfx);
		snprintf(sfx, sizeof sfx, "weights_h%lld", (long long)h);
		const char *wt = fresh(p, sfx);
		snprintf(sfx, sizeof sfx, "out_h%lld", (long long)h);
		oh[h] = fresh(p, sfx);
		if (!put_conv(p, sc, qh[h], kh[h], Sk, D) ||
		    !put_layer(p, false, wt, &sc, 1, &wt, 1, F_SOFTMAX, NULL) ||
		    !put_conv(p, oh[h], wt, vh[h], Dv, Sk))
			return false;
	}
	/* the heads joined, back to o's layout under o's name */
	const char *cat = fresh(p, "concat"), *orr = fresh(p, "o_r");
	const int64_t od[3] = {H, Dv, Sq};
	if (!put_layer(p, false, cat, oh, (uint32_t)H, &cat, 1, F_CONCAT, NULL) || !put_reshape(p, orr, cat, od, 3) ||
	    !put_transpose(p, true, o->name, orr, o->outputs[0], swap_last))
		return false;
	p->drop[0] = al_src(s1)->msg;
	p->drop[1] = ss->msg;
	p->n_drop = 2;
	p->also = sm->name; /* see docs/surgery.md: the region proof falls back to the whole models */
	snprintf(c->after, sizeof c->after,
		 "%lld heads: per head 1x1 convolutions with runtime weights and a softmax on the channel "
		 "axis (keys), concat; %u layers", (long long)H, c->n_names);
	return true;
}
