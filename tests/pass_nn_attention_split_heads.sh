#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_nn_attention_split_heads.sh: the pass nn-attention-split-heads (src/rewrite/passes/
# nn_attention.c, docs/surgery.md): NeuralNetwork attention (batchedMatmul, softmaxND on the
# keys, batchedMatmul) -> per head 1x1 convolutions with runtime weights, a softmax on the
# channel axis and a concat. Applied and refused on the crafted fix_nn_attn (each refusal with
# its reason), only with --allow reassociate, --dry-run reporting the same and writing nothing,
# the proof (reassociate: within 1e-5, not bit-identical), the rules' verdict on the output
# (the runtime-weight convolutions uncertain, never ANE), the region proof handing over to the
# whole models, and the converted encoder's attention (tests/data/converted).
set -u
: "${ANELINT:=build/anelint}"
F=tests/data/crafted/fix_nn_attn.mlmodel
E=tests/data/converted/transformer_encoder__nn_ios13.mlmodel
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
# the per-op verdicts without the model-level work floor (ANE071 / ANE072 off)
printf 'id: ANE071\nfamilies: none\nprovenance: test: per-op verdicts\n\nid: ANE072\nfamilies: none\nprovenance: test\n' >"$T/nofloor.rules"

# 1. applied to the two chains it matches (plain and transposeB keys), left with its reason
#    on the four others; the fallbacks drop 18 -> 12
"$ANELINT" fix "$F" -o "$T/a.mlmodel" --allow reassociate >"$T/a.txt"
rc=$?
if [ $rc -eq 0 ] && grep -q '^  changed  attn  .*2 heads: per head 1x1 convolutions .*\[nn-attention-split-heads, reassociate, answers ANE012\]' "$T/a.txt" &&
	grep -q '^  changed  attn_tb  .*2 heads' "$T/a.txt" &&
	grep -q '^  left     attn_q  .*the softmaxND is on axis 1, not the keys' "$T/a.txt" &&
	grep -q '^  left     attn_out  .*read by other layers too' "$T/a.txt" &&
	grep -q '^  left     attn_ta  .*transposes its first operand' "$T/a.txt" &&
	grep -q '^  left     attn_1h  .*1 heads (2 to 64 are split)' "$T/a.txt" &&
	! grep -q '^  left     scores' "$T/a.txt" &&
	grep -q 'check before: 18 layers, 18 fall back' "$T/a.txt" &&
	grep -q 'check after:  48 layers, 12 fall back' "$T/a.txt" && [ -s "$T/a.mlmodel" ]
then ok; else bad "applied (rc $rc)"; cat "$T/a.txt"; fi

# 2. the output's layers: per rewritten head 2 convolutions with runtime weights and a
#    softmax; the batchedMatmuls / softmaxNDs of the rewritten chains gone (those of the
#    four left remain)
"$ANELINT" check --all "$T/a.mlmodel" >"$T/a.check"
nconv=$(grep -c ' convolution ' "$T/a.check")
nsm=$(grep -c ' softmax ' "$T/a.check")
nbmm=$(grep -c ' batchedMatmul ' "$T/a.check")
nsnd=$(grep -c ' softmaxND ' "$T/a.check")
[ "$nconv" = 8 ] && [ "$nsm" = 4 ] && [ "$nbmm" = 8 ] && [ "$nsnd" = 4 ] && ok ||
	bad "layers: $nconv convolution, $nsm softmax, $nbmm batchedMatmul, $nsnd softmaxND (8, 4, 8, 4 expected)"

# 3. the proof: reassociate, so the rewritten outputs differ in the last bits (within 1e-5 of
#    max|ref|), the others bit-identical; and verify agrees on the written file
"$ANELINT" fix "$F" -o "$T/j.mlmodel" --allow reassociate --format json >"$T/a.json"
if grep -q '"pass": "nn-attention-split-heads", "rule": "ANE012", "class": "reassociate", "applied": true' "$T/a.json" &&
	grep -q '"name": "attn", "identical": false, "max_abs": [0-9.e+-]*, "max_ref": [0-9.e+-]*, "rel": [0-9.]*e-0[6-9], "pass": true' "$T/a.json" &&
	grep -q '"name": "attn_q", "identical": true' "$T/a.json" && grep -q '"written": true' "$T/a.json" &&
	cmp -s "$T/a.mlmodel" "$T/j.mlmodel"
