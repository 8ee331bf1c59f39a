/* SPDX-License-Identifier: MIT */
/* targets.c: the chip-family table (expanded from targets.def), its lookups by
 * id or alias, the default target, and the families bit sets that rules carry
 * (parsed and formatted by idset.c: "a15+", "m1, a16"). The
 * figures themselves, and where each comes from, are in targets.def and
 * docs/cost-model.md; nothing here computes with them.
 */
#include "analysis.h"

#include <string.h>
#include <strings.h>

#define AL_TARGET(id_, aliases_, name_, arch_, at, ab, ao, al, gt, gb, go, gk, ct, cb, co, axis,     \
		  chan, kw, feat, src)                                                             \
	{.id = #id_, .aliases = aliases_, .name = name_, .arch = arch_, .ane_tflops = at,          \
	 .ane_gbs = ab, .ane_overhead_us = ao, .ane_layer_us = al, .gpu_tflops = gt,               \
	 .gpu_gbs = gb, .gpu_overhead_us = go, .gpu_kernel_us = gk, .cpu_tflops = ct,              \
	 .cpu_gbs = cb, .cpu_overhead_us = co, .axis_cap = axis, .channel_cap = chan,              \
	 .conv_kw_cap = kw, .features = feat, .source = src},
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

int ali_target_index(const struct al_target *t)
{
	if (!t)
		return -1;
	for (size_t i = 0; i < N_TARGETS; i++)
		if (t == &targets[i])
			return (int)i;
	return -1;
}

static const struct al_target *find_n(const char *s, size_t n)
{
	if (!s || n == 0)
		return NULL;
	for (size_t i = 0; i < N_TARGETS; i++)
		if ((strlen(targets[i].id) == n && strncasecmp(targets[i].id, s, n) == 0) ||
		    ali_idset_in_list(targets[i].aliases, s, n))
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
	int i = ali_target_index(t ? t : al_target_default());
	return r && i >= 0 && (r->families >> i) & 1u;
}

static int find_index(const char *s, size_t n)
{
	return ali_target_index(find_n(s, n));
}

static const char *id_at(size_t i)
{
	return targets[i].id;
}

static const struct al_idset families = {N_TARGETS, id_at, find_index};

size_t al_rule_families(const struct al_rule *r, char *buf, size_t cap)
{
	return ali_idset_format(&families, r ? r->families : 0, buf, cap);
}

bool ali_families_parse(const char *s, uint32_t *out, char *bad, size_t bad_cap)
{
	return ali_idset_parse(&families, s, out, bad, bad_cap);
}

bool al_rule_evaluated(const struct al_rule *r, size_t ti, size_t ri)
{
	if (!r || ti >= 32 || ri >= 32 || !((r->families >> ti) & 1u) || !((r->releases >> ri) & 1u))
		return false;
	return !r->off || !((r->off[ti] >> ri) & 1u);
}
