/* SPDX-License-Identifier: MIT */
/* test_user_rules.c: user rule files (src/user_rules.c, docs/rules-file.md).
 *
 * Parsing a good file (the example in docs/rules-file.md among them), errors
 * reported with file:line and rejecting the whole file, overrides of built-in
 * rules changing verdicts, user rules firing on fixtures per chip family,
 * loading from disk (missing file, directory, size bound), lookups, and
 * out-of-memory at every allocation of a parse.
 */
#include "testutil.h"

#include "anelint.h"
#include "analysis.h"

#include <unistd.h>

/* ================================================================ helpers */

static al_user_rules *parse_ok(const char *text)
{
	al_diags *d = al_diags_new();
	al_user_rules *u = NULL;
	enum al_status st = al_user_rules_parse(text, strlen(text), "t.rules", &u, d);
	if (st != AL_OK)
		for (size_t i = 0; i < al_diags_count(d); i++)
			print_error("%s: %s\n", al_diags_get(d, i)->where, al_diags_get(d, i)->msg);
	assert_int_equal(st, AL_OK);
	assert_non_null(u);
	assert_int_equal(al_diags_errors(d), 0);
	al_diags_free(d);
	return u;
}

/* Parsing must fail, with an error on `line` whose message contains `needle`. */
static void parse_bad(const char *text, unsigned line, const char *needle)
{
	al_diags *d = al_diags_new();
	al_user_rules *u = (al_user_rules *)1;
	enum al_status st = al_user_rules_parse(text, strlen(text), "t.rules", &u, d);
	if (st != AL_E_FORMAT)
		print_error("parsed (%d) but should not:\n%s\n", st, text);
	assert_int_equal(st, AL_E_FORMAT);
	assert_null(u);
	char where[32];
	snprintf(where, sizeof where, "line %u", line);
	bool found = false;
	for (size_t i = 0; i < al_diags_count(d); i++) {
		const struct al_diag *x = al_diags_get(d, i);
		if (x->severity == AL_SEV_ERROR && x->where && strcmp(x->where, where) == 0 &&
		    strstr(x->msg, needle))
			found = true;
		assert_string_equal(x->file, "t.rules");
	}
	if (!found) {
		print_error("expected an error on %s containing '%s'; got:\n", where, needle);
		for (size_t i = 0; i < al_diags_count(d); i++)
			print_error("  %s: %s\n", al_diags_get(d, i)->where, al_diags_get(d, i)->msg);
	}
	assert_true(found);
	al_diags_free(d);
}

static al_model *open_check(const char *rel, const char *target, const al_user_rules *u)
{
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(fixture(rel), &m, d), AL_OK);
	struct al_check_opts o = {.target = al_target_find(target), .user_rules = u};
	assert_non_null(o.target);
	assert_int_equal(al_model_check(m, &o, d), AL_OK);
	al_diags_free(d);
	return m;
}

static const struct al_node *find_in(const struct al_graph *g, const char *name)
{
	for (uint32_t i = 0; g && i < g->n_nodes; i++)
		if (g->nodes[i].name && strcmp(g->nodes[i].name, name) == 0)
			return &g->nodes[i];
	return NULL;
}

static const struct al_node *node(al_model *m, const char *name)
{
	const struct al_submodel *s = al_model_get(m, 0);
	for (uint32_t g = 0; g < s->n_graphs; g++) {
		const struct al_node *n = find_in(s->graphs[g], name);
		if (n)
			return n;
	}
	return NULL;
}

static const struct al_rule *fired(const struct al_node *n, const char *id)
{
	for (uint32_t i = 0; n && i < n->verdict.n_rules; i++)
		if (strcmp(n->verdict.rules[i]->id, id) == 0)
			return n->verdict.rules[i];
	return NULL;
}

/* ================================================================ parsing */

