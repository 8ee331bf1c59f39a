/* SPDX-License-Identifier: MIT */
/* test_split.c: the split API (src/split.c): boundary tensors and their declared
 * types in both rank conventions, classifier heads, the pipeline, refusals,
 * all-or-nothing writing, and every allocation failure handled. */
#include "testutil.h"

#include "anelint.h"
#include "analysis.h"
#include "pbwrite.h"

#include <unistd.h>

/* The fixtures are tiny: the work floor (ANE071 per model, ANE072 per ANE
 * segment) would put all of them on the CPU, with no unit change to cut at and
 * no part without a fallback. These tests are about the cut, so they check and
 * plan with the floor switched off, as a rules file can. */
static const char no_floor_text[] = "id: ANE071\nfamilies: none\nprovenance: tiny fixtures\n\n"
				    "id: ANE072\nfamilies: none\nprovenance: tiny fixtures\n";
static al_user_rules *no_floor_rules;

static const struct al_check_opts *no_floor(void)
{
	static struct al_check_opts o;
	if (!no_floor_rules)
		assert_int_equal(al_user_rules_parse(no_floor_text, sizeof no_floor_text - 1, "no-floor",
						     &no_floor_rules, NULL), AL_OK);
	o.user_rules = no_floor_rules;
	return &o;
}

static const struct al_plan_opts no_floor_plan = {.no_work_floor = true};

static int free_no_floor(void **state)
{
	(void)state;
	al_user_rules_free(no_floor_rules);
	no_floor_rules = NULL;
	return 0;
}

static al_model *open_fixture(const char *name, al_diags *d)
{
	al_model *m = NULL;
	assert_int_equal(al_model_open(fixture(name), &m, d), AL_OK);
	return m;
}

static const struct al_split_tensor *find(const struct al_split_tensor *v, uint32_t n, const char *name)
{
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return &v[i];
	return NULL;
}

static al_splitter *plan_at(al_model *m, const char *layer, al_diags *d, enum al_status want)
{
	const char *at[1] = {layer};
	struct al_split_opts o = {.at = at, .n_at = 1};
	al_splitter *s = NULL;
	assert_int_equal(al_split_plan(m, &o, &s, d), want);
	if (want != AL_OK)
		assert_null(s);
	return s;
}

/* Run m on inputs; the outputs (caller frees). */
static struct al_named_tensor *run(al_model *m, const struct al_named_tensor *in, size_t n_in, size_t *n_out)
{
	al_diags *d = al_diags_new();
	struct al_named_tensor *out = NULL;
	struct al_run_opts o = {.precision = AL_PREC_FP32};
	assert_int_equal(al_model_run(m, in, n_in, &o, &out, n_out, d), AL_OK);
	al_diags_free(d);
	return out;
}

