/* SPDX-License-Identifier: MIT */
/* cli.h: what the command line's files share, by the file that defines it (main.c
 * lists the files and what each holds). Only the CLI prints. */
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
	const char *compute_units;
	const char *policy;
	const char *switch_cost;
	const char *max_fixes;
	const char *rules;
	const char *output;
	bool consts;
	bool fsync;
	bool shapes;
	bool help;
	bool version;
	/* run, verify, fp16 */
	struct cli_list input;
	const char *inputs, *seed, *precision, *out, *expect, *tol, *top, *max_memory, *max_work;
	bool random;
	/* stateful and multifunction models, timing (run.c) */
	struct cli_list state;
	const char *steps, *function, *repeat, *threads;
	/* fix */
	struct cli_list allow; /* --allow CLASS[,CLASS] (repeats: the highest class given) */
	const char *proof; /* --proof auto|whole|region */
	const char *max_rounds, *tolerance; /* --max-rounds N, --tolerance X */
	bool dry_run, in_place;
	struct cli_list shape, enumerate; /* --shape NAME=D1,D2,...|default, --enumerate NAME=S1;S2 */
	/* split: --at (repeats), -o once per part, --pipeline */
	struct cli_list at, outputs;
	const char *pipeline;
	/* check, plan, report in CI (ci.c): --select/--ignore (repeat; comma lists),
	 * --config/--no-config, --baseline/--write-baseline, --all, --base */
	struct cli_list select, ignore;
	const char *config, *baseline, *write_baseline, *base;
	bool no_config, all;
	/* compare, calibrate (compare.c) */
	const char *fail_under, *evidence_format, *write_evidence;
	struct cli_list evidence; /* report --evidence FILE (repeats) */
	const char **paths;
	int n_paths;
};

/* The option table (args.c) and the command table (main.c): which subcommands
 * take an option, one bit each. */
enum cmd_bit {
	C_CHECK = 1, C_INFO = 2, C_RULES = 4, C_EXPLAIN = 8, C_PLAN = 16, C_TARGETS = 32,
	C_RUN = 64, C_VERIFY = 128, C_FP16 = 256, /* run.c */
	C_REPORT = 512, C_FIX = 1024, /* fix.c */ C_SPLIT = 2048, /* split.c */
	C_COMPARE = 4096, C_CALIBRATE = 8192, /* compare.c */ C_PROBE = 16384, /* probe.c */ C_ALL = 32767
};

struct option_row {
	const char *name;  /* long name, without "--" */
	char short_name;   /* 0 if none */
	const char *arg;   /* metavariable, or NULL for a flag */
	unsigned cmds;     /* which subcommands take it */
	size_t offset;     /* field in struct cli: const char * for args, bool for flags,
			    * struct cli_list for options that may repeat (repeats()) */
	const char *help;
};

struct command_row {
	const char *name;  /* subcommand */
	enum cmd_bit bit;
	int (*run)(struct cli *c);
	int min_paths, max_paths;
	const char *usage;
	const char *help;
};

/* main.c: the command table, n_commands rows; the row of a command by name. */
extern const struct command_row commands[];
extern const size_t n_commands;
const struct command_row *command(const char *name);

/* args.c: the option table, n_options rows */
extern const struct option_row options[];
extern const size_t n_options;
/* Parse argv[first..] into c; returns EXIT_ALL_ANE or EXIT_USAGE. */
int parse_args(struct cli *c, const struct command_row *cmd, int argc, char **argv, int first);
/* The usage of every command, or of one (only). */
void usage(FILE *out, const struct command_row *only);
/* "anelint: " + fmt (one "%s": arg, through put_text) + newline, then "try
 * 'anelint CMD --help'" on stderr; EXIT_USAGE. */
int usage_error(const struct command_row *cmd, const char *fmt, const char *arg);

/* help.c: the man page (--help-man) and a shell's completion (--completion SHELL)
 * on out, from the two tables; the exit code. */
int print_man(FILE *out);
int print_completion(FILE *out, const char *shell);

/* output.c */
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
/* Why a command of the library stopped (run, verify, fp16, split: its al_failure), as the
 * CLI has always said it; the exit code. */
int print_failure(const struct command_row *cmd, const struct al_failure *f, const al_diags *d);
int status_exit(enum al_status st);
/* The worse of two exit codes, the one to keep: errors dominate findings, and
 * among errors an I/O error (4) dominates an invalid model (3). */
int worst_exit(int rc, int e);
/* How one step on a model ends (al_model_check, al_report_analyze, a comparison
 * ...) that had diagnostics d of its own (NULL: none could be made, st is
 * AL_E_NOMEM): when st is an error, the errors on stderr (d's, or "out of
 * memory"); d freed; the worse of rc and st's exit code. */
int model_step_exit(const char *path, al_diags *d, enum al_status st, int rc);
/* The report sink --format (else -o FILE's extension; else text, or html for
 * report) names, if cmd prints that format; NULL after a usage error in *rc. */
const struct al_sink *pick_sink(const struct cli *c, const struct command_row *cmd, int *rc);
bool want_color(const struct cli *c, int *rc, const struct command_row *cmd);
/* -o FILE: written to a temporary file beside FILE that out_close(f, path, true)
 * renames over it, so FILE is never partial (a signal, or ok false, removes the
 * temporary); out_close of stdout flushes it. false, with errno, when not written. */
