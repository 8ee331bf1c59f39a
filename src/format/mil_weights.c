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

int ali_mil_dtype_bits(int dt)
{
	switch (dt) {
	case AL_DT_UINT1: return 1;
	case AL_DT_UINT2: return 2;
	case AL_DT_UINT3: return 3;
	case AL_DT_INT4: case AL_DT_UINT4: return 4;
	case AL_DT_UINT6: return 6;
	case AL_DT_INT8: case AL_DT_UINT8: case AL_DT_FP8E4M3: case AL_DT_FP8E5M2: return 8;
	case AL_DT_INT16: case AL_DT_UINT16: case AL_DT_FP16: case AL_DT_BF16: return 16;
	case AL_DT_INT32: case AL_DT_UINT32: case AL_DT_FP32: return 32;
	default: return 0;
	}
}

/* Granularity of per-axis groups g[] over dims d[] (rank r): per-tensor (all 1),
 * per-channel (one axis whole), per-grouped-channel (one axis in groups), or
 * per-block (the block size along the axis that is split). */
static void granularity(struct ali_weight_form *w, int r, const int64_t *d, const int64_t *g, bool lut)
{
	int split = 0, axis = -1;
	for (int i = 0; i < r; i++)
		if (g[i] > 1) {
			split++;
			axis = i;
		}
	if (split == 0) {
		w->gran = ALI_GRAN_TENSOR;
	} else if (split == 1 && g[axis] == d[axis]) {
		w->gran = ALI_GRAN_CHANNEL;
		w->axis = axis;
	} else if (split == 1 && lut) {
		w->gran = ALI_GRAN_GROUPED;
		w->axis = axis;
		w->size = d[axis] / g[axis];
	} else {
		/* per-block: the block along the last split axis whose groups are not whole */
		int b = -1;
		for (int i = r - 1; i >= 0 && b < 0; i--)
			if (g[i] > 1 && g[i] != d[i])
				b = i;
		if (b < 0)
			b = axis;
		w->gran = ALI_GRAN_BLOCK;
		w->axis = b;
		w->size = d[b] / (g[b] ? g[b] : 1);
	}
}

bool ali_mil_weight_info(const struct al_node *n, struct ali_weight_form *w)
{
	int dt = 0, rank = 0, dt2 = 0, r2 = 0;
	int64_t d[AL_SHAPE_MAX_RANK], d2[AL_SHAPE_MAX_RANK], g[AL_SHAPE_MAX_RANK];
	const char *t = n->type ? n->type : "";
	memset(w, 0, sizeof *w);
	w->axis = -1;
	if (strcmp(t, "constexpr_affine_dequantize") == 0) {
		if (!param_shape(n, "quantized_data", &dt, &rank, d) ||
		    !param_shape(n, "scale", &dt2, &r2, d2))
			return false;
		size_t cnt = 1;
		for (int i = 0; i < r2; i++)
			cnt *= (size_t)(d2[i] > 0 ? d2[i] : 1);
		w->storage = ALI_WS_AFFINE;
		w->dtype = dt;
		w->bits = ali_mil_dtype_bits(dt);
		w->gran = cnt > 1 ? ALI_GRAN_CHANNEL : ALI_GRAN_TENSOR;
		return true;
	}
	if (strcmp(t, "constexpr_blockwise_shift_scale") == 0 ||
	    strcmp(t, "constexpr_sparse_blockwise_shift_scale") == 0) {
		w->sparse = t[10] == 's';
		if (!param_shape(n, w->sparse ? "nonzero_data" : "data", &dt, &rank, d) ||
		    (w->sparse && !param_shape(n, "data_mask", &dt2, &rank, d)) ||
		    !param_shape(n, "scale", &dt2, &r2, g) || r2 != rank)
			return false;
		w->storage = ALI_WS_BLOCKWISE;
		w->dtype = dt;
		w->bits = ali_mil_dtype_bits(dt);
		w->offset = ali_mil_param_present(n, "offset");
		granularity(w, rank, d, g, false);
		return true;
	}
	if (strcmp(t, "constexpr_lut_to_dense") == 0 || strcmp(t, "constexpr_lut_to_sparse") == 0) {
		w->sparse = strcmp(t, "constexpr_lut_to_sparse") == 0;
		if (!param_shape(n, w->sparse ? "indices_mask" : "indices", &dt, &rank, d) ||
		    !param_shape(n, "lut", &dt2, &r2, g))
			return false;
		w->storage = ALI_WS_LUT;
		w->dtype = dt2; /* the table's entries */
		if (r2 == 1) { /* iOS16: a 1-D lut of 2^bits entries */
			while (w->bits < 9 && ((int64_t)1 << w->bits) < g[0])
				w->bits++;
			w->gran = ALI_GRAN_TENSOR;
			return true;
		}
		if (r2 != rank + 2)
			return false;
		while (w->bits < 9 && ((int64_t)1 << w->bits) < g[r2 - 2])
			w->bits++;
		granularity(w, rank, d, g, true);
		w->vector = g[r2 - 1] > 1 ? g[r2 - 1] : 0;
		return true;
	}
	if (strcmp(t, "constexpr_sparse_to_dense") == 0) {
		if (!param_shape(n, "nonzero_data", &dt, &rank, d))
			return false;
		w->storage = ALI_WS_SPARSE;
		w->sparse = true;
		w->dtype = dt;
		w->bits = ali_mil_dtype_bits(dt);
		return true;
	}
	if (strcmp(t, "constexpr_cast") == 0) {
		if (!param_shape(n, "source_val", &dt, &rank, d))
			return false;
		w->storage = ALI_WS_CAST;
		w->dtype = dt;
		w->bits = ali_mil_dtype_bits(dt);
		return true;
	}
	return false;
}

