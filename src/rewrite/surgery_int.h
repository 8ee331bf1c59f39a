/* SPDX-License-Identifier: MIT */
/* surgery_int.h: what surgery.c (the pass table, NeuralNetwork passes, the
 * writer), the passes (src/rewrite/passes/) and mil_build.c (the ML Program
 * op writers, new weight.bin blobs, the glue to the .mlpackage writer) share. */
#ifndef ANELINT_SURGERY_INT_H
#define ANELINT_SURGERY_INT_H

#include "analysis.h"
#include "pbsplice.h"
#include "coreml_fields.h"

/* How many new layers / ops one rewrite may name (an unrolled ML Program lstm:
 * 14 a step; a NeuralNetwork biDirectionalLSTM 2 x 64 steps of at most 17 and
 * 6 more = 2182). */
#define AL_PASS_MAX_NAMES 2400

/* The ML Program fields the rewrites splice (MIL.proto, named in coreml_fields.h): an
 * Operation's, a Block's ops and a Value's forms. */
enum {
	OP_TYPE = AL_PB_Operation_type,
	OP_INPUTS = AL_PB_Operation_inputs,
	OP_OUTPUTS = AL_PB_Operation_outputs,
	OP_BLOCKS = AL_PB_Operation_blocks,
	OP_ATTRS = AL_PB_Operation_attributes,
	BLOCK_OPS = AL_PB_Block_operations,
};
enum {
	VALUE_TYPE = AL_PB_Value_type,
	VALUE_IMMEDIATE = AL_PB_Value_immediateValue,
	VALUE_BLOB = AL_PB_Value_blobFileValue,
};

struct al_surgery {
	al_model *m;
	al_span root;
	struct al_arena arena;
	struct al_rewrite *rw;
	size_t n_rw, n_applied;
	struct al_splice *sp;
	const struct al_surgery_opts *opts; /* of al_surgery_plan, during it */
	/* ML Program constants appended to weight.bin: the new file is the input's
	 * weight.bin (m->weights, or a fresh 64-byte storage header when it has none)
	 * with its blob count raised by wcount, then wtail. */
	struct al_buf wtail;
	uint32_t wcount;
	uint8_t *wimage; /* the whole new weight.bin, built by al_surgery_weights */
	size_t wimage_n;
	bool wimage_mapped; /* wimage is an ali_map_cow mapping (else ali_malloc'd) */
	const char **newnames; /* value names the ML Program passes created */
	bool spec_raised;      /* an fp16 I/O rewrite raised specificationVersion to 7 */
	size_t n_newnames;
};

/* What an ML Program pass fills (surgery.c copies it into its own pass context). */
struct al_mil_pass {
	struct al_surgery *s;
	const struct al_node *n;
	const struct al_node_src *src;
	char why[200];
	char after[160];
	struct al_buf pre;     /* whole Block.operations fields inserted before the op */
	struct al_buf layer;   /* the op's new Operation payload */
	const char *names[AL_PASS_MAX_NAMES]; /* names of the ops produced (their first outputs) */
	uint32_t n_names;
	const char *stays_off; /* one of names that may stay off the ANE (al_rewrite.stays_off) */
	bool off_until_next_round; /* al_rewrite.off_until_next_round */
	al_span drop;          /* NeuralNetwork: a whole layer message to delete (a constant taken in), or {0} */
};

/* ML Program passes (src/rewrite/passes/mil_*.c, one file each). Each either
 * fills the context and returns true, or says why not (surgery.c's mil_pass
 * then takes back the blobs it appended to weight.bin). */
