/* SPDX-License-Identifier: MIT */
/* report_text.c: the human-readable sink. `check` prints one row per layer/op
 * in model order (ML Program const ops folded into a count unless asked for),
 * then a summary; `info` prints the model description. Names from the file are
 * printed with control characters escaped: a model cannot drive the terminal. */
#include "report.h"
#include "interp.h" /* ali_nn_class_labels */

#include <inttypes.h>
#include <limits.h>
#include <string.h>

static void print_header(FILE *out, const struct al_submodel *s, const struct al_report_opts *o)
{
	fprintf(out, "%s", al_col(o, C_BOLD));
	ali_put_name(out, s->path, 0);
	fprintf(out, "%s  %s, spec %d (%s)\n", al_col(o, C_RESET), s->type, s->spec_version,
		al_spec_min_os(s->spec_version));
}

/* ================================================================ check */

struct table_ctx {
	FILE *out;
	const struct al_report_opts *o;
	const struct al_graph *last_graph;
	uint32_t row;
	uint32_t hidden_consts;
	int name_w; /* the name column: the longest name (with its indent), at least 30 */
	const struct al_submodel *s;
	uint32_t hidden_ane; /* on the ANE without a finding: not listed without --all */
	uint32_t suppressed; /* findings accepted (suppressions, baseline) */
	uint32_t hidden_whole; /* moved by a model-level rule, nothing of their own: said once */
	/* the deployment range (issue #30): the item and sub-model the rows belong to */
	const struct al_report_item *item;
	size_t k;
	uint32_t hidden_range; /* vary inside the range, not listed (their own verdict does not) */
	uint32_t whole_listed; /* whole-model rows listed because their own verdict varies */
};

/* Names longer than this are cut in the middle ("~"): the table stays aligned,
 * and two names differing only at the start or the end stay apart. */
#define NAME_COLS_MAX 60

/* Whether the table lists n: with --all every layer, else those that fall back
 * or carry a finding (a CI log shows what needs reading). */
/* A row that only says "moved by" the whole-model rule: the model's finding says it once. */
static bool whole_model_row(const struct al_verdict *v)
{
	return v->place == AL_PLACE_MODEL && !v->n_rules && ali_verdict_moved(v);
}

/* Whether the op's own verdict differs inside the deployment range (a rule
 * scoped by release decides it on some): never silent, so always listed. */
static bool own_varies(const struct table_ctx *t, const struct al_node *n)
{
	unsigned f;
	return ali_range_node(t->item, t->k, n, &f) && (f & ALI_RANGE_OWN_VARIES);
}

static bool listed(const struct table_ctx *t, const struct al_node *n)
{
	const struct al_verdict *v = &n->verdict;
	if (t->o->all_layers || (t->o->show_consts && ali_node_is_const(n)))
		return true;
	return ((!v->placed_ane || v->n_rules || ali_verdict_moved(v)) && !whole_model_row(v)) || own_varies(t, n);
}

/* The name column: as wide as the longest name listed (cut at NAME_COLS_MAX). */
static void measure_row(void *vctx, const struct al_node *n)
{
	struct table_ctx *t = vctx;
	if ((ali_node_is_const(n) && !t->o->show_consts) || !listed(t, n))
		return;
	if (whole_model_row(&n->verdict) && !t->o->all_layers)
		t->whole_listed++;
	int cols = ali_name_cols(n->name);
	int w = (n->owner ? n->owner->depth : 0) * 2 + (cols > NAME_COLS_MAX ? NAME_COLS_MAX : cols);
	if (w > t->name_w)
		t->name_w = w;
}

/* FLOPs in 8 columns: 950, 12.3k, 36.9M, 1.2G; "?" after a partial count. */
static void put_flops(FILE *out, const struct al_cost *c)
{
	static const char *const unit[] = {"", "k", "M", "G", "T", "P"};
	double v = c->flops;
	int u = 0;
	while (v >= 999.95 && u < 5) {
		v /= 1000;
		u++;
	}
	char buf[32];
	snprintf(buf, sizeof buf, u ? "%.1f%s%s" : "%.0f%s%s", v, unit[u], c->known ? "" : "?");
	fprintf(out, "%8s  ", buf);
}

/* One table row is built in a line buffer and written with one fwrite: the
 * LLM-scale check prints 27k rows, and a dozen stdio calls per row (each taking
 * the stream's lock) were a tenth of its instructions. Anything unusual (names
 * that need escaping or cutting, --shapes, suppressions) flushes the buffer and
 * goes through the FILE functions, so the bytes are the same. */
struct line {
	FILE *out;
	size_t n;
	char b[512];
};

static void ln_flush(struct line *l)
{
	if (l->n)
		fwrite(l->b, 1, l->n, l->out);
	l->n = 0;
}

static void ln_put(struct line *l, const char *s, size_t n)
{
	if (n > sizeof l->b - l->n) {
		ln_flush(l);
		if (n > sizeof l->b) {
			fwrite(s, 1, n, l->out);
			return;
		}
	}
	memcpy(l->b + l->n, s, n);
	l->n += n;
}

static void ln_str(struct line *l, const char *s)
{
	ln_put(l, s, strlen(s));
}

static void ln_ch(struct line *l, char c)
{
	if (l->n == sizeof l->b)
		ln_flush(l);
	l->b[l->n++] = c;
}

