/* SPDX-License-Identifier: MIT */
/* nn_const_operand.c: a binary layer's operand produced by a top-level loadConstant /
 * loadConstantND (nn_layer.h): its values (fp32 / fp16), which input is x, the
 * scale-layer shape of the constant, and the rewritten layer reading x only with
 * the constant's layer deleted when nothing else reads it. Shared by
 * mulb-scalar-to-linear, mulb-const-to-scale, divb-const-to-reciprocal and
 * loadconstnd-to-loadconst (which leaves a constant they take in alone). */
#include "nn_layer.h"
#include "coreml_fields.h"

#include <string.h>

#define CONST_MAX_VALUES (1u << 20) /* a constant taken into a layer: at most 4 MiB of fp32 */

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
	       (p->kind == AL_NNK_loadConstant || p->kind == AL_NNK_loadConstantND);
}

/* The values of a loadConstant / loadConstantND layer: fp32 (floatValue) or
 * fp16 (float16Value) weights only, every dimension >= 1, at most
 * CONST_MAX_VALUES values. */
/* loadConstant and loadConstantND number their shape and data alike: one read serves both */
_Static_assert(AL_PB_LoadConstantLayerParams_shape == AL_PB_LoadConstantNDLayerParams_shape &&
		       AL_PB_LoadConstantLayerParams_data == AL_PB_LoadConstantNDLayerParams_data,
	       "loadConstant / loadConstantND fields");

static bool const_values(struct al_mil_pass *c, const struct al_node *p, struct ali_nn_cval *cv)
{
	const struct al_node_src *ps = al_src(p);
	const char *nm = p->name ? p->name : "?";
	if (!ps || !ps->params.p || p->owner->depth != 0)
		return ali_mil_say(c, "constant '%s' has no layer message", nm);
	bool legacy = p->kind == AL_NNK_loadConstant;
	uint64_t sh[6];
	long k = pb_get_varints(ps->params, AL_PB_LoadConstantNDLayerParams_shape, sh, 6);
	if (legacy ? k != 3 : (k < 1 || k > 5))
		return ali_mil_say(c, "constant '%s' has a shape of %ld dimensions", nm, k);
	memset(cv, 0, sizeof *cv);
	cv->p = p;
	cv->rank = legacy ? 5 : (int)k;
	for (int i = 0; i < cv->rank; i++)
		cv->dims[i] = 1;
	size_t count = 1;
	for (long i = 0; i < k; i++) {
		if (sh[i] < 1 || sh[i] > CONST_MAX_VALUES || count * sh[i] > CONST_MAX_VALUES)
			return ali_mil_say(c, "constant '%s': a dimension is 0 or it has more than %u values",
				   nm, CONST_MAX_VALUES);
		count *= (size_t)sh[i];
		cv->dims[cv->rank - k + i] = (int64_t)sh[i];
	}
	al_span wp, h = {0};
	if (!pb_get_bytes(ps->params, AL_PB_LoadConstantNDLayerParams_data, &wp))
		return ali_mil_say(c, "constant '%s' has no data", nm);
	if (pb_has(wp, AL_PB_WeightParams_rawValue) || pb_has(wp, AL_PB_WeightParams_int8RawValue) ||
	    pb_has(wp, AL_PB_WeightParams_quantization))
		return ali_mil_say(c, "constant '%s' is stored as raw or quantized bytes (fp32 / fp16 values only)",
			   nm);
	long n32 = pb_get_floats(wp, AL_PB_WeightParams_floatValue, NULL, 0);
	bool has16 = pb_get_bytes(wp, AL_PB_WeightParams_float16Value, &h) && h.n;
	if (n32 < 0 || (n32 > 0 && has16))
		return ali_mil_say(c, "constant '%s': malformed weights", nm);
	if (has16 ? h.n != 2 * count : (size_t)n32 != count)
		return ali_mil_say(c, "constant '%s': %zu values for a shape of %zu", nm,
			   has16 ? h.n / 2 : (size_t)n32, count);
	cv->v = ali_arena_array(&c->s->arena, count, sizeof *cv->v);
	if (!cv->v)
		return ali_mil_say(c, "out of memory");
	cv->count = count;
	if (has16)
		for (size_t i = 0; i < count; i++)
			cv->v[i] = half_to_float((uint16_t)(h.p[2 * i] | h.p[2 * i + 1] << 8));
	else
		pb_get_floats(wp, AL_PB_WeightParams_floatValue, cv->v, count);
	return true;
}

static bool same_shape(const struct al_shape *a, const struct al_shape *b)
{
	return ali_nn_shape_static(a) && ali_nn_shape_static(b) && a->rank == b->rank &&
	       memcmp(a->dims, b->dims, (size_t)a->rank * sizeof a->dims[0]) == 0;
}

