/* fix.c: `anelint fix IN -o OUT`: model surgery (docs/surgery.md).
 *
 *   1. load and check IN; its plan summary is "before"
 *   2. plan the rewrites (the library's pass table), build the new file in
 *      memory, load and check it; a rewrite whose layers still fall back is
 *      dropped and the plan redone (at most 4 rounds)
 *   3. run IN and the rewritten model in the reference interpreter on the same
 *      seeded random inputs (and --inputs DIR); an exact rewrite must be
 *      bit-identical, a reassociating one within 1e-5 * max|ref| per output
 *   4. write OUT (temporary file + rename) unless --dry-run or refused
 *
 * Exit codes: 0 written (or would be, --dry-run); 1 refused: a rewritten model
 * differs from the original or cannot be run to prove it (nothing written);
 * 2 usage; 3 the input is malformed or unsupported; 4 I/O.
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REASSOC_TOL 1e-5
#define MAX_ROUNDS 4

struct summary {
	uint32_t nodes, ane, segments, switches;
	uint32_t fallbacks; /* layers whose own verdict is off the ANE */
	bool ok;
};

static void summarize_model(al_model *m, struct summary *s)
{
	memset(s, 0, sizeof *s);
	al_diags *d = al_diags_new();
	if (!d)
		return;
	if (al_model_check(m, NULL, d) == AL_OK) {
		s->ok = true;
		for (size_t i = 0; i < al_model_count(m); i++) {
			const struct al_plan *p = NULL;
			if (al_model_plan(m, i, NULL, &p, d) != AL_OK || !p)
				continue;
			s->nodes += p->n_nodes;
			s->ane += p->ane_nodes;
			s->segments += p->n_segments;
			s->switches += p->switches;
			for (uint32_t k = 0; k < p->n_nodes; k++)
				s->fallbacks += !p->nodes[k]->verdict.ane;
		}
	}
	al_diags_free(d);
}

/* A layer of `m` by name (all graphs of every sub-model), or NULL. */
static const struct al_node *find_layer(const al_model *m, const char *name)
{
	for (size_t i = 0; i < al_model_count(m); i++) {
		const struct al_submodel *s = al_model_get(m, i);
		for (uint32_t g = 0; g < s->n_graphs; g++)
			for (uint32_t k = 0; k < s->graphs[g]->n_nodes; k++) {
				const struct al_node *n = &s->graphs[g]->nodes[k];
				if (n->name && strcmp(n->name, name) == 0)
					return n;
			}
	}
	return NULL;
}

/* ---------------------------------------------------------------- state */

struct dropped {
	char *name;
	char *why;
};

struct fix {
	struct cli *c;
	const char *in;
	al_model *m;
	al_diags *d;
	al_surgery *sg;
	uint8_t *bytes;
	size_t n_bytes;
	al_model *out_m;
	struct dropped *drop;
	size_t n_drop;
	const char **skip;
	struct summary before, after;
	enum al_equiv allow, highest;
	/* proof */
	bool proved, proof_ok, proof_run;
	char proof_why[256];
	struct outdiff {
		char *name;
		bool identical;
		double max_abs, ref_max, rel;
		bool pass;
		const char *why;
	} *diffs;
	size_t n_diffs;
	char inputs_how[128];
};

static void fix_free(struct fix *f)
{
	al_model_free(f->out_m);
	free(f->bytes);
	al_surgery_free(f->sg);
	al_model_free(f->m);
	al_diags_free(f->d);
	for (size_t i = 0; i < f->n_drop; i++) {
		free(f->drop[i].name);
		free(f->drop[i].why);
	}
	free(f->drop);
	free(f->skip);
	for (size_t i = 0; i < f->n_diffs; i++)
		free(f->diffs[i].name);
	free(f->diffs);
}

static char *fx_dup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);
	if (p)
		memcpy(p, s, n);
	return p;
}

static const char *dropped_why(const struct fix *f, const char *name)
{
	for (size_t i = 0; i < f->n_drop; i++)
		if (strcmp(f->drop[i].name, name) == 0)
			return f->drop[i].why;
	return NULL;
}

/* ---------------------------------------------------------------- rounds */

/* Plan, build and check; returns an exit code (0: fine). Sets *again when a
 * rewrite was dropped because its layers still fall back. */