static const char good[] =
	"# a comment\n"
	"id: USR001\n"
	"op: relu, cumsum\n"
	"families: a14\n"
	"kind: illegal\n"
	"unit: cpu\n"
	"confidence: M\n"
	"title: relu on the CPU (test)\n"
	"reason: measured on the CPU\n"
	"provenance: a test, on no device\n"
	"source: https://example.com/relu\n"
	"\n\n"
	"id: usr_two\n"
	"layer: activation\n"
	"kind: warn\n"
	"confidence: g\n"
	"title: activation warning (test)\n"
	"source: https://example.com/act\n"
	"why: a long explanation\n"
	"   that continues here\n"
	"\n"
	"id: ane063\n"
	"families: none\n"
	"provenance: sin measured on the ANE of an M1 (test)\n"
	"\r\n"
	"id: ANE061\n"
	"kind: cost\n"
	"confidence: G\n"
	"title: long axes are slow (test)\n"
	"provenance: a test\n";

static void test_parse_good(void **state)
{
	(void)state;
	al_user_rules *u = parse_ok(good);
	assert_int_equal(al_user_rules_count(u), 4);
	const struct al_rule *a = al_user_rule_at(u, 0), *b = al_user_rule_at(u, 1);
	const struct al_rule *c = al_user_rule_at(u, 2), *e = al_user_rule_at(u, 3);
	assert_null(al_user_rule_at(u, 4));
	assert_string_equal(a->id, "USR001");
	assert_string_equal(a->name, "user-usr001");
	assert_int_equal(a->scope, AL_SCOPE_MIL);
	assert_int_equal(a->kind, AL_RULE_ILLEGAL);
	assert_int_equal(a->unit, AL_UNIT_CPU);
	assert_int_equal(a->confidence, 'M');
	assert_int_equal(a->families, AL_FAM(a14));
	assert_string_equal(a->url, "https://example.com/relu");
	assert_string_equal(a->provenance, "a test, on no device");
	assert_string_equal(a->origin, "t.rules:2");
	assert_false(al_rule_is_override(a));
	assert_string_equal(b->name, "user-usr-two");
	assert_int_equal(b->scope, AL_SCOPE_NN);
	assert_int_equal(b->unit, AL_UNIT_ANE);
	assert_int_equal(b->confidence, 'G');
	assert_string_equal(b->provenance, "https://example.com/act"); /* a source alone */
	assert_string_equal(b->why, "a long explanation that continues here");
	assert_string_equal(b->origin, "t.rules:14");
	/* overrides keep the built-in name, scope and texts they do not replace */
	const struct al_rule *base = al_rule_find("ANE063");
	assert_string_equal(c->id, "ANE063");
	assert_string_equal(c->name, base->name);
	assert_string_equal(c->title, base->title);
	assert_int_equal(c->families, 0);
	assert_null(c->url);
	assert_true(al_rule_is_override(c));
	assert_string_equal(c->origin, "t.rules:23");
	assert_int_equal(e->kind, AL_RULE_COST);
	assert_int_equal(e->unit, AL_UNIT_GPU_OR_CPU); /* kept: the built-in's fallback unit */
	assert_int_equal(e->confidence, 'G');
	assert_false(al_rule_is_override(base));
	/* lookups see the file first */
	assert_ptr_equal(al_user_rules_find(u, "usr001"), a);
	assert_ptr_equal(al_user_rules_find(u, "user-usr-two"), b);
	assert_ptr_equal(al_user_rules_find(u, "ane063"), c);
	assert_ptr_equal(al_user_rules_find(u, "ANE001"), al_rule_find("ANE001"));
	assert_ptr_equal(al_user_rules_find(NULL, "ANE001"), al_rule_find("ANE001"));
	assert_null(al_user_rules_find(u, "USR999"));
	assert_null(al_user_rules_find(u, NULL));
	al_user_rules_free(u);
	al_user_rules_free(NULL);
	assert_int_equal(al_user_rules_count(NULL), 0);
	assert_null(al_user_rule_at(NULL, 0));
}

