/* SPDX-License-Identifier: MIT */
/* model.h: the format stage's model IR, shared by every stage above it.
 *
 *   limits      bounds on untrusted input.
 *   model       struct al_model: the mappings, the arena, the sub-model list
 *               (model.c).
 *   tables      the NeuralNetwork layer table and the MIL op table (one row each,
 *               tables.c from nn_layers.def and mil_ops.def).
 *   loaders     entry points of the format stage (mlmodel.c, mlpackage.c, mil.c).
 *   MIL values  access to an ML Program op's parameters and values (mil.c).
 */
#ifndef ANELINT_MODEL_H
#define ANELINT_MODEL_H

#include "base.h"
#include "pb.h"

#include <string.h>

/* ------------------------------------------------------------------ limits
 * Bounds on untrusted input. Counts are also bounded by the bytes present
 * (a layer needs at least 2 bytes, so n_layers <= file size / 2). */
#define AL_MAX_DEPTH 32         /* nesting of pipelines / branch / loop / blocks */
#define AL_MAX_RANK 64          /* dims kept per declared tensor type */
/* Layers + ops per opened file, all graphs and pipeline stages together. The
 * largest published models have ~10^4 ops; a hostile file of 2-byte layers
 * would otherwise turn 100 MB into ~10 GB of IR (about 100 bytes per node). */
#define AL_MAX_NODES (1u << 20)

/* Unmap every resident page of the model's read-only file mappings (ali_advise_dontneed:
 * MADV_DONTNEED on Linux, a hint elsewhere). Nothing is lost: the mapping stays valid and a later read
 * re-faults from the page cache. The loaders and rules call it as they go so
 * that peak RSS follows the layer headers in use, not the weights beside them. */
struct al_model;
void ali_model_trim(const struct al_model *m);

/* ------------------------------------------------------------------ model */

#define AL_MAX_MAPS 8
#define AL_ESPRESSO_TYPES 256 /* distinct espresso layer types of unknown kind per model */
#define AL_ESPRESSO_STAGES 64 /* compiled stages whose espresso weights are counted */

struct al_model {
	char *path;
	bool is_package;
	struct al_arena arena;
	/* the verdicts and findings of the last al_model_check (rules.c): emptied by
	 * the next check, so checking a model again and again takes no more memory */
	struct al_arena verdicts;
	/* rule_engine.c's memo of the predicates that do not read the OS release, kept
	 * across checks of one target (the deployment range): its arena and its state */
	struct al_arena rule_memo;
	void *rule_memo_state;
	struct al_map maps[AL_MAX_MAPS]; /* model.mlmodel, weight.bin, ... */
	int n_maps;
	/* ali_model_trim (ir.c): the process's fault count after its last madvise */
	uint64_t trim_faults;
	bool trim_counted;
	struct al_submodel **subs; /* root first, then pipeline stages depth-first */
	size_t n_subs, cap_subs;
	/* ML Program weights: span of weights/weight.bin (n = 0 when absent) */
	al_span weights;
	const char *weights_path;
	/* a package: where its weight.bin is read, relative to the package
	 * ("Data/<Manifest weights item>/weight.bin"), whether it exists or not */
	const char *weights_rel;
	size_t n_nodes; /* layers + ops loaded so far, bounded by AL_MAX_NODES */
	/* ML Programs loaded (mil.c): each one's Program message, for the MIL text
	 * writer (miltext_write.c); arena-grown */
	struct al_mil_prog {
		const struct al_submodel *sub;
		al_span program;
	} *mil_progs;
	size_t n_mil_progs;
	/* a compiled model directory (.mlmodelc, mlmodelc.c): what `info` shows of
	 * its compiler and what the compiled form lacks against the source */
	struct al_compiled {
		bool is_compiled;
		const char *compiler; /* "coremlc 3500.32.1 (MIL 3500.14.1)" from buildInfo */
		const char *metadata; /* from metadata.json */
		const char *esp_types[AL_ESPRESSO_TYPES]; /* espresso types of unknown kind */
		uint32_t n_esp_types;
		struct al_weight_stats esp_weights[AL_ESPRESSO_STAGES]; /* per stage, build order */
		bool esp_stage[AL_ESPRESSO_STAGES];
		uint64_t *esp_layer_bytes[AL_ESPRESSO_STAGES]; /* per layer, in layer order */
		uint32_t esp_n_layers[AL_ESPRESSO_STAGES];
		/* per layer, in layer order: the shapes of its tops from
		 * model.espresso.shape (NULL when the file is absent) */
		struct al_esp_tops {
			const struct al_shape *shape; /* n entries; rank -1: blob not listed */
			uint32_t n;
			const struct al_shape *in; /* the same for its bottoms */
			uint32_t n_in;
		} *esp_tops[AL_ESPRESSO_STAGES];
		uint32_t n_stages;
	} compiled;
	bool checked;
	bool shapes_done; /* al_model_infer_shapes ran */
	bool validated;   /* al_model_validate passed in al_model_check: not run again per release or target */
	const struct al_target *checked_target; /* target of the last al_model_check */
	const struct al_release *checked_os;    /* OS release of the last al_model_check */
	int checked_cu; /* its compute units (enum al_compute_units): plans follow */
	bool checked_floor_off; /* its user rules switched the work floor (ANE072) off: plans follow */
	/* the interpreter's per-model data (decoded weights, prepared runs), freed
	 * by al_model_free through interp_free before the files are unmapped */
	void *interp;
	void (*interp_free)(void *);
};

