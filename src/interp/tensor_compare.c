/* SPDX-License-Identifier: MIT */
/* tensor_compare.c: al_tensor_compare, the one comparison of two results
 * (anelint.h says what "same shape" means and why). It reads tensors only:
 * verdicts (tolerances, what a proof accepts) belong to the callers. */
#include "interp.h"

#include <math.h>
#include <string.h>

/* The dims agree once every dim of 1 is dropped. */
static bool same_shape(const struct al_tensor *a, const struct al_tensor *b)
{
	int i = 0, j = 0;
	for (;;) {
		while (i < a->rank && a->dims[i] == 1)
			i++;
		while (j < b->rank && b->dims[j] == 1)
			j++;
		if (i == a->rank || j == b->rank)
			return i == a->rank && j == b->rank;
		if (a->dims[i++] != b->dims[j++])
			return false;
	}
}

static bool labels_equal(const struct al_tensor *a, const struct al_tensor *b)
{
	for (size_t k = 0; k < a->n && k < b->n; k++) {
		const char *p = al_tensor_label(a, k), *q = al_tensor_label(b, k);
		if ((p == NULL) != (q == NULL) || (p && strcmp(p, q) != 0))
			return false;
	}
	return true;
}

static void compare_text(const struct al_tensor *a, const struct al_tensor *ref, struct al_tensor_diff *r)
{
	r->comparable = r->text = r->identical = true;
	for (size_t i = 0; i < a->n; i++) {
		const char *p = al_tensor_string(a, i), *q = al_tensor_string(ref, i);
		r->identical &= p && q && strcmp(p, q) == 0;
	}
	r->cosine = r->identical ? 1 : 0;
}

static void compare_numbers(const float *x, const float *y, size_t n, struct al_tensor_diff *r)
{
	r->comparable = true;
	r->identical = memcmp(x, y, n * sizeof *x) == 0;
	double dot = 0, na = 0, nb = 0;
	for (size_t i = 0; i < n; i++) {
		double p = x[i], q = y[i];
		r->inf_a += isinf(p) != 0;
		r->inf_ref += isinf(q) != 0;
		if (isnan(p) || isnan(q)) {
			r->nan_a += isnan(p) && !isnan(q);
			r->nan_ref += isnan(q) && !isnan(p);
			continue;
		}
		double e = (isinf(p) || isinf(q)) ? (p == q ? 0 : INFINITY) : fabs(p - q);
		if (e > r->max_abs)
			r->max_abs = e;
		if (isfinite(q) && fabs(q) > r->ref_max)
			r->ref_max = fabs(q);
		if (isfinite(p) && isfinite(q)) {
			dot += p * q;
			na += p * p;
			nb += q * q;
		}
	}
	r->rel = r->ref_max > 0 ? r->max_abs / r->ref_max : r->max_abs > 0 ? INFINITY : 0;
	r->cosine = na > 0 && nb > 0 ? dot / (sqrt(na) * sqrt(nb)) : (na == nb ? 1 : 0);
}

enum al_status al_tensor_compare(const al_tensor *a, const al_tensor *ref, struct al_tensor_diff *out)
{
	if (!out)
		return AL_E_INVALID_ARG;
	memset(out, 0, sizeof *out);
	if (!a || !ref) {
		out->why = "missing";
		return AL_E_INVALID_ARG;
	}
	out->same_dims = a->rank == ref->rank &&
			 memcmp(a->dims, ref->dims, (size_t)a->rank * sizeof a->dims[0]) == 0;
	out->labels_equal = a->n == ref->n && labels_equal(a, ref);
	bool ta = a->s != NULL, tr = ref->s != NULL;
	if (ta || tr) {
		if (ta != tr || a->n != ref->n)
			out->why = "one is text, the other numbers";
		else
			compare_text(a, ref, out);
		return AL_OK;
	}
	if (a->n != ref->n || !same_shape(a, ref)) {
		out->why = "shapes differ";
		return AL_OK;
	}
	if (!a->f || !ref->f) {
		out->why = "no data";
		return AL_OK;
	}
	compare_numbers(a->f, ref->f, a->n, out);
	return AL_OK;
}
