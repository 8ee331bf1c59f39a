/* SPDX-License-Identifier: MIT */
/* config.c: the project configuration file (anelint.toml), a subset of TOML.
 *
 * Debian has no C TOML library (only C++'s cpptoml, and Perl, Python and Go
 * ones), so this is a small parser of the part of TOML a configuration needs:
 *   # comments, [table] and [[array-of-tables]] headers (bare or "quoted" names,
 *   no dots), key = value lines with bare or "quoted" keys, and values:
 *   "basic strings" (escapes \" \\ \b \t \n \f \r \uXXXX \UXXXXXXXX),
 *   'literal strings', true / false, decimal integers, and arrays of these
 *   (over several lines, a trailing comma allowed).
 * Everything else TOML has (dotted keys, inline tables, multi-line strings,
 * floats, dates) is refused with a located error rather than misread. The file
 * is hostile input like a model: bounded size, lines, strings, arrays and
 * entries; every error is one line naming FILE, line and column; the first
 * MAX_ERRORS are reported. The meaning of the keys is the CLI's (src/cli/ci.c):
 * this file only turns text into entries. */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CFG_MAX_FILE (256u * 1024)
#define CFG_MAX_STRING 4096
#define CFG_MAX_ITEMS 1024   /* per array */
#define CFG_MAX_ENTRIES 8192
#define CFG_MAX_ERRORS 20

struct cparser {
	const char *t;
	size_t n, pos;
	uint32_t line;
	size_t line_start;
	const char *name;
	al_diags *d;
	struct ali_config *c;
	unsigned errors;
	bool nomem;
	/* the current table */
	char *table;
	uint32_t table_index;
	bool array_table;
	uint32_t first_of_table; /* entries of the current table start here (duplicate keys) */
	/* by hash, so a file of 8,192 keys is read in linear time: the keys of the
	 * current table, and per table name what its entries say (for a header) */
	struct ali_hashtab keys, tables;
	struct table_rec {
		const char *name; /* an entry's copy */
		uint32_t first_line, next_index; /* the first entry's line; 1 + the last [[name]] index */
	} *tr;
	size_t n_tr, cap_e;
};

static bool key_eq(size_t item, const void *key, void *ctx)
{
	return strcmp(((const struct ali_config *)ctx)->e[item].key, key) == 0;
}

static bool table_eq(size_t item, const void *key, void *ctx)
{
	return strcmp(((const struct cparser *)ctx)->tr[item].name, key) == 0;
}

static struct table_rec *table_find(struct cparser *p, const char *name)
{
	size_t at = ali_hashtab_find(&p->tables, ali_hash_str(name), table_eq, name, p);
	return at == SIZE_MAX ? NULL : &p->tr[at];
}

