/* SPDX-License-Identifier: MIT */
/* settings.c: what option values turn into. --target / --os (ids, comma lists,
 * all: the verdict columns), --compute-units, --policy, --switch-cost,
 * --max-fixes and --rules become the library's check and plan options (prepare,
 * for check, info, plan, report, rules and explain); --seed, --max-memory and
 * --max-work become a run's bounds (run_settings, for run.c, fix.c, split.c).
 * A value that does not parse is a usage error naming it. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool parse_count(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	if (!*s || *s == '-')
		return false;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno)
		return false;
	*out = v;
	return true;
}

int run_settings(const struct cli *c, const struct command_row *cmd, uint64_t *seed,
		 uint64_t *max_bytes)
{
	*seed = 1;
	*max_bytes = 0;
	if (c->seed && !parse_count(c->seed, seed))
		return usage_error(cmd, "--seed takes a non-negative integer, not '%s'", c->seed);
	uint64_t mb = 0;
	if (c->max_memory && (!parse_count(c->max_memory, &mb) || mb == 0 || mb > (UINT64_C(1) << 40)))
		return usage_error(cmd, "--max-memory takes a number of megabytes (1 or more), not '%s'",
				   c->max_memory);
	*max_bytes = mb << 20;
	if (c->max_work && !max_work_of(c))
		return usage_error(cmd, "--max-work takes a number of element operations (1 or more, e.g. "
				   "1e9), not '%s'", c->max_work);
	return EXIT_ALL_ANE;
}

uint64_t max_work_of(const struct cli *c)
{
	char *end;
	errno = 0;
	double v = c->max_work && *c->max_work && *c->max_work != '-' ? strtod(c->max_work, &end) : 0;
	if (!c->max_work || errno || *end || !(v >= 1) || v >= 1.8e19)
		return 0;
	return (uint64_t)v;
}

/* "a12, a14, ..." (targets) or "ios13, ios14, ..." (releases) for messages. */
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

#define MAX_COLUMNS 32

/* A --target / --os value: "all" (*all), or ids separated by commas into v
 * (each once). 0, or the usage error's exit code. */
static int id_list(const struct command_row *cmd, const char *spec, bool targets, const void **v, size_t *n,
		   bool *all)
{
	*n = 0;
	*all = strcmp(spec, "all") == 0;
	if (*all)
		return EXIT_ALL_ANE;
	const char *p = spec;
	for (;;) {
		size_t len = strcspn(p, ",");
		char id[64];
		snprintf(id, sizeof id, "%.*s", (int)(len < 63 ? len : 63), p);
		const void *x = len && len < 63 ? (targets ? (const void *)al_target_find(id)
							   : (const void *)al_release_find(id)) : NULL;
		if (!x) {
			char ids[256];
			id_names(ids, sizeof ids, targets);
			fprintf(stderr, "anelint: unknown %s '", targets ? "target" : "OS release");
			put_text(stderr, len ? id : spec, CLI_NAME_MAX);
			fprintf(stderr, "' (%s%s, or all; a comma list compares several)\n", ids,
				targets ? "" : ", or macos11 ... macos27");
			fprintf(stderr, "try 'anelint targets'\n");
			return EXIT_USAGE;
		}
		bool seen = false;
		for (size_t i = 0; i < *n; i++)
			seen |= v[i] == x;
		if (!seen && *n == MAX_COLUMNS)
			return usage_error(cmd, "more than 32 ids in '%s'", spec);
		if (!seen)
			v[(*n)++] = x;
		if (!p[len])
			return EXIT_ALL_ANE;
		p += len + 1;
	}
}

static bool unit_by_name(const char *s, size_t n, enum al_unit *out)
{
	static const enum al_unit units[] = {AL_UNIT_ANE, AL_UNIT_GPU, AL_UNIT_CPU};
	for (size_t i = 0; i < 3; i++) {
		const char *name = al_unit_name(units[i]);
		if (strlen(name) == n && strncmp(name, s, n) == 0) {
			*out = units[i];
			return true;
		}
	}
	return false;
}

/* --switch-cost: "ane-cpu=700,ane-gpu=1200" (both directions), "ane>cpu=700" (one
 * direction), or one number for every switch; microseconds, > 0. */
static bool parse_switch_costs(const char *spec, double sw[AL_UNIT_COUNT][AL_UNIT_COUNT])
{
	const char *p = spec;
	for (int guard = 0; *p && guard < 64; guard++) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		const char *num = eq ? eq + 1 : p;
		char buf[64];
		size_t nlen = len - (size_t)(num - p);
		if (nlen == 0 || nlen >= sizeof buf)
			return false;
		memcpy(buf, num, nlen);
		buf[nlen] = 0;
		char *stop;
		errno = 0;
		double v = strtod(buf, &stop);
		if (*stop || errno || !(v > 0) || !isfinite(v))
			return false;
		if (!eq) {
			for (int a = 0; a < 3; a++)
				for (int b = 0; b < 3; b++)
					sw[a][b] = a == b ? 0 : v;
		} else {
			size_t klen = (size_t)(eq - p);
			const char *sep = NULL;
			bool both = true;
			for (size_t i = 0; i < klen && !sep; i++)
				if (p[i] == '-' || p[i] == '>') {
					sep = p + i;
					both = p[i] == '-';
				}
			enum al_unit a, b;
			if (!sep || !unit_by_name(p, (size_t)(sep - p), &a) ||
			    !unit_by_name(sep + 1, klen - (size_t)(sep + 1 - p), &b) || a == b)
				return false;
			sw[a][b] = v;
			if (both)
				sw[b][a] = v;
		}
		if (!end)
			return true;
		p = end + 1;
	}
	return *p == 0;
}

