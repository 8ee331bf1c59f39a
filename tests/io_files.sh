#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/io_files.sh: what anelint opens and what it writes (issue #14 items 6-7).
# The inputs are made here, not kept in tests/regress: git cannot hold a FIFO,
# and a sparse file checked in would be dense.
#   - every input path that is a FIFO (--rules, --input NAME=, --inputs DIR/x.npy)
#     fails at once with exit 4 and one line, instead of hanging in open();
#   - outputs get the modes of a plain create (0666 / 0777 less the umask):
#     run --out, check -o, split's packages, fix's package;
#   - a failed write (disk full, simulated with `ulimit -f` and SIGXFSZ ignored)
#     leaves nothing: no directory run --out created, no temporary;
#   - fix of a package whose weight.bin is sparse (1 GB apparent, a few KB on
#     disk) keeps the holes: the output's allocated blocks stay small.
set -u
: "${ANELINT:=build/anelint}"
pass=0 fail=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
nn=tests/data/converted/pool_k15_s3__nn_ios13.mlmodel
mlp=tests/data/converted/dilated_conv__mlp_ios17_fp16.mlpackage
mlp2=tests/data/converted/transformer_encoder__mlp_ios17_fp16.mlpackage

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }

# expect RC DESCRIPTION -- CMD...: exit code RC within 20 s, exactly one line on stderr
expect() {
	want=$1 what=$2
	shift 3
	timeout 20 "$@" >"$dir/out" 2>"$dir/err"
	rc=$?
	lines=$(wc -l <"$dir/err")
	if [ "$rc" -eq "$want" ] && [ "$lines" -eq 1 ]; then
		ok
	else
		bad "$what: exit $rc (want $want; 124 is a hang), $lines stderr lines"
		head -3 "$dir/err"
	fi
}

mode() { stat -c %a "$1"; }

# ---- FIFOs are refused, not waited on
mkfifo "$dir/rules.fifo" "$dir/x.fifo"
mkdir "$dir/inputs" && mkfifo "$dir/inputs/x.npy"
expect 4 "--rules FIFO" -- "$ANELINT" check --rules "$dir/rules.fifo" "$nn"
grep -q "not a regular file" "$dir/err" && ok || bad "--rules FIFO: no clear error"
expect 4 "explain --rules FIFO" -- "$ANELINT" explain --rules "$dir/rules.fifo" ANE008
expect 4 "run --input x=FIFO" -- "$ANELINT" run "$nn" --input "x=$dir/x.fifo"
expect 4 "run --inputs DIR with a FIFO x.npy" -- "$ANELINT" run "$nn" --inputs "$dir/inputs"
expect 4 "fp16 --inputs DIR with a FIFO x.npy" -- "$ANELINT" fp16 "$nn" --inputs "$dir/inputs"
expect 4 "a model that is a FIFO" -- "$ANELINT" check "$dir/x.fifo"

# ---- modes of what is written: those of a plain create
(
	umask 022
	"$ANELINT" run "$nn" --random --out "$dir/o1" >/dev/null 2>&1 &&
		[ "$(mode "$dir/o1")" = 755 ] && [ "$(mode "$dir/o1/var_31.npy")" = 644 ]
) && ok || bad "run --out under umask 022: want 755 / 644"
(
	umask 027
	"$ANELINT" run "$nn" --random --out "$dir/o2" >/dev/null 2>&1 &&
		[ "$(mode "$dir/o2")" = 750 ] && [ "$(mode "$dir/o2/var_31.npy")" = 640 ]
) && ok || bad "run --out under umask 027: want 750 / 640"
(
	umask 002
	"$ANELINT" check "$nn" -o "$dir/report.txt" >/dev/null 2>&1
	[ "$(mode "$dir/report.txt")" = 664 ]
) && ok || bad "check -o under umask 002: want 664"
(
	umask 022
	"$ANELINT" split "$mlp2" --at attn_output_1_cast_fp16 -o "$dir/p1.mlpackage" -o "$dir/p2.mlpackage" \
		>/dev/null 2>&1 &&
		[ "$(mode "$dir/p1.mlpackage")" = 755 ] && [ "$(mode "$dir/p2.mlpackage/Manifest.json")" = 644 ] &&
		[ "$(mode "$dir/p1.mlpackage/Data/com.apple.CoreML")" = 755 ]
) && ok || bad "split packages under umask 022: want 755 / 644 (were 0700 directories)"

# ---- a failed write leaves nothing (SIGXFSZ ignored: write() fails with EFBIG)
expect 4 "run --out NEW, disk full" -- sh -c "trap '' XFSZ; ulimit -f 8; exec \"\$0\" run $nn --random --out $dir/full" "$ANELINT"
[ ! -e "$dir/full" ] && ok || bad "run --out: the directory it created was left behind"
ls -a "$dir" | grep -q 'tmp' && bad "run --out: a temporary was left: $(ls -a "$dir" | grep tmp)" || ok
mkdir "$dir/existing"
expect 4 "run --out EXISTING, disk full" -- sh -c "trap '' XFSZ; ulimit -f 8; exec \"\$0\" run $nn --random --out $dir/existing" "$ANELINT"
[ -z "$(ls -A "$dir/existing")" ] && ok || bad "run --out EXISTING: left $(ls -A "$dir/existing")"
printf 'old\n' >"$dir/keep.txt"
expect 4 "report -o, disk full" -- sh -c "trap '' XFSZ; ulimit -f 8; exec \"\$0\" report --format html $nn -o $dir/keep.txt" "$ANELINT"
[ "$(cat "$dir/keep.txt")" = old ] && ok || bad "report -o: the old file was not kept"

# ---- fix keeps the holes of a sparse weight.bin
cp -r "$mlp" "$dir/sparse.mlpackage"
w=Data/com.apple.CoreML/weights/weight.bin
truncate -s 1G "$dir/sparse.mlpackage/$w"
if [ "$(stat -c %b "$dir/sparse.mlpackage/$w")" -lt 1024 ]; then
	expect_ok=0
	timeout 60 "$ANELINT" fix "$dir/sparse.mlpackage" -o "$dir/fixed.mlpackage" >/dev/null 2>"$dir/err" || expect_ok=$?
	[ "$expect_ok" -eq 0 ] && ok || bad "fix of a sparse package: exit $expect_ok: $(head -2 "$dir/err")"
	size=$(stat -c %s "$dir/fixed.mlpackage/$w" 2>/dev/null || echo 0)
	blocks=$(stat -c %b "$dir/fixed.mlpackage/$w" 2>/dev/null || echo 999999999)
	[ "$size" -eq 1073741824 ] && ok || bad "fix of a sparse package: weight.bin is $size bytes"
	# 512-byte blocks: under 1 MB allocated for 1 GB apparent
	[ "$blocks" -lt 2048 ] && ok || bad "fix of a sparse package wrote it dense: $blocks blocks"
else
	echo "skip: $dir has no sparse files"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
