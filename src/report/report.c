/* SPDX-License-Identifier: MIT */
/* report.c: what every report sink shares: the per-model summary (counts per unit, share on
 * the ANE, most frequent rules), and the reading side of what al_report_analyze
 * computed (the views: per target and sub-model, the verdicts and the plan). Sinks
 * write to a FILE* the caller owns; the library itself never chooses to print. */
#include "report.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct count_ctx {
	struct al_summary *sum;
	const struct al_view *v;
};

static void count_node(void *ctx, const struct al_node *n)
{
	struct count_ctx *c = ctx;
	struct al_summary *sum = c->sum;
	if (ali_node_is_const(n)) {
		sum->consts++;
		return;
	}
	const struct al_verdict *v = ali_view_verdict(c->v, n);
	sum->nodes++;
	if (v->ane && !v->unknown)
		sum->eligible++;
	if (v->unknown && v->placed_ane)
		sum->unknown++;
	else if (v->placed_ane)
		sum->per_unit[AL_UNIT_ANE]++;
	else if ((unsigned)v->placed < AL_UNIT_COUNT)
		sum->per_unit[v->placed]++;
	if ((unsigned)v->verdict < 3)
		sum->verdicts[v->verdict]++;
	if (v->verdict == AL_VERDICT_UNCERTAIN && v->placed_ane && !v->unknown)
		sum->uncertain_ane++;
	if (v->verdict == AL_VERDICT_NOT_ANE && !v->placed_ane && (unsigned)v->placed < AL_UNIT_COUNT)
		sum->sure_off[v->placed]++;
	if (ali_verdict_moved(v)) {
		sum->moved++;
		uint32_t k = 0;
		while (k < sum->n_moves && sum->moves[k].rule != v->moved_by)
			k++;
		if (k == sum->n_moves && k < AL_SUMMARY_MOVES)
			sum->moves[sum->n_moves++] = (struct al_move_count){.rule = v->moved_by};
		if (k < sum->n_moves) {
			sum->moves[k].count++;
			if ((unsigned)v->placed < AL_UNIT_COUNT)
				sum->moves[k].per_unit[v->placed]++;
		}
		if (v->place == AL_PLACE_MODEL && !v->n_rules && v->moved_by) {
			sum->whole_rows++;
			sum->whole_model = v->moved_by;
		}
	}
	for (uint32_t r = 0; r < v->n_rules; r++) {
		const struct al_rule *rule = v->rules[r];
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

const char *ali_placed_name(const struct al_verdict *v)
{
	return v->unknown && v->placed_ane ? "unknown" : al_unit_name(v->placed);
}

const char *ali_uncertain_text(const struct al_verdict *v, char *buf, size_t cap)
{
	if (v->verdict != AL_VERDICT_UNCERTAIN || !cap)
		return "";
	snprintf(buf, cap, "%s%s%s", v->uncertain_rule ? v->uncertain_rule->id : "",
		 v->uncertain_rule ? ": " : "", v->uncertain ? v->uncertain : "");
	return buf;
}

const char *ali_moved_by(const struct al_verdict *v)
{
	return v->moved_by ? v->moved_by->id : al_place_name(v->place);
}


static int cmp_top(const void *a, const void *b)
{
	const struct al_rule_count *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->rule->id, y->rule->id);
}

static int cmp_moves(const void *a, const void *b)
{
	const struct al_move_count *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->rule ? x->rule->id : "", y->rule ? y->rule->id : "");
}

void ali_summarize(const struct al_submodel *s, const struct al_view *v, struct al_summary *sum)
{
	memset(sum, 0, sizeof *sum);
	struct count_ctx c = {.sum = sum, .v = v};
	ali_walk_nodes(s, count_node, &c);
	qsort(sum->top, sum->n_top, sizeof sum->top[0], cmp_top);
	qsort(sum->moves, sum->n_moves, sizeof sum->moves[0], cmp_moves);
	sum->moved_by = sum->n_moves ? sum->moves[0].rule : NULL;
	const struct al_finding *f;
	uint32_t nf = ali_view_findings(v, s, &f);
	for (uint32_t i = 0; i < nf; i++) {
		const struct al_rule *r = f[i].rule;
		if (r->kind != AL_RULE_WARN)
			sum->model_fallback = true;
	}
}

