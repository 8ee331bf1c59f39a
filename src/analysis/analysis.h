/* SPDX-License-Identifier: MIT */
/* analysis.h: what the analysis stage (shapes, cost, rules, targets, check,
 * plan) shares with the stages above it, beyond the public header. */
#ifndef ANELINT_ANALYSIS_H
#define ANELINT_ANALYSIS_H

#include "model.h"

/* ------------------------------------------------------------------ targets
 * Chip families in targets.def order; a rule's `families` is a bit set over them
 * (bit i = al_target_at(i)). AL_FAM_FROM(a15) = a15 and newer, AL_FAM_UPTO(a14) =
 * a14 and older. */
enum {
#define AL_TARGET(id, ...) AL_FAMIDX_##id,
#include "targets.def"
#undef AL_TARGET
	AL_FAM_COUNT
};
#define AL_FAM(id) (1u << AL_FAMIDX_##id)
#define AL_FAM_ALL ((1u << AL_FAM_COUNT) - 1u)
#define AL_FAM_FROM(id) (AL_FAM_ALL & ~(AL_FAM(id) - 1u))
#define AL_FAM_UPTO(id) ((AL_FAM(id) << 1) - 1u)
/* Index of t in the table, or -1 when t is not one of its rows. */
int ali_target_index(const struct al_target *t);
/* Parse a families list ("all", "none", "a15+", "a12..a14", "m1, a16", ...) into a
 * bit set; false (and *out untouched) on an unknown name or bad syntax, with the
 * offending word in bad (may be NULL). */
bool ali_families_parse(const char *s, uint32_t *out, char *bad, size_t bad_cap);

/* ------------------------------------------------------------------ OS releases
 * Releases in releases.def order; a rule's `releases` is a bit set over them (bit
 * i = al_release_at(i)). AL_REL_FROM(ios15) = iOS 15 and newer, AL_REL_UPTO(ios14)
 * = iOS 14 and older. */
enum {
#define AL_RELEASE(id, ...) AL_RELIDX_##id,
#include "releases.def"
#undef AL_RELEASE
	AL_REL_COUNT
};
#define AL_REL(id) (1u << AL_RELIDX_##id)
#define AL_REL_ALL ((1u << AL_REL_COUNT) - 1u)
#define AL_REL_FROM(id) (AL_REL_ALL & ~(AL_REL(id) - 1u))
#define AL_REL_UPTO(id) ((AL_REL(id) << 1) - 1u)
int ali_release_index(const struct al_release *r);
bool ali_releases_parse(const char *s, uint32_t *out, char *bad, size_t bad_cap);

/* ------------------------------------------------------------------ id sets (idset.c)
 * A set of rows of a small table named by id or alias (families, releases). */
struct al_idset {
	size_t n;                                /* rows, at most 32 */
	const char *(*id)(size_t i);             /* row i's id */
	int (*find)(const char *s, size_t n);    /* row of an id or alias, or -1 */
};
/* Whether `word` (n bytes) is one of the comma-separated names in list. */
bool ali_idset_in_list(const char *list, const char *word, size_t n);
/* The set as text: "all", "none", "x+", "x..y", or "x,y"; snprintf-like. */
size_t ali_idset_format(const struct al_idset *t, uint32_t bits, char *buf, size_t cap);
/* Parse a comma-separated list of "all", "none", "x", "x+", "x..y"; false (and
 * *out untouched) on an unknown name or bad syntax, the offending word in bad. */
bool ali_idset_parse(const struct al_idset *t, const char *s, uint32_t *out, char *bad, size_t bad_cap);

/* ------------------------------------------------------------------ shapes (shapes.c)
 * Valid after al_model_infer_shapes (al_model_check runs it first). Output
 * shapes are node->out_shapes; these give the inputs. */
/* The shape of input i of node n (n->inputs[i]), or NULL when unknown. */
const struct al_shape *ali_node_in_shape(const struct al_node *n, uint32_t i);
/* MIL: the shape of the value bound to parameter `param` of op n (its first
 * binding; a literal binding gives its declared type). False when absent or
 * the rank is unknown. */
bool ali_mil_param_shape(const struct al_node *n, const char *param, struct al_shape *out);
/* "[1,16,32,32]": "?" for an unknown dim, "64*" for a flexible one, "[?...]"
 * for an unknown rank (s NULL included), "[]" for a scalar. */
