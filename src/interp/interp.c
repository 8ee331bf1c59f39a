/* SPDX-License-Identifier: MIT */
/* interp.c: al_model_run, the reference interpreter's driver.
 *
 * It binds the caller's inputs to the model's input features (checking names,
 * shapes and flexible ranges; images become float [1,C,H,W] pixels 0..255 in the
 * channel order the model declares), runs the right executor (NeuralNetwork,
 * ML Program, or a pipeline's stages in order), rounds every op's floating output
 * to fp16 in fp16 mode, shows each op's outputs to the caller's observer, and
 * hands back the output features. What fp16 mode emulates is in
 * docs/interpreter.md; it does not know the layers themselves (interp_nn.c,
 * interp_mil.c) nor the maths (kernels.c).
 *
 * Path through this file:
 *   al_model_run    exec_new (budgets, the run's environment), bind_inputs
 *                   (bind_image for images), infer_costs (the work bound needs
 *                   each op's cost), run_sub (run_pipeline for a pipeline, else
 *                   ali_nn_exec / ali_mil_exec), then detach the outputs
 *   al_model_run_region  region_plan (the nodes and the values they read),
 *                   then ali_mil_exec / ali_nn_exec over the region only */
#include "interp.h"

#include <math.h>
#include <string.h>

#define DEFAULT_MAX_BYTES AL_RUN_MAX_BYTES
#define DEFAULT_MAX_STEPS AL_RUN_MAX_STEPS
#define WORK_FLOOR AL_RUN_MIN_WORK
#define WORK_CEILING AL_RUN_MAX_WORK
#define WORK_SCALE AL_RUN_WORK_SCALE


/* ================================================================ inputs */

static const struct al_named_tensor *find_input(const struct al_named_tensor *in, size_t n,
						const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (in[i].name && strcmp(in[i].name, name) == 0)
			return &in[i];
	return NULL;
}

static void fmt_dims(char *buf, size_t cap, int rank, const int64_t *dims)
{
	ali_dims_str(buf, cap, dims, rank > 0 ? (size_t)rank : 0, 0);
}

/* Whether dims fit feature f's declared shape or flexibility. */
static bool shape_fits(const struct al_feature *f, int rank, const int64_t *dims)
{
	if (f->flex == AL_FLEX_RANGE) {
		if ((uint32_t)rank != f->rank)
			return false;
		for (int i = 0; i < rank; i++) {
			int64_t lo = f->flex_values[2 * i], hi = f->flex_values[2 * i + 1];
			if (dims[i] < lo || (hi >= 0 && dims[i] > hi))
				return false;
		}
		return true;
	}
	if (f->flex == AL_FLEX_ENUMERATED) {
		if ((uint32_t)rank != f->rank)
			return false;
		for (uint32_t s = 0; s < f->n_shapes; s++) {
			bool ok = true;
			for (int i = 0; i < rank; i++)
				ok &= f->flex_values[s * f->rank + (uint32_t)i] == dims[i];
			if (ok)
				return true;
		}
		return f->n_shapes == 0;
	}
	if (f->rank == 0) /* no declared shape (NN files often) */
		return true;
	if ((uint32_t)rank != f->rank)
		return false;
	for (int i = 0; i < rank; i++)
		if (f->shape[i] >= 0 && f->shape[i] != dims[i])
			return false;
	return true;
}

/* An image input: [H,W,C], [1,C,H,W] or [C,H,W] pixels (uint8 or float, RGB order
 * for colour) -> float [1,C,H,W] in the model's channel order. */
static struct al_tensor *bind_image(struct al_exec *x, const struct al_feature *f,
				    const struct al_tensor *t)
{
	int64_t want_c = f->color_space == 20 || f->color_space == 30 ? 3 : 1;
	int64_t h, w, c;
	bool hwc;
	if (t->rank == 3 && t->dims[2] == want_c) {
		h = t->dims[0], w = t->dims[1], c = t->dims[2], hwc = true;
	} else if (t->rank == 2 && want_c == 1) {
		h = t->dims[0], w = t->dims[1], c = 1, hwc = true;
	} else if ((t->rank == 4 && t->dims[0] == 1 && t->dims[1] == want_c) ||
		   (t->rank == 3 && t->dims[0] == want_c)) {
		int o = t->rank - 3;
		c = t->dims[o], h = t->dims[o + 1], w = t->dims[o + 2], hwc = false;
	} else {
		char got[128];
		fmt_dims(got, sizeof got, t->rank, t->dims);
		ali_exec_fail(x, NULL, AL_E_INVALID_ARG,
			     "image input '%s' wants [H,W,%lld] or [1,%lld,H,W] pixels, got %s", f->name,
			     (long long)want_c, (long long)want_c, got);
		return NULL;
	}
	int64_t hw[2] = {h, w};
	if (f->rank == 2 && !shape_fits(f, 2, hw)) {
		ali_exec_fail(x, NULL, AL_E_INVALID_ARG, "image input '%s' is %lldx%lld (HxW); the model "
			     "takes %lldx%lld", f->name, (long long)h, (long long)w,
			     (long long)f->shape[0], (long long)f->shape[1]);
		return NULL;
	}
	int64_t dims[4] = {1, c, h, w};
	struct al_tensor *r = ali_tensor_alloc(x, NULL, AL_DT_FP32, 4, dims);
	if (!r)
		return NULL;
	bool bgr = f->color_space == 30;
	for (int64_t ch = 0; ch < c; ch++) {
		int64_t src_ch = bgr ? c - 1 - ch : ch; /* pixels come as RGB */
		for (int64_t i = 0; i < h * w; i++)
			r->f[ch * h * w + i] = hwc ? t->f[i * c + src_ch] : t->f[src_ch * h * w + i];
	}
	return r;
}

