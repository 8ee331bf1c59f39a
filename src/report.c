/* report.c: what every report sink shares: the sink table, the walk over a
 * checked model in model order (nested graphs depth-first, right after the
 * node that owns them), and the per-model summary (counts per unit, share on
 * the ANE, most frequent rules). Sinks write to a FILE* the caller owns; the
 * library itself never chooses to print. */
#include "report.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const struct al_sink *const al_sinks[] = {
	&al_sink_text,
	&al_sink_json,
	&al_sink_html,
	&al_sink_sarif,
	&al_sink_markdown,
	&al_sink_dot,
};
const size_t al_sinks_count = sizeof al_sinks / sizeof al_sinks[0];

const struct al_sink *al_sink_by_name(const char *name)
{
	for (size_t i = 0; i < al_sinks_count; i++)
		if (strcmp(al_sinks[i]->name, name) == 0)
			return al_sinks[i];
	return NULL;
}

const struct al_sink *al_sink_by_extension(const char *path)
{
	const char *dot = path ? strrchr(path, '.') : NULL;
	if (!dot || strchr(dot, '/') || !dot[1])
		return NULL;
	size_t len = strlen(dot + 1);
	for (size_t i = 0; i < al_sinks_count; i++) {
		const char *e = al_sinks[i]->extensions;
		while (e && *e) {
			size_t n = strcspn(e, ",");
			if (n == len && strncasecmp(e, dot + 1, n) == 0)
				return al_sinks[i];
			e += n + (e[n] == ',');
		}
	}
	return NULL;
}

bool al_node_is_const(const struct al_node *n)
{
	if (n->kind < 0 || !n->type)
		return false;
	const struct al_submodel *s = al_src(n) ? al_src(n)->sub : NULL;
	if (s && s->world != AL_WORLD_MIL)
		return false;
	return (al_mil_kinds[n->kind].flags & AL_OPF_CONST) != 0;
}

static void walk_graph(const struct al_graph *g, al_node_fn fn, void *ctx, int guard)
{
	if (!g || guard > AL_MAX_DEPTH + 1)
		return;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct al_node *n = &g->nodes[i];
		fn(ctx, n);
		for (uint32_t k = 0; k < n->n_sub; k++)
			walk_graph(n->sub[k], fn, ctx, guard + 1);
	}
}

void al_walk_nodes(const struct al_submodel *s, al_node_fn fn, void *ctx)
{
	for (uint32_t g = 0; g < s->n_graphs; g++)
		walk_graph(s->graphs[g], fn, ctx, 0);
}

static void count_node(void *ctx, const struct al_node *n)
{
	struct al_summary *sum = ctx;
	if (al_node_is_const(n)) {
		sum->consts++;
		return;
	}
	sum->nodes++;
	if (n->verdict.ane)
		sum->per_unit[AL_UNIT_ANE]++;
	else if ((unsigned)n->verdict.unit < AL_UNIT_COUNT)
		sum->per_unit[n->verdict.unit]++;
	for (uint32_t r = 0; r < n->verdict.n_rules; r++) {
		const struct al_rule *rule = n->verdict.rules[r];
		uint32_t k = 0;
		while (k < sum->n_top && sum->top[k].rule != rule)
			k++;
		if (k == sum->n_top) {
			if (sum->n_top == AL_SUMMARY_TOP)
				continue;
			sum->top[sum->n_top].rule = rule;
			sum->top[sum->n_top].count = 0;
			sum->n_top++;
		}
		sum->top[k].count++;
	}
}

static int cmp_top(const void *a, const void *b)
{
	const struct al_rule_count *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->rule->id, y->rule->id);
}

void al_summarize(const struct al_submodel *s, struct al_summary *sum)
{
	memset(sum, 0, sizeof *sum);
	al_walk_nodes(s, count_node, sum);
	qsort(sum->top, sum->n_top, sizeof sum->top[0], cmp_top);
	for (uint32_t i = 0; i < s->n_findings; i++) {
		const struct al_rule *r = s->findings[i].rule;
		if (r->kind != AL_RULE_WARN)
			sum->model_fallback = true;
	}
}