const char *ali_weight_storage_name(int storage)
{
	static const char *const names[] = {"none", "affine", "blockwise", "lut", "sparse", "cast"};
	return storage >= 0 && storage < (int)(sizeof names / sizeof *names) ? names[storage] : "none";
}

const char *ali_weight_gran_name(int gran)
{
	static const char *const names[] = {"", "per-tensor", "per-channel", "per-grouped-channel",
					    "per-block"};
	return gran >= 0 && gran < (int)(sizeof names / sizeof *names) ? names[gran] : "";
}

/* "per-block (block 32)", "per-channel (axis 0)", "per-grouped-channel (group 8)" */
static void gran_words(const struct ali_weight_form *w, char *buf, size_t cap)
{
	const char *g = ali_weight_gran_name(w->gran);
	if (w->gran == ALI_GRAN_CHANNEL && w->axis >= 0)
		snprintf(buf, cap, "%s (axis %d)", g, w->axis);
	else if (w->gran == ALI_GRAN_GROUPED)
		snprintf(buf, cap, "%s (group %lld)", g, (long long)w->size);
	else if (w->gran == ALI_GRAN_BLOCK)
		snprintf(buf, cap, "%s (block %lld)", g, (long long)w->size);
	else
		snprintf(buf, cap, "%s", g);
}

bool ali_mil_weight_form(const struct al_node *n, char *buf, size_t cap)
{
	struct ali_weight_form w;
	char gran[64];
	if (!ali_mil_weight_info(n, &w))
		return false;
	gran_words(&w, gran, sizeof gran);
	switch (w.storage) {
	case ALI_WS_AFFINE:
		snprintf(buf, cap, "%s %s (affine)", al_dtype_name(w.dtype), ali_weight_gran_name(w.gran));
		break;
	case ALI_WS_BLOCKWISE:
		snprintf(buf, cap, "%s%s %s%s", w.sparse ? "sparse " : "", al_dtype_name(w.dtype), gran,
			 w.offset ? " with offset" : "");
		break;
	case ALI_WS_LUT: {
		int k = snprintf(buf, cap, "%s%d-bit LUT %s", w.sparse ? "sparse " : "", w.bits, gran);
		if (w.vector && k > 0 && (size_t)k < cap)
			snprintf(buf + k, cap - (size_t)k, ", vector %lld", (long long)w.vector);
		break;
	}
	case ALI_WS_SPARSE:
		snprintf(buf, cap, "sparse %s (bit mask)", al_dtype_name(w.dtype));
		break;
	default:
		snprintf(buf, cap, "%s widened (constexpr_cast)", al_dtype_name(w.dtype));
		break;
	}
	return true;
}
