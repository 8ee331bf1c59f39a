/* SPDX-License-Identifier: MIT */
/* fuzz_common.h: what the libFuzzer harnesses share: run a loaded model
 * through al_model_check and both report sinks (text and JSON, `check` and
 * `info`), and check the promises of the public API on the way. A broken
 * promise calls __builtin_trap(), which libFuzzer reports as a crash.
 *
 * Promises checked (anelint.h):
 *   - open/check return AL_OK  <=> no error diagnostic was added;
 *     any other status          => at least one error diagnostic (AL_E_NOMEM may
 *                                  come without one if recording it failed);
 *   - open: *out is non-NULL exactly when the status is AL_OK, and then holds
 *     at least the root model;
 *   - every diagnostic: valid severity, non-NULL one-line message (no '\n'/'\r');
 *   - a second al_model_check of a checked model returns AL_OK too;
 *   - every node has a valid unit, non-NULL rules and reasons, and the graph
 *     links (owner, sub-graph parent_node) point where they should;
 *   - the JSON sink writes one JSON document (parsed back with json-c, strict).
 * With the shapes/targets/plan API (anelint.h defines AL_SHAPE_MAX_RANK) also:
 * a check for a target picked from the input, al_model_plan on every sub-model
 * (segments cover every node, indices in range, no NaN estimate), and the
 * sinks' `plan` reports with shapes / every-target columns switched by the input.
 * Then the reference interpreter runs small models on random inputs (fuzz_interp).
 * With FUZZ_QUICK=N in the environment the plan, the run and the reports run for 1 input
 * in N (1 in 64 for N = 1; loading and check for every input), for the long runs.
 */
#ifndef ANELINT_FUZZ_COMMON_H
#define ANELINT_FUZZ_COMMON_H

#include "anelint.h"

#include <fcntl.h>
#include <ftw.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FUZZ_CHECK(c)                                                                              \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #c, __FILE__,        \
				__LINE__);                                                         \
			__builtin_trap();                                                          \
		}                                                                                  \
	} while (0)

static FILE *fuzz_devnull;

/* Reads a string the library handed out to its end, so that ASan sees an unterminated
 * or freed one. The length goes to a volatile sink: a bare `(void)strlen(s)` is dropped
 * by the optimizer (clang -O1 emits no call), and the check with it. */
static volatile size_t fuzz_read_sink;
static void fuzz_read_str(const char *s)
{
	if (s)
		fuzz_read_sink += strlen(s);
}

static void fuzz_check_diags(const al_diags *d)
{
	size_t errors = 0;
	for (size_t i = 0; i < al_diags_count(d); i++) {
		const struct al_diag *x = al_diags_get(d, i);
		FUZZ_CHECK(x != NULL);
		FUZZ_CHECK(x->severity == AL_SEV_NOTE || x->severity == AL_SEV_WARNING ||
			   x->severity == AL_SEV_ERROR);
		FUZZ_CHECK(x->msg != NULL);
		FUZZ_CHECK(strchr(x->msg, '\n') == NULL && strchr(x->msg, '\r') == NULL);
		fuzz_read_str(x->file);
		fuzz_read_str(x->where);
		fuzz_read_str(x->node);
		errors += x->severity == AL_SEV_ERROR;
	}
	/* kept errors cannot outnumber counted ones */
	FUZZ_CHECK(errors <= al_diags_errors(d));
}

/* The status and the error count agree. `before` = errors before the call. */
static void fuzz_check_status(enum al_status st, const al_diags *d, size_t before)
{
	size_t added = al_diags_errors(d) - before;
	if (st == AL_OK)
		FUZZ_CHECK(added == 0);
	else
		FUZZ_CHECK(added > 0 || st == AL_E_NOMEM);
}

