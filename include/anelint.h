/* SPDX-License-Identifier: MIT */
/* anelint.h: the public interface of libanelint.
 *
 * anelint reads Core ML models (.mlmodel, .mlpackage) and predicts, for every
 * NeuralNetwork layer and ML Program op, whether the Apple Neural Engine (ANE)
 * runs it or Core ML falls back to the GPU/CPU, with the rule and the reason.
 *
 *     al_diags *d = al_diags_new();
 *     al_model *m = NULL;
 *     if (al_model_open("Model.mlpackage", &m, d) == AL_OK &&
 *         al_model_check(m, NULL, d) == AL_OK) {
 *         for (size_t i = 0; i < al_model_count(m); i++) {
 *             const struct al_submodel *s = al_model_get(m, i);
 *             ... walk s->graphs[g]->nodes[k].verdict ...
 *         }
 *     }
 *     al_model_free(m);   // frees every struct reached through m
 *     al_diags_free(d);
 *
 * Ownership, one rule for the whole API: every pointer reached through an
 * al_model borrows from it and lives until al_model_free(); spans never own.
 * What a function returns through an out-pointer (a plan, a surgery, ...) is
 * owned by the caller and has its own free function, named beside it.
 * The library never prints and never exits; it returns a status and appends
 * diagnostics (file, byte offset, field path, layer) to an al_diags.
 */
#ifndef ANELINT_H
#define ANELINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h> /* FILE, for the report sinks */

