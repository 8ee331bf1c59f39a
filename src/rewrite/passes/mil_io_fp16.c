/* SPDX-License-Identifier: MIT */
/* mil_io_fp16.c: mil-io-fp16 (a row of AL_PASSES in surgery.c; docs/surgery.md;
 * tests/pass_mil_io_fp16.sh).
 *   match:   a cast fp32 model input -> fp16, or fp16 -> fp32 model output, of a one-function
 *            program, the value read by that cast only
 *   rewrite: identity, the model input / output fp16 (the description feature, the function input,
 *            specificationVersion >= 7)
 *   proves:  approximate: the caller rounds the model's inputs / outputs to fp16 instead (--allow
 *            approximate) */
#include "passes.h"
#include "coreml_fields.h"

#include <stdio.h>
#include <string.h>

/* cast(fp32 input -> fp16) and cast(fp16 -> fp32 output) at the model boundary
 * run on the CPU (ANE030). With fp16 I/O (spec >= 7, iOS 16) they become
 * identity ops: the model's inputs / outputs are rounded to fp16 by the caller
 * instead (approximate). */

/* Model fields (specificationVersion, mlProgram) and the description's
 * feature lists (inputs, outputs). */
enum { MODEL_SPEC = 1, MODEL_PROGRAM = 502, DESC_INPUT = 1, DESC_OUTPUT = 10 };

bool ali_pass_mil_io_fp16(struct al_mil_pass *c)
{
	if (!ali_mil_op_ok(c))
		return false;
	const struct al_node *n = c->n;
	const struct al_submodel *sub = c->src->sub;
	/* casts that are no model I/O cast are no candidates: an empty reason
	 * keeps them out of the report */
	if (sub != c->s->m->subs[0] || sub->world != AL_WORLD_MIL || n->owner->depth != 0)
		return c->why[0] = '\0', false;
	al_span xb;
	if (ali_mil_param_binding(n, "x", 0, &xb) != 1)
		return c->why[0] = '\0', false;
	char *x = ali_arena_strndup(&c->s->arena, xb.p, xb.n);
	const struct al_ttype *in = ali_mil_param_type(n, "x"), *out = &n->out_types[0];
	if (!x || !in)
		return ali_mil_say(c, "the type of 'x' is not known");
	const char *y = n->outputs[0];
	const struct al_feature *fi = NULL, *fo = NULL;
	bool fin_read_once = false;
	for (uint32_t i = 0; i < sub->n_inputs; i++)
		if (strcmp(sub->inputs[i].name, x) == 0)
			fi = &sub->inputs[i];
	for (uint32_t i = 0; i < sub->n_outputs; i++)
		if (strcmp(sub->outputs[i].name, y) == 0)
			fo = &sub->outputs[i];
	bool is_in = fi && in->dtype == AL_DT_FP32 && out->dtype == AL_DT_FP16;
	bool is_out = fo && in->dtype == AL_DT_FP16 && out->dtype == AL_DT_FP32;
	if (!is_in && !is_out)
		return c->why[0] = '\0', false;
	const struct al_feature *ft = is_in ? fi : fo;
	if (sub->n_functions != 1 || sub->n_fdescs > 1) /* also one kept by --function */
		return ali_mil_say(c, "a program with %u functions", sub->n_fdescs > 1 ? sub->n_fdescs : sub->n_functions);
	if (ft->kind != AL_FEAT_MULTIARRAY || ft->dtype != AL_DT_FP32)
		return ali_mil_say(c, "model %s '%s' is not an fp32 multi-array", is_in ? "input" : "output",
			    ft->name);
	for (uint32_t i = 0; is_in && i < sub->n_outputs; i++)
		if (strcmp(sub->outputs[i].name, x) == 0)
			return ali_mil_say(c, "input '%s' is also a model output", x);
	/* --shape / --enumerate edit the same description and function input: the
	 * two edits would overlap in the file (the next round takes the cast) */
	for (size_t i = 0; is_in && c->s->opts && i < c->s->opts->n_shapes; i++)
		if (c->s->opts->shapes[i].input && strcmp(c->s->opts->shapes[i].input, x) == 0)
			return ali_mil_say(c, "input '%s' gets its --shape / --enumerate in this round: the next round "
					   "makes it fp16", x);
	fin_read_once = ali_mil_readers(sub->graphs[0], is_in ? x : y, 0) == (is_in ? 1 : 0);
	if (!fin_read_once)
		return ali_mil_say(c, "%s '%s' is also read by other ops", is_in ? "input" : "output",
			   is_in ? x : y);
	/* the new op: identity(x) -> y, y typed fp16 */
	al_span nvt;
	if (!ali_mil_first_output(c->src->msg, &nvt, NULL, NULL))
		return ali_mil_say(c, "the op has no output type");
	ali_mil_put_type(&c->layer, "identity");
	ali_mil_put_input(&c->layer, "x", x);
	if (!ali_mil_put_output_retyped(&c->layer, nvt, AL_DT_FP16))
		return ali_mil_say(c, "the output type is not a tensor type");
	ali_mil_put_name_attr(c, &c->layer, y);
	if (c->layer.failed)
		return ali_mil_say(c, "out of memory");
	/* the other edits: the feature's dataType, the function input's type, spec >= 7 */
	uint64_t spec = 0;
	al_span prog, fe, fn, fin = {0}, vt, tt;
	size_t a = 0, b = 0;
	if (!pb_get_varint(c->s->root, MODEL_SPEC, &spec))
		return ali_mil_say(c, "no specificationVersion");
	if (is_in && !(ali_pb_first(c->s->root, MODEL_PROGRAM, &prog, NULL, NULL) &&
		       ali_pb_first(prog, AL_PB_Program_functions, &fe, NULL, NULL) && ali_pb_first(fe, 2, &fn, NULL, NULL) &&
		       ali_pb_named(fn, AL_PB_Function_inputs, x, &fin) &&
		       pb_get_bytes(fin, AL_PB_NamedValueType_type, &vt) &&
		       pb_get_bytes(vt, AL_PB_ValueType_tensorType, &tt) &&
		       ali_pb_first(tt, AL_PB_TensorType_dataType, NULL, &a, &b)))
		return ali_mil_say(c, "the function input '%s' has no tensor type", x);
	if (c->s->opts && c->s->opts->allow < AL_EQ_APPROXIMATE) { /* reported, nothing built */
		snprintf(c->after, sizeof c->after, "identity, with fp16 model %s '%s'",
			 is_in ? "input" : "output", ft->name);
		return true;
	}
	enum al_status st = ali_surgery_desc_fp16(c->s, is_in ? DESC_INPUT : DESC_OUTPUT, ft->name);
	if (st == AL_OK && is_in) {
		struct al_buf d = {0};
		ali_buf_uint(&d, AL_PB_TensorType_dataType, AL_DT_FP16);
		st = d.failed ? AL_E_NOMEM : ali_splice_replace(c->s->sp, tt, tt.p + a, b - a, d.p, d.n);
		ali_buf_free(&d);
	}
	if (st == AL_OK)
		st = ali_surgery_spec_fp16(c->s);
	if (st != AL_OK)
		return ali_mil_say(c, "the model description could not be rewritten (%s)", al_status_str(st));
	c->names[c->n_names++] = n->name;
	snprintf(c->after, sizeof c->after, "identity, with fp16 model %s '%s'%s",
		 is_in ? "input" : "output", ft->name,
		 spec < 7 ? " (specificationVersion 7: iOS 16 / macOS 13)" : "");
	return true;
}
