/* SPDX-License-Identifier: MIT */
/* help.c: the generated documentation. The man page and the shell completions
 * are printed from the option table (args.c) and the command table (main.c)
 * (`anelint --help-man`, `anelint --completion bash|zsh|fish`; not listed in the
 * usage), so `make install` never ships a description that has drifted. */
#include "cli.h"

#include <string.h>

/* roff: a leading '.' or '\'' would start a request; '\' and '-' are escaped. */
static void man_text(FILE *out, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", out);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", out);
		else if (*s == '-')
			fputs("\\-", out);
		else
			fputc(*s, out);
	}
}

int print_man(FILE *out)
{
	fprintf(out, ".TH ANELINT 1 \"\" \"anelint %s\" \"User Commands\"\n.SH NAME\n"
		     "anelint \\- will my Core ML model run on the Apple Neural Engine?\n.SH SYNOPSIS\n",
		ANELINT_VERSION);
	for (size_t i = 0; i < n_commands; i++) {
		fputs(".B anelint\n", out);
		man_text(out, commands[i].usage);
		fputs("\n.br\n", out);
	}
	fputs(".B anelint \\-\\-version\n.SH DESCRIPTION\nanelint reads Core ML models (.mlmodel files, "
	      ".mlpackage directories, compiled .mlmodelc directories) and predicts, for every NeuralNetwork "
	      "layer and ML Program op, whether the Apple Neural Engine runs it or Core ML falls back to the "
	      "GPU or CPU, with the rule that decided and the reason. MODEL is a .mlmodel file, a .mlpackage "
	      "directory or a compiled .mlmodelc directory; check, info, plan and report also search a "
	      "directory that is none of these for them.\n"
	      ".SH COMMANDS\n", out);
	for (size_t i = 0; i < n_commands; i++) {
		fputs(".TP\n.B ", out);
		man_text(out, commands[i].name);
		fputc('\n', out);
		man_text(out, commands[i].help);
		fputc('\n', out);
	}
	fputs(".SH OPTIONS\n", out);
	for (size_t i = 0; i < n_options; i++) {
		const struct option_row *o = &options[i];
		fputs(".TP\n", out);
		if (o->short_name)
			fprintf(out, "\\fB\\-%c\\fR, ", o->short_name);
		fputs("\\fB\\-\\-", out);
		man_text(out, o->name);
		fputs("\\fR", out);
		if (o->arg) {
			fputs(" \\fI", out);
			man_text(out, o->arg);
			fputs("\\fR", out);
		}
		fputc('\n', out);
		man_text(out, o->help);
		fputs(" (", out);
		const char *sep = "";
		for (size_t k = 0; k < n_commands; k++)
			if (o->cmds & commands[k].bit) {
				fprintf(out, "%s%s", sep, commands[k].name);
				sep = ", ";
			}
		fputs(")\n", out);
	}
	fputs(".SH EXIT STATUS\n0: every layer/op is predicted to run on the ANE (run, verify: passed); "
	      "1: something falls back (see \\-\\-fail\\-on), or outputs differ; 2: usage error; "
	      "3: a model file is malformed or unsupported; 4: a file cannot be read or written.\n"
	      ".SH SEE ALSO\nThe README and docs/ of the anelint sources.\n", out);
	return fflush(out) == 0 ? EXIT_ALL_ANE : EXIT_IO;
}

/* A help line for a completion menu: up to the first ';' or ':', or the last
 * whole word within 70 bytes, with the shell's quotes, ':' and brackets dropped. */
static void short_help(FILE *out, const char *s)
{
	char buf[72];
	size_t n = 0, cut = 0;
	for (; *s && *s != ';' && *s != ':' && n < 70; s++) {
		if (strchr("'\"[]\\`$", *s))
			continue;
		if (*s == ' ' || *s == ',')
			cut = n;
		buf[n++] = *s;
	}
	if (*s && *s != ';' && *s != ':' && cut) /* stopped inside a word */
		n = cut;
	while (n && buf[n - 1] == ' ')
		n--;
	fwrite(buf, 1, n, out);
}

/* The values an option takes, for the completions (per command where they
 * differ): words; "@targets" and "@releases" stand for the ids of the chip
 * family and OS release tables. What the commands accept (tests/newuser.sh
 * runs every value the bash completion offers). */
