/* SPDX-License-Identifier: MIT */
/* mil_check.c (al_model_validate): an ML Program's op inputs against the op definitions of its
 * opset (mil_domains.def): each listed input's dtype in its domain, the inputs
 * sharing a type variable of one dtype, and the inputs that must be constants
 * computed from constants. Core ML's compiler (and coremltools' MIL loader,
 * which re-runs type inference on every op) refuses a program that breaks one;
 * anelint's interpreter would run it, so `check`, `run` / `verify` and every
 * `fix` pass ask here first. One located error per broken input: the file, the
 * op's byte offset and field path, the op, the input's name. A NeuralNetwork's
 * joining layers (concat, concatND, stack) need two inputs (nn_min_inputs). */
#include "model.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define DT(x) (UINT64_C(1) << AL_DT_##x)
#define F16 DT(FP16)
#define F32 DT(FP32)
#define I8 DT(INT8)
#define I16 DT(INT16)
#define I32 DT(INT32)
#define U8 DT(UINT8)
#define U16 DT(UINT16)
#define BOOL DT(BOOL)
#define STR DT(STRING)
#define IN_CONST 1u

struct opin {
	int kind;          /* AL_MILK_<op> */
	int since;         /* first opset (iOS version) of the signature */
	const char *input;
	char var;          /* type variable, 0: none */
	uint64_t dtypes;   /* bit AL_DT_x: taken */
	unsigned flags;
};

static const struct opin opins[] = {
#define AL_OPIN(op, since, input, var, dtypes, flags) {AL_MILK_##op, since, #input, var, dtypes, flags},
#include "mil_domains.def"
#undef AL_OPIN
};
#define N_OPINS (sizeof opins / sizeof opins[0])

/* The iOS version of an opset name ("CoreML5" -> 15 ... "CoreML9" -> 26), 0
 * when unknown (then nothing is checked: no guess at what an unknown opset allows). */
int ali_mil_opset_ios(const char *opset)
{
	static const char *const names[][2] = {
		{"CoreML5", "15"}, {"CoreML6", "16"}, {"CoreML7", "17"}, {"CoreML8", "18"}, {"CoreML9", "26"},
	};
	for (size_t i = 0; opset && i < sizeof names / sizeof names[0]; i++)
		if (strcmp(opset, names[i][0]) == 0)
			return (names[i][1][0] - '0') * 10 + (names[i][1][1] - '0');
	return 0;
}

/* The rows of each op kind, [kind_first, kind_end), built once: signature() ran two scans
 * of every row for every op, a sixth of an LLM-scale check (issue #34). A kind's rows need not
 * be adjacent in the .def: the range covers them all and the scan checks the kind. */
static uint16_t kind_first[AL_MILK_COUNT], kind_end[AL_MILK_COUNT];
static pthread_once_t kind_once = PTHREAD_ONCE_INIT;

static void kind_index_init(void)
{
	for (size_t i = 0; i < N_OPINS; i++) {
		int k = opins[i].kind;
		if (k < 0 || k >= AL_MILK_COUNT)
			continue;
		if (kind_end[k] == 0)
			kind_first[k] = (uint16_t)i;
		kind_end[k] = (uint16_t)(i + 1);
	}
}

/* [*first, *end) of the rows of op kind k that apply on opset ios; false: none. */
static bool signature(int kind, int ios, size_t *first, size_t *end)
{
	if (kind < 0 || kind >= AL_MILK_COUNT)
		return false;
	pthread_once(&kind_once, kind_index_init);
	int best = 0;
	for (size_t i = kind_first[kind]; i < kind_end[kind]; i++)
		if (opins[i].kind == kind && opins[i].since <= ios && opins[i].since > best)
			best = opins[i].since;
	if (!best)
		return false;
	*first = N_OPINS;
	for (size_t i = kind_first[kind]; i < kind_end[kind]; i++)
		if (opins[i].kind == kind && opins[i].since == best) {
			if (*first == N_OPINS)
				*first = i;
			*end = i + 1;
		}
	return true;
}

uint64_t ali_mil_input_dtypes(int kind, int ios, const char *input, bool *must_be_const)
{
	size_t a, b;
	if (must_be_const)
		*must_be_const = false;
	if (kind < 0 || !input || !signature(kind, ios, &a, &b))
		return 0;
	for (size_t i = a; i < b; i++)
		if (opins[i].kind == kind && strcmp(opins[i].input, input) == 0) {
			if (must_be_const)
				*must_be_const = opins[i].flags & IN_CONST;
			return opins[i].dtypes;
		}
	return 0;
}

/* ------------------------------------------------------------------ constness */