/* Count n more nodes against AL_MAX_NODES; false when the file has too many. */
bool ali_model_reserve_nodes(struct al_model *m, size_t n);

/* Remember the Program message sub was loaded from (ali_mil_program_of). */
enum al_status ali_model_note_program(struct al_model *m, const struct al_submodel *sub,
				      al_span program);
bool ali_mil_program_of(const struct al_model *m, const struct al_submodel *sub, al_span *out);
/* An IEEE binary16 value (the low 16 bits of h) as a double: mil.c. */
double ali_half_to_double(uint32_t h);

/* Append a sub-model to m->subs (arena-backed growth). Returns NULL on OOM. */
struct al_submodel *ali_model_add_sub(struct al_model *m);

/* Per-node loader data kept for the rules (node->priv points at one). */
struct al_mil_scope; /* mil.c: the value names visible in one MIL graph */
struct al_node_src {
	al_span msg;    /* the whole layer / op message */
	al_span params; /* NN: the layer-type sub-message (e.g. ConvolutionLayerParams) */
	const struct al_submodel *sub;
	/* MIL: the op's inputs map (param name -> Argument message), each with its
	 * Bindings read once (mil.c parse_inputs) */
	struct al_mil_arg *mil_args;
	uint32_t n_mil_args;
	/* MIL: what each name of n->inputs resolves to in the op's scope (NULL:
	 * nothing), resolved once the program is loaded; NULL when not resolved
	 * (no memory): the al_mil_* lookups then search the scopes */
	const struct al_mil_ent *const *mil_in_ents;
	/* MIL: a `const` op's attributes["val"], decoded once (mil.c); NULL for
	 * other ops and for a const without one */
	const struct al_mil_cval *mil_cval;
	/* cost.c: the stored bytes of a `const` op's value, worked out on its
	 * first use (val_bytes_done) and written there only: a const feeds many ops */
	uint64_t val_bytes;
	bool val_bytes_done;
	/* MIL: the op's attributes map (key -> Value), in file order, once
	 * mil_attrs_indexed (mil.c parse_op); otherwise read from msg */
	struct al_mil_attr *mil_attrs;
	uint32_t n_mil_attrs;
	bool mil_attrs_indexed;
	/* MIL: the scope of the op's graph, for al_mil_* lookups; NULL for NN layers */
	const struct al_mil_scope *mil_scope;
	/* shapes.c: the shapes of n->inputs (an entry NULL = unknown); NULL until
	 * al_model_infer_shapes ran. Read it with ali_node_in_shape. */
	const struct al_shape *const *in_shapes;
	/* a layer of a compiled espresso NeuralNetwork (espresso.c): its weights are
	 * in model.espresso.weights, not in `params`; cost.c counts these bytes */
	bool weights_elsewhere;
	uint64_t weight_bytes_elsewhere;
	/* ... and the shapes its outputs have in model.espresso.shape (the
	 * compiler's, at the default input shapes): shape_infer.c uses them */
	const struct al_shape *compiled_out; /* n_compiled_out entries, rank -1: not listed */
	uint32_t n_compiled_out;
	const struct al_shape *compiled_in; /* the same for its inputs */
	uint32_t n_compiled_in;
};
/* One Binding of an Argument: oneof { name = 1, value = 2 }, the last member
 * present wins. */
