/* SPDX-License-Identifier: MIT */
/* test_plan.c: the partition simulator (src/plan.c, docs/partition.md) on small
 * models with known supported / unsupported sequences under each policy (custom
 * layers, ANE/CPU ping-pong, cumsum in an ML Program, parallel branches, a loop,
 * model-level rules, a pipeline); the greedy fixes; the roofline against a test
 * target; options and argument errors; out of memory at every allocation; and,
 * with ../shared/corpus, invariants of every plan of every corpus model. */
#include "testutil.h"

#include "anelint.h"
#include "analysis.h"

#include <dirent.h>
#include <math.h>

#define CV(x) "converted/" x
#define CR(x) "crafted/" x

/* ================================================================ helpers */

/* The policy fixtures are tiny: the work floor (ANE071 per model, ANE072 per
 * segment) would put all of them on the CPU, so they are checked with it
 * switched off, as a rules file can; test_work_floor tests the floor. */
static const char no_floor[] = "id: ANE071\nfamilies: none\nprovenance: policy tests\n\n"
			       "id: ANE072\nfamilies: none\nprovenance: policy tests\n";

static al_model *open_checked_os(const char *path, const struct al_release *os);

static al_model *open_checked(const char *path)
{
	return open_checked_os(path, NULL);
}

static al_model *open_checked_os(const char *path, const struct al_release *os)
{
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	al_user_rules *u = NULL;
	enum al_status st = al_user_rules_parse(no_floor, sizeof no_floor - 1, "no_floor", &u, d);
	if (st == AL_OK)
		st = al_model_open(path, &m, d);
	if (st == AL_OK)
		st = al_model_check(m, &(struct al_check_opts){.user_rules = u, .os = os}, d);
	al_user_rules_free(u);
	if (st != AL_OK) {
		print_error("%s: %s\n", path, al_status_str(st));
		al_model_free(m);
		m = NULL;
	}
	al_diags_free(d);
	return m;
}

/* Drop the model-level findings, so that the partition policy decides and not a
 * whole-model rule (the tiny-model rule fires on the small converted models). */
static void without_model_rules(al_model *m)
{
	for (size_t k = 0; k < m->n_subs; k++)
		m->subs[k]->n_findings = 0;
}

/* Every plan must hold these, whatever the model and policy. */
static void check_invariants(const struct al_plan *p)
{
	uint32_t in_segments = 0;
	for (uint32_t s = 0; s < p->n_segments; s++) {
		const struct al_segment *g = &p->segments[s];
		assert_true(g->n_nodes > 0);
		assert_true(g->first <= g->last);
		assert_true(g->unit == AL_UNIT_ANE || g->unit == AL_UNIT_GPU || g->unit == AL_UNIT_CPU);
		in_segments += g->n_nodes;
	}
	assert_int_equal(in_segments, p->n_nodes);
	uint32_t ane = 0;
	for (uint32_t k = 0; k < p->n_nodes; k++) {
		assert_true(p->segment[k] < p->n_segments);
		assert_int_equal(p->segments[p->segment[k]].unit, p->unit[k]);
		assert_true(p->index[k] >= p->segments[p->segment[k]].first);
		assert_true(p->index[k] <= p->segments[p->segment[k]].last);
		assert_true(p->place[k] < AL_PLACE_COUNT);
		if (k)
			assert_true(p->index[k] > p->index[k - 1]); /* model order */
		ane += p->unit[k] == AL_UNIT_ANE;
	}
	assert_int_equal(ane, p->ane_nodes);
	double sw = 0;
	for (uint32_t k = 0; k < p->switches; k++) {
		const struct al_switch *x = &p->switch_list[k];
		assert_true(x->from < p->n_segments && x->to < p->n_segments);
		assert_true(p->segments[x->from].unit != p->segments[x->to].unit);
		sw += x->us;
	}
	assert_true(fabs(sw - p->switch_us) < 1e-6);
	assert_true(fabs(p->est_us - (p->compute_us + p->switch_us)) < 1e-6);
	assert_true(p->ane_flops <= p->total_flops + 1e-6);
	for (uint32_t k = 0; k < p->n_fixes; k++) {
		const struct al_fix *f = &p->fixes[k];
		assert_true(f->gain_us > 0 || f->segments_after < f->segments_before);
		assert_true(f->kind == AL_FIX_MODEL ? f->node == NULL && f->n_nodes == 0
						    : f->node == f->nodes[0] && f->n_nodes > 0);
		assert_non_null(f->rule);
	}
}

/* Plans are made for a target without roofline figures, so that estimates are
 * the switch costs alone and these tests do not depend on targets.def; the
 * roofline has its own test (test_roofline) and the shipped targets theirs
 * (test_default_target). */
static const struct al_target untimed = {.id = "untimed", .name = "no roofline figures"};

static const struct al_plan *plan_of(al_model *m, size_t sub, enum al_policy pol)
{
	/* the policy alone: these fixtures are far below the work floor (ANE072) */
	struct al_plan_opts o = {.policy = pol, .target = &untimed, .no_work_floor = true};
	const struct al_plan *p = NULL;
	al_diags *d = al_diags_new();
	assert_int_equal(al_model_plan(m, sub, &o, &p, d), AL_OK);
	assert_int_equal(al_diags_errors(d), 0);
	al_diags_free(d);
	assert_non_null(p);
	check_invariants(p);
	return p;
}

/* Position of the node named `name` in the plan, or fail. */
static uint32_t pos(const struct al_plan *p, const char *name)
{
	for (uint32_t k = 0; k < p->n_nodes; k++)
		if (strcmp(p->nodes[k]->name, name) == 0)
			return k;
	fail_msg("no node '%s' in the plan", name);
	return 0;
}

static enum al_unit unit_of(const struct al_plan *p, const char *name)
{
	return p->unit[pos(p, name)];
}

/* Runs of one unit in list order: what a partition that ignored the dataflow would count. */
static uint32_t list_runs(const struct al_plan *p)
{
	uint32_t runs = 0;
	for (uint32_t k = 0; k < p->n_nodes; k++)
		runs += k == 0 || p->unit[k] != p->unit[k - 1];
	return runs;
}

