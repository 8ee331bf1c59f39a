/* SPDX-License-Identifier: MIT */
/* report.h: report sinks (text, JSON) and what they share. A sink turns the
 * checked models into one output stream; all sinks see the same data, so a
 * new format (SARIF, HTML) is one more row in ali_sinks[]. */
#ifndef ANELINT_REPORT_H
#define ANELINT_REPORT_H

#include "analysis.h"

/* The sink interface itself is public (anelint.h); these are the helpers. */
extern const struct al_sink ali_sink_text, ali_sink_json;
/* The report sinks (anelint report): one file each, all over ali_each_plan. */
extern const struct al_sink ali_sink_html, ali_sink_sarif, ali_sink_markdown, ali_sink_dot;
extern const struct al_sink ali_sink_github; /* report_github.c */
extern const struct al_sink ali_sink_mil; /* info --format mil: report_mil.c */
extern const struct al_sink *const ali_sinks[];
extern const size_t ali_sinks_count;

/* ---- shared helpers */

#define AL_SUMMARY_TOP 64
#define AL_SUMMARY_MOVES 16
struct al_rule_count {
	const struct al_rule *rule;
	uint32_t count;
};
struct al_summary {
	uint32_t nodes;  /* layers / non-const ops */
	uint32_t consts; /* ML Program const ops (not counted in nodes) */
	uint32_t per_unit[AL_UNIT_COUNT]; /* by final placement (al_verdict.placed) */
	uint32_t eligible;                /* ANE-eligible by their own verdict (al_verdict.ane) */
	uint32_t unknown;                 /* unit unknown (al_verdict.unknown), not in per_unit */
	uint32_t moved;                   /* placed elsewhere than their own verdict says */
	const struct al_rule *moved_by;   /* the rule that moved most of them, or NULL */
	/* the moves by rule (al_verdict.moved_by), most first: every sink says the same */
	struct al_move_count {
		const struct al_rule *rule;
		uint32_t count;
		uint32_t per_unit[AL_UNIT_COUNT]; /* where it moved them */
	} moves[AL_SUMMARY_MOVES];
	uint32_t n_moves;
	/* layers/ops a model-level rule (ANE040, ANE071, ...) moved that have no
	 * rule of their own: their rows say nothing the model's finding does not */
	const struct al_rule *whole_model;
	uint32_t whole_rows;
	struct al_rule_count top[AL_SUMMARY_TOP]; /* most frequent first */
	uint32_t n_top;
	bool model_fallback; /* a model-level rule moves work off the ANE */
	uint32_t verdicts[3];             /* by al_ane_verdict (issue #30) */
	uint32_t sure_off[AL_UNIT_COUNT]; /* per_unit off the ANE, verdict not_ane only */
	uint32_t uncertain_ane;           /* uncertain and placed on the ANE (best guess) */
};
/* v: the view of s to count (NULL: the model's own verdicts and findings). */
struct al_view;
/* Who moved a node off its own verdict: the rule's id, or the policy's reason
 * ("cpu_sticks", "resolved", ...). */
const char *ali_moved_by(const struct al_verdict *v);
/* ali_verdict_moved (analysis.h): whether the final placement differs from the op's own verdict. */
/* The unit a sink shows for a node's final placement: "unknown" when its
 * unit is unknown and the partition left it with the ANE work around it. */
const char *ali_placed_name(const struct al_verdict *v);
/* Why a verdict is uncertain, with the rule whose evidence does not reach it:
 * "ANE040: no report observed it on this OS release"; "" when it is not uncertain. */
const char *ali_uncertain_text(const struct al_verdict *v, char *buf, size_t cap);
void ali_summarize(const struct al_submodel *s, const struct al_view *v, struct al_summary *sum);
/* Where the rule r moved the summary's layers/ops ("cpu", "gpu", "gpu and cpu"),
 * or NULL when it moved none: what a model-level finding's "(-> unit)" says. */
const char *ali_moved_to(const struct al_summary *sum, const struct al_rule *r);
/* The moves as text: "516 moved: 312 by ANE073, 204 by ANE072" (one rule:
 * "1 moved by ANE071"); nothing when none. */
