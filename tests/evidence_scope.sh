#!/bin/sh
# SPDX-License-Identifier: MIT
# evidence_scope.sh: placements that follow what the development reports of tests/observed saw
# (issue #30; docs/fidelity.md "Generalisation"), each with the report that justifies it:
#   - per-block int4 weights (ANE038) leave the ANE for the GPU where the compute units allow it
#     (coreai-models #205, iOS 27, compute units all: the whole program on the GPU) and for the
#     CPU without the GPU (coremltools #2510, CPU_AND_NE);
#   - up to iOS 16 an ML Program too small for the ANE (ANE071) runs on the GPU when the
#     compute units allow it (coremltools #1761, iPhone 14), its CPU-only ops keep the CPU;
#   - ANE048 (an in-graph KV-cache update) fires when attention reads the updated cache, not on
#     a recurrent state written back by slice_update (tools/mkstate_fixtures.py);
#   - check --os all / --target all mark an uncertain cell with '?';
#
#   ANELINT=build/anelint sh tests/evidence_scope.sh       (from the repo root)
# Prints "ok NAME" or "FAIL NAME: why" per case, then "N passed, M failed".
set -u
ANELINT=${ANELINT:-build/anelint}
C=tests/data/crafted
MO=tests/data/modern
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
expect() { # NAME GOT WANT
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi
}

# units MODEL [check options]: "name=unit" per layer (the final placement), space-separated
units() {
	m=$1
	shift
	"$ANELINT" check --format json --fail-on never "$@" "$m" >"$T/j" 2>"$T/err" || {
		echo "check failed: $(cat "$T/err")"
		return 1
	}
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join("%s=%s" % (l["name"], l["unit"]) for l in d["models"][0]["layers"] if l.get("type") != "const" and (l.get("type") in sys.argv[2:] or not sys.argv[2:])))' "$T/j" $TYPES
}

# 1. per-block int4 weights: GPU with compute units all (iOS 27), CPU with cpu-and-ne
TYPES=linear
expect "per-block int4, all, ios27: the linears on the GPU" \
	"$(units $MO/mlp_int4_block32_ios18.mlpackage --os ios27 --compute-units all)" \
	"linear_0_cast_fp16=gpu linear_1_cast_fp16=gpu y=gpu"
expect "per-block int4, cpu-and-ne, ios18: the linears on the CPU" \
	"$(units $MO/mlp_int4_block32_ios18.mlpackage --os ios18 --compute-units cpu-and-ne)" \
	"linear_0_cast_fp16=cpu linear_1_cast_fp16=cpu y=cpu"

# 2. a tiny ML Program up to iOS 16: the GPU with compute units all, the CPU without the GPU;
#    from iOS 17 with no GPU work in it, the CPU (Vx #436)
TYPES=
got=$(units $C/fix_mil_bc1s.mlpackage --os ios16 --compute-units all | tr ' ' '\n' | sed 's/.*=//' | sort -u | tr '\n' ' ')
expect "tiny ML Program, all, ios16: every op on the GPU" "$got" "gpu "
got=$(units $C/fix_mil_bc1s.mlpackage --os ios16 --compute-units cpu-and-ne | tr ' ' '\n' | sed 's/.*=//' | sort -u | tr '\n' ' ')
expect "tiny ML Program, cpu-and-ne, ios16: every op on the CPU" "$got" "cpu "
got=$(units $C/fix_mil_bc1s.mlpackage --os ios18 --compute-units all | tr ' ' '\n' | sed 's/.*=//' | sort -u | tr '\n' ' ')
expect "tiny ML Program, all, ios18: every op on the CPU" "$got" "cpu "
# the CPU-only ops of a tiny model keep the CPU (smpanaro's macOS 13 reports)
got=$(units $C/fix_mil_fill.mlpackage --os ios16 --compute-units all | tr ' ' '\n' | sed 's/.*=//' | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}')
expect "tiny ML Program with CPU-only ops, all, ios16" "$got" "cpu:4 gpu:2 "

# 3. ANE048: an MLState KV cache read by attention leaves the ANE (to the GPU); a recurrent
#    state written back the same way (slice_update of a read_state, linear cells) stays on it
O=tests/data/observed
TYPES=
for os in ios18 ios26; do
	got=$(units $O/kv_cache_update_linear.mlpackage --target a17 --os $os | tr ' ' '\n' | sed 's/.*=//' | sort -u | tr '\n' ' ')
	expect "KV cache read by attention, $os: the whole model on the GPU (ANE048)" "$got" "gpu "
	got=$(units $O/recurrent_state_linear.mlpackage --target a17 --os $os | tr ' ' '\n' | sed 's/.*=//' | sort -u | tr '\n' ' ')
	expect "recurrent state update, $os: on the ANE" "$got" "ane "
done

# 4. the matrices of --os all / --target all mark an uncertain cell with '?': the range input
#    (ANE040) is confident on iOS 16 and 26, its reports' releases, and uncertain elsewhere
"$ANELINT" check --os all --fail-on never $C/fix_shape.mlmodel >"$T/m" 2>"$T/err"
got=$(awk '$2 == "c1" { $1 = $2 = $3 = ""; print }' "$T/m" | tr -s ' ' | sed 's/^ //')
expect "check --os all: uncertain cells marked" "$got" "cpu? cpu? cpu? cpu cpu? cpu? cpu cpu?"
got=$(grep -c '? the verdict is uncertain there (the evidence does not reach that release): 2 layers' "$T/m")
expect "check --os all: the '?' explained under the table" "$got" "1"
"$ANELINT" check --target all --os ios18 --fail-on never $C/fix_shape.mlmodel >"$T/m" 2>"$T/err"
got=$(awk '$2 == "c1" { $1 = $2 = $3 = ""; print }' "$T/m" | tr -s ' ' | sed 's/^ //')
expect "check --target all on iOS 18 (outside ANE040's releases): every cell uncertain" "$got" \
	"cpu? cpu? cpu? cpu? cpu? cpu?"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