/* RANK5: the custom layer model cut after its convolution. */
static void test_rank5_custom(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = open_fixture("converted/builder__custom_layer.mlmodel", d);
	al_splitter *s = plan_at(m, "conv", d, AL_OK);
	assert_int_equal(al_split_count(s), 2);
	const struct al_split_part *p1 = al_split_get(s, 0), *p2 = al_split_get(s, 1);
	assert_null(al_split_get(s, 2));
	assert_int_equal(p1->first, 0);
	assert_int_equal(p1->last, 0);
	assert_int_equal(p2->first, 1);
	assert_int_equal(p2->last, 2);
	assert_string_equal(p1->type, "neuralNetwork");
	assert_int_equal(p1->n_inputs, 1);
	assert_int_equal(p1->inputs[0].role, AL_SPLIT_MODEL_INPUT);
	assert_int_equal(p1->n_outputs, 1);
	const struct al_split_tensor *b = &p1->outputs[0];
	assert_int_equal(b->role, AL_SPLIT_BOUNDARY);
	/* the blob is [1,1,8,16,16]; RANK5 inputs are declared [C,H,W] */
	assert_int_equal(b->inferred.rank, 5);
	assert_int_equal(b->rank, 3);
	assert_int_equal(b->dims[0], 8);
	assert_int_equal(b->dims[1], 16);
	assert_int_equal(b->dims[2], 16);
	assert_int_equal(b->dtype, AL_DT_FP32);
	const struct al_split_tensor *in2 = find(p2->inputs, p2->n_inputs, b->name);
	assert_non_null(in2);
	assert_int_equal(in2->from_part, 0);
	assert_int_equal(in2->rank, 3);

	/* part 1 re-loads as a model with no fallback; its output as declared */
	uint8_t *bytes;
	size_t n;
	assert_int_equal(al_split_bytes(s, 0, &bytes, &n, d), AL_OK);
	al_model *m1 = NULL;
	assert_int_equal(al_model_open_buffer(bytes, n, NULL, 0, "part1", &m1, d), AL_OK);
	assert_int_equal(al_model_check(m1, no_floor(), d), AL_OK);
	assert_false(al_model_fails(m1, AL_FAIL_ANY));
	const struct al_submodel *s1 = al_model_get(m1, 0);
	assert_int_equal(s1->n_outputs, 1);
	assert_int_equal(s1->outputs[0].rank, 3);
	assert_int_equal(s1->outputs[0].shape[0], 8);
	assert_int_equal(s1->outputs[0].dtype, AL_DT_FP32);
	assert_int_equal(s1->array_mapping, 0);
	al_model_free(m1);
	free(bytes);
	/* out of range */
	assert_int_equal(al_split_bytes(s, 3, &bytes, &n, d), AL_E_INVALID_ARG);
	al_split_free(s);

	/* after the custom layer: its output has no static shape */
	size_t before = al_diags_errors(d);
	plan_at(m, "custom_swish", d, AL_E_UNSUPPORTED);
	assert_int_equal(al_diags_errors(d), before + 1);
	const struct al_diag *e = al_diags_get(d, al_diags_count(d) - 1);
	assert_non_null(strstr(e->msg, "not known statically"));
	assert_string_equal(e->node, "custom_swish");
	assert_true(e->offset != UINT64_MAX);
	al_model_free(m);
	al_diags_free(d);
}

/* EXACT mapping, a model input read by the second part, the pipeline bit-identical. */
static void test_exact_pipeline(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = open_fixture("converted/transformer_encoder__nn_ios13.mlmodel", d);
	al_splitter *s = plan_at(m, "attn_output.1", d, AL_OK);
	const struct al_split_part *p2 = al_split_get(s, 1);
	const struct al_split_tensor *b = find(p2->inputs, p2->n_inputs, "attn_output.1");
	assert_non_null(b);
	assert_int_equal(b->rank, 3);
	assert_int_equal(b->dims[0], 4);
	assert_int_equal(b->dims[1], 16);
	assert_int_equal(b->dims[2], 16);
	const struct al_split_tensor *x = find(p2->inputs, p2->n_inputs, "x");
	assert_non_null(x);
	assert_int_equal(x->role, AL_SPLIT_MODEL_INPUT);
	assert_int_equal(x->from_part, -1);

	uint8_t *bytes;
	size_t n;
	assert_int_equal(al_split_bytes(s, al_split_count(s), &bytes, &n, d), AL_OK);
	al_model *pm = NULL;
	assert_int_equal(al_model_open_buffer(bytes, n, NULL, 0, "pipeline", &pm, d), AL_OK);
	assert_int_equal(al_model_count(pm), 3);
	assert_string_equal(al_model_get(pm, 0)->type, "pipeline");
	assert_string_equal(al_model_get(pm, 1)->path, "pipeline:pipeline/part1");

	const struct al_submodel *s0 = al_model_get(m, 0);
	al_tensor *t = NULL;
	assert_int_equal(al_random_input(&s0->inputs[0], 7, 0, &t, d), AL_OK);
	struct al_named_tensor in = {s0->inputs[0].name, t};
	size_t na, nb;
	struct al_named_tensor *a = run(m, &in, 1, &na), *c = run(pm, &in, 1, &nb);
	assert_int_equal(na, 1);
	assert_int_equal(nb, 1);
	assert_string_equal(a[0].name, c[0].name);
	assert_int_equal(al_tensor_count(a[0].t), al_tensor_count(c[0].t));
	assert_memory_equal(al_tensor_data(a[0].t), al_tensor_data(c[0].t),
			    al_tensor_count(a[0].t) * sizeof(float));
	al_outputs_free(a, na);
	al_outputs_free(c, nb);
	al_tensor_free(t);
	al_model_free(pm);
	free(bytes);
	al_split_free(s);
	al_model_free(m);
	al_diags_free(d);
}

