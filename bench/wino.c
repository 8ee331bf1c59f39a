/* SPDX-License-Identifier: MIT */
/* bench/wino.c: per-layer CPU time of 3x3 stride-1 convolutions (ResNet-18's
 * shapes and a few more), im2col + sgemm (ali_conv2d) against Winograd
 * F(4x4, 3x3) with the weights transformed once (ali_conv2d_winograd), to
 * choose where ali_conv2d_winograd_fits says yes. Not a test; see
 * bench/README.md "Winograd".
 *
 *   make build/bench/wino && build/bench/wino [THREADS]
 *
 * Times are CPU time of the process (CLOCK_PROCESS_CPUTIME_ID), the minimum
 * of 5 rounds of enough calls for ~50 ms: less sensitive to other processes
 * on a shared machine than wall time (not immune: caches are shared). */
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static float *randa(size_t n)
{
	float *a = malloc(n * sizeof *a);
	for (size_t i = 0; i < n; i++)
		a[i] = (float)rand() / RAND_MAX - 0.5f;
	return a;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	ali_kernels_set_threads(threads);
	static const int shapes[][2] = {{64, 56}, {128, 28}, {256, 14}, {512, 7}, {32, 112},
					{16, 112}, {64, 28}, {256, 28}, {512, 14}};
	printf("threads %d; CPU ms per call (min of 5 rounds)\n", threads);
	printf("%6s %5s %10s %10s %7s %9s %s\n", "ch", "hw", "im2col", "winograd", "ratio", "diff/max",
	       "chosen");
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		int c = shapes[s][0], hw = shapes[s][1];
		struct al_conv2d p = {.n = 1, .cin = c, .h = hw, .w = hw, .cout = c, .kh = 3, .kw = 3,
				      .groups = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 1,
				      .pb = 1, .pl = 1, .pr = 1, .oh = hw, .ow = hw};
		size_t nx = (size_t)c * hw * hw, nw = (size_t)c * c * 9;
		float *x = randa(nx), *w = randa(nw), *b = randa((size_t)c);
		float *y1 = malloc(nx * sizeof *y1), *y2 = malloc(nx * sizeof *y2);
		float *u = malloc(ali_winograd_weights_len(c, c) * sizeof *u);
		ali_winograd_weights(c, c, w, u);
		double best[2] = {1e9, 1e9};
		double flops = 2.0 * nx * c * 9;
		int calls = (int)(50e-3 * 30e9 / flops) + 1;
		bool fits = true; /* every shape here has a Winograd form; fits() is the policy */
		for (int r = 0; r < 5; r++) {
			double t0 = cpu_ms();
			for (int k = 0; k < calls; k++)
				ali_conv2d(&p, x, w, b, y1);
			double t1 = cpu_ms();
			for (int k = 0; k < calls && fits; k++)
				ali_conv2d_winograd(&p, x, u, b, y2);
			double t2 = cpu_ms();
			if ((t1 - t0) / calls < best[0])
				best[0] = (t1 - t0) / calls;
			if ((t2 - t1) / calls < best[1])
				best[1] = (t2 - t1) / calls;
		}
		double md = 0, mx = 0;
		for (size_t i = 0; fits && i < nx; i++) {
			double d = y1[i] - y2[i];
			md = d < 0 ? (-d > md ? -d : md) : (d > md ? d : md);
			mx = y1[i] < 0 ? (-y1[i] > mx ? -y1[i] : mx) : (y1[i] > mx ? y1[i] : mx);
		}
		printf("%6d %5d %10.3f %10.3f %7.2f %9.2e %s\n", c, hw, best[0], best[1],
		       best[1] / best[0], md / mx, ali_conv2d_winograd_fits(&p) ? "winograd" : "im2col");
		free(x), free(w), free(b), free(y1), free(y2), free(u);
	}
	return 0;
}
