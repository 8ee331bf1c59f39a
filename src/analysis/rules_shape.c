/* SPDX-License-Identifier: MIT */
/* rules_shape.c: the predicates that decide from tensor shapes (ANE050-052 for
 * NeuralNetwork layers, ANE061-062 for ML Program ops; rules.def). Shapes come
 * from al_model_infer_shapes, or from an ML Program's declared types; a dim or
 * rank that is unknown makes the rule stay silent for that tensor. Thresholds
 * that are anelint's own choice (not a source's) are named constants below.
 */
#include "rules.h"

#include <string.h>

static const char *out_name(const struct al_node *n, uint32_t i)
{
	return i < n->n_outputs && n->outputs[i] ? n->outputs[i] : "?";
}

static const char *in_name(const struct al_node *n, uint32_t i)
{
	return i < n->n_inputs && n->inputs[i] ? n->inputs[i] : "?";
}

/* ================================================================ ANE050: rank > 5 (NN) */

bool ali_rp_nn_rank(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	for (uint32_t i = 0; i < n->n_outputs; i++) {
		struct al_shape sh;
		if (!ali_rx_out_shape(n, i, &sh) || sh.rank <= 5)
			continue;
		char b[160];
		return ali_rx_say(reason, cap, "output '%s' has rank %d > 5 (inferred %s)",
				 out_name(n, i), sh.rank, ali_rx_shape_str(b, sizeof b, &sh));
	}
	return false;
}

/* ================================================================ ANE051 / ANE061: per-axis extent caps */

/* The channel axis of a shape, which has its own cap: NeuralNetwork blobs read
 * their last three axes as C, H, W; ML Program tensors of rank 4 and 5 are
 * N, C, ... (ANEForge preflight: channel cap on axis 1 of rank 4). -1: none. */
static int channel_axis(const struct al_shape *s, bool mil)
{
	if (mil)
		return s->rank == 4 || s->rank == 5 ? 1 : -1;
	return s->rank >= 3 ? s->rank - 3 : -1;
}

/* The first known dim of s over its cap for target t: axis in *axis, cap in *limit. */
static bool over_cap(const struct al_target *t, const struct al_shape *s, bool mil, int *axis,
		     uint32_t *limit)
{
	int chan = channel_axis(s, mil);
	for (int i = 0; i < s->rank && i < AL_SHAPE_MAX_RANK; i++) {
		uint32_t lim = i == chan ? t->channel_cap : t->axis_cap;
		if (s->dims[i] > (int64_t)lim) {
			*axis = i;
			*limit = lim;
			return true;
		}
	}
	return false;
}

/* An input that holds weights rather than activations: an ML Program const op's
 * output or a loadConstant layer's. Weight axes are not laid out like
 * activations, and their extents are read from the op's own parameters. */
static bool const_input(const struct al_node *n, uint32_t i, bool mil)
{
	const char *name = i < n->n_inputs ? n->inputs[i] : NULL;
	if (!name)
		return true;
	const struct al_node *p = mil ? ali_mil_producer(n, name) : ali_rx_producer(n, name);
	if (!p || !p->type)
		return false;
	if (mil)
		return (ali_rx_mil_flags(p) & AL_OPF_CONST) != 0;
	return p->kind == AL_NNK_loadConstant || p->kind == AL_NNK_loadConstantND;
}

static bool axis_caps(const struct al_rctx *c, bool mil, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	struct al_shape sh;
	int axis;
	uint32_t limit;
	char b[160];
	for (uint32_t i = 0; i < n->n_outputs; i++)
		if (ali_rx_out_shape(n, i, &sh) && over_cap(c->t, &sh, mil, &axis, &limit))
			return ali_rx_say(reason, cap, "output '%s' %s: axis %d extent %lld > %u on %s",
					 out_name(n, i), ali_rx_shape_str(b, sizeof b, &sh), axis,
					 (long long)sh.dims[axis], limit, c->t->id);
	for (uint32_t i = 0; i < n->n_inputs; i++) {
		/* the producer lookup last: it is the costly test */
		if (!ali_rx_in_shape(n, i, &sh) || !over_cap(c->t, &sh, mil, &axis, &limit) ||
		    const_input(n, i, mil))
			continue;
		return ali_rx_say(reason, cap, "input '%s' %s: axis %d extent %lld > %u on %s",
				 in_name(n, i), ali_rx_shape_str(b, sizeof b, &sh), axis,
				 (long long)sh.dims[axis], limit, c->t->id);
	}
	return false;
}

bool ali_rp_nn_axis_cap(const struct al_rctx *c, char *reason, size_t cap)
{
	return axis_caps(c, false, reason, cap);
}

bool ali_rp_mil_axis_cap(const struct al_rctx *c, char *reason, size_t cap)
{
	return axis_caps(c, true, reason, cap);
}

/* ================================================================ ANE052 / ANE062: short last axis */

/* The ANE lays the last axis out in 64-byte rows (Apple, catalog L4). anelint
 * warns only where that padding matters: the row is at most a quarter full
 * (a 4x or larger inflation: 8 fp16 elements or fewer) and the padded tensor
 * reaches 1 MiB. Both thresholds are anelint's choice, so that 7x7 feature
 * maps and Cx1x1 vectors of ordinary CNNs stay quiet. */
#define ROW_BYTES 64
#define MIN_INFLATION 4
#define MIB (1024.0 * 1024.0)
#define MIN_PADDED_BYTES MIB

static bool short_last_axis(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	for (uint32_t i = 0; i < n->n_outputs; i++) {
		struct al_shape sh;
		if (!ali_rx_out_shape(n, i, &sh) || !ali_rx_shape_known(&sh) || sh.rank < 1)
			continue;
		int last = sh.rank - 1;
		int64_t w = sh.dims[last];
		unsigned eb = ali_rx_elem_bytes(sh.dtype);
		if (w <= 0 || (sh.flex >> last) & 1u || (uint64_t)w * eb * MIN_INFLATION > ROW_BYTES)
			continue;
		double rows = 1.0; /* in double: dims are known but may be huge */
		for (int k = 0; k < last; k++)
			rows *= (double)sh.dims[k];
		double padded = rows * ROW_BYTES, dense = rows * (double)w * eb;
		if (padded < MIN_PADDED_BYTES)
			continue;
		char b[160];
		return ali_rx_say(reason, cap,
				 "output '%s' %s: last axis of %lld x %u B fills %lld of %d bytes per row "
				 "(%.1f MiB padded, %.2f MiB of data)",
				 out_name(n, i), ali_rx_shape_str(b, sizeof b, &sh), (long long)w, eb,
				 (long long)(w * eb), ROW_BYTES, padded / MIB, dense / MIB);
	}
	return false;
}

bool ali_rp_nn_last_axis(const struct al_rctx *c, char *reason, size_t cap)
{
	return short_last_axis(c, reason, cap);
}

bool ali_rp_mil_last_axis(const struct al_rctx *c, char *reason, size_t cap)
{
	return short_last_axis(c, reason, cap);
}
