/* SPDX-License-Identifier: MIT */
/* split.c: `anelint split IN --at LAYER|INDEX -o PART1 -o PART2 [--pipeline OUT]`
 * (docs/split.md). What it does (plan, build, prove, write all or none) is the
 * library's al_split_model (src/command/split_model.c); here the options are
 * parsed, the call made and the result printed (the JSON by the library).
 *
 * Exit codes: 0 written; 1 a part or the pipeline differs from IN (nothing
 * written); 2 usage; 3 IN is malformed or unsupported, or the cut is refused;
 * 4 I/O.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char *role_name(enum al_split_role r)
{
	return r == AL_SPLIT_MODEL_INPUT ? "model input" : r == AL_SPLIT_MODEL_OUTPUT ? "model output"
										 : "boundary";
}

static void dims_str(char *b, size_t cap, int rank, const int64_t *dims)
{
	size_t k = (size_t)snprintf(b, cap, "[");
	for (int i = 0; i < rank && k < cap; i++)
		k += (size_t)snprintf(b + k, cap - k, "%s%lld", i ? "," : "", (long long)dims[i]);
	if (k < cap)
		snprintf(b + k, cap - k, "]");
}

static void tensor_type(const struct al_split_tensor *t, char *b, size_t cap)
{
	if (t->rank == 0) {
		snprintf(b, cap, "as declared in the input model");
		return;
	}
	char d[160], inf[160];
	dims_str(d, sizeof d, t->rank, t->dims);
	dims_str(inf, sizeof inf, t->inferred.rank, t->inferred.dims);
	if (t->inferred.rank != t->rank)
		snprintf(b, cap, "multiArray %s %s (blob %s)", al_dtype_name(t->dtype), d, inf);
	else
		snprintf(b, cap, "multiArray %s %s", al_dtype_name(t->dtype), d);
}

static const char *proof_word(const struct al_split_result *r, bool ok)
{
	return !r->proof_run ? "not run" : ok ? "bit-identical" : "DIFFERS";
}

static void report_text(const struct al_split_result *r)
{
	const struct al_split_command *o = r->opts;
	printf("split %s: %zu parts\n", o->model, r->n_parts);
	for (size_t p = 0; p < r->n_parts; p++) {
		const struct al_split_part *pt = al_split_get(r->split, p);
		const struct al_split_figures *b = &r->figures[p];
		printf("  part %zu%s%s: layers %u-%u ('%s' .. '%s'), %s, spec %d: %u layers, %u fall back, "
		       "%u segment%s\n",
		       p + 1, o->n_parts ? " " : "", o->n_parts ? o->parts[p] : "", pt->first, pt->last,
		       pt->first_layer, pt->last_layer, pt->type, pt->spec_version, b->layers, b->fallbacks,
		       b->segments, b->segments == 1 ? "" : "s");
		for (int io = 0; io < 2; io++) {
			const struct al_split_tensor *v = io ? pt->outputs : pt->inputs;
			uint32_t n = io ? pt->n_outputs : pt->n_inputs;
			for (uint32_t k = 0; k < n; k++) {
				char ty[400];
				tensor_type(&v[k], ty, sizeof ty);
				printf("    %-3s %-28s %-12s %s", io ? "out" : "in", v[k].name, role_name(v[k].role), ty);
				if (!io && v[k].from_part >= 0)
					printf("  (from part %d)", v[k].from_part + 1);
				printf("\n");
			}
		}
	}
	for (size_t i = 0; i < r->n_notes; i++)
		printf("  note: %s\n", r->notes[i]);
	const struct al_split_figures *pb = &r->figures[r->n_parts];
	printf("  pipeline%s%s: %u layers, %u fall back, %u segments\n", o->pipeline ? " " : "",
	       o->pipeline ? o->pipeline : "", pb->layers, pb->fallbacks, pb->segments);
	const char *dir = o->inputs_dir;
	printf("proof (reference interpreter, fp32, inputs: %s%s%s seed %llu):\n", dir ? "from " : "",
	       dir ? dir : "", dir ? ", else random," : "random,", (unsigned long long)o->seed);
	printf("  pipeline vs original:       %s\n", proof_word(r, r->pipeline_identical));
	printf("  parts chained vs original:  %s\n", proof_word(r, r->chain_identical));
	if (r->why[0])
		printf("  %s\n", r->why);
	if (r->refused)
		printf("REFUSED: the parts do not give the original's outputs; nothing written\n");
	else if (r->written) {
		printf("wrote");
		for (size_t i = 0; i < o->n_parts; i++)
			printf(" %s", o->parts[i]);
		if (o->pipeline)
			printf(" %s", o->pipeline);
		printf("%s\n", r->proof_run ? "" : " (unproved: the interpreter could not run the model)");
	}
}

int cmd_split(struct cli *c)
{
	const struct command_row *cmd = command("split");
	bool json = false;
	if (c->format && strcmp(c->format, "json") == 0)
		json = true;
	else if (c->format && strcmp(c->format, "text") != 0)
		return usage_error(cmd, "--format takes text or json, not '%s'", c->format);
	if (c->at.n == 0)
		return usage_error(cmd, "give --at LAYER (the last layer of the first part: its name or the index "
				   "check shows) or --at segments%s", "");
	if (c->outputs.n == 0 && !c->pipeline)
		return usage_error(cmd, "give -o PART once per part, and/or --pipeline OUT%s", "");
	struct al_split_command o = {.model = c->paths[0], .at = c->at.v, .n_at = (size_t)c->at.n,
				     .parts = c->outputs.v, .n_parts = (size_t)c->outputs.n,
				     .pipeline = c->pipeline, .rules = c->rules, .function = c->function,
				     .inputs_dir = c->inputs, .max_work = max_work_of(c)};
	const char *protect[2] = {c->paths[0], c->rules}; /* what the writes must not destroy */
	o.protect = protect;
	o.n_protect = c->rules ? 2 : 1;
	int rc = run_settings(c, cmd, &o.seed, &o.max_bytes);
	if (rc != EXIT_ALL_ANE)
		return rc;
	al_diags *d = al_diags_new();
	if (!d)
		return EXIT_IO;
	struct al_split_result *r = NULL;
	enum al_status st = al_split_model(&o, &r, d);
	if (st != AL_OK) {
		rc = print_failure(cmd, r ? &r->fail : NULL, d);
	} else {
		if (json)
			al_split_result_json(stdout, r);
		else
			report_text(r);
		rc = r->refused ? EXIT_FALLBACK : EXIT_ALL_ANE;
	}
	al_split_result_free(r);
	al_diags_free(d);
	if (fflush(stdout) != 0)
		return EXIT_IO;
	return rc;
}
