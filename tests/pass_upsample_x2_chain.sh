#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_upsample_x2_chain.sh: upsample-x2-chain
# (src/rewrite/passes/nn_upsample_x2_chain.c, docs/surgery.md)
# on the converted upsample_x4_nearest__nn_ios13: nearest x4 -> two x2 upsamples,
# 1 fallback -> 0, bit-identical (moved from tests/fix.sh)
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
# upsample x4 nearest -> two x2 upsamples: 1 fallback -> 0, bit-identical
"$ANELINT" fix $D/upsample_x4_nearest__nn_ios13.mlmodel -o "$T/up.mlmodel" --format json >"$T/up.json"
rc=$?
if [ $rc -eq 0 ] && [ "$(fallbacks before "$T/up.json")" = 1 ] && [ "$(fallbacks after "$T/up.json")" = 0 ] &&
	grep -q '"identical": true' "$T/up.json" && grep -q '"written": true' "$T/up.json"; then ok; else bad "upsample x4 (rc $rc)"; cat "$T/up.json"; fi
n=$("$ANELINT" check --all "$T/up.mlmodel" | grep -c ' upsample ')
[ "$n" -eq 2 ] && ok || bad "upsample: $n upsample layers in the output (2 expected)"
judge "$T/up.mlmodel"


summary
