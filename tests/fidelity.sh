#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/fidelity.sh: the placement predictions against tests/observed (docs/fidelity.md),
# in every `make check` (so in CI): checks that the committed cases.json and README.md are
# what tools/mkobserved.py generates, generates the models (3 s, never committed) and fails
# when the agreement over all cases drops below FIDELITY_MIN percent, or that of the first batch
# (the cases the rules were written from) below 95, issue #15's gate: 90 overall since the second
# batch of reports (2026-12-07: 91.3% over all cases; the first batch keeps 96.7%, above issue
# #15's target of 95, which was the gate before); also fails when a report of cases.json is not in
# the committed development / held-out split (tests/observed/split.json, issue #30). Shows the
# overall, development, held-out and leave-one-report-out figures. The same check as
# `make fidelity`.
set -u
: "${ANELINT:=build/anelint}"
: "${BUILD:=build}"
: "${FIDELITY_MIN:=90}"
: "${FIDELITY_BATCH_MIN:=2026-12-07=95}"
out="$BUILD/observed"
if ! python3 tools/mkobserved.py --check >/dev/null; then
	echo "FAIL tests/observed/cases.json or README.md differ from tools/mkobserved.py's output"
	echo "0 passed, 1 failed"
	exit 1
fi
if ! python3 tests/observed/split.py >/dev/null; then
	python3 tests/observed/split.py
	echo "FAIL tests/observed/split.json does not assign every report (tests/observed/split.py --draw)"
	echo "0 passed, 1 failed"
	exit 1
fi
if ! python3 tools/mkobserved.py --out "$out" >/dev/null; then
	echo "FAIL tools/mkobserved.py could not generate the models"
	echo "0 passed, 1 failed"
	exit 1
fi
pass=0 fail=0
python3 tests/fidelity.py --anelint "$ANELINT" --models "$out/models" --min "$FIDELITY_MIN" --min-batch "$FIDELITY_BATCH_MIN" >"$out/fidelity.txt"
rc=$?
sed -n 2,5p "$out/fidelity.txt"
if [ "$rc" -eq 0 ]; then
	pass=$((pass + 1))
else
	sed -n '/^disagreements/,$p' "$out/fidelity.txt" | head -40
	fail=$((fail + 1))
fi

# A layer whose JSON says "verdict": "uncertain" (or "ane": null) counts in the agreement but
# not as a confident verdict: coverage drops and confident accuracy leaves it out. A stub in
# front of anelint marks the SDPA of sdpa_1x1x128x64 uncertain; with matmul_4x4 (4 ops) that is
# 5 ops observed, 4 of them confident.
stub="$out/uncertain-anelint"
{
	echo '#!/bin/sh'
	echo 'if [ "$1" = check ] && [ "$2" != --help ]; then'
	echo "	\"$ANELINT\" \"\$@\" | python3 -c 'import json, sys"
	echo 'd = json.load(sys.stdin)'
	echo 'for m in d["models"]:'
	echo '    for l in m["layers"]:'
	echo '        if l["name"] == "sdpa":'
	echo '            l.update(verdict="uncertain", ane=None, p_ane=0.5)'
	echo "json.dump(d, sys.stdout)'"
	echo 'else'
	echo "	exec \"$ANELINT\" \"\$@\""
	echo 'fi'
} >"$stub"
chmod +x "$stub"
got=$(python3 tests/fidelity.py --anelint "$stub" --models "$out/models" --min 0 --json --no-loro \
	--case sdpa_1x1x128x64 --case matmul_4x4 | python3 -c 'import json, sys
a = json.load(sys.stdin)["parts"]["all"]
print(a["ops"]["observed"], a["coverage"]["agree"], a["confident_accuracy"]["observed"])')
if [ "$got" = "5 4 4" ]; then
	pass=$((pass + 1))
else
	echo "FAIL an uncertain verdict: ops observed, confident, confident scored = '$got', want '5 4 4'"
	fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
