/* SPDX-License-Identifier: MIT */
/* test_hostile.c: hostile input through the whole library, the way the CLI
 * drives it: load (al_model_open_buffer, or al_model_open for a package
 * directory), al_model_check when the load succeeded, then the report sinks
 * into /dev/null (run_sinks: text check() every case, JSON check() every case
 * or every 2nd under ASan, info() and plan() of both on every 4th / 8th).
 * Every case must end in AL_OK, or in an error status with at least one kept
 * AL_SEV_ERROR diagnostic; no kept diagnostic message may hold a newline or
 * another control character, an AL_OK result may not carry an error, and no
 * case may run out of memory (no allocation is failed here, so AL_E_NOMEM
 * would mean a size taken from the input).
 *
 *   test_resources  ~1 KB hostile inputs (nesting bombs, huge length prefixes,
 *                   many tiny layers/ops, huge declared counts and sizes) must
 *                   each load + check + report in < 2 s and stay small: the
 *                   model's arena (every IR byte lives there) under 16 MB, and
 *                   the process's peak RSS may not grow by more than 64 MB
 *                   (256 MB under ASan). Runs first so earlier tests do not
 *                   hide a peak. Then ~100 truncations of each.
 *   test_mutate_*   mutations of repo fixtures (6 .mlmodel, 3 ML Program
 *                   packages): truncation at many offsets, single-bit flips,
 *                   bytes replaced by 0x00 0xFF 0x7F 0x80; for packages also
 *                   flips/replacements in the first 1 KB of weight.bin (header,
 *                   blob metadata) and truncations of weight.bin. Small files
 *                   get every offset, larger ones a jittered stride (a fixed
 *                   seed: the cases are the same on every run). Each case's
 *                   input sits in a heap buffer of exactly its size, so ASan
 *                   sees over-reads.
 *   test_mutate_corpus  the same on a few ../shared/corpus files (skips
 *                   when the corpus is absent; not counted toward the target).
 *   test_manifest   a package copied into a temporary directory: its
 *                   Manifest.json truncated, bit-flipped and byte-replaced,
 *                   hand-written hostile manifests, and hostile layouts
 *                   (FIFOs, symlinks out, directories for files), each through
 *                   al_model_open(dir).
 *   test_regress    every file under tests/regress/ (skips when absent).
 *   test_totals     prints the counts; the fixture mutations must reach
 *                   MIN_CASES (100 000) in every build: ~114 000 in the normal
 *                   build, ~103 000 under ASan (see the budgets).
 *
 * Counts per outcome (ok / format error / other) are printed with
 * print_message. A failing case is written to $TMPDIR/anelint-hostile-fail.*
 * so it can be replayed with the CLI. */
#include "testutil.h"
#include "pbwrite.h"

#include "analysis.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* The issue's target: mutated inputs from the repo's fixtures alone, in every build. */
#define MIN_CASES 100000ul

/* ================================================================ small helpers */

static FILE *devnull;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The whole file at `path` in a heap buffer of exactly its size (NULL when
 * absent; *n = 0 and a 1-byte buffer for an empty file). */
static uint8_t *slurp(const char *path, size_t *n)
{
	*n = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct stat st;
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		fclose(f);
		return NULL;
	}
	size_t len = (size_t)st.st_size;
	uint8_t *p = malloc(len ? len : 1);
	assert_non_null(p);
	if (fread(p, 1, len, f) != len) {
		fclose(f);
		free(p);
		return NULL;
	}
	fclose(f);
	*n = len;
	return p;
}

