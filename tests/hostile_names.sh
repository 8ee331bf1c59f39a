#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/hostile_names.sh: names and types from a model in the files anelint writes
# (issue #28 class 7). An ML Program made here (tools/mkfixtures*.py helpers) has
# an op whose type holds a newline and rules-file syntax ("relu\nid: EVIL") and op
# names with a newline, quotes, '#', a comma, a backslash, a control byte and
# invalid UTF-8. Then:
#   1. calibrate, told the op ran on the CPU, writes a rules file that loads (the
#      type is reported as not calibratable, escaped, instead of written raw) and
#      never says "internal error"; with a hostile name on an op a rule moved off
#      the ANE but observed on it, the evidence comment stays one comment line
#   2. every --write-evidence format re-reads with compare, no error, and the
#      formats that can carry the names match every op
#   3. --write-baseline records the hostile name and --baseline accepts it again
#   4. run prints input, output and state names, labels and strings escaped
set -u
: "${ANELINT:=build/anelint}"
A=$ANELINT
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

if ! python3 - "$T/h.mlpackage" <<'EOF'
import os, sys
sys.path.insert(0, "tools")
sys.dont_write_bytecode = True
from mkfixtures_mil import program, write_package, f16, v_int_scalar
from mkfixtures import op, const, ttype
X = [1, 8, 16, 16]
a = 'a"#\n,\\ \x01QQQQ|=(x)'
c = 'c"\n#QQQQ'
ops = [op("relu\nid: EVIL", [("x", "x")], [(a, f16(X))]),
       const("ax", v_int_scalar(1), ttype("int32", [])),
       op("cumsum", [("x", a), ("axis", "ax")], [(c, f16(X))]),
       op("relu", [("x", c)], [("y", f16(X))])]
write_package(sys.argv[1], program([("x", X)], [("y", X)], ops, "hostile names and types"))
p = os.path.join(sys.argv[1], "Data", "com.apple.CoreML", "model.mlmodel")
b = open(p, "rb").read().replace(b"QQQQ", b"Q\xff\xfeQ")  # invalid UTF-8, lengths kept
open(p, "wb").write(b)
EOF
then
	echo "0 passed, 1 failed"
	exit 1
fi
M=$T/h.mlpackage
"$A" check --all "$M" >/dev/null 2>"$T/err"
[ $? -le 1 ] && ok || { bad "the hostile model does not load: $(cat "$T/err")"; }

# 1. calibrate: the op with the newline in its type observed on the CPU
"$A" compare "$M" --write-evidence json -o "$T/e.json" >/dev/null 2>&1 || bad "write evidence json"
python3 -c '
import json, sys
j = json.load(open(sys.argv[1], encoding="utf-8", errors="surrogateescape"))
for o in j["ops"]:
    if "EVIL" in o["type"]:
        o["unit"] = "cpu"
    if o["type"] == "cumsum":  # predicted on the CPU (ANE020), observed on the ANE
        o["unit"] = "ane"
json.dump(j, open(sys.argv[2], "w", encoding="utf-8", errors="surrogateescape"))
' "$T/e.json" "$T/cal.json" || bad "edit evidence"
"$A" calibrate "$M" "$T/cal.json" -o "$T/cal.rules" >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -le 1 ] && [ -f "$T/cal.rules" ] && ! grep -q "internal error" "$T/err"; then ok; else
	bad "calibrate on a hostile op type: exit $rc: $(cat "$T/out" "$T/err")"; fi
grep -q "not calibratable" "$T/out" "$T/err" && ok || bad "calibrate: the hostile type not reported: $(cat "$T/err")"
grep -q '^id: EVIL' "$T/cal.rules" && bad "calibrate: the type's newline made a rule line" || ok
"$A" rules --rules "$T/cal.rules" >/dev/null 2>"$T/err" && ok || bad "the calibrated rules do not load: $(cat "$T/err")"
# every line a comment, a key or blank: no line started by the model's text
if grep -v '^#' "$T/cal.rules" | grep -v '^$' | grep -qv '^[a-z]*: '; then
	bad "calibrate: a line that is neither comment nor key: $(grep -v '^#' "$T/cal.rules" | grep -v '^$' | grep -v '^[a-z]*: ')"
else ok; fi
# only valid UTF-8 (the rules file must be)
python3 -c 'import sys; open(sys.argv[1], encoding="utf-8").read()' "$T/cal.rules" 2>/dev/null && ok ||
	bad "calibrate wrote invalid UTF-8"

# 2. every evidence format re-reads; those that carry names match every op
for f in json mil plan mlperf oslog placement; do
	"$A" compare "$M" --write-evidence $f -o "$T/ev.$f" >/dev/null 2>"$T/err" || { bad "--write-evidence $f: $(cat "$T/err")"; continue; }
	"$A" compare "$M" "$T/ev.$f" --format json >"$T/cmp.json" 2>"$T/err"
	rc=$?
	if [ $rc -le 1 ] && ! grep -q "internal error" "$T/err"; then ok; else bad "compare with its own $f evidence: exit $rc: $(cat "$T/err")"; fi
	case $f in json | mlperf)
		grep -q '"unmatched": *0,' "$T/cmp.json" && grep -q '"matched_by_order": *0,' "$T/cmp.json" && ok || bad "$f evidence: not every op matched: $(head -c 600 "$T/cmp.json")" ;;
	esac
done

# 3. the baseline: the hostile name written, accepted again
"$A" check "$M" --write-baseline "$T/b.json" >/dev/null 2>"$T/err"
[ $? -eq 0 ] && ok || bad "--write-baseline: $(cat "$T/err")"
"$A" check "$M" --baseline "$T/b.json" --format json >"$T/c.json" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] && grep -q '"suppressed"' "$T/c.json" && ok || bad "--baseline of its own findings: exit $rc: $(cat "$T/err")"

# 4. run: input and output names from the model reach the terminal escaped (an escape
#    sequence and a newline in them neither drive the terminal nor forge a line)
if python3 - "$T/r.mlpackage" <<'EOF'
import sys
sys.path.insert(0, "tools")
sys.dont_write_bytecode = True
from mkfixtures_mil import program, write_package, f16
from mkfixtures import op
X = [1, 4]
i, o = "in\x1b[31mput", "out\nFORGED put"
write_package(sys.argv[1], program([(i, X)], [(o, X)], [op("relu", [("x", i)], [(o, f16(X))])], "hostile I/O names"))
EOF
then
	"$A" run "$T/r.mlpackage" --random >"$T/run.txt" 2>"$T/err"
	rc=$?
	if [ $rc -eq 0 ] && ! grep -q "$(printf '\033')" "$T/run.txt" && ! grep -q '^FORGED' "$T/run.txt" &&
		grep -q 'in\\x1b\[31mput' "$T/run.txt" && grep -q 'out\\x0aFORGED' "$T/run.txt"; then ok; else
		bad "run printed a model's names raw (exit $rc): $(od -c "$T/run.txt" | head -8) $(cat "$T/err")"
	fi
else
	bad "could not make the hostile I/O model"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