bool ali_nn_const_operand(struct al_mil_pass *c, bool divide, struct ali_nn_constop *o)
{
	if (!ali_nn_top_level(c))
		return false;
	if (c->n->n_inputs != 2 || c->n->n_outputs != 1)
		return ali_mil_say(c, "%u inputs, %u outputs (2 and 1 expected)", c->n->n_inputs, c->n->n_outputs);
	const struct al_node *p = NULL;
	int ci = -1;
	for (int i = 1; i >= (divide ? 1 : 0) && ci < 0; i--) {
		p = c->n->inputs[i] ? ali_nn_producer(c->n, c->n->inputs[i]) : NULL;
		if (is_const_layer(p))
			ci = i;
	}
	if (ci < 0)
		return ali_mil_say(c, divide ? "the divisor '%s' is not a loadConstant / loadConstantND output"
				     : "neither input is a loadConstant / loadConstantND output (%s)",
			   c->n->inputs[1] ? c->n->inputs[1] : "?");
	o->xi = (uint32_t)(1 - ci);
	if (!c->n->inputs[0] || !c->n->inputs[1] || strcmp(c->n->inputs[0], c->n->inputs[1]) == 0)
		return ali_mil_say(c, "both inputs are the constant");
	if (!const_values(c, p, &o->cv))
		return false;
	o->xs = ali_node_in_shape(c->n, o->xi);
	char sx[64], so[64];
	ali_shape_format(o->xs, sx, sizeof sx);
	if (!ali_nn_shape_static(o->xs))
		return ali_mil_say(c, "input shape %s not known statically", sx);
	const struct al_shape *ys = c->n->out_shapes ? &c->n->out_shapes[0] : NULL;
	ali_shape_format(ys, so, sizeof so);
	if (!same_shape(o->xs, ys))
		return ali_mil_say(c, "the result %s is not the shape of '%s' %s (the constant would broadcast it)",
			   so, c->n->inputs[o->xi], sx);
	if (o->cv.rank > o->xs->rank)
		return ali_mil_say(c, "the constant has rank %d > %d", o->cv.rank, o->xs->rank);
	return true;
}

/* The constant as a scale layer's gamma: its last three axes (C', H', W') one
 * of 1x1x1, Cx1x1, 1xHxW, CxHxW of x's last three, and 1 on every other axis. */
bool ali_nn_scale_shape(struct al_mil_pass *c, const struct ali_nn_constop *o, uint64_t *shp, size_t *n_shp)
{
	const struct al_shape *xs = o->xs;
	const struct ali_nn_cval *cv = &o->cv;
	if (xs->rank < 3 || xs->rank > 5)
		return ali_mil_say(c, "input rank %d (scale takes ranks 3 to 5)", xs->rank);
	for (int i = 0; i < cv->rank - 3; i++)
		if (cv->dims[i] != 1)
			return ali_mil_say(c, "the constant is not 1 on its leading axes");
	int64_t d3[3] = {1, 1, 1}, x3[3];
	for (int i = 0; i < 3; i++) {
		x3[i] = xs->dims[xs->rank - 3 + i];
		if (cv->rank - 3 + i >= 0)
			d3[i] = cv->dims[cv->rank - 3 + i];
	}
	bool hw1 = d3[1] == 1 && d3[2] == 1, hwx = d3[1] == x3[1] && d3[2] == x3[2];
	if (!(d3[0] == 1 || d3[0] == x3[0]) || !(hw1 || hwx))
		return ali_mil_say(c, "a %lldx%lldx%lld constant is not a scale shape (1, C, 1xHxW, CxHxW)",
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
bool ali_nn_finish_const(struct al_mil_pass *c, const struct ali_nn_constop *o, uint32_t field,
			 const struct al_buf *params, const char *what)
{
	const char *x = c->n->inputs[o->xi];
	if (!ali_nn_rebuild_layer(c, field, params, &x, 1))
		return false;
	const char *cname = c->n->inputs[1 - o->xi];
	bool gone = ali_nn_only_reader(c->n, cname);
	if (gone)
		c->drop = al_src(o->cv.p)->msg;
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "%s%s%s%s", what, gone ? " (constant layer '" : "",
		 gone && o->cv.p->name ? o->cv.p->name : "", gone ? "' removed)" : "");
	return true;
}

void ali_nn_scale_params(struct al_buf *sp, const uint64_t *shp, size_t n_shp, const float *v,
			 size_t count)
{
	struct al_buf w = {0};
	ali_buf_packed(sp, AL_PB_ScaleLayerParams_shapeScale, shp, n_shp);
	ali_buf_tag(&w, AL_PB_WeightParams_floatValue, PB_LEN); /* packed */
	ali_buf_varint(&w, (uint64_t)count * 4);
	for (size_t i = 0; i < count; i++) {
		uint32_t u;
		memcpy(&u, &v[i], 4);
		uint8_t b[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
		ali_buf_put(&w, b, 4);
	}
	ali_buf_len(sp, AL_PB_ScaleLayerParams_scale, w.p, w.n);
	if (w.failed)
		sp->failed = true;
	ali_buf_free(&w);
}
