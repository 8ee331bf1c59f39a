/* SPDX-License-Identifier: MIT */
/* mil_while_unroll.c: mil-while-unroll, a while_loop with a static trip count
 * unrolled into its body's ops, step by step (docs/surgery.md has its row;
 * tests/pass_mil_while_unroll.sh).
 *
 * coremltools 8.3 converts PyTorch's GRU (the reset_after form the iOS 15-17
 * gru op cannot express) into
 *   while_loop(loop_vars = (i0, buf0)) cond: less(i, N)
 *     body: gather(x, i) ... the gate ops ... scatter(buf, i + 1, h), i + 1
 * which runs on the CPU (ANE033, the gather's int index ANE022). With N - i0
 * known when the file is read it is the same ops N - i0 times, i a constant in
 * each: per step every body op is copied under a new name (<op>_u<step>),
 * the loop-carried values of the step before bound in, and
 *   - i + c            -> a known integer (no op; read only by the next two)
 *   - gather(x, i)     -> slice_by_index of x at i on axis 0 (rank kept)
 *   - scatter(b, i, u) -> concat(slice of b before i, u, slice after i), axis 0
 *   - a cast fp16 -> fp32 of a loop value followed, in the next step, by its
 *     cast back to fp16: both dropped (the fp16 value read directly)
 *   - the body's consts, and ops reading nothing the loop changes (the cast
 *     of the model input): once, under their own names.
 * The while_loop's outputs: the index a const, each other the last step's
 * value (an `identity` under the loop's output name; fp16 when only casts
 * read it, as the body's value before its cast back to fp32 was). The same
 * ops on the same values in the same order: exact. Limits: the cond a single
 * less(i, N) of a constant N, the body's index read only by gather / scatter
 * on axis 0 and the i + c that becomes the next i, no nested blocks, static
 * shapes where slices are cut, at most WHILE_MAX_STEPS steps and the ops one
 * rewrite may list.
 *
 * TensorFlow's form (a Keras GRU): the sequence a list_scatter of V's rows
 * before the loop, read by list_read(ls, i) -> row i of V (of the fp16 value V
 * was cast from); the outputs written by list_write(ls, i, v) to a carried
 * make_list -> remembered per element, and the one list_gather after the loop
 * -> a stack of them under its name (the list_gather deleted).
 *
 * An fp32 body: its unrolled ops would still fall back (ANE029), so it is
 * unrolled only when mil-fp16-compute converts the loop-free program in fix's
 * next round (fp16_after_unroll); the rewrite is marked off_until_next_round. */
#include "passes.h"
#include "coreml_fields.h"
#include "kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* At most this many steps, and at most AL_PASS_MAX_NAMES ops in all (the ops
 * one rewrite lists): a small body may run longer than the 16 steps of the
 * lstm / gru passes (docs/surgery.md says why). */
#define WHILE_MAX_STEPS 128
#define WHILE_MAX_TRIALS 8 /* other while_loops tried (unrolls_too) */
#define WHILE_MAX_VALUES 256 /* body values tracked (inputs and op outputs) */

/* A body value and what it is in the current step. */
struct wval {
	const char *name;  /* in the body */
	const char *cur;   /* the name it has now (NULL: not yet) */
	bool is_int;       /* a known integer (the index, i + c): ival */
	int64_t ival;
	bool varies;       /* depends on the loop-carried values */
	const char *src16; /* a dropped cast fp16 -> fp32 of src16 (emitted: cur) */
	const struct al_node *cast; /* that cast (emitted later if something else reads it) */
	bool emitted;
	/* a list carried through the loop (TensorFlow's TensorArray): each element's
	 * name (NULL: not written) and dtype */
	const char **elems;
	int *edt;
	int64_t n_elems;
	/* a list_read row held as its fp16 slice (src16, cast NULL): the fp32
	 * tensor it was cast from and the row, sliced if an fp32 reader needs it */
	const char *row_of;
	int64_t row;
	const struct al_ttype *row_t;
};

struct wu {
	struct al_mil_pass *c;
	struct wval v[WHILE_MAX_VALUES];
	uint32_t nv;
	int step;
	/* fp32 body ops are unrolled: mil-fp16-compute converts the unrolled
	 * program in the next round (fp16_after_unroll); else why16 says why not */
	bool then16;
	char why16[120];
	uint32_t n32; /* fp32 body ops unrolled */
	bool lists;   /* list_read / list_write unrolled */
	bool scratch; /* a trial for another loop's fp16_after_unroll: nothing kept */
};

static struct wval *find(struct wu *u, const char *name)
{
	for (uint32_t i = 0; i < u->nv; i++)
		if (strcmp(u->v[i].name, name) == 0)
			return &u->v[i];
	return NULL;
}

static struct wval *add_val(struct wu *u, const char *name)
{
	struct wval *w = find(u, name);
	if (w)
		return w;
	if (u->nv >= WHILE_MAX_VALUES)
		return ali_mil_say(u->c, "more than %d values in the body", WHILE_MAX_VALUES), NULL;
	w = &u->v[u->nv++];
	memset(w, 0, sizeof *w);
	w->name = name;
	return w;
}

/* The name binding k of parameter p of body op n (NULL: a literal or none). */
static const char *bind_name(struct wu *u, const struct al_node *n, const char *p, uint32_t k)
{
	al_span b;
	if (ali_mil_param_binding(n, p, k, &b) != 1)
		return NULL;
	return ali_arena_strndup(&u->c->s->arena, b.p, b.n);
}

static bool ensure_emitted(struct wu *u, struct wval *w);
static bool emit_row(struct wu *u, const char *x, int rank, int64_t i, const char *out, const struct al_ttype *t);

/* The current name of body value `name` as an input (an outer value: itself). */
static const char *cur_of(struct wu *u, const char *name)
{
	struct wval *w = find(u, name);
	if (!w)
		return name;
	if (w->is_int)
		return ali_mil_say(u->c, "the loop index '%s' is read by an op other than gather / scatter", name),
		       NULL;
	if (w->elems)
		return ali_mil_say(u->c, "the list '%s' is read by an op other than list_write", name), NULL;
	if (w->src16 && !ensure_emitted(u, w))
		return NULL;
	return w->cur;
}

/* One op message: type, the inputs of body op n renamed (override: param ->
 * name for some), its outputs renamed to outs, its name attribute outs[0]. */
