/* SPDX-License-Identifier: MIT */
/* interp.h: what the reference interpreter's modules share.
 *
 *   tensor.c     struct al_tensor (refcounted, immutable once an op produced it),
 *                the value environment (name -> tensor, nested scopes)
 *   npy.c        NumPy .npy read/write (the public al_npy_* calls)
 *   interp.c     al_model_run: binds the inputs, picks the executor, pipelines,
 *                fp16 rounding after every op, the per-op observer, outputs
 *   interp_nn.c  ali_nn_exec: NeuralNetwork layers (table: kind -> function)
 *   interp_mil.c ali_mil_exec: ML Program ops (table: kind -> function)
 *   kernels.c    the maths over float arrays (kernels.h)
 *
 * Numbers: every numeric tensor is stored as float (int and bool values too,
 * exact up to 2^24); `dtype` keeps the declared type (fp16 / fp32 / int32 /
 * bool / ...) for casts, integer division and the output files. Strings (class
 * labels) are separate. In fp16 mode interp.c rounds every floating output of every
 * op to fp16 (ali_f16_round) as soon as the op returns; the executors round the
 * weights they read with al_exec_weight_f32 (it does that for them).
 *
 * Memory: tensors are ali_malloc'd (fault injection reaches them) and counted
 * against al_run_opts.max_bytes; a weight stored as little-endian fp32 at a
 * 4-byte aligned offset of a mapped file is borrowed, not copied.
 */
#ifndef ANELINT_INTERP_H
#define ANELINT_INTERP_H

#include "analysis.h"
#include "kernels.h"

#define AL_TENSOR_MAX_RANK 8

enum al_tkind { AL_TK_TENSOR, AL_TK_LIST };

struct al_tensor {
	enum al_tkind kind;
	int dtype;                          /* al_dtype as declared (AL_DT_FP32 when unknown) */
	int rank;                           /* 0 = scalar */
	int64_t dims[AL_TENSOR_MAX_RANK];
	size_t n;                           /* element count (1 for a scalar) */
	float *f;                           /* n values (numeric dtypes) */
	char **s;                           /* n strings (AL_DT_STRING), each ali_malloc'd */
	/* AL_TK_LIST (MIL make_list ...): n_items element tensors (NULL = unset) */
	struct al_tensor **items;
	size_t n_items, cap_items;
	int elem_dtype;                     /* list element type */
	/* dictionary outputs (classifier probabilities): f[i] belongs to labels[i] */
	const char *const *labels;          /* borrowed from the model, or NULL */
	int refs;
	bool borrowed;                      /* f points into a mapping: not freed */
	struct al_tensor *base;             /* a view: f is base's data (a reference held) */
	size_t bytes;                       /* counted against the run's budget */
	struct al_exec *owner;              /* the run whose budget counts it, or NULL */
};

/* ---- tensors (tensor.c). A NULL return means out of memory or over budget; the
 * *_x variants then add an error diagnostic naming node n (may be NULL). */
struct al_exec;
struct al_tensor *ali_tensor_alloc(struct al_exec *x, const struct al_node *n, int dtype,
				  int rank, const int64_t *dims); /* zero-filled */
/* The same with the values unset, for a caller that writes every one (the
 * dense kernels' outputs: zeroing them was a pass over memory on the serial path). */
struct al_tensor *ali_tensor_alloc_raw(struct al_exec *x, const struct al_node *n, int dtype,
				      int rank, const int64_t *dims);
/* A tensor over borrowed float data (weights in a mapping). */
struct al_tensor *ali_tensor_borrow(struct al_exec *x, const struct al_node *n, int dtype,
				   int rank, const int64_t *dims, const float *data);
struct al_tensor *ali_tensor_list_new(struct al_exec *x, const struct al_node *n, int elem_dtype);
/* Append / set item i of a list (takes a reference to item). */
bool ali_tensor_list_set(struct al_exec *x, const struct al_node *n, struct al_tensor *list,
			size_t i, struct al_tensor *item);
struct al_tensor *al_tensor_ref(struct al_tensor *t);
void ali_tensor_unref(struct al_tensor *t);
/* A view of numeric tensor t: its data (shared, never to be written: neither
 * tensor is written once made) under dtype and other dims of the same count; it
 * holds a reference to t and costs no budget (a run's outputs copy it, mx_take
 * never gives it). NULL with a diagnostic when the counts differ. */
