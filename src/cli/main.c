/* SPDX-License-Identifier: MIT */
/* main.c: the anelint command line: the table of subcommands and main(), which
 * runs one. The CLI's files, by concern (their declarations in cli.h):
 *   args.c      the option table, parse_args, usage, usage_error
 *   output.c    errors on stderr, exit codes, the sink, -o FILE, signal guards
 *   settings.c  option values -> the library's check / plan options
 *   pipeline.c  check, info, plan, report: load, analyse, write, exit code
 *   catalog.c   rules, explain, targets
 *   help.c      the man page and the shell completions
 *   ci.c        configuration, rule selection, baselines, directories
 *   run.c, fix.c, split.c, compare.c, probe.c: the other commands.
 * This is the only code that prints or exits; it includes only cli.h and anelint.h
 * and calls only the public API (tests/architecture.py checks both). Exit codes:
 * cli.h, README "Exit codes". */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

const struct command_row commands[] = {
	{"check", C_CHECK, cmd_check, 1, -1, "check [options] MODEL...",
	 "predict for every layer/op whether the ANE runs it, with rule ids and reasons"},
	{"info", C_INFO, cmd_info, 1, -1, "info [options] MODEL...",
	 "describe a model: type, spec version and minimum OS, inputs/outputs, layers, weights, metadata"},
	{"plan", C_PLAN, cmd_plan, 1, -1, "plan [options] MODEL...",
	 "predict how Core ML splits each model into ANE/GPU/CPU segments, what the switches cost "
	 "(estimates), and the cheapest rewrites that merge segments"},
	{"report", C_REPORT, cmd_report, 1, -1, "report [options] MODEL... [-o FILE]",
	 "write a report: a self-contained HTML page (default), SARIF for code scanning, a Markdown "
	 "summary or a Graphviz graph (docs/reports.md)"},
	{"rules", C_RULES, cmd_rules, 0, 0, "rules [--format FMT] [--rules FILE]",
	 "list every rule, one line each"},
	{"explain", C_EXPLAIN, cmd_explain, 1, -1, "explain [--rules FILE] RULE...",
	 "show one rule: what, why, evidence, confidence, what to do"},
	{"targets", C_TARGETS, cmd_targets, 0, 0, "targets [--format FMT]",
	 "list the chip families --target takes, with their roofline figures, and the OS releases --os takes"},
	{"run", C_RUN, cmd_run, 1, 1, "run [options] MODEL",
	 "run the model on Linux in the reference interpreter (fp32, or ANE-like fp16)"},
	{"verify", C_VERIFY, cmd_verify, 2, 2, "verify [options] MODEL_A MODEL_B",
	 "run two models on the same inputs and compare every output"},
	{"fix", C_FIX, cmd_fix, 1, 1, "fix [options] MODEL -o OUT",
	 "rewrite a model (NeuralNetwork, or an ML Program package) so more of it runs on the ANE, prove "
	 "each rewrite in the interpreter, and report before -> after (docs/surgery.md)"},
	{"split", C_SPLIT, cmd_split, 1, 1, "split MODEL --at LAYER -o P1 -o P2",
	 "cut a NeuralNetwork model (or an ML Program package) after a layer into two models (or "
	 "--pipeline OUT), the boundary tensors typed from inferred shapes; proved in the interpreter "
	 "(docs/split.md)"},
	{"compare", C_COMPARE, cmd_compare, 1, -1, "compare [options] MODEL EVIDENCE...",
	 "line up what a Mac observed (analytics.mil, .mlperf, compute plan dumps, os_log, anelint "
	 "evidence JSON) with the prediction: agreement, confusion, disagreements (docs/evidence.md)"},
	{"calibrate", C_CALIBRATE, cmd_calibrate, 2, -1, "calibrate [options] MODEL EVIDENCE... -o RULES",
	 "write a --rules file that makes check agree with the evidence for its chip and release"},
	{"probe", C_PROBE, cmd_probe, 0, 0, "probe -o DIR",
	 "write a small probe model for every uncertain rule, threshold and layer kind, a manifest of "
	 "what each decides and a capture script for a Mac (docs/evidence.md)"},
	{"fp16", C_FP16, cmd_fp16, 1, 1, "fp16 [options] MODEL",
	 "run fp32 and ANE-like fp16 side by side: which layers overflow, underflow or lose precision; "
	 "exit 1 when an output is NaN in fp16 but not in fp32"},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])
const size_t n_commands = N_COMMANDS;

const struct command_row *command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr, NULL);
		return EXIT_USAGE;
	}
	/* nothing here uses OpenBLAS's own threads (run splits its products over the
	 * interpreter's pool): a no-op since the interpreter loads OpenBLAS itself,
	 * at its first product, and stops them then (src/interp/kernels.c) */
	al_blas_release_threads();
	const char *name = argv[1];
	if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
		printf("anelint %s (JSON schema %d)\n", ANELINT_VERSION, ANELINT_JSON_SCHEMA_VERSION);
		return EXIT_ALL_ANE;
	}
	if (strcmp(name, "--help-man") == 0) /* make install: the man page */
		return print_man(stdout);
	if (strcmp(name, "--completion") == 0) /* make install: bash, zsh, fish */
		return print_completion(stdout, argc > 2 ? argv[2] : "");
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
		const struct command_row *only = NULL;
		for (size_t i = 0; argc > 2 && i < N_COMMANDS; i++)
			if (strcmp(commands[i].name, argv[2]) == 0)
				only = &commands[i];
		usage(stdout, only);
		return EXIT_ALL_ANE;
	}
	const struct command_row *cmd = NULL;
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			cmd = &commands[i];
	if (!cmd) {
		const char *names[N_COMMANDS];
		for (size_t i = 0; i < N_COMMANDS; i++)
			names[i] = commands[i].name;
		const char *near = ci_nearest(name, names, N_COMMANDS);
		char msg[96];
		snprintf(msg, sizeof msg, "unknown command '%%s'%s%s%s", near ? " (did you mean '" : "",
			 near ? near : "", near ? "'?)" : "");
		return usage_error(NULL, msg, name);
	}
	struct cli c = {0};
	guard_mappings();
	int rc = parse_args(&c, cmd, argc, argv, 2);
	al_set_durable_writes(c.fsync);
	if (rc == EXIT_ALL_ANE) {
		if (c.help) {
			usage(stdout, cmd);
		} else if (c.n_paths < cmd->min_paths) {
			rc = usage_error(cmd, "%s needs an argument", cmd->name);
		} else if (cmd->max_paths >= 0 && c.n_paths > cmd->max_paths) {
			rc = usage_error(cmd, "unexpected argument '%s'", c.paths[cmd->max_paths]);
		} else {
			rc = cmd->run(&c);
		}
	}
	free(c.paths);
	free(c.input.v);
	free(c.at.v);
	free(c.outputs.v);
	free(c.select.v);
	free(c.ignore.v);
	free(c.shape.v);
	free(c.enumerate.v);
	free(c.state.v);
	free(c.evidence.v);
	free(c.allow.v);
	return rc;
}