static void spew(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

/* A copy of p[0..n) in a heap buffer of exactly n bytes (NULL for n = 0). */
static uint8_t *exact_copy(const uint8_t *p, size_t n)
{
	if (!n)
		return NULL;
	uint8_t *q = malloc(n);
	assert_non_null(q);
	memcpy(q, p, n);
	return q;
}

/* ================================================================ outcomes */

enum { OUT_OK, OUT_FORMAT, OUT_OTHER, N_OUT };

struct tally {
	unsigned long n[N_OUT];
	unsigned long unsupported, io; /* the "other" kinds */
};

static unsigned long total_cases(const struct tally *t)
{
	return t->n[OUT_OK] + t->n[OUT_FORMAT] + t->n[OUT_OTHER];
}

static void tally_add(struct tally *to, const struct tally *t)
{
	for (int i = 0; i < N_OUT; i++)
		to->n[i] += t->n[i];
	to->unsupported += t->unsupported;
	to->io += t->io;
}

static void tally_print(const char *label, const struct tally *t)
{
	print_message("hostile: %-44s %7lu cases: %6lu ok, %6lu format error, %5lu other "
		      "(%lu unsupported, %lu I/O)\n",
		      label, total_cases(t), t->n[OUT_OK], t->n[OUT_FORMAT], t->n[OUT_OTHER],
		      t->unsupported, t->io);
}

/* Fixture mutations (the target), corpus mutations, Manifest cases, regress files. */
static struct tally fixtures_total, corpus_total, manifest_total, regress_total;

/* Why the result of one case breaks the contract, or NULL. */
static const char *judge(enum al_status st, const al_diags *d)
{
	bool error_kept = false;
	for (size_t i = 0; i < al_diags_count(d); i++) {
		const struct al_diag *x = al_diags_get(d, i);
		if (!x->msg)
			return "a diagnostic without a message";
		for (const char *c = x->msg; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				return "a diagnostic message holds a newline or control character";
		if ((unsigned)x->severity > AL_SEV_ERROR)
			return "a diagnostic with an unknown severity";
		if (x->severity == AL_SEV_ERROR)
			error_kept = true;
	}
	switch (st) {
	case AL_OK:
		return al_diags_errors(d) ? "AL_OK with an error diagnostic" : NULL;
	case AL_E_FORMAT:
	case AL_E_UNSUPPORTED:
	case AL_E_IO:
		return error_kept ? NULL : "an error status without an error diagnostic";
	case AL_E_NOMEM:
		return "out of memory without any allocation failed: a size taken from the input?";
	case AL_E_INVALID_ARG:
		return "AL_E_INVALID_ARG";
	}
	return "an unknown status";
}

static void count(struct tally *t, enum al_status st)
{
	if (st == AL_OK)
		t->n[OUT_OK]++;
	else if (st == AL_E_FORMAT)
		t->n[OUT_FORMAT]++;
	else {
		t->n[OUT_OTHER]++;
		t->unsupported += st == AL_E_UNSUPPORTED;
		t->io += st == AL_E_IO;
	}
}

static void report_failure(const char *what, const char *why, enum al_status st, const al_diags *d)
{
	print_error("%s: %s (status %s)\n", what, why, al_status_str(st));
	for (size_t i = 0; i < al_diags_count(d) && i < 10; i++) {
		const struct al_diag *x = al_diags_get(d, i);
		print_error("  diag %d: %s\n", (int)x->severity, x->msg ? x->msg : "(null)");
	}
}

/* The sinks on one item, into /dev/null: the text sink's check() every time,
 * the JSON sink's check() every JSON_EVERY-th time, both sinks' info() and
 * plan() every EXTRA_EVERY-th time, the report sinks (html, sarif, markdown, dot)
 * every 4 * EXTRA_EVERY-th time. Most of a case's time is report building,
 * mostly json-c; under ASan the JSON sink runs on every 2nd case to keep `make
 * asan` within its few minutes. While all_sinks is set, every sink runs. */
#if UNDER_ASAN
#define JSON_EVERY 2
#define EXTRA_EVERY 8
#else
#define JSON_EVERY 1
#define EXTRA_EVERY 4
#endif
static bool all_sinks;

static void run_sinks(const char *path, al_model *m, const al_diags *d, enum al_status st)
{
	static unsigned long calls;
	struct al_report_item it = {.path = path, .model = m, .diags = d, .status = st};
	struct al_report_opts o = {.show_consts = true, .shapes = true, .color = true, .plans = true};
	const struct al_sink *text = al_sink_by_name("text"), *json = al_sink_by_name("json");
	assert_non_null(text);
	assert_non_null(json);
	al_diags *ad = al_diags_new(); /* what the sinks show, computed first */
	assert_non_null(ad);
	enum al_status as = al_report_analyze(&it, 1, &o, ad);
	assert_true(as == AL_OK || al_diags_errors(ad) >= 1);
	al_diags_free(ad);
	text->check(devnull, &it, 1, &o);
	if (all_sinks || calls % JSON_EVERY == 0)
		json->check(devnull, &it, 1, &o);
	if (all_sinks || calls % EXTRA_EVERY == 0) {
		const struct al_sink *both[2] = {text, json};
		for (int i = 0; i < 2; i++) {
			both[i]->info(devnull, &it, 1, &o);
			if (both[i]->plan) /* the partition plan */
				both[i]->plan(devnull, &it, 1, &o);
		}
	}
	if (all_sinks || calls % (4 * EXTRA_EVERY) == 0) { /* the reports */
		static const char *const reports[] = {"html", "sarif", "markdown", "dot"};
		for (int i = 0; i < 4; i++) {
			const struct al_sink *r = al_sink_by_name(reports[i]);
			assert_non_null(r);
			r->check(devnull, &it, 1, &o);
		}
	}
	calls++;
	if (m)
		(void)al_model_fails(m, AL_FAIL_ANY);
	al_analysis_free(it.analysis);
}

/* Load + check + sinks; the status it ended with. */
static enum al_status run_buffer(const uint8_t *model, size_t n, const uint8_t *w, size_t nw,
				 const char *name, al_diags *d)
{
	al_model *m = NULL;
	enum al_status st = al_model_open_buffer(model, n, w, nw, name, &m, d);
	if (st == AL_OK) {
		assert_non_null(m);
		st = al_model_check(m, NULL, d);
		if (st != AL_OK) { /* as the CLI does: a model that failed its check is not reported */
			al_model_free(m);
			m = NULL;
		}
	} else {
		assert_null(m);
	}
	run_sinks(name, m, d, st);
	al_model_free(m);
	return st;
}

/* ================================================================ one buffer case */

struct seed {
	const char *label;   /* shown in counts and failures */
	uint8_t *model;      /* exact-size heap buffers */
	size_t n;
	uint8_t *weights;    /* NULL: no weight.bin */
	size_t nw;
};

enum mut { M_TRUNC, M_FLIP, M_BYTE, M_WTRUNC, M_WFLIP, M_WBYTE, M_NONE };
static const char *const mut_names[] = {
	"truncated at", "bit flipped at bit", "byte replaced at", "weight.bin truncated at",
	"weight.bin bit flipped at bit", "weight.bin byte replaced at", "unmutated",
};

/* One case: model[0..n) (+ weights) as given. `pos`, `val` describe it. */
static void buffer_case(const struct seed *s, const uint8_t *model, size_t n, const uint8_t *w,
			size_t nw, enum mut k, size_t pos, unsigned val, struct tally *t)
{
	al_diags *d = al_diags_new();
	assert_non_null(d);
	enum al_status st = run_buffer(model, n, w, nw, s->label, d);
	const char *why = judge(st, d);
	if (why) {
		char what[512], dir[256];
		const char *tmp = getenv("TMPDIR");
		snprintf(what, sizeof what, "%s %s %zu (value 0x%02x)", s->label, mut_names[k], pos, val);
		report_failure(what, why, st, d);
		snprintf(dir, sizeof dir, "%s/anelint-hostile-fail.mlmodel", tmp && *tmp ? tmp : "/tmp");
		spew(dir, model, n);
		print_error("  input written to %s\n", dir);
		if (w) {
			snprintf(dir, sizeof dir, "%s/anelint-hostile-fail.weight.bin",
				 tmp && *tmp ? tmp : "/tmp");
			spew(dir, w, nw);
			print_error("  weight.bin written to %s\n", dir);
		}
		al_diags_free(d);
		fail();
	}
	count(t, st);
	al_diags_free(d);
}

/* How many cases of each kind a seed gets. Small inputs get every offset
 * (every bit); larger ones this many, at a jittered stride. */
struct budget {
	size_t trunc, flip, byte; /* model bytes */
	size_t wtrunc, wflip, wbyte; /* weight.bin, first 1 KB (wtrunc: beyond it) */
};

/* The k-th of `count` positions spread over [0, n): every one when count >= n. */
static size_t spread(size_t k, size_t cnt, size_t n)
{
	if (cnt >= n)
		return k;
	size_t lo = k * n / cnt, hi = (k + 1) * n / cnt;
	return lo + (hi > lo ? (size_t)(rng() % (hi - lo)) : 0);
}

static const uint8_t byte_values[] = {0x00, 0xFF, 0x7F, 0x80};

/* Every mutation of one seed. */
static void mutate_seed(const struct seed *s, const struct budget *b, struct tally *out)
{
	struct tally t = {0};
	const size_t n = s->n;
	const uint8_t *w = s->weights;
	const size_t nw = s->nw;

	/* the seed itself must be fine */
	buffer_case(s, s->model, n, w, nw, M_NONE, 0, 0, &t);
	assert_int_equal(t.n[OUT_OK], 1);

	/* truncations (a fresh exact-size copy each) */
	size_t cnt = b->trunc < n ? b->trunc : n;
	for (size_t k = 0; k < cnt; k++) {
		size_t len = spread(k, cnt, n);
		uint8_t *p = exact_copy(s->model, len);
		buffer_case(s, p, len, w, nw, M_TRUNC, len, 0, &t);
		free(p);
	}

	/* bit flips and byte replacements, in place on one exact-size copy */
	uint8_t *p = exact_copy(s->model, n);
	cnt = b->flip < n * 8 ? b->flip : n * 8;
	for (size_t k = 0; k < cnt; k++) {
		size_t bit = spread(k, cnt, n * 8);
		p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		buffer_case(s, p, n, w, nw, M_FLIP, bit, 0, &t);
		p[bit / 8] = s->model[bit / 8];
	}
	cnt = b->byte < n ? b->byte : n;
	for (size_t k = 0; k < cnt; k++) {
		size_t pos = spread(k, cnt, n);
		for (size_t v = 0; v < sizeof byte_values; v++) {
			if (s->model[pos] == byte_values[v])
				continue;
			p[pos] = byte_values[v];
			buffer_case(s, p, n, w, nw, M_BYTE, pos, byte_values[v], &t);
		}
		p[pos] = s->model[pos];
	}
	free(p);

	if (w && nw) {
		/* weight.bin: every length up to 1 KB, then a stride to the end */
		size_t head = nw < 1024 ? nw : 1024;
		for (size_t len = 0; len <= head && len < nw; len++) {
			uint8_t *q = exact_copy(w, len);
			/* a 0-byte image is passed as a 1-byte buffer cut to 0: still "present" */
			uint8_t one;
			buffer_case(s, s->model, n, q ? q : &one, len, M_WTRUNC, len, 0, &t);
			free(q);
		}
		cnt = b->wtrunc;
		for (size_t k = 0; nw > head + 1 && k < cnt; k++) {
			size_t len = head + 1 + spread(k, cnt, nw - head - 1);
			uint8_t *q = exact_copy(w, len);
			buffer_case(s, s->model, n, q, len, M_WTRUNC, len, 0, &t);
			free(q);
		}
		uint8_t *q = exact_copy(w, nw);
		cnt = b->wflip < head * 8 ? b->wflip : head * 8;
		for (size_t k = 0; k < cnt; k++) {
			size_t bit = spread(k, cnt, head * 8);
			q[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			buffer_case(s, s->model, n, q, nw, M_WFLIP, bit, 0, &t);
			q[bit / 8] = w[bit / 8];
		}
		cnt = b->wbyte < head ? b->wbyte : head;
		for (size_t k = 0; k < cnt; k++) {
			size_t pos = spread(k, cnt, head);
			for (size_t v = 0; v < sizeof byte_values; v++) {
				if (w[pos] == byte_values[v])
					continue;
				q[pos] = byte_values[v];
				buffer_case(s, s->model, n, q, nw, M_WBYTE, pos, byte_values[v], &t);
			}
			q[pos] = w[pos];
		}
		free(q);
	}
	tally_print(s->label, &t);
	tally_add(out, &t);
}

/* A seed from a .mlmodel file or a package directory (model.mlmodel + weight.bin). */
static bool load_seed(struct seed *s, const char *path, const char *label)
{
	char buf[4200];
	struct stat st;
	memset(s, 0, sizeof *s);
	s->label = label;
	if (!path || stat(path, &st) != 0)
		return false;
	if (S_ISDIR(st.st_mode)) {
		snprintf(buf, sizeof buf, "%s/Data/com.apple.CoreML/model.mlmodel", path);
		s->model = slurp(buf, &s->n);
		snprintf(buf, sizeof buf, "%s/Data/com.apple.CoreML/weights/weight.bin", path);
		s->weights = slurp(buf, &s->nw);
	} else {
		s->model = slurp(path, &s->n);
	}
	return s->model != NULL;
}

static void free_seed(struct seed *s)
{
	free(s->model);
	free(s->weights);
	memset(s, 0, sizeof *s);
}

/* Per-seed budgets. Normal build: ~13 000 cases per model seed, ~9 000 more
 * per weight.bin, ~114 000 in all, at ~0.2 ms a case. ASan + UBSan runs ~5x
 * slower per case (most of it in the JSON sink, json-c), so it takes a little
 * less of each kind, ~103 000 in all (still above MIN_CASES), and a smaller
 * corpus sample, to keep `make asan` within a few minutes on two cores. */
#if UNDER_ASAN
static const struct budget std_budget = {2200, 4400, 1300, 250, 3600, 1024};
static const struct budget corpus_budget = {150, 500, 100, 50, 256, 64};
#else
static const struct budget std_budget = {2500, 5000, 1500, 300, 4096, 1024};
static const struct budget corpus_budget = {300, 1000, 200, 100, 512, 128};
#endif

struct seed_row {
	const char *rel;  /* under tests/data, or the corpus */
	const struct budget *b;
};

static void mutate_rows(const struct seed_row *rows, size_t n_rows, bool corpus,
			struct tally *total)
{
	for (size_t i = 0; i < n_rows; i++) {
		struct seed s;
		const char *path = corpus ? corpus_file(rows[i].rel) : fixture(rows[i].rel);
		const char *label = strrchr(rows[i].rel, '/') ? strrchr(rows[i].rel, '/') + 1 : rows[i].rel;
		if (!load_seed(&s, path, label)) {
			if (corpus)
				continue; /* a corpus without this file: nothing to do */
			print_error("missing fixture %s\n", rows[i].rel);
			fail();
		}
		rng_state = 0x9e3779b97f4a7c15ull + i; /* deterministic per seed */
		mutate_seed(&s, rows[i].b, total);
		free_seed(&s);
	}
}

static void test_mutate_models(void **state)
{
	(void)state;
	/* an NN with a nested loop, a legacy rank-5 NN, the rules NN, a classifier,
	 * a pipeline with enumerated shapes, a non-neural pipelineClassifier */
	static const struct seed_row rows[] = {
		{"converted/gru__nn_ios14.mlmodel", &std_budget},
		{"converted/builder__legacy_rank5_elementwise.mlmodel", &std_budget},
		{"crafted/nn_rules.mlmodel", &std_budget},
		{"crafted/nn_classifier.mlmodel", &std_budget},
		{"crafted/enum_pipeline.mlmodel", &std_budget},
		{"crafted/nonneural_pipeline.mlmodel", &std_budget},
	};
	mutate_rows(rows, sizeof rows / sizeof rows[0], false, &fixtures_total);
}

static void test_mutate_packages(void **state)
{
	(void)state;
	/* ML Programs: a GRU (while_loop, fp16 blobs), dilated convs (iOS17 opset,
	 * blobs), the rules program (no weight.bin) */
	static const struct seed_row rows[] = {
		{"converted/gru__mlp_fp16.mlpackage", &std_budget},
		{"converted/dilated_conv__mlp_ios17_fp16.mlpackage", &std_budget},
		{"crafted/mil_rules.mlpackage", &std_budget},
	};
	mutate_rows(rows, sizeof rows / sizeof rows[0], false, &fixtures_total);
}

static void test_mutate_corpus(void **state)
{
	(void)state;
	if (!corpus_dir())
		skip();
	static const struct seed_row rows[] = {
		{"real/pytorch_controlflow_loop_branch.mlmodel", &corpus_budget},
		{"real/XGBoost_TreeEnsemble_dummy_v6.mlmodel", &corpus_budget},
		{"real/S4TF_personalization_updatable.mlmodel", &corpus_budget},
		{"real/CreateML_ImageClassifier_pipeline.mlmodel", &corpus_budget},
		{"real/ActivityClassifier_GRU_mlprogram.mlpackage", &corpus_budget},
		{"converted/lstm__mlp_ios17_fp16.mlpackage", &corpus_budget},
	};
	mutate_rows(rows, sizeof rows / sizeof rows[0], true, &corpus_total);
}

/* ================================================================ resources */

/* Message builders for the hostile inputs (field numbers: tools/mkmodel.py,
 * coreml-format-facts.md). */

/* FeatureDescription{name, type: multiArrayType{shape, FLOAT32}}. */
static void put_array_feature(struct buf *desc, uint32_t field, const char *name,
			      const int64_t *shape, size_t rank, struct buf *extra)
{
	struct buf arr = {0}, type = {0}, feat = {0};
	put_packed(&arr, 1, shape, rank);
	put_uint(&arr, 2, 65568);
	if (extra)
		put_raw(&arr, extra->p, extra->n);
	put_msg(&type, 5, &arr);
	put_str(&feat, 1, name);
	put_msg(&feat, 3, &type);
	put_msg(desc, field, &feat);
}

/* NeuralNetworkLayer{name, inputs, outputs, <type_field>: params} as layers[] of net. */
static void put_layer(struct buf *net, const char *name, const char *in0, const char *in1,
		      const char *out, uint32_t type_field, struct buf *params)
{
	struct buf l = {0};
	put_str(&l, 1, name);
	if (in0)
		put_str(&l, 2, in0);
	if (in1)
		put_str(&l, 2, in1);
	if (out)
		put_str(&l, 3, out);
	put_msg(&l, type_field, params);
	put_msg(net, 1, &l);
}

static struct buf relu_params(void)
{
	struct buf act = {0};
	put_bytes(&act, 10, NULL, 0); /* ActivationParams.ReLU */
	return act;
}

/* Model{spec, description, <type_field>: body}. */
static struct buf model_of(int spec, struct buf *desc, uint32_t type_field, struct buf *body)
{
	struct buf m = {0};
	put_uint(&m, 1, (uint64_t)spec);
	if (desc && desc->n)
		put_msg(&m, 2, desc);
	put_msg(&m, type_field, body);
	return m;
}

/* ML Program with one function "main" (no inputs) whose block is `block`. */
static struct buf mil_model(struct buf *block, struct buf *fn_inputs)
{
	struct buf prog = {0}, fe = {0}, fn = {0}, be = {0};
	if (fn_inputs)
		put_raw(&fn, fn_inputs->p, fn_inputs->n);
	put_str(&fn, 2, "CoreML5");
	put_str(&be, 1, "CoreML5");
	put_msg(&be, 2, block);
	put_msg(&fn, 3, &be);
	put_uint(&prog, 1, 1);
	put_str(&fe, 1, "main");
	put_msg(&fe, 2, &fn);
	put_msg(&prog, 2, &fe);
	free(fn_inputs ? fn_inputs->p : NULL);
	return model_of(7, NULL, 502, &prog);
}

/* ValueType{tensorType{dataType, rank, dims (constant sizes)}} */
static struct buf mil_type(int dtype, uint64_t rank, const uint64_t *dims, size_t n)
{
	struct buf tt = {0}, vt = {0};
	uint8_t v[10];
	size_t vn = encode_varint(v, rank);
	put_uint(&tt, 1, (uint64_t)dtype);
	put_tag(&tt, 2, PB_VARINT); /* rank, written so gcc sees the varint fit (-Warray-bounds) */
	put_raw(&tt, v, vn < sizeof v ? vn : sizeof v);
	for (size_t i = 0; i < n; i++) {
		struct buf dim = {0}, c = {0};
		put_uint(&c, 1, dims[i]);
		put_msg(&dim, 1, &c);
		put_msg(&tt, 3, &dim);
	}
	put_msg(&vt, 1, &tt);
	return vt;
}

/* Operation{type, outputs[0] = out : type} appended to block (operations = 3). */
static void put_op(struct buf *block, const char *type, const char *in, const char *out,
		   struct buf *otype, struct buf *val_attr)
{
	struct buf op = {0};
	put_str(&op, 1, type);
	if (in) { /* inputs["x"] = Argument{Binding{name}} */
		struct buf e = {0}, arg = {0}, b = {0};
		put_str(&b, 1, in);
		put_msg(&arg, 1, &b);
		put_str(&e, 1, "x");
		put_msg(&e, 2, &arg);
		put_msg(&op, 2, &e);
	}
	if (out) {
		struct buf nv = {0};
		put_str(&nv, 1, out);
		if (otype)
			put_msg(&nv, 2, otype);
		put_msg(&op, 3, &nv);
	}
	if (val_attr) {
		struct buf attr = {0};
		put_str(&attr, 1, "val");
		put_msg(&attr, 2, val_attr);
		put_msg(&op, 5, &attr);
	}
	put_msg(block, 3, &op);
}

struct hostile {
	const char *label;
	struct buf model, weights; /* weights.p NULL: none */
};

#define N_HOSTILE 20
#define KB 1024

static void make_hostile(struct hostile *h)
{
	int k = 0;
	struct buf b, net, desc, p, blk;

	/* 1. loop layers nested as deep as 1 KB allows */
	b = (struct buf){0};
	for (;;) {
		struct buf loop = {0}, layer = {0}, body = {0};
		put_msg(&loop, 4, &b); /* LoopLayerParams.bodyNetwork */
		put_msg(&layer, 615, &loop);
		put_msg(&body, 1, &layer);
		b = body;
		if (b.n > KB - 16)
			break;
	}
	h[k].label = "NN loop nesting bomb";
	h[k++].model = model_of(4, NULL, 500, &b);

	/* 2. branch layers nested (ifBranch) */
	b = (struct buf){0};
	while (b.n < KB - 16) {
		struct buf br = {0}, layer = {0}, body = {0};
		put_msg(&br, 1, &b); /* BranchLayerParams.ifBranch */
		put_msg(&layer, 605, &br);
		put_str(&layer, 2, "c");
		put_msg(&body, 1, &layer);
		b = body;
	}
	h[k].label = "NN branch nesting bomb";
	h[k++].model = model_of(4, NULL, 500, &b);

	/* 3. pipelines nested as deep as 1 KB allows */
	b = (struct buf){0};
	net = (struct buf){0};
	p = relu_params();
	put_layer(&net, "r", "x", NULL, "y", 130, &p);
	b = model_of(4, NULL, 500, &net);
	while (b.n < KB - 16) {
		struct buf pipe = {0};
		put_msg(&pipe, 1, &b);
		b = model_of(4, NULL, 202, &pipe);
	}
	h[k].label = "pipeline nesting bomb";
	h[k++].model = b;

	/* 4. MIL cond ops nested through their blocks */
	b = (struct buf){0};
	while (b.n < KB - 64) {
		struct buf op = {0}, blk2 = {0};
		put_str(&op, 1, "cond");
		put_msg(&op, 4, &b); /* Operation.blocks */
		put_msg(&blk2, 3, &op);
		b = blk2;
	}
	h[k].label = "MIL block nesting bomb";
	h[k++].model = mil_model(&b, NULL);

	/* 5. a top-level length prefix of 2^62 */
	b = (struct buf){0};
	put_uint(&b, 1, 4);
	put_tag(&b, 500, PB_LEN);
	put_varint(&b, (uint64_t)1 << 62);
	for (int i = 0; i < 1000; i++)
		put_raw(&b, "\x0a", 1);
	h[k].label = "length prefix 2^62";
	h[k++].model = b;

	/* 6. nested length prefixes that overrun their parents, 10-byte varints */
	b = (struct buf){0};
	put_uint(&b, 1, 4);
	put_tag(&b, 500, PB_LEN);
	put_varint(&b, 1000);
	for (int i = 0; i < 90; i++) { /* layers[] with a length of 2^64 - 1 */
		put_tag(&b, 1, PB_LEN);
		put_raw(&b, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10);
	}
	h[k].label = "overlong nested length prefixes";
	h[k++].model = b;

	/* 7. ~1 KB of typed one-ReLU layers (7 bytes each), all named "" */
	net = (struct buf){0};
	while (net.n < KB - 16) {
		struct buf l = {0}, act = relu_params();
		put_msg(&l, 130, &act);
		put_msg(&net, 1, &l);
	}
	h[k].label = "many tiny typed layers";
	h[k++].model = model_of(4, NULL, 500, &net);

	/* 8. ~1 KB of empty layers (2 bytes each: no type) */
	net = (struct buf){0};
	for (int i = 0; i < 500; i++)
		put_raw(&net, "\x0a\x00", 2);
	h[k].label = "many empty layers";
	h[k++].model = model_of(4, NULL, 500, &net);

	/* 9. ~1 KB of unknown layer types (a warning each: more than the 200 kept) */
	net = (struct buf){0};
	while (net.n < KB - 16) {
		struct buf l = {0}, e = {0};
		put_msg(&l, 9999, &e);
		put_msg(&net, 1, &l);
	}
	h[k].label = "many unknown layer types";
	h[k++].model = model_of(4, NULL, 500, &net);

	/* 10. ~1 KB of MIL relu ops chained through one-letter names */
	blk = (struct buf){0};
	for (int i = 0; blk.n < KB - 64; i++)
		put_op(&blk, "relu", i ? "a" : NULL, "a", NULL, NULL);
	h[k].label = "many tiny MIL ops";
	h[k++].model = mil_model(&blk, NULL);

	/* 11. one layer with ~300 inputs and outputs */
	net = (struct buf){0};
	{
		struct buf l = {0}, add = {0};
		for (int i = 0; i < 170; i++) {
			put_str(&l, 2, "x");
			put_str(&l, 3, "y");
		}
		put_msg(&l, 230, &add);
		put_msg(&net, 1, &l);
	}
	h[k].label = "one layer with 340 blobs";
	h[k++].model = model_of(4, NULL, 500, &net);

	/* 12. huge declared feature shapes, ranges and enumerated shapes */
	desc = (struct buf){0};
	{
		int64_t huge[8] = {INT64_MAX, (int64_t)1 << 62, -1, INT64_MIN, 0, 1, INT64_MAX, 7};
		struct buf extra = {0}, shapes = {0}, ranges = {0};
		for (int i = 0; i < 12; i++) {
			struct buf sh = {0};
			put_packed(&sh, 1, huge, 8);
			put_msg(&shapes, 1, &sh);
		}
		put_msg(&extra, 21, &shapes);
		put_array_feature(&desc, 1, "x", huge, 8, &extra);
		for (int i = 0; i < 16; i++) {
			struct buf r = {0};
			put_uint(&r, 1, (uint64_t)INT64_MAX);
			put_uint(&r, 2, (uint64_t)-1);
			put_msg(&ranges, 1, &r);
		}
		put_msg(&extra, 31, &ranges);
		put_array_feature(&desc, 1, "z", huge, 8, &extra); /* both, on one input */
		put_array_feature(&desc, 10, "y", huge, 8, NULL);
		free(extra.p);
	}
	net = (struct buf){0};
	p = relu_params();
	put_layer(&net, "r", "x", NULL, "y", 130, &p);
	h[k].label = "huge feature shapes";
	h[k++].model = model_of(4, &desc, 500, &net);

	/* 13. huge image sizes, size ranges and enumerated sizes */
	desc = (struct buf){0};
	{
		struct buf img = {0}, type = {0}, feat = {0}, sizes = {0}, range = {0}, wr = {0};
		put_uint(&img, 1, (uint64_t)-1);
		put_uint(&img, 2, (uint64_t)INT64_MAX);
		put_uint(&img, 3, 30);
		for (int i = 0; i < 30; i++) {
			struct buf sz = {0};
			put_uint(&sz, 1, (uint64_t)-1);
			put_uint(&sz, 2, (uint64_t)1 << 63);
			put_msg(&sizes, 1, &sz);
		}
		put_msg(&img, 21, &sizes);
		put_uint(&wr, 1, (uint64_t)-1);
		put_uint(&wr, 2, (uint64_t)-2);
		put_raw(&range, "", 0);
		struct buf wr2 = {0};
		put_raw(&wr2, wr.p, wr.n);
		put_msg(&range, 1, &wr);
		put_msg(&range, 2, &wr2);
		put_msg(&img, 31, &range);
		put_msg(&type, 4, &img);
		put_str(&feat, 1, "x");
		put_msg(&feat, 3, &type);
		put_msg(&desc, 1, &feat);
	}
	net = (struct buf){0};
	p = relu_params();
	put_layer(&net, "r", "x", NULL, "y", 130, &p);
	h[k].label = "huge image sizes";
	h[k++].model = model_of(4, &desc, 500, &net);

	/* 14. a channel multiply of x[16, 2^40, 2^40] by y[16, 1, 1]: H * W overflows int64 */
	desc = (struct buf){0};
	{
		int64_t big[3] = {16, (int64_t)1 << 40, (int64_t)1 << 40}, vec[3] = {16, 1, 1};
		put_array_feature(&desc, 1, "x", big, 3, NULL);
		put_array_feature(&desc, 1, "v", vec, 3, NULL);
		put_array_feature(&desc, 10, "y", big, 3, NULL);
	}
	net = (struct buf){0};
	p = (struct buf){0};
	put_layer(&net, "mul", "x", "v", "y", 231, &p);
	p = (struct buf){0};
	put_layer(&net, "mul2", "v", "x", "y2", 231, &p);
	h[k].label = "channel multiply of huge declared shapes";
	h[k++].model = model_of(4, &desc, 500, &net);

	/* 15. huge convolution / pooling / upsample / reshape parameters */
	net = (struct buf){0};
	{
		int64_t hv[16];
		for (int i = 0; i < 16; i++)
			hv[i] = i & 1 ? -1 : INT64_MAX;
		struct buf conv = {0}, wt = {0};
		put_uint(&conv, 1, (uint64_t)-1); /* outputChannels */
		put_uint(&conv, 2, (uint64_t)-1); /* kernelChannels */
		put_uint(&conv, 10, 0);           /* nGroups */
		put_packed(&conv, 20, hv, 16);    /* kernelSize */
		put_packed(&conv, 30, hv, 16);    /* stride */
		put_packed(&conv, 40, hv, 16);    /* dilationFactor */
		put_bytes(&wt, 1, "\0\0\0\0", 4);
		put_msg(&conv, 90, &wt);
		put_layer(&net, "conv", "x", NULL, "c", 100, &conv);
		struct buf pool = {0};
		put_packed(&pool, 10, hv, 16);
		put_packed(&pool, 20, hv, 16);
		put_layer(&net, "pool", "c", NULL, "p", 120, &pool);
		struct buf up = {0};
		float fr[4] = {1e38f, -1e38f, 0.0f / 0.0f, 1.0f / 0.0f};
		put_packed(&up, 1, hv, 16);
		put_bytes(&up, 7, fr, sizeof fr);
		put_layer(&net, "up", "p", NULL, "u", 210, &up);
		struct buf lc = {0};
		put_packed(&lc, 1, hv, 16);
		put_layer(&net, "k", NULL, NULL, "kk", 1070, &lc);
		struct buf rs = {0};
		put_packed(&rs, 1, hv, 16);
		put_layer(&net, "rs", "u", NULL, "r", 1140, &rs);
		struct buf mul = {0};
		put_layer(&net, "m", "r", "kk", "y", 231, &mul);
	}
	h[k].label = "huge layer parameters";
	h[k++].model = model_of(4, NULL, 500, &net);

	/* 16. MIL: huge declared ranks and dims, consts claiming 2^124 elements */
	blk = (struct buf){0};
	{
		uint64_t dims[40];
		for (int i = 0; i < 40; i++)
			dims[i] = i & 1 ? (uint64_t)-1 : (uint64_t)1 << 62;
		struct buf fin = {0}, nv = {0}, t = mil_type(AL_DT_FP32, (uint64_t)-1, dims, 40);
		put_str(&nv, 1, "x");
		put_msg(&nv, 2, &t);
		put_msg(&fin, 1, &nv);
		/* const int4 with 2 packed bytes and a type of 2^62 x 2^64-1 elements */
		struct buf v = {0}, iv = {0}, tv = {0}, rep = {0};
		t = mil_type(AL_DT_INT4, 2, dims, 2);
		put_msg(&v, 2, &t);
		put_bytes(&rep, 1, "\x12\x34", 2);
		put_msg(&tv, 7, &rep);
		put_msg(&iv, 1, &tv);
		put_msg(&v, 3, &iv);
		t = mil_type(AL_DT_INT4, 2, dims, 2);
		put_op(&blk, "const", NULL, "k", &t, &v);
		t = mil_type(AL_DT_FP32, (uint64_t)1 << 40, dims, 10);
		put_op(&blk, "conv", "x", "c", &t, NULL);
		t = mil_type(AL_DT_FP16, 5, dims, 5);
		put_op(&blk, "conv", "k", "d", &t, NULL);
		h[k].label = "MIL huge ranks and dims";
		h[k++].model = mil_model(&blk, &fin);
	}

	/* 17. weight.bin: a header counting 2^32 - 1 blobs, metadata with huge
	 * sizes and offsets, and consts pointing everywhere */
	blk = (struct buf){0};
	{
		static const uint64_t offs[] = {
			0, 1, 63, 64, 128, 192, 256, 960, 1023, 1024, (uint64_t)-1, (uint64_t)-64,
			(uint64_t)1 << 63, 64, 64,
		};
		for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
			uint64_t n = (uint64_t)-1;
			struct buf v = {0}, bf = {0}, t = mil_type(AL_DT_FP16, 1, &n, 1);
			put_msg(&v, 2, &t);
			put_str(&bf, 1, "@model_path/weights/weight.bin");
			put_uint(&bf, 2, offs[i]);
			put_msg(&v, 5, &bf);
			t = mil_type(AL_DT_FP16, 1, &n, 1);
			put_op(&blk, "const", NULL, i & 1 ? "w" : "v", &t, &v);
		}
		uint8_t *w = calloc(1, KB);
		assert_non_null(w);
		memcpy(w, "\xff\xff\xff\xff\x02\x00\x00\x00", 8);
		for (unsigned o = 64; o + 64 <= KB; o += 64) { /* blob_metadata records */
			static const uint8_t md[24] = {
				0xef, 0xbe, 0xad, 0xde, 0x01, 0, 0, 0,
				0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				0xc0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			};
			memcpy(w + o, md, sizeof md);
			w[o + 4] = (uint8_t)(o / 64 % 19); /* data types 0..18 */
		}
		h[k].weights = (struct buf){w, KB, KB};
		h[k].label = "weight.bin huge counts and offsets";
		h[k++].model = mil_model(&blk, NULL);
	}

	/* 18. long names full of control characters and a user-defined metadata flood */
	desc = (struct buf){0};
	{
		char name[300];
		for (size_t i = 0; i < sizeof name - 1; i++)
			name[i] = (char)(i % 32 ? i % 32 : '\n');
		name[sizeof name - 1] = '\0';
		struct buf meta = {0};
		for (int i = 0; i < 40; i++) {
			struct buf e = {0};
			put_str(&e, 1, "\x1b[2J");
			put_str(&e, 2, "\n\r\t");
			put_msg(&meta, 100, &e);
		}
		put_str(&meta, 1, name);
		put_msg(&desc, 100, &meta);
		net = (struct buf){0};
		p = relu_params();
		put_layer(&net, name, name, NULL, name, 130, &p);
		h[k].label = "control characters in names";
		h[k++].model = model_of(4, &desc, 500, &net);
	}

	/* 19. a pipeline of ~100 tiny stages with many names */
	b = (struct buf){0};
	{
		struct buf pipe = {0};
		while (pipe.n < KB - 64) {
			struct buf stage = {0}, e = {0};
			put_uint(&stage, 1, 4);
			put_msg(&stage, 500, &e);
			put_msg(&pipe, 1, &stage);
			put_str(&pipe, 2, "s");
		}
		h[k].label = "pipeline of many empty stages";
		h[k++].model = model_of(4, NULL, 202, &pipe);
	}

	/* 20. 1 KB of 0xff */
	b = (struct buf){0};
	for (int i = 0; i < KB; i++)
		put_raw(&b, "\xff", 1);
	h[k].label = "1 KB of 0xff";
	h[k++].model = b;

	assert_int_equal(k, N_HOSTILE);
}

static long max_rss_kb(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}

/* Bytes of library memory a load + check of (model, weights) holds at its
 * peak: every IR object lives in the model's arena until al_model_free (the
 * arena never frees, so its final capacity is its peak), plus the
 * diagnostics' array and strings. Mirrors al_model_open_buffer. */
static size_t library_bytes(const struct hostile *h)
{
	al_diags *d = al_diags_new();
	struct al_model *m = ali_calloc(1, sizeof *m);
	assert_non_null(d);
	assert_non_null(m);
	m->path = "hostile";
	enum al_status st = AL_OK;
	if (h->weights.p)
		st = ali_weights_attach(m, (al_span){h->weights.p, h->weights.n},
				       "hostile/weights/weight.bin", d);
	if (st == AL_OK)
		st = ali_load_model_message(m, (al_span){h->model.p, h->model.n}, "hostile", "hostile", d);
	if (st == AL_OK)
		st = al_model_check(m, NULL, d);
	size_t bytes = m->arena.cap + d->strings.cap + d->cap * sizeof(struct al_diag);
	al_model_free(m);
	al_diags_free(d);
	return bytes;
}

/* Each hostile ~1 KB input: within 2 s (wall, load + check + both sinks), at
 * most 16 MB of library memory, and no more than 64 MB (256 MB under ASan,
 * whose shadow and quarantine inflate RSS) of growth in the process's peak
 * RSS. Why these measures: the library allocates IR only from the model's
 * arena, whose capacity is exact and build-independent; mallinfo2() reports
 * the current heap, not a peak, and reads zeros under ASan, which replaces
 * malloc. ru_maxrss is the process's high-water mark: it only shows growth
 * past the previous peak and only pages touched (ali_arena_alloc zeroes what
 * it hands out, so arena growth is touched), which makes it a coarse
 * catch-all for what the arena does not see (json-c in the JSON sink, stdio).
 * Then ~100 truncations of each input must end cleanly too.
 * ANELINT_HOSTILE_DUMP=DIR writes the inputs to DIR/hostileNN.mlmodel (and
 * .weight.bin) to replay them with the CLI. */
static void test_resources(void **state)
{
	(void)state;
	struct hostile h[N_HOSTILE];
	memset(h, 0, sizeof h);
	make_hostile(h);
	const long rss_limit_kb = UNDER_ASAN ? 256 * 1024 : 64 * 1024;
	struct tally trunc_total = {0};
	for (int i = 0; i < N_HOSTILE; i++) {
		const struct hostile *x = &h[i];
		struct seed s = {.label = x->label, .model = x->model.p, .n = x->model.n,
				 .weights = x->weights.p, .nw = x->weights.n};
		struct tally t = {0};
		const char *dump = getenv("ANELINT_HOSTILE_DUMP");
		if (dump && *dump) { /* to replay them with the CLI */
			char path[4200];
			snprintf(path, sizeof path, "%s/hostile%02d.mlmodel", dump, i + 1);
			spew(path, x->model.p, x->model.n);
			snprintf(path, sizeof path, "%s/hostile%02d.weight.bin", dump, i + 1);
			if (x->weights.p)
				spew(path, x->weights.p, x->weights.n);
		}
		long rss0 = max_rss_kb();
		double t0 = now_s();
		all_sinks = true;
		buffer_case(&s, x->model.p, x->model.n, x->weights.p, x->weights.n, M_NONE, 0, 0, &t);
		all_sinks = false;
		double secs = now_s() - t0;
		long rss = max_rss_kb() - rss0;
		size_t lib = library_bytes(x);
		print_message("hostile: resource %-40s %5zu bytes: %-13s %7.3f s, library %6zu KB, "
			      "peak RSS +%ld KB\n",
			      x->label, x->model.n + x->weights.n,
			      t.n[OUT_OK] ? "ok" : t.n[OUT_FORMAT] ? "format error" : "other error",
			      secs, lib / 1024, rss);
		if (secs >= 2.0 || lib > ((size_t)16 << 20) || rss > rss_limit_kb) {
			print_error("%s: too costly\n", x->label);
			fail();
		}
		/* truncations: ~100 per input, a fresh exact-size copy each */
		size_t n = x->model.n;
		for (size_t k = 0; k < 100 && k < n; k++) {
			size_t len = spread(k, 100, n);
			uint8_t *c = exact_copy(x->model.p, len);
			buffer_case(&s, c, len, x->weights.p, x->weights.n, M_TRUNC, len, 0, &trunc_total);
			free(c);
		}
	}
	tally_print("truncations of the hostile inputs", &trunc_total);
	for (int i = 0; i < N_HOSTILE; i++) {
		free(h[i].model.p);
		free(h[i].weights.p);
	}
}

/* ================================================================ Manifest.json and package layout */

struct pkg {
	char root[256];      /* the temporary directory */
	char dir[512];       /* <root>/p.mlpackage */
	char manifest[640];  /* <dir>/Manifest.json */
	char data[640];      /* <dir>/Data */
	char core[768];      /* <dir>/Data/com.apple.CoreML */
	char model[896];     /* <core>/model.mlmodel */
	char wdir[896];      /* <core>/weights */
	char weights[1024];  /* <wdir>/weight.bin */
	uint8_t *orig_manifest, *orig_model, *orig_weights;
	size_t n_manifest, n_model, n_weights;
	struct tally t;
};

static void put_file(const char *path, const void *p, size_t n)
{
	spew(path, p, n);
}

static void put_str_file(const char *path, const char *s)
{
	spew(path, s, strlen(s));
}

/* Put the package back as copied: every file, directory and permission. */
static void pkg_restore(struct pkg *k)
{
	rm_tree(k->dir);
	assert_int_equal(mkdir(k->dir, 0700), 0);
	assert_int_equal(mkdir(k->data, 0700), 0);
	assert_int_equal(mkdir(k->core, 0700), 0);
	assert_int_equal(mkdir(k->wdir, 0700), 0);
	put_file(k->manifest, k->orig_manifest, k->n_manifest);
	put_file(k->model, k->orig_model, k->n_model);
	put_file(k->weights, k->orig_weights, k->n_weights);
}

static void pkg_setup(struct pkg *k, const char *fixture_rel)
{
	char src[4200];
	memset(k, 0, sizeof *k);
	const char *tmp = getenv("TMPDIR");
	snprintf(k->root, sizeof k->root, "%s/anelint-hostile.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(k->root));
	snprintf(k->dir, sizeof k->dir, "%s/p.mlpackage", k->root);
	snprintf(k->manifest, sizeof k->manifest, "%s/Manifest.json", k->dir);
	snprintf(k->data, sizeof k->data, "%s/Data", k->dir);
	snprintf(k->core, sizeof k->core, "%s/com.apple.CoreML", k->data);
	snprintf(k->model, sizeof k->model, "%s/model.mlmodel", k->core);
	snprintf(k->wdir, sizeof k->wdir, "%s/weights", k->core);
	snprintf(k->weights, sizeof k->weights, "%s/weight.bin", k->wdir);
	const char *fx = fixture(fixture_rel);
	snprintf(src, sizeof src, "%s/Manifest.json", fx);
	assert_non_null(k->orig_manifest = slurp(src, &k->n_manifest));
	snprintf(src, sizeof src, "%s/Data/com.apple.CoreML/model.mlmodel", fixture(fixture_rel));
	assert_non_null(k->orig_model = slurp(src, &k->n_model));
	snprintf(src, sizeof src, "%s/Data/com.apple.CoreML/weights/weight.bin", fixture(fixture_rel));
	assert_non_null(k->orig_weights = slurp(src, &k->n_weights));
	pkg_restore(k);
}

static void pkg_teardown(struct pkg *k)
{
	rm_tree(k->root);
	free(k->orig_manifest);
	free(k->orig_model);
	free(k->orig_weights);
}

/* al_model_open(dir) + check + sinks; judged and counted. Returns the status. */
static enum al_status pkg_case(struct pkg *k, const char *what, size_t pos)
{
	al_diags *d = al_diags_new();
	assert_non_null(d);
	al_model *m = NULL;
	enum al_status st = al_model_open(k->dir, &m, d);
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
	run_sinks(k->dir, m, d, st);
	al_model_free(m);
	const char *why = judge(st, d);
	if (why) {
		char label[300];
		snprintf(label, sizeof label, "package case '%s' (%zu)", what, pos);
		report_failure(label, why, st, d);
		print_error("  the package is left in %s\n", k->dir);
		al_diags_free(d);
		fail();
	}
	count(&k->t, st);
	al_diags_free(d);
	return st;
}

/* A manifest naming root model `root_path` and weights item `weights_path`
 * (NULL: no weights item), into buf. */
static void manifest_text(char *buf, size_t cap, const char *version, const char *root_path,
			  const char *weights_path, const char *root_id)
{
	char w[1200] = "";
	if (weights_path)
		snprintf(w, sizeof w,
			 ", \"W\": {\"author\": \"com.apple.CoreML\", \"description\": \"w\", "
			 "\"name\": \"weights\", \"path\": \"%s\"}", weights_path);
	snprintf(buf, cap,
		 "{\"fileFormatVersion\": \"%s\", \"itemInfoEntries\": {\"R\": {\"author\": "
		 "\"com.apple.CoreML\", \"description\": \"m\", \"name\": \"model.mlmodel\", "
		 "\"path\": \"%s\"}%s}, \"rootModelIdentifier\": \"%s\"}",
		 version, root_path, w, root_id);
}

/* Hand-written hostile manifests, each written whole. */
static void manifest_cases(struct pkg *k)
{
	static const char *const texts[] = {
		"", " \n\t", "null", "[]", "\"x\"", "1", "true", "{}", "{\"a\":}", "{", "}",
		"\xEF\xBB\xBF", "\xEF\xBB", "{\"fileFormatVersion\": 1}",
		"{\"fileFormatVersion\": \"1.0.0\"}",
		"{\"fileFormatVersion\": \"1.0.0\", \"itemInfoEntries\": []}",
		"{\"fileFormatVersion\": \"1.0.0\", \"itemInfoEntries\": {\"R\": 1}, "
		"\"rootModelIdentifier\": \"R\"}",
		"{\"fileFormatVersion\": \"1.0.0\", \"itemInfoEntries\": {\"R\": {}}, "
		"\"rootModelIdentifier\": \"R\"}",
		"{\"fileFormatVersion\": \"1.0.0\", \"itemInfoEntries\": {\"R\": {\"author\": 1, "
		"\"description\": [], \"name\": null, \"path\": {}}}, \"rootModelIdentifier\": \"R\"}",
		"{\"fileFormatVersion\": \"1.0.0\", \"itemInfoEntries\": {}, \"rootModelIdentifier\": \"R\"}",
		"{\"fileFormatVersion\": \"1.0.0\", \"itemInfoEntries\": {}, \"rootModelIdentifier\": 7}",
		"{\"x\": 1e999999, \"y\": -0, \"z\": 123456789012345678901234567890}",
		"{\"s\": \"\\ud800\", \"t\": \"\\u0000\", \"u\": \"\xff\xfe\"}",
		"{\"a\": 1, \"a\": 2, \"a\": {\"a\": [1, 2, {\"a\": null}]}}",
		"{\"fileFormatVersion\": \"1.0.0\"} trailing",
		"/* comment */ {}", "{'a': 1}", "{\"a\": NaN}", "{\"a\": Infinity}", "[1,]", "{\"a\":1,}",
	};
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		put_str_file(k->manifest, texts[i]);
		pkg_case(k, texts[i], i);
	}
	static const char nul[] = "{\"fileFormatVersion\": \"1.0.0\"}\0\0"; /* NULs after the value */
	put_file(k->manifest, nul, sizeof nul - 1);
	pkg_case(k, "manifest with trailing NUL bytes", 0);

	/* versions, root paths, weights paths, root identifiers */
	static const char *const versions[] = {
		"1.0.0", "99.0.0", "1.0", "1.0.0.0", "999999999.999999999.999999999", "9999999999.0.0",
		"-1.0.0", "1.0.0 ", "01.00.00", "", "1..0", "a.b.c", "1.0.0\\u0000x", "1.0.0\\n",
	};
	char buf[70000];
	for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
		manifest_text(buf, sizeof buf, versions[i], "com.apple.CoreML/model.mlmodel",
			      "com.apple.CoreML/weights", "R");
		put_str_file(k->manifest, buf);
		pkg_case(k, versions[i], i);
	}
	static const char *const roots[] = {
		"../Manifest.json", "/etc/passwd", "com.apple.CoreML/../../Manifest.json",
		"com.apple.CoreML/../com.apple.CoreML/model.mlmodel", "com.apple.CoreML//model.mlmodel",
		"", ".", "/", "//", "com.apple.CoreML", "com.apple.CoreML/", "com.apple.CoreML/weights",
		"com.apple.CoreML/weights/weight.bin", "com.apple.CoreML/model.mlmodel/",
		"./com.apple.CoreML/model.mlmodel", "com.apple.CoreML/nonexistent",
		"com.apple.CoreML/model.mlmodel\\u0000../../x", "com.apple.CoreML/model\\n.mlmodel",
		"com.apple.CoreML\\\\model.mlmodel", "..", "../", "../../../../../../../../dev/zero",
		"com.apple.CoreML/../../../../../../../proc/self/mem", "\\u002e\\u002e/x",
	};
	for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
		manifest_text(buf, sizeof buf, "1.0.0", roots[i], "com.apple.CoreML/weights", "R");
		put_str_file(k->manifest, buf);
		pkg_case(k, roots[i], i);
	}
	/* a root path of 60 000 characters */
	{
		static char longp[60001];
		memset(longp, 'a', sizeof longp - 1);
		for (size_t i = 1; i < sizeof longp - 1; i += 2)
			longp[i] = '/';
		manifest_text(buf, sizeof buf, "1.0.0", longp, NULL, "R");
		put_str_file(k->manifest, buf);
		pkg_case(k, "60 000-character root path", 0);
	}
	static const char *const wpaths[] = {
		"../..", "..", "/tmp", "/", "com.apple.CoreML/model.mlmodel", "com.apple.CoreML/weights/",
		"com.apple.CoreML", "com.apple.CoreML/weights/weight.bin", "", "com.apple.CoreML//weights",
		"com.apple.CoreML/weights\\u0000", "com.apple.CoreML/nonexistent", ".",
	};
	for (size_t i = 0; i < sizeof wpaths / sizeof wpaths[0]; i++) {
		manifest_text(buf, sizeof buf, "1.0.0", "com.apple.CoreML/model.mlmodel", wpaths[i], "R");
		put_str_file(k->manifest, buf);
		pkg_case(k, wpaths[i], i);
	}
	static const char *const ids[] = {"", "W", "r", "R\\n", "R\\u0000", "\\ud800"};
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		manifest_text(buf, sizeof buf, "1.0.0", "com.apple.CoreML/model.mlmodel",
			      "com.apple.CoreML/weights", ids[i]);
		put_str_file(k->manifest, buf);
		pkg_case(k, ids[i], i);
	}

	/* JSON nesting: 100 000 arrays, then objects; json-c is limited to depth 16 */
	{
		size_t n = 100000;
		char *deep = malloc(2 * n + 1);
		assert_non_null(deep);
		memset(deep, '[', n);
		memset(deep + n, ']', n);
		put_file(k->manifest, deep, 2 * n);
		pkg_case(k, "100 000 nested arrays", 0);
		put_file(k->manifest, deep, n);
		pkg_case(k, "100 000 unclosed arrays", 0);
		size_t len = 0;
		for (size_t i = 0; i < 5000; i++)
			len += (size_t)sprintf(deep + len, "{\"a\":");
		put_file(k->manifest, deep, len);
		pkg_case(k, "5000 nested objects, unclosed", 0);
		free(deep);
	}
	/* 3000 items, and a 1 MB description */
	{
		size_t cap = 1 << 21, len = 0;
		char *big = malloc(cap);
		assert_non_null(big);
		len += (size_t)snprintf(big, cap, "{\"fileFormatVersion\": \"1.0.0\", \"itemInfoEntries\": {");
		for (int i = 0; i < 3000; i++)
			len += (size_t)snprintf(big + len, cap - len,
						"\"%d\": {\"author\": \"a\", \"description\": \"d\", "
						"\"name\": \"weights\", \"path\": \"x/%d\"}, ", i, i);
		len += (size_t)snprintf(big + len, cap - len,
					"\"R\": {\"author\": \"com.apple.CoreML\", \"description\": \"");
		memset(big + len, 'd', 1 << 20);
		len += 1 << 20;
		len += (size_t)snprintf(big + len, cap - len,
					"\", \"name\": \"m\", \"path\": \"com.apple.CoreML/model.mlmodel\"}}, "
					"\"rootModelIdentifier\": \"R\"}");
		put_file(k->manifest, big, len);
		pkg_case(k, "3000 items and a 1 MB description", 0);
		free(big);
	}
	/* more than 16 MiB (sparse): refused before parsing */
	{
		int fd = open(k->manifest, O_WRONLY | O_TRUNC | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, (16 << 20) + 1), 0);
		close(fd);
		pkg_case(k, "16 MiB + 1 byte Manifest.json", 0);
	}
	put_file(k->manifest, k->orig_manifest, k->n_manifest);
}

