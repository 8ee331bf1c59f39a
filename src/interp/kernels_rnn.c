/* SPDX-License-Identifier: MIT */
/* kernels_rnn.c: one direction of LSTM, GRU and simple RNN over a sequence.
 * Contract: kernels.h (gate orders, peepholes, clipping, reset_after).
 *
 * The input projection of every step is one gemm up front ([T*B, I] x W^T,
 * input bias folded in); each step then adds the recurrent gemm and applies the
 * gate activations through ali_unary. Bidirectional layers are two calls by the
 * executor; sequence lengths / masks are not handled here.
 */
#include "kernels.h"
#include "analysis.h"

#include <string.h>

/* n floats of scratch, with overflow check; NULL on failure. */
static float *scratch(size_t a, size_t b)
{
	if (a && b > SIZE_MAX / sizeof(float) / a)
		return NULL;
	return ali_malloc(a * b * sizeof(float) + 1);
}

static void act(const struct al_rnn_acts *f, float *v, size_t n)
{
	ali_unary(f->op, f->a, f->b, v, v, n);
}

/* gx[T*B, G] = x[T*B, I] * wx[G, I]^T + bias[G] (bias may be NULL) */
static void input_proj(const float *x, size_t TB, size_t I, const float *wx, const float *bias,
		       size_t G, float *gx)
{
	ali_gemm(false, true, TB, G, I, 1.0f, x, I, wx, I, 0.0f, gx, G);
	if (bias)
		for (size_t r = 0; r < TB; r++)
			for (size_t j = 0; j < G; j++)
				gx[r * G + j] += bias[j];
}

bool ali_lstm_run(const struct al_lstm *p, const float *x, float *h, float *c, float *y)
{
	size_t T = (size_t)p->T, B = (size_t)p->B, I = (size_t)p->I, H = (size_t)p->H;
	size_t G = 4 * H;
	if (T == 0 || B == 0 || H == 0)
		return true;
	float *gx = scratch(T * B, G), *g = scratch(B, G + H);
	if (!gx || !g) {
		ali_free(gx);
		ali_free(g);
		return false;
	}
	float *tmp = g + B * G;
	input_proj(x, T * B, I, p->wx, p->bias, G, gx);
	const float *pi = p->peep, *pf = p->peep ? p->peep + H : NULL,
		    *po = p->peep ? p->peep + 2 * H : NULL;
	for (size_t s = 0; s < T; s++) {
		size_t t = p->reverse ? T - 1 - s : s;
		memcpy(g, gx + t * B * G, B * G * sizeof *g);
		ali_gemm(false, true, B, G, H, 1.0f, h, H, p->wh, H, 1.0f, g, G);
		for (size_t b = 0; b < B; b++) {
			float *gi = g + b * G, *gf = gi + H, *go = gi + 2 * H, *gz = gi + 3 * H;
			float *cb = c + b * H, *hb = h + b * H;
			if (pi)
				for (size_t j = 0; j < H; j++) {
					gi[j] += pi[j] * cb[j];
					gf[j] += pf[j] * cb[j];
				}
			act(&p->f1, gi, H);
			if (p->coupled_input_forget)
				for (size_t j = 0; j < H; j++)
					gf[j] = 1.0f - gi[j];
			else
				act(&p->f1, gf, H);
			act(&p->f2, gz, H);
			for (size_t j = 0; j < H; j++) {
				float cn = gf[j] * cb[j] + gi[j] * gz[j];
				if (p->clip > 0.0f)
					cn = cn > p->clip ? p->clip : cn < -p->clip ? -p->clip : cn;
				cb[j] = cn;
			}
			if (po)
				for (size_t j = 0; j < H; j++)
					go[j] += po[j] * cb[j];
			act(&p->f1, go, H);
			memcpy(tmp, cb, H * sizeof *tmp);
			act(&p->f3, tmp, H);
			for (size_t j = 0; j < H; j++)
				hb[j] = go[j] * tmp[j];
		}
		if (y)
			memcpy(y + t * B * H, h, B * H * sizeof *y);
	}
	ali_free(gx);
	ali_free(g);
	return true;
}

