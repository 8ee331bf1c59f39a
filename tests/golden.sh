#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/golden.sh: golden CLI outputs. Each tests/golden/NAME.cmd holds the anelint arguments
# (one line, paths relative to the repo root) and NAME.out the expected stdout, NAME.rc the
# expected exit code. Outputs are compared byte for byte.
# Regenerate after an intended change with: UPDATE=1 sh tests/golden.sh  (then review the diff).
set -u
: "${ANELINT:=build/anelint}"
pass=0 fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT INT TERM
for cmd in tests/golden/*.cmd; do
	[ -e "$cmd" ] || continue
	name=${cmd%.cmd}
	# shellcheck disable=SC2046
	$ANELINT $(cat "$cmd") >"$out" 2>/dev/null
	rc=$?
	if [ "${UPDATE:-0}" = 1 ]; then
		cp "$out" "$name.out"
		echo "$rc" >"$name.rc"
	fi
	if ! cmp -s "$out" "$name.out"; then
		echo "FAIL $(basename "$name"): output differs:"
		diff "$name.out" "$out" | head -20
		fail=$((fail + 1))
	elif [ "$rc" != "$(cat "$name.rc")" ]; then
		echo "FAIL $(basename "$name"): exit $rc, expected $(cat "$name.rc")"
		fail=$((fail + 1))
	else
		echo "ok $(basename "$name")"
		pass=$((pass + 1))
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