#ifdef __cplusplus
extern "C" {
#endif

/* AL_API marks the public API: the shared library is built with
 * -fvisibility=hidden and exports exactly the declarations that carry it
 * (tests/architecture.py checks every function here does). */
#if defined(__GNUC__) || defined(__clang__)
#define AL_API __attribute__((visibility("default")))
#else
#define AL_API
#endif

/* The one version of anelint: the CLI's --version, al_version(), the JSON
 * outputs, the pkg-config file and the shared library's name (Makefile) all
 * read it from here. */
#define ANELINT_VERSION "0.1.0"
/* Version of the JSON report schema (docs/json-schema.md). */
#define ANELINT_JSON_SCHEMA_VERSION 3

enum al_status {
	AL_OK = 0,
	AL_E_IO = -1,          /* cannot open/read/map a file */
	AL_E_NOMEM = -2,       /* an allocation failed */
	AL_E_FORMAT = -3,      /* the model file is malformed */
	AL_E_UNSUPPORTED = -4, /* well-formed but not something anelint reads */
	AL_E_INVALID_ARG = -5, /* caller error */
};
AL_API const char *al_status_str(enum al_status s);
/* ANELINT_VERSION of the library actually linked (may differ from the header's). */
AL_API const char *al_version(void);

/* ------------------------------------------------------------------ diagnostics */

enum al_severity { AL_SEV_NOTE, AL_SEV_WARNING, AL_SEV_ERROR };

struct al_diag {
	enum al_severity severity;
	const char *file;  /* file the problem is in (may be inside a package) */
	uint64_t offset;   /* byte offset in that file; UINT64_MAX when none */
	const char *where; /* field path, e.g. neuralNetwork.layers[12].convolution.kernelSize */
	const char *node;  /* layer / op name, or NULL */
	const char *msg;   /* one line, no trailing newline */
};

typedef struct al_diags al_diags;
AL_API al_diags *al_diags_new(void);
AL_API void al_diags_free(al_diags *d);
AL_API size_t al_diags_count(const al_diags *d);
AL_API const struct al_diag *al_diags_get(const al_diags *d, size_t i);
AL_API size_t al_diags_errors(const al_diags *d);
/* Diagnostics counted but not kept (a list keeps the first 200). */
AL_API size_t al_diags_dropped(const al_diags *d);

/* ------------------------------------------------------------------ rules */

enum al_unit {
	AL_UNIT_ANE = 0,
	AL_UNIT_GPU,
	AL_UNIT_CPU,
	AL_UNIT_GPU_OR_CPU,
	AL_UNIT_NONE, /* not a compute op (e.g. a non-neural model) */
	AL_UNIT_COUNT
};
AL_API const char *al_unit_name(enum al_unit u); /* "ane", "gpu", "cpu", "gpu_or_cpu", "none" */

/* What firing a rule means. */
enum al_rule_kind {
	AL_RULE_ILLEGAL, /* the ANE cannot run it: the op falls back */
	AL_RULE_COST,    /* legal, but Core ML's cost model is reported to keep it off the ANE */
	AL_RULE_WARN,    /* stays on the ANE (or undecided), but costs speed or accuracy */
	AL_RULE_KIND_COUNT
};
AL_API const char *al_rule_kind_name(enum al_rule_kind k); /* "illegal", "cost", "warn" */

/* Which graphs a rule looks at. */
enum al_rule_scope {
	AL_SCOPE_NN,    /* NeuralNetwork layers */
	AL_SCOPE_MIL,   /* ML Program ops */
	AL_SCOPE_MODEL, /* one whole (sub-)model: inputs, precision, type */
};

struct al_rule {
	const char *id;         /* stable: "ANE012" */
	const char *name;       /* short kebab-case name: "pool-kernel-gt-13" */
	const char *title;      /* one line */
	enum al_rule_scope scope;
	enum al_rule_kind kind;
	enum al_unit unit;      /* where work goes when it fires (illegal/cost) */
	char confidence;        /* 'A' Apple-documented, 'M' measured by a third party, 'G' guess */
	const char *catalog;    /* ids in ane-rules-catalog.md, e.g. "O10" */
	const char *provenance; /* who says so and where */
	const char *url;        /* primary source, or NULL */
	const char *why;        /* a paragraph: what the ANE does and why */
	const char *fix;        /* what to do about it */
	uint32_t families;      /* chip families it applies to: bit i = al_target_at(i) */
	uint32_t releases;      /* OS releases it applies to: bit i = al_release_at(i) */
	const char *origin;     /* NULL: built in; "file:line" of a user rule (--rules FILE) */
	/* NULL, or per chip family i (bit i of families) the releases (bits as in
	 * releases) where the rule is NOT evaluated although families and releases
	 * include them: a rules file's `off: a17@ios18` (one chip on one release) */
	const uint32_t *off;
};
/* Whether r is evaluated for chip family index ti (al_target_at) and release index ri
 * (al_release_at): families, releases and off. */
AL_API bool al_rule_evaluated(const struct al_rule *r, size_t ti, size_t ri);
AL_API size_t al_rules_count(void);
AL_API const struct al_rule *al_rule_at(size_t i);
AL_API const struct al_rule *al_rule_find(const char *id_or_name);

/* The scope of a rule's evidence (src/analysis/rule_scope.def): the chips and
 * releases its reports observed it on and how many independent reports there
 * are. Outside that scope the rule still fires, but its verdict there is
 * uncertain unless `mechanism` argues why it holds anyway; in `conflict`
 * releases the reports disagree and the verdict is uncertain. A rule without a
 * row, and a user rule (origin set, overrides included: its file is its
 * evidence), has the scope it is evaluated in and one report. */
struct al_rule_evidence {
	uint32_t families;   /* bit i = al_target_at(i) */
	uint32_t releases;   /* bit i = al_release_at(i) */
	uint32_t conflict;   /* releases where reports disagree */
	uint32_t n_reports;  /* independent reports behind it */
	const char *mechanism; /* why it holds outside families/releases, or NULL */
	const char *seen;      /* the reports, in words */
	const char *detail;    /* NULL, or a word its reason must hold to be what the reports saw */
};
AL_API void al_rule_evidence_of(const struct al_rule *r, struct al_rule_evidence *out);
struct al_target;
struct al_release;
/* Whether r, firing with this reason (may be NULL) for target t on release os (NULL: the
 * defaults), is within its evidence or has a mechanism for it: false when its verdict
 * there is uncertain. */
AL_API bool al_rule_decides_at(const struct al_rule *r, const char *reason, const struct al_target *t,
			       const struct al_release *os);

/* The ANE status of a NeuralNetwork layer kind or ML Program op type for a
 * release (src/analysis/kind_status.c): 'S' supported (observed on the ANE),
 * '-' not supported (a rule decides), '?' no evidence (uncertain, never ANE by
 * default). *provenance: who saw it, or why there is nothing. */
struct al_release;
AL_API char al_kind_ane_status(bool nn, const char *type, const struct al_release *os,
			       const char **provenance);

struct al_target;
/* Whether rule r is evaluated when checking for target t (NULL t: the default target). */
AL_API bool al_rule_applies(const struct al_rule *r, const struct al_target *t);
/* r's families as text, the syntax user rule files take: "all", "none", "a15+" (that
 * family and newer), "a12..a14", or a list "a12,a16". Writes at most cap bytes,
 * always terminated when cap > 0; returns the length of the whole text, like snprintf. */
AL_API size_t al_rule_families(const struct al_rule *r, char *buf, size_t cap);

/* OS releases (releases.def): Core ML ships with the OS, so a prediction is for
 * a chip family and a release. Every platform's release maps onto the iOS
 * release with the same Core ML: macos14 = ios17, watchos10 = ios17, visionos2 =
 * ios18, macos26 = ios26, ... */
struct al_release {
	const char *id;      /* "ios17" */
	int ios;             /* 17 */
	const char *name;    /* "iOS 17" */
	const char *aliases; /* comma-separated: "macos14,tvos17,watchos10,visionos1" */
};
AL_API size_t al_releases_count(void);
AL_API const struct al_release *al_release_at(size_t i);
AL_API const struct al_release *al_release_find(const char *id_or_alias); /* case-insensitive */
AL_API const struct al_release *al_release_default(void);                 /* the newest */
/* The oldest release whose Core ML loads a model of this specificationVersion
 * (spec 8: ios17; spec 4 and older: the oldest release known); NULL when the
 * version is newer than every release known. */
AL_API const struct al_release *al_release_for_spec(int spec_version);
/* Whether rule r is evaluated for target t on release os (NULL: the defaults). */
AL_API bool al_rule_applies_at(const struct al_rule *r, const struct al_target *t,
			const struct al_release *os);
/* r's releases as text, in the families syntax: "all", "ios15+", "ios13..ios14". */
AL_API size_t al_rule_releases(const struct al_rule *r, char *buf, size_t cap);

/* ------------------------------------------------------------------ model view */

enum al_world { AL_WORLD_NN, AL_WORLD_MIL, AL_WORLD_OTHER };

/* MIL DataType numbers (MIL.proto); NN ArrayDataType values are mapped onto them. */
enum al_dtype {
	AL_DT_UNKNOWN = 0, AL_DT_BOOL = 1, AL_DT_STRING = 2,
	AL_DT_FP16 = 10, AL_DT_FP32 = 11, AL_DT_FP64 = 12, AL_DT_BF16 = 13,
	AL_DT_INT8 = 21, AL_DT_INT16 = 22, AL_DT_INT32 = 23, AL_DT_INT64 = 24, AL_DT_INT4 = 25,
	AL_DT_UINT8 = 31, AL_DT_UINT16 = 32, AL_DT_UINT32 = 33, AL_DT_UINT64 = 34,
	AL_DT_UINT4 = 35, AL_DT_UINT2 = 36, AL_DT_UINT1 = 37, AL_DT_UINT6 = 38, AL_DT_UINT3 = 39,
	AL_DT_FP8E4M3 = 40, AL_DT_FP8E5M2 = 41,
};
AL_API const char *al_dtype_name(int dtype); /* "fp16", "int32", ... or "?" */

/* A tensor type as declared in the file. rank -1 = unknown; dims[i] -1 = unknown. */
struct al_ttype {
	int dtype;
	int rank;
	const int64_t *dims;
	int kind; /* 0 tensor, 1 list, 2 tuple, 3 dictionary, 4 state */
};

struct al_node;
struct al_graph;

/* ------------------------------------------------------------------ shapes and cost
 * A shape as inferred (or, for ML Programs, as declared and checked). Dims are
 * >= 0 when known, AL_DIM_UNKNOWN when not; dims that come from a flexible input
 * carry its default size and are flagged in `flex` (bit i = dim i varies). */
#define AL_SHAPE_MAX_RANK 8 /* larger ranks are kept as rank with dims unknown past 8 */
#define AL_DIM_UNKNOWN (-1)
struct al_shape {
	int rank;   /* -1 = unknown rank */
	int dtype;  /* al_dtype, AL_DT_UNKNOWN when not known */
	int64_t dims[AL_SHAPE_MAX_RANK];
	uint8_t flex; /* bit i: dim i depends on a flexible input (value = its default) */
};

/* Work of one layer/op, from its shapes (estimates; conventions in docs/shapes.md "Cost"). */
struct al_cost {
	double flops;          /* multiply-add = 2 FLOPs; 0 for data movement */
	uint64_t param_bytes;  /* weights and constants the op reads, as stored */
	uint64_t act_bytes;    /* input + output activation bytes at fp16 */
	bool known;            /* false when a needed shape was unknown */
};

/* Why a node runs where the plan puts it. */
enum al_place {
	AL_PLACE_VERDICT,    /* its own verdict: the ANE, or the unit its rule names */
	AL_PLACE_RESOLVED,   /* a gpu_or_cpu verdict, resolved by the policy */
	AL_PLACE_GPU_STICKS, /* ANE-capable, downstream of GPU work (nn2020) */
	AL_PLACE_CPU_STICKS, /* downstream of a CPU-only op (mlprogram) */
	AL_PLACE_OWNER,      /* in a nested graph: runs where the layer/op owning it runs */
	AL_PLACE_MODEL,      /* a model-level rule moves the whole model off the ANE */
	AL_PLACE_SMALL,      /* its ANE segment does too little work: kept on the CPU (ANE072),
			      * or on the GPU when it feeds or follows GPU work (compute units all) */
	AL_PLACE_UNITS,      /* the compute units exclude the unit it would run on */
	AL_PLACE_COUNT
};
/* Per-node verdict, filled by al_model_check(). unit / ane: the op's own
 * eligibility (the rules on the op); placed / placed_ane: where the partition of
 * its sub-model finally puts it (al_model_plan, policy auto, as `plan` does),
 * after model-level and whole-graph decisions. */
/* Three verdicts (issue #30): the evidence says ANE, says not, or is absent or
 * conflicting where the prediction is made. */
enum al_ane_verdict { AL_VERDICT_ANE, AL_VERDICT_NOT_ANE, AL_VERDICT_UNCERTAIN };
AL_API const char *al_ane_verdict_name(enum al_ane_verdict v); /* "ane", "not_ane", "uncertain" */

struct al_verdict {
	enum al_unit unit;
	bool ane;
	enum al_unit placed;           /* AL_UNIT_ANE, GPU or CPU; a const op: its own unit */
	bool placed_ane;
	enum al_place place;           /* why it is placed there */
	/* the rule that moved it (model-level or partition rule) when place is
	 * AL_PLACE_MODEL or AL_PLACE_SMALL; NULL otherwise (the policy moved it) */
	const struct al_rule *moved_by;
	char confidence;               /* of the verdict as a whole */
	/* the unit is unknown: a rule saying the model does not tell what the
	 * node is fired (ANE057, a compiled espresso layer of no known kind). Such
	 * a node is not ANE-eligible and not counted as placed on the ANE; the
	 * partition keeps it with its neighbours (unit/placed as if no rule fired),
	 * and the sinks show its unit as "unknown" ("?" in text). */
	bool unknown;
	const struct al_rule **rules;  /* rules that fired, table order */
	const char **reasons;          /* one per fired rule: names parameter and value */
	uint32_t n_rules;
	/* how sure the final placement is (issue #30): p_ane, the probability that
	 * Core ML runs it on the ANE, from the evidence of the rule that decided it
	 * (its confidence, its number of independent reports, whether the target's
	 * chip and release are among those its reports saw) or, when no rule moved
	 * it, of its kind (al_kind_ane_status); verdict: AL_VERDICT_ANE at p_ane >=
	 * 0.7, AL_VERDICT_NOT_ANE at <= 0.3, else AL_VERDICT_UNCERTAIN, and then
	 * `uncertain` says why (a const op: AL_VERDICT_ANE, 1.0) */
	enum al_ane_verdict verdict;
	double p_ane;
	const char *uncertain;
	const struct al_rule *uncertain_rule; /* the rule whose evidence does not reach here, or NULL (the kind) */
};

struct al_node {
	uint32_t index;           /* position in model order within its graph */
	const char *name;         /* layer name, or a MIL op's first output name */
	const char *type;         /* NN oneof field name ("convolution") or MIL op type ("conv") */
	int kind;                 /* row in the NN layer table / MIL op table, -1 if unknown */
	const char **inputs;      /* blob / value names (MIL: every name binding, in param order) */
	uint32_t n_inputs;
	const char **outputs;
	uint32_t n_outputs;
	const struct al_ttype *out_types; /* MIL: n_outputs declared types; NN: NULL */
	uint64_t offset;          /* byte offset of the layer/op message in `file` */
	const char *path;         /* field path, e.g. neuralNetwork.layers[3] */
	struct al_graph **sub;    /* nested graphs: branch/loop bodies, cond/while blocks */
	uint32_t n_sub;
	struct al_graph *owner;
	struct al_verdict verdict;
	const struct al_shape *out_shapes; /* n_outputs inferred shapes (al_model_infer_shapes), or NULL */
	struct al_cost cost;      /* filled by al_model_infer_shapes */
	const void *priv;         /* loader-private (the message span); do not use */
};

struct al_graph {
	const char *function; /* ML Program function name; NULL for NN */
	const char *block;    /* block path: "main", "main/while_loop_0.body", "layers[4].branch.ifBranch" */
	struct al_node *nodes;
	uint32_t n_nodes;
	struct al_graph *parent;
	struct al_node *parent_node;
	int depth;
};

enum al_feature_kind {
	AL_FEAT_INVALID, AL_FEAT_INT64, AL_FEAT_DOUBLE, AL_FEAT_STRING, AL_FEAT_IMAGE,
	AL_FEAT_MULTIARRAY, AL_FEAT_DICTIONARY, AL_FEAT_SEQUENCE, AL_FEAT_STATE,
};
AL_API const char *al_feature_kind_name(enum al_feature_kind k);

enum al_flex { AL_FLEX_NONE, AL_FLEX_ENUMERATED, AL_FLEX_RANGE };

struct al_feature {
	const char *name;
	const char *description;
	enum al_feature_kind kind;
	bool optional;
	int dtype;                 /* multiarray: al_dtype; image: AL_DT_UINT8 or FP16 */
	const int64_t *shape;      /* multiarray default shape; image: [H, W] */
	uint32_t rank;
	int color_space;           /* image: 10 gray, 20 RGB, 30 BGR, 40 gray fp16 */
	enum al_flex flex;
	/* AL_FLEX_ENUMERATED: n_shapes shapes, each `rank` long, flattened;
	 * AL_FLEX_RANGE: rank pairs (lower, upper), upper -1 = unbounded.
	 * For images the axes are [H, W]. */
	const int64_t *flex_values;
	uint32_t n_shapes;
};

struct al_keyval { const char *key, *value; };

struct al_finding { /* a model-level rule that fired */
	const struct al_rule *rule;
	const char *reason;
};

struct al_weight_stats { /* bytes by storage type, counted from lengths only */
	uint64_t fp32, fp16, quantized, other;
	uint32_t n_blobs;
};

/* One function of a multifunction ML Program (description.functions): its
 * interface. */
struct al_function_desc {
	const char *name;
	struct al_feature *inputs, *outputs, *states;
	uint32_t n_inputs, n_outputs, n_states;
};

struct al_submodel {
	const char *path;       /* "x.mlmodel", or "x.mlmodel:pipeline/model0" for a stage */
	const char *file;       /* the file this Model message is in */
	const char *type;       /* Model oneof field name: neuralNetwork, mlProgram, pipeline, ... */
	enum al_world world;
	int spec_version;
	uint64_t offset;        /* byte offset of this Model message in `file` */
	int depth;              /* 0 for the root, +1 per pipeline level */
	struct al_feature *inputs, *outputs;
	uint32_t n_inputs, n_outputs;
	/* stateful models (spec 9): the states (AL_FEAT_STATE) of the default function */
	struct al_feature *states;
	uint32_t n_states;
	/* multifunction packages: every function's interface (inputs / outputs /
	 * states above are the default function's), and the default's name */
	struct al_function_desc *fdescs;
	uint32_t n_fdescs;
	const char *default_function;
	const char *predicted_feature, *predicted_probabilities;
	/* metadata */
	const char *short_description, *author, *license, *version_string;
	struct al_keyval *user_defined;
	uint32_t n_user_defined;
	/* NeuralNetwork: 0 RANK5 / 1 EXACT array mapping; 0 RANK5 / 1 RANK4 image mapping */
	int array_mapping, image_mapping;
	bool is_updatable;
	/* ML Program: one graph per function (the block of its active opset) */
	const char **functions, **opsets;
	uint32_t n_functions;
	struct al_graph **graphs; /* NN: graphs[0] = the network; nested graphs hang off nodes */
	uint32_t n_graphs;
	struct al_weight_stats weights;
	uint32_t n_children;      /* pipeline stages (which follow in al_model order) */
	struct al_finding *findings;
	uint32_t n_findings;
};

/* ------------------------------------------------------------------ models */

typedef struct al_model al_model;

/* Open a .mlmodel file or a .mlpackage directory. Never modifies the input.
 * On failure *out is NULL and d holds at least one error. */
AL_API enum al_status al_model_open(const char *path, al_model **out, al_diags *d);
/* Read a serialized Model message (the bytes of a .mlmodel, or of a package's
 * model.mlmodel) from memory, with an optional weight.bin image for ML
 * Programs (NULL, 0 when none). Nothing is copied: both buffers are borrowed and
 * must outlive the model. `name` is used in paths and diagnostics. */
AL_API enum al_status al_model_open_buffer(const void *bytes, size_t n, const void *weights,
				    size_t n_weights, const char *name, al_model **out, al_diags *d);
/* Whether every ML Program op's inputs are what the op's definition on the
 * program's opset allows (their dtypes, one dtype per type variable, the
 * inputs that must be constants; src/format/mil_domains.def, from coremltools'
 * op definitions): AL_OK, or AL_E_FORMAT with one located error per broken
 * input (file, op offset, field path, op, input name) in d. Core ML refuses
 * such a program when it compiles it. al_model_check and al_model_run call it. */
AL_API enum al_status al_model_validate(const al_model *m, al_diags *d);
AL_API void al_model_free(al_model *m);
/* Keep only function `name` of a multifunction ML Program (the root): its graph
 * becomes the only one, its interface the model's (inputs, outputs, states) and
 * its name the default, so check, plan, report and info cover that function
 * alone. AL_E_INVALID_ARG, with a diagnostic listing the functions, when the
 * root has no function of that name (or is not an ML Program). */
AL_API enum al_status al_model_select_function(al_model *m, const char *name, al_diags *d);
/* Models opened from files read them through read-only mappings. If another
 * process truncates such a file while a model is open, reading a lost page
 * raises SIGBUS (on Linux and macOS) wherever the read happens: analysis, the
 * interpreter reading weights, surgery copying them. The library installs no
 * signal handler (it never exits); a program that may meet shrinking files
 * installs one for SIGBUS (sigaction with SA_SIGINFO) and asks this function
 * about info->si_addr: the file (as the caller named it to al_model_open) whose
 * live mapping holds addr, or NULL when addr is not in one (a real bug: restore
 * the previous handler and return, so the fault repeats there). It is
 * async-signal-safe and may be called from any thread. The anelint CLI's
 * handler prints one line naming the file and exits 4 (src/cli/output.c). */
AL_API const char *al_mapped_file_at(const void *addr);
/* Every output the library writes (fix, split, reports, the package writer) is
 * made in a temporary beside its target and renamed over it when complete, so a
 * crash or an interrupt never leaves a partial output. With durable writes on,
 * each file (and its directory) is also flushed to the device (fsync) before the
 * rename, so a power loss cannot leave an empty or partial file under the
 * target's name either: on a 500 MB model that doubles the time of the write
 * (bench/fixcp.sh). Off by default, as for cp and coremltools' save (the
 * anelint CLI: --fsync). Process-wide; set it before writing. */
AL_API void al_set_durable_writes(bool on);
/* Keep freed memory in the process (glibc: no trimming of the heap after each
 * op, larger mmap threshold), so repeated interpreter runs do not fault their
 * pages in again; process-wide, what the run commands call first (al_run_model
 * does). Elsewhere, and with the portable fallbacks: nothing. */
AL_API void al_keep_freed_memory(void);
/* The output guard: whether writing `out` could destroy one of `inputs` (the
 * model files and directories a command reads, and any other file it reads).
 * Every writer of the anelint CLI and of the Python package asks it before it
 * writes (al_split_write too). AL_OK when `out` is safe; AL_E_INVALID_ARG, with
 * one error on `out` naming the input, when `out`, after symlinks and by device
 * and inode (so hard links and bind mounts count too):
 *   is one of the inputs (unless AL_OUTPUT_MAY_REPLACE_INPUT: fix --in-place);
 *   is, or would be made, inside an input directory (.mlpackage, .mlmodelc);
 *   is an existing directory holding an input, which a writer replacing it
 *   would remove (unless AL_OUTPUT_INTO_DIR: run --out, probe -o put new files
 *   into it).
 * An `out` that does not exist yet is judged by the directory it would be made
 * in; an input that does not exist has nothing to lose. Costs a stat per input
 * and per directory level above `out` (and above each input for a directory). */
enum { AL_OUTPUT_INTO_DIR = 1u, AL_OUTPUT_MAY_REPLACE_INPUT = 2u };
AL_API enum al_status al_output_check(const char *out, const char *const *inputs, size_t n_inputs,
				      unsigned flags, al_diags *d);
/* One output file written whole or not at all, as a front end's stream (the
 * CLI's -o FILE): open creates a temporary beside path (the mode of a plain
 * create) and gives a stream *f on it; NULL, with errno, when it cannot.
 * close(keep true) flushes and closes f, then renames the temporary over path
 * (fsync first when writes are durable): false, with errno, when any of it
 * failed; keep false, or a failure, removes the temporary and leaves path as it
 * was. close frees a. The temporary's name (temp) is for a signal handler that
 * removes it on an interrupt. */
typedef struct al_atomic_file al_atomic_file;
AL_API al_atomic_file *al_atomic_file_open(const char *path, FILE **f);
AL_API const char *al_atomic_file_temp(const al_atomic_file *a);
AL_API bool al_atomic_file_close(al_atomic_file *a, FILE *f, bool keep);
AL_API const char *al_model_path(const al_model *m);
AL_API bool al_model_is_package(const al_model *m);
/* The root Model first, then pipeline stages depth-first. */
AL_API size_t al_model_count(const al_model *m);
AL_API const struct al_submodel *al_model_get(const al_model *m, size_t i);

/* ------------------------------------------------------------------ targets
 * Chip families (ANE generations). One row each in src/targets.def; figures
 * with their sources in docs/cost-model.md. */
struct al_target {
	const char *id;      /* "a14" */
	const char *aliases; /* comma-separated: "m1,h13" */
	const char *name;    /* "A14 / M1 (H13)" */
	const char *arch;    /* ANE compiler target, "h13" */
	/* roofline: time = overhead + per op max(flops / peak, bytes / bandwidth)
	 * + a fixed cost per op; the overhead is paid once per dispatched segment
	 * (one compiled program). On the ANE an op's bytes are its weights, and a
	 * segment's incoming and outgoing activations are charged once (ane_layer_us:
	 * each layer inside a fused program); on the GPU every op is a kernel that
	 * reads and writes its activations (gpu_kernel_us each). Estimates:
	 * docs/cost-model.md gives each figure's source. */
	double ane_tflops, ane_gbs, ane_overhead_us;
	double gpu_tflops, gpu_gbs, gpu_overhead_us;
	double cpu_tflops, cpu_gbs, cpu_overhead_us;
	double ane_layer_us, gpu_kernel_us; /* fixed cost per op (layer / kernel) */
	uint32_t axis_cap;    /* largest extent per axis the ANE takes (16384 / 65536) */
	uint32_t channel_cap; /* largest extent of the channel axis (65536) */
	uint32_t conv_kw_cap; /* widest fp16 conv kernel (13 / 15) */
	unsigned features;    /* AL_TF_* */
	const char *source;   /* where the figures come from */
};
enum { AL_TF_TEXTURE = 1u << 0 /* resize/crop_resize/resample/gather in hardware (H14+) */,
       AL_TF_TRIG = 1u << 1 /* native sin/cos (H15+) */,
       AL_TF_INT8_COMPUTE = 1u << 2 /* int8 x int8 (A17 Pro / M4+) */ };
AL_API size_t al_targets_count(void);
AL_API const struct al_target *al_target_at(size_t i);
AL_API const struct al_target *al_target_find(const char *id_or_alias); /* case-insensitive */
AL_API const struct al_target *al_target_default(void);

/* User rules (--rules FILE): extra or overriding rules from a data file,
 * format in docs/rules-file.md. Owned by the caller; free with al_user_rules_free,
 * after the last use of any model checked with them (verdicts point at their rules).
 * A file with any error loads nothing: *out is NULL, d has one error per problem
 * (file, line), and the status is AL_E_FORMAT (AL_E_IO when unreadable). */
typedef struct al_user_rules al_user_rules;
AL_API enum al_status al_user_rules_load(const char *path, al_user_rules **out, al_diags *d);
/* The same from text in memory; `name` stands for the file in diagnostics and origins. */
AL_API enum al_status al_user_rules_parse(const char *text, size_t n, const char *name,
				   al_user_rules **out, al_diags *d);
AL_API void al_user_rules_free(al_user_rules *u);
/* The file's rules in file order: new rules and overrides of built-in ones. */
AL_API size_t al_user_rules_count(const al_user_rules *u);
AL_API const struct al_rule *al_user_rule_at(const al_user_rules *u, size_t i);
/* A rule by id (any case) or name as a check with u sees it: u's override of a
 * built-in rule, u's own rule, else the built-in rule; NULL if none. u may be NULL. */
AL_API const struct al_rule *al_user_rules_find(const al_user_rules *u, const char *id_or_name);
/* Whether r (from al_user_rule_at) replaces the built-in rule with its id. */
AL_API bool al_rule_is_override(const struct al_rule *r);

/* The compute units a model is loaded with (MLModelConfiguration.computeUnits;
 * docs/partition.md "Compute units"). AL_CU_DEFAULT: all, or in a plan the ones
 * the model was checked with. */
enum al_compute_units {
	AL_CU_DEFAULT,
	AL_CU_ALL,         /* .all: CPU, GPU and Neural Engine */
	AL_CU_CPU_AND_GPU, /* .cpuAndGPU: no Neural Engine */
	AL_CU_CPU_AND_NE,  /* .cpuAndNeuralEngine: no GPU */
	AL_CU_CPU_ONLY,    /* .cpuOnly */
	AL_CU_COUNT
};
/* "all", "cpu-and-gpu", "cpu-and-ne", "cpu-only" ("all" for AL_CU_DEFAULT). */
AL_API const char *al_compute_units_name(enum al_compute_units cu);
/* Parse one of those names (also "cpu_and_gpu", "cpuAndNeuralEngine", ...); false when unknown. */
AL_API bool al_compute_units_parse(const char *name, enum al_compute_units *out);

/* Where a model runs: a chip family, an OS release and the compute units it is
 * loaded with; NULL / AL_CU_DEFAULT: the defaults. One value, parsed from text by
 * al_where_parse, carried by the options (al_check_opts, al_plan_opts) and the
 * plan (al_plan) as their member `where`, also readable by its fields' own names
 * (the same storage). */
struct al_where {
	const struct al_target *target; /* NULL: al_target_default() */
	const struct al_release *os;    /* NULL: al_release_default(), the newest */
	enum al_compute_units compute_units; /* AL_CU_DEFAULT: all */
};

/* One verdict column of al_report_opts.columns: a chip family and an OS release. */
struct al_column {
	const struct al_target *target;
	const struct al_release *os;
};

/* What the text of a target, a release and compute units names (the CLI's
 * --target, --os, --compute-units; anelint.toml's target, os, compute_units; the
 * Python package's arguments): an id or alias each; unless AL_WHERE_ONE, also
 * `all` (every family, or every release: one verdict column each) or a comma list
 * of ids (the cross product as columns, targets first; at most 32). */
#define AL_WHERE_MAX_COLUMNS 32
struct al_where_spec {
	struct al_where where;          /* the one asked for (several: the first column's) */
	bool all_targets, all_releases; /* `all` of one, with one (or no) id of the other */
	struct al_column columns[AL_WHERE_MAX_COLUMNS]; /* lists: n_columns > 0 */
	size_t n_columns;
};
enum { AL_WHERE_ONE = 1u /* one id each: no `all`, no lists */ };
/* Parse target, os and compute_units (each NULL: not given) into *out. An error
 * is one diagnostic, AL_E_INVALID_ARG: where "target" or "os" with node the
 * unknown id for an id not known (its message lists the known ones), where
 * "compute_units" for unknown compute units, where NULL for too many columns. */
AL_API enum al_status al_where_parse(const char *target, const char *os, const char *compute_units,
				     unsigned flags, struct al_where_spec *out, al_diags *d);

struct al_check_opts {
	union {
		struct al_where where;
		struct {
			const struct al_target *target; /* NULL: al_target_default() */
			const struct al_release *os;    /* NULL: al_release_default(), the newest */
			enum al_compute_units compute_units; /* AL_CU_DEFAULT: all */
		};
	};
	const al_user_rules *user_rules; /* NULL: built-in rules only */
	/* Rule selection (--select / --ignore): when set, a rule for which it returns
	 * false is not evaluated at all, as if switched off (`families: none`). */
	bool (*rule_on)(const struct al_rule *r, void *ctx);
	void *rule_on_ctx;
};
/* Whether o's rule selection keeps r (true when o or o->rule_on is NULL). */
AL_API bool al_check_rule_on(const struct al_check_opts *o, const struct al_rule *r);
/* Infer shapes and cost for every node (runs on its own or from al_model_check,
 * which needs shapes for shape-dependent rules). Idempotent. */
AL_API enum al_status al_model_infer_shapes(al_model *m, al_diags *d);
/* Evaluate every rule on every node and model for opts->target; fills
 * node->verdict and submodel->findings, replacing the previous ones, so a caller
 * can check once per target. The previous verdicts' rules/reasons arrays are
 * freed (copy what you keep); checking again takes no more memory. */
AL_API enum al_status al_model_check(al_model *m, const struct al_check_opts *opts, al_diags *d);

/* ------------------------------------------------------------------ partition plan
 * How Core ML is predicted to split one (sub-)model into ANE / GPU / CPU
 * segments, under a named policy (docs/partition.md). */
enum al_policy {
	AL_POLICY_AUTO,       /* NeuralNetwork: nn2020; ML Program: mlprogram */
	AL_POLICY_NN2020,     /* hollance 2020: ANE->GPU once and stays; ANE<->CPU ping-pong */
	AL_POLICY_MLPROGRAM,  /* a CPU-only op drags what follows onto the CPU ("fallback sticks") */
	AL_POLICY_OPTIMISTIC, /* every fallback is its own island, then back to the ANE */
	AL_POLICY_COUNT
};
AL_API const char *al_policy_name(enum al_policy p);
AL_API bool al_policy_parse(const char *name, enum al_policy *out);
/* The documented default cost of a switch between two units, in µs (docs/partition.md). */
AL_API double al_switch_default_us(enum al_unit from, enum al_unit to);

struct al_plan_opts {
	union {
		struct al_where where;
		struct {
			const struct al_target *target; /* NULL: default */
			const struct al_release *os;    /* the OS release (the work floor depends on it);
							 * NULL: the model's check's */
			enum al_compute_units compute_units; /* AL_CU_DEFAULT: those the model was checked with */
		};
	};
	enum al_policy policy;
	double switch_us[AL_UNIT_COUNT][AL_UNIT_COUNT]; /* 0: the documented default */
	uint32_t max_fixes;             /* 0: 5 */
	bool no_fixes;                  /* skip the cheapest-fix search (al_model_check uses it) */
	bool no_work_floor;             /* do not move small ANE segments to the CPU (ANE072 off) */
};

struct al_segment {
	enum al_unit unit;
	uint32_t first, last;  /* model-order indices (the JSON "index") */
	uint32_t n_nodes;
	double flops, est_us;  /* est_us: one dispatch overhead plus the roofline of its ops */
};

AL_API const char *al_place_name(enum al_place p); /* "verdict", "resolved", "gpu_sticks", ... */
/* The partition rule that names a move of the partition (gpu_sticks ANE073,
 * cpu_sticks ANE074, owner ANE075, small_segment ANE072, units ANE076; u's
 * override when it has one), NULL for a place that is no such move (verdict,
 * resolved, model: the model-level rule is the plan's). `anelint explain`. */
AL_API const struct al_rule *al_place_rule(enum al_place p, const al_user_rules *u);

/* A switch: data crosses from one segment to a segment on another unit. */
struct al_switch {
	uint32_t from, to; /* segment indices */
	double us;         /* its cost, al_plan_opts.switch_us */
};

enum al_fix_kind {
	AL_FIX_NODE,    /* one layer/op */
	AL_FIX_RULE,    /* every layer/op that one rule moves off the ANE */
	AL_FIX_SEGMENT, /* every fallback layer/op of one segment */
	AL_FIX_MODEL,   /* the model-level rule that moves the whole model (node is NULL) */
};

struct al_fix {
	const struct al_node *node; /* the fallback layer whose rewrite/removal merges segments */
	const struct al_rule *rule; /* the rule that made it fall back */
	uint32_t segments_before, segments_after;
	double gain_us;             /* estimated time saved */
	enum al_fix_kind kind;
	const struct al_node **nodes; /* every layer the fix rewrites; nodes[0] == node */
	uint32_t n_nodes;
	uint32_t switches_before, switches_after;
};

struct al_plan {
	enum al_policy policy;
	const char *policy_why;     /* which policy and why (model type, flag) */
	union { /* where it was planned for: never NULL, never AL_CU_DEFAULT */
		struct al_where where;
		struct {
			const struct al_target *target;
			const struct al_release *os;
			enum al_compute_units compute_units;
		};
	};
	bool gpu_fallback;          /* fallbacks go to the GPU (docs/partition.md "Compute units") */
	const struct al_submodel *sub;
	uint32_t n_nodes;           /* non-const nodes in model order */
	const struct al_node **nodes;
	enum al_unit *unit;         /* per node: the unit after partitioning */
	struct al_segment *segments;
	uint32_t n_segments, switches;
	double total_flops, ane_flops, est_us;
	struct al_fix *fixes;
	uint32_t n_fixes;
	/* per node, like `unit`: model-order index (the JSON "index"), its segment, why */
	uint32_t *index;
	uint32_t *segment;
	enum al_place *place;
	double *node_us;            /* estimated time on its unit (its segment adds the dispatch overhead) */
	struct al_switch *switch_list; /* `switches` entries */
	double compute_us, switch_us; /* est_us = compute_us + switch_us */
	double switch_cost[AL_UNIT_COUNT][AL_UNIT_COUNT]; /* the costs used (defaults filled in) */
	uint32_t ane_nodes;         /* nodes on the ANE after partitioning (a unit unknown, al_verdict.unknown, not counted) */
	uint32_t n_uncosted;        /* nodes whose cost is unknown (counted as 0 FLOPs) */
	bool timed;                 /* the target has roofline figures; else est_us = switch_us */
	const struct al_rule *model_rule; /* model-level rule moving the whole model, or NULL */
	/* when model_rule is one `anelint fix` removes by editing the model's
	 * description only (ANE040: fix --shape NAME=default), it, and the plan of
	 * the fixed model: the model-level rule that would then decide (NULL: the
	 * layers' own verdicts), its segments, switches, ANE nodes and FLOPs, estimate */
	const struct al_rule *fix_rule;
	const struct al_rule *then_rule;
	uint32_t then_segments, then_switches, then_ane_nodes;
	double then_ane_flops, then_est_us;
};
/* Plan sub-model `i` of a checked model (al_model_check with the same target).
 * Returns an owned plan: free it with al_plan_free. Its arrays are its own (the
 * model's memory does not grow per plan); its node, sub-model and rule pointers
 * borrow from m (and the user rules m was checked with), so free the plan before
 * the model. A plan does not change when m is checked again. */
AL_API enum al_status al_model_plan(al_model *m, size_t i, const struct al_plan_opts *opts,
			     const struct al_plan **out, al_diags *d);
/* Free a plan from al_model_plan and everything it holds; NULL is fine. */
AL_API void al_plan_free(const struct al_plan *p);

/* ------------------------------------------------------------------ reports
 * A sink writes the checked models to a FILE* the caller owns (formats: "text",
 * "json"; the reports "html", "sarif", "markdown", "dot": docs/reports.md). */

/* What fails a check: layers whose verdict is not_ane on the units named (an uncertain
 * verdict never fails), or with AL_FAIL_UNCERTAIN (--fail-on uncertain, a strict gate) any
 * layer off the ANE or uncertain. */
enum al_fail_on { AL_FAIL_ANY, AL_FAIL_CPU, AL_FAIL_GPU, AL_FAIL_NEVER, AL_FAIL_UNCERTAIN };

struct al_report_opts {
	bool color;       /* ANSI colours (text sink) */
	bool show_consts; /* list ML Program const ops in the text table */
	bool shapes;      /* check: add inferred output shapes (and cost) per layer */
	enum al_fail_on fail_on;
	const struct al_check_opts *check; /* target and user rules the models were checked with */
	const struct al_plan_opts *plan;   /* plan: policy, target, switch costs */
	/* --target all: al_report_analyze checks the models once per target, and the
	 * sinks print one verdict column per target (check) or one plan per target (plan) */
	bool all_targets;
	/* --os all: the same with one column (check) or plan (plan) per OS release, for
	 * the one target; all_targets and all_releases are not set together */
	bool all_releases;
	/* al_report_analyze plans every sub-model too: for a sink's `plan`, and for
	 * its `check` when al_sink.shows_plans */
	bool plans;
	/* check text: list every layer (--all), not only those that fall back or
	 * carry a finding */
	bool all_layers;
	/* Accepted findings (suppressions in a configuration or in the model's
	 * metadata, a baseline): NULL, or returns the reason when the finding of rule
	 * r on the layer/op named `layer` of s (NULL: a model-level finding) is
	 * accepted, and sets *kind to "config", "metadata" or "baseline". The sinks
	 * show accepted findings as suppressed; al_report_fails does not count them. */
	const char *(*accepted)(void *ctx, const struct al_submodel *s, const char *layer,
				const struct al_rule *r, const char **kind);
	void *accepted_ctx;
	/* SARIF: artifact URIs relative to this directory (uriBaseId "SRCROOT"); NULL: as given */
	const char *base;
	/* Explicit verdict columns (check --target a17,m1 --os ios17,ios18, or lists in
	 * the configuration): one check per column, shown like --target all; when
	 * n_columns > 0 it replaces all_targets / all_releases. A column's NULL target
	 * or os is the one of `check`. At most 32 are shown. */
	const struct al_column *columns;
	size_t n_columns;
	/* SARIF tool.driver.informationUri: NULL for the build's default
	 * (AL_INFORMATION_URI, empty unless the build sets one: then omitted) */
	const char *information_uri;
	/* check (text, JSON): with one column and no OS release asked (check->os
	 * NULL: the newest), also evaluate every release from the model's minimum
	 * deployment target (its specificationVersion) up to the newest, reusing the
	 * parsed model and its shapes (only the rules and the placement run again per
	 * release); the sinks mark the layers whose unit or verdict differs inside
	 * that range (issue #30, docs/json-schema.md "by_release") */
	bool deployment_range;
};

/* What a report shows of one model, computed once by al_report_analyze: for each
 * target it shows, per sub-model, the verdicts and model findings of that
 * target's check and (opts.plans) the plan. Owned by the item; free with
 * al_analysis_free before the model. */
typedef struct al_analysis al_analysis;

/* What a Mac observed about one model against its prediction (report --evidence,
 * docs/evidence.md "In the reports"): the anelint-compare document, self-contained
 * (names and reasons copied). Made by al_report_compare; free with al_comparison_free. */
typedef struct al_comparison al_comparison;

/* One input path as the CLI saw it: a model, or the error that stopped it. */
struct al_report_item {
	const char *path;
	al_model *model;        /* NULL when loading failed */
	const al_diags *diags;  /* diagnostics for this path */
	enum al_status status;
	al_analysis *analysis;  /* set by al_report_analyze; NULL before */
	al_comparison *comparison; /* set by al_report_compare; NULL: no evidence (the sinks show none) */
};

/* Compare the evidence files paths[0..n) (format: json, mil, plan, mlperf, oslog,
 * or NULL / "auto": by content) with the prediction for it->model, each checked for
 * the chip, release and compute units the evidence says (else check's), and keep
 * the result in it->comparison for the report sinks. The model is checked with
 * check again before it returns, so call it before al_report_analyze. AL_OK, or
 * the first failure (an evidence file unreadable or malformed) with its errors in d. */
AL_API enum al_status al_report_compare(struct al_report_item *it, const char *const *paths, size_t n,
				 const char *format, const struct al_check_opts *check, al_diags *d);
AL_API void al_comparison_free(al_comparison *c);

/* What a sink writes: `check` (and `report`), `info` or `plan`. */
enum al_sink_cmd { AL_SINK_CHECK, AL_SINK_INFO, AL_SINK_PLAN };

struct al_sink {
	const char *name; /* --format value */
	/* `check`: verdicts per layer/op plus summary; `info`: model description
	 * (NULL when the format has none: the reports). The report sinks write the
	 * same whole report (verdicts and plan) from `check` and from `plan`. */
	void (*check)(FILE *out, const struct al_report_item *items, size_t n,
		      const struct al_report_opts *o);
	void (*info)(FILE *out, const struct al_report_item *items, size_t n,
		     const struct al_report_opts *o);
	/* `plan`: segments, switches, estimated time and cheapest fixes per sub-model,
	 * from the plans of al_report_analyze. */
	void (*plan)(FILE *out, const struct al_report_item *items, size_t n,
		     const struct al_report_opts *o);
	/* File name extensions that pick this sink for `-o FILE` when no --format is
	 * given, comma-separated without dots ("html,htm"); NULL for none. */
	const char *extensions;
	/* `check` shows the plans as well (the reports): analyse with opts.plans. */
	bool shows_plans;
	/* Several models written as each one is checked (a directory argument), so
	 * memory does not grow with their number: stream_begin returns the state
	 * (NULL: this sink cannot stream cmd with o, or out of memory: give every
	 * item to check/info/plan instead); stream_model writes one item, in order
	 * (the caller may free its model right after); stream_end writes the tail
	 * and frees the state. The output is what check/info/plan write over the
	 * same items (github: a model that cannot be read is annotated where it
	 * comes), for models without settings of their own (a [[model]] target, os
	 * or compute units: those are not streamed) and without report --evidence.
	 * NULL members: the sink does not stream (text, JSON check, GitHub and
	 * Markdown do). */
	void *(*stream_begin)(FILE *out, enum al_sink_cmd cmd, const struct al_report_opts *o);
	void (*stream_model)(void *state, const struct al_report_item *it);
	void (*stream_end)(void *state);
};

/* Analyse every loaded model of items for a report with opts o, before any sink
 * runs: the sinks only read items[i].analysis, they never check or plan. With
 * o->all_targets each model is checked for every target in turn (its verdicts
 * copied each time), then checked again with o->check, so it is left as the
 * caller checked it; otherwise the model's own check is used (made with o->check
 * if it has none). With o->plans each sub-model is planned (o->plan) for each
 * target. A failure is added to d, becomes the item's status (when it was
 * AL_OK) and is shown by the sinks where that plan or target would be; the
 * status returned is the first failure. A previous analysis is freed. */
AL_API enum al_status al_report_analyze(struct al_report_item *items, size_t n,
				 const struct al_report_opts *o, al_diags *d);
AL_API void al_analysis_free(al_analysis *a);
/* Whether any analysed target's check of the model has work off the ANE that
 * `fail_on` counts (al_model_fails over every target of --target all). */
AL_API bool al_analysis_fails(const al_analysis *a, enum al_fail_on fail_on);

/* The exit decision of one analysed item: al_analysis_fails (al_model_fails when
 * it was not analysed); with o->accepted, only fallbacks it does not accept count:
 * a layer/op off the ANE that fail_on counts fails unless every fallback rule on
 * it (or the rule that moved it) is accepted; a layer moved only by the
 * partition policy follows the layers that caused it. */
AL_API bool al_report_fails(const struct al_report_item *it, const struct al_report_opts *o);

/* Whether any sub-model of a checked model has work off the ANE that `fail_on` counts. */
AL_API bool al_model_fails(const al_model *m, enum al_fail_on fail_on);

/* The sink registered under `name`, or NULL. */
AL_API const struct al_sink *al_sink_by_name(const char *name);
/* The sink whose extensions include the one of `path` (case-insensitive), or NULL. */
AL_API const struct al_sink *al_sink_by_extension(const char *path);
/* Comma-separated list of sink names, for usage messages. */
AL_API const char *al_sink_names(void);

/* ------------------------------------------------------------------ running models
 * A reference interpreter (docs/interpreter.md): runs a NeuralNetwork or ML
 * Program on the CPU in fp32, or emulating the ANE's fp16 numerics. */
typedef struct al_tensor al_tensor;

/* A new zero-filled tensor (numeric dtypes; values are held as float). NULL on OOM
 * or a size over 2^32 elements. Free with al_tensor_free. */
AL_API al_tensor *al_tensor_new(int dtype, int rank, const int64_t *dims);
AL_API void al_tensor_free(al_tensor *t); /* drops one reference; NULL is fine */
AL_API int al_tensor_dtype(const al_tensor *t);
AL_API int al_tensor_rank(const al_tensor *t);
AL_API const int64_t *al_tensor_dims(const al_tensor *t);
AL_API size_t al_tensor_count(const al_tensor *t);
AL_API float *al_tensor_data(al_tensor *t);            /* count values; NULL for strings */
/* The bytes the values of v[0..n) hold (numbers as float, strings as pointers):
 * what a caller holding them adds to al_run_opts.held_bytes. */
struct al_named_tensor;
AL_API uint64_t al_values_bytes(const struct al_named_tensor *v, size_t n);
AL_API const char *al_tensor_string(const al_tensor *t, size_t i); /* AL_DT_STRING, else NULL */
/* Classifier probabilities: the class label of value i, or NULL. */
AL_API const char *al_tensor_label(const al_tensor *t, size_t i);

/* How far tensor a is from the reference `ref`: the one comparison behind run
 * --expect, verify, fp16 and the fix / split proofs (al_prove_equivalent).
 *
 * "Same shape" (comparable): the same element count, and the same dims once
 * every dim of 1 is dropped, so [1,1,3,1,1] matches [3] and [1,3]. That is
 * what the users need in common: NeuralNetwork blobs are rank 5 while the
 * declared output and a user's .npy are not, and both models of a proof run
 * the same interpreter. same_dims says whether rank and dims are equal too;
 * the proofs require it (a rewrite must not change an output's shape). Text
 * tensors (AL_DT_STRING) are comparable with text of the same count.
 *
 * Numbers: NaN is never a difference of size; a NaN in one where the other
 * has none is counted (nan_a, nan_ref) and the position skipped; an infinity
 * against anything but the same infinity is an infinite difference. */
struct al_tensor_diff {
	bool comparable;     /* same shape as above, and same kind (numbers / text) */
	const char *why;     /* when not: "shapes differ", ... (static) */
	bool text;           /* both are text */
	bool same_dims;      /* rank and every dim equal */
	bool identical;      /* comparable and bit for bit equal (text: every string) */
	bool labels_equal;   /* classifier labels: both none, or equal at every index */
	double max_abs;      /* max |a - ref| over positions where neither is NaN */
	double ref_max;      /* max |ref| over finite values */
	double rel;          /* max_abs / ref_max; 0 when both 0, inf when only ref_max is 0 */
	double cosine;       /* over positions where both are finite; 1 when both are all 0 */
	size_t nan_a, nan_ref; /* NaN in one where the other has none */
	size_t inf_a, inf_ref; /* infinities in each */
};
/* Fill *out; AL_E_INVALID_ARG (and comparable false) when a tensor is NULL. */
AL_API enum al_status al_tensor_compare(const al_tensor *a, const al_tensor *ref, struct al_tensor_diff *out);

/* NumPy .npy files (format 1.0-3.0, C order; dtypes f2 f4 f8 i1 i2 i4 i8 u1 u2 u4
 * u8 b1, and <U strings for labels). */
AL_API enum al_status al_npy_read(const char *path, al_tensor **out, al_diags *d);
AL_API enum al_status al_npy_read_buffer(const void *bytes, size_t n, const char *name, al_tensor **out,
				  al_diags *d);
/* Write t as `dtype` (AL_DT_FP32, FP16, FP64, INT32, ...; 0 = t's own dtype). */
AL_API enum al_status al_npy_write(FILE *out, const al_tensor *t, int dtype);

enum al_precision { AL_PREC_FP32, AL_PREC_FP16 };

struct al_named_tensor {
	const char *name;
	al_tensor *t;
};

struct al_run_opts {
	enum al_precision precision;
	/* Called after every layer/op with its outputs (after fp16 rounding); the
	 * tensors are borrowed for the call (al_tensor_ref is not public: copy what
	 * you keep). NULL: none. */
	void (*observe)(void *ctx, const struct al_node *n, al_tensor *const *outs,
			uint32_t n_outs);
	void *observe_ctx;
	uint64_t max_bytes;  /* live activation bytes allowed; 0 = AL_RUN_MAX_BYTES */
	uint64_t max_steps;  /* loop iterations allowed; 0 = AL_RUN_MAX_STEPS */
	int threads;         /* BLAS threads; 0 = the library's default */
	/* Work allowed, in element operations: every layer/op run counts 256,
	 * every value it writes one (four when an observer is set: it reads them),
	 * and a matmul / convolution / inner product also a quarter per multiply-add
	 * (cost model, docs/interpreter.md "Limits"); 0 = the default:
	 * AL_RUN_WORK_SCALE times the model's estimated work, within
	 * [AL_RUN_MIN_WORK, AL_RUN_MAX_WORK]. A loop or an op whose work or
	 * iteration count is known to exceed a bound stops before it starts; any
	 * other run as soon as it exceeds one (AL_E_UNSUPPORTED). */
	uint64_t max_work;
	/* Bytes the caller holds while the run goes on and counts against the same
	 * max_bytes (its inputs, the outputs of an earlier run, what the observer
	 * keeps); read at every allocation, so an observer may raise it. NULL: none.
	 * A caller running several models at once (verify, fp16) shares one budget
	 * this way. */
	const uint64_t *held_bytes;
	/* ML Program function to run; NULL: the default one (the description's
	 * defaultFunctionName, else `main`, else the only function). Its inputs,
	 * outputs and states are that function's (al_function_desc). */
	const char *function;
};
#define AL_RUN_MAX_BYTES (UINT64_C(2) << 30)   /* default max_bytes: 2 GiB */
#define AL_RUN_MAX_STEPS UINT64_C(10000000)    /* default max_steps: 10^7 */
/* default max_work: AL_RUN_WORK_SCALE times the work the model's inferred shapes
 * give (docs/interpreter.md "Limits"), at least AL_RUN_MIN_WORK, at most
 * AL_RUN_MAX_WORK */
#define AL_RUN_MAX_WORK  UINT64_C(100000000000) /* 10^11 */
#define AL_RUN_MIN_WORK  UINT64_C(10000000000)  /* 10^10 */
#define AL_RUN_WORK_SCALE 4

/* Run the model on `inputs` (matched to the model's input features by name; image
 * features take a uint8/float [H,W,C] or [1,C,H,W] tensor). On success *outputs is
 * an array of *n_outputs named tensors in the model's output order; free it with
 * al_outputs_free. Stateful models (read_state / write_state): a state's initial
 * value is the input of its name when given (its declared shape), else zeros;
 * the final value of every state follows the outputs, under the state's name, so
 * a caller carries state over by passing those tensors to the next call.
 * Decoded weights (const values, every constexpr_* form) are kept with the model
 * after the first run that needs them and reused by later runs until
 * al_model_free: run one model from one thread at a time (separate al_model
 * handles may run in parallel). An op the interpreter does not implement is AL_E_UNSUPPORTED with
 * a diagnostic naming it; nothing is ever guessed. */
AL_API enum al_status al_model_run(al_model *m, const struct al_named_tensor *inputs, size_t n_inputs,
			    const struct al_run_opts *opts, struct al_named_tensor **outputs,
			    size_t *n_outputs, al_diags *d);
AL_API void al_outputs_free(struct al_named_tensor *outs, size_t n);
/* Stop the BLAS library's own worker threads and keep it at one thread. The
 * interpreter splits its matrix products over its own pool and never needs them,
 * but OpenBLAS's threaded build starts one per core when it is loaded, and they
 * spin for about 0.1 s. The library loads OpenBLAS itself (dlopen) at the
 * interpreter's first matrix product and does this then, so a process that only
 * analyses models never loads it; calling this is needed only after something
 * else raised OpenBLAS's thread count, and does nothing before the load or
 * without OpenBLAS. A process that shares the BLAS library with other code
 * using its threads (numpy on Debian's OpenBLAS: the same libopenblas.so.0)
 * finds it held at one thread once the interpreter has run, as before. */
AL_API void al_blas_release_threads(void);
/* A random input for feature f: its default shape (flexible dims at their default
 * size), uniform [0,1) floats (images: uint8 pixels [H,W,C]; int features: 0..9),
 * deterministic in seed. A shape whose values would take more than max_bytes (0: the
 * interpreter's default budget, as al_run_opts) is AL_E_UNSUPPORTED before any allocation:
 * a few declared dims must not make a small file allocate gigabytes. */
AL_API enum al_status al_random_input(const struct al_feature *f, uint64_t seed, uint64_t max_bytes,
			       al_tensor **out, al_diags *d);

/* Running a region: some top-level layers / ops of the root NeuralNetwork or ML
 * Program (not a pipeline), on tensors given for the values they read, returning
 * values they produce. Its cost follows the region, not the model: `anelint fix`
 * proves a rewrite on the rewritten layers alone (docs/surgery.md). Names are
 * value names (NeuralNetwork blobs in the network's own layout: a RANK5 model's
 * [C,H,W] input is the [1,1,C,H,W] blob, as al_model_infer_shapes gives it), not
 * feature names; no preprocessing, output reshaping or classifier step runs. */
struct al_region {
	const char *const *nodes;   /* layer names (NN) / op names, the first output (MIL) */
	size_t n_nodes;             /* every top-level node of that name runs, in model order */
	/* Also run the constant producers (loadConstant, loadConstantND, MIL const) whose
	 * values the nodes read, so constants are the model's, not drawn at random. */
	bool constants;
	const char *const *outputs; /* values to return, in this order; each produced by a node */
	size_t n_outputs;
};

/* A value the region reads and does not produce before it reads it: its name
 * (borrowed from the model) and its inferred shape (rank -1 when unknown). */
struct al_region_value {
	const char *name;
	struct al_shape shape;
};

/* The values region r of m needs as inputs, in first-read order (shapes are
 * inferred if needed). *out is an al_region_values_free array of *n. Errors:
 * AL_E_INVALID_ARG a node or output the region does not name / produce;
 * AL_E_UNSUPPORTED a region the executors cannot isolate: a pipeline, a node
 * inside a nested graph or owning one (branch, loop, cond, while), or a name read
 * with two different values (redefined between the region's nodes). A caller
 * meeting AL_E_UNSUPPORTED runs the whole model instead. */
AL_API enum al_status al_region_inputs(al_model *m, const struct al_region *r,
				struct al_region_value **out, size_t *n, al_diags *d);
AL_API void al_region_values_free(struct al_region_value *v);
/* Run region r of m: `inputs` are matched by value name and must be exactly the
 * values al_region_inputs lists (shapes are the caller's: the layers check them).
 * On success *outputs holds r->n_outputs tensors named as r->outputs (free with
 * al_outputs_free). The observer, precision and budgets of opts apply as in
 * al_model_run; errors as al_region_inputs, and the interpreter's. */
AL_API enum al_status al_model_run_region(al_model *m, const struct al_region *r,
				   const struct al_named_tensor *inputs, size_t n_inputs,
				   const struct al_run_opts *opts, struct al_named_tensor **outputs,
				   size_t *n_outputs, al_diags *d);
/* A random tensor of a fully known shape (every dim >= 0; else AL_E_UNSUPPORTED),
 * deterministic in (seed, name): floating dtypes (and unknown) uniform [-1,1) as
 * float, integer dtypes 0..9, bool 0/1. Over max_bytes (0: the interpreter's
 * default budget) is AL_E_UNSUPPORTED before any allocation. */
AL_API enum al_status al_random_tensor(const struct al_shape *s, const char *name, uint64_t seed,
				uint64_t max_bytes, al_tensor **out, al_diags *d);

/* Write s as one JSON string (quotes included): escaped as JSON needs, and valid
 * UTF-8 whatever the bytes (each invalid byte becomes U+FFFD). */
AL_API void al_json_put_string(FILE *out, const char *s);
/* Write s (a name from a model file, a path, any bytes) as one line of terminal
 * text: control characters (C0, DEL, C1) and the bidirectional overrides shown
 * as "\xNN" / "\uNNNN", each invalid UTF-8 byte as U+FFFD, at most max
 * characters when max > 0 (then U+2026 ends the cut text). Returns the
 * characters shown. The escaping of the text reports, for diagnostics. */
AL_API size_t al_put_escaped(FILE *out, const char *s, size_t max);

/* Minimum OS for a specification version ("iOS 13, macOS 10.15, ..."). */
AL_API const char *al_spec_min_os(int spec_version);


/* ------------------------------------------------------------------ CI: the configuration and the gate
 * What check / plan / report mean in CI (docs/configuration.md): the project
 * configuration (anelint.toml) and what each of its sections does to a model's
 * settings, rule selection, accepted findings (the configuration's [[suppress]],
 * a model's com.anelint.ignore metadata, a baseline file) and the baseline a run
 * records, directory arguments searched for models. The library prints nothing:
 * every error, warning and hint is kept as the text a tool shows on stderr
 * (al_ci_messages). Statuses: AL_E_INVALID_ARG a wrong configuration or
 * selection (a usage error), AL_E_FORMAT a baseline that is not one or a
 * directory past the search's limits, AL_E_IO / AL_E_NOMEM. */
typedef struct al_ci al_ci;
/* Option values as text (as on a command line); NULL: not set. */
struct al_ci_settings {
	const char *target, *os, *compute_units, *policy, *fail_on, *switch_cost, *rules, *baseline;
};
struct al_ci_opts {
	const char *config;     /* the configuration file; NULL: anelint.toml, then .anelint.toml, in the
				 * directory of first_path (a directory to search: itself) or the working
				 * directory, and each parent */
	bool no_config;         /* read none */
	const char *first_path; /* the first model or directory named, or NULL */
	const char *const *select, *const *ignore; /* rule ids, prefixes or names; each may be a comma list */
	size_t n_select, n_ignore;
	const char *write_baseline; /* a baseline is being recorded here: no baseline is read */
	struct al_ci_settings given; /* what the caller was given: wins over the configuration */
};
/* Read and apply the configuration: *out (always set; al_ci_free it, also after
 * an error) holds the settings al_ci_settings_of gives. */
AL_API enum al_status al_ci_open(const struct al_ci_opts *o, al_ci **out);
/* Read the baseline the settings name (given, or the configuration's), and the
 * [[model]] baselines when none is given. */
AL_API enum al_status al_ci_load_baselines(al_ci *ci);
AL_API void al_ci_free(al_ci *ci);
/* The given settings, completed with the configuration's top-level values. */
AL_API const struct al_ci_settings *al_ci_settings_of(const al_ci *ci);
/* The messages since the last al_ci_messages_clear ("" when none), one line each. */
AL_API const char *al_ci_messages(al_ci *ci);
AL_API void al_ci_messages_clear(al_ci *ci);
/* The configuration file's path and information_uri, or NULL. */
AL_API const char *al_ci_config_path(const al_ci *ci);
AL_API const char *al_ci_information_uri(const al_ci *ci);

/* Each path naming a directory (not a model package) replaced by the models
 * under it, recursively, in name order: *out (owned by ci) holds *n_out paths.
 * A subdirectory deeper than the search's limit is named in a warning and
 * counted (al_ci_unsearched); a directory with no model is AL_E_FORMAT. */
AL_API enum al_status al_ci_expand_paths(al_ci *ci, const char *const *paths, size_t n,
					 const char *const **out, size_t *n_out);
/* Subdirectories not searched (too deep): a run must not pass over them. */
AL_API size_t al_ci_unsearched(const al_ci *ci);

/* The rule selection (the given one, else the configuration's) into check's
 * rule_on; AL_E_INVALID_ARG when a selector names no rule (its message says
 * which, with a "did you mean"). The rules of check->user_rules count. */
AL_API enum al_status al_ci_select(al_ci *ci, struct al_check_opts *check);
/* What the [[model]] entries matching path do to its settings: *out is *in with
 * their target, os, compute_units and policy where the caller gave none; true
 * when the model has settings of its own (a rule selection included); *line:
 * the configuration's line of the target / os it got. */
AL_API bool al_ci_model_settings(const al_ci *ci, const char *path, const struct al_ci_settings *in,
				 struct al_ci_settings *out, uint32_t *line);
/* The rule selection of the last matching [[model]] that has one, into check. */
AL_API void al_ci_model_selection(al_ci *ci, const char *path, struct al_check_opts *check);
/* fail_on for path: the last matching [[model]]'s, else fail_on. */
AL_API enum al_fail_on al_ci_fail_on(const al_ci *ci, const char *path, enum al_fail_on fail_on);
/* al_report_opts.accepted with ctx the al_ci: why a finding is accepted (the
 * suppression's reason), *kind "config", "metadata" or "baseline"; NULL: not. */
AL_API const char *al_ci_accepted(void *ctx, const struct al_submodel *s, const char *layer,
				  const struct al_rule *r, const char **kind);
/* Whether anything may accept a finding of items[0..n) (the configuration's
 * suppressions, a baseline, a model's com.anelint.ignore). */
AL_API bool al_ci_accepts_anything(al_ci *ci, const struct al_report_item *items, size_t n);

/* The baseline of a run: begin with the file it is meant for (model paths are
 * written relative to its directory), add each checked model (its failing
 * findings that nothing accepts are copied: the model may be freed after), then
 * the document (sorted; owned by b, NULL when out of memory) and/or write it
 * (atomically). NULL: out of memory (in the messages). */
typedef struct al_ci_baseline al_ci_baseline;
AL_API al_ci_baseline *al_ci_baseline_begin(al_ci *ci, const char *path);
AL_API void al_ci_baseline_add(al_ci_baseline *b, const al_model *m);
AL_API const char *al_ci_baseline_json(al_ci_baseline *b);
/* Write the document when `write`, and free b: AL_E_NOMEM when a model's
 * findings could not all be kept (nothing written), AL_E_IO when writing failed. */
AL_API enum al_status al_ci_baseline_end(al_ci_baseline *b, bool write);

/* "Did you mean": the candidate within a small edit distance of s (ASCII case
 * folded), or NULL; of the rule ids and names (built-in and u's), or NULL. */
AL_API const char *al_nearest(const char *s, const char *const *cands, size_t n);
AL_API const char *al_rule_nearest(const char *token, const al_user_rules *u);

/* ------------------------------------------------------------------ surgery
 * Rewrite a NeuralNetwork .mlmodel, or a NeuralNetwork / ML Program .mlpackage,
 * so that more of it runs on the ANE (docs/surgery.md). Each rewrite is a row of
 * the pass table: the rule it answers, and its equivalence class. The output
 * copies every byte no rewrite touched; with nothing to rewrite it is the input,
 * byte for byte (a package: every file). */
enum al_equiv {
	AL_EQ_EXACT,       /* bit-identical results */
	AL_EQ_REASSOCIATE, /* the same maths, rounded differently */
	AL_EQ_APPROXIMATE, /* changes results: opt-in only */
};
AL_API const char *al_equiv_name(enum al_equiv e); /* "exact", "reassociate", "approximate" */
AL_API bool al_equiv_parse(const char *s, enum al_equiv *out);

struct al_pass {
	const char *name;  /* "add-broadcastable-to-add" */
	const char *rule;  /* the rule id it answers, "ANE005" */
	enum al_equiv equiv;
	const char *from;  /* the layer type it rewrites */
	const char *what;  /* one line: before -> after */
};
AL_API size_t al_passes_count(void);
AL_API const struct al_pass *al_pass_at(size_t i);

struct al_rewrite {
	const struct al_pass *pass;
	const struct al_node *node; /* the layer in the input model */
	bool applied;
	const char *after;          /* applied: the new layer(s), e.g. "activation(linear -1) + add" */
	const char *why_not;        /* not applied: why (conditions, class not allowed, skipped) */
	const char **layers;        /* applied: names of the output's layers it produced */
	uint32_t n_layers;
	const char *stays_off;      /* applied: one of layers that may still fall back (a concat of
				     * slices that still exceeds a cap) without undoing the rewrite */
	const char *also_replaces;  /* applied: another input layer the rewrite replaces (its region
				     * includes it; e.g. the innerProduct split by splitnd-of-innerproduct) */
	bool model_level;           /* edits the model description, no layer: node is a stand-in
				     * named after the input, type "(model input)" */
	bool off_until_next_round;  /* applied: its layers may fall back until the next round converts
				     * them (an fp32 while_loop unrolled: mil-fp16-compute then applies) */
};

/* A model-level fix of one multi-array input (fix --shape / --enumerate). */
struct al_input_shape {
	const char *input;       /* the model input's name */
	bool use_default;        /* --shape NAME=default: its default shape */
	const int64_t *dims;     /* n_shapes x rank values (n_shapes 0: one fixed shape) */
	uint32_t rank;
	uint32_t n_shapes;       /* 0: fix to dims; >= 1: these enumerated shapes, the first the default */
};

struct al_surgery_opts {
	enum al_equiv allow;      /* the highest class applied (AL_EQ_EXACT by default) */
	const char *const *skip;  /* layer names left as they are */
	size_t n_skip;
	const struct al_input_shape *shapes; /* model-level input fixes, applied in order */
	size_t n_shapes;
};

typedef struct al_surgery al_surgery;
/* Plan the rewrites of model m (shapes are inferred if needed). The plan
 * borrows m, which must outlive it. NeuralNetwork models (.mlmodel or package)
 * and ML Programs opened from their .mlpackage are rewritten; for others every
 * candidate is reported as not applied. */
AL_API enum al_status al_surgery_plan(al_model *m, const struct al_surgery_opts *o, al_surgery **out,
			       al_diags *d);
AL_API size_t al_surgery_count(const al_surgery *s);
AL_API const struct al_rewrite *al_surgery_get(const al_surgery *s, size_t i);
AL_API size_t al_surgery_applied(const al_surgery *s);
/* The rewritten model file in memory (free() it): a package's model.mlmodel. */
AL_API enum al_status al_surgery_bytes(al_surgery *s, uint8_t **out, size_t *n, al_diags *d);
/* The rewritten package's weight.bin image (for al_model_open_buffer): the
 * input's with the new constants appended (blob count raised), or the input's
 * own bytes when no blob was added; NULL, 0 when there is none. Owned by s. */
AL_API enum al_status al_surgery_weights(al_surgery *s, const void **out, size_t *n, al_diags *d);
/* Write the rewritten model to path. A .mlmodel input: a temporary file in
 * path's directory, then rename. A .mlpackage input: a whole new package
 * (every file copied, model.mlmodel spliced, weight.bin with the new blobs
 * appended) built in a temporary directory next to path, re-opened with
 * anelint's loader, and only then renamed into place; an existing package at
 * path is replaced only then (a path that exists and is not a package, or
 * lies inside the input, is refused). The input is never opened for writing. */
AL_API enum al_status al_surgery_write(al_surgery *s, const char *path, al_diags *d);
AL_API void al_surgery_free(al_surgery *s);

/* ------------------------------------------------------------------ proof
 * Whether model b computes what model a does, on the reference interpreter in
 * fp32: what `fix` and `split` check before they write (docs/surgery.md
 * "Proof"). Each output (or region value) is compared with al_tensor_compare
 * and judged by the class of the change:
 *   AL_EQ_EXACT        bit-identical, same dims, same classifier labels;
 *   AL_EQ_REASSOCIATE  max|diff| <= 1e-5 x max|ref| (AL_PROOF_REASSOC_TOL);
 *   AL_EQ_APPROXIMATE  max|diff| <= tolerance x max|ref| (al_proof_opts.tolerance,
 *                      default AL_PROOF_APPROX_TOL 1e-2), and no output collapses
 *                      (the reference has a nonzero value, b only zeros: e.g. values
 *                      under fp16's range) or overflows (b has an infinity or NaN
 *                      where the reference has none).
 * A NaN on one side only is an infinite difference; text outputs pass when
 * their strings are equal. The caller's storage: al_proof_clear frees it. */
#define AL_PROOF_REASSOC_TOL 1e-5
#define AL_PROOF_APPROX_TOL 1e-2
#define AL_PROOF_REGION_RUNS 4 /* random input sets of a region proof */
#define AL_PROOF_SPECIAL_RUN 1  /* the run (from 0) that also feeds special values */
struct al_proof_diff {
	char *name;          /* the output / region value (owned) */
	bool identical;      /* bit for bit in every run */
	double max_abs;      /* largest |b - a| over the runs */
	double ref_max;      /* largest finite |a| */
	double rel;          /* max_abs / ref_max */
	bool pass;
	const char *why;     /* not compared as numbers: "not numeric", "shapes or names differ", "missing" */
	bool why_seen;
	int runs;            /* numeric comparisons accumulated */
	double got_max;      /* largest finite |b| */
	bool collapsed;      /* ref_max > 0 and every value of b 0 (got_max 0): refused */
	bool overflowed;     /* b has an infinity or NaN where the reference has none: refused */
};
struct al_proof {
	bool proved;         /* both models ran and were compared: the verdict is ok */
	bool ok;             /* every diff passes */
	int runs;            /* input sets run through both */
	size_t n_values;     /* region proof: the values drawn per run */
	char why[256];       /* not proved: why; proved: a note ("2 outputs against 3"), or "" */
	struct al_proof_diff *diffs;
	size_t n_diffs;
};
struct al_proof_opts {
	enum al_equiv equiv;                    /* the highest class applied */
	const struct al_named_tensor *inputs;   /* whole proof: values given (borrowed) */
	size_t n_inputs;                        /* the other required inputs are random */
	uint64_t seed;                          /* random inputs: al_random_input / al_random_tensor */
	uint64_t max_bytes;                     /* interpreter budget (0: its default), for
						 * everything the proof holds at once */
	uint64_t max_work;                      /* interpreter work bound per run (0: its default) */
	int threads;                            /* interpreter and BLAS threads (0: the default) */
	double tolerance;                       /* AL_EQ_APPROXIMATE: the largest rel that passes
						 * (0: AL_PROOF_APPROX_TOL) */
};
/* The whole models on the same inputs. AL_OK with p->proved false (and p->why)
 * when the interpreter cannot run them; AL_E_NOMEM when out of memory; the
 * status of al_random_input when an input cannot be drawn (diagnostics in d). */
AL_API enum al_status al_prove_equivalent(al_model *a, al_model *b, const struct al_proof_opts *o,
				   struct al_proof *p, al_diags *d);
/* Region ra of a against region rb of b (al_model_run_region) on
 * AL_PROOF_REGION_RUNS random sets of the values they read; with AL_EQ_EXACT
 * one run also feeds +-0, +-1, +-0.5, +-65504, +-2^-24 (values random draws
 * never give and exact rewrites must keep). The regions' outputs must be the
 * same value names. AL_OK when decided (p->proved); AL_E_NOMEM; otherwise the
 * status why the region could not be isolated or run, p->why saying it: the
 * caller proves on the whole models instead. */
AL_API enum al_status al_prove_region(al_model *a, const struct al_region *ra, al_model *b,
			       const struct al_region *rb, const struct al_proof_opts *o,
			       struct al_proof *p, al_diags *d);
/* Judge outputs `got` against `ref` (matched by name) as the proofs do (an
 * approximate change within AL_PROOF_APPROX_TOL); for callers that run the
 * models themselves (split's chain of parts). */
AL_API enum al_status al_prove_outputs(const struct al_named_tensor *ref, size_t n_ref,
				const struct al_named_tensor *got, size_t n_got, enum al_equiv e,
				struct al_proof *p);
AL_API void al_proof_clear(struct al_proof *p);

/* ------------------------------------------------------------------ fix
 * `anelint fix` as one call (docs/surgery.md): rounds of the pass table until a
 * plan applies nothing or max_rounds, each round's rewrites re-planned while
 * one leaves a layer falling back, proved in the reference interpreter (whole
 * models or the rewritten region), a round with a refused approximate rewrite
 * run again without them, and the keep / refuse decision; the output is
 * written (atomically) only when every round proved. The CLI and the Python
 * package call this and print / convert the result. */
enum al_fix_proof_kind { AL_FIX_PROOF_AUTO, AL_FIX_PROOF_WHOLE, AL_FIX_PROOF_REGION };

struct al_fix_opts {
	const char *input;          /* the model (.mlmodel, .mlpackage) */
	const char *output;         /* written there; NULL (with dry_run): nowhere */
	bool dry_run;               /* plan, rewrite and prove, write nothing */
	bool in_place;              /* output may be the input (its replacement is the request) */
	enum al_equiv allow;        /* the highest class applied */
	double tolerance;           /* approximate rewrites: the largest rel (0: AL_PROOF_APPROX_TOL) */
	int max_rounds;             /* 0: 8; 1 to 64 */
	enum al_fix_proof_kind proof;
	const char *inputs;         /* a directory of NAME.npy inputs for the whole proof, or NULL */
	const char *function;       /* a multifunction program: the function rewritten */
	const struct al_input_shape *shapes; /* --shape / --enumerate (borrowed) */
	size_t n_shapes;
	const char *const *skip;    /* layers the first round leaves alone */
	size_t n_skip;
	struct al_check_opts check; /* target, OS release, compute units: what "falls back" means */
	uint64_t seed;              /* random inputs (0 is a seed; the CLI's default is 1) */
	uint64_t max_bytes, max_work; /* interpreter budgets (0: its defaults) */
	int threads;                /* interpreter threads (0: its default) */
};

struct al_fix_summary { /* check of a model: layers, on the ANE after partitioning, ... */
	uint32_t layers, ane, fallbacks, segments, switches;
};

struct al_fix_rewrite {
	const char *layer, *type;   /* the layer / op of the round's input */
	const char *pass, *rule;    /* the pass and the rule it answers */
	enum al_equiv equiv;
	bool applied;
	const char *after;          /* applied: the new layer(s) */
	const char *why_not;        /* not applied: why (a rewrite dropped because it would still fall back says so) */
	bool dropped;               /* not applied because its new layers would still fall back */
	bool on_ane;                /* the layer already runs on the ANE by its own verdict */
	int round;
};

struct al_fix_round_proof {
	bool run;                   /* false: nothing was proved (nothing applied) */
	bool proved, ok;            /* both ran and were compared; every output passed */
	const char *kind;           /* "whole", "region" or "structural" */
	int runs;                   /* input sets run through both */
	double flops;               /* the round input's estimated work */
	const char *inputs;         /* what the inputs were */
	const char *note;           /* why this kind */
	const char *shapes;         /* the whole proof of a flexible model: the shapes run; "" */
	const char *why;            /* not proved (or a note): why; "" */
	const char *const *region_in, *const *region_out; /* region proof: the layers compared */
	size_t n_region_in, n_region_out;
	const struct al_proof_diff *diffs;
	size_t n_diffs;
};

struct al_fix_round {
	int round;                  /* 1, 2, ... */
	size_t applied;
	const struct al_fix_rewrite *rewrites;
	size_t n_rewrites;
	struct al_fix_summary before, after;
	enum al_equiv highest;      /* the highest class applied in this round */
	double tolerance;           /* the tolerance asked (0: the default) */
	struct al_fix_round_proof proof;
	const char *approximate_refused; /* its approximate rewrites refused and left out: the output and figures; "" */
};

struct al_fix_result {
	int exit_code;              /* README "Exit codes": 0 written (or a dry run), 1 refused or not
				     * settled, 2 the options do not fit the model, 3 invalid, 4 I/O */
	bool decided;               /* the rounds ran to a decision: the report below is filled */
	char usage[256];            /* exit 2 for an option the model cannot take: why ("" otherwise) */
	const char *input, *output; /* as given */
	enum al_equiv allow;        /* as asked */
	double tolerance;           /* as asked (0: the default) */
	bool dry_run;
	const struct al_fix_round *rounds; /* the rounds that applied (the first also when none did) */
	int n_rounds, max_rounds;
	bool fixed_point;           /* the last output was planned again and nothing applies */
	size_t pending;             /* stopped at max_rounds: rewrites that would still apply */
	size_t applied;             /* over all rounds */
	int shown;                  /* the round the top-level proof shows (refused, else the largest rel) */
	bool refused, written;
	void *state;                /* the rounds' models and plans the pointers above borrow */
};

/* Run fix; errors (each with its file) go to d. AL_OK when res is filled
 * (res->exit_code says how it ended: an error is also in d). */
AL_API enum al_status al_model_fix(const struct al_fix_opts *o, struct al_fix_result *res, al_diags *d);
/* `anelint fix --format json` of a result (docs/json-schema.md): the one JSON writer. */
AL_API void al_fix_write_json(FILE *out, const struct al_fix_result *res);
AL_API void al_fix_result_free(struct al_fix_result *res);
/* Why output df of round g's proof was refused, beyond its figures, into buf
 * (" (... it collapsed ...)", " (beyond the tolerance 0.01)"; "" when it passed). */
AL_API const char *al_fix_diff_why(const struct al_fix_round *g, const struct al_proof_diff *df, char *buf,
				   size_t cap);

/* ------------------------------------------------------------------ probe
 * `anelint probe -o DIR` as one call (docs/evidence.md "Probes"): writes into dir
 * (created when absent; its parent must exist) one small model per probe (what
 * the rule table is unsure of: the family table's rules and every layer kind / op
 * with no evidence on some release that a builder can write), manifest.json
 * (schema anelint-probes: what each decides, anelint's predictions, how to settle
 * it) and run_probes.sh (the capture on a Mac). Stops at the first failure. */
struct al_probe_opts {
	const char *dir;            /* the directory written */
};

struct al_probe_result {
	int exit_code;              /* README "Exit codes": 0 written, 3 a probe anelint cannot
				     * build or read back (a bug), 4 I/O */
	size_t n_probes;            /* probe models written */
};

/* AL_OK when everything was written; otherwise the failure's errors (each with its
 * file) are in d and res->exit_code says which kind. */
AL_API enum al_status al_probes_write(const struct al_probe_opts *o, struct al_probe_result *res, al_diags *d);

/* ------------------------------------------------------------------ calibrate
 * `anelint calibrate MODEL EVIDENCE... -o RULES` as one call (docs/evidence.md
 * "Calibrate"): the model is checked against each evidence file (at the chip,
 * release and compute units the evidence names, else the options'), and what was
 * observed against the prediction becomes a --rules file: built-in rules switched
 * off on a chip and release or given another unit, new CALnnn rules per layer / op
 * type; the file is loaded back, the evidence compared again with it, and written
 * (atomically). */
struct al_calibrate_opts {
	const char *model;                 /* the model the evidence was captured from */
	const char *const *evidence;       /* evidence files */
	size_t n_evidence;
	int evidence_format;               /* 0: told apart by content (evidence.md "Formats") */
	struct al_where where;             /* evidence that names its chip, release or compute
					    * units wins; NULL / AL_CU_DEFAULT: the defaults */
	const char *rules_path;            /* --rules, copied at the head of the output (NULL: none) */
	const al_user_rules *rules;        /* its rules, loaded by the caller (borrowed) */
	const char *output;                /* the rules file written */
};

struct al_calibrate_result {
	int exit_code;              /* README "Exit codes": 0 written and check agrees, 1 written with
				     * conflicts, ops not calibratable or disagreement left, 3 invalid, 4 I/O */
	bool written;
	size_t rules_written, conflicts, not_calibratable;
	size_t agreed_before, matched_before; /* evidence ops agreeing with check / compared, before */
	size_t agreed_after, matched_after;   /* and with the rules written */
	char *notes;                /* what was left as it is and why: lines "calibrate: ...\n" with
				     * every name escaped (al_put_escaped), or NULL */
};

/* AL_OK when res is filled (res->exit_code 0 or 1); otherwise the errors (each with its
 * file) are in d, and res->exit_code and res->notes say the rest. */
AL_API enum al_status al_calibrate(const struct al_calibrate_opts *o, struct al_calibrate_result *res, al_diags *d);
AL_API void al_calibrate_result_free(struct al_calibrate_result *res);

/* ------------------------------------------------------------------ compare
 * `anelint compare MODEL EVIDENCE...` as one call (docs/evidence.md): the model
 * is checked for the chip, release and compute units each evidence file names
 * (else the options'), and what a Mac observed is lined up with the prediction,
 * one evidence file at a time, as text or as the anelint-compare JSON document;
 * or, with write_evidence, the prediction written as evidence. */

/* An evidence format by name ("json", "mil", "plan", "mlperf", "oslog",
 * "placement"; "auto": 0, told apart by content), the value of evidence_format
 * and write_evidence below; -1 when unknown. */
AL_API int al_evidence_format_find(const char *name);
AL_API const char *al_evidence_format_name(int format); /* "auto" for 0 */

struct al_compare_opts {
	const char *model;                 /* the model the evidence was captured from */
	const char *const *evidence;       /* evidence files (none with write_evidence) */
	size_t n_evidence;
	int evidence_format;               /* al_evidence_format_find; 0: by content */
	struct al_where where;             /* evidence that names its chip, release or compute
					    * units wins; NULL / AL_CU_DEFAULT: the defaults */
	const al_user_rules *rules;        /* --rules, loaded by the caller (borrowed), or NULL */
	bool json;                         /* the anelint-compare document, else text */
	double fail_under;                 /* agreement below this percentage is exit 1 (0: none) */
	int write_evidence;                /* > 0: no comparison; the prediction as evidence
					    * in this format (al_evidence_format_find) */
	const char *output;                /* also write the document here, atomically (NULL: only return it) */
};

struct al_compare_result {
	int exit_code;              /* README "Exit codes": 0, 1 under fail_under, 3 invalid model or
				     * evidence, 4 I/O (an evidence file that fails is left out) */
	char *doc;                  /* the text or JSON document, or the evidence written; NULL: none */
	size_t n_doc;
	bool written;               /* doc written to output */
	size_t matched, agreed;     /* evidence ops compared / agreeing, over every file */
	double agreement;           /* agreed / matched in percent (100 when none matched) */
	bool under;                 /* agreement below fail_under (exit 1) */
};

/* AL_OK when res is filled (res->exit_code says how it ended: an error, each naming
 * its file, is also in d); AL_E_INVALID_ARG for options that make no sense; else the
 * model's failure to open, with its errors in d. */
AL_API enum al_status al_compare(const struct al_compare_opts *o, struct al_compare_result *res, al_diags *d);
AL_API void al_compare_result_free(struct al_compare_result *res);

/* ------------------------------------------------------------------ split
 * Cut a NeuralNetwork .mlmodel (or a one-function ML Program .mlpackage) after
 * given top-level layers / ops into parts that run
 * one after the other, each a complete model, or one pipeline of them
 * (docs/split.md). Layers are copied byte for byte (weights included); a
 * tensor produced in one part and read in a later one (a boundary tensor)
 * becomes an output of the first and an input of the second, typed as a
 * multi-array of its inferred static shape (fp32) in the network's rank
 * convention (ML Program: the type the program declares). A constant layer / op
 * is copied into each later part reading it instead. Anything that cannot be cut
 * is refused with a reason. */
enum al_split_role {
	AL_SPLIT_MODEL_INPUT,  /* an input of the original model (its description copied) */
	AL_SPLIT_MODEL_OUTPUT, /* an output of the original model (its description copied) */
	AL_SPLIT_BOUNDARY,     /* a tensor passed from an earlier part to a later one */
};

struct al_split_tensor {
	const char *name;
	enum al_split_role role;
	int from_part;        /* inputs: the part producing it, -1 for a model input */
	/* The type written: a model feature's declared type, or for a boundary tensor
	 * the multi-array shape declared (RANK5 networks: [C,H,W] of a [1,1,C,H,W] blob)
	 * and its dtype (fp32); rank 0 when a model feature's description is copied. */
	int dtype;
	int rank;
	int64_t dims[AL_SHAPE_MAX_RANK];
	struct al_shape inferred; /* boundary: the blob's inferred shape */
};

struct al_split_part {
	uint32_t first, last;   /* top-level layer indices (inclusive), model order */
	const char *first_layer, *last_layer;
	const char *type;       /* the Model type written: neuralNetwork, neuralNetworkClassifier, ... */
	int spec_version;
	struct al_split_tensor *inputs, *outputs;
	uint32_t n_inputs, n_outputs;
};

struct al_split_opts {
	const char *const *at;  /* cut after each of these top-level layers (any order) */
	size_t n_at;
	/* Also cut wherever the predicted unit changes between consecutive top-level
	 * layers (al_model_plan of the root model, after al_model_check with check). */
	bool segments;
	const struct al_check_opts *check;
	const struct al_plan_opts *plan;
};

typedef struct al_splitter al_splitter;
/* Plan the cut of m (shapes are inferred; borrowed: m must outlive the split).
 * Refusals are AL_E_INVALID_ARG (no such layer, a cut leaving an empty part) or
 * AL_E_UNSUPPORTED (not a NeuralNetwork .mlmodel, a cut inside a branch/loop, a
 * boundary tensor without a static shape, ...), with one error saying why. */
AL_API enum al_status al_split_plan(al_model *m, const struct al_split_opts *o, al_splitter **out,
			     al_diags *d);
AL_API size_t al_split_count(const al_splitter *s);
AL_API const struct al_split_part *al_split_get(const al_splitter *s, size_t i);
/* Model file of part i (0-based), or with i == al_split_count(s) of the pipeline
 * holding every part, in memory (free() it). */
AL_API enum al_status al_split_bytes(al_splitter *s, size_t i, uint8_t **out, size_t *n, al_diags *d);
/* ML Program: the weights/weight.bin bytes each part and the pipeline carry (the
 * input's, byte for byte; borrowed from the model); NULL, 0 for a NeuralNetwork. */
AL_API void al_split_weights(const al_splitter *s, const void **p, size_t *n);
/* Write the parts to paths[0..n_paths) (n_paths 0 or al_split_count) and/or the
 * pipeline to `pipeline` (NULL: none): all or nothing, each through a temporary
 * file (ML Program: a .mlpackage directory, which must not exist yet) in its
 * directory renamed at the end. A path naming the input model, or two equal
 * paths, is AL_E_INVALID_ARG before anything is written. */
AL_API enum al_status al_split_write(al_splitter *s, const char *const *paths, size_t n_paths,
			      const char *pipeline, al_diags *d);
AL_API void al_split_free(al_splitter *s);

/* ------------------------------------------------------------------ commands
 * What `anelint run`, `verify`, `fp16` and `split` do, as one call each: the CLI
 * parses its arguments into these options and prints the result; the Python
 * package calls the same functions (src/command/). The result is the library's
 * (free it with its _free function); strings in it may borrow from the options,
 * which must outlive it. The JSON documents are written by the library, so every
 * front end gives the same bytes. */

/* Why a command stopped, so that a front end can say it the CLI's way. Every
 * failure also leaves an error diagnostic in the command's diags. */
enum al_failure_kind {
	AL_FAIL_NONE,
	AL_FAIL_OPTION,        /* an option does not fit the model: fmt with its one %s = arg (usage error) */
	AL_FAIL_MISSING_INPUT, /* no value for input `subject` (arg: its kind), and no --random */
	AL_FAIL_SUBJECT,       /* msg about subject (a path; empty: msg alone) */
	AL_FAIL_DIAGS,         /* the error diagnostics, about subject */
	AL_FAIL_DUPLICATE,     /* subject is named twice as an output */
};
struct al_failure {
	enum al_failure_kind kind;
	enum al_status status; /* AL_E_INVALID_ARG: the caller's mistake */
	const char *fmt, *arg; /* AL_FAIL_OPTION (static / borrowed) */
	char subject[4352];
	char msg[512];
};

/* Where the inputs of a run come from, in this order: values, files, dir, random. */
struct al_run_inputs {
	const struct al_named_tensor *values; /* in memory (borrowed), by input name */
	size_t n_values;
	const char *const *files;   /* "NAME=FILE.npy" (anelint --input) */
	size_t n_files;
	const char *dir;            /* DIR/NAME.npy (--inputs); with steps DIR/stepK_NAME.npy first */
	const char *const *states;  /* "NAME=FILE.npy": a state's initial value (--state) */
	size_t n_states;
	bool random;                /* draw the inputs left (verify and fp16 always do) */
	uint64_t seed;              /* of the random inputs (the CLI's default: 1) */
};

/* Options of run, verify and fp16. */
struct al_exec_opts {
	const char *model;          /* path (run, fp16; verify's reference) */
	const char *model_b;        /* verify: the model checked against `model` */
	al_model *open_a, *open_b;  /* already open (a binding's): run these, named model / model_b
				     * in messages (borrowed: the caller frees them after the result) */
	struct al_run_inputs in;
	enum al_precision precision;
	double tol;                 /* run --expect, verify: max|a-ref| <= tol x max|ref| (0: identical) */
	uint64_t max_bytes, max_work; /* as al_run_opts (0: the defaults) */
	int threads;                /* 0: every online core (at most 64) */
	const char *function;       /* ML Program function, NULL: the default */
	/* run */
	const char *expect;         /* compare with DIR/NAME.npy */
	const char *out;            /* write every output to DIR/NAME.npy (all or none) */
	const char *const *protect; /* files the writes must not destroy (al_output_check) */
	size_t n_protect;
	uint64_t steps;             /* calls, carrying state (0: one, not stepped) */
	uint64_t repeat;            /* timed runs after the first */
	bool keep_values;           /* keep the last call's outputs in the result (values) */
	/* fp16 */
	uint64_t top;               /* layers and flags listed (0: 10 layers, 200 flags) */
};

/* One output against its reference (al_tensor_compare and the verdict). */
struct al_value_diff {
	const char *name;
	bool comparable;
	const char *why;            /* not comparable (static) */
	bool identical;
	double max_abs, scale, rel, cosine; /* NaN when n_nan */
	size_t n_nan;               /* NaN where the reference has a number */
	bool pass;
};

/* A value a run read or made, as the reports show it. */
struct al_exec_value {
	char *name;
	char *from;                 /* inputs: "x.npy", "random (seed 1)" */
	int dtype;
	char *shape;                /* "[1,3,224,224]" */
	char *summary;              /* outputs: "min .. max .. mean ..", a text, a top class */
	int step;                   /* -1: not stepped */
	bool state;                 /* a final state, after the outputs */
	bool has_expect;
	struct al_value_diff expect;
};

/* fp16: one layer, by the error it adds or a flag. */
struct al_fp16_layer {
	size_t order;               /* in execution order */
	const char *name, *type;    /* borrowed from the model the result keeps */
	double err_in, err;         /* max|fp16-fp32| / max|fp32|: the inputs', the output's */
	size_t overflow, underflow, subnormal, nonzero, nonfinite16;
	const char *flag;           /* flags: why (static) */
};

struct al_exec_result {
	const char *command;        /* "run", "verify", "fp16" */
	const struct al_exec_opts *opts; /* borrowed */
	struct al_failure fail;
	int threads;
	double ms, ms_b;            /* run: the first call; verify: each model; fp16: fp32, fp16 */
	bool started;               /* run: the first call ran (its header and inputs are shown) */
	struct al_exec_value *inputs; /* the first call's */
	size_t n_inputs;
	const char *inputs_how;     /* verify: how the first input was made ("none") */
	struct al_exec_value *outputs; /* run: every call's, in order */
	uint64_t steps_shown;        /* run: calls whose outputs were recorded (or begun, before a failure) */
	size_t n_outputs;
	struct al_value_diff *diffs; /* verify, fp16: per output of `model` */
	size_t n_diffs;
	bool count_differs;          /* verify: the models have different numbers of outputs */
	double ms_median, ms_min;    /* run --repeat */
	size_t n_written;            /* run --out: files */
	bool pass;
	/* fp16 */
	size_t ops_run, ops_compared;
	bool diverged;
	size_t nonzero, overflow, underflow, subnormal, nonfinite;
	struct al_fp16_layer *layers, *flags;
	size_t n_layers, n_flags, flags_not_listed;
	/* run with keep_values: the last call's outputs and states */
	struct al_named_tensor *values;
	size_t n_values;
	void *priv;                  /* what the result owns */
};

/* anelint run / verify / fp16: AL_OK when the command ran to its verdict (r->pass;
 * fp16: false when a NaN appeared in fp16 where fp32 has a number), else the
 * failure's status, r->fail saying how, diagnostics in d. *out is always set
 * (NULL only when out of memory); free it with al_exec_result_free. */
AL_API enum al_status al_run_model(const struct al_exec_opts *o, struct al_exec_result **out, al_diags *d);
AL_API enum al_status al_verify(const struct al_exec_opts *o, struct al_exec_result **out, al_diags *d);
AL_API enum al_status al_fp16_compare(const struct al_exec_opts *o, struct al_exec_result **out, al_diags *d);
/* run with keep_values: the last call's outputs and final states (borrowed). */
AL_API const struct al_named_tensor *al_exec_result_values(const struct al_exec_result *r, size_t *n);
/* The command's --format json document (a result that ran: AL_OK above; a run
 * that failed after its first call: the part shown before the failure). */
AL_API void al_exec_result_json(FILE *out, const struct al_exec_result *r);
AL_API void al_exec_result_free(struct al_exec_result *r);

/* anelint split (docs/split.md): plan the cut, build every part and the
 * pipeline in memory (each must load and check), prove them (the model, the
 * pipeline and the parts one after the other run in the reference interpreter
 * on the same inputs: every output bit-identical), then write every file, all
 * or none, and load and check each again from disk. A model the interpreter
 * cannot run is written unproved; parts that differ are refused (nothing
 * written). */
struct al_split_command {
	const char *model;
	const char *const *at;      /* layer names, indices as check shows them, or "segments" */
	size_t n_at;
	const char *const *parts;   /* -o: one path per part (or none) */
	size_t n_parts;
	const char *pipeline;       /* the pipeline's path, NULL: none */
	const char *rules;          /* a rules file: segments cut where check sees the unit change */
	const char *function;       /* ML Program function, NULL: the default */
	const char *inputs_dir;     /* proof inputs DIR/NAME.npy, else random */
	uint64_t seed, max_bytes, max_work;
	const char *const *protect; /* files the writes must not destroy (al_output_check) */
	size_t n_protect;
};
struct al_split_figures {
	uint32_t layers, fallbacks, segments; /* of a part or the pipeline, by al_model_plan */
};
struct al_split_result {
	const struct al_split_command *opts; /* borrowed */
	struct al_failure fail;
	const al_splitter *split;   /* the cut (al_split_get), owned by the result */
	size_t n_parts;
	struct al_split_figures *figures; /* n_parts + 1: the pipeline last */
	const char **notes;         /* every warning of the way (borrowed from the diags) */
	size_t n_notes;
	bool proof_run;             /* the original ran */
	bool pipeline_identical, chain_identical;
	char why[256];              /* why not run, or the first difference */
	bool refused, written;
	void *priv;
};
/* AL_OK when decided (written, or refused: r->refused), else the failure's
 * status (r->fail, diagnostics in d). *out is always set (NULL only when out of
 * memory); free it with al_split_result_free. */
AL_API enum al_status al_split_model(const struct al_split_command *o, struct al_split_result **out,
				     al_diags *d);
/* The --format json document of a decided split. */
AL_API void al_split_result_json(FILE *out, const struct al_split_result *r);
AL_API void al_split_result_free(struct al_split_result *r);
/* ------------------------------------------------------------------ commands on models (src/command/)
 * check, plan, report and info as one library call (al_models_run): every model
 * loaded (its function selected) and, but for info, checked; the release columns
 * no model loads on left out; a front end's per-model settings and evidence
 * applied; the analyses the sink shows run once; the document written; whether
 * the models pass. Models stream (one at a time, in constant memory) when the
 * sink can and nothing needs them all. What a front end adds (the CLI's
 * configuration, baselines, evidence, where its messages and -o go) comes in
 * through hooks, each optional: the Python package sets none. */

/* What a command comes to, the CLI's exit codes (README "Exit codes"). */
enum al_outcome {
	AL_OUTCOME_PASS = 0,     /* every layer/op predicted on the ANE (or --fail-on passes) */
	AL_OUTCOME_FALLBACK = 1, /* something falls back as fail_on counts */
	AL_OUTCOME_USAGE = 2,    /* the request is wrong (e.g. a function no model has) */
	AL_OUTCOME_INVALID = 3,  /* a model is malformed or unsupported */
	AL_OUTCOME_IO = 4,       /* a file cannot be read or written, or no memory */
};
/* The outcome of a failed step's status (AL_OK: pass). */
AL_API int al_outcome_of(enum al_status st);

struct al_models_run {
	enum al_sink_cmd cmd;            /* AL_SINK_CHECK (check, report), AL_SINK_PLAN, AL_SINK_INFO */
	const struct al_sink *sink;      /* NULL: json */
	const char *const *paths;
	size_t n_paths;
	const char *function;            /* a multifunction ML Program's function, or NULL */
	al_model *const *models;         /* optional: models[i] opened by the caller (paths[i] names it),
					  * checked here, freed by the caller; not streamed */
	struct al_where_spec where;      /* where the models run: the verdict columns (al_where_parse) */
	struct al_check_opts check;      /* its where: where.where (the call keeps them in step) */
	struct al_plan_opts plan;
	struct al_report_opts report;    /* what the sink shows; check, plan and the columns: set by the call */
	FILE *out;                       /* the document, unless the open hook gives one */
	al_diags *diags;                 /* without an errors / note hook: the errors and notes, by file */
	bool fails;                      /* out: a model falls back as fail_on counts (outcome 1) */
	enum al_status status;           /* out: the first failed step's status (AL_OK: none failed) */
	/* hooks, each optional; ctx is the front end's */
	void *ctx;
	/* A model's errors (d NULL: no memory), and a note on a model. */
	void (*errors)(struct al_models_run *r, const char *path, const al_diags *d);
	void (*note)(struct al_models_run *r, const char *path, const char *msg);
	/* Whether path has settings of its own (then the models do not stream). */
	bool (*has_own)(struct al_models_run *r, const char *path);
	/* Loaded models whose findings the front end may accept: it sets
	 * report.accepted and accepted_ctx when it accepts any. */
	void (*accepts)(struct al_models_run *r, const struct al_report_item *items, size_t n);
	/* After loading: the models' own options own[i] (checked with them by the
	 * hook), then the evidence; each returns the outcome so far (rc), or worse. */
	int (*own)(struct al_models_run *r, struct al_report_item *items, size_t n,
		   const struct al_report_opts **own, int rc);
	int (*evidence)(struct al_models_run *r, struct al_report_item *items, size_t n, int rc);
	/* fail_on for one model (a configuration may set it per model). */
	enum al_fail_on (*fail_on)(struct al_models_run *r, const char *path, enum al_fail_on dflt);
	/* Findings recorded instead of failing (a baseline): all at once (write), or
	 * one model at a time when streaming (begin, add, end); outcomes. */
	int (*baseline_write)(struct al_models_run *r, const struct al_report_item *items, size_t n);
	void *(*baseline_begin)(struct al_models_run *r); /* NULL: cannot (outcome 4) */
	void (*baseline_add)(void *b, const struct al_report_item *it);
	int (*baseline_end)(void *b, bool write);
	bool records_baseline;           /* use the baseline hooks */
	/* The document's destination (failed: an error came first, a file need not
	 * be made; NULL: none, or cannot, the hook said why), and its end (keep false:
	 * an error left no document); outcomes. */
	FILE *(*open)(struct al_models_run *r, bool failed);
	int (*close)(struct al_models_run *r, FILE *f, bool keep);
	int outcome_floor;               /* an outcome already decided (e.g. directories not searched) */
};
/* Run r's command on r's paths: the outcome (enum al_outcome), r->fails. */
AL_API int al_models_run(struct al_models_run *r);

#ifdef __cplusplus
}
#endif
#endif