/* Classifier: the head goes to the last part, preprocessing to the image's part,
 * a model output read later keeps its declared type. */
static void test_classifier(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = open_fixture("crafted/split_classifier_image.mlmodel", d);
	al_splitter *s = plan_at(m, "pool", d, AL_OK);
	const struct al_split_part *p1 = al_split_get(s, 0), *p2 = al_split_get(s, 1);
	assert_string_equal(p1->type, "neuralNetwork");
	assert_string_equal(p2->type, "neuralNetworkClassifier");
	assert_int_equal(p1->n_outputs, 1);
	assert_string_equal(p1->outputs[0].name, "feat");
	assert_int_equal(p1->outputs[0].role, AL_SPLIT_MODEL_OUTPUT);
	assert_non_null(find(p2->outputs, p2->n_outputs, "probs"));
	assert_non_null(find(p2->outputs, p2->n_outputs, "classLabel"));
	assert_non_null(find(p2->inputs, p2->n_inputs, "bias"));
	assert_null(find(p1->inputs, p1->n_inputs, "bias"));

	uint8_t *b1, *b2;
	size_t n1, n2;
	assert_int_equal(al_split_bytes(s, 0, &b1, &n1, d), AL_OK);
	assert_int_equal(al_split_bytes(s, 1, &b2, &n2, d), AL_OK);
	al_model *m1 = NULL, *m2 = NULL;
	assert_int_equal(al_model_open_buffer(b1, n1, NULL, 0, "p1", &m1, d), AL_OK);
	assert_int_equal(al_model_open_buffer(b2, n2, NULL, 0, "p2", &m2, d), AL_OK);
	/* preprocessing (network field 2) only in the part reading the image */
	const struct al_submodel *s1 = al_model_get(m1, 0), *s2 = al_model_get(m2, 0);
	al_span r1 = {b1, n1}, r2 = {b2, n2}, net1, net2;
	assert_true(pb_get_bytes(r1, 500, &net1));
	assert_true(pb_get_bytes(r2, 403, &net2));
	assert_int_equal(pb_count(net1, 2), 1);
	assert_int_equal(pb_count(net2, 2), 0);
	assert_int_equal(pb_count(net2, 100), 1);
	assert_int_equal(pb_count(net1, 100), 0);
	/* the constant 'k' read by part 2 is copied into it (4 layers: kconst + its 3),
	 * not passed from part 1 */
	assert_null(find(p2->inputs, p2->n_inputs, "k"));
	assert_int_equal(pb_count(net2, 1), 4);
	assert_int_equal(pb_count(net1, 1), p1->last - p1->first + 1);
	assert_string_equal(s2->graphs[0]->nodes[0].name, "kconst");
	assert_string_equal(s2->predicted_feature, "classLabel");
	assert_null(s1->predicted_feature);
	al_model_free(m1);
	al_model_free(m2);
	free(b1);
	free(b2);

	/* the pipeline: pipelineClassifier, and the same label and probabilities */
	uint8_t *bp;
	size_t np;
	assert_int_equal(al_split_bytes(s, 2, &bp, &np, d), AL_OK);
	al_model *pm = NULL;
	assert_int_equal(al_model_open_buffer(bp, np, NULL, 0, "pipe", &pm, d), AL_OK);
	assert_string_equal(al_model_get(pm, 0)->type, "pipelineClassifier");
	const struct al_submodel *s0 = al_model_get(m, 0);
	struct al_named_tensor in[2];
	for (int i = 0; i < 2; i++) {
		in[i].name = s0->inputs[i].name;
		assert_int_equal(al_random_input(&s0->inputs[i], 3, 0, &in[i].t, d), AL_OK);
	}
	size_t na, nb;
	struct al_named_tensor *a = run(m, in, 2, &na), *c = run(pm, in, 2, &nb);
	assert_int_equal(na, 3);
	assert_int_equal(nb, 3);
	for (size_t i = 0; i < na; i++) {
		assert_string_equal(a[i].name, c[i].name);
		size_t k = al_tensor_count(a[i].t);
		assert_int_equal(k, al_tensor_count(c[i].t));
		if (al_tensor_data(a[i].t))
			assert_memory_equal(al_tensor_data(a[i].t), al_tensor_data(c[i].t), k * sizeof(float));
		else
			assert_string_equal(al_tensor_string(a[i].t, 0), al_tensor_string(c[i].t, 0));
	}
	al_outputs_free(a, na);
	al_outputs_free(c, nb);
	for (int i = 0; i < 2; i++)
		al_tensor_free(in[i].t);
	al_model_free(pm);
	free(bp);
	al_split_free(s);
	al_model_free(m);
	al_diags_free(d);
}

