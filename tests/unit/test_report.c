/* test_report.c: what the report sinks share (report.c, report_graph.c): the
 * escaping of untrusted text for each format (al_put_esc), the choice of a sink
 * by file extension, and the collapsed dataflow graph. The sinks' whole output
 * is covered by the golden tests, tests/report_formats.sh and
 * tests/report_browser.sh. */
#include "testutil.h"

#include "report.h"

#include <stdlib.h>

/* al_put_esc(s, esc, max) into a string the test frees */
static char *esc(const char *s, enum al_esc e, size_t max, size_t *chars)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	size_t n = al_put_esc(f, s, e, max);
	if (chars)
		*chars = n;
	fclose(f);
	return buf;
}

static void expect(const char *s, enum al_esc e, size_t max, const char *want)
{
	char *got = esc(s, e, max, NULL);
	if (strcmp(got, want) != 0) {
		print_error("al_put_esc(\"%s\", %d, %zu) = \"%s\", want \"%s\"\n", s, (int)e, max, got, want);
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
	       "a\\|b \\*c\\* \\[d\\]\\(e\\) \\@f \\#1 \\`g\\`");
	expect("a\\b<c>", AL_ESC_MD, 0, "a\\\\b\\<c\\>");
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
	assert_true(al_dag_build(al_model_get(m, 0), p, &g));
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
		assert_int_equal(al_dag_row_of(&g, g.rows[r].node), (long)r);
	}
	assert_int_equal(al_dag_row_of(&g, NULL), -1);
	al_dag_free(&g);
	al_plan_free(p);
	al_model_free(m);
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
		cmocka_unit_test(test_sink_by_extension),
		cmocka_unit_test(test_dag),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
