/* SPDX-License-Identifier: MIT */
/* mil_weights.c: how an ML Program stores a compressed weight, in words
 * ("int4 per-block (block 32)", "4-bit LUT per-grouped-channel (group 8)"),
 * read from the types of a constexpr_* op's parameters only: nothing is
 * decoded. `info` lists them: a user needs to see "int4 per-block" to know why
 * the ANE refuses a weight. The interpreter decodes them (interp_mil.c). */
#include "model.h"

#include <stdio.h>
#include <string.h>

/* dtype, rank and dims of parameter `param`: a binding (iOS18) or an attribute
 * (iOS16/17); false when neither is known. */
static bool param_shape(const struct al_node *n, const char *param, int *dtype, int *rank,
			int64_t *dims)
{
	const struct al_ttype *t = ali_mil_param_type(n, param);
	if (t && (t->rank < 0 || t->rank > AL_SHAPE_MAX_RANK || !t->dims))
		t = NULL; /* declared without a shape */
	al_span b, v;
	struct al_mil_value mv;
	const struct al_node *src = NULL;
	/* without the scopes a check builds: the producer earlier in the block */
	if (!t && n->owner && ali_mil_param_binding(n, param, 0, &b) == 1)
		for (uint32_t i = 0; i < n->owner->n_nodes && &n->owner->nodes[i] != n && !src; i++) {
			const struct al_node *p = &n->owner->nodes[i];
			for (uint32_t k = 0; k < p->n_outputs && !src; k++)
				if (p->outputs[k] && strlen(p->outputs[k]) == b.n &&
				    memcmp(p->outputs[k], b.p, b.n) == 0) {
					src = p;
					if (p->out_types && p->out_types[k].rank >= 0 && p->out_types[k].dims)
						t = &p->out_types[k];
				}
		}
	/* an untyped const: its value's type */
	if (!t && src && src->type && strcmp(src->type, "const") == 0 && ali_mil_attr(src, "val", &v) &&
	    ali_mil_value_read(v, &mv) && mv.rank >= 0 && mv.rank <= AL_SHAPE_MAX_RANK) {
		*dtype = mv.dtype;
		*rank = mv.rank;
		memcpy(dims, mv.dims, sizeof *dims * (size_t)mv.rank);
		return true;
	}
	if (t && t->rank >= 0 && t->rank <= AL_SHAPE_MAX_RANK && t->dims) {
		*dtype = t->dtype;
		*rank = t->rank;
		memcpy(dims, t->dims, sizeof *dims * (size_t)t->rank);
		return true;
	}
	bool lit = ali_mil_param_binding(n, param, 0, &v) == 2; /* a literal binding (iOS18) */
	if (!(lit || ali_mil_attr(n, param, &v)) || !ali_mil_value_read(v, &mv) || mv.rank < 0 ||
	    mv.rank > AL_SHAPE_MAX_RANK)
		return false;
	*dtype = mv.dtype;
	*rank = mv.rank;
	memcpy(dims, mv.dims, sizeof *dims * (size_t)mv.rank);
	return true;
}

/* Granularity of per-axis groups g[] over dims d[] (rank r): per-tensor (all 1),
 * per-channel (one axis whole), per-grouped-channel (one axis in groups), or
 * per-block (the block size along the axis that is split). */
static void granularity(char *buf, size_t cap, int r, const int64_t *d, const int64_t *g, bool lut)
{
	int split = 0, axis = -1;
	for (int i = 0; i < r; i++)
		if (g[i] > 1) {
			split++;
			axis = i;
		}
	if (split == 0) {
		snprintf(buf, cap, "per-tensor");
	} else if (split == 1 && g[axis] == d[axis]) {
		snprintf(buf, cap, "per-channel (axis %d)", axis);
	} else if (split == 1 && lut) {
		snprintf(buf, cap, "per-grouped-channel (group %lld)", (long long)(d[axis] / g[axis]));
	} else {
		/* per-block: the block along the last split axis whose groups are not whole */
		int b = -1;
		for (int i = r - 1; i >= 0 && b < 0; i--)
			if (g[i] > 1 && g[i] != d[i])
				b = i;
		if (b < 0)
			b = axis;
		snprintf(buf, cap, "per-block (block %lld)", (long long)(d[b] / (g[b] ? g[b] : 1)));
	}
}