static void err(struct cparser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void err(struct cparser *p, const char *fmt, ...)
{
	if (++p->errors > CFG_MAX_ERRORS)
		return;
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	char where[48];
	snprintf(where, sizeof where, "line %u, column %zu", p->line, p->pos - p->line_start + 1);
	ali_diag_add(p->d, AL_SEV_ERROR, p->name, (uint64_t)p->pos, where, NULL, "%s", msg);
}

static char *dup_n(struct cparser *p, const char *s, size_t n)
{
	char *r = ali_malloc(n + 1);
	if (!r) {
		p->nomem = true;
		return NULL;
	}
	memcpy(r, s, n);
	r[n] = 0;
	return r;
}

static int peek(const struct cparser *p)
{
	return p->pos < p->n ? (unsigned char)p->t[p->pos] : -1;
}

static void skip_blank(struct cparser *p)
{
	while (p->pos < p->n && (p->t[p->pos] == ' ' || p->t[p->pos] == '\t'))
		p->pos++;
}

/* Skip to the end of the line (a comment, or after an error). */
static void skip_line(struct cparser *p)
{
	while (p->pos < p->n && p->t[p->pos] != '\n')
		p->pos++;
}

static void newline(struct cparser *p)
{
	if (p->pos < p->n && p->t[p->pos] == '\n') {
		p->pos++;
		p->line++;
		p->line_start = p->pos;
	}
}

/* After a value or header: blanks, an optional comment, the end of the line. */
static bool end_of_line(struct cparser *p)
{
	skip_blank(p);
	if (peek(p) == '#')
		skip_line(p);
	if (peek(p) == '\r')
		p->pos++;
	if (p->pos < p->n && p->t[p->pos] != '\n') {
		err(p, "unexpected '%c' after the value (one key = value per line)", p->t[p->pos]);
		skip_line(p);
		return false;
	}
	return true;
}

static bool bare_char(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static void put_utf8(char *buf, size_t *len, uint32_t cp)
{
	if (cp < 0x80) {
		buf[(*len)++] = (char)cp;
	} else if (cp < 0x800) {
		buf[(*len)++] = (char)(0xc0 | cp >> 6);
		buf[(*len)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		buf[(*len)++] = (char)(0xe0 | cp >> 12);
		buf[(*len)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		buf[(*len)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		buf[(*len)++] = (char)(0xf0 | cp >> 18);
		buf[(*len)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
		buf[(*len)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		buf[(*len)++] = (char)(0x80 | (cp & 0x3f));
	}
}

/* A "basic" or 'literal' string at p->pos (the quote); NULL after an error. */
static char *string(struct cparser *p)
{
	char q = p->t[p->pos];
	if (p->pos + 2 < p->n && p->t[p->pos + 1] == q && p->t[p->pos + 2] == q) {
		err(p, "multi-line strings are not supported");
		return NULL;
	}
	p->pos++;
	char *buf = ali_malloc(CFG_MAX_STRING + 8);
	if (!buf) {
		p->nomem = true;
		return NULL;
	}
	size_t len = 0;
	for (;;) {
		if (p->pos >= p->n || p->t[p->pos] == '\n') {
			err(p, "the string does not end on its line");
			ali_free(buf);
			return NULL;
		}
		char ch = p->t[p->pos++];
		if (ch == q)
			break;
		if (len >= CFG_MAX_STRING) {
			err(p, "string longer than %u bytes", CFG_MAX_STRING);
			ali_free(buf);
			return NULL;
		}
		if ((unsigned char)ch < 0x20 && ch != '\t') {
			err(p, "control character 0x%02x in a string", (unsigned char)ch);
			ali_free(buf);
			return NULL;
		}
		if (ch != '\\' || q == '\'') {
			buf[len++] = ch;
			continue;
		}
		char e = p->pos < p->n ? p->t[p->pos++] : 0;
		const char *esc = strchr("\"\\btnfr", e);
		if (e && esc) {
			buf[len++] = "\"\\\b\t\n\f\r"[esc - "\"\\btnfr"];
			continue;
		}
		if (e != 'u' && e != 'U') {
			err(p, "unknown escape '\\%c' in a string", e ? e : ' ');
			ali_free(buf);
			return NULL;
		}
		size_t nd = e == 'u' ? 4 : 8;
		uint32_t cp = 0;
		for (size_t i = 0; i < nd; i++) {
			int h = p->pos < p->n ? (unsigned char)p->t[p->pos] : 0;
			int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
				: h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
			if (v < 0) {
				err(p, "\\%c needs %zu hex digits", e, nd);
				ali_free(buf);
				return NULL;
			}
			cp = cp << 4 | (uint32_t)v;
			p->pos++;
		}
		if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
			err(p, "\\%c escape of an invalid code point (or NUL)", e);
			ali_free(buf);
			return NULL;
		}
		put_utf8(buf, &len, cp);
	}
	buf[len] = 0;
	return buf;
}

/* A key or table name: bare, or a quoted string; NULL after an error. */
static char *key(struct cparser *p, const char *what)
{
	int c = peek(p);
	if (c == '"' || c == '\'')
		return string(p);
	size_t b = p->pos;
	while (p->pos < p->n && bare_char((unsigned char)p->t[p->pos]))
		p->pos++;
	if (p->pos == b) {
		err(p, "expected a %s", what);
		return NULL;
	}
	if (p->pos - b > 128) {
		err(p, "%s longer than 128 characters", what);
		return NULL;
	}
	if (peek(p) == '.') {
		err(p, "dotted keys are not supported: use a [table]");
		return NULL;
	}
	return dup_n(p, p->t + b, p->pos - b);
}

static void value_free(struct ali_cfg_value *v)
{
	ali_free(v->s);
	for (size_t i = 0; i < v->n_items; i++)
		ali_free(v->items[i]);
	ali_free(v->items);
	memset(v, 0, sizeof *v);
}

/* One scalar into v (arrays hold scalars as text: their type is noted in kind). */
static bool scalar(struct cparser *p, struct ali_cfg_value *v)
{
	int c = peek(p);
	if (c == '"' || c == '\'') {
		v->type = AL_CFG_STRING;
		return (v->s = string(p)) != NULL;
	}
	size_t b = p->pos;
	while (p->pos < p->n && (bare_char((unsigned char)p->t[p->pos]) || p->t[p->pos] == '+' ||
				 p->t[p->pos] == '.' || p->t[p->pos] == ':'))
		p->pos++;
	size_t len = p->pos - b;
	const char *s = p->t + b;
	if (len == 4 && memcmp(s, "true", 4) == 0) {
		v->type = AL_CFG_BOOL;
		v->b = true;
		return true;
	}
	if (len == 5 && memcmp(s, "false", 5) == 0) {
		v->type = AL_CFG_BOOL;
		return true;
	}
	int64_t x;
	if (len && ali_span_i64(s, len, INT64_MIN, INT64_MAX, &x) == len) {
		v->type = AL_CFG_INT;
		v->i = x;
		return true;
	}
	p->pos = b;
	if (c == '{')
		err(p, "inline tables are not supported: use a [table]");
	else if (len)
		err(p, "'%.*s' is not a value anelint reads (a \"string\", true, false, an integer or an array)",
		    (int)(len > 40 ? 40 : len), s);
	else
		err(p, "expected a value");
	return false;
}

/* Blanks, newlines and comments inside an array. */
static void skip_space(struct cparser *p)
{
	for (;;) {
		skip_blank(p);
		int c = peek(p);
		if (c == '#')
			skip_line(p);
		else if (c == '\r')
			p->pos++;
		else if (c == '\n')
			newline(p);
		else
			return;
	}
}

static bool value(struct cparser *p, struct ali_cfg_value *v)
{
	if (peek(p) != '[')
		return scalar(p, v);
	p->pos++;
	v->type = AL_CFG_ARRAY;
	for (;;) {
		skip_space(p);
		if (peek(p) == ']') {
			p->pos++;
			return true;
		}
		if (v->n_items >= CFG_MAX_ITEMS) {
			err(p, "array of more than %u values", CFG_MAX_ITEMS);
			return false;
		}
		struct ali_cfg_value item = {0};
		if (peek(p) == '[') {
			err(p, "arrays of arrays are not supported");
			return false;
		}
		if (!scalar(p, &item))
			return false;
		char *text = item.s;
		if (item.type != AL_CFG_STRING) { /* kept as text: "true", "12" */
			char num[32];
			if (item.type == AL_CFG_BOOL)
				snprintf(num, sizeof num, "%s", item.b ? "true" : "false");
			else
				snprintf(num, sizeof num, "%lld", item.i);
			text = dup_n(p, num, strlen(num));
			if (!text)
				return false;
		}
		char **items = ali_realloc(v->items, (v->n_items + 1) * sizeof *items);
		if (!items) {
			ali_free(text);
			p->nomem = true;
			return false;
		}
		v->items = items;
		v->items[v->n_items++] = text;
		skip_space(p);
		if (peek(p) == ',') {
			p->pos++;
			continue;
		}
		if (peek(p) == ']') {
			p->pos++;
			return true;
		}
		err(p, "expected ',' or ']' in the array");
		return false;
	}
}

static bool add_entry(struct cparser *p, char *k, struct ali_cfg_value *v, uint32_t line)
{
	struct ali_config *c = p->c;
	uint64_t kh = ali_hash_str(k);
	size_t dup = ali_hashtab_find(&p->keys, kh, key_eq, k, c);
	if (dup != SIZE_MAX) {
		err(p, "'%s' is given twice in this table (line %u first)", k, c->e[dup].line);
		return false;
	}
	if (c->n >= CFG_MAX_ENTRIES) {
		err(p, "more than %u keys", CFG_MAX_ENTRIES);
		return false;
	}
	if (c->n == p->cap_e) { /* doubling: copying the array per key is quadratic */
		size_t cap = p->cap_e ? 2 * p->cap_e : 16;
		struct ali_cfg_entry *grown = ali_realloc(c->e, cap * sizeof *grown);
		if (!grown) {
			p->nomem = true;
			return false;
		}
		c->e = grown;
		p->cap_e = cap;
	}
	struct ali_cfg_entry *e = c->e;
	char *table = p->table ? dup_n(p, p->table, strlen(p->table)) : NULL;
	if (p->table && !table)
		return false;
	e[c->n++] = (struct ali_cfg_entry){.table = table, .index = p->table_index, .array_table = p->array_table,
					     .key = k, .v = *v, .line = line};
	if (!ali_hashtab_add(&p->keys, kh, c->n - 1)) {
		p->nomem = true;
		return false;
	}
	if (table) {
		struct table_rec *r = table_find(p, table);
		if (!r) {
			struct table_rec *tv = ali_realloc(p->tr, (p->n_tr + 1) * sizeof *tv);
			if (!tv || !ali_hashtab_add(&p->tables, ali_hash_str(table), p->n_tr)) {
				if (tv)
					p->tr = tv;
				p->nomem = true;
				return false;
			}
			p->tr = tv;
			r = &p->tr[p->n_tr++];
			*r = (struct table_rec){.name = table, .first_line = line};
		}
		if (p->array_table && p->table_index + 1 > r->next_index)
			r->next_index = p->table_index + 1;
	}
	return true;
}

/* "[name]" or "[[name]]" at p->pos. */
static void header(struct cparser *p)
{
	bool arr = p->pos + 1 < p->n && p->t[p->pos + 1] == '[';
	p->pos += arr ? 2 : 1;
	skip_blank(p);
	char *name = key(p, "table name");
	if (!name) {
		skip_line(p);
		return;
	}
	skip_blank(p);
	if (peek(p) != ']' || (arr && (p->pos + 1 >= p->n || p->t[p->pos + 1] != ']'))) {
		err(p, "expected '%s' after the table name", arr ? "]]" : "]");
		ali_free(name);
		skip_line(p);
		return;
	}
	p->pos += arr ? 2 : 1;
	uint32_t index = 0;
	const struct table_rec *rec = table_find(p, name);
	if (arr) { /* the next element of this array of tables */
		if (rec)
			index = rec->next_index;
		if (p->table && p->array_table && strcmp(p->table, name) == 0 && p->table_index + 1 > index)
			index = p->table_index + 1;
	} else if (rec) {
		err(p, "table [%s] is given twice (line %u first)", name, rec->first_line);
	}
	ali_hashtab_free(&p->keys); /* a new table: its own keys */
	ali_free(p->table);
	p->table = name;
	p->table_index = index;
	p->array_table = arr;
	p->first_of_table = (uint32_t)p->c->n;
	end_of_line(p);
}

static enum al_status parse_config(const char *text, size_t n, const char *name, struct ali_config **out,
				   al_diags *d);

enum al_status ali_config_parse(const char *text, size_t n, const char *name, struct ali_config **out,
				al_diags *d)
{
	if (!out || (!text && n))
		return AL_E_INVALID_ARG;
	struct al_map guarded; /* the guard-page test mode's copy (base.h) */
	al_span s = ali_guard_span((al_span){(const uint8_t *)text, n}, &guarded);
	enum al_status st = parse_config((const char *)s.p, s.n, name, out, d);
	ali_unmap(&guarded);
	return st;
}

static enum al_status parse_config(const char *text, size_t n, const char *name, struct ali_config **out,
				   al_diags *d)
{
	if (!out || (!text && n))
		return AL_E_INVALID_ARG;
	*out = NULL;
	struct cparser p = {.t = text, .n = n, .line = 1, .name = name ? name : "(configuration)", .d = d};
	if (n > CFG_MAX_FILE) {
		ali_diag_add(d, AL_SEV_ERROR, p.name, UINT64_MAX, NULL, NULL,
			    "configuration file larger than %u bytes", CFG_MAX_FILE);
		return AL_E_FORMAT;
	}
	const char *nul = n ? memchr(text, 0, n) : NULL;
	if (nul) { /* located like every other error */
		size_t at = (size_t)(nul - text), ls = 0;
		uint32_t line = 1;
		for (size_t i = 0; i < at; i++)
			if (text[i] == '\n') {
				line++;
				ls = i + 1;
			}
		char where[48];
		snprintf(where, sizeof where, "line %u, column %zu", line, at - ls + 1);
		ali_diag_add(d, AL_SEV_ERROR, p.name, (uint64_t)at, where, NULL, "a NUL byte: not a text file");
		return AL_E_FORMAT;
	}
	p.c = ali_calloc(1, sizeof *p.c);
	if (!p.c) {
		ali_diag_add(d, AL_SEV_ERROR, p.name, UINT64_MAX, NULL, NULL, "out of memory");
		return AL_E_NOMEM;
	}
	if (n >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) /* a UTF-8 byte order mark */
		p.pos = p.line_start = 3;
	while (p.pos < p.n && !p.nomem && p.errors <= CFG_MAX_ERRORS) {
		skip_blank(&p);
		int c = peek(&p);
		if (c == '#' || c == '\r') {
			skip_line(&p);
		} else if (c == '[') {
			header(&p);
		} else if (c != '\n' && c != -1) {
			uint32_t line = p.line;
			char *k = key(&p, "key");
			struct ali_cfg_value v = {0};
			bool ok = k != NULL;
			if (ok) {
				skip_blank(&p);
				if (peek(&p) != '=') {
					err(&p, "expected '=' after the key '%s'", k);
					ok = false;
				} else {
					p.pos++;
					skip_blank(&p);
					ok = value(&p, &v) && end_of_line(&p);
				}
			}
			if (ok && add_entry(&p, k, &v, line)) {
				k = NULL;
			} else {
				value_free(&v);
				skip_line(&p);
			}
			ali_free(k);
		}
		newline(&p);
	}
	ali_free(p.table);
	ali_hashtab_free(&p.keys);
	ali_hashtab_free(&p.tables);
	ali_free(p.tr);
	if (p.nomem) {
		ali_diag_add(d, AL_SEV_ERROR, p.name, UINT64_MAX, NULL, NULL, "out of memory");
		ali_config_free(p.c);
		return AL_E_NOMEM;
	}
	if (p.errors) {
		if (p.errors > CFG_MAX_ERRORS)
			ali_diag_add(d, AL_SEV_NOTE, p.name, UINT64_MAX, NULL, NULL, "more errors not shown");
		ali_config_free(p.c);
		return AL_E_FORMAT;
	}
	*out = p.c;
	return AL_OK;
}

enum al_status ali_config_load(const char *path, struct ali_config **out, al_diags *d)
{
	if (!out || !path)
		return AL_E_INVALID_ARG;
	*out = NULL;
	int fd;
	struct stat st;
	enum al_status ost = ali_open_regular(path, NULL, &fd, &st, d);
	if (ost != AL_OK)
		return ost;
	if (st.st_size > (off_t)CFG_MAX_FILE) {
		close(fd);
		ali_diag_add(d, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL, "configuration file larger than %u bytes",
			    CFG_MAX_FILE);
		return AL_E_FORMAT;
	}
	char *buf = ali_malloc(CFG_MAX_FILE + 1);
	if (!buf) {
		close(fd);
		ali_diag_add(d, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL, "out of memory");
		return AL_E_NOMEM;
	}
	size_t n = 0;
	for (;;) { /* never past the limit, even if the file grows meanwhile */
		ssize_t r = read(fd, buf + n, CFG_MAX_FILE + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n > CFG_MAX_FILE)
			break;
	}
	close(fd);
	enum al_status rc = ali_config_parse(buf, n, path, out, d);
	ali_free(buf);
	return rc;
}

void ali_config_free(struct ali_config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		ali_free(c->e[i].table);
		ali_free(c->e[i].key);
		value_free(&c->e[i].v);
	}
	ali_free(c->e);
	ali_free(c);
}
