/* SPDX-License-Identifier: MIT */
/* evidence.h: what a Mac observed about where Core ML ran each op (docs/evidence.md),
 * read from the files Apple's placement tools write, lined up with anelint's
 * prediction (al_model_check's verdicts), and written back out in each format.
 *
 * Formats (AL_EVF_*): anelint's own evidence JSON; Xcode's analytics.mil (MIL
 * text whose ops carry SelectedBackend / ValidationMessage); MLComputePlan text
 * dumps (CoreMLInspect lines, "[N] type outputs=[..] preferred=..." lines,
 * "type | name | device" tables); an Xcode .mlperf bundle's report.json; espresso
 * os_log "Kernel validation warning ... Unsupported: ..." lines. Every parser
 * bounds what it reads (AL_EV_MAX_*) and reports a malformed file as one error
 * diagnostic naming the file and a line (or byte offset). */
#ifndef ANELINT_EVIDENCE_H
#define ANELINT_EVIDENCE_H

#include "anelint.h"
#include "base.h"
#include "pbsplice.h" /* struct al_buf */

#define AL_EV_MAX_BYTES ((size_t)256 << 20) /* an evidence file larger than this is refused */
#define AL_EV_MAX_OPS 1000000               /* ops in one evidence file */
#define AL_EV_MAX_TEXT 1024                 /* a name, type or reason is cut to this many bytes */
#define AL_EV_JSON_DEPTH 64                 /* nesting of a JSON evidence file */

enum al_ev_format {
	AL_EVF_AUTO = 0, /* told apart by content */
	AL_EVF_JSON,     /* anelint's own evidence JSON */
	AL_EVF_MIL,      /* Xcode analytics.mil */
	AL_EVF_PLAN,     /* MLComputePlan text dump */
	AL_EVF_MLPERF,   /* .mlperf report.json */
	AL_EVF_OSLOG,    /* espresso os_log lines */
	AL_EVF_PLACEMENT, /* FluidAudio-style compute placement JSON: op counts per unit, per model */
	AL_EVF_COUNT
};
const char *ali_ev_format_name(int f); /* "json", "mil", "plan", "mlperf", "oslog", "placement" */
int ali_ev_format_find(const char *name); /* AL_EVF_*, or -1 */

/* Where an op was observed. NOT_ANE: the evidence says only that the ANE did
 * not take it (an os_log validation warning). */
enum al_obs { AL_OBS_ANE, AL_OBS_GPU, AL_OBS_CPU, AL_OBS_NOT_ANE, AL_OBS_COUNT };
const char *ali_obs_name(int o); /* "ane", "gpu", "cpu", "not_ane" */

struct al_ev_op {
	const char *name;   /* the op's (first) output name, or a layer name */
	const char *type;   /* op / layer type without an opset prefix ("conv"), or "" */
	const char *reason; /* the device's why (ValidationMessage, Unsupported: ...), or NULL */
	int obs;            /* al_obs */
	uint32_t line;      /* 1-based line in the file (0: not known) */
	uint32_t index;     /* os_log "@ N": the layer's position, a tie-break among nodes of one
			     * name (UINT32_MAX: none) */
};

/* One entry of a compute placement file (AL_EVF_PLACEMENT): what MLComputePlan
 * preferred for one model's ops, counted per unit; no op is named. */
#define AL_EV_MAX_COUNT 100000000u /* an op count in a placement entry */
struct al_ev_model {
	const char *model;       /* as the file names it ("base/KokoroAlbert"), or "" */
	uint64_t count[3];       /* preferredOperations ANE, GPU, CPU */
	uint64_t unknown;        /* preferredOperations unknown: ops without a preferred device (consts) */
	int64_t supports_ane;    /* operationsSupportingANE, or -1 when not said */
	uint32_t index;          /* its position in the file */
};

