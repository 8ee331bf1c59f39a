/* SPDX-License-Identifier: MIT */
/* ci_int.h: what the files of the configuration and the gate share (ci.c the
 * configuration, selection and accepted findings; ci_msg.c the messages;
 * ci_baseline.c reading a baseline; ci_record.c recording one; ci_paths.c
 * directory arguments). Internal names ali_cmd_*; the public calls are al_ci_*
 * in include/anelint.h. */
#ifndef ANELINT_CI_INT_H
#define ANELINT_CI_INT_H
#include "command.h"
#include "base.h"
#include "report.h" /* ali_config_*: the configuration's parser */

#include <stdio.h>

/* The most characters of a name (a path, an argument) and of a library message
 * a message line shows (the CLI's cut, so that its output stays as it was). */
#define SHOWN_NAME_MAX 200
#define SHOWN_MSG_MAX 600

/* A rule selection: --select / --ignore, the configuration's, or a [[model]]'s. */
struct selection {
	char **sel, **ign;
	size_t n_sel, n_ign;
	bool has_select;
};

/* A baseline file's entries, hashed on (model, layer, rule): a finding is
 * looked up in O(1), not compared with every entry. */
struct baseline {
	char *path, *dir;
	struct bentry {
		char *model, *layer, *rule;
	} *e;
	size_t n, cap;
	struct ali_hashtab by_key;
	struct al_arena strings; /* the entries' strings */
};

/* A model's key, the last few computed (model_key resolves the file with
 * realpath: once per sub-model and anchor, not once per finding). */
#define KEY_CACHE 4
struct key_cache {
	char *file, *path; /* what the key was computed from */
	const char *anchor;
	char *key;
};

struct al_ci {
	/* the configuration */
	struct ali_config *cfg;
	char *cfg_path, *cfg_dir;
	/* what the command line gave (it wins over the configuration, [[model]] included) */
	bool cl_target, cl_os, cl_cu, cl_policy, cl_select, cl_ignore, cl_baseline;
	const char *information_uri;
	/* --select / --ignore (and the configuration's): one selector each */
	struct selection top;
	/* suppressions of the configuration */
	struct sup {
		const char *model, *layer, *rule, *reason;
		uint32_t line;
	} *sup;
	size_t n_sup;
	/* the suppressions whose rule selector matches a rule, per rule, made on the
	 * first finding of that rule: by_rule maps the rule to its list */
	struct ali_hashtab by_rule;
	struct sup_list {
		const struct al_rule *rule;
		size_t *v, n;
	} *sup_lists;
	size_t n_sup_lists;
	struct key_cache keys[KEY_CACHE];
	size_t next_key;
	/* per-model settings: [[model]] path = GLOB, fail_on = ..., target = ... */
	struct per_model {
		const char *glob;
		int fail_on; /* enum al_fail_on, -1 not set */
		const char *target, *os, *compute_units, *policy; /* NULL: not set */
		uint32_t line, target_line, os_line, sel_line, ign_line;
		struct selection sel;
		bool has_sel;
		struct baseline base; /* path NULL: none */
	} *pm;
	size_t n_pm;
	/* the baseline */
	struct baseline base;
	bool metadata; /* a model carries com.anelint.ignore */
	/* strings for the options the configuration sets */
	char **owned;
	size_t n_owned, cap_owned, cap_sup;
	/* models found in directories (c->paths points at them) */
	char **path_copies;
	size_t n_path_copies, cap_path_copies;
	/* directories not searched: deeper than DIR_MAX_DEPTH below the argument */
	size_t deep_skipped;
	/* what the caller gave, and the settings with the configuration's values */
	const char *const *cl_sel_v, *const *cl_ign_v;
	size_t cl_n_sel, cl_n_ign;
	bool writing_baseline;
	struct al_ci_settings settings;
	/* the expanded paths (al_ci_expand_paths) */
	const char **expanded;
	/* the messages: a memory stream */
	FILE *msg;
	char *msg_buf;
	size_t msg_len;
};

/* (model, layer, rule): a baseline entry or a finding. */
struct entry_key {
	const char *model, *layer, *rule;
};

/* ci_msg.c: ci->msg holds the lines a tool shows, in order (an open_memstream;
 * NULL when out of memory: the messages are lost, the statuses are not). */
void ali_cmd_put(const struct al_ci *ci, const char *s, size_t max); /* escaped, cut at max */
void ali_cmd_puts(const struct al_ci *ci, const char *s);
void ali_cmd_printf(const struct al_ci *ci, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "anelint: error: SUBJECT: MESSAGE" and a newline */
void ali_cmd_error_at(const struct al_ci *ci, const char *subject, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The errors of d, one line each, as the CLI shows a library diagnostic. */
void ali_cmd_diags(const struct al_ci *ci, const char *path, const al_diags *d);
/* A failed open or read: AL_E_IO and AL_E_NOMEM as they are, else AL_E_FORMAT. */
enum al_status ali_cmd_file_status(enum al_status st);

/* ci_baseline.c */
uint64_t ali_cmd_entry_hash(const char *model, const char *layer, const char *rule);
/* ali_hashtab's equality of a baseline's entry `item` (ctx: the baseline) and a struct entry_key. */
bool ali_cmd_bentry_eq(size_t item, const void *key, void *ctx);
enum al_status ali_cmd_baseline_load(const struct al_ci *ci, struct baseline *bl, const char *path);
void ali_cmd_baseline_free(struct baseline *b, bool own_path);

/* ci.c */
/* The directory of path's real file (the root: "/"), or NULL; free() it. */
char *ali_cmd_dir_of(const char *path);
/* The key of a (sub-)model: its file relative to anchor when inside it, else its
 * path as given; a pipeline stage keeps its ":pipeline/..." suffix. free() it. */
char *ali_cmd_model_key(const struct al_submodel *sm, const char *anchor);

/* ci_paths.c: a directory argument to search (not a model package's own). */
bool ali_cmd_searched_dir(const char *path);
#endif