FILE *out_open(const char *path);
bool out_close(FILE *f, const char *path, bool ok);
/* The library's output guard for a path the command writes (AL_OUTPUT_* flags):
 * EXIT_ALL_ANE, or EXIT_USAGE after one line naming it and the input it would
 * destroy. */
int guard_output(const struct cli *c, const char *out, unsigned flags);
/* A SIGBUS on a model's mapping (the file shrank while read): one line naming
 * the file, the -o temporary removed, exit 4. */
void guard_mappings(void);

/* settings.c */
/* A non-negative decimal integer, the whole string. */
bool parse_count(const char *s, uint64_t *out);
/* --seed (default 1) and --max-memory in bytes (default 0: the library's budget);
 * EXIT_ALL_ANE, or the usage error's exit code. */
int run_settings(const struct cli *c, const struct command_row *cmd, uint64_t *seed,
		 uint64_t *max_bytes);
/* --max-work in element operations; 0 when not given (the library's default) or
 * invalid (run_settings refuses that with a usage error). */
uint64_t max_work_of(const struct cli *c);
/* What the options of a run turn into: library options and loaded rules. */
struct run {
	struct al_check_opts check;
	struct al_plan_opts plan;
	al_user_rules *rules;
	/* --target, --os, --compute-units (al_where_parse): all of one, or lists
	 * (--target a17,m1 --os ios17,ios18, or the configuration's) as the cross product */
	struct al_where_spec where;
};
/* How al_where_parse's error d reads on the command line (one line, then where
 * to look); EXIT_USAGE. */
int where_error(const struct command_row *cmd, const al_diags *d);
/* Turn --target, --os, --compute-units, --rules, --policy, --switch-cost,
 * --max-fixes into r (r->rules: free with al_user_rules_free); EXIT_ALL_ANE, or
 * the exit code of the usage (or rules file) error it printed. */
int prepare(struct cli *c, const struct command_row *cmd, struct run *r);
/* Whether r makes more than one verdict column (all, or lists). */
bool run_is_multi(const struct run *r);

/* ci.c: configuration, rule selection, accepted findings, baselines, directories */
struct ci;
int ci_setup(struct cli *c, struct ci **out);
void ci_free(struct ci *ci);
int ci_expand_paths(struct ci *ci, struct cli *c);
/* EXIT_INVALID when a directory argument had subdirectories too deep to search
 * (each named in a warning): the run must not pass over models it did not check. */
int ci_unsearched_exit(const struct ci *ci);
int ci_selection(struct ci *ci, const struct cli *c, const struct command_row *cmd, struct al_check_opts *check);
const char *ci_accepted(void *ctx, const struct al_submodel *s, const char *layer, const struct al_rule *r,
			const char **kind);
bool ci_accepts_anything(struct ci *ci, const struct al_report_item *items, int n);
int ci_fail_on(const struct ci *ci, const char *path, int fail_on);
/* c with the [[model]] settings that match path (target, os, compute_units,
 * policy; the command line wins) in *out; true when the model has check or plan
 * settings of its own (a selection included); *line: of its target/os key. */
bool ci_model_cli(const struct ci *ci, const char *path, const struct cli *c, struct cli *out, uint32_t *line);
/* The rule selection of the last [[model]] with one that matches path, into check. */
void ci_model_selection(struct ci *ci, const char *path, struct al_check_opts *check);
/* The configuration's information_uri, or NULL. */
const char *ci_information_uri(const struct ci *ci);
/* The configuration file's path (messages), or NULL. */
const char *ci_config_path(const struct ci *ci);
int ci_write_baseline(struct ci *ci, const char *path, const struct al_report_item *items, int n);
/* The same a model at a time: begin (NULL: out of memory, printed), add each
 * item (the model may be freed after), end (writes when `write`; frees). */
struct ci_baseline_writer;
struct ci_baseline_writer *ci_baseline_begin(struct ci *ci, const char *path);
void ci_baseline_add(struct ci_baseline_writer *b, const struct al_report_item *it);
int ci_baseline_end(struct ci_baseline_writer *b, bool write);
/* The candidate within a small edit distance of s ("did you mean"), or NULL. */
const char *ci_nearest(const char *s, const char *const *cands, size_t n);
/* "did you mean 'X'? (see 'anelint rules')" and a newline, on stderr. */
void ci_rule_hint(const char *token, const al_user_rules *u);
/* --threads N (default: every online core); 0 after a usage error in *rc. */
int threads_of(const struct cli *c, const struct command_row *cmd, int *rc);

int cmd_check(struct cli *c);   /* pipeline.c */
int cmd_info(struct cli *c);
int cmd_plan(struct cli *c);
int cmd_report(struct cli *c);
int cmd_rules(struct cli *c);   /* catalog.c */
int cmd_explain(struct cli *c);
int cmd_targets(struct cli *c);
int cmd_run(struct cli *c);
int cmd_verify(struct cli *c);
int cmd_fp16(struct cli *c);
int cmd_fix(struct cli *c);
int cmd_split(struct cli *c);
int cmd_compare(struct cli *c);
int cmd_calibrate(struct cli *c);
/* report --evidence: al_report_compare for every loaded model of items; the worst
 * of rc and the exit codes of the evidence files (their errors printed). */
struct al_report_item;
int report_evidence(const struct cli *c, struct al_report_item *items, const struct al_check_opts *check, int rc);
int cmd_probe(struct cli *c);

#endif
