/* SPDX-License-Identifier: MIT */
/* split_model.c: `anelint split` as a library call (al_split_model; docs/split.md):
 * NeuralNetwork .mlmodel files and ML Program .mlpackages.
 *
 *   1. load the model; plan the cut (al_split_plan refuses what cannot be cut)
 *   2. build every part and the pipeline in memory; each must load and check
 *   3. proof: run the model, the pipeline, and the parts one after the other
 *      (each fed the model inputs and the earlier parts' outputs) in the
 *      reference interpreter on the same inputs (inputs_dir, else seeded
 *      random); every output must be bit-identical to the model's. A model the
 *      interpreter cannot run (a custom layer) is written unproved.
 *   4. write every part and the pipeline, all or none (temporary + rename), and
 *      load and check each again from disk
 * The JSON document is written here (al_split_result_json); the text is the CLI's. */
#include "command.h"
#include "base.h" /* ali_diag_add */

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct built {
	uint8_t *bytes;
	size_t n;
	al_model *m;
};

struct job {
	struct al_split_result *r;
	const struct al_split_command *o;
	al_model *m;
	al_user_rules *rules;
	al_splitter *s;
	al_diags *d;
	struct built *b; /* n_parts + 1: the pipeline last */
};

static enum al_status fail_diags(struct al_split_result *r, enum al_status st, const char *subject)
{
	r->fail.kind = AL_FAIL_DIAGS;
	r->fail.status = st;
	snprintf(r->fail.subject, sizeof r->fail.subject, "%s", subject);
	return st;
}

static enum al_status fail_subject(struct al_split_result *r, al_diags *d, enum al_status st, const char *subject,
				   const char *msg)
{
	r->fail.kind = AL_FAIL_SUBJECT;
	r->fail.status = st;
	snprintf(r->fail.subject, sizeof r->fail.subject, "%s", subject);
	snprintf(r->fail.msg, sizeof r->fail.msg, "%s", msg);
	ali_diag_add(d, AL_SEV_ERROR, subject, UINT64_MAX, NULL, NULL, "%s", msg);
	return st;
}

/* A status of the writer or builder that is not the caller's mistake (the
 * command checked its paths): a model it cannot handle. */
static enum al_status not_callers(enum al_status st)
{
	return st == AL_E_INVALID_ARG ? AL_E_UNSUPPORTED : st;
}

