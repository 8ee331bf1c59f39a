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

enum ptype {
	P_U,   /* uint64 (varint) */
	P_I,   /* int64 (varint, two's complement) */
	P_B,   /* bool */
	P_F,   /* float (fixed32) */
	P_US,  /* repeated uint64 */
	P_IS,  /* repeated int64 */
	P_FS,  /* repeated float */
	P_E,   /* enum: names "A|B|C" in `names`, by value */
	P_ONE, /* a oneof member: present -> "name" shown as the value of `names` */
};

struct pfield {
	uint32_t field;
	const char *name;
	enum ptype type;
	const char *names; /* P_E: values; P_ONE: the label it is shown under */
};

#define END {0, NULL, P_U, NULL}
static const struct pfield conv_f[] = {
	{1, "outputChannels", P_U, NULL}, {2, "kernelChannels", P_U, NULL}, {10, "nGroups", P_U, NULL},
	{20, "kernelSize", P_US, NULL}, {30, "stride", P_US, NULL}, {40, "dilationFactor", P_US, NULL},
	{50, "valid", P_ONE, "padding"}, {51, "same", P_ONE, "padding"}, {60, "isDeconvolution", P_B, NULL},
	{70, "hasBias", P_B, NULL}, {100, "outputShape", P_US, NULL}, END};
static const struct pfield pool_f[] = {
	{1, "type", P_E, "MAX|AVERAGE|L2"}, {10, "kernelSize", P_US, NULL}, {20, "stride", P_US, NULL},
	{30, "valid", P_ONE, "padding"}, {31, "same", P_ONE, "padding"}, {32, "includeLastPixel", P_ONE, "padding"},
	{50, "avgPoolExcludePadding", P_B, NULL}, {60, "globalPooling", P_B, NULL}, END};
static const struct pfield act_f[] = {
	{5, "linear", P_ONE, "function"}, {10, "ReLU", P_ONE, "function"}, {15, "leakyReLU", P_ONE, "function"},
	{20, "thresholdedReLU", P_ONE, "function"}, {25, "PReLU", P_ONE, "function"}, {30, "tanh", P_ONE, "function"},
	{31, "scaledTanh", P_ONE, "function"}, {40, "sigmoid", P_ONE, "function"},
	{41, "sigmoidHard", P_ONE, "function"}, {50, "ELU", P_ONE, "function"}, {60, "softsign", P_ONE, "function"},
	{70, "softplus", P_ONE, "function"}, {71, "parametricSoftplus", P_ONE, "function"}, END};
static const struct pfield ip_f[] = {
	{1, "inputChannels", P_U, NULL}, {2, "outputChannels", P_U, NULL}, {10, "hasBias", P_B, NULL},
	{22, "int8DynamicQuantize", P_B, NULL}, END};
static const struct pfield emb_f[] = {
	{1, "inputDim", P_U, NULL}, {2, "outputChannels", P_U, NULL}, {10, "hasBias", P_B, NULL}, END};
static const struct pfield embnd_f[] = {
	{1, "vocabSize", P_U, NULL}, {2, "embeddingSize", P_U, NULL}, {3, "hasBias", P_B, NULL}, END};
static const struct pfield bn_f[] = {
	{1, "channels", P_U, NULL}, {5, "computeMeanVar", P_B, NULL}, {6, "instanceNormalization", P_B, NULL},
	{10, "epsilon", P_F, NULL}, END};
static const struct pfield up_f[] = {
	{1, "scalingFactor", P_US, NULL}, {7, "fractionalScalingFactor", P_FS, NULL},
	{5, "mode", P_E, "NN|BILINEAR"}, {6, "linearUpsampleMode", P_E, "DEFAULT|ALIGN_CORNERS_TRUE|ALIGN_CORNERS_FALSE"},
	END};
static const struct pfield pad_f[] = {
	{1, "constant", P_ONE, "type"}, {2, "reflection", P_ONE, "type"}, {3, "replication", P_ONE, "type"}, END};
static const struct pfield lrn_f[] = {
	{1, "alpha", P_F, NULL}, {2, "beta", P_F, NULL}, {3, "localSize", P_U, NULL}, {4, "k", P_F, NULL}, END};
static const struct pfield mvn_f[] = {
	{1, "acrossChannels", P_B, NULL}, {2, "normalizeVariance", P_B, NULL}, {3, "epsilon", P_F, NULL}, END};