bool ali_pass_mil_range(struct al_mil_pass *c);
bool ali_pass_mil_fill(struct al_mil_pass *c);
bool ali_pass_mil_fill_like(struct al_mil_pass *c);
bool ali_pass_mil_cumsum(struct al_mil_pass *c);
bool ali_pass_mil_io_fp16(struct al_mil_pass *c);
bool ali_pass_mil_island(struct al_mil_pass *c);
bool ali_pass_mil_linear_split(struct al_mil_pass *c);
bool ali_pass_mil_upsample(struct al_mil_pass *c);
bool ali_pass_mil_sdpa_split(struct al_mil_pass *c);
bool ali_pass_mil_block_conv(struct al_mil_pass *c);
/* Recurrent ops unrolled (passes/mil_recurrent.c). */
bool ali_pass_mil_lstm_unroll(struct al_mil_pass *c);
bool ali_pass_mil_lstm_unroll_fp16(struct al_mil_pass *c);
bool ali_pass_mil_gru_unroll(struct al_mil_pass *c);
/* A while_loop of a static trip count unrolled (passes/mil_while_unroll.c). */
bool ali_pass_mil_while_unroll(struct al_mil_pass *c);
/* Per-block quantized weight -> int8 per output channel (passes/mil_blockwise_to_per_channel.c). */
bool ali_pass_mil_block_to_channel(struct al_mil_pass *c);
/* Model-level passes (passes/model_input_shape.c): edit the description (and an ML
 * Program's function input) for request r; c->n is a stand-in node. */
bool ali_pass_input_shape(struct al_mil_pass *c, const struct al_input_shape *r);
bool ali_pass_input_enum(struct al_mil_pass *c, const struct al_input_shape *r);