static void fuzz_check_graph(const struct al_graph *g, int depth)
{
	FUZZ_CHECK(g != NULL);
	FUZZ_CHECK(depth <= 64); /* AL_MAX_DEPTH is 32; anything near 64 is a loop */
	FUZZ_CHECK(g->n_nodes == 0 || g->nodes != NULL);
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct al_node *n = &g->nodes[i];
		FUZZ_CHECK(n->owner == g);
		FUZZ_CHECK((unsigned)n->verdict.unit < AL_UNIT_COUNT);
		FUZZ_CHECK(n->verdict.n_rules == 0 ||
			   (n->verdict.rules != NULL && n->verdict.reasons != NULL));
		for (uint32_t r = 0; r < n->verdict.n_rules; r++) {
			FUZZ_CHECK(n->verdict.rules[r] != NULL);
			FUZZ_CHECK(n->verdict.reasons[r] != NULL);
			fuzz_read_str(n->verdict.reasons[r]);
		}
		fuzz_read_str(n->name);
		fuzz_read_str(n->type);
		FUZZ_CHECK(n->n_inputs == 0 || n->inputs != NULL);
		FUZZ_CHECK(n->n_outputs == 0 || n->outputs != NULL);
		for (uint32_t k = 0; k < n->n_sub; k++) {
			FUZZ_CHECK(n->sub[k] != NULL);
			FUZZ_CHECK(n->sub[k]->parent_node == n);
			fuzz_check_graph(n->sub[k], depth + 1);
		}
	}
}

static void fuzz_check_model(const al_model *m)
{
	for (size_t i = 0; i < al_model_count(m); i++) {
		const struct al_submodel *s = al_model_get(m, i);
		FUZZ_CHECK(s != NULL);
		FUZZ_CHECK(s->n_graphs == 0 || s->graphs != NULL);
		for (uint32_t g = 0; g < s->n_graphs; g++)
			fuzz_check_graph(s->graphs[g], 0);
		for (uint32_t f = 0; f < s->n_findings; f++)
			FUZZ_CHECK(s->findings[f].rule != NULL);
	}
}

#ifdef AL_SHAPE_MAX_RANK
/* The shapes / targets / partition-plan API (present when anelint.h defines
 * AL_SHAPE_MAX_RANK): check again for a target picked by `seed`, then plan every
 * sub-model under a policy picked by `seed` and check the plan's own links. */
static struct al_check_opts fuzz_copts;
static struct al_plan_opts fuzz_popts;

static void fuzz_check_plan(const struct al_plan *p)
{
	FUZZ_CHECK(p != NULL);
	uint32_t sum = 0;
	for (uint32_t s = 0; s < p->n_segments; s++) {
		FUZZ_CHECK(p->segments[s].first <= p->segments[s].last);
		FUZZ_CHECK((unsigned)p->segments[s].unit < AL_UNIT_COUNT);
		sum += p->segments[s].n_nodes;
	}
	FUZZ_CHECK(sum == p->n_nodes);
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		FUZZ_CHECK(p->nodes[i] != NULL);
		FUZZ_CHECK((unsigned)p->unit[i] < AL_UNIT_COUNT);
		FUZZ_CHECK(p->segment[i] < p->n_segments);
		FUZZ_CHECK((unsigned)p->place[i] < AL_PLACE_COUNT);
	}
	for (uint32_t k = 0; k < p->switches; k++)
		FUZZ_CHECK(p->switch_list[k].from < p->n_segments &&
			   p->switch_list[k].to < p->n_segments);
	for (uint32_t f = 0; f < p->n_fixes; f++)
		FUZZ_CHECK(p->fixes[f].n_nodes == 0 || p->fixes[f].nodes != NULL);
	FUZZ_CHECK(p->est_us == p->est_us); /* not NaN */
}