static bool put_copy(struct wu *u, struct al_buf *op, const struct al_node *n, const char *const *outs)
{
	const struct al_node_src *src = al_src(n);
	struct pb_iter it;
	struct pb_field f;
	uint32_t k = 0;
	ali_buf_str(op, OP_TYPE, n->type);
	for (uint32_t a = 0; a < src->n_mil_args; a++) {
		const struct al_mil_arg *arg = &src->mil_args[a];
		struct al_buf av = {0}, e = {0};
		for (uint32_t b = 0; b < arg->n_binds; b++) {
			struct al_buf bb = {0};
			if (arg->binds[b].kind == 1) {
				char *nm = ali_arena_strndup(&u->c->s->arena, arg->binds[b].data.p, arg->binds[b].data.n);
				const char *cu = nm ? cur_of(u, nm) : NULL;
				if (!cu) {
					ali_buf_free(&av);
					return false;
				}
				ali_buf_str(&bb, AL_PB_Argument_Binding_name, cu);
			} else if (arg->binds[b].kind == 2) {
				ali_buf_len(&bb, AL_PB_Argument_Binding_value, arg->binds[b].data.p, arg->binds[b].data.n);
			}
			ali_buf_len(&av, AL_PB_Argument_arguments, bb.p, bb.n);
			av.failed |= bb.failed;
			ali_buf_free(&bb);
		}
		ali_buf_str(&e, PB_MAP_KEY, arg->param);
		ali_buf_len(&e, PB_MAP_VALUE, av.p, av.n);
		ali_buf_len(op, OP_INPUTS, e.p, e.n);
		op->failed |= av.failed || e.failed;
		ali_buf_free(&av);
		ali_buf_free(&e);
	}
	pb_iter_init(&it, src->msg);
	while (pb_next(&it, &f)) {
		if (f.num == OP_OUTPUTS && f.wire == PB_LEN) {
			al_span ty;
			if (k >= n->n_outputs || !pb_get_bytes(f.data, AL_PB_NamedValueType_type, &ty))
				return ali_mil_say(u->c, "an output of '%s' could not be re-read", n->name);
			struct al_buf nv = {0};
			ali_buf_str(&nv, AL_PB_NamedValueType_name, outs[k++]);
			ali_buf_len(&nv, AL_PB_NamedValueType_type, ty.p, ty.n);
			ali_buf_len(op, OP_OUTPUTS, nv.p, nv.n);
			op->failed |= nv.failed;
			ali_buf_free(&nv);
		} else if (f.num == OP_ATTRS && f.wire == PB_LEN) {
			al_span key;
			if (pb_get_bytes(f.data, PB_MAP_KEY, &key) && ali_span_eq(key, "name"))
				continue;
			ali_buf_len(op, OP_ATTRS, f.data.p, f.data.n);
		} else if (f.num == OP_BLOCKS) {
			return ali_mil_say(u->c, "'%s' has nested blocks", n->name);
		}
	}
	if (it.err || k != n->n_outputs)
		return ali_mil_say(u->c, "'%s' could not be re-read", n->name);
	struct al_buf nm = {0};
	ali_mil_put_string_value(&nm, outs[0]);
	ali_mil_put_attr(op, "name", nm.p, nm.n);
	op->failed |= nm.failed;
	ali_buf_free(&nm);
	return true;
}

/* Append op (a whole Operation) before the loop, listed by its first output. */
static bool emit(struct wu *u, struct al_buf *op, const char *first, bool list)
{
	struct al_mil_pass *c = u->c;
	c->pre.failed |= op->failed;
	ali_buf_len(&c->pre, BLOCK_OPS, op->p, op->n);
	ali_buf_free(op);
	if (list) {
		if (c->n_names >= AL_PASS_MAX_NAMES)
			return ali_mil_say(c, "more new ops than one rewrite lists (%d)", AL_PASS_MAX_NAMES);
		c->names[c->n_names++] = first;
	}
	return !c->pre.failed || ali_mil_say(c, "out of memory");
}

/* The dropped cast of w, written after all (an op reads the fp32 value). */
static bool ensure_emitted(struct wu *u, struct wval *w)
{
	if (w->emitted)
		return true;
	w->emitted = true;
	if (!w->cast) /* a list_read row: the fp32 row itself */
		return emit_row(u, w->row_of, w->row_t->rank + 1, w->row, w->cur, w->row_t);
	struct al_buf op = {0};
	const char *save = w->src16;
	w->src16 = NULL; /* its x: the fp16 value, through cur_of */
	bool ok = put_copy(u, &op, w->cast, &w->cur);
	w->src16 = save;
	if (!ok) {
		ali_buf_free(&op);
		return false;
	}
	return emit(u, &op, w->cur, true);
}

/* A new op before the loop from (param, name) pairs. */
static bool emit_new(struct wu *u, const char *type, const char *const *in, int n_in, const char *out,
		     const struct al_ttype *t, const int64_t *dims)
{
	struct al_buf op = {0};
	ali_buf_str(&op, OP_TYPE, type);
	for (int i = 0; i < n_in; i++)
		ali_mil_put_input(&op, in[2 * i], in[2 * i + 1]);
	return ali_mil_pre_op_end(u->c, &op, &out, 1, t->dtype, t->rank, dims ? dims : t->dims);
}

/* slice_by_index(x, begin = [b, 0, ...], end = [e, 0, ...], end_mask = [F, T, ...])
 * of a rank-`rank` x on axis 0, named out, typed t. */
static bool emit_slice(struct wu *u, const char *x, int rank, int64_t b, int64_t e, const char *out,
		       const struct al_ttype *t, const int64_t *dims)
{
	struct al_mil_pass *c = u->c;
	char sfx[64];
	snprintf(sfx, sizeof sfx, "b%lld", (long long)b);
	const char *bn = ali_mil_fresh(c, out, "begin"), *en = ali_mil_fresh(c, out, "end");
	const char *mn = ali_mil_fresh(c, out, "end_mask");
	if (!bn || !en || !mn)
		return ali_mil_say(c, "no free value name");
	double bv[AL_SHAPE_MAX_RANK] = {0}, ev[AL_SHAPE_MAX_RANK] = {0}, mv[AL_SHAPE_MAX_RANK] = {0};
	bv[0] = (double)b, ev[0] = (double)e;
	for (int i = 1; i < rank; i++)
		mv[i] = 1;
	int64_t r1[1] = {rank};
	bool blob;
	size_t names = c->n_names;
	bool ok = ali_mil_pre_const(c, bn, AL_DT_INT32, 1, r1, bv, (size_t)rank, &blob) &&
		  ali_mil_pre_const(c, en, AL_DT_INT32, 1, r1, ev, (size_t)rank, &blob) &&
		  ali_mil_pre_const(c, mn, AL_DT_BOOL, 1, r1, mv, (size_t)rank, &blob);
	c->n_names = (uint32_t)names; /* consts are not listed */
	(void)sfx;
	return ok && emit_new(u, "slice_by_index",
			      (const char *const[]){"x", x, "begin", bn, "end", en, "end_mask", mn}, 4, out, t, dims);
}

/* Row i of the rank-`rank` x on axis 0, that axis squeezed (slice_by_index
 * with squeeze_mask), named out, typed t (rank - 1). */
static bool emit_row(struct wu *u, const char *x, int rank, int64_t i, const char *out, const struct al_ttype *t)
{
	struct al_mil_pass *c = u->c;
	if (rank < 2 || rank > AL_SHAPE_MAX_RANK || t->rank != rank - 1)
		return ali_mil_say(c, "a list element of rank %d is not a row", t->rank);
	const char *bn = ali_mil_fresh(c, out, "begin"), *en = ali_mil_fresh(c, out, "end");
	const char *mn = ali_mil_fresh(c, out, "end_mask"), *sq = ali_mil_fresh(c, out, "squeeze_mask");
	if (!bn || !en || !mn || !sq)
		return ali_mil_say(c, "no free value name");
	double bv[AL_SHAPE_MAX_RANK] = {0}, ev[AL_SHAPE_MAX_RANK] = {0}, mv[AL_SHAPE_MAX_RANK] = {0};
	double qv[AL_SHAPE_MAX_RANK] = {0};
	bv[0] = (double)i, ev[0] = (double)(i + 1), qv[0] = 1;
	for (int k = 1; k < rank; k++)
		mv[k] = 1;
	int64_t r1[1] = {rank};
	bool blob;
	size_t names = c->n_names;
	bool ok = ali_mil_pre_const(c, bn, AL_DT_INT32, 1, r1, bv, (size_t)rank, &blob) &&
		  ali_mil_pre_const(c, en, AL_DT_INT32, 1, r1, ev, (size_t)rank, &blob) &&
		  ali_mil_pre_const(c, mn, AL_DT_BOOL, 1, r1, mv, (size_t)rank, &blob) &&
		  ali_mil_pre_const(c, sq, AL_DT_BOOL, 1, r1, qv, (size_t)rank, &blob);
	c->n_names = (uint32_t)names; /* consts are not listed */
	return ok && emit_new(u, "slice_by_index",
			      (const char *const[]){"x", x, "begin", bn, "end", en, "end_mask", mn, "squeeze_mask", sq},
			      5, out, t, NULL);
}

/* A constant integer parameter of body op n (one value). */
static bool int_param(const struct al_node *n, const char *p, int64_t *v)
{
	int64_t a[2];
	return ali_mil_param_ints(n, p, a, 2) == 1 && (*v = a[0], true);
}