static void ln_spaces(struct line *l, int n)
{
	if (n < 0) /* as ali_put_spaces */
		n = n == INT_MIN ? INT_MAX : -n;
	while (n > 0) {
		if (l->n == sizeof l->b)
			ln_flush(l);
		size_t k = sizeof l->b - l->n;
		if ((size_t)n < k)
			k = (size_t)n;
		memset(l->b + l->n, ' ', k);
		l->n += k;
		n -= (int)k;
	}
}

/* ali_put_name into the line */
static int ln_name(struct line *l, const char *s, int width)
{
	if (!s)
		s = "";
	size_t len = 0;
	while (s[len] && (unsigned char)s[len] >= 0x20 && (unsigned char)s[len] < 0x7f)
		len++;
	if (!s[len] && (width <= 0 || len <= (size_t)width) && len <= INT_MAX) {
		ln_put(l, s, len);
		return (int)len;
	}
	ln_flush(l);
	return ali_put_name(l->out, s, width);
}

static void ln_name_padded(struct line *l, const char *s, int width)
{
	int w = ln_name(l, s, width);
	ln_spaces(l, width - w > 0 ? width - w : 0);
}

static int unit_cols(unsigned char c)
{
	return c < 0x20 || c == 0x7f ? 4 : 1; /* a control byte shows as \xNN */
}

/* A name from the model, padded to `width`; a name of more than NAME_COLS_MAX
 * columns is cut in the middle to fit it: its start, "~", its end. */
static void ln_name_middle(struct line *l, const char *s, int width)
{
	if (!s)
		s = "";
	int max = width < NAME_COLS_MAX ? width : NAME_COLS_MAX;
	if (max < 3 || ali_name_cols(s) <= max) {
		ln_name_padded(l, s, width);
		return;
	}
	int head = (max - 1) / 2, tail = max - 1 - head, hc = 0, tc = 0;
	size_t pe = 0, len = strlen(s);
	while (s[pe]) { /* whole characters (a UTF-8 sequence, or an escaped byte) */
		size_t ul = 1;
		while (s[pe + ul] && ((unsigned char)s[pe + ul] & 0xc0) == 0x80)
			ul++;
		int uc = unit_cols((unsigned char)s[pe]);
		if (hc + uc > head)
			break;
		hc += uc;
		pe += ul;
	}
	size_t ss = len;
	while (ss > pe) {
		size_t k = ss - 1;
		while (k > pe && ((unsigned char)s[k] & 0xc0) == 0x80)
			k--;
		int uc = unit_cols((unsigned char)s[k]);
		if (tc + uc > tail)
			break;
		tc += uc;
		ss = k;
	}
	char buf[4 * NAME_COLS_MAX + 8];
	size_t n = pe < sizeof buf - 1 ? pe : sizeof buf - 1;
	memcpy(buf, s, n);
	buf[n] = 0;
	ln_name(l, buf, 0);
	ln_ch(l, '~');
	ln_name(l, s + ss, 0);
	ln_spaces(l, width - (hc + 1 + tc));
}

/* fprintf("%5u  ", i) without printf */
static void put_index(struct line *l, uint32_t i)
{
	char b[16];
	int k = (int)sizeof b;
	b[--k] = ' ';
	b[--k] = ' ';
	do
		b[--k] = (char)('0' + i % 10);
	while (i /= 10);
	while (k > (int)sizeof b - 7)
		b[--k] = ' ';
	ln_put(l, b + k, sizeof b - (size_t)k);
}

/* "[suppressed, KIND: WHY]" after a finding the configuration, the model's
 * metadata or the baseline accepts; counted for the table's footer. */
static void put_suppressed(struct table_ctx *t, struct line *l, const char *kind, const char *why)
{
	t->suppressed++;
	ln_flush(l);
	fprintf(t->out, " %s[suppressed, %s: ", al_col(t->o, C_DIM), kind);
	ali_put_name(t->out, why, 0);
	fprintf(t->out, "]%s", al_col(t->o, C_RESET));
}

/* The deployment range on a row whose unit or verdict differs inside it: the
 * releases that differ from the newest (the row's own), compact: "; by release:
 * CPU on iOS 13-14 (ANE055), GPU? on iOS 15" (`?` uncertain there, "(certain)"
 * the same unit without the doubt; the rule that moves the op itself there when
 * it is not the newest's, else "(op alone X)" where only the op's own verdict
 * differs). Whether anything was written. */
static bool put_range(struct table_ctx *t, struct line *l, const struct al_node *n, bool after)
{
	unsigned f;
	int lo, hi;
	const struct ali_range_cell *cells = ali_range_node(t->item, t->k, n, &f);
	if (!cells || !ali_range_of(t->item, &lo, &hi))
		return false;
	struct ali_range_group g[AL_REL_COUNT];
	size_t ng = ali_range_groups(cells, lo, hi, g, AL_REL_COUNT);
	if (ng < 2 || ng > AL_REL_COUNT)
		return false;
	const struct ali_range_group *now = &g[ng - 1];
	ln_str(l, after ? "; by release: " : "  by release: ");
	bool first = true;
	for (size_t i = 0; i + 1 < ng; i++) {
		char name[48];
		if (g[i].unit == now->unit && g[i].verdict == now->verdict && g[i].own == now->own &&
		    g[i].rule == now->rule)
			continue;
		ln_str(l, first ? "" : ", ");
		first = false;
		ln_str(l, ali_range_unit_upper(g[i].unit));
		if (g[i].verdict == AL_VERDICT_UNCERTAIN)
			ln_ch(l, '?');
		else if (g[i].unit == now->unit && now->verdict == AL_VERDICT_UNCERTAIN)
			ln_str(l, " (certain)"); /* the same unit, but there its rule's evidence reaches */
		ali_range_name(name, sizeof name, g[i].lo, g[i].hi, false);
		ln_str(l, " on ");
		ln_str(l, name);
		if (g[i].rule && g[i].rule != now->rule) { /* a rule scoped by release moves the op there */
			ln_str(l, " (");
			ln_str(l, g[i].rule->id);
			ln_ch(l, ')');
		} else if (g[i].own != now->own || g[i].rule != now->rule) {
			ln_str(l, " (op alone ");
			ln_str(l, ali_range_unit_upper(g[i].own));
			ln_ch(l, ')');
		}
	}
	return true;
}

