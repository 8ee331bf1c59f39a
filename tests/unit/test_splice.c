/* SPDX-License-Identifier: MIT */
/* test_splice.c: the protobuf splicing writer (src/pbsplice.c) and the surgery
 * plan built on it (src/surgery.c). */
#include "testutil.h"

#include "analysis.h"
#include "pbsplice.h"

#include <dirent.h>

/* A small nested message: root { 1: { 2: "abc", 3: { 4: 7 } }, 5: "zz" }. */
static void build_nested(struct al_buf *root)
{
	struct al_buf inner = {0}, mid = {0};
	ali_buf_uint(&inner, 4, 7);
	ali_buf_str(&mid, 2, "abc");
	ali_buf_len(&mid, 3, inner.p, inner.n);
	ali_buf_len(root, 1, mid.p, mid.n);
	ali_buf_str(root, 5, "zz");
	ali_buf_free(&inner);
	ali_buf_free(&mid);
}

static al_span sub(al_span m, uint32_t num)
{
	al_span s = {0};
	assert_true(pb_get_bytes(m, num, &s));
	return s;
}

static void test_no_edits_identical(void **state)
{
	(void)state;
	struct al_buf b = {0};
	build_nested(&b);
	struct al_splice *s = ali_splice_new((al_span){b.p, b.n});
	uint8_t *out;
	size_t n;
	assert_int_equal(ali_splice_to_buffer(s, &out, &n), AL_OK);
	assert_int_equal(n, b.n);
	assert_memory_equal(out, b.p, n);
	free(out);
	ali_splice_free(s);
	ali_buf_free(&b);
}

static void test_replace_grows_lengths(void **state)
{
	(void)state;
	struct al_buf b = {0};
	build_nested(&b);
	al_span root = {b.p, b.n}, mid = sub(root, 1), inner = sub(mid, 3);
	struct al_splice *s = ali_splice_new(root);
	/* inner { 4: 7 } -> inner { 4: 7, 6: <200 bytes> }: lengths grow past one varint byte */
	uint8_t big[200];
	memset(big, 'x', sizeof big);
	struct al_buf add = {0};
	ali_buf_len(&add, 6, big, sizeof big);
	assert_int_equal(ali_splice_replace(s, inner, inner.p + inner.n, 0, add.p, add.n), AL_OK);
	uint8_t *out;
	size_t n;
	assert_int_equal(ali_splice_to_buffer(s, &out, &n), AL_OK);
	al_span r = {out, n}, m2 = sub(r, 1), i2 = sub(m2, 3), f6 = sub(i2, 6);
	assert_int_equal(f6.n, 200);
	uint64_t v;
	assert_true(pb_get_varint(i2, 4, &v));
	assert_int_equal(v, 7);
	al_span zz = sub(r, 5);
	assert_int_equal(zz.n, 2);
	al_span abc = sub(m2, 2);
	assert_memory_equal(abc.p, "abc", 3);
	free(out);
	ali_splice_free(s);
	ali_buf_free(&add);
	ali_buf_free(&b);
}

static void test_insert_delete(void **state)
{
	(void)state;
	struct al_buf b = {0};
	build_nested(&b);
	al_span root = {b.p, b.n}, mid = sub(root, 1), inner = sub(mid, 3);
	struct al_splice *s = ali_splice_new(root);
	struct al_buf ins = {0};
	ali_buf_str(&ins, 9, "new");
	assert_int_equal(ali_splice_insert_before(s, inner, ins.p, ins.n), AL_OK);
	assert_int_equal(ali_splice_delete(s, sub(root, 5)), AL_OK);
	uint8_t *out;
	size_t n;
	assert_int_equal(ali_splice_to_buffer(s, &out, &n), AL_OK);
	al_span r = {out, n}, m2 = sub(r, 1);
	assert_false(pb_has(r, 5));
	al_span nw = sub(m2, 9);
	assert_memory_equal(nw.p, "new", 3);
	assert_true(pb_has(m2, 3));
	assert_int_equal(n, b.n - 4 + 5);
	free(out);
	ali_splice_free(s);
	ali_buf_free(&ins);
	ali_buf_free(&b);
}

static void test_overlap_and_bad_span_refused(void **state)
{
	(void)state;
	struct al_buf b = {0};
	build_nested(&b);
	al_span root = {b.p, b.n}, mid = sub(root, 1), inner = sub(mid, 3);
	struct al_splice *s = ali_splice_new(root);
	assert_int_equal(ali_splice_replace(s, inner, inner.p, inner.n, "\x20\x01", 2), AL_OK);
	assert_int_equal(ali_splice_delete(s, mid), AL_OK); /* deletes what the first edits */
	assert_int_equal(ali_splice_finish(s, NULL), AL_E_INVALID_ARG);
	ali_splice_free(s);
	s = ali_splice_new(root);
	uint8_t other[4] = {0};
	assert_int_equal(ali_splice_replace(s, (al_span){other, 4}, other, 1, "a", 1), AL_E_INVALID_ARG);
	/* a span inside a string is not an enclosing message */
	al_span abc = sub(mid, 2);
	assert_int_not_equal(ali_splice_replace(s, (al_span){abc.p + 1, 1}, abc.p + 1, 1, "q", 1), AL_OK);
	ali_splice_free(s);
	ali_buf_free(&b);
}