#define C_PREDICT (C_CHECK | C_PLAN | C_REPORT)
static const struct option_values {
	const char *option;
	unsigned cmds;
	const char *values;
} option_values[] = {
	{"format", C_PREDICT, "text json html github sarif markdown dot"},
	{"format", C_INFO, "text json mil"},
	{"format", C_ALL & ~(C_PREDICT | C_INFO), "text json"},
	{"target", C_PREDICT, "all @targets"},
	{"target", C_ALL & ~C_PREDICT, "@targets"},
	{"os", C_PREDICT, "all @releases"},
	{"os", C_ALL & ~C_PREDICT, "@releases"},
	{"compute-units", C_ALL, "all cpu-and-gpu cpu-and-ne cpu-only"},
	{"policy", C_ALL, "auto nn2020 mlprogram optimistic"},
	{"fail-on", C_ALL, "any cpu gpu never"},
	{"color", C_ALL, "auto always never"},
	{"precision", C_ALL, "fp32 fp16"},
	{"allow", C_ALL, "reassociate approximate"},
	{"proof", C_ALL, "auto whole region"},
	{"at", C_ALL, "segments"},
	{"evidence-format", C_ALL, "auto json mil plan mlperf oslog placement"},
	{"write-evidence", C_ALL, "json mil plan mlperf oslog placement"},
};
#define N_OPTION_VALUES (sizeof option_values / sizeof option_values[0])

/* The values of row v as one space-separated list on out. */
static void put_values(FILE *out, const struct option_values *v)
{
	const char *p = v->values;
	const char *sep = "";
	while (*p) {
		size_t n = strcspn(p, " ");
		if (n == 8 && strncmp(p, "@targets", n) == 0)
			for (size_t i = 0; i < al_targets_count(); i++, sep = " ")
				fprintf(out, "%s%s", sep, al_target_at(i)->id);
		else if (n == 9 && strncmp(p, "@releases", n) == 0)
			for (size_t i = 0; i < al_releases_count(); i++, sep = " ")
				fprintf(out, "%s%s", sep, al_release_at(i)->id);
		else
			fprintf(out, "%s%.*s", sep, (int)n, p);
		sep = " ";
		p += n;
		p += *p == ' ';
	}
}

/* The row of option o's values for command bit cmd, or NULL. */
static const struct option_values *values_of(const struct option_row *o, unsigned cmd)
{
	for (size_t i = 0; i < N_OPTION_VALUES; i++)
		if (strcmp(option_values[i].option, o->name) == 0 && (option_values[i].cmds & cmd))
			return &option_values[i];
	return NULL;
}

static void command_names(FILE *out, unsigned cmds)
{
	const char *sep = "";
	for (size_t k = 0; k < n_commands; k++)
		if (cmds & commands[k].bit) {
			fprintf(out, "%s%s", sep, commands[k].name);
			sep = " ";
		}
}

