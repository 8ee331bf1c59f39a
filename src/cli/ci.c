/* SPDX-License-Identifier: MIT */
/* ci.c: the command line's side of what anelint means in CI (the library's
 * al_ci_*, src/command/ci.c: the configuration, rule selection, accepted
 * findings, baselines, directory arguments). Here: the options handed over as
 * they were given, the settings taken back, the library's messages printed,
 * its statuses turned into exit codes. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

struct ci {
	al_ci *lib;
};

/* The library's messages so far, on stderr (they are already escaped lines). */
static void flush_messages(const struct ci *ci)
{
	if (!ci || !ci->lib)
		return;
	fputs(al_ci_messages(ci->lib), stderr);
	al_ci_messages_clear(ci->lib);
}

static int ci_exit(enum al_status st)
{
	switch (st) {
	case AL_OK: return EXIT_ALL_ANE;
	case AL_E_INVALID_ARG: return EXIT_USAGE;
	case AL_E_IO: return EXIT_IO;
	case AL_E_NOMEM: return EXIT_IO;
	default: return EXIT_INVALID;
	}
}

static al_ci *lib_of(const struct ci *ci)
{
	return ci ? ci->lib : NULL;
}

static struct al_ci_settings settings_of(const struct cli *c)
{
	return (struct al_ci_settings){.target = c->target, .os = c->os, .compute_units = c->compute_units,
				       .policy = c->policy, .fail_on = c->fail_on, .switch_cost = c->switch_cost,
				       .rules = c->rules, .baseline = c->baseline};
}

static void take_settings(struct cli *c, const struct al_ci_settings *s)
{
	c->target = s->target, c->os = s->os, c->compute_units = s->compute_units, c->policy = s->policy;
	c->fail_on = s->fail_on, c->switch_cost = s->switch_cost, c->rules = s->rules, c->baseline = s->baseline;
}

const char *ci_nearest(const char *s, const char *const *cands, size_t n)
{
	return al_nearest(s, cands, n);
}

void ci_rule_hint(const char *token, const al_user_rules *u)
{
	const char *best = al_rule_nearest(token, u);
	if (best) {
		fputs("did you mean '", stderr);
		put_text(stderr, best, CLI_NAME_MAX);
		fputs("'? ", stderr);
	}
	fputs("(see 'anelint rules')\n", stderr);
}

int ci_setup(struct cli *c, struct ci **out)
{
	struct ci *ci = calloc(1, sizeof *ci);
	*out = ci;
	if (!ci)
		return EXIT_IO;
	if (c->config && c->no_config)
		return usage_error(NULL, "--config and --no-config: give one%s", "");
	struct al_ci_opts o = {.config = c->config, .no_config = c->no_config,
			       .first_path = c->n_paths > 0 ? c->paths[0] : NULL,
			       .select = c->select.v, .n_select = (size_t)c->select.n,
			       .ignore = c->ignore.v, .n_ignore = (size_t)c->ignore.n,
			       .write_baseline = c->write_baseline, .given = settings_of(c)};
	enum al_status st = al_ci_open(&o, &ci->lib);
	flush_messages(ci);
	if (ci->lib)
		take_settings(c, al_ci_settings_of(ci->lib));
	if (st != AL_OK)
		return ci_exit(st);
	if (c->baseline && c->write_baseline)
		return usage_error(NULL, "--baseline and --write-baseline: give one%s", "");
	st = al_ci_load_baselines(ci->lib);
	flush_messages(ci);
	return ci_exit(st);
}

void ci_free(struct ci *ci)
{
	if (!ci)
		return;
	al_ci_free(ci->lib);
	free(ci);
}

int ci_expand_paths(struct ci *ci, struct cli *c)
{
	const char *const *paths;
	size_t n;
	enum al_status st = al_ci_expand_paths(ci->lib, c->paths, (size_t)c->n_paths, &paths, &n);
	flush_messages(ci);
	if (st != AL_OK || paths == (const char *const *)c->paths)
		return ci_exit(st);
	const char **copy = malloc((n ? n : 1) * sizeof *copy);
	if (!copy)
		return EXIT_IO;
	memcpy(copy, paths, n * sizeof *copy);
	free((void *)c->paths); /* parse_args' array: main frees the new one */
	c->paths = copy;
	c->n_paths = (int)n;
	return EXIT_ALL_ANE;
}

int ci_unsearched_exit(const struct ci *ci)
{
	return al_ci_unsearched(lib_of(ci)) ? EXIT_INVALID : EXIT_ALL_ANE;
}

int ci_selection(struct ci *ci, const struct cli *c, const struct command_row *cmd, struct al_check_opts *check)
{
	(void)c, (void)cmd; /* the selection was handed over by ci_setup */
	enum al_status st = al_ci_select(ci->lib, check);
	flush_messages(ci);
	return ci_exit(st);
}

const char *ci_accepted(void *ctx, const struct al_submodel *s, const char *layer, const struct al_rule *r,
			const char **kind)
{
	return al_ci_accepted(((struct ci *)ctx)->lib, s, layer, r, kind);
}

bool ci_accepts_anything(struct ci *ci, const struct al_report_item *items, int n)
{
	return al_ci_accepts_anything(ci->lib, items, n > 0 ? (size_t)n : 0);
}

int ci_fail_on(const struct ci *ci, const char *path, int fail_on)
{
	return (int)al_ci_fail_on(lib_of(ci), path, (enum al_fail_on)fail_on);
}

bool ci_model_cli(const struct ci *ci, const char *path, const struct cli *c, struct cli *out, uint32_t *line)
{
	struct al_ci_settings in = settings_of(c), got;
	*out = *c;
	bool own = al_ci_model_settings(lib_of(ci), path, &in, &got, line);
	take_settings(out, &got);
	return own;
}

void ci_model_selection(struct ci *ci, const char *path, struct al_check_opts *check)
{
	al_ci_model_selection(lib_of(ci), path, check);
}

const char *ci_information_uri(const struct ci *ci)
{
	return al_ci_information_uri(lib_of(ci));
}

const char *ci_config_path(const struct ci *ci)
{
	return al_ci_config_path(lib_of(ci));
}

struct ci_baseline_writer {
	struct ci *ci;
	al_ci_baseline *b;
};

struct ci_baseline_writer *ci_baseline_begin(struct ci *ci, const char *path)
{
	struct ci_baseline_writer *w = calloc(1, sizeof *w);
	al_ci_baseline *b = w ? al_ci_baseline_begin(ci->lib, path) : NULL;
	flush_messages(ci);
	if (!b) {
		if (!w)
			fprintf(stderr, "anelint: error: out of memory\n");
		free(w);
		return NULL;
	}
	w->ci = ci;
	w->b = b;
	return w;
}

void ci_baseline_add(struct ci_baseline_writer *b, const struct al_report_item *it)
{
	al_ci_baseline_add(b->b, it->model);
}

int ci_baseline_end(struct ci_baseline_writer *b, bool write)
{
	if (!b)
		return EXIT_IO;
	enum al_status st = al_ci_baseline_end(b->b, write);
	flush_messages(b->ci);
	free(b);
	return st != AL_OK ? EXIT_IO : EXIT_ALL_ANE;
}

int ci_write_baseline(struct ci *ci, const char *path, const struct al_report_item *items, int n)
{
	struct ci_baseline_writer *b = ci_baseline_begin(ci, path);
	for (int i = 0; b && i < n; i++)
		ci_baseline_add(b, &items[i]);
	return ci_baseline_end(b, true);
}
