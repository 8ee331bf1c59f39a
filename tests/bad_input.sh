#!/bin/sh
# SPDX-License-Identifier: MIT
# bad_input.sh: feed `anelint check` broken, truncated and hostile inputs and
# check that it fails cleanly. Every bad case must:
#   - exit 3 (invalid model) or 4 (I/O error), as the case expects,
#   - print exactly one line on stderr, "anelint: error: INPUT...",
#   - not crash (no exit >= 128, no sanitizer report, no timeout),
#   - write nothing next to the input (listing + checksums before/after).
# Positive controls (the valid fixtures) must exit 0 or 1 with no error line;
# a case that allows 0/1 and 3/4 is judged by the exit code it gets.
# A few 1 KB hostile files must finish within 2 s and 64 MB peak RSS (256 MB
# for a sanitizer build; measured with GNU /usr/bin/time, skipped without it).
#
# Inputs are generated at test time by tools/mkmodel.py (stdlib Python) and,
# when present, also made from the fixtures in tests/data/.
#
#   ANELINT=build/anelint sh tests/bad_input.sh            (from the repo root)
#   ANELINT=build-asan/anelint sh tests/bad_input.sh       (sanitizer build)
#   VERBOSE=1 ...                     also show each case's stderr
# Prints "ok NAME" or "FAIL NAME: why" per case, then "N passed, M failed".

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
ANELINT=${ANELINT:-build/anelint}
case $ANELINT in /*) ;; *) ANELINT=$(pwd)/$ANELINT ;; esac
MKMODEL="python3 $root/tools/mkmodel.py"

# Leak reports count as failures in sanitizer builds.
ASAN_OPTIONS=${ASAN_OPTIONS-detect_leaks=1}
export ASAN_OPTIONS

if [ ! -x "$ANELINT" ]; then
	echo "FAIL setup: $ANELINT is not an executable (build it first)"
	echo "0 passed, 1 failed"
	exit 1
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/anelint-bad.XXXXXX") || exit 1
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
mkdir "$T/res" "$T/src"

passed=0
failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

# A wall-clock limit per run, so a hang fails instead of blocking the suite.
TIMEOUT=
command -v timeout >/dev/null 2>&1 && TIMEOUT="timeout 10"
# GNU time gives wall seconds and peak RSS (KB); -o keeps it off stderr.
GNUTIME=
/usr/bin/time -f '%e %M' -o "$T/res/probe" true 2>/dev/null && GNUTIME=/usr/bin/time
# Peak RSS limit for the hostile 1 KB inputs: 64 MB, or 256 MB for a
# sanitizer build (shadow memory and quarantine; the bound still catches an
# allocation sized from a hostile length prefix).
RSS_LIMIT_KB=65536
grep -q -e __asan_init -e __ubsan_handle "$ANELINT" 2>/dev/null && RSS_LIMIT_KB=262144

# ------------------------------------------------------------------ helpers

# bytes HEX...: write the bytes given in hex to stdout.
bytes() {
	for h in "$@"; do
		# shellcheck disable=SC2059 # the format is the octal escape
		printf "\\$(printf %o "0x$h")"
	done
}

# poke FILE OFFSET HEX...: overwrite bytes in place.
poke() {
	f=$1 off=$2
	shift 2
	bytes "$@" | dd of="$f" bs=1 seek="$off" conv=notrunc 2>/dev/null
}

# cut_file SRC DST N: the first N bytes of SRC.
cut_file() {
	dd if="$1" of="$2" bs=1 count="$3" 2>/dev/null
}

size_of() {
	wc -c <"$1" | tr -d ' '
}

# copy SRC DST: a writable copy (the corpus is read-only).
copy() {
	cp -R "$1" "$2" && chmod -R u+w "$2"
}

# snapshot DIR: every name under DIR (symlinks included, not followed) and a
# checksum of every regular file.
snapshot() {
	(cd "$1" && find . -print | LC_ALL=C sort && find . -type f -exec cksum {} + | LC_ALL=C sort)
}

# new_case NAME: make and enter-able directory $T/NAME for the case's files.
new_case() {
	dir=$T/$1
	mkdir -p "$dir"
}

# run NAME EXPECT INPUT [BOUND]: run `anelint check INPUT` with the current
# directory set to $T/NAME (INPUT is relative to it) and judge the result.
# EXPECT is a |-separated list of allowed exit codes. With BOUND=bound the run
# must also take <= 2 s and <= $RSS_LIMIT_KB peak RSS; its exit code and
# stderr are then only checked for crashes. On exit 3/4, stderr must be one
# "anelint: error: INPUT..." line, or several such lines when $lines is "many"
# (several independent defects, e.g. every blob of a cut weight.bin).
run() {
	name=$1 expect=$2 input=$3 bound=${4:-}
	dir=$T/$name out=$T/res/$name
	snapshot "$dir" >"$out.before"
	if [ -n "$GNUTIME" ]; then
		(cd "$dir" && $TIMEOUT $GNUTIME -f '%e %M' -o "$out.time" \
			"$ANELINT" check "$input" >"$out.stdout" 2>"$out.stderr")
	else
		(cd "$dir" && $TIMEOUT "$ANELINT" check "$input" >"$out.stdout" 2>"$out.stderr")
	fi
	rc=$?
	snapshot "$dir" >"$out.after"

	if grep -q -E 'Sanitizer|runtime error:' "$out.stderr"; then
		fail "$name" "sanitizer report (exit $rc): $(grep -m1 -E 'Sanitizer|runtime error:' "$out.stderr")"
		return
	fi
	if [ -n "$TIMEOUT" ] && [ "$rc" -eq 124 ]; then
		fail "$name" "timed out after 10 s (hangs?)"
		return
	fi
	if [ "$rc" -ge 128 ]; then
		fail "$name" "crashed: exit $rc (signal $((rc - 128)))"
		return
	fi
	if ! cmp -s "$out.before" "$out.after"; then
		fail "$name" "the input directory changed: $(diff "$out.before" "$out.after" | grep '^[<>]' | head -3 | tr '\n' ' ')"
		return
	fi
	if [ "$bound" = bound ]; then
		check_bound "$name" "$out" "$rc"
		return
	fi
	case "|$expect|" in
	*"|$rc|"*) ;;
	*)
		fail "$name" "exit $rc, expected $expect; stderr: $(head -c 300 "$out.stderr" | tr '\n' ' ')"
		return
		;;
	esac
	nlines=$(wc -l <"$out.stderr" | tr -d ' ')
	first=$(head -n 1 "$out.stderr")
	if [ "$rc" -le 1 ]; then
		if grep -q '^anelint: error:' "$out.stderr"; then
			fail "$name" "exit $rc, but stderr has an error: $first"
			return
		fi
	else
		other=$(awk -v p="anelint: error: $input" 'index($0, p) != 1' "$out.stderr" | head -n 1)
		if [ -n "$other" ] || [ "$first" = "anelint: error: $input" ]; then
			fail "$name" "stderr line is not 'anelint: error: $input...': ${other:-$first}"
			return
		fi
		if [ "$nlines" -lt 1 ] || { [ "$nlines" -ne 1 ] && [ "${lines:-1}" = 1 ]; }; then
			fail "$name" "expected 1 line on stderr, got $nlines: $(head -c 300 "$out.stderr" | tr '\n' '|')"
			return
		fi
	fi
	[ -n "${VERBOSE:-}" ] && [ -s "$out.stderr" ] && sed 's/^/    /' "$out.stderr"
	ok "$name"
}

# check_bound NAME RESULTS RC: the time and memory bound of a hostile input.
check_bound() {
	name=$1 out=$2 rc=$3
	if [ -z "$GNUTIME" ]; then
		ok "$name (exit $rc; no GNU /usr/bin/time: time and RSS not measured)"
		return
	fi
	# shellcheck disable=SC2046 # "SECONDS KB"
	set -- $(tail -n 1 "$out.time")
	secs=$1 kb=$2
	if ! awk "BEGIN { exit !($secs <= 2.0) }"; then
		fail "$name" "took $secs s (limit 2 s)"
		return
	fi
	if [ "$kb" -gt "$RSS_LIMIT_KB" ]; then
		fail "$name" "peak RSS $kb KB (limit $RSS_LIMIT_KB KB)"
		return
	fi
	ok "$name (exit $rc, ${secs} s, ${kb} KB)"
}

# ------------------------------------------------------------------ sources

lines=1

# Generated sources: always present.
if ! $MKMODEL nn "$T/src/nn.mlmodel" || ! $MKMODEL mlpackage "$T/src/pkg.mlpackage"; then
	echo "FAIL setup: tools/mkmodel.py could not generate the sources"
	echo "0 passed, 1 failed"
	exit 1
fi
GEN_NN=$T/src/nn.mlmodel
GEN_PKG=$T/src/pkg.mlpackage

# Fixtures from tests/data (top level; smallest NN file and smallest package
# with a weight.bin), if another part of the suite has put them there.
FIX_NN=
FIX_PKG=
# shellcheck disable=SC2012 # fixture names are plain
if [ -d "$root/tests/data" ]; then
	FIX_NN=$(ls -S "$root"/tests/data/*.mlmodel 2>/dev/null | tail -n 1)
	FIX_PKG=$(ls -dS "$root"/tests/data/*.mlpackage/Data/com.apple.CoreML/weights/weight.bin 2>/dev/null |
		tail -n 1 | sed 's|/Data/com.apple.CoreML/weights/weight.bin$||')
fi

# ------------------------------------------------------------------ positive controls

control() {
	name=$1 src=$2
	new_case "$name"
	copy "$src" "$dir/$(basename "$src")"
	run "$name" "0|1" "$(basename "$src")"
}

control ok-generated-nn "$GEN_NN"
control ok-generated-mlpackage "$GEN_PKG"
for f in "$root"/tests/data/*.mlmodel "$root"/tests/data/*.mlpackage; do
	[ -e "$f" ] || continue
	control "ok-fixture-$(basename "$f")" "$f"
done

# Generator shapes the hostile cases below depend on, kept valid here.
new_case ok-loops-nested-3
$MKMODEL nested "$dir/m.mlmodel" 3 && run ok-loops-nested-3 "0|1" m.mlmodel
new_case ok-pipeline-nested-2
$MKMODEL pipeline "$dir/m.mlmodel" 2 && run ok-pipeline-nested-2 "0|1" m.mlmodel

# An unknown field (varint or bytes) must be skipped: newer models add fields.
new_case ok-unknown-field-varint
{ cat "$GEN_NN"; bytes 88 e6 03 01; } >"$dir/m.mlmodel" # field 7777, varint 1
run ok-unknown-field-varint "0|1" m.mlmodel
new_case ok-unknown-field-bytes
{ cat "$GEN_NN"; bytes 8a e6 03 03 61 62 63; } >"$dir/m.mlmodel" # field 7777, "abc"
run ok-unknown-field-bytes "0|1" m.mlmodel

# ------------------------------------------------------------------ truncated .mlmodel

truncations() {
	tag=$1 src=$2
	n=$(size_of "$src")
	for off in 1 3 $((n / 4)) $((n / 2)) $((3 * n / 4)) $((n - 1)); do
		name=truncated-$tag-at-$off
		new_case "$name"
		cut_file "$src" "$dir/m.mlmodel" "$off"
		run "$name" 3 m.mlmodel
	done
}
truncations generated "$GEN_NN"
[ -n "$FIX_NN" ] && truncations "$(basename "$FIX_NN" .mlmodel)" "$FIX_NN"

# ------------------------------------------------------------------ whole-file garbage

new_case random-bytes
$MKMODEL random "$dir/m.mlmodel" 1024 1
run random-bytes 3 m.mlmodel

new_case empty-file
: >"$dir/m.mlmodel"
run empty-file "3|4" m.mlmodel

new_case empty-directory
mkdir "$dir/m.mlpackage"
run empty-directory "3|4" m.mlpackage

new_case missing-path
run missing-path 4 missing.mlmodel

# Not regular files: a FIFO with no writer (opening it for reading must not
# block; left out without `timeout`, which is what ends a hang), a character
# device.
if [ -n "$TIMEOUT" ]; then
	new_case fifo
	mkfifo "$dir/m.mlmodel"
	run fifo "3|4" m.mlmodel
fi

new_case char-device
ln -s /dev/zero "$dir/m.mlmodel"
run char-device "3|4" m.mlmodel

# ------------------------------------------------------------------ protobuf wire level

# Model.description (field 2) claiming 2^32-1 bytes, then a few bytes.
new_case huge-length-prefix
bytes 12 ff ff ff ff 0f 0a 01 78 >"$dir/m.mlmodel"
run huge-length-prefix 3 m.mlmodel

# A length of 2^64-1 (offset + length overflows).
new_case huge-length-2e64
bytes 12 ff ff ff ff ff ff ff ff ff 01 0a 01 78 >"$dir/m.mlmodel"
run huge-length-2e64 3 m.mlmodel

# A valid start, then Model.neuralNetwork (500) claiming 4 GB.
new_case huge-length-nested
bytes 08 04 a2 1f ff ff ff ff 0f 0a 02 08 01 >"$dir/m.mlmodel"
run huge-length-nested 3 m.mlmodel

# specificationVersion as an 11-byte varint.
new_case varint-11-bytes
{ bytes 08 ff ff ff ff ff ff ff ff ff ff 01; tail -c +3 "$GEN_NN"; } >"$dir/m.mlmodel"
run varint-11-bytes 3 m.mlmodel

# A file that ends inside a varint.
new_case varint-unterminated
{ cat "$GEN_NN"; bytes 08 ff ff; } >"$dir/m.mlmodel"
run varint-unterminated 3 m.mlmodel

# Wire type 3 (start group, proto2 only; none in Core ML), properly ended.
new_case wiretype-3-group
{ cat "$GEN_NN"; bytes 8b e6 03 08 01 8c e6 03; } >"$dir/m.mlmodel"
run wiretype-3-group 3 m.mlmodel

new_case wiretype-3-unterminated
{ cat "$GEN_NN"; bytes 8b e6 03 08 01; } >"$dir/m.mlmodel"
run wiretype-3-unterminated 3 m.mlmodel

new_case wiretype-4-stray
{ cat "$GEN_NN"; bytes 8c e6 03; } >"$dir/m.mlmodel"
run wiretype-4-stray 3 m.mlmodel

# Wire types 6 and 7 do not exist (tags 8e/8f e6 03: field 7777).
new_case wiretype-6
{ cat "$GEN_NN"; bytes 8e e6 03 00 00 00 00; } >"$dir/m.mlmodel"
run wiretype-6 3 m.mlmodel
new_case wiretype-7
{ cat "$GEN_NN"; bytes 8f e6 03 00 00 00 00; } >"$dir/m.mlmodel"
run wiretype-7 3 m.mlmodel

new_case field-number-0
{ cat "$GEN_NN"; bytes 02 00; } >"$dir/m.mlmodel"
run field-number-0 3 m.mlmodel

# Nesting past AL_MAX_DEPTH (32).
new_case loops-nested-40
$MKMODEL nested "$dir/m.mlmodel" 40
run loops-nested-40 3 m.mlmodel

new_case pipeline-nested-40
$MKMODEL pipeline "$dir/m.mlmodel" 40
run pipeline-nested-40 3 m.mlmodel

new_case loops-nested-1k
$MKMODEL deepchain "$dir/m.mlmodel" 1024
run loops-nested-1k 3 m.mlmodel

# ------------------------------------------------------------------ .mlpackage structure

# pkg NAME [mkmodel mlpackage options]: a generated package, $dir/m.mlpackage
# ($P), with its weights at $W.
pkg() {
	new_case "$1"
	shift
	$MKMODEL mlpackage "$dir/m.mlpackage" "$@"
	P=$dir/m.mlpackage
	W=$P/Data/com.apple.CoreML/weights/weight.bin
}

pkg manifest-without-data
rm -rf "$P/Data"
run manifest-without-data "3|4" m.mlpackage

pkg manifest-truncated-json
cut_file "$GEN_PKG/Manifest.json" "$P/Manifest.json" 100
run manifest-truncated-json 3 m.mlpackage

pkg manifest-empty
: >"$P/Manifest.json"
run manifest-empty 3 m.mlpackage

pkg manifest-not-object
echo '["fileFormatVersion", "1.0.0"]' >"$P/Manifest.json"
run manifest-not-object 3 m.mlpackage

pkg manifest-path-not-string
sed 's|"com.apple.CoreML/model.mlmodel"|17|' "$GEN_PKG/Manifest.json" >"$P/Manifest.json"
run manifest-path-not-string 3 m.mlpackage

pkg manifest-root-id-unknown
sed 's|"rootModelIdentifier": "[^"]*"|"rootModelIdentifier": "no-such-item"|' \
	"$GEN_PKG/Manifest.json" >"$P/Manifest.json"
run manifest-root-id-unknown 3 m.mlpackage

pkg manifest-missing
rm "$P/Manifest.json"
run manifest-missing "3|4" m.mlpackage

pkg manifest-is-directory
rm "$P/Manifest.json" && mkdir "$P/Manifest.json"
run manifest-is-directory "3|4" m.mlpackage

pkg root-model-is-directory
rm "$P/Data/com.apple.CoreML/model.mlmodel" && mkdir "$P/Data/com.apple.CoreML/model.mlmodel"
run root-model-is-directory "3|4" m.mlpackage

pkg weight-bin-is-directory
rm "$W" && mkdir "$W"
run weight-bin-is-directory "3|4" m.mlpackage

pkg manifest-path-etc-passwd --root-path ../../etc/passwd
run manifest-path-etc-passwd 3 m.mlpackage

# A valid model outside the package, reached by "..": must not be loaded.
pkg manifest-path-dotdot --root-path ../../outside/model.mlmodel
mkdir "$dir/outside" && cp "$GEN_PKG/Data/com.apple.CoreML/model.mlmodel" "$dir/outside/"
run manifest-path-dotdot 3 m.mlpackage

pkg manifest-path-absolute --root-path "$T/manifest-path-absolute/outside/model.mlmodel"
mkdir "$dir/outside" && cp "$GEN_PKG/Data/com.apple.CoreML/model.mlmodel" "$dir/outside/"
run manifest-path-absolute 3 m.mlpackage

# The root model file is a symlink to a valid model outside the package.
pkg symlink-root-model-outside
mkdir "$dir/outside" && mv "$P/Data/com.apple.CoreML/model.mlmodel" "$dir/outside/"
ln -s ../../../outside/model.mlmodel "$P/Data/com.apple.CoreML/model.mlmodel"
run symlink-root-model-outside 3 m.mlpackage

# The weights directory is a symlink to valid weights outside the package.
pkg symlink-weights-outside
mkdir "$dir/outside" && mv "$P/Data/com.apple.CoreML/weights" "$dir/outside/"
ln -s ../../../outside/weights "$P/Data/com.apple.CoreML/weights"
run symlink-weights-outside 3 m.mlpackage

# ------------------------------------------------------------------ weight.bin

# The generated weight.bin: header (0..63), one blob's metadata at 64, fp16
# data at 128..159; the const refers to metadata offset 64.
pkg weight-missing
rm "$W"
run weight-missing "3|4" m.mlpackage

pkg weight-empty
: >"$W"
run weight-empty 3 m.mlpackage

pkg weight-truncated-header
cut_file "$GEN_PKG/Data/com.apple.CoreML/weights/weight.bin" "$W" 40
run weight-truncated-header 3 m.mlpackage

pkg weight-truncated-metadata
cut_file "$GEN_PKG/Data/com.apple.CoreML/weights/weight.bin" "$W" 64
run weight-truncated-metadata 3 m.mlpackage

pkg weight-truncated-data
cut_file "$GEN_PKG/Data/com.apple.CoreML/weights/weight.bin" "$W" 140
run weight-truncated-data 3 m.mlpackage

pkg weight-blob-offset-past-end --blob-offset 4096
run weight-blob-offset-past-end 3 m.mlpackage

pkg weight-blob-offset-2e63 --blob-offset 9223372036854775808
run weight-blob-offset-2e63 3 m.mlpackage

pkg weight-blob-offset-unaligned --blob-offset 65
run weight-blob-offset-unaligned 3 m.mlpackage

pkg weight-header-version-1
poke "$W" 4 01
run weight-header-version-1 3 m.mlpackage

pkg weight-bad-sentinel
poke "$W" 64 00 00 00 00
run weight-bad-sentinel 3 m.mlpackage

pkg weight-size-huge # metadata sizeInBytes = 2^64-1
poke "$W" 72 ff ff ff ff ff ff ff ff
run weight-size-huge 3 m.mlpackage

pkg weight-data-offset-huge # metadata data offset = 2^64-64
poke "$W" 80 c0 ff ff ff ff ff ff ff
run weight-data-offset-huge 3 m.mlpackage

# Core ML refuses these two, but anelint reads only the 64-byte metadata
# record (mil.c check_blob: a dtype mismatch is a warning, the size is not
# compared with the shape): only robustness is checked.
pkg weight-size-mismatch # 30 bytes of data for a [1,16] fp16 tensor
poke "$W" 72 1e
run weight-size-mismatch "0|1|3" m.mlpackage

pkg weight-dtype-mismatch # blob says fp32, the const says fp16
poke "$W" 68 02
run weight-dtype-mismatch "0|1|3" m.mlpackage

# The same corruptions of a fixture package's weight.bin (its first blob's
# metadata is at 64 too: blob storage v2 always starts there).
if [ -n "$FIX_PKG" ]; then
	fb=$(basename "$FIX_PKG" .mlpackage)
	for c in version-1:4:01 bad-sentinel:64:00 truncated:-:129; do
		what=${c%%:*} rest=${c#*:}
		off=${rest%%:*} val=${rest#*:}
		name=weight-$what-$fb
		new_case "$name"
		copy "$FIX_PKG" "$dir/m.mlpackage"
		w=$dir/m.mlpackage/Data/com.apple.CoreML/weights/weight.bin
		lines=1
		if [ "$off" = - ]; then
			cut_file "$FIX_PKG/Data/com.apple.CoreML/weights/weight.bin" "$w" "$val"
			lines=many # one error per blob cut off
		else
			poke "$w" "$off" "$val"
		fi
		run "$name" 3 m.mlpackage
	done
	lines=1
fi

# ------------------------------------------------------------------ compiled models (.mlmodelc)

CD=$root/tests/data/compiled
# mlmodelc NAME FIXTURE: a writable copy of a compiled fixture, $dir/m.mlmodelc ($C).
mlmodelc() {
	new_case "$1"
	copy "$CD/$2.mlmodelc" "$dir/m.mlmodelc"
	C=$dir/m.mlmodelc
}
if [ -d "$CD" ]; then
	mlmodelc mlmodelc-control coremltools_add_model
	run mlmodelc-control "0|1" m.mlmodelc

	mlmodelc mil-syntax coremltools_add_model
	sed 's/mul(x = x/mul[x = x/' "$CD/coremltools_add_model.mlmodelc/model.mil" >"$C/model.mil"
	run mil-syntax 3 m.mlmodelc

	mlmodelc mil-truncated fluidaudio_TokenDurationPrediction
	cut_file "$CD/fluidaudio_TokenDurationPrediction.mlmodelc/model.mil" "$C/model.mil" 1500
	run mil-truncated 3 m.mlmodelc

	mlmodelc mil-empty coremltools_add_model
	: >"$C/model.mil"
	run mil-empty 3 m.mlmodelc

	mlmodelc mil-nested-types coremltools_add_model
	{ printf 'program(1.0)\n[a = '; i=0; while [ $i -lt 5000 ]; do printf 'tuple<'; i=$((i + 1)); done; } >"$C/model.mil"
	run mil-nested-types 3 m.mlmodelc

	mlmodelc mil-nested-lists coremltools_add_model
	{ printf 'program(1.0)\n[a = tensor<int32, [1]>('; i=0; while [ $i -lt 5000 ]; do printf '['; i=$((i + 1)); done; } >"$C/model.mil"
	run mil-nested-lists 3 m.mlmodelc

	mlmodelc mil-missing coremltools_add_model
	rm "$C/model.mil"
	run mil-missing "3|4" m.mlmodelc

	mlmodelc mil-is-directory coremltools_add_model
	rm "$C/model.mil" && mkdir "$C/model.mil"
	run mil-is-directory "3|4" m.mlmodelc

	mlmodelc mil-symlink-outside coremltools_add_model
	mkdir "$dir/outside" && cp "$CD/coremltools_add_model.mlmodelc/model.mil" "$dir/outside/"
	rm "$C/model.mil" && ln -s ../outside/model.mil "$C/model.mil"
	run mil-symlink-outside 3 m.mlmodelc

	mlmodelc mil-blob-offset silero_vad_palette_4bit
	sed 's/offset = tensor<uint64, \[\]>(64))/offset = tensor<uint64, []>(99999999999))/' \
		"$CD/silero_vad_palette_4bit.mlmodelc/model.mil" >"$C/model.mil"
	run mil-blob-offset 3 m.mlmodelc

	mlmodelc weight-bin-truncated silero_vad_palette_4bit
	cut_file "$CD/silero_vad_palette_4bit.mlmodelc/weights/weight.bin" "$C/weights/weight.bin" 40
	run weight-bin-truncated 3 m.mlmodelc

	mlmodelc cdata-short coremltools_add_model
	cut_file "$CD/coremltools_add_model.mlmodelc/coremldata.bin" "$C/coremldata.bin" 20
	run cdata-short 3 m.mlmodelc

	mlmodelc cdata-kind-length coremltools_add_model
	poke "$C/coremldata.bin" 28 ff ff ff ff ff ff ff 7f
	run cdata-kind-length 3 m.mlmodelc

	mlmodelc cdata-desc-length coremltools_add_model
	poke "$C/coremldata.bin" 75 ff ff ff 0f
	run cdata-desc-length 3 m.mlmodelc

	mlmodelc cdata-bad-description coremltools_add_model
	poke "$C/coremldata.bin" 83 ff ff ff ff
	run cdata-bad-description 3 m.mlmodelc

	mlmodelc cdata-bad-type coremltools_add_model
	poke "$C/coremldata.bin" 0 00 00 00 80
	run cdata-bad-type 3 m.mlmodelc

	mlmodelc espresso-control crafted_espresso
	run espresso-control "0|1" m.mlmodelc

	mlmodelc espresso-bad-json crafted_espresso
	cut_file "$CD/crafted_espresso.mlmodelc/model.espresso.net" "$C/model.espresso.net" 200
	run espresso-bad-json 3 m.mlmodelc

	mlmodelc espresso-no-layers crafted_espresso
	echo '{"layers": 7}' >"$C/model.espresso.net"
	run espresso-no-layers 3 m.mlmodelc

	mlmodelc espresso-layer-not-object crafted_espresso
	echo '{"layers": [1, 2]}' >"$C/model.espresso.net"
	run espresso-layer-not-object 3 m.mlmodelc

	mlmodelc espresso-deep-json crafted_espresso
	{ printf '{"layers": '; i=0; while [ $i -lt 5000 ]; do printf '['; i=$((i + 1)); done; } >"$C/model.espresso.net"
	run espresso-deep-json 3 m.mlmodelc

	mlmodelc espresso-net-missing crafted_espresso
	rm "$C/model.espresso.net"
	run espresso-net-missing "3|4" m.mlmodelc

	# model.espresso.shape: hostile entries are located errors; an absent file leaves the inferred shapes
	S=crafted_espresso.mlmodelc/model.espresso.shape
	mlmodelc espresso-shape-bad-json crafted_espresso
	cut_file "$CD/$S" "$C/model.espresso.shape" 60
	run espresso-shape-bad-json 3 m.mlmodelc

	mlmodelc espresso-shape-no-table crafted_espresso
	echo '{"layer_shapes": 3}' >"$C/model.espresso.shape"
	run espresso-shape-no-table 3 m.mlmodelc

	mlmodelc espresso-shape-not-object crafted_espresso
	echo '{"layer_shapes": {"c1": [1, 16, 128, 128]}}' >"$C/model.espresso.shape"
	run espresso-shape-not-object 3 m.mlmodelc

	mlmodelc espresso-shape-negative-dim crafted_espresso
	echo '{"layer_shapes": {"c1": {"n": 1, "k": -16, "h": 128, "w": 128}}}' >"$C/model.espresso.shape"
	run espresso-shape-negative-dim 3 m.mlmodelc

	mlmodelc espresso-shape-huge-dim crafted_espresso
	echo '{"layer_shapes": {"p1": {"n": 1, "k": 1e300, "h": 64, "w": 64}}}' >"$C/model.espresso.shape"
	run espresso-shape-huge-dim 3 m.mlmodelc

	mlmodelc espresso-shape-bad-rank crafted_espresso
	echo '{"layer_shapes": {"f1": {"n": 1, "k": 8, "h": 1, "w": 1, "_rank": 9}}}' >"$C/model.espresso.shape"
	run espresso-shape-bad-rank 3 m.mlmodelc

	mlmodelc espresso-shape-deep-json crafted_espresso
	{ printf '{"layer_shapes": '; i=0; while [ $i -lt 5000 ]; do printf '['; i=$((i + 1)); done; } >"$C/model.espresso.shape"
	run espresso-shape-deep-json 3 m.mlmodelc

	mlmodelc espresso-shape-missing crafted_espresso
	rm "$C/model.espresso.shape"
	run espresso-shape-missing "0|1" m.mlmodelc

	mlmodelc espresso-shape-partial crafted_espresso
	echo '{"layer_shapes": {"c1": {"k": 16}, "nothing": {"w": 2147483647}}}' >"$C/model.espresso.shape"
	run espresso-shape-partial "0|1" m.mlmodelc

	# a weights table that lies is a warning (the weights are only counted)
	mlmodelc espresso-weights-table crafted_espresso
	poke "$C/model.espresso.weights" 0 ff ff ff ff ff ff ff 0f
	run espresso-weights-table "0|1" m.mlmodelc

	mlmodelc espresso-blob-id crafted_espresso
	sed 's/"blob_weights" : 5/"blob_weights" : 123456789/' "$CD/crafted_espresso.mlmodelc/model.espresso.net" >"$C/model.espresso.net"
	run espresso-blob-id "0|1" m.mlmodelc
fi

# ------------------------------------------------------------------ time and memory bounds

new_case bound-random-1k
$MKMODEL random "$dir/m.mlmodel" 1024 2
run bound-random-1k - m.mlmodel bound

new_case bound-nested-1k
$MKMODEL deepchain "$dir/m.mlmodel" 1024
run bound-nested-1k - m.mlmodel bound

new_case bound-empty-layers-1k
$MKMODEL manylayers "$dir/m.mlmodel" 1024
run bound-empty-layers-1k - m.mlmodel bound

new_case bound-huge-length-1k
$MKMODEL random "$T/res/random1015" 1015 3
{ bytes 08 04 a2 1f ff ff ff ff 0f; cat "$T/res/random1015"; } >"$dir/m.mlmodel"
run bound-huge-length-1k - m.mlmodel bound

# ------------------------------------------------------------------ summary

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
