/* SPDX-License-Identifier: MIT */
/* probe.c: `anelint probe -o DIR` as one library call, al_probes_write (docs/evidence.md
 * "Probes"): small Core ML models that settle what the rule table is unsure of, a manifest
 * of what each decides and what anelint predicts for it, and a script that captures
 * evidence for them on a Mac. Errors go to the caller's diagnostics (the CLI prints them).
 *
 * What is probed comes from two places. The family table below holds one row per
 * probe family: the rule it decides, the model it builds and the values it varies.
 * The other list is derived from the tables of the analysis: every layer kind and
 * ML Program op with no evidence on some release (kind_status.c) that a kind builder
 * can write gets a probe of its own, and every rule whose evidence does not reach
 * every chip and release it is evaluated on (rule_scope.def) is listed in the
 * manifest with the families that probe it, or "not_probed" and why, so that a new
 * uncertain rule shows up there until a family row is added for it. */
#include "command.h"
#include "coreml_fields.h"
#include "base.h"     /* ali_write_atomic, ali_diag_add */
#include "model.h"    /* ali_nn_kinds, ali_mil_kinds: the layer kind and op tables */
#include "pbsplice.h" /* al_buf: the protobuf writer */
#include "miltext.h"  /* MIL text -> MILSpec.Program: the ML Program probes */

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ================================================================ writers */

static void put_msg(struct al_buf *b, uint32_t field, const struct al_buf *m)
{
	ali_buf_len(b, field, m->p, m->n);
}


#define DT_FLOAT32 65568
#define DT_FLOAT16 65552

/* The flexibility of a probe's input (ANE040): none, a range per axis, or enumerated shapes. */
struct flex {
	int ranges;          /* 1: shapeRange over H and W from the default to hi */
	int64_t hi;          /* the upper bound of H and W (-1: unbounded) */
	int n_enum;          /* > 0: enumerated shapes, H = W = default * 1, 2, ... */
};

/* FeatureDescription{name = 1, type = 3 {multiArrayType = 5 {shape = 1, dataType = 2,
 * enumeratedShapes = 21 {shapes = 1 {shape = 1}}, shapeRange = 31 {sizeRanges = 1
 * {lowerBound = 1, upperBound = 2}}}}} */
static void array_feature(struct al_buf *out, const char *name, const uint64_t *shape, size_t rank, uint64_t dt,
			  const struct flex *fx, bool state)
{
	struct al_buf arr = {0}, ft = {0}, fd = {0}, fl = {0}, st = {0};
	if (rank)
		ali_buf_packed(&arr, AL_PB_ArrayFeatureType_shape, shape, rank);
	ali_buf_uint(&arr, AL_PB_ArrayFeatureType_dataType, dt);
	if (fx && fx->n_enum > 0 && rank == 4) {
		for (int i = 1; i <= fx->n_enum; i++) {
			struct al_buf s = {0};
			uint64_t d[4] = {shape[0], shape[1], shape[2] * (uint64_t)i, shape[3] * (uint64_t)i};
			ali_buf_packed(&s, AL_PB_ArrayFeatureType_Shape_shape, d, 4);
			put_msg(&fl, AL_PB_ArrayFeatureType_EnumeratedShapes_shapes, &s);
			ali_buf_free(&s);
		}
		put_msg(&arr, AL_PB_ArrayFeatureType_enumeratedShapes, &fl);
	} else if (fx && fx->ranges && rank == 4) {
		for (size_t k = 0; k < 4; k++) {
			struct al_buf r = {0};
			ali_buf_uint(&r, AL_PB_SizeRange_lowerBound, shape[k]);
			ali_buf_uint(&r, AL_PB_SizeRange_upperBound, k < 2 ? shape[k] : (uint64_t)fx->hi); /* -1: the 10-byte varint */
			put_msg(&fl, AL_PB_ArrayFeatureType_ShapeRange_sizeRanges, &r);
			ali_buf_free(&r);
		}
		put_msg(&arr, AL_PB_ArrayFeatureType_shapeRange, &fl);
	}
	if (state) { /* FeatureType.stateType 8 {StateFeatureType.arrayType 1} */
		put_msg(&st, AL_PB_StateFeatureType_arrayType, &arr);
		put_msg(&ft, AL_PB_FeatureType_stateType, &st);
	} else {
		put_msg(&ft, AL_PB_FeatureType_multiArrayType, &arr);
	}
	ali_buf_str(&fd, AL_PB_FeatureDescription_name, name);
	put_msg(&fd, AL_PB_FeatureDescription_type, &ft);
	ali_buf_put(out, fd.p, fd.n);
	if (arr.failed || ft.failed || fd.failed || fl.failed || st.failed)
		out->failed = true;
	ali_buf_free(&st);
	ali_buf_free(&arr);
	ali_buf_free(&ft);
	ali_buf_free(&fd);
	ali_buf_free(&fl);
}

/* ================================================================ NeuralNetwork probes */

/* One NeuralNetwork layer: name 1, input 2, output 3, params at its oneof field. */
struct nn_layer {
	const char *name;
	const char *in[2];
	const char *out;
	uint32_t field;
	struct al_buf params;
};

/* ConvolutionLayerParams: outputChannels 1, kernelChannels 2, nGroups 10, kernelSize 20,
 * stride 30, dilationFactor 40, valid 50, weights 90 {float16Value 2}: zero weights. */
static void conv_params(struct al_buf *conv, uint64_t c, uint64_t kh, uint64_t kw, uint64_t dil)
{
	uint64_t k[2] = {kh, kw}, s[2] = {1, 1}, d[2] = {dil, dil};
	ali_buf_uint(conv, AL_PB_ConvolutionLayerParams_outputChannels, c);
	ali_buf_uint(conv, AL_PB_ConvolutionLayerParams_kernelChannels, c);
	ali_buf_uint(conv, AL_PB_ConvolutionLayerParams_nGroups, 1);
	ali_buf_packed(conv, AL_PB_ConvolutionLayerParams_kernelSize, k, 2);
	ali_buf_packed(conv, AL_PB_ConvolutionLayerParams_stride, s, 2);
	ali_buf_packed(conv, AL_PB_ConvolutionLayerParams_dilationFactor, d, 2);
	ali_buf_len(conv, AL_PB_ConvolutionLayerParams_valid, NULL, 0);
	size_t nw = (size_t)(c * c * kh * kw * 2);
	uint8_t *zeros = calloc(nw ? nw : 1, 1);
	struct al_buf w = {0};
	if (!zeros) {
		conv->failed = true;
		return;
	}
	ali_buf_len(&w, AL_PB_WeightParams_float16Value, zeros, nw);
	free(zeros);
	put_msg(conv, AL_PB_ConvolutionLayerParams_weights, &w);
	if (w.failed)
		conv->failed = true;
	ali_buf_free(&w);
}

/* Model{specificationVersion 4, description 2 {input 1, output 10}, neuralNetwork 500
 * {layers 1, arrayInputShapeMapping 5 = EXACT}}: input x [1, C, H, W] fp32, output y. */
static bool nn_model(const uint64_t shape[4], const struct flex *fx, struct nn_layer *layers, int n, struct al_buf *out)
{
	struct al_buf in = {0}, outf = {0}, desc = {0}, nn = {0};
	bool ok = true;
	array_feature(&in, "x", shape, 4, DT_FLOAT32, fx, false);
	array_feature(&outf, "y", NULL, 0, DT_FLOAT32, NULL, false);
	put_msg(&desc, AL_PB_ModelDescription_input, &in);
	put_msg(&desc, AL_PB_ModelDescription_output, &outf);
	for (int i = 0; i < n; i++) {
		struct al_buf layer = {0};
		ali_buf_str(&layer, AL_PB_NeuralNetworkLayer_name, layers[i].name);
		for (int k = 0; k < 2; k++)
			if (layers[i].in[k])
				ali_buf_str(&layer, AL_PB_NeuralNetworkLayer_input, layers[i].in[k]);
		ali_buf_str(&layer, AL_PB_NeuralNetworkLayer_output, layers[i].out);
		put_msg(&layer, layers[i].field, &layers[i].params);
		put_msg(&nn, AL_PB_NeuralNetwork_layers, &layer);
		ok &= !layer.failed && !layers[i].params.failed;
		ali_buf_free(&layer);
		ali_buf_free(&layers[i].params);
	}
	ali_buf_uint(&nn, AL_PB_NeuralNetwork_arrayInputShapeMapping, 1);
	ali_buf_uint(out, AL_PB_Model_specificationVersion, 4);
	put_msg(out, AL_PB_Model_description, &desc);
	put_msg(out, AL_PB_Model_neuralNetwork, &nn);
	ok &= !(in.failed || outf.failed || desc.failed || nn.failed || out->failed);
	ali_buf_free(&in);
	ali_buf_free(&outf);
	ali_buf_free(&desc);
	ali_buf_free(&nn);
	return ok;
}

struct family;
/* Builds the probe of family f for value v (its stem is the file name without extension):
 * the serialized Model in out, the probed layer/op's name in *probed. */
typedef bool (*build_fn)(const struct family *f, const char *v, const char *stem, struct al_buf *out,
			 const char **probed, al_diags *d);

/* One convolution over [1, 64, 64, 64] (302 MFLOP at 3x3: above the work floor). */
static bool b_conv_kw(const struct family *f, const char *v, const char *stem, struct al_buf *out,
		      const char **probed, al_diags *d)
{
	uint64_t shape[4] = {1, 64, 64, 64};
	struct nn_layer l = {stem, {"x"}, "y", 100, {0}};
	conv_params(&l.params, 64, 3, strtoull(v, NULL, 10), 1);
	*probed = stem;
	return nn_model(shape, NULL, &l, 1, out);
}

