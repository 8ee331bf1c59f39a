#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/modern.sh: current Core ML models end to end against their PyTorch
# references (coremltools 8.3 conversions, ../shared/corpus/modern/MANIFEST.md):
# stateful models (every step, the state carried over by --steps, and every
# state after every step), multifunction packages (every function, --function),
# compressed weights of every iOS16-iOS18 form, flexible shapes (every extra
# case). Each output within max|y - ref| <= tol * max|ref|:
#   fp32 mode 1e-4; fp16 mode (--precision fp16) 2e-2, the references' guidance.
# Models: tests/data/modern/ with tests/data/reference/modern/ (always), then every
# model of ../shared/corpus/modern/ with its reference/ (skipped when absent).
# Also: --out writes stepK_NAME.npy for every output and state of every step,
# --state starts from a given state, --function refuses a name the package lacks.
set -u
: "${ANELINT:=build/anelint}"
corpus=${ANELINT_CORPUS:-../shared/corpus}
pass=0 fail=0 skip=0
out=$(mktemp)
tmp=$(mktemp -d)
trap 'rm -rf "$out" "$tmp"' EXIT INT TERM

ok() { pass=$((pass + 1)); }
bad() {
	fail=$((fail + 1))
	echo "FAIL $*"
	sed -n '1,12p' "$out"
}

# check PKG REFDIR LABEL [options...]: run in fp32 and fp16 against REFDIR
# (sh has no locals: check's variables are its own)
check() {
	c_pkg=$1 c_ref=$2 label=$3
	shift 3
	for prec in fp32 fp16; do
		tol=1e-4
		[ "$prec" = fp16 ] && tol=2e-2
		if "$ANELINT" run "$c_pkg" "$@" --inputs "$c_ref" --expect "$c_ref" --precision "$prec" \
			--tol "$tol" --threads 1 >"$out" 2>&1 &&
			grep -q 'vs expected' "$out" && ! grep -q FAIL "$out"; then
			ok
		else
			bad "$label ($prec): $*"
		fi
	done
}

# every case of one model: steps for stateful ones, every function, extra shapes
model() {
	pkg=$1 ref=$2
	stem=$(basename "$pkg" .mlpackage)
	if ls "$ref"/state_init_*.npy >/dev/null 2>&1; then
		n=$(ls "$ref"/step*_state_*.npy | sed 's/.*step\([0-9]*\)_state_.*/\1/' | sort -n | tail -n 1)
		check "$pkg" "$ref" "$stem" --steps $((n + 1))
		return
	fi
	fns=""
	for d in "$ref"/*/; do
		[ -f "$d/meta.json" ] || continue
		case $(basename "$d") in seq_*) continue ;; esac
		fns="$fns $(basename "$d")"
	done
	if [ -n "$fns" ]; then
		for f in $fns; do
			check "$pkg" "$ref/$f" "$stem/$f" --function "$f"
		done
		return
	fi
	check "$pkg" "$ref" "$stem"
	for d in "$ref"/seq_*/; do
		[ -d "$d" ] || continue
		check "$pkg" "$d" "$stem/$(basename "$d")"
	done
}

