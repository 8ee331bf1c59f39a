/* SPDX-License-Identifier: MIT */
/* user_rules.c: rules users write by hand (--rules FILE, docs/rules-file.md):
 * blocks of `key: value` lines, each a rule matched by layer / op type or an
 * override of the built-in rule with its id. Strict: any error (file:line)
 * rejects the whole file. Bounded in size, names no other file, and refuses
 * control characters and invalid UTF-8, since its text ends up in reports.
 */
#include "rules.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILE (1u << 20) /* bytes */
#define MAX_RULES 1000
#define MAX_LINE 4096       /* bytes per line */
#define MAX_VALUE 4000      /* bytes per value, continuation lines included */
#define MAX_TYPES 64        /* layer / op types per rule */
#define MAX_ID 32
#define MAX_ERRORS 20       /* then stop reporting */

struct al_user_rules {
	struct al_arena arena;
	struct al_user_rule *rules;
	size_t n;
};

/* ================================================================ keys */

enum key {
	K_ID, K_NAME, K_LAYER, K_OP, K_FAMILIES, K_RELEASES, K_KIND, K_UNIT, K_CONFIDENCE, K_TITLE, K_REASON,
	K_PROVENANCE, K_SOURCE, K_WHY, K_FIX, K_CATALOG, K_OFF, K_COUNT
};
static const char *const key_names[K_COUNT] = {
	"id", "name", "layer", "op", "families", "releases", "kind", "unit", "confidence", "title", "reason",
	"provenance", "source", "why", "fix", "catalog", "off"};

/* What an override of a built-in rule may not change: what it matches and how it is named. */
static const bool override_forbidden[K_COUNT] = {[K_NAME] = true, [K_LAYER] = true,
						 [K_OP] = true, [K_REASON] = true};

struct block {
	char *val[K_COUNT];  /* heap, NUL-terminated; NULL = absent */
	size_t len[K_COUNT];
	uint32_t line[K_COUNT];
	uint32_t first_line;
	int last;            /* key a continuation line extends, -1 none */
};

struct parser {
	const char *name; /* the file, in diagnostics and origins */
	al_diags *d;
	unsigned errors;
	struct al_user_rules *u;
	size_t cap;
	bool nomem;
};

