#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/output_guard.sh: no path anelint writes may destroy an input (issue #28
# class 1). One case per writer (check/plan/report -o, --write-baseline, compare -o,
# compare --write-evidence, run --out, probe -o, calibrate -o, fix -o, split -o): an output
# that is an input model (by path, symlink or hard link), lies inside an input
# .mlpackage / .mlmodelc (Manifest.json, model.mlmodel, weight.bin, a new file in
# it, through a symlink to the package), or is a directory holding an input that
# the writer would replace, is refused with exit 2 and one stderr line naming both,
# and every input is left byte for byte as it was; outputs beside the inputs are
# still written. The library's al_output_check (src/base/atomic.c) decides for all
# of them; tests/unit/test_base.c tests it directly, python/tests the out= of fix.
set -u
: "${ANELINT:=build/anelint}"
D=tests/data/converted
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# fresh inputs for every case: an .mlmodel, an ML Program package with weights,
# a compiled model, evidence, a rules file; $T/orig holds the pristine copies
fresh() {
	rm -rf "$T/w"
	mkdir -p "$T/w"
	cp $D/pool_k15_s3__nn_ios13.mlmodel "$T/w/m.mlmodel"
	cp $D/gru__nn_ios14.mlmodel "$T/w/gru.mlmodel"
	cp -R $D/broadcast_mul_chw_c11__mlp_ios17_fp16.mlpackage "$T/w/p.mlpackage"
	cp -R tests/data/compiled/coremltools_add_model.mlmodelc "$T/w/c.mlmodelc"
	cp "$T/orig/e.json" "$T/w/e.json"
	printf 'id: ANE071\nfamilies: none\nprovenance: the output guard test\n' >"$T/w/r.rules"
}
mkdir -p "$T/orig"
"$ANELINT" compare $D/pool_k15_s3__nn_ios13.mlmodel --write-evidence json -o "$T/orig/e.json" >/dev/null 2>&1 ||
	bad "setup: --write-evidence json"
fresh
cp -R "$T/w/." "$T/orig/"

# unchanged: every input in $T/w is as in $T/orig (a model named by $EXTRA too)
unchanged() {
	for f in m.mlmodel gru.mlmodel e.json r.rules; do cmp -s "$T/orig/$f" "$T/w/$f" || return 1; done
	diff -r "$T/orig/p.mlpackage" "$T/w/p.mlpackage" >/dev/null 2>&1 &&
		diff -r "$T/orig/c.mlmodelc" "$T/w/c.mlmodelc" >/dev/null 2>&1 &&
		{ [ -z "${EXTRA:-}" ] || cmp -s "$T/orig/m.mlmodel" "$EXTRA"; }
}

# refused WHAT CMD...: exit 2, one stderr line naming the output and an input,
# the inputs unchanged ($SETUP, if set, runs after the fresh copies)
refused() {
	what=$1
	shift
	fresh
	[ -n "${SETUP:-}" ] && sh -c "$SETUP"
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	n=$(wc -l <"$T/err")
	if [ $rc -eq 2 ] && [ "$n" -eq 1 ] && grep -q "the output .*the input" "$T/err" && unchanged; then ok; else
		bad "$what: exit $rc (want 2), $n stderr lines, inputs $(unchanged && echo unchanged || echo CHANGED)"
		cat "$T/err"
	fi
}

# allowed WHAT FILE CMD...: exit 0 or 1 (findings), FILE written
allowed() {
	what=$1 file=$2
	shift 2
	fresh
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -le 1 ] && [ -e "$file" ]; then ok; else
		bad "$what: exit $rc, $file $( [ -e "$file" ] && echo written || echo missing)"
		cat "$T/err"
	fi
}

W=$T/w
PKG=$W/p.mlpackage
PM=$PKG/Data/com.apple.CoreML

# 1. check / plan / report -o, --write-baseline
refused "check --write-baseline MODEL" "$ANELINT" check $W/m.mlmodel --write-baseline $W/m.mlmodel
refused "check -o MODEL" "$ANELINT" check --format json $W/m.mlmodel -o $W/m.mlmodel
refused "check -o PKG/Manifest.json" "$ANELINT" check $PKG -o $PKG/Manifest.json
refused "plan -o PKG's model.mlmodel" "$ANELINT" plan --format json $PKG -o $PM/model.mlmodel
refused "report -o PKG's weight.bin" "$ANELINT" report --format html $PKG -o $PM/weights/weight.bin
refused "report -o a new file inside PKG" "$ANELINT" report $PKG -o $PKG/report.html
refused "check -o a file in a .mlmodelc" "$ANELINT" check --format text $W/c.mlmodelc -o $W/c.mlmodelc/model.mil
refused "check --write-baseline PKG/Manifest.json" "$ANELINT" check $PKG --write-baseline $PKG/Manifest.json
refused "check DIR (expanded) -o a found model" "$ANELINT" check --format json $W -o $W/gru.mlmodel
refused "check -o the --rules file" "$ANELINT" check --format text $W/m.mlmodel --rules $W/r.rules -o $W/r.rules
refused "check -o the package (a directory)" "$ANELINT" check --format json $PKG -o $PKG
refused "check -o a directory holding the model" "$ANELINT" check $W/m.mlmodel -o $W
SETUP="ln -s m.mlmodel $W/link.json" \
	refused "check -o a symlink to MODEL" "$ANELINT" check $W/m.mlmodel -o $W/link.json
