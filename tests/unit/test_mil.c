/* SPDX-License-Identifier: MIT */
/* test_mil.c: the ML Program walker (mil.c) and the package loader
 * (mlpackage.c). Hand-built Program messages check graphs, scopes, constant
 * reading (every TensorValue encoding), blob checks against an in-memory
 * weight.bin, nesting limits and damaged bytes (every prefix, every bit flip);
 * corpus packages, when ../shared/corpus is present, check real files; copies
 * in a temporary directory check the path-escape and truncation refusals. */
#include "testutil.h"
#include "pbwrite.h"

#include "analysis.h"

#include <errno.h>
#include <ftw.h>
#include <unistd.h>

/* ================================================================ MIL message builders */

/* TensorType{dataType, rank, dims} inside a ValueType. */
static struct buf tensor_type(int dtype, int rank, const int64_t *dims, int n_dims)
{
	struct buf tt = {0}, vt = {0};
	put_uint(&tt, 1, (uint64_t)dtype);
	put_uint(&tt, 2, (uint64_t)(int64_t)rank);
	for (int i = 0; i < n_dims; i++) {
		struct buf dim = {0}, c = {0};
		if (dims[i] < 0) {
			put_bytes(&dim, 2, "", 0);
		} else {
			put_uint(&c, 1, (uint64_t)dims[i]);
			put_msg(&dim, 1, &c);
		}
		put_msg(&tt, 3, &dim);
	}
	put_msg(&vt, 1, &tt);
	return vt;
}

/* Value{type, immediateValue{tensor{<field>{values = 1: raw}}}} */
static struct buf imm_value(int dtype, int rank, const int64_t *dims, uint32_t tv_field,
			    const void *raw, size_t n, bool packed_field)
{
	struct buf v = {0}, iv = {0}, tv = {0}, rep = {0};
	struct buf t = tensor_type(dtype, rank, dims, rank);
	put_msg(&v, 2, &t);
	if (packed_field)
		put_bytes(&rep, 1, raw, n);
	else
		put_raw(&rep, raw, n); /* raw is already a sequence of fields */
	put_msg(&tv, tv_field, &rep);
	put_msg(&iv, 1, &tv);
	put_msg(&v, 3, &iv);
	return v;
}

static struct buf blob_value(int dtype, int64_t n, const char *file, uint64_t offset)
{
	struct buf v = {0}, bf = {0};
	struct buf t = tensor_type(dtype, 1, &n, 1);
	put_msg(&v, 2, &t);
	put_str(&bf, 1, file);
	put_uint(&bf, 2, offset);
	put_msg(&v, 5, &bf);
	return v;
}

/* Operation{type, outputs[0] = name : type, attributes{val}} for a const. */
static struct buf const_op(const char *name, struct buf *val, struct buf *type)
{
	struct buf op = {0}, nv = named(name, type), attr = {0};
	put_str(&op, 1, "const");
	put_msg(&op, 3, &nv);
	put_str(&attr, 1, "val");
	put_msg(&attr, 2, val);
	put_msg(&op, 5, &attr);
	return op;
}

/* An inputs map entry param -> Argument{Binding{name}}. */
static void bind_name(struct buf *op, const char *param, const char *value)
{
	struct buf e = {0}, arg = {0}, b = {0};
	put_str(&b, 1, value);
	put_msg(&arg, 1, &b);
	put_str(&e, 1, param);
	put_msg(&e, 2, &arg);
	put_msg(op, 2, &e);
}

static void bind_literal(struct buf *op, const char *param, struct buf *value)
{
	struct buf e = {0}, arg = {0}, b = {0};
	put_msg(&b, 2, value);
	put_msg(&arg, 1, &b);
	put_str(&e, 1, param);
	put_msg(&e, 2, &arg);
	put_msg(op, 2, &e);
}

static struct buf fp32_type(int rank, const int64_t *dims)
{
	return tensor_type(AL_DT_FP32, rank, dims, rank);
}

/* Program{version 1, functions{"main": Function{inputs, opset, {opset: block}}}} */
static struct buf program(struct buf *inputs, int n_inputs, struct buf *block)
{
	struct buf prog = {0}, fe = {0}, fn = {0}, be = {0};
	for (int i = 0; i < n_inputs; i++)
		put_msg(&fn, 1, &inputs[i]);
	put_str(&fn, 2, "CoreML5");
	put_str(&be, 1, "CoreML5");
	put_msg(&be, 2, block);
	put_msg(&fn, 3, &be);
	put_uint(&prog, 1, 1);
	put_str(&fe, 1, "main");
	put_msg(&fe, 2, &fn);
	put_msg(&prog, 2, &fe);
	return prog;
}

/* ================================================================ loading helpers */

struct loaded {
	struct al_model *m;
	struct al_submodel *sub;
	al_diags *d;
	enum al_status st;
};

static struct loaded load_prog(const struct buf *prog, const uint8_t *weights, size_t wn)
{
	struct loaded l;
	l.d = al_diags_new();
	l.m = ali_calloc(1, sizeof *l.m);
	assert_non_null(l.d);
	assert_non_null(l.m);
	l.m->weights = (al_span){weights, wn};
	l.m->weights_path = weights ? "mem/weight.bin" : NULL;
	l.sub = ali_model_add_sub(l.m);
	assert_non_null(l.sub);
	l.sub->world = AL_WORLD_MIL;
	l.st = ali_load_mil_program(l.m, l.sub, (al_span){prog->p, prog->n}, 100, "mem.mlmodel", l.d);
	return l;
}

static void unload(struct loaded *l)
{
	al_model_free(l->m);
	al_diags_free(l->d);
}

static size_t count_sev(const al_diags *d, enum al_severity sev)
{
	size_t n = 0;
	for (size_t i = 0; i < al_diags_count(d); i++)
		n += al_diags_get(d, i)->severity == sev;
	return n;
}

static bool has_msg(const al_diags *d, const char *needle)
{
	for (size_t i = 0; i < al_diags_count(d); i++)
		if (strstr(al_diags_get(d, i)->msg, needle))
			return true;
	return false;
}

static const struct al_node *find_node(const struct al_graph *g, const char *type, int nth)
{
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		if (strcmp(g->nodes[i].type, type) == 0 && nth-- == 0)
			return &g->nodes[i];
		for (uint32_t j = 0; j < g->nodes[i].n_sub; j++) {
			const struct al_node *n = find_node(g->nodes[i].sub[j], type, 0);
			if (n && nth-- == 0)
				return n;
		}
	}
	return NULL;
}

/* ================================================================ synthetic programs */

