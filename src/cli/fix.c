/* SPDX-License-Identifier: MIT */
/* fix.c: `anelint fix IN -o OUT` (docs/surgery.md): the options into an
 * al_fix_opts, al_model_fix (src/command/fix.c: the rounds, their proof, the keep /
 * refuse decision, the output written), then its result printed: the text
 * report here, --format json by the library's al_fix_write_json.
 *
 * Exit codes: 0 written (or would be, --dry-run); 1 refused: a rewritten model
 * differs from the original or cannot be run to prove it (nothing written);
 * 2 usage; 3 the input is malformed or unsupported; 4 I/O.
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MAX_ROUNDS 64

/* --shape / --enumerate as al_input_shape requests, owned here. */
struct shapes {
	struct al_input_shape *shapes;
	size_t n_shapes;
	int64_t *dims;
};

static void shapes_free(struct shapes *f)
{
	for (size_t i = 0; i < f->n_shapes; i++)
		free((char *)(uintptr_t)f->shapes[i].input);
	free(f->shapes);
	free(f->dims);
}

static char *dup_n(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

/* One shape "D1,D2,..." into dims (at most cap values); its rank, or -1. */
static int parse_dims(const char *s, const char *end, int64_t *dims, int cap)
{
	int r = 0;
	while (s < end) {
		char *e;
		errno = 0;
		long long v = strtoll(s, &e, 10);
		if (e == s || errno || v < 1 || v > INT32_MAX || r >= cap || (e < end && *e != ','))
			return -1;
		dims[r++] = v;
		s = e < end ? e + 1 : e;
		if (e < end && s == end)
			return -1; /* a trailing comma */
	}
	return r;
}

/* --shape NAME=D1,D2,...|default and --enumerate NAME=S1;S2;... into f->shapes
 * (whether the model has those inputs, al_model_fix says). */
#define MAX_SHAPE_DIMS 16
#define MAX_SHAPES 128
static int parse_shapes(const struct cli *c, struct shapes *f, const struct command_row *cmd)
{
	const struct cli_list *lists[2] = {&c->shape, &c->enumerate};
	size_t n = (size_t)c->shape.n + (size_t)c->enumerate.n;
	if (!n)
		return EXIT_ALL_ANE;
	f->shapes = calloc(n, sizeof *f->shapes);
	f->dims = calloc(n * MAX_SHAPES * MAX_SHAPE_DIMS, sizeof *f->dims);
	if (!f->shapes || !f->dims)
		return EXIT_IO;
	int64_t *next = f->dims;
	for (int l = 0; l < 2; l++)
		for (int i = 0; i < lists[l]->n; i++) {
			const char *a = lists[l]->v[i], *eq = strrchr(a, '=');
			if (!eq || eq == a || !eq[1])
				return usage_error(cmd, l ? "--enumerate takes NAME=S1;S2;... (S: D1,D2,...), not '%s'"
							  : "--shape takes NAME=D1,D2,... or NAME=default, not '%s'", a);
			struct al_input_shape *r = &f->shapes[f->n_shapes++];
			char *name = dup_n(a, (size_t)(eq - a));
			if (!name)
				return EXIT_IO;
			r->input = name;
			for (size_t k = 0; k + 1 < f->n_shapes; k++)
				if (strcmp(f->shapes[k].input, name) == 0)
					return usage_error(cmd, "input '%s' is given twice (--shape / --enumerate)", name);
			if (!l && strcmp(eq + 1, "default") == 0) {
				r->use_default = true;
				continue;
			}
			r->dims = next;
			const char *p = eq + 1;
			int rank = -1;
			uint32_t k = 0;
			while (*p) {
				const char *semi = l ? strchr(p, ';') : NULL;
				const char *end = semi ? semi : p + strlen(p);
				int rk = k < MAX_SHAPES ? parse_dims(p, end, next, MAX_SHAPE_DIMS) : -1;
				if (rk < 1 || (rank >= 0 && rk != rank))
					return usage_error(cmd, l ? "--enumerate: '%s' is not a list of shapes of one rank "
								  "(positive integers, at most 128 shapes of 16 axes)"
								: "--shape: '%s' is not D1,D2,... (positive integers, at most 16)",
							   a);
				rank = rk;
				next += rk;
				k++;
				p = semi ? semi + 1 : end;
			}
			r->rank = (uint32_t)(rank > 0 ? rank : 0);
			r->n_shapes = l ? k : 0;
		}
	return EXIT_ALL_ANE;
}

/* --allow CLASS[,CLASS...], repeatable: the highest class given (the classes
 * are a ladder: approximate includes reassociate). An exit code. */
static int parse_allow(const struct cli *c, const struct command_row *cmd, enum al_equiv *allow)
{
	*allow = AL_EQ_EXACT;
	for (int i = 0; i < c->allow.n; i++) {
		const char *p = c->allow.v[i];
		for (;;) {
			size_t n = strcspn(p, ",");
			char word[32];
			enum al_equiv e;
			snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), p);
			if (n >= sizeof word || !al_equiv_parse(word, &e))
				return usage_error(cmd, "--allow takes reassociate or approximate (a comma list, or "
						   "repeated), not '%s'", c->allow.v[i]);
			if (e > *allow)
				*allow = e;
			if (!p[n])
				break;
			p += n + 1;
		}
	}
	return EXIT_ALL_ANE;
}