static bool b_conv_dil(const struct family *f, const char *v, const char *stem, struct al_buf *out,
		       const char **probed, al_diags *d)
{
	uint64_t shape[4] = {1, 64, 64, 64};
	struct nn_layer l = {stem, {"x"}, "y", 100, {0}};
	conv_params(&l.params, 64, 3, 3, strtoull(v, NULL, 10));
	*probed = stem;
	return nn_model(shape, NULL, &l, 1, out);
}

/* The work floor (ANE071): one 3x3 convolution of 64 channels over H = W = v, 74 kFLOP per
 * pixel: 16 -> 19 MFLOP, 32 -> 75, 48 -> 170, 64 -> 302, 96 -> 680 (the floor: 200). */
static bool b_work(const struct family *f, const char *v, const char *stem, struct al_buf *out,
		   const char **probed, al_diags *d)
{
	uint64_t s = strtoull(v, NULL, 10), shape[4] = {1, 64, s, s};
	struct nn_layer l = {stem, {"x"}, "y", 100, {0}};
	conv_params(&l.params, 64, 3, 3, 1);
	*probed = stem;
	return nn_model(shape, NULL, &l, 1, out);
}

/* Axis caps (ANE051): a 1x1 convolution of 128 channels over [1, 128, 1, W] (33 kFLOP per
 * column: 537 MFLOP at W = 16384, above the work floor). */
static bool b_axis(const struct family *f, const char *v, const char *stem, struct al_buf *out,
		   const char **probed, al_diags *d)
{
	uint64_t shape[4] = {1, 128, 1, strtoull(v, NULL, 10)};
	struct nn_layer l = {stem, {"x"}, "y", 100, {0}};
	conv_params(&l.params, 128, 1, 1, 1);
	*probed = stem;
	return nn_model(shape, NULL, &l, 1, out);
}

/* Max pooling (PoolingLayerParams at 120: type MAX = 0, not written; kernelSize 10, stride 20,
 * valid 30) after a 3x3 convolution of [1, 64, 64, 64] (302 MFLOP: the model is above the
 * work floor, which would otherwise keep it on the CPU whatever the stride). */
static bool b_pool(const struct family *f, const char *v, const char *stem, struct al_buf *out,
		   const char **probed, al_diags *d)
{
	uint64_t shape[4] = {1, 64, 64, 64}, s = strtoull(v, NULL, 10), k[2] = {3, 3}, ps[2] = {s, s};
	struct nn_layer l[2] = {{"conv", {"x"}, "h", 100, {0}}, {stem, {"h"}, "y", 120, {0}}};
	conv_params(&l[0].params, 64, 3, 3, 1);
	ali_buf_packed(&l[1].params, AL_PB_PoolingLayerParams_kernelSize, k, 2);
	ali_buf_packed(&l[1].params, AL_PB_PoolingLayerParams_stride, ps, 2);
	ali_buf_len(&l[1].params, AL_PB_PoolingLayerParams_valid, NULL, 0);
	*probed = stem;
	return nn_model(shape, NULL, l, 2, out);
}

/* Flexible shapes (ANE040): the convolution of conv_kw over [1, 64, 64, 64] by default,
 * its input flexible in H and W by kind and size. */
static bool b_flex(const struct family *f, const char *v, const char *stem, struct al_buf *out,
		   const char **probed, al_diags *d)
{
	static const struct {
		const char *v;
		struct flex fx;
	} kinds[] = {
		{"range_128", {1, 128, 0}}, {"range_1024", {1, 1024, 0}}, {"range_unbounded", {1, -1, 0}},
		{"enum_2", {0, 0, 2}},      {"enum_8", {0, 0, 8}},
	};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (strcmp(kinds[i].v, v) == 0) {
			uint64_t shape[4] = {1, 64, 64, 64};
			struct nn_layer l = {stem, {"x"}, "y", 100, {0}};
			conv_params(&l.params, 64, 3, 3, 1);
			*probed = stem;
			return nn_model(shape, &kinds[i].fx, &l, 1, out);
		}
	return false;
}

