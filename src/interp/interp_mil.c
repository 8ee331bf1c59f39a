/* SPDX-License-Identifier: MIT */
/* interp_mil.c: ali_mil_exec, the ML Program (MIL) executor's driver.
 *
 * It runs the program's `main` function: its inputs are already bound by
 * interp.c under the feature names, every op is evaluated in block order in the
 * environment of its block (nested cond / while_loop blocks get a child scope),
 * each op's outputs go to ali_exec_node_done (fp16 rounding, the observer) and
 * are then bound under their names; values of the main block are dropped after
 * their last reader; the function's outputs are left bound in x->env under the
 * model's output feature names. It holds the op table (kind -> function),
 * the access to op parameters (a name binding is looked up, a literal Value
 * decoded), const ops (immediate values and weight.bin blobs through
 * ali_exec_weight), the iOS16/17 constexpr_* ops (both cached per run), cond
 * and while_loop. The other ops are in interp_mil_ops.c, interp_mil_data.c,
 * interp_mil_list.c and interp_mil_nn.c. An op that is not in the table, or a
 * parameter value an op does not implement, is AL_E_UNSUPPORTED naming it: the
 * executor never guesses. It does not check declared output types against what
 * it computes (shapes.c does that for the static shapes), nor run functions
 * other than `main`, nor stateful programs (read_state / write_state).
 *
 * Path through this file:
 *   ali_mil_exec   lt_build (each value's last reader, so it is freed after it),
 *                 then run_op per op of `main` in block order: find the op's row
 *                 in the kind-indexed table, call it (interp_mil_*.c; cond,
 *                 while_loop and const here), ali_exec_node_done, bind the
 *                 outputs, lt_after; nested blocks go through run_block ->
 *                 run_graph with a child scope
 */
#include "interp_mil.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================ blocks */

static enum al_status run_graph(struct mx_run *r, const struct al_graph *g, struct al_env *env);

/* Run nested block g in a child scope of c's with its inputs bound to in[];
 * outs[0..n_outs) get new references to what it returns. */
static enum al_status run_block(struct mx *c, const struct al_graph *g, struct al_tensor *const *in,
				uint32_t n_in, struct al_tensor **outs, uint32_t n_outs)
{
	struct al_mil_block_io io;
	if (!ali_mil_block_io(g, &io))
		return mx_fail(c, AL_E_FORMAT, "a nested block that is not an ML Program block");
	if (io.n_inputs != n_in)
		return mx_fail(c, AL_E_FORMAT, "block %s takes %u inputs; the op gives %u", g->block,
			       io.n_inputs, n_in);
	if (io.n_outputs != n_outs)
		return mx_fail(c, AL_E_FORMAT, "block %s returns %u values; the op needs %u", g->block,
			       io.n_outputs, n_outs);
	if (c->x->depth >= AL_MAX_DEPTH)
		return mx_fail(c, AL_E_UNSUPPORTED, "blocks nested deeper than %d", AL_MAX_DEPTH);
	struct al_env *env = ali_env_new(c->x, c->env);
	if (!env)
		return c->st = AL_E_NOMEM;
	enum al_status st = AL_OK;
	for (uint32_t i = 0; i < n_in && st == AL_OK; i++)
		if (!ali_env_put(env, io.inputs[i], al_tensor_ref(in[i])))
			st = AL_E_NOMEM;
	c->x->depth++;
	if (st == AL_OK)
		st = run_graph(c->run, g, env);
	c->x->depth--;
	for (uint32_t i = 0; i < n_outs && st == AL_OK; i++) {
		struct al_tensor *t = ali_env_get(env, io.outputs[i]);
		if (!t) {
			st = AL_E_FORMAT;
			ali_exec_fail(c->x, c->n, st, "op %s: block %s returns '%.100s', which it does not "
				     "define", c->n->type, g->block, io.outputs[i]);
			break;
		}
		outs[i] = al_tensor_ref(t);
	}
	ali_env_free(env);
	if (st != AL_OK) {
		for (uint32_t i = 0; i < n_outs; i++) {
			ali_tensor_unref(outs[i]);
			outs[i] = NULL;
		}
		if (c->st == AL_OK)
			c->st = st; /* the nested op has reported it */
	}
	return st;
}

static bool truth(struct mx *c, const struct al_tensor *p, const char *what)
{
	if (!p || p->kind != AL_TK_TENSOR || !p->f || p->n != 1) {
		mx_fail(c, AL_E_FORMAT, "%s must be a single boolean", what);
		return false;
	}
	return true;
}

static enum al_status op_cond(struct mx *c, int arg)
{
	(void)arg;
	const struct al_tensor *p = mx_req(c, "pred");
	if (!p || !truth(c, p, "pred"))
		return c->st;
	if (c->n->n_sub != 2)
		return mx_fail(c, AL_E_FORMAT, "cond has %u blocks (2 expected)", c->n->n_sub);
	return run_block(c, c->n->sub[p->f[0] != 0 ? 0 : 1], NULL, 0, c->out, c->n_out);
}

static void unref_all(struct al_tensor **v, uint32_t n)
{
	for (uint32_t i = 0; v && i < n; i++) {
		ali_tensor_unref(v[i]);
		v[i] = NULL;
	}
}

/* Whether the condition block g computes its result without reading the loop
 * variables (its inputs), a random op, a state or a nested block: then it gives
 * the same value on every iteration, and a loop it lets start never ends. Blocks
 * of more than 256 ops are not looked at (false). */
static bool cond_invariant(const struct al_graph *g)
{
	struct al_mil_block_io io;
	if (!ali_mil_block_io(g, &io) || io.n_outputs != 1 || !io.outputs[0] || g->n_nodes > 256)
		return false;
	const char *varies[1024];
	size_t n_varies = 0;
	for (uint32_t i = 0; i < io.n_inputs && n_varies < 1024; i++)
		varies[n_varies++] = io.inputs[i];
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct al_node *n = &g->nodes[i];
		bool v = n->n_sub || !n->type || strncmp(n->type, "random", 6) == 0 ||
			 strstr(n->type, "state");
		for (uint32_t k = 0; k < n->n_inputs && !v; k++)
			for (size_t j = 0; j < n_varies && !v; j++)
				v = n->inputs[k] && varies[j] && strcmp(n->inputs[k], varies[j]) == 0;
		for (uint32_t k = 0; v && k < n->n_outputs; k++) {
			if (n_varies == 1024)
				return false;
			varies[n_varies++] = n->outputs[k];
		}
	}
	for (size_t j = 0; j < n_varies; j++)
		if (varies[j] && strcmp(varies[j], io.outputs[0]) == 0)
			return false;
	return true;
}

