/* SPDX-License-Identifier: MIT */
/* test_report.c: what the report sinks share (report.c, report_graph.c): the
 * escaping of untrusted text for each format (ali_put_esc), the streaming JSON
 * writer against json-c's output (ali_jw), the choice of a sink
 * by file extension, and the collapsed dataflow graph. The sinks' whole output
 * is covered by the golden tests, tests/report_formats.sh and
 * tests/report_browser.sh. */
#include "testutil.h"

#include "report.h"

#include <json-c/json.h>
#include <stdlib.h>

/* ali_put_esc(s, esc, max) into a string the test frees */
static char *esc(const char *s, enum al_esc e, size_t max, size_t *chars)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	size_t n = ali_put_esc(f, s, e, max);
	if (chars)
		*chars = n;
	fclose(f);
	return buf;
}

static void expect(const char *s, enum al_esc e, size_t max, const char *want)
{
	char *got = esc(s, e, max, NULL);
	if (strcmp(got, want) != 0) {
		print_error("ali_put_esc(\"%s\", %d, %zu) = \"%s\", want \"%s\"\n", s, (int)e, max, got, want);
		free(got);
		fail();
	}
	free(got);
}

static void test_escape_html(void **state)
{
	(void)state;
	expect("<script>alert(\"x\")</script>", AL_ESC_HTML, 0,
	       "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
	expect("a'b&c", AL_ESC_HTML, 0, "a&#39;b&amp;c");
	expect("&amp;", AL_ESC_HTML, 0, "&amp;amp;");
	expect("plain name_1.2", AL_ESC_HTML, 0, "plain name_1.2");
	expect(NULL, AL_ESC_HTML, 0, "");
}

static void test_escape_markdown(void **state)
{
	(void)state;
	expect("a|b *c* [d](e) @f #1 `g`", AL_ESC_MD, 0,
	       "a\\|b \\*c\\* \\[d\\](e) \\@f \\#1 \\`g\\`");
	expect("a\\b<c>", AL_ESC_MD, 0, "a\\\\b\\<c>");
	/* reads as text: no escape where no markup can start (issue 29) */
	expect("kernel 15x15 > 13 (ANE: 1, 2 or 4); x.y-z/w", AL_ESC_MD, 0,
	       "kernel 15x15 > 13 (ANE: 1, 2 or 4); x.y-z/w");
	expect("lstm_out_1 _a_ b_", AL_ESC_MD, 0, "lstm_out_1 \\_a\\_ b\\_");
	expect("see http://x www.y.z $1", AL_ESC_MD, 0, "see http\\://x www\\.y.z \\$1");
	expect("x\ny", AL_ESC_MD, 0, "x\\\\x0ay"); /* shown as \x0a, its backslash escaped */
	expect("caf\xc3\xa9", AL_ESC_MD, 0, "caf\xc3\xa9");
}

static void test_escape_dot(void **state)
{
	(void)state;
	expect("\"}; digraph x {", AL_ESC_DOT, 0, "\\\"}; digraph x {");
	expect("a\\N", AL_ESC_DOT, 0, "a\\\\N");
	expect("t\tab", AL_ESC_DOT, 0, "t\\\\x09ab");
}

static void test_escape_controls_and_utf8(void **state)
{
	(void)state;
	/* control bytes, DEL and C1 shown; invalid UTF-8 (a stray continuation, an
	 * overlong '/', a surrogate, a truncated sequence) one U+FFFD per byte */
	expect("a\x01\x1b\x7f" "b", AL_ESC_TEXT, 0, "a\\x01\\x1b\\x7fb");
	expect("\xc2\x85", AL_ESC_HTML, 0, "\\x85");
	expect("\x80", AL_ESC_HTML, 0, "\xef\xbf\xbd");
	expect("\xc0\xaf", AL_ESC_HTML, 0, "\xef\xbf\xbd\xef\xbf\xbd");
	expect("\xed\xa0\x80", AL_ESC_TEXT, 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	expect("ab\xe2\x82", AL_ESC_TEXT, 0, "ab\xef\xbf\xbd\xef\xbf\xbd");
	expect("\xf0\x9f\x98\x80", AL_ESC_HTML, 0, "\xf0\x9f\x98\x80"); /* U+1F600 is fine */
	/* bidirectional overrides are shown, not obeyed */
	expect("abc\xe2\x80\xae" "def", AL_ESC_HTML, 0, "abc\\u202edef");
	expect("\xe2\x81\xa6x", AL_ESC_TEXT, 0, "\\u2066x");
}

static void test_escape_cut(void **state)
{
	(void)state;
	size_t n;
	char *s = esc("abcdefgh", AL_ESC_HTML, 5, &n);
	assert_string_equal(s, "abcd\xe2\x80\xa6");
	assert_int_equal(n, 5);
	free(s);
	expect("abcde", AL_ESC_HTML, 5, "abcde");       /* fits exactly */
	expect("abcdef", AL_ESC_HTML, 5, "abcd\xe2\x80\xa6");
	expect("a<<<<<", AL_ESC_HTML, 3, "a&lt;\xe2\x80\xa6"); /* counted before escaping */
	expect("a\x01\x01\x01", AL_ESC_TEXT, 6, "a\\x01\xe2\x80\xa6"); /* "\\x01" is 4 wide */
	expect("\xc3\xa9\xc3\xa9\xc3\xa9", AL_ESC_TEXT, 2, "\xc3\xa9\xe2\x80\xa6"); /* never mid-sequence */
}

/* ---- ali_jw: the bytes json-c writes for the same tree */

/* Writes the same document into w and as a json-c tree: containers empty and
 * not, nested, every kind of scalar, and strings with every byte value, valid
 * and invalid UTF-8, and each escape. */
static json_object *jw_doc(struct ali_jw *w)
{
	json_object *root = json_object_new_object();
	ali_jw_object(w, NULL);
	static const char *const strs[] = {
		"plain", "", "quote\" back\\slash /slash", "\b\f\n\r\t", "\x01\x1f\x7f",
		"caf\xc3\xa9 \xe2\x80\xae \xf0\x9f\x98\x80", "bad \xff \xc3 \xe2\x80 \xed\xa0\x80 \xf4\x90\x80\x80 end",
		"\xc0\xaf \xe0\x80\xaf \xf0\x80\x80\xaf", "<script>&amp;</script>",
	};
	json_object *a = json_object_new_array();
	ali_jw_array(w, "strings");
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
		json_object_array_add(a, ali_json_string(strs[i]));
		ali_jw_str(w, NULL, strs[i]);
	}
	char all[256];
	for (int c = 1; c < 256; c++)
		all[c - 1] = (char)c;
	all[255] = 0;
	json_object_array_add(a, ali_json_string(all));
	ali_jw_str(w, NULL, all);
	for (int c = 1; c < 256; c++) { /* each byte alone, and before a continuation byte */
		char one[3] = {(char)c, 0, 0}, two[3] = {(char)c, (char)0xa9, 0};
		json_object_array_add(a, ali_json_string(one));
		ali_jw_str(w, NULL, one);
		json_object_array_add(a, ali_json_string(two));
		ali_jw_str(w, NULL, two);
	}
	ali_jw_end(w);
	json_object_object_add(root, "strings", a);
	json_object_object_add(root, "key \"\\\n", ali_json_string("v"));
	ali_jw_str(w, "key \"\\\n", "v");
	json_object *ints = json_object_new_array();
	ali_jw_array(w, "ints");
	static const int64_t iv[] = {0, 1, -1, 9, 10, 12345678901234LL, INT64_MAX, INT64_MIN};
	for (size_t i = 0; i < sizeof iv / sizeof iv[0]; i++) {
		json_object_array_add(ints, json_object_new_int64(iv[i]));
		ali_jw_int(w, NULL, iv[i]);
	}
	ali_jw_end(w);
	json_object_object_add(root, "ints", ints);
	json_object_object_add(root, "t", json_object_new_boolean(1));
	ali_jw_bool(w, "t", true);
	json_object_object_add(root, "f", json_object_new_boolean(0));
	ali_jw_bool(w, "f", false);
	json_object_object_add(root, "n", NULL);
	ali_jw_null(w, "n");
	json_object_object_add(root, "s_null", NULL);
	ali_jw_str(w, "s_null", NULL);
	json_object_object_add(root, "share", json_object_new_double_s(0.25, "0.2500"));
	ali_jw_raw(w, "share", "0.2500");
	json_object_object_add(root, "empty_obj", json_object_new_object());
	ali_jw_object(w, "empty_obj");
	ali_jw_end(w);
	json_object_object_add(root, "empty_arr", json_object_new_array());
	ali_jw_array(w, "empty_arr");
	ali_jw_end(w);
	/* nested: arrays of arrays and objects, empty ones among them */
	json_object *outer = json_object_new_array();
	ali_jw_array(w, "nested");
	for (int i = 0; i < 3; i++) {
		json_object *inner = json_object_new_array(), *o = json_object_new_object();
		ali_jw_array(w, NULL);
		for (int j = 0; j < i; j++) {
			json_object_array_add(inner, json_object_new_int(j));
			ali_jw_int(w, NULL, j);
		}
		json_object_array_add(inner, NULL);
		ali_jw_null(w, NULL);
		ali_jw_end(w);
		json_object_array_add(outer, inner);
		ali_jw_object(w, NULL);
		if (i) {
			json_object_object_add(o, "deep", json_object_new_array());
			ali_jw_array(w, "deep");
			ali_jw_end(w);
		}
		ali_jw_end(w);
		json_object_array_add(outer, o);
	}
	ali_jw_end(w);
	json_object_object_add(root, "nested", outer);
	/* a json-c subtree written into the stream: doubles in json-c's format */
	json_object *sub = json_object_new_object();
	json_object_object_add(sub, "pi", json_object_new_double(3.14159));
	json_object_object_add(sub, "whole", json_object_new_double(2.0));
	json_object_object_add(sub, "list", json_object_new_array());
	json_object_object_add(sub, "name", ali_json_string("x\x01\xff"));
	json_object_object_add(root, "tree", json_object_get(sub));
	ali_jw_tree(w, "tree", sub);
	json_object_put(sub);
	ali_jw_end(w);
	return root;
}

static void test_json_writer_matches_json_c(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	struct ali_jw w;
	ali_jw_init(&w, f);
	json_object *root = jw_doc(&w);
	ali_jw_finish(&w);
	fclose(f);
	const char *want = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								       JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t wl = strlen(want);
	if (len != wl + 1 || memcmp(buf, want, wl) != 0 || buf[wl] != '\n') {
		size_t i = 0;
		while (i < len && i < wl && buf[i] == want[i])
			i++;
		print_error("ali_jw differs from json-c at byte %zu of %zu/%zu:\n got ...%.60s\nwant ...%.60s\n", i,
			    len, wl, buf + (i > 20 ? i - 20 : 0), want + (i > 20 ? i - 20 : 0));
		free(buf);
		json_object_put(root);
		fail();
	}
	free(buf);
	json_object_put(root);
}

/* Elements written apart (ali_jw_init_elements into a temporary file) and
 * spliced into an array three containers deep: json-c's bytes for the whole tree,
 * with elements (objects, arrays, scalars) and with none. */
static void jw_splice_case(int n_elements)
{
	json_object *root = json_object_new_object(), *runs = json_object_new_array();
	json_object *run = json_object_new_object(), *results = json_object_new_array();
	FILE *part = tmpfile();
	assert_non_null(part);
	struct ali_jw pw;
	ali_jw_init_elements(&pw, part, 4);
	for (int i = 0; i < n_elements; i++) {
		json_object *e = json_object_new_object(), *ids = json_object_new_array();
		json_object_object_add(e, "ruleId", ali_json_string(i % 2 ? "ANE008" : "a \"quoted\"\n\xff name"));
		json_object_array_add(ids, json_object_new_int(i));
		json_object_object_add(e, "ids", ids);
		json_object_object_add(e, "empty", json_object_new_array());
		ali_jw_tree(&pw, NULL, e);
		json_object_array_add(results, e);
		if (i == 1) {
			ali_jw_int(&pw, NULL, 42);
			json_object_array_add(results, json_object_new_int(42));
		}
	}
	bool any = ali_jw_end_elements(&pw);
	assert_int_equal(any, n_elements > 0);
	json_object_object_add(run, "results", results);
	json_object_object_add(run, "after", ali_json_string("x"));
	json_object_array_add(runs, run);
	json_object_object_add(root, "runs", runs);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	struct ali_jw w;
	ali_jw_init(&w, f);
	ali_jw_object(&w, NULL);
	ali_jw_array(&w, "runs");
	ali_jw_object(&w, NULL);
	ali_jw_array(&w, "results");
	assert_true(ali_jw_splice(&w, part, any));
	ali_jw_end(&w);
	ali_jw_str(&w, "after", "x");
	ali_jw_end(&w);
	ali_jw_end(&w);
	ali_jw_end(&w);
	ali_jw_finish(&w);
	fclose(f);
	fclose(part);
	const char *want = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								       JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t wl = strlen(want);
	if (len != wl + 1 || memcmp(buf, want, wl) != 0)
		print_error("spliced (%d elements):\n%s\nwant:\n%s\n", n_elements, buf, want);
	assert_true(len == wl + 1 && memcmp(buf, want, wl) == 0);
	free(buf);
	json_object_put(root);
}

static void test_json_writer_splice(void **state)
{
	(void)state;
	jw_splice_case(0);
	jw_splice_case(1);
	jw_splice_case(3);
}

/* A document bigger than the writer's buffer, and a value bigger than it. */
static void test_json_writer_large(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	struct ali_jw w;
	ali_jw_init(&w, f);
	json_object *root = json_object_new_array();
	ali_jw_array(&w, NULL);
	size_t big_n = 200000;
	char *big = malloc(big_n + 1);
	assert_non_null(big);
	for (size_t i = 0; i < big_n; i++)
		big[i] = "ab\"\n\xc3\xa9"[i % 6];
	big[big_n] = 0;
	for (int i = 0; i < 20000; i++) {
		json_object_array_add(root, json_object_new_int(i));
		ali_jw_int(&w, NULL, i);
	}
	json_object_array_add(root, ali_json_string(big));
	ali_jw_str(&w, NULL, big);
	ali_jw_end(&w);
	ali_jw_finish(&w);
	fclose(f);
	const char *want = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								       JSON_C_TO_STRING_NOSLASHESCAPE);
	assert_int_equal(len, strlen(want) + 1);
	assert_memory_equal(buf, want, len - 1);
	free(big);
	free(buf);
	json_object_put(root);
}