/* A diagnostic on line `line` of the file: file = the file, where = "line 12". */
static void report(struct parser *p, enum al_severity sev, uint32_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void report(struct parser *p, enum al_severity sev, uint32_t line, const char *fmt, ...)
{
	if (sev == AL_SEV_ERROR && p->errors++ >= MAX_ERRORS)
		return;
	char where[32];
	snprintf(where, sizeof where, "line %u", line);
	va_list ap;
	va_start(ap, fmt);
	ali_diag_vadd(p->d, sev, p->name, UINT64_MAX, where, NULL, fmt, ap);
	va_end(ap);
}

static void block_clear(struct block *b)
{
	for (int k = 0; k < K_COUNT; k++)
		ali_free(b->val[k]);
	memset(b, 0, sizeof *b);
	b->last = -1;
}

/* Append text (n bytes) to the value of key k, a space between pieces. */
static bool block_append(struct parser *p, struct block *b, int k, const char *text, size_t n,
			 uint32_t line)
{
	size_t old = b->len[k], add = n + (old ? 1 : 0);
	if (old + add > MAX_VALUE) {
		report(p, AL_SEV_ERROR, line, "value of '%s' longer than %u bytes", key_names[k],
		       MAX_VALUE);
		return false;
	}
	char *v = ali_realloc(b->val[k], old + add + 1);
	if (!v) {
		p->nomem = true;
		return false;
	}
	if (old)
		v[old++] = ' ';
	memcpy(v + old, text, n);
	v[old + n] = '\0';
	b->val[k] = v;
	b->len[k] = old + n;
	return true;
}

/* ================================================================ values */

static const char *trim(const char *s, size_t *n)
{
	while (*n && (*s == ' ' || *s == '\t')) {
		s++;
		(*n)--;
	}
	while (*n && (s[*n - 1] == ' ' || s[*n - 1] == '\t'))
		(*n)--;
	return s;
}

static const struct al_rule *builtin_by_id(const char *id)
{
	for (size_t i = 0; i < al_rules_count(); i++)
		if (strcasecmp(al_rule_at(i)->id, id) == 0)
			return al_rule_at(i);
	return NULL;
}

static bool valid_id(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > MAX_ID || !isalpha((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
			return false;
	return true;
}

/* "ANE" followed by digits only: the built-in id space. */
static bool builtin_pattern(const char *s)
{
	if (strncasecmp(s, "ANE", 3) != 0 || !s[3])
		return false;
	for (const char *c = s + 3; *c; c++)
		if (!isdigit((unsigned char)*c))
			return false;
	return true;
}

static bool valid_name(const char *s)
{
	if (!*s || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '-')
			return false;
	return true;
}

static bool parse_kind(const char *s, enum al_rule_kind *out)
{
	for (int k = 0; k < AL_RULE_KIND_COUNT; k++)
		if (strcasecmp(s, al_rule_kind_name((enum al_rule_kind)k)) == 0) {
			*out = (enum al_rule_kind)k;
			return true;
		}
	return false;
}

static bool parse_unit(const char *s, enum al_unit *out)
{
	static const enum al_unit ok[] = {AL_UNIT_ANE, AL_UNIT_GPU, AL_UNIT_CPU, AL_UNIT_GPU_OR_CPU};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (strcasecmp(s, al_unit_name(ok[i])) == 0) {
			*out = ok[i];
			return true;
		}
	return false;
}

/* The comma-separated types of a `layer:` / `op:` value into the arena. */
static bool parse_types(struct parser *p, const struct block *b, int k, struct al_user_rule *ur)
{
	const char *s = b->val[k];
	const char *list[MAX_TYPES];
	size_t lens[MAX_TYPES], n = 0;
	for (;;) { /* every item, the one after a trailing comma included */
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		const char *t = trim(s, &len);
		bool ok = len > 0 && len <= 128;
		for (size_t i = 0; ok && i < len; i++)
			ok = isalnum((unsigned char)t[i]) || t[i] == '_';
		if (!ok) {
			report(p, AL_SEV_ERROR, b->line[k],
			       "'%s' wants type names separated by commas, got '%.*s'", key_names[k],
			       (int)(len > 64 ? 64 : len), t);
			return false;
		}
		if (n == MAX_TYPES) {
			report(p, AL_SEV_ERROR, b->line[k], "more than %d types in '%s'",
			       MAX_TYPES, key_names[k]);
			return false;
		}
		list[n] = t;
		lens[n++] = len;
		if (!e)
			break;
		s = e + 1;
	}
	ur->types = ali_arena_array(&p->u->arena, n, sizeof *ur->types);
	if (!ur->types) {
		p->nomem = true;
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		char *t = ali_arena_strndup(&p->u->arena, list[i], lens[i]);
		if (!t) {
			p->nomem = true;
			return false;
		}
		ur->types[i] = t;
		bool known = (k == K_LAYER ? ali_nn_kind_by_name(t) : ali_mil_kind_by_name(t)) >= 0;
		if (!known)
			report(p, AL_SEV_WARNING, b->line[k],
			       "'%s' is not a %s anelint knows; the rule matches it by name anyway", t,
			       k == K_LAYER ? "NeuralNetwork layer type" : "ML Program op type");
	}
	ur->n_types = (uint32_t)n;
	return true;
}

static const char *keep(struct parser *p, const char *s)
{
	char *c = ali_arena_strndup(&p->u->arena, s, strlen(s));
	if (!c)
		p->nomem = true;
	return c;
}

/* ================================================================ one block -> one rule */

static bool has_rule(const struct parser *p, const char *id, const char *name)
{
	for (size_t i = 0; i < p->u->n; i++) {
		const struct al_rule *r = &p->u->rules[i].rule;
		if ((id && strcasecmp(r->id, id) == 0) || (name && strcmp(r->name, name) == 0))
			return true;
	}
	return false;
}

/* The fields every rule may set; kind and unit stay consistent. */
static bool apply_common(struct parser *p, const struct block *b, struct al_rule *r, bool is_new)
{
	bool ok = true;
	const char *v;
	if ((v = b->val[K_FAMILIES])) {
		char bad[64];
		uint32_t f;
		if (!ali_families_parse(v, &f, bad, sizeof bad)) {
			report(p, AL_SEV_ERROR, b->line[K_FAMILIES],
			       "families: '%s' is not a chip family (%s), all, none, X+ or X..Y",
			       bad[0] ? bad : v, "a12, a14 / m1, a15 / m2, a16 / m3, a17 / m4, a18 / m5");
			ok = false;
		} else {
			r->families = f;
		}
	}
	if ((v = b->val[K_RELEASES])) {
		char bad[64];
		uint32_t f;
		if (!ali_releases_parse(v, &f, bad, sizeof bad)) {
			report(p, AL_SEV_ERROR, b->line[K_RELEASES],
			       "releases: '%s' is not an OS release (%s), all, none, X+ or X..Y",
			       bad[0] ? bad : v, "ios13 ... ios18, ios26, ios27, or macos11 ... macos27");
			ok = false;
		} else {
			r->releases = f;
		}
	}
	if ((v = b->val[K_OFF])) { /* FAMILIES@RELEASES, ...: switched off there only */
		uint32_t *off = ali_arena_array(&p->u->arena, 32, sizeof *off);
		const char *item = v;
		bool good = off != NULL;
		while (good && *item) {
			const char *end = strchr(item, ',');
			size_t n = end ? (size_t)(end - item) : strlen(item);
			char one[256], bad[64];
			uint32_t fm = 0, rm = 0;
			const char *at = memchr(item, '@', n);
			good = n < sizeof one && at && at > item;
			if (good) {
				memcpy(one, item, n);
				one[n] = 0;
				one[at - item] = 0;
				good = ali_families_parse(one, &fm, bad, sizeof bad) &&
				       ali_releases_parse(one + (at - item) + 1, &rm, bad, sizeof bad) && fm && rm;
			}
			for (int i = 0; good && i < 32; i++)
				if (fm >> i & 1u)
					off[i] |= rm;
			item = end ? end + 1 : item + n;
		}
		if (!good) {
			report(p, AL_SEV_ERROR, b->line[K_OFF],
			       "off: '%s' is not a list of FAMILIES@RELEASES (e.g. a17@ios18, a14..a15@ios17+)", v);
			ok = false;
		} else {
			r->off = off;
		}
	}
	enum al_rule_kind kind = r->kind;
	if ((v = b->val[K_KIND]) && !parse_kind(v, &kind)) {
		report(p, AL_SEV_ERROR, b->line[K_KIND],
		       "kind: '%s' is not illegal, cost or warn", v);
		ok = false;
	}
	enum al_unit unit = r->unit;
	if ((v = b->val[K_UNIT]) && !parse_unit(v, &unit)) {
		report(p, AL_SEV_ERROR, b->line[K_UNIT],
		       "unit: '%s' is not cpu, gpu, gpu_or_cpu or ane", v);
		ok = false;
	}
	uint32_t uline = b->line[K_UNIT] ? b->line[K_UNIT] : b->line[K_KIND] ? b->line[K_KIND]
										: b->first_line;
	if (ok) {
		if (!b->val[K_UNIT]) /* the unit follows a changed kind */
			unit = kind == AL_RULE_WARN ? AL_UNIT_ANE
			       : (is_new || unit == AL_UNIT_ANE || unit == AL_UNIT_NONE) ? AL_UNIT_GPU_OR_CPU
			       : unit;
		if (kind == AL_RULE_WARN && unit != AL_UNIT_ANE) {
			report(p, AL_SEV_ERROR, uline,
			       "unit: a warn rule moves nothing; use unit ane or leave it out");
			ok = false;
		} else if (kind != AL_RULE_WARN && unit == AL_UNIT_ANE) {
			report(p, AL_SEV_ERROR, uline,
			       "unit: an %s rule moves work off the ANE: cpu, gpu or gpu_or_cpu",
			       al_rule_kind_name(kind));
			ok = false;
		}
		r->kind = kind;
		r->unit = unit;
	}
	if ((v = b->val[K_CONFIDENCE])) {
		char c = (char)toupper((unsigned char)v[0]);
		if (strlen(v) != 1 || (c != 'A' && c != 'M' && c != 'G')) {
			report(p, AL_SEV_ERROR, b->line[K_CONFIDENCE],
			       "confidence: '%s' is not A (Apple says so), M (measured) or G (guess)", v);
			ok = false;
		} else {
			r->confidence = c;
		}
	}
	if ((v = b->val[K_SOURCE])) {
		if (strncmp(v, "https://", 8) != 0 && strncmp(v, "http://", 7) != 0) {
			report(p, AL_SEV_ERROR, b->line[K_SOURCE],
			       "source: a URL starting with https:// or http://");
			ok = false;
		} else {
			r->url = keep(p, v);
		}
	}
	if ((v = b->val[K_TITLE]))
		r->title = keep(p, v);
	if ((v = b->val[K_PROVENANCE]))
		r->provenance = keep(p, v);
	if ((v = b->val[K_WHY]))
		r->why = keep(p, v);
	if ((v = b->val[K_FIX]))
		r->fix = keep(p, v);
	if ((v = b->val[K_CATALOG]))
		r->catalog = keep(p, v);
	return ok && !p->nomem;
}

static void block_end(struct parser *p, struct block *b)
{
	if (b->first_line == 0) /* no key seen */
		return;
	const char *id = b->val[K_ID];
	if (!id) {
		report(p, AL_SEV_ERROR, b->first_line, "rule without 'id:'");
		return;
	}
	if (!valid_id(id)) {
		report(p, AL_SEV_ERROR, b->line[K_ID],
		       "id '%.64s': 1-%d letters, digits, '_' or '-', starting with a letter", id, MAX_ID);
		return;
	}
	if (has_rule(p, id, NULL)) {
		report(p, AL_SEV_ERROR, b->line[K_ID], "id %s appears twice in the file", id);
		return;
	}
	if (p->u->n == MAX_RULES) {
		report(p, AL_SEV_ERROR, b->first_line, "more than %d rules", MAX_RULES);
		return;
	}
	const struct al_rule *base = builtin_by_id(id);
	if (!base && builtin_pattern(id)) {
		report(p, AL_SEV_ERROR, b->line[K_ID],
		       "id %s: ANE ids belong to built-in rules and there is no such rule; pick another "
		       "id (e.g. USR001)", id);
		return;
	}
	struct al_user_rule ur = {.base = base, .line = b->first_line};
	bool ok = true;
	if (base) {
		for (int k = 0; k < K_COUNT; k++)
			if (b->val[k] && override_forbidden[k]) {
				report(p, AL_SEV_ERROR, b->line[k],
				       "'%s' cannot be changed in an override of built-in rule %s; add a "
				       "rule with a new id instead", key_names[k], base->id);
				ok = false;
			}
		int given = 0;
		for (int k = 0; k < K_COUNT; k++)
			given += k != K_ID && b->val[k];
		if (ok && given == 0) {
			report(p, AL_SEV_ERROR, b->line[K_ID],
			       "override of %s changes nothing", base->id);
			ok = false;
		}
		ur.rule = *base;
		ur.rule.url = NULL; /* the override's claim stands on its own source */
	} else {
		static const int required[] = {K_TITLE, K_KIND, K_CONFIDENCE};
		for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
			if (!b->val[required[i]]) {
				report(p, AL_SEV_ERROR, b->first_line, "rule %s has no '%s:'", id,
				       key_names[required[i]]);
				ok = false;
			}
		if (!!b->val[K_LAYER] == !!b->val[K_OP]) {
			report(p, AL_SEV_ERROR, b->first_line,
			       "rule %s needs exactly one of 'layer:' (NeuralNetwork layer types) and "
			       "'op:' (ML Program op types)", id);
			ok = false;
		}
		ur.rule.scope = b->val[K_LAYER] ? AL_SCOPE_NN : AL_SCOPE_MIL;
		ur.rule.families = AL_FAM_ALL;
		ur.rule.releases = AL_REL_ALL;
		ur.rule.kind = AL_RULE_ILLEGAL;
		ur.rule.unit = AL_UNIT_GPU_OR_CPU;
		ur.rule.confidence = 'G';
		if (ok && !parse_types(p, b, b->val[K_LAYER] ? K_LAYER : K_OP, &ur))
			ok = false;
		char name[80];
		if (b->val[K_NAME]) {
			snprintf(name, sizeof name, "%s", b->val[K_NAME]);
			if (!valid_name(b->val[K_NAME])) {
				report(p, AL_SEV_ERROR, b->line[K_NAME],
				       "name: lower-case letters, digits and '-' (at most 64)");
				ok = false;
			}
		} else {
			size_t k = snprintf(name, sizeof name, "user-"), i = 0;
			for (; id[i] && k + 1 < sizeof name; i++)
				name[k++] = id[i] == '_' ? '-' : (char)tolower((unsigned char)id[i]);
			name[k] = '\0';
		}
		if (ok && (al_rule_find(name) || has_rule(p, NULL, name))) {
			report(p, AL_SEV_ERROR, b->val[K_NAME] ? b->line[K_NAME] : b->line[K_ID],
			       "name %s is taken by another rule", name);
			ok = false;
		}
		ur.rule.id = keep(p, id);
		ur.rule.name = keep(p, name);
		ur.rule.title = "";
		ur.rule.fix = "(none given)";
		if (b->val[K_REASON])
			ur.reason = keep(p, b->val[K_REASON]);
	}
	if (!b->val[K_PROVENANCE] && !b->val[K_SOURCE]) {
		report(p, AL_SEV_ERROR, b->first_line,
		       "rule %s has neither 'provenance:' nor 'source:': say who observed it and where",
		       id);
		ok = false;
	}
	if (!apply_common(p, b, &ur.rule, base == NULL))
		ok = false;
	if (!ok || p->nomem)
		return;
	if (!b->val[K_PROVENANCE]) /* a source alone: the URL is the provenance */
		ur.rule.provenance = ur.rule.url;
	if (!ur.rule.why)
		ur.rule.why = ur.rule.title;
	ur.rule.origin = ali_arena_printf(&p->u->arena, "%s:%u", p->name, b->first_line);
	if (!ur.rule.origin) {
		p->nomem = true;
		return;
	}
	if (p->u->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		struct al_user_rule *r = ali_realloc(p->u->rules, cap * sizeof *r);
		if (!r) {
			p->nomem = true;
			return;
		}
		p->u->rules = r;
		p->cap = cap;
	}
	p->u->rules[p->u->n++] = ur;
}

/* ================================================================ lines */

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t k = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
	if (k == 0 || k > n || (k == 2 && c < 0xc2) || (k == 4 && c > 0xf4))
		return 0;
	for (size_t i = 1; i < k; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (k == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0)))
		return 0; /* overlong, or a surrogate */
	if (k == 4 && ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90)))
		return 0;
	return k;
}

