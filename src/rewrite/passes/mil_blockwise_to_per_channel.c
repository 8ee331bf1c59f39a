/* SPDX-License-Identifier: MIT */
/* mil_blockwise_to_per_channel.c: the pass mil-blockwise-to-per-channel (its
 * row in surgery.c's pass table; docs/surgery.md).
 * Match:   a constexpr_blockwise_shift_scale quantizing a weight per block, read
 *          as the weight of linear / conv ops only.
 * Rewrite: the same op with int8 data, one scale per output channel (new blobs).
 * Proves:  approximate: each value moves by at most half its row's step (below).
 *
 * mil-blockwise-to-per-channel (ANE038, approximate): a weight quantized per
 * block (constexpr_blockwise_shift_scale whose scale has more than one and
 * fewer than the data's entries on some axis: coremltools' int4 per_block) has
 * no ANE lowering, so the op reading it runs on the CPU. The ANE dequantizes
 * per output channel or per tensor (rule ANE038, catalog Q6), and not int4 per
 * output channel (Q7: "Int4 Per-Cout Dequant is not supported"). The pass
 * requantizes the weight to int8, symmetric, one scale per output channel (axis
 * 0 of a linear / conv weight): the op stays a constexpr_blockwise_shift_scale,
 * its data int8 of the same shape and its scale [N, 1, ...] of the output's
 * dtype, which is what coremltools' linear_quantize_weights writes for
 * granularity per_channel on an iOS 18 program (constexpr_affine_dequantize is
 * its pre-iOS 18 form; the op's own opset is iOS 18 already).
 *
 * The dense values come from the interpreter's own decoder of the op (a region
 * run of the op alone, its constants with it), rounded to the output's fp16
 * when it is fp16: the values the device dequantizes to. Per row c:
 * s_c = max|w_c| / 127 in the scale's dtype (1 for an all-zero row; the smallest
 * fp16 subnormal when it would round to 0), q = round(w / s_c) clamped to
 * [-127, 127]. The values change by at most s_c / 2 per element (the int4 grid
 * of a block does not fall on the int8 grid of its row), hence approximate,
 * opt-in with --allow approximate. Both new constants are new blobs in
 * weight.bin; the old blobs stay (nothing in a package is ever moved). */
#include "passes.h"
#include "coreml_fields.h"
#include "interp.h"
#include "kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QMAX 127                    /* symmetric int8: [-127, 127], as coremltools' linear_symmetric */
#define MAX_REQUANT (1u << 25)      /* weight values decoded per op (128 MB as fp32) */
#define MAX_READERS 64

/* The bytes of the value bound to `param` of n, from its declared shape and
 * dtype (0 when absent or unknown). */
static uint64_t param_bytes(const struct al_node *n, const char *param)
{
	struct al_shape s;
	if (!ali_mil_param_present(n, param) || !ali_mil_param_shape(n, param, &s) || s.rank < 0)
		return 0;
	uint64_t e = 1;
	for (int i = 0; i < s.rank; i++) {
		if (s.dims[i] < 0)
			return 0;
		e *= (uint64_t)s.dims[i];
	}
	return (e * (uint64_t)ali_mil_dtype_bits(s.dtype) + 7) / 8;
}

/* The ops of g (and nested graphs) reading value `name`: counted into *n, the
 * first MAX_READERS kept. */
static void readers(const struct al_graph *g, const char *name, const struct al_node **out, uint32_t *n,
		    int depth)
{
	if (depth > 64)
		return;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *r = &g->nodes[k];
		for (uint32_t i = 0; i < r->n_inputs; i++)
			if (r->inputs[i] && strcmp(r->inputs[i], name) == 0) {
				if (*n < MAX_READERS)
					out[*n] = r;
				++*n;
				break;
			}
		for (uint32_t s = 0; s < r->n_sub; s++)
			readers(r->sub[s], name, out, n, depth + 1);
	}
}

/* Whether op r reads `name` only as its weight, and is a linear or conv (whose
 * weight's axis 0 is the output channel). */