/* cast(x = an fp32 const in weight.bin, dtype fp16), x now the value named xc,
 * as a new fp16 const named out (a cast of an fp32 value closes an fp32 island,
 * ANE029). *done false (and true returned): not such a cast. */
static bool fold_cast(struct wu *u, const struct al_node *n, const char *xc, const char *out, bool *done)
{
	struct al_mil_pass *c = u->c;
	const struct al_node *pr = ali_mil_producer(c->n, xc);
	const struct al_ttype *ot = &n->out_types[0];
	al_span val, d;
	struct al_mil_value mv;
	int dt;
	*done = false;
	if (!pr || pr->kind != AL_MILK_const || ot->kind != 0 || ot->dtype != AL_DT_FP16 ||
	    !ali_mil_attr(pr, "val", &val) || !ali_mil_value_read(val, &mv) || mv.kind != AL_MV_BLOB ||
	    !mv.blob_in_weights || mv.rank < 0 || mv.rank > AL_SHAPE_MAX_RANK ||
	    ali_mil_blob(c->s->m, mv.blob_offset, &d, &dt) || dt != AL_DT_FP32)
		return true;
	uint64_t cnt = 1;
	for (int i = 0; i < mv.rank; i++)
		cnt *= (uint64_t)(mv.dims[i] > 0 ? mv.dims[i] : 0);
	if (!cnt || cnt > (1u << 22) || d.n != cnt * 4)
		return true;
	double *v = ali_malloc((size_t)cnt * sizeof *v);
	if (!v)
		return ali_mil_say(c, "out of memory");
	bool ok = true;
	for (uint64_t i = 0; ok && i < cnt; i++) {
		uint32_t w = al_rd32le(d.p + 4 * i);
		float f;
		memcpy(&f, &w, 4);
		v[i] = f;
		ok = fabs(v[i]) <= 65504.0;
	}
	bool blob;
	size_t names = c->n_names;
	if (ok)
		*done = ali_mil_pre_const(c, out, AL_DT_FP16, mv.rank, mv.dims, v, (size_t)cnt, &blob);
	c->n_names = (uint32_t)names;
	ali_free(v);
	return !ok || *done;
}

/* Body op n's first name binding that is the loop index (*param its
 * parameter), and whether it reads a loop-varying value. */
static const struct wval *reads_of(struct wu *u, const struct al_node *n, const char **param, bool *varies)
{
	const struct wval *idx = NULL;
	const struct al_node_src *src = al_src(n);
	*varies = false;
	*param = NULL;
	for (uint32_t a = 0; src && a < src->n_mil_args; a++)
		for (uint32_t b = 0; b < src->mil_args[a].n_binds; b++) {
			if (src->mil_args[a].binds[b].kind != 1)
				continue;
			char nm[AL_MAX_NAME + 1];
			al_span d = src->mil_args[a].binds[b].data;
			snprintf(nm, sizeof nm, "%.*s", (int)(d.n < AL_MAX_NAME ? d.n : AL_MAX_NAME), (const char *)d.p);
			const struct wval *w = find(u, nm);
			if (w && w->is_int)
				idx = w, *param = src->mil_args[a].param;
			*varies |= w && w->varies;
		}
	return idx;
}

/* A const or an op reading nothing the loop changes: once (in step 0), under
 * its own names. */
static bool step_invariant(struct wu *u, const struct al_node *n)
{
	struct al_mil_pass *c = u->c;
	const char *t = n->type ? n->type : "";
	if (u->step == 0) {
		struct al_buf op = {0};
		if (!put_copy(u, &op, n, (const char *const *)n->outputs)) {
			ali_buf_free(&op);
			return false;
		}
		if (!emit(u, &op, n->outputs[0], strcmp(t, "const") != 0))
			return false;
		/* the cast of a model input (ANE030 until mil-io-fp16 makes the input fp16) */
		if (strcmp(t, "cast") == 0 && !c->stays_off)
			c->stays_off = n->outputs[0];
	}
	for (uint32_t k = 0; k < n->n_outputs; k++) {
		struct wval *w = add_val(u, n->outputs[k]);
		if (!w)
			return false;
		w->cur = n->outputs[k];
	}
	return true;
}

/* scatter(b, i, u) on axis 0 of the rank-rank, D0-row b at the known row i ->
 * concat(b[:i], u (mode add: b[i] + u), b[i+1:]), named out. */
static bool step_scatter(struct wu *u, const struct al_node *n, const struct al_ttype *xt, int64_t i, const char *out)
{
	struct al_mil_pass *c = u->c;
	const struct al_ttype *ot = &n->out_types[0];
	int64_t D0 = xt->dims[0];
	char mode[32] = "update";
	if (ali_mil_param_present(n, "mode") && (!ali_mil_param_string(n, "mode", mode, sizeof mode) ||
						 (strcmp(mode, "update") != 0 && strcmp(mode, "add") != 0)))
		return ali_mil_say(c, "'%s': scatter mode %s (update and add are unrolled)", n->name, mode);
	const char *d = bind_name(u, n, "data", 0), *up = bind_name(u, n, "updates", 0);
	const char *dc = d ? cur_of(u, d) : NULL, *uc = dc && up ? cur_of(u, up) : NULL;
	const struct al_ttype *ut = ali_mil_param_type(n, "updates");
	if (!uc || !ut || ut->kind != 0 || ut->rank != xt->rank || !ut->dims || ut->dims[0] != 1)
		return uc ? ali_mil_say(c, "'%s': the update is not one row", n->name) : false;
	const char *parts[3];
	int np = 0;
	int64_t dims[AL_SHAPE_MAX_RANK];
	memcpy(dims, xt->dims, (size_t)xt->rank * sizeof dims[0]);
	if (i > 0) {
		const char *a = ali_mil_fresh(c, out, "head");
		dims[0] = i;
		if (!a || !emit_slice(u, dc, xt->rank, 0, i, a, ot, dims))
			return a ? false : ali_mil_say(c, "no free value name");
		parts[np++] = a;
	}
	if (strcmp(mode, "add") == 0) { /* the row at i plus the update */
		const char *r = ali_mil_fresh(c, out, "row"), *sum = ali_mil_fresh(c, out, "sum");
		dims[0] = 1;
		if (!r || !sum)
			return ali_mil_say(c, "no free value name");
		if (!emit_slice(u, dc, xt->rank, i, i + 1, r, ot, dims) ||
		    !emit_new(u, "add", (const char *const[]){"x", r, "y", uc}, 2, sum, ot, dims))
			return false;
		uc = sum;
	}
	parts[np++] = uc;
	if (i + 1 < D0) {
		const char *z = ali_mil_fresh(c, out, "tail");
		dims[0] = D0 - i - 1;
		/* end 0 with end_mask on axis 0 too: to the end */
		if (!z || !emit_slice(u, dc, xt->rank, i + 1, D0, z, ot, dims))
			return z ? false : ali_mil_say(c, "no free value name");
		parts[np++] = z;
	}
	const char *ax = ali_mil_fresh(c, out, "axis"), *il = ali_mil_fresh(c, out, "interleave");
	if (!ax || !il)
		return ali_mil_say(c, "no free value name");
	size_t names = c->n_names;
	bool ok = ali_mil_pre_scalar(c, ax, AL_DT_INT32, 0) && ali_mil_pre_scalar(c, il, AL_DT_BOOL, 0);
	c->n_names = (uint32_t)names;
	struct al_buf op = {0};
	ali_buf_str(&op, OP_TYPE, "concat");
	ali_mil_put_inputs(&op, "values", parts, (size_t)np);
	ali_mil_put_input(&op, "axis", ax);
	ali_mil_put_input(&op, "interleave", il);
	return ok && ali_mil_pre_op_end(c, &op, &out, 1, ot->dtype, ot->rank, ot->dims);
}