void ali_put_moves(FILE *out, const struct al_summary *sum);
bool ali_summary_fails(const struct al_submodel *s, const struct al_view *v,
		      const struct al_summary *sum, enum al_fail_on fail_on);

#define AL_TYPE_COUNTS_MAX 256
struct al_type_count {
	const char *type;
	uint32_t count;
};
struct al_type_counts {
	struct al_type_count items[AL_TYPE_COUNTS_MAX];
	uint32_t n;
	bool truncated;
};
void ali_count_types(const struct al_submodel *s, struct al_type_counts *tc);

/* ANSI colours of the text sinks; al_col() gives "" unless colour is on. */
#define C_RESET "\033[0m"
#define C_GREEN "\033[32m"
#define C_RED "\033[31m"
#define C_YELLOW "\033[33m"
#define C_BOLD "\033[1m"
#define C_DIM "\033[2m"

static inline const char *al_col(const struct al_report_opts *o, const char *c)
{
	return o && o->color ? c : "";
}

/* The colour of a unit: ANE green, GPU yellow, anything else red. */
static inline const char *al_unit_colour(enum al_unit u)
{
	return u == AL_UNIT_ANE ? C_GREEN : u == AL_UNIT_GPU ? C_YELLOW : C_RED;
}

/* Print a name from a model file with control bytes escaped, cut to `width`
 * columns when width > 0; returns the columns written (report.c). */
int ali_put_name(FILE *out, const char *s, int width);
/* The reason when o accepts the finding of rule r on `layer` of s (NULL: a
 * model-level finding), *kind set to "config", "metadata" or "baseline"; NULL
 * when it is not accepted (or o has no o->accepted). */
const char *ali_accepted(const struct al_report_opts *o, const struct al_submodel *s, const char *layer,
			 const struct al_rule *r, const char **kind);
/* ---- failing findings (report.c): what makes a check fail, named as a
 * baseline, a suppression and --ignore name it (rule id, layer). A layer/op
 * whose final placement is off the ANE, on a unit fail_on counts, has one
 * finding per non-warning rule of its own and one for the rule that moved it
 * (al_verdict.moved_by: a partition rule ANE072-076 keyed by the layer, a
 * whole-model move ANE040, ANE071 ... keyed by the model, layer NULL); a
 * model without layers has its model-level findings. A finding fails unless it
 * is accepted, or (a move) its rule is switched off by the selection co. A
 * move that follows other work (ali_move_follows: ANE073-075, downstream of
 * GPU work, of a CPU-only op, nested in its owner) follows its cause: the layer
 * that sent the work away is the finding, and accepting it accepts what
 * followed; such a move never fails by itself (it can still be named). */
bool ali_reason_fails(const struct al_report_opts *o, const struct al_check_opts *co, const struct al_view *v,
		      const struct al_submodel *s, const struct al_node *n, const struct al_rule *r, bool move);
bool ali_move_follows(const struct al_verdict *v);
/* The layer a move finding is keyed by: n's name, NULL for a whole-model move. */
const char *ali_move_layer(const struct al_node *n, const struct al_verdict *v);
/* fn(ctx, node, rule) per failing finding of s in v (node NULL: the model's,
 * once per rule; a whole-model move comes once, not per layer); the count. */
typedef void (*ali_fail_fn)(void *ctx, const struct al_node *n, const struct al_rule *r);
uint32_t ali_each_failing(const struct al_report_opts *o, const struct al_check_opts *co, const struct al_view *v,
			  const struct al_submodel *s, ali_fail_fn fn, void *ctx);
struct ali_failing {
	uint32_t n;
	struct al_rule_count by_rule[AL_SUMMARY_TOP]; /* most frequent first */
	uint32_t n_rules;
};
void ali_failing_add(void *ctx, const struct al_node *n, const struct al_rule *r); /* an ali_fail_fn */
void ali_failing_count(const struct al_report_opts *o, const struct al_check_opts *co, const struct al_view *v,
		       const struct al_submodel *s, struct ali_failing *out);