static enum al_status bind_states(struct al_exec *x, const struct al_named_tensor *in, size_t n_in);

static enum al_status bind_inputs(struct al_exec *x, const struct al_named_tensor *in, size_t n_in)
{
	const struct al_submodel *s = x->sub;
	for (size_t i = 0; i < n_in; i++) {
		bool known = false;
		for (uint32_t k = 0; k < s->n_inputs && !known; k++)
			known = in[i].name && strcmp(s->inputs[k].name, in[i].name) == 0;
		for (uint32_t k = 0; k < s->n_states && !known; k++)
			known = in[i].name && strcmp(s->states[k].name, in[i].name) == 0;
		if (!known) {
			char names[256] = "";
			size_t len = 0;
			for (uint32_t k = 0; k < s->n_inputs && len < sizeof names; k++)
				len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", k ? ", " : "",
							s->inputs[k].name);
			return ali_exec_fail(x, NULL, AL_E_INVALID_ARG,
					    "the model has no input '%s' (its inputs: %s)",
					    in[i].name ? in[i].name : "(null)", names);
		}
	}
	for (uint32_t k = 0; k < s->n_inputs; k++) {
		const struct al_feature *f = &s->inputs[k];
		const struct al_named_tensor *nt = find_input(in, n_in, f->name);
		if (!nt || !nt->t) {
			if (f->optional)
				continue;
			return ali_exec_fail(x, NULL, AL_E_INVALID_ARG, "input '%s' is missing", f->name);
		}
		const struct al_tensor *t = nt->t;
		if (t->kind != AL_TK_TENSOR || (t->dtype == AL_DT_STRING) != (f->kind == AL_FEAT_STRING))
			return ali_exec_fail(x, NULL, AL_E_INVALID_ARG, "input '%s' has the wrong kind of value",
					    f->name);
		struct al_tensor *b;
		if (f->kind == AL_FEAT_IMAGE) {
			b = bind_image(x, f, t);
		} else {
			if (f->kind == AL_FEAT_MULTIARRAY && !shape_fits(f, t->rank, t->dims)) {
				char got[128], want[128];
				fmt_dims(got, sizeof got, t->rank, t->dims);
				fmt_dims(want, sizeof want, (int)f->rank, f->shape);
				return ali_exec_fail(x, NULL, AL_E_INVALID_ARG,
						    "input '%s' has shape %s; the model takes %s%s", f->name, got,
						    want, f->flex ? " (flexible: see 'anelint info')" : "");
			}
			b = ali_tensor_reshaped(x, NULL, t, t->rank, t->dims);
			if (b && f->dtype && f->kind == AL_FEAT_MULTIARRAY)
				b->dtype = f->dtype;
		}
		if (!b)
			return AL_E_NOMEM;
		if (x->fp16 && b->f && ali_exec_float_dtype(b->dtype))
			ali_f16_round_array(b->f, b->n);
		if (!ali_env_put(x->env, f->name, b))
			return AL_E_NOMEM;
	}
	return bind_states(x, in, n_in);
}

/* Each state of the root: the input of its name, else zeros of its declared
 * shape, held in its declared type (Core ML's states are fp16). */
static enum al_status bind_states(struct al_exec *x, const struct al_named_tensor *in, size_t n_in)
{
	const struct al_submodel *s = x->sub;
	for (uint32_t k = 0; k < s->n_states; k++) {
		const struct al_feature *f = &s->states[k];
		const struct al_named_tensor *nt = find_input(in, n_in, f->name);
		struct al_tensor *b;
		if (nt && nt->t) {
			const struct al_tensor *t = nt->t;
			if (t->kind != AL_TK_TENSOR || !t->f)
				return ali_exec_fail(x, NULL, AL_E_INVALID_ARG,
						    "state '%s' has the wrong kind of value", f->name);
			size_t want;
			if (!ali_dims_count((int)f->rank, f->shape, &want) || want != t->n) {
				char got[128], decl[128];
				fmt_dims(got, sizeof got, t->rank, t->dims);
				fmt_dims(decl, sizeof decl, (int)f->rank, f->shape);
				return ali_exec_fail(x, NULL, AL_E_INVALID_ARG,
						    "state '%s' has shape %s; the model declares %s", f->name,
						    got, decl);
			}
			b = ali_tensor_reshaped(x, NULL, t, (int)f->rank, f->shape);
		} else {
			if (f->rank > AL_TENSOR_MAX_RANK)
				return ali_exec_fail(x, NULL, AL_E_UNSUPPORTED, "state '%s' of rank %u",
						    f->name, f->rank);
			/* zeros: the model's, shared by every run (a decoder step's 256 KB of KV
			 * cache were zeroed on each); else this run's own */
			if (x->sub->world != AL_WORLD_MIL || x->fp16 ||
			    !(b = ali_mil_zero_state(x, f, f->dtype ? f->dtype : AL_DT_FP32, (int)f->rank,
						     f->shape)))
				b = ali_tensor_alloc(x, NULL, f->dtype, (int)f->rank, f->shape);
		}
		if (!b)
			return x->over_budget ? AL_E_UNSUPPORTED : AL_E_NOMEM;
		if (f->dtype)
			b->dtype = f->dtype;
		if ((b->dtype == AL_DT_FP16 || x->fp16) && nt && nt->t) /* zeros need no rounding */
			ali_f16_round_array(b->f, b->n);
		if (!ali_env_put(x->env, f->name, b))
			return AL_E_NOMEM;
	}
	return AL_OK;
}