/* "ACA..." for the plan's units in model order. */
static const char *letters(const struct al_plan *p)
{
	static char buf[256];
	uint32_t k = 0;
	for (; k < p->n_nodes && k + 1 < sizeof buf; k++)
		buf[k] = p->unit[k] == AL_UNIT_ANE ? 'A' : p->unit[k] == AL_UNIT_GPU ? 'G' : 'C';
	buf[k] = 0;
	return buf;
}

/* ================================================================ names and defaults */

static void test_policy_names(void **state)
{
	(void)state;
	static const char *const names[] = {"auto", "nn2020", "mlprogram", "optimistic"};
	for (int i = 0; i < AL_POLICY_COUNT; i++) {
		enum al_policy p;
		assert_true(al_policy_parse(names[i], &p));
		assert_int_equal(p, i);
		assert_string_equal(al_policy_name(p), names[i]);
	}
	enum al_policy p = AL_POLICY_NN2020;
	assert_false(al_policy_parse("NN2020", &p));
	assert_false(al_policy_parse("", &p));
	assert_false(al_policy_parse(NULL, &p));
	assert_int_equal(p, AL_POLICY_NN2020);
	assert_string_equal(al_policy_name(AL_POLICY_COUNT), "?");
	assert_string_equal(al_place_name(AL_PLACE_GPU_STICKS), "gpu_sticks");
	assert_string_equal(al_place_name(AL_PLACE_COUNT), "?");
	/* catalog C3 / C4 (docs/partition.md) */
	assert_true(al_switch_default_us(AL_UNIT_ANE, AL_UNIT_CPU) == 720);
	assert_true(al_switch_default_us(AL_UNIT_CPU, AL_UNIT_ANE) == 720);
	assert_true(al_switch_default_us(AL_UNIT_ANE, AL_UNIT_GPU) == 1750);
	assert_true(al_switch_default_us(AL_UNIT_GPU, AL_UNIT_ANE) == 1750);
	assert_true(al_switch_default_us(AL_UNIT_GPU, AL_UNIT_CPU) == 720);
	assert_true(al_switch_default_us(AL_UNIT_ANE, AL_UNIT_ANE) == 0);
	assert_true(al_switch_default_us(AL_UNIT_NONE, AL_UNIT_ANE) == 0);
}

/* ================================================================ known S/U sequences */

/* conv -> custom -> relu: S U S. */
static void test_custom_layer(void **state)
{
	(void)state;
	al_model *m = open_checked(fixture(CV("builder__custom_layer.mlmodel")));
	assert_non_null(m);
	without_model_rules(m);

	/* nn2020 (the default for NeuralNetwork): the custom layer goes to the GPU
	 * and the relu after it stays there */
	const struct al_plan *p = plan_of(m, 0, AL_POLICY_AUTO);
	assert_int_equal(p->policy, AL_POLICY_NN2020);
	assert_non_null(strstr(p->policy_why, "NeuralNetwork"));
	assert_int_equal(p->n_nodes, 3);
	assert_string_equal(letters(p), "AGG");
	assert_int_equal(p->n_segments, 2);
	assert_int_equal(p->segments[0].unit, AL_UNIT_ANE);
	assert_int_equal(p->segments[0].first, 0);
	assert_int_equal(p->segments[0].last, 0);
	assert_int_equal(p->segments[1].unit, AL_UNIT_GPU);
	assert_int_equal(p->segments[1].first, 1);
	assert_int_equal(p->segments[1].last, 2);
	assert_int_equal(p->segments[1].n_nodes, 2);
	assert_int_equal(p->switches, 1);
	assert_true(p->switch_us == 1750);
	assert_int_equal(p->place[pos(p, "custom_swish")], AL_PLACE_RESOLVED);
	assert_int_equal(p->place[pos(p, "relu")], AL_PLACE_GPU_STICKS);
	assert_int_equal(p->n_fixes, 1);
	assert_int_equal(p->fixes[0].kind, AL_FIX_NODE);
	assert_string_equal(p->fixes[0].node->name, "custom_swish");
	assert_string_equal(p->fixes[0].rule->id, "ANE001");
	assert_int_equal(p->fixes[0].segments_before, 2);
	assert_int_equal(p->fixes[0].segments_after, 1);
	assert_int_equal(p->fixes[0].switches_after, 0);
	assert_true(p->fixes[0].gain_us >= 1750 - 1e-6);

	/* optimistic: an island, back to the ANE */
	al_plan_free(p);
	p = plan_of(m, 0, AL_POLICY_OPTIMISTIC);
	assert_string_equal(letters(p), "ACA");
	assert_int_equal(p->n_segments, 3);
	assert_int_equal(p->switches, 2);
	assert_true(p->switch_us == 1440);
	assert_int_equal(p->n_fixes, 1);
	assert_string_equal(p->fixes[0].node->name, "custom_swish");
	assert_int_equal(p->fixes[0].segments_before, 3);
	assert_int_equal(p->fixes[0].segments_after, 1);
	al_plan_free(p);
	al_model_free(m);
}

/* conv, custom, conv, custom, conv */
static void test_susus(void **state)
{
	(void)state;
	al_model *m = open_checked(fixture(CR("plan_susus.mlmodel")));
	assert_non_null(m);
	const struct al_plan *p = plan_of(m, 0, AL_POLICY_NN2020);
	assert_string_equal(letters(p), "AGGGG"); /* ANE -> GPU once, and stays */
	assert_int_equal(p->n_segments, 2);
	assert_int_equal(p->switches, 1);
	assert_int_equal(p->place[pos(p, "s2")], AL_PLACE_GPU_STICKS);
	assert_int_equal(p->place[pos(p, "u2")], AL_PLACE_RESOLVED);
	/* rewriting one custom layer merges nothing; both do */
	assert_int_equal(p->n_fixes, 1);
	assert_int_equal(p->fixes[0].kind, AL_FIX_RULE);
	assert_int_equal(p->fixes[0].n_nodes, 2);
	assert_string_equal(p->fixes[0].nodes[0]->name, "u1");
	assert_string_equal(p->fixes[0].nodes[1]->name, "u2");
	assert_int_equal(p->fixes[0].segments_after, 1);

	al_plan_free(p);
	p = plan_of(m, 0, AL_POLICY_OPTIMISTIC);
	assert_string_equal(letters(p), "ACACA");
	assert_int_equal(p->n_segments, 5);
	assert_int_equal(p->switches, 4);
	/* both custom layers: 5 -> 1 beats one of them (5 -> 3) at the same gain per layer */
	assert_true(p->n_fixes >= 1);
	assert_int_equal(p->fixes[0].kind, AL_FIX_RULE);
	assert_string_equal(p->fixes[0].rule->id, "ANE001");
	assert_int_equal(p->fixes[0].segments_before, 5);
	assert_int_equal(p->fixes[0].segments_after, 1);

	/* mlprogram on a NeuralNetwork: custom layers are islands too (nothing CPU-only) */
	al_plan_free(p);
	p = plan_of(m, 0, AL_POLICY_MLPROGRAM);
	assert_string_equal(letters(p), "ACACA");
	al_plan_free(p);
	al_model_free(m);
}