struct al_mil_bind {
	al_span data;    /* the name (kind 1) or the Value message (kind 2) */
	uint32_t input;  /* kind 1: the index of this name in n->inputs (UINT32_MAX: none) */
	uint8_t kind;    /* 1 = a name, 2 = a literal Value, 0 = neither */
	bool has_value;  /* some field 2 (a Value) is present, whichever member wins */
	bool plain;      /* kind 1: no NUL and at most AL_MAX_NAME bytes: n->inputs has it whole */
};
struct al_mil_arg {
	const char *param;
	al_span arg; /* MILSpec.Argument message */
	const struct al_mil_bind *binds; /* its Bindings (arguments = 1), in file order */
	uint32_t n_binds;
	uint32_t first_input; /* the index in n->inputs of its first name binding */
};
struct al_mil_attr {
	al_span key, val; /* an entry without one of them is not kept */
};
/* strcmp(a, b) == 0 with the first bytes compared inline: the rules compare
 * every op's type and parameter names against many constants, most of which
 * differ in the first byte. */
static inline bool ali_str_eq(const char *a, const char *b)
{
	return a[0] == b[0] && strcmp(a, b) == 0;
}
static inline const struct al_node_src *al_src(const struct al_node *n)
{
	return (const struct al_node_src *)n->priv;
}

/* ------------------------------------------------------------------ walking the graph (ir.c) */

typedef void (*al_node_fn)(void *ctx, const struct al_node *n);
/* Every node of a sub-model in model order; nested graphs right after their
 * owner, at most AL_MAX_DEPTH deep. */
void ali_walk_nodes(const struct al_submodel *s, al_node_fn fn, void *ctx);
/* Whether n is an ML Program const / constexpr_* op (no compute). */
bool ali_node_is_const(const struct al_node *n);
/* The nested graph of node n whose block path ends with `which` (a whole
 * dotted component: "ifBranch", "bodyNetwork", ...), or NULL. */
const struct al_graph *ali_node_sub_graph(const struct al_node *n, const char *which);

/* ------------------------------------------------------------------ model types
 * model_types.def rows: AL_MODEL(oneof name, field number of Model). */
enum al_model_field {
#define AL_MODEL(name, field) AL_MODEL_FIELD_##name = field,
#include "model_types.def"
#undef AL_MODEL
};
/* Whether sub-model s is a Model of type f (its oneof Type member). */
bool ali_submodel_is(const struct al_submodel *s, enum al_model_field f);

/* ------------------------------------------------------------------ NN layer table
 * nn_layers.def rows: AL_NN(oneof name, field number, flags). */

/* The NN kinds: AL_NNK_<name> is the row of ali_nn_kinds (al_node.kind of a layer). */
enum al_nn_kind_id {
#define AL_NN(name, field, flags) AL_NNK_##name,
#include "nn_layers.def"
#undef AL_NN
	AL_NNK_COUNT
};
/* The NN layer types' field numbers in NeuralNetworkLayer: AL_NN_FIELD_<name>. */
enum al_nn_field {
#define AL_NN(name, field, flags) AL_NN_FIELD_##name = field,
#include "nn_layers.def"
#undef AL_NN
};
enum {
	AL_NNF_ND = 1u << 0,            /* Core ML 3+ general-rank layer (field # >= 600) */
	AL_NNF_BROADCASTABLE = 1u << 1, /* *Broadcastable elementwise */
	AL_NNF_RNN = 1u << 2,           /* simpleRecurrent / gru / LSTMs */
	AL_NNF_GATHER = 1u << 3,        /* gather / gatherND / gatherAlongAxis */
	AL_NNF_CUSTOM = 1u << 4,
	AL_NNF_CONTROL = 1u << 5,       /* branch / loop / loopBreak / loopContinue */
	AL_NNF_SCATTER = 1u << 6,
	AL_NNF_RANDOM = 1u << 7,
};
struct al_nn_kind {
	uint32_t field;
	const char *name;
	unsigned flags;
};
extern const struct al_nn_kind ali_nn_kinds[AL_NNK_COUNT];
extern const size_t ali_nn_kinds_count;
int ali_nn_kind_by_field(uint32_t field); /* row index or -1 */
int ali_nn_kind_by_name(const char *name); /* row index or -1 (user rules name layers) */

