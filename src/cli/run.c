/* SPDX-License-Identifier: MIT */
/* run.c: the commands that execute models in the reference interpreter, run,
 * verify and fp16 (what they do: src/command/run_model.c, al_run_model,
 * al_verify, al_fp16_compare). Here: the options parsed into struct
 * al_exec_opts, one call, and the result printed (the JSON by the library, so
 * the Python package gives the same bytes). */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A name from the model (input, output, state, class label) on the terminal:
 * escaped as every text report escapes it, then padded to width columns. */
static void put_name(FILE *out, const char *s, int width)
{
	size_t n = al_put_escaped(out, s ? s : "?", CLI_NAME_MAX);
	for (; (int)n < width; n++)
		fputc(' ', out);
}

static bool parse_double(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || v < 0)
		return false;
	*out = v;
	return true;
}

static bool is_json(const struct cli *c, const struct command_row *cmd, int *rc)
{
	if (!c->format || strcmp(c->format, "text") == 0)
		return false;
	if (strcmp(c->format, "json") == 0)
		return true;
	*rc = usage_error(cmd, "unknown format '%s' (text, json)", c->format);
	return false;
}

int threads_of(const struct cli *c, const struct command_row *cmd, int *rc)
{
	al_keep_freed_memory(); /* every command that runs a model comes here first */
	uint64_t n = 0;
	if (c->threads) {
		if (!parse_count(c->threads, &n) || n < 1 || n > 64) {
			*rc = usage_error(cmd, "--threads takes a number of threads (1-64), not '%s'",
					  c->threads);
			return 0;
		}
		return (int)n;
	}
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	return cores < 1 ? 1 : cores > 64 ? 64 : (int)cores;
}

/* The options every run command shares: inputs, precision, bounds, threads. */
static int exec_opts(struct cli *c, const struct command_row *cmd, struct al_exec_opts *o)
{
	memset(o, 0, sizeof *o);
	int rc = EXIT_ALL_ANE;
	o->model = c->paths[0];
	o->model_b = c->n_paths > 1 ? c->paths[1] : NULL;
	o->tol = 1e-4;
	o->precision = AL_PREC_FP32;
	if (c->precision && strcmp(c->precision, "fp16") == 0)
		o->precision = AL_PREC_FP16;
	else if (c->precision && strcmp(c->precision, "fp32") != 0)
		return usage_error(cmd, "--precision takes fp32 or fp16, not '%s'", c->precision);
	if (c->tol && !parse_double(c->tol, &o->tol))
		return usage_error(cmd, "--tol takes a non-negative number, not '%s'", c->tol);
	o->in = (struct al_run_inputs){.files = c->input.v, .n_files = (size_t)c->input.n, .dir = c->inputs,
				       .states = c->state.v, .n_states = (size_t)c->state.n, .random = c->random};
	o->function = c->function;
	o->protect = c->paths;
	o->n_protect = (size_t)c->n_paths;
	return rc;
}

/* Run the command, print the result; the exit code. */
static int finish(const struct command_row *cmd, enum al_status (*fn)(const struct al_exec_opts *,
								   struct al_exec_result **, al_diags *),
		  const struct al_exec_opts *o, bool json,
		  int (*print_text)(const struct al_exec_result *, bool))
{
	al_diags *d = al_diags_new();
	struct al_exec_result *r = NULL;
	if (!d)
		return EXIT_IO;
	enum al_status st = fn(o, &r, d);
	int rc = EXIT_ALL_ANE;
	if (r && (st == AL_OK || r->started)) {
		if (json)
			al_exec_result_json(stdout, r);
		else
			rc = print_text(r, st == AL_OK);
	}
	if (st != AL_OK)
		rc = print_failure(cmd, r ? &r->fail : NULL, d);
	else if (json)
		rc = r->pass ? EXIT_ALL_ANE : EXIT_FALLBACK;
	al_exec_result_free(r);
	al_diags_free(d);
	if (fflush(stdout) != 0)
		return EXIT_IO;
	return rc;
}

/* ================================================================ text */