static enum al_status op_while_loop(struct mx *c, int arg)
{
	(void)arg;
	uint32_t k = mx_count(c, "loop_vars");
	if (c->n->n_sub != 2)
		return mx_fail(c, AL_E_FORMAT, "while_loop has %u blocks (2 expected)", c->n->n_sub);
	if (k != c->n_out)
		return mx_fail(c, AL_E_FORMAT, "while_loop has %u loop_vars and %u outputs", k, c->n_out);
	struct al_tensor **vars = ali_calloc(k ? k : 1, sizeof *vars);
	struct al_tensor **next = ali_calloc(k ? k : 1, sizeof *next);
	if (!vars || !next) {
		ali_free(vars);
		ali_free(next);
		return mx_fail(c, AL_E_NOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < k && c->st == AL_OK; i++) {
		struct al_tensor *t = mx_in_k(c, "loop_vars", i);
		if (t)
			vars[i] = al_tensor_ref(t);
		else if (c->st == AL_OK)
			mx_fail(c, AL_E_FORMAT, "loop_vars[%u] is not bound", i);
	}
	uint64_t steps0 = c->x->steps;
	while (c->st == AL_OK) {
		struct al_tensor *p = NULL;
		if (run_block(c, c->n->sub[0], vars, k, &p, 1) != AL_OK)
			break;
		bool ok = truth(c, p, "the while_loop condition"), go = ok && p->f[0] != 0;
		ali_tensor_unref(p);
		if (!go)
			break;
		if (c->x->steps == steps0 && cond_invariant(c->n->sub[0])) {
			mx_fail(c, AL_E_UNSUPPORTED, "the while_loop condition is true and does not depend on "
				"the loop variables: the loop never ends");
			break;
		}
		if (!ali_exec_step(c->x, c->n)) {
			c->st = AL_E_UNSUPPORTED;
			break;
		}
		if (run_block(c, c->n->sub[1], vars, k, next, k) != AL_OK)
			break;
		unref_all(vars, k);
		memcpy(vars, next, k * sizeof *vars);
		memset(next, 0, k * sizeof *next);
	}
	for (uint32_t i = 0; i < k && c->st == AL_OK; i++)
		mx_set(c, i, vars[i]);
	unref_all(vars, k);
	unref_all(next, k);
	ali_free(vars);
	ali_free(next);
	return c->st;
}

/* ================================================================ const */

static enum al_status op_const(struct mx *c, int arg)
{
	(void)arg;
	al_span v;
	if (c->n_out != 1)
		return mx_fail(c, AL_E_FORMAT, "a const has %u outputs", c->n_out);
	struct al_tensor *t = mxc_get(c->run, c->n, 0);
	if (t) {
		mx_set(c, 0, t);
		return AL_OK;
	}
	if (!ali_mil_attr(c->n, "val", &v))
		return mx_fail(c, AL_E_FORMAT, "const without a value");
	if (!(t = mx_value_tensor(c, v)))
		return c->st ? c->st : AL_E_FORMAT;
	mxc_put(c->run, c->n, 0, t, false);
	c->out[0] = t;
	return AL_OK;
}

/* ================================================================ constexpr (iOS16 / iOS17)
 * Compressed constants, expanded once per run (cached like const): the
 * parameters are attributes in the iOS16/17 opsets, input bindings from
 * iOS18. The iOS18 forms with other parameters (constexpr_lut_to_dense with
 * vector_axis, constexpr_blockwise_shift_scale ...) are refused. */

static struct al_tensor *cx_param(struct mx *c, const char *param)
{
	al_span v;
	if (mx_present(c, param))
		return mx_req(c, param);
	if (c->st != AL_OK)
		return NULL;
	if (!ali_mil_attr(c->n, param, &v)) {
		mx_fail(c, AL_E_UNSUPPORTED, "parameter '%s' is missing (a form of %s the interpreter "
			"does not read)", param, c->n->type);
		return NULL;
	}
	if (c->n_tmp == MX_MAX_TMP) {
		mx_fail(c, AL_E_UNSUPPORTED, "more than %d literal inputs", MX_MAX_TMP);
		return NULL;
	}
	struct al_tensor *t = mx_value_tensor(c, v);
	if (t && (t->kind != AL_TK_TENSOR || !t->f)) {
		ali_tensor_unref(t);
		mx_fail(c, AL_E_FORMAT, "parameter '%s' is not numeric", param);
		return NULL;
	}
	if (t)
		c->tmp[c->n_tmp++] = t;
	return t;
}

/* The `shape` parameter as dims; false with a diagnostic. */
static bool cx_shape(struct mx *c, int *rank, int64_t *dims)
{
	const struct al_tensor *s = cx_param(c, "shape");
	if (!s)
		return false;
	if (s->n > AL_TENSOR_MAX_RANK)
		return mx_fail(c, AL_E_UNSUPPORTED, "a shape of rank %zu", s->n), false;
	for (size_t i = 0; i < s->n; i++)
		if (!mx_f2i(s->f[i], &dims[i]) || dims[i] < 0)
			return mx_fail(c, AL_E_FORMAT, "shape holds %g", (double)s->f[i]), false;
	*rank = (int)s->n;
	return true;
}

/* Cached results, or run fn and cache them. */
static enum al_status cx_cached(struct mx *c, mx_fn *fn, uint32_t n_out)
{
	if (c->n_out != n_out)
		return mx_fail(c, AL_E_FORMAT, "has %u outputs (%u expected)", c->n_out, n_out);
	bool all = true;
	for (uint32_t k = 0; k < n_out && all; k++)
		all = mxc_get(c->run, c->n, k) != NULL;
	if (all) {
		for (uint32_t k = 0; k < n_out; k++)
			mx_set(c, k, mxc_get(c->run, c->n, k));
		return AL_OK;
	}
	if (fn(c, 0) == AL_OK && c->st == AL_OK)
		for (uint32_t k = 0; k < n_out; k++)
			if (c->out[k]) {
				/* an fp16 result is fp16 values (Core ML decodes in the output
				 * type: scale * (data - offset) rounded once) */
				if (c->out[k]->dtype == AL_DT_FP16 && c->out[k]->f && !c->out[k]->borrowed)
					ali_f16_round_array(c->out[k]->f, c->out[k]->n);
				mxc_put(c->run, c->n, k, c->out[k], true);
			}
	return c->st;
}

static enum al_status cx_affine(struct mx *c, int arg)
{
	(void)arg;
	const struct al_tensor *q = cx_param(c, "quantized_data"), *zp = q ? cx_param(c, "zero_point") : NULL;
	const struct al_tensor *sc = zp ? cx_param(c, "scale") : NULL, *ax = sc ? cx_param(c, "axis") : NULL;
	int64_t a;
	if (!ax)
		return c->st;
	if (ax->n != 1 || !mx_f2i(ax->f[0], &a) || mx_axis(c, a, q->rank, 0) < 0)
		return c->st ? c->st : mx_fail(c, AL_E_FORMAT, "axis must be a single integer");
	int axis = mx_axis(c, a, q->rank, 0);
	int64_t d = q->dims[axis], inner = mx_prod(q->dims, axis + 1, q->rank);
	if ((sc->n != 1 && sc->n != (size_t)d) || (zp->n != 1 && zp->n != (size_t)d))
		return mx_fail(c, AL_E_FORMAT, "scale and zero_point must hold 1 or %lld values", (long long)d);
	struct al_tensor *y = mx_alloc(c, 0, sc->dtype, q->rank, q->dims);
	for (size_t i = 0; y && i < q->n; i++) {
		size_t k = (size_t)(((int64_t)i / inner) % d);
		float s = sc->f[sc->n == 1 ? 0 : k], z = zp->f[zp->n == 1 ? 0 : k];
		y->f[i] = s * (q->f[i] - z);
	}
	return c->st;
}

static enum al_status cx_cast(struct mx *c, int arg)
{
	(void)arg;
	char dt[16];
	const struct al_tensor *v = cx_param(c, "source_val");
	if (!v || !mx_str(c, "output_dtype", "", dt, sizeof dt))
		return c->st;
	if (strcmp(dt, "fp32") != 0)
		return mx_unsupported(c, "output_dtype", dt);
	struct al_tensor *y = mx_alloc(c, 0, AL_DT_FP32, v->rank, v->dims);
	if (y && v->n)
		memcpy(y->f, v->f, v->n * sizeof(float));
	return c->st;
}

/* Bit i of packed bytes b (LSB first). */
static unsigned bit_at(const float *b, size_t i)
{
	return ((unsigned)b[i / 8] >> (i % 8)) & 1u;
}

/* Table index of dense position i: the block of every coordinate (blocks of
 * dims[d] / groups[d] along axis d), row-major over groups. */
static size_t block_of(size_t i, int rank, const int64_t *dims, const int64_t *groups)
{
	size_t table = 0, stride = 1;
	for (int d = rank - 1; d >= 0; d--) {
		size_t coord = (size_t)(i % (size_t)dims[d]);
		i /= (size_t)dims[d];
		size_t block = (size_t)(dims[d] / groups[d]);
		table += coord / block * stride;
		stride *= (size_t)groups[d];
	}
	return table;
}

/* Whether every dims[d] is a multiple of groups[d] >= 1. */
static bool blocks_ok(int rank, const int64_t *dims, const int64_t *groups)
{
	for (int d = 0; d < rank; d++)
		if (groups[d] < 1 || dims[d] % groups[d] != 0)
			return false;
	return true;
}

/* iOS16 form: packed index bytes, a 1-D lut, a shape attribute. */
static enum al_status cx_lut16(struct mx *c, const struct al_tensor *idx, const struct al_tensor *lut)
{
	int rank;
	int64_t dims[AL_TENSOR_MAX_RANK];
	size_t count;
	if (!cx_shape(c, &rank, dims))
		return c->st;
	unsigned nbits = 0;
	while ((1u << nbits) < lut->n && nbits < 9)
		nbits++;
	if (lut->rank != 1 || (1u << nbits) != lut->n || nbits < 1 || nbits > 8 || nbits == 3 ||
	    nbits == 5 || nbits == 7)
		return mx_unsupported(c, "a lut of that size", "(not 2, 4, 16, 64 or 256 entries)");
	if (!ali_dims_count(rank, dims, &count) || idx->n < (count * nbits + 7) / 8)
		return mx_fail(c, AL_E_FORMAT, "%zu index bytes for that shape", idx->n);
	for (size_t i = 0; i < idx->n; i++)
		if (!(idx->f[i] >= 0 && idx->f[i] <= 255))
			return mx_fail(c, AL_E_FORMAT, "indices must be bytes");
	struct al_tensor *y = mx_alloc(c, 0, lut->dtype, rank, dims);
	for (size_t i = 0; y && i < count; i++) {
		unsigned k = 0;
		for (unsigned b = 0; b < nbits; b++)
			k |= bit_at(idx->f, i * nbits + b) << b;
		y->f[i] = lut->f[k];
	}
	return c->st;
}

/* The iOS18 lut parameters: per-axis table counts (lut dims [0, R)), palette
 * size, vector size and axis (-1 none); false with a diagnostic. */
struct lut18 {
	int rank;
	const int64_t *groups;
	int64_t palettes, vsize;
	int vaxis;
};

static bool lut18_params(struct mx *c, const struct al_tensor *idx, const struct al_tensor *lut,
			 struct lut18 *p)
{
	int64_t va = -1;
	p->rank = idx->rank;
	if (idx->rank < 1 || lut->rank != idx->rank + 2)
		return mx_fail(c, AL_E_FORMAT, "lut has rank %d; indices of rank %d need %d", lut->rank,
			       idx->rank, idx->rank + 2), false;
	p->groups = lut->dims;
	p->palettes = lut->dims[lut->rank - 2];
	p->vsize = lut->dims[lut->rank - 1];
	if (!blocks_ok(idx->rank, idx->dims, lut->dims))
		return mx_fail(c, AL_E_FORMAT, "the lut's leading dims do not divide the indices' dims"),
		       false;
	if (p->palettes < 1 || p->vsize < 1)
		return mx_fail(c, AL_E_FORMAT, "an empty lut"), false;
	if (mx_present(c, "vector_axis") && !mx_int(c, "vector_axis", -1, &va))
		return false;
	if (mx_present(c, "vector_axis") && (va = mx_axis(c, va, idx->rank, 0)) < 0)
		return false;
	if (p->vsize > 1 && va < 0)
		return mx_fail(c, AL_E_FORMAT, "a vector lut (vector size %lld) without vector_axis",
			       (long long)p->vsize), false;
	p->vaxis = p->vsize > 1 ? (int)va : -1;
	for (size_t i = 0; i < idx->n; i++)
		if (!(idx->f[i] >= 0 && idx->f[i] < (float)p->palettes))
			return mx_fail(c, AL_E_FORMAT, "index %g is outside the lut's %lld entries",
				       (double)idx->f[i], (long long)p->palettes), false;
	return true;
}

/* Dense position of index i of the indices expanded by the vector: element v of
 * the vector of index i goes to position out_index(i, v). */
static size_t vec_pos(size_t i, int64_t v, const struct al_tensor *idx, const struct lut18 *p)
{
	if (p->vaxis < 0)
		return i;
	size_t inner = 1, pos = 0, mul = 1;
	(void)inner;
	for (int d = idx->rank - 1; d >= 0; d--) {
		size_t coord = (size_t)(i % (size_t)idx->dims[d]);
		i /= (size_t)idx->dims[d];
		size_t dim = (size_t)idx->dims[d];
		if (d == p->vaxis) {
			coord = coord * (size_t)p->vsize + (size_t)v;
			dim *= (size_t)p->vsize;
		}
		pos += coord * mul;
		mul *= dim;
	}
	return pos;
}

/* iOS18 form: unpacked indices of the output's rank, lut [groups..., palettes,
 * vector], optional vector_axis. out[vec_pos(i, v)] = lut[table(i), idx[i], v]. */
static enum al_status cx_lut18(struct mx *c, const struct al_tensor *idx, const struct al_tensor *lut)
{
	struct lut18 p;
	if (!lut18_params(c, idx, lut, &p))
		return c->st;
	int64_t dims[AL_TENSOR_MAX_RANK];
	memcpy(dims, idx->dims, sizeof dims);
	if (p.vaxis >= 0)
		dims[p.vaxis] *= p.vsize;
	struct al_tensor *y = mx_alloc(c, 0, lut->dtype, idx->rank, dims);
	if (!y)
		return c->st;
	size_t per_table = (size_t)(p.palettes * p.vsize);
	for (size_t i = 0; i < idx->n; i++) {
		size_t t = block_of(i, idx->rank, idx->dims, p.groups);
		const float *e = lut->f + t * per_table + (size_t)idx->f[i] * (size_t)p.vsize;
		for (int64_t v = 0; v < p.vsize; v++)
			y->f[vec_pos(i, v, idx, &p)] = e[v];
	}
	return c->st;
}

static enum al_status cx_lut(struct mx *c, int arg)
{
	(void)arg;
	const struct al_tensor *idx = cx_param(c, "indices"), *lut = idx ? cx_param(c, "lut") : NULL;
	if (!lut)
		return c->st;
	if (!mx_present(c, "shape") && !ali_mil_attr(c->n, "shape", &(al_span){0}))
		return cx_lut18(c, idx, lut);
	return cx_lut16(c, idx, lut);
}

/* constexpr_blockwise_shift_scale (iOS18): out = scale[block] * (data - offset[block]),
 * blocks of data.dims[d] / scale.dims[d] along every axis. */
static enum al_status cx_blockwise(struct mx *c, int arg)
{
	(void)arg;
	const struct al_tensor *q = mx_req(c, "data"), *sc = q ? mx_req(c, "scale") : NULL;
	const struct al_tensor *off = sc ? mx_in(c, "offset") : NULL;
	if (!sc || c->st)
		return c->st;
	if (sc->rank != q->rank || q->rank < 1 || !blocks_ok(q->rank, q->dims, sc->dims))
		return mx_fail(c, AL_E_FORMAT, "scale's dims must divide data's, at the same rank");
	if (off && !mx_same_dims(off, sc->rank, sc->dims))
		return mx_fail(c, AL_E_FORMAT, "offset must have scale's shape");
	struct al_tensor *y = mx_alloc(c, 0, sc->dtype, q->rank, q->dims);
	for (size_t i = 0; y && i < q->n; i++) {
		size_t b = block_of(i, q->rank, q->dims, sc->dims);
		y->f[i] = sc->f[b] * (q->f[i] - (off ? off->f[b] : 0.0f));
	}
	return c->st;
}

static enum al_status cx_sparse(struct mx *c, int arg)
{
	(void)arg;
	int rank;
	int64_t dims[AL_TENSOR_MAX_RANK];
	size_t count, used = 0;
	const struct al_tensor *nz = cx_param(c, "nonzero_data"), *mask = nz ? cx_param(c, "mask") : NULL;
	if (!mask)
		return c->st;
	bool ios18 = !mx_present(c, "shape") && !ali_mil_attr(c->n, "shape", &(al_span){0});
	if (ios18) { /* an unpacked uint1 mask of the output's shape */
		rank = mask->rank;
		memcpy(dims, mask->dims, sizeof dims);
		count = mask->n;
		for (size_t i = 0; i < mask->n; i++)
			if (mask->f[i] != 0 && mask->f[i] != 1)
				return mx_fail(c, AL_E_FORMAT, "mask must be 0 or 1");
	} else {
		if (!cx_shape(c, &rank, dims))
			return c->st;
		if (!ali_dims_count(rank, dims, &count) || mask->n < (count + 7) / 8)
			return mx_fail(c, AL_E_FORMAT, "%zu mask bytes for that shape", mask->n);
		for (size_t i = 0; i < mask->n; i++)
			if (!(mask->f[i] >= 0 && mask->f[i] <= 255))
				return mx_fail(c, AL_E_FORMAT, "mask must be bytes");
	}
	struct al_tensor *y = mx_alloc(c, 0, nz->dtype, rank, dims);
	for (size_t i = 0; y && i < count; i++) {
		if (ios18 ? mask->f[i] == 0 : !bit_at(mask->f, i))
			continue;
		if (used == nz->n)
			return mx_fail(c, AL_E_FORMAT, "the mask sets more bits than nonzero_data holds");
		y->f[i] = nz->f[used++];
	}
	return c->st;
}

/* constexpr_lut_to_sparse (iOS18): a lut over the nonzero values of a sparse
 * tensor; outputs (mask, nonzero values), the mask expanded along vector_axis. */
static enum al_status cx_lut_sparse(struct mx *c, int arg)
{
	(void)arg;
	const struct al_tensor *mask = mx_req(c, "indices_mask");
	const struct al_tensor *nz = mask ? mx_req(c, "indices_nonzero_data") : NULL;
	const struct al_tensor *lut = nz ? mx_req(c, "lut") : NULL;
	struct lut18 p;
	if (!lut || c->st || !lut18_params(c, mask, lut, &p))
		return c->st;
	if (c->n_out != 2)
		return mx_fail(c, AL_E_FORMAT, "has %u outputs (2 expected)", c->n_out);
	int64_t dims[AL_TENSOR_MAX_RANK];
	memcpy(dims, mask->dims, sizeof dims);
	if (p.vaxis >= 0)
		dims[p.vaxis] *= p.vsize;
	size_t set = 0, used = 0;
	for (size_t i = 0; i < mask->n; i++)
		set += mask->f[i] != 0;
	if (set != nz->n)
		return mx_fail(c, AL_E_FORMAT, "the mask sets %zu bits; indices_nonzero_data holds %zu",
			       set, nz->n);
	for (size_t i = 0; i < nz->n; i++)
		if (!(nz->f[i] >= 0 && nz->f[i] < (float)p.palettes))
			return mx_fail(c, AL_E_FORMAT, "index %g is outside the lut", (double)nz->f[i]);
	struct al_tensor *om = mx_alloc(c, 0, AL_DT_UINT1, mask->rank, dims);
	if (set > AL_TENSOR_MAX_ELEMS / (size_t)p.vsize)
		return mx_fail(c, AL_E_UNSUPPORTED, "%zu nonzero vectors of %lld values", set,
			       (long long)p.vsize);
	int64_t nd = (int64_t)(set * (size_t)p.vsize);
	struct al_tensor *ov = om ? mx_alloc(c, 1, lut->dtype, 1, &nd) : NULL;
	int64_t flat = om ? (int64_t)om->n : 0;
	struct al_tensor *dense = ov ? ali_tensor_alloc(c->x, c->n, AL_DT_FP32, 1, &flat) : NULL;
	if (!dense)
		return c->st ? c->st : (c->st = AL_E_NOMEM);
	size_t per_table = (size_t)(p.palettes * p.vsize);
	for (size_t i = 0; i < mask->n; i++) {
		if (mask->f[i] == 0)
			continue;
		size_t t = block_of(i, mask->rank, mask->dims, p.groups);
		const float *e = lut->f + t * per_table + (size_t)nz->f[used++] * (size_t)p.vsize;
		for (int64_t v = 0; v < p.vsize; v++) {
			size_t at = vec_pos(i, v, mask, &p);
			om->f[at] = 1;
			dense->f[at] = e[v];
		}
	}
	for (size_t i = 0, k = 0; i < om->n; i++)
		if (om->f[i] != 0)
			ov->f[k++] = dense->f[i];
	ali_tensor_unref(dense);
	return c->st;
}

/* constexpr_sparse_blockwise_shift_scale (iOS18): blockwise dequantization of
 * the nonzero values of a sparse tensor; outputs (mask, nonzero values). */
static enum al_status cx_sparse_blockwise(struct mx *c, int arg)
{
	(void)arg;
	const struct al_tensor *mask = mx_req(c, "data_mask");
	const struct al_tensor *nz = mask ? mx_req(c, "nonzero_data") : NULL;
	const struct al_tensor *sc = nz ? mx_req(c, "scale") : NULL;
	const struct al_tensor *off = sc ? mx_in(c, "offset") : NULL;
	if (!sc || c->st)
		return c->st;
	if (c->n_out != 2)
		return mx_fail(c, AL_E_FORMAT, "has %u outputs (2 expected)", c->n_out);
	if (sc->rank != mask->rank || mask->rank < 1 || !blocks_ok(mask->rank, mask->dims, sc->dims))
		return mx_fail(c, AL_E_FORMAT, "scale's dims must divide data_mask's, at the same rank");
	if (off && !mx_same_dims(off, sc->rank, sc->dims))
		return mx_fail(c, AL_E_FORMAT, "offset must have scale's shape");
	size_t set = 0, used = 0;
	for (size_t i = 0; i < mask->n; i++)
		set += mask->f[i] != 0;
	if (set != nz->n)
		return mx_fail(c, AL_E_FORMAT, "the mask sets %zu bits; nonzero_data holds %zu", set,
			       nz->n);
	struct al_tensor *om = mx_alloc(c, 0, AL_DT_UINT1, mask->rank, mask->dims);
	struct al_tensor *ov = om ? mx_alloc(c, 1, sc->dtype, nz->rank, nz->dims) : NULL;
	for (size_t i = 0; ov && i < mask->n; i++) {
		if (mask->f[i] == 0)
			continue;
		size_t b = block_of(i, mask->rank, mask->dims, sc->dims);
		om->f[i] = 1;
		ov->f[used] = sc->f[b] * (nz->f[used] - (off ? off->f[b] : 0.0f));
		used++;
	}
	return c->st;
}

static enum al_status op_constexpr(struct mx *c, int kind)
{
	static mx_fn *const fns[] = {cx_affine, cx_cast, cx_lut, cx_sparse, cx_blockwise,
				     cx_lut_sparse, cx_sparse_blockwise};
	return cx_cached(c, fns[kind], kind == 5 || kind == 6 ? 2 : 1);
}

/* ================================================================ state (iOS18)
 * A state is bound by name in the run's root environment (interp.c binds each
 * state of the model there: the caller's value or zeros). read_state gives its
 * current value; write_state binds a new one there (values are immutable, so
 * the old tensor is never changed) in the state's type: fp16 states hold fp16
 * values. The final values are read back from there after the run. */

/* The state name `input` is bound to; false with a diagnostic. */
static bool state_name(struct mx *c, char *name, size_t cap)
{
	al_span b;
	if (ali_mil_param_binding(c->n, "input", 0, &b) != 1) {
		mx_fail(c, AL_E_FORMAT, "input must name a state");
		return false;
	}
	size_t len = b.n < cap - 1 ? b.n : cap - 1;
	memcpy(name, b.p, len);
	name[len] = '\0';
	return true;
}

static enum al_status op_read_state(struct mx *c, int arg)
{
	(void)arg;
	char name[AL_MAX_NAME + 1];
	if (!state_name(c, name, sizeof name))
		return c->st;
	struct al_tensor *t = ali_env_get(c->env, name);
	if (!t)
		return mx_fail(c, AL_E_INVALID_ARG, "state '%.100s' is not bound (the model declares no "
			       "state of that name)", name);
	mx_set(c, 0, t);
	return AL_OK;
}

static enum al_status op_write_state(struct mx *c, int arg)
{
	(void)arg;
	char name[AL_MAX_NAME + 1];
	struct al_tensor *v = mx_req(c, "data");
	if (!v || !state_name(c, name, sizeof name))
		return c->st;
	const struct al_tensor *old = ali_env_get(c->x->env, name);
	if (!old)
		return mx_fail(c, AL_E_INVALID_ARG, "state '%.100s' is not bound (the model declares no "
			       "state of that name)", name);
	if (old->n != v->n)
		return mx_fail(c, AL_E_FORMAT, "writes %zu values to state '%.100s' of %zu", v->n, name,
			       old->n);
	/* v itself when it already is the state's value (its shape and type, and fp16
	 * values for an fp16 state): no copy per step (values are immutable, so sharing
	 * is safe) */
	bool same = v->kind == AL_TK_TENSOR && v->f && v->rank == old->rank &&
		    v->dtype == old->dtype && !v->s;
	for (int d = 0; same && d < v->rank; d++)
		same = v->dims[d] == old->dims[d];
	/* fp16 precision rounds every op's result, so an fp16 value is worth
	 * checking there; in fp32 precision a cast to fp16 keeps its values, and the
	 * check would mostly fail after reading half the state */
	if (same && old->dtype == AL_DT_FP16)
		same = c->x->fp16 && ali_f16_is_rounded(v->f, v->n);
	struct al_tensor *t, *own = NULL;
	if (!same && old->dtype == AL_DT_FP16 && ali_exec_float_dtype(v->dtype))
		own = mx_take(c, "data"); /* nothing else reads v: rounded where it is */
	if (same) {
		t = al_tensor_ref(v);
	} else if (own) {
		ali_f16_round_array(own->f, own->n);
		own->dtype = old->dtype;
		own->rank = old->rank;
		memcpy(own->dims, old->dims, sizeof own->dims);
		t = al_tensor_ref(own);
	} else if (old->dtype == AL_DT_FP16 && v->f && !v->s && v->kind == AL_TK_TENSOR) {
		/* rounded while copied: one pass */
		if ((t = ali_tensor_alloc_raw(c->x, c->n, AL_DT_FP16, old->rank, old->dims))) {
			ali_f16_round_copy(t->f, v->f, v->n);
			t->labels = v->labels;
		}
	} else {
		t = ali_tensor_reshaped(c->x, c->n, v, old->rank, old->dims);
		if (t)
			t->dtype = old->dtype;
	}
	if (!t)
		return c->st = c->x->over_budget ? AL_E_UNSUPPORTED : AL_E_NOMEM;
	for (uint32_t i = 0; i < c->n_out; i++)
		mx_set(c, i, t);
	if (!ali_env_put(c->x->env, name, t))
		return c->st = AL_E_NOMEM;
	return AL_OK;
}

/* ================================================================ unsupported */

static enum al_status op_refuse(struct mx *c, int arg)
{
	(void)arg;
	c->st = AL_E_UNSUPPORTED;
	return ali_exec_fail(c->x, c->n, c->st, "op %s is not supported by the interpreter",
			    c->n->type[0] ? c->n->type : "(without a type)");
}

/* ================================================================ the op table */

struct mx_op {
	mx_fn *fn; /* NULL: refused, naming the op (op_refuse) */
	int arg;
};

/* Indexed by kind (tests/unit/test_kinds.c lists the kinds without fn). arg: the
 * kernel's operation code, where one function serves several ops. */
static const struct mx_op ops[AL_MILK_COUNT] = {
	[AL_MILK_abs] = {mx_unary, AL_UN_ABS},
	[AL_MILK_acos] = {mx_unary, AL_UN_ACOS},
	[AL_MILK_add] = {mx_binary, AL_BIN_ADD},
	[AL_MILK_argsort] = {mx_argsort, 0},
	[AL_MILK_asin] = {mx_unary, AL_UN_ASIN},
	[AL_MILK_atan] = {mx_unary, AL_UN_ATAN},
	[AL_MILK_atanh] = {mx_unary, AL_UN_ATANH},
	[AL_MILK_avg_pool] = {mx_pool, 1},
	[AL_MILK_band_part] = {mx_band_part, 0},
	[AL_MILK_batch_norm] = {mx_batch_norm, 0},
	[AL_MILK_cast] = {mx_cast, 0},
	[AL_MILK_ceil] = {mx_unary, AL_UN_CEIL},
	[AL_MILK_clamped_relu] = {mx_clamped_relu, 0},
	[AL_MILK_classify] = {mx_classify, 0},
	[AL_MILK_clip] = {mx_unary_ab, AL_UN_CLIP},
	[AL_MILK_concat] = {mx_concat, 0},
	[AL_MILK_cond] = {op_cond, 0},
	[AL_MILK_const] = {op_const, 0},
	[AL_MILK_constexpr_affine_dequantize] = {op_constexpr, 0},
	[AL_MILK_constexpr_cast] = {op_constexpr, 1},
	[AL_MILK_constexpr_lut_to_dense] = {op_constexpr, 2},
	[AL_MILK_constexpr_sparse_to_dense] = {op_constexpr, 3},
	[AL_MILK_constexpr_blockwise_shift_scale] = {op_constexpr, 4},
	[AL_MILK_constexpr_lut_to_sparse] = {op_constexpr, 5},
	[AL_MILK_constexpr_sparse_blockwise_shift_scale] = {op_constexpr, 6},
	[AL_MILK_conv] = {mx_conv, 0},
	[AL_MILK_conv_transpose] = {mx_conv_transpose, 0},
	[AL_MILK_cos] = {mx_unary, AL_UN_COS},
	[AL_MILK_cosh] = {mx_unary, AL_UN_COSH},
	[AL_MILK_crop] = {mx_crop, 0},
	[AL_MILK_cumsum] = {mx_cumsum, 0},
	[AL_MILK_depth_to_space] = {mx_space_depth, 0},
	[AL_MILK_dequantize] = {mx_quantize, 0},
	[AL_MILK_elu] = {mx_unary_ab, AL_UN_ELU},
	[AL_MILK_equal] = {mx_binary, AL_BIN_EQ},
	[AL_MILK_erf] = {mx_unary, AL_UN_ERF},
	[AL_MILK_exp] = {mx_unary, AL_UN_EXP},
	[AL_MILK_exp2] = {mx_unary, AL_UN_EXP2},
	[AL_MILK_expand_dims] = {mx_expand_dims, 0},
	[AL_MILK_fill] = {mx_fill, 0},
	[AL_MILK_fill_like] = {mx_fill_like, 0},
	[AL_MILK_flatten2d] = {mx_flatten2d, 0},
	[AL_MILK_floor] = {mx_unary, AL_UN_FLOOR},
	[AL_MILK_floor_div] = {mx_binary, AL_BIN_FLOOR_DIV},
	[AL_MILK_gather] = {mx_gather, 0},
	[AL_MILK_gather_along_axis] = {mx_gather_along_axis, 0},
	[AL_MILK_gather_nd] = {mx_gather_nd, 0},
	[AL_MILK_gelu] = {mx_gelu, 0},
	[AL_MILK_greater] = {mx_binary, AL_BIN_GT},
	[AL_MILK_greater_equal] = {mx_binary, AL_BIN_GE},
	[AL_MILK_gru] = {mx_gru, 0},
	[AL_MILK_identity] = {mx_identity, 0},
	[AL_MILK_instance_norm] = {mx_instance_norm, 0},
	[AL_MILK_inverse] = {mx_unary_eps, AL_UN_INVERSE_EPS},
	[AL_MILK_l2_norm] = {mx_l2_norm, 0},
	[AL_MILK_l2_pool] = {mx_pool, 2},
	[AL_MILK_layer_norm] = {mx_layer_norm, 0},
	[AL_MILK_leaky_relu] = {mx_unary_ab, AL_UN_LEAKY_RELU},
	[AL_MILK_less] = {mx_binary, AL_BIN_LT},
	[AL_MILK_less_equal] = {mx_binary, AL_BIN_LE},
	[AL_MILK_linear] = {mx_linear, 0},
	[AL_MILK_linear_activation] = {mx_unary_ab, AL_UN_LINEAR},
	[AL_MILK_list_gather] = {mx_list_gather, 0},
	[AL_MILK_list_length] = {mx_list_length, 0},
	[AL_MILK_list_read] = {mx_list_read, 0},
	[AL_MILK_list_scatter] = {mx_list_scatter, 0},
	[AL_MILK_list_write] = {mx_list_write, 0},
	[AL_MILK_local_response_norm] = {mx_lrn, 0},
	[AL_MILK_log] = {mx_unary_eps, AL_UN_LOG_EPS},
	[AL_MILK_logical_and] = {mx_binary, AL_BIN_AND},
	[AL_MILK_logical_not] = {mx_unary, AL_UN_LOGICAL_NOT},
	[AL_MILK_logical_or] = {mx_binary, AL_BIN_OR},
	[AL_MILK_logical_xor] = {mx_binary, AL_BIN_XOR},
	[AL_MILK_lstm] = {mx_lstm, 0},
	[AL_MILK_make_list] = {mx_make_list, 0},
	[AL_MILK_matmul] = {mx_matmul, 0},
	[AL_MILK_max_pool] = {mx_pool, 0},
	[AL_MILK_maximum] = {mx_binary, AL_BIN_MAX},
	[AL_MILK_minimum] = {mx_binary, AL_BIN_MIN},
	[AL_MILK_mod] = {mx_binary, AL_BIN_MOD},
	[AL_MILK_mul] = {mx_binary, AL_BIN_MUL},
	[AL_MILK_not_equal] = {mx_binary, AL_BIN_NE},
	[AL_MILK_one_hot] = {mx_one_hot, 0},
	[AL_MILK_pad] = {mx_pad, 0},
	[AL_MILK_pixel_shuffle] = {mx_space_depth, 2},
	[AL_MILK_pixel_unshuffle] = {mx_space_depth, 3},
	[AL_MILK_pow] = {mx_binary, AL_BIN_POW},
	[AL_MILK_prelu] = {mx_prelu, 0},
	[AL_MILK_quantize] = {mx_quantize, 1},
	[AL_MILK_range_1d] = {mx_range_1d, 0},
	[AL_MILK_read_state] = {op_read_state, 0},
	[AL_MILK_real_div] = {mx_binary, AL_BIN_DIV},
	[AL_MILK_reduce_argmax] = {mx_argreduce, AL_RED_ARGMAX},
	[AL_MILK_reduce_argmin] = {mx_argreduce, AL_RED_ARGMIN},
	[AL_MILK_reduce_l1_norm] = {mx_reduce, AL_RED_L1},
	[AL_MILK_reduce_l2_norm] = {mx_reduce, AL_RED_L2},
	[AL_MILK_reduce_log_sum] = {mx_reduce, AL_RED_LOGSUM},
	[AL_MILK_reduce_log_sum_exp] = {mx_reduce, AL_RED_LOGSUMEXP},
	[AL_MILK_reduce_max] = {mx_reduce, AL_RED_MAX},
	[AL_MILK_reduce_mean] = {mx_reduce, AL_RED_MEAN},
	[AL_MILK_reduce_min] = {mx_reduce, AL_RED_MIN},
	[AL_MILK_reduce_prod] = {mx_reduce, AL_RED_PROD},
	[AL_MILK_reduce_sum] = {mx_reduce, AL_RED_SUM},
	[AL_MILK_reduce_sum_square] = {mx_reduce, AL_RED_SUMSQUARE},
	[AL_MILK_relu] = {mx_unary, AL_UN_RELU},
	[AL_MILK_relu6] = {mx_unary, -1},
	[AL_MILK_reshape] = {mx_reshape, 0},
	[AL_MILK_resize_bilinear] = {mx_resize, 1},
	[AL_MILK_resize_nearest_neighbor] = {mx_resize, 0},
	[AL_MILK_reverse] = {mx_reverse, 0},
	[AL_MILK_reverse_sequence] = {mx_reverse_sequence, 0},
	[AL_MILK_rnn] = {mx_rnn, 0},
	[AL_MILK_round] = {mx_round, 0},
	[AL_MILK_rsqrt] = {mx_unary_eps, AL_UN_RSQRT_EPS},
	[AL_MILK_scaled_dot_product_attention] = {mx_sdpa, 0},
	[AL_MILK_scaled_tanh] = {mx_unary_ab, AL_UN_SCALED_TANH},
	[AL_MILK_scatter] = {mx_scatter, 0},
	[AL_MILK_scatter_along_axis] = {mx_scatter_along_axis, 0},
	[AL_MILK_scatter_nd] = {mx_scatter_nd, 0},
	[AL_MILK_select] = {mx_select, 0},
	[AL_MILK_shape] = {mx_shape, 0},
	[AL_MILK_sigmoid] = {mx_unary, AL_UN_SIGMOID},
	[AL_MILK_sigmoid_hard] = {mx_unary_ab, AL_UN_SIGMOID_HARD},
	[AL_MILK_sign] = {mx_unary, AL_UN_SIGN},
	[AL_MILK_silu] = {mx_unary, AL_UN_SILU},
	[AL_MILK_sin] = {mx_unary, AL_UN_SIN},
	[AL_MILK_sinh] = {mx_unary, AL_UN_SINH},
	[AL_MILK_slice_by_index] = {mx_slice_by_index, 0},
	[AL_MILK_slice_by_size] = {mx_slice_by_size, 0},
	[AL_MILK_slice_update] = {mx_slice_update, 0},
	[AL_MILK_softmax] = {mx_softmax, 0},
	[AL_MILK_softplus] = {mx_unary, AL_UN_SOFTPLUS},
	[AL_MILK_softplus_parametric] = {mx_softplus_parametric, 0},
	[AL_MILK_softsign] = {mx_unary, AL_UN_SOFTSIGN},
	[AL_MILK_space_to_depth] = {mx_space_depth, 1},
	[AL_MILK_split] = {mx_split, 0},
	[AL_MILK_sqrt] = {mx_unary, AL_UN_SQRT},
	[AL_MILK_square] = {mx_unary, AL_UN_SQUARE},
	[AL_MILK_squeeze] = {mx_squeeze, 0},
	[AL_MILK_stack] = {mx_stack, 0},
	[AL_MILK_sub] = {mx_binary, AL_BIN_SUB},
	[AL_MILK_tan] = {mx_unary, AL_UN_TAN},
	[AL_MILK_tanh] = {mx_unary, AL_UN_TANH},
	[AL_MILK_threshold] = {mx_unary_ab, AL_UN_THRESHOLD},
	[AL_MILK_thresholded_relu] = {mx_unary_ab, AL_UN_THRESHOLDED_RELU},
	[AL_MILK_tile] = {mx_tile, 0},
	[AL_MILK_topk] = {mx_topk, 0},
	[AL_MILK_transpose] = {mx_transpose, 0},
	[AL_MILK_upsample_bilinear] = {mx_upsample, 1},
	[AL_MILK_upsample_nearest_neighbor] = {mx_upsample, 0},
	[AL_MILK_while_loop] = {op_while_loop, 0},
	[AL_MILK_write_state] = {op_write_state, 0},
};
_Static_assert(sizeof ops / sizeof ops[0] == AL_MILK_COUNT, "one row per MIL kind");

/* Ops whose work can grow past the values they read and write (windows, matrix
 * products, attention, recurrences), or whose output size is set by parameters
 * or values (resampling, tiles, pads, gathers, fills): ali_exec_node_start
 * estimates their work from the shapes they are given before they run, when the
 * shapes inferred before the run may not be the run's. */
static const bool estimate_first[AL_MILK_COUNT] = {
	[AL_MILK_conv] = true, [AL_MILK_conv_transpose] = true, [AL_MILK_linear] = true,
	[AL_MILK_matmul] = true, [AL_MILK_avg_pool] = true, [AL_MILK_max_pool] = true,
	[AL_MILK_l2_pool] = true, [AL_MILK_lstm] = true, [AL_MILK_gru] = true, [AL_MILK_rnn] = true,
	[AL_MILK_scaled_dot_product_attention] = true, [AL_MILK_upsample_bilinear] = true,
	[AL_MILK_upsample_nearest_neighbor] = true, [AL_MILK_resize_bilinear] = true,
	[AL_MILK_resize_nearest_neighbor] = true, [AL_MILK_tile] = true, [AL_MILK_pad] = true,
	[AL_MILK_gather] = true, [AL_MILK_gather_nd] = true, [AL_MILK_gather_along_axis] = true,
	[AL_MILK_fill] = true, [AL_MILK_fill_like] = true, [AL_MILK_one_hot] = true,
	[AL_MILK_range_1d] = true, [AL_MILK_topk] = true, [AL_MILK_argsort] = true,
};

/* ali_exec_node_start for op n: the values its name bindings read, when its
 * kind is estimated from them. */
static enum al_status node_start(struct al_exec *x, const struct al_node *n, struct al_env *env)
{
	bool estimate = n->kind >= 0 && n->kind < AL_MILK_COUNT && estimate_first[n->kind];
	const struct al_tensor *in[64];
	uint32_t n_in = estimate && n->n_inputs <= 64 ? n->n_inputs : 0;
	for (uint32_t i = 0; i < n_in; i++)
		in[i] = n->inputs[i] ? ali_env_get(env, n->inputs[i]) : NULL;
	return ali_exec_node_start(x, n, estimate && n->n_inputs <= 64, in, n_in);
}

bool ali_mil_exec_has(int k)
{
	return k >= 0 && k < AL_MILK_COUNT && ops[k].fn;
}

/* ================================================================ running */

static enum al_status run_op(struct mx_run *r, const struct al_node *n, struct al_env *env)
{
	struct al_exec *x = r->x;
	const struct mx_op *op = ali_mil_exec_has(n->kind) ? &ops[n->kind] : NULL;
	struct mx c = {.x = x, .run = r, .n = n, .env = env, .n_out = n->n_outputs};
	mx_fn *fn = op ? op->fn : op_refuse;
	if (!n->n_outputs && n->kind != AL_MILK_write_state)
		return ali_exec_fail(x, n, AL_E_FORMAT, "op %s has no outputs", n->type);
	enum al_status st = op ? node_start(x, n, env) : AL_OK;
	if (st != AL_OK)
		return st;
	if (!(c.out = ali_calloc(n->n_outputs ? n->n_outputs : 1, sizeof *c.out)))
		return ali_exec_fail(x, n, AL_E_NOMEM, "out of memory");
	st = fn(&c, op ? op->arg : 0);
	if (st == AL_OK)
		st = c.st;
	for (uint32_t i = 0; i < c.n_out && st == AL_OK; i++)
		if (!c.out[i])
			st = mx_fail(&c, AL_E_FORMAT, "declares %u outputs; the op gives fewer", c.n_out);
	if (st == AL_OK)
		st = ali_exec_node_done(x, n, c.out, c.n_out);
	for (uint32_t i = 0; i < c.n_out && st == AL_OK; i++) {
		struct al_tensor *t = c.out[i];
		c.out[i] = NULL;
		if (!ali_env_put(env, n->outputs[i], t))
			st = AL_E_NOMEM;
	}
	unref_all(c.out, c.n_out);
	unref_all(c.tmp, c.n_tmp);
	ali_free(c.out);
	if (st != AL_OK && al_diags_errors(x->d) == 0)
		ali_exec_fail(x, n, st, "op %s failed", n->type);
	return st;
}

static enum al_status run_graph(struct mx_run *r, const struct al_graph *g, struct al_env *env)
{
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		enum al_status st = run_op(r, &g->nodes[i], env);
		if (st != AL_OK)
			return st;
	}
	return AL_OK;
}

