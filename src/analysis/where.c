/* SPDX-License-Identifier: MIT */
/* where.c: al_where_parse, the one reading of where a model runs from text (the
 * CLI's --target / --os / --compute-units, the configuration's keys, the Python
 * package's arguments): ids or aliases (targets.c, releases.c), `all`, comma
 * lists as the cross product of verdict columns, compute units (plan.c). An
 * error is a diagnostic whose message lists what would have been known. */
#include "analysis.h"

#include <string.h>

/* "a12, a14, ..." (targets) or "ios13, ios14, ..." (releases). */
static void id_names(char *buf, size_t cap, bool targets)
{
	size_t len = 0;
	size_t count = targets ? al_targets_count() : al_releases_count();
	buf[0] = 0;
	for (size_t i = 0; i < count && len < cap; i++) {
		const char *id = targets ? al_target_at(i)->id : al_release_at(i)->id;
		int k = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", id);
		if (k < 0)
			break;
		len += (size_t)k;
	}
}

static const void *find_id(const char *id, bool targets)
{
	return targets ? (const void *)al_target_find(id) : (const void *)al_release_find(id);
}

static enum al_status unknown_id(const char *id, bool targets, bool lists, al_diags *d)
{
	char ids[256];
	id_names(ids, sizeof ids, targets);
	ali_diag_add(d, AL_SEV_ERROR, NULL, UINT64_MAX, targets ? "target" : "os", id, "unknown %s '%s' (%s%s%s)",
		     targets ? "target" : "OS release", id, ids, targets ? "" : ", or macos11 ... macos27",
		     lists ? ", or all; a comma list compares several" : "");
	return AL_E_INVALID_ARG;
}

/* spec: "all" (*all), or ids separated by commas into v (each once). */
static enum al_status id_list(const char *spec, bool targets, const void **v, size_t *n, bool *all,
			      al_diags *d)
{
	*n = 0;
	*all = strcmp(spec, "all") == 0;
	if (*all)
		return AL_OK;
	const char *p = spec;
	for (;;) {
		size_t len = strcspn(p, ",");
		char id[64];
		snprintf(id, sizeof id, "%.*s", (int)(len < 63 ? len : 63), p);
		const void *x = len && len < 63 ? find_id(id, targets) : NULL;
		if (!x)
			return unknown_id(len ? id : spec, targets, true, d);
		bool seen = false;
		for (size_t i = 0; i < *n; i++)
			seen |= v[i] == x;
		if (!seen && *n == AL_WHERE_MAX_COLUMNS) {
			ali_diag_add(d, AL_SEV_ERROR, NULL, UINT64_MAX, NULL, NULL, "more than 32 ids in '%s'", spec);
			return AL_E_INVALID_ARG;
		}
		if (!seen)
			v[(*n)++] = x;
		if (!p[len])
			return AL_OK;
		p += len + 1;
	}
}

/* Lists: every target with every release, targets first. */
static enum al_status cross(struct al_where_spec *out, const void **tl, size_t nt, bool t_all, const void **rl,
			    size_t nr, bool r_all, al_diags *d)
{
	if (t_all)
		for (nt = 0; nt < al_targets_count() && nt < AL_WHERE_MAX_COLUMNS; nt++)
			tl[nt] = al_target_at(nt);
	if (r_all)
		for (nr = 0; nr < al_releases_count() && nr < AL_WHERE_MAX_COLUMNS; nr++)
			rl[nr] = al_release_at(nr);
	size_t ct = nt ? nt : 1, cr = nr ? nr : 1;
	if (ct * cr > AL_WHERE_MAX_COLUMNS) {
		ali_diag_add(d, AL_SEV_ERROR, NULL, UINT64_MAX, NULL, NULL,
			     "the targets and OS releases make %zu verdict columns: at most 32", ct * cr);
		return AL_E_INVALID_ARG;
	}
	for (size_t i = 0; i < ct; i++)
		for (size_t j = 0; j < cr; j++)
			out->columns[out->n_columns++] = (struct al_column){nt ? tl[i] : NULL, nr ? rl[j] : NULL};
	out->where.target = out->columns[0].target;
	out->where.os = out->columns[0].os;
	return AL_OK;
}

static enum al_status parse_one(const char *target, const char *os, struct al_where_spec *out, al_diags *d)
{
	if (target && !(out->where.target = al_target_find(target)))
		return unknown_id(target, true, false, d);
	if (os && !(out->where.os = al_release_find(os)))
		return unknown_id(os, false, false, d);
	return AL_OK;
}

enum al_status al_where_parse(const char *target, const char *os, const char *compute_units, unsigned flags,
			      struct al_where_spec *out, al_diags *d)
{
	if (!out)
		return AL_E_INVALID_ARG;
	memset(out, 0, sizeof *out);
	enum al_status st = AL_OK;
	if (flags & AL_WHERE_ONE) {
		st = parse_one(target, os, out, d);
	} else {
		/* one target and one release; all of one for one of the other (one
		 * column each); or the cross product of lists */
		const void *tl[AL_WHERE_MAX_COLUMNS], *rl[AL_WHERE_MAX_COLUMNS];
		size_t nt = 0, nr = 0;
		bool t_all = false, r_all = false;
		st = target ? id_list(target, true, tl, &nt, &t_all, d) : AL_OK;
		if (st == AL_OK && os)
			st = id_list(os, false, rl, &nr, &r_all, d);
		if (st == AL_OK && t_all && r_all) {
			ali_diag_add(d, AL_SEV_ERROR, NULL, UINT64_MAX, NULL, NULL,
				     "--target all with --os all would be %zu verdict columns, too many to read: name "
				     "the ones to compare, e.g. --target a14,a17 --os ios17,ios18 (the cross product: "
				     "a14/ios17, a14/ios18, a17/ios17, a17/ios18)",
				     al_targets_count() * al_releases_count());
			st = AL_E_INVALID_ARG;
		}
		if (st != AL_OK)
			return st;
		out->where.target = nt ? tl[0] : NULL;
		out->where.os = nr ? rl[0] : NULL;
		if (nt > 1 || nr > 1) {
			st = cross(out, tl, nt, t_all, rl, nr, r_all, d);
		} else {
			out->all_targets = t_all;
			out->all_releases = r_all;
		}
	}
	if (st == AL_OK && compute_units && !al_compute_units_parse(compute_units, &out->where.compute_units)) {
		ali_diag_add(d, AL_SEV_ERROR, NULL, UINT64_MAX, "compute_units", compute_units,
			     "--compute-units takes all, cpu-and-gpu, cpu-and-ne or cpu-only, not '%s'", compute_units);
		st = AL_E_INVALID_ARG;
	}
	return st;
}
