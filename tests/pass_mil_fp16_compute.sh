#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_fp16_compute.sh: mil-fp16-compute
# (src/rewrite/passes/mil_fp16_compute.c, docs/surgery.md)
# on the crafted fp32 program fix_mil_fp32: its ops in fp16, the clip whose bounds
# are beyond fp16 kept fp32 between casts, within the tolerance; a mixed program
# (fix_mil_island) refused (tests/fix_mil.sh 5j has the converted transformer).
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
C=$F
fixed $C/fix_mil_fp32.mlpackage "$T/f32.mlpackage" mil-fp16-compute \
	"6 ops in fp16, 1 kept fp32 between casts (e.g. 'c'); 2 fp32 consts -> fp16 (1 new blobs); casts at 1 fp32 inputs / outputs" \
	--allow approximate --max-rounds 1
"$ANELINT" info --format mil "$T/f32.mlpackage" >"$T/f32.mil"
grep -q 'tensor<fp32, \[1, 4, 2, 2\]> c = clip(x = x, alpha = lo, beta = hi)' "$T/f32.mil" &&
	grep -q 'c_to_fp16 = cast(x = c, ' "$T/f32.mil" && ok || { bad "fix_mil_fp32: the clip not kept fp32"; cat "$T/f32.mil"; }
judge "$T/f32.mlpackage"
refusal $C/fix_mil_island.mlpackage mil-fp16-compute "2 ops produce fp16 values already" --allow approximate

summary