static void test_parse_empty(void **state)
{
	(void)state;
	al_user_rules *u = parse_ok("");
	assert_int_equal(al_user_rules_count(u), 0);
	al_user_rules_free(u);
	u = parse_ok("# nothing but comments\n\n   \n# more\n");
	assert_int_equal(al_user_rules_count(u), 0);
	al_user_rules_free(u);
	assert_int_equal(al_user_rules_parse("", 0, "x", NULL, NULL), AL_E_INVALID_ARG);
}

/* The example in docs/rules-file.md parses (and is what it says it is). */
static void test_doc_example(void **state)
{
	(void)state;
	char path[4096];
	snprintf(path, sizeof path, "%s/docs/rules-file.md", repo_root());
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char doc[1 << 16];
	size_t n = fread(doc, 1, sizeof doc - 1, f);
	fclose(f);
	doc[n] = '\0';
	char *mark = strstr(doc, "<!-- example:");
	assert_non_null(mark);
	char *start = strstr(mark, "```\n");
	assert_non_null(start);
	start += 4;
	char *end = strstr(start, "```");
	assert_non_null(end);
	*end = '\0';
	al_user_rules *u = parse_ok(start);
	assert_int_equal(al_user_rules_count(u), 4);
	assert_int_equal(al_user_rule_at(u, 0)->families, AL_FAM_FROM(a17));
	assert_int_equal(al_user_rule_at(u, 1)->families, AL_FAM_UPTO(a14));
	assert_int_equal(al_user_rule_at(u, 2)->families, AL_FAM(a12) | AL_FAM_FROM(a15));
	assert_true(al_rule_is_override(al_user_rule_at(u, 2)));
	assert_int_equal(al_user_rule_at(u, 3)->families, 0);
	al_user_rules_free(u);
}

#define NEW_OK "id: U1\nop: relu\nkind: illegal\nconfidence: M\ntitle: t\nprovenance: p\n"

/* releases: the OS releases a rule applies to, in the families syntax, any
 * platform's name of a release; an override may narrow a built-in rule's. */
static void test_parse_releases(void **state)
{
	(void)state;
	al_user_rules *u = parse_ok("id: U1\nop: relu\nkind: illegal\nconfidence: M\ntitle: t\n"
				    "provenance: p\nreleases: macos14..ios18\n\n"
				    "id: ANE022\nreleases: ios26+\nprovenance: p\n\n"
				    "id: U2\nop: relu\nkind: warn\nconfidence: G\ntitle: t\nprovenance: p\n");
	assert_int_equal(al_user_rules_count(u), 3);
	assert_int_equal(al_user_rule_at(u, 0)->releases, AL_REL(ios17) | AL_REL(ios18));
	assert_int_equal(al_user_rule_at(u, 1)->releases, AL_REL_FROM(ios26));
	assert_int_equal(al_user_rule_at(u, 2)->releases, AL_REL_ALL); /* default: all */
	char buf[32];
	al_rule_releases(al_user_rule_at(u, 1), buf, sizeof buf);
	assert_string_equal(buf, "ios26+");
	al_user_rules_free(u);
}

