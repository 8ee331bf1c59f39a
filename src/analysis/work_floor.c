/* SPDX-License-Identifier: MIT */
/* work_floor.c: "too little work for the ANE", the one threshold the partition
 * (plan.c, per ANE segment: ANE072) and the model-level rule ANE071
 * (rules_model.c, per whole model) share. Where each number comes from:
 * docs/partition.md "Too little work". */
#include "analysis.h"

#include <math.h>
#include <string.h>

/* Calibrated on tests/observed (tools/mkobserved.py); docs/partition.md "Too
 * little work" says where each number comes from. */
#define FLOOR_FLOPS 200e6            /* a segment doing less than this ... */
#define FLOOR_WEIGHTS_IOS18 2.2e6    /* ... reading fewer weight bytes than this (up to iOS 18) ... */
#define FLOOR_WEIGHTS_IOS26 6.0e6    /* ... (from iOS 26) ... */
#define FLOOR_ACT_BYTES 128e6        /* ... and moving fewer activation bytes than this ... */
#define FLOOR_MANY_OPS 8u            /* ... stays on the CPU, unless it holds this many ops ... */
#define FLOOR_MANY_FLOPS 20e6        /* ... doing at least this much work in all */
#define DECODE_ROWS 8                /* larql: decode steps of 1 to 8 tokens */
#define DECODE_DEPTH_FP16 4992       /* reduction depth preferred on the ANE, fp16 weights */
#define DECODE_DEPTH_INT8 4096       /* ... int8 weights */

/* Whether a constexpr op producing n's weight holds int8 (or uint8) data. */
static bool int8_weight(const struct al_node *n)
{
	for (uint32_t i = 0; i < n->n_inputs; i++) {
		const struct al_node *p = n->inputs[i] ? ali_mil_producer(n, n->inputs[i]) : NULL;
		if (!p || !p->type || strncmp(p->type, "constexpr_", 10) != 0)
			continue;
		struct al_shape d;
		if ((ali_mil_param_shape(p, "data", &d) || ali_mil_param_shape(p, "quantized_data", &d)) &&
		    (d.dtype == AL_DT_INT8 || d.dtype == AL_DT_UINT8))
			return true;
	}
	return false;
}

bool ali_work_deep_decode(const struct al_node *n, const struct al_release *os)
{
	const struct al_release *r = os ? os : al_release_default();
	if (r->ios != 18 || !n->type || ali_mil_kind_by_name(n->type) != AL_MILK_linear)
		return false;
	struct al_shape x, w;
	if (!ali_mil_param_shape(n, "x", &x) || !ali_mil_param_shape(n, "weight", &w) || x.rank < 1 ||
	    x.rank > AL_SHAPE_MAX_RANK || w.rank != 2 || w.dims[1] <= 0)
		return false;
	int64_t rows = 1;
	for (int i = 0; i < x.rank - 1; i++) {
		if (x.dims[i] <= 0)
			return false;
		rows *= x.dims[i];
		if (rows > DECODE_ROWS)
			return false;
	}
	return w.dims[1] >= (int8_weight(n) ? DECODE_DEPTH_INT8 : DECODE_DEPTH_FP16);
}

void ali_work_add(struct al_work *w, const struct al_cost *c)
{
	if (!c->known)
		w->known = false;
	double f = c->flops > 0 && isfinite(c->flops) ? c->flops : 0;
	w->flops += f;
	w->weight_bytes += (double)c->param_bytes;
	w->act_bytes += (double)c->act_bytes;
	w->ops++;
}

double ali_work_floor_weights(const struct al_release *os)
{
	const struct al_release *r = os ? os : al_release_default();
	return r->ios >= 26 ? FLOOR_WEIGHTS_IOS26 : FLOOR_WEIGHTS_IOS18;
}

bool ali_work_too_little(const struct al_work *w, const struct al_release *os)
{
	return w->known && !w->deep && w->flops < FLOOR_FLOPS && w->weight_bytes < ali_work_floor_weights(os) &&
	       w->act_bytes < FLOOR_ACT_BYTES &&
	       !(w->ops >= FLOOR_MANY_OPS && w->flops >= FLOOR_MANY_FLOPS);
}
