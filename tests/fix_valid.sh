#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/fix_valid.sh: what `fix` writes is valid by Apple's own rules (issue 31 item 0),
# and `check` / `run` / `verify` refuse what Core ML refuses (src/format/mil_domains.def,
# the op input domains of coremltools 8.3's op definitions per opset):
#   mil-fp16-compute  keeps in fp32 what the op definitions take in fp32 only on the
#                     program's opset: an iOS15 lstm (all of it), upsample scale factors,
#                     classify's probabilities (crafted fix_valid_ios15, the corpus' lstm /
#                     upsample / unet / squeezenet fp32 programs when ../shared is there)
#   nn-lstm-unroll    of a 1-step LSTM writes no concat of one input
#   the checker       refuses a crafted invalid program and a concat of one input, with
#                     located errors (file, offset, field path, op, input)
set -u
: "${ANELINT:=build/anelint}"
C=tests/data/crafted
I=tests/data/invalid
D=tests/data/converted
CORPUS=${CORPUS:-../shared/corpus}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# decl FILE NAME: the declared type of value NAME in MIL text FILE ("fp32", "fp16", ...):
# an op's output, or a function input
decl() { { sed -n "s/^ *tensor<\([a-z0-9]*\), [^>]*> $2 = .*/\1/p" "$1"
	sed -n "s/^ *func .*tensor<\([a-z0-9]*\), [^>]*> $2[,)].*/\1/p" "$1"; } | head -1; }
# bound FILE OP PARAM: the value bound to PARAM of the first OP op in MIL text FILE
bound() { grep -m1 " = $2(" "$1" | sed -n "s/.*[(, ]$3 = \([A-Za-z0-9_]*\).*/\1/p"; }
# valid MODEL: check does not refuse it (exit 3 is an invalid model)
valid() { "$ANELINT" check --fail-on never "$1" >/dev/null 2>"$T/valid.err"; }

# ---------------------------------------------------------------- mil-fp16-compute
# (round 1 only: round 2 unrolls the lstm in fp16, mil-lstm-unroll-fp16)
"$ANELINT" fix $C/fix_valid_ios15.mlpackage -o "$T/v.mlpackage" --allow approximate --max-rounds 1 --format json >"$T/v.json" 2>"$T/v.err"
rc=$?
"$ANELINT" info --format mil "$T/v.mlpackage" >"$T/v.mil" 2>/dev/null
if [ $rc -eq 0 ] && grep -q '"pass": "mil-fp16-compute", "rule": "ANE029", "class": "approximate", "applied": true' "$T/v.json"
then ok; else bad "mil-fp16-compute: fix_valid_ios15 not rewritten (rc $rc)"; cat "$T/v.json" "$T/v.err"; fi
# the lstm computes in fp32 (iOS15: T is fp32 only): its x, states and weights fp32
for p in x initial_h initial_c weight_ih weight_hh bias; do
	v=$(bound "$T/v.mil" lstm $p)
	[ -n "$v" ] && [ "$(decl "$T/v.mil" "$v")" = fp32 ] && ok || bad "mil-fp16-compute: lstm $p '$v' is not fp32"
done
grep -q '^ *tensor<fp32, \[1, 1, 4\]> y, tensor<fp32, \[1, 4\]> h, tensor<fp32, \[1, 4\]> c = lstm(' "$T/v.mil" &&
	ok || bad "mil-fp16-compute: the lstm's outputs are not fp32"
# the upsample ops compute in fp16, their scale factors stay fp32 (fp32 or int32 only)
for o in upsample_bilinear upsample_nearest_neighbor; do
	for p in scale_factor_height scale_factor_width; do
		v=$(bound "$T/v.mil" $o $p)
		[ -n "$v" ] && [ "$(decl "$T/v.mil" "$v")" = fp32 ] && ok || bad "mil-fp16-compute: $o $p '$v' is not fp32"
	done
	v=$(bound "$T/v.mil" $o x)
	[ "$(decl "$T/v.mil" "$v")" = fp16 ] && ok || bad "mil-fp16-compute: $o does not compute in fp16 (x '$v')"
done
# classify reads fp32 probabilities (cast back from the fp16 softmax)
v=$(bound "$T/v.mil" classify probabilities)
[ -n "$v" ] && [ "$(decl "$T/v.mil" "$v")" = fp32 ] && ok || bad "mil-fp16-compute: classify probabilities '$v' is not fp32"
[ "$(decl "$T/v.mil" p)" = fp16 ] && ok || bad "mil-fp16-compute: the softmax is not fp16"
valid "$T/v.mlpackage" && ok || { bad "mil-fp16-compute: its output is refused"; cat "$T/valid.err"; }
# the output's second run (the per-op passes) stays valid
"$ANELINT" fix "$T/v.mlpackage" -o "$T/v2.mlpackage" --allow approximate >"$T/v2.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && valid "$T/v2.mlpackage" && ok || { bad "mil-fp16-compute: second run (rc $rc)"; cat "$T/v2.txt" "$T/valid.err"; }