/* conv, gather, conv, gather, conv: CPU fallbacks ping-pong under nn2020 */
static void test_pingpong(void **state)
{
	(void)state;
	al_model *m = open_checked(fixture(CR("plan_pingpong.mlmodel")));
	assert_non_null(m);
	const struct al_plan *p = plan_of(m, 0, AL_POLICY_AUTO);
	assert_int_equal(p->policy, AL_POLICY_NN2020);
	assert_string_equal(letters(p), "ACACA");
	assert_int_equal(p->n_segments, 5);
	assert_int_equal(p->switches, 4);
	for (uint32_t k = 0; k < p->n_nodes; k++)
		assert_int_equal(p->place[k], AL_PLACE_VERDICT);
	for (uint32_t k = 0; k < p->switches; k++)
		assert_true(p->switch_list[k].us == 720);
	assert_int_equal(p->fixes[0].kind, AL_FIX_RULE);
	assert_string_equal(p->fixes[0].rule->id, "ANE003");
	assert_int_equal(p->fixes[0].segments_after, 1);
	al_plan_free(p);
	al_model_free(m);
}

/* cumsum in an ML Program: x -> cast(cpu) -> cumsum -> cumsum -> add -> cast(cpu) */
static void test_cumsum_mlprogram(void **state)
{
	(void)state;
	/* iOS 18: the fp32 I/O casts fall back too (ANE030; from iOS 26 they run on the ANE) */
	al_model *m = open_checked_os(fixture(CV("cumsum__mlp_fp16.mlpackage")), al_release_find("ios18"));
	assert_non_null(m);
	without_model_rules(m);
	const struct al_plan *p = plan_of(m, 0, AL_POLICY_AUTO);
	assert_int_equal(p->policy, AL_POLICY_MLPROGRAM);
	assert_non_null(strstr(p->policy_why, "ML Program"));
	assert_int_equal(p->n_nodes, 5); /* const ops are not placed */
	uint32_t first_cumsum = UINT32_MAX;
	for (uint32_t k = 0; k < p->n_nodes; k++) {
		if (strcmp(p->nodes[k]->type, "cumsum") == 0 && first_cumsum == UINT32_MAX)
			first_cumsum = p->index[k];
		if (first_cumsum != UINT32_MAX)
			assert_int_equal(p->unit[k], AL_UNIT_CPU);
	}
	assert_int_equal(first_cumsum, 5); /* the check JSON's index */
	assert_int_equal(p->unit[pos(p, "var_9_cast_fp16")], AL_UNIT_CPU);
	assert_int_equal(p->place[pos(p, "var_9_cast_fp16")], AL_PLACE_CPU_STICKS); /* the add */
	assert_int_equal(p->n_segments, 1);
	assert_int_equal(p->switches, 0);
	assert_int_equal(p->segments[0].first, 4);
	assert_int_equal(p->segments[0].last, 12);

	/* optimistic: the add returns to the ANE */
	al_plan_free(p);
	p = plan_of(m, 0, AL_POLICY_OPTIMISTIC);
	assert_int_equal(unit_of(p, "var_9_cast_fp16"), AL_UNIT_ANE);
	assert_int_equal(p->n_segments, 3);
	al_plan_free(p);
	al_model_free(m);
}

/* Two branches interleaved in the list: a1 u1 a2 u2 a3 join. */
static void test_branches_dataflow(void **state)
{
	(void)state;
	al_model *m = open_checked(fixture(CR("plan_branches.mlmodel")));
	assert_non_null(m);
	const struct al_plan *p = plan_of(m, 0, AL_POLICY_OPTIMISTIC);
	assert_string_equal(letters(p), "ACACAA");
	assert_int_equal(list_runs(p), 5); /* what list order would say */
	assert_int_equal(p->n_segments, 2);  /* the custom branch, then all the ANE work */
	assert_int_equal(p->switches, 1);
	uint32_t a = p->segment[pos(p, "a1")];
	assert_int_equal(p->segment[pos(p, "a2")], a);
	assert_int_equal(p->segment[pos(p, "a3")], a);
	assert_int_equal(p->segment[pos(p, "join")], a);
	assert_int_equal(p->segment[pos(p, "u1")], p->segment[pos(p, "u2")]);

	/* nn2020: only what consumes GPU work stays on the GPU */
	al_plan_free(p);
	p = plan_of(m, 0, AL_POLICY_NN2020);
	assert_string_equal(letters(p), "AGAGAG");
	assert_int_equal(p->place[pos(p, "join")], AL_PLACE_GPU_STICKS);
	assert_int_equal(p->n_segments, 2);
	assert_int_equal(p->switches, 1);
	assert_int_equal(p->segment[pos(p, "join")], p->segment[pos(p, "u1")]);
	al_plan_free(p);
	al_model_free(m);
}