/* Float WeightParams {floatValue 1 (packed)}: n copies of x. */
static void float_weights(struct al_buf *b, uint32_t field, size_t n, float x)
{
	struct al_buf w = {0};
	float *v = malloc(n * sizeof *v);
	if (!v) {
		b->failed = true;
		return;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = x;
	ali_buf_len(&w, AL_PB_WeightParams_floatValue, v, n * sizeof *v); /* little-endian hosts: the wire order of fixed32 */
	free(v);
	put_msg(b, field, &w);
	if (w.failed)
		b->failed = true;
	ali_buf_free(&w);
}

/* The NeuralNetwork layer kinds a kind probe can write: the params that make each valid
 * (NeuralNetwork.proto field numbers), after a convolution of [1, 32, 128, 128]. */
#define KIND_C 32
static bool nn_kind_params(const char *kind, struct nn_layer *l)
{
	struct al_buf *p = &l->params;
	if (strcmp(kind, "activation") == 0) {
		ali_buf_len(p, AL_PB_ActivationParams_ReLU, NULL, 0);
	} else if (strcmp(kind, "softmax") == 0 || strcmp(kind, "unary") == 0 || strcmp(kind, "reduce") == 0 ||
		   strcmp(kind, "flatten") == 0) {
		/* empty: softmax over C; unary SQRT; reduce SUM over CHW; flatten CHANNEL_FIRST */
	} else if (strcmp(kind, "add") == 0 || strcmp(kind, "multiply") == 0) {
		/* alpha: one input plus / times a scalar (the same field number in both) */
		ali_buf_float(p, AL_PB_AddLayerParams_alpha, 1.0f);
	} else if (strcmp(kind, "mvn") == 0) {
		ali_buf_uint(p, AL_PB_MeanVarianceNormalizeLayerParams_normalizeVariance, 1);
		ali_buf_float(p, AL_PB_MeanVarianceNormalizeLayerParams_epsilon, 1e-5f);
	} else if (strcmp(kind, "l2normalize") == 0) {
		ali_buf_float(p, AL_PB_L2NormalizeLayerParams_epsilon, 1e-6f);
	} else if (strcmp(kind, "lrn") == 0) {
		ali_buf_float(p, AL_PB_LRNLayerParams_alpha, 1e-4f);
		ali_buf_float(p, AL_PB_LRNLayerParams_beta, 0.75f);
		ali_buf_uint(p, AL_PB_LRNLayerParams_localSize, 5);
		ali_buf_float(p, AL_PB_LRNLayerParams_k, 1.0f);
	} else if (strcmp(kind, "upsample") == 0) {
		uint64_t s[2] = {2, 2};
		ali_buf_packed(p, AL_PB_UpsampleLayerParams_scalingFactor, s, 2); /* NN mode */
	} else if (strcmp(kind, "permute") == 0) {
		uint64_t a[4] = {0, 1, 3, 2};
		ali_buf_packed(p, AL_PB_PermuteLayerParams_axis, a, 4); /* swap H and W */
	} else if (strcmp(kind, "batchnorm") == 0) {
		ali_buf_uint(p, AL_PB_BatchnormLayerParams_channels, KIND_C);
		ali_buf_float(p, AL_PB_BatchnormLayerParams_epsilon, 1e-5f);
		float_weights(p, AL_PB_BatchnormLayerParams_gamma, KIND_C, 1.0f);
		float_weights(p, AL_PB_BatchnormLayerParams_beta, KIND_C, 0.0f);
		float_weights(p, AL_PB_BatchnormLayerParams_mean, KIND_C, 0.0f);
		float_weights(p, AL_PB_BatchnormLayerParams_variance, KIND_C, 1.0f);
	} else if (strcmp(kind, "bias") == 0 || strcmp(kind, "scale") == 0) {
		uint64_t shape[1] = {KIND_C};
		bool bias = kind[0] == 'b';
		ali_buf_packed(p, bias ? AL_PB_BiasLayerParams_shape : AL_PB_ScaleLayerParams_shapeScale, shape, 1);
		if (bias) {
			float_weights(p, AL_PB_BiasLayerParams_bias, KIND_C, 0.5f);
		} else {
			float_weights(p, AL_PB_ScaleLayerParams_scale, KIND_C, 2.0f); /* hasBias false */
		}
	} else if (strcmp(kind, "concat") == 0 || strcmp(kind, "max") == 0 || strcmp(kind, "min") == 0 ||
		   strcmp(kind, "average") == 0) {
		l->in[1] = l->in[0]; /* two inputs: the convolution's output twice; empty params */
	} else {
		return false;
	}
	return true;
}

static bool b_nn_kind(const struct family *f, const char *v, const char *stem, struct al_buf *out,
		      const char **probed, al_diags *d)
{
	int k = ali_nn_kind_by_name(v);
	if (k < 0)
		return false;
	uint64_t shape[4] = {1, KIND_C, 128, 128};
	struct nn_layer l[2] = {{"conv", {"x"}, "h", 100, {0}}, {stem, {"h"}, "y", ali_nn_kinds[k].field, {0}}};
	conv_params(&l[0].params, KIND_C, 3, 3, 1);
	if (!nn_kind_params(v, &l[1])) {
		ali_buf_free(&l[0].params);
		ali_buf_free(&l[1].params);
		return false;
	}
	*probed = stem;
	return nn_model(shape, NULL, l, 2, out);
}

/* ================================================================ ML Program probes */

/* An ML Program probe: MIL text (the syntax of a compiled model.mil, fp16 inputs and
 * output as coremltools writes them with fp16 I/O) turned into the MILSpec.Program
 * message by anelint's MIL text reader, in Model{specificationVersion 2,
 * description 2, mlProgram 502}. Consts are inline values, as coremltools writes
 * small ones. Inputs: n rank-4 fp16 tensors (a rank-3 one when dims[3] is 0), the last
 * n_state of them states (iOS 18: state<tensor<...>>, FeatureType.stateType). */
struct mil_in {
	const char *name;
	int64_t dims[4];
};

static const struct {
	const char *opset;
	int spec;
} opsets[] = {{"ios16", 7}, {"ios17", 8}, {"ios18", 9}};

static bool mil_model(const char *stem, const char *opset, const struct mil_in *ins, int n_in, int n_state,
		      const struct al_buf *body, struct al_buf *out, al_diags *d)
{
	int spec = 0;
	for (size_t i = 0; i < sizeof opsets / sizeof opsets[0]; i++)
		if (strcmp(opsets[i].opset, opset) == 0)
			spec = opsets[i].spec;
	struct al_buf text = {0}, prog = {0}, desc = {0}, outf = {0};
	ali_buf_printf(&text, "program(1.0)\n{\n    func main<%s>(", opset);
	for (int i = 0; i < n_in; i++) {
		const int64_t *x = ins[i].dims;
		bool state = i >= n_in - n_state;
		if (x[3])
			ali_buf_printf(&text, "%s%stensor<fp16, [%lld, %lld, %lld, %lld]>%s %s", i ? ", " : "", state ? "state<" : "",
				(long long)x[0], (long long)x[1], (long long)x[2], (long long)x[3], state ? ">" : "",
				ins[i].name);
		else
			ali_buf_printf(&text, "%stensor<fp16, [%lld, %lld, %lld]> %s", i ? ", " : "", (long long)x[0],
				(long long)x[1], (long long)x[2], ins[i].name);
	}
	ali_buf_printf(&text, ") {\n");
	ali_buf_put(&text, body->p, body->n);
	ali_buf_printf(&text, "    } -> (y);\n}\n");
	bool ok = spec && !text.failed && !body->failed;
	enum al_status st = ok ? ali_mil_text_parse((al_span){text.p, text.n}, stem, &prog, d) : AL_E_NOMEM;
	for (int i = 0; i < n_in; i++) {
		struct al_buf in = {0};
		uint64_t shape[4];
		for (int k = 0; k < 4; k++)
			shape[k] = (uint64_t)ins[i].dims[k];
		array_feature(&in, ins[i].name, shape, ins[i].dims[3] ? 4 : 3, DT_FLOAT16, NULL, i >= n_in - n_state);
		put_msg(&desc, AL_PB_ModelDescription_input, &in);
		ok &= !in.failed;
		ali_buf_free(&in);
	}
	array_feature(&outf, "y", NULL, 0, DT_FLOAT16, NULL, false);
	put_msg(&desc, AL_PB_ModelDescription_output, &outf);
	ali_buf_uint(out, AL_PB_Model_specificationVersion, (uint64_t)spec);
	put_msg(out, AL_PB_Model_description, &desc);
	put_msg(out, AL_PB_Model_mlProgram, &prog);
	ok &= st == AL_OK && !(prog.failed || outf.failed || desc.failed || out->failed);
	ali_buf_free(&text);
	ali_buf_free(&prog);
	ali_buf_free(&desc);
	ali_buf_free(&outf);
	return ok;
}

#define NAMED(n) "[name = tensor<string, []>(\"" n "\")]"

/* The ML Program probes of one op put a 3x3 convolution of [1, 32, 128, 128] before it
 * (302 MFLOP: the model is above the work floor, which would otherwise keep it on the CPU
 * whatever the op). */
#define MK_C 32
#define MK_S 128
static void mil_conv(struct al_buf *b, const char *in, const char *outn, int c, int s);
static void mil_conv_consts(struct al_buf *b);

/* conv -> max_pool, kernel 3, stride v, valid (opset ios17) */
static bool b_mil_pool(const struct family *f, const char *v, const char *stem, struct al_buf *out,
		       const char **probed, al_diags *d)
{
	int s = atoi(v), o = s > 0 ? (MK_S - 3) / s + 1 : 0;
	struct al_buf b = {0};
	struct mil_in x = {"x", {1, MK_C, MK_S, MK_S}};
	mil_conv_consts(&b);
	mil_conv(&b, "x", "h", MK_C, MK_S);
	ali_buf_printf(&b, "        tensor<int32, [2]> k = const()[name = tensor<string, []>(\"k\"), val = tensor<int32, [2]>([3, 3])];\n");
	ali_buf_printf(&b, "        tensor<int32, [2]> s = const()[name = tensor<string, []>(\"s\"), val = tensor<int32, [2]>([%d, %d])];\n", s, s);
	ali_buf_printf(&b, "        tensor<string, []> pt = const()[name = tensor<string, []>(\"pt\"), val = tensor<string, []>(\"valid\")];\n");
	ali_buf_printf(&b, "        tensor<int32, [4]> pad = const()[name = tensor<string, []>(\"pad\"), val = tensor<int32, [4]>([0, 0, 0, 0])];\n");
	ali_buf_printf(&b, "        tensor<bool, []> cm = const()[name = tensor<string, []>(\"cm\"), val = tensor<bool, []>(false)];\n");
	ali_buf_printf(&b, "        tensor<fp16, [1, %d, %d, %d]> y = max_pool(x = h, kernel_sizes = k, strides = s, pad_type = pt, "
		    "pad = pad, ceil_mode = cm)" NAMED("y") ";\n", MK_C, o, o);
	*probed = "y";
	bool ok = s > 0 && mil_model(stem, "ios17", &x, 1, 0, &b, out, d);
	ali_buf_free(&b);
	return ok;
}

static bool b_mil_softplus(const struct family *f, const char *v, const char *stem, struct al_buf *out,
			   const char **probed, al_diags *d)
{
	struct al_buf b = {0};
	struct mil_in x = {"x", {1, MK_C, MK_S, MK_S}};
	mil_conv_consts(&b);
	mil_conv(&b, "x", "h", MK_C, MK_S);
	ali_buf_printf(&b, "        tensor<fp16, [1, %d, %d, %d]> y = softplus(x = h)" NAMED("y") ";\n", MK_C, MK_S, MK_S);
	*probed = "y";
	bool ok = mil_model(stem, "ios17", &x, 1, 0, &b, out, d);
	ali_buf_free(&b);
	return ok;
}

/* conv -> mul by the second input c [C, 1, 1] */
static bool b_mil_chmul(const struct family *f, const char *v, const char *stem, struct al_buf *out,
			const char **probed, al_diags *d)
{
	struct al_buf b = {0};
	struct mil_in x[2] = {{"x", {1, MK_C, MK_S, MK_S}}, {"c", {MK_C, 1, 1, 0}}};
	mil_conv_consts(&b);
	mil_conv(&b, "x", "h", MK_C, MK_S);
	ali_buf_printf(&b, "        tensor<fp16, [1, %d, %d, %d]> y = mul(x = h, y = c)" NAMED("y") ";\n", MK_C, MK_S, MK_S);
	*probed = "y";
	bool ok = mil_model(stem, "ios17", x, 2, 0, &b, out, d);
	ali_buf_free(&b);
	return ok;
}

/* A 3x3 convolution of C channels over [1, C, S, S], padding same, zero weights, output h. */
static void mil_conv(struct al_buf *b, const char *in, const char *outn, int c, int s)
{
	ali_buf_printf(b, "        tensor<fp16, [%d, %d, 3, 3]> %s_w = const()[name = tensor<string, []>(\"%s_w\"), "
		   "val = tensor<fp16, [%d, %d, 3, 3]>([", c, c, outn, outn, c, c);
	for (int i = 0; i < c * c * 9; i++)
		ali_buf_put(b, i ? ", 0" : "0", i ? 3 : 1);
	ali_buf_printf(b, "])];\n");
	ali_buf_printf(b, "        tensor<fp16, [1, %d, %d, %d]> %s = conv(x = %s, weight = %s_w, strides = cs, pad_type = cpt, "
		   "pad = cpad, dilations = cd, groups = cg)[name = tensor<string, []>(\"%s\")];\n", c, s, s, outn, in, outn,
		outn);
}

static void mil_conv_consts(struct al_buf *b)
{
	ali_buf_printf(b, "        tensor<int32, [2]> cs = const()[name = tensor<string, []>(\"cs\"), val = tensor<int32, [2]>([1, 1])];\n");
	ali_buf_printf(b, "        tensor<string, []> cpt = const()[name = tensor<string, []>(\"cpt\"), val = tensor<string, []>(\"same\")];\n");
	ali_buf_printf(b, "        tensor<int32, [4]> cpad = const()[name = tensor<string, []>(\"cpad\"), val = tensor<int32, [4]>([0, 0, 0, 0])];\n");
	ali_buf_printf(b, "        tensor<int32, [2]> cd = const()[name = tensor<string, []>(\"cd\"), val = tensor<int32, [2]>([1, 1])];\n");
	ali_buf_printf(b, "        tensor<int32, []> cg = const()[name = tensor<string, []>(\"cg\"), val = tensor<int32, []>(1)];\n");
}

/* The ML Program ops a kind probe can write: how each is called on h, the convolution's
 * output [1, 32, 128, 128] (the list names call forms only; which ops are probed comes from
 * the kind status table). Unary ops take x = h; binary ones x = h, y = h; reductions the
 * last axis, kept. The others: the consts they need (coremltools' MIL loader requires every
 * input in a program read from its protobuf, where the Python defaults do not apply) as
 * "type name value" items separated by ';', their arguments, and their output shape when it
 * is not h's. */
static const char *const mil_unary[] = {
	"abs", "acos", "asin", "atan", "atanh", "ceil", "cos", "cosh", "erf", "exp", "exp2", "floor",
	"gelu", "identity", "instance_norm", "inverse", "l2_norm", "log", "relu", "relu6", "round",
	"rsqrt", "sigmoid", "sign", "silu", "sin", "sinh", "softmax", "softplus", "softsign", "sqrt",
	"square", "tan", "tanh",
};
static const char *const mil_binary[] = {"add", "floor_div", "maximum", "minimum", "mod", "mul", "pow", "real_div", "sub"};
static const char *const mil_reduce[] = {
	"reduce_l1_norm", "reduce_l2_norm", "reduce_log_sum", "reduce_log_sum_exp", "reduce_max",
	"reduce_mean",    "reduce_min",     "reduce_prod",    "reduce_sum",         "reduce_sum_square",
};
#define ONES32 "[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"
static const struct {
	const char *op, *consts, *args, *out;
} mil_calls[] = {
	{"elu", "fp16 a 1.0", "x = h, alpha = a", NULL},
	{"leaky_relu", "fp16 a 0.01", "x = h, alpha = a", NULL},
	{"scaled_tanh", "fp16 a 1.0; fp16 b 1.0", "x = h, alpha = a, beta = b", NULL},
	{"sigmoid_hard", "fp16 a 0.2; fp16 b 0.5", "x = h, alpha = a, beta = b", NULL},
	{"thresholded_relu", "fp16 a 1.0", "x = h, alpha = a", NULL},
	{"threshold", "fp16 a 0.0", "x = h, alpha = a", NULL},
	{"clip", "fp16 a 0.0; fp16 b 6.0", "x = h, alpha = a, beta = b", NULL},
	{"linear_activation", "fp16 a 1.0; fp16 b 0.0", "x = h, alpha = a, beta = b", NULL},
	{"layer_norm", "int32[1] a [3]", "x = h, axes = a", NULL},
	{"prelu", "fp16[32] a " ONES32, "x = h, alpha = a", NULL},
	{"softplus_parametric", "fp16[32] a " ONES32 "; fp16[32] b " ONES32, "x = h, alpha = a, beta = b", NULL},
	{"batch_norm", "fp16[32] a " ONES32 "; fp16[32] b " ONES32, "x = h, mean = a, variance = b", NULL},
	{"local_response_norm", "int32 a 5", "x = h, size = a", NULL},
	{"transpose", "int32[4] a [0, 1, 3, 2]", "x = h, perm = a", NULL},
	{"reshape", "int32[4] a [1, 32, 128, 128]", "x = h, shape = a", NULL},
	{"reverse", "int32[1] a [3]", "x = h, axes = a", NULL},
	{"tile", "int32[4] a [1, 1, 1, 1]", "x = h, reps = a", NULL},
	{"concat", "int32 a 1; bool b false", "values = (h, h), axis = a, interleave = b", "[1, 64, 128, 128]"},
	{"stack", "int32 a 0", "values = (h, h), axis = a", "[2, 1, 32, 128, 128]"},
	{"expand_dims", "int32[1] a [0]", "x = h, axes = a", "[1, 1, 32, 128, 128]"},
	{"squeeze", "int32[1] a [0]", "x = h, axes = a", "[32, 128, 128]"},
	{"space_to_depth", "int32 a 2", "x = h, block_size = a", "[1, 128, 64, 64]"},
	{"depth_to_space", "int32 a 2", "x = h, block_size = a", "[1, 8, 256, 256]"},
	{"pixel_shuffle", "int32 a 2", "x = h, upscale_factor = a", "[1, 8, 256, 256]"},
	{"slice_by_size", "int32[4] a [0, 0, 0, 0]; int32[4] b [1, 16, 128, 128]", "x = h, begin = a, size = b",
	 "[1, 16, 128, 128]"},
	{"crop", "int32[2] a [0, 0]; int32[2] b [0, 0]", "x = h, crop_height = a, crop_width = b", NULL},
};
enum call_form { CALL_NONE, CALL_UNARY, CALL_BINARY, CALL_REDUCE, CALL_TABLE };

static bool in_list(const char *const *l, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(l[i], s) == 0)
			return true;
	return false;
}

