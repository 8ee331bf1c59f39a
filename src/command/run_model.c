/* SPDX-License-Identifier: MIT */
/* run_model.c: `anelint run`, `verify` and `fp16` as library calls (al_run_model,
 * al_verify, al_fp16_compare; include/anelint.h "commands").
 *
 *   run     one model on inputs from .npy files or drawn at random; a summary of
 *           each output, the outputs as .npy (out), compared with expected .npy
 *           files (expect)
 *   verify  two models on the same inputs; per output the max abs / relative
 *           error and cosine similarity, pass or fail against tol
 *   fp16    one model in fp32 and in ANE-like fp16; ranks layers by the error
 *           they add and flags overflow, underflow, subnormals, tiny constants
 *
 * Errors are relative to the scale of the reference output (max |ref|), the
 * convention of ../shared/corpus/reference (element-wise relative errors blow
 * up near zero and say little). Output files are written to temporary names and
 * renamed only when every output was written. The JSON documents are written
 * here (al_exec_result_json), so the CLI and the Python package give the same
 * bytes; the text is the CLI's. */
#include "command.h"
#include "base.h"     /* ali_atomic_*, ali_diag_add, ali_keep_freed_memory */
#include "mlmodelc.h" /* ali_compiled_unrunnable */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NAME_MAX_SHOWN 200 /* a name in a summary: as the CLI shows names */

/* What a result owns beside its arrays. */
struct priv {
	al_model *a, *b;
	struct al_named_tensor *oa, *ob, *o32, *o16;
	size_t na, nb, n32, n16;
};

/* ================================================================ failures */

static enum al_status fail_option(struct al_exec_result *r, al_diags *d, const char *fmt, const char *arg)
{
	r->fail.kind = AL_FAIL_OPTION;
	r->fail.status = AL_E_INVALID_ARG;
	r->fail.fmt = fmt;
	r->fail.arg = arg;
	const char *conv = strstr(fmt, "%s");
	ali_diag_add(d, AL_SEV_ERROR, NULL, UINT64_MAX, NULL, NULL, "%.*s%s%s", conv ? (int)(conv - fmt) : (int)strlen(fmt),
		     fmt, conv ? arg : "", conv ? conv + 2 : "");
	return AL_E_INVALID_ARG;
}

static enum al_status fail_diags(struct al_exec_result *r, enum al_status st, const char *subject)
{
	r->fail.kind = AL_FAIL_DIAGS;
	r->fail.status = st;
	snprintf(r->fail.subject, sizeof r->fail.subject, "%s", subject ? subject : "");
	return st;
}

static enum al_status fail_subject(struct al_exec_result *r, al_diags *d, enum al_status st, const char *subject,
				   const char *msg)
{
	r->fail.kind = AL_FAIL_SUBJECT;
	r->fail.status = st;
	snprintf(r->fail.subject, sizeof r->fail.subject, "%s", subject);
	snprintf(r->fail.msg, sizeof r->fail.msg, "%s", msg);
	ali_diag_add(d, AL_SEV_ERROR, *subject ? subject : NULL, UINT64_MAX, NULL, NULL, "%s", msg);
	return st;
}

static enum al_status fail_nomem(struct al_exec_result *r, al_diags *d)
{
	return fail_subject(r, d, AL_E_NOMEM, r->opts->model ? r->opts->model : "anelint", "out of memory");
}

/* ================================================================ helpers */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static char *dupstr(const char *s)
{
	size_t n = strlen(s) + 1;
	char *c = ali_malloc(n);
	if (c)
		memcpy(c, s, n);
	return c;
}

/* text written by fn into a new string (NULL when out of memory) */
static char *to_string(void (*fn)(FILE *, const al_tensor *), const al_tensor *t)
{
	char *s = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&s, &len);
	if (!mem)
		return NULL;
	fn(mem, t);
	if (fclose(mem) != 0) {
		ali_free(s);
		return NULL;
	}
	return s;
}

static void put_shape(FILE *out, const al_tensor *t)
{
	int rank = al_tensor_rank(t);
	ali_dims_fput(out, al_tensor_dims(t), rank > 0 ? (size_t)rank : 0, 0);
}

static void summarize(FILE *out, const al_tensor *ct)
{
	al_tensor *t = (al_tensor *)ct; /* al_tensor_data takes it mutable; only read */
	size_t n = al_tensor_count(t);
	if (al_tensor_string(t, 0)) {
		fputc('"', out);
		al_put_escaped(out, al_tensor_string(t, 0), NAME_MAX_SHOWN);
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
		al_put_escaped(out, al_tensor_label(t, best), NAME_MAX_SHOWN);
		fprintf(out, "\" (%.4g)", v[best]);
	}
}

/* A value as the reports show it; false when out of memory. */
static bool describe(struct al_exec_value *v, const char *name, const al_tensor *t, bool summary)
{
	v->name = dupstr(name);
	v->dtype = al_tensor_dtype(t);
	v->shape = to_string(put_shape, t);
	v->summary = summary ? to_string(summarize, t) : NULL;
	return v->name && v->shape && (!summary || v->summary);
}

static void value_clear(struct al_exec_value *v)
{
	ali_free(v->name);
	ali_free(v->from);
	ali_free(v->shape);
	ali_free(v->summary);
}

/* ================================================================ inputs */

struct inputs {
	struct al_named_tensor *v;
	size_t n;
	char **how; /* per input: "x.npy", "random (seed 1)" */
	bool *borrowed; /* given in memory: not freed */
};

static void inputs_free(struct inputs *in)
{
	for (size_t i = 0; i < in->n; i++) {
		if (!in->borrowed[i])
			al_tensor_free(in->v[i].t);
		ali_free(in->how[i]);
	}
	ali_free(in->v);
	ali_free(in->how);
	ali_free(in->borrowed);
	memset(in, 0, sizeof *in);
}