/* Manifest.json, Data, the model and the weights replaced by directories,
 * FIFOs, empty files, dangling symlinks and symlinks out of the package. */
static void layout_cases(struct pkg *k)
{
	char outside[600], outside_dir[600];
	snprintf(outside, sizeof outside, "%s/outside.bin", k->root);
	snprintf(outside_dir, sizeof outside_dir, "%s/outside", k->root);
	put_file(outside, k->orig_model, k->n_model);
	mkdir(outside_dir, 0700);
	const char *const paths[] = {k->manifest, k->model, k->weights};
	for (int i = 0; i < 3; i++) {
		const char *p = paths[i];
		pkg_restore(k);
		assert_int_equal(unlink(p), 0);
		pkg_case(k, "missing", (size_t)i);
		assert_int_equal(mkdir(p, 0700), 0);
		pkg_case(k, "a directory", (size_t)i);
		rmdir(p);
		assert_int_equal(mkfifo(p, 0600), 0);
		pkg_case(k, "a FIFO", (size_t)i);
		unlink(p);
		put_file(p, "", 0);
		pkg_case(k, "empty", (size_t)i);
		unlink(p);
		assert_int_equal(symlink(outside, p), 0);
		pkg_case(k, "a symlink out of the package", (size_t)i);
		unlink(p);
		assert_int_equal(symlink("/dev/zero", p), 0);
		pkg_case(k, "a symlink to /dev/zero", (size_t)i);
		unlink(p);
		assert_int_equal(symlink("nowhere", p), 0);
		pkg_case(k, "a dangling symlink", (size_t)i);
		unlink(p);
		assert_int_equal(symlink(p, p), 0);
		pkg_case(k, "a symlink to itself", (size_t)i);
		unlink(p);
		put_file(p, i == 0 ? k->orig_manifest : i == 1 ? k->orig_model : k->orig_weights,
			 i == 0 ? k->n_manifest : i == 1 ? k->n_model : k->n_weights);
		if (chmod(p, 0) == 0 && access(p, R_OK) != 0) /* root reads anyway: skip then */
			pkg_case(k, "unreadable", (size_t)i);
		chmod(p, 0600);
	}
	/* the directories */
	const char *const dirs[] = {k->data, k->core, k->wdir};
	for (int i = 0; i < 3; i++) {
		pkg_restore(k);
		rm_tree(dirs[i]);
		pkg_case(k, "directory missing", (size_t)i);
		put_file(dirs[i], "x", 1);
		pkg_case(k, "directory is a file", (size_t)i);
		unlink(dirs[i]);
		assert_int_equal(symlink(outside_dir, dirs[i]), 0);
		pkg_case(k, "directory is a symlink out of the package", (size_t)i);
		unlink(dirs[i]);
	}
	/* the package itself as a file, and with a trailing slash */
	pkg_restore(k);
	{
		char slash[700];
		snprintf(slash, sizeof slash, "%s///", k->dir);
		al_diags *d = al_diags_new();
		al_model *m = NULL;
		enum al_status st = al_model_open(slash, &m, d);
		assert_int_equal(st, AL_OK);
		al_model_free(m);
		al_diags_free(d);
	}
	rm_tree(k->dir);
	put_file(k->dir, k->orig_model, k->n_model); /* a .mlpackage that is a file: a model */
	pkg_case(k, "the package is a file", 0);
	unlink(k->dir);
	pkg_restore(k);
	unlink(outside);
	rmdir(outside_dir);
}