/* A line's text is printable UTF-8 (tabs allowed); reports the first bad byte. */
static bool clean_line(struct parser *p, const char *s, size_t n, uint32_t line)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			report(p, AL_SEV_ERROR, line, "control character 0x%02x in column %zu", c,
			       i + 1);
			return false;
		}
		size_t k = utf8_len((const unsigned char *)s + i, n - i);
		if (k == 0) {
			report(p, AL_SEV_ERROR, line, "invalid UTF-8 in column %zu", i + 1);
			return false;
		}
		i += k;
	}
	return true;
}

static void check_empty(struct parser *p, struct block *b);

static void parse_line(struct parser *p, struct block *b, const char *s, size_t n, uint32_t line)
{
	size_t tn = n;
	const char *t = trim(s, &tn);
	if (tn == 0) { /* a blank line ends the rule */
		check_empty(p, b);
		block_end(p, b);
		block_clear(b);
		return;
	}
	if (t[0] == '#')
		return;
	if (s[0] == ' ' || s[0] == '\t') { /* continuation of the previous value */
		if (b->last < 0) {
			report(p, AL_SEV_ERROR, line,
			       "indented line, but no 'key:' line above it to continue");
			return;
		}
		block_append(p, b, b->last, t, tn, line);
		return;
	}
	const char *colon = memchr(t, ':', tn);
	size_t kn = colon ? (size_t)(colon - t) : 0;
	int k = -1;
	for (int i = 0; colon && i < K_COUNT; i++)
		if (strlen(key_names[i]) == kn && strncasecmp(key_names[i], t, kn) == 0)
			k = i;
	if (!colon) {
		report(p, AL_SEV_ERROR, line, "expected 'key: value', a blank line or a # comment");
		b->last = -1;
		return;
	}
	if (k < 0) {
		report(p, AL_SEV_ERROR, line, "unknown key '%.*s' (keys: id, name, layer, op, "
		       "families, releases, off, kind, unit, confidence, title, reason, provenance, source, "
		       "why, fix, "
		       "catalog)", (int)(kn > 40 ? 40 : kn), t);
		b->last = -1;
		return;
	}
	if (b->first_line == 0)
		b->first_line = line;
	if (b->val[k]) {
		report(p, AL_SEV_ERROR, line, "'%s' given twice in one rule (first on line %u)",
		       key_names[k], b->line[k]);
		b->last = -1;
		return;
	}
	size_t vn = tn - kn - 1;
	const char *v = trim(colon + 1, &vn);
	b->line[k] = line;
	b->last = k;
	if (vn == 0) { /* the value may follow on indented lines */
		b->val[k] = ali_calloc(1, 1);
		if (!b->val[k])
			p->nomem = true;
		return;
	}
	block_append(p, b, k, v, vn, line);
}

