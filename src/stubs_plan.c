/* stubs_plan.c: TEMPORARY placeholders for the plan issue's modules while they are
 * written (shapes.c, targets.c, user_rules.c, plan.c); each owner deletes its stub. */
#include "internal.h"

enum al_status al_model_infer_shapes(al_model *m, al_diags *d)
{
	(void)m;
	(void)d;
	return AL_OK;
}

static const struct al_target stub_target = {.id = "a14", .name = "A14 / M1 (H13)", .arch = "h13"};
size_t al_targets_count(void) { return 1; }
const struct al_target *al_target_at(size_t i) { return i == 0 ? &stub_target : NULL; }
const struct al_target *al_target_find(const char *id) { (void)id; return &stub_target; }
const struct al_target *al_target_default(void) { return &stub_target; }

enum al_status al_user_rules_load(const char *path, al_user_rules **out, al_diags *d)
{
	(void)path;
	(void)d;
	*out = NULL;
	return AL_E_UNSUPPORTED;
}
void al_user_rules_free(al_user_rules *u) { (void)u; }
size_t al_user_rules_count(const al_user_rules *u) { (void)u; return 0; }
const struct al_rule *al_user_rule_at(const al_user_rules *u, size_t i) { (void)u; (void)i; return NULL; }

const char *al_policy_name(enum al_policy p) { (void)p; return "auto"; }
bool al_policy_parse(const char *name, enum al_policy *out) { (void)name; *out = AL_POLICY_AUTO; return true; }
enum al_status al_model_plan(al_model *m, size_t i, const struct al_plan_opts *opts,
			     const struct al_plan **out, al_diags *d)
{
	(void)m; (void)i; (void)opts; (void)d;
	*out = NULL;
	return AL_E_UNSUPPORTED;
}
