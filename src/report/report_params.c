/* SPDX-License-Identifier: MIT */
/* report_params.c: a layer's or op's parameters in words, for the HTML graph's
 * node panel (kernel size, strides, dilation, groups, padding, channels, axes,
 * ...). NeuralNetwork layers: a table per kind of the fields of its params
 * message (numbers from coremltools' NeuralNetwork.proto as listed in
 * knowledge/coreml-format-facts.md section 5), and every weight site
 * (ali_nn_weight_sites) as its storage form and size. ML Program ops: every
 * parameter bound to a constant (a literal, or a const / constexpr_* op), short
 * values in full, tensors as dtype, shape and storage form. Weights are never
 * read: a weight's values are neither decoded nor shown. Text is what the model
 * says (a string parameter is any bytes): the sink escapes it. */
#include "report.h"
#include "pb.h"
#include "nn_params.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#define SHOWN_VALUES 16 /* a parameter with more values is shown as its type and count */

struct pbuf {
	char *p;
	size_t cap, len;
	unsigned lines;
};

/* Whether fmt has only %s, %ld, %lu, %lld, %llu (PRId64 / PRIu64) and %%. */
static bool simple_format(const char *f)
{
	for (; (f = strchr(f, '%')) != NULL; f++) {
		f++;
		if (*f == 's' || *f == '%')
			continue;
		f += f[0] == 'l' && f[1] == 'l';
		if (f[0] != 'l' || (f[1] != 'd' && f[1] != 'u'))
			return false;
		f++;
	}
	return true;
}

