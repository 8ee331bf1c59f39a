#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/fix_matmul_conv.sh: a lone `matmul` by a constant weight and the 1x1 conv
# (issue #31 item 4; docs/surgery.md, row mil-matmul-const-bc1s-conv). That pass takes a
# matmul by a constant into a (B, C, 1, S) run as a 1x1 conv; a lone one (no second
# linear / matmul to share the entry and exit transposes) gets no rewrite, because
# no rule's finding goes away: its readers keep the [B, S, N] output, so ANE062 (short
# last axis) fires on the exit transpose and reshape instead (1 finding -> 2), and no
# rule keeps a matmul by a constant off the ANE. Checked here on crafted
# fix_mil_matmul_lone (x [1,16384,64] @ a constant [8,64]^T, and x @ a runtime w) and
# fix_mil_matmul_lone_conv (the same with the conv form written by hand):
#  - the conv form computes the same outputs (verify: bit-identical), and carries
#    one more ANE062 finding than the matmul: the reason there is no pass;
#  - fix refuses the lone matmul with that reason (a matmul of two runtime tensors
#    is not a candidate), the output a byte-identical copy, --dry-run and no --allow
#    report the same; check accepts both fixtures (the op definitions);
#  - Apple's validator and coremltools' MIL load accept both (skipped when
#    /work/ct/validate, or $VALIDATOR, is absent).
set -u
: "${ANELINT:=build/anelint}"
C=tests/data/crafted
M=$C/fix_mil_matmul_lone.mlpackage
MC=$C/fix_mil_matmul_lone_conv.mlpackage
T=$(mktemp -d)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
same_tree() { diff -r "$1" "$2" >/dev/null && [ "$(cd "$1" && find . | sort)" = "$(cd "$2" && find . | sort)" ]; }
rewrites() { sed -n '/"rewrites": \[/,/^  \]/p' "$1"; }
sum_inputs() { find "$M" "$MC" -type f | sort | xargs cat | cksum; }
before=$(sum_inputs)

# 1. both fixtures pass the op-definition checks; the conv form has one finding more
"$ANELINT" check "$M" >"$T/m.chk" 2>&1 && grep -q 'rules fired: ANE062 x2 ' "$T/m.chk" &&
	grep -qE ' yc +matmul .*ANE062 output .yc. \[1,16384,8\]' "$T/m.chk" && ok ||
	{ bad "check of the lone matmul (ANE062 on yc and yw)"; cat "$T/m.chk"; }
"$ANELINT" check "$MC" >"$T/mc.chk" 2>&1 && grep -q 'rules fired: ANE062 x3 ' "$T/mc.chk" &&
	grep -qE ' yc_bs1c +transpose .*ANE062' "$T/mc.chk" && grep -qE ' yc +reshape .*ANE062' "$T/mc.chk" &&
	! grep -qE ' yc_bc1s +conv .*ANE062' "$T/mc.chk" && ok ||
	{ bad "check of the conv form (ANE062 on both exits, not on the conv)"; cat "$T/mc.chk"; }

# 2. the conv form is the same arithmetic: the refusal is the rules', not the proof's
"$ANELINT" verify --random "$M" "$MC" >"$T/v.out" 2>&1 && grep -qE '^ +yc +pass .*bit-identical' "$T/v.out" &&
	ok || { bad "verify matmul vs conv form"; cat "$T/v.out"; }

# 3. fix refuses the lone matmul with the reason; the output is a byte-identical copy
WHY='"layer": "yc", "type": "matmul", "pass": "mil-matmul-const-bc1s-conv", "rule": "ANE062", "class": "reassociate", "applied": false, "why_not": "a lone matmul by a constant (the next op, yw (matmul), does not work in the (B, C, 1, S) layout): a 1x1 conv clears no finding (the \[B, S, N\] output stays)"'
"$ANELINT" fix "$M" -o "$T/out.mlpackage" --allow reassociate --format json >"$T/f.json" 2>"$T/f.err"
[ $? -eq 0 ] && grep -q "$WHY" "$T/f.json" && ! grep -q '"applied": true' "$T/f.json" && ok ||
	{ bad "fix: the lone matmul's refusal"; cat "$T/f.json" "$T/f.err"; }
grep -q '"layer": "yw"' "$T/f.json" && { bad "fix: a matmul of two runtime tensors reported as a candidate"; } || ok
same_tree "$M" "$T/out.mlpackage" && ok || bad "fix: the output is not a byte-identical copy"
"$ANELINT" check "$T/out.mlpackage" >/dev/null 2>&1 && ok || bad "fix: check of the output"

# 4. --dry-run and no --allow: the same rewrites reported, nothing written
"$ANELINT" fix "$M" --dry-run --allow reassociate --format json >"$T/d.json" 2>/dev/null
[ $? -eq 0 ] && grep -q '"written": false' "$T/d.json" && [ "$(rewrites "$T/d.json")" = "$(rewrites "$T/f.json")" ] &&
	ok || { bad "fix --dry-run parity"; diff "$T/f.json" "$T/d.json"; }
"$ANELINT" fix "$M" -o "$T/out0.mlpackage" --format json >"$T/f0.json" 2>/dev/null
[ $? -eq 0 ] && grep -q "$WHY" "$T/f0.json" && same_tree "$M" "$T/out0.mlpackage" && ok ||
	{ bad "fix without --allow"; cat "$T/f0.json"; }

# 5. Apple's validator and coremltools' MIL load (the tools of ../shared, when built)
: "${VALIDATOR:=/work/ct/validate}"
CHECK_MODEL=${CHECK_MODEL:-../shared/tools/coremltools-local/check_model.py}
if [ -x "$VALIDATOR" ] && [ -f "$CHECK_MODEL" ] && [ -d "$(dirname "$VALIDATOR")/src" ]; then
	for f in "$M" "$MC"; do
		PYTHONPATH="$(dirname "$VALIDATOR")/src" VALIDATOR="$VALIDATOR" /usr/bin/python3 "$CHECK_MODEL" "$f" \
			>"$T/ct.out" 2>&1 && grep -q 'validator=VALID  mil=ok' "$T/ct.out" && ok ||
			{ bad "Core ML validator: $f"; cat "$T/ct.out"; }
	done
else
	skip=$((skip + 1))
fi

[ "$(sum_inputs)" = "$before" ] && ok || bad "the fixtures changed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