/* Empty values (a key with nothing after it, even on continuation lines) are errors. */
static void check_empty(struct parser *p, struct block *b)
{
	for (int k = 0; k < K_COUNT; k++)
		if (b->val[k] && b->len[k] == 0) {
			report(p, AL_SEV_ERROR, b->line[k], "'%s' has no value", key_names[k]);
			ali_free(b->val[k]);
			b->val[k] = NULL;
			b->first_line = b->first_line ? b->first_line : b->line[k];
		}
}

static enum al_status parse_rules(const char *text, size_t n, const char *name, al_user_rules **out,
				  al_diags *d);

enum al_status al_user_rules_parse(const char *text, size_t n, const char *name,
				   al_user_rules **out, al_diags *d)
{
	if (!out)
		return AL_E_INVALID_ARG;
	*out = NULL;
	if (!text && n)
		return AL_E_INVALID_ARG;
	struct al_map guarded; /* the guard-page test mode's copy (base.h) */
	al_span s = ali_guard_span((al_span){(const uint8_t *)text, n}, &guarded);
	enum al_status st = parse_rules((const char *)s.p, s.n, name, out, d);
	ali_unmap(&guarded);
	return st;
}

static enum al_status parse_rules(const char *text, size_t n, const char *name, al_user_rules **out,
				  al_diags *d)
{
	if (!out)
		return AL_E_INVALID_ARG;
	*out = NULL;
	if (!text && n)
		return AL_E_INVALID_ARG;
	struct parser p = {.name = name ? name : "(rules)", .d = d};
	if (n > MAX_FILE) {
		report(&p, AL_SEV_ERROR, 1, "rules file larger than %u bytes", MAX_FILE);
		return AL_E_FORMAT;
	}
	p.u = ali_calloc(1, sizeof *p.u);
	if (!p.u) {
		ali_diag_add(d, AL_SEV_ERROR, p.name, UINT64_MAX, NULL, NULL,
			    "out of memory while reading rules");
		return AL_E_NOMEM;
	}
	struct block b;
	memset(&b, 0, sizeof b);
	b.last = -1;
	uint32_t line = 0;
	for (size_t pos = 0; pos < n && !p.nomem;) {
		const char *s = text + pos;
		const char *nl = memchr(s, '\n', n - pos);
		size_t len = nl ? (size_t)(nl - s) : n - pos;
		pos += len + (nl ? 1 : 0);
		line++;
		if (len && s[len - 1] == '\r')
			len--;
		if (len > MAX_LINE) {
			report(&p, AL_SEV_ERROR, line, "line longer than %u bytes", MAX_LINE);
			continue;
		}
		if (!clean_line(&p, s, len, line))
			continue;
		parse_line(&p, &b, s, len, line);
	}
	check_empty(&p, &b);
	block_end(&p, &b);
	block_clear(&b);
	if (p.nomem || p.u->arena.failed) {
		ali_diag_add(d, AL_SEV_ERROR, p.name, UINT64_MAX, NULL, NULL,
			    "out of memory while reading rules");
		al_user_rules_free(p.u);
		return AL_E_NOMEM;
	}
	if (p.errors) {
		if (p.errors > MAX_ERRORS)
			ali_diag_add(d, AL_SEV_NOTE, p.name, UINT64_MAX, NULL, NULL,
				    "%u more errors not shown", p.errors - MAX_ERRORS);
		al_user_rules_free(p.u);
		return AL_E_FORMAT;
	}
	*out = p.u;
	return AL_OK;
}

