/* SPDX-License-Identifier: MIT */
/* probe.c: `anelint probe -o DIR` (docs/evidence.md "Probes"): small
 * NeuralNetwork models that bisect thresholds the rule table is unsure of, a
 * manifest of what each probes and what anelint predicts for it on every chip
 * family, and a script that captures evidence for them on a Mac. */
#include "cli.h"
#include "base.h"     /* ali_write_atomic */
#include "pbsplice.h" /* al_buf: the protobuf writer */
#include "miltext.h" /* MIL text -> MILSpec.Program: the ML Program probes */

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The probe models: one convolution each, shapes large enough that the whole
 * model is not kept off the ANE for too little work (ANE071). */
#define P_C 64  /* channels in and out */
#define P_H 64
#define P_W 64

enum probe_kind {
	K_CONV,        /* NeuralNetwork convolution (kh x kw, dilation) */
	K_POOL,        /* NeuralNetwork max pooling, kernel 3, stride */
	K_MIL_POOL,    /* ML Program max_pool, kernel 3, stride */
	K_MIL_SOFTPLUS, /* ML Program softplus */
	K_MIL_CHMUL,   /* ML Program mul of x by a [C, 1, 1] input */
};

struct probe {
	const char *name;
	const char *rule;  /* the rule whose threshold it bisects */
	const char *param; /* what varies */
	int kh, kw, dil;
	enum probe_kind kind;
	int stride; /* the value varied for the pools; 0 otherwise */
	const char *why;
};

static const struct probe probes[] = {
	/* ANE014: fp16 conv kernel width cap, 13 (H13) or 15 (H16+); confidence M, disputed */
	{"conv_kw12", "ANE014", "kernel width", 3, 12, 1, K_CONV, 0, "the fp16 conv kernel width cap per chip"},
	{"conv_kw13", "ANE014", "kernel width", 3, 13, 1, K_CONV, 0, "the fp16 conv kernel width cap per chip"},
	{"conv_kw14", "ANE014", "kernel width", 3, 14, 1, K_CONV, 0, "the fp16 conv kernel width cap per chip"},
	{"conv_kw15", "ANE014", "kernel width", 3, 15, 1, K_CONV, 0, "the fp16 conv kernel width cap per chip"},
	{"conv_kw16", "ANE014", "kernel width", 3, 16, 1, K_CONV, 0, "the fp16 conv kernel width cap per chip"},
	/* ANE004 / ANE019: dilated convolution, contradicted between sources */
	{"conv_dil1", "ANE004", "dilation", 3, 3, 1, K_CONV, 0, "dilated conv: falls back, or runs at a cost"},
	{"conv_dil2", "ANE004", "dilation", 3, 3, 2, K_CONV, 0, "dilated conv: falls back, or runs at a cost"},
	{"conv_dil4", "ANE004", "dilation", 3, 3, 4, K_CONV, 0, "dilated conv: falls back, or runs at a cost"},
	/* ANE009 / ANE055: pooling strides the ANE takes (1, 2, 4? stride 4 before iOS 15?), disputed */
	{"pool_s1", "ANE009", "pooling stride", 3, 3, 1, K_POOL, 1, "pooling stride limit (1, 2 and 4, or 1 and 2)"},
	{"pool_s2", "ANE009", "pooling stride", 3, 3, 1, K_POOL, 2, "pooling stride limit (1, 2 and 4, or 1 and 2)"},
	{"pool_s3", "ANE009", "pooling stride", 3, 3, 1, K_POOL, 3, "pooling stride limit (1, 2 and 4, or 1 and 2)"},
	{"pool_s4", "ANE055", "pooling stride", 3, 3, 1, K_POOL, 4, "stride 4 refused on iOS 14, taken later?"},
	/* the same question in an ML Program (ANE026) */
	{"mil_pool_s2", "ANE026", "pooling stride", 3, 3, 1, K_MIL_POOL, 2, "ML Program max_pool stride limit"},
	{"mil_pool_s3", "ANE026", "pooling stride", 3, 3, 1, K_MIL_POOL, 3, "ML Program max_pool stride limit"},
	{"mil_pool_s4", "ANE026", "pooling stride", 3, 3, 1, K_MIL_POOL, 4, "ML Program max_pool stride limit"},
	/* ANE066: softplus on A15/M2 from iOS 17, one report (disputed by its own thread) */
	{"mil_softplus", "ANE066", "op", 0, 0, 1, K_MIL_SOFTPLUS, 0, "softplus on the CPU on A15/M2 only?"},
	/* ANE060: mul by a non-constant [C, 1, 1] tensor, confidence G (by analogy) */
	{"mil_chmul", "ANE060", "op", 0, 0, 1, K_MIL_CHMUL, 0, "channel-broadcast mul by a non-constant"},
};
#define N_PROBES (sizeof probes / sizeof probes[0])

