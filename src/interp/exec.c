/* SPDX-License-Identifier: MIT */
/* exec.c: the services the executors (interp_nn.c, interp_mil.c) and the
 * tensors call back into during a run (interp.h): reporting a failed op,
 * counting steps against the budget, finishing an op (fp16 rounding, the
 * caller's observer), and reading weights into tensors. The driver that sets a
 * run up is interp.c. */
#include "interp.h"
#include "shapes.h"

#include <math.h>
#include <string.h>
#include <pthread.h>

static float f16_table[65536];
static pthread_once_t f16_once = PTHREAD_ONCE_INIT;

bool ali_exec_float_dtype(int dtype)
{
	return dtype == AL_DT_FP16 || dtype == AL_DT_FP32 || dtype == AL_DT_FP64 ||
	       dtype == AL_DT_BF16 || dtype == AL_DT_UNKNOWN;
}

static void round_tensor(struct al_tensor *t, int depth)
{
	if (!t || depth > AL_MAX_DEPTH)
		return;
	if (t->kind == AL_TK_LIST) {
		for (size_t i = 0; i < t->n_items; i++)
			round_tensor(t->items[i], depth + 1);
		return;
	}
	if (t->f && !t->borrowed && ali_exec_float_dtype(t->dtype))
		ali_f16_round_array(t->f, t->n);
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Values held by t (a list: by its items). */
static uint64_t values_of(const struct al_tensor *t, int depth)
{
	if (!t || depth > AL_MAX_DEPTH)
		return 0;
	if (t->kind != AL_TK_LIST)
		return t->n;
	uint64_t v = 0;
	for (size_t i = 0; i < t->n_items; i++)
		v = add_sat(v, values_of(t->items[i], depth + 1));
	return v;
}

/* The multiply-adds of n by the cost model, in element operations: a quarter
 * each, since the gemm / convolution kernels do them about 5 times faster than
 * the element-wise loops write values (BLAS sgemm ~25e9 multiply-adds/s against
 * ~5e9 values/s here), so a bound in element operations is a bound in time
 * whatever the model does. 0 when unknown, and for a node owning nested graphs
 * (their nodes count themselves). */
static uint64_t macs_of(const struct al_node *n)
{
	if (n->n_sub || !n->cost.known || !(n->cost.flops > 0))
		return 0;
	double m = n->cost.flops / 8; /* FLOPs / 2 = multiply-adds, / 4 each */
	return m >= 1.8e19 ? UINT64_MAX : (uint64_t)m;
}

/* What running one op costs besides its values (finding its inputs, its
 * parameters, allocating and binding its outputs), in element operations: a
 * loop of small ops is then bounded in time too (docs/interpreter.md "Limits"). */
#define OP_WORK 256

static const char *work_hint = "a loop that does not end? --max-work changes the bound";

enum al_status ali_exec_node_done(struct al_exec *x, const struct al_node *n,
				 struct al_tensor *const *outs, uint32_t n_outs)
{
	uint64_t work = add_sat(OP_WORK, macs_of(n));
	for (uint32_t i = 0; i < n_outs; i++) {
		uint64_t v = values_of(outs[i], 0);
		/* an observer reads every value it is shown: work of the run too. anelint
		 * fp16's scans and copies each one, about 3 times the cost of writing it */
		work = add_sat(work, x->opts->observe && v <= UINT64_MAX / 4 ? 4 * v : v);
	}
	x->work = add_sat(x->work, work);
	if (x->work > x->max_work)
		return ali_exec_fail(x, n, AL_E_UNSUPPORTED, "more than the %llu element operations of work "
				    "allowed (%s)", (unsigned long long)x->max_work, work_hint);
	if (x->fp16)
		for (uint32_t i = 0; i < n_outs; i++)
			round_tensor(outs[i], 0);
	if (x->opts->observe)
		x->opts->observe(x->opts->observe_ctx, n, (al_tensor *const *)outs, n_outs);
	return AL_OK;
}

bool ali_exec_step(struct al_exec *x, const struct al_node *n)
{
	if (++x->steps <= x->max_steps)
		return true;
	ali_exec_fail(x, n, AL_E_UNSUPPORTED, "more than %llu loop iterations (a loop that does not end?)",
		     (unsigned long long)x->max_steps);
	return false;
}

/* The values of shape sh into *v (saturating): false when its rank or a dim is
 * unknown, or (unless flex_ok) a dim follows a flexible input (inferred at its
 * default: the run may differ). */
static bool shape_values(const struct al_shape *sh, bool flex_ok, uint64_t *v)
{
	if (sh->rank < 0 || sh->rank > AL_SHAPE_MAX_RANK || (sh->flex && !flex_ok))
		return false;
	*v = 1;
	for (int d = 0; d < sh->rank; d++) {
		if (sh->dims[d] < 0)
			return false;
		uint64_t dim = (uint64_t)sh->dims[d];
		*v = dim && *v > UINT64_MAX / dim ? UINT64_MAX : *v * dim;
	}
	return true;
}

/* The work of node n counted as ali_exec_node_done counts it, from its inferred
 * shapes and cost: false when an output's shape is unknown (see shape_values). */
static bool node_static_work(const struct al_node *n, bool flex_ok, bool observed, uint64_t *w)
{
	if (!n->out_shapes)
		return false;
	*w = add_sat(OP_WORK, macs_of(n));
	for (uint32_t k = 0; k < n->n_outputs; k++) {
		uint64_t v;
		if (!shape_values(&n->out_shapes[k], flex_ok, &v))
			return false;
		*w = add_sat(*w, observed && v <= UINT64_MAX / 4 ? 4 * v : v);
	}
	return true;
}

uint64_t ali_exec_graph_work(const struct al_graph *g)
{
	uint64_t w = 0;
	for (uint32_t i = 0; g && i < g->n_nodes; i++) {
		uint64_t nw;
		if (node_static_work(&g->nodes[i], false, false, &nw))
			w = add_sat(w, nw);
	}
	return w;
}

/* Every node of g and of the graphs nested in it (each once), flexible dims at
 * their defaults; unknown nodes count 0. */
static uint64_t graph_work_deep(const struct al_graph *g, bool observed, int depth)
{
	uint64_t w = 0;
	for (uint32_t i = 0; g && depth <= AL_MAX_DEPTH && i < g->n_nodes; i++) {
		const struct al_node *n = &g->nodes[i];
		uint64_t nw;
		if (node_static_work(n, true, observed, &nw))
			w = add_sat(w, nw);
		for (uint32_t j = 0; j < n->n_sub; j++)
			w = add_sat(w, graph_work_deep(n->sub[j], observed, depth + 1));
	}
	return w;
}

uint64_t ali_exec_sub_work(const struct al_submodel *s, bool observed)
{
	return s && (s->world == AL_WORLD_NN || s->world == AL_WORLD_MIL)
		       ? graph_work_deep(ali_exec_top_graph(s), observed, 0) : 0;
}

/* Whether n's inferred shapes are the ones it runs with: known, none set by a
 * flexible input, and in the top-level graph (a loop's body may change shapes
 * from one iteration to the next). */
static bool static_shapes_hold(const struct al_node *n)
{
	if (!n->out_shapes || !n->cost.known || (n->owner && n->owner->depth > 0))
		return false;
	for (uint32_t k = 0; k < n->n_outputs; k++)
		if (n->out_shapes[k].flex)
			return false;
	const struct al_node_src *src = al_src(n);
	for (uint32_t i = 0; src && src->in_shapes && i < n->n_inputs; i++)
		if (src->in_shapes[i] && src->in_shapes[i]->flex)
			return false;
	return true;
}

#define EST_MAX_IN 64  /* inputs / outputs an estimate from run-time shapes takes */

/* What an op is about to do: its work as ali_exec_node_done will count it, the
 * values it will write, the cost model's FLOPs. */
struct op_estimate {
	uint64_t work, values;
	double flops;
};

/* From n's out_shapes and cost (those inferred before the run, or a probe's):
 * false when unknown. */
static bool estimate_of(const struct al_node *n, bool observed, struct op_estimate *e)
{
	if (!n->cost.known || !node_static_work(n, false, observed, &e->work))
		return false;
	e->values = 0;
	for (uint32_t k = 0; k < n->n_outputs; k++) {
		uint64_t v = 0;
		shape_values(&n->out_shapes[k], false, &v); /* known: node_static_work */
		e->values = add_sat(e->values, v);
	}
	e->flops = n->cost.flops;
	return true;
}

/* The estimate of n from the shapes of the tensors it is about to read (in[i]:
 * the value of n->inputs[i], NULL when not a tensor): the shape functions and
 * the cost model of the analysis (shapes.h) over a copy of the node that
 * carries these shapes. False when they cannot tell. */
static bool runtime_estimate(struct al_exec *x, const struct al_node *n, const struct al_tensor *const *in,
			     uint32_t n_in, struct op_estimate *e)
{
	if (n_in > EST_MAX_IN || !n->n_outputs || n->n_outputs > EST_MAX_IN || !x->sub)
		return false;
	struct al_shape shapes[EST_MAX_IN], out[EST_MAX_IN];
	const struct al_shape *ptr[EST_MAX_IN];
	for (uint32_t i = 0; i < n_in; i++) {
		const struct al_tensor *t = in[i];
		ptr[i] = NULL;
		if (!t || t->kind != AL_TK_TENSOR || t->rank < 0 || t->rank > AL_SHAPE_MAX_RANK)
			continue;
		shp_from(&shapes[i], t->dims, (size_t)t->rank, t->dtype);
		ptr[i] = &shapes[i];
	}
	for (uint32_t o = 0; o < n->n_outputs; o++)
		shp_unknown(&out[o]);
	struct shp_node sx = {n, x->sub, ptr, n_in, out, n->n_outputs};
	if (x->sub->world == AL_WORLD_MIL) {
		if (!ali_shapes_mil(&sx))
			return false;
	} else {
		ali_shapes_nn(&sx);
	}
	struct al_node probe = *n;
	probe.out_shapes = out;
	ali_cost_node(&probe, x->m, ptr, n_in);
	return estimate_of(&probe, x->opts->observe != NULL, e);
}

enum al_status ali_exec_node_start(struct al_exec *x, const struct al_node *n, bool estimate,
				  const struct al_tensor *const *in, uint32_t n_in)
{
	if (n->n_sub)
		return AL_OK; /* control flow: the nodes of its graphs check themselves */
	struct op_estimate e;
	bool known = static_shapes_hold(n) ? estimate_of(n, x->opts->observe != NULL, &e)
		     : estimate && runtime_estimate(x, n, in, n_in, &e);
	uint64_t left = x->max_work > x->work ? x->max_work - x->work : 0;
	/* outputs over the memory budget: the allocator refuses them, with a message
	 * that says so, before the op computes anything */
	if (!known || e.work <= left || e.values > x->max_bytes / sizeof(float))
		return AL_OK;
	return ali_exec_fail(x, n, AL_E_UNSUPPORTED, "%s %s would do about %llu element operations of "
			    "work (%.3g FLOPs): more than the %llu left of the %llu allowed, so it was not "
			    "started (%s)", x->sub && x->sub->world == AL_WORLD_MIL ? "op" : "layer",
			    n->type ? n->type : "?", (unsigned long long)e.work, e.flops,
			    (unsigned long long)left, (unsigned long long)x->max_work,
			    x->steps > 1 ? work_hint : "--max-work changes the bound");
}

bool ali_exec_loop_fits(struct al_exec *x, const struct al_node *n, uint64_t iterations,
		       const struct al_graph *body)
{
	uint64_t steps_left = x->max_steps > x->steps ? x->max_steps - x->steps : 0;
	if (iterations > steps_left) {
		ali_exec_fail(x, n, AL_E_UNSUPPORTED, "a loop of %llu iterations: more than the %llu loop "
			     "iterations allowed", (unsigned long long)iterations,
			     (unsigned long long)x->max_steps);
		return false;
	}
	uint64_t each, left = x->max_work > x->work ? x->max_work - x->work : 0;
	if (iterations && (each = ali_exec_graph_work(body)) > left / iterations) {
		ali_exec_fail(x, n, AL_E_UNSUPPORTED, "a loop of %llu iterations of about %llu element "
			     "operations each: more than the %llu allowed (--max-work changes the bound)",
			     (unsigned long long)iterations, (unsigned long long)each,
			     (unsigned long long)x->max_work);
		return false;
	}
	return true;
}

static size_t dtype_size(int dtype)
{
	switch (dtype) {
	case AL_DT_FP32: case AL_DT_INT32: case AL_DT_UINT32: return 4;
	case AL_DT_FP16: case AL_DT_BF16: case AL_DT_INT16: case AL_DT_UINT16: return 2;
	case AL_DT_INT8: case AL_DT_UINT8: case AL_DT_BOOL: return 1;
	case AL_DT_FP64: case AL_DT_INT64: case AL_DT_UINT64: return 8;
	default: return 0;
	}
}

static float load_elem(const uint8_t *p, int dtype)
{
	uint64_t u = 0;
	size_t size = dtype_size(dtype);
	for (size_t i = 0; i < size; i++)
		u |= (uint64_t)p[i] << (8 * i);
	switch (dtype) {
	case AL_DT_FP32: {
		float f;
		uint32_t w = (uint32_t)u;
		memcpy(&f, &w, 4);
		return f;
	}
	case AL_DT_FP16: return ali_f16_to_f32((uint16_t)u);
	case AL_DT_BF16: {
		float f;
		uint32_t w = (uint32_t)u << 16;
		memcpy(&f, &w, 4);
		return f;
	}
	case AL_DT_FP64: {
		double v;
		memcpy(&v, &u, 8);
		return (float)v;
	}
	case AL_DT_INT8: return (float)(int8_t)u;
	case AL_DT_INT16: return (float)(int16_t)u;
	case AL_DT_INT32: return (float)(int32_t)u;
	case AL_DT_INT64: return (float)(int64_t)u;
	case AL_DT_BOOL: return u ? 1.0f : 0.0f;
	default: return (float)u;
	}
}

static void f16_table_init(void)
{
	for (uint32_t h = 0; h < 65536; h++)
		f16_table[h] = ali_f16_to_f32((uint16_t)h);
}

struct al_tensor *ali_exec_weight(struct al_exec *x, const struct al_node *n, al_span bytes,
				 int dtype, int rank, const int64_t *dims)
{
	size_t count, size = dtype_size(dtype);
	if (!size) {
		ali_exec_fail(x, n, AL_E_UNSUPPORTED, "weights of type %s are not supported",
			     al_dtype_name(dtype));
		return NULL;
	}
	if (!ali_dims_count(rank, dims, &count) || count > bytes.n / size || count * size != bytes.n) {
		ali_exec_fail(x, n, AL_E_FORMAT, "weights hold %zu bytes; %zu values of %s are %s",
			     bytes.n, count, al_dtype_name(dtype),
			     ali_dims_count(rank, dims, &count) ? "a different size" : "too many");
		return NULL;
	}
	int out_dtype = dtype == AL_DT_FP16 || dtype == AL_DT_BF16 || dtype == AL_DT_FP64 ? AL_DT_FP32 : dtype;
	if (dtype == AL_DT_FP32 && !x->fp16 && ((uintptr_t)bytes.p & 3) == 0)
		return ali_tensor_borrow(x, n, AL_DT_FP32, rank, dims, (const float *)(const void *)bytes.p);
	struct al_tensor *t = ali_tensor_alloc(x, n, out_dtype, rank, dims);
	if (!t)
		return NULL;
	if (dtype == AL_DT_FP32 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && count) {
		memcpy(t->f, bytes.p, count * 4); /* unaligned: 12% of mobilenet's run went to a per-byte load */
	} else if (dtype == AL_DT_FP16) {
		/* a table of all 65536 halves: widening went from 30% of resnet18_full's
		 * fp32 run (fp16 weights, per-byte loads + ali_f16_to_f32) to a lookup */
		pthread_once(&f16_once, f16_table_init);
		for (size_t i = 0; i < count; i++)
			t->f[i] = f16_table[bytes.p[2 * i] | (unsigned)bytes.p[2 * i + 1] << 8];
		return t; /* already fp16 values: nothing to round */
	} else
		for (size_t i = 0; i < count; i++)
			t->f[i] = load_elem(bytes.p + i * size, dtype);
	if (x->fp16 && ali_exec_float_dtype(dtype))
		ali_f16_round_array(t->f, count);
	return t;
}

const struct al_graph *ali_exec_top_graph(const struct al_submodel *s)
{
	if (!s || !s->n_graphs || !s->graphs)
		return NULL;
	if (s->world == AL_WORLD_NN)
		return s->graphs[0];
	for (uint32_t i = 0; s->default_function && i < s->n_functions && i < s->n_graphs; i++)
		if (s->functions[i] && strcmp(s->functions[i], s->default_function) == 0)
			return s->graphs[i];
	for (uint32_t i = 0; i < s->n_functions && i < s->n_graphs; i++)
		if (s->functions[i] && strcmp(s->functions[i], "main") == 0)
			return s->graphs[i];
	return s->n_graphs == 1 ? s->graphs[0] : NULL;
}
