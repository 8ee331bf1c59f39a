/* SPDX-License-Identifier: MIT */
/* rules_mil.c: the predicates of the ML Program rules (ANE020-039, 060, 063-064 in
 * rules.def). Each reads one non-const op: its type (the op table row and flags),
 * its declared and inferred shapes, the target's caps and features, and constant
 * parameters through the MIL value access of model.h (al_mil_param_*). Values
 * that are not constants leave a rule undecided rather than guessed.
 */
#include "rules.h"
#include "mil_fields.h"

#include <math.h>
#include <string.h>

/* ================================================================ helpers */

/* Whether n is an op of kind k (AL_MILK_*). */
static bool is_kind(const struct al_node *n, int k)
{
	return n->kind == k;
}

/* Integer parameter values into out[max]; how many were stored (at most max),
 * 0 when absent or not constant. */
static size_t param_ints(const struct al_node *n, const char *param, int64_t *out, size_t max)
{
	long k = ali_mil_param_ints(n, param, out, max);
	if (k <= 0)
		return 0;
	return (size_t)k < max ? (size_t)k : max;
}

/* A parameter holding exactly one integer (a hostile file may give a list). */
static bool param_int(const struct al_node *n, const char *param, int64_t *out)
{
	return ali_mil_param_ints(n, param, out, 1) == 1;
}

/* One numeric parameter as a double (float or integer typed); false if absent. */
static bool param_number(const struct al_node *n, const char *param, double *out)
{
	if (ali_mil_param_floats(n, param, out, 1) > 0)
		return true;
	int64_t v;
	if (ali_mil_param_ints(n, param, &v, 1) > 0) {
		*out = (double)v;
		return true;
	}
	return false;
}

/* The declared type of output i, or NULL. */
static const struct al_ttype *out_type(const struct al_node *n, uint32_t i)
{
	return n->out_types && i < n->n_outputs ? &n->out_types[i] : NULL;
}

static const char *out_name(const struct al_node *n, uint32_t i)
{
	return i < n->n_outputs && n->outputs[i] ? n->outputs[i] : "?";
}

/* The value name bound to `param` of n (its first Binding, when that is a
 * name rather than a literal), copied into buf; NULL if none. n->inputs lists
 * every bound name but in map order, not per parameter. */
static const char *param_name(const struct al_node *n, const char *param, char *buf, size_t cap)
{
	const struct al_node_src *src = al_src(n);
	if (!src || !param || cap == 0)
		return NULL;
	for (uint32_t i = src->n_mil_args; i-- > 0;) { /* the last map entry wins */
		if (!src->mil_args[i].param || strcmp(src->mil_args[i].param, param) != 0)
			continue;
		al_span name;
		if (!ali_mil_arg_binding_name(src->mil_args[i].arg, &name) || name.n == 0 || name.n >= cap)
			return NULL;
		memcpy(buf, name.p, name.n);
		buf[name.n] = '\0';
		return buf;
	}
	return NULL;
}

/* Whether value `name` seen from n is an input of the function (top-level
 * graph, no producing op, and either a described model input or, for models
 * without a description, simply unproduced). */
static bool is_function_input(const struct al_node *n, const struct al_submodel *s,
			      const char *name)
{
	if (!name || !n->owner || n->owner->depth != 0)
		return false;
	if (ali_mil_producer(n, name))
		return false;
	return s->n_inputs == 0 || ali_rx_input(s, name) != NULL;
}

/* ================================================================ ANE020-023: op types */

bool ali_rp_mil_cpu_only(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!(ali_rx_mil_flags(n) & AL_OPF_CPU_ONLY))
		return false;
	int64_t axis;
	if (is_kind(n, AL_MILK_cumsum) && param_int(n, "axis", &axis))
		return ali_rx_say(reason, cap, "cumsum (axis %lld) runs on the CPU", (long long)axis);
	return ali_rx_say(reason, cap, "%s runs on the CPU", n->type);
}