static void print_row(void *vctx, const struct al_node *n)
{
	struct table_ctx *t = vctx;
	FILE *out = t->out;
	const struct al_report_opts *o = t->o;
	uint32_t row = t->row++;
	if (ali_node_is_const(n) && !o->show_consts) {
		t->hidden_consts++;
		return;
	}
	if (!listed(t, n)) {
		unsigned f;
		if (whole_model_row(&n->verdict))
			t->hidden_whole++; /* said once, above the table */
		else
			t->hidden_ane++;
		if (ali_range_node(t->item, t->k, n, &f))
			t->hidden_range++;
		return;
	}
	ali_put_graph_header(out, o, n, &t->last_graph);
	struct line line; /* b is written before it is read: not zeroed */
	struct line *l = &line;
	line.out = out;
	line.n = 0;
	int depth = n->owner ? n->owner->depth : 0;
	put_index(l, row);
	ln_spaces(l, depth * 2);
	ln_name_middle(l, n->name, t->name_w - depth * 2);
	ln_put(l, "  ", 2);
	ln_name_padded(l, n->type, 22);
	ln_put(l, "  ", 2);
	if (o->shapes) { /* --shapes: the first output's inferred shape */
		char sh[128] = "-";
		if (n->n_outputs)
			ali_shape_format(n->out_shapes ? &n->out_shapes[0] : NULL, sh, sizeof sh);
		ln_flush(l);
		fprintf(out, "%-18s  ", sh);
		put_flops(out, &n->cost);
	}
	/* the unit column: the final placement, marked `*` when the partition or a
	 * model-level rule moved it away from the op's own verdict */
	const struct al_verdict *v = &n->verdict;
	bool moved = ali_verdict_moved(v);
	bool unsure = v->verdict == AL_VERDICT_UNCERTAIN && !v->unknown; /* `?`: issue #30 */
	if (v->placed_ane && v->unknown) { /* ANE057: the model does not say */
		ln_str(l, al_col(o, C_YELLOW));
		ln_ch(l, '?');
		if (moved)
			ln_ch(l, '*');
		ln_str(l, al_col(o, C_RESET));
		ln_spaces(l, moved ? 16 : 17);
	} else if (v->placed_ane) {
		ln_str(l, al_col(o, C_GREEN));
		ln_put(l, "ANE", 3);
		if (unsure)
			ln_ch(l, '?');
		if (moved)
			ln_ch(l, '*');
		ln_str(l, al_col(o, C_RESET));
		ln_spaces(l, 15 - moved - unsure);
	} else { /* "%s%-18s%s" of "-> unit[*]" */
		const char *un = al_unit_name(v->placed);
		ln_str(l, al_col(o, al_unit_colour(v->placed)));
		ln_put(l, "-> ", 3);
		ln_str(l, un);
		if (unsure)
			ln_ch(l, '?');
		if (moved)
			ln_ch(l, '*');
		int pad = 18 - 3 - (int)strlen(un) - moved - unsure;
		if (pad > 0)
			ln_spaces(l, pad);
		ln_str(l, al_col(o, C_RESET));
	}
	/* how sure the unit shown is: the rule that moved it, else the verdict; `?`
	 * where that rule's evidence does not reach (an uncertain verdict) */
	char conf = unsure ? '?' : moved && v->moved_by ? v->moved_by->confidence : v->confidence;
	ln_str(l, " [");
	ln_ch(l, conf ? conf : '?');
	ln_ch(l, ']');
	if (v->n_rules || moved || unsure)
		ln_ch(l, ' ');
	for (uint32_t r = 0; r < v->n_rules; r++) {
		const struct al_rule *rule = v->rules[r];
		bool warn = rule->kind == AL_RULE_WARN;
		ln_str(l, r ? "; " : " ");
		ln_str(l, al_col(o, warn ? C_YELLOW : ""));
		ln_str(l, rule->id);
		ln_str(l, al_col(o, warn ? C_RESET : ""));
		ln_ch(l, ' ');
		ln_name(l, v->reasons[r], 0);
		const char *kind;
		const char *why = ali_accepted(o, t->s, n->name, rule, &kind);
		if (why)
			put_suppressed(t, l, kind, why);
	}
	if (moved) {
		ln_str(l, v->n_rules ? "; * moved by " : " * moved by ");
		ln_str(l, ali_moved_by(v));
		ln_str(l, " (op alone: ");
		ln_str(l, v->unknown ? "unknown" : v->ane ? "ANE" : al_unit_name(v->unit));
		ln_ch(l, ')');
		const char *kind;
		const char *why = v->moved_by ? ali_accepted(o, t->s, ali_move_layer(n, v), v->moved_by, &kind) : NULL;
		if (why)
			put_suppressed(t, l, kind, why);
	}
	if (unsure) {
		char p[48];
		snprintf(p, sizeof p, " ? uncertain (p_ane %.2f): ", v->p_ane);
		ln_str(l, v->n_rules || moved ? ";" : "");
		ln_str(l, p);
		char why[160];
		ln_str(l, ali_uncertain_text(v, why, sizeof why));
	}
	bool ranged = put_range(t, l, n, v->n_rules || moved || unsure);
	const char *weights = ali_node_weights(n); /* where the op came from, as far as the file says */
	if (weights) {
		ln_str(l, v->n_rules || moved || unsure || ranged ? "  " : " ");
		ln_str(l, al_col(o, C_DIM));
		ln_str(l, "[weights ");
		ln_name(l, weights, 0);
		ln_ch(l, ']');
		ln_str(l, al_col(o, C_RESET));
	}
	ln_ch(l, '\n');
	ln_flush(l);
}

