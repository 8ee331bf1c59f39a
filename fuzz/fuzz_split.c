/* SPDX-License-Identifier: MIT */
/* fuzz_split.c: libFuzzer harness for split (split.c): the plan, the bytes of
 * every part and of the pipeline, and the all-or-nothing writer.
 *
 * Input: the bytes of a .mlmodel (an input starting with 08, Model field 1),
 * written to a per-process directory as m.mlmodel; any other input is an ML
 * Program in fuzz_mil's framing ([u16 LE L][L bytes weight.bin][Program],
 * wrapped in Model{specificationVersion 6, mlProgram}), written as the package
 * p.mlpackage. Split copies bytes from the model's file, so it is opened with
 * al_model_open. The cut comes from input bits: the predicted segments, or
 * after one or two top-level layers / ops picked by index.
 *
 * Promises checked (anelint.h, docs/split.md):
 *   - every status agrees with the diagnostics (fuzz_common.h);
 *   - a plan has >= 2 parts, each with an input and an output, names distinct
 *     within a part's inputs and within its outputs, layer ranges in order;
 *   - every part and the pipeline load again from their bytes (with the
 *     weight image split gives) and check: anelint split refuses to write
 *     otherwise, as a bug in split;
 *   - al_split_write (parts, pipeline, or both, picked by input bits) writes
 *     all or nothing: on success each output opens from disk, on failure no
 *     output and no temporary is left in the directory.
 * The interpreter proof of `anelint split` is not run (fuzz_interp covers the
 * interpreter). FUZZ_QUICK (fuzz_common.h) skips the writer for most inputs. */
#include "fuzz_common.h"

#include <dirent.h>

static char in_path[700], out_dir[700];

/* FUZZ_STATS=1: how far the inputs got, printed at exit (fuzz/README.md). */
static unsigned long n_loaded, n_planned, n_parts_loaded, n_written;
static void print_stats(void)
{
	fprintf(stderr, "fuzz_split: %lu loaded, %lu split, %lu parts/pipelines re-loaded, %lu written\n",
		n_loaded, n_planned, n_parts_loaded, n_written);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *root = fuzz_scratch_dir();
	snprintf(out_dir, sizeof out_dir, "%s/out", root);
	FUZZ_CHECK(mkdir(out_dir, 0700) == 0);
	if (getenv("FUZZ_STATS"))
		atexit(print_stats);
	return 0;
}

/* Names of `n` tensors all distinct (n is small: a part's features). */
static void check_distinct(const struct al_split_tensor *v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		FUZZ_CHECK(v[i].name != NULL);
		fuzz_read_str(v[i].name);
		for (uint32_t k = 0; k < i && n <= 4096; k++)
			FUZZ_CHECK(strcmp(v[i].name, v[k].name) != 0);
	}
}

static bool out_dir_empty(void)
{
	DIR *d = opendir(out_dir);
	FUZZ_CHECK(d != NULL);
	struct dirent *e;
	bool empty = true;
	while ((e = readdir(d)))
		empty &= strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
	closedir(d);
	return empty;
}

