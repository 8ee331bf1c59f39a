/* SPDX-License-Identifier: MIT */
/* output.c: where the command line's output goes and how its errors read. The
 * one escaped way to stderr (put_text, error_at, print_errors), library statuses
 * as exit codes, the report sink and colour an invocation asks for, -o FILE
 * written whole or not at all (the library's atomic writer, al_atomic_file), and the signal guards: a signal removes the -o
 * temporary, a SIGBUS on a model's mapping is one located error. */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void put_text(FILE *out, const char *s, size_t max)
{
	al_put_escaped(out, s, max);
}

void error_at(const char *subject, const char *fmt, ...)
{
	va_list ap;
	fputs("anelint: error: ", stderr);
	put_text(stderr, subject, CLI_NAME_MAX);
	fputs(": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n", stderr);
}

/* One line per error: "anelint: error: FILE: offset N: WHERE (NODE): MESSAGE",
 * every part from the file or the command line escaped and cut (put_text). */
void print_errors(const char *path, const al_diags *d)
{
	bool any = false;
	for (size_t i = 0; i < al_diags_count(d); i++) {
		const struct al_diag *x = al_diags_get(d, i);
		if (x->severity != AL_SEV_ERROR)
			continue;
		any = true;
		fputs("anelint: error: ", stderr);
		put_text(stderr, x->file ? x->file : path, CLI_NAME_MAX);
		if (x->offset != UINT64_MAX)
			fprintf(stderr, ": offset %llu", (unsigned long long)x->offset);
		if (x->where) {
			fputs(": ", stderr);
			put_text(stderr, x->where, CLI_NAME_MAX);
		}
		if (x->node && *x->node) {
			fputs(" (", stderr);
			put_text(stderr, x->node, CLI_NAME_MAX);
			fputs(")", stderr);
		}
		fputs(": ", stderr);
		put_text(stderr, x->msg, CLI_MSG_MAX);
		fputs("\n", stderr);
	}
	if (!any) {
		fputs("anelint: error: ", stderr);
		put_text(stderr, path, CLI_NAME_MAX);
		fputs(": cannot load\n", stderr);
	}
}

int status_exit(enum al_status st)
{
	switch (st) {
	case AL_OK: return EXIT_ALL_ANE;
	case AL_E_IO: return EXIT_IO;
	case AL_E_NOMEM: return EXIT_IO;
	default: return EXIT_INVALID;
	}
}

int worst_exit(int rc, int e)
{
	return e > rc ? e : rc;
}

int model_step_exit(const char *path, al_diags *d, enum al_status st, int rc)
{
	if (st != AL_OK && d)
		print_errors(path, d);
	else if (st != AL_OK)
		fprintf(stderr, "anelint: error: out of memory\n");
	al_diags_free(d);
	return worst_exit(rc, status_exit(st));
}

const struct al_sink *pick_sink(const struct cli *c, const struct command_row *cmd, int *rc)
{
	const struct al_sink *s = NULL;
	char why[160];
	const char *slash = c->output ? strrchr(c->output, '/') : NULL;
	const char *dot = c->output ? strrchr(slash ? slash : c->output, '.') : NULL;
	if (c->format)
		s = al_sink_by_name(c->format);
	else if (!(c->output && (s = al_sink_by_extension(c->output)))) {
		if (dot && dot[1] && dot != (slash ? slash + 1 : c->output)) {
			/* -o report.pdf would be HTML (or text) under a name that says otherwise */
			snprintf(why, sizeof why, "-o: no format writes '%s' files (.html .sarif .md .dot .json "
				 ".txt, or give --format)", dot);
			*rc = usage_error(cmd, "%s", why);
			return NULL;
		}
		s = al_sink_by_name(cmd->bit == C_REPORT ? "html" : "text");
	}
	if (!s) {
		snprintf(why, sizeof why, "unknown format '%s' (%s)", c->format, al_sink_names());
		*rc = usage_error(cmd, "%s", why);
		return NULL;
	}
	/* the reports have no `info`; rules and targets print text or JSON themselves */
	bool has = cmd->bit == C_INFO ? s->info != NULL
		 : cmd->bit == C_PLAN ? s->plan != NULL
		 : cmd->bit == C_CHECK || cmd->bit == C_REPORT ? s->check != NULL
		 : strcmp(s->name, "text") == 0 || strcmp(s->name, "json") == 0;
	if (!has) {
		snprintf(why, sizeof why, "%s has no %s format (text, json)", cmd->name, s->name);
		*rc = usage_error(cmd, "%s", why);
		return NULL;
	}
	return s;
}

bool want_color(const struct cli *c, int *rc, const struct command_row *cmd)
{
	const char *w = c->color ? c->color : "auto";
	if (strcmp(w, "always") == 0)
		return true;
	if (strcmp(w, "never") == 0)
		return false;
	if (strcmp(w, "auto") != 0) {
		*rc = usage_error(cmd, "--color takes auto, always or never, not '%s'", w);
		return false;
	}
	const char *no = getenv("NO_COLOR");
	return !c->output && isatty(STDOUT_FILENO) && !(no && *no);
}