static int round_once(struct fix *f, bool *again)
{
	*again = false;
	al_surgery_free(f->sg);
	f->sg = NULL;
	free(f->bytes);
	f->bytes = NULL;
	al_model_free(f->out_m);
	f->out_m = NULL;
	struct al_surgery_opts o = {.allow = f->allow, .skip = f->skip, .n_skip = f->n_drop};
	enum al_status st = al_surgery_plan(f->m, &o, &f->sg, f->d);
	if (st) {
		print_errors(f->in, f->d);
		return status_exit(st);
	}
	if (al_surgery_applied(f->sg) == 0)
		return EXIT_ALL_ANE;
	if ((st = al_surgery_bytes(f->sg, &f->bytes, &f->n_bytes, f->d)) != AL_OK) {
		print_errors(f->in, f->d);
		return status_exit(st);
	}
	al_diags *d2 = al_diags_new();
	if (!d2)
		return EXIT_IO;
	st = al_model_open_buffer(f->bytes, f->n_bytes, NULL, 0, f->in, &f->out_m, d2);
	if (st == AL_OK)
		st = al_model_check(f->out_m, NULL, d2);
	if (st != AL_OK) {
		fprintf(stderr, "anelint: error: %s: the rewritten model does not load (a bug in a pass); "
				"nothing written\n", f->in);
		print_errors(f->in, d2);
		al_diags_free(d2);
		return EXIT_INVALID;
	}
	al_diags_free(d2);
	for (size_t i = 0; i < al_surgery_count(f->sg); i++) {
		const struct al_rewrite *r = al_surgery_get(f->sg, i);
		if (!r->applied)
			continue;
		for (uint32_t k = 0; k < r->n_layers; k++) {
			const struct al_node *n = find_layer(f->out_m, r->layers[k]);
			if (!n || n->verdict.ane)
				continue;
			char why[256];
			snprintf(why, sizeof why, "the rewritten layer '%s' (%s) would still fall back: %s %s",
				 n->name, n->type,
				 n->verdict.n_rules ? n->verdict.rules[0]->id : "",
				 n->verdict.n_rules ? n->verdict.reasons[0] : "");
			struct dropped *dd = realloc(f->drop, (f->n_drop + 1) * sizeof *dd);
			const char **sk = realloc(f->skip, (f->n_drop + 1) * sizeof *sk);
			if (dd)
				f->drop = dd;
			if (sk)
				f->skip = sk;
			if (!dd || !sk)
				return EXIT_IO;
			f->drop[f->n_drop].name = fx_dup(r->node->name);
			f->drop[f->n_drop].why = fx_dup(why);
			if (!f->drop[f->n_drop].name || !f->drop[f->n_drop].why)
				return EXIT_IO;
			f->skip[f->n_drop] = f->drop[f->n_drop].name;
			f->n_drop++;
			*again = true;
			break;
		}
	}
	return EXIT_ALL_ANE;
}

/* ---------------------------------------------------------------- proof */

static int make_inputs(struct fix *f, const struct al_submodel *s, struct al_named_tensor *v,
		       size_t *n, uint64_t seed, uint64_t max_bytes)
{
	*n = 0;
	int from_dir = 0;
	for (uint32_t i = 0; i < s->n_inputs; i++) {
		const struct al_feature *ft = &s->inputs[i];
		al_tensor *t = NULL;
		al_diags *d = al_diags_new();
		if (!d)
			return EXIT_IO;
		enum al_status st = AL_OK;
		char path[4096];
		if (f->c->inputs && snprintf(path, sizeof path, "%s/%s.npy", f->c->inputs, ft->name) > 0 &&
		    access(path, F_OK) == 0) {
			st = al_npy_read(path, &t, d);
			from_dir++;
		} else if (!ft->optional) {
			st = al_random_input(ft, seed, max_bytes, &t, d);
		}
		if (st != AL_OK) {
			print_errors(ft->name, d);
			al_diags_free(d);
			return status_exit(st);
		}
		al_diags_free(d);
		if (t) {
			v[*n].name = ft->name;
			v[*n].t = t;
			(*n)++;
		}
	}
	snprintf(f->inputs_how, sizeof f->inputs_how, "%d from %s, the rest random (seed %llu)",
		 from_dir, f->c->inputs ? f->c->inputs : "(no --inputs)", (unsigned long long)seed);
	return EXIT_ALL_ANE;
}

static bool shapes_equal(al_tensor *a, al_tensor *b)
{
	if (al_tensor_rank(a) != al_tensor_rank(b))
		return false;
	return memcmp(al_tensor_dims(a), al_tensor_dims(b),
		      (size_t)al_tensor_rank(a) * sizeof(int64_t)) == 0;
}

