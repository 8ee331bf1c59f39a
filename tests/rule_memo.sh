#!/bin/sh
# SPDX-License-Identifier: MIT
# rule_memo.sh: the rule engine's memo (src/analysis/rule_engine.c, issue #34) changes no
# answer. A check without --os evaluates every release of the model's deployment range; the
# predicates that never read the release are evaluated once (the first check fills the memo)
# and read back for the other releases. For every bundled model, `check -f json` (the range:
# memo read), `check --os ios16 -f json` (one check: the memo filled) and `check --target all
# -f json` (a new target per column: the memo started over) must be byte-identical to the same
# commands with ANELINT_RULE_MEMO=0 (every predicate runs in every check, as before the memo).
#   ANELINT=build/anelint sh tests/rule_memo.sh       (from the repo root)
# Prints "ok NAME" or "FAIL NAME: why" per case, then "N passed, M failed".
set -u
ANELINT=${ANELINT:-build/anelint}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
for m in tests/data/converted/*.ml* tests/data/modern/*.ml* tests/data/crafted/nn_rules.mlmodel \
	 tests/data/crafted/limit_*.mlpackage; do
	[ -e "$m" ] || continue
	for args in "" "--os ios16" "--target all"; do
		# shellcheck disable=SC2086
		"$ANELINT" check $args -f json "$m" >"$T/on" 2>"$T/on.err"
		on=$?
		# shellcheck disable=SC2086
		ANELINT_RULE_MEMO=0 "$ANELINT" check $args -f json "$m" >"$T/off" 2>"$T/off.err"
		off=$?
		name="$(basename "$m") ${args:-(range)}"
		if [ "$on" = "$off" ] && cmp -s "$T/on" "$T/off" && cmp -s "$T/on.err" "$T/off.err"; then
			pass=$((pass + 1))
			echo "ok $name"
		else
			fail=$((fail + 1))
			echo "FAIL $name: exit $on vs $off; $(diff "$T/on" "$T/off" | head -3 | tr '\n' ' ')"
		fi
	done
done
# the memo was used: a range check of a model with several releases must differ in work, not
# in output; and it must not be a test that cannot fail: a model whose range spans releases
m=tests/data/crafted/nn_rules.mlmodel
n=$("$ANELINT" check -f json "$m" | grep -c '"by_release"')
if [ "$n" -gt 0 ]; then pass=$((pass + 1)); echo "ok nn_rules has a range ($n)"; else fail=$((fail + 1)); echo "FAIL nn_rules: no by_release"; fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
