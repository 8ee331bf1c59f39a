/* SPDX-License-Identifier: MIT */
/* report_jsonw.c: a streaming JSON writer for the big JSON documents (check's),
 * writing the same bytes json-c's json_object_to_json_string_ext(PRETTY | SPACED |
 * NOSLASHESCAPE) gives for the same tree, with ali_json_string's UTF-8 repair.
 *
 * Why not json-c's tree: `check --format json` of a 27k-op LLM package
 * (bench/llm_check.sh) built ~1.2 M json-c objects and a 29.5 MB printbuf before
 * writing a byte: 670 ms and 269 MB peak RSS, against 105 ms and 57 MB for the
 * text output; perf put 60% of the time in malloc/free of the tree. Written as a
 * stream the output needs no memory of its own (one 64 KiB buffer). plan's JSON
 * (report_plan.c) is written the same way, and SARIF's (its results spilled to a
 * temporary file, ali_jw_splice). json-c still parses (Manifest.json, evidence,
 * rule files) and builds the small documents (info, compare) and the small parts
 * of SARIF's; ali_jw_tree writes such a tree inside a stream.
 * tests/unit/test_report.c checks the writer against json-c byte for byte. */
#include "report.h"

#include <json-c/json.h>
#include <string.h>

static void jw_flush(struct ali_jw *w)
{
	if (w->n)
		fwrite(w->buf, 1, w->n, w->out);
	w->n = 0;
}

static void jw_put_slow(struct ali_jw *w, const char *s, size_t n)
{
	jw_flush(w);
	if (n > w->cap) {
		fwrite(s, 1, n, w->out);
		return;
	}
	memcpy(w->buf, s, n);
	w->n = n;
}

static inline void jw_put(struct ali_jw *w, const char *s, size_t n)
{
	if (n > w->cap - w->n) {
		jw_put_slow(w, s, n);
		return;
	}
	memcpy(w->buf + w->n, s, n);
	w->n += n;
}

static inline void jw_putc(struct ali_jw *w, char c)
{
	if (w->n == w->cap)
		jw_flush(w);
	w->buf[w->n++] = c;
}

#define JW_LIT(w, s) jw_put(w, s, sizeof s - 1)

static void jw_indent(struct ali_jw *w, unsigned level)
{
	static const char spaces[] = "                                                                ";
	size_t n = 2 * (size_t)level;
	while (n) {
		size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;
		jw_put(w, spaces, k);
		n -= k;
	}
}

void ali_jw_init(struct ali_jw *w, FILE *out)
{
	w->out = out;
	w->n = 0;
	w->depth = 0;
	w->cap = 1 << 16;
	w->buf = ali_malloc(w->cap);
	if (!w->buf) {
		w->buf = w->small;
		w->cap = sizeof w->small;
	}
}

void ali_jw_finish(struct ali_jw *w)
{
	jw_putc(w, '\n');
	jw_flush(w);
	if (w->buf != w->small)
		ali_free(w->buf);
	w->buf = NULL;
}

