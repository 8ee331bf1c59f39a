/* check.c: al_model_check, the analysis entry point.
 *
 * Path through this file:
 *   al_model_check   al_model_infer_shapes (shape_infer.c: shapes and cost of
 *                    every node), then al_rules_run (rule_engine.c: a verdict
 *                    per node and the model findings, for one target) */
#include "analysis.h"


enum al_status al_model_check(al_model *m, const struct al_check_opts *opts, al_diags *d)
{
	if (!m)
		return AL_E_INVALID_ARG;
	enum al_status rc = al_model_infer_shapes(m, d);
	if (rc != AL_OK)
		return rc;
	struct al_check_opts o = {0};
	if (opts)
		o = *opts;
	if (!o.target)
		o.target = al_target_default();
	rc = al_rules_run(m, &o, d);
	if (rc == AL_OK)
		m->checked = true;
	return rc;
}