static enum al_status load_npy(struct al_exec_result *r, const char *path, al_tensor **out, al_diags *d)
{
	enum al_status st = al_npy_read(path, out, d);
	if (st != AL_OK)
		return fail_diags(r, st == AL_E_IO ? AL_E_IO : AL_E_INVALID_ARG, path);
	return AL_OK;
}

/* The interface run: the root's, or that of the function `function` names
 * (a name the model lacks is left to al_model_run, which lists the functions). */
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

static bool name_is(const char *name, const char *arg, const char *eq)
{
	return strlen(name) == (size_t)(eq - arg) && strncmp(name, arg, (size_t)(eq - arg)) == 0;
}

/* Initial states ("NAME=FILE.npy"): appended to the inputs (the library takes a
 * state's initial value under its name; the others start at zeros). */
static enum al_status gather_states(struct al_exec_result *r, const struct al_submodel *s, struct inputs *in,
				    al_diags *d)
{
	const struct al_run_inputs *ri = &r->opts->in;
	for (size_t k = 0; k < ri->n_states; k++) {
		const char *arg = ri->states[k], *eq = strchr(arg, '=');
		if (!eq || eq == arg || !eq[1])
			return fail_option(r, d, "--state takes NAME=FILE.npy, not '%s'", arg);
		const struct al_feature *f = NULL;
		for (uint32_t i = 0; i < s->n_states && !f; i++)
			if (name_is(s->states[i].name, arg, eq))
				f = &s->states[i];
		if (!f)
			return fail_option(r, d, "--state %s: the model has no state of that name (see 'anelint info')",
					   arg);
		al_tensor *t = NULL;
		enum al_status st = load_npy(r, eq + 1, &t, d);
		if (st != AL_OK)
			return st;
		in->v[in->n].name = f->name;
		in->v[in->n].t = t;
		in->how[in->n] = dupstr(eq + 1);
		if (!in->how[in->n++])
			return fail_nomem(r, d);
	}
	return AL_OK;
}

/* The inputs of `s`: values first, then files, then dir, then random (or
 * random_default) for the rest. step >= 0 (steps): DIR/stepK_NAME.npy first,
 * then DIR/NAME.npy; random draws use seed + K. */
static enum al_status gather_inputs(struct al_exec_result *r, const struct al_submodel *s, bool random_default,
				    int step, struct inputs *in, al_diags *d)
{
	const struct al_run_inputs *ri = &r->opts->in;
	memset(in, 0, sizeof *in);
	in->v = ali_calloc(s->n_inputs + s->n_states + 1, sizeof *in->v);
	in->how = ali_calloc(s->n_inputs + s->n_states + 1, sizeof *in->how);
	in->borrowed = ali_calloc(s->n_inputs + s->n_states + 1, sizeof *in->borrowed);
	if (!in->v || !in->how || !in->borrowed)
		return fail_nomem(r, d);
	uint64_t seed = ri->seed + (step > 0 ? (uint64_t)step : 0);
	for (size_t k = 0; k < ri->n_files; k++) {
		const char *arg = ri->files[k], *eq = strchr(arg, '=');
		if (!eq || eq == arg || !eq[1])
			return fail_option(r, d, "--input takes NAME=FILE.npy, not '%s'", arg);
		bool found = false;
		for (uint32_t i = 0; i < s->n_inputs; i++)
			found |= name_is(s->inputs[i].name, arg, eq);
		if (!found)
			return fail_option(r, d, "--input %s: the model has no input of that name (see 'anelint info')",
					   arg);
	}
	for (uint32_t i = 0; i < s->n_inputs; i++) {
		const struct al_feature *f = &s->inputs[i];
		const char *file = NULL;
		al_tensor *given = NULL;
		char path[4096];
		for (size_t k = 0; k < ri->n_values; k++)
			if (ri->values[k].name && strcmp(ri->values[k].name, f->name) == 0)
				given = ri->values[k].t;
		for (size_t k = 0; !given && k < ri->n_files; k++)
			if (name_is(f->name, ri->files[k], strchr(ri->files[k], '=')))
				file = strchr(ri->files[k], '=') + 1;
		if (!given && !file && ri->dir && step >= 0) {
			snprintf(path, sizeof path, "%s/step%d_%s.npy", ri->dir, step, f->name);
			if (access(path, F_OK) == 0)
				file = path;
		}
		if (!given && !file && ri->dir) {
			snprintf(path, sizeof path, "%s/%s.npy", ri->dir, f->name);
			if (access(path, F_OK) == 0)
				file = path;
		}
		al_tensor *t = NULL;
		enum al_status st;
		if (given) {
			t = given;
			in->borrowed[in->n] = true;
			in->how[in->n] = dupstr("given");
		} else if (file) {
			if ((st = load_npy(r, file, &t, d)) != AL_OK)
				return st;
			in->how[in->n] = dupstr(file);
		} else if (ri->random || random_default) {
			st = al_random_input(f, seed, r->opts->max_bytes, &t, d);
			if (st != AL_OK)
				return fail_diags(r, st == AL_E_INVALID_ARG ? AL_E_UNSUPPORTED : st, f->name);
			char how[64];
			snprintf(how, sizeof how, "random (seed %llu)", (unsigned long long)seed);
			in->how[in->n] = dupstr(how);
		} else if (f->optional) {
			continue;
		} else {
			r->fail.kind = AL_FAIL_MISSING_INPUT;
			r->fail.status = AL_E_INVALID_ARG;
			snprintf(r->fail.subject, sizeof r->fail.subject, "%s", f->name);
			r->fail.arg = al_feature_kind_name(f->kind);
			ali_diag_add(d, AL_SEV_ERROR, NULL, UINT64_MAX, NULL, f->name,
				     "no value for input '%s' (%s); give --input %s=FILE.npy, --inputs DIR or --random",
				     f->name, r->fail.arg, f->name);
			return AL_E_INVALID_ARG;
		}
		in->v[in->n].name = f->name;
		in->v[in->n].t = t;
		in->n++;
		if (!in->how[in->n - 1])
			return fail_nomem(r, d);
	}
	return AL_OK;
}

