/* SPDX-License-Identifier: MIT */
/* nn_io_fp16.c: the model-level pass nn-io-fp16 (its row in surgery.c's pass
 * table, run by its plan_nn_io once per model under --allow approximate;
 * docs/surgery.md).
 * Match:   a NeuralNetwork model with fp32 multi-array inputs / outputs, each with
 *          a dataType field in the file.
 * Rewrite: their dataType FLOAT32 -> FLOAT16 in the description, and
 *          specificationVersion raised to 7 when lower.
 * Proves:  approximate: the values are rounded to fp16 once at the boundary; the
 *          layers compute as before. */
#include "passes.h"
#include "coreml_fields.h"

#include <stdio.h>
#include <string.h>

enum { MODEL_DESC = 2, DESC_INPUT = 1, FT_ARRAY = 5 };

/* ------------------------------------------------------------------ NeuralNetwork fp16 I/O
 * A NeuralNetwork model's fp32 multi-array inputs and outputs typed FLOAT16
 * (approximate: the caller passes and gets fp16 values, rounded once at the
 * boundary; the layers compute as before). FLOAT16 multi-arrays need
 * specificationVersion 7 (iOS 16 / macOS 13): raised when lower. Core ML's
 * NeuralNetwork validator takes any multi-array dataType (it checks that the
 * I/O are images or multi-arrays), the spec-version check asks for 7; that
 * the runtime then feeds fp16 buffers to the NeuralNetwork engines without a
 * conversion is not verified here (no Mac). Only under --allow approximate. */
bool ali_pass_nn_io_fp16(struct al_mil_pass *c)
{
	const struct al_submodel *sub = c->s->m->n_subs ? c->s->m->subs[0] : NULL;
	if (!sub || sub->world != AL_WORLD_NN)
		return c->why[0] = '\0', false; /* not a candidate: not reported */
	char list[120] = "";
	size_t k = 0;
	uint32_t n = 0;
	/* every feature's dataType field found first: a failure half way would
	 * leave edits of a rewrite that is not applied */
	al_span desc;
	if (!ali_pb_first(c->s->root, MODEL_DESC, &desc, NULL, NULL))
		return ali_mil_say(c, "the model has no description");
	for (int side = 0; side < 2; side++) {
		const struct al_feature *fs = side ? sub->outputs : sub->inputs;
		uint32_t nf = side ? sub->n_outputs : sub->n_inputs;
		for (uint32_t i = 0; i < nf; i++) {
			al_span fd, ftype, arr;
			if (fs[i].kind != AL_FEAT_MULTIARRAY || fs[i].dtype != AL_DT_FP32 || !fs[i].name)
				continue;
			if (!ali_pb_named(desc, side ? AL_PB_ModelDescription_output : DESC_INPUT, fs[i].name, &fd) ||
			    !ali_pb_first(fd, AL_PB_FeatureDescription_type, &ftype, NULL, NULL) || !ali_pb_first(ftype, FT_ARRAY, &arr, NULL, NULL) ||
			    !ali_pb_first(arr, AL_PB_ArrayFeatureType_dataType, NULL, NULL, NULL))
				return ali_mil_say(c, "%s '%.60s' has no multi-array dataType in the file",
						   side ? "output" : "input", fs[i].name);
		}
	}
	for (int side = 0; side < 2; side++) {
		const struct al_feature *fs = side ? sub->outputs : sub->inputs;
		uint32_t nf = side ? sub->n_outputs : sub->n_inputs;
		for (uint32_t i = 0; i < nf; i++) {
			if (fs[i].kind != AL_FEAT_MULTIARRAY || fs[i].dtype != AL_DT_FP32 || !fs[i].name)
				continue;
			enum al_status st = ali_surgery_desc_fp16(c->s, side ? 10 : 1, fs[i].name);
			if (st != AL_OK)
				return ali_mil_say(c, "%s '%.60s' could not be retyped (%s)", side ? "output" : "input",
						   fs[i].name, al_status_str(st));
			n++;
			if (k + 70 < sizeof list)
				k += (size_t)snprintf(list + k, sizeof list - k, "%s%s '%.40s'", k ? ", " : "",
						      side ? "output" : "input", fs[i].name);
		}
	}
	if (!n)
		return c->why[0] = '\0', false;
	uint64_t spec = 0;
	pb_get_varint(c->s->root, AL_PB_Model_specificationVersion, &spec);
	enum al_status st = ali_surgery_spec_fp16(c->s);
	if (st != AL_OK)
		return ali_mil_say(c, "specificationVersion could not be raised (%s)", al_status_str(st));
	snprintf(c->after, sizeof c->after, "fp16 %.110s%s", list,
		 spec < 7 ? " (specificationVersion 7: iOS 16 / macOS 13)" : "");
	return true;
}