static void put_msg(struct al_buf *b, uint32_t field, const struct al_buf *m)
{
	ali_buf_len(b, field, m->p, m->n);
}

#define DT_FLOAT32 65568
#define DT_FLOAT16 65552

/* FeatureDescription{name = 1, type = 3 {multiArrayType = 5 {shape = 1, dataType = 2}}} */
static void array_feature_dt(struct al_buf *out, const char *name, const uint64_t *shape, size_t rank, uint64_t dt)
{
	struct al_buf arr = {0}, ft = {0}, fd = {0};
	if (rank)
		ali_buf_packed(&arr, 1, shape, rank);
	ali_buf_uint(&arr, 2, dt);
	put_msg(&ft, 5, &arr);
	ali_buf_str(&fd, 1, name);
	put_msg(&fd, 3, &ft);
	ali_buf_put(out, fd.p, fd.n);
	ali_buf_free(&arr);
	ali_buf_free(&ft);
	ali_buf_free(&fd);
}

static void array_feature(struct al_buf *out, const char *name, const uint64_t *shape, size_t rank)
{
	array_feature_dt(out, name, shape, rank, DT_FLOAT32);
}

/* Model{specificationVersion 4, description 2, neuralNetwork 500 {layers 1, arrayInputShapeMapping 5 = EXACT}} */
static bool probe_model(const struct probe *p, struct al_buf *out)
{
	struct al_buf in = {0}, outf = {0}, desc = {0}, conv = {0}, w = {0}, layer = {0}, nn = {0};
	uint64_t shape[4] = {1, P_C, P_H, P_W};
	array_feature(&in, "x", shape, 4);
	array_feature(&outf, "y", NULL, 0);
	put_msg(&desc, 1, &in);
	put_msg(&desc, 10, &outf);
	/* ConvolutionLayerParams: outputChannels 1, kernelChannels 2, nGroups 10,
	 * kernelSize 20, stride 30, dilationFactor 40, valid 50, weights 90 {float16Value 2} */
	uint64_t k[2] = {(uint64_t)p->kh, (uint64_t)p->kw}, s[2] = {1, 1}, d[2] = {(uint64_t)p->dil, (uint64_t)p->dil};
	ali_buf_str(&layer, 1, p->name);
	ali_buf_str(&layer, 2, "x");
	ali_buf_str(&layer, 3, "y");
	if (p->kind == K_POOL) {
		/* PoolingLayerParams (layer field 120): type 1 (MAX = 0, the default: not
		 * written, as protobuf writes it), kernelSize 10, stride 20, valid 30 */
		uint64_t ps[2] = {(uint64_t)p->stride, (uint64_t)p->stride};
		ali_buf_packed(&conv, 10, k, 2);
		ali_buf_packed(&conv, 20, ps, 2);
		ali_buf_len(&conv, 30, NULL, 0);
		put_msg(&layer, 120, &conv);
	} else {
		ali_buf_uint(&conv, 1, P_C);
		ali_buf_uint(&conv, 2, P_C);
		ali_buf_uint(&conv, 10, 1);
		ali_buf_packed(&conv, 20, k, 2);
		ali_buf_packed(&conv, 30, s, 2);
		ali_buf_packed(&conv, 40, d, 2);
		ali_buf_len(&conv, 50, NULL, 0);
		size_t nw = (size_t)P_C * P_C * (size_t)p->kh * (size_t)p->kw * 2;
		uint8_t *zeros = calloc(nw, 1);
		if (!zeros)
			return false;
		ali_buf_len(&w, 2, zeros, nw);
		free(zeros);
		put_msg(&conv, 90, &w);
		put_msg(&layer, 100, &conv);
	}
	put_msg(&nn, 1, &layer);
	ali_buf_uint(&nn, 5, 1);
	ali_buf_uint(out, 1, 4);
	put_msg(out, 2, &desc);
	put_msg(out, 500, &nn);
	bool ok = !(in.failed || outf.failed || desc.failed || conv.failed || w.failed || layer.failed || nn.failed ||
		    out->failed);
	ali_buf_free(&in);
	ali_buf_free(&outf);
	ali_buf_free(&desc);
	ali_buf_free(&conv);
	ali_buf_free(&w);
	ali_buf_free(&layer);
	ali_buf_free(&nn);
	return ok;
}