/* ---------------------------------------------------------------- report */

/* One round's lines: what changed, what was left and why, before / after, the proof. */
static void print_round(const struct al_fix_round *g)
{
	for (size_t i = 0; i < g->n_rewrites; i++) {
		const struct al_fix_rewrite *r = &g->rewrites[i];
		if (r->applied)
			printf("  changed  %-24s %s -> %s  [%s, %s, answers %s]\n", r->layer, r->type, r->after, r->pass,
			       al_equiv_name(r->equiv), r->rule);
	}
	size_t quiet = 0; /* left as they were and already on the ANE: not worth a line */
	for (size_t i = 0; i < g->n_rewrites; i++) {
		const struct al_fix_rewrite *r = &g->rewrites[i];
		if (r->applied)
			continue;
		if (!r->dropped && r->on_ane) {
			quiet++;
			continue;
		}
		printf("  left     %-24s %s: %s  [%s]\n", r->layer, r->type, r->why_not, r->pass);
	}
	if (quiet)
		printf("  (%zu more layer%s of these types already run%s on the ANE and %s left as %s: "
		       "--format json lists why)\n",
		       quiet, quiet == 1 ? "" : "s", quiet == 1 ? "s" : "", quiet == 1 ? "is" : "are",
		       quiet == 1 ? "it was" : "they were");
	if (g->approximate_refused[0])
		printf("approximate rewrites refused by the proof (%s): this round is the one without them, "
		       "as --allow reassociate would give\n", g->approximate_refused);
	const struct al_fix_summary *ss[2] = {&g->before, &g->after};
	for (int k = 0; k < 2; k++)
		printf("check %s %u layers, %u fall back by their own verdict, %u on the ANE after "
		       "partitioning, %u segments, %u switches\n",
		       k ? "after: " : "before:", ss[k]->layers, ss[k]->fallbacks, ss[k]->ane, ss[k]->segments,
		       ss[k]->switches);
	const struct al_fix_round_proof *p = &g->proof;
	if (p->run) {
		if (strcmp(p->kind, "region") == 0)
			printf("proof: region (reference interpreter, fp32): %zu layer%s of the input against "
			       "%zu of the output, with the constants they read; %d run%s on %s:\n",
			       p->n_region_in, p->n_region_in == 1 ? "" : "s", p->n_region_out, p->runs,
			       p->runs == 1 ? "" : "s", p->inputs);
		else if (strcmp(p->kind, "structural") == 0)
			printf("proof: structural (no layer or op changed; nothing run):\n");
		else
			printf("proof: whole model (reference interpreter, fp32, inputs: %s):\n", p->inputs);
		if (p->note[0])
			printf("  (%s)\n", p->note);
		if (p->shapes[0])
			printf("  (shapes: %s)\n", p->shapes);
		for (size_t i = 0; i < p->n_diffs; i++) {
			const struct al_proof_diff *df = &p->diffs[i];
			char why[128];
			if (df->why)
				printf("  %-24s %s  %s\n", df->name, df->why, df->pass ? "ok" : "DIFFERS");
			else
				printf("  %-24s %s  max|diff| %.3g  max|ref| %.3g  rel %.3g  %s%s\n", df->name,
				       df->identical ? "bit-identical" : "differs", df->max_abs, df->ref_max,
				       df->rel, df->pass ? "ok" : "REFUSED", al_fix_diff_why(g, df, why, sizeof why));
		}
		if (!p->proved || p->why[0])
			printf("  %s\n", p->why);
	} else if (g->applied == 0) {
		printf("nothing to rewrite: the output is a copy of the input\n");
	}
}

