#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/stream_outputs.sh: issue 34 item 3. The machine-readable outputs are written
# as streams (ali_jw, report_jsonw.c), not as a json-c tree of the whole model printed
# at the end. On a 10,000-layer model (built here with tools/mkfixtures.py: every layer a
# CPU fallback) the peak RSS of `plan --format json` stays within 6 MB
# of the text plan's (its tree took 20 MB more) and that of `check --format sarif` (one
# result per fallback layer: 10,000, spilled to a temporary file) within 6 MB of the text
# check's (its tree took 124 MB more); both documents are whole and valid JSON.
#   ANELINT=build/anelint sh tests/stream_outputs.sh      (from the repo root)
set -u
: "${ANELINT:=build/anelint}"
pass=0 fail=0 skip=0
T=$(mktemp -d "${TMPDIR:-/tmp}/anelint-stream.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
ok() { pass=$((pass + 1)); echo "ok $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }

python3 - "$T/many.mlmodel" <<'PY'
import sys
sys.path.insert(0, "tools")
sys.dont_write_bytecode = True
from mkfixtures import array_feature, description, layer, model, nn_body, pool
x = array_feature("x", [1, 8, 64, 64])
layers = [layer("p%d" % i, ["x"], ["p%d" % i], 120, pool(0, [15, 15], [3, 3])) for i in range(10000)]
desc = description([x], [array_feature("p0", [])], short="10,000 fallback layers")
open(sys.argv[1], "wb").write(model(4, desc, 500, nn_body(layers)))
PY

"$ANELINT" plan --no-config --format json "$T/many.mlmodel" >"$T/plan.json" 2>"$T/err"
rc=$?
python3 - "$T/plan.json" <<'PY' && ok "plan JSON of 10,000 layers: whole and valid (exit $rc)" || bad "plan JSON: exit $rc, not the document"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["models"][0]
assert d["command"] == "plan" and len(m["layers"]) == 10000 and len(m["bar"]) == 10000, "short"
assert m["totals"]["layers"] == 10000 and m["layers"][9999]["name"] == "p9999"
PY
"$ANELINT" check --no-config --format sarif "$T/many.mlmodel" >"$T/check.sarif" 2>"$T/err"
rc=$?
python3 - "$T/check.sarif" <<'PY' && ok "SARIF of 10,000 fallback layers: whole and valid (exit $rc)" || bad "SARIF: exit $rc, not the document"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["runs"][0]
assert len(r["results"]) == 10000 and r["artifacts"] and r["tool"]["driver"]["rules"], "short"
assert r["results"][-1]["properties"]["index"] == 9999 and r["properties"]["models"]
PY

rss() { # rss COMMAND FORMAT: peak resident KB of COMMAND of the model
	/usr/bin/time -v "$ANELINT" "$1" --no-config --format "$2" "$T/many.mlmodel" 2>&1 >/dev/null |
		sed -n 's/.*Maximum resident set size (kbytes): *//p'
}
if [ ! -x /usr/bin/time ] || ! /usr/bin/time -v true >/dev/null 2>&1; then
	skip=$((skip + 1))
	echo "skip memory: no GNU /usr/bin/time -v"
elif grep -q __asan_init "$ANELINT" 2>/dev/null; then
	skip=$((skip + 1)) # AddressSanitizer's quarantine and shadow memory: RSS is not the program's
	echo "skip memory: a sanitizer build"
else
	t=$(rss plan text)
	j=$(rss plan json)
	[ -n "$t" ] && [ -n "$j" ] && [ "$j" -lt $((t + 6144)) ] &&
		ok "plan JSON peak RSS $j KB, text $t KB: no tree of the layers" ||
		bad "plan JSON peak RSS ${j:-?} KB against text ${t:-?} KB (a tree of every layer?)"
	t=$(rss check text)
	j=$(rss check sarif)
	[ -n "$t" ] && [ -n "$j" ] && [ "$j" -lt $((t + 6144)) ] &&
		ok "SARIF peak RSS $j KB, text check $t KB: no tree of the results" ||
		bad "SARIF peak RSS ${j:-?} KB against text check ${t:-?} KB (a tree of every result?)"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
