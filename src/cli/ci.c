/* SPDX-License-Identifier: MIT */
/* ci.c: what anelint needs to live in CI (issue 19), for check, plan and report:
 *   - the project configuration (anelint.toml / .anelint.toml found upward from
 *     the first model, else from the working directory; --config FILE;
 *     --no-config), parsed by the library (src/report/config.c), given meaning
 *     here: defaults for the options, rule selection, suppressions, per-model
 *     settings, the baseline (docs/configuration.md);
 *   - rule selection (--select / --ignore, by rule id, id prefix or name): the
 *     rules left out are not evaluated (al_check_opts.rule_on);
 *   - accepted findings (al_report_opts.accepted): suppressions in the
 *     configuration (model glob, layer glob, rule, required reason), in the
 *     model's user-defined metadata (com.anelint.ignore), and a baseline
 *     (--baseline FILE; --write-baseline FILE records the current findings);
 *   - directory arguments searched recursively for models (one table of
 *     extensions);
 *   - "did you mean" for mistyped options, rule ids and configuration keys.
 * Only the CLI prints; every name from a file or an argument goes through put_text. */
#include "cli.h"
#include "base.h"
#include "report.h" /* ali_config_*: the configuration's parser */

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ================================================================ did you mean */

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return SIZE_MAX;
	size_t row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			char x = (char)(a[i - 1] | 0x20), y = (char)(b[j - 1] | 0x20); /* ASCII case folded */
			size_t best = prev + (x != y);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
}

const char *ci_nearest(const char *s, const char *const *cands, size_t n)
{
	const char *best = NULL;
	size_t bd = SIZE_MAX, len = strlen(s);
	size_t limit = len < 4 ? 1 : len < 9 ? 2 : 3;
	for (size_t i = 0; i < n; i++) {
		size_t d = cands[i] ? edit_distance(s, cands[i]) : SIZE_MAX;
		if (d < bd) {
			bd = d;
			best = cands[i];
		}
	}
	return bd <= limit ? best : NULL;
}

/* The rules a command sees (built-in, then the user file's new ones). */
static size_t all_rules(const al_user_rules *u, const struct al_rule ***out)
{
	size_t cap = al_rules_count() + al_user_rules_count(u), n = 0;
	const struct al_rule **v = calloc(cap ? cap : 1, sizeof *v);
	*out = v;
	if (!v)
		return 0;
	for (size_t i = 0; i < al_rules_count(); i++) {
		const struct al_rule *r = al_rule_at(i);
		const struct al_rule *eff = u ? al_user_rules_find(u, r->id) : NULL;
		v[n++] = eff ? eff : r;
	}
	for (size_t i = 0; i < al_user_rules_count(u); i++) {
		const struct al_rule *r = al_user_rule_at(u, i);
		if (r && !al_rule_is_override(r))
			v[n++] = r;
	}
	return n;
}

void ci_rule_hint(const char *token, const al_user_rules *u)
{
	const struct al_rule **v;
	size_t n = all_rules(u, &v);
	const char **names = calloc(2 * n + 1, sizeof *names);
	const char *best = NULL;
	if (names) {
		for (size_t i = 0; i < n; i++) {
			names[2 * i] = v[i]->id;
			names[2 * i + 1] = v[i]->name;
		}
		best = ci_nearest(token, names, 2 * n);
	}
	if (best) {
		fputs("did you mean '", stderr);
		put_text(stderr, best, CLI_NAME_MAX);
		fputs("'? ", stderr);
	}
	fputs("(see 'anelint rules')\n", stderr);
	free(names);
	free(v);
}

/* ================================================================ rule selection */

/* A selector: a rule id (any case), a prefix of ids ("ANE0", "ANE07"), or a rule name. */
static bool rule_matches(const char *sel, const struct al_rule *r)
{
	size_t n = strlen(sel);
	return (n && strncasecmp(r->id, sel, n) == 0) || (r->name && strcasecmp(r->name, sel) == 0);
}

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

struct ci {
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
};

static char *own(struct ci *ci, const char *s)
{
	if (ci->n_owned == ci->cap_owned) { /* doubling: a configuration has up to 8,192 strings */
		size_t cap = ci->cap_owned ? 2 * ci->cap_owned : 32;
		char **v = realloc(ci->owned, cap * sizeof *v);
		if (!v)
			return NULL;
		ci->owned = v;
		ci->cap_owned = cap;
	}
	char *d = strdup(s);
	if (d)
		ci->owned[ci->n_owned++] = d;
	return d;
}

/* "a,b" -> a, b appended to *v */
static bool add_selectors(struct ci *ci, char ***v, size_t *n, const char *list)
{
	const char *p = list;
	while (p && *p) {
		size_t len = strcspn(p, ",");
		if (len) {
			char **nv = realloc(*v, (*n + 1) * sizeof **v);
			if (!nv)
				return false;
			*v = nv;
			char *s = strndup(p, len);
			if (!s || !own(ci, s)) {
				free(s);
				return false;
			}
			(*v)[(*n)++] = ci->owned[ci->n_owned - 1];
			free(s);
		}
		p += len + (p[len] == ',');
	}
	return true;
}

bool ci_rule_on(const struct al_rule *r, void *ctx)
{
	const struct selection *ci = ctx;
	bool on = !ci->has_select;
	for (size_t i = 0; i < ci->n_sel && !on; i++)
		on = rule_matches(ci->sel[i], r);
	for (size_t i = 0; i < ci->n_ign && on; i++)
		on = !rule_matches(ci->ign[i], r);
	return on;
}

/* Every selector names at least one rule; else a usage error with a hint. */
static int check_selectors(const struct command_row *cmd, char **v, size_t n, const char *opt,
			   const al_user_rules *u)
{
	const struct al_rule **rules;
	size_t nr = all_rules(u, &rules);
	int rc = EXIT_ALL_ANE;
	for (size_t i = 0; i < n && !rc; i++) {
		bool found = false;
		for (size_t k = 0; k < nr && !found; k++)
			found = rule_matches(v[i], rules[k]);
		if (!found) {
			fputs("anelint: ", stderr);
			put_text(stderr, opt, CLI_MSG_MAX); /* may hold the configuration's path */
			fputs(": no rule is named or starts with '", stderr);
			put_text(stderr, v[i], CLI_NAME_MAX);
			fputs("'; ", stderr);
			ci_rule_hint(v[i], u);
			rc = EXIT_USAGE;
		}
	}
	(void)cmd;
	free(rules);
	return rc;
}

int ci_selection(struct ci *ci, const struct cli *c, const struct command_row *cmd, struct al_check_opts *check)
{
	struct selection *t = &ci->top;
	for (int i = 0; i < c->select.n; i++)
		if (!add_selectors(ci, &t->sel, &t->n_sel, c->select.v[i]))
			return EXIT_IO;
	for (int i = 0; i < c->ignore.n; i++)
		if (!add_selectors(ci, &t->ign, &t->n_ign, c->ignore.v[i]))
			return EXIT_IO;
	t->has_select = t->n_sel > 0;
	int rc = check_selectors(cmd, t->sel, t->n_sel, "--select", check->user_rules);
	if (!rc)
		rc = check_selectors(cmd, t->ign, t->n_ign, "--ignore", check->user_rules);
	for (size_t i = 0; i < ci->n_pm && !rc; i++) {
		struct selection *x = &ci->pm[i].sel;
		x->has_select = x->n_sel > 0;
		if (ci->pm[i].has_sel) {
			char where[600];
			snprintf(where, sizeof where, "error: %.400s: line %u: [[model]] select", ci->cfg_path,
				 ci->pm[i].sel_line);
			rc = check_selectors(cmd, x->sel, x->n_sel, where, check->user_rules);
			snprintf(where, sizeof where, "error: %.400s: line %u: [[model]] ignore", ci->cfg_path,
				 ci->pm[i].ign_line);
			if (!rc)
				rc = check_selectors(cmd, x->ign, x->n_ign, where, check->user_rules);
		}
	}
	if (!rc && (t->n_sel || t->n_ign)) {
		check->rule_on = ci_rule_on;
		check->rule_on_ctx = t;
	}
	return rc;
}

/* ================================================================ paths and keys */

static char *dir_of(const char *path)
{
	char *real = realpath(path, NULL);
	if (!real)
		return NULL;
	char *slash = strrchr(real, '/');
	if (slash && slash != real)
		*slash = 0;
	else if (slash)
		slash[1] = 0;
	return real;
}