/* off: FAMILIES@RELEASES switches a rule off for those pairs only (calibrate writes it) */
static void test_parse_off(void **state)
{
	(void)state;
	al_user_rules *u = parse_ok("id: ANE028\noff: a14@ios18, a16..a17 @ ios17+\nprovenance: p\n");
	const struct al_rule *r = al_user_rule_at(u, 0);
	assert_non_null(r->off);
	size_t a14 = 0, a16 = 0, a17 = 0, i17 = 0, i18 = 0, i16 = 0;
	for (size_t i = 0; i < al_targets_count(); i++) {
		const char *id = al_target_at(i)->id;
		a14 = strcmp(id, "a14") == 0 ? i : a14;
		a16 = strcmp(id, "a16") == 0 ? i : a16;
		a17 = strcmp(id, "a17") == 0 ? i : a17;
	}
	for (size_t i = 0; i < al_releases_count(); i++) {
		const char *id = al_release_at(i)->id;
		i16 = strcmp(id, "ios16") == 0 ? i : i16;
		i17 = strcmp(id, "ios17") == 0 ? i : i17;
		i18 = strcmp(id, "ios18") == 0 ? i : i18;
	}
	assert_false(al_rule_evaluated(r, a14, i18));
	assert_true(al_rule_evaluated(r, a14, i17)); /* the same chip on another release */
	assert_false(al_rule_evaluated(r, a16, i17));
	assert_false(al_rule_evaluated(r, a17, i18));
	assert_true(al_rule_evaluated(r, a17, i16));
	assert_true(al_rule_evaluated(al_rule_find("ANE028"), a14, i18)); /* the built-in row is untouched */
	al_user_rules_free(u);
	parse_bad("id: ANE028\noff: a14\nprovenance: p\n", 2, "FAMILIES@RELEASES");
	parse_bad("id: ANE028\noff: a99@ios18\nprovenance: p\n", 2, "FAMILIES@RELEASES");
	parse_bad("id: ANE028\noff: a14@ios99\nprovenance: p\n", 2, "FAMILIES@RELEASES");
	parse_bad("id: ANE028\noff: @ios18\nprovenance: p\n", 2, "FAMILIES@RELEASES");
	parse_bad("id: ANE028\noff: a14@none\nprovenance: p\n", 2, "FAMILIES@RELEASES");
}

