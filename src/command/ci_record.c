/* SPDX-License-Identifier: MIT */
/* ci_record.c: recording a run's baseline (al_ci_baseline_*): each failing
 * finding nothing accepts, once per (model, layer, rule), sorted, written
 * atomically; its text is what Python's anelint.baseline returns. */
#include "ci_int.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct bw {
	json_object *arr;
	const char *anchor;
	const struct al_submodel *s;
	char *key;
	struct al_ci *ci;
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
	if (al_ci_accepted(w->ci, w->s, *layer ? layer : NULL, r, &kind))
		return; /* suppressed in the configuration or the model: not the baseline's */
	struct entry_key k = {w->key, layer, r->id};
	uint64_t h = ali_cmd_entry_hash(k.model, k.layer, k.rule);
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

/* The document's text, and a newline, to fd. */
static bool write_text(int fd, void *ctx)
{
	const char *s = ctx;
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
	return true;
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

/* A run's baseline, a model at a time: al_ci_baseline_begin, al_ci_baseline_add
 * per model (its findings are copied: the model may be freed after), then
 * al_ci_baseline_json and / or al_ci_baseline_end. */
struct al_ci_baseline {
	char *path, *anchor;
	struct bw w;
	json_object *root; /* the document, once made (it owns w.arr then) */
	char *text;        /* its text and a newline */
};

al_ci_baseline *al_ci_baseline_begin(al_ci *ci, const char *path)
{
	struct al_ci_baseline *b = ci && path ? calloc(1, sizeof *b) : NULL;
	if (!b || !(b->path = ali_strdup(path)) || !(b->w.arr = json_object_new_array())) {
		if (b)
			free(b->path);
		free(b);
		ali_cmd_printf(ci, "anelint: error: out of memory\n");
		return NULL;
	}
	char *anchor = ali_cmd_dir_of(path); /* the directory the file goes in (it may not exist yet) */
	if (!anchor) {
		char *copy = ali_strdup(path);
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

void al_ci_baseline_add(al_ci_baseline *b, const al_model *m)
{
	struct bw *w = b ? &b->w : NULL;
	for (size_t k = 0; w && m && !b->root && k < al_model_count(m); k++) {
		const struct al_submodel *s = al_model_get(m, k);
		w->s = s;
		w->key = ali_cmd_model_key(s, b->anchor);
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

const char *al_ci_baseline_json(al_ci_baseline *b)
{
	if (!b || b->w.nomem)
		return NULL;
	if (b->text)
		return b->text;
	if (!b->root) {
		if (!(b->root = json_object_new_object()))
			return NULL;
		json_object_array_sort(b->w.arr, entry_cmp);
		json_object_object_add(b->root, "anelint_baseline", json_object_new_int(1));
		json_object_object_add(b->root, "note", json_object_new_string(
			"findings anelint accepts (--baseline): model (relative to this file), layer ('' for the "
			"model), rule; written by anelint --write-baseline"));
		json_object_object_add(b->root, "findings", b->w.arr);
	}
	const char *s = json_object_to_json_string_ext(b->root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
									JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t n = s ? strlen(s) : 0;
	if (s && (b->text = malloc(n + 2))) {
		memcpy(b->text, s, n);
		memcpy(b->text + n, "\n", 2);
	}
	return b->text;
}

enum al_status al_ci_baseline_end(al_ci_baseline *b, bool write)
{
	if (!b)
		return AL_E_IO;
	const struct al_ci *ci = b->w.ci;
	enum al_status st = AL_OK;
	ali_hashtab_free(&b->w.seen);
	if (b->w.nomem) {
		ali_cmd_printf(ci, "anelint: error: out of memory\n");
		st = AL_E_NOMEM;
		write = false;
	}
	if (write) {
		const char *text = al_ci_baseline_json(b);
		al_diags *d = al_diags_new();
		st = d && text ? ali_write_atomic(b->path, write_text, (void *)text, d) : AL_E_NOMEM;
		if (st != AL_OK && d)
			ali_cmd_diags(ci, b->path, d);
		al_diags_free(d);
	}
	if (b->root)
		json_object_put(b->root); /* w.arr with it */
	else
		json_object_put(b->w.arr);
	free(b->text);
	free(b->anchor);
	free(b->path);
	free(b);
	return st != AL_OK ? AL_E_IO : AL_OK;
}
