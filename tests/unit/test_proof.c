/* SPDX-License-Identifier: MIT */
/* test_proof.c: the public comparison and equivalence proof (anelint.h
 * "al_tensor_compare", "proof"), called as a library user would: what "same
 * shape" means, NaN and infinities, the verdict per class, and the whole and
 * region proofs of a rewrite planned by al_surgery_plan. */
#include "testutil.h"

#include "anelint.h"

#include <math.h>

static al_tensor *vec(int rank, const int64_t *dims, const float *v)
{
	al_tensor *t = al_tensor_new(AL_DT_FP32, rank, dims);
	assert_non_null(t);
	memcpy(al_tensor_data(t), v, al_tensor_count(t) * sizeof *v);
	return t;
}

static void test_compare(void **state)
{
	(void)state;
	const int64_t d5[5] = {1, 1, 3, 1, 1}, d1[1] = {3}, d2[2] = {3, 1}, d4[1] = {4};
	const float x[3] = {1, -2, 3}, y[3] = {1, -2, 3.5f}, z[4] = {0};
	al_tensor *a = vec(5, d5, x), *b = vec(1, d1, y), *c = vec(2, d2, x), *e = vec(1, d4, z);
	struct al_tensor_diff r;
	/* rank-5 blob against the user's [3]: the same shape, not the same dims */
	assert_int_equal(al_tensor_compare(b, a, &r), AL_OK);
	assert_true(r.comparable && !r.same_dims && !r.identical && !r.text);
	assert_true(r.max_abs == 0.5 && r.ref_max == 3);
	assert_true(fabs(r.rel - 0.5 / 3) < 1e-12);
	double cos = (1 + 4 + 10.5) / (sqrt(14.0) * sqrt(1 + 4 + 12.25));
	assert_true(fabs(r.cosine - cos) < 1e-12);
	assert_int_equal(al_tensor_compare(c, a, &r), AL_OK);
	assert_true(r.comparable && r.identical && !r.same_dims && r.cosine == 1);
	assert_int_equal(al_tensor_compare(a, a, &r), AL_OK);
	assert_true(r.same_dims && r.identical && r.labels_equal && r.max_abs == 0);
	/* another count: not comparable */
	assert_int_equal(al_tensor_compare(e, a, &r), AL_OK);
	assert_false(r.comparable);
	assert_string_equal(r.why, "shapes differ");
	/* NaN on one side is counted, not measured; infinities differ infinitely */
	float *bv = al_tensor_data(b);
	bv[0] = NAN;
	bv[2] = INFINITY;
	assert_int_equal(al_tensor_compare(b, a, &r), AL_OK);
	assert_true(r.nan_a == 1 && r.nan_ref == 0 && r.inf_a == 1 && r.inf_ref == 0);
	assert_true(isinf(r.max_abs) && r.ref_max == 3);
	assert_int_equal(al_tensor_compare(a, b, &r), AL_OK);
	assert_true(r.nan_a == 0 && r.nan_ref == 1 && r.ref_max == 2); /* finite |ref| only */
	assert_int_equal(al_tensor_compare(NULL, a, &r), AL_E_INVALID_ARG);
	assert_false(r.comparable);
	al_tensor_free(a);
	al_tensor_free(b);
	al_tensor_free(c);
	al_tensor_free(e);
}

