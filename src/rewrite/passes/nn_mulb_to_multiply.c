/* SPDX-License-Identifier: MIT */
/* nn_mulb_to_multiply.c: the pass mulb-to-multiply
 * (its row in surgery.c's pass table; docs/surgery.md).
 * Match:   a top-level multiplyBroadcastable of two inputs of legacy broadcast shapes
 *          (as addb-to-add).
 * Rewrite: the same layer with MultiplyLayerParams.
 * Proves:  exact: multiply computes the same products on those shapes. */
#include "nn_layer.h"

#include <stdio.h>
#include <string.h>

bool ali_pass_nn_mulb(struct al_mil_pass *c)
{
	return ali_nn_elementwise(c, F_MULTIPLY, "multiply");
}