/* " --shape NAME=default" for each model input of s whose flexibility is flex
 * (AL_FLEX_RANGE / AL_FLEX_ENUMERATED), skipping the first such when skip_first:
 * the arguments of the `anelint fix` command check and plan print (report.c). */
void ali_put_default_shapes(FILE *out, const struct al_submodel *s, int flex, bool skip_first);
/* The columns ali_put_name(out, s, 0) writes: the whole name, escaped. */
int ali_name_cols(const char *s);
/* ali_put_name, then spaces up to `width` columns. */
/* n spaces (|n| when negative, as printf's "%*s" of ""), without printf: the
 * text table pads every column of every row, and glibc's "%*s" takes its slow
 * positional path (7% of a 27k-op check). */
void ali_put_spaces(FILE *out, int n);
void ali_put_name_padded(FILE *out, const char *s, int width);
/* When n starts a new nested graph (function or block) print its dim header. */
void ali_put_graph_header(FILE *out, const struct al_report_opts *o, const struct al_node *n,
			 const struct al_graph **last_graph);

/* ---- plan sinks (report_plan.c) and the --target all matrix of `check` (report_matrix.c) */
void ali_text_plan(FILE *out, const struct al_report_item *items, size_t n,
		  const struct al_report_opts *o);
void ali_json_plan(FILE *out, const struct al_report_item *items, size_t n,
		  const struct al_report_opts *o);
void ali_text_check_matrix(FILE *out, const struct al_report_item *items, size_t n,
			  const struct al_report_opts *o);
/* A JSON string for text from a model file: invalid UTF-8 bytes become U+FFFD. */
struct json_object;
struct json_object *ali_json_string(const char *s);
/* The length of the valid UTF-8 sequence s starts with (1 for ASCII), 0 when
 * s[0] does not start one. */
size_t ali_utf8_seq(const unsigned char *s);

/* ---- a JSON document written as a stream (report_jsonw.c): the bytes json-c
 * writes for the same tree (PRETTY | SPACED | NOSLASHESCAPE), strings made valid
 * UTF-8 as ali_json_string does, without building the tree (why: the file's
 * head comment). Each value takes its key (NULL in an array and at the root);
 * a container is closed by ali_jw_end. Write errors stay in ferror(out). */
#define ALI_JW_MAX_DEPTH 32
struct ali_jw {
	FILE *out;
	size_t n;
	unsigned depth;
	bool obj[ALI_JW_MAX_DEPTH], had[ALI_JW_MAX_DEPTH];
	char *buf; /* 64 KiB, else (out of memory) `small` */
	size_t cap;
	char small[256];
};
void ali_jw_init(struct ali_jw *w, FILE *out);
/* The closing newline json-c's callers print; flushes the buffer into out and frees it. */
void ali_jw_finish(struct ali_jw *w);
void ali_jw_object(struct ali_jw *w, const char *key);
void ali_jw_array(struct ali_jw *w, const char *key);
void ali_jw_end(struct ali_jw *w);
void ali_jw_str(struct ali_jw *w, const char *key, const char *s); /* NULL: null */
void ali_jw_int(struct ali_jw *w, const char *key, int64_t v);
void ali_jw_bool(struct ali_jw *w, const char *key, bool b);
void ali_jw_null(struct ali_jw *w, const char *key);
void ali_jw_raw(struct ali_jw *w, const char *key, const char *text); /* a number as text */
void ali_jw_tree(struct ali_jw *w, const char *key, struct json_object *j); /* NULL: null */
/* Elements of an array written apart, then spliced into the document: the
 * writer over `part` continues inside an array open at nesting `depth` (the
 * depth of the array ali_jw_splice will put them in); ali_jw_end_elements flushes
 * it (no newline) and says whether it wrote any; ali_jw_splice copies part, from
 * its start, into w's open array. false: part could not be read back. */
