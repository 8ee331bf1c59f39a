/* SPDX-License-Identifier: MIT */
/* split.c: `anelint split IN --at LAYER|INDEX -o PART1 -o PART2 [--pipeline OUT]`
 * (docs/split.md): NeuralNetwork .mlmodel files and ML Program .mlpackages.
 *
 *   1. load IN; plan the cut (the library refuses what cannot be cut, with why)
 *   2. build every part and the pipeline in memory; each must load and check
 *   3. proof: run IN, the pipeline, and the parts one after the other (each fed
 *      the model inputs and the earlier parts' outputs) in the reference
 *      interpreter on the same inputs (--inputs DIR, else seeded random); every output must be
 *      bit-identical to IN's. A model the interpreter cannot run (a custom
 *      layer) is written unproved, and the report says so.
 *   4. write every -o and --pipeline file, all or none (temporary + rename), and
 *      load and check each again from disk
 *
 * Exit codes: 0 written; 1 a part or the pipeline differs from IN (nothing
 * written); 2 usage; 3 IN is malformed or unsupported, or the cut is refused;
 * 4 I/O.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct built {
	uint8_t *bytes;
	size_t n;
	al_model *m;
	uint32_t layers, fallbacks, segments;
};

struct proof {
	bool run;               /* the original ran */
	char why[256];          /* why not, or the first difference */
	bool pipe_ok, chain_ok; /* bit-identical */
	size_t n_outputs;
};

struct job {
	struct cli *c;
	const char *in;
	al_model *m;
	al_diags *d;
	al_splitter *s;
	size_t n_parts;
	struct built *b; /* n_parts + 1: the pipeline last */
	struct proof pr;
	uint64_t seed, max_bytes;
};

