/* SPDX-License-Identifier: MIT */
/* ci_baseline.c: reading a baseline file (--baseline, a [[model]]'s baseline):
 * its entries hashed on (model, layer, rule), read by a fast reader when the
 * file is as --write-baseline writes it, else by json-c. */
#include "ci_int.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* (model, layer, rule) of a baseline entry or a finding, hashed as one key. */
uint64_t ali_cmd_entry_hash(const char *model, const char *layer, const char *rule)
{
	uint64_t h = AL_HASH_INIT;
	h = ali_hash_bytes(h, model, strlen(model) + 1);
	h = ali_hash_bytes(h, layer, strlen(layer) + 1);
	return ali_hash_bytes(h, rule, strlen(rule) + 1);
}

bool ali_cmd_bentry_eq(size_t item, const void *key, void *ctx)
{
	const struct bentry *b = &((const struct baseline *)ctx)->e[item];
	const struct entry_key *k = key;
	return strcmp(b->rule, k->rule) == 0 && strcmp(b->model, k->model) == 0 && strcmp(b->layer, k->layer) == 0;
}

/* ================================================================ the baseline */

void ali_cmd_baseline_free(struct baseline *b, bool own_path)
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
	return ali_hashtab_add(&bl->by_key, ali_cmd_entry_hash(b.model, b.layer, b.rule), bl->n - 1);
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

enum al_status ali_cmd_baseline_load(const struct al_ci *ci, struct baseline *bl, const char *path)
{
	al_diags *d = al_diags_new();
	int fd;
	struct stat st;
	if (!d)
		return AL_E_IO;
	enum al_status ost = ali_open_regular(path, NULL, &fd, &st, d);
	if (ost != AL_OK) {
		ali_cmd_diags(ci, path, d);
		if (access(path, F_OK) != 0) /* none yet: how to make one */
			ali_cmd_puts(ci, "anelint: make the baseline first: --write-baseline FILE records today's findings\n");
		al_diags_free(d);
		return ali_cmd_file_status(ost);
	}
	al_diags_free(d);
	if (st.st_size > (off_t)BASELINE_MAX) {
		close(fd);
		ali_cmd_error_at(ci, path, "baseline larger than %u bytes", BASELINE_MAX);
		return AL_E_FORMAT;
	}
	size_t cap = (size_t)st.st_size + 1, n = 0;
	char *buf = malloc(cap);
	if (!buf) {
		close(fd);
		return AL_E_IO;
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
		return AL_OK;
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
		ali_cmd_error_at(ci, path, "not a baseline: JSON error at byte %zu: %s", at, json_tokener_error_desc(jerr));
		json_object_put(root);
		return AL_E_FORMAT;
	}
	if (!json_object_object_get_ex(root, "anelint_baseline", &ver) || json_object_get_int(ver) != 1 ||
	    !json_object_object_get_ex(root, "findings", &arr) || !json_object_is_type(arr, json_type_array)) {
		ali_cmd_error_at(ci, path, "not a baseline: expected {\"anelint_baseline\": 1, \"findings\": [...]} "
			       "(anelint --write-baseline writes one)");
		json_object_put(root);
		return AL_E_FORMAT;
	}
	size_t len = json_object_array_length(arr);
	bl->e = calloc(len ? len : 1, sizeof *bl->e);
	if (!bl->e || !ali_hashtab_reserve(&bl->by_key, len)) {
		json_object_put(root);
		return AL_E_IO;
	}
	for (size_t i = 0; i < len; i++) {
		json_object *e = json_object_array_get_idx(arr, i), *m, *l, *r;
		if (!json_object_is_type(e, json_type_object) || !json_object_object_get_ex(e, "model", &m) ||
		    !json_object_object_get_ex(e, "layer", &l) || !json_object_object_get_ex(e, "rule", &r) ||
		    !json_object_is_type(m, json_type_string) || !json_object_is_type(l, json_type_string) ||
		    !json_object_is_type(r, json_type_string)) {
			ali_cmd_puts(ci, "anelint: error: ");
			ali_cmd_put(ci, path, SHOWN_NAME_MAX);
			ali_cmd_printf(ci, ": findings[%zu]: expected an object with the strings model, layer, rule\n", i);
			json_object_put(root);
			return AL_E_FORMAT;
		}
		struct bentry *b = &bl->e[bl->n++];
		b->model = ali_arena_strndup(&bl->strings, json_object_get_string(m), (size_t)json_object_get_string_len(m));
		b->layer = ali_arena_strndup(&bl->strings, json_object_get_string(l), (size_t)json_object_get_string_len(l));
		b->rule = ali_arena_strndup(&bl->strings, json_object_get_string(r), (size_t)json_object_get_string_len(r));
		if (!b->model || !b->layer || !b->rule ||
		    !ali_hashtab_add(&bl->by_key, ali_cmd_entry_hash(b->model, b->layer, b->rule), bl->n - 1)) {
			json_object_put(root);
			return AL_E_IO;
		}
	}
	json_object_put(root);
	return AL_OK;
}
