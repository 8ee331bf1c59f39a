/* SPDX-License-Identifier: MIT */
/* rule_ctx.c: the helpers predicates share (rules.h): writing reasons, finding
 * producers and features, reading flags and shapes. */
#include "rules.h"

#include <stdarg.h>
#include <string.h>

/* ================================================================ helpers for predicates */

bool ali_rx_say(char *reason, size_t cap, const char *fmt, ...)
{
	if (!reason || cap == 0)
		return true;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, cap, fmt, ap);
	va_end(ap);
	return true;
}

static const char *join(char *buf, size_t cap, const int64_t *v, size_t n, const char *open,
			const char *sep, const char *close)
{
	size_t len = 0;
	int k = snprintf(buf, cap, "%s", open);
	len = k > 0 ? (size_t)k : 0;
	for (size_t i = 0; i < n && i < AL_RX_MAX_DIMS && len < cap; i++) {
		k = snprintf(buf + len, cap - len, "%s%lld", i ? sep : "", (long long)v[i]);
		if (k < 0)
			break;
		len += (size_t)k;
	}
	if (n > AL_RX_MAX_DIMS && len < cap) {
		k = snprintf(buf + len, cap - len, "%s...", sep);
		len += k > 0 ? (size_t)k : 0;
	}
	if (len < cap)
		snprintf(buf + len, cap - len, "%s", close);
	return buf;
}

const char *ali_rx_ints(char *buf, size_t cap, const int64_t *v, size_t n)
{
	return join(buf, cap, v, n, "[", ",", "]");
}

const char *ali_rx_dims(char *buf, size_t cap, const int64_t *v, size_t n)
{
	return join(buf, cap, v, n, "", "x", "");
}

static bool has_output(const struct al_node *x, const char *name)
{
	for (uint32_t k = 0; k < x->n_outputs; k++)
		if (x->outputs[k] && strcmp(x->outputs[k], name) == 0)
			return true;
	return false;
}

const struct al_node *ali_rx_producer(const struct al_node *n, const char *name)
{
	if (!n || !name)
		return NULL;
	/* n's own graph up to n, then each enclosing graph up to the node that owns
	 * the body; the depth of the chain is bounded by the loaders. */
	const struct al_graph *g = n->owner;
	const struct al_node *upto = n;
	/* At most PRODUCER_WINDOW layers back per graph: producers are nearly always
	 * a few layers back, and a bound keeps a file of 10^6 layers that name no
	 * producer from costing 10^12 comparisons. Farther producers count as unknown,
	 * so the rules that ask (ANE011, ANE013) stay silent rather than guess. */
	enum { PRODUCER_WINDOW = 256 };
	for (int guard = 0; g && guard <= AL_MAX_DEPTH; guard++) {
		if (upto >= g->nodes && upto < g->nodes + g->n_nodes) {
			const struct al_node *stop =
				upto - g->nodes > PRODUCER_WINDOW ? upto - PRODUCER_WINDOW : g->nodes;
			for (const struct al_node *x = upto; x-- > stop;)
				if (has_output(x, name))
					return x;
		}
		upto = g->parent_node;
		g = g->parent;
	}
	return NULL;
}

static const struct al_feature *find_feature(const struct al_feature *f, uint32_t n,
					     const char *name)
{
	if (!name)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		if (f[i].name && strcmp(f[i].name, name) == 0)
			return &f[i];
	return NULL;
}

const struct al_feature *ali_rx_input(const struct al_submodel *s, const char *name)
{
	return s ? find_feature(s->inputs, s->n_inputs, name) : NULL;
}

const struct al_feature *ali_rx_output(const struct al_submodel *s, const char *name)
{
	return s ? find_feature(s->outputs, s->n_outputs, name) : NULL;
}

unsigned ali_rx_nn_flags(const struct al_node *n)
{
	return n->kind >= 0 && (size_t)n->kind < ali_nn_kinds_count ? ali_nn_kinds[n->kind].flags : 0;
}


bool ali_rx_type_in(const struct al_node *n, const char *const *names)
{
	if (!n->type)
		return false;
	for (; *names; names++)
		if (ali_str_eq(n->type, *names))
			return true;
	return false;
}

/* ================================================================ shapes for predicates */

bool ali_rx_ttype_shape(const struct al_ttype *t, struct al_shape *out)
{
	if (!t || t->kind != 0 || t->rank < 0)
		return false;
	memset(out, 0, sizeof *out);
	out->rank = t->rank;
	out->dtype = t->dtype;
	for (int i = 0; i < AL_SHAPE_MAX_RANK; i++)
		out->dims[i] = i < t->rank && t->dims && t->dims[i] >= 0 ? t->dims[i] : AL_DIM_UNKNOWN;
	return true;
}

bool ali_rx_out_shape(const struct al_node *n, uint32_t i, struct al_shape *out)
{
	if (!n || i >= n->n_outputs)
		return false;
	if (n->out_shapes && n->out_shapes[i].rank >= 0) {
		*out = n->out_shapes[i];
		return true;
	}
	return n->out_types && ali_rx_ttype_shape(&n->out_types[i], out);
}

bool ali_rx_in_shape(const struct al_node *n, uint32_t i, struct al_shape *out)
{
	if (!n || i >= n->n_inputs)
		return false;
	const struct al_shape *sh = ali_node_in_shape(n, i);
	if (sh && sh->rank >= 0) {
		*out = *sh;
		return true;
	}
	const struct al_node_src *src = al_src(n);
	return src && src->mil_scope && ali_rx_ttype_shape(ali_mil_value_type(n, n->inputs[i]), out);
}

bool ali_rx_shape_known(const struct al_shape *s)
{
	if (!s || s->rank < 0 || s->rank > AL_SHAPE_MAX_RANK)
		return false;
	for (int i = 0; i < s->rank; i++)
		if (s->dims[i] < 0)
			return false;
	return true;
}

const char *ali_rx_shape_str(char *buf, size_t cap, const struct al_shape *s)
{
	if (!buf || cap == 0)
		return "";
	if (!s || s->rank < 0) {
		snprintf(buf, cap, "[?]");
		return buf;
	}
	size_t len = 0;
	int k = snprintf(buf, cap, "[");
	len = k > 0 ? (size_t)k : 0;
	for (int i = 0; i < s->rank && len < cap; i++) {
		const char *sep = i ? "," : "";
		if (i >= AL_SHAPE_MAX_RANK) {
			k = snprintf(buf + len, cap - len, "%s...", sep);
			len += k > 0 ? (size_t)k : 0;
			break;
		}
		if (s->dims[i] < 0)
			k = snprintf(buf + len, cap - len, "%s?", sep);
		else
			k = snprintf(buf + len, cap - len, "%s%lld", sep, (long long)s->dims[i]);
		len += k > 0 ? (size_t)k : 0;
	}
	if (len < cap)
		snprintf(buf + len, cap - len, "]");
	return buf;
}

unsigned ali_rx_elem_bytes(int dtype)
{
	switch (dtype) {
	case AL_DT_INT8: case AL_DT_UINT8: case AL_DT_BOOL:
		return 1;
	}
	return 2;
}


uint64_t ali_rx_weights_total(const struct al_weight_stats *w)
{
	uint64_t total = w->fp32;
	uint64_t parts[3] = {w->fp16, w->quantized, w->other};
	for (int i = 0; i < 3; i++)
		total = total > UINT64_MAX - parts[i] ? UINT64_MAX : total + parts[i];
	return total;
}