static void add_chars(struct pbuf *b, const char *s, size_t n)
{
	size_t room = b->cap - b->len - 1;
	n = n < room ? n : room;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

/* As snprintf into what is left of b (cut, NUL-terminated). The simple formats
 * (almost all: ~10 per layer for the HTML page's panel) without printf, which
 * is slow in the CLI's process (report_html.c's hput says why). */
static void add(struct pbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct pbuf *b, const char *fmt, ...)
{
	if (b->len + 1 >= b->cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	if (!simple_format(fmt)) {
		int k = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (k < 0)
			return;
		b->len += (size_t)k < b->cap - b->len ? (size_t)k : b->cap - b->len - 1;
		return;
	}
	for (const char *f = fmt; *f;) {
		const char *pc = strchr(f, '%');
		size_t lit = pc ? (size_t)(pc - f) : strlen(f);
		add_chars(b, f, lit);
		if (!pc)
			break;
		f = pc + 1;
		if (*f == 's') {
			const char *a = va_arg(ap, const char *);
			a = a ? a : "(null)";
			add_chars(b, a, strlen(a));
		} else if (*f == '%') {
			add_chars(b, "%", 1);
		} else {
			bool ll = f[1] == 'l';
			f += 1 + ll;
			unsigned long long u;
			bool neg = false;
			if (*f == 'd') {
				long long v = ll ? va_arg(ap, long long) : va_arg(ap, long);
				neg = v < 0;
				u = neg ? 0ull - (unsigned long long)v : (unsigned long long)v;
			} else {
				u = ll ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned long);
			}
			char d[24], *e = d + sizeof d, *q = e;
			do
				*--q = (char)('0' + u % 10);
			while (u /= 10);
			if (neg)
				*--q = '-';
			add_chars(b, q, (size_t)(e - q));
		}
		f++;
	}
	va_end(ap);
	b->p[b->len] = 0;
}

/* Text from the model (a parameter's name or string value): a newline, which
 * separates the lines here, written as the two characters \n; every other byte
 * is the sink's to escape. */
static void add_text(struct pbuf *b, const char *s)
{
	for (; *s && b->len + 3 < b->cap; s++) {
		if (*s == '\n') {
			b->p[b->len++] = '\\';
			b->p[b->len++] = 'n';
		} else {
			b->p[b->len++] = *s;
		}
	}
	b->p[b->len] = 0;
}

/* ================================================================ NeuralNetwork */

/* The `i`th of "A|B|C", or NULL. */
static bool enum_name(const char *names, uint64_t v, char *out, size_t cap)
{
	const char *p = names;
	for (uint64_t i = 0; p && i < v; i++) {
		p = strchr(p, '|');
		p = p ? p + 1 : NULL;
	}
	if (!p)
		return false;
	size_t len = strcspn(p, "|");
	snprintf(out, cap, "%.*s", (int)len, p);
	return true;
}

static void list_u(struct pbuf *b, const uint64_t *v, long n, bool sign)
{
	add(b, "[");
	for (long i = 0; i < n && i < SHOWN_VALUES; i++) {
		if (sign)
			add(b, "%s%" PRId64, i ? ", " : "", (int64_t)v[i]);
		else
			add(b, "%s%" PRIu64, i ? ", " : "", v[i]);
	}
	add(b, n > SHOWN_VALUES ? ", ... (%ld values)]" : "]", n);
}

static void nn_field(struct pbuf *b, al_span p, const struct ali_nn_pfield *f)
{
	uint64_t u;
	float x;
	uint64_t vs[SHOWN_VALUES + 1];
	float fs[SHOWN_VALUES + 1];
	char nm[48];
	long n;
	switch (f->type) {
	case ALI_P_U:
	case ALI_P_I:
	case ALI_P_B:
		if (pb_get_varint(p, f->field, &u)) {
			if (f->type == ALI_P_B)
				add(b, "%s: %s\n", f->name, u ? "true" : "false");
			else if (f->type == ALI_P_I)
				add(b, "%s: %" PRId64 "\n", f->name, (int64_t)u);
			else
				add(b, "%s: %" PRIu64 "\n", f->name, u);
		}
		break;
	case ALI_P_F:
		if (pb_get_float(p, f->field, &x))
			add(b, "%s: %g\n", f->name, (double)x);
		break;
	case ALI_P_US:
	case ALI_P_IS:
		n = pb_get_varints(p, f->field, vs, SHOWN_VALUES + 1);
		if (n > 0) {
			add(b, "%s: ", f->name);
			list_u(b, vs, n, f->type == ALI_P_IS);
			add(b, "\n");
		}
		break;
	case ALI_P_FS:
		n = pb_get_floats(p, f->field, fs, SHOWN_VALUES + 1);
		if (n > 0) {
			add(b, "%s: [", f->name);
			for (long i = 0; i < n && i < SHOWN_VALUES; i++)
				add(b, "%s%g", i ? ", " : "", (double)fs[i]);
			add(b, n > SHOWN_VALUES ? ", ... (%ld values)]\n" : "]\n", n);
		}
		break;
	case ALI_P_E:
		if (pb_get_varint(p, f->field, &u)) {
			if (enum_name(f->names, u, nm, sizeof nm))
				add(b, "%s: %s\n", f->name, nm);
			else
				add(b, "%s: %" PRIu64 "\n", f->name, u);
		} else if (enum_name(f->names, 0, nm, sizeof nm)) { /* proto3 leaves out the default, value 0 */
			add(b, "%s: %s\n", f->name, nm);
		}
		break;
	case ALI_P_ONE:
		if (pb_has(p, f->field))
			add(b, "%s: %s\n", f->names, f->name);
		break;
	}
}

/* A WeightParams message: its storage form and size, never its values. */
static void nn_weight(struct pbuf *b, const char *name, al_span w)
{
	struct ali_nn_weight_form wf;
	ali_nn_weight_form(w, &wf);
	uint64_t fp32 = wf.fp32, fp16 = wf.fp16, raw = wf.raw, int8 = wf.int8;
	bool quant = wf.quantized;
	if (!fp32 && !fp16 && !raw && !int8)
		return;
	add(b, "%s: ", name);
	if (fp32)
		add(b, "fp32, %" PRIu64 " values", fp32 / 4);
	else if (fp16)
		add(b, "fp16, %" PRIu64 " values", fp16 / 2);
	else if (int8)
		add(b, "int8, %" PRIu64 " values", int8);
	else
		add(b, "%s, %" PRIu64 " bytes", quant ? "quantized (rawValue)" : "rawValue", raw);
	if (quant && !raw)
		add(b, ", quantized");
	add(b, "\n");
}

static void nn_params(struct pbuf *b, const struct al_node *n, al_span p)
{
	if (n->kind < 0 || n->kind >= AL_NNK_COUNT)
		return;
	for (const struct ali_nn_pfield *f = ali_nn_param_fields[n->kind]; f && f->name; f++)
		nn_field(b, p, f);
	/* the kernel as a shape: convolution [C_out, kernelChannels, kH, kW], innerProduct [C_out, C_in] */
	struct al_nn_convolution cv;
	struct al_nn_inner_product ip;
	if (ali_nn_convolution(n, &cv) && cv.output_channels.has && cv.kernel_channels.has) {
		long k = cv.kernel_size.n;
		uint64_t ks[2] = {3, 3};
		if (k == 2) {
			ks[0] = cv.kernel_size.v[0];
			ks[1] = cv.kernel_size.v[1];
		}
		if (k == 0 || k == 2)
			add(b, "weight shape: [%" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 "]\n",
			    cv.output_channels.v, cv.kernel_channels.v, ks[0], ks[1]);
	} else if (ali_nn_inner_product(n, &ip) && ip.input_channels.has && ip.output_channels.has) {
		add(b, "weight shape: [%" PRIu64 ", %" PRIu64 "]\n", ip.output_channels.v, ip.input_channels.v);
	}
	struct pb_iter it, jt;
	struct pb_field f, g;
	pb_iter_init(&it, p);
	while (pb_next(&it, &f)) {
		if (f.wire != PB_LEN)
			continue;
		for (const struct al_weight_site *ws = ali_nn_weight_sites[n->kind]; ws && ws->field; ws++) {
			if (ws->field != f.num)
				continue;
			if (ws->holder == AL_WH_NONE) {
				nn_weight(b, ws->name, f.data);
			} else { /* PReLU alpha, softplus alpha/beta, LSTM weights: each WeightParams inside */
				pb_iter_init(&jt, f.data);
				for (int guard = 0; pb_next(&jt, &g) && guard < 32; guard++)
					if (g.wire == PB_LEN)
						nn_weight(b, ws->name, g.data);
			}
			break;
		}
	}
}

/* ================================================================ ML Program */

static void put_ttype(struct pbuf *b, const struct al_ttype *t)
{
	char dims[2 + AL_SHAPE_MAX_RANK * 22];
	int rank = t->dims ? (t->rank < AL_SHAPE_MAX_RANK ? t->rank : AL_SHAPE_MAX_RANK) : 0;
	ali_dims_str(dims, sizeof dims, t->dims, rank > 0 ? (size_t)rank : 0, AL_DIMS_SPACED | AL_DIMS_QUERY);
	add(b, "%s %s", al_dtype_name(t->dtype), dims);
}

static bool float_dtype(int dt)
{
	const char *nm = al_dtype_name(dt);
	return nm && (strncmp(nm, "fp", 2) == 0 || strncmp(nm, "bf", 2) == 0);
}

/* Where a constant tensor bound to `param` is kept: compressed by a constexpr_*
 * op, in weights/weight.bin, or inline in the model. */
static void mil_storage(struct pbuf *b, const struct al_node *n, const char *param)
{
	al_span nm;
	int bind = ali_mil_param_binding(n, param, 0, &nm);
	char name[256];
	if (bind == 2) {
		add(b, ", a literal");
		return;
	}
	if (bind != 1 || nm.n >= sizeof name)
		return;
	memcpy(name, nm.p, nm.n);
	name[nm.n] = 0;
	const struct al_node *pr = ali_mil_producer(n, name);
	char form[128];
	al_span v;
	struct al_mil_value mv;
	if (pr && ali_mil_weight_form(pr, form, sizeof form))
		add(b, ", stored %s (%s)", form, pr->type);
	else if (pr && ali_mil_attr(pr, "val", &v) && ali_mil_value_read(v, &mv))
		add(b, mv.kind == AL_MV_BLOB ? (mv.blob_in_weights ? ", in weights/weight.bin" : ", in a blob file")
					     : ", inline in the model");
}

static void mil_param(struct pbuf *b, const struct al_node *n, const char *param)
{
	if (!ali_mil_param_is_const(n, param))
		return; /* bound to a value: an input (the panel lists them) */
	int64_t iv[SHOWN_VALUES];
	double fv[2];
	char s[128];
	const struct al_ttype *t = ali_mil_param_type(n, param);
	/* a float tensor is a weight (or like one): its type, shape and storage, never its values */
	bool weight = t && t->kind == 0 && t->rank >= 1 && float_dtype(t->dtype);
	long k = weight ? 0 : ali_mil_param_ints(n, param, iv, SHOWN_VALUES);
	if (k > 0 && k <= SHOWN_VALUES) {
		bool is_bool = t && strcmp(al_dtype_name(t->dtype), "bool") == 0;
		add_text(b, param);
		add(b, ": %s", k > 1 || (t && t->rank >= 1) ? "[" : "");
		for (long i = 0; i < k; i++) {
			if (is_bool)
				add(b, "%s%s", i ? ", " : "", iv[i] ? "true" : "false");
			else
				add(b, "%s%" PRId64, i ? ", " : "", iv[i]);
		}
		add(b, k > 1 || (t && t->rank >= 1) ? "]\n" : "\n");
		return;
	}
	long kf = weight || k > 0 ? 0 : ali_mil_param_floats(n, param, fv, 2);
	if (kf == 1) {
		add_text(b, param);
		add(b, ": %g\n", fv[0]);
		return;
	}
	if (!weight && k <= 0 && kf <= 0 && ali_mil_param_string(n, param, s, sizeof s)) {
		add_text(b, param);
		add(b, ": ");
		add_text(b, s);
		add(b, "\n");
		return;
	}
	add_text(b, param);
	add(b, ": ");
	if (t)
		put_ttype(b, t);
	else if (kf > 1)
		add(b, "%ld floats", kf);
	else if (k > SHOWN_VALUES)
		add(b, "%ld integers", k);
	else
		add(b, "constant");
	mil_storage(b, n, param);
	add(b, "\n");
}

static void mil_params(struct pbuf *b, const struct al_node *n, const struct al_node_src *src)
{
	for (uint32_t i = 0; i < src->n_mil_args && i < 64; i++) {
		const char *param = src->mil_args[i].param;
		bool seen = false; /* a parameter bound twice (a variadic one) once */
		for (uint32_t j = 0; j < i && !seen; j++)
			seen = src->mil_args[j].param && param && strcmp(src->mil_args[j].param, param) == 0;
		if (param && !seen)
			mil_param(b, n, param);
	}
}

size_t ali_node_params(const struct al_node *n, char *buf, size_t cap)
{
	if (!cap)
		return 0;
	buf[0] = 0;
	const struct al_node_src *src = n ? al_src(n) : NULL;
	if (!src)
		return 0;
	struct pbuf b = {.p = buf, .cap = cap};
	if (src->mil_scope)
		mil_params(&b, n, src);
	else if (src->params.n)
		nn_params(&b, n, src->params);
	while (b.len && buf[b.len - 1] == '\n')
		buf[--b.len] = 0;
	return b.len;
}