/* Whether value `name` seen from op n is known when the model is compiled: a
 * const / constexpr_* / dequantize op's output, or an op's whose every input
 * is (coremltools' is_descendant_of_const). A function or block input is not.
 * *budget bounds the ops visited (a DAG can reach one op by many paths); when
 * it runs out the answer is yes: no error without proof. */
static bool is_const_value(const struct al_node *n, const char *name, int depth, uint32_t *budget)
{
	const struct al_node *p = ali_mil_producer(n, name);
	if (!p)
		return false;
	if (p->kind >= 0 && (ali_mil_kinds[p->kind].flags & AL_OPF_CONST))
		return true;
	if (p->kind == AL_MILK_dequantize || p->kind == AL_MILK_shape)
		return true; /* shape: coremltools infers the value of a static shape; not judged */
	if (depth >= AL_MAX_DEPTH || !*budget)
		return true;
	--*budget;
	if (p->n_sub)
		return false; /* cond / while_loop: their values are computed */
	for (uint32_t i = 0; i < p->n_inputs; i++)
		if (p->inputs[i] && !is_const_value(p, p->inputs[i], depth + 1, budget))
			return false;
	return true;
}

/* ------------------------------------------------------------------ the check */

struct chk {
	const struct al_submodel *sub;
	al_diags *d;
	uint32_t bad, max_diags;
};

static void say(struct chk *c, const struct al_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(struct chk *c, const struct al_node *n, const char *fmt, ...)
{
	c->bad++;
	if (c->bad > c->max_diags)
		return;
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ali_diag_add(c->d, AL_SEV_ERROR, c->sub->file, n->offset, n->path, n->name, "%s", msg);
}

/* "fp16", "fp16 or fp32", "fp32, int32 or bool" */
static void domain_words(uint64_t dt, char *buf, size_t cap)
{
	size_t k = 0, count = 0, seen = 0;
	buf[0] = '\0';
	for (int i = 0; i < 64; i++)
		count += (dt >> i) & 1;
	for (int i = 0; i < 64 && k < cap; i++) {
		if (!((dt >> i) & 1))
			continue;
		seen++;
		k += (size_t)snprintf(buf + k, cap - k, "%s%s", seen == 1 ? "" : seen == count ? " or " : ", ",
				      al_dtype_name(i));
	}
}

/* The dtype of binding b of op n: a const op's value's (what coremltools'
 * loader types it by), else a named value's declared type, a literal's; 0 when
 * not a tensor or not known. */
static int binding_dtype(const struct al_node *n, const struct al_mil_bind *b)
{
	struct al_mil_value mv;
	al_span val;
	if (b->kind == 1) {
		const char *name = b->input < n->n_inputs ? n->inputs[b->input] : NULL;
		const struct al_node *p = ali_mil_producer(n, name);
		if (p && p->kind == AL_MILK_const && ali_mil_attr(p, "val", &val) && ali_mil_value_read(val, &mv) &&
		    (mv.kind == AL_MV_TENSOR || mv.kind == AL_MV_BLOB || mv.kind == AL_MV_STRINGS) && mv.dtype)
			return mv.dtype;
		const struct al_ttype *t = ali_mil_value_type(n, name);
		return t && t->kind == 0 ? t->dtype : 0;
	}
	if (b->kind == 2 && ali_mil_value_read(b->data, &mv) && mv.kind == AL_MV_TENSOR)
		return mv.dtype;
	return 0;
}

static void check_op(struct chk *c, const struct al_node *n, int ios, const char *opset)
{
	const struct al_node_src *src = al_src(n);
	size_t a, b;
	if (n->kind < 0 || !src || !signature(n->kind, ios, &a, &b))
		return;
	/* the first dtype seen per type variable, and the input that had it */
	char vars[8] = {0};
	int var_dt[8] = {0};
	const char *var_in[8] = {0};
	for (size_t r = a; r < b; r++) {
		const struct opin *row = &opins[r];
		const struct al_mil_arg *arg = NULL;
		for (uint32_t i = 0; i < src->n_mil_args; i++)
			if (src->mil_args[i].param && strcmp(src->mil_args[i].param, row->input) == 0)
				arg = &src->mil_args[i];
		if (!arg)
			continue;
		for (uint32_t k = 0; k < arg->n_binds; k++) {
			const struct al_mil_bind *bd = &arg->binds[k];
			const char *vname = bd->kind == 1 && bd->input < n->n_inputs ? n->inputs[bd->input] : NULL;
			int dt = binding_dtype(n, bd);
			char dom[96];
			if (dt > 0 && dt < 64 && !((row->dtypes >> dt) & 1)) {
				domain_words(row->dtypes, dom, sizeof dom);
				say(c, n, "%s input '%s'%s%s%s is %s: on opset %s (iOS %d) %s takes %s only", n->type,
				    row->input, vname ? " ('" : "", vname ? vname : "", vname ? "')" : "",
				    al_dtype_name(dt), opset, ios, n->type, dom);
			} else if (dt > 0 && row->var) {
				size_t v = 0;
				while (v < sizeof vars && vars[v] && vars[v] != row->var)
					v++;
				if (v < sizeof vars && !vars[v]) {
					vars[v] = row->var;
					var_dt[v] = dt;
					var_in[v] = row->input;
				} else if (v < sizeof vars && var_dt[v] != dt) {
					say(c, n, "%s input '%s' is %s but '%s' is %s: on opset %s (iOS %d) they take "
						  "one dtype (%c)", n->type, row->input, al_dtype_name(dt), var_in[v],
					    al_dtype_name(var_dt[v]), opset, ios, row->var);
				}
			}
			if ((row->flags & IN_CONST) && vname) {
				uint32_t budget = 4096;
				if (!is_const_value(n, vname, 0, &budget))
					say(c, n, "%s input '%s' ('%s') must be a constant (a const op, or computed "
						  "from const ops only): on opset %s %s takes no runtime value there",
					    n->type, row->input, vname, opset, n->type);
			}
		}
	}
}

static void check_graph(struct chk *c, const struct al_graph *g, int ios, const char *opset, int depth)
{
	if (!g || depth > AL_MAX_DEPTH)
		return;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *n = &g->nodes[k];
		check_op(c, n, ios, opset);
		for (uint32_t s = 0; s < n->n_sub; s++)
			check_graph(c, n->sub[s], ios, opset, depth + 1);
	}
}