static double pct(uint32_t a, uint32_t b)
{
	return b ? 100.0 * a / b : 0.0;
}

static void print_findings(FILE *out, const struct al_submodel *s, const struct al_summary *sum,
			   const struct al_report_opts *o);

/* The deployment range (issue #30), only when a verdict varies inside it:
 * "by release: 2 layers differ inside iOS 13-27, the model's deployment range
 * (--os picks one release)"; hidden: those of them not listed (their own verdict
 * is the same on every release; --all lists them). */
static void print_range(FILE *out, const struct al_report_item *item, size_t k, const struct al_submodel *s,
			uint32_t hidden)
{
	int lo, hi;
	uint32_t n = ali_range_varying(item, k, NULL);
	if (!n || !ali_range_of(item, &lo, &hi))
		return;
	char name[48];
	ali_range_name(name, sizeof name, lo, hi, false);
	fprintf(out, "by release: %" PRIu32 " %s differ%s inside %s, the model's deployment range (--os picks one release)",
		n, s->world == AL_WORLD_MIL ? (n == 1 ? "op" : "ops") : (n == 1 ? "layer" : "layers"),
		n == 1 ? "s" : "", name);
	if (hidden)
		fprintf(out, "; %" PRIu32 " of them not listed: only their placement or how sure it is differs (--all lists them)", hidden);
	fputc('\n', out);
}

static void print_model_fix(FILE *out, const struct al_submodel *s, const struct al_rule *r);

/* What fails the check, by rule, as the exit status and --format github see it
 * (ali_each_failing): nothing when it passes. */
static void print_failing(FILE *out, const struct al_submodel *s, const struct al_check_opts *co,
			  const struct al_report_opts *o)
{
	struct ali_failing f;
	ali_failing_count(o, co, NULL, s, &f);
	if (!f.n)
		return;
	fprintf(out, "%sfailing%s: %" PRIu32 " finding%s:", al_col(o, C_RED), al_col(o, C_RESET), f.n,
		f.n == 1 ? "" : "s");
	for (uint32_t i = 0; i < f.n_rules; i++)
		fprintf(out, "%s %s x%" PRIu32 " (%s)", i ? "," : "", f.by_rule[i].rule->id, f.by_rule[i].count,
			f.by_rule[i].rule->name);
	fputc('\n', out);
}

static void print_summary(FILE *out, const struct al_submodel *s, const struct al_summary *sump,
			  const struct al_report_opts *o)
{
	struct al_summary sum = *sump;
	const char *what = s->world == AL_WORLD_MIL ? "ops" : "layers";
	uint32_t ane = sum.per_unit[AL_UNIT_ANE];
	uint32_t off = sum.nodes - ane - sum.unknown;
	fprintf(out, "summary: %" PRIu32 " %s", sum.nodes, what);
	if (sum.consts)
		fprintf(out, " (+%" PRIu32 " const)", sum.consts);
	if (sum.moved) /* the op's own eligibility, then the final placement */
		fprintf(out, ", %" PRIu32 " ANE-eligible", sum.eligible);
	fprintf(out, ", %s%" PRIu32 " %s the ANE (%.1f%%)%s", al_col(o, C_GREEN), ane,
		sum.moved ? "placed on" : "on", pct(ane, sum.nodes), al_col(o, C_RESET));
	if (sum.moved) {
		fputs(": ", out);
		ali_put_moves(out, &sum);
	}
	if (sum.unknown)
		fprintf(out, ", %s%" PRIu32 " unit unknown%s (ANE057)", al_col(o, C_YELLOW), sum.unknown,
			al_col(o, C_RESET));
	if (off) {
		fprintf(out, ", %s%" PRIu32 " fall back%s:", al_col(o, C_RED), off, al_col(o, C_RESET));
		bool first = true;
		for (int u = AL_UNIT_GPU; u < AL_UNIT_COUNT; u++)
			if (sum.per_unit[u]) {
				fprintf(out, "%s %s %" PRIu32, first ? "" : ",", al_unit_name(u),
					sum.per_unit[u]);
				first = false;
			}
	}
	fputc('\n', out);
	/* issue #30: how sure, and the ANE share if every uncertain one went either way */
	fprintf(out, "verdicts: %" PRIu32 " on the ANE, %" PRIu32 " off, %" PRIu32 " uncertain",
		sum.verdicts[AL_VERDICT_ANE], sum.verdicts[AL_VERDICT_NOT_ANE], sum.verdicts[AL_VERDICT_UNCERTAIN]);
	if (sum.verdicts[AL_VERDICT_UNCERTAIN])
		fprintf(out, "; ANE share %.1f%%..%.1f%%", pct(sum.verdicts[AL_VERDICT_ANE], sum.nodes),
			pct(sum.verdicts[AL_VERDICT_ANE] + sum.verdicts[AL_VERDICT_UNCERTAIN], sum.nodes));
	fputc('\n', out);
	if (sum.n_top) {
		fputs("rules fired:", out);
		for (uint32_t i = 0; i < sum.n_top; i++)
			fprintf(out, "%s %s x%" PRIu32 " (%s)", i ? "," : "", sum.top[i].rule->id,
				sum.top[i].count, sum.top[i].rule->name);
		fputc('\n', out);
	}
	print_findings(out, s, &sum, o);
}