static void print_diff_text(const char *name, const struct al_value_diff *df, double tol)
{
	if (!df->comparable) {
		printf("  ");
		put_name(stdout, name, 24);
		printf(" FAIL: %s\n", df->why);
		return;
	}
	if (df->n_nan) {
		printf("  ");
		put_name(stdout, name, 24);
		printf(" FAIL  max abs NaN: %zu NaN value%s where the reference has a number",
		       df->n_nan, df->n_nan == 1 ? "" : "s");
		printf(" (tol %g)\n", tol);
		return;
	}
	printf("  ");
	put_name(stdout, name, 24);
	printf(" %s  max abs %.3g, max rel %.3g (of max|ref| %.3g), cosine %.6f%s",
	       df->pass ? "pass" : "FAIL", df->max_abs, df->rel, df->scale, df->cosine,
	       df->identical ? ", bit-identical" : "");
	printf(" (tol %g)\n", tol);
}

static int print_run(const struct al_exec_result *r, bool done)
{
	const struct al_exec_opts *o = r->opts;
	bool stepped = o->steps != 0;
	printf("%s: ran in %s, %.1f ms%s", o->model, o->precision == AL_PREC_FP16 ? "fp16 (ANE-like)" : "fp32",
	       r->ms, stepped ? " (step 0)" : "");
	if (o->function) {
		printf(", function ");
		put_text(stdout, o->function, CLI_NAME_MAX);
	}
	printf("\n");
	for (size_t i = 0; i < r->n_inputs; i++) {
		const struct al_exec_value *v = &r->inputs[i];
		printf("  input  ");
		put_name(stdout, v->name, 24);
		printf(" %-6s %s  from ", al_dtype_name(v->dtype), v->shape);
		put_name(stdout, v->from, 0);
		printf("\n");
	}
	size_t i = 0;
	for (uint64_t k = 0; k < r->steps_shown; k++) {
		if (stepped)
			printf("  step %llu\n", (unsigned long long)k);
		for (; i < r->n_outputs && r->outputs[i].step == (stepped ? (int)k : -1); i++) {
			const struct al_exec_value *v = &r->outputs[i];
			printf("  %s ", v->state ? "state " : "output");
			put_name(stdout, v->name, 24);
			printf(" %-6s %s  %s\n", al_dtype_name(v->dtype), v->shape, v->summary);
			if (v->has_expect)
				print_diff_text("  vs expected", &v->expect, o->tol);
		}
	}
	if (!done)
		return EXIT_ALL_ANE;
	if (o->repeat)
		printf("repeat %llu (after 1 warm-up, %d thread%s): median %.3f ms, min %.3f ms\n",
		       (unsigned long long)o->repeat, r->threads, r->threads == 1 ? "" : "s", r->ms_median,
		       r->ms_min);
	if (o->out)
		printf("wrote %zu file%s to %s/\n", r->n_written, r->n_written == 1 ? "" : "s", o->out);
	return r->pass ? EXIT_ALL_ANE : EXIT_FALLBACK;
}

int cmd_run(struct cli *c)
{
	const struct command_row *cmd = command("run");
	int rc = EXIT_ALL_ANE;
	bool json = is_json(c, cmd, &rc);
	struct al_exec_opts o;
	if (rc || (rc = exec_opts(c, cmd, &o)))
		return rc;
	uint64_t steps = 1, repeat = 0;
	if (c->steps && (!parse_count(c->steps, &steps) || steps < 1 || steps > 100000))
		return usage_error(cmd, "--steps takes a number of calls (1-100000), not '%s'", c->steps);
	if (c->repeat && (!parse_count(c->repeat, &repeat) || repeat < 1 || repeat > 100000))
		return usage_error(cmd, "--repeat takes a number of runs (1-100000), not '%s'", c->repeat);
	o.threads = threads_of(c, cmd, &rc);
	if (rc || (rc = guard_output(c, c->out, AL_OUTPUT_INTO_DIR)))
		return rc;
	if ((rc = run_settings(c, cmd, &o.in.seed, &o.max_bytes)))
		return rc;
	o.max_work = max_work_of(c);
	o.steps = c->steps ? steps : 0;
	o.repeat = repeat;
	o.expect = c->expect;
	o.out = c->out;
	return finish(cmd, al_run_model, &o, json, print_run);
}

/* ================================================================ verify */

static int print_verify(const struct al_exec_result *r, bool done)
{
	const struct al_exec_opts *o = r->opts;
	printf("verify %s (%.1f ms) against %s (%.1f ms), %s, %zu input%s (%s)\n", o->model_b, r->ms_b, o->model,
	       r->ms, o->precision == AL_PREC_FP16 ? "fp16" : "fp32", r->n_inputs, r->n_inputs == 1 ? "" : "s",
	       r->n_inputs ? r->inputs_how : "none");
	for (size_t i = 0; i < r->n_diffs; i++)
		print_diff_text(r->diffs[i].name, &r->diffs[i], o->tol);
	printf("%s\n", r->pass ? "PASS" : r->count_differs ? "FAIL: the models have different numbers of outputs"
							  : "FAIL");
	return r->pass ? EXIT_ALL_ANE : EXIT_FALLBACK;
}