static bool weight_reader(const struct al_node *r, const char *name)
{
	if (!r->type || (r->kind != AL_MILK_linear && r->kind != AL_MILK_conv))
		return false;
	uint32_t uses = 0;
	for (uint32_t i = 0; i < r->n_inputs; i++)
		uses += r->inputs[i] && strcmp(r->inputs[i], name) == 0;
	al_span b;
	return uses == 1 && ali_mil_param_binding(r, "weight", 0, &b) == 1 && b.n == strlen(name) &&
	       memcmp(b.p, name, b.n) == 0;
}

/* Whether the scale's shape makes the op per-block (ANE038's test). */
static bool per_block(const struct al_shape *d, const struct al_shape *s, int *axis, int64_t *block)
{
	if (d->rank < 1 || s->rank != d->rank)
		return false;
	for (int i = 0; i < d->rank; i++)
		if (d->dims[i] > 0 && s->dims[i] > 1 && s->dims[i] < d->dims[i]) {
			*axis = i;
			*block = d->dims[i] / s->dims[i];
			return true;
		}
	return false;
}

/* The op's dense output from the interpreter (a region of the op alone, its
 * constants with it, fp32): a tensor to ali_tensor_unref, or NULL with the reason. */
static struct al_named_tensor *decode(struct al_mil_pass *c, size_t *n_out)
{
	const char *nodes[1] = {c->n->name}, *outs[1] = {c->n->outputs[0]};
	struct al_region r = {.nodes = nodes, .n_nodes = 1, .constants = true, .outputs = outs, .n_outputs = 1};
	al_diags *d = al_diags_new();
	struct al_region_value *need = NULL;
	size_t n_need = 0;
	struct al_named_tensor *got = NULL;
	if (!d) {
		ali_mil_say(c, "out of memory");
		return NULL;
	}
	enum al_status st = al_region_inputs(c->s->m, &r, &need, &n_need, d);
	if (st == AL_OK && n_need) {
		ali_mil_say(c, "its parameters read '%s', computed by another op (not a constant of its own)",
			    need[0].name ? need[0].name : "?");
		st = AL_E_UNSUPPORTED;
	} else if (st == AL_OK) {
		struct al_run_opts ro = {.precision = AL_PREC_FP32, .threads = 1};
		st = al_model_run_region(c->s->m, &r, NULL, 0, &ro, &got, n_out, d);
		if (st == AL_OK && (*n_out != 1 || !got[0].t)) {
			al_outputs_free(got, *n_out);
			got = NULL;
			st = AL_E_UNSUPPORTED;
			ali_mil_say(c, "the interpreter gave no value for it");
		}
	}
	if (st && !c->why[0]) {
		const struct al_diag *e = al_diags_count(d) ? al_diags_get(d, al_diags_count(d) - 1) : NULL;
		ali_mil_say(c, "the interpreter cannot decode it: %.140s",
			    e && e->msg ? e->msg : al_status_str(st));
	}
	al_region_values_free(need);
	al_diags_free(d);
	return st ? NULL : got;
}

/* Input entry {key 1 param, value 2 Argument{arguments 1 Binding{value 2
 * Value{type 2, blobFileValue 5 {fileName 1, offset 2}}}}}: a blob at `off`. */
static void put_blob_input(struct al_buf *op, const char *param, int dt, int rank, const int64_t *dims,
			   uint64_t off)
{
	struct al_buf vt = {0}, v = {0}, bd = {0}, arg = {0}, e = {0};
	ali_surgery_put_vtype(&vt, dt, rank, dims);
	ali_buf_len(&v, VALUE_TYPE, vt.p, vt.n);
	ali_mil_put_blob_value(&v, off);
	ali_buf_len(&bd, AL_PB_Argument_Binding_value, v.p, v.n);
	ali_buf_len(&arg, AL_PB_Argument_arguments, bd.p, bd.n);
	ali_buf_str(&e, PB_MAP_KEY, param);
	ali_buf_len(&e, PB_MAP_VALUE, arg.p, arg.n);
	ali_buf_len(op, OP_INPUTS, e.p, e.n);
	op->failed |= vt.failed || v.failed || bd.failed || arg.failed || e.failed;
	ali_buf_free(&vt);
	ali_buf_free(&v);
	ali_buf_free(&bd);
	ali_buf_free(&arg);
	ali_buf_free(&e);
}