/* ================================================================ sub-models */

static enum al_status run_sub(struct al_exec *x, size_t index, int depth);

/* A pipeline's stages are the sub-models after it one level deeper. */
static enum al_status run_pipeline(struct al_exec *x, size_t index, int depth)
{
	const struct al_submodel *p = al_model_get(x->m, index);
	uint32_t done = 0;
	for (size_t i = index + 1; i < al_model_count(x->m) && done < p->n_children; i++) {
		const struct al_submodel *s = al_model_get(x->m, i);
		if (s->depth <= p->depth)
			break;
		if (s->depth != p->depth + 1)
			continue;
		enum al_status st = run_sub(x, i, depth + 1);
		if (st != AL_OK)
			return st;
		done++;
	}
	return AL_OK;
}

static enum al_status run_sub(struct al_exec *x, size_t index, int depth)
{
	const struct al_submodel *s = index == 0 && x->root_view ? &x->view : al_model_get(x->m, index);
	if (depth > AL_MAX_DEPTH)
		return ali_exec_fail(x, NULL, AL_E_UNSUPPORTED, "pipelines nested deeper than %d",
				    AL_MAX_DEPTH);
	const struct al_submodel *saved = x->sub;
	x->sub = s;
	enum al_status st;
	if (s->world == AL_WORLD_NN)
		st = ali_nn_exec(x);
	else if (s->world == AL_WORLD_MIL)
		st = ali_mil_exec(x);
	else if (s->n_children > 0 || (s->type && strncmp(s->type, "pipeline", 8) == 0))
		st = run_pipeline(x, index, depth);
	else
		st = ali_exec_fail(x, NULL, AL_E_UNSUPPORTED,
				  "%s models are not supported by the interpreter (it runs "
				  "NeuralNetwork and ML Program models and pipelines of them)",
				  s->type ? s->type : "this kind of");
	x->sub = saved;
	return st;
}

/* ================================================================ the public call */

static struct al_tensor *detach(struct al_exec *x, struct al_tensor *t)
{
	/* outputs outlive the run (and, borrowed weights, maybe the model): own a copy,
	 * or the tensor itself when nothing else holds it (the environment's binding
	 * stays until it is freed; from then on the caller holds the only reference) */
	if (t->refs == 1 && t->owner == x && !t->borrowed && !t->base && t->kind == AL_TK_TENSOR) {
		t->owner = NULL; /* freed to the heap, not kept in x's buffers */
		x->bytes_live -= t->bytes <= x->bytes_live ? t->bytes : x->bytes_live;
		return al_tensor_ref(t);
	}
	struct al_tensor *c = ali_tensor_reshaped(x, NULL, t, t->rank, t->dims);
	if (c) {
		c->owner = NULL;
		x->bytes_live -= c->bytes <= x->bytes_live ? c->bytes : x->bytes_live;
	}
	return c;
}

/* The executor state of one run: options defaulted, budgets set. */
static struct al_exec exec_new(al_model *m, const struct al_run_opts *opts, al_diags *d)
{
	static const struct al_run_opts defaults = {0};
	if (!opts)
		opts = &defaults;
	if (opts->threads > 0)
		ali_kernels_set_threads(opts->threads);
	return (struct al_exec){
		.m = m,
		.sub = al_model_get(m, 0),
		.opts = opts,
		.fp16 = opts->precision == AL_PREC_FP16,
		.d = d,
		.max_bytes = opts->max_bytes ? opts->max_bytes : DEFAULT_MAX_BYTES,
		.max_steps = opts->max_steps ? opts->max_steps : DEFAULT_MAX_STEPS,
		.max_work = opts->max_work ? opts->max_work : WORK_FLOOR, /* default_max_work raises it */
	};
}

/* The cost model's shapes and FLOPs, which the work count (ali_exec_node_done)
 * and the loops' estimates (ali_exec_loop_fits) read: inferred here if no one
 * did. Its diagnostics are not the run's; without them the executors count the
 * values they write only. */
static enum al_status infer_costs(struct al_exec *x)
{
	al_diags *scratch = al_diags_new();
	if (!scratch)
		return ali_exec_fail(x, NULL, AL_E_NOMEM, "out of memory");
	(void)al_model_infer_shapes(x->m, scratch);
	al_diags_free(scratch);
	return AL_OK;
}

/* How much larger the run's inputs are than the shapes the model declares (and
 * its work was estimated at): the values bound over the values declared, at
 * least 1. Only a flexible input can differ. */