/* -o FILE: the output goes to a temporary file beside FILE, renamed over it when
 * complete, so FILE is never partial; on an error, or a signal, the temporary
 * file is removed and FILE is left as it was. */
static char out_tmp[4096];

static void out_signal(int sig)
{
	if (out_tmp[0])
		unlink(out_tmp);
	signal(sig, SIG_DFL);
	raise(sig);
}

static al_atomic_file *out_file;

/* SIGBUS on a model's mapping: another process truncated the file while it was
 * read (al_mapped_file_at). One line, the -o temporary removed, exit 4, from any
 * thread; only async-signal-safe calls. A fault anywhere else goes back to the
 * previous handler (the default, or a sanitizer's) and repeats there. */
static struct sigaction bus_previous;

static void bus_write(const char *s)
{
	size_t n = strlen(s);
	while (n) {
		ssize_t k = write(STDERR_FILENO, s, n);
		if (k <= 0)
			return;
		s += k, n -= (size_t)k;
	}
}

static void on_sigbus(int sig, siginfo_t *info, void *uc)
{
	(void)uc;
	const char *file = info ? al_mapped_file_at(info->si_addr) : NULL;
	if (!file) {
		sigaction(sig, &bus_previous, NULL);
		return;
	}
	if (out_tmp[0])
		unlink(out_tmp);
	bus_write("anelint: error: ");
	bus_write(file);
	bus_write(": the file shrank while it was being read (changed by another process?)\n");
	_exit(EXIT_IO);
}

void guard_mappings(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &bus_previous);
}

FILE *out_open(const char *path)
{
	if (strlen(path) + 16 > sizeof out_tmp) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	signal(SIGINT, out_signal);
	signal(SIGTERM, out_signal);
	signal(SIGHUP, out_signal);
	FILE *f;
	if (!(out_file = al_atomic_file_open(path, &f)))
		return NULL; /* errno from the create */
	snprintf(out_tmp, sizeof out_tmp, "%s", al_atomic_file_temp(out_file));
	return f;
}

/* Finish (ok) or abandon the output; false, with errno, when it could not be written. */
bool out_close(FILE *f, const char *path, bool ok)
{
	if (f == stdout)
		return ok && fflush(stdout) == 0 && !ferror(stdout);
	bool good = al_atomic_file_close(out_file, f, ok);
	int e = errno;
	out_file = NULL;
	out_tmp[0] = 0;
	errno = e;
	return good;
}

/* The output guard (al_output_check) for one path the command writes, against
 * every file it reads: the models (directories already expanded), --rules,
 * --config, --baseline, --evidence. EXIT_ALL_ANE, or EXIT_USAGE after one
 * line naming both. */
int guard_output(const struct cli *c, const char *out, unsigned flags)
{
	if (!out)
		return EXIT_ALL_ANE;
	size_t n = 0, cap = (size_t)c->n_paths + (size_t)c->evidence.n + 3;
	const char **in = calloc(cap, sizeof *in);
	al_diags *d = al_diags_new();
	if (!in || !d) {
		free(in);
		al_diags_free(d);
		return EXIT_IO;
	}
	for (int i = 0; i < c->n_paths; i++)
		in[n++] = c->paths[i];
	for (int i = 0; i < c->evidence.n; i++)
		in[n++] = c->evidence.v[i];
	const char *more[] = {c->rules, c->config, c->baseline};
	for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
		if (more[i])
			in[n++] = more[i];
	enum al_status st = al_output_check(out, in, n, flags, d);
	if (st != AL_OK)
		print_errors(out, d);
	free(in);
	al_diags_free(d);
	return st == AL_OK ? EXIT_ALL_ANE : st == AL_E_INVALID_ARG ? EXIT_USAGE : status_exit(st);
}

int print_failure(const struct command_row *cmd, const struct al_failure *f, const al_diags *d)
{
	switch (f ? f->kind : AL_FAIL_NONE) {
	case AL_FAIL_OPTION:
		return usage_error(cmd, f->fmt, f->arg);
	case AL_FAIL_MISSING_INPUT:
		fputs("anelint: error: no value for input '", stderr);
		put_text(stderr, f->subject, CLI_NAME_MAX);
		fprintf(stderr, "' (%s); give --input ", f->arg);
		put_text(stderr, f->subject, CLI_NAME_MAX);
		fputs("=FILE.npy, --inputs DIR or --random\n", stderr);
		return EXIT_USAGE;
	case AL_FAIL_DUPLICATE: /* a refusal rather than a syntax error: one line, no hint */
		fputs("anelint: error: ", stderr);
		put_text(stderr, f->subject, CLI_NAME_MAX);
		fputs(" is named twice as an output\n", stderr);
		return EXIT_USAGE;
	case AL_FAIL_SUBJECT:
		if (f->subject[0])
			error_at(f->subject, "%s", f->msg);
		else
			fprintf(stderr, "anelint: error: %s\n", f->msg);
		break;
	case AL_FAIL_DIAGS:
		print_errors(f->subject, d);
		break;
	default:
		fprintf(stderr, "anelint: error: out of memory\n");
		return EXIT_IO;
	}
	return f->status == AL_E_INVALID_ARG ? EXIT_USAGE : status_exit(f->status);
}