/* Per row of w (rows x per values): the scale into s (rounded to the scale's
 * dtype) and the int8 values into q. */
static void requantize(const float *w, size_t rows, size_t per, bool fp16, float *s, int8_t *q)
{
	for (size_t r = 0; r < rows; r++) {
		const float *x = w + r * per;
		float m = 0;
		for (size_t i = 0; i < per; i++)
			m = fabsf(x[i]) > m ? fabsf(x[i]) : m;
		float sc = m > 0 ? m / QMAX : 1.0f;
		if (fp16) {
			sc = ali_f16_round(sc);
			if (sc == 0)
				sc = ali_f16_to_f32(1); /* the smallest subnormal: 2^-24 */
		}
		s[r] = sc;
		for (size_t i = 0; i < per; i++) {
			float v = rintf(x[i] / sc);
			q[r * per + i] = (int8_t)(v > QMAX ? QMAX : v < -QMAX ? -QMAX : v);
		}
	}
}

bool ali_pass_mil_block_to_channel(struct al_mil_pass *c)
{
	const struct al_node *n = c->n;
	struct al_shape d, s;
	int axis = -1;
	int64_t block = 0;
	/* not per block (per channel / per tensor already, or shapes unknown): not a
	 * candidate, not reported */
	if (!ali_mil_param_shape(n, "data", &d) || !ali_mil_param_shape(n, "scale", &s) ||
	    !per_block(&d, &s, &axis, &block))
		return false;
	if (!c->src || !c->src->mil_scope || !c->src->msg.p)
		return ali_mil_say(c, "not an ML Program op");
	if (!c->s->m->is_package && !c->s->m->weights.p)
		return ali_mil_say(c, "an ML Program outside its .mlpackage: the new constants need its weight.bin");
	if (n->n_outputs != 1 || !n->out_types)
		return ali_mil_say(c, "%u outputs (1 expected)", n->n_outputs);
	int odt = n->out_types[0].dtype;
	if (odt != AL_DT_FP16 && odt != AL_DT_FP32)
		return ali_mil_say(c, "its output is %s (fp16 / fp32 only)", al_dtype_name(odt));
	size_t count = 1;
	for (int i = 0; i < d.rank; i++) {
		if (d.dims[i] < 1)
			return ali_mil_say(c, "the data's shape is not known statically");
		if (count > MAX_REQUANT / (size_t)d.dims[i])
			return ali_mil_say(c, "more than %u values: not requantized", MAX_REQUANT);
		count *= (size_t)d.dims[i];
	}
	/* every reader a linear / conv reading it as its weight: axis 0 is the
	 * output channel */
	const struct al_node *rd[MAX_READERS];
	uint32_t n_rd = 0;
	const struct al_graph *top = n->owner;
	while (top && top->parent)
		top = top->parent;
	if (top)
		readers(top, n->outputs[0], rd, &n_rd, 0);
	if (!n_rd)
		return ali_mil_say(c, "no op reads it");
	for (uint32_t i = 0; i < n_rd && i < MAX_READERS; i++)
		if (!weight_reader(rd[i], n->outputs[0]))
			return ali_mil_say(c, "read by %s '%s' other than as a linear / conv weight: its output-channel "
					   "axis is not known", rd[i]->type ? rd[i]->type : "?",
					   rd[i]->name ? rd[i]->name : "?");
	if (n_rd > MAX_READERS)
		return ali_mil_say(c, "read by %u ops", n_rd);
	char form[80] = "";
	if (!ali_mil_weight_form(n, form, sizeof form))
		snprintf(form, sizeof form, "%s per-block (block %lld)", al_dtype_name(d.dtype), (long long)block);
	int64_t rows = d.dims[0];
	size_t per = count / (size_t)rows, esz = odt == AL_DT_FP16 ? 2 : 4;
	uint64_t before = param_bytes(n, "data") + param_bytes(n, "scale") + param_bytes(n, "offset");
	uint64_t after = (uint64_t)count + (uint64_t)rows * esz;
	if (c->s->opts && c->s->opts->allow < AL_EQ_APPROXIMATE) { /* reported, nothing decoded */
		snprintf(c->after, sizeof c->after, "%s -> int8 per-channel, scale [%lld, 1]", form, (long long)rows);
		return true;
	}
	size_t n_got = 0;
	struct al_named_tensor *got = decode(c, &n_got);
	if (!got)
		return false;
	const struct al_tensor *t = got[0].t;
	bool ok = t->f && t->n == count;
	float *w = ok ? ali_malloc(count * sizeof *w) : NULL;
	float *sc = w ? ali_malloc((size_t)rows * sizeof *sc) : NULL;
	int8_t *q = sc ? ali_malloc(count) : NULL;
	uint8_t *sb = q ? ali_malloc((size_t)rows * esz) : NULL;
	bool finite = true;
	if (sb) {
		for (size_t i = 0; i < count; i++) {
			w[i] = odt == AL_DT_FP16 ? ali_f16_round(t->f[i]) : t->f[i];
			finite &= isfinite(w[i]) != 0;
		}
		if (finite) {
			requantize(w, (size_t)rows, per, odt == AL_DT_FP16, sc, q);
			for (int64_t r = 0; r < rows; r++) {
				if (odt == AL_DT_FP16) {
					uint16_t h = ali_f16_from_f32(sc[r]);
					sb[2 * r] = (uint8_t)h, sb[2 * r + 1] = (uint8_t)(h >> 8);
				} else {
					uint32_t u;
					memcpy(&u, &sc[r], 4);
					for (int b = 0; b < 4; b++)
						sb[4 * r + b] = (uint8_t)(u >> (8 * b));
				}
			}
		}
	}
	al_outputs_free(got, n_got);
	bool built = false;
	if (!ok)
		ali_mil_say(c, "the interpreter's value has %zu values, not %zu", t ? t->n : 0, count);
	else if (!sb)
		ali_mil_say(c, "out of memory");
	else if (!finite)
		ali_mil_say(c, "its values are not all finite");
	else {
		uint64_t qoff = ali_mil_add_blob(c->s, 4, q, count); /* BlobDataType Int8 */
		uint64_t soff = qoff == UINT64_MAX ? qoff
			      : ali_mil_add_blob(c->s, odt == AL_DT_FP16 ? 1 : 2, sb, (size_t)rows * esz);
		int64_t sdims[AL_SHAPE_MAX_RANK];
		for (int i = 0; i < d.rank; i++)
			sdims[i] = i == 0 ? rows : 1;
		if (soff == UINT64_MAX) {
			ali_mil_say(c, "out of memory");
		} else {
			/* the op: its type, the new data and scale, its outputs and attributes as they were */
			ali_buf_str(&c->layer, OP_TYPE, "constexpr_blockwise_shift_scale");
			put_blob_input(&c->layer, "data", AL_DT_INT8, d.rank, d.dims, qoff);
			put_blob_input(&c->layer, "scale", odt, d.rank, sdims, soff);
			struct pb_iter it;
			struct pb_field f;
			size_t start;
			pb_iter_init(&it, c->src->msg);
			while ((start = it.pos, pb_next(&it, &f)))
				if (f.num == OP_OUTPUTS || f.num == OP_ATTRS)
					ali_buf_put(&c->layer, c->src->msg.p + start, it.pos - start);
			if (it.err)
				ali_mil_say(c, "the op message could not be re-read");
			else if (c->layer.failed)
				ali_mil_say(c, "out of memory");
			else
				built = true;
		}
	}
	ali_free(w);
	ali_free(sc);
	ali_free(q);
	ali_free(sb);
	if (!built)
		return false;
	c->names[c->n_names++] = n->name;
	snprintf(c->after, sizeof c->after,
		 "%s -> int8 per-channel, scale [%lld, 1] (new blobs; weight %llu -> %llu bytes)", form,
		 (long long)rows, (unsigned long long)before, (unsigned long long)after);
	return true;
}