SETUP="ln $W/m.mlmodel $W/hard.json" \
	refused "check -o a hard link of MODEL" "$ANELINT" check $W/m.mlmodel -o $W/hard.json
SETUP="ln -s p.mlpackage $W/plink" \
	refused "report -o through a symlink to PKG" "$ANELINT" report $PKG -o $W/plink/Manifest.json
refused "check PKG (as ./x/..) -o its Manifest" "$ANELINT" check $W/./p.mlpackage/../p.mlpackage -o $PKG/Manifest.json
allowed "check -o beside the model" $T/report.json "$ANELINT" check $W/m.mlmodel -o $T/report.json
allowed "check --write-baseline beside the package" $T/b.json "$ANELINT" check $PKG --write-baseline $T/b.json

# 2. compare --write-evidence -o
refused "compare --write-evidence -o MODEL" "$ANELINT" compare $W/m.mlmodel --write-evidence json -o $W/m.mlmodel
refused "compare --write-evidence -o PKG/Manifest.json" "$ANELINT" compare $PKG --write-evidence mil -o $PKG/Manifest.json
allowed "compare --write-evidence beside it" $T/e2.json "$ANELINT" compare $W/m.mlmodel --write-evidence json -o $T/e2.json
# the comparison's -o too (it wrote over the evidence it had read before #32's al_compare)
refused "compare -o EVIDENCE" "$ANELINT" compare $W/m.mlmodel $W/e.json -o $W/e.json
refused "compare -o MODEL" "$ANELINT" compare $W/m.mlmodel $W/e.json --format json -o $W/m.mlmodel
allowed "compare -o beside it" $T/c2.txt "$ANELINT" compare $W/m.mlmodel $W/e.json -o $T/c2.txt

# 3. calibrate -o: the model, the evidence
refused "calibrate -o MODEL" "$ANELINT" calibrate $W/m.mlmodel $W/e.json -o $W/m.mlmodel
refused "calibrate -o EVIDENCE" "$ANELINT" calibrate $W/m.mlmodel $W/e.json -o $W/e.json
refused "calibrate -o inside PKG" "$ANELINT" calibrate $PKG $W/e.json -o $PM/cal.rules

# 4. run --out DIR: inside the package, or where DIR/NAME.npy is the model; the
#    model's own directory is fine
refused "run --out inside PKG" "$ANELINT" run $PKG --random --out $PM
refused "run --out PKG" "$ANELINT" run $PKG --random --out $PKG
SETUP="mkdir $W/o && cp $W/m.mlmodel $W/o/var_31.npy" EXTRA=$W/o/var_31.npy \
	refused "run --out DIR where DIR/NAME.npy is the model" "$ANELINT" run $W/o/var_31.npy --random --out $W/o
allowed "run --out the model's directory" $W/var_31.npy "$ANELINT" run $W/m.mlmodel --random --out $W

# 5. probe -o: it reads no model, so nothing to refuse; still written
allowed "probe -o" $T/probes/manifest.json "$ANELINT" probe -o $T/probes

# 6. fix -o (--in-place still replaces the input, on request)
refused "fix -o MODEL" "$ANELINT" fix $W/m.mlmodel -o $W/m.mlmodel
SETUP="ln $W/m.mlmodel $W/h.mlmodel" \
	refused "fix -o a hard link of MODEL" "$ANELINT" fix $W/m.mlmodel -o $W/h.mlmodel
refused "fix -o a package inside PKG" "$ANELINT" fix $PKG -o $PKG/Data/fixed.mlpackage
refused "fix -o a directory holding PKG" "$ANELINT" fix $PKG -o $W
allowed "fix -o beside it" $T/fixed.mlmodel "$ANELINT" fix $W/m.mlmodel -o $T/fixed.mlmodel
fresh
"$ANELINT" fix $W/m.mlmodel --in-place >/dev/null 2>"$T/err"
rc=$?
[ $rc -le 1 ] && ! grep -q "the output" "$T/err" && ok || { bad "fix --in-place: exit $rc"; cat "$T/err"; }

# 7. split -o (the library's al_split_write asks the guard itself)
refused "split -o MODEL" "$ANELINT" split $W/gru.mlmodel --at while_loop_0 -o $T/a.mlmodel -o $W/gru.mlmodel
refused "split -o a directory holding MODEL" "$ANELINT" split $W/gru.mlmodel --at while_loop_0 -o $T/a.mlmodel -o $W
refused "split --pipeline MODEL" "$ANELINT" split $W/gru.mlmodel --at while_loop_0 -o $T/a.mlmodel -o $T/b.mlmodel \
	--pipeline $W/gru.mlmodel
rm -f $T/a.mlmodel $T/b.mlmodel $T/pp.mlmodel
allowed "split -o beside it" $T/b.mlmodel "$ANELINT" split $W/gru.mlmodel --at while_loop_0 -o $T/a.mlmodel -o $T/b.mlmodel

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
