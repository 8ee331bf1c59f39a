/* SPDX-License-Identifier: MIT */
/* test_faults.c: allocation failure injected into a whole run. For each
 * fixture (a NeuralNetwork .mlmodel, ML Program packages opened as
 * directories and from memory, pipelines, a file with more diagnostics than the
 * 200 kept) and for N = 1, 2, 3, ...: ali_alloc_fail_after(N) makes the Nth
 * allocation of the library and every later one fail, then
 *     al_model_open (or al_model_open_buffer) + al_model_check
 *     + the text and JSON sinks' check() and info() into /dev/null
 * run with the failure armed; ali_alloc_fail_after(0) disarms it and returns
 * how many allocations the run attempted. Every run must return AL_OK or
 * AL_E_NOMEM: never a crash, and never another status (an allocation failure
 * reported as a malformed file would be a lie).
 *
 * On AL_E_NOMEM at least one error must have been counted
 * (al_diags_errors): core.c counts an error before it tries to store it, so the
 * count holds even when the diagnostics list itself could not grow; a *kept*
 * error diagnostic may then be absent, and is not required. The al_diags is
 * made before the failure is armed (the CLI handles its own al_diags_new
 * failing).
 *
 * The loop stops at the first N whose run succeeded having attempted fewer
 * than N allocations, i.e. without reaching the failure; so every allocation
 * of a successful run has been failed once. Under `make asan` LeakSanitizer
 * checks that every failed run freed everything.
 *
 * Not covered: json-c allocates with plain malloc (Manifest.json parsing in
 * mlpackage.c, the JSON sink's document), which ali_alloc_fail_after cannot
 * reach; only the library's own allocations (ali_malloc/ali_calloc/ali_realloc,
 * the arenas, the JSON sink's reason buffer) fail here. `anelint fix` does not
 * exist yet; when it does, its rewrite path belongs in this loop too. */
#include "testutil.h"
#include "pbwrite.h"

#include "analysis.h"

#include <unistd.h>

static FILE *devnull;

/* A run must make fewer allocations than this (a loop guard). */
#define MAX_ALLOCS 200000ul

struct fault_case {
	const char *label;
	const char *path;   /* al_model_open(path) when set */
	const uint8_t *model; /* else al_model_open_buffer(model, weights) */
	size_t n;
	const uint8_t *weights;
	size_t nw;
};

static void run_sinks(const char *path, al_model *m, al_diags *d, enum al_status st)
{
	static const char *const names[] = {"text", "json"};
	struct al_report_item it = {.path = path, .model = m, .diags = d, .status = st};
	struct al_report_opts o = {.show_consts = true, .shapes = true, .plans = true};
	/* what the sinks show is computed first (checks and plans): a clean status */
	enum al_status as = al_report_analyze(&it, 1, &o, d);
	assert_true(as == AL_OK || as == AL_E_NOMEM);
	if (as == AL_E_NOMEM)
		assert_true(al_diags_errors(d) >= 1);
	for (int i = 0; i < 2; i++) {
		const struct al_sink *s = al_sink_by_name(names[i]);
		assert_non_null(s);
		s->check(devnull, &it, 1, &o);
		s->info(devnull, &it, 1, &o);
		if (s->plan) /* the partition plan, once a sink has it */
			s->plan(devnull, &it, 1, &o);
	}
	al_analysis_free(it.analysis);
}

/* One run with the Nth allocation failing (n = 0: none); returns the
 * allocations attempted. With `loading` set (only for n = 0: reading the count
 * resets it) *loading gets those of open + check alone. */