/* An ML Program probe: MIL text (the syntax of a compiled model.mil, opset
 * ios17, fp16 input and output as coremltools writes them with fp16 I/O) turned
 * into the MILSpec.Program message by anelint's MIL text reader, in
 * Model{specificationVersion 8, description 2, mlProgram 502}. Consts are inline
 * values, as coremltools writes small ones. */
static int mil_body(const struct probe *p, char *t, size_t cap)
{
	if (p->kind == K_MIL_POOL) {
		int o = (P_H - 3) / p->stride + 1;
		return snprintf(t, cap,
				"        tensor<int32, [2]> k = const()[name = tensor<string, []>(\"k\"), val = tensor<int32, [2]>([3, 3])];\n"
				"        tensor<int32, [2]> s = const()[name = tensor<string, []>(\"s\"), val = tensor<int32, [2]>([%d, %d])];\n"
				"        tensor<string, []> pt = const()[name = tensor<string, []>(\"pt\"), val = tensor<string, []>(\"valid\")];\n"
				"        tensor<int32, [4]> pad = const()[name = tensor<string, []>(\"pad\"), val = tensor<int32, [4]>([0, 0, 0, 0])];\n"
				"        tensor<bool, []> cm = const()[name = tensor<string, []>(\"cm\"), val = tensor<bool, []>(false)];\n"
				"        tensor<fp16, [1, 64, %d, %d]> y = max_pool(x = x, kernel_sizes = k, strides = s, pad_type = pt, "
				"pad = pad, ceil_mode = cm)[name = tensor<string, []>(\"y\")];\n",
				p->stride, p->stride, o, o);
	}
	if (p->kind == K_MIL_SOFTPLUS)
		return snprintf(t, cap, "        tensor<fp16, [1, 64, 64, 64]> y = softplus(x = x)[name = tensor<string, []>(\"y\")];\n");
	return snprintf(t, cap, "        tensor<fp16, [1, 64, 64, 64]> y = mul(x = x, y = c)[name = tensor<string, []>(\"y\")];\n");
}

static bool mil_probe_model(const struct probe *p, struct al_buf *out, al_diags *d)
{
	char text[4096], body[3072];
	if (mil_body(p, body, sizeof body) >= (int)sizeof body)
		return false;
	bool chmul = p->kind == K_MIL_CHMUL;
	snprintf(text, sizeof text, "program(1.0)\n{\n    func main<ios17>(tensor<fp16, [1, 64, 64, 64]> x%s) {\n%s    } -> (y);\n}\n",
		 chmul ? ", tensor<fp16, [64, 1, 1]> c" : "", body);
	struct al_buf prog = {0}, in = {0}, in2 = {0}, outf = {0}, desc = {0};
	enum al_status st = ali_mil_text_parse((al_span){(const uint8_t *)text, strlen(text)}, p->name, &prog, d);
	uint64_t shape[4] = {1, P_C, P_H, P_W}, cshape[3] = {P_C, 1, 1};
	array_feature_dt(&in, "x", shape, 4, DT_FLOAT16);
	put_msg(&desc, 1, &in);
	if (chmul) {
		array_feature_dt(&in2, "c", cshape, 3, DT_FLOAT16);
		put_msg(&desc, 1, &in2);
	}
	array_feature_dt(&outf, "y", NULL, 0, DT_FLOAT16);
	put_msg(&desc, 10, &outf);
	ali_buf_uint(out, 1, 8);
	put_msg(out, 2, &desc);
	put_msg(out, 502, &prog);
	bool ok = st == AL_OK && !(prog.failed || in.failed || in2.failed || outf.failed || desc.failed || out->failed);
	ali_buf_free(&prog);
	ali_buf_free(&in);
	ali_buf_free(&in2);
	ali_buf_free(&outf);
	ali_buf_free(&desc);
	return ok;
}