static void test_sink_by_extension(void **state)
{
	(void)state;
	static const struct {
		const char *path, *sink;
	} cases[] = {
		{"r.html", "html"}, {"dir.x/r.HTM", "html"}, {"a.sarif", "sarif"}, {"a.md", "markdown"},
		{"a.markdown", "markdown"}, {"g.dot", "dot"}, {"g.gv", "dot"}, {"x.json", "json"},
		{"x.txt", "text"}, {"x.pdf", NULL}, {"dir.html/file", NULL}, {"noext", NULL}, {"x.", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct al_sink *s = al_sink_by_extension(cases[i].path);
		if (cases[i].sink) {
			assert_non_null(s);
			assert_string_equal(s->name, cases[i].sink);
		} else {
			assert_null(s);
		}
	}
	/* every report sink writes check and plan; none has info */
	static const char *const reports[] = {"html", "sarif", "markdown", "dot"};
	for (int i = 0; i < 4; i++) {
		const struct al_sink *s = al_sink_by_name(reports[i]);
		assert_non_null(s);
		assert_non_null(s->check);
		assert_non_null(s->plan);
		assert_null(s->info);
	}
}

/* plan_branches: a1 u1 a2 u2 a3 join, two branches from x; the graph has an
 * edge per read, in `to` order, and every row is drawn */
static void test_dag(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(fixture("crafted/plan_branches.mlmodel"), &m, d), AL_OK);
	assert_int_equal(al_model_check(m, NULL, d), AL_OK);
	const struct al_plan *p = NULL;
	assert_int_equal(al_model_plan(m, 0, NULL, &p, d), AL_OK);
	struct al_dag g;
	struct al_view v = {.s = al_model_get(m, 0), .plan = p};
	assert_true(ali_dag_build(&v, &g));
	assert_int_equal(g.n_rows, 6);
	assert_int_equal(g.n, 6);
	static const uint32_t want[][2] = {{0, 2}, {1, 3}, {2, 4}, {4, 5}, {3, 5}};
	assert_int_equal(g.n_edges, 5);
	for (uint32_t e = 0; e < g.n_edges; e++) {
		assert_int_equal(g.edges[e].from, want[e][0]);
		assert_int_equal(g.edges[e].to, want[e][1]);
	}
	for (uint32_t r = 0; r < g.n_rows; r++) {
		assert_int_equal(g.rows[r].dag, (int32_t)r);
		assert_true(g.rows[r].plan >= 0);
		assert_int_equal(ali_dag_row_of(&g, g.rows[r].node), (long)r);
	}
	assert_int_equal(ali_dag_row_of(&g, NULL), -1);
	ali_dag_free(&g);
	al_plan_free(p);
	al_model_free(m);
	al_diags_free(d);
}