/* ================================================================ comparing */

/* a against the reference b (al_tensor_compare: "same shape" ignores dims of
 * 1, as NN outputs keep rank-5 blobs), and the verdict against tol. */
static struct al_value_diff compare(const char *name, const al_tensor *a, const al_tensor *b, double tol)
{
	struct al_tensor_diff t;
	al_tensor_compare(a, b, &t);
	struct al_value_diff v = {.name = name, .comparable = t.comparable, .why = t.why, .identical = t.identical,
				  .max_abs = t.max_abs, .scale = t.ref_max, .rel = t.rel, .cosine = t.cosine,
				  .n_nan = t.nan_a};
	if (!t.comparable)
		return v;
	if (v.n_nan) /* an error of NaN, not the largest of the numbers left (0 when all are NaN) */
		v.max_abs = v.rel = v.cosine = NAN;
	v.pass = t.text ? v.identical
			: v.n_nan == 0 && (tol == 0 ? v.identical : v.max_abs <= tol * v.scale || v.max_abs == 0);
	return v;
}

/* ================================================================ running */

/* The model at path, or the one the caller opened (given: not the result's to free). */
static enum al_status open_model(struct al_exec_result *r, const char *path, al_model *given, al_model **m,
				 al_diags *d)
{
	if (given) {
		*m = given;
		return AL_OK;
	}
	enum al_status st = al_model_open(path, m, d);
	if (st != AL_OK)
		return fail_diags(r, st, path);
	const char *why = ali_compiled_unrunnable(*m);
	if (why)
		return fail_subject(r, d, AL_E_UNSUPPORTED, path, why);
	return AL_OK;
}