void ali_jw_init_elements(struct ali_jw *w, FILE *part, unsigned depth);
bool ali_jw_end_elements(struct ali_jw *w);
bool ali_jw_splice(struct ali_jw *w, FILE *part, bool any);
/* The members every model object of check's and plan's JSON opens with: path, file,
 * type, spec_version, min_os, depth (report_json.c; info_head: the same in info's tree). */
void ali_jw_submodel_head(struct ali_jw *w, const struct al_submodel *s);

/* The --target all matrix of a streamed `check` JSON document (report_matrix.c):
 * "targets" (or "releases", "columns") at the root; per model "units_by_target"
 * (counts per column) and per layer (row: the walk order of its sub-model k)
 * "units" (column id -> unit). ali_matrix_record: every column's units of the
 * item's model, NULL when out of memory (the units are then left out). */
struct sub_rec;
struct sub_rec *ali_matrix_record(const struct al_report_item *it, const struct al_report_opts *o);
void ali_matrix_free(struct sub_rec *rec, const struct al_report_item *it);
void ali_jw_matrix_columns(struct ali_jw *w, const struct al_report_opts *o);
void ali_jw_matrix_model(struct ali_jw *w, const struct sub_rec *rec, size_t k, const struct al_report_opts *o);
void ali_jw_matrix_layer(struct ali_jw *w, const struct sub_rec *rec, size_t k, uint32_t row,
			 const struct al_report_opts *o);

/* ---- evidence against the prediction (report_evidence.c, docs/evidence.md)
 * One evidence file's entry of the anelint-compare document, and the document;
 * `compare --format json` prints it, the report sinks render al_comparison's. */
struct al_evidence;
struct al_cmp;
struct al_comparison {
	struct json_object *doc; /* anelint-compare, docs/evidence.md */
};
struct json_object *ali_compare_entry(const char *path, const struct al_evidence *e, const struct al_target *t,
				      const struct al_release *os, enum al_compute_units cu, const struct al_cmp *c);
/* takes `entries` (an array of ali_compare_entry) */
struct json_object *ali_compare_doc(const char *model, struct json_object *entries, size_t matched, size_t agreed);
struct json_object *ali_comparison_json(const al_comparison *c); /* a new reference, or NULL */
void ali_html_comparisons(FILE *out, const struct al_report_item *items, size_t n);
void ali_md_comparisons(FILE *out, const struct al_report_item *items, size_t n);

/* ---- text from a model file in a document format (report.c)
 * Names, types, reasons and user rule texts are untrusted: any bytes. ali_put_esc
 * writes s as valid UTF-8 (each invalid byte U+FFFD), shows control characters
 * (C0, DEL, C1) and the bidirectional overrides (U+202A-202E, U+2066-2069) as
 * visible "\xNN" / "\uNNNN" text, and escapes what the format needs:
 *   AL_ESC_TEXT  nothing more (terminal text, like ali_put_name)
 *   AL_ESC_HTML  & < > " ' as character references (element text and quoted
 *                attribute values, also inside inline SVG)
 *   AL_ESC_MD    the ASCII characters that could make markup backslash-escaped
 *                (CommonMark and GitHub tables: no markup, link, autolink, mention,
 *                HTML or cell break), the rest as it is, so it reads as text
 *   AL_ESC_DOT   " and \ backslash-escaped (a double-quoted Graphviz string)
 * At most `max` characters shown when max > 0 (an escape shown as "\\x01" counts
 * 4; U+2026 ends a cut text). Returns the characters shown. */
enum al_esc { AL_ESC_TEXT, AL_ESC_HTML, AL_ESC_MD, AL_ESC_DOT };
size_t ali_put_esc(FILE *out, const char *s, enum al_esc esc, size_t max);

/* ---- what the sinks show (report_analyze.c)
 * One sub-model as al_report_analyze saw it for one target: its plan, and the
 * verdicts and model findings of that target's check. Sinks read a node's
 * verdict through ali_view_verdict, never node->verdict, since with --target all
 * the model holds only the requested target's. */
