/* SPDX-License-Identifier: MIT */
/* shapes.h: what the shape and cost modules share (shapes.c drives, shapes_nn.c
 * and shapes_mil.c hold the per-layer / per-op shape functions, cost.c the
 * per-node FLOPs and bytes). Dimension arithmetic here never overflows: a
 * result that does not fit, or is negative, becomes AL_DIM_UNKNOWN. Nothing
 * here reads weights; parameters come from the layer/op message only.
 */
#ifndef ANELINT_SHAPES_H
#define ANELINT_SHAPES_H

#include "analysis.h"

/* ---------------------------------------------------------------- one shape */

/* rank -1, dtype unknown, every dim unknown, no flex bits. */
void shp_unknown(struct al_shape *s);
/* rank r (clamped to [-1, INT_MAX]) with every dim unknown. */
void shp_rank(struct al_shape *s, int rank, int dtype);
/* From dims v[0..n) (negative = unknown); flex bits none. */
void shp_from(struct al_shape *s, const int64_t *v, size_t n, int dtype);
/* Dim i (AL_DIM_UNKNOWN past AL_SHAPE_MAX_RANK or the rank) and its flex bit. */
int64_t shp_dim(const struct al_shape *s, int i);
bool shp_flex(const struct al_shape *s, int i);
/* Set dim i (ignored past AL_SHAPE_MAX_RANK); v < 0 is stored as unknown. */
void shp_set(struct al_shape *s, int i, int64_t v, bool flex);
/* Copy dim j of src to dim i of dst, flex bit included. */
void shp_copy_dim(struct al_shape *dst, int i, const struct al_shape *src, int j);
/* Elements, or -1 when a dim or the rank is unknown or the count overflows. */
int64_t shp_numel(const struct al_shape *s);
/* Product of dims [from, to), -1 when unknown; flex bits of those dims OR-ed into *flex. */
int64_t shp_prod(const struct al_shape *s, int from, int to, bool *flex);
/* Axis a (negative counts from the end) as an index in [0, rank), or -1. */
int shp_axis(const struct al_shape *s, int64_t a);
/* Numpy broadcast of a and b into out (rank max of both); false (out
 * unknown) when a known pair of dims differs and neither is 1. */
bool shp_broadcast(const struct al_shape *a, const struct al_shape *b, struct al_shape *out);
/* Matrix product of a [..., M, K] and b [..., K, N] (transposed when ta / tb) with
 * batch broadcasting, rank-1 operands promoted and dropped as numpy does; o gets
 * dtype. False with o untouched when a or b is NULL or of rank < 1, false with o
 * of rank max(a, b) and unknown dims when the batch dims do not broadcast. */
bool shp_matmul(struct al_shape *o, const struct al_shape *a, const struct al_shape *b, bool ta, bool tb,
		int dtype);
/* "[1,16,32,32]", "?" for unknown dims, "64*" for flexible ones, "[?...]" for
 * an unknown rank; "[]" for a scalar. */
void shp_format(const struct al_shape *s, char *buf, size_t cap);

/* ---------------------------------------------------------------- dim arithmetic
 * AL_DIM_UNKNOWN in, or overflow / negative out, gives AL_DIM_UNKNOWN. */
int64_t dim_add(int64_t a, int64_t b);
int64_t dim_sub(int64_t a, int64_t b);
int64_t dim_mul(int64_t a, int64_t b);
int64_t dim_div_floor(int64_t a, int64_t b); /* b > 0 */
int64_t dim_div_ceil(int64_t a, int64_t b);  /* b > 0 */
int64_t shp_slice_count(int64_t d, int64_t b, int64_t e, int64_t st, bool bm, bool em,
			bool masked_begin_ok);

/* ---------------------------------------------------------------- per node
 * What a shape function sees: the input shapes (NULL = unknown) in
 * node->inputs order, and the output array to fill (pre-set to unknown). */
struct shp_node {
	const struct al_node *n;
	const struct al_submodel *s;
	const struct al_shape *const *in;
	uint32_t n_in;
	struct al_shape *out;
	uint32_t n_out;
};

/* NeuralNetwork layer (shapes_nn.c): fills x->out; blobs are fp32. */
void ali_shapes_nn(const struct shp_node *x);
/* Whether NN kind k has a shape function (else its shapes are unknown). */
bool ali_shapes_nn_has(int k);
/* ML Program op (shapes_mil.c): infers x->out where it knows how; returns
 * false when it does not (the declared types then stand alone). */
bool ali_shapes_mil(const struct shp_node *x);
/* Whether MIL kind k has a shape function. */
bool ali_shapes_mil_has(int k);

/* MIL: the shape of the value bound to `param` of op n (its k-th binding):
 * a name binding gives in[i] of its position in n->inputs, a literal binding
 * its declared type. False when absent or unknown. */
bool shp_mil_param(const struct al_node *n, const struct al_shape *const *in, uint32_t n_in,
		   const char *param, uint32_t k, struct al_shape *out);
/* Number of bindings of `param` of op n (0 when absent). */
uint32_t shp_mil_param_count(const struct al_node *n, const char *param);
/* A MIL declared type as a shape. */
void shp_from_ttype(struct al_shape *s, const struct al_ttype *t);

/* ---------------------------------------------------------------- cost (cost.c) */
/* Fill n->cost from the node's shapes; `m` gives weight.bin for blob sizes. */
void ali_cost_node(struct al_node *n, const struct al_model *m, const struct al_shape *const *in,
		  uint32_t n_in);
/* Whether NN / MIL kind k has a cost row (else: NN no FLOPs, MIL not estimated). */
bool ali_cost_nn_has(int k);
bool ali_cost_mil_has(int k);

#endif