/* ================================================================ sinks only read */

/* Everything a sink writes for these items, as one string the test frees. */
static char *sink_output(const struct al_sink *sink, bool plan, const struct al_report_item *it,
			 const struct al_report_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	if (plan)
		sink->plan(f, it, 1, o);
	else
		sink->check(f, it, 1, o);
	fclose(f);
	return buf;
}

/* --target all: al_report_analyze checks the model once per target and keeps
 * each target's verdicts; then no sink checks or plans it. The model is left
 * checked for a12 (not the requested target) on purpose: a sink that re-checked
 * it, even restoring "the requested check" afterwards, would move its
 * checked_target and empty its verdict arena; and the outputs, which show
 * every target, must not depend on which one the model was last checked for. */
static void test_sinks_do_not_analyse(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	struct al_report_item it = {.path = fixture("converted/upsample_x4_nearest__nn_ios13.mlmodel"),
				    .diags = d};
	assert_int_equal(al_model_open(it.path, &it.model, d), AL_OK);
	al_model *m = it.model;
	struct al_check_opts requested = {.target = al_target_find("a14")};
	struct al_check_opts a12 = {.target = al_target_find("a12")};
	struct al_plan_opts po = {0};
	struct al_report_opts o = {.check = &requested, .plan = &po, .all_targets = true, .plans = true};
	assert_int_equal(al_model_check(m, &requested, d), AL_OK);
	assert_int_equal(al_report_analyze(&it, 1, &o, d), AL_OK);
	assert_int_equal(it.status, AL_OK);
	assert_non_null(it.analysis);
	assert_ptr_equal(m->checked_target, requested.target); /* left as requested */
	/* the upsample layer: off the ANE on a12/a14, on it from a15; the views keep both */
	const struct al_node *up = &al_model_get(m, 0)->graphs[0]->nodes[1];
	const struct al_view *v12 = ali_analysis_view(it.analysis, (size_t)ali_target_index(a12.target), 0);
	const struct al_view *v15 = ali_analysis_view(it.analysis, (size_t)ali_target_index(al_target_find("a15")), 0);
	assert_non_null(v12);
	assert_non_null(v15);
	assert_false(ali_view_verdict(v12, up)->ane);
	assert_true(ali_view_verdict(v15, up)->ane);
	assert_non_null(v12->plan);
	assert_ptr_equal(v15->plan->target, v15->target);

	static const char *const names[] = {"text", "json", "html", "sarif", "markdown", "dot"};
	char *out[2][6][2] = {{{0}}};
	for (int state_i = 0; state_i < 2; state_i++) {
		/* state 0: the model as the caller checked it; state 1: checked for a12 */
		if (state_i == 1)
			assert_int_equal(al_model_check(m, &a12, d), AL_OK);
		const struct al_target *checked = m->checked_target;
		const void *arena_head = m->verdicts.head;
		size_t arena_used = m->verdicts.used;
		const struct al_rule *const *rules = up->verdict.rules;
		for (int k = 0; k < 6; k++)
			for (int plan = 0; plan < 2; plan++) {
				const struct al_sink *sink = al_sink_by_name(names[k]);
				assert_non_null(sink);
				out[state_i][k][plan] = sink_output(sink, plan, &it, &o);
				assert_ptr_equal(m->checked_target, checked);
				assert_ptr_equal(m->verdicts.head, arena_head);
				assert_int_equal(m->verdicts.used, arena_used);
				assert_ptr_equal(up->verdict.rules, rules);
			}
	}
	for (int k = 0; k < 6; k++)
		for (int plan = 0; plan < 2; plan++) {
			/* the JSON check document lists the model's own verdicts, then the matrix */
			if (!(k == 1 && !plan))
				assert_string_equal(out[0][k][plan], out[1][k][plan]);
			free(out[0][k][plan]);
			free(out[1][k][plan]);
		}
	/* analysing again replaces the analysis (asan: the first is freed) */
	assert_int_equal(al_report_analyze(&it, 1, &o, d), AL_OK);
	assert_true(al_analysis_fails(it.analysis, AL_FAIL_ANY));
	assert_int_equal(al_diags_errors(d), 0);
	al_analysis_free(it.analysis);
	al_model_free(m);
	al_diags_free(d);
}