static int mil_call_row(const char *op)
{
	for (size_t i = 0; i < sizeof mil_calls / sizeof mil_calls[0]; i++)
		if (strcmp(mil_calls[i].op, op) == 0)
			return (int)i;
	return -1;
}

static enum call_form mil_call_form(const char *op)
{
#define IN(l) in_list(l, sizeof l / sizeof l[0], op)
	return IN(mil_unary)        ? CALL_UNARY
	       : IN(mil_binary)     ? CALL_BINARY
	       : IN(mil_reduce)     ? CALL_REDUCE
	       : mil_call_row(op) >= 0 ? CALL_TABLE
				       : CALL_NONE;
#undef IN
}

/* The consts of a mil_calls row: items "TYPE NAME VALUE" separated by ';', TYPE a dtype
 * (a scalar) or a dtype and a length ("int32[4]": a vector). */
static void mil_call_consts(struct al_buf *b, const char *spec)
{
	while (*spec) {
		const char *end = strchr(spec, ';');
		size_t n = end ? (size_t)(end - spec) : strlen(spec);
		char item[512], type[24], name[8], ttype[48];
		int off = 0, len = 0;
		snprintf(item, sizeof item, "%.*s", (int)(n < sizeof item ? n : sizeof item - 1), spec);
		if (sscanf(item, " %23s %7s %n", type, name, &off) < 2 || off <= 0) {
			b->failed = true; /* a row of the table above is malformed: a bug */
			return;
		}
		char *br = strchr(type, '[');
		if (br) {
			len = atoi(br + 1);
			*br = 0;
			snprintf(ttype, sizeof ttype, "tensor<%s, [%d]>", type, len);
		} else {
			snprintf(ttype, sizeof ttype, "tensor<%s, []>", type);
		}
		ali_buf_printf(b, "        %s %s = const()[name = tensor<string, []>(\"%s\"), val = %s(%s)];\n", ttype, name, name,
			ttype, item + off);
		spec += n;
		if (*spec == ';')
			spec++;
	}
}

/* conv -> the op (opset ios16: fp16 I/O loads from iOS 16 / macOS 13) */
static bool b_mil_kind(const struct family *f, const char *v, const char *stem, struct al_buf *out,
		       const char **probed, al_diags *d)
{
	enum call_form form = mil_call_form(v);
	if (form == CALL_NONE)
		return false;
	struct al_buf b = {0};
	struct mil_in x = {"x", {1, MK_C, MK_S, MK_S}};
	mil_conv_consts(&b);
	mil_conv(&b, "x", "h", MK_C, MK_S);
	char same[64];
	snprintf(same, sizeof same, "[1, %d, %d, %d]", MK_C, MK_S, MK_S);
	if (form == CALL_REDUCE) {
		ali_buf_printf(&b, "        tensor<int32, [1]> ax = const()[name = tensor<string, []>(\"ax\"), val = tensor<int32, [1]>([-1])];\n");
		ali_buf_printf(&b, "        tensor<bool, []> kd = const()[name = tensor<string, []>(\"kd\"), val = tensor<bool, []>(true)];\n");
		ali_buf_printf(&b, "        tensor<fp16, [1, %d, %d, 1]> y = %s(x = h, axes = ax, keep_dims = kd)" NAMED("y") ";\n",
			MK_C, MK_S, v);
	} else if (form == CALL_TABLE) {
		int r = mil_call_row(v);
		mil_call_consts(&b, mil_calls[r].consts);
		ali_buf_printf(&b, "        tensor<fp16, %s> y = %s(%s)" NAMED("y") ";\n", mil_calls[r].out ? mil_calls[r].out : same, v,
			mil_calls[r].args);
	} else {
		ali_buf_printf(&b, "        tensor<fp16, %s> y = %s(x = h%s)" NAMED("y") ";\n", same, v,
			form == CALL_BINARY ? ", y = h" : "");
	}
	*probed = "y";
	bool ok = mil_model(stem, "ios16", &x, 1, 0, &b, out, d);
	ali_buf_free(&b);
	return ok;
}

/* The SDPA size threshold (ANE067): scaled_dot_product_attention of q, k, v, each
 * [1, heads, length, depth] as v = "HxLxD" (opset ios18: loads from iOS 18). */
static bool b_sdpa(const struct family *f, const char *v, const char *stem, struct al_buf *out,
		   const char **probed, al_diags *d)
{
	int h = 0, l = 0, dd = 0;
	if (sscanf(v, "%dx%dx%d", &h, &l, &dd) != 3 || h <= 0 || l <= 0 || dd <= 0)
		return false;
	struct al_buf b = {0};
	struct mil_in x[3] = {{"q", {1, h, l, dd}}, {"k", {1, h, l, dd}}, {"v", {1, h, l, dd}}};
	ali_buf_printf(&b, "        tensor<fp16, [1, %d, %d, %d]> y = scaled_dot_product_attention(query = q, key = k, value = v)" NAMED("y")
		    ";\n", h, l, dd);
	*probed = "y";
	bool ok = mil_model(stem, "ios18", x, 3, 0, &b, out, d);
	ali_buf_free(&b);
	return ok;
}

/* The per-segment floor (ANE072): v small ops (relu; "conv": one 3x3 conv, above the floor)
 * -> cumsum (CPU only) -> conv. The ANE segment before the CPU op is probed (its first op,
 * "m1"); the model as a whole is above the work floor (ANE071), and what follows the CPU op
 * stays on the CPU with it (ANE074). */
static bool b_segment(const struct family *f, const char *v, const char *stem, struct al_buf *out,
		      const char **probed, al_diags *d)
{
	bool conv = strcmp(v, "conv") == 0;
	int n = conv ? 1 : atoi(v);
	if (n < 1 || n > 16)
		return false;
	struct al_buf b = {0};
	struct mil_in x = {"x", {1, MK_C, MK_S, MK_S}};
	mil_conv_consts(&b);
	if (conv)
		mil_conv(&b, "x", "m1", MK_C, MK_S);
	for (int i = 1; !conv && i <= n; i++) {
		char prev[16];
		snprintf(prev, sizeof prev, i == 1 ? "x" : "m%d", i - 1);
		ali_buf_printf(&b, "        tensor<fp16, [1, %d, %d, %d]> m%d = relu(x = %s)[name = tensor<string, []>(\"m%d\")];\n",
			MK_C, MK_S, MK_S, i, prev, i);
	}
	ali_buf_printf(&b, "        tensor<int32, []> ax = const()[name = tensor<string, []>(\"ax\"), val = tensor<int32, []>(3)];\n");
	ali_buf_printf(&b, "        tensor<fp16, [1, %d, %d, %d]> c1 = cumsum(x = m%d, axis = ax)" NAMED("c1") ";\n", MK_C, MK_S, MK_S, n);
	mil_conv(&b, "c1", "y", MK_C, MK_S);
	*probed = "m1";
	bool ok = mil_model(stem, "ios17", &x, 1, 0, &b, out, d);
	ali_buf_free(&b);
	return ok;
}

