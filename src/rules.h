/* rules.h: what the rule table (rules.c) and the predicate files
 * (rules_nn.c, rules_mil.c, rules_model.c) share: the predicate signatures,
 * one prototype per row of rules.def, and small helpers for writing reasons.
 * A predicate only looks: it never allocates in the model and never prints;
 * it returns true when its rule fires and then writes a one-line reason. */
#ifndef ANELINT_RULES_H
#define ANELINT_RULES_H

#include "internal.h"

/* Node rules (AL_SCOPE_NN, AL_SCOPE_MIL): n is a layer or a non-const op of s. */
typedef bool al_node_pred(const struct al_node *n, const struct al_submodel *s, char *reason,
			  size_t cap);
/* Model rules (AL_SCOPE_MODEL): s is one sub-model (pipeline stages included). */
typedef bool al_model_pred(const struct al_submodel *s, char *reason, size_t cap);

#define AL_NODE_RULE(id, name, scope, kind, unit, conf, catalog, pred, ...) al_node_pred pred;
#define AL_MODEL_RULE(id, name, scope, kind, unit, conf, catalog, pred, ...) al_model_pred pred;
#include "rules.def"
#undef AL_NODE_RULE
#undef AL_MODEL_RULE

/* Bound on values read from one repeated parameter (kernel sizes, shapes, ...). */
#define AL_RX_MAX_DIMS 16

/* snprintf into reason; always terminates, truncates silently. Returns true so a
 * predicate can end with `return al_rx_say(...)`. */
bool al_rx_say(char *reason, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "[2,2]" for n values (at most AL_RX_MAX_DIMS shown, then ",..."). */
const char *al_rx_ints(char *buf, size_t cap, const int64_t *v, size_t n);
/* "15x15" for n values. */
const char *al_rx_dims(char *buf, size_t cap, const int64_t *v, size_t n);

/* The node of n's graph (or an enclosing graph) whose outputs include `name`,
 * searching only nodes before n in model order; NULL if none (a model or block
 * input). Linear in the graph size: for the few rules that need it. */
const struct al_node *al_rx_producer(const struct al_node *n, const char *name);

/* Whether name is a model input / output of s (description features). */
const struct al_feature *al_rx_input(const struct al_submodel *s, const char *name);
const struct al_feature *al_rx_output(const struct al_submodel *s, const char *name);

/* NN layer-table flags of n (0 when the layer type is unknown). */
unsigned al_rx_nn_flags(const struct al_node *n);
/* MIL op-table flags of n (0 when the op type is unknown). */
unsigned al_rx_mil_flags(const struct al_node *n);
/* Whether n's type is one of the NULL-terminated names. */
bool al_rx_type_in(const struct al_node *n, const char *const *names);

#endif