struct sub_index;
struct al_view {
	const struct al_submodel *s;
	const struct al_target *target;
	const struct al_release *os; /* the release of its check (NULL: the check options') */
	const struct al_plan *plan; /* owned by the analysis; NULL: not planned (error says why) */
	const char *error;          /* why the check for this target, or the plan, failed */
	/* NULL: the model's own (the requested check's); else one per node of the
	 * graphs of `index`, copied after the target's check */
	const struct al_verdict *verdicts;
	const struct al_finding *findings; /* with verdicts: the target's model findings */
	uint32_t n_findings;
	const struct sub_index *index;
};
/* Where the verdicts of one graph start in a view's verdict array. */
struct graph_slot {
	uintptr_t graph;
	uint32_t base;
};

/* The graphs of one sub-model (every node's owner), sorted by address: a
 * snapshot keeps a verdict per node of each, in the graph's own order. */
struct sub_index {
	struct graph_slot *graphs;
	uint32_t n_graphs;
	uint32_t n_slots;
};

/* ---- the deployment range (issue #30): a model converted for iOS 15 runs on
 * every release from 15 up. al_report_analyze (report_analyze.c) checks it for
 * each of them, oldest first, the newest last (the model is left as the
 * caller checked it), reusing the parsed model and its shapes; per node it
 * keeps one cell per release: the final placement, the verdict and the op's
 * own unit. The sinks read it through report.c (they never check). */
#define ALI_RANGE_UNKNOWN 0xffu /* a unit unknown (ANE057) */
struct ali_range_cell {
	uint8_t unit;    /* the final placement (enum al_unit), or ALI_RANGE_UNKNOWN */
	uint8_t verdict; /* enum al_ane_verdict */
	uint8_t own;     /* the op's own unit (AL_UNIT_ANE when eligible), or ALI_RANGE_UNKNOWN */
	const struct al_rule *rule; /* the first rule that moves the op itself off the ANE, or NULL */
};
#define ALI_RANGE_VARIES 1u     /* unit or verdict differs inside the range */
#define ALI_RANGE_OWN_VARIES 2u /* the op's own verdict differs (a rule scoped by release) */
struct ali_range {
	int lo, hi; /* release indices (al_release_at), lo < hi; both -1 when not evaluated */
	struct ali_range_sub {
		const struct sub_index *index;
		struct ali_range_cell *cells; /* [slot * (hi - lo + 1) + (release - lo)] */
		uint8_t *flags;               /* per slot: ALI_RANGE_VARIES | ALI_RANGE_OWN_VARIES */
		uint32_t varying, own_varying; /* nodes (const ops not counted) */
	} *subs; /* one per sub-model */
};
/* A run of neighbouring releases of the range with the same cell (unit, verdict, own unit). */
struct ali_range_group {
	int lo, hi; /* release indices */
	uint8_t unit, verdict, own;
	const struct al_rule *rule;
};
/* The range item it was evaluated over: false when it was not (--os, several
 * columns, a model whose minimum is the newest release). */
bool ali_range_of(const struct al_report_item *it, int *lo, int *hi);
/* The nodes of sub-model k whose unit or verdict differs inside the range
 * (*own: those whose own verdict differs); 0 when not evaluated. */
uint32_t ali_range_varying(const struct al_report_item *it, size_t k, uint32_t *own);
/* The cells of node n of sub-model k (hi - lo + 1, oldest first) and its
 * ALI_RANGE_* flags, or NULL when n does not vary (or no range). */
const struct ali_range_cell *ali_range_node(const struct al_report_item *it, size_t k, const struct al_node *n,
					    unsigned *flags);
/* cells[0 .. hi-lo] as runs of equal cells, oldest first; the count
 * (at most cap written). */
size_t ali_range_groups(const struct ali_range_cell *cells, int lo, int hi, struct ali_range_group *out,
			size_t cap);
/* "iOS 15" or "iOS 15-16" (text), "ios15" or "ios15..ios16" (JSON ids) */
void ali_range_name(char *buf, size_t cap, int lo, int hi, bool ids);
/* The unit of a cell as the text shows it: "ANE", "GPU", "CPU", "unknown" */
const char *ali_range_unit_upper(uint8_t unit);
/* The unit as JSON names it: "ane", "gpu", "cpu", "unknown" */
const char *ali_range_unit_name(uint8_t unit);