static void test_parse_errors(void **state)
{
	(void)state;
	parse_bad("id: U1\nop: relu\nkindd: illegal\n", 3, "unknown key 'kindd'");
	parse_bad("id: U1\nthis line has no colon\n", 2, "expected 'key: value'");
	parse_bad(NEW_OK "kind: warn\n", 7, "given twice");
	parse_bad("id: U1\nop: relu\nkind: fallback\nconfidence: M\ntitle: t\nprovenance: p\n", 3,
		  "'fallback' is not illegal, cost or warn");
	parse_bad("id: U1\nop: relu\nkind: illegal\nconfidence: X\ntitle: t\nprovenance: p\n", 4,
		  "is not A");
	parse_bad("id: U1\nop: relu\nkind: illegal\nconfidence: M\nprovenance: p\n", 1,
		  "has no 'title:'");
	parse_bad("id: U1\nkind: illegal\nconfidence: M\ntitle: t\nprovenance: p\n", 1,
		  "exactly one of 'layer:'");
	parse_bad("id: U1\nop: relu\nlayer: activation\nkind: illegal\nconfidence: M\ntitle: t\n"
		  "provenance: p\n", 1, "exactly one of 'layer:'");
	parse_bad("id: U1\nop: relu\nkind: illegal\nconfidence: M\ntitle: t\n", 1,
		  "neither 'provenance:' nor 'source:'");
	parse_bad(NEW_OK "families: a14, a99\n", 7, "'a99' is not a chip family");
	parse_bad(NEW_OK "releases: ios14, ios19\n", 7, "'ios19' is not an OS release");
	parse_bad(NEW_OK "releases: a14\n", 7, "'a14' is not an OS release");
	parse_bad(NEW_OK "unit: npu\n", 7, "'npu' is not cpu");
	parse_bad("id: U1\nop: relu\nkind: warn\nunit: cpu\nconfidence: M\ntitle: t\nprovenance: p\n",
		  4, "a warn rule moves nothing");
	parse_bad("id: U1\nop: relu\nkind: cost\nunit: ane\nconfidence: M\ntitle: t\nprovenance: p\n",
		  4, "moves work off the ANE");
	parse_bad(NEW_OK "source: ftp://x\n", 7, "a URL");
	parse_bad(NEW_OK "\n" NEW_OK, 8, "appears twice");
	parse_bad("id: ANE999\nop: relu\n", 1, "ANE ids belong to built-in rules");
	parse_bad("id: 9lives\nop: relu\n", 1, "starting with a letter");
	parse_bad("id: ANE022\nop: gather\nprovenance: p\n", 2, "cannot be changed in an override");
	parse_bad("id: ANE022\nreason: r\nprovenance: p\n", 2, "cannot be changed in an override");
	parse_bad("id: ANE022\n", 1, "changes nothing");
	parse_bad("id: ANE022\nfamilies: none\n", 1, "neither 'provenance:'");
	parse_bad("id: ANE022\nkind: warn\nunit: cpu\nprovenance: p\n", 3, "a warn rule");
	parse_bad("  continued\nid: U1\n", 1, "no 'key:' line above");
	parse_bad(NEW_OK "why:\n\n", 7, "has no value");
	parse_bad(NEW_OK "op: \n", 7, "given twice");
	parse_bad("id: U1\nop: relu, \nkind: illegal\nconfidence: M\ntitle: t\nprovenance: p\n", 2,
		  "type names separated by commas");
	parse_bad("op: relu\nkind: illegal\n", 1, "rule without 'id:'");
	parse_bad(NEW_OK "title2: x\n", 7, "unknown key");
	parse_bad(NEW_OK "name: Bad_Name\n", 7, "lower-case letters");
	parse_bad("id: U1\nname: mil-gather\nop: relu\nkind: illegal\nconfidence: M\ntitle: t\n"
		  "provenance: p\n", 2, "name mil-gather is taken");
	parse_bad("id: U1\nop: relu\nkind: illegal\nconfidence: M\ntitle: a\x01z\nprovenance: p\n", 5,
		  "control character 0x01");
	parse_bad("id: U1\nop: relu\nkind: illegal\nconfidence: M\ntitle: \x1b[31mred\nprovenance: p\n",
		  5, "control character 0x1b");
	parse_bad("id: U1\nop: relu\nkind: illegal\nconfidence: M\ntitle: caf\xc3\nprovenance: p\n", 5,
		  "invalid UTF-8");
	parse_bad("id: U1\nop: relu\nkind: illegal\nconfidence: M\ntitle: \xed\xa0\x80\nprovenance: p\n",
		  5, "invalid UTF-8");
	/* a NUL inside the text */
	const char nul[] = "id: U1\nop: re\0lu\n";
	al_diags *d = al_diags_new();
	al_user_rules *u = NULL;
	assert_int_equal(al_user_rules_parse(nul, sizeof nul - 1, "t.rules", &u, d), AL_E_FORMAT);
	assert_null(u);
	al_diags_free(d);
	/* UTF-8 text is fine */
	u = parse_ok("id: U1\nop: relu\nkind: illegal\nconfidence: M\ntitle: caf\xc3\xa9 \xe2\x9c\x93\n"
		     "provenance: p\n");
	assert_string_equal(al_user_rule_at(u, 0)->title, "caf\xc3\xa9 \xe2\x9c\x93");
	al_user_rules_free(u);
}

/* Several errors: each reported with its line, the file rejected, a bound on the list. */
static void test_many_errors(void **state)
{
	(void)state;
	char text[8192] = "";
	for (int i = 0; i < 40; i++)
		strcat(text, "bogus: 1\n\n");
	al_diags *d = al_diags_new();
	al_user_rules *u = NULL;
	assert_int_equal(al_user_rules_parse(text, strlen(text), "t.rules", &u, d), AL_E_FORMAT);
	assert_null(u);
	assert_int_equal(al_diags_errors(d), 20);
	assert_string_equal(al_diags_get(d, 0)->where, "line 1");
	assert_string_equal(al_diags_get(d, 0)->file, "t.rules");
	assert_string_equal(al_diags_get(d, 1)->where, "line 3");
	assert_non_null(strstr(al_diags_get(d, al_diags_count(d) - 1)->msg, "more errors"));
	al_diags_free(d);
}