static void test_manifest(void **state)
{
	(void)state;
	struct pkg k;
	pkg_setup(&k, "converted/dilated_conv__mlp_ios17_fp16.mlpackage");
	assert_int_equal(pkg_case(&k, "unmutated", 0), AL_OK);

	/* Manifest.json truncated at every offset, two bits flipped per byte,
	 * every byte replaced by each interesting value */
	const size_t n = k.n_manifest;
	uint8_t *p = exact_copy(k.orig_manifest, n);
	for (size_t len = 0; len < n; len++) {
		put_file(k.manifest, p, len);
		pkg_case(&k, "Manifest.json truncated", len);
	}
	for (size_t pos = 0; pos < n; pos++) {
		for (unsigned b = 0; b < 8; b += 3) {
			p[pos] ^= (uint8_t)(1u << ((pos + b) % 8));
			put_file(k.manifest, p, n);
			pkg_case(&k, "Manifest.json bit flipped at byte", pos);
			p[pos] = k.orig_manifest[pos];
		}
		for (size_t v = 0; v < sizeof byte_values; v++) {
			if (p[pos] == byte_values[v])
				continue;
			p[pos] = byte_values[v];
			put_file(k.manifest, p, n);
			pkg_case(&k, "Manifest.json byte replaced at", pos);
			p[pos] = k.orig_manifest[pos];
		}
	}
	free(p);
	put_file(k.manifest, k.orig_manifest, k.n_manifest);
	manifest_cases(&k);
	layout_cases(&k);
	tally_print("Manifest.json and layout cases", &k.t);
	tally_add(&manifest_total, &k.t);
	pkg_teardown(&k);
}