struct al_evidence {
	struct al_arena arena;
	const char *file;   /* as named to the parser */
	int format;         /* al_ev_format */
	const char *chip;   /* as the evidence says it (NULL: not said) */
	const char *os;     /* as the evidence says it (NULL: not said) */
	const char *device; /* device model name, when said */
	const char *compute_units; /* MLModelConfiguration.computeUnits, as said (NULL: not said) */
	const struct al_target *target;  /* chip resolved, or NULL */
	const struct al_release *release; /* os resolved, or NULL */
	bool has_cu;                      /* compute_units resolved into cu */
	enum al_compute_units cu;
	struct al_ev_op *ops;
	size_t n_ops, cap_ops;
	struct al_ev_model *models; /* AL_EVF_PLACEMENT: model-level counts, no ops */
	size_t n_models;
};

/* Parse evidence text (any bytes) named `name`; format AL_EVF_AUTO tells the
 * formats apart by content. AL_OK and *out, or AL_E_FORMAT with one error
 * diagnostic (AL_E_NOMEM). */
enum al_status ali_evidence_parse(const void *text, size_t n, const char *name, int format,
				 struct al_evidence **out, al_diags *d);
/* The same from a file (a .mlperf directory: its report.json), via al_open_regular. */
enum al_status ali_evidence_load(const char *path, int format, struct al_evidence **out, al_diags *d);
void ali_evidence_free(struct al_evidence *e);

/* ------------------------------------------------------------------ comparison */

/* How an evidence op was matched to a node: by output name, or (fallback) the
 * k-th op of its type in the evidence to the k-th node of that type in the model. */
enum al_match { AL_MATCH_NAME, AL_MATCH_ORDER };

struct al_cmp_row {
	const struct al_ev_op *ev;
	const struct al_node *node; /* NULL: unmatched */
	int match;                  /* al_match */
	enum al_unit predicted;     /* node->verdict.placed */
	bool agree;
};

struct al_cmp {
	struct al_cmp_row *rows;  /* one per evidence op, evidence order */
	size_t n_rows;
	size_t matched, agreed, unmatched, by_order;
	size_t confusion[3][AL_OBS_COUNT]; /* [predicted ane/gpu/cpu][observed] */
	/* model-level evidence (AL_EVF_PLACEMENT): no rows; the entry for this model
	 * (by file name, or the only one) and the counts per unit, predicted and
	 * observed. matched is the larger total, agreed the ops whose unit the counts
	 * agree on (the sum over units of the smaller count); unmatched: 1 when no
	 * entry is this model's. */
	bool model_level;
	const struct al_ev_model *entry;
	size_t predicted_count[3]; /* ane, gpu, cpu: placed units of the compute nodes */
	size_t consts;             /* const ops of the model (the file's "unknown") */
	size_t predicted_ane_eligible;
	/* per rule that fired on a matched node: how often what it says held */
	struct al_cmp_rule {
		const struct al_rule *rule;
		size_t right, wrong;
	} *rules;
	size_t n_rules;
};

/* Line up e with the verdicts of m (al_model_check must have run). Const ops
 * (no compute) are neither compared nor counted. */
enum al_status ali_compare(const al_model *m, const struct al_evidence *e, struct al_cmp *out);
void ali_cmp_free(struct al_cmp *c);
double ali_cmp_agreement(const struct al_cmp *c); /* percent of matched ops that agree; 100 when none */

/* The const ops of m (ML Program const / constexpr_*, NeuralNetwork loadConstant*):
 * neither compared nor counted; a placement file counts them as "unknown". */
size_t ali_count_consts(const al_model *m);

/* Whether the prediction `placed` agrees with observation `obs`. */
bool ali_obs_agrees(int obs, enum al_unit placed);

/* ------------------------------------------------------------------ writing */

/* m's prediction (the placed unit of every non-const node) as evidence in
 * format f, appended to *out; chip / os name the target and release checked. */
enum al_status ali_evidence_write(const al_model *m, int format, const char *chip, const char *os,
				 struct al_buf *out);

#endif
