/* SPDX-License-Identifier: MIT */
/* tests/install/check_model.c: a program a user would write against the
 * installed library (tests/install.sh builds it through pkg-config): check a
 * model and print its layers per verdict, and the library's version. */
#include <anelint.h>

#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	al_diags *d = al_diags_new();
	al_model *m = NULL;
	int rc = 3;
	if (al_model_open(argv[1], &m, d) == AL_OK && al_model_check(m, NULL, d) == AL_OK) {
		unsigned layers = 0, eligible = 0, placed = 0;
		for (size_t i = 0; i < al_model_count(m); i++) {
			const struct al_submodel *s = al_model_get(m, i);
			for (uint32_t g = 0; g < s->n_graphs; g++)
				for (uint32_t k = 0; k < s->graphs[g]->n_nodes; k++) {
					const struct al_verdict *v = &s->graphs[g]->nodes[k].verdict;
					layers++;
					eligible += v->ane;
					placed += v->placed_ane;
				}
		}
		printf("anelint %s: %u layers, %u ANE-eligible, %u placed on the ANE\n", al_version(), layers,
		       eligible, placed);
		rc = 0;
	}
	for (size_t i = 0; i < al_diags_count(d); i++)
		fprintf(stderr, "%s\n", al_diags_get(d, i)->msg);
	al_model_free(m);
	al_diags_free(d);
	return rc;
}
