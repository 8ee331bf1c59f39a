#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/plan_json_stream.sh: issue 34 item 3. `plan --format json` is written as a
# stream (report_plan.c through ali_jw), not as a json-c tree of every layer printed at
# the end: on a 10,000-layer model (built here with tools/mkfixtures.py: every layer a
# CPU fallback, so 10,000 layers, segments and switches in the document) its peak RSS
# stays within 6 MB of the text plan's (the tree took ~30 MB more), and the document is
# whole and valid JSON.
#   ANELINT=build/anelint sh tests/plan_json_stream.sh      (from the repo root)
set -u
: "${ANELINT:=build/anelint}"
pass=0 fail=0 skip=0
T=$(mktemp -d "${TMPDIR:-/tmp}/anelint-planjson.XXXXXX") || exit 1
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

rss() { # rss FORMAT: peak resident KB of plan of the model
	/usr/bin/time -v "$ANELINT" plan --no-config --format "$1" "$T/many.mlmodel" 2>&1 >/dev/null |
		sed -n 's/.*Maximum resident set size (kbytes): *//p'
}
if [ ! -x /usr/bin/time ] || ! /usr/bin/time -v true >/dev/null 2>&1; then
	skip=$((skip + 1))
	echo "skip memory: no GNU /usr/bin/time -v"
elif grep -q __asan_init "$ANELINT" 2>/dev/null; then
	skip=$((skip + 1)) # AddressSanitizer's quarantine and shadow memory: RSS is not the program's
	echo "skip memory: a sanitizer build"
else
	t=$(rss text)
	j=$(rss json)
	[ -n "$t" ] && [ -n "$j" ] && [ "$j" -lt $((t + 6144)) ] &&
		ok "plan JSON peak RSS $j KB, text $t KB: no tree of the layers" ||
		bad "plan JSON peak RSS ${j:-?} KB against text ${t:-?} KB (a tree of every layer?)"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
