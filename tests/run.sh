#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/run.sh: runs every test and prints one closing line "N passed, M failed, K skipped".
# Usage (from the repo root; `make check` does this): ANELINT=build/anelint sh tests/run.sh UNIT_BINARIES...
#   1. each cmocka unit binary (tests/unit/test_*.c)
#   2. each CLI test script tests/*.sh other than this one (golden outputs, bad input, corpus);
#      every script ends with its own "N passed, M failed" line, which is added up here.
# Tests that need ../shared/corpus skip cleanly when it is absent.
set -u
: "${ANELINT:=build/anelint}"
export ANELINT
ANELINT_ROOT=$(pwd)
export ANELINT_ROOT
pass=0 fail=0 skip=0
log=$(mktemp)
times=$(mktemp)
trap 'rm -f "$log" "$times"' EXIT INT TERM
# CI has a wall-time budget (.ci/run, README): each line says what its test took, and the
# closing lines name the slowest, so a harness that grows is seen where it grows.
t_all=$(date +%s)

for bin in "$@"; do
	t0=$(date +%s)
	"$bin" >"$log" 2>&1
	rc=$?
	dt=$(($(date +%s) - t0))
	echo "$dt $(basename "$bin")" >>"$times"
	ok=$(grep -c '^\[       OK \]' "$log")
	# per-test lines only; cmocka's summary repeats them after "N test(s)"
	sk=$(grep '^\[  SKIPPED \]' "$log" | grep -vc 'test(s)')
	sk=$((sk / 2))
	pass=$((pass + ok))
	skip=$((skip + sk))
	if [ "$rc" -ne 0 ]; then
		# cmocka exits with the number of failed tests; a crash gives >= 128
		if [ "$rc" -ge 128 ]; then n=1; else n=$rc; fi
		fail=$((fail + n))
		echo "FAIL $(basename "$bin") (exit $rc):"
		grep -E 'FAILED|ERROR|error|Sanitizer|runtime error' "$log" | head -20
	else
		echo "ok   $(basename "$bin") (${dt} s): $ok passed, $sk skipped"
	fi
done

# TEST_SCRIPTS: only these scripts (make check-portable); default every tests/*.sh
for t in ${TEST_SCRIPTS:-tests/*.sh}; do
	[ "$t" = tests/run.sh ] && continue
	t0=$(date +%s)
	sh "$t" >"$log" 2>&1
	rc=$?
	dt=$(($(date +%s) - t0))
	echo "$dt $t" >>"$times"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
	f=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
	s=$(echo "$line" | sed -n 's/.* \([0-9]*\) skipped.*/\1/p')
	pass=$((pass + ${p:-0}))
	fail=$((fail + ${f:-0}))
	skip=$((skip + ${s:-0}))
	if [ "$rc" -ne 0 ] || [ -z "$line" ]; then
		[ "${f:-0}" -eq 0 ] && fail=$((fail + 1))
		echo "FAIL $t (exit $rc):"
		grep -E '^FAIL|rror|Sanitizer' "$log" | head -30
	else
		echo "ok   $t (${dt} s): $line"
	fi
done

echo "slowest: $(sort -rn "$times" | head -n 8 | awk '{printf "%s%s %s s", (NR > 1 ? ", " : ""), $2, $1}')"
echo "all tests: $(($(date +%s) - t_all)) s"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