/* fp16 ML Program: x -> r1 -> cumsum -> r2; x -> r3 -> r4; add(r2, r4) */
static void test_mil_branches(void **state)
{
	(void)state;
	al_model *m = open_checked(fixture(CR("plan_mil_branches.mlpackage")));
	assert_non_null(m);
	const struct al_plan *p = plan_of(m, 0, AL_POLICY_AUTO);
	assert_int_equal(p->policy, AL_POLICY_MLPROGRAM);
	assert_int_equal(unit_of(p, "r1"), AL_UNIT_ANE);
	assert_int_equal(unit_of(p, "c"), AL_UNIT_CPU);
	assert_int_equal(unit_of(p, "r2"), AL_UNIT_CPU);
	assert_int_equal(p->place[pos(p, "r2")], AL_PLACE_CPU_STICKS);
	assert_int_equal(unit_of(p, "r3"), AL_UNIT_ANE); /* not downstream of the cumsum */
	assert_int_equal(unit_of(p, "r4"), AL_UNIT_ANE);
	assert_int_equal(unit_of(p, "out"), AL_UNIT_CPU);
	assert_int_equal(p->n_segments, 2);
	assert_int_equal(p->switches, 1);
	assert_int_equal(p->fixes[0].kind, AL_FIX_NODE);
	assert_string_equal(p->fixes[0].node->name, "c");
	assert_int_equal(p->fixes[0].segments_after, 1);

	al_plan_free(p);
	p = plan_of(m, 0, AL_POLICY_OPTIMISTIC);
	assert_int_equal(unit_of(p, "r2"), AL_UNIT_ANE);
	assert_int_equal(unit_of(p, "out"), AL_UNIT_ANE);
	assert_int_equal(p->n_segments, 3);
	al_plan_free(p);
	al_model_free(m);
}

/* A loop layer: its condition and body networks run where the loop runs. */
static void test_nested_with_owner(void **state)
{
	(void)state;
	al_model *m = open_checked(fixture(CV("gru__nn_ios14.mlmodel")));
	assert_non_null(m);
	without_model_rules(m);
	const struct al_plan *p = plan_of(m, 0, AL_POLICY_AUTO);
	assert_int_equal(p->n_nodes, 39);
	uint32_t loop = pos(p, "while_loop_0");
	uint32_t nested = 0;
	for (uint32_t k = 0; k < p->n_nodes; k++) {
		if (p->nodes[k]->owner->depth == 0)
			continue;
		nested++;
		assert_int_equal(p->place[k], AL_PLACE_OWNER);
		assert_int_equal(p->unit[k], p->unit[loop]);
		assert_int_equal(p->segment[k], p->segment[loop]);
	}
	assert_int_equal(nested, 30);
	assert_int_equal(p->unit[loop], AL_UNIT_CPU);
	al_plan_free(p);
	al_model_free(m);
}

/* A model-level rule (range flexibility) moves the whole model. */
static void test_model_level(void **state)
{
	(void)state;
	al_model *m = open_checked(fixture(CV("arange_dynamic__nn_ios13.mlmodel")));
	assert_non_null(m);
	const struct al_plan *p = plan_of(m, 0, AL_POLICY_AUTO);
	assert_non_null(p->model_rule);
	assert_string_equal(p->model_rule->id, "ANE040");
	assert_int_equal(p->n_segments, 1);
	assert_int_equal(p->ane_nodes, 0);
	for (uint32_t k = 0; k < p->n_nodes; k++)
		assert_int_equal(p->place[k], AL_PLACE_MODEL);
	al_plan_free(p);
	al_model_free(m);
}

static void test_pipeline(void **state)
{
	(void)state;
	al_model *m = open_checked(fixture(CR("enum_pipeline.mlmodel")));
	assert_non_null(m);
	assert_int_equal(al_model_count(m), 3);
	const struct al_plan *p = plan_of(m, 0, AL_POLICY_AUTO);
	assert_int_equal(p->n_nodes, 0); /* the pipeline itself has no layers */
	assert_int_equal(p->n_segments, 0);
	assert_int_equal(p->n_fixes, 0);
	for (size_t k = 1; k < 3; k++) {
		al_plan_free(p);
		p = plan_of(m, k, AL_POLICY_AUTO);
		assert_int_equal(p->n_nodes, 1);
		assert_ptr_equal(p->sub, al_model_get(m, k));
	}
	al_plan_free(p);
	al_model_free(m);
}

/* ================================================================ costs */

/* The roofline against a test target with hand-set costs (independent of the
 * shipped target figures and of shape inference). */
