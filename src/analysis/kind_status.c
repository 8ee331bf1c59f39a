/* SPDX-License-Identifier: MIT */
/* kind_status.c: the ANE status of every NeuralNetwork layer kind and ML Program op type,
 * per OS release (issue #30 item 3): 'S' supported, from the first release a report saw it
 * on the ANE; '?' no evidence, which certainty.c makes uncertain, never ANE by default.
 * A kind that a rule keeps off the ANE is decided by that rule (rules.def), so the status is
 * only consulted when no fallback rule fired. The kinds without a row here have no
 * evidence; tests/unit/test_kinds.c lists them, so that the list is explicit and changes
 * only on purpose.
 *
 * Sources: the development reports of tests/observed (split.json; a report gives the
 * release it was seen on) and a few sources that are not cases. A kind seen on the ANE on
 * one release is taken as supported on the later ones: Core ML's ANE compiler keeps the ops
 * it gained (the one regression reported, resample on M2 under macOS 15, is rule ANE065),
 * and nothing says so for the earlier ones. */
#include "analysis.h"

#include <string.h>

struct kind_status {
	uint32_t releases; /* where it is supported; 0: no row, no evidence */
	const char *provenance;
};

#define FROM(r) AL_REL_FROM(r)

static const struct kind_status nn_rows[AL_NNK_COUNT] = {
	[AL_NNK_convolution] = {FROM(ios13), "hollance/neural-engine #1, #2 (A12, iOS 13); Apple coreai-models rules (2026)"},
	[AL_NNK_pooling] = {FROM(ios13), "hollance/neural-engine #1, #2 (A12, iOS 13); Apple coreai-models rules (2026)"},
	[AL_NNK_innerProduct] = {FROM(ios14), "apple/coremltools #1196 (2021: innerProduct on the ANE, batchedMatMul not)"},
	[AL_NNK_activation] = {FROM(ios27), "Apple coreai-models rules (2026: conv + activation blocks)"},
};

static const struct kind_status mil_rows[AL_MILK_COUNT] = {
	[AL_MILK_add] = {FROM(ios16), "smpanaro fp32 mask (M1, macOS 13)"},
	[AL_MILK_matmul] = {FROM(ios16), "smpanaro fp32 mask (M1, macOS 13)"},
	[AL_MILK_softmax] = {FROM(ios16), "smpanaro fp32 mask (M1, macOS 13)"},
	[AL_MILK_resample] = {FROM(ios16), "Apple forums grid_sample on the NPU (macOS 13); coremltools #2299 (macOS 14)"},
	[AL_MILK_conv_transpose] = {FROM(ios17), "coremltools #2299 (M2, macOS 14)"},
	[AL_MILK_concat] = {FROM(ios18), "coremltools #2631 (M4, macOS 15)"},
	[AL_MILK_conv] = {FROM(ios18), "coremltools #2553, #2631, stablehlo-coreml (macOS 15)"},
	[AL_MILK_gelu] = {FROM(ios18), "Anemll Gemma FFN (macOS 15)"},
	[AL_MILK_linear] = {FROM(ios18), "Anemll Gemma FFN, stablehlo-coreml (macOS 15)"},
	[AL_MILK_read_state] = {FROM(ios18), "coremltools #2553, #2631 (M4, macOS 15)"},
	[AL_MILK_write_state] = {FROM(ios18), "coremltools #2553, #2631 (M4, macOS 15)"},
	[AL_MILK_slice_update] = {FROM(ios18), "coremltools #2553 (M4, macOS 15)"},
	[AL_MILK_relu] = {FROM(ios18), "stablehlo-coreml (M4, macOS 15)"},
	[AL_MILK_reshape] = {FROM(ios18), "coremltools #2553 (M4, macOS 15)"},
	[AL_MILK_tanh] = {FROM(ios18), "coremltools #2631 (M4, macOS 15)"},
	[AL_MILK_transpose] = {FROM(ios18), "coremltools #2553 (M4, macOS 15)"},
	[AL_MILK_layer_norm] = {FROM(ios26), "mobius PR #77 (M5 Pro, macOS 26)"},
	[AL_MILK_leaky_relu] = {FROM(ios26), "FluidAudio Kokoro fp16 (macOS 26)"},
	[AL_MILK_mul] = {FROM(ios26), "VoxCPM RMSNorm (M5 Max, macOS 26)"},
	[AL_MILK_reduce_mean] = {FROM(ios26), "VoxCPM RMSNorm (M5 Max, macOS 26)"},
	[AL_MILK_rsqrt] = {FROM(ios26), "VoxCPM RMSNorm (M5 Max, macOS 26)"},
	[AL_MILK_scaled_dot_product_attention] = {FROM(ios26), "Vx #437 (M4, macOS 26: large SDPAs)"},
	[AL_MILK_squeeze] = {FROM(ios26), "FluidAudio CTC head (macOS 26)"},
	[AL_MILK_avg_pool] = {FROM(ios27), "Apple coreai-models rules (2026: pooling strides 2 and 4)"},
	[AL_MILK_max_pool] = {FROM(ios27), "Apple coreai-models rules (2026: pooling strides 2 and 4)"},
};

bool ali_kind_status_has(bool nn, int kind)
{
	if (kind < 0 || kind >= (nn ? AL_NNK_COUNT : AL_MILK_COUNT))
		return false;
	return (nn ? nn_rows[kind] : mil_rows[kind]).releases != 0;
}

char al_kind_ane_status(bool nn, const char *type, const struct al_release *os, const char **provenance)
{
	int k = type ? (nn ? ali_nn_kind_by_name(type) : ali_mil_kind_by_name(type)) : -1;
	int ri = ali_release_index(os ? os : al_release_default());
	const char *none = "no report saw it on the ANE";
	if (provenance)
		*provenance = none;
	if (!ali_kind_status_has(nn, k) || ri < 0)
		return '?';
	const struct kind_status *s = nn ? &nn_rows[k] : &mil_rows[k];
	if (provenance)
		*provenance = s->provenance;
	if (!(s->releases >> ri & 1u)) {
		if (provenance)
			*provenance = "no report saw it on the ANE on this release or an earlier one";
		return '?';
	}
	return 'S';
}