/* Every .mlmodel under dir: no edits -> identical; each layer payload replaced
 * by itself -> identical; a grown layer name -> re-loads with the new name. */
static int roundtrip_dir(const char *dir)
{
	DIR *dp = opendir(dir);
	if (!dp)
		return 0;
	int count = 0;
	struct dirent *e;
	while ((e = readdir(dp))) {
		size_t l = strlen(e->d_name);
		if (l < 9 || strcmp(e->d_name + l - 8, ".mlmodel") != 0)
			continue;
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		al_diags *d = al_diags_new();
		al_model *m = NULL;
		if (al_model_open(path, &m, d) != AL_OK) {
			al_diags_free(d);
			continue; /* hostile fixtures */
		}
		al_span root = m->maps[0].s;
		struct al_splice *s = ali_splice_new(root);
		uint8_t *out;
		size_t n;
		assert_int_equal(ali_splice_to_buffer(s, &out, &n), AL_OK);
		assert_int_equal(n, root.n);
		assert_memory_equal(out, root.p, n);
		free(out);
		ali_splice_free(s);
		/* each top-level layer replaced by its own bytes */
		s = ali_splice_new(root);
		const struct al_node *first = NULL;
		for (size_t i = 0; i < al_model_count(m); i++) {
			const struct al_submodel *sm = al_model_get(m, i);
			for (uint32_t g = 0; g < sm->n_graphs; g++)
				for (uint32_t k = 0; k < sm->graphs[g]->n_nodes; k++) {
					const struct al_node *nd = &sm->graphs[g]->nodes[k];
					al_span msg = al_src(nd)->msg;
					if (!msg.p || sm->world != AL_WORLD_NN || sm->graphs[g]->depth)
						continue;
					assert_int_equal(ali_splice_replace(s, msg, msg.p, msg.n, msg.p, msg.n), AL_OK);
					if (!first)
						first = nd;
				}
		}
		assert_int_equal(ali_splice_to_buffer(s, &out, &n), AL_OK);
		assert_int_equal(n, root.n);
		assert_memory_equal(out, root.p, n);
		free(out);
		ali_splice_free(s);
		if (first) { /* rename the first layer to a 300-byte name */
			s = ali_splice_new(root);
			al_span msg = al_src(first)->msg, nm;
			assert_true(pb_get_bytes(msg, 1, &nm));
			char name[301];
			memset(name, 'n', 300);
			name[300] = 0;
			assert_int_equal(ali_splice_replace(s, nm, nm.p, nm.n, name, 300), AL_OK);
			assert_int_equal(ali_splice_to_buffer(s, &out, &n), AL_OK);
			al_model *m2 = NULL;
			al_diags *d2 = al_diags_new();
			enum al_status st2 = al_model_open_buffer(out, n, NULL, 0, "renamed", &m2, d2);
			if (st2 != AL_OK && al_diags_count(d2))
				fprintf(stderr, "%s: %s\n", path, al_diags_get(d2, 0)->msg);
			assert_int_equal(st2, AL_OK);
			const struct al_submodel *s2 = al_model_get(m2, 0);
			bool found = false;
			for (uint32_t g = 0; g < s2->n_graphs && !found; g++)
				for (uint32_t k = 0; k < s2->graphs[g]->n_nodes; k++)
					found |= strcmp(s2->graphs[g]->nodes[k].name, name) == 0;
			for (size_t q = 1; q < al_model_count(m2) && !found; q++) {
				const struct al_submodel *s3 = al_model_get(m2, q);
				for (uint32_t g = 0; g < s3->n_graphs && !found; g++)
					for (uint32_t k = 0; k < s3->graphs[g]->n_nodes; k++)
						found |= strcmp(s3->graphs[g]->nodes[k].name, name) == 0;
			}
			if (!found)
				fprintf(stderr, "%s: renamed layer not found\n", path);
			assert_true(found);
			al_model_free(m2);
			al_diags_free(d2);
			free(out);
			ali_splice_free(s);
		}
		al_model_free(m);
		al_diags_free(d);
		count++;
	}
	closedir(dp);
	return count;
}

static void test_roundtrip_fixtures(void **state)
{
	(void)state;
	int n = roundtrip_dir(fixture("converted")) + roundtrip_dir(fixture("crafted"));
	assert_true(n > 10);
}

static void test_roundtrip_corpus(void **state)
{
	(void)state;
	const char *c = corpus_file("converted");
	if (!c)
		skip();
	assert_true(roundtrip_dir(c) > 0);
}

