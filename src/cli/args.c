/* SPDX-License-Identifier: MIT */
/* args.c: the command line's words. One table of options (long and short name,
 * metavariable, the commands that take it, its field in struct cli, its help)
 * parses argv (parse_args: --name VALUE, --name=VALUE, -xVALUE, repeats, "--")
 * and writes the usage (--help, CMD --help; help.c writes the man page and the
 * completions from it); a word it does not know is a usage error with a "did you
 * mean". */
#include "cli.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Options whose values are kept in a struct cli_list, each use appending one:
 * always (--input, --at), or for some commands only (split's -o). NULL: not. */
static struct cli_list *repeats(struct cli *c, const struct option_row *o, unsigned cmd);

#define OPT_FIELD(f) offsetof(struct cli, f)
const struct option_row options[] = {
	{"format", 'f', "FMT", C_COMPARE | C_CHECK | C_INFO | C_RULES | C_PLAN | C_TARGETS | C_RUN | C_VERIFY | C_FP16 | C_REPORT | C_FIX | C_SPLIT, OPT_FIELD(format),
	 "output format: text (default) or json; check, plan and report also take the reports html, github (Actions annotations), "
	 "sarif, markdown and dot (report's default: html, or the one -o FILE's extension names); "
	 "info also takes mil (every ML Program as MIL text)"},
	{"target", 't', "ID", C_CHECK | C_PLAN | C_REPORT | C_FIX | C_COMPARE | C_CALIBRATE, OPT_FIELD(target),
	 "chip family to predict for (see 'anelint targets'; default a14), or all: one verdict "
	 "column (check) or one plan (plan) per family; check, plan and report also take a comma list "
	 "(a17,m1), with an --os list the cross product (docs/configuration.md)"},
	{"os", 0, "RELEASE", C_CHECK | C_PLAN | C_REPORT | C_FIX | C_COMPARE | C_CALIBRATE, OPT_FIELD(os),
	 "OS release to predict for: ios13 ... ios18, ios26, ios27, or the same release by another "
	 "platform's name (macos14 = ios17, macos15 = ios18, macos26 = ios26, watchos10, visionos2, "
	 "...); default: the newest (see 'anelint targets'); check, plan and report also take all: one "
	 "verdict column (check) or one plan (plan) per release, for one target, or a comma list "
	 "(ios17,ios18)"},
	{"compute-units", 0, "UNITS", C_CHECK | C_PLAN | C_REPORT | C_FIX | C_COMPARE | C_CALIBRATE, OPT_FIELD(compute_units),
	 "the compute units the model is loaded with (MLModelConfiguration.computeUnits): all "
	 "(default), cpu-and-gpu, cpu-and-ne, cpu-only; with all, an ML Program's fallbacks go to "
	 "the GPU from iOS 17 (docs/partition.md)"},
	{"rules", 0, "FILE", C_COMPARE | C_CALIBRATE | C_CHECK | C_PLAN | C_RULES | C_EXPLAIN | C_REPORT | C_SPLIT, OPT_FIELD(rules),
	 "add the rules in FILE to the built-in ones, or override them (docs/rules-file.md)"},
	{"policy", 0, "NAME", C_PLAN | C_REPORT, OPT_FIELD(policy),
	 "how Core ML is assumed to partition: auto (default: nn2020 for NeuralNetwork, mlprogram "
	 "for ML Program), nn2020, mlprogram, optimistic (docs/partition.md)"},
	{"switch-cost", 0, "LIST", C_PLAN | C_REPORT, OPT_FIELD(switch_cost),
	 "cost of a switch between units in microseconds, e.g. ane-cpu=700,ane-gpu=1200 (both "
	 "directions; ane>cpu=700 one direction; a bare number sets all)"},
	{"max-fixes", 0, "N", C_PLAN | C_REPORT, OPT_FIELD(max_fixes), "list at most N cheapest fixes (1-64, default 5)"},
	{"fail-on", 0, "WHEN", C_CHECK | C_PLAN | C_REPORT, OPT_FIELD(fail_on),
	 "exit 1 when work falls back (verdict not_ane) to: any (default), cpu, gpu, or never; uncertain: also when a verdict is uncertain"},
	{"color", 0, "WHEN", C_CHECK | C_INFO | C_PLAN, OPT_FIELD(color),
	 "colour the text output: auto (default, when stdout is a terminal and NO_COLOR is unset), always, never"},
	{"consts", 0, NULL, C_CHECK, OPT_FIELD(consts), "list ML Program const ops in the text table"},
	{"shapes", 0, NULL, C_CHECK, OPT_FIELD(shapes), "add the inferred shape of each layer/op's first output and its cost in FLOPs (? when a shape it needs is unknown)"},
	{"output", 'o', "FILE", C_COMPARE | C_CALIBRATE | C_PROBE | C_CHECK | C_INFO | C_PLAN | C_REPORT | C_FIX | C_SPLIT, OPT_FIELD(output),
	 "write to FILE instead of stdout (complete or not at all: a temporary file in its directory, "
	 "renamed at the end); without --format its extension picks one: .html .sarif .md .dot .json .txt; "
	 "split: once per part, in order"},
	{"input", 'i', "NAME=FILE", C_RUN | C_VERIFY | C_FP16, OPT_FIELD(input),
	 "an input from a .npy file (repeat for each input)"},
	{"inputs", 0, "DIR", C_RUN | C_VERIFY | C_FP16 | C_FIX | C_SPLIT, OPT_FIELD(inputs),
	 "read each input NAME from DIR/NAME.npy"},
	{"random", 0, NULL, C_RUN | C_VERIFY | C_FP16, OPT_FIELD(random),
	 "draw the inputs not given from the declared shapes (uniform [0,1), images 0-255)"},
	{"seed", 0, "N", C_RUN | C_VERIFY | C_FP16 | C_FIX | C_SPLIT, OPT_FIELD(seed),
	 "seed of the inputs drawn at random (default 1): run, verify and fp16 with --random; fix and split "
	 "for the inputs their proof draws when --inputs is not given"},
	{"max-memory", 0, "MB", C_RUN | C_VERIFY | C_FP16 | C_FIX | C_SPLIT, OPT_FIELD(max_memory),
	 "stop a run whose inputs and live values would take more than MB megabytes (default 2048)"},
	{"max-work", 0, "N", C_RUN | C_VERIFY | C_FP16 | C_FIX | C_SPLIT, OPT_FIELD(max_work),
	 "stop a run that would do more than N element operations (values written plus a quarter per multiply-add; "
	 "e.g. 1e9; default 4x the model's estimate, 1e10 to 1e11), so a loop that does not end stops by itself"},
	{"precision", 'p', "P", C_RUN | C_VERIFY, OPT_FIELD(precision),
	 "fp32 (default: reference numerics) or fp16 (ANE-like: docs/interpreter.md)"},
	{"out", 0, "DIR", C_RUN, OPT_FIELD(out), "write each output (and final state) to DIR/NAME.npy; with --steps, DIR/stepK_NAME.npy"},
	{"fsync", 0, NULL, C_COMPARE | C_CALIBRATE | C_PROBE | C_CHECK | C_INFO | C_PLAN | C_REPORT | C_FIX | C_SPLIT | C_RUN, OPT_FIELD(fsync),
	 "flush every output file to the device (fsync) before renaming it into place, so a power loss "
	 "cannot leave an empty or partial file either (outputs are always written to a temporary and "
	 "renamed, so an interrupted run leaves none; without this, as for cp, the device gets the data "
	 "later)"},
	{"state", 0, "NAME=FILE", C_RUN | C_VERIFY | C_FP16, OPT_FIELD(state),
	 "a stateful model's initial state from a .npy file (repeat for each state; default zeros)"},
	{"steps", 0, "N", C_RUN, OPT_FIELD(steps),
	 "call a stateful model N times, the state carried over; step K reads DIR/stepK_NAME.npy from --inputs when present"},
	{"function", 0, "NAME", C_CHECK | C_INFO | C_PLAN | C_REPORT | C_RUN | C_VERIFY | C_FP16 | C_FIX | C_SPLIT, OPT_FIELD(function),
	 "the function of a multifunction ML Program to run or show (default: the one the description names); "
	 "fix: the one to rewrite (the others are written as they were); split: the one to cut"},
	{"repeat", 0, "N", C_RUN, OPT_FIELD(repeat),
	 "after one warm-up run, run N more times and print the median and minimum wall time"},
	{"threads", 0, "N", C_RUN | C_VERIFY | C_FP16 | C_FIX, OPT_FIELD(threads),
	 "threads of the interpreter and of BLAS (default: every core)"},
	{"expect", 0, "DIR", C_RUN, OPT_FIELD(expect),
	 "compare each output with DIR/NAME.npy; exit 1 when one differs beyond --tol"},
	{"tol", 0, "T", C_RUN | C_VERIFY, OPT_FIELD(tol),
	 "pass when max|a-b| <= T * max|b| per output (default 1e-4; 0 = bit-identical)"},
	{"top", 0, "N", C_FP16, OPT_FIELD(top), "list the N layers that add the most fp16 error (default 10), and at most N "
	 "flagged layers (default 200)"},
	{"dry-run", 0, NULL, C_FIX, OPT_FIELD(dry_run), "fix: report the rewrites and their proof, write nothing"},
	{"allow", 0, "CLASS", C_FIX, OPT_FIELD(allow),
	 "fix: also apply rewrites of this equivalence class: reassociate (same maths, rounded "
	 "differently), approximate (changes results, within --tolerance); default exact only; "
	 "a comma list or repeated: the highest class given"},
	{"tolerance", 0, "X", C_FIX, OPT_FIELD(tolerance),
	 "fix: the largest relative difference (max|diff| / max|ref| per output) an approximate rewrite "
	 "may make (default 1e-2); one that exceeds it, or makes an output all zeros or infinite, is refused"},
	{"max-rounds", 0, "N", C_FIX, OPT_FIELD(max_rounds),
	 "fix: apply the passes again to the result, each round proved, until nothing more applies or N "
	 "rounds ran (1-64, default 8)"},
	{"in-place", 0, NULL, C_FIX, OPT_FIELD(in_place), "fix: allow -o to name the input (replaced by rename, after an fsync as with --fsync)"},
	{"proof", 0, "KIND", C_FIX, OPT_FIELD(proof),
	 "fix: how the rewrites are proved: auto (default: the whole models when cheap or with "
	 "--inputs, else the rewritten region), whole, or region (docs/surgery.md)"},
	{"shape", 0, "NAME=DIMS", C_FIX, OPT_FIELD(shape),
	 "fix: give the flexible multi-array or image input NAME one fixed shape, e.g. x=1,3,224,224 "
	 "(an image: H,W), or "
	 "x=default (its default shape); it must be a shape the input accepts (repeat per input)"},
	{"enumerate", 0, "NAME=SHAPES", C_FIX, OPT_FIELD(enumerate),
	 "fix: replace the shape range of input NAME by enumerated shapes inside it, e.g. "
	 "'x=1,64,64;1,128,64' (the first is the default; at most 128)"},
	{"at", 0, "LAYER", C_SPLIT, OPT_FIELD(at),
	 "split: cut after this top-level layer, named or by the index check shows (repeat for more "
	 "cuts), or 'segments': at every "
	 "change of predicted unit (docs/split.md)"},
	{"pipeline", 0, "FILE", C_SPLIT, OPT_FIELD(pipeline), "split: write the parts as one pipeline model"},
	{"select", 0, "RULES", C_CHECK | C_PLAN | C_REPORT, OPT_FIELD(select),
	 "evaluate only these rules: ids, id prefixes (ANE0) or names, comma-separated (repeat to add)"},
	{"ignore", 0, "RULES", C_CHECK | C_PLAN | C_REPORT, OPT_FIELD(ignore),
	 "do not evaluate these rules (ids, prefixes or names; after --select): as if switched off"},
	{"config", 0, "FILE", C_CHECK | C_PLAN | C_REPORT, OPT_FIELD(config),
	 "read the configuration from FILE (default: anelint.toml or .anelint.toml, searched upward from "
	 "the first model, then from the working directory; docs/configuration.md)"},
	{"no-config", 0, NULL, C_CHECK | C_PLAN | C_REPORT, OPT_FIELD(no_config), "read no configuration file"},
	{"baseline", 0, "FILE", C_CHECK | C_PLAN | C_REPORT, OPT_FIELD(baseline),
	 "accept the findings recorded in FILE: only new ones fail (shown as suppressed in JSON and SARIF)"},
	{"write-baseline", 0, "FILE", C_CHECK | C_PLAN | C_REPORT, OPT_FIELD(write_baseline),
	 "record the current findings (model, layer, rule) in FILE for --baseline; exits 0 when written"},
	{"all", 0, NULL, C_CHECK, OPT_FIELD(all),
	 "list every layer/op in the text table (default: those that fall back or carry a finding)"},
	{"base", 0, "DIR", C_CHECK | C_REPORT, OPT_FIELD(base),
	 "SARIF: artifact paths relative to DIR (uriBaseId SRCROOT), e.g. the repository's root"},
	{"fail-under", 0, "PCT", C_COMPARE, OPT_FIELD(fail_under),
	 "compare: exit 1 when the agreement with the evidence is under PCT percent"},
	{"evidence", 0, "FILE", C_REPORT, OPT_FIELD(evidence),
	 "report: add what a Mac observed (FILE: any evidence format compare reads) against the prediction, "
	 "per model: agreement, confusion table, disagreements, per-rule record (repeat for more files)"},
	{"evidence-format", 0, "FMT", C_COMPARE | C_CALIBRATE | C_REPORT, OPT_FIELD(evidence_format),
	 "read the evidence as json, mil (analytics.mil), plan (MLComputePlan dump), mlperf "
	 "(report.json), oslog or placement (compute placement counts); default auto: told apart by content (docs/evidence.md)"},
	{"write-evidence", 0, "FMT", C_COMPARE, OPT_FIELD(write_evidence),
	 "compare: write the model's prediction as evidence in FMT (json, mil, plan, mlperf, oslog, placement)"},
	{"help", 'h', NULL, C_ALL, OPT_FIELD(help), "show help"},
};
#define N_OPTIONS (sizeof options / sizeof options[0])
const size_t n_options = N_OPTIONS;

void usage(FILE *out, const struct command_row *only)
{
	fprintf(out, "anelint %s: will my Core ML model run on the Apple Neural Engine?\n\n", ANELINT_VERSION);
	fprintf(out, "usage:\n");
	for (size_t i = 0; i < n_commands; i++)
		if (!only || only == &commands[i])
			fprintf(out, "  anelint %-36s %s\n", commands[i].usage, commands[i].help);
	fprintf(out, "  anelint --version\n\noptions:\n");
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct option_row *o = &options[i];
		if (only && !(o->cmds & only->bit))
			continue;
		char left[48];
		if (o->short_name)
			snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		else
			snprintf(left, sizeof left, "    --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(out, "  %-24s %s\n", left, o->help);
	}
	fprintf(out, "\nMODEL is a .mlmodel file, a .mlpackage directory or a compiled .mlmodelc directory;\n"
		     "several may be given.\n"
		     "exit codes: 0 all on the ANE, 1 something falls back (--fail-on), 2 usage,\n"
		     "            3 invalid model, 4 I/O error\n");
}

/* fmt holds one "%s", the argument: printed escaped (put_text). */
int usage_error(const struct command_row *cmd, const char *fmt, const char *arg)
{
	const char *conv = strstr(fmt, "%s");
	fprintf(stderr, "anelint: ");
	if (conv) {
		fwrite(fmt, 1, (size_t)(conv - fmt), stderr);
		put_text(stderr, arg, CLI_NAME_MAX);
		fputs(conv + 2, stderr);
	} else {
		fputs(fmt, stderr);
	}
	fprintf(stderr, "\n");
	fprintf(stderr, "try 'anelint %s%s--help'\n", cmd ? cmd->name : "", cmd ? " " : "");
	return EXIT_USAGE;
}

static const struct option_row *find_long(const char *name, size_t len)
{
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (strlen(options[i].name) == len && strncmp(options[i].name, name, len) == 0)
			return &options[i];
	return NULL;
}

static const struct option_row *find_short(char c)
{
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (options[i].short_name == c)
			return &options[i];
	return NULL;
}

/* Parse argv[first..] into c; returns EXIT_ALL_ANE or EXIT_USAGE. */
int parse_args(struct cli *c, const struct command_row *cmd, int argc, char **argv, int first)
{
	c->paths = calloc((size_t)argc, sizeof *c->paths);
	if (!c->paths)
		return EXIT_USAGE;
	bool only_paths = false;
	for (int i = first; i < argc; i++) {
		const char *a = argv[i];
		if (only_paths || a[0] != '-' || a[1] == 0) {
			c->paths[c->n_paths++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_paths = true;
			continue;
		}
		const struct option_row *o;
		const char *value = NULL;
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
			o = find_long(a + 2, len);
			if (eq)
				value = eq + 1;
		} else {
			o = find_short(a[1]);
			if (o && a[2])
				value = a + 2;
		}
		if (!o || !(o->cmds & cmd->bit)) {
			const char *names[N_OPTIONS];
			size_t n = 0;
			for (size_t k = 0; k < N_OPTIONS; k++)
				if (options[k].cmds & cmd->bit)
					names[n++] = options[k].name;
			char word[64];
			snprintf(word, sizeof word, "%.*s", (int)strcspn(a + 1 + (a[1] == '-'), "="),
				 a + 1 + (a[1] == '-'));
			const char *near = a[1] == '-' ? ci_nearest(word, names, n) : NULL;
			if (near) {
				char msg[128];
				snprintf(msg, sizeof msg, "unknown option '%%s' (did you mean '--%s'?)", near);
				return usage_error(cmd, msg, a);
			}
			return usage_error(cmd, "unknown option '%s'", a);
		}
		char *field = (char *)c + o->offset;
		struct cli_list *l = repeats(c, o, cmd->bit);
		if (l) {
			if (!value) {
				if (i + 1 >= argc)
					return usage_error(cmd, "option '%s' needs a value", a);
				value = argv[++i];
			}
			if (!l->v && !(l->v = calloc((size_t)argc, sizeof *l->v)))
				return EXIT_USAGE;
			l->v[l->n++] = value;
			continue;
		}
		if (!o->arg) {
			if (value)
				return usage_error(cmd, "option '%s' takes no value", a);
			*(bool *)(void *)field = true;
			continue;
		}
		if (!value) {
			if (i + 1 >= argc)
				return usage_error(cmd, "option '%s' needs a value", a);
			value = argv[++i];
		}
		*(const char **)(void *)field = value;
	}
	return EXIT_ALL_ANE;
}

static struct cli_list *repeats(struct cli *c, const struct option_row *o, unsigned cmd)
{
	static const struct {
		size_t option, list;
		unsigned cmds;
	} rows[] = {
		{OPT_FIELD(input), OPT_FIELD(input), C_ALL},
		{OPT_FIELD(at), OPT_FIELD(at), C_ALL},
		{OPT_FIELD(shape), OPT_FIELD(shape), C_ALL},
		{OPT_FIELD(enumerate), OPT_FIELD(enumerate), C_ALL},
		{OPT_FIELD(state), OPT_FIELD(state), C_ALL},
		{OPT_FIELD(output), OPT_FIELD(outputs), C_SPLIT},
		{OPT_FIELD(select), OPT_FIELD(select), C_ALL},
		{OPT_FIELD(ignore), OPT_FIELD(ignore), C_ALL},
		{OPT_FIELD(evidence), OPT_FIELD(evidence), C_ALL},
		{OPT_FIELD(allow), OPT_FIELD(allow), C_ALL},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (o->offset == rows[i].option && (rows[i].cmds & cmd))
			return (struct cli_list *)(void *)((char *)c + rows[i].list);
	return NULL;
}