/* Run both models; fill f->diffs. Returns an exit code for I/O trouble only. */
static int prove(struct fix *f)
{
	uint64_t seed, max_bytes;
	int rc0 = run_settings(f->c, command("fix"), &seed, &max_bytes);
	if (rc0 != EXIT_ALL_ANE)
		return rc0;
	const struct al_submodel *s = al_model_get(f->m, 0);
	struct al_named_tensor *in = calloc(s->n_inputs + 1, sizeof *in);
	if (!in)
		return EXIT_IO;
	size_t n_in = 0;
	int rc = make_inputs(f, s, in, &n_in, seed, max_bytes);
	struct al_named_tensor *oa = NULL, *ob = NULL;
	size_t na = 0, nb = 0;
	f->proof_run = true;
	if (rc == EXIT_ALL_ANE) {
		struct al_run_opts o = {.precision = AL_PREC_FP32, .max_bytes = max_bytes};
		al_diags *d = al_diags_new();
		enum al_status st = d ? al_model_run(f->m, in, n_in, &o, &oa, &na, d) : AL_E_NOMEM;
		if (st == AL_OK)
			st = al_model_run(f->out_m, in, n_in, &o, &ob, &nb, d);
		if (st != AL_OK) {
			const struct al_diag *e = d && al_diags_count(d) ? al_diags_get(d, al_diags_count(d) - 1)
								       : NULL;
			snprintf(f->proof_why, sizeof f->proof_why, "the interpreter cannot run it: %s%s%s",
				 e && e->node ? e->node : "", e && e->node ? ": " : "",
				 e ? e->msg : al_status_str(st));
			f->proved = false;
		} else {
			f->proved = true;
			f->proof_ok = na == nb;
			if (na != nb)
				snprintf(f->proof_why, sizeof f->proof_why, "%zu outputs against %zu", nb, na);
			f->diffs = calloc(na ? na : 1, sizeof *f->diffs);
			for (size_t i = 0; f->diffs && i < na && i < nb; i++) {
				struct outdiff *df = &f->diffs[f->n_diffs++];
				df->name = fx_dup(oa[i].name);
				al_tensor *a = oa[i].t, *b = ob[i].t;
				const float *x = al_tensor_data(a), *y = al_tensor_data(b);
				size_t n = al_tensor_count(a);
				if (!x || !y || n != al_tensor_count(b) || !shapes_equal(a, b) ||
				    strcmp(oa[i].name, ob[i].name) != 0) {
					df->why = !x || !y ? "not numeric" : "shapes or names differ";
					df->pass = x == NULL && y == NULL && n == al_tensor_count(b);
					if (df->pass)
						for (size_t k = 0; k < n; k++)
							df->pass &= strcmp(al_tensor_string(a, k),
									   al_tensor_string(b, k)) == 0;
					f->proof_ok &= df->pass;
					continue;
				}
				df->identical = memcmp(x, y, n * sizeof *x) == 0;
				for (size_t k = 0; k < n; k++) {
					double e = fabs((double)x[k] - (double)y[k]);
					if (isnan(x[k]) != isnan(y[k]))
						e = INFINITY;
					else if (isnan(x[k]))
						e = 0;
					if (e > df->max_abs)
						df->max_abs = e;
					if (isfinite(x[k]) && fabs(x[k]) > df->ref_max)
						df->ref_max = fabs(x[k]);
				}
				df->rel = df->ref_max > 0 ? df->max_abs / df->ref_max
							  : df->max_abs > 0 ? INFINITY : 0;
				df->pass = f->highest == AL_EQ_EXACT ? df->identical
				       : f->highest == AL_EQ_REASSOCIATE ? df->rel <= REASSOC_TOL
									 : true;
				f->proof_ok &= df->pass;
			}
			if (!f->diffs)
				rc = EXIT_IO;
		}
		al_diags_free(d);
	}
	al_outputs_free(oa, na);
	al_outputs_free(ob, nb);
	for (size_t i = 0; i < n_in; i++)
		al_tensor_free(in[i].t);
	free(in);
	return rc;
}

/* ---------------------------------------------------------------- report */