/* ================================================================ tests/regress */

/* Every file under tests/regress/: inputs that once broke anelint (the fuzz
 * harnesses' reproducers, and ours). A file under tests/regress/<harness>/ is
 * in that libFuzzer harness's framing (tests/regress/README.md, and the top of
 * fuzz/fuzz_<harness>.c):
 *     mlmodel    the bytes of a .mlmodel (one Model message)
 *     mil        [u16 L][L bytes: weight.bin][rest: MILSpec.Program], wrapped
 *                into Model{specificationVersion 6, mlProgram}
 *     mlpackage  [u32 A][Manifest.json][u32 B][model.mlmodel][rest: weight.bin],
 *                written out as a package directory
 *     rules      the text of a user rules file (al_user_rules_parse)
 * (lengths little-endian, clamped to the bytes present). Anything else, e.g. a
 * *.mlmodel directly in tests/regress/, is a Model message. README*, *.md and
 * dot files are skipped. Each must end in AL_OK or a clean error. */

static struct pkg *regress_pkg; /* the package directory for mlpackage framings */
static size_t regress_root_len;
static unsigned long regress_files;

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);
	return n >= k && strcmp(s + n - k, suf) == 0;
}

/* One [u32 len][bytes] part off the front of *p (fuzz_mlpackage.c's take). */
static void take_part(const uint8_t **p, size_t *n, const uint8_t **part, size_t *len)
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

