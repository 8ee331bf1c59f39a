/* SPDX-License-Identifier: MIT */
/* probe.c: `anelint probe -o DIR` (docs/evidence.md "Probes"): small
 * NeuralNetwork models that bisect thresholds the rule table is unsure of, a
 * manifest of what each probes and what anelint predicts for it on every chip
 * family, and a script that captures evidence for them on a Mac. */
#include "cli.h"
#include "base.h"     /* ali_write_atomic */
#include "pbsplice.h" /* al_buf: the protobuf writer */

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

struct probe {
	const char *name;
	const char *rule;  /* the rule whose threshold it bisects */
	const char *param; /* what varies */
	int kh, kw, dil;
};

static const struct probe probes[] = {
	/* ANE014: fp16 conv kernel width cap, 13 (H13) or 15 (H16+); confidence M, disputed */
	{"conv_kw12", "ANE014", "kernel width", 3, 12, 1},
	{"conv_kw13", "ANE014", "kernel width", 3, 13, 1},
	{"conv_kw14", "ANE014", "kernel width", 3, 14, 1},
	{"conv_kw15", "ANE014", "kernel width", 3, 15, 1},
	{"conv_kw16", "ANE014", "kernel width", 3, 16, 1},
	/* ANE004: dilated convolution, contradicted between sources */
	{"conv_dil1", "ANE004", "dilation", 3, 3, 1},
	{"conv_dil2", "ANE004", "dilation", 3, 3, 2},
	{"conv_dil4", "ANE004", "dilation", 3, 3, 4},
};
#define N_PROBES (sizeof probes / sizeof probes[0])

static void put_msg(struct al_buf *b, uint32_t field, const struct al_buf *m)
{
	ali_buf_len(b, field, m->p, m->n);
}

/* FeatureDescription{name = 1, type = 3 {multiArrayType = 5 {shape = 1, dataType = 2 (FLOAT32 65568)}}} */
static void array_feature(struct al_buf *out, const char *name, const uint64_t *shape, size_t rank)
{
	struct al_buf arr = {0}, ft = {0}, fd = {0};
	if (rank)
		ali_buf_packed(&arr, 1, shape, rank);
	ali_buf_uint(&arr, 2, 65568);
	put_msg(&ft, 5, &arr);
	ali_buf_str(&fd, 1, name);
	put_msg(&fd, 3, &ft);
	ali_buf_put(out, fd.p, fd.n);
	ali_buf_free(&arr);
	ali_buf_free(&ft);
	ali_buf_free(&fd);
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
	ali_buf_str(&layer, 1, p->name);
	ali_buf_str(&layer, 2, "x");
	ali_buf_str(&layer, 3, "y");
	put_msg(&layer, 100, &conv);
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
	"#   anelint compare conv_kw14.mlmodel conv_kw14.evidence.json     (one per probe)\n"
	"#   anelint calibrate conv_kw14.mlmodel conv_kw14.evidence.json ... -o CHIP.rules\n"
	"set -eu\n"
	"chip=${1:?chip family, e.g. m1 or a17}\n"
	"cp=${2:-compute_plan.py}\n"
	"cd \"$(dirname \"$0\")\"\n"
	"for m in *.mlmodel; do\n"
	"\tpython3 \"$cp\" \"$m\" --chip \"$chip\" -o \"${m%.mlmodel}.evidence.json\"\n"
	"done\n";

int cmd_probe(struct cli *c)
{
	const struct command_row *cmd = command("probe");
	if (!c->output)
		return usage_error(cmd, "probe writes a directory: give -o DIR%s", "");
	if (mkdir(c->output, 0777) != 0 && errno != EEXIST) {
		error_at(c->output, "%s", strerror(errno));
		return EXIT_IO;
	}
	json_object *man = json_object_new_object(), *arr = json_object_new_array();
	int rc = EXIT_ALL_ANE;
	for (size_t i = 0; i < N_PROBES && rc == EXIT_ALL_ANE; i++) {
		const struct probe *p = &probes[i];
		struct al_buf b = {0};
		char file[64];
		snprintf(file, sizeof file, "%s.mlmodel", p->name);
		if (!probe_model(p, &b)) {
			ali_buf_free(&b);
			rc = EXIT_IO;
			break;
		}
		/* what anelint predicts for it, per family: and the probe must load */
		al_model *m = NULL;
		al_diags *d = al_diags_new();
		enum al_status st = d ? al_model_open_buffer(b.p, b.n, NULL, 0, file, &m, d) : AL_E_NOMEM;
		json_object *pred = json_object_new_object();
		for (size_t t = 0; st == AL_OK && t < al_targets_count(); t++) {
			struct al_check_opts o = {.target = al_target_at(t)};
			st = al_model_check(m, &o, d);
			const struct al_submodel *sub = st == AL_OK ? al_model_get(m, 0) : NULL;
			const struct al_node *n = sub && sub->n_graphs && sub->graphs[0]->n_nodes ? &sub->graphs[0]->nodes[0] : NULL;
			if (n)
				json_object_object_add(pred, al_target_at(t)->id, json_object_new_string(al_unit_name(n->verdict.unit)));
		}
		if (st != AL_OK) {
			print_errors(file, d);
			rc = EXIT_INVALID; /* a probe anelint cannot read is a bug */
		}
		al_model_free(m);
		al_diags_free(d);
		if (rc == EXIT_ALL_ANE)
			rc = write_file(c->output, file, b.p, b.n);
		ali_buf_free(&b);
		json_object *e = json_object_new_object();
		json_object_object_add(e, "file", json_object_new_string(file));
		json_object_object_add(e, "rule", json_object_new_string(p->rule));
		json_object_object_add(e, "parameter", json_object_new_string(p->param));
		json_object_object_add(e, "value", json_object_new_int(strcmp(p->param, "dilation") == 0 ? p->dil : p->kw));
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