/* The package's manifest: the one item coremltools writes (its identifier fixed
 * here, where coremltools draws a random UUID). */
static const char manifest[] =
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

static int write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
		error_at(dir, "path too long");
		return EXIT_IO;
	}
	al_diags *d = al_diags_new();
	struct mem m = {p, n};
	enum al_status st = d ? ali_write_atomic(path, fill, &m, d) : AL_E_NOMEM;
	if (st != AL_OK)
		print_errors(path, d);
	al_diags_free(d);
	return st == AL_OK ? EXIT_ALL_ANE : EXIT_IO;
}

static const char run_script[] =
	"#!/bin/sh\n"
	"# run_probes.sh: on a Mac (macOS 14.4+, coremltools >= 8), capture the compute plan of\n"
	"# every probe model here as anelint evidence, then compare and calibrate anywhere:\n"
	"#   sh run_probes.sh CHIP [path/to/tools/mac/compute_plan.py]\n"
	"#   anelint compare conv_kw14.mlmodel conv_kw14.evidence.json     (one per probe: .mlmodel\n"
	"#   and .mlpackage)\n"
	"#   anelint calibrate conv_kw14.mlmodel conv_kw14.evidence.json ... -o CHIP.rules\n"
	"set -eu\n"
	"chip=${1:?chip family, e.g. m1 or a17}\n"
	"cp=${2:-compute_plan.py}\n"
	"cd \"$(dirname \"$0\")\"\n"
	"for m in *.mlmodel *.mlpackage; do\n"
	"\t[ -e \"$m\" ] || continue\n"
	"\tpython3 \"$cp\" \"$m\" --chip \"$chip\" -o \"${m%.*}.evidence.json\"\n"
	"done\n";