/* Where NN weights live (coreml-format-facts.md section 6; NeuralNetwork.proto):
 * ali_nn_weight_sites[kind] lists the fields of the layer's params message that
 * are a WeightParams (holder AL_WH_NONE) or a message whose fields are
 * (PReLU, ParametricSoftplus, LSTMWeightParams), ended by a row with field 0;
 * NULL when the kind has none. Repeated fields (custom weights, biLSTM) count
 * per occurrence. The one source for mlmodel.c (weight statistics, field names
 * in paths) and cost.c (weight bytes). */
enum al_weight_holder { AL_WH_NONE, AL_WH_PRELU, AL_WH_SOFTPLUS, AL_WH_LSTM };
struct al_weight_site {
	uint32_t field;
	const char *name;
	enum al_weight_holder holder;
};
extern const struct al_weight_site *const ali_nn_weight_sites[AL_NNK_COUNT];

/* ------------------------------------------------------------------ MIL op table
 * mil_ops.def rows: AL_OP(name, first opset (15..18), flags). */

/* The MIL kinds: AL_MILK_<name> is the row of ali_mil_kinds (al_node.kind of an op). */
enum al_mil_kind_id {
#define AL_OP(name, since, flags) AL_MILK_##name,
#include "mil_ops.def"
#undef AL_OP
	AL_MILK_COUNT
};
enum {
	AL_OPF_CONST = 1u << 0,     /* const / constexpr_*: no compute */
	AL_OPF_RNN = 1u << 1,
	AL_OPF_GATHER = 1u << 2,
	AL_OPF_CONTROL = 1u << 3,   /* cond / while_loop */
	AL_OPF_LIST = 1u << 4,      /* make_list, list_* */
	AL_OPF_CPU_ONLY = 1u << 5,  /* reported CPU-only (cumsum, fill, fill_like, range_1d) */
	AL_OPF_SCATTER = 1u << 6,
	AL_OPF_RANDOM = 1u << 7,
	AL_OPF_POOL = 1u << 8,
	AL_OPF_UPSAMPLE = 1u << 9,
	AL_OPF_CONV = 1u << 10,
	AL_OPF_CUSTOM = 1u << 11,
	AL_OPF_SORT = 1u << 12,     /* topk, argsort */
	AL_OPF_SHAPE = 1u << 13,    /* data-dependent shape producers */
};
struct al_mil_kind {
	const char *name;
	int since; /* iOS version of the opset that introduced it: 15..18 */
	unsigned flags;
};
extern const struct al_mil_kind ali_mil_kinds[AL_MILK_COUNT];
extern const size_t ali_mil_kinds_count;
int ali_mil_kind_by_name(const char *name); /* row index or -1 */

/* ------------------------------------------------------------------ MIL op input domains
 * mil_domains.def rows (mil_check.c): what each op's inputs take per opset, as
 * coremltools' op definitions say. ali_mil_opset_ios: "CoreML5" -> 15 ..
 * "CoreML9" -> 26, 0 unknown. ali_mil_input_dtypes: the dtypes (bit AL_DT_x)
 * input `input` of op kind `kind` takes on opset ios, 0 when not listed;
 * *must_be_const (may be NULL) whether it must be a constant.
 * ali_mil_check_domains: every op of every ML Program of m against them; one
 * located error in d per broken input (at most max_diags, then one summary);
 * returns how many were broken (0: valid by these rules). */
int ali_mil_opset_ios(const char *opset);
uint64_t ali_mil_input_dtypes(int kind, int ios, const char *input, bool *must_be_const);
uint32_t ali_mil_check_domains(const struct al_model *m, al_diags *d, uint32_t max_diags);