static void report_text(const struct fix *f, const char *out, bool written, bool refused)
{
	size_t applied = f->sg ? al_surgery_applied(f->sg) : 0;
	printf("fix %s%s%s: %zu rewrite%s applied (allowed: %s)\n", f->in, out ? " -> " : "",
	       out ? out : "", applied, applied == 1 ? "" : "s", al_equiv_name(f->allow));
	for (size_t i = 0; f->sg && i < al_surgery_count(f->sg); i++) {
		const struct al_rewrite *r = al_surgery_get(f->sg, i);
		if (r->applied)
			printf("  changed  %-24s %s -> %s  [%s, %s, answers %s]\n", r->node->name, r->node->type,
			       r->after, r->pass->name, al_equiv_name(r->pass->equiv), r->pass->rule);
	}
	for (size_t i = 0; f->sg && i < al_surgery_count(f->sg); i++) {
		const struct al_rewrite *r = al_surgery_get(f->sg, i);
		if (r->applied)
			continue;
		const char *why = dropped_why(f, r->node->name);
		printf("  left     %-24s %s: %s  [%s]\n", r->node->name, r->node->type,
		       why ? why : r->why_not, r->pass->name);
	}
	const struct summary *ss[2] = {&f->before, &f->after};
	for (int k = 0; k < 2; k++)
		printf("check %s %u layers, %u fall back by their own verdict, %u on the ANE after "
		       "partitioning, %u segments, %u switches\n",
		       k ? "after: " : "before:", ss[k]->nodes, ss[k]->fallbacks, ss[k]->ane,
		       ss[k]->segments, ss[k]->switches);
	if (f->proof_run) {
		printf("proof (reference interpreter, fp32, inputs: %s):\n", f->inputs_how);
		for (size_t i = 0; i < f->n_diffs; i++) {
			const struct outdiff *df = &f->diffs[i];
			if (df->why)
				printf("  %-24s %s  %s\n", df->name, df->why, df->pass ? "ok" : "DIFFERS");
			else
				printf("  %-24s %s  max|diff| %.3g  max|ref| %.3g  rel %.3g  %s\n", df->name,
				       df->identical ? "bit-identical" : "differs", df->max_abs, df->ref_max,
				       df->rel, df->pass ? "ok" : "REFUSED");
		}
		if (!f->proved || f->proof_why[0])
			printf("  %s\n", f->proof_why);
	} else if (applied == 0) {
		printf("nothing to rewrite: the output is a copy of the input\n");
	}
	if (refused)
		printf("REFUSED: %s; nothing written\n",
		       !f->proved ? "the rewrites could not be proved"
				  : f->highest == AL_EQ_EXACT ? "an exact rewrite is not bit-identical"
							      : "the results differ beyond the tolerance");
	else if (written)
		printf("wrote %s\n", out);
	else if (f->c->dry_run)
		printf("dry run: nothing written\n");
}

static void report_json(const struct fix *f, const char *out, bool written, bool refused)
{
	printf("{\n  \"anelint\": \"%s\",\n  \"command\": \"fix\",\n  \"input\": ", ANELINT_VERSION);
	al_json_put_string(stdout, f->in);
	printf(",\n  \"output\": ");
	if (out)
		al_json_put_string(stdout, out);
	else
		printf("null");
	printf(",\n  \"allow\": \"%s\",\n  \"rewrites\": [", al_equiv_name(f->allow));
	for (size_t i = 0; f->sg && i < al_surgery_count(f->sg); i++) {
		const struct al_rewrite *r = al_surgery_get(f->sg, i);
		const char *why = r->applied ? NULL : dropped_why(f, r->node->name);
		printf("%s\n    {\"layer\": ", i ? "," : "");
		al_json_put_string(stdout, r->node->name);
		printf(", \"type\": ");
		al_json_put_string(stdout, r->node->type);
		printf(", \"pass\": \"%s\", \"rule\": \"%s\", \"class\": \"%s\", \"applied\": %s, ",
		       r->pass->name, r->pass->rule, al_equiv_name(r->pass->equiv),
		       r->applied ? "true" : "false");
		if (r->applied) {
			printf("\"after\": ");
			al_json_put_string(stdout, r->after);
		} else {
			printf("\"why_not\": ");
			al_json_put_string(stdout, why ? why : r->why_not);
		}
		printf("}");
	}
	printf("\n  ],\n");
	const struct summary *ss[2] = {&f->before, &f->after};
	const char *nm[2] = {"before", "after"};
	for (int k = 0; k < 2; k++)
		printf("  \"%s\": {\"layers\": %u, \"ane\": %u, \"fallbacks\": %u, \"segments\": %u, "
		       "\"switches\": %u},\n",
		       nm[k], ss[k]->nodes, ss[k]->ane, ss[k]->fallbacks, ss[k]->segments,
		       ss[k]->switches);
	printf("  \"proof\": ");
	if (!f->proof_run) {
		printf("null");
	} else {
		printf("{\"proved\": %s, \"pass\": %s, \"inputs\": ", f->proved ? "true" : "false",
		       f->proof_ok ? "true" : "false");
		al_json_put_string(stdout, f->inputs_how);
		printf(", \"note\": ");
		al_json_put_string(stdout, f->proof_why);
		printf(", \"outputs\": [");
		for (size_t i = 0; i < f->n_diffs; i++) {
			const struct outdiff *df = &f->diffs[i];
			printf("%s\n    {\"name\": ", i ? "," : "");
			al_json_put_string(stdout, df->name);
			printf(", \"identical\": %s, \"max_abs\": %.9g, \"max_ref\": %.9g, \"rel\": %.9g, "
			       "\"pass\": %s}",
			       df->identical ? "true" : "false", isfinite(df->max_abs) ? df->max_abs : -1,
			       df->ref_max, isfinite(df->rel) ? df->rel : -1, df->pass ? "true" : "false");
		}
		printf("]}");
	}
	printf(",\n  \"refused\": %s,\n  \"written\": %s\n}\n", refused ? "true" : "false",
	       written ? "true" : "false");
}