static enum al_status fuzz_plan(al_model *m, al_diags *d, unsigned seed)
{
	size_t nt = al_targets_count();
	FUZZ_CHECK(nt > 0);
	fuzz_copts = (struct al_check_opts){.target = al_target_at((seed >> 4) % nt)};
	fuzz_popts = (struct al_plan_opts){.target = fuzz_copts.target,
					   .policy = (enum al_policy)((seed >> 8) % AL_POLICY_COUNT)};
	size_t before = al_diags_errors(d);
	enum al_status st = al_model_check(m, &fuzz_copts, d);
	fuzz_check_diags(d);
	fuzz_check_status(st, d, before);
	if (st != AL_OK)
		return st;
	fuzz_check_model(m);
	for (size_t i = 0; i < al_model_count(m); i++) {
		const struct al_plan *p = NULL;
		before = al_diags_errors(d);
		enum al_status ps = al_model_plan(m, i, &fuzz_popts, &p, d);
		fuzz_check_diags(d);
		fuzz_check_status(ps, d, before);
		if (ps == AL_OK)
			fuzz_check_plan(p);
		al_plan_free(p);
	}
	return AL_OK;
}
#endif

/* The reference interpreter (al_model_run): run a checked model on random inputs
 * when its estimated work is small (<= 2e7 FLOPs, every cost known), with a 64 MB
 * activation budget and 2000 loop iterations, in fp32 or fp16 picked by `seed`.
 * Promises: the status agrees with the diagnostics, outputs exist exactly on
 * AL_OK, and each output has a sane count. */
static void fuzz_interp(al_model *m, al_diags *d, unsigned seed)
{
	const struct al_submodel *root = al_model_get(m, 0);
	double flops = 0;
	for (size_t i = 0; i < al_model_count(m); i++) {
		const struct al_submodel *s = al_model_get(m, i);
		for (uint32_t g = 0; g < s->n_graphs; g++)
			for (uint32_t k = 0; k < s->graphs[g]->n_nodes; k++) {
				const struct al_node *n = &s->graphs[g]->nodes[k];
				if (!n->cost.known && n->type && strcmp(n->type, "const") != 0)
					return;
				flops += n->cost.flops;
			}
	}
	if (flops > 2e7 || root->n_inputs > 16)
		return;
	struct al_named_tensor in[16];
	size_t n_in = 0;
	for (uint32_t i = 0; i < root->n_inputs; i++) {
		al_tensor *t = NULL;
		if (al_random_input(&root->inputs[i], seed, 16u << 20, &t, d) != AL_OK)
			continue; /* a missing input is the run's error to report */
		in[n_in].name = root->inputs[i].name;
		in[n_in++].t = t;
	}
	struct al_run_opts o = {.precision = (seed >> 20) & 1 ? AL_PREC_FP16 : AL_PREC_FP32,
				.max_bytes = 64u << 20, .max_steps = 2000};
	struct al_named_tensor *out = (struct al_named_tensor *)1;
	size_t n_out = 7, before = al_diags_errors(d);
	enum al_status st = al_model_run(m, in, n_in, &o, &out, &n_out, d);
	fuzz_check_diags(d);
	fuzz_check_status(st, d, before);
	if (st == AL_OK) {
		/* the outputs, then the final value of every state (al_model_run) */
		FUZZ_CHECK(n_out == (size_t)root->n_outputs + root->n_states);
		for (size_t i = 0; i < n_out; i++) {
			FUZZ_CHECK(out[i].t != NULL && out[i].name != NULL);
			FUZZ_CHECK(al_tensor_count(out[i].t) <= (64u << 20) / 4);
		}
		al_outputs_free(out, n_out);
	} else {
		FUZZ_CHECK(out == NULL && n_out == 0);
	}
	for (size_t i = 0; i < n_in; i++)
		al_tensor_free(in[i].t);
}