bool al_summary_fails(const struct al_submodel *s, const struct al_summary *sum,
		      enum al_fail_on fail_on)
{
	if (fail_on == AL_FAIL_NEVER)
		return false;
	bool cpu = sum->per_unit[AL_UNIT_CPU] || sum->per_unit[AL_UNIT_GPU_OR_CPU];
	bool gpu = sum->per_unit[AL_UNIT_GPU] || sum->per_unit[AL_UNIT_GPU_OR_CPU];
	for (uint32_t i = 0; i < s->n_findings; i++) {
		const struct al_rule *r = s->findings[i].rule;
		if (r->kind == AL_RULE_WARN)
			continue;
		cpu |= r->unit == AL_UNIT_CPU || r->unit == AL_UNIT_GPU_OR_CPU;
		gpu |= r->unit == AL_UNIT_GPU || r->unit == AL_UNIT_GPU_OR_CPU;
	}
	switch (fail_on) {
	case AL_FAIL_ANY: return cpu || gpu;
	case AL_FAIL_CPU: return cpu;
	case AL_FAIL_GPU: return gpu;
	case AL_FAIL_NEVER: break;
	}
	return false;
}

/* Per-type counts for `info`: types in first-seen order. */
static void count_type(void *ctx, const struct al_node *n)
{
	struct al_type_counts *tc = ctx;
	const char *t = n->type ? n->type : "?";
	for (uint32_t i = 0; i < tc->n; i++)
		if (strcmp(tc->items[i].type, t) == 0) {
			tc->items[i].count++;
			return;
		}
	if (tc->n == AL_TYPE_COUNTS_MAX) {
		tc->truncated = true;
		return;
	}
	tc->items[tc->n].type = t;
	tc->items[tc->n].count = 1;
	tc->n++;
}

static int cmp_type(const void *a, const void *b)
{
	const struct al_type_count *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->type, y->type);
}

void al_count_types(const struct al_submodel *s, struct al_type_counts *tc)
{
	memset(tc, 0, sizeof *tc);
	al_walk_nodes(s, count_type, tc);
	qsort(tc->items, tc->n, sizeof tc->items[0], cmp_type);
}

const char *al_sink_names(void)
{
	static char names[128];
	if (!names[0])
		for (size_t i = 0; i < al_sinks_count; i++) {
			size_t len = strlen(names);
			snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", al_sinks[i]->name);
		}
	return names;
}

bool al_model_fails(const al_model *m, enum al_fail_on fail_on)
{
	for (size_t i = 0; i < al_model_count(m); i++) {
		const struct al_submodel *s = al_model_get(m, i);
		struct al_summary sum;
		al_summarize(s, &sum);
		if (al_summary_fails(s, &sum, fail_on))
			return true;
	}
	return false;
}

/* Print a name from the file with control bytes escaped, cut to `width`
 * columns when width > 0. Returns the columns written. */
int al_put_name(FILE *out, const char *s, int width)
{
	int w = 0;
	if (!s)
		s = "";
	size_t len = strlen(s);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (width > 0 && w >= width - 1 && i + 1 < len) {
			fputc('~', out);
			return w + 1;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\x%02x", c);
			w += 4;
		} else {
			fputc(c, out);
			w += (c & 0xc0) != 0x80;
		}
	}
	return w;
}

void al_put_name_padded(FILE *out, const char *s, int width)
{
	int w = al_put_name(out, s, width);
	fprintf(out, "%*s", width - w > 0 ? width - w : 0, "");
}

