#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/plan_corpus.sh: `anelint plan` on every model of tests/data and of ../shared/corpus
# (converted/ and real/, when present) completes: exit 0 or 1, nothing on stderr (but the
# line naming the releases --os all leaves out: they cannot load the model), for the
# default target, for --target all and for --os all; and its JSON, like that of `check --target
# all` and `check --os all`,
# validates against docs/schema/plan.schema.json and docs/schema/check.schema.json
# (tests/validate_json.py). The jsonschema Python module is required: without it this
# test fails (tools/install-deps.sh installs python3-jsonschema). Then check, plan and report
# must place every layer of every model alike (tests/agree.py; the corpus's modern/ and
# compiled/ models too, those anelint cannot load skipped).
set -u
: "${ANELINT:=build/anelint}"
corpus=${ANELINT_CORPUS:-../shared/corpus}
pass=0 fail=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM

# The first python3 that has jsonschema: the one on PATH, else Debian's (which
# python3-jsonschema installs into when PATH's python3 is another build).
PY=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import jsonschema' 2>/dev/null; then PY=$p; break; fi
done
if [ -z "$PY" ]; then
	echo "FAIL: python3 cannot import jsonschema (apt-get install python3-jsonschema;"
	echo "      tools/install-deps.sh installs it); plan JSON cannot be validated"
	echo "0 passed, 1 failed"
	exit 1
fi

n=0
for m in tests/data/converted/*.mlmodel tests/data/converted/*.mlpackage \
	tests/data/crafted/*.mlmodel tests/data/crafted/*.mlpackage \
	"$corpus"/converted/*.mlmodel "$corpus"/converted/*.mlpackage \
	"$corpus"/real/*.mlmodel "$corpus"/real/*.mlpackage; do
	[ -e "$m" ] || continue
	n=$((n + 1))
	ok=1
	for args in "plan --format json" "plan --target all --format json" \
		"plan --target all --policy optimistic" "check --target all --format json" \
		"check --os all --format json" "plan --os all --target a17 --format json"; do
		# shellcheck disable=SC2086
		$ANELINT $args "$m" >"$dir/out" 2>"$dir/err"
		rc=$?
		# --os all leaves out the releases that cannot load the model, and says so (#29)
		grep -v '^anelint: note: .* cannot load it (left out)$' "$dir/err" >"$dir/err2"
		mv "$dir/err2" "$dir/err"
		if [ "$rc" -gt 1 ] || [ -s "$dir/err" ]; then
			echo "FAIL $m: anelint $args: exit $rc: $(head -c 300 "$dir/err")"
			ok=0
			break
		fi
		case $args in
		"plan --format json") cp "$dir/out" "$dir/plan_$n.json" ;;
		"plan --target all --format json") cp "$dir/out" "$dir/planall_$n.json" ;;
		"check --target all --format json") cp "$dir/out" "$dir/check_$n.json" ;;
		"check --os all --format json") cp "$dir/out" "$dir/check_os_$n.json" ;;
		"plan --os all --target a17 --format json") cp "$dir/out" "$dir/plan_os_$n.json" ;;
		esac
	done
	if [ "$ok" = 1 ]; then
		echo "$m" >"$dir/name_$n"
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
	fi
done

# one validator run per schema; a failing document fails its model
for kind in plan check; do
	[ "$kind" = plan ] && files=$(ls "$dir"/plan_*.json "$dir"/planall_*.json 2>/dev/null)
	[ "$kind" = check ] && files=$(ls "$dir"/check_*.json 2>/dev/null)  # check_os_* too
	[ -n "$files" ] || continue
	# shellcheck disable=SC2086
	"$PY" tests/validate_json.py "docs/schema/$kind.schema.json" $files >"$dir/v" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ]; then
		if [ "$rc" -ne 1 ]; then
			cat "$dir/v"
			fail=$((fail + 1))
			continue
		fi
		bad=$(grep -c '^FAIL' "$dir/v")
		sed "s|$dir/||" "$dir/v" | head -20
		fail=$((fail + bad))
		pass=$((pass - bad))
	fi
done
# check, plan and report place every layer alike (issue #15), for three sets of target,
# release and compute units: tests/agree.py
# shellcheck disable=SC2046
python3 tests/agree.py --anelint "$ANELINT" $(cat "$dir"/name_* 2>/dev/null) \
	"$corpus"/modern/*.mlmodel "$corpus"/modern/*.mlpackage "$corpus"/compiled/*.mlmodelc \
	>"$dir/agree" 2>&1
rc=$?
grep '^FAIL' "$dir/agree" | head -20
counts=$(tail -1 "$dir/agree")
echo "agree: $counts"
a_pass=$(echo "$counts" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
a_fail=$(echo "$counts" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
pass=$((pass + ${a_pass:-0}))
fail=$((fail + ${a_fail:-0}))
[ "$rc" -le 1 ] || fail=$((fail + 1))

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
