/* SPDX-License-Identifier: MIT */
/* tables.c: the NeuralNetwork layer table and the ML Program op table, expanded
 * from nn_layers.def and mil_ops.def, with the lookups by field number and by op
 * type for what comes from outside (the loaders, user rules). Everything else
 * indexes its own table by al_node.kind. */
#include "model.h"

#include <stdlib.h>
#include <string.h>

const struct al_nn_kind ali_nn_kinds[AL_NNK_COUNT] = {
#define AL_NN(name, field, flags) [AL_NNK_##name] = {field, #name, flags},
#include "nn_layers.def"
#undef AL_NN
};
const size_t ali_nn_kinds_count = AL_NNK_COUNT;
_Static_assert(AL_NNK_COUNT == 158, "nn_layers.def: 158 NeuralNetworkLayer members");

const struct al_mil_kind ali_mil_kinds[AL_MILK_COUNT] = {
#define AL_OP(name, since, flags) [AL_MILK_##name] = {#name, since, flags},
#include "mil_ops.def"
#undef AL_OP
};
const size_t ali_mil_kinds_count = AL_MILK_COUNT;
_Static_assert(AL_MILK_COUNT == 169, "mil_ops.def: 169 ML Program op types");

/* Weight sites per NN kind (model.h): field, name, holder; ended by {0}. */
static const struct al_weight_site ws_convolution[] = {
	{90, "weights", AL_WH_NONE}, {91, "bias", AL_WH_NONE}, {0}};
static const struct al_weight_site ws_activation[] = {
	{25, "PReLU", AL_WH_PRELU}, {71, "parametricSoftplus", AL_WH_SOFTPLUS}, {0}};
static const struct al_weight_site ws_inner_product[] = { /* innerProduct, embedding */
	{20, "weights", AL_WH_NONE}, {21, "bias", AL_WH_NONE}, {0}};
static const struct al_weight_site ws_batchnorm[] = {
	{15, "gamma", AL_WH_NONE}, {16, "beta", AL_WH_NONE}, {17, "mean", AL_WH_NONE},
	{18, "variance", AL_WH_NONE}, {0}};
static const struct al_weight_site ws_scale[] = {
	{2, "scale", AL_WH_NONE}, {5, "bias", AL_WH_NONE}, {0}};
static const struct al_weight_site ws_bias[] = {{2, "bias", AL_WH_NONE}, {0}};
static const struct al_weight_site ws_load_constant[] = {{2, "data", AL_WH_NONE}, {0}};
static const struct al_weight_site ws_simple_recurrent[] = {
	{30, "weightMatrix", AL_WH_NONE}, {31, "recursionMatrix", AL_WH_NONE},
	{32, "biasVector", AL_WH_NONE}, {0}};
static const struct al_weight_site ws_gru[] = {
	{30, "updateGateWeightMatrix", AL_WH_NONE}, {31, "resetGateWeightMatrix", AL_WH_NONE},
	{32, "outputGateWeightMatrix", AL_WH_NONE}, {50, "updateGateRecursionMatrix", AL_WH_NONE},
	{51, "resetGateRecursionMatrix", AL_WH_NONE}, {52, "outputGateRecursionMatrix", AL_WH_NONE},
	{70, "updateGateBiasVector", AL_WH_NONE}, {71, "resetGateBiasVector", AL_WH_NONE},
	{72, "outputGateBiasVector", AL_WH_NONE}, {0}};
static const struct al_weight_site ws_lstm[] = {{20, "weightParams", AL_WH_LSTM}, {0}};
static const struct al_weight_site ws_custom[] = {{20, "weights", AL_WH_NONE}, {0}};
static const struct al_weight_site ws_batched_matmul[] = {
	{8, "weights", AL_WH_NONE}, {9, "bias", AL_WH_NONE}, {0}};
static const struct al_weight_site ws_layer_norm[] = {
	{3, "gamma", AL_WH_NONE}, {4, "beta", AL_WH_NONE}, {0}};
static const struct al_weight_site ws_convolution3d[] = {
	{60, "weights", AL_WH_NONE}, {61, "bias", AL_WH_NONE}, {0}};

const struct al_weight_site *const ali_nn_weight_sites[AL_NNK_COUNT] = {
	[AL_NNK_convolution] = ws_convolution, [AL_NNK_activation] = ws_activation,
	[AL_NNK_innerProduct] = ws_inner_product, [AL_NNK_embedding] = ws_inner_product,
	[AL_NNK_batchnorm] = ws_batchnorm, [AL_NNK_scale] = ws_scale, [AL_NNK_bias] = ws_bias,
	[AL_NNK_loadConstant] = ws_load_constant, [AL_NNK_simpleRecurrent] = ws_simple_recurrent,
	[AL_NNK_gru] = ws_gru, [AL_NNK_uniDirectionalLSTM] = ws_lstm,
	[AL_NNK_biDirectionalLSTM] = ws_lstm, [AL_NNK_custom] = ws_custom,
	[AL_NNK_embeddingND] = ws_inner_product, [AL_NNK_batchedMatmul] = ws_batched_matmul,
	[AL_NNK_loadConstantND] = ws_load_constant, [AL_NNK_layerNormalization] = ws_layer_norm,
	[AL_NNK_convolution3d] = ws_convolution3d,
};
_Static_assert(sizeof ali_nn_weight_sites / sizeof ali_nn_weight_sites[0] == AL_NNK_COUNT,
	       "one row per NN kind");

int ali_nn_kind_by_field(uint32_t field)
{
	size_t lo = 0, hi = ali_nn_kinds_count; /* rows are sorted by field number */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ali_nn_kinds[mid].field == field)
			return (int)mid;
		if (ali_nn_kinds[mid].field < field)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int ali_nn_kind_by_name(const char *name)
{
	for (int k = 0; name && k < AL_NNK_COUNT; k++) /* rows are sorted by field: a scan */
		if (strcmp(ali_nn_kinds[k].name, name) == 0)
			return k;
	return -1;
}

int ali_mil_kind_by_name(const char *name)
{
	size_t lo = 0, hi = ali_mil_kinds_count; /* rows are sorted by name */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(ali_mil_kinds[mid].name, name);
		if (c == 0)
			return (int)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}