static double input_growth(const struct al_exec *x, const struct al_submodel *root)
{
	double bound = 0, declared = 0;
	for (uint32_t k = 0; k < root->n_inputs; k++) {
		const struct al_feature *f = &root->inputs[k];
		const struct al_tensor *t = f->flex ? ali_env_get(x->env, f->name) : NULL;
		if (!t || t->kind != AL_TK_TENSOR || !f->rank)
			continue;
		double v = 1;
		for (uint32_t i = 0; i < f->rank; i++)
			v *= f->shape[i] > 0 ? (double)f->shape[i] : 1.0;
		if (f->kind == AL_FEAT_IMAGE && t->rank == 4)
			v *= (double)t->dims[1]; /* [H, W] declared, [1, C, H, W] bound */
		bound += (double)t->n;
		declared += v;
	}
	return declared > 0 && bound > declared ? bound / declared : 1.0;
}

/* opts->max_work 0: the default bound, scaled from the model's own cost
 * (docs/interpreter.md "Limits"): WORK_SCALE times the work its inferred shapes
 * give (every node once, loops' bodies included; ali_exec_sub_work), times the
 * square of input_growth when a flexible input is larger than declared (an
 * attention's work grows with its square), within [WORK_FLOOR, WORK_CEILING]:
 * a small model that loops without end stops within seconds, and a 200-byte file
 * that claims enormous work cannot raise its own bound past the ceiling. */
static uint64_t default_max_work(const struct al_exec *x, const struct al_submodel *root, bool region)
{
	double w = (double)ali_exec_sub_work(root, x->opts->observe != NULL);
	for (size_t i = 1; i < al_model_count(x->m); i++)
		w += (double)ali_exec_sub_work(al_model_get(x->m, i), x->opts->observe != NULL);
	double g = region ? 1.0 : input_growth(x, root); /* a region's inputs are not features */
	double bound = WORK_SCALE * w * g * g;
	return bound >= (double)WORK_CEILING ? WORK_CEILING : bound > (double)WORK_FLOOR ? (uint64_t)bound
											     : WORK_FLOOR;
}

/* The function opts->function names (a multifunction ML Program): the root is
 * run as a view with that function's interface. */
static enum al_status pick_function(struct al_exec *x)
{
	const char *want = x->opts->function;
	const struct al_submodel *s = x->sub;
	if (!want)
		return AL_OK;
	if (s->world != AL_WORLD_MIL)
		return ali_exec_fail(x, NULL, AL_E_INVALID_ARG, "--function: only ML Programs have "
				    "functions");
	bool graph = false;
	for (uint32_t i = 0; i < s->n_functions && !graph; i++)
		graph = s->functions[i] && strcmp(s->functions[i], want) == 0;
	const struct al_function_desc *fd = NULL;
	for (uint32_t i = 0; i < s->n_fdescs && !fd; i++)
		if (s->fdescs[i].name && strcmp(s->fdescs[i].name, want) == 0)
			fd = &s->fdescs[i];
	if (!graph) {
		char names[256] = "";
		size_t len = 0;
		for (uint32_t k = 0; k < s->n_functions && len < sizeof names; k++)
			len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", k ? ", " : "",
						s->functions[k] ? s->functions[k] : "?");
		return ali_exec_fail(x, NULL, AL_E_INVALID_ARG,
				    "the program has no function '%.100s' (its functions: %s)", want, names);
	}
	x->view = *s;
	x->view.default_function = want;
	if (fd) {
		x->view.inputs = fd->inputs;
		x->view.n_inputs = fd->n_inputs;
		x->view.outputs = fd->outputs;
		x->view.n_outputs = fd->n_outputs;
		x->view.states = fd->states;
		x->view.n_states = fd->n_states;
	}
	x->root_view = true;
	x->sub = &x->view;
	return AL_OK;
}