bool ali_rp_mil_recurrent(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!(ali_rx_mil_flags(n) & AL_OPF_RNN))
		return false;
	char dir[32];
	if (ali_mil_param_string(n, "direction", dir, sizeof dir) && dir[0])
		return ali_rx_say(reason, cap, "%s (direction %s) runs step by step on the CPU",
				 n->type, dir);
	return ali_rx_say(reason, cap, "%s runs step by step on the CPU", n->type);
}

bool ali_rp_mil_gather(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!(ali_rx_mil_flags(n) & AL_OPF_GATHER))
		return false;
	int64_t axis;
	bool konst = ali_mil_param_is_const(n, "indices");
	if (!is_kind(n, AL_MILK_gather_nd) && param_int(n, "axis", &axis))
		return ali_rx_say(reason, cap, "%s axis %lld by %s indices", n->type, (long long)axis,
				 konst ? "constant" : "runtime");
	return ali_rx_say(reason, cap, "%s by %s indices", n->type, konst ? "constant" : "runtime");
}

/* attributes[key] of op n as a string (Value.immediateValue.tensor.strings[0]),
 * the way converters store custom_layer's class_name; false if absent. */
static bool attr_string(const struct al_node *n, const char *key, char *out, size_t cap)
{
	const struct al_node_src *src = al_src(n);
	if (!src || cap == 0)
		return false;
	struct ali_mil_attr_iter it;
	bool found = false;
	al_span k, v, str;
	ali_mil_attr_begin(n, &it);
	while (ali_mil_attr_next(&it, &k, &v)) {
		if (!ali_span_eq(k, key))
			continue;
		if (ali_mil_value_string(v, &str) && str.n < cap) {
			memcpy(out, str.p, str.n);
			out[str.n] = '\0';
			found = true;
		}
	}
	return found;
}

bool ali_rp_mil_custom(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!(ali_rx_mil_flags(n) & AL_OPF_CUSTOM))
		return false;
	char cls[96];
	if ((attr_string(n, "class_name", cls, sizeof cls) ||
	     ali_mil_param_string(n, "class_name", cls, sizeof cls)) && cls[0])
		return ali_rx_say(reason, cap, "custom_layer class_name '%s'", cls);
	return ali_rx_say(reason, cap, "custom_layer (app code)");
}

/* ================================================================ ANE024-028: parameters */

bool ali_rp_mil_dilated_conv(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!(ali_rx_mil_flags(n) & AL_OPF_CONV))
		return false;
	int64_t d[AL_RX_MAX_DIMS];
	size_t k = param_ints(n, "dilations", d, AL_RX_MAX_DIMS);
	for (size_t i = 0; i < k; i++) {
		if (d[i] > 1) {
			char b[96];
			return ali_rx_say(reason, cap, "%s dilations %s", n->type,
					 ali_rx_ints(b, sizeof b, d, k));
		}
	}
	return false;
}

bool ali_rp_mil_pool_kernel(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!(ali_rx_mil_flags(n) & AL_OPF_POOL))
		return false;
	int64_t k[AL_RX_MAX_DIMS];
	size_t nk = param_ints(n, "kernel_sizes", k, AL_RX_MAX_DIMS);
	for (size_t i = 0; i < nk; i++) {
		if (k[i] > 13) {
			char b[96];
			return ali_rx_say(reason, cap, "%s kernel_sizes %s > 13", n->type,
					 ali_rx_dims(b, sizeof b, k, nk));
		}
	}
	return false;
}

bool ali_rp_mil_pool_stride(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!(ali_rx_mil_flags(n) & AL_OPF_POOL))
		return false;
	int64_t st[AL_RX_MAX_DIMS];
	size_t ns = param_ints(n, "strides", st, AL_RX_MAX_DIMS);
	for (size_t i = 0; i < ns; i++) {
		if (st[i] > 2 && st[i] != 4) {
			char b[96];
			return ali_rx_say(reason, cap, "%s strides %s (ANE: 1, 2 or 4)", n->type,
					 ali_rx_dims(b, sizeof b, st, ns));
		}
	}
	return false;
}