static const struct pfield eps1_f[] = {{1, "epsilon", P_F, NULL}, END};
static const struct pfield alpha1_f[] = {{1, "alpha", P_F, NULL}, END};
static const struct pfield unary_f[] = {
	{1, "type", P_E, "SQRT|RSQRT|INVERSE|POWER|EXP|LOG|ABS|THRESHOLD"}, {2, "alpha", P_F, NULL},
	{3, "epsilon", P_F, NULL}, {4, "shift", P_F, NULL}, {5, "scale", P_F, NULL}, END};
static const struct pfield scale_f[] = {
	{1, "shapeScale", P_US, NULL}, {3, "hasBias", P_B, NULL}, {4, "shapeBias", P_US, NULL}, END};
static const struct pfield shape1_f[] = {{1, "shape", P_US, NULL}, END};
static const struct pfield reshape_f[] = {
	{1, "targetShape", P_IS, NULL}, {2, "mode", P_E, "CHANNEL_FIRST|CHANNEL_LAST"}, END};
static const struct pfield flatten_f[] = {{1, "mode", P_E, "CHANNEL_FIRST|CHANNEL_LAST"}, END};
static const struct pfield permute_f[] = {{1, "axis", P_US, NULL}, END};
static const struct pfield axes_u_f[] = {{1, "axes", P_US, NULL}, END};
static const struct pfield axes_i_f[] = {{1, "axes", P_IS, NULL}, END};
static const struct pfield concat_f[] = {{100, "sequenceConcat", P_B, NULL}, END};
static const struct pfield concatnd_f[] = {{1, "axis", P_I, NULL}, {2, "interleave", P_B, NULL}, END};
static const struct pfield axis1_f[] = {{1, "axis", P_I, NULL}, END};
static const struct pfield splitnd_f[] = {
	{1, "axis", P_I, NULL}, {2, "numSplits", P_U, NULL}, {3, "splitSizes", P_US, NULL}, END};
static const struct pfield target_i_f[] = {{1, "targetShape", P_IS, NULL}, END};
static const struct pfield squeeze_f[] = {{1, "axes", P_IS, NULL}, {2, "squeezeAll", P_B, NULL}, END};
static const struct pfield tile_f[] = {{1, "reps", P_US, NULL}, END};
static const struct pfield clip_f[] = {{1, "minVal", P_F, NULL}, {2, "maxVal", P_F, NULL}, END};
static const struct pfield gelu_f[] = {{1, "mode", P_E, "EXACT|TANH_APPROXIMATION|SIGMOID_APPROXIMATION"}, END};
static const struct pfield ln_f[] = {{1, "normalizedShape", P_IS, NULL}, {2, "eps", P_F, NULL}, END};

static const struct pfield *const nn_fields[AL_NNK_COUNT] = {
	[AL_NNK_convolution] = conv_f, [AL_NNK_pooling] = pool_f, [AL_NNK_activation] = act_f,
	[AL_NNK_innerProduct] = ip_f, [AL_NNK_embedding] = emb_f, [AL_NNK_embeddingND] = embnd_f,
	[AL_NNK_batchnorm] = bn_f, [AL_NNK_upsample] = up_f, [AL_NNK_padding] = pad_f, [AL_NNK_lrn] = lrn_f,
	[AL_NNK_mvn] = mvn_f, [AL_NNK_l2normalize] = eps1_f, [AL_NNK_add] = alpha1_f, [AL_NNK_multiply] = alpha1_f,
	[AL_NNK_unary] = unary_f, [AL_NNK_scale] = scale_f, [AL_NNK_bias] = shape1_f,
	[AL_NNK_loadConstant] = shape1_f, [AL_NNK_loadConstantND] = shape1_f, [AL_NNK_reshape] = reshape_f,
	[AL_NNK_flatten] = flatten_f, [AL_NNK_permute] = permute_f, [AL_NNK_transpose] = axes_u_f,
	[AL_NNK_concat] = concat_f, [AL_NNK_concatND] = concatnd_f, [AL_NNK_softmaxND] = axis1_f,
	[AL_NNK_stack] = axis1_f, [AL_NNK_gather] = axis1_f, [AL_NNK_splitND] = splitnd_f,
	[AL_NNK_reshapeStatic] = target_i_f, [AL_NNK_expandDims] = axes_i_f, [AL_NNK_squeeze] = squeeze_f,
	[AL_NNK_tile] = tile_f, [AL_NNK_clip] = clip_f, [AL_NNK_gelu] = gelu_f, [AL_NNK_layerNormalization] = ln_f,
};

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

