/* SPDX-License-Identifier: MIT */
/* proof.c: whether a rewritten or split model computes what the original did
 * (anelint.h "proof"; docs/surgery.md "Proof"). Path through this file:
 *   al_prove_equivalent  the whole models on the same inputs (given, or drawn
 *                        with al_random_input): al_model_run twice, then
 *   al_prove_outputs     every output of a found by name in b's, compared
 *                        (al_tensor_compare) into one diff per name, then
 *   judge                each diff's verdict by the class of the change
 *   al_prove_region      the rewritten layers alone: al_region_inputs for
 *                        both, region_draw (random values, special ones for
 *                        exact rewrites), al_model_run_region, accumulate,
 *                        judge; a region that cannot run is handed back
 * The library decides; the CLI (fix, split) chooses the kind and reports. */
#include "interp.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void al_proof_clear(struct al_proof *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_diffs; i++)
		ali_free(p->diffs[i].name);
	ali_free(p->diffs);
	memset(p, 0, sizeof *p);
}

/* The diff of name, added when new (p->diffs has room for cap); NULL on OOM. */
static struct al_proof_diff *diff_for(struct al_proof *p, const char *name, size_t cap)
{
	for (size_t i = 0; i < p->n_diffs; i++)
		if (strcmp(p->diffs[i].name, name) == 0)
			return &p->diffs[i];
	if (p->n_diffs >= cap)
		return NULL;
	struct al_proof_diff *df = &p->diffs[p->n_diffs];
	if (!(df->name = ali_strdup(name)))
		return NULL;
	p->n_diffs++;
	return df;
}

/* One comparison of output b against the original a into df, which
 * accumulates over runs: identical while every run was, the largest differences. */
static void accumulate(struct al_proof_diff *df, const char *name_a, const al_tensor *a,
		       const char *name_b, const al_tensor *b)
{
	struct al_tensor_diff t;
	al_tensor_compare(b, a, &t);
	bool numeric = !t.text && a->f && b->f;
	if (!numeric || !t.comparable || !t.same_dims || strcmp(name_a, name_b) != 0) {
		df->why = !numeric ? "not numeric" : "shapes or names differ";
		bool same = t.text && t.identical; /* text: equal strings pass */
		df->identical = false;
		df->pass = same && (df->pass || !df->why_seen);
		df->why_seen = true;
		return;
	}
	bool ident = t.identical && t.labels_equal;
	df->identical = df->runs ? df->identical && ident : ident;
	/* a NaN on one side only is an infinite difference for a proof */
	double e = t.nan_a || t.nan_ref ? INFINITY : t.max_abs;
	if (e > df->max_abs)
		df->max_abs = e;
	if (t.ref_max > df->ref_max)
		df->ref_max = t.ref_max;
	/* an approximate rewrite must keep every output alive: not all zeros where
	 * the reference is not (values under fp16's range), no new infinity / NaN */
	for (size_t i = 0; i < b->n; i++) {
		double v = fabs((double)b->f[i]);
		if (isfinite(v) && v > df->got_max)
			df->got_max = v;
	}
	if (t.inf_a > t.inf_ref || t.nan_a)
		df->overflowed = true;
	df->runs++;
}

/* Every diff's verdict from what was accumulated; p->ok &= each. tol: the
 * largest rel an approximate change may reach (0: AL_PROOF_APPROX_TOL). */
static void judge(struct al_proof *p, enum al_equiv e, double tol)
{
	if (!(tol > 0)) /* 0 (or NaN): the default */
		tol = AL_PROOF_APPROX_TOL;
	for (size_t i = 0; i < p->n_diffs; i++) {
		struct al_proof_diff *df = &p->diffs[i];
		if (df->why_seen) {
			p->ok &= df->pass;
			continue;
		}
		df->rel = df->ref_max > 0 ? df->max_abs / df->ref_max : df->max_abs > 0 ? INFINITY : 0;
		df->collapsed = df->ref_max > 0 && df->got_max == 0 && !isinf(df->max_abs);
		df->pass = e == AL_EQ_EXACT ? df->identical
		       : e == AL_EQ_REASSOCIATE ? df->rel <= AL_PROOF_REASSOC_TOL
						: df->rel <= tol;
		df->pass = df->pass && !df->collapsed && !df->overflowed;
		p->ok &= df->pass;
	}
}

static const struct al_named_tensor *find_named(const struct al_named_tensor *v, size_t n,
						 const char *name)
{
	for (size_t i = n; i-- > 0;) /* the last of a name, as an environment keeps it */
		if (v[i].name && strcmp(v[i].name, name) == 0)
			return &v[i];
	return NULL;
}

