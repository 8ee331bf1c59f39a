/* cli.h: what the command line's files share (main.c: options, commands, the
 * check/plan/report commands; run.c: run, verify, fp16). Only the CLI prints. */
#ifndef ANELINT_CLI_H
#define ANELINT_CLI_H

#include "anelint.h"

#include <stdbool.h>
#include <stdio.h>

/* Exit codes (README "Exit codes"). */
enum {
	EXIT_ALL_ANE = 0,  /* every layer/op is predicted to run on the ANE; run/verify: passed */
	EXIT_FALLBACK = 1, /* something falls back (see --fail-on); verify/run --expect: differs */
	EXIT_USAGE = 2,
	EXIT_INVALID = 3,  /* a model file is malformed or unsupported */
	EXIT_IO = 4,       /* a file cannot be read or written */
};

/* Values of an option that may repeat (--input). */
struct cli_list {
	const char **v;
	int n;
};

struct cli {
	const char *format;
	const char *color;
	const char *fail_on;
	const char *target;
	const char *os;
	const char *policy;
	const char *switch_cost;
	const char *max_fixes;
	const char *rules;
	const char *output;
	bool consts;
	bool shapes;
	bool help;
	bool version;
	/* run, verify, fp16 */
	struct cli_list input;
	const char *inputs, *seed, *precision, *out, *expect, *tol, *top, *max_memory, *max_work;
	bool random;
	/* fix */
	const char *allow;
	const char *proof; /* --proof auto|whole|region */
	bool dry_run, in_place;
	/* split: --at (repeats), -o once per part, --pipeline */
	struct cli_list at, outputs;
	const char *pipeline;
	/* compare, calibrate (compare.c) */
	const char *fail_under, *evidence_format, *write_evidence;
	const char **paths;
	int n_paths;
};

struct command_row;
const struct command_row *command(const char *name);
int usage_error(const struct command_row *cmd, const char *fmt, const char *arg);
/* The one way untrusted text reaches stderr (and the CLI's own text lines): a
 * name from a model file, a path or an argument from the command line, a
 * diagnostic's message. Control characters and bidirectional overrides shown as
 * \xNN / \uNNNN, invalid UTF-8 as U+FFFD (the text reports' escaping,
 * al_put_escaped), at most max characters, then an ellipsis. */
#define CLI_NAME_MAX 200 /* a name, a path, an argument */
#define CLI_MSG_MAX 600  /* a library message (the library keeps 511 bytes) */
void put_text(FILE *out, const char *s, size_t max);
/* "anelint: error: SUBJECT: " + fmt (whose arguments are the CLI's own text,
 * e.g. strerror) + newline, SUBJECT (a path, a name) through put_text. */
void error_at(const char *subject, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One line per error diagnostic on stderr. */
void print_errors(const char *path, const al_diags *d);
int status_exit(enum al_status st);
/* --seed (default 1) and --max-memory in bytes (default 0: the library's budget);
 * EXIT_ALL_ANE, or the usage error's exit code. */
/* A non-negative decimal integer, the whole string. */
bool parse_count(const char *s, uint64_t *out);
int run_settings(const struct cli *c, const struct command_row *cmd, uint64_t *seed,
		 uint64_t *max_bytes);
/* Bytes the values of n named tensors take, for al_run_opts.held_bytes: what a
 * command holds while a run goes on shares the run's memory budget. */
/* --max-work in element operations; 0 when not given (the library's default) or
 * invalid (run_settings refuses that with a usage error). */
uint64_t max_work_of(const struct cli *c);
bool want_color(const struct cli *c, int *rc, const struct command_row *cmd);

int cmd_run(struct cli *c);
int cmd_verify(struct cli *c);
int cmd_fp16(struct cli *c);
int cmd_fix(struct cli *c);
int cmd_split(struct cli *c);
int cmd_compare(struct cli *c);
int cmd_calibrate(struct cli *c);
int cmd_probe(struct cli *c);

#endif
