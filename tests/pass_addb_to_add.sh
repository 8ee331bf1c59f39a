#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_addb_to_add.sh: addb-to-add
# (src/rewrite/passes/nn_addb_to_add.c, docs/surgery.md)
# on the converted builder__mixed_legacy_and_broadcastable: addBroadcastable ->
# add, bit-identical; its multiplyBroadcastable left (ANE011) (moved from tests/fix.sh)
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
# mixed legacy/broadcastable: addBroadcastable -> add; multiplyBroadcastable left (ANE011)
"$ANELINT" fix $D/builder__mixed_legacy_and_broadcastable.mlmodel -o "$T/mixed.mlmodel" >"$T/mixed.txt"
rc=$?
if [ $rc -eq 0 ] && grep -q 'changed  addb .*addBroadcastable -> add' "$T/mixed.txt" &&
	grep -q 'left     mulb .*ANE011.*\[mulb-to-multiply\]$' "$T/mixed.txt" &&
	grep -q 'check before: 5 layers, 2 fall back' "$T/mixed.txt" &&
	grep -q 'check after:  5 layers, 1 fall back' "$T/mixed.txt" &&
	grep -q 'bit-identical' "$T/mixed.txt"; then ok; else bad "mixed (rc $rc)"; cat "$T/mixed.txt"; fi
judge "$T/mixed.mlmodel"


summary