/* The state width (ANE047): the stateful conv RNN of coremltools #2631, its state
 * [1, 16, 64, W] read, concatenated with x [1, 3, 64, W], convolved, tanh, written back
 * (opset ios18: states load from iOS 18). */
static bool b_state(const struct family *f, const char *v, const char *stem, struct al_buf *out,
		    const char **probed, al_diags *d)
{
	int w = atoi(v);
	if (w < 1 || w > 4096)
		return false;
	struct al_buf b = {0};
	struct mil_in x[2] = {{"x", {1, 3, 64, w}}, {"hidden", {1, 16, 64, w}}};
	mil_conv_consts(&b);
	ali_buf_printf(&b, "        tensor<fp16, [1, 16, 64, %d]> h_read = read_state(input = hidden)" NAMED("h_read") ";\n", w);
	ali_buf_printf(&b, "        tensor<int32, []> cax = const()[name = tensor<string, []>(\"cax\"), val = tensor<int32, []>(1)];\n");
	ali_buf_printf(&b, "        tensor<bool, []> cil = const()[name = tensor<string, []>(\"cil\"), val = tensor<bool, []>(false)];\n");
	ali_buf_printf(&b, "        tensor<fp16, [1, 19, 64, %d]> xh = concat(values = (x, h_read), axis = cax, interleave = cil)" NAMED("xh")
		    ";\n", w);
	ali_buf_printf(&b, "        tensor<fp16, [16, 19, 3, 3]> cw = const()[name = tensor<string, []>(\"cw\"), val = tensor<fp16, [16, 19, 3, 3]>([");
	for (int i = 0; i < 16 * 19 * 9; i++)
		ali_buf_put(&b, i ? ", 0" : "0", i ? 3 : 1);
	ali_buf_printf(&b, "])];\n");
	ali_buf_printf(&b, "        tensor<fp16, [1, 16, 64, %d]> cc = conv(x = xh, weight = cw, strides = cs, pad_type = cpt, pad = cpad, "
		    "dilations = cd, groups = cg)" NAMED("cc") ";\n", w);
	ali_buf_printf(&b, "        tensor<fp16, [1, 16, 64, %d]> y = tanh(x = cc)" NAMED("y") ";\n", w);
	ali_buf_printf(&b, "        tensor<fp16, [1, 16, 64, %d]> h_write = write_state(input = hidden, data = y)" NAMED("h_write") ";\n", w);
	*probed = "y";
	bool ok = mil_model(stem, "ios18", x, 2, 1, &b, out, d);
	ali_buf_free(&b);
	return ok;
}

/* Axis caps in an ML Program (ANE061): a 1x1 conv of 128 channels over x [1, 128, 1, W]
 * (33 kFLOP per column: 537 MFLOP at W = 16384). */
static bool b_mil_axis(const struct family *f, const char *v, const char *stem, struct al_buf *out,
		       const char **probed, al_diags *d)
{
	int w = atoi(v);
	if (w < 1 || w > 1 << 20)
		return false;
	struct al_buf b = {0};
	struct mil_in x = {"x", {1, 128, 1, w}};
	mil_conv_consts(&b);
	ali_buf_printf(&b, "        tensor<fp16, [128, 128, 1, 1]> aw = const()[name = tensor<string, []>(\"aw\"), "
		    "val = tensor<fp16, [128, 128, 1, 1]>([");
	for (int i = 0; i < 128 * 128; i++)
		ali_buf_put(&b, i ? ", 0" : "0", i ? 3 : 1);
	ali_buf_printf(&b, "])];\n");
	ali_buf_printf(&b, "        tensor<fp16, [1, 128, 1, %d]> y = conv(x = x, weight = aw, strides = cs, pad_type = cpt, pad = cpad, "
		    "dilations = cd, groups = cg)" NAMED("y") ";\n", w);
	*probed = "y";
	bool ok = mil_model(stem, "ios17", &x, 1, 0, &b, out, d);
	ali_buf_free(&b);
	return ok;
}

/* The in-graph KV-cache update (ANE048): a linear projection of x [1, 1, 64] written into row 0
 * of a state [1, 1, 32, 64] by slice_update of its read_state, the updated cache then read by
 * attention (matmul of the projection with it, softmax) (opset ios18). */
static bool b_kv(const struct family *f, const char *v, const char *stem, struct al_buf *out,
		 const char **probed, al_diags *d)
{
	struct al_buf b = {0};
	struct mil_in x[2] = {{"x", {1, 1, 64, 0}}, {"kc", {1, 1, 32, 64}}};
	static const char *const i4[] = {"b0", "[0, 0, 0, 0]", "e0", "[1, 1, 1, 64]", "s1", "[1, 1, 1, 1]",
					 "rs", "[1, 1, 1, 64]"};
	for (int i = 0; i < 8; i += 2)
		ali_buf_printf(&b, "        tensor<int32, [4]> %s = const()[name = tensor<string, []>(\"%s\"), val = tensor<int32, [4]>(%s)];\n",
			i4[i], i4[i], i4[i + 1]);
	ali_buf_printf(&b, "        tensor<bool, [4]> fm = const()[name = tensor<string, []>(\"fm\"), "
		    "val = tensor<bool, [4]>([false, false, false, false])];\n");
	ali_buf_printf(&b, "        tensor<fp16, [64, 64]> lw = const()[name = tensor<string, []>(\"lw\"), val = tensor<fp16, [64, 64]>([");
	for (int i = 0; i < 64 * 64; i++)
		ali_buf_put(&b, i ? ", 0" : "0", i ? 3 : 1);
	ali_buf_printf(&b, "])];\n");
	ali_buf_printf(&b, "        tensor<fp16, [64]> lb = const()[name = tensor<string, []>(\"lb\"), val = tensor<fp16, [64]>([");
	for (int i = 0; i < 64; i++)
		ali_buf_put(&b, i ? ", 0" : "0", i ? 3 : 1);
	ali_buf_printf(&b, "])];\n");
	ali_buf_printf(&b, "        tensor<fp16, [1, 1, 64]> p = linear(x = x, weight = lw, bias = lb)" NAMED("p") ";\n");
	ali_buf_printf(&b, "        tensor<fp16, [1, 1, 1, 64]> u = reshape(x = p, shape = rs)" NAMED("u") ";\n");
	ali_buf_printf(&b, "        tensor<fp16, [1, 1, 32, 64]> kr = read_state(input = kc)" NAMED("kr") ";\n");
	ali_buf_printf(&b, "        tensor<fp16, [1, 1, 32, 64]> ku = slice_update(x = kr, update = u, begin = b0, end = e0, stride = s1, "
		    "begin_mask = fm, end_mask = fm, squeeze_mask = fm)" NAMED("ku") ";\n");
	ali_buf_printf(&b, "        tensor<fp16, [1, 1, 32, 64]> kw = write_state(input = kc, data = ku)" NAMED("kw") ";\n");
	/* attention reads the updated cache (scores of the projection against every row): what
	 * makes it a KV cache for ANE048, not a recurrent state written back */
	ali_buf_printf(&b, "        tensor<bool, []> tf = const()[name = tensor<string, []>(\"tf\"), val = tensor<bool, []>(false)];\n");
	ali_buf_printf(&b, "        tensor<bool, []> tt = const()[name = tensor<string, []>(\"tt\"), val = tensor<bool, []>(true)];\n");
	ali_buf_printf(&b, "        tensor<int32, []> ax = const()[name = tensor<string, []>(\"ax\"), val = tensor<int32, []>(-1)];\n");
	ali_buf_printf(&b, "        tensor<fp16, [1, 1, 1, 32]> sc = matmul(x = u, y = ku, transpose_x = tf, transpose_y = tt)"
		    NAMED("sc") ";\n");
	ali_buf_printf(&b, "        tensor<fp16, [1, 1, 1, 32]> y = softmax(x = sc, axis = ax)" NAMED("y") ";\n");
	*probed = "p";
	bool ok = mil_model(stem, "ios18", x, 2, 1, &b, out, d);
	ali_buf_free(&b);
	return ok;
}

/* ================================================================ the family table */

struct family {
	const char *prefix;  /* a probe's file stem: prefix + value */
	const char *rule;    /* the rule it decides; NULL: a layer kind / op type's ANE status */
	bool mil;            /* ML Program (.mlpackage) or NeuralNetwork (.mlmodel) */
	build_fn build;
	const char *param;   /* what varies */
	const char *values[8]; /* NULL-terminated; none: one probe, named prefix (kinds: derived) */
	const char *question;
	const char *label; /* the value in the manifest of a family without values */
};

