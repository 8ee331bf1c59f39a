/* targets.c: the chip-family table (expanded from targets.def), its lookups by
 * id or alias, the default target, and the families bit sets that rules carry:
 * parsing a list such as "a15+" or "m1, a16" and formatting one back. The
 * figures themselves, and where each comes from, are in targets.def and
 * docs/cost-model.md; nothing here computes with them.
 */
#include "analysis.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#define AL_TARGET(id_, aliases_, name_, arch_, at, ab, ao, gt, gb, go, ct, cb, co, axis, chan,  \
		  kw, feat, src)                                                                   \
	{.id = #id_, .aliases = aliases_, .name = name_, .arch = arch_, .ane_tflops = at,          \
	 .ane_gbs = ab, .ane_overhead_us = ao, .gpu_tflops = gt, .gpu_gbs = gb,                    \
	 .gpu_overhead_us = go, .cpu_tflops = ct, .cpu_gbs = cb, .cpu_overhead_us = co,            \
	 .axis_cap = axis, .channel_cap = chan, .conv_kw_cap = kw, .features = feat, .source = src},
static const struct al_target targets[] = {
#include "targets.def"
};
#undef AL_TARGET

#define N_TARGETS (sizeof targets / sizeof targets[0])
_Static_assert(N_TARGETS == AL_FAM_COUNT, "targets.def rows and family bits disagree");
_Static_assert(N_TARGETS <= 32, "a rule's families are a 32-bit set");

/* The default: A14 / M1, the oldest family that every Apple silicon Mac shares
 * and the oldest that Apple's ANE guidance and ANEForge's measurements cover
 * (docs/cost-model.md, "The default target"). */
#define DEFAULT_TARGET AL_FAMIDX_a14

size_t al_targets_count(void)
{
	return N_TARGETS;
}

const struct al_target *al_target_at(size_t i)
{
	return i < N_TARGETS ? &targets[i] : NULL;
}

const struct al_target *al_target_default(void)
{
	return &targets[DEFAULT_TARGET];
}

int al_target_index(const struct al_target *t)
{
	if (!t)
		return -1;
	for (size_t i = 0; i < N_TARGETS; i++)
		if (t == &targets[i])
			return (int)i;
	return -1;
}

/* Whether `word` (n bytes) is one of the comma-separated names in list. */
static bool in_list(const char *list, const char *word, size_t n)
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

static const struct al_target *find_n(const char *s, size_t n)
{
	if (!s || n == 0)
		return NULL;
	for (size_t i = 0; i < N_TARGETS; i++)
		if ((strlen(targets[i].id) == n && strncasecmp(targets[i].id, s, n) == 0) ||
		    in_list(targets[i].aliases, s, n))
			return &targets[i];
	return NULL;
}

const struct al_target *al_target_find(const char *id_or_alias)
{
	return id_or_alias ? find_n(id_or_alias, strlen(id_or_alias)) : NULL;
}

/* ================================================================ families */

bool al_rule_applies(const struct al_rule *r, const struct al_target *t)
{
	int i = al_target_index(t ? t : al_target_default());
	return r && i >= 0 && (r->families >> i) & 1u;
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

size_t al_rule_families(const struct al_rule *r, char *buf, size_t cap)
{
	uint32_t f = r ? r->families & AL_FAM_ALL : 0;
	size_t len = 0;
	if (buf && cap)
		buf[0] = '\0';
	if (!buf)
		cap = 0;
	if (f == AL_FAM_ALL || f == 0) {
		put(buf, cap, &len, f ? "all" : "none");
		return len;
	}
	int lo = __builtin_ctz(f), hi = 31 - __builtin_clz(f);
	uint32_t run = (hi == 31 ? ~0u : (1u << (hi + 1)) - 1u) & ~((1u << lo) - 1u);
	if (f == run && hi == (int)N_TARGETS - 1) { /* this family and every newer one */
		put(buf, cap, &len, targets[lo].id);
		put(buf, cap, &len, "+");
		return len;
	}
	if (f == run && hi - lo >= 2) {
		put(buf, cap, &len, targets[lo].id);
		put(buf, cap, &len, "..");
		put(buf, cap, &len, targets[hi].id);
		return len;
	}
	bool first = true;
	for (size_t i = 0; i < N_TARGETS; i++) {
		if (!((f >> i) & 1u))
			continue;
		if (!first)
			put(buf, cap, &len, ",");
		put(buf, cap, &len, targets[i].id);
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
static bool parse_item(const char *s, size_t n, uint32_t *acc, char *bad, size_t bad_cap)
{
	if (n == 3 && strncasecmp(s, "all", 3) == 0) {
		*acc |= AL_FAM_ALL;
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
		const struct al_target *a = find_n(s, (size_t)(dots - s));
		const struct al_target *b = find_n(dots + 2, n - (size_t)(dots - s) - 2);
		if (!a || !b) {
			set_bad(bad, bad_cap, s, n);
			return false;
		}
		int i = al_target_index(a), j = al_target_index(b);
		if (i > j) {
			int t = i;
			i = j;
			j = t;
		}
		for (int k = i; k <= j; k++)
			*acc |= 1u << k;
		return true;
	}
	bool plus = n > 1 && s[n - 1] == '+';
	const struct al_target *t = find_n(s, plus ? n - 1 : n);
	if (!t) {
		set_bad(bad, bad_cap, s, n);
		return false;
	}
	int i = al_target_index(t);
	*acc |= plus ? AL_FAM_ALL & ~((1u << i) - 1u) : 1u << i;
	return true;
}

bool al_families_parse(const char *s, uint32_t *out, char *bad, size_t bad_cap)
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
		const char *t = e;
		while (t > s && (t[-1] == ' ' || t[-1] == '\t'))
			t--;
		if (t == s) { /* empty item: ",," or a trailing comma */
			set_bad(bad, bad_cap, ",", 1);
			return false;
		}
		for (const char *c = s; c < t; c++)
			if (isspace((unsigned char)*c)) { /* "a14 a15": a missing comma */
				set_bad(bad, bad_cap, s, (size_t)(t - s));
				return false;
			}
		if (!parse_item(s, (size_t)(t - s), &acc, bad, bad_cap))
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