/* ML Program: the package's constants copied into the part reading them, an fp16
 * boundary as declared by the program, the weights carried, the pipeline exact. */
static void test_mil(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = open_fixture("converted/transformer_encoder__mlp_ios17_fp16.mlpackage", d);
	al_splitter *s = plan_at(m, "attn_output_1_cast_fp16", d, AL_OK);
	assert_int_equal(al_split_count(s), 2);
	const struct al_split_part *p2 = al_split_get(s, 1);
	assert_string_equal(p2->type, "mlProgram");
	const struct al_split_tensor *b = find(p2->inputs, p2->n_inputs, "attn_output_1_cast_fp16");
	assert_non_null(b);
	assert_int_equal(b->dtype, AL_DT_FP16);
	assert_int_equal(b->rank, 3);
	assert_int_equal(b->dims[0], 4);
	assert_int_equal(p2->spec_version, 8);
	const void *w;
	size_t nw;
	al_split_weights(s, &w, &nw);
	assert_non_null(w);
	assert_true(nw > 64);

	uint8_t *bytes;
	size_t n;
	assert_int_equal(al_split_bytes(s, 1, &bytes, &n, d), AL_OK);
	al_model *m2 = NULL;
	assert_int_equal(al_model_open_buffer(bytes, n, w, nw, "part2", &m2, d), AL_OK);
	assert_int_equal(al_model_check(m2, NULL, d), AL_OK);
	/* every op part 2 reads is its own or a const it carries: no other inputs */
	const struct al_submodel *s2 = al_model_get(m2, 0);
	assert_int_equal(s2->n_inputs, 2);
	uint32_t consts = 0;
	for (uint32_t k = 0; k < s2->graphs[0]->n_nodes; k++)
		consts += strcmp(s2->graphs[0]->nodes[k].type, "const") == 0;
	assert_true(consts > 0);
	al_model_free(m2);
	free(bytes);

	assert_int_equal(al_split_bytes(s, 2, &bytes, &n, d), AL_OK);
	al_model *pm = NULL;
	assert_int_equal(al_model_open_buffer(bytes, n, w, nw, "pipe", &pm, d), AL_OK);
	const struct al_submodel *s0 = al_model_get(m, 0);
	al_tensor *t = NULL;
	assert_int_equal(al_random_input(&s0->inputs[0], 5, 0, &t, d), AL_OK);
	struct al_named_tensor in = {s0->inputs[0].name, t};
	size_t na, nb;
	struct al_named_tensor *a = run(m, &in, 1, &na), *c = run(pm, &in, 1, &nb);
	assert_int_equal(na, nb);
	assert_memory_equal(al_tensor_data(a[0].t), al_tensor_data(c[0].t),
			    al_tensor_count(a[0].t) * sizeof(float));
	al_outputs_free(a, na);
	al_outputs_free(c, nb);
	al_model_free(pm);
	free(bytes);
	al_split_free(s);

	/* after linear_0 the second part reads constants of the first (the attention's
	 * shapes and scales): they are copied into it, and the pipeline still runs exact */
	s = plan_at(m, "linear_0_cast_fp16", d, AL_OK);
	assert_int_equal(al_split_bytes(s, 2, &bytes, &n, d), AL_OK);
	assert_int_equal(al_model_open_buffer(bytes, n, w, nw, "pipe", &pm, d), AL_OK);
	a = run(m, &in, 1, &na);
	c = run(pm, &in, 1, &nb);
	assert_int_equal(na, nb);
	assert_memory_equal(al_tensor_data(a[0].t), al_tensor_data(c[0].t),
			    al_tensor_count(a[0].t) * sizeof(float));
	const struct al_submodel *st2 = al_model_get(pm, 2);
	const struct al_split_part *q2 = al_split_get(s, 1);
	assert_true(st2->graphs[0]->n_nodes > q2->last - q2->first + 1); /* the copies */
	al_outputs_free(a, na);
	al_outputs_free(c, nb);
	al_tensor_free(t);
	al_model_free(pm);
	free(bytes);
	al_split_free(s);

	/* a scalar value cannot be a model input */
	al_model_free(m);
	m = open_fixture("crafted/fix_mil_fill.mlpackage", d);
	plan_at(m, "vmax", d, AL_E_UNSUPPORTED);
	al_model_free(m);
	al_diags_free(d);
}