static void replay_mil(const struct seed *s, const uint8_t *data, size_t size, struct tally *t)
{
	size_t wlen = 0;
	if (size >= 2) {
		wlen = (size_t)data[0] | (size_t)data[1] << 8;
		data += 2;
		size -= 2;
		if (wlen > size)
			wlen = size;
	}
	uint8_t *w = exact_copy(data, wlen);
	size_t plen = size - wlen;
	struct buf m = {0};
	put_raw(&m, "\x08\x06\xb2\x1f", 4); /* specificationVersion 6, mlProgram (502) */
	put_varint(&m, plen);
	put_raw(&m, data + wlen, plen);
	uint8_t *model = exact_copy(m.p, m.n);
	buffer_case(s, model, m.n, w, wlen, M_NONE, 0, 0, t);
	free(model);
	free(m.p);
	free(w);
}

static void replay_package(const uint8_t *data, size_t size, const char *label, struct tally *t)
{
	struct pkg *k = regress_pkg;
	const uint8_t *mf, *mm;
	size_t mf_n, mm_n;
	take_part(&data, &size, &mf, &mf_n);
	take_part(&data, &size, &mm, &mm_n);
	pkg_restore(k);
	put_file(k->manifest, mf, mf_n);
	put_file(k->model, mm, mm_n);
	if (size)
		put_file(k->weights, data, size);
	else
		unlink(k->weights);
	k->t = (struct tally){0};
	pkg_case(k, label, 0);
	tally_add(t, &k->t);
}