int cmd_verify(struct cli *c)
{
	const struct command_row *cmd = command("verify");
	int rc = EXIT_ALL_ANE;
	bool json = is_json(c, cmd, &rc);
	struct al_exec_opts o;
	if (rc || (rc = exec_opts(c, cmd, &o)))
		return rc;
	o.threads = threads_of(c, cmd, &rc);
	if (rc || (rc = run_settings(c, cmd, &o.in.seed, &o.max_bytes)))
		return rc;
	o.max_work = max_work_of(c);
	return finish(cmd, al_verify, &o, json, print_verify);
}

/* ================================================================ fp16 */

static void put_layer(const struct al_fp16_layer *l)
{
	printf("  %-5zu %-28.28s %-18.18s", l->order, l->name, l->type);
}

static int print_fp16(const struct al_exec_result *r, bool done)
{
	const struct al_exec_opts *o = r->opts;
	printf("%s: fp32 %.1f ms, fp16 %.1f ms; %zu ops run, %zu compared%s\n", o->model, r->ms, r->ms_b, r->ops_run,
	       r->ops_compared, r->diverged ? " (the fp16 run took another path: later ops not compared)" : "");
	printf("outputs, fp16 against fp32:\n");
	for (size_t i = 0; i < r->n_diffs; i++)
		print_diff_text(r->diffs[i].name, &r->diffs[i], 1e-2);
	printf("values in fp32 (all ops): %zu nonzero; %zu beyond 65504 (inf in fp16), %zu below 2^-25 "
	       "(0 in fp16), %zu subnormal in fp16; %zu NaN/inf in the fp16 run\n",
	       r->nonzero, r->overflow, r->underflow, r->subnormal, r->nonfinite);
	printf("\nlayers adding the most error (max|fp16-fp32| / max|fp32| of the output, minus the "
	       "largest of its inputs):\n  %-5s %-28s %-18s %10s %10s %10s  flags\n", "#", "name", "type",
	       "in", "out", "added");
	for (size_t i = 0; i < r->n_layers; i++) {
		const struct al_fp16_layer *l = &r->layers[i];
		double sub = l->nonzero ? (double)l->subnormal / (double)l->nonzero : 0;
		double und = l->nonzero ? (double)l->underflow / (double)l->nonzero : 0;
		put_layer(l);
		printf(" %10.3g %10.3g %10.3g ", l->err_in, l->err, l->err - l->err_in);
		if (l->overflow)
			printf(" overflow(%zu)", l->overflow);
		if (und > 0)
			printf(" underflow(%.0f%%)", und * 100);
		if (sub >= 0.01)
			printf(" subnormal(%.0f%%)", sub * 100);
		if (l->nonfinite16)
			printf(" nan/inf(%zu)", l->nonfinite16);
		printf("\n");
	}
	printf("\nflags:\n");
	for (size_t i = 0; i < r->n_flags; i++) {
		put_layer(&r->flags[i]);
		printf(" %s\n", r->flags[i].flag);
	}
	if (!r->n_flags)
		printf("  none: no overflow, underflow, tiny constants or masks\n");
	else if (r->flags_not_listed)
		printf("  ... %zu more (--top)\n", r->flags_not_listed);
	return r->pass ? EXIT_ALL_ANE : EXIT_FALLBACK;
}

int cmd_fp16(struct cli *c)
{
	const struct command_row *cmd = command("fp16");
	int rc = EXIT_ALL_ANE;
	bool json = is_json(c, cmd, &rc);
	uint64_t top = 10;
	if (rc)
		return rc;
	if (c->top && (!parse_count(c->top, &top) || top < 1 || top > 100000))
		return usage_error(cmd, "--top takes a number from 1 on, not '%s'", c->top);
	struct al_exec_opts o;
	if ((rc = exec_opts(c, cmd, &o)))
		return rc;
	o.top = c->top ? top : 0;
	o.threads = threads_of(c, cmd, &rc);
	if (rc || (rc = run_settings(c, cmd, &o.in.seed, &o.max_bytes)))
		return rc;
	o.max_work = max_work_of(c);
	return finish(cmd, al_fp16_compare, &o, json, print_fp16);
}