static unsigned long one_run(const struct fault_case *c, unsigned long n, enum al_status *out,
			     unsigned long *loading)
{
	al_diags *d = al_diags_new();
	assert_non_null(d);
	al_model *m = NULL;
	ali_alloc_fail_after(n);
	enum al_status st = c->path ? al_model_open(c->path, &m, d)
				    : al_model_open_buffer(c->model, c->n, c->weights, c->nw, c->label,
							   &m, d);
	if (st == AL_OK) {
		assert_non_null(m);
		st = al_model_check(m, NULL, d);
		if (st != AL_OK) {
			al_model_free(m);
			m = NULL;
		}
	} else {
		assert_null(m);
	}
	unsigned long made = 0;
	if (loading)
		made = *loading = ali_alloc_fail_after(0);
	run_sinks(c->label, m, d, st);
	made += ali_alloc_fail_after(0);
	if (st != AL_OK && st != AL_E_NOMEM) {
		print_error("%s: allocation %lu failing gave '%s', not 'out of memory'\n", c->label, n,
			    al_status_str(st));
		for (size_t i = 0; i < al_diags_count(d) && i < 5; i++)
			print_error("  %s\n", al_diags_get(d, i)->msg);
		fail();
	}
	if (st == AL_E_NOMEM)
		assert_true(al_diags_errors(d) >= 1);
	for (size_t i = 0; i < al_diags_count(d); i++) {
		const char *msg = al_diags_get(d, i)->msg;
		assert_non_null(msg);
		assert_null(strchr(msg, '\n'));
	}
	al_model_free(m);
	al_diags_free(d);
	*out = st;
	return made;
}

/* N = 1, 2, ... until a run succeeds without reaching its failing allocation. */
static void fail_every_allocation(const struct fault_case *c)
{
	unsigned long nomem = 0, ok_despite = 0, n;
	for (n = 1;; n++) {
		enum al_status st;
		unsigned long made = one_run(c, n, &st, NULL);
		if (st == AL_OK && made < n)
			break; /* nothing failed: every allocation has been tried */
		if (st == AL_OK)
			ok_despite++; /* e.g. a diagnostic or a sink's buffer that could not be made */
		else
			nomem++;
		assert_true(n < MAX_ALLOCS);
	}
	enum al_status st;
	unsigned long loading = 0, made = one_run(c, 0, &st, &loading);
	assert_int_equal(st, AL_OK);
	print_message("faults: %-42s N = 1..%-4lu (a clean run: %3lu allocations in open + check, "
		      "%3lu in the sinks): %3lu out of memory, %3lu ok despite the failure\n",
		      c->label, n, loading, made - loading, nomem, ok_despite);
	assert_int_equal(made, n - 1);
	assert_true(loading > 0); /* a run makes at least one allocation */
}

static void fault_file(const char *rel)
{
	const char *label = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	struct fault_case c = {.label = label, .path = fixture(rel)};
	struct stat st;
	assert_int_equal(stat(c.path, &st), 0);
	fail_every_allocation(&c);
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	struct stat st;
	assert_int_equal(fstat(fileno(f), &st), 0);
	*n = (size_t)st.st_size;
	uint8_t *p = malloc(*n ? *n : 1);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, *n, f), *n);
	fclose(f);
	return p;
}

static void test_nn_file(void **state)
{
	(void)state;
	fault_file("converted/gru__nn_ios14.mlmodel"); /* NN with a loop layer */
	fault_file("crafted/nn_rules.mlmodel");
	fault_file("converted/builder__legacy_rank5_elementwise.mlmodel");
	fault_file("crafted/nn_classifier.mlmodel");
}

static void test_package_dir(void **state)
{
	(void)state;
	fault_file("converted/gru__mlp_fp16.mlpackage"); /* while_loop, weight.bin */
	fault_file("converted/dilated_conv__mlp_ios17_fp16.mlpackage");
	fault_file("crafted/mil_rules.mlpackage"); /* no weight.bin */
}

static void test_pipeline(void **state)
{
	(void)state;
	fault_file("crafted/enum_pipeline.mlmodel");
	fault_file("crafted/nonneural_pipeline.mlmodel");
}

/* A compiled espresso NeuralNetwork (.net, .weights, .shape JSON): every
 * allocation of its load, shapes (model.espresso.shape) and check fails once. */
static void test_compiled(void **state)
{
	(void)state;
	fault_file("compiled/crafted_espresso.mlmodelc");
}