/* Under a model-level finding `anelint fix` answers by editing the description:
 * the command. ANE040 (a shape range): fix --shape NAME=default for each range
 * input; ANE041 (several enumerated inputs): the same for all but the first. */
static void print_model_fix(FILE *out, const struct al_submodel *s, const struct al_rule *r)
{
	bool range = r->id && strcmp(r->id, "ANE040") == 0, enums = r->id && strcmp(r->id, "ANE041") == 0;
	if ((!range && !enums) || s->depth != 0 || (s->world != AL_WORLD_NN && s->world != AL_WORLD_MIL))
		return; /* fix rewrites a NeuralNetwork or ML Program model's own inputs, not a pipeline's */
	fputs("       fix: anelint fix", out);
	ali_put_default_shapes(out, s, range ? AL_FLEX_RANGE : AL_FLEX_ENUMERATED, enums);
	fputs(range ? " (exact: fixes the shape; `plan` says what would then decide)\n"
		    : " (exact: keeps the first enumerated input, fixes the others)\n", out);
}

static void print_findings(FILE *out, const struct al_submodel *s, const struct al_summary *sum,
			   const struct al_report_opts *o)
{
	for (uint32_t i = 0; i < s->n_findings; i++) {
		const struct al_finding *f = &s->findings[i];
		bool warn = f->rule->kind == AL_RULE_WARN;
		fprintf(out, "model: %s%s%s %s [%c] ", al_col(o, warn ? C_YELLOW : C_RED), f->rule->id,
			al_col(o, C_RESET), al_rule_kind_name(f->rule->kind), f->rule->confidence);
		ali_put_name(out, f->reason, 0);
		if (!warn) { /* where it moved the layers, as their rows say (ANE071 with the GPU in use: the GPU) */
			const char *to = ali_moved_to(sum, f->rule);
			fprintf(out, " (-> %s)", to ? to : al_unit_name(f->rule->unit));
		}
		const char *kind;
		const char *why = ali_accepted(o, s, NULL, f->rule, &kind);
		if (why) {
			fprintf(out, " %s[suppressed, %s: ", al_col(o, C_DIM), kind);
			ali_put_name(out, why, 0);
			fprintf(out, "]%s", al_col(o, C_RESET));
		}
		fputc('\n', out);
		print_model_fix(out, s, f->rule);
	}
}

static void print_diags(FILE *out, const al_diags *d, const struct al_report_opts *o)
{
	for (size_t i = 0; i < al_diags_count(d); i++) {
		const struct al_diag *x = al_diags_get(d, i);
		if (x->severity != AL_SEV_WARNING)
			continue;
		fprintf(out, "%swarning:%s ", al_col(o, C_YELLOW), al_col(o, C_RESET));
		ali_put_name(out, x->where ? x->where : "", 0);
		fputs(x->where ? ": " : "", out);
		ali_put_name(out, x->msg, 0);
		fputc('\n', out);
	}
	if (al_diags_dropped(d))
		fprintf(out, "%s(%zu more diagnostics not shown)%s\n", al_col(o, C_YELLOW), al_diags_dropped(d),
			al_col(o, C_RESET));
}

static void print_prediction(FILE *out, const struct al_check_opts *co, const struct al_report_opts *o);
static void text_check_item(FILE *out, const struct al_report_item *item, const struct al_report_opts *o, bool own,
			    bool *first);

static void text_check(FILE *out, const struct al_report_item *items, size_t n,
		       const struct al_report_opts *o)
{
	if (ali_multi(o)) { /* one verdict column per family / release: report_matrix.c */
		ali_text_check_matrix(out, items, n, o);
		return;
	}
	bool first = true, own = false; /* own: a model has settings of its own ([[model]]) */
	for (size_t i = 0; i < n; i++)
		own |= ali_item_own_prediction(&items[i], o);
	for (size_t i = 0; i < n; i++)
		text_check_item(out, &items[i], o, own, &first);
	if (!first && !own) /* what the verdicts are predicted for */
		print_prediction(out, o->check, o);
}

/* One item of `check`'s text: its sub-models' tables and summaries; *first:
 * nothing written yet (a blank line goes between models). */
