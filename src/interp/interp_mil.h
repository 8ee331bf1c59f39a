/* SPDX-License-Identifier: MIT */
/* interp_mil.h: what the ML Program executor's files share.
 *
 *   interp_mil.c      ali_mil_exec: blocks, the op table, value and parameter
 *                     access, const / cond / while_loop / list ops
 *   interp_mil_ops.c  the compute ops (elementwise, reductions, normalisation,
 *                     matmul / linear, quantization, attention)
 *   interp_mil_data.c the data movement ops (shapes, slices, gathers and
 *                     scatters, concat / split, pad, tile, fill, range ...)
 *   interp_mil_list.c the list ops
 *   interp_mil_nn.c   the ops with windows and state: conv, pooling,
 *                     resampling, recurrent layers, classify
 *
 * An op function reads its parameters through the mx_* helpers (a parameter
 * bound to a name is looked up in the environment, a literal binding is decoded),
 * fills c->out[0..n_out) and returns AL_OK, or fails through mx_fail (which
 * names the op). It never binds names itself; the driver does that after
 * ali_exec_node_done. */
#ifndef ANELINT_INTERP_MIL_H
#define ANELINT_INTERP_MIL_H

#include "interp.h"

#define MX_MAX_TMP 64 /* tensors decoded from literal bindings, per op */
#define MX_MAXV 16    /* values of a small int parameter (axes, perm, pad ...) */

/* ---- caches (interp_mil_cache.c) */
struct cache_slot {
	const void *key; /* (const char *)node + output index */
	struct al_tensor *t;
};

struct mx_cache {
	struct cache_slot *slots; /* in the order kept */
	size_t cap, used;
	struct ali_hashtab index; /* items index slots, keyed by address */
	uint64_t bytes; /* of the tensors it keeps (model caches) */
};

/* Decoded constants kept with the model (al_model.interp), one cache per
 * precision: const values (fp16 weights widened to float) and every constexpr
 * form, decoded on the first run that needs them and never again. */
struct mx_model_cache {
	struct mx_cache prec[2];
	/* what ops derive from constants once per model (mx_derived: Winograd
	 * weights), keyed by the constant's tensor, which `pins` keeps alive so
	 * its address is never another tensor's */
	struct mx_cache derived[2], pins[2];
	struct ali_bufs bufs; /* the runs' freed buffers (interp.h) */
};

/* Per run: the model's cache, and this run's own for what is not worth keeping
 * (packed indices and integer data, only read by the constexpr ops). */
/* In the main block, when each value is read last (interp_mil.c builds it per
 * run): one entry per name, found through the one hash table. */
struct lifetimes {
	struct ali_hashtab index; /* items index the arrays */
	const char **name;
	uint32_t *last;  /* index of the last op reading it */
	bool *own;       /* an op of the block defines it, and it is not an output */
	size_t n, cap;
};
/* The entry of name in u, or SIZE_MAX. */
size_t mx_lt_find(const struct lifetimes *u, const char *name);

struct mx_run {
	struct al_exec *x;
	struct mx_cache run;
	struct mx_cache *model;
	/* the main block's value lifetimes (NULL in a region run), its scope, and
	 * the index of the op being run in it: mx_take's facts */
	const struct lifetimes *lt;
	struct al_env *top;
	uint32_t at;
};

/* The model's cache for x's precision, created on first use; NULL on OOM (then
 * runs cache per run only). */
struct mx_cache *mxc_model(struct al_exec *x);
/* What op n's output k was cached as (the model's, else the run's), or NULL. */
struct al_tensor *mxc_get(const struct mx_run *r, const struct al_node *n, uint32_t k);
/* Keep t (a new reference) as op n's output k: with the model when it is a float
 * value or `decoded` by a constexpr op, else for this run. */
void mxc_put(struct mx_run *r, const struct al_node *n, uint32_t k, struct al_tensor *t,
	     bool decoded);
void mxc_free(struct mx_cache *r);

/* One op being evaluated. */
struct mx {
	struct al_exec *x;
	struct mx_run *run;
	const struct al_node *n;
	struct al_env *env;        /* the scope of the op's block */
	struct al_tensor **out;    /* n->n_outputs slots, filled by the op */
	uint32_t n_out;
	struct al_tensor *tmp[MX_MAX_TMP];
	uint32_t n_tmp;
	enum al_status st;         /* the first failure */
};

typedef enum al_status mx_fn(struct mx *c, int arg);

/* Constants decoded and kept with model m for one precision (tests). */
size_t ali_mil_cached(const al_model *m, bool fp16);

/* Whether the executor runs MIL kind k (else the op is refused, naming it). */
bool ali_mil_exec_has(int k);