/* ---------------------------------------------------------------- value lifetimes
 * In the main block, a value is dropped after the last op that reads it
 * (reads inside an op's nested blocks, and names those blocks return, count for
 * that op), so peak memory follows the live values. The environment has no
 * unbind: a dropped name is rebound to a shared empty tensor. Function outputs
 * and names no op of the block defines are never dropped. */

/* fn(ctx, name, index) for every name op n reads, nested blocks included. */
static void each_use(const struct al_node *n, int depth, void (*fn)(void *, const char *, uint32_t),
		     void *ctx, uint32_t index)
{
	for (uint32_t i = 0; i < n->n_inputs; i++)
		fn(ctx, n->inputs[i], index);
	for (uint32_t s = 0; depth < AL_MAX_DEPTH && s < n->n_sub; s++) {
		struct al_mil_block_io io;
		if (!n->sub[s])
			continue;
		ali_mil_block_io(n->sub[s], &io);
		for (uint32_t k = 0; k < io.n_outputs; k++)
			fn(ctx, io.outputs[k], index);
		for (uint32_t k = 0; k < n->sub[s]->n_nodes; k++)
			each_use(&n->sub[s]->nodes[k], depth + 1, fn, ctx, index);
	}
}

static void lt_count(void *ctx, const char *name, uint32_t index)
{
	(void)name, (void)index;
	(*(size_t *)ctx)++;
}