static void text_check_item(FILE *out, const struct al_report_item *item, const struct al_report_opts *o, bool own,
			    bool *first)
{
	{
		if (!item->model)
			return; /* errors go to stderr, from the CLI */
		for (size_t k = 0; k < al_model_count(item->model); k++) {
			const struct al_submodel *s = al_model_get(item->model, k);
			if (!*first)
				fputc('\n', out);
			*first = false;
			print_header(out, s, o);
			struct al_summary sum;
			ali_summarize(s, NULL, &sum);
			const struct al_check_opts *wco = ali_item_check(item, o);
			bool wsure = !sum.whole_model ||
				     al_rule_decides_at(sum.whole_model, NULL, wco ? wco->target : NULL, wco ? wco->os : NULL);
			struct table_ctx t = {.out = out, .o = o, .name_w = 30, .s = s, .item = item, .k = k};
			if (s->n_graphs)
				ali_walk_nodes(s, measure_row, &t);
			/* rows the deployment range lists (their own verdict varies) are not said here */
			uint32_t whole_rows = sum.whole_rows - (t.whole_listed < sum.whole_rows ? t.whole_listed : sum.whole_rows);
			if (s->n_graphs && whole_rows && !o->all_layers) /* said once, not per row */
				fprintf(out, "  %s%s%s (%s, below) %s the whole model off the ANE: its %" PRIu32
					     " %s without a finding of %s own %s to the %s (not listed; --all lists "
					     "them)\n", al_col(o, C_RED), sum.whole_model->id, al_col(o, C_RESET),
					sum.whole_model->name,
					wsure ? "moves" : "? may move (uncertain: its evidence does not reach this chip or release)",
					whole_rows,
					s->world == AL_WORLD_MIL ? (whole_rows == 1 ? "op" : "ops")
								 : (whole_rows == 1 ? "layer" : "layers"),
					whole_rows == 1 ? "its" : "their", whole_rows == 1 ? "goes" : "go",
					ali_moved_to(&sum, sum.whole_model));
			if (s->n_graphs) {
				fprintf(out, "%s%5s  %-*s  %-22s  ", al_col(o, C_DIM), "#", t.name_w, "name", "type");
				if (o->shapes)
					fprintf(out, "%-18s  %8s  ", "shape", "FLOPs");
				fprintf(out, "%-18s %-4s %s%s\n", "unit", "conf", "rules and reasons", al_col(o, C_RESET));
				ali_walk_nodes(s, print_row, &t);
				if (t.hidden_consts)
					fprintf(out, "%s  (%" PRIu32 " const ops not shown; --consts shows them)%s\n",
						al_col(o, C_DIM), t.hidden_consts, al_col(o, C_RESET));
				if (t.hidden_ane)
					fprintf(out, "%s  (%" PRIu32 " %s on the ANE without a finding not shown; --all "
						     "lists them)%s\n", al_col(o, C_DIM), t.hidden_ane,
						s->world == AL_WORLD_MIL ? (t.hidden_ane == 1 ? "op" : "ops")
									 : (t.hidden_ane == 1 ? "layer" : "layers"),
						al_col(o, C_RESET));
				if (t.suppressed)
					fprintf(out, "suppressed: %" PRIu32 " finding%s accepted (configuration, model "
						     "metadata or baseline): they do not fail the check\n",
						t.suppressed, t.suppressed == 1 ? "" : "s");
			} else if (s->n_children) {
				fprintf(out, "  pipeline of %" PRIu32 " models (below)\n", s->n_children);
			}
			if (s->n_graphs) {
				print_summary(out, s, &sum, o);
				print_range(out, item, k, s, t.hidden_range);
			} else
				print_findings(out, s, &sum, o);
			print_failing(out, s, ali_item_check(item, o), o);
		}
		print_diags(out, item->diags, o);
		if (own && item->model) /* models of their own settings: each says what it is predicted for */
			print_prediction(out, ali_item_check(item, o), o);
	}
}

static void print_prediction(FILE *out, const struct al_check_opts *co, const struct al_report_opts *o)
{
	const struct al_target *tg = co && co->target ? co->target : al_target_default();
	const struct al_release *os = co && co->os ? co->os : al_release_default();
	fprintf(out, "%spredicted for %s (%s), %s, compute units %s%s\n", al_col(o, C_DIM), tg->id,
		tg->name ? tg->name : "", os->name, al_compute_units_name(co ? co->compute_units : AL_CU_DEFAULT),
		al_col(o, C_RESET));
}

/* ================================================================ info */

static void print_shape(FILE *out, const int64_t *v, uint32_t n)
{
	ali_dims_fput(out, v, n, AL_DIMS_SPACED | AL_DIMS_QUERY);
}

static void print_feature_at(FILE *out, const struct al_feature *f, const char *lead);

static void print_feature(FILE *out, const struct al_feature *f)
{
	print_feature_at(out, f, "    ");
}

