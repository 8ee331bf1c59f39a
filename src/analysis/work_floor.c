/* SPDX-License-Identifier: MIT */
/* work_floor.c: "too little work for the ANE", the one threshold the partition
 * (plan.c, per ANE segment: ANE072) and the model-level rule ANE071
 * (rules_model.c, per whole model) share. Where each number comes from:
 * docs/partition.md "Too little work". */
#include "analysis.h"

#include <math.h>

/* Calibrated on tests/observed (tools/mkobserved.py); docs/partition.md "Too
 * little work" says where each number comes from. */
#define FLOOR_FLOPS 200e6            /* a segment doing less than this ... */
#define FLOOR_WEIGHTS_IOS18 2.2e6    /* ... reading fewer weight bytes than this (up to iOS 18) ... */
#define FLOOR_WEIGHTS_IOS26 6.0e6    /* ... (from iOS 26) ... */
#define FLOOR_ACT_BYTES 128e6        /* ... and moving fewer activation bytes than this ... */
#define FLOOR_MANY_OPS 8u            /* ... stays on the CPU, unless it holds this many ops ... */
#define FLOOR_MANY_FLOPS 20e6        /* ... doing at least this much work in all */

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
	return w->known && w->flops < FLOOR_FLOPS && w->weight_bytes < ali_work_floor_weights(os) &&
	       w->act_bytes < FLOOR_ACT_BYTES &&
	       !(w->ops >= FLOOR_MANY_OPS && w->flops >= FLOOR_MANY_FLOPS);
}
