/* SPDX-License-Identifier: MIT */
/* ci.c: what `anelint check / plan / report` mean in CI (issue 19), as library
 * calls (al_ci_*, include/anelint.h; issue 32):
 *   - the project configuration (anelint.toml / .anelint.toml found upward from
 *     the first model, else from the working directory; a named file; none),
 *     parsed by src/report/config.c and given meaning here: defaults for the
 *     options, rule selection, suppressions, per-model settings ([[model]]), the
 *     baseline (docs/configuration.md);
 *   - rule selection (select / ignore, by rule id, id prefix or name): the rules
 *     left out are not evaluated (al_check_opts.rule_on);
 *   - accepted findings (al_report_opts.accepted): suppressions in the
 *     configuration (model glob, layer glob, rule, required reason), in the
 *     model's user-defined metadata (com.anelint.ignore), and a baseline (a file
 *     of accepted findings; al_ci_baseline_* records the current ones);
 *   - directory arguments searched recursively for models (one table of
 *     extensions);
 *   - "did you mean" for mistyped options, rule ids and configuration keys.
 * Nothing is printed: each error, warning and hint is kept as the line a tool
 * shows (ci_msg.c). Reading a baseline: ci_baseline.c; recording one:
 * ci_record.c; directory arguments: ci_paths.c. */
#include "ci_int.h"

#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

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

const char *al_nearest(const char *s, const char *const *cands, size_t n)
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

const char *al_rule_nearest(const char *token, const al_user_rules *u)
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
		best = al_nearest(token, names, 2 * n);
	}
	free(names);
	free(v);
	return best;
}

/* "did you mean 'X'? (see 'anelint rules')" and a newline. */
static void rule_hint(const struct al_ci *ci, const char *token, const al_user_rules *u)
{
	const char *best = al_rule_nearest(token, u);
	if (best) {
		ali_cmd_puts(ci, "did you mean '");
		ali_cmd_put(ci, best, SHOWN_NAME_MAX);
		ali_cmd_puts(ci, "'? ");
	}
	ali_cmd_puts(ci, "(see 'anelint rules')\n");
}

/* ================================================================ rule selection */

/* A selector: a rule id (any case), a prefix of ids ("ANE0", "ANE07"), or a rule name. */
static bool rule_matches(const char *sel, const struct al_rule *r)
{
	size_t n = strlen(sel);
	return (n && strncasecmp(r->id, sel, n) == 0) || (r->name && strcasecmp(r->name, sel) == 0);
}

static char *own(struct al_ci *ci, const char *s)
{
	if (ci->n_owned == ci->cap_owned) { /* doubling: a configuration has up to 8,192 strings */
		size_t cap = ci->cap_owned ? 2 * ci->cap_owned : 32;
		char **v = realloc(ci->owned, cap * sizeof *v);
		if (!v)
			return NULL;
		ci->owned = v;
		ci->cap_owned = cap;
	}
	char *d = ali_strdup(s);
	if (d)
		ci->owned[ci->n_owned++] = d;
	return d;
}

/* "a,b" -> a, b appended to *v */
static bool add_selectors(struct al_ci *ci, char ***v, size_t *n, const char *list)
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

static bool rule_on(const struct al_rule *r, void *ctx)
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
static enum al_status check_selectors(const struct al_ci *ci, char **v, size_t n, const char *opt,
				      const al_user_rules *u)
{
	const struct al_rule **rules;
	size_t nr = all_rules(u, &rules);
	enum al_status rc = AL_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		bool found = false;
		for (size_t k = 0; k < nr && !found; k++)
			found = rule_matches(v[i], rules[k]);
		if (!found) {
			ali_cmd_puts(ci, "anelint: ");
			ali_cmd_put(ci, opt, SHOWN_MSG_MAX); /* may hold the configuration's path */
			ali_cmd_puts(ci, ": no rule is named or starts with '");
			ali_cmd_put(ci, v[i], SHOWN_NAME_MAX);
			ali_cmd_puts(ci, "'; ");
			rule_hint(ci, v[i], u);
			rc = AL_E_INVALID_ARG;
		}
	}
	free(rules);
	return rc;
}