enum al_status al_user_rules_load(const char *path, al_user_rules **out, al_diags *d)
{
	if (!out)
		return AL_E_INVALID_ARG;
	*out = NULL;
	if (!path)
		return AL_E_INVALID_ARG;
	int fd;
	struct stat st;
	enum al_status ost = ali_open_regular(path, NULL, &fd, &st, d); /* a FIFO must not hang */
	if (ost != AL_OK)
		return ost;
	if (st.st_size > (off_t)MAX_FILE) {
		ali_diag_add(d, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL,
			    "rules file larger than %u bytes", MAX_FILE);
		close(fd);
		return AL_E_FORMAT;
	}
	size_t cap = (size_t)st.st_size + 1, n = 0;
	char *buf = ali_malloc(cap);
	if (!buf) {
		close(fd);
		ali_diag_add(d, AL_SEV_ERROR, path, UINT64_MAX, NULL, NULL,
			    "out of memory while reading rules");
		return AL_E_NOMEM;
	}
	for (;;) { /* read to EOF, never past MAX_FILE even if the file grows */
		if (n == cap) {
			if (cap > MAX_FILE)
				break;
			char *nb = ali_realloc(buf, cap * 2 > MAX_FILE + 1 ? MAX_FILE + 1 : cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap = cap * 2 > MAX_FILE + 1 ? MAX_FILE + 1 : cap * 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	enum al_status rc = al_user_rules_parse(buf, n, path, out, d);
	ali_free(buf);
	return rc;
}

/* ================================================================ access */

void al_user_rules_free(al_user_rules *u)
{
	if (!u)
		return;
	ali_free(u->rules);
	ali_arena_free(&u->arena);
	ali_free(u);
}

size_t al_user_rules_count(const al_user_rules *u)
{
	return u ? u->n : 0;
}

const struct al_user_rule *ali_user_rules_get(const al_user_rules *u, size_t i)
{
	return u && i < u->n ? &u->rules[i] : NULL;
}

const struct al_rule *al_user_rule_at(const al_user_rules *u, size_t i)
{
	const struct al_user_rule *ur = ali_user_rules_get(u, i);
	return ur ? &ur->rule : NULL;
}

const struct al_user_rule *ali_user_rules_override(const al_user_rules *u,
						  const struct al_rule *builtin)
{
	for (size_t i = 0; u && builtin && i < u->n; i++)
		if (u->rules[i].base == builtin)
			return &u->rules[i];
	return NULL;
}

bool ali_user_rule_matches(const struct al_user_rule *ur, const struct al_node *n)
{
	if (!ur || !n || !n->type)
		return false;
	for (uint32_t i = 0; i < ur->n_types; i++)
		if (strcmp(ur->types[i], n->type) == 0)
			return true;
	return false;
}

const struct al_rule *al_user_rules_find(const al_user_rules *u, const char *id_or_name)
{
	if (!id_or_name)
		return NULL;
	for (size_t i = 0; u && i < u->n; i++) {
		const struct al_rule *r = &u->rules[i].rule;
		if (strcasecmp(r->id, id_or_name) == 0 || strcmp(r->name, id_or_name) == 0)
			return r;
	}
	return al_rule_find(id_or_name);
}

bool al_rule_is_override(const struct al_rule *r)
{
	return r && r->origin && builtin_by_id(r->id) != NULL;
}