static void test_roofline(void **state)
{
	(void)state;
	al_model *m = open_checked(fixture(CR("plan_susus.mlmodel")));
	assert_non_null(m);
	static const struct al_target t = {
		.id = "test", .name = "test target",
		.ane_tflops = 1, .ane_gbs = 100, .ane_overhead_us = 100,
		.gpu_tflops = 0.5, .gpu_gbs = 50, .gpu_overhead_us = 50,
		.cpu_tflops = 0.1, .cpu_gbs = 10, .cpu_overhead_us = 10,
	};
	const struct al_submodel *s = al_model_get(m, 0);
	for (uint32_t k = 0; k < s->graphs[0]->n_nodes; k++) {
		struct al_node *n = &s->graphs[0]->nodes[k];
		n->cost = (struct al_cost){.flops = 1e9, .act_bytes = 1000000, .known = true};
	}
	/* per op: ANE max(1e9 / 1e12 s, weights 0 B / 100 GB/s) = 1000 us (activations are
	 * not charged per op on the ANE); GPU max(2000, 1e6 B / 50 GB/s) = 2000 us. The ANE
	 * segment (s1 alone) pays once for what crosses its edge at 100 GB/s: the model input
	 * it reads and its output, which the GPU reads, both at fp16 */
	const struct al_node *s1 = &s->graphs[0]->nodes[0];
	int64_t in_elems = 1, out_elems = 1;
	for (uint32_t d = 0; d < s->inputs[0].rank; d++)
		in_elems *= s->inputs[0].shape[d];
	for (int d = 0; d < s1->out_shapes[0].rank; d++)
		out_elems *= s1->out_shapes[0].dims[d];
	assert_true(in_elems > 1 && out_elems > 1);
	double in_us = 2.0 * (double)in_elems / 1e5, edge_us = in_us + 2.0 * (double)out_elems / 1e5;
	struct al_plan_opts o = {.target = &t, .policy = AL_POLICY_NN2020, .no_work_floor = true};
	const struct al_plan *p = NULL;
	al_plan_free(p);
	assert_int_equal(al_model_plan(m, 0, &o, &p, NULL), AL_OK);
	check_invariants(p);
	assert_true(p->timed);
	assert_ptr_equal(p->target, &t);
	assert_int_equal(p->n_uncosted, 0);
	assert_true(fabs(p->total_flops - 5e9) < 1);
	assert_true(fabs(p->ane_flops - 1e9) < 1);
	assert_true(fabs(p->segments[0].est_us - (100 + 1000 + edge_us)) < 1e-6);
	assert_true(fabs(p->segments[1].est_us - (50 + 4 * 2000)) < 1e-6);
	assert_true(fabs(p->segments[1].flops - 4e9) < 1);
	assert_true(fabs(p->compute_us - (9150 + edge_us)) < 1e-6);
	assert_true(fabs(p->est_us - (9150 + edge_us + 1750)) < 1e-6);
	assert_true(fabs(p->node_us[0] - (1000 + edge_us)) < 1e-6);
	/* everything on the ANE: 100 + 5 * 1000, and the model input read once (the output,
	 * s3, has no known shape) */
	assert_true(fabs(p->fixes[0].gain_us - (9150 + edge_us + 1750 - (5100 + in_us))) < 1e-6);

	/* a fixed cost per ANE layer and per GPU kernel (targets.def: ane_layer_us, gpu_kernel_us) */
	static const struct al_target tk = {
		.id = "test", .name = "test target with fixed costs per op",
		.ane_tflops = 1, .ane_gbs = 100, .ane_overhead_us = 100, .ane_layer_us = 7,
		.gpu_tflops = 0.5, .gpu_gbs = 50, .gpu_overhead_us = 50, .gpu_kernel_us = 3,
		.cpu_tflops = 0.1, .cpu_gbs = 10, .cpu_overhead_us = 10,
	};
	o.target = &tk;
	al_plan_free(p);
	assert_int_equal(al_model_plan(m, 0, &o, &p, NULL), AL_OK);
	check_invariants(p);
	assert_true(fabs(p->segments[0].est_us - (100 + 1007 + edge_us)) < 1e-6);
	assert_true(fabs(p->segments[1].est_us - (50 + 4 * 2003)) < 1e-6);
	o.target = &t;

	/* memory-bound: 1 GB of weights per op less the 1 MB of activations of the old test:
	 * 999 MB at 100 GB/s = 9990 us on the ANE, plus the segment's edge, once */
	for (uint32_t k = 0; k < s->graphs[0]->n_nodes; k++)
		s->graphs[0]->nodes[k].cost.param_bytes = 1000000000ull - 1000000;
	o.policy = AL_POLICY_OPTIMISTIC;
	al_plan_free(p);
	assert_int_equal(al_model_plan(m, 0, &o, &p, NULL), AL_OK);
	check_invariants(p);
	assert_true(fabs(p->segments[0].est_us - (100 + 9990 + edge_us)) < 1e-6);

	/* a target without figures times only the switches */
	static const struct al_target bare = {.id = "bare"};
	o.target = &bare;
	al_plan_free(p);
	assert_int_equal(al_model_plan(m, 0, &o, &p, NULL), AL_OK);
	assert_false(p->timed);
	assert_true(p->compute_us == 0);
	assert_true(p->est_us == p->switch_us);
	al_plan_free(p);
	al_model_free(m);
}

/* The shipped default target: timed when it has figures; the partition is the
 * same as without figures (units and segments do not depend on the estimate). */
static void test_default_target(void **state)
{
	(void)state;
	al_model *m = open_checked(fixture(CR("plan_susus.mlmodel")));
	assert_non_null(m);
	const struct al_target *t = al_target_default();
	const struct al_plan *p = NULL, *q = plan_of(m, 0, AL_POLICY_OPTIMISTIC);
	struct al_plan_opts o = {.policy = AL_POLICY_OPTIMISTIC, .no_work_floor = true};
	assert_int_equal(al_model_plan(m, 0, &o, &p, NULL), AL_OK);
	check_invariants(p);
	assert_ptr_equal(p->target, t);
	assert_int_equal(p->timed, t->ane_tflops > 0 && t->gpu_tflops > 0 && t->cpu_tflops > 0);
	assert_int_equal(p->n_segments, q->n_segments);
	assert_memory_equal(p->unit, q->unit, p->n_nodes * sizeof *p->unit);
	/* the fixes reach one segment, one way or another, rewriting the custom layers */
	assert_true(p->n_fixes >= 1);
	assert_int_equal(p->fixes[p->n_fixes - 1].segments_after, 1);
	for (uint32_t k = 0; k < p->n_fixes; k++)
		for (uint32_t i = 0; i < p->fixes[k].n_nodes; i++)
			assert_string_equal(p->fixes[k].nodes[i]->type, "custom");
	al_plan_free(p);
	al_plan_free(q);
	al_model_free(m);
}

static void test_switch_costs_and_fix_limit(void **state)
{
	(void)state;
	al_model *m = open_checked(fixture(CR("plan_susus.mlmodel")));
	assert_non_null(m);
	struct al_plan_opts o = {.policy = AL_POLICY_OPTIMISTIC, .no_work_floor = true};
	o.switch_us[AL_UNIT_ANE][AL_UNIT_CPU] = 100;
	o.switch_us[AL_UNIT_CPU][AL_UNIT_ANE] = 300;
	const struct al_plan *p = NULL;
	al_plan_free(p);
	assert_int_equal(al_model_plan(m, 0, &o, &p, NULL), AL_OK);
	check_invariants(p);
	assert_true(p->switch_us == 2 * 100 + 2 * 300);
	assert_true(p->switch_cost[AL_UNIT_ANE][AL_UNIT_CPU] == 100);
	assert_true(p->switch_cost[AL_UNIT_ANE][AL_UNIT_GPU] == 1750); /* default kept */
	assert_true(p->switch_cost[AL_UNIT_ANE][AL_UNIT_ANE] == 0);

	/* one fix at most; and with the greedy search rewriting one layer at a time
	 * when each layer is its own rule */
	o.max_fixes = 1;
	al_plan_free(p);
	assert_int_equal(al_model_plan(m, 0, &o, &p, NULL), AL_OK);
	assert_true(p->n_fixes <= 1);
	al_plan_free(p);
	al_model_free(m);
}

/* ================================================================ errors */