static void print_text(const struct al_fix_result *res)
{
	const struct al_fix_round *last = &res->rounds[res->n_rounds - 1];
	const char *out = res->output;
	char in_rounds[48] = "";
	if (res->n_rounds > 1)
		snprintf(in_rounds, sizeof in_rounds, " in %d rounds", res->n_rounds);
	printf("fix %s%s%s: %zu rewrite%s applied%s (allowed: %s)\n", res->input, out ? " -> " : "", out ? out : "",
	       res->applied, res->applied == 1 ? "" : "s", in_rounds, al_equiv_name(res->allow));
	for (int k = 0; k < res->n_rounds; k++) {
		if (res->n_rounds > 1) {
			size_t a = res->rounds[k].applied;
			printf("round %d: %zu rewrite%s applied%s\n", k + 1, a, a == 1 ? "" : "s",
			       k ? " to the output of the round before" : "");
		}
		print_round(&res->rounds[k]);
	}
	if (res->pending)
		printf("rounds: stopped after %d (--max-rounds %d): %zu more rewrite%s appl%s to the output\n",
		       res->n_rounds, res->max_rounds, res->pending, res->pending == 1 ? "" : "s",
		       res->pending == 1 ? "ies" : "y");
	else if (res->n_rounds > 1 && res->fixed_point)
		printf("rounds: %d, then nothing more applies (the fixed point)\n", res->n_rounds);
	if (res->refused) {
		char at[32] = "";
		if (res->n_rounds > 1)
			snprintf(at, sizeof at, "round %d: ", res->n_rounds);
		printf("REFUSED: %s%s; nothing written\n", at,
		       !last->proof.proved ? "the rewrites could not be proved"
		       : last->highest == AL_EQ_EXACT ? "an exact rewrite is not bit-identical"
		       : last->highest == AL_EQ_APPROXIMATE ? "an output differs beyond the tolerance, collapsed or overflowed"
							 : "the results differ beyond the tolerance");
		if (res->n_rounds > 1)
			printf("  (--max-rounds %d keeps the rounds before it)\n", res->n_rounds - 1);
		if (last->proof.proved && last->highest == AL_EQ_APPROXIMATE)
			printf("  (--allow reassociate leaves the approximate rewrites out%s)\n",
			       last->tolerance > 0 ? "" : "; --tolerance X allows a larger difference, never a "
							  "collapsed or overflowed output");
	} else if (res->written) {
		printf("wrote %s\n", out);
	} else if (res->dry_run) {
		printf("dry run: nothing written\n");
	}
}

/* ---------------------------------------------------------------- command */