/* gather / scatter of the loop index idx (read as idx_param) on axis 0 of a
 * static tensor: a slice of row i / a concat of slices, named out. */
static bool step_indexed(struct wu *u, const struct al_node *n, const struct wval *idx, const char *idx_param,
			 struct wval *o0, const char *out)
{
	struct al_mil_pass *c = u->c;
	const char *t = n->type ? n->type : "";
	const struct al_ttype *ot = &n->out_types[0];
	int64_t axis;
	const struct al_ttype *xt = ali_mil_param_type(n, strcmp(t, "gather") == 0 ? "x" : "data");
	bool gather = strcmp(t, "gather") == 0 && strcmp(idx_param, "indices") == 0;
	bool scatter = strcmp(t, "scatter") == 0 && strcmp(idx_param, "indices") == 0;
	if (!gather && !scatter)
		return ali_mil_say(c, "the loop index is read by '%s' (%s): only gather / scatter indices are "
				   "unrolled", n->name, t);
	int64_t bd = 0;
	if (ali_mil_param_present(n, "batch_dims") && !int_param(n, "batch_dims", &bd))
		bd = -1;
	if (!int_param(n, "axis", &axis) || axis != 0 || bd != 0 || !xt || xt->kind != 0 || xt->rank < 1 ||
	    xt->rank > AL_SHAPE_MAX_RANK || !xt->dims || xt->dims[0] < 1 || ot->kind != 0)
		return ali_mil_say(c, "'%s' (%s) is not on axis 0 of a static tensor", n->name, t);
	int64_t i = idx->ival, D0 = xt->dims[0];
	if (i < 0 || i >= D0)
		return ali_mil_say(c, "'%s' reads index %lld of %lld rows", n->name, (long long)i, (long long)D0);
	if (gather) {
		const struct al_ttype *it = ali_mil_param_type(n, "indices");
		if (!it || it->rank != 1)
			return ali_mil_say(c, "'%s': only a [1] index is unrolled", n->name);
		const char *x = bind_name(u, n, "x", 0), *xc = x ? cur_of(u, x) : NULL;
		if (!xc || !emit_slice(u, xc, xt->rank, i, i + 1, out, ot, NULL))
			return false;
	} else if (!step_scatter(u, n, xt, i, out)) {
		return false;
	}
	o0->cur = out;
	return true;
}

/* The fp16 value an outer fp32 value v was cast from (NULL: v is no such cast). */
static const char *cast_source16(struct wu *u, const char *v)
{
	const struct al_node *pr = ali_mil_producer(u->c->n, v);
	const struct al_ttype *xt = pr && pr->kind == AL_MILK_cast ? ali_mil_param_type(pr, "x") : NULL;
	if (!xt || xt->kind != 0 || xt->dtype != AL_DT_FP16 || !pr->out_types || pr->out_types[0].dtype != AL_DT_FP32)
		return NULL;
	return bind_name(u, pr, "x", 0);
}

/* A cast of a loop value: fp16 -> fp32 held back (*done); fp32 -> fp16 of a
 * held one reads the fp16 value; of an fp32 const a new fp16 const. *done
 * false (and true returned): copied as any op. */
static bool step_cast(struct wu *u, const struct al_node *n, struct wval *o0, const char *out, bool *done)
{
	const struct al_ttype *ot = &n->out_types[0];
	const char *x = bind_name(u, n, "x", 0);
	struct wval *xw = x ? find(u, x) : NULL;
	const struct al_ttype *xt = ali_mil_param_type(n, "x");
	*done = true;
	if (xw && xw->src16 && !xw->emitted && ot->dtype == AL_DT_FP16) {
		o0->cur = xw->src16;
		return true;
	}
	bool folded = false;
	const char *xc = xw && !xw->src16 && !xw->is_int ? xw->cur : NULL;
	/* fp32 -> fp16 of an outer fp32 cast of an fp16 value (a carried value's
	 * first value): that fp16 value, exactly */
	const char *s16 = xc && ot->dtype == AL_DT_FP16 && xt && xt->kind == 0 && xt->dtype == AL_DT_FP32
				  ? cast_source16(u, xc) : NULL;
	if (s16) {
		o0->cur = s16, o0->src16 = NULL, o0->is_int = false;
		return true;
	}
	if (xc && !fold_cast(u, n, xc, out, &folded))
		return false;
	if (folded) {
		o0->cur = out, o0->src16 = NULL, o0->is_int = false;
		return true;
	}
	if (xw && xt && xt->kind == 0 && xt->dtype == AL_DT_FP16 && ot->dtype == AL_DT_FP32) {
		const char *x16 = cur_of(u, x);
		if (!x16)
			return false;
		o0->src16 = x16, o0->cast = n, o0->emitted = false, o0->cur = out;
		return true;
	}
	*done = false;
	return true;
}

/* list_read(ls, i) of an outer list_scatter(indices = 0 .. L-1, ls, value = V)
 * at the known index i: row i of V (of the fp16 value V was cast from, held as
 * src16, when there is one). */
static bool step_list_read(struct wu *u, const struct al_node *n, const struct wval *idx, struct wval *o0,
			   const char *out)
{
	struct al_mil_pass *c = u->c;
	const char *ls = bind_name(u, n, "ls", 0);
	const struct al_node *sc = ls && !find(u, ls) ? ali_mil_producer(c->n, ls) : NULL;
	u->lists = true;
	if (!idx || !sc || sc->kind != AL_MILK_list_scatter)
		return ali_mil_say(c, "'%s' (list_read) does not read a list_scatter before the loop at the index", n->name);
	const struct al_ttype *vt = ali_mil_param_type(sc, "value"), *ot = &n->out_types[0];
	int64_t ind[WHILE_MAX_STEPS + 1];
	long ni = ali_mil_param_ints(sc, "indices", ind, WHILE_MAX_STEPS + 1);
	bool identity = ni >= 1 && ni <= WHILE_MAX_STEPS;
	for (long k = 0; identity && k < ni; k++)
		identity = ind[k] == k;
	const char *v = bind_name(u, sc, "value", 0);
	if (!identity || !v || !vt || vt->kind != 0 || !vt->dims || vt->rank < 2 || vt->dims[0] != ni || ot->kind != 0)
		return ali_mil_say(c, "'%s' (list_scatter) does not scatter the rows of a tensor in order", sc->name);
	int64_t i = idx->ival;
	if (i < 0 || i >= ni)
		return ali_mil_say(c, "'%s' reads element %lld of %ld", n->name, (long long)i, ni);
	const char *v16 = cast_source16(u, v);
	o0->cur = out, o0->is_int = false;
	if (!v16)
		return emit_row(u, v, vt->rank, i, out, ot);
	const char *o16 = ali_mil_fresh(c, out, "fp16");
	struct al_ttype *t16 = ali_arena_array(&c->s->arena, 1, sizeof *t16);
	if (!o16 || !t16)
		return ali_mil_say(c, "no free value name");
	*t16 = *ot;
	t16->dtype = AL_DT_FP16;
	o0->src16 = o16, o0->cast = NULL, o0->emitted = false;
	o0->row_of = v, o0->row = i, o0->row_t = ot;
	return emit_row(u, v16, vt->rank, i, o16, t16);
}

/* list_write(ls, index, value) to the carried list at a known index (the loop
 * index or a constant): the list's element set, no op. */