static void test_bad_arguments(void **state)
{
	(void)state;
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	const struct al_plan *p = (const struct al_plan *)&p;
	assert_int_equal(al_model_open(fixture(CV("builder__custom_layer.mlmodel")), &m, d), AL_OK);
	assert_int_equal(al_model_plan(m, 0, NULL, &p, d), AL_E_INVALID_ARG); /* not checked */
	assert_null(p);
	assert_int_equal(al_model_check(m, NULL, d), AL_OK);
	assert_int_equal(al_model_plan(m, 1, NULL, &p, d), AL_E_INVALID_ARG);
	assert_int_equal(al_model_plan(NULL, 0, NULL, &p, d), AL_E_INVALID_ARG);
	assert_int_equal(al_model_plan(m, 0, NULL, NULL, d), AL_E_INVALID_ARG);
	struct al_plan_opts o = {.policy = AL_POLICY_COUNT};
	assert_int_equal(al_model_plan(m, 0, &o, &p, d), AL_E_INVALID_ARG);
	assert_true(al_diags_errors(d) >= 4);
	/* NULL options: the defaults */
	assert_int_equal(al_model_plan(m, 0, NULL, &p, NULL), AL_OK);
	assert_int_equal(p->policy, AL_POLICY_NN2020);
	assert_ptr_equal(p->target, al_target_default());
	check_invariants(p);
	al_plan_free(p);
	al_model_free(m);
	al_diags_free(d);
}

/* A plan owns its memory: planning one model 10,000 times, freeing each plan,
 * leaves the model's arenas exactly as they were (the plan arrays used to be
 * carved from the model's arena, about 2 KB per plan of this model), and a plan
 * outlives a later check of its model for another target. */
static void test_plans_own_their_memory(void **state)
{
	(void)state;
	static const char *const files[] = {CR("plan_susus.mlmodel"), CR("plan_mil_branches.mlpackage")};
	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		al_model *m = open_checked(fixture(files[f]));
		assert_non_null(m);
		const struct al_plan *first = plan_of(m, 0, AL_POLICY_AUTO);
		size_t used = m->arena.used, cap = m->arena.cap;
		size_t vused = m->verdicts.used, vcap = m->verdicts.cap;
		for (int i = 0; i < 10000; i++) {
			const struct al_plan *p = NULL;
			assert_int_equal(al_model_plan(m, 0, &(struct al_plan_opts){.no_work_floor = true}, &p, NULL), AL_OK);
			assert_int_equal(p->n_segments, first->n_segments);
			al_plan_free(p);
		}
		assert_int_equal(m->arena.used, used);
		assert_int_equal(m->arena.cap, cap);
		assert_int_equal(m->verdicts.used, vused);
		assert_int_equal(m->verdicts.cap, vcap);
		/* checking again (another target) empties the verdicts: the plan keeps its own */
		enum al_unit *units = malloc(first->n_nodes * sizeof *units + 1);
		assert_non_null(units);
		memcpy(units, first->unit, first->n_nodes * sizeof *units);
		struct al_check_opts co = {.target = al_target_at(0)};
		assert_int_equal(al_model_check(m, &co, NULL), AL_OK);
		check_invariants(first);
		assert_memory_equal(units, first->unit, first->n_nodes * sizeof *units);
		free(units);
		al_plan_free(first);
		al_plan_free(NULL);
		al_model_free(m);
	}
}

/* Every allocation of a plan fails once: AL_E_NOMEM, nothing leaked (asan),
 * and a later plan with memory back succeeds. */
static void test_out_of_memory(void **state)
{
	(void)state;
	static const char *const files[] = {CV("gru__nn_ios14.mlmodel"), CR("plan_mil_branches.mlpackage"),
					    CR("plan_susus.mlmodel")};
	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		al_model *m = open_checked(fixture(files[f]));
		assert_non_null(m);
		bool ok = false, nomem = false;
		for (unsigned long k = 1; k < 100000 && !ok; k++) {
			al_diags *d = al_diags_new();
			const struct al_plan *p = NULL;
			ali_alloc_fail_after(k);
			enum al_status st = al_model_plan(m, 0, NULL, &p, d);
			unsigned long made = ali_alloc_fail_after(0);
			assert_true(st == AL_OK || st == AL_E_NOMEM);
			if (st == AL_E_NOMEM) {
				nomem = true;
				assert_null(p);
				assert_true(al_diags_errors(d) >= 1);
			} else {
				ok = made < k; /* succeeded without reaching the failure */
				if (!ok)
					check_invariants(p);
				al_plan_free(p);
			}
			al_diags_free(d);
		}
		assert_true(ok);
		assert_true(nomem);
		al_model_free(m);
	}
}

/* ================================================================ the corpus */

static void plan_everything(const char *path, uint32_t *n_plans)
{
	al_model *m = open_checked(path);
	if (!m)
		return; /* test_rules / corpus.sh report models that do not load */
	for (size_t k = 0; k < al_model_count(m); k++)
		for (int pol = 0; pol < AL_POLICY_COUNT; pol++) {
			const struct al_plan *a = plan_of(m, k, (enum al_policy)pol);
			const struct al_plan *b = plan_of(m, k, (enum al_policy)pol);
			/* deterministic */
			assert_int_equal(a->n_segments, b->n_segments);
			assert_int_equal(a->n_fixes, b->n_fixes);
			assert_memory_equal(a->unit, b->unit, a->n_nodes * sizeof *a->unit);
			al_plan_free(a);
			al_plan_free(b);
			(*n_plans)++;
		}
	al_model_free(m);
}

static void test_corpus_invariants(void **state)
{
	(void)state;
	const char *dirs[] = {"converted", "real"};
	uint32_t n_plans = 0;
	for (size_t i = 0; i < 2; i++) {
		const char *dir = corpus_file(dirs[i]);
		if (!dir)
			skip();
		char base[8192];
		snprintf(base, sizeof base, "%s", dir);
		DIR *dh = opendir(base);
		if (!dh)
			continue;
		struct dirent *e;
		while ((e = readdir(dh))) {
			size_t len = strlen(e->d_name);
			if (!(len > 8 && strcmp(e->d_name + len - 8, ".mlmodel") == 0) &&
			    !(len > 10 && strcmp(e->d_name + len - 10, ".mlpackage") == 0))
				continue;
			char path[8192 + 512];
			snprintf(path, sizeof path, "%s/%.500s", base, e->d_name);
			plan_everything(path, &n_plans);
		}
		closedir(dh);
	}
	assert_true(n_plans > 100);
}

/* ================================================================ check and plan tell one story */