static const struct family families[] = {
	/* ANE014: fp16 conv kernel width cap, 13 (H13) or 15 (H16+); confidence M, disputed */
	{"conv_kw", "ANE014", false, b_conv_kw, "kernel width", {"12", "13", "14", "15", "16"},
	 "the fp16 conv kernel width cap per chip", NULL},
	/* ANE004 / ANE019: dilated convolution, contradicted between sources */
	{"conv_dil", "ANE004", false, b_conv_dil, "dilation", {"1", "2", "4"}, "dilated conv: falls back, or runs at a cost", NULL},
	/* ANE009 / ANE055: pooling strides the ANE takes (1, 2, 4? stride 4 before iOS 15?), disputed */
	{"pool_s", "ANE009", false, b_pool, "pooling stride", {"1", "2", "3"}, "pooling stride limit (1, 2 and 4, or 1 and 2)", NULL},
	{"pool_s", "ANE055", false, b_pool, "pooling stride", {"4"}, "stride 4 refused on iOS 14, taken later?", NULL},
	/* the same question in an ML Program (ANE026) */
	{"mil_pool_s", "ANE026", true, b_mil_pool, "pooling stride", {"2", "3", "4"}, "ML Program max_pool stride limit", NULL},
	/* ANE066: softplus on A15/M2 from iOS 17, one report (disputed by its own thread) */
	{"mil_softplus", "ANE066", true, b_mil_softplus, "op", {NULL}, "softplus on the CPU on A15/M2 only?", "softplus"},
	/* ANE060: mul by a non-constant [C, 1, 1] tensor, confidence G (by analogy) */
	{"mil_chmul", "ANE060", true, b_mil_chmul, "op", {NULL}, "channel-broadcast mul by a non-constant",
	 "mul by [C, 1, 1] input"},
	/* issue #30 item 8: the rules whose scope or threshold is uncertain */
	{"work_s", "ANE071", false, b_work, "spatial size of one 3x3 conv of 64 channels (H = W)",
	 {"16", "32", "48", "64", "96"},
	 "does Core ML keep a one-convolution model below the work floor (200 MFLOP; 16 -> 19, 32 -> 75, "
	 "48 -> 170, 64 -> 302, 96 -> 680 MFLOP) on the CPU on this release?", NULL},
	{"segment_", "ANE072", true, b_segment, "the ANE work before a CPU-only cumsum: 1 or 4 relus, or a conv",
	 {"1", "4", "conv"},
	 "does Core ML keep a small ANE segment next to a CPU-only op on the CPU with it on this release?", NULL},
	{"flex_", "ANE040", false, b_flex, "input shape flexibility of a conv model (kind and size; default 1x64x64x64)",
	 {"range_128", "range_1024", "range_unbounded", "enum_2", "enum_8"},
	 "does a flexible input (a range, or enumerated shapes) move a conv model off the ANE on this release?", NULL},
	{"axis_w", "ANE051", false, b_axis, "width of a [1, 128, 1, W] input to a 1x1 conv", {"16384", "16385", "65536", "65537"},
	 "the per-axis cap of the ANE compiler (16384 through A16/M3, 65536 from A17 Pro/M4) on this chip", NULL},
	{"mil_axis_w", "ANE061", true, b_mil_axis, "width of a [1, 128, 1, W] input to a 1x1 conv",
	 {"16384", "16385", "65537"},
	 "the per-axis cap of the ANE compiler in an ML Program (16384 through A16/M3, 65536 from A17 Pro/M4) on "
	 "this chip", NULL},
	{"sdpa_", "ANE067", true, b_sdpa, "query shape heads x length x depth",
	 {"8x512x64", "16x1024x64", "16x2048x64", "32x1024x128"},
	 "does Core ML keep scaled_dot_product_attention on the CPU below 2M query elements (2^21) on this "
	 "chip and release?", NULL},
	{"state_w", "ANE047", true, b_state, "the last axis of the state of a stateful conv RNN", {"256", "270", "288"},
	 "does a state whose last axis is not a multiple of 32 keep a stateful model off the ANE on this chip and "
	 "release?", NULL},
	{"kv_", "ANE048", true, b_kv, "an in-graph KV-cache update (slice_update of a read_state) after a linear",
	 {"linear"},
	 "does a KV-cache state updated in the graph with linear projections keep the model off the ANE on this "
	 "chip and release?", NULL},
	/* derived: every kind the kind status has no evidence for on some release, that a builder can write */
	{"nn_layer_", NULL, false, b_nn_kind, "NeuralNetwork layer kind (after a 3x3 conv of [1, 32, 128, 128])", {NULL},
	 "does this layer kind run on the ANE on this release (no report saw it there)?", NULL},
	{"mil_op_", NULL, true, b_mil_kind, "ML Program op (after a 3x3 conv of [1, 32, 128, 128])", {NULL},
	 "does this op run on the ANE on this release (no report saw it there)?", NULL},
};
#define N_FAMILIES (sizeof families / sizeof families[0])

/* Rules that are uncertain somewhere but have no probe family, and why (a rule not here
 * and without a family is listed as "no probe family yet"). */
static const struct {
	const char *rule, *why;
} not_probed[] = {
	{"ANE038", "needs a weight blob with per-block int4 constexpr weights, which probe does not write"},
};

/* ================================================================ output */

static const char manifest_pkg[] =
	"{\n    \"fileFormatVersion\": \"1.0.0\",\n    \"itemInfoEntries\": {\n"
	"        \"7A3B5C1E-0F2D-4C6B-9E8A-1D2C3B4A5F60\": {\n"
	"            \"author\": \"com.apple.CoreML\",\n"
	"            \"description\": \"CoreML Model Specification\",\n"
	"            \"name\": \"model.mlmodel\",\n"
	"            \"path\": \"com.apple.CoreML/model.mlmodel\"\n        }\n    },\n"
	"    \"rootModelIdentifier\": \"7A3B5C1E-0F2D-4C6B-9E8A-1D2C3B4A5F60\"\n}\n";

struct mem {
	const void *p;
	size_t n;
};

static bool fill(int fd, void *ctx)
{
	struct mem *m = ctx;
	return ali_write_all(fd, m->p, m->n);
}

/* Moves the errors of one step (from) into the caller's diagnostics (to), each naming
 * file when it names none; fallback when the step failed without saying why. */
void ali_cmd_pass_errors(al_diags *to, const al_diags *from, const char *file, const char *fallback)
{
	size_t n = 0;
	for (size_t i = 0; from && i < al_diags_count(from); i++) {
		const struct al_diag *x = al_diags_get(from, i);
		if (x->severity != AL_SEV_ERROR)
			continue;
		n++;
		ali_diag_add(to, AL_SEV_ERROR, x->file ? x->file : file, x->offset, x->where, x->node, "%s", x->msg);
	}
	if (!n)
		ali_diag_add(to, AL_SEV_ERROR, file, UINT64_MAX, NULL, NULL, "%s", fallback);
}

/* Writes dir/name whole or not at all: AL_OK, or AL_E_IO with the error in d. */
static enum al_status write_file(const char *dir, const char *name, const void *p, size_t n, al_diags *out)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
		ali_diag_add(out, AL_SEV_ERROR, dir, UINT64_MAX, NULL, NULL, "path too long");
		return AL_E_IO;
	}
	al_diags *d = al_diags_new();
	struct mem m = {p, n};
	enum al_status st = d ? ali_write_atomic(path, fill, &m, d) : AL_E_NOMEM;
	if (st != AL_OK)
		ali_cmd_pass_errors(out, d, path, "cannot load");
	al_diags_free(d);
	return st == AL_OK ? AL_OK : AL_E_IO;
}

static const char run_script[] =
	"#!/bin/sh\n"
	"# run_probes.sh: on a Mac (macOS 14.4+, coremltools >= 8), capture the compute plan of\n"
	"# every probe model here as anelint evidence, then compare and calibrate anywhere:\n"
	"#   sh run_probes.sh CHIP [path/to/tools/mac/compute_plan.py]\n"
	"#   anelint compare work_s48.mlmodel work_s48.evidence.json     (one per probe: .mlmodel\n"
	"#   and .mlpackage; manifest.json says what each decides and which fields settle it)\n"
	"#   anelint calibrate work_s48.mlmodel work_s48.evidence.json -o CHIP.1.rules\n"
	"#   anelint calibrate sdpa_8x512x64.mlpackage sdpa_8x512x64.evidence.json --rules CHIP.1.rules \\\n"
	"#       -o CHIP.2.rules     (one probe at a time, each adding to the rules so far)\n"
	"set -eu\n"
	"chip=${1:?chip family, e.g. m1 or a17}\n"
	"cp=${2:-compute_plan.py}\n"
	"cd \"$(dirname \"$0\")\"\n"
	"for m in *.mlmodel *.mlpackage; do\n"
	"\t[ -e \"$m\" ] || continue\n"
	"\tpython3 \"$cp\" \"$m\" --chip \"$chip\" -o \"${m%.*}.evidence.json\"\n"
	"done\n";