static void test_refusals(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = open_fixture("converted/gru__nn_ios14.mlmodel", d);
	plan_at(m, "no_such_layer", d, AL_E_INVALID_ARG);
	plan_at(m, "gather_2", d, AL_E_UNSUPPORTED); /* inside the loop body */
	assert_non_null(strstr(al_diags_get(d, al_diags_count(d) - 1)->msg, "inside the loop layer"));
	plan_at(m, "linear_12", d, AL_E_INVALID_ARG); /* the last layer */
	plan_at(m, "while_loop_0_1_input_copy", d, AL_E_UNSUPPORTED); /* part 1 reads nothing */
	struct al_split_opts none = {0};
	al_splitter *s = NULL;
	assert_int_equal(al_split_plan(m, &none, &s, d), AL_E_INVALID_ARG);
	assert_int_equal(al_split_plan(NULL, &none, &s, d), AL_E_INVALID_ARG);
	al_model_free(m);
	/* not a NeuralNetwork or ML Program: a pipeline */
	m = open_fixture("crafted/enum_pipeline.mlmodel", d);
	plan_at(m, "y", d, AL_E_UNSUPPORTED);
	assert_non_null(strstr(al_diags_get(d, al_diags_count(d) - 1)->msg, "not pipeline models"));
	al_model_free(m);
	al_diags_free(d);
}

/* --at segments: cut where the predicted unit changes; constants go with what follows. */
static void test_segments(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = open_fixture("converted/gru__nn_ios14.mlmodel", d);
	struct al_split_opts o = {.segments = true, .check = no_floor(), .plan = &no_floor_plan};
	al_splitter *s = NULL;
	assert_int_equal(al_split_plan(m, &o, &s, d), AL_OK);
	assert_int_equal(al_split_count(s), 2);
	assert_string_equal(al_split_get(s, 0)->last_layer, "while_loop_0");
	/* the boundary before the loop is skipped (its part would read no input) */
	bool warned = false;
	for (size_t i = 0; i < al_diags_count(d); i++)
		warned |= al_diags_get(d, i)->severity == AL_SEV_WARNING &&
			  strstr(al_diags_get(d, i)->msg, "reads no input") != NULL;
	assert_true(warned);
	al_split_free(s);
	al_model_free(m);
	al_diags_free(d);
}

static bool exists(const char *p)
{
	return access(p, F_OK) == 0;
}