bool ali_rp_mil_upsample(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!is_kind(n, AL_MILK_upsample_nearest_neighbor) && !is_kind(n, AL_MILK_upsample_bilinear))
		return false;
	double h = 1.0, w = 1.0; /* both default to 1 */
	param_number(n, "scale_factor_height", &h);
	param_number(n, "scale_factor_width", &w);
	bool bad = h > 2.0 || w > 2.0 || h != floor(h) || w != floor(w);
	if (!bad)
		return false;
	return ali_rx_say(reason, cap, "%s scale factors %gx%g (only 2 is supported)", n->type, h, w);
}

bool ali_rp_mil_conv_width(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!is_kind(n, AL_MILK_conv) && !is_kind(n, AL_MILK_conv_transpose))
		return false;
	const struct al_ttype *t = ali_mil_param_type(n, "weight");
	if (!t || t->rank < 3 || !t->dims)
		return false;
	int64_t kw = t->dims[t->rank - 1]; /* [Cout, Cin/groups, (kD,) kH, kW] */
	if (kw <= (int64_t)c->t->conv_kw_cap)
		return false;
	char b[160];
	return ali_rx_say(reason, cap, "%s kernel width %lld > %u on %s (weight %s)", n->type,
			 (long long)kw, c->t->conv_kw_cap, c->t->id,
			 ali_rx_ints(b, sizeof b, t->dims, (size_t)t->rank));
}

/* ================================================================ ANE029-032: tensor types */

/* A cast at the model boundary, converting to or from fp32: ANE030's case. */
static bool io_cast(const struct al_node *n, const struct al_submodel *s, char *reason, size_t cap)
{
	if (!is_kind(n, AL_MILK_cast))
		return false;
	char xb[AL_MAX_NAME + 1];
	const char *x = param_name(n, "x", xb, sizeof xb);
	const struct al_ttype *in = ali_mil_param_type(n, "x");
	const struct al_ttype *out = out_type(n, 0);
	if (in && in->dtype == AL_DT_FP32 && is_function_input(n, s, x))
		return ali_rx_say(reason, cap, "cast of fp32 model input '%s' to %s", x,
				 out ? al_dtype_name(out->dtype) : "?");
	if (out && out->dtype == AL_DT_FP32 && n->owner && n->owner->depth == 0 &&
	    ali_rx_output(s, out_name(n, 0)))
		return ali_rx_say(reason, cap, "cast of %s to fp32 model output '%s'",
				 in ? al_dtype_name(in->dtype) : "?", out_name(n, 0));
	return false;
}

bool ali_rp_mil_io_cast(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	const struct al_submodel *s = c->s;
	return io_cast(n, s, reason, cap);
}

/* cond / while_loop outputs are values computed by the ops of their blocks,
 * which carry their own verdicts: the tensor-type rules skip them. */
static bool typed_op(const struct al_node *n)
{
	return !(ali_rx_mil_flags(n) & AL_OPF_CONTROL);
}

bool ali_rp_mil_fp32(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	const struct al_submodel *s = c->s;
	for (uint32_t i = 0; typed_op(n) && i < n->n_outputs; i++) {
		const struct al_ttype *t = out_type(n, i);
		if (!t || t->kind != 0 || t->dtype != AL_DT_FP32)
			continue;
		if (io_cast(n, s, NULL, 0))
			return false; /* reported by ANE030 */
		return ali_rx_say(reason, cap, "output '%s' is fp32", out_name(n, i));
	}
	/* the cast that closes an fp32 island reads fp32: it is one of the island's
	 * invalid ops (Apple coreai-models rules: cast, swish, cast = "3 invalid ops";
	 * smpanaro: the cast back after an fp32 mask add ran on the CPU) */
	if (typed_op(n) && is_kind(n, AL_MILK_cast) && !io_cast(n, s, NULL, 0)) {
		char xb[AL_MAX_NAME + 1];
		const char *x = param_name(n, "x", xb, sizeof xb);
		const struct al_ttype *in = ali_mil_param_type(n, "x");
		if (in && in->kind == 0 && in->dtype == AL_DT_FP32)
			return ali_rx_say(reason, cap, "cast of fp32 '%s' back to %s closes an fp32 island",
					 x, out_type(n, 0) ? al_dtype_name(out_type(n, 0)->dtype) : "?");
	}
	return false;
}