/* Turn --target, --rules, --policy, --switch-cost, --max-fixes into r. */
int prepare(struct cli *c, const struct command_row *cmd, struct run *r)
{
	memset(r, 0, sizeof *r);
	r->plan.policy = AL_POLICY_AUTO;
	/* one target and one release; all of one for one of the other (--target all,
	 * --os all: one column each, as before); or the cross product of lists */
	const void *tl[MAX_COLUMNS], *rl[MAX_COLUMNS];
	size_t nt = 0, nr = 0;
	bool t_all = false, r_all = false;
	int lrc = c->target ? id_list(cmd, c->target, true, tl, &nt, &t_all) : 0;
	if (!lrc && c->os)
		lrc = id_list(cmd, c->os, false, rl, &nr, &r_all);
	if (lrc)
		return lrc;
	if (t_all && r_all) {
		char n[32];
		snprintf(n, sizeof n, "%zu", al_targets_count() * al_releases_count());
		return usage_error(cmd, "--target all with --os all would be %s verdict columns, too many to read: "
					"name the ones to compare, e.g. --target a14,a17 --os ios17,ios18 (the cross "
					"product: a14/ios17, a14/ios18, a17/ios17, a17/ios18)", n);
	}
	r->check.target = nt ? tl[0] : NULL;
	r->check.os = nr ? rl[0] : NULL;
	r->plan.target = r->check.target;
	if (nt > 1 || nr > 1) { /* the columns: every target with every release, targets first */
		if (t_all)
			for (nt = 0; nt < al_targets_count() && nt < MAX_COLUMNS; nt++)
				tl[nt] = al_target_at(nt);
		if (r_all)
			for (nr = 0; nr < al_releases_count() && nr < MAX_COLUMNS; nr++)
				rl[nr] = al_release_at(nr);
		size_t ct = nt ? nt : 1, cr = nr ? nr : 1;
		if (ct * cr > MAX_COLUMNS) {
			char n[32];
			snprintf(n, sizeof n, "%zu", ct * cr);
			return usage_error(cmd, "the targets and OS releases make %s verdict columns: at most 32", n);
		}
		for (size_t i = 0; i < ct; i++)
			for (size_t j = 0; j < cr; j++)
				r->columns[r->n_columns++] = (struct al_column){nt ? tl[i] : NULL, nr ? rl[j] : NULL};
		r->check.target = r->columns[0].target;
		r->check.os = r->columns[0].os;
		r->plan.target = r->check.target;
	} else {
		r->all_targets = t_all;
		r->all_releases = r_all;
	}
	if (c->compute_units && !al_compute_units_parse(c->compute_units, &r->check.compute_units))
		return usage_error(cmd, "--compute-units takes all, cpu-and-gpu, cpu-and-ne or cpu-only, "
					"not '%s'", c->compute_units);
	r->plan.compute_units = r->check.compute_units;
	if (c->policy && !al_policy_parse(c->policy, &r->plan.policy))
		return usage_error(cmd, "--policy takes auto, nn2020, mlprogram or optimistic, not '%s'",
				   c->policy);
	if (c->switch_cost && !parse_switch_costs(c->switch_cost, r->plan.switch_us))
		return usage_error(cmd, "--switch-cost takes UNIT-UNIT=MICROSECONDS,... with units ane, gpu, "
					"cpu and a positive number, not '%s'", c->switch_cost);
	if (c->max_fixes) {
		char *end;
		errno = 0;
		unsigned long n = strtoul(c->max_fixes, &end, 10);
		if (*end || errno || n < 1 || n > 64 || c->max_fixes[0] == '-')
			return usage_error(cmd, "--max-fixes takes a number from 1 to 64, not '%s'", c->max_fixes);
		r->plan.max_fixes = (uint32_t)n;
	}
	if (c->rules) {
		al_diags *d = al_diags_new();
		if (!d)
			return EXIT_IO;
		enum al_status st = al_user_rules_load(c->rules, &r->rules, d);
		if (st != AL_OK) {
			print_errors(c->rules, d);
			al_diags_free(d);
			return status_exit(st);
		}
		al_diags_free(d);
		r->check.user_rules = r->rules;
	}
	return EXIT_ALL_ANE;
}

bool run_is_multi(const struct run *r)
{
	return r->all_targets || r->all_releases || r->n_columns;
}