static void test_write(void **state)
{
	(void)state;
	char dir[] = "/tmp/anelint_split_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char a[256], b[256], p[256];
	snprintf(a, sizeof a, "%s/a.mlmodel", dir);
	snprintf(b, sizeof b, "%s/b.mlmodel", dir);
	snprintf(p, sizeof p, "%s/p.mlmodel", dir);
	al_diags *d = al_diags_new();
	al_model *m = open_fixture("converted/builder__custom_layer.mlmodel", d);
	al_splitter *s = plan_at(m, "conv", d, AL_OK);
	/* the input as an output, or one path twice: refused, nothing written */
	const char *bad1[2] = {a, al_model_path(m)};
	assert_int_equal(al_split_write(s, bad1, 2, p, d), AL_E_INVALID_ARG);
	const char *bad2[2] = {a, a};
	assert_int_equal(al_split_write(s, bad2, 2, NULL, d), AL_E_INVALID_ARG);
	const char *one[1] = {a};
	assert_int_equal(al_split_write(s, one, 1, NULL, d), AL_E_INVALID_ARG);
	assert_false(exists(a));
	assert_false(exists(p));
	/* a directory that does not exist: nothing written anywhere */
	char nodir[300];
	snprintf(nodir, sizeof nodir, "%s/missing/b.mlmodel", dir);
	const char *bad3[2] = {a, nodir};
	assert_int_equal(al_split_write(s, bad3, 2, p, d), AL_E_IO);
	assert_false(exists(a));
	assert_false(exists(p));
	/* all three */
	const char *good[2] = {a, b};
	assert_int_equal(al_split_write(s, good, 2, p, d), AL_OK);
	assert_true(exists(a) && exists(b) && exists(p));
	al_model *pm = NULL;
	assert_int_equal(al_model_open(p, &pm, d), AL_OK);
	assert_int_equal(al_model_count(pm), 3);
	al_model_free(pm);
	al_split_free(s);
	al_model_free(m);
	al_diags_free(d);
	rm_tree(dir);
}

/* Every allocation of plan and bytes failing in turn: an error, never a crash. */
static void test_alloc_failures(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = open_fixture("crafted/split_classifier_image.mlmodel", d);
	assert_int_equal(al_model_infer_shapes(m, d), AL_OK);
	const char *at[1] = {"act"};
	struct al_split_opts o = {.at = at, .n_at = 1};
	bool done = false;
	unsigned long tried = 0;
	for (unsigned long k = 1; k < 2000 && !done; k++) {
		al_diags *dd = al_diags_new();
		al_splitter *s = NULL;
		uint8_t *bytes = NULL;
		size_t n;
		ali_alloc_fail_after(k);
		enum al_status st = al_split_plan(m, &o, &s, dd);
		if (st == AL_OK)
			st = al_split_bytes(s, 2, &bytes, &n, dd);
		ali_alloc_fail_after(0);
		assert_true(st == AL_OK || st == AL_E_NOMEM);
		done = st == AL_OK;
		tried = k;
		free(bytes);
		al_split_free(s);
		al_diags_free(dd);
	}
	assert_true(done);
	assert_true(tried > 20); /* the failures did reach into the split */
	al_model_free(m);
	/* the same for an ML Program (constants copied, package weights) */
	m = open_fixture("converted/gru__mlp_fp16.mlpackage", d);
	assert_int_equal(al_model_infer_shapes(m, d), AL_OK);
	struct al_split_opts so = {.segments = true, .check = no_floor(), .plan = &no_floor_plan};
	assert_int_equal(al_model_check(m, no_floor(), d), AL_OK);
	done = false;
	for (unsigned long k = 1; k < 20000 && !done; k++) {
		al_diags *dd = al_diags_new();
		al_splitter *s = NULL;
		uint8_t *bytes = NULL;
		size_t n;
		ali_alloc_fail_after(k);
		enum al_status st = al_split_plan(m, &so, &s, dd);
		if (st == AL_OK)
			st = al_split_bytes(s, al_split_count(s), &bytes, &n, dd);
		ali_alloc_fail_after(0);
		assert_true(st == AL_OK || st == AL_E_NOMEM);
		done = st == AL_OK;
		tried = k;
		free(bytes);
		al_split_free(s);
		al_diags_free(dd);
	}
	assert_true(done);
	assert_true(tried > 20); /* the failures did reach into the split */
	al_model_free(m);
	al_diags_free(d);
}