/* A package image from memory: model.mlmodel bytes + weight.bin. */
static void test_package_buffer(void **state)
{
	(void)state;
	char path[4200];
	const char *pkg = "converted/gru__mlp_fp16.mlpackage";
	snprintf(path, sizeof path, "%s/Data/com.apple.CoreML/model.mlmodel", fixture(pkg));
	struct fault_case c = {.label = "gru__mlp_fp16 (buffer)"};
	uint8_t *model = slurp(path, &c.n);
	snprintf(path, sizeof path, "%s/Data/com.apple.CoreML/weights/weight.bin", fixture(pkg));
	uint8_t *w = slurp(path, &c.nw);
	c.model = model;
	c.weights = w;
	fail_every_allocation(&c);
	free(model);
	free(w);
}

/* 300 layers of an unknown type: a warning each, more than the 200 kept, so
 * the diagnostics' array and strings grow (and fail) through the run. */
static void test_many_diagnostics(void **state)
{
	(void)state;
	struct buf net = {0}, m = {0};
	for (int i = 0; i < 300; i++) {
		struct buf l = {0}, e = {0};
		put_str(&l, 1, "u");
		put_msg(&l, 9999, &e);
		put_msg(&net, 1, &l);
	}
	put_uint(&m, 1, 4);
	put_msg(&m, 500, &net);
	struct fault_case c = {.label = "300 unknown layers", .model = m.p, .n = m.n};
	fail_every_allocation(&c);
	free(m.p);
}

/* Real models, when ../shared/corpus is present. */
/* The report sinks (html, sarif, markdown, dot) with the Nth allocation of
 * their own run failing, for N = 1, 2, ... until a run reaches none: the model
 * is loaded and checked first, without failures, so the loop stays short. Each
 * run must finish (a shorter document) and free what it took; LeakSanitizer
 * checks that under `make asan`. */
static void test_report_sinks(void **state)
{
	(void)state;
	static const char *const models[] = {"crafted/hostile_names.mlmodel", "crafted/enum_pipeline.mlmodel",
					     "crafted/plan_mil_branches.mlpackage", "converted/gru__nn_ios14.mlmodel"};
	static const char *const names[] = {"html", "sarif", "markdown", "dot"};
	for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
		al_diags *d = al_diags_new();
		al_model *m = NULL;
		assert_non_null(d);
		assert_int_equal(al_model_open(fixture(models[i]), &m, d), AL_OK);
		assert_int_equal(al_model_check(m, NULL, d), AL_OK);
		struct al_report_item it = {.path = models[i], .model = m, .diags = d, .status = AL_OK};
		struct al_report_opts o = {.shapes = true, .plans = true};
		assert_int_equal(al_report_analyze(&it, 1, &o, d), AL_OK); /* the sinks alone fail below */
		for (int k = 0; k < 4; k++) {
			const struct al_sink *snk = al_sink_by_name(names[k]);
			assert_non_null(snk);
			unsigned long n;
			for (n = 1; n < MAX_ALLOCS; n++) {
				ali_alloc_fail_after(n);
				snk->check(devnull, &it, 1, &o);
				if (ali_alloc_fail_after(0) < n)
					break;
			}
			assert_true(n > 1); /* each sink allocates */
		}
		al_analysis_free(it.analysis);
		al_model_free(m);
		al_diags_free(d);
	}
}

static void test_corpus(void **state)
{
	(void)state;
	if (!corpus_dir())
		skip();
	static const char *const rels[] = {
		"real/CreateML_ImageClassifier_pipeline.mlmodel",
		"real/ActivityClassifier_GRU_mlprogram.mlpackage",
		"real/pytorch_controlflow_loop_branch.mlmodel",
	};
	for (size_t i = 0; i < sizeof rels / sizeof rels[0]; i++) {
		const char *p = corpus_file(rels[i]);
		struct stat st;
		if (!p || stat(p, &st) != 0)
			continue;
		struct fault_case c = {.label = strrchr(rels[i], '/') + 1, .path = p};
		fail_every_allocation(&c);
	}
}

static int setup(void **state)
{
	(void)state;
	devnull = fopen("/dev/null", "w");
	return devnull ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return devnull && fclose(devnull) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nn_file),
		cmocka_unit_test(test_package_dir),
		cmocka_unit_test(test_pipeline),
		cmocka_unit_test(test_compiled),
		cmocka_unit_test(test_package_buffer),
		cmocka_unit_test(test_many_diagnostics),
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_report_sinks),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