bool ali_gru_run(const struct al_gru *p, const float *x, float *h, float *y)
{
	size_t T = (size_t)p->T, B = (size_t)p->B, I = (size_t)p->I, H = (size_t)p->H;
	size_t G = 3 * H;
	if (T == 0 || B == 0 || H == 0)
		return true;
	float *gx = scratch(T * B, G), *gh = scratch(B, G + H);
	if (!gx || !gh) {
		ali_free(gx);
		ali_free(gh);
		return false;
	}
	float *rh = gh + B * G;
	input_proj(x, T * B, I, p->wx, p->bias, G, gx);
	const float *bh = p->bias_h;
	for (size_t s = 0; s < T; s++) {
		size_t t = p->reverse ? T - 1 - s : s;
		const float *gxt = gx + t * B * G;
		/* recurrent z and r (and o when reset_after): gh = h Wh^T + bias_h */
		size_t ng = p->reset_after ? G : 2 * H;
		ali_gemm(false, true, B, ng, H, 1.0f, h, H, p->wh, H, 0.0f, gh, G);
		if (bh)
			for (size_t b = 0; b < B; b++)
				for (size_t j = 0; j < ng; j++)
					gh[b * G + j] += bh[j];
		for (size_t b = 0; b < B; b++) {
			float *z = gh + b * G, *r = z + H;
			const float *xb = gxt + b * G;
			for (size_t j = 0; j < 2 * H; j++)
				z[j] += xb[j];
			act(&p->f1, z, 2 * H); /* z and r */
			if (!p->reset_after)
				for (size_t j = 0; j < H; j++)
					rh[b * H + j] = r[j] * h[b * H + j];
		}
		if (!p->reset_after) {
			/* o's recurrent part from r*h */
			ali_gemm(false, true, B, H, H, 1.0f, rh, H, p->wh + 2 * H * H, H, 0.0f,
				gh + 2 * H, G);
			if (bh)
				for (size_t b = 0; b < B; b++)
					for (size_t j = 0; j < H; j++)
						gh[b * G + 2 * H + j] += bh[2 * H + j];
		}
		for (size_t b = 0; b < B; b++) {
			float *z = gh + b * G, *r = z + H, *o = z + 2 * H;
			const float *xo = gxt + b * G + 2 * H;
			if (p->reset_after)
				for (size_t j = 0; j < H; j++)
					o[j] = xo[j] + r[j] * o[j];
			else
				for (size_t j = 0; j < H; j++)
					o[j] += xo[j];
			act(&p->f2, o, H);
			float *hb = h + b * H;
			for (size_t j = 0; j < H; j++)
				hb[j] = (1.0f - z[j]) * o[j] + z[j] * hb[j];
		}
		if (y)
			memcpy(y + t * B * H, h, B * H * sizeof *y);
	}
	ali_free(gx);
	ali_free(gh);
	return true;
}

bool ali_rnn_run(const struct al_rnn *p, const float *x, float *h, float *y)
{
	size_t T = (size_t)p->T, B = (size_t)p->B, I = (size_t)p->I, H = (size_t)p->H;
	if (T == 0 || B == 0 || H == 0)
		return true;
	float *gx = scratch(T * B, H), *g = scratch(B, H);
	if (!gx || !g) {
		ali_free(gx);
		ali_free(g);
		return false;
	}
	input_proj(x, T * B, I, p->wx, p->bias, H, gx);
	for (size_t s = 0; s < T; s++) {
		size_t t = p->reverse ? T - 1 - s : s;
		memcpy(g, gx + t * B * H, B * H * sizeof *g);
		ali_gemm(false, true, B, H, H, 1.0f, h, H, p->wh, H, 1.0f, g, H);
		act(&p->f, g, B * H);
		memcpy(h, g, B * H * sizeof *h);
		if (y)
			memcpy(y + t * B * H, h, B * H * sizeof *y);
	}
	ali_free(gx);
	ali_free(g);
	return true;
}