enum al_status al_model_run(al_model *m, const struct al_named_tensor *inputs, size_t n_inputs,
			    const struct al_run_opts *opts, struct al_named_tensor **outputs,
			    size_t *n_outputs, al_diags *d)
{
	if (!m || !outputs || !n_outputs || !d || (n_inputs && !inputs))
		return AL_E_INVALID_ARG;
	*outputs = NULL;
	*n_outputs = 0;
	/* what Core ML refuses to compile is not run either */
	if (al_model_validate(m, d) != AL_OK)
		return AL_E_FORMAT;
	struct al_exec x = exec_new(m, opts, d);
	if (!x.sub)
		return AL_E_INVALID_ARG;
	enum al_status fst = pick_function(&x);
	if (fst != AL_OK)
		return fst;
	const struct al_submodel *root = x.sub;
	x.env = ali_env_new(&x, NULL);
	if (!x.env)
		return AL_E_NOMEM;
	size_t errors = al_diags_errors(d);
	enum al_status st = bind_inputs(&x, inputs, n_inputs);
	if (st == AL_OK)
		st = infer_costs(&x);
	if (st == AL_OK && !x.opts->max_work)
		x.max_work = default_max_work(&x, root, false);
	if (st == AL_OK)
		st = run_sub(&x, 0, 0);
	x.sub = root;
	struct al_named_tensor *outs = NULL;
	size_t n_out = (size_t)root->n_outputs + root->n_states;
	if (st == AL_OK && n_out) {
		outs = ali_calloc(n_out, sizeof *outs);
		if (!outs)
			st = ali_exec_fail(&x, NULL, AL_E_NOMEM, "out of memory");
	}
	for (size_t k = 0; st == AL_OK && k < n_out; k++) {
		const char *name = k < root->n_outputs ? root->outputs[k].name
						       : root->states[k - root->n_outputs].name;
		struct al_tensor *t = ali_env_get(x.env, name);
		if (!t || t->kind != AL_TK_TENSOR) {
			st = ali_exec_fail(&x, NULL, AL_E_FORMAT, "output '%s' was not produced", name);
			break;
		}
		outs[k].name = name;
		if (!(outs[k].t = detach(&x, t)))
			st = AL_E_NOMEM;
	}
	ali_env_free(x.env);
	if (st == AL_E_NOMEM && x.over_budget)
		st = AL_E_UNSUPPORTED; /* the budget refused it (a property of the model), not malloc */
	if (st == AL_OK && al_diags_errors(d) > errors)
		st = AL_E_FORMAT; /* an executor reported an error but returned OK: never trust it */
	if (st != AL_OK) {
		al_outputs_free(outs, n_out);
		if (al_diags_errors(d) == errors)
			ali_exec_fail(&x, NULL, st, "%s", al_status_str(st));
		return st;
	}
	*outputs = outs;
	*n_outputs = n_out;
	return AL_OK;
}

void al_outputs_free(struct al_named_tensor *outs, size_t n)
{
	if (!outs)
		return;
	for (size_t i = 0; i < n; i++)
		ali_tensor_unref(outs[i].t);
	ali_free(outs);
}

/* ================================================================ regions */

/* Node types whose outputs come from the file alone (al_region.constants). */
static const char *const const_types[] = {"loadConstant", "loadConstantND", "const"};

static bool is_const_type(const struct al_node *n)
{
	for (size_t i = 0; i < sizeof const_types / sizeof const_types[0]; i++)
		if (n->type && strcmp(n->type, const_types[i]) == 0)
			return n->n_sub == 0;
	return false;
}

/* Which top-level nodes run, and what they read from outside. */
struct region_plan {
	const struct al_graph *g;
	bool *sel;                   /* g->n_nodes flags */
	struct al_region_value *in;  /* n_in values read and not produced before */
	long *in_from;               /* the node producing each (-1: a model / function input) */
	size_t n_in;
};

static void region_plan_free(struct region_plan *p)
{
	ali_free(p->sel);
	ali_free(p->in);
	ali_free(p->in_from);
	memset(p, 0, sizeof *p);
}