enum al_status al_ci_select(al_ci *ci, struct al_check_opts *check)
{
	if (!ci || !check)
		return AL_E_INVALID_ARG;
	struct selection *t = &ci->top;
	for (size_t i = 0; i < ci->cl_n_sel; i++)
		if (!add_selectors(ci, &t->sel, &t->n_sel, ci->cl_sel_v[i]))
			return AL_E_NOMEM;
	for (size_t i = 0; i < ci->cl_n_ign; i++)
		if (!add_selectors(ci, &t->ign, &t->n_ign, ci->cl_ign_v[i]))
			return AL_E_NOMEM;
	t->has_select = t->n_sel > 0;
	enum al_status rc = check_selectors(ci, t->sel, t->n_sel, "--select", check->user_rules);
	if (!rc)
		rc = check_selectors(ci, t->ign, t->n_ign, "--ignore", check->user_rules);
	for (size_t i = 0; i < ci->n_pm && !rc; i++) {
		struct selection *x = &ci->pm[i].sel;
		x->has_select = x->n_sel > 0;
		if (ci->pm[i].has_sel) {
			char where[600];
			snprintf(where, sizeof where, "error: %.400s: line %u: [[model]] select", ci->cfg_path,
				 ci->pm[i].sel_line);
			rc = check_selectors(ci, x->sel, x->n_sel, where, check->user_rules);
			snprintf(where, sizeof where, "error: %.400s: line %u: [[model]] ignore", ci->cfg_path,
				 ci->pm[i].ign_line);
			if (!rc)
				rc = check_selectors(ci, x->ign, x->n_ign, where, check->user_rules);
		}
	}
	if (!rc && (t->n_sel || t->n_ign)) {
		check->rule_on = rule_on;
		check->rule_on_ctx = t;
	}
	return rc;
}

/* ================================================================ paths and keys */

char *ali_cmd_dir_of(const char *path)
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
char *ali_cmd_model_key(const struct al_submodel *sm, const char *anchor)
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
static const char *cached_key(struct al_ci *ci, const struct al_submodel *sm, const char *anchor)
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
	k->file = ali_strdup(file);
	k->path = ali_strdup(sm->path);
	k->key = ali_cmd_model_key(sm, anchor);
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

static void free_key_cache(struct al_ci *ci)
{
	for (size_t i = 0; i < KEY_CACHE; i++) {
		free(ci->keys[i].file);
		free(ci->keys[i].path);
		free(ci->keys[i].key);
		ci->keys[i] = (struct key_cache){0};
	}
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
	return ((const struct al_ci *)ctx)->sup_lists[item].rule == key;
}

/* The suppressions whose rule selector matches r, in the file's order: made on
 * the first finding of r, then found by r's address. NULL when out of memory. */
static const struct sup_list *sups_of_rule(struct al_ci *ci, const struct al_rule *r)
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

const char *al_ci_accepted(void *ctx, const struct al_submodel *s, const char *layer, const struct al_rule *r,
			   const char **kind)
{
	struct al_ci *ci = ctx;
	if (!ci || !s || !r || !kind)
		return NULL;
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
		    ali_hashtab_find(&bl->by_key, ali_cmd_entry_hash(k.model, k.layer, k.rule), ali_cmd_bentry_eq, &k, (void *)bl) !=
			    SIZE_MAX) {
			*kind = "baseline";
			return "in the baseline";
		}
	}
	return NULL;
}

