# SPDX-License-Identifier: MIT
# tests/lib/fix_pass.sh: what the tests of the NeuralNetwork passes share
# (tests/pass_<pass name>.sh, tests/fix.sh). Sourced from the repository root
# after T (a scratch directory) is set; defines ANELINT, F (the crafted
# fixtures, tools/mkfixtures.py), the counters and ok / bad / fallbacks, npy,
# applies / left / has (each NeuralNetwork pass on its crafted fixture: the pass
# is applied (JSON report), the fallbacks drop to the expected count, the proof
# passes within the class (exact: bit-identical), the output is written, parses
# with protoc --decode_raw and re-loads; the layers a pass must refuse are left
# with their reason) and summary (the closing line and exit status).
: "${ANELINT:=build/anelint}"
F=tests/data/crafted
D=tests/data/converted
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
# json field of the "before"/"after" summary: fallbacks FIELD FILE
fallbacks() { sed -n "s/.*\"$1\": {[^}]*\"fallbacks\": \([0-9]*\).*/\1/p" "$2"; }
# npy FILE SHAPE PYEXPR: an fp32 .npy of SHAPE ("1,8,4,4") holding the list PYEXPR
npy() {
	python3 -c '
import struct, sys
shape = tuple(int(d) for d in sys.argv[2].split(","))
vals = eval(sys.argv[3])
n = 1
for d in shape:
    n *= d
assert len(vals) == n
h = "{\x27descr\x27: \x27<f4\x27, \x27fortran_order\x27: False, \x27shape\x27: %s, }" % (shape,)
h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
open(sys.argv[1], "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() +
                              struct.pack("<%df" % n, *vals))' "$@"
}
# applies NAME BEFORE AFTER CLASS PASS... (extra fix arguments in $FIXARGS)
applies() {
	name=$1 want_b=$2 want_a=$3 cls=$4
	shift 4
	out="$T/fx_$name.mlmodel" js="$T/fx_$name.json"
	rm -f "$out"
	"$ANELINT" fix "$F/fix_$name.mlmodel" -o "$out" --format json $FIXARGS >"$js" 2>"$T/fx.err"
	rc=$?
	why=""
	[ $rc -eq 0 ] || why="$why exit $rc;"
	[ "$(fallbacks before "$js")" = "$want_b" ] && [ "$(fallbacks after "$js")" = "$want_a" ] ||
		why="$why fallbacks $(fallbacks before "$js") -> $(fallbacks after "$js"), not $want_b -> $want_a;"
	for p in "$@"; do
		grep -q "\"pass\": \"$p\", \"rule\": \"[A-Z0-9]*\", \"class\": \"$cls\", \"applied\": true" "$js" ||
			why="$why $p not applied;"
	done
	grep -q '"proof": {.*"proved": true, "pass": true' "$js" || why="$why proof;"
	if [ "$cls" = exact ]; then
		! grep -q '"identical": false' "$js" && grep -q '"identical": true' "$js" || why="$why not bit-identical;"
	fi
	grep -q '"written": true' "$js" && [ -s "$out" ] || why="$why not written;"
	protoc --decode_raw <"$out" >/dev/null 2>&1 || why="$why protoc --decode_raw fails;"
	"$ANELINT" check --all "$out" >"$T/fx_$name.check" 2>&1
	[ $? -le 1 ] || why="$why does not re-load;"
	dup=$(awk '$1 ~ /^[0-9]+$/ { print $2 }' "$T/fx_$name.check" | sort | uniq -d)
	[ -z "$dup" ] || why="$why layer names twice: $dup;"
	if [ -z "$why" ]; then ok; else bad "fix_$name:$why"; cat "$js"; fi
}
# left NAME LAYER TEXT: the JSON report of the last `applies NAME` leaves LAYER with TEXT in its reason
left() {
	grep -q "{\"layer\": \"$2\", .*\"applied\": false, \"why_not\": \".*$3" "$T/fx_$1.json" && ok ||
		bad "fix_$1: $2 not left with '$3'"
}
# has NAME COUNT TYPE: the re-loaded output of `applies NAME` has COUNT layers of TYPE
has() {
	n=$(grep -c " $3 " "$T/fx_$1.check")
	[ "$n" -eq "$2" ] && ok || bad "fix_$1: $n $3 layers in the output ($2 expected)"
}
FIXARGS=
summary() {
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ]
}
# judge MODEL: Core ML's own validator (coremltools, when built) takes MODEL; else a skip
: "${VALIDATOR:=/work/ct/validate}"
judge() {
	if [ -x "$VALIDATOR" ]; then
		"$VALIDATOR" "$1" >"$T/ct.out" 2>&1 && grep -q '^VALID' "$T/ct.out" && ok ||
			{ bad "Core ML validator: $1"; cat "$T/ct.out"; }
	else
		skip=$((skip + 1))
	fi
}
# fixed IN OUT PASS AFTER ARGS...: fix ARGS applies PASS once with the report AFTER,
# the proof passes, the output is written and re-loads (for the passes of a whole
# model: nn-io-fp16, input-*, mil-fp16-compute, mil-blockwise-to-per-channel)
fixed() {
	in=$1 out=$2 pass_name=$3 after=$4
	shift 4
	rm -rf "$out"
	"$ANELINT" fix "$in" -o "$out" --format json "$@" >"$T/f.json" 2>"$T/f.err"
	rc=$?
	why=""
	[ $rc -eq 0 ] || why="$why exit $rc;"
	[ "$(grep -c "\"pass\": \"$pass_name\", \"rule\": \"[A-Z0-9]*\", \"class\": \"[a-z]*\", \"applied\": true, \"after\": \"$after\"" "$T/f.json")" = 1 ] ||
		why="$why $pass_name not applied once with '$after';"
	grep -q '"proof": {.*"proved": true, "pass": true' "$T/f.json" || why="$why proof;"
	[ -e "$out" ] && grep -q '"written": true' "$T/f.json" || why="$why not written;"
	"$ANELINT" check "$out" >/dev/null 2>&1
	[ $? -le 1 ] || why="$why does not re-load;"
	if [ -z "$why" ]; then ok; else bad "$in $*:$why"; cat "$T/f.json" "$T/f.err"; fi
}
# refusal IN PASS WHY ARGS...: fix --dry-run ARGS leaves PASS not applied, its reason WHY
refusal() {
	in=$1 pass_name=$2 what=$3
	shift 3
	"$ANELINT" fix "$in" --dry-run --format json "$@" >"$T/r.json" 2>/dev/null
	grep -q "\"pass\": \"$pass_name\", .*\"applied\": false, \"why_not\": \"[^\"]*$what" "$T/r.json" && ok ||
		{ bad "$in $*: $pass_name not left with '$what'"; cat "$T/r.json"; }
}
