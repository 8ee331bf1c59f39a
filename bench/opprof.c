/* SPDX-License-Identifier: MIT */
/* bench/opprof.c: where a model's run goes, per op kind, through the public
 * API only (al_model_run's observer is called after every op: the time between
 * two calls is that op's). Not a test; see bench/README.md "Per op kind".
 *
 *   cc -O2 -Iinclude -Isrc/interp bench/opprof.c build/libanelint.a -ljson-c -lopenblas \
 *      -lm -pthread -o build/bench/opprof
 *   build/bench/opprof MODEL [THREADS] [RUNS] [sim]
 *
 * Inputs are al_random_input's (seed 1). One warm-up run (weights decoded,
 * Winograd weights transformed), then RUNS runs; per op type it prints
 *   main   CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID),
 *   proc   CPU time of the whole process (every thread: the pool's workers and
 *          OpenBLAS's, spinning included),
 *   wall   CLOCK_MONOTONIC,
 * each in ms per run. On a shared machine wall time is what the other processes
 * leave; CPU times much less so. With THREADS 1 every op runs on the calling
 * thread and `main` is its whole cost. With THREADS 2, `main` of an op whose
 * work is split evenly halves; serial work stays whole: main(2) / main(1) per op
 * kind is the part of it that stays serial plus half the rest (Amdahl), the
 * figure wall time would give on an idle machine, less the time the caller
 * sleeps waiting for a slower worker (`proc` - 2 `main` shows that, when > 0).
 *
 * `sim` (the figure bench/README.md gives): ali_pool_simulate runs every part
 * of every pool job in line on the calling thread, timed by its CPU clock; per
 * op kind it prints the CPU time (`cpu`, the 1-thread cost), the part of it in
 * pool jobs (`par`), and the time those jobs would take on THREADS threads (the
 * longest part of each, so imbalance counts); `ideal` = cpu - par + crit, the
 * op's time on THREADS threads with free wake-ups, and the speed-up cpu / ideal.
 * Nothing else runs, so the load on the machine hardly matters. */
#include "anelint.h"
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_KINDS 128

struct kind {
	const char *type;
	unsigned count;
	double main, proc, wall;
	double par, crit; /* sim */
};

struct prof {
	struct kind k[MAX_KINDS];
	int n;
	double main, proc, wall; /* the clocks at the last observer call */
	double par, crit;
	bool on;
};