bool ali_mil_weight_form(const struct al_node *n, char *buf, size_t cap)
{
	int dt = 0, rank = 0, dt2 = 0, r2 = 0;
	int64_t d[AL_SHAPE_MAX_RANK], d2[AL_SHAPE_MAX_RANK], g[AL_SHAPE_MAX_RANK];
	char gran[64];
	const char *t = n->type ? n->type : "";
	if (strcmp(t, "constexpr_affine_dequantize") == 0) {
		if (!param_shape(n, "quantized_data", &dt, &rank, d) ||
		    !param_shape(n, "scale", &dt2, &r2, d2))
			return false;
		size_t cnt = 1;
		for (int i = 0; i < r2; i++)
			cnt *= (size_t)(d2[i] > 0 ? d2[i] : 1);
		snprintf(buf, cap, "%s %s (affine)", al_dtype_name(dt), cnt > 1 ? "per-channel" : "per-tensor");
		return true;
	}
	if (strcmp(t, "constexpr_blockwise_shift_scale") == 0 ||
	    strcmp(t, "constexpr_sparse_blockwise_shift_scale") == 0) {
		bool sparse = t[10] == 's';
		if (!param_shape(n, sparse ? "nonzero_data" : "data", &dt, &rank, d) ||
		    (sparse && !param_shape(n, "data_mask", &dt2, &rank, d)) ||
		    !param_shape(n, "scale", &dt2, &r2, g) || r2 != rank)
			return false;
		granularity(gran, sizeof gran, rank, d, g, false);
		snprintf(buf, cap, "%s%s %s%s", sparse ? "sparse " : "", al_dtype_name(dt), gran,
			 ali_mil_param_present(n, "offset") ? " with offset" : "");
		return true;
	}
	if (strcmp(t, "constexpr_lut_to_dense") == 0 || strcmp(t, "constexpr_lut_to_sparse") == 0) {
		bool sparse = strcmp(t, "constexpr_lut_to_sparse") == 0;
		if (!param_shape(n, sparse ? "indices_mask" : "indices", &dt, &rank, d) ||
		    !param_shape(n, "lut", &dt2, &r2, g))
			return false;
		if (r2 == 1) { /* iOS16: a 1-D lut of 2^bits entries */
			int bits = 0;
			while (bits < 9 && ((int64_t)1 << bits) < g[0])
				bits++;
			snprintf(buf, cap, "%d-bit LUT per-tensor", bits);
			return true;
		}
		if (r2 != rank + 2)
			return false;
		int bits = 0;
		while (bits < 9 && ((int64_t)1 << bits) < g[r2 - 2])
			bits++;
		granularity(gran, sizeof gran, rank, d, g, true);
		int n_len = snprintf(buf, cap, "%s%d-bit LUT %s", sparse ? "sparse " : "", bits, gran);
		if (g[r2 - 1] > 1 && n_len > 0 && (size_t)n_len < cap)
			snprintf(buf + n_len, cap - (size_t)n_len, ", vector %lld", (long long)g[r2 - 1]);
		return true;
	}
	if (strcmp(t, "constexpr_sparse_to_dense") == 0) {
		if (!param_shape(n, "nonzero_data", &dt, &rank, d))
			return false;
		snprintf(buf, cap, "sparse %s (bit mask)", al_dtype_name(dt));
		return true;
	}
	if (strcmp(t, "constexpr_cast") == 0) {
		if (!param_shape(n, "source_val", &dt, &rank, d))
			return false;
		snprintf(buf, cap, "%s widened (constexpr_cast)", al_dtype_name(dt));
		return true;
	}
	return false;
}