bool al_ci_accepts_anything(al_ci *ci, const struct al_report_item *items, size_t n)
{
	if (!ci)
		return false;
	if (!items)
		n = 0;
	for (size_t i = 0; i < n; i++)
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

enum al_fail_on al_ci_fail_on(const al_ci *ci, const char *path, enum al_fail_on fail_on)
{
	struct al_submodel sm = {.path = path, .file = path};
	char *key = ci && ci->n_pm ? ali_cmd_model_key(&sm, ci->cfg_dir) : NULL; /* once, not per [[model]] */
	for (size_t i = 0; key && i < ci->n_pm; i++)
		if (ci->pm[i].fail_on >= 0 && glob_key(ci->pm[i].glob, key))
			fail_on = (enum al_fail_on)ci->pm[i].fail_on;
	free(key);
	return fail_on;
}

/* ================================================================ the configuration */

static const char *const top_keys[] = {"target", "targets", "os", "policy", "fail_on", "rules", "select",
				       "ignore", "baseline", "switch_cost", "compute_units", "information_uri"};
static const char *const sup_keys[] = {"model", "layer", "rule", "reason"};
static const char *const model_keys[] = {"path", "fail_on", "target", "os", "compute_units", "policy",
					 "select", "ignore", "baseline"};
#define N_MODEL_KEYS (sizeof model_keys / sizeof *model_keys)
static const char *const tables[] = {"suppress", "model"};

static void cfg_error(const struct al_ci *ci, const struct ali_cfg_entry *e, const char *msg, const char *arg,
		      const char *hint)
{
	ali_cmd_puts(ci, "anelint: error: ");
	ali_cmd_put(ci, ci->cfg_path, SHOWN_NAME_MAX);
	ali_cmd_printf(ci, ": line %u: ", e->line);
	const char *conv = strstr(msg, "%s");
	if (conv) {
		ali_cmd_printf(ci, "%.*s", (int)(conv - msg), msg);
		ali_cmd_put(ci, arg, SHOWN_NAME_MAX);
		ali_cmd_puts(ci, conv + 2);
	} else {
		ali_cmd_puts(ci, msg);
	}
	if (hint) {
		ali_cmd_puts(ci, " (did you mean '");
		ali_cmd_put(ci, hint, SHOWN_NAME_MAX);
		ali_cmd_puts(ci, "'?)");
	}
	ali_cmd_puts(ci, "\n");
}

/* A path from the configuration: relative to its directory. */
static const char *cfg_path(struct al_ci *ci, const char *p)
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

static const char *want_string(const struct al_ci *ci, const struct ali_cfg_entry *e)
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

/* Whether spec names targets (tg) or OS releases as --target / --os would (al_where_parse
 * with flags): an id, and unless AL_WHERE_ONE `all` or a list. */
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
static const char *want_ids(struct al_ci *ci, const struct ali_cfg_entry *e, const char *what)
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
static enum al_status want_selectors(struct al_ci *ci, const struct ali_cfg_entry *e, char ***v, size_t *n)
{
	if (e->v.type == AL_CFG_STRING)
		return add_selectors(ci, v, n, e->v.s) ? AL_OK : AL_E_IO;
	if (e->v.type == AL_CFG_ARRAY) {
		for (size_t j = 0; j < e->v.n_items; j++)
			if (!add_selectors(ci, v, n, e->v.items[j]))
				return AL_E_IO;
		return AL_OK;
	}
	cfg_error(ci, e, "'%s' takes a list of rule ids, e.g. [\"ANE046\", \"ANE07\"]", e->key, NULL);
	return AL_E_INVALID_ARG;
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

/* The top-level keys: defaults for the options the caller did not give. */
static enum al_status apply_top(struct al_ci *ci)
{
	const struct ali_config *cfg = ci->cfg;
	const struct ali_cfg_entry *targets_at = NULL, *os_at = NULL;
	for (size_t i = 0; i < cfg->n; i++) {
		const struct ali_cfg_entry *e = &cfg->e[i];
		if (e->table && !e->array_table) {
			cfg_error(ci, e, "[%s] is not a table anelint reads: [[suppress]] and [[model]] are", e->table,
				  al_nearest(e->table, tables, 2));
			return AL_E_INVALID_ARG;
		}
		if (e->table && strcmp(e->table, "suppress") != 0 && strcmp(e->table, "model") != 0) {
			cfg_error(ci, e, "[[%s]] is not a table anelint reads: [[suppress]] and [[model]] are", e->table,
				  al_nearest(e->table, tables, 2));
			return AL_E_INVALID_ARG;
		}
		if (e->table)
			continue;
		size_t k;
		for (k = 0; k < sizeof top_keys / sizeof *top_keys; k++)
			if (strcmp(e->key, top_keys[k]) == 0)
				break;
		if (k == sizeof top_keys / sizeof *top_keys) {
			cfg_error(ci, e, "unknown key '%s'", e->key,
				  al_nearest(e->key, top_keys, sizeof top_keys / sizeof *top_keys));
			return AL_E_INVALID_ARG;
		}
		if (strcmp(e->key, "select") == 0 || strcmp(e->key, "ignore") == 0) {
			bool sel = e->key[0] == 's';
			/* the command line's selection replaces the configuration's */
			if ((sel ? ci->cl_n_sel : ci->cl_n_ign) > 0)
				continue;
			enum al_status rc = want_selectors(ci, e, sel ? &ci->top.sel : &ci->top.ign, sel ? &ci->top.n_sel : &ci->top.n_ign);
			if (rc)
				return rc;
			continue;
		}
		if (strncmp(e->key, "target", 6) == 0 || strcmp(e->key, "os") == 0) {
			bool tg = e->key[0] == 't';
			if (tg && targets_at) {
				cfg_error(ci, e, "'%s' and 'target' name the same setting: give one", "targets", NULL);
				return AL_E_INVALID_ARG;
			}
			if (tg)
				targets_at = e;
			else
				os_at = e;
			const char *ids = want_ids(ci, e, tg ? "targets" : "OS releases");
			if (!ids)
				return AL_E_INVALID_ARG;
			if (targets_at && os_at && targets_at->v.type == AL_CFG_STRING && os_at->v.type == AL_CFG_STRING &&
			    strcmp(targets_at->v.s, "all") == 0 && strcmp(os_at->v.s, "all") == 0) {
				cfg_error(ci, e, "target \"all\" with os \"all\" would be too many verdict columns: list "
						 "the ones to compare, e.g. targets = [\"a14\", \"a17\"], os = [\"ios17\", "
						 "\"ios18\"] (%s)", "the cross product", NULL);
				return AL_E_INVALID_ARG;
			}
			const char **field = tg ? &ci->settings.target : &ci->settings.os;
			if (!*field)
				*field = ids;
			continue;
		}
		const char *s = want_string(ci, e);
		if (!s)
			return AL_E_INVALID_ARG;
		if (strcmp(e->key, "compute_units") == 0 || strcmp(e->key, "policy") == 0 ||
		    strcmp(e->key, "fail_on") == 0) { /* refused here, where the line is known */
			enum al_policy pol;
			if (e->key[0] == 'c' && !known_compute_units(s)) {
				cfg_error(ci, e, "compute_units takes all, cpu-and-gpu, cpu-and-ne or cpu-only, not '%s'",
					  s, NULL);
				return AL_E_INVALID_ARG;
			}
			if (e->key[0] == 'p' && !al_policy_parse(s, &pol)) {
				cfg_error(ci, e, "policy takes auto, nn2020, mlprogram or optimistic, not '%s'", s, NULL);
				return AL_E_INVALID_ARG;
			}
			if (e->key[0] == 'f' && parse_fail_on(s) < 0) {
				cfg_error(ci, e, "fail_on takes any, cpu, gpu, uncertain or never, not '%s'", s, NULL);
				return AL_E_INVALID_ARG;
			}
		}
		if (strcmp(e->key, "information_uri") == 0) {
			if (!uri_ok(s)) {
				cfg_error(ci, e, "information_uri takes an absolute URI (https://...), not '%s'", s, NULL);
				return AL_E_INVALID_ARG;
			}
			ci->information_uri = own(ci, s);
			continue;
		}
		const char **field = strcmp(e->key, "policy") == 0 ? &ci->settings.policy
				   : strcmp(e->key, "fail_on") == 0 ? &ci->settings.fail_on
				   : strcmp(e->key, "switch_cost") == 0 ? &ci->settings.switch_cost
				   : strcmp(e->key, "compute_units") == 0 ? &ci->settings.compute_units
				   : strcmp(e->key, "rules") == 0 ? &ci->settings.rules
				   : &ci->settings.baseline;
		if (*field || (field == &ci->settings.baseline && ci->writing_baseline))
			continue; /* the command line wins */
		bool is_path = field == &ci->settings.rules || field == &ci->settings.baseline;
		*field = is_path ? cfg_path(ci, s) : own(ci, s);
		if (!*field)
			return AL_E_IO;
	}
	return AL_OK;
}

/* [[suppress]] and [[model]]: collected, one element per index. */
static enum al_status apply_tables(struct al_ci *ci)
{
	const struct ali_config *cfg = ci->cfg;
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
			cfg_error(ci, e, "unknown key '%s'", e->key, al_nearest(e->key, keys, nk));
			return AL_E_INVALID_ARG;
		}
		if (sup) {
			const char *s = want_string(ci, e);
			if (!s)
				return AL_E_INVALID_ARG;
			while (ci->n_sup <= e->index) {
				if (ci->n_sup == ci->cap_sup) {
					size_t cap = ci->cap_sup ? 2 * ci->cap_sup : 16;
					struct sup *v = realloc(ci->sup, cap * sizeof *v);
					if (!v)
						return AL_E_IO;
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
				return AL_E_IO;
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
			enum al_status rc = want_selectors(ci, e, sel ? &x->sel.sel : &x->sel.ign, sel ? &x->sel.n_sel : &x->sel.n_ign);
			if (rc)
				return rc;
			continue;
		}
		if (strcmp(key, "target") == 0 || strcmp(key, "os") == 0) {
			bool tg = key[0] == 't';
			const char *ids = want_ids(ci, e, tg ? "targets" : "OS releases");
			if (!ids)
				return AL_E_INVALID_ARG;
			*(tg ? &x->target : &x->os) = ids;
			*(tg ? &x->target_line : &x->os_line) = e->line;
			continue;
		}
		const char *s = want_string(ci, e);
		if (!s)
			return AL_E_INVALID_ARG;
		if (strcmp(key, "path") == 0) {
			x->glob = own(ci, s);
		} else if (strcmp(key, "fail_on") == 0) {
			if ((x->fail_on = parse_fail_on(s)) < 0) {
				cfg_error(ci, e, "fail_on takes any, cpu, gpu, uncertain or never, not '%s'", s, NULL);
				return AL_E_INVALID_ARG;
			}
		} else if (strcmp(key, "compute_units") == 0) {
			if (!known_compute_units(s)) {
				cfg_error(ci, e, "compute_units takes all, cpu-and-gpu, cpu-and-ne or cpu-only, not '%s'", s,
					  NULL);
				return AL_E_INVALID_ARG;
			}
			x->compute_units = own(ci, s);
		} else if (strcmp(key, "policy") == 0) {
			enum al_policy pol;
			if (!al_policy_parse(s, &pol)) {
				cfg_error(ci, e, "policy takes auto, nn2020, mlprogram or optimistic, not '%s'", s, NULL);
				return AL_E_INVALID_ARG;
			}
			x->policy = own(ci, s);
		} else { /* baseline */
			x->base.path = (char *)cfg_path(ci, s);
			if (!x->base.path)
				return AL_E_IO;
		}
	}
	return AL_OK;
}

/* What each [[suppress]] and [[model]] must have. */
static enum al_status check_tables(const struct al_ci *ci)
{
	for (size_t i = 0; i < ci->n_sup; i++) {
		const struct sup *x = &ci->sup[i];
		struct ali_cfg_entry at = {.line = x->line};
		if (!x->rule) {
			cfg_error(ci, &at, "[[suppress]] needs a rule (an id, a prefix or a name)", NULL, NULL);
			return AL_E_INVALID_ARG;
		}
		if (!x->reason || !x->reason[strspn(x->reason, " \t")]) {
			cfg_error(ci, &at, "[[suppress]] of %s needs a reason: why the finding is accepted", x->rule,
				  NULL);
			return AL_E_INVALID_ARG;
		}
	}
	for (size_t i = 0; i < ci->n_pm; i++)
		if (!ci->pm[i].glob) {
			struct ali_cfg_entry at = {.line = ci->pm[i].line};
			cfg_error(ci, &at, "[[model]] needs a path (a glob of model paths)", NULL, NULL);
			return AL_E_INVALID_ARG;
		}
	return AL_OK;
}

/* Apply the configuration's top-level keys to the options not given by the
 * caller; collect suppressions and per-model settings. */
static enum al_status apply_config(struct al_ci *ci)
{
	enum al_status rc = apply_top(ci);
	if (!rc)
		rc = apply_tables(ci);
	return rc ? rc : check_tables(ci);
}

bool al_ci_model_settings(const al_ci *ci, const char *path, const struct al_ci_settings *in,
			  struct al_ci_settings *out, uint32_t *line)
{
	*out = *in;
	bool own_opts = false;
	struct al_submodel sm = {.path = path, .file = path};
	char *key = ci && ci->n_pm ? ali_cmd_model_key(&sm, ci->cfg_dir) : NULL; /* once, not per [[model]] */
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

void al_ci_model_selection(al_ci *ci, const char *path, struct al_check_opts *check)
{
	struct al_submodel sm = {.path = path, .file = path};
	char *key = ci && ci->n_pm ? ali_cmd_model_key(&sm, ci->cfg_dir) : NULL; /* once, not per [[model]] */
	for (size_t i = 0; key && i < ci->n_pm; i++) /* the last [[model]] with a selection wins */
		if (ci->pm[i].has_sel && !ci->cl_select && !ci->cl_ignore && glob_key(ci->pm[i].glob, key)) {
			check->rule_on = rule_on;
			check->rule_on_ctx = &ci->pm[i].sel;
		}
	free(key);
}

const char *al_ci_information_uri(const al_ci *ci)
{
	return ci ? ci->information_uri : NULL;
}

const struct al_ci_settings *al_ci_settings_of(const al_ci *ci)
{
	return ci ? &ci->settings : NULL;
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


enum al_status al_ci_open(const struct al_ci_opts *o, al_ci **out)
{
	if (!out)
		return AL_E_INVALID_ARG;
	struct al_ci *ci = o ? calloc(1, sizeof *ci) : NULL;
	*out = ci;
	if (!o)
		return AL_E_INVALID_ARG;
	if (!ci)
		return AL_E_NOMEM;
	ci->msg = open_memstream(&ci->msg_buf, &ci->msg_len);
	const struct al_ci_settings *g = &o->given;
	ci->settings = *g;
	ci->cl_sel_v = o->select, ci->cl_n_sel = o->n_select;
	ci->cl_ign_v = o->ignore, ci->cl_n_ign = o->n_ignore;
	ci->writing_baseline = o->write_baseline != NULL;
	ci->cl_target = g->target, ci->cl_os = g->os, ci->cl_cu = g->compute_units, ci->cl_policy = g->policy;
	ci->cl_select = o->n_select > 0, ci->cl_ignore = o->n_ignore > 0;
	ci->cl_baseline = g->baseline || o->write_baseline;
	if (!o->no_config) {
		if (o->config) {
			ci->cfg_path = ali_strdup(o->config);
		} else {
			if (o->first_path) { /* upward from the first model (a directory searched for
					      * models: from itself), else the working directory */
				char *d = ali_cmd_searched_dir(o->first_path) ? realpath(o->first_path, NULL)
								      : ali_cmd_dir_of(o->first_path);
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
			return AL_E_NOMEM;
		enum al_status st = ali_config_load(ci->cfg_path, &ci->cfg, d);
		if (st != AL_OK) {
			ali_cmd_diags(ci, ci->cfg_path, d);
			al_diags_free(d);
			return st == AL_E_FORMAT ? AL_E_INVALID_ARG : ali_cmd_file_status(st);
		}
		al_diags_free(d);
		ci->cfg_dir = ali_cmd_dir_of(ci->cfg_path);
		enum al_status rc = apply_config(ci);
		if (rc)
			return rc;
	}
	return AL_OK;
}

enum al_status al_ci_load_baselines(al_ci *ci)
{
	if (!ci)
		return AL_E_INVALID_ARG;
	const char *given = ci->settings.baseline;
	if (given && !ci->writing_baseline) {
		ci->base.path = ali_strdup(given);
		ci->base.dir = ali_cmd_dir_of(given);
		enum al_status rc = ali_cmd_baseline_load(ci, &ci->base, given);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < ci->n_pm && !ci->writing_baseline && !ci->cl_baseline; i++) {
		struct baseline *b = &ci->pm[i].base;
		if (!b->path)
			continue;
		b->dir = ali_cmd_dir_of(b->path);
		enum al_status rc = ali_cmd_baseline_load(ci, b, b->path);
		if (rc)
			return rc;
	}
	return AL_OK;
}

void al_ci_free(al_ci *ci)
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
		ali_cmd_baseline_free(&ci->pm[i].base, false);
	}
	free(ci->pm);
	ali_cmd_baseline_free(&ci->base, true);
	for (size_t i = 0; i < ci->n_owned; i++)
		free(ci->owned[i]);
	free(ci->owned);
	for (size_t i = 0; i < ci->n_path_copies; i++)
		free(ci->path_copies[i]);
	free(ci->path_copies);
	free(ci->expanded);
	if (ci->msg)
		fclose(ci->msg);
	free(ci->msg_buf);
	free(ci);
}

const char *al_ci_config_path(const al_ci *ci)
{
	return ci ? ci->cfg_path : NULL;
}