/* ---- failures: an error diagnostic naming the op ("op conv: ..."); returns st */
enum al_status mx_fail(struct mx *c, enum al_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
enum al_status mx_unsupported(struct mx *c, const char *what, const char *value);

/* ---- inputs. A tensor bound to `param` (its k-th binding): NULL when absent, or
 * on failure (c->st set). mx_req: a numeric tensor that must be present. */
/* A new tensor holding a literal MIL Value (every TensorValue encoding, or a
 * weight.bin blob through ali_exec_weight); NULL after mx_fail. */
struct al_tensor *mx_value_tensor(struct mx *c, al_span v);
struct al_tensor *mx_in_k(struct mx *c, const char *param, uint32_t k);
struct al_tensor *mx_in(struct mx *c, const char *param);
struct al_tensor *mx_req(struct mx *c, const char *param);
uint32_t mx_count(const struct mx *c, const char *param);
/* The tensor bound to `param` when the op may write into it and give it as its
 * output instead of a copy: an op of the main block made it, this op reads it
 * last (and once), and nothing else holds it (one reference, not a view, not
 * borrowed, counted in this run). NULL otherwise: then copy. */
struct al_tensor *mx_take(struct mx *c, const char *param);
bool mx_present(const struct mx *c, const char *param);

/* Scalar / vector parameters from the bound tensor's values; absent gives the
 * default. False (with a diagnostic) when the value is not of that form. */
bool mx_int(struct mx *c, const char *param, int64_t def, int64_t *v);
bool mx_float(struct mx *c, const char *param, double def, double *v);
bool mx_bool(struct mx *c, const char *param, bool def, bool *v);
/* Up to max integers; *n = count (0 when absent); false when more than max or
 * not integers. */
bool mx_ints(struct mx *c, const char *param, int64_t *v, size_t max, size_t *n);
/* A const string parameter (a const op or a literal); absent gives def. */
bool mx_str(struct mx *c, const char *param, const char *def, char *buf, size_t cap);

/* ---- outputs */
struct al_tensor *mx_alloc(struct mx *c, uint32_t i, int dtype, int rank, const int64_t *dims);
/* Values unset: only for an op whose kernel writes every value of the output. */
struct al_tensor *mx_alloc_raw(struct mx *c, uint32_t i, int dtype, int rank, const int64_t *dims);
/* Output i is t (a new reference is taken). */
void mx_set(struct mx *c, uint32_t i, struct al_tensor *t);
/* Output i: t's values with other dims (same count). */
bool mx_reshaped(struct mx *c, uint32_t i, const struct al_tensor *t, int rank,
		 const int64_t *dims);

/* ---- prepared data: a float array of n values that fill derives from the
 * constant src (e.g. a convolution's Winograd weights; `what` tells the forms
 * derived from one constant apart, MX_DERIVED_*), made once per model and kept
 * with it when src is a constant the model keeps, else made for this call. A
 * new reference (unref it), or NULL after a diagnostic. */
enum { MX_DERIVED_WINOGRAD = 0 };
struct al_tensor *mx_derived(struct mx *c, const struct al_tensor *src, unsigned what, size_t n,
			     void (*fill)(const struct al_tensor *src, float *out, void *ctx),
			     void *ctx);

/* ---- small helpers */
/* An integral float as int64; false for NaN, infinities, fractions, |v| > 2^53. */
bool mx_f2i(float v, int64_t *out);
/* Axis a of a rank-r tensor (negative counts from the end) -> [0, r); -1 with a
 * diagnostic when out of range. `extra` widens the range (expand_dims / stack). */
int mx_axis(struct mx *c, int64_t a, int rank, int extra);
/* Product of dims [from, to). */
int64_t mx_prod(const int64_t *dims, int from, int to);
bool mx_is_float(int dtype);
bool mx_is_int(int dtype); /* integer dtypes (not bool) */
/* x's dims with the axes of mask removed (or kept as 1); returns the rank. */
int mx_reduced_dims(const struct al_tensor *x, uint32_t mask, bool keep, int64_t *dims);
/* The dtype a floating result of x keeps: x's own when floating, else fp32. */
int mx_fdtype(const struct al_tensor *x);
/* Whether t's shape is dims. */
bool mx_same_dims(const struct al_tensor *t, int rank, const int64_t *dims);
/* "[1,3,224,224]" */
const char *mx_dims_str(const struct al_tensor *t, char *buf, size_t cap);
/* Reads a MIL dtype name ("fp32", "int32" ...); AL_DT_UNKNOWN when unknown. */
int mx_dtype_named(const char *s);

/* ---- the ops (one row each in interp_mil.c's table) */
/* interp_mil_ops.c */
mx_fn mx_unary, mx_unary_eps, mx_unary_ab, mx_gelu, mx_round, mx_clamped_relu, mx_prelu,
	mx_softplus_parametric, mx_binary, mx_select, mx_cast, mx_reduce, mx_argreduce,
	mx_softmax, mx_layer_norm, mx_instance_norm, mx_batch_norm, mx_l2_norm, mx_lrn,
	mx_linear, mx_matmul, mx_quantize, mx_sdpa;
/* interp_mil_data.c */
mx_fn mx_reshape, mx_transpose, mx_expand_dims, mx_squeeze, mx_flatten2d, mx_concat, mx_split,
	mx_stack, mx_slice_by_index, mx_slice_by_size, mx_slice_update, mx_reverse,
	mx_reverse_sequence, mx_crop, mx_gather, mx_gather_along_axis, mx_gather_nd, mx_scatter,
	mx_scatter_along_axis, mx_scatter_nd, mx_tile, mx_pad, mx_cumsum, mx_fill, mx_fill_like,
	mx_range_1d, mx_shape, mx_identity, mx_topk, mx_argsort, mx_one_hot, mx_band_part,
	mx_space_depth;
/* interp_mil_list.c */
mx_fn mx_make_list, mx_list_length, mx_list_write, mx_list_read, mx_list_gather, mx_list_scatter;
/* interp_mil_nn.c */
mx_fn mx_conv, mx_conv_transpose, mx_pool, mx_upsample, mx_resize, mx_lstm, mx_gru, mx_rnn,
	mx_classify;

#endif