static bool step_list_write(struct wu *u, const struct al_node *n, const struct wval *idx, struct wval *o0)
{
	struct al_mil_pass *c = u->c;
	const char *ls = bind_name(u, n, "ls", 0), *v = bind_name(u, n, "value", 0);
	struct wval *lw = ls ? find(u, ls) : NULL, *vw = v ? find(u, v) : NULL;
	int64_t i;
	if (!lw || !lw->elems || !v)
		return ali_mil_say(c, "'%s' (list_write) does not write to the list the loop carries", n->name);
	if (idx)
		i = idx->ival;
	else if (!int_param(n, "index", &i))
		return ali_mil_say(c, "'%s' (list_write) writes at an index not known when the file is read", n->name);
	if (i < 0 || i >= lw->n_elems)
		return ali_mil_say(c, "'%s' writes element %lld of %lld", n->name, (long long)i, (long long)lw->n_elems);
	const char **el = ali_arena_array(&c->s->arena, (size_t)lw->n_elems, sizeof *el);
	int *edt = ali_arena_array(&c->s->arena, (size_t)lw->n_elems, sizeof *edt);
	if (!el || !edt)
		return ali_mil_say(c, "out of memory");
	memcpy(el, lw->elems, (size_t)lw->n_elems * sizeof *el);
	memcpy(edt, lw->edt, (size_t)lw->n_elems * sizeof *edt);
	const struct al_ttype *vt = ali_mil_param_type(n, "value");
	if (vw && vw->src16 && !vw->emitted) {
		el[i] = vw->src16, edt[i] = AL_DT_FP16;
	} else {
		if (!(el[i] = cur_of(u, v)))
			return false;
		edt[i] = vt && vt->kind == 0 ? vt->dtype : -1;
	}
	o0->elems = el, o0->edt = edt, o0->n_elems = lw->n_elems, o0->cur = NULL, o0->is_int = false;
	return true;
}

/* Body op n in step s: copied, folded or rewritten (scatter mode add: the row
 * sliced out and added to, then the concat). */
static bool step_op(struct wu *u, const struct al_node *n)
{
	struct al_mil_pass *c = u->c;
	const char *t = n->type ? n->type : "";
	if (n->n_sub)
		return ali_mil_say(c, "'%s' (%s) has nested blocks", n->name, t);
	if (!n->n_outputs || !n->out_types)
		return ali_mil_say(c, "'%s' has no typed output", n->name);
	bool varies;
	const char *idx_param;
	const struct wval *idx = reads_of(u, n, &idx_param, &varies);
	struct wval *o0 = add_val(u, n->outputs[0]);
	if (!o0)
		return false;
	if (strcmp(t, "const") == 0 || (!varies && !idx))
		return step_invariant(u, n);
	o0->varies = true;
	char sfx[16];
	snprintf(sfx, sizeof sfx, "u%d", u->step);
	if (idx && strcmp(t, "add") == 0 && n->n_outputs == 1) { /* i + c: a known integer */
		int64_t k;
		const char *other = strcmp(idx_param, "x") == 0 ? "y" : "x";
		if (!int_param(n, other, &k) || k < -(1 << 20) || k > 1 << 20)
			return ali_mil_say(c, "'%s' adds the loop index to a value not known when the file is read", n->name);
		o0->is_int = true, o0->ival = idx->ival + k, o0->cur = NULL;
		return true;
	}
	const struct al_ttype *ot = &n->out_types[0];
	if (idx && strcmp(t, "cast") == 0 && n->n_outputs == 1 && ot->kind == 0 &&
	    (ot->dtype == AL_DT_INT32 || ot->dtype == AL_DT_INT16 || ot->dtype == AL_DT_UINT16) &&
	    idx->ival >= 0 && idx->ival < 32768) { /* the index as int16 / uint16 (iOS 17): the same integer */
		o0->is_int = true, o0->ival = idx->ival, o0->cur = NULL;
		return true;
	}
	if (strcmp(t, "list_write") == 0)
		return step_list_write(u, n, idx, o0);
	const char *out = ali_mil_fresh(c, n->outputs[0], sfx);
	if (!out)
		return ali_mil_say(c, "no free value name");
	if (strcmp(t, "list_read") == 0)
		return step_list_read(u, n, idx, o0, out);
	if (strncmp(t, "list_", 5) == 0)
		return ali_mil_say(c, "'%s' (%s): of the list ops, list_read and list_write at a known index are unrolled",
				   n->name, t);
	if (idx)
		return step_indexed(u, n, idx, idx_param, o0, out);
	if (strcmp(t, "cast") == 0 && n->n_outputs == 1 && ot->kind == 0) {
		bool done;
		if (!step_cast(u, n, o0, out, &done))
			return false;
		if (done)
			return true;
	}
	bool fp32 = ot->kind == 0 && ot->dtype == AL_DT_FP32;
	if (fp32 && !u->then16)
		return ali_mil_say(c, "'%s' (%s) computes in fp32: unrolled it would still fall back (ANE029), and "
				   "mil-fp16-compute would not convert the unrolled program: %s", n->name, t, u->why16);
	u->n32 += fp32;
	const char **outs = ali_arena_array(&c->s->arena, n->n_outputs, sizeof *outs);
	if (!outs)
		return ali_mil_say(c, "out of memory");
	outs[0] = out;
	for (uint32_t k = 1; k < n->n_outputs; k++) {
		struct wval *w = add_val(u, n->outputs[k]);
		if (!w || !(outs[k] = ali_mil_fresh(c, n->outputs[k], sfx)))
			return w ? ali_mil_say(c, "no free value name") : false;
		w->varies = true, w->cur = outs[k], w->src16 = NULL, w->is_int = false;
	}
	struct al_buf op = {0};
	if (!put_copy(u, &op, n, outs)) {
		ali_buf_free(&op);
		return false;
	}
	o0->cur = out, o0->src16 = NULL, o0->is_int = false;
	return emit(u, &op, out, true);
}

static bool unroll(struct al_mil_pass *c, bool scratch);

/* Whether this pass unrolls the other while_loop o of the program too (in the
 * same round): a trial run, its ops, blobs and names taken back. Else why. */
static bool unrolls_too(struct al_mil_pass *c, const struct al_node *o, char *why, size_t n_why)
{
	struct al_surgery *s = c->s;
	struct al_mil_pass *t = ali_calloc(1, sizeof *t);
	if (!t)
		return snprintf(why, n_why, "out of memory"), false;
	t->s = s, t->n = o, t->src = al_src(o);
	size_t tn = s->wtail.n, nn = s->n_newnames;
	uint32_t wc = s->wcount;
	bool ok = t->src && unroll(t, true);
	s->wtail.n = tn, s->wcount = wc, s->n_newnames = nn;
	if (!ok)
		snprintf(why, n_why, "'%.30s' (while_loop) is not unrolled: %.50s", o->name ? o->name : "?", t->why);
	ali_buf_free(&t->pre);
	ali_buf_free(&t->layer);
	ali_free(t);
	return ok;
}

/* Whether op n of graph g (skip: the loop being unrolled) keeps
 * mil-fp16-compute from converting its program once the loop is unrolled
 * (the refusals of surgery_fp16.c's classify that unrolling does not lift):
 * nested blocks (another while_loop this pass unrolls too excepted; in a
 * trial, every other while_loop: the caller tries each), an op anelint does
 * not know, an fp16 result (a mixed program). Says which in why. */
static bool blocks_fp16(struct wu *u, const struct al_graph *g, const struct al_node *skip, char *why, size_t n_why)
{
	int trials = 0;
	for (uint32_t k = 0; g && k < g->n_nodes; k++) {
		const struct al_node *n = &g->nodes[k];
		const char *nm = n->name ? n->name : "?", *t = n->type ? n->type : "?";
		if (n == skip)
			continue;
		if (n->n_sub && strcmp(t, "while_loop") == 0 && g == u->c->n->owner &&
		    (u->scratch || (trials++ < WHILE_MAX_TRIALS && unrolls_too(u->c, n, why, n_why))))
			continue;
		if (n->n_sub)
			return why[0] ? true : (snprintf(why, n_why, "'%.40s' (%s) has nested blocks too", nm, t), true);
		if (n->kind < 0)
			return snprintf(why, n_why, "'%.40s' is a %s, an op anelint does not know", nm, t), true;
		for (uint32_t j = 0; n->out_types && strcmp(t, "const") != 0 && j < n->n_outputs; j++)
			if (n->out_types[j].kind == 0 && n->out_types[j].dtype == AL_DT_FP16)
				return snprintf(why, n_why, "'%.40s' (%s) computes in fp16: a mixed program", nm, t), true;
	}
	return false;
}

