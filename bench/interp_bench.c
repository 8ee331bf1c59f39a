/* SPDX-License-Identifier: MIT */
/* interp_bench.c: time al_model_run on one model (bench/interp.py drives it and
 * runs PyTorch beside it). Not a test: it asserts nothing.
 *
 *   interp_bench MODEL INPUT_DIR|- THREADS fp32|fp16 RUNS
 *
 * Loads the model once, reads each input NAME from INPUT_DIR/NAME.npy (random when
 * absent or INPUT_DIR is "-"), runs once to warm up, then RUNS times, and prints
 * one JSON line: min and median milliseconds, peak RSS, the model's file bytes. */
#include "anelint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void fail(const char *what, al_diags *d)
{
	fprintf(stderr, "interp_bench: %s", what);
	for (size_t i = 0; d && i < al_diags_count(d); i++)
		if (al_diags_get(d, i)->severity == AL_SEV_ERROR) {
			fprintf(stderr, ": %s", al_diags_get(d, i)->msg);
			break;
		}
	fprintf(stderr, "\n");
	exit(1);
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: interp_bench MODEL INPUT_DIR|- THREADS fp32|fp16 RUNS\n");
		return 2;
	}
	int threads = atoi(argv[3]), runs = atoi(argv[5]);
	if (runs < 1 || runs > 10000)
		runs = 5;
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	if (al_model_open(argv[1], &m, d) != AL_OK)
		fail("cannot open the model", d);
	const struct al_submodel *s = al_model_get(m, 0);
	struct al_named_tensor *in = calloc(s->n_inputs + 1, sizeof *in);
	for (uint32_t i = 0; i < s->n_inputs; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s.npy", argv[2], s->inputs[i].name);
		in[i].name = s->inputs[i].name;
		FILE *f = strcmp(argv[2], "-") ? fopen(path, "rb") : NULL;
		if (f) {
			fclose(f);
			if (al_npy_read(path, &in[i].t, d) != AL_OK)
				fail("cannot read an input", d);
		} else if (al_random_input(&s->inputs[i], 1, 0, &in[i].t, d) != AL_OK) {
			fail("cannot make a random input", d);
		}
	}
	struct al_run_opts o = {.precision = strcmp(argv[4], "fp16") == 0 ? AL_PREC_FP16 : AL_PREC_FP32,
				.threads = threads > 0 ? threads : 1};
	double *t = calloc((size_t)runs, sizeof *t);
	for (int r = -1; r < runs; r++) {
		struct al_named_tensor *out = NULL;
		size_t n_out = 0;
		double t0 = now_ms();
		if (al_model_run(m, in, s->n_inputs, &o, &out, &n_out, d) != AL_OK)
			fail("the run failed", d);
		double dt = now_ms() - t0;
		if (r >= 0)
			t[r] = dt;
		al_outputs_free(out, n_out);
	}
	qsort(t, (size_t)runs, sizeof *t, cmp);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"min_ms\": %.3f, \"median_ms\": %.3f, \"runs\": %d, \"threads\": %d, "
	       "\"peak_rss_kb\": %ld}\n",
	       t[0], t[runs / 2], runs, o.threads, ru.ru_maxrss);
	for (uint32_t i = 0; i < s->n_inputs; i++)
		al_tensor_free(in[i].t);
	free(in);
	free(t);
	al_model_free(m);
	al_diags_free(d);
	return 0;
}