/* What al_report_analyze computed for one model (report_analyze.c writes it,
 * report.c reads it for the sinks). */
struct al_analysis {
	size_t n_targets, n_subs; /* n_targets: columns, one per target or (all_releases) release */
	bool all_targets, all_releases;
	bool columns; /* the explicit columns of al_report_opts.columns */
	struct al_check_opts check_opts; /* what the item was analysed with (a model may have its own) */
	enum al_status *check; /* per target: the status of its check */
	struct al_view *views; /* [t * n_subs + k] */
	struct sub_index *index;
	struct al_arena arena; /* views, indexes, verdict copies, messages */
	struct ali_range range; /* the deployment range (al_report_opts.deployment_range) */
};

/* The check options item it was analysed with (a model's own, from a
 * configuration's [[model]]), else o->check (NULL when neither). */
const struct al_check_opts *ali_item_check(const struct al_report_item *it, const struct al_report_opts *o);
/* Whether the item was checked for another target, release or compute units than o says. */
bool ali_item_own_prediction(const struct al_report_item *it, const struct al_report_opts *o);

/* Compares two graph_slot by graph address (the order of sub_index.graphs). */
int ali_graph_slot_cmp(const void *a, const void *b);
/* The verdict of a node a snapshot has no slot for: none. */
extern const struct al_verdict ali_no_verdict;

/* The verdict of node n (of v->s) in v; v NULL: n's own. */
const struct al_verdict *ali_view_verdict(const struct al_view *v, const struct al_node *n);
/* The model-level findings of s in v (v NULL: s's own); their count. */
uint32_t ali_view_findings(const struct al_view *v, const struct al_submodel *s,
			  const struct al_finding **out);
/* The view of sub-model k for target t (the analysed targets: every family with
 * --target all, else the requested one), or NULL when that target's check failed. */
const struct al_view *ali_analysis_view(const al_analysis *a, size_t t, size_t k);

/* Every view of a report, in order: per model, per target, per sub-model. A
 * target whose check failed is one call, for the first sub-model, with
 * v->plan NULL and v->error set; so is a model never analysed. */
typedef void (*al_plan_fn)(void *ctx, const struct al_report_item *it, const struct al_view *v);
void ali_each_plan(const struct al_report_item *items, size_t n, const struct al_report_opts *o,
		  al_plan_fn fn, void *ctx);

/* "ANE", "GPU", "CPU", "GPU/CPU", "-" */
const char *ali_unit_upper(enum al_unit u);
/* 1234567 -> "1.23 M" */
const char *ali_si(char *buf, size_t cap, double v);
/* The rules a report lists, in the order of `anelint rules`: every built-in rule
 * (a user override in its place), then the user file's new rules. *out is
 * ali_malloc'd (NULL and 0 when that fails); ali_free it. */
size_t ali_rule_list(const al_user_rules *u, const struct al_rule ***out);

/* ---- a planned sub-model as rows and as a graph (report_graph.c) */
struct al_row {
	const struct al_node *node;
	const struct al_verdict *verdict; /* the node's, in the view the graph was built for */
	uint32_t index;  /* model order (the JSON "index"), nested graphs included */
	int32_t plan;    /* index into the plan's per-node arrays, -1 if not planned (const ops) */
	int32_t dag;     /* node of the collapsed graph it is drawn as (itself, or the
			    top-level layer/op it is nested in), -1 when not drawn (const) */
};
/* The collapsed dataflow graph: the top-level layers/ops of every function
 * (const ops and loadConstant layers left out, nested graphs folded into the
 * layer/op that owns them),
 * in model order, and an edge wherever one reads what another wrote. */