static enum al_status region_fail(al_diags *d, const struct al_submodel *s, const struct al_node *n,
				  enum al_status st, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static enum al_status region_fail(al_diags *d, const struct al_submodel *s, const struct al_node *n,
				  enum al_status st, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ali_diag_add(d, AL_SEV_ERROR, s ? s->file : NULL, n ? n->offset : UINT64_MAX, n ? n->path : NULL,
		    n ? n->name : NULL, "region: %s", msg);
	return st;
}

/* The last node before index i of g that produces name, or -1. */
static long producer(const struct al_graph *g, uint32_t i, const char *name)
{
	for (uint32_t j = i; j-- > 0;)
		for (uint32_t k = 0; k < g->nodes[j].n_outputs; k++)
			if (g->nodes[j].outputs[k] && strcmp(g->nodes[j].outputs[k], name) == 0)
				return (long)j;
	return -1;
}

/* A node named name in a graph nested in g (any depth up to AL_MAX_DEPTH), or NULL. */
static const struct al_node *find_nested(const struct al_graph *g, const char *name, int depth)
{
	for (uint32_t i = 0; g && depth < AL_MAX_DEPTH && i < g->n_nodes; i++) {
		const struct al_node *n = &g->nodes[i];
		if (depth > 0 && n->name && strcmp(n->name, name) == 0)
			return n;
		for (uint32_t k = 0; k < n->n_sub; k++) {
			const struct al_node *f = find_nested(n->sub[k], name, depth + 1);
			if (f)
				return f;
		}
	}
	return NULL;
}

static bool produces(const struct al_node *n, const char *name)
{
	for (uint32_t k = 0; k < n->n_outputs; k++)
		if (n->outputs[k] && strcmp(n->outputs[k], name) == 0)
			return true;
	return false;
}

static enum al_status region_plan(al_model *m, const struct al_region *r, struct region_plan *p,
				  al_diags *d)
{
	memset(p, 0, sizeof *p);
	if (!m || !r || !d || (r->n_nodes && !r->nodes) || (r->n_outputs && !r->outputs))
		return AL_E_INVALID_ARG;
	const struct al_submodel *s = al_model_get(m, 0);
	if (!s)
		return AL_E_INVALID_ARG;
	if (s->world != AL_WORLD_NN && s->world != AL_WORLD_MIL)
		return region_fail(d, s, NULL, AL_E_UNSUPPORTED,
				   "a region runs in a NeuralNetwork or ML Program model, not in a %s",
				   s->type ? s->type : "model of this kind");
	enum al_status st = al_model_infer_shapes(m, d);
	if (st != AL_OK)
		return st;
	const struct al_graph *g = p->g = ali_exec_top_graph(s);
	if (!g)
		return region_fail(d, s, NULL, AL_E_UNSUPPORTED, "the model has no top-level graph to run");
	if (!r->n_nodes)
		return region_fail(d, s, NULL, AL_E_INVALID_ARG, "the region names no nodes");
	if (!(p->sel = ali_calloc(g->n_nodes + 1u, sizeof *p->sel)))
		return AL_E_NOMEM;
	for (size_t i = 0; i < r->n_nodes; i++) {
		const char *name = r->nodes[i];
		bool found = false;
		for (uint32_t k = 0; name && k < g->n_nodes; k++)
			if (g->nodes[k].name && strcmp(g->nodes[k].name, name) == 0)
				found = p->sel[k] = true;
		if (found)
			continue;
		const struct al_node *nested = name ? find_nested(g, name, 0) : NULL;
		st = nested ? region_fail(d, s, nested, AL_E_UNSUPPORTED,
					  "'%.100s' is inside a nested graph (a branch / loop body or a "
					  "block): a region is made of top-level nodes", name)
			    : region_fail(d, s, NULL, AL_E_INVALID_ARG, "no top-level node is named '%.100s'",
					  name ? name : "(null)");
		region_plan_free(p);
		return st;
	}
	/* the constant producers the region reads: descending, so a producer added
	 * below i is itself looked at later in the same pass */
	for (uint32_t i = g->n_nodes; r->constants && i-- > 0;) {
		if (!p->sel[i])
			continue;
		for (uint32_t k = 0; k < g->nodes[i].n_inputs; k++) {
			const char *name = g->nodes[i].inputs[k];
			long j = name ? producer(g, i, name) : -1;
			if (j >= 0 && !p->sel[j] && is_const_type(&g->nodes[j]))
				p->sel[j] = true;
		}
	}
	size_t cap = 1;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		if (!p->sel[i])
			continue;
		if (g->nodes[i].n_sub) {
			st = region_fail(d, s, &g->nodes[i], AL_E_UNSUPPORTED,
					 "%s owns nested graphs (branch / loop bodies, blocks): the executors do "
					 "not run part of a model around them", g->nodes[i].type ? g->nodes[i].type : "it");
			region_plan_free(p);
			return st;
		}
		cap += g->nodes[i].n_inputs;
	}
	p->in = ali_calloc(cap, sizeof *p->in);
	p->in_from = ali_calloc(cap, sizeof *p->in_from);
	if (!p->in || !p->in_from) {
		region_plan_free(p);
		return AL_E_NOMEM;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct al_node *n = &g->nodes[i];
		for (uint32_t k = 0; p->sel[i] && k < n->n_inputs; k++) {
			const char *name = n->inputs[k];
			if (!name || !*name)
				continue;
			long j = producer(g, i, name);
			if (j >= 0 && p->sel[j])
				continue; /* produced inside the region */
			bool again = false, clash = false;
			for (size_t e = 0; e < p->n_in && !again; e++)
				if (strcmp(p->in[e].name, name) == 0) {
					again = true;
					clash = p->in_from[e] != j;
				}
			for (uint32_t e = 0; e < i && !clash; e++)
				clash = p->sel[e] && produces(&g->nodes[e], name);
			if (clash) {
				st = region_fail(d, s, n, AL_E_UNSUPPORTED,
						 "'%.100s' is read with two different values (it is redefined "
						 "between the region's nodes)", name);
				region_plan_free(p);
				return st;
			}
			if (again)
				continue;
			const struct al_shape *sh = ali_node_in_shape(n, k);
			p->in[p->n_in].name = name;
			p->in[p->n_in].shape = sh ? *sh : (struct al_shape){.rank = -1};
			p->in_from[p->n_in++] = j;
		}
	}
	for (size_t o = 0; o < r->n_outputs; o++) {
		bool made = false;
		for (uint32_t i = 0; r->outputs[o] && i < g->n_nodes && !made; i++)
			made = p->sel[i] && produces(&g->nodes[i], r->outputs[o]);
		if (!made) {
			st = region_fail(d, s, NULL, AL_E_INVALID_ARG,
					 "no node of the region produces '%.100s'",
					 r->outputs[o] ? r->outputs[o] : "(null)");
			region_plan_free(p);
			return st;
		}
	}
	return AL_OK;
}

enum al_status al_region_inputs(al_model *m, const struct al_region *r,
				struct al_region_value **out, size_t *n, al_diags *d)
{
	if (!out || !n)
		return AL_E_INVALID_ARG;
	*out = NULL;
	*n = 0;
	struct region_plan p;
	enum al_status st = region_plan(m, r, &p, d);
	if (st != AL_OK)
		return st;
	*out = p.in;
	*n = p.n_in;
	p.in = NULL;
	region_plan_free(&p);
	return AL_OK;
}

void al_region_values_free(struct al_region_value *v)
{
	ali_free(v);
}