/* --target all on a pipeline: its root has no graph of its own (fuzz_mlmodel
 * found UBSan's qsort(NULL, 0) in index_sub); every stage is viewed per target. */
static void test_analyse_pipeline_all_targets(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	struct al_report_item it = {.path = fixture("crafted/enum_pipeline.mlmodel"), .diags = d};
	assert_int_equal(al_model_open(it.path, &it.model, d), AL_OK);
	assert_int_equal(al_model_check(it.model, NULL, d), AL_OK);
	struct al_report_opts o = {.all_targets = true, .plans = true};
	assert_int_equal(al_report_analyze(&it, 1, &o, d), AL_OK);
	assert_true(al_model_count(it.model) > 1);
	assert_int_equal(al_model_get(it.model, 0)->n_graphs, 0);
	for (size_t t = 0; t < al_targets_count(); t++)
		for (size_t k = 0; k < al_model_count(it.model); k++) {
			const struct al_view *v = ali_analysis_view(it.analysis, t, k);
			assert_non_null(v);
			assert_ptr_equal(v->s, al_model_get(it.model, k));
			assert_ptr_equal(v->target, al_target_at(t));
			assert_non_null(v->plan);
		}
	free(sink_output(al_sink_by_name("html"), false, &it, &o));
	al_analysis_free(it.analysis);
	al_model_free(it.model);
	al_diags_free(d);
}