static int replay_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (base[0] == '.' || strncmp(base, "README", 6) == 0 || has_suffix(base, ".md"))
		return 0;
	const char *rel = path + regress_root_len; /* "/<harness>/<file>" or "/<file>" */
	char harness[64] = "";
	const char *slash = strchr(rel + 1, '/');
	if (slash && (size_t)(slash - rel - 1) < sizeof harness) {
		memcpy(harness, rel + 1, (size_t)(slash - rel - 1));
		harness[slash - rel - 1] = '\0';
	}
	size_t n;
	uint8_t *bytes = slurp(path, &n);
	assert_non_null(bytes);
	struct seed s = {.label = rel + 1};
	if (strcmp(harness, "rules") == 0) {
		al_diags *d = al_diags_new();
		assert_non_null(d);
		al_user_rules *u = NULL;
		enum al_status rs = al_user_rules_parse((const char *)bytes, n, rel + 1, &u, d);
		assert_true(rs == AL_OK || rs == AL_E_FORMAT);
		assert_true((rs == AL_OK) == (u != NULL));
		assert_true((rs == AL_OK) == (al_diags_errors(d) == 0));
		regress_total.n[rs == AL_OK ? OUT_OK : OUT_FORMAT]++;
		al_user_rules_free(u);
		al_diags_free(d);
	} else if (strcmp(harness, "mil") == 0) {
		replay_mil(&s, bytes, n, &regress_total);
	} else if (strcmp(harness, "mlpackage") == 0) {
		replay_package(bytes, n, rel + 1, &regress_total);
	} else { /* mlmodel, or a bare model file */
		uint8_t *model = exact_copy(bytes, n);
		buffer_case(&s, model, n, NULL, 0, M_NONE, 0, 0, &regress_total);
		free(model);
	}
	free(bytes);
	regress_files++;
	return 0;
}