void al_put_graph_header(FILE *out, const struct al_report_opts *o, const struct al_node *n,
			 const struct al_graph **last_graph)
{
	if (n->owner == *last_graph)
		return;
	*last_graph = n->owner;
	if (n->owner && (n->owner->function || n->owner->depth > 0)) {
		fprintf(out, "%s  -- ", al_col(o, C_DIM));
		al_put_name(out, n->owner->block ? n->owner->block : n->owner->function, 0);
		fprintf(out, " --%s\n", al_col(o, C_RESET));
	}
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if the bytes there are not
 * one (overlong forms, surrogates and code points above U+10FFFF included). */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
	if (!n || (n == 3 && c > 0xef))
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) || (c == 0xf0 && s[1] < 0x90) ||
	    (c == 0xf4 && s[1] > 0x8f))
		return 0;
	return n;
}

void al_json_put_string(FILE *out, const char *s)
{
	json_object *j = al_json_string(s);
	fputs(j ? json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
		: "\"\"", out);
	json_object_put(j);
}

json_object *al_json_string(const char *s)
{
	/* Names come from hostile files and json-c copies bytes as they are; a JSON
	 * document must be UTF-8, so each invalid byte becomes U+FFFD. */
	if (!s)
		s = "";
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s), bad = 0;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq(u + i);
		bad += n == 0;
		i += n ? n : 1;
	}
	if (!bad)
		return json_object_new_string(s);
	char *fixed = al_malloc(len + 2 * bad + 1);
	if (!fixed)
		return json_object_new_string("");
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq(u + i);
		if (n) {
			memcpy(fixed + o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(fixed + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	fixed[o] = 0;
	json_object *j = json_object_new_string(fixed);
	al_free(fixed);
	return j;
}

/* ================================================================ escaping */

static void put_visible(FILE *out, unsigned cp, enum al_esc esc)
{
	/* "\x01" / "\u202e": the backslash is markup in Markdown and DOT */
	const char *bs = esc == AL_ESC_MD || esc == AL_ESC_DOT ? "\\\\" : "\\";
	if (cp < 0x100)
		fprintf(out, "%sx%02x", bs, cp);
	else
		fprintf(out, "%su%04x", bs, cp);
}

static bool invisible(unsigned cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

size_t al_put_esc(FILE *out, const char *s, enum al_esc esc, size_t max)
{
	if (!s)
		s = "";
	const unsigned char *u = (const unsigned char *)s;
	size_t chars = 0;
	for (size_t i = 0; u[i];) {
		size_t n = utf8_seq(u + i), step = n ? n : 1;
		unsigned cp = u[i];
		if (n == 2)
			cp = (u[i] & 0x1fu) << 6 | (u[i + 1] & 0x3fu);
		else if (n == 3)
			cp = (u[i] & 0x0fu) << 12 | (u[i + 1] & 0x3fu) << 6 | (u[i + 2] & 0x3fu);
		bool shown = n && n <= 3 && invisible(cp);
		size_t w = shown ? (cp < 0x100 ? 4 : 6) : 1; /* "\x01", "\u202e" */
		/* cut: the last character only if it fits, else room for the mark */
		if (max && chars + w > (u[i + step] ? max - 1 : max)) {
			fputs("\xe2\x80\xa6", out);
			return chars + 1;
		}
		chars += w;
		if (!n) {
			fputs("\xef\xbf\xbd", out);
			i++;
			continue;
		}
		if (shown) {
			put_visible(out, cp, esc);
			i += n;
			continue;
		}
		if (n > 1) {
			fwrite(u + i, 1, n, out);
			i += n;
			continue;
		}
		char c = (char)u[i++];
		switch (esc) {
		case AL_ESC_HTML:
			switch (c) {
			case '&': fputs("&amp;", out); continue;
			case '<': fputs("&lt;", out); continue;
			case '>': fputs("&gt;", out); continue;
			case '"': fputs("&quot;", out); continue;
			case '\'': fputs("&#39;", out); continue;
			}
			break;
		case AL_ESC_MD:
			if (strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c))
				fputc('\\', out);
			break;
		case AL_ESC_DOT:
			if (c == '"' || c == '\\')
				fputc('\\', out);
			break;
		case AL_ESC_TEXT:
			break;
		}
		fputc(c, out);
	}
	return chars;
}

size_t al_put_escaped(FILE *out, const char *s, size_t max)
{
	return al_put_esc(out, s, AL_ESC_TEXT, max);
}

/* ================================================================ plans */

const char *al_unit_upper(enum al_unit u)
{
	switch (u) {
	case AL_UNIT_ANE: return "ANE";
	case AL_UNIT_GPU: return "GPU";
	case AL_UNIT_CPU: return "CPU";
	case AL_UNIT_GPU_OR_CPU: return "GPU/CPU";
	default: return "-";
	}
}

const char *al_si(char *buf, size_t cap, double v)
{
	static const char *const pre[] = {"", " K", " M", " G", " T", " P", " E"};
	int k = 0;
	if (!(v >= 0) || v > 1e30)
		v = 0;
	while (v >= 1000 && k < 6) {
		v /= 1000;
		k++;
	}
	if (k == 0)
		snprintf(buf, cap, "%.0f", v);
	else
		snprintf(buf, cap, "%.2f%s", v, pre[k]);
	return buf;
}

static void plan_model(const struct al_report_item *it, const struct al_target *t,
		       const struct al_report_opts *o, al_plan_fn fn, void *ctx)
{
	struct al_plan_opts po = {0};
	if (o->plan)
		po = *o->plan;
	po.target = t;
	for (size_t k = 0; k < al_model_count(it->model); k++) {
		const struct al_submodel *s = al_model_get(it->model, k);
		al_diags *d = al_diags_new();
		const struct al_plan *p = NULL;
		enum al_status st = d ? al_model_plan(it->model, k, &po, &p, d) : AL_E_NOMEM;
		const char *err = NULL;
		if (st != AL_OK)
			err = d && al_diags_count(d) ? al_diags_get(d, 0)->msg : al_status_str(st);
		fn(ctx, it, s, st == AL_OK ? p : NULL, err);
		al_diags_free(d);
	}
}

void al_each_plan(const struct al_report_item *items, size_t n, const struct al_report_opts *o,
		  al_plan_fn fn, void *ctx)
{
	const struct al_target *one = o->plan && o->plan->target ? o->plan->target
				    : o->check && o->check->target ? o->check->target
								   : al_target_default();
	for (size_t i = 0; i < n; i++) {
		if (!items[i].model)
			continue;
		if (!o->all_targets) {
			plan_model(&items[i], one, o, fn, ctx);
			continue;
		}
		for (size_t t = 0; t < al_targets_count(); t++) {
			struct al_check_opts co = {0};
			if (o->check)
				co = *o->check;
			co.target = al_target_at(t);
			al_diags *d = al_diags_new();
			enum al_status st = d ? al_model_check(items[i].model, &co, d) : AL_E_NOMEM;
			al_diags_free(d);
			if (st != AL_OK) {
				fn(ctx, &items[i], al_model_get(items[i].model, 0), NULL, al_status_str(st));
				continue;
			}
			plan_model(&items[i], co.target, o, fn, ctx);
		}
		al_diags *d = al_diags_new();
		if (d)
			al_model_check(items[i].model, o->check, d);
		al_diags_free(d);
	}
}

size_t al_rule_list(const al_user_rules *u, const struct al_rule ***out)
{
	size_t cap = al_rules_count() + al_user_rules_count(u), n = 0;
	const struct al_rule **v = al_calloc(cap ? cap : 1, sizeof *v);
	*out = v;
	if (!v)
		return 0;
	for (size_t i = 0; i < al_rules_count() && n < cap; i++) {
		const struct al_rule *r = al_rule_at(i);
		const struct al_rule *eff = u ? al_user_rules_find(u, r->id) : NULL;
		v[n++] = eff ? eff : r;
	}
	for (size_t i = 0; i < al_user_rules_count(u) && n < cap; i++) {
		const struct al_rule *r = al_user_rule_at(u, i);
		if (r && !al_rule_is_override(r))
			v[n++] = r;
	}
	return n;
}
