/* SPDX-License-Identifier: MIT */
/* rules.h: what the rule table (rule_table.c), the engine (rule_engine.c) and the predicate files
 * (rules_nn.c, rules_mil.c, rules_model.c, rules_shape.c) share: the predicate
 * context and signature, one prototype per row of rules.def, and small helpers
 * for writing reasons and reading shapes.
 * A predicate only looks: it never allocates in the model and never prints;
 * it returns true when its rule fires and then writes a one-line reason. */
#ifndef ANELINT_RULES_H
#define ANELINT_RULES_H

#include "analysis.h"

/* What a predicate looks at. Node rules (AL_SCOPE_NN, AL_SCOPE_MIL): n is a
 * layer or a non-const op of s. Model rules (AL_SCOPE_MODEL): n is NULL and s is
 * one sub-model (pipeline stages included). t is the target being checked, never
 * NULL; a rule runs only for the families of its row, and a predicate may read
 * t's caps and features for the rest. The sub-model totals are filled once per
 * sub-model by the engine. */
struct al_rctx {
	const struct al_node *n;
	const struct al_submodel *s;
	const struct al_target *t;
	/* the OS release being checked, never NULL: read it through ali_rx_os(), which
	 * notes that the predicate's answer depends on it (rule_engine.c keeps the answers
	 * of the predicates that never read it for the next release of the same target) */
	const struct al_release *release;
	bool *os_read;
	double sub_flops;    /* FLOPs of every node of s (nested graphs included) */
	bool sub_cost_known; /* every non-const node of s has a known cost */
};
static inline const struct al_release *ali_rx_os(const struct al_rctx *c)
{
	if (c->os_read)
		*c->os_read = true;
	return c->release;
}
typedef bool al_rule_pred(const struct al_rctx *c, char *reason, size_t cap);
typedef al_rule_pred al_node_pred;
typedef al_rule_pred al_model_pred;

#define AL_NODE_RULE(id, name, scope, kind, unit, conf, fam, rel, catalog, pred, ...) al_node_pred pred;
#define AL_MODEL_RULE(id, name, scope, kind, unit, conf, fam, rel, catalog, pred, ...) al_model_pred pred;
#include "rules.def"
#undef AL_NODE_RULE
#undef AL_MODEL_RULE

/* The number of rows of rules.def, for arrays indexed by rule row. */
#define AL_NODE_RULE(...) +1
#define AL_MODEL_RULE(...) +1
enum { AL_N_RULES = 0
#include "rules.def"
};
#undef AL_NODE_RULE
#undef AL_MODEL_RULE
/* The predicate of built-in row i (rule_table.c), or NULL past the end. */
al_rule_pred *ali_rule_pred_at(size_t i);

/* The rule whose firing makes a node's unit unknown (al_verdict.unknown): a
 * compiled espresso layer of no known kind (rules.def). */
#define ALI_RULE_UNKNOWN_KIND "ANE057"

/* Bound on values read from one repeated parameter (kernel sizes, shapes, ...). */
#define AL_RX_MAX_DIMS 16

/* snprintf into reason; always terminates, truncates silently. Returns true so a
 * predicate can end with `return ali_rx_say(...)`. */
bool ali_rx_say(char *reason, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A model's weight bytes of every kind (fp32, fp16, quantized, other), saturating. */
uint64_t ali_rx_weights_total(const struct al_weight_stats *w);

/* "[2,2]" for n values (at most AL_RX_MAX_DIMS shown, then ",..."). */
const char *ali_rx_ints(char *buf, size_t cap, const int64_t *v, size_t n);
/* "15x15" for n values. */
const char *ali_rx_dims(char *buf, size_t cap, const int64_t *v, size_t n);

/* The node of n's graph (or an enclosing graph) whose outputs include `name`,
 * searching only nodes before n in model order; NULL if none (a model or block
 * input). Linear in the graph size: for the few rules that need it. */
const struct al_node *ali_rx_producer(const struct al_node *n, const char *name);

/* Whether name is a model input / output of s (description features). */
const struct al_feature *ali_rx_input(const struct al_submodel *s, const char *name);
const struct al_feature *ali_rx_output(const struct al_submodel *s, const char *name);

/* NN layer-table flags of n (0 when the layer type is unknown). */
unsigned ali_rx_nn_flags(const struct al_node *n);
/* MIL op-table flags of n (0 when the op type is unknown). */
static inline unsigned ali_rx_mil_flags(const struct al_node *n)
{ /* inline: every MIL rule asks it of every op */
	return n->kind >= 0 && (size_t)n->kind < ali_mil_kinds_count ? ali_mil_kinds[n->kind].flags : 0;
}
/* Whether n's type is one of the NULL-terminated names. */
bool ali_rx_type_in(const struct al_node *n, const char *const *names);

/* ---------------------------------------------------------------- shapes
 * Shapes come from al_model_infer_shapes (node->out_shapes, ali_node_in_shape),
 * else, for ML Programs, from the declared types. An unknown shape makes a shape
 * rule stay silent: it never guesses. */

/* The shape of n's output i; false if unknown (rank unknown). */
bool ali_rx_out_shape(const struct al_node *n, uint32_t i, struct al_shape *out);
/* The shape of n's input i (n->inputs[i]); false if unknown. */
bool ali_rx_in_shape(const struct al_node *n, uint32_t i, struct al_shape *out);
/* A declared type as a shape (tensor types only); false for none or a list/dict. */
bool ali_rx_ttype_shape(const struct al_ttype *t, struct al_shape *out);
/* Whether s has a known rank and every dim known. */
bool ali_rx_shape_known(const struct al_shape *s);
/* "[1,16,32,32]" ('?' for unknown dims, "[?]" for an unknown rank). */
const char *ali_rx_shape_str(char *buf, size_t cap, const struct al_shape *s);
/* Bytes per element as the ANE stores a tensor of this dtype: 1 for 8-bit
 * integer types, else 2 (fp16: NeuralNetwork blobs and fp32 values alike). */
unsigned ali_rx_elem_bytes(int dtype);

/* ---------------------------------------------------------------- user rules
 * user_rules.c, for the engine. A user rule either overrides a built-in rule
 * (base set: its metadata replaces the row's, the predicate stays) or is a rule
 * of its own that fires on every layer / op of one of its types. */
struct al_user_rule {
	struct al_rule rule;        /* first member: al_user_rule_at() hands out &ur->rule */
	const struct al_rule *base; /* the built-in rule it overrides, or NULL */
	const char **types;         /* a rule of its own: the layer / op types it matches */
	uint32_t n_types;
	const char *reason;         /* a rule of its own: the reason given (NULL: the title) */
	uint32_t line;              /* where it starts in its file */
};
/* Rule i of u in file order (u may be NULL: none). */
const struct al_user_rule *ali_user_rules_get(const al_user_rules *u, size_t i);
/* u's override of built-in rule `builtin`, or NULL. */
const struct al_user_rule *ali_user_rules_override(const al_user_rules *u,
						  const struct al_rule *builtin);
/* Whether n's type is one of ur's types. */
bool ali_user_rule_matches(const struct al_user_rule *ur, const struct al_node *n);

#endif