static double clock_ms(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void stamp(struct prof *p)
{
	p->main = clock_ms(CLOCK_THREAD_CPUTIME_ID);
	p->proc = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
	p->wall = clock_ms(CLOCK_MONOTONIC);
	ali_pool_sim_stats(&p->par, &p->crit);
}

static void observe(void *ctx, const struct al_node *n, al_tensor *const *outs, uint32_t n_outs)
{
	(void)outs;
	(void)n_outs;
	struct prof *p = ctx;
	double m = clock_ms(CLOCK_THREAD_CPUTIME_ID), c = clock_ms(CLOCK_PROCESS_CPUTIME_ID),
	       w = clock_ms(CLOCK_MONOTONIC);
	double par, crit;
	ali_pool_sim_stats(&par, &crit);
	if (p->on) {
		int i = 0;
		while (i < p->n && strcmp(p->k[i].type, n->type) != 0)
			i++;
		if (i == p->n && p->n < MAX_KINDS)
			p->k[p->n++] = (struct kind){.type = n->type};
		if (i < p->n) {
			p->k[i].count++;
			p->k[i].main += m - p->main;
			p->k[i].proc += c - p->proc;
			p->k[i].wall += w - p->wall;
			p->k[i].par += (par - p->par) / 1e6;
			p->k[i].crit += (crit - p->crit) / 1e6;
		}
	}
	/* the clocks once per op: each read is a system call (~1-3 us here), which
	 * the next op is charged with */
	p->main = m, p->proc = c, p->wall = w, p->par = par, p->crit = crit;
}

static int by_main(const void *a, const void *b)
{
	double x = ((const struct kind *)a)->main, y = ((const struct kind *)b)->main;
	return x < y ? 1 : x > y ? -1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: opprof MODEL [THREADS] [RUNS]\n");
		return 2;
	}
	int threads = argc > 2 ? atoi(argv[2]) : 1, runs = argc > 3 ? atoi(argv[3]) : 10;
	bool sim = argc > 4 && strcmp(argv[4], "sim") == 0;
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	if (!d || al_model_open(argv[1], &m, d) != AL_OK) {
		fprintf(stderr, "opprof: cannot open %s\n", argv[1]);
		return 3;
	}
	const struct al_submodel *s = al_model_get(m, 0);
	struct al_named_tensor in[16];
	size_t n_in = 0;
	for (uint32_t i = 0; s && i < s->n_inputs && n_in < 16; i++) {
		al_tensor *t = NULL;
		if (al_random_input(&s->inputs[i], 1, 0, &t, d) != AL_OK)
			return 3;
		in[n_in++] = (struct al_named_tensor){s->inputs[i].name, t};
	}
	static struct prof p;
	struct al_run_opts o = {.threads = threads, .observe = observe, .observe_ctx = &p};
	ali_pool_simulate(sim);
	double total[3] = {0, 0, 0};
	for (int r = 0; r <= runs; r++) {
		struct al_named_tensor *outs = NULL;
		size_t n_outs = 0;
		p.on = r > 0;
		stamp(&p);
		double m0 = p.main, c0 = p.proc, w0 = p.wall;
		if (al_model_run(m, in, n_in, &o, &outs, &n_outs, d) != AL_OK) {
			fprintf(stderr, "opprof: the run failed\n");
			return 3;
		}
		if (r > 0) {
			total[0] += clock_ms(CLOCK_THREAD_CPUTIME_ID) - m0;
			total[1] += clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
			total[2] += clock_ms(CLOCK_MONOTONIC) - w0;
		}
		al_outputs_free(outs, n_outs);
	}
	qsort(p.k, (size_t)p.n, sizeof p.k[0], by_main);
	if (sim) {
		printf("%s, pool jobs simulated for %d threads, %d runs; CPU ms per run\n", argv[1],
		       threads, runs);
		printf("%-28s %6s %8s %8s %8s %8s %7s %6s\n", "op", "count", "cpu", "par", "crit", "ideal",
		       "speedup", "cpu%");
		double tc = 0, tp = 0, tr = 0;
		for (int i = 0; i < p.n; i++)
			tc += p.k[i].main, tp += p.k[i].par, tr += p.k[i].crit;
		for (int i = 0; i < p.n; i++) {
			struct kind *k = &p.k[i];
			double ideal = k->main - k->par + k->crit;
			printf("%-28s %6u %8.3f %8.3f %8.3f %8.3f %6.2fx %5.1f%%\n", k->type, k->count / runs,
			       k->main / runs, k->par / runs, k->crit / runs, ideal / runs,
			       ideal > 0 ? k->main / ideal : 0.0, 100.0 * k->main / tc);
		}
		printf("%-28s %6s %8.3f %8.3f %8.3f %8.3f %6.2fx\n", "total (ops)", "", tc / runs, tp / runs,
		       tr / runs, (tc - tp + tr) / runs, tc / (tc - tp + tr));
		printf("serial fraction (Amdahl, incl. imbalance): %.3f\n",
		       1.0 - (1.0 - (tc - tp + tr) / tc) * threads / (threads - 1.0 + (threads == 1)));
		return 0;
	}
	printf("%s, %d thread(s), %d runs; ms per run\n", argv[1], threads, runs);
	printf("%-28s %6s %8s %8s %8s %6s\n", "op", "count", "main", "proc", "wall", "main%");
	for (int i = 0; i < p.n; i++)
		printf("%-28s %6u %8.3f %8.3f %8.3f %5.1f%%\n", p.k[i].type, p.k[i].count / runs,
		       p.k[i].main / runs, p.k[i].proc / runs, p.k[i].wall / runs,
		       100.0 * p.k[i].main / total[0]);
	printf("%-28s %6s %8.3f %8.3f %8.3f\n", "total (run)", "", total[0] / runs, total[1] / runs,
	       total[2] / runs);
	for (size_t i = 0; i < n_in; i++)
		al_tensor_free(in[i].t);
	al_model_free(m);
	al_diags_free(d);
	return 0;
}