const char *ali_moved_to(const struct al_summary *sum, const struct al_rule *r)
{
	for (uint32_t k = 0; k < sum->n_moves; k++) {
		if (sum->moves[k].rule != r)
			continue;
		const uint32_t *u = sum->moves[k].per_unit;
		bool gpu = u[AL_UNIT_GPU] > 0, cpu = u[AL_UNIT_CPU] > 0 || u[AL_UNIT_GPU_OR_CPU] > 0;
		return gpu && cpu ? "gpu and cpu" : gpu ? "gpu" : cpu ? "cpu" : u[AL_UNIT_ANE] ? "ane" : NULL;
	}
	return NULL;
}

void ali_put_moves(FILE *out, const struct al_summary *sum)
{
	if (!sum->moved)
		return;
	if (sum->n_moves == 1) {
		fprintf(out, "%" PRIu32 " moved by %s", sum->moved,
			sum->moves[0].rule ? sum->moves[0].rule->id : "the partition policy");
		return;
	}
	fprintf(out, "%" PRIu32 " moved:", sum->moved);
	for (uint32_t k = 0; k < sum->n_moves; k++)
		fprintf(out, "%s %" PRIu32 " by %s", k ? "," : "", sum->moves[k].count,
			sum->moves[k].rule ? sum->moves[k].rule->id : "the partition policy");
}