/* Write with `fn` into memory and parse it back as exactly one JSON value. */
static void fuzz_json_roundtrip(void (*fn)(FILE *, const struct al_report_item *, size_t,
					   const struct al_report_opts *),
				const struct al_report_item *it, const struct al_report_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	fn(f, it, 1, o);
	fclose(f);
	struct json_tokener *tok = json_tokener_new();
	FUZZ_CHECK(tok != NULL);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	struct json_object *v = json_tokener_parse_ex(tok, buf, (int)len);
	FUZZ_CHECK(v != NULL);
	size_t end = json_tokener_get_parse_end(tok);
	while (end < len && (buf[end] == '\n' || buf[end] == ' '))
		end++;
	FUZZ_CHECK(end == len);
	json_object_put(v);
	json_tokener_free(tok);
	free(buf);
}

/* A few bits from the input to pick options (report flags, target, policy). */
static unsigned fuzz_seed(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u ^ (uint32_t)n;
	for (size_t i = n > 8 ? n - 8 : 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h ^ h >> 16;
}

/* FUZZ_QUICK=N (the long runs): whether this input takes the heavy steps, which
 * then run for 1 input in N only (N = 1: 1 in 64); without FUZZ_QUICK, always.
 * In fuzz_run loading and check run for every input; the plan (its fix search
 * re-partitions once per candidate), the reports (json-c parses each JSON
 * report back) and the interpreter are the heavy steps. Measured on fuzz_mil at
 * 1 in 64, the JSON round trip alone still took 56% of the time (perf).
 * The choice counts calls and ignores the input: picked by input bits, the
 * heavy steps' rarer coverage made libFuzzer favour the inputs that chose them
 * (43% of fuzz_mlpackage's time at 1 in 1024). The first call is heavy, so a
 * reproducer run on its own takes every step. */
static bool fuzz_heavy(void)
{
	static unsigned every = 0;
	static unsigned long calls = 0;
	if (!every) {
		const char *q = getenv("FUZZ_QUICK");
		long v = q && *q ? strtol(q, NULL, 10) : 0;
		every = v <= 0 ? 1 : v == 1 ? 64 : v > 65536 ? 65536 : (unsigned)v;
	}
	return every == 1 || (calls++ % every) == 0;
}

/* The guard-page test mode (base.h ali_guard_maps): every file the library maps,
 * and every buffer a text parser is handed, is read from a copy whose last byte
 * lies right before a PROT_NONE page (and, under ASan, whose bytes before the
 * first are poisoned). A read past the end then faults even inside libc
 * (strtoull, sscanf), where ASan does not look. The harnesses over text call this
 * from LLVMFuzzerInitialize, before anything is mapped (fuzz/run.sh exports the
 * variable too); ANELINT_GUARD_MAPS=0 in the environment keeps the mode off. */
__attribute__((unused)) static void fuzz_guard_maps(void)
{
	setenv("ANELINT_GUARD_MAPS", "1", 0);
}

/* ---- files, for the harnesses that open from (and write to) a directory */

/* Take one [u32 LE len][bytes] part off the front of *p: the length clamped to
 * the bytes present, a header cut short counts as 0 (fuzz_mlpackage's framing). */
__attribute__((unused)) static void fuzz_take(const uint8_t **p, size_t *n, const uint8_t **part,
					      size_t *len)
{
	*part = *p;
	*len = 0;
	if (*n < 4) {
		*p += *n;
		*n = 0;
		return;
	}
	size_t l = (size_t)(*p)[0] | (size_t)(*p)[1] << 8 | (size_t)(*p)[2] << 16 |
		   (size_t)(*p)[3] << 24;
	*p += 4;
	*n -= 4;
	if (l > *n)
		l = *n;
	*part = *p;
	*len = l;
	*p += l;
	*n -= l;
}

/* path := p[0..n), created or truncated. */
__attribute__((unused)) static void fuzz_put_file(const char *path, const uint8_t *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	FUZZ_CHECK(fd >= 0);
	while (n) {
		ssize_t k = write(fd, p, n);
		FUZZ_CHECK(k > 0);
		p += k;
		n -= (size_t)k;
	}
	FUZZ_CHECK(close(fd) == 0);
}

static int fuzz_rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return flag == FTW_DP ? rmdir(p) : unlink(p);
}