static enum al_status run_once(struct al_exec_result *r, al_model *m, const char *path,
			       const struct al_named_tensor *in, size_t n_in, const struct al_run_opts *o,
			       struct al_named_tensor **outs, size_t *n_outs, double *ms, al_diags *d)
{
	double t0 = now_ms();
	enum al_status st = al_model_run(m, in, n_in, o, outs, n_outs, d);
	*ms = now_ms() - t0;
	return st == AL_OK ? AL_OK : fail_diags(r, st, path);
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
static enum al_status write_outputs(struct al_exec_result *r, const char *dir, struct al_named_tensor *outs,
				    size_t n, al_diags *d)
{
	struct stat sb;
	bool fresh = lstat(dir, &sb) != 0 && errno == ENOENT;
	struct al_atomic top = {.fd = -1}, *files = ali_calloc(n ? n : 1, sizeof *files);
	char *dst = ali_malloc(strlen(dir) + 300);
	enum al_status st = files && dst ? AL_OK : AL_E_NOMEM;
	bool guarded = false;
	const char *base = dir;
	if (st == AL_OK && fresh) {
		st = ali_atomic_begin(&top, dir, true, d) != AL_OK ? AL_E_IO : AL_OK;
		base = top.tmp;
	}
	for (size_t i = 0; files && i < n; i++)
		files[i].fd = -1;
	for (size_t i = 0; i < n && st == AL_OK; i++) {
		char fn[256];
		file_name(fn, sizeof fn, outs[i].name);
		snprintf(dst, strlen(dir) + 300, "%s/%s.npy", dir, fn);
		/* DIR/NAME.npy: not an input either */
		if ((st = al_output_check(dst, r->opts->protect, r->opts->n_protect, 0, d)) != AL_OK) {
			guarded = true;
			break;
		}
		char *at = ali_malloc(strlen(base) + 300);
		if (!at) {
			st = AL_E_NOMEM;
			break;
		}
		snprintf(at, strlen(base) + 300, "%s/%s.npy", base, fn);
		if (ali_atomic_begin(&files[i], at, false, d) != AL_OK) {
			st = AL_E_IO;
		} else if (!npy_to_fd(files[i].fd, outs[i].t)) {
			ali_diag_add(d, AL_SEV_ERROR, dst, UINT64_MAX, NULL, NULL, "cannot write: %s",
				     strerror(errno ? errno : EIO));
			st = AL_E_IO;
		}
		ali_free(at);
	}
	for (size_t i = 0; i < n && st == AL_OK; i++)
		if (ali_atomic_commit(&files[i], d) != AL_OK)
			st = AL_E_IO;
	if (st == AL_OK && fresh && ali_atomic_commit(&top, d) != AL_OK)
		st = AL_E_IO;
	for (size_t i = 0; files && i < n; i++)
		ali_atomic_abort(&files[i]); /* what was not committed */
	ali_atomic_abort(&top);
	if (st != AL_OK)
		fail_diags(r, guarded || st == AL_E_NOMEM ? st : AL_E_IO, guarded ? dst : dir);
	ali_free(files);
	ali_free(dst);
	return st;
}

/* Every step's outputs under DIR/stepK_NAME.npy (one atomic write). */
static enum al_status write_steps(struct al_exec_result *r, const char *dir, struct al_named_tensor **outs,
				  const size_t *n_outs, uint64_t steps, al_diags *d)
{
	size_t total = 0;
	for (uint64_t k = 0; k < steps; k++)
		total += n_outs[k];
	struct al_named_tensor *all = ali_calloc(total ? total : 1, sizeof *all);
	char **names = ali_calloc(total ? total : 1, sizeof *names);
	enum al_status st = all && names ? AL_OK : AL_E_NOMEM;
	size_t j = 0;
	for (uint64_t k = 0; k < steps && st == AL_OK; k++)
		for (size_t i = 0; i < n_outs[k]; i++, j++) {
			size_t len = strlen(outs[k][i].name) + 32;
			if (!(names[j] = ali_malloc(len))) {
				st = AL_E_NOMEM;
				break;
			}
			snprintf(names[j], len, "step%llu_%s", (unsigned long long)k, outs[k][i].name);
			all[j] = (struct al_named_tensor){names[j], outs[k][i].t};
		}
	if (st == AL_OK)
		st = write_outputs(r, dir, all, total, d);
	else
		fail_nomem(r, d);
	for (size_t i = 0; names && i < total; i++)
		ali_free(names[i]);
	ali_free(names);
	ali_free(all);
	return st;
}

/* One output against expect: DIR/NAME.npy, with steps DIR/stepK_NAME.npy
 * (a state also as DIR/stepK_state_NAME.npy, the corpus references' name).
 * AL_OK with *have false when no file is there for a state. */
static enum al_status expect_one(struct al_exec_result *r, int step, const char *name, bool is_state,
				 al_tensor *t, struct al_value_diff *df, bool *have, al_diags *d)
{
	const char *dir = r->opts->expect;
	char fn[256], path[4352];
	file_name(fn, sizeof fn, name);
	*have = false;
	if (step < 0)
		snprintf(path, sizeof path, "%s/%s.npy", dir, fn);
	else
		snprintf(path, sizeof path, "%s/step%d_%s.npy", dir, step, fn);
	if (step >= 0 && is_state && access(path, F_OK) != 0)
		snprintf(path, sizeof path, "%s/step%d_state_%s.npy", dir, step, fn);
	if (is_state && access(path, F_OK) != 0)
		return AL_OK; /* a state without a reference is not compared */
	al_tensor *ref = NULL;
	enum al_status st = load_npy(r, path, &ref, d);
	if (st != AL_OK)
		return st;
	*df = compare(NULL, t, ref, r->opts->tol);
	*have = true;
	al_tensor_free(ref);
	return AL_OK;
}

/* One call's outputs (and final states) into the result, compared with expect;
 * on a failure the outputs before it stay (the CLI shows them). */
static enum al_status record_outputs(struct al_exec_result *r, int step, const struct al_submodel *s,
				    struct al_named_tensor *outs, size_t n_outs, al_diags *d)
{
	struct al_exec_value *v = ali_realloc(r->outputs, (r->n_outputs + n_outs + 1) * sizeof *v);
	if (!v)
		return fail_nomem(r, d);
	r->steps_shown++;
	r->outputs = v;
	for (size_t i = 0; i < n_outs; i++) {
		struct al_exec_value *x = &r->outputs[r->n_outputs];
		memset(x, 0, sizeof *x);
		x->step = step;
		x->state = i >= s->n_outputs;
		if (r->opts->expect) {
			enum al_status st = expect_one(r, step, outs[i].name, x->state, outs[i].t, &x->expect,
						       &x->has_expect, d);
			if (st != AL_OK)
				return st;
			if (x->has_expect)
				r->pass &= x->expect.pass;
		}
		r->n_outputs++;
		if (!describe(x, outs[i].name, outs[i].t, true))
			return fail_nomem(r, d);
		x->expect.name = x->name;
	}
	return AL_OK;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int threads_default(int t)
{
	if (t > 0)
		return t;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	return cores < 1 ? 1 : cores > 64 ? 64 : (int)cores;
}

static struct al_exec_result *result_new(const char *command, const struct al_exec_opts *o)
{
	ali_keep_freed_memory(); /* every command that runs a model comes here first (base/platform.c) */
	struct al_exec_result *r = ali_calloc(1, sizeof *r);
	struct priv *p = ali_calloc(1, sizeof *p);
	if (!r || !p) {
		ali_free(r);
		ali_free(p);
		return NULL;
	}
	r->command = command;
	r->opts = o;
	r->priv = p;
	r->pass = true;
	r->threads = threads_default(o->threads);
	return r;
}

/* The inputs of the first call, as the report shows them. */
static enum al_status record_inputs(struct al_exec_result *r, const struct inputs *in, al_diags *d)
{
	r->inputs = ali_calloc(in->n + 1, sizeof *r->inputs);
	if (!r->inputs)
		return fail_nomem(r, d);
	for (size_t i = 0; i < in->n; i++) {
		if (!in->v[i].t)
			continue;
		struct al_exec_value *x = &r->inputs[r->n_inputs++];
		x->step = -1;
		if (!describe(x, in->v[i].name, in->v[i].t, false) || !(x->from = dupstr(in->how[i])))
			return fail_nomem(r, d);
	}
	return AL_OK;
}

/* ================================================================ run */

struct run_state {
	al_model *m;
	struct al_submodel iface;
	struct al_named_tensor **outs;
	size_t *n_outs;
	double *times;
	uint64_t steps;
	bool stepped;
};

/* Call k: its inputs (later calls: the states the previous one left), the run,
 * the --repeat timings after call 0, and its outputs into the result. */
static enum al_status run_step(struct al_exec_result *r, struct run_state *s, uint64_t k, al_diags *d)
{
	const struct al_exec_opts *o = r->opts;
	struct inputs in = {0};
	enum al_status st = gather_inputs(r, &s->iface, false, s->stepped ? (int)k : -1, &in, d);
	if (st == AL_OK && k == 0)
		st = gather_states(r, &s->iface, &in, d);
	/* later steps: the states the previous call left, borrowed (the library
	 * copies what it binds) */
	for (size_t i = s->iface.n_outputs; st == AL_OK && k > 0 && i < s->n_outs[k - 1]; i++) {
		in.v[in.n].name = s->outs[k - 1][i].name;
		in.v[in.n].t = s->outs[k - 1][i].t;
		in.borrowed[in.n] = true;
		if (!(in.how[in.n++] = dupstr("the previous step")))
			st = fail_nomem(r, d);
	}
	if (st != AL_OK) {
		inputs_free(&in);
		return st;
	}
	/* the inputs stay allocated beside the run's own copies, and so do the
	 * earlier steps' outputs kept for --out: one budget */
	uint64_t held = al_values_bytes(in.v, in.n);
	for (uint64_t j = 0; j < k; j++)
		held += al_values_bytes(s->outs[j], s->n_outs[j]);
	struct al_run_opts ro = {.precision = o->precision, .max_bytes = o->max_bytes, .max_work = o->max_work,
				 .held_bytes = &held, .threads = r->threads, .function = o->function};
	double ms = 0;
	st = run_once(r, s->m, o->model, in.v, in.n, &ro, &s->outs[k], &s->n_outs[k], &ms, d);
	/* --repeat: the run above was the warm-up; time N more of the same call */
	for (uint64_t j = 0; st == AL_OK && k == 0 && j < o->repeat; j++) {
		struct al_named_tensor *x = NULL;
		size_t nx = 0;
		st = run_once(r, s->m, o->model, in.v, in.n, &ro, &x, &nx, &s->times[j], d);
		al_outputs_free(x, nx);
	}
	if (st == AL_OK && k == 0) {
		r->ms = ms;
		r->started = true;
		st = record_inputs(r, &in, d);
	}
	inputs_free(&in);
	if (st != AL_OK)
		return st;
	/* without --out, a step's results are not needed once the next has run */
	if (!o->out && k > 0) {
		al_outputs_free(s->outs[k - 1], s->n_outs[k - 1]);
		s->outs[k - 1] = NULL;
		s->n_outs[k - 1] = 0;
	}
	return record_outputs(r, s->stepped ? (int)k : -1, &s->iface, s->outs[k], s->n_outs[k], d);
}

static enum al_status run_all(struct al_exec_result *r, struct run_state *s, al_diags *d)
{
	const struct al_exec_opts *o = r->opts;
	enum al_status st = open_model(r, o->model, o->open_a, &s->m, d);
	if (st != AL_OK)
		return st;
	s->iface = iface_of(al_model_get(s->m, 0), o->function);
	s->outs = ali_calloc(s->steps, sizeof *s->outs);
	s->n_outs = ali_calloc(s->steps, sizeof *s->n_outs);
	s->times = ali_calloc(o->repeat + 1, sizeof *s->times);
	if (!s->outs || !s->n_outs || !s->times)
		return fail_nomem(r, d);
	for (uint64_t k = 0; k < s->steps; k++)
		if ((st = run_step(r, s, k, d)) != AL_OK)
			return st;
	if (o->out) {
		st = s->stepped ? write_steps(r, o->out, s->outs, s->n_outs, s->steps, d)
				: write_outputs(r, o->out, s->outs[0], s->n_outs[0], d);
		if (st != AL_OK)
			return st;
		for (uint64_t k = 0; k < s->steps; k++)
			r->n_written += s->n_outs[k];
	}
	if (o->repeat) {
		uint64_t n = o->repeat;
		qsort(s->times, n, sizeof *s->times, cmp_double);
		r->ms_median = n % 2 ? s->times[n / 2] : (s->times[n / 2 - 1] + s->times[n / 2]) / 2;
		r->ms_min = s->times[0];
	}
	if (o->keep_values) { /* the last call's */
		r->values = s->outs[s->steps - 1];
		r->n_values = s->n_outs[s->steps - 1];
		s->outs[s->steps - 1] = NULL;
		s->n_outs[s->steps - 1] = 0;
	}
	return AL_OK;
}

enum al_status al_run_model(const struct al_exec_opts *o, struct al_exec_result **out, al_diags *d)
{
	struct al_exec_result *r = *out = result_new("run", o);
	if (!r)
		return AL_E_NOMEM;
	struct run_state s = {.steps = o->steps ? o->steps : 1, .stepped = o->steps != 0};
	enum al_status st = run_all(r, &s, d);
	if (s.outs)
		for (uint64_t k = 0; k < s.steps; k++)
			al_outputs_free(s.outs[k], s.n_outs[k]);
	ali_free(s.outs);
	ali_free(s.n_outs);
	ali_free(s.times);
	((struct priv *)r->priv)->a = s.m;
	return st;
}

/* ================================================================ verify */

static enum al_status verify_all(struct al_exec_result *r, al_diags *d)
{
	const struct al_exec_opts *o = r->opts;
	struct priv *p = r->priv;
	struct inputs in = {0};
	enum al_status st = open_model(r, o->model, o->open_a, &p->a, d);
	if (st == AL_OK)
		st = open_model(r, o->model_b, o->open_b, &p->b, d);
	if (st != AL_OK)
		return st;
	/* inputs (and initial states) by the first model's names; random unless
	 * given; final states are compared like outputs */
	struct al_submodel iface = iface_of(al_model_get(p->a, 0), o->function);
	if ((st = gather_inputs(r, &iface, true, -1, &in, d)) == AL_OK)
		st = gather_states(r, &iface, &in, d);
	if (st == AL_OK && in.n && !(r->inputs_how = dupstr(in.how[0])))
		st = fail_nomem(r, d);
	r->n_inputs = in.n;
	/* one budget for both runs: the inputs, and the first model's outputs while
	 * the second runs */
	uint64_t held = al_values_bytes(in.v, in.n);
	struct al_run_opts ro = {.precision = o->precision, .max_bytes = o->max_bytes, .max_work = o->max_work,
				 .held_bytes = &held, .threads = r->threads, .function = o->function};
	if (st == AL_OK)
		st = run_once(r, p->a, o->model, in.v, in.n, &ro, &p->oa, &p->na, &r->ms, d);
	held += al_values_bytes(p->oa, p->na);
	if (st == AL_OK)
		st = run_once(r, p->b, o->model_b, in.v, in.n, &ro, &p->ob, &p->nb, &r->ms_b, d);
	inputs_free(&in);
	if (st != AL_OK)
		return st;
	if (!(r->diffs = ali_calloc(p->na + 1, sizeof *r->diffs)))
		return fail_nomem(r, d);
	for (size_t i = 0; i < p->na; i++) {
		const struct al_named_tensor *match = NULL;
		for (size_t k = 0; k < p->nb && !match; k++)
			if (strcmp(p->ob[k].name, p->oa[i].name) == 0)
				match = &p->ob[k];
		if (!match && p->na == p->nb)
			match = &p->ob[i]; /* renamed outputs: compare by position */
		struct al_value_diff df = {.name = p->oa[i].name, .why = "no output of that name in the second model"};
		if (match)
			df = compare(p->oa[i].name, match->t, p->oa[i].t, o->tol);
		r->pass &= df.pass;
		r->diffs[r->n_diffs++] = df;
	}
	r->count_differs = p->na != p->nb;
	if (r->count_differs)
		r->pass = false;
	return AL_OK;
}

enum al_status al_verify(const struct al_exec_opts *o, struct al_exec_result **out, al_diags *d)
{
	struct al_exec_result *r = *out = result_new("verify", o);
	return r ? verify_all(r, d) : AL_E_NOMEM;
}

/* ================================================================ fp16
 * Pass 1 (fp32) keeps a copy of every op's outputs in execution order; pass 2
 * (fp16) compares op k with record k, as long as both runs take the same path. */

/* Bytes of fp32 values kept for the comparison: at most a quarter of the run
 * budget (max_bytes), which they share with both runs, and 2 GB. */
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

/* No compute: an ML Program const / constexpr_* op, or a NeuralNetwork
 * loadConstant / loadConstantND layer (the NN kinds, checked in the NN world:
 * a MIL op's kind is a row of the other table). */
static bool is_const_node(const struct al_node *n)
{
	if (ali_node_is_const(n))
		return true;
	const struct al_node_src *src = al_src(n);
	bool nn = n->owner ? !n->owner->function : (src && src->sub && src->sub->world == AL_WORLD_NN);
	return nn && (n->kind == AL_NNK_loadConstant || n->kind == AL_NNK_loadConstantND);
}

static void observe32(void *ctx, const struct al_node *n, al_tensor *const *outs, uint32_t n_outs)
{
	struct fp16_run *f = ctx;
	if (f->oom)
		return;
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 256;
		struct rec *r = ali_realloc(f->r, cap * sizeof *r);
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
	if (f->kept + count * sizeof(float) <= f->max_keep && (r->v = ali_malloc(count * sizeof(float) + 1))) {
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
	ali_free(r->v);
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

static struct al_fp16_layer layer_of(const struct fp16_run *f, const struct rec *r)
{
	return (struct al_fp16_layer){.order = (size_t)(r - f->r), .name = r->n->name ? r->n->name : "",
				      .type = r->n->type ? r->n->type : "", .err_in = r->err_in, .err = r->err,
				      .overflow = r->overflow, .underflow = r->underflow, .subnormal = r->subnormal,
				      .nonzero = r->nonzero, .nonfinite16 = r->nonfinite16};
}

static const char *flag_of(const struct rec *r)
{
	return r->overflow ? "overflow: values beyond 65504 become inf in fp16"
	     : r->mask_const ? "mask constant <= -65504 becomes -inf in fp16 (a fully masked row "
			       "gives NaN in softmax)"
	     : r->tiny_const ? "constant below 2^-24 (an epsilon?) becomes 0 in fp16"
	     : r->nonzero && r->underflow * 10 >= r->nonzero ? "underflow: 10% or more of the values "
							       "become 0 in fp16"
	     : r->nonfinite16 && !r->overflow ? "NaN/inf in the fp16 run" : NULL;
}

/* The ranking, the totals and the flags of two finished runs. */
static enum al_status fp16_digest(struct al_exec_result *r, struct fp16_run *f, al_diags *d)
{
	struct priv *p = r->priv;
	uint64_t top = r->opts->top ? r->opts->top : 10;
	size_t max_flags = r->opts->top ? (size_t)r->opts->top : 200; /* top bounds both lists */
	const struct rec **order = ali_calloc(f->n + 1, sizeof *order);
	r->diffs = ali_calloc(p->n32 + 1, sizeof *r->diffs);
	r->layers = ali_calloc((f->n < top ? f->n : top) + 1, sizeof *r->layers);
	r->flags = ali_calloc((f->n < max_flags ? f->n : max_flags) + 1, sizeof *r->flags);
	if (!order || !r->diffs || !r->layers || !r->flags) {
		ali_free(order);
		return fail_nomem(r, d);
	}
	for (size_t i = 0; i < f->n; i++) {
		if (f->r[i].compared && !is_const_node(f->r[i].n))
			order[r->ops_compared++] = &f->r[i];
		r->overflow += f->r[i].overflow;
		r->underflow += f->r[i].underflow;
		r->subnormal += f->r[i].subnormal;
		r->nonzero += f->r[i].nonzero;
		r->nonfinite += f->r[i].nonfinite16;
	}
	r->ops_run = f->n;
	r->diverged = f->diverged;
	qsort(order, r->ops_compared, sizeof *order, cmp_added);
	for (size_t i = 0; i < p->n32 && i < p->n16; i++) {
		r->diffs[r->n_diffs] = compare(p->o32[i].name, p->o16[i].t, p->o32[i].t, 1e-2);
		if (r->diffs[r->n_diffs++].n_nan) /* NaN in fp16 where fp32 has a number: broken in fp16 */
			r->pass = false;
	}
	for (size_t i = 0; i < r->ops_compared && i < top; i++)
		r->layers[r->n_layers++] = layer_of(f, order[i]);
	size_t n_flags = 0;
	for (size_t i = 0; i < f->n; i++) {
		const char *what = flag_of(&f->r[i]);
		if (!what || n_flags++ >= max_flags)
			continue;
		r->flags[r->n_flags] = layer_of(f, &f->r[i]);
		r->flags[r->n_flags++].flag = what;
	}
	r->flags_not_listed = n_flags > max_flags ? n_flags - max_flags : 0;
	ali_free(order);
	return AL_OK;
}

static enum al_status fp16_all(struct al_exec_result *r, struct fp16_run *f, al_diags *d)
{
	const struct al_exec_opts *o = r->opts;
	struct priv *p = r->priv;
	struct inputs in = {0};
	enum al_status st = open_model(r, o->model, o->open_a, &p->a, d);
	if (st != AL_OK)
		return st;
	struct al_submodel iface = iface_of(al_model_get(p->a, 0), o->function);
	if ((st = gather_inputs(r, &iface, true, -1, &in, d)) == AL_OK)
		st = gather_states(r, &iface, &in, d);
	f->held = al_values_bytes(in.v, in.n);
	f->max_keep = (o->max_bytes ? o->max_bytes : AL_RUN_MAX_BYTES) / 4;
	if (f->max_keep > FP16_MAX_KEEP)
		f->max_keep = FP16_MAX_KEEP;
	struct al_run_opts ro = {.precision = AL_PREC_FP32, .max_bytes = o->max_bytes, .max_work = o->max_work,
				 .observe = observe32, .observe_ctx = f, .held_bytes = &f->held,
				 .threads = r->threads, .function = o->function};
	if (st == AL_OK)
		st = run_once(r, p->a, o->model, in.v, in.n, &ro, &p->o32, &p->n32, &r->ms, d);
	if (st == AL_OK && f->oom)
		st = fail_subject(r, d, AL_E_NOMEM, "", "out of memory");
	f->held += al_values_bytes(p->o32, p->n32);
	ro.precision = AL_PREC_FP16;
	ro.observe = observe16;
	if (st == AL_OK)
		st = run_once(r, p->a, o->model, in.v, in.n, &ro, &p->o16, &p->n16, &r->ms_b, d);
	inputs_free(&in);
	return st == AL_OK ? fp16_digest(r, f, d) : st;
}

enum al_status al_fp16_compare(const struct al_exec_opts *o, struct al_exec_result **out, al_diags *d)
{
	struct al_exec_result *r = *out = result_new("fp16", o);
	if (!r)
		return AL_E_NOMEM;
	struct fp16_run f = {0};
	enum al_status st = fp16_all(r, &f, d);
	for (size_t i = 0; i < f.n; i++)
		ali_free(f.r[i].v);
	ali_free(f.r);
	return st;
}

const struct al_named_tensor *al_exec_result_values(const struct al_exec_result *r, size_t *n)
{
	*n = r ? r->n_values : 0;
	return r ? r->values : NULL;
}

void al_exec_result_free(struct al_exec_result *r)
{
	if (!r)
		return;
	struct priv *p = r->priv;
	for (size_t i = 0; i < r->n_inputs && r->inputs; i++)
		value_clear(&r->inputs[i]);
	for (size_t i = 0; i < r->n_outputs; i++)
		value_clear(&r->outputs[i]);
	ali_free(r->inputs);
	ali_free(r->outputs);
	ali_free((char *)r->inputs_how);
	ali_free(r->diffs);
	ali_free(r->layers);
	ali_free(r->flags);
	al_outputs_free(r->values, r->n_values);
	if (p) {
		al_outputs_free(p->oa, p->na);
		al_outputs_free(p->ob, p->nb);
		al_outputs_free(p->o32, p->n32);
		al_outputs_free(p->o16, p->n16);
		if (p->a != r->opts->open_a)
			al_model_free(p->a);
		if (p->b != r->opts->open_b)
			al_model_free(p->b);
		ali_free(p);
	}
	ali_free(r);
}

/* ================================================================ JSON */

/* A JSON number, or null for NaN / inf. */
static void put_num(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, "%.9g", v);
	else
		fprintf(out, "null");
}

static void json_diff(FILE *out, const char *name, const struct al_value_diff *df)
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
		fprintf(out, ", \"identical\": %s, \"nan\": %zu", df->identical ? "true" : "false", df->n_nan);
	}
	fprintf(out, ", \"pass\": %s}", df->pass ? "true" : "false");
}

static void json_head(FILE *out, const struct al_exec_result *r, const char *key, const char *path)
{
	fprintf(out, "{\n  \"anelint\": \"%s\",\n  \"schema\": %d,\n  \"command\": \"%s\",\n  \"%s\": ",
		ANELINT_VERSION, ANELINT_JSON_SCHEMA_VERSION, r->command, key);
	al_json_put_string(out, path);
}

static const char *prec_name(enum al_precision p)
{
	return p == AL_PREC_FP16 ? "fp16" : "fp32";
}

static void json_run(FILE *out, const struct al_exec_result *r)
{
	const struct al_exec_opts *o = r->opts;
	json_head(out, r, "model", o->model);
	fprintf(out, ",\n  \"precision\": \"%s\",\n  \"threads\": %d,\n  \"ms\": %.3f", prec_name(o->precision),
		r->threads, r->ms);
	if (o->function) {
		fprintf(out, ",\n  \"function\": ");
		al_json_put_string(out, o->function);
	}
	if (o->steps)
		fprintf(out, ",\n  \"steps\": %llu", (unsigned long long)o->steps);
	fprintf(out, ",\n  \"inputs\": [");
	for (size_t i = 0; i < r->n_inputs; i++) {
		const struct al_exec_value *v = &r->inputs[i];
		fprintf(out, "%s{\"name\": ", i ? ", " : "");
		al_json_put_string(out, v->name);
		fprintf(out, ", \"from\": ");
		al_json_put_string(out, v->from);
		fprintf(out, ", \"shape\": %s}", v->shape);
	}
	fprintf(out, "],\n  \"outputs\": [");
	for (size_t i = 0; i < r->n_outputs; i++) {
		const struct al_exec_value *v = &r->outputs[i];
		fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
		al_json_put_string(out, v->name);
		if (v->step >= 0)
			fprintf(out, ", \"step\": %d", v->step);
		if (v->state)
			fprintf(out, ", \"state\": true");
		fprintf(out, ", \"dtype\": \"%s\", \"shape\": %s, \"summary\": ", al_dtype_name(v->dtype), v->shape);
		al_json_put_string(out, v->summary);
		if (v->has_expect) {
			fprintf(out, ", \"expect\": ");
			json_diff(out, v->name, &v->expect);
		}
		fprintf(out, "}");
	}
	if (r->fail.kind != AL_FAIL_NONE)
		return; /* what was shown before the failure, as the CLI streams it */
	fprintf(out, "\n  ]");
	if (o->repeat)
		fprintf(out, ",\n  \"repeat\": %llu,\n  \"ms_median\": %.3f,\n  \"ms_min\": %.3f",
			(unsigned long long)o->repeat, r->ms_median, r->ms_min);
	fprintf(out, ",\n  \"pass\": %s\n}\n", r->pass ? "true" : "false");
}

static void json_verify(FILE *out, const struct al_exec_result *r)
{
	const struct al_exec_opts *o = r->opts;
	json_head(out, r, "a", o->model);
	fprintf(out, ",\n  \"b\": ");
	al_json_put_string(out, o->model_b);
	fprintf(out, ",\n  \"precision\": \"%s\",\n  \"tol\": %g,\n  \"outputs\": [", prec_name(o->precision), o->tol);
	for (size_t i = 0; i < r->n_diffs; i++) {
		fprintf(out, "%s\n    ", i ? "," : "");
		json_diff(out, r->diffs[i].name, &r->diffs[i]);
	}
	fprintf(out, "\n  ],\n  \"pass\": %s\n}\n", r->pass ? "true" : "false");
}

static void json_layer(FILE *out, const struct al_fp16_layer *l, bool first)
{
	fprintf(out, "%s\n    {\"order\": %zu, \"name\": ", first ? "" : ",", l->order);
	al_json_put_string(out, l->name);
	fprintf(out, ", \"type\": ");
	al_json_put_string(out, l->type);
	if (l->flag) {
		fprintf(out, ", \"flag\": ");
		al_json_put_string(out, l->flag);
		fprintf(out, "}");
		return;
	}
	fprintf(out, ", \"err_in\": ");
	put_num(out, l->err_in);
	fprintf(out, ", \"err_out\": ");
	put_num(out, l->err);
	fprintf(out, ", \"overflow\": %zu, \"underflow\": %zu, \"subnormal\": %zu, \"nonfinite_fp16\": %zu}",
		l->overflow, l->underflow, l->subnormal, l->nonfinite16);
}

static void json_fp16(FILE *out, const struct al_exec_result *r)
{
	json_head(out, r, "model", r->opts->model);
	fprintf(out, ",\n  \"ops_run\": %zu,\n  \"ops_compared\": %zu,\n  \"diverged\": %s,\n  \"outputs\": [",
		r->ops_run, r->ops_compared, r->diverged ? "true" : "false");
	for (size_t i = 0; i < r->n_diffs; i++) {
		fprintf(out, "%s\n    ", i ? "," : "");
		json_diff(out, r->diffs[i].name, &r->diffs[i]);
	}
	fprintf(out, "\n  ],\n  \"values\": {\"nonzero\": %zu, \"overflow\": %zu, \"underflow\": %zu, "
		"\"subnormal\": %zu, \"nonfinite_fp16\": %zu},\n  \"layers\": [",
		r->nonzero, r->overflow, r->underflow, r->subnormal, r->nonfinite);
	for (size_t i = 0; i < r->n_layers; i++)
		json_layer(out, &r->layers[i], i == 0);
	fprintf(out, "\n  ],\n  \"flags\": [");
	for (size_t i = 0; i < r->n_flags; i++)
		json_layer(out, &r->flags[i], i == 0);
	fprintf(out, "\n  ],\n  \"flags_not_listed\": %zu\n}\n", r->flags_not_listed);
}

void al_exec_result_json(FILE *out, const struct al_exec_result *r)
{
	if (strcmp(r->command, "run") == 0)
		json_run(out, r);
	else if (strcmp(r->command, "verify") == 0)
		json_verify(out, r);
	else
		json_fp16(out, r);
}