/* Whether mil-fp16-compute converts the program once this loop is unrolled
 * (fix runs its rounds to the fixed point: the unrolling, exact, in one round,
 * mil-fp16-compute in the next): approximate rewrites allowed, one function,
 * a package's weight.bin for the new consts, and nothing else in the function
 * or the loop's body that classify refuses. Else u->why16 says why not. */
static bool fp16_after_unroll(struct wu *u)
{
	struct al_mil_pass *c = u->c;
	const struct al_surgery *s = c->s;
	const struct al_submodel *sub = c->src->sub;
	const struct al_node *n = c->n;
	if (s->opts && s->opts->allow < AL_EQ_APPROXIMATE)
		return snprintf(u->why16, sizeof u->why16, "it needs --allow approximate"), false;
	if (!sub || sub->n_functions != 1 || sub->n_fdescs > 1)
		return snprintf(u->why16, sizeof u->why16, "a program with more than one function"), false;
	if (!s->m->is_package && !s->m->weights.p)
		return snprintf(u->why16, sizeof u->why16, "an ML Program outside its .mlpackage"), false;
	u->why16[0] = '\0';
	if (blocks_fp16(u, n->owner, n, u->why16, sizeof u->why16) ||
	    blocks_fp16(u, n->sub[1], NULL, u->why16, sizeof u->why16))
		return false;
	return true;
}

/* A list loop value's first value: make_list(init_length = L) before the loop,
 * no element written yet. */
static bool init_list(struct wu *u, const char *outer, struct wval *w)
{
	struct al_mil_pass *c = u->c;
	const struct al_node *ml = ali_mil_producer(c->n, outer);
	int64_t L;
	if (!ml || ml->kind != AL_MILK_make_list || !int_param(ml, "init_length", &L) || L < 1 ||
	    L > WHILE_MAX_STEPS)
		return ali_mil_say(c, "the list '%s' the loop carries is not a make_list of a known length (1 to %d)",
				   outer, WHILE_MAX_STEPS);
	w->elems = ali_arena_array(&c->s->arena, (size_t)L, sizeof *w->elems);
	w->edt = ali_arena_array(&c->s->arena, (size_t)L, sizeof *w->edt);
	if (!w->elems || !w->edt)
		return ali_mil_say(c, "out of memory");
	for (int64_t i = 0; i < L; i++)
		w->elems[i] = NULL, w->edt[i] = -1;
	w->n_elems = L;
	return true;
}

/* A list loop value k read after the loop by one list_gather(indices known, ls)
 * only: that list_gather deleted (c->drop) and its output written before the
 * loop as a stack of the elements gathered (one: an expand_dims), cast to the
 * list_gather's dtype when the elements are its fp16 sources. */
static bool list_output(struct wu *u, uint32_t k, const struct wval *o)
{
	struct al_mil_pass *c = u->c;
	const struct al_node *n = c->n, *rd = NULL;
	const struct al_graph *g = n->owner;
	const struct al_submodel *sub = c->src->sub;
	for (uint32_t q = 0; q < sub->n_outputs; q++)
		if (sub->outputs[q].name && strcmp(sub->outputs[q].name, n->outputs[k]) == 0)
			return ali_mil_say(c, "the list '%s' is a model output", n->outputs[k]);
	for (uint32_t q = 0; g && q < g->n_nodes; q++)
		for (uint32_t i = 0; i < g->nodes[q].n_inputs; i++)
			if (g->nodes[q].inputs[i] && strcmp(g->nodes[q].inputs[i], n->outputs[k]) == 0) {
				if (rd || g->nodes[q].kind != AL_MILK_list_gather)
					return ali_mil_say(c, "the list '%s' is read after the loop by more than one "
							   "list_gather", n->outputs[k]);
				rd = &g->nodes[q];
			}
	if (!rd || !o || !o->elems)
		return ali_mil_say(c, "the list '%s' is not read by a list_gather", n->outputs[k]);
	int64_t ind[WHILE_MAX_STEPS + 1];
	long ni = ali_mil_param_ints(rd, "indices", ind, WHILE_MAX_STEPS + 1);
	const struct al_ttype *gt = rd->out_types;
	if (ni < 1 || ni > WHILE_MAX_STEPS || rd->n_outputs != 1 || !gt || gt->kind != 0 || gt->rank < 1)
		return ali_mil_say(c, "'%s' (list_gather) gathers indices not known when the file is read", rd->name);
	const char **vals = ali_arena_array(&c->s->arena, (size_t)ni, sizeof *vals);
	if (!vals)
		return ali_mil_say(c, "out of memory");
	int dt = -1;
	for (long i = 0; i < ni; i++) {
		if (ind[i] < 0 || ind[i] >= o->n_elems || !o->elems[ind[i]] || (i && o->edt[ind[i]] != dt))
			return ali_mil_say(c, "'%s' gathers element %lld the loop does not write (or of another dtype)",
					   rd->name, (long long)ind[i]);
		vals[i] = o->elems[ind[i]], dt = o->edt[ind[i]];
	}
	if (dt != gt->dtype && !(dt == AL_DT_FP16 && gt->dtype == AL_DT_FP32))
		return ali_mil_say(c, "'%s' gathers elements of another dtype", rd->name);
	const char *out = rd->outputs[0], *st = dt == gt->dtype ? out : ali_mil_fresh(c, out, "fp16");
	const char *ax = ali_mil_fresh(c, out, "axis");
	if (!st || !ax)
		return ali_mil_say(c, "no free value name");
	struct al_ttype t = *gt;
	t.dtype = dt;
	size_t names = c->n_names;
	int64_t one[1] = {1};
	bool blob, ok = ni == 1 ? ali_mil_pre_const(c, ax, AL_DT_INT32, 1, one, (double[]){0}, 1, &blob)
				: ali_mil_pre_scalar(c, ax, AL_DT_INT32, 0);
	c->n_names = (uint32_t)names;
	struct al_buf op = {0};
	ali_buf_str(&op, OP_TYPE, ni == 1 ? "expand_dims" : "stack");
	if (ni == 1)
		ali_mil_put_input(&op, "x", vals[0]);
	else
		ali_mil_put_inputs(&op, "values", vals, (size_t)ni);
	ali_mil_put_input(&op, ni == 1 ? "axes" : "axis", ax);
	if (!ok || !ali_mil_pre_op_end(c, &op, &st, 1, t.dtype, t.rank, t.dims))
		return false;
	if (st != out) { /* the fp16 stack back to the list_gather's fp32 (stays off: ANE029) */
		const char *dn = ali_mil_fresh(c, out, "dtype");
		struct al_buf k32 = {0}, v = {0};
		if (!dn)
			return ali_mil_say(c, "no free value name");
		ali_buf_str(&k32, OP_TYPE, "const");
		ali_mil_put_string_value(&v, "fp32");
		ali_mil_put_attr(&k32, "val", v.p, v.n);
		k32.failed |= v.failed;
		ali_buf_free(&v);
		names = c->n_names;
		ok = ali_mil_pre_op_end(c, &k32, &dn, 1, AL_DT_STRING, 0, NULL);
		c->n_names = (uint32_t)names;
		if (!ok || !emit_new(u, "cast", (const char *const[]){"x", st, "dtype", dn}, 2, out, gt, NULL))
			return false;
		c->stays_off = out;
	}
	c->drop = al_src(rd)->msg;
	return true;
}