/* The key of a (sub-)model: its file relative to `anchor` when inside it, else
 * its path as given; a pipeline stage keeps its ":pipeline/..." suffix. */
static char *model_key(const struct al_submodel *sm, const char *anchor)
{
	/* the file as given (a package: its directory), and a stage's suffix */
	const char *path = sm->file ? sm->file : sm->path;
	const char *suffix = strstr(sm->path, ":pipeline/");
	const char *pkg = strstr(path, ".mlpackage/");
	size_t flen = pkg ? (size_t)(pkg - path) + strlen(".mlpackage") : strlen(path);
	char *file = strndup(path, flen);
	char *real = file && anchor ? realpath(file, NULL) : NULL;
	const char *shown = file;
	size_t al = anchor ? strlen(anchor) : 0;
	if (real && strncmp(real, anchor, al) == 0 && (real[al] == '/' || (al == 1 && anchor[0] == '/')))
		shown = real + al + (real[al] == '/');
	while (shown && shown[0] == '.' && shown[1] == '/')
		shown += 2;
	size_t n = (shown ? strlen(shown) : 0) + (suffix ? strlen(suffix) : 0) + 1;
	char *key = malloc(n);
	if (key)
		snprintf(key, n, "%s%s", shown ? shown : "", suffix ? suffix : "");
	free(real);
	free(file);
	return key;
}

/* Whether a model's key matches a glob: the whole key, or the file's name alone
 * ("*.mlmodel", "ci_model.mlmodel"). */
static bool glob_key(const char *glob, const char *key)
{
	if (!key)
		return false;
	if (fnmatch(glob, key, 0) == 0)
		return true;
	const char *suffix = strstr(key, ":pipeline/");
	size_t flen = suffix ? (size_t)(suffix - key) : strlen(key);
	const char *base = key;
	for (size_t i = 0; i < flen; i++)
		if (key[i] == '/')
			base = key + i + 1;
	if (!suffix)
		return fnmatch(glob, base, 0) == 0;
	char *file = strndup(base, (size_t)(key + flen - base));
	bool m = file && fnmatch(glob, file, 0) == 0;
	free(file);
	return m;
}

/* The key of sm relative to anchor, from the cache when it was computed for the
 * same file, path and anchor; NULL when out of memory. Owned by the cache. */
static const char *cached_key(struct ci *ci, const struct al_submodel *sm, const char *anchor)
{
	const char *file = sm->file ? sm->file : "";
	for (size_t i = 0; i < KEY_CACHE; i++) {
		const struct key_cache *k = &ci->keys[i];
		if (k->key && k->anchor == anchor && strcmp(k->file, file) == 0 && strcmp(k->path, sm->path) == 0)
			return k->key;
	}
	struct key_cache *k = &ci->keys[ci->next_key++ % KEY_CACHE];
	free(k->file);
	free(k->path);
	free(k->key);
	k->file = strdup(file);
	k->path = strdup(sm->path);
	k->key = model_key(sm, anchor);
	k->anchor = anchor;
	if (!k->file || !k->path || !k->key) {
		free(k->file);
		free(k->path);
		free(k->key);
		*k = (struct key_cache){0};
		return NULL;
	}
	return k->key;
}

static void free_key_cache(struct ci *ci)
{
	for (size_t i = 0; i < KEY_CACHE; i++) {
		free(ci->keys[i].file);
		free(ci->keys[i].path);
		free(ci->keys[i].key);
		ci->keys[i] = (struct key_cache){0};
	}
}

/* (model, layer, rule) of a baseline entry or a finding, hashed as one key. */
static uint64_t entry_hash(const char *model, const char *layer, const char *rule)
{
	uint64_t h = AL_HASH_INIT;
	h = ali_hash_bytes(h, model, strlen(model) + 1);
	h = ali_hash_bytes(h, layer, strlen(layer) + 1);
	return ali_hash_bytes(h, rule, strlen(rule) + 1);
}

struct entry_key {
	const char *model, *layer, *rule;
};

static bool bentry_eq(size_t item, const void *key, void *ctx)
{
	const struct bentry *b = &((const struct baseline *)ctx)->e[item];
	const struct entry_key *k = key;
	return strcmp(b->rule, k->rule) == 0 && strcmp(b->model, k->model) == 0 && strcmp(b->layer, k->layer) == 0;
}

/* ================================================================ accepted findings */

#define META_KEY "com.anelint.ignore"

/* com.anelint.ignore: entries "RULE[@LAYER-GLOB]: reason" separated by ';' or
 * newlines; an entry without a reason is not honoured. */
static const char *metadata_accepts(const struct al_submodel *s, const char *layer, const struct al_rule *r)
{
	static char reason[256];
	for (uint32_t i = 0; i < s->n_user_defined; i++) {
		if (!s->user_defined[i].key || strcmp(s->user_defined[i].key, META_KEY) != 0)
			continue;
		const char *p = s->user_defined[i].value ? s->user_defined[i].value : "";
		for (int guard = 0; *p && guard < 256; guard++) {
			size_t len = strcspn(p, ";\n");
			char entry[512];
			size_t el = len < sizeof entry - 1 ? len : sizeof entry - 1;
			memcpy(entry, p, el);
			entry[el] = 0;
			p += len + (p[len] != 0);
			char *colon = strchr(entry, ':');
			if (!colon)
				continue;
			*colon = 0;
			const char *why = colon + 1;
			while (*why == ' ' || *why == '\t')
				why++;
			if (!*why)
				continue;
			char *sel = entry;
			while (*sel == ' ' || *sel == '\t')
				sel++;
			char *at = strchr(sel, '@');
			const char *lglob = "*";
			if (at) {
				*at = 0;
				lglob = at + 1;
			}
			for (char *e = sel + strlen(sel); e > sel && (e[-1] == ' ' || e[-1] == '\t');)
				*--e = 0;
			if (!*sel || !rule_matches(sel, r))
				continue;
			if (layer ? fnmatch(lglob, layer, 0) != 0 : strcmp(lglob, "*") != 0)
				continue;
			snprintf(reason, sizeof reason, "%s", why);
			return reason;
		}
	}
	return NULL;
}

static bool sup_list_eq(size_t item, const void *key, void *ctx)
{
	return ((const struct ci *)ctx)->sup_lists[item].rule == key;
}

/* The suppressions whose rule selector matches r, in the file's order: made on
 * the first finding of r, then found by r's address. NULL when out of memory. */
static const struct sup_list *sups_of_rule(struct ci *ci, const struct al_rule *r)
{
	uint64_t h = ali_hash_bytes(AL_HASH_INIT, &r, sizeof r);
	size_t at = ali_hashtab_find(&ci->by_rule, h, sup_list_eq, r, ci);
	if (at != SIZE_MAX)
		return &ci->sup_lists[at];
	struct sup_list *v = realloc(ci->sup_lists, (ci->n_sup_lists + 1) * sizeof *v);
	if (!v)
		return NULL;
	ci->sup_lists = v;
	struct sup_list *l = &v[ci->n_sup_lists];
	*l = (struct sup_list){.rule = r};
	for (size_t i = 0; i < ci->n_sup; i++)
		if (rule_matches(ci->sup[i].rule, r)) {
			size_t *nv = realloc(l->v, (l->n + 1) * sizeof *nv);
			if (!nv) {
				free(l->v);
				return NULL;
			}
			l->v = nv;
			l->v[l->n++] = i;
		}
	if (!ali_hashtab_add(&ci->by_rule, h, ci->n_sup_lists)) {
		free(l->v);
		return NULL;
	}
	return &ci->sup_lists[ci->n_sup_lists++];
}

const char *ci_accepted(void *ctx, const struct al_submodel *s, const char *layer, const struct al_rule *r,
			const char **kind)
{
	struct ci *ci = ctx;
	const struct sup_list *sl = ci->n_sup ? sups_of_rule(ci, r) : NULL;
	for (size_t j = 0; sl && j < sl->n; j++) { /* in the file's order: the first one says why */
		const struct sup *x = &ci->sup[sl->v[j]];
		/* no layer: every finding of the model, model-level ones included */
		if (x->layer && (!layer || fnmatch(x->layer, layer, 0) != 0))
			continue;
		if (x->model && !glob_key(x->model, cached_key(ci, s, ci->cfg_dir)))
			continue;
		*kind = "config";
		return x->reason;
	}
	if (ci->metadata) {
		const char *why = metadata_accepts(s, layer, r);
		if (why) {
			*kind = "metadata";
			return why;
		}
	}
	const struct baseline *bl = &ci->base;
	if (!ci->cl_baseline) /* a [[model]]'s baseline replaces the top-level one */
		for (size_t i = 0; i < ci->n_pm; i++)
			if (ci->pm[i].base.path && glob_key(ci->pm[i].glob, cached_key(ci, s, ci->cfg_dir)))
				bl = &ci->pm[i].base;
	if (bl->n) {
		struct entry_key k = {cached_key(ci, s, bl->dir), layer ? layer : "", r->id};
		if (k.model &&
		    ali_hashtab_find(&bl->by_key, entry_hash(k.model, k.layer, k.rule), bentry_eq, &k, (void *)bl) !=
			    SIZE_MAX) {
			*kind = "baseline";
			return "in the baseline";
		}
	}
	return NULL;
}