/* The deployment range's runs (ali_range_groups): equal neighbours merge, a
 * change of unit, verdict, own unit or rule starts a run; cap bounds the writes,
 * not the count. */
static void test_range_groups(void **state)
{
	(void)state;
	const struct al_rule *r55 = al_rule_find("ANE055");
	struct ali_range_cell c[5] = {
		{AL_UNIT_CPU, AL_VERDICT_NOT_ANE, AL_UNIT_GPU_OR_CPU, r55},
		{AL_UNIT_CPU, AL_VERDICT_NOT_ANE, AL_UNIT_GPU_OR_CPU, r55},
		{AL_UNIT_CPU, AL_VERDICT_UNCERTAIN, AL_UNIT_ANE, NULL},
		{AL_UNIT_ANE, AL_VERDICT_ANE, AL_UNIT_ANE, NULL},
		{AL_UNIT_ANE, AL_VERDICT_ANE, AL_UNIT_ANE, NULL},
	};
	struct ali_range_group g[8];
	assert_int_equal(ali_range_groups(c, 1, 5, g, 8), 3);
	assert_int_equal(g[0].lo, 1);
	assert_int_equal(g[0].hi, 2);
	assert_ptr_equal(g[0].rule, r55);
	assert_int_equal(g[1].lo, 3);
	assert_int_equal(g[1].hi, 3);
	assert_int_equal(g[1].verdict, AL_VERDICT_UNCERTAIN);
	assert_int_equal(g[2].lo, 4);
	assert_int_equal(g[2].hi, 5);
	assert_int_equal(g[2].unit, AL_UNIT_ANE);
	struct ali_range_group one[1] = {{0}};
	assert_int_equal(ali_range_groups(c, 1, 5, one, 1), 3); /* counted, one written */
	assert_int_equal(one[0].hi, 2);
	assert_int_equal(ali_range_groups(NULL, 1, 5, g, 8), 0);
	char name[32];
	ali_range_name(name, sizeof name, 2, 3, false);
	assert_string_equal(name, "iOS 15-16");
	ali_range_name(name, sizeof name, 2, 3, true);
	assert_string_equal(name, "ios15..ios16");
	ali_range_name(name, sizeof name, 1, 1, true);
	assert_string_equal(name, "ios14");
}

