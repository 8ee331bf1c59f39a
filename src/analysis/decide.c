/* SPDX-License-Identifier: MIT */
/* decide.c: the whole-graph decisions of a placement, in one place. Where a
 * sub-model is placed (target, OS release, compute units: the plan's options,
 * else its model's last check), whether the work floor applies (decided once per
 * check, from its user rules and rule selection: ali_work_floor_on; a stateful
 * model never has one), whether fallbacks go to the GPU, and the model-level rule
 * that moves the whole graph (ANE071 too little work, or a forced unit). The
 * partition (plan.c) reads the decision; nothing else decides these.
 * (Not in work_floor.c, which the rule predicates use: the user rules use the
 * rule table, so work_floor.o must not use them.) */
#include "analysis.h"

#include <string.h>

/* From this release on, an ML Program's fallbacks go to the GPU when the compute
 * units allow it: MLComputePlan dumps with compute units all on iOS 17 (smpanaro
 * CoreMLInspect: gather "G|C", primary GPU), macOS 15 (Anemll ANE_PROFILER: int16
 * cast, select, gather on the GPU) and macOS 26 (FluidAudio #671: the fp32 source
 * generator, preferred GPU). Up to iOS 16 they went to the CPU (smpanaro's Xcode
 * reports on macOS 13: fp32 mask, band_part, LM head; coreml-fallback-notes). */
#define GPU_FALLBACK_IOS 17

bool ali_work_floor_applies(const al_user_rules *u, const struct al_target *t,
			   const struct al_release *os)
{
	const struct al_rule *r = al_user_rules_find(u, "ANE072");
	int ti = ali_target_index(t ? t : al_target_default());
	int ri = ali_release_index(os ? os : al_release_default());
	return r && ti >= 0 && ri >= 0 && al_rule_evaluated(r, (size_t)ti, (size_t)ri);
}

bool ali_work_floor_on(const struct al_check_opts *o)
{
	const struct al_rule *small = al_user_rules_find(o->user_rules, "ANE072");
	return ali_work_floor_applies(o->user_rules, o->target, o->os) &&
	       al_check_rule_on(o, small ? small : al_rule_find("ANE072"));
}

void ali_decide_graph(const al_model *m, const struct al_submodel *s, const struct al_plan_opts *opts,
		      const struct al_rule *skip, struct ali_graph_decision *out)
{
	memset(out, 0, sizeof *out);
	out->where.target = opts && opts->target ? opts->target : al_target_default();
	/* the work floor as the model was checked: off when the check's user rules
	 * or selection switched ANE072 off (or the caller asks) */
	out->floor = !(opts && opts->no_work_floor) && !m->checked_floor_off;
	/* nor for a stateful model (MLState), as ANE071 (rules_model.c says why) */
	for (uint32_t i = 0; i < s->n_inputs; i++)
		if (s->inputs[i].kind == AL_FEAT_STATE)
			out->floor = false;
	out->floor_os = opts && opts->os ? opts->os : m->checked_os;
	out->where.os = out->floor_os ? out->floor_os : al_release_default();
	for (uint32_t f = 0; f < s->n_findings; f++)
		if (s->findings[f].rule->kind != AL_RULE_WARN && s->findings[f].rule != skip) {
			out->model_rule = s->findings[f].rule;
			break;
		}
	/* compute units: the ones asked for, else the check's; fallbacks the ANE
	 * cannot run go to the GPU when it is allowed, in an ML Program from iOS 17
	 * (docs/partition.md "Compute units") */
	enum al_compute_units cu = opts && opts->compute_units ? opts->compute_units
							       : (enum al_compute_units)m->checked_cu;
	if (cu <= AL_CU_DEFAULT || cu >= AL_CU_COUNT)
		cu = AL_CU_ALL;
	out->where.compute_units = cu;
	bool gpu_allowed = (cu == AL_CU_ALL || cu == AL_CU_CPU_AND_GPU) && s->world == AL_WORLD_MIL;
	out->gpu_fallback = gpu_allowed && out->where.os->ios >= GPU_FALLBACK_IOS;
	/* the whole model does too little work for the ANE (ANE071): with the GPU
	 * taking the fallbacks, only the ANE work goes to the CPU; up to iOS 16, an ML
	 * Program too small for the ANE went to the GPU when the compute units allowed
	 * it (coremltools #1761: a mul and a batched matmul on the GPU of an iPhone 14,
	 * Xcode report), while its fallbacks kept the CPU (smpanaro's macOS 13 reports) */
	const struct al_rule *r = out->model_rule;
	bool tiny_rule = r && r->id && strcmp(r->id, "ANE071") == 0;
	bool old_gpu = gpu_allowed && out->where.os->ios < GPU_FALLBACK_IOS;
	if (tiny_rule && (out->gpu_fallback || old_gpu)) {
		out->tiny = true;
		out->tiny_to_gpu = !out->gpu_fallback;
	} else if (r) {
		out->forced = true;
	}
}
