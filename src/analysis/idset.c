/* SPDX-License-Identifier: MIT */
/* idset.c: sets of table rows named by id or alias, as rules carry them: the
 * chip families (targets.c) and the OS releases (releases.c) a rule applies to.
 * One syntax for both, in user rule files and in every output: "all", "none",
 * "x" (one row), "x+" (that row and every later one), "x..y" (a range), and
 * comma-separated lists of those. Rows are in table order, oldest first; a set
 * is a bit set, bit i = row i. */
#include "analysis.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

bool ali_idset_in_list(const char *list, const char *word, size_t n)
{
	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && strncasecmp(p, word, n) == 0)
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

/* snprintf-like append: len counts what the whole text needs. */
static void put(char *buf, size_t cap, size_t *len, const char *s)
{
	size_t n = strlen(s);
	if (*len < cap) {
		size_t room = cap - *len - 1, k = n < room ? n : room;
		memcpy(buf + *len, s, k);
		buf[*len + k] = '\0';
	}
	*len += n;
}

size_t ali_idset_format(const struct al_idset *t, uint32_t bits, char *buf, size_t cap)
{
	uint32_t all = t->n >= 32 ? ~0u : (1u << t->n) - 1u;
	uint32_t f = bits & all;
	size_t len = 0;
	if (buf && cap)
		buf[0] = '\0';
	if (!buf)
		cap = 0;
	if (f == all || f == 0) {
		put(buf, cap, &len, f ? "all" : "none");
		return len;
	}
	int lo = __builtin_ctz(f), hi = 31 - __builtin_clz(f);
	uint32_t run = (hi == 31 ? ~0u : (1u << (hi + 1)) - 1u) & ~((1u << lo) - 1u);
	if (f == run && hi == (int)t->n - 1) { /* this row and every later one */
		put(buf, cap, &len, t->id((size_t)lo));
		put(buf, cap, &len, "+");
		return len;
	}
	if (f == run && hi - lo >= 2) {
		put(buf, cap, &len, t->id((size_t)lo));
		put(buf, cap, &len, "..");
		put(buf, cap, &len, t->id((size_t)hi));
		return len;
	}
	bool first = true;
	for (size_t i = 0; i < t->n; i++) {
		if (!((f >> i) & 1u))
			continue;
		if (!first)
			put(buf, cap, &len, ",");
		put(buf, cap, &len, t->id(i));
		first = false;
	}
	return len;
}

static void set_bad(char *bad, size_t cap, const char *s, size_t n)
{
	if (!bad || cap == 0)
		return;
	size_t k = n < cap - 1 ? n : cap - 1;
	memcpy(bad, s, k);
	bad[k] = '\0';
}

/* One item: "all", "none", "x", "x+", "x..y". */
static bool parse_item(const struct al_idset *t, const char *s, size_t n, uint32_t *acc, char *bad,
		       size_t bad_cap)
{
	uint32_t all = t->n >= 32 ? ~0u : (1u << t->n) - 1u;
	if (n == 3 && strncasecmp(s, "all", 3) == 0) {
		*acc |= all;
		return true;
	}
	if (n == 4 && strncasecmp(s, "none", 4) == 0)
		return true;
	const char *dots = NULL;
	for (size_t i = 0; i + 1 < n; i++)
		if (s[i] == '.' && s[i + 1] == '.') {
			dots = s + i;
			break;
		}
	if (dots) {
		int i = t->find(s, (size_t)(dots - s));
		int j = t->find(dots + 2, n - (size_t)(dots - s) - 2);
		if (i < 0 || j < 0) {
			set_bad(bad, bad_cap, s, n);
			return false;
		}
		if (i > j) {
			int x = i;
			i = j;
			j = x;
		}
		for (int k = i; k <= j; k++)
			*acc |= 1u << k;
		return true;
	}
	bool plus = n > 1 && s[n - 1] == '+';
	int i = t->find(s, plus ? n - 1 : n);
	if (i < 0) {
		set_bad(bad, bad_cap, s, n);
		return false;
	}
	*acc |= plus ? all & ~((1u << i) - 1u) : 1u << i;
	return true;
}

bool ali_idset_parse(const struct al_idset *t, const char *s, uint32_t *out, char *bad, size_t bad_cap)
{
	if (bad && bad_cap)
		bad[0] = '\0';
	if (!s)
		return false;
	uint32_t acc = 0;
	size_t items = 0;
	while (*s) {
		while (*s == ' ' || *s == '\t')
			s++;
		const char *e = s;
		while (*e && *e != ',')
			e++;
		const char *x = e;
		while (x > s && (x[-1] == ' ' || x[-1] == '\t'))
			x--;
		if (x == s) { /* empty item: ",," or a trailing comma */
			set_bad(bad, bad_cap, ",", 1);
			return false;
		}
		for (const char *c = s; c < x; c++)
			if (isspace((unsigned char)*c)) { /* "a14 a15": a missing comma */
				set_bad(bad, bad_cap, s, (size_t)(x - s));
				return false;
			}
		if (!parse_item(t, s, (size_t)(x - s), &acc, bad, bad_cap))
			return false;
		items++;
		s = *e ? e + 1 : e;
		if (*e && !*s) {
			set_bad(bad, bad_cap, ",", 1);
			return false;
		}
	}
	if (items == 0)
		return false;
	*out = acc;
	return true;
}