/* Compare (no verdict yet): one diff per output of ref, room for cap. */
static enum al_status compare_outputs(const struct al_named_tensor *ref, size_t n_ref,
				      const struct al_named_tensor *got, size_t n_got,
				      struct al_proof *p, size_t cap)
{
	for (size_t i = 0; i < n_ref; i++) {
		struct al_proof_diff *df = diff_for(p, ref[i].name, cap);
		if (!df)
			return AL_E_NOMEM;
		const struct al_named_tensor *g = find_named(got, n_got, ref[i].name);
		if (!g || !g->t || !ref[i].t) {
			df->why = "missing";
			df->identical = df->pass = false;
			df->why_seen = true;
			continue;
		}
		accumulate(df, ref[i].name, ref[i].t, g->name, g->t);
	}
	return AL_OK;
}

enum al_status al_prove_outputs(const struct al_named_tensor *ref, size_t n_ref,
				const struct al_named_tensor *got, size_t n_got, enum al_equiv e,
				struct al_proof *p)
{
	if (!p || (n_ref && !ref) || (n_got && !got))
		return AL_E_INVALID_ARG;
	al_proof_clear(p);
	if (!(p->diffs = ali_calloc(n_ref + 1, sizeof *p->diffs)))
		return AL_E_NOMEM;
	enum al_status st = compare_outputs(ref, n_ref, got, n_got, p, n_ref);
	if (st != AL_OK)
		return st;
	p->proved = true;
	p->ok = true;
	p->runs = 1;
	judge(p, e, 0);
	return AL_OK;
}

/* The last error of d as "lead node: message". */
static void last_error(char *buf, size_t cap, const char *lead, const al_diags *d, enum al_status st)
{
	const struct al_diag *e = d && al_diags_count(d) ? al_diags_get(d, al_diags_count(d) - 1) : NULL;
	snprintf(buf, cap, "%s%s%s%s", lead, e && e->node ? e->node : "", e && e->node ? ": " : "",
		 e ? e->msg : al_status_str(st));
}

/* ================================================================ whole models */

enum al_status al_prove_equivalent(al_model *a, al_model *b, const struct al_proof_opts *o,
				   struct al_proof *p, al_diags *d)
{
	if (!a || !b || !o || !p || !d || (o->n_inputs && !o->inputs) || !al_model_count(a))
		return AL_E_INVALID_ARG;
	al_proof_clear(p);
	const struct al_submodel *s = al_model_get(a, 0);
	/* the inputs, then the states (stateful models): a state not given starts
	 * from a random value, not zeros, so a rewrite that reads it is exercised;
	 * both models' final states are compared like outputs */
	uint32_t n_feat = s->n_inputs + s->n_states;
	struct al_named_tensor *in = ali_calloc(n_feat + 1, sizeof *in);
	al_tensor **drawn = ali_calloc(n_feat + 1, sizeof *drawn);
	enum al_status st = in && drawn ? AL_OK : AL_E_NOMEM;
	size_t n_in = 0;
	for (uint32_t i = 0; st == AL_OK && i < n_feat; i++) {
		struct al_feature state;
		const struct al_feature *ft = &s->inputs[i];
		if (i >= s->n_inputs) {
			state = s->states[i - s->n_inputs];
			state.kind = AL_FEAT_MULTIARRAY; /* drawn like an array of its shape */
			ft = &state;
		}
		const struct al_named_tensor *given = find_named(o->inputs, o->n_inputs, ft->name);
		if (given && given->t) {
			in[n_in++] = (struct al_named_tensor){ft->name, given->t};
		} else if (!ft->optional) {
			st = al_random_input(ft, o->seed, o->max_bytes, &drawn[i], d);
			if (st == AL_OK)
				in[n_in++] = (struct al_named_tensor){ft->name, drawn[i]};
		}
	}
	struct al_named_tensor *oa = NULL, *ob = NULL;
	size_t na = 0, nb = 0;
	if (st == AL_OK) {
		uint64_t held = al_values_bytes(in, n_in); /* one budget: inputs, then also oa */
		struct al_run_opts ro = {.precision = AL_PREC_FP32, .threads = o->threads, .max_bytes = o->max_bytes,
					 .max_work = o->max_work, .held_bytes = &held};
		al_diags *rd = al_diags_new();
		enum al_status rs = rd ? al_model_run(a, in, n_in, &ro, &oa, &na, rd) : AL_E_NOMEM;
		held += al_values_bytes(oa, na);
		if (rs == AL_OK)
			rs = al_model_run(b, in, n_in, &ro, &ob, &nb, rd);
		if (!rd) {
			st = AL_E_NOMEM;
		} else if (rs != AL_OK) { /* not proved: the caller reports why */
			last_error(p->why, sizeof p->why, "the interpreter cannot run it: ", rd, rs);
		} else if (!(p->diffs = ali_calloc(na + 1, sizeof *p->diffs))) {
			st = AL_E_NOMEM;
		} else {
			p->proved = true;
			p->ok = na == nb;
			p->runs = 1;
			if (na != nb)
				snprintf(p->why, sizeof p->why, "%zu outputs against %zu", nb, na);
			st = compare_outputs(oa, na, ob, nb, p, na);
			judge(p, o->equiv, o->tolerance);
		}
		al_diags_free(rd);
	}
	al_outputs_free(oa, na);
	al_outputs_free(ob, nb);
	for (uint32_t i = 0; drawn && i < n_feat; i++)
		al_tensor_free(drawn[i]);
	ali_free(drawn);
	ali_free(in);
	return st;
}