/* rm -rf path (never following symbolic links). */
__attribute__((unused)) static void fuzz_rm_tree(const char *path)
{
	(void)nftw(path, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A per-process scratch directory under $TMPDIR, else /dev/shm, else /tmp
 * (anelint-fuzz.XXXXXX), removed at exit; a crash leaves it behind. */
static char fuzz_dir[512];

static void fuzz_dir_remove(void)
{
	fuzz_rm_tree(fuzz_dir);
}

__attribute__((unused)) static const char *fuzz_scratch_dir(void)
{
	if (!fuzz_dir[0]) {
		const char *tmp = getenv("TMPDIR");
		if (!tmp || !*tmp)
			tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
		snprintf(fuzz_dir, sizeof fuzz_dir, "%s/anelint-fuzz.XXXXXX", tmp);
		FUZZ_CHECK(mkdtemp(fuzz_dir) != NULL);
		atexit(fuzz_dir_remove);
	}
	return fuzz_dir;
}

/* A package directory `dir` (which must not exist): Manifest.json, the root
 * model and, when wn > 0, weights/weight.bin, as coremltools lays them out. */
__attribute__((unused)) static void fuzz_put_package(const char *dir, const uint8_t *manifest,
						     size_t mn, const uint8_t *model, size_t n,
						     const uint8_t *w, size_t wn)
{
	static const char *const dirs[] = {"", "/Data", "/Data/com.apple.CoreML",
					   "/Data/com.apple.CoreML/weights"};
	char p[700];
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof p, "%s%s", dir, dirs[i]);
		FUZZ_CHECK(mkdir(p, 0700) == 0);
	}
	snprintf(p, sizeof p, "%s/Manifest.json", dir);
	fuzz_put_file(p, manifest, mn);
	snprintf(p, sizeof p, "%s/Data/com.apple.CoreML/model.mlmodel", dir);
	fuzz_put_file(p, model, n);
	if (wn) {
		snprintf(p, sizeof p, "%s/Data/com.apple.CoreML/weights/weight.bin", dir);
		fuzz_put_file(p, w, wn);
	}
}

/* The Manifest.json coremltools writes for a package holding one model. */
__attribute__((unused)) static const char fuzz_manifest[] =
	"{\"fileFormatVersion\": \"1.0.0\", \"itemInfoEntries\": {\"00000000-0000-0000-0000-000000000001\": "
	"{\"author\": \"com.apple.CoreML\", \"description\": \"CoreML Model Specification\", "
	"\"name\": \"model.mlmodel\", \"path\": \"com.apple.CoreML/model.mlmodel\"}}, "
	"\"rootModelIdentifier\": \"00000000-0000-0000-0000-000000000001\"}\n";

/* fuzz_mil's framing [u16 LE L][L bytes weight.bin][MILSpec.Program]: the
 * weight image (malloc'd, exact size; NULL when L is 0) and the program wrapped
 * as Model{specificationVersion 6, mlProgram} (malloc'd, *n bytes). */