bool ali_rp_mil_int_tensor(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	for (uint32_t i = 0; typed_op(n) && i < n->n_outputs; i++) {
		const struct al_ttype *t = out_type(n, i);
		if (!t || t->kind != 0)
			continue;
		if (t->dtype == AL_DT_INT32 || t->dtype == AL_DT_INT64 || t->dtype == AL_DT_UINT32 ||
		    t->dtype == AL_DT_UINT64)
			return ali_rx_say(reason, cap, "output '%s' is %s", out_name(n, i),
					 al_dtype_name(t->dtype));
	}
	return false;
}

bool ali_rp_mil_rank(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	for (uint32_t i = 0; typed_op(n) && i < n->n_outputs; i++) {
		const struct al_ttype *t = out_type(n, i);
		char b[160];
		if (t && t->kind == 0 && t->rank > 5)
			return ali_rx_say(reason, cap, "output '%s' has rank %d > 5 (shape %s)",
					 out_name(n, i), t->rank,
					 t->dims ? ali_rx_ints(b, sizeof b, t->dims, (size_t)t->rank)
						 : "?");
		struct al_shape sh; /* declared rank unknown: the inferred one */
		if ((!t || t->rank < 0) && ali_rx_out_shape(n, i, &sh) && sh.rank > 5)
			return ali_rx_say(reason, cap, "output '%s' has rank %d > 5 (inferred %s)",
					 out_name(n, i), sh.rank, ali_rx_shape_str(b, sizeof b, &sh));
	}
	return false;
}

/* ================================================================ ANE033-037: ops without an ANE path */

bool ali_rp_mil_control_flow(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	unsigned f = ali_rx_mil_flags(n);
	if (f & AL_OPF_CONTROL)
		return ali_rx_say(reason, cap, "%s is run-time control flow (%u nested block%s)", n->type,
				 n->n_sub, n->n_sub == 1 ? "" : "s");
	if (f & AL_OPF_LIST)
		return ali_rx_say(reason, cap, "%s operates on a dynamic list", n->type);
	return false;
}

bool ali_rp_mil_no_lowering(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	static const char *const types[] = {
		"reduce_prod", "non_zero", "sliding_windows", "one_hot", "band_part", "mod",
		"logical_and", "logical_or", "logical_xor", "acos", "asin", "asinh", "acosh",
		"atanh", "cosh", "sinh", "tan", "shape", "reverse_sequence", NULL};
	unsigned f = ali_rx_mil_flags(n);
	if (n->kind < 0 || (f & AL_OPF_CONST) ||
	    !((f & (AL_OPF_SCATTER | AL_OPF_RANDOM)) || ali_rx_type_in(n, types)))
		return false;
	return ali_rx_say(reason, cap, "%s has no ANE lowering", n->type);
}

bool ali_rp_mil_sort(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!(ali_rx_mil_flags(n) & AL_OPF_SORT))
		return false;
	int64_t k;
	if (is_kind(n, AL_MILK_topk) && param_int(n, "k", &k))
		return ali_rx_say(reason, cap, "topk k=%lld leaves the ANE", (long long)k);
	return ali_rx_say(reason, cap, "%s leaves the ANE", n->type);
}

bool ali_rp_mil_norm_eps(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!is_kind(n, AL_MILK_layer_norm) && !is_kind(n, AL_MILK_batch_norm) && !is_kind(n, AL_MILK_instance_norm))
		return false;
	const struct al_ttype *t = out_type(n, 0);
	if (!t || t->dtype != AL_DT_FP16)
		return false;
	double eps;
	if (!param_number(n, "epsilon", &eps) || isnan(eps) || !(eps < 1e-7))
		return false; /* absent: the MIL default 1e-5 */
	return ali_rx_say(reason, cap, "%s epsilon %g < 1e-7 in fp16", n->type, eps);
}