/* Whether every reader of value v is a cast in c->n's block (v no function output). */
static bool read_by_casts(struct al_mil_pass *c, const char *v)
{
	const struct al_graph *g = c->n->owner;
	const struct al_submodel *sub = c->src->sub;
	for (uint32_t o = 0; o < sub->n_outputs; o++)
		if (sub->outputs[o].name && strcmp(sub->outputs[o].name, v) == 0)
			return false;
	for (uint32_t k = 0; g && k < g->n_nodes; k++) {
		const struct al_node *r = &g->nodes[k];
		for (uint32_t i = 0; i < r->n_inputs; i++)
			if (r->inputs[i] && strcmp(r->inputs[i], v) == 0 &&
			    (r->n_sub || r->kind != AL_MILK_cast))
				return false;
	}
	return true;
}

/* The trip count: the cond block a single less(index, N) of a constant N, the
 * index's first value a constant i0. */
static bool trip_count(struct al_mil_pass *c, const struct al_graph *cond, const struct al_mil_block_io *cio,
		       int64_t *i0, int64_t *N)
{
	const struct al_node *n = c->n;
	const struct al_node *lt = NULL;
	for (uint32_t k = 0; k < cond->n_nodes; k++) {
		const struct al_node *q = &cond->nodes[k];
		if (q->kind == AL_MILK_const)
			continue;
		if (lt)
			return ali_mil_say(c, "its cond block computes more than one less()");
		lt = q;
	}
	al_span xb;
	if (!lt || lt->kind != AL_MILK_less || lt->n_outputs != 1 ||
	    strcmp(lt->outputs[0], cio->outputs[0]) != 0 || ali_mil_param_binding(lt, "x", 0, &xb) != 1 ||
	    !ali_span_eq(xb, cio->inputs[0]) || !int_param(lt, "y", N))
		return ali_mil_say(c, "its cond is not less(index, a constant): the trip count is not known when the "
				   "file is read");
	int64_t iv[2];
	if (ali_mil_param_ints(n, "loop_vars", iv, 2) != 1 || n->out_types[0].kind != 0 || n->out_types[0].rank > 1)
		return ali_mil_say(c, "its first loop value is not a constant index");
	*i0 = iv[0];
	if (*i0 < -(1 << 30) || *i0 > 1 << 30 || *N < -(1 << 30) || *N > 1 << 30)
		return ali_mil_say(c, "its index runs from %lld to %lld", (long long)*i0, (long long)*N);
	return true;
}

/* The loop's outputs: the index a const; a list its list_gather's stack; the
 * others the last step's values (the last one the op itself, an identity). */
static bool loop_outputs(struct wu *u, const struct al_mil_block_io *bio, int64_t N)
{
	struct al_mil_pass *c = u->c;
	const struct al_node *n = c->n;
	bool ok = true;
	for (uint32_t k = 0; ok && k < n->n_outputs; k++) {
		const struct al_ttype *t = &n->out_types[k];
		if (k == 0) {
			bool blob;
			double v = (double)N;
			size_t names = c->n_names;
			ok = t->kind == 0 && ali_mil_pre_const(c, n->outputs[0], t->dtype, t->rank, t->dims, &v, 1, &blob);
			c->n_names = (uint32_t)names;
			if (!ok && !c->why[0])
				ali_mil_say(c, "the index output is not a tensor");
			continue;
		}
		struct wval *o = find(u, bio->outputs[k]);
		if (t->kind == 1 && k + 1 < n->n_outputs) { /* a list: its list_gather after the loop */
			ok = list_output(u, k, o);
			continue;
		}
		if (!o || t->kind != 0) {
			ok = ali_mil_say(c, "loop value %u is not a tensor the body computes", k);
			break;
		}
		const char *src = o->cur;
		int dt = t->dtype;
		if (o->src16 && !o->emitted && read_by_casts(c, n->outputs[k]))
			src = o->src16, dt = AL_DT_FP16; /* fp16 under its own name: only casts read it */
		else if (o->src16 && !(ok = ensure_emitted(u, o)))
			break;
		if (k + 1 == n->n_outputs) { /* the op itself */
			ali_buf_str(&c->layer, OP_TYPE, "identity");
			ali_mil_put_input(&c->layer, "x", src);
			ali_mil_put_output(&c->layer, n->outputs[k], dt, t->rank, t->dims);
			al_span nv;
			if (ali_mil_attr(n, "name", &nv))
				ali_mil_put_attr(&c->layer, "name", nv.p, nv.n);
		} else {
			ok = emit_new(u, "identity", (const char *const[]){"x", src}, 1, n->outputs[k],
				      &(struct al_ttype){.dtype = dt, .rank = t->rank, .dims = t->dims}, NULL);
		}
	}
	return ok;
}

#define WHILE_MAX_DEAD 32  /* ops before the loop deleted with it */
#define WHILE_READ_DEPTH 8 /* nested blocks searched for a reader */

/* Whether the bytes b hold the protobuf string v (its length varint, then v). */
static bool bytes_name(al_span b, const char *v)
{
	size_t n = strlen(v);
	uint8_t len[2] = {(uint8_t)(n < 128 ? n : (n & 0x7f) | 0x80), (uint8_t)(n >> 7)};
	size_t ln = n < 128 ? 1 : 2;
	if (!n || n >= 1u << 14)
		return true; /* not a name this search tells apart: kept */
	for (size_t i = ln; i + n <= b.n; i++)
		if (memcmp(b.p + i, v, n) == 0 && memcmp(b.p + i - ln, len, ln) == 0)
			return true;
	return false;
}

/* Whether an op of g (or of a block nested in one), other than skip and the
 * dead ones, reads v. */
static bool read_elsewhere(const struct al_graph *g, const char *v, const struct al_node *skip,
			   const struct al_node *const *dead, int nd, int depth)
{
	if (!g || depth > WHILE_READ_DEPTH)
		return true;
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const struct al_node *r = &g->nodes[k];
		bool gone = r == skip;
		for (int d = 0; d < nd && !gone; d++)
			gone = dead[d] == r;
		if (gone)
			continue;
		for (uint32_t i = 0; i < r->n_inputs; i++)
			if (r->inputs[i] && strcmp(r->inputs[i], v) == 0)
				return true;
		for (uint32_t q = 0; q < r->n_sub; q++)
			if (read_elsewhere(r->sub[q], v, skip, dead, nd, depth + 1))
				return true;
	}
	return false;
}

/* Whether op x of the loop's block is dead once the loop is gone: no output a
 * function output, read by the new ops, or read by any op but the loop and
 * the dead ones. */
static bool dead_after(struct al_mil_pass *c, const struct al_node *x, const struct al_node *const *dead, int nd)
{
	const struct al_submodel *sub = c->src->sub;
	if (!x || x == c->n || x->owner != c->n->owner || x->n_sub || !x->type || x->kind == AL_MILK_const)
		return false;
	for (int d = 0; d < nd; d++)
		if (dead[d] == x)
			return false;
	/* an op an earlier rewrite of this plan edits: its splice and a delete
	 * would overlap (the plan would fail) */
	for (size_t i = 0; i < c->s->n_rw; i++)
		if (c->s->rw[i].applied && (c->s->rw[i].node == x || (c->s->rw[i].also_replaces && x->name &&
									 strcmp(c->s->rw[i].also_replaces, x->name) == 0)))
			return false;
	for (uint32_t k = 0; k < x->n_outputs; k++) {
		const char *v = x->outputs[k];
		if (!v || bytes_name((al_span){c->pre.p, c->pre.n}, v) || bytes_name((al_span){c->layer.p, c->layer.n}, v))
			return false;
		for (uint32_t q = 0; q < sub->n_outputs; q++)
			if (sub->outputs[q].name && strcmp(sub->outputs[q].name, v) == 0)
				return false;
		if (read_elsewhere(c->n->owner, v, c->n, dead, nd, 0))
			return false;
	}
	return true;
}

/* The ops before the loop only it read (the TensorArray's make_list and
 * list_scatter, the casts feeding them, a carried value's first cast), found
 * from the values the loop and its blocks read, deleted with it. A count. */