bool ci_accepts_anything(struct ci *ci, const struct al_report_item *items, int n)
{
	for (int i = 0; i < n; i++)
		for (size_t k = 0; items[i].model && k < al_model_count(items[i].model); k++) {
			const struct al_submodel *s = al_model_get(items[i].model, k);
			for (uint32_t u = 0; u < s->n_user_defined; u++)
				if (s->user_defined[u].key && strcmp(s->user_defined[u].key, META_KEY) == 0)
					ci->metadata = true;
		}
	bool pm_base = false;
	for (size_t i = 0; i < ci->n_pm; i++)
		pm_base |= ci->pm[i].base.n > 0;
	return ci->n_sup || ci->base.n || pm_base || ci->metadata;
}

int ci_fail_on(const struct ci *ci, const char *path, int fail_on)
{
	struct al_submodel sm = {.path = path, .file = path};
	char *key = ci && ci->n_pm ? model_key(&sm, ci->cfg_dir) : NULL; /* once, not per [[model]] */
	for (size_t i = 0; key && i < ci->n_pm; i++)
		if (ci->pm[i].fail_on >= 0 && glob_key(ci->pm[i].glob, key))
			fail_on = ci->pm[i].fail_on;
	free(key);
	return fail_on;
}

/* ================================================================ the baseline */

static void free_baseline(struct baseline *b, bool own_path)
{
	free(b->e);
	ali_arena_free(&b->strings);
	ali_hashtab_free(&b->by_key);
	if (own_path)
		free(b->path);
	free(b->dir);
}

#define BASELINE_MAX (16u << 20)

/* ---- the fast reader: a baseline as --write-baseline writes it, read straight
 * into the entries (json-c's tree of 300,000 entries costs ~370 MB and most of a
 * second). It accepts only plain RFC 8259 JSON with "anelint_baseline": 1 and
 * "findings" an array of objects with the strings model, layer and rule; on
 * anything else it gives up and json-c reads the file (its errors, its rules). */
struct fast {
	const char *p, *end;
	struct baseline *bl;
};

static void fast_ws(struct fast *f)
{
	while (f->p < f->end && (*f->p == ' ' || *f->p == '\n' || *f->p == '\r' || *f->p == '\t'))
		f->p++;
}

static bool fast_lit(struct fast *f, char c)
{
	fast_ws(f);
	if (f->p < f->end && *f->p == c) {
		f->p++;
		return true;
	}
	return false;
}

static int hex4(const char *p)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		int d = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* A string at f->p; *out (when out) its bytes in the baseline's arena, escapes
 * decoded. false: not a string, or one the fast reader leaves to json-c. */
static bool fast_str(struct fast *f, char **out)
{
	fast_ws(f);
	if (f->p >= f->end || *f->p != '"')
		return false;
	const char *q = ++f->p;
	bool plain = true;
	while (q < f->end && *q != '"') {
		if ((unsigned char)*q < 0x20)
			return false;
		if (*q == '\\') {
			plain = false;
			q++;
		}
		q++;
	}
	if (q >= f->end)
		return false;
	size_t n = (size_t)(q - f->p);
	if (out) {
		char *d = *out = ali_arena_strndup(&f->bl->strings, f->p, n);
		if (!d)
			return false;
		if (!plain) { /* decode in place: never longer than the escaped text */
			size_t k = 0;
			for (const char *r = f->p; r < q; r++) {
				if (*r != '\\') {
					d[k++] = *r;
					continue;
				}
				char e = *++r;
				const char *simple = strchr("\"\\/bfnrt", e);
				if (e && simple) {
					d[k++] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
					continue;
				}
				if (e != 'u' || q - r < 5)
					return false;
				int u = hex4(r + 1);
				r += 4;
				if (u <= 0 || (u >= 0xd800 && u <= 0xdfff))
					return false; /* NUL and surrogates: json-c's */
				if (u < 0x80) {
					d[k++] = (char)u;
				} else if (u < 0x800) {
					d[k++] = (char)(0xc0 | (u >> 6));
					d[k++] = (char)(0x80 | (u & 0x3f));
				} else {
					d[k++] = (char)(0xe0 | (u >> 12));
					d[k++] = (char)(0x80 | ((u >> 6) & 0x3f));
					d[k++] = (char)(0x80 | (u & 0x3f));
				}
			}
			d[k] = 0;
		}
	} else {
		for (const char *r = f->p; r < q; r++) { /* escapes checked as when decoding */
			if (*r != '\\')
				continue;
			char e = *++r;
			if (!e || !strchr("\"\\/bfnrtu", e))
				return false;
			if (e == 'u' && (q - r < 5 || hex4(r + 1) < 0))
				return false;
			if (e == 'u')
				r += 4;
		}
	}
	f->p = q + 1;
	return true;
}

/* An object's key into buf (keys are short, without escapes: others are json-c's). */
static bool fast_key(struct fast *f, char *buf, size_t cap)
{
	fast_ws(f);
	if (f->p >= f->end || *f->p != '"')
		return false;
	const char *q = f->p + 1;
	size_t k = 0;
	while (q < f->end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20 && k + 1 < cap)
		buf[k++] = *q++;
	if (q >= f->end || *q != '"')
		return false;
	buf[k] = 0;
	f->p = q + 1;
	return fast_lit(f, ':');
}

/* Skip any value (depth-limited, as json-c's 32). */
static bool fast_skip(struct fast *f, int depth)
{
	fast_ws(f);
	if (f->p >= f->end || depth > 32)
		return false;
	char c = *f->p;
	if (c == '"')
		return fast_str(f, NULL);
	if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		f->p++;
		if (fast_lit(f, close))
			return true;
		do {
			if (c == '{' && (!fast_str(f, NULL) || !fast_lit(f, ':')))
				return false;
			if (!fast_skip(f, depth + 1))
				return false;
		} while (fast_lit(f, ','));
		return fast_lit(f, close);
	}
	static const char *const words[] = {"true", "false", "null"};
	for (int i = 0; i < 3; i++) {
		size_t n = strlen(words[i]);
		if ((size_t)(f->end - f->p) >= n && memcmp(f->p, words[i], n) == 0) {
			f->p += n;
			return true;
		}
	}
	/* a number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
	const char *p = f->p;
	if (p < f->end && *p == '-')
		p++;
	if (p >= f->end || *p < '0' || *p > '9')
		return false;
	if (*p == '0')
		p++;
	else
		while (p < f->end && *p >= '0' && *p <= '9')
			p++;
	if (p < f->end && *p == '.') {
		if (++p >= f->end || *p < '0' || *p > '9')
			return false;
		while (p < f->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < f->end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < f->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= f->end || *p < '0' || *p > '9')
			return false;
		while (p < f->end && *p >= '0' && *p <= '9')
			p++;
	}
	f->p = p;
	return true;
}

/* One entry of "findings": an object whose model, layer and rule are strings
 * (the last of a repeated key, as json-c), added to the table. */
static bool fast_entry(struct fast *f)
{
	struct baseline *bl = f->bl;
	if (!fast_lit(f, '{'))
		return false;
	struct bentry b = {0};
	if (!fast_lit(f, '}')) {
		do {
			char key[32];
			if (!fast_key(f, key, sizeof key))
				return false;
			char **field = strcmp(key, "model") == 0 ? &b.model : strcmp(key, "layer") == 0 ? &b.layer
				     : strcmp(key, "rule") == 0 ? &b.rule : NULL;
			if (field ? !fast_str(f, field) : !fast_skip(f, 2))
				return false;
		} while (fast_lit(f, ','));
		if (!fast_lit(f, '}'))
			return false;
	}
	if (!b.model || !b.layer || !b.rule)
		return false;
	if (bl->n == bl->cap) {
		size_t cap = bl->cap ? 2 * bl->cap : 1024;
		struct bentry *v = realloc(bl->e, cap * sizeof *v);
		if (!v)
			return false;
		bl->e = v;
		bl->cap = cap;
	}
	bl->e[bl->n++] = b;
	return ali_hashtab_add(&bl->by_key, entry_hash(b.model, b.layer, b.rule), bl->n - 1);
}