# the corpus' fp32 programs of the issue: every output (and its second run) valid
if [ -d "$CORPUS/converted" ]; then
	for m in lstm__mlp_fp32 lstm_bidir_2layer__mlp_fp32 upsample_x4__mlp_fp32 unet_small__mlp_fp32 \
		squeezenet1_1__mlp_fp32; do
		rm -rf "$T/c.mlpackage" "$T/c2.mlpackage"
		"$ANELINT" fix "$CORPUS/converted/$m.mlpackage" -o "$T/c.mlpackage" --allow approximate >"$T/c.txt" 2>&1
		rc=$?
		[ $rc -eq 0 ] && grep -q 'mil-fp16-compute, approximate' "$T/c.txt" && valid "$T/c.mlpackage" &&
			ok || { bad "mil-fp16-compute: corpus $m (rc $rc)"; cat "$T/c.txt" "$T/valid.err"; }
		"$ANELINT" fix "$T/c.mlpackage" -o "$T/c2.mlpackage" --allow approximate >"$T/c2.txt" 2>&1
		rc=$?
		{ [ $rc -eq 0 ] || [ $rc -eq 1 ]; } && { [ ! -e "$T/c2.mlpackage" ] || valid "$T/c2.mlpackage"; } &&
			ok || { bad "mil-fp16-compute: corpus $m second run (rc $rc)"; cat "$T/c2.txt" "$T/valid.err"; }
	done
	"$ANELINT" info --format mil "$T/c.mlpackage" >"$T/c.mil" 2>/dev/null
	v=$(bound "$T/c.mil" classify probabilities)
	[ -n "$v" ] && [ "$(decl "$T/c.mil" "$v")" = fp32 ] && ok || bad "mil-fp16-compute: squeezenet classify reads '$v'"
else
	skip=$((skip + 1))
fi

# ---------------------------------------------------------------- the checker
"$ANELINT" check $I/mil_invalid_ops.mlpackage >"$T/i.out" 2>"$T/i.err"
rc=$?
M=$I/mil_invalid_ops.mlpackage/Data/com.apple.CoreML/model.mlmodel
[ $rc -eq 3 ] && ok || bad "checker: check of mil_invalid_ops exits $rc, not 3"
grep -q "^anelint: error: $M: offset 414: mlProgram.functions\[main\].block.operations\[1\] (a): upsample_nearest_neighbor input 'scale_factor_height' ('sf16') is fp16: on opset CoreML5 (iOS 15) upsample_nearest_neighbor takes fp32 or int32 only$" "$T/i.err" &&
	ok || { bad "checker: the fp16 scale factor is not named"; cat "$T/i.err"; }
grep -q "operations\[3\] (b): add input 'y' is fp16 but 'x' is fp32: on opset CoreML5 (iOS 15) they take one dtype (T)" "$T/i.err" &&
	ok || bad "checker: the add of fp32 and fp16 is not named"
grep -q "operations\[4\] (t): transpose input 'perm' ('p') must be a constant" "$T/i.err" &&
	ok || bad "checker: the runtime perm is not named"
[ "$(grep -c 'anelint: error' "$T/i.err")" = 4 ] && ok || bad "checker: not 4 errors"
"$ANELINT" run $I/mil_invalid_ops.mlpackage --random >"$T/r.out" 2>"$T/r.err"
rc=$?
[ $rc -eq 3 ] && grep -q "(t): transpose input 'perm'" "$T/r.err" && ok || bad "checker: run of an invalid program exits $rc"
"$ANELINT" verify $I/mil_invalid_ops.mlpackage $I/mil_invalid_ops.mlpackage >"$T/r.out" 2>"$T/r.err"
rc=$?
[ $rc -eq 3 ] && ok || bad "checker: verify of an invalid program exits $rc"
"$ANELINT" fix $I/mil_invalid_ops.mlpackage -o "$T/i.mlpackage" --allow approximate >"$T/f.out" 2>"$T/f.err"
rc=$?
[ $rc -eq 3 ] && [ ! -e "$T/i.mlpackage" ] && ok || bad "checker: fix of an invalid program exits $rc"
"$ANELINT" check $I/nn_concat_one.mlmodel >"$T/n.out" 2>"$T/n.err"
rc=$?
[ $rc -eq 3 ] && grep -q "nn_concat_one.mlmodel: offset 148: neuralNetwork.layers\[0\] (cat): concat has 1 input: Core ML takes at least 2" "$T/n.err" &&
	ok || { bad "checker: a concat of one input (rc $rc)"; cat "$T/n.err"; }
# the valid fixtures pass
valid $C/fix_valid_ios15.mlpackage && ok || bad "checker: fix_valid_ios15 refused"

# ---------------------------------------------------------------- nn-lstm-unroll
"$ANELINT" fix $D/builder__legacy_lstm_bilstm_gru.mlmodel -o "$T/l.mlmodel" --allow reassociate >"$T/l.txt" 2>&1
rc=$?
"$ANELINT" info --format json "$T/l.mlmodel" >"$T/l.json" 2>/dev/null
# (the one concat left is nn-bilstm-unroll's h_f, h_b of its one step: two inputs;
# the checker refuses a concat of one, as Core ML does)
"$ANELINT" check "$T/l.mlmodel" >/dev/null 2>&1
crc=$?
{ [ $rc -eq 0 ] || [ $rc -eq 1 ]; } && grep -q '1 steps of innerProduct.*\[nn-lstm-unroll, reassociate' "$T/l.txt" &&
	[ $crc -le 1 ] && grep -q '"concat": 1' "$T/l.json" && grep -q '"reshape": 2' "$T/l.json" && ok ||
	{ bad "nn-lstm-unroll: 1 step (rc $rc)"; cat "$T/l.txt"; }
valid "$T/l.mlmodel" && ok || { bad "nn-lstm-unroll: its output is refused"; cat "$T/valid.err"; }
grep -q 'y *bit-identical' "$T/l.txt" && ok || bad "nn-lstm-unroll: the sequence output differs"

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
