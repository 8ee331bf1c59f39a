#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_divb_const_to_reciprocal.sh: divb-const-to-reciprocal
# (src/rewrite/passes/nn_divb_const_to_reciprocal.c, docs/surgery.md)
# on its crafted fixture (fix_divconst): applied under --allow reassociate (a scale and
# a linear activation), a zero divisor and a non-constant one left; without
# --allow nothing applied, a byte copy.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
FIXARGS="--allow reassociate"
applies divconst 7 3 reassociate divb-const-to-reciprocal
has divconst 1 scale
has divconst 1 activation
left divconst div_z "the divisor 'z' holds 0 at 2"
left divconst div_w "the divisor 'w' is not a loadConstant"
for name in divconst; do
	"$ANELINT" fix "$F/fix_$name.mlmodel" -o "$T/fx_noallow.mlmodel" --format json >"$T/fx_$name.json"
	rc=$?
	if [ $rc -eq 0 ] && cmp -s "$F/fix_$name.mlmodel" "$T/fx_noallow.mlmodel" &&
		! grep -q '"applied": true' "$T/fx_$name.json"; then ok; else bad "fix_$name without --allow (rc $rc)"; fi
done
left divconst div_d 'needs --allow reassociate (it would be: scale'
FIXARGS=

summary