/* Helpers the ML Program and model-level passes share (mil_build.c). */
bool ali_mil_say(struct al_mil_pass *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The first field `num` of msg (a length-delimited one when data is asked for):
 * its payload, and its [start, end) in msg. */
bool ali_pb_first(al_span msg, uint32_t num, al_span *data, size_t *start, size_t *end);
/* The message in list field `num` of msg whose field 1 (a name) is `name`. */
bool ali_pb_named(al_span msg, uint32_t num, const char *name, al_span *out);

/* NeuralNetwork recurrent layers unrolled (src/rewrite/passes/nn_recurrent.c):
 * uniDirectionalLSTM (nn-lstm-unroll), biDirectionalLSTM (nn-bilstm-unroll),
 * gru (nn-gru-unroll). */
bool ali_pass_nn_lstm_unroll(struct al_mil_pass *c);
bool ali_pass_nn_bilstm_unroll(struct al_mil_pass *c);
bool ali_pass_nn_gru_unroll(struct al_mil_pass *c);
/* expandDims of a loadConstantND to rank 5 -> loadConstant (passes/nn_const_expand.c). */
bool ali_pass_nn_expand_const(struct al_mil_pass *c);
/* The NeuralNetwork helpers surgery.c and src/rewrite/passes/ share
 * (surgery_nn.c): a static shape (known rank and dims, not flexible), a name
 * already a model input / layer / blob of n's network, ActivationParams.linear
 * (alpha x + -0.0, exact), a layer / blob name not yet taken (base__suffix,
 * nor one of c->names). */
bool ali_nn_shape_static(const struct al_shape *s);
bool ali_nn_name_taken(const struct al_node *n, const char *name);
/* The layer of n's graph before n that writes blob (the last one), or NULL;
 * whether blob is read only by n, once (nested graphs counted), and is not a
 * model output. */
const struct al_node *ali_nn_producer(const struct al_node *n, const char *blob);
bool ali_nn_only_reader(const struct al_node *n, const char *blob);
void ali_nn_linear_params(struct al_buf *act, float alpha);
const char *ali_nn_fresh(struct al_mil_pass *c, const char *base, const char *suffix);
/* The same for any pass context: names[0..n_names) are the pass's own. */
const char *ali_nn_fresh_name(struct al_arena *a, const struct al_node *n, const char *const *names,
			      uint32_t n_names, const char *base, const char *suffix);
bool ali_nn_emit(struct al_mil_pass *c, bool last, const char *name, const char *const *ins, uint32_t n_in,
		 const char *const *outs, uint32_t n_out, uint32_t field, const struct al_buf *prm);

/* The fp16 I/O edits (mil_build.c): a description feature's dataType
 * FLOAT32 -> FLOAT16 (list 1 inputs, 10 outputs), and specificationVersion
 * raised to 7 (once). */
enum al_status ali_surgery_desc_fp16(struct al_surgery *s, uint32_t list, const char *name);
enum al_status ali_surgery_spec_fp16(struct al_surgery *s);
/* NeuralNetwork fp16 model I/O (passes/nn_io_fp16.c): every fp32 multi-array input
 * and output of the root model; c->n is a stand-in node. */
bool ali_pass_nn_io_fp16(struct al_mil_pass *c);

/* mil_build.c's writers, for the passes (passes/mil_blockwise_to_per_channel.c,
 * passes/mil_fp16_compute.c, ...): a MIL ValueType of a tensor; ali_mil_add_blob below appends
 * one blob (BlobDataType blob_dtype: 1 fp16, 2 fp32, 4 int8 ...). */
void ali_surgery_put_vtype(struct al_buf *b, int dtype, int rank, const int64_t *dims);
/* mil-fp16-compute (passes/mil_fp16_compute.c): every fp32 op of an ML Program's
 * function -> fp16; c->n is a stand-in node named after the function. Its
 * edits are splices of its own (c->layer stays empty). */
bool ali_pass_mil_fp16(struct al_mil_pass *c);
/* The writers mil_build.c shares with it: a value name not yet taken, a new
 * weight.bin blob (its metadata offset, UINT64_MAX when out of memory), an
 * Operation's attribute entry, a scalar string Value, an input bound to a name. */
const char *ali_mil_fresh(struct al_mil_pass *c, const char *base, const char *suffix);
uint64_t ali_mil_add_blob(struct al_surgery *s, uint32_t blob_dtype, const void *data, size_t n);
void ali_mil_put_attr(struct al_buf *op, const char *key, const void *val, size_t n);
void ali_mil_put_string_value(struct al_buf *v, const char *s);
void ali_mil_put_input(struct al_buf *op, const char *param, const char *name);
/* A Value's blobFileValue naming the new weight.bin's blob at metadata offset off. */
void ali_mil_put_blob_value(struct al_buf *v, uint64_t off);
/* A Value's immediateValue: a TensorValue whose field tv_field (1 floats, 2 ints,
 * 3 bools, 7 bytes) holds rep. */
void ali_mil_put_immediate(struct al_buf *v, uint32_t tv_field, const struct al_buf *rep);
/* More of mil_build.c's builders, for the passes of src/rewrite/passes/: a new
 * op before c->n whose type and inputs are in op (n_out outputs of one type, op
 * freed), a new const / immediate scalar const op before c->n, a variadic input,
 * an output, the source op's outputs and name kept on the rewritten op, the op's
 * output dtype, a static shape, a scalar constant parameter, the weight.bin blob
 * behind a const-bound parameter. */
bool ali_mil_pre_op_end(struct al_mil_pass *c, struct al_buf *op, const char *const *outs, int n_out, int dt,
			int rank, const int64_t *dims);
bool ali_mil_pre_const(struct al_mil_pass *c, const char *name, int dt, int rank, const int64_t *dims,
		       const double *x, size_t n, bool *blob);
bool ali_mil_pre_scalar(struct al_mil_pass *c, const char *name, int dt, double x);
void ali_mil_put_inputs(struct al_buf *op, const char *param, const char *const *names, size_t n);
void ali_mil_put_output(struct al_buf *op, const char *name, int dt, int rank, const int64_t *dims);
bool ali_mil_keep_outputs(struct al_mil_pass *c, struct al_buf *op, const char *base, bool first_only);
int ali_mil_out_dtype(const struct al_mil_pass *c);
bool ali_mil_static_shape(const struct al_shape *s);
bool ali_mil_const_scalar(struct al_mil_pass *c, const char *p, double *x, bool def_ok, double def);
bool ali_mil_param_blob(struct al_mil_pass *c, const char *p, al_span *data, int *dt, struct al_mil_value *mv);

/* mil_build.c's checks and writers for the passes (passes/mil_layout.c ...):
 * c->n an ML Program op of one output in a package; how many inputs of g's ops
 * (nested too) read value `name`; every dim of s known; the weight.bin blob
 * behind const-bound parameter p of c->n (fp16 / fp32: data, dtype, declared
 * dims); an output NamedValueType of op; a tensor Value of x[0..n) (a new blob
 * when >= 10 fp values); a const Operation naming `name` of type vt, value v. */
bool ali_mil_op_ok(struct al_mil_pass *c);
uint32_t ali_mil_readers(const struct al_graph *g, const char *name, int depth);
/* (and ali_mil_static_shape, ali_mil_param_blob, ali_mil_put_output, declared above) */
bool ali_mil_put_tensor_value(struct al_mil_pass *c, struct al_buf *v, int dtype, int rank, const int64_t *dims,
			      const double *x, size_t n, bool *blob);
void ali_mil_put_const_op(struct al_buf *op, const char *name, const struct al_buf *vt, const struct al_buf *v);
/* And, for the passes/ files made of surgery_mil.c: a folded constant's cap
 * (values); x exactly a value of dtype; the op's own name attribute (else one
 * naming fallback); "'p' is computed at run time"; the dtypes a folded const
 * may have; c->n replaced by a const of x[0..n) (its output name kept), or of
 * one value repeated; a const before c->n holding the raw bytes of a new blob;
 * a NamedValueType with its tensor dtype set to dt; the type of a new op; a
 * whole new op appended to c->pre; an op's first output, and that output
 * retyped to dt appended to op. */
#define ALI_MIL_MAX_CONST_ELEMS (1u << 24)
bool ali_mil_exact_in(int dtype, double x);
void ali_mil_put_name_attr(struct al_mil_pass *c, struct al_buf *op, const char *fallback);
bool ali_mil_not_const(struct al_mil_pass *c, const char *p);
bool ali_mil_dtype_ok(struct al_mil_pass *c, int dt);
bool ali_mil_fold_to_const(struct al_mil_pass *c, int dtype, int rank, const int64_t *dims, const double *x,
			   size_t n);
bool ali_mil_fold_filled(struct al_mil_pass *c, int dt, int rank, const int64_t *dims, double val);
bool ali_mil_pre_blob_const(struct al_mil_pass *c, const char *name, int dt, int rank, const int64_t *dims,
			    const uint8_t *bytes, size_t n);
bool ali_mil_retyped(al_span nvt, int dt, struct al_buf *out);
void ali_mil_put_type(struct al_buf *op, const char *type);
void ali_mil_pre_put(struct al_mil_pass *c, const struct al_buf *op);
bool ali_mil_first_output(al_span op_msg, al_span *nvt, size_t *start, size_t *end);
bool ali_mil_put_output_retyped(struct al_buf *op, al_span nvt, int dt);
/* Whole Block.operations fields into buffer `to` (passes/mil_layout.c places
 * them itself): an op of type with (param, value) pairs in[0..2 n_in), n_out
 * outputs of dtype dt and dims[i], its name attribute the first output (one
 * output: ali_mil_emit_op); a const named base_sfx (fresh) of an immediate
 * tensor x[0..n) or, str set, a string scalar: its name, or NULL; a const
 * naming the weight.bin blob at off, declared dt of 4 dims; the last field of
 * b split off (its payload into *last, b keeps the fields before it). */
void ali_mil_emit_op_outs(struct al_buf *to, const char *type, const char *const *in, int n_in,
			  const char *const *out, int n_out, int dt, int rank, const int64_t (*dims)[4]);
void ali_mil_emit_op(struct al_buf *to, const char *type, const char *const *in, int n_in, const char *out,
		     int dt, int rank, const int64_t *dims);
const char *ali_mil_emit_const(struct al_mil_pass *c, struct al_buf *to, const char *base, const char *sfx,
			       int dt, int rank, const int64_t *dims, const double *x, size_t n, const char *str);
void ali_mil_emit_blob_const(struct al_buf *to, const char *name, int dt, const int64_t *dims, uint64_t off);
bool ali_mil_split_last(struct al_buf *b, struct al_buf *last);
/* A palettized weight: parameter p of n bound to the output [N, K] (dtype dt)
 * of a constexpr_lut_to_dense, in its iOS 18 form (inputs: indices [N, K] and
 * a lut [G0, G1, 2^bits, V] as literal blobs in weight.bin, no vector_axis) or
 * its iOS 16 / 17 form (attributes: packed uint8 indices, a 1-D lut, shape
 * [N, K]). NULL when it is neither. */
struct ali_lut_weight {
	const struct al_node *op;
	bool ios18;
	struct al_mil_value ix, lut; /* iOS 18 */
	al_span iv, lv;              /* iOS 16: the attribute Values, copied as they are */
	int64_t N, K;
};
bool ali_mil_lut_weight(const struct al_node *n, const char *p, int dt, struct ali_lut_weight *w);
/* The palettized weight w as a conv reads it, a const op `name` into `to`
 * expanding to [N, K, 1, 1] (the same order of values; nothing decoded). An
 * input bound to a literal Value v; a literal Value naming weight.bin's blob at
 * off, declared dt of rank / dims. */
void ali_mil_emit_lut_weight(struct al_buf *to, const char *name, int dt, const struct ali_lut_weight *w);
void ali_mil_put_input_value(struct al_buf *op, const char *param, const struct al_buf *v);
void ali_mil_blob_value(struct al_buf *v, int dt, int rank, const int64_t *dims, uint64_t off);

/* surgery_valid.c: the planned output's ML Programs against the op definitions
 * of their opsets (mil_domains.def). Fills out[0..*n_out) with the rewrites
 * (indices into s->rw) whose output breaks one, and why; AL_OK also when none. */
struct ali_refusal {
	size_t rewrite;
	char why[400];
};
enum al_status ali_surgery_invalid(struct al_surgery *s, struct ali_refusal *out, size_t cap, size_t *n_out);

/* The size of weight.bin after the appended blobs (0: no weight.bin at all). */
uint64_t ali_surgery_wsize(const struct al_surgery *s);
/* Compaction (compact.c): when the rewrites leave blobs that nothing refers
 * to, the package writer writes weight.bin with the live blobs only (moved to
 * new 64-byte aligned offsets) and a model whose blob offsets follow them. */
struct ali_live_blob {
	uint64_t old_meta, new_meta; /* metadata offsets, before and after */
	uint64_t data, size;         /* the data's offset before, and its bytes */
};
struct ali_compact {
	bool on;            /* false: nothing dropped, the writer copies as before */
	uint8_t *model;     /* the rewritten model.mlmodel, offsets moved */
	size_t model_n;
	struct ali_live_blob *blob; /* by old offset */
	size_t n, dropped;          /* blobs kept, blobs dropped */
	uint64_t size, before;      /* weight.bin's bytes, compacted and not */
};
enum al_status ali_compact_plan(struct al_surgery *s, struct ali_compact *c, al_diags *d);
/* The compacted weight.bin onto out_fd; in_fd >= 0: the input's weight.bin,
 * whose blobs are copied from it with their holes. */
bool ali_compact_write(const struct al_surgery *s, const struct ali_compact *c, int in_fd, int out_fd);
void ali_compact_free(struct ali_compact *c);

/* Write the new package to `path` (mil_build.c: src/format/pkgwrite.c with the
 * surgery's model splice and weight.bin blobs, compacted when blobs died). */
enum al_status ali_surgery_write_package(struct al_surgery *s, const char *path, al_diags *d);

#endif