static void test_unknown_type_warns(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_user_rules *u = NULL;
	const char *t = "id: U1\nlayer: convolutions\nkind: illegal\nconfidence: M\ntitle: t\n"
			"provenance: p\n";
	assert_int_equal(al_user_rules_parse(t, strlen(t), "t.rules", &u, d), AL_OK);
	assert_int_equal(al_diags_errors(d), 0);
	assert_int_equal(al_diags_count(d), 1);
	assert_int_equal(al_diags_get(d, 0)->severity, AL_SEV_WARNING);
	assert_string_equal(al_diags_get(d, 0)->where, "line 2");
	al_user_rules_free(u);
	al_diags_free(d);
}

/* ================================================================ rules at work */

static void test_user_rule_fires(void **state)
{
	(void)state;
	al_user_rules *u = parse_ok(good);
	/* USR001 (relu, a14 only, cpu, M) on the ML Program fixture */
	al_model *m = open_check("crafted/mil_rules.mlpackage", "m1", u);
	const struct al_node *r = node(m, "relu16");
	assert_non_null(r);
	const struct al_rule *hit = fired(r, "USR001");
	assert_ptr_equal(hit, al_user_rule_at(u, 0));
	assert_false(r->verdict.ane);
	assert_int_equal(r->verdict.unit, AL_UNIT_CPU);
	assert_int_equal(r->verdict.confidence, 'M');
	assert_string_equal(r->verdict.reasons[r->verdict.n_rules - 1], "relu: measured on the CPU");
	assert_null(fired(node(m, "mod_out"), "USR001")); /* another op type */
	al_model_free(m);
	/* not on another family */
	m = open_check("crafted/mil_rules.mlpackage", "a15", u);
	r = node(m, "relu16");
	assert_null(fired(r, "USR001"));
	assert_true(r->verdict.ane);
	al_model_free(m);
	/* usr_two (NeuralNetwork activation, warn): listed, the verdict stays on the ANE */
	m = open_check("crafted/nn_rules.mlmodel", "a14", u);
	r = node(m, "relu_x");
	assert_non_null(r);
	assert_non_null(fired(r, "usr_two"));
	assert_true(r->verdict.ane);
	assert_string_equal(r->verdict.reasons[r->verdict.n_rules - 1],
			    "activation: activation warning (test)");
	assert_null(fired(node(m, "conv_wide"), "usr_two"));
	al_model_free(m);
	/* an NN rule never fires on ML Program ops of the same name, nor the reverse */
	m = open_check("crafted/mil_rules.mlpackage", "a14", u);
	assert_null(fired(node(m, "relu16"), "usr_two"));
	al_model_free(m);
	al_user_rules_free(u);
}

static void test_override(void **state)
{
	(void)state;
	const char *last_two = strstr(good, "id: ane063");
	assert_non_null(last_two);
	al_user_rules *u = parse_ok(last_two);
	/* without the file: sin falls back on a14 (ANE063), the wide relu too (ANE061) */
	al_model *m = open_check("crafted/mil_shapes.mlpackage", "a14", NULL);
	assert_non_null(fired(node(m, "sin_x"), "ANE063"));
	assert_false(node(m, "sin_x")->verdict.ane);
	const struct al_rule *b = fired(node(m, "wide_relu"), "ANE061");
	assert_ptr_equal(b, al_rule_find("ANE061"));
	assert_int_equal(node(m, "wide_relu")->verdict.confidence, 'M');
	al_model_free(m);
	/* with it: ANE063 is off (families none); ANE061 fires as the override says */
	m = open_check("crafted/mil_shapes.mlpackage", "a14", u);
	assert_null(fired(node(m, "sin_x"), "ANE063"));
	assert_true(node(m, "sin_x")->verdict.ane);
	const struct al_node *w = node(m, "wide_relu");
	const struct al_rule *o = fired(w, "ANE061");
	assert_ptr_equal(o, al_user_rule_at(u, 1));
	assert_non_null(o->origin);
	assert_int_equal(o->kind, AL_RULE_COST);
	assert_int_equal(w->verdict.confidence, 'G');
	assert_non_null(strstr(w->verdict.reasons[0], "20000 > 16384")); /* built-in reason */
	al_model_free(m);
	al_user_rules_free(u);
}