static int drop_dead(struct al_mil_pass *c)
{
	const struct al_node *dead[WHILE_MAX_DEAD], *todo[4 * WHILE_MAX_DEAD];
	int nd = 0, nt = 0;
	const struct al_node *n = c->n;
	for (uint32_t q = 0; q < n->n_sub; q++)
		for (uint32_t k = 0; n->sub[q] && k < n->sub[q]->n_nodes; k++)
			for (uint32_t i = 0; i < n->sub[q]->nodes[k].n_inputs && nt < 4 * WHILE_MAX_DEAD; i++) {
				const char *v = n->sub[q]->nodes[k].inputs[i];
				const struct al_node *p = v ? ali_mil_producer(n, v) : NULL;
				if (p && p->owner == n->owner)
					todo[nt++] = p;
			}
	for (uint32_t i = 0; i < n->n_inputs && nt < 4 * WHILE_MAX_DEAD; i++)
		if (n->inputs[i])
			todo[nt++] = ali_mil_producer(n, n->inputs[i]);
	while (nt > 0 && nd < WHILE_MAX_DEAD) {
		const struct al_node *x = todo[--nt];
		if (!dead_after(c, x, dead, nd))
			continue;
		dead[nd++] = x;
		for (uint32_t i = 0; i < x->n_inputs && nt < 4 * WHILE_MAX_DEAD; i++)
			if (x->inputs[i])
				todo[nt++] = ali_mil_producer(x, x->inputs[i]);
	}
	int deleted = 0;
	for (int d = 0; d < nd && c->s->sp; d++)
		deleted += ali_splice_delete(c->s->sp, al_src(dead[d])->msg) == AL_OK;
	return deleted;
}

bool ali_pass_mil_while_unroll(struct al_mil_pass *c)
{
	return unroll(c, false);
}

/* The pass; a scratch run (unrolls_too) deletes nothing. */
static bool unroll(struct al_mil_pass *c, bool scratch)
{
	const struct al_node *n = c->n;
	if (!c->src || !c->src->mil_scope || !c->src->msg.p)
		return ali_mil_say(c, "not an ML Program op");
	if (!n->owner || n->owner->depth != 0)
		return ali_mil_say(c, "inside a nested block");
	if (n->n_sub != 2 || !n->out_types || n->n_outputs < 2)
		return ali_mil_say(c, "not a while_loop with a cond and a body block and loop-carried values");
	const struct al_graph *cond = n->sub[0], *body = n->sub[1];
	struct al_mil_block_io cio, bio;
	if (!ali_mil_block_io(cond, &cio) || !ali_mil_block_io(body, &bio) || cio.n_inputs != n->n_outputs ||
	    bio.n_inputs != n->n_outputs || bio.n_outputs != n->n_outputs || cio.n_outputs != 1)
		return ali_mil_say(c, "its blocks do not carry its %u loop values", n->n_outputs);
	for (uint32_t k = 0; k < n->n_outputs; k++)
		if (!bio.inputs[k] || !bio.outputs[k] || !cio.inputs[k] || !n->outputs[k])
			return ali_mil_say(c, "loop value %u has no name", k);
	if (!cio.outputs[0])
		return ali_mil_say(c, "its cond block returns no name");
	if (ali_mil_param_count(n, "loop_vars") != n->n_outputs)
		return ali_mil_say(c, "%u loop_vars for %u outputs", ali_mil_param_count(n, "loop_vars"), n->n_outputs);
	int64_t i0 = 0, N = 0;
	if (!trip_count(c, cond, &cio, &i0, &N))
		return false;
	int64_t T = N - i0;
	if (T < 1 || T > WHILE_MAX_STEPS)
		return ali_mil_say(c, "%lld steps: 1 to %d are unrolled (each step waits for the one before)",
				   (long long)T, WHILE_MAX_STEPS);
	uint32_t n_ops = 0; /* the body's ops each step copies (its consts once) */
	for (uint32_t k = 0; k < body->n_nodes; k++)
		n_ops += body->nodes[k].kind != AL_MILK_const;
	if ((uint64_t)T * n_ops > AL_PASS_MAX_NAMES)
		return ali_mil_say(c, "%lld steps of %u ops: more than the %d ops one rewrite lists", (long long)T, n_ops,
				   AL_PASS_MAX_NAMES);
	struct wu *u = ali_calloc(1, sizeof *u);
	if (!u)
		return ali_mil_say(c, "out of memory");
	u->c = c;
	u->scratch = scratch;
	u->then16 = fp16_after_unroll(u);
	bool ok = true;
	const char **cur = ali_arena_array(&c->s->arena, n->n_outputs, sizeof *cur);
	if (!cur)
		ok = ali_mil_say(c, "out of memory");
	for (uint32_t k = 0; ok && k < n->n_outputs; k++) {
		al_span b;
		if (ali_mil_param_binding(n, "loop_vars", k, &b) != 1 ||
		    !(cur[k] = ali_arena_strndup(&c->s->arena, b.p, b.n)))
			ok = ali_mil_say(c, "loop value %u is not a named value", k);
	}
	for (int s = 0; ok && s < T; s++) {
		u->step = s;
		/* the body's inputs: the index (a known integer), the values carried in */
		for (uint32_t k = 0; ok && k < n->n_outputs; k++) {
			struct wval *w = add_val(u, bio.inputs[k]);
			if (!w) {
				ok = false;
				break;
			}
			const struct wval *from = s ? find(u, bio.outputs[k]) : NULL;
			struct wval nw = {.name = w->name, .varies = true};
			if (k == 0) {
				nw.is_int = true, nw.ival = i0 + s;
			} else if (from) {
				nw = *from;
				nw.name = w->name, nw.varies = true, nw.is_int = false;
			} else if (n->out_types[k].kind == 1) { /* a list */
				ok = init_list(u, cur[k], &nw);
			} else {
				nw.cur = cur[k];
			}
			*w = nw;
		}
		/* the body's outputs of the step before are read through the inputs only:
		 * forget them before their ops run again */
		for (uint32_t q = 0; ok && q < body->n_nodes; q++)
			ok = step_op(u, &body->nodes[q]);
		if (ok) {
			const struct wval *o = find(u, bio.outputs[0]);
			if (!o || !o->is_int || o->ival != i0 + s + 1)
				ok = ali_mil_say(c, "the body does not return index + 1");
		}
		/* a carried value held back as a cast: its entry travels to the next step;
		 * the next step's inputs are set above from these outputs */
		if (ok && s + 1 < T)
			for (uint32_t k = 1; k < n->n_outputs; k++) {
				const struct wval *o = find(u, bio.outputs[k]);
				if (!o) { /* a body input returned as it is */
					ok = ali_mil_say(c, "loop value %u is returned unchanged", k);
					break;
				}
			}
	}
	if (ok)
		ok = loop_outputs(u, &bio, N);
	uint32_t n32 = u->n32;
	bool lists = u->lists;
	ali_free(u);
	if (!ok)
		return false;
	/* its fp32 ops fall back until mil-fp16-compute converts them, next round */
	c->off_until_next_round = n32 > 0;
	if (c->layer.failed || c->pre.failed)
		return ali_mil_say(c, "out of memory");
	int n_dead = lists && !scratch ? drop_dead(c) : 0;
	if (c->n_names < AL_PASS_MAX_NAMES)
		c->names[c->n_names++] = n->name;
	if (lists)
		snprintf(c->after, sizeof c->after, "%lld steps of its body's ops (list_read -> slice_by_index, "
			 "list_write + list_gather -> stack, the index folded), %u ops; %d dead ops before it deleted",
			 (long long)T, c->n_names, n_dead);
	else
		snprintf(c->after, sizeof c->after, "%lld steps of its body's ops (gather -> slice_by_index, scatter -> "
			 "concat of slices, the index folded), %u ops", (long long)T, c->n_names);
	return true;
}
