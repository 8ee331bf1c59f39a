#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_avgpool_cascade.sh: avgpool-cascade
# (src/rewrite/passes/nn_avgpool_cascade.c, docs/surgery.md)
# on its crafted fixture (fix_avgpool): applied under --allow reassociate, 9 pooling
# layers; overlapping windows left; without --allow nothing applied.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
FIXARGS="--allow reassociate"
applies avgpool 4 1 reassociate avgpool-cascade
has avgpool 9 pooling
left avgpool avg15 'stride 3x3 != kernel 15x15: overlapping windows'
for name in avgpool; do
	"$ANELINT" fix "$F/fix_$name.mlmodel" -o "$T/fx_noallow.mlmodel" --format json >"$T/fx_$name.json"
	rc=$?
	if [ $rc -eq 0 ] && cmp -s "$F/fix_$name.mlmodel" "$T/fx_noallow.mlmodel" &&
		! grep -q '"applied": true' "$T/fx_$name.json"; then ok; else bad "fix_$name without --allow (rc $rc)"; fi
done
left avgpool avg16 'needs --allow reassociate (it would be: average pools 4x4 + 4x4'
FIXARGS=

summary