/* ---------------------------------------------------------------- command */

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	if (strcmp(a, b) == 0)
		return true;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cmd_fix(struct cli *c)
{
	const struct command_row *cmd = command("fix");
	struct fix f = {.c = c, .in = c->paths[0], .allow = AL_EQ_EXACT};
	bool json = false;
	if (c->format && strcmp(c->format, "json") == 0)
		json = true;
	else if (c->format && strcmp(c->format, "text") != 0)
		return usage_error(cmd, "--format takes text or json, not '%s'", c->format);
	if (c->allow && !al_equiv_parse(c->allow, &f.allow))
		return usage_error(cmd, "--allow takes reassociate or approximate, not '%s'", c->allow);
	const char *out = c->output;
	if (!out && c->in_place)
		out = f.in;
	if (!out && !c->dry_run)
		return usage_error(cmd, "give -o OUT (or --dry-run, or --in-place)%s", "");
	if (out && !c->in_place && same_file(out, f.in))
		return usage_error(cmd, "-o %s is the input; add --in-place to replace it", out);
	int rc = EXIT_ALL_ANE;
	if (!(f.d = al_diags_new()))
		return EXIT_IO;
	enum al_status st = al_model_open(f.in, &f.m, f.d);
	if (st != AL_OK) {
		print_errors(f.in, f.d);
		rc = status_exit(st);
		goto done;
	}
	summarize_model(f.m, &f.before);
	f.after = f.before;
	bool again = true;
	for (int round = 0; round < MAX_ROUNDS && again; round++)
		if ((rc = round_once(&f, &again)) != EXIT_ALL_ANE)
			goto done;
	if (again) { /* still dropping after the last round: keep nothing */
		fprintf(stderr, "anelint: error: %s: the rewrites did not settle; nothing written\n", f.in);
		rc = EXIT_FALLBACK;
		goto done;
	}
	size_t applied = al_surgery_applied(f.sg);
	bool refused = false, written = false;
	if (applied) {
		f.highest = AL_EQ_EXACT;
		for (size_t i = 0; i < al_surgery_count(f.sg); i++) {
			const struct al_rewrite *r = al_surgery_get(f.sg, i);
			if (r->applied && r->pass->equiv > f.highest)
				f.highest = r->pass->equiv;
		}
		summarize_model(f.out_m, &f.after);
		if ((rc = prove(&f)) != EXIT_ALL_ANE)
			goto done;
		refused = !f.proved || !f.proof_ok;
	}
	if (!refused && out && !c->dry_run) {
		if ((st = al_surgery_write(f.sg, out, f.d)) != AL_OK) {
			print_errors(out, f.d);
			rc = status_exit(st);
			goto done;
		}
		written = true;
	}
	if (json)
		report_json(&f, out, written, refused);
	else
		report_text(&f, out, written, refused);
	rc = refused ? EXIT_FALLBACK : EXIT_ALL_ANE;
done:
	fix_free(&f);
	if (fflush(stdout) != 0)
		return EXIT_IO;
	return rc;
}