/* ================================================================ files */

static void test_load(void **state)
{
	(void)state;
	char dir[] = "/tmp/anelint-urules-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[sizeof dir + 32];
	snprintf(path, sizeof path, "%s/my.rules", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(good, f);
	fclose(f);
	al_diags *d = al_diags_new();
	al_user_rules *u = NULL;
	assert_int_equal(al_user_rules_load(path, &u, d), AL_OK);
	assert_int_equal(al_user_rules_count(u), 4);
	char origin[sizeof path + 8];
	snprintf(origin, sizeof origin, "%s:2", path);
	assert_string_equal(al_user_rule_at(u, 0)->origin, origin);
	al_user_rules_free(u);
	/* missing, a directory, too large: no rules, an error */
	char missing[sizeof dir + 32];
	snprintf(missing, sizeof missing, "%s/none.rules", dir);
	assert_int_equal(al_user_rules_load(missing, &u, d), AL_E_IO);
	assert_null(u);
	assert_int_equal(al_user_rules_load(dir, &u, d), AL_E_IO);
	assert_null(u);
	f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < (1 << 20) / 16 + 1; i++)
		fputs("# padding line \n", f);
	fclose(f);
	assert_int_equal(al_user_rules_load(path, &u, d), AL_E_FORMAT);
	assert_null(u);
	assert_true(al_diags_errors(d) >= 3);
	assert_int_equal(al_user_rules_load(NULL, &u, d), AL_E_INVALID_ARG);
	assert_int_equal(al_user_rules_load(path, NULL, d), AL_E_INVALID_ARG);
	al_diags_free(d);
	unlink(path);
	rmdir(dir);
}

/* Every allocation of a parse and of a check with user rules may fail. */
static void test_out_of_memory(void **state)
{
	(void)state;
	bool ok = false, nomem = false;
	for (unsigned long k = 1; k < 200 && !ok; k++) {
		al_diags *d = al_diags_new();
		al_user_rules *u = NULL;
		ali_alloc_fail_after(k);
		enum al_status st = al_user_rules_parse(good, strlen(good), "t.rules", &u, d);
		ali_alloc_fail_after(0);
		assert_true(st == AL_OK || st == AL_E_NOMEM);
		assert_true((st == AL_OK) == (u != NULL));
		ok = st == AL_OK;
		nomem |= st == AL_E_NOMEM;
		al_user_rules_free(u);
		al_diags_free(d);
	}
	assert_true(ok && nomem);
	al_user_rules *u = parse_ok(good);
	ok = nomem = false;
	for (unsigned long k = 1; k < 200 && !ok; k++) {
		al_diags *d = al_diags_new();
		al_model *m = NULL;
		assert_int_equal(al_model_open(fixture("crafted/mil_rules.mlpackage"), &m, d), AL_OK);
		assert_int_equal(al_model_infer_shapes(m, d), AL_OK);
		struct al_check_opts o = {.user_rules = u};
		ali_alloc_fail_after(k);
		enum al_status st = al_model_check(m, &o, d);
		ali_alloc_fail_after(0);
		assert_true(st == AL_OK || st == AL_E_NOMEM);
		ok = st == AL_OK;
		nomem |= st == AL_E_NOMEM;
		al_model_free(m);
		al_diags_free(d);
	}
	assert_true(ok && nomem);
	al_user_rules_free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_empty),
		cmocka_unit_test(test_doc_example),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_releases),
		cmocka_unit_test(test_parse_off),
		cmocka_unit_test(test_many_errors),
		cmocka_unit_test(test_unknown_type_warns),
		cmocka_unit_test(test_user_rule_fires),
		cmocka_unit_test(test_override),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_out_of_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