/* The entry of name in u, added (last 0, not own) when absent; SIZE_MAX only
 * past the room lt_build reserved, which every name fits in. */
static size_t lt_entry(struct lifetimes *u, const char *name)
{
	if (!name)
		return SIZE_MAX;
	uint64_t h = ali_hash_str(name);
	size_t i = ali_hashtab_find(&u->index, h, ali_hashtab_name_eq, name, (void *)u->name);
	if (i != SIZE_MAX)
		return i;
	if (u->n == u->cap || !ali_hashtab_add(&u->index, h, u->n))
		return SIZE_MAX;
	u->name[u->n] = name;
	return u->n++;
}

static void lt_note(void *ctx, const char *name, uint32_t index)
{
	struct lifetimes *u = ctx;
	size_t i = lt_entry(u, name);
	if (i != SIZE_MAX)
		u->last[i] = index;
}

static void lt_free(struct lifetimes *u)
{
	ali_hashtab_free(&u->index);
	ali_free(u->name);
	ali_free(u->last);
	ali_free(u->own);
	memset(u, 0, sizeof *u);
}

/* False on OOM (then nothing is dropped). */
static bool lt_build(struct lifetimes *u, const struct al_graph *g, const struct al_mil_block_io *io)
{
	size_t n = io->n_outputs;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		each_use(&g->nodes[i], 0, lt_count, &n, i);
		n += g->nodes[i].n_outputs;
	}
	u->cap = n;
	u->name = ali_calloc(n ? n : 1, sizeof *u->name);
	u->last = ali_calloc(n ? n : 1, sizeof *u->last);
	u->own = ali_calloc(n ? n : 1, sizeof *u->own);
	if (!u->name || !u->last || !u->own || !ali_hashtab_reserve(&u->index, n)) {
		lt_free(u);
		return false;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		each_use(&g->nodes[i], 0, lt_note, u, i);
		for (uint32_t k = 0; k < g->nodes[i].n_outputs; k++) {
			size_t j = mx_lt_find(u, g->nodes[i].outputs[k]);
			if (j == SIZE_MAX) { /* defined, never read */
				if ((j = lt_entry(u, g->nodes[i].outputs[k])) == SIZE_MAX)
					continue;
				u->last[j] = i;
			}
			u->own[j] = true;
		}
	}
	for (uint32_t k = 0; k < io->n_outputs; k++) {
		size_t j = lt_entry(u, io->outputs[k]);
		if (j != SIZE_MAX)
			u->own[j] = false;
	}
	return true;
}