enum al_status al_model_run_region(al_model *m, const struct al_region *r,
				   const struct al_named_tensor *inputs, size_t n_inputs,
				   const struct al_run_opts *opts, struct al_named_tensor **outputs,
				   size_t *n_outputs, al_diags *d)
{
	if (!outputs || !n_outputs || (n_inputs && !inputs))
		return AL_E_INVALID_ARG;
	*outputs = NULL;
	*n_outputs = 0;
	size_t errors = d ? al_diags_errors(d) : 0;
	struct region_plan p;
	enum al_status st = region_plan(m, r, &p, d);
	if (st != AL_OK)
		return st;
	struct al_exec x = exec_new(m, opts, d);
	x.sel = p.sel;
	x.region_out = r->outputs;
	x.n_region_out = r->n_outputs;
	const struct al_submodel *root = x.sub;
	x.env = ali_env_new(&x, NULL);
	if (!x.env) {
		region_plan_free(&p);
		return AL_E_NOMEM;
	}
	for (size_t i = 0; st == AL_OK && i < n_inputs; i++) {
		const char *name = inputs[i].name;
		const struct al_tensor *t = inputs[i].t;
		bool known = false;
		for (size_t e = 0; name && e < p.n_in && !known; e++)
			known = strcmp(p.in[e].name, name) == 0;
		if (!known)
			st = ali_exec_fail(&x, NULL, AL_E_INVALID_ARG, "region: '%.100s' is not a value the "
					  "region reads (al_region_inputs lists them)", name ? name : "(null)");
		else if (ali_env_get(x.env, name))
			st = ali_exec_fail(&x, NULL, AL_E_INVALID_ARG, "region: '%.100s' is given twice", name);
		else if (!t || t->kind != AL_TK_TENSOR || !t->f)
			st = ali_exec_fail(&x, NULL, AL_E_INVALID_ARG, "region: '%.100s' is not a numeric tensor",
					  name);
		if (st != AL_OK)
			break;
		struct al_tensor *b = ali_tensor_reshaped(&x, NULL, t, t->rank, t->dims);
		if (!b) {
			st = AL_E_NOMEM;
			break;
		}
		if (x.fp16 && ali_exec_float_dtype(b->dtype))
			ali_f16_round_array(b->f, b->n);
		if (!ali_env_put(x.env, name, b))
			st = AL_E_NOMEM;
	}
	for (size_t e = 0; st == AL_OK && e < p.n_in; e++)
		if (!ali_env_get(x.env, p.in[e].name))
			st = ali_exec_fail(&x, NULL, AL_E_INVALID_ARG, "region: input '%.100s' is missing",
					  p.in[e].name);
	if (st == AL_OK && !x.opts->max_work)
		x.max_work = default_max_work(&x, root, true); /* the whole model's: an upper bound */
	if (st == AL_OK)
		st = root->world == AL_WORLD_NN ? ali_nn_exec(&x) : ali_mil_exec(&x);
	struct al_named_tensor *outs = NULL;
	if (st == AL_OK && r->n_outputs && !(outs = ali_calloc(r->n_outputs, sizeof *outs)))
		st = ali_exec_fail(&x, NULL, AL_E_NOMEM, "out of memory");
	for (size_t k = 0; st == AL_OK && k < r->n_outputs; k++) {
		struct al_tensor *t = ali_env_get(x.env, r->outputs[k]);
		if (!t || t->kind != AL_TK_TENSOR) {
			st = ali_exec_fail(&x, NULL, AL_E_FORMAT, "region: '%.100s' was not produced",
					  r->outputs[k]);
			break;
		}
		outs[k].name = r->outputs[k];
		if (!(outs[k].t = detach(&x, t)))
			st = AL_E_NOMEM;
	}
	ali_env_free(x.env);
	region_plan_free(&p);
	if (st == AL_E_NOMEM && x.over_budget)
		st = AL_E_UNSUPPORTED; /* the budget refused it (a property of the model), not malloc */
	if (st == AL_OK && al_diags_errors(d) > errors)
		st = AL_E_FORMAT; /* an executor reported an error but returned OK: never trust it */
	if (st != AL_OK) {
		al_outputs_free(outs, r->n_outputs);
		if (al_diags_errors(d) == errors)
			ali_exec_fail(&x, NULL, st, "%s", al_status_str(st));
		return st;
	}
	*outputs = outs;
	*n_outputs = r->n_outputs;
	return AL_OK;
}

/* ================================================================ random inputs */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