static json_object *jstr(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

/* Whether rule id fired on node n or on its sub-model (a finding), or moved n. */
static bool rule_fired(const struct al_submodel *s, const struct al_node *n, const char *id)
{
	for (uint32_t i = 0; n && i < n->verdict.n_rules; i++)
		if (n->verdict.rules[i] && strcmp(n->verdict.rules[i]->id, id) == 0)
			return true;
	for (uint32_t i = 0; s && i < s->n_findings; i++)
		if (s->findings[i].rule && strcmp(s->findings[i].rule->id, id) == 0)
			return true;
	return n && n->verdict.moved_by && strcmp(n->verdict.moved_by->id, id) == 0;
}

static const struct al_node *find_node(const struct al_submodel *s, const char *name)
{
	if (!s || !s->n_graphs)
		return NULL;
	const struct al_graph *g = s->graphs[0];
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (g->nodes[i].name && strcmp(g->nodes[i].name, name) == 0)
			return &g->nodes[i];
	return NULL;
}

/* Where the evidence of rule r does not reach although r is evaluated there: per
 * release, "all" or the chip families; NULL when r decides everywhere it is evaluated. */
static json_object *rule_uncertain_on(const struct al_rule *r)
{
	struct al_rule_evidence e;
	al_rule_evidence_of(r, &e);
	json_object *o = NULL;
	for (size_t ri = 0; ri < al_releases_count(); ri++) {
		json_object *fams = json_object_new_array();
		size_t n_eval = 0, n_unsure = 0;
		for (size_t ti = 0; ti < al_targets_count(); ti++) {
			if (!al_rule_evaluated(r, ti, ri))
				continue;
			n_eval++;
			if (!al_rule_decides_at(r, e.detail, al_target_at(ti), al_release_at(ri))) {
				n_unsure++;
				json_object_array_add(fams, json_object_new_string(al_target_at(ti)->id));
			}
		}
		if (n_unsure == 0) {
			json_object_put(fams);
			continue;
		}
		if (!o)
			o = json_object_new_object();
		if (n_unsure == n_eval) {
			json_object_put(fams);
			fams = json_object_new_string("all");
		}
		json_object_object_add(o, al_release_at(ri)->id, fams);
	}
	return o;
}

/* The releases (from the first the probe loads on) where a kind has no evidence. */
static json_object *kind_uncertain_on(bool nn, const char *type, int since)
{
	json_object *a = NULL;
	for (size_t ri = 0; ri < al_releases_count(); ri++) {
		const struct al_release *r = al_release_at(ri);
		if (r->ios < since || al_kind_ane_status(nn, type, r, NULL) != '?')
			continue;
		if (!a)
			a = json_object_new_array();
		json_object_array_add(a, json_object_new_string(r->id));
	}
	return a;
}

struct probe_out {
	const char *dir;
	json_object *probes;   /* the manifest's array */
	json_object *probed;   /* rule id -> array of family prefixes */
	size_t n;
	al_diags *errors;      /* the caller's: the first failure's errors */
};

/* An ML Program probe is a package: Manifest.json and Data/com.apple.CoreML/model.mlmodel
 * under path (dir/file), the model b. AL_OK, or AL_E_IO with the error in po->errors. */
static enum al_status write_package(struct probe_out *po, const char *file, const struct al_buf *b, char *path,
				    size_t cap)
{
	enum al_status rc = AL_OK;
	snprintf(path, cap, "%s/%s", po->dir, file);
	char data[4300], cm[4400];
	snprintf(data, sizeof data, "%s/Data", path);
	snprintf(cm, sizeof cm, "%s/Data/com.apple.CoreML", path);
	if ((mkdir(path, 0777) != 0 && errno != EEXIST) || (mkdir(data, 0777) != 0 && errno != EEXIST) ||
	    (mkdir(cm, 0777) != 0 && errno != EEXIST)) {
		ali_diag_add(po->errors, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL, "%s", strerror(errno));
		rc = AL_E_IO;
	}
	if (rc == AL_OK)
		rc = write_file(path, "Manifest.json", manifest_pkg, sizeof manifest_pkg - 1, po->errors);
	if (rc == AL_OK)
		rc = write_file(cm, "model.mlmodel", b->p, b->n, po->errors);
	return rc;
}

/* What anelint predicts for probe m (its probed layer/op): 1. its own unit on every
 * chip family, newest release (manifest version 1), into own; 2. its placement,
 * verdict and p_ane on the default chip, per release it loads on (from `since`), into
 * by_rel. The status of the checks. */
static enum al_status predict_units(al_model *m, const char *probed, int since, json_object *own,
				    json_object *by_rel, al_diags *d)
{
	enum al_status st = AL_OK;
	const struct al_target *dt = al_target_default();
	for (size_t t = 0; st == AL_OK && t < al_targets_count(); t++) {
		struct al_check_opts o = {.target = al_target_at(t)};
		st = al_model_check(m, &o, d);
		const struct al_node *n = st == AL_OK ? find_node(al_model_get(m, 0), probed) : NULL;
		if (n)
			json_object_object_add(own, al_target_at(t)->id, json_object_new_string(al_unit_name(n->verdict.unit)));
	}
	for (size_t ri = 0; st == AL_OK && ri < al_releases_count(); ri++) {
		const struct al_release *r = al_release_at(ri);
		if (r->ios < since)
			continue;
		struct al_check_opts o = {.target = dt, .os = r};
		st = al_model_check(m, &o, d);
		const struct al_node *n = st == AL_OK ? find_node(al_model_get(m, 0), probed) : NULL;
		if (!n)
			continue;
		json_object *e = json_object_new_object();
		json_object_object_add(e, "unit", json_object_new_string(al_unit_name(n->verdict.placed)));
		json_object_object_add(e, "verdict", json_object_new_string(al_ane_verdict_name(n->verdict.verdict)));
		json_object_object_add(e, "p_ane", json_object_new_double(round(n->verdict.p_ane * 1000.0) / 1000.0));
		json_object_object_add(by_rel, r->id, e);
	}
	return st;
}

/* 3. What probe m shows if the rule holds and if it does not: at a chip and release
 * inside the rule's evidence (else the defaults), whether the rule fires on the
 * probe; into *expect (NULL: the probed layer/op is not in the model). */
static enum al_status predict_expect(al_model *m, const struct al_rule *rule, const char *probed, int since,
				     json_object **expect, al_diags *d)
{
	enum al_status st;
	const struct al_target *dt = al_target_default();
	const struct al_target *et = dt;
	const struct al_release *er = al_release_default();
	if (rule) {
		struct al_rule_evidence e;
		al_rule_evidence_of(rule, &e);
		bool found = false;
		for (size_t ri = al_releases_count(); ri-- > 0 && !found;)
			for (size_t ti = al_targets_count(); ti-- > 0 && !found;)
				if ((e.families >> ti & 1u) && (e.releases >> ri & 1u) && al_rule_evaluated(rule, ti, ri) &&
				    (int)al_release_at(ri)->ios >= since)
					et = al_target_at(ti), er = al_release_at(ri), found = true;
	}
	struct al_check_opts o = {.target = et, .os = er};
	st = al_model_check(m, &o, d);
	const struct al_submodel *s = st == AL_OK ? al_model_get(m, 0) : NULL;
	const struct al_node *n = find_node(s, probed);
	json_object *x = NULL;
	if (n) {
		x = json_object_new_object();
		json_object_object_add(x, "target", json_object_new_string(et->id));
		json_object_object_add(x, "os", json_object_new_string(er->id));
		/* a fallback rule that fires: its unit if it holds, the ANE if not (and the
		 * reverse when it does not fire: the other side of its threshold); a warning
		 * of ANE work (unit ane) that fires: the ANE, or off it; a kind: the ANE if
		 * it is supported there, else off it */
		bool fires = rule && rule_fired(s, n, rule->id);
		bool warn = rule && rule->kind == AL_RULE_WARN;
		const char *off = rule && !warn ? al_unit_name(rule->unit) : "not_ane";
		const char *holds = warn ? "ane" : fires ? off : "ane";
		const char *other = warn ? (fires ? "not_ane" : "ane") : fires ? "ane" : off;
		if (rule)
			json_object_object_add(x, "rule_fires", json_object_new_boolean(fires));
		json_object_object_add(x, "if_rule_holds", json_object_new_string(holds));
		json_object_object_add(x, "if_not", json_object_new_string(other));
	}
	*expect = x;
	return st;
}

/* How to settle probe file (stem, the probed layer/op, the value varied): which
 * fields of compare / calibrate. */
static json_object *settle_json(const struct family *f, const char *file, const char *stem, const char *probed,
				const char *value)
{
	char cmp[900], cal[900];
	snprintf(cmp, sizeof cmp,
		 "anelint compare %s %s.evidence.json --format json: evidence[0].evidence_chip and evidence_os (where it "
		 "ran), evidence[0].disagreements[] with name '%s'%s (predicted vs observed; none: agreed)%s%s%s",
		 file, stem, probed, f->mil ? "" : " or its output 'y'", f->rule ? ", evidence[0].rules[] with rule " : "",
		 f->rule ? f->rule : "",
		 f->rule ? " (right / wrong)" : "");
	if (f->rule)
		snprintf(cal, sizeof cal,
			 "anelint calibrate %s %s.evidence.json -o CHIP.rules: observed on the ANE where %s fired -> an "
			 "override of %s with 'off: CHIP@RELEASE'; observed off the ANE where it did not fire -> a new rule "
			 "CALnnn for the %s on CHIP@RELEASE",
			 file, stem, f->rule, f->rule, f->mil ? "op type" : "layer type");
	else
		snprintf(cal, sizeof cal,
			 "anelint calibrate %s %s.evidence.json -o CHIP.rules: observed off the ANE -> a new rule CALnnn "
			 "for %s on CHIP@RELEASE; observed on the ANE -> a warn rule CALnnn of unit ane for %s on "
			 "CHIP@RELEASE, with which the verdict there is 'ane' instead of 'uncertain'",
			 file, stem, value, value);
	json_object *settle = json_object_new_object();
	json_object_object_add(settle, "compare", json_object_new_string(cmp));
	json_object_object_add(settle, "calibrate", json_object_new_string(cal));
	return settle;
}

/* Probe file's manifest entry: what it varies and asks, what anelint predicts (own,
 * by_rel, expect: taken), how to settle it. */
static json_object *manifest_entry(const struct family *f, const char *value, const char *stem, const char *file,
				   const char *probed, int since, const struct al_rule *rule, json_object *own,
				   json_object *by_rel, json_object *expect)
{
	const struct al_target *dt = al_target_default();
	json_object *e = json_object_new_object();
	json_object_object_add(e, "file", json_object_new_string(file));
	json_object_object_add(e, "family", json_object_new_string(f->prefix));
	json_object_object_add(e, "model_type", json_object_new_string(f->mil ? "mlProgram" : "neuralNetwork"));
	json_object_object_add(e, "rule", jstr(f->rule));
	if (!f->rule) {
		json_object *k = json_object_new_object();
		json_object_object_add(k, "world", json_object_new_string(f->mil ? "mlProgram" : "neuralNetwork"));
		json_object_object_add(k, "type", json_object_new_string(value));
		json_object_object_add(k, "no_evidence_on", kind_uncertain_on(!f->mil, value, since));
		json_object_object_add(e, "kind", k);
	} else {
		json_object *u = rule ? rule_uncertain_on(rule) : NULL;
		if (u)
			json_object_object_add(e, "uncertain_on", u);
	}
	json_object_object_add(e, "parameter", json_object_new_string(f->param));
	/* the value varied: a number where it is one (manifest version 1 wrote numbers) */
	char *endp = NULL;
	long num = *value ? strtol(value, &endp, 10) : 0;
	if (!*value)
		json_object_object_add(e, "value", json_object_new_string(f->label ? f->label : ""));
	else if (endp && !*endp)
		json_object_object_add(e, "value", json_object_new_int64(num));
	else
		json_object_object_add(e, "value", json_object_new_string(value));
	json_object_object_add(e, "question", json_object_new_string(f->question));
	json_object_object_add(e, "probed_op", json_object_new_string(probed));
	char since_id[16];
	snprintf(since_id, sizeof since_id, "ios%d", since);
	json_object_object_add(e, "loads_from", json_object_new_string(since_id));
	json_object_object_add(e, "expect", expect);
	json_object_object_add(e, "predicted_own_unit", own);
	json_object *pr = json_object_new_object();
	json_object_object_add(pr, "target", json_object_new_string(dt->id));
	json_object_object_add(pr, "releases", by_rel);
	json_object_object_add(e, "predicted", pr);
	json_object_object_add(e, "settle", settle_json(f, file, stem, probed, value));
	return e;
}

/* Writes one probe (family f, value v; kinds: v is the type) and its manifest entry:
 * AL_OK; AL_E_FORMAT for a probe anelint cannot build or read back (a bug), AL_E_IO for
 * one it cannot write, the errors in po->errors. */
static enum al_status one_probe(struct probe_out *po, const struct family *f, const char *v)
{
	char stem[128], file[160], path[4200];
	const char *value = v ? v : "";
	snprintf(stem, sizeof stem, "%s%s", f->prefix, value);
	snprintf(file, sizeof file, "%s.%s", stem, f->mil ? "mlpackage" : "mlmodel");
	struct al_buf b = {0};
	const char *probed = NULL;
	al_diags *d = al_diags_new();
	if (!d || !f->build(f, value, stem, &b, &probed, d)) {
		if (d && al_diags_count(d))
			ali_cmd_pass_errors(po->errors, d, file, "cannot load");
		else
			ali_cmd_pass_errors(po->errors, NULL, file, "probe model not built");
		al_diags_free(d);
		ali_buf_free(&b);
		return AL_E_FORMAT;
	}
	enum al_status rc = f->mil ? write_package(po, file, &b, path, sizeof path) : AL_OK;
	if (rc != AL_OK) {
		al_diags_free(d);
		ali_buf_free(&b);
		return rc;
	}
	/* what anelint predicts for it, and the probe must load */
	al_model *m = NULL;
	enum al_status st = f->mil ? al_model_open(path, &m, d) : al_model_open_buffer(b.p, b.n, NULL, 0, file, &m, d);
	const struct al_rule *rule = f->rule ? al_rule_find(f->rule) : NULL;
	int since = 0; /* the first iOS release the probe loads on */
	if (st == AL_OK) {
		const struct al_submodel *s = al_model_get(m, 0);
		since = s && s->spec_version >= 4 ? s->spec_version + 9 : 13; /* specification 4: iOS 13, ... 9: iOS 18 */
	}
	json_object *own = json_object_new_object(), *by_rel = json_object_new_object(), *expect = NULL;
	if (st == AL_OK)
		st = predict_units(m, probed, since, own, by_rel, d);
	if (st == AL_OK)
		st = predict_expect(m, rule, probed, since, &expect, d);
	if (st != AL_OK || !expect) {
		if (st != AL_OK)
			ali_cmd_pass_errors(po->errors, d, file, "cannot load");
		else
			ali_diag_add(po->errors, AL_SEV_ERROR, file, UINT64_MAX, NULL, NULL,
				     "the probed layer/op '%s' is not in the probe", probed ? probed : "?");
		rc = AL_E_FORMAT; /* a probe anelint cannot read is a bug */
	}
	al_model_free(m);
	al_diags_free(d);
	if (rc == AL_OK && !f->mil)
		rc = write_file(po->dir, file, b.p, b.n, po->errors);
	ali_buf_free(&b);
	if (rc != AL_OK) {
		json_object_put(own);
		json_object_put(by_rel);
		json_object_put(expect);
		return rc;
	}
	json_object *e = manifest_entry(f, value, stem, file, probed, since, rule, own, by_rel, expect);
	json_object_array_add(po->probes, e);
	po->n++;
	if (f->rule) {
		json_object *a = NULL;
		if (!json_object_object_get_ex(po->probed, f->rule, &a)) {
			a = json_object_new_array();
			json_object_object_add(po->probed, f->rule, a);
		}
		size_t n = json_object_array_length(a);
		if (!n || strcmp(json_object_get_string(json_object_array_get_idx(a, n - 1)), f->prefix) != 0)
			json_object_array_add(a, json_object_new_string(f->prefix));
	}
	return AL_OK;
}

/* Every kind of one world with no evidence on a release its probe loads on: a probe
 * when the builder can write it, else a "not probed" entry. */
static enum al_status kind_probes(struct probe_out *po, const struct family *f, json_object *unprobed)
{
	size_t n = f->mil ? ali_mil_kinds_count : ali_nn_kinds_count;
	int since = f->mil ? 16 : 13; /* the opsets the builders write: fp16 I/O from iOS 16; specification 4 */
	for (size_t k = 0; k < n; k++) {
		const char *type = f->mil ? ali_mil_kinds[k].name : ali_nn_kinds[k].name;
		if ((f->mil ? ali_mil_kinds[k].flags : ali_nn_kinds[k].flags) != 0)
			continue; /* a rule decides these kinds (CPU-only, gather, control flow, ...) */
		json_object *no_ev = kind_uncertain_on(!f->mil, type,
						       f->mil && ali_mil_kinds[k].since > since ? ali_mil_kinds[k].since : since);
		if (!no_ev)
			continue;
		struct nn_layer probe_layer = {0};
		bool buildable = f->mil ? mil_call_form(type) != CALL_NONE : nn_kind_params(type, &probe_layer);
		ali_buf_free(&probe_layer.params);
		if (buildable) {
			json_object_put(no_ev);
			enum al_status rc = one_probe(po, f, type);
			if (rc != AL_OK)
				return rc;
			continue;
		}
		json_object *e = json_object_new_object();
		json_object_object_add(e, "world", json_object_new_string(f->mil ? "mlProgram" : "neuralNetwork"));
		json_object_object_add(e, "type", json_object_new_string(type));
		json_object_object_add(e, "no_evidence_on", no_ev);
		json_object_array_add(unprobed, e);
	}
	return AL_OK;
}

/* The manifest's rules section: every rule uncertain somewhere it is evaluated, with the
 * families that probe it, or why none does. */
static json_object *uncertain_rules(json_object *probed)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < al_rules_count(); i++) {
		const struct al_rule *r = al_rule_at(i);
		json_object *u = rule_uncertain_on(r);
		if (!u)
			continue;
		json_object *e = json_object_new_object(), *fams = NULL;
		json_object_object_add(e, "rule", json_object_new_string(r->id));
		json_object_object_add(e, "uncertain_on", u);
		if (json_object_object_get_ex(probed, r->id, &fams)) {
			json_object_object_add(e, "families", json_object_get(fams));
		} else {
			const char *why = "no probe family yet: add a row to the family table of src/command/probe.c";
			for (size_t k = 0; k < sizeof not_probed / sizeof not_probed[0]; k++)
				if (strcmp(not_probed[k].rule, r->id) == 0)
					why = not_probed[k].why;
			json_object_object_add(e, "not_probed", json_object_new_string(why));
		}
		json_object_array_add(a, e);
	}
	return a;
}