for pkg in tests/data/modern/*.mlpackage; do
	ref=tests/data/reference/modern/$(basename "$pkg" .mlpackage)
	[ -d "$ref" ] && model "$pkg" "$ref"
done

# --out with --steps: stepK_NAME.npy for every output and state of every step
acc=tests/data/modern/accumulator_fp16.mlpackage
aref=tests/data/reference/modern/accumulator_fp16
if "$ANELINT" run "$acc" --steps 3 --inputs "$aref" --out "$tmp/acc" >"$out" 2>&1 &&
	[ "$(ls "$tmp/acc" | tr '\n' ' ')" = "step0_acc.npy step0_y.npy step1_acc.npy step1_y.npy step2_acc.npy step2_y.npy " ] &&
	cmp -s "$tmp/acc/step2_acc.npy" "$aref/step2_state_acc.npy"; then
	ok
else
	bad "--steps --out: $(ls "$tmp/acc" 2>/dev/null | tr '\n' ' ')"
fi
# --state: one call from the state step 0 left gives step 1's output and state
mkdir -p "$tmp/s1"
cp "$aref/step1_x.npy" "$tmp/s1/x.npy"
cp "$aref/step1_y.npy" "$tmp/s1/y.npy"
cp "$aref/step1_state_acc.npy" "$tmp/s1/acc.npy"
if "$ANELINT" run "$acc" --state "acc=$aref/step0_state_acc.npy" --inputs "$tmp/s1" --expect "$tmp/s1" \
	>"$out" 2>&1 && [ "$(grep -c 'vs expected *pass' "$out")" -eq 2 ]; then
	ok
else
	bad "--state acc=step0 state"
fi
# without --state the state starts at zeros: step 0's output
if "$ANELINT" run "$acc" -i "x=$aref/step0_x.npy" -f json >"$out" 2>&1 &&
	grep -q '"name": "acc", "state": true' "$out"; then
	ok
else
	bad "run -f json lists the final state"
fi
# usage errors: a state the model lacks, a function the package lacks
if "$ANELINT" run "$acc" --state "nope=$aref/step0_state_acc.npy" --random >"$out" 2>&1; then
	bad "--state nope= accepted"
elif [ $? -eq 2 ] && grep -q "no state of that name" "$out"; then ok; else bad "--state nope="; fi
mf=tests/data/modern/multifunction_convnet.mlpackage
if "$ANELINT" run "$mf" --function nope --random >"$out" 2>&1; then
	bad "--function nope accepted"
elif [ $? -eq 2 ] && grep -q "no function 'nope' (its functions: large, small)" "$out"; then ok; else bad "--function nope"; fi
# --repeat: median and minimum, text and JSON
if "$ANELINT" run "$mf" --random --repeat 3 -f json >"$out" 2>&1 && grep -q '"ms_median": ' "$out" &&
	grep -q '"ms_min": ' "$out"; then
	ok
else
	bad "--repeat -f json"
fi

# --function on check / info; info lists states, functions and weight forms
if "$ANELINT" check --all "$mf" --function large >"$out" 2>&1; [ $? -le 1 ] && grep -q -- '-- large --' "$out" &&
	! grep -q -- '-- small --' "$out"; then
	ok
else
	bad "check --function large"
fi
if "$ANELINT" plan "$mf" --function nope >"$out" 2>&1; then
	bad "plan --function nope accepted"
elif [ $? -eq 2 ] && grep -q "no function 'nope'" "$out"; then ok; else bad "plan --function nope"; fi
if "$ANELINT" info "$mf" >"$out" 2>&1 && grep -q 'function small (opset CoreML8, default)' "$out" &&
	grep -q '    input  x: multiArray fp16 \[1, 3, 64, 64\]' "$out"; then
	ok
else
	bad "info: functions"
fi
kv=tests/data/modern/kv_decoder_h64_nh2_s32.mlpackage
if "$ANELINT" info "$kv" >"$out" 2>&1 && grep -q '^  states:' "$out" &&
	grep -q '    v_cache: state fp16 \[1, 2, 32, 32\]' "$out"; then
	ok
else
	bad "info: states"
fi
for pair in "mlp_int4_block32_ios18:int4 per-block (block 32) x3" \
	"tblock_pal4_grouped_g8_ios18:4-bit LUT per-grouped-channel (group 8) x6" \
	"convnet_int8_perchannel_ios17:int8 per-channel (affine) x3" \
	"mlp_pal6_tensor_ios18:6-bit LUT per-tensor x3"; do
	m=${pair%%:*} want=${pair#*:}
	if "$ANELINT" info "tests/data/modern/$m.mlpackage" >"$out" 2>&1 &&
		grep -qF "  compressed weights: $want" "$out"; then
		ok
	else
		bad "info $m: $want"
	fi
done

# info -f json carries the same: functions with their interfaces, states, weight forms
if "$ANELINT" info -f json "$mf" >"$out" 2>&1 && python3 - "$out" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["models"][0]
f = {x["name"]: x for x in m["functions"]}
assert m["default_function"] == "small" and f["small"]["default"] and not f["large"]["default"], m["functions"]
assert f["large"]["inputs"][0]["shape"] == [1, 3, 64, 64] and f["small"]["inputs"][0]["shape"] == [1, 3, 32, 32]
assert f["large"]["outputs"][0]["name"] == "y" and f["large"]["states"] == []
PY
then ok; else bad "info -f json: functions"; fi
if "$ANELINT" info -f json "$kv" >"$out" 2>&1 && python3 - "$out" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["models"][0]
assert [s["name"] for s in m["states"]] == ["k_cache", "v_cache"], m["states"]
assert m["states"][1]["kind"] == "state" and m["states"][1]["shape"] == [1, 2, 32, 32]
assert [s["name"] for s in m["functions"][0]["states"]] == ["k_cache", "v_cache"]
PY
then ok; else bad "info -f json: states"; fi
for spec in "mlp_int4_block32_ios18:blockwise:int4:4:per-block:block=32" \
	"tblock_pal4_grouped_g8_ios18:lut:fp16:4:per-grouped-channel:group=8" \
	"convnet_int8_perchannel_ios17:affine:int8:8:per-channel:" \
	"mlp_pal6_tensor_ios18:lut:fp16:6:per-tensor:"; do
	m=${spec%%:*}
	if "$ANELINT" info -f json "tests/data/modern/$m.mlpackage" >"$out" 2>&1 && python3 - "$out" "$spec" <<'PY'
import json, sys
_, storage, dtype, bits, gran, extra = sys.argv[2].split(":")
w = json.load(open(sys.argv[1]))["models"][0]["compressed_weights"]
assert len(w) == 3 or len(w) == 6, w
for x in w:
    assert (x["storage"], x["dtype"], x["bits"], x["granularity"]) == (storage, dtype, int(bits), gran), x
    if extra:
        k, v = extra.split("=")
        assert x[k] == int(v), x
    assert x["form"].startswith(("int", "4-bit", "6-bit")), x
PY
	then ok; else bad "info -f json $m: $spec"; fi
done

# split --function: the named function cut, its pipeline gives its reference outputs;
# without it a multifunction package is refused with the hint
mref=tests/data/reference/modern/multifunction_convnet
if "$ANELINT" split "$mf" --function large --at x_cast_fp16 -o "$tmp/p1.mlpackage" -o "$tmp/p2.mlpackage" \
	--pipeline "$tmp/pl.mlpackage" >"$out" 2>&1 && grep -q 'pipeline vs original: *bit-identical' "$out" &&
	"$ANELINT" run "$tmp/pl.mlpackage" --inputs "$mref/large" --expect "$mref/large" --threads 1 >"$out" 2>&1 &&
	grep -q 'vs expected *pass' "$out" && "$ANELINT" info "$tmp/p1.mlpackage" >"$out" 2>&1 &&
	grep -q '    x: multiArray fp16 \[1, 3, 64, 64\]' "$out" && grep -q '  function main ' "$out"; then
	ok
else
	bad "split --function large"
fi
if "$ANELINT" split "$mf" --at x_cast_fp16 -o "$tmp/q1.mlpackage" -o "$tmp/q2.mlpackage" >"$out" 2>&1; then
	bad "split of a multifunction package without --function accepted"
elif grep -q 'name one with --function' "$out"; then ok; else bad "split without --function"; fi
if "$ANELINT" split "$mf" --function nope --at x_cast_fp16 -o "$tmp/q1.mlpackage" -o "$tmp/q2.mlpackage" \
	>"$out" 2>&1; then
	bad "split --function nope accepted"
elif [ $? -eq 2 ] && grep -q "no function 'nope'" "$out"; then ok; else bad "split --function nope"; fi
# fix --function: that function checked and rewritten (nothing applies to this one),
# the package written keeps both functions, each still giving its reference outputs
if "$ANELINT" fix "$mf" --function large -o "$tmp/fx.mlpackage" >"$out" 2>&1 &&
	grep -q 'check before: 8 layers' "$out" &&
	"$ANELINT" run "$tmp/fx.mlpackage" --function large --inputs "$mref/large" --expect "$mref/large" \
		--threads 1 >"$out" 2>&1 && grep -q 'vs expected *pass' "$out" &&
	"$ANELINT" run "$tmp/fx.mlpackage" --function small --inputs "$mref/small" --expect "$mref/small" \
		--threads 1 >"$out" 2>&1 && grep -q 'vs expected *pass' "$out"; then
	ok
else
	bad "fix --function large"
fi
if "$ANELINT" fix "$mf" --function nope --dry-run >"$out" 2>&1; then
	bad "fix --function nope accepted"
elif [ $? -eq 2 ] && grep -q "no function 'nope'" "$out"; then ok; else bad "fix --function nope"; fi

# the whole corpus, when present
if [ -d "$corpus/modern/reference" ]; then
	for pkg in "$corpus"/modern/*.mlpackage; do
		ref=$corpus/modern/reference/$(basename "$pkg" .mlpackage)
		[ -d "$ref" ] && model "$pkg" "$ref"
	done
else
	skip=$((skip + 1))
	echo "skip: $corpus/modern is absent"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