void ali_shape_format(const struct al_shape *s, char *buf, size_t cap);

/* ------------------------------------------------------------------ rules */
enum al_status ali_rules_run(struct al_model *m, const struct al_check_opts *opts, al_diags *d);

/* ------------------------------------------------------------------ the work floor
 * Too little work for the ANE (work_floor.c; docs/partition.md "Too little work",
 * calibrated on tests/observed): an ANE segment (ANE072), or a whole model
 * (ANE071), that does less than 200 MFLOP, reads fewer weight bytes than the
 * release's floor (2.2 MB up to iOS 18, 6 MB from iOS 26) and moves less than
 * 128 MB of activations stays on the CPU, unless it holds 8 or more ops doing
 * 20 MFLOP in all. */
struct al_work {
	double flops, weight_bytes, act_bytes;
	uint32_t ops;
	bool known; /* every op's cost is known */
	bool deep;  /* holds a deep decode linear (ali_work_deep_decode): never too little */
};
/* larql (macOS 15): a decode-shaped linear (at most 8 rows) whose reduction depth
 * is at least 4992 with fp16 weights, or 4096 with int8 ones, was preferred on
 * the ANE whatever else; on iOS 18 only (on macOS 26 FluidAudio's 640-deep joint
 * step ran there too, which the weight floor covers). */
bool ali_work_deep_decode(const struct al_node *n, const struct al_release *os);
void ali_work_add(struct al_work *w, const struct al_cost *c);
bool ali_work_too_little(const struct al_work *w, const struct al_release *os);
double ali_work_floor_weights(const struct al_release *os); /* bytes */

/* ------------------------------------------------------------------ whole-graph decisions (decide.c)
 * Whether the partition applies the floor (ANE072) for target t and release os
 * (NULL: the defaults) under the user rules u (NULL: built-in only): a rules
 * file can switch it off like any rule. */
bool ali_work_floor_applies(const al_user_rules *u, const struct al_target *t,
			   const struct al_release *os);
/* The same for a check with o, its rule selection too: decided once per check
 * (al_model_check keeps it in the model), every plan of the model follows. */
bool ali_work_floor_on(const struct al_check_opts *o);
/* What a placement of a sub-model decides for the whole graph. */
struct ali_graph_decision {
	struct al_where where;     /* target, release, compute units: none a default */
	const struct al_release *floor_os; /* the release the work floor is measured for (NULL: newest) */
	bool floor;                /* ANE segments doing too little work go to the CPU (ANE072) */
	bool gpu_fallback;         /* fallbacks the ANE cannot run go to the GPU */
	const struct al_rule *model_rule; /* the first model-level fallback rule, or NULL */
	bool tiny;                 /* model_rule is ANE071: every ANE region is too small */
	bool tiny_to_gpu;          /* ... and up to iOS 16 with the GPU allowed, that work goes to the GPU */
	bool forced;               /* model_rule (not ANE071) moves every node */
};
/* The decision for sub-model s of m under opts (NULL: the check's), its model
 * rule not skip (a fix that removes it). */
void ali_decide_graph(const al_model *m, const struct al_submodel *s, const struct al_plan_opts *opts,
		      const struct al_rule *skip, struct ali_graph_decision *out);

/* ------------------------------------------------------------------ moves (check.c)
 * The rule that names a move of the partition (rules.def ANE072-076: the work
 * floor, GPU and CPU stickiness, a nested graph following its owner, the compute
 * units), the model-level rule itself for AL_PLACE_MODEL, NULL when `place` is no
 * move (the verdict, a resolved gpu_or_cpu); u's override when it has one. */
const struct al_rule *ali_place_rule(enum al_place place, const struct al_rule *model_rule,
				     const al_user_rules *u);
/* Whether the final placement differs from the node's own verdict (a resolved
 * gpu_or_cpu does not count): then al_verdict.moved_by names why. */
bool ali_verdict_moved(const struct al_verdict *v);

/* ------------------------------------------------------------------ certainty (certainty.c)
 * p_ane, verdict and `uncertain` of node n's final placement (after the partition), for
 * target t and release os; nn: a NeuralNetwork layer (else an ML Program op). */
void ali_certainty(struct al_node *n, const struct al_submodel *s, const struct al_target *t,
		   const struct al_release *os);
/* Whether kind_status.c has a row for kind k (tests/unit/test_kinds.c lists those without). */
bool ali_kind_status_has(bool nn, int kind);

#endif