static bool same_path(const char *a, const char *b)
{
	struct stat sa, sb;
	if (strcmp(a, b) == 0)
		return true;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Every output path: not an input, and not named twice. */
static enum al_status check_paths(struct al_split_result *r, al_diags *d)
{
	const struct al_split_command *o = r->opts;
	for (size_t i = 0; i <= o->n_parts; i++) {
		const char *p = i < o->n_parts ? o->parts[i] : o->pipeline;
		if (!p)
			continue;
		enum al_status st = al_output_check(p, o->protect, o->n_protect, 0, d);
		if (st != AL_OK)
			return fail_diags(r, st, p);
		for (size_t k = 0; k < i; k++)
			if (same_path(p, o->parts[k])) {
				r->fail.kind = AL_FAIL_DUPLICATE;
				r->fail.status = AL_E_INVALID_ARG;
				snprintf(r->fail.subject, sizeof r->fail.subject, "%s", p);
				ali_diag_add(d, AL_SEV_ERROR, p, UINT64_MAX, NULL, NULL, "named twice as an output");
				return AL_E_INVALID_ARG;
			}
	}
	return AL_OK;
}

static void summarize(al_model *m, struct al_split_figures *f)
{
	al_diags *d = al_diags_new();
	if (!d)
		return;
	for (size_t i = 0; i < al_model_count(m); i++) {
		const struct al_plan *p = NULL;
		if (al_model_plan(m, i, NULL, &p, d) != AL_OK || !p)
			continue;
		f->layers += p->n_nodes;
		f->segments += p->n_segments;
		for (uint32_t k = 0; k < p->n_nodes; k++)
			f->fallbacks += !p->nodes[k]->verdict.ane;
		al_plan_free(p);
	}
	al_diags_free(d);
}

/* Build part i (i == n_parts: the pipeline), load and check it. */
static enum al_status build(struct job *j, size_t i)
{
	struct al_split_result *r = j->r;
	struct built *b = &j->b[i];
	enum al_status st = al_split_bytes(j->s, i, &b->bytes, &b->n, j->d);
	if (st)
		return fail_diags(r, not_callers(st), r->opts->model);
	char name[64];
	if (i < r->n_parts)
		snprintf(name, sizeof name, "part%zu", i + 1);
	else
		snprintf(name, sizeof name, "pipeline");
	al_diags *d = al_diags_new();
	if (!d)
		return fail_subject(r, j->d, AL_E_NOMEM, r->opts->model, "out of memory");
	const void *w;
	size_t nw;
	al_split_weights(j->s, &w, &nw);
	st = al_model_open_buffer(b->bytes, b->n, w, nw, name, &b->m, d);
	if (st == AL_OK)
		st = al_model_check(b->m, NULL, d);
	if (st == AL_E_NOMEM) {
		al_diags_free(d);
		return fail_subject(r, j->d, AL_E_NOMEM, r->opts->model, "out of memory");
	}
	if (st != AL_OK) {
		/* the message about the model first, then why the part does not load */
		ali_diag_add(j->d, AL_SEV_ERROR, r->opts->model, UINT64_MAX, NULL, NULL,
			     "the %s does not load (a bug in split); nothing written", name);
		for (size_t k = 0; k < al_diags_count(d); k++) {
			const struct al_diag *x = al_diags_get(d, k);
			if (x->severity == AL_SEV_ERROR)
				ali_diag_add(j->d, x->severity, x->file, x->offset, x->where, x->node, "%s", x->msg);
		}
		al_diags_free(d);
		return fail_diags(r, AL_E_FORMAT, name);
	}
	al_diags_free(d);
	summarize(b->m, &r->figures[i]);
	return AL_OK;
}

/* ---------------------------------------------------------------- proof */

static al_tensor *find_named(const struct al_named_tensor *v, size_t n, const char *name)
{
	for (size_t i = n; i-- > 0;)
		if (strcmp(v[i].name, name) == 0)
			return v[i].t;
	return NULL;
}

/* Every output of the original, found by name in got[0..n), bit-identical?
 * (al_prove_outputs with the exact class: same dims, bits, labels.) */
static bool outputs_match(const struct al_named_tensor *ref, size_t nr, const struct al_named_tensor *got,
			  size_t n, char *why, size_t cap)
{
	struct al_proof p = {0};
	bool ok = al_prove_outputs(ref, nr, got, n, AL_EQ_EXACT, &p) == AL_OK && p.ok;
	for (size_t i = 0; !ok && i < p.n_diffs; i++)
		if (!p.diffs[i].pass) {
			bool missing = p.diffs[i].why && strcmp(p.diffs[i].why, "missing") == 0;
			snprintf(why, cap, "output '%s' %s", p.diffs[i].name, missing ? "is missing" : "differs");
			break;
		}
	if (!ok && p.n_diffs == 0 && nr)
		snprintf(why, cap, "out of memory while comparing outputs");
	al_proof_clear(&p);
	return ok;
}

static void last_error(al_diags *d, enum al_status st, char *why, size_t cap, const char *what)
{
	const struct al_diag *e = d && al_diags_count(d) ? al_diags_get(d, al_diags_count(d) - 1) : NULL;
	snprintf(why, cap, "%s: %s%s%s", what, e && e->node ? e->node : "", e && e->node ? ": " : "",
		 e ? e->msg : al_status_str(st));
}

/* Run part after part, each on the model inputs and the earlier parts' outputs. */
static enum al_status run_chain(struct job *j, const struct al_named_tensor *in, size_t n_in,
				const struct al_run_opts *o, struct al_named_tensor **env, size_t *n_env,
				al_diags *d)
{
	size_t n_parts = j->r->n_parts, cap = n_in, n = 0;
	for (size_t p = 0; p < n_parts; p++)
		cap += al_split_get(j->s, p)->n_outputs;
	struct al_named_tensor *v = ali_calloc(cap + 1, sizeof *v);
	struct al_named_tensor *feed = ali_calloc(cap + 1, sizeof *feed);
	enum al_status st = v && feed ? AL_OK : AL_E_NOMEM;
	/* the env borrows the inputs (not freed) and owns what parts return */
	for (size_t i = 0; !st && i < n_in; i++)
		v[n++] = in[i];
	size_t owned_from = n;
	for (size_t p = 0; !st && p < n_parts; p++) {
		const struct al_submodel *sub = al_model_get(j->b[p].m, 0);
		size_t nf = 0;
		for (uint32_t k = 0; k < sub->n_inputs && nf < cap; k++) {
			al_tensor *t = find_named(v, n, sub->inputs[k].name);
			if (t)
				feed[nf++] = (struct al_named_tensor){sub->inputs[k].name, t};
		}
		struct al_named_tensor *outs = NULL;
		size_t no = 0;
		st = al_model_run(j->b[p].m, feed, nf, o, &outs, &no, d);
		for (size_t k = 0; !st && k < no && n < cap; k++) {
			v[n++] = outs[k];
			outs[k].t = NULL;
		}
		al_outputs_free(outs, no);
	}
	ali_free(feed);
	/* hand back only what the parts produced */
	if (v) {
		memmove(v, v + owned_from, (n - owned_from) * sizeof *v);
		n -= owned_from;
	}
	*env = v;
	*n_env = n;
	return st;
}

/* The proof inputs: DIR/NAME.npy, else random; false (why set) when one cannot be had. */
static bool proof_inputs(struct job *j, const struct al_submodel *s, struct al_named_tensor *in, size_t *n_in)
{
	struct al_split_result *r = j->r;
	for (uint32_t i = 0; i < s->n_inputs; i++) {
		if (s->inputs[i].optional)
			continue;
		al_diags *d = al_diags_new();
		al_tensor *t = NULL;
		char path[4096];
		const char *dir = r->opts->inputs_dir;
		bool from_dir = dir && snprintf(path, sizeof path, "%s/%s.npy", dir, s->inputs[i].name) < (int)sizeof path &&
				access(path, F_OK) == 0;
		enum al_status st = !d ? AL_E_NOMEM
				  : from_dir ? al_npy_read(path, &t, d)
					     : al_random_input(&s->inputs[i], r->opts->seed, r->opts->max_bytes, &t, d);
		if (st == AL_OK) {
			in[*n_in].name = s->inputs[i].name;
			in[(*n_in)++].t = t;
		} else {
			last_error(d, st, r->why, sizeof r->why, "no random input");
		}
		al_diags_free(d);
		if (st != AL_OK)
			return false;
	}
	return true;
}

static enum al_status prove(struct job *j)
{
	struct al_split_result *r = j->r;
	const struct al_submodel *s = al_model_get(j->m, 0);
	struct al_named_tensor *in = ali_calloc(s->n_inputs + 1u, sizeof *in);
	al_diags *d = al_diags_new();
	if (!in || !d) {
		ali_free(in);
		al_diags_free(d);
		return fail_subject(r, j->d, AL_E_NOMEM, r->opts->model, "out of memory");
	}
	size_t n_in = 0;
	bool have_inputs = proof_inputs(j, s, in, &n_in);
	struct al_named_tensor *ref = NULL, *pipe = NULL, *chain = NULL;
	size_t nr = 0, np = 0, nc = 0;
	uint64_t held = al_values_bytes(in, n_in); /* one budget: inputs, then the outputs kept */
	struct al_run_opts o = {.precision = AL_PREC_FP32, .max_bytes = r->opts->max_bytes,
				.max_work = r->opts->max_work, .held_bytes = &held};
	enum al_status st = have_inputs ? al_model_run(j->m, in, n_in, &o, &ref, &nr, d) : AL_E_UNSUPPORTED;
	held += al_values_bytes(ref, nr);
	if (have_inputs && st != AL_OK) {
		last_error(d, st, r->why, sizeof r->why, "the interpreter cannot run the model");
	} else if (have_inputs) {
		r->proof_run = true;
		st = al_model_run(j->b[r->n_parts].m, in, n_in, &o, &pipe, &np, d);
		held += al_values_bytes(pipe, np);
		if (st != AL_OK)
			last_error(d, st, r->why, sizeof r->why, "the pipeline does not run");
		else
			r->pipeline_identical = outputs_match(ref, nr, pipe, np, r->why, sizeof r->why);
		char why2[256] = "";
		st = run_chain(j, in, n_in, &o, &chain, &nc, d);
		if (st != AL_OK)
			last_error(d, st, why2, sizeof why2, "the parts do not run");
		else
			r->chain_identical = outputs_match(ref, nr, chain, nc, why2, sizeof why2);
		if (!r->why[0] && why2[0])
			snprintf(r->why, sizeof r->why, "%s", why2);
	}
	al_diags_free(d);
	al_outputs_free(ref, nr);
	al_outputs_free(pipe, np);
	al_outputs_free(chain, nc);
	for (size_t i = 0; i < n_in; i++)
		al_tensor_free(in[i].t);
	ali_free(in);
	return AL_OK;
}

/* ---------------------------------------------------------------- the command */

/* "10": the index `check` shows (a top-level layer / op of the graph split
 * cuts), when no top-level layer is named "10"; the name is returned, else v. */
static const char *at_index(const al_model *m, const char *v)
{
	const struct al_submodel *s = al_model_get(m, 0);
	const struct al_graph *g = s && s->n_graphs ? s->graphs[0] : NULL;
	if (!g || !*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 9)
		return v;
	for (uint32_t k = 0; k < g->n_nodes; k++)
		if (g->nodes[k].name && strcmp(g->nodes[k].name, v) == 0)
			return v; /* a name first */
	unsigned long i = strtoul(v, NULL, 10);
	for (uint32_t k = 0; k < g->n_nodes; k++)
		if (g->nodes[k].index == i && g->nodes[k].name)
			return g->nodes[k].name;
	return v;
}

/* Load the model (and the rules), plan the cut. */
static enum al_status plan(struct job *j)
{
	struct al_split_result *r = j->r;
	const struct al_split_command *o = r->opts;
	const char **at = ali_calloc(o->n_at + 1, sizeof *at);
	size_t n_at = 0;
	bool segments = false;
	for (size_t i = 0; at && i < o->n_at; i++) {
		if (strcmp(o->at[i], "segments") == 0)
			segments = true;
		else
			at[n_at++] = o->at[i];
	}
	enum al_status st = at ? AL_OK : AL_E_NOMEM;
	/* rules: the segments are cut where check and plan, with the same rules, see
	 * the unit change (a rules file can, e.g., switch the work floor off) */
	if (st == AL_OK && o->rules && (st = al_user_rules_load(o->rules, &j->rules, j->d)) != AL_OK) {
		ali_free(at);
		return fail_diags(r, not_callers(st), o->rules);
	}
	struct al_check_opts co = {.user_rules = j->rules};
	if (st == AL_OK)
		st = al_model_open(o->model, &j->m, j->d);
	if (st == AL_OK && o->function && (st = al_model_select_function(j->m, o->function, j->d)) != AL_OK) {
		ali_free(at);
		return fail_diags(r, AL_E_INVALID_ARG, o->model);
	}
	for (size_t i = 0; st == AL_OK && i < n_at; i++)
		at[i] = at_index(j->m, at[i]);
	if (st == AL_OK) {
		struct al_split_opts so = {.at = at, .n_at = n_at, .segments = segments, .check = &co};
		st = al_split_plan(j->m, &so, &j->s, j->d);
	}
	ali_free(at);
	/* AL_E_INVALID_ARG: the cut named is wrong (no such layer, the last one,
	 * nothing to cut), not the model: the caller's mistake */
	return st == AL_OK ? AL_OK : fail_diags(r, st, o->model);
}

/* Write every file, then load and check each from disk. */
static enum al_status write_all(struct job *j)
{
	struct al_split_result *r = j->r;
	const struct al_split_command *o = r->opts;
	enum al_status st = al_split_write(j->s, o->parts, o->n_parts, o->pipeline, j->d);
	if (st != AL_OK)
		return fail_diags(r, not_callers(st), o->model);
	r->written = true;
	/* what is on disk loads and checks, as the in-memory copies did */
	for (size_t i = 0; i <= o->n_parts; i++) {
		const char *p = i < o->n_parts ? o->parts[i] : o->pipeline;
		if (!p)
			continue;
		al_model *back = NULL;
		al_diags *d = al_diags_new();
		enum al_status rst = !d ? AL_E_NOMEM : al_model_open(p, &back, d);
		if (rst == AL_OK)
			rst = al_model_check(back, NULL, d);
		al_model_free(back);
		al_diags_free(d);
		if (rst == AL_E_NOMEM)
			return fail_subject(r, j->d, AL_E_NOMEM, p, "out of memory");
		if (rst != AL_OK)
			return fail_subject(r, j->d, AL_E_FORMAT, p, "written, but does not re-load");
	}
	return AL_OK;
}

static enum al_status split_all(struct job *j)
{
	struct al_split_result *r = j->r;
	enum al_status st = check_paths(r, j->d);
	if (st == AL_OK)
		st = plan(j);
	if (st != AL_OK)
		return st;
	r->split = j->s;
	r->n_parts = al_split_count(j->s);
	if (r->opts->n_parts && r->opts->n_parts != r->n_parts) {
		snprintf(r->fail.msg, sizeof r->fail.msg, "the cut gives %zu parts but -o is given %zu time%s",
			 r->n_parts, r->opts->n_parts, r->opts->n_parts == 1 ? "" : "s");
		r->fail.kind = AL_FAIL_OPTION;
		r->fail.status = AL_E_INVALID_ARG;
		r->fail.fmt = "%s";
		r->fail.arg = r->fail.msg;
		ali_diag_add(j->d, AL_SEV_ERROR, NULL, UINT64_MAX, NULL, NULL, "%s", r->fail.msg);
		return AL_E_INVALID_ARG;
	}
	j->b = ali_calloc(r->n_parts + 1, sizeof *j->b);
	r->figures = ali_calloc(r->n_parts + 1, sizeof *r->figures);
	if (!j->b || !r->figures)
		return fail_subject(r, j->d, AL_E_NOMEM, r->opts->model, "out of memory");
	for (size_t i = 0; i <= r->n_parts; i++)
		if ((st = build(j, i)) != AL_OK)
			return st;
	if ((st = prove(j)) != AL_OK)
		return st;
	r->refused = r->proof_run && !(r->pipeline_identical && r->chain_identical);
	if (!r->refused && (st = write_all(j)) != AL_OK)
		return st;
	/* the notes: every warning of the way (borrowed from d) */
	if (!(r->notes = ali_calloc(al_diags_count(j->d) + 1, sizeof *r->notes)))
		return fail_subject(r, j->d, AL_E_NOMEM, r->opts->model, "out of memory");
	for (size_t i = 0; i < al_diags_count(j->d); i++)
		if (al_diags_get(j->d, i)->severity == AL_SEV_WARNING)
			r->notes[r->n_notes++] = al_diags_get(j->d, i)->msg;
	return AL_OK;
}

struct priv {
	al_model *m;
	al_user_rules *rules;
	al_splitter *s;
};

enum al_status al_split_model(const struct al_split_command *o, struct al_split_result **out, al_diags *d)
{
	struct al_split_result *r = *out = ali_calloc(1, sizeof *r);
	struct priv *p = ali_calloc(1, sizeof *p);
	if (!r || !p) {
		ali_free(r);
		ali_free(p);
		*out = NULL;
		return AL_E_NOMEM;
	}
	r->opts = o;
	r->priv = p;
	struct job j = {.r = r, .o = o, .d = d};
	enum al_status st = split_all(&j);
	for (size_t i = 0; j.b && i <= r->n_parts; i++) {
		al_model_free(j.b[i].m);
		ali_free(j.b[i].bytes);
	}
	ali_free(j.b);
	p->m = j.m;
	p->rules = j.rules;
	p->s = j.s;
	return st;
}

void al_split_result_free(struct al_split_result *r)
{
	if (!r)
		return;
	struct priv *p = r->priv;
	if (p) {
		al_split_free(p->s);
		al_model_free(p->m);
		al_user_rules_free(p->rules); /* after the model: its verdicts may point at them */
		ali_free(p);
	}
	ali_free(r->figures);
	ali_free(r->notes);
	ali_free(r);
}

/* ---------------------------------------------------------------- JSON */

static const char *role_name(enum al_split_role role)
{
	return role == AL_SPLIT_MODEL_INPUT ? "model input" : role == AL_SPLIT_MODEL_OUTPUT ? "model output"
											  : "boundary";
}

static void json_tensors(FILE *out, const struct al_split_tensor *v, uint32_t n)
{
	fprintf(out, "[");
	for (uint32_t k = 0; k < n; k++) {
		fprintf(out, "%s{\"name\": ", k ? ", " : "");
		al_json_put_string(out, v[k].name);
		fprintf(out, ", \"role\": \"%s\", \"from_part\": %d", role_name(v[k].role),
			v[k].from_part >= 0 ? v[k].from_part + 1 : 0);
		if (v[k].rank) {
			fprintf(out, ", \"dtype\": \"%s\", \"shape\": ", al_dtype_name(v[k].dtype));
			ali_dims_fput(out, v[k].dims, v[k].rank > 0 ? (size_t)v[k].rank : 0, AL_DIMS_SPACED);
			fprintf(out, ", \"blob\": ");
			ali_dims_fput(out, v[k].inferred.dims,
				      v[k].inferred.rank > 0 ? (size_t)v[k].inferred.rank : 0, AL_DIMS_SPACED);
		}
		fprintf(out, "}");
	}
	fprintf(out, "]");
}

void al_split_result_json(FILE *out, const struct al_split_result *r)
{
	const struct al_split_command *o = r->opts;
	fprintf(out, "{\n  \"anelint\": \"%s\",\n  \"schema\": %d,\n  \"command\": \"split\",\n  \"input\": ",
		ANELINT_VERSION, ANELINT_JSON_SCHEMA_VERSION);
	al_json_put_string(out, o->model);
	fprintf(out, ",\n  \"parts\": [");
	for (size_t p = 0; p < r->n_parts; p++) {
		const struct al_split_part *pt = al_split_get(r->split, p);
		const struct al_split_figures *b = &r->figures[p];
		fprintf(out, "%s\n    {\"path\": ", p ? "," : "");
		if (o->n_parts)
			al_json_put_string(out, o->parts[p]);
		else
			fprintf(out, "null");
		fprintf(out, ", \"type\": \"%s\", \"spec\": %d, \"first\": %u, \"last\": %u, \"first_layer\": ",
			pt->type, pt->spec_version, pt->first, pt->last);
		al_json_put_string(out, pt->first_layer);
		fprintf(out, ", \"last_layer\": ");
		al_json_put_string(out, pt->last_layer);
		fprintf(out, ", \"layers\": %u, \"fallbacks\": %u, \"segments\": %u,\n     \"inputs\": ", b->layers,
			b->fallbacks, b->segments);
		json_tensors(out, pt->inputs, pt->n_inputs);
		fprintf(out, ",\n     \"outputs\": ");
		json_tensors(out, pt->outputs, pt->n_outputs);
		fprintf(out, "}");
	}
	fprintf(out, "\n  ],\n  \"notes\": [");
	for (size_t i = 0; i < r->n_notes; i++) {
		fprintf(out, "%s", i ? ", " : "");
		al_json_put_string(out, r->notes[i]);
	}
	fprintf(out, "],\n  \"pipeline\": ");
	if (o->pipeline)
		al_json_put_string(out, o->pipeline);
	else
		fprintf(out, "null");
	fprintf(out, ",\n  \"proof\": {\"run\": %s, \"seed\": %llu, \"pipeline_identical\": %s, "
		"\"chained_identical\": %s, \"note\": ",
		r->proof_run ? "true" : "false", (unsigned long long)o->seed,
		r->proof_run && r->pipeline_identical ? "true" : "false",
		r->proof_run && r->chain_identical ? "true" : "false");
	al_json_put_string(out, r->why);
	fprintf(out, "},\n  \"refused\": %s,\n  \"written\": %s\n}\n", r->refused ? "true" : "false",
		r->written ? "true" : "false");
}
