/* report.h: report sinks (text, JSON) and what they share. A sink turns the
 * checked models into one output stream; all sinks see the same data, so a
 * new format (SARIF, HTML) is one more row in al_sinks[]. */
#ifndef ANELINT_REPORT_H
#define ANELINT_REPORT_H

#include "internal.h"

/* The sink interface itself is public (anelint.h); these are the helpers. */
extern const struct al_sink al_sink_text, al_sink_json;
extern const struct al_sink *const al_sinks[];
extern const size_t al_sinks_count;

/* ---- shared helpers */
typedef void (*al_node_fn)(void *ctx, const struct al_node *n);
/* Every node of a sub-model in model order; nested graphs right after their owner. */
void al_walk_nodes(const struct al_submodel *s, al_node_fn fn, void *ctx);
bool al_node_is_const(const struct al_node *n);

#define AL_SUMMARY_TOP 64
struct al_rule_count {
	const struct al_rule *rule;
	uint32_t count;
};
struct al_summary {
	uint32_t nodes;  /* layers / non-const ops */
	uint32_t consts; /* ML Program const ops (not counted in nodes) */
	uint32_t per_unit[AL_UNIT_COUNT];
	struct al_rule_count top[AL_SUMMARY_TOP]; /* most frequent first */
	uint32_t n_top;
	bool model_fallback; /* a model-level rule moves work off the ANE */
};
void al_summarize(const struct al_submodel *s, struct al_summary *sum);
bool al_summary_fails(const struct al_submodel *s, const struct al_summary *sum,
		      enum al_fail_on fail_on);

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
void al_count_types(const struct al_submodel *s, struct al_type_counts *tc);

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
int al_put_name(FILE *out, const char *s, int width);
/* al_put_name, then spaces up to `width` columns. */
void al_put_name_padded(FILE *out, const char *s, int width);
/* When n starts a new nested graph (function or block) print its dim header. */
void al_put_graph_header(FILE *out, const struct al_report_opts *o, const struct al_node *n,
			 const struct al_graph **last_graph);

/* ---- plan sinks (report_plan.c) and the --target all matrix of `check` (report_matrix.c) */
void al_text_plan(FILE *out, const struct al_report_item *items, size_t n,
		  const struct al_report_opts *o);
void al_json_plan(FILE *out, const struct al_report_item *items, size_t n,
		  const struct al_report_opts *o);
void al_text_check_matrix(FILE *out, const struct al_report_item *items, size_t n,
			  const struct al_report_opts *o);
/* Adds the matrix to a finished `check` JSON document: "targets" at the root and,
 * per model, "units_by_target" (counts) and per layer "units" (target id -> unit). */
struct json_object;
void al_json_check_matrix(struct json_object *root, const struct al_report_item *items, size_t n,
			  const struct al_report_opts *o);

/* A JSON string for text from a model file: invalid UTF-8 bytes become U+FFFD. */
struct json_object;
struct json_object *al_json_string(const char *s);

#endif
