/* SPDX-License-Identifier: MIT */
/* surgery_valid.c: every rewrite of an ML Program is checked against the op
 * definitions of the program's opset (mil_domains.def, format/mil_check.c)
 * before anything is written: al_surgery_plan reads the rewritten Model back
 * from the splice (without weight.bin: types and constness are in the
 * program), and a rewrite whose output breaks a definition is refused, with
 * the first broken input as its reason, and the plan made again without it.
 * Core ML refuses such a program when it compiles it; anelint's interpreter
 * would have run it, so the proof alone cannot catch it. */
#include "surgery_int.h"

#include <stdio.h>
#include <string.h>

#define MAX_REPORTED 64 /* broken inputs read back per check */

/* Whether diagnostics d say `msg` (an op's broken input, named by its op type,
 * input and value: a rewrite may rename the op itself). */
static bool said_in(const al_diags *d, const char *msg)
{
	for (size_t i = 0; msg && i < al_diags_count(d); i++)
		if (strcmp(al_diags_get(d, i)->msg, msg) == 0)
			return true;
	return false;
}

static bool produced_by(const struct al_rewrite *r, const char *name)
{
	for (uint32_t k = 0; name && k < r->n_layers; k++)
		if (r->layers[k] && strcmp(r->layers[k], name) == 0)
			return true;
	return false;
}

static bool touches_mil(const al_model *m, const struct al_rewrite *r)
{
	for (size_t i = 0; i < m->n_subs; i++)
		if (m->subs[i]->world == AL_WORLD_MIL)
			return r->node && (r->model_level || (r->node->path && strstr(r->node->path, "mlProgram")));
	return false;
}

enum al_status ali_surgery_invalid(struct al_surgery *s, struct ali_refusal *out, size_t cap, size_t *n_out)
{
	*n_out = 0;
	const al_model *m = s->m;
	bool any = false;
	for (size_t i = 0; i < s->n_rw; i++)
		any |= s->rw[i].applied && touches_mil(m, &s->rw[i]);
	if (!any || !s->sp)
		return AL_OK;
	uint8_t *bytes = NULL;
	size_t n = 0;
	enum al_status st = ali_splice_to_buffer(s->sp, &bytes, &n);
	if (st != AL_OK)
		return st;
	al_diags *d = al_diags_new(), *din = al_diags_new();
	al_model *out_m = NULL;
	if (!d || !din) {
		st = AL_E_NOMEM;
		goto done;
	}
	/* the new weight.bin too (the loader checks every blob an op names); built
	 * once, al_surgery_weights keeps it for the caller */
	const void *w = NULL;
	size_t wn = 0;
	if (al_surgery_weights(s, &w, &wn, d) != AL_OK ||
	    al_model_open_buffer(bytes, n, w, wn, m->path, &out_m, d) != AL_OK) {
		st = AL_OK; /* not read back here: the caller's own reload reports it */
		goto done;
	}
	al_diags_free(d);
	d = al_diags_new();
	if (!d) {
		st = AL_E_NOMEM;
		goto done;
	}
	if (!ali_mil_check_domains(out_m, d, MAX_REPORTED))
		goto done;
	(void)ali_mil_check_domains(m, din, MAX_REPORTED); /* broken before: not a rewrite's doing */
	for (size_t i = 0; i < al_diags_count(d); i++) {
		const struct al_diag *g = al_diags_get(d, i);
		if (!g->node || said_in(din, g->msg))
			continue;
		/* the rewrite that made the op (model-level ones rewrite every op) */
		bool found = false;
		for (size_t k = 0; k < s->n_rw; k++) {
			const struct al_rewrite *r = &s->rw[k];
			if (!r->applied || !touches_mil(m, r) || !(r->model_level || produced_by(r, g->node)))
				continue;
			found = true;
			bool dup = false;
			for (size_t j = 0; j < *n_out; j++)
				dup |= out[j].rewrite == k;
			if (!dup && *n_out < cap) {
				out[*n_out].rewrite = k;
				snprintf(out[*n_out].why, sizeof out[*n_out].why,
					 "its output would not be valid Core ML: '%.60s': %.200s", g->node, g->msg);
				++*n_out;
			}
		}
		/* an op no rewrite names (a reader of a value one changed): every ML
		 * Program rewrite is suspect */
		for (size_t k = 0; !found && k < s->n_rw && *n_out < cap; k++) {
			const struct al_rewrite *r = &s->rw[k];
			bool dup = false;
			for (size_t j = 0; j < *n_out; j++)
				dup |= out[j].rewrite == k;
			if (!r->applied || !touches_mil(m, r) || dup)
				continue;
			out[*n_out].rewrite = k;
			snprintf(out[*n_out].why, sizeof out[*n_out].why,
				 "the rewritten program would not be valid Core ML: '%.60s': %.200s", g->node, g->msg);
			++*n_out;
		}
	}
done:
	al_model_free(out_m);
	al_diags_free(d);
	al_diags_free(din);
	ali_free(bytes);
	return st;
}