static const struct al_node *find_node(const struct al_submodel *s, const char *name)
{
	for (uint32_t g = 0; g < s->n_graphs; g++)
		for (uint32_t i = 0; i < s->graphs[g]->n_nodes; i++)
			if (strcmp(s->graphs[g]->nodes[i].name, name) == 0)
				return &s->graphs[g]->nodes[i];
	return NULL;
}

/* al_report_analyze with deployment_range: every release from the model's
 * minimum (spec 5: iOS 14) to the newest, the stride-4 pool moved by ANE055 on
 * iOS 14 only, and the model left checked for the newest release as asked; with
 * a release asked (--os) there is no range. */
static void test_analyse_range(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	struct al_report_item it = {.path = fixture("crafted/nn_rules.mlmodel"), .diags = d};
	assert_int_equal(al_model_open(it.path, &it.model, d), AL_OK);
	assert_int_equal(al_model_check(it.model, NULL, d), AL_OK);
	struct al_check_opts co = {0};
	struct al_report_opts o = {.check = &co, .deployment_range = true};
	assert_int_equal(al_report_analyze(&it, 1, &o, d), AL_OK);
	int lo, hi;
	assert_true(ali_range_of(&it, &lo, &hi));
	assert_ptr_equal(al_release_at((size_t)lo), al_release_find("ios14"));
	assert_ptr_equal(al_release_at((size_t)hi), al_release_default());
	const struct al_node *pool = find_node(al_model_get(it.model, 0), "pool_s4");
	assert_non_null(pool);
	unsigned flags;
	const struct ali_range_cell *cells = ali_range_node(&it, 0, pool, &flags);
	assert_non_null(cells);
	assert_true(flags & ALI_RANGE_OWN_VARIES);
	assert_ptr_equal(cells[0].rule, al_rule_find("ANE055"));
	assert_null(cells[hi - lo].rule);
	assert_int_equal(pool->verdict.n_rules, 0); /* left as checked: the newest release */
	uint32_t own;
	assert_true(ali_range_varying(&it, 0, &own) >= own);
	assert_true(own >= 1);
	/* a release asked: no range */
	co.os = al_release_find("ios14");
	assert_int_equal(al_model_check(it.model, &co, d), AL_OK);
	assert_int_equal(al_report_analyze(&it, 1, &o, d), AL_OK);
	assert_false(ali_range_of(&it, &lo, &hi));
	assert_null(ali_range_node(&it, 0, pool, &flags));
	assert_int_equal(ali_range_varying(&it, 0, NULL), 0);
	al_analysis_free(it.analysis);
	al_model_free(it.model);
	al_diags_free(d);
}

