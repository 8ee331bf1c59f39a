#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/scale_cli.sh: issue 28, classes 4-6 (hostile input at scale), each with its
# regression test:
#   4. a baseline is matched by hash: 20,000 findings against a valid 300,000-entry
#      baseline (built here with python3) in seconds, not minutes (0.2 s of CPU; the
#      bounds are generous: the machine may be shared); suppressions by rule, compare's
#      join by name likewise;
#   5. a directory of models is checked a model at a time: peak memory does not grow
#      from 200 to 2,000 models (one fixture copied; /usr/bin/time -v measures);
#   6. subdirectories past the depth limit are named in a warning and the run does
#      not pass (exit 3); a folder holding only deep models says so.
#   ANELINT=build/anelint sh tests/scale_cli.sh      (from the repo root)
set -u
: "${ANELINT:=build/anelint}"
pass=0 fail=0 skip=0
T=$(mktemp -d "${TMPDIR:-/tmp}/anelint-scale.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
FIX=tests/data/converted/pool_k15_s3__nn_ios13.mlmodel
ok() { pass=$((pass + 1)); echo "ok $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
# a run over its time limit (the old quadratic matching took minutes) fails, not hangs
TIMEOUT=
command -v timeout >/dev/null 2>&1 && TIMEOUT="timeout 120"
run() { $TIMEOUT "$@" >"$T/out" 2>"$T/err"; rc=$?; }
# the time bounds (seconds), 4x under a sanitizer build
slow=1
grep -q __asan_init "$ANELINT" 2>/dev/null && slow=4

# ---- 6. depth: a model 34 folders down beside one at the top
d="$T/deep/top"
for i in $(seq 1 33); do d="$d/d$i"; done
mkdir -p "$d" && cp "$FIX" "$d/deep.mlmodel" && cp "$FIX" "$T/deep/top/shallow.mlmodel"
run "$ANELINT" check --no-config --fail-on never "$T/deep/top"
[ $rc -eq 3 ] && grep -q '^anelint: warning: .*/d32/d33: not searched: more than 32 directories below' "$T/err" &&
	grep -q 'shallow.mlmodel' "$T/out" && ok "depth: a subtree past the limit is named and the run exits 3" ||
	{ bad "depth: exit $rc (a model past the limit passed unchecked)"; cat "$T/err"; }
rm "$T/deep/top/shallow.mlmodel"
run "$ANELINT" check --no-config "$T/deep/top"
[ $rc -eq 3 ] && grep -q 'no model within 32 directories of this one .*1 deeper directory was not searched' "$T/err" &&
	! grep -q 'no model in this directory' "$T/err" && ok "depth: only a deep model: the error says so" ||
	{ bad "depth: only a deep model: exit $rc"; cat "$T/err"; }
mkdir "$T/none"
run "$ANELINT" check --no-config "$T/none"
[ $rc -eq 3 ] && grep -q 'no model in this directory (searched for .mlmodel, .mlpackage and .mlmodelc' "$T/err" &&
	ok "an empty folder: the kinds searched include .mlmodelc" || bad "an empty folder: exit $rc"

# ---- 4. a 300,000-entry baseline, 20,000 findings (10,000 pooling layers, ANE008 + ANE009 each)
python3 - "$T/many.mlmodel" <<'PY'
import sys
sys.path.insert(0, "tools")
sys.dont_write_bytecode = True
from mkfixtures import array_feature, description, layer, model, nn_body, pool
x = array_feature("x", [1, 8, 64, 64])
layers = [layer("p%d" % i, ["x"], ["p%d" % i], 120, pool(0, [15, 15], [3, 3])) for i in range(10000)]
desc = description([x], [array_feature("p0", [])], short="20,000 findings")
open(sys.argv[1], "wb").write(model(4, desc, 500, nn_body(layers)))
PY
run "$ANELINT" check --no-config --write-baseline "$T/b.json" "$T/many.mlmodel"
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["findings"]))' "$T/b.json" 2>/dev/null)
[ $rc -eq 0 ] && [ "$n" = 20000 ] && ok "--write-baseline records 20000 findings" || bad "--write-baseline: exit $rc, $n"
python3 - "$T/b.json" "$T/b300k.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
real = d["findings"]
# other models' entries first: a model's findings are the last entries looked at
d["findings"] = [{"model": "o%d" % (i % 97), "layer": "L%d" % i, "rule": "ANE%03d" % (i % 100)}
                 for i in range(300000 - len(real))] + real
json.dump(d, open(sys.argv[2], "w"), separators=(",", ":"))
PY
t0=$(date +%s)
run "$ANELINT" check --no-config --baseline "$T/b300k.json" "$T/many.mlmodel"
t1=$(date +%s)
[ $rc -eq 0 ] && grep -q 'suppressed: 20000 findings accepted' "$T/out" && [ $((t1 - t0)) -le $((30 * slow)) ] &&
	ok "20000 findings x 300000 baseline entries matched in $((t1 - t0)) s (was minutes)" ||
	{ bad "baseline 300k: exit $rc in $((t1 - t0)) s"; tail -3 "$T/out"; cat "$T/err"; }
# the baseline's fast reader and json-c read the same entries: escapes (\u, \", \n), keys
# and values it skips, and a key it leaves to json-c (the whole file then read by json-c)
H=tests/data/crafted/hostile_names.mlmodel
"$ANELINT" check --no-config --write-baseline "$T/h.json" $H >/dev/null 2>&1
python3 - "$T/h.json" "$T/h_fast.json" "$T/h_slow.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for e in d["findings"]:
    e["seen"] = {"by": [1, 2.5e3, True, None, "\u00e9"], "n": -0.0}
