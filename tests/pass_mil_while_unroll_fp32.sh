#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_mil_while_unroll_fp32.sh: mil-while-unroll on an fp32 program
# (src/rewrite/passes/mil_while_unroll.c, docs/surgery.md): the while_loop
# coremltools 8.3 writes for PyTorch's GRU, computing in fp32
# (tests/data/converted/gru__mlp_fp32.mlpackage, tests/data/PROVENANCE.md).
# mil-fp16-compute refuses a program with a while_loop (its nested blocks) and
# the unrolled fp32 ops alone would still fall back (ANE029); with --allow
# approximate fix's rounds unroll it (exact) and convert the unrolled program in
# the next round:
#   - exact only: refused, saying that it needs --allow approximate
#   - --allow approximate: round 1 mil-while-unroll (bit-identical), round 2
#     mil-fp16-compute, then mil-io-fp16; 29 -> 0 fallbacks, the fixed point,
#     no while_loop / gather / scatter left; verify within fp16's 1e-2
#   - --dry-run reports the same rewrites, writes nothing
#   - --max-rounds 1: the unrolling alone, the pending round said
#   - Apple's validator and coremltools' MIL load on the output (when built)
set -u
: "${ANELINT:=build/anelint}"
G=tests/data/converted/gru__mlp_fp32.mlpackage
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
json() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }
changed() { json "$1" "' '.join(str(r['round']) + ':' + r['layer'] + ':' + r['pass'] for r in j['rewrites'] if r['applied'])"; }

# 1. exact only: the loop left, the reason names the class it needs
"$ANELINT" fix "$G" -o "$T/e.mlpackage" --format json >"$T/e.json" 2>&1
[ "$(changed "$T/e.json")" = "" ] &&
	grep -q '"layer": "while_loop_0_0".*"why_not": ".squeeze_2. (squeeze) computes in fp32: unrolled it would still fall back (ANE029), and mil-fp16-compute would not convert the unrolled program: it needs --allow approximate"' "$T/e.json" &&
	ok || { bad "exact: reason"; cat "$T/e.json"; }

# 2. --allow approximate: unrolled, then converted, to the fixed point
"$ANELINT" fix "$G" -o "$T/g.mlpackage" --allow approximate --format json >"$T/g.json" 2>"$T/g.err"
rc=$?
want="1:while_loop_0_0:mil-while-unroll 2:main:mil-fp16-compute 3:x_to_fp16:mil-io-fp16 3:var_27:mil-io-fp16"
[ $rc -eq 0 ] && [ "$(changed "$T/g.json")" = "$want" ] && [ "$(json "$T/g.json" "j['fixed_point']")" = True ] &&
	ok || { bad "approximate: rc $rc, rewrites $(changed "$T/g.json")"; cat "$T/g.err"; }
[ "$(json "$T/g.json" "j['before']['fallbacks']")" = 29 ] && [ "$(json "$T/g.json" "j['after']['fallbacks']")" = 0 ] &&
	ok || bad "approximate: fallbacks $(json "$T/g.json" "j['before']['fallbacks'], j['after']['fallbacks']")"
# round 1 exact and bit-identical
[ "$(json "$T/g.json" "[r for r in j['rewrites'] if r['applied']][0]['class']")" = exact ] &&
	[ "$(json "$T/g.json" "all(o.get('identical') for o in j['rounds'][0]['proof']['outputs'])")" = True ] &&
	ok || { bad "approximate: round 1 not exact"; json "$T/g.json" "j['rounds'][0]['proof']"; }
"$ANELINT" info --format mil "$T/g.mlpackage" >"$T/g.mil" 2>&1
! grep -qE ' = (while_loop|gather|scatter)\(' "$T/g.mil" && ! grep -qE 'tensor<fp32, \[1, 64\]> [a-z_0-9]+ = linear' "$T/g.mil" &&
	[ "$(grep -c ' = linear(' "$T/g.mil")" = 61 ] && ok || { bad "approximate: ops left"; grep -cE 'while_loop|linear' "$T/g.mil"; }
"$ANELINT" verify "$G" "$T/g.mlpackage" --random --tol 1e-2 >"$T/g.ver" 2>&1 && grep -q '^PASS' "$T/g.ver" &&
	ok || { bad "approximate: verify"; cat "$T/g.ver"; }

# 3. --dry-run parity
"$ANELINT" fix "$G" -o "$T/gd.mlpackage" --allow approximate --dry-run --format json >"$T/gd.json" 2>&1
[ "$(changed "$T/gd.json")" = "$want" ] && [ ! -e "$T/gd.mlpackage" ] && ok || bad "--dry-run differs: $(changed "$T/gd.json")"

# 4. one round: the unrolling alone, the next round's rewrite said to be pending
"$ANELINT" fix "$G" -o "$T/g1.mlpackage" --allow approximate --max-rounds 1 --format json >"$T/g1.json" 2>&1
[ "$(changed "$T/g1.json")" = "1:while_loop_0_0:mil-while-unroll" ] && [ "$(json "$T/g1.json" "j['pending']")" = 1 ] &&
	"$ANELINT" verify "$G" "$T/g1.mlpackage" --random --tol 0 >/dev/null 2>&1 && ok ||
	{ bad "--max-rounds 1"; json "$T/g1.json" "j['pending'], j['fixed_point']"; }

# 5. Apple's validator and coremltools' MIL load (the tools of ../shared, when built)
: "${VALIDATOR:=/work/ct/validate}"
CHECK_MODEL=${CHECK_MODEL:-../shared/tools/coremltools-local/check_model.py}
if [ -x "$VALIDATOR" ] && [ -f "$CHECK_MODEL" ] && [ -d "$(dirname "$VALIDATOR")/src" ]; then
	for f in "$T/g.mlpackage" "$T/g1.mlpackage"; do
		PYTHONPATH="$(dirname "$VALIDATOR")/src" VALIDATOR="$VALIDATOR" /usr/bin/python3 "$CHECK_MODEL" "$f" \
			>"$T/ct.out" 2>&1 && grep -q 'validator=VALID  mil=ok' "$T/ct.out" && ok ||
			{ bad "Core ML validator: $f"; cat "$T/ct.out"; }
	done
else
	skip=$((skip + 1))
	echo "skip: Core ML validator not built"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