/* A failure while analysing is the item's status and an error in d, and the
 * sinks show it where the plan would be; a sink given a model nobody analysed
 * says so instead of planning it. */
static void test_analyse_failure(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	struct al_report_item it = {.path = fixture("crafted/plan_branches.mlmodel"), .diags = d};
	assert_int_equal(al_model_open(it.path, &it.model, d), AL_OK);
	const struct al_sink *text = al_sink_by_name("text");
	struct al_report_opts o = {.plans = true};
	char *shown = sink_output(text, true, &it, &o);
	assert_non_null(strstr(shown, "plan failed: not analysed (al_report_analyze)"));
	free(shown);
	/* not checked yet, and for a target that is not a row of the table */
	static const struct al_target fake = {.id = "fake"};
	struct al_check_opts co = {.target = &fake};
	o.check = &co;
	assert_int_equal(al_report_analyze(&it, 1, &o, d), AL_E_INVALID_ARG);
	assert_int_equal(it.status, AL_E_INVALID_ARG);
	assert_true(al_diags_errors(d) >= 1);
	shown = sink_output(text, true, &it, &o);
	assert_non_null(strstr(shown, "plan failed: invalid argument"));
	free(shown);
	al_analysis_free(it.analysis);
	al_model_free(it.model);
	al_diags_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_html),
		cmocka_unit_test(test_escape_markdown),
		cmocka_unit_test(test_escape_dot),
		cmocka_unit_test(test_escape_controls_and_utf8),
		cmocka_unit_test(test_escape_cut),
		cmocka_unit_test(test_json_writer_matches_json_c),
		cmocka_unit_test(test_json_writer_large),
		cmocka_unit_test(test_json_writer_splice),
		cmocka_unit_test(test_sink_by_extension),
		cmocka_unit_test(test_dag),
		cmocka_unit_test(test_sinks_do_not_analyse),
		cmocka_unit_test(test_analyse_pipeline_all_targets),
		cmocka_unit_test(test_analyse_failure),
		cmocka_unit_test(test_range_groups),
		cmocka_unit_test(test_analyse_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
