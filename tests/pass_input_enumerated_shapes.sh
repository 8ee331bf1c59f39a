#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_input_enumerated_shapes.sh: input-enumerated-shapes
# (src/rewrite/passes/model_input_shape.c, docs/surgery.md)
# --enumerate on the crafted flexible fix_shape: the range -> enumerated shapes, each
# proved exact, ANE040 gone; a shape given twice refused (tests/fix_model.sh has more).
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
fixed $F/fix_shape.mlmodel "$T/e.mlmodel" input-enumerated-shapes "input 'x': 2 enumerated shapes (default 1x16x512x512)" \
	--enumerate 'x=1,16,512,512;1,16,256,256'
grep -q '"shapes": "default x=1,16,512,512; x=1,16,256,256: 2 shapes proved' "$T/f.json" &&
	! grep -q '"identical": false' "$T/f.json" && ok || bad "fix_shape: the enumerated shapes not each proved exact"
! "$ANELINT" check --os ios26 "$T/e.mlmodel" | grep -q ANE040 && ok || bad "fix_shape --enumerate: ANE040 still fires"
judge "$T/e.mlmodel"
"$ANELINT" fix $F/fix_shape.mlmodel -o "$T/r.mlmodel" --enumerate 'x=1,16,64,64;1,16,64,64' >/dev/null 2>"$T/r.err"
[ $? -eq 2 ] && [ ! -e "$T/r.mlmodel" ] && grep -q 'shape 2 is given twice' "$T/r.err" && ok ||
	{ bad "fix_shape: a shape given twice not refused"; cat "$T/r.err"; }

summary
