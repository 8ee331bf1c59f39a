/* SPDX-License-Identifier: MIT */
/* nn_layer.h: the NeuralNetwork layer passes of src/rewrite/passes/ (one file each,
 * nn_<pass name>.c) and the helpers they share (nn_layer.c, nn_const_operand.c).
 * Each pass fills an al_mil_pass for c->n (surgery.c runs it through mil_pass):
 * c->layer the layer's new payload, c->pre whole `layers` fields inserted before
 * it, c->names the layers produced, c->drop a layer message deleted; or says why
 * not (ali_mil_say) and returns false. */
#ifndef ANELINT_NN_LAYER_H
#define ANELINT_NN_LAYER_H
#include "passes.h"

/* NeuralNetworkLayer fields, and the layer types (params fields) the passes emit. */
enum { L_NAME = 1, L_INPUT = 2, L_OUTPUT = 3, L_INPUT_TENSOR = 4, NN_LAYERS = 1 };
enum { F_POOLING = 120, F_ACTIVATION = 130, F_UPSAMPLE = 210, F_ADD = 230, F_MULTIPLY = 231,
       F_SCALE = 245, F_LOAD_CONSTANT = 290, F_CONCAT = 320, F_SPLIT = 330, F_INNER_PRODUCT = 140,
       F_SLICE = 350, F_UNARY = 220, F_RESHAPE = 300, F_PERMUTE = 310 };

/* ------------------------------------------------------------------ the passes (one file each) */
bool ali_pass_nn_addb(struct al_mil_pass *c);                 /* addb-to-add */
bool ali_pass_nn_mulb_scalar(struct al_mil_pass *c);          /* mulb-scalar-to-linear */
bool ali_pass_nn_mulb_const(struct al_mil_pass *c);           /* mulb-const-to-scale */
bool ali_pass_nn_mulb(struct al_mil_pass *c);                 /* mulb-to-multiply */
bool ali_pass_nn_subb(struct al_mil_pass *c);                 /* subb-to-neg-add */
bool ali_pass_nn_concatnd(struct al_mil_pass *c);             /* concatnd-to-concat */
bool ali_pass_nn_concatnd_interleave(struct al_mil_pass *c);  /* concatnd-interleave-to-split-concat */
bool ali_pass_nn_splitnd_ip(struct ali_nn_pass *p);           /* splitnd-of-innerproduct */
bool ali_pass_nn_splitnd(struct al_mil_pass *c);              /* splitnd-to-split */
bool ali_pass_nn_splitnd_slices(struct al_mil_pass *c);       /* splitnd-to-slices */
bool ali_pass_nn_upsample(struct al_mil_pass *c);             /* upsample-x2-chain */
bool ali_pass_nn_global_avg(struct al_mil_pass *c);           /* global-avgpool-valid-to-same */
bool ali_pass_nn_maxpool(struct al_mil_pass *c);              /* maxpool-cascade */
bool ali_pass_nn_avgpool(struct al_mil_pass *c);              /* avgpool-cascade */
bool ali_pass_nn_divb_const(struct al_mil_pass *c);           /* divb-const-to-reciprocal */
bool ali_pass_nn_lcnd(struct al_mil_pass *c);                 /* loadconstnd-to-loadconst */

/* ------------------------------------------------------------------ nn_layer.c */
/* c->n's new payload: its fields in order, the params field replaced by field
 * pfield with payload params, and (when inputs) its inputs replaced (the
 * inputTensor ranks, which described the old inputs, dropped). */
bool ali_nn_rebuild_layer(struct al_mil_pass *c, uint32_t pfield, const struct al_buf *params,
			  const char *const *inputs, uint32_t n_inputs);
/* A whole `layers` field before c->n holding a new layer: name, inputs, output, params. */
void ali_nn_new_layer(struct al_mil_pass *c, const char *name, const char *const *inputs, uint32_t n_in,
		      const char *output, uint32_t pfield, const struct al_buf *params);
/* One step of a chain that replaces c->n (upsample x2 chain, pooling cascades):
 * a new layer `<layer>__<stem>`, ... reading *prev, or when last the layer itself
 * rebuilt to read *prev. Frees params. */
bool ali_nn_chain_step(struct al_mil_pass *c, bool last, bool first, const char *stem, uint32_t pfield,
		       struct al_buf *params, const char **prev);
/* Whether a and b broadcast as the legacy add / multiply layers do. */
bool ali_nn_legacy_broadcast(struct al_mil_pass *c, const struct al_shape *a, const struct al_shape *b);
/* c->n is in the top-level network and has its layer message. */
bool ali_nn_top_level(struct al_mil_pass *c);
/* addb-to-add and mulb-to-multiply: c->n of two legacy-broadcast inputs, its
 * params replaced by an empty field `field`; `to` names the result. */
bool ali_nn_elementwise(struct al_mil_pass *c, uint32_t field, const char *to);
/* Equal-rank inputs of static shape, rank 3-5: the rank, or -1 with c->why. */
int ali_nn_static_rank(struct al_mil_pass *c);
/* A top-level splitND of one static input on the channel axis (-3); *C its extent. */
bool ali_nn_splitnd_of_channels(struct al_mil_pass *c, int64_t *C);
/* log2(f) when f is a power of two, else -1. */
int ali_nn_log2_exact(uint64_t f);
/* Whether a ValidPadding message pads nothing. */
bool ali_nn_zero_padding(al_span valid);

/* ------------------------------------------------------------------ nn_const_operand.c */
/* A loadConstant / loadConstantND layer's values (fp32), its result's rank and dims. */
struct ali_nn_cval {
	const struct al_node *p; /* the loadConstant / loadConstantND layer */
	int rank;                /* of its result: loadConstant [1,1,C,H,W] is rank 5 */
	int64_t dims[5];
	size_t count;
	float *v;                /* count values, in the arena */
};
/* x (*|/) constant, the constant produced by a top-level loadConstant(ND): which
 * input is x, the constant's values, and x's shape. The result must have x's
 * shape (the constant broadcasts into x, never x into it). A divide takes its
 * constant as the divisor only. */
struct ali_nn_constop {
	uint32_t xi;
	struct ali_nn_cval cv;
	const struct al_shape *xs;
};
bool ali_nn_const_operand(struct al_mil_pass *c, bool divide, struct ali_nn_constop *o);
/* The constant as a scale layer's gamma shape (shapeScale: [C] or [C, H, W]). */
bool ali_nn_scale_shape(struct al_mil_pass *c, const struct ali_nn_constop *o, uint64_t *shp, size_t *n_shp);
/* c->n rebuilt as field / params reading x only; the constant's layer deleted
 * when nothing else reads it; `what` describes the result. */
bool ali_nn_finish_const(struct al_mil_pass *c, const struct ali_nn_constop *o, uint32_t field,
			 const struct al_buf *params, const char *what);
/* ScaleLayerParams of shapeScale shp and gamma v[0..count) (fp32). */
void ali_nn_scale_params(struct al_buf *sp, const uint64_t *shp, size_t n_shp, const float *v, size_t count);

#endif
