/* SPDX-License-Identifier: MIT */
/* rule_table.c: the rule table, expanded from rules.def, and its lookups. What a
 * rule checks is in rules_*.c; how the rules are run is in rule_engine.c. */
#include "rules.h"

#include <string.h>
#include <strings.h>

/* ================================================================ the table */

struct rule_row {
	struct al_rule rule; /* first member: al_rule_at() hands out &row->rule */
	al_rule_pred *pred;
};

#define AL_NODE_RULE(id_, name_, scope_, kind_, unit_, conf, fam, rel, catalog_, pred_, title_, prov, \
		     url_, why_, fix_)                                                                 \
	{{.id = id_, .name = name_, .title = title_, .scope = scope_, .kind = kind_, .unit = unit_,   \
	  .confidence = conf, .catalog = catalog_, .provenance = prov, .url = url_, .why = why_,     \
	  .fix = fix_, .families = fam, .releases = rel},                                          \
	 pred_},
#define AL_MODEL_RULE AL_NODE_RULE
static const struct rule_row rows[] = {
#include "rules.def"
};
#undef AL_NODE_RULE
#undef AL_MODEL_RULE

#define N_ROWS (sizeof rows / sizeof rows[0])
_Static_assert(N_ROWS == AL_N_RULES, "rules.h counts the rows of rules.def");

size_t al_rules_count(void)
{
	return N_ROWS;
}

const struct al_rule *al_rule_at(size_t i)
{
	return i < N_ROWS ? &rows[i].rule : NULL;
}

/* By id ("ANE012", any case) or by name ("nn-pool-kernel-gt-13", exact). */
const struct al_rule *al_rule_find(const char *id_or_name)
{
	if (!id_or_name)
		return NULL;
	for (size_t i = 0; i < N_ROWS; i++)
		if (strcasecmp(rows[i].rule.id, id_or_name) == 0 ||
		    strcmp(rows[i].rule.name, id_or_name) == 0)
			return &rows[i].rule;
	return NULL;
}


al_rule_pred *ali_rule_pred_at(size_t i)
{
	return i < N_ROWS ? rows[i].pred : NULL;
}
