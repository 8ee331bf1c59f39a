#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_nn_io_fp16.sh: nn-io-fp16
# (src/rewrite/passes/nn_io_fp16.c, docs/surgery.md)
# on the crafted fix_subb (fp32 inputs a, b and output y): under --allow approximate
# every one fp16 and specificationVersion 7, within the tolerance; without it not
# run (tests/fix_model.sh has more).
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
fixed $F/fix_subb.mlmodel "$T/io.mlmodel" nn-io-fp16 "fp16 input 'a', input 'b', output 'y' (specificationVersion 7: iOS 16 / macOS 13)" --allow approximate
"$ANELINT" info "$T/io.mlmodel" >"$T/io.info"
[ "$(grep -c 'multiArray fp16' "$T/io.info")" = 3 ] && ! grep -q 'multiArray fp32' "$T/io.info" && ok ||
	{ bad "fix_subb: the I/O are not fp16"; cat "$T/io.info"; }
judge "$T/io.mlmodel"
# without --allow approximate it is not run at all: no entry, the I/O stay fp32
"$ANELINT" fix $F/fix_subb.mlmodel -o "$T/io0.mlmodel" --format json >"$T/io0.json" 2>/dev/null
! grep -q nn-io-fp16 "$T/io0.json" && [ "$("$ANELINT" info "$T/io0.mlmodel" | grep -c 'multiArray fp32')" = 3 ] && ok ||
	{ bad "fix_subb: nn-io-fp16 without --allow approximate"; cat "$T/io0.json"; }

summary
