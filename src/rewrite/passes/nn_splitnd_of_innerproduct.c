/* SPDX-License-Identifier: MIT */
/* nn_splitnd_of_innerproduct.c: the pass splitnd-of-innerproduct
 * (its row in surgery.c's pass table; docs/surgery.md).
 * Match:   a top-level splitND (2-12 parts) of an innerProduct's output channels (the
 *          last axis, or C of [C, 1, 1]); fp32 / fp16 weights and bias.
 * Rewrite: one innerProduct per part with its weight rows and bias entries; the
 *          fused innerProduct deleted when nothing else reads it.
 * Proves:  reassociate: the same dot products, summed in another order by a kernel
 *          tiled for another matrix size. */
#include "nn_layer.h"
#include "coreml_fields.h"

#include <stdio.h>
#include <string.h>

/* innerProduct L (out t, N output channels) then splitND S of t along that
 * channel axis into parts n_0 + n_1 + ... = N: part i is the innerProduct with
 * weight rows [a_i, a_i + n_i) and those bias entries. Each output value is the
 * same dot product over the same inputs as in L, but a matrix kernel's order of
 * adding the K products follows its tiling, which follows the matrix size (the
 * interpreter's sgemm: rel 2.7e-7 on the corpus transformer): reassociate. S's
 * fallback goes (and L with it when nothing else reads t). Weights are copied as bytes (fp32 or
 * fp16 WeightParams; quantized / raw ones refused). */
