/* SPDX-License-Identifier: MIT */
/* run.c: the commands that execute models in the reference interpreter.
 *
 *   run     one model on inputs from .npy files or drawn at random; prints a
 *           summary of each output, writes them as .npy (--out), compares them
 *           with expected .npy files (--expect)
 *   verify  two models on the same inputs; per output the max abs / relative
 *           error and cosine similarity, pass or fail against --tol
 *   fp16    one model in fp32 and in ANE-like fp16; ranks layers by the error
 *           they add and flags overflow, underflow, subnormals, tiny constants
 *
 * Errors are relative to the scale of the reference output (max |ref|), the
 * convention of ../shared/corpus/reference (element-wise relative errors blow
 * up near zero and say little). Output files are written to temporary names and
 * renamed only when every output was written. */
#include "cli.h"
#include "base.h" /* al_atomic_*: the library's one atomic writer */
#include "mlmodelc.h" /* ali_compiled_unrunnable */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ================================================================ helpers */

/* A name from the model (input, output, state, class label) on the terminal:
 * escaped as every text report escapes it, then padded to width columns. */
static void put_name(FILE *out, const char *s, int width)
{
	size_t n = al_put_escaped(out, s ? s : "?", CLI_NAME_MAX);
	for (; (int)n < width; n++)
		fputc(' ', out);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
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

static void put_shape(FILE *out, const al_tensor *t)
{
	fputc('[', out);
	for (int i = 0; i < al_tensor_rank(t); i++)
		fprintf(out, "%s%lld", i ? "," : "", (long long)al_tensor_dims(t)[i]);
	fputc(']', out);
}

/* A JSON number, or null for NaN / inf. */
static void put_num(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, "%.9g", v);
	else
		fprintf(out, "null");
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

/* ================================================================ inputs */

struct inputs {
	struct al_named_tensor *v;
	size_t n;
	char **how; /* per input: "x.npy", "random (seed 1)" */
	uint64_t max_bytes; /* --max-memory, 0 = the library's budget */
};

static void inputs_free(struct inputs *in)
{
	for (size_t i = 0; i < in->n; i++) {
		al_tensor_free(in->v[i].t);
		free(in->how[i]);
	}
	free(in->v);
	free(in->how);
	memset(in, 0, sizeof *in);
}

static char *dupstr(const char *s)
{
	size_t n = strlen(s) + 1;
	char *c = malloc(n);
	if (c)
		memcpy(c, s, n);
	return c;
}

static int load_npy(const char *path, al_tensor **out)
{
	al_diags *d = al_diags_new();
	if (!d)
		return EXIT_IO;
	enum al_status st = al_npy_read(path, out, d);
	if (st != AL_OK)
		print_errors(path, d);
	al_diags_free(d);
	return st == AL_OK ? EXIT_ALL_ANE : st == AL_E_IO ? EXIT_IO : EXIT_USAGE;
}

/* The inputs of the root model `s`: --input NAME=FILE first, then --inputs DIR,
 * then --random (or `random_default`) for the rest. */
static int gather_inputs_step(const struct cli *c, const struct command_row *cmd,
			      const struct al_submodel *s, bool random_default, int step,
			      struct inputs *in);

static int gather_inputs(const struct cli *c, const struct command_row *cmd,
			 const struct al_submodel *s, bool random_default, struct inputs *in)
{
	return gather_inputs_step(c, cmd, s, random_default, -1, in);
}

/* The interface run: the root's, or that of the function --function names
 * (a name the model lacks is left to the library, which lists the functions). */
static struct al_submodel iface_of(const struct al_submodel *root, const char *function)
{
	struct al_submodel v = *root;
	for (uint32_t i = 0; function && i < root->n_fdescs; i++) {
		const struct al_function_desc *fd = &root->fdescs[i];
		if (fd->name && strcmp(fd->name, function) == 0) {
			v.inputs = fd->inputs;
			v.n_inputs = fd->n_inputs;
			v.outputs = fd->outputs;
			v.n_outputs = fd->n_outputs;
			v.states = fd->states;
			v.n_states = fd->n_states;
		}
	}
	return v;
}

/* --state NAME=FILE.npy: appended to the inputs (the library takes a state's
 * initial value under its name; the others start at zeros). */
static int gather_states(const struct cli *c, const struct command_row *cmd,
			 const struct al_submodel *s, struct inputs *in)
{
	for (int k = 0; k < c->state.n; k++) {
		const char *arg = c->state.v[k], *eq = strchr(arg, '=');
		if (!eq || eq == arg || !eq[1])
			return usage_error(cmd, "--state takes NAME=FILE.npy, not '%s'", arg);
		const struct al_feature *f = NULL;
		for (uint32_t i = 0; i < s->n_states && !f; i++)
			if (strlen(s->states[i].name) == (size_t)(eq - arg) &&
			    strncmp(s->states[i].name, arg, (size_t)(eq - arg)) == 0)
				f = &s->states[i];
		if (!f)
			return usage_error(cmd, "--state %s: the model has no state of that name "
						"(see 'anelint info')", arg);
		al_tensor *t = NULL;
		int rc = load_npy(eq + 1, &t);
		if (rc != EXIT_ALL_ANE)
			return rc;
		in->v[in->n].name = f->name;
		in->v[in->n].t = t;
		in->how[in->n] = dupstr(eq + 1);
		if (!in->how[in->n++])
			return EXIT_IO;
	}
	return EXIT_ALL_ANE;
}

/* step >= 0 (--steps): DIR/stepK_NAME.npy from --inputs first, then DIR/NAME.npy;
 * random draws use seed + K. */
static int gather_inputs_step(const struct cli *c, const struct command_row *cmd,
			      const struct al_submodel *s, bool random_default, int step,
			      struct inputs *in)
{
	memset(in, 0, sizeof *in);
	in->v = calloc(s->n_inputs + s->n_states + 1, sizeof *in->v);
	in->how = calloc(s->n_inputs + s->n_states + 1, sizeof *in->how);
	if (!in->v || !in->how)
		return EXIT_IO;
	uint64_t seed;
	int rc0 = run_settings(c, cmd, &seed, &in->max_bytes);
	if (rc0 != EXIT_ALL_ANE)
		return rc0;
	if (step > 0)
		seed += (uint64_t)step;
	for (int k = 0; k < c->input.n; k++) {
		const char *eq = strchr(c->input.v[k], '=');
		if (!eq || eq == c->input.v[k] || !eq[1])
			return usage_error(cmd, "--input takes NAME=FILE.npy, not '%s'", c->input.v[k]);
		bool found = false;
		for (uint32_t i = 0; i < s->n_inputs; i++)
			found |= strlen(s->inputs[i].name) == (size_t)(eq - c->input.v[k]) &&
				 strncmp(s->inputs[i].name, c->input.v[k], (size_t)(eq - c->input.v[k])) == 0;
		if (!found)
			return usage_error(cmd, "--input %s: the model has no input of that name "
						"(see 'anelint info')", c->input.v[k]);
	}
	for (uint32_t i = 0; i < s->n_inputs; i++) {
		const struct al_feature *f = &s->inputs[i];
		const char *file = NULL;
		char path[4096];
		for (int k = 0; k < c->input.n; k++) {
			const char *eq = strchr(c->input.v[k], '=');
			if (strlen(f->name) == (size_t)(eq - c->input.v[k]) &&
			    strncmp(f->name, c->input.v[k], (size_t)(eq - c->input.v[k])) == 0)
				file = eq + 1;
		}
		if (!file && c->inputs && step >= 0) {
			snprintf(path, sizeof path, "%s/step%d_%s.npy", c->inputs, step, f->name);
			if (access(path, F_OK) == 0)
				file = path;
		}
		if (!file && c->inputs) {
			snprintf(path, sizeof path, "%s/%s.npy", c->inputs, f->name);
			if (access(path, F_OK) == 0)
				file = path;
		}
		al_tensor *t = NULL;
		int rc;
		if (file) {
			if ((rc = load_npy(file, &t)) != EXIT_ALL_ANE)
				return rc;
			in->how[in->n] = dupstr(file);
		} else if (c->random || random_default) {
			al_diags *d = al_diags_new();
			if (!d)
				return EXIT_IO;
			enum al_status st = al_random_input(f, seed, in->max_bytes, &t, d);
			if (st != AL_OK)
				print_errors(f->name, d);
			al_diags_free(d);
			if (st != AL_OK)
				return status_exit(st);
			char how[64];
			snprintf(how, sizeof how, "random (seed %llu)", (unsigned long long)seed);
			in->how[in->n] = dupstr(how);
		} else if (f->optional) {
			continue;
		} else {
			fputs("anelint: error: no value for input '", stderr);
			put_text(stderr, f->name, CLI_NAME_MAX);
			fprintf(stderr, "' (%s); give --input ", al_feature_kind_name(f->kind));
			put_text(stderr, f->name, CLI_NAME_MAX);
			fputs("=FILE.npy, --inputs DIR or --random\n", stderr);
			return EXIT_USAGE;
		}
		in->v[in->n].name = f->name;
		in->v[in->n].t = t;
		in->n++;
		if (!in->how[in->n - 1])
			return EXIT_IO;
	}
	return EXIT_ALL_ANE;
}

/* ================================================================ comparing */

struct diff {
	bool comparable;   /* same shape / count and kind */
	const char *why;   /* when not comparable */
	bool identical;    /* bit for bit (strings: equal) */
	double max_abs, scale, rel, cosine;
	size_t n_nan;      /* NaN in a where b has none */
	bool pass;
};

/* a against the reference b (al_tensor_compare: "same shape" ignores dims of
 * 1, as NN outputs keep rank-5 blobs), and the verdict against tol. */
static struct diff compare(al_tensor *a, al_tensor *b, double tol)
{
	struct al_tensor_diff t;
	al_tensor_compare(a, b, &t);
	struct diff r = {.comparable = t.comparable, .why = t.why, .identical = t.identical,
			 .max_abs = t.max_abs, .scale = t.ref_max, .rel = t.rel, .cosine = t.cosine,
			 .n_nan = t.nan_a};
	if (!t.comparable)
		return r;
	if (r.n_nan) /* an error of NaN, not the largest of the numbers left (0 when all are NaN) */
		r.max_abs = r.rel = r.cosine = NAN;
	r.pass = t.text ? r.identical
			: r.n_nan == 0 && (tol == 0 ? r.identical : r.max_abs <= tol * r.scale || r.max_abs == 0);
	return r;
}

static void print_diff_text(const char *name, const struct diff *df, double tol)
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

static void print_diff_json(FILE *out, const char *name, const struct diff *df)
{
	fprintf(out, "{\"name\": ");
	al_json_put_string(out, name);
	fprintf(out, ", \"comparable\": %s", df->comparable ? "true" : "false");
	if (!df->comparable) {
		fprintf(out, ", \"why\": ");
		al_json_put_string(out, df->why);
	} else {
		fprintf(out, ", \"max_abs\": ");
		put_num(out, df->max_abs);
		fprintf(out, ", \"max_rel\": ");
		put_num(out, df->rel);
		fprintf(out, ", \"scale\": ");
		put_num(out, df->scale);
		fprintf(out, ", \"cosine\": ");
		put_num(out, df->cosine);
		fprintf(out, ", \"identical\": %s, \"nan\": %zu", df->identical ? "true" : "false",
			df->n_nan);
	}
	fprintf(out, ", \"pass\": %s}", df->pass ? "true" : "false");
}

/* ================================================================ running */

struct loaded {
	al_model *m;
	al_diags *d;
};

static int open_model(const char *path, struct loaded *l)
{
	l->m = NULL;
	l->d = al_diags_new();
	if (!l->d)
		return EXIT_IO;
	enum al_status st = al_model_open(path, &l->m, l->d);
	if (st != AL_OK) {
		print_errors(path, l->d);
		return status_exit(st);
	}
	const char *why = ali_compiled_unrunnable(l->m);
	if (why) {
		error_at(path, "%s", why);
		return EXIT_INVALID;
	}
	return EXIT_ALL_ANE;
}

static void close_model(struct loaded *l)
{
	al_model_free(l->m);
	al_diags_free(l->d);
}

static int precision_of(const struct cli *c, const struct command_row *cmd, enum al_precision *p)
{
	*p = AL_PREC_FP32;
	if (!c->precision || strcmp(c->precision, "fp32") == 0)
		return EXIT_ALL_ANE;
	if (strcmp(c->precision, "fp16") == 0) {
		*p = AL_PREC_FP16;
		return EXIT_ALL_ANE;
	}
	return usage_error(cmd, "--precision takes fp32 or fp16, not '%s'", c->precision);
}

static int run_once(struct loaded *l, const char *path, const struct inputs *in,
		    const struct al_run_opts *o, struct al_named_tensor **outs, size_t *n_outs,
		    double *ms)
{
	double t0 = now_ms();
	enum al_status st = al_model_run(l->m, in->v, in->n, o, outs, n_outs, l->d);
	*ms = now_ms() - t0;
	if (st != AL_OK) {
		print_errors(path, l->d);
		return st == AL_E_INVALID_ARG ? EXIT_USAGE : status_exit(st);
	}
	return EXIT_ALL_ANE;
}

/* A file name from an output name: '/', control bytes and a leading '.' become '_'. */
static void file_name(char *buf, size_t cap, const char *name)
{
	size_t k = 0;
	for (const char *p = name; *p && k + 1 < cap && k < 200; p++, k++) {
		unsigned char ch = (unsigned char)*p;
		buf[k] = ch == '/' || ch == '\\' || ch < 0x20 || ch == 0x7f || (k == 0 && ch == '.') ? '_' : *p;
	}
	if (k == 0)
		buf[k++] = '_';
	buf[k] = 0;
}

/* One .npy onto fd (borrowed); false when it cannot be written. */
static bool npy_to_fd(int fd, const al_tensor *t)
{
	int fd2 = dup(fd);
	FILE *f = fd2 >= 0 ? fdopen(fd2, "wb") : NULL;
	if (!f) {
		if (fd2 >= 0)
			close(fd2);
		return false;
	}
	bool ok = al_npy_write(f, t, 0) == AL_OK && fflush(f) == 0 && !ferror(f);
	return fclose(f) == 0 && ok;
}

/* Write every output to DIR/NAME.npy through the library's atomic writer.
 * A new DIR is made whole under a temporary name and renamed into place; in
 * an existing DIR every file is written to a temporary first, then renamed.
 * On any failure nothing new is left: no partial file, no directory made.
 * Modes as a plain create: files 0666, a directory 0777, less the umask. */
static int write_outputs(const struct cli *c, const char *dir, struct al_named_tensor *outs, size_t n)
{
	struct stat sb;
	bool fresh = lstat(dir, &sb) != 0 && errno == ENOENT;
	al_diags *d = al_diags_new();
	struct al_atomic top = {.fd = -1}, *files = calloc(n ? n : 1, sizeof *files);
	char *dst = malloc(strlen(dir) + 300);
	int rc = d && files && dst ? EXIT_ALL_ANE : EXIT_IO;
	const char *base = dir;
	if (rc == EXIT_ALL_ANE && fresh) {
		if (ali_atomic_begin(&top, dir, true, d) != AL_OK)
			rc = EXIT_IO;
		base = top.tmp;
	}
	for (size_t i = 0; files && i < n; i++)
		files[i].fd = -1;
	for (size_t i = 0; i < n && rc == EXIT_ALL_ANE; i++) {
		char fn[256];
		file_name(fn, sizeof fn, outs[i].name);
		snprintf(dst, strlen(dir) + 300, "%s/%s.npy", dir, fn);
		if ((rc = guard_output(c, dst, 0)) != EXIT_ALL_ANE) /* DIR/NAME.npy: not an input either */
			break;
		char *at = malloc(strlen(base) + 300);
		if (!at) {
			rc = EXIT_IO;
			break;
		}
		snprintf(at, strlen(base) + 300, "%s/%s.npy", base, fn);
		if (ali_atomic_begin(&files[i], at, false, d) != AL_OK) {
			rc = EXIT_IO;
		} else if (!npy_to_fd(files[i].fd, outs[i].t)) {
			ali_diag_add(d, AL_SEV_ERROR, dst, UINT64_MAX, NULL, NULL, "cannot write: %s",
				    strerror(errno ? errno : EIO));
			rc = EXIT_IO;
		}
		free(at);
	}
	for (size_t i = 0; i < n && rc == EXIT_ALL_ANE; i++)
		if (ali_atomic_commit(&files[i], d) != AL_OK)
			rc = EXIT_IO;
	if (rc == EXIT_ALL_ANE && fresh && ali_atomic_commit(&top, d) != AL_OK)
		rc = EXIT_IO;
	for (size_t i = 0; files && i < n; i++)
		ali_atomic_abort(&files[i]); /* what was not committed */
	ali_atomic_abort(&top);
	if (rc != EXIT_ALL_ANE && rc != EXIT_USAGE && d) /* the guard printed its own */
		print_errors(dir, d);
	al_diags_free(d);
	free(files);
	free(dst);
	return rc;
}

static void summarize(FILE *out, al_tensor *t)
{
	size_t n = al_tensor_count(t);
	if (al_tensor_string(t, 0)) {
		fputc('"', out);
		put_name(out, al_tensor_string(t, 0), 0);
		fputc('"', out);
		return;
	}
	const float *v = al_tensor_data(t);
	double lo = INFINITY, hi = -INFINITY, sum = 0;
	size_t bad = 0;
	for (size_t i = 0; v && i < n; i++) {
		if (!isfinite(v[i])) {
			bad++;
			continue;
		}
		lo = fmin(lo, v[i]);
		hi = fmax(hi, v[i]);
		sum += v[i];
	}
	if (n > bad)
		fprintf(out, "min %.6g max %.6g mean %.6g", lo, hi, sum / (double)(n - bad));
	if (bad)
		fprintf(out, "%s%zu NaN/inf", n > bad ? ", " : "", bad);
	if (al_tensor_label(t, 0)) {
		size_t best = 0;
		for (size_t i = 1; i < n; i++)
			if (v[i] > v[best])
				best = i;
		fprintf(out, ", top class \"");
		put_name(out, al_tensor_label(t, best), 0);
		fprintf(out, "\" (%.4g)", v[best]);
	}
}

int threads_of(const struct cli *c, const struct command_row *cmd, int *rc)
{
	ali_keep_freed_memory(); /* every command that runs a model comes here first (base/platform.c) */
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

/* One output against --expect: DIR/NAME.npy, with --steps DIR/stepK_NAME.npy
 * (a state also as DIR/stepK_state_NAME.npy, the corpus references' name).
 * 0 when compared (*df filled), -1 when no file is there for a state, else an
 * exit code. */
static int expect_one(const struct cli *c, int step, const char *name, bool is_state,
		      al_tensor *t, double tol, struct diff *df)
{
	char fn[256], path[4352];
	file_name(fn, sizeof fn, name);
	if (step < 0)
		snprintf(path, sizeof path, "%s/%s.npy", c->expect, fn);
	else
		snprintf(path, sizeof path, "%s/step%d_%s.npy", c->expect, step, fn);
	if (step >= 0 && is_state && access(path, F_OK) != 0)
		snprintf(path, sizeof path, "%s/step%d_state_%s.npy", c->expect, step, fn);
	if (is_state && access(path, F_OK) != 0)
		return -1; /* a state without a reference is not compared */
	al_tensor *ref = NULL;
	int e = load_npy(path, &ref);
	if (e != EXIT_ALL_ANE)
		return e;
	*df = compare(t, ref, tol);
	al_tensor_free(ref);
	return 0;
}

/* Print one call's outputs (and final states), comparing with --expect. */
static int print_outputs(const struct cli *c, bool json, int step, const struct al_submodel *s,
			 struct al_named_tensor *outs, size_t n_outs, double tol, bool *all_pass,
			 bool *first)
{
	if (step >= 0 && !json)
		printf("  step %d\n", step);
	for (size_t i = 0; i < n_outs; i++) {
		al_tensor *t = outs[i].t;
		struct diff df = {0};
		bool have_ref = false, is_state = i >= s->n_outputs;
		if (c->expect) {
			int e = expect_one(c, step, outs[i].name, is_state, t, tol, &df);
			if (e > 0)
				return e;
			have_ref = e == 0;
			if (have_ref)
				*all_pass &= df.pass;
		}
		if (json) {
			printf("%s\n    {\"name\": ", *first ? "" : ",");
			*first = false;
			al_json_put_string(stdout, outs[i].name);
			if (step >= 0)
				printf(", \"step\": %d", step);
			if (is_state)
				printf(", \"state\": true");
			printf(", \"dtype\": \"%s\", \"shape\": ", al_dtype_name(al_tensor_dtype(t)));
			put_shape(stdout, t);
			char *sum = NULL;
			size_t sum_len = 0;
			FILE *mem = open_memstream(&sum, &sum_len);
			if (mem) {
				summarize(mem, t);
				fclose(mem);
			}
			printf(", \"summary\": ");
			al_json_put_string(stdout, sum ? sum : "");
			free(sum);
			if (have_ref) {
				printf(", \"expect\": ");
				print_diff_json(stdout, outs[i].name, &df);
			}
			printf("}");
		} else {
			printf("  %s ", is_state ? "state " : "output");
			put_name(stdout, outs[i].name, 24);
			printf(" %-6s ", al_dtype_name(al_tensor_dtype(t)));
			put_shape(stdout, t);
			printf("  ");
			summarize(stdout, t);
			printf("\n");
			if (have_ref)
				print_diff_text("  vs expected", &df, tol);
		}
	}
	return EXIT_ALL_ANE;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Every step's outputs under DIR/stepK_NAME.npy (one atomic write). */
static int write_steps(const struct cli *c, const char *dir, struct al_named_tensor **outs, const size_t *n_outs, int steps)
{
	size_t total = 0;
	for (int k = 0; k < steps; k++)
		total += n_outs[k];
	struct al_named_tensor *all = calloc(total ? total : 1, sizeof *all);
	char **names = calloc(total ? total : 1, sizeof *names);
	int rc = all && names ? EXIT_ALL_ANE : EXIT_IO;
	size_t j = 0;
	for (int k = 0; k < steps && rc == EXIT_ALL_ANE; k++)
		for (size_t i = 0; i < n_outs[k]; i++, j++) {
			size_t len = strlen(outs[k][i].name) + 32;
			if (!(names[j] = malloc(len))) {
				rc = EXIT_IO;
				break;
			}
			snprintf(names[j], len, "step%d_%s", k, outs[k][i].name);
			all[j] = (struct al_named_tensor){names[j], outs[k][i].t};
		}
	if (rc == EXIT_ALL_ANE)
		rc = write_outputs(c, dir, all, total);
	for (size_t i = 0; names && i < total; i++)
		free(names[i]);
	free(names);
	free(all);
	return rc;
}

int cmd_run(struct cli *c)
{
	const struct command_row *cmd = command("run");
	int rc = EXIT_ALL_ANE;
	bool json = is_json(c, cmd, &rc);
	enum al_precision prec;
	double tol = 1e-4;
	uint64_t steps = 1, repeat = 0;
	if (rc || (rc = precision_of(c, cmd, &prec)))
		return rc;
	if (c->tol && !parse_double(c->tol, &tol))
		return usage_error(cmd, "--tol takes a non-negative number, not '%s'", c->tol);
	if (c->steps && (!parse_count(c->steps, &steps) || steps < 1 || steps > 100000))
		return usage_error(cmd, "--steps takes a number of calls (1-100000), not '%s'", c->steps);
	if (c->repeat && (!parse_count(c->repeat, &repeat) || repeat < 1 || repeat > 100000))
		return usage_error(cmd, "--repeat takes a number of runs (1-100000), not '%s'", c->repeat);
	int threads = threads_of(c, cmd, &rc);
	if (rc || (rc = guard_output(c, c->out, AL_OUTPUT_INTO_DIR)))
		return rc;
	struct loaded l;
	if ((rc = open_model(c->paths[0], &l)) != EXIT_ALL_ANE) {
		close_model(&l);
		return rc;
	}
	struct al_submodel iface = iface_of(al_model_get(l.m, 0), c->function);
	bool stepped = c->steps != NULL;
	struct al_named_tensor **outs = calloc(steps, sizeof *outs);
	size_t *n_outs = calloc(steps, sizeof *n_outs);
	double *ms = calloc(steps, sizeof *ms), *times = calloc(repeat + 1, sizeof *times);
	struct inputs in = {0};
	bool all_pass = true, first = true;
	if (!outs || !n_outs || !ms || !times) {
		rc = EXIT_IO;
		goto done;
	}
	for (uint64_t k = 0; k < steps && rc == EXIT_ALL_ANE; k++) {
		inputs_free(&in);
		rc = gather_inputs_step(c, cmd, &iface, false, stepped ? (int)k : -1, &in);
		if (rc == EXIT_ALL_ANE && k == 0)
			rc = gather_states(c, cmd, &iface, &in);
		/* later steps: the states the previous call left */
		for (size_t i = iface.n_outputs; rc == EXIT_ALL_ANE && k > 0 && i < n_outs[k - 1]; i++) {
			in.v[in.n].name = outs[k - 1][i].name;
			in.v[in.n].t = NULL;
			in.how[in.n] = dupstr("the previous step");
			if (!in.how[in.n])
				rc = EXIT_IO;
			in.n++;
		}
		if (rc != EXIT_ALL_ANE)
			break;
		/* borrowed (not copied) from the previous step's outputs: the library
		 * copies what it binds */
		struct al_named_tensor *call = calloc(in.n + 1, sizeof *call);
		if (!call) {
			rc = EXIT_IO;
			break;
		}
		for (size_t i = 0; i < in.n; i++) {
			call[i] = in.v[i];
			if (!call[i].t && k > 0)
				for (size_t j = iface.n_outputs; j < n_outs[k - 1]; j++)
					if (strcmp(outs[k - 1][j].name, in.v[i].name) == 0)
						call[i].t = outs[k - 1][j].t;
		}
		/* the inputs stay allocated beside the run's own copies, and so do the
		 * earlier steps' outputs kept for --out: one budget */
		uint64_t held = al_values_bytes(call, in.n);
		for (uint64_t j = 0; j < k; j++)
			held += al_values_bytes(outs[j], n_outs[j]);
		struct al_run_opts o = {.precision = prec, .max_bytes = in.max_bytes,
					.max_work = max_work_of(c), .held_bytes = &held,
					.threads = threads, .function = c->function};
		struct inputs view = in;
		view.v = call;
		rc = run_once(&l, c->paths[0], &view, &o, &outs[k], &n_outs[k], &ms[k]);
		/* --repeat: the run above was the warm-up; time N more of the same call */
		for (uint64_t r = 0; rc == EXIT_ALL_ANE && k == 0 && r < repeat; r++) {
			struct al_named_tensor *ro = NULL;
			size_t nro = 0;
			rc = run_once(&l, c->paths[0], &view, &o, &ro, &nro, &times[r]);
			al_outputs_free(ro, nro);
		}
		free(call);
		if (rc != EXIT_ALL_ANE)
			break;
		/* without --out, a step's results are not needed once the next has run */
		if (!c->out && k > 0) {
			al_outputs_free(outs[k - 1], n_outs[k - 1]);
			outs[k - 1] = NULL;
			n_outs[k - 1] = 0;
		}
		if (k == 0) {
			if (json) {
				printf("{\n  \"anelint\": \"%s\",\n  \"schema\": %d,\n  \"command\": \"run\",\n  \"model\": ",
				       ANELINT_VERSION, ANELINT_JSON_SCHEMA_VERSION);
				al_json_put_string(stdout, c->paths[0]);
				printf(",\n  \"precision\": \"%s\",\n  \"threads\": %d,\n  \"ms\": %.3f",
				       prec == AL_PREC_FP16 ? "fp16" : "fp32", threads, ms[0]);
				if (c->function) {
					printf(",\n  \"function\": ");
					al_json_put_string(stdout, c->function);
				}
				if (stepped)
					printf(",\n  \"steps\": %llu", (unsigned long long)steps);
				printf(",\n  \"inputs\": [");
			} else {
				printf("%s: ran in %s, %.1f ms%s", c->paths[0],
				       prec == AL_PREC_FP16 ? "fp16 (ANE-like)" : "fp32", ms[0],
				       stepped ? " (step 0)" : "");
				if (c->function) {
					printf(", function ");
					put_text(stdout, c->function, CLI_NAME_MAX);
				}
				printf("\n");
			}
			for (size_t i = 0; i < in.n; i++) {
				if (!in.v[i].t)
					continue;
				if (json) {
					printf("%s{\"name\": ", i ? ", " : "");
					al_json_put_string(stdout, in.v[i].name);
					printf(", \"from\": ");
					al_json_put_string(stdout, in.how[i]);
					printf(", \"shape\": ");
					put_shape(stdout, in.v[i].t);
					printf("}");
				} else {
					printf("  input  ");
					put_name(stdout, in.v[i].name, 24);
					printf(" %-6s ", al_dtype_name(al_tensor_dtype(in.v[i].t)));
					put_shape(stdout, in.v[i].t);
					printf("  from ");
					put_name(stdout, in.how[i], 0);
					printf("\n");
				}
			}
			if (json)
				printf("],\n  \"outputs\": [");
		}
		rc = print_outputs(c, json, stepped ? (int)k : -1, &iface, outs[k], n_outs[k], tol,
				   &all_pass, &first);
	}
	if (rc != EXIT_ALL_ANE)
		goto done;
	if (c->out)
		rc = stepped ? write_steps(c, c->out, outs, n_outs, (int)steps)
			     : write_outputs(c, c->out, outs[0], n_outs[0]);
	if (rc != EXIT_ALL_ANE)
		goto done;
	double med = 0, lo = 0;
	if (repeat) {
		qsort(times, repeat, sizeof *times, cmp_double);
		med = repeat % 2 ? times[repeat / 2] : (times[repeat / 2 - 1] + times[repeat / 2]) / 2;
		lo = times[0];
	}
	if (json) {
		printf("\n  ]");
		if (repeat)
			printf(",\n  \"repeat\": %llu,\n  \"ms_median\": %.3f,\n  \"ms_min\": %.3f",
			       (unsigned long long)repeat, med, lo);
		printf(",\n  \"pass\": %s\n}\n", all_pass ? "true" : "false");
	} else {
		if (repeat)
			printf("repeat %llu (after 1 warm-up, %d thread%s): median %.3f ms, min %.3f ms\n",
			       (unsigned long long)repeat, threads, threads == 1 ? "" : "s", med, lo);
		if (c->out) {
			size_t n = 0;
			for (uint64_t k = 0; k < steps; k++)
				n += n_outs[k];
			printf("wrote %zu file%s to %s/\n", n, n == 1 ? "" : "s", c->out);
		}
	}
	if (!all_pass)
		rc = EXIT_FALLBACK;
done:
	for (uint64_t k = 0; outs && n_outs && k < steps; k++)
		al_outputs_free(outs[k], n_outs[k]);
	free(outs);
	free(n_outs);
	free(ms);
	free(times);
	inputs_free(&in);
	close_model(&l);
	if (fflush(stdout) != 0)
		return EXIT_IO;
	return rc;
}

/* ================================================================ verify */

int cmd_verify(struct cli *c)
{
	const struct command_row *cmd = command("verify");
	int rc = EXIT_ALL_ANE;
	bool json = is_json(c, cmd, &rc);
	enum al_precision prec;
	double tol = 1e-4;
	if (rc || (rc = precision_of(c, cmd, &prec)))
		return rc;
	if (c->tol && !parse_double(c->tol, &tol))
		return usage_error(cmd, "--tol takes a non-negative number, not '%s'", c->tol);
	struct loaded a = {0}, b = {0};
	struct inputs in = {0};
	struct al_named_tensor *oa = NULL, *ob = NULL;
	size_t na = 0, nb = 0;
	double ma = 0, mb = 0;
	if ((rc = open_model(c->paths[0], &a)) || (rc = open_model(c->paths[1], &b)))
		goto done;
	/* inputs (and --state initial states) by the first model's names; random
	 * unless given; final states are compared like outputs */
	struct al_submodel iface = iface_of(al_model_get(a.m, 0), c->function);
	int threads = threads_of(c, cmd, &rc);
	if (rc || (rc = gather_inputs(c, cmd, &iface, true, &in)) || (rc = gather_states(c, cmd, &iface, &in)))
		goto done;
	/* one budget for both runs: the inputs, and the first model's outputs while
	 * the second runs */
	uint64_t held = al_values_bytes(in.v, in.n);
	struct al_run_opts o = {.precision = prec, .max_bytes = in.max_bytes, .max_work = max_work_of(c),
				.held_bytes = &held, .threads = threads, .function = c->function};
	if ((rc = run_once(&a, c->paths[0], &in, &o, &oa, &na, &ma)))
		goto done;
	held += al_values_bytes(oa, na);
	if ((rc = run_once(&b, c->paths[1], &in, &o, &ob, &nb, &mb)))
		goto done;
	bool all = true;
	if (json) {
		printf("{\n  \"anelint\": \"%s\",\n  \"schema\": %d,\n  \"command\": \"verify\",\n  \"a\": ", ANELINT_VERSION,
	       ANELINT_JSON_SCHEMA_VERSION);
		al_json_put_string(stdout, c->paths[0]);
		printf(",\n  \"b\": ");
		al_json_put_string(stdout, c->paths[1]);
		printf(",\n  \"precision\": \"%s\",\n  \"tol\": %g,\n  \"outputs\": [",
		       prec == AL_PREC_FP16 ? "fp16" : "fp32", tol);
	} else {
		printf("verify %s (%.1f ms) against %s (%.1f ms), %s, %zu input%s (%s)\n", c->paths[1], mb,
		       c->paths[0], ma, prec == AL_PREC_FP16 ? "fp16" : "fp32", in.n, in.n == 1 ? "" : "s",
		       in.n ? in.how[0] : "none");
	}
	for (size_t i = 0; i < na; i++) {
		const struct al_named_tensor *match = NULL;
		for (size_t k = 0; k < nb && !match; k++)
			if (strcmp(ob[k].name, oa[i].name) == 0)
				match = &ob[k];
		if (!match && na == nb)
			match = &ob[i]; /* renamed outputs: compare by position */
		struct diff df = {.why = "no output of that name in the second model"};
		if (match)
			df = compare(match->t, oa[i].t, tol);
		all &= df.pass;
		if (json) {
			printf("%s\n    ", i ? "," : "");
			print_diff_json(stdout, oa[i].name, &df);
		} else {
			print_diff_text(oa[i].name, &df, tol);
		}
	}
	if (na != nb)
		all = false;
	if (json)
		printf("\n  ],\n  \"pass\": %s\n}\n", all ? "true" : "false");
	else
		printf("%s\n", all ? "PASS" : na != nb ? "FAIL: the models have different numbers of outputs"
						       : "FAIL");
	rc = all ? EXIT_ALL_ANE : EXIT_FALLBACK;
done:
	al_outputs_free(oa, na);
	al_outputs_free(ob, nb);
	inputs_free(&in);
	close_model(&a);
	close_model(&b);
	if (fflush(stdout) != 0)
		return EXIT_IO;
	return rc;
}

/* ================================================================ fp16
 * Pass 1 (fp32) keeps a copy of every op's outputs in execution order; pass 2
 * (fp16) compares op k with record k, as long as both runs take the same path. */

/* Bytes of fp32 values kept for the comparison: at most a quarter of the run
 * budget (--max-memory), which they share with both runs, and 2 GB. */
#define FP16_MAX_KEEP (UINT64_C(2) << 30)

struct rec {
	const struct al_node *n;
	float *v;          /* first output's fp32 values (NULL when not kept) */
	size_t count;
	/* fp32 statistics of the first float output */
	size_t overflow;   /* finite |x| > 65504: inf in fp16 */
	size_t underflow;  /* 0 < |x| < 2^-25: 0 in fp16 */
	size_t subnormal;  /* 2^-25 <= |x| < 2^-14: fp16 subnormal, few bits left */
	size_t nonzero;
	double max_abs32;
	bool tiny_const;   /* a constant with 0 < |x| < 2^-24 (an epsilon that becomes 0) */
	bool mask_const;   /* a constant <= -65504 or -inf (an attention mask: -inf in fp16) */
	/* pass 2 */
	bool compared;
	double err;        /* max|y16 - y32| / max|y32| */
	double err_in;     /* largest err among the ops feeding it */
	size_t nonfinite16;
};

struct fp16_run {
	struct rec *r;
	size_t n, cap, pos;
	uint64_t kept, max_keep;
	uint64_t held; /* al_run_opts.held_bytes: the inputs, the kept values, the fp32 outputs */
	bool diverged, oom;
};

static bool is_const_node(const struct al_node *n)
{
	return n->type && (strcmp(n->type, "const") == 0 || strncmp(n->type, "constexpr_", 10) == 0 ||
			   strncmp(n->type, "loadConstant", 12) == 0);
}

static void observe32(void *ctx, const struct al_node *n, al_tensor *const *outs, uint32_t n_outs)
{
	struct fp16_run *f = ctx;
	if (f->oom)
		return;
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 256;
		struct rec *r = realloc(f->r, cap * sizeof *r);
		if (!r) {
			f->oom = true;
			return;
		}
		f->r = r;
		f->cap = cap;
	}
	struct rec *r = &f->r[f->n++];
	memset(r, 0, sizeof *r);
	r->n = n;
	if (!n_outs || !outs[0])
		return;
	al_tensor *t = outs[0];
	const float *v = al_tensor_data(t);
	size_t count = al_tensor_count(t);
	int dt = al_tensor_dtype(t);
	bool fl = dt == AL_DT_FP32 || dt == AL_DT_FP16 || dt == AL_DT_FP64 || dt == AL_DT_UNKNOWN;
	if (!v || !fl)
		return;
	bool cnst = is_const_node(n);
	for (size_t i = 0; i < count; i++) {
		float a = fabsf(v[i]);
		if (v[i] != 0 && isfinite(v[i]))
			r->nonzero++;
		if (isfinite(v[i]) && a > 65504.0f)
			r->overflow++;
		else if (a > 0 && a < 2.98023224e-08f)
			r->underflow++;
		else if (a >= 2.98023224e-08f && a < 6.103515625e-05f)
			r->subnormal++;
		if (isfinite(a) && a > r->max_abs32)
			r->max_abs32 = a;
		if (cnst && count <= 64 && a > 0 && a < 5.9604645e-08f)
			r->tiny_const = true;
		if (cnst && (v[i] <= -65504.0f))
			r->mask_const = true;
	}
	if (f->kept + count * sizeof(float) <= f->max_keep && (r->v = malloc(count * sizeof(float) + 1))) {
		memcpy(r->v, v, count * sizeof(float));
		r->count = count;
		f->kept += count * sizeof(float);
		f->held += count * sizeof(float);
	}
}

static void observe16(void *ctx, const struct al_node *n, al_tensor *const *outs, uint32_t n_outs)
{
	struct fp16_run *f = ctx;
	if (f->diverged || f->pos >= f->n) {
		f->diverged = true;
		return;
	}
	struct rec *r = &f->r[f->pos++];
	if (r->n != n) {
		f->diverged = true; /* the fp16 run took another path (a loop ran a different count) */
		return;
	}
	if (!n_outs || !outs[0] || !r->v)
		return;
	const float *v = al_tensor_data(outs[0]);
	if (!v || al_tensor_count(outs[0]) != r->count)
		return;
	double m = 0;
	for (size_t i = 0; i < r->count; i++) {
		if (!isfinite(v[i])) {
			r->nonfinite16++;
			continue;
		}
		double e = fabs((double)v[i] - r->v[i]);
		if (e > m)
			m = e;
	}
	r->compared = true;
	r->err = r->max_abs32 > 0 ? m / r->max_abs32 : m;
	/* compared: its fp32 values are no longer needed, and leave the budget */
	free(r->v);
	r->v = NULL;
	f->held -= r->count * sizeof(float);
	/* the error its inputs brought: the largest among the ops that produced them */
	for (uint32_t k = 0; k < n->n_inputs; k++)
		for (size_t j = f->pos - 1; j-- > 0;) {
			const struct rec *p = &f->r[j];
			bool produced = false;
			for (uint32_t o = 0; o < p->n->n_outputs && !produced; o++)
				produced = p->n->outputs[o] && n->inputs[k] &&
					   strcmp(p->n->outputs[o], n->inputs[k]) == 0;
			if (produced) {
				if (p->compared && p->err > r->err_in)
					r->err_in = p->err;
				break;
			}
		}
}

static int cmp_added(const void *pa, const void *pb)
{
	const struct rec *a = *(const struct rec *const *)pa, *b = *(const struct rec *const *)pb;
	double x = a->err - a->err_in, y = b->err - b->err_in;
	return x < y ? 1 : x > y ? -1 : 0;
}

static void put_node(FILE *out, const struct al_node *n, bool json)
{
	if (json) {
		fprintf(out, "\"name\": ");
		al_json_put_string(out, n->name ? n->name : "");
		fprintf(out, ", \"type\": ");
		al_json_put_string(out, n->type ? n->type : "");
	} else {
		fprintf(out, "%-28.28s %-18.18s", n->name ? n->name : "", n->type ? n->type : "");
	}
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
	struct loaded l;
	struct inputs in = {0};
	struct fp16_run f = {0};
	struct al_named_tensor *o32 = NULL, *o16 = NULL;
	size_t n32 = 0, n16 = 0;
	const struct rec **order = NULL;
	double ms32 = 0, ms16 = 0;
	if ((rc = open_model(c->paths[0], &l)))
		goto done;
	struct al_submodel iface = iface_of(al_model_get(l.m, 0), c->function);
	int threads = threads_of(c, cmd, &rc);
	if (rc || (rc = gather_inputs(c, cmd, &iface, true, &in)) || (rc = gather_states(c, cmd, &iface, &in)))
		goto done;
	f.held = al_values_bytes(in.v, in.n);
	f.max_keep = (in.max_bytes ? in.max_bytes : AL_RUN_MAX_BYTES) / 4;
	if (f.max_keep > FP16_MAX_KEEP)
		f.max_keep = FP16_MAX_KEEP;
	struct al_run_opts o = {.precision = AL_PREC_FP32, .max_bytes = in.max_bytes, .max_work = max_work_of(c),
				  .observe = observe32, .observe_ctx = &f, .held_bytes = &f.held,
				  .threads = threads, .function = c->function};
	if ((rc = run_once(&l, c->paths[0], &in, &o, &o32, &n32, &ms32)))
		goto done;
	if (f.oom) {
		fprintf(stderr, "anelint: error: out of memory\n");
		rc = EXIT_IO;
		goto done;
	}
	f.held += al_values_bytes(o32, n32);
	o.precision = AL_PREC_FP16;
	o.observe = observe16;
	if ((rc = run_once(&l, c->paths[0], &in, &o, &o16, &n16, &ms16)))
		goto done;
	order = calloc(f.n + 1, sizeof *order);
	if (!order) {
		rc = EXIT_IO;
		goto done;
	}
	size_t n_order = 0;
	size_t overflow = 0, underflow = 0, subnormal = 0, nonzero = 0, nonfinite = 0;
	for (size_t i = 0; i < f.n; i++) {
		if (f.r[i].compared && !is_const_node(f.r[i].n))
			order[n_order++] = &f.r[i];
		overflow += f.r[i].overflow;
		underflow += f.r[i].underflow;
		subnormal += f.r[i].subnormal;
		nonzero += f.r[i].nonzero;
		nonfinite += f.r[i].nonfinite16;
	}
	qsort(order, n_order, sizeof *order, cmp_added);
	if (json) {
		printf("{\n  \"anelint\": \"%s\",\n  \"schema\": %d,\n  \"command\": \"fp16\",\n  \"model\": ", ANELINT_VERSION,
	       ANELINT_JSON_SCHEMA_VERSION);
		al_json_put_string(stdout, c->paths[0]);
		printf(",\n  \"ops_run\": %zu,\n  \"ops_compared\": %zu,\n  \"diverged\": %s,\n  \"outputs\": [",
		       f.n, n_order, f.diverged ? "true" : "false");
	} else {
		printf("%s: fp32 %.1f ms, fp16 %.1f ms; %zu ops run, %zu compared%s\n", c->paths[0], ms32, ms16,
		       f.n, n_order, f.diverged ? " (the fp16 run took another path: later ops not compared)" : "");
		printf("outputs, fp16 against fp32:\n");
	}
	for (size_t i = 0; i < n32 && i < n16; i++) {
		struct diff df = compare(o16[i].t, o32[i].t, 1e-2);
		if (df.n_nan) /* NaN in fp16 where fp32 has a number: the model is broken in fp16 */
			rc = EXIT_FALLBACK;
		if (json) {
			printf("%s\n    ", i ? "," : "");
			print_diff_json(stdout, o32[i].name, &df);
		} else {
			print_diff_text(o32[i].name, &df, 1e-2);
		}
	}
	if (json)
		printf("\n  ],\n  \"values\": {\"nonzero\": %zu, \"overflow\": %zu, \"underflow\": %zu, "
		       "\"subnormal\": %zu, \"nonfinite_fp16\": %zu},\n  \"layers\": [",
		       nonzero, overflow, underflow, subnormal, nonfinite);
	else
		printf("values in fp32 (all ops): %zu nonzero; %zu beyond 65504 (inf in fp16), %zu below 2^-25 "
		       "(0 in fp16), %zu subnormal in fp16; %zu NaN/inf in the fp16 run\n",
		       nonzero, overflow, underflow, subnormal, nonfinite);
	if (!json)
		printf("\nlayers adding the most error (max|fp16-fp32| / max|fp32| of the output, minus the "
		       "largest of its inputs):\n  %-5s %-28s %-18s %10s %10s %10s  flags\n", "#", "name", "type",
		       "in", "out", "added");
	for (size_t i = 0; i < n_order && i < top; i++) {
		const struct rec *r = order[i];
		size_t idx = (size_t)(r - f.r);
		double sub = r->nonzero ? (double)r->subnormal / (double)r->nonzero : 0;
		double und = r->nonzero ? (double)r->underflow / (double)r->nonzero : 0;
		if (json) {
			printf("%s\n    {\"order\": %zu, ", i ? "," : "", idx);
			put_node(stdout, r->n, true);
			printf(", \"err_in\": ");
			put_num(stdout, r->err_in);
			printf(", \"err_out\": ");
			put_num(stdout, r->err);
			printf(", \"overflow\": %zu, \"underflow\": %zu, \"subnormal\": %zu, \"nonfinite_fp16\": %zu}",
			       r->overflow, r->underflow, r->subnormal, r->nonfinite16);
			continue;
		}
		printf("  %-5zu ", idx);
		put_node(stdout, r->n, false);
		printf(" %10.3g %10.3g %10.3g ", r->err_in, r->err, r->err - r->err_in);
		if (r->overflow)
			printf(" overflow(%zu)", r->overflow);
		if (und > 0)
			printf(" underflow(%.0f%%)", und * 100);
		if (sub >= 0.01)
			printf(" subnormal(%.0f%%)", sub * 100);
		if (r->nonfinite16)
			printf(" nan/inf(%zu)", r->nonfinite16);
		printf("\n");
	}
	if (json)
		printf("\n  ],\n  \"flags\": [");
	else
		printf("\nflags:\n");
	size_t n_flags = 0, max_flags = c->top ? (size_t)top : 200; /* --top N bounds both lists */
	for (size_t i = 0; i < f.n; i++) {
		const struct rec *r = &f.r[i];
		const char *what = r->overflow ? "overflow: values beyond 65504 become inf in fp16"
			: r->mask_const ? "mask constant <= -65504 becomes -inf in fp16 (a fully masked row "
					  "gives NaN in softmax)"
			: r->tiny_const ? "constant below 2^-24 (an epsilon?) becomes 0 in fp16"
			: r->nonzero && r->underflow * 10 >= r->nonzero ? "underflow: 10% or more of the values "
									   "become 0 in fp16"
			: r->nonfinite16 && !r->overflow ? "NaN/inf in the fp16 run" : NULL;
		if (!what)
			continue;
		if (n_flags++ >= max_flags)
			continue;
		if (json) {
			printf("%s\n    {\"order\": %zu, ", n_flags > 1 ? "," : "", i);
			put_node(stdout, r->n, true);
			printf(", \"flag\": ");
			al_json_put_string(stdout, what);
			printf("}");
		} else {
			printf("  %-5zu ", i);
			put_node(stdout, r->n, false);
			printf(" %s\n", what);
		}
	}
	if (json)
		printf("\n  ],\n  \"flags_not_listed\": %zu\n}\n", n_flags > max_flags ? n_flags - max_flags : 0);
	else if (!n_flags)
		printf("  none: no overflow, underflow, tiny constants or masks\n");
	else if (n_flags > max_flags)
		printf("  ... %zu more (--top)\n", n_flags - max_flags);
done:
	free(order);
	for (size_t i = 0; i < f.n; i++)
		free(f.r[i].v);
	free(f.r);
	al_outputs_free(o32, n32);
	al_outputs_free(o16, n16);
	inputs_free(&in);
	close_model(&l);
	if (fflush(stdout) != 0)
		return EXIT_IO;
	return rc;
}