struct al_tensor *ali_tensor_view(struct al_exec *x, const struct al_node *n, struct al_tensor *t,
				 int dtype, int rank, const int64_t *dims);
/* A tensor with t's data and other dims (same count): shares nothing, copies the data. */
struct al_tensor *ali_tensor_reshaped(struct al_exec *x, const struct al_node *n,
				     const struct al_tensor *t, int rank, const int64_t *dims);
/* Product of dims; false on overflow or above AL_TENSOR_MAX_ELEMS. */
#if SIZE_MAX > 0xffffffffu
#define AL_TENSOR_MAX_ELEMS ((size_t)1 << 32)
#else /* a 32-bit target (the WebAssembly build): 8-byte elements of the bound still fit a size_t */
#define AL_TENSOR_MAX_ELEMS ((size_t)1 << 28)
#endif
bool ali_dims_count(int rank, const int64_t *dims, size_t *out);

/* ---- the value environment: name -> tensor, a scope chain for nested blocks */
struct al_env;
struct al_env *ali_env_new(struct al_exec *x, struct al_env *parent);
void ali_env_free(struct al_env *e); /* drops its references */
/* The tensor bound to name in e or its parents (borrowed), or NULL. */
struct al_tensor *ali_env_get(const struct al_env *e, const char *name);
/* Bind name in e (not the parents), replacing an earlier binding; takes over the
 * caller's reference to t (also on failure, when it is released). */
bool ali_env_put(struct al_env *e, const char *name, struct al_tensor *t);

/* ---- one run */
/* Float buffers of tensors a run freed, kept for the next tensor of the same
 * size (the ML Program executor keeps one set with the model, so its second
 * and later runs allocate almost nothing): a model's activations come in few
 * sizes, and each fresh buffer of 128 KB or more was a new mapping whose pages
 * faulted in one by one (a few % of a run, on the serial path). Only buffers
 * of ALI_BUFS_MIN bytes or more, at most ALI_BUFS_MAX of them and
 * ALI_BUFS_BYTES in all; a recycled buffer is zeroed like a fresh one. */
#define ALI_BUFS_MIN ((size_t)64 << 10)
#define ALI_BUFS_MAX 48
#define ALI_BUFS_BYTES ((size_t)256 << 20)
struct ali_bufs {
	size_t n, held;
	struct {
		size_t bytes;
		float *p;
	} v[ALI_BUFS_MAX];
};
void ali_bufs_clear(struct ali_bufs *b); /* frees every buffer it holds */

struct al_exec {
	al_model *m;
	struct ali_bufs *bufs;            /* where freed tensors' buffers go, or NULL */
	const struct al_submodel *sub;   /* the (sub-)model being executed */
	const struct al_run_opts *opts;
	bool fp16;                        /* opts->precision == AL_PREC_FP16 */
	al_diags *d;
	struct al_env *env;               /* the model's inputs are bound here by feature name;
					   * the executor leaves its outputs here */
	uint64_t bytes_live, bytes_peak, max_bytes;
	bool over_budget;                 /* an allocation was refused by the budget */
	enum al_status last_fail;         /* the status of the last ali_exec_fail (0: none) */
	uint32_t depth;                   /* nesting of loops / blocks (AL_MAX_DEPTH) */
	uint64_t steps, max_steps;        /* loop iterations run, and the bound */
	uint64_t work, max_work;          /* element operations done (ali_exec_node_done), and the bound */
	/* al_model_run_region: which nodes of the top-level graph (ali_exec_top_graph)
	 * run, by index; NULL = the whole model. With it the executors bind no input
	 * features (the region's values are in env), drop no values, and leave every
	 * name in region_out bound in env instead of the output features. */
	const bool *sel;
	const char *const *region_out;
	size_t n_region_out;
	/* the root as run: a copy of the root sub-model with the chosen function's
	 * interface (default_function = that function) when root_view is set */
	struct al_submodel view;
	bool root_view;
};

/* The class labels of a NeuralNetworkClassifier sub-model (for `info`): their
 * count, and the first `max` of them: string labels as spans into the model
 * (str), int64 labels as numbers (ints; *is_int set). -1 when s has none. */
long ali_nn_class_labels(const struct al_submodel *s, al_span *str, int64_t *ints, size_t max,
			 bool *is_int);

