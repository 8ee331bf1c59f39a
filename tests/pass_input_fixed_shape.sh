#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_input_fixed_shape.sh: input-fixed-shape
# (src/rewrite/passes/model_input_shape.c, docs/surgery.md)
# --shape on the crafted flexible fix_shape: one fixed shape, exact (the layers'
# bytes kept), ANE040 gone; a shape outside the range and a fixed input refused
# (tests/fix_model.sh has images, ML Programs and the rest).
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
fixed $F/fix_shape.mlmodel "$T/s.mlmodel" input-fixed-shape "input 'x' fixed to 1x16x256x128" --shape x=1,16,256,128
grep -q '"identical": true' "$T/f.json" && ! grep -q '"identical": false' "$T/f.json" && ok || bad "fix_shape: not bit-identical"
"$ANELINT" check --os ios26 $F/fix_shape.mlmodel | grep -q 'model: ANE040' &&
	! "$ANELINT" check --os ios26 "$T/s.mlmodel" | grep -q ANE040 && ok || bad "fix_shape: ANE040 still fires"
judge "$T/s.mlmodel"
fixed $F/fix_shape.mlmodel "$T/d.mlmodel" input-fixed-shape "input 'x' fixed to 1x16x512x512" --shape x=default
"$ANELINT" fix $F/fix_shape.mlmodel -o "$T/r.mlmodel" --shape x=1,16,1024,64 >/dev/null 2>"$T/r.err"
[ $? -eq 2 ] && [ ! -e "$T/r.mlmodel" ] && grep -q "input-fixed-shape: shape 1x16x1024x64: axis 2 is outside the input's range 64..512" "$T/r.err" &&
	ok || { bad "fix_shape: a shape outside the range not refused"; cat "$T/r.err"; }
"$ANELINT" fix $F/fix_subb.mlmodel -o "$T/r.mlmodel" --shape a=1,8,4,4 >/dev/null 2>"$T/r.err"
[ $? -eq 2 ] && [ ! -e "$T/r.mlmodel" ] && grep -q 'has one fixed shape already' "$T/r.err" && ok ||
	{ bad "fix_subb: a fixed input not refused"; cat "$T/r.err"; }

summary