static bool fast_baseline(struct baseline *bl, const char *buf, size_t n)
{
	struct fast f = {.p = buf, .end = buf + n, .bl = bl};
	bool version = false, findings = false;
	if (!fast_lit(&f, '{') || fast_lit(&f, '}'))
		return false;
	do {
		char key[32];
		if (!fast_key(&f, key, sizeof key))
			return false;
		if (strcmp(key, "anelint_baseline") == 0) {
			fast_ws(&f);
			if (f.end - f.p < 2 || f.p[0] != '1' || strchr("0123456789.eE", f.p[1]))
				return false;
			f.p++;
			version = true;
		} else if (strcmp(key, "findings") == 0) {
			if (findings || !fast_lit(&f, '['))
				return false; /* a second "findings" replaces the first: json-c's */
			findings = true;
			if (!fast_lit(&f, ']')) {
				do {
					if (!fast_entry(&f))
						return false;
				} while (fast_lit(&f, ','));
				if (!fast_lit(&f, ']'))
					return false;
			}
		} else if (!fast_skip(&f, 1)) {
			return false;
		}
	} while (fast_lit(&f, ','));
	if (!fast_lit(&f, '}'))
		return false;
	fast_ws(&f);
	return version && findings && f.p == f.end;
}

/* Undo a fast read that gave up: json-c reads the file from scratch. */
static void fast_reset(struct baseline *bl)
{
	free(bl->e);
	bl->e = NULL;
	bl->n = bl->cap = 0;
	ali_hashtab_free(&bl->by_key);
	ali_arena_free(&bl->strings);
}

static int load_baseline(struct baseline *bl, const char *path)
{
	al_diags *d = al_diags_new();
	int fd;
	struct stat st;
	if (!d)
		return EXIT_IO;
	enum al_status ost = ali_open_regular(path, NULL, &fd, &st, d);
	if (ost != AL_OK) {
		print_errors(path, d);
		if (access(path, F_OK) != 0) /* none yet: how to make one */
			fputs("anelint: make the baseline first: --write-baseline FILE records today's findings\n", stderr);
		al_diags_free(d);
		return status_exit(ost);
	}
	al_diags_free(d);
	if (st.st_size > (off_t)BASELINE_MAX) {
		close(fd);
		error_at(path, "baseline larger than %u bytes", BASELINE_MAX);
		return EXIT_INVALID;
	}
	size_t cap = (size_t)st.st_size + 1, n = 0;
	char *buf = malloc(cap);
	if (!buf) {
		close(fd);
		return EXIT_IO;
	}
	for (;;) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == cap - 1)
			break;
	}
	close(fd);
	buf[n] = 0;
	if (fast_baseline(bl, buf, n)) {
		free(buf);
		return EXIT_ALL_ANE;
	}
	fast_reset(bl);
	json_tokener *tok = json_tokener_new_ex(32);
	json_object *root = tok ? json_tokener_parse_ex(tok, buf, (int)n) : NULL;
	enum json_tokener_error jerr = tok ? json_tokener_get_error(tok) : json_tokener_error_depth;
	size_t at = tok ? json_tokener_get_parse_end(tok) : 0;
	json_tokener_free(tok);
	free(buf);
	json_object *arr = NULL, *ver = NULL;
	if (!root || jerr != json_tokener_success) {
		error_at(path, "not a baseline: JSON error at byte %zu: %s", at, json_tokener_error_desc(jerr));
		json_object_put(root);
		return EXIT_INVALID;
	}
	if (!json_object_object_get_ex(root, "anelint_baseline", &ver) || json_object_get_int(ver) != 1 ||
	    !json_object_object_get_ex(root, "findings", &arr) || !json_object_is_type(arr, json_type_array)) {
		error_at(path, "not a baseline: expected {\"anelint_baseline\": 1, \"findings\": [...]} "
			       "(anelint --write-baseline writes one)");
		json_object_put(root);
		return EXIT_INVALID;
	}
	size_t len = json_object_array_length(arr);
	bl->e = calloc(len ? len : 1, sizeof *bl->e);
	if (!bl->e || !ali_hashtab_reserve(&bl->by_key, len)) {
		json_object_put(root);
		return EXIT_IO;
	}
	for (size_t i = 0; i < len; i++) {
		json_object *e = json_object_array_get_idx(arr, i), *m, *l, *r;
		if (!json_object_is_type(e, json_type_object) || !json_object_object_get_ex(e, "model", &m) ||
		    !json_object_object_get_ex(e, "layer", &l) || !json_object_object_get_ex(e, "rule", &r) ||
		    !json_object_is_type(m, json_type_string) || !json_object_is_type(l, json_type_string) ||
		    !json_object_is_type(r, json_type_string)) {
			fputs("anelint: error: ", stderr);
			put_text(stderr, path, CLI_NAME_MAX);
			fprintf(stderr, ": findings[%zu]: expected an object with the strings model, layer, rule\n", i);
			json_object_put(root);
			return EXIT_INVALID;
		}
		struct bentry *b = &bl->e[bl->n++];
		b->model = ali_arena_strndup(&bl->strings, json_object_get_string(m), (size_t)json_object_get_string_len(m));
		b->layer = ali_arena_strndup(&bl->strings, json_object_get_string(l), (size_t)json_object_get_string_len(l));
		b->rule = ali_arena_strndup(&bl->strings, json_object_get_string(r), (size_t)json_object_get_string_len(r));
		if (!b->model || !b->layer || !b->rule ||
		    !ali_hashtab_add(&bl->by_key, entry_hash(b->model, b->layer, b->rule), bl->n - 1)) {
			json_object_put(root);
			return EXIT_IO;
		}
	}
	json_object_put(root);
	return EXIT_ALL_ANE;
}

struct bw {
	json_object *arr;
	const char *anchor;
	const struct al_submodel *s;
	char *key;
	struct ci *ci;
	struct ali_hashtab seen; /* the entries of arr by (model, layer, rule) */
	bool nomem;
};

static bool json_entry_eq(size_t item, const void *key, void *ctx)
{
	json_object *e = json_object_array_get_idx(ctx, item);
	const struct entry_key *k = key;
	return strcmp(json_object_get_string(json_object_object_get(e, "rule")), k->rule) == 0 &&
	       strcmp(json_object_get_string(json_object_object_get(e, "model")), k->model) == 0 &&
	       strcmp(json_object_get_string(json_object_object_get(e, "layer")), k->layer) == 0;
}

static void add_bentry(struct bw *w, const char *layer, const struct al_rule *r)
{
	const char *kind;
	if (ci_accepted(w->ci, w->s, *layer ? layer : NULL, r, &kind))
		return; /* suppressed in the configuration or the model: not the baseline's */
	struct entry_key k = {w->key, layer, r->id};
	uint64_t h = entry_hash(k.model, k.layer, k.rule);
	if (ali_hashtab_find(&w->seen, h, json_entry_eq, &k, w->arr) != SIZE_MAX)
		return; /* once per (model, layer, rule) */
	if (!ali_hashtab_add(&w->seen, h, json_object_array_length(w->arr))) {
		w->nomem = true;
		return;
	}
	json_object *e = json_object_new_object();
	json_object_object_add(e, "model", json_object_new_string(w->key));
	json_object_object_add(e, "layer", json_object_new_string(layer));
	json_object_object_add(e, "rule", json_object_new_string(r->id));
	json_object_array_add(w->arr, e);
}

static void node_entries(void *ctx, const struct al_node *n)
{
	struct bw *w = ctx;
	const struct al_verdict *v = &n->verdict;
	for (uint32_t i = 0; i < v->n_rules; i++)
		if (v->rules[i]->kind != AL_RULE_WARN)
			add_bentry(w, n->name ? n->name : "", v->rules[i]);
	/* the rule that moved it, keyed as ali_reason_fails keys it: by the layer,
	 * or a whole-model move by the model ("") */
	if (v->moved_by && ali_verdict_moved(v) && !ali_move_follows(v)) { /* ANE073-075 follow their cause */
		const char *layer = ali_move_layer(n, v);
		add_bentry(w, layer ? layer : "", v->moved_by);
	}
}

