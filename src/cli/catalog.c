/* SPDX-License-Identifier: MIT */
/* catalog.c: the commands that show what anelint knows rather than a model:
 * rules (every rule, one line each, or JSON), explain (one rule in full: what,
 * why, evidence, confidence, fix) and targets (the chip families with their
 * roofline figures, and the OS releases). A --rules file's rules are listed with
 * the built-in ones. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* Where a rule's reports saw it (issue #30): its evidence, and the chip families
 * and releases of that evidence as the rule table writes them. */
static void evidence_scope(const struct al_rule *r, struct al_rule_evidence *e, char sfam[128], char srel[128])
{
	al_rule_evidence_of(r, e);
	struct al_rule seen = *r;
	seen.families = e->families;
	seen.releases = e->releases;
	seen.off = NULL;
	al_rule_families(&seen, sfam, 128);
	al_rule_releases(&seen, srel, 128);
}

static const char *scope_name(enum al_rule_scope s)
{
	return s == AL_SCOPE_NN ? "neuralnetwork" : s == AL_SCOPE_MIL ? "mlprogram" : "model";
}

/* The rules a command sees: built-in ones (a user override in place of the rule
 * it replaces), then the user file's new rules. */
static size_t rule_list(const al_user_rules *u, const struct al_rule **out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < al_rules_count() && n < cap; i++) {
		const struct al_rule *r = al_rule_at(i);
		const struct al_rule *eff = u ? al_user_rules_find(u, r->id) : NULL;
		out[n++] = eff ? eff : r;
	}
	for (size_t i = 0; i < al_user_rules_count(u) && n < cap; i++) {
		const struct al_rule *r = al_user_rule_at(u, i);
		if (r && !al_rule_is_override(r))
			out[n++] = r;
	}
	return n;
}

int cmd_rules(struct cli *c)
{
	const struct command_row *cmd = command("rules");
	int rc = EXIT_ALL_ANE;
	const struct al_sink *sink = pick_sink(c, cmd, &rc);
	if (!sink)
		return rc;
	struct run run;
	rc = prepare(c, cmd, &run);
	if (rc)
		return rc;
	size_t cap = al_rules_count() + al_user_rules_count(run.rules);
	const struct al_rule **list = calloc(cap ? cap : 1, sizeof *list);
	if (!list) {
		al_user_rules_free(run.rules);
		return EXIT_IO;
	}
	size_t n = rule_list(run.rules, list, cap);
	bool json = strcmp(sink->name, "json") == 0;
	if (json)
		printf("{\n  \"anelint\": \"%s\",\n  \"schema\": %d,\n  \"command\": \"rules\",\n  \"rules\": [",
		       ANELINT_VERSION, ANELINT_JSON_SCHEMA_VERSION);
	for (size_t i = 0; i < n; i++) {
		const struct al_rule *r = list[i];
		char fam[128], rel[128];
		al_rule_families(r, fam, sizeof fam);
		al_rule_releases(r, rel, sizeof rel);
		if (!json) {
			/* a warning moves nothing, so it has no unit to show */
			printf("%-7s %-7s %c  %-10s %-13s %-30s %s", r->id, al_rule_kind_name(r->kind),
			       r->confidence, r->kind == AL_RULE_WARN ? "-" : al_unit_name(r->unit),
			       scope_name(r->scope), r->name, r->title);
			if (r->origin)
				printf("  [%s %s]", al_rule_is_override(r) ? "overridden in" : "from", r->origin);
			printf("\n");
			continue;
		}
		printf("%s\n    {\"id\": ", i ? "," : "");
		al_json_put_string(stdout, r->id);
		printf(", \"name\": ");
		al_json_put_string(stdout, r->name);
		printf(", \"scope\": \"%s\", \"kind\": \"%s\", \"unit\": \"%s\", \"confidence\": \"%c\", \"title\": ",
		       scope_name(r->scope), al_rule_kind_name(r->kind), al_unit_name(r->unit), r->confidence);
		al_json_put_string(stdout, r->title);
		printf(", \"catalog\": ");
		al_json_put_string(stdout, r->catalog);
		printf(", \"provenance\": ");
		al_json_put_string(stdout, r->provenance);
		printf(", \"url\": ");
		if (r->url)
			al_json_put_string(stdout, r->url);
		else
			printf("null");
		printf(", \"families\": ");
		al_json_put_string(stdout, fam);
		printf(", \"releases\": ");
		al_json_put_string(stdout, rel);
		printf(", \"origin\": ");
		if (r->origin)
			al_json_put_string(stdout, r->origin);
		else
			printf("null");
		printf(", \"overrides\": %s", r->origin && al_rule_is_override(r) ? "true" : "false");
		struct al_rule_evidence e; /* issue #30: the scope of its evidence */
		char sfam[128], srel[128];
		evidence_scope(r, &e, sfam, srel);
		printf(", \"evidence\": {\"families\": ");
		al_json_put_string(stdout, sfam);
		printf(", \"releases\": ");
		al_json_put_string(stdout, srel);
		printf(", \"reports\": %u, \"detail\": ", (unsigned)e.n_reports);
		if (e.detail)
			al_json_put_string(stdout, e.detail);
		else
			printf("null");
		printf(", \"mechanism\": ");
		if (e.mechanism)
			al_json_put_string(stdout, e.mechanism);
		else
			printf("null");
		printf("}}");
	}
	if (json)
		printf("\n  ]\n}\n");
	free(list);
	al_user_rules_free(run.rules);
	return fflush(stdout) == 0 ? EXIT_ALL_ANE : EXIT_IO;
}