/* The graph an executor runs: NN graphs[0]; ML Program: the function named
 * s->default_function, else `main`, else the only function; NULL when none. */
const struct al_graph *ali_exec_top_graph(const struct al_submodel *s);

/* An error diagnostic about node n (file, offset, name from the node): "run: ...".
 * Returns status for `return ali_exec_fail(...)`. */
/* Whether values of dtype are floating point (AL_DT_UNKNOWN counts: the
 * interpreter computes in float), so fp16 mode rounds them. */
bool ali_exec_float_dtype(int dtype);
enum al_status ali_exec_fail(struct al_exec *x, const struct al_node *n, enum al_status status,
			    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The executors call this after each layer/op with its outputs (in output order):
 * fp16 mode rounds their floating values, then the observer sees them. */
enum al_status ali_exec_node_done(struct al_exec *x, const struct al_node *n,
				 struct al_tensor *const *outs, uint32_t n_outs);
/* Count a loop iteration; false (with a diagnostic) past opts->max_steps. */
bool ali_exec_step(struct al_exec *x, const struct al_node *n);
/* Work (opts->max_work): ali_exec_node_done counts every op's work as it finishes
 * (the values it wrote, plus a quarter of its multiply-adds: cost model FLOPs / 8).
 * ali_exec_graph_work is a lower bound of one run of graph g counted the same way
 * from the inferred shapes: nodes whose shapes are unknown or follow a flexible
 * input count 0, nested graphs are not entered. */
uint64_t ali_exec_graph_work(const struct al_graph *g);
/* The work of one run of sub-model s by the same count from its inferred shapes
 * (observed: values count four, as with an observer): every node of its graph
 * (ali_exec_top_graph) and of the graphs nested in it, each once, flexible dims
 * at their defaults; nodes of unknown shapes count 0. */
uint64_t ali_exec_sub_work(const struct al_submodel *s, bool observed);
/* Before node n runs: its work estimated, and when that is known to be more
 * than what is left of opts->max_work, a diagnostic naming it, its type and the
 * numbers, and AL_E_UNSUPPORTED, so that one enormous op is refused before it
 * starts rather than counted when it ends. The estimate is the one inferred
 * before the run (n->out_shapes, n->cost) when those shapes are the run's (known,
 * not set by a flexible input, not in a nested graph); otherwise, when `estimate`
 * (the kind's row in the executor's table says its cost can grow past its
 * values: convolutions, matmuls, pools, recurrent layers, resampling, tiles,
 * gathers, pads, fills), the shape functions and cost model of the analysis over
 * the shapes of in[0..n_in) (the values of n->inputs; NULL: not a tensor). */
enum al_status ali_exec_node_start(struct al_exec *x, const struct al_node *n, bool estimate,
				  const struct al_tensor *const *in, uint32_t n_in);
/* Before a loop of node n that is known to run `iterations` times over `body`:
 * false (with a diagnostic) when that many iterations, or their estimated work,
 * would pass what is left of the bounds, so the run stops before it starts. */
bool ali_exec_loop_fits(struct al_exec *x, const struct al_node *n, uint64_t iterations,
		       const struct al_graph *body);

/* Weights: `n_values` values stored in `bytes` as `dtype` (AL_DT_FP32 little-endian,
 * AL_DT_FP16, AL_DT_INT8 / UINT8 ...) as a tensor of the given dims. fp32 at an
 * aligned address is borrowed (fp32 mode); otherwise converted into a new tensor.
 * In fp16 mode the values are rounded to fp16. NULL with a diagnostic when the
 * byte count does not match. */
struct al_tensor *ali_exec_weight(struct al_exec *x, const struct al_node *n, al_span bytes,
				 int dtype, int rank, const int64_t *dims);

/* The executors: run x->sub with its inputs bound in x->env, leave every output
 * feature bound there under its name. */
enum al_status ali_nn_exec(struct al_exec *x);
enum al_status ali_mil_exec(struct al_exec *x);
/* A state's zeros (its declared dtype and shape), made once and kept with the
 * model (interp_mil_cache.c; key: the state's feature): a new reference. Values
 * are never written, so every run binds the same tensor. NULL when it cannot
 * be kept (then the caller allocates its own). */
struct al_tensor *ali_mil_zero_state(struct al_exec *x, const void *key, int dtype, int rank,
				     const int64_t *dims);

#endif