/* ------------------------------------------------------------------ loaders */

/* Parse one serialized Model message (a .mlmodel file or the package's root
 * model). Appends the model and its pipeline stages to m->subs.
 * `file` names the file for diagnostics; `path` is the report path. */
enum al_status ali_load_model_message(struct al_model *m, al_span bytes, const char *file,
				     const char *path, al_diags *d);
/* Open a .mlpackage directory: Manifest.json, root model, weights. */
enum al_status ali_load_package(struct al_model *m, const char *dir, al_diags *d);
/* Use `bytes` as the model's weights/weight.bin (named `path` in diagnostics)
 * after checking its storage header; the bytes must outlive the model. */
enum al_status ali_weights_attach(struct al_model *m, al_span bytes, const char *path, al_diags *d);
/* Walk an ML Program (MILSpec.Program message) into graphs of `sub`. */
enum al_status ali_load_mil_program(struct al_model *m, struct al_submodel *sub, al_span program,
				   uint64_t base_offset, const char *file, al_diags *d);

/* ------------------------------------------------------------------ MIL value access (for rules)
 * The op producing value `name` as seen from node n's graph (earlier ops of
 * that graph, then any op of the enclosing graphs), or NULL (also for function
 * and block inputs). All of these return "absent" for NN nodes. */
const struct al_node *ali_mil_producer(const struct al_node *n, const char *name);
/* The literal or const-produced value bound to parameter `param` of op n (its
 * first binding; when n has no such input, its attribute of that name, which
 * is where iOS16/17 constexpr_* ops and custom_layer keep their parameters),
 * read as integers / floats / a string; scalars and tensors alike give their
 * values flattened. Return the count present (may exceed max), 0 if absent,
 * -1 if bound but not readable as a constant (an op output, a blob-backed
 * const: weights are never read, or a type that does not convert, e.g. floats
 * asked for as ints). */
long ali_mil_param_ints(const struct al_node *n, const char *param, int64_t *out, size_t max);
long ali_mil_param_floats(const struct al_node *n, const char *param, double *out, size_t max);
bool ali_mil_param_string(const struct al_node *n, const char *param, char *out, size_t cap);
/* Whether parameter `param` is bound at all, and whether to a constant: a
 * literal, or the output of a const / constexpr_* op (blob-backed included). */
bool ali_mil_param_present(const struct al_node *n, const char *param);
bool ali_mil_param_is_const(const struct al_node *n, const char *param);
/* The declared type of the value bound to `param` (its producer's output type, or a
 * function / block input), or NULL (also when the binding is a literal). */
const struct al_ttype *ali_mil_param_type(const struct al_node *n, const char *param);
/* The declared type of value `name` as seen from op n (an op output, or a
 * function / block input), or NULL. */
const struct al_ttype *ali_mil_value_type(const struct al_node *n, const char *name);

/* The name of the constant holding ML Program op n's weights (the first input a
 * blob-backed const or a constexpr_* op produces: coremltools names those after
 * the PyTorch parameter), or NULL (none; NeuralNetwork layers). */
const char *ali_node_weights(const struct al_node *n);

/* ------------------------------------------------------------------ MIL values (for the interpreter)
 * The interface of an ML Program graph's block: its inputs (a function's
 * inputs, or the loop-carried names of a while_loop block) and the names it
 * returns. False (io zeroed) for a graph that is not an ML Program's. */
struct al_mil_block_io {
	const char *const *inputs;
	const struct al_ttype *in_types;
	uint32_t n_inputs;
	const char *const *outputs;
	uint32_t n_outputs;
};
bool ali_mil_block_io(const struct al_graph *g, struct al_mil_block_io *io);
/* Binding k of parameter `param` of op n: 1 = a name (*out the name), 2 = a
 * literal (*out the Value message), 0 = none. ali_mil_param_count: how many. */
int ali_mil_param_binding(const struct al_node *n, const char *param, uint32_t k, al_span *out);
uint32_t ali_mil_param_count(const struct al_node *n, const char *param);
/* attributes[key] of MIL op n (a Value message): a const's `val`, the
 * parameters of the iOS16/17 constexpr_* ops. */