bool ali_rp_mil_classify(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!is_kind(n, AL_MILK_classify))
		return false;
	return ali_rx_say(reason, cap, "classify maps probabilities to labels on the CPU");
}

/* ================================================================ ANE060: channel-broadcast mul */

/* The shape of the value bound to `param`: inferred, else declared. */
static bool param_shape(const struct al_node *n, const char *param, struct al_shape *out)
{
	return ali_mil_param_shape(n, param, out) ||
	       ali_rx_ttype_shape(ali_mil_param_type(n, param), out);
}

/* Dim i from the end (1 = last), known and not flexible; -1 otherwise. */
static int64_t tail_dim(const struct al_shape *s, int i)
{
	int k = s->rank - i;
	if (k < 0 || k >= AL_SHAPE_MAX_RANK || ((s->flex >> k) & 1u))
		return -1;
	return s->dims[k];
}

/* full is [..., C, H, W] with H or W > 1, vec is [(1, ...,) C, 1, 1] with C > 1. */
static bool chw_by_c11(const struct al_shape *full, const struct al_shape *vec)
{
	if (full->rank < 3 || vec->rank < 3 || full->rank > AL_SHAPE_MAX_RANK ||
	    vec->rank > AL_SHAPE_MAX_RANK)
		return false;
	int64_t c = tail_dim(vec, 3);
	if (c <= 1 || tail_dim(vec, 2) != 1 || tail_dim(vec, 1) != 1 || tail_dim(full, 3) != c)
		return false;
	int64_t h = tail_dim(full, 2), w = tail_dim(full, 1);
	if (h < 1 || w < 1 || (h == 1 && w == 1))
		return false;
	for (int i = 4; i <= vec->rank; i++) /* vec's leading axes broadcast only as 1s */
		if (tail_dim(vec, i) != 1)
			return false;
	return true;
}

bool ali_rp_mil_channel_mul(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!is_kind(n, AL_MILK_mul))
		return false;
	struct al_shape x, y;
	if (!param_shape(n, "x", &x) || !param_shape(n, "y", &y))
		return false;
	for (int swap = 0; swap < 2; swap++) {
		const struct al_shape *full = swap ? &y : &x, *vec = swap ? &x : &y;
		const char *vparam = swap ? "x" : "y";
		if (ali_mil_param_is_const(n, vparam) || !chw_by_c11(full, vec))
			continue;
		char a[96], b[96], nb[AL_MAX_NAME + 1];
		const char *vname = param_name(n, vparam, nb, sizeof nb);
		return ali_rx_say(reason, cap, "mul of %s by non-constant %s '%s'",
				 ali_rx_shape_str(a, sizeof a, full), ali_rx_shape_str(b, sizeof b, vec),
				 vname ? vname : "?");
	}
	return false;
}

/* ================================================================ ANE063-064: family-gated ops */

bool ali_rp_mil_trig(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if ((!is_kind(n, AL_MILK_sin) && !is_kind(n, AL_MILK_cos)) || (c->t->features & AL_TF_TRIG))
		return false;
	return ali_rx_say(reason, cap, "%s: no native sin/cos before H15 (target %s, %s)", n->type,
			 c->t->id, c->t->arch);
}

bool ali_rp_mil_texture(const struct al_rctx *c, char *reason, size_t cap)
{
	static const char *const types[] = {"crop_resize", "resample", "affine", NULL};
	const struct al_node *n = c->n;
	if (!ali_rx_type_in(n, types) || (c->t->features & AL_TF_TEXTURE))
		return false;
	return ali_rx_say(reason, cap, "%s needs the texture engine of H14+ (target %s, %s)", n->type,
			 c->t->id, c->t->arch);
}

bool ali_rp_mil_resample(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!is_kind(n, AL_MILK_resample))
		return false;
	return ali_rx_say(reason, cap, "resample (grid_sample) on %s under %s: off the ANE there",
			 c->t->name, ali_rx_os(c)->name);
}

