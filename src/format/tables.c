/* tables.c: the NeuralNetwork layer table and the ML Program op table, expanded
 * from nn_layers.def and mil_ops.def, with the lookups by field number and by op
 * type for what comes from outside (the loaders, user rules). Everything else
 * indexes its own table by al_node.kind. */
#include "model.h"

#include <stdlib.h>
#include <string.h>

const struct al_nn_kind al_nn_kinds[AL_NNK_COUNT] = {
#define AL_NN(name, field, flags) [AL_NNK_##name] = {field, #name, flags},
#include "nn_layers.def"
#undef AL_NN
};
const size_t al_nn_kinds_count = AL_NNK_COUNT;
_Static_assert(AL_NNK_COUNT == 158, "nn_layers.def: 158 NeuralNetworkLayer members");

const struct al_mil_kind al_mil_kinds[AL_MILK_COUNT] = {
#define AL_OP(name, since, flags) [AL_MILK_##name] = {#name, since, flags},
#include "mil_ops.def"
#undef AL_OP
};
const size_t al_mil_kinds_count = AL_MILK_COUNT;
_Static_assert(AL_MILK_COUNT == 169, "mil_ops.def: 169 ML Program op types");

int al_nn_kind_by_field(uint32_t field)
{
	size_t lo = 0, hi = al_nn_kinds_count; /* rows are sorted by field number */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (al_nn_kinds[mid].field == field)
			return (int)mid;
		if (al_nn_kinds[mid].field < field)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int al_mil_kind_by_name(const char *name)
{
	size_t lo = 0, hi = al_mil_kinds_count; /* rows are sorted by name */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(al_mil_kinds[mid].name, name);
		if (c == 0)
			return (int)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}