int cmd_probe(struct cli *c)
{
	const struct command_row *cmd = command("probe");
	if (!c->output)
		return usage_error(cmd, "probe writes a directory: give -o DIR%s", "");
	int grc = guard_output(c, c->output, AL_OUTPUT_INTO_DIR); /* as every writer (probe reads no input today) */
	if (grc)
		return grc;
	if (mkdir(c->output, 0777) != 0 && errno != EEXIST) {
		error_at(c->output, "%s", strerror(errno));
		return EXIT_IO;
	}
	json_object *man = json_object_new_object(), *arr = json_object_new_array();
	int rc = EXIT_ALL_ANE;
	for (size_t i = 0; i < N_PROBES && rc == EXIT_ALL_ANE; i++) {
		const struct probe *p = &probes[i];
		bool mil = p->kind >= K_MIL_POOL;
		struct al_buf b = {0};
		char file[64], path[4200];
		snprintf(file, sizeof file, "%s.%s", p->name, mil ? "mlpackage" : "mlmodel");
		al_diags *d = al_diags_new();
		if (!d || !(mil ? mil_probe_model(p, &b, d) : probe_model(p, &b))) {
			if (d)
				print_errors(file, d);
			al_diags_free(d);
			ali_buf_free(&b);
			rc = EXIT_INVALID;
			break;
		}
		/* an ML Program is a package: Manifest.json and Data/com.apple.CoreML/model.mlmodel */
		if (mil) {
			snprintf(path, sizeof path, "%s/%s", c->output, file);
			char data[4300], cm[4400];
			snprintf(data, sizeof data, "%s/Data", path);
			snprintf(cm, sizeof cm, "%s/Data/com.apple.CoreML", path);
			if ((mkdir(path, 0777) != 0 && errno != EEXIST) || (mkdir(data, 0777) != 0 && errno != EEXIST) ||
			    (mkdir(cm, 0777) != 0 && errno != EEXIST)) {
				error_at(path, "%s", strerror(errno));
				rc = EXIT_IO;
			}
			if (rc == EXIT_ALL_ANE)
				rc = write_file(path, "Manifest.json", manifest, sizeof manifest - 1);
			if (rc == EXIT_ALL_ANE)
				rc = write_file(cm, "model.mlmodel", b.p, b.n);
			if (rc != EXIT_ALL_ANE) {
				al_diags_free(d);
				ali_buf_free(&b);
				break;
			}
		}
		/* what anelint predicts for it, per family: and the probe must load */
		al_model *m = NULL;
		enum al_status st = mil ? al_model_open(path, &m, d) : al_model_open_buffer(b.p, b.n, NULL, 0, file, &m, d);
		json_object *pred = json_object_new_object();
		for (size_t t = 0; st == AL_OK && t < al_targets_count(); t++) {
			struct al_check_opts o = {.target = al_target_at(t)};
			st = al_model_check(m, &o, d);
			const struct al_submodel *sub = st == AL_OK ? al_model_get(m, 0) : NULL;
			const struct al_node *n = NULL; /* the probed layer/op: the last one (consts come first) */
			if (sub && sub->n_graphs && sub->graphs[0]->n_nodes)
				n = &sub->graphs[0]->nodes[sub->graphs[0]->n_nodes - 1];
			if (n)
				json_object_object_add(pred, al_target_at(t)->id, json_object_new_string(al_unit_name(n->verdict.unit)));
		}
		if (st != AL_OK) {
			print_errors(file, d);
			rc = EXIT_INVALID; /* a probe anelint cannot read is a bug */
		}
		al_model_free(m);
		al_diags_free(d);
		if (rc == EXIT_ALL_ANE && !mil)
			rc = write_file(c->output, file, b.p, b.n);
		ali_buf_free(&b);
		json_object *e = json_object_new_object();
		json_object_object_add(e, "file", json_object_new_string(file));
		json_object_object_add(e, "model_type", json_object_new_string(mil ? "mlProgram" : "neuralNetwork"));
		json_object_object_add(e, "rule", json_object_new_string(p->rule));
		json_object_object_add(e, "parameter", json_object_new_string(p->param));
		json_object_object_add(e, "question", json_object_new_string(p->why));
		if (strcmp(p->param, "op") == 0)
			json_object_object_add(e, "value",
					       json_object_new_string(p->kind == K_MIL_SOFTPLUS ? "softplus" : "mul by [C, 1, 1] input"));
		else
			json_object_object_add(e, "value",
					       json_object_new_int(p->stride ? p->stride
									 : strcmp(p->param, "dilation") == 0 ? p->dil : p->kw));
		json_object *shape = json_object_new_array();
		int dims[4] = {1, P_C, P_H, P_W};
		for (int k = 0; k < 4; k++)
			json_object_array_add(shape, json_object_new_int(dims[k]));
		json_object_object_add(e, "input_shape", shape);
		json_object_object_add(e, "predicted_own_unit", pred);
		json_object_array_add(arr, e);
	}
	json_object_object_add(man, "schema", json_object_new_string("anelint-probes"));
	json_object_object_add(man, "version", json_object_new_int(1));
	json_object_object_add(man, "anelint", json_object_new_string(ANELINT_VERSION));
	json_object_object_add(man, "probes", arr);
	if (rc == EXIT_ALL_ANE) {
		const char *s = json_object_to_json_string_ext(man, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
		rc = write_file(c->output, "manifest.json", s, strlen(s));
	}
	if (rc == EXIT_ALL_ANE)
		rc = write_file(c->output, "run_probes.sh", run_script, sizeof run_script - 1);
	json_object_put(man);
	if (rc == EXIT_ALL_ANE) {
		printf("probe: %zu probe models, manifest.json and run_probes.sh written to ", N_PROBES);
		put_text(stdout, c->output, CLI_NAME_MAX);
		printf("\n");
	}
	return rc;
}
