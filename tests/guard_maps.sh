#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/guard_maps.sh: the text formats read in the guard-page test mode
# (ANELINT_GUARD_MAPS=1, src/base/file.c): every file anelint maps, and every
# caller's buffer a text parser reads, ends right before a PROT_NONE page, so a
# read one byte past the end is a SIGSEGV (exit >= 128) instead of going unseen.
#   1. the parser unit tests (MIL text, .npy, evidence, rules, the guard tests)
#      run again in the mode, when built;
#   2. the compiled models, evidence samples, rules and configuration fixtures
#      give the same output in the mode as without it;
#   3. each text fixture cut short at many lengths (a model.mil, evidence in every
#      format, a .npy input, a rules file, anelint.toml) is read without a fault:
#      a located error or a result, never a signal.
set -u
: "${ANELINT:=build/anelint}"
: "${BUILD:=build}"
A=$ANELINT
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
G="env ANELINT_GUARD_MAPS=1"

# ---------------------------------------------------------------- 1. unit tests
for u in test_guard test_miltext test_npy test_evidence test_user_rules test_mil; do
	bin=$BUILD/tests/$u
	if [ ! -x "$bin" ]; then
		skip=$((skip + 1))
		continue
	fi
	if $G "$bin" >"$T/u.log" 2>&1; then ok; else
		bad "$u in the guard-page mode: $(grep -E 'FAILED|ERROR|signal' "$T/u.log" | head -5)"
	fi
done

# ---------------------------------------------------------------- 2. same output
# same_out NAME CMD...: CMD's exit code and stdout agree with and without the mode
same_out() {
	name=$1
	shift
	"$@" >"$T/plain.out" 2>/dev/null
	rc1=$?
	$G "$@" >"$T/guard.out" 2>/dev/null
	rc2=$?
	if [ "$rc1" -eq "$rc2" ] && [ "$rc1" -lt 128 ] && cmp -s "$T/plain.out" "$T/guard.out"; then ok; else
		bad "$name: exit $rc1 plain, $rc2 guarded (or the outputs differ)"
	fi
}
for m in tests/data/compiled/*.mlmodelc; do
	same_out "check $m" "$A" check --all --format json "$m"
done
for e in tests/data/evidence/mil_rules.*; do
	same_out "compare $e" "$A" compare tests/data/crafted/mil_rules.mlpackage "$e" --target a17 --format json
done
same_out "compare os_log" "$A" compare tests/data/crafted/nn_rules.mlmodel tests/data/evidence/nn_rules.oslog.txt --format json
same_out "rules --rules" "$A" rules --rules tests/data/rules/cli.rules --format json
same_out "check --config" "$A" check --config examples/ci/anelint.toml tests/data/crafted/nn_tiny.mlmodel

# ---------------------------------------------------------------- 3. cut short
# cuts FILE: FILE's prefixes at 1 and 3 bytes, at 9 points spread over it (the
# seventh byte of each ninth, so not all at a line's end) and one byte short of
# the whole, into $T/cut.N; prints their names
cuts() {
	size=$(wc -c <"$1")
	for n in 1 3 $(for k in 0 1 2 3 4 5 6 7 8; do echo $((k * size / 9 + 7)); done) $((size - 1)); do
		[ "$n" -ge "$size" ] && continue
		head -c "$n" "$1" >"$T/cut.$n"
		echo "$T/cut.$n"
	done
}
# no_fault NAME CMD...: CMD ends without a signal (exit < 128)
no_fault() {
	name=$1
	shift
	$G "$@" >/dev/null 2>"$T/err"
	rc=$?
	if [ "$rc" -lt 128 ]; then ok; else bad "$name: exit $rc (a signal) $(head -c 300 "$T/err")"; fi
}

# a compiled ML Program whose model.mil ends mid-number: one located error, exit 3
mkdir "$T/cut.mlmodelc"
cp tests/data/compiled/coremltools_add_model.mlmodelc/coremldata.bin "$T/cut.mlmodelc/"
printf 'program(1.0)\n{\n  func main<ios17>(tensor<fp32, [1, 3, 12' >"$T/cut.mlmodelc/model.mil"
$G "$A" check "$T/cut.mlmodelc" >/dev/null 2>"$T/err"
rc=$?
if [ "$rc" -eq 3 ] && grep -q "model.mil: offset 56: MIL text line 3, column 42: expected ']'" "$T/err"; then ok; else
	bad "model.mil ending mid-number: exit $rc: $(cat "$T/err")"
fi
# every prefix of a real model.mil
mil=tests/data/compiled/coremltools_add_model.mlmodelc/model.mil
for c in $(cuts "$mil"); do
	cp "$c" "$T/cut.mlmodelc/model.mil"
	no_fault "model.mil cut to $(wc -c <"$c") bytes" "$A" check "$T/cut.mlmodelc"
done
# evidence in every format, cut short
for e in tests/data/evidence/mil_rules.analytics.mil tests/data/evidence/mil_rules.evidence.json \
	tests/data/evidence/mil_rules.inspect.txt tests/data/evidence/mil_rules.table.txt \
	tests/data/evidence/mil_rules.adhoc.txt tests/data/evidence/mil_rules.placement.json \
	tests/data/evidence/nn_rules.oslog.txt; do
	for c in $(cuts "$e"); do
		no_fault "$e cut to $(wc -c <"$c") bytes" "$A" compare tests/data/crafted/mil_rules.mlpackage "$c"
	done
done
# a .npy input whose header ends right after the opening quote of 'descr'
printf '\223NUMPY\001\000\013\000{'"'"'descr'"'"': '"'" >"$T/x.npy"
$G "$A" run tests/data/crafted/nn_tiny.mlmodel --input "x=$T/x.npy" >/dev/null 2>"$T/err"
rc=$?
if [ "$rc" -lt 128 ] && [ "$rc" -ne 0 ] && grep -q 'dtype not supported' "$T/err"; then ok; else
	bad ".npy header cut after 'descr': '': exit $rc: $(cat "$T/err")"
fi
# a rules file and a configuration, cut short
for c in $(cuts tests/data/rules/cli.rules); do
	no_fault "rules cut to $(wc -c <"$c") bytes" "$A" rules --rules "$c"
done
for c in $(cuts examples/ci/anelint.toml); do
	no_fault "anelint.toml cut to $(wc -c <"$c") bytes" "$A" check --config "$c" tests/data/crafted/nn_tiny.mlmodel
done

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