int print_completion(FILE *out, const char *shell)
{
	if (strcmp(shell, "bash") == 0) {
		fputs("# bash completion for anelint (generated by anelint --completion bash)\n"
		      "_anelint() {\n\tlocal cur=${COMP_WORDS[COMP_CWORD]} opts=\n"
		      "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n\t\tCOMPREPLY=($(compgen -W '", out);
		command_names(out, C_ALL);
		fputs(" --help --version' -- \"$cur\"))\n\t\treturn\n\tfi\n\tcase ${COMP_WORDS[1]} in\n", out);
		for (size_t k = 0; k < n_commands; k++) {
			fprintf(out, "\t%s) opts='", commands[k].name);
			const char *sep = "";
			for (size_t i = 0; i < n_options; i++)
				if (options[i].cmds & commands[k].bit) {
					fprintf(out, "%s--%s", sep, options[i].name);
					if (options[i].short_name)
						fprintf(out, " -%c", options[i].short_name);
					sep = " ";
				}
			fputs("' ;;\n", out);
		}
		/* an option's values after it: "check:--format" */
		fputs("\tesac\n\tcase ${COMP_WORDS[1]}:${COMP_WORDS[COMP_CWORD-1]} in\n", out);
		for (size_t k = 0; k < n_commands; k++)
			for (size_t i = 0; i < n_options; i++) {
				const struct option_row *o = &options[i];
				const struct option_values *v = (o->cmds & commands[k].bit) ? values_of(o, commands[k].bit) : NULL;
				if (!v)
					continue;
				fprintf(out, "\t%s:--%s", commands[k].name, o->name);
				if (o->short_name)
					fprintf(out, "|%s:-%c", commands[k].name, o->short_name);
				fputs(") COMPREPLY=($(compgen -W '", out);
				put_values(out, v);
				fputs("' -- \"$cur\")); return ;;\n", out);
			}
		fputs("\tesac\n\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
		      "\telse\n\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n\tfi\n}\n"
		      "complete -o filenames -F _anelint anelint\n", out);
	} else if (strcmp(shell, "zsh") == 0) {
		fputs("#compdef anelint\n# zsh completion for anelint (generated by anelint --completion zsh)\n"
		      "_anelint() {\n\tlocal -a cmds\n\tcmds=(\n", out);
		for (size_t k = 0; k < n_commands; k++) {
			fprintf(out, "\t\t'%s:", commands[k].name);
			short_help(out, commands[k].help);
			fputs("'\n", out);
		}
		fputs("\t)\n\tif (( CURRENT == 2 )); then\n\t\t_describe command cmds\n\t\treturn\n\tfi\n"
		      "\tcase $words[2] in\n", out);
		for (size_t k = 0; k < n_commands; k++) {
			fprintf(out, "\t%s) _arguments", commands[k].name);
			for (size_t i = 0; i < n_options; i++) {
				const struct option_row *o = &options[i];
				if (!(o->cmds & commands[k].bit))
					continue;
				const char *names[2] = {NULL, NULL};
				char shortopt[3] = {'-', o->short_name, 0};
				names[0] = o->name;
				names[1] = o->short_name ? shortopt : NULL;
				for (int j = 0; j < 2 && names[j]; j++) {
					fprintf(out, " \\\n\t\t'%s%s[", j ? "" : "--", names[j]);
					short_help(out, o->help);
					fputc(']', out);
					const struct option_values *v = values_of(o, commands[k].bit);
					if (o->arg && v) {
						fprintf(out, ":%s:(", o->arg);
						put_values(out, v);
						fputc(')', out);
					} else if (o->arg) {
						fprintf(out, ":%s: ", o->arg);
					}
					fputc('\'', out);
				}
			}
			fputs(" \\\n\t\t'*:model:_files' ;;\n", out);
		}
		fputs("\tesac\n}\n_anelint \"$@\"\n", out);
	} else if (strcmp(shell, "fish") == 0) {
		fputs("# fish completion for anelint (generated by anelint --completion fish)\n", out);
		for (size_t k = 0; k < n_commands; k++) {
			fprintf(out, "complete -c anelint -f -n __fish_use_subcommand -a %s -d '",
				commands[k].name);
			short_help(out, commands[k].help);
			fputs("'\n", out);
		}
		for (size_t i = 0; i < n_options; i++) {
			const struct option_row *o = &options[i];
			fputs("complete -c anelint -n '__fish_seen_subcommand_from ", out);
			command_names(out, o->cmds);
			fprintf(out, "' -l %s", o->name);
			if (o->short_name)
				fprintf(out, " -s %c", o->short_name);
			fprintf(out, "%s -d '", o->arg ? " -r" : "");
			short_help(out, o->help);
			fputs("'\n", out);
			for (size_t r = 0; r < N_OPTION_VALUES; r++) { /* its values, where it has them */
				const struct option_values *v = &option_values[r];
				if (strcmp(v->option, o->name) != 0 || !(v->cmds & o->cmds))
					continue;
				fputs("complete -c anelint -n '__fish_seen_subcommand_from ", out);
				command_names(out, v->cmds & o->cmds);
				fprintf(out, "' -l %s", o->name);
				if (o->short_name)
					fprintf(out, " -s %c", o->short_name);
				fputs(" -x -a '", out);
				put_values(out, v);
				fputs("'\n", out);
			}
		}
	} else {
		fprintf(stderr, "anelint: --completion takes bash, zsh or fish\n");
		return EXIT_USAGE;
	}
	return fflush(out) == 0 ? EXIT_ALL_ANE : EXIT_IO;
}