d["extra"] = [[{"a": {}}], []]
json.dump(d, open(sys.argv[2], "w"), ensure_ascii=True, indent="\t")
d["a key longer than the fast reader reads"] = 1
json.dump(d, open(sys.argv[3], "w"), ensure_ascii=True)
PY
run "$ANELINT" check --no-config --baseline "$T/h_fast.json" $H
a=$(grep -c 'suppressed, baseline' "$T/out")
run "$ANELINT" check --no-config --baseline "$T/h_slow.json" $H
b=$(grep -c 'suppressed, baseline' "$T/out")
# (2 findings of its own and, since the partition's moves are findings, the layer ANE072 moves)
[ "$a" = 3 ] && [ "$b" = 3 ] && ok "baseline readers agree on escaped names (3 and 3 accepted)" ||
	bad "baseline readers: $a accepted by the fast one, $b by json-c (3 expected)"

# suppressions: 2,000 [[suppress]] of other rules and the one that accepts, per finding
python3 - "$T/anelint.toml" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(2000):
        f.write('[[suppress]]\nrule = "ANE0%02d"\nlayer = "q%d"\nreason = "r"\n' % (10 + i % 80, i))
    f.write('[[suppress]]\nrule = "ANE008"\nreason = "kernel"\n[[suppress]]\nrule = "ANE009"\nreason = "stride"\n')
PY
t0=$(date +%s)
run "$ANELINT" check --config "$T/anelint.toml" "$T/many.mlmodel"
t1=$(date +%s)
[ $rc -eq 0 ] && grep -q 'suppressed: 20000 findings accepted' "$T/out" && [ $((t1 - t0)) -le $((10 * slow)) ] &&
	ok "20000 findings x 2002 suppressions in $((t1 - t0)) s" || bad "suppressions: exit $rc in $((t1 - t0)) s"

# evidence matching: 40,000 layers of one name against 40,000 observed ops of that
# name (each op takes the next node of the name: one pass, not one per op)
python3 - "$T/dup.mlmodel" "$T/dup.json" <<'PY'
import json, sys
sys.path.insert(0, "tools")
sys.dont_write_bytecode = True
from mkfixtures import array_feature, description, layer, model, nn_body, pool
n = 40000
x = array_feature("x", [1, 8, 64, 64])
layers = [layer("p", ["x"], ["p"], 120, pool(0, [15, 15], [3, 3])) for i in range(n)]
open(sys.argv[1], "wb").write(model(4, description([x], [array_feature("p", [])], short="one name"), 500,
                                    nn_body(layers)))
ops = [{"name": "p", "type": "pooling", "unit": "cpu"}] * n
json.dump({"schema": "anelint-evidence", "version": 1, "ops": ops}, open(sys.argv[2], "w"))
PY
t0=$(date +%s)
run "$ANELINT" compare "$T/dup.mlmodel" "$T/dup.json"
t1=$(date +%s)
[ $rc -eq 0 ] && grep -q 'ANE008 .*right 40000, wrong 0' "$T/out" && [ $((t1 - t0)) -le $((10 * slow)) ] &&
	ok "evidence: 40000 ops of one name matched in $((t1 - t0)) s" ||
	{ bad "evidence: exit $rc in $((t1 - t0)) s"; tail -3 "$T/out"; head -3 "$T/err"; }

# ---- 5. a folder of models: peak memory does not grow with their number
rss() { # rss DIR FORMAT: peak resident KB of check over DIR
	/usr/bin/time -v "$ANELINT" check --no-config --format "$2" "$1" 2>&1 >"$T/out.$2" |
		sed -n 's/.*Maximum resident set size (kbytes): *//p'
}
python3 - "$FIX" "$T" <<'PY'
import os, shutil, sys
for n in (200, 2000):
    os.mkdir(os.path.join(sys.argv[2], "m%d" % n))
    for i in range(1, n + 1):
        shutil.copyfile(sys.argv[1], os.path.join(sys.argv[2], "m%d" % n, "m%d.mlmodel" % i))
PY
if [ ! -x /usr/bin/time ] || ! /usr/bin/time -v true >/dev/null 2>&1; then
	skip=$((skip + 1))
	echo "skip memory: no GNU /usr/bin/time -v"
elif grep -q __asan_init "$ANELINT" 2>/dev/null; then
	skip=$((skip + 1)) # AddressSanitizer's quarantine holds freed memory: RSS grows by design
	echo "skip memory: a sanitizer build"
else
	for f in text json markdown; do
		a=$(rss "$T/m200" $f)
		b=$(rss "$T/m2000" $f)
		[ -n "$a" ] && [ -n "$b" ] && [ "$b" -lt $((a + 4096)) ] &&
			ok "$f: peak RSS $a KB for 200 models, $b KB for 2000" ||
			bad "$f: peak RSS grows with the models: $a KB for 200, $b KB for 2000"
	done
	n=$(grep -c '^      "path": "m[0-9]*\.mlmodel",$' "$T/out.json")
	[ "$n" = 2000 ] && ok "JSON: 2000 models streamed" || bad "JSON: $n models of 2000"
fi
run "$ANELINT" check --no-config "$T/m2000"
n=$(grep -c '^m[0-9]*\.mlmodel ' "$T/out")
[ $rc -eq 1 ] && [ "$n" = 2000 ] && ok "text: 2000 models, exit 1" || bad "text: $n models, exit $rc"

echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