static bool same_path(const char *a, const char *b)
{
	struct stat sa, sb;
	if (strcmp(a, b) == 0)
		return true;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static void summarize(struct built *b)
{
	al_diags *d = al_diags_new();
	if (!d)
		return;
	for (size_t i = 0; i < al_model_count(b->m); i++) {
		const struct al_plan *p = NULL;
		if (al_model_plan(b->m, i, NULL, &p, d) != AL_OK || !p)
			continue;
		b->layers += p->n_nodes;
		b->segments += p->n_segments;
		for (uint32_t k = 0; k < p->n_nodes; k++)
			b->fallbacks += !p->nodes[k]->verdict.ane;
		al_plan_free(p);
	}
	al_diags_free(d);
}

/* Build part i (i == n_parts: the pipeline), load and check it. */
static int build(struct job *j, size_t i)
{
	struct built *b = &j->b[i];
	enum al_status st = al_split_bytes(j->s, i, &b->bytes, &b->n, j->d);
	if (st) {
		print_errors(j->in, j->d);
		return status_exit(st);
	}
	char name[64];
	if (i < j->n_parts)
		snprintf(name, sizeof name, "part%zu", i + 1);
	else
		snprintf(name, sizeof name, "pipeline");
	al_diags *d = al_diags_new();
	if (!d)
		return EXIT_IO;
	const void *w;
	size_t nw;
	al_split_weights(j->s, &w, &nw);
	st = al_model_open_buffer(b->bytes, b->n, w, nw, name, &b->m, d);
	if (st == AL_OK)
		st = al_model_check(b->m, NULL, d);
	if (st != AL_OK) {
		error_at(j->in, "the %s does not load (a bug in split); nothing written", name);
		print_errors(name, d);
		al_diags_free(d);
		return EXIT_INVALID;
	}
	al_diags_free(d);
	summarize(b);
	return EXIT_ALL_ANE;
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
static bool outputs_match(const struct al_named_tensor *ref, size_t nr,
			  const struct al_named_tensor *got, size_t n, char *why, size_t cap)
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
	size_t cap = n_in, n = 0;
	for (size_t p = 0; p < j->n_parts; p++)
		cap += al_split_get(j->s, p)->n_outputs;
	struct al_named_tensor *v = calloc(cap + 1, sizeof *v);
	struct al_named_tensor *feed = calloc(cap + 1, sizeof *feed);
	enum al_status st = v && feed ? AL_OK : AL_E_NOMEM;
	/* the env borrows the inputs (not freed) and owns what parts return */
	for (size_t i = 0; !st && i < n_in; i++)
		v[n++] = in[i];
	size_t owned_from = n;
	for (size_t p = 0; !st && p < j->n_parts; p++) {
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
	free(feed);
	/* hand back only what the parts produced */
	if (v) {
		memmove(v, v + owned_from, (n - owned_from) * sizeof *v);
		n -= owned_from;
	}
	*env = v;
	*n_env = n;
	return st;
}

static int prove(struct job *j)
{
	const struct al_submodel *s = al_model_get(j->m, 0);
	struct al_named_tensor *in = calloc(s->n_inputs + 1u, sizeof *in);
	if (!in)
		return EXIT_IO;
	size_t n_in = 0;
	int rc = EXIT_ALL_ANE;
	for (uint32_t i = 0; i < s->n_inputs && rc == EXIT_ALL_ANE; i++) {
		if (s->inputs[i].optional)
			continue;
		al_diags *d = al_diags_new();
		al_tensor *t = NULL;
		char path[4096];
		bool from_dir = j->c->inputs &&
				snprintf(path, sizeof path, "%s/%s.npy", j->c->inputs, s->inputs[i].name) <
					(int)sizeof path &&
				access(path, F_OK) == 0;
		enum al_status st = !d ? AL_E_NOMEM
				  : from_dir ? al_npy_read(path, &t, d)
					     : al_random_input(&s->inputs[i], j->seed, j->max_bytes, &t, d);
		if (st == AL_OK) {
			in[n_in].name = s->inputs[i].name;
			in[n_in++].t = t;
		} else {
			last_error(d, st, j->pr.why, sizeof j->pr.why, "no random input");
			rc = -1;
		}
		al_diags_free(d);
	}
	struct al_named_tensor *ref = NULL, *pipe = NULL, *chain = NULL;
	size_t nr = 0, np = 0, nc = 0;
	uint64_t held = al_values_bytes(in, n_in); /* one budget: inputs, then the outputs kept */
	struct al_run_opts o = {.precision = AL_PREC_FP32, .max_bytes = j->max_bytes, .max_work = max_work_of(j->c),
				.held_bytes = &held};
	al_diags *d = al_diags_new();
	if (rc == EXIT_ALL_ANE && d) {
		enum al_status st = al_model_run(j->m, in, n_in, &o, &ref, &nr, d);
		held += al_values_bytes(ref, nr);
		if (st != AL_OK) {
			last_error(d, st, j->pr.why, sizeof j->pr.why, "the interpreter cannot run the model");
		} else {
			j->pr.run = true;
			j->pr.n_outputs = nr;
			st = al_model_run(j->b[j->n_parts].m, in, n_in, &o, &pipe, &np, d);
			held += al_values_bytes(pipe, np);
			if (st != AL_OK)
				last_error(d, st, j->pr.why, sizeof j->pr.why, "the pipeline does not run");
			else
				j->pr.pipe_ok = outputs_match(ref, nr, pipe, np, j->pr.why, sizeof j->pr.why);
			char why2[256] = "";
			st = run_chain(j, in, n_in, &o, &chain, &nc, d);
			if (st != AL_OK)
				last_error(d, st, why2, sizeof why2, "the parts do not run");
			else
				j->pr.chain_ok = outputs_match(ref, nr, chain, nc, why2, sizeof why2);
			if (!j->pr.why[0] && why2[0])
				snprintf(j->pr.why, sizeof j->pr.why, "%s", why2);
		}
	} else if (!d) {
		rc = EXIT_IO;
	}
	al_diags_free(d);
	al_outputs_free(ref, nr);
	al_outputs_free(pipe, np);
	al_outputs_free(chain, nc);
	for (size_t i = 0; i < n_in; i++)
		al_tensor_free(in[i].t);
	free(in);
	return rc < 0 ? EXIT_ALL_ANE : rc;
}

/* ---------------------------------------------------------------- report */

static const char *role_name(enum al_split_role r)
{
	return r == AL_SPLIT_MODEL_INPUT ? "model input" : r == AL_SPLIT_MODEL_OUTPUT ? "model output"
										 : "boundary";
}

static void dims_str(char *b, size_t cap, int rank, const int64_t *dims)
{
	size_t k = (size_t)snprintf(b, cap, "[");
	for (int i = 0; i < rank && k < cap; i++)
		k += (size_t)snprintf(b + k, cap - k, "%s%lld", i ? "," : "", (long long)dims[i]);
	if (k < cap)
		snprintf(b + k, cap - k, "]");
}

static void tensor_type(const struct al_split_tensor *t, char *b, size_t cap)
{
	if (t->rank == 0) {
		snprintf(b, cap, "as declared in the input model");
		return;
	}
	char d[160], inf[160];
	dims_str(d, sizeof d, t->rank, t->dims);
	dims_str(inf, sizeof inf, t->inferred.rank, t->inferred.dims);
	if (t->inferred.rank != t->rank)
		snprintf(b, cap, "multiArray %s %s (blob %s)", al_dtype_name(t->dtype), d, inf);
	else
		snprintf(b, cap, "multiArray %s %s", al_dtype_name(t->dtype), d);
}

static const char *proof_word(const struct job *j, bool ok)
{
	return !j->pr.run ? "not run" : ok ? "bit-identical" : "DIFFERS";
}

static void report_text(const struct job *j, const struct cli_list *outs, bool written, bool refused)
{
	printf("split %s: %zu parts\n", j->in, j->n_parts);
	for (size_t p = 0; p < j->n_parts; p++) {
		const struct al_split_part *pt = al_split_get(j->s, p);
		const struct built *b = &j->b[p];
		printf("  part %zu%s%s: layers %u-%u ('%s' .. '%s'), %s, spec %d: %u layers, %u fall back, "
		       "%u segment%s\n",
		       p + 1, outs->n ? " " : "", outs->n ? outs->v[p] : "", pt->first, pt->last,
		       pt->first_layer, pt->last_layer, pt->type, pt->spec_version, b->layers, b->fallbacks,
		       b->segments, b->segments == 1 ? "" : "s");
		for (int io = 0; io < 2; io++) {
			const struct al_split_tensor *v = io ? pt->outputs : pt->inputs;
			uint32_t n = io ? pt->n_outputs : pt->n_inputs;
			for (uint32_t k = 0; k < n; k++) {
				char ty[400];
				tensor_type(&v[k], ty, sizeof ty);
				printf("    %-3s %-28s %-12s %s", io ? "out" : "in", v[k].name, role_name(v[k].role), ty);
				if (!io && v[k].from_part >= 0)
					printf("  (from part %d)", v[k].from_part + 1);
				printf("\n");
			}
		}
	}
	for (size_t i = 0; i < al_diags_count(j->d); i++)
		if (al_diags_get(j->d, i)->severity == AL_SEV_WARNING)
			printf("  note: %s\n", al_diags_get(j->d, i)->msg);
	const struct built *pb = &j->b[j->n_parts];
	printf("  pipeline%s%s: %u layers, %u fall back, %u segments\n", j->c->pipeline ? " " : "",
	       j->c->pipeline ? j->c->pipeline : "", pb->layers, pb->fallbacks, pb->segments);
	const char *dir = j->c->inputs;
	printf("proof (reference interpreter, fp32, inputs: %s%s%s seed %llu):\n", dir ? "from " : "",
	       dir ? dir : "", dir ? ", else random," : "random,", (unsigned long long)j->seed);
	printf("  pipeline vs original:       %s\n", proof_word(j, j->pr.pipe_ok));
	printf("  parts chained vs original:  %s\n", proof_word(j, j->pr.chain_ok));
	if (j->pr.why[0])
		printf("  %s\n", j->pr.why);
	if (refused)
		printf("REFUSED: the parts do not give the original's outputs; nothing written\n");
	else if (written) {
		printf("wrote");
		for (int i = 0; i < outs->n; i++)
			printf(" %s", outs->v[i]);
		if (j->c->pipeline)
			printf(" %s", j->c->pipeline);
		printf("%s\n", j->pr.run ? "" : " (unproved: the interpreter could not run the model)");
	}
}

static void json_tensors(const struct al_split_tensor *v, uint32_t n)
{
	printf("[");
	for (uint32_t k = 0; k < n; k++) {
		printf("%s{\"name\": ", k ? ", " : "");
		al_json_put_string(stdout, v[k].name);
		printf(", \"role\": \"%s\", \"from_part\": %d", role_name(v[k].role),
		       v[k].from_part >= 0 ? v[k].from_part + 1 : 0);
		if (v[k].rank) {
			printf(", \"dtype\": \"%s\", \"shape\": [", al_dtype_name(v[k].dtype));
			for (int i = 0; i < v[k].rank; i++)
				printf("%s%lld", i ? ", " : "", (long long)v[k].dims[i]);
			printf("], \"blob\": [");
			for (int i = 0; i < v[k].inferred.rank; i++)
				printf("%s%lld", i ? ", " : "", (long long)v[k].inferred.dims[i]);
			printf("]");
		}
		printf("}");
	}
	printf("]");
}

static void report_json(const struct job *j, const struct cli_list *outs, bool written, bool refused)
{
	printf("{\n  \"anelint\": \"%s\",\n  \"schema\": %d,\n  \"command\": \"split\",\n  \"input\": ", ANELINT_VERSION,
	       ANELINT_JSON_SCHEMA_VERSION);
	al_json_put_string(stdout, j->in);
	printf(",\n  \"parts\": [");
	for (size_t p = 0; p < j->n_parts; p++) {
		const struct al_split_part *pt = al_split_get(j->s, p);
		const struct built *b = &j->b[p];
		printf("%s\n    {\"path\": ", p ? "," : "");
		if (outs->n)
			al_json_put_string(stdout, outs->v[p]);
		else
			printf("null");
		printf(", \"type\": \"%s\", \"spec\": %d, \"first\": %u, \"last\": %u, \"first_layer\": ",
		       pt->type, pt->spec_version, pt->first, pt->last);
		al_json_put_string(stdout, pt->first_layer);
		printf(", \"last_layer\": ");
		al_json_put_string(stdout, pt->last_layer);
		printf(", \"layers\": %u, \"fallbacks\": %u, \"segments\": %u,\n     \"inputs\": ", b->layers,
		       b->fallbacks, b->segments);
		json_tensors(pt->inputs, pt->n_inputs);
		printf(",\n     \"outputs\": ");
		json_tensors(pt->outputs, pt->n_outputs);
		printf("}");
	}
	printf("\n  ],\n  \"notes\": [");
	size_t nn = 0;
	for (size_t i = 0; i < al_diags_count(j->d); i++)
		if (al_diags_get(j->d, i)->severity == AL_SEV_WARNING) {
			printf("%s", nn++ ? ", " : "");
			al_json_put_string(stdout, al_diags_get(j->d, i)->msg);
		}
	printf("],\n  \"pipeline\": ");
	if (j->c->pipeline)
		al_json_put_string(stdout, j->c->pipeline);
	else
		printf("null");
	printf(",\n  \"proof\": {\"run\": %s, \"seed\": %llu, \"pipeline_identical\": %s, "
	       "\"chained_identical\": %s, \"note\": ",
	       j->pr.run ? "true" : "false", (unsigned long long)j->seed,
	       j->pr.run && j->pr.pipe_ok ? "true" : "false", j->pr.run && j->pr.chain_ok ? "true" : "false");
	al_json_put_string(stdout, j->pr.why);
	printf("},\n  \"refused\": %s,\n  \"written\": %s\n}\n", refused ? "true" : "false",
	       written ? "true" : "false");
}

/* ---------------------------------------------------------------- command */

/* --at 10: the index `check` shows (a top-level layer / op of the graph split
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

int cmd_split(struct cli *c)
{
	const struct command_row *cmd = command("split");
	struct job j = {.c = c, .in = c->paths[0]};
	bool json = false;
	if (c->format && strcmp(c->format, "json") == 0)
		json = true;
	else if (c->format && strcmp(c->format, "text") != 0)
		return usage_error(cmd, "--format takes text or json, not '%s'", c->format);
	if (c->at.n == 0)
		return usage_error(cmd, "give --at LAYER (the last layer of the first part: its name or the index "
				   "check shows) or --at segments%s", "");
	const struct cli_list *outs = &c->outputs;
	if (outs->n == 0 && !c->pipeline)
		return usage_error(cmd, "give -o PART once per part, and/or --pipeline OUT%s", "");
	for (int i = 0; i <= outs->n; i++) {
		const char *o = i < outs->n ? outs->v[i] : c->pipeline;
		if (!o)
			continue;
		/* refusals rather than syntax errors: one line, no hint */
		int grc = guard_output(c, o, 0);
		if (grc)
			return grc;
		for (int k = 0; k < i; k++)
			if (same_path(o, outs->v[k])) {
				fputs("anelint: error: ", stderr);
				put_text(stderr, o, CLI_NAME_MAX);
				fputs(" is named twice as an output\n", stderr);
				return EXIT_USAGE;
			}
	}
	int rc = run_settings(c, cmd, &j.seed, &j.max_bytes);
	if (rc != EXIT_ALL_ANE)
		return rc;
	if (!(j.d = al_diags_new()))
		return EXIT_IO;
	const char **at = calloc((size_t)c->at.n + 1, sizeof *at);
	size_t n_at = 0;
	bool segments = false;
	for (int i = 0; at && i < c->at.n; i++) {
		if (strcmp(c->at.v[i], "segments") == 0)
			segments = true;
		else
			at[n_at++] = c->at.v[i];
	}
	/* --rules: the segments are cut where check and plan, with the same rules, see
	 * the unit change (a rules file can, e.g., switch the work floor off) */
	al_user_rules *rules = NULL;
	enum al_status st = at ? AL_OK : AL_E_NOMEM;
	if (st == AL_OK && c->rules && (st = al_user_rules_load(c->rules, &rules, j.d)) != AL_OK) {
		free(at);
		print_errors(c->rules, j.d);
		rc = status_exit(st);
		goto done;
	}
	struct al_check_opts co = {.user_rules = rules};
	if (st == AL_OK)
		st = al_model_open(j.in, &j.m, j.d);
	if (st == AL_OK && c->function && (st = al_model_select_function(j.m, c->function, j.d)) != AL_OK) {
		free(at);
		print_errors(j.in, j.d);
		rc = EXIT_USAGE;
		goto done;
	}
	for (size_t i = 0; st == AL_OK && i < n_at; i++)
		at[i] = at_index(j.m, at[i]);
	if (st == AL_OK) {
		struct al_split_opts so = {.at = at, .n_at = n_at, .segments = segments, .check = &co};
		st = al_split_plan(j.m, &so, &j.s, j.d);
	}
	free(at);
	if (st != AL_OK) {
		print_errors(j.in, j.d);
		/* AL_E_INVALID_ARG: the cut named is wrong (no such layer, the last one,
		 * nothing to cut), not the model: a usage error */
		rc = st == AL_E_INVALID_ARG ? EXIT_USAGE : status_exit(st);
		goto done;
	}
	j.n_parts = al_split_count(j.s);
	if (outs->n && (size_t)outs->n != j.n_parts) {
		char why[96];
		snprintf(why, sizeof why, "the cut gives %zu parts but -o is given %d time%s", j.n_parts,
			 outs->n, outs->n == 1 ? "" : "s");
		rc = usage_error(cmd, "%s", why);
		goto done;
	}
	if (!(j.b = calloc(j.n_parts + 1, sizeof *j.b))) {
		rc = EXIT_IO;
		goto done;
	}
	for (size_t i = 0; i <= j.n_parts; i++)
		if ((rc = build(&j, i)) != EXIT_ALL_ANE)
			goto done;
	if ((rc = prove(&j)) != EXIT_ALL_ANE)
		goto done;
	bool refused = j.pr.run && !(j.pr.pipe_ok && j.pr.chain_ok), written = false;
	if (!refused) {
		st = al_split_write(j.s, outs->v, (size_t)outs->n, c->pipeline, j.d);
		if (st != AL_OK) {
			print_errors(j.in, j.d);
			rc = status_exit(st);
			goto done;
		}
		written = true;
		/* what is on disk loads and checks, as the in-memory copies did */
		for (int i = 0; i <= outs->n && rc == EXIT_ALL_ANE; i++) {
			const char *o = i < outs->n ? outs->v[i] : c->pipeline;
			al_model *back = NULL;
			al_diags *d = o ? al_diags_new() : NULL;
			if (o && (!d || al_model_open(o, &back, d) != AL_OK || al_model_check(back, NULL, d) != AL_OK)) {
				error_at(o, "written, but does not re-load");
				rc = EXIT_INVALID;
			}
			al_model_free(back);
			al_diags_free(d);
		}
		if (rc != EXIT_ALL_ANE)
			goto done;
	}
	if (json)
		report_json(&j, outs, written, refused);
	else
		report_text(&j, outs, written, refused);
	rc = refused ? EXIT_FALLBACK : EXIT_ALL_ANE;
done:
	for (size_t i = 0; j.b && i <= j.n_parts; i++) {
		al_model_free(j.b[i].m);
		free(j.b[i].bytes);
	}
	free(j.b);
	al_split_free(j.s);
	al_model_free(j.m);
	al_user_rules_free(rules); /* after the model: its verdicts may point at them */
	al_diags_free(j.d);
	if (fflush(stdout) != 0)
		return EXIT_IO;
	return rc;
}