/* For every target: check's final placement of every node (al_verdict.placed)
 * equals plan's unit under the default policy, with the built-in rules
 * (work floor included); a node moved by a rule names it. */
static uint32_t check_agrees_with_plan(const char *path, bool fixes)
{
	al_model *m = NULL;
	if (al_model_open(path, &m, NULL) != AL_OK)
		return 0; /* test_rules / corpus.sh report models that do not load */
	uint32_t n = 0;
	for (size_t t = 0; t < al_targets_count(); t++) {
		const struct al_target *tg = al_target_at(t);
		assert_int_equal(al_model_check(m, &(struct al_check_opts){.target = tg}, NULL), AL_OK);
		for (size_t k = 0; k < al_model_count(m); k++) {
			struct al_plan_opts o = {.target = tg, .policy = AL_POLICY_AUTO, .no_fixes = !fixes};
			const struct al_plan *p = NULL;
			assert_int_equal(al_model_plan(m, k, &o, &p, NULL), AL_OK);
			for (uint32_t i = 0; i < p->n_nodes; i++) {
				const struct al_verdict *v = &p->nodes[i]->verdict;
				if (v->placed != p->unit[i] || v->place != p->place[i])
					fail_msg("%s, %s: node %s: check places it on %s (%s), plan on %s (%s)",
						 path, tg->id, p->nodes[i]->name, al_unit_name(v->placed),
						 al_place_name(v->place), al_unit_name(p->unit[i]),
						 al_place_name(p->place[i]));
				assert_int_equal(v->placed_ane, p->unit[i] == AL_UNIT_ANE);
				/* every move names its rule (issue 29): the model-level one, or the
				 * partition's ANE072-076; the verdict and a resolved gpu_or_cpu none */
				static const char *const ids[AL_PLACE_COUNT] = {
					[AL_PLACE_GPU_STICKS] = "ANE073", [AL_PLACE_CPU_STICKS] = "ANE074",
					[AL_PLACE_OWNER] = "ANE075", [AL_PLACE_SMALL] = "ANE072",
					[AL_PLACE_UNITS] = "ANE076"};
				if (p->place[i] == AL_PLACE_MODEL)
					assert_ptr_equal(v->moved_by, p->model_rule);
				else if (ids[p->place[i]])
					assert_string_equal(v->moved_by->id, ids[p->place[i]]);
				else
					assert_null(v->moved_by);
				n++;
			}
			al_plan_free(p);
		}
	}
	al_model_free(m);
	return n;
}

static uint32_t agree_in_dir(const char *dir, bool fixes)
{
	uint32_t n = 0;
	DIR *dh = opendir(dir);
	if (!dh)
		return 0;
	struct dirent *e;
	while ((e = readdir(dh))) {
		size_t len = strlen(e->d_name);
		if (!(len > 8 && strcmp(e->d_name + len - 8, ".mlmodel") == 0) &&
		    !(len > 9 && strcmp(e->d_name + len - 9, ".mlmodelc") == 0) &&
		    !(len > 10 && strcmp(e->d_name + len - 10, ".mlpackage") == 0))
			continue;
		char path[8192 + 512];
		snprintf(path, sizeof path, "%.8000s/%.500s", dir, e->d_name);
		n += check_agrees_with_plan(path, fixes);
	}
	closedir(dh);
	return n;
}

static void test_check_agrees_with_plan(void **state)
{
	(void)state;
	static const char *const dirs[] = {"converted", "crafted", "modern", "observed", "rules", "compiled"};
	uint32_t n = 0;
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		n += agree_in_dir(fixture(dirs[i]), true);
	assert_true(n > 1000);
}

static void test_corpus_check_agrees_with_plan(void **state)
{
	(void)state;
	static const char *const dirs[] = {"converted", "real", "modern", "compiled"};
	uint32_t n = 0;
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		const char *dir = corpus_file(dirs[i]);
		if (!dir)
			skip();
		char base[8192];
		snprintf(base, sizeof base, "%s", dir);
		n += agree_in_dir(base, false);
	}
	assert_true(n > 0);
}

/* The work floor: conv, gather, conv, gather, conv (a few kFLOP). Per model
 * (ANE071, a model-level rule) everything goes to the CPU; with ANE071 off,
 * per segment (ANE072) each ANE island between the CPU gathers does. */
/* Compute units (docs/partition.md "Compute units"): with all, an ML Program's
 * fallbacks go to the GPU from iOS 17 and the CPU before; cpu-and-ne never uses
 * the GPU, cpu-only nothing but the CPU; a plan follows the check's units unless
 * asked for others. */
static unsigned count_unit(const struct al_plan *p, enum al_unit u)
{
	unsigned n = 0;
	for (uint32_t k = 0; k < p->n_nodes; k++)
		n += p->unit[k] == u;
	return n;
}