static void test_prove_outputs(void **state)
{
	(void)state;
	const int64_t d1[1] = {3};
	const float x[3] = {1, -2, 3}, y[3] = {1, -2, 3 + 1e-6f}, w[3] = {1, NAN, 3};
	al_tensor *a = vec(1, d1, x), *b = vec(1, d1, y), *n = vec(1, d1, w);
	struct al_named_tensor ref[1] = {{"y", a}}, near[1] = {{"y", b}}, nan[1] = {{"y", n}},
			       other[1] = {{"z", a}};
	struct al_proof p = {0};
	assert_int_equal(al_prove_outputs(ref, 1, ref, 1, AL_EQ_EXACT, &p), AL_OK);
	assert_true(p.proved && p.ok && p.n_diffs == 1 && p.diffs[0].identical);
	/* 1e-6 off in 3: not exact, within the reassociation tolerance */
	assert_int_equal(al_prove_outputs(ref, 1, near, 1, AL_EQ_EXACT, &p), AL_OK);
	assert_false(p.ok);
	assert_int_equal(al_prove_outputs(ref, 1, near, 1, AL_EQ_REASSOCIATE, &p), AL_OK);
	assert_true(p.ok && p.diffs[0].rel > 0 && p.diffs[0].rel <= AL_PROOF_REASSOC_TOL);
	/* a NaN on one side only is an infinite difference: refused, approximate too
	 * (beyond its tolerance, and a NaN the reference does not have) */
	assert_int_equal(al_prove_outputs(ref, 1, nan, 1, AL_EQ_REASSOCIATE, &p), AL_OK);
	assert_true(!p.ok && isinf(p.diffs[0].max_abs));
	assert_int_equal(al_prove_outputs(ref, 1, nan, 1, AL_EQ_APPROXIMATE, &p), AL_OK);
	assert_true(!p.ok && p.diffs[0].overflowed);
	/* approximate: within AL_PROOF_APPROX_TOL (1e-2 of max|ref|) passes */
	const float y2[3] = {1, -2, 3.02f};
	al_tensor *b2 = vec(1, d1, y2);
	struct al_named_tensor near2[1] = {{"y", b2}};
	assert_int_equal(al_prove_outputs(ref, 1, near2, 1, AL_EQ_APPROXIMATE, &p), AL_OK);
	assert_true(p.ok && p.diffs[0].rel > AL_PROOF_REASSOC_TOL && p.diffs[0].rel <= AL_PROOF_APPROX_TOL);
	al_tensor_free(b2);
	/* an output that collapses to zero (values under fp16's range), or
	 * overflows to an infinity, is refused whatever the difference */
	const float tiny[3] = {6e-10f, -2e-10f, 1e-10f}, zero[3] = {0, 0, 0}, big[3] = {1, -2, INFINITY};
	al_tensor *tt = vec(1, d1, tiny), *tz = vec(1, d1, zero), *tb = vec(1, d1, big);
	struct al_named_tensor rt[1] = {{"y", tt}}, rz[1] = {{"y", tz}}, rb[1] = {{"y", tb}};
	assert_int_equal(al_prove_outputs(rt, 1, rz, 1, AL_EQ_APPROXIMATE, &p), AL_OK);
	assert_true(!p.ok && p.diffs[0].collapsed && p.diffs[0].got_max == 0);
	assert_int_equal(al_prove_outputs(rz, 1, rz, 1, AL_EQ_APPROXIMATE, &p), AL_OK);
	assert_true(p.ok && !p.diffs[0].collapsed); /* zeros where the reference is zero */
	assert_int_equal(al_prove_outputs(ref, 1, rb, 1, AL_EQ_APPROXIMATE, &p), AL_OK);
	assert_true(!p.ok && p.diffs[0].overflowed);
	al_tensor_free(tt);
	al_tensor_free(tz);
	al_tensor_free(tb);
	/* matched by name: an output not there is missing */
	assert_int_equal(al_prove_outputs(ref, 1, other, 1, AL_EQ_APPROXIMATE, &p), AL_OK);
	assert_false(p.ok);
	assert_string_equal(p.diffs[0].why, "missing");
	al_proof_clear(&p);
	al_proof_clear(&p);
	al_tensor_free(a);
	al_tensor_free(b);
	al_tensor_free(n);
}

/* A rewrite planned and proved through the public API only, as `fix` does. */
static void test_prove_rewrite(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *a = NULL, *b = NULL;
	assert_int_equal(al_model_open(fixture("crafted/fix_subb.mlmodel"), &a, d), AL_OK);
	al_surgery *sg = NULL;
	assert_int_equal(al_surgery_plan(a, NULL, &sg, d), AL_OK);
	assert_true(al_surgery_applied(sg) >= 1);
	uint8_t *bytes = NULL;
	size_t nb = 0;
	assert_int_equal(al_surgery_bytes(sg, &bytes, &nb, d), AL_OK);
	assert_int_equal(al_model_open_buffer(bytes, nb, NULL, 0, "rewritten", &b, d), AL_OK);
	assert_int_equal(al_model_check(b, NULL, d), AL_OK);

	struct al_proof p = {0};
	struct al_proof_opts o = {.equiv = AL_EQ_EXACT, .seed = 7};
	assert_int_equal(al_prove_equivalent(a, b, &o, &p, d), AL_OK);
	assert_true(p.proved && p.ok && p.runs == 1 && p.n_diffs >= 1);
	for (size_t i = 0; i < p.n_diffs; i++)
		assert_true(p.diffs[i].identical && p.diffs[i].pass);

	/* the region: the rewritten layers against what replaced them */
	const char *ln[8], *lo[8], *outs[8];
	size_t nla = 0, nlb = 0, no = 0;
	for (size_t i = 0; i < al_surgery_count(sg); i++) {
		const struct al_rewrite *r = al_surgery_get(sg, i);
		if (!r->applied || nla == 8)
			continue;
		ln[nla++] = r->node->name;
		for (uint32_t k = 0; k < r->n_layers && nlb < 8; k++)
			lo[nlb++] = r->layers[k];
		for (uint32_t k = 0; k < r->node->n_outputs && no < 8; k++)
			outs[no++] = r->node->outputs[k];
	}
	struct al_region ra = {ln, nla, true, outs, no}, rb = {lo, nlb, true, outs, no};
	assert_int_equal(al_prove_region(a, &ra, b, &rb, &o, &p, d), AL_OK);
	assert_true(p.proved && p.ok && p.runs == AL_PROOF_REGION_RUNS && p.n_values >= 1);
	/* a region naming no outputs proves nothing: handed back with a reason */
	struct al_region none = {ln, nla, true, outs, 0};
	assert_int_equal(al_prove_region(a, &none, b, &none, &o, &p, d), AL_E_UNSUPPORTED);
	assert_false(p.proved);
	assert_non_null(strstr(p.why, "no values"));
	al_proof_clear(&p);
	al_model_free(b);
	free(bytes);
	al_surgery_free(sg);
	al_model_free(a);
	al_diags_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_prove_outputs),
		cmocka_unit_test(test_prove_rewrite),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