struct al_dag {
	struct al_row *rows;   /* every node in model order */
	uint32_t n_rows, n_consts; /* n_consts: ML Program const ops (not layers) */
	uint32_t n_hidden;     /* layers left out of the graph (loadConstant) */
	uint32_t *top;         /* rows[] index of each graph node */
	uint32_t *nested;      /* nodes folded into each graph node */
	uint32_t n;
	struct al_edge {
		uint32_t from, to; /* graph nodes, from < to; sorted by `to` */
	} *edges;
	uint32_t n_edges;
	struct al_row_ref {
		uintptr_t node;
		uint32_t row;
	} *by_node; /* rows sorted by node address, for ali_dag_row_of */
};
/* Build it for the sub-model of v, its plan (NULL: no plan indices) and its
 * verdicts. False when out of memory (then nothing is held). */
bool ali_dag_build(const struct al_view *v, struct al_dag *g);
void ali_dag_free(struct al_dag *g);
/* The rows[] index of node n, -1 if it is not in g. */
long ali_dag_row_of(const struct al_dag *g, const struct al_node *n);
/* The unit the plan places row r on (its verdict when unplanned). */
enum al_unit ali_row_unit(const struct al_row *r, const struct al_plan *p);
/* Whether the plan moved row r off the ANE though its own verdict keeps it there. */
bool ali_row_moved(const struct al_row *r, const struct al_plan *p);

/* The columns of check --target all / --os all (report_matrix.c): how many, and
 * column t's id and name: a chip family, or with o->all_releases an OS release. */
size_t ali_columns(const struct al_report_opts *o);
/* Several columns: --target all, --os all, or explicit o->columns. */
static inline bool ali_multi(const struct al_report_opts *o)
{
	return o && (o->all_targets || o->all_releases || o->n_columns);
}
/* What varies between the columns (both with a cross product of lists). */
#define ALI_COL_TARGETS 1u
#define ALI_COL_RELEASES 2u
unsigned ali_column_axes(const struct al_report_opts *o);
/* The target and the release column t is checked for (NULL: the check's own). */
const struct al_target *ali_column_target(const struct al_report_opts *o, size_t t);
const struct al_release *ali_column_os(const struct al_report_opts *o, size_t t);
const char *ali_column_id(const struct al_report_opts *o, size_t t);
const char *ali_column_name(const struct al_report_opts *o, size_t t);

/* ---- a layer's / op's parameters in words (report_params.c), for the HTML
 * graph's panel: "name: value" lines (kernelSize: [3, 3], padding: same, weight:
 * fp16 [64, 3, 3, 3], stored int4 per-block ...), weights as their type, shape
 * and storage form, never their values. Text from the model: escape it. Returns
 * the length written to buf (cut at cap). */
size_t ali_node_params(const struct al_node *n, char *buf, size_t cap);

/* ---- the project configuration (config.c): anelint.toml, a subset of TOML
 * (docs/configuration.md). Entries in file order; the CLI gives them meaning. */
enum ali_cfg_type { AL_CFG_STRING, AL_CFG_BOOL, AL_CFG_INT, AL_CFG_ARRAY };
struct ali_cfg_value {
	enum ali_cfg_type type;
	char *s;      /* AL_CFG_STRING */
	bool b;       /* AL_CFG_BOOL */
	long long i;  /* AL_CFG_INT */
	char **items; /* AL_CFG_ARRAY: every value as text */
	size_t n_items;
};
struct ali_cfg_entry {
	char *table;      /* NULL: the top level */
	uint32_t index;   /* [[table]]: which element, 0 first */
	bool array_table; /* from a [[table]] header */
	char *key;
	struct ali_cfg_value v;
	uint32_t line;
};
struct ali_config {
	struct ali_cfg_entry *e;
	size_t n;
};
/* Parse text (n bytes; name for the diagnostics): AL_OK and *out, or
 * AL_E_FORMAT with one located error per problem ("line L, column C"). */
enum al_status ali_config_parse(const char *text, size_t n, const char *name, struct ali_config **out,
				al_diags *d);
/* Read and parse a file (ali_open_regular; at most 256 KiB). */
enum al_status ali_config_load(const char *path, struct ali_config **out, al_diags *d);
void ali_config_free(struct ali_config *c);

#endif