/* The plan on a model that needs a rewrite, and the written bytes re-load. */
static void test_surgery_upsample(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(fixture("converted/upsample_x4_nearest__nn_ios13.mlmodel"), &m, d),
			 AL_OK);
	al_surgery *sg = NULL;
	assert_int_equal(al_surgery_plan(m, NULL, &sg, d), AL_OK);
	assert_int_equal(al_surgery_applied(sg), 1);
	const struct al_rewrite *r = al_surgery_get(sg, 0);
	assert_string_equal(r->pass->name, "upsample-x2-chain");
	assert_int_equal(r->n_layers, 2);
	uint8_t *out;
	size_t n;
	assert_int_equal(al_surgery_bytes(sg, &out, &n, d), AL_OK);
	al_model *m2 = NULL;
	assert_int_equal(al_model_open_buffer(out, n, NULL, 0, "x", &m2, d), AL_OK);
	assert_int_equal(al_model_check(m2, NULL, d), AL_OK);
	const struct al_graph *g = al_model_get(m2, 0)->graphs[0];
	assert_int_equal(g->n_nodes, 3);
	for (uint32_t k = 0; k < g->n_nodes; k++)
		assert_true(g->nodes[k].verdict.ane);
	al_model_free(m2);
	free(out);
	al_surgery_free(sg);
	al_model_free(m);
	al_diags_free(d);
}

/* The library's model-level fix (al_surgery_opts.shapes, what fix --shape /
 * --enumerate pass): a rewrite marked model_level with no layers, the output's
 * input fixed (or enumerated), and a request the input cannot take refused with
 * its reason. */
static void test_surgery_input_shape(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(fixture("crafted/fix_shape.mlmodel"), &m, d), AL_OK);
	assert_int_equal(al_model_get(m, 0)->inputs[0].flex, AL_FLEX_RANGE);
	static const int64_t fixed[] = {1, 16, 128, 64}, outside[] = {1, 16, 1024, 64},
			     shapes[] = {1, 16, 64, 64, 1, 16, 512, 512};
	struct al_input_shape req[] = {
		{.input = "x", .dims = fixed, .rank = 4},
		{.input = "x", .dims = outside, .rank = 4},
		{.input = "x", .dims = shapes, .rank = 4, .n_shapes = 2},
	};
	for (int i = 0; i < 3; i++) {
		struct al_surgery_opts o = {.shapes = &req[i], .n_shapes = 1};
		al_surgery *sg = NULL;
		assert_int_equal(al_surgery_plan(m, &o, &sg, d), AL_OK);
		assert_int_equal(al_surgery_count(sg), 1);
		const struct al_rewrite *r = al_surgery_get(sg, 0);
		assert_true(r->model_level);
		assert_int_equal(r->n_layers, 0);
		assert_string_equal(r->node->name, "x");
		assert_string_equal(r->pass->name, i == 2 ? "input-enumerated-shapes" : "input-fixed-shape");
		if (i == 1) {
			assert_false(r->applied);
			assert_non_null(strstr(r->why_not, "outside the input's range 64..512"));
			assert_int_equal(al_surgery_applied(sg), 0);
			al_surgery_free(sg);
			continue;
		}
		assert_true(r->applied);
		uint8_t *out;
		size_t n;
		assert_int_equal(al_surgery_bytes(sg, &out, &n, d), AL_OK);
		al_model *m2 = NULL;
		assert_int_equal(al_model_open_buffer(out, n, NULL, 0, "x", &m2, d), AL_OK);
		assert_int_equal(al_model_check(m2, NULL, d), AL_OK);
		const struct al_feature *ft = &al_model_get(m2, 0)->inputs[0];
		assert_int_equal(ft->rank, 4);
		if (i == 0) {
			assert_int_equal(ft->flex, AL_FLEX_NONE);
			assert_memory_equal(ft->shape, fixed, sizeof fixed);
		} else {
			assert_int_equal(ft->flex, AL_FLEX_ENUMERATED);
			assert_int_equal(ft->n_shapes, 2);
			assert_memory_equal(ft->flex_values, shapes, sizeof shapes);
			assert_memory_equal(ft->shape, shapes, 4 * sizeof shapes[0]); /* the first: default */
		}
		al_model_free(m2);
		free(out);
		al_surgery_free(sg);
	}
	al_model_free(m);
	al_diags_free(d);
}

static void test_pass_table(void **state)
{
	(void)state;
	assert_true(al_passes_count() >= 6);
	for (size_t i = 0; i < al_passes_count(); i++) {
		const struct al_pass *p = al_pass_at(i);
		assert_non_null(p->name);
		assert_non_null(al_rule_find(p->rule));
	}
	assert_null(al_pass_at(al_passes_count()));
	enum al_equiv e;
	assert_true(al_equiv_parse("reassociate", &e));
	assert_int_equal(e, AL_EQ_REASSOCIATE);
	assert_false(al_equiv_parse("bogus", &e));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_edits_identical),
		cmocka_unit_test(test_replace_grows_lengths),
		cmocka_unit_test(test_insert_delete),
		cmocka_unit_test(test_overlap_and_bad_span_refused),
		cmocka_unit_test(test_roundtrip_fixtures),
		cmocka_unit_test(test_roundtrip_corpus),
		cmocka_unit_test(test_surgery_upsample),
		cmocka_unit_test(test_surgery_input_shape),
		cmocka_unit_test(test_pass_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
