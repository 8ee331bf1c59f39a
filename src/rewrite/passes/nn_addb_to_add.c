/* SPDX-License-Identifier: MIT */
/* nn_addb_to_add.c: the pass addb-to-add
 * (its row in surgery.c's pass table; docs/surgery.md).
 * Match:   a top-level addBroadcastable of two inputs whose static shapes are a legacy
 *          broadcast (equal ranks 1-5, the smaller operand 1x1x1, Cx1x1, 1xHxW or CxHxW).
 * Rewrite: the same layer with AddLayerParams (inputs, name and outputs kept).
 * Proves:  exact: add computes the same sums on those shapes. */
#include "nn_layer.h"

#include <stdio.h>
#include <string.h>

bool ali_pass_nn_addb(struct al_mil_pass *c)
{
	return ali_nn_elementwise(c, F_ADD, "add");
}