static bool write_json(int fd, void *ctx)
{
	const char *s = json_object_to_json_string_ext(ctx, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								    JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t n = strlen(s);
	while (n) {
		ssize_t k = write(fd, s, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		s += k;
		n -= (size_t)k;
	}
	return write(fd, "\n", 1) == 1;
}

/* Sorted: the file changes only where findings change (a diff a reviewer reads). */
static int entry_cmp(const void *a, const void *b)
{
	json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b;
	static const char *const keys[] = {"model", "layer", "rule"};
	for (int i = 0; i < 3; i++) {
		int c = strcmp(json_object_get_string(json_object_object_get(x, keys[i])),
			       json_object_get_string(json_object_object_get(y, keys[i])));
		if (c)
			return c;
	}
	return 0;
}

/* --write-baseline, a model at a time: ci_baseline_begin, ci_baseline_add per
 * item (its findings are copied: the model may be freed after), ci_baseline_end. */
struct ci_baseline_writer {
	char *path, *anchor;
	struct bw w;
};

struct ci_baseline_writer *ci_baseline_begin(struct ci *ci, const char *path)
{
	struct ci_baseline_writer *b = calloc(1, sizeof *b);
	if (!b || !(b->path = strdup(path)) || !(b->w.arr = json_object_new_array())) {
		if (b)
			free(b->path);
		free(b);
		fprintf(stderr, "anelint: error: out of memory\n");
		return NULL;
	}
	char *anchor = dir_of(path); /* the directory the file goes in (it may not exist yet) */
	if (!anchor) {
		char *copy = strdup(path);
		char *slash = copy ? strrchr(copy, '/') : NULL;
		if (slash)
			*slash = 0;
		anchor = realpath(slash ? copy : ".", NULL);
		free(copy);
	}
	b->anchor = anchor;
	b->w.anchor = anchor;
	b->w.ci = ci;
	return b;
}

void ci_baseline_add(struct ci_baseline_writer *b, const struct al_report_item *it)
{
	struct bw *w = &b->w;
	for (size_t k = 0; it->model && k < al_model_count(it->model); k++) {
		const struct al_submodel *s = al_model_get(it->model, k);
		w->s = s;
		w->key = model_key(s, b->anchor);
		if (!w->key)
			continue;
		ali_walk_nodes(s, node_entries, w);
		for (uint32_t f = 0; f < s->n_findings; f++)
			if (s->findings[f].rule->kind != AL_RULE_WARN)
				add_bentry(w, "", s->findings[f].rule);
		free(w->key);
		w->key = NULL;
	}
}

int ci_baseline_end(struct ci_baseline_writer *b, bool write)
{
	if (!b)
		return EXIT_IO;
	json_object *arr = b->w.arr;
	enum al_status st = AL_OK;
	ali_hashtab_free(&b->w.seen);
	if (b->w.nomem) {
		fprintf(stderr, "anelint: error: out of memory\n");
		st = AL_E_NOMEM;
		write = false;
	}
	if (write) {
		json_object *root = json_object_new_object();
		json_object_array_sort(arr, entry_cmp);
		json_object_object_add(root, "anelint_baseline", json_object_new_int(1));
		json_object_object_add(root, "note", json_object_new_string(
			"findings anelint accepts (--baseline): model (relative to this file), layer ('' for the "
			"model), rule; written by anelint --write-baseline"));
		json_object_object_add(root, "findings", arr);
		arr = NULL;
		al_diags *d = al_diags_new();
		st = d ? ali_write_atomic(b->path, write_json, root, d) : AL_E_NOMEM;
		if (st != AL_OK && d)
			print_errors(b->path, d);
		al_diags_free(d);
		json_object_put(root);
	}
	json_object_put(arr);
	free(b->anchor);
	free(b->path);
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

/* ================================================================ the configuration */

static const char *const top_keys[] = {"target", "targets", "os", "policy", "fail_on", "rules", "select",
				       "ignore", "baseline", "switch_cost", "compute_units", "information_uri"};
static const char *const sup_keys[] = {"model", "layer", "rule", "reason"};
static const char *const model_keys[] = {"path", "fail_on", "target", "os", "compute_units", "policy",
					 "select", "ignore", "baseline"};
#define N_MODEL_KEYS (sizeof model_keys / sizeof *model_keys)
static const char *const tables[] = {"suppress", "model"};

static void cfg_error(const struct ci *ci, const struct ali_cfg_entry *e, const char *msg, const char *arg,
		      const char *hint)
{
	fputs("anelint: error: ", stderr);
	put_text(stderr, ci->cfg_path, CLI_NAME_MAX);
	fprintf(stderr, ": line %u: ", e->line);
	const char *conv = strstr(msg, "%s");
	if (conv) {
		fwrite(msg, 1, (size_t)(conv - msg), stderr);
		put_text(stderr, arg, CLI_NAME_MAX);
		fputs(conv + 2, stderr);
	} else {
		fputs(msg, stderr);
	}
	if (hint) {
		fputs(" (did you mean '", stderr);
		put_text(stderr, hint, CLI_NAME_MAX);
		fputs("'?)", stderr);
	}
	fputc('\n', stderr);
}

/* A path from the configuration: relative to its directory. */
static const char *cfg_path(struct ci *ci, const char *p)
{
	if (p[0] == '/' || !ci->cfg_dir)
		return own(ci, p);
	size_t n = strlen(ci->cfg_dir) + strlen(p) + 2;
	char *s = malloc(n);
	if (!s)
		return NULL;
	snprintf(s, n, "%s/%s", ci->cfg_dir, p);
	const char *r = own(ci, s);
	free(s);
	return r;
}

static const char *want_string(const struct ci *ci, const struct ali_cfg_entry *e)
{
	if (e->v.type == AL_CFG_STRING)
		return e->v.s;
	cfg_error(ci, e, "'%s' takes a \"string\"", e->key, NULL);
	return NULL;
}

static int parse_fail_on(const char *s)
{
	static const char *const names[] = {"any", "cpu", "gpu", "never", "uncertain"};
	for (int i = 0; i < 5; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

/* Whether spec names targets (tg) or OS releases as --target / --os would
 * (al_where_parse with flags): an id, and unless AL_WHERE_ONE `all` or a list. */
static bool known_ids(bool tg, const char *spec, unsigned flags)
{
	struct al_where_spec w;
	return al_where_parse(tg ? spec : NULL, tg ? NULL : spec, NULL, flags, &w, NULL) == AL_OK;
}

/* Whether s names compute units, as --compute-units would. */
static bool known_compute_units(const char *s)
{
	struct al_where_spec w;
	return al_where_parse(NULL, NULL, s, 0, &w, NULL) == AL_OK;
}

/* A list of ids for --target / --os: a "string" (itself a comma list) or an
 * array of strings, joined with commas; NULL after an error. */
static const char *want_ids(struct ci *ci, const struct ali_cfg_entry *e, const char *what)
{
	if (e->v.type == AL_CFG_STRING) { /* "a17", "all" or "a17,m1": each one known */
		bool tg = strcmp(what, "targets") == 0;
		if (!known_ids(tg, e->v.s, 0)) {
			char msg[128];
			snprintf(msg, sizeof msg, "'%%s' is not a list of known %s ('anelint targets')", what);
			cfg_error(ci, e, msg, e->v.s, NULL);
			return NULL;
		}
		return own(ci, e->v.s);
	}
	if (e->v.type != AL_CFG_ARRAY || !e->v.n_items) {
		cfg_error(ci, e, "'%s' takes a \"string\" or a list of them", e->key, NULL);
		return NULL;
	}
	size_t n = 1;
	for (size_t j = 0; j < e->v.n_items; j++) {
		const char *it = e->v.items[j];
		bool tg = strcmp(what, "targets") == 0;
		if (!known_ids(tg, it, AL_WHERE_ONE)) {
			char msg[128];
			snprintf(msg, sizeof msg, "a list of %s holds ids ('anelint targets'), not '%%s'", what);
			cfg_error(ci, e, msg, it, NULL);
			return NULL;
		}
		n += strlen(it) + 1;
	}
	char *joined = malloc(n);
	if (!joined)
		return NULL;
	joined[0] = 0;
	for (size_t j = 0; j < e->v.n_items; j++)
		strcat(strcat(joined, j ? "," : ""), e->v.items[j]);
	const char *r = own(ci, joined);
	free(joined);
	return r;
}

/* select / ignore: a "string" (a comma list) or an array of them, into *sel. */
static int want_selectors(struct ci *ci, const struct ali_cfg_entry *e, char ***v, size_t *n)
{
	if (e->v.type == AL_CFG_STRING)
		return add_selectors(ci, v, n, e->v.s) ? EXIT_ALL_ANE : EXIT_IO;
	if (e->v.type == AL_CFG_ARRAY) {
		for (size_t j = 0; j < e->v.n_items; j++)
			if (!add_selectors(ci, v, n, e->v.items[j]))
				return EXIT_IO;
		return EXIT_ALL_ANE;
	}
	cfg_error(ci, e, "'%s' takes a list of rule ids, e.g. [\"ANE046\", \"ANE07\"]", e->key, NULL);
	return EXIT_USAGE;
}

static bool bare_scheme_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '+' ||
	       ch == '-' || ch == '.';
}

/* information_uri: an absolute URI (scheme:...), printable ASCII without spaces. */
static bool uri_ok(const char *s)
{
	size_t n = strlen(s), i = 0;
	if (!n || n > 2000 || !((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z'))
		return false;
	while (i < n && (bare_scheme_char(s[i])))
		i++;
	if (i == n || s[i] != ':' || i + 1 == n)
		return false;
	for (size_t k = 0; k < n; k++)
		if ((unsigned char)s[k] <= ' ' || (unsigned char)s[k] >= 0x7f || strchr("\"<>\\^`{|}", s[k]))
			return false;
	return true;
}

/* Apply the configuration's top-level keys to the options not given on the
 * command line; collect suppressions and per-model settings. */
static int apply_config(struct ci *ci, struct cli *c)
{
	const struct ali_config *cfg = ci->cfg;
	const struct ali_cfg_entry *targets_at = NULL, *os_at = NULL;
	for (size_t i = 0; i < cfg->n; i++) {
		const struct ali_cfg_entry *e = &cfg->e[i];
		if (e->table && !e->array_table) {
			cfg_error(ci, e, "[%s] is not a table anelint reads: [[suppress]] and [[model]] are", e->table,
				  ci_nearest(e->table, tables, 2));
			return EXIT_USAGE;
		}
		if (e->table && strcmp(e->table, "suppress") != 0 && strcmp(e->table, "model") != 0) {
			cfg_error(ci, e, "[[%s]] is not a table anelint reads: [[suppress]] and [[model]] are", e->table,
				  ci_nearest(e->table, tables, 2));
			return EXIT_USAGE;
		}
		if (e->table)
			continue;
		size_t k;
		for (k = 0; k < sizeof top_keys / sizeof *top_keys; k++)
			if (strcmp(e->key, top_keys[k]) == 0)
				break;
		if (k == sizeof top_keys / sizeof *top_keys) {
			cfg_error(ci, e, "unknown key '%s'", e->key,
				  ci_nearest(e->key, top_keys, sizeof top_keys / sizeof *top_keys));
			return EXIT_USAGE;
		}
		if (strcmp(e->key, "select") == 0 || strcmp(e->key, "ignore") == 0) {
			bool sel = e->key[0] == 's';
			/* the command line's selection replaces the configuration's */
			if ((sel ? c->select.n : c->ignore.n) > 0)
				continue;
			int rc = want_selectors(ci, e, sel ? &ci->top.sel : &ci->top.ign, sel ? &ci->top.n_sel : &ci->top.n_ign);
			if (rc)
				return rc;
			continue;
		}
		if (strncmp(e->key, "target", 6) == 0 || strcmp(e->key, "os") == 0) {
			bool tg = e->key[0] == 't';
			if (tg && targets_at) {
				cfg_error(ci, e, "'%s' and 'target' name the same setting: give one", "targets", NULL);
				return EXIT_USAGE;
			}
			if (tg)
				targets_at = e;
			else
				os_at = e;
			const char *ids = want_ids(ci, e, tg ? "targets" : "OS releases");
			if (!ids)
				return EXIT_USAGE;
			if (targets_at && os_at && targets_at->v.type == AL_CFG_STRING && os_at->v.type == AL_CFG_STRING &&
			    strcmp(targets_at->v.s, "all") == 0 && strcmp(os_at->v.s, "all") == 0) {
				cfg_error(ci, e, "target \"all\" with os \"all\" would be too many verdict columns: list "
						 "the ones to compare, e.g. targets = [\"a14\", \"a17\"], os = [\"ios17\", "
						 "\"ios18\"] (%s)", "the cross product", NULL);
				return EXIT_USAGE;
			}
			const char **field = tg ? &c->target : &c->os;
			if (!*field)
				*field = ids;
			continue;
		}
		const char *s = want_string(ci, e);
		if (!s)
			return EXIT_USAGE;
		if (strcmp(e->key, "compute_units") == 0 || strcmp(e->key, "policy") == 0 ||
		    strcmp(e->key, "fail_on") == 0) { /* refused here, where the line is known */
			enum al_policy pol;
			if (e->key[0] == 'c' && !known_compute_units(s)) {
				cfg_error(ci, e, "compute_units takes all, cpu-and-gpu, cpu-and-ne or cpu-only, not '%s'",
					  s, NULL);
				return EXIT_USAGE;
			}
			if (e->key[0] == 'p' && !al_policy_parse(s, &pol)) {
				cfg_error(ci, e, "policy takes auto, nn2020, mlprogram or optimistic, not '%s'", s, NULL);
				return EXIT_USAGE;
			}
			if (e->key[0] == 'f' && parse_fail_on(s) < 0) {
				cfg_error(ci, e, "fail_on takes any, cpu, gpu, uncertain or never, not '%s'", s, NULL);
				return EXIT_USAGE;
			}
		}
		if (strcmp(e->key, "information_uri") == 0) {
			if (!uri_ok(s)) {
				cfg_error(ci, e, "information_uri takes an absolute URI (https://...), not '%s'", s, NULL);
				return EXIT_USAGE;
			}
			ci->information_uri = own(ci, s);
			continue;
		}
		const char **field = strcmp(e->key, "policy") == 0 ? &c->policy
				   : strcmp(e->key, "fail_on") == 0 ? &c->fail_on
				   : strcmp(e->key, "switch_cost") == 0 ? &c->switch_cost
				   : strcmp(e->key, "compute_units") == 0 ? &c->compute_units
				   : strcmp(e->key, "rules") == 0 ? &c->rules
				   : &c->baseline;
		if (*field || (field == &c->baseline && c->write_baseline))
			continue; /* the command line wins */
		bool is_path = field == &c->rules || field == &c->baseline;
		*field = is_path ? cfg_path(ci, s) : own(ci, s);
		if (!*field)
			return EXIT_IO;
	}
	/* [[suppress]] and [[model]]: one element per index */
	for (size_t i = 0; i < cfg->n; i++) {
		const struct ali_cfg_entry *e = &cfg->e[i];
		if (!e->table)
			continue;
		bool sup = strcmp(e->table, "suppress") == 0;
		const char *const *keys = sup ? sup_keys : model_keys;
		size_t nk = sup ? 4 : N_MODEL_KEYS;
		size_t k;
		for (k = 0; k < nk; k++)
			if (strcmp(e->key, keys[k]) == 0)
				break;
		if (k == nk) {
			cfg_error(ci, e, "unknown key '%s'", e->key, ci_nearest(e->key, keys, nk));
			return EXIT_USAGE;
		}
		if (sup) {
			const char *s = want_string(ci, e);
			if (!s)
				return EXIT_USAGE;
			while (ci->n_sup <= e->index) {
				if (ci->n_sup == ci->cap_sup) {
					size_t cap = ci->cap_sup ? 2 * ci->cap_sup : 16;
					struct sup *v = realloc(ci->sup, cap * sizeof *v);
					if (!v)
						return EXIT_IO;
					ci->sup = v;
					ci->cap_sup = cap;
				}
				memset(&ci->sup[ci->n_sup++], 0, sizeof *ci->sup);
			}
			struct sup *x = &ci->sup[e->index];
			x->line = x->line ? x->line : e->line;
			const char **f = k == 0 ? &x->model : k == 1 ? &x->layer : k == 2 ? &x->rule : &x->reason;
			*f = own(ci, s);
			continue;
		}
		while (ci->n_pm <= e->index) {
			struct per_model *v = realloc(ci->pm, (ci->n_pm + 1) * sizeof *v);
			if (!v)
				return EXIT_IO;
			ci->pm = v;
			ci->pm[ci->n_pm++] = (struct per_model){.glob = NULL, .fail_on = -1};
		}
		struct per_model *x = &ci->pm[e->index];
		x->line = x->line ? x->line : e->line;
		const char *key = model_keys[k];
		if (strcmp(key, "select") == 0 || strcmp(key, "ignore") == 0) {
			bool sel = key[0] == 's';
			x->has_sel = true;
			*(sel ? &x->sel_line : &x->ign_line) = e->line;
			int rc = want_selectors(ci, e, sel ? &x->sel.sel : &x->sel.ign, sel ? &x->sel.n_sel : &x->sel.n_ign);
			if (rc)
				return rc;
			continue;
		}
		if (strcmp(key, "target") == 0 || strcmp(key, "os") == 0) {
			bool tg = key[0] == 't';
			const char *ids = want_ids(ci, e, tg ? "targets" : "OS releases");
			if (!ids)
				return EXIT_USAGE;
			*(tg ? &x->target : &x->os) = ids;
			*(tg ? &x->target_line : &x->os_line) = e->line;
			continue;
		}
		const char *s = want_string(ci, e);
		if (!s)
			return EXIT_USAGE;
		if (strcmp(key, "path") == 0) {
			x->glob = own(ci, s);
		} else if (strcmp(key, "fail_on") == 0) {
			if ((x->fail_on = parse_fail_on(s)) < 0) {
				cfg_error(ci, e, "fail_on takes any, cpu, gpu, uncertain or never, not '%s'", s, NULL);
				return EXIT_USAGE;
			}
		} else if (strcmp(key, "compute_units") == 0) {
			if (!known_compute_units(s)) {
				cfg_error(ci, e, "compute_units takes all, cpu-and-gpu, cpu-and-ne or cpu-only, not '%s'", s,
					  NULL);
				return EXIT_USAGE;
			}
			x->compute_units = own(ci, s);
		} else if (strcmp(key, "policy") == 0) {
			enum al_policy pol;
			if (!al_policy_parse(s, &pol)) {
				cfg_error(ci, e, "policy takes auto, nn2020, mlprogram or optimistic, not '%s'", s, NULL);
				return EXIT_USAGE;
			}
			x->policy = own(ci, s);
		} else { /* baseline */
			x->base.path = (char *)cfg_path(ci, s);
			if (!x->base.path)
				return EXIT_IO;
		}
	}
	for (size_t i = 0; i < ci->n_sup; i++) {
		const struct sup *x = &ci->sup[i];
		struct ali_cfg_entry at = {.line = x->line};
		if (!x->rule) {
			cfg_error(ci, &at, "[[suppress]] needs a rule (an id, a prefix or a name)", NULL, NULL);
			return EXIT_USAGE;
		}
		if (!x->reason || !x->reason[strspn(x->reason, " \t")]) {
			cfg_error(ci, &at, "[[suppress]] of %s needs a reason: why the finding is accepted", x->rule,
				  NULL);
			return EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < ci->n_pm; i++)
		if (!ci->pm[i].glob) {
			struct ali_cfg_entry at = {.line = ci->pm[i].line};
			cfg_error(ci, &at, "[[model]] needs a path (a glob of model paths)", NULL, NULL);
			return EXIT_USAGE;
		}
	return EXIT_ALL_ANE;
}

bool ci_model_cli(const struct ci *ci, const char *path, const struct cli *c, struct cli *out, uint32_t *line)
{
	*out = *c;
	bool own_opts = false;
	struct al_submodel sm = {.path = path, .file = path};
	char *key = ci && ci->n_pm ? model_key(&sm, ci->cfg_dir) : NULL; /* once, not per [[model]] */
	for (size_t i = 0; key && i < ci->n_pm; i++) {
		const struct per_model *x = &ci->pm[i];
		if (!glob_key(x->glob, key))
			continue;
		if (x->target && !ci->cl_target)
			out->target = x->target, own_opts = true, *line = x->target_line;
		if (x->os && !ci->cl_os)
			out->os = x->os, own_opts = true, *line = x->os_line;
		if (x->compute_units && !ci->cl_cu)
			out->compute_units = x->compute_units, own_opts = true;
		if (x->policy && !ci->cl_policy)
			out->policy = x->policy, own_opts = true;
		if (x->has_sel && !ci->cl_select && !ci->cl_ignore)
			own_opts = true;
	}
	free(key);
	return own_opts;
}

void ci_model_selection(struct ci *ci, const char *path, struct al_check_opts *check)
{
	struct al_submodel sm = {.path = path, .file = path};
	char *key = ci && ci->n_pm ? model_key(&sm, ci->cfg_dir) : NULL; /* once, not per [[model]] */
	for (size_t i = 0; key && i < ci->n_pm; i++) /* the last [[model]] with a selection wins */
		if (ci->pm[i].has_sel && !ci->cl_select && !ci->cl_ignore && glob_key(ci->pm[i].glob, key)) {
			check->rule_on = ci_rule_on;
			check->rule_on_ctx = &ci->pm[i].sel;
		}
	free(key);
}

const char *ci_information_uri(const struct ci *ci)
{
	return ci ? ci->information_uri : NULL;
}

/* anelint.toml, then .anelint.toml, in dir and each parent. */
static char *find_config(const char *start)
{
	char *dir = realpath(start, NULL);
	for (int depth = 0; dir && depth < 64; depth++) {
		static const char *const names[] = {"anelint.toml", ".anelint.toml"};
		for (int i = 0; i < 2; i++) {
			size_t n = strlen(dir) + strlen(names[i]) + 2;
			char *p = malloc(n);
			if (!p)
				break;
			snprintf(p, n, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, names[i]);
			struct stat st;
			if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
				free(dir);
				return p;
			}
			free(p);
		}
		if (strcmp(dir, "/") == 0)
			break;
		char *slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = 0;
		else if (slash)
			*slash = 0;
	}
	free(dir);
	return NULL;
}

static bool searched_dir(const char *path);

int ci_setup(struct cli *c, struct ci **out)
{
	struct ci *ci = calloc(1, sizeof *ci);
	*out = ci;
	if (!ci)
		return EXIT_IO;
	if (c->config && c->no_config)
		return usage_error(NULL, "--config and --no-config: give one%s", "");
	ci->cl_target = c->target, ci->cl_os = c->os, ci->cl_cu = c->compute_units, ci->cl_policy = c->policy;
	ci->cl_select = c->select.n > 0, ci->cl_ignore = c->ignore.n > 0;
	ci->cl_baseline = c->baseline || c->write_baseline;
	if (!c->no_config) {
		if (c->config) {
			ci->cfg_path = strdup(c->config);
		} else {
			if (c->n_paths > 0) { /* upward from the first model (a directory searched for
					       * models: from itself), else the working directory */
				char *d = searched_dir(c->paths[0]) ? realpath(c->paths[0], NULL) : dir_of(c->paths[0]);
				ci->cfg_path = d ? find_config(d) : NULL;
				free(d);
			}
			if (!ci->cfg_path)
				ci->cfg_path = find_config(".");
		}
	}
	if (ci->cfg_path) {
		al_diags *d = al_diags_new();
		if (!d)
			return EXIT_IO;
		enum al_status st = ali_config_load(ci->cfg_path, &ci->cfg, d);
		if (st != AL_OK) {
			print_errors(ci->cfg_path, d);
			al_diags_free(d);
			return st == AL_E_FORMAT ? EXIT_USAGE : status_exit(st);
		}
		al_diags_free(d);
		ci->cfg_dir = dir_of(ci->cfg_path);
		int rc = apply_config(ci, c);
		if (rc)
			return rc;
	}
	if (c->baseline && c->write_baseline)
		return usage_error(NULL, "--baseline and --write-baseline: give one%s", "");
	if (c->baseline && !c->write_baseline) {
		ci->base.path = strdup(c->baseline);
		ci->base.dir = dir_of(c->baseline);
		int rc = load_baseline(&ci->base, c->baseline);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < ci->n_pm && !c->write_baseline && !ci->cl_baseline; i++) {
		struct baseline *b = &ci->pm[i].base;
		if (!b->path)
			continue;
		b->dir = dir_of(b->path);
		int rc = load_baseline(b, b->path);
		if (rc)
			return rc;
	}
	return EXIT_ALL_ANE;
}

void ci_free(struct ci *ci)
{
	if (!ci)
		return;
	ali_config_free(ci->cfg);
	free(ci->cfg_path);
	free(ci->cfg_dir);
	free(ci->top.sel);
	free(ci->top.ign);
	free(ci->sup);
	for (size_t i = 0; i < ci->n_sup_lists; i++)
		free(ci->sup_lists[i].v);
	free(ci->sup_lists);
	ali_hashtab_free(&ci->by_rule);
	free_key_cache(ci);
	for (size_t i = 0; i < ci->n_pm; i++) {
		free(ci->pm[i].sel.sel);
		free(ci->pm[i].sel.ign);
		free_baseline(&ci->pm[i].base, false);
	}
	free(ci->pm);
	free_baseline(&ci->base, true);
	for (size_t i = 0; i < ci->n_owned; i++)
		free(ci->owned[i]);
	free(ci->owned);
	for (size_t i = 0; i < ci->n_path_copies; i++)
		free(ci->path_copies[i]);
	free(ci->path_copies);
	free(ci);
}

/* ================================================================ directories */

/* What a directory argument is searched for: one row per model format. */
static const struct model_ext {
	const char *ext;
	bool is_dir; /* a package directory: a model, not descended into */
} model_exts[] = {
	{".mlmodel", false},
	{".mlpackage", true},
	{".mlmodelc", true},
};
#define N_MODEL_EXTS (sizeof model_exts / sizeof model_exts[0])
/* Bounds of a directory argument's search; beyond them, a clear message and a
 * failing exit, never a silent skip (README "Exit codes"): a subdirectory
 * deeper than DIR_MAX_DEPTH is named in a warning and the run exits 3 at least;
 * more than DIR_MAX_MODELS models, or a directory of more than DIR_MAX_ENTRIES
 * entries, is an error (exit 3) before any model is read. */
#define DIR_MAX_DEPTH 32
#define DIR_MAX_MODELS 100000
#define DIR_MAX_ENTRIES 1000000

static const struct model_ext *model_ext_of(const char *name)
{
	size_t n = strlen(name);
	while (n > 1 && name[n - 1] == '/') /* "x.mlpackage/" */
		n--;
	for (size_t i = 0; i < N_MODEL_EXTS; i++) {
		size_t e = strlen(model_exts[i].ext);
		if (n > e && strcasecmp(name + n - e, model_exts[i].ext) == 0)
			return &model_exts[i];
	}
	return NULL;
}

/* Keep a model found: EXIT_ALL_ANE, or the error (printed) that ends the search. */
static int keep_path(struct ci *ci, char *p, const char *top)
{
	if (ci->n_path_copies >= DIR_MAX_MODELS) {
		free(p);
		error_at(top, "more than %u models under this directory (the limit of one run): check its "
			      "subdirectories in separate runs", DIR_MAX_MODELS);
		return EXIT_INVALID;
	}
	if (ci->n_path_copies == ci->cap_path_copies) {
		size_t cap = ci->cap_path_copies ? 2 * ci->cap_path_copies : 64;
		char **v = realloc(ci->path_copies, cap * sizeof *v);
		if (!v) {
			free(p);
			fprintf(stderr, "anelint: error: out of memory\n");
			return EXIT_IO;
		}
		ci->path_copies = v;
		ci->cap_path_copies = cap;
	}
	ci->path_copies[ci->n_path_copies++] = p;
	return EXIT_ALL_ANE;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every model under dir, in name order (so the output does not depend on the
 * file system's order); symbolic links to directories are not followed; a
 * subdirectory deeper than DIR_MAX_DEPTH below top is not searched and is named
 * in a warning (ci->deep_skipped: the run does not pass over it). */
static int search_dir(struct ci *ci, const char *dir, const char *top, int depth, size_t *found)
{
	DIR *dp = opendir(dir);
	if (!dp) {
		error_at(dir, "cannot read the directory: %s", strerror(errno));
		return EXIT_IO;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = EXIT_ALL_ANE;
	struct dirent *de;
	errno = 0;
	while ((de = readdir(dp))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == DIR_MAX_ENTRIES) {
			error_at(dir, "more than %u entries in this directory (the limit): its models are not "
				      "searched", DIR_MAX_ENTRIES);
			rc = EXIT_INVALID;
			break;
		}
		if (n == cap) {
			char **v = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *v);
			if (!v) {
				rc = EXIT_IO;
				break;
			}
			names = v;
		}
		if (!(names[n] = strdup(de->d_name))) {
			rc = EXIT_IO;
			break;
		}
		n++;
	}
	if (!de && errno && !rc) {
		error_at(dir, "cannot read the directory: %s", strerror(errno));
		rc = EXIT_IO;
	}
	closedir(dp);
	if (rc == EXIT_IO && errno == ENOMEM)
		fprintf(stderr, "anelint: error: out of memory\n");
	if (n && !rc)
		qsort(names, n, sizeof *names, name_cmp);
	for (size_t i = 0; i < n && !rc; i++) {
		size_t len = strlen(dir) + strlen(names[i]) + 2;
		char *p = malloc(len);
		if (!p) {
			rc = EXIT_IO;
			break;
		}
		snprintf(p, len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]);
		struct stat st;
		const struct model_ext *me = model_ext_of(names[i]);
		if (lstat(p, &st) != 0) {
			free(p);
			continue;
		}
		bool isdir = S_ISDIR(st.st_mode);
		if (me && me->is_dir == isdir) {
			if (!(rc = keep_path(ci, p, top)))
				(*found)++;
		} else if (isdir && !S_ISLNK(st.st_mode) && depth >= DIR_MAX_DEPTH) {
			fputs("anelint: warning: ", stderr);
			put_text(stderr, p, CLI_NAME_MAX);
			fprintf(stderr, ": not searched: more than %d directories below ", DIR_MAX_DEPTH);
			put_text(stderr, top, CLI_NAME_MAX);
			fputs(" (the limit); models in it are not checked, and the run fails (exit 3)\n", stderr);
			ci->deep_skipped++;
			free(p);
		} else if (isdir && !S_ISLNK(st.st_mode)) {
			rc = search_dir(ci, p, top, depth + 1, found);
			free(p);
		} else {
			free(p);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* A directory argument to search: not a model's own (a package, by its name or
 * its Manifest.json). */
static bool searched_dir(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || model_ext_of(path))
		return false;
	size_t n = strlen(path) + sizeof "/Manifest.json";
	char *m = malloc(n);
	bool manifest = false;
	if (m) {
		snprintf(m, n, "%s/Manifest.json", path);
		manifest = lstat(m, &st) == 0;
		free(m);
	}
	return !manifest;
}

int ci_expand_paths(struct ci *ci, struct cli *c)
{
	bool any = false;
	for (int i = 0; i < c->n_paths; i++)
		any |= searched_dir(c->paths[i]);
	if (!any)
		return EXIT_ALL_ANE;
	size_t n = 0;
	const char **paths = NULL;
	for (int i = 0; i < c->n_paths; i++) {
		size_t first = ci->n_path_copies, found = 0;
		if (searched_dir(c->paths[i])) {
			size_t deep = ci->deep_skipped;
			int rc = search_dir(ci, c->paths[i], c->paths[i], 0, &found);
			if (rc) {
				free(paths);
				return rc;
			}
			if (!found && ci->deep_skipped > deep) {
				error_at(c->paths[i], "no model within %d directories of this one (searched for .mlmodel, "
						      ".mlpackage and .mlmodelc, recursively); %zu deeper "
						      "director%s not searched (the limit)", DIR_MAX_DEPTH,
					 ci->deep_skipped - deep, ci->deep_skipped - deep == 1 ? "y was" : "ies were");
				free(paths);
				return EXIT_INVALID;
			}
			if (!found) {
				error_at(c->paths[i], "no model in this directory (searched for .mlmodel, .mlpackage "
						      "and .mlmodelc, recursively)");
				free(paths);
				return EXIT_INVALID;
			}
		}
		size_t add = found ? found : 1;
		const char **v = realloc(paths, (n + add) * sizeof *v);
		if (!v) {
			free(paths);
			return EXIT_IO;
		}
		paths = v;
		if (found)
			for (size_t k = 0; k < found; k++)
				paths[n++] = ci->path_copies[first + k];
		else
			paths[n++] = c->paths[i];
	}
	free((void *)c->paths); /* parse_args' array: main frees the new one */
	c->paths = paths;
	c->n_paths = (int)n;
	return EXIT_ALL_ANE;
}

int ci_unsearched_exit(const struct ci *ci)
{
	return ci && ci->deep_skipped ? EXIT_INVALID : EXIT_ALL_ANE;
}

const char *ci_config_path(const struct ci *ci)
{
	return ci ? ci->cfg_path : NULL;
}