/* ================================================================ regions */

static const struct al_region_value *find_value(const struct al_region_value *v, size_t n,
						const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return &v[i];
	return NULL;
}

/* Values that random draws never give and exact rewrites must keep: signed
 * zeros (a - b against a + (-b)), the fp16 range ends and its smallest subnormal. */
static const float special_values[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 65504.0f,
					-65504.0f, 5.9604645e-8f, -5.9604645e-8f};
#define SPECIAL_RUN AL_PROOF_SPECIAL_RUN /* its floating values are one third special values */

/* Every third value of t becomes a special value. Value number k of the region
 * shifts the pattern by k more each period, so two values read together meet
 * every ordered pair of special values (a = -0 with b = +0 included) once the
 * tensors hold 3 x 10 x 10 values. */
static void sprinkle(al_tensor *t, size_t k)
{
	int dt = al_tensor_dtype(t);
	float *v = al_tensor_data(t);
	if (!v || !(dt == AL_DT_FP32 || dt == AL_DT_FP16 || dt == AL_DT_UNKNOWN))
		return;
	size_t n_sp = sizeof special_values / sizeof special_values[0];
	for (size_t i = 0; i < al_tensor_count(t); i += 3) {
		size_t j = i / 3;
		v[i] = special_values[(j + k * (j / n_sp)) % n_sp];
	}
}

/* The inputs of one region run: a random tensor per value of va (shapes of the
 * original), reused by name for vb; vb's own values drawn from its shapes. */
static enum al_status region_draw(const struct al_region_value *va, size_t nva,
				  const struct al_region_value *vb, size_t nvb, uint64_t seed, bool special,
				  uint64_t max_bytes, struct al_named_tensor *ta, struct al_named_tensor *tb,
				  al_diags *d, char *why, size_t cap)
{
	for (size_t i = 0; i < nva; i++) {
		ta[i].name = va[i].name;
		enum al_status st = al_random_tensor(&va[i].shape, va[i].name, seed, max_bytes, &ta[i].t, d);
		if (st != AL_OK)
			return st;
		if (special)
			sprinkle(ta[i].t, i);
	}
	for (size_t i = 0; i < nvb; i++) {
		tb[i].name = vb[i].name;
		const struct al_region_value *a = find_value(va, nva, vb[i].name);
		if (!a) { /* the rewrite replaced layers before the original's region: a value drawn
			   * for one side alone would compare unrelated runs */
			snprintf(why, cap, "%.100s: the rewritten region reads it, the original's does not",
				 vb[i].name);
			return AL_E_UNSUPPORTED;
		}
		size_t k = (size_t)(a - va); /* the same pattern as in the original */
		if (a && (a->shape.rank != vb[i].shape.rank ||
			  memcmp(a->shape.dims, vb[i].shape.dims,
				 (size_t)(a->shape.rank > 0 ? a->shape.rank : 0) * sizeof a->shape.dims[0]))) {
			snprintf(why, cap, "%.100s: the two models infer different shapes for it", vb[i].name);
			return AL_E_UNSUPPORTED;
		}
		enum al_status st = al_random_tensor(&vb[i].shape, vb[i].name, seed, max_bytes, &tb[i].t, d);
		if (st != AL_OK)
			return st;
		if (special)
			sprinkle(tb[i].t, k);
	}
	return AL_OK;
}