/* 1: a byte jw_escaped stops at (NUL, below 0x20, '"', '\\', not ASCII) */
static const unsigned char jw_stop[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

/* json-c's escaping (NOSLASHESCAPE: '/' as it is): \b \n \r \t \f \" \\ and
 * other bytes below 0x20 as \u00xx; the text first made valid UTF-8 (each
 * invalid byte U+FFFD), as ali_json_string does. Runs of bytes written as they
 * are (valid UTF-8 included) are copied at once. */
static void jw_escaped(struct ali_jw *w, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t start = 0, i = 0;
	for (;;) {
		while (!jw_stop[u[i]])
			i++;
		unsigned c = u[i];
		if (c >= 0x80) {
			size_t n = ali_utf8_seq(u + i);
			if (n) { /* valid: part of the run */
				i += n;
				continue;
			}
		}
		if (i > start)
			jw_put(w, (const char *)u + start, i - start);
		if (!c)
			return;
		if (c >= 0x80) {
			JW_LIT(w, "\xef\xbf\xbd");
		} else {
			char e[7] = {'\\', 0};
			size_t k = 2;
			switch (c) {
			case '\b': e[1] = 'b'; break;
			case '\n': e[1] = 'n'; break;
			case '\r': e[1] = 'r'; break;
			case '\t': e[1] = 't'; break;
			case '\f': e[1] = 'f'; break;
			case '"': e[1] = '"'; break;
			case '\\': e[1] = '\\'; break;
			default:
				memcpy(e + 1, "u00", 3);
				e[4] = "0123456789abcdef"[c >> 4];
				e[5] = "0123456789abcdef"[c & 15];
				k = 6;
			}
			jw_put(w, e, k);
		}
		start = ++i;
	}
}

/* A container's state; none of our documents nests ALI_JW_MAX_DEPTH deep (the
 * deepest share a slot rather than overflow). */
static inline unsigned jw_slot(unsigned d)
{
	return d < ALI_JW_MAX_DEPTH ? d : ALI_JW_MAX_DEPTH - 1;
}

/* What comes before a value: the separator and indentation of its container,
 * and its key in an object (json-c: "{" then, per member, "," if not the first,
 * "\n", indent, "\"key\": "; "[\n" then, per element, ",\n" if not the first,
 * indent). */
static void jw_prefix(struct ali_jw *w, const char *key)
{
	static const char spaces[] = "                                                                ";
	if (!w->depth)
		return;
	unsigned d = jw_slot(w->depth - 1);
	bool obj = w->obj[d], had = w->had[d];
	w->had[d] = true;
	if (!key)
		key = "";
	size_t ind = 2 * (size_t)w->depth, kl = obj ? strlen(key) : 0;
	if (ind < sizeof spaces && 2 + ind + kl + 4 <= w->cap - w->n) { /* all in the buffer at once */
		char *p = w->buf + w->n;
		if (had)
			*p++ = ',';
		if (had || obj)
			*p++ = '\n';
		memcpy(p, spaces, ind);
		p += ind;
		if (obj) {
			*p++ = '"';
			for (size_t i = 0; i < kl; i++) {
				if (jw_stop[(unsigned char)key[i]]) { /* a key to escape: the slow way */
					w->n = (size_t)(p - w->buf);
					jw_escaped(w, key);
					JW_LIT(w, "\": ");
					return;
				}
				p[i] = key[i];
			}
			memcpy(p + kl, "\": ", 3);
			p += kl + 3;
		}
		w->n = (size_t)(p - w->buf);
		return;
	}
	if (had)
		JW_LIT(w, ",\n");
	else if (obj)
		jw_putc(w, '\n');
	jw_indent(w, w->depth);
	if (obj) {
		jw_putc(w, '"');
		jw_escaped(w, key);
		JW_LIT(w, "\": ");
	}
}

static void jw_open(struct ali_jw *w, const char *key, bool obj)
{
	jw_prefix(w, key);
	if (obj)
		jw_putc(w, '{');
	else
		JW_LIT(w, "[\n");
	unsigned d = jw_slot(w->depth++);
	w->obj[d] = obj;
	w->had[d] = false;
}

void ali_jw_object(struct ali_jw *w, const char *key)
{
	jw_open(w, key, true);
}

void ali_jw_array(struct ali_jw *w, const char *key)
{
	jw_open(w, key, false);
}

void ali_jw_end(struct ali_jw *w)
{
	if (!w->depth)
		return;
	unsigned d = --w->depth;
	bool obj = w->obj[jw_slot(d)], had = w->had[jw_slot(d)];
	/* json-c 0.16 closes an empty object on a line of its own too: "{\n  }" */
	if (had || obj)
		jw_putc(w, '\n');
	jw_indent(w, d);
	jw_putc(w, obj ? '}' : ']');
}

void ali_jw_str(struct ali_jw *w, const char *key, const char *s)
{
	jw_prefix(w, key);
	if (!s) {
		JW_LIT(w, "null");
		return;
	}
	jw_putc(w, '"');
	jw_escaped(w, s);
	jw_putc(w, '"');
}

void ali_jw_int(struct ali_jw *w, const char *key, int64_t v)
{
	jw_prefix(w, key);
	char buf[24], *p = buf + sizeof buf;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	jw_put(w, p, (size_t)(buf + sizeof buf - p));
}

void ali_jw_bool(struct ali_jw *w, const char *key, bool b)
{
	jw_prefix(w, key);
	if (b)
		JW_LIT(w, "true");
	else
		JW_LIT(w, "false");
}

void ali_jw_null(struct ali_jw *w, const char *key)
{
	jw_prefix(w, key);
	JW_LIT(w, "null");
}

void ali_jw_raw(struct ali_jw *w, const char *key, const char *text)
{
	jw_prefix(w, key);
	jw_put(w, text, strlen(text));
}

void ali_jw_tree(struct ali_jw *w, const char *key, struct json_object *j)
{
	switch (json_object_get_type(j)) {
	case json_type_null:
		ali_jw_null(w, key);
		return;
	case json_type_object:
		ali_jw_object(w, key);
		json_object_object_foreach(j, k, v)
			ali_jw_tree(w, k, v);
		ali_jw_end(w);
		return;
	case json_type_array:
		ali_jw_array(w, key);
		for (size_t i = 0; i < json_object_array_length(j); i++)
			ali_jw_tree(w, NULL, json_object_array_get_idx(j, i));
		ali_jw_end(w);
		return;
	default: /* a scalar: json-c's own text (its double format, its string escaping) */
		jw_prefix(w, key);
		const char *s = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								       JSON_C_TO_STRING_NOSLASHESCAPE);
		jw_put(w, s, strlen(s));
	}
}