enum al_status al_random_input(const struct al_feature *f, uint64_t seed, uint64_t max_bytes,
			       al_tensor **out, al_diags *d)
{
	if (!f || !out || !d)
		return AL_E_INVALID_ARG;
	*out = NULL;
	int64_t dims[AL_TENSOR_MAX_RANK];
	int rank = 0, dtype = AL_DT_FP32;
	switch (f->kind) {
	case AL_FEAT_IMAGE:
		if (f->rank != 2) {
			ali_diag_add(d, AL_SEV_ERROR, NULL, UINT64_MAX, NULL, f->name, "image input without a size");
			return AL_E_UNSUPPORTED;
		}
		dims[0] = f->shape[0], dims[1] = f->shape[1];
		dims[2] = f->color_space == 20 || f->color_space == 30 ? 3 : 1;
		rank = 3;
		dtype = f->color_space == 40 ? AL_DT_FP16 : AL_DT_UINT8;
		break;
	case AL_FEAT_MULTIARRAY:
		if (f->rank > AL_TENSOR_MAX_RANK) {
			ali_diag_add(d, AL_SEV_ERROR, NULL, UINT64_MAX, NULL, f->name, "input of rank %u",
				    f->rank);
			return AL_E_UNSUPPORTED;
		}
		rank = (int)f->rank;
		for (int i = 0; i < rank; i++) {
			dims[i] = f->shape[i] >= 0 ? f->shape[i] : 1;
			if (f->flex == AL_FLEX_RANGE && dims[i] < f->flex_values[2 * i])
				dims[i] = f->flex_values[2 * i];
		}
		if (f->flex == AL_FLEX_ENUMERATED && f->n_shapes && rank)
			for (int i = 0; i < rank; i++)
				dims[i] = f->flex_values[i];
		dtype = f->dtype ? f->dtype : AL_DT_FP32;
		break;
	case AL_FEAT_INT64:
		dtype = AL_DT_INT64;
		break;
	case AL_FEAT_DOUBLE:
		dtype = AL_DT_FP64;
		break;
	default:
		ali_diag_add(d, AL_SEV_ERROR, NULL, UINT64_MAX, NULL, f->name,
			    "cannot make a random %s input", al_feature_kind_name(f->kind));
		return AL_E_UNSUPPORTED;
	}
	if (!max_bytes)
		max_bytes = DEFAULT_MAX_BYTES;
	uint64_t count = 1;
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0 || (dims[i] && count > max_bytes / sizeof(float) / (uint64_t)dims[i])) {
			ali_diag_add(d, AL_SEV_ERROR, NULL, UINT64_MAX, NULL, f->name,
				    "a random input of this shape needs more than the %llu MB allowed",
				    (unsigned long long)(max_bytes >> 20));
			return AL_E_UNSUPPORTED;
		}
		count *= (uint64_t)dims[i];
	}
	al_tensor *t = al_tensor_new(dtype, rank, dims);
	if (!t) {
		ali_diag_add(d, AL_SEV_ERROR, NULL, UINT64_MAX, NULL, f->name,
			    "random input too large or out of memory");
		return AL_E_NOMEM;
	}
	uint64_t s = seed ^ ali_hash_str(f->name);
	for (size_t i = 0; i < t->n; i++) {
		uint64_t r = splitmix(&s);
		if (dtype == AL_DT_UINT8)
			t->f[i] = (float)(r >> 56);
		else if (dtype == AL_DT_BOOL)
			t->f[i] = (float)(r >> 63);
		else if (!ali_exec_float_dtype(dtype))
			t->f[i] = (float)((r >> 32) % 10);
		else
			t->f[i] = (float)((double)(r >> 40) / (double)(UINT64_C(1) << 24));
	}
	*out = t;
	return AL_OK;
}

enum al_status al_random_tensor(const struct al_shape *sh, const char *name, uint64_t seed,
				uint64_t max_bytes, al_tensor **out, al_diags *d)
{
	if (!sh || !out || !d)
		return AL_E_INVALID_ARG;
	*out = NULL;
	if (sh->rank < 0 || sh->rank > AL_TENSOR_MAX_RANK || sh->rank > AL_SHAPE_MAX_RANK) {
		ali_diag_add(d, AL_SEV_ERROR, NULL, UINT64_MAX, NULL, name,
			    "cannot draw a random value of unknown rank");
		return AL_E_UNSUPPORTED;
	}
	if (!max_bytes)
		max_bytes = DEFAULT_MAX_BYTES;
	uint64_t count = 1;
	for (int i = 0; i < sh->rank; i++) {
		if (sh->dims[i] < 0) {
			ali_diag_add(d, AL_SEV_ERROR, NULL, UINT64_MAX, NULL, name,
				    "cannot draw a random value: dim %d is unknown", i);
			return AL_E_UNSUPPORTED;
		}
		if (sh->dims[i] && count > max_bytes / sizeof(float) / (uint64_t)sh->dims[i]) {
			ali_diag_add(d, AL_SEV_ERROR, NULL, UINT64_MAX, NULL, name,
				    "a random value of this shape needs more than the %llu MB allowed",
				    (unsigned long long)(max_bytes >> 20));
			return AL_E_UNSUPPORTED;
		}
		count *= (uint64_t)sh->dims[i];
	}
	int dtype = sh->dtype ? sh->dtype : AL_DT_FP32;
	al_tensor *t = al_tensor_new(dtype == AL_DT_STRING ? AL_DT_FP32 : dtype, sh->rank, sh->dims);
	if (!t) {
		ali_diag_add(d, AL_SEV_ERROR, NULL, UINT64_MAX, NULL, name,
			    "random value too large or out of memory");
		return AL_E_NOMEM;
	}
	uint64_t s = seed ^ ali_hash_str(name);
	for (size_t i = 0; i < t->n; i++) {
		uint64_t r = splitmix(&s);
		if (dtype == AL_DT_BOOL)
			t->f[i] = (float)(r >> 63);
		else if (!ali_exec_float_dtype(dtype))
			t->f[i] = (float)((r >> 32) % 10);
		else /* [-1, 1): both signs, 24 bits */
			t->f[i] = (float)((double)(r >> 40) / (double)(UINT64_C(1) << 23) - 1.0);
	}
	*out = t;
	return AL_OK;
}