static void test_compute_units(void **state)
{
	(void)state;
	enum al_compute_units cu = AL_CU_DEFAULT;
	assert_true(al_compute_units_parse("cpu-and-ne", &cu));
	assert_int_equal(cu, AL_CU_CPU_AND_NE);
	assert_true(al_compute_units_parse("cpuAndGPU", &cu));
	assert_int_equal(cu, AL_CU_CPU_AND_GPU);
	assert_true(al_compute_units_parse("CPU_ONLY", &cu));
	assert_int_equal(cu, AL_CU_CPU_ONLY);
	assert_false(al_compute_units_parse("gpu", &cu));
	assert_false(al_compute_units_parse("", &cu));
	assert_string_equal(al_compute_units_name(AL_CU_DEFAULT), "all");
	assert_string_equal(al_compute_units_name(AL_CU_CPU_AND_NE), "cpu-and-ne");

	al_model *m = NULL;
	assert_int_equal(al_model_open(fixture(CR("mil_rules.mlpackage")), &m, NULL), AL_OK);
	const struct al_release *ios16 = al_release_find("ios16"), *ios17 = al_release_find("macos14");
	assert_non_null(ios16);
	assert_non_null(ios17);
	const struct al_plan *p = NULL;
	/* all, iOS 17: the fallbacks (and the work too small for the ANE beside them) on the GPU */
	assert_int_equal(al_model_check(m, &(struct al_check_opts){.os = ios17}, NULL), AL_OK);
	assert_int_equal(al_model_plan(m, 0, NULL, &p, NULL), AL_OK);
	assert_int_equal(p->compute_units, AL_CU_ALL);
	assert_true(p->gpu_fallback);
	unsigned gpu_all = count_unit(p, AL_UNIT_GPU);
	assert_true(gpu_all > 0);
	check_invariants(p);
	for (uint32_t k = 0; k < p->n_nodes; k++) /* check shows the same placement */
		assert_int_equal(p->nodes[k]->verdict.placed, p->unit[k]);
	al_plan_free(p);
	/* the same plan asked for cpu-and-ne: no GPU, each of those ops on the CPU */
	assert_int_equal(al_model_plan(m, 0, &(struct al_plan_opts){.compute_units = AL_CU_CPU_AND_NE},
				       &p, NULL), AL_OK);
	assert_false(p->gpu_fallback);
	assert_int_equal(count_unit(p, AL_UNIT_GPU), 0);
	al_plan_free(p);
	/* iOS 16: an ML Program's fallbacks went to the CPU whatever the units */
	assert_int_equal(al_model_check(m, &(struct al_check_opts){.os = ios16}, NULL), AL_OK);
	assert_int_equal(al_model_plan(m, 0, NULL, &p, NULL), AL_OK);
	assert_false(p->gpu_fallback);
	assert_int_equal(count_unit(p, AL_UNIT_GPU), 0);
	al_plan_free(p);
	al_model_free(m);

	/* a model with ANE work: cpu-and-gpu moves it to the GPU, cpu-only to the CPU,
	 * and the ops say the compute units moved them */
	assert_int_equal(al_model_open(fixture(CR("mil_shapes.mlpackage")), &m, NULL), AL_OK);
	assert_int_equal(al_model_check(m, NULL, NULL), AL_OK);
	assert_int_equal(al_model_plan(m, 0, NULL, &p, NULL), AL_OK);
	assert_true(p->ane_nodes > 0);
	al_plan_free(p);
	enum al_compute_units no_ane[] = {AL_CU_CPU_AND_GPU, AL_CU_CPU_ONLY};
	for (int i = 0; i < 2; i++) {
		assert_int_equal(al_model_check(m, &(struct al_check_opts){.compute_units = no_ane[i]}, NULL),
				 AL_OK);
		assert_int_equal(al_model_plan(m, 0, NULL, &p, NULL), AL_OK);
		assert_int_equal(p->compute_units, no_ane[i]);
		assert_int_equal(p->ane_nodes, 0);
		if (no_ane[i] == AL_CU_CPU_ONLY)
			assert_int_equal(count_unit(p, AL_UNIT_CPU), p->n_nodes);
		bool units = false;
		for (uint32_t k = 0; k < p->n_nodes; k++)
			units |= p->place[k] == AL_PLACE_UNITS && p->nodes[k]->verdict.ane;
		assert_true(units);
		al_plan_free(p);
	}
	assert_string_equal(al_place_name(AL_PLACE_UNITS), "compute_units");
	al_model_free(m);
}

static void test_work_floor(void **state)
{
	(void)state;
	al_model *m = NULL;
	assert_int_equal(al_model_open(fixture(CR("plan_pingpong.mlmodel")), &m, NULL), AL_OK);
	assert_int_equal(al_model_check(m, NULL, NULL), AL_OK);
	const struct al_plan *p = NULL;
	assert_int_equal(al_model_plan(m, 0, NULL, &p, NULL), AL_OK);
	assert_non_null(p->model_rule);
	assert_string_equal(p->model_rule->id, "ANE071");
	assert_string_equal(letters(p), "CCCCC");
	assert_int_equal(p->n_segments, 1);
	for (uint32_t k = 0; k < p->n_nodes; k++) {
		assert_int_equal(p->place[k], AL_PLACE_MODEL);
		assert_int_equal(p->nodes[k]->verdict.placed, AL_UNIT_CPU);
		assert_ptr_equal(p->nodes[k]->verdict.moved_by, p->model_rule);
	}
	al_plan_free(p);

	static const char only_segments[] = "id: ANE071\nfamilies: none\nprovenance: test\n";
	al_user_rules *u = NULL;
	assert_int_equal(al_user_rules_parse(only_segments, sizeof only_segments - 1, "t", &u, NULL),
			 AL_OK);
	assert_int_equal(al_model_check(m, &(struct al_check_opts){.user_rules = u}, NULL), AL_OK);
	assert_int_equal(al_model_plan(m, 0, NULL, &p, NULL), AL_OK);
	assert_null(p->model_rule);
	assert_string_equal(letters(p), "CCCCC");
	assert_int_equal(p->place[pos(p, "s2")], AL_PLACE_SMALL);
	assert_int_equal(p->nodes[pos(p, "s2")]->verdict.place, AL_PLACE_SMALL);
	assert_string_equal(p->nodes[pos(p, "s2")]->verdict.moved_by->id, "ANE072");
	assert_string_equal(al_place_name(AL_PLACE_SMALL), "small_segment");
	al_plan_free(p);
	/* without the floor the islands stay on the ANE */
	assert_int_equal(al_model_plan(m, 0, &(struct al_plan_opts){.no_work_floor = true}, &p, NULL),
			 AL_OK);
	assert_string_equal(letters(p), "ACACA");
	al_plan_free(p);
	al_user_rules_free(u);
	al_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_names),
		cmocka_unit_test(test_custom_layer),
		cmocka_unit_test(test_susus),
		cmocka_unit_test(test_pingpong),
		cmocka_unit_test(test_cumsum_mlprogram),
		cmocka_unit_test(test_branches_dataflow),
		cmocka_unit_test(test_mil_branches),
		cmocka_unit_test(test_nested_with_owner),
		cmocka_unit_test(test_model_level),
		cmocka_unit_test(test_pipeline),
		cmocka_unit_test(test_roofline),
		cmocka_unit_test(test_default_target),
		cmocka_unit_test(test_switch_costs_and_fix_limit),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_plans_own_their_memory),
		cmocka_unit_test(test_out_of_memory),
		cmocka_unit_test(test_corpus_invariants),
		cmocka_unit_test(test_work_floor),
		cmocka_unit_test(test_compute_units),
		cmocka_unit_test(test_check_agrees_with_plan),
		cmocka_unit_test(test_corpus_check_agrees_with_plan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