bool ali_rp_mil_softplus(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	if (!is_kind(n, AL_MILK_softplus))
		return false;
	return ali_rx_say(reason, cap, "softplus on %s: reported on the CPU", c->t->name);
}

/* The granularity of constexpr_blockwise_shift_scale op q from its data and
 * scale shapes: "per-block" when on some axis the scale has more than one and
 * fewer than the data's entries (a block is a run of more than one element),
 * else "per-channel" / "per-tensor"; NULL when a shape is unknown. */
static const char *quant_granularity(const struct al_node *q, int64_t *block, int *axis, int *dtype)
{
	struct al_shape d, s;
	if (!ali_mil_param_shape(q, "data", &d) || !ali_mil_param_shape(q, "scale", &s) ||
	    d.rank < 0 || s.rank != d.rank)
		return NULL;
	*dtype = d.dtype;
	bool channel = false;
	for (int i = 0; i < d.rank; i++) {
		if (d.dims[i] < 0 || s.dims[i] < 0)
			return NULL;
		if (s.dims[i] > 1 && s.dims[i] < d.dims[i]) {
			*block = s.dims[i] ? d.dims[i] / s.dims[i] : 0;
			*axis = i;
			return "per-block";
		}
		channel |= s.dims[i] > 1;
	}
	return channel ? "per-channel" : "per-tensor";
}

/* The first input of n produced by an op of `type` (seen through nothing else). */
static const struct al_node *input_from(const struct al_node *n, int kind)
{
	for (uint32_t i = 0; i < n->n_inputs; i++) {
		const struct al_node *p = ali_mil_producer(n, n->inputs[i]);
		if (p && is_kind(p, kind))
			return p;
	}
	return NULL;
}

bool ali_rp_mil_block_quant(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	const struct al_node *q = input_from(n, AL_MILK_constexpr_blockwise_shift_scale);
	int64_t block = 0;
	int axis = -1, dtype = AL_DT_UNKNOWN;
	const char *g = q ? quant_granularity(q, &block, &axis, &dtype) : NULL;
	if (!g || strcmp(g, "per-block") != 0)
		return false;
	return ali_rx_say(reason, cap, "weight '%s' is %s per-block quantized (blocks of %lld along "
			 "axis %d): the ANE takes per-channel or per-tensor scales only",
			 q->name ? q->name : "?", dtype ? al_dtype_name(dtype) : "integer",
			 (long long)block, axis);
}

bool ali_rp_mil_lut_channel_scale(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	const struct al_node *q = input_from(n, AL_MILK_constexpr_blockwise_shift_scale);
	if (!q || !input_from(q, AL_MILK_constexpr_lut_to_dense))
		return false;
	return ali_rx_say(reason, cap, "weight '%s' is palettized with a per-channel scale "
			 "(constexpr_lut_to_dense, then constexpr_blockwise_shift_scale): failed to "
			 "load on the ANE on %s", q->name ? q->name : "?", ali_rx_os(c)->name);
}

/* vx-lang/Vx #437: single-op SDPA sweeps put Q/K/V below about 2M elements on the CPU. */
#define SDPA_ANE_MIN_ELEMENTS (INT64_C(1) << 21)

bool ali_rp_mil_sdpa_small(const struct al_rctx *c, char *reason, size_t cap)
{
	const struct al_node *n = c->n;
	struct al_shape q;
	if (!is_kind(n, AL_MILK_scaled_dot_product_attention) || !ali_mil_param_shape(n, "query", &q) ||
	    q.rank < 1)
		return false;
	int64_t e = 1;
	for (int i = 0; i < q.rank; i++) {
		if (q.dims[i] < 0)
			return false;
		e *= q.dims[i];
	}
	if (e >= SDPA_ANE_MIN_ELEMENTS)
		return false;
	char b[96];
	return ali_rx_say(reason, cap, "scaled_dot_product_attention of a %s query (%lld elements < "
			 "2M): Core ML preferred the CPU for this little work",
			 ali_rx_shape_str(b, sizeof b, &q), (long long)e);
}