bool ali_summary_fails(const struct al_submodel *s, const struct al_view *v,
		      const struct al_summary *sum, enum al_fail_on fail_on)
{
	if (fail_on == AL_FAIL_NEVER)
		return false;
	/* the final placement (after model-level and partition decisions); an uncertain
	 * verdict fails only under --fail-on uncertain */
	const uint32_t *off = fail_on == AL_FAIL_UNCERTAIN ? sum->per_unit : sum->sure_off;
	bool cpu = off[AL_UNIT_CPU] || off[AL_UNIT_GPU_OR_CPU];
	bool gpu = off[AL_UNIT_GPU] || off[AL_UNIT_GPU_OR_CPU];
	if (fail_on == AL_FAIL_UNCERTAIN && sum->verdicts[AL_VERDICT_UNCERTAIN])
		return true;
	/* a model-level rule on a model without nodes (a non-neural model) */
	const struct al_finding *f;
	uint32_t nf = sum->nodes ? 0 : ali_view_findings(v, s, &f);
	for (uint32_t i = 0; i < nf; i++) {
		const struct al_rule *r = f[i].rule;
		if (r->kind == AL_RULE_WARN)
			continue;
		cpu |= r->unit == AL_UNIT_CPU || r->unit == AL_UNIT_GPU_OR_CPU;
		gpu |= r->unit == AL_UNIT_GPU || r->unit == AL_UNIT_GPU_OR_CPU;
	}
	switch (fail_on) {
	case AL_FAIL_ANY:
	case AL_FAIL_UNCERTAIN: return cpu || gpu;
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

void ali_count_types(const struct al_submodel *s, struct al_type_counts *tc)
{
	memset(tc, 0, sizeof *tc);
	ali_walk_nodes(s, count_type, tc);
	qsort(tc->items, tc->n, sizeof tc->items[0], cmp_type);
}

bool al_model_fails(const al_model *m, enum al_fail_on fail_on)
{
	for (size_t i = 0; i < al_model_count(m); i++) {
		const struct al_submodel *s = al_model_get(m, i);
		struct al_summary sum;
		ali_summarize(s, NULL, &sum);
		if (ali_summary_fails(s, NULL, &sum, fail_on))
			return true;
	}
	return false;
}

/* Print a name from the file with control bytes escaped, cut to `width`
 * columns when width > 0. Returns the columns written. */
void ali_put_default_shapes(FILE *out, const struct al_submodel *s, int flex, bool skip_first)
{
	for (uint32_t k = 0; k < s->n_inputs; k++) {
		if ((int)s->inputs[k].flex != flex)
			continue;
		if (skip_first) {
			skip_first = false;
			continue;
		}
		fputs(" --shape ", out);
		ali_put_name(out, s->inputs[k].name, 60);
		fputs("=default", out);
	}
}

int ali_put_name(FILE *out, const char *s, int width)
{
	int w = 0;
	if (!s)
		s = "";
	size_t len = strlen(s), plain = 0;
	/* printable ASCII that fits (most names): one fwrite, the same bytes */
	while (plain < len && (unsigned char)s[plain] >= 0x20 && (unsigned char)s[plain] < 0x7f)
		plain++;
	if (plain == len && (width <= 0 || len <= (size_t)width) && len <= INT_MAX) {
		fwrite(s, 1, len, out);
		return (int)len;
	}
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

int ali_name_cols(const char *s)
{
	int w = 0;
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++)
		w += *p < 0x20 || *p == 0x7f ? 4 : (*p & 0xc0) != 0x80;
	return w;
}

void ali_put_spaces(FILE *out, int n)
{
	static const char sp[] = "                                                                ";
	if (n < 0) /* as printf("%*s", n, ""): a negative width is its magnitude */
		n = n == INT_MIN ? INT_MAX : -n;
	for (; n > 0; n -= (int)(sizeof sp - 1))
		fwrite(sp, 1, n < (int)(sizeof sp - 1) ? (size_t)n : sizeof sp - 1, out);
}

void ali_put_name_padded(FILE *out, const char *s, int width)
{
	int w = ali_put_name(out, s, width);
	ali_put_spaces(out, width - w > 0 ? width - w : 0);
}

void ali_put_graph_header(FILE *out, const struct al_report_opts *o, const struct al_node *n,
			 const struct al_graph **last_graph)
{
	if (n->owner == *last_graph)
		return;
	*last_graph = n->owner;
	if (n->owner && (n->owner->function || n->owner->depth > 0)) {
		fprintf(out, "%s  -- ", al_col(o, C_DIM));
		ali_put_name(out, n->owner->block ? n->owner->block : n->owner->function, 0);
		fprintf(out, " --%s\n", al_col(o, C_RESET));
	}
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if the bytes there are not
 * one (overlong forms, surrogates and code points above U+10FFFF included). */
size_t ali_utf8_seq(const unsigned char *s)
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
	json_object *j = ali_json_string(s);
	fputs(j ? json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
		: "\"\"", out);
	json_object_put(j);
}

json_object *ali_json_string(const char *s)
{
	/* Names come from hostile files and json-c copies bytes as they are; a JSON
	 * document must be UTF-8, so each invalid byte becomes U+FFFD. */
	if (!s)
		s = "";
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s), bad = 0;
	for (size_t i = 0; i < len;) {
		size_t n = ali_utf8_seq(u + i);
		bad += n == 0;
		i += n ? n : 1;
	}
	if (!bad)
		return json_object_new_string(s);
	char *fixed = ali_malloc(len + 2 * bad + 1);
	if (!fixed)
		return json_object_new_string("");
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		size_t n = ali_utf8_seq(u + i);
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
	ali_free(fixed);
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

/* Markdown: the ASCII characters that can start markup where model text goes
 * (inline, mid-line: table cells, list items, headings). md_markup says which
 * of them at position i of s is escaped: always \ ` * [ ] < | ~ @ & # $
 * (emphasis, code, links, HTML, cell breaks, strikethrough, mentions,
 * entities, issue links, math); _ unless its run is between two letters or
 * digits (an intraword _ never emphasises); : before "//" and . after "www" (autolinks).
 * Everything else reads as it is: "kernel 15x15 > 13 (ANE: 1, 2 or 4)". */
#define MD_MAYBE "\\`*[]<|~@&#$_:."

static bool md_alnum(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool md_markup(const unsigned char *s, size_t i)
{
	unsigned char c = s[i];
	switch (c) {
	case '_': { /* a run of _ between two letters or digits is intraword */
		size_t a = i, b = i;
		while (a > 0 && s[a - 1] == '_')
			a--;
		while (s[b + 1] == '_')
			b++;
		return !(a > 0 && md_alnum(s[a - 1]) && md_alnum(s[b + 1]));
	}
	case ':': return s[i + 1] == '/' && s[i + 2] == '/';
	case '.':
		return i >= 3 && (s[i - 1] | 0x20) == 'w' && (s[i - 2] | 0x20) == 'w' && (s[i - 3] | 0x20) == 'w';
	default: return strchr(MD_MAYBE, (int)c) != NULL;
	}
}

/* A printable ASCII character that esc writes as it is. */
static inline bool esc_plain(unsigned c, enum al_esc esc)
{
	if (c < 0x20 || c >= 0x7f)
		return false;
	switch (esc) {
	case AL_ESC_HTML: return c != '&' && c != '<' && c != '>' && c != '"' && c != '\'';
	case AL_ESC_MD: /* md_markup: decided with the neighbours */
		return !strchr(MD_MAYBE, (int)c);
	case AL_ESC_DOT: return c != '"' && c != '\\';
	case AL_ESC_TEXT: return true;
	}
	return false;
}

size_t ali_put_esc(FILE *out, const char *s, enum al_esc esc, size_t max)
{
	if (!s)
		s = "";
	const unsigned char *u = (const unsigned char *)s;
	size_t chars = 0;
	for (size_t i = 0; u[i];) {
		/* a run of characters written as they are, one fwrite (the HTML page of a
		 * 27k-op model escapes ~200k names): only as far as no cut can fall in it */
		size_t k = 0;
		while (esc_plain(u[i + k], esc))
			k++;
		if (max) {
			size_t room = chars + 2 <= max ? max - 2 - chars : 0;
			k = k < room ? k : room;
		}
		if (k) {
			fwrite(u + i, 1, k, out);
			i += k;
			chars += k;
			continue;
		}
		size_t n = ali_utf8_seq(u + i), step = n ? n : 1;
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
			if (md_markup(u, i - 1))
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
	return ali_put_esc(out, s, AL_ESC_TEXT, max);
}

/* ================================================================ plans */

const char *ali_unit_upper(enum al_unit u)
{
	switch (u) {
	case AL_UNIT_ANE: return "ANE";
	case AL_UNIT_GPU: return "GPU";
	case AL_UNIT_CPU: return "CPU";
	case AL_UNIT_GPU_OR_CPU: return "GPU/CPU";
	default: return "-";
	}
}

const char *ali_si(char *buf, size_t cap, double v)
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

/* ================================================================ what the sinks show
 * The views al_report_analyze (report_analyze.c) computed, as the sinks read them. */

const struct al_verdict ali_no_verdict = {.unit = AL_UNIT_NONE};

/* An analysis whose tables could be allocated (else it only says so). */
static bool complete(const al_analysis *a)
{
	return a && a->check && a->views && a->index;
}

int ali_graph_slot_cmp(const void *a, const void *b)
{
	uintptr_t x = ((const struct graph_slot *)a)->graph, y = ((const struct graph_slot *)b)->graph;
	return x < y ? -1 : x > y;
}

static const struct graph_slot *find_graph(const struct sub_index *ix, const struct al_graph *g)
{
	if (!ix || !g)
		return NULL;
	struct graph_slot key = {(uintptr_t)g, 0};
	return bsearch(&key, ix->graphs, ix->n_graphs, sizeof key, ali_graph_slot_cmp);
}

const struct al_verdict *ali_view_verdict(const struct al_view *v, const struct al_node *n)
{
	if (!v || !v->verdicts)
		return &n->verdict;
	const struct al_graph *g = n->owner;
	const struct graph_slot *slot = find_graph(v->index, g);
	if (!slot || n < g->nodes || n >= g->nodes + g->n_nodes)
		return &ali_no_verdict;
	return &v->verdicts[slot->base + (uint32_t)(n - g->nodes)];
}

uint32_t ali_view_findings(const struct al_view *v, const struct al_submodel *s,
			  const struct al_finding **out)
{
	if (!v || !v->verdicts) {
		*out = s->findings;
		return s->n_findings;
	}
	*out = v->findings;
	return v->n_findings;
}

void ali_each_plan(const struct al_report_item *items, size_t n, const struct al_report_opts *o,
		  al_plan_fn fn, void *ctx)
{
	(void)o;
	for (size_t i = 0; i < n; i++) {
		const al_analysis *a = items[i].analysis;
		if (!items[i].model)
			continue;
		if (!complete(a)) { /* not analysed, or out of memory: nothing to show but that */
			struct al_view v = {.s = al_model_get(items[i].model, 0),
					    .error = a ? al_status_str(AL_E_NOMEM) : "not analysed (al_report_analyze)"};
			fn(ctx, &items[i], &v);
			continue;
		}
		for (size_t t = 0; t < a->n_targets; t++) {
			if (a->check[t] != AL_OK) { /* one error for the target's whole model */
				fn(ctx, &items[i], &a->views[t * a->n_subs]);
				continue;
			}
			for (size_t k = 0; k < a->n_subs; k++)
				fn(ctx, &items[i], &a->views[t * a->n_subs + k]);
		}
	}
}

const struct al_view *ali_analysis_view(const al_analysis *a, size_t t, size_t k)
{
	if (!complete(a) || t >= a->n_targets || k >= a->n_subs || a->check[t] != AL_OK)
		return NULL;
	return &a->views[t * a->n_subs + k];
}

bool al_analysis_fails(const al_analysis *a, enum al_fail_on fail_on)
{
	for (size_t t = 0; complete(a) && t < a->n_targets; t++) {
		if (a->check[t] != AL_OK)
			continue;
		for (size_t k = 0; k < a->n_subs; k++) {
			const struct al_view *v = &a->views[t * a->n_subs + k];
			struct al_summary sum;
			ali_summarize(v->s, v, &sum);
			if (ali_summary_fails(v->s, v, &sum, fail_on))
				return true;
		}
	}
	return false;
}

size_t ali_rule_list(const al_user_rules *u, const struct al_rule ***out)
{
	size_t cap = al_rules_count() + al_user_rules_count(u), n = 0;
	const struct al_rule **v = ali_calloc(cap ? cap : 1, sizeof *v);
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

/* ---------------------------------------------------------------- accepted findings */

const char *ali_accepted(const struct al_report_opts *o, const struct al_submodel *s, const char *layer,
			 const struct al_rule *r, const char **kind)
{
	const char *k = NULL;
	const char *why = o && o->accepted && r ? o->accepted(o->accepted_ctx, s, layer, r, &k) : NULL;
	if (kind)
		*kind = why ? (k ? k : "config") : NULL;
	return why;
}

static bool unit_counts(enum al_unit u, enum al_fail_on f)
{
	bool cpu = u == AL_UNIT_CPU || u == AL_UNIT_GPU_OR_CPU, gpu = u == AL_UNIT_GPU || u == AL_UNIT_GPU_OR_CPU;
	return f == AL_FAIL_ANY || f == AL_FAIL_UNCERTAIN ? cpu || gpu : f == AL_FAIL_CPU ? cpu : f == AL_FAIL_GPU ? gpu : false;
}

const char *ali_move_layer(const struct al_node *n, const struct al_verdict *v)
{
	return v->place == AL_PLACE_MODEL ? NULL : n->name ? n->name : "";
}

/* A move that follows other work (ANE073 GPU, ANE074 CPU stickiness, ANE075 a
 * nested graph with its owner): it follows its cause, which fails or is accepted. */
bool ali_move_follows(const struct al_verdict *vd)
{
	return vd->place == AL_PLACE_GPU_STICKS || vd->place == AL_PLACE_CPU_STICKS || vd->place == AL_PLACE_OWNER;
}

bool ali_reason_fails(const struct al_report_opts *o, const struct al_check_opts *co, const struct al_view *v,
		      const struct al_submodel *s, const struct al_node *n, const struct al_rule *r, bool move)
{
	if (!o || o->fail_on == AL_FAIL_NEVER || !r || r->kind == AL_RULE_WARN)
		return false;
	if (!n) /* a model-level finding of a model without layers */
		return unit_counts(r->unit, o->fail_on) && !ali_accepted(o, s, NULL, r, NULL);
	const struct al_verdict *vd = ali_view_verdict(v, n);
	if (ali_node_is_const(n) || vd->placed_ane || !unit_counts(vd->placed, o->fail_on))
		return false;
	if (vd->verdict == AL_VERDICT_UNCERTAIN && o->fail_on != AL_FAIL_UNCERTAIN)
		return false; /* uncertain never fails but the strict gate */
	/* a partition rule switched off by --select / --ignore still moves (Core ML
	 * does), but does not fail the check */
	if (move && !al_check_rule_on(co, r))
		return false;
	if (move && ali_move_follows(vd))
		return false; /* its cause (the layer that sent the work away) is the finding */
	return !ali_accepted(o, s, move ? ali_move_layer(n, vd) : n->name ? n->name : "", r, NULL);
}

#define WHOLE_MODEL_MAX 8
struct fail_walk {
	const struct al_report_opts *o;
	const struct al_check_opts *co;
	const struct al_view *v;
	const struct al_submodel *s;
	ali_fail_fn fn;
	void *ctx;
	uint32_t n;
	/* whole-model moves: one finding per rule, the model's */
	const struct al_rule *whole[WHOLE_MODEL_MAX];
	uint32_t n_whole;
};

static void node_fails(void *ctx, const struct al_node *n)
{
	struct fail_walk *w = ctx;
	const struct al_verdict *vd = ali_view_verdict(w->v, n);
	if (ali_node_is_const(n))
		return;
	/* an uncertain verdict fails only the strict gate (--fail-on uncertain): off
	 * the ANE through its rules below, on it as the rule whose evidence does not
	 * reach (or, for a kind without evidence, counted without a rule) */
	if (vd->verdict == AL_VERDICT_UNCERTAIN && vd->placed_ane) {
		if (w->o->fail_on == AL_FAIL_UNCERTAIN) {
			w->n++;
			if (w->fn && vd->uncertain_rule)
				w->fn(w->ctx, n, vd->uncertain_rule);
		}
		return;
	}
	if (vd->placed_ane)
		return;
	for (uint32_t i = 0; i < vd->n_rules; i++)
		if (ali_reason_fails(w->o, w->co, w->v, w->s, n, vd->rules[i], false)) {
			w->n++;
			if (w->fn)
				w->fn(w->ctx, n, vd->rules[i]);
		}
	const struct al_rule *mb = ali_verdict_moved(vd) ? vd->moved_by : NULL;
	if (!mb || !ali_reason_fails(w->o, w->co, w->v, w->s, n, mb, true))
		return;
	if (vd->place != AL_PLACE_MODEL) {
		w->n++;
		if (w->fn)
			w->fn(w->ctx, n, mb);
		return;
	}
	for (uint32_t i = 0; i < w->n_whole; i++)
		if (w->whole[i] == mb)
			return;
	if (w->n_whole < WHOLE_MODEL_MAX)
		w->whole[w->n_whole++] = mb;
}

uint32_t ali_each_failing(const struct al_report_opts *o, const struct al_check_opts *co, const struct al_view *v,
			  const struct al_submodel *s, ali_fail_fn fn, void *ctx)
{
	struct fail_walk w = {.o = o, .co = co, .v = v, .s = s, .fn = fn, .ctx = ctx};
	if (!o || o->fail_on == AL_FAIL_NEVER)
		return 0;
	ali_walk_nodes(s, node_fails, &w);
	for (uint32_t i = 0; i < w.n_whole; i++) {
		w.n++;
		if (fn)
			fn(ctx, NULL, w.whole[i]);
	}
	const struct al_finding *f;
	uint32_t nf = s->n_graphs ? 0 : ali_view_findings(v, s, &f);
	for (uint32_t i = 0; i < nf; i++)
		if (ali_reason_fails(o, co, v, s, NULL, f[i].rule, false)) {
			w.n++;
			if (fn)
				fn(ctx, NULL, f[i].rule);
		}
	return w.n;
}

void ali_failing_count(const struct al_report_opts *o, const struct al_check_opts *co, const struct al_view *v,
		       const struct al_submodel *s, struct ali_failing *out)
{
	memset(out, 0, sizeof *out);
	out->n = ali_each_failing(o, co, v, s, ali_failing_add, out);
	qsort(out->by_rule, out->n_rules, sizeof out->by_rule[0], cmp_top);
}

void ali_failing_add(void *ctx, const struct al_node *n, const struct al_rule *r)
{
	struct ali_failing *f = ctx;
	(void)n;
	uint32_t k = 0;
	while (k < f->n_rules && f->by_rule[k].rule != r)
		k++;
	if (k == f->n_rules) {
		if (f->n_rules == AL_SUMMARY_TOP)
			return;
		f->by_rule[f->n_rules++] = (struct al_rule_count){r, 0};
	}
	f->by_rule[k].count++;
}

bool al_report_fails(const struct al_report_item *it, const struct al_report_opts *o)
{
	if (!it || !it->model || !o || o->fail_on == AL_FAIL_NEVER)
		return false;
	/* the failing findings, as the sinks name them: a layer off the ANE that
	 * fail_on counts fails through each of its rules and the rule that moved it,
	 * unless that finding is accepted (suppression, metadata, baseline) */
	/* ali_item_check, without linking report_analyze.o (it uses this file) */
	const struct al_check_opts *co = it->analysis ? &it->analysis->check_opts : o->check;
	const al_analysis *a = it->analysis;
	if (!complete(a)) {
		for (size_t k = 0; k < al_model_count(it->model); k++)
			if (ali_each_failing(o, co, NULL, al_model_get(it->model, k), NULL, NULL))
				return true;
		return false;
	}
	for (size_t t = 0; t < a->n_targets; t++) {
		if (a->check[t] != AL_OK)
			continue;
		for (size_t k = 0; k < a->n_subs; k++)
			if (ali_each_failing(o, co, &a->views[t * a->n_subs + k], a->views[t * a->n_subs + k].s, NULL,
					     NULL))
				return true;
	}
	return false;
}

/* ================================================================ the deployment range */

bool ali_range_of(const struct al_report_item *it, int *lo, int *hi)
{
	const al_analysis *a = it ? it->analysis : NULL;
	if (!a || a->range.lo < 0 || a->range.hi <= a->range.lo || !a->range.subs)
		return false;
	*lo = a->range.lo;
	*hi = a->range.hi;
	return true;
}

uint32_t ali_range_varying(const struct al_report_item *it, size_t k, uint32_t *own)
{
	int lo, hi;
	if (own)
		*own = 0;
	if (!ali_range_of(it, &lo, &hi) || k >= it->analysis->n_subs)
		return 0;
	if (own)
		*own = it->analysis->range.subs[k].own_varying;
	return it->analysis->range.subs[k].varying;
}

const struct ali_range_cell *ali_range_node(const struct al_report_item *it, size_t k, const struct al_node *n,
					    unsigned *flags)
{
	int lo, hi;
	*flags = 0;
	if (!ali_range_of(it, &lo, &hi) || k >= it->analysis->n_subs)
		return NULL;
	const struct ali_range_sub *rs = &it->analysis->range.subs[k];
	const struct al_graph *g = n->owner;
	const struct graph_slot *slot = find_graph(rs->index, g);
	if (!rs->varying || !slot || n < g->nodes || n >= g->nodes + g->n_nodes)
		return NULL;
	uint32_t i = slot->base + (uint32_t)(n - g->nodes);
	if (!(rs->flags[i] & ALI_RANGE_VARIES))
		return NULL;
	*flags = rs->flags[i];
	return &rs->cells[(size_t)i * (size_t)(hi - lo + 1)];
}

size_t ali_range_groups(const struct ali_range_cell *cells, int lo, int hi, struct ali_range_group *out,
			size_t cap)
{
	size_t n = 0;
	struct ali_range_group cur = {0};
	for (int r = lo; cells && r <= hi; r++) {
		const struct ali_range_cell *c = &cells[r - lo];
		if (r > lo && cur.unit == c->unit && cur.verdict == c->verdict && cur.own == c->own &&
		    cur.rule == c->rule) {
			cur.hi = r;
		} else {
			if (r > lo && n++ < cap)
				out[n - 1] = cur;
			cur = (struct ali_range_group){.lo = r, .hi = r, .unit = c->unit, .verdict = c->verdict,
						       .own = c->own, .rule = c->rule};
		}
	}
	if (cells && lo <= hi && n++ < cap)
		out[n - 1] = cur;
	return n;
}

void ali_range_name(char *buf, size_t cap, int lo, int hi, bool ids)
{
	const struct al_release *a = al_release_at((size_t)lo), *b = al_release_at((size_t)hi);
	if (!cap)
		return;
	if (!a || !b)
		snprintf(buf, cap, "?");
	else if (lo == hi)
		snprintf(buf, cap, "%s", ids ? a->id : a->name);
	else if (ids)
		snprintf(buf, cap, "%s..%s", a->id, b->id);
	else
		snprintf(buf, cap, "%s-%d", a->name, b->ios);
}

const char *ali_range_unit_upper(uint8_t unit)
{
	return unit == ALI_RANGE_UNKNOWN ? "unknown" : ali_unit_upper((enum al_unit)unit);
}

const char *ali_range_unit_name(uint8_t unit)
{
	return unit == ALI_RANGE_UNKNOWN ? "unknown" : al_unit_name((enum al_unit)unit);
}