static void nn_field(struct pbuf *b, al_span p, const struct pfield *f)
{
	uint64_t u;
	float x;
	uint64_t vs[SHOWN_VALUES + 1];
	float fs[SHOWN_VALUES + 1];
	char nm[48];
	long n;
	switch (f->type) {
	case P_U:
	case P_I:
	case P_B:
		if (pb_get_varint(p, f->field, &u)) {
			if (f->type == P_B)
				add(b, "%s: %s\n", f->name, u ? "true" : "false");
			else if (f->type == P_I)
				add(b, "%s: %" PRId64 "\n", f->name, (int64_t)u);
			else
				add(b, "%s: %" PRIu64 "\n", f->name, u);
		}
		break;
	case P_F:
		if (pb_get_float(p, f->field, &x))
			add(b, "%s: %g\n", f->name, (double)x);
		break;
	case P_US:
	case P_IS:
		n = pb_get_varints(p, f->field, vs, SHOWN_VALUES + 1);
		if (n > 0) {
			add(b, "%s: ", f->name);
			list_u(b, vs, n, f->type == P_IS);
			add(b, "\n");
		}
		break;
	case P_FS:
		n = pb_get_floats(p, f->field, fs, SHOWN_VALUES + 1);
		if (n > 0) {
			add(b, "%s: [", f->name);
			for (long i = 0; i < n && i < SHOWN_VALUES; i++)
				add(b, "%s%g", i ? ", " : "", (double)fs[i]);
			add(b, n > SHOWN_VALUES ? ", ... (%ld values)]\n" : "]\n", n);
		}
		break;
	case P_E:
		if (pb_get_varint(p, f->field, &u)) {
			if (enum_name(f->names, u, nm, sizeof nm))
				add(b, "%s: %s\n", f->name, nm);
			else
				add(b, "%s: %" PRIu64 "\n", f->name, u);
		} else if (enum_name(f->names, 0, nm, sizeof nm)) { /* proto3 leaves out the default, value 0 */
			add(b, "%s: %s\n", f->name, nm);
		}
		break;
	case P_ONE:
		if (pb_has(p, f->field))
			add(b, "%s: %s\n", f->names, f->name);
		break;
	}
}

/* A WeightParams message: its storage form and size, never its values. */
static void nn_weight(struct pbuf *b, const char *name, al_span w)
{
	struct pb_iter it;
	struct pb_field f;
	uint64_t fp32 = 0, fp16 = 0, raw = 0, int8 = 0;
	bool quant = false;
	pb_iter_init(&it, w);
	while (pb_next(&it, &f)) {
		if (f.num == 1 && f.wire == PB_FIXED32)
			fp32 += 4;
		else if (f.wire == PB_LEN && f.num == 1)
			fp32 += f.data.n;
		else if (f.wire == PB_LEN && f.num == 2)
			fp16 += f.data.n;
		else if (f.wire == PB_LEN && f.num == 30)
			raw += f.data.n;
		else if (f.wire == PB_LEN && f.num == 31)
			int8 += f.data.n;
		else if (f.num == 40)
			quant = true;
	}
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
	for (const struct pfield *f = nn_fields[n->kind]; f && f->name; f++)
		nn_field(b, p, f);
	/* the kernel as a shape: convolution [C_out, kernelChannels, kH, kW], innerProduct [C_out, C_in] */
	uint64_t co = 0, kc = 0, ks[2] = {3, 3};
	if (n->kind == AL_NNK_convolution && pb_get_varint(p, 1, &co) && pb_get_varint(p, 2, &kc)) {
		long k = pb_get_varints(p, 20, ks, 2);
		if (k == 0 || k == 2)
			add(b, "weight shape: [%" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 "]\n", co, kc, ks[0], ks[1]);
	} else if (n->kind == AL_NNK_innerProduct && pb_get_varint(p, 1, &kc) && pb_get_varint(p, 2, &co)) {
		add(b, "weight shape: [%" PRIu64 ", %" PRIu64 "]\n", co, kc);
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
