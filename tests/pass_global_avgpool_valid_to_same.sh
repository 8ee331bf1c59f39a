#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_global_avgpool_valid_to_same.sh: global-avgpool-valid-to-same
# (src/rewrite/passes/nn_global_avgpool_valid_to_same.c, docs/surgery.md)
# on its crafted fixture (fix_gap): applied exactly, ANE056 gone on iOS 14; the
# global max pool and the SAME one left.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
FIXARGS=
# global average pooling with VALID padding -> SAME (ANE056 on iOS 13/14 pulls the
# conv before it off the ANE too): exact; the global max pool and the SAME one left
applies gap 0 0 exact global-avgpool-valid-to-same
"$ANELINT" check --os ios14 "$F/fix_gap.mlmodel" | grep -c ANE056 | grep -q '^[1-9]' &&
	! "$ANELINT" check --os ios14 "$T/fx_gap.mlmodel" | grep -q ANE056 && ok || bad "fix_gap: ANE056 still fires on ios14"
left gap gmax 'global-avgpool-valid-to-same: not average pooling'
left gap gap_same 'global-avgpool-valid-to-same: padding is not VALID'

summary