/* FeatureDescription{name, multiArrayType{shape [4], FLOAT32}} as field num of desc. */
static void put_array4(struct buf *desc, uint32_t num, const char *name)
{
	struct buf f = {0}, ft = {0}, at = {0};
	int64_t shape[1] = {4};
	put_packed(&at, 1, shape, 1);
	put_uint(&at, 2, 65568);
	put_msg(&ft, 5, &at);
	put_str(&f, 1, name);
	put_msg(&f, 3, &ft);
	put_msg(desc, num, &f);
}

/* Output names a model declares twice (y, t, y, t, y, t; the loader refuses such
 * a file, tests/regress/mlmodel/split-duplicate-outputs-interleaved.mlmodel):
 * were they to reach the split, each part lists each name once, and building
 * every part and the pipeline stays inside its arrays (this test under ASan was
 * a heap-buffer-overflow in put_feature). The names are made equal in the
 * loaded IR, as a loader without the check would leave them. */
static void test_duplicate_outputs(void **state)
{
	(void)state;
	static const char *const outs[6] = {"y", "t", "o2", "o3", "o4", "o5"};
	struct buf desc = {0}, net = {0}, act = {0}, model = {0};
	put_array4(&desc, 1, "x");
	for (int i = 0; i < 6; i++)
		put_array4(&desc, 10, outs[i]);
	put_bytes(&act, 10, "", 0); /* ActivationParams.ReLU */
	layer(&net, "a", "x", "t", 130, &act);
	put_bytes(&act, 10, "", 0);
	layer(&net, "b", "t", "y", 130, &act);
	put_uint(&net, 5, 1); /* EXACT_ARRAY_MAPPING */
	put_uint(&model, 1, 4);
	put_msg(&model, 2, &desc);
	put_msg(&model, 500, &net);
	char dir[] = "/tmp/anelint_split_XXXXXX", path[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/dup.mlmodel", dir);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(model.p, 1, model.n, f), model.n);
	assert_int_equal(fclose(f), 0);
	free(model.p);

	al_diags *d = al_diags_new();
	al_model *m = NULL;
	assert_int_equal(al_model_open(path, &m, d), AL_OK);
	struct al_submodel *sub = (struct al_submodel *)al_model_get(m, 0);
	assert_int_equal(sub->n_outputs, 6);
	for (uint32_t i = 2; i < 6; i++) /* y, t, y, t, y, t */
		sub->outputs[i].name = sub->outputs[i % 2].name;
	al_splitter *s = plan_at(m, "a", d, AL_OK);
	assert_int_equal(al_split_count(s), 2);
	const struct al_split_part *p1 = al_split_get(s, 0), *p2 = al_split_get(s, 1);
	for (size_t i = 0; i <= al_split_count(s); i++) {
		uint8_t *bytes = NULL;
		size_t n = 0;
		assert_int_equal(al_split_bytes(s, i, &bytes, &n, d), AL_OK);
		if (i < al_split_count(s)) { /* each part loads, one output of its own */
			al_model *pm = NULL;
			assert_int_equal(al_model_open_buffer(bytes, n, NULL, 0, "part", &pm, d), AL_OK);
			assert_int_equal(al_model_get(pm, 0)->n_outputs, 1);
			al_model_free(pm);
		}
		free(bytes);
	}
	assert_int_equal(p1->n_outputs, 1);
	assert_string_equal(p1->outputs[0].name, "t");
	assert_int_equal(p1->outputs[0].role, AL_SPLIT_MODEL_OUTPUT);
	assert_int_equal(p2->n_inputs, 1);
	assert_string_equal(p2->inputs[0].name, "t");
	assert_int_equal(p2->n_outputs, 1);
	assert_string_equal(p2->outputs[0].name, "y");
	al_split_free(s);
	al_model_free(m);
	al_diags_free(d);
	rm_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rank5_custom),   cmocka_unit_test(test_exact_pipeline),
		cmocka_unit_test(test_classifier),     cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_segments),       cmocka_unit_test(test_write),
		cmocka_unit_test(test_alloc_failures), cmocka_unit_test(test_mil),
		cmocka_unit_test(test_duplicate_outputs),
	};
	return cmocka_run_group_tests(tests, NULL, free_no_floor);
}