static const char *conf_words(char c)
{
	return c == 'A' ? "A (documented or stated by Apple)"
	     : c == 'M' ? "M (measured by a named third party)"
			: "G (a guess or anecdote, no measurement)";
}

int cmd_explain(struct cli *c)
{
	struct run run;
	int rc = prepare(c, command("explain"), &run);
	if (rc)
		return rc;
	for (int i = 0; i < c->n_paths; i++) {
		const struct al_rule *r = al_user_rules_find(run.rules, c->paths[i]);
		/* the partition's names for its moves (plan JSON "placed": gpu_sticks,
		 * owner, small_segment, ...) are the rules that name them */
		for (int p = 0; !r && p < AL_PLACE_COUNT; p++)
			if (strcmp(c->paths[i], al_place_name((enum al_place)p)) == 0)
				r = al_place_rule((enum al_place)p, run.rules);
		if (!r) {
			fputs("anelint: unknown rule '", stderr);
			put_text(stderr, c->paths[i], CLI_NAME_MAX);
			fputs("'; ", stderr);
			ci_rule_hint(c->paths[i], run.rules);
			rc = EXIT_USAGE;
			continue;
		}
		if (i)
			printf("\n");
		printf("%s  %s\n%s\n\n", r->id, r->name, r->title);
		printf("applies to:  %s\n", scope_name(r->scope));
		printf("verdict:     %s", al_rule_kind_name(r->kind));
		if (r->kind != AL_RULE_WARN)
			printf(" (work goes to: %s)", al_unit_name(r->unit));
		char fam[128], rel[128];
		al_rule_families(r, fam, sizeof fam);
		al_rule_releases(r, rel, sizeof rel);
		printf("\nconfidence:  %s\n", conf_words(r->confidence));
		printf("families:    %s\n", fam);
		printf("releases:    %s\n", rel);
		printf("catalog:     %s\n", r->catalog ? r->catalog : "-");
		printf("evidence:    %s\n", r->provenance ? r->provenance : "-");
		/* issue #30: where its reports saw it; elsewhere its verdict is uncertain */
		struct al_rule_evidence e;
		char sfam[128], srel[128];
		evidence_scope(r, &e, sfam, srel);
		if (e.seen == r->provenance) /* no row of rule_scope.def, or a user rule */
			printf("seen on:     where it is evaluated (%s)\n",
			       r->origin ? "a user rule: its file is its evidence" : "not yet scoped");
		else {
			printf("seen on:     %s, %s (%u report%s%s%s)\n", sfam, srel, (unsigned)e.n_reports,
			       e.n_reports == 1 ? "" : "s", e.detail ? ", only with " : "", e.detail ? e.detail : "");
			printf("elsewhere:   %s\n", e.mechanism ? e.mechanism : "uncertain (no mechanism argument)");
		}
		if (r->url)
			printf("source:      %s\n", r->url);
		if (r->origin)
			printf("defined in:  %s%s\n", r->origin,
			       al_rule_is_override(r) ? " (overrides the built-in rule)" : "");
		printf("\nwhy:  %s\n", r->why ? r->why : "-");
		printf("fix:  %s\n", r->fix ? r->fix : "-");
	}
	al_user_rules_free(run.rules);
	return rc;
}