int cmd_fix(struct cli *c)
{
	const struct command_row *cmd = command("fix");
	struct al_fix_opts o = {.input = c->paths[0], .allow = AL_EQ_EXACT, .dry_run = c->dry_run,
				.in_place = c->in_place, .inputs = c->inputs, .function = c->function};
	bool json = false;
	if (c->format && strcmp(c->format, "json") == 0)
		json = true;
	else if (c->format && strcmp(c->format, "text") != 0)
		return usage_error(cmd, "--format takes text or json, not '%s'", c->format);
	if (parse_allow(c, cmd, &o.allow) != EXIT_ALL_ANE)
		return EXIT_USAGE;
	if (c->max_rounds) {
		char *end;
		errno = 0;
		long v = strtol(c->max_rounds, &end, 10);
		if (end == c->max_rounds || *end || errno || v < 1 || v > MAX_MAX_ROUNDS)
			return usage_error(cmd, "--max-rounds takes a number of rounds from 1 to 64, not '%s'",
					   c->max_rounds);
		o.max_rounds = (int)v;
	}
	if (c->tolerance) {
		char *end;
		errno = 0;
		o.tolerance = strtod(c->tolerance, &end);
		if (end == c->tolerance || *end || errno || !isfinite(o.tolerance) || !(o.tolerance > 0))
			return usage_error(cmd, "--tolerance takes a positive relative difference, e.g. 1e-2, not "
					   "'%s'", c->tolerance);
	}
	int trc = EXIT_ALL_ANE;
	o.threads = threads_of(c, cmd, &trc);
	if (trc)
		return trc;
	if (c->proof && strcmp(c->proof, "auto") != 0 && strcmp(c->proof, "whole") != 0 &&
	    strcmp(c->proof, "region") != 0)
		return usage_error(cmd, "--proof takes auto, whole or region, not '%s'", c->proof);
	o.proof = !c->proof || strcmp(c->proof, "auto") == 0 ? AL_FIX_PROOF_AUTO
		  : strcmp(c->proof, "whole") == 0	   ? AL_FIX_PROOF_WHOLE
							   : AL_FIX_PROOF_REGION;
	if (o.proof == AL_FIX_PROOF_REGION && c->inputs)
		return usage_error(cmd, "--proof region cannot use --inputs (%s): given inputs run through "
				   "the whole models", c->inputs);
	/* where it runs: one chip family, one release (al_where_parse, as every command) */
	struct al_where_spec w;
	if (c->target && al_where_parse(c->target, NULL, NULL, AL_WHERE_ONE, &w, NULL) != AL_OK)
		return usage_error(cmd, "--target takes one chip family (see 'anelint targets'), not '%s'",
				   c->target);
	if (c->os && al_where_parse(NULL, c->os, NULL, AL_WHERE_ONE, &w, NULL) != AL_OK)
		return usage_error(cmd, "--os takes one OS release (see 'anelint targets'), not '%s'", c->os);
	if (c->compute_units && al_where_parse(NULL, NULL, c->compute_units, AL_WHERE_ONE, &w, NULL) != AL_OK)
		return usage_error(cmd, "--compute-units takes all, cpu-and-gpu, cpu-and-ne or cpu-only, "
				   "not '%s'", c->compute_units);
	if (al_where_parse(c->target, c->os, c->compute_units, AL_WHERE_ONE, &w, NULL) == AL_OK)
		o.check.where = w.where;
	const char *out = c->output;
	if (!out && c->in_place)
		out = o.input;
	if (!out && !c->dry_run)
		return usage_error(cmd, "give -o OUT (or --dry-run, or --in-place)%s", "");
	/* the output guard; --in-place: replacing the input is the request */
	if (out && !c->in_place && al_output_check(out, &o.input, 1, 0, NULL) != AL_OK &&
	    al_output_check(out, &o.input, 1, AL_OUTPUT_MAY_REPLACE_INPUT, NULL) == AL_OK) {
		error_at(out, "the output is the input model: add --in-place to replace it");
		return EXIT_USAGE;
	}
	int grc = out ? guard_output(c, out, c->in_place ? AL_OUTPUT_MAY_REPLACE_INPUT : 0) : EXIT_ALL_ANE;
	if (grc)
		return grc;
	if (c->in_place && out && al_output_check(out, &o.input, 1, 0, NULL) != AL_OK)
		al_set_durable_writes(true); /* the only copy is replaced: on the device before the rename */
	o.output = out;
	int rc = run_settings(c, cmd, &o.seed, &o.max_bytes);
	if (rc != EXIT_ALL_ANE)
		return rc;
	o.max_work = max_work_of(c);
	struct shapes sh = {0};
	if ((rc = parse_shapes(c, &sh, cmd)) != EXIT_ALL_ANE) {
		shapes_free(&sh);
		return rc;
	}
	o.shapes = sh.shapes;
	o.n_shapes = sh.n_shapes;
	al_diags *d = al_diags_new();
	if (!d) {
		shapes_free(&sh);
		return EXIT_IO;
	}
	struct al_fix_result res;
	enum al_status st = al_model_fix(&o, &res, d);
	rc = st == AL_OK ? res.exit_code : status_exit(st);
	if (res.usage[0])
		usage_error(cmd, "%s", res.usage);
	if (al_diags_errors(d))
		print_errors(o.input, d);
	if (res.decided && json)
		al_fix_write_json(stdout, &res);
	else if (res.decided)
		print_text(&res);
	al_fix_result_free(&res);
	al_diags_free(d);
	shapes_free(&sh);
	if (fflush(stdout) != 0)
		return EXIT_IO;
	return rc;
}
