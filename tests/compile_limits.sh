#!/bin/sh
# SPDX-License-Identifier: MIT
# compile_limits.sh: the ANE compile limits (issue #30 item 5, ANE077-080 in
# src/analysis/rules.def). A size-driven failure of the ANE compile moves the whole segment:
# every op of the model goes off the ANE (moved_by the rule), sure on the chip and release the
# report saw and in its failing band, uncertain between what compiled and what failed and on
# other chips and releases. On the fixtures of tools/mkfixtures_limits.py:
#   - attention over 32768 keys (limit_attn_32k): not_ane on an M5 under macOS 26 (NVMAI #7),
#     uncertain on an M4 and under macOS 15; 16384 keys: uncertain; 8192: on the ANE;
#   - a 496 MB conv output (limit_tensor_5568): uncertain everywhere (nothing pins the size at
#     which one tensor fails); 256 MiB (limit_tensor_4096): silent;
#   - 8-bit palettized weights (limit_lut8): not_ane on A17 Pro / M4 and A18 / M5 under iOS 26,
#     uncertain on A16, not evaluated on iOS 18;
# and the sinks: JSON (moved_by, verdicts, schema-valid), plan (one segment, off the ANE),
# --fail-on (an uncertain compile limit never fails by default).
#
#   ANELINT=build/anelint sh tests/compile_limits.sh       (from the repo root)
# Prints "ok NAME" or "FAIL NAME: why" per case, then "N passed, M failed".
set -u
ANELINT=${ANELINT:-build/anelint}
D=tests/data/crafted
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }

# summary MODEL TARGET OS: "ane/not_ane/uncertain moved_by" of the first model
summary() {
	"$ANELINT" check --format json --fail-on never --target "$2" --os "$3" "$1" >"$T/j" 2>"$T/err" || {
		echo "check failed: $(head -c 200 "$T/err")"
		return 1
	}
	python3 tests/validate_json.py docs/schema/check.schema.json "$T/j" >/dev/null || {
		echo "invalid JSON against the schema"
		return 1
	}
	python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["models"][0]["summary"]
v = m["verdicts"]
print("%d/%d/%d %s" % (v["ane"], v["not_ane"], v["uncertain"],
                       ",".join(x["rule"] for x in m.get("moved_by", [])) or "-"))' "$T/j"
}

expect() { # NAME GOT WANT
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi
}

# 1. attention: 4 ops (qk, scale, softmax, pv)
expect "attention 32768 keys, M5 macOS 26: off, sure" "$(summary $D/limit_attn_32k.mlpackage m5 macos26)" "0/4/0 ANE077"
expect "attention 32768 keys, M4 macOS 26: uncertain (chip)" "$(summary $D/limit_attn_32k.mlpackage m4 macos26)" "0/0/4 ANE077"
expect "attention 32768 keys, M5 macOS 15: uncertain (release)" "$(summary $D/limit_attn_32k.mlpackage m5 macos15)" "0/0/4 ANE077"
expect "attention 16384 keys, M5 macOS 26: uncertain (band)" "$(summary $D/limit_attn_16k.mlpackage m5 macos26)" "0/0/4 ANE077"
expect "attention 8192 keys, M5 macOS 26: on the ANE" "$(summary $D/limit_attn_8k.mlpackage m5 macos26)" "4/0/0 -"

# 2. one huge tensor
for t in "a17 ios17" "a18 ios26" "a14 ios16"; do
	set -- $t
	expect "tensor 496 MB, $1 $2: uncertain" "$(summary $D/limit_tensor_5568.mlpackage $1 $2)" "0/0/1 ANE078"
done
expect "tensor 256 MiB, a17 ios18: silent" "$(summary $D/limit_tensor_4096.mlpackage a17 ios18)" "1/0/0 -"

# 3. 8-bit palettized weights
expect "lut8, M5 iOS 26: off, sure" "$(summary $D/limit_lut8.mlpackage m5 ios26)" "0/1/0 ANE080"
expect "lut8, M4 iOS 26: off, sure" "$(summary $D/limit_lut8.mlpackage m4 ios26)" "0/1/0 ANE080"
expect "lut8, A16 iOS 26: uncertain (chip)" "$(summary $D/limit_lut8.mlpackage a16 ios26)" "0/0/1 ANE080"
expect "lut8, M5 iOS 18: not evaluated" "$(summary $D/limit_lut8.mlpackage m5 ios18)" "1/0/0 -"

# 4. plan: the whole model is one segment off the ANE, named by the rule
"$ANELINT" plan --format json --target m5 --os macos26 $D/limit_attn_32k.mlpackage >"$T/p" 2>"$T/err"
got=$(python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["models"][0]
print(len(m["segments"]), ",".join(s["unit"] for s in m["segments"]), m.get("model_rule") or "-")' "$T/p" 2>&1)
expect "plan: one segment on the CPU, moved by ANE077" "$got" "1 cpu ANE077"

# 5. --fail-on: a sure compile limit fails by default, an uncertain one does not
"$ANELINT" check --target m5 --os macos26 $D/limit_attn_32k.mlpackage >/dev/null 2>&1
rc=$?
expect "fail-on default, sure: exit 1" "$rc" 1
"$ANELINT" check --target m5 --os macos26 $D/limit_attn_16k.mlpackage >/dev/null 2>&1
rc=$?
expect "fail-on default, uncertain: exit 0" "$rc" 0
"$ANELINT" check --fail-on uncertain --target m5 --os macos26 $D/limit_attn_16k.mlpackage >/dev/null 2>&1
rc=$?
expect "fail-on uncertain: exit 1" "$rc" 1

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