int cmd_targets(struct cli *c)
{
	const struct command_row *cmd = command("targets");
	int rc = EXIT_ALL_ANE;
	const struct al_sink *sink = pick_sink(c, cmd, &rc);
	if (!sink)
		return rc;
	bool json = strcmp(sink->name, "json") == 0;
	const struct al_target *def = al_target_default();
	if (json)
		printf("{\n  \"anelint\": \"%s\",\n  \"schema\": %d,\n  \"command\": \"targets\",\n  \"targets\": [",
		       ANELINT_VERSION, ANELINT_JSON_SCHEMA_VERSION);
	else
		printf("%-5s %-22s %-22s %-5s | %-24s | %-24s | %s\n%-5s %-22s %-22s %-5s | %s | %s | %s\n", "id",
		       "aliases", "name", "arch", "ANE", "GPU", "CPU", "", "", "", "", "TFLOPS   GB/s    us op us",
		       "TFLOPS   GB/s    us op us", "TFLOPS   GB/s    us");
	for (size_t i = 0; i < al_targets_count(); i++) {
		const struct al_target *t = al_target_at(i);
		if (!json) {
			printf("%-5s %-22s %-22s %-5s | %6.2f %6.1f %5.0f %5.2f | %6.2f %6.1f %5.0f %5.1f | %6.2f %6.1f %5.0f%s\n",
			       t->id, t->aliases ? t->aliases : "", t->name ? t->name : "",
			       t->arch ? t->arch : "", t->ane_tflops, t->ane_gbs, t->ane_overhead_us, t->ane_layer_us,
			       t->gpu_tflops, t->gpu_gbs, t->gpu_overhead_us, t->gpu_kernel_us, t->cpu_tflops, t->cpu_gbs,
			       t->cpu_overhead_us, t == def ? "  (default)" : "");
			continue;
		}
		printf("%s\n    {\"id\": ", i ? "," : "");
		al_json_put_string(stdout, t->id);
		printf(", \"aliases\": ");
		al_json_put_string(stdout, t->aliases ? t->aliases : "");
		printf(", \"name\": ");
		al_json_put_string(stdout, t->name ? t->name : "");
		printf(", \"arch\": ");
		al_json_put_string(stdout, t->arch ? t->arch : "");
		printf(", \"default\": %s", t == def ? "true" : "false");
		printf(", \"ane\": {\"tflops\": %g, \"gbs\": %g, \"overhead_us\": %g, \"layer_us\": %g}",
		       t->ane_tflops, t->ane_gbs, t->ane_overhead_us, t->ane_layer_us);
		printf(", \"gpu\": {\"tflops\": %g, \"gbs\": %g, \"overhead_us\": %g, \"kernel_us\": %g}",
		       t->gpu_tflops, t->gpu_gbs, t->gpu_overhead_us, t->gpu_kernel_us);
		printf(", \"cpu\": {\"tflops\": %g, \"gbs\": %g, \"overhead_us\": %g}", t->cpu_tflops,
		       t->cpu_gbs, t->cpu_overhead_us);
		printf(", \"source\": ");
		al_json_put_string(stdout, t->source ? t->source : "");
		printf("}");
	}
	const struct al_release *newest = al_release_default();
	if (json)
		printf("\n  ],\n  \"releases\": [");
	else
		printf("\nroofline estimates per unit: time = overhead (us) per segment + per op its fixed cost (op us:\n"
		       "an ANE layer, a GPU kernel) + max(FLOPs / peak, bytes / bandwidth); on the ANE only the\n"
		       "activations crossing a segment's edge count as bytes\n(sources: docs/cost-model.md)\n\n"
		       "%-7s %-8s %s\n", "release",
		       "name", "also named (--os takes any of these)");
	for (size_t i = 0; i < al_releases_count(); i++) {
		const struct al_release *rl = al_release_at(i);
		if (!json) {
			printf("%-7s %-8s %s%s\n", rl->id, rl->name, rl->aliases,
			       rl == newest ? "  (default)" : "");
			continue;
		}
		printf("%s\n    {\"id\": ", i ? "," : "");
		al_json_put_string(stdout, rl->id);
		printf(", \"ios\": %d, \"name\": ", rl->ios);
		al_json_put_string(stdout, rl->name);
		printf(", \"aliases\": ");
		al_json_put_string(stdout, rl->aliases);
		printf(", \"default\": %s}", rl == newest ? "true" : "false");
	}
	if (json)
		printf("\n  ]\n}\n");
	return fflush(stdout) == 0 ? EXIT_ALL_ANE : EXIT_IO;
}