/* consts of every encoding, an op reading them, a name and a literal binding */
static struct buf values_program(void)
{
	struct buf block = {0}, ops[8], in_t = fp32_type(2, (int64_t[]){1, -1});
	struct buf in = named("x", &in_t);
	int64_t two = 2, three = 3, four = 4, five = 5;
	/* ints: packed int32 with a 10-byte -1 */
	uint8_t ints[] = {0x0f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
	struct buf v = imm_value(AL_DT_INT32, 1, &two, 2, ints, sizeof ints, true), t;
	t = tensor_type(AL_DT_INT32, 1, &two, 1);
	ops[0] = const_op("k_ints", &v, &t);
	/* floats: packed fp32 {1.5, -2} */
	float fl[] = {1.5f, -2.0f};
	v = imm_value(AL_DT_FP32, 1, &two, 1, fl, sizeof fl, true);
	t = tensor_type(AL_DT_FP32, 1, &two, 1);
	ops[1] = const_op("k_floats", &v, &t);
	/* fp16 bytes {1.0, -0.5, 65504} */
	uint8_t h[] = {0x00, 0x3c, 0x00, 0xb8, 0xff, 0x7b};
	v = imm_value(AL_DT_FP16, 1, &three, 7, h, sizeof h, true);
	t = tensor_type(AL_DT_FP16, 1, &three, 1);
	ops[2] = const_op("k_half", &v, &t);
	/* int4 bytes, LSB first: {7, -8, 1, -1, 2} */
	uint8_t q[] = {0x87, 0xf1, 0x02};
	v = imm_value(AL_DT_INT4, 1, &five, 7, q, sizeof q, true);
	t = tensor_type(AL_DT_INT4, 1, &five, 1);
	ops[3] = const_op("k_int4", &v, &t);
	/* a string scalar */
	v = imm_value(AL_DT_STRING, 0, NULL, 4, "\x0a\x04same", 6, false);
	t = tensor_type(AL_DT_STRING, 0, NULL, 0);
	ops[4] = const_op("k_str", &v, &t);
	/* unpacked longInts {4, 5, 6, 7}, doubles {0.25} */
	uint8_t longs[] = {0x08, 4, 0x08, 5, 0x08, 6, 0x08, 7};
	v = imm_value(AL_DT_INT64, 1, &four, 5, longs, sizeof longs, false);
	t = tensor_type(AL_DT_INT64, 1, &four, 1);
	ops[5] = const_op("k_long", &v, &t);
	/* the consumer: x from the function input, literal bools */
	struct buf op = {0};
	put_str(&op, 1, "max_pool");
	bind_name(&op, "x", "x");
	bind_name(&op, "kernel_sizes", "k_ints");
	bind_name(&op, "alpha", "k_floats");
	bind_name(&op, "half", "k_half");
	bind_name(&op, "q", "k_int4");
	bind_name(&op, "pad_type", "k_str");
	bind_name(&op, "long", "k_long");
	bind_name(&op, "later", "after");
	uint8_t bools[] = {1, 0, 1};
	v = imm_value(AL_DT_BOOL, 1, &three, 3, bools, sizeof bools, true);
	bind_literal(&op, "flags", &v);
	double dd = 0.25;
	v = imm_value(AL_DT_FP64, 0, NULL, 6, &dd, sizeof dd, true);
	bind_literal(&op, "dbl", &v);
	struct buf ot = fp32_type(2, (int64_t[]){1, 4}), nv = named("y", &ot);
	put_msg(&op, 3, &nv);
	/* attributes: a parameter kept there, and the op's name */
	struct buf attr = {0};
	v = imm_value(AL_DT_STRING, 0, NULL, 4, "\x0a\x06in_att", 8, false);
	put_str(&attr, 1, "mode");
	put_msg(&attr, 2, &v);
	put_msg(&op, 5, &attr);
	v = imm_value(AL_DT_STRING, 0, NULL, 4, "\x0a\x02op", 4, false);
	put_str(&attr, 1, "name");
	put_msg(&attr, 2, &v);
	put_msg(&op, 5, &attr);
	ops[6] = op;
	/* a later const: not visible to the op above */
	v = imm_value(AL_DT_INT32, 1, &two, 2, "\x01\x02", 2, true);
	t = tensor_type(AL_DT_INT32, 1, &two, 1);
	ops[7] = const_op("after", &v, &t);
	for (int i = 0; i < 8; i++)
		put_msg(&block, 3, &ops[i]);
	put_str(&block, 2, "y");
	return program(&in, 1, &block);
}

static void test_values(void **state)
{
	(void)state;
	struct buf prog = values_program();
	struct loaded l = load_prog(&prog, NULL, 0);
	assert_int_equal(l.st, AL_OK);
	assert_int_equal(al_diags_count(l.d), 0);
	assert_int_equal(l.sub->n_functions, 1);
	assert_string_equal(l.sub->functions[0], "main");
	assert_string_equal(l.sub->opsets[0], "CoreML5");
	const struct al_graph *g = l.sub->graphs[0];
	assert_int_equal(g->n_nodes, 8);
	assert_string_equal(g->block, "main");
	const struct al_node *n = &g->nodes[6];
	assert_string_equal(n->type, "max_pool");
	assert_string_equal(n->name, "y");
	assert_true(n->kind >= 0);
	assert_string_equal(n->path, "mlProgram.functions[main].block.operations[6]");
	assert_int_equal(n->n_inputs, 8); /* name bindings only */
	assert_string_equal(n->inputs[0], "x");
	assert_string_equal(n->inputs[7], "after");
	assert_int_equal(n->out_types[0].rank, 2);
	assert_int_equal(n->out_types[0].dims[1], 4);
	/* the offset is the op message's, in file terms (base 100) */
	assert_true(n->offset > 100 && n->offset < 100 + prog.n);
	assert_memory_equal(prog.p + (n->offset - 100), "\x0a\x08max_pool", 10);

	int64_t iv[8];
	double fv[8];
	char s[16];
	assert_int_equal(ali_mil_param_ints(n, "kernel_sizes", iv, 8), 2);
	assert_int_equal(iv[0], 15);
	assert_int_equal(iv[1], -1);
	assert_int_equal(ali_mil_param_ints(n, "kernel_sizes", iv, 1), 2); /* count > max */
	assert_int_equal(ali_mil_param_floats(n, "kernel_sizes", fv, 8), 2);
	assert_true(fv[1] == -1.0);
	assert_int_equal(ali_mil_param_floats(n, "alpha", fv, 8), 2);
	assert_true(fv[0] == 1.5 && fv[1] == -2.0);
	assert_int_equal(ali_mil_param_ints(n, "alpha", iv, 8), -1); /* floats are not ints */
	assert_int_equal(ali_mil_param_floats(n, "half", fv, 8), 3);
	assert_true(fv[0] == 1.0 && fv[1] == -0.5 && fv[2] == 65504.0);
	assert_int_equal(ali_mil_param_ints(n, "q", iv, 8), 5);
	assert_int_equal(iv[0], 7);
	assert_int_equal(iv[1], -8);
	assert_int_equal(iv[2], 1);
	assert_int_equal(iv[3], -1);
	assert_int_equal(iv[4], 2);
	assert_int_equal(ali_mil_param_ints(n, "long", iv, 8), 4);
	assert_int_equal(iv[3], 7);
	assert_int_equal(ali_mil_param_ints(n, "flags", iv, 8), 3);
	assert_int_equal(iv[0] + iv[1] + iv[2], 2);
	assert_int_equal(ali_mil_param_floats(n, "dbl", fv, 8), 1);
	assert_true(fv[0] == 0.25);
	assert_true(ali_mil_param_string(n, "pad_type", s, sizeof s));
	assert_string_equal(s, "same");
	assert_false(ali_mil_param_string(n, "pad_type", s, 4)); /* does not fit */
	assert_false(ali_mil_param_string(n, "kernel_sizes", s, sizeof s));

	/* x is the function input: present, not constant, typed */
	assert_true(ali_mil_param_present(n, "x"));
	assert_false(ali_mil_param_is_const(n, "x"));
	assert_int_equal(ali_mil_param_ints(n, "x", iv, 8), -1);
	const struct al_ttype *xt = ali_mil_param_type(n, "x");
	assert_non_null(xt);
	assert_int_equal(xt->dtype, AL_DT_FP32);
	assert_int_equal(xt->rank, 2);
	assert_int_equal(xt->dims[1], -1);
	assert_null(ali_mil_producer(n, "x"));
	/* const-bound and literal parameters */
	assert_true(ali_mil_param_is_const(n, "kernel_sizes"));
	assert_true(ali_mil_param_is_const(n, "flags"));
	assert_ptr_equal(ali_mil_producer(n, "k_ints"), &g->nodes[0]);
	assert_int_equal(ali_mil_param_type(n, "half")->dtype, AL_DT_FP16);
	assert_null(ali_mil_param_type(n, "flags")); /* literal */
	/* absent, and defined only after the op */
	assert_false(ali_mil_param_present(n, "nope"));
	assert_int_equal(ali_mil_param_ints(n, "nope", iv, 8), 0);
	assert_int_equal(ali_mil_param_ints(n, "later", iv, 8), -1);
	assert_null(ali_mil_producer(n, "after"));
	assert_false(ali_mil_param_is_const(n, "later"));
	/* a parameter kept in the attributes; the name attribute is not one */
	assert_true(ali_mil_param_string(n, "mode", s, sizeof s));
	assert_string_equal(s, "in_att");
	assert_true(ali_mil_param_present(n, "mode"));
	assert_true(ali_mil_param_is_const(n, "mode"));
	assert_null(ali_mil_param_type(n, "mode"));
	assert_false(ali_mil_param_present(n, "name"));
	assert_false(ali_mil_param_string(n, "name", s, sizeof s));
	/* const ops have a name and no inputs */
	assert_string_equal(g->nodes[0].name, "k_ints");
	assert_int_equal(g->nodes[0].n_inputs, 0);
	/* NULL / foreign nodes are absent, not a crash */
	assert_int_equal(ali_mil_param_ints(NULL, "x", iv, 8), 0);
	unload(&l);
	free(prog.p);
}

/* while_loop with cond and body blocks that see the outer graph */
static struct buf nested_program(int depth_extra)
{
	struct buf in_t = fp32_type(1, (int64_t[]){4}), in = named("x", &in_t);
	int64_t one = 1;
	struct buf v = imm_value(AL_DT_INT32, 0, NULL, 2, "\x03", 1, true);
	struct buf t = tensor_type(AL_DT_INT32, 0, NULL, 0);
	struct buf c0 = const_op("axis", &v, &t);
	/* body: one op using the outer const and the block input */
	struct buf body = {0}, bop = {0}, bt = fp32_type(1, &one), bin = named("i", &bt);
	put_msg(&body, 1, &bin);
	put_str(&bop, 1, "cumsum");
	bind_name(&bop, "x", "i");
	bind_name(&bop, "axis", "axis");
	struct buf ot = fp32_type(1, &one), onv = named("s", &ot);
	put_msg(&bop, 3, &onv);
	put_msg(&body, 3, &bop);
	put_str(&body, 2, "s");
	/* optional deep nesting inside the body */
	for (int k = 0; k < depth_extra; k++) {
		struct buf wrap = {0}, op = {0};
		put_str(&op, 1, "cond");
		put_msg(&op, 4, &body);
		put_msg(&wrap, 3, &op);
		body = wrap;
	}
	struct buf cond = {0}, cop = {0}, ct = tensor_type(AL_DT_BOOL, 0, NULL, 0), cnv = named("c", &ct);
	put_str(&cop, 1, "less");
	bind_name(&cop, "x", "x");
	put_msg(&cop, 3, &cnv);
	put_msg(&cond, 3, &cop);
	struct buf wl = {0}, wt = fp32_type(1, &one), wnv = named("loop_out", &wt);
	put_str(&wl, 1, "while_loop");
	bind_name(&wl, "loop_vars", "x");
	put_msg(&wl, 3, &wnv);
	put_msg(&wl, 4, &cond);
	put_msg(&wl, 4, &body);
	struct buf block = {0};
	put_msg(&block, 3, &c0);
	put_msg(&block, 3, &wl);
	return program(&in, 1, &block);
}

static void test_nested(void **state)
{
	(void)state;
	struct buf prog = nested_program(0);
	struct loaded l = load_prog(&prog, NULL, 0);
	assert_int_equal(l.st, AL_OK);
	const struct al_graph *g = l.sub->graphs[0];
	const struct al_node *wl = &g->nodes[1];
	assert_string_equal(wl->type, "while_loop");
	assert_int_equal(wl->n_sub, 2);
	const struct al_graph *body = wl->sub[1];
	assert_string_equal(body->block, "main/loop_out.blocks[1]");
	assert_string_equal(body->function, "main");
	assert_ptr_equal(body->parent, g);
	assert_ptr_equal(body->parent_node, wl);
	assert_int_equal(body->depth, 1);
	assert_int_equal(body->n_nodes, 1);
	const struct al_node *cs = &body->nodes[0];
	assert_ptr_equal(cs->owner, body);
	assert_string_equal(cs->path,
			    "mlProgram.functions[main].block.operations[1].blocks[1].operations[0]");
	int64_t axis;
	assert_int_equal(ali_mil_param_ints(cs, "axis", &axis, 1), 1);
	assert_int_equal(axis, 3);
	assert_ptr_equal(ali_mil_producer(cs, "axis"), &g->nodes[0]);
	assert_null(ali_mil_producer(cs, "i")); /* a block input */
	const struct al_ttype *it = ali_mil_param_type(cs, "x");
	assert_non_null(it);
	assert_int_equal(it->rank, 1);
	assert_false(ali_mil_param_is_const(cs, "x"));
	unload(&l);
	free(prog.p);

	/* AL_MAX_DEPTH levels are fine, one more is an error, never a crash */
	prog = nested_program(AL_MAX_DEPTH - 1);
	l = load_prog(&prog, NULL, 0);
	assert_int_equal(l.st, AL_OK);
	unload(&l);
	free(prog.p);
	prog = nested_program(AL_MAX_DEPTH + 5);
	l = load_prog(&prog, NULL, 0);
	assert_int_equal(l.st, AL_E_FORMAT);
	assert_int_equal(al_diags_errors(l.d), 1);
	assert_true(has_msg(l.d, "nested deeper"));
	unload(&l);
	free(prog.p);
}

/* unknown op types: kept with kind -1 and one note per type */
static void test_unknown_and_types(void **state)
{
	(void)state;
	struct buf block = {0};
	for (int i = 0; i < 3; i++) {
		struct buf op = {0}, t = fp32_type(1, (int64_t[]){2}), nv = named(i ? "b" : "a", &t);
		put_str(&op, 1, i == 2 ? "other_op" : "frobnicate");
		put_msg(&op, 3, &nv);
		put_msg(&block, 3, &op);
	}
	/* rank 3 with 2 dims: a warning */
	struct buf op = {0}, vt = tensor_type(AL_DT_FP16, 3, (int64_t[]){5, 6}, 2), nv = named("r", &vt);
	put_str(&op, 1, "relu");
	put_msg(&op, 3, &nv);
	put_msg(&block, 3, &op);
	/* no output: named from attributes["name"] */
	struct buf op2 = {0}, attr = {0};
	struct buf name = imm_value(AL_DT_STRING, 0, NULL, 4, "\x0a\x05nm_op", 7, false);
	put_str(&op2, 1, "relu");
	put_str(&attr, 1, "name");
	put_msg(&attr, 2, &name);
	put_msg(&op2, 5, &attr);
	put_msg(&block, 3, &op2);
	struct buf prog = program(NULL, 0, &block);
	struct loaded l = load_prog(&prog, NULL, 0);
	assert_int_equal(l.st, AL_OK);
	assert_int_equal(count_sev(l.d, AL_SEV_NOTE), 2);
	assert_int_equal(count_sev(l.d, AL_SEV_WARNING), 1);
	const struct al_graph *g = l.sub->graphs[0];
	assert_int_equal(g->nodes[0].kind, -1);
	assert_string_equal(g->nodes[1].type, "frobnicate");
	assert_int_equal(g->nodes[3].out_types[0].rank, 2);
	assert_int_equal(g->nodes[3].out_types[0].dtype, AL_DT_FP16);
	assert_string_equal(g->nodes[4].name, "nm_op");
	unload(&l);
	free(prog.p);
}

/* ---------------------------------------------------------------- blobs */

static void wr32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void wr64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* weight.bin with one fp16 blob of 20 bytes: metadata at 64, data at 128 */
static size_t make_weights(uint8_t *w)
{
	memset(w, 0, 148);
	wr32(w, 1);
	wr32(w + 4, 2);
	wr32(w + 64, 0xDEADBEEFu);
	wr32(w + 68, 1);
	wr64(w + 72, 20);
	wr64(w + 80, 128);
	return 148;
}

static struct buf blob_program(const char *file, uint64_t offset, int n_refs)
{
	struct buf block = {0};
	for (int i = 0; i < n_refs; i++) {
		struct buf v = blob_value(AL_DT_FP16, 10, file, offset);
		struct buf t = tensor_type(AL_DT_FP16, 1, (int64_t[]){10}, 1);
		struct buf op = const_op(i ? "w1" : "w0", &v, &t);
		put_msg(&block, 3, &op);
	}
	struct buf op = {0}, t = fp32_type(1, (int64_t[]){10}), nv = named("y", &t);
	put_str(&op, 1, "relu");
	bind_name(&op, "x", "w0");
	put_msg(&op, 3, &nv);
	put_msg(&block, 3, &op);
	return program(NULL, 0, &block);
}

static void test_blobs(void **state)
{
	(void)state;
	uint8_t w[160];
	size_t wn = make_weights(w);
	const char *wf = "@model_path/weights/weight.bin";

	/* two references to one blob: counted once */
	struct buf prog = blob_program(wf, 64, 2);
	struct loaded l = load_prog(&prog, w, wn);
	assert_int_equal(l.st, AL_OK);
	assert_int_equal(al_diags_count(l.d), 0);
	assert_int_equal(l.sub->weights.fp16, 20);
	assert_int_equal(l.sub->weights.n_blobs, 1);
	const struct al_node *relu = &l.sub->graphs[0]->nodes[2];
	int64_t iv[4];
	assert_true(ali_mil_param_is_const(relu, "x"));
	assert_int_equal(ali_mil_param_ints(relu, "x", iv, 4), -1); /* weights are not read */
	unload(&l);

	/* weight.bin absent: one error naming the op */
	l = load_prog(&prog, NULL, 0);
	assert_int_equal(l.st, AL_E_FORMAT);
	assert_int_equal(al_diags_errors(l.d), 1);
	assert_true(has_msg(l.d, "op w0 references weights/weight.bin, which is absent"));
	unload(&l);

	/* data past the end (file cut short): error on weight.bin at the data offset */
	l = load_prog(&prog, w, wn - 1);
	assert_int_equal(l.st, AL_E_FORMAT);
	assert_int_equal(al_diags_errors(l.d), 1);
	assert_string_equal(al_diags_get(l.d, 0)->file, "mem/weight.bin");
	assert_int_equal(al_diags_get(l.d, 0)->offset, 64 + 16);
	assert_string_equal(al_diags_get(l.d, 0)->node, "w0");
	unload(&l);

	/* a bad sentinel, an unknown dtype, a dtype mismatch */
	w[64] ^= 1;
	l = load_prog(&prog, w, wn);
	assert_int_equal(l.st, AL_E_FORMAT);
	assert_true(has_msg(l.d, "sentinel"));
	unload(&l);
	w[64] ^= 1;
	wr32(w + 68, 99);
	l = load_prog(&prog, w, wn);
	assert_int_equal(l.st, AL_E_FORMAT);
	assert_true(has_msg(l.d, "unknown data type 99"));
	unload(&l);
	wr32(w + 68, 2);
	l = load_prog(&prog, w, wn);
	assert_int_equal(l.st, AL_OK);
	assert_int_equal(count_sev(l.d, AL_SEV_WARNING), 1);
	assert_int_equal(l.sub->weights.fp32, 20);
	unload(&l);
	wr32(w + 68, 1);
	free(prog.p);

	/* metadata offset past the end, and an offset that overflows */
	prog = blob_program(wf, 128, 1);
	l = load_prog(&prog, w, wn);
	assert_int_equal(l.st, AL_E_FORMAT);
	assert_true(has_msg(l.d, "runs past the end"));
	unload(&l);
	free(prog.p);
	prog = blob_program(wf, UINT64_MAX - 8, 1);
	l = load_prog(&prog, w, wn);
	assert_int_equal(l.st, AL_E_FORMAT);
	unload(&l);
	free(prog.p);
	wr64(w + 80, UINT64_MAX - 4); /* data offset + size overflows */
	prog = blob_program(wf, 64, 1);
	l = load_prog(&prog, w, wn);
	assert_int_equal(l.st, AL_E_FORMAT);
	unload(&l);
	free(prog.p);
	make_weights(w);

	/* other blob files */
	prog = blob_program("@model_path/weights/other.bin", 64, 1);
	l = load_prog(&prog, w, wn);
	assert_int_equal(l.st, AL_E_UNSUPPORTED);
	unload(&l);
	free(prog.p);
	prog = blob_program("/etc/passwd", 64, 1);
	l = load_prog(&prog, w, wn);
	assert_int_equal(l.st, AL_E_FORMAT);
	unload(&l);
	free(prog.p);
}

/* Diagnostics inside an op's attribute or input Value name its field path
 * (built only when one is reported, mil.c lazy_where), and the bindings read
 * at load answer the parameter questions. */
static void test_field_paths(void **state)
{
	(void)state;
	uint8_t w[160];
	size_t wn = make_weights(w);
	w[64] ^= 1; /* a bad sentinel: reported at the const's val attribute */
	struct buf prog = blob_program("@model_path/weights/weight.bin", 64, 1);
	struct loaded l = load_prog(&prog, w, wn);
	assert_int_equal(l.st, AL_E_FORMAT);
	assert_int_equal(al_diags_errors(l.d), 1);
	assert_string_equal(al_diags_get(l.d, 0)->where,
			    "mlProgram.functions[main].block.operations[0].attributes[val].blobFileValue");
	unload(&l);
	free(prog.p);

	/* a literal Value whose type field is a varint: reported at the input */
	struct buf block = {0}, op = {0}, bad = {0};
	struct buf t = fp32_type(1, (int64_t[]){4}), nv = named("y", &t);
	put_uint(&bad, 2, 5);
	struct buf iv = imm_value(AL_DT_INT32, 1, (int64_t[]){1}, 2, "\x03", 1, true);
	put_str(&op, 1, "relu");
	bind_name(&op, "x", "in");
	bind_literal(&op, "alpha", &bad);
	bind_literal(&op, "axis", &iv);
	put_msg(&op, 3, &nv);
	put_msg(&block, 3, &op);
	struct buf it = fp32_type(1, (int64_t[]){4}), in = named("in", &it);
	prog = program(&in, 1, &block);
	l = load_prog(&prog, NULL, 0);
	assert_int_equal(l.st, AL_E_FORMAT);
	assert_int_equal(al_diags_errors(l.d), 1);
	assert_string_equal(al_diags_get(l.d, 0)->where,
			    "mlProgram.functions[main].block.operations[0].inputs[alpha]");
	const struct al_node *relu = &l.sub->graphs[0]->nodes[0];
	int64_t v[2];
	assert_int_equal(ali_mil_param_count(relu, "x"), 1);
	assert_int_equal(ali_mil_param_count(relu, "nothing"), 0);
	assert_null(ali_mil_producer(relu, "in")); /* a function input */
	assert_non_null(ali_mil_param_type(relu, "x"));
	assert_int_equal(ali_mil_param_type(relu, "x")->dtype, AL_DT_FP32);
	assert_int_equal(ali_mil_param_ints(relu, "axis", v, 2), 1);
	assert_int_equal(v[0], 3);
	assert_true(ali_mil_param_is_const(relu, "axis"));
	assert_false(ali_mil_param_is_const(relu, "x"));
	al_span b;
	assert_int_equal(ali_mil_param_binding(relu, "x", 0, &b), 1);
	assert_int_equal(b.n, 2);
	assert_int_equal(ali_mil_param_binding(relu, "axis", 0, &b), 2);
	assert_int_equal(ali_mil_param_binding(relu, "axis", 1, &b), 0);
	unload(&l);
	free(prog.p);
}

/* Every prefix and every single-bit flip of a program: a status, never a crash. */
static void test_damaged(void **state)
{
	(void)state;
	uint8_t w[160];
	size_t wn = make_weights(w);
	struct buf progs[3] = {values_program(), nested_program(2),
			       blob_program("@model_path/weights/weight.bin", 64, 2)};
	for (int k = 0; k < 3; k++) {
		struct buf *p = &progs[k];
		for (size_t n = 0; n < p->n; n++) {
			struct buf cut = {p->p, n, n};
			struct loaded l = load_prog(&cut, w, wn);
			assert_true(l.st == AL_OK || l.st == AL_E_FORMAT || l.st == AL_E_UNSUPPORTED);
			unload(&l);
		}
		uint8_t *copy = malloc(p->n);
		assert_non_null(copy);
		for (size_t i = 0; i < p->n * 8; i++) {
			memcpy(copy, p->p, p->n);
			copy[i / 8] ^= (uint8_t)(1u << (i % 8));
			struct buf bad = {copy, p->n, p->n};
			struct loaded l = load_prog(&bad, w, wn);
			if (l.st == AL_OK) { /* whatever loaded must be walkable */
				for (uint32_t g = 0; g < l.sub->n_graphs; g++) {
					const struct al_graph *gr = l.sub->graphs[g];
					for (uint32_t j = 0; j < gr->n_nodes; j++) {
						int64_t iv[4];
						assert_non_null(gr->nodes[j].name);
						assert_non_null(gr->nodes[j].type);
						ali_mil_param_ints(&gr->nodes[j], "kernel_sizes", iv, 4);
						ali_mil_param_type(&gr->nodes[j], "x");
					}
				}
			}
			unload(&l);
		}
		free(copy);
		free(p->p);
	}
}

/* A function's inputs, and the program's functions, are keyed by name: one
 * given twice is an error at the repeat (tests/regress/mil/duplicate-function-inputs). */
static void test_repeated_names(void **state)
{
	(void)state;
	int64_t d4[1] = {4};
	struct buf ins[3], block = {0};
	const char *names[3] = {"x", "z", "x"};
	for (int i = 0; i < 3; i++) {
		struct buf t = fp32_type(1, d4);
		ins[i] = named(names[i], &t);
	}
	put_str(&block, 2, "x");
	struct buf prog = program(ins, 3, &block);
	struct loaded l = load_prog(&prog, NULL, 0);
	assert_int_equal(l.st, AL_E_FORMAT);
	assert_int_equal(count_sev(l.d, AL_SEV_ERROR), 1);
	const struct al_diag *e = al_diags_get(l.d, 0);
	assert_string_equal(e->where, "mlProgram.functions[main]");
	assert_non_null(strstr(e->msg, "function input 2 'x' repeats the name of function input 0"));
	/* at the third inputs field: 100 (the program's offset) + its place */
	assert_true(e->offset > 100 && e->offset < 100 + prog.n);
	assert_int_equal(prog.p[e->offset - 100], 0x0a); /* Function.inputs, field 1 */
	unload(&l);
	free(prog.p);

	/* two functions named main */
	struct buf one = {0}, two = {0};
	put_str(&one, 2, "x");
	put_str(&two, 2, "x");
	struct buf in1 = fp32_type(1, d4), in2 = fp32_type(1, d4);
	struct buf a1 = named("x", &in1), a2 = named("x", &in2);
	struct buf p1 = program(&a1, 1, &one), p2 = program(&a2, 1, &two), both = {0};
	put_raw(&both, p1.p, p1.n);
	put_raw(&both, p2.p + 2, p2.n - 2); /* the second without its version field */
	l = load_prog(&both, NULL, 0);
	assert_int_equal(l.st, AL_E_FORMAT);
	assert_int_equal(count_sev(l.d, AL_SEV_ERROR), 1);
	e = al_diags_get(l.d, 0);
	assert_string_equal(e->where, "mlProgram.functions");
	assert_non_null(strstr(e->msg, "function 1 'main' repeats the name of function 0"));
	assert_int_equal(e->offset, 100 + p1.n);
	unload(&l);
	free(p1.p);
	free(p2.p);
	free(both.p);
}

/* Allocation failures: AL_E_NOMEM (or success), no leak, no crash. */
static void test_nomem(void **state)
{
	(void)state;
	struct buf prog = nested_program(1);
	for (unsigned long k = 1; k < 200; k++) {
		al_diags *d = al_diags_new();
		struct al_model *m = ali_calloc(1, sizeof *m);
		struct al_submodel *sub = ali_model_add_sub(m);
		ali_alloc_fail_after(k);
		enum al_status st = ali_load_mil_program(m, sub, (al_span){prog.p, prog.n}, 0, "f", d);
		ali_alloc_fail_after(0);
		assert_true(st == AL_OK || st == AL_E_NOMEM);
		al_model_free(m);
		al_diags_free(d);
		if (st == AL_OK)
			break;
	}
	free(prog.p);
}

/* ================================================================ corpus packages */

struct opened {
	al_model *m;
	al_diags *d;
	enum al_status st;
};

static bool open_corpus(const char *rel, struct opened *o)
{
	const char *p = corpus_file(rel);
	struct stat st;
	if (!p || stat(p, &st) != 0)
		return false;
	o->d = al_diags_new();
	o->m = NULL;
	o->st = al_model_open(p, &o->m, o->d);
	return true;
}

static void close_opened(struct opened *o)
{
	al_model_free(o->m);
	al_diags_free(o->d);
}

static const struct al_submodel *root_ok(struct opened *o)
{
	assert_int_equal(o->st, AL_OK);
	assert_int_equal(al_diags_errors(o->d), 0);
	assert_true(al_model_count(o->m) >= 1);
	const struct al_submodel *s = al_model_get(o->m, 0);
	assert_int_equal(s->world, AL_WORLD_MIL);
	assert_true(s->n_graphs >= 1);
	return s;
}

static void test_corpus_pool(void **state)
{
	(void)state;
	struct opened o;
	if (!open_corpus("converted/pool_k15_s3__mlp_fp16.mlpackage", &o))
		skip();
	const struct al_submodel *s = root_ok(&o);
	assert_string_equal(s->path, "pool_k15_s3__mlp_fp16.mlpackage");
	const struct al_node *n = find_node(s->graphs[0], "max_pool", 0);
	assert_non_null(n);
	int64_t k[4];
	assert_int_equal(ali_mil_param_ints(n, "kernel_sizes", k, 4), 2);
	assert_int_equal(k[0], 15);
	assert_int_equal(k[1], 15);
	assert_int_equal(ali_mil_param_ints(n, "strides", k, 4), 2);
	assert_int_equal(k[0], 3);
	char pad[16];
	assert_true(ali_mil_param_string(n, "pad_type", pad, sizeof pad));
	assert_string_equal(pad, "custom");
	const struct al_ttype *t = ali_mil_param_type(n, "x");
	assert_non_null(t);
	assert_int_equal(t->dtype, AL_DT_FP16);
	assert_int_equal(t->rank, 4);
	assert_int_equal(t->dims[1], 8);
	const struct al_node *cast = ali_mil_producer(n, "x_to_fp16");
	assert_non_null(cast);
	assert_string_equal(cast->type, "cast");
	char dt[16];
	assert_true(ali_mil_param_string(cast, "dtype", dt, sizeof dt));
	assert_string_equal(dt, "fp16");
	assert_int_equal(s->weights.n_blobs, 0);
	close_opened(&o);
}

static void test_corpus_dilated(void **state)
{
	(void)state;
	struct opened o;
	if (!open_corpus("converted/dilated_conv__mlp_fp32.mlpackage", &o))
		skip();
	const struct al_submodel *s = root_ok(&o);
	int dilated = 0;
	for (int i = 0;; i++) {
		const struct al_node *n = find_node(s->graphs[0], "conv", i);
		if (!n)
			break;
		int64_t dl[4];
		long c = ali_mil_param_ints(n, "dilations", dl, 4);
		assert_int_equal(c, 2);
		dilated += dl[0] > 1;
		/* weights are blob-backed consts: constant, but not read */
		assert_true(ali_mil_param_is_const(n, "weight"));
		assert_int_equal(ali_mil_param_floats(n, "weight", NULL, 0), -1);
		assert_non_null(ali_mil_param_type(n, "weight"));
	}
	assert_true(dilated >= 1);
	assert_true(s->weights.fp32 > 0);
	assert_int_equal(s->weights.n_blobs, 5);
	close_opened(&o);
}

static void test_corpus_cumsum_no_weights(void **state)
{
	(void)state;
	struct opened o;
	if (!open_corpus("converted/cumsum__mlp_fp16.mlpackage", &o))
		skip();
	const struct al_submodel *s = root_ok(&o);
	const struct al_node *n = find_node(s->graphs[0], "cumsum", 0);
	assert_non_null(n);
	int64_t axis;
	assert_int_equal(ali_mil_param_ints(n, "axis", &axis, 1), 1);
	assert_int_equal(s->weights.n_blobs, 0);
	close_opened(&o);
}

static void test_corpus_gru(void **state)
{
	(void)state;
	struct opened o;
	if (!open_corpus("converted/gru__mlp_fp16.mlpackage", &o))
		skip();
	const struct al_submodel *s = root_ok(&o);
	const struct al_node *wl = find_node(s->graphs[0], "while_loop", 0);
	assert_non_null(wl);
	assert_int_equal(wl->n_sub, 2);
	const struct al_graph *body = wl->sub[1];
	assert_int_equal(body->depth, 1);
	assert_ptr_equal(body->parent_node, wl);
	assert_true(body->n_nodes > 10);
	/* the loop's ops read values of the enclosing graph (the cond block
	 * compares with slice_by_index_1) and the function input x */
	int outer = 0, fn_input = 0;
	for (uint32_t b = 0; b < wl->n_sub; b++)
		for (uint32_t i = 0; i < wl->sub[b]->n_nodes; i++) {
			const struct al_node *n = &wl->sub[b]->nodes[i];
			for (uint32_t j = 0; j < n->n_inputs; j++) {
				const struct al_node *p = ali_mil_producer(n, n->inputs[j]);
				outer += p && p->owner == s->graphs[0];
				fn_input += !p && strcmp(n->inputs[j], "x") == 0;
			}
		}
	assert_true(outer > 0);
	assert_true(fn_input > 0);
	const struct al_node *cast = find_node(body, "cast", 0);
	assert_non_null(cast);
	const struct al_ttype *xt = ali_mil_param_type(cast, "x");
	assert_non_null(xt); /* the function input's declared type */
	assert_int_equal(xt->dtype, AL_DT_FP32);
	assert_true(s->weights.n_blobs > 0);
	close_opened(&o);
}

static void test_corpus_resnet_weights(void **state)
{
	(void)state;
	struct opened o;
	if (!open_corpus("converted/resnet18_w4__mlp_fp16.mlpackage", &o))
		skip();
	const struct al_submodel *s = root_ok(&o);
	assert_true(s->weights.fp16 > 1000000);
	assert_int_equal(s->weights.fp32, 0);
	assert_int_equal(s->weights.n_blobs, 38);
	close_opened(&o);
}

static void test_corpus_lists(void **state)
{
	(void)state;
	struct opened o;
	if (!open_corpus("real/ActivityClassifier_GRU_mlprogram.mlpackage", &o))
		skip();
	const struct al_submodel *s = root_ok(&o);
	const struct al_node *ml = find_node(s->graphs[0], "make_list", 0);
	assert_non_null(ml);
	assert_int_equal(ml->out_types[0].kind, 1);
	assert_non_null(find_node(s->graphs[0], "list_write", 0));
	assert_non_null(find_node(s->graphs[0], "list_gather", 0));
	assert_non_null(find_node(s->graphs[0], "while_loop", 1));
	close_opened(&o);
}

/* ================================================================ damaged packages */

static char tmp_root[64];

static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	assert_non_null(in);
	assert_non_null(out);
	char b[65536];
	size_t n;
	while ((n = fread(b, 1, sizeof b, in)) > 0)
		assert_int_equal(fwrite(b, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* A writable copy of a package at <tmp_root>/<name>: the repo's fixture
 * tests/data/<rel> when there is one, else the shared corpus; false if neither. */
static bool copy_package(const char *rel, const char *name, char *dst, size_t cap)
{
	const char *src0 = fixture(rel);
	struct stat st;
	if (stat(src0, &st) != 0)
		src0 = corpus_file(rel);
	if (!src0 || stat(src0, &st) != 0)
		return false;
	char src[8192], a[8400], b[8400];
	snprintf(src, sizeof src, "%s", src0);
	snprintf(dst, cap, "%s/%s", tmp_root, name);
	assert_int_equal(mkdir(dst, 0755), 0);
	snprintf(a, sizeof a, "%s/Data", dst);
	assert_int_equal(mkdir(a, 0755), 0);
	snprintf(a, sizeof a, "%s/Data/com.apple.CoreML", dst);
	assert_int_equal(mkdir(a, 0755), 0);
	snprintf(a, sizeof a, "%s/Manifest.json", src);
	snprintf(b, sizeof b, "%s/Manifest.json", dst);
	copy_file(a, b);
	snprintf(a, sizeof a, "%s/Data/com.apple.CoreML/model.mlmodel", src);
	snprintf(b, sizeof b, "%s/Data/com.apple.CoreML/model.mlmodel", dst);
	copy_file(a, b);
	snprintf(a, sizeof a, "%s/Data/com.apple.CoreML/weights/weight.bin", src);
	if (stat(a, &st) == 0) {
		snprintf(b, sizeof b, "%s/Data/com.apple.CoreML/weights", dst);
		assert_int_equal(mkdir(b, 0755), 0);
		snprintf(b, sizeof b, "%s/Data/com.apple.CoreML/weights/weight.bin", dst);
		copy_file(a, b);
	}
	return true;
}

static void expect_one_error(const char *pkg, enum al_status want, const char *needle)
{
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	enum al_status st = al_model_open(pkg, &m, d);
	if (st != want || al_diags_errors(d) != 1 || !has_msg(d, needle))
		for (size_t i = 0; i < al_diags_count(d); i++)
			print_message("diag: %s: %s\n", al_diags_get(d, i)->file, al_diags_get(d, i)->msg);
	assert_int_equal(st, want);
	assert_null(m);
	assert_int_equal(al_diags_errors(d), 1);
	assert_true(has_msg(d, needle));
	al_diags_free(d);
}

static const char manifest_fmt[] =
	"{\n"
	"    \"fileFormatVersion\": \"1.0.0\",\n"
	"    \"itemInfoEntries\": {\n"
	"        \"A\": {\"author\": \"com.apple.CoreML\", \"description\": \"CoreML Model "
	"Specification\", \"name\": \"model.mlmodel\", \"path\": \"%s\"},\n"
	"        \"B\": {\"author\": \"com.apple.CoreML\", \"description\": \"CoreML Model "
	"Weights\", \"name\": \"weights\", \"path\": \"%s\"}\n"
	"    },\n"
	"    \"rootModelIdentifier\": \"%s\"\n"
	"}\n";

static void write_manifest(const char *pkg, const char *model, const char *weights, const char *root)
{
	char path[4200], text[2048];
	snprintf(path, sizeof path, "%s/Manifest.json", pkg);
	snprintf(text, sizeof text, manifest_fmt, model, weights, root);
	remove(path);
	write_file(path, text);
}

static void test_package_escapes(void **state)
{
	(void)state;
	char pkg[4096], p[4200], q[4200];
	if (!copy_package("converted/upsample_x4__mlp_fp16.mlpackage", "dotdot.mlpackage", pkg,
			  sizeof pkg))
		skip();
	/* the copy itself loads */
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(pkg, &m, d), AL_OK);
	assert_true(al_model_get(m, 0)->weights.n_blobs == 1);
	al_model_free(m);
	al_diags_free(d);

	/* a "../" path */
	write_manifest(pkg, "com.apple.CoreML/../../dotdot.mlpackage/Data/com.apple.CoreML/model.mlmodel",
		       "com.apple.CoreML/weights", "A");
	expect_one_error(pkg, AL_E_FORMAT, "Manifest path escapes the package");
	/* absolute, empty component */
	write_manifest(pkg, "/etc/passwd", "com.apple.CoreML/weights", "A");
	expect_one_error(pkg, AL_E_FORMAT, "is absolute");
	write_manifest(pkg, "com.apple.CoreML//model.mlmodel", "com.apple.CoreML/weights", "A");
	expect_one_error(pkg, AL_E_FORMAT, "empty component");
	/* root id naming nothing; invalid JSON; bad version */
	write_manifest(pkg, "com.apple.CoreML/model.mlmodel", "com.apple.CoreML/weights", "Z");
	expect_one_error(pkg, AL_E_FORMAT, "names no item");
	snprintf(p, sizeof p, "%s/Manifest.json", pkg);
	remove(p);
	write_file(p, "{\"fileFormatVersion\": \"1.0.0\", \"itemInfoEntries\": {");
	expect_one_error(pkg, AL_E_FORMAT, "invalid JSON");
	remove(p);
	write_file(p, "{\"fileFormatVersion\": \"1.0\", \"itemInfoEntries\": {}}");
	expect_one_error(pkg, AL_E_FORMAT, "major.minor.patch");
	remove(p);
	write_file(p, "{\"fileFormatVersion\": \"1.0.0\", \"itemInfoEntries\": {\"A\": {\"path\": "
		      "\"x\"}}, \"rootModelIdentifier\": \"A\"}");
	expect_one_error(pkg, AL_E_FORMAT, "has no string 'name'");

	/* a symlink to a model outside the package */
	if (!copy_package("converted/upsample_x4__mlp_fp16.mlpackage", "symlink.mlpackage", pkg,
			  sizeof pkg))
		skip();
	snprintf(p, sizeof p, "%s/Data/com.apple.CoreML/model.mlmodel", pkg);
	snprintf(q, sizeof q, "%s/outside.mlmodel", tmp_root);
	copy_file(p, q);
	assert_int_equal(remove(p), 0);
	assert_int_equal(symlink(q, p), 0);
	expect_one_error(pkg, AL_E_FORMAT, "Manifest path escapes the package");
	/* and a weights directory that is a symlink outside */
	assert_int_equal(remove(p), 0);
	copy_file(q, p);
	snprintf(p, sizeof p, "%s/Data/com.apple.CoreML/weights/weight.bin", pkg);
	snprintf(q, sizeof q, "%s/outside.bin", tmp_root);
	copy_file(p, q);
	snprintf(p, sizeof p, "%s/Data/com.apple.CoreML/weights", pkg);
	rm_tree(p);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/Data/com.apple.CoreML/weights/weight.bin", pkg);
	assert_int_equal(symlink(q, p), 0);
	expect_one_error(pkg, AL_E_FORMAT, "Manifest path escapes the package");
}

static void test_package_weights(void **state)
{
	(void)state;
	char pkg[4096], p[4200];
	if (!copy_package("converted/dilated_conv__mlp_ios17_fp16.mlpackage", "trunc.mlpackage", pkg,
			  sizeof pkg))
		skip();
	snprintf(p, sizeof p, "%s/Data/com.apple.CoreML/weights/weight.bin", pkg);
	/* find the last blob's metadata, then cut the file inside its data */
	FILE *f = fopen(p, "rb");
	assert_non_null(f);
	uint8_t buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	uint64_t off = 64, last = 0;
	while (off + 64 <= n) {
		uint64_t size = 0, data = 0;
		for (int i = 7; i >= 0; i--) {
			size = size << 8 | buf[off + 8 + (size_t)i];
			data = data << 8 | buf[off + 16 + (size_t)i];
		}
		last = off;
		off = (data + size + 63) / 64 * 64;
	}
	assert_true(last > 64);
	assert_int_equal(truncate(p, (off_t)(last + 64 + 8)), 0);
	expect_one_error(pkg, AL_E_FORMAT, "runs past the end");
	/* a header with the wrong version */
	assert_int_equal(truncate(p, 64), 0);
	f = fopen(p, "r+b");
	assert_non_null(f);
	fseek(f, 4, SEEK_SET);
	fputc(3, f);
	fclose(f);
	expect_one_error(pkg, AL_E_FORMAT, "storage version 3");
	/* weight.bin gone while ops refer to it */
	assert_int_equal(remove(p), 0);
	expect_one_error(pkg, AL_E_FORMAT, "which is absent");
}

static int setup_tmp(void **state)
{
	(void)state;
	snprintf(tmp_root, sizeof tmp_root, "/tmp/anelint_test_mil_XXXXXX");
	return mkdtemp(tmp_root) ? 0 : -1;
}

static int teardown_tmp(void **state)
{
	(void)state;
	rm_tree(tmp_root);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_unknown_and_types),
		cmocka_unit_test(test_blobs),
		cmocka_unit_test(test_field_paths),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_repeated_names),
		cmocka_unit_test(test_nomem),
		cmocka_unit_test(test_corpus_pool),
		cmocka_unit_test(test_corpus_dilated),
		cmocka_unit_test(test_corpus_cumsum_no_weights),
		cmocka_unit_test(test_corpus_gru),
		cmocka_unit_test(test_corpus_resnet_weights),
		cmocka_unit_test(test_corpus_lists),
		cmocka_unit_test(test_package_escapes),
		cmocka_unit_test(test_package_weights),
	};
	return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