enum al_status al_probes_write(const struct al_probe_opts *o, struct al_probe_result *res, al_diags *d)
{
	if (!o || !o->dir || !res)
		return AL_E_INVALID_ARG;
	memset(res, 0, sizeof *res);
	if (mkdir(o->dir, 0777) != 0 && errno != EEXIST) {
		ali_diag_add(d, AL_SEV_ERROR, o->dir, UINT64_MAX, NULL, NULL, "%s", strerror(errno));
		res->exit_code = 4;
		return AL_E_IO;
	}
	json_object *man = json_object_new_object(), *unprobed_kinds = json_object_new_array();
	struct probe_out po = {o->dir, json_object_new_array(), json_object_new_object(), 0, d};
	enum al_status rc = AL_OK;
	for (size_t i = 0; i < N_FAMILIES && rc == AL_OK; i++) {
		const struct family *f = &families[i];
		if (!f->rule)
			rc = kind_probes(&po, f, unprobed_kinds);
		else if (!f->values[0])
			rc = one_probe(&po, f, NULL);
		for (size_t k = 0; f->rule && k < 8 && f->values[k] && rc == AL_OK; k++)
			rc = one_probe(&po, f, f->values[k]);
	}
	json_object_object_add(man, "schema", json_object_new_string("anelint-probes"));
	json_object_object_add(man, "version", json_object_new_int(2));
	json_object_object_add(man, "anelint", json_object_new_string(ANELINT_VERSION));
	json_object_object_add(man, "probes", po.probes);
	json_object_object_add(man, "uncertain_rules", uncertain_rules(po.probed));
	json_object_object_add(man, "kinds_not_probed", unprobed_kinds);
	json_object_put(po.probed);
	if (rc == AL_OK) {
		const char *s = json_object_to_json_string_ext(man, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
		rc = write_file(o->dir, "manifest.json", s, strlen(s), d);
	}
	if (rc == AL_OK)
		rc = write_file(o->dir, "run_probes.sh", run_script, sizeof run_script - 1, d);
	json_object_put(man);
	res->n_probes = po.n;
	res->exit_code = rc == AL_OK ? 0 : rc == AL_E_IO ? 4 : 3;
	return rc;
}
