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

int where_error(const struct command_row *cmd, const al_diags *d)
{
	const struct al_diag *x = al_diags_count(d) ? al_diags_get(d, 0) : NULL;
	if (!x) {
		fprintf(stderr, "anelint: error: out of memory\n");
		return EXIT_IO;
	}
	/* the id or value given (x->node, quoted in the message, which has its
	 * control characters as '?'): escaped and cut as a usage error's argument */
	const char *open = x->node ? strchr(x->msg, '\'') : NULL;
	const char *close = open ? strrchr(x->msg, '\'') : NULL;
	fputs("anelint: ", stderr);
	if (close && close > open) {
		fwrite(x->msg, 1, (size_t)(open + 1 - x->msg), stderr);
		put_text(stderr, x->node, CLI_NAME_MAX);
		put_text(stderr, close, CLI_MSG_MAX);
	} else {
		put_text(stderr, x->msg, CLI_MSG_MAX);
	}
	fputc('\n', stderr);
	bool unknown_id = x->where && (strcmp(x->where, "target") == 0 || strcmp(x->where, "os") == 0);
	if (unknown_id)
		fprintf(stderr, "try 'anelint targets'\n");
	else
		fprintf(stderr, "try 'anelint %s%s--help'\n", cmd ? cmd->name : "", cmd ? " " : "");
	return EXIT_USAGE;
}

/* Turn --target, --rules, --policy, --switch-cost, --max-fixes into r. */
int prepare(struct cli *c, const struct command_row *cmd, struct run *r)
{
	memset(r, 0, sizeof *r);
	r->plan.policy = AL_POLICY_AUTO;
	/* where it runs (al_where_parse): one target and one release, all of one,
	 * or the cross product of lists as the verdict columns */
	struct al_where_spec w;
	al_diags *wd = al_diags_new();
	if (!wd)
		return EXIT_IO;
	enum al_status wst = al_where_parse(c->target, c->os, c->compute_units, 0, &w, wd);
	int wrc = wst == AL_OK ? EXIT_ALL_ANE : where_error(cmd, wd);
	al_diags_free(wd);
	if (wrc)
		return wrc;
	r->check.where = w.where;
	r->plan.where = w.where;
	r->plan.os = NULL; /* the plan follows the model's check */
	r->where = w;
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
	return r->where.all_targets || r->where.all_releases || r->where.n_columns;
}