__attribute__((unused)) static uint8_t *fuzz_mil_frame(const uint8_t *data, size_t size, uint8_t **w,
						       size_t *wlen, size_t *n)
{
	*wlen = 0;
	if (size >= 2) {
		*wlen = (size_t)data[0] | (size_t)data[1] << 8;
		data += 2;
		size -= 2;
		if (*wlen > size)
			*wlen = size;
	}
	*w = NULL;
	if (*wlen) {
		*w = malloc(*wlen);
		FUZZ_CHECK(*w != NULL);
		memcpy(*w, data, *wlen);
	}
	size_t plen = size - *wlen;
	uint8_t *model = malloc(plen + 16);
	FUZZ_CHECK(model != NULL);
	size_t k = 0;
	model[k++] = 0x08;
	model[k++] = 6;
	model[k++] = 0xB2; /* field 502, length-delimited */
	model[k++] = 0x1F;
	for (size_t v = plen;; v >>= 7) {
		model[k++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		if (v <= 0x7f)
			break;
	}
	if (plen)
		memcpy(model + k, data + *wlen, plen);
	*n = k + plen;
	return model;
}

/* After al_model_open*(): check, then report, then free. `name` is the path the
 * report shows; `seed` (fuzz_seed) picks the options. */
__attribute__((unused)) static void fuzz_run(enum al_status st, al_model *m, al_diags *d, const char *name,
		     unsigned seed)
{
	bool light = !fuzz_heavy();
	if (!fuzz_devnull)
		fuzz_devnull = fopen("/dev/null", "w");
	FUZZ_CHECK(fuzz_devnull != NULL);
	fuzz_check_diags(d);
	fuzz_check_status(st, d, 0);
	FUZZ_CHECK((st == AL_OK) == (m != NULL));

	if (m) {
		FUZZ_CHECK(al_model_count(m) >= 1); /* the root Model */
		size_t before = al_diags_errors(d);
		st = al_model_check(m, NULL, d);
		fuzz_check_diags(d);
		fuzz_check_status(st, d, before);
		if (st == AL_OK) {
			/* checking again (a caller may check once per target) succeeds too */
			FUZZ_CHECK(al_model_check(m, NULL, d) == AL_OK);
			fuzz_check_diags(d);
			fuzz_check_model(m);
			for (size_t u = 0; u < 4; u++)
				(void)al_model_fails(m, (enum al_fail_on)u);
		}
#ifdef AL_SHAPE_MAX_RANK
		if (st == AL_OK && !light)
			st = fuzz_plan(m, d, seed);
#endif
		if (st == AL_OK && !light)
			fuzz_interp(m, d, seed);
		if (st != AL_OK) {
			al_model_free(m); /* as the CLI does: a failed check reports no model */
			m = NULL;
		}
	}

	if (light) {
		al_model_free(m);
		return;
	}

	struct al_report_item it = {.path = name, .model = m, .diags = d, .status = st};
	struct al_report_opts o = {.color = seed & 1, .show_consts = (seed >> 1) & 1,
				   .fail_on = (enum al_fail_on)((seed >> 2) & 3)};
	const struct al_sink *text = al_sink_by_name("text"), *json = al_sink_by_name("json");
	FUZZ_CHECK(text && json);
#ifdef AL_SHAPE_MAX_RANK
	o.shapes = (seed >> 10) & 1;
	o.all_targets = ((seed >> 11) & 7) == 0; /* every target: slow, so 1 input in 8 */
	o.check = &fuzz_copts;
	o.plan = &fuzz_popts;
#endif
	o.plans = true;
	size_t before = al_diags_errors(d);
	enum al_status as = al_report_analyze(&it, 1, &o, d); /* what the sinks show */
	fuzz_check_diags(d);
	fuzz_check_status(as, d, before);
	text->check(fuzz_devnull, &it, 1, &o);
	text->info(fuzz_devnull, &it, 1, &o);
	fuzz_json_roundtrip(json->check, &it, &o);
	fuzz_json_roundtrip(json->info, &it, &o);
#ifdef AL_SHAPE_MAX_RANK
	text->plan(fuzz_devnull, &it, 1, &o);
	fuzz_json_roundtrip(json->plan, &it, &o);
#endif
	/* the HTML report (its graph panel reads every layer's parameters), 1 input in 4 */
	const struct al_sink *html = al_sink_by_name("html");
	if (html && ((seed >> 14) & 3) == 0)
		html->check(fuzz_devnull, &it, 1, &o);
	al_analysis_free(it.analysis);
	al_model_free(m);
}

#endif