struct drop_ctx {
	struct lifetimes *u;
	struct al_env *env;
	struct al_tensor *empty;
	bool ok;
};

static void lt_drop(void *ctx, const char *name, uint32_t index)
{
	struct drop_ctx *d = ctx;
	size_t j = mx_lt_find(d->u, name);
	if (d->ok && j != SIZE_MAX && d->u->own[j] && d->u->last[j] == index) {
		d->u->own[j] = false; /* once */
		d->ok = ali_env_put(d->env, name, al_tensor_ref(d->empty));
	}
}

/* After op i of the main block: drop what it read last, and its outputs that
 * nothing reads. */
static bool lt_after(struct lifetimes *u, const struct al_node *n, uint32_t i, struct al_env *env,
		     struct al_tensor *empty)
{
	struct drop_ctx d = {u, env, empty, true};
	if (!u->name) /* not built */
		return true;
	each_use(n, 0, lt_drop, &d, i);
	for (uint32_t k = 0; k < n->n_outputs; k++)
		lt_drop(&d, n->outputs[k], i);
	return d.ok;
}

enum al_status ali_mil_exec(struct al_exec *x)
{
	const struct al_submodel *s = x->sub;
	const struct al_graph *g = ali_exec_top_graph(s);
	struct al_mil_block_io io;
	if (!g || !ali_mil_block_io(g, &io))
		return ali_exec_fail(x, NULL, AL_E_UNSUPPORTED,
				    "the ML Program has no function 'main' (the interpreter runs 'main')");
	for (uint32_t i = 0; !x->sel && i < io.n_inputs; i++)
		if (!ali_env_get(x->env, io.inputs[i]))
			return ali_exec_fail(x, NULL, AL_E_INVALID_ARG,
					    "function input '%.100s' is not bound (no model input of that "
					    "name was given)", io.inputs[i]);
	struct mx_run r = {.x = x, .model = mxc_model(x)};
	/* freed buffers go to the model's set (kept set for the run's end too: the
	 * outputs are freed after they are copied out) */
	if (r.model)
		x->bufs = &((struct mx_model_cache *)x->m->interp)->bufs;
	struct lifetimes lt = {0};
	uint64_t cached0 = r.model ? r.model->bytes : 0;
	x->bytes_live += cached0; /* the model's decoded weights count in every run */
	if (x->bytes_live > x->bytes_peak)
		x->bytes_peak = x->bytes_live;
	int64_t zero = 0;
	struct al_env *env = ali_env_new(x, x->env);
	struct al_tensor *empty = env ? ali_tensor_alloc(x, NULL, AL_DT_FP32, 1, &zero) : NULL;
	enum al_status st = empty ? AL_OK : AL_E_NOMEM;
	if (st == AL_OK && !x->sel && lt_build(&lt, g, &io)) { /* else values live to the end */
		r.lt = &lt;
		r.top = env;
	}
	for (uint32_t i = 0; i < g->n_nodes && st == AL_OK; i++) {
		if (x->sel && !x->sel[i])
			continue;
		r.at = i;
		st = run_op(&r, &g->nodes[i], env);
		if (st == AL_OK && !lt_after(&lt, &g->nodes[i], i, env, empty))
			st = AL_E_NOMEM;
	}
	/* a region (al_model_run_region): its values as the ops left them */
	for (size_t i = 0; x->sel && st == AL_OK && i < x->n_region_out; i++) {
		struct al_tensor *t = ali_env_get(env, x->region_out[i]);
		if (t && !ali_env_put(x->env, x->region_out[i], al_tensor_ref(t)))
			st = AL_E_NOMEM;
	}
	/* The function's outputs under the model's output names: by name, else by
	 * position when the counts agree. */
	for (uint32_t k = 0; !x->sel && k < s->n_outputs && st == AL_OK; k++) {
		const char *want = s->outputs[k].name;
		const char *have = NULL;
		for (uint32_t j = 0; j < io.n_outputs && !have; j++)
			if (strcmp(io.outputs[j], want) == 0)
				have = io.outputs[j];
		if (!have && io.n_outputs == s->n_outputs)
			have = io.outputs[k];
		struct al_tensor *t = have ? ali_env_get(env, have) : NULL;
		if (!t) {
			st = ali_exec_fail(x, NULL, AL_E_FORMAT, "the program does not produce output '%.100s'",
					  want);
			break;
		}
		if (!ali_env_put(x->env, want, al_tensor_ref(t)))
			st = AL_E_NOMEM;
	}
	ali_env_free(env);
	ali_tensor_unref(empty);
	lt_free(&lt);
	mxc_free(&r.run);
	uint64_t cached = r.model ? r.model->bytes : 0;
	x->bytes_live -= cached <= x->bytes_live ? cached : x->bytes_live;
	return st;
}