bool ali_mil_attr(const struct al_node *n, const char *key, al_span *val);
/* What a Value message holds. dims are those declared (rank -1: unknown or
 * more than AL_SHAPE_MAX_RANK). False when the message is malformed. */
enum { AL_MV_NONE, AL_MV_TENSOR, AL_MV_STRINGS, AL_MV_BLOB, AL_MV_LIST, AL_MV_OTHER };
struct al_mil_value {
	int kind;
	int dtype;
	int rank;
	int64_t dims[AL_SHAPE_MAX_RANK];
	uint64_t blob_offset;   /* AL_MV_BLOB: of the blob_metadata record */
	bool blob_in_weights;   /* ... in @model_path/weights/weight.bin */
};
bool ali_mil_value_read(al_span v, struct al_mil_value *out);
/* How a constexpr_* op stores its weight, in words ("int4 per-block (block 32)",
 * "4-bit LUT per-grouped-channel (group 8)"), from its parameters' types only
 * (mil_weights.c); false for other ops or when a type is unknown. */
bool ali_mil_weight_form(const struct al_node *n, char *buf, size_t cap);
/* The same as fields (info's JSON): storage (ALI_WS_*), the stored values'
 * dtype (a LUT: its entries') and bits per value (a LUT: bits per index),
 * granularity (ALI_GRAN_*) with its axis and size (the block, or the number
 * of groups), a LUT's vector length (0: scalar entries), sparse, offset. */
enum { ALI_WS_NONE, ALI_WS_AFFINE, ALI_WS_BLOCKWISE, ALI_WS_LUT, ALI_WS_SPARSE, ALI_WS_CAST };
enum { ALI_GRAN_NONE, ALI_GRAN_TENSOR, ALI_GRAN_CHANNEL, ALI_GRAN_GROUPED, ALI_GRAN_BLOCK };
struct ali_weight_form {
	int storage, dtype, bits, gran, axis;
	int64_t size, vector;
	bool sparse, offset;
};
bool ali_mil_weight_info(const struct al_node *n, struct ali_weight_form *w);
const char *ali_weight_storage_name(int storage);
/* Bits a MIL dtype stores per value (sub-byte ints, fp8, fp16 ...); 0 when unknown. */
int ali_mil_dtype_bits(int dtype);
const char *ali_weight_gran_name(int gran);
/* The numbers of an immediate tensor Value (every TensorValue encoding), at most
 * max stored; returns the count present, -1 when not a numeric tensor. */
long ali_mil_value_floats(al_span v, float *out, size_t max);
/* The strings of a strings tensor Value, or of a list/tuple of scalar string
 * Values (classify's classes); -1 otherwise. ali_mil_value_list_ints: a list of
 * scalar integer Values. */
long ali_mil_value_strings(al_span v, al_span *out, size_t max);
long ali_mil_value_list_ints(al_span v, int64_t *out, size_t max);
/* The 64-byte blob_metadata record at `offset` of m's weight.bin into out
 * (ir.c, beside ali_model_trim): read with pread where the file is kept open (packages,
 * compiled models), so that checking a model faults in no weight page and its
 * peak RSS is the same whatever of weight.bin the page cache holds; copied
 * from the bytes otherwise (al_model_open_buffer, the guard-page mode). False
 * when the record does not fit inside weight.bin or could not be read. */
#define AL_BLOB_META 64
/* n bytes at off of `bytes`, one of m's mapped files (or a part of one that
 * starts where it does): pread when its map keeps the file open, else a copy. */
bool ali_model_bytes_read(const struct al_model *m, al_span bytes, uint64_t off, void *buf, size_t n);
bool ali_weights_meta(const struct al_model *m, uint64_t offset, uint8_t out[AL_BLOB_META]);
/* The data bytes and MIL dtype of the blob whose metadata is at `offset` of m's
 * weight.bin; NULL, else why not (one phrase). Reads through the mapping: for
 * the callers that read the data next (the interpreter, rewrites). */
const char *ali_mil_blob(const struct al_model *m, uint64_t offset, al_span *data, int *dtype);

#endif
