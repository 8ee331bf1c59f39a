/* SPDX-License-Identifier: MIT */
/* mil_cumsum_matmul.c: mil-cumsum-to-matmul (a row of AL_PASSES in surgery.c; docs/surgery.md;
 * tests/pass_mil_cumsum_to_matmul.sh).
 *   match:   cumsum (fp16 / fp32) on one of the last two axes of a static shape, that axis 1..1024
 *            long
 *   rewrite: matmul by a constant 0/1 triangle (exclusive / reverse folded into it), the same
 *            output name
 *   proves:  reassociate: the same sums, added in another order */
#include "passes.h"

#include <math.h>
#include <stdio.h>

#define MAX_TRIANGLE 1024 /* cumsum axis length: an N x N constant, N^2 MACs per row */

bool ali_pass_mil_cumsum(struct al_mil_pass *c)
{
	if (!ali_mil_op_ok(c))
		return false;
	al_span xb;
	if (ali_mil_param_binding(c->n, "x", 0, &xb) != 1)
		return ali_mil_say(c, "'x' is not a named value");
	struct al_shape s;
	char sh[96];
	if (!ali_mil_param_shape(c->n, "x", &s) || !ali_mil_static_shape(&s)) {
		if (!ali_mil_param_shape(c->n, "x", &s))
			s.rank = -1;
		ali_shape_format(&s, sh, sizeof sh);
		return ali_mil_say(c, "'x' has shape %s, not static", sh);
	}
	ali_shape_format(&s, sh, sizeof sh);
	int dt = s.dtype ? s.dtype : ali_mil_out_dtype(c);
	if (dt != AL_DT_FP16 && dt != AL_DT_FP32)
		return ali_mil_say(c, "'x' is %s: the matmul form is for fp16 / fp32", al_dtype_name(dt));
	if (s.rank < 1)
		return ali_mil_say(c, "'x' is a scalar");
	double ax, ex, rev;
	if (!ali_mil_const_scalar(c, "axis", &ax, true, 0) || !ali_mil_const_scalar(c, "exclusive", &ex, true, 0) ||
	    !ali_mil_const_scalar(c, "reverse", &rev, true, 0))
		return false;
	if (ax != floor(ax) || ax < -s.rank || ax >= s.rank)
		return ali_mil_say(c, "axis %g out of range for rank %d", ax, s.rank);
	int a = (int)ax < 0 ? (int)ax + s.rank : (int)ax;
	if (a != s.rank - 1 && a != s.rank - 2)
		return ali_mil_say(c, "axis %d of %s is not one of the last two (a matmul sums over those only)",
			   a, sh);
	int64_t N = s.dims[a];
	if (N < 1 || N > MAX_TRIANGLE)
		return ali_mil_say(c, "axis %d has length %lld; the triangle is built for 1..%d", a,
			   (long long)N, MAX_TRIANGLE);
	bool last = a == s.rank - 1;
	if (c->s->opts && c->s->opts->allow < AL_EQ_REASSOCIATE) { /* reported, nothing built */
		snprintf(c->after, sizeof c->after, "matmul by a %lldx%lld 0/1 triangle", (long long)N,
			 (long long)N);
		return true;
	}
	/* last: y = x @ T, T[j][i] = 1 when x[j] goes into y[i]; else y = T' @ x with
	 * T'[i][j] the same condition. */
	double *t = ali_malloc((size_t)(N * N) * sizeof *t);
	if (!t)
		return ali_mil_say(c, "out of memory");
	for (int64_t r = 0; r < N; r++)
		for (int64_t q = 0; q < N; q++) {
			int64_t j = last ? r : q, i = last ? q : r; /* j contributes to i */
			bool in = rev ? (ex ? j > i : j >= i) : (ex ? j < i : j <= i);
			t[r * N + q] = in ? 1.0 : 0.0;
		}
	const char *base = c->n->outputs[0];
	const char *tri = ali_mil_fresh(c, base, "triangle"), *tx = ali_mil_fresh(c, base, "transpose_x"),
		   *ty = ali_mil_fresh(c, base, "transpose_y");
	if (!tri || !tx || !ty) {
		ali_free(t);
		return ali_mil_say(c, "no free value name");
	}
	int64_t td[2] = {N, N};
	double zero = 0;
	bool blob = false, b2;
	bool ok = ali_mil_pre_const(c, tri, dt, 2, td, t, (size_t)(N * N), &blob) &&
		  ali_mil_pre_const(c, tx, AL_DT_BOOL, 0, NULL, &zero, 1, &b2) &&
		  ali_mil_pre_const(c, ty, AL_DT_BOOL, 0, NULL, &zero, 1, &b2);
	ali_free(t);
	if (!ok)
		return false;
	char *xname = ali_arena_strndup(&c->s->arena, xb.p, xb.n);
	if (!xname)
		return ali_mil_say(c, "out of memory");
	/* the matmul: type, inputs, the cumsum's outputs and name attribute */
	ali_mil_put_type(&c->layer, "matmul");
	ali_mil_put_input(&c->layer, "x", last ? xname : tri);
	ali_mil_put_input(&c->layer, "y", last ? tri : xname);
	ali_mil_put_input(&c->layer, "transpose_x", tx);
	ali_mil_put_input(&c->layer, "transpose_y", ty);
	if (!ali_mil_keep_outputs(c, &c->layer, base, false))
		return false;
	if (c->layer.failed)
		return ali_mil_say(c, "out of memory");
	c->names[c->n_names++] = c->n->name;
	snprintf(c->after, sizeof c->after, "matmul(%s) with T a %lldx%lld 0/1 triangle%s%s (%s)",
		 last ? "x, T" : "T, x", (long long)N, (long long)N,
		 ex ? ", exclusive" : "", rev ? ", reverse" : "",
		 blob ? "a new blob in weight.bin" : "immediate");
	return true;
}
