/* work_floor.c: "too little work for the ANE", the one threshold the partition
 * (plan.c, per ANE segment: ANE072) and the model-level rule ANE071
 * (rules_model.c, per whole model) share. Where each number comes from:
 * docs/partition.md "Too little work". */
#include "analysis.h"

#include <math.h>

/* Calibrated on tests/observed (tools/mkobserved.py); docs/partition.md. */
#define FLOOR_FLOPS 200e6        /* a segment doing less than this ... */
#define FLOOR_WEIGHT_BYTES 2.2e6 /* ... and reading fewer weight bytes than this ... */
#define FLOOR_MANY_OPS 8u        /* ... stays on the CPU, unless it holds this many ops ... */
#define FLOOR_MANY_FLOPS 20e6    /* ... doing at least this much work in all */

void al_work_add(struct al_work *w, const struct al_cost *c)
{
	if (!c->known)
		w->known = false;
	double f = c->flops > 0 && isfinite(c->flops) ? c->flops : 0;
	w->flops += f;
	w->weight_bytes += (double)c->param_bytes;
	w->ops++;
}

bool al_work_too_little(const struct al_work *w)
{
	return w->known && w->flops < FLOOR_FLOPS &&
	       w->weight_bytes < FLOOR_WEIGHT_BYTES &&
	       !(w->ops >= FLOOR_MANY_OPS &&
		 w->flops >= FLOOR_MANY_FLOPS);
}