#define MAX_IP_SPLIT_BYTES (256u << 20)
bool ali_pass_nn_splitnd_ip(struct ali_nn_pass *p)
{
	struct al_mil_pass *c = &p->c;
	if (!ali_nn_top_level(c))
		return false;
	if (c->n->n_inputs != 1 || c->n->n_outputs < 2 || c->n->n_outputs > 12)
		return ali_mil_say(c, "%u inputs, %u outputs", c->n->n_inputs, c->n->n_outputs);
	const struct al_node *L = ali_nn_producer(c->n, c->n->inputs[0]);
	if (!L || !L->type || L->kind != AL_NNK_innerProduct || L->owner != c->n->owner)
		return ali_mil_say(c, "its input is not an innerProduct's output");
	const struct al_node_src *ls = al_src(L);
	if (!ls || !ls->msg.p || !ls->params.p || L->n_inputs != 1 || L->n_outputs != 1)
		return ali_mil_say(c, "the innerProduct message could not be read");
	const struct al_shape *t = L->out_shapes ? &L->out_shapes[0] : NULL;
	if (!ali_nn_shape_static(t))
		return ali_mil_say(c, "the innerProduct's output shape is not known statically");
	uint64_t v, N = 0, K = 0, hasb = 0;
	pb_get_varint(ls->params, AL_PB_InnerProductLayerParams_inputChannels, &K);
	pb_get_varint(ls->params, AL_PB_InnerProductLayerParams_outputChannels, &N);
	pb_get_varint(ls->params, AL_PB_InnerProductLayerParams_hasBias, &hasb);
	if (pb_has(ls->params, AL_PB_InnerProductLayerParams_int8DynamicQuantize))
		return ali_mil_say(c, "the innerProduct quantizes its input dynamically");
	int64_t axis = pb_get_varint(c->src->params, AL_PB_SplitNDLayerParams_axis, &v) ? (int64_t)v : 0;
	int rank = t->rank;
	int64_t ax = axis < 0 ? axis + rank : axis;
	if (ax < 0 || ax >= rank || t->dims[ax] != (int64_t)N || N < 2)
		return ali_mil_say(c, "axis %lld is not the innerProduct's %llu output channels", (long long)axis,
			   (unsigned long long)N);
	bool last = ax == rank - 1, chw = ax == rank - 3 && t->dims[rank - 1] == 1 && t->dims[rank - 2] == 1;
	if (!last && !chw)
		return ali_mil_say(c, "axis %lld holds the channels but is neither the last axis nor C of [C,1,1]",
			   (long long)axis);
	/* the parts */
	uint32_t n = c->n->n_outputs;
	uint64_t sz[12];
	long k = pb_get_varints(c->src->params, AL_PB_SplitNDLayerParams_splitSizes, sz, 12);
	if (k == 0) {
		if (N % n)
			return ali_mil_say(c, "%llu channels do not split into %u equal parts", (unsigned long long)N, n);
		for (uint32_t i = 0; i < n; i++)
			sz[i] = N / n;
	} else if (k != (long)n) {
		return ali_mil_say(c, "%ld splitSizes for %u outputs", k, n);
	}
	uint64_t sum = 0;
	for (uint32_t i = 0; i < n; i++)
		sum += sz[i];
	if (sum != N)
		return ali_mil_say(c, "split sizes add up to %llu, not %llu", (unsigned long long)sum,
				   (unsigned long long)N);
	/* the weights: floatValue (packed floats) or float16Value (bytes), row-major [N, K];
	 * wf / bf: the field that holds them */
	al_span wp, bp = {0}, wv, bv = {0};
	if (!pb_get_bytes(ls->params, AL_PB_InnerProductLayerParams_weights, &wp))
		return ali_mil_say(c, "the innerProduct has no weights");
	int wf = pb_get_bytes(wp, AL_PB_WeightParams_floatValue, &wv) && wv.n ? AL_PB_WeightParams_floatValue
		 : pb_get_bytes(wp, AL_PB_WeightParams_float16Value, &wv) && wv.n ? AL_PB_WeightParams_float16Value : 0;
	if (!wf || pb_has(wp, AL_PB_WeightParams_rawValue) || pb_has(wp, AL_PB_WeightParams_int8RawValue) ||
	    pb_has(wp, AL_PB_WeightParams_quantization))
		return ali_mil_say(c, "the weights are quantized or raw (fp32 / fp16 values only)");
	size_t esz = wf == AL_PB_WeightParams_floatValue ? 4 : 2;
	if (K == 0 || wv.n != N * K * esz)
		return ali_mil_say(c, "the weights hold %zu bytes, not %llu x %llu values", wv.n, (unsigned long long)N,
			   (unsigned long long)K);
	if (wv.n > MAX_IP_SPLIT_BYTES)
		return ali_mil_say(c, "the weights are %zu MB: more than 256 MB copied", wv.n >> 20);
	int bf = 0;
	if (hasb) {
		if (!pb_get_bytes(ls->params, AL_PB_InnerProductLayerParams_bias, &bp))
			return ali_mil_say(c, "hasBias without a bias");
		bf = pb_get_bytes(bp, AL_PB_WeightParams_floatValue, &bv) && bv.n ? AL_PB_WeightParams_floatValue
		     : pb_get_bytes(bp, AL_PB_WeightParams_float16Value, &bv) && bv.n ? AL_PB_WeightParams_float16Value : 0;
		if (!bf || pb_has(bp, AL_PB_WeightParams_rawValue) || pb_has(bp, AL_PB_WeightParams_quantization) ||
		    bv.n != N * (bf == AL_PB_WeightParams_floatValue ? 4u : 2u))
			return ali_mil_say(c, "the bias is not %llu fp32 / fp16 values", (unsigned long long)N);
	}
	/* one innerProduct per part: helpers before S, the last one S itself */
	uint64_t a = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct al_buf prm = {0}, w = {0}, b = {0}, l = {0};
		ali_buf_uint(&prm, AL_PB_InnerProductLayerParams_inputChannels, K);
		ali_buf_uint(&prm, AL_PB_InnerProductLayerParams_outputChannels, sz[i]);
		if (hasb)
			ali_buf_uint(&prm, AL_PB_InnerProductLayerParams_hasBias, 1);
		ali_buf_len(&w, (uint32_t)wf, wv.p + a * K * esz, sz[i] * K * esz);
		ali_buf_len(&prm, AL_PB_InnerProductLayerParams_weights, w.p, w.n);
		if (hasb) {
			size_t be = bf == AL_PB_WeightParams_floatValue ? 4 : 2;
			ali_buf_len(&b, (uint32_t)bf, bv.p + a * be, sz[i] * be);
			ali_buf_len(&prm, AL_PB_InnerProductLayerParams_bias, b.p, b.n);
		}
		const char *nm = i == n - 1 ? c->n->name : ali_nn_fresh(c, c->n->name, i ? "ip_" : "ip");
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
			return ali_mil_say(c, "no free name");
		a += sz[i];
	}
	if (c->pre.failed || c->layer.failed)
		return ali_mil_say(c, "out of memory");
	bool drop = ali_nn_only_reader(c->n, c->n->inputs[0]);
	if (drop)
		p->drop[p->n_drop++] = ls->msg;
	p->also = L->name;
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "%u innerProduct layers (weight rows split)%s", n,
		 drop ? "; the fused innerProduct deleted" : "");
	return true;
}