static void test_regress(void **state)
{
	(void)state;
	char dir[4200];
	struct stat st;
	snprintf(dir, sizeof dir, "%s/tests/regress", repo_root());
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		skip();
	struct pkg k;
	pkg_setup(&k, "converted/dilated_conv__mlp_ios17_fp16.mlpackage");
	regress_pkg = &k;
	regress_root_len = strlen(dir);
	all_sinks = true;
	assert_int_equal(nftw(dir, replay_one, 16, FTW_PHYS), 0);
	all_sinks = false;
	regress_pkg = NULL;
	pkg_teardown(&k);
	print_message("hostile: tests/regress: %lu files replayed\n", regress_files);
	tally_print("tests/regress", &regress_total);
}

static void test_totals(void **state)
{
	(void)state;
	tally_print("fixture mutations (target)", &fixtures_total);
	tally_print("corpus mutations", &corpus_total);
	tally_print("Manifest.json and layout cases", &manifest_total);
	tally_print("tests/regress", &regress_total);
	struct tally all = fixtures_total;
	tally_add(&all, &corpus_total);
	tally_add(&all, &manifest_total);
	tally_add(&all, &regress_total);
	tally_print(UNDER_ASAN ? "all hostile cases (ASan build)" : "all hostile cases", &all);
	/* the target counts the fixture mutations alone, so it holds without ../shared */
	assert_true(total_cases(&fixtures_total) >= MIN_CASES);
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
		cmocka_unit_test(test_resources),
		cmocka_unit_test(test_mutate_models),
		cmocka_unit_test(test_mutate_packages),
		cmocka_unit_test(test_mutate_corpus),
		cmocka_unit_test(test_manifest),
		cmocka_unit_test(test_regress),
		cmocka_unit_test(test_totals),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