static void print_feature_at(FILE *out, const struct al_feature *f, const char *lead)
{
	fputs(lead, out);
	ali_put_name(out, f->name, 0);
	fprintf(out, ": %s", al_feature_kind_name(f->kind));
	if (f->kind == AL_FEAT_MULTIARRAY || f->kind == AL_FEAT_STATE) {
		fprintf(out, " %s ", al_dtype_name(f->dtype));
		print_shape(out, f->shape, f->rank);
	} else if (f->kind == AL_FEAT_IMAGE) {
		const char *cs = f->color_space == 10 ? "gray" : f->color_space == 20 ? "RGB"
			       : f->color_space == 30 ? "BGR" : f->color_space == 40 ? "gray fp16" : "?";
		fprintf(out, " %s", cs);
		if (f->rank == 2)
			fprintf(out, " %" PRId64 "x%" PRId64 " (HxW)", f->shape[0], f->shape[1]);
	}
	if (f->flex == AL_FLEX_ENUMERATED) {
		uint32_t r = f->kind == AL_FEAT_IMAGE ? 2 : f->rank;
		fprintf(out, ", enumerated %" PRIu32 " shapes:", f->n_shapes);
		for (uint32_t i = 0; i < f->n_shapes && i < 8 && r; i++) {
			fputc(' ', out);
			print_shape(out, f->flex_values + (size_t)i * r, r);
		}
		if (f->n_shapes > 8)
			fputs(" ...", out);
	} else if (f->flex == AL_FLEX_RANGE) {
		uint32_t r = f->kind == AL_FEAT_IMAGE ? 2 : f->rank;
		fputs(", range:", out);
		for (uint32_t i = 0; i < r; i++) {
			int64_t lo = f->flex_values[2 * i], hi = f->flex_values[2 * i + 1];
			if (hi < 0)
				fprintf(out, "%s %" PRId64 "..inf", i ? "," : "", lo);
			else
				fprintf(out, "%s %" PRId64 "..%" PRId64, i ? "," : "", lo, hi);
		}
	}
	if (f->optional)
		fputs(" (optional)", out);
	if (f->description && *f->description) {
		fputs("  -- ", out);
		ali_put_name(out, f->description, 60);
	}
	fputc('\n', out);
}

static void print_bytes(FILE *out, const char *label, uint64_t b)
{
	if (!b)
		return;
	if (b >= 1024 * 1024)
		fprintf(out, "  %s %.2f MB", label, b / (1024.0 * 1024.0));
	else
		fprintf(out, "  %s %.1f KB", label, b / 1024.0);
}

static void print_meta(FILE *out, const char *label, const char *v)
{
	if (!v || !*v)
		return;
	fprintf(out, "  %s: ", label);
	ali_put_name(out, v, 0);
	fputc('\n', out);
}

/* A classifier's labels: the count and the first 20. */
static void print_class_labels(FILE *out, const struct al_submodel *s)
{
	enum { SHOW = 20 };
	al_span str[SHOW];
	int64_t ints[SHOW];
	bool is_int = false;
	long n = s->world == AL_WORLD_NN ? ali_nn_class_labels(s, str, ints, SHOW, &is_int) : -1;
	if (n < 0)
		return;
	fprintf(out, "  class labels: %ld%s (", n, is_int ? " int64" : "");
	for (long i = 0; i < n && i < SHOW; i++) {
		fputs(i ? ", " : "", out);
		if (is_int) {
			fprintf(out, "%" PRId64, ints[i]);
		} else {
			char buf[256];
			size_t len = str[i].n < sizeof buf - 1 ? str[i].n : sizeof buf - 1;
			memcpy(buf, str[i].p, len);
			buf[len] = 0; /* a label holding NUL shows up to it */
			ali_put_name(out, buf, 64);
		}
	}
	fprintf(out, "%s)\n", n > SHOW ? ", ..." : "");
}

/* "  compressed weights: int4 per-block (block 32) x3, ..." for an ML Program's
 * constexpr ops (ali_mil_weight_form; every function's top-level block). */
static void print_weight_forms(FILE *out, const struct al_submodel *s)
{
	enum { MAX_FORMS = 16 };
	char forms[MAX_FORMS][80];
	unsigned counts[MAX_FORMS] = {0}, n = 0, other = 0;
	for (uint32_t gi = 0; s->world == AL_WORLD_MIL && gi < s->n_graphs; gi++)
		for (uint32_t i = 0; s->graphs[gi] && i < s->graphs[gi]->n_nodes; i++) {
			char f[80];
			if (!ali_mil_weight_form(&s->graphs[gi]->nodes[i], f, sizeof f))
				continue;
			unsigned k = 0;
			while (k < n && strcmp(forms[k], f) != 0)
				k++;
			if (k == n && n == MAX_FORMS) {
				other++;
				continue;
			}
			if (k == n)
				memcpy(forms[n++], f, sizeof f);
			counts[k]++;
		}
	if (!n)
		return;
	fputs("  compressed weights:", out);
	for (unsigned k = 0; k < n; k++)
		fprintf(out, "%s %s x%u", k ? "," : "", forms[k], counts[k]);
	if (other)
		fprintf(out, ", %u more", other);
	fputc('\n', out);
}