enum al_status al_prove_region(al_model *a, const struct al_region *ra, al_model *b,
			       const struct al_region *rb, const struct al_proof_opts *o,
			       struct al_proof *p, al_diags *d)
{
	(void)d; /* the runs' diagnostics are summed up in p->why, not reported */
	if (!a || !ra || !b || !rb || !o || !p)
		return AL_E_INVALID_ARG;
	al_proof_clear(p);
	size_t cap = ra->n_outputs;
	struct al_region_value *va = NULL, *vb = NULL;
	size_t nva = 0, nvb = 0;
	struct al_named_tensor *ta = NULL, *tb = NULL, *oa = NULL, *ob = NULL;
	size_t na = 0, nb = 0;
	char why[160] = "";
	bool oom = false;
	al_diags *rd = al_diags_new();
	p->diffs = ali_calloc(cap + 1, sizeof *p->diffs);
	enum al_status st = rd && p->diffs ? AL_OK : AL_E_NOMEM;
	if (st == AL_OK && !cap) { /* nothing to compare would prove nothing */
		snprintf(why, sizeof why, "the rewritten layers produce no values");
		st = AL_E_UNSUPPORTED;
	}
	if (st == AL_OK)
		st = al_region_inputs(a, ra, &va, &nva, rd);
	if (st == AL_OK)
		st = al_region_inputs(b, rb, &vb, &nvb, rd);
	if (st == AL_OK) {
		ta = ali_calloc(nva + 1, sizeof *ta);
		tb = ali_calloc(nvb + 1, sizeof *tb);
		if (!ta || !tb)
			st = AL_E_NOMEM;
	}
	uint64_t held = 0; /* one budget: both regions' inputs, then also oa */
	struct al_run_opts ro = {.precision = AL_PREC_FP32, .threads = o->threads, .max_bytes = o->max_bytes,
				 .max_work = o->max_work, .held_bytes = &held};
	/* special values where bit-identity is asked; a reassociating rewrite's rounding
	 * error is judged on ordinary values (1e-5 of max|ref|, as the whole proof) */
	bool exact = o->equiv == AL_EQ_EXACT;
	for (int run = 0; st == AL_OK && run < AL_PROOF_REGION_RUNS; run++) {
		st = region_draw(va, nva, vb, nvb, o->seed + (uint64_t)run, run == SPECIAL_RUN && exact,
				 o->max_bytes, ta, tb, rd, why, sizeof why);
		held = al_values_bytes(ta, nva) + al_values_bytes(tb, nvb);
		if (st == AL_OK)
			st = al_model_run_region(a, ra, ta, nva, &ro, &oa, &na, rd);
		held += al_values_bytes(oa, na);
		if (st == AL_OK)
			st = al_model_run_region(b, rb, tb, nvb, &ro, &ob, &nb, rd);
		if (st == AL_OK && compare_outputs(oa, na, ob, nb, p, cap) != AL_OK)
			oom = true;
		al_outputs_free(oa, na);
		al_outputs_free(ob, nb);
		oa = ob = NULL;
		na = nb = 0;
		for (size_t i = 0; i < nva; i++)
			al_tensor_free(ta[i].t), ta[i].t = NULL;
		for (size_t i = 0; i < nvb; i++)
			al_tensor_free(tb[i].t), tb[i].t = NULL;
		if (oom)
			break;
		p->runs = run + 1;
	}
	if (oom || st == AL_E_NOMEM) {
		st = AL_E_NOMEM;
	} else if (st != AL_OK && p->n_diffs) {
		/* a difference already found is never retried on the whole models */
		p->ok = true;
		judge(p, o->equiv, o->tolerance);
		if (!p->ok) {
			p->proved = true;
			p->n_values = nva;
			snprintf(p->why, sizeof p->why,
				 "run %d of the region failed after a difference was found", p->runs + 1);
			st = AL_OK;
		}
	} else if (st == AL_OK) {
		p->proved = true;
		p->ok = true;
		p->n_values = nva;
		judge(p, o->equiv, o->tolerance);
	}
	if (st != AL_OK) { /* not isolable or not runnable on random values: say why */
		if (!why[0])
			last_error(why, sizeof why, "", rd, st);
		al_proof_clear(p);
		snprintf(p->why, sizeof p->why, "%s", why);
	}
	ali_free(ta);
	ali_free(tb);
	al_region_values_free(va);
	al_region_values_free(vb);
	al_diags_free(rd);
	return st;
}