static void write_and_reopen(al_splitter *s, bool pkg, unsigned seed, al_diags *d)
{
	size_t n = al_split_count(s);
	const char *ext = pkg ? "mlpackage" : "mlmodel";
	char **paths = calloc(n, sizeof *paths), pipe[800];
	FUZZ_CHECK(paths != NULL);
	for (size_t i = 0; i < n; i++) {
		paths[i] = malloc(800);
		FUZZ_CHECK(paths[i] != NULL);
		snprintf(paths[i], 800, "%s/part%zu.%s", out_dir, i + 1, ext);
	}
	snprintf(pipe, sizeof pipe, "%s/pipe.%s", out_dir, ext);
	int mode = (int)((seed >> 12) % 3); /* parts, pipeline, both */
	size_t n_paths = mode == 1 ? 0 : n;
	const char *pl = mode == 0 ? NULL : pipe;
	size_t before = al_diags_errors(d);
	enum al_status st = al_split_write(s, (const char *const *)paths, n_paths, pl, d);
	fuzz_check_diags(d);
	fuzz_check_status(st, d, before);
	if (st == AL_OK) {
		n_written++;
		for (size_t i = 0; i <= n; i++) {
			const char *p = i < n ? (i < n_paths ? paths[i] : NULL) : pl;
			if (!p)
				continue;
			al_diags *d2 = al_diags_new();
			al_model *m2 = NULL;
			FUZZ_CHECK(d2 != NULL);
			FUZZ_CHECK(al_model_open(p, &m2, d2) == AL_OK);
			al_model_free(m2);
			al_diags_free(d2);
		}
		for (size_t i = 0; i < n_paths; i++)
			fuzz_rm_tree(paths[i]);
		if (pl)
			fuzz_rm_tree(pl);
	}
	FUZZ_CHECK(out_dir_empty()); /* all or nothing, and nothing left over */
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *root = fuzz_scratch_dir();
	bool pkg = !(size && data[0] == 0x08);
	uint8_t *framed = NULL, *w = NULL;
	size_t wlen = 0, n = size;
	const uint8_t *model = data;
	if (pkg) {
		framed = fuzz_mil_frame(data, size, &w, &wlen, &n);
		model = framed;
		snprintf(in_path, sizeof in_path, "%s/p.mlpackage", root);
		fuzz_rm_tree(in_path);
		fuzz_put_package(in_path, (const uint8_t *)fuzz_manifest, sizeof fuzz_manifest - 1, model, n,
				 w, wlen);
	} else {
		snprintf(in_path, sizeof in_path, "%s/m.mlmodel", root);
		fuzz_put_file(in_path, model, n);
	}
	unsigned seed = fuzz_seed(model, n);
	al_diags *d = al_diags_new();
	FUZZ_CHECK(d != NULL);
	al_model *m = (al_model *)1;
	enum al_status st = al_model_open(in_path, &m, d);
	fuzz_check_diags(d);
	fuzz_check_status(st, d, 0);
	FUZZ_CHECK((st == AL_OK) == (m != NULL));
	if (st != AL_OK)
		goto done;
	n_loaded++;

	/* the cut: segments, or after one or two top-level layers / ops */
	const struct al_submodel *sub = al_model_get(m, 0);
	const struct al_graph *g = sub && sub->n_graphs ? sub->graphs[0] : NULL;
	const char *at[2] = {NULL, NULL};
	struct al_split_opts o = {.at = at};
	if ((seed & 3) == 0 || !g || g->n_nodes == 0) {
		o.segments = true;
	} else {
		at[0] = g->nodes[(seed >> 2) % g->n_nodes].name;
		o.n_at = 1;
		if ((seed & 3) == 3 && g->n_nodes > 2) {
			at[1] = g->nodes[(seed >> 7) % g->n_nodes].name;
			o.n_at = 2;
		}
	}
	al_splitter *s = (al_splitter *)1;
	size_t before = al_diags_errors(d);
	st = al_split_plan(m, &o, &s, d);
	fuzz_check_diags(d);
	fuzz_check_status(st, d, before);
	if (st != AL_OK) {
		FUZZ_CHECK(s == NULL);
		goto done;
	}
	FUZZ_CHECK(s != NULL);
	n_planned++;
	size_t parts = al_split_count(s);
	FUZZ_CHECK(parts >= 2);
	FUZZ_CHECK(al_split_get(s, parts) == NULL);
	uint32_t next = 0;
	for (size_t i = 0; i < parts; i++) {
		const struct al_split_part *p = al_split_get(s, i);
		FUZZ_CHECK(p != NULL && p->first == next && p->first <= p->last);
		next = p->last + 1;
		FUZZ_CHECK(p->n_inputs >= 1 && p->n_outputs >= 1);
		check_distinct(p->inputs, p->n_inputs);
		check_distinct(p->outputs, p->n_outputs);
		fuzz_read_str(p->type);
	}
	const void *sw = NULL;
	size_t swn = 0;
	al_split_weights(s, &sw, &swn);
	for (size_t i = 0; i <= parts; i++) {
		uint8_t *bytes = NULL;
		size_t nb = 0;
		before = al_diags_errors(d);
		st = al_split_bytes(s, i, &bytes, &nb, d);
		fuzz_check_diags(d);
		fuzz_check_status(st, d, before);
		if (st != AL_OK)
			continue;
		al_diags *d2 = al_diags_new();
		al_model *m2 = NULL;
		FUZZ_CHECK(d2 != NULL);
		enum al_status s2 = al_model_open_buffer(bytes, nb, sw, swn, "part.mlmodel", &m2, d2);
		if (s2 != AL_OK) { /* say why before failing */
			for (size_t k = 0; k < al_diags_count(d2); k++)
				fprintf(stderr, "part %zu: %s\n", i, al_diags_get(d2, k)->msg);
		}
		FUZZ_CHECK(s2 == AL_OK);
		FUZZ_CHECK(al_model_check(m2, NULL, d2) == AL_OK);
		n_parts_loaded++;
		al_model_free(m2);
		al_diags_free(d2);
		free(bytes);
	}
	if (fuzz_heavy())
		write_and_reopen(s, pkg, seed, d);
	al_split_free(s);
done:
	al_model_free(m);
	al_diags_free(d);
	free(framed);
	free(w);
	return 0;
}