static void text_info(FILE *out, const struct al_report_item *items, size_t n,
		      const struct al_report_opts *o)
{
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		if (!items[i].model)
			continue;
		for (size_t k = 0; k < al_model_count(items[i].model); k++) {
			const struct al_submodel *s = al_model_get(items[i].model, k);
			if (!first)
				fputc('\n', out);
			first = false;
			print_header(out, s, o);
			fprintf(out, "  minimum OS: %s\n", al_spec_min_os(s->spec_version));
			if (s->world == AL_WORLD_NN)
				fprintf(out, "  shape mapping: arrays %s, images %s\n",
					s->array_mapping ? "EXACT (rank as declared)" : "RANK5 [S,B,C,H,W]",
					s->image_mapping ? "RANK4" : "RANK5");
			if (s->is_updatable)
				fputs("  updatable: yes\n", out);
			fprintf(out, "  inputs:\n");
			for (uint32_t f = 0; f < s->n_inputs; f++)
				print_feature(out, &s->inputs[f]);
			fprintf(out, "  outputs:\n");
			for (uint32_t f = 0; f < s->n_outputs; f++)
				print_feature(out, &s->outputs[f]);
			if (s->n_states) /* stateful models (read_state / write_state) */
				fprintf(out, "  states:\n");
			for (uint32_t f = 0; f < s->n_states; f++)
				print_feature(out, &s->states[f]);
			for (uint32_t f = 0; f < s->n_functions; f++) {
				fprintf(out, "  function ");
				ali_put_name(out, s->functions[f], 0);
				fprintf(out, " (opset ");
				ali_put_name(out, s->opsets[f], 0);
				bool dflt = s->n_functions > 1 && s->default_function &&
					    strcmp(s->default_function, s->functions[f]) == 0;
				fprintf(out, "%s)\n", dflt ? ", default" : "");
				/* a multifunction package: each function's own interface */
				for (uint32_t d = 0; s->n_functions > 1 && d < s->n_fdescs; d++) {
					const struct al_function_desc *fd = &s->fdescs[d];
					if (!fd->name || strcmp(fd->name, s->functions[f]) != 0)
						continue;
					for (uint32_t e = 0; e < fd->n_inputs; e++)
						print_feature_at(out, &fd->inputs[e], "    input  ");
					for (uint32_t e = 0; e < fd->n_outputs; e++)
						print_feature_at(out, &fd->outputs[e], "    output ");
					for (uint32_t e = 0; e < fd->n_states; e++)
						print_feature_at(out, &fd->states[e], "    state  ");
				}
			}
			if (s->n_graphs) {
				struct al_type_counts tc;
				ali_count_types(s, &tc);
				uint32_t total = 0;
				for (uint32_t t = 0; t < tc.n; t++)
					total += tc.items[t].count;
				fprintf(out, "  %s: %" PRIu32 " (", s->world == AL_WORLD_MIL ? "ops" : "layers",
					total);
				for (uint32_t t = 0; t < tc.n; t++) {
					fprintf(out, "%s", t ? ", " : "");
					ali_put_name(out, tc.items[t].type, 0);
					fprintf(out, " %" PRIu32, tc.items[t].count);
				}
				fprintf(out, "%s)\n", tc.truncated ? ", ..." : "");
			}
			if (s->n_children)
				fprintf(out, "  pipeline stages: %" PRIu32 "\n", s->n_children);
			print_class_labels(out, s);
			const struct al_weight_stats *w = &s->weights;
			if (w->fp32 || w->fp16 || w->quantized || w->other) {
				fputs("  weights:", out);
				print_bytes(out, "fp32", w->fp32);
				print_bytes(out, "fp16", w->fp16);
				print_bytes(out, "quantized", w->quantized);
				print_bytes(out, "other", w->other);
				fprintf(out, " (%" PRIu32 " tensors)\n", w->n_blobs);
			}
			print_weight_forms(out, s);
			print_meta(out, "description", s->short_description);
			print_meta(out, "author", s->author);
			print_meta(out, "license", s->license);
			print_meta(out, "version", s->version_string);
			for (uint32_t u = 0; u < s->n_user_defined; u++) {
				fputs("  ", out);
				ali_put_name(out, s->user_defined[u].key, 0);
				fputs(": ", out);
				ali_put_name(out, s->user_defined[u].value, 0);
				fputc('\n', out);
			}
		}
	}
}

/* ================================================================ streaming */

/* Several models, each written as it comes (a directory argument): the same text
 * as text_check / text_info / ali_text_plan over all of them, for models without
 * settings of their own (the caller streams only those). Not the --target all
 * matrix. */
struct text_stream {
	FILE *out;
	const struct al_report_opts *o;
	enum al_sink_cmd cmd;
	bool first;
};

static void *text_stream_begin(FILE *out, enum al_sink_cmd cmd, const struct al_report_opts *o)
{
	if (cmd == AL_SINK_CHECK && ali_multi(o))
		return NULL;
	struct text_stream *t = ali_calloc(1, sizeof *t);
	if (t)
		*t = (struct text_stream){.out = out, .o = o, .cmd = cmd, .first = true};
	return t;
}

static void text_stream_model(void *state, const struct al_report_item *it)
{
	struct text_stream *t = state;
	if (t->cmd == AL_SINK_CHECK) {
		text_check_item(t->out, it, t->o, false, &t->first);
		return;
	}
	if (!it->model)
		return;
	if (!t->first) /* a blank line between models, as over all of them */
		fputc('\n', t->out);
	t->first = false;
	if (t->cmd == AL_SINK_INFO)
		text_info(t->out, it, 1, t->o);
	else
		ali_text_plan(t->out, it, 1, t->o);
}

static void text_stream_end(void *state)
{
	struct text_stream *t = state;
	if (t->cmd == AL_SINK_CHECK && !t->first) /* what the verdicts are predicted for */
		print_prediction(t->out, t->o->check, t->o);
	ali_free(t);
}

const struct al_sink ali_sink_text = {
	.name = "text",
	.check = text_check,
	.info = text_info,
	.plan = ali_text_plan,
	.extensions = "txt",
	.stream_begin = text_stream_begin,
	.stream_model = text_stream_model,
	.stream_end = text_stream_end,
};