/* ---- an array's elements written apart (a temporary file), then spliced in:
 * for a document whose head (SARIF's rules and artifacts) is known only once
 * its body (the results) has been made. */

void ali_jw_init_elements(struct ali_jw *w, FILE *out, unsigned depth)
{
	ali_jw_init(w, out);
	if (depth > ALI_JW_MAX_DEPTH)
		depth = ALI_JW_MAX_DEPTH;
	for (unsigned d = 0; d < depth; d++) {
		w->obj[d] = false;
		w->had[d] = false;
	}
	w->depth = depth;
}

bool ali_jw_end_elements(struct ali_jw *w)
{
	bool any = w->depth && w->had[jw_slot(w->depth - 1)];
	jw_flush(w);
	if (w->buf != w->small)
		ali_free(w->buf);
	w->buf = NULL;
	return any;
}

bool ali_jw_splice(struct ali_jw *w, FILE *part, bool any)
{
	jw_flush(w);
	if (fflush(part) != 0 || fseek(part, 0, SEEK_SET) != 0)
		return false;
	char buf[1 << 14];
	size_t k;
	while ((k = fread(buf, 1, sizeof buf, part)) > 0)
		fwrite(buf, 1, k, w->out);
	if (ferror(part))
		return false;
	if (any && w->depth)
		w->had[jw_slot(w->depth - 1)] = true;
	return true;
}

/* The members every model object of check's and plan's JSON opens with (report.h). */
void ali_jw_submodel_head(struct ali_jw *w, const struct al_submodel *s)
{
	ali_jw_str(w, "path", s->path ? s->path : "");
	ali_jw_str(w, "file", s->file);
	ali_jw_str(w, "type", s->type ? s->type : "");
	ali_jw_int(w, "spec_version", s->spec_version);
	ali_jw_str(w, "min_os", al_spec_min_os(s->spec_version));
	ali_jw_int(w, "depth", s->depth);
}
