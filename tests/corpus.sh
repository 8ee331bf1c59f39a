#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/corpus.sh: every model in ../shared/corpus (converted/ and real/) must load and check:
# exit 0 or 1, nothing on stderr, valid JSON, and (tests/corpus_counts.py) the same model type,
# spec version and layer/op counts per type that coremltools recorded in the corpus manifest. Skips cleanly when
# ../shared is absent (a fresh clone without the shared corpus).
set -u
: "${ANELINT:=build/anelint}"
corpus=${ANELINT_CORPUS:-../shared/corpus}
if [ ! -d "$corpus" ]; then
	echo "skip: no corpus at $corpus"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
pass=0 fail=0
err=$(mktemp) json=$(mktemp)
trap 'rm -f "$err" "$json"' EXIT INT TERM
for m in "$corpus"/converted/*.mlmodel "$corpus"/converted/*.mlpackage \
	"$corpus"/real/*.mlmodel "$corpus"/real/*.mlpackage; do
	[ -e "$m" ] || continue
	$ANELINT check --format json "$m" >"$json" 2>"$err"
	rc=$?
	if [ "$rc" -gt 1 ] || [ -s "$err" ]; then
		echo "FAIL $m: exit $rc: $(head -c 300 "$err")"
		fail=$((fail + 1))
		continue
	fi
	if ! python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["models"] and not d["errors"]' "$json" 2>"$err"; then
		echo "FAIL $m: bad JSON: $(tail -n 1 "$err")"
		fail=$((fail + 1))
		continue
	fi
	$ANELINT info --format json "$m" >"$json" 2>"$err"
	if [ $? -ne 0 ] || [ -s "$err" ]; then
		echo "FAIL $m: info failed: $(head -c 300 "$err")"
		fail=$((fail + 1))
		continue
	fi
	# layer/op counts, type and spec version must match what coremltools read from the file
	if ! why=$(python3 tests/corpus_counts.py "$corpus" "$m" "$json"); then
		echo "FAIL $m: $why"
		fail=$((fail + 1))
		continue
	fi
	pass=$((pass + 1))
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