then ok; else bad "proof"; cat "$T/a.json"; fi
"$ANELINT" verify "$F" "$T/a.mlmodel" >"$T/v.txt" 2>&1 && grep -q '^PASS' "$T/v.txt" && ok || { bad "verify"; cat "$T/v.txt"; }

# 4. --dry-run: the same rewrites and summaries, nothing written
"$ANELINT" fix "$F" -o "$T/d.mlmodel" --allow reassociate --dry-run >"$T/d.txt"
rc=$?
grep -E '^  (changed|left)|^check (before|after)' "$T/a.txt" >"$T/a.lines"
grep -E '^  (changed|left)|^check (before|after)' "$T/d.txt" >"$T/d.lines"
if [ $rc -eq 0 ] && [ ! -e "$T/d.mlmodel" ] && cmp -s "$T/a.lines" "$T/d.lines" && [ -s "$T/a.lines" ]; then ok
else bad "--dry-run parity (rc $rc)"; diff "$T/a.lines" "$T/d.lines"; fi

# 5. refused without --allow reassociate: says what it would be, the output is the input
"$ANELINT" fix "$F" -o "$T/x.mlmodel" >"$T/x.txt"
rc=$?
if [ $rc -eq 0 ] && grep -q '^  left     attn  .*needs --allow reassociate (it would be: 2 heads' "$T/x.txt" &&
	cmp -s "$F" "$T/x.mlmodel"; then ok; else bad "exact only (rc $rc)"; cat "$T/x.txt"; fi

# 6. the rules on the output: no layer the rewrite wrote claims the ANE without evidence: the
#    convolutions with runtime weights are uncertain (p 0.5), the ANE012 / ANE006 of the
#    rewritten chains gone (12 off left: the four chains not rewritten)
"$ANELINT" check --all --rules "$T/nofloor.rules" "$T/a.mlmodel" >"$T/nf.txt"
nunc=$(grep -c ' convolution .*uncertain (p_ane 0.50): a convolution whose weights are a runtime input' "$T/nf.txt")
if [ "$nunc" = 8 ] && grep -q '^verdicts: 0 on the ANE, 12 off, 36 uncertain' "$T/nf.txt"; then ok
else bad "verdicts on the output ($nunc uncertain convolutions)"; cat "$T/nf.txt"; fi

# 7. --proof region: the rewritten region reads q / k, which the original's (the second
#    product and the softmaxND) does not: the whole models prove it instead, saying why
"$ANELINT" fix "$F" -o "$T/r.mlmodel" --allow reassociate --proof region >"$T/r.txt"
rc=$?
if [ $rc -eq 0 ] && grep -q '^proof: whole model' "$T/r.txt" &&
	grep -q 'the region proof could not run (.*: the rewritten region reads it, the original.s does not): the whole models ran instead' "$T/r.txt" &&
	cmp -s "$T/a.mlmodel" "$T/r.mlmodel"
then ok; else bad "region -> whole (rc $rc)"; cat "$T/r.txt"; fi

# 8. the converted encoder (nn.TransformerEncoderLayer, 4 heads): with splitnd-of-innerproduct
#    all 4 own-verdict fallbacks go (2 batchedMatmul, softmaxND, splitND); with the floor off
#    the verdicts are 0 off where they were 29 (the 8 runtime-weight convolutions uncertain)
"$ANELINT" fix "$E" -o "$T/e.mlmodel" --allow reassociate >"$T/e.txt"
rc=$?
if [ $rc -eq 0 ] && grep -q '^  changed  attn_output.1  .*4 heads: .*24 layers  \[nn-attention-split-heads' "$T/e.txt" &&
	grep -q 'check before: 31 layers, 4 fall back' "$T/e.txt" && grep -q 'check after:  53 layers, 0 fall back' "$T/e.txt" &&
	! grep -q '^  left     input.1' "$T/e.txt"
then ok; else bad "encoder (rc $rc)"; cat "$T/e.txt"; fi
"$ANELINT" check --rules "$T/nofloor.rules" "$E" | grep -q '^verdicts: 1 on the ANE, 29 off, 1 uncertain' &&
	"$ANELINT" check --rules "$T/nofloor.rules" "$T/e.mlmodel" | grep -q '^verdicts: 7 on the ANE, 0 off, 46 uncertain' &&
	"$ANELINT" verify "$E" "$T/e.mlmodel" 2>&1 | grep -q '^PASS' && ok || bad "encoder verdicts / verify"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
