/* SPDX-License-Identifier: MIT */
/* releases.c: the OS release table (expanded from releases.def), its lookups by
 * id or by another platform's name of the same release, the default (the
 * newest), and the releases bit sets that rules carry (parsed and formatted by
 * idset.c: "ios15+", "ios13..ios14", "macos14"). */
#include "analysis.h"

#include <string.h>
#include <strings.h>

#define AL_RELEASE(id_, ios_, name_, aliases_) {.id = #id_, .ios = ios_, .name = name_, .aliases = aliases_},
static const struct al_release releases[] = {
#include "releases.def"
};
#undef AL_RELEASE

#define N_RELEASES (sizeof releases / sizeof releases[0])
_Static_assert(N_RELEASES == AL_REL_COUNT, "releases.def rows and release bits disagree");
_Static_assert(N_RELEASES <= 32, "a rule's releases are a 32-bit set");

size_t al_releases_count(void)
{
	return N_RELEASES;
}

const struct al_release *al_release_at(size_t i)
{
	return i < N_RELEASES ? &releases[i] : NULL;
}

/* The default: the newest release, since a user asking "will it run on the ANE"
 * ships to current devices; --os names an older one. */
const struct al_release *al_release_default(void)
{
	return &releases[N_RELEASES - 1];
}

/* The iOS major version that introduced each specificationVersion
 * (coreml-format-facts.md section 3; al_spec_min_os names every platform's). */
static const int spec_ios[] = {[1] = 11, [2] = 11, [3] = 12, [4] = 13, [5] = 14, [6] = 15,
			       [7] = 16, [8] = 17, [9] = 18, [10] = 26};

const struct al_release *al_release_for_spec(int spec_version)
{
	int n = (int)(sizeof spec_ios / sizeof spec_ios[0]);
	if (spec_version >= n)
		return NULL;
	int ios = spec_version >= 1 ? spec_ios[spec_version] : 0;
	for (size_t i = 0; i < N_RELEASES; i++)
		if (releases[i].ios >= ios)
			return &releases[i];
	return NULL;
}

int ali_release_index(const struct al_release *r)
{
	if (!r)
		return -1;
	for (size_t i = 0; i < N_RELEASES; i++)
		if (r == &releases[i])
			return (int)i;
	return -1;
}

static int find_index(const char *s, size_t n)
{
	if (!s || n == 0)
		return -1;
	for (size_t i = 0; i < N_RELEASES; i++)
		if ((strlen(releases[i].id) == n && strncasecmp(releases[i].id, s, n) == 0) ||
		    ali_idset_in_list(releases[i].aliases, s, n))
			return (int)i;
	return -1;
}

const struct al_release *al_release_find(const char *name)
{
	int i = name ? find_index(name, strlen(name)) : -1;
	return i < 0 ? NULL : &releases[i];
}

static const char *id_at(size_t i)
{
	return releases[i].id;
}

static const struct al_idset release_set = {N_RELEASES, id_at, find_index};

bool al_rule_applies_at(const struct al_rule *r, const struct al_target *t,
			const struct al_release *os)
{
	int i = ali_release_index(os ? os : al_release_default());
	return al_rule_applies(r, t) && i >= 0 && (r->releases >> i) & 1u;
}

size_t al_rule_releases(const struct al_rule *r, char *buf, size_t cap)
{
	return ali_idset_format(&release_set, r ? r->releases : 0, buf, cap);
}

bool ali_releases_parse(const char *s, uint32_t *out, char *bad, size_t bad_cap)
{
	return ali_idset_parse(&release_set, s, out, bad, bad_cap);
}