uint32_t ali_mil_check_domains(const struct al_model *m, al_diags *d, uint32_t max_diags)
{
	uint32_t bad = 0;
	for (size_t i = 0; m && i < m->n_subs; i++) {
		const struct al_submodel *sub = m->subs[i];
		if (sub->world != AL_WORLD_MIL || !sub->opsets)
			continue;
		struct chk c = {.sub = sub, .d = d, .max_diags = max_diags > bad ? max_diags - bad : 0};
		for (uint32_t g = 0; g < sub->n_graphs && g < sub->n_functions; g++) {
			int ios = ali_mil_opset_ios(sub->opsets[g]);
			if (ios)
				check_graph(&c, sub->graphs[g], ios, sub->opsets[g], 0);
		}
		bad += c.bad;
	}
	if (bad > max_diags && d)
		ali_diag_add(d, AL_SEV_ERROR, m->path, UINT64_MAX, NULL, NULL,
			     "%u more op inputs break the op definitions of their opset", bad - max_diags);
	return bad;
}

/* ------------------------------------------------------------------ NeuralNetwork layers
 * The fewest inputs Core ML's validator (NeuralNetworkLayerValidator.cpp,
 * validateInputCount) accepts for the layers that join tensors: a concat of
 * one input is refused ("has 1 inputs but expects at least 2"). */
static const struct {
	int kind;
	uint32_t min_inputs;
} nn_min_inputs[] = {
	{AL_NNK_concat, 2},
	{AL_NNK_concatND, 2},
	{AL_NNK_stack, 2},
};

struct nn_chk {
	const struct al_submodel *sub;
	al_diags *d;
	uint32_t bad, max_diags;
};

static void nn_node(void *ctx, const struct al_node *n)
{
	struct nn_chk *c = ctx;
	for (size_t i = 0; i < sizeof nn_min_inputs / sizeof nn_min_inputs[0]; i++)
		if (n->kind == nn_min_inputs[i].kind && n->n_inputs < nn_min_inputs[i].min_inputs &&
		    ++c->bad <= c->max_diags)
			ali_diag_add(c->d, AL_SEV_ERROR, c->sub->file, n->offset, n->path, n->name,
				     "%s has %u input%s: Core ML takes at least %u", n->type, n->n_inputs,
				     n->n_inputs == 1 ? "" : "s", nn_min_inputs[i].min_inputs);
}

static uint32_t nn_check(const struct al_model *m, al_diags *d, uint32_t max_diags)
{
	uint32_t bad = 0;
	for (size_t i = 0; i < m->n_subs; i++) {
		if (m->subs[i]->world != AL_WORLD_NN)
			continue;
		struct nn_chk c = {.sub = m->subs[i], .d = d, .max_diags = max_diags > bad ? max_diags - bad : 0};
		ali_walk_nodes(m->subs[i], nn_node, &c);
		bad += c.bad;
	}
	return bad;
}

enum al_status al_model_validate(const al_model *m, al_diags *d)
{
	if (!m)
		return AL_E_INVALID_ARG;
	uint32_t bad = ali_mil_check_domains(m, d, 20);
	bad += nn_check(m, d, bad < 20 ? 20 - bad : 0);
	return bad ? AL_E_FORMAT : AL_OK;
}
